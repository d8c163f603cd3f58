/* util-file.c: check the type of what a path names before opening it. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util-file.h"
#include "banned.h"

const char *file_mode_describe(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFREG:
                return "a regular file";
        case S_IFDIR:
                return "a directory";
        case S_IFCHR:
                return "a character device";
        case S_IFBLK:
                return "a block device";
        case S_IFIFO:
                return "a FIFO";
        case S_IFSOCK:
                return "a socket";
        case S_IFLNK:
                return "a symbolic link";
        default:
                return "not a file";
        }
}

static bool plain_open_ok;
static _Thread_local file_listed_regular_fn *listed_regular;

void file_set_listed_regular(file_listed_regular_fn *fn)
{
        listed_regular = fn;
}

static void plain_open_init(void)
{
        char c = 0;
        int fd = open("/proc/sys/fs/protected_hardlinks", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        plain_open_ok = read(fd, &c, 1) == 1 && c == '1';
        close(fd);
}

/* The one-open path, for a name the caller's listings say is a regular
 * file (not a link, not a device, not a FIFO), itself or at the end of
 * links within its directory: the oracle gives that directory's
 * descriptor and the file's name in it, one component, so with
 * O_NOFOLLOW the open reaches exactly that entry of the directory the
 * descriptor holds. For that object to be a device after all, the entry
 * must have been replaced since it was listed: by a device node, which
 * only root can make (mknod needs CAP_MKNOD), or by a hard link, which
 * fs.protected_hardlinks=1 grants only to a user who owns the node or may
 * read and write it (so may open it anyway). Where that sysctl is not 1,
 * every open takes the O_PATH path. The type is checked after the open,
 * and a FIFO does not block under O_NONBLOCK. (Not openat2 with
 * RESOLVE_BENEATH: valgrind 3.19 does not know it.)
 * 1: *ret_fd is open; 0: take the O_PATH path (no oracle, or it does not
 * say, a symlink now, not a regular file after all); negative: the errno
 * of a name that is gone or cannot be opened. */
static int plain_open(int dirfd, const char *path, int *ret_fd, struct stat *ret_st)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        _cleanup_close_ int fd = -1;
        const char *name = NULL;
        int at;

        if (!listed_regular || path[0] == '/')
                return 0;
        (void)pthread_once(&once, plain_open_init);
        if (!plain_open_ok)
                return 0;
        at = listed_regular(dirfd, path, &name);
        if (at < 0 || !name || !*name || strchr(name, '/'))
                return 0;
        fd = openat(at, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT || errno == ENOTDIR || errno == EACCES ? -errno : 0;
        if (fstat(fd, ret_st) < 0)
                return -errno;
        if (!S_ISREG(ret_st->st_mode))
                return 0; /* the O_PATH path says what it is */
        *ret_fd = TAKE_FD(fd);
        return 1;
}

int file_open_regular_at(int dirfd, const char *path, const char *display, int *ret_fd,
                         struct stat *ret_st, struct diag *d)
{
        _cleanup_close_ int pfd = -1, fd = -1;
        char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];
        struct stat st, st2;
        int r;

        if (!display)
                display = path;
        r = plain_open(dirfd, path, &fd, &st);
        if (r > 0) {
                if (ret_st)
                        *ret_st = st;
                *ret_fd = TAKE_FD(fd);
                return 0;
        }
        if (r < 0)
                return diag_errorf(d, r, "cannot open '%s': %s", display, strerror(-r));
        /* O_PATH resolves the name and pins the object without opening it:
         * no driver's open runs, no FIFO blocks. */
        pfd = openat(dirfd, path, O_PATH | O_CLOEXEC);
        if (pfd < 0) {
                r = -errno;
                return diag_errorf(d, r, "cannot open '%s': %s", display, strerror(-r));
        }
        if (fstat(pfd, &st) < 0) {
                r = -errno;
                return diag_errorf(d, r, "cannot stat '%s': %s", display, strerror(-r));
        }
        if (S_ISDIR(st.st_mode))
                return diag_errorf(d, -EISDIR, "'%s' is a directory, not a regular file", display);
        if (!S_ISREG(st.st_mode))
                return diag_errorf(d, -EINVAL, "'%s' is %s, not a regular file, not opened",
                                   display, file_mode_describe(st.st_mode));

        /* Reopen the object checked, not whatever the name means now. */
        (void)snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
        fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0) {
                /* /proc/self/fd/N of an O_PATH descriptor opens the object it
                 * pins, never another: what was checked is what is open. */
                if (ret_st)
                        *ret_st = st;
                *ret_fd = TAKE_FD(fd);
                return 0;
        }
        if (errno == ENOENT)
                /* No /proc: the name again; the fstat below still refuses a
                 * different object, after the fact. */
                fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                return diag_errorf(d, r, "cannot open '%s': %s", display, strerror(-r));
        }
        if (fstat(fd, &st2) < 0) {
                r = -errno;
                return diag_errorf(d, r, "cannot stat '%s': %s", display, strerror(-r));
        }
        if (st2.st_dev != st.st_dev || st2.st_ino != st.st_ino || !S_ISREG(st2.st_mode))
                return diag_errorf(d, -ESTALE, "'%s' was replaced while it was opened", display);

        if (ret_st)
                *ret_st = st2;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int file_read_regular_at(int dirfd, const char *path, const char *display, size_t max,
                         bool head, struct strbuf *ret, struct diag *d)
{
        _cleanup_close_ int fd = -1;
        size_t start = ret->len, limit, want;
        struct stat st;
        int r;

        if (!display)
                display = path;
        r = file_open_regular_at(dirfd, path, display, &fd, &st, d);
        if (r < 0)
                return r;
        /* The size says how much to expect; one byte more than max tells a
         * file that grew past max from one that is exactly max. */
        limit = head ? max : max + 1;
        want = (uint64_t)st.st_size < (uint64_t)limit ? (size_t)st.st_size : limit;
        strbuf_grow(ret, want);
        while (ret->len - start < limit) {
                size_t left = limit - (ret->len - start), room = ret->alloc - ret->len - 1;
                ssize_t n;

                if (room == 0) {
                        strbuf_grow(ret, left < 65536 ? left : 65536);
                        continue;
                }
                n = read(fd, ret->buf + ret->len, room < left ? room : left);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        strbuf_setlen(ret, start);
                        return diag_errorf(d, r, "cannot read '%s': %s", display, strerror(-r));
                }
                if (n == 0)
                        break;
                strbuf_setlen(ret, ret->len + (size_t)n);
                /* All the bytes the stat promised, and fewer than max: no
                 * read just to see the end (a file of st_size 0, as in
                 * /proc, is read to its end). */
                if (st.st_size > 0 && (uint64_t)st.st_size < (uint64_t)limit &&
                    ret->len - start == (size_t)st.st_size)
                        break;
        }
        if (!head && ret->len - start > max) {
                strbuf_setlen(ret, start);
                return diag_errorf(d, -EFBIG, "'%s' is larger than %zu bytes", display, max);
        }
        ret->buf[ret->len] = '\0';
        return 0;
}

bool file_changed(int fd, const struct stat *st)
{
        struct stat now;

        if (fstat(fd, &now) < 0)
                return true;
        return now.st_size != st->st_size || now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
               now.st_mtim.tv_nsec != st->st_mtim.tv_nsec ||
               now.st_ctim.tv_sec != st->st_ctim.tv_sec || now.st_ctim.tv_nsec != st->st_ctim.tv_nsec;
}
