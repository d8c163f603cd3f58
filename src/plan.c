/* plan.c: module names, placement, defaults and environment operations.
 *
 * A module's name is what the site's naming gives it (config-naming.c:
 * the component's module name, its version template, the level
 * directory), and a build for another architecture than the tree's
 * (config `arch`, else this machine's) always carries "-ARCH" in its
 * version, is hidden, and is never a default. Names, once given, stay:
 * the names an earlier run gave (the index, plan_given) go to the same
 * install again, and no other install gets one of them.
 *
 * The naming rule for collisions (doc/guide.md "Module names"): when installs
 * would share one module file,
 *   1. in the flat layout, cuDNN and NCCL builds of one version for
 *      different CUDA majors all get a "-cudaN" suffix;
 *   2. installs that still collide are named by their full version
 *      (CUDA release X.Y.Z, cuDNN X.Y.Z.B) when those differ;
 *   3. installs that still collide keep the name in scan order (newest
 *      version, then prefix) for the first and get "-2", "-3", … after it.
 * A name an earlier run gave another install is taken: an install that
 * would get it is named by its full version, or "-2", "-3", … (the first
 * of those no one has). Each renaming is reported, so nothing is ever
 * silently overwritten. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>

#include "component-table.h"
#include "detect.h"
#include "component.h"
#include "config-host.h"
#include "config-naming.h"
#include "cuda-driver.h"
#include "opset.h"
#include "plan.h"
#include "plan-naming.h"
#include "strbuf.h"
#include "util-path.h"
#include "util.h"
#include "version.h"
#include "banned.h"

static void plan_op_release(struct plan_op *op)
{
        free(op->name);
        free(op->value);
        free(op->origin);
}

static void ops_library(struct opset *s, const struct install *in, const struct config *cfg)
{
        const struct component *c = in->component;
        struct strv v = { 0 };

        /* A runtime install (no header: NVIDIA's CUDA 13 cuSPARSELt wheel)
         * is for the loader only: a root, CPATH or LIBRARY_PATH would send
         * a build to a library it cannot compile against. */
        if (in->kind == INSTALL_RUNTIME) {
                if (cfg->ld_library_path[c->index] && !in->static_only) {
                        opset_path_add(s, &v, in->lib_dir);
                        opset_prepends(s, "LD_LIBRARY_PATH", &v);
                }
                return;
        }
        for (const struct component_var *var = c->vars; var && var->name; var++) {
                const char *value = var->value == COMPONENT_VALUE_PREFIX        ? in->prefix
                                    : var->value == COMPONENT_VALUE_INCLUDE_DIR ? in->include_dir
                                    : var->value == COMPONENT_VALUE_LIB_DIR     ? in->lib_dir
                                                                                : "1";

                /* A root (CUDNN_ROOT, NCCL_HOME, ...) is pushed: unload
                 * gives back the one the user had before. */
                if (var->value == COMPONENT_VALUE_PREFIX && (!var->build || cfg->pytorch_build_env))
                        opset_pushenv(s, var->name, value);
                else if (!var->build || cfg->pytorch_build_env)
                        opset_setenv(s, var->name, value);
        }
        if (cfg->ld_library_path[c->index] && !in->static_only) {
                opset_path_add(s, &v, in->lib_dir);
                opset_prepends(s, "LD_LIBRARY_PATH", &v);
        }
        opset_path_add(s, &v, in->lib_dir);
        opset_prepends(s, "LIBRARY_PATH", &v);
        opset_path_add(s, &v, in->include_dir);
        opset_prepends(s, "CPATH", &v);
        /* A system install's prefix is a …/usr, which CMake searches
         * anyway: its own directories above are what it adds. */
        if (in->layout != LAYOUT_SYSTEM)
                opset_path_add(s, &v, in->prefix);
        opset_prepends(s, "CMAKE_PREFIX_PATH", &v);
        if (c->pkgconfig) {
                opset_pkgconfig(s, &v, in->lib_dir);
                opset_prepends(s, "PKG_CONFIG_PATH", &v);
        }
}

/* naming: easybuild: the two variables EasyBuild's module generator
 * writes in every module it makes (easybuild/framework/easyblock.py
 * make_module_extra: setenv EBROOT<NAME> to the install prefix and
 * EBVERSION<NAME> to the version), which easyblocks read through
 * get_software_root/get_software_version (tools/modules.py). NAME is the
 * software name as tools/filetools.py convert_name(name, upper=True)
 * makes it: '+' -> "plus", '-' -> "min", '.' dropped, upper case. Plain
 * setenv, as EasyBuild writes them. A runtime install sets no root (see
 * ops_library): no EasyBuild build is to find it. */
static void ops_easybuild(struct opset *s, const struct install *in, const struct config *cfg,
                          const char *full)
{
        _cleanup_strbuf_ struct strbuf name = STRBUF_INIT;
        _cleanup_free_ char *root = NULL, *version = NULL;

        if (!cfg->naming_preset || !streq(cfg->naming_preset, "easybuild") || in->kind == INSTALL_RUNTIME)
                return;
        for (const char *p = component_easybuild_name(in->component); *p; p++)
                if (*p == '+')
                        strbuf_addstr(&name, "PLUS");
                else if (*p == '-')
                        strbuf_addstr(&name, "MIN");
                else if (*p != '.')
                        strbuf_addch(&name, (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p));
        root = xasprintf("EBROOT%s", name.buf);
        version = xasprintf("EBVERSION%s", name.buf);
        opset_setenv(s, root, in->prefix);
        opset_setenv(s, version, full);
}

static void ops_site(struct opset *s, const struct env_ops *extra)
{
        for (size_t i = 0; i < extra->len; i++)
                opset_push(s, extra->items[i].kind, extra->items[i].name, extra->items[i].value);
}

/* Why a path cannot go into a module, or NULL (allocated): ':' separates
 * entries of path variables; and what some reader of a modulefile would
 * take as code (written_value_problem: control characters, quotes,
 * backslashes, '$', '`', ']'), whatever the format: a Lua tree's values
 * reach Lmod's spider cache and the shells, a Tcl tree's also Lmod's
 * tcl2lua (doc/guide.md "Threat model", tests/modules/consumers.sh). */
