/* detect.c: the helpers the detectors share. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "detect.h"
#include "elf-file.h"
#include "name-hint.h"
#include "util-file.h"
#include "util-path.h"
#include "util.h"
#include "version.h"
#include "wheel-record.h"
#include "banned.h"

/* The directories found to hold more than WALK_MAX_ENTRIES entries, by
 * device, inode and change time (a directory made later under a reused
 * inode has another): each detector lists a CUDA prefix's library
 * directory, and one that large is read once, not once per detector.
 * Per thread (a parallel walk needs no lock), the last few. */
#define TOO_LARGE_MEMO 8
static _Thread_local struct too_large {
        dev_t dev;
        ino_t ino;
        struct timespec ctime;
} too_large[TOO_LARGE_MEMO];
static _Thread_local size_t n_too_large;

static bool same_dir(const struct too_large *t, const struct stat *st)
{
        return t->dev == st->st_dev && t->ino == st->st_ino && t->ctime.tv_sec == st->st_ctim.tv_sec &&
               t->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static bool known_too_large(const struct stat *st)
{
        for (size_t i = 0; i < n_too_large && i < TOO_LARGE_MEMO; i++)
                if (same_dir(&too_large[i], st))
                        return true;
        return false;
}

/* What one visit has learned of its directory: the listings read (by the
 * path relative to the directory) and the stats made. The detectors of one
 * directory look at the same few paths (lib64, targets/<triple>/lib,
 * bin/nvcc, include/...): each is listed or looked up once, a name is
 * looked up in a listing already read instead of probed, and a name a
 * listing lacks is known absent without a system call. Per thread, for the
 * visit of the thread's walk. */
struct dc_dir {
        char *rel; /* normalised: no "." components, no trailing '/'; "" for the directory */
        int err;   /* 0, or the -errno of the listing (-E2BIG: too large) */
        struct walk_entry *e;
        size_t n;
        int fd;          /* the directory listed, held for the visit; -1 when not */
        char **targets;  /* by entry: what its symlink reads (listed_chain), NULL not yet */
};

/* Listed directories a visit holds open, beyond which a listing is read
 * and closed as before (the detectors list a handful a visit). */
#define DC_HELD_FDS 32

struct dc_stat {
        char *rel;
        bool follow;
        int err;
        mode_t mode;
};

struct detect_cache {
        const struct walk_dir *dir;
        size_t dir_path_len;
        struct dc_dir *dirs;
        size_t n_dirs, alloc_dirs;
        struct dc_stat *stats;
        size_t n_stats, alloc_stats;
        /* The last dist-info directory read (the cuda, cudnn and nccl
         * detectors each ask a wheel's site-packages): its key and what
         * its METADATA files said, read once a visit. */
        char *dist_key;
        struct dist_infos dist;
        /* What the symlinks of the visited directory itself read. */
        char **dir_targets;
        size_t n_dir_targets;
        unsigned held_fds;
};

static _Thread_local struct detect_cache *cache;

static int cache_lookup(char *key, unsigned char *ret_type);

/* The oracle of file_open_regular_at's one-open path (util-file.h). */
static int listed_regular(int dirfd, const char *rel, const char **ret_name);

static void targets_free(char **targets, size_t n)
{
        for (size_t i = 0; targets && i < n; i++)
                free(targets[i]);
        free(targets);
}

void detect_cache_begin(const struct walk_dir *dir)
{
        struct detect_cache *c = xcalloc(1, sizeof(*c));

        detect_cache_end();
        c->dir = dir;
        c->dir_path_len = strlen(dir->path);
        cache = c;
        file_set_listed_regular(listed_regular);
        elf_memo_begin(dir->fd);
}

void detect_cache_end(void)
{
        struct detect_cache *c = TAKE_PTR(cache);

        file_set_listed_regular(NULL);
        elf_memo_end();
        if (!c)
                return;
        for (size_t i = 0; i < c->n_dirs; i++) {
                free(c->dirs[i].rel);
                targets_free(c->dirs[i].targets, c->dirs[i].n);
                walk_entries_free(c->dirs[i].e);
                if (c->dirs[i].fd >= 0)
                        close(c->dirs[i].fd);
        }
        targets_free(c->dir_targets, c->n_dir_targets);
        for (size_t i = 0; i < c->n_stats; i++)
                free(c->stats[i].rel);
        free(c->dirs);
        free(c->stats);
        free(c->dist_key);
        dist_infos_release(&c->dist);
        free(c);
}

/* rel of dirfd as the cache's key, newly allocated; NULL when the cache
 * cannot answer for it (another directory, "..", an absolute path not
 * below the visited one). */
/* A key in kb's buffer when it fits (no allocation: the detectors ask the
 * cache some 100,000 times a 2,000-prefix scan), else allocated. */
struct cache_keybuf {
        char *key;
        char buf[256];
};

static void cache_keybuf_release(struct cache_keybuf *kb)
{
        if (kb->key != kb->buf)
                free(kb->key);
        kb->key = NULL;
}

/* The key, owned by the caller. */
static char *cache_keybuf_take(struct cache_keybuf *kb)
{
        char *k = kb->key == kb->buf ? xstrdup(kb->buf) : kb->key;

        kb->key = NULL;
        return k;
}

static char *cache_key_in(int dirfd, const char *rel, struct cache_keybuf *kb)
{
        const char *p = rel;
        char *key, *out;
        size_t plen;

        if (!cache)
                return NULL;
        if (rel[0] == '/') {
                const char *dp = cache->dir->path;
                size_t n = cache->dir_path_len;

                if (strncmp(rel, dp, n) != 0 || (rel[n] != '/' && rel[n] != '\0'))
                        return NULL;
                p = rel + n;
        } else if (dirfd != cache->dir->fd)
                return NULL;
        /* The components of p joined by one '/', without "." ones: at most
         * as long as p, written in one go (a strbuf grown by each component
         * was a tenth of the scan's instructions). */
        plen = strlen(p);
        key = out = plen < sizeof(kb->buf) ? kb->buf : xmalloc(plen + 1);
        kb->key = key;
        while (*p) {
                const char *c;
                size_t len;

                while (*p == '/')
                        p++;
                c = strchrnul(p, '/');
                len = (size_t)(c - p);
                if (len == 0)
                        break;
                if (len == 2 && p[0] == '.' && p[1] == '.') {
                        cache_keybuf_release(kb);
                        return NULL;
                }
                if (!(len == 1 && p[0] == '.')) {
                        if (out != key)
                                *out++ = '/';
                        memcpy(out, p, len);
                        out += len;
                }
                p = c;
        }
        *out = '\0';
        return key;
}

static struct dc_dir *cache_dir_findn(const char *key, size_t len)
{
        for (size_t i = 0; i < cache->n_dirs; i++)
                if (strncmp(cache->dirs[i].rel, key, len) == 0 && cache->dirs[i].rel[len] == '\0')
                        return &cache->dirs[i];
        return NULL;
}

static struct dc_dir *cache_dir_find(const char *key)
{
        for (size_t i = 0; i < cache->n_dirs; i++)
                if (streq(cache->dirs[i].rel, key))
                        return &cache->dirs[i];
        return NULL;
}

static const struct walk_entry *entries_find(const struct walk_entry *e, size_t n, const char *name)
{
        struct walk_dir d = { .entries = (struct walk_entry *)e, .n_entries = n };

        return walk_dir_find(&d, name);
}

/* What the listings read tell of key (written to while it looks, and
 * restored): 1 and its d_type when it is in its parent's listing, 0 when
 * it is not there (or a component on the way is absent or no directory),
 * -1 when they do not tell. */
static int cache_lookup(char *key, unsigned char *ret_type)
{
        char *slash = strrchr(key, '/');
        const struct walk_entry *e;
        const char *base;

        if (!*key) {
                *ret_type = DT_DIR;
                return 1;
        }
        if (!slash) {
                e = walk_dir_find(cache->dir, key);
                base = key;
        } else {
                struct dc_dir *d = cache_dir_findn(key, (size_t)(slash - key));
                unsigned char t;
                int r;

                base = slash + 1;
                if (d && d->err == 0)
                        e = entries_find(d->e, d->n, base);
                else if (d && (d->err == -ENOENT || d->err == -ENOTDIR))
                        return 0;
                else {
                        /* The parent: key cut at its last '/' for the
                         * lookup (no copy), then restored. */
                        *slash = '\0';
                        r = cache_lookup(key, &t);
                        *slash = '/';
                        if (r == 0 || (r == 1 && t != DT_DIR && t != DT_LNK && t != DT_UNKNOWN))
                                return 0;
                        return -1;
                }
        }
        (void)base;
        if (!e)
                return 0;
        *ret_type = e->type;
        return 1;
}

/* The listing of key's first len bytes ("" the visited directory) when it
 * was read and its descriptor is held. */
struct dc_listing {
        const struct walk_entry *e;
        size_t n;
        int fd;
        char ***targets;
        size_t *n_targets;
};

static bool listing_of(const char *key, size_t len, struct dc_listing *ret)
{
        struct dc_dir *d;

        if (len == 0) {
                *ret = (struct dc_listing){ .e = cache->dir->entries, .n = cache->dir->n_entries,
                                            .fd = cache->dir->fd, .targets = &cache->dir_targets,
                                            .n_targets = &cache->n_dir_targets };
                return true;
        }
        d = cache_dir_findn(key, len);
        if (!d || d->err || d->fd < 0)
                return false;
        *ret = (struct dc_listing){ .e = d->e, .n = d->n, .fd = d->fd, .targets = &d->targets };
        return true;
}

/* What the link e of listing l reads, read once a visit ("" when it cannot
 * be read). */
static const char *link_target(const struct dc_listing *l, const struct walk_entry *e)
{
        size_t i = (size_t)(e - l->e);
        char buf[PATH_MAX];
        ssize_t len;

        if (!*l->targets) {
                *l->targets = xcalloc(l->n ? l->n : 1, sizeof(char *));
                if (l->n_targets)
                        *l->n_targets = l->n;
        }
        if (!(*l->targets)[i]) {
                len = readlinkat(l->fd, e->name, buf, sizeof(buf) - 1);
                /* Unreadable, or as long as the buffer (maybe cut): "". */
                buf[len > 0 && len < (ssize_t)sizeof(buf) - 1 ? len : 0] = '\0';
                (*l->targets)[i] = xstrdup(buf);
        }
        return (*l->targets)[i];
}

/* Where key leads within its directory's listing: a symlink whose target
 * is a plain name is that name of the same listing, looked up there (a
 * soname link, libcudart.so.12 -> libcudart.so.12.4.127). 1: the type of
 * what it ends at (not a link), the listed directory's descriptor and its
 * name there; 0: the chain ends at a name the listing lacks (it dangles);
 * -1: the listings do not tell (not listed, a target with a '/', ".",
 * "..", an unreadable link, DT_UNKNOWN, more than 8 links). */
static int listed_chain(const char *key, unsigned char *ret_type, int *ret_fd, const char **ret_name)
{
        const char *slash = strrchr(key, '/');
        const char *base = slash ? slash + 1 : key;
        struct dc_listing l;

        if (!*key || !listing_of(key, slash ? (size_t)(slash - key) : 0, &l))
                return -1;
        for (unsigned hops = 0; hops <= 8; hops++) {
                const struct walk_entry *e = entries_find(l.e, l.n, base);

                if (!e)
                        return 0;
                if (e->type == DT_UNKNOWN)
                        return -1;
                if (e->type != DT_LNK) {
                        *ret_type = e->type;
                        *ret_fd = l.fd;
                        *ret_name = e->name;
                        return 1;
                }
                base = link_target(&l, e);
                if (!*base || strchr(base, '/') || streq(base, ".") || streq(base, ".."))
                        return -1;
        }
        return -1;
}

/* fstatat(dirfd, rel) answered from the listings when they can (0 and the
 * file type in *ret_mode, or -ENOENT), else made once a visit. */
static int stat_type_at(int dirfd, const char *rel, bool follow, mode_t *ret_mode)
{
        _cleanup_(cache_keybuf_release) struct cache_keybuf kb = { 0 };
        char *key = cache_key_in(dirfd, rel, &kb);
        unsigned char t = DT_UNKNOWN;
        struct stat st;
        int r;

        /* The visited directory itself named by its path: that may be a
         * symlink, which its listing does not tell. */
        if (key && !*key && !follow)
                key = NULL;
        if (key) {
                r = cache_lookup(key, &t);
                if (r == 0)
                        return -ENOENT;
                if (r == 1 && t != DT_UNKNOWN && (t != DT_LNK || !follow)) {
                        *ret_mode = DTTOIF(t);
                        return 0;
                }
                /* A directory the visit listed is one. */
                if (follow && *key) {
                        const struct dc_dir *d = cache_dir_find(key);

                        if (d && d->err == 0) {
                                *ret_mode = S_IFDIR;
                                return 0;
                        }
                }
                if (r == 1 && t == DT_LNK) {
                        const char *name;
                        int fd;

                        r = listed_chain(key, &t, &fd, &name);
                        if (r == 0)
                                return -ENOENT; /* it dangles */
                        if (r == 1) {
                                *ret_mode = DTTOIF(t);
                                return 0;
                        }
                }
                for (size_t i = 0; i < cache->n_stats; i++)
                        if (cache->stats[i].follow == follow && streq(cache->stats[i].rel, key)) {
                                *ret_mode = cache->stats[i].mode;
                                return cache->stats[i].err;
                        }
        }
        /* Below the visited directory: relative to its descriptor, a few
         * components to look up rather than all of an absolute path. */
        if (key && *key)
                r = fstatat(cache->dir->fd, key, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
        else
                r = fstatat(dirfd, rel, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
        r = r < 0 ? -errno : 0;
        *ret_mode = r == 0 ? st.st_mode & S_IFMT : 0;
        if (key) {
                if (cache->n_stats == cache->alloc_stats) {
                        cache->alloc_stats = cache->alloc_stats ? cache->alloc_stats * 2 : 16;
                        cache->stats = xreallocarray(cache->stats, cache->alloc_stats, sizeof(*cache->stats));
                }
                cache->stats[cache->n_stats++] = (struct dc_stat){
                        .rel = cache_keybuf_take(&kb), .follow = follow, .err = r, .mode = *ret_mode,
                };
        }
        return r;
}

/* The oracle: the listed directory's descriptor and the name in it of the
 * regular file dirfd/rel is, or leads to by links within that directory. */
static int listed_regular(int dirfd, const char *rel, const char **ret_name)
{
        _cleanup_(cache_keybuf_release) struct cache_keybuf kb = { 0 };
        char *key = cache_key_in(dirfd, rel, &kb);
        unsigned char t;
        int fd;

        if (!key || listed_chain(key, &t, &fd, ret_name) != 1 || t != DT_REG)
                return -1;
        return fd;
}

int detect_stat(const char *path, struct stat *st)
{
        _cleanup_(cache_keybuf_release) struct cache_keybuf kb = { 0 };
        char *key = path[0] == '/' ? cache_key_in(AT_FDCWD, path, &kb) : NULL;
        const struct dc_dir *d = key && *key ? cache_dir_find(key) : NULL;
        int r;

        if (d && d->fd >= 0)
                r = fstat(d->fd, st);
        else if (key)
                r = fstatat(cache->dir->fd, *key ? key : ".", st, 0);
        else
                r = stat(path, st);
        return r < 0 ? -errno : 0;
}

bool detect_is_file(int dirfd, const char *rel)
{
        mode_t m;

        return stat_type_at(dirfd, rel, true, &m) == 0 && S_ISREG(m);
}

bool detect_is_dir(int dirfd, const char *rel)
{
        mode_t m;

        return stat_type_at(dirfd, rel, true, &m) == 0 && S_ISDIR(m);
}

bool detect_is_symlink(int dirfd, const char *rel)
{
        mode_t m;

        return stat_type_at(dirfd, rel, false, &m) == 0 && S_ISLNK(m);
}

bool detect_absent(int dirfd, const char *rel)
{
        _cleanup_(cache_keybuf_release) struct cache_keybuf kb = { 0 };
        char *key = cache_key_in(dirfd, rel, &kb);
        unsigned char t;

        return key && cache_lookup(key, &t) == 0;
}

/* Read the directory fd (walk_read_entries), once for a directory known
 * to be too large: one buffer of entries before the fstat that says so. */
struct too_large_check {
        int fd;
        bool checked, stated, known;
        struct stat st;
        struct walk_entries_build b;
};

static int list_one(const char *name, unsigned char type, void *ctx)
{
        struct too_large_check *c = ctx;

        /* A directory of more than one getdents64 buffer may be one
         * known too large: an fstat then, not for the small ones. */
        if (c->b.n == 512 && !c->checked) {
                c->checked = true;
                c->stated = fstat(c->fd, &c->st) == 0;
                if (c->stated && known_too_large(&c->st)) {
                        c->known = true;
                        return -E2BIG;
                }
        }
        walk_entries_add(&c->b, name, type);
        return 0;
}

static int list_fd(int fd, struct walk_entry **ret, size_t *ret_n)
{
        struct too_large_check c = { .fd = fd, .b = WALK_ENTRIES_BUILD_INIT };
        int r = walk_read_fd(fd, WALK_MAX_ENTRIES, list_one, &c);

        if (r == -E2BIG && !c.known) {
                if (!c.checked)
                        c.stated = fstat(fd, &c.st) == 0;
                if (c.stated)
                        too_large[n_too_large++ % TOO_LARGE_MEMO] = (struct too_large){
                                .dev = c.st.st_dev, .ino = c.st.st_ino, .ctime = c.st.st_ctim };
        }
        if (r == 0)
                *ret = walk_entries_finish(&c.b, ret_n);
        walk_entries_build_release(&c.b);
        return r;
}

/* The listing of dirfd/rel: from the cache when it has it (or the walk's
 * own for the directory itself); NULL and *ret_err when it is not
 * cached and could not be read. */
static const struct dc_dir *cached_listing(int dirfd, const char *rel, int *ret_err)
{
        _cleanup_(cache_keybuf_release) struct cache_keybuf kb = { 0 };
        char *key = cache_key_in(dirfd, rel, &kb);
        struct dc_dir *d;
        unsigned char t;
        int fd;

        if (!key)
                return NULL;
        d = cache_dir_find(key);
        if (d)
                return d;
        if (cache->n_dirs == cache->alloc_dirs) {
                cache->alloc_dirs = cache->alloc_dirs ? cache->alloc_dirs * 2 : 8;
                cache->dirs = xreallocarray(cache->dirs, cache->alloc_dirs, sizeof(*cache->dirs));
        }
        d = &cache->dirs[cache->n_dirs];
        *d = (struct dc_dir){ .rel = cache_keybuf_take(&kb), .fd = -1 };
        if (!*d->rel) {
                /* The directory itself: the walk read it. */
                d->e = walk_entries_copy(cache->dir->entries, cache->dir->n_entries);
                d->n = cache->dir->n_entries;
        } else if (cache_lookup(d->rel, &t) == 0)
                d->err = -ENOENT;
        else if ((fd = openat(cache->dir->fd, d->rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK)) < 0)
                d->err = -errno;
        else {
                d->err = list_fd(fd, &d->e, &d->n);
                /* Held for the visit: a file the listing names is opened
                 * relative to it (listed_regular). */
                if (d->err == 0 && cache->held_fds < DC_HELD_FDS) {
                        d->fd = fd;
                        cache->held_fds++;
                } else
                        close(fd);
        }
        cache->n_dirs++;
        *ret_err = d->err;
        return d;
}

int dir_list_cached(const char *path, struct strv *ret)
{
        _cleanup_(cache_keybuf_release) struct cache_keybuf kb = { 0 };
        char *key = cache_key_in(AT_FDCWD, path, &kb);
        int err = 0;
        const struct dc_dir *d;

        if (!key)
                return -ENODATA;
        d = cached_listing(AT_FDCWD, path, &err);
        if (!d || d->err < 0)
                return d ? d->err : -ENODATA;
        *ret = (struct strv){ 0 };
        for (size_t i = 0; i < d->n; i++)
                strv_add(ret, d->e[i].name);
        return 0;
}

int dir_list(int dirfd, const char *rel, struct strv *ret)
{
        struct strv v = { 0 };
        struct walk_entry *e = NULL;
        size_t n = 0;
        int err = 0, fd, r;
        const struct dc_dir *d = cached_listing(dirfd, rel, &err);

        if (d) {
                if (d->err < 0)
                        return d->err;
                for (size_t i = 0; i < d->n; i++)
                        strv_add(&v, d->e[i].name);
                *ret = v;
                return 0;
        }
        fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        r = list_fd(fd, &e, &n);
        close(fd);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                strv_add(&v, e[i].name);
        walk_entries_free(e);
        *ret = v;
        return 0;
}

void install_add_file_problem(struct install *in, int r, const struct diag *d)
{
        if (!in || !d || !d->message)
                return;
        if (r == -EINVAL || r == -EISDIR)
                install_add_problem(in, "not-regular-file", "%s", d->message);
        else if (r == -ESTALE)
                install_add_problem(in, "file-changed", "%s", d->message);
}

int check_regular_at(struct install *in, int dirfd, const char *dir_path, const char *rel)
{
        mode_t mode;
        int r;

        /* stat, never open: the type decides whether it is opened at all. */
        r = stat_type_at(dirfd, rel, true, &mode);
        if (r < 0)
                return r;
        if (S_ISREG(mode))
                return 0;
        if (in) {
                _cleanup_free_ char *display = path_join(dir_path, rel);
                install_add_problem(in, "not-regular-file", "'%s' is %s, not a regular file, not opened",
                                    display, file_mode_describe(mode));
        }
        return -EINVAL;
}

int read_head_at(int dirfd, const char *dir_path, const char *rel, size_t max, struct install *in,
                 struct strbuf *ret)
{
        _cleanup_free_ char *display = dir_path ? path_join(dir_path, rel) : NULL;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        int r;

        if (detect_absent(dirfd, rel))
                return -ENOENT;
        r = file_read_regular_at(dirfd, rel, display, max, true, ret, &d);
        if (r < 0)
                install_add_file_problem(in, r, &d);
        return r;
}

void libdir_release(struct libdir *ld)
{
        free(ld->rel);
        free(ld->triple);
        strv_release(&ld->files);
        free(ld->soname_file);
        *ld = (struct libdir){ 0 };
}

int libdir_in(int prefix_fd, const char *rel, const char *stem, struct libdir *ret)
{
        struct libdir ld = { 0 };
        struct walk_entry *owned = NULL;
        const struct walk_entry *e;
        size_t n = 0;
        int err = 0;
        const struct dc_dir *d = cached_listing(prefix_fd, rel, &err);

        /* The visit's listing as it is, not copied: each detector looks
         * for its libraries in the same few directories. */
        if (d) {
                if (d->err < 0)
                        return d->err;
                e = d->e;
                n = d->n;
        } else {
                int fd = openat(prefix_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
                int r;

                if (fd < 0)
                        return -errno;
                r = list_fd(fd, &owned, &n);
                close(fd);
                if (r < 0)
                        return r;
                e = owned;
        }
        /* The listing is sorted (strcmp): the names that start with stem
         * are the run from the first not less than it. */
        size_t lo = 0, hi = n, stem_len = strlen(stem);

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(e[mid].name, stem) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t i = lo; i < n && strncmp(e[i].name, stem, stem_len) == 0; i++) {
                const char *name = e[i].name;
                struct version v;

                if (soname_version_parse(name, stem, &v) < 0)
                        continue;
                /* A dangling link is no library. */
                if (e[i].type != DT_REG) {
                        _cleanup_free_ char *rel_file = path_join(rel, name);

                        if (!detect_is_file(prefix_fd, rel_file))
                                continue;
                }
                strv_add(&ld.files, name);
                /* The soname file has the fewest parts, the real file the most. */
                if (!ld.soname.count || v.count < ld.soname.count) {
                        ld.soname = v;
                        free(ld.soname_file);
                        ld.soname_file = xstrdup(name);
                }
                if (v.count >= 3 && (!ld.full.count || version_compare(&v, &ld.full) > 0))
                        ld.full = v;
        }
        walk_entries_free(owned);
        if (ld.files.len == 0) {
                libdir_release(&ld);
                return -ENOENT;
        }
        ld.rel = xstrdup(rel);
        *ret = ld;
        return 0;
}

/* One candidate of find_lib_dir: rel, and the triple of targets/TRIPLE/lib
 * or NULL. */
static void find_lib_dir_try(int prefix_fd, const char *rel, const char *triple, const char *stem,
                             struct libdir *best, bool *best_real, int *r, int *too_big)
{
        struct libdir ld;
        bool real;
        int k = libdir_in(prefix_fd, rel, stem, &ld);

        if (k == -E2BIG)
                *too_big = k;
        if (k < 0)
                return;
        real = !detect_is_symlink(prefix_fd, rel);
        if (best->rel && (*best_real || !real)) {
                libdir_release(&ld);
                return;
        }
        libdir_release(best);
        *best = ld;
        *best_real = real;
        if (triple)
                best->triple = xstrdup(triple);
        *r = 0;
}

int find_lib_dir(int prefix_fd, const char *stem, struct libdir *ret)
{
        struct strv triples = { 0 };
        struct libdir best = { 0 };
        bool best_real = false;
        int r = -ENOENT, too_big = 0;

        /* Candidates in order of preference when equally real:
         * targets/TRIPLE/lib, lib64, lib. */
        if (dir_list(prefix_fd, "targets", &triples) >= 0)
                for (size_t i = 0; i < triples.len; i++) {
                        _cleanup_free_ char *rel = xasprintf("targets/%s/lib", triples.items[i]);

                        find_lib_dir_try(prefix_fd, rel, triples.items[i], stem, &best, &best_real, &r, &too_big);
                }
        find_lib_dir_try(prefix_fd, "lib64", NULL, stem, &best, &best_real, &r, &too_big);
        find_lib_dir_try(prefix_fd, "lib", NULL, stem, &best, &best_real, &r, &too_big);
        strv_release(&triples);
        if (r == 0)
                *ret = best;
        return r == 0 ? 0 : too_big ? too_big : r;
}

void libdir_warn_too_big(const struct walk_dir *dir)
{
        walk_dir_warn(dir,
                      "cannot look for libraries in '%s': a library directory there holds more "
                      "than %d entries (no install's holds that many), skipping",
                      dir->path, WALK_MAX_ENTRIES);
}

bool libdir_has(const struct libdir *ld, int prefix_fd, const char *stem)
{
        struct libdir other;

        if (!ld->rel || libdir_in(prefix_fd, ld->rel, stem, &other) < 0)
                return false;
        libdir_release(&other);
        return true;
}

int check_library(struct install *in, int prefix_fd, const char *rel, const char *display,
                  unsigned expect_machine)
{
        struct elf_info info = { 0 };
        struct diag d = DIAG_INIT;
        const char *arch;
        int r;

        r = elf_read_info(prefix_fd, rel, &info, &d);
        if (r == -ENOEXEC) {
                install_add_problem(in, "not-elf", "'%s' is not an ELF shared library", display);
                diag_release(&d);
                return r;
        }
        if (r == -ESTALE) {
                install_add_problem(in, "file-changed", "'%s' changed while it was read", display);
                diag_release(&d);
                return r;
        }
        if (r < 0) {
                install_add_problem(in, "bad-library", "cannot read '%s': %s", display,
                                    d.message ? d.message : strerror(-r));
                diag_release(&d);
                return r;
        }
        if (info.elf_class != 64) {
                install_add_problem(in, "elf-class", "'%s' is a %u-bit ELF file", display,
                                    info.elf_class);
                elf_info_release(&info);
                return -ENOEXEC;
        }
        arch = elf_machine_to_arch(info.machine);
        if (expect_machine && info.machine != expect_machine)
                install_add_problem(in, "arch-mismatch",
                                    "'%s' is built for %s, not for the %s its directory names",
                                    display, arch ? arch : "an unknown machine",
                                    elf_machine_to_arch(expect_machine));
        else if (in->arch && arch && !streq(in->arch, arch))
                install_add_problem(in, "arch-mismatch", "'%s' is built for %s, not %s", display,
                                    arch, in->arch);
        if (!in->arch && arch)
                in->arch = xstrdup(arch);
        elf_info_release(&info);
        return 0;
}

static bool is_multiarch_triple(const char *name)
{
        static const char *const triples[] = {
                "x86_64-linux-gnu", "aarch64-linux-gnu", "powerpc64le-linux-gnu", NULL,
        };

        for (const char *const *t = triples; *t; t++)
                if (streq(*t, name))
                        return true;
        return false;
}

char *system_prefix_of(const char *realpath, const char **ret_triple)
{
        const char *base = path_basename(realpath);
        _cleanup_free_ char *parent = NULL;

        /* Asked of every directory a library is looked for in: the name
         * decides before a parent is made. */
        if (!streq(base, "lib64") && !is_multiarch_triple(base))
                return NULL;
        parent = path_dirname(realpath);

        /* …/usr/lib/<triple> (Debian, Ubuntu) */
        if (is_multiarch_triple(base) && streq(path_basename(parent), "lib")) {
                _cleanup_free_ char *usr = path_dirname(parent);
                if (streq(path_basename(usr), "usr")) {
                        if (ret_triple)
                                *ret_triple = base;
                        return TAKE_PTR(usr);
                }
        }
        /* …/usr/lib64 (RPM distributions) */
        if (streq(base, "lib64") && streq(path_basename(parent), "usr")) {
                if (ret_triple)
                        *ret_triple = NULL;
                return TAKE_PTR(parent);
        }
        return NULL;
}

char *system_library_tree_of(const char *realpath, const char *stem, unsigned long *ret_major)
{
        _cleanup_free_ char *named = NULL, *multiarch = NULL;
        struct version v;
        char *usr;

        /* A one-number name (the major) first: asked of every directory a
         * library is looked for in, most answer before a parent is made. */
        if (version_parse(path_basename(realpath), &v) < 0 || v.count != 1)
                return NULL;
        named = path_dirname(realpath);
        /* Named after the library itself, so that no other directory of
         * …/usr/lib/<triple> is taken for one. */
        if (!streq(path_basename(named), stem))
                return NULL;
        multiarch = path_dirname(named);
        usr = system_prefix_of(multiarch, NULL);
        if (usr && ret_major)
                *ret_major = v.n[0];
        return usr;
}

char *wheel_site_packages_of(const char *realpath)
{
        _cleanup_free_ char *nvidia = path_dirname(realpath);
        char *site;

        if (!streq(path_basename(nvidia), "nvidia"))
                return NULL;
        site = path_dirname(nvidia);
        if (streq(path_basename(site), "site-packages") ||
            streq(path_basename(site), "dist-packages"))
                return site;
        free(site);
        return NULL;
}

static void dist_infos_read_names(int dirfd, const char *rel, const struct strv *list,
                                  struct dist_infos *ret);

static void dist_infos_copy(const struct dist_infos *from, struct dist_infos *to)
{
        *to = (struct dist_infos){ 0 };
        for (size_t i = 0; i < from->names.len; i++) {
                strv_add(&to->names, from->names.items[i]);
                strv_add(&to->versions, from->versions.items[i]);
        }
}

void dist_infos_read(int dirfd, const char *rel, struct dist_infos *ret)
{
        _cleanup_(cache_keybuf_release) struct cache_keybuf kb = { 0 };
        char *key = cache_key_in(dirfd, rel, &kb);
        struct strv names = { 0 };

        if (key && cache->dist_key && streq(cache->dist_key, key)) {
                dist_infos_copy(&cache->dist, ret);
                return;
        }
        *ret = (struct dist_infos){ 0 };
        if (dir_list(dirfd, rel, &names) >= 0)
                dist_infos_read_names(dirfd, rel, &names, ret);
        strv_release(&names);
        if (key) {
                free(cache->dist_key);
                dist_infos_release(&cache->dist);
                cache->dist_key = xstrdup(key);
                dist_infos_copy(ret, &cache->dist);
        }
}

static void dist_infos_read_names(int dirfd, const char *rel, const struct strv *list,
                                  struct dist_infos *ret)
{
        const struct strv names = *list;

        for (size_t i = 0; i < names.len; i++) {
                _cleanup_free_ char *meta = NULL, *name = NULL, *version = NULL;
                struct strbuf sb = STRBUF_INIT;

                if (!endswith(names.items[i], ".dist-info") || !startswith(names.items[i], "nvidia"))
                        continue;
                meta = xasprintf("%s/%s/METADATA", rel, names.items[i]);
                if (read_head_at(dirfd, NULL, meta, 64 * 1024, NULL, &sb) >= 0 &&
                    metadata_parse(sb.buf, sb.len, &name, &version) >= 0) {
                        strv_push(&ret->names, wheel_name_normalise(name));
                        strv_push(&ret->versions, TAKE_PTR(version));
                }
                strbuf_release(&sb);
        }
}

void dist_infos_release(struct dist_infos *di)
{
        strv_release(&di->names);
        strv_release(&di->versions);
}

const char *dist_infos_find(const struct dist_infos *di, const char *prefix, const char **ret_name)
{
        for (size_t i = 0; i < di->names.len; i++)
                if (startswith(di->names.items[i], prefix)) {
                        if (ret_name)
                                *ret_name = di->names.items[i];
                        return di->versions.items[i];
                }
        return NULL;
}

void dist_infos_read_path(const char *path, struct dist_infos *ret)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        *ret = (struct dist_infos){ 0 };
        if (fd >= 0)
                dist_infos_read(fd, ".", ret);
}

int dist_infos_name_hint(const struct dist_infos *di, const char *dist_prefix,
                         const struct component *c, struct name_hint *ret)
{
        const char *name = NULL;
        const char *version = dist_infos_find(di, dist_prefix, &name);

        if (!version)
                return -ENOENT;
        return dist_name_hint(c, name, version, ret);
}

int dist_name_hint(const struct component *c, const char *name, const char *version, struct name_hint *ret)
{
        _cleanup_free_ char *dirname = NULL;

        /* The dist-info directory name: underscores in the name part. */
        dirname = xasprintf("%s-%s.dist-info", name, version);
        for (size_t i = 0; i < strlen(name); i++)
                if (dirname[i] == '-')
                        dirname[i] = '_';
        return name_hint_of(c, dirname, NULL, ret);
}

int conda_cuda_version(int dirfd, struct version *ret)
{
        struct strv names = { 0 };
        int r = -ENOENT;

        if (dir_list(dirfd, "conda-meta", &names) < 0)
                return -ENOENT;
        for (size_t i = 0; i < names.len && r < 0; i++) {
                const char *p = names.items[i];
                struct version v;

                if (startswith(p, "cuda-version-") && endswith(p, ".json") &&
                    name_version(p + strlen("cuda-version-"), &v, NULL)) {
                        *ret = v;
                        r = 0;
                }
        }
        strv_release(&names);
        return r;
}

const char *const detect_conda_keep[] = { "envs", "lib", NULL };

bool dir_holds_cuda(const struct walk_dir *dir, const struct libdir *ld)
{
        return walk_dir_find(dir, "version.json") || walk_dir_find(dir, "version.txt") ||
               detect_is_file(dir->fd, "bin/nvcc") || libdir_has(ld, dir->fd, "libcudart");
}

static bool has_any(int fd, const char *dir, const char *const *names)
{
        for (; *names; names++) {
                _cleanup_free_ char *rel = path_join(dir, *names);
                if (detect_is_file(fd, rel))
                        return true;
        }
        return false;
}

/* The layout of a cuDNN or NCCL install in a (non-system) directory. */
static enum layout library_layout(const struct walk_dir *dir, const struct libdir *ld,
                                  const char *site)
{
        if (site)
                return LAYOUT_WHEEL;
        if (walk_dir_find(dir, "conda-meta"))
                return LAYOUT_CONDA;
        if (dir_holds_cuda(dir, ld))
                return LAYOUT_MERGED;
        return LAYOUT_TARBALL;
}

int library_find(const struct walk_dir *dir, const char *stem, const char *const *headers,
                 struct library_find *ret)
{
        struct library_find f = { .usr_fd = -1, .include_fd = -1 };
        const char *triple = NULL;

        f.usr = system_prefix_of(dir->realpath, &triple);
        if (!f.usr)
                f.usr = system_library_tree_of(dir->realpath, stem, &f.tree_major);
        if (f.usr) {
                /* A per-library tree's headers are in its own include tree. */
                _cleanup_free_ char *tinc = f.tree_major ? xasprintf("include/%s/%lu", stem, f.tree_major)
                                            : triple    ? xasprintf("include/%s", triple)
                                                        : NULL;

                int r = libdir_in(dir->fd, ".", stem, &f.ld);

                if (r < 0) {
                        if (r == -E2BIG)
                                libdir_warn_too_big(dir);
                        library_find_release(&f);
                        return -ENOENT;
                }
                f.layout = LAYOUT_SYSTEM;
                f.usr_fd = open(f.usr, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                f.include_fd = f.usr_fd;
                if (f.usr_fd >= 0 && !f.tree_major && has_any(f.usr_fd, "include", headers))
                        f.include_rel = xstrdup("include");
                else if (f.usr_fd >= 0 && tinc && has_any(f.usr_fd, tinc, headers))
                        f.include_rel = TAKE_PTR(tinc);
                *ret = f;
                return 0;
        }
        /* No include/ is a runtime install (a wheel of lib/ alone). */
        if (!(walk_dir_find(dir, "lib") || walk_dir_find(dir, "lib64") || walk_dir_find(dir, "targets")))
                return -ENOENT;
        {
                int r = find_lib_dir(dir->fd, stem, &f.ld);

                if (r == -E2BIG)
                        libdir_warn_too_big(dir);
                if (r < 0)
                        return -ENOENT;
        }
        f.include_fd = dir->fd;
        /* In a CUDA prefix, the real directory behind include/. */
        if (f.ld.triple) {
                _cleanup_free_ char *t = xasprintf("targets/%s/include", f.ld.triple);
                if (!detect_is_symlink(dir->fd, t) && has_any(dir->fd, t, headers))
                        f.include_rel = TAKE_PTR(t);
        }
        if (!f.include_rel && walk_dir_find(dir, "include") && has_any(dir->fd, "include", headers))
                f.include_rel = xstrdup("include");
        f.site = wheel_site_packages_of(dir->realpath);
        f.layout = library_layout(dir, &f.ld, f.site);
        *ret = f;
        return 0;
}

/* The N of a path component that is all digits (1 to 3 of them). */
static bool major_component(const char *s, unsigned long *ret)
{
        size_t n = strspn(s, "0123456789");

        if (n == 0 || n > 3 || s[n] || (n > 1 && s[0] == '0'))
                return false;
        *ret = strtoul(s, NULL, 10);
        return true;
}

unsigned long path_cuda_major(const char *path, const char *versioned)
{
        _cleanup_free_ char *copy = xstrdup(path);
        const char *prev = NULL;
        unsigned long major = 0;
        char *next;

        for (char *c = copy; c && !major; prev = c, c = next) {
                struct version v;
                unsigned long n;

                next = strchr(c, '/');
                if (next)
                        *next++ = '\0';
                for (char *q = c; *q; q++)
                        *q = ascii_tolower(*q);
                if (versioned && prev && ascii_strcaseeq(prev, versioned) && major_component(c, &n))
                        major = n;
                /* Spack's cusparselt-0.8.1-cuda120: 12.0 with the dot dropped. */
                else if (name_cuda_marker(c, &v))
                        major = v.count == 1 && v.n[0] >= 100 ? v.n[0] / 10 : v.n[0];
        }
        return major;
}

void library_find_release(struct library_find *f)
{
        free(f->usr);
        if (f->usr_fd >= 0)
                close(f->usr_fd);
        free(f->site);
        libdir_release(&f->ld);
        free(f->include_rel);
        free(f->wheel_name);
        free(f->wheel_version);
        *f = (struct library_find){ .usr_fd = -1, .include_fd = -1 };
}

/* Whose a wheel folder's library and header are, by the RECORDs of the
 * component's wheels in site-packages (wheel-record.h). */
static void wheel_owner(const struct component *c, const struct walk_dir *dir, struct library_find *f,
                        const char *const *headers)
{
        _cleanup_free_ char *prefix = xasprintf("%s-", c->wheel);
        _cleanup_free_ char *folder = NULL, *lib = NULL;
        struct wheel_dists d = { 0 };
        const struct wheel_dist *owner;
        struct stat st;
        size_t n;

        n = strlen(f->site);
        if (!startswith(dir->realpath, f->site) || dir->realpath[n] != '/')
                return;
        folder = xstrdup(dir->realpath + n + 1);
        lib = xasprintf("%s/%s/%s", folder, f->ld.rel, f->ld.soname_file);
        {
                _cleanup_free_ char *rel = path_join(f->ld.rel, f->ld.soname_file);

                if (fstatat(dir->fd, rel, &st, 0) < 0)
                        return;
        }
        wheel_dists_read(dir, f->site, prefix, &d);
        owner = wheel_dists_owner(&d, lib, st.st_size);
        for (size_t i = 0; i < d.len; i++) {
                long long size;

                if (&d.items[i] != owner && wheel_dist_lists(&d.items[i], lib, &size))
                        walk_dir_verbose(dir, "'%s/%s' is not %s %s's (its dist-info '%s' gives it %lld bytes, "
                                              "it has %lld): another wheel replaced it, and %s is left",
                                         f->site, lib, d.items[i].name, d.items[i].version, d.items[i].dist_info, size,
                                         (long long)st.st_size, d.items[i].name);
        }
        if (!owner) {
                wheel_dists_release(&d);
                return;
        }
        f->wheel_name = xstrdup(owner->name);
        f->wheel_version = xstrdup(owner->version);
        f->wheel_headerless = true;
        for (const char *const *h = headers; *h; h++) {
                _cleanup_free_ char *inc = xasprintf("%s/include/%s", folder, *h);

                if (wheel_dist_lists(owner, inc, NULL))
                        f->wheel_headerless = false;
        }
        /* A header there that another wheel lists and the owner does not
         * is that wheel's, left behind: a build with it would pair its
         * version with this library. */
        for (const char *const *h = headers; f->include_rel && *h; h++) {
                _cleanup_free_ char *inc = xasprintf("%s/%s/%s", folder, f->include_rel, *h);

                if (wheel_dist_lists(owner, inc, NULL))
                        continue;
                for (size_t i = 0; i < d.len && f->include_rel; i++)
                        if (&d.items[i] != owner && wheel_dist_lists(&d.items[i], inc, NULL)) {
                                walk_dir_verbose(dir, "'%s/%s/%s' is %s %s's, not %s %s's whose %s is there: "
                                                      "the install has no header",
                                                 dir->path, f->include_rel, *h, d.items[i].name,
                                                 d.items[i].version, owner->name, owner->version,
                                                 f->ld.soname_file);
                                free(f->include_rel);
                                f->include_rel = NULL;
                        }
        }
        wheel_dists_release(&d);
}

struct install *library_install_new(const struct component *c, const struct walk_dir *dir,
                                    struct library_find *f, const char *const *headers)
{
        struct install *in;
        _cleanup_free_ char *rel = path_join(f->ld.rel, f->ld.soname_file);
        _cleanup_free_ char *display = NULL;

        if (f->site && c->wheel)
                wheel_owner(c, dir, f, headers);
        in = install_new(c, f->layout);

        if (f->usr) {
                in->prefix = xstrdup(f->usr);
                /* Debian's trees for CUDA 12 and 13 are two installs. */
                in->realpath = xstrdup(f->tree_major ? dir->realpath : f->usr);
                in->lib_dir = xstrdup(dir->path);
        } else {
                install_set_location(in, dir);
                in->lib_dir = path_join(dir->path, f->ld.rel);
        }
        if (!f->include_rel)
                in->kind = INSTALL_RUNTIME;
        if (f->include_rel)
                in->include_dir = path_join(f->usr ? f->usr : dir->path, f->include_rel);
        else if (f->wheel_name && f->wheel_headerless)
                /* What the wheel is: NVIDIA ships it without headers. */
                install_set_evidence(in, "kind", "dist-info");
        else if (f->tree_major)
                install_add_problem(in, "missing-headers", "no %s in '%s/include/%s/%lu'", headers[0],
                                    in->prefix, c->library, f->tree_major);
        else
                install_add_problem(in, "missing-headers", "no %s in '%s/include'", headers[0],
                                    in->prefix);
        display = path_join(in->lib_dir, f->ld.soname_file);
        check_library(in, dir->fd, rel, display,
                      f->ld.triple ? elf_machine_from_triple(f->ld.triple) : 0);
        return in;
}

void library_verdict(struct walk_verdict *verdict, const char *usr, enum layout l)
{
        if (usr)
                return;
        verdict->prune = true;
        if (l == LAYOUT_CONDA)
                verdict->keep = detect_conda_keep;
}

void install_set_location(struct install *in, const struct walk_dir *dir)
{
        free(in->prefix);
        free(in->realpath);
        in->prefix = xstrdup(dir->path);
        in->realpath = xstrdup(dir->realpath);
}

void version_votes_settle(struct install *in, const struct version_vote *votes, size_t n,
                          unsigned parts)
{
        const struct version_vote *ref = NULL;

        /* The reference is the first reading that has all the parts; a
         * reading with fewer (a soname major) agrees when those agree. */
        for (size_t i = 0; i < n && !ref; i++)
                if (votes[i].value.count >= parts)
                        ref = &votes[i];
        for (size_t i = 0; i < n && !ref; i++)
                if (votes[i].value.count)
                        ref = &votes[i];
        if (!ref)
                return;
        for (size_t i = 0; i < n; i++) {
                unsigned common;
                struct version a, b;

                if (&votes[i] == ref || !votes[i].value.count)
                        continue;
                common = votes[i].value.count < ref->value.count ? votes[i].value.count
                                                                 : ref->value.count;
                if (common > parts)
                        common = parts;
                a = version_truncate(&ref->value, common);
                b = version_truncate(&votes[i].value, common);
                if (version_compare(&a, &b) != 0) {
                        _cleanup_free_ char *x = version_to_string(&ref->value, parts);
                        _cleanup_free_ char *y = version_to_string(&votes[i].value, parts);
                        install_add_problem(in, "version-mismatch", "%s says %s but %s says %s",
                                            ref->source, x, votes[i].source, y);
                }
        }
        if (!in->version.count && ref->value.count >= parts)
                in->version = version_truncate(&ref->value, parts);
}
