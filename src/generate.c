/* generate.c: the engine of `cudamod generate` (generate.h): the render
 * model of each module, rendering and the parse check of every file, the
 * site checks, the write with its index-retry loop and stop signals, and
 * the spider cache. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <time.h>
#include <unistd.h>

#include "generate.h"
#include "component-table.h"
#include "config-site.h"
#include "plan.h"
#include "render-check.h"
#include "render.h"
#include "spider-cache.h"
#include "strbuf.h"
#include "util-path.h"
#include "util-term.h"
#include "version.h"
#include "write-index.h"
#include "write-site.h"
#include "build-config.h"
#include "banned.h"

/* One run, as its parts report: the options (their log), and the error
 * that ends it (d). */
struct gen {
        const struct generate_options *o;
        struct diag *d;
};

/* An error held in run->d that another message follows goes to the log
 * first: everything comes out in the order it happened. */
static void gen_flush(struct gen *run)
{
        _cleanup_free_ char *s = NULL;

        if (!run->d->message)
                return;
        s = diag_format(run->d);
        diag_release(run->d);
        message_say(&run->o->log, MESSAGE_ERROR, "%s", s);
}

_printf_(3, 4) static void gen_log(struct gen *run, enum message_level level, const char *fmt, ...)
{
        va_list ap;

        gen_flush(run);
        va_start(ap, fmt);
        message_vsay(&run->o->log, level, fmt, ap);
        va_end(ap);
}

#define gen_error(run, ...) gen_log(run, MESSAGE_ERROR, __VA_ARGS__)
#define gen_warning(run, ...) gen_log(run, MESSAGE_WARNING, __VA_ARGS__)
#define gen_verbose(run, ...) gen_log(run, MESSAGE_VERBOSE, __VA_ARGS__)

/* The error that ends the run (so far: an error after it sends it to
 * the log); returns err. */
_printf_(3, 4) static int gen_fail(struct gen *run, int err, const char *fmt, ...)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        va_list ap;

        gen_flush(run);
        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        return diag_errorf(run->d, err, "%s", sb.buf);
}

/* gen_fail with a diag a lower stage filled, which it takes. */
static int gen_fail_diag(struct gen *run, int err, struct diag *d)
{
        gen_flush(run);
        diag_release(run->d);
        *run->d = *d;
        *d = (struct diag)DIAG_INIT;
        return err;
}


struct templates {
        char *text[N_COMPONENTS + 1]; /* by component index; the last one: modulerc */
        size_t len[N_COMPONENTS + 1];
        char *name[N_COMPONENTS + 1];
};

static void templates_release(struct templates *t)
{
        for (size_t i = 0; i <= N_COMPONENTS; i++) {
                free(t->text[i]);
                free(t->name[i]);
        }
}

/* The `templates:` directory, relative to the config file that named it. */
static char *templates_dir(const struct config *cfg)
{
        _cleanup_free_ char *base = NULL;

        if (!*cfg->templates || cfg->templates[0] == '/' || !cfg->file)
                return xstrdup(cfg->templates);
        base = path_dirname(cfg->file);
        return path_join(base, cfg->templates);
}

static int templates_load(struct templates *t, const struct config *cfg, struct diag *d)
{
        _cleanup_free_ char *dir = templates_dir(cfg);

        for (size_t i = 0; i <= N_COMPONENTS; i++) {
                const char *kind = i < N_COMPONENTS ? component_table[i]->name : "modulerc";
                int r = template_load(dir, cfg->format, kind, &t->text[i], &t->len[i], &t->name[i], d);
                if (r < 0)
                        return r;
        }
        return 0;
}

static const char *const op_keys[] = {
        [ENV_OP_SETENV] = "setenv",
        [ENV_OP_PREPEND_PATH] = "prepend_path",
        [ENV_OP_APPEND_PATH] = "append_path",
        [ENV_OP_PUSHENV] = "pushenv",
};

/* What the toolkit holds, as Lmod's extensions() string ("cublas/12.9.1.4,
 * nvcc/12.9.86"): the component versions the scan read (version.json,
 * dist-infos, file names), so that `module spider cublas` and `module
 * keyword nvcc` find the toolkit. A version that is not made of what
 * versions are made of is left out: it came from a file anyone could
 * have written, and Lmod splits the string at ',' and '/'. "" when none. */
static char *toolkit_extensions(const struct install *in)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        if (!in->component->toolkit)
                return xstrdup("");
        for (int i = 0; i < _CUDA_COMP_MAX; i++) {
                const char *v = in->components[i];
                bool ok = v && *v && ascii_isdigit(*v) && strlen(v) <= 64;

                for (const char *q = v; ok && *q; q++)
                        ok = ascii_isalpha(*q) || ascii_isdigit(*q) || strchr(".+_-", *q);
                if (!ok)
                        continue;
                strbuf_addf(&sb, "%s%s/%s", sb.len ? ", " : "", cuda_comp_to_string((enum cuda_comp)i), v);
        }
        return strbuf_detach(&sb);
}

