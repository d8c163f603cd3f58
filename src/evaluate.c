/* evaluate.c: `module load` applied to an environment: Lua modulefiles
 * through the sandbox, their calls applied in order, dependencies loaded,
 * families and limits kept; Tcl ones through the safe interpreter
 * (evaluate-tcl.c) or the real tool (evaluate-tool.c); and the units of a
 * modulepath. Finding modulefiles is in evaluate-modulepath.c, the
 * environment's operations in evaluate-env.c. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "evaluate.h"
#include "evaluate-env.h"
#include "evaluate-modulepath.h"
#include "evaluate-tcl.h"
#include "evaluate-tool.h"
#include "lmod-sandbox.h"
#include "strbuf.h"
#include "util-file.h"
#include "util-path.h"
#include "banned.h"

/* Modules loaded by one evaluation, dependencies included. */
#define LOAD_MAX 256
/* Calls to modulefile functions (setenv, prepend_path, …) that the
 * modulefiles of one load make together: each is applied in time that
 * grows with the environment, so millions of them would take hours. A
 * real load (cuda, cudnn, nccl) makes about 120. */
#define LOAD_MAX_CALLS SANDBOX_DEFAULT_MAX_CALLS
/* The most entries a path variable (PATH, LD_LIBRARY_PATH, …) may get
 * from a load. A shell searches PATH entry by entry for every command;
 * real ones hold tens, a large Spack environment a few hundred. Each
 * prepend_path goes through the whole variable, so this with
 * LOAD_MAX_CALLS bounds the work of a load to about a second. */
#define PATH_MAX_ENTRIES 4096

/* --- loading Lua modulefiles ------------------------------------------- */

struct loader {
        const struct evaluate_options *o;
        struct env env;
        struct strv start;       /* env when the load started */
        struct loaded_module *mods;
        size_t n_mods;
        struct strv families;   /* "family\tfullname" of the loaded modules */
        struct strv in_progress; /* fullnames being loaded (cycle detection) */
        struct strv last_done;   /* env after the last completed module */
        struct strv before_last; /* env after the one before */
        size_t n_calls;          /* recorded calls of the modulefiles loaded so far */
        size_t call_bytes;       /* and the memory they and the path entries took */
        /* The Lua states alive (one runs inside another's depends_on) and
         * the calls the Lua modulefiles of the load recorded. */
        size_t lua_pool;
        size_t mem_max;          /* the cap on that and each file's Lua state */
        unsigned cpu_ms;         /* the CPU time of the whole load */
        /* Modulefiles whose evaluation started so far (one runs inside
         * another's depends_on). */
        size_t n_evaluated;
        long long cpu_deadline_ns; /* this thread's CPU clock when it is spent */
        /* The load is of Tcl modulefiles, evaluated in the safe
         * interpreter by tclsh, and applied with Environment Modules'
         * semantics (entries stay where they are, prereq loads what is
         * missing, a default wins inside a partial version or range). */
        bool tcl;
        char *tclsh;
};

static long long thread_cpu_ns(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return 0;
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The sandbox's "CPU time limit exceeded" (at line) is the load's: say
 * so, and how many files shared it. */
static int cpu_limit_error(const struct loader *l, size_t before, const struct modulefile *mf,
                           unsigned line, struct diag *d)
{
        _cleanup_free_ char *where = before
                                             ? xasprintf(", shared by its modulefiles: %zu evaluated before this one",
                                                         before)
                                             : xstrdup("");

        return diag_set(d, -EINVAL, mf->path, line, 0,
                        "CPU time limit exceeded (%.1f s for the whole load%s)", l->cpu_ms / 1000.0, where);
}

static void loaded_modules_free(struct loaded_module *m, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                modulefile_release(&m[i].file);
                free(m[i].requested_by);
                strv_release(&m[i].messages);
                strv_release(&m[i].warnings);
                strv_release(&m[i].aliases);
                strv_release(&m[i].shell_functions);
                strv_release(&m[i].path_entries);
        }
        free(m);
}

static void loader_release(struct loader *l)
{
        env_release(&l->env);
        strv_release(&l->start);
        loaded_modules_free(l->mods, l->n_mods);
        strv_release(&l->families);
        strv_release(&l->in_progress);
        strv_release(&l->last_done);
        strv_release(&l->before_last);
        free(l->tclsh);
}

static const struct loaded_module *loaded_named(const struct loader *l, const char *name)
{
        for (size_t i = 0; i < l->n_mods; i++)
                if (streq(l->mods[i].file.name, name))
                        return &l->mods[i];
        return NULL;
}

/* A dependency argument: "cuda", "cuda/12.9", or a bound made by between()
 * ("between(cuda,12,12.999999)"), atleast() or latest(). */
struct dep_spec {
        char *name;
        char *version;   /* exact or partial version, or NULL */
        char *lo, *hi;   /* bounds (inclusive), or NULL */
        bool latest;
};

static void dep_spec_release(struct dep_spec *s)
{
        free(s->name);
        free(s->version);
        free(s->lo);
        free(s->hi);
}

/* Environment Modules' "name@version", "name@lo:hi", "name@lo:" and
 * "name@:hi" (bounds inclusive). */
static int dep_spec_parse_em(const char *arg, const char *at, struct dep_spec *ret,
                             struct diag *d)
{
        const char *colon = strchr(at + 1, ':');

