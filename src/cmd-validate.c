/* cmd-validate.c: `cudamod validate`: every module of a modulepath (or the
 * ones named), loaded with what it depends on, through the checks of
 * DESIGN.md §6.
 *
 * Which modules: every module of the modulepath, and for each one that
 * extends MODULEPATH (a cuda module of a hierarchy), every module of the
 * directories it adds, loaded after it: "cudnn/9.7.1 with cuda/12.9". Named
 * MODULEs keep the units whose module is that one ("cudnn/9.7.1"), or of
 * that name ("cudnn"), or under that partial version ("cudnn/9").
 *
 * Each unit goes through the table of checks (validate_checks[],
 * validate-checks.c): the per-module ones, then for each launcher target
 * (struct launch_target: where the probe runs) the per-target ones; the
 * JSON object of its report is made here. With -j N the units are shared
 * out to N worker processes (validate-pool.c); the report keeps the unit
 * order, so it does not depend on -j, and a crash while validating one
 * unit is that unit's failure, not the run's. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <time.h>

#include "build-config.h"
#include "cmd.h"
#include "detect.h"
#include "evaluate.h"
#include "install.h"
#include "plan.h"
#include "strbuf.h"
#include "util-path.h"
#include "validate-checks.h"
#include "validate-pool.h"
#include "validate-probe.h"
#include "validate.h"
#include "write.h"
#include "banned.h"

/* A launcher target: where the probe runs, through a launcher (srun -p
 * a100 …) or on this machine. */
struct launch_target {
        char *name;
        char *launcher_text;     /* as configured, or NULL */
        struct strv launcher;    /* its words (empty: none) */
};

struct validate_run {
        struct module_unit *units;
        json_t **results;    /* the report's object of each unit, once validated */
        size_t n_units;
        struct launch_target *targets;
        size_t n_targets;
        struct strv mp;
        struct strv start_env;  /* PATH/HOME basics and the module tools' */
        struct validate_options vo;
        bool strict_modes;      /* evaluate_options.strict_modes */
};

static void validate_run_release(struct validate_run *v)
{
        for (size_t i = 0; i < v->n_units; i++) {
                module_unit_release(&v->units[i]);
                if (v->results)
                        json_decref(v->results[i]);
        }
        free(v->units);
        free(v->results);
        for (size_t i = 0; i < v->n_targets; i++) {
                free(v->targets[i].name);
                free(v->targets[i].launcher_text);
                strv_release(&v->targets[i].launcher);
        }
        free(v->targets);
        strv_release(&v->mp);
        strv_release(&v->start_env);
}

/* --- which modules ------------------------------------------------------- */

static int evaluate_chain(const struct validate_run *v, const struct strv *chain,
                          struct evaluation *e, struct diag *d)
{
        struct evaluate_options eo = { .environ = v->start_env.items,
                                       .modulepath = &v->mp,
                                       .strict_modes = v->strict_modes };

        return evaluate_load(&eo, chain->items, chain->len, e, d);
}

static bool unit_matches(const struct module_unit *u, char **specs, int n_specs)
{
        if (n_specs == 0)
                return true;
        for (int i = 0; i < n_specs; i++) {
                size_t n = strlen(specs[i]);

                if (strncmp(u->module, specs[i], n) == 0 &&
                    (!u->module[n] || u->module[n] == '/' || u->module[n] == '.'))
                        return true;
        }
        return false;
}

/* --- validating one unit (in a worker, or here with -j 1) ------------------ */

static json_t *check_to_json(const struct check *c)
{
        return json_pack("{s:s, s:s, s:o}", "id", c->id, "status", check_status_to_string(c->status),
                         "message", json_string_lossy(c->message ? c->message : ""));
}

static json_t *device_to_json(const struct probe_report *p)
{
        json_t *devs = json_array();

        for (size_t i = 0; i < p->n_devices; i++)
                json_array_append_new(
                        devs, json_pack("{s:i, s:o, s:o, s:I}", "index", p->devices[i].index, "name",
                                        json_string_lossy(p->devices[i].name ? p->devices[i].name : ""),
                                        "compute_capability",
                                        json_string_lossy(p->devices[i].compute_capability
                                                                  ? p->devices[i].compute_capability
                                                                  : ""),
                                        "memory_mib", (json_int_t)p->devices[i].memory_mib));
        return json_pack("{s:I, s:o}", "driver_version",
                         (json_int_t)(p->driver_version >= 0 ? p->driver_version
                                                             : p->runtime_driver_version),
                         "devices", devs);
}

