/* cmd-generate.c: `cudamod generate`: its options, generate_run
 * (generate.c: scan, plan, render, write), and the report. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include "cmd-generate.h"
#include "config-site.h"
#include "config.h"
#include "diag.h"
#include "scan.h"
#include "generate.h"
#include "install.h"
#include "output.h"
#include "strbuf.h"
#include "util-term.h"
#include "util.h"
#include "write.h"
#include "banned.h"

struct generate_args {
        const char *output;
        const char *format;
        const char *layout;
        bool dry_run, check, prune, force, json, rename;
        long lock_timeout; /* as write_options.lock_timeout */
};

/* Say what a stop signal left behind (d) and die of it. */
_noreturn_ static void die_of_stop_signal(int sig, const struct diag *d)
{
        log_diag(d);
        fflush(stdout);
        signal(sig, SIG_DFL);
        raise(sig);
        _exit(128 + sig);
}

static bool drift(const struct write_result *w)
{
        return w->count[FILE_CREATED] || w->count[FILE_UPDATED] || w->count[FILE_PRUNED] ||
               w->count[FILE_STALE] || w->count[FILE_SKIPPED_EDITED] ||
               w->count[FILE_SKIPPED_FOREIGN] || w->count[FILE_HELD];
}

static void print_report(const struct write_result *w, const struct generate_args *a,
                         const char *outdir, const struct global_options *g)
{
        static const char *const would[_FILE_STATUS_MAX] = {
                [FILE_CREATED] = "would create", [FILE_UPDATED] = "would update",
                [FILE_PRUNED] = "would prune",
        };
        bool pretend = a->dry_run || a->check;
        _cleanup_free_ char *out = term_escape(outdir);

        for (size_t i = 0; i < w->n_files; i++) {
                const struct file_report *f = &w->files[i];
                const char *what = pretend && would[f->status] ? would[f->status]
                                                                : file_status_to_string(f->status);
                _cleanup_free_ char *path = term_escape(f->path);

                if (f->status == FILE_UNCHANGED && g->verbosity < 1)
                        continue;
                printf("%-12s %s\n", what, path);
        }
        printf("%s%s: %zu created, %zu updated, %zu unchanged, %zu pruned, %zu skipped", out,
               pretend ? " (nothing written)" : "", w->count[FILE_CREATED], w->count[FILE_UPDATED],
               w->count[FILE_UNCHANGED], w->count[FILE_PRUNED],
               w->count[FILE_SKIPPED_EDITED] + w->count[FILE_SKIPPED_FOREIGN]);
        if (w->count[FILE_STALE])
                printf(", %zu stale (--prune removes them)", w->count[FILE_STALE]);
        if (w->count[FILE_HELD])
                printf(", %zu held (their install was not read whole)", w->count[FILE_HELD]);
        putchar('\n');
        if (w->count[FILE_SKIPPED_EDITED])
                log_warning(g, "%zu file%s edited by hand left as they are; --force overwrites them",
                            w->count[FILE_SKIPPED_EDITED], w->count[FILE_SKIPPED_EDITED] == 1 ? "" : "s");
        if (w->count[FILE_SKIPPED_FOREIGN])
                log_warning(g, "%zu file%s not written by cudamod left as they are",
                            w->count[FILE_SKIPPED_FOREIGN], w->count[FILE_SKIPPED_FOREIGN] == 1 ? "" : "s");
}

static json_t *report_json(const struct write_result *w, const struct plan *p,
                           const struct generate_args *a, bool drifted, const struct strv *warns)
{
        json_t *doc = json_object(), *files = json_array(), *summary = json_object();
        json_t *warnings = json_array();

        for (size_t i = 0; i < w->n_files; i++) {
                json_t *f = json_object();
                json_object_set_new(f, "path", json_string_lossy(w->files[i].path));
                json_object_set_new(f, "status", json_string(file_status_to_string(w->files[i].status)));
                json_object_set_new(f, "module", json_string_lossy(w->files[i].module));
                json_array_append_new(files, f);
        }
        for (int s = 0; s < _FILE_STATUS_MAX; s++)
                json_object_set_new(summary, file_status_to_string(s), json_integer((json_int_t)w->count[s]));
        for (size_t i = 0; i < warns->len; i++)
                json_array_append_new(warnings, json_string_lossy(warns->items[i]));
        json_object_set_new(doc, "format", json_integer(1));
        json_object_set_new(doc, "output", json_string_lossy(p->outdir));
        json_object_set_new(doc, "module_format", json_string(module_format_to_string(p->format)));
        json_object_set_new(doc, "layout", json_string(module_layout_to_string(p->layout)));
        json_object_set_new(doc, "written", json_boolean(!a->dry_run && !a->check));
        json_object_set_new(doc, "drift", json_boolean(drifted));
        json_object_set_new(doc, "files", files);
        json_object_set_new(doc, "summary", summary);
        json_object_set_new(doc, "warnings", warnings);
        return doc;
}