        if (at == arg || !at[1] || (colon && colon == at + 1 && !colon[1]))
                return diag_errorf(d, -EINVAL, "malformed version specification '%s'", arg);
        ret->name = xstrndup(arg, (size_t)(at - arg));
        if (!colon) {
                ret->version = xstrdup(at + 1);
                return 0;
        }
        ret->lo = colon > at + 1 ? xstrndup(at + 1, (size_t)(colon - at - 1)) : NULL;
        ret->hi = colon[1] ? xstrdup(colon + 1) : NULL;
        ret->latest = !ret->lo && !ret->hi;
        return 0;
}

static int dep_spec_parse(const char *arg, bool em, struct dep_spec *ret, struct diag *d)
{
        static const struct {
                const char *fn;
                int n_args;
        } bounds[] = { { "between(", 3 }, { "atleast(", 2 }, { "latest(", 1 } };

        if (em && strchr(arg, '@'))
                return dep_spec_parse_em(arg, strchr(arg, '@'), ret, d);
        for (size_t b = 0; b < ELEMENTSOF(bounds); b++) {
                struct strv parts = { 0 };
                size_t n = strlen(bounds[b].fn);

                if (!startswith(arg, bounds[b].fn))
                        continue;
                if (!endswith(arg, ")"))
                        return diag_errorf(d, -EINVAL, "malformed version bound '%s'", arg);
                _cleanup_free_ char *inner = xstrndup(arg + n, strlen(arg) - n - 1);
                split_entries(inner, ',', true, &parts);
                if ((int)parts.len != bounds[b].n_args) {
                        strv_release(&parts);
                        return diag_errorf(d, -EINVAL, "malformed version bound '%s'", arg);
                }
                ret->name = xstrdup(parts.items[0]);
                ret->lo = parts.len > 1 ? xstrdup(parts.items[1]) : NULL;
                ret->hi = parts.len > 2 ? xstrdup(parts.items[2]) : NULL;
                ret->latest = bounds[b].n_args == 1;
                strv_release(&parts);
                return 0;
        }
        {
                const char *slash = strrchr(arg, '/');

                ret->name = slash ? xstrndup(arg, (size_t)(slash - arg)) : xstrdup(arg);
                ret->version = slash ? xstrdup(slash + 1) : NULL;
        }
        return 0;
}

static bool in_bounds(const struct modulefile *m, const void *userdata)
{
        const struct dep_spec *s = userdata;

        return (!s->lo || module_version_compare(m->version, s->lo) >= 0) &&
               (!s->hi || module_version_compare(m->version, s->hi) <= 0);
}

static bool satisfies(const struct modulefile *m, const struct dep_spec *s)
{
        if (!streq(m->name, s->name))
                return false;
        if (s->version)
                return modulefile_under_partial(m, s->version);
        return in_bounds(m, s);
}

static int load_file(struct loader *l, const struct modulefile *mf, const char *requested_by,
                     const char *usr_name, struct diag *d);

/* The version marked default by the first directory of mp that marks one
 * for name, as a file. */
static bool marked_default_file(const struct strv *mp, const char *name, struct modulefile *ret)
{
        for (size_t i = 0; i < mp->len; i++) {
                _cleanup_free_ char *ndir = xasprintf("%s/%s", mp->items[i], name);
                _cleanup_free_ char *v = NULL;

                if (!is_dir_at(AT_FDCWD, ndir))
                        continue;
                v = dir_marked_default(mp->items[i], name);
                if (v)
                        return modulefile_find_in_dir(mp->items[i], name, v, ret);
        }
        return false;
}

/* What Environment Modules loads for s: an exact name/version; else,
 * among the versions under a partial one or in a range, the marked
 * default when it is one of them, otherwise the highest. */
static int em_find(const struct strv *mp, const struct dep_spec *s, const char *arg,
                   struct modulefile *ret, struct diag *d)
{
        _cleanup_(candidates_release) struct candidates c = { 0 };
        bool (*keep)(const struct modulefile *, const void *) = in_bounds;
        const void *userdata = s;
        const struct modulefile *best;
        struct modulefile def = { 0 };

        if (!s->version && !s->lo && !s->hi && !s->latest)
                return modulepath_find_em(mp, s->name, ret, d);
        if (s->version) {
                for (size_t i = 0; i < mp->len; i++)
                        if (modulefile_find_in_dir(mp->items[i], s->name, s->version, ret))
                                return 0;
                keep = modulefile_under_partial;
                userdata = s->version;
        }
        if (!s->latest && marked_default_file(mp, s->name, &def)) {
                if (keep(&def, userdata)) {
                        *ret = def;
                        return 0;
                }
                modulefile_release(&def);
        }
        candidates_collect(mp, s->name, &c);
        best = candidates_highest(&c, keep, userdata);
        if (!best) {
                if (s->version)
                        return modulepath_find_em(mp, arg, ret, d);
                return diag_errorf(d, -ENOENT, "no module satisfies %s in the modulepath", arg);
        }
        modulefile_copy(ret, best);
        return 0;
}

/* Find what a dependency argument names. */
static int dep_find(struct loader *l, const struct dep_spec *s, const char *arg,
                    struct modulefile *ret, struct diag *d)
{
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_(candidates_release) struct candidates c = { 0 };
        const struct modulefile *best;

