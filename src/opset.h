/* opset.h: the environment operations of one module as they are
 * gathered (opset.c): by plan.c for every component and by a component's
 * own `ops` (component.h), so it lies below both. */
#ifndef CUDAMOD_OPSET_H
#define CUDAMOD_OPSET_H

#include <stdbool.h>
#include <stddef.h>

#include "config-types.h"
#include "install.h"
#include "util.h"

/* One operation of a module's environment (plan.h module_plan). */
struct plan_op {
        enum env_op_kind kind;
        char *name;
        char *value;
        char *origin; /* where the value was set (config), or NULL (the scan) */
};

/* The operations of one module, gathered by variable so that several
 * directories prepended to one variable keep the order they are listed
 * in: the first listed ends up first (so it is prepended last). */
struct opset {
        const struct install *in; /* whose module: what its scan found there */
        struct plan_op *ops;
        size_t n, alloc;
        bool no_paths; /* a system install: root variables only */
};

void opset_push(struct opset *s, enum env_op_kind kind, const char *name, const char *value);
/* setenv, unless value is NULL or empty. */
void opset_setenv(struct opset *s, const char *var, const char *value);
/* pushenv, unless value is NULL or empty: a root variable, which the
 * user may have set before the load and gets back on unload. */
void opset_pushenv(struct opset *s, const char *var, const char *value);
/* Add dir to a list of directories for one path variable, in the order
 * wanted, unless the scan did not find it a directory (install.h
 * `present`), it is a system directory, a stubs directory, or already
 * there. */
void opset_path_add(const struct opset *s, struct strv *v, const char *dir);
/* lib_dir/pkgconfig, as opset_path_add. */
void opset_pkgconfig(const struct opset *s, struct strv *v, const char *lib_dir);
/* Prepend the directories (none for a system install) and release dirs. */
void opset_prepends(struct opset *s, const char *var, struct strv *dirs);

#endif
