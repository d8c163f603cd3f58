/* name-hint.h: what a directory or archive name tells about an install
 * (name-hint.c), for the detectors. It reads the descriptor it is given
 * (the component's own name forms) and the component names, never the
 * table, so that the component files can call it. */
#ifndef CUDAMOD_NAME_HINT_H
#define CUDAMOD_NAME_HINT_H

#include <stdbool.h>

#include "version.h"

/* What a directory or archive name tells about an install, e.g.
 *   cudnn-linux-x86_64-9.7.1.26_cuda12-archive   version 9.7.1.26, cuda 12
 *   cudnn-11.4-linux-x64-v8.2.4.15               version 8.2.4.15, cuda 11.4
 *   cudnn-9.17.0.29-13-<spack hash>              version 9.17.0.29, cuda 13
 *   8.9.2.26-CUDA-12.1.1 (EasyBuild, parent cuDNN) version 8.9.2.26, cuda 12.1.1
 *   nccl_2.21.5-1+cuda12.4_x86_64                version 2.21.5, cuda 12.4
 *   2.18.3-GCCcore-12.3.0-CUDA-12.1.1            version 2.18.3, cuda 12.1.1
 *   cuda-12.4.0-<spack hash>, cuda-12.4, 12.4.0 (EasyBuild, parent CUDA)
 *   nvidia_cudnn_cu13-9.19.0.56.dist-info        version 9.19.0.56, cuda 13
 * for the component c (&component_cudnn); `parent` is the parent
 * directory's base name (EasyBuild puts the name there) or NULL. Returns
 * 0 when anything was found, -ENOENT otherwise (-EINVAL for no c or no
 * name); unknown parts stay count 0. A compiler version (GCCcore-12.3.0)
 * is never taken for a CUDA version. */
struct name_hint {
        struct version version;
        struct version cuda;
};
struct component;
int name_hint_of(const struct component *c, const char *name, const char *parent,
                 struct name_hint *ret);
/* For the components' own name forms (component.h name_hint): a version
 * at p that ends at the end of the name or at a separator ('-', '_',
 * '+'); and the CUDA version after a "cuda" word that starts at a
 * separator in tail: "_cuda12", "+cuda12.4", "-cuda-12.1.1" (EasyBuild),
 * "-CUDAcore-12.6.2", "cuda12" (never "-GCCcore-12.3.0"). */
bool name_version(const char *p, struct version *ret, const char **ret_end);
bool name_cuda_marker(const char *tail, struct version *ret);

#endif
