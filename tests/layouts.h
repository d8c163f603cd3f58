/* layouts.h: one fixture per real-world install layout (LAYOUTS.md), shared
 * by the golden tests and the detector suites. Each builder makes its tree
 * under root and returns the scan roots to pass (relative to root). */
#ifndef CUDAMOD_LAYOUTS_H
#define CUDAMOD_LAYOUTS_H

struct layout_fixture {
        const char *name;
        void (*build)(const char *root);
        const char *roots[4]; /* relative to the fixture root; NULL-terminated */
};

/* NULL-name-terminated. */
extern const struct layout_fixture layout_fixtures[];
const struct layout_fixture *layout_fixture_find(const char *name);

#endif
