/* doctor-build.c: `cudamod doctor --build` (doctor-build.h). The search
 * order is STACK.md §7.3's, checked against CMake 3.25's cmSearchPath and
 * cmFindBase (tests/test-doctor-build.c runs the real find_library and
 * find_path on the same trees). */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cmake-find.h"
#include "doctor-build.h"
#include "component-cudnn.h"
#include "component-cudss.h"
#include "component-cusparselt.h"
#include "component-magma.h"
#include "component-nccl.h"
#include "component-nvshmem.h"
#include "component-table.h"
#include "detect.h"
#include "evaluate-modulepath.h"
#include "evaluate.h"
#include "libfile.h"
#include "metadata.h"
#include "process.h"
#include "strbuf.h"
#include "toolchain.h"
#include "util-file.h"
#include "util-path.h"
#include "validate.h"
#include "version.h"
#include "write-index.h"
#include "banned.h"

#define HOST_TIMEOUT 20
/* The probe compile: nvcc runs cudafe++, cicc, ptxas and the host
 * compiler twice; seconds on an idle machine, more on a loaded one. */
#define COMPILE_TIMEOUT 120

struct build {
        const struct doctor_options *o;
        char *const *env;
        struct build_report *r;
        const char *sysroot;
        char *arch;          /* CMAKE_LIBRARY_ARCHITECTURE ("x86_64-linux-gnu"), or NULL */
        bool lib64;          /* FIND_LIBRARY_USE_LIB64_PATHS (not Debian, not Arch) */
        char *root;          /* CUDA_TOOLKIT_ROOT_DIR (FindCUDA's), or NULL */
        char *top;           /* FindCUDAToolkit's root for it (nvcc -v's TOP) */
        struct cmake_find_prefix *app; /* what the find modules appended to CMAKE_PREFIX_PATH */
        size_t n_app;
        /* the modulepath's units, evaluated on first use */
        bool discovered;
        struct module_unit *units;
        size_t n_units;
        struct strv unasked;  /* the USE_* of what nothing asks for and nothing has */
        const char *system_from; /* what turned NCCL's USE_SYSTEM_NCCL on (static) */
};

/* --- environment ------------------------------------------------------------ */

static const char *getv(const struct build *b, const char *name)
{
        const char *v = env_get(b->env, name);

        return v && *v ? v : NULL;
}

/* CMake's truth of name (cmake_is_true); def when unset. */
static bool truthy(const struct build *b, const char *name, bool def)
{
        return cmake_is_true(getv(b, name), def);
}

/* name's ':'-separated entries (empty ones dropped). */
static void env_list(const struct build *b, const char *name, struct strv *ret)
{
        const char *v = getv(b, name);

        if (v)
                modulepath_split(v, ret);
}

/* A default place under the sysroot. */
static char *rooted(const struct build *b, const char *abs)
{
        return cmake_find_rooted(b->sysroot, abs);
}

static bool exists_rooted(const struct build *b, const char *abs)
{
        _cleanup_free_ char *p = rooted(b, abs);

        return access(p, F_OK) == 0;
}

static void append_prefix(struct build *b, const char *prefix, const char *from)
{
        if (!prefix || !*prefix)
                return;
        b->app = xreallocarray(b->app, b->n_app + 1, sizeof(*b->app));
        b->app[b->n_app++] = (struct cmake_find_prefix){ .prefix = xstrdup(prefix), .from = xstrdup(from) };
}

/* A find module's appends to CMAKE_PREFIX_PATH: FindCUDNN's
 * `list(APPEND CUDNN_ROOT $ENV{CUDNN_ROOT_DIR} ${CUDA_TOOLKIT_ROOT_DIR})`
 * then `list(APPEND CMAKE_PREFIX_PATH ${CUDNN_ROOT})` (root_var: its
 * CUDNN_ROOT first; NULL for FindNCCL, which appends only the other two).
 * Later finds see them too: the modules run in the caller's scope. */
static void module_appends(struct build *b, const char *root_var, const char *root_dir_var)
{
        const char *r = root_var ? getv(b, root_var) : NULL;
        const char *v = getv(b, root_dir_var);

        if (r) {
                _cleanup_free_ char *label = xasprintf("%s (appended)", root_var);
                append_prefix(b, r, label);
        }
        if (v)
                append_prefix(b, v, root_dir_var);
        if (b->root)
                append_prefix(b, b->root, "CUDA_TOOLKIT_ROOT_DIR (appended)");
}

/* The first file f finds in b's environment (cmake-find.h). */
static void find_run(const struct build *b, const struct cmake_find *f, const char *version,
                     struct cmake_find_hit *ret)
{
        const struct cmake_find_env e = { .env = b->env, .sysroot = b->sysroot, .arch = b->arch, .lib64 = b->lib64,
                                          .appended = b->app, .n_appended = b->n_app };

        cmake_find_run(&e, f, version, ret);
}

/* --- findings ------------------------------------------------------------------- */

/* A finding about row (-1: none); fatal: the configure stops on it, and
 * the row's verdict is "fatal". */
_printf_(7, 8) static void add_finding(struct build_report *r, int row, bool fatal, const char *id, char *what,
                                       char *fix, const char *why_fmt, ...)
{
        struct strbuf why = STRBUF_INIT;
        va_list ap;

        va_start(ap, why_fmt);
        strbuf_vaddf(&why, why_fmt, ap);
        va_end(ap);
        r->findings = xreallocarray(r->findings, r->n_findings + 1, sizeof(*r->findings));
        r->findings[r->n_findings++] = (struct doctor_finding){ .id = id, .what = what, .fatal = fatal,
                                                                 .why = strbuf_detach(&why), .fix = fix };
        if (fatal) {
                r->n_fatal++;
                if (row >= 0)
                        r->c[row].verdict = "fatal";
        }
}

/* --- modules ---------------------------------------------------------------------- */

static void discover(struct build *b)
{
        _cleanup_(strv_release) struct strv start = { 0 };

        if (b->discovered)
                return;
        b->discovered = true;
        if (!b->o->modulepath || !b->o->modulepath->len)
                return;
        evaluate_basic_env(&start);
        module_units_discover(&(struct evaluate_options){ .environ = start.items, .modulepath = b->o->modulepath,
                                                          .trust_modulefiles = b->o->trust_modulefiles },
                              &b->units, &b->n_units);
}

static const struct module_unit *unit_named(const struct build *b, const char *module)
{
        for (size_t i = 0; i < b->n_units; i++)
                if (streq(b->units[i].module, module))
                        return &b->units[i];
        return NULL;
}

/* The unit's kind and the CUDA major its libraries are for (a module below
 * a cuda module in a hierarchy: that one's). */
static const struct component *unit_kind(const struct build *b, const struct module_unit *u, unsigned long *ret_major)
{
        _cleanup_(strv_release) struct strv own = { 0 };
        const struct loaded_module *m;
        const struct component *kind;

        *ret_major = 0;
        if (!u->evaluated || !u->eval.n_modules)
                return NULL;
        m = &u->eval.modules[u->eval.n_modules - 1];
        evaluation_own_entries(&u->eval, "LD_LIBRARY_PATH", &own);
        kind = module_kind_detect(m->file.name, &own);
        if (!kind)
                return NULL;
        *ret_major = metadata_module_cuda_major(kind, &own);
        if (!*ret_major && u->chain.len > 1) {
                const struct module_unit *top = unit_named(b, u->chain.items[0]);
                unsigned long tm = 0;

                if (top && top != u && unit_kind(b, top, &tm) == component_toolkit())
                        *ret_major = tm;
        }
        return kind;
}

/* "module load cudnn/8.9.7" (with the cuda module it sits below when that
 * is not loaded) for a module of kind built for CUDA major: the one below
 * a loaded cuda module first, then the highest version. NULL: none. */
static char *suggest_module(struct build *b, const struct component *kind, unsigned long major)
{
        const struct module_unit *best = NULL;
        bool best_loaded = false;

        discover(b);
        for (size_t i = 0; i < b->n_units; i++) {
                const struct module_unit *u = &b->units[i];
                unsigned long m = 0;
                bool loaded = true;

                if (unit_kind(b, u, &m) != kind || (major && m && m != major) || (major && !m))
                        continue;
                for (size_t k = 0; k + 1 < u->chain.len; k++)
                        loaded &= strv_contains(&b->r->loaded, u->chain.items[k]);
                if (!best || (loaded && !best_loaded) ||
                    (loaded == best_loaded &&
                     module_version_compare(u->eval.modules[u->eval.n_modules - 1].file.version,
                                            best->eval.modules[best->eval.n_modules - 1].file.version) > 0)) {
                        best = u;
                        best_loaded = loaded;
                }
        }
        if (!best)
                return NULL;
        {
                struct strv load = { 0 };
                char *line, *s;

                for (size_t k = 0; k < best->chain.len; k++)
                        if (k + 1 == best->chain.len || !strv_contains(&b->r->loaded, best->chain.items[k]))
                                strv_add(&load, best->chain.items[k]);
                s = strv_join(&load, " ");
                line = xasprintf("module load %s", s);
                free(s);
                strv_release(&load);
                return line;
        }
}

/* The root variable a module for this component would set, or NULL. */
static const char *root_variable(const struct build *b, enum build_id id)
{
        const struct component *kind = b->r->c[id].kind;

        return kind ? kind->torch_build.root_variable : NULL;
}

/* What to do for a component that is missing or wrong: load the module of
 * the toolkit's major, else set its root, or turn it off. */
static char *component_fix(struct build *b, enum build_id id)
{
        const struct build_component *c = &b->r->c[id];
        _cleanup_free_ char *load = c->kind ? suggest_module(b, c->kind, b->r->cuda_major) : NULL;
        const char *var = root_variable(b, id);
        _cleanup_free_ char *cuda = b->r->cuda_major ? xasprintf(" for CUDA %lu", b->r->cuda_major) : xstrdup("");
        bool no_mp = !b->o->modulepath || !b->o->modulepath->len;

        const char *without = c->kind && c->kind->torch_build.system ? "to build the bundled NCCL instead"
                                                                     : "to build without it";

        if (load)
                return xasprintf("%s (a %s%s), or set %s=0 %s", load, c->label, cuda,
                                 c->option ? c->option : "USE_CUDA", without);
        if (c->option)
                return xasprintf("install %s%s and set %s to its prefix, or set %s=0 %s%s", c->label, cuda,
                                 var ? var : "CMAKE_PREFIX_PATH", c->option, without,
                                 no_mp ? " (give --modulepath to have cudamod name a module)" : "");
        return xasprintf("install %s%s%s", c->label, cuda,
                         no_mp ? " (give --modulepath to have cudamod name a module)" : "");
}

