/* validate.c: what the checks share, the module under test made from a
 * load, and the syntax and paths checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "component-table.h"
#include "detect.h"
#include "evaluate-env.h"
#include "evaluate-modulepath.h"
#include "evaluate.h"
#include "plan.h"
#include "scan.h"
#include "util-path.h"
#include "validate.h"
#include "banned.h"

const char *validate_refused_variable(char *const *env, char *const *start)
{
        static const char *const refused[] = {
                "LD_PRELOAD", "LD_AUDIT", "GCONV_PATH", "LD_DEBUG_OUTPUT", "LD_PROFILE",
                "LD_PROFILE_OUTPUT", "COMPILER_PATH", "GCC_EXEC_PREFIX",
        };

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                const char *now = env_get(env, refused[i]), *was = env_get(start, refused[i]);

                if (now && (!was || !streq(now, was)))
                        return refused[i];
        }
        return NULL;
}

/* Whether CUDACXX in env is the toolkit's own nvcc under the CUDA_HOME
 * the load sets, as cudamod writes it (bin/nvcc, or cuda_nvcc/bin/nvcc in
 * a wheel layout): a plain path below it, named nvcc. */
static bool cudacxx_is_the_toolkits(char *const *env)
{
        const char *cxx = env_get(env, "CUDACXX"), *home = env_get(env, "CUDA_HOME");
        size_t n = home ? strlen(home) : 0;

        while (n > 1 && home[n - 1] == '/')
                n--;
        if (!cxx || !home || home[0] != '/' || n < 2 || strncmp(cxx, home, n) != 0 || cxx[n] != '/')
                return false;
        return streq(path_basename(cxx), "nvcc") && !strstr(cxx + n, "/../") && !strstr(cxx + n, "/./") &&
               !strstr(cxx + n, "//");
}

/* Whether an nvcc flags value passes options on to the host compiler or
 * the linker, which can name programs (-B, -wrapper, -fplugin). */
static bool nvcc_flags_forward(const char *v)
{
        static const char *const words[] = { "-Xcompiler", "--compiler-options", "-Xlinker", "--linker-options",
                                             "-Xnvlink", "--nvlink-options", NULL };

        for (size_t i = 0; words[i]; i++)
                for (const char *p = strstr(v, words[i]); p; p = strstr(p + 1, words[i]))
                        if (p == v || p[-1] == ' ' || p[-1] == '\t')
                                return true;
        return false;
}

char *validate_refused_toolchain_variable(char *const *env)
{
        static const char *const refused[] = {
                "CC", "CXX", "CMAKE_MAKE_PROGRAM", "CMAKE_TOOLCHAIN_FILE", "CMAKE_PROJECT_INCLUDE",
                "CMAKE_PROJECT_INCLUDE_BEFORE", "CMAKE_PROJECT_TOP_LEVEL_INCLUDES", "CMAKE_GENERATOR",
                "CMAKE_CROSSCOMPILING_EMULATOR", "CMAKE_PROGRAM_PATH",
        };

        for (char *const *e = env; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                _cleanup_free_ char *name = eq ? xstrndup(*e, (size_t)(eq - *e)) : NULL;

                if (!name)
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                        if (streq(name, refused[i]))
                                return TAKE_PTR(name);
                if (endswith(name, "_COMPILER_LAUNCHER") || endswith(name, "_LINKER_LAUNCHER") ||
                    (startswith(name, "CMAKE_") && endswith(name, "_COMPILER")))
                        return TAKE_PTR(name);
                if (streq(name, "CUDACXX") && !cudacxx_is_the_toolkits(env))
                        return TAKE_PTR(name);
                if ((streq(name, "NVCC_PREPEND_FLAGS") || streq(name, "NVCC_APPEND_FLAGS")) &&
                    nvcc_flags_forward(eq + 1))
                        return TAKE_PTR(name);
        }
        return NULL;
}

/* Whether dir holds a file named prefix followed by a digit ("libcudart.so."
 * then "12"). */
