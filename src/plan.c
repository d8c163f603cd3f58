/* plan.c: module names, placement, defaults and environment operations.
 *
 * The naming rule for collisions (README "Module names"): when installs
 * would share one module file,
 *   1. builds for another architecture than this machine's get "-ARCH";
 *   2. in the flat layout, cuDNN and NCCL builds of one version for
 *      different CUDA majors all get a "-cudaN" suffix;
 *   3. installs that still collide are named by their full version
 *      (CUDA release X.Y.Z, cuDNN X.Y.Z.B) when those differ;
 *   4. installs that still collide keep the name in scan order (newest
 *      version, then prefix) for the first and get "-2", "-3", … after it.
 * Each renaming is reported, so nothing is ever silently overwritten. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/utsname.h>

#include "detect.h"
#include "plan.h"
#include "strbuf.h"
#include "util-path.h"
#include "banned.h"

/* The operations of one module, gathered by variable so that several
 * directories prepended to one variable keep the order they are listed in:
 * the first listed ends up first (so it is prepended last). */
struct opset {
        struct plan_op *ops;
        size_t n, alloc;
        bool no_paths; /* a system install: root variables only */
};

static void opset_push(struct opset *s, enum env_op_kind kind, const char *name, const char *value)
{
        if (s->n == s->alloc) {
                s->alloc = s->alloc ? 2 * s->alloc : 16;
                s->ops = xreallocarray(s->ops, s->alloc, sizeof(*s->ops));
        }
        s->ops[s->n++] = (struct plan_op){ kind, xstrdup(name), xstrdup(value), NULL };
}

static bool opset_has(const struct opset *s, enum env_op_kind kind, const char *name,
                      const char *value)
{
        for (size_t i = 0; i < s->n; i++)
                if (s->ops[i].kind == kind && streq(s->ops[i].name, name) &&
                    streq(s->ops[i].value, value))
                        return true;
        return false;
}

static void plan_op_release(struct plan_op *op)
{
        free(op->name);
        free(op->value);
        free(op->origin);
}

/* A list of directories for one path variable, in the order wanted. */
static void path_add(struct strv *v, const char *dir)
{
        if (!dir || !is_dir_at(AT_FDCWD, dir) || path_is_system_dir(dir) || path_has_component(dir, "stubs") ||
            strv_contains(v, dir))
                return;
        strv_add(v, dir);
}

static void emit_prepends(struct opset *s, const char *var, struct strv *dirs)
{
        for (size_t i = s->no_paths ? 0 : dirs->len; i > 0; i--)
                if (!opset_has(s, ENV_OP_PREPEND_PATH, var, dirs->items[i - 1]))
                        opset_push(s, ENV_OP_PREPEND_PATH, var, dirs->items[i - 1]);
        strv_release(dirs);
}

static void emit_setenv(struct opset *s, const char *var, const char *value)
{
        if (value && *value)
                opset_push(s, ENV_OP_SETENV, var, value);
}

static void add_pkgconfig(struct strv *v, const char *lib_dir)
{
        _cleanup_free_ char *pc = lib_dir ? path_join(lib_dir, "pkgconfig") : NULL;

        path_add(v, pc);
}

