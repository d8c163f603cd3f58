/* cmd-doctor.c: `cudamod doctor`: what a torch build needs, where each need
 * resolves in this environment, what is wrong, and the modules that fix it
 * (doctor.h does the work; this file prints it). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>

#include "cmd-doctor.h"
#include "cmd-doctor-build.h"
#include "component-table.h"
#include "component.h"
#include "config.h"
#include "diag.h"
#include "output.h"
#include "detect.h"
#include "doctor.h"
#include "evaluate.h"
#include "install.h"
#include "libfile.h"
#include "resolve.h"
#include "strbuf.h"
#include "util-path.h"
#include "util-term.h"
#include "util.h"
#include "banned.h"

/* --- JSON ---------------------------------------------------------------- */

static json_t *string_or_null(const char *s)
{
        return s ? json_string_lossy(s) : json_null();
}

/* "built_for": the CUDA major, the sonames, and each library's version
 * linked against (by component name; null when not known). */
static json_t *built_for(const struct doctor_report *r)
{
        json_t *o = json_pack("{s:o, s:o}", "cuda_major",
                              r->built.cuda_major ? json_integer((json_int_t)r->built.cuda_major) : json_null(),
                              "sonames", json_strv(&r->built.sonames));

        if (!o)
                die_oom();
        FOREACH_COMPONENT(c)
                if (!c->toolkit)
                        json_set(o, c->name, string_or_null(r->built.linked[c->index]));
        return o;
}

static json_t *report_json(const struct doctor_report *r, const struct strv *mp)
{
        json_t *libs = json_array(), *findings = json_array(), *modules = json_array();
        json_t *torch = json_null(), *toolkit = json_null();

        if (r->torch_dir)
                torch = json_pack("{s:o, s:o, s:o, s:o}", "path", json_string_lossy(r->torch_dir),
                                  "version", string_or_null(r->built.torch_version), "git_version",
                                  string_or_null(r->built.git_version), "cuda", string_or_null(r->built.cuda));
        if (r->toolkit)
                toolkit = json_pack("{s:o, s:s, s:o}", "path", json_string_lossy(r->toolkit), "from",
                                    r->toolkit_source, "version", string_or_null(r->toolkit_version));
        for (size_t i = 0; i < r->n_libs; i++) {
                const struct doctor_library *l = &r->libs[i];
                json_t *needs = json_array();

                for (size_t k = 0; k < l->n_needs; k++) {
                        const struct doctor_need *n = &l->needs[k];

                        json_array_append_new(
                                needs, json_pack("{s:o, s:o, s:s, s:b}", "soname", json_string_lossy(n->soname),
                                                 "path", string_or_null(n->path), "source",
                                                 resolve_source_to_string(n->source), "driver", n->driver));
                }
                json_array_append_new(libs, json_pack("{s:o, s:o, s:o, s:o, s:o}", "path", json_string_lossy(l->path),
                                                      "needed_by", string_or_null(l->needed_by), "runpath",
                                                      string_or_null(l->runpath), "rpath",
                                                      string_or_null(l->rpath), "needs", needs));
        }
        for (size_t i = 0; i < r->n_findings; i++) {
                const struct doctor_finding *f = &r->findings[i];

                json_array_append_new(findings, json_pack("{s:s, s:o, s:o, s:o, s:o}", "id", f->id, "ref",
                                                          string_or_null(f->ref), "what", json_string_lossy(f->what),
                                                          "why", json_string_lossy(f->why), "fix",
                                                          json_string_lossy(f->fix)));
        }
        for (size_t i = 0; i < r->n_modules; i++) {
                const struct doctor_module *m = &r->modules[i];

                json_array_append_new(modules, json_pack("{s:o, s:s, s:o, s:o, s:b}", "module",
                                                         json_string_lossy(m->module), "kind", m->kind,
                                                         "cuda_major",
                                                         m->cuda_major ? json_integer((json_int_t)m->cuda_major)
                                                                       : json_null(),
                                                         "provides", json_strv(&m->provides), "chosen",
                                                         strv_contains(&r->chosen, m->module)));
        }
        return json_pack(
                "{s:s, s:i, s:s, s:o, s:o, s:{s:o, s:o, s:o}, s:o, s:o, s:o,"
                " s:{s:o, s:o, s:o, s:o, s:o, s:o}}",
                "cudamod", "doctor", "format", 1, "status", r->n_findings ? "problems" : "ok", "torch", torch,
                "built_for", built_for(r), "environment", "ld_library_path", json_strv(&r->ld_library_path),
                "loaded_modules", json_strv(&r->loaded), "toolkit", toolkit, "libraries", libs, "findings",
                findings, "notes", json_strv(&r->notes), "modules", "modulepath", json_strv(mp), "available",
                modules, "chosen", json_strv(&r->chosen), "module_load", string_or_null(r->module_load),
                "unprovided", json_strv(&r->unprovided), "unavailable", json_strv(&r->unavailable));
}

