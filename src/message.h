/* message.h: how an engine below the commands (generate_run, validate_run)
 * says something on the way without printing: each warning, verbose line
 * or error that does not end the run goes, as it happens, to a function
 * the command gives, which shows it (stderr, -q, -v) or not. The error
 * that ends a run is the engine's diag (diag.h), not a message. */
#ifndef CUDAMOD_MESSAGE_H
#define CUDAMOD_MESSAGE_H

enum message_level {
        MESSAGE_ERROR,
        MESSAGE_WARNING,        /* the commands leave these out with -q */
        MESSAGE_VERBOSE,        /* and show these only with -v */
};

/* text: the message, without "cudamod: " and not yet made safe for a
 * terminal; userdata: the engine's options' userdata. */
typedef void message_fn(enum message_level level, const char *text, void *userdata);

#endif
