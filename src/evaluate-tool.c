/* evaluate-tool.c: Tcl modulefiles evaluated by the real tool, when the
 * caller trusts them (evaluate_options.trust_modulefiles): Environment
 * Modules' modulecmd.tcl or Lmod's lmod runs `sh load SPECS`, a /bin/sh
 * evaluates its shell code in the start environment, and the tool's
 * `show` tells which path entries the last module's own calls name. */
#include <errno.h>
#include <unistd.h>

#include "evaluate-env.h"
#include "evaluate-modulepath.h"
#include "evaluate-show.h"
#include "evaluate-tool.h"
#include "process.h"
#include "util.h"
#include "banned.h"

#define TOOL_TIMEOUT 60

/* --- Tcl through the real tool ----------------------------------------- */

/* The module command for Tcl modulefiles, as an argv prefix ending before
 * the shell name: {tclsh, modulecmd.tcl} or {lmod}. */
static int find_tool(char *const *env, struct strv *ret, struct diag *d)
{
        static const char *const em_paths[] = {
                "/usr/lib/x86_64-linux-gnu/modulecmd.tcl",
                "/usr/lib/aarch64-linux-gnu/modulecmd.tcl",
                "/usr/share/modules/libexec/modulecmd.tcl",
                "/usr/lib/modulecmd.tcl",
        };
        static const char *const lmod_paths[] = {
                "/usr/share/lmod/lmod/libexec/lmod",
        };
        const char *em = env_get(env, "MODULES_CMD"), *lmod = env_get(env, "LMOD_CMD");
        int ignored;
        _cleanup_free_ char *tclsh = process_find_program("tclsh", env, &ignored);

        for (size_t i = 0; !em && i < ELEMENTSOF(em_paths); i++)
                if (access(em_paths[i], R_OK) == 0)
                        em = em_paths[i];
        if (em && tclsh && access(em, R_OK) == 0) {
                strv_add(ret, tclsh);
                strv_add(ret, em);
                return 0;
        }
        for (size_t i = 0; !lmod && i < ELEMENTSOF(lmod_paths); i++)
                if (access(lmod_paths[i], X_OK) == 0)
                        lmod = lmod_paths[i];
        if (lmod && access(lmod, X_OK) == 0) {
                strv_add(ret, lmod);
                return 0;
        }
        return diag_errorf(d, -ENOEXEC,
                           "Tcl modulefiles are evaluated by Environment Modules or Lmod, and "
                           "neither was found (set MODULES_CMD to modulecmd.tcl, with tclsh on "
                           "PATH, or LMOD_CMD to Lmod's lmod)");
}

/* Run the tool's `sh load SPECS` in env and evaluate its output in
 * /bin/sh; the environment afterwards goes to ret. */
static int tool_load(const struct strv *tool, char *const *env, char *const *specs,
                     size_t n_specs, struct strv *ret, struct diag *d)
{
        static const char script[] =
                "code=$(\"$@\") || exit 90; eval \"$code\" || exit 91; exec env -0";
        _cleanup_(strv_release) struct strv argv = { 0 };
        _cleanup_(child_release) struct child c = { 0 };
        int r;

        strv_add(&argv, "/bin/sh");
        strv_add(&argv, "-c");
        strv_add(&argv, script);
        strv_add(&argv, "sh");
        for (size_t i = 0; i < tool->len; i++)
                strv_add(&argv, tool->items[i]);
        strv_add(&argv, "sh");
        strv_add(&argv, "load");
        for (size_t i = 0; i < n_specs; i++)
                strv_add(&argv, specs[i]);
        r = process_run("/bin/sh", argv.items, env, NULL, TOOL_TIMEOUT, &c);
        if (r < 0)
                return diag_errorf(d, r, "cannot run /bin/sh: %s", strerror(-r));
        if (!child_succeeded(&c)) {
                _cleanup_free_ char *how = c.timed_out ? xstrdup("timed out") : child_ending(&c);

                return diag_errorf(d, -EINVAL, "%s failed to load the modules (%s): %s",
                                   tool->items[tool->len - 1], how,
                                   c.err.len ? c.err.buf : "(no message)");
        }
        for (size_t off = 0; off < c.out.len;) {
                size_t n = strnlen(c.out.buf + off, c.out.len - off);

                if (memchr(c.out.buf + off, '=', n))
                        strv_push(ret, xstrndup(c.out.buf + off, n));
                off += n + 1;
        }
        return 0;
}

