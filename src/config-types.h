/* config-types.h: the site configuration as a struct (config.h has
 * the story; struct config owns all its strings). No functions. */
#ifndef CUDAMOD_CONFIG_TYPES_H
#define CUDAMOD_CONFIG_TYPES_H

#include <stdbool.h>
#include <stddef.h>

#include "install.h"
#include "util.h"

struct component;

enum module_format {
        FORMAT_LUA, /* Lmod */
        FORMAT_TCL, /* Environment Modules */
        _FORMAT_MAX,
        _FORMAT_INVALID = -1,
};

enum module_layout {
        MODULE_LAYOUT_HIERARCHICAL,
        MODULE_LAYOUT_FLAT,
        _MODULE_LAYOUT_MAX,
        _MODULE_LAYOUT_INVALID = -1,
};

/* driver_check: what the cuda module does on a node whose NVIDIA driver
 * is older than the toolkit needs (cuda-driver.h). */
enum driver_check {
        DRIVER_CHECK_OFF,   /* no check in the module at all */
        DRIVER_CHECK_WARN,  /* a message on load (the default) */
        DRIVER_CHECK_ERROR, /* too old for the major: the load is refused */
        _DRIVER_CHECK_MAX,
        _DRIVER_CHECK_INVALID = -1,
};

enum default_kind {
        DEFAULT_LATEST,  /* "latest": the highest version */
        DEFAULT_NONE,    /* "none": no default marked */
        DEFAULT_VERSION, /* a version: the module whose version it names */
};

struct default_spec {
        enum default_kind kind;
        char *version; /* DEFAULT_VERSION only */
};

enum env_op_kind {
        ENV_OP_SETENV,
        ENV_OP_PREPEND_PATH,
        ENV_OP_APPEND_PATH,
        /* A setenv that unload takes back: Lmod's and Environment Modules
         * 5's pushenv (the value before the load comes back). */
        ENV_OP_PUSHENV,
};


/* One extra environment operation from `env:` (in file order). */
struct env_op {
        enum env_op_kind kind;
        char *name;
        char *value;
};

struct env_ops {
        struct env_op *items;
        size_t len;
        size_t alloc;
};

struct config_target {
        char *name;
        char *launcher;
};

/* host_compiler.<CUDA major>: the host compiler the cuda modules of that
 * major give nvcc and CMake: a path (absolute, executable), a module to
 * depend on, or both ({module: NAME, path: PATH}). */
struct config_host_compiler {
        unsigned cuda_major;
        char *path;   /* or NULL */
        char *module; /* "gcc/12", or NULL */
};

/* --- modulerc directives per component and version (lmod-api) ---------
 * modulerc.<component>.<version>: what the modulerc of the version's
 * directory and its modulefile say of it. Lmod: hide_version, module_alias
 * in .modulerc.lua, tags as a whatis "Tags:" line, deprecated as an
 * LmodMessage on load; Environment Modules 5: module-hide, module-alias,
 * module-tag in .modulerc (each guarded so that the other tool, which
 * lacks it, skips it), deprecated printed on load. */
struct config_version_rc {
        unsigned component;  /* index */
        char *version;       /* the module version, as naming makes it */
        bool hide;
        struct strv aliases; /* other version names: "latest" */
        struct strv tags;
        char *deprecated;    /* the message, or NULL */
};
/* --- end of the modulerc directives ------------------------------------ */