/* --- versions and installs ------------------------------------------------------------ */

static char *header_version_of(const struct component *kind, const char *header)
{
        _cleanup_free_ char *dir = header ? path_dirname(header) : NULL;
        _cleanup_free_ char *file = NULL;
        long code = 0;

        if (!dir)
                return NULL;
        if (component_header_version(&(struct strv){ .items = (char *[]){ dir, NULL }, .len = 1 }, kind, &code,
                                     &file) < 0)
                return NULL;
        {
                struct version v = kind->code_version(code);
                return version_to_string(&v, 0);
        }
}

static char *library_version_of(const char *path, const char *stem)
{
        struct version v;

        if (!path)
                return NULL;
        {
                _cleanup_free_ char *real = realpath(path, NULL);
                v = lib_file_version(real ? real : path, stem);
        }
        return v.count ? version_to_string(&v, 0) : NULL;
}

static unsigned long library_cuda_major(const struct component *kind, const char *path)
{
        _cleanup_free_ char *dir = path ? real_dirname(path) : NULL;

        if (!dir)
                return 0;
        return metadata_module_cuda_major(kind, &(struct strv){ .items = (char *[]){ dir, NULL }, .len = 1 });
}

/* The install a header or library is in: its real directory without the
 * trailing include, lib, lib64, <arch>, targets/<triple> parts. */
static char *install_of(const char *path)
{
        char *d = path ? real_dirname(path) : NULL;

        while (d && !streq(d, "/")) {
                const char *base = path_basename(d);
                _cleanup_free_ char *parent = path_dirname(d);

                if (streq(base, "include") || streq(base, "lib") || streq(base, "lib64") || endswith(base, "-linux-gnu") ||
                    streq(path_basename(parent), "targets") || streq(base, "targets") || streq(base, "cuda") ||
                    streq(base, "x64")) {
                        free(d);
                        d = TAKE_PTR(parent);
                        continue;
                }
                break;
        }
        return d;
}

/* What `nvcc ARG...` prints (stdout and stderr), run as CMake runs it
 * (FindCUDAToolkit: `nvcc -v __cmake_determine_cuda`, `nvcc --version`);
 * NULL when it does not start. */
static char *nvcc_says(const struct build *b, const char *nvcc, const char *a1, const char *a2)
{
        char *argv[] = { (char *)nvcc, (char *)a1, (char *)a2, NULL };
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };

        if (process_run(nvcc, argv, b->env, "/", HOST_TIMEOUT, &c) < 0 || c.exec_errno)
                return NULL;
        return xasprintf("%s\n%s", c.out.buf ? c.out.buf : "", c.err.buf ? c.err.buf : "");
}

/* The toolkit root FindCUDAToolkit takes for this nvcc: the `#$ TOP=` of
 * `nvcc -v` (a wrapper script or a link in /usr/local/bin leads to the real
 * toolkit), else the nvcc's directory's parent. */
static char *nvcc_top(const struct build *b, const char *nvcc)
{
        _cleanup_free_ char *out = nvcc_says(b, nvcc, "-v", "__cmake_determine_cuda");
        const char *p = out ? strstr(out, "#$ TOP=") : NULL;

        if (p) {
                _cleanup_free_ char *top = xstrndup(p + 7, strcspn(p + 7, "\r\n"));
                _cleanup_free_ char *bin = path_join(top, "bin");
                _cleanup_free_ char *abs = path_absolute(bin);
                _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

                /* get_filename_component(ABSOLUTE) drops "." and "..". */
                for (const char *q = abs; *q;) {
                        size_t n;

                        while (*q == '/')
                                q++;
                        n = strcspn(q, "/");
                        if (n == 2 && q[0] == '.' && q[1] == '.') {
                                size_t len = sb.len;

                                while (len && sb.buf[len - 1] != '/')
                                        len--;
                                strbuf_setlen(&sb, len ? len - 1 : 0);
                        } else if (n && !(n == 1 && q[0] == '.')) {
                                strbuf_addch(&sb, '/');
                                strbuf_add(&sb, q, n);
                        }
                        q += n;
                }
                return path_dirname(sb.len ? sb.buf : "/");
        }
        {
                _cleanup_free_ char *bin = path_dirname(nvcc);
                return path_dirname(bin);
        }
}

/* "13.0" from `nvcc --version` (" V13.0.88"), or NULL. */
static char *nvcc_version(const struct build *b, const char *nvcc)
{
        _cleanup_free_ char *out = nvcc_says(b, nvcc, "--version", NULL);
        const char *p = out ? strstr(out, " V") : NULL;
        struct version v;
        const char *end;

        if (!p || version_parse_prefix(p + 2, &v, &end) < 0 || v.count < 2)
                return NULL;
        return version_to_string(&v, 2);
}

/* path is dir or below it. */
static bool under_dir(const char *path, const char *dir)
{
        size_t n = strlen(dir);

        while (n > 1 && dir[n - 1] == '/')
                n--;
        return strncmp(path, dir, n) == 0 && (path[n] == '/' || !path[n]);
}

/* --- the toolkit --------------------------------------------------------------------- */

static char *same_toolkit(const char *a, const char *b)
{
        _cleanup_free_ char *ra = a ? realpath(a, NULL) : NULL, *rb = b ? realpath(b, NULL) : NULL;

        return ra && rb && streq(ra, rb) ? xstrdup(ra) : NULL;
}

static void toolkit_search(struct build *b, bool use_home, struct cmake_find_hit *ret)
{
        /* FindCUDA (PyTorch's cmake/Modules_CUDA_fix/upstream/FindCUDA.cmake):
         * find_program(nvcc PATHS ENV CUDA_TOOLKIT_ROOT ENV CUDA_PATH
         * ENV CUDA_BIN_PATH PATH_SUFFIXES bin bin64 NO_DEFAULT_PATH), then
         * find_program(nvcc PATHS /opt/cuda/bin PATH_SUFFIXES cuda/bin). */
        const char *vars[] = { "CUDA_TOOLKIT_ROOT", "CUDA_PATH", "CUDA_BIN_PATH", NULL };
        const char *bin_suffixes[] = { "bin", "bin64", NULL };
        const char *cuda_bin[] = { "cuda/bin", NULL };
        const char *nvcc[] = { "nvcc", NULL };
        _cleanup_free_ char *opt = rooted(b, "/opt/cuda/bin");
        const char *opt_paths[] = { opt, NULL };
        const char *home = use_home ? getv(b, "CUDA_HOME") : NULL;

        *ret = (struct cmake_find_hit){ 0 };
        for (size_t i = 0; vars[i] && !ret->path; i++) {
                const char *v = getv(b, vars[i]);
                /* setup.py before PyTorch 2.8 passed CUDA_HOME as CUDA_BIN_PATH. */
                const char *from = vars[i];

                if (!v && streq(vars[i], "CUDA_BIN_PATH") && home) {
                        v = home;
                        from = "CUDA_HOME (as CUDA_BIN_PATH)";
                }
                if (!v)
                        continue;
                find_run(b,
                         &(struct cmake_find){ .kind = CMAKE_FIND_PROGRAM, .names = nvcc, .suffixes = bin_suffixes,
                                         .hints = (const char *const[]){ v, NULL }, .hints_from = from,
                                         .no_default = true },
                         NULL, ret);
        }
        if (!ret->path) {
                cmake_find_hit_release(ret);
                find_run(b,
                         &(struct cmake_find){ .kind = CMAKE_FIND_PROGRAM, .names = nvcc, .suffixes = cuda_bin,
                                         .paths = opt_paths, .paths_from = "default /opt/cuda/bin" },
                         NULL, ret);
                if (ret->path && streq(ret->from, "default /opt/cuda/bin"))
                        ret->fallback = true;
        }
}

/* An nvcc hit: "not found" and false without one, else its prefix (the
 * directory above its bin/) and true. */
static bool nvcc_found(struct build_component *c)
{
        _cleanup_free_ char *bin = NULL;

        if (!c->library.path) {
                cmake_find_hit_release(&c->library);
                c->state = "not found";
                return false;
        }
        bin = path_dirname(c->library.path);
        c->prefix = path_dirname(bin);
        return true;
}

static void toolkit_find(struct build *b)
{
        struct build_component *c = &b->r->c[BUILD_TOOLKIT];

        toolkit_search(b, true, &c->library);
        /* PyTorch 2.8 and later no longer pass CUDA_HOME on (PR #145822). */
        if (c->library.path && startswith(c->library.from, "CUDA_HOME")) {
                struct cmake_find_hit newer;
                _cleanup_free_ char *same = NULL;

                toolkit_search(b, false, &newer);
                same = newer.path ? same_toolkit(newer.path, c->library.path) : NULL;
                if (!same)
                        strv_push(&b->r->notes,
                                  newer.path ? xasprintf("the toolkit comes from CUDA_HOME, which setup.py passes as "
                                                         "CUDA_BIN_PATH only before PyTorch 2.8; a newer tree takes "
                                                         "'%s' (from %s): set CUDA_PATH too",
                                                         newer.path, newer.from)
                                             : xstrdup("the toolkit comes from CUDA_HOME, which setup.py passes as "
                                                       "CUDA_BIN_PATH only before PyTorch 2.8; a newer tree finds no "
                                                       "toolkit: set CUDA_PATH too"));
                cmake_find_hit_release(&newer);
        }
        if (!nvcc_found(c))
                return;
        b->root = xstrdup(c->prefix);
        b->top = nvcc_top(b, c->library.path);
        c->version = doctor_toolkit_version(c->prefix);
        if (!c->version)
                c->version = doctor_toolkit_version(b->top);
        if (!c->version)
                c->version = nvcc_version(b, c->library.path);
        c->header.path = path_join(c->prefix, "include/cuda.h");
        if (access(c->header.path, F_OK) < 0)
                free(TAKE_PTR(c->header.path));
        else
                c->header.from = xstrdup("CUDA_TOOLKIT_ROOT_DIR");
        c->state = "found";
        if (c->version) {
                struct version v;

                if (version_parse(c->version, &v) == 0 && v.count)
                        b->r->cuda_major = v.n[0];
                b->r->cuda_version = xstrdup(c->version);
        }
}

/* CMake's CUDA compiler (CMakeDetermineCUDACompiler.cmake):
 * CMAKE_CUDA_COMPILER (setup.py forwards it), CUDACXX, else
 * find_program(nvcc) with default paths and $ENV{CUDA_PATH}/bin last. */
