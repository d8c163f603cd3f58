/* version.h: version numbers and the file formats they are read from.
 *
 * Every parser here works on a buffer already read into memory (the caller
 * bounds the size) and never touches the filesystem, so each can be fuzzed
 * alone. A struct version holds 1 to 4 numeric components; a version is
 * plain data, nothing to release. */
#ifndef CUDAMOD_VERSION_H
#define CUDAMOD_VERSION_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

#define VERSION_MAX_PARTS 4

struct version {
        unsigned long n[VERSION_MAX_PARTS];
        unsigned count; /* 0: no version */
};

/* Parse "12", "12.4", "12.4.131", "9.7.1.26": digits separated by single
 * dots, 1 to 4 parts, each fitting in 9 digits. The whole string must be
 * consumed. Returns 0 or -EINVAL. */
int version_parse(const char *s, struct version *ret);
/* Like version_parse, but stops at the first character that cannot continue
 * the version and stores its address in *ret_end (may be NULL). At least one
 * digit is required. */
int version_parse_prefix(const char *s, struct version *ret, const char **ret_end);
/* Numeric comparison part by part; a missing part counts as -1, so
 * 12.4 < 12.4.0 < 12.4.1. Returns <0, 0, >0. */
int version_compare(const struct version *a, const struct version *b);
/* Format the first `parts` parts (all when parts == 0); newly allocated. */
char *version_to_string(const struct version *v, unsigned parts);
/* The version cut to its first `parts` parts. */
struct version version_truncate(const struct version *v, unsigned parts);

/* The CUDA toolkit components whose versions a scan records. */
enum cuda_comp {
        CUDA_COMP_CUDART,
        CUDA_COMP_NVCC,
        CUDA_COMP_NVRTC,
        CUDA_COMP_CUPTI,
        CUDA_COMP_CUBLAS,
        CUDA_COMP_CUFFT,
        CUDA_COMP_CURAND,
        CUDA_COMP_CUSOLVER,
        CUDA_COMP_CUSPARSE,
        CUDA_COMP_NVJITLINK,
        _CUDA_COMP_MAX,
        _CUDA_COMP_INVALID = -1,
};

/* "cudart", "nvcc", …: the keys of the JSON "components" object. */
const char *cuda_comp_to_string(enum cuda_comp c);
/* From a version.json key ("cuda_cudart", "libcublas", …). */
enum cuda_comp cuda_comp_from_version_json_key(const char *key);
/* From a pip distribution name, with or without a -cuNN suffix, dashes or
 * underscores ("nvidia-cuda-runtime-cu12", "nvidia_cublas"). */
enum cuda_comp cuda_comp_from_pip_name(const char *name);

/* version.json of CUDA >= 11.1. `cuda` is MAJOR.MINOR from the "cuda" entry
 * (which may be a date stamp such as 12.6.20241114); `release` is the full
 * "cuda" value when its third part is an update number (< 100), else
 * count 0. components[] holds each known component's version string, or
 * NULL. Invalid or truncated JSON, or a missing/invalid "cuda" entry, is
 * -EBADMSG with a diag naming file, line and column. */
struct version_json {
        struct version cuda;
        struct version release;
        char *components[_CUDA_COMP_MAX];
};
int version_json_parse(const char *buf, size_t len, const char *file, struct version_json *ret,
                       struct diag *d);
void version_json_release(struct version_json *vj);

/* version.txt of CUDA <= 11.0: first line "CUDA Version X.Y.Z". */
int version_txt_parse(const char *buf, size_t len, const char *file, struct version *ret,
                      struct diag *d);

/* Find `#define NAME <integer>` anchored at the start of a line (leading
 * blanks and blanks after '#' allowed), matching NAME as a whole token.
 * Returns 0, -ENOENT when absent, -EINVAL when the value is not an integer. */
int header_define_long(const char *buf, size_t len, const char *name, long *ret);

/* Three `#define NAME <integer>` (each 0 to 999999999) as MAJOR.MINOR.PATCH:
 * the version headers that spell their parts out (magma_types.h's
 * MAGMA_VERSION_MAJOR, _MINOR, _MICRO). -ENOENT when one is absent,
 * -EINVAL when one is not such an integer. */
