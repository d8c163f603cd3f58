/* evaluate.h: the environment after `module load SPEC...`, as Lmod would
 * make it, without Lmod (DESIGN.md §6).
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
 * changes back). set_alias and set_shell_function are recorded, never
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
#include "hashmap.h"
#include "util.h"

struct modulefile {
        char *name;      /* "cuda" (may hold '/': "apps/cuda") */
        char *version;   /* "12.9", or "" for a module file without version */
        char *fullname;  /* "cuda/12.9" */
        char *path;      /* the modulefile */
        bool lua;        /* .lua (else Tcl, starting with #%Module) */
        bool hidden;     /* by a modulerc's hide_version or hide_modulefile */
};
void modulefile_release(struct modulefile *m);

/* Lmod's version order: < 0, 0, > 0. */
int module_version_compare(const char *a, const char *b);

/* Look spec up in the directories of mp. -ENOENT with d saying so when
 * nothing matches. */
int modulepath_find(const struct strv *mp, const char *spec, struct modulefile *ret,
                    struct diag *d);
/* Every module of every directory of mp, one per full name (the first
 * directory wins), sorted by name then version; hidden ones left out. */
int modulepath_list(const struct strv *mp, struct modulefile **ret, size_t *n_ret,
                    struct diag *d);
/* The same, with the modulerc files Lmod reads besides those of the
 * module directories: $LMOD_MODULERCFILE (a ':'-separated list, the first
 * file winning) and then $HOME/.modulerc.lua (else $HOME/.modulerc),
 * which wins over them, both from env (NULL: none). Every directive Lmod
 * 8.6 follows is followed, in .modulerc.lua and in the Tcl .modulerc and
 * .version: module_version (a default, or another name for a version),
 * module_alias (a name for another module; "/NAME" in a directory's file
 * is NAME under it), hide_version (a full name) and hide_modulefile (a
 * path). A spec goes through the aliases first (at most 16 hops). The
 * default of a name is the one a global modulerc marks, else the one its
 * directory marks, else the highest version that is not hidden. A hidden
 * version is never listed nor a default, but loads by its full name. */
int modulepath_find_rc(const struct strv *mp, char *const *env, const char *spec,
                       struct modulefile *ret, struct diag *d);
int modulepath_list_rc(const struct strv *mp, char *const *env, struct modulefile **ret,
                       size_t *n_ret, struct diag *d);
void modulefile_array_free(struct modulefile *a, size_t n);

/* Split a MODULEPATH-like value at ':' (empty entries dropped). */
void modulepath_split(const char *value, struct strv *ret);

struct loaded_module {
        struct modulefile file;
        char *requested_by;   /* the fullname whose depends_on/load loaded it, or NULL */
        struct strv messages; /* LmodMessage texts */
        struct strv warnings; /* LmodWarning texts (Lmod prints them and exits 1,
                               * the environment changed all the same) */
        /* set_alias and set_shell_function (bash body), "NAME=text", in
         * call order: recorded, never run. */
        struct strv aliases;
        struct strv shell_functions;
        /* The entries its prepend_path/append_path calls named, as
         * "NAME=entry", in call order, whether or not the variable already
         * had them (Tcl: what the tool's `module show` lists, for the last
         * module only). */
        struct strv path_entries;
};

struct evaluation {
        struct loaded_module *modules; /* in load order: dependencies first */
        size_t n_modules;
        struct strv env;               /* after: "NAME=value" */
        /* The environment after every module but the last in load order:
         * what the last module itself changed is env minus this. */
        struct strv env_before_last;
};
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

/* Variables the module tools keep for themselves (_ModuleTable*, __LMOD_*,
 * LMOD_*, _LMFILES_, LOADEDMODULES, __MODULES_*, MODULES_*, BASH_FUNC_*)
 * and the shell's own (_, SHLVL, PWD, OLDPWD). MODULEPATH is not one. */
bool env_is_bookkeeping(const char *name);

/* One variable's change between two environments. */
enum env_change_kind {
        ENV_SET,      /* new or changed value that is not a path extension */
        ENV_PATH,     /* entries put in front of and/or after the old value */
        ENV_UNSET,
};
struct env_change {
        char *name;
        enum env_change_kind kind;
        char *value;          /* the new value (NULL for ENV_UNSET) */
        char *old_value;      /* or NULL */
        struct strv prepended, appended; /* ENV_PATH: the entries, in order */
};
struct env_diff {
        struct env_change *changes; /* sorted by name */
        size_t n;
};
/* What differs from before to after, bookkeeping variables left out. A
 * changed variable is ENV_PATH when after = P:before:A with P or A not
 * empty (':'-separated), else ENV_SET (a new variable is ENV_SET, whatever
 * its value). */
void env_diff_compute(const struct strv *before, const struct strv *after, struct env_diff *ret);
void env_diff_release(struct env_diff *d);

/* A load's environment: the "NAME=value" variables a program would be
 * started with, each name once, indexed by name, so that a lookup, a set
 * and an unset cost the same with ten variables as with the 10,000 a
 * load may set (the index maps a name to its position in vars; the order
 * is vars', never the index's). The order of vars is not kept across
 * env_unset. */
struct env {
        struct strv vars;
        struct hashmap index;
};
/* A copy of the "NAME=value" items of from (NULL-terminated); of a name
 * given twice the first is kept, as getenv(3) would find it. */
void env_init(struct env *e, char *const *from);
void env_release(struct env *e);
/* The variables, e released. */
struct strv env_take_vars(struct env *e);
const char *env_lookup(const struct env *e, const char *name);
/* A name holding '=' names no variable: env_lookup gives NULL, env_set
 * and env_unset do nothing (the sandboxes refuse such names first). */
void env_set(struct env *e, const char *name, const char *value);
void env_unset(struct env *e, const char *name);

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
