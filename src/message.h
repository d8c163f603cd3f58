/* message.h: how an engine below the commands (generate_run, validate_run)
 * says something on the way without printing: each warning, verbose line
 * or error that does not end the run goes, as it happens, to a function
 * the command gives, which shows it (stderr, -q, -v) or not. The error
 * that ends a run is the engine's diag (diag.h), not a message. */
#ifndef CUDAMOD_MESSAGE_H
#define CUDAMOD_MESSAGE_H

#include <stdarg.h>

#include "util.h"

enum message_level {
        MESSAGE_ERROR,
        MESSAGE_WARNING,        /* the commands leave these out with -q */
        MESSAGE_VERBOSE,        /* and show these only with -v */
};

/* say: called with each message, without "cudamod: " and not yet made
 * safe for a terminal, and userdata; NULL: none is shown. */
struct message_sink {
        void (*say)(enum message_level level, const char *text, void *userdata);
        void *userdata;
};

/* Format a message and give it to s->say, if any. */
_printf_(3, 4) void message_say(const struct message_sink *s, enum message_level level, const char *fmt, ...);
_printf_(3, 0) void message_vsay(const struct message_sink *s, enum message_level level, const char *fmt,
                                 va_list ap);

#endif
