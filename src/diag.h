/* diag.h: how core code reports an error without printing.
 *
 * A function that can fail takes a struct diag * as its last argument and, on
 * failure, fills it (file, 1-based line and column when known, message) and
 * returns a negative errno. Only cmd-*.c prints a diag. A diag owns its
 * strings; diag_release frees them. */
#ifndef CUDAMOD_DIAG_H
#define CUDAMOD_DIAG_H

#include <stdarg.h>

#include "util.h"

struct diag {
        char *file;     /* may be NULL */
        unsigned line;  /* 0: unknown */
        unsigned col;   /* 0: unknown */
        char *message;  /* NULL until set */
};

#define DIAG_INIT { 0 }

/* Set the diag (replacing what it held) and return err, so callers can write
 * `return diag_set(d, -EINVAL, file, 3, 7, "bad thing")`. d may be NULL. */
_printf_(6, 7) int diag_set(struct diag *d, int err, const char *file, unsigned line,
                            unsigned col, const char *fmt, ...);
_printf_(3, 4) int diag_errorf(struct diag *d, int err, const char *fmt, ...);
/* Format as "FILE:LINE:COL: message" (the parts that are known). */
char *diag_format(const struct diag *d);
void diag_release(struct diag *d);

static inline void diag_releasep(struct diag *d)
{
        diag_release(d);
}
#define _cleanup_diag_ _cleanup_(diag_releasep)

#endif
