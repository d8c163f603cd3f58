/* fixture.h: fake install trees for the tests, in a fresh temporary
 * directory each, with real ELF stub libraries (tests/elfstub.h).
 *
 * Every builder aborts the test (ck_abort) when the filesystem refuses, so a
 * test never runs on a half-built tree. Paths are relative to the fixture
 * root unless they start with '/'. fx_new returns the root, which the test
 * owns and passes to fx_free (which removes the whole tree). */
#ifndef CUDAMOD_FIXTURE_H
#define CUDAMOD_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "elfstub.h"

char *fx_new(void);
void fx_free(char *root);

void fx_mkdir(const char *root, const char *rel);
void fx_write(const char *root, const char *rel, const char *content);
void fx_symlink(const char *root, const char *rel, const char *target);
/* Add n empty files f<first>…f<first+n-1> to dir (hard links, a new file
 * every 60,000: ext4 allows 65,000 links to one): a huge directory, cheaply. */
void fx_many_files(const char *dir, size_t first, size_t n);
void fx_elf(const char *root, const char *rel, const struct elfstub *s);
/* A shared library stub: real file lib.so.FULL (or only the soname file
 * when full is NULL, as wheels ship), soname link, and the dev link. */
void fx_library(const char *root, const char *dir, const char *stem, const char *soname_ver,
                const char *full_ver, unsigned machine, const char *const *needed,
                const char *const *strings);

enum fx_version_file { FX_VERSION_JSON, FX_VERSION_JSON_DATE, FX_VERSION_TXT, FX_VERSION_NONE };

struct fx_cuda {
        const char *version;   /* "12.4" */
        const char *release;   /* "12.4.1" */
        const char *cudart;    /* "12.4.127" */
        const char *nvcc;      /* "12.4.131" */
        const char *triple;    /* default "x86_64-linux" */
        enum fx_version_file version_file;
        bool no_math;          /* HPC SDK cuda/X.Y: no cuBLAS */
        bool cupti;            /* extras/CUPTI */
        /* CUDA 12 and later: libcusparse.so.12 (in CUDA 13 too; it needs
         * libnvJitLink.so.N) and libnvJitLink.so.N, real file
         * libnvJitLink.so.<cudart> as the toolkit ships it (R7). Off by
         * default: the suites written before it expect a toolkit without
         * them. */
        bool cusparse;
        /* The forward-compatibility libraries of that driver ("575.51.03")
         * in PREFIX/compat (or compat_dir), as NVIDIA's cuda-compat-X-Y
         * package installs them; NULL: none. */
        const char *compat;
        const char *compat_dir; /* default "compat"; conda: "cuda-compat" */
};

/* A runfile/deb tree: PREFIX/{bin/nvcc,targets/T/{include,lib},include and
 * lib64 links,nvvm,version.json|version.txt}. */
void fx_cuda_toolkit(const char *root, const char *prefix, const struct fx_cuda *c);

struct fx_cudnn {
        const char *version;   /* "9.7.1" */
        unsigned cuda_major;   /* what its libraries load (0: nothing) */
        const char *lib;       /* "lib" or "lib64" (default "lib") */
        unsigned machine;      /* default x86-64 */
        bool soname_only;      /* wheels: libcudnn.so.9 only */
        const char *include;   /* default "include" */
};
void fx_cudnn(const char *root, const char *prefix, const struct fx_cudnn *c);

struct fx_nccl {
        const char *version;   /* "2.21.5" */
        const char *cuda;      /* "12.4" in "NCCL version 2.21.5+cuda12.4" (NULL: none) */
        unsigned machine;
        bool soname_only;
        const char *lib;       /* default "lib" */
        const char *include;   /* default "include" */
};
void fx_nccl(const char *root, const char *prefix, const struct fx_nccl *c);