static char *path_problem(const char *path, enum module_format format)
{
        const char *why;

        /* The scan reaches it relative to a directory it holds open; no
         * program can by its name (open, stat, the loader, a shell: each
         * fails with ENAMETOOLONG), and neither can the checks below, which
         * would leave out every directory and keep only the root variables. */
        if (strlen(path) >= PATH_MAX)
                return xstrdup("is longer than the 4095 bytes Linux accepts in a path name (PATH_MAX): no "
                               "program could open anything under it, nor can cudamod check what is there");
        if (strchr(path, ':'))
                return xstrdup("holds ':', which a path variable cannot carry");
        if ((why = written_value_problem(path, WRITTEN_WORD, NULL)))
                return xasprintf("holds %s", why);
        /* Lua strings are bytes, and the Lua literal escapes every byte. A
         * Tcl string holds characters: Lmod's tcl2lua (8.6 and 9.2, in any
         * locale) reads the modulefile as ISO 8859-1 and writes UTF-8, so
         * every byte >= 0x80 comes back as two; Environment Modules decodes
         * it in the locale's encoding, so in a UTF-8 locale a byte that is
         * not UTF-8 does (tests/modules/consumers.sh, fuzz-escape.c). */
        if (format == FORMAT_TCL && !ascii_only(path))
                return xstrdup("holds a byte that is not ASCII, which Lmod reading a Tcl modulefile turns "
                               "into other bytes (a Lua tree carries it)");
        return NULL;
}

/* "'PATH' holds …" for the first path of in that cannot go into a
 * module, or NULL. */
static char *unusable_path(const struct install *in, enum module_format format)
{
        const char *paths[] = { in->prefix, in->realpath, in->bin_dir, in->include_dir, in->lib_dir };
        const struct strv *lists[] = { &in->extra_lib_dirs, &in->extra_include_dirs };
        const char *bad = NULL;
        _cleanup_free_ char *why = NULL;

        for (size_t i = 0; !why && i < ELEMENTSOF(paths); i++)
                if (paths[i] && (why = path_problem(paths[i], format)))
                        bad = paths[i];
        for (size_t k = 0; k < ELEMENTSOF(lists); k++)
                for (size_t i = 0; !why && i < lists[k]->len; i++)
                        if ((why = path_problem(lists[k]->items[i], format)))
                                bad = lists[k]->items[i];
        return why ? xasprintf("'%s' %s", bad, why) : NULL;
}

/* The most precise version known: CUDA release, cuDNN with its build. */
static char *full_version(const struct install *in)
{
        if (in->release.count)
                return version_to_string(&in->release, 3);
        if (in->build) {
                _cleanup_free_ char *v = version_to_string(&in->version, 3);
                return xasprintf("%s.%s", v, in->build);
        }
        return version_to_string(&in->version, in->component->version_parts);
}

/* Whether in's module version template names its CUDA. */
static bool naming_needs_cuda(const struct install *in, const struct config *cfg)
{
        static const char *const cuda[] = { "{cuda}", "{cuda_version}", "{cuda_full}", "{cuda_major}" };
        const char *tmpl = cfg->naming[in->component->index];

        for (size_t i = 0; tmpl && i < ELEMENTSOF(cuda); i++)
                if (strstr(tmpl, cuda[i]))
                        return true;
        return false;
}

/* Why an install gets no module, or NULL. */
static char *skip_reason(const struct install *in, const struct config *cfg)
{
        char *bad;

        if (!in->version.count)
                return xstrdup("its version is unknown");
        if (!in->lib_dir)
                return xstrdup("its library directory was not found");
        if (install_has_problem(in, "missing-library"))
                return xstrdup("a library it needs is missing (see 'cudamod scan')");
        if ((bad = unusable_path(in, cfg->format)))
                return bad;
        if (!in->component->toolkit && install_cuda_major(in) < 0 &&
            cfg->layout == MODULE_LAYOUT_HIERARCHICAL)
                return xstrdup("the CUDA major it was built for is unknown");
        /* Flat, a name that says the CUDA (naming: easybuild's
         * -CUDA-{cuda_full}) cannot be given either: this one install is
         * left, not the whole tree. */
        if (!in->component->toolkit && install_cuda_major(in) < 0 && naming_needs_cuda(in, cfg))
                return xasprintf("its naming '%s' needs the CUDA it was built for, and that is unknown",
                                 cfg->naming[in->component->index]);
        return NULL;
}

/* Whether in is for the architecture the tree is for (config `arch`, else
 * this machine's); an install of unknown architecture is taken to be. */
static bool is_native(const struct install *in, const struct config *cfg)
{
        const char *arch = plan_arch(cfg);

        return !in->arch || !arch || streq(in->arch, arch);
}

struct candidate {
        const struct install *in;
        size_t order;     /* position in the install list */
        char *dir;        /* "Core/cuda" */
        char *version;    /* module version */
        char *base;       /* "Core/cuda/12.4": the name the naming gives it */
        char *identity;   /* install_identity */
        bool pinned;      /* the name an earlier run gave it */
        /* The toolkit the module is for, when its name holds that
         * toolkit's full version ({cuda_full}), or NULL; and that
         * toolkit's module version once every name is given. */
        const struct install *toolkit;
        char *toolkit_version;
        char *cuda_full;  /* {cuda_full}, or NULL */
};

/* What an install is, beyond where: a name given to it is not given to
 * what later stands at its place (an upgrade in place, another build). */
static char *install_identity(const struct install *in)
{
        _cleanup_free_ char *full = full_version(in);

        return xasprintf("%s %s cuda%ld %s", in->component->name, full, install_cuda_major(in),
                         in->arch ? in->arch : "-");
}

/* The names earlier runs gave ("dir/version"), taken by whoever holds them. */
struct taken {
        const struct plan_given *given;
        size_t n;
};

static bool name_taken(const struct taken *t, const char *dir, const char *version)
{
        for (size_t i = 0; i < t->n; i++)
                if (streq(t->given[i].dir, dir) && streq(t->given[i].version, version))
                        return true;
        return false;
}

/* Whether the name is one an earlier run gave someone else than c. */
static bool taken_from(const struct taken *t, const struct candidate *c)
{
        return !c->pinned && name_taken(t, c->dir, c->version);
}

/* Whether any install of c[0..n) or any earlier one has that name. */
static bool name_used(const struct candidate *c, size_t n, const struct taken *t, const char *dir,
                      const char *version)
{
        for (size_t i = 0; i < n; i++)
                if (streq(c[i].dir, dir) && streq(c[i].version, version))
                        return true;
        return name_taken(t, dir, version);
}

