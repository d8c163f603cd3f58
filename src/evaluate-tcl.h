/* evaluate-tcl.h: one Environment Modules (Tcl) modulefile evaluated in a
 * Tcl safe interpreter, its calls recorded, nothing run (doc/HACKING.md "Trust
 * model").
 *
 * tclsh runs cudamod's own driver script (compiled in, fed on its stdin;
 * the modulefile's path, its names and the environment are arguments,
 * never part of a script). The driver creates `interp create -safe`, which
 * has no exec, open, file, socket, source, load or cd, defines there only
 * the modulefile commands (setenv, prepend-path, prereq, module load/use,
 * family, is-loaded, getenv, module-info, …) as aliases that record the
 * call, sources the file into it, and writes one record per line with
 * every value hex-encoded, so that no value can pass for a record or a
 * field. A command that would run something (system, source-sh, exec,
 * puts to stdout, …) is an error naming --trust-modulefiles. The run is
 * bounded in time (a Tcl time limit and a process timeout), memory (a
 * ulimit) and output (the calls counted and their bytes capped).
 *
 * What it records is a struct sandbox_result (lmod-sandbox.h), the same
 * calls a Lua modulefile makes, for evaluate.c to apply with Environment
 * Modules' semantics. */
#ifndef CUDAMOD_EVALUATE_TCL_H
#define CUDAMOD_EVALUATE_TCL_H

#include "diag.h"
#include "evaluate-modulepath.h"
#include "lmod-sandbox.h"

/* tclsh (or tclsh8.6) on the PATH of env ("/usr/bin:/bin" when it has
 * none), or NULL. */
char *tcl_find_interpreter(char *const *env);

struct tcl_eval_options {
        const char *tclsh;
        /* What the modulefile reads through getenv and env(): the
         * environment the load has reached (NULL-terminated "NAME=value").
         * It is data: tclsh itself runs with an environment of its own. */
        char *const *environ;
        unsigned max_calls;   /* 0: SANDBOX_DEFAULT_MAX_CALLS */
        size_t max_bytes;     /* of the records; 0: SANDBOX_DEFAULT_MEMORY */
};

/* Evaluate mf (mode "load"). Returns 0 with ret filled, or -EINVAL with d
 * at FILE:LINE (the Tcl error, a refused command, a limit), -ENOEXEC when
 * tclsh cannot be started. */
int tcl_safe_eval(const struct modulefile *mf, const struct tcl_eval_options *o,
                  struct sandbox_result *ret, struct diag *d);

#endif