        modulepath_split(env_lookup(&l->env, "MODULEPATH"), &mp);
        if (l->tcl)
                return em_find(&mp, s, arg, ret, d);
        if (!s->lo && !s->latest)
                return modulepath_find_rc(&mp, l->start.items, arg, ret, d);
        candidates_collect(&mp, s->name, &c);
        candidates_hide(&mp, l->start.items, s->name, &c);
        best = candidates_highest(&c, in_bounds, s);
        if (!best)
                return diag_errorf(d, -ENOENT, "no module satisfies %s in the modulepath", arg);
        modulefile_copy(ret, best);
        return 0;
}

/* depends_on / load / always_load / try_load of one argument. */
static int load_dependency(struct loader *l, const struct modulefile *parent,
                           const struct sandbox_op *op, const char *arg, struct diag *d)
{
        struct dep_spec s = { 0 };
        struct modulefile m = { 0 };
        const struct loaded_module *have;
        int r = dep_spec_parse(arg, l->tcl, &s, d);

        if (r < 0)
                goto out;
        have = loaded_named(l, s.name);
        if (have) {
                if (!satisfies(&have->file, &s))
                        r = diag_errorf(d, -EINVAL, "%s needs %s, but %s is loaded (%s: load the one you mean)",
                                        parent->fullname, arg, have->file.fullname,
                                        l->tcl ? "Environment Modules would refuse it"
                                               : "Lmod would swap them");
                goto out;
        }
        r = dep_find(l, &s, arg, &m, d);
        if (r == -ENOENT && op->name && streq(op->name, "try_load")) {
                r = 0;
                goto out;
        }
        if (r >= 0)
                r = load_file(l, &m, parent->fullname, arg, d);
        else if (d) {
                _cleanup_free_ char *why = d->message ? xstrdup(d->message) : NULL;

                diag_errorf(d, r, "%s needs %s: %s", parent->fullname, arg, why ? why : "not found");
        }
out:
        modulefile_release(&m);
        dep_spec_release(&s);
        return r;
}

static bool any_loaded(const struct loader *l, const struct strv *args, bool all);

/* Environment Modules' prereq (its auto_handling): load what is missing;
 * of "one of" the first that is found. */
static int em_load_requirement(struct loader *l, const struct modulefile *mf,
                               const struct sandbox_op *op, struct diag *d)
{
        bool all = !streq(op->name, "prereq_any");
        int r = -ENOENT;

        for (size_t i = 0; i < op->args.len; i++) {
                struct strv one = { .items = &op->args.items[i], .len = 1 };

                if (all && any_loaded(l, &one, true))
                        continue;
                if (d)
                        diag_release(d);
                r = load_dependency(l, mf, op, op->args.items[i], d);
                if (all ? r < 0 : r != -ENOENT)
                        return r;
        }
        return r == -ENOENT && !all ? r : 0;
}

static bool any_loaded(const struct loader *l, const struct strv *args, bool all)
{
        size_t hits = 0;

        for (size_t i = 0; i < args->len; i++) {
                struct dep_spec s = { 0 };
                const struct loaded_module *have = NULL;

                if (dep_spec_parse(args->items[i], l->tcl, &s, NULL) == 0)
                        have = loaded_named(l, s.name);
                if (have && satisfies(&have->file, &s))
                        hits++;
                dep_spec_release(&s);
        }
        return all ? hits == args->len : hits > 0;
}

static int apply_family(struct loader *l, const struct modulefile *mf, const char *family,
                        struct diag *d)
{
        size_t n = strlen(family);

        for (size_t i = 0; i < l->families.len; i++)
                if (strncmp(l->families.items[i], family, n) == 0 && l->families.items[i][n] == '\t')
                        return diag_errorf(d, -EINVAL,
                                           "%s and %s are both of family '%s' (%s: load only the "
                                           "one you mean)",
                                           l->families.items[i] + n + 1, mf->fullname, family,
                                           l->tcl ? "Environment Modules would refuse it"
                                                  : "Lmod would swap them");
        strv_push(&l->families, xasprintf("%s\t%s", family, mf->fullname));
        return 0;
}

/* The error for a variable that would be too long for execve(). */
static int too_long(const struct modulefile *mf, const struct sandbox_op *op, size_t value_len,
                    struct diag *d)
{
        size_t overhead = strlen(op->name) + 2; /* '=' and the NUL */

        return diag_set(d, -E2BIG, mf->path, op->line, 0,
                        "%s would make '%s' %zu bytes long, more than the %zu that Linux passes "
                        "to a program (MAX_ARG_STRLEN): no command could run after this load",
                        sandbox_op_kind_to_string(op->kind), op->name, value_len,
                        overhead < ENV_ENTRY_MAX ? ENV_ENTRY_MAX - overhead : 0);
}

/* The entries of name in env, split at delim. */
static size_t count_entries(char *const *env, const char *name, char delim)
{
        const char *v = env_get(env, name);
        size_t n = v && *v ? 1 : 0;

        for (; v && *v; v++)
                n += *v == delim;
        return n;
}

/* The cap is on what the load adds: the entries the variable had when it
 * started (a caller's MODULEPATH of 10,000 directories, say) are not the
 * module's doing. */