static void nvcc_find(struct build *b)
{
        struct build_component *c = &b->r->c[BUILD_NVCC];
        const char *given = getv(b, "CMAKE_CUDA_COMPILER");
        const char *from = "CMAKE_CUDA_COMPILER";

        if (!given) {
                given = getv(b, "CUDACXX");
                from = "CUDACXX";
        }
        if (given) {
                int err = 0;

                c->library.path = process_find_program(given, b->env, &err);
                c->library.from = xstrdup(from);
        } else {
                const char *cp = getv(b, "CUDA_PATH");
                _cleanup_free_ char *cpbin = cp ? path_join(cp, "bin") : NULL;

                find_run(b,
                         &(struct cmake_find){ .kind = CMAKE_FIND_PROGRAM, .names = (const char *const[]){ "nvcc", NULL },
                                         .paths = (const char *const[]){ cpbin, NULL },
                                         .paths_from = "CUDA_PATH" },
                         NULL, &c->library);
        }
        if (!nvcc_found(c))
                return;
        c->version = doctor_toolkit_version(c->prefix);
        if (!c->version)
                c->version = nvcc_version(b, c->library.path);
        c->state = "found";
}


static void nvcc_check(struct build *b)
{
        const struct build_component *root = &b->r->c[BUILD_TOOLKIT], *nvcc = &b->r->c[BUILD_NVCC];
        _cleanup_free_ char *same = NULL;

        if (root->library.path && !nvcc->library.path) {
                add_finding(b->r, BUILD_NVCC, true, BUILD_NO_CUDA_COMPILER,
                            xasprintf("FindCUDA finds the toolkit '%s' (from %s), but CMake's CUDA language finds no "
                                      "nvcc: none in CMAKE_CUDA_COMPILER, CUDACXX, CMAKE_PREFIX_PATH, PATH, the "
                                      "default prefixes' bin nor $CUDA_PATH/bin",
                                      root->prefix, root->library.from),
                            xasprintf("put '%s/bin' on PATH, or set CUDACXX=%s/bin/nvcc", root->prefix, root->prefix),
                            "cmake stops at enable_language(CUDA): \"No CMAKE_CUDA_COMPILER could be found.\"");
                return;
        }
        if (!root->library.path || !nvcc->library.path)
                return;
        same = same_toolkit(root->prefix, nvcc->prefix);
        if (same)
                return;
        if (root->version && nvcc->version && streq(root->version, nvcc->version)) {
                strv_push(&b->r->notes, xasprintf("CMake's CUDA compiler '%s' (%s) is in another toolkit than "
                                                  "FindCUDA's '%s', of the same version", nvcc->library.path,
                                                  nvcc->library.from, root->prefix));
                return;
        }
        {
                _cleanup_free_ char *load = suggest_module(b, component_toolkit(), b->r->cuda_major);

                add_finding(
                        b->r, BUILD_NVCC, true, BUILD_CONFLICTING_CUDA,
                        xasprintf("the nvcc CMake compiles CUDA with is '%s' (from %s, CUDA %s), but FindCUDA's "
                                  "toolkit is '%s' (from %s, CUDA %s)",
                                  nvcc->library.path, nvcc->library.from, nvcc->version ? nvcc->version : "?",
                                  root->prefix, root->library.from, root->version ? root->version : "?"),
                        xasprintf("make both the same toolkit: put '%s/bin' first on PATH%s, or set CUDACXX=%s/bin/nvcc "
                                  "and CUDA_PATH to the same prefix%s%s",
                                  root->prefix, getv(b, "CUDACXX") ? " and unset CUDACXX" : "", root->prefix,
                                  load ? "; or " : "", load ? load : ""),
                        "cmake stops with \"Found two conflicting CUDA versions: V%s in ... and V%s in ...\"",
                        nvcc->version ? nvcc->version : "?", root->version ? root->version : "?");
        }
}

/* The host compiler: CMAKE_CUDA_HOST_COMPILER, CUDAHOSTCXX,
 * CUDA_HOST_COMPILER (setup.py's aliases), else nvcc's own choice; checked
 * against the toolkit's crt/host_config.h. */
static void host_find(struct build *b)
{
        struct build_component *c = &b->r->c[BUILD_HOST];
        const struct build_component *nvcc = &b->r->c[BUILD_NVCC];
        const char *vars[] = { "CMAKE_CUDA_HOST_COMPILER", "CUDAHOSTCXX", "CUDA_HOST_COMPILER", NULL };
        struct host_compiler h = { 0 };
        struct host_limits lim;
        _cleanup_free_ char *why = NULL, *hc = NULL;
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        long max = -1;
        int err = 0;

        if (!nvcc->library.path) {
                c->state = "not searched";
                return;
        }
        for (size_t i = 0; vars[i] && !c->library.path; i++)
                if (getv(b, vars[i])) {
                        c->library.path = process_find_program(getv(b, vars[i]), b->env, &err);
                        c->library.from = xstrdup(vars[i]);
                }
        if (!c->library.path) {
                const char *from = NULL;
                unsigned long major = 0;
                struct version v;

                if (nvcc->version && version_parse(nvcc->version, &v) == 0 && v.count)
                        major = v.n[0];
                free(c->library.from);
                c->library.path = nvcc_host_compiler(nvcc->library.path, b->env, major, &from, &err);
                c->library.from = xstrdup(from ? from : "gcc on nvcc's PATH");
        }
        if (!c->library.path) {
                c->state = "not found";
                return;
        }
        c->state = "found";
        if (host_compiler_query(c->library.path, b->env, HOST_TIMEOUT, &h, &why) < 0) {
                strv_push(&b->r->notes, xasprintf("the host compiler '%s' could not be asked which it is: %s",
                                                  c->library.path, why));
                return;
        }
        c->version = xasprintf("%s %s", h.kind == HOST_COMPILER_CLANG ? "clang" : h.kind == HOST_COMPILER_INTEL ? "icx" : "gcc",
                               h.version ? h.version : "?");
        hc = path_join(nvcc->prefix, "include/crt/host_config.h");
        if (file_read_regular_at(AT_FDCWD, hc, NULL, (size_t)1 << 20, false, &sb, NULL) >= 0 &&
            host_config_parse(sb.buf, sb.len, &lim) == 0 && !host_compiler_accepted(&h, &lim, &max)) {
                add_finding(b->r, BUILD_HOST, true, BUILD_HOST_COMPILER,
                            xasprintf("nvcc %s ('%s') refuses the host compiler '%s' (%s, from %s): its "
                                      "crt/host_config.h accepts %s up to %ld",
                                      nvcc->version ? nvcc->version : "?", nvcc->library.path, c->library.path,
                                      c->version, c->library.from,
                                      h.kind == HOST_COMPILER_CLANG ? "clang" : "GCC", max),
                            max >= 0 ? xasprintf("set CUDAHOSTCXX to a %s %ld or older (e.g. CUDAHOSTCXX=g++-%ld)",
                                                 h.kind == HOST_COMPILER_CLANG ? "clang++" : "g++", max, max)
                                     : xstrdup("set CUDAHOSTCXX to a GCC that nvcc accepts"),
                            "every .cu file fails with \"#error -- unsupported %s version! ...\"",
                            h.kind == HOST_COMPILER_CLANG ? "clang" : "GNU");
        }
        host_compiler_release(&h);
}

/* FindCUDAToolkit with CUDAToolkit_ROOT = FindCUDA's root (cuda.cmake):
 * include/cuda_runtime.h of the root; find_library(CUDA_CUDART cudart
 * PATH_SUFFIXES lib64 lib/x64) with the root appended to CMAKE_PREFIX_PATH. */
static void cudart_find(struct build *b)
{
        struct build_component *c = &b->r->c[BUILD_CUDART];
        const char *suffixes[] = { "lib64", "lib/x64", NULL };
        struct cmake_find_prefix *saved;

        if (!b->root) {
                c->state = "not searched";
                return;
        }
        c->prefix = xstrdup(b->top);
        c->header.path = path_join(b->top, "include/cuda_runtime.h");
        if (access(c->header.path, F_OK) < 0)
                free(TAKE_PTR(c->header.path));
        else
                c->header.from = xstrdup("CUDAToolkit_ROOT");
        /* CUDAToolkit_ROOT is its <Pkg>_ROOT; the root is appended for
         * this search only. */
        saved = b->app;
        b->app = xcalloc(b->n_app + 1, sizeof(*b->app));
        if (b->n_app)
                memcpy(b->app, saved, b->n_app * sizeof(*b->app));
        b->app[b->n_app] = (struct cmake_find_prefix){ .prefix = b->top, .from = (char *)"CUDAToolkit_ROOT_DIR (appended)" };
        b->n_app++;
        {
                _cleanup_free_ char *rootvar = xasprintf("CUDAToolkit_ROOT=%s", b->root);
                _cleanup_(strv_release) struct strv env = { 0 };
                char *const *old = b->env;

                for (char *const *e = b->env; e && *e; e++)
                        if (!startswith(*e, "CUDAToolkit_ROOT="))
                                strv_add(&env, *e);
                strv_add(&env, rootvar);
                b->env = env.items;
                find_run(b,
                         &(struct cmake_find){ .kind = CMAKE_FIND_LIBRARY, .names = (const char *const[]){ "cudart", NULL },
                                         .suffixes = suffixes, .root_var = "CUDAToolkit_ROOT" },
                         NULL, &c->library);
                b->env = old;
        }
        free(b->app);
        b->app = saved;
        b->n_app--;
        c->state = c->library.path ? "found" : "not found";
        c->version = c->header.path ? header_version_of(component_toolkit(), c->header.path) : NULL;
        c->cuda_major = library_cuda_major(component_toolkit(), c->library.path);
        c->library_version = library_version_of(c->library.path, "libcudart");
}

/* --- the CUDA compiler identification ------------------------------------------------ */

/* What CMake's CUDA compiler identification (CMakeDetermineCompilerId)
 * needs of the toolkit and the host compiler, and what a torch .cu file
 * includes first: glibc >= 2.41 declares sinpi, sinpif, cospi, cospif
 * noexcept, and <cmath> brings them after cuda_runtime.h's. */
static const char probe_source[] =
        "#include <cuda_runtime.h>\n"
        "#include <cmath>\n"
        "__global__ void cudamod_probe(float *x) { x[threadIdx.x] = sinpif(x[threadIdx.x]); }\n"
        "int main() { return std::sin(0.0) != 0.0; }\n";

/* glibc's version as "2.41": o->glibc, else the one cudamod runs with
 * (the one the host compiler's headers come from on a normal system). */
static char *glibc_version(const struct build *b)
{
        if (b->o->glibc)
                return xstrdup(b->o->glibc);
        return xstrdup(gnu_get_libc_version());
}

/* Whether glibc version g declares the C23 sinpi family (2.41 and later). */
static bool glibc_has_sinpi(const char *g)
{
        struct version v;

        return g && version_parse(g, &v) == 0 && v.count >= 2 && (v.n[0] > 2 || (v.n[0] == 2 && v.n[1] >= 41));
}

