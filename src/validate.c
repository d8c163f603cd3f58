/* validate.c: what the checks share, the module under test made from a
 * load, and the syntax and paths checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "detect.h"
#include "evaluate.h"
#include "plan.h"
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

static const char *const check_status_names[_CHECK_STATUS_MAX] = {
        [CHECK_PASS] = "pass",
        [CHECK_WARN] = "warn",
        [CHECK_FAIL] = "fail",
        [CHECK_SKIP] = "skip",
};

void findings_add(struct findings *f, enum check_status s, const char *fmt, ...)
{
        struct strbuf *sb = s == CHECK_PASS ? &f->facts : &f->problems;
        va_list ap;

        if (s > f->worst && s != CHECK_SKIP)
                f->worst = s;
        if (sb->len)
                strbuf_addstr(sb, s == CHECK_PASS ? "; " : "\n");
        va_start(ap, fmt);
        strbuf_vaddf(sb, fmt, ap);
        va_end(ap);
}

void findings_release(struct findings *f)
{
        strbuf_release(&f->facts);
        strbuf_release(&f->problems);
}

const char *check_status_to_string(enum check_status s)
{
        return s < _CHECK_STATUS_MAX ? check_status_names[s] : NULL;
}

void check_release(struct check *c)
{
        free(c->message);
        c->message = NULL;
}

enum check_status check_set(struct check *c, enum check_status s, const char *fmt, ...)
{
        va_list ap;
        char *m;

        va_start(ap, fmt);
        if (vasprintf(&m, fmt, ap) < 0)
                die_oom();
        va_end(ap);
        free(c->message);
        c->message = m;
        c->status = s;
        return s;
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

const struct component *module_kind_detect(const char *name, const struct strv *own_libdirs)
{
        const char *base = name ? path_basename(name) : "";

        /* The component the name says, when its library is there; else the
         * first in table order whose library is. */
        for (int pass = 0; pass < 2; pass++)
                FOREACH_COMPONENT(c) {
                        _cleanup_free_ char *prefix = xasprintf("%s.so.", c->library);

                        if (pass == 0 && !ascii_strcaseeq(base, c->name))
                                continue;
                        for (size_t i = 0; i < own_libdirs->len; i++) {
                                _cleanup_free_ char *bare = NULL;
                                struct stat st;

                                if (c->unversioned_soname) {
                                        bare = xasprintf("%s/%s.so", own_libdirs->items[i], c->library);
                                        if (stat(bare, &st) == 0 && S_ISREG(st.st_mode))
                                                return c;
                                } else if (dir_has_versioned(own_libdirs->items[i], prefix))
                                        return c;
                        }
                }
        return NULL;
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

        ret->id = "paths";
        for (size_t i = 0; i < e->env.len; i++) {
                const char *item = e->env.items[i], *eq = strchr(item, '='), *value = eq + 1, *old;
                _cleanup_free_ char *name = xstrndup(item, (size_t)(eq - item));
                _cleanup_(strv_release) struct strv now = { 0 }, had = { 0 };
                bool in_front = true;

                old = env_get(e->env_before_last.items, name);
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
        if (worst == CHECK_PASS)
                check_set(ret, CHECK_PASS, "%zu directories added, all present", n_dirs);
        else
                check_set(ret, worst, "%s\nregenerate the module (cudamod generate) or fix its "
                                      "paths by hand", bad.buf + 1);
}
