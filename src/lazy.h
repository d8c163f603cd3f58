/* lazy.h: the lazy check of `cudamod validate` that the toolkit names as
 * its `lazy` (lazy.c), below the component files, and what the
 * components' lazy checks share with the closure check (validate-elf.c):
 * the resolver's view of the module under test and its own libraries. */
#ifndef CUDAMOD_LAZY_H
#define CUDAMOD_LAZY_H

#include "elf-file.h"
#include "resolve.h"
#include "validate-check.h"

/* The resolver's view of the module under test: its LD_LIBRARY_PATH and
 * the real loader cache (read per check: it is small; one that cannot be
 * read is a warning in f). */
struct elf_context {
        struct resolve_env env;
        struct ldcache *cache;
};
void elf_context_init(struct elf_context *c, const struct validate_module *m, struct findings *f);
void elf_context_release(struct elf_context *c);

/* The module's library stem.so.N: its path (newly allocated), ELF facts
 * and N; NULL when absent or unreadable (reported in f). */
char *validate_own_library(const struct validate_module *m, const char *stem, struct elf_info *info,
                           unsigned long *major, struct findings *f);

/* lazy, the toolkit's `lazy` (m->kind is it; check_lazy in
 * validate-elf.h calls it): libnvJitLink.so.N resolves from the same
 * toolkit as libcusparse.so.N, or one at least as new (file versions).
 * cuDNN's is component-cudnn.c's (PYTORCH.md R3, R5, R7). */
void validate_lazy_cuda(const struct validate_module *m, struct check *ret);

#endif
