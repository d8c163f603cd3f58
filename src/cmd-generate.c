/* cmd-generate.c: `cudamod generate`: scan, plan, render, write. */
#include <errno.h>
#include <getopt.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#include "cmd.h"
#include "plan.h"
#include "render.h"
#include "spider-cache.h"
#include "strbuf.h"
#include "util-path.h"
#include "write.h"
#include "build-config.h"
#include "banned.h"

struct generate_args {
        const char *output;
        const char *format;
        const char *layout;
        bool dry_run, check, prune, force, json, rename;
        long lock_timeout; /* as write_options.lock_timeout */
};

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
        render_ctx_set(ctx, "extensions", extensions);
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
        render_ctx_set_list(ctx, "aliases");
        for (size_t i = 0; i < rc->aliases.len; i++) {
                _cleanup_free_ char *alias = xstrndup(rc->aliases.items[i], strcspn(rc->aliases.items[i], "\t"));

                it = render_ctx_add_item(ctx, "aliases");
                render_ctx_set(it, "alias", alias);
                render_ctx_set(it, "module", strchr(rc->aliases.items[i], '\t') + 1);
        }
        render_ctx_set_list(ctx, "tags");
        for (size_t i = 0; i < rc->tags.len; i++) {
                _cleanup_free_ char *tag = xstrndup(rc->tags.items[i], strcspn(rc->tags.items[i], "\t"));

                it = render_ctx_add_item(ctx, "tags");
                render_ctx_set(it, "tag", tag);
                render_ctx_set(it, "module", strchr(rc->tags.items[i], '\t') + 1);
        }
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

/* Say what a stop signal left behind and die of it. */
_noreturn_ static void die_of_stop_signal(int sig)
{
        const char *name = "a signal";

        for (size_t i = 0; i < ELEMENTSOF(stop_signals); i++)
                if (stop_signals[i].sig == sig)
                        name = stop_signals[i].name;
        log_error("interrupted by %s; every modulefile is old or new, and the index describes what is "
                  "on disk (run generate again to complete the tree)", name);
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

/* pytorch.cuda_arch_list: detect: the arch list of the last validation
 * recorded in the output directory's index (cudamod validate), or none,
 * with a warning saying how to get one. */
static void detected_arch_list(struct config *cfg, const char *outdir, const struct global_options *g)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        json_t *v = NULL;
        const char *list;

        if (!streq(cfg->cuda_arch_list, "detect"))
                return;
        free(cfg->cuda_arch_list);
        cfg->cuda_arch_list = xstrdup("");
        if (read_index_validation(outdir, &v, &d) < 0 && d.message && !streq(d.message, ""))
                log_verbose(g, "%s", d.message);
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
                log_verbose(g, "TORCH_CUDA_ARCH_LIST=%s from the validation of %s", shown,
                            json_string_value(json_object_get(v, "time")) ?: "an earlier run");
        } else
                log_warning(g, "pytorch.cuda_arch_list is 'detect', but '%s' records no GPU from a "
                            "validation: run `cudamod validate` on the GPU nodes (validate.targets) "
                            "first; TORCH_CUDA_ARCH_LIST is left unset", outdir);
        json_decref(v);
}

/* A root named on the command line or in the config's search that does not
 * exist, reported. With --prune that is fatal: an unmounted /apps would
 * otherwise prune the modules of everything under it. */
