/* output.c: messages, usage texts and stdout handling for the commands. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "output.h"
#include "component-table.h"
#include "config-naming.h"
#include "evaluate-modulepath.h"
#include "component.h"
#include "evaluate.h"
#include "plan-naming.h"
#include "strbuf.h"
#include "util.h"
#include "util-path.h"
#include "write.h"
#include "write-name.h"
#include "banned.h"

__attribute__((format(printf, 1, 0))) static void vlog(const char *fmt, va_list ap)
{
        struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *safe = NULL;

        strbuf_vaddf(&sb, fmt, ap);
        safe = term_escape(sb.buf);
        fprintf(stderr, "cudamod: %s\n", safe);
        strbuf_release(&sb);
}

void log_error(const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vlog(fmt, ap);
        va_end(ap);
}

void log_warning(const struct global_options *g, const char *fmt, ...)
{
        va_list ap;

        if (g && g->verbosity < 0)
                return;
        va_start(ap, fmt);
        vlog(fmt, ap);
        va_end(ap);
}

void log_verbose(const struct global_options *g, const char *fmt, ...)
{
        va_list ap;

        if (!g || g->verbosity < 1)
                return;
        va_start(ap, fmt);
        vlog(fmt, ap);
        va_end(ap);
}

void log_diag(const struct diag *d)
{
        _cleanup_free_ char *s = diag_format(d);

        log_error("%s", s);
}

void log_message(enum message_level level, const char *message, void *userdata)
{
        const struct global_options *g = userdata;

        if (level == MESSAGE_ERROR)
                log_error("%s", message);
        else if (level == MESSAGE_WARNING)
                log_warning(g, "%s", message);
        else
                log_verbose(g, "%s", message);
}

void command_print_usage(const struct command *cmd, FILE *f)
{
        fprintf(f, "usage: cudamod %s\n", cmd->usage);
}

/* The lists a help text names by a key, which print_help_text replaces
 * by the component table's names ("cuda, cudnn, ..., magma") or labels
 * ("CUDA, cuDNN, ..., MAGMA"): the help texts list what the table holds,
 * and a new component is in every list without a word of them changing. */
static const struct {
        const char *key;
        enum component_field field;
} help_lists[] = {
        { "{components}", COMPONENT_FIELD_NAME },
        { "{labels}", COMPONENT_FIELD_LABEL },
};

/* The help_lists row whose key starts p (n bytes), or -1. */
static int help_list_at(const char *p, size_t n)
{
        for (size_t i = 0; i < ELEMENTSOF(help_lists); i++)
                if (n >= strlen(help_lists[i].key) && strncmp(p, help_lists[i].key, strlen(help_lists[i].key)) == 0)
                        return (int)i;
        return -1;
}

/* A line of help text that holds a list's key: the lists put in, folded
 * at spaces to width columns, the later lines indented as the first. */
static void print_list_line(FILE *f, const char *line, size_t len, size_t width)
{
        _cleanup_(strbuf_releasep) struct strbuf sb = STRBUF_INIT;
        const char *p = line, *end = line + len;
        size_t indent, col;

        while (p < end) {
                int i = help_list_at(p, (size_t)(end - p));

                if (i < 0) {
                        strbuf_addch(&sb, *p++);
                        continue;
                }
                _cleanup_free_ char *names = component_list(help_lists[i].field, ", ");
                strbuf_addstr(&sb, names);
                p += strlen(help_lists[i].key);
        }

        indent = strspn(sb.buf, " ");
        fwrite(sb.buf, 1, indent, f);
        col = indent;
        p = sb.buf + indent;
        for (bool first = true; *p; first = false) {
                size_t n = strcspn(p, " ");

                if (!first && col + 1 + n > width) {
                        fprintf(f, "\n%*s", (int)indent, "");
                        col = indent;
                } else if (!first) {
                        fputc(' ', f);
                        col++;
                }
                fwrite(p, 1, n, f);
                col += n;
                p += n;
                while (*p == ' ')
                        p++;
        }
        fputc('\n', f);
}

/* text as written, but for its lines that hold a list's key
 * (print_list_line). */