/* Whether CUDA version cuda is older than BUILD_GLIBC_FIXED_CUDA. */
static bool cuda_before_fix(const char *cuda)
{
        struct version v, fixed;

        return cuda && version_parse(cuda, &v) == 0 && version_parse(BUILD_GLIBC_FIXED_CUDA, &fixed) == 0 &&
               version_compare(&v, &fixed) < 0;
}

/* Why path (a program, and each directory up to /) is one another user
 * can change, or NULL: owned by another uid than root's, or writable by
 * its group or others (a root-owned sticky directory, /tmp, is not). */
static char *other_users(const char *path)
{
        _cleanup_free_ char *real = realpath(path, NULL);

        if (!real)
                return xasprintf("'%s' cannot be resolved: %s", path, strerror(errno));
        for (char *p = real;;) {
                struct stat st;
                char *slash;

                if (stat(p, &st) < 0)
                        return xasprintf("'%s': %s", p, strerror(errno));
                if (st.st_uid != 0)
                        return xasprintf("'%s' is owned by uid %u", p, (unsigned)st.st_uid);
                if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)))
                        return xasprintf("'%s' is writable by %s (mode %04o)", p,
                                         st.st_mode & S_IWOTH ? "others" : "its group",
                                         (unsigned)(st.st_mode & 07777));
                if (streq(p, "/"))
                        return NULL;
                slash = strrchr(p, '/');
                if (slash == p)
                        slash[1] = '\0';
                else
                        *slash = '\0';
        }
}

/* The finding for a failed probe: the glibc clash named when nvcc's
 * output is it, else nvcc's first error lines. */
static void compile_failed(struct build *b, const char *output)
{
        const struct build_component *nvcc = &b->r->c[BUILD_NVCC], *host = &b->r->c[BUILD_HOST];
        const char *cuda = nvcc->version ? nvcc->version : "?";
        bool clash = strstr(output, "exception specification is incompatible") &&
                     (strstr(output, "sinpi") || strstr(output, "cospi") || strstr(output, "rsqrt"));

        if (clash) {
                add_finding(b->r, BUILD_NVCC, true, BUILD_GLIBC_MATH,
                            xasprintf("nvcc %s ('%s') cannot compile a .cu that includes <cmath> with glibc %s: its "
                                      "crt/math_functions.h declares sinpi, sinpif, cospi, cospif without the "
                                      "noexcept glibc %s gives them (\"exception specification is incompatible\"); "
                                      "CUDA %s fixed it",
                                      cuda, nvcc->library.path, b->r->glibc ? b->r->glibc : "?",
                                      b->r->glibc ? b->r->glibc : "?", BUILD_GLIBC_FIXED_CUDA),
                            xasprintf("build with a CUDA %s or newer (load its module), or on a system with a "
                                      "glibc older than 2.41; no host compiler avoids it",
                                      BUILD_GLIBC_FIXED_CUDA),
                            "cmake stops at enable_language(CUDA): CMake's CUDA compiler identification fails "
                            "(CMakeDetermineCompilerId.cmake), and every .cu file of torch would fail the same way");
                return;
        }
        add_finding(b->r, BUILD_NVCC, true, BUILD_CUDA_COMPILE,
                    xasprintf("nvcc %s ('%s', host compiler '%s') cannot compile a .cu that includes "
                              "cuda_runtime.h and <cmath>:%s",
                              cuda, nvcc->library.path, host->library.path ? host->library.path : "nvcc's own",
                              b->r->compile.why),
                    xstrdup("fix what nvcc says (the toolkit, the host compiler: CUDAHOSTCXX, NVCC_CCBIN), then "
                            "run doctor --build again"),
                    "cmake stops at enable_language(CUDA): CMake's CUDA compiler identification compiles such a "
                    "file with the same nvcc and host compiler");
}

/* The prediction from versions alone, where the probe did not run. */
static void compile_predicted(struct build *b)
{
        const struct build_component *nvcc = &b->r->c[BUILD_NVCC];
        const char *cuda = nvcc->version ? nvcc->version : b->r->cuda_version;

        if (!glibc_has_sinpi(b->r->glibc) || !cuda_before_fix(cuda))
                return;
        add_finding(b->r, BUILD_NVCC, true, BUILD_GLIBC_MATH,
                    xasprintf("glibc %s declares sinpi, sinpif, cospi, cospif noexcept, and CUDA %s's "
                              "crt/math_functions.h does not (CUDA %s fixed it): nvcc '%s' will fail on any .cu "
                              "that includes <cmath> (predicted from the versions; the probe compile did not run)",
                              b->r->glibc, cuda, BUILD_GLIBC_FIXED_CUDA, nvcc->library.path),
                    xasprintf("build with a CUDA %s or newer (load its module), or on a system with a glibc "
                              "older than 2.41",
                              BUILD_GLIBC_FIXED_CUDA),
                    "cmake stops at enable_language(CUDA): CMake's CUDA compiler identification fails with "
                    "\"exception specification is incompatible with that of previous function \\\"cospi\\\"\"");
}

/* Compile probe_source with the nvcc CMake uses and the host compiler it
 * passes (-ccbin: CMAKE_CUDA_HOST_COMPILER and its aliases; else nvcc's
 * own choice), in b's environment, in a private directory. A host
 * compiler the toolkit's header refuses is let through
 * (-allow-unsupported-compiler), that finding made already, so that what
 * fails next shows too. */
static void compile_check(struct build *b)
{
        struct build_component *nvcc = &b->r->c[BUILD_NVCC];
        const struct build_component *host = &b->r->c[BUILD_HOST];
        struct build_compile *k = &b->r->compile;
        const char *tmp = getenv("TMPDIR");
        _cleanup_(validate_scratch_removep) char *dir = NULL;
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        _cleanup_free_ char *src = NULL, *why = NULL;
        _cleanup_close_ int fd = -1;
        bool ccbin = host->library.path && host->library.from &&
                     (streq(host->library.from, "CMAKE_CUDA_HOST_COMPILER") ||
                      streq(host->library.from, "CUDAHOSTCXX") || streq(host->library.from, "CUDA_HOST_COMPILER"));

        k->state = "not run";
        if (!nvcc->library.path)
                return; /* no CUDA compiler: that finding is made */
        if (b->o->no_compile) {
                k->why = xstrdup("--no-compile");
                goto predict;
        }
        if (geteuid() == 0) {
                why = other_users(nvcc->library.path);
                if (!why && ccbin)
                        why = other_users(host->library.path);
                if (why) {
                        k->why = xasprintf("cudamod runs as root and runs no program another user can change: %s",
                                           why);
                        goto predict;
                }
        }
        /* A nvcc that does not say what it is (a stub library's file, a
         * broken wrapper) is not asked to compile. */
        {
                _cleanup_free_ char *says = nvcc_says(b, nvcc->library.path, "--version", NULL);

                if (!says || !strstr(says, "Cuda compilation tools")) {
                        k->why = xasprintf("'%s --version' does not say \"Cuda compilation tools\"",
                                           nvcc->library.path);
                        goto predict;
                }
        }
        dir = xasprintf("%s/cudamod-doctor-build-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
                k->why = xasprintf("cannot create a temporary directory like '%s': %s", dir, strerror(errno));
                free(TAKE_PTR(dir));
                goto predict;
        }
        src = path_join(dir, "probe.cu");
        fd = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, probe_source, sizeof(probe_source) - 1) != (ssize_t)(sizeof(probe_source) - 1)) {
                k->why = xasprintf("cannot write '%s': %s", src, strerror(errno));
                goto predict;
        }
        strv_add(&k->argv, nvcc->library.path);
        if (ccbin) {
                strv_add(&k->argv, "-ccbin");
                strv_add(&k->argv, host->library.path);
        }
        if (host->verdict && streq(host->verdict, "fatal"))
                strv_add(&k->argv, "-allow-unsupported-compiler");
        strv_add(&k->argv, "-c");
        strv_add(&k->argv, "probe.cu");
        strv_add(&k->argv, "-o");
        strv_add(&k->argv, "probe.o");
        if (process_run(nvcc->library.path, k->argv.items, b->env, dir, COMPILE_TIMEOUT, &c) < 0 || c.exec_errno) {
                k->why = xasprintf("nvcc '%s' could not be started: %s", nvcc->library.path,
                                   strerror(c.exec_errno ? c.exec_errno : EIO));
                strv_release(&k->argv);
                goto predict;
        }
        if (c.timed_out) {
                k->why = xasprintf("nvcc did not finish in %d s", COMPILE_TIMEOUT);
                goto predict;
        }
        if (child_succeeded(&c)) {
                k->state = "passed";
                return;
        }
        {
                _cleanup_free_ char *all = xasprintf("%s\n%s", c.out.buf ? c.out.buf : "", c.err.buf ? c.err.buf : "");
                _cleanup_free_ char *ending = child_ending(&c);

                k->state = "failed";
                k->why = validate_compiler_errors(all, 6);
                if (!*k->why) {
                        free(k->why);
                        k->why = xasprintf(" nvcc ended with %s and said nothing", ending);
                }
                compile_failed(b, all);
        }
        return;
predict:
        strv_push(&b->r->notes, xasprintf("the CUDA compiler identification was not tried (%s): predicted from the "
                                          "versions only",
                                          k->why));
        compile_predicted(b);
}

/* --- the libraries ------------------------------------------------------------------ */

/* One find of rule f: its hints (the variable's value, hints_dir
 * appended, then the default hint) and paths (paths, else paths_else). */
static void rule_find(struct build *b, const struct component_torch_build *t, const struct component_torch_find *f,
                      enum cmake_find_kind kind, const char *const *names, const char *version,
                      struct cmake_find_hit *ret)
{
        const char *hint = f->hints ? getv(b, f->hints) : NULL;
        _cleanup_free_ char *sub = hint && f->hints_dir ? path_join(hint, f->hints_dir) : NULL;
        _cleanup_free_ char *def = t->default_hint ? rooted(b, t->default_hint) : NULL;
        _cleanup_free_ char *def_from = t->default_hint ? xasprintf("default %s", t->default_hint) : NULL;
        const char *paths = f->paths ? getv(b, f->paths) : NULL, *paths_from = f->paths;

        if (sub)
                hint = sub;
        if (!paths && f->paths_else && getv(b, f->paths_else)) {
                paths = getv(b, f->paths_else);
                paths_from = f->paths_else;
        }
        find_run(b,
                 &(struct cmake_find){ .kind = kind, .names = names, .suffixes = f->suffixes, .root_var = t->find_root,
                                       .hints = def && hint ? (const char *const[]){ hint, def, NULL }
                                                : def   ? (const char *const[]){ def, NULL }
                                                        : (const char *const[]){ hint, NULL },
                                       .hints_from = def && !hint ? def_from : f->hints,
                                       .hints_fallback = def && !hint,
                                       .paths = (const char *const[]){ paths, NULL }, .paths_from = paths_from },
                 version, ret);
}