static int too_many_entries(const struct modulefile *mf, const struct sandbox_op *op,
                            size_t entries, size_t had, struct diag *d)
{
        if (had)
                return diag_set(d, -E2BIG, mf->path, op->line, 0,
                                "%s would give '%s' %zu entries, %zu more than the %zu it had "
                                "before this load, more than the %d cudamod evaluates (a shell "
                                "searches PATH entry by entry; real ones hold tens)",
                                sandbox_op_kind_to_string(op->kind), op->name, entries, entries - had,
                                had, PATH_MAX_ENTRIES);
        return diag_set(d, -E2BIG, mf->path, op->line, 0,
                        "%s would give '%s' %zu entries, more than the %d cudamod evaluates (a "
                        "shell searches PATH entry by entry; real ones hold tens)",
                        sandbox_op_kind_to_string(op->kind), op->name, entries, PATH_MAX_ENTRIES);
}

/* prepend_path, append_path, remove_path; the entries a module names are
 * also kept (for evaluation_own_entries), and charged to the load's
 * memory cap with the calls, since NAME is copied into each. */
static int apply_path_op(struct loader *l, const struct modulefile *mf, const struct sandbox_op *op,
                         struct loaded_module *self, struct diag *d)
{
        char delim = op->delim ? op->delim : ':';
        size_t len = strlen(op->value), n_entries = 1, had = 0;
        _cleanup_(strv_release) struct strv named = { 0 };

        if (op->kind != SANDBOX_REMOVE_PATH) {
                /* Checked first, so that splitting it costs no more than
                 * a value that may be set. */
                if (strlen(op->name) + 1 + len + 1 > ENV_ENTRY_MAX)
                        return too_long(mf, op, len, d);
                for (const char *p = op->value; *p; p++)
                        n_entries += *p == delim;
                if (n_entries > PATH_MAX_ENTRIES)
                        return too_many_entries(mf, op, n_entries, 0, d);
                had = count_entries(l->start.items, op->name, delim);
        }
        if (path_apply(&l->env, op->name, op->value, delim,
                       op->kind == SANDBOX_PREPEND_PATH  ? PATH_PREPEND
                       : op->kind == SANDBOX_APPEND_PATH ? PATH_APPEND
                                                         : PATH_REMOVE,
                       l->tcl, had + PATH_MAX_ENTRIES, &len, &n_entries) < 0)
                return n_entries > had + PATH_MAX_ENTRIES ? too_many_entries(mf, op, n_entries, had, d)
                                                          : too_long(mf, op, len, d);
        if (op->kind == SANDBOX_REMOVE_PATH)
                return 0;
        if (l->tcl) {
                for (const char *p = op->value; *p;) {
                        const char *end = strchrnul(p, delim);

                        if (end > p)
                                strv_push(&named, xstrndup(p, (size_t)(end - p)));
                        p = *end ? end + 1 : end;
                }
        } else
                split_entries(op->value, delim, false, &named);
        for (size_t i = 0; i < named.len; i++) {
                l->call_bytes += strlen(op->name) + strlen(named.items[i]) + 2 + sizeof(char *);
                if (l->call_bytes + l->lua_pool > l->mem_max)
                        return diag_set(d, -EINVAL, mf->path, op->line, 0, "memory limit exceeded");
                strv_push(&self->path_entries, xasprintf("%s=%s", op->name, named.items[i]));
        }
        return 0;
}

/* unload(...) in a load: a module that is not loaded is nothing to do
 * (Lmod says nothing either); one this load loaded is an error, since
 * cudamod does not take a module's changes back. */
static int apply_unload(struct loader *l, const struct modulefile *mf, const struct sandbox_op *op,
                        struct diag *d)
{
        for (size_t i = 0; i < op->args.len; i++) {
                struct dep_spec s = { 0 };
                const struct loaded_module *have = NULL;

                if (dep_spec_parse(op->args.items[i], l->tcl, &s, NULL) == 0)
                        have = loaded_named(l, s.name);
                if (have && !satisfies(&have->file, &s))
                        have = NULL;
                dep_spec_release(&s);
                if (have)
                        return diag_set(d, -EINVAL, mf->path, op->line, 0,
                                        "%s unloads %s, which this load loaded before it: cudamod "
                                        "does not take a module's changes back (load %s without %s)",
                                        mf->fullname, have->file.fullname, mf->fullname,
                                        have->file.fullname);
        }
        return 0;
}

static int apply_op(struct loader *l, const struct modulefile *mf, const struct sandbox_op *op,
                    struct loaded_module *self, struct diag *d)
{
        _cleanup_free_ char *list = NULL;
        size_t len;
        int r;