static struct render_ctx *module_context(const struct module_plan *m, const struct config *cfg)
{
        struct render_ctx *ctx = render_ctx_new();
        const struct strv *family = &cfg->family[m->install->component->index];
        _cleanup_free_ char *extensions = toolkit_extensions(m->install);

        render_ctx_set(ctx, "cudamod_version", CUDAMOD_VERSION);
        render_ctx_set(ctx, "source", m->install->realpath);
        render_ctx_set(ctx, "name", m->name);
        render_ctx_set(ctx, "version", m->version);
        render_ctx_set(ctx, "full_name", m->full_name);
        render_ctx_set(ctx, "prefix", m->install->prefix);
        render_ctx_set(ctx, "description", m->description);
        render_ctx_set_text(ctx, "help", m->help);
        /* family.<component> (config-site.c): the family, then the
         * names of the site's own modules of it, which conflict. */
        render_ctx_set(ctx, "family", family->len ? family->items[0] : "");
        render_ctx_set_list(ctx, "conflicts");
        for (size_t i = 1; i < family->len; i++)
                render_ctx_set(render_ctx_add_item(ctx, "conflicts"), "name", family->items[i]);
        /* lmod.extensions: Lmod's extensions() only where the site asks
         * for it; the whatis line below is always written. */
        render_ctx_set(ctx, "extensions", cfg->lmod_extensions ? extensions : "");
        render_ctx_set_bool(ctx, "property_gpu", true);
        render_ctx_set(ctx, "modulepath", m->modulepath ? m->modulepath : "");
        /* config modulerc (lmod-api): the message a load prints. */
        render_ctx_set_text(ctx, "deprecated", m->deprecated ? m->deprecated : "");
        render_ctx_set_list(ctx, "whatis");
        for (size_t i = 0; i < m->whatis.len; i++)
                render_ctx_set(render_ctx_add_item(ctx, "whatis"), "line", m->whatis.items[i]);
        if (*extensions) {
                /* For Lmod before extensions() and for Environment
                 * Modules: `module keyword` and `module search` read it. */
                _cleanup_free_ char *line = xasprintf("Extensions: %s", extensions);

                render_ctx_set(render_ctx_add_item(ctx, "whatis"), "line", line);
        }
        render_ctx_set_list(ctx, "depends");
        for (size_t i = 0; i < m->n_deps; i++) {
                struct render_ctx *it = render_ctx_add_item(ctx, "depends");
                render_ctx_set(it, "name", m->deps[i].name);
                render_ctx_set(it, "min", m->deps[i].min);
                render_ctx_set(it, "max", m->deps[i].max);
                render_ctx_set(it, "em_spec", m->deps[i].em_spec);
        }
        render_ctx_set_list(ctx, "requires");
        if (m->requires)
                render_ctx_set(render_ctx_add_item(ctx, "requires"), "module", m->requires);
        /* The node's driver, read at load: at most one item, for a toolkit
         * with a driver check (config driver_check) or forward-compatibility
         * libraries (config cuda_compat: auto); its figures literals of the
         * plan's. */
        render_ctx_set_list(ctx, "node_driver");
        if (m->driver_major_min || m->compat_dir) {
                struct render_ctx *it = render_ctx_add_item(ctx, "node_driver");
                render_ctx_set(it, "compat_dir", m->compat_dir ? m->compat_dir : "");
                render_ctx_set(it, "compat_driver", m->compat_driver ? m->compat_driver : "");
                render_ctx_set_bool(it, "check", m->driver_major_min != NULL);
                render_ctx_set(it, "cuda", m->driver_cuda ? m->driver_cuda : "");
                render_ctx_set(it, "major_min", m->driver_major_min ? m->driver_major_min : "");
                render_ctx_set(it, "release_min", m->driver_release_min ? m->driver_release_min : "");
                render_ctx_set_bool(it, "refuse", m->driver_refuse);
        }
        render_ctx_set_list(ctx, "ops");
        for (size_t i = 0; i < m->n_ops; i++) {
                struct render_ctx *it = render_ctx_add_item(ctx, "ops");
                for (size_t k = 0; k < ELEMENTSOF(op_keys); k++)
                        render_ctx_set_bool(it, op_keys[k], m->ops[i].kind == (enum env_op_kind)k);
                render_ctx_set(it, "name", m->ops[i].name);
                render_ctx_set_from(it, "value", m->ops[i].value, m->ops[i].origin);
        }
        return ctx;
}

/* The list `list` of ctx, an item for each "WORD\tMODULE" of pairs: key
 * WORD, "module" MODULE. */
static void set_pairs(struct render_ctx *ctx, const char *list, const char *key, const struct strv *pairs)
{
        render_ctx_set_list(ctx, list);
        for (size_t i = 0; i < pairs->len; i++) {
                _cleanup_free_ char *word = xstrndup(pairs->items[i], strcspn(pairs->items[i], "\t"));
                struct render_ctx *it = render_ctx_add_item(ctx, list);

                render_ctx_set(it, key, word);
                render_ctx_set(it, "module", strchr(pairs->items[i], '\t') + 1);
        }
}

