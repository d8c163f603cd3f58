/* component.h: what a component is (component.c): the descriptor, the
 * list of the components' names, and the helpers the descriptors share.
 *
 * A component is one library of the CUDA stack that gets modules (the
 * toolkit, cuDNN, NCCL, ...). Everything specific to one lives in its
 * `const struct component`, defined in src/component-<name>.c and
 * declared in its component-<name>.h, in the manner of systemd's
 * unit_vtable: its names, how its version is written, its libraries and
 * headers, how the scan finds it, the environment its modules set, and
 * what validate and doctor ask of it. Code outside those files reaches a
 * component only through the table (component-table.h), which lies above
 * every component file: the scan runs every detector, plan, render,
 * validate and doctor read the descriptor, and a name that is not in the
 * table is an error where it is read (config key, JSON, module kind).
 * This header lies below them all: what a component file needs of the
 * others is here (COMPONENT_LIST, component_names), never the table.
 *
 * The descriptors are static and immutable; an install, a config and a
 * module point at them and never own them. */
#ifndef CUDAMOD_COMPONENT_H
#define CUDAMOD_COMPONENT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "version.h"

struct config;
struct doctor;
struct install;
struct install_list;
struct name_hint;
struct opset;
struct check;
struct strv;
struct validate_module;
struct walk_dir;
struct walk_verdict;

/* The table, in the order scan lists and plan writes: adding a component
 * is its file and header, one line here, one #include in
 * component-table.c, and one line in src/meson.build. */
#define COMPONENT_LIST(X) \
        X(cuda)           \
        X(cudnn)          \
        X(nccl)           \
        X(cusparselt)     \
        X(cudss)          \
        X(nvshmem)        \
        X(magma)          \
        X(cutensor)       \
        /* end of the table: every row above ends in a backslash */

/* How many components PyTorch's configure finds as libraries (those with a
 * torch_build.order): doctor --build's rows. */
#define TORCH_BUILD_LIBRARIES 6

#define COMPONENT_INDEX(name) _COMPONENT_INDEX_##name
enum {
#define X(name) COMPONENT_INDEX(name),
        COMPONENT_LIST(X)
#undef X
        N_COMPONENTS
};

/* What a variable a module sets holds. */
enum component_value {
        COMPONENT_VALUE_PREFIX,
        COMPONENT_VALUE_INCLUDE_DIR,
        COMPONENT_VALUE_LIB_DIR,
        COMPONENT_VALUE_ONE, /* "1": a switch such as USE_SYSTEM_NCCL */
};

struct component_var {
        const char *name;
        enum component_value value;
        bool build; /* a PyTorch build variable: only with pytorch.build_env */
};

/* validate's build check: a program that includes the header, calls the
 * version function and links with the flags, compiled with the module's
 * environment only. */
struct component_build_check {
        const char *what;    /* "cuDNN", in messages */
        const char *header;  /* "cudnn.h" */
        const char *libs[3]; /* link flags, NULL-terminated */
        const char *program;
        bool cplusplus;      /* the header needs a C++ compiler (cusparseLt.h) */
};

/* How cudamod-probe reports the library (validate's run check). The probe
 * loads the libraries it knows by default unless told `off`; one it does
 * not know it loads only on `--library request`. Either way its JSON
 * object is under `key`. */
struct component_probe {
        const char *key;     /* "cudart", "cudnn" */
        const char *off;     /* "--no-cudnn", or NULL */
        const char *request; /* "cusparselt=libcusparseLt.so.0:cusparseLtGetProperty:property", or NULL */
        const char *version_key; /* the key of its version in that object; NULL: "version" */
};

/* doctor --build: what a PyTorch source build asks of it. option: the
 * USE_* that turns it off (USE_SYSTEM_NCCL for NCCL, which PyTorch builds
 * itself otherwise); NULL when PyTorch does not use it, and then the rest
 * is NULL too. root_variable: the root its find module reads, which a
 * module of it sets (CUDNN_ROOT, MAGMA_HOME); library_stem: the library
 * the find module looks for, whose file name tells its version. */