        switch (op->kind) {
        case SANDBOX_SETENV:
        case SANDBOX_PUSHENV:
                /* Lmod's pushenv(N, false) clears N (MainControl.pushenv:
                 * Var:set(false)). What it saves for the unload
                 * (__LMOD_STACK_N) is not modelled: cudamod takes no
                 * module's changes back. */
                if (!op->value) {
                        env_unset(&l->env, op->name);
                        return 0;
                }
                len = strlen(op->value);
                if (strlen(op->name) + 1 + len + 1 > ENV_ENTRY_MAX)
                        return too_long(mf, op, len, d);
                env_set(&l->env, op->name, op->value);
                return 0;
        case SANDBOX_UNSETENV:
                env_unset(&l->env, op->name);
                return 0;
        case SANDBOX_PREPEND_PATH:
        case SANDBOX_APPEND_PATH:
        case SANDBOX_REMOVE_PATH:
                return apply_path_op(l, mf, op, self, d);
        case SANDBOX_FAMILY:
                return apply_family(l, mf, op->value, d);
        case SANDBOX_DEPENDS_ON:
        case SANDBOX_LOAD:
                for (size_t i = 0; i < op->args.len; i++) {
                        r = load_dependency(l, mf, op, op->args.items[i], d);
                        if (r < 0)
                                return r;
                }
                return 0;
        case SANDBOX_PREREQ:
                if (any_loaded(l, &op->args, !streq(op->name, "prereq_any")))
                        return 0;
                if (l->tcl)
                        return em_load_requirement(l, mf, op, d);
                list = strv_join(&op->args, " ");
                return diag_set(d, -EINVAL, mf->path, op->line, 0,
                                "cannot load %s without %s%s loaded first", mf->fullname,
                                streq(op->name, "prereq_any") ? "one of " : "", list);
        case SANDBOX_CONFLICT:
                if (!any_loaded(l, &op->args, false))
                        return 0;
                list = strv_join(&op->args, " ");
                return diag_set(d, -EINVAL, mf->path, op->line, 0,
                                "%s conflicts with the loaded %s", mf->fullname, list);
        case SANDBOX_MESSAGE:
                strv_add(&self->messages, op->value);
                return 0;
        case SANDBOX_WARNING:
                strv_add(&self->warnings, op->value);
                return 0;
        case SANDBOX_SET_ALIAS:
                strv_push(&self->aliases, xasprintf("%s=%s", op->name, op->value));
                return 0;
        case SANDBOX_SET_SHELL_FUNCTION:
                strv_push(&self->shell_functions, xasprintf("%s=%s", op->name, op->value));
                return 0;
        case SANDBOX_UNLOAD:
                return apply_unload(l, mf, op, d);
        default:
                return 0;
        }
}

static void path_var_append(struct env *env, const char *name, const char *value)
{
        const char *cur = env_lookup(env, name);
        _cleanup_free_ char *v = cur && *cur ? xasprintf("%s:%s", cur, value) : xstrdup(value);

        env_set(env, name, v);
}

/* Why st is one that another user can change, or NULL. */
static char *strict_modes_problem(const struct stat *st)
{
        if (st->st_uid != geteuid())
                return xasprintf("owned by uid %u", (unsigned)st->st_uid);
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return xasprintf("writable by %s (mode %04o)",
                                 st->st_mode & S_IWOTH ? "others" : "its group",
                                 (unsigned)(st->st_mode & 07777));
        return NULL;
}

/* evaluate_options.strict_modes for the modulefile path. */
static int strict_modes_check(const struct loader *l, const char *path, struct diag *d)
{
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_free_ char *real = realpath(path, NULL), *root = NULL;
        size_t n;

        if (!real)
                return diag_errorf(d, -errno, "%s: %s", path, strerror(errno));
        modulepath_split(env_lookup(&l->env, "MODULEPATH"), &mp);
        for (size_t i = 0; i < mp.len && !root; i++) {
                char *dir = realpath(mp.items[i], NULL);

                n = dir ? strlen(dir) : 0;
                if (dir && strncmp(real, dir, n) == 0 && (real[n] == '/' || n == 1))
                        root = dir;
                else
                        free(dir);
        }
        for (char *p = real;;) {
                struct stat st;
                _cleanup_free_ char *why = NULL;
                char *slash;

                if (stat(p, &st) < 0)
                        return diag_errorf(d, -errno, "%s: %s", p, strerror(errno));
                why = strict_modes_problem(&st);
                if (why)
                        return diag_set(d, -EPERM, path, 0, 0,
                                        "refused: '%s' is %s, and cudamod runs as root: it loads "
                                        "no modulefile that another user could change (fix the "
                                        "owner or mode, or give --no-strict-modes)",
                                        p, why);
                if ((root && streq(p, root)) || streq(p, "/"))
                        return 0;
                slash = strrchr(p, '/');
                if (slash == p)
                        slash[1] = '\0';
                else
                        *slash = '\0';
        }
}

/* -EFBIG for a file larger than MODULEFILE_MAX (the Tcl driver reads it). */
/* Read a modulefile (Lua) into text, or only check it (Tcl: tclsh reads
 * it): either way its type is checked on an O_PATH descriptor before it is
 * opened, so a device or FIFO planted on the modulepath is refused, never
 * opened (opening a tape drive rewinds it). -EFBIG over MODULEFILE_MAX;
 * other errors carry the reader's message in why. */
static int read_modulefile(const char *path, bool check_only, struct strbuf *text, struct diag *why)
{
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        if (!check_only)
                return file_read_regular_at(AT_FDCWD, path, NULL, MODULEFILE_MAX, false, text, why);
        r = file_open_regular_at(AT_FDCWD, path, NULL, &fd, &st, why);
        if (r < 0)
                return r;
        return (size_t)st.st_size > MODULEFILE_MAX ? -EFBIG : 0;
}

static void loaded_module_clear(struct loaded_module *m)
{
        strv_release(&m->messages);
        strv_release(&m->warnings);
        strv_release(&m->aliases);
        strv_release(&m->shell_functions);
        strv_release(&m->path_entries);
}