static int candidate_cmp(const void *a, const void *b)
{
        const struct candidate *x = a, *y = b;
        int r = strcmp(x->dir, y->dir);

        if (r == 0)
                r = strcmp(x->version, y->version);
        if (r == 0)
                r = x->order < y->order ? -1 : x->order > y->order;
        return r;
}

static bool same_name(const struct candidate *a, const struct candidate *b)
{
        return streq(a->dir, b->dir) && streq(a->version, b->version);
}

static void rename_to(struct candidate *c, char *version)
{
        free(c->version);
        c->version = version;
}

/* Apply the collision rules of the file comment to the group g[0..n),
 * in scan order, that shares one name; all holds every candidate. */
static void disambiguate(struct candidate *g, size_t n, struct candidate *all, size_t n_all,
                         const struct taken *t, const struct config *cfg, struct strv *warnings)
{
        struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *was = xasprintf("%s/%s", path_basename(g[0].dir), g[0].version);
        _cleanup_free_ char *name = xstrdup(g[0].version);
        bool majors_differ = false, fulls_differ = true, held = name_taken(t, g[0].dir, name);
        size_t next = 2;

        for (size_t i = 1; i < n; i++)
                if (install_cuda_major(g[i].in) != install_cuda_major(g[0].in))
                        majors_differ = true;
        if (!held && cfg->layout == MODULE_LAYOUT_FLAT && !g[0].in->component->toolkit && majors_differ) {
                for (size_t i = 0; i < n; i++)
                        rename_to(&g[i], xasprintf("%s-cuda%ld", g[i].version, install_cuda_major(g[i].in)));
                goto report;
        }
        for (size_t i = 0; i < n && fulls_differ; i++) {
                _cleanup_free_ char *a = full_version(g[i].in);

                if (held && !g[i].pinned && (streq(a, name) || name_taken(t, g[i].dir, a)))
                        fulls_differ = false;
                for (size_t k = i + 1; k < n && fulls_differ; k++) {
                        _cleanup_free_ char *b = full_version(g[k].in);
                        if (streq(a, b))
                                fulls_differ = false;
                }
        }
        for (size_t i = 0; i < n; i++) {
                char *v;

                /* Who holds the name keeps it; the first in scan order, when
                 * nobody does. */
                if (g[i].pinned || (!held && i == 0 && !fulls_differ))
                        continue;
                if (fulls_differ) {
                        rename_to(&g[i], full_version(g[i].in));
                        continue;
                }
                for (;; next++) {
                        v = xasprintf("%s-%zu", name, next);
                        if (!name_used(all, n_all, t, g[i].dir, v))
                                break;
                        free(v);
                }
                next++;
                rename_to(&g[i], v);
        }
report:
        if (held) {
                const char *holder = "another install";

                for (size_t i = 0; i < n; i++)
                        if (g[i].pinned)
                                holder = g[i].in->prefix;
                strbuf_addf(&sb, "module '%s' is the name an earlier run gave %s (the output "
                            "directory's index); named", was, holder);
        }
        else
                strbuf_addf(&sb, "%zu installs would share module '%s'; named", n, was);
        for (size_t i = 0; i < n; i++)
                strbuf_addf(&sb, "%s '%s/%s' (%s)", i ? "," : "", path_basename(g[i].dir), g[i].version,
                            g[i].in->prefix);
        strv_push(warnings, strbuf_detach(&sb));
}

static void resolve_collisions(struct candidate *c, size_t n, const struct taken *t,
                               const struct config *cfg, struct strv *warnings)
{
        /* Each pass renames at least one group; the numeric rule always
         * ends it, so a few passes suffice. */
        for (unsigned pass = 0; pass < 8; pass++) {
                bool changed = false;

                qsort(c, n, sizeof(*c), candidate_cmp);
                for (size_t i = 0; i < n;) {
                        size_t k = i + 1;
                        bool clash;

                        while (k < n && same_name(&c[i], &c[k]))
                                k++;
                        clash = k - i > 1;
                        for (size_t j = i; j < k && !clash; j++)
                                clash = taken_from(t, &c[j]);
                        if (clash) {
                                /* Sort the group back into scan order. */
                                struct candidate *g = c + i;
                                for (size_t a = 1; a < k - i; a++)
                                        for (size_t b = a; b > 0 && g[b].order < g[b - 1].order; b--) {
                                                struct candidate tmp = g[b];
                                                g[b] = g[b - 1];
                                                g[b - 1] = tmp;
                                        }
                                disambiguate(g, k - i, c, n, t, cfg, warnings);
                                changed = true;
                        }
                        i = k;
                }
                if (!changed)
                        return;
        }
}

/* Whether what an earlier run recorded for a name (g) is this install's
 * name under today's naming: the same install and the same name before
 * any renaming (otherwise the naming changed, and so do the names). An
 * entry of an older index, without identity, is taken for the install
 * at that real path whose name it extends. */
static bool given_matches(const struct plan_given *g, const struct candidate *c)
{
        _cleanup_free_ char *full = NULL;
        size_t n;

        if (!g->install || !streq(g->install, c->in->realpath) || !streq(g->dir, c->dir))
                return false;
        if (g->identity)
                return streq(g->identity, c->identity) && g->base && streq(g->base, c->base);
        n = strlen(c->version);
        full = full_version(c->in);
        return streq(g->version, c->version) || streq(g->version, full) ||
               (strncmp(g->version, c->version, n) == 0 && g->version[n] == '-');
}

static void pin_given(struct candidate *c, size_t n, const struct taken *t)
{
        bool *used = xcalloc(t->n + 1, sizeof(*used));

        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < t->n; k++) {
                        if (used[k] || !given_matches(&t->given[k], &c[i]))
                                continue;
                        used[k] = true;
                        rename_to(&c[i], xstrdup(t->given[k].version));
                        c[i].pinned = true;
                        break;
                }
        free(used);
}

static char *module_dir(const struct install *in, const struct config *cfg)
{
        _cleanup_free_ char *name = plan_module_name(cfg, in->component);
        _cleanup_free_ char *level = NULL;

        if (cfg->layout == MODULE_LAYOUT_FLAT)
                return TAKE_PTR(name);
        level = plan_level(cfg, in->component->toolkit ? -1 : install_cuda_major(in));
        return xasprintf("%s/%s", level, name);
}

