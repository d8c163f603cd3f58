/* output.h: what the commands share (output.c): messages on stderr,
 * usage and help texts, the config and the scan as every command loads
 * them, the options several take, and stdout, which is the product. */
#ifndef CUDAMOD_OUTPUT_H
#define CUDAMOD_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "cmd.h"
#include "config.h"
#include "diag.h"
#include "message.h"
#include "scan.h"
#include "util-term.h"

/* The command of commands (a NULL-terminated table) named name, or NULL. */
const struct command *command_find(const struct command *const *commands, const char *name);

/* Messages on stderr, "cudamod: …". Warnings are silenced by -q. */
_printf_(1, 2) void log_error(const char *fmt, ...);
_printf_(2, 3) void log_warning(const struct global_options *g, const char *fmt, ...);
_printf_(2, 3) void log_verbose(const struct global_options *g, const char *fmt, ...);
void log_diag(const struct diag *d);
/* A message_sink's say (message.h) for an engine's messages: on stderr as
 * the three above; userdata is the const struct global_options *. */
void log_message(enum message_level level, const char *message, void *userdata);

/* Usage and help texts (stdout for --help, stderr for usage errors). */
void command_print_usage(const struct command *cmd, FILE *f);
void command_print_help(const struct command *cmd, FILE *f);
/* An option getopt_long refused (after it returned '?'): say which, print
 * the usage line; returns EXIT_USAGE. */
int command_bad_option(const struct command *cmd, char **argv);
/* Check the count of positional arguments; prints the usage error. */
bool command_check_args(const struct command *cmd, int n);
/* The main usage line, and with full the whole `cudamod --help` text,
 * which lists commands. */
void print_main_help(const struct command *const *commands, FILE *f, bool full);
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

/* The modulepath of show, validate and doctor: the --modulepath options
 * (each may hold several directories separated by ':'), else the output
 * directory of a config file given with --config, else $MODULEPATH, else
 * the built-in config's output directory (the output's Core for the
 * hierarchical layout). A --modulepath directory that is the output
 * directory of a hierarchical tree (it holds the index and the core level,
 * naming.levels.core, but is not on MODULEPATH itself) is replaced by its
 * core level, with a note (g: -q silences it). Prints the error itself. */
int modulepath_from_options(const struct global_options *g, const struct strv *given, const struct config *cfg,
                            struct strv *ret);
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

/* write_options.on_wait for the commands, userdata a struct lock_wait
 * (cmd.h). */
void log_lock_wait(const char *lock_path, const char *holder, bool by_cudamod, void *userdata);

/* prefix, then text (terminal-safe) folded at spaces to 80 columns, the
 * later lines indented by indent; a `module load` command is never folded. */
void print_folded(const char *prefix, size_t indent, const char *text);

#endif