static struct render_ctx *modulerc_context(const struct modulerc_plan *rc)
{
        struct render_ctx *ctx = render_ctx_new();
        struct render_ctx *it;

        render_ctx_set(ctx, "cudamod_version", CUDAMOD_VERSION);
        render_ctx_set_list(ctx, "defaults");
        if (rc->module) {
                it = render_ctx_add_item(ctx, "defaults");
                render_ctx_set(it, "module", rc->module);
                render_ctx_set(it, "version", rc->version);
        }
        /* config modulerc (lmod-api): hidden versions, aliases, tags. */
        render_ctx_set_list(ctx, "hidden");
        for (size_t i = 0; i < rc->hidden.len; i++)
                render_ctx_set(render_ctx_add_item(ctx, "hidden"), "module", rc->hidden.items[i]);
        set_pairs(ctx, "aliases", "alias", &rc->aliases);
        set_pairs(ctx, "tags", "tag", &rc->tags);
        return ctx;
}

struct rendered {
        struct gen_file *files;
        struct strbuf *texts;
        size_t n;
};

static void rendered_release(struct rendered *r)
{
        for (size_t i = 0; i < r->n; i++)
                strbuf_release(&r->texts[i]);
        free(r->texts);
        free(r->files);
}

static int render_all(const struct plan *p, const struct config *cfg, const struct templates *t,
                      struct rendered *ret, struct diag *d)
{
        size_t n = p->n_modules + p->n_rcs;
        struct rendered out = { .files = xcalloc(n + 1, sizeof(struct gen_file)),
                                .texts = xcalloc(n + 1, sizeof(struct strbuf)) };

        for (size_t i = 0; i < n; i++)
                strbuf_init(&out.texts[i]);
        out.n = n;
        for (size_t i = 0; i < n; i++) {
                bool rc = i >= p->n_modules;
                const struct module_plan *m = rc ? NULL : &p->modules[i];
                const struct modulerc_plan *mrc = rc ? &p->rcs[i - p->n_modules] : NULL;
                size_t k = rc ? N_COMPONENTS : m->install->component->index;
                struct render_ctx *ctx = rc ? modulerc_context(mrc) : module_context(m, cfg);
                int r = render(t->text[k], t->len[k], t->name[k], p->format, ctx, &out.texts[i], d);

                render_ctx_free(ctx);
                if (r < 0) {
                        rendered_release(&out);
                        return r;
                }
                out.files[i] = (struct gen_file){
                        .path = rc ? mrc->path : m->path,
                        .content = out.texts[i].buf,
                        .len = out.texts[i].len,
                        .install = rc ? NULL : m->install->realpath,
                        .module = rc ? NULL : m->full_name,
                        .identity = rc ? NULL : m->identity,
                        .base = rc ? NULL : m->base,
                        .toolkit = rc || !m->toolkit ? NULL : m->toolkit->realpath,
                        .kind = rc || m->install->kind != INSTALL_RUNTIME ? NULL : "runtime",
                        .cuda_arch = rc ? NULL : m->install->cuda_arch,
                };
        }
        *ret = out;
        return 0;
}

/* Every rendered file parses (Lua loaded without running, Tcl read by its
 * syntax rules) before any is written: a value the renderer let through
 * that changed a file's structure, or a site template that is not valid
 * Lua or Tcl, is an error naming the file, and nothing is written. */
static int check_rendered(const struct plan *p, const struct rendered *rd, struct diag *d)
{
        for (size_t i = 0; i < rd->n; i++) {
                _cleanup_free_ char *path = path_join(p->outdir, rd->files[i].path);
                int r = modulefile_check_syntax(rd->files[i].content, rd->files[i].len, path, p->format, d);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* SIGTERM, SIGINT and SIGHUP while the tree is written: the handler only
 * records the signal; write_tree stops between two files, removes its
 * temporary files and writes an index that describes what is on disk, and
 * the run then ends by the same signal, as a shell expects. Before that
 * (scanning, rendering) nothing is written and the default action stays. */
static const struct {
        int sig;
        const char *name;
} stop_signals[] = {
        { SIGTERM, "SIGTERM" },
        { SIGINT, "SIGINT" },
        { SIGHUP, "SIGHUP" },
};

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
        stop_signal = sig;
}

struct saved_signals {
        struct sigaction old[ELEMENTSOF(stop_signals)];
        bool caught[ELEMENTSOF(stop_signals)];
};

/* A signal that is ignored (nohup) stays ignored. No SA_RESTART: a wait for
 * the lock returns, and write_tree sees the flag. */
static void catch_stop_signals(struct saved_signals *s)
{
        struct sigaction sa = { .sa_handler = on_stop_signal };

        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
                sigaddset(&sa.sa_mask, stop_signals[i].sig);
        for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++) {
                s->caught[i] = false;
                if (sigaction(stop_signals[i].sig, NULL, &s->old[i]) < 0 || s->old[i].sa_handler == SIG_IGN)
                        continue;
                s->caught[i] = sigaction(stop_signals[i].sig, &sa, NULL) == 0;
        }
}