static void ops_cuda(struct opset *s, const struct install *in, const struct config *cfg)
{
        struct strv libs = { 0 }, incs = { 0 }, v = { 0 };
        _cleanup_free_ char *nvcc = in->bin_dir ? path_join(in->bin_dir, "nvcc") : NULL;
        _cleanup_free_ char *stubs = in->lib_dir ? path_join(in->lib_dir, "stubs") : NULL;

        emit_setenv(s, "CUDA_HOME", in->prefix);
        emit_setenv(s, "CUDA_PATH", in->prefix);
        emit_setenv(s, "CUDA_ROOT", in->prefix);
        emit_setenv(s, "CUDAToolkit_ROOT", in->prefix);
        if (cfg->pytorch_build_env && nvcc && is_file_at(AT_FDCWD, nvcc))
                emit_setenv(s, "CUDACXX", nvcc);
        if (*cfg->cuda_arch_list && !streq(cfg->cuda_arch_list, "detect")) {
                emit_setenv(s, "TORCH_CUDA_ARCH_LIST", cfg->cuda_arch_list);
                if (cfg->cuda_arch_list_origin)
                        s->ops[s->n - 1].origin = xstrdup(cfg->cuda_arch_list_origin);
        }

        path_add(&v, in->bin_dir);
        emit_prepends(s, "PATH", &v);

        path_add(&libs, in->lib_dir);
        for (size_t i = 0; i < in->extra_lib_dirs.len; i++)
                path_add(&libs, in->extra_lib_dirs.items[i]);
        if (cfg->ld_library_path[COMPONENT_CUDA]) {
                for (size_t i = 0; i < libs.len; i++)
                        strv_add(&v, libs.items[i]);
                emit_prepends(s, "LD_LIBRARY_PATH", &v);
        }
        emit_prepends(s, "LIBRARY_PATH", &libs);

        path_add(&incs, in->include_dir);
        for (size_t i = 0; i < in->extra_include_dirs.len; i++)
                path_add(&incs, in->extra_include_dirs.items[i]);
        emit_prepends(s, "CPATH", &incs);

        path_add(&v, in->prefix);
        emit_prepends(s, "CMAKE_PREFIX_PATH", &v);
        add_pkgconfig(&v, in->lib_dir);
        emit_prepends(s, "PKG_CONFIG_PATH", &v);
        {
                _cleanup_free_ char *m1 = path_join(in->prefix, "share/man");
                _cleanup_free_ char *m2 = path_join(in->prefix, "doc/man");
                path_add(&v, m1);
                path_add(&v, m2);
                emit_prepends(s, "MANPATH", &v);
        }
        /* The stub libcuda.so lets -lcuda link on a node without a driver;
         * it goes last on LIBRARY_PATH and never on LD_LIBRARY_PATH. */
        if (cfg->stubs_on_library_path && !s->no_paths && is_dir_at(AT_FDCWD, stubs) && !path_is_system_dir(stubs))
                opset_push(s, ENV_OP_APPEND_PATH, "LIBRARY_PATH", stubs);
}

/* cuDNN and NCCL: root variables, then the library and header paths. */
static void ops_library(struct opset *s, const struct install *in, const struct config *cfg)
{
        bool cudnn = in->component == COMPONENT_CUDNN;
        bool build = cfg->pytorch_build_env;
        struct strv v = { 0 };

        if (cudnn) {
                if (build)
                        emit_setenv(s, "CUDNN_ROOT", in->prefix);
                emit_setenv(s, "CUDNN_HOME", in->prefix);
                emit_setenv(s, "CUDNN_PATH", in->prefix);
                if (build) {
                        emit_setenv(s, "CUDNN_INCLUDE_DIR", in->include_dir);
                        emit_setenv(s, "CUDNN_LIB_DIR", in->lib_dir);
                }
        } else {
                if (build)
                        emit_setenv(s, "NCCL_ROOT", in->prefix);
                emit_setenv(s, "NCCL_HOME", in->prefix);
                if (build) {
                        emit_setenv(s, "NCCL_INCLUDE_DIR", in->include_dir);
                        emit_setenv(s, "NCCL_LIB_DIR", in->lib_dir);
                        /* Without it PyTorch builds its bundled NCCL and
                         * ignores this one (PYTORCH.md §5.3). */
                        emit_setenv(s, "USE_SYSTEM_NCCL", "1");
                }
        }
        if (cfg->ld_library_path[in->component]) {
                path_add(&v, in->lib_dir);
                emit_prepends(s, "LD_LIBRARY_PATH", &v);
        }
        path_add(&v, in->lib_dir);
        emit_prepends(s, "LIBRARY_PATH", &v);
        path_add(&v, in->include_dir);
        emit_prepends(s, "CPATH", &v);
        path_add(&v, in->prefix);
        emit_prepends(s, "CMAKE_PREFIX_PATH", &v);
        if (!cudnn) {
                add_pkgconfig(&v, in->lib_dir);
                emit_prepends(s, "PKG_CONFIG_PATH", &v);
        }
}

static void ops_site(struct opset *s, const struct env_ops *extra)
{
        for (size_t i = 0; i < extra->len; i++)
                opset_push(s, extra->items[i].kind, extra->items[i].name, extra->items[i].value);
}

/* Why a path cannot go into a module, or NULL: ':' separates entries of
 * path variables; and Lmod 8.6 and Environment Modules 5.2 both write a
 * newline in a value raw into the shell code they print, where it ends the
 * command and the rest of the name runs as code (tests/modules/hostile.sh),
 * so control characters are refused however well we escape them. */
