/* validate-elf.h: the closure and lazy checks of `cudamod validate`
 * (validate-elf.c): what the module's libraries need, and what they
 * dlopen() later, resolve with its environment (resolve.h). */
#ifndef CUDAMOD_VALIDATE_ELF_H
#define CUDAMOD_VALIDATE_ELF_H

#include "elf-file.h"
#include "resolve.h"
#include "validate.h"

/* closure: every DT_NEEDED of every shared library (ELF ET_DYN, regular
 * file or symlink to one, each real file once) in own_libdirs resolves
 * with m->ld_library_path, the library's RUNPATH/RPATH and the system
 * loader path; the driver's libraries are exempt (they come from the
 * driver) and listed as such. Fail names each library and its missing
 * needs (at most a few, then "and N more") and what to load or install. */
void check_closure(const struct validate_module *m, struct check *ret);
/* lazy: what is dlopen()ed later resolves too (PYTORCH.md R3, R5, R7):
 * - cudnn: the sub-libraries libcudnn_*.so.<major> resolve, all from one
 *   directory and of one version (the file versions), and that directory
 *   is libcudnn's; the one cuDNN version reachable through LD_LIBRARY_PATH
 *   (two libcudnn.so.<major> in different directories: fail); the CUDA
 *   major the cuDNN build targets (from the sub-libraries' DT_NEEDED
 *   libcublasLt.so.N / libnvrtc.so.N, or for cuDNN 9, which dlopen()s
 *   them, the names in their read-only data) has libcublasLt.so.N and
 *   libnvrtc.so.N resolvable;
 * - cuda: libnvJitLink.so.N resolves from the same toolkit as
 *   libcusparse.so.N, or one at least as new (file versions);
 * - other kinds: skip. */
/* The lazy check of the toolkit (libcusparse's libnvJitLink), its
 * component's `lazy`; cuDNN's is component-cudnn.c's. */
void validate_lazy_cuda(const struct validate_module *m, struct check *ret);
void check_lazy(const struct validate_module *m, struct check *ret);

/* For the components' lazy checks: the resolver's view of the module
 * under test, its LD_LIBRARY_PATH and the real loader cache (read per
 * check: it is small; one that cannot be read is a warning in f). */
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

#endif
