/* fixture.h: fake install trees for the tests, in a fresh temporary
 * directory each, with real ELF stub libraries (tests/elfstub.h).
 *
 * Every builder aborts the test (ck_abort) when the filesystem refuses, so a
 * test never runs on a half-built tree. Paths are relative to the fixture
 * root unless they start with '/'. fx_new returns the root, which the test
 * owns and passes to fx_free (which removes the whole tree). */
#ifndef CUDAMOD_FIXTURE_H
#define CUDAMOD_FIXTURE_H

#include <stdbool.h>

#include "elfstub.h"

char *fx_new(void);
void fx_free(char *root);

void fx_mkdir(const char *root, const char *rel);
void fx_write(const char *root, const char *rel, const char *content);
void fx_symlink(const char *root, const char *rel, const char *target);
void fx_elf(const char *root, const char *rel, const struct elfstub *s);
/* A shared library stub: real file lib.so.FULL (or only the soname file
 * when full is NULL, as wheels ship), soname link, and the dev link. */
void fx_library(const char *root, const char *dir, const char *stem, const char *soname_ver,
                const char *full_ver, unsigned machine, const char *const *needed,
                const char *const *strings);

enum fx_version_file { FX_VERSION_JSON, FX_VERSION_JSON_DATE, FX_VERSION_TXT, FX_VERSION_NONE };

struct fx_cuda {
        const char *version;   /* "12.4" */
        const char *release;   /* "12.4.1" */
        const char *cudart;    /* "12.4.127" */
        const char *nvcc;      /* "12.4.131" */
        const char *triple;    /* default "x86_64-linux" */
        enum fx_version_file version_file;
        bool no_math;          /* HPC SDK cuda/X.Y: no cuBLAS */
        bool cupti;            /* extras/CUPTI */
};

/* A runfile/deb tree: PREFIX/{bin/nvcc,targets/T/{include,lib},include and
 * lib64 links,nvvm,version.json|version.txt}. */
void fx_cuda_toolkit(const char *root, const char *prefix, const struct fx_cuda *c);

struct fx_cudnn {
        const char *version;   /* "9.7.1" */
        unsigned cuda_major;   /* what its libraries load (0: nothing) */
        const char *lib;       /* "lib" or "lib64" (default "lib") */
        unsigned machine;      /* default x86-64 */
        bool soname_only;      /* wheels: libcudnn.so.9 only */
        const char *include;   /* default "include" */
};
void fx_cudnn(const char *root, const char *prefix, const struct fx_cudnn *c);

struct fx_nccl {
        const char *version;   /* "2.21.5" */
        const char *cuda;      /* "12.4" in "NCCL version 2.21.5+cuda12.4" (NULL: none) */
        unsigned machine;
        bool soname_only;
        const char *lib;       /* default "lib" */
        const char *include;   /* default "include" */
};
void fx_nccl(const char *root, const char *prefix, const struct fx_nccl *c);

/* Copy the fake CUDA library $CUDAMOD_FAKE_<var> (tests/fakecuda, set by
 * meson test) to root/rel, parents created, replacing what was there,
 * mode 0755. */
void fx_fake_library(const char *root, const char *rel, const char *var);

/* A dist-info directory with METADATA Name/Version. */
void fx_dist_info(const char *root, const char *dir, const char *name, const char *version);

#endif
