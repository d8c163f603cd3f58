/* cmake-find.h: CMake's find_program, find_path and find_library, emulated
 * without CMake: the file each would return in an environment, and what
 * gave the directory it is in. doctor --build (doctor-build.c) runs
 * PyTorch's find modules with it.
 *
 * The semantics follow CMake 3.25's documentation of find_library,
 * find_path and find_program ("The CMake Search Procedure"), as
 * cmSearchPath and cmFindBase implement it (tests/test-doctor-build.c
 * compares with the real find_library and find_path on the same trees):
 *
 * - The directories, in order: <Pkg>_ROOT (root_var: the variable and the
 *   environment's, CMP0074 NEW); CMAKE_PREFIX_PATH (the environment's
 *   entries, then what find modules appended to the variable: `appended`);
 *   CMAKE_PROGRAM_PATH / CMAKE_INCLUDE_PATH / CMAKE_LIBRARY_PATH as
 *   directories; the HINTS; the system environment (INCLUDE or LIB, then
 *   PATH, as they are); CMAKE_SYSTEM_PREFIX_PATH (/usr/local, /usr, /,
 *   the prefix of the cmake on PATH, /usr/X11R6, /usr/pkg, /opt; under
 *   `sysroot`); the PATHS. NO_DEFAULT_PATH keeps the HINTS and PATHS only.
 * - A prefix P gives (cmSearchPath::AddPrefixPaths) P/<sub>/<arch> with
 *   CMAKE_LIBRARY_ARCHITECTURE (not for programs), P/lib64 before P/lib
 *   where FIND_LIBRARY_USE_LIB64_PATHS holds, P/<sub> (include, lib; bin
 *   and sbin for programs), then P itself (not "/").
 * - Each directory is tried with every PATH_SUFFIXES entry first, then as
 *   it is (cmSearchPath::AddSuffixes).
 * - The NAMES outer, the directories inner (no NAMES_PER_DIR): the first
 *   name found anywhere wins. find_library tries a name with a library
 *   suffix as it is, a bare one as lib<name>.so then lib<name>.a (after
 *   lib<name>.so.<version> when a version is asked for, as FindNCCL
 *   does); any file that is not a directory. find_program wants an
 *   executable regular file; find_path anything that exists.
 *
 * Nothing is configured or run; only stat, access and the lookup of cmake
 * on PATH. Hits and their labels are owned by the caller. */
#ifndef CUDAMOD_CMAKE_FIND_H
#define CUDAMOD_CMAKE_FIND_H

#include <stdbool.h>
#include <stddef.h>

enum cmake_find_kind { CMAKE_FIND_PROGRAM, CMAKE_FIND_PATH, CMAKE_FIND_LIBRARY };

/* A prefix a find module appended to CMAKE_PREFIX_PATH. */
struct cmake_find_prefix {
        char *prefix;
        char *from;     /* its label: "CUDNN_ROOT (appended)" */
};

/* Where the finds run: nothing here is owned. */
struct cmake_find_env {
        char *const *env;    /* the environment cmake runs in (NULL: the process's) */
        const char *sysroot; /* the default places are looked up under it (NULL: "/") */
        const char *arch;    /* CMAKE_LIBRARY_ARCHITECTURE ("x86_64-linux-gnu"), or NULL */
        bool lib64;          /* FIND_LIBRARY_USE_LIB64_PATHS */
        const struct cmake_find_prefix *appended; /* in order */
        size_t n_appended;
};

/* One find_* call. */
struct cmake_find {
        enum cmake_find_kind kind;
        const char *const *names;    /* NULL-terminated */
        const char *const *suffixes; /* PATH_SUFFIXES, NULL-terminated, or NULL */
        const char *root_var;        /* "CUDNN_ROOT" (<Pkg>_ROOT), or NULL */
        const char *const *hints;    /* directories; labelled hints_from */
        const char *hints_from;
        bool hints_fallback;         /* the hints are hard-coded defaults (/usr/local/magma) */
        const char *const *paths;    /* PATHS */
        const char *paths_from;
        bool no_default;             /* NO_DEFAULT_PATH: only hints and paths */
};

/* One file a find returns. */
struct cmake_find_hit {
        char *path;     /* NULL: nothing found */
        char *from;     /* what gave the directory: "CUDNN_ROOT", "CMAKE_PREFIX_PATH",
                         * "CUDA_TOOLKIT_ROOT_DIR (appended)", "PATH",
                         * "default /usr/local + cuda/lib64", ... */
        bool fallback;  /* a default place, nothing the environment names */
};
void cmake_find_hit_release(struct cmake_find_hit *h);

/* The first file f finds in e (version: see find_library above, or
 * NULL); ret->path NULL when none. */
void cmake_find_run(const struct cmake_find_env *e, const struct cmake_find *f, const char *version,
                    struct cmake_find_hit *ret);

/* abs ("/usr/local") under sysroot (NULL or "/": as it is), newly
 * allocated. */
char *cmake_find_rooted(const char *sysroot, const char *abs);

/* CMake's truth of a variable's value: false for 0, OFF, NO, FALSE, N,
 * IGNORE, NOTFOUND and *-NOTFOUND (any case), true otherwise; def when
 * value is NULL or empty. */
bool cmake_is_true(const char *value, bool def);

#endif
