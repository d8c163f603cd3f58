/* libfile.h: what shared library files tell from their names and contents,
 * shared by validate (closure, lazy) and doctor: the version in a real file
 * name, the CUDA major a cuDNN library was built for, the toolkit version
 * of a library directory, and a set of libraries collected from
 * directories (each real file once). Nothing is loaded or executed. */
#ifndef CUDAMOD_LIBFILE_H
#define CUDAMOD_LIBFILE_H

#include <stdbool.h>
#include <sys/types.h>

#include "diag.h"
#include "elf-file.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"

/* The version in the real file name of a library (libnvJitLink.so.12 →
 * libnvJitLink.so.12.4.127 → 12.4.127); count 0 when it tells only the
 * major or nothing. */
struct version lib_file_version(const char *path, const char *stem);
/* "12.4.127", or "unknown" for count 0; newly allocated. */
char *lib_version_string(const struct version *v);

/* The canonical directory of a file (NULL when it does not resolve), and
 * whether two files are in the same one. */
char *real_dirname(const char *path);
bool same_real_dir(const char *a_path, const char *b_path);

/* "libcublasLt" of "libcublasLt.so.12", newly allocated. */
char *soname_stem(const char *soname);

/* What to do about a soname of c's (component-table.h
 * component_of_soname; NULL: of none) that resolves nowhere: "load a
 * cuda/12.x module", "load a cudnn/9.x module", …, or "install it or load
 * the module that provides it". Newly allocated. */
struct component;
char *soname_advice_of(const struct component *c, const char *soname);

/* The CUDA major a cuDNN (sub-)library names: a DT_NEEDED libcublasLt.so.N,
 * libcublas.so.N or libnvrtc.so.N (cuDNN 8), or the libcublasLt.so.N /
 * libnvrtc.so.N it dlopen()s (cuDNN 9, in its read-only data); 0 for none. */
unsigned long lib_cuda_major_named_by(const char *path, const struct elf_info *info);
/* The CUDA major an NCCL library was built with: "NCCL version
 * 2.21.5+cuda12.4" in its data, else a DT_NEEDED libcudart.so.N; 0 for
 * none. ret_nccl (may be NULL) gets the NCCL version from that string. */
unsigned long lib_nccl_cuda_major(const char *path, const struct elf_info *info,
                                  struct version *ret_nccl);

/* The CUDA version of the toolkit whose libraries are in dir, from the file
 * names that carry it (libnvJitLink.so.12.4.127, libcudart.so.12.4.127,
 * libnvrtc.so.12.4.127; not cuSPARSE's own 12.3.1), as MAJOR.MINOR; count 0
 * when none tells. */
struct version libdir_toolkit_version(const char *dir);

/* The first file stem.so.N (one version part) in the directories: its path
 * (newly allocated) and N; NULL when none has one. */
char *find_soname_file(const struct strv *dirs, const char *stem, unsigned long *ret_major);
/* The CUDA major major_of reads in the ELF facts of that file (a
 * component's module_cuda_major); 0 when there is none or it tells none. */
unsigned long soname_file_cuda_major(const struct strv *dirs, const char *stem,
                                     unsigned long (*major_of)(const char *path, const struct elf_info *info));

/* Append "A, B, C and 2 more" (the first `show` items of v) to sb. */
void strbuf_add_list(struct strbuf *sb, const struct strv *v, size_t show);

/* Shared libraries (ELF ET_DYN, regular files or links to them), each real
 * file once, under the first name it was seen by. */
struct libset_entry {
        char *path;
        char *name;           /* its soname, or the file name */
        struct elf_info info;
        dev_t dev;
        ino_t ino;
};
struct libset {
        struct libset_entry *items;
        size_t n;
};
/* Add dir/name (dir NULL: name is the path) when it is a shared library
 * not in the set yet. Returns 1 added, 0 not a shared library (or a file
 * already in), or a negative errno with d set when it is an ELF file that
 * cannot be read. */
int libset_add(struct libset *l, const char *dir, const char *name, struct diag *d);
void libset_release(struct libset *l);

#endif