static void restore_stop_signals(const struct saved_signals *s)
{
        for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
                if (s->caught[i])
                        (void)sigaction(stop_signals[i].sig, &s->old[i], NULL);
}

/* pytorch.cuda_arch_list: detect: the arch list of the last validation
 * recorded in the output directory's index (cudamod validate), or none,
 * with a warning saying how to get one. */
static void detected_arch_list(struct config *cfg, const char *outdir, struct gen *run)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        json_t *v = NULL;
        const char *list;

        if (!streq(cfg->cuda_arch_list, "detect"))
                return;
        free(cfg->cuda_arch_list);
        cfg->cuda_arch_list = xstrdup("");
        if (read_index_validation(outdir, &v, &d) < 0 && d.message && !streq(d.message, ""))
                gen_verbose(run, "%s", d.message);
        list = json_string_value(json_object_get(v, "arch_list"));
        if (list && *list) {
                _cleanup_free_ char *index = path_join(outdir, ".cudamod-index.json");
                _cleanup_free_ char *shown = term_escape(list);

                free(cfg->cuda_arch_list);
                cfg->cuda_arch_list = xstrdup(list);
                /* An index can be edited by hand: the value passes the
                 * renderer's gate, named by where it came from. */
                free(cfg->cuda_arch_list_origin);
                cfg->cuda_arch_list_origin = xasprintf("index '%s': validation.arch_list", index);
                gen_verbose(run, "TORCH_CUDA_ARCH_LIST=%s from the validation of %s", shown,
                            json_string_value(json_object_get(v, "time")) ?: "an earlier run");
        } else
                gen_warning(run, "pytorch.cuda_arch_list is 'detect', but '%s' records no GPU from a "
                            "validation: run `cudamod validate` on the GPU nodes (validate.targets) "
                            "first; TORCH_CUDA_ARCH_LIST is left unset", outdir);
        json_decref(v);
}

/* A root named on the command line or in the config's search that does not
 * exist, reported. With --prune that is fatal: an unmounted /apps would
 * otherwise prune the modules of everything under it. */
static bool missing_root(const struct scan_options *so, struct gen *run)
{
        for (size_t i = 0; so->roots && i < so->n_roots; i++)
                if (access(so->roots[i], F_OK) < 0) {
                        gen_fail(run, -ENOENT, "'%s': %s; not pruning, so that a missing mount does not "
                                 "remove the modules of everything under it", so->roots[i], strerror(errno));
                        return true;
                }
        return false;
}

/* Whether path is dir or lies below it (both canonical). */
static bool path_within(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0' || streq(dir, "/"));
}

/* A root that is an empty directory while the index records modules from
 * it is what a mount point whose filesystem is missing looks like: the
 * scan did not read it (a gap: its modules are kept as they are, --prune
 * refuses), with a warning naming the root and those modules. An index
 * that cannot be read names nothing here (the run then stops on it). */
static void unread_empty_roots(struct scan_result *sr, const char *outdir, struct gen *run)
{
        _cleanup_(index_names_release) struct index_names names = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        if (!sr->n_empty_roots || index_names_read(outdir, &names, &d) < 0)
                return;
        for (size_t i = 0; i < sr->n_empty_roots; i++) {
                const struct scan_root *root = &sr->empty_roots[i];
                _cleanup_strbuf_ struct strbuf kept = STRBUF_INIT;
                size_t n = 0;

                for (size_t k = 0; k < names.n; k++)
                        if (names.items[k].install && path_within(names.items[k].install, root->realpath))
                                strbuf_addf(&kept, "%s'%s/%s'", n++ ? ", " : "", names.items[k].dir,
                                            names.items[k].version);
                if (n == 0)
                        continue;
                gen_warning(run, "'%s' is an empty directory, but the index of '%s' records %zu module%s "
                            "from it (%s): an unmounted mount point looks like that; not read, %s kept "
                            "as %s", root->path, outdir, n, n == 1 ? "" : "s", kept.buf,
                            n == 1 ? "it is" : "they are", n == 1 ? "it is" : "they are");
                scan_result_add_gap(sr, root->path, root->realpath,
                                    "an empty directory, but the index records modules from it");
        }
}

/* After an incomplete scan the installs below what it could not read look
 * gone: --prune would remove their modules. Refused, naming each place (an
 * error, so that -q shows it too). */
static bool incomplete_scan(const struct scan_result *sr, struct gen *run)
{
        enum { SHOWN = 10 };

        if (scan_complete(sr))
                return false;
        for (size_t i = 0; i < sr->n_gaps && i < SHOWN; i++)
                gen_fail(run, -EIO, "not pruning: the scan could not read '%s': %s", sr->gaps[i].path,
                         sr->gaps[i].why);
        if (sr->n_gaps > SHOWN)
                gen_fail(run, -EIO, "not pruning: and %zu more places the scan could not read",
                         sr->n_gaps - SHOWN);
        gen_fail(run, -EIO, "the modules of the installs there would look gone; make %s readable (or mounted), or "
                 "leave %s out with 'exclude:' in the config, then run --prune again",
                 sr->n_gaps == 1 ? "it" : "them", sr->n_gaps == 1 ? "it" : "them");
        return true;
}

