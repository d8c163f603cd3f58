/* mkelfstub: write one ELF stub library from the command line (for scripts
 * that build large fake install trees). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfstub.h"
#include "banned.h"

static const char usage_text[] =
        "usage: mkelfstub [--machine x86_64|aarch64|ppc64] [--elf32] [--soname S]\n"
        "                 [--needed N]... [--runpath R | --rpath R] [--string S]...\n"
        "                 [--pad BYTES] OUTPUT\n";

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
        va_list ap;

        fputs("mkelfstub: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        fputs(usage_text, stderr);
        return 2;
}

static const struct {
        const char *name;
        unsigned machine;
} machines[] = {
        { "x86_64", ELFSTUB_X86_64 },
        { "aarch64", ELFSTUB_AARCH64 },
        { "sbsa", ELFSTUB_AARCH64 },
        { "ppc64", ELFSTUB_PPC64 },
        { "ppc64le", ELFSTUB_PPC64 },
        { NULL, 0 },
};

static unsigned machine_from_name(const char *name)
{
        for (size_t i = 0; machines[i].name; i++)
                if (strcmp(machines[i].name, name) == 0)
                        return machines[i].machine;
        return 0;
}

/* Append s to the NULL-terminated array *v of *n items. */
static void push(const char ***v, size_t *n, const char *s)
{
        const char **p = realloc(*v, (*n + 2) * sizeof(**v));

        if (!p) {
                fputs("mkelfstub: out of memory\n", stderr);
                exit(1);
        }
        p[(*n)++] = s;
        p[*n] = NULL;
        *v = p;
}

int main(int argc, char **argv)
{
        enum { OPT_MACHINE = 256, OPT_ELF32, OPT_SONAME, OPT_NEEDED, OPT_RUNPATH, OPT_RPATH,
               OPT_STRING, OPT_PAD };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "machine", required_argument, NULL, OPT_MACHINE },
                { "elf32", no_argument, NULL, OPT_ELF32 },
                { "soname", required_argument, NULL, OPT_SONAME },
                { "needed", required_argument, NULL, OPT_NEEDED },
                { "runpath", required_argument, NULL, OPT_RUNPATH },
                { "rpath", required_argument, NULL, OPT_RPATH },
                { "string", required_argument, NULL, OPT_STRING },
                { "pad", required_argument, NULL, OPT_PAD },
                { NULL, 0, NULL, 0 },
        };
        struct elfstub s = { 0 };
        const char **needed = NULL, **strings = NULL;
        size_t nneeded = 0, nstrings = 0;
        bool have_runpath = false, have_rpath = false;
        int c, r, ret = 0;

        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        fputs(usage_text, stdout);
                        ret = fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
                        goto out;
                case OPT_MACHINE:
                        s.machine = machine_from_name(optarg);
                        if (!s.machine) {
                                ret = usage_error("unknown machine '%s'", optarg);
                                goto out;
                        }
                        break;
                case OPT_ELF32:
                        s.elf32 = true;
                        break;
                case OPT_SONAME:
                        s.soname = optarg;
                        break;
                case OPT_NEEDED:
                        push(&needed, &nneeded, optarg);
                        break;
                case OPT_RUNPATH:
                        have_runpath = true;
                        s.runpath = optarg;
                        break;
                case OPT_RPATH:
                        have_rpath = true;
                        s.runpath = optarg;
                        s.use_rpath = true;
                        break;
                case OPT_STRING:
                        push(&strings, &nstrings, optarg);
                        break;
                case OPT_PAD: {
                        unsigned long v;
                        char *end;

                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno || end == optarg || *end || optarg[0] == '-' || v > 0xffffffffUL) {
                                ret = usage_error("invalid --pad '%s'", optarg);
                                goto out;
                        }
                        s.pad = (unsigned)v;
                        break;
                }
                default:
                        ret = usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
                        goto out;
                }
        }
        if (have_runpath && have_rpath) {
                ret = usage_error("%s", "--runpath and --rpath exclude each other");
                goto out;
        }
        if (argc - optind != 1) {
                ret = usage_error("%s", argc - optind < 1 ? "missing OUTPUT" : "too many arguments");
                goto out;
        }
        s.needed = needed;
        s.strings = strings;

        r = elfstub_write(AT_FDCWD, argv[optind], &s);
        if (r < 0) {
                fprintf(stderr, "mkelfstub: cannot write '%s': %s\n", argv[optind], strerror(-r));
                ret = 1;
        }
out:
        free(needed);
        free(strings);
        return ret;
}