static bool missing_root(const struct scan_options *so)
{
        for (size_t i = 0; so->roots && i < so->n_roots; i++)
                if (access(so->roots[i], F_OK) < 0) {
                        log_error("'%s': %s; not pruning, so that a missing mount does not remove "
                                  "the modules of everything under it",
                                  so->roots[i], strerror(errno));
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
static void unread_empty_roots(struct scan_result *sr, const char *outdir, const struct global_options *g)
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
                log_warning(g, "'%s' is an empty directory, but the index of '%s' records %zu module%s "
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
static bool incomplete_scan(const struct scan_result *sr)
{
        enum { SHOWN = 10 };

        if (scan_complete(sr))
                return false;
        for (size_t i = 0; i < sr->n_gaps && i < SHOWN; i++)
                log_error("not pruning: the scan could not read '%s': %s", sr->gaps[i].path, sr->gaps[i].why);
        if (sr->n_gaps > SHOWN)
                log_error("not pruning: and %zu more places the scan could not read", sr->n_gaps - SHOWN);
        log_error("the modules of the installs there would look gone; make %s readable (or mounted), or "
                  "leave %s out with 'exclude:' in the config, then run --prune again",
                  sr->n_gaps == 1 ? "it" : "them", sr->n_gaps == 1 ? "it" : "them");
        return true;
}

/* The installs the scan did not read whole keep their modules and the
 * default as they are (write.h): say which files, and why. */
static void report_held(const struct write_result *w, const struct scan_result *sr,
                        const struct global_options *g)
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
                log_warning(g, "'%s' left as it is%s: the scan could not read '%s', so what it found "
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
                       const struct generate_args *a, const struct global_options *g, struct strv *warns)
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
                log_diag(&d);
                log_error("cannot tell whether another tool's modulefiles lie where cudamod would write; "
                          "nothing written");
                free(names);
                return false;
        }
        if (r.foreign.len) {
                _cleanup_free_ char *out = term_escape(p->outdir);

                for (size_t i = 0; i < r.foreign.len && i < SHOWN; i++) {
                        _cleanup_free_ char *f = term_escape(r.foreign.items[i]);

                        if (a->force)
                                log_warning(g, "'%s/%s' was not written by cudamod and lies where it writes "
                                            "(--force: writing beside it)", out, f);
                        else
                                log_error("'%s/%s' was not written by cudamod and lies where it would write", out, f);
                }
                if (r.foreign.len > SHOWN)
                        log_error("and %zu more files not written by cudamod there", r.foreign.len - SHOWN);
                if (!a->force) {
                        log_error("'%s' holds another tool's modulefiles where cudamod would write (a site's "
                                  "EasyBuild modules/all?): their 'module load' would stop working; write to a "
                                  "directory of its own (-o) and put it on MODULEPATH, or --force; nothing written",
                                  out);
                        ok = false;
                }
        }
        if (r.on_modulepath) {
                _cleanup_free_ char *out = term_escape(p->outdir);

                if (a->force)
                        log_warning(g, "'%s' is itself on MODULEPATH: its Core/ and CUDA/ read as modules named "
                                    "Core and CUDA there (--force: writing anyway)", out);
                else {
                        log_error("'%s' is itself on MODULEPATH, where the hierarchical layout's Core/ and CUDA/ "
                                  "would read as modules named Core and CUDA; put '%s/Core' on MODULEPATH instead, "
                                  "use --layout flat, or --force; nothing written", out, out);
                        ok = false;
                }
        }
        for (size_t i = 0; ok && i < r.warnings.len; i++) {
                _cleanup_free_ char *w = term_escape(r.warnings.items[i]);

                log_warning(g, "%s", w);
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
                                const struct global_options *g, char **ret_dir)
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
                log_error("lmod.spider_cache: Lmod's update_lmod_system_cache_files was not found ($LMOD_DIR, "
                          "next to $LMOD_CMD, /usr/share/lmod/lmod/libexec); the modules are written, the spider "
                          "cache is stale");
                return -1;
        }
        if (cfg->spider_cache.dir) {
                sc.dir = xstrdup(cfg->spider_cache.dir);
                sc.timestamp = xstrdup(cfg->spider_cache.timestamp);
        } else if (spider_cache_from_lmodrc(tool, &sc, &d) < 0) {
                log_error("%s; the modules are written, the spider cache is not rebuilt", d.message);
                return -1;
        }
        /* The spider evaluates every modulefile it finds with Lmod's full
         * Lua, as this process: only directories nobody else can change
         * (spider-cache.h, doc/guide.md "Threat model"). cudamod's own tree
         * is walked whole: its hierarchy's levels are beside Core. */
        if ((why = spider_cache_foreign(p->outdir))) {
                log_error("lmod.spider_cache: %s: Lmod's spider would run what another user chose; the modules "
                          "are written, the spider cache is not rebuilt", why);
                return -1;
        }
        site_modulepath(cfg, &site_mp);
        for (size_t i = 0; i < site_mp.len; i++) {
                _cleanup_free_ char *bad = spider_cache_foreign(site_mp.items[i]);

                if (bad)
                        log_warning(g, "lmod.spider_cache: '%s' is left out of the spider cache: %s, and Lmod's "
                                    "spider would run its modulefiles as %s", site_mp.items[i], bad,
                                    geteuid() == 0 ? "root" : "you");
                else
                        strv_add(&mp, site_mp.items[i]);
        }
        top = p->layout == MODULE_LAYOUT_HIERARCHICAL ? path_join(p->outdir, "Core") : xstrdup(p->outdir);
        if (!strv_contains(&mp, top))
                strv_add(&mp, top);
        log_verbose(g, "rebuilding the spider cache '%s'%s%s with '%s'", sc.dir, sc.from ? " named by " : "",
                    sc.from ? sc.from : "", tool);
        if (spider_cache_rebuild(tool, &sc, (const char *const *)mp.items, mp.len, &d) < 0) {
                log_error("%s; the modules are written, the spider cache is as it was", d.message);
                return -1;
        }
        *ret_dir = TAKE_PTR(sc.dir);
        return 0;
}

