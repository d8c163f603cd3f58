/* scanhelp.h: run the scanner in-process on a fixture and look installs up. */
#ifndef CUDAMOD_SCANHELP_H
#define CUDAMOD_SCANHELP_H

#include "scan.h"

/* Scan the given roots (relative to root); aborts the test on failure. */
void scan_fixture(const char *root, const char *const *rel_roots, struct scan_result *ret);
/* The install of component whose prefix ends with suffix, or NULL. */
const struct install *find(const struct scan_result *r, const struct component *c, const char *suffix);
/* The version as a string ("" when unknown), in a static buffer. */
const char *ver(const struct version *v);
size_t count_component(const struct scan_result *r, const struct component *c);

#endif
