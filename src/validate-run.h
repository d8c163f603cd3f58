/* validate-run.h: the engine of `cudamod validate`: every module of a
 * modulepath (or the ones named), loaded with what it depends on, through
 * the checks of doc/guide.md, `cudamod validate`.
 *
 * Which modules: every module of the modulepath, and for each one that
 * extends MODULEPATH (a cuda module of a hierarchy), every module of the
 * directories it adds, loaded after it: "cudnn/9.7.1 with cuda/12.9". Named
 * MODULEs keep the units whose module is that one ("cudnn/9.7.1"), or of
 * that name ("cudnn"), or under that partial version ("cudnn/9").
 *
 * Each unit goes through the table of checks (validate_checks[],
 * validate-checks.c): the per-module ones, then for each launcher target
 * (struct launch_target: where the probe runs) the per-target ones; the
 * JSON object of its report is made here. With jobs > 1 the units are
 * shared out to worker processes (validate-pool.c); the results keep the
 * unit order, so they do not depend on jobs, and a crash while validating
 * one unit is that unit's failure, not the run's. What the targets showed
 * is recorded in the output directory's index, for `generate`.
 *
 * validate_run never prints: messages on the way go to
 * validate_run_options.log (message.h), the error that ends it to the
 * diag. struct validate_result owns all it holds; release it with
 * validate_result_release whatever validate_run returned. */
#ifndef CUDAMOD_VALIDATE_RUN_H
#define CUDAMOD_VALIDATE_RUN_H

#include <stdbool.h>

#include <jansson.h>

#include "config.h"
#include "diag.h"
#include "evaluate.h"
#include "message.h"
#include "util.h"
#include "validate.h"

/* A launcher target: where the probe runs, through a launcher (srun -p
 * a100 …) or on this machine. */
struct launch_target {
        char *name;
        char *launcher_text;     /* as configured, or NULL */
        struct strv launcher;    /* its words (empty: none) */
};

struct validate_run_options {
        const struct config *cfg;
        const struct strv *modulepath;
        /* The MODULEs named (none: every module). */
        char *const *modules;
        size_t n_modules;
        /* --launcher (one target, "launcher"; "" for none), or the names
         * of the config's validate.targets to use (empty: all). */
        const char *launcher;
        const struct strv *targets;
        /* cudamod-probe (NULL: not found, an error); the other settings
         * of validate_options from the command line, over the config's:
         * driver_libdir NULL and timeout 0 take the config's. */
        const char *probe;
        const char *driver_libdir;
        unsigned timeout;
        bool require_device, no_compile, no_strict_modes, trust_modulefiles;
        unsigned jobs;
        long lock_timeout;      /* as write_options.lock_timeout */
        struct message_sink log;
        /* validate_pool_ops.progress (may be NULL). */
        void (*progress)(size_t done, size_t n, bool end, void *userdata);
        /* Or NULL: called with each module's result as soon as it and
         * every module before it have theirs (in the report's order, so
         * that a reader of a pipe sees each as it is ready), before the
         * progress call that counts it; n_targets as validate_result's.
         * The result is not final in one respect: its per-target
         * bookkeeping is still in it (the JSON report is built later). */
        void (*unit_done)(const char *module, json_t *result, size_t n_targets, void *userdata);
        void *progress_userdata;
        /* write_options.on_wait and its userdata: waiting for the lock of
         * the output directory, to record the results. */
        void (*on_wait)(const char *lock_path, const char *holder, bool by_cudamod, void *userdata);
        void *wait_userdata;
};

struct validate_result {
        struct module_unit *units;
        json_t **results;    /* the report's object of each unit */
        size_t n_units;
        struct launch_target *targets;
        size_t n_targets;
        /* {"targets": [...], "arch_list": "8.0;9.0" or null}: what each
         * target showed (targets_summary). */
        json_t *summary;
        /* The results could not be recorded because the lock stayed held
         * (said in the log): a failure of the run. */
        bool record_failed;
};

void validate_result_release(struct validate_result *r);

/* Returns 0 when the units ran (whatever they showed); -EINVAL on a usage
 * or configuration error (a target, a directory, the probe, a MODULE not
 * found); -ENOENT when the modulepath holds no module. */
int validate_run(const struct validate_run_options *opts, struct validate_result *ret, struct diag *d);

/* Whether the run failed: a module failed, or (strict) one of the stack's
 * went unchecked, or a target's launcher failed, or the record. */
bool validate_result_failed(const struct validate_result *r, bool strict);

#endif