/* Environment Modules' `module avail` does not descend a hierarchy: said
 * once per run (README, cudamod(1)). */
static void warn_em_hierarchy(const struct config *cfg, const struct global_options *g, struct strv *warns)
{
        static const char msg[] =
                "Environment Modules has no 'module spider' and its 'module avail' does not descend the "
                "hierarchical layout: 'module avail cudnn' finds nothing until a cuda module is loaded; "
                "--layout flat lists every module at once";

        if (cfg->format != FORMAT_TCL || cfg->layout != MODULE_LAYOUT_HIERARCHICAL)
                return;
        log_warning(g, "%s", msg);
        strv_add(warns, msg);
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

/* Milliseconds on the monotonic clock, for -v's time split. */
static double now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int run_generate(int argc, char **argv, const struct global_options *g)
{
        double t_start, t_scan = 0, t_plan = 0, t_render = 0;
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
        struct scan_result sr = { 0 };
        struct plan p = { 0 };
        struct templates t = { 0 };
        struct rendered rd = { 0 };
        struct write_result w = { 0 };
        struct strv warns = { 0 };
        _cleanup_(strv_release) struct strv unseen = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *outdir = NULL;
        _cleanup_(index_names_release) struct index_names given = { 0 };
        _cleanup_free_ struct plan_given *given_plan = NULL;
        char *cache_dir = NULL;
        const char *why;
        bool cache_failed = false;
        int c, status = EXIT_FOUND_FAILURE;

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
        outdir = path_absolute(cfg.output);
        if (strchr(outdir, ':')) {
                /* Users put it on MODULEPATH, and the hierarchy's levels too. */
                log_error("the output directory '%s' holds ':', which MODULEPATH cannot carry", outdir);
                status = EXIT_USAGE;
                goto out;
        }
        if ((why = written_value_problem(outdir, WRITTEN_WORD, NULL))) {
                /* The hierarchy's modules put its levels on MODULEPATH. */
                log_error("the output directory '%s' holds %s", outdir, why);
                status = EXIT_USAGE;
                goto out;
        }
        if (cfg.format == FORMAT_TCL && !ascii_only(outdir)) {
                /* The hierarchy's Tcl modulefiles put it on MODULEPATH. */
                log_error("the output directory '%s' holds a byte that is not ASCII, which Lmod reading "
                          "a Tcl modulefile turns into other bytes", outdir);
                status = EXIT_USAGE;
                goto out;
        }
        /* Templates first: a broken site template is a configuration error,
         * found before any scanning. */
        if (templates_load(&t, &cfg, &d) < 0) {
                log_diag(&d);
                status = EXIT_USAGE;
                goto out;
        }
        scan_options_from_config(&so, &cfg, argc - optind, argv + optind);
        if (a.prune && missing_root(&so)) {
                status = EXIT_FOUND_FAILURE;
                goto out;
        }
        t_start = now_ms();
        if (scan_with_progress(&so, &sr, g) < 0)
                goto out;
        t_scan = now_ms();
        unread_empty_roots(&sr, outdir, g);
        if (a.prune && incomplete_scan(&sr)) {
                status = EXIT_FOUND_FAILURE;
                goto out;
        }
        for (size_t i = 0; i < sr.n_gaps; i++)
                strv_add(&unseen, sr.gaps[i].realpath);
        detected_arch_list(&cfg, outdir, g);
        if (!(cfg.output_mode & 0044))
                log_warning(g, "output_mode is %04o: no user but the owner of '%s' can read, so load, its "
                            "modules", cfg.output_mode, outdir);
        /* Names stay with their installs: those the index records are
         * given again, and to no one else, unless --rename. The index is
         * read without the lock; when another run changed it before this
         * one got the lock, write_tree says so (index_changed, nothing written)
         * and the plan is made again from the new one. */
        for (unsigned attempt = 0;; attempt++) {
                struct lock_wait lw = { .g = g, .timeout = a.lock_timeout };
                struct write_options wo = {
                        .outdir = outdir, .dry_run = a.dry_run, .check = a.check,
                        .prune = a.prune, .force = a.force, .diff_out = stdout,
                        .on_wait = log_lock_wait, .userdata = &lw, .lock_timeout = a.lock_timeout,
                        .unseen = (const char *const *)unseen.items, .n_unseen = unseen.len,
                        .mode = (mode_t)cfg.output_mode,
                };
                struct saved_signals ss;
                bool writes = !a.dry_run && !a.check, index_changed = false;
                int r;

                wo.index_changed = &index_changed;
                if (index_names_read(outdir, &given, &d) < 0) {
                        log_diag(&d);
                        goto out;
                }
                if (given.ignored)
                        log_warning(g, "the index '%s/.cudamod-index.json' is not trusted for module names: %s; "
                                    "names are given anew", outdir, given.ignored);
                if (!a.rename) {
                        given_plan = xcalloc(given.n + 1, sizeof(*given_plan));
                        for (size_t i = 0; i < given.n; i++)
                                given_plan[i] = (struct plan_given){
                                        .dir = given.items[i].dir, .version = given.items[i].version,
                                        .install = given.items[i].install,
                                        .identity = given.items[i].identity, .base = given.items[i].base,
                                };
                }
                wo.planned_index_sha = given.sha;
                if (plan_build_given(&sr.installs, &cfg, outdir, given_plan, a.rename ? 0 : given.n, &p,
                                     &d) < 0) {
                        log_diag(&d);
                        status = EXIT_USAGE;
                        goto out;
                }
                t_plan = now_ms();
                strv_release(&warns);
                for (size_t i = 0; i < sr.warnings.len; i++)
                        strv_add(&warns, sr.warnings.items[i]);
                for (size_t i = 0; i < p.warnings.len; i++) {
                        if (attempt == 0)
                                log_warning(g, "%s", p.warnings.items[i]);
                        strv_add(&warns, p.warnings.items[i]);
                }
                if (render_all(&p, &cfg, &t, &rd, &d) < 0 || check_rendered(&p, &rd, &d) < 0) {
                        log_diag(&d);
                        status = EXIT_USAGE;
                        goto out;
                }
                t_render = now_ms();
                warn_em_hierarchy(&cfg, g, &warns);
                if (!check_site(&p, &cfg, &rd, &a, g, &warns))
                        goto out;
                /* With --json the diffs would break the document. */
                if (a.json)
                        wo.diff_out = NULL;
                if (writes) {
                        wo.interrupted = &stop_signal;
                        catch_stop_signals(&ss);
                }
                r = write_tree(rd.files, rd.n, &wo, &w, &d);
                if (writes)
                        restore_stop_signals(&ss);
                if (r < 0 && index_changed && attempt < 8 && !stop_signal) {
                        log_verbose(g, "the index changed while planning (another run): planning again");
                        diag_release(&d);
                        rendered_release(&rd);
                        rd = (struct rendered){ 0 };
                        plan_release(&p);
                        index_names_release(&given);
                        free(given_plan);
                        given_plan = NULL;
                        continue;
                }
                if (r < 0 && !(r == -EINTR && stop_signal))
                        log_diag(&d);
                if (stop_signal)
                        die_of_stop_signal(stop_signal);
                if (r < 0)
                        goto out;
                break;
        }
        log_verbose(g, "time: scan %.1f ms (%u threads, %zu installs), plan %.1f ms, render %.1f ms, "
                    "write %.1f ms (%zu files)", t_scan - t_start, so.jobs, sr.installs.len,
                    t_plan - t_scan, t_render - t_plan, now_ms() - t_render, rd.n);
        report_held(&w, &sr, g);
        if (!a.dry_run && !a.check && rebuild_spider_cache(&p, &cfg, &w, g, &cache_dir) < 0)
                cache_failed = true;
        if (a.json) {
                json_t *doc = report_json(&w, &p, &a, drift(&w), &warns);

                if (config_spider_cache_enabled(&cfg))
                        json_object_set_new(doc, "spider_cache",
                                            cache_dir ? json_string_lossy(cache_dir) : json_null());
                if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_SORT_KEYS) < 0)
                        log_error("cannot write the JSON document");
                putchar('\n');
                json_decref(doc);
        } else
                print_report(&w, &a, outdir, g);
        status = (a.check && drift(&w)) || cache_failed ? EXIT_FOUND_FAILURE : 0;
out:
        free(cache_dir);
        write_result_release(&w);
        rendered_release(&rd);
        templates_release(&t);
        plan_release(&p);
        scan_result_release(&sr);
        strv_release(&warns);
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
                "cache is rebuilt after a write that changed something. Identical input gives byte-identical files. An install\n"
                "the scan could not read whole keeps its modulefile and default as they are.\n"
                "\n"
                "Exit status: 0 done (with --check: no drift), 1 drift with --check, the\n"
                "tree could not be written, its lock stayed held or --prune was refused,\n"
                "2 usage or configuration error (nothing is written then).\n",
        .min_args = 0,
        .max_args = -1,
        .run = run_generate,
};
