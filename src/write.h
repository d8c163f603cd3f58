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

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "diag.h"
#include "util.h"

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
/* "created", "updated", "unchanged", "pruned", "stale", "edited", "foreign",
 * "held" */
const char *file_status_to_string(enum file_status s);

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

/* The results of `cudamod validate` kept in outdir's index (a directory
 * generate wrote), as its "validation" member, which generate keeps.
 * write_index_validation takes the lock (o: on_wait, userdata; may be
 * NULL) and replaces the member with validation (a JSON object);
 * -ENOENT when outdir has no index. read_index_validation: a new
 * reference, or NULL when none was recorded; *ret_validation is not
 * touched on error (callers initialise it). */
int write_index_validation(const char *outdir, json_t *validation, const struct write_options *o,
                           struct diag *d);
int read_index_validation(const char *outdir, json_t **ret_validation, struct diag *d);

/* The module names outdir's index records: for each modulefile, its
 * directory ("CUDA/11/cudnn"), version ("8.9.7", from its module name),
 * install (real path), identity and base (NULL in an older index); and
 * the sha256 of the index ("" when there is none, or no outdir), for
 * write_options planned_index_sha. Every field is checked as config is:
 * the module name by the naming grammar (module_version_valid for each
 * part), the install by the path rules (written_value_problem), identity
 * and base likewise; when one fails, no name is returned and ignored says
 * why. Read without the lock. */
struct index_name {
        char *dir;
        char *version;
        char *install;
        char *identity;
        char *base;
};

struct index_names {
        struct index_name *items;
        size_t n;
        char sha[65];
        /* Why the index's names were all ignored (an entry that does not
         * pass the naming grammar or the path rules: the index is input,
         * and one bad entry means none is trusted), or NULL. */
        char *ignored;
};

int index_names_read(const char *outdir, struct index_names *ret, struct diag *d);
void index_names_release(struct index_names *n);

/* A unified diff (3 lines of context) of a and b, with the given file
 * labels, appended to out; nothing when equal. Exposed for tests. */
struct strbuf;
void unified_diff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                  const char *label_b, struct strbuf *out);

/* sha256 of data as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char ret[65]);

/* --- before a write: the site's other module trees (write-site.c) ---
 *
 * site_check looks at the output tree and at every directory of the
 * modulepath (the caller's $MODULEPATH and config `modulepath`) and
 * reports, reading only:
 *   - foreign: files (relative to outdir) that cudamod did not write (not
 *     in the index, without its header) in a directory it writes into, or
 *     on the way to a hierarchy level (EasyBuild's CUDA/12.4.0.lua where
 *     CUDA/12/cudnn goes), unless the index lists a file in that very
 *     directory (an admin's file added to cudamod's own directory later
 *     is left alone, as write_tree leaves it): generate refuses to write
 *     beside them without --force;
 *   - on_modulepath: the output directory itself is on the modulepath
 *     while the layout is hierarchical (its Core/ and CUDA/ would read as
 *     modules named Core and CUDA);
 *   - warnings: a module name another tree also provides (shadowing), or
 *     one that differs only in case and that the config's family does not
 *     name (EasyBuild's CUDA beside cudamod's cuda: both load). */
struct site_name {
        const char *name;      /* "cuda" */
        const char *component; /* "cuda": its family key */
        const char *const *conflicts; /* the family's other names */
        size_t n_conflicts;
};

struct site_options {
        const char *outdir;    /* absolute */
        const char *const *modulepath;
        size_t n_modulepath;
        const struct site_name *names; /* one per module name generated */
        size_t n_names;
        /* The hierarchy levels the modules open ("CUDA/12", relative),
         * besides those the files lie in. */
        const char *const *levels;
        size_t n_levels;
};

struct site_report {
        struct strv foreign;
        struct strv warnings;
        bool on_modulepath;
};

/* Returns 0, or a negative errno with d set when the output tree cannot be
 * looked at fully (a directory or the index that cannot be read, more
 * than 100,000 entries): what it holds is then not known, and generate
 * refuses to write. Other trees that cannot be read give no warning. */
int site_check(const struct gen_file *files, size_t n_files, const struct site_options *o,
               struct site_report *ret, struct diag *d);
void site_report_release(struct site_report *r);

#endif
