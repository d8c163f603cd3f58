/* diag.c: error reports with a position, filled by core code. */
#include <errno.h>
#include <stdarg.h>

#include "diag.h"
#include "strbuf.h"
#include "banned.h"

__attribute__((format(printf, 6, 0))) static int diag_vset(struct diag *d, int err, const char *file, unsigned line, unsigned col,
                     const char *fmt, va_list ap)
{
        struct strbuf sb = STRBUF_INIT;

        if (!d)
                return err;
        diag_release(d);
        d->file = file ? xstrdup(file) : NULL;
        d->line = line;
        d->col = col;
        strbuf_vaddf(&sb, fmt, ap);
        d->message = strbuf_detach(&sb);
        return err;
}

int diag_set(struct diag *d, int err, const char *file, unsigned line, unsigned col,
             const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        diag_vset(d, err, file, line, col, fmt, ap);
        va_end(ap);
        return err;
}

int diag_errorf(struct diag *d, int err, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        diag_vset(d, err, NULL, 0, 0, fmt, ap);
        va_end(ap);
        return err;
}

char *diag_format(const struct diag *d)
{
        struct strbuf sb = STRBUF_INIT;

        if (d->file) {
                strbuf_addf(&sb, "%s:", d->file);
                if (d->line) {
                        strbuf_addf(&sb, "%u:", d->line);
                        if (d->col)
                                strbuf_addf(&sb, "%u:", d->col);
                }
                strbuf_addch(&sb, ' ');
        }
        strbuf_addstr(&sb, d->message ? d->message : "unknown error");
        return strbuf_detach(&sb);
}

void diag_release(struct diag *d)
{
        free(d->file);
        free(d->message);
        *d = (struct diag)DIAG_INIT;
}