/* The path entries the module's own prepend/append calls name, from the
 * tool's `show` (on stderr for both tools), in env. A show that fails, or
 * that Lmod printed in a shape cudamod does not understand, is an error:
 * without it the module's own entries would be unknown. */
static int tool_show_entries(const struct strv *tool, char *const *env, const char *module,
                             struct strv *ret, struct diag *d)
{
        _cleanup_(strv_release) struct strv argv = { 0 };
        _cleanup_(child_release) struct child c = { 0 };
        _cleanup_free_ char *what = NULL;
        const char *name = path_basename(tool->items[tool->len - 1]);
        int r;

        for (size_t i = 0; i < tool->len; i++)
                strv_add(&argv, tool->items[i]);
        strv_add(&argv, "sh");
        strv_add(&argv, "show");
        strv_add(&argv, module);
        r = process_run(argv.items[0], argv.items, env, NULL, TOOL_TIMEOUT, &c);
        if (r < 0)
                return diag_errorf(d, r, "cannot run '%s': %s", argv.items[0], strerror(-r));
        if (!child_succeeded(&c)) {
                _cleanup_free_ char *how = c.timed_out ? xstrdup("timed out") : child_ending(&c);

                return diag_errorf(d, -EINVAL, "%s show %s failed (%s): %s", name, module, how,
                                   c.err.len ? c.err.buf : "(no message)");
        }
        what = xasprintf("%s show %s", name, module);
        return show_output_entries(c.err.buf, tool->len == 1, what, ret, d);
}

int evaluate_tool(char *const *env, char *const *specs, size_t n_specs,
                  struct evaluation *ret, struct diag *d)
{
        _cleanup_(strv_release) struct strv tool = { 0 }, after = { 0 }, before = { 0 };
        _cleanup_(strv_release) struct strv names = { 0 }, files = { 0 }, old = { 0 };
        _cleanup_(strv_release) struct strv own = { 0 };
        size_t first;
        int r = find_tool(env, &tool, d);

        if (r < 0)
                return r;
        r = tool_load(&tool, env, specs, n_specs, &after, d);
        if (r < 0)
                return r;
        modulepath_split(env_get(env, "LOADEDMODULES"), &old);
        modulepath_split(env_get(after.items, "LOADEDMODULES"), &names);
        modulepath_split(env_get(after.items, "_LMFILES_"), &files);
        if (names.len != files.len || names.len <= old.len)
                return diag_errorf(d, -EINVAL, "%s loaded nothing (LOADEDMODULES is unchanged)",
                                   tool.items[tool.len - 1]);
        first = old.len;
        if (names.len - first > 1)
                r = tool_load(&tool, env, names.items + first, names.len - first - 1,
                              &before, d);
        else
                env_copy(&before, env);
        if (r < 0)
                return r;
        r = tool_show_entries(&tool, after.items, names.items[names.len - 1], &own, d);
        if (r < 0)
                return r;
        ret->modules = xcalloc(names.len - first, sizeof(*ret->modules));
        for (size_t i = first; i < names.len; i++) {
                const char *slash = strrchr(names.items[i], '/');
                struct modulefile *m = &ret->modules[ret->n_modules++].file;
                _cleanup_free_ char *name = slash ? xstrndup(names.items[i],
                                                             (size_t)(slash - names.items[i]))
                                                  : xstrdup(names.items[i]);

                modulefile_set(m, name, slash ? slash + 1 : "", files.items[i],
                               endswith(files.items[i], ".lua"));
        }
        ret->modules[ret->n_modules - 1].path_entries = own;
        own = (struct strv){ 0 };
        ret->env = after;
        ret->env_before_last = before;
        after = before = (struct strv){ 0 };
        return 0;
}