static bool dir_has_versioned(const char *dir, const char *prefix)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        bool found = false;
        size_t n = strlen(prefix);

        if (!d)
                return false;
        while (!found && (de = readdir(d)))
                found = strncmp(de->d_name, prefix, n) == 0 && ascii_isdigit(de->d_name[n]);
        closedir(d);
        return found;
}

/* c, when its library is in one of the directories; else NULL. */
static const struct component *module_kind_detect_named(const struct component *c, const struct strv *libdirs)
{
        _cleanup_free_ char *prefix = xasprintf("%s.so.", c->library);

        for (size_t i = 0; i < libdirs->len; i++) {
                _cleanup_free_ char *bare = NULL;
                struct stat st;

                if (c->unversioned_soname) {
                        bare = xasprintf("%s/%s.so", libdirs->items[i], c->library);
                        if (stat(bare, &st) == 0 && S_ISREG(st.st_mode))
                                return c;
                } else if (dir_has_versioned(libdirs->items[i], prefix))
                        return c;
        }
        return NULL;
}

const struct component *module_kind_detect(const char *name, const struct strv *own_libdirs)
{
        const char *base = name ? path_basename(name) : "";

        /* The component the name says, when its library is there; else the
         * first in table order whose library is. */
        for (int pass = 0; pass < 2; pass++)
                FOREACH_COMPONENT(c) {
                        if (pass == 0 && !ascii_strcaseeq(base, c->name))
                                continue;
                        if (module_kind_detect_named(c, own_libdirs))
                                return c;
                }
        return NULL;
}

/* Whether the module's own library directories are a runtime-only
 * install's, as scan tells one (install kind runtime: the library with no
 * header of its own, a wheel's RECORD deciding whose a shared folder's
 * files are): each directory holding the kind's library, scanned from its
 * parent, the install's prefix where cudamod wrote the module. Only for a
 * module that adds no include directory: one that does is for building. */
static bool module_runtime_only(const struct validate_module *m)
{
        bool any = false, all = true;

        if (!m->kind || m->system || m->own_incdirs.len)
                return false;
        for (size_t i = 0; i < m->own_libdirs.len && all; i++) {
                const char *dir = m->own_libdirs.items[i];
                _cleanup_free_ char *parent = path_dirname(dir), *real = realpath(dir, NULL);
                _cleanup_(scan_result_release) struct scan_result r = { 0 };
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_(strv_release) struct strv one = { 0 };
                bool runtime = false;

                strv_add(&one, dir);
                if (!real || !module_kind_detect_named(m->kind, &one))
                        continue;
                any = true;
                if (scan_run(&(struct scan_options){ .roots = (const char *const[]){ parent }, .n_roots = 1,
                                                     .max_depth = 4 },
                             &r, &d) < 0) {
                        all = false;
                        continue;
                }
                for (size_t k = 0; k < r.installs.len && !runtime; k++) {
                        const struct install *in = r.installs.items[k];
                        _cleanup_free_ char *lib = in->lib_dir ? realpath(in->lib_dir, NULL) : NULL;

                        runtime = in->component == m->kind && in->kind == INSTALL_RUNTIME && lib &&
                                  streq(lib, real);
                }
                all = runtime;
        }
        return any && all;
}

void validate_module_init(struct validate_module *ret, const char *module, const struct evaluation *e,
                          struct strv *ret_env)
{
        const struct modulefile *f = &e->modules[e->n_modules - 1].file;

