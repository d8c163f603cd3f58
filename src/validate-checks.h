/* validate-checks.h: the table of `cudamod validate`'s checks
 * (validate-checks.c): each check once, with its scope, and how one runs. */
#ifndef CUDAMOD_VALIDATE_CHECKS_H
#define CUDAMOD_VALIDATE_CHECKS_H

#include <stdbool.h>

#include "diag.h"
#include "validate.h"
#include "validate-probe.h"

/* A check runs once for the module under test, or once per launcher
 * target (run and device read what the probe saw through that target). */
enum check_scope {
        CHECK_PER_MODULE,
        CHECK_PER_TARGET,
};

/* What a check is given. Per module: eval and module, or load_error
 * alone when the load failed. Per target also options with that target's
 * launcher, and probe: the probe's report through it, or NULL when the
 * module has nothing for the probe to load (validate_module_needs_probe). */
struct check_input {
        const struct evaluation *eval;
        const struct diag *load_error;
        const struct validate_module *module;
        const struct validate_options *options;
        const struct probe_report *probe;
};

/* One row of validate_checks[]: a check of its own id. needs_load: the
 * check looks at the loaded module, so a module that did not load skips
 * it (syntax, which reports the failed load, does not). */
struct check_type {
        const char *id;
        enum check_scope scope;
        bool needs_load;
        /* It checks what the module is for (its libraries resolve, build,
         * load): a module passes only when one such check ran (pass or
         * warn); otherwise it is "unchecked". */
        bool substantive;
        void (*run)(const struct check_input *in, struct check *ret);
};

/* Every check, in the report's order: the per-module ones in table
 * order, then for each target its per-target ones in table order. Ends
 * with a row whose id is NULL. */
extern const struct check_type validate_checks[];

/* Whether the probe is started for m at all: not for a module with none
 * of the libraries it loads (its per-target checks skip). */
bool validate_module_needs_probe(const struct validate_module *m);

/* Run ct on in into ret, whose id it sets: a skip saying why when the
 * module did not load and ct needs it, or, per target, when in->probe is
 * NULL; else ct->run. */
void check_type_run(const struct check_type *ct, const struct check_input *in, struct check *ret);

#endif