static char *describe(const struct install *in, const struct install *toolkit)
{
        _cleanup_free_ char *v = full_version(in);
        struct strbuf sb = STRBUF_INIT;

        strbuf_addf(&sb, "%s %s", in->component->title, v);
        if (toolkit) {
                _cleanup_free_ char *tv = full_version(toolkit);
                strbuf_addf(&sb, " for CUDA %s", tv);
        } else if (in->component->cuda_parts >= 2 && in->cuda_version.count >= 2) {
                _cleanup_free_ char *cv = version_to_string(&in->cuda_version, in->component->cuda_parts);
                strbuf_addf(&sb, " for CUDA %s", cv);
        } else if (!in->component->toolkit && install_cuda_major(in) >= 0)
                strbuf_addf(&sb, " for CUDA %ld", install_cuda_major(in));
        if (in->arch)
                strbuf_addf(&sb, " (%s)", in->arch);
        return strbuf_detach(&sb);
}

/* "What it sets" of the help text: each variable once, path variables
 * with their directories in the order they end up in. */
static void help_settings(struct strbuf *sb, const struct module_plan *m)
{
        for (size_t i = 0; i < m->n_ops; i++) {
                const struct plan_op *op = &m->ops[i];
                struct strv dirs = { 0 };
                bool seen = false;

                for (size_t k = 0; k < i; k++)
                        if (m->ops[k].kind == op->kind && streq(m->ops[k].name, op->name))
                                seen = true;
                if (seen)
                        continue;
                if (env_op_is_scalar(op->kind)) {
                        strbuf_addf(sb, "  %-18s = %s\n", op->name, op->value);
                        continue;
                }
                for (size_t k = i; k < m->n_ops; k++)
                        if (m->ops[k].kind == op->kind && streq(m->ops[k].name, op->name))
                                strv_add(&dirs, m->ops[k].value);
                strbuf_addf(sb, "  %-18s %s ", op->name, op->kind == ENV_OP_PREPEND_PATH ? "<" : ">");
                for (size_t k = 0; k < dirs.len; k++) {
                        size_t at = op->kind == ENV_OP_PREPEND_PATH ? dirs.len - 1 - k : k;
                        strbuf_addf(sb, "%s%s", k ? ":" : "", dirs.items[at]);
                }
                strbuf_addch(sb, '\n');
                strv_release(&dirs);
        }
        if (m->modulepath)
                strbuf_addf(sb, "  %-18s < %s\n", "MODULEPATH", m->modulepath);
}

/* A space that add_wrapped never breaks a line at. */
#define NO_BREAK_SPACE '\x01'

/* Add the words of text to sb, a line broken where the next word would
 * pass column 72, and end it with a newline. */
static void add_wrapped(struct strbuf *sb, const char *text)
{
        size_t col = 0;

        for (const char *p = text; *p;) {
                size_t n = strcspn(p, " ");

                if (col && col + 1 + n > 72) {
                        strbuf_addch(sb, '\n');
                        col = 0;
                } else if (col) {
                        strbuf_addch(sb, ' ');
                        col++;
                }
                for (size_t i = 0; i < n; i++)
                        strbuf_addch(sb, p[i] == NO_BREAK_SPACE ? ' ' : p[i]);
                col += n;
                p += n;
                p += strspn(p, " ");
        }
        strbuf_addch(sb, '\n');
}

/* A toolkit module of the hierarchy: what loading it makes available. */
static void help_level(struct strbuf *sb, long major, const struct config *cfg)
{
        _cleanup_strbuf_ struct strbuf text = STRBUF_INIT, names = STRBUF_INIT;
        size_t n = 0, i = 0;

        FOREACH_COMPONENT(c)
                n += !c->toolkit;
        strbuf_addstr(&text, "Loading it makes the");
        FOREACH_COMPONENT(c) {
                if (c->toolkit)
                        continue;
                i++;
                strbuf_addf(&text, "%s %s", i == 1 ? "" : i == n ? " and" : ",", c->label);
                {
                        _cleanup_free_ char *mn = plan_module_name(cfg, c);
                        strbuf_addf(&names, "%c%s", NO_BREAK_SPACE, mn);
                }
        }
        /* The command a user copies stays on one line. */
        strbuf_addf(&text, " builds for CUDA %ld available ('module%cavail%s').", major, NO_BREAK_SPACE,
                    names.buf);
        add_wrapped(sb, text.buf);
}

static char *help_text(const struct module_plan *m, const struct config *cfg)
{
        const struct install *in = m->install;
        struct strbuf sb = STRBUF_INIT;

        strbuf_addf(&sb, "%s in %s.\n\n", m->description, in->prefix);
        strbuf_addstr(&sb, in->component->help);
        if (m->modulepath)
                help_level(&sb, install_cuda_major(in), cfg);
        if (m->n_deps && streq(m->deps[0].min, m->deps[0].max))
                strbuf_addf(&sb, "It needs %s/%s, the toolkit it is for.\n", m->deps[0].name, m->deps[0].min);
        else if (m->n_deps)
                strbuf_addf(&sb, "It needs a cuda module of CUDA %s.\n", m->deps[0].min);
        if (m->requires)
                strbuf_addf(&sb, "It loads %s, the host compiler nvcc and CMake use with it.\n", m->requires);
        if (in->kind == INSTALL_RUNTIME)
                add_wrapped(&sb, "It has no headers: it is for running programs that load it, not for "
                                 "building (a build finds nothing of it).");
        strbuf_addstr(&sb, "\nWhat it sets ('<' puts directories in front, '>' at the end):\n");
        help_settings(&sb, m);
        if (m->compat_dir) {
                /* What the compat block does, as the module decides it. */
                _cleanup_free_ char *compat = xasprintf(
                        "Forward compatibility: on a node whose NVIDIA driver "
                        "(/proc/driver/nvidia/version) is of an older branch than %s, it also puts "
                        "%s in front of LD_LIBRARY_PATH: the libcuda of driver %s, from NVIDIA's "
                        "cuda-compat package, for data-center GPUs; never on LIBRARY_PATH or CPATH, "
                        "and nothing where the driver is of that branch or newer, or there is none.",
                        m->compat_driver, m->compat_dir, m->compat_driver);

                strbuf_addch(&sb, '\n');
                add_wrapped(&sb, compat);
        }
        return strbuf_detach(&sb);
}

