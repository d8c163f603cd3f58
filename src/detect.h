/* detect.h: what the detectors share.
 *
 * A detector (a component's `detect`, component.h) looks at one directory of the walk and adds the installs it
 * holds to the list (the list merges duplicates by realpath). It reads only
 * small files and ELF headers/rodata, never executes anything, and turns
 * everything odd it sees into a problem on the install, never a failure of
 * the scan. It may ask the walker not to descend (an install prefix). */
#ifndef CUDAMOD_DETECT_H
#define CUDAMOD_DETECT_H

#include <sys/stat.h>

#include "diag.h"
#include "install.h"
#include "name-hint.h"
#include "strbuf.h"
#include "walk.h"


/* Small-file limits: version files, headers and METADATA are read up to
 * these sizes; a larger version file is a problem, a larger header is read
 * only in its first part (the defines come early). */
#define DETECT_MAX_VERSION_FILE (1024 * 1024)
#define DETECT_MAX_HEADER_HEAD (512 * 1024)

/* The visit of one directory (scan.c calls these around the detectors):
 * while it lasts, on the calling thread, the listings and lookups below of
 * paths in dir (relative to dir->fd, or absolute below dir->path) are made
 * once and answered from what is known: a name absent from a listing read
 * is absent without a system call, a name listed as a regular file or a
 * directory needs no stat. Other paths go to the system as before. */
void detect_cache_begin(const struct walk_dir *dir);
void detect_cache_end(void);
/* is_file_at, is_dir_at and is_symlink_at (util-path.h) through the cache;
 * detect_absent: the listings read tell that dirfd/rel is not there. */
bool detect_is_file(int dirfd, const char *rel);
bool detect_is_dir(int dirfd, const char *rel);
bool detect_is_symlink(int dirfd, const char *rel);
bool detect_absent(int dirfd, const char *rel);
/* stat(path) (following links) of an absolute path, through what the
 * visit holds: an fstat of a directory it listed, or a stat relative to
 * its descriptor for a path below it (a lookup of a few components, not of
 * every one from "/"); 0 or -errno. */
int detect_stat(const char *path, struct stat *st);

/* The sorted names in dirfd/rel (a directory), or -errno: -E2BIG for a
 * directory of more than WALK_MAX_ENTRIES entries, as the walk skips. */
int dir_list(int dirfd, const char *rel, struct strv *ret);
/* The names in path (absolute) from the visit's cache, listed now if the
 * cache has not yet: -ENODATA when the cache cannot answer for path (no
 * visit, or not below the visited directory), else dir_list's. */
int dir_list_cached(const char *path, struct strv *ret);
/* Read at most max bytes of dirfd/rel (the head of a longer file); dir_path
 * is dirfd's path, for messages (NULL: rel alone). Only a regular file is
 * opened (file_open_regular_at: a device or FIFO is never opened); with in,
 * one that is there but not a regular file, or that is replaced as it is
 * opened, is a problem on in naming dir_path/rel (install_add_file_problem). */
int read_head_at(int dirfd, const char *dir_path, const char *rel, size_t max, struct install *in,
                 struct strbuf *ret);
/* The problem for an error r of file_open_regular_at and its diag:
 * not-regular-file (-EINVAL, -EISDIR) or file-changed (-ESTALE); nothing
 * for other errors (a missing file is the caller's business) or no in. */
void install_add_file_problem(struct install *in, int r, const struct diag *d);
/* 0 when dirfd/rel (symlinks followed) is a regular file; -EINVAL, and a
 * not-regular-file problem on in (when not NULL) naming dir_path/rel, when
 * it is something else; the errno of stat (-ENOENT) otherwise. Never
 * opens it. */
int check_regular_at(struct install *in, int dirfd, const char *dir_path, const char *rel);

/* Where a library lives in a prefix: the directory (relative to the prefix)
 * holding `stem`.so*, preferring a real directory to a symlink, and
 * targets/<triple>/lib, then lib64, then lib. */
struct libdir {
        char *rel;          /* "targets/x86_64-linux/lib", "lib64", … */
        char *triple;       /* the triple when under targets/, else NULL */
        struct strv files;  /* names in it matching stem.so.* */
        struct version soname;  /* major from the soname file (libcudart.so.12) */
        struct version full;    /* from the real file name (libcudart.so.12.4.127), if any */
        char *soname_file;  /* the file to read ELF facts from */
};
int find_lib_dir(int prefix_fd, const char *stem, struct libdir *ret);
/* The warning for a find_lib_dir or libdir_in of dir that gave -E2BIG: a
 * library directory of more than WALK_MAX_ENTRIES entries. */
void libdir_warn_too_big(const struct walk_dir *dir);
/* The same, in one given directory (relative to prefix_fd; "." for itself). */
int libdir_in(int prefix_fd, const char *rel, const char *stem, struct libdir *ret);
void libdir_release(struct libdir *ld);
/* The files of `stem` in ld: whether libX.so.* exists for that stem. */
bool libdir_has(const struct libdir *ld, int prefix_fd, const char *stem);

/* Check the ELF facts of prefix/rel (a library of the install): sets the
 * install's arch when unknown and records not-elf / elf-class /
 * arch-mismatch problems. `expect_machine` is 0 when unknown. Returns
 * 0 when the file is a usable 64-bit ELF. */
int check_library(struct install *in, int prefix_fd, const char *rel, const char *display,
                  unsigned expect_machine);

/* The multiarch library directory layout (…/usr/lib/x86_64-linux-gnu,
 * …/usr/lib64): the path of the …/usr prefix and the triple, or NULL. */
