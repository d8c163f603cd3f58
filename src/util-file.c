/* util-file.c: check the type of what a path names before opening it. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>

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

int file_open_regular_at(int dirfd, const char *path, const char *display, int *ret_fd,
                         struct stat *ret_st, struct diag *d)
{
        _cleanup_close_ int pfd = -1, fd = -1;
        char proc[sizeof("/proc/self/fd/") + 3 * sizeof(int)];
        struct stat st, st2;
        int r;

        if (!display)
                display = path;
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
                        ret->len = start;
                        ret->buf[start] = '\0';
                        return diag_errorf(d, r, "cannot read '%s': %s", display, strerror(-r));
                }
                if (n == 0)
                        break;
                ret->len += (size_t)n;
        }
        if (!head && ret->len - start > max) {
                ret->len = start;
                ret->buf[start] = '\0';
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
