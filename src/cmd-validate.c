/* cmd-validate.c: `cudamod validate`: its options, validate_run
 * (validate-run.c: every module of a modulepath, or the ones named, loaded
 * with what it depends on, through the checks of doc/guide.md, `cudamod validate`), and the
 * report: a line per module, a matrix of module x target when there are
 * several, what each target showed, or one JSON document. */
#include <errno.h>
#include <getopt.h>
#include <time.h>
#include <unistd.h>

#include "cmd-validate.h"
#include "config.h"
#include "diag.h"
#include "output.h"
#include "strbuf.h"
#include "util-path.h"
#include "util-term.h"
#include "util.h"
#include "validate-run.h"
#include "build-config.h"
#include "banned.h"

/* --- the report ------------------------------------------------------------- */

static const char *status_color(const char *s, const struct global_options *g)
{
        if (!g->color)
                return "";
        return streq(s, "fail") || streq(s, "launcher-failed") ? "\033[31m"
               : streq(s, "warn")                               ? "\033[33m"
               : streq(s, "pass")                               ? "\033[32m"
                                                                : "";
}

static void print_message(const char *prefix, const char *msg)
{
        _cleanup_free_ char *safe = term_escape(msg);
        const char *p = safe;

        /* term_escape shows newlines as "\n": one line each, indented. */
        printf("%s", prefix);
        for (const char *nl; (nl = strstr(p, "\\n")); p = nl + 2)
                printf("%.*s\n%*s", (int)(nl - p), p, (int)strlen(prefix), "");
        printf("%s\n", p);
}

/* Module × target, one cell each, when there is more than one target. */
static void print_matrix(const struct validate_result *v, const struct global_options *g)
{
        size_t width = strlen("module");

        for (size_t i = 0; i < v->n_units; i++)
                if (strlen(v->units[i].module) > width)
                        width = strlen(v->units[i].module);
        width = width > 40 ? 40 : width;
        printf("%-*s", (int)width, "module");
        for (size_t k = 0; k < v->n_targets; k++) {
                _cleanup_free_ char *n = term_escape(v->targets[k].name);
                printf("  %-15s", n);
        }
        putchar('\n');
        for (size_t i = 0; i < v->n_units; i++) {
                _cleanup_free_ char *name = term_escape(v->units[i].module);
                json_t *cells = json_object_get(v->results[i], "targets");

                printf("%-*s", (int)width, name);
                for (size_t k = 0; k < v->n_targets; k++) {
                        const char *cell = json_string_value(json_object_get(cells, v->targets[k].name));

                        cell = cell ? cell : "-";
                        printf("  %s%-15s%s", status_color(cell, g), cell, g->color ? "\033[0m" : "");
                }
                putchar('\n');
        }
}

/* Per target: its launcher, whether it worked, and the GPUs seen. */
static void print_targets(const struct validate_result *v, json_t *summary)
{
        const char *list = json_string_value(json_object_get(summary, "arch_list"));
        size_t i, k;
        json_t *t, *d;

        json_array_foreach(json_object_get(summary, "targets"), i, t) {
                const struct launch_target *tg = &v->targets[i];
                const char *status = json_string_value(json_object_get(t, "status"));
                json_t *devs = json_object_get(t, "devices");
                _cleanup_free_ char *name = term_escape(tg->name);
                _cleanup_free_ char *how = term_escape(tg->launcher_text ? tg->launcher_text : "this machine");

                if (v->n_targets == 1 && !tg->launcher_text && !json_array_size(devs))
                        continue;
                printf("target %s (%s): ", name, how);
                if (streq(status, "launcher-failed")) {
                        printf("the launcher failed, so no module was checked there\n");
                        print_message("    ", json_string_value(json_object_get(t, "message")));
                        continue;
                }
                if (streq(status, "unused")) {
                        printf("not used (no module to run there)\n");
                        continue;
                }
                if (json_is_integer(json_object_get(t, "driver_version")))
                        printf("driver %lld", (long long)json_integer_value(json_object_get(t, "driver_version")));
                else
                        printf("no driver");
                if (json_is_string(json_object_get(t, "visible_devices"))) {
                        _cleanup_free_ char *vd = term_escape(json_string_value(json_object_get(t, "visible_devices")));
                        printf(", CUDA_VISIBLE_DEVICES=%s", vd);
                }
                if (json_is_string(json_object_get(t, "host"))) {
                        _cleanup_free_ char *h = term_escape(json_string_value(json_object_get(t, "host")));
                        printf(", on %s", h);
                }
                printf(", %zu GPU%s\n", json_array_size(devs), json_array_size(devs) == 1 ? "" : "s");
                json_array_foreach(devs, k, d) {
                        _cleanup_free_ char *n = term_escape(json_string_value(json_object_get(d, "name")));
                        _cleanup_free_ char *cc = term_escape(json_string_value(json_object_get(d, "compute_capability")));

                        printf("    GPU %lld: %s, compute capability %s, %lld MiB\n",
                               (long long)json_integer_value(json_object_get(d, "index")), n, cc,
                               (long long)json_integer_value(json_object_get(d, "memory_mib")));
                }
        }
        if (list) {
                /* Compute capabilities are what a GPU node's probe said. */
                _cleanup_free_ char *safe = term_escape(list);

                printf("TORCH_CUDA_ARCH_LIST for the GPUs seen: %s\n", safe);
        }
}

