/* write-atomic.c: the files below the output directory, each reached
 * through directory descriptors opened with O_NOFOLLOW (so a symlink
 * planted in the tree cannot redirect a write outside it), read to compare
 * with the new content (the writing itself: util-write.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "strbuf.h"
#include "util-write.h"
#include "util.h"
#include "write-atomic.h"
#include "banned.h"

/* A file at a generated path is read to compare it with the new content;
 * cudamod writes nothing over 1 MiB (render.c), so a bigger one is not
 * what it wrote. */
#define CURRENT_MAX ((size_t)16 * 1024 * 1024)

/* The directory reldir ("" for the output directory itself) below outfd,
 * each component opened with O_NOFOLLOW and, with create_mode, made with
 * that mode (fchmod: not the umask's) when missing. -ENOENT without a
 * diag when a component is missing and create_mode is 0. */
int open_dir(int outfd, const char *outdir, const char *reldir, mode_t create_mode, int *ret_fd,
             struct diag *d)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *dir = xstrdup(reldir);
        char *c = dir;

        fd = fcntl(outfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return diag_errorf(d, -errno, "cannot open '%s': %s", outdir, strerror(errno));
        while (*c) {
                char *e = strchrnul(c, '/');
                bool last = *e == '\0';
                bool create = create_mode != 0, made = false;
                int next, err;
                struct stat st;

                *e = '\0';
                next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0 && errno == ENOENT && create) {
                        if (mkdirat(fd, c, create_mode) == 0)
                                made = true;
                        else if (errno != EEXIST)
                                return diag_set(d, -errno, outdir, 0, 0, "cannot create directory '%s': %s",
                                                dir, strerror(errno));
                        /* Make the new entry durable before anything lands in it. */
                        err = sync_dir(fd);
                        if (err < 0) {
                                _cleanup_free_ char *parent = xstrndup(dir, c > dir ? (size_t)(c - dir - 1) : 0);
                                return diag_set(d, err, outdir, 0, 0,
                                                "cannot sync directory '%s' after creating '%s' in it: %s",
                                                *parent ? parent : ".", dir, strerror(-err));
                        }
                        next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        /* The umask took bits away: the mode is the site's. */
                        if (next >= 0 && made && fchmod(next, create_mode) < 0) {
                                err = -errno;
                                close(next);
                                return diag_set(d, err, outdir, 0, 0, "cannot set the mode of directory '%s': %s",
                                                dir, strerror(-err));
                        }
                }
                if (next < 0) {
                        err = -errno;
                        if (err == -ENOENT && !create)
                                return -ENOENT;
                        if ((err == -ELOOP || err == -ENOTDIR) && fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                                if (S_ISLNK(st.st_mode))
                                        return diag_set(d, -ELOOP, outdir, 0, 0,
                                                        "'%s' is a symlink; refusing to write through it", dir);
                                return diag_set(d, -ENOTDIR, outdir, 0, 0,
                                                "'%s' exists and is not a directory", dir);
                        }
                        return diag_set(d, err, outdir, 0, 0, "cannot open directory '%s': %s", dir,
                                        strerror(-err));
                }
                close(fd);
                fd = next;
                if (last)
                        break;
                *e = '/';
                c = e + 1;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* The directory holding rel; see open_dir. */
int open_parent(int outfd, const char *outdir, const char *rel, mode_t create_mode, int *ret_fd,
                struct diag *d)
{
        const char *slash = strrchr(rel, '/');
        _cleanup_free_ char *dir = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup("");

        return open_dir(outfd, outdir, dir, create_mode, ret_fd, d);
}

void parent_cache_release(struct parent_cache *c)
{
        free(c->dir);
        if (c->fd >= 0)
                close(c->fd);
        *c = (struct parent_cache)PARENT_CACHE_INIT;
}

size_t parent_len(const char *rel)
{
        const char *slash = strrchr(rel, '/');

        return slash ? (size_t)(slash - rel) : 0;
}

bool parent_cached(const struct parent_cache *c, const char *rel)
{
        size_t n = parent_len(rel);

        return c->dir && strlen(c->dir) == n && strncmp(c->dir, rel, n) == 0;
}

/* The parent directory of rel (borrowed from the cache), or a negative
 * errno with d set. */
int parent_get(struct parent_cache *c, int outfd, const char *outdir, const char *rel,
               mode_t create_mode, struct diag *d)
{
        size_t n = parent_len(rel);
        int fd, r;

        if (parent_cached(c, rel))
                return c->fd;
        parent_cache_release(c);
        r = open_parent(outfd, outdir, rel, create_mode, &fd, d);
        if (r < 0)
                return r;
        c->dir = xstrndup(rel, n);
        c->fd = fd;
        return fd;
}

int read_fd_upto(int fd, struct strbuf *sb, size_t max)
{
        for (;;) {
                ssize_t n;

                strbuf_grow(sb, 65536);
                n = read(fd, sb->buf + sb->len, 65536);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return 0;
                strbuf_setlen(sb, sb->len + (size_t)n);
                if (sb->len > max)
                        return -EFBIG;
        }
}

/* What is at rel now, without following a symlink anywhere below outfd. */
int read_current(int outfd, const char *outdir, const char *rel, enum current *ret,
                 struct strbuf *content, struct diag *d)
{
        _cleanup_close_ int dfd = -1, fd = -1;
        const char *name = path_basename(rel);
        struct stat st;
        int r;

        r = open_parent(outfd, outdir, rel, 0, &dfd, d);
        if (r == -ENOENT) {
                *ret = CURRENT_ABSENT;
                return 0;
        }
        if (r < 0)
                return r;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT) {
                        *ret = CURRENT_ABSENT;
                        return 0;
                }
                return diag_set(d, -errno, outdir, 0, 0, "cannot stat '%s': %s", rel, strerror(errno));
        }
        /* Opening a device or a FIFO could have effects: only look into
         * regular files. */
        if (!S_ISREG(st.st_mode)) {
                *ret = CURRENT_OTHER;
                return 0;
        }
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT) {
                        *ret = CURRENT_ABSENT;
                        return 0;
                }
                if (errno == ELOOP) {
                        *ret = CURRENT_OTHER;
                        return 0;
                }
                return diag_set(d, -errno, outdir, 0, 0, "cannot read '%s': %s", rel, strerror(errno));
        }
        if (fstat(fd, &st) < 0)
                return diag_set(d, -errno, outdir, 0, 0, "cannot stat '%s': %s", rel, strerror(errno));
        if (!S_ISREG(st.st_mode)) {
                *ret = CURRENT_OTHER;
                return 0;
        }
        /* Refused before reading: a huge file costs nothing. */
        if ((uint64_t)st.st_size > CURRENT_MAX)
                return diag_set(d, -EFBIG, outdir, 0, 0,
                                "'%s' is %jd bytes, larger than any modulefile cudamod writes; move it away",
                                rel, (intmax_t)st.st_size);
        r = read_fd_upto(fd, content, CURRENT_MAX);
        if (r == -EFBIG)
                return diag_set(d, r, outdir, 0, 0, "'%s' is too large (more than %zu bytes)", rel,
                                CURRENT_MAX);
        if (r < 0)
                return diag_set(d, r, outdir, 0, 0, "cannot read '%s': %s", rel, strerror(-r));
        *ret = CURRENT_FILE;
        return 0;
}