        for (size_t i = 0; i < e->env.len; i++) {
                const char *eq = strchr(e->env.items[i], '=');
                _cleanup_free_ char *name = xstrndup(e->env.items[i], (size_t)(eq - e->env.items[i]));

                if (!env_is_bookkeeping(name) && !streq(name, "MODULEPATH"))
                        strv_add(ret_env, e->env.items[i]);
        }
        *ret = (struct validate_module){
                .module = module,
                .name = f->name,
                .version = f->version,
                .file = f->path,
                .env = ret_env->items,
        };
        evaluation_own_entries(e, "LD_LIBRARY_PATH", &ret->own_libdirs);
        evaluation_own_entries(e, "CPATH", &ret->own_incdirs);
        modulepath_split(env_get(ret_env->items, "LD_LIBRARY_PATH"), &ret->ld_library_path);
        ret->kind = module_kind_detect(f->name, &ret->own_libdirs);
        if (!ret->kind) {
                _cleanup_(strv_release) struct strv set = { 0 };
                struct env had;

                env_init(&had, e->env_before_last.items);
                for (size_t i = 0; i < e->env.len; i++) {
                        const char *item = e->env.items[i], *eq = strchr(item, '=');
                        _cleanup_free_ char *name = xstrndup(item, (size_t)(eq - item));
                        const char *old = env_lookup(&had, name);

                        if (!old || !streq(old, eq + 1))
                                strv_add(&set, item);
                }
                env_release(&had);
                validate_module_use_system_dirs(ret, &set, "");
        }
        ret->runtime = module_runtime_only(ret);
}

/* Whether a variable the module set names a system install's prefix:
 * a *_HOME-like name whose value is /usr or under /usr/lib (Debian's
 * /usr/lib/nvidia-cuda-toolkit) or /usr/include. */
static bool names_system_prefix(const char *entry)
{
        static const char *const suffixes[] = { "_HOME", "_ROOT", "_PATH", "_DIR", "_PREFIX" };
        const char *eq = strchr(entry, '='), *v = eq ? eq + 1 : NULL;
        bool named = false;

        if (!v)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(suffixes) && !named; i++) {
                size_t n = strlen(suffixes[i]);

                named = (size_t)(eq - entry) > n && strncmp(eq - n, suffixes[i], n) == 0;
        }
        return named && (streq(v, "/usr") || startswith(v, "/usr/lib/") || streq(v, "/usr/include"));
}

/* Add root+dir to v when it is a directory whose real path v does not hold
 * yet (/lib is a link to usr/lib on a merged /usr). */
static void add_real_dir(struct strv *v, struct strv *real, const char *root, const char *dir)
{
        _cleanup_free_ char *path = xasprintf("%s%s", root, dir);
        _cleanup_free_ char *canon = realpath(path, NULL);

        if (!canon || !is_dir_at(AT_FDCWD, canon) || strv_contains(real, canon))
                return;
        strv_add(real, canon);
        strv_add(v, path);
}

void validate_module_use_system_dirs(struct validate_module *m, const struct strv *set, const char *root)
{
        static const char *const triples[] = { "x86_64-linux-gnu", "aarch64-linux-gnu", "powerpc64le-linux-gnu" };
        static const char *const plain[] = { "/usr/lib64", "/lib64", "/usr/lib" };
        /* By name, ignoring case: EasyBuild names (naming: easybuild) are CUDA, cuDNN. */
        const struct component *named = m->name ? component_from_name_nocase(path_basename(m->name)) : NULL;
        _cleanup_(strv_release) struct strv real_lib = { 0 }, real_inc = { 0 };
        bool system = false;

        if (m->own_libdirs.len || !named)
                return;
        for (size_t i = 0; i < set->len && !system; i++)
                system = names_system_prefix(set->items[i]);
        if (!system)
                return;
        for (size_t i = 0; i < ELEMENTSOF(triples); i++) {
                _cleanup_free_ char *usr = xasprintf("/usr/lib/%s", triples[i]), *lib = xasprintf("/lib/%s", triples[i]),
                                    *inc = xasprintf("/usr/include/%s", triples[i]);

                add_real_dir(&m->own_libdirs, &real_lib, root, usr);
                add_real_dir(&m->own_libdirs, &real_lib, root, lib);
                add_real_dir(&m->own_incdirs, &real_inc, root, inc);
        }
        for (size_t i = 0; i < ELEMENTSOF(plain); i++)
                add_real_dir(&m->own_libdirs, &real_lib, root, plain[i]);
        for (size_t i = 0; i < m->own_incdirs.len; i++)
                strv_add(&real_inc, m->own_incdirs.items[i]);
        add_real_dir(&m->own_incdirs, &real_inc, root, "/usr/include");
        m->system = true;
        m->kind = module_kind_detect_named(named, &m->own_libdirs);
}

