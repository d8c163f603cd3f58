/* evaluate-types.h: what a load made (evaluate.h has the story),
 * filled by evaluate.c and by the real tool (evaluate-tool.c). No
 * functions: evaluation_release is evaluate.h's. */
#ifndef CUDAMOD_EVALUATE_TYPES_H
#define CUDAMOD_EVALUATE_TYPES_H

#include "evaluate-modulepath.h"
#include "util.h"

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

#endif