struct fx_magma {
        const char *version;   /* "2.9.0" */
        unsigned cuda_major;   /* libmagma.so needs libcudart.so.N and libcublas.so.N (0: neither) */
        bool no_soname;        /* a make.inc build: no DT_SONAME */
        bool static_only;      /* lib/libmagma.a only (PyTorch's builds) */
        bool ilp64;            /* magma_types.h defines MAGMA_ILP64 */
        const char *lib;       /* default "lib" */
        unsigned machine;
};
/* MAGMA at root/prefix: include/{magma_types.h (its real version macros),
 * magma_v2.h, magma.h}, lib/libmagma.so (soname libmagma.so; DT_NEEDED
 * libcudart.so.N, libcublas.so.N, libcusparse.so.12 as a CMake build
 * against CUDA N >= 12 has; .11 for 11) or only libmagma.a, and
 * lib/pkgconfig/magma.pc. */
void fx_magma(const char *root, const char *prefix, const struct fx_magma *c);
struct fx_cudss {
        const char *version;   /* "0.7.1" */
        unsigned cuda_major;   /* libcudss needs libcublas.so.N, libcublasLt.so.N (0: neither) */
        unsigned machine;
        bool soname_only;      /* wheels: libcudss.so.0 only */
        const char *lib;       /* default "lib" */
        const char *include;   /* default "include" */
};
/* cudss.h with CUDSS_VER_MAJOR/MINOR/PATCH, libcudss.so.0 (real file
 * libcudss.so.<version>) and its threading layer libcudss_mtlayer_gomp.so.0
 * (which needs libgomp.so.1), as NVIDIA's archives ship them. */
void fx_cudss(const char *root, const char *prefix, const struct fx_cudss *c);
struct fx_cusparselt {
        const char *version;   /* "0.8.1.1": MAJOR.MINOR.PATCH.BUILD */
        unsigned machine;
        bool soname_only;      /* wheels: libcusparseLt.so.0 only */
        const char *lib;       /* default "lib" */
        const char *include;   /* default "include" */
        bool no_header;        /* NVIDIA's CUDA 13 wheel: lib/ alone */
        const char *const *strings; /* in the library: its size differs by them */
};
/* cusparseLt.h with the four CUSPARSELT_VER_* defines (and the includes of
 * the real one), libcusparseLt.so.0 -> .so.<version> with no libcudart
 * DT_NEEDED (it links the runtime statically), the dev link. */
void fx_cusparselt(const char *root, const char *prefix, const struct fx_cusparselt *c);
struct fx_cutensor {
        const char *version;   /* "2.2.0" */
        unsigned cuda_major;   /* libcutensor needs libcublasLt.so.N (0: not) */
        unsigned machine;
        bool soname_only;      /* wheels: libcutensor.so.2 only */
        bool no_header;        /* a second lib/<N> of an archive: the header is the first's */
        const char *lib;       /* default "lib" */
        const char *include;   /* default "include" */
};
/* cutensor.h with CUTENSOR_MAJOR/MINOR/PATCH, libcutensor.so.2 (real file
 * libcutensor.so.<version>, needing libcublasLt.so.N) and the multi-GPU
 * libcutensorMg.so.2 (needing libcutensor.so.2), as NVIDIA's archives
 * ship them. */
void fx_cutensor(const char *root, const char *prefix, const struct fx_cutensor *c);
struct fx_nvshmem {
        const char *version;   /* "3.4.5" */
        /* NVSHMEM_TRANSPORT_PLUGIN_MAJOR_VERSION (default 3, as 3.1-3.4);
         * plugin_major: the nvshmem_transport_ibrc.so.N it ships (default
         * the same) */
        unsigned transport, plugin_major;
        unsigned machine;
        bool soname_only;      /* wheels: libnvshmem_host.so.3 only, no dev link */
        bool no_device;        /* runtime-only (conda libnvshmem3): no libnvshmem_device.a */
        bool no_bin;           /* no bin/nvshmem-info */
        const char *lib;       /* default "lib" */
        const char *include;   /* default "include" */
};
/* PREFIX/include/{nvshmem.h,nvshmemx.h,non_abi/nvshmem_version.h,
 * device_host_transport/nvshmem_constants.h (the OpenSHMEM 1.3 spec
 * version)}, PREFIX/lib/{libnvshmem_host.so.3[.M.m.p] (no libcudart:
 * NVSHMEM links it statically), libnvshmem_device.a, libnvshmem_device.bc,
 * nvshmem_bootstrap_uid.so.3, nvshmem_transport_ibrc.so.N}, bin/nvshmem-info. */
