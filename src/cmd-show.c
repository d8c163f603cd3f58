/* cmd-show.c: `cudamod show [--modulepath DIR] [--json] MODULE...`: the
 * environment a user would have after `module load MODULE...`. */
#include <errno.h>
#include <getopt.h>

#include "cmd-show.h"
#include "config.h"
#include "diag.h"
#include "evaluate-env.h"
#include "output.h"
#include "evaluate.h"
#include "install.h"
#include "strbuf.h"
#include "util-term.h"
#include "util.h"
#include "banned.h"

/* Whether module ("cudnn/9.7.1") is what spec names as Lmod resolves a
 * name: "cudnn", "cudnn/9", "cudnn/9.7", "cudnn/9.7.1". */
static bool spec_names(const char *spec, const char *module)
{
        size_t n = strlen(spec);

        return strncmp(module, spec, n) == 0 && (module[n] == '/' || module[n] == '.' || !module[n]) &&
               (strchr(spec, '/') || module[n] == '/');
}

/* A spec the modulepath does not show: where it is behind other modules
 * of a hierarchy (cudnn behind a cuda module), name them, as `module
 * spider` does; the whole hierarchy is walked (module_units_discover). */
static void say_behind(const struct evaluate_options *eo, char *const *specs, size_t n_specs)
{
        _cleanup_(strv_release) struct strv start = { 0 };
        struct module_unit *units = NULL;
        size_t n_units = 0;

        evaluate_basic_env(&start);
        module_units_discover(&(struct evaluate_options){ .environ = start.items, .modulepath = eo->modulepath,
                                                          .trust_modulefiles = eo->trust_modulefiles },
                              &units, &n_units);
        for (size_t s = 0; s < n_specs; s++) {
                _cleanup_(strv_release) struct strv lines = { 0 };
                bool visible = false;

                for (size_t i = 0; i < n_units; i++)
                        visible |= units[i].chain.len == 1 && spec_names(specs[s], units[i].module);
                for (size_t i = 0; !visible && i < n_units; i++) {
                        const struct module_unit *u = &units[i];
                        _cleanup_free_ char *before = NULL, *line = NULL, *name = NULL;

                        if (u->chain.len < 2 || !spec_names(specs[s], u->module))
                                continue;
                        {
                                struct strv pre = { .items = u->chain.items, .len = u->chain.len - 1 };
                                _cleanup_free_ char *joined = strv_join(&pre, " ");
                                before = term_escape(joined);
                        }
                        name = term_escape(u->module);
                        line = xasprintf("%s is behind %s: module load %s first", name, before, before);
                        if (!strv_contains(&lines, line))
                                strv_add(&lines, line);
                }
                for (size_t i = 0; i < lines.len; i++)
                        log_error("%s", lines.items[i]);
        }
        for (size_t i = 0; i < n_units; i++)
                module_unit_release(&units[i]);
        free(units);
}

static const char *change_action(const struct env_change *c)
{
        return c->kind == ENV_SET ? "set" : c->kind == ENV_PATH ? "path" : "unset";
}

static json_t *env_diff_to_json(const struct env_diff *diff)
{
        json_t *vars = json_array();

        for (size_t i = 0; i < diff->n; i++) {
                const struct env_change *c = &diff->changes[i];
                json_t *o = json_pack("{s:o, s:s}", "name", json_string_lossy(c->name), "action",
                                      change_action(c));

                if (c->kind == ENV_PATH) {
                        json_object_set_new(o, "prepend", json_strv(&c->prepended));
                        json_object_set_new(o, "append", json_strv(&c->appended));
                }
                if (c->value)
                        json_object_set_new(o, "value", json_string_lossy(c->value));
                json_array_append_new(vars, o);
        }
        return vars;
}

static json_t *show_to_json(const struct strv *mp, const struct evaluation *e,
                            const struct env_diff *diff)
{
        json_t *mods = json_array();

        for (size_t i = 0; i < e->n_modules; i++) {
                const struct loaded_module *m = &e->modules[i];
                json_t *o;

                o = json_pack("{s:o, s:o, s:o, s:o}", "module",
                                        json_string_lossy(m->file.fullname), "file",
                                        json_string_lossy(m->file.path), "loaded_by",
                                        m->requested_by ? json_string_lossy(m->requested_by)
                                                        : json_null(),
                                        "messages", json_strv(&m->messages));
                json_object_set_new(o, "warnings", json_strv(&m->warnings));
                json_object_set_new(o, "aliases", json_strv(&m->aliases));
                json_object_set_new(o, "shell_functions", json_strv(&m->shell_functions));
                json_array_append_new(mods, o);
        }
        return json_pack("{s:s, s:i, s:o, s:o, s:o}", "cudamod", "show", "format", 1,
                         "modulepath", json_strv(mp), "modules", mods, "environment",
                         env_diff_to_json(diff));
}

static void print_entries(const char *name, char op, const struct strv *v)
{
        _cleanup_free_ char *safe_name = term_escape(name);

        printf("  %-18s %c ", safe_name, op);
        for (size_t i = 0; i < v->len; i++) {
                _cleanup_free_ char *safe = term_escape(v->items[i]);

                printf("%s%s", i ? ":" : "", safe);
        }
        putchar('\n');
}

/* "NAME=text" or plain texts, one line each, escaped for the terminal. */
static void print_texts(const char *what, const struct strv *v)
{
        for (size_t k = 0; k < v->len; k++) {
                _cleanup_free_ char *t = term_escape(v->items[k]);

                printf("    %s: %s\n", what, t);
        }
}

