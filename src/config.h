/* config.h: the site configuration (cudamod-site.yaml(5)).
 *
 * struct config owns all its strings. config_init_default fills the
 * built-in default; config_load reads a YAML file on top of it (every key
 * is optional, a key given replaces the default value; lists replace, they
 * do not append). A config that failed to load is left as it was before the
 * call, so a caller never acts on half a config. */
#ifndef CUDAMOD_CONFIG_H
#define CUDAMOD_CONFIG_H

#include <stdbool.h>

#include "config-types.h"
#include "diag.h"
#include "util.h"

/* The formats and layouts by their names in the config, both ways. */
const char *module_format_to_string(enum module_format f);
enum module_format module_format_from_string(const char *s);
const char *module_layout_to_string(enum module_layout l);
enum module_layout module_layout_from_string(const char *s);
/* "off", "warn", "error" (config driver_check). */
const char *driver_check_to_string(enum driver_check c);
enum driver_check driver_check_from_string(const char *s);

/* The keys of the `env:` operations, indexed by enum env_op_kind,
 * NULL-terminated: the loader and the writer (config-write.c) spell them
 * (the components' are component_names, component.h). */
extern const char *const env_op_keys[ENV_OP_PUSHENV + 2];
#define ENV_OP_KINDS (ELEMENTSOF(env_op_keys) - 1)
/* A kind whose value is one string (setenv, pushenv), not a directory
 * of a path variable. */
bool env_op_is_scalar(enum env_op_kind kind);

/* The modulerc entry of a component's version, or NULL. */
const struct config_version_rc *config_version_rc(const struct config *c, unsigned component,
                                                  const char *version);

/* The built-in default (what `cudamod config --default` prints). */
void config_init_default(struct config *c);
void config_release(struct config *c);

/* Read YAML from path (or from buf) over c. Errors fill d with the file,
 * 1-based line and column, and the dotted key ("defaults.cuda"), and return
 * -EINVAL (schema or syntax), or a negative errno from reading the file.
 * On error c is unchanged. */
int config_load(struct config *c, const char *path, struct diag *d);
int config_load_buffer(struct config *c, const char *buf, size_t len, const char *file,
                       struct diag *d);

#endif
