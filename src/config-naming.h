/* config-naming.h: module names and versions (config-naming.c):
 * the `naming` templates and the `naming` and `arch` keys. */
#ifndef CUDAMOD_CONFIG_NAMING_H
#define CUDAMOD_CONFIG_NAMING_H

#include <stddef.h>

#include "config-types.h"
#include "diag.h"
#include "version.h"

struct component;
struct parser; /* config-yaml.h */

/* Module naming: expand a `naming` template for an install version.
 * Placeholders {major} {minor} {patch} {build} (4th part) {cuda_major}
 * {cuda}; a placeholder whose value is unknown is an error (-EINVAL, with a
 * message in d). The result must be a valid module version: only
 * [A-Za-z0-9._+-], not starting with '.', not empty. config_load checks
 * every template with a sample version so that a bad template is a config
 * error, reported at its position. */
int naming_expand(const char *tmpl, const struct version *v, const char *build,
                  long cuda_major, const struct version *cuda, char **ret, struct diag *d);

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
        const char *arch;
};

enum naming_kind {
        NAMING_VERSION, /* a module version: [A-Za-z0-9._+-], not starting with '.' */
        NAMING_NAME,    /* a module name: the same, starting with a letter or digit; only {name} */
        NAMING_LEVEL,   /* a level directory: names joined by '/'; only {cuda_major} */
};

/* Expand tmpl for f as kind. An unknown placeholder, one the kind may not
 * use, a value that is unknown, or a result that is not what the kind may
 * be is -EINVAL with a message in d and, in *ret_at when not NULL, the
 * offset in tmpl of what is wrong (0 when it is the whole). */
int naming_expand_facts(const char *tmpl, enum naming_kind kind, const struct naming_facts *f,
                        char **ret, size_t *ret_at, struct diag *d);

/* A component's module name under c's naming ("cudnn", "cuDNN"). */
char *config_module_name(const struct config *c, const struct component *comp);
/* A level directory under c's naming: the core level (cuda_major < 0,
 * "Core") or the CUDA level of a major ("CUDA/12"). */
char *config_level(const struct config *c, long cuda_major);
/* The architecture the tree is for: c->arch, else this machine's
 * (uname), else NULL. */
const char *config_arch(const struct config *c);

/* The built-in naming, and the `naming` and `arch` keys of the config. */
void naming_init_default(struct config *c);
int parse_naming(struct parser *p, struct config *c);
int parse_arch(struct parser *p, struct config *c);

#endif