/* One find_path (the header) or find_library of its find module: the
 * names, PATH_SUFFIXES, the variable whose value is its HINTS
 * (NVSHMEM_HOME, with hints_dir "include" appended) and the one whose
 * value is its PATHS (paths_else read when paths is unset: CUDNN_LIBRARY,
 * else CUDNN_LIB_DIR); each NULL when the module has none. */
struct component_torch_find {
        const char *const *names;
        const char *const *suffixes;
        const char *hints, *hints_dir;
        const char *paths, *paths_else;
};

struct component_torch_build {
        const char *option;
        const char *root_variable;
        const char *library_stem;
        /* Its find rule (doctor-build.c loops over the rules). order: its
         * place among the libraries PyTorch's configure finds (cudnn 1,
         * cusparselt, cudss, nccl, magma, nvshmem): the report's rows and
         * the searches follow it, each find's appends to CMAKE_PREFIX_PATH
         * seen by the later ones; 0 for the toolkit, found otherwise, and
         * for what PyTorch does not use (cuTENSOR). The orders run 1 to
         * TORCH_BUILD_LIBRARIES, each once (test-component). */
        unsigned order;
        /* The USE_* (default on) that must all be on for it to be searched;
         * system (NCCL's USE_SYSTEM_NCCL, default off): off, PyTorch builds
         * its bundled copy and nothing is searched. */
        const char *enable[3];
        const char *system;
        /* The <Pkg>_ROOT both finds read, and the module's appends to
         * CMAKE_PREFIX_PATH: $ENV{append_root}, then $ENV{append_root_dir}
         * and the toolkit's root (append_root_dir NULL: none). */
        const char *find_root;
        const char *append_root, *append_root_dir;
        /* The variable holding the library version asked (NCCL_VERSION). */
        const char *version_variable;
        /* A hard-coded hint after the variable's (MAGMA's /usr/local/magma). */
        const char *default_hint;
        /* static_switch on (USE_STATIC_CUDNN): the library is static_name. */
        const char *static_switch, *static_name;
        /* A library that must be found beside (NVSHMEM's nvshmem_device),
         * with the library's suffixes and hints: without it, no library. */
        const char *required;
        bool library_first;     /* its module finds the library before the header (MAGMA) */
        bool header_optional;   /* found by its library alone (MAGMA) */
        bool mismatch_fatal;    /* header and library versions must match (FindNCCL) */
        bool always_wanted;     /* wanted even when nothing asks for it (cuDNN) */
        /* What turning option off costs, when not "cmake only says so in
         * its output: the torch built lacks it". */
        const char *off_why;
        /* What provides the header a runtime-only install (its library
         * without it: NVIDIA's CUDA 13 cuSPARSELt wheel) lacks, for
         * doctor --build's finding; NULL: "its development package". */
        const char *header_from;
        struct component_torch_find header, library;
};

struct component {
        const char *name;       /* "cudnn": config key, module name, JSON, module kind */
        const char *title;      /* "NVIDIA cuDNN" */
        const char *label;      /* "cuDNN": how messages name it */
        const char *easybuild_name; /* EasyBuild's name when not label ("magma"), or NULL */
        size_t index;           /* COMPONENT_INDEX(name): its row in per-component arrays */
        bool toolkit;           /* the CUDA Toolkit itself: its major is its version's, it
                                 * opens the hierarchy level (Core), the others need it */
        unsigned version_parts; /* parts the version is written and compared with */
        unsigned cuda_parts;    /* parts of the CUDA it targets shown (NCCL: 12.4) */
        const char *naming;     /* the default `naming` template */
        const char *library;    /* "libcudnn": the library a link uses, by its stem */
        /* Its soname is the bare `library`.so (MAGMA's libmagma.so): that
         * file, not a library.so.N, marks a directory as its. */
        bool unversioned_soname;
        /* The sonames' stems of its libraries, for validate's module kind
         * and doctor (a stem ending in '*' is a prefix: "libnpp*"). */
        const char *const *stems;
        /* The libraries (file stems) a build of this major ships beside
         * `library` and dlopen()s, NULL-terminated, or NULL. */
        const char *const *(*dlopened)(unsigned long major);

