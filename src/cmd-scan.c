/* cmd-scan.c: `cudamod scan [--json] [ROOT...]`. */
#include <getopt.h>

#include "cmd-scan.h"
#include "component-table.h"
#include "component.h"
#include "config.h"
#include "diag.h"
#include "install.h"
#include "output.h"
#include "scan.h"
#include "strbuf.h"
#include "util-term.h"
#include "util.h"
#include "version.h"
#include "banned.h"

#define RED "\033[31m"
#define YELLOW "\033[33m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

static char *version_column(const struct install *in)
{
        _cleanup_free_ char *v = NULL;

        if (!in->version.count)
                return xstrdup("?");
        v = version_to_string(&in->version, in->component->version_parts);
        if (in->release.count) {
                _cleanup_free_ char *r = version_to_string(&in->release, 3);
                return xasprintf("%s (%s)", v, r);
        }
        if (in->build)
                return xasprintf("%s.%s", v, in->build);
        return TAKE_PTR(v);
}

static char *cuda_column(const struct install *in)
{
        long major = install_cuda_major(in);

        if (in->component->cuda_parts >= 2 && in->cuda_version.count >= 2)
                return version_to_string(&in->cuda_version, in->component->cuda_parts);
        return major >= 0 ? xasprintf("%ld", major) : xstrdup("-");
}

static void print_detail(const char *label, const char *value)
{
        _cleanup_free_ char *safe = NULL;

        if (!value)
                return;
        safe = term_escape(value);
        printf("    %-10s %s\n", label, safe);
}

static void print_table(const struct install_list *l, const struct global_options *g)
{
        if (l->len == 0) {
                _cleanup_free_ char *labels = component_list(COMPONENT_FIELD_LABEL, " or ");

                printf("no %s installation found\n", labels);
                return;
        }
        /* As wide as the longest component name listed ("cusparselt"). */
        int width = (int)strlen("COMPONENT");

        for (size_t i = 0; i < l->len; i++)
                if ((int)strlen(l->items[i]->component->name) > width)
                        width = (int)strlen(l->items[i]->component->name);
        printf("%s%-*s %-18s %-5s %-7s %-8s %s%s\n", g->color ? BOLD : "", width, "COMPONENT", "VERSION",
               "CUDA", "ARCH", "LAYOUT", "PREFIX", g->color ? RESET : "");
        for (size_t i = 0; i < l->len; i++) {
                const struct install *in = l->items[i];
                _cleanup_free_ char *ver = version_column(in), *cuda = cuda_column(in);
                _cleanup_free_ char *prefix = term_escape(in->prefix);

                printf("%-*s %-18s %-5s %-7s %-8s %s\n", width, in->component->name, ver,
                       cuda, in->arch ? in->arch : "?", layout_to_string(in->layout), prefix);
                for (size_t k = 0; k < in->aliases.len; k++)
                        print_detail(k == 0 ? "aliases" : "", in->aliases.items[k]);
                print_detail("bin", in->bin_dir);
                print_detail("include", in->include_dir);
                print_detail("lib", in->lib_dir);
                for (size_t k = 0; k < in->extra_lib_dirs.len; k++)
                        print_detail(k == 0 ? "extra lib" : "", in->extra_lib_dirs.items[k]);
                for (size_t k = 0; k < in->extra_include_dirs.len; k++)
                        print_detail(k == 0 ? "extra inc" : "", in->extra_include_dirs.items[k]);
                if (in->compat_dir) {
                        /* Forward compatibility: the driver it brings. */
                        _cleanup_free_ char *compat = xasprintf("%s (forward compatibility, driver %s)",
                                                                in->compat_dir, in->compat_driver);

                        print_detail("compat", compat);
                }
                for (size_t k = 0; k < in->n_problems; k++) {
                        _cleanup_free_ char *msg = term_escape(in->problems[k].message);
                        printf("    %sproblem%s    %s: %s\n", g->color ? RED : "",
                               g->color ? RESET : "", in->problems[k].code, msg);
                }
        }
}

/* The places the scan could not read, for --json ("unread"): a cron job
 * reading the JSON sees that the list of installs may be short, not only
 * the warning on stderr. */
static json_t *gaps_to_json(const struct scan_result *r)
{
        json_t *a = json_array();

        if (!a)
                die_oom();
        for (size_t i = 0; i < r->n_gaps; i++) {
                json_t *o = json_pack("{s:s, s:s}", "path", r->gaps[i].path, "why", r->gaps[i].why);

                if (!o || json_array_append_new(a, o) < 0)
                        die_oom();
        }
        return a;
}

static int run_scan(int argc, char **argv, const struct global_options *g)
{
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "jobs", required_argument, NULL, 'J' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct scan_options so = { 0 };
        struct scan_result r = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config cfg;
        bool json = false;
        int c;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'J':
                        if (parse_jobs(optarg, &so.jobs) < 0)
                                return EXIT_USAGE;
                        break;
                case 'h':
                        command_print_help(&cmd_scan, stdout);
                        return 0;
                default:
                        return command_bad_option(&cmd_scan, argv);
                }
        }
        if (!command_check_args(&cmd_scan, argc - optind))
                return EXIT_USAGE;
        if (load_config(g, &cfg) < 0)
                return EXIT_USAGE;
        scan_options_from_config(&so, &cfg, argc - optind, argv + optind);
        if (scan_roots_check(&so, &d) < 0) {
                log_diag(&d);
                config_release(&cfg);
                return EXIT_USAGE;
        }
        if (scan_with_progress(&so, &r, g) < 0) {
                config_release(&cfg);
                return EXIT_FOUND_FAILURE;
        }
        if (json) {
                struct strbuf sb = STRBUF_INIT;
                json_t *unread = gaps_to_json(&r);

                install_list_write_json(&sb, &r.installs, unread);
                json_decref(unread);
                strbuf_addch(&sb, '\n');
                if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len)
                        log_error("cannot write the JSON document");
                strbuf_release(&sb);
        } else
                print_table(&r.installs, g);
        scan_result_release(&r);
        config_release(&cfg);
        return 0;
}

const struct command cmd_scan = {
        .name = "scan",
        .summary = "find the CUDA stack's installations (CUDA, cuDNN, NCCL, ...)",
        .usage = "scan [--json] [--jobs N] [ROOT...]",
        .help = "Walk each ROOT (default: /usr/local, /opt, /usr/lib/cuda,\n"
                "/usr/lib/nvidia-cuda-toolkit, the multiarch library directories,\n"
                "/opt/nvidia/hpc_sdk) and report every installation of the CUDA stack\n"
                "({components}): version, the CUDA\n"
                "major a library's build targets,\n"
                "architecture, layout, prefix, directories, the symlinks that lead to it,\n"
                "and any problem. Versions are read from files; nothing is executed and\n"
                "nothing is written.\n"
                "\n"
                "Options:\n"
                "  --json    print one JSON document (format 1) instead of a table\n"
                "  --jobs N  walk with N threads at once (default: the config's scan.jobs,\n"
                "            else one a CPU); the report is the same for any N\n"
                "\n"
                "Unreadable directories and symlink loops are skipped with a warning on\n"
                "stderr. The exit status is 0 when the scan ran, even when installations\n"
                "have problems; they are in the report. It is 1 when the scan could not\n"
                "complete (stdout could not be written), 2 for a usage or configuration\n"
                "error.\n",
        .min_args = 0,
        .max_args = -1,
        .run = run_scan,
};
