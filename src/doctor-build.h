/* doctor-build.h: `cudamod doctor --build`: what a PyTorch source build
 * (`python setup.py develop`) started in this environment would pick, by
 * emulating the searches of PyTorch's find modules and CMake's
 * FindCUDAToolkit with the variables they read (STACK.md §7, §8, §10).
 *
 * Nothing is configured: the files each find_program/find_path/
 * find_library would return are looked up as CMake does (cmake-find.h)
 * from <Pkg>_ROOT, CMAKE_PREFIX_PATH (with what the find modules append to
 * it: their *_ROOT_DIR and the toolkit's root), CMAKE_LIBRARY_PATH /
 * CMAKE_INCLUDE_PATH, the HINTS, PATH, the system prefixes and the PATHS.
 * Versions come from the headers (§8), the CUDA majors of the libraries
 * from the components' module_cuda_major, else the metadata of their prefix
 * (metadata_module_cuda_major). Only the host compiler is run
 * (`-E -dM`), to read which it is. */
#ifndef CUDAMOD_DOCTOR_BUILD_H
#define CUDAMOD_DOCTOR_BUILD_H

#include <stdbool.h>

#include "cmake-find.h"
#include "diag.h"
#include "doctor.h"
#include "util.h"

/* The report's rows, in the order a configure meets them: the toolkit's
 * four, then the libraries of the component table in their
 * torch_build.order (build_row), then CUPTI. */
enum build_id {
        BUILD_TOOLKIT,  /* FindCUDA's root (CUDA_TOOLKIT_ROOT_DIR): header cuda.h, library nvcc */
        BUILD_NVCC,     /* the CUDA compiler CMake's CUDA language uses */
        BUILD_HOST,     /* the host compiler that nvcc runs */
        BUILD_CUDART,   /* FindCUDAToolkit: cuda_runtime.h and libcudart.so */
        BUILD_LIBRARIES, /* the first library's row (torch_build.order 1) */
        BUILD_CUPTI = BUILD_LIBRARIES + TORCH_BUILD_LIBRARIES,
        N_BUILD,
};

struct build_component {
        const char *name;          /* static: "toolkit", "nvcc", "host-compiler", "cudart", "cudnn", ... */
        const char *label;         /* static: "cuDNN" */
        const struct component *kind; /* what it is of (the toolkit for toolkit, nvcc, cudart),
                                       * or NULL (host-compiler, cupti) */
        const char *option;        /* static: "USE_CUDNN", or NULL */
        const char *state;         /* static: "found", "not found", "off", "bundled", "not searched" */
        char *prefix;              /* the toolkit's root (toolkit, nvcc; cudart: FindCUDAToolkit's,
                                    * the `#$ TOP=` of `nvcc -v`), or NULL */
        struct cmake_find_hit header, library;
        char *version;             /* from its header (toolkit: version.json/txt, cuda.h; host: "GCC 12.2.0") */
        char *library_version;     /* from the library's file name, or NULL */
        unsigned long cuda_major;  /* what its library is built for; 0: unknown */
        /* How the configure ends for it (static): "on" (found, its option
         * stays on), "off" (its option off, given or turned off because
         * nothing is found), "fatal" (the configure stops on it),
         * "bundled" (NCCL: third_party/nccl is built), or NULL for a row
         * that was not searched (nothing before it found). */
        const char *verdict;
};

/* The probe compile of the CUDA compiler identification. */
struct build_compile {
        const char *state;  /* static: "passed", "failed", "not run" */
        char *why;          /* "not run": why; "failed": nvcc's first error lines */
        struct strv argv;   /* the command run (empty when not run) */
};

/* What torch.utils.cpp_extension (PyTorch 2.6) would build a CUDA
 * extension with in the same environment; its own rules, not CMake's. */
struct build_cpp_extension {
        char *cuda_home;   /* _find_cuda_home(): CUDA_HOME, else CUDA_PATH
                            * (os.environ.get('CUDA_HOME') or ...get('CUDA_PATH'):
                            * an empty CUDA_HOME gives way, an empty CUDA_PATH is
                            * taken), else the directory above the bin of
                            * shutil.which("nvcc"), else /usr/local/cuda (under the
                            * sysroot) when it exists; NULL: none */
        const char *from;  /* static: "CUDA_HOME", "CUDA_PATH", "PATH", "/usr/local/cuda", or NULL */
        char *nvcc;        /* build.ninja's: PYTORCH_NVCC when set, else cuda_home/bin/nvcc
                            * (not checked to exist); NULL without either */
        char *ccbin;       /* CC as it is (`-ccbin $CC`), or NULL: nvcc's own default */
        char *cxx;         /* get_cxx_compiler(): CXX, else "c++" */
};

