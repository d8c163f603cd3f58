/* write-types.h: the types the writer's files share (write.h has the
 * story): the files a run generates, what it does with each, and its
 * options. No functions. */
#ifndef CUDAMOD_WRITE_TYPES_H
#define CUDAMOD_WRITE_TYPES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct gen_file {
        const char *path;    /* relative, '/'-separated, no "." or ".." parts */
        const char *content;
        size_t len;
        const char *install; /* real path of the install (index), or NULL */
        const char *module;  /* "cuda/12.9", or NULL for a modulerc */
        /* What the name stands for (plan.h module_plan identity and base),
         * recorded so that a later run gives the name to that install
         * only; NULL for a modulerc. */
        const char *identity;
        const char *base;
        /* The real path of the toolkit the module is for, when the
         * install has one module per toolkit (plan.h module_plan
         * toolkit): several modules then share one install. */
        const char *toolkit;
        /* "runtime" for a runtime-only install (install.h INSTALL_RUNTIME:
         * no header), else NULL: what `cudamod export` leaves out. */
        const char *kind;
        /* The install's cuda_arch ("80,90", install.h), or NULL. */
        const char *cuda_arch;
};

enum file_status {
        FILE_CREATED,
        FILE_UPDATED,
        FILE_UNCHANGED,
        FILE_PRUNED,
        FILE_STALE,          /* generated before, not now; kept (no prune) */
        FILE_SKIPPED_EDITED, /* edited by hand; kept (no force) */
        FILE_SKIPPED_FOREIGN,/* not written by cudamod; never touched */
        FILE_HELD,           /* its install was not read whole; kept as it is */
        _FILE_STATUS_MAX,
};

struct write_options {
        const char *outdir;
        bool dry_run;
        bool check;
        bool prune;
        bool force;
        FILE *diff_out;      /* dry_run: where the diffs go */
        /* The canonical paths the scan could not read (may be NULL): the
         * installs at, below or above them are held (see above). */
        const char *const *unseen;
        size_t n_unseen;
        /* May be NULL. holder: "PID 1234 (cudamod)", or NULL when it
         * cannot be read; by_cudamod: /proc names the holder cudamod. */
        void (*on_wait)(const char *lock_path, const char *holder, bool by_cudamod, void *userdata);
        /* Seconds to wait for the lock: 0 the default (WRITE_LOCK_TIMEOUT),
         * negative not at all; then -ETIMEDOUT, the holder in d. */
        long lock_timeout;
        void *userdata;
        /* May be NULL. Non-zero: stop at the next file (also ends a wait
         * for the lock, when the signal that set it interrupted the wait). */
        const volatile sig_atomic_t *interrupted;
        /* When not NULL: the sha256 of the index the names were planned
         * from (index_names, "" when there was none); an index that is
         * another by the time the lock is held (a run in between) is
         * -EAGAIN, nothing written, and *index_changed (when not NULL)
         * set true. */
        const char *planned_index_sha;
        bool *index_changed;
        /* The mode of every file written, the index too (0: 0644); a
         * directory made for them gets each read bit with its search bit
         * (0755). Set with fchmod: the umask plays no part. */
        mode_t mode;
};

#define WRITE_LOCK_TIMEOUT 60

#endif