/* The installs the scan did not read whole keep their modules and the
 * default as they are (write.h): say which files, and why. */
static void report_held(const struct write_result *w, const struct scan_result *sr,
                        struct gen *run)
{
        for (size_t i = 0; i < w->n_files; i++) {
                const struct file_report *f = &w->files[i];
                const char *place = f->held_by;

                if (f->status != FILE_HELD)
                        continue;
                /* Named as walked, not by its canonical path. */
                for (size_t k = 0; place && k < sr->n_gaps; k++)
                        if (streq(sr->gaps[k].realpath, place)) {
                                place = sr->gaps[k].path;
                                break;
                        }
                gen_warning(run, "'%s' left as it is%s: the scan could not read '%s', so what it found "
                            "there is partial", f->path, f->module ? "" : " (the default it marks stays)",
                            place ? place : "all of its roots");
        }
}

/* The directories of the modulepath besides this tree: $MODULEPATH's,
 * then the config's `modulepath`. */
static void site_modulepath(const struct config *cfg, struct strv *ret)
{
        const char *mp = getenv("MODULEPATH");

        while (mp && *mp) {
                const char *colon = strchr(mp, ':');
                size_t n = colon ? (size_t)(colon - mp) : strlen(mp);

                if (n) {
                        _cleanup_free_ char *dir = xstrndup(mp, n);
                        if (!strv_contains(ret, dir))
                                strv_add(ret, dir);
                }
                mp = colon ? colon + 1 : NULL;
        }
        for (size_t i = 0; i < cfg->modulepath.len; i++)
                if (!strv_contains(ret, cfg->modulepath.items[i]))
                        strv_add(ret, cfg->modulepath.items[i]);
}

/* Before anything is written: the tree must not land among a site's own
 * modulefiles (write.h site_check), unless --force; names that another
 * tree on the modulepath also provides are warnings. Returns false when
 * the write is refused. */
static bool check_site(const struct plan *p, const struct config *cfg, const struct rendered *rd,
                       struct gen *run, struct strv *warns)
{
        enum { SHOWN = 10 };
        _cleanup_(strv_release) struct strv mp = { 0 }, levels = { 0 };
        struct site_name *names = xcalloc(p->n_modules + 1, sizeof(*names));
        struct site_options so = { .outdir = p->outdir, .names = names };
        struct site_report r = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        bool ok = true;

        for (size_t i = 0; i < p->n_modules; i++) {
                const struct module_plan *m = &p->modules[i];
                const struct strv *fam = &cfg->family[m->install->component->index];
                size_t n = strlen(p->outdir);
                bool seen = false;

                if (m->modulepath && strncmp(m->modulepath, p->outdir, n) == 0 && m->modulepath[n] == '/' &&
                    !strv_contains(&levels, m->modulepath + n + 1))
                        strv_add(&levels, m->modulepath + n + 1);
                for (size_t k = 0; k < so.n_names && !seen; k++)
                        seen = streq(names[k].name, m->name);
                if (seen)
                        continue;
                names[so.n_names++] = (struct site_name){
                        .name = m->name,
                        .component = m->install->component->name,
                        .conflicts = fam->len > 1 ? (const char *const *)fam->items + 1 : NULL,
                        .n_conflicts = fam->len > 1 ? fam->len - 1 : 0,
                };
        }
        site_modulepath(cfg, &mp);
        so.modulepath = (const char *const *)mp.items;
        so.n_modulepath = mp.len;
        so.levels = (const char *const *)levels.items;
        so.n_levels = levels.len;
        if (site_check(rd->files, rd->n, &so, &r, &d) < 0) {
                /* What the tree holds is not known: nothing is written on
                 * partial knowledge, --force or not. */
                gen_fail_diag(run, -EIO, &d);
                gen_fail(run, -EIO, "cannot tell whether another tool's modulefiles lie where cudamod would write; "
                         "nothing written");
                free(names);
                return false;
        }
        if (r.foreign.len) {
                _cleanup_free_ char *out = term_escape(p->outdir);

                for (size_t i = 0; i < r.foreign.len && i < SHOWN; i++) {
                        _cleanup_free_ char *f = term_escape(r.foreign.items[i]);

                        if (run->o->force)
                                gen_warning(run, "'%s/%s' was not written by cudamod and lies where it writes "
                                            "(--force: writing beside it)", out, f);
                        else
                                gen_fail(run, -EEXIST, "'%s/%s' was not written by cudamod and lies where it "
                                         "would write", out, f);
                }
                if (r.foreign.len > SHOWN)
                        gen_fail(run, -EEXIST, "and %zu more files not written by cudamod there",
                                 r.foreign.len - SHOWN);
                if (!run->o->force) {
                        gen_fail(run, -EEXIST, "'%s' holds another tool's modulefiles where cudamod would "
                                 "write (a site's EasyBuild modules/all?): their 'module load' would stop "
                                 "working; write to a directory of its own (-o) and put it on MODULEPATH, or "
                                 "--force; nothing written",
                                 out);
                        ok = false;
                }
        }
        if (r.on_modulepath) {
                _cleanup_free_ char *out = term_escape(p->outdir);

                if (run->o->force)
                        gen_warning(run, "'%s' is itself on MODULEPATH: its Core/ and CUDA/ read as modules named "
                                    "Core and CUDA there (--force: writing anyway)", out);
                else {
                        gen_fail(run, -EEXIST, "'%s' is itself on MODULEPATH, where the hierarchical layout's "
                                 "Core/ and CUDA/ would read as modules named Core and CUDA; put '%s/Core' on "
                                 "MODULEPATH instead, use --layout flat, or --force; nothing written", out, out);
                        ok = false;
                }
        }
        for (size_t i = 0; ok && i < r.warnings.len; i++) {
                _cleanup_free_ char *w = term_escape(r.warnings.items[i]);

                gen_warning(run, "%s", w);
                strv_add(warns, r.warnings.items[i]);
        }
        site_report_release(&r);
        free(names);
        return ok;
}

