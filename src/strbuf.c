/* strbuf.c: growable, always-terminated byte strings. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "strbuf.h"
#include "banned.h"

char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb)
{
        *sb = (struct strbuf)STRBUF_INIT;
}

void strbuf_release(struct strbuf *sb)
{
        if (sb->alloc)
                free(sb->buf);
        strbuf_init(sb);
}

char *strbuf_detach(struct strbuf *sb)
{
        char *r;

        if (!sb->alloc)
                return xstrdup("");
        r = sb->buf;
        strbuf_init(sb);
        return r;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
        size_t need;

        if (extra > SIZE_MAX - sb->len - 1)
                die_oom();
        need = sb->len + extra + 1;
        if (need <= sb->alloc)
                return;
        if (!sb->alloc)
                sb->buf = NULL;
        while (sb->alloc < need)
                sb->alloc = sb->alloc ? sb->alloc + sb->alloc / 2 + 16 : 64;
        sb->buf = xrealloc(sb->buf, sb->alloc);
        if (sb->len == 0)
                sb->buf[0] = '\0';
}

void strbuf_reset(struct strbuf *sb)
{
        sb->len = 0;
        if (sb->alloc)
                sb->buf[0] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
        if (len == 0)
                return;
        strbuf_grow(sb, len);
        memcpy(sb->buf + sb->len, data, len);
        sb->len += len;
        sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
        strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
        strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
        char small[256];
        va_list cp;
        int n;

        va_copy(cp, ap);
        n = vsnprintf(small, sizeof(small), fmt, cp);
        va_end(cp);
        if (n < 0)
                return;
        if ((size_t)n < sizeof(small)) {
                strbuf_add(sb, small, (size_t)n);
                return;
        }
        strbuf_grow(sb, (size_t)n);
        vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
        sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(sb, fmt, ap);
        va_end(ap);
}

/* Read fd into sb in chunks until EOF or, with head, until max bytes;
 * without head, more than max is -EFBIG. On error sb is as it was. */
static int read_fd(struct strbuf *sb, int fd, size_t chunk, size_t max, bool head)
{
        size_t start = sb->len;

        for (;;) {
                size_t want = head ? max - (sb->len - start) : chunk;
                ssize_t n;

                if (head && want == 0)
                        break;
                strbuf_grow(sb, want);
                n = read(fd, sb->buf + sb->len, want);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 || (!head && sb->len - start + (size_t)n > max)) {
                        int err = n < 0 ? -errno : -EFBIG;

                        sb->len = start;
                        sb->buf[start] = '\0';
                        return err;
                }
                if (n == 0)
                        break;
                sb->len += (size_t)n;
                sb->buf[sb->len] = '\0';
        }
        return 0;
}

int strbuf_read_fileat(struct strbuf *sb, int dirfd, const char *path, size_t max)
{
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        size_t chunk = 8192;
        struct stat st;

        if (fd < 0)
                return -errno;
        /* A regular file says how much to expect: one read, mostly. */
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
            (uint64_t)st.st_size <= (uint64_t)max)
                chunk = (size_t)st.st_size + 1;
        return read_fd(sb, fd, chunk, max, false);
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t max)
{
        return strbuf_read_fileat(sb, AT_FDCWD, path, max);
}

int strbuf_read_file_head(struct strbuf *sb, const char *path, size_t max)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

        if (fd < 0)
                return -errno;
        return read_fd(sb, fd, 0, max, true);
}
