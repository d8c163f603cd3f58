/* scan.h: find every CUDA, cuDNN and NCCL install under a set of roots.
 *
 * struct scan_result owns the installs (sorted as doc/guide.md, `cudamod scan` says) and the
 * warnings met on the way (unreadable directories, symlink loops). */
#ifndef CUDAMOD_SCAN_H
#define CUDAMOD_SCAN_H

#include "diag.h"
#include "install.h"

/* The built-in roots (cudamod-site.yaml(5), search); NULL-terminated. */
extern const char *const scan_default_roots[];

struct scan_options {
        const char *const *roots;   /* NULL: the default roots */
        size_t n_roots;
        unsigned max_depth;         /* 0: the default */
        const struct strv *exclude; /* may be NULL */
        /* Roots that must be mount points (config search {mount: true}),
         * matched by absolute path; may be NULL. One that is not a mount
         * point when scanned is not walked (what its mount point's own
         * directory holds is not the install tree) and is a gap. */
        const struct strv *mounts;
        /* Roots that may be absent (config search {optional: true}),
         * matched as given or by absolute path; may be NULL. One that does
         * not exist is skipped, a verbose note; scan_roots_check refuses
         * the others. */
        const struct strv *optional;
        /* By component index (may be NULL): patterns of installs left out
         * after the walk (config exclude.<component>). */
        const struct strv *exclude_installs;
        /* Called for every directory visited (may be NULL): the count so
         * far and the directory, for a progress display. */
        void (*progress)(size_t n_dirs, const char *path, void *userdata);
        void *userdata;
        /* Threads walking the roots' subtrees at once (0, 1: one); the
         * result is the same for any number. progress is then called
         * from any of them, one at a time. */
        unsigned jobs;
};

/* A place the scan could not read: a directory (or an entry of an
 * install) under a root, or a root. */
struct scan_gap {
        char *path;     /* as walked */
        char *realpath; /* canonical where known, else path */
        char *why;      /* "Permission denied", "more than 100000 entries" */
};

/* A root that is an empty directory. */
struct scan_root {
        char *path;     /* absolute, as given */
        char *realpath; /* canonical */
};

struct scan_result {
        struct install_list installs;
        struct strv warnings;
        /* What the scan looked at and left, for -v: why a detector left a
         * directory (walk_dir_verbose), a package manager's metadata it
         * could not read; in the order met, each once. Not warnings: the
         * scan goes on. */
        struct strv verbose;
        struct scan_gap *gaps; /* in the order met */
        size_t n_gaps;
        /* The roots that are empty directories: an empty directory cannot
         * be told from a mount point whose filesystem is missing, so the
         * caller, who knows what was found there before, may call it a
         * gap (scan_result_add_gap). In the order of the roots. */
        struct scan_root *empty_roots;
        size_t n_empty_roots;
};

/* Whether the scan read everything under its roots. */
static inline bool scan_complete(const struct scan_result *r)
{
        return r->n_gaps == 0;
}

/* The roots given (so->roots: the command line's or the config's search;
 * not the built-in ones, most of which any one system lacks) that do not
 * exist and are not optional: -ENOENT with d naming the first (a typo or
 * an unmounted filesystem would otherwise scan to an empty tree), else 0. */
int scan_roots_check(const struct scan_options *so, struct diag *d);

int scan_run(const struct scan_options *opts, struct scan_result *ret, struct diag *d);
/* Record that the scan missed what is at path (realpath: canonical, or
 * NULL for path), unless a gap at path is already there. */
void scan_result_add_gap(struct scan_result *r, const char *path, const char *realpath, const char *why);
void scan_result_release(struct scan_result *r);

#endif