/* --- text ---------------------------------------------------------------- */

static void print_wrapped(const char *prefix, const char *text)
{
        print_folded(prefix, strlen(prefix), text);
}

/* A need worth showing without -v: not one of torch's own libraries
 * beside it, not a system library. */
static bool interesting(const struct doctor_library *l, const struct doctor_need *n)
{
        _cleanup_free_ char *dir = NULL, *own = NULL;

        if (!n->path || n->driver)
                return true;
        if (n->source == RESOLVE_LDCACHE || n->source == RESOLVE_DEFAULT_DIR)
                return !!component_of_soname(n->soname);
        dir = path_dirname(n->path);
        own = path_dirname(l->path);
        return !streq(dir, own);
}

static void print_libraries(const struct doctor_report *r, const struct global_options *g)
{
        size_t hidden = 0;

        printf("libraries (%zu)\n", r->n_libs);
        for (size_t i = 0; i < r->n_libs; i++) {
                const struct doctor_library *l = &r->libs[i];
                _cleanup_free_ char *p = term_escape(l->path);

                if (l->needed_by) {
                        _cleanup_free_ char *by = term_escape(l->needed_by);
                        printf("  %s (needed by %s)\n", p, by);
                } else
                        printf("  %s\n", p);
                for (size_t k = 0; k < l->n_needs; k++) {
                        const struct doctor_need *n = &l->needs[k];
                        _cleanup_free_ char *s = term_escape(n->soname);

                        if (g->verbosity <= 0 && !interesting(l, n)) {
                                hidden++;
                                continue;
                        }
                        if (n->path) {
                                _cleanup_free_ char *where = term_escape(n->path);
                                printf("    %-24s %s (%s)\n", s, where, resolve_source_to_string(n->source));
                        } else if (n->driver)
                                printf("    %-24s the driver's: not found here\n", s);
                        else
                                printf("    %-24s %sNOT FOUND%s\n", s, g->color ? "\033[31m" : "",
                                       g->color ? "\033[0m" : "");
                }
        }
        if (hidden)
                printf("  (%zu more needs resolve beside the libraries or in the system; -v shows them)\n",
                       hidden);
}