/* Whether check c, of type ct, is evidence that the module does what it
 * is for: a substantive check that ran (pass or warn). */
static bool is_evidence(const struct check_type *ct, const struct check *c)
{
        return ct->substantive && (c->status == CHECK_PASS || c->status == CHECK_WARN);
}

static enum check_status add_check(json_t *checks, struct check *c, enum check_status worst)
{
        enum check_status s = c->status;

        json_array_append_new(checks, check_to_json(c));
        check_release(c);
        if (s == CHECK_FAIL || (s == CHECK_WARN && worst != CHECK_FAIL))
                return s;
        return worst;
}

/* What one probe run through a target showed, for the targets' summary
 * (the parent collects it from each module's result, then drops it). */
#define TARGET_INFO "_target_info"

static json_t *probe_info(const struct probe_report *p)
{
        json_t *dev = p->ran && (p->driver_loaded || p->n_devices) ? device_to_json(p) : NULL;
        json_t *o = json_pack("{s:b, s:b, s:o, s:o, s:o}", "ran", p->ran, "launcher_failed",
                              p->launcher_failed, "message",
                              p->launch_error ? json_string_lossy(p->launch_error) : json_null(),
                              "visible_devices",
                              p->visible_devices ? json_string_lossy(p->visible_devices) : json_null(),
                              "host", p->host ? json_string_lossy(p->host) : json_null());

        json_object_set_new(o, "device", dev ? dev : json_null());
        return o;
}

static void add_target_check(json_t *checks, struct check *c, const struct launch_target *tg)
{
        json_t *j = check_to_json(c);

        json_object_set_new(j, "target", json_string_lossy(tg->name));
        json_array_append_new(checks, j);
        check_release(c);
}

static enum check_status worse(enum check_status a, enum check_status b)
{
        if (a == CHECK_FAIL || b == CHECK_FAIL)
                return CHECK_FAIL;
        if (a == CHECK_WARN || b == CHECK_WARN)
                return CHECK_WARN;
        return a == CHECK_PASS || b == CHECK_PASS ? CHECK_PASS : CHECK_SKIP;
}

/* The per-target checks (run, device) through target tg: their checks
 * (with "target"), the cell (pass/warn/fail/skip, or launcher-failed,
 * which is the target's failure and not the module's), and the probe's
 * facts. in is the module's, for the per-module checks. Returns the
 * module's worst status so far. */
static enum check_status validate_on_target(const struct validate_run *v, const struct launch_target *tg,
                                            const struct check_input *in, json_t *checks, json_t *cells,
                                            json_t *info, json_t **device, enum check_status worst,
                                            bool *evidence)
{
        _cleanup_(probe_report_release) struct probe_report p = { 0 };
        struct validate_options vo = v->vo;
        struct check_input on = *in;
        enum check_status cell = CHECK_SKIP;
        bool probed = validate_module_needs_probe(in->module);

        vo.launcher = tg->launcher.len ? tg->launcher.items : NULL;
        on.options = &vo;
        if (probed) {
                probe_run(in->module, &vo, &p);
                on.probe = &p;
        }
        for (const struct check_type *ct = validate_checks; ct->id; ct++) {
                struct check c;

                if (ct->scope != CHECK_PER_TARGET)
                        continue;
                check_type_run(ct, &on, &c);
                cell = worse(cell, c.status);
                *evidence |= is_evidence(ct, &c);
                add_target_check(checks, &c, tg);
        }
        if (!probed) {
                json_object_set_new(cells, tg->name, json_string("skip"));
                return worst;
        }
        json_object_set_new(info, tg->name, probe_info(&p));
        if (p.launcher_failed) {
                json_object_set_new(cells, tg->name, json_string("launcher-failed"));
                return worst;
        }
        json_object_set_new(cells, tg->name, json_string(check_status_to_string(cell)));
        if (json_is_null(*device) && p.ran && (p.driver_loaded || p.n_devices)) {
                json_decref(*device);
                *device = device_to_json(&p);
        }
        return cell == CHECK_SKIP ? worst : worse(worst, cell);
}