static const char *const kinds[] = { "pass", "warn", "fail", "unchecked", "not-checked" };

/* One module's lines: its status, what it was loaded with, the checks
 * that did not pass (all with -v). */
static void print_unit(const char *module, json_t *r, bool many, const struct global_options *g)
{
        json_t *with = json_object_get(r, "with"), *c;
        const char *status = json_string_value(json_object_get(r, "status"));
        _cleanup_free_ char *name = term_escape(module);
        size_t k;

        printf("%s%-4s%s  %s", status_color(status, g), streq(status, "not-checked") ? "not checked" : status,
               g->color ? "\033[0m" : "", name);
        if (json_array_size(with)) {
                printf(" (with");
                json_array_foreach(with, k, c) {
                        _cleanup_free_ char *w = term_escape(json_string_value(c));
                        printf(" %s", w);
                }
                printf(")");
        }
        putchar('\n');
        json_array_foreach(json_object_get(r, "checks"), k, c) {
                const char *cs = json_string_value(json_object_get(c, "status"));
                const char *id = json_string_value(json_object_get(c, "id"));
                const char *on = json_string_value(json_object_get(c, "target"));
                _cleanup_free_ char *label = many && on ? xasprintf("%s@%s", id, on) : xstrdup(id);
                _cleanup_free_ char *safe = term_escape(label);
                _cleanup_free_ char *prefix = NULL;

                if (streq(cs, "pass") && g->verbosity <= 0 && !streq(id, "device"))
                        continue;
                prefix = xasprintf("      %-*s %-4s  ", many ? 14 : 7, safe, cs);
                print_message(prefix, json_string_value(json_object_get(c, "message")));
        }
}

/* What the run's callbacks share: the text report's modules printed as
 * they finish (one target: with several, the matrix comes first, so they
 * wait for the end), and the progress line. */
struct live {
        const struct global_options *g;
        bool stream;         /* the text report: print modules as they finish */
        size_t printed;      /* modules printed so far */
        double start;        /* when the run began (s, monotonic), or 0 */
        bool progress_shown; /* a progress line is on stderr */
};

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_clear(struct live *l)
{
        if (!l->progress_shown)
                return;
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        l->progress_shown = false;
}

/* validate_run_options.unit_done: the module's lines at once, flushed,
 * so that `validate | cat` shows each module as it is done. */
static void unit_done(const char *module, json_t *result, size_t n_targets, void *userdata)
{
        struct live *l = userdata;

        if (!l->stream || n_targets > 1)
                return;
        progress_clear(l);
        print_unit(module, result, false, l->g);
        fflush(stdout);
        l->printed++;
}

static void print_report(const struct validate_result *v, json_t *summary, const struct live *l)
{
        const struct global_options *g = l->g;
        size_t counts[ELEMENTSOF(kinds)] = { 0 }, broken = 0, i;
        bool many = v->n_targets > 1;
        json_t *t;

        if (many)
                print_matrix(v, g);
        for (i = 0; i < v->n_units; i++) {
                const char *status = json_string_value(json_object_get(v->results[i], "status"));

                for (size_t s = 0; s < ELEMENTSOF(kinds); s++)
                        counts[s] += streq(status, kinds[s]);
                /* Those unit_done printed already. */
                if (i >= l->printed)
                        print_unit(v->units[i].module, v->results[i], many, g);
        }
        print_targets(v, summary);
        json_array_foreach(json_object_get(summary, "targets"), i, t)
                broken += streq(json_string_value(json_object_get(t, "status")), "launcher-failed");
        printf("%zu module%s: %zu pass, %zu warn, %zu fail", v->n_units, v->n_units == 1 ? "" : "s",
               counts[0], counts[1], counts[2]);
        if (counts[3])
                printf(", %zu unchecked (nothing could be checked)", counts[3]);
        if (counts[4])
                printf(", %zu not checked (not of the CUDA stack)", counts[4]);
        if (many || broken)
                printf("; %zu target%s, %zu whose launcher failed", v->n_targets, v->n_targets == 1 ? "" : "s",
                       broken);
        putchar('\n');
}