static void print_report(const struct doctor_report *r, const struct strv *mp,
                         const struct global_options *g)
{
        /* Every string below that came from a file (version.py, sonames,
         * version files) is escaped: a terminal never sees its control bytes. */
        if (r->torch_dir) {
                _cleanup_free_ char *t = term_escape(r->torch_dir);
                _cleanup_free_ char *v = term_escape(r->built.torch_version ? r->built.torch_version
                                                                           : "(version unknown)");

                printf("torch %s", v);
                if (r->built.git_version) {
                        _cleanup_free_ char *gv = term_escape(r->built.git_version);
                        printf(" (git %.12s)", gv);
                }
                printf(" at %s\n", t);
        }
        if (r->built.cuda) {
                _cleanup_free_ char *c = term_escape(r->built.cuda);
                printf("  built for CUDA %s\n", c);
        } else if (r->built.cuda_major)
                printf("  built for CUDA %lu (from the libcudart it needs)\n", r->built.cuda_major);
        else if (r->torch_dir)
                printf("  needs no CUDA runtime (a CPU build?)\n");
        if (r->built.sonames.len) {
                _cleanup_free_ char *s = strv_join(&r->built.sonames, " ");
                print_wrapped(r->torch_dir ? "  needs " : "the libraries need ", s);
        }
        {
                _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

                FOREACH_COMPONENT(c)
                        if (r->built.linked[c->index]) {
                                _cleanup_free_ char *v = term_escape(r->built.linked[c->index]);
                                strbuf_addf(&sb, " %s %s", c->label, v);
                        }
                if (sb.len)
                        printf("  linked against%s (beside its RUNPATH)\n", sb.buf);
        }
        printf("environment\n");
        {
                _cleanup_free_ char *loaded = strv_join(&r->loaded, " ");

                if (!r->ld_library_path.len)
                        print_wrapped("  LD_LIBRARY_PATH  ", "(unset)");
                for (size_t i = 0; i < r->ld_library_path.len; i++)
                        print_wrapped(i ? "                   " : "  LD_LIBRARY_PATH  ", r->ld_library_path.items[i]);
                print_wrapped("  modules loaded   ", *loaded ? loaded : "(none)");
        }
        if (r->toolkit) {
                _cleanup_free_ char *t = xasprintf("%s (CUDA %s, from %s)", r->toolkit,
                                                   r->toolkit_version ? r->toolkit_version : "version unknown",
                                                   r->toolkit_source);
                print_wrapped("  toolkit          ", t);
        }
        print_libraries(r, g);
        if (r->n_findings) {
                printf("%sproblems (%zu)%s\n", g->color ? "\033[1;31m" : "", r->n_findings,
                       g->color ? "\033[0m" : "");
                for (size_t i = 0; i < r->n_findings; i++) {
                        const struct doctor_finding *f = &r->findings[i];
                        _cleanup_free_ char *ref = f->ref ? term_escape(f->ref) : NULL;
                        _cleanup_free_ char *head = xasprintf("  %zu. [%s%s%s] ", i + 1, ref ? ref : "",
                                                              ref ? " " : "", f->id);

                        print_folded(head, 5, f->what);
                        print_wrapped("     why: ", f->why);
                        print_wrapped("     fix: ", f->fix);
                }
        }
        if (r->notes.len) {
                printf("notes\n");
                for (size_t i = 0; i < r->notes.len; i++)
                        print_wrapped("  - ", r->notes.items[i]);
        }
        if (mp->len) {
                _cleanup_free_ char *m = strv_join(mp, ":");
                _cleanup_free_ char *head = xasprintf("modules that provide what it needs (in %s)", m);

                print_wrapped("", head);
                for (size_t i = 0; i < r->n_modules; i++) {
                        const struct doctor_module *d = &r->modules[i];
                        _cleanup_free_ char *what = strv_join(&d->provides, " ");
                        _cleanup_free_ char *name = term_escape(d->module);
                        _cleanup_free_ char *cuda = d->cuda_major ? xasprintf("CUDA %lu", d->cuda_major)
                                                                  : xstrdup("CUDA ?");

                        _cleanup_free_ char *lead = xasprintf("  %s %-20s %-8s ",
                                                              strv_contains(&r->chosen, d->module) ? "*" : " ",
                                                              name, cuda);

                        print_wrapped(lead, what);
                }
                if (!r->n_modules)
                        printf("  (none)\n");
                if (r->unprovided.len) {
                        _cleanup_free_ char *u = strv_join(&r->unprovided, " ");
                        print_wrapped("  no module chosen provides: ", u);
                }
                for (size_t i = 0; i < r->unavailable.len; i++)
                        print_wrapped("  ", r->unavailable.items[i]);
                if (r->module_load) {
                        printf("to use this torch:\n");
                        print_wrapped("  ", r->module_load);
                }
        }
        if (r->n_findings)
                printf("%zu problem%s found\n", r->n_findings, r->n_findings == 1 ? "" : "s");
        else
                printf("nothing wrong found\n");
}