/* A distribution's libraries and headers are where the loader and the
 * compiler look already, except those a package puts in a directory of
 * their own per CUDA major (…/lib/<triple>/libcusparseLt/12,
 * library_find), which nothing searches. */
static bool system_paths_searched(const struct install *in)
{
        _cleanup_free_ char *named = in->lib_dir ? path_dirname(in->lib_dir) : NULL;
        _cleanup_free_ char *multiarch = named ? path_dirname(named) : NULL;
        _cleanup_free_ char *usr = multiarch ? system_prefix_of(multiarch, NULL) : NULL;

        return in->layout == LAYOUT_SYSTEM && !usr;
}

/* The toolkit's driver check (config driver_check): the minimum drivers
 * its module compares the node's with, as literals. */
static void plan_driver_check(struct module_plan *m, const struct config *cfg)
{
        struct cuda_driver_minimum min;

        if (!m->install->component->toolkit || cfg->driver_check == DRIVER_CHECK_OFF ||
            !cuda_driver_minimum(&m->install->version, m->install->nvidia_driver, &min))
                return;
        m->driver_cuda = version_to_string(&m->install->version, 2);
        m->driver_major_min = xstrdup(min.major_min);
        m->driver_release_min = xstrdup(min.release_min);
        m->driver_refuse = cfg->driver_check == DRIVER_CHECK_ERROR;
}

static void fill_module(struct module_plan *m, const struct candidate *c, const struct config *cfg,
                        const char *outdir)
{
        const struct install *in = c->in;
        const char *name = in->component->name;
        long major = install_cuda_major(in);
        struct opset s = { .in = in, .no_paths = system_paths_searched(in) };
        _cleanup_free_ char *full = full_version(in);

        m->install = in;
        m->order = c->order;
        m->name = plan_module_name(cfg, in->component);
        m->version = xstrdup(c->version);
        m->full_name = xasprintf("%s/%s", m->name, c->version);
        m->dir = xstrdup(c->dir);
        m->path = xasprintf("%s/%s%s", c->dir, c->version, cfg->format == FORMAT_LUA ? ".lua" : "");
        /* The component's own name, whatever the module's: Lmod makes a
         * variable of it (LMOD_FAMILY_CUDNN), which a '-' or '.' in a
         * site's name would break. */
        m->family = xstrdup(name);
        m->foreign = !is_native(in, cfg);
        m->identity = xstrdup(c->identity);
        m->base = xstrdup(c->base);
        m->toolkit = c->toolkit;
        if (in->component->toolkit && cfg->layout == MODULE_LAYOUT_HIERARCHICAL) {
                _cleanup_free_ char *level = plan_level(cfg, major);
                m->modulepath = xasprintf("%s/%s", outdir, level);
        }
        /* Flat: the module needs a cuda of its major. Hierarchical Tcl too:
         * Environment Modules does not unload what a level made reachable
         * when that level goes, and the prereq makes it (no cuDNN for CUDA
         * 12 is left loaded beside a CUDA 11). Lmod does this itself. */
        /* A module named for one toolkit of several ({cuda_full}) needs
         * exactly that toolkit, in every layout: a CUDA level holds the
         * modules for every toolkit of its major. */
        if (c->toolkit_version) {
                m->deps = xcalloc(1, sizeof(*m->deps));
                m->n_deps = 1;
                m->deps[0].name = plan_module_name(cfg, component_toolkit());
                m->deps[0].min = xstrdup(c->toolkit_version);
                m->deps[0].max = xstrdup(c->toolkit_version);
                m->deps[0].em_spec = xasprintf("%s/%s", m->deps[0].name, c->toolkit_version);
        } else if (!in->component->toolkit && major >= 0 &&
                   (cfg->layout == MODULE_LAYOUT_FLAT || cfg->format == FORMAT_TCL)) {
                m->deps = xcalloc(1, sizeof(*m->deps));
                m->n_deps = 1;
                m->deps[0].name = plan_module_name(cfg, component_toolkit());
                m->deps[0].min = xasprintf("%ld", major);
                m->deps[0].max = xasprintf("%ld.999999", major);
                m->deps[0].em_spec = xasprintf("%s@%ld:%ld.999999", m->deps[0].name, major, major);
        }
        if (in->component->toolkit) {
                const struct config_host_compiler *h = config_host_compiler(cfg, major);

                if (h && h->module)
                        m->requires = xstrdup(h->module);
        }
        /* Forward compatibility: only where the config asks for it. */
        if (cfg->cuda_compat && in->component->toolkit && in->compat_dir && in->compat_driver) {
                m->compat_dir = xstrdup(in->compat_dir);
                m->compat_driver = xstrdup(in->compat_driver);
        }
        if (in->component->ops)
                in->component->ops(&s, in, cfg);
        else
                ops_library(&s, in, cfg);
        ops_easybuild(&s, in, cfg, full);
        ops_site(&s, &cfg->env[in->component->index]);
        m->ops = s.ops;
        m->n_ops = s.n;
        m->description = describe(in, c->toolkit);
        strv_push(&m->whatis, xasprintf("Name: %s", name));
        strv_push(&m->whatis, xasprintf("Version: %s", full));
        strv_push(&m->whatis, xasprintf("Description: %s", m->description));
        strv_push(&m->whatis, xstrdup("Category: library, GPU"));
        strv_push(&m->whatis, xasprintf("Keywords: %s, CUDA, GPU, PyTorch", name));
        m->help = help_text(m, cfg);
        plan_driver_check(m, cfg);
}

static int module_cmp(const void *a, const void *b)
{
        return strcmp(((const struct module_plan *)a)->path, ((const struct module_plan *)b)->path);
}

/* Whether module m is what spec ("12.9", "9.7.1") names: its module
 * version, or an install version that starts with the spec's parts. */
static bool default_matches(const struct module_plan *m, const char *spec)
{
        struct version want, have;
        _cleanup_free_ char *full = NULL;

        if (streq(m->version, spec))
                return true;
        if (version_parse(spec, &want) < 0)
                return false;
        full = full_version(m->install);
        if (version_parse(full, &have) < 0)
                return false;
        if (have.count < want.count)
                return false;
        have = version_truncate(&have, want.count);
        return version_compare(&have, &want) == 0;
}