/* A library's find module, as its rule in torch_build says (component.h):
 * FindCUDNN and the cuSPARSELt and cuDSS ones of its shape, FindNCCL,
 * FindMAGMA, NVSHMEM's. */
static void rule_run(struct build *b, size_t row)
{
        struct build_component *c = &b->r->c[row];
        const struct component_torch_build *t = &c->kind->torch_build;
        const char *const *lib_names = t->library.names;
        const char *hint = t->header.hints ? getv(b, t->header.hints) : NULL;
        _cleanup_free_ char *def = t->default_hint ? rooted(b, t->default_hint) : NULL;
        struct cmake_find_hit required = { 0 };

        if (t->static_switch && truthy(b, t->static_switch, false))
                lib_names = (const char *const[]){ t->static_name, NULL };
        if (t->append_root_dir)
                module_appends(b, t->append_root, t->append_root_dir);
        if (!t->library_first)
                rule_find(b, t, &t->header, CMAKE_FIND_PATH, t->header.names, NULL, &c->header);
        rule_find(b, t, &t->library, CMAKE_FIND_LIBRARY, lib_names,
                  t->version_variable ? getv(b, t->version_variable) : NULL, &c->library);
        if (t->required)
                rule_find(b, t, &t->library, CMAKE_FIND_LIBRARY, (const char *const[]){ t->required, NULL }, NULL,
                          &required);
        if (t->library_first)
                rule_find(b, t, &t->header, CMAKE_FIND_PATH, t->header.names, NULL, &c->header);
        /* Both hints share one label: the default's directory is not the
         * variable's. */
        for (struct cmake_find_hit *h = &c->library; def && h; h = h == &c->library ? &c->header : NULL)
                if (h->path && hint && !under_dir(h->path, hint) && under_dir(h->path, def)) {
                        free(h->from);
                        h->from = xasprintf("default %s", t->default_hint);
                        h->fallback = true;
                }
        if (t->required && c->library.path && !required.path)
                strv_push(&b->r->notes, xasprintf("%s: '%s' found, but no lib%s: PyTorch builds without %s",
                                                  c->label, c->library.path, t->required, c->label));
        if (t->required && !required.path)
                cmake_find_hit_release(&c->library);
        cmake_find_hit_release(&required);
}

/* Kineto: find_library(libcupti.so PATHS <root> <root>/extras/CUPTI/lib64
 * <root>/lib <root>/lib64 NO_DEFAULT_PATH), find_path(cupti.h PATHS
 * <root>/extras/CUPTI/include <root>/include <root> ... NO_DEFAULT_PATH). */
static void cupti_find(struct build *b)
{
        struct build_component *c = &b->r->c[BUILD_CUPTI];
        _cleanup_free_ char *l1 = path_join(b->root, "extras/CUPTI/lib64"), *l2 = path_join(b->root, "lib"),
                            *l3 = path_join(b->root, "lib64"), *h1 = path_join(b->root, "extras/CUPTI/include"),
                            *h2 = path_join(b->root, "include");

        find_run(b,
                 &(struct cmake_find){ .kind = CMAKE_FIND_LIBRARY, .names = (const char *const[]){ "libcupti.so", NULL },
                                 .paths = (const char *const[]){ b->root, l1, l2, l3, NULL },
                                 .paths_from = "CUDA_SOURCE_DIR (the toolkit)", .no_default = true },
                 NULL, &c->library);
        find_run(b,
                 &(struct cmake_find){ .kind = CMAKE_FIND_PATH, .names = (const char *const[]){ "cupti.h", NULL },
                                 .paths = (const char *const[]){ h1, h2, b->root, h2, NULL },
                                 .paths_from = "CUDA_SOURCE_DIR (the toolkit)", .no_default = true },
                 NULL, &c->header);
        c->state = c->library.path && c->header.path ? "found" : "not found";
        if (!c->library.path)
                strv_push(&b->r->notes, xasprintf("CUPTI: no libcupti.so under the toolkit '%s': Kineto is built "
                                                  "without CUPTI (no GPU traces in the profiler)",
                                                  b->root));
}

/* cmake/Dependencies.cmake (PyTorch 2.6, line 1121): with USE_CUDA,
 * find_package(CUB), and "Cannot find CUB." (FATAL_ERROR) when it finds
 * nothing. Its FindCUB.cmake is one find_path(CUB_INCLUDE_DIR HINTS
 * ${CUDA_TOOLKIT_INCLUDE} NAMES cub/cub.cuh) with the default search
 * (CUB_ROOT first: CMP0074 is NEW under cmake_minimum_required 3.18);
 * FindCUDA's CUDA_TOOLKIT_INCLUDE is the root's include/ on a native
 * build. CUDA 11 and 12 have include/cub; CUDA 13 moved CCCL (CUB, Thrust,
 * libcu++) to include/cccl, where nothing of that search looks. */
static void cub_check(struct build *b)
{
        _cleanup_free_ char *inc = path_join(b->root, "include");
        _cleanup_free_ char *cccl = path_join(inc, "cccl/cub/cub.cuh");
        const char *cuda = b->r->cuda_version ? b->r->cuda_version : "?";
        _cleanup_(cmake_find_hit_release) struct cmake_find_hit hit = { 0 };
        bool moved = access(cccl, F_OK) == 0;

        find_run(b,
                 &(struct cmake_find){ .kind = CMAKE_FIND_PATH, .names = (const char *const[]){ "cub/cub.cuh", NULL },
                                       .root_var = "CUB_ROOT", .hints = (const char *const[]){ inc, NULL },
                                       .hints_from = "CUDA_TOOLKIT_INCLUDE" },
                 NULL, &hit);
        if (hit.path)
                return;
        add_finding(b->r, BUILD_TOOLKIT, true, BUILD_NO_CUB,
                    moved ? xasprintf("PyTorch's FindCUB finds no cub/cub.cuh: the CUDA %s toolkit '%s' has CUB in "
                                      "include/cccl/cub, where FindCUB does not look (CUB_ROOT, CMAKE_PREFIX_PATH, "
                                      "the toolkit's include/ '%s' and the system's include directories)",
                                      cuda, b->root, inc)
                          : xasprintf("PyTorch's FindCUB finds no cub/cub.cuh: not in the CUDA %s toolkit '%s' "
                                      "(include/cub), nor through CUB_ROOT, CMAKE_PREFIX_PATH or the system's "
                                      "include directories",
                                      cuda, b->root),
                    moved ? ({
                            _cleanup_free_ char *load = suggest_module(b, component_toolkit(), 12);
                            xasprintf("build PyTorch 2.6 with a CUDA 12 toolkit (%s), or build a PyTorch that "
                                      "supports CUDA 13 (2.9 and later: since pytorch/pytorch#159854 it takes CUB "
                                      "from the toolkit without FindCUB); CUB_ROOT=%s/cccl gets the configure past this, but 2.6's CUDA "
                                      "code predates the CCCL 3 of CUDA 13 (pytorch/pytorch#153373)",
                                      load ? load : "load a cuda/12 module", inc);
                    })
                          : xstrdup("use a toolkit with its CUB headers (NVIDIA's cuda-cccl package; CUDA 11 and 12 "
                                    "have include/cub), or point CUB_ROOT at a CUB"),
                    "cmake stops: \"Cannot find CUB.\" (cmake/Dependencies.cmake: find_package(CUB), then "
                    "message(FATAL_ERROR))%s",
                    moved ? "; CUDA 13 moved CCCL's headers (CUB, Thrust, libcu++) to include/cccl" : "");
}

/* Whether the environment asks for the component: cuDNN always (PyTorch
 * builds with it by default, and a build without is rarely meant), else
 * its USE_* set on, its root variable set, or a module of it loaded. */
static bool wanted(const struct build *b, enum build_id id)
{
        const struct build_component *c = &b->r->c[id];
        const char *var = root_variable(b, id);

        if ((c->kind && c->kind->torch_build.always_wanted) || (c->option && getv(b, c->option)) ||
            (var && getv(b, var)))
                return true;
        for (size_t i = 0; i < b->r->loaded.len; i++)
                if (startswith(b->r->loaded.items[i], c->name) && b->r->loaded.items[i][strlen(c->name)] == '/')
                        return true;
        return false;
}

/* A directory on LD_LIBRARY_PATH holding kind's library with none of
 * its headers in the include/ beside it: a runtime-only install's module
 * (NVIDIA's CUDA 13 cuSPARSELt wheel), which the loader uses and a build
 * cannot. NULL when none (to be freed). */
static char *runtime_only_dir(const struct build *b, const struct component *kind)
{
        const struct component_torch_build *t = &kind->torch_build;
        _cleanup_free_ char *prefix = xasprintf("%s.so", t->library_stem);
        struct strv dirs = { 0 };
        char *ret = NULL;

        env_list(b, "LD_LIBRARY_PATH", &dirs);
        for (size_t i = 0; i < dirs.len && !ret; i++) {
                _cleanup_free_ char *up = path_dirname(dirs.items[i]);
                struct strv names = { 0 };
                bool lib = false, header = false;

                if (dir_list(AT_FDCWD, dirs.items[i], &names) < 0)
                        continue;
                for (size_t j = 0; j < names.len && !lib; j++)
                        lib = startswith(names.items[j], prefix);
                for (const char *const *h = t->header.names; lib && h && *h && !header; h++) {
                        _cleanup_free_ char *p = xasprintf("%s/include/%s", up, *h);

                        header = access(p, F_OK) == 0;
                }
                if (lib && !header)
                        ret = xstrdup(dirs.items[i]);
                strv_release(&names);
        }
        strv_release(&dirs);
        return ret;
}

