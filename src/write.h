/* write.h: put a generated modulefile tree on disk, safely.
 *
 * The caller hands the complete set of files a run generates (paths relative
 * to the output directory, contents, and what install each came from);
 * write_tree compares them with the tree and with its index
 * (OUT/.cudamod-index.json: file -> sha256, install, module) and then:
 *   - creates missing files and updates files whose content changed and
 *     still matches the index hash (nobody edited them);
 *   - leaves a file alone, and reports it skipped, when it was edited by
 *     hand (content matches neither the index hash nor the new content),
 *     unless force; and always when cudamod did not write it (not in the
 *     index), except that a file whose bytes already equal the new content
 *     is adopted into the index as unchanged (an interrupted earlier run);
 *   - reports files in the index that the run no longer generates as stale,
 *     and with prune removes them (not when edited by hand, unless force),
 *     then removes directories that became empty; a prune that would
 *     remove more than half of the modules the index lists is refused
 *     (-E2BIG, nothing written) unless force;
 *   - leaves a file as it is, and reports it held, when its install was
 *     not read whole (o->unseen: the install lies below a place the scan
 *     could not read, or holds one), and so every modulerc (a file without
 *     a module) in the directory of a module held or stale for that reason:
 *     an unreadable lib64/ neither rewrites cuda/12.9 from half its facts
 *     nor moves the default away from it;
 *   - writes every file atomically (temporary file in the same directory,
 *     made durable, renamed over the target, the directory synced; the
 *     syncs are batched: one syncfs for all temporary files, one fsync per
 *     directory), mode 0644 and directories 0755
 *     (or o->mode), whatever the umask, each created O_EXCL|O_NOFOLLOW
 *     under a random name, through directory file descriptors opened with
 *     O_NOFOLLOW below the output directory, so nothing is ever written
 *     outside it;
 *   - holds an exclusive lock (flock on OUT/.cudamod.lock) for the whole run,
 *     waiting for it when another process holds it (the on_wait callback
 *     is called once first, with the holder), at most lock_timeout
 *     seconds, so two runs never interleave. The lock file is made mode
 *     0600 and opened read-write, so only its owner (and root) can take
 *     it: a user who may read the tree cannot hold every run off. One that
 *     cannot be opened read-write is an error (a run that writes nothing
 *     then goes without the lock), one of ours with a wider mode is
 *     tightened. The holder a run waits for is named from /proc/locks
 *     (PID and command name; unknown when it runs on another NFS client);
 *   - removes temporary files a killed run left behind (.cudamod-tmp.*);
 *   - rewrites the index last, atomically, when it changed.
 * After taking the lock it checks that outdir still names the directory it
 * locked (an admin may have moved or replaced it while the run waited) and
 * refuses to write anything when it does not.
 *
 * When a write, sync, rename or removal fails, or *interrupted becomes
 * non-zero (a signal handler of the caller's sets it), write_tree stops
 * between two files: nothing more is put in place, its own temporary files
 * are removed, and the index is rewritten to describe what is on disk (every
 * file in it holds the recorded hash), unless writing the index is what
 * fails; it then returns the first error (-EINTR when interrupted). Every
 * file is then old or new, never partial.
 * dry_run and check write nothing (and take the lock only if the directory
 * exists); dry_run prints a unified diff per changed file to diff_out.
 *
 * The output directory is created (with its parents) unless dry_run or
 * check; a path that exists and is not a directory, or that cannot be
 * written, is an error naming it. */
#ifndef CUDAMOD_WRITE_H
#define CUDAMOD_WRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "util.h"
#include "write-types.h"

/* "created", "updated", "unchanged", "pruned", "stale", "edited", "foreign",
 * "held" */
const char *file_status_to_string(enum file_status s);

struct file_report {
        char *path;          /* relative */
        enum file_status status;
        char *module;        /* may be NULL */
        char *held_by;       /* FILE_HELD: the entry of o->unseen why; else NULL */
};

/* With dry_run or check, the statuses are what a real run would do. */
struct write_result {
        struct file_report *files; /* sorted by path */
        size_t n_files;
        size_t count[_FILE_STATUS_MAX];
};

int write_tree(const struct gen_file *files, size_t n_files, const struct write_options *o,
               struct write_result *ret, struct diag *d);
void write_result_release(struct write_result *r);

#endif