void fx_nvshmem(const char *root, const char *prefix, const struct fx_nvshmem *c);

/* Copy the fake CUDA library $CUDAMOD_FAKE_<var> (tests/fakecuda, set by
 * meson test) to root/rel, parents created, replacing what was there,
 * mode 0755. */
void fx_fake_library(const char *root, const char *rel, const char *var);

/* A dist-info directory with METADATA Name/Version. */
void fx_dist_info(const char *root, const char *dir, const char *name, const char *version);

/* A Spack prefix's .spack/spec.json (Spack 0.22's form, trimmed): name at
 * version ("3.1.7-1"), its cuda dependency (by hash) at cuda ("12.6.0"). */
void fx_spack_spec(const char *root, const char *prefix, const char *name, const char *version,
                   const char *cuda);
/* The same with the RECORD pip writes: files (relative to site, as they
 * are now: sha256 in urlsafe base64, size), then the dist-info's own. */
void fx_wheel_record(const char *root, const char *site, const char *name, const char *version,
                     const char *const *files);

struct fx_torch {
        const char *version;     /* version.py __version__ (default "2.5.1") */
        const char *cuda;        /* version.py cuda ("12.4"); NULL: `cuda: Optional[str] = None` */
        unsigned cuda_major;     /* the libcudart.so.N etc. its libraries need (default: major of cuda, else 12) */
        unsigned cudnn_major;    /* libtorch_cuda.so needs libcudnn.so.N (0: no cuDNN) */
        bool nccl;               /* libtorch_cuda.so needs libnccl.so.2 */
        bool cusparselt;         /* libtorch_cuda.so needs libcusparseLt.so.0 */
        const char *const *extra_needed; /* more sonames libtorch_cuda.so needs, before libcuda.so.1
                                          * ("libcudss.so.0"), NULL-terminated, or NULL */
        bool magma;              /* libtorch_cuda.so needs libmagma.so (a build against a shared MAGMA) */
        bool nvshmem;            /* libtorch_cuda.so needs libnvshmem_host.so.3 (for libtorch_nvshmem.so) */
        bool cusparse;           /* libtorch_cuda.so needs libcusparse (a toolkit made with .cusparse) */
        /* Extra RUNPATH entries after $ORIGIN, ':'-separated; entries not
         * starting with '/' or '$' are made absolute below root (NULL: just
         * $ORIGIN). */
        const char *runpath;
        /* pip-wheel style: DT_RPATH $ORIGIN/../../nvidia/cudnn/lib:... (then
         * $ORIGIN and the runpath entries) instead of DT_RUNPATH. */
        bool wheel_rpath;
        bool no_version_py;
};

/* A source-built torch package at root/dir ("site-packages/torch"):
 * __init__.py, version.py (the real generated format), _C.cpython-312-
 * x86_64-linux-gnu.so (needs libtorch.so, RUNPATH $ORIGIN/lib) and lib/ with
 * libc10.so, libc10_cuda.so, libtorch_cpu.so, libtorch_cuda.so, libtorch.so
 * and libtorch_global_deps.so, each with its soname and the DT_NEEDED of a
 * real build restricted to torch's own and the CUDA stack's sonames (only
 * those the fixtures above create, so that nothing depends on the host):
 *   libtorch_global_deps.so  libcudart.so.N libcublas.so.N
 *   libc10_cuda.so           libc10.so libcudart.so.N
 *   libtorch_cuda.so         libc10.so libc10_cuda.so libtorch_cpu.so libcudart.so.N
 *                            libcublas.so.N libcublasLt.so.N [libcusparse.so.12 (.11 for 11)]
 *                            [libcudnn.so.M] [libnccl.so.2] [libcusparseLt.so.0]
 *                            [libnvshmem_host.so.3] [libmagma.so]
 *                            [extra_needed] libcuda.so.1
 *   libtorch.so              libtorch_cpu.so libtorch_cuda.so */