/* lmod.spider_cache: after a write that changed something, Lmod's system
 * spider cache is rebuilt with Lmod's own tool over the site's modulepath
 * and this tree's top level (spider-cache.h). Returns 0 (also when there is
 * nothing to do), or -1 after saying why it could not; *ret_dir: the cache
 * rebuilt (NULL: none). */
static int rebuild_spider_cache(const struct plan *p, const struct config *cfg, const struct write_result *w,
                                struct gen *run, char **ret_dir)
{
        _cleanup_(strv_release) struct strv mp = { 0 }, site_mp = { 0 };
        _cleanup_(spider_cache_release) struct spider_cache sc = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *tool = NULL, *top = NULL, *why = NULL;

        *ret_dir = NULL;
        if (!config_spider_cache_enabled(cfg) ||
            !(w->count[FILE_CREATED] || w->count[FILE_UPDATED] || w->count[FILE_PRUNED]))
                return 0;
        tool = spider_cache_find_tool();
        if (!tool) {
                gen_error(run, "lmod.spider_cache: Lmod's update_lmod_system_cache_files was not found ($LMOD_DIR, "
                          "next to $LMOD_CMD, /usr/share/lmod/lmod/libexec); the modules are written, the spider "
                          "cache is stale");
                return -1;
        }
        if (cfg->spider_cache.dir) {
                sc.dir = xstrdup(cfg->spider_cache.dir);
                sc.timestamp = xstrdup(cfg->spider_cache.timestamp);
        } else if (spider_cache_from_lmodrc(tool, &sc, &d) < 0) {
                gen_error(run, "%s; the modules are written, the spider cache is not rebuilt", d.message);
                return -1;
        }
        /* The spider evaluates every modulefile it finds with Lmod's full
         * Lua, as this process: only directories nobody else can change
         * (spider-cache.h, doc/guide.md "Threat model"). cudamod's own tree
         * is walked whole: its hierarchy's levels are beside Core. */
        if ((why = spider_cache_foreign(p->outdir))) {
                gen_error(run, "lmod.spider_cache: %s: Lmod's spider would run what another user chose; the modules "
                          "are written, the spider cache is not rebuilt", why);
                return -1;
        }
        site_modulepath(cfg, &site_mp);
        for (size_t i = 0; i < site_mp.len; i++) {
                _cleanup_free_ char *bad = spider_cache_foreign(site_mp.items[i]);

                if (bad)
                        gen_warning(run, "lmod.spider_cache: '%s' is left out of the spider cache: %s, and Lmod's "
                                    "spider would run its modulefiles as %s", site_mp.items[i], bad,
                                    geteuid() == 0 ? "root" : "you");
                else
                        strv_add(&mp, site_mp.items[i]);
        }
        top = p->layout == MODULE_LAYOUT_HIERARCHICAL ? path_join(p->outdir, "Core") : xstrdup(p->outdir);
        if (!strv_contains(&mp, top))
                strv_add(&mp, top);
        gen_verbose(run, "rebuilding the spider cache '%s'%s%s with '%s'", sc.dir, sc.from ? " named by " : "",
                    sc.from ? sc.from : "", tool);
        if (spider_cache_rebuild(tool, &sc, (const char *const *)mp.items, mp.len, &d) < 0) {
                gen_error(run, "%s; the modules are written, the spider cache is as it was", d.message);
                return -1;
        }
        *ret_dir = TAKE_PTR(sc.dir);
        return 0;
}

/* Environment Modules' `module avail` does not descend a hierarchy: said
 * once per run (README, cudamod(1)). */