static const char *path_problem(const char *path, enum module_format format)
{
        /* The scan reaches it relative to a directory it holds open; no
         * program can by its name (open, stat, the loader, a shell: each
         * fails with ENAMETOOLONG), and neither can the checks below, which
         * would leave out every directory and keep only the root variables. */
        if (strlen(path) >= PATH_MAX)
                return "is longer than the 4095 bytes Linux accepts in a path name (PATH_MAX): no "
                       "program could open anything under it, nor can cudamod check what is there";
        if (strchr(path, ':'))
                return "holds ':', which a path variable cannot carry";
        if (path_has_control_char(path))
                return "holds a control character (a newline, …), which Lmod and Environment "
                       "Modules would pass to the shell unquoted";
        /* Lua strings are bytes, and the Lua literal escapes every byte. A
         * Tcl string holds characters: Environment Modules decodes the
         * modulefile in the locale's encoding and encodes the value back,
         * so in a UTF-8 locale a byte that is not UTF-8 comes back as two
         * (tests/fuzz/fuzz-escape.c checks both with tclsh). */
        if (format == FORMAT_TCL && !utf8_valid(path))
                return "is not valid UTF-8, which Environment Modules would change into other "
                       "bytes in a UTF-8 locale";
        return NULL;
}

static char *unusable_path(const struct install *in, enum module_format format)
{
        const char *paths[] = { in->prefix, in->bin_dir, in->include_dir, in->lib_dir };
        const struct strv *lists[] = { &in->extra_lib_dirs, &in->extra_include_dirs };
        const char *why;

        for (size_t i = 0; i < ELEMENTSOF(paths); i++)
                if (paths[i] && (why = path_problem(paths[i], format)))
                        return xasprintf("'%s' %s", paths[i], why);
        for (size_t k = 0; k < ELEMENTSOF(lists); k++)
                for (size_t i = 0; i < lists[k]->len; i++)
                        if ((why = path_problem(lists[k]->items[i], format)))
                                return xasprintf("'%s' %s", lists[k]->items[i], why);
        return NULL;
}

static const char *const titles[_COMPONENT_MAX] = {
        [COMPONENT_CUDA] = "NVIDIA CUDA Toolkit",
        [COMPONENT_CUDNN] = "NVIDIA cuDNN",
        [COMPONENT_NCCL] = "NVIDIA NCCL",
};

/* The most precise version known: CUDA release, cuDNN with its build. */
static char *full_version(const struct install *in)
{
        if (in->component == COMPONENT_CUDA && in->release.count)
                return version_to_string(&in->release, 3);
        if (in->component == COMPONENT_CUDNN && in->build) {
                _cleanup_free_ char *v = version_to_string(&in->version, 3);
                return xasprintf("%s.%s", v, in->build);
        }
        return version_to_string(&in->version, in->component == COMPONENT_CUDA ? 2 : 3);
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
        if (in->component != COMPONENT_CUDA && install_cuda_major(in) < 0 &&
            cfg->layout == MODULE_LAYOUT_HIERARCHICAL)
                return xstrdup("the CUDA major it was built for is unknown");
        return NULL;
}

struct candidate {
        const struct install *in;
        size_t order;     /* position in the install list */
        char *dir;        /* "Core/cuda" */
        char *version;    /* module version */
};

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

/* This machine's architecture in the scan's names ("x86_64", "aarch64",
 * "ppc64le"), or NULL. */
static const char *host_arch(void)
{
        static struct utsname u;

        if (!u.machine[0] && uname(&u) < 0)
                return NULL;
        return u.machine[0] ? u.machine : NULL;
}

/* Apply the collision rules of the file comment to the group
 * c[0..n) that shares one name. */
static void disambiguate(struct candidate *c, size_t n, const struct config *cfg,
                         struct strv *warnings)
{
        struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *was = xasprintf("%s/%s", path_basename(c[0].dir), c[0].version);
        bool majors_differ = false, fulls_differ = true, foreign = false;
        const char *host = host_arch();