static void in_progress_pop(struct loader *l)
{
        free(l->in_progress.items[--l->in_progress.len]);
        l->in_progress.items[l->in_progress.len] = NULL;
}

static int too_many_calls(const struct modulefile *mf, unsigned line, struct diag *d)
{
        return diag_set(d, -E2BIG, mf->path, line, 0,
                        "the modulefiles of this load make more than %d calls to modulefile "
                        "functions (setenv, prepend_path, …) together; a real load makes about a "
                        "hundred",
                        LOAD_MAX_CALLS);
}

/* A Lua modulefile's calls, applied as it makes them. */
struct apply_ctx {
        struct loader *l;
        const struct modulefile *mf;
        struct loaded_module *self;
};

static const char *loader_getenv(void *userdata, const char *name)
{
        const struct apply_ctx *c = userdata;

        return env_lookup(&c->l->env, name);
}

static bool loader_isloaded(void *userdata, const char *spec)
{
        const struct apply_ctx *c = userdata;
        char *one[] = { (char *)spec };

        return any_loaded(c->l, &(struct strv){ .items = one, .len = 1 }, true);
}

static int loader_on_call(void *userdata, const struct sandbox_op *op, struct diag *d)
{
        struct apply_ctx *c = userdata;

        if (++c->l->n_calls > LOAD_MAX_CALLS)
                return too_many_calls(c->mf, op->line, d);
        return apply_op(c->l, c->mf, op, c->self, d);
}

static int load_file(struct loader *l, const struct modulefile *mf, const char *requested_by,
                     const char *usr_name, struct diag *d)
{
        _cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
        _cleanup_(strv_release) struct strv start_env = { 0 };
        _cleanup_diag_ struct diag why = DIAG_INIT;
        struct sandbox_options so = {
                .module_name = mf->name,
                .module_version = mf->version,
                .module_file = mf->path,
                .module_usr_name = usr_name,
                .mode = "load",
                .max_instructions = l->o->max_instructions,
                /* The driver's version file the cuda module reads: a
                 * test's (CUDAMOD_TEST_ROOT, as doctor's), else the node's. */
                .sysroot = getenv("CUDAMOD_TEST_ROOT"),
        };
        struct sandbox_result res = { 0 };
        struct loaded_module self = { 0 };
        struct apply_ctx ctx;
        size_t before;
        int r;

        if (mf->lua == l->tcl)
                return diag_errorf(d, -ENOEXEC,
                                   "%s (%s) is a %s modulefile, loaded from a %s one: cudamod "
                                   "evaluates a tree of one kind",
                                   mf->fullname, mf->path, mf->lua ? "Lua" : "Tcl",
                                   mf->lua ? "Tcl" : "Lua");
        if (strv_contains(&l->in_progress, mf->fullname))
                return diag_errorf(d, -ELOOP, "%s depends on itself (through %s)", mf->fullname,
                                   requested_by ? requested_by : "the command line");
        if (l->n_mods >= LOAD_MAX)
                return diag_errorf(d, -E2BIG, "more than %d modules to load", LOAD_MAX);
        if (l->o->strict_modes) {
                r = strict_modes_check(l, mf->path, d);
                if (r < 0)
                        return r;
        }
        r = read_modulefile(mf->path, l->tcl, &text, &why);
        if (r == -EFBIG)
                return diag_set(d, r, mf->path, 0, 0,
                                "larger than 1 MiB, too large for a modulefile (real ones are a "
                                "few KiB)");
        if (r < 0 && why.message)
                return diag_errorf(d, r, "%s", why.message);
        if (r < 0)
                return diag_errorf(d, r, "%s: %s", mf->path, strerror(-r));
        /* What the modulefiles loaded before this one recorded is kept
         * until the load ends: they all share one memory cap. */
        if (l->call_bytes + l->lua_pool >= l->mem_max)
                return diag_set(d, -EINVAL, mf->path, 0, 0, "memory limit exceeded");
        /* Lua: the cap of lua_pool, which holds the states alive (this
         * one's, and those of the modulefiles whose depends_on loads it)
         * and the calls recorded so far. */
        so.max_memory = l->tcl ? l->mem_max - l->call_bytes - l->lua_pool : l->mem_max - l->call_bytes;
        /* And one CPU budget: each file gets what the ones before it left
         * (a chain of depends_on would otherwise get 10 s per file). */
        {
                long long left = l->cpu_deadline_ns - thread_cpu_ns();

                if (left <= 0)
                        return cpu_limit_error(l, l->n_evaluated, mf, 0, d);
                so.max_cpu_ms = (unsigned)((left + 999999) / 1000000);
        }
        before = l->n_evaluated++;
        env_copy(&start_env, l->env.vars.items);
        so.environ = (const char *const *)start_env.items;
        if (l->tcl)
                r = tcl_safe_eval(mf,
                                  &(struct tcl_eval_options){
                                          .tclsh = l->tclsh,
                                          .environ = start_env.items,
                                          .max_calls = LOAD_MAX_CALLS,
                                          .max_bytes = so.max_memory,
                                  },
                                  &res, d);
        else {
                /* Each call is applied as the file makes it, as Lmod does:
                 * os.getenv sees what the calls before it (and the modules
                 * they loaded) set. */
                ctx = (struct apply_ctx){ .l = l, .mf = mf, .self = &self };
                so.getenv = loader_getenv;
                so.on_call = loader_on_call;
                so.isloaded = loader_isloaded;
                so.userdata = &ctx;
                so.mem_pool = &l->lua_pool;
                strv_add(&l->in_progress, mf->fullname);
                r = sandbox_eval(text.buf, text.len, mf->path, &so, &res, d);
                in_progress_pop(l);
        }
        if (r < 0 && d && d->message && streq(d->message, "CPU time limit exceeded"))
                return cpu_limit_error(l, before, mf, d->line, d);
        if (r < 0) {
                loaded_module_clear(&self);
                return r;
        }
        if (l->tcl) {
                l->call_bytes += res.bytes;
                l->n_calls += res.n_ops;
                if (l->n_calls > LOAD_MAX_CALLS) {
                        sandbox_result_release(&res);
                        return too_many_calls(mf, 0, d);
                }
                strv_add(&l->in_progress, mf->fullname);
                for (size_t i = 0; i < res.n_ops && r >= 0; i++)
                        r = apply_op(l, mf, &res.ops[i], &self, d);
                in_progress_pop(l);
        }
        sandbox_result_release(&res);
        if (r < 0) {
                loaded_module_clear(&self);
                return r;
        }
        path_var_append(&l->env, "LOADEDMODULES", mf->fullname);
        path_var_append(&l->env, "_LMFILES_", mf->path);
        modulefile_copy(&self.file, mf);
        self.requested_by = requested_by ? xstrdup(requested_by) : NULL;
        l->mods = xreallocarray(l->mods, l->n_mods + 1, sizeof(*l->mods));
        l->mods[l->n_mods++] = self;
        strv_release(&l->before_last);
        l->before_last = l->last_done;
        l->last_done = (struct strv){ 0 };
        env_copy(&l->last_done, l->env.vars.items);
        return 0;
}

