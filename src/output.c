/* output.c: messages, usage texts and stdout handling for the commands. */
#include <errno.h>
#include <stdarg.h>

#include "cmd.h"
#include "strbuf.h"
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

void command_print_usage(const struct command *cmd, FILE *f)
{
        fprintf(f, "usage: cudamod %s\n", cmd->usage);
}

void command_print_help(const struct command *cmd, FILE *f)
{
        command_print_usage(cmd, f);
        fprintf(f, "\n%s\n\n%s", cmd->summary, cmd->help);
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

char *term_escape(const char *s)
{
        struct strbuf sb = STRBUF_INIT;
        const unsigned char *p = (const unsigned char *)s;

        while (*p) {
                if (*p == '\n')
                        strbuf_addstr(&sb, "\\n");
                else if (*p == '\t')
                        strbuf_addstr(&sb, "\\t");
                else if (*p < 0x20 || *p == 0x7f)
                        strbuf_addf(&sb, "\\x%02x", *p);
                else if (*p >= 0x80) {
                        /* Keep valid UTF-8 sequences, escape the rest. */
                        char one[5] = { 0 };
                        size_t n = (*p >= 0xf0) ? 4 : (*p >= 0xe0) ? 3 : (*p >= 0xc0) ? 2 : 0;
                        size_t k;

                        for (k = 0; k < n && p[k]; k++)
                                one[k] = (char)p[k];
                        if (n && k == n && utf8_valid(one)) {
                                strbuf_add(&sb, one, n);
                                p += n;
                                continue;
                        }
                        strbuf_addf(&sb, "\\x%02x", *p);
                } else
                        strbuf_addch(&sb, (char)*p);
                p++;
        }
        return strbuf_detach(&sb);
}

void print_main_help(FILE *f, bool full)
{
        fputs("usage: cudamod [--config FILE] [-q|-v] [--color=auto|always|never] COMMAND [ARGS]\n", f);
        if (!full) {
                fputs("See 'cudamod --help'.\n", f);
                return;
        }
        fputs("\nFind CUDA Toolkit, cuDNN and NCCL installations and make environment modules for them.\n"
              "\n"
              "Commands:\n",
              f);
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

int refuse_config(const struct global_options *g)
{
        /* The site configuration loader is the next stage of work; accepting
         * a file and ignoring it would mislead. */
        if (!g->config)
                return 0;
        log_error("--config: site configuration files are not supported by this version yet");
        return EXIT_USAGE;
}
