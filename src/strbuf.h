/* strbuf.h: the one string buffer type (after git's strbuf).
 *
 * Invariants: buf is never NULL and always NUL-terminated; len excludes the
 * terminator; the buffer may hold NUL bytes. strbuf_init allocates nothing,
 * strbuf_release frees the contents and re-initialises, strbuf_detach hands
 * the string to the caller. */
#ifndef CUDAMOD_STRBUF_H
#define CUDAMOD_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "util.h"

struct strbuf {
        size_t alloc;
        size_t len;
        char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { .alloc = 0, .len = 0, .buf = strbuf_slopbuf }

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
/* The one way to set sb->len outside strbuf.c: a cut to the first len
 * bytes, or (after writing into the room strbuf_grow made) taking in the
 * bytes written. len must lie within the allocation (a larger one is a
 * bug: abort); the terminator is written. Inline: the JSON writer calls it
 * for every piece it adds. */
static inline void strbuf_setlen(struct strbuf *sb, size_t len)
{
        if (len > (sb->alloc ? sb->alloc - 1 : 0))
                abort();
        sb->len = len;
        if (sb->alloc)
                sb->buf[len] = '\0';
}
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
_printf_(2, 3) void strbuf_addf(struct strbuf *sb, const char *fmt, ...);
__attribute__((format(printf, 2, 0))) void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);

static inline void strbuf_releasep(struct strbuf *sb)
{
        strbuf_release(sb);
}
#define _cleanup_strbuf_ _cleanup_(strbuf_releasep)

/* Read at most max bytes of path into sb (appending). Returns 0, or a
 * negative errno; -EFBIG when the file is larger than max. */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max);
int strbuf_read_fileat(struct strbuf *sb, int dirfd, const char *path, size_t max);
/* Read the first max bytes of path (all of a shorter file) into sb
 * (appending); a longer file is not an error. Returns 0 or a negative
 * errno. */
int strbuf_read_file_head(struct strbuf *sb, const char *path, size_t max);

#endif