/* --- evaluate_load --------------------------------------------------------- */

void evaluation_release(struct evaluation *e)
{
        loaded_modules_free(e->modules, e->n_modules);
        strv_release(&e->env);
        strv_release(&e->env_before_last);
        *e = (struct evaluation){ 0 };
}

static void start_env(const struct evaluate_options *o, struct env *ret)
{
        extern char **environ;

        env_init(ret, o->environ ? o->environ : environ);
        if (o->modulepath) {
                _cleanup_free_ char *joined = strv_join(o->modulepath, ":");

                env_set(ret, "MODULEPATH", joined);
        }
}

void evaluate_start_env(const struct evaluate_options *o, struct strv *ret)
{
        struct env e;

        start_env(o, &e);
        *ret = env_take_vars(&e);
}

/* A load of Tcl modulefiles in the safe interpreter: tclsh is found on
 * the PATH of the start environment (the caller's, never a module's). */
static int tcl_begin(struct loader *l, struct diag *d)
{
        l->tclsh = tcl_find_interpreter(l->env.vars.items);
        if (!l->tclsh)
                return diag_errorf(d, -ENOEXEC,
                                   "Tcl modulefiles are evaluated in a Tcl safe interpreter, and "
                                   "no tclsh was found on PATH (install tcl, or give "
                                   "--trust-modulefiles to have Environment Modules or Lmod "
                                   "evaluate them)");
        l->tcl = true;
        return 0;
}

int evaluate_load(const struct evaluate_options *o, char *const *specs, size_t n_specs,
                  struct evaluation *ret, struct diag *d)
{
        _cleanup_(loader_release) struct loader l = {
                .o = o,
                .mem_max = o->max_memory ? o->max_memory : SANDBOX_DEFAULT_MEMORY,
                .cpu_ms = o->max_cpu_ms ? o->max_cpu_ms : SANDBOX_DEFAULT_CPU_MS,
        };
        int r = 0;

        l.cpu_deadline_ns = thread_cpu_ns() + (long long)l.cpu_ms * 1000000;
        start_env(o, &l.env);
        env_copy(&l.last_done, l.env.vars.items);
        env_copy(&l.start, l.env.vars.items);
        for (size_t i = 0; i < n_specs && r >= 0; i++) {
                _cleanup_(strv_release) struct strv mp = { 0 };
                struct modulefile m = { 0 };

                modulepath_split(env_lookup(&l.env, "MODULEPATH"), &mp);
                r = modulepath_find_rc(&mp, l.start.items, specs[i], &m, d);
                if (r >= 0 && !m.lua && i == 0) {
                        modulefile_release(&m);
                        /* The tool's files cannot be checked before it
                         * runs them: strict modes keep the safe way. */
                        if (o->trust_modulefiles && !o->strict_modes)
                                return evaluate_tool(l.env.vars.items, specs, n_specs, ret, d);
                        r = tcl_begin(&l, d);
                        if (r < 0)
                                return r;
                }
                if (r >= 0 && l.tcl) {
                        /* Environment Modules' choice ("cuda/12": the
                         * default when it is a 12.x). */
                        struct dep_spec s = { 0 };

                        modulefile_release(&m);
                        r = dep_spec_parse(specs[i], true, &s, d);
                        if (r >= 0)
                                r = em_find(&mp, &s, specs[i], &m, d);
                        dep_spec_release(&s);
                }
                if (r >= 0) {
                        const struct loaded_module *had = loaded_named(&l, m.name);

                        if (!had)
                                r = load_file(&l, &m, NULL, specs[i], d);
                        else if (!streq(had->file.fullname, m.fullname))
                                r = diag_errorf(d, -EINVAL, "%s is loaded already; %s would replace it",
                                                had->file.fullname, m.fullname);
                }
                modulefile_release(&m);
        }
        if (r < 0)
                return r;
        *ret = (struct evaluation){
                .modules = TAKE_PTR(l.mods),
                .n_modules = l.n_mods,
                .env = env_take_vars(&l.env),
                .env_before_last = l.before_last,
        };
        l.n_mods = 0;
        l.before_last = (struct strv){ 0 };
        return 0;
}

