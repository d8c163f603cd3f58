/* walk.c: a bounded, loop-safe directory walk (see walk.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "hashmap.h"
#include "strbuf.h"
#include "walk.h"
#include "banned.h"

#define MAX_SYMLINK_HOPS 40

/* A directory met, by device and inode (the key of the visited map). */
struct visited {
        struct hashmap_entry ent;
        dev_t dev;
        ino_t ino;
        unsigned budget; /* depth still allowed below it when it was walked */
        bool walked;
        bool prune;
        const char *const *keep;
};

struct pending {
        char *path;
        unsigned depth;
};

/* A directory's descriptor shared with the tasks that open its children:
 * closed when the last of them has. */
struct shared_fd {
        int fd;
        int refs;
};

struct task;

/* One part of a task's output, in walk order: what the callbacks were
 * given (a userdata of ops->fork) or a subtree another task walked. */
struct piece {
        void *userdata;
        struct task *task;
};

/* A subtree to walk: the child name of parent, or (a root) fd opened. */
struct task {
        struct shared_fd *parent;
        int fd;
        char *name, *path, *realpath, *parent_realpath;
        unsigned depth;
        dev_t parent_dev;
        struct piece *pieces;
        size_t n_pieces, alloc_pieces;
        struct task *next;
};

/* What the threads of one walk share, under lock. */
struct walk_shared {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct hashmap visited; /* of struct visited */
        struct pending *pending;
        size_t n_pending, alloc_pending;
        int stop; /* a negative errno from visit() (atomic) */
        unsigned jobs;
        struct task *queue; /* tasks not started (a stack) */
        size_t queued;
        size_t outstanding; /* tasks queued or running */
        bool shutdown;
};

/* One thread's walker. */
struct walker {
        const struct walk_options *opts;
        const struct walk_ops *ops;
        void *userdata; /* the walk's own */
        unsigned max_depth;
        struct walk_shared *sh;
        struct task *task; /* the task this thread runs; NULL: the walk's own thread, serially */
};

static int stopped(const struct walker *w)
{
        return __atomic_load_n(&w->sh->stop, __ATOMIC_RELAXED);
}

/* The userdata the callbacks get now: the walk's own, or in a task the
 * current segment of its output (a new one after a subtree handed on). */
static void *ud(struct walker *w)
{
        struct task *t = w->task;

        if (!t)
                return w->userdata;
        if (!t->n_pieces || t->pieces[t->n_pieces - 1].task) {
                if (t->n_pieces == t->alloc_pieces) {
                        t->alloc_pieces = t->alloc_pieces ? t->alloc_pieces * 2 : 4;
                        t->pieces = xreallocarray(t->pieces, t->alloc_pieces, sizeof(*t->pieces));
                }
                t->pieces[t->n_pieces++] = (struct piece){ .userdata = w->ops->fork(w->userdata) };
        }
        return t->pieces[t->n_pieces - 1].userdata;
}