static void print_help_text(FILE *f, const char *text, size_t width)
{
        while (*text) {
                size_t n = strcspn(text, "\n");
                bool list = false;

                for (size_t i = 0; i < n && !list; i++)
                        list = help_list_at(text + i, n - i) >= 0;
                if (list)
                        print_list_line(f, text, n, width);
                else
                        fprintf(f, "%.*s%s", (int)n, text, text[n] ? "\n" : "");
                text += n + (text[n] == '\n');
        }
}

void command_print_help(const struct command *cmd, FILE *f)
{
        command_print_usage(cmd, f);
        fprintf(f, "\n%s\n\n", cmd->summary);
        print_help_text(f, cmd->help, 80);
}

int command_bad_option(const struct command *cmd, char **argv)
{
        /* getopt_long leaves optind past the offending word (a long option
         * or its missing argument) and optopt on a short option. */
        const char *word = optind > 0 ? argv[optind - 1] : NULL;

        static const char *const globals[] = { "--config", "--quiet", "--verbose", "--color", "-q", "-v" };

        for (size_t i = 0; word && i < ELEMENTSOF(globals); i++)
                if (streq(word, globals[i]) || (startswith(word, globals[i]) && word[strlen(globals[i])] == '=')) {
                        log_error("%s: '%s' is a global option: it goes before the command "
                                  "(cudamod %s ... %s ...)", cmd->name, word, globals[i], cmd->name);
                        command_print_usage(cmd, stderr);
                        return EXIT_USAGE;
                }
        if (word && startswith(word, "--"))
                log_error("%s: '%s': unknown option, or its argument is missing", cmd->name, word);
        else if (optopt > ' ' && optopt < 127)
                log_error("%s: '-%c': unknown option, or its argument is missing", cmd->name, optopt);
        else
                log_error("%s: unknown option", cmd->name);
        command_print_usage(cmd, stderr);
        return EXIT_USAGE;
}

bool command_check_args(const struct command *cmd, int n)
{
        if (n < cmd->min_args) {
                log_error("%s: too few arguments", cmd->name);
                command_print_usage(cmd, stderr);
                return false;
        }
        if (cmd->max_args >= 0 && n > cmd->max_args) {
                log_error("%s: too many arguments", cmd->name);
                command_print_usage(cmd, stderr);
                return false;
        }
        return true;
}

int finish_stdout(int status)
{
        if (fflush(stdout) != 0 || ferror(stdout)) {
                log_error("write error on standard output: %s", strerror(errno));
                return status ? status : EXIT_FOUND_FAILURE;
        }
        return status;
}

/* prefix, then text made safe for a terminal (term_escape), folded at
 * spaces to 80 columns, the later lines indented by indent. A `module load`
 * command (up to a ';' or ',', which it keeps, or a '(') is never folded:
 * it is there to be pasted. */
void print_folded(const char *prefix, size_t indent, const char *text)
{
        enum { WIDTH = 80 };
        _cleanup_free_ char *t = term_escape(text);
        size_t col = strlen(prefix);
        const char *p = t;
        bool first = true;

        fputs(prefix, stdout);
        while (*p) {
                size_t n = strcspn(p, " ");

                if (startswith(p, "module load ")) {
                        n = strcspn(p, "(;,");
                        if (p[n] == ';' || p[n] == ',')
                                n++;
                        while (n > 1 && p[n - 1] == ' ')
                                n--;
                }
                if (!first && col + 1 + n > WIDTH) {
                        printf("\n%*s", (int)indent, "");
                        col = indent;
                } else if (!first) {
                        putchar(' ');
                        col++;
                }
                fwrite(p, 1, n, stdout);
                col += n;
                p += n;
                first = false;
                while (*p == ' ')
                        p++;
        }
        putchar('\n');
}

