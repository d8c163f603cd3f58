/* plan.h: from installs and the site config to module plans.
 *
 * A plan says, for every module a generate run writes, its name, version,
 * file (relative to the output directory), family, what it depends on, the
 * hierarchy level it opens, and the ordered environment operations of
 * doc/guide.md, "What a module sets", plus one modulerc per directory that marks a default
 * or has config modulerc directives (hide, aliases, tags).
 * Planning is pure: what is on disk comes from the scan (install.h
 * `present`), so plan_build, and nothing after it, looks at the filesystem
 * of an install; nothing here knows Lua or Tcl syntax (file names aside:
 * ".lua" or none).
 *
 * struct plan owns everything it holds except the installs, which it
 * borrows from the install list given to plan_build (keep that alive). */
#ifndef CUDAMOD_PLAN_H
#define CUDAMOD_PLAN_H

#include "config.h"
#include "diag.h"
#include "install.h"
#include "opset.h"

struct plan_dep {
        char *name;    /* "cuda" */
        char *min;     /* "12" */
        char *max;     /* "12.999999" */
        char *em_spec; /* "cuda@12:12.999999" */
};

struct module_plan {
        const struct install *install;
        char *name;        /* "cudnn" */
        char *version;     /* module version: "9.7.1", "9.7.1-cuda12" */
        char *full_name;   /* "cudnn/9.7.1" */
        char *path;        /* "CUDA/12/cudnn/9.7.1.lua" */
        char *dir;         /* "CUDA/12/cudnn": the directory of its modulerc */
        char *family;
        char *modulepath;  /* absolute hierarchy level opened (cuda), or NULL */
        char *description;
        char *help;
        struct strv whatis;
        struct plan_dep *deps;
        size_t n_deps;
        /* A module loaded with this one (the host compiler's: config
         * host_compiler {module: NAME}), or NULL. */
        char *requires;
        struct plan_op *ops;
        size_t n_ops;
        bool is_default;
        /* For another architecture than the tree's: hidden, never a default. */
        bool foreign;
        size_t order;      /* position of the install in the scan */
        /* What the index records, so that the name stays with the install
         * (plan_given): install_identity ("cudnn 9.7.1.26 cuda12 x86_64")
         * and the name before any renaming ("CUDA/12/cudnn/9.7.1"). */
        char *identity;
        char *base;
        /* The toolkit this module is for when it is one of several
         * modules of one install, one per toolkit ({cuda_full}), or when
         * its name holds that toolkit's full version; else NULL. */
        const struct install *toolkit;
        /* config modulerc.<component>.<version> (lmod-api): its tags and
         * the message a load prints, or NULL. */
        struct strv tags;
        char *deprecated;
        bool hidden;       /* modulerc.<component>.<version>.hide: never the latest default */
        /* The toolkit's driver check (config driver_check, cuda-driver.h):
         * its CUDA ("12.9") and the two minimum drivers, or all NULL (not
         * a toolkit, driver_check off, a major the table does not know);
         * driver_refuse: a driver too old for the major refuses the load. */
        char *driver_cuda;
        char *driver_major_min;
        char *driver_release_min;
        bool driver_refuse;
        /* config cuda_compat: auto, for a toolkit with forward-compatibility
         * libraries: their directory and the driver they are from
         * ("575.51.03"), which the module compares with the node's; NULL
         * otherwise. Never an op: the module decides on the node. */
        char *compat_dir;
        char *compat_driver;
};

struct modulerc_plan {
        char *path;        /* "Core/cuda/.modulerc.lua" */
        char *module;      /* "cuda/12.9": the default, or NULL (none marked) */
        char *version;     /* "12.9", or NULL */
        /* config modulerc (lmod-api): the full names hidden, and the
         * aliases as "ALIAS\tTARGET" ("cuda/latest\tcuda/12.9") and tags
         * as "TAG\tTARGET", in module then config order. */
        struct strv hidden;
        struct strv aliases;
        struct strv tags;
};

/* A name an earlier run gave (the output directory's index): the module
 * in dir ("CUDA/11/cudnn") with version ("8.9.7"), for the install at
 * real path install, with identity and base as module_plan has them
 * (NULL in an index older than them). */
struct plan_given {
        const char *dir;
        const char *version;
        const char *install;
        const char *identity;
        const char *base;
};

struct plan {
        enum module_format format;
        enum module_layout layout;
        char *outdir;      /* absolute */
        struct module_plan *modules; /* sorted by path */
        size_t n_modules;
        struct modulerc_plan *rcs;   /* sorted by path */
        size_t n_rcs;
        struct strv warnings; /* installs skipped, names disambiguated, … */
};

/* Build the plan for installs under cfg (format, layout, naming, defaults,
 * ld_library_path, stubs, env, pytorch) writing to outdir (absolute).
 * Installs that cannot get a module (no version, no library, no CUDA major
 * for a cuDNN/NCCL in the hierarchy, a path holding ':' that cannot be put
 * on a path variable, or a control character) are left out with a warning. Returns 0 or a negative
 * errno with d set (a naming template that does not fit a version). */
int plan_build(const struct install_list *installs, const struct config *cfg,
               const char *outdir, struct plan *ret, struct diag *d);
/* The same, keeping the names earlier runs gave (given[0..n_given)): an
 * install that had one gets it again, as long as the naming still gives
 * it the same name before renaming, and no other install gets one. */
int plan_build_given(const struct install_list *installs, const struct config *cfg,
                     const char *outdir, const struct plan_given *given, size_t n_given,
                     struct plan *ret, struct diag *d);
void plan_release(struct plan *p);

#endif
