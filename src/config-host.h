/* config-host.h: the host compiler the site configures for a CUDA major
 * (config-host.c): read by plan.c and by the toolkit's own `ops`
 * (component-cuda.c), so it lies below the component files, beside
 * config-types.h rather than in config.c, which reads the table. */
#ifndef CUDAMOD_CONFIG_HOST_H
#define CUDAMOD_CONFIG_HOST_H

#include "config-types.h"

/* The host_compiler entry for a CUDA major, or NULL. */
const struct config_host_compiler *config_host_compiler(const struct config *c, long cuda_major);

#endif