/* --- units of a modulepath ------------------------------------------------ */

#define HIERARCHY_DEPTH_MAX 4

/* The entries name's value has in after but not in before. */
static void added_entries(const struct strv *before, const struct strv *after, const char *name,
                          struct strv *ret)
{
        _cleanup_(strv_release) struct strv b = { 0 }, a = { 0 };

        modulepath_split(env_get(before->items, name), &b);
        modulepath_split(env_get(after->items, name), &a);
        for (size_t i = 0; i < a.len; i++)
                if (!strv_contains(&b, a.items[i]) && !strv_contains(ret, a.items[i]))
                        strv_add(ret, a.items[i]);
}

void evaluation_own_entries(const struct evaluation *e, const char *name, struct strv *ret)
{
        const struct loaded_module *m = &e->modules[e->n_modules - 1];
        size_t n = strlen(name);
        struct str_set seen;

        if (!m->path_entries.len) {
                added_entries(&e->env_before_last, &e->env, name, ret);
                return;
        }
        str_set_init(&seen, ret->len + m->path_entries.len);
        for (size_t i = 0; i < ret->len; i++)
                str_set_add(&seen, ret->items[i]);
        for (size_t i = 0; i < m->path_entries.len; i++) {
                const char *it = m->path_entries.items[i];

                if (strncmp(it, name, n) == 0 && it[n] == '=' && str_set_add(&seen, it + n + 1))
                        strv_add(ret, it + n + 1);
        }
        str_set_release(&seen);
}

void evaluate_basic_env(struct strv *env)
{
        static const char *const keep[] = { "HOME", "USER", "LOGNAME", "TMPDIR", "LANG",
                                            "MODULES_CMD", "LMOD_CMD" };

        strv_add(env, "PATH=/usr/bin:/bin");
        for (size_t i = 0; i < ELEMENTSOF(keep); i++) {
                const char *v = getenv(keep[i]);

                if (v)
                        strv_push(env, xasprintf("%s=%s", keep[i], v));
        }
}

void module_unit_release(struct module_unit *u)
{
        strv_release(&u->chain);
        free(u->module);
        free(u->file);
        free(u->error);
        evaluation_release(&u->eval);
}

struct discovery {
        const struct evaluate_options *o;
        struct module_unit *units;
        size_t n;
};

static void discover(struct discovery *v, const struct strv *dirs, const struct strv *parents,
                     unsigned depth)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct evaluate_options eo = *v->o;
        struct modulefile *mods = NULL;
        size_t n = 0;

        extern char **environ;

        if (modulepath_list_rc(dirs, eo.environ ? eo.environ : environ, &mods, &n, &d) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                struct module_unit *u;
                struct evaluation e = { 0 };
                _cleanup_(strv_release) struct strv before = { 0 }, after = { 0 }, added = { 0 };

                v->units = xreallocarray(v->units, v->n + 1, sizeof(*v->units));
                u = &v->units[v->n++];
                *u = (struct module_unit){ .module = xstrdup(mods[i].fullname), .file = xstrdup(mods[i].path) };
                for (size_t k = 0; k < parents->len; k++)
                        strv_add(&u->chain, parents->items[k]);
                strv_add(&u->chain, mods[i].fullname);
                diag_release(&d);
                if (depth >= HIERARCHY_DEPTH_MAX)
                        continue;
                if (evaluate_load(&eo, u->chain.items, u->chain.len, &e, &d) < 0) {
                        u->error = d.message ? diag_format(&d) : NULL;
                        continue;
                }
                modulepath_split(env_get(e.env_before_last.items, "MODULEPATH"), &before);
                modulepath_split(env_get(e.env.items, "MODULEPATH"), &after);
                u->eval = e;
                u->evaluated = true;
                for (size_t k = 0; k < after.len; k++)
                        if (!strv_contains(&before, after.items[k]))
                                strv_add(&added, after.items[k]);
                if (added.len) {
                        /* u moves when the array grows: copy the chain. */
                        _cleanup_(strv_release) struct strv chain = { 0 };

                        for (size_t k = 0; k < u->chain.len; k++)
                                strv_add(&chain, u->chain.items[k]);
                        discover(v, &added, &chain, depth + 1);
                }
        }
        modulefile_array_free(mods, n);
}

void module_units_discover(const struct evaluate_options *o, struct module_unit **ret,
                           size_t *n_ret)
{
        struct discovery v = { .o = o };

        discover(&v, o->modulepath, &(struct strv){ 0 }, 0);
        *ret = v.units;
        *n_ret = v.n;
}