/* Whether a comes before b as a default: a build for this machine before
 * one for another architecture, then the newer version, then (one version
 * built for several CUDA majors, the flat layout's -cudaN) the build for
 * cuda_major, the default toolkit's, so that `module load cuda magma`
 * loads two modules that go together; and on a tie the one first in scan
 * order (which kept the plain name). */
static bool module_newer(const struct module_plan *a, const struct module_plan *b, long cuda_major)
{
        int r = version_compare(&a->install->version, &b->install->version);

        if (r == 0)
                r = version_compare(&a->install->release, &b->install->release);
        /* One install named for each toolkit of its major: the one for
         * the newest toolkit. */
        if (r == 0 && a->toolkit && b->toolkit) {
                r = version_compare(&a->toolkit->release, &b->toolkit->release);
                if (r == 0)
                        r = version_compare(&a->toolkit->version, &b->toolkit->version);
        }
        if (r == 0 && cuda_major >= 0 && (install_cuda_major(a->install) == cuda_major) !=
                                                 (install_cuda_major(b->install) == cuda_major))
                return install_cuda_major(a->install) == cuda_major;
        return r > 0 || (r == 0 && a->order < b->order);
}

/* The best of the modules in m's directory under spec, or NULL. */
static struct module_plan *default_of(struct plan *p, size_t i, const struct default_spec *spec, long cuda_major)
{
        struct module_plan *best = NULL;

        for (size_t k = i; k < p->n_modules; k++) {
                struct module_plan *o = &p->modules[k];

                /* A build for another architecture is never a default. */
                if (!streq(o->dir, p->modules[i].dir) || o->foreign)
                        continue;
                if (spec->kind == DEFAULT_VERSION && !default_matches(o, spec->version))
                        continue;
                /* A hidden version is the default only when named. */
                if (spec->kind != DEFAULT_VERSION && o->hidden)
                        continue;
                if (!best || module_newer(o, best, cuda_major))
                        best = o;
        }
        return best;
}

/* The CUDA major of the toolkit's default in the flat layout (one
 * directory of cuda modules), or -1. */
static long flat_default_cuda_major(struct plan *p, const struct config *cfg)
{
        if (cfg->layout != MODULE_LAYOUT_FLAT)
                return -1;
        for (size_t i = 0; i < p->n_modules; i++) {
                const struct install *in = p->modules[i].install;
                const struct default_spec *spec = &cfg->defaults[in->component->index];
                const struct module_plan *best;

                if (!in->component->toolkit || spec->kind == DEFAULT_NONE)
                        continue;
                best = default_of(p, i, spec, -1);
                return best ? install_cuda_major(best->install) : -1;
        }
        return -1;
}

/* The config's modulerc directives of the modules in m's directory, into
 * rc, and tags and deprecated onto each module (lmod-api). */
static bool plan_directives(struct plan *p, size_t i, const struct config *cfg, struct modulerc_plan *rc,
                            bool *used)
{
        bool any = false;

        for (size_t k = i; k < p->n_modules; k++) {
                struct module_plan *o = &p->modules[k];
                const struct config_version_rc *v;

                if (!streq(o->dir, p->modules[i].dir))
                        continue;
                v = config_version_rc(cfg, (unsigned)o->install->component->index, o->version);
                if (!v)
                        continue;
                used[v - cfg->version_rcs] = true;
                if (v->hide) {
                        strv_add(&rc->hidden, o->full_name);
                        any = true;
                }
                for (size_t a = 0; a < v->aliases.len; a++) {
                        strv_push(&rc->aliases, xasprintf("%s/%s\t%s", o->name, v->aliases.items[a], o->full_name));
                        any = true;
                }
                for (size_t t = 0; t < v->tags.len; t++) {
                        strv_push(&rc->tags, xasprintf("%s\t%s", v->tags.items[t], o->full_name));
                        strv_add(&o->tags, v->tags.items[t]);
                        any = true;
                }
                /* Lmod 8.6 has no tags: a whatis line (module whatis,
                 * spider and keyword show it; add_property needs the
                 * site's lmodrc to know the property, else the load
                 * fails). */
                if (v->tags.len) {
                        _cleanup_free_ char *joined = strv_join(&v->tags, " ");

                        strv_push(&o->whatis, xasprintf("Tags: %s", joined));
                }
                if (v->deprecated && !o->deprecated)
                        o->deprecated = xstrdup(v->deprecated);
        }
        return any;
}

static void plan_defaults(struct plan *p, const struct config *cfg)
{
        bool matched[N_COMPONENTS] = { false };
        long cuda_major = flat_default_cuda_major(p, cfg);
        bool *used = xcalloc(cfg->n_version_rcs + 1, sizeof(bool));

        for (size_t i = 0; i < p->n_modules; i++) {
                struct module_plan *m = &p->modules[i], *best = NULL;
                size_t c = m->install->component->index;
                const struct default_spec *spec = &cfg->defaults[c];
                bool first_in_dir = true;
                struct modulerc_plan rc = { 0 };
                bool directives;

                for (size_t k = 0; k < i; k++)
                        if (streq(p->modules[k].dir, m->dir))
                                first_in_dir = false;
                if (!first_in_dir)
                        continue;
                /* Builds for another architecture are hidden: no `module
                 * load nccl` picks one, even when it is the only one (Lmod
                 * and Environment Modules take the highest version when no
                 * default is marked); its full name loads it. */
                for (size_t k = i; k < p->n_modules; k++)
                        if (streq(p->modules[k].dir, m->dir) && p->modules[k].foreign)
                                strv_add(&rc.hidden, p->modules[k].full_name);
                directives = plan_directives(p, i, cfg, &rc, used) || rc.hidden.len;
                if (spec->kind != DEFAULT_NONE)
                        best = default_of(p, i, spec, m->install->component->toolkit ? -1 : cuda_major);
                if (!best && !directives) {
                        strv_release(&rc.hidden);
                        strv_release(&rc.aliases);
                        strv_release(&rc.tags);
                        continue;
                }
                if (best) {
                        matched[c] = true;
                        best->is_default = true;
                        rc.module = xstrdup(best->full_name);
                        rc.version = xstrdup(best->version);
                }
                rc.path = xasprintf("%s/%s", m->dir, cfg->format == FORMAT_LUA ? ".modulerc.lua" : ".modulerc");
                p->rcs = xreallocarray(p->rcs, p->n_rcs + 1, sizeof(*p->rcs));
                p->rcs[p->n_rcs++] = rc;
        }
        FOREACH_COMPONENT(c)
                if (cfg->defaults[c->index].kind == DEFAULT_VERSION && !matched[c->index])
                        strv_push(&p->warnings,
                                  xasprintf("defaults.%s: no %s module has version '%s'; no default marked",
                                            c->name, c->name, cfg->defaults[c->index].version));
        for (size_t i = 0; i < cfg->n_version_rcs; i++)
                if (!used[i])
                        strv_push(&p->warnings,
                                  xasprintf("modulerc.%s.%s: no %s module has that version; nothing written for it",
                                            component_table[cfg->version_rcs[i].component]->name,
                                            cfg->version_rcs[i].version,
                                            component_table[cfg->version_rcs[i].component]->name));
        free(used);
}