/* What a library found says: versions, CUDA major, installs; the findings. */
static void library_check(struct build *b, enum build_id id)
{
        struct build_component *c = &b->r->c[id];
        const struct component *kind = c->kind;
        const struct component_torch_build *t = &kind->torch_build;
        const char *stem = t->library_stem;
        _cleanup_free_ char *hi = NULL, *li = NULL;
        _cleanup_strbuf_ struct strbuf extra = STRBUF_INIT;
        bool found = c->library.path && (c->header.path || t->header_optional);
        const char *cuda = b->r->cuda_version ? b->r->cuda_version : "?";

        c->version = c->header.path ? header_version_of(kind, c->header.path) : NULL;
        c->library_version = library_version_of(c->library.path, stem);
        c->cuda_major = library_cuda_major(kind, c->library.path);
        if (!found) {
                c->state = "not found";
                if (c->option) {
                        const char *missing = !c->library.path && !c->header.path ? "header and library"
                                              : !c->library.path                  ? "library"
                                                                                  : "header";
                        _cleanup_free_ char *runtime = !c->header.path ? runtime_only_dir(b, kind) : NULL;
                        _cleanup_free_ char *said =
                                runtime ? xasprintf("; '%s' on LD_LIBRARY_PATH has %s.so* but no %s beside it: a "
                                                    "runtime-only install, which a build cannot use (the header "
                                                    "comes with %s)",
                                                    runtime, t->library_stem, t->header.names[0],
                                                    t->header_from ? t->header_from : "its development package")
                                        : xstrdup("");

                        if (t->system)
                                add_finding(b->r, (int)id, true, BUILD_REQUIRED,
                                            xasprintf("%s is on, but no %s %s is found%s", b->system_from, c->label,
                                                      missing, said),
                                            component_fix(b, id),
                                            "cmake stops: find_package(%s REQUIRED) fails with \"Could NOT find "
                                            "%s (missing: ...)\"",
                                            c->label, c->label);
                        else if (wanted(b, id))
                                add_finding(b->r, (int)id, false, BUILD_OPTION_OFF,
                                            xasprintf("no %s %s is found: PyTorch turns %s off%s", c->label, missing,
                                                      c->option, said),
                                            component_fix(b, id),
                                            "%s", t->off_why ? t->off_why
                                                             : "cmake only says so in its output: the torch built lacks it");
                        else
                                strv_add(&b->unasked, c->option);
                }
                return;
        }
        c->state = "found";
        /* One finding per component: the worst, with the rest said. */
        if (c->header.fallback && c->library.fallback)
                strbuf_addf(&extra, " It is found only through the default places (%s; %s), not through anything "
                                    "the environment sets.",
                            c->header.from, c->library.from);
        if (b->r->cuda_major && c->cuda_major && c->cuda_major != b->r->cuda_major) {
                add_finding(b->r, (int)id, false, BUILD_CUDA_MAJOR,
                            xasprintf("the %s found ('%s', %s %s) is built for CUDA %lu, but the build uses CUDA %s.%s",
                                      c->label, c->library.path, c->label,
                                      c->version ? c->version : c->library_version ? c->library_version : "?",
                                      c->cuda_major, cuda, extra.buf),
                            component_fix(b, id),
                            "torch links it anyway: it loads the CUDA %lu libraries beside CUDA %lu's at run time "
                            "(crashes, or \"CUDNN_STATUS_...\"/\"undefined symbol\" errors), or the link fails",
                            c->cuda_major, b->r->cuda_major);
                return;
        }
        hi = install_of(c->header.path);
        li = install_of(c->library.path);
        if (c->header.path && hi && li && !streq(hi, li)) {
                bool versions_differ = c->version && c->library_version && !streq(c->version, c->library_version);

                if (t->mismatch_fatal && versions_differ)
                        add_finding(b->r, (int)id, true, BUILD_MIXED,
                                    xasprintf("the NCCL header '%s' (%s, from %s) and library '%s' (%s, from %s) are "
                                              "from different installs",
                                              c->header.path, c->version, c->header.from, c->library.path,
                                              c->library_version, c->library.from),
                                    xasprintf("point both at one install: set NCCL_ROOT (or NCCL_INCLUDE_DIR and "
                                              "NCCL_LIB_DIR) to the same NCCL, or unset USE_SYSTEM_NCCL to build "
                                              "the bundled one"),
                                    "cmake stops with \"Found NCCL header version and library version do not "
                                    "match!\"");
                else
                        add_finding(b->r, (int)id, false, BUILD_MIXED,
                                    xasprintf("the %s header '%s' (%s, from %s) and library '%s' (%s, from %s) are "
                                              "from different installs",
                                              c->label, c->header.path, c->version ? c->version : "?", c->header.from,
                                              c->library.path, c->library_version ? c->library_version : "?",
                                              c->library.from),
                                    xasprintf("set %s to the one install (it is searched first for both)",
                                              root_variable(b, id) ? root_variable(b, id) : "CMAKE_PREFIX_PATH"),
                                    "%s", versions_differ ? "the build compiles against one version and links "
                                                            "another: undefined symbols, or wrong results"
                                                          : "the build compiles against one install and links "
                                                            "another; they say the same version, but nothing "
                                                            "checks they match");
                return;
        }
        /* A library of the system's (Debian's MAGMA in /usr/lib) is what
         * the configure is right to take: said, not a problem. */
        if (extra.len) {
                _cleanup_free_ char *load = suggest_module(b, kind, b->r->cuda_major);

                strv_push(&b->r->notes,
                          xasprintf("%s %s ('%s') comes only from the default places (%s; %s): the configure "
                                    "takes it as it should, but nothing loaded names it%s%s",
                                    c->label, c->version ? c->version : c->library_version ? c->library_version : "?",
                                    c->library.path, c->header.from ? c->header.from : "-", c->library.from,
                                    load ? "; a module would: " : "", load ? load : ""));
        }
}

/* A library of the table: off when one of its USE_* is, bundled when it
 * is not the system's, else found by its rule and checked. */
static void library_run(struct build *b, size_t row)
{
        struct build_component *c = &b->r->c[row];
        const struct component_torch_build *t = &c->kind->torch_build;

        for (const char *const *e = t->enable; e < t->enable + ELEMENTSOF(t->enable) && *e; e++)
                if (!truthy(b, *e, true)) {
                        c->state = "off";
                        return;
                }
        /* CMakeLists.txt: if(USE_SYSTEM_LIBS) ... if(USE_NCCL)
         * set(USE_SYSTEM_NCCL ON): a normal variable, over the cache's
         * -DUSE_SYSTEM_NCCL=0 too. */
        if (t->system) {
                if (truthy(b, "USE_SYSTEM_LIBS", false))
                        b->system_from = "USE_SYSTEM_LIBS (which turns USE_SYSTEM_NCCL on)";
                else if (truthy(b, t->system, false))
                        b->system_from = t->system;
                else {
                        c->state = "bundled";
                        return;
                }
        }
        rule_run(b, row);
        library_check(b, row);
}

static void stubs_check(struct build *b)
{
        _cleanup_(strv_release) struct strv llp = { 0 };

        env_list(b, "LD_LIBRARY_PATH", &llp);
        for (size_t i = 0; i < llp.len; i++)
                if (path_has_component(llp.items[i], "stubs"))
                        add_finding(b->r, -1, false, DOCTOR_STUBS, xasprintf("'%s' is on LD_LIBRARY_PATH", llp.items[i]),
                                    xasprintf("remove '%s' from LD_LIBRARY_PATH (stubs belong on LIBRARY_PATH only)",
                                              llp.items[i]),
                                    "the build's test programs and torch itself load the stub libcuda.so: \"CUDA "
                                    "driver version is insufficient\" or no GPU found");
}

/* --- the run ------------------------------------------------------------------------- */

/* The rows' verdicts that no fatal finding set, from their states; the
 * toolkit's (USE_CUDA's) is fatal when its compiler's or host
 * compiler's is. */
static void verdicts(struct build_report *r)
{
        for (size_t i = 0; i < N_BUILD; i++) {
                struct build_component *c = &r->c[i];

                if (c->verdict)
                        continue;
                if (streq(c->state, "found"))
                        c->verdict = "on";
                else if (streq(c->state, "bundled"))
                        c->verdict = "bundled";
                else if (streq(c->state, "off") || streq(c->state, "not found"))
                        c->verdict = "off";
        }
        if ((r->c[BUILD_NVCC].verdict && streq(r->c[BUILD_NVCC].verdict, "fatal")) ||
            (r->c[BUILD_HOST].verdict && streq(r->c[BUILD_HOST].verdict, "fatal")))
                r->c[BUILD_TOOLKIT].verdict = "fatal";
}

/* --- torch.utils.cpp_extension ------------------------------------------------------- */

/* Python's os.path.join(a, b), b relative. */
static char *py_join(const char *a, const char *b)
{
        size_t n = strlen(a);

        return xasprintf("%s%s%s", a, n && a[n - 1] != '/' ? "/" : "", b);
}

/* Python's os.path.dirname: up to the last '/', its trailing slashes
 * dropped unless it is all slashes ("nvcc" -> "", "/nvcc" -> "/"). */
static char *py_dirname(const char *p)
{
        const char *slash = strrchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) + 1 : 0, all = strspn(p, "/");

        if (all < n)
                while (p[n - 1] == '/')
                        n--;
        return xstrndup(p, n);
}

/* shutil.which(name) (Python 3.11-3.13, POSIX): PATH, else
 * os.confstr("CS_PATH"); an empty PATH finds nothing; each entry joined
 * as it is (an empty one: the current directory, relative), the first
 * that exists, is executable and is not a directory. */
static char *py_which(const struct build *b, const char *name)
{
        const char *path = env_get(b->env, "PATH");
        char cs[256];

        if (!path) {
                size_t n = confstr(_CS_PATH, cs, sizeof(cs));

                path = n && n <= sizeof(cs) ? cs : "/bin:/usr/bin";
        }
        if (!*path)
                return NULL;
        for (const char *p = path;;) {
                const char *colon = strchrnul(p, ':');
                _cleanup_free_ char *dir = xstrndup(p, (size_t)(colon - p));
                char *full = py_join(dir, name);
                struct stat st;

                if (stat(full, &st) == 0 && access(full, X_OK) == 0 && !S_ISDIR(st.st_mode))
                        return full;
                free(full);
                if (!*colon)
                        return NULL;
                p = colon + 1;
        }
}

/* torch/utils/cpp_extension.py of PyTorch 2.6: _find_cuda_home(),
 * _write_ninja_file's nvcc (PYTORCH_NVCC, else _join_cuda_home('bin',
 * 'nvcc')), the `-ccbin $CC` of its CUDA flags (os.getenv("CC") is not
 * None: an empty CC too), get_cxx_compiler(). Unset and empty differ
 * there as they do here: env_get, not getv. */
