/* cmd.h: the command table's entry type and the options every command
 * gets; no functions (the helpers the commands share: output.h).
 *
 * Each src/cmd-<name>.c exports one `const struct command`, declared in
 * its own cmd-<name>.h; main.c lists them. A command parses its own
 * options (after the global ones) and returns the exit status: 0 success,
 * 1 the command ran and found a failure, 2 usage or configuration error;
 * 3 and 4 are particular to one command each (below). */
#ifndef CUDAMOD_CMD_H
#define CUDAMOD_CMD_H

#include <stdbool.h>

#define EXIT_FOUND_FAILURE 1
#define EXIT_USAGE 2
/* doctor --build: a problem the configure stops on (it would not finish). */
#define EXIT_BUILD_FATAL 3
/* generate: the modules are written, but Lmod's spider cache could not be
 * rebuilt (lmod.spider_cache): not the 1 of a tree that was not written,
 * so that cron can tell a stale cache from a stale tree. */
#define EXIT_CACHE_STALE 4

struct command;

struct global_options {
        /* The command table, NULL-terminated (main.c): `cudamod help`
         * reads it from here, so that no command needs main.c. */
        const struct command *const *commands;
        const char *config;
        int verbosity; /* -1 quiet, 0 normal, 1+ verbose */
        bool color;    /* stdout is coloured */
};

struct command {
        const char *name;
        const char *summary;   /* one line for `cudamod --help` */
        const char *usage;     /* "scan [--json] [ROOT...]" */
        const char *help;      /* the text of `cudamod help NAME` after usage */
        int min_args, max_args; /* positional arguments; max -1: any */
        int (*run)(int argc, char **argv, const struct global_options *g);
};

/* write_options.on_wait for the commands (output.c log_lock_wait): who
 * holds the lock and how long this run waits, on stderr (a warning: not
 * with -q). */
struct lock_wait {
        const struct global_options *g;
        long timeout; /* as write_options.lock_timeout */
};

#endif
