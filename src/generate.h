/* generate.h: the engine of `cudamod generate`: scan, plan, render, check
 * every rendered file, check the site, write the tree, rebuild Lmod's
 * spider cache.
 *
 * generate_run never prints. What it has to say on the way (warnings,
 * verbose lines, and errors that do not end the run) goes to
 * generate_options.log (message.h) in the order it happens; the error that ends the
 * run is in the diag, and any error before it that belongs to the same
 * end went to the log first, so that the caller, printing the log as it
 * comes and the diag last, shows them in order. The diff of a dry run goes
 * to diff_out. struct generate_result owns everything in it; release it
 * with generate_result_release whatever generate_run returned. */
#ifndef CUDAMOD_GENERATE_H
#define CUDAMOD_GENERATE_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "diag.h"
#include "message.h"
#include "plan.h"
#include "scan.h"
#include "util.h"
#include "write.h"

struct generate_options {
        /* The config, with the command line's choices in it (output,
         * format, layout). pytorch.cuda_arch_list: detect is resolved in
         * it, from the output directory's index. */
        struct config *cfg;
        /* The roots, excludes and threads of the scan. */
        struct scan_options *scan;
        bool dry_run, check, prune, force, rename;
        long lock_timeout;      /* as write_options.lock_timeout */
        FILE *diff_out;         /* write_options.diff_out (NULL: no diff) */
        /* Each message on the way (message.h). */
        struct message_sink log;
        /* Runs the scan instead of scan_run (may be NULL), for a progress
         * display: it reports what it has to say itself (scan_run's
         * warnings, its error) and returns a negative errno on failure.
         * NULL: scan_run, its warnings to log. */
        int (*scan_run)(struct scan_options *so, struct scan_result *ret, void *userdata);
        void *scan_userdata;
        /* write_options.on_wait and its userdata: waiting for the lock. */
        void (*on_wait)(const char *lock_path, const char *holder, bool by_cudamod, void *userdata);
        void *wait_userdata;
};

struct generate_result {
        char *outdir;           /* absolute */
        struct plan plan;
        struct write_result write;
        /* The scan's, the plan's and the site's warnings, for a report. */
        struct strv warnings;
        /* lmod.spider_cache: the cache rebuilt (NULL: none), and whether
         * the rebuild failed (said in the log; the tree is written). */
        char *spider_cache;
        bool spider_cache_failed;
        /* The SIGTERM, SIGINT or SIGHUP that stopped the write (-EINTR;
         * the diag says what it left behind): the caller dies of it, as a
         * shell expects. 0: none. */
        int stop_signal;
};

void generate_result_release(struct generate_result *r);

/* Returns 0 when the tree is written (with dry_run or check: compared;
 * result->write says how it differs); -EINVAL when the configuration,
 * the output directory, a template or the plan is wrong (nothing was
 * written); another negative errno when the run failed (a lower -EINVAL
 * is -EIO then). */
int generate_run(const struct generate_options *opts, struct generate_result *result, struct diag *d);

#endif
