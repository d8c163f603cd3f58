/* validate-check.h: what one check of `cudamod validate` looks at and
 * what it says (validate-check.c): the module under test, struct check
 * and the findings that make it. Below validate.c and the component
 * files, whose lazy checks (lazy.h) fill a struct check too; the table of
 * the checks is validate-checks.c. */
#ifndef CUDAMOD_VALIDATE_CHECK_H
#define CUDAMOD_VALIDATE_CHECK_H

#include <stdbool.h>

#include "strbuf.h"
#include "util.h"

struct component;

enum check_status {
        CHECK_PASS,
        CHECK_WARN,
        CHECK_FAIL,
        CHECK_SKIP,
        _CHECK_STATUS_MAX,
};
/* "pass", "warn", "fail", "skip" */
const char *check_status_to_string(enum check_status s);

struct check {
        const char *id;          /* "syntax", "paths", "closure", "lazy", "build", "run",
                                  * "device" (static strings) */
        enum check_status status;
        char *message;           /* owned; one or more lines, no trailing newline */
};
void check_release(struct check *c);
/* Set c (replacing its message) and return c->status. */
_printf_(3, 4) enum check_status check_set(struct check *c, enum check_status s, const char *fmt, ...);

/* What a check found so far: the worst status, what passed (facts, joined
 * with "; ") and the problems (warn and fail, one line each). Initialise
 * with FINDINGS_INIT; findings_release frees the texts. */
struct findings {
        enum check_status worst;
        struct strbuf facts, problems;
};
#define FINDINGS_INIT { .worst = CHECK_PASS, .facts = STRBUF_INIT, .problems = STRBUF_INIT }
_printf_(3, 4) void findings_add(struct findings *f, enum check_status s, const char *fmt, ...);
void findings_release(struct findings *f);
/* Set ret: the summary, then the problems' lines; release f. */
void findings_finish(struct findings *f, const char *summary, struct check *ret);
/* Nothing to check: skip with why, unless reading what was there went
 * wrong (then finish with why as the summary); release f. */
void findings_skip(struct findings *f, const char *why, struct check *ret);

/* The module under test. Built by validate_module_init from a load (the
 * strings point into the evaluation, env into the caller's strv), or by
 * hand in tests; validate_module_release frees the three strvs. */
struct validate_module {
        const char *module;         /* "cudnn/9.7.1" */
        const char *name;           /* "cudnn" */
        const char *version;        /* "9.7.1" (may be "" when the module has none) */
        const char *file;           /* the modulefile */
        const struct component *kind; /* what it provides, or NULL: another module */
        /* The environment after loading the module with its dependencies,
         * minus the module tools' bookkeeping, with PATH ending in the
         * basics (/usr/bin:/bin) and HOME: what build and run start with.
         * NULL-terminated "NAME=value" strings. */
        char *const *env;
        /* What this module itself (not its dependencies) adds to
         * LD_LIBRARY_PATH and CPATH, in the order the variable has them. */
        struct strv own_libdirs;
        struct strv own_incdirs;
        /* LD_LIBRARY_PATH of env, split, in order. */
        struct strv ld_library_path;
        /* A module for a system install (its *_HOME-like variables name
         * /usr or a directory under /usr/lib, and it adds no library
         * directory, since the loader searches the system's): own_libdirs
         * and own_incdirs are the system directories that implies, and
         * only the kind's libraries there are its own. */
        bool system;
        /* A runtime-only install's module (validate_module_init): the
         * kind's library with no header of its own (NVIDIA's CUDA 13
         * cuSPARSELt wheel), which the loader uses and a build cannot:
         * the build check skips it, the run check compares its library
         * with the module's version alone. */
        bool runtime;
};

#endif