        /* scan: the names that tell its version (name-hint.h):
         * its wheel's normalised dist name ("nvidia-cudnn"), the name its
         * NVIDIA archives start with when not its own ("libcusparse_lt"),
         * whether the HPC SDK has it as comm_libs/<X.Y>/<name>, and its own
         * name forms after "<name>-" (true when one matched). */
        const char *wheel;
        const char *archive;
        bool hpc_sdk_comm_libs;
        bool (*name_hint)(const char *rest, struct name_hint *h);
        /* scan: add the installs dir holds (detect.h). */
        void (*detect)(const struct walk_dir *dir, struct install_list *l, struct walk_verdict *verdict);
        /* scan --json: its own fields of the install record. */
        void (*to_json)(const struct install *in, json_t *o);

        /* generate: the environment. ops, when set, emits it all (the
         * toolkit); otherwise the root variables `vars`, then its library
         * directory on LD_LIBRARY_PATH (as configured) and LIBRARY_PATH, its
         * headers on CPATH, the prefix on CMAKE_PREFIX_PATH and, with
         * `pkgconfig`, lib/pkgconfig on PKG_CONFIG_PATH. */
        void (*ops)(struct opset *s, const struct install *in, const struct config *cfg);
        const struct component_var *vars; /* NULL-name terminated */
        bool pkgconfig;
        const char *help;       /* the help text's paragraph: what the module is for */

        /* validate: the headers that tell the version (the first found is
         * read), the version code they declare, as the library's version
         * function reports it, and that code as a version. */
        const char *const *version_headers;
        size_t version_header_head; /* read this much first, the whole only when not there */
        int (*header_code)(const char *buf, size_t len, long *ret);
        /* Or, instead of header_code: the MAJOR, MINOR, PATCH (and BUILD or
         * NULL) defines the headers spell their version out in, read as
         * the code MAJOR*10000+MINOR*100+PATCH (component_code_mmp). */
        const char *const *version_macros;
        struct version (*code_version)(long code);
        struct component_build_check build;
        struct component_probe probe;
        /* The lazy check (lazy.h): what it dlopen()s resolves; NULL: nothing. */
        void (*lazy)(const struct validate_module *t, struct check *ret);

        /* doctor: the CUDA major the libraries in a module's library
         * directories are for, 0 when unknown; and what goes wrong when
         * the one torch loads is for another CUDA major than torch's: with
         * it, doctor's generic cuda-major finding (R5) covers it (cuDNN
         * and NCCL have findings of their own, `doctor`). Callers ask
         * metadata_module_cuda_major, which adds what a package manager
         * wrote in the prefix, as scan does. */
        unsigned long (*module_cuda_major)(const struct strv *own_libdirs);
        const char *doctor_cuda_major_why;
        /* doctor: its own findings on the libraries torch loads
         * (doctor-finding.h), run in table order after the toolkit's
         * libraries are checked; NULL: none. */
        void (*doctor)(struct doctor *doc);
        struct component_torch_build torch_build;
};

/* Their names in table order, NULL-terminated (config keys). */
extern const char *const component_names[N_COMPONENTS + 1];

/* Whether soname ("libcudnn_ops.so.9") is one of c's libraries, by its
 * stems (false for no c). */
bool component_has_soname(const struct component *c, const char *soname);
/* EasyBuild's name of the software (its easyconfigs' `name`: "CUDA",
 * "cuDNN", "magma"): easybuild_name, else label. */
const char *component_easybuild_name(const struct component *c);
/* The version codes of component_probe's generic requests and of the
 * headers read with header_define_triple: MAJOR*10000+MINOR*100+PATCH. */
struct version component_code_mmp(long code);
/* The version code of the version_macros in buf (header_define_triple):
 * 0, -ENOENT when one is not there, -EINVAL or -EBADMSG when one is not a
 * number that fits (MINOR and PATCH up to 99). */
int component_macros_code(const char *const *macros, const char *buf, size_t len, long *ret);
/* cuDNN's and NCCL's codes: MAJOR*10000+MINOR*100+PATCH from cuDNN 9 and
 * NCCL 2.9, MAJOR*1000+MINOR*100+PATCH before (8907 is 8.9.7). */
struct version component_code_library(long code);

#endif