/* The module's status: fail or warn as its worst check; else "pass" only
 * with evidence (a substantive check ran), "not-checked" for a module that
 * is none of the CUDA stack's (gcc, openmpi on the same modulepath), and
 * "unchecked" for one of the stack's that nothing could be checked of. */
static const char *module_status(const struct check_input *in, enum check_status worst, bool evidence)
{
        if (worst == CHECK_FAIL || worst == CHECK_WARN)
                return check_status_to_string(worst);
        if (in->module && !in->module->kind && !component_from_name_nocase(path_basename(in->module->name)))
                return "not-checked";
        return evidence ? "pass" : "unchecked";
}

/* Load unit u (unless discovering the units did already), and run the
 * table's checks on it: the report's object for it. A module that did
 * not load is checked no further, on no target. */
static json_t *validate_unit(const struct validate_run *v, const struct module_unit *u)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_(evaluation_release) struct evaluation own = { 0 };
        _cleanup_(strv_release) struct strv env = { 0 };
        _cleanup_(validate_module_release) struct validate_module m = { 0 };
        enum check_status worst = CHECK_PASS;
        bool evidence = false;
        json_t *checks = json_array(), *device = json_null(), *cells = json_object(), *info = json_object();
        json_t *ret;
        struct check_input in = { .options = &v->vo };
        const struct evaluation *ev = &u->eval;
        int r = u->evaluated ? 0 : evaluate_chain(v, &u->chain, &own, &d);

        if (!u->evaluated)
                ev = &own;
        if (r >= 0)
                r = validate_refuse_load(ev, v->start_env.items, &d);
        if (r < 0)
                in.load_error = &d;
        else {
                validate_module_init(&m, u->module, ev, &env);
                in.eval = ev;
                in.module = &m;
        }

        for (const struct check_type *ct = validate_checks; ct->id; ct++) {
                struct check c;

                if (ct->scope != CHECK_PER_MODULE)
                        continue;
                check_type_run(ct, &in, &c);
                evidence |= is_evidence(ct, &c);
                worst = add_check(checks, &c, worst);
        }
        for (size_t k = 0; k < v->n_targets; k++) {
                if (!in.module)
                        json_object_set_new(cells, v->targets[k].name, json_string("skip"));
                else
                        worst = validate_on_target(v, &v->targets[k], &in, checks, cells, info, &device, worst,
                                                   &evidence);
        }

        ret = json_pack("{s:o, s:o, s:s, s:o, s:o, s:o, s:o}", "module", json_string_lossy(u->module), "file",
                        json_string_lossy(u->file), "status", module_status(&in, worst, evidence),
                        "checks", checks, "targets", cells, "device", device, TARGET_INFO, info);
        if (u->chain.len > 1) {
                json_t *with = json_array();

                for (size_t i = 0; i + 1 < u->chain.len; i++)
                        json_array_append_new(with, json_string_lossy(u->chain.items[i]));
                json_object_set_new(ret, "with", with);
        }
        return ret;
}

/* --- running the units, -j at a time -------------------------------------- */

/* What the pool's functions are given. */
struct unit_pool {
        const struct validate_run *v;
        const struct global_options *g;
};

static json_t *unit_work(size_t i, void *userdata)
{
        const struct unit_pool *up = userdata;

        return validate_unit(up->v, &up->v->units[i]);
}

/* The result of a unit whose validation did not finish (its worker
 * died): a failed syntax check saying so. */
static json_t *unit_lost(size_t i, const char *why, void *userdata)
{
        const struct unit_pool *up = userdata;
        const struct module_unit *u = &up->v->units[i];
        struct check c = { .id = "syntax" };
        json_t *checks = json_array();

        check_set(&c, CHECK_FAIL, "the validation of this module did not finish: %s "
                                  "(a bug in cudamod: please report it)", why);
        add_check(checks, &c, CHECK_FAIL);
        return json_pack("{s:o, s:o, s:s, s:o, s:n}", "module", json_string_lossy(u->module), "file",
                         json_string_lossy(u->file), "status", "fail", "checks", checks, "device");
}

static void unit_progress(size_t done, size_t total, bool end, void *userdata)
{
        const struct unit_pool *up = userdata;

        if (up->g->verbosity < 0 || !isatty(STDERR_FILENO))
                return;
        if (end)
                fprintf(stderr, "\r\033[K");
        else
                fprintf(stderr, "\r\033[Kvalidating: %zu/%zu modules", done, total);
        fflush(stderr);
}

