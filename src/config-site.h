/* config-site.h: the site's module setup in the config
 * (config-site.c): family, modulepath, lmod. */
#ifndef CUDAMOD_CONFIG_SITE_H
#define CUDAMOD_CONFIG_SITE_H

#include <stdbool.h>

#include "config-types.h"

struct parser; /* config-yaml.h */

/* Whether generate rebuilds a spider cache. */
bool config_spider_cache_enabled(const struct config *c);

/* The keys family, modulepath and lmod: their defaults, release and
 * copy, and their readers. */
void config_site_init_default(struct config *c);
void config_site_release(struct config *c);
void config_site_copy(struct config *dst, const struct config *src);
int config_parse_family(struct parser *p, struct config *c);
int config_parse_modulepath(struct parser *p, struct config *c);
int config_parse_lmod(struct parser *p, struct config *c);

#endif