void print_main_help(const struct command *const *commands, FILE *f, bool full)
{
        fputs("usage: cudamod [--config FILE] [-q|-v] [--color=auto|always|never] COMMAND [ARGS]\n", f);
        if (!full) {
                fputs("See 'cudamod --help'.\n", f);
                return;
        }
        /* Folded at 84 columns, the width its first line has always had. */
        print_help_text(f,
                        "\n"
                        "Find the CUDA stack's installations ({labels}) and make environment modules for them.\n"
                        "\n"
                        "Commands:\n",
                        84);
        for (const struct command *const *c = commands; *c; c++)
                fprintf(f, "  %-10s %s\n", (*c)->name, (*c)->summary);
        fputs("\n"
              "Options:\n"
              "  --config FILE       site configuration (YAML)\n"
              "  -q, --quiet         no warnings, only errors\n"
              "  -v, --verbose       say more about what is done\n"
              "      --color=WHEN    colour the output: auto (default), always, never\n"
              "  -h, --help          this text; 'cudamod help COMMAND' for one command\n"
              "      --version       the version\n"
              "\n"
              "Exit status: 0 success, 1 a failure was found, 2 usage or configuration error.\n",
              f);
}

const struct command *command_find(const struct command *const *commands, const char *name)
{
        for (const struct command *const *c = commands; *c; c++)
                if (streq((*c)->name, name))
                        return *c;
        return NULL;
}

int load_config(const struct global_options *g, struct config *ret)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;

        config_init_default(ret);
        if (g->config && config_load(ret, g->config, &d) < 0) {
                log_diag(&d);
                config_release(ret);
                return -EINVAL;
        }
        return 0;
}

void scan_options_from_config(struct scan_options *so, const struct config *cfg, int argc,
                              char **argv)
{
        if (argc > 0) {
                so->roots = (const char *const *)argv;
                so->n_roots = (size_t)argc;
        } else if (cfg->search.len) {
                so->roots = (const char *const *)cfg->search.items;
                so->n_roots = cfg->search.len;
        }
        so->max_depth = cfg->max_depth;
        if (!so->jobs)
                so->jobs = cfg->scan_jobs ? cfg->scan_jobs : default_jobs();
        so->exclude = &cfg->exclude;
        so->exclude_installs = cfg->exclude_installs;
        /* Also when the roots are given: one the config marks a mount is one. */
        so->mounts = &cfg->search_mounts;
        so->optional = &cfg->search_optional;
}

/* What users `module use` of the config's tree: its output, or in the
 * hierarchical layout the core level in it (naming.levels.core). */
static char *tree_root_dir(const struct config *cfg)
{
        _cleanup_free_ char *core = NULL;

        if (cfg->layout != MODULE_LAYOUT_HIERARCHICAL)
                return xstrdup(cfg->output);
        core = plan_level(cfg, -1);
        return path_join(cfg->output, core);
}

/* "scanning: N directories" on a terminal, at most ten times a second. */
static void show_progress(size_t n_dirs, const char *path, void *userdata)
{
        static struct timespec last;
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - last.tv_sec) * 1000000000L + (now.tv_nsec - last.tv_nsec) < 100000000L)
                return;
        last = now;
        fprintf(stderr, "\rcudamod: scanning: %zu directories", n_dirs);
}

int scan_with_progress(struct scan_options *so, struct scan_result *ret,
                       const struct global_options *g)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        int r;

        for (size_t i = 0; i < (so->roots ? so->n_roots : 0); i++)
                log_verbose(g, "scanning '%s'", so->roots[i]);
        if (g->verbosity >= 0 && isatty(STDERR_FILENO))
                so->progress = show_progress;
        r = scan_run(so, ret, &d);
        if (so->progress)
                fputs("\r\033[K", stderr);
        if (r < 0) {
                log_diag(&d);
                return r;
        }
        for (size_t i = 0; i < ret->warnings.len; i++)
                log_warning(g, "%s", ret->warnings.items[i]);
        for (size_t i = 0; i < ret->verbose.len; i++)
                log_verbose(g, "%s", ret->verbose.items[i]);
        log_verbose(g, "%zu installation%s found", ret->installs.len,
                    ret->installs.len == 1 ? "" : "s");
        return 0;
}

/* dir, when it is the output directory of a generated hierarchical tree:
 * its core level (the config's naming.levels.core), where `module use`
 * points; else NULL. A flat tree's output directory is its modulepath. */
