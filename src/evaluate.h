/* evaluate.h: the environment after `module load SPEC...`, as Lmod would
 * make it, without Lmod (doc/guide.md, `cudamod show`).
 *
 * Modules are looked up in a modulepath the way Lmod 8 does it: a name
 * ("cuda") takes the marked default of the first directory that marks one
 * (a `default` symlink, `.modulerc.lua`, `.modulerc`, `.version`, in that
 * order), else the highest version across the whole modulepath; a full name
 * ("cuda/12.9") the first file of that name; a partial version ("cuda/12")
 * the highest version under it (Lmod's extended default), a marked
 * default weighing more. Versions are ordered numerically piece by piece
 * ("12.10" > "12.9"). Hidden versions (a leading '.', or a modulerc's
 * hide_version/hide_modulefile) are never a default but load by their full
 * name; aliases (module_alias, module_version) are followed first; and
 * the global modulerc files (modulepath_find_rc) count too.
 *
 * Lua modulefiles run in the sandbox (lmod-sandbox.h); their calls are
 * applied to the environment in order with Lmod's semantics: prepend_path
 * and append_path move an entry that is already there, entries are
 * regularised ("//" and a trailing '/' removed), remove_path drops the
 * variable when nothing is left, depends_on/load/always_load load what is
 * not loaded yet (and `between`/`atleast`/`latest` choose the highest
 * version in range), prereq and conflict are checked, and a change of
 * MODULEPATH changes where the next module is looked up (the hierarchy).
 * Each call is applied as the file makes it, as in Lmod, so os.getenv()
 * in a modulefile sees what the calls before it set, and what the modules
 * its depends_on loaded set. unload() of a module that is not loaded does
 * nothing; of one the load loaded, it is an error (cudamod does not take
 * changes back). pushenv sets as setenv does (pushenv(N, false) clears
 * N); the value Lmod saves for the unload (__LMOD_STACK_N) is not kept. set_alias and set_shell_function are recorded, never
 * run; LmodWarning is recorded (Lmod then exits 1, the environment changed
 * all the same). Two members of one family are an error (Lmod would swap
 * them; say which one is meant).
 *
 * Tcl modulefiles run in a Tcl safe interpreter (evaluate-tcl.h: nothing
 * they say is run), found and loaded the same way, and their calls applied
 * with Environment Modules' semantics: an entry already on a path stays
 * where it is, no entry is regularised, prereq loads a missing requirement
 * (auto_handling), "name@lo:hi" is a range, and inside a partial version
 * or a range the marked default wins over the highest. tclsh is looked up
 * on the PATH of the start environment; without it, a clear error naming
 * --trust-modulefiles. With evaluate_options.trust_modulefiles, the real
 * tool evaluates them instead: Environment Modules' modulecmd.tcl
 * ($MODULES_CMD, or the Debian paths) or Lmod's lmod ($LMOD_CMD), whose
 * shell code a /bin/sh evaluates in the start environment, and whose
 * `module show` of the last module names its own path entries (a show
 * that fails, or a line of Lmod's show that is not understood, is
 * -EINVAL: see evaluate-show.c). */
#ifndef CUDAMOD_EVALUATE_H
#define CUDAMOD_EVALUATE_H

#include <stdbool.h>

#include "diag.h"
#include "evaluate-env.h"
#include "evaluate-modulepath.h"
#include "evaluate-types.h"
#include "util.h"

void evaluation_release(struct evaluation *e);

struct evaluate_options {
        /* The start environment (NULL-terminated "NAME=value"); NULL: the
         * process's. */
        char *const *environ;
        /* When set, MODULEPATH of the start environment is replaced by
         * these directories. */
        const struct strv *modulepath;
        unsigned long max_instructions; /* per modulefile; 0: the sandbox's default */
        /* Per load: each modulefile's Lua state and the calls recorded by
         * the modulefiles of the load so far; 0: the sandbox's default. */
        size_t max_memory;
        /* Per load: the CPU time of all its modulefiles together (each
         * gets what the ones before it left); 0: the sandbox's default
         * (10 s). */
        unsigned max_cpu_ms;
        /* Tcl modulefiles: have the real tool (modulecmd.tcl, Lmod) run
         * them, as the user running cudamod, instead of the safe
         * interpreter. */
        bool trust_modulefiles;
        /* OpenSSH's StrictModes, for a caller running as root: before a
         * modulefile is evaluated, it and every directory above it up to
         * its modulepath directory (up to / when it lies outside every
         * one) must be owned by us and writable by no group or other user;
         * else -EPERM. */
        bool strict_modes;
};

/* The environment a load starts from: o->environ (or the process's) with
 * MODULEPATH replaced by o->modulepath when given. */
void evaluate_start_env(const struct evaluate_options *o, struct strv *ret);

/* Load specs in order. Errors (-ENOENT no such module, -EINVAL a modulefile
 * error with FILE:LINE, -ENOEXEC no tool for a Tcl modulefile, -ELOOP a
 * dependency cycle) leave ret untouched. */
int evaluate_load(const struct evaluate_options *o, char *const *specs, size_t n_specs,
                  struct evaluation *ret, struct diag *d);

/* What the last module of e itself puts on the path variable name: the
 * entries of its own prepend/append calls, else (a tool that did not tell)
 * what the variable gained. Added to ret, each once. */
void evaluation_own_entries(const struct evaluation *e, const char *name, struct strv *ret);

/* The clean environment module evaluations start from: PATH=/usr/bin:/bin
 * and, from the process, HOME, USER, LOGNAME, TMPDIR, LANG and what finds
 * the module tools for Tcl modulefiles (MODULES_CMD, LMOD_CMD). */
void evaluate_basic_env(struct strv *ret);

/* A module as it loads from a modulepath: in a hierarchy, after the
 * modules whose load makes its directory visible. */
struct module_unit {
        struct strv chain;        /* the specs to load, the module last */
        char *module;             /* its full name */
        char *file;
        struct evaluation eval;   /* the load of chain, when it succeeded */
        bool evaluated;
        char *error;              /* why it did not load ("FILE:LINE: message"), or NULL */
};
void module_unit_release(struct module_unit *u);
/* Every module of o->modulepath, loaded from o->environ (with o's other
 * options); and for each one whose load adds directories to MODULEPATH (a
 * cuda module of a hierarchy), every module of those, loaded after it,
 * down to a depth of 4. A module that does not load is still a unit
 * (evaluated false). */
void module_units_discover(const struct evaluate_options *o, struct module_unit **ret,
                           size_t *n_ret);

#endif