        for (size_t i = 1; i < n; i++)
                if (install_cuda_major(c[i].in) != install_cuda_major(c[0].in))
                        majors_differ = true;
        for (size_t i = 0; i < n; i++)
                if (c[i].in->arch && host && !streq(c[i].in->arch, host))
                        foreign = true;
        if (foreign) {
                /* Builds for another architecture than this machine's are
                 * the ones that give way. */
                for (size_t i = 0; i < n; i++) {
                        char *v;
                        if (!c[i].in->arch || streq(c[i].in->arch, host))
                                continue;
                        v = xasprintf("%s-%s", c[i].version, c[i].in->arch);
                        free(c[i].version);
                        c[i].version = v;
                }
        } else if (cfg->layout == MODULE_LAYOUT_FLAT && c[0].in->component != COMPONENT_CUDA &&
                   majors_differ) {
                for (size_t i = 0; i < n; i++) {
                        char *v = xasprintf("%s-cuda%ld", c[i].version, install_cuda_major(c[i].in));
                        free(c[i].version);
                        c[i].version = v;
                }
        } else {
                for (size_t i = 0; i < n && fulls_differ; i++)
                        for (size_t k = i + 1; k < n; k++) {
                                _cleanup_free_ char *a = full_version(c[i].in);
                                _cleanup_free_ char *b = full_version(c[k].in);
                                if (streq(a, b))
                                        fulls_differ = false;
                        }
                for (size_t i = 0; i < n; i++) {
                        char *v = fulls_differ ? full_version(c[i].in)
                                               : i == 0 ? xstrdup(c[i].version)
                                                        : xasprintf("%s-%zu", c[i].version, i + 1);
                        free(c[i].version);
                        c[i].version = v;
                }
        }
        strbuf_addf(&sb, "%zu installs would share module '%s'; named", n, was);
        for (size_t i = 0; i < n; i++)
                strbuf_addf(&sb, "%s '%s/%s' (%s)", i ? "," : "", path_basename(c[i].dir),
                            c[i].version, c[i].in->prefix);
        strv_push(warnings, strbuf_detach(&sb));
}

static void resolve_collisions(struct candidate *c, size_t n, const struct config *cfg,
                               struct strv *warnings)
{
        /* Each pass renames at least one group; the numeric rule always
         * ends it, so a few passes suffice. */
        for (unsigned pass = 0; pass < 8; pass++) {
                bool changed = false;

                qsort(c, n, sizeof(*c), candidate_cmp);
                for (size_t i = 0; i < n;) {
                        size_t k = i + 1;

                        while (k < n && same_name(&c[i], &c[k]))
                                k++;
                        if (k - i > 1) {
                                /* Sort the group back into scan order. */
                                struct candidate *g = c + i;
                                for (size_t a = 1; a < k - i; a++)
                                        for (size_t b = a; b > 0 && g[b].order < g[b - 1].order; b--) {
                                                struct candidate t = g[b];
                                                g[b] = g[b - 1];
                                                g[b - 1] = t;
                                        }
                                disambiguate(g, k - i, cfg, warnings);
                                changed = true;
                        }
                        i = k;
                }
                if (!changed)
                        return;
        }
}

static char *module_dir(const struct install *in, const struct config *cfg)
{
        const char *name = component_to_string(in->component);

        if (cfg->layout == MODULE_LAYOUT_FLAT)
                return xstrdup(name);
        if (in->component == COMPONENT_CUDA)
                return xasprintf("Core/%s", name);
        return xasprintf("CUDA/%ld/%s", install_cuda_major(in), name);
}