/* Command-line choices over the config's. */
static int apply_args(struct config *cfg, const struct generate_args *a)
{
        if (a->format) {
                enum module_format f = module_format_from_string(a->format);
                if (f < 0) {
                        log_error("--format: '%s' is not one of lua, tcl", a->format);
                        return -EINVAL;
                }
                cfg->format = f;
        }
        if (a->layout) {
                enum module_layout l = module_layout_from_string(a->layout);
                if (l < 0) {
                        log_error("--layout: '%s' is not one of hierarchical, flat", a->layout);
                        return -EINVAL;
                }
                cfg->layout = l;
        }
        if (a->output) {
                if (!*a->output) {
                        log_error("-o: the output directory is empty");
                        return -EINVAL;
                }
                free(cfg->output);
                cfg->output = xstrdup(a->output);
        }
        if (!cfg->output || !*cfg->output) {
                log_error("generate needs an output directory: -o DIR, or 'output' in the config");
                return -EINVAL;
        }
        return 0;
}

/* generate_options.scan_run: with a progress line on a terminal. */
static int scan_shown(struct scan_options *so, struct scan_result *ret, void *userdata)
{
        return scan_with_progress(so, ret, userdata);
}

static int run_generate(int argc, char **argv, const struct global_options *g)
{
        enum { OPT_FORMAT = 256, OPT_LAYOUT, OPT_DRY_RUN, OPT_CHECK, OPT_PRUNE, OPT_FORCE, OPT_JSON,
               OPT_LOCK_TIMEOUT, OPT_JOBS, OPT_RENAME };
        static const struct option options[] = {
                { "output", required_argument, NULL, 'o' },
                { "format", required_argument, NULL, OPT_FORMAT },
                { "layout", required_argument, NULL, OPT_LAYOUT },
                { "dry-run", no_argument, NULL, OPT_DRY_RUN },
                { "check", no_argument, NULL, OPT_CHECK },
                { "prune", no_argument, NULL, OPT_PRUNE },
                { "force", no_argument, NULL, OPT_FORCE },
                { "json", no_argument, NULL, OPT_JSON },
                { "lock-timeout", required_argument, NULL, OPT_LOCK_TIMEOUT },
                { "jobs", required_argument, NULL, OPT_JOBS },
                { "rename", no_argument, NULL, OPT_RENAME },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct generate_args a = { 0 };
        struct config cfg;
        struct scan_options so = { 0 };
        struct generate_result res = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct lock_wait lw = { .g = g };
        struct generate_options o = {
                .cfg = &cfg, .scan = &so, .log = { .say = log_message, .userdata = (void *)g },
                .scan_run = scan_shown, .scan_userdata = (void *)g,
                .on_wait = log_lock_wait, .wait_userdata = &lw,
        };
        int c, r, status = EXIT_FOUND_FAILURE;

        while ((c = getopt_long(argc, argv, "o:h", options, NULL)) != -1) {
                switch (c) {
                case 'o':
                        a.output = optarg;
                        break;
                case OPT_FORMAT:
                        a.format = optarg;
                        break;
                case OPT_LAYOUT:
                        a.layout = optarg;
                        break;
                case OPT_DRY_RUN:
                        a.dry_run = true;
                        break;
                case OPT_CHECK:
                        a.check = true;
                        break;
                case OPT_PRUNE:
                        a.prune = true;
                        break;
                case OPT_FORCE:
                        a.force = true;
                        break;
                case OPT_JSON:
                        a.json = true;
                        break;
                case OPT_RENAME:
                        a.rename = true;
                        break;
                case OPT_LOCK_TIMEOUT:
                        if (parse_lock_timeout(optarg, &a.lock_timeout) < 0)
                                return EXIT_USAGE;
                        break;
                case OPT_JOBS:
                        if (parse_jobs(optarg, &so.jobs) < 0)
                                return EXIT_USAGE;
                        break;
                case 'h':
                        command_print_help(&cmd_generate, stdout);
                        return 0;
                default:
                        return command_bad_option(&cmd_generate, argv);
                }
        }
        if (!command_check_args(&cmd_generate, argc - optind))
                return EXIT_USAGE;
        if (load_config(g, &cfg) < 0)
                return EXIT_USAGE;
        if (apply_args(&cfg, &a) < 0) {
                config_release(&cfg);
                return EXIT_USAGE;
        }
        if (!a.lock_timeout)
                a.lock_timeout = cfg.lock_timeout ? (long)cfg.lock_timeout : -1;
        scan_options_from_config(&so, &cfg, argc - optind, argv + optind);
        /* Before anything is written: a root that is not there is a
         * mistake, not an empty tree. */
        if (scan_roots_check(&so, &d) < 0) {
                log_diag(&d);
                config_release(&cfg);
                return EXIT_USAGE;
        }
        o.dry_run = a.dry_run;
        o.check = a.check;
        o.prune = a.prune;
        o.force = a.force;
        o.rename = a.rename;
        o.lock_timeout = lw.timeout = a.lock_timeout;
        /* With --json the diffs would break the document. */
        o.diff_out = a.json ? NULL : stdout;
        r = generate_run(&o, &res, &d);
        if (d.message && !res.stop_signal)
                log_diag(&d);
        if (res.stop_signal)
                die_of_stop_signal(res.stop_signal, &d);
        if (r < 0) {
                status = r == -EINVAL ? EXIT_USAGE : EXIT_FOUND_FAILURE;
                goto out;
        }
        if (a.json) {
                json_t *doc = report_json(&res.write, &res.plan, &a, drift(&res.write), &res.warnings);

                if (config_spider_cache_enabled(&cfg))
                        json_object_set_new(doc, "spider_cache",
                                            res.spider_cache ? json_string_lossy(res.spider_cache) : json_null());
                if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) < 0)
                        log_error("cannot write the JSON document");
                putchar('\n');
                json_decref(doc);
        } else
                print_report(&res.write, &a, res.outdir, g);
        if (res.spider_cache && !a.json) {
                _cleanup_free_ char *sc = term_escape(res.spider_cache);

                printf("Lmod's spider cache rebuilt in %s\n", sc);
        }
        status = a.check && drift(&res.write) ? EXIT_FOUND_FAILURE : res.spider_cache_failed ? EXIT_CACHE_STALE : 0;