void validate_module_release(struct validate_module *m)
{
        strv_release(&m->own_libdirs);
        strv_release(&m->own_incdirs);
        strv_release(&m->ld_library_path);
}

int validate_refuse_load(const struct evaluation *e, char *const *start, struct diag *d)
{
        const char *refused = validate_refused_variable(e->env.items, start);

        if (!refused)
                return 0;
        return diag_set(d, -EPERM, e->modules[e->n_modules - 1].file.path, 0, 0,
                        "refused: the load sets %s, which would make the programs validate "
                        "starts (the compiler, the probe) load or write what the module chooses",
                        refused);
}

/* --- syntax ------------------------------------------------------------ */

void check_syntax(const struct evaluation *e, const struct diag *load_error, struct check *ret)
{
        ret->id = "syntax";
        if (load_error) {
                _cleanup_free_ char *msg = diag_format(load_error);

                check_set(ret, CHECK_FAIL, "%s", msg);
                return;
        }
        check_set(ret, CHECK_PASS, "%s", e->modules[e->n_modules - 1].file.lua
                                                 ? "parses and loads (Lua, Lmod's functions)"
                                                 : "loads in a Tcl safe interpreter");
}

/* --- paths ------------------------------------------------------------- */

static bool is_path_list(const char *name, const char *value)
{
        static const char *const lists[] = {
                "PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
                "CPLUS_INCLUDE_PATH", "CMAKE_PREFIX_PATH", "PKG_CONFIG_PATH", "MANPATH",
                "PYTHONPATH", "MODULEPATH",
        };

        for (size_t i = 0; i < ELEMENTSOF(lists); i++)
                if (streq(name, lists[i]))
                        return true;
        return strchr(value, ':') != NULL;
}

/* One directory the module adds to name; in_front: ahead of every entry
 * the variable had. Returns the worst status found. */
static enum check_status check_added_dir(const char *name, const char *p, bool in_front,
                                         struct strbuf *bad)
{
        if (p[0] == '/' && !is_dir_at(AT_FDCWD, p)) {
                strbuf_addf(bad, "\n%s: %s does not exist", name, p);
                return CHECK_FAIL;
        }
        if (streq(name, "LD_LIBRARY_PATH") && path_has_component(p, "stubs")) {
                strbuf_addf(bad, "\nLD_LIBRARY_PATH: %s is a stubs directory: programs would load "
                                 "the stub libcuda.so.1 instead of the driver's and fail with 'CUDA "
                                 "driver version is insufficient'; stubs belong on LIBRARY_PATH only",
                            p);
                return CHECK_FAIL;
        }
        if (in_front && path_is_system_dir(p)) {
                strbuf_addf(bad, "\n%s: the system directory %s is put in front, ahead of what "
                                 "other modules add",
                            name, p);
                return CHECK_FAIL;
        }
        return CHECK_PASS;
}