/* validate_run_options.progress: "validating: 3/12 modules" on a terminal,
 * once the run has taken a second (a quick run shows none). */
static void unit_progress(size_t done, size_t total, bool end, void *userdata)
{
        struct live *l = userdata;

        if (l->g->verbosity < 0 || !isatty(STDERR_FILENO))
                return;
        if (!l->start)
                l->start = now_s();
        if (end) {
                progress_clear(l);
                return;
        }
        if (now_s() - l->start < 1.0)
                return;
        fprintf(stderr, "\r\033[Kvalidating: %zu/%zu modules", done, total);
        fflush(stderr);
        l->progress_shown = true;
}

/* --- the command ------------------------------------------------------------- */

/* The probe: $CUDAMOD_PROBE, else next to cudamod (a build tree), else
 * in ../libexec/cudamod relative to cudamod (an install, moved or not),
 * else where `meson install` put it. */
static char *find_probe(void)
{
        static const char *const rel[] = { "probe/cudamod-probe", "cudamod-probe", CUDAMOD_PROBE_RELATIVE };
        const char *env = getenv("CUDAMOD_PROBE");
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

        if (env && *env && access(env, X_OK) == 0)
                return xstrdup(env);
        if (n > 0) {
                _cleanup_free_ char *dir = NULL;

                self[n] = '\0';
                dir = path_dirname(self);
                for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
                        _cleanup_free_ char *p = path_join(dir, rel[i]);

                        if (access(p, X_OK) == 0)
                                return path_absolute(p);
                }
        }
        if (access(CUDAMOD_PROBE_INSTALLED, X_OK) == 0)
                return xstrdup(CUDAMOD_PROBE_INSTALLED);
        return NULL;
}