static void cpp_extension_find(struct build *b)
{
        struct build_cpp_extension *x = &b->r->cpp_extension;
        const char *home = env_get(b->env, "CUDA_HOME"), *path = env_get(b->env, "CUDA_PATH");
        const char *nvcc = env_get(b->env, "PYTORCH_NVCC"), *cc = env_get(b->env, "CC"), *cxx = env_get(b->env, "CXX");

        if (home && *home) {
                x->cuda_home = xstrdup(home);
                x->from = "CUDA_HOME";
        } else if (path) {
                x->cuda_home = xstrdup(path);
                x->from = "CUDA_PATH";
        } else {
                _cleanup_free_ char *found = py_which(b, "nvcc");

                if (found) {
                        _cleanup_free_ char *bin = py_dirname(found);

                        x->cuda_home = py_dirname(bin);
                        x->from = "PATH";
                } else if (exists_rooted(b, "/usr/local/cuda")) {
                        x->cuda_home = rooted(b, "/usr/local/cuda");
                        x->from = "/usr/local/cuda";
                }
        }
        if (nvcc)
                x->nvcc = xstrdup(nvcc);
        else if (x->cuda_home) {
                _cleanup_free_ char *bin = py_join(x->cuda_home, "bin");

                x->nvcc = py_join(bin, "nvcc");
        }
        x->ccbin = cc ? xstrdup(cc) : NULL;
        x->cxx = xstrdup(cxx ? cxx : "c++");
}

/* A note where cpp_extension's CUDA_HOME is not the toolkit the
 * configure takes (FindCUDA's root): the same modules build an extension
 * against another CUDA than a source build. */
static void cpp_extension_note(struct build *b)
{
        const struct build_cpp_extension *x = &b->r->cpp_extension;
        const struct build_component *c = &b->r->c[BUILD_TOOLKIT];
        _cleanup_free_ char *same = NULL, *uses = NULL, *where = NULL;

        if (!x->cuda_home && !b->root)
                return;
        same = x->cuda_home && b->root ? same_toolkit(x->cuda_home, b->root) : NULL;
        if (same)
                return;
        uses = x->cuda_home ? xasprintf("CUDA_HOME=%s (from %s)", x->cuda_home, x->from)
                            : xstrdup("no CUDA_HOME (none in CUDA_HOME, CUDA_PATH, nvcc on PATH nor /usr/local/cuda)");
        where = b->root ? xasprintf("uses %s (from %s)", b->root, c->library.from ? c->library.from : "?")
                        : xstrdup("finds no toolkit");
        strv_push(&b->r->notes, xasprintf("torch.utils.cpp_extension would use %s where the configure %s", uses, where));
}

/* --- TORCH_CUDA_ARCH_LIST ------------------------------------------------------------ */

/* The lowest architecture each CUDA major's nvcc compiles for, where nvcc
 * does not say (`--list-gpu-arch`, CUDA 11.0 and later): NVIDIA's release
 * notes: CUDA 11.0 dropped sm_30 (Kepler's first), 12.0 sm_35 and sm_37,
 * 13.0 Maxwell, Pascal and Volta (sm_50 to sm_72). */
static const struct {
        unsigned long major;
        unsigned lowest; /* sm_XY as XY */
} arch_floor[] = {
        { 10, 30 }, { 11, 35 }, { 12, 50 }, { 13, 75 },
};

/* The names PyTorch's select_compute_arch.cmake takes besides numbers. */
static const char *const arch_names[] = {
        "Kepler+Tegra", "Kepler+Tesla", "Kepler", "Maxwell+Tegra", "Maxwell", "Pascal", "Volta", "Turing",
        "Ampere", "Ada", "Hopper", "All", "Common", "Auto", NULL,
};

/* "D+.D+": *ret the number (8.6 -> 86, 10.0 -> 100); the end, or NULL. */
static const char *arch_number(const char *s, unsigned *ret)
{
        unsigned major = 0, minor = 0;
        const char *p = s;

        if (*p < '0' || *p > '9')
                return NULL;
        for (; *p >= '0' && *p <= '9'; p++)
                if ((major = major * 10 + (unsigned)(*p - '0')) > 99)
                        return NULL;
        if (*p++ != '.' || *p < '0' || *p > '9')
                return NULL;
        for (; *p >= '0' && *p <= '9'; p++)
                if ((minor = minor * 10 + (unsigned)(*p - '0')) > 9)
                        return NULL;
        *ret = major * 10 + minor;
        return p;
}

/* An entry as PyTorch reads it: a name of arch_names, or
 * MAJOR.MINOR[a|f][(MAJOR.MINOR)][+PTX] ("9.0a", "8.6+PTX",
 * "3.5(3.0)"). *ret_sm: the real architecture's number (0 for a name).
 * False for anything else ("sm_90", "90", "9", "9.0b"). */
static bool arch_entry_parse(const char *e, unsigned *ret_sm)
{
        unsigned sm, virt;
        const char *p;

        *ret_sm = 0;
        for (size_t i = 0; arch_names[i]; i++)
                if (streq(e, arch_names[i]))
                        return true;
        p = arch_number(e, &sm);
        if (!p)
                return false;
        if (*p == 'a' || *p == 'f')
                p++;
        if (*p == '(') {
                p = arch_number(p + 1, &virt);
                if (!p || *p++ != ')')
                        return false;
        }
        if (streq(p, "+PTX"))
                p += 4;
        if (*p)
                return false;
        *ret_sm = sm;
        return true;
}

/* nvcc's name of an architecture ("sm_80", "compute_90a", "sm_100f") as
 * PyTorch writes it ("8.0", "9.0a", "10.0f"), or NULL. */
static char *arch_from_nvcc_name(const char *e)
{
        const char *p = startswith(e, "sm_") ? e + 3 : startswith(e, "compute_") ? e + 8 : NULL;
        size_t n = p ? strspn(p, "0123456789") : 0;

        if (n < 2 || n > 3 || p[0] == '0' || (p[n] && ((p[n] != 'a' && p[n] != 'f') || p[n + 1])))
                return NULL;
        return xasprintf("%.*s.%c%s", (int)(n - 1), p, p[n - 1], p + n);
}

/* The entries of a TORCH_CUDA_ARCH_LIST: blanks and ';' separate (the
 * configure's REGEX REPLACE "[ \t]+" ";", cpp_extension's
 * replace(' ', ';')); empty ones dropped. */
static void arch_split(const char *v, struct strv *ret)
{
        for (const char *p = v; *p;) {
                size_t n = strcspn(p, "; \t");

                if (n)
                        strv_push(ret, xstrndup(p, n));
                p += n;
                if (*p)
                        p++;
        }
}

/* A list usable in `export TORCH_CUDA_ARCH_LIST="..."`: every entry
 * parses (what the index or the config holds is data, and the fix is a
 * line an admin may paste). */
static bool arch_list_clean(const char *v)
{
        _cleanup_(strv_release) struct strv e = { 0 };
        unsigned sm;

        if (!v)
                return false;
        arch_split(v, &e);
        for (size_t i = 0; i < e.len; i++)
                if (!arch_entry_parse(e.items[i], &sm))
                        return false;
        return e.len > 0;
}

/* The architectures `nvcc --list-gpu-arch` names (compute_XY, the
 * numbers), into ret; none where nvcc does not say (before CUDA 11.0, a
 * stub). Its output is data: only "compute_" and digits are read. */
static void nvcc_arches(const struct build *b, const char *nvcc, struct strv *ret)
{
        _cleanup_free_ char *out = nvcc_says(b, nvcc, "--list-gpu-arch", NULL);

        for (const char *p = out; p && *p;) {
                size_t n = strcspn(p, "\r\n"), k = 0;

                if (n > 8 && strncmp(p, "compute_", 8) == 0) {
                        while (8 + k < n && p[8 + k] >= '0' && p[8 + k] <= '9')
                                k++;
                        if (k)
                                strv_push(ret, xstrndup(p + 8, k));
                }
                p += n;
                while (*p == '\r' || *p == '\n')
                        p++;
        }
}

/* A GPU this node shows, without running a program: the driver's
 * /proc/driver/nvidia/gpus/<bus id>, else /dev/nvidia0. */
static bool gpu_visible(const struct build *b)
{
        _cleanup_free_ char *gpus = rooted(b, "/proc/driver/nvidia/gpus");
        DIR *d = opendir(gpus);
        struct dirent *de;
        bool any = false;

        while (d && !any && (de = readdir(d)))
                any = !streq(de->d_name, ".") && !streq(de->d_name, "..");
        if (d)
                closedir(d);
        return any || exists_rooted(b, "/dev/nvidia0");
}

/* Unset on a node without a GPU: the fix is the architectures validate
 * found on the GPU nodes (the index of the modulepath's tree), else the
 * site config's list. */
static void arch_list_unset(struct build *b)
{
        _cleanup_free_ char *out = b->o->modulepath ? index_outdir_of(b->o->modulepath) : NULL;
        _cleanup_(json_decrefp) json_t *val = NULL;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        const char *recorded = NULL, *site = b->o->arch_list;
        char *fix;

        if (gpu_visible(b))
                return;
        if (out && read_index_validation(out, &val, &d) >= 0)
                recorded = json_string_value(json_object_get(val, "arch_list"));
        if (arch_list_clean(recorded))
                fix = xasprintf("export TORCH_CUDA_ARCH_LIST=\"%s\" (the GPUs `cudamod validate` found on the GPU "
                                "nodes, recorded in '%s')",
                                recorded, out);
        else if (arch_list_clean(site))
                fix = xasprintf("export TORCH_CUDA_ARCH_LIST=\"%s\" (the site config's pytorch.cuda_arch_list)",
                                site);
        else
                fix = xstrdup("export TORCH_CUDA_ARCH_LIST=\"...\" with the compute capabilities of the GPUs the "
                              "torch will run on (\"8.0;9.0\": A100 and H100); `cudamod validate` on a GPU node "
                              "records them in the tree's index, or set pytorch.cuda_arch_list in the site config");
        add_finding(b->r, -1, false, BUILD_ARCH_LIST_UNSET,
                    xstrdup("TORCH_CUDA_ARCH_LIST is unset and this node shows no GPU (no "
                            "/proc/driver/nvidia/gpus entry, no /dev/nvidia0)"),
                    fix,
                    "with no GPU to detect, PyTorch's configure builds for every architecture CUDA %s knows "
                    "(several times the compile time and the size of the libraries), or fails to detect one",
                    b->r->cuda_version ? b->r->cuda_version : "");
}

/* TORCH_CUDA_ARCH_LIST against PyTorch's syntax and the nvcc CMake
 * compiles CUDA with. */