/* A module of a CUDA major that no cuda module of this run has: in the
 * hierarchy nothing puts its level (OUT/CUDA/N) on MODULEPATH, so nothing
 * can load it and a validate of OUT/Core never sees it; flat, its
 * depends_on/prereq cannot be met. Written all the same (a CUDA N module
 * may come later), with a warning saying how to make it reachable. */
static void plan_orphans(struct plan *p)
{
        for (size_t i = 0; i < p->n_modules; i++) {
                const struct module_plan *m = &p->modules[i];
                long major = install_cuda_major(m->install);
                bool reached = false;

                if (m->install->component->toolkit || major < 0)
                        continue;
                for (size_t k = 0; k < p->n_modules && !reached; k++)
                        reached = p->modules[k].install->component->toolkit &&
                                  install_cuda_major(p->modules[k].install) == major;
                if (reached)
                        continue;
                if (p->layout == MODULE_LAYOUT_HIERARCHICAL)
                        strv_push(&p->warnings,
                                  xasprintf("'%s/%s': no cuda %ld module is generated, so nothing puts "
                                            "'%s/CUDA/%ld' on MODULEPATH and %s cannot be loaded; "
                                            "install or generate a CUDA %ld module, or exclude '%s'",
                                            p->outdir, m->path, major, p->outdir, major, m->full_name,
                                            major, m->install->prefix));
                else
                        strv_push(&p->warnings,
                                  xasprintf("'%s/%s': no cuda %ld module is generated, so %s, which "
                                            "needs one, cannot be loaded; install or generate a CUDA "
                                            "%ld module, or exclude '%s'",
                                            p->outdir, m->path, major, m->full_name, major,
                                            m->install->prefix));
        }
}

static void candidates_release(struct candidate *c, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(c[i].dir);
                free(c[i].version);
                free(c[i].base);
                free(c[i].identity);
                free(c[i].toolkit_version);
                free(c[i].cuda_full);
        }
        free(c);
}

/* Whether toolkit tk gets a module and is one an install of CUDA major
 * major for arch may be named for ({cuda_full}). */
static bool toolkit_for(const struct install *tk, long major, const char *arch, const struct config *cfg)
{
        _cleanup_free_ char *why = NULL;

        if (!tk->component->toolkit || install_cuda_major(tk) != major)
                return false;
        if (arch && tk->arch && !streq(arch, tk->arch))
                return false;
        why = skip_reason(tk, cfg);
        return !why;
}

/* Name install in (the i-th of the scan) for one CUDA: cuda_full, and
 * the toolkit tk when the name is one of several for one install (tk
 * then joins its identity) or names tk's version exactly. */
static int add_candidate(struct candidate *c, size_t *n, const struct install *in, size_t i,
                         const struct install *tk, bool several, const char *cuda_full,
                         const struct config *cfg, struct diag *d)
{
        const char *name = in->component->name;
        _cleanup_free_ char *version_str = NULL, *full = NULL;
        const struct version *v = &in->version;
        struct naming_facts f;
        char *version = NULL;
        int r;

        if (in->release.count >= 3)
                v = &in->release;
        version_str = version_to_string(&in->version, in->component->version_parts);
        full = full_version(in);
        f = (struct naming_facts){
                .name = name, .version = v, .version_str = version_str, .version_full = full,
                .build = in->build, .cuda_major = install_cuda_major(in),
                .cuda = in->component->toolkit ? &in->version : &in->cuda_version,
                .cuda_full = cuda_full, .arch = in->arch ? in->arch : plan_arch(cfg),
        };
        r = plan_naming_expand(cfg->naming[in->component->index], NAMING_VERSION, &f, &version, NULL, d);
        if (r < 0) {
                if (d && d->message) {
                        char *m = xasprintf("naming.%s: %s", name, d->message);
                        free(d->message);
                        d->message = m;
                }
                return r;
        }
        /* A build for another architecture always says so. */
        if (!is_native(in, cfg)) {
                char *a = xasprintf("%s-%s", version, in->arch);
                free(version);
                version = a;
        }
        c[*n] = (struct candidate){ .in = in, .order = i, .dir = module_dir(in, cfg), .version = version,
                                    .identity = install_identity(in), .toolkit = tk,
                                    .cuda_full = cuda_full ? xstrdup(cuda_full) : NULL };
        if (several) {
                char *id = xasprintf("%s for CUDA %s", c[*n].identity, cuda_full);
                free(c[*n].identity);
                c[*n].identity = id;
        }
        c[*n].base = xasprintf("%s/%s", c[*n].dir, version);
        (*n)++;
        return 0;
}

/* The candidates of one install: one, or, where its naming holds
 * {cuda_full} and nothing it carries names the exact CUDA it was built
 * with, one for each toolkit of its major that gets a module (EasyBuild
 * installs it once per CUDA: cuDNN/9.7.1.26-CUDA-12.4.1 and
 * cuDNN/9.7.1.26-CUDA-12.9.1, here two modules of one prefix). */