static int run_validate(int argc, char **argv, const struct global_options *g)
{
        static const struct option options[] = {
                { "modulepath", required_argument, NULL, 'm' },
                { "jobs", required_argument, NULL, 'j' },
                { "launcher", required_argument, NULL, 'L' },
                { "timeout", required_argument, NULL, 't' },
                { "driver-libdir", required_argument, NULL, 'D' },
                { "require-device", no_argument, NULL, 'R' },
                { "target", required_argument, NULL, 'T' },
                { "arch-list", no_argument, NULL, 'A' },
                { "no-compile", no_argument, NULL, 'n' },
                { "no-strict-modes", no_argument, NULL, 'S' },
                { "trust-modulefiles", no_argument, NULL, 'U' },
                { "strict", no_argument, NULL, 's' },
                { "json", no_argument, NULL, 'J' },
                { "lock-timeout", required_argument, NULL, 'W' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        long lock_timeout = 0;
        _cleanup_(strv_release) struct strv given = { 0 }, wanted = { 0 }, mp = { 0 };
        _cleanup_(config_release) struct config cfg = { 0 };
        _cleanup_free_ char *probe = NULL;
        _cleanup_(validate_result_release) struct validate_result v = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        const char *launcher_str = NULL, *driver_libdir = NULL;
        bool json = false, require_device = false, no_compile = false, arch_list = false;
        bool no_strict_modes = false, strict = false, trust = false;
        json_t *summary;
        struct lock_wait lw = { .g = g };
        struct live live = { .g = g };
        unsigned long jobs = 1, timeout = 0;
        char *end;
        int c, r;

        while ((c = getopt_long(argc, argv, "hj:", options, NULL)) != -1) {
                switch (c) {
                case 'm':
                        strv_add(&given, optarg);
                        break;
                case 'j':
                        errno = 0;
                        jobs = strtoul(optarg, &end, 10);
                        if (errno || *end || jobs < 1 || jobs > 64) {
                                log_error("-j takes a number from 1 to 64, not '%s'", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'L':
                        launcher_str = optarg;
                        break;
                case 't':
                        errno = 0;
                        timeout = strtoul(optarg, &end, 10);
                        if (errno || *end || timeout < 1 || timeout > 86400) {
                                log_error("--timeout takes seconds from 1 to 86400, not '%s'", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'D':
                        driver_libdir = optarg;
                        break;
                case 'R':
                        require_device = true;
                        break;
                case 'n':
                        no_compile = true;
                        break;
                case 's':
                        strict = true;
                        break;
                case 'S':
                        no_strict_modes = true;
                        break;
                case 'U':
                        trust = true;
                        break;
                case 'J':
                        json = true;
                        break;
                case 'W':
                        if (parse_lock_timeout(optarg, &lock_timeout) < 0)
                                return EXIT_USAGE;
                        break;
                case 'T':
                        strv_add(&wanted, optarg);
                        break;
                case 'A':
                        arch_list = true;
                        break;
                case 'h':
                        command_print_help(&cmd_validate, stdout);
                        return finish_stdout(0);
                default:
                        return command_bad_option(&cmd_validate, argv);
                }
        }
        if (!command_check_args(&cmd_validate, argc - optind))
                return EXIT_USAGE;
        if (load_config(g, &cfg) < 0 || modulepath_from_options(g, &given, &cfg, &mp) < 0)
                return EXIT_USAGE;
        if (!lock_timeout)
                lock_timeout = cfg.lock_timeout ? (long)cfg.lock_timeout : -1;
        probe = find_probe();
        lw.timeout = lock_timeout;
        live.stream = !json && !arch_list;
        r = validate_run(&(struct validate_run_options){
                                 .cfg = &cfg, .modulepath = &mp,
                                 .modules = argv + optind, .n_modules = (size_t)(argc - optind),
                                 .launcher = launcher_str, .targets = &wanted,
                                 .probe = probe, .driver_libdir = driver_libdir, .timeout = (unsigned)timeout,
                                 .require_device = require_device, .no_compile = no_compile,
                                 .no_strict_modes = no_strict_modes, .trust_modulefiles = trust,
                                 .jobs = (unsigned)jobs, .lock_timeout = lock_timeout,
                                 .log = { .say = log_message, .userdata = (void *)g },
                                 .progress = unit_progress, .unit_done = unit_done,
                                 .progress_userdata = &live,
                                 .on_wait = log_lock_wait, .wait_userdata = &lw,
                         },
                         &v, &d);
        if (r < 0) {
                log_diag(&d);
                /* No module: an unmounted or mistyped tree must not look
                 * validated. */
                return r == -ENOENT ? finish_stdout(EXIT_FOUND_FAILURE) : EXIT_USAGE;
        }
        summary = v.summary;
        if (arch_list) {
                const char *list = json_string_value(json_object_get(summary, "arch_list"));

                if (!list) {
                        log_error("no GPU was seen on %s, so there is no arch list",
                                  v.n_targets == 1 ? "the target" : "any target");
                        return finish_stdout(EXIT_FOUND_FAILURE);
                }
                {
                        _cleanup_free_ char *safe = term_escape(list);

                        printf("%s\n", safe);
                }
                return finish_stdout(0);
        }
        if (json) {
                json_t *mods = json_array();

                for (size_t i = 0; i < v.n_units; i++)
                        json_array_append(mods, v.results[i]);
                json_dump_stdout(json_pack("{s:s, s:i, s:O, s:O, s:o}", "cudamod", "validate", "format", 1,
                                           "targets", json_object_get(summary, "targets"), "arch_list",
                                           json_object_get(summary, "arch_list"), "modules", mods));
        } else
                print_report(&v, summary, &live);
        return finish_stdout(validate_result_failed(&v, strict) ? EXIT_FOUND_FAILURE : 0);
}

const struct command cmd_validate = {
        .name = "validate",
        .summary = "prove that modules load, link and run (and query the GPUs)",
        .usage = "validate [--modulepath DIR] [-j N] [--target NAME... | --launcher CMD]\n"
                 "                [--timeout S] [--driver-libdir DIR] [--require-device]\n"
                 "                [--no-compile] [--no-strict-modes] [--trust-modulefiles]\n"
                 "                [--strict] [--arch-list]\n"
                 "                [--json]"
                 " [--lock-timeout S]\n"
                 "                [MODULE...]",
        .help = "Load every module of the modulepath (and, in a hierarchy, every module\n"
                "below each cuda module, with that cuda loaded) and run these checks,\n"
                "each pass, warn, fail or skip with a message saying what to do:\n"
                "  syntax   the file parses and loads (Lua: cudamod's Lmod sandbox;\n"
                "           Tcl: a Tcl safe interpreter); a load that sets LD_PRELOAD,\n"
                "           LD_AUDIT, GCONV_PATH, LD_DEBUG_OUTPUT, LD_PROFILE(_OUTPUT),\n"
                "           COMPILER_PATH or GCC_EXEC_PREFIX fails here, before anything\n"
                "           runs with it\n"
                "  paths    every directory it adds exists; no stubs on LD_LIBRARY_PATH;\n"
                "           no system directory put in front\n"
                "  closure  every library's DT_NEEDED resolves (driver libraries excepted)\n"
                "  lazy     what cuDNN and cuSPARSE dlopen later resolves, to one version\n"
                "  build    a C program finds the headers and links with only the\n"
                "           module's CPATH and LIBRARY_PATH\n"
                "  run      cudamod-probe, started with only the module's environment,\n"
                "           loads the libraries and reads versions matching the headers\n"
                "           and the module's version\n"
                "  device   the driver is new enough; the GPUs (name, compute capability,\n"
                "           memory). No driver or no GPU: skip\n"
                "\n"
                "Options:\n"
                "  --modulepath DIR     where the modules are (repeatable); default: the\n"
                "                       output directory of the site config file given,\n"
                "                       else $MODULEPATH, else the default config's output\n"
                "  -j, --jobs N         validate N modules at once (output order is fixed)\n"
                "  --target NAME        run and device only on this target of the config's\n"
                "                       validate.targets (repeatable; default: all of them)\n"
                "  --launcher CMD       one target instead: start the probe through CMD, e.g.\n"
                "                       \"srun -p gpu --gres=gpu:1 -t 5\" (split into words,\n"
                "                       no shell)\n"
                "  --timeout S          seconds for one compiler or probe run (default 120);\n"
                "                       then SIGTERM (srun cancels its step), SIGKILL 2 s later\n"
                "  --driver-libdir DIR  where libcuda.so.1 is, when not on the loader path\n"
                "  --require-device     no driver or no GPU fails the device check\n"
                "  --no-compile         skip the build check (its compiler is 'cc' on\n"
                "                       cudamod's own PATH, never the module's) and the\n"
                "                       nvcc and cmake checks (the module's nvcc; cmake\n"
                "                       from cudamod's PATH)\n"
                "  --no-strict-modes    as root, load modulefiles that another user could\n"
                "                       change (by default such a file, or a directory\n"
                "                       above it in the modulepath, owned by another user\n"
                "                       or writable by group or others, is refused)\n"
                "  --trust-modulefiles  let the nvcc and cmake checks start what the module\n"
                "                       names (its PATH's programs, CC, CXX, CUDACXX,\n"
                "                       *_COMPILER_LAUNCHER, CMAKE_* programs), with its whole\n"
                "                       environment; by default such a variable fails them,\n"
                "                       and they start cmake, c++ and make from cudamod's\n"
                "                       PATH with only the module's paths and CUDA variables\n"
                "  --strict             a module of the CUDA stack that nothing could be\n"
                "                       checked of (unchecked) fails too\n"
                "  --arch-list          print only the TORCH_CUDA_ARCH_LIST of the GPUs seen\n"
                "                       (exit 0 when there is one, whatever else failed)\n"
                "  --json               print one JSON document (format 1)\n"
                "  --lock-timeout S     wait at most S seconds for the output directory's\n"
                "                       lock to record the results (default: the config's\n"
                "                       lock_timeout, 60; 0: do not wait), then exit 1\n"
                "                       naming its holder\n"
                "\n"
                "With several targets the report is a matrix, module x target; a target\n"
                "whose launcher fails is reported as such, not as a module failure. What\n"
                "each target showed is kept in the output directory's index, where\n"
                "'generate' finds it for pytorch.cuda_arch_list: detect.\n"
                "MODULE keeps the modules of that full name, name or partial version\n"
                "(cudnn/9.7.1, cudnn, cudnn/9).\n"
                "A module passes only when closure, build, nvcc, cmake or run ran and\n"
                "held; one of the CUDA stack with all of them skipped is 'unchecked', and\n"
                "a module of another package (gcc, openmpi) is 'not checked'; both are\n"
                "counted apart.\n"
                "Exit status: 0 nothing failed, 1 a check or a target's launcher failed\n"
                "(or, with --strict, a module is unchecked; or the lock stayed held past\n"
                "--lock-timeout), 2 usage or configuration error.\n",
        .min_args = 0,
        .max_args = -1,
        .run = run_validate,
};