out:
        generate_result_release(&res);
        config_release(&cfg);
        return status;
}

const struct command cmd_generate = {
        .name = "generate",
        .summary = "write Lmod or Environment Modules modulefiles for what scan finds",
        .usage = "generate [-o DIR] [--format lua|tcl] [--layout hierarchical|flat]\n"
                 "                [--dry-run] [--check] [--prune] [--force] [--json]\n"
                 "                [--lock-timeout S] [--jobs N] [--rename] [ROOT...]",
        .help = "Scan ROOTs (default: the config's 'search', else the built-in roots), and\n"
                "write one modulefile per install of the CUDA stack ({components}) into DIR,\n"
                "with a modulerc marking each default. Lmod users 'module use DIR/Core'\n"
                "(hierarchical layout) or 'module use DIR' (flat layout).\n"
                "\n"
                "Options:\n"
                "  -o, --output DIR     the modulepath root to write (or config 'output')\n"
                "      --format F       lua (Lmod, default) or tcl (Environment Modules)\n"
                "      --layout L       hierarchical (default: every library under the CUDA\n"
                "                       major they were built for) or flat\n"
                "      --dry-run        print a unified diff of what would change; write nothing\n"
                "      --check          write nothing; exit 1 when the tree is out of date\n"
                "      --prune          remove generated files whose install is gone (refused\n"
                "                       after an incomplete scan, an unmounted or empty root\n"
                "                       included, and without --force when it would remove\n"
                "                       more than half of the modules)\n"
                "      --force          overwrite generated files that were edited by hand, and\n"
                "                       write where another tool's modulefiles are (refused\n"
                "                       otherwise: see SHARED TREES in cudamod(1))\n"
                "      --json           print one JSON document describing the run\n"
                "      --lock-timeout S wait at most S seconds for DIR's lock (default: the\n"
                "                       config's lock_timeout, 60; 0: do not wait), then\n"
                "                       exit 1 naming its holder\n"
                "      --jobs N         scan with N threads at once (default: the config's\n"
                "                       scan.jobs, else one a CPU); the output is the same\n"
                "      --rename         name every module afresh: without it, a name an earlier\n"
                "                       run gave (DIR's index) stays with its install, and a\n"
                "                       new install that would get it gets a suffix instead\n"
                "\n"
                "Writes are atomic and the run holds a lock on DIR. Files cudamod did not\n"
                "write are never touched; generated files edited by hand are left alone\n"
                "without --force. A DIR whose directories hold another tool's modulefiles\n"
                "where cudamod would write is refused without --force; a module name that\n"
                "another tree on MODULEPATH (or the config's 'modulepath') also provides is\n"
                "a warning. With lmod.spider_cache in the config, Lmod's system spider\n"
                "cache is rebuilt after a write that changed something (a line says where).\n"
                "Identical input gives byte-identical files. An install\n"
                "the scan could not read whole keeps its modulefile and default as they are.\n"
                "\n"
                "Exit status: 0 done (with --check: no drift), 1 drift with --check, the\n"
                "tree could not be written, its lock stayed held or --prune was refused,\n"
                "2 usage or configuration error (nothing is written then), 4 the modules\n"
                "are written but Lmod's spider cache could not be rebuilt.\n",
        .min_args = 0,
        .max_args = -1,
        .run = run_generate,
};