static int add_candidates(struct candidate *c, size_t *n, const struct install_list *installs, size_t i,
                          const struct config *cfg, struct diag *d)
{
        const struct install *in = installs->items[i];
        long major = install_cuda_major(in);
        _cleanup_free_ char *exact = NULL, *known = NULL;
        const char *tmpl = cfg->naming[in->component->index];
        bool uses_full = tmpl && strstr(tmpl, "{cuda_full}");
        size_t before = *n;

        if (in->component->toolkit) {
                _cleanup_free_ char *full = full_version(in);
                return add_candidate(c, n, in, i, NULL, false, full, cfg, d);
        }
        /* Metadata that names the CUDA dependency (a Spack spec, an
         * easyconfig) gives X.Y.Z; a library's own CUDA, never more than
         * X.Y. */
        if (in->cuda_version.count >= 3)
                exact = version_to_string(&in->cuda_version, 3);
        if (exact || !uses_full) {
                const struct install *tk = NULL;

                /* Named for a toolkit the site has: it needs that one. */
                for (size_t k = 0; exact && uses_full && !tk && k < installs->len; k++) {
                        _cleanup_free_ char *tv = NULL;

                        if (!toolkit_for(installs->items[k], major, in->arch, cfg))
                                continue;
                        tv = full_version(installs->items[k]);
                        if (streq(tv, exact))
                                tk = installs->items[k];
                }
                return add_candidate(c, n, in, i, tk, false, exact, cfg, d);
        }
        for (size_t k = 0; k < installs->len; k++) {
                _cleanup_free_ char *tv = NULL;
                bool dup = false;
                int r;

                if (!toolkit_for(installs->items[k], major, in->arch, cfg))
                        continue;
                tv = full_version(installs->items[k]);
                /* Two toolkits of one release: one module, for the first. */
                for (size_t j = before; j < *n && !dup; j++)
                        dup = streq(c[j].cuda_full, tv);
                if (dup)
                        continue;
                r = add_candidate(c, n, in, i, installs->items[k], true, tv, cfg, d);
                if (r < 0)
                        return r;
        }
        if (*n > before)
                return 0;
        /* No toolkit of its major: named with what is known (a
         * warning says nothing can load it, plan_orphans). */
        if (in->cuda_version.count)
                known = version_to_string(&in->cuda_version, 0);
        else if (major >= 0)
                known = xasprintf("%ld", major);
        return add_candidate(c, n, in, i, NULL, false, known, cfg, d);
}

int plan_build_given(const struct install_list *installs, const struct config *cfg,
                     const char *outdir, const struct plan_given *given, size_t n_given,
                     struct plan *ret, struct diag *d)
{
        struct plan p = { .format = cfg->format, .layout = cfg->layout };
        const struct taken taken = { .given = given, .n = n_given };
        struct candidate *c;
        size_t n = 0, n_toolkits = 0;
        int r = 0;

        for (size_t i = 0; i < installs->len; i++)
                n_toolkits += installs->items[i]->component->toolkit;
        /* At most one candidate per install and toolkit. */
        c = xcalloc(installs->len * (n_toolkits + 1) + 1, sizeof(*c));
        p.outdir = xstrdup(outdir);
        for (size_t i = 0; i < installs->len; i++) {
                const struct install *in = installs->items[i];
                const char *name = in->component->name;
                _cleanup_free_ char *why = skip_reason(in, cfg);

                if (why) {
                        strv_push(&p.warnings, xasprintf("%s at '%s' gets no module: %s", name,
                                                         in->prefix, why));
                        continue;
                }
                for (size_t k = 0; k < in->n_problems; k++)
                        strv_push(&p.warnings, xasprintf("%s at '%s': %s", name, in->prefix,
                                                         in->problems[k].message));
                r = add_candidates(c, &n, installs, i, cfg, d);
                if (r < 0)
                        goto fail;
        }
        pin_given(c, n, &taken);
        resolve_collisions(c, n, &taken, cfg, &p.warnings);
        /* The module version each toolkit ended with, renamed or not. */
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; c[i].toolkit && !c[i].toolkit_version && k < n; k++)
                        if (c[k].in == c[i].toolkit)
                                c[i].toolkit_version = xstrdup(c[k].version);

        p.modules = xcalloc(n + 1, sizeof(*p.modules));
        for (size_t i = 0; i < n; i++)
                fill_module(&p.modules[p.n_modules++], &c[i], cfg, outdir);
        qsort(p.modules, p.n_modules, sizeof(*p.modules), module_cmp);
        for (size_t i = 0; i < p.n_modules; i++) {
                const struct config_version_rc *v = config_version_rc(
                        cfg, (unsigned)p.modules[i].install->component->index, p.modules[i].version);

                p.modules[i].hidden = v && v->hide;
        }
        plan_defaults(&p, cfg);
        plan_orphans(&p);
        candidates_release(c, n);
        *ret = p;
        return 0;
fail:
        candidates_release(c, n);
        plan_release(&p);
        return r;
}

int plan_build(const struct install_list *installs, const struct config *cfg,
               const char *outdir, struct plan *ret, struct diag *d)
{
        return plan_build_given(installs, cfg, outdir, NULL, 0, ret, d);
}

static void module_plan_release(struct module_plan *m)
{
        free(m->name);
        free(m->version);
        free(m->full_name);
        free(m->identity);
        free(m->base);
        free(m->path);
        free(m->dir);
        free(m->family);
        free(m->modulepath);
        free(m->description);
        free(m->help);
        strv_release(&m->whatis);
        for (size_t i = 0; i < m->n_deps; i++) {
                free(m->deps[i].name);
                free(m->deps[i].min);
                free(m->deps[i].max);
                free(m->deps[i].em_spec);
        }
        free(m->deps);
        free(m->requires);
        for (size_t i = 0; i < m->n_ops; i++)
                plan_op_release(&m->ops[i]);
        free(m->ops);
        strv_release(&m->tags);
        free(m->deprecated);
        free(m->driver_cuda);
        free(m->driver_major_min);
        free(m->driver_release_min);
        free(m->compat_dir);
        free(m->compat_driver);
}

void plan_release(struct plan *p)
{
        for (size_t i = 0; i < p->n_modules; i++)
                module_plan_release(&p->modules[i]);
        free(p->modules);
        for (size_t i = 0; i < p->n_rcs; i++) {
                free(p->rcs[i].path);
                free(p->rcs[i].module);
                free(p->rcs[i].version);
                strv_release(&p->rcs[i].hidden);
                strv_release(&p->rcs[i].aliases);
                strv_release(&p->rcs[i].tags);
        }
        free(p->rcs);
        strv_release(&p->warnings);
        free(p->outdir);
        *p = (struct plan){ 0 };
}
