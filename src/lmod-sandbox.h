/* lmod-sandbox.h: evaluate one Lmod (Lua) modulefile in a sandbox.
 *
 * The file runs in a fresh Lua state (base, string, table, math only) whose
 * environment holds the safe base functions and Lmod's modulefile API, and
 * nothing else: no io but io.open of the driver's version files, no os but os.getenv and os.date/time/clock/difftime,
 * no require/dofile/loadfile, no
 * load of binary chunks. It is loaded in text mode ("t") under the chunk
 * name "@<path>", run under lua_pcall with an instruction-count hook (the
 * budget) and an allocator capped at a byte limit, so an endless loop, a
 * huge allocation or a deep recursion ends with an error, never a hang or
 * a crash. Work the hook cannot see is charged to the same budget: bytes
 * allocated, the worst-case steps of a pattern match (find, match, gmatch,
 * gsub), the loops of string.rep and the table functions; finalizers
 * (__gc, which Lua runs with hooks off) are refused; and the hook also
 * ends a run past its CPU time (an instruction such as == on two long
 * strings is slow without allocating). Naming what is left out (io, require, loadstring, dofile, os.execute,
 * …) is an error that says it is not available, with the file and line.
 *
 * What the file does is recorded, not applied: struct sandbox_result holds
 * the calls in order (setenv, prepend_path, …), which the caller turns into
 * an environment. The sandbox resolves nothing in a modulepath; depends_on,
 * load, unload and prereq are recorded with their arguments, set_alias and
 * set_shell_function with their text (never run). What a file may read:
 * os.getenv (the options' environment), os.date/time/clock/difftime,
 * io.open of exactly the NVIDIA driver's two version files, read only (the
 * cuda module's driver check; nothing else can be opened),
 * isDir/isFile (stat, read only), userInGroup(s) (the process's groups:
 * getegid and getgroups, as Lmod's `groups`; root is in every group), and
 * its own name and path (myFileName, hierarchyA). The recorded calls
 * are counted (at most max_calls) and their bytes charged to the same
 * memory cap as the Lua state, so a short loop cannot record gigabytes.
 * A result owns its strings; sandbox_result_release frees them. */
#ifndef CUDAMOD_LMOD_SANDBOX_H
#define CUDAMOD_LMOD_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "util.h"

enum sandbox_op_kind {
        SANDBOX_SETENV,       /* name, value */
        SANDBOX_PUSHENV,      /* name, value */
        SANDBOX_UNSETENV,     /* name */
        SANDBOX_PREPEND_PATH, /* name, value, delim */
        SANDBOX_APPEND_PATH,  /* name, value, delim */
        SANDBOX_REMOVE_PATH,  /* name, value, delim */
        SANDBOX_FAMILY,       /* value */
        SANDBOX_DEPENDS_ON,   /* args */
        SANDBOX_LOAD,         /* args (load, always_load, try_load) */
        SANDBOX_PREREQ,       /* args (prereq, prereq_any) */
        SANDBOX_CONFLICT,     /* args */
        SANDBOX_WHATIS,       /* value */
        SANDBOX_HELP,         /* value (the texts joined) */
        SANDBOX_PROPERTY,     /* name, value */
        SANDBOX_MODULE_VERSION, /* args: module, then the version names (modulerc) */
        SANDBOX_MESSAGE,      /* value (LmodMessage) */
        SANDBOX_WARNING,      /* value (LmodWarning: the texts joined) */
        SANDBOX_SET_ALIAS,    /* name, value: recorded, never run */
        SANDBOX_SET_SHELL_FUNCTION, /* name, value (the bash body), args[0] the csh one */
        SANDBOX_UNLOAD,       /* args (unload, always_unload) */
        SANDBOX_EXTENSIONS,   /* value (the texts joined with ", ") */
        SANDBOX_MODULE_ALIAS, /* args: alias name, target (modulerc) */
        SANDBOX_HIDE_VERSION, /* value: a full name (modulerc) */
        SANDBOX_HIDE_MODULEFILE, /* value: a modulefile's path (modulerc) */
        _SANDBOX_OP_MAX,
};

/* "setenv", "prepend_path", … (the Lmod function names). */
const char *sandbox_op_kind_to_string(enum sandbox_op_kind k);

