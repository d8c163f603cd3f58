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

/* pip distribution names of interest are short. */
#define PIP_NAME_MAX 128
/* Normalise a pip distribution name as PEP 503 does (lowercase, every run of
 * '-', '_', '.' becomes one '-') into buf, then cut a trailing "-cuNN" and
 * store NN in *ret_cuda_major (0 when absent). False when the name does not
 * fit in buf. */
bool pip_name_normalise(const char *name, char *buf, size_t size, unsigned long *ret_cuda_major);

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
        /* "nvidia_driver"."version" ("575.51.03", written by the runfile),
         * when it is digits and dots; else NULL. */
        char *nvidia_driver;
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

/* The version declared by `#define` lines of its parts (header_define_long):
 * names[0..2] MAJOR, MINOR, PATCH (CUSPARSELT_VER_MAJOR, ...), all needed;
 * names[3], when not NULL and defined, a fourth part (the build). Each must
 * be 0 to 999999999. Returns 0, -ENOENT when one of the three is absent,
 * -EINVAL when one is not a number. */
int header_define_triple(const char *buf, size_t len, const char *const names[4],
                         struct version *ret);
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

#endif
