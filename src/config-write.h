/* config-write.h: the site config written back as YAML
 * (config-write.c): `cudamod config`. */
#ifndef CUDAMOD_CONFIG_WRITE_H
#define CUDAMOD_CONFIG_WRITE_H

#include "config-types.h"
#include "strbuf.h"

/* The config as a YAML document that config_load reads back to an equal
 * config (a round trip); keys in the order of config.c's table. */
void config_to_yaml(const struct config *c, struct strbuf *out);

#endif