/* --- the command ------------------------------------------------------------- */

static int run_doctor(int argc, char **argv, const struct global_options *g)
{
        static const struct option options[] = {
                { "modulepath", required_argument, NULL, 'm' },
                { "json", no_argument, NULL, 'J' },
                { "trust-modulefiles", no_argument, NULL, 'T' },
                { "build", no_argument, NULL, 'B' },
                { "no-compile", no_argument, NULL, 'N' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(strv_release) struct strv given = { 0 }, mp = { 0 };
        _cleanup_(config_release) struct config cfg = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct doctor_report r = { 0 };
        bool json = false, trust = false, build = false, no_compile = false;
        const char *env_mp = getenv("MODULEPATH");
        int c, status;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
                switch (c) {
                case 'm':
                        strv_add(&given, optarg);
                        break;
                case 'J':
                        json = true;
                        break;
                case 'T':
                        trust = true;
                        break;
                case 'B':
                        build = true;
                        break;
                case 'N':
                        no_compile = true;
                        break;
                case 'h':
                        command_print_help(&cmd_doctor, stdout);
                        return finish_stdout(0);
                default:
                        return command_bad_option(&cmd_doctor, argv);
                }
        }
        if (build && argc > optind) {
                log_error("doctor --build takes no PATH (it looks at this shell's build environment)");
                return EXIT_USAGE;
        }
        if (no_compile && !build) {
                log_error("--no-compile goes with --build");
                return EXIT_USAGE;
        }
        if (!build && !command_check_args(&cmd_doctor, argc - optind))
                return EXIT_USAGE;
        if (load_config(g, &cfg) < 0)
                return EXIT_USAGE;
        /* Without a modulepath anywhere, doctor still diagnoses: it only
         * cannot name modules. */
        if ((given.len || (env_mp && *env_mp) || (cfg.output && is_dir_at(AT_FDCWD, cfg.output))) &&
            modulepath_from_options(g, &given, &cfg, &mp) < 0)
                return EXIT_USAGE;
        if (build)
                return doctor_build_command(&(struct doctor_options){ .modulepath = &mp, .trust_modulefiles = trust,
                                                                      .sysroot = getenv("CUDAMOD_TEST_ROOT"),
                                                                      .no_compile = no_compile,
                                                                      .arch_list = cfg.cuda_arch_list },
                                            json, &mp, g);
        if (doctor_run(&(struct doctor_options){ .modulepath = &mp, .trust_modulefiles = trust }, argv + optind, (size_t)(argc - optind), &r,
                       &d) < 0) {
                log_diag(&d);
                return EXIT_USAGE;
        }
        if (json)
                json_dump_stdout(report_json(&r, &mp));
        else
                print_report(&r, &mp, g);
        status = r.n_findings ? EXIT_FOUND_FAILURE : 0;
        doctor_report_release(&r);
        return finish_stdout(status);
}

const struct command cmd_doctor = {
        .name = "doctor",
        .summary = "diagnose a PyTorch build against the environment and the modules",
        .usage = "doctor [--modulepath DIR] [--trust-modulefiles] [--json] PATH...\n"
                 "       cudamod doctor --build [--no-compile] [--modulepath DIR] [--trust-modulefiles] [--json]",
        .help = "PATH is a torch package directory (site-packages/torch, or its lib/),\n"
                "another directory of shared libraries, or library files. For each\n"
                "library: what it needs (DT_NEEDED) and where each need resolves now\n"
                "(LD_LIBRARY_PATH, its RUNPATH with $ORIGIN, the loader cache, the\n"
                "system directories); the driver's libraries are the driver's business.\n"
                "Torch's own libraries (libtorch*, libc10*, ...) are followed wherever\n"
                "they resolve (a distribution's /usr/lib/x86_64-linux-gnu).\n"
                "For torch: the CUDA it was built for (version.py), the CUDA, cuDNN and\n"
                "NCCL libraries it needs, and the versions it was linked against.\n"
                "\n"
                "Problems found, each with why it matters and what to do:\n"
                "  unresolved          a need resolves nowhere (OSError or ImportError at\n"
                "                      import, R1)\n"
                "  stubs               a CUDA stubs directory on LD_LIBRARY_PATH or in a\n"
                "                      RUNPATH (R9)\n"
                "  cudnn-versions      two cuDNN versions reachable (R5)\n"
                "  cudnn-sublibraries  cuDNN sub-libraries missing or from another\n"
                "                      directory (R3, R5)\n"
                "  cudnn-build         the cuDNN found is older than torch's build (R2)\n"
                "  nccl-build          the NCCL found is older than torch's build (R8)\n"
                "  cuda-major          a library built for another CUDA major, or a\n"
                "                      CUDA library from another major's toolkit (R5)\n"
                "  nvjitlink           libnvJitLink older than cuSPARSE's toolkit (R7)\n"
                "  nvidia-wheels       site-packages/nvidia/* wheels beside a source-built\n"
                "                      torch, which torch would preload\n"
                "  toolkit-major       the loaded toolkit's major is not torch's (B9)\n"
                "\n"
                "With a modulepath, the modules providing what torch needs, one set of\n"
                "one CUDA major, and the line that loads it. The modulefiles are\n"
                "evaluated, never run: Lua ones in cudamod's Lmod sandbox, Tcl ones in\n"
                "a Tcl safe interpreter (tclsh), where exec, open, file and source do\n"
                "not exist.\n"
                "\n"
                "Options:\n"
                "  --modulepath DIR  where the modules are (repeatable); default: the\n"
                "                    output directory of the site config file given,\n"
                "                    else $MODULEPATH, else the default config's\n"
                "                    output when it exists\n"
                "  --trust-modulefiles\n"
                "                    have Environment Modules' modulecmd.tcl (or Lmod)\n"
                "                    evaluate Tcl modulefiles, running what they say\n"
                "                    as you\n"
                "  --json            print one JSON document (format 1)\n"
                "  --build           no PATH: what a PyTorch source build (python setup.py\n"
                "                    develop) in this shell would pick, emulating its\n"
                "                    CMake searches (FindCUDA, FindCUDAToolkit, FindCUDNN,\n"
                "                    FindNCCL, cuSPARSELt, cuDSS, MAGMA, NVSHMEM, CUPTI):\n"
                "                    each header and library, its version and CUDA\n"
                "                    major, the variable or default it came from, and\n"
                "                    the problems. Fatal (the configure stops):\n"
                "                    required-missing (USE_SYSTEM_NCCL or USE_SYSTEM_LIBS\n"
                "                    with no NCCL), conflicting-cuda, no-cuda-compiler,\n"
                "                    host-compiler, cuda-compile and glibc-math (a probe\n"
                "                    .cu with cuda_runtime.h and <cmath>, compiled with\n"
                "                    CMake's nvcc and host compiler, fails), mixed-install\n"
                "                    of NCCL versions, arch-list (a TORCH_CUDA_ARCH_LIST\n"
                "                    entry not PyTorch's syntax, or one the toolkit's\n"
                "                    nvcc does not compile for). Warnings (it goes on):\n"
                "                    cuda-major, mixed-install, option-off, stubs,\n"
                "                    no-toolkit, arch-list-unset (unset, and no GPU in\n"
                "                    /proc/driver/nvidia/gpus nor /dev/nvidia0). A\n"
                "                    library found only in the system's places is a note\n"
                "  --no-compile      with --build: compile no probe; glibc-math is then\n"
                "                    predicted from the glibc and CUDA versions\n"
                "\n"
                "Exit status: 0 nothing wrong, 1 a problem found (--build: warnings only),\n"
                "2 usage error, 3 (--build) a fatal problem: the configure would stop.\n",
        .min_args = 1,
        .max_args = -1,
        .run = run_doctor,
};