struct build_report {
        struct build_component c[N_BUILD];
        struct build_cpp_extension cpp_extension;
        unsigned long cuda_major;  /* the toolkit's (root's) major; 0: none found */
        char *cuda_version;        /* "11.8", or NULL */
        struct strv loaded;        /* LOADEDMODULES */
        struct build_compile compile;
        char *glibc;               /* the glibc version ("2.41"), or NULL */
        struct doctor_finding *findings;
        size_t n_findings;
        size_t n_fatal;            /* of the findings, those the configure stops on */
        struct strv notes;
};

/* The findings' ids (besides doctor.h's DOCTOR_STUBS). */
#define BUILD_CONFLICTING_CUDA "conflicting-cuda" /* nvcc of another toolkit than FindCUDA's root */
#define BUILD_NO_CUDA_COMPILER "no-cuda-compiler" /* FindCUDA finds a toolkit, CMake no CUDA compiler */
#define BUILD_HOST_COMPILER "host-compiler"       /* a host compiler nvcc refuses */
#define BUILD_CUDA_MAJOR "cuda-major"             /* a library for another CUDA major */
#define BUILD_MIXED "mixed-install"               /* header and library from different installs */
#define BUILD_OPTION_OFF "option-off"             /* nothing found: PyTorch turns USE_* off */
#define BUILD_REQUIRED "required-missing"         /* USE_SYSTEM_NCCL (or USE_SYSTEM_LIBS) on, no NCCL:
                                                   * find_package(NCCL REQUIRED) stops cmake */
#define BUILD_CUDA_COMPILE "cuda-compile"         /* the probe .cu does not compile: CMake's CUDA
                                                   * compiler identification fails */
#define BUILD_GLIBC_MATH "glibc-math"             /* glibc >= 2.41's sinpi/cospi against the toolkit's
                                                   * crt/math_functions.h (CUDA before 13.0) */
#define BUILD_NO_CUB "no-cub"                     /* FindCUB finds no cub/cub.cuh (CUDA 13's is in
                                                   * include/cccl): "Cannot find CUB." stops cmake */
#define BUILD_NO_TOOLKIT "no-toolkit"             /* no CUDA toolkit: a CPU-only build */
#define BUILD_ARCH_LIST_UNSET "arch-list-unset"   /* TORCH_CUDA_ARCH_LIST unset on a node with no
                                                   * GPU: a build for every architecture */
#define BUILD_ARCH_LIST "arch-list"               /* a TORCH_CUDA_ARCH_LIST entry that is not
                                                   * PyTorch's syntax, or that the toolkit's
                                                   * nvcc does not compile for */

/* The row of component c, a library PyTorch's configure finds
 * (torch_build.order > 0). */
size_t build_row(const struct component *c);

/* The first CUDA release whose crt/math_functions.h agrees with glibc
 * 2.41's sinpi, sinpif, cospi, cospif (noexcept): CUDA 12.9 still clashes
 * (NVIDIA/cuda-samples#378, Ubuntu 25.04); 13.0's header tests glibc's
 * version (__NV_GLIBC_PROVIDES_IEC_60559_FUNCS). */
#define BUILD_GLIBC_FIXED_CUDA "13.0"

/* Emulate the configure in o->environ (NULL: the process's), and say
 * what torch.utils.cpp_extension would use there (ret->cpp_extension; a
 * note where its CUDA_HOME is another toolkit than the configure's). Under
 * o->sysroot (NULL: "/") the default places are looked up: /usr/local,
 * /usr, /opt, /etc/debian_version. The CUDA compiler identification is
 * predicted by compiling a probe .cu with the nvcc and host compiler
 * CMake would use, in that environment, in a private temporary
 * directory (not with o->no_compile, nor as root with programs another
 * user can change). TORCH_CUDA_ARCH_LIST is checked against the toolkit:
 * its syntax (PyTorch's), the architectures `nvcc --list-gpu-arch` names
 * (a table of the lowest each CUDA major keeps where nvcc does not say),
 * and, unset, whether the node shows a GPU (/proc/driver/nvidia/gpus,
 * /dev/nvidia0 under the sysroot; no program run). Returns 0. */
int doctor_build_run(const struct doctor_options *o, struct build_report *ret, struct diag *d);
void build_report_release(struct build_report *r);

#endif
