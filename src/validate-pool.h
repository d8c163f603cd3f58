/* validate-pool.h: validate's -j N: the items 0..n-1 (the modules to
 * validate), each turned into a JSON object by a function, by N worker
 * processes.
 *
 * Each worker is forked once, not once per item (a fork costs where the
 * page table is large or the machine virtual), and reads item indices from
 * a pipe, answering each with the length and text of its result. The
 * results land in the caller's array at their item's index, so they do
 * not depend on N or on which worker was quicker. A worker that dies
 * (a crash while validating one module) loses only its item, whose result
 * the lost function makes; a new worker takes its place. With one job the
 * items are done in this process, one after the other.
 *
 * Nothing here prints: progress goes to a callback, and a worker that
 * could not be started is the return value. */
#ifndef CUDAMOD_VALIDATE_POOL_H
#define CUDAMOD_VALIDATE_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct validate_pool_ops {
        /* In a worker (or in this process with one job): item i's result,
         * a new reference. */
        json_t *(*work)(size_t i, void *userdata);
        /* In this process: the result of item i whose worker died or sent
         * what cannot be read; why says which ("killed by signal 11", "an
         * unreadable result"). A new reference. */
        json_t *(*lost)(size_t i, const char *why, void *userdata);
        /* In this process, or NULL: done of n items have their results;
         * end: the run is over (the last call). */
        void (*progress)(size_t done, size_t n, bool end, void *userdata);
};

/* Fill results[0..n-1] (NULL before) with jobs workers (1 to 64). When
 * some worker could not be started, the others do the work (with none,
 * this process does) and the negative errno of the first failure is
 * returned; else 0. Every results[i] is set on return. */
int validate_pool_run(size_t n, unsigned jobs, const struct validate_pool_ops *ops, void *userdata,
                      json_t **results);

#endif