static char *core_of_output(const struct config *cfg, const char *dir)
{
        _cleanup_free_ char *index = path_join(dir, INDEX_NAME), *level = plan_level(cfg, -1);
        _cleanup_free_ char *core = path_join(dir, level);

        if (!is_file_at(AT_FDCWD, index) || !is_dir_at(AT_FDCWD, core))
                return NULL;
        return TAKE_PTR(core);
}

int modulepath_from_options(const struct global_options *g, const struct strv *given, const struct config *cfg,
                            struct strv *ret)
{
        const char *env = getenv("MODULEPATH");

        for (size_t i = 0; i < given->len; i++)
                modulepath_split(given->items[i], ret);
        for (size_t i = 0; i < ret->len; i++) {
                char *core = core_of_output(cfg, ret->items[i]);

                if (!core)
                        continue;
                log_warning(g, "note: '%s' is the output directory of a tree cudamod generated; using its core "
                            "level '%s' (what `module use` takes)",
                            ret->items[i], core);
                free(ret->items[i]);
                ret->items[i] = core;
        }
        if (given->len) {
                if (ret->len)
                        return 0;
                log_error("--modulepath names no directory");
                return -EINVAL;
        }
        /* A site config named with --config says where its tree is: that
         * beats the MODULEPATH of whatever shell the admin runs in. */
        if (cfg->file && cfg->output) {
                strv_push(ret, tree_root_dir(cfg));
                return 0;
        }
        if (env && *env) {
                modulepath_split(env, ret);
                return 0;
        }
        if (cfg->output) {
                strv_push(ret, tree_root_dir(cfg));
                return 0;
        }
        log_error("no modulepath: give --modulepath DIR, set MODULEPATH, or set 'output' in the "
                  "config");
        return -EINVAL;
}

static int json_to_strbuf(const char *buffer, size_t size, void *data)
{
        strbuf_add(data, buffer, size);
        return 0;
}

void json_dump_stdout(json_t *doc)
{
        struct strbuf sb = STRBUF_INIT;

        /* Into memory, then one fwrite: json_dumpf calls fwrite for every
         * token, and stdio's locking and copying of those was a tenth of a
         * scan's instructions. The text is the same. */
        if (json_dump_callback(doc, json_to_strbuf, &sb, JSON_INDENT(2)) < 0 ||
            fwrite(sb.buf, 1, sb.len, stdout) != sb.len)
                log_error("cannot write the JSON document");
        putchar('\n');
        strbuf_release(&sb);
        json_decref(doc);
}

unsigned default_jobs(void)
{
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        return n < 1 ? 1 : n > CONFIG_SCAN_JOBS_MAX ? CONFIG_SCAN_JOBS_MAX : (unsigned)n;
}

int parse_jobs(const char *arg, unsigned *ret)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(arg, &end, 10);
        if (errno || end == arg || *end || v < 1 || v > CONFIG_SCAN_JOBS_MAX) {
                log_error("--jobs takes a number of threads from 1 to %d, not '%s'", CONFIG_SCAN_JOBS_MAX, arg);
                return -EINVAL;
        }
        *ret = (unsigned)v;
        return 0;
}

int parse_lock_timeout(const char *arg, long *ret)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(arg, &end, 10);
        if (errno || end == arg || *end || v < 0 || v > 86400) {
                log_error("--lock-timeout takes seconds from 0 (do not wait) to 86400, not '%s'", arg);
                return -EINVAL;
        }
        *ret = v ? v : -1;
        return 0;
}

void log_lock_wait(const char *lock_path, const char *holder, bool by_cudamod, void *userdata)
{
        const struct lock_wait *w = userdata;

        /* "another cudamod run" only when /proc says so. */
        log_warning(w->g, "'%s' is locked by %s%s; waiting (at most %ld s, --lock-timeout)", lock_path,
                    by_cudamod ? "another cudamod run, " : "",
                    holder ? holder : "a process whose PID cannot be read",
                    w->timeout > 0 ? w->timeout : (long)WRITE_LOCK_TIMEOUT);
}