const struct walk_entry *walk_dir_find(const struct walk_dir *dir, const char *name)
{
        size_t lo = 0, hi = dir->n_entries;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int r = strcmp(name, dir->entries[mid].name);
                if (r == 0)
                        return &dir->entries[mid];
                if (r < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return NULL;
}

bool walk_dir_is_dir(const struct walk_dir *dir, const char *name)
{
        const struct walk_entry *e = walk_dir_find(dir, name);
        struct stat st;

        if (!e)
                return false;
        if (e->type == DT_DIR)
                return true;
        if (e->type != DT_LNK && e->type != DT_UNKNOWN)
                return false;
        return fstatat(dir->fd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

__attribute__((format(printf, 2, 0))) static void vwarn(struct walker *w, const char *fmt,
                                                         va_list ap)
{
        struct strbuf sb = STRBUF_INIT;

        if (!w || !w->ops->warning)
                return;
        strbuf_vaddf(&sb, fmt, ap);
        w->ops->warning(sb.buf, ud(w));
        strbuf_release(&sb);
}

_printf_(2, 3) static void warn(struct walker *w, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vwarn(w, fmt, ap);
        va_end(ap);
}

/* The walk missed what is at path: reported to both callbacks, the warning
 * being the message fmt makes. */
_printf_(5, 6) static void gap(struct walker *w, const char *path, const char *realpath,
                               const char *why, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vwarn(w, fmt, ap);
        va_end(ap);
        if (w->ops->incomplete)
                w->ops->incomplete(path, realpath ? realpath : path, why, ud(w));
}

void walk_dir_warn(const struct walk_dir *dir, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vwarn(dir->walker, fmt, ap);
        va_end(ap);
}

void walk_dir_verbose(const struct walk_dir *dir, const char *fmt, ...)
{
        struct strbuf sb = STRBUF_INIT;
        va_list ap;

        if (!dir->walker || !dir->walker->ops->verbose)
                return;
        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        dir->walker->ops->verbose(sb.buf, ud(dir->walker));
        strbuf_release(&sb);
}

static bool visited_equal(const struct hashmap_entry *entry, const struct hashmap_entry *key,
                          _unused_ const void *keydata)
{
        const struct visited *a = hashmap_entry_of(entry, const struct visited, ent);
        const struct visited *b = hashmap_entry_of(key, const struct visited, ent);

        return a->dev == b->dev && a->ino == b->ino;
}

static void visited_free(struct hashmap_entry *e)
{
        free(hashmap_entry_of(e, struct visited, ent));
}

/* The directory dev:ino, or NULL; with insert, a new one when it was not
 * met before. Under sh->lock. */
static struct visited *visited_lookup(struct walk_shared *w, dev_t dev, ino_t ino, bool insert)
{
        /* Hashed as the two numbers' bytes: the key is the same whatever
         * the padding of struct visited. */
        uint64_t id[2] = { (uint64_t)dev, (uint64_t)ino };
        struct visited key = { .dev = dev, .ino = ino }, *v;

        hashmap_entry_init(&key.ent, hash_bytes(id, sizeof(id)));
        v = hashmap_entry_of(hashmap_get(&w->visited, &key.ent, NULL), struct visited, ent);
        if (v || !insert)
                return v;
        v = xmalloc(sizeof(*v));
        *v = key;
        hashmap_add(&w->visited, &v->ent);
        return v;
}

static bool excluded(struct walker *w, const char *path)
{
        _cleanup_free_ char *slashed = NULL;

        if (!w->opts->exclude || w->opts->exclude->len == 0)
                return false;
        slashed = xasprintf("%s/", path);
        for (size_t i = 0; i < w->opts->exclude->len; i++) {
                const char *pat = w->opts->exclude->items[i];
                if (fnmatch(pat, path, 0) == 0 || fnmatch(pat, slashed, 0) == 0)
                        return true;
        }
        return false;
}

static bool kept(const char *const *keep, const char *name)
{
        for (; keep && *keep; keep++)
                if (streq(*keep, name))
                        return true;
        return false;
}

static int entry_cmp(const void *a, const void *b)
{
        return strcmp(((const struct walk_entry *)a)->name, ((const struct walk_entry *)b)->name);
}

void walk_entries_add(struct walk_entries_build *b, const char *name, unsigned char type)
{
        strbuf_addch(&b->records, (char)type);
        strbuf_add(&b->records, name, strlen(name) + 1);
        b->n++;
}

struct walk_entry *walk_entries_finish(struct walk_entries_build *b, size_t *ret_n)
{
        size_t n = b->n, len = b->records.len, off = 0, size;
        struct walk_entry *e;
        char *names;

        *ret_n = n;
        if (n == 0)
                return NULL;
        if (__builtin_mul_overflow(n, sizeof(*e), &size) || __builtin_add_overflow(size, len, &size))
                size = SIZE_MAX; /* xmalloc's out of memory */
        e = xmalloc(size);
        names = (char *)(e + n);
        memcpy(names, b->records.buf, len);
        for (size_t i = 0; i < n; i++) {
                e[i].type = (unsigned char)names[off];
                e[i].name = names + off + 1;
                off += strlen(e[i].name) + 2;
        }
        if (n > 1)
                qsort(e, n, sizeof(*e), entry_cmp);
        strbuf_reset(&b->records);
        b->n = 0;
        return e;
}

void walk_entries_build_release(struct walk_entries_build *b)
{
        strbuf_release(&b->records);
        b->n = 0;
}

struct walk_entry *walk_entries_copy(const struct walk_entry *e, size_t n)
{
        struct walk_entries_build b = WALK_ENTRIES_BUILD_INIT;
        struct walk_entry *copy;
        size_t got;

        for (size_t i = 0; i < n; i++)
                walk_entries_add(&b, e[i].name, e[i].type);
        copy = walk_entries_finish(&b, &got);
        walk_entries_build_release(&b);
        return copy;
}

void walk_entries_free(struct walk_entry *e)
{
        free(e);
}

/* The kernel's struct linux_dirent64. */
struct dirent64_raw {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

int walk_read_fd(int fd, size_t max, int (*each)(const char *name, unsigned char type, void *ctx),
                 void *ctx)
{
        /* As large as glibc's DIR buffer: a CUDA lib/ of 200 names is one
         * call and the end of the directory another. */
        _Alignas(8) char buf[32768];
        size_t n = 0;

        for (;;) {
                long got = syscall(SYS_getdents64, fd, buf, sizeof(buf));

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return -errno;
                if (got == 0)
                        return 0;
                for (long off = 0; off < got;) {
                        const struct dirent64_raw *de = (const struct dirent64_raw *)(buf + off);
                        int r;

                        off += de->d_reclen;
                        if (de->d_name[0] == '.' &&
                            (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
                                continue;
                        if (n++ == max)
                                return -E2BIG;
                        r = each(de->d_name, de->d_type, ctx);
                        if (r)
                                return r;
                }
        }
}

static int entries_add(const char *name, unsigned char type, void *ctx)
{
        walk_entries_add(ctx, name, type);
        return 0;
}

int walk_read_entries(int fd, size_t max, struct walk_entry **ret, size_t *ret_n)
{
        struct walk_entries_build b = WALK_ENTRIES_BUILD_INIT;
        int r = walk_read_fd(fd, max, entries_add, &b);

        if (r == -E2BIG) {
                walk_entries_build_release(&b);
                *ret = NULL;
                *ret_n = 0;
                return r;
        }
        *ret = walk_entries_finish(&b, ret_n);
        walk_entries_build_release(&b);
        return r;
}

static void queue_symlink(struct walker *w, const char *path, unsigned depth)
{
        struct walk_shared *sh = w->sh;

        pthread_mutex_lock(&sh->lock);
        if (sh->n_pending == sh->alloc_pending) {
                sh->alloc_pending = sh->alloc_pending ? sh->alloc_pending * 2 : 64;
                sh->pending = xreallocarray(sh->pending, sh->alloc_pending, sizeof(*sh->pending));
        }
        sh->pending[sh->n_pending++] = (struct pending){
                .path = xstrdup(path), .depth = depth
        };
        pthread_mutex_unlock(&sh->lock);
}

static void walk_fd(struct walker *w, int fd, const char *path, const char *realpath,
                    const char *parent_realpath, unsigned depth, dev_t parent_dev);

/* Kernel pseudo filesystems hold no installs and are large or unreadable
 * (/proc, /sys): a walk of "/" must not wander into them. */
static bool pseudo_filesystem(int fd)
{
        static const unsigned long magics[] = {
                0x9fa0,     /* proc */
                0x62656572, /* sysfs */
                0x1cd1,     /* devpts */
                0x27e0eb,   /* cgroup */
                0x63677270, /* cgroup2 */
                0x64626720, /* debugfs */
                0x74726163, /* tracefs */
                0x73636673, /* securityfs */
                0xcafe4a11, /* bpf */
                0x6165676c, /* pstore */
                0x62656570, /* configfs */
                0x65735543, /* fusectl */
                0x19800202, /* mqueue */
                0x42494e4d, /* binfmt_misc */
        };
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(magics); i++)
                if ((unsigned long)sfs.f_type == magics[i])
                        return true;
        return false;
}

/* Open dir/name as a directory without following a symlink; -1 when it
 * is left out or cannot be (reported). */
static int open_child(struct walker *w, int dirfd, const char *name, const char *child_path,
                      const char *child_real)
{
        int fd;

        if (excluded(w, child_path))
                return -1;
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                /* ENOENT/ENOTDIR/ELOOP: it changed under us; not worth a word. */
                if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                        gap(w, child_path, child_real, strerror(errno),
                            "cannot open directory '%s': %s, skipping", child_path, strerror(errno));
        }
        return fd;
}

/* Open dir/name as a directory without following a symlink, and walk it. */
static void walk_child(struct walker *w, int dirfd, const char *name, const char *path,
                       const char *realpath, unsigned depth, dev_t parent_dev)
{
        _cleanup_free_ char *child_path = path_join(path, name);
        _cleanup_free_ char *child_real = path_join(realpath, name);
        int fd = open_child(w, dirfd, name, child_path, child_real);

        if (fd >= 0)
                walk_fd(w, fd, child_path, child_real, realpath, depth, parent_dev);
}

static void task_push(struct walk_shared *sh, struct task *t)
{
        pthread_mutex_lock(&sh->lock);
        t->next = sh->queue;
        sh->queue = t;
        sh->queued++;
        sh->outstanding++;
        pthread_cond_signal(&sh->cond);
        pthread_mutex_unlock(&sh->lock);
}

/* Whether a child directory is handed to another thread: in a parallel
 * walk, while few tasks wait (more would only hold descriptors open). */
static bool may_spawn(struct walker *w)
{
        struct walk_shared *sh = w->sh;
        bool r;

        if (!w->task || sh->jobs < 2)
                return false;
        pthread_mutex_lock(&sh->lock);
        r = sh->queued < 4 * (size_t)sh->jobs;
        pthread_mutex_unlock(&sh->lock);
        return r;
}

/* Hand the walk of dir/name to another thread; its output is the next
 * piece of this task's. */
static void spawn_child(struct walker *w, struct shared_fd **sfd, int fd, const char *name,
                        const char *path, const char *realpath, unsigned depth, dev_t parent_dev)
{
        struct task *cur = w->task;
        struct task *t = xcalloc(1, sizeof(*t));

        if (!*sfd) {
                *sfd = xcalloc(1, sizeof(**sfd));
                (*sfd)->fd = fd;
                (*sfd)->refs = 1;
        }
        __atomic_add_fetch(&(*sfd)->refs, 1, __ATOMIC_RELAXED);
        *t = (struct task){
                .parent = *sfd, .fd = -1, .name = xstrdup(name), .path = path_join(path, name),
                .realpath = path_join(realpath, name), .parent_realpath = xstrdup(realpath),
                .depth = depth, .parent_dev = parent_dev,
        };
        if (cur->n_pieces == cur->alloc_pieces) {
                cur->alloc_pieces = cur->alloc_pieces ? cur->alloc_pieces * 2 : 4;
                cur->pieces = xreallocarray(cur->pieces, cur->alloc_pieces, sizeof(*cur->pieces));
        }
        cur->pieces[cur->n_pieces++] = (struct piece){ .task = t };
        task_push(w->sh, t);
}

static void shared_fd_put(struct shared_fd *sfd)
{
        if (__atomic_sub_fetch(&sfd->refs, 1, __ATOMIC_ACQ_REL) == 0) {
                close(sfd->fd);
                free(sfd);
        }
}

/* A directory the visitor pruned is an install its detectors looked into:
 * an entry of it they could not read (a mode 000 lib64/, an unreadable
 * version.json, a symlink into an unreadable tree) leaves what they saw
 * partial. One access check an entry (one more for a symlink), which is
 * less than the walk into it that pruning saves. The entries kept are
 * walked, and report their own problems. */
static void check_pruned(struct walker *w, int fd, const char *path, const char *realpath,
                         const struct walk_entry *entries, size_t n, const char *const *keep)
{
        for (size_t i = 0; i < n; i++) {
                const char *name = entries[i].name;
                bool is_dir = entries[i].type == DT_DIR;
                struct stat st;
                int err = 0;

                if (kept(keep, name))
                        continue;
                if (entries[i].type == DT_LNK || entries[i].type == DT_UNKNOWN) {
                        if (fstatat(fd, name, &st, 0) < 0)
                                err = errno;
                        else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                                continue;
                        else
                                is_dir = S_ISDIR(st.st_mode);
                } else if (entries[i].type != DT_REG && !is_dir)
                        continue;
                if (!err && faccessat(fd, name, is_dir ? R_OK | X_OK : R_OK, AT_EACCESS) < 0)
                        err = errno;
                if (err == EACCES || err == EPERM) {
                        _cleanup_free_ char *child_path = path_join(path, name);
                        _cleanup_free_ char *child_real = path_join(realpath, name);

                        gap(w, child_path, child_real, strerror(err),
                            "cannot read '%s': %s; what the scan knows of '%s' is incomplete",
                            child_path, strerror(err), path);
                }
        }
}

/* Walk the open directory fd (taking ownership of it). */
static void walk_fd(struct walker *w, int fd, const char *path, const char *realpath,
                    const char *parent_realpath, unsigned depth, dev_t parent_dev)
{
        struct walk_entry *entries = NULL;
        size_t n = 0;
        struct visited *v;
        struct stat st;
        unsigned budget = w->max_depth - depth;
        struct shared_fd *sfd = NULL;
        const char *const *keep;
        bool first, prune;
        int r;

        if (stopped(w)) {
                close(fd);
                return;
        }
        if (fstat(fd, &st) < 0) {
                gap(w, path, realpath, strerror(errno), "cannot stat directory '%s': %s, skipping",
                    path, strerror(errno));
                close(fd);
                return;
        }
        if (st.st_dev != parent_dev && pseudo_filesystem(fd)) {
                close(fd);
                return;
        }
        pthread_mutex_lock(&w->sh->lock);
        v = visited_lookup(w->sh, st.st_dev, st.st_ino, true);
        /* A directory walked before is walked again only with more depth left
         * than it had then (two roots overlapping), and never visited twice. */
        if (v->walked && budget <= v->budget) {
                pthread_mutex_unlock(&w->sh->lock);
                close(fd);
                return;
        }
        first = !v->walked;
        v->walked = true;
        v->budget = budget;
        prune = v->prune;
        keep = v->keep;
        pthread_mutex_unlock(&w->sh->lock);

        r = walk_read_entries(fd, WALK_MAX_ENTRIES, &entries, &n);
        if (r == -E2BIG) {
                _cleanup_free_ char *why = xasprintf("more than %d entries", WALK_MAX_ENTRIES);

                gap(w, path, realpath, why,
                    "cannot scan '%s': %s (no install directory holds that many; 'exclude:' "
                    "in the config leaves it out), skipping", path, why);
                close(fd);
                return;
        }
        if (r < 0)
                gap(w, path, realpath, strerror(-r),
                    "cannot read directory '%s': %s, skipping the rest", path, strerror(-r));

        if (first) {
                struct walk_dir wd = {
                        .fd = fd, .path = path, .realpath = realpath,
                        .parent_realpath = parent_realpath, .depth = depth,
                        .entries = entries, .n_entries = n, .walker = w,
                };
                struct walk_verdict verdict = { 0 };
                r = w->ops->visit(&wd, &verdict, ud(w));
                if (r < 0)
                        __atomic_store_n(&w->sh->stop, r, __ATOMIC_RELAXED);
                prune = verdict.prune;
                keep = verdict.keep;
                pthread_mutex_lock(&w->sh->lock);
                v = visited_lookup(w->sh, st.st_dev, st.st_ino, false);
                v->prune = prune;
                v->keep = keep;
                pthread_mutex_unlock(&w->sh->lock);
                if (prune && !stopped(w))
                        check_pruned(w, fd, path, realpath, entries, n, keep);
        }

        for (size_t i = 0; i < n && !stopped(w) && depth < w->max_depth; i++) {
                const char *name = entries[i].name;
                unsigned char type = entries[i].type;

                if (prune && !kept(keep, name))
                        continue;
                if (type == DT_UNKNOWN) {
                        struct stat cst;
                        if (fstatat(fd, name, &cst, AT_SYMLINK_NOFOLLOW) < 0)
                                continue;
                        type = S_ISDIR(cst.st_mode) ? DT_DIR : S_ISLNK(cst.st_mode) ? DT_LNK : DT_REG;
                }
                if (type == DT_DIR && may_spawn(w))
                        spawn_child(w, &sfd, fd, name, path, realpath, depth + 1, st.st_dev);
                else if (type == DT_DIR)
                        walk_child(w, fd, name, path, realpath, depth + 1, st.st_dev);
                else if (type == DT_LNK) {
                        struct stat cst;
                        _cleanup_free_ char *child_path = path_join(path, name);

                        if (fstatat(fd, name, &cst, 0) < 0) {
                                if (errno == ELOOP)
                                        warn(w, "symlink loop at '%s', skipping", child_path);
                                continue;
                        }
                        if (S_ISDIR(cst.st_mode) && !excluded(w, child_path))
                                queue_symlink(w, child_path, depth + 1);
                }
        }
        walk_entries_free(entries);
        if (sfd)
                shared_fd_put(sfd);
        else
                close(fd);
}

/* realpath(3) in three system calls, however deep the path: glibc's asks
 * readlink of every component (a round trip each on a network
 * filesystem). The kernel resolves path once into an O_PATH descriptor,
 * and /proc/self/fd names what it resolved to. NULL and errno as realpath
 * when path does not resolve; realpath itself without /proc. */
static char *resolve_path(const char *path)
{
        char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];
        char buf[PATH_MAX];
        ssize_t len;
        int fd = open(path, O_PATH | O_CLOEXEC);

        if (fd < 0)
                return NULL;
        (void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        len = readlink(proc, buf, sizeof(buf) - 1);
        close(fd);
        /* Not an absolute path: no /proc, or an object without one (a
         * deleted directory reads "/x (deleted)", taken as it is by
         * realpath's own answer below). */
        if (len <= 0 || len >= (ssize_t)sizeof(buf) - 1 || buf[0] != '/' ||
            (len > 10 && strcmp(buf + len - 10, " (deleted)") == 0))
                return realpath(path, NULL);
        buf[len] = '\0';
        return xstrdup(buf);
}

/* Report every link of the symlink chain starting at path as an alias of
 * realpath. Returns -ELOOP when the chain does not end. */
static int report_chain(struct walker *w, const char *path, const char *realpath)
{
        _cleanup_free_ char *cur = xstrdup(path);

        for (unsigned hops = 0; hops < MAX_SYMLINK_HOPS; hops++) {
                char buf[PATH_MAX];
                struct stat st;
                ssize_t len;

                if (lstat(cur, &st) < 0 || !S_ISLNK(st.st_mode))
                        return 0;
                if (w->ops->alias)
                        w->ops->alias(realpath, cur, ud(w));
                len = readlink(cur, buf, sizeof(buf) - 1);
                if (len < 0)
                        return 0;
                buf[len] = '\0';
                if (buf[0] == '/') {
                        free(cur);
                        cur = xstrdup(buf);
                } else {
                        _cleanup_free_ char *dir = path_dirname(cur);
                        free(cur);
                        cur = path_join(dir, buf);
                }
        }
        return -ELOOP;
}

static int pending_cmp(const void *a, const void *b)
{
        const struct pending *x = a, *y = b;

        if (x->depth != y->depth)
                return x->depth < y->depth ? -1 : 1;
        return strcmp(x->path, y->path);
}

/* Follow a queued symlink: an alias when its target was walked, else a walk
 * of the target under the symlink's path. */
static void follow_symlink(struct walker *w, const struct pending *p)
{
        _cleanup_free_ char *real = NULL, *parent_real = NULL;
        struct visited *v;
        struct stat st;
        int fd;

        real = resolve_path(p->path);
        if (!real) {
                if (errno == ELOOP)
                        warn(w, "symlink loop at '%s', skipping", p->path);
                else if (errno != ENOENT && errno != ENOTDIR)
                        /* Its target lies in a directory we cannot search. */
                        gap(w, p->path, NULL, strerror(errno), "cannot follow symlink '%s': %s, skipping",
                            p->path, strerror(errno));
                return;
        }
        bool walked;

        if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
                return;
        pthread_mutex_lock(&w->sh->lock);
        v = visited_lookup(w->sh, st.st_dev, st.st_ino, false);
        walked = v && v->walked;
        pthread_mutex_unlock(&w->sh->lock);
        if (walked) {
                if (report_chain(w, p->path, real) < 0)
                        warn(w, "symlink loop at '%s', skipping", p->path);
                return;
        }
        fd = open(p->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) {
                if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
                        gap(w, p->path, real, strerror(errno), "cannot open directory '%s': %s, skipping",
                            p->path, strerror(errno));
                return;
        }
        parent_real = path_dirname(real);
        walk_fd(w, fd, p->path, real, parent_real, p->depth, 0);
        /* The links of its chain beyond the first are aliases of the target. */
        if (report_chain(w, p->path, real) < 0)
                warn(w, "symlink loop at '%s', skipping", p->path);
}

/* Run task t on this thread: its subtree, into its pieces. */
static void task_run(struct walker *w, struct task *t)
{
        w->task = t;
        if (t->fd >= 0)
                walk_fd(w, TAKE_FD(t->fd), t->path, t->realpath, t->parent_realpath, t->depth, t->parent_dev);
        else {
                int fd = open_child(w, t->parent->fd, t->name, t->path, t->realpath);

                shared_fd_put(TAKE_PTR(t->parent));
                if (fd >= 0)
                        walk_fd(w, fd, t->path, t->realpath, t->parent_realpath, t->depth, t->parent_dev);
        }
        w->task = NULL;
}

/* Take and run tasks until none is left (until_idle: return then; else
 * wait for more, until shutdown). */
static void work(struct walker *w, bool until_idle)
{
        struct walk_shared *sh = w->sh;

        pthread_mutex_lock(&sh->lock);
        for (;;) {
                struct task *t;

                while (!sh->queue && !sh->shutdown && !(until_idle && sh->outstanding == 0))
                        pthread_cond_wait(&sh->cond, &sh->lock);
                if (!sh->queue)
                        break;
                t = sh->queue;
                sh->queue = t->next;
                sh->queued--;
                pthread_mutex_unlock(&sh->lock);
                task_run(w, t);
                pthread_mutex_lock(&sh->lock);
                if (--sh->outstanding == 0)
                        pthread_cond_broadcast(&sh->cond);
        }
        pthread_mutex_unlock(&sh->lock);
}

static void *worker_main(void *arg)
{
        struct walker w = *(struct walker *)arg;

        work(&w, false);
        return NULL;
}

/* Hand a finished task's output to the walk's userdata, in walk order. */
static void task_join(struct walker *w, struct task *t)
{
        for (size_t i = 0; i < t->n_pieces; i++) {
                if (t->pieces[i].task)
                        task_join(w, t->pieces[i].task);
                else
                        w->ops->join(w->userdata, t->pieces[i].userdata);
        }
        if (t->parent)
                shared_fd_put(t->parent);
        if (t->fd >= 0)
                close(t->fd);
        free(t->pieces);
        free(t->name);
        free(t->path);
        free(t->realpath);
        free(t->parent_realpath);
        free(t);
}

/* Walk the open root fd: serially, or as a task the threads share. */
static void walk_root(struct walker *w, int fd, const char *root, const char *real)
{
        struct task *t;

        if (w->sh->jobs < 2) {
                walk_fd(w, fd, root, real, NULL, 0, 0);
                return;
        }
        t = xcalloc(1, sizeof(*t));
        *t = (struct task){ .fd = fd, .path = xstrdup(root), .realpath = xstrdup(real) };
        task_push(w->sh, t);
        work(w, true);
        task_join(w, t);
}

int walk_roots(const char *const *roots, size_t n_roots, const struct walk_options *opts,
               const struct walk_ops *ops, void *userdata)
{
        struct walk_shared sh = {
                .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
                .jobs = ops->fork && ops->join && opts->jobs > 1 ? opts->jobs : 1,
                .visited = HASHMAP_INIT(visited_equal),
        };
        struct walker w = {
                .opts = opts, .ops = ops, .userdata = userdata, .sh = &sh,
                .max_depth = opts->max_depth ? opts->max_depth : WALK_DEFAULT_MAX_DEPTH,
        };
        pthread_t *threads = NULL;
        size_t n_threads = 0;

        if (w.max_depth > WALK_MAX_DEPTH_LIMIT)
                w.max_depth = WALK_MAX_DEPTH_LIMIT;
        if (sh.jobs > WALK_MAX_JOBS)
                sh.jobs = WALK_MAX_JOBS;
        if (sh.jobs > 1) {
                threads = xcalloc(sh.jobs - 1, sizeof(*threads));
                for (unsigned i = 0; i + 1 < sh.jobs; i++)
                        if (pthread_create(&threads[n_threads], NULL, worker_main, &w) == 0)
                                n_threads++;
                /* No thread at all: the walk's own does every task. */
        }

        for (size_t i = 0; i < n_roots && !stopped(&w); i++) {
                /* Reported paths are absolute, as the user spelled them. */
                _cleanup_free_ char *root = path_absolute(roots[i]);
                _cleanup_free_ char *real = resolve_path(root);
                int fd;

                /* A root that failed is a gap (a missing default root is
                 * not: most of them are absent on any one system). */
                if (!real) {
                        if (errno == ELOOP)
                                gap(&w, root, NULL, strerror(errno), "symlink loop at '%s', skipping", root);
                        else if (errno != ENOENT || opts->warn_missing_roots)
                                gap(&w, root, NULL, strerror(errno), "cannot scan '%s': %s, skipping", root,
                                    strerror(errno));
                        continue;
                }
                fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
                if (fd < 0) {
                        if (errno != ENOENT || opts->warn_missing_roots)
                                gap(&w, root, real, strerror(errno), "cannot open directory '%s': %s, skipping",
                                    root, strerror(errno));
                        continue;
                }
                walk_root(&w, fd, root, real);
                /* A root given as a symlink makes its chain aliases too. */
                report_chain(&w, root, real);
        }

        if (threads) {
                pthread_mutex_lock(&sh.lock);
                sh.shutdown = true;
                pthread_cond_broadcast(&sh.cond);
                pthread_mutex_unlock(&sh.lock);
                for (size_t i = 0; i < n_threads; i++)
                        pthread_join(threads[i], NULL);
                free(threads);
        }

        /* Symlinks last, in rounds: each round may queue more. The rounds
         * are walked by this thread alone: which of two links to one
         * directory walks it and which is its alias depends on the order. */
        while (sh.n_pending > 0 && !stopped(&w)) {
                struct pending *batch = sh.pending;
                size_t n = sh.n_pending;

                sh.pending = NULL;
                sh.n_pending = sh.alloc_pending = 0;
                qsort(batch, n, sizeof(*batch), pending_cmp);
                for (size_t i = 0; i < n; i++) {
                        if (!stopped(&w))
                                follow_symlink(&w, &batch[i]);
                        free(batch[i].path);
                }
                free(batch);
        }
        for (size_t i = 0; i < sh.n_pending; i++)
                free(sh.pending[i].path);
        free(sh.pending);
        hashmap_release(&sh.visited, visited_free);
        pthread_mutex_destroy(&sh.lock);
        pthread_cond_destroy(&sh.cond);
        return sh.stop;
}