void check_paths(const struct evaluation *e, struct check *ret)
{
        _cleanup_strbuf_ struct strbuf bad = STRBUF_INIT;
        enum check_status worst = CHECK_PASS;
        size_t n_dirs = 0;
        struct env before; /* indexed: a module may set 10,000 variables */

        ret->id = "paths";
        env_init(&before, e->env_before_last.items);
        for (size_t i = 0; i < e->env.len; i++) {
                const char *item = e->env.items[i], *eq = strchr(item, '='), *value = eq + 1, *old;
                _cleanup_free_ char *name = xstrndup(item, (size_t)(eq - item));
                _cleanup_(strv_release) struct strv now = { 0 }, had = { 0 };
                bool in_front = true;

                old = env_lookup(&before, name);
                if (env_is_bookkeeping(name) || streq(name, "MODULEPATH") || (old && streq(old, value)))
                        continue;
                if (!is_path_list(name, value)) {
                        if (value[0] == '/' && (endswith(name, "_HOME") || endswith(name, "_ROOT") ||
                                                endswith(name, "_PATH") || endswith(name, "_DIR"))) {
                                n_dirs++;
                                if (!is_dir_at(AT_FDCWD, value)) {
                                        strbuf_addf(&bad, "\n%s=%s does not exist", name, value);
                                        worst = CHECK_FAIL;
                                }
                        }
                        continue;
                }
                modulepath_split(value, &now);
                modulepath_split(old, &had);
                for (size_t k = 0; k < now.len; k++) {
                        if (strv_contains(&had, now.items[k])) {
                                in_front = false;
                                continue;
                        }
                        n_dirs++;
                        if (check_added_dir(name, now.items[k], in_front, &bad) == CHECK_FAIL)
                                worst = CHECK_FAIL;
                }
        }
        env_release(&before);
        if (worst == CHECK_PASS)
                check_set(ret, CHECK_PASS, "%zu directories added, all present", n_dirs);
        else
                check_set(ret, worst, "%s\nregenerate the module (cudamod generate) or fix its "
                                      "paths by hand", bad.buf + 1);
}

/* --- scratch directories and compiler messages (build, nvcc, cmake) ----- */

/* The line [p, e) with blanks trimmed, newly allocated. */
static char *trimmed(const char *p, const char *e)
{
        while (p < e && (*p == ' ' || *p == '\t'))
                p++;
        while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
                e--;
        return xstrndup(p, (size_t)(e - p));
}


static int scratch_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if (flag == FTW_DP)
                (void)rmdir(path);
        else
                (void)unlink(path);
        return 0;
}

void validate_scratch_removep(char **dir)
{
        if (*dir) {
                (void)nftw(*dir, scratch_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
                free(*dir);
        }
}

char *validate_scratch_new(const char *what, struct check *ret)
{
        const char *tmp = getenv("TMPDIR");
        char *dir = xasprintf("%s/cudamod-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", what);

        if (!mkdtemp(dir)) {
                check_set(ret, CHECK_FAIL, "cannot create a temporary directory like '%s': %s", dir, strerror(errno));
                free(dir);
                return NULL;
        }
        return dir;
}

int validate_scratch_write(const char *dir, const char *name, const char *content, struct check *ret)
{
        _cleanup_free_ char *path = path_join(dir, name);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        size_t len = strlen(content), done = 0;

        while (fd >= 0 && done < len) {
                ssize_t n = write(fd, content + done, len - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        break;
                done += (size_t)n;
        }
        if (fd < 0 || done < len) {
                check_set(ret, CHECK_FAIL, "cannot write '%s': %s", path, strerror(errno));
                return -EIO;
        }
        return 0;
}

char *validate_compiler_errors(const char *text, unsigned max)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *clean = utf8_sanitize(text);
        unsigned n = 0;

        for (int pass = 0; pass < 2 && n == 0; pass++)
                for (const char *p = clean; *p && n < max;) {
                        const char *e = strchrnul(p, '\n');
                        _cleanup_free_ char *line = trimmed(p, e);

                        /* gcc echoes the source line after its message
                         * ("  132 | #error ..."): not a message. */
                        bool echo = ascii_isdigit(line[0]) && strstr(line, " | ") &&
                                    strspn(line, "0123456789") == (size_t)(strstr(line, " | ") - line);

                        if (*line && !echo && (pass == 1 || strstr(line, "error") || strstr(line, "Error") ||
                                                 strstr(line, "cannot find"))) {
                                strbuf_addf(&sb, "\n  %s", line);
                                n++;
                        }
                        p = *e ? e + 1 : e;
                }
        return strbuf_detach(&sb);
}