static char *describe(const struct install *in)
{
        _cleanup_free_ char *v = full_version(in);
        struct strbuf sb = STRBUF_INIT;

        strbuf_addf(&sb, "%s %s", titles[in->component], v);
        if (in->component == COMPONENT_NCCL && in->cuda_version.count >= 2) {
                _cleanup_free_ char *cv = version_to_string(&in->cuda_version, 2);
                strbuf_addf(&sb, " for CUDA %s", cv);
        } else if (in->component != COMPONENT_CUDA && install_cuda_major(in) >= 0)
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
                if (op->kind == ENV_OP_SETENV) {
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

static char *help_text(const struct module_plan *m)
{
        const struct install *in = m->install;
        struct strbuf sb = STRBUF_INIT;

        strbuf_addf(&sb, "%s in %s.\n\n", m->description, in->prefix);
        switch (in->component) {
        case COMPONENT_CUDA:
                strbuf_addstr(&sb, "For building PyTorch and CUDA extensions from source, and for running\n"
                                   "them: nvcc on PATH, the toolkit's headers and libraries on CPATH,\n"
                                   "LIBRARY_PATH and LD_LIBRARY_PATH, and CUDA_HOME/CUDA_PATH for the build.\n");
                if (m->modulepath)
                        strbuf_addf(&sb, "Loading it makes the cuDNN and NCCL builds for CUDA %ld available\n"
                                         "('module avail cudnn nccl').\n",
                                    install_cuda_major(in));
                break;
        case COMPONENT_CUDNN:
                strbuf_addstr(&sb, "For building PyTorch from source (CUDNN_ROOT, CUDNN_INCLUDE_DIR,\n"
                                   "CUDNN_LIB_DIR) and running it (libcudnn*.so on LD_LIBRARY_PATH).\n");
                break;
        default:
                strbuf_addstr(&sb, "For building PyTorch from source against this NCCL (USE_SYSTEM_NCCL=1,\n"
                                   "NCCL_ROOT, NCCL_INCLUDE_DIR, NCCL_LIB_DIR) and running it (libnccl.so.2\n"
                                   "on LD_LIBRARY_PATH).\n");
                break;
        }
        if (m->n_deps)
                strbuf_addf(&sb, "It needs a cuda module of CUDA %s.\n", m->deps[0].min);
        strbuf_addstr(&sb, "\nWhat it sets ('<' puts directories in front, '>' at the end):\n");
        help_settings(&sb, m);
        return strbuf_detach(&sb);
}

static void fill_module(struct module_plan *m, const struct candidate *c, const struct config *cfg,
                        const char *outdir)
{
        const struct install *in = c->in;
        const char *name = component_to_string(in->component);
        long major = install_cuda_major(in);
        struct opset s = { .no_paths = in->layout == LAYOUT_SYSTEM };
        _cleanup_free_ char *full = full_version(in);

        m->install = in;
        m->order = c->order;
        m->name = xstrdup(name);
        m->version = xstrdup(c->version);
        m->full_name = xasprintf("%s/%s", name, c->version);
        m->dir = xstrdup(c->dir);
        m->path = xasprintf("%s/%s%s", c->dir, c->version, cfg->format == FORMAT_LUA ? ".lua" : "");
        m->family = xstrdup(name);
        if (in->component == COMPONENT_CUDA && cfg->layout == MODULE_LAYOUT_HIERARCHICAL)
                m->modulepath = xasprintf("%s/CUDA/%ld", outdir, major);
        /* Flat: the module needs a cuda of its major. Hierarchical Tcl too:
         * Environment Modules does not unload what a level made reachable
         * when that level goes, and the prereq makes it (no cuDNN for CUDA
         * 12 is left loaded beside a CUDA 11). Lmod does this itself. */
        if (in->component != COMPONENT_CUDA && major >= 0 &&
            (cfg->layout == MODULE_LAYOUT_FLAT || cfg->format == FORMAT_TCL)) {
                m->deps = xcalloc(1, sizeof(*m->deps));
                m->n_deps = 1;
                m->deps[0].name = xstrdup("cuda");
                m->deps[0].min = xasprintf("%ld", major);
                m->deps[0].max = xasprintf("%ld.999999", major);
                m->deps[0].em_spec = xasprintf("cuda@%ld:%ld.999999", major, major);
        }
        if (in->component == COMPONENT_CUDA)
                ops_cuda(&s, in, cfg);
        else
                ops_library(&s, in, cfg);
        ops_site(&s, &cfg->env[in->component]);
        m->ops = s.ops;
        m->n_ops = s.n;
        m->description = describe(in);
        strv_push(&m->whatis, xasprintf("Name: %s", name));
        strv_push(&m->whatis, xasprintf("Version: %s", full));
        strv_push(&m->whatis, xasprintf("Description: %s", m->description));
        strv_push(&m->whatis, xstrdup("Category: library, GPU"));
        strv_push(&m->whatis, xasprintf("Keywords: %s, CUDA, GPU, PyTorch", name));
        m->help = help_text(m);
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

static bool is_native(const struct install *in)
{
        const char *host = host_arch();

        return !in->arch || !host || streq(in->arch, host);
}

/* Whether a comes before b as a default: a build for this machine before
 * one for another architecture, then the newer version, and on a tie the
 * one first in scan order (which kept the plain name). */
static bool module_newer(const struct module_plan *a, const struct module_plan *b)
{
        int r = version_compare(&a->install->version, &b->install->version);

        if (is_native(a->install) != is_native(b->install))
                return is_native(a->install);

        if (r == 0 && a->install->component == COMPONENT_CUDA)
                r = version_compare(&a->install->release, &b->install->release);
        return r > 0 || (r == 0 && a->order < b->order);
}

static void plan_defaults(struct plan *p, const struct config *cfg)
{
        bool matched[_COMPONENT_MAX] = { false };

        for (size_t i = 0; i < p->n_modules; i++) {
                struct module_plan *m = &p->modules[i], *best = NULL;
                enum component c = m->install->component;
                const struct default_spec *spec = &cfg->defaults[c];
                bool first_in_dir = true;

                for (size_t k = 0; k < i; k++)
                        if (streq(p->modules[k].dir, m->dir))
                                first_in_dir = false;
                if (!first_in_dir || spec->kind == DEFAULT_NONE)
                        continue;
                for (size_t k = i; k < p->n_modules; k++) {
                        struct module_plan *o = &p->modules[k];
                        if (!streq(o->dir, m->dir))
                                continue;
                        if (spec->kind == DEFAULT_VERSION && !default_matches(o, spec->version))
                                continue;
                        if (!best || module_newer(o, best))
                                best = o;
                }
                if (!best)
                        continue;
                matched[c] = true;
                best->is_default = true;
                p->rcs = xreallocarray(p->rcs, p->n_rcs + 1, sizeof(*p->rcs));
                p->rcs[p->n_rcs++] = (struct modulerc_plan){
                        .path = xasprintf("%s/%s", m->dir,
                                          cfg->format == FORMAT_LUA ? ".modulerc.lua" : ".modulerc"),
                        .module = xstrdup(best->full_name),
                        .version = xstrdup(best->version),
                };
        }
        for (int c = 0; c < _COMPONENT_MAX; c++)
                if (cfg->defaults[c].kind == DEFAULT_VERSION && !matched[c])
                        strv_push(&p->warnings,
                                  xasprintf("defaults.%s: no %s module has version '%s'; no default marked",
                                            component_to_string(c), component_to_string(c),
                                            cfg->defaults[c].version));
}

int plan_build(const struct install_list *installs, const struct config *cfg,
               const char *outdir, struct plan *ret, struct diag *d)
{
        struct plan p = { .format = cfg->format, .layout = cfg->layout };
        struct candidate *c = xcalloc(installs->len + 1, sizeof(*c));
        size_t n = 0;
        int r = 0;

        p.outdir = xstrdup(outdir);
        for (size_t i = 0; i < installs->len; i++) {
                const struct install *in = installs->items[i];
                const char *name = component_to_string(in->component);
                _cleanup_free_ char *why = skip_reason(in, cfg);
                const struct version *v = &in->version;
                char *version = NULL;

                if (why) {
                        strv_push(&p.warnings, xasprintf("%s at '%s' gets no module: %s", name,
                                                         in->prefix, why));
                        continue;
                }
                for (size_t k = 0; k < in->n_problems; k++)
                        strv_push(&p.warnings, xasprintf("%s at '%s': %s", name, in->prefix,
                                                         in->problems[k].message));
                if (in->component == COMPONENT_CUDA && in->release.count >= 3)
                        v = &in->release;
                r = naming_expand(cfg->naming[in->component], v, in->build, install_cuda_major(in),
                                  &in->cuda_version, &version, d);
                if (r < 0) {
                        if (d && d->message) {
                                char *m = xasprintf("naming.%s: %s", name, d->message);
                                free(d->message);
                                d->message = m;
                        }
                        goto fail;
                }
                c[n] = (struct candidate){ .in = in, .order = i, .dir = module_dir(in, cfg),
                                           .version = version };
                n++;
        }
        resolve_collisions(c, n, cfg, &p.warnings);

        p.modules = xcalloc(n + 1, sizeof(*p.modules));
        for (size_t i = 0; i < n; i++)
                fill_module(&p.modules[p.n_modules++], &c[i], cfg, outdir);
        qsort(p.modules, p.n_modules, sizeof(*p.modules), module_cmp);
        plan_defaults(&p, cfg);

        for (size_t i = 0; i < n; i++) {
                free(c[i].dir);
                free(c[i].version);
        }
        free(c);
        *ret = p;
        return 0;
fail:
        for (size_t i = 0; i < n; i++) {
                free(c[i].dir);
                free(c[i].version);
        }
        free(c);
        plan_release(&p);
        return r;
}

static void module_plan_release(struct module_plan *m)
{
        free(m->name);
        free(m->version);
        free(m->full_name);
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
        for (size_t i = 0; i < m->n_ops; i++)
                plan_op_release(&m->ops[i]);
        free(m->ops);
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
        }
        free(p->rcs);
        strv_release(&p->warnings);
        free(p->outdir);
        *p = (struct plan){ 0 };
}