static void arch_list_check(struct build *b)
{
        const struct build_component *nvcc = &b->r->c[BUILD_NVCC];
        const char *v = getv(b, "TORCH_CUDA_ARCH_LIST");
        _cleanup_(strv_release) struct strv entries = { 0 }, known = { 0 }, bad = { 0 }, dropped = { 0 },
                                            kept = { 0 }, renamed = { 0 };
        const char *cuda = nvcc->version ? nvcc->version : b->r->cuda_version;
        unsigned long major = nvcc->cuda_major ? nvcc->cuda_major : b->r->cuda_major;
        unsigned lowest = 0;

        if (!v) {
                arch_list_unset(b);
                return;
        }
        if (cuda && !major)
                major = strtoul(cuda, NULL, 10);
        if (nvcc->library.path)
                nvcc_arches(b, nvcc->library.path, &known);
        for (size_t i = 0; !known.len && i < ELEMENTSOF(arch_floor); i++)
                if (arch_floor[i].major == major)
                        lowest = arch_floor[i].lowest;
        arch_split(v, &entries);
        for (size_t i = 0; i < entries.len; i++) {
                const char *e = entries.items[i];
                _cleanup_free_ char *num = NULL, *as = NULL;
                unsigned sm;

                /* nvcc's names are bad, but the fixes keep them in
                 * PyTorch's spelling; anything else bad is left out. */
                if (!arch_entry_parse(e, &sm)) {
                        strv_add(&bad, e);
                        as = arch_from_nvcc_name(e);
                        if (!as || !arch_entry_parse(as, &sm))
                                continue;
                        strv_add(&renamed, as);
                        e = as;
                }
                num = xasprintf("%u", sm);
                if (sm && ((known.len && !strv_contains(&known, num)) || (!known.len && sm < lowest)))
                        strv_add(&dropped, e);
                else
                        strv_add(&kept, e);
        }
        if (bad.len) {
                _cleanup_free_ char *list = strv_join(&bad, "', '");

                _cleanup_free_ char *rest = strv_join(&kept, ";"), *names = strv_join(&renamed, ", ");

                add_finding(b->r, -1, true, BUILD_ARCH_LIST,
                            xasprintf("TORCH_CUDA_ARCH_LIST='%s': '%s' %s PyTorch reads", v, list,
                                      bad.len == 1 ? "is not an architecture" : "are not architectures"),
                            renamed.len == bad.len && kept.len
                                    ? xasprintf("export TORCH_CUDA_ARCH_LIST=\"%s\" (PyTorch writes nvcc's sm_XY as "
                                                "X.Y: %s)",
                                                rest, names)
                                    : xstrdup("write each entry as MAJOR.MINOR, ';'-separated: \"8.0;9.0\" (sm_90 is "
                                              "nvcc's name for 9.0), with an 'a' or 'f' for the architecture-specific "
                                              "features (\"9.0a\") and +PTX for PTX that later GPUs can compile "
                                              "(\"9.0+PTX\")"),
                            "the configure stops: \"Unknown CUDA Architecture Name %s in "
                            "CUDA_SELECT_NVCC_ARCH_FLAGS\"",
                            bad.items[0]);
        }
        if (dropped.len) {
                _cleanup_free_ char *list = strv_join(&dropped, "', '"), *rest = strv_join(&kept, ";");
                _cleanup_free_ char *reason = known.len ? xstrdup("not in its --list-gpu-arch")
                                                        : xasprintf("CUDA %lu compiles for %u.%u and later", major,
                                                                    lowest / 10, lowest % 10);

                add_finding(b->r, -1, true, BUILD_ARCH_LIST,
                            xasprintf("TORCH_CUDA_ARCH_LIST='%s': CUDA %s's nvcc does not compile for '%s' (%s)", v,
                                      cuda ? cuda : "?", list,
                                      reason),
                            kept.len ? xasprintf("export TORCH_CUDA_ARCH_LIST=\"%s\", or build with a CUDA that "
                                                 "still compiles for '%s'",
                                                 rest, list)
                                     : xasprintf("use a CUDA that still compiles for '%s' (its GPUs), or list "
                                                 "newer GPUs' architectures",
                                                 list),
                            "the build stops at its first CUDA file: \"nvcc fatal : Unsupported gpu architecture\"");
        }
}

size_t build_row(const struct component *c)
{
        assert(c->torch_build.order > 0 && c->torch_build.order <= TORCH_BUILD_LIBRARIES);
        return BUILD_LIBRARIES + c->torch_build.order - 1;
}

/* The rows that are not a library of the component table's: the toolkit
 * as FindCUDA, CMake's CUDA compiler and FindCUDAToolkit find it (the
 * toolkit's, with names of their own), the host compiler and CUPTI. The
 * libraries take name, label and option from their component. */
static const struct {
        const char *name, *label, *option;
        bool toolkit;
} table[N_BUILD] = {
        [BUILD_TOOLKIT] = { "toolkit", "CUDA toolkit", "USE_CUDA", true },
        [BUILD_NVCC] = { "nvcc", "nvcc", NULL, true },
        [BUILD_HOST] = { "host-compiler", "host compiler", NULL, false },
        [BUILD_CUDART] = { "cudart", "cudart", NULL, true },
        [BUILD_CUPTI] = { "cupti", "CUPTI", NULL, false },
};

int doctor_build_run(const struct doctor_options *o, struct build_report *ret, struct diag *d)
{
        extern char **environ;
        struct build b = { .o = o, .env = o->environ ? o->environ : environ, .r = ret,
                           .sysroot = o->sysroot && *o->sysroot ? o->sysroot : "/" };
        struct utsname u;

        (void)d;
        *ret = (struct build_report){ 0 };
        for (size_t i = 0; i < N_BUILD; i++)
                ret->c[i] = (struct build_component){ .name = table[i].name, .label = table[i].label,
                                                      .option = table[i].option,
                                                      .kind = table[i].toolkit ? component_toolkit() : NULL,
                                                      .state = "not searched" };
        FOREACH_COMPONENT(kind)
                if (kind->torch_build.order)
                        ret->c[build_row(kind)] = (struct build_component){
                                .name = kind->name, .label = kind->label, .option = kind->torch_build.option,
                                .kind = kind, .state = "not searched" };
        modulepath_split(env_get(b.env, "LOADEDMODULES"), &ret->loaded);
        b.lib64 = !exists_rooted(&b, "/etc/debian_version") && !exists_rooted(&b, "/etc/arch-release");
        if (uname(&u) == 0) {
                _cleanup_free_ char *a = xasprintf("/usr/lib/%s-linux-gnu", streq(u.machine, "ppc64le") ? "powerpc64le" : u.machine);

                if (!b.lib64 && exists_rooted(&b, a))
                        b.arch = xasprintf("%s-linux-gnu", streq(u.machine, "ppc64le") ? "powerpc64le" : u.machine);
        }
        ret->compile.state = "not run";
        ret->glibc = glibc_version(&b);
        stubs_check(&b);
        cpp_extension_find(&b);
        if (!truthy(&b, "USE_CUDA", true)) {
                ret->c[BUILD_TOOLKIT].state = "off";
                strv_push(&ret->notes, xstrdup("USE_CUDA is off: a CPU-only build, nothing of CUDA is searched"));
                goto done;
        }
        toolkit_find(&b);
        nvcc_find(&b);
        if (!b.root) {
                add_finding(ret, BUILD_TOOLKIT, false, BUILD_NO_TOOLKIT,
                            xstrdup("no CUDA toolkit is found: no nvcc in CUDA_PATH, CUDA_BIN_PATH, CUDA_HOME, on "
                                    "PATH, in /usr/local/cuda nor /opt/cuda"),
                            ({
                                    _cleanup_free_ char *load = suggest_module(&b, component_toolkit(), 0);
                                    load ? xasprintf("%s (or put a toolkit's bin on PATH)", load)
                                         : xstrdup("load a cuda module or put a toolkit's bin on PATH (or set "
                                                   "USE_CUDA=0 for a CPU-only build)");
                            }),
                            "PyTorch builds without CUDA (a CPU-only torch) and says so only in the configure "
                            "summary");
                goto done;
        }
        nvcc_check(&b);
        host_find(&b);
        if (strcmp(ret->c[BUILD_NVCC].verdict ? ret->c[BUILD_NVCC].verdict : "", "fatal") != 0)
                compile_check(&b);
        arch_list_check(&b);
        cudart_find(&b);
        if (ret->c[BUILD_CUDART].cuda_major && ret->cuda_major && ret->c[BUILD_CUDART].cuda_major != ret->cuda_major)
                add_finding(ret, BUILD_CUDART, false, BUILD_CUDA_MAJOR,
                            xasprintf("the libcudart CMake finds ('%s', from %s) is CUDA %lu's, but the toolkit is "
                                      "CUDA %s",
                                      ret->c[BUILD_CUDART].library.path, ret->c[BUILD_CUDART].library.from,
                                      ret->c[BUILD_CUDART].cuda_major, ret->cuda_version),
                            xstrdup("take the other toolkit off CMAKE_PREFIX_PATH (unload its module)"),
                            "torch is compiled with one CUDA and linked with another's runtime");
        for (size_t row = BUILD_LIBRARIES; row < BUILD_CUPTI; row++) {
                library_run(&b, row);
                /* Dependencies.cmake: NCCL, then CUB, then MAGMA. */
                if (row == build_row(&component_nccl))
                        cub_check(&b);
        }
        if (truthy(&b, "USE_KINETO", true))
                cupti_find(&b);
        else
                ret->c[BUILD_CUPTI].state = "off";
        if (b.unasked.len) {
                _cleanup_free_ char *list = strv_join(&b.unasked, ", "), *zeros = strv_join(&b.unasked, "=0 ");

                strv_push(&ret->notes, xasprintf("nothing asks for them and none is found, so PyTorch turns %s off "
                                                 "(set %s=0 to say so, or load their modules)",
                                                 list, zeros));
        }
done:
        if (truthy(&b, "USE_CUDA", true))
                cpp_extension_note(&b);
        verdicts(ret);
        strv_release(&b.unasked);
        for (size_t i = 0; i < b.n_units; i++)
                module_unit_release(&b.units[i]);
        free(b.units);
        for (size_t i = 0; i < b.n_app; i++) {
                free(b.app[i].prefix);
                free(b.app[i].from);
        }
        free(b.app);
        free(b.arch);
        free(b.root);
        free(b.top);
        return 0;
}

void build_report_release(struct build_report *r)
{
        for (size_t i = 0; i < N_BUILD; i++) {
                struct build_component *c = &r->c[i];

                free(c->prefix);
                cmake_find_hit_release(&c->header);
                cmake_find_hit_release(&c->library);
                free(c->version);
                free(c->library_version);
        }
        for (size_t i = 0; i < r->n_findings; i++) {
                free(r->findings[i].what);
                free(r->findings[i].why);
                free(r->findings[i].fix);
        }
        free(r->findings);
        free(r->cpp_extension.cuda_home);
        free(r->cpp_extension.nvcc);
        free(r->cpp_extension.ccbin);
        free(r->cpp_extension.cxx);
        free(r->compile.why);
        strv_release(&r->compile.argv);
        free(r->glibc);
        free(r->cuda_version);
        strv_release(&r->loaded);
        strv_release(&r->notes);
        *r = (struct build_report){ 0 };
}
