/* cmd.h: the command table's entry type and what commands share.
 *
 * Each src/cmd-<name>.c exports one `const struct command`; main.c lists
 * them. A command parses its own options (after the global ones) and
 * returns the exit status: 0 success, 1 the command ran and found a
 * failure, 2 usage or configuration error. */
#ifndef CUDAMOD_CMD_H
#define CUDAMOD_CMD_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "config.h"
#include "diag.h"
#include "scan.h"
#include "util-term.h"

#define EXIT_FOUND_FAILURE 1
#define EXIT_USAGE 2

struct global_options {
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

extern const struct command cmd_config;
extern const struct command cmd_doctor;
extern const struct command cmd_generate;
extern const struct command cmd_help;
extern const struct command cmd_scan;
extern const struct command cmd_show;
extern const struct command cmd_validate;

/* The table, NULL-terminated (main.c). */
extern const struct command *const commands[];
const struct command *command_find(const char *name);

/* Messages on stderr, "cudamod: …". Warnings are silenced by -q. */
_printf_(1, 2) void log_error(const char *fmt, ...);
_printf_(2, 3) void log_warning(const struct global_options *g, const char *fmt, ...);
_printf_(2, 3) void log_verbose(const struct global_options *g, const char *fmt, ...);
void log_diag(const struct diag *d);

/* Usage and help texts (stdout for --help, stderr for usage errors). */
void command_print_usage(const struct command *cmd, FILE *f);
void command_print_help(const struct command *cmd, FILE *f);
/* An option getopt_long refused (after it returned '?'): say which, print
 * the usage line; returns EXIT_USAGE. */
int command_bad_option(const struct command *cmd, char **argv);
/* Check the count of positional arguments; prints the usage error. */
bool command_check_args(const struct command *cmd, int n);
/* The main usage line, and with full the whole `cudamod --help` text. */
void print_main_help(FILE *f, bool full);
/* The built-in config overlaid with --config; on error the message is
 * printed and -EINVAL returned (the caller exits with EXIT_USAGE). */
int load_config(const struct global_options *g, struct config *ret);
/* Roots from the command line (argc > 0), else from the config's search;
 * the config's exclude and max_depth; so->jobs when not set (--jobs): the
 * config's scan.jobs, else default_jobs(). */
void scan_options_from_config(struct scan_options *so, const struct config *cfg, int argc,
                              char **argv);
/* scan_run with a progress line on a terminal and the warnings printed;
 * on error the message is printed and a negative errno returned. */
int scan_with_progress(struct scan_options *so, struct scan_result *ret,
                       const struct global_options *g);

/* The modulepath of show and validate: the --modulepath options (each may
 * hold several directories separated by ':'), else the output directory of
 * a config file given with --config, else $MODULEPATH, else the built-in
 * config's output directory (the output's Core for the hierarchical
 * layout). Prints the error itself. */
int modulepath_from_options(const struct strv *given, const struct config *cfg, struct strv *ret);
/* Print doc on stdout (indented, then a newline) and release it. */
void json_dump_stdout(json_t *doc);

/* Flush stdout and report a write error: our stdout is the product. */
int finish_stdout(int status);

/* One thread a CPU online (at least 1, at most CONFIG_SCAN_JOBS_MAX). */
unsigned default_jobs(void);
/* --jobs N: 1 to CONFIG_SCAN_JOBS_MAX. Prints the error. */
int parse_jobs(const char *arg, unsigned *ret);

/* --lock-timeout S: whole seconds from 0 (do not wait) to 86400, as
 * write_options.lock_timeout takes them (0 becomes -1). Prints the error
 * itself. */
int parse_lock_timeout(const char *arg, long *ret);

/* write_options.on_wait for the commands: who holds the lock and how long
 * this run waits, on stderr (a warning: not with -q). */
struct lock_wait {
        const struct global_options *g;
        long timeout; /* as write_options.lock_timeout */
};
void log_lock_wait(const char *lock_path, const char *holder, bool by_cudamod, void *userdata);

/* prefix, then text (terminal-safe) folded at spaces to 80 columns, the
 * later lines indented by indent; a `module load` command is never folded. */
void print_folded(const char *prefix, size_t indent, const char *text);

#endif
