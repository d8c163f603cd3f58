/* elfstub.h: write small but real ELF shared objects for test trees.
 *
 * The files look right to any ELF reader (readelf -d, file, libelf): ELF
 * header, PT_LOAD and PT_DYNAMIC, .dynstr, .rodata with marker strings,
 * .dynamic with DT_NEEDED/DT_SONAME/DT_RUNPATH (or DT_RPATH), section
 * headers. Nothing in them can run. */
#ifndef CUDAMOD_ELFSTUB_H
#define CUDAMOD_ELFSTUB_H

#include <stdbool.h>

#define ELFSTUB_X86_64 62
#define ELFSTUB_AARCH64 183
#define ELFSTUB_PPC64 21

struct elfstub {
        unsigned machine;            /* default (0): x86-64 */
        bool elf32;                  /* write a 32-bit (i386) ELF instead */
        const char *soname;          /* may be NULL */
        const char *const *needed;   /* NULL-terminated, may be NULL */
        const char *runpath;         /* may be NULL */
        bool use_rpath;              /* DT_RPATH instead of DT_RUNPATH */
        const char *const *strings;  /* .rodata marker strings, NULL-terminated */
        unsigned pad;                /* extra zero bytes of .rodata, to vary sizes */
};

/* Write the stub to dirfd/path (dirfd may be AT_FDCWD), mode 0644, replacing
 * any file there. Returns 0 or a negative errno. */
int elfstub_write(int dirfd, const char *path, const struct elfstub *s);

#endif
