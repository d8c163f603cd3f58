/* elf-file.h: the ELF facts cudamod needs, read with libelf; nothing is executed.
 *
 * struct elf_info owns its strings (elf_info_release frees them). Every
 * reader is bounded: a hostile file (truncated, bad offsets, huge sizes,
 * not ELF) gives an error, never a crash or an unbounded allocation. */
#ifndef CUDAMOD_ELF_H
#define CUDAMOD_ELF_H

#include <stdbool.h>

#include "diag.h"
#include "util.h"

struct elf_info {
        unsigned elf_class;  /* 32 or 64 */
        unsigned machine;    /* e_machine: 62 x86-64, 183 AArch64, 21 PPC64 */
        bool little_endian;
        unsigned type;       /* e_type: 3 ET_DYN, 2 ET_EXEC */
        char *soname;        /* DT_SONAME or NULL */
        struct strv needed;  /* DT_NEEDED in file order */
        char *runpath;       /* DT_RUNPATH or NULL */
        char *rpath;         /* DT_RPATH or NULL */
};

/* Read the header and the dynamic section of dirfd/path (dirfd may be
 * AT_FDCWD). Errors: -ENOEXEC "not an ELF file" (diag names the file),
 * -EBADMSG for a malformed ELF, or the errno of open/read. A valid ELF with
 * no dynamic section is success with no soname and nothing needed. */
int elf_read_info(int dirfd, const char *path, struct elf_info *ret, struct diag *d);
void elf_info_release(struct elf_info *info);

/* Only the identification: class, byte order and e_machine from the
 * first 20 bytes, what ld.so looks at before it takes a candidate. Fills
 * elf_class, little_endian and machine of ret (nothing to release).
 * -ENOEXEC when the file is not ELF, or the errno of open/read. */
int elf_read_ident(int dirfd, const char *path, struct elf_info *ret);

/* Collect the NUL-terminated printable strings that start with `prefix`
 * (or the first line of one, up to a newline: nvcc's version text) from
 * the read-only data sections (.rodata, .lrodata) of the file; when it
 * has no section headers, from the whole file if it is at most 64 MiB. Each
 * string is cut at 256 bytes. Adds to *ret (duplicates removed, sorted).
 * Returns 0 (possibly finding nothing) or a negative errno with diag. */
int elf_find_strings(int dirfd, const char *path, const char *prefix, struct strv *ret,
                     struct diag *d);

/* Between elf_memo_begin and elf_memo_end (a visit of the detectors), the
 * calling thread's reads of a small file (at most 64 KiB) by the same name
 * are served from the one read made of it: read each file once. Only
 * names relative to dirfd (the visit's directory, open throughout it) and
 * absolute ones are kept; the files are taken not to change meanwhile. */
void elf_memo_begin(int dirfd);
void elf_memo_end(void);

/* "x86_64", "aarch64", "ppc64le" for 62, 183, 21; NULL otherwise. */
const char *elf_machine_to_arch(unsigned machine);
/* The e_machine of a target triple directory name ("x86_64-linux",
 * "sbsa-linux", "aarch64-linux", "ppc64le-linux"); 0 when unknown. */
unsigned elf_machine_from_triple(const char *triple);

#endif
