/* validate-elf.h: the closure and lazy checks of `cudamod validate`
 * (validate-elf.c): what the module's libraries need, and what they
 * dlopen() later, resolve with its environment (resolve.h). */
#ifndef CUDAMOD_VALIDATE_ELF_H
#define CUDAMOD_VALIDATE_ELF_H

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
/* The lazy checks of the toolkit (libcusparse's libnvJitLink) and of
 * cuDNN (its sub-libraries), the components' `lazy`. */
void validate_lazy_cuda(const struct validate_module *m, struct check *ret);
void validate_lazy_cudnn(const struct validate_module *m, struct check *ret);
void check_lazy(const struct validate_module *m, struct check *ret);

#endif
