/* config-naming.h: module names and versions (config-naming.c):
 * the `naming` templates and the `naming` and `arch` keys. */
#ifndef CUDAMOD_CONFIG_NAMING_H
#define CUDAMOD_CONFIG_NAMING_H

#include <stddef.h>

#include "config-types.h"
#include "diag.h"
#include "strbuf.h"
#include "version.h"

struct component;
struct parser; /* config-yaml.h */

/* The templates a config without `naming` has. */
#define NAMING_NAME_DEFAULT "{name}"
#define NAMING_LEVEL_CORE_DEFAULT "Core"
#define NAMING_LEVEL_CUDA_DEFAULT "CUDA/{cuda_major}"

enum naming_kind {
        NAMING_VERSION, /* a module version: [A-Za-z0-9._+-], not starting with '.' */
        NAMING_NAME,    /* a module name: the same, starting with a letter or digit; only {name} */
        NAMING_LEVEL,   /* a level directory: names joined by '/'; only {cuda_major} */
};

/* Append the value of placeholder {name} (one the grammar knows, and one
 * kind may use) to out, or fail (-EINVAL, d) saying what is missing. */
typedef int naming_value_fn(const char *tmpl, const char *name, const void *userdata, struct strbuf *out,
                            struct diag *d);

/* The grammar of a naming template (the placeholders are plan-naming.h's
 * facts): fill tmpl as kind, each placeholder by value. An unknown
 * placeholder, one the kind may not use, a value that fails, or a result
 * that is not what the kind may be is -EINVAL with a message in d and, in
 * *ret_at when not NULL, the offset in tmpl of what is wrong (0 when it is
 * the whole). config_load fills every template with a sample install, so
 * that a bad one is a config error, reported at its position. */
int naming_template_fill(const char *tmpl, enum naming_kind kind, naming_value_fn *value, const void *userdata,
                         char **ret, size_t *ret_at, struct diag *d);
/* The error of an unknown placeholder {name} in tmpl: -EINVAL. */
int naming_unknown_placeholder(const char *tmpl, const char *name, struct diag *d);

/* The built-in naming, and the `naming` and `arch` keys of the config. */
void naming_init_default(struct config *c);
/* What the preset c's naming started from cannot write as its tool does
 * (a static sentence), or NULL. */
const char *naming_preset_note(const struct config *c);
int parse_naming(struct parser *p, struct config *c);
int parse_arch(struct parser *p, struct config *c);

#endif