char *system_prefix_of(const char *realpath, const char **ret_triple);
/* Debian's per-library trees, one per CUDA major (NVIDIA's cuDSS,
 * cuSPARSELt and NVSHMEM packages): …/usr/lib/<triple>/<stem>/<N> (cuDSS's
 * and cuSPARSELt's headers in …/usr/include/<stem>/<N>, NVSHMEM's in
 * …/usr/include/nvshmem_<N>). The path of the …/usr prefix and N, or NULL. */
char *system_library_tree_of(const char *realpath, const char *stem, unsigned long *ret_major);
/* Whether the directory is a package dir under site-packages/nvidia
 * (returns the site-packages path, newly allocated) or NULL. */
char *wheel_site_packages_of(const char *realpath);

/* Every *.dist-info/METADATA in dirfd/rel: names[i] has version versions[i]. */
struct dist_infos {
        struct strv names;
        struct strv versions;
};
void dist_infos_read(int dirfd, const char *rel, struct dist_infos *ret);
void dist_infos_release(struct dist_infos *di);
/* The version of the first dist whose normalised name starts with prefix
 * ("nvidia-cudnn-cu" matches nvidia-cudnn-cu13), and that name. */
const char *dist_infos_find(const struct dist_infos *di, const char *prefix, const char **ret_name);

/* Read the dist-infos of the directory at path (site-packages). */
void dist_infos_read_path(const char *path, struct dist_infos *ret);
/* The name hint for c of the dist whose name starts with dist_prefix
 * ("nvidia-cudnn"), read as its dist-info directory name. -ENOENT if none. */
int dist_infos_name_hint(const struct dist_infos *di, const char *dist_prefix,
                         const struct component *c, struct name_hint *ret);

/* The CUDA version a conda environment at dirfd pins: its cuda-version
 * package, conda-meta/cuda-version-<X.Y>-<build>.json, which conda-forge's
 * CUDA packages depend on. -ENOENT when none. */
int conda_cuda_version(int dirfd, struct version *ret);

/* The children a conda environment's walk still enters (envs, lib). */
extern const char *const detect_conda_keep[];

/* Whether the directory is a CUDA prefix too (cuDNN or NCCL copied in). */
bool dir_holds_cuda(const struct walk_dir *dir, const struct libdir *ld);
/* Where a cuDNN or NCCL install of a directory is: a system library
 * directory (…/usr/lib/<triple>, headers in …/usr/include[/<triple>]), a
 * Debian per-library tree of `stem` (system_library_tree_of), or a
 * prefix with include/ and lib, lib64 or targets/<triple>/lib. */
struct library_find {
        char *usr;          /* the system prefix, or NULL */
        int usr_fd;         /* usr opened, or -1 */
        char *site;         /* site-packages of a wheel, or NULL */
        struct libdir ld;   /* relative to the walked directory */
        char *include_rel;  /* relative to usr or to the directory; NULL: none */
        unsigned long tree_major; /* N of a Debian per-library tree (system_library_tree_of), else 0 */
        int include_fd;     /* what include_rel is relative to */
        enum layout layout;
        /* A wheel's folder (library_install_new): the dist of the
         * component's wheel whose RECORD gives the library the size it has
         * (wheel-record.h), else NULL; and whether that RECORD lists none
         * of the headers (the wheel ships none: NVIDIA's CUDA 13
         * cuSPARSELt). */
        char *wheel_name, *wheel_version;
        bool wheel_headerless;
};
/* Fill ret (to be released) when dir holds the library `stem` ("libcudnn");
 * headers are the names any of which marks the include directory.
 * -ENOENT when it does not. */
int library_find(const struct walk_dir *dir, const char *stem, const char *const *headers,
                 struct library_find *ret);
void library_find_release(struct library_find *f);
/* The CUDA major the names in path tell, for libraries that link the CUDA
 * runtime statically, so that no DT_NEEDED tells it (cuSPARSELt, cuDSS,
 * NVSHMEM): the component after one named `versioned` (case ignored;
 * "libcusparseLt" in …/libcusparseLt/12/…, may be NULL), or the first
 * component with a CUDA marker (name_cuda_marker: "_cuda12" of NVIDIA's
 * archives, EasyBuild's "-CUDA-12.6.0", an enclosing "cuda-12.6" prefix,
 * Spack's "-cuda120" read as 12). 0 when none tells. */
unsigned long path_cuda_major(const char *path, const char *versioned);
/* A new cuDNN or NCCL install from what library_find found, with its ELF
 * facts checked and missing headers recorded. Without a header of its own
 * it is a runtime install (INSTALL_RUNTIME). In a wheel's folder, the
 * dist-infos' RECORDs tell which wheel the library is (f->wheel_name) and
 * whether a header there is that wheel's (one only another wheel lists is
 * not: the install gets none, and a verbose line says so). */
struct install *library_install_new(const struct component *c, const struct walk_dir *dir,
                                    struct library_find *f, const char *const *headers);
/* The name hint for c of a wheel's dist, by its dist-info directory name. */
int dist_name_hint(const struct component *c, const char *name, const char *version, struct name_hint *ret);

/* The walk's verdict after a cuDNN or NCCL install was found in dir: a
 * prefix is not descended into (a conda env only into envs/ and lib/); a
 * system library directory is walked on. */
void library_verdict(struct walk_verdict *verdict, const char *usr, enum layout l);

/* Fill a new install's identity fields from the walked directory. */
void install_set_location(struct install *in, const struct walk_dir *dir);
/* Record a MAJOR.MINOR(.PATCH) reading from a named source; the first one
 * becomes the version, later ones that differ become a version-mismatch
 * problem. `parts` is how many parts are compared (2 for cuda, 3 else). */
struct version_vote {
        struct version value;
        const char *source;
};
void version_votes_settle(struct install *in, const struct version_vote *votes, size_t n,
                          unsigned parts);

#endif
