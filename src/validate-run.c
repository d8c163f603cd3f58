/* validate-run.c: the engine of `cudamod validate` (validate-run.h):
 * which modules (the units), validating one unit through the table of
 * checks and its status, running the units -j at a time, the launcher
 * targets and what they showed, and recording that in the index. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "component-table.h"
#include "component.h"
#include "detect.h"
#include "evaluate.h"
#include "evaluate-modulepath.h"
#include "install.h"
#include "plan.h"
#include "strbuf.h"
#include "util-path.h"
#include "validate.h"
#include "validate-check.h"
#include "validate-checks.h"
#include "validate-pool.h"
#include "validate-probe.h"
#include "validate-run.h"
#include "write.h"
#include "write-index.h"
#include "banned.h"

/* One run: what becomes the result (units, results, targets; handed on
 * at the end), and what the units are validated with. */
struct vrun {
        const struct validate_run_options *o;
        struct diag *d;         /* the error that ends the run */
        struct module_unit *units;
        json_t **results;    /* the report's object of each unit, once validated */
        size_t n_units;
        struct launch_target *targets;
        size_t n_targets;
        const struct strv *mp;
        struct strv start_env;  /* PATH/HOME basics and the module tools' */
        struct validate_options vo;
        bool strict_modes;      /* evaluate_options.strict_modes */
};

static void launch_targets_free(struct launch_target *targets, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(targets[i].name);
                free(targets[i].launcher_text);
                strv_release(&targets[i].launcher);
        }
        free(targets);
}

static void module_units_free(struct module_unit *units, json_t **results, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                module_unit_release(&units[i]);
                if (results)
                        json_decref(results[i]);
        }
        free(units);
        free(results);
}

static void vrun_release(struct vrun *v)
{
        module_units_free(v->units, v->results, v->n_units);
        launch_targets_free(v->targets, v->n_targets);
        strv_release(&v->start_env);
}

void validate_result_release(struct validate_result *r)
{
        module_units_free(r->units, r->results, r->n_units);
        launch_targets_free(r->targets, r->n_targets);
        json_decref(r->summary);
}

/* --- which modules ------------------------------------------------------- */

static int evaluate_chain(const struct vrun *v, const struct strv *chain,
                          struct evaluation *e, struct diag *d)
{
        struct evaluate_options eo = { .environ = v->start_env.items,
                                       .modulepath = v->mp,
                                       .strict_modes = v->strict_modes };

        return evaluate_load(&eo, chain->items, chain->len, e, d);
}