struct sandbox_op {
        enum sandbox_op_kind kind;
        char *name;       /* variable or property name, or NULL */
        char *value;      /* or NULL */
        char delim;       /* path ops: ':' unless the file gave another */
        struct strv args; /* module names and version specs, as given */
        unsigned line;    /* the line of the call in the file (0: unknown) */
};

struct sandbox_result {
        struct sandbox_op *ops;
        size_t n_ops;
        size_t bytes; /* what the ops hold, as charged to the memory cap */
};

/* The defaults of struct sandbox_options. A modulefile makes tens of calls
 * (cudamod's own about 40) and needs kilobytes: the limits are far above
 * that, and keep a hostile or broken file from using more than 64 MiB or
 * making millions of calls for the caller to apply. */
#define SANDBOX_DEFAULT_INSTRUCTIONS 10000000UL
#define SANDBOX_DEFAULT_MEMORY ((size_t)64 << 20)
#define SANDBOX_DEFAULT_CPU_MS 10000
#define SANDBOX_DEFAULT_MAX_CALLS 10000

struct sandbox_options {
        const char *module_name;    /* myModuleName(): "cuda" */
        const char *module_version; /* myModuleVersion(): "12.9" */
        /* myFileName(), and hierarchyA()'s source: the modulefile's
         * absolute path (NULL: ""). */
        const char *module_file;
        /* myModuleUsrName(): the name the user (or the depends_on of
         * another module) gave, "cuda" for cuda/12.9; requireFullName()
         * fails unless it is the full name (NULL: the full name). */
        const char *module_usr_name;
        const char *mode;           /* mode(): "load" (default), "unload", "show" */
        /* os.getenv(): looked up here (NULL-terminated "NAME=value" list);
         * NULL: the process environment. */
        const char *const *environ;
        /* When set, os.getenv() asks this instead (NULL: unset), and
         * on_call gets every recorded call, in order, before the file
         * goes on (before its next call, os.getenv, LmodError, or its
         * end): so a caller applies each call as Lmod does, and what the
         * file reads with os.getenv is the environment as the calls so
         * far made it. A negative return ends the run for good (a pcall
         * in the file cannot catch it) and is sandbox_eval's, with the
         * diag on_call filled. */
        const char *(*getenv)(void *userdata, const char *name);
        int (*on_call)(void *userdata, const struct sandbox_op *op, struct diag *d);
        /* isloaded(NAME): asked here (after the calls so far are given to
         * on_call); NULL: nothing is loaded. */
        bool (*isloaded)(void *userdata, const char *spec);
        void *userdata;
        /* When set, the bytes of the Lua state and of the recorded calls
         * are counted here, and max_memory caps this count, not the
         * state's own: states run inside one another's on_call (a
         * depends_on) and the results kept share one cap. A result's
         * bytes stay counted (the caller takes them off when it frees
         * it, or keeps them till its end); a failed run's leave. */
        size_t *mem_pool;
        unsigned long max_instructions; /* 0: the default (10 million) */
        /* Bytes, for the Lua state and the recorded calls together; 0:
         * the default (64 MiB). */
        size_t max_memory;
        unsigned max_cpu_ms;            /* CPU time; 0: the default (10 s) */
        unsigned max_calls;             /* recorded calls; 0: the default (10,000) */
        /* io.open reads the NVIDIA driver's version files
         * (/proc/driver/nvidia/version, /sys/module/nvidia/version) below
         * this directory; NULL: below /. For tests: evaluate.c sets it
         * from $CUDAMOD_TEST_ROOT. */
        const char *sysroot;
};

/* Evaluate text (len bytes; path names it in messages). Returns 0, or
 * -EINVAL with d set: a syntax error or run-time error at PATH:LINE (Lua's
 * own message, and the column unknown), "LmodError: msg" for LmodError,
 * "instruction budget exhausted", "CPU time limit exceeded", "memory limit exceeded", "binary chunks
 * are not accepted", or at PATH:LINE "more than N calls to modulefile functions …". On error ret is
 * left untouched. */
int sandbox_eval(const char *text, size_t len, const char *path, const struct sandbox_options *o,
                 struct sandbox_result *ret, struct diag *d);
void sandbox_result_release(struct sandbox_result *r);

#endif