struct config {
        char *file;     /* the file read last, or NULL for the built-in default */
        char *output;   /* NULL: none */
        enum module_format format;
        enum module_layout layout;
        enum driver_check driver_check;
        struct strv search;  /* empty: the built-in default roots */
        /* The roots of search given as {path: DIR, mount: true}: each must
         * be a mount point when scanned, else it is not read (its modules
         * are kept, a warning). A subset of search, by path. */
        struct strv search_mounts;
        /* The roots of search given as {path: DIR, optional: true}: one
         * that does not exist is skipped (a note with --verbose), where a
         * root listed without it is an error. A subset of search, by path. */
        struct strv search_optional;
        struct strv exclude;
        /* exclude.<component>: fnmatch(3) patterns; an install of that
         * component whose prefix, real path or an alias matches gets no
         * module (the walk still enters it: another component may be
         * there). */
        struct strv exclude_installs[N_COMPONENTS];
        unsigned max_depth;
        struct default_spec defaults[N_COMPONENTS];
        /* Module naming (naming.<component> and naming.levels): each
         * component's module version template ("{major}.{minor}") and
         * module name template ("{name}", "CUDA"), and the hierarchy's
         * level directories ("Core", "CUDA/{cuda_major}"). Checked when
         * loaded: see naming_template_fill. */
        char *naming[N_COMPONENTS];
        char *module_name[N_COMPONENTS];
        char *level_core;
        char *level_cuda;
        /* The preset the naming started from ("easybuild"), or NULL: a
         * static string (config-naming.c), never freed. */
        const char *naming_preset;
        /* The architecture the tree is for ("x86_64", "aarch64",
         * "ppc64le"), or NULL: this machine's. Installs for another one
         * always carry "-ARCH" in their version, are hidden and never a
         * default. */
        char *arch;
        bool ld_library_path[N_COMPONENTS];
        bool stubs_on_library_path;
        /* cuda_compat: auto: a toolkit's module with forward-compatibility
         * libraries (install.h compat_dir) puts them on LD_LIBRARY_PATH
         * where the node's driver is older than theirs; off (the
         * default): never. */
        bool cuda_compat;
        struct env_ops env[N_COMPONENTS];
        bool pytorch_build_env;
        char *cuda_arch_list; /* "" (unset), "detect", or "8.0;9.0" */
        /* Where it was set, for the renderer's gate: "FILE:LINE:COL:
         * 'pytorch.cuda_arch_list'", or NULL (the default). */
        char *cuda_arch_list_origin;
        struct config_host_compiler *host_compilers; /* in file order */
        size_t n_host_compilers;
        struct {
                char *launcher; /* "" */
                struct config_target *targets;
                size_t n_targets;
                unsigned timeout;
                char *driver_libdir; /* "" */
                bool require_device;
                bool compile;
        } validate;
        char *templates; /* "" or a directory */
        /* Seconds generate and validate wait for an output directory's
         * lock; 0: not at all. --lock-timeout overrides it. */
        unsigned lock_timeout;
        /* output_mode: the mode of every file generate writes (0644);
         * directories get each read bit's search bit. Not the umask's. */
        unsigned output_mode;
        /* modulerc.<component>.<version> (lmod-api), in file order. */
        struct config_version_rc *version_rcs;
        size_t n_version_rcs;

        /* --- how the tree fits into the site's other module trees
         * (family, modulepath, lmod): config-site.c --- */
        /* family.<component>: the module names of that component's family:
         * the first is the family its modules declare (Lmod's and
         * Environment Modules' family), each other one a name they
         * conflict with (a site's own EasyBuild "CUDA"). Default: the
         * component's name; empty: no family, no conflict. */
        struct strv family[N_COMPONENTS];
        /* modulepath: module trees of the site besides $MODULEPATH that
         * generate looks at before writing (names provided twice). */
        struct strv modulepath;
        /* lmod.spider_cache: rebuild Lmod's system spider cache after a
         * write that changed something. from_lmodrc: its dir and timestamp
         * are read from the lmodrc's scDescriptT (spider_cache: true). */
        struct config_spider_cache {
                bool from_lmodrc;
                char *dir;       /* or NULL */
                char *timestamp; /* or NULL */
        } spider_cache;
        /* lmod.extensions: the cuda module lists its components with
         * Lmod's extensions() (`module avail` then shows them in a block
         * of its own). Default false: the Extensions: whatis line alone,
         * which `module keyword` reads. */
        bool lmod_extensions;

        /* scan.jobs: threads walking at once; 0 (the default): one a CPU.
         * --jobs overrides it. */
        unsigned scan_jobs;
};

/* The most threads scan.jobs and --jobs take (walk.h's WALK_MAX_JOBS). */
#define CONFIG_SCAN_JOBS_MAX 256

#endif