static bool unit_matches(const struct module_unit *u, char *const *specs, size_t n_specs)
{
        if (n_specs == 0)
                return true;
        for (size_t i = 0; i < n_specs; i++) {
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
static enum check_status validate_on_target(const struct vrun *v, const struct launch_target *tg,
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
static json_t *validate_unit(const struct vrun *v, const struct module_unit *u)
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
        const struct vrun *v;
        size_t next; /* the first unit not yet handed to unit_done */
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
        struct unit_pool *up = userdata;

        /* The results land in any order (-j): each is handed on once it
         * and all before it are there. */
        for (; up->next < up->v->n_units && up->v->results[up->next]; up->next++)
                if (up->v->o->unit_done)
                        up->v->o->unit_done(up->v->units[up->next].module, up->v->results[up->next],
                                            up->v->n_targets, up->v->o->progress_userdata);
        if (up->v->o->progress)
                up->v->o->progress(done, total, end, up->v->o->progress_userdata);
}

static void run_units(struct vrun *v, unsigned jobs)
{
        static const struct validate_pool_ops ops = {
                .work = unit_work,
                .lost = unit_lost,
                .progress = unit_progress,
        };
        struct unit_pool up = { .v = v };
        int r = validate_pool_run(v->n_units, jobs, &ops, &up, v->results);

        if (r < 0)
                message_say(&v->o->log, MESSAGE_ERROR, "cannot start a worker process: %s",
                            strerror(-r));
}

/* --- targets ------------------------------------------------------------------ */

static int split_words(const char *s, struct strv *ret);

static void target_add(struct vrun *v, const char *name, const char *launcher)
{
        struct launch_target *t;

        v->targets = xreallocarray(v->targets, v->n_targets + 1, sizeof(*v->targets));
        t = &v->targets[v->n_targets++];
        *t = (struct launch_target){ .name = xstrdup(name), .launcher_text = launcher ? xstrdup(launcher) : NULL };
}

/* The targets: --launcher CMD (one, "launcher"); else the config's
 * validate.targets (those --target names); else validate.launcher; else
 * this machine ("local"). */
static int targets_choose(struct vrun *v, const struct config *cfg, const char *cli_launcher,
                          const struct strv *wanted)
{
        if (cli_launcher && wanted->len)
                return diag_errorf(v->d, -EINVAL, "--launcher and --target exclude each other");
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
                        _cleanup_(strv_release) struct strv names = { 0 };
                        _cleanup_free_ char *list = NULL;

                        for (size_t k = 0; k < cfg->validate.n_targets; k++)
                                strv_add(&names, cfg->validate.targets[k].name);
                        list = strv_join(&names, ", ");
                        return diag_errorf(v->d, -EINVAL, "--target %s: no such target in the config's "
                                           "validate.targets%s%s%s", wanted->items[i],
                                           names.len ? " (" : " (it has none)", list, names.len ? ")" : "");
                }
        }
        if (!v->n_targets && !cli_launcher && cfg->validate.launcher && *cfg->validate.launcher)
                target_add(v, "launcher", cfg->validate.launcher);
        if (!v->n_targets)
                target_add(v, "local", NULL);
        for (size_t i = 0; i < v->n_targets; i++) {
                struct launch_target *t = &v->targets[i];

                if (t->launcher_text && (split_words(t->launcher_text, &t->launcher) < 0 || !t->launcher.len))
                        return diag_errorf(v->d, -EINVAL, "target %s: launcher '%s': unbalanced quotes or no "
                                           "command", t->name, t->launcher_text);
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
static json_t *targets_summary(struct vrun *v)
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

/* Keep what the targets showed in the output directory's index, for
 * `generate` (pytorch.cuda_arch_list: detect): the targets whose driver
 * answered replace their earlier entry; the others keep theirs. */
/* Returns -ETIMEDOUT when the lock stayed held past lock_timeout (a
 * failure: said as an error), else 0 (other problems are warnings). */
static int record_validation(const struct vrun *v, json_t *summary)
{
        struct write_options lo = { .on_wait = v->o->on_wait, .userdata = v->o->wait_userdata,
                                    .lock_timeout = v->o->lock_timeout };
        _cleanup_free_ char *out = index_outdir_of(v->mp);
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
                message_say(&v->o->log, MESSAGE_VERBOSE, "the modulepath is not a tree cudamod generated: "
                            "the results are not recorded");
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
                message_say(&v->o->log, MESSAGE_VERBOSE, "no target's driver answered: nothing recorded in "
                            "'%s'", out);
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
                message_say(&v->o->log, MESSAGE_ERROR, "the validation results were not recorded: %s",
                            d.message);
                return r;
        }
        if (r < 0)
                message_say(&v->o->log, MESSAGE_WARNING, "the validation results were not recorded: %s",
                            d.message);
        return 0;
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
/* --- the run ------------------------------------------------------------------ */

/* Which units: every module of the modulepath and those below its
 * modules, kept when one of the MODULEs names it. */
static int units_choose(struct vrun *v)
{
        const struct validate_run_options *o = v->o;
        size_t kept = 0;

        module_units_discover(&(struct evaluate_options){ .environ = v->start_env.items,
                                                          .modulepath = v->mp,
                                                          .strict_modes = v->strict_modes },
                              &v->units, &v->n_units);
        for (size_t i = 0; i < v->n_units; i++) {
                if (unit_matches(&v->units[i], o->modules, o->n_modules))
                        v->units[kept++] = v->units[i];
                else
                        module_unit_release(&v->units[i]);
        }
        v->n_units = kept;
        v->results = xcalloc(kept + 1, sizeof(*v->results));
        for (size_t i = 0; i < o->n_modules; i++) {
                bool found = false;

                for (size_t k = 0; k < v->n_units && !found; k++)
                        found = unit_matches(&v->units[k], o->modules + i, 1);
                if (!found)
                        return diag_errorf(v->d, -EINVAL, "no module '%s' in the modulepath (or below its "
                                           "modules)", o->modules[i]);
        }
        if (!v->n_units) {
                /* An unmounted or mistyped tree must not look validated. */
                _cleanup_free_ char *mp = strv_join(v->mp, ":");

                for (size_t i = 0; i < v->mp->len; i++)
                        if (!is_dir_at(AT_FDCWD, v->mp->items[i]))
                                return diag_errorf(v->d, -EINVAL, "the modulepath directory '%s' does not exist",
                                                   v->mp->items[i]);
                return diag_errorf(v->d, -ENOENT, "no modules in the modulepath (%s): nothing was validated",
                                   mp);
        }
        return 0;
}

int validate_run(const struct validate_run_options *o, struct validate_result *ret, struct diag *d)
{
        _cleanup_diag_ struct diag own = DIAG_INIT;
        struct vrun v = { .o = o, .d = d ? d : &own, .mp = o->modulepath };
        const struct config *cfg = o->cfg;
        const char *driver_libdir = o->driver_libdir;
        struct validate_result res = { 0 };
        int r;

        *ret = (struct validate_result){ 0 };
        r = targets_choose(&v, cfg, o->launcher, o->targets);
        if (r < 0)
                goto out;
        if (!driver_libdir && cfg->validate.driver_libdir && *cfg->validate.driver_libdir)
                driver_libdir = cfg->validate.driver_libdir;
        if (driver_libdir && !is_dir_at(AT_FDCWD, driver_libdir)) {
                r = diag_errorf(v.d, -EINVAL, "--driver-libdir %s: no such directory", driver_libdir);
                goto out;
        }
        if (!o->probe) {
                r = diag_errorf(v.d, -EINVAL, "cudamod-probe was not found next to cudamod, in %s relative to "
                                "it, nor in %s (set CUDAMOD_PROBE to its path)", CUDAMOD_PROBE_RELATIVE,
                                CUDAMOD_PROBE_INSTALLED);
                goto out;
        }
        v.vo = (struct validate_options){
                .probe = o->probe,
                .driver_libdir = driver_libdir,
                .require_device = o->require_device || cfg->validate.require_device,
                .compile = !o->no_compile && cfg->validate.compile,
                .timeout = o->timeout ? o->timeout : cfg->validate.timeout,
                .cc_path = getenv("PATH") && *getenv("PATH") ? getenv("PATH") : NULL,
                .trust_modulefiles = o->trust_modulefiles,
        };
        evaluate_basic_env(&v.start_env);
        v.strict_modes = geteuid() == 0 && !o->no_strict_modes;
        r = units_choose(&v);
        if (r < 0)
                goto out;
        run_units(&v, o->jobs ? o->jobs : 1);
        res.summary = targets_summary(&v);
        res.record_failed = record_validation(&v, res.summary) < 0;
        res.units = TAKE_PTR(v.units);
        res.results = TAKE_PTR(v.results);
        res.n_units = v.n_units;
        res.targets = TAKE_PTR(v.targets);
        res.n_targets = v.n_targets;
        v.n_units = v.n_targets = 0;
        *ret = res;
out:
        vrun_release(&v);
        return r;
}

bool validate_result_failed(const struct validate_result *r, bool strict)
{
        size_t i;
        json_t *t;

        if (r->record_failed)
                return true;
        for (i = 0; i < r->n_units; i++) {
                const char *s = json_string_value(json_object_get(r->results[i], "status"));

                if (streq(s, "fail") || (strict && streq(s, "unchecked")))
                        return true;
        }
        json_array_foreach(json_object_get(r->summary, "targets"), i, t)
                if (streq(json_string_value(json_object_get(t, "status")), "launcher-failed"))
                        return true;
        return false;
}