void fx_torch(const char *root, const char *dir, const struct fx_torch *t);

/* Debian's source-built torch (python3-torch-cuda 2.6 in trixie), as its
 * packages lay it out (read from python3-torch-cuda and libtorch-cuda-2.6
 * 2.6.0+dfsg-7+b1):
 *   DIST/torch/version.py      __version__ '2.6.0+debian', cuda '12.4',
 *                              git_version 'Unknown'
 *   DIST/torch/_C.cpython-313-x86_64-linux-gnu.so
 *                              RUNPATH $ORIGIN/lib, needs libtorch_python.so.2.6
 *                              (not in torch/lib: found in SYS)
 *   DIST/torch/lib/libX.so     links ../../../../x86_64-linux-gnu/libX.so.2.6
 *                              for c10 c10_cuda caffe2_nvrtc shm torch torch_cpu
 *                              torch_cuda_linalg torch_global_deps torch_python;
 *                              no libtorch_cuda.so
 *   SYS/libX.so.2.6.0 and the libX.so.2.6 links, with the real sonames
 *                              and DT_NEEDED restricted to torch's own and the
 *                              CUDA stack's sonames the fixtures have:
 *     libc10_cuda           libc10.so.2.6 libcudart.so.12
 *     libcaffe2_nvrtc       libcuda.so.1
 *     libshm                libtorch_cpu.so.2.6 libc10.so.2.6
 *     libtorch              libtorch_cpu.so.2.6 libtorch_cuda.so.2.6
 *     libtorch_cpu          libc10.so.2.6
 *     libtorch_cuda         libc10_cuda.so.2.6 libcudart.so.12 libcusparse.so.12
 *                           libnccl.so.2 libcublas.so.12 libcublasLt.so.12
 *                           libcudnn.so.9 libc10.so.2.6 libtorch_cpu.so.2.6
 *     libtorch_cuda_linalg  libtorch_cpu.so.2.6 libtorch_cuda.so.2.6
 *                           libc10_cuda.so.2.6 libcudart.so.12 libc10.so.2.6
 *     libtorch_global_deps  libcudart.so.12
 *     libtorch_python       libtorch.so.2.6 libshm.so.2.6 libtorch_cpu.so.2.6
 *                           libtorch_cuda.so.2.6 libc10_cuda.so.2.6
 *                           libcudart.so.12 libc10.so.2.6 libcudnn.so.9
 * where DIST is root/usr/lib/python3/dist-packages and SYS is
 * root/usr/lib/x86_64-linux-gnu. The real ones have no RUNPATH: the
 * loader cache finds them (fx_ldcache). sys_runpath: give each SYS library
 * and _C the RUNPATH SYS instead, for a test that cannot give doctor a
 * loader cache (the command reads /etc/ld.so.cache). */
#define FX_DEBIAN_TORCH "usr/lib/python3/dist-packages/torch"
#define FX_DEBIAN_SYS "usr/lib/x86_64-linux-gnu"
void fx_debian_torch(const char *root, bool sys_runpath);

/* A loader cache ("glibc-ld.so.cache1.1", as ldconfig writes it) at
 * root/rel mapping each lib*.so.* name of SYS (below root) to its file
 * there. */
void fx_ldcache(const char *root, const char *rel, const char *sys);

#endif