static void warn_em_hierarchy(const struct config *cfg, struct gen *run, struct strv *warns)
{
        static const char msg[] =
                "Environment Modules has no 'module spider' and its 'module avail' does not descend the "
                "hierarchical layout: 'module avail cudnn' finds nothing until a cuda module is loaded; "
                "--layout flat lists every module at once";

        if (cfg->format != FORMAT_TCL || cfg->layout != MODULE_LAYOUT_HIERARCHICAL)
                return;
        gen_warning(run, "%s", msg);
        strv_add(warns, msg);
}

/* Milliseconds on the monotonic clock, for -v's time split. */
static double now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
/* The signal's name, as the interruption is reported. */
static const char *stop_signal_name(int sig)
{
        for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
                if (stop_signals[i].sig == sig)
                        return stop_signals[i].name;
        return "a signal";
}

/* scan_run, with what scan_with_progress would say to the log. */
static int scan_logged(struct scan_options *so, struct scan_result *sr, struct gen *run)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;

        if (run->o->scan_run)
                return run->o->scan_run(so, sr, run->o->scan_userdata);
        for (size_t i = 0; i < (so->roots ? so->n_roots : 0); i++)
                gen_verbose(run, "scanning '%s'", so->roots[i]);
        if (scan_run(so, sr, &d) < 0)
                return gen_fail_diag(run, -EIO, &d);
        for (size_t i = 0; i < sr->warnings.len; i++)
                gen_warning(run, "%s", sr->warnings.items[i]);
        for (size_t i = 0; i < sr->verbose.len; i++)
                gen_verbose(run, "%s", sr->verbose.items[i]);
        gen_verbose(run, "%zu installation%s found", sr->installs.len,
                    sr->installs.len == 1 ? "" : "s");
        return 0;
}

/* The output directory goes on MODULEPATH, and the hierarchy's levels in
 * it too: refused when it holds what that cannot carry. */
static int check_outdir(const char *outdir, const struct config *cfg, struct gen *run)
{
        const char *why;

        if (strchr(outdir, ':'))
                return gen_fail(run, -EINVAL, "the output directory '%s' holds ':', which MODULEPATH cannot "
                                "carry", outdir);
        if ((why = written_value_problem(outdir, WRITTEN_WORD, NULL)))
                return gen_fail(run, -EINVAL, "the output directory '%s' holds %s", outdir, why);
        if (cfg->format == FORMAT_TCL && !ascii_only(outdir))
                /* The hierarchy's Tcl modulefiles put it on MODULEPATH. */
                return gen_fail(run, -EINVAL, "the output directory '%s' holds a byte that is not ASCII, "
                                "which Lmod reading a Tcl modulefile turns into other bytes", outdir);
        return 0;
}

/* A failure that is not the configuration's: never -EINVAL. */
static int run_failure(int r)
{
        return r == -EINVAL || r >= 0 ? -EIO : r;
}

/* When each step ended, for -v's time split. */
struct split {
        double start, scan, plan, render;
};

/* Names stay with their installs: those the index records are given
 * again, and to no one else, unless rename. The index is read without the
 * lock; when another run changed it before this one got the lock,
 * write_tree says so (index_changed, nothing written) and the plan is
 * made again from the new one. On return rd holds what was rendered. */
