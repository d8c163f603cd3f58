/* validate-toolchain.h: the nvcc and cmake checks of `cudamod validate`
 * (validate-toolchain.c): what a PyTorch source build does first with a
 * CUDA module loaded. The host compiler queries they share with doctor
 * are toolchain.h's. */
#ifndef CUDAMOD_VALIDATE_TOOLCHAIN_H
#define CUDAMOD_VALIDATE_TOOLCHAIN_H

#include "validate.h"

/* nvcc: for a CUDA module that puts an nvcc on PATH, the host compilers
 * the environment gives nvcc (-ccbin in NVCC_APPEND_FLAGS or
 * NVCC_PREPEND_FLAGS, NVCC_CCBIN for CUDA 13, else `gcc` on nvcc's PATH)
 * and CMake (CUDAHOSTCXX) against the toolkit's crt/host_config.h (a
 * compiler it refuses: fail naming both and the config fix), then a .cu
 * program (a kernel and cudaGetDeviceCount) compiled and linked with
 * `nvcc -cudart shared` and started, all with m->env only: it must load
 * the module's libcudart. Without a driver cudaGetDeviceCount returns an
 * error, which is reported, not failed. Skip when o->compile is false,
 * for another module, or without an nvcc. Fail quotes nvcc's first error
 * lines. */
void check_nvcc(const struct validate_module *m, const struct validate_options *o, struct check *ret);
/* cmake: where cmake is in cudamod's PATH (o->cc_path), a project with
 * enable_language(CUDA) and find_package(CUDAToolkit REQUIRED) configured
 * with m->env only: CMake's CUDA compiler must be the module's nvcc, the
 * toolkit's bin directory the module's, its cudart in the module's
 * library directories, and the compiler's and the toolkit's versions equal
 * (PyTorch stops otherwise). Skip without cmake (saying so), for another
 * module, or without an nvcc. */
void check_cmake(const struct validate_module *m, const struct validate_options *o, struct check *ret);

#endif
