/* plan-naming.h: module names, versions and level directories of the
 * tree, from the config's naming templates (checked when the config
 * loaded: config.h naming_template_fill) filled with an install's facts. */
#ifndef CUDAMOD_PLAN_NAMING_H
#define CUDAMOD_PLAN_NAMING_H

#include <stddef.h>

#include "component.h"
#include "config.h"
#include "config-naming.h"
#include "diag.h"
#include "version.h"

/* The facts a naming template may use, of one install:
 *   {name}          the component ("cudnn")           module names
 *   {version}       its version as scan gives it ("9.7.1", CUDA "12.4")
 *   {version_full}  the most precise one ("9.7.1.26", CUDA "12.4.1")
 *   {major} {minor} {patch} {build}   parts of it
 *   {cuda_version}  the CUDA it was built for, as precisely as known
 *                   ("12.4", or "12" when only the major is known;
 *                   the toolkit's own MAJOR.MINOR); {cuda} is its old name
 *   {cuda_major}    that CUDA's major ("12")         the CUDA level too
 *   {arch}          its architecture ("x86_64")
 * A NULL string or a negative cuda_major is unknown. */
struct naming_facts {
        const char *name;
        const struct version *version;
        const char *version_str;
        const char *version_full;
        const char *build;
        long cuda_major;
        const struct version *cuda;
        /* {cuda_full}: the full version (X.Y.Z) of the CUDA the module
         * is for, or NULL when unknown. */
        const char *cuda_full;
        const char *arch;
};

/* Expand tmpl for f as kind: naming_template_fill, and a placeholder
 * whose value is unknown is an error too (-EINVAL, with a message in d).
 * *ret: the result, the caller's to free. */
int plan_naming_expand(const char *tmpl, enum naming_kind kind, const struct naming_facts *f, char **ret,
                       size_t *ret_at, struct diag *d);

/* Expand a `naming` template for an install version: placeholders
 * {major} {minor} {patch} {build} (4th part) {cuda_major} {cuda}. The
 * result must be a valid module version: only [A-Za-z0-9._+-], not
 * starting with '.', not empty. */
int plan_naming_expand_version(const char *tmpl, const struct version *v, const char *build, long cuda_major,
                               const struct version *cuda, char **ret, struct diag *d);

/* A component's module name under c's naming ("cudnn", "cuDNN"); the
 * caller's to free. */
char *plan_module_name(const struct config *c, const struct component *comp);
/* A level directory under c's naming: the core level (cuda_major < 0,
 * "Core") or the CUDA level of a major ("CUDA/12"); the caller's to free. */
char *plan_level(const struct config *c, long cuda_major);
/* The architecture the tree is for: c->arch, else this machine's
 * (uname), else NULL. Not to be freed. */
const char *plan_arch(const struct config *c);

#endif