static void run_units(struct validate_run *v, unsigned jobs, const struct global_options *g)
{
        static const struct validate_pool_ops ops = {
                .work = unit_work,
                .lost = unit_lost,
                .progress = unit_progress,
        };
        struct unit_pool up = { .v = v, .g = g };
        int r = validate_pool_run(v->n_units, jobs, &ops, &up, v->results);

        if (r < 0)
                log_error("cannot start a worker process: %s", strerror(-r));
}

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
static void print_matrix(const struct validate_run *v, const struct global_options *g)
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
static void print_targets(const struct validate_run *v, json_t *summary)
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

static void print_report(const struct validate_run *v, json_t *summary, const struct global_options *g)
{
        static const char *const kinds[] = { "pass", "warn", "fail", "unchecked", "not-checked" };
        size_t counts[ELEMENTSOF(kinds)] = { 0 }, broken = 0, i;
        bool many = v->n_targets > 1;
        json_t *t;

        if (many)
                print_matrix(v, g);
        for (i = 0; i < v->n_units; i++) {
                json_t *r = v->results[i], *with = json_object_get(r, "with"), *c;
                const char *status = json_string_value(json_object_get(r, "status"));
                _cleanup_free_ char *name = term_escape(v->units[i].module);
                size_t k;

                for (size_t s = 0; s < ELEMENTSOF(kinds); s++)
                        counts[s] += streq(status, kinds[s]);
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

/* Whether a module failed, or (strict) one of the stack's went unchecked. */
static bool any_failed(const struct validate_run *v, bool strict)
{
        for (size_t i = 0; i < v->n_units; i++) {
                const char *s = json_string_value(json_object_get(v->results[i], "status"));

                if (streq(s, "fail") || (strict && streq(s, "unchecked")))
                        return true;
        }
        return false;
}

static bool any_launcher_failed(json_t *summary)
{
        size_t i;
        json_t *t;

        json_array_foreach(json_object_get(summary, "targets"), i, t)
                if (streq(json_string_value(json_object_get(t, "status")), "launcher-failed"))
                        return true;
        return false;
}

/* --- targets ------------------------------------------------------------------ */

static int split_words(const char *s, struct strv *ret);

static void target_add(struct validate_run *v, const char *name, const char *launcher)
{
        struct launch_target *t;

        v->targets = xreallocarray(v->targets, v->n_targets + 1, sizeof(*v->targets));
        t = &v->targets[v->n_targets++];
        *t = (struct launch_target){ .name = xstrdup(name), .launcher_text = launcher ? xstrdup(launcher) : NULL };
}

/* The targets: --launcher CMD (one, "launcher"); else the config's
 * validate.targets (those --target names); else validate.launcher; else
 * this machine ("local"). */
static int targets_choose(struct validate_run *v, const struct config *cfg, const char *cli_launcher,
                          const struct strv *wanted)
{
        if (cli_launcher && wanted->len) {
                log_error("--launcher and --target exclude each other");
                return -EINVAL;
        }
        if (cli_launcher)
                target_add(v, "launcher", *cli_launcher ? cli_launcher : NULL);
        for (size_t i = 0; !cli_launcher && i < cfg->validate.n_targets; i++)
                if (!wanted->len || strv_contains(wanted, cfg->validate.targets[i].name))
                        target_add(v, cfg->validate.targets[i].name,
                                   *cfg->validate.targets[i].launcher ? cfg->validate.targets[i].launcher : NULL);
        for (size_t i = 0; i < wanted->len; i++) {
                bool found = false;

                for (size_t k = 0; k < v->n_targets && !found; k++)
                        found = streq(v->targets[k].name, wanted->items[i]);
                if (!found) {
                        struct strv names = { 0 };
                        _cleanup_free_ char *list = NULL;

                        for (size_t k = 0; k < cfg->validate.n_targets; k++)
                                strv_add(&names, cfg->validate.targets[k].name);
                        list = strv_join(&names, ", ");
                        log_error("--target %s: no such target in the config's validate.targets%s%s%s",
                                  wanted->items[i], names.len ? " (" : " (it has none)", list,
                                  names.len ? ")" : "");
                        strv_release(&names);
                        return -EINVAL;
                }
        }
        if (!v->n_targets && !cli_launcher && cfg->validate.launcher && *cfg->validate.launcher)
                target_add(v, "launcher", cfg->validate.launcher);
        if (!v->n_targets)
                target_add(v, "local", NULL);
        for (size_t i = 0; i < v->n_targets; i++) {
                struct launch_target *t = &v->targets[i];

                if (t->launcher_text && (split_words(t->launcher_text, &t->launcher) < 0 || !t->launcher.len)) {
                        log_error("target %s: launcher '%s': unbalanced quotes or no command", t->name,
                                  t->launcher_text);
                        return -EINVAL;
                }
        }
        return 0;
}

/* "8.0" < "9.0" < "10.0": compute capabilities in numeric order. */
static int cc_compare(const void *a, const void *b)
{
        return module_version_compare(*(const char *const *)a, *(const char *const *)b);
}

/* The compute capabilities of the devices of targets (an array of target
 * objects), as TORCH_CUDA_ARCH_LIST wants them ("8.0;9.0"), or NULL. */
static char *arch_list_of(json_t *targets)
{
        struct strv ccs = { 0 };
        size_t i, k;
        json_t *t, *d;
        char *list;

        json_array_foreach(targets, i, t)
                json_array_foreach(json_object_get(t, "devices"), k, d) {
                        const char *cc = json_string_value(json_object_get(d, "compute_capability"));

                        if (cc && *cc && !strv_contains(&ccs, cc))
                                strv_add(&ccs, cc);
                }
        if (!ccs.len)
                return NULL;
        qsort(ccs.items, ccs.len, sizeof(*ccs.items), cc_compare);
        list = strv_join(&ccs, ";");
        strv_release(&ccs);
        return list;
}

/* Each target: its launcher, whether the launcher failed (on any module;
 * the first message), and what the probe saw through it (driver, GPUs,
 * CUDA_VISIBLE_DEVICES, host), from the modules' results, whose
 * TARGET_INFO it removes. Returns {"targets": [...], "arch_list": ...}. */
static json_t *targets_summary(struct validate_run *v)
{
        json_t *targets = json_array(), *ret;
        _cleanup_free_ char *list = NULL;

        for (size_t k = 0; k < v->n_targets; k++) {
                const struct launch_target *tg = &v->targets[k];
                json_t *t = json_pack("{s:o, s:o, s:s, s:n, s:n, s:[], s:n, s:n}", "name", json_string_lossy(tg->name),
                                      "launcher", tg->launcher.len ? json_strv(&tg->launcher) : json_null(),
                                      "status", "unused", "message", "driver_version", "devices",
                                      "visible_devices", "host");

                for (size_t i = 0; i < v->n_units; i++) {
                        json_t *in = json_object_get(json_object_get(v->results[i], TARGET_INFO), tg->name);
                        json_t *dev = json_object_get(in, "device");

                        if (!in)
                                continue;
                        if (json_is_true(json_object_get(in, "launcher_failed"))) {
                                if (!streq(json_string_value(json_object_get(t, "status")), "launcher-failed"))
                                        json_object_set(t, "message", json_object_get(in, "message"));
                                json_object_set_new(t, "status", json_string("launcher-failed"));
                                continue;
                        }
                        if (!json_is_true(json_object_get(in, "ran")))
                                continue;
                        if (streq(json_string_value(json_object_get(t, "status")), "unused"))
                                json_object_set_new(t, "status", json_string("ok"));
                        if (json_is_null(json_object_get(t, "host"))) {
                                json_object_set(t, "host", json_object_get(in, "host"));
                                json_object_set(t, "visible_devices", json_object_get(in, "visible_devices"));
                        }
                        if (json_is_object(dev) && json_is_null(json_object_get(t, "driver_version"))) {
                                json_object_set(t, "driver_version", json_object_get(dev, "driver_version"));
                                json_object_set(t, "devices", json_object_get(dev, "devices"));
                        }
                }
                json_array_append_new(targets, t);
        }
        for (size_t i = 0; i < v->n_units; i++)
                json_object_del(v->results[i], TARGET_INFO);
        list = arch_list_of(targets);
        ret = json_pack("{s:o, s:o}", "targets", targets, "arch_list", list ? json_string(list) : json_null());
        return ret;
}

/* The generated tree the modulepath belongs to: a directory of it, or one
 * above it (hierarchical: OUT/Core, or a core level of several parts,
 * naming.levels.core), that holds the index. */
static char *output_dir_of(const struct strv *mp)
{
        for (size_t i = 0; i < mp->len; i++) {
                _cleanup_free_ char *dir = xstrdup(mp->items[i]);

                for (unsigned up = 0; up < 8 && !streq(dir, "/") && !streq(dir, "."); up++) {
                        _cleanup_free_ char *index = path_join(dir, ".cudamod-index.json");
                        char *parent;

                        if (is_file_at(AT_FDCWD, index))
                                return TAKE_PTR(dir);
                        parent = path_dirname(dir);
                        free(dir);
                        dir = parent;
                }
        }
        return NULL;
}

/* Keep what the targets showed in the output directory's index, for
 * `generate` (pytorch.cuda_arch_list: detect): the targets whose driver
 * answered replace their earlier entry; the others keep theirs. */
/* Returns -ETIMEDOUT when the lock stayed held past lock_timeout (a
 * failure: said as an error), else 0 (other problems are warnings). */
static int record_validation(const struct validate_run *v, json_t *summary, long lock_timeout,
                             const struct global_options *g)
{
        struct lock_wait lw = { .g = g, .timeout = lock_timeout };
        struct write_options lo = { .on_wait = log_lock_wait, .userdata = &lw, .lock_timeout = lock_timeout };
        _cleanup_free_ char *out = output_dir_of(&v->mp);
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_(json_decrefp) json_t *old = NULL, *rec = NULL;
        json_t *targets = json_array(), *t, *o;
        _cleanup_free_ char *list = NULL;
        char stamp[32];
        time_t now = time(NULL);
        size_t i, k;
        int r;

        if (!out) {
                json_decref(targets);
                log_verbose(g, "the modulepath is not a tree cudamod generated: the results are not recorded");
                return 0;
        }
        (void)read_index_validation(out, &old, NULL);
        json_array_foreach(json_object_get(summary, "targets"), i, t)
                if (streq(json_string_value(json_object_get(t, "status")), "ok") &&
                    json_is_integer(json_object_get(t, "driver_version")))
                        json_array_append_new(targets, json_pack("{s:O, s:O, s:O}", "name", json_object_get(t, "name"),
                                                                 "driver_version", json_object_get(t, "driver_version"),
                                                                 "devices", json_object_get(t, "devices")));
        /* Where no driver answered (a login node) there is nothing to add:
         * leave the index be. A driver that shows no GPU replaces what the
         * target showed before. */
        if (!json_array_size(targets)) {
                json_decref(targets);
                log_verbose(g, "no target's driver answered: nothing recorded in '%s'", out);
                return 0;
        }
        json_array_foreach(json_object_get(old, "targets"), i, o) {
                bool replaced = false;

                json_array_foreach(targets, k, t)
                        replaced |= json_equal(json_object_get(t, "name"), json_object_get(o, "name"));
                if (!replaced)
                        json_array_append(targets, o);
        }
        list = arch_list_of(targets);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        rec = json_pack("{s:s, s:o, s:o}", "time", stamp, "targets", targets, "arch_list",
                        list ? json_string(list) : json_null());
        r = write_index_validation(out, rec, &lo, &d);
        if (r == -ETIMEDOUT) {
                log_error("the validation results were not recorded: %s", d.message);
                return r;
        }
        if (r < 0)
                log_warning(g, "the validation results were not recorded: %s", d.message);
        return 0;
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

/* Split a launcher string into words as a shell would, without a shell:
 * blanks separate, '…' and "…" quote, a backslash escapes. */
static int split_words(const char *s, struct strv *ret)
{
        _cleanup_strbuf_ struct strbuf w = STRBUF_INIT;
        bool in_word = false;

        for (const char *p = s; *p; p++) {
                if (*p == ' ' || *p == '\t' || *p == '\n') {
                        if (in_word)
                                strv_push(ret, strbuf_detach(&w));
                        in_word = false;
                        continue;
                }
                in_word = true;
                if (*p == '\'') {
                        const char *end = strchr(p + 1, '\'');

                        if (!end)
                                return -EINVAL;
                        strbuf_add(&w, p + 1, (size_t)(end - p - 1));
                        p = end;
                } else if (*p == '"') {
                        for (p++; *p && *p != '"'; p++) {
                                if (*p == '\\' && (p[1] == '"' || p[1] == '\\' || p[1] == '$'))
                                        p++;
                                strbuf_addch(&w, *p);
                        }
                        if (!*p)
                                return -EINVAL;
                } else if (*p == '\\' && p[1]) {
                        strbuf_addch(&w, *++p);
                } else
                        strbuf_addch(&w, *p);
        }
        if (in_word)
                strv_push(ret, strbuf_detach(&w));
        return 0;
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
        _cleanup_(strv_release) struct strv given = { 0 }, wanted = { 0 };
        _cleanup_(config_release) struct config cfg = { 0 };
        _cleanup_free_ char *probe = NULL;
        _cleanup_(validate_run_release) struct validate_run v = { 0 };
        const char *launcher_str = NULL, *driver_libdir = NULL;
        bool json = false, require_device = false, no_compile = false, arch_list = false;
        bool no_strict_modes = false, strict = false, trust = false;
        _cleanup_(json_decrefp) json_t *summary = NULL;
        bool failed;
        unsigned long jobs = 1, timeout = 0;
        size_t kept = 0;
        char *end;
        int c;

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
        if (load_config(g, &cfg) < 0 || modulepath_from_options(&given, &cfg, &v.mp) < 0)
                return EXIT_USAGE;
        if (!lock_timeout)
                lock_timeout = cfg.lock_timeout ? (long)cfg.lock_timeout : -1;
        if (targets_choose(&v, &cfg, launcher_str, &wanted) < 0)
                return EXIT_USAGE;
        if (!driver_libdir && cfg.validate.driver_libdir && *cfg.validate.driver_libdir)
                driver_libdir = cfg.validate.driver_libdir;
        if (driver_libdir && !is_dir_at(AT_FDCWD, driver_libdir)) {
                log_error("--driver-libdir %s: no such directory", driver_libdir);
                return EXIT_USAGE;
        }
        probe = find_probe();
        if (!probe) {
                log_error("cudamod-probe was not found next to cudamod, in %s relative to it, nor in %s "
                          "(set CUDAMOD_PROBE to its path)", CUDAMOD_PROBE_RELATIVE, CUDAMOD_PROBE_INSTALLED);
                return EXIT_USAGE;
        }
        v.vo = (struct validate_options){
                .probe = probe,
                .driver_libdir = driver_libdir,
                .require_device = require_device || cfg.validate.require_device,
                .compile = !no_compile && cfg.validate.compile,
                .timeout = timeout ? (unsigned)timeout : cfg.validate.timeout,
                .cc_path = getenv("PATH") && *getenv("PATH") ? getenv("PATH") : NULL,
                .trust_modulefiles = trust,
        };
        evaluate_basic_env(&v.start_env);
        v.strict_modes = geteuid() == 0 && !no_strict_modes;
        module_units_discover(&(struct evaluate_options){ .environ = v.start_env.items,
                                                          .modulepath = &v.mp,
                                                          .strict_modes = v.strict_modes },
                              &v.units, &v.n_units);
        for (size_t i = 0; i < v.n_units; i++) {
                if (unit_matches(&v.units[i], argv + optind, argc - optind))
                        v.units[kept++] = v.units[i];
                else
                        module_unit_release(&v.units[i]);
        }
        v.n_units = kept;
        v.results = xcalloc(kept + 1, sizeof(*v.results));
        for (int i = optind; i < argc; i++) {
                bool found = false;

                for (size_t k = 0; k < v.n_units && !found; k++)
                        found = unit_matches(&v.units[k], argv + i, 1);
                if (!found) {
                        log_error("no module '%s' in the modulepath (or below its modules)", argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (!v.n_units) {
                /* An unmounted or mistyped tree must not look validated. */
                _cleanup_free_ char *mp = strv_join(&v.mp, ":");

                for (size_t i = 0; i < v.mp.len; i++)
                        if (!is_dir_at(AT_FDCWD, v.mp.items[i])) {
                                log_error("the modulepath directory '%s' does not exist", v.mp.items[i]);
                                return EXIT_USAGE;
                        }
                log_error("no modules in the modulepath (%s): nothing was validated", mp);
                return finish_stdout(EXIT_FOUND_FAILURE);
        }
        run_units(&v, (unsigned)jobs, g);
        summary = targets_summary(&v);
        failed = record_validation(&v, summary, lock_timeout, g) < 0;
        failed |= any_failed(&v, strict) || any_launcher_failed(summary);
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
                print_report(&v, summary, g);
        return finish_stdout(failed ? EXIT_FOUND_FAILURE : 0);
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