static int plan_render_write(struct gen *run, const struct scan_result *sr, const struct templates *t,
                             const struct strv *unseen, struct rendered *rd, struct split *tm,
                             struct generate_result *res)
{
        const struct generate_options *o = run->o;
        const char *outdir = res->outdir;
        _cleanup_(index_names_release) struct index_names given = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        for (unsigned attempt = 0;; attempt++) {
                struct write_options wo = {
                        .outdir = outdir, .dry_run = o->dry_run, .check = o->check,
                        .prune = o->prune, .force = o->force, .diff_out = o->diff_out,
                        .on_wait = o->on_wait, .userdata = o->wait_userdata, .lock_timeout = o->lock_timeout,
                        .unseen = (const char *const *)unseen->items, .n_unseen = unseen->len,
                        .mode = (mode_t)o->cfg->output_mode,
                };
                _cleanup_free_ struct plan_given *given_plan = NULL;
                struct saved_signals ss;
                bool writes = !o->dry_run && !o->check, index_changed = false;
                int r;

                wo.index_changed = &index_changed;
                if (index_names_read(outdir, &given, &d) < 0)
                        return gen_fail_diag(run, -EIO, &d);
                if (given.ignored)
                        gen_warning(run, "the index '%s/.cudamod-index.json' is not trusted "
                                    "for module names: %s; names are given anew", outdir, given.ignored);
                if (!o->rename) {
                        given_plan = xcalloc(given.n + 1, sizeof(*given_plan));
                        for (size_t i = 0; i < given.n; i++)
                                given_plan[i] = (struct plan_given){
                                        .dir = given.items[i].dir, .version = given.items[i].version,
                                        .install = given.items[i].install,
                                        .identity = given.items[i].identity, .base = given.items[i].base,
                                };
                }
                wo.planned_index_sha = given.sha;
                if (plan_build_given(&sr->installs, o->cfg, outdir, given_plan, o->rename ? 0 : given.n,
                                     &res->plan, &d) < 0)
                        return gen_fail_diag(run, -EINVAL, &d);
                tm->plan = now_ms();
                strv_release(&res->warnings);
                for (size_t i = 0; i < sr->warnings.len; i++)
                        strv_add(&res->warnings, sr->warnings.items[i]);
                for (size_t i = 0; i < res->plan.warnings.len; i++) {
                        if (attempt == 0)
                                gen_warning(run, "%s", res->plan.warnings.items[i]);
                        strv_add(&res->warnings, res->plan.warnings.items[i]);
                }
                if (render_all(&res->plan, o->cfg, t, rd, &d) < 0 || check_rendered(&res->plan, rd, &d) < 0)
                        return gen_fail_diag(run, -EINVAL, &d);
                tm->render = now_ms();
                warn_em_hierarchy(o->cfg, run, &res->warnings);
                if (!check_site(&res->plan, o->cfg, rd, run, &res->warnings))
                        return -EEXIST;
                if (writes) {
                        wo.interrupted = &stop_signal;
                        catch_stop_signals(&ss);
                }
                r = write_tree(rd->files, rd->n, &wo, &res->write, &d);
                if (writes)
                        restore_stop_signals(&ss);
                if (r < 0 && index_changed && attempt < 8 && !stop_signal) {
                        gen_verbose(run, "the index changed while planning (another run): "
                                    "planning again");
                        diag_release(&d);
                        rendered_release(rd);
                        *rd = (struct rendered){ 0 };
                        plan_release(&res->plan);
                        res->plan = (struct plan){ 0 };
                        index_names_release(&given);
                        continue;
                }
                if (r < 0 && !(r == -EINTR && stop_signal))
                        gen_fail_diag(run, run_failure(r), &d);
                if (stop_signal) {
                        res->stop_signal = stop_signal;
                        return gen_fail(run, -EINTR, "interrupted by %s; every modulefile is old or new, and "
                                        "the index describes what is on disk (run generate again to complete "
                                        "the tree)", stop_signal_name(stop_signal));
                }
                if (r < 0)
                        return run_failure(r);
                return 0;
        }
}

void generate_result_release(struct generate_result *r)
{
        free(r->outdir);
        plan_release(&r->plan);
        write_result_release(&r->write);
        strv_release(&r->warnings);
        free(r->spider_cache);
}

int generate_run(const struct generate_options *o, struct generate_result *res, struct diag *d)
{
        _cleanup_diag_ struct diag own = DIAG_INIT;
        struct gen run = { .o = o, .d = d ? d : &own };
        struct scan_result sr = { 0 };
        struct templates t = { 0 };
        struct rendered rd = { 0 };
        struct split tm = { 0 };
        _cleanup_(strv_release) struct strv unseen = { 0 };
        int r;

        *res = (struct generate_result){ 0 };
        res->outdir = path_absolute(o->cfg->output);
        r = check_outdir(res->outdir, o->cfg, &run);
        if (r < 0)
                goto out;
        /* Templates first: a broken site template is a configuration
         * error, found before any scanning. */
        r = templates_load(&t, o->cfg, run.d);
        if (r < 0) {
                r = -EINVAL;
                goto out;
        }
        if (o->prune && missing_root(o->scan, &run)) {
                r = -ENOENT;
                goto out;
        }
        tm.start = now_ms();
        r = scan_logged(o->scan, &sr, &run);
        if (r < 0) {
                r = run_failure(r);
                goto out;
        }
        tm.scan = now_ms();
        unread_empty_roots(&sr, res->outdir, &run);
        if (o->prune && incomplete_scan(&sr, &run)) {
                r = -EIO;
                goto out;
        }
        for (size_t i = 0; i < sr.n_gaps; i++)
                strv_add(&unseen, sr.gaps[i].realpath);
        detected_arch_list(o->cfg, res->outdir, &run);
        if (!(o->cfg->output_mode & 0044))
                gen_warning(&run, "output_mode is %04o: no user but the owner of '%s' can "
                            "read, so load, its modules", o->cfg->output_mode, res->outdir);
        r = plan_render_write(&run, &sr, &t, &unseen, &rd, &tm, res);
        if (r < 0)
                goto out;
        gen_verbose(&run, "time: scan %.1f ms (%u threads, %zu installs), plan %.1f ms, "
                    "render %.1f ms, write %.1f ms (%zu files)", tm.scan - tm.start, o->scan->jobs,
                    sr.installs.len, tm.plan - tm.scan, tm.render - tm.plan, now_ms() - tm.render, rd.n);
        report_held(&res->write, &sr, &run);
        if (!o->dry_run && !o->check &&
            rebuild_spider_cache(&res->plan, o->cfg, &res->write, &run, &res->spider_cache) < 0)
                res->spider_cache_failed = true;
out:
        rendered_release(&rd);
        templates_release(&t);
        scan_result_release(&sr);
        return r;
}
