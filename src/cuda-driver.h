/* cuda-driver.h: the NVIDIA kernel driver a CUDA toolkit needs.
 *
 * Two figures per toolkit, from NVIDIA's CUDA Toolkit Release Notes: the
 * driver of its major's minor-version compatibility (below it, nothing
 * built with the toolkit runs: cudaErrorInsufficientDriver), and the
 * driver the release shipped with (below it, programs run through
 * minor-version compatibility, but PTX of the toolkit cannot be JIT
 * compiled). Plain data, no filesystem. */
#ifndef CUDAMOD_CUDA_DRIVER_H
#define CUDAMOD_CUDA_DRIVER_H

#include <stdbool.h>

#include "version.h"

struct cuda_driver_minimum {
        const char *major_min;   /* "525.60.13": minor-version compatibility of the major */
        const char *release_min; /* "575.51.03": the release's own driver */
};

/* The minima of CUDA major.minor (a toolkit of a release the table does not
 * know gets its major's figure for both; a major it does not know, false).
 * release_driver, when not NULL, is the toolkit's own word (version.json's
 * "nvidia_driver") and replaces the table's release figure. The strings are
 * static or release_driver itself. */
bool cuda_driver_minimum(const struct version *cuda, const char *release_driver,
                         struct cuda_driver_minimum *ret);

/* Whether s is a driver version as NVIDIA writes them ("535.104.05",
 * "570.26"): 2 to 4 runs of 1 to 9 digits joined by dots, nothing else. */
bool cuda_driver_version_valid(const char *s);

#endif