int header_define_triple(const char *buf, size_t len, const char *major, const char *minor,
                         const char *patch, struct version *ret);
/* cuda.h CUDA_VERSION (MAJOR*1000 + MINOR*10) as MAJOR.MINOR. */
int cuda_header_parse(const char *buf, size_t len, struct version *ret);
/* cudnn_version.h (or cudnn.h <= 7): CUDNN_MAJOR.CUDNN_MINOR.CUDNN_PATCHLEVEL. */
int cudnn_header_parse(const char *buf, size_t len, struct version *ret);
/* nccl.h: NCCL_MAJOR.NCCL_MINOR.NCCL_PATCH. When NCCL_VERSION_CODE is present
 * and disagrees with the parts (by the formula of the version), -EBADMSG. */
int nccl_header_parse(const char *buf, size_t len, struct version *ret);

/* dist-info METADATA: the "Name:" and "Version:" headers (before the first
 * blank line). Both are required; newly allocated. */
int metadata_parse(const char *buf, size_t len, char **ret_name, char **ret_version);

/* "Cuda compilation tools, release 13.0, V13.0.88" (anywhere in s):
 * ret_release = 13.0, ret_nvcc = 13.0.88. */
int nvcc_release_parse(const char *s, struct version *ret_release, struct version *ret_nvcc);
/* "NCCL version 2.28.9+cuda13.0": ret_nccl = 2.28.9, ret_cuda = 13.0. */
int nccl_version_string_parse(const char *s, struct version *ret_nccl, struct version *ret_cuda);

/* A shared-library file name "libX.so.A[.B[.C]]" for library stem "libX":
 * the version after ".so.". -ENOENT when the name is not of that library
 * (libcudart.so, libcudart_static.a, libcudart.so.12.bak are not). */
int soname_version_parse(const char *filename, const char *stem, struct version *ret);

/* What a directory or archive name tells about an install, e.g.
 *   cudnn-linux-x86_64-9.7.1.26_cuda12-archive   version 9.7.1.26, cuda 12
 *   cudnn-11.4-linux-x64-v8.2.4.15               version 8.2.4.15, cuda 11.4
 *   cudnn-9.17.0.29-13-<spack hash>              version 9.17.0.29, cuda 13
 *   8.9.2.26-CUDA-12.1.1 (EasyBuild, parent cuDNN) version 8.9.2.26, cuda 12.1.1
 *   nccl_2.21.5-1+cuda12.4_x86_64                version 2.21.5, cuda 12.4
 *   2.18.3-GCCcore-12.3.0-CUDA-12.1.1            version 2.18.3, cuda 12.1.1
 *   cuda-12.4.0-<spack hash>, cuda-12.4, 12.4.0 (EasyBuild, parent CUDA)
 *   nvidia_cudnn_cu13-9.19.0.56.dist-info        version 9.19.0.56, cuda 13
 * `component` is "cuda", "cudnn" or "nccl"; `parent` is the parent
 * directory's base name (EasyBuild puts the name there) or NULL. Returns
 * 0 when anything was found, -ENOENT otherwise; unknown parts stay count 0.
 * A compiler version (GCCcore-12.3.0) is never taken for a CUDA version. */
struct name_hint {
        struct version version;
        struct version cuda;
};
int name_hint_parse(const char *component, const char *name, const char *parent,
                    struct name_hint *ret);
/* For the components' own name forms (component.h name_hint): a version
 * at p that ends at the end of the name or at a separator ('-', '_',
 * '+'); and the CUDA version after a "cuda" word that starts at a
 * separator in tail: "_cuda12", "+cuda12.4", "-cuda-12.1.1" (EasyBuild),
 * "-CUDAcore-12.6.2", "cuda12" (never "-GCCcore-12.3.0"). */
bool name_version(const char *p, struct version *ret, const char **ret_end);
bool name_cuda_marker(const char *tail, struct version *ret);

#endif
