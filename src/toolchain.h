/* toolchain.h: the compiler queries and the header-version reader that
 * validate (its nvcc and run checks) and doctor --build share: the host
 * compiler nvcc runs and which it is (its predefined macros), what a
 * toolkit's crt/host_config.h accepts (STACK.md §6.1), and the version
 * code a component's header declares. Below both: it knows components
 * only through their descriptors (component.h) and starts programs
 * only through process.h. */
#ifndef CUDAMOD_TOOLCHAIN_H
#define CUDAMOD_TOOLCHAIN_H

#include <stdbool.h>

#include "component.h"
#include "util.h"

/* What a toolkit's crt/host_config.h accepts (STACK.md §6.1): the newest
 * GCC major (`#if __GNUC__ > N` after `#if defined(__GNUC__)`) and clang
 * major (M-1 of `__clang_major__ >= M` in the block guarded by
 * `defined(__clang__) && !defined(__ibmxl_vrm__)`), -1 when not stated;
 * *_enforced: an #error follows the condition (copies with the #error
 * deleted let every compiler through). */
struct host_limits {
        long gcc_max;
        bool gcc_enforced;
        long clang_max;
        bool clang_enforced;
};
/* Returns 0, or -ENOENT when buf states neither limit. */
int host_config_parse(const char *buf, size_t len, struct host_limits *ret);

enum host_compiler_kind {
        HOST_COMPILER_GCC,
        HOST_COMPILER_CLANG,
        HOST_COMPILER_INTEL, /* ICX: refused by every CUDA 12 and 13 header */
};

/* A host compiler as its predefined macros tell (`-E -dM`). */
struct host_compiler {
        char *path;       /* absolute, or NULL (from macros alone) */
        enum host_compiler_kind kind;
        long major;
        char *version;    /* "12.2.0" */
};
void host_compiler_release(struct host_compiler *h);
/* From the output of `CC -E -dM -x c++ /dev/null`: 0, or -ENOENT when it
 * defines neither __GNUC__ nor __clang__. */
int host_compiler_from_macros(const char *text, struct host_compiler *ret);

/* What nvcc compiles host code with in env: -ccbin in NVCC_APPEND_FLAGS,
 * else NVCC_PREPEND_FLAGS, else NVCC_CCBIN (CUDA 13), else `gcc` on nvcc's
 * PATH; *ret_from says which (static). NULL with *ret_err when none. */
char *nvcc_host_compiler(const char *nvcc, char *const *env, unsigned long cuda_major, const char **ret_from,
                         int *ret_err);
/* Run path -E -dM -x c++ /dev/null (env) and read what compiler it is: 0,
 * or -EIO with *ret_why. */
int host_compiler_query(const char *path, char *const *env, unsigned timeout, struct host_compiler *ret,
                        char **ret_why);
/* Whether h passes limits; else *ret_max is the newest of its kind (-1). */
bool host_compiler_accepted(const struct host_compiler *h, const struct host_limits *l, long *ret_max);

/* The version code the component's version header (the first of its
 * version_headers found in incdirs) declares: 0, -ENOENT when there is
 * none or it declares none, another negative errno when malformed;
 * *ret_file: the header read (or NULL), newly allocated. */
int component_header_version(const struct strv *incdirs, const struct component *c, long *ret, char **ret_file);

#endif
