/* lazy.h: the lazy checks of `cudamod validate` that the components name
 * as their `lazy` (lazy.c), below the component files, and what they
 * share with the closure check (validate-elf.c): the resolver's view of
 * the module under test and its own libraries. */
#ifndef CUDAMOD_LAZY_H
#define CUDAMOD_LAZY_H

#include "validate-check.h"
#include "elf-file.h"
#include "resolve.h"

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

/* lazy: what is dlopen()ed later resolves too (PYTORCH.md R3, R5, R7):
 * - cudnn: the sub-libraries libcudnn_*.so.<major> (the module's kind's
 *   `dlopened`) resolve, all from one directory and of one version (the
 *   file versions), and that directory is libcudnn's; the one cuDNN
 *   version reachable through LD_LIBRARY_PATH (two libcudnn.so.<major> in
 *   different directories: fail); the CUDA major the cuDNN build targets
 *   (from the sub-libraries' DT_NEEDED libcublasLt.so.N / libnvrtc.so.N,
 *   or for cuDNN 9, which dlopen()s them, the names in their read-only
 *   data) has libcublasLt.so.N and libnvrtc.so.N resolvable;
 * - cuda: libnvJitLink.so.N resolves from the same toolkit as
 *   libcusparse.so.N, or one at least as new (file versions).
 * The components' `lazy` (m->kind is theirs); check_lazy
 * (validate-elf.h) calls them. */
void validate_lazy_cuda(const struct validate_module *m, struct check *ret);
void validate_lazy_cudnn(const struct validate_module *m, struct check *ret);

#endif
