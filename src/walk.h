/* walk.h: visit every directory under a set of roots, once each.
 *
 * The walk goes through each root without following symlinks first; the
 * symlinks to directories it meets are queued and followed afterwards, so a
 * directory reachable directly is always reported under its direct path and
 * the symlinks (and every link of their chains, such as
 * /usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-12.4) are
 * reported as aliases. A directory is identified by (st_dev, st_ino): loops
 * and links to a parent end there. Unreadable directories, symlink loops and
 * directories of more than WALK_MAX_ENTRIES entries are skipped with a
 * warning; nothing is ever written or executed.
 *
 * A walk is complete when every directory below the roots that was not
 * left out on purpose (exclude:, the depth limit, pseudo filesystems,
 * symlink loops, a missing default root) was read whole. Each place where
 * it was not is also reported to ops->incomplete: a directory that could
 * not be opened or read to its end, one of too many entries, a root that
 * failed, and, in a directory the visitor pruned (an install: its
 * detectors read inside it), an entry that cannot be read (a mode 000
 * lib64/, an unreadable version.json), since what the detectors saw of
 * that install is then partial.
 *
 * Memory: the entries of each directory on the way down (at most
 * max_depth + 1 of them at once, each of at most WALK_MAX_ENTRIES), and
 * about 100 bytes for every directory walked (the loop check). */
#ifndef CUDAMOD_WALK_H
#define CUDAMOD_WALK_H

#include <stdbool.h>

#include "strbuf.h"
#include "util.h"

#define WALK_DEFAULT_MAX_DEPTH 8
#define WALK_MAX_DEPTH_LIMIT 64
/* The most entries read from one directory: a directory with more is
 * skipped with a warning. An install directory holds tens or hundreds
 * (a CUDA lib/ about 200, a conda lib/ a few thousand), the largest
 * system one (/usr/lib/x86_64-linux-gnu, /usr/lib64) some 20,000; a
 * directory of millions (a scratch area, a mail spool) would cost about
 * 65 bytes an entry to list, for nothing. */
#define WALK_MAX_ENTRIES 100000
#define WALK_MAX_JOBS 256

struct walker;

struct walk_entry {
        char *name;
        unsigned char type; /* DT_DIR, DT_REG, DT_LNK, … as readdir gave it */
};

/* One visited directory, valid only during the callback. */
struct walk_dir {
        int fd;               /* the open directory */
        const char *path;     /* as walked from the root (may pass through symlinks) */
        const char *realpath; /* canonical path */
        const char *parent_realpath; /* NULL for a root */
        unsigned depth;       /* 0 for a root */
        struct walk_entry *entries; /* sorted by name, without "." and ".." */
        size_t n_entries;
        struct walker *walker;       /* for walk_dir_warn; may be NULL */
};

/* Read the directory fd (open, O_DIRECTORY) to its end with getdents64
 * itself: no DIR stream, so no fstat and fcntl of its own. Calls each(name,
 * d_type, ctx) for every entry but "." and "..", at most max of them; each
 * returns 0, or non-zero to stop (returned). -E2BIG when the directory has
 * more than max entries, -errno when a read failed (the entries before it
 * were given). The offset of fd is left at the end. */
int walk_read_fd(int fd, size_t max, int (*each)(const char *name, unsigned char type, void *ctx),
                 void *ctx);
/* The entries of fd, sorted by name (walk_read_fd's errors; with -errno of
 * a failed read, the entries before it). */
int walk_read_entries(int fd, size_t max, struct walk_entry **ret, size_t *ret_n);

/* A listing is one allocation: the entries, then their names (it was a
 * malloc a name, 8% of a scan's allocations). Gathered as read, in
 * records that the finish copies once and sorts: */
struct walk_entries_build {
        struct strbuf records; /* a type byte, the name, its NUL; one after another */
        size_t n;
};
#define WALK_ENTRIES_BUILD_INIT { .records = STRBUF_INIT }
void walk_entries_add(struct walk_entries_build *b, const char *name, unsigned char type);
/* What b gathered, sorted by name (NULL when nothing); b is left empty. */
struct walk_entry *walk_entries_finish(struct walk_entries_build *b, size_t *ret_n);
void walk_entries_build_release(struct walk_entries_build *b);
/* A copy of n entries, in the same one allocation. */
struct walk_entry *walk_entries_copy(const struct walk_entry *e, size_t n);
void walk_entries_free(struct walk_entry *e);

/* Look up an entry of dir by name (binary search); NULL when absent. */
const struct walk_entry *walk_dir_find(const struct walk_dir *dir, const char *name);
/* Whether dir/name is a directory (following symlinks). */
bool walk_dir_is_dir(const struct walk_dir *dir, const char *name);
/* Report a non-fatal problem met while looking into dir, as the walk
 * reports its own (ops->warning); nothing when dir has no walker. */
_printf_(2, 3) void walk_dir_warn(const struct walk_dir *dir, const char *fmt, ...);
/* Say why a detector looked at dir and left it (ops->verbose): shown with
 * -v, so that nothing the scan passes over is passed over silently. */
_printf_(2, 3) void walk_dir_verbose(const struct walk_dir *dir, const char *fmt, ...);

/* What the visitor tells the walker about a directory. */
struct walk_verdict {
        bool prune;               /* do not descend into it… */
        const char *const *keep;  /* …except into these children (NULL-terminated) */
};

struct walk_ops {
        /* Called once per directory. Returns 0, or a negative errno to stop. */
        int (*visit)(const struct walk_dir *dir, struct walk_verdict *verdict, void *userdata);
        /* Called when `path` is another way to reach the directory `realpath`
         * that was visited (a symlink, or a link in a symlink chain). */
        void (*alias)(const char *realpath, const char *path, void *userdata);
        /* A non-fatal problem: "cannot open directory '…': …, skipping". */
        void (*warning)(const char *message, void *userdata);
        /* May be NULL. Why a detector left a directory it looked at
         * (walk_dir_verbose): "'…/nvidia/cusparselt': …". */
        void (*verbose)(const char *message, void *userdata);
        /* May be NULL. The walk missed what is at `path` (as walked;
         * `realpath` canonical where known, else equal to it): `why` is
         * strerror's text or "more than N entries". Also reported to
         * warning. */
        void (*incomplete)(const char *path, const char *realpath, const char *why, void *userdata);
        /* May be NULL (then the walk is serial). A parallel walk
         * (walk_options.jobs > 1) hands each subtree it gives another
         * thread a userdata of its own for the callbacks above, made by
         * fork(userdata) on that thread, and once the whole root is
         * walked gives each to join(userdata, forked) on the walk's
         * thread, in the order of the serial walk: join adds what the
         * callbacks recorded in forked to userdata, and frees it. The
         * callbacks of different subtrees run at the same time; alias runs
         * only on the walk's thread, with userdata. */
        void *(*fork)(void *userdata);
        void (*join)(void *userdata, void *forked);
};

struct walk_options {
        unsigned max_depth;          /* 0: WALK_DEFAULT_MAX_DEPTH */
        const struct strv *exclude;  /* fnmatch patterns on the walked path; may be NULL */
        bool warn_missing_roots;     /* a root that does not exist is a warning */
        /* Threads walking the subtrees of a root at once (0, 1: the
         * calling thread alone); at most WALK_MAX_JOBS. The symlinks to
         * directories are followed serially after. */
        unsigned jobs;
};

int walk_roots(const char *const *roots, size_t n_roots, const struct walk_options *opts,
               const struct walk_ops *ops, void *userdata);

#endif