static void show_print(const struct evaluation *e, const struct env_diff *diff)
{
        printf("Loaded, in order:\n");
        for (size_t i = 0; i < e->n_modules; i++) {
                const struct loaded_module *m = &e->modules[i];
                _cleanup_free_ char *name = term_escape(m->file.fullname);
                _cleanup_free_ char *path = term_escape(m->file.path);
                _cleanup_free_ char *by = m->requested_by ? term_escape(m->requested_by) : NULL;

                printf("  %-18s %s%s%s%s\n", name, path, by ? " (for " : "", by ? by : "",
                       by ? ")" : "");
                for (size_t k = 0; k < m->messages.len; k++) {
                        _cleanup_free_ char *msg = term_escape(m->messages.items[k]);

                        printf("    message: %s\n", msg);
                }
                print_texts("warning", &m->warnings);
                print_texts("alias", &m->aliases);
                print_texts("shell function", &m->shell_functions);
        }
        printf("\nEnvironment ('=' set, '<' put in front, '>' put at the end, '-' unset):\n");
        if (!diff->n)
                printf("  (no change)\n");
        for (size_t i = 0; i < diff->n; i++) {
                const struct env_change *c = &diff->changes[i];
                _cleanup_free_ char *name = term_escape(c->name);
                _cleanup_free_ char *value = c->value ? term_escape(c->value) : NULL;

                if (c->kind == ENV_UNSET)
                        printf("  %-18s -\n", name);
                else if (c->kind == ENV_SET)
                        printf("  %-18s = %s\n", name, value);
                else {
                        if (c->prepended.len)
                                print_entries(c->name, '<', &c->prepended);
                        if (c->appended.len)
                                print_entries(c->name, '>', &c->appended);
                }
        }
}

static int run_show(int argc, char **argv, const struct global_options *g)
{
        static const struct option options[] = {
                { "modulepath", required_argument, NULL, 'm' },
                { "json", no_argument, NULL, 'j' },
                { "trust-modulefiles", no_argument, NULL, 'T' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_(strv_release) struct strv given = { 0 }, mp = { 0 }, before = { 0 };
        _cleanup_(config_release) struct config cfg = { 0 };
        _cleanup_(evaluation_release) struct evaluation e = { 0 };
        _cleanup_(env_diff_release) struct env_diff diff = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct evaluate_options eo = { 0 };
        bool json = false;
        int c, r;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
                switch (c) {
                case 'm':
                        strv_add(&given, optarg);
                        break;
                case 'j':
                        json = true;
                        break;
                case 'T':
                        eo.trust_modulefiles = true;
                        break;
                case 'h':
                        command_print_help(&cmd_show, stdout);
                        return finish_stdout(0);
                default:
                        return command_bad_option(&cmd_show, argv);
                }
        }
        if (!command_check_args(&cmd_show, argc - optind))
                return EXIT_USAGE;
        if (load_config(g, &cfg) < 0 || modulepath_from_options(g, &given, &cfg, &mp) < 0)
                return EXIT_USAGE;

        eo.modulepath = &mp;
        r = evaluate_load(&eo, argv + optind, (size_t)(argc - optind), &e, &d);
        if (r < 0) {
                log_diag(&d);
                if (r == -ENOENT)
                        say_behind(&eo, argv + optind, (size_t)(argc - optind));
                return r == -ENOENT ? EXIT_USAGE : EXIT_FOUND_FAILURE;
        }
        /* The change is measured from the start environment with the
         * modulepath in place, so MODULEPATH shows only what modules add. */
        evaluate_start_env(&eo, &before);
        env_diff_compute(&before, &e.env, &diff);
        if (json)
                json_dump_stdout(show_to_json(&mp, &e, &diff));
        else
                show_print(&e, &diff);
        return finish_stdout(0);
}

const struct command cmd_show = {
        .name = "show",
        .summary = "print the environment after loading modules, without Lmod",
        .usage = "show [--modulepath DIR] [--trust-modulefiles] [--json] MODULE...",
        .help = "Evaluate MODULE... in order, as 'module load' would, and print what the\n"
                "environment becomes: the modules loaded (dependencies included) and each\n"
                "variable set, extended ('<' in front, '>' at the end) or unset. Lua\n"
                "modulefiles run in cudamod's own Lmod sandbox (no Lmod needed, nothing\n"
                "executed); Tcl ones in a Tcl safe interpreter (tclsh; no exec, open,\n"
                "file or source there), with Environment Modules' semantics.\n"
                "\n"
                "Options:\n"
                "  --modulepath DIR   where modules are looked up (repeatable; ':' separates\n"
                "                     several); default: the output directory of the\n"
                "                     site config file given, else $MODULEPATH, else\n"
                "                     the default config's output\n"
                "  --trust-modulefiles\n"
                "                     have Environment Modules' modulecmd.tcl (or Lmod)\n"
                "                     evaluate Tcl modulefiles, running what they say as\n"
                "                     you\n"
                "  --json             print one JSON document (format 1)\n"
                "\n"
                "Names are resolved as Lmod does: 'cuda' is the marked default or the\n"
                "highest version, 'cuda/12' the highest 12.x, 'cuda/12.9' that version.\n"
                "A module the modulepath does not show but a hierarchy has behind other\n"
                "modules (cudnn behind a cuda module) is named with them, as 'module\n"
                "spider' does: \"cudnn/9.7.1 is behind cuda/12.9: module load cuda/12.9\n"
                "first\".\n"
                "Exit status: 0 shown, 1 a modulefile failed to load, 2 usage error or no\n"
                "such module.\n",
        .min_args = 1,
        .max_args = -1,
        .run = run_show,
};
