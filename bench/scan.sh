#!/usr/bin/env bash
# bench/scan.sh: how fast `cudamod scan` walks a large site, compared to find.
#
# A benchmark, not a test: nothing here is registered with meson test.
#
# What it measures
#   It builds, in a fresh mktemp -d directory, a synthetic site of N install
#   prefixes (default 1000) in the layouts of tests/layouts.c, spread over a
#   realistic structure and rotating through:
#     CUDA runfile trees  apps/cuda/V, opt/cuda-V, sw/spack/opt/spack/<arch>/
#                         <compiler>/cuda-V-<hash>, easybuild/software/CUDA/V
#                         (a few hundred headers, ~20 libraries, doc/,
#                         samples/, nsight and tools noise)
#     cuDNN 9 tarballs    apps/cudnn/cudnn-linux-x86_64-V_cudaN-archive,
#                         easybuild/software/cuDNN/V-CUDA-X.Y.Z
#     cuDNN 8 tarballs    apps/cudnn/V (lib64), spack .../cudnn-V-NN-<hash>
#     NCCL tarballs       apps/nccl/nccl_V-1+cudaX.Y_x86_64, EasyBuild, Spack
#     cu12 wheel trees    venvs/cu12-K/lib/python3.11/site-packages/nvidia/...
#     cu13 wheel trees    venvs/cu13-K/lib/python3.12/site-packages/nvidia/...
#     HPC SDK releases    opt/nvidia/hpc_sdk/Linux_x86_64/YY.M/{cuda,math_libs,comm_libs}
#     conda environments  conda/envs/env-K (CUDA, cuDNN and NCCL)
#   plus non-install directories (home/userK/projects/..., a conda base,
#   site-packages noise). Every install has its own version numbers, and
#   every prefix lies within depth 8 of the root (cudamod's default depth),
#   with the spellings sites use: venvs/cu12-K/lib/python3.11/site-packages/
#   nvidia/cudnn (depth 7), opt/nvidia/hpc_sdk/.../comm_libs/X.Y/nccl
#   (depth 8), sw/spack/opt/spack/<arch>/<compiler>/cuda-V-<hash> (depth 7).

#   Library files are ELF stubs written by tests/mkelfstub (each distinct
#   stub once, then copied), so they are tiny: the time measured is the
#   walk and the detectors' reads of small files, not reading 500 MB
#   libraries.
#
#   It then
#     1. checks that `cudamod scan --json ROOT` finds exactly the installs
#        created (by component and prefix; exit 1 otherwise, listing them);
#     2. times, with hyperfine on a warm cache, `cudamod scan --json ROOT`,
#        `cudamod scan ROOT` (the table) and `find ROOT` (stdout to
#        /dev/null), prints the markdown table and the scan/find ratio of
#        the means (goal: within 2x of find);
#     3. counts the system calls of the scan (--jobs 1 and the default) and
#        of find with strace -c -f, by call;
#     4. prints the peak RSS of one `cudamod scan --json ROOT` run
#        (/usr/bin/time -v).
#   bench/floor.sh measures against find on the synth:N trees of
#   tests/stress/mktree.py, and on a slow filesystem.
#
# How to run it
#   meson setup build && ninja -C build    # cudamod and tests/mkelfstub
#   bench/scan.sh [--builddir DIR] [--prefixes N] [--keep]
#     --builddir DIR   meson build directory (default: build)
#     --prefixes N     number of install prefixes (default: 1000)
#     --keep           keep the temporary tree and print where it is
#   Needs bash, python3, hyperfine (apt-get install hyperfine) and
#   /usr/bin/time (apt-get install time). Exit status: 0 done, 1 the scan
#   does not find what was created, 2 usage or missing tools.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

usage() {
        echo "usage: bench/scan.sh [--builddir DIR] [--prefixes N] [--keep]"
}

builddir=build
prefixes=1000
keep=0
while [ $# -gt 0 ]; do
        case "$1" in
        --builddir) [ $# -ge 2 ] || { usage >&2; exit 2; }; builddir=$2; shift 2 ;;
        --builddir=*) builddir=${1#*=}; shift ;;
        --prefixes) [ $# -ge 2 ] || { usage >&2; exit 2; }; prefixes=$2; shift 2 ;;
        --prefixes=*) prefixes=${1#*=}; shift ;;
        --keep) keep=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "bench/scan.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
        esac
done
case "$prefixes" in
'' | *[!0-9]*) echo "bench/scan.sh: --prefixes wants a positive number, not '$prefixes'" >&2; exit 2 ;;
esac
if [ "$prefixes" -lt 1 ]; then
        echo "bench/scan.sh: --prefixes wants a positive number" >&2
        exit 2
fi

src=$(cd "$(dirname "$0")/.." && pwd)
cudamod=$builddir/src/cudamod
mkelfstub=$builddir/tests/mkelfstub
for exe in "$cudamod" "$mkelfstub"; do
        if [ ! -x "$exe" ]; then
                echo "bench/scan.sh: '$exe' is missing: build first," >&2
                echo "  meson setup $builddir -Dtests=true && ninja -C $builddir" >&2
                echo "  (or pass --builddir DIR for another build directory)" >&2
                exit 2
        fi
done
if ! command -v hyperfine >/dev/null 2>&1; then
        echo "bench/scan.sh: install hyperfine (apt-get install hyperfine)" >&2
        exit 2
fi
if [ ! -x /usr/bin/time ]; then
        echo "bench/scan.sh: install GNU time for /usr/bin/time (apt-get install time)" >&2
        exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
        echo "bench/scan.sh: install python3 (apt-get install python3)" >&2
        exit 2
fi

work=$(realpath "$(mktemp -d "${TMPDIR:-/tmp}/cudamod-bench-XXXXXX")")
cleanup() {
        if [ "$keep" = 1 ]; then
                echo "kept: $work (tree in $work/root)"
        else
                rm -rf -- "$work"
        fi
}
trap cleanup EXIT
root=$work/root
mkdir -p "$root" "$work/stubs" "$work/bin"
# Run copies: a rebuild of the build directory during the run (ninja
# replaces the files) must not change or remove what is measured.
cp "$cudamod" "$work/bin/cudamod"
cp "$mkelfstub" "$work/bin/mkelfstub"
cudamod=$work/bin/cudamod
mkelfstub=$work/bin/mkelfstub

# --- 1. the tree -----------------------------------------------------------
echo "== building $prefixes install prefixes in $root"
start=$(date +%s.%N)
CUDAMOD_SRC=$src python3 - "$mkelfstub" "$root" "$prefixes" "$work/expected.tsv" "$work/stubs" <<'PY'
import base64, hashlib, os, shutil, subprocess, sys

mkelfstub, ROOT, N, EXPECTED, STUBS = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
MAX_DEPTH = 8  # cudamod's default depth

sys.path.insert(0, os.path.join(os.environ["CUDAMOD_SRC"], "tests"))
from treebuild import TreeBuilder  # noqa: E402

tree = TreeBuilder(ROOT, mkelfstub, STUBS)
P, mkdirs, write, link, elf, library = tree.path, tree.mkdirs, tree.write, tree.link, tree.elf, tree.library
expected = []  # (component, prefix relative to ROOT, version, layout)


def expect(component, prefix, version, layout):
    depth = prefix.count("/") + 1
    if depth > MAX_DEPTH:
        sys.exit("bench: internal error: %s is at depth %d > %d" % (prefix, depth, MAX_DEPTH))
    expected.append((component, prefix, version, layout))


def spack_hash(name):
    h = hashlib.sha256(name.encode()).digest()
    return base64.b32encode(h).decode().lower()[:32]


def files(d, names, text="/* placeholder */\n"):
    for n in names:
        write(d + "/" + n, text)


# --- version numbers: every install gets its own --------------------------
seq = {"cuda12": 0, "cuda13": 0, "cudnn9": 0, "cudnn8": 0, "nccl": 0}


def nxt(kind):
    s = seq[kind]
    seq[kind] += 1
    return s


def cuda_versions(major):
    s = nxt("cuda%d" % major)
    m, p = s % 10, s // 10
    return {
        "major": major, "xy": "%d.%d" % (major, m), "release": "%d.%d.%d" % (major, m, p),
        "cudart": "%d.%d.%d" % (major, m, 100 + p), "nvcc": "%d.%d.%d" % (major, m, 200 + p),
        "code": major * 1000 + m * 10, "lib": "%d.%d.%d.%d" % (major, m, p, 10 + p),
    }


def cudnn9_version():
    s = nxt("cudnn9")
    return (9, s % 20, s // 20, 10 + s % 80)


def cudnn8_version():
    s = nxt("cudnn8")
    return (8, s % 10, s // 10, 20 + s % 70)


def nccl_version():
    s = nxt("nccl")
    return (2, 10 + s % 20, s // 20)


def vs(t, n=3):
    return ".".join(str(x) for x in t[:n])


# --- noise shared by the layouts --------------------------------------------
CUDA_TOP_HEADERS = (
    "builtin_types.h channel_descriptor.h common_functions.h cooperative_groups.h cuComplex.h "
    "cublas.h cublasLt.h cublasXt.h cublas_api.h cublas_v2.h cuda_awbarrier.h cuda_bf16.h "
    "cuda_bf16.hpp cuda_device_runtime_api.h cuda_egl_interop.h cuda_fp16.h cuda_fp16.hpp "
    "cuda_fp8.h cuda_fp8.hpp cuda_gl_interop.h cuda_occupancy.h cuda_pipeline.h cuda_profiler_api.h "
    "cuda_runtime.h cuda_surface_types.h cuda_texture_types.h cuda_vdpau_interop.h cudaEGL.h "
    "cudaGL.h cudaProfiler.h cudaTypedefs.h cudaVDPAU.h cufft.h cufftXt.h cufftw.h curand.h "
    "curand_kernel.h curand_discrete.h curand_normal.h curand_uniform.h cusolverDn.h cusolverMg.h "
    "cusolverRf.h cusolverSp.h cusolver_common.h cusparse.h device_atomic_functions.h "
    "device_functions.h device_launch_parameters.h device_types.h driver_functions.h "
    "driver_types.h fatbinary_section.h host_config.h host_defines.h library_types.h math_constants.h "
    "math_functions.h nvrtc.h nvJitLink.h nvjpeg.h nvml.h nvPTXCompiler.h sm_20_atomic_functions.h "
    "sm_32_atomic_functions.h sm_60_atomic_functions.h sm_61_intrinsics.h surface_functions.h "
    "texture_fetch_functions.h texture_indirect_functions.h vector_functions.h vector_types.h"
).split()
NPP = ["npp.h", "nppcore.h", "nppdefs.h", "nppi.h", "npps.h"] + [
    "nppi_%s.h" % s for s in ("arithmetic_and_logical_operations color_conversion data_exchange_and_initialization "
                               "filtering_functions geometry_transforms linear_transforms morphological_operations "
                               "statistics_functions support_functions threshold_and_compare_operations").split()
]
CUDA_SUBDIR_HEADERS = {
    "crt": ["%s.h" % s for s in ("common_functions device_double_functions device_functions host_config "
                                  "host_defines host_runtime math_functions mma nvfunctional sm_70_rt "
                                  "sm_80_rt sm_90_rt storage_class func_macro cudacc_ext").split()],
    "cooperative_groups/details": ["%s.h" % s for s in "async coalesced_reduce driver_abi functional helpers info "
                                   "invoke memory partitioning reduce scan sync".split()],
    "thrust": ["%s.h" % s for s in ("adjacent_difference advance allocate_unique binary_search complex copy count "
                                     "device_allocator device_ptr device_vector distance equal execution_policy "
                                     "extrema fill find for_each functional gather generate host_vector inner_product "
                                     "iterator logical memory merge mismatch pair partition reduce remove replace "
                                     "reverse scan scatter sequence set_operations shuffle sort swap tabulate "
                                     "transform transform_reduce tuple uninitialized_copy unique version").split()],
    "thrust/detail": ["detail_%02d.h" % i for i in range(60)],
    "thrust/system/cuda/detail": ["cuda_%02d.h" % i for i in range(40)],
    "cub": ["%s.cuh" % s for s in "cub config util_arch util_debug util_device util_macro util_namespace "
            "util_ptx util_type version".split()],
    "cub/block": ["block_%02d.cuh" % i for i in range(20)],
    "cub/device": ["device_%02d.cuh" % i for i in range(20)],
    "cub/warp": ["warp_%02d.cuh" % i for i in range(10)],
    "cuda/std": ["atomic", "barrier", "chrono", "cstddef", "cstdint", "functional", "latch", "limits",
                 "semaphore", "tuple", "type_traits", "utility", "version"],
    "cuda/std/detail/libcxx/include": ["cxx_%02d" % i for i in range(30)],
    "nvtx3": ["nvToolsExt.h", "nvToolsExtCuda.h", "nvToolsExtCudaRt.h", "nvToolsExtOpenCL.h", "nvToolsExtSync.h"],
}
CUDA_LIBS = [  # stem, soname version, file version suffix (None: soname file only)
    ("libcufft", "11", "11.2.1.3"), ("libcufftw", "11", "11.2.1.3"), ("libcurand", "10", "10.3.5.147"),
    ("libcusparse", "12", "12.3.1.170"), ("libcusolver", "11", "11.6.1.9"), ("libcusolverMg", "11", "11.6.1.9"),
    ("libnppc", "12", "12.2.5.30"), ("libnppial", "12", "12.2.5.30"), ("libnppicc", "12", "12.2.5.30"),
    ("libnppig", "12", "12.2.5.30"), ("libnppif", "12", "12.2.5.30"), ("libnpps", "12", "12.2.5.30"),
    ("libnvjpeg", "12", "12.3.1.117"), ("libnvJitLink", "12", "12.4.127"), ("libnvToolsExt", "1", "1.0.0"),
    ("libOpenCL", "1", "1.0.0"), ("libcufile", "0", "1.9.1"), ("libnvblas", "12", "12.4.5.8"),
]


def cuda_toolkit(prefix, v, no_math=False, cupti=True, extra_noise=True):
    """A runfile tree (fx_cuda_toolkit) with realistic noise around it."""
    major = v["major"]
    t = prefix + "/targets/x86_64-linux"
    inc, lib = t + "/include", t + "/lib"
    elf(prefix + "/bin/nvcc", strings=["Cuda compilation tools, release %s, V%s" % (v["xy"], v["nvcc"])])
    write(prefix + "/bin/nvcc.profile", "TOP = $(_HERE_)/..\n")
    for b in ("cuobjdump", "nvdisasm", "nvprune", "ptxas", "fatbinary", "nvlink", "cu++filt", "bin2c",
              "cudafe++", "nvcc.profile.bak", "compute-sanitizer", "ncu", "nsys"):
        write(prefix + "/bin/" + b, "#!/bin/sh\n")
    write(inc + "/cuda.h", "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n#define CUDA_VERSION %d\n#endif\n"
          % v["code"])
    write(inc + "/cuda_runtime_api.h", "#define CUDART_VERSION  %d\n" % v["code"])
    files(inc, CUDA_TOP_HEADERS + NPP)
    for sub, names in CUDA_SUBDIR_HEADERS.items():
        files(inc + "/" + sub, names)
    link(prefix + "/include", "targets/x86_64-linux/include")
    library(lib, "libcudart", str(major), v["cudart"])
    write(lib + "/libcudart_static.a", "!<arch>\n")
    write(lib + "/libcudadevrt.a", "!<arch>\n")
    if not no_math:
        library(lib, "libcublasLt", str(major), v["lib"])
        library(lib, "libcublas", str(major), v["lib"], needed=["libcublasLt.so.%d" % major, "libc.so.6"])
        for stem, sover, full in CUDA_LIBS:
            library(lib, stem, sover, full)
    library(lib, "libnvrtc", str(major), v["cudart"])
    library(lib, "libnvrtc-builtins", v["xy"], v["cudart"])
    elf(lib + "/stubs/libcuda.so", soname="libcuda.so.1")
    elf(lib + "/stubs/libnvidia-ml.so", soname="libnvidia-ml.so.1")
    write(lib + "/cmake/thrust/thrust-config.cmake", "# thrust\n")
    write(lib + "/cmake/cub/cub-config.cmake", "# cub\n")
    link(prefix + "/lib64", "targets/x86_64-linux/lib")
    library(prefix + "/nvvm/lib64", "libnvvm", "4", "4.0.0")
    files(prefix + "/nvvm/include", ["nvvm.h"])
    files(prefix + "/nvvm/libdevice", ["libdevice.10.bc"])
    write(prefix + "/nvvm/bin/cicc", "#!/bin/sh\n")
    if cupti:
        library(prefix + "/extras/CUPTI/lib64", "libcupti", str(major), v["cudart"])
        files(prefix + "/extras/CUPTI/include", ["cupti.h", "cupti_activity.h", "cupti_callbacks.h",
                                                  "cupti_events.h", "cupti_metrics.h", "cupti_version.h"])
        files(prefix + "/extras/CUPTI/samples/callback_timestamp", ["Makefile", "callback_timestamp.cu"])
    files(prefix + "/extras/Debugger/include", ["cudadebugger.h"])
    write(prefix + "/version.json",
          '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "%s"\n   },\n'
          '   "cuda_cudart" : {\n      "name" : "CUDA Runtime (cudart)",\n      "version" : "%s"\n   },\n'
          '   "cuda_nvcc" : {\n      "name" : "CUDA NVCC",\n      "version" : "%s"\n   }\n}\n'
          % (v["release"], v["cudart"], v["nvcc"]))
    write(prefix + "/EULA.txt", "End User License Agreement\n")
    if not extra_noise:
        return
    for part in ("cuda-c-programming-guide", "cuda-runtime-api", "cuda-driver-api", "cublas", "cufft",
                 "nvcc", "cuda-installation-guide-linux"):
        files(prefix + "/doc/html/" + part, ["index.html", "contents.html", "search.js", "graphics.png"])
    files(prefix + "/doc/man/man1", ["nvcc.1", "cuobjdump.1", "nvdisasm.1", "nvprune.1"])
    files(prefix + "/doc/pdf", ["CUDA_C_Programming_Guide.pdf", "CUDA_Runtime_API.pdf", "cuBLAS_Library.pdf"])
    for group, samples in (("0_Introduction", ("vectorAdd", "matrixMul", "simpleStreams", "asyncAPI")),
                           ("1_Utilities", ("deviceQuery", "bandwidthTest")),
                           ("2_Concepts_and_Techniques", ("reduction", "scan", "histogram")),
                           ("3_CUDA_Features", ("cudaGraphs", "cooperativeGroups")),
                           ("4_CUDA_Libraries", ("simpleCUBLAS", "simpleCUFFT", "conjugateGradient"))):
        for s in samples:
            files(prefix + "/samples/%s/%s" % (group, s), ["%s.cu" % s, "Makefile", "README.md"])
    files(prefix + "/samples/common/inc", ["helper_cuda.h", "helper_functions.h", "helper_string.h"])
    files(prefix + "/nsight-compute-2024.1.1/sections", ["SpeedOfLight.section", "MemoryWorkloadAnalysis.section",
                                                         "Occupancy.section", "LaunchStats.section"])
    files(prefix + "/nsight-compute-2024.1.1/target/linux-desktop-glibc_2_11_3-x64",
          ["ncu", "libInterceptorInjectionTarget.so", "libTreeLauncherTargetInjection.so"])
    files(prefix + "/nsight-systems-2023.4.4/target-linux-x64", ["nsys", "libToolsInjection64.so"])
    files(prefix + "/compute-sanitizer", ["compute-sanitizer", "libsanitizer-public.so"])
    files(prefix + "/tools", ["cuda-install-samples.sh"])
    files(prefix + "/share/gdb/python/gdb", ["__init__.py", "printing.py"])
    files(prefix + "/libnvvp/plugins", ["org.eclipse.core.jar", "org.eclipse.ui.jar"])
    files(prefix + "/gds/tools", ["gdscheck", "gdsio"])


def cudnn(prefix, ver, cuda_major, libdir="lib", soname_only=False):
    """fx_cudnn: headers and libcudnn with its sub-libraries."""
    a, b, c = ver[:3]
    inc, lib = prefix + "/include", prefix + "/" + libdir
    write(inc + "/cudnn_version.h",
          "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
          "#define CUDNN_MAJOR %d\n#define CUDNN_MINOR %d\n#define CUDNN_PATCHLEVEL %d\n\n"
          "#define CUDNN_VERSION (CUDNN_MAJOR * %s + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
          "#define CUDNN_MAX_SM_MAJOR_NUMBER 12\n#define CUDNN_SM_90 900\n#endif\n"
          % (a, b, c, "10000" if a >= 9 else "1000"))
    write(inc + "/cudnn.h", '#include "cudnn_version.h"\n')
    full = None if soname_only else vs(ver)
    maj = str(a)
    lt, blas, rtc = ("libcublasLt.so.%d" % cuda_major, "libcublas.so.%d" % cuda_major,
                     "libnvrtc.so.%d" % cuda_major)
    library(lib, "libcudnn", maj, full)
    if a >= 9:
        files(inc, ["cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h", "cudnn_graph.h", "cudnn_ops.h"])
        for s in ("libcudnn_graph", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv", "libcudnn_heuristic",
                  "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled"):
            needed = () if s == "libcudnn_graph" else ("libcudnn_graph.so.9", "libz.so.1")
            strings = (lt, rtc, "libnvrtc.so.%d") if s in ("libcudnn_engines_precompiled", "libcudnn_adv") else ()
            library(lib, s, maj, full, needed=needed, strings=strings)
    else:
        files(inc, ["cudnn_adv_infer.h", "cudnn_adv_train.h", "cudnn_backend.h", "cudnn_cnn_infer.h",
                    "cudnn_cnn_train.h", "cudnn_ops_infer.h", "cudnn_ops_train.h"])
        for s in ("libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer", "libcudnn_cnn_train",
                  "libcudnn_adv_infer", "libcudnn_adv_train"):
            needed = (blas, lt, "libc.so.6") if s == "libcudnn_ops_infer" else ()
            library(lib, s, maj, full, needed=needed)
    if not soname_only:
        write(lib + "/libcudnn_static_v%d.a" % a, "!<arch>\n")
        write(prefix + "/LICENSE", "NVIDIA Software License Agreement\n")


def nccl(prefix, ver, cuda, libdir="lib", soname_only=False):
    """fx_nccl: nccl.h, libnccl with its "NCCL version" string, nccl.pc."""
    a, b, d = ver
    code = a * 1000 + b * 100 + d if (a <= 2 and b <= 8) else a * 10000 + b * 100 + d
    write(prefix + "/include/nccl.h",
          "#ifndef NCCL_H_\n#define NCCL_H_\n#include <cuda_runtime.h>\n"
          "#define NCCL_MAJOR %d\n#define NCCL_MINOR %d\n#define NCCL_PATCH %d\n"
          '#define NCCL_SUFFIX ""\n\n#define NCCL_VERSION_CODE %d\n'
          "#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : "
          "(X) * 10000 + (Y) * 100 + (Z))\n#endif\n" % (a, b, d, code))
    write(prefix + "/include/nccl_net.h", "/* nccl net */\n")
    lib = prefix + "/" + libdir
    library(lib, "libnccl", "2", None if soname_only else vs(ver),
            needed=("libpthread.so.0", "libc.so.6"), strings=("NCCL version %s+cuda%s" % (vs(ver), cuda),))
    if not soname_only:
        write(lib + "/libnccl_static.a", "!<arch>\n")
        write(lib + "/pkgconfig/nccl.pc",
              "prefix=/usr/local\nlibdir=${prefix}/lib\nName: nccl\nVersion: %s\n" % vs(ver))
        write(prefix + "/LICENSE.txt", "Copyright (c) NVIDIA CORPORATION\n")


def dist_info(site, name, version):
    d = "%s/%s-%s.dist-info" % (site, name.replace("-", "_"), version)
    write(d + "/METADATA", "Metadata-Version: 2.4\nName: %s\nVersion: %s\nSummary: test\n\nlong text\n"
          % (name, version))
    write(d + "/INSTALLER", "pip\n")
    write(d + "/RECORD", "")
    write(d + "/WHEEL", "Wheel-Version: 1.0\n")


def site_noise(site):
    for pkg, mods in (("numpy", ("__init__.py", "version.py", "_globals.py")),
                      ("numpy/core", ("__init__.py", "multiarray.py", "_multiarray_umath.so")),
                      ("numpy/linalg", ("__init__.py", "linalg.py")),
                      ("torch", ("__init__.py", "version.py", "functional.py", "serialization.py")),
                      ("torch/lib", ("libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10.so")),
                      ("torch/nn", ("__init__.py", "functional.py", "init.py")),
                      ("torch/cuda", ("__init__.py", "memory.py", "streams.py")),
                      ("pip", ("__init__.py", "__main__.py")), ("setuptools", ("__init__.py", "dist.py")),
                      ("triton", ("__init__.py", "testing.py")), ("triton/backends/nvidia/bin", ("ptxas",))):
        files(site + "/" + pkg, mods, "# module\n")
    for name, version in (("numpy", "1.26.4"), ("torch", "2.5.1"), ("pip", "24.0"), ("setuptools", "69.5.1"),
                          ("triton", "3.1.0")):
        dist_info(site, name, version)


# --- the layouts -------------------------------------------------------------
SPACK = "sw/spack/opt/spack/linux-ubuntu22.04-zen2/gcc-12.3.0"
made_links = set()


def spack_noise(prefix, name):
    files(prefix + "/.spack", ["spec.json", "install_environment.json", "install_manifest.json", "spack-build-out.txt"])
    files(prefix + "/.spack/repos/builtin/packages/" + name, ["package.py"])


def make_runfile(j):
    v = cuda_versions(12)
    where = j % 4
    if where == 0:
        prefix = "apps/cuda/" + v["release"]
    elif where == 1:
        prefix = "opt/cuda-" + v["release"]
    elif where == 2:
        prefix = "%s/cuda-%s-%s" % (SPACK, v["release"], spack_hash("cuda%d" % j))
    else:
        prefix = "easybuild/software/CUDA/" + v["release"]
    cuda_toolkit(prefix, v)
    if where == 1 and ("opt", v["xy"]) not in made_links:
        made_links.add(("opt", v["xy"]))
        link("opt/cuda-" + v["xy"], "cuda-" + v["release"])  # an alias, not an install
    if where == 2:
        spack_noise(prefix, "cuda")
    if where == 3:
        link(prefix + "/lib", "lib64")
        write(prefix + "/easybuild/CUDA-%s.eb" % v["release"], "name = 'CUDA'\n")
        write(prefix + "/easybuild/CUDA-%s-easybuild-devel" % v["release"], "# devel\n")
    expect("cuda", prefix, v["xy"], "toolkit")


def make_cudnn9(j):
    ver = cudnn9_version()
    cm = 13 if j % 3 == 2 else 12
    if j % 2 == 0:
        prefix = "apps/cudnn/cudnn-linux-x86_64-%s_cuda%d-archive" % (vs(ver, 4), cm)
    else:
        prefix = "easybuild/software/cuDNN/%s-CUDA-%d.%d.0" % (vs(ver, 4), cm, j % 10)
        write(prefix + "/easybuild/cuDNN-%s.eb" % vs(ver, 4), "name = 'cuDNN'\n")
    cudnn(prefix, ver, cm)
    expect("cudnn", prefix, vs(ver), "tarball")


def make_cudnn8(j):
    ver = cudnn8_version()
    cm = 11 if j % 3 == 2 else 12
    if j % 2 == 0:
        prefix = "apps/cudnn/" + vs(ver)
    else:
        prefix = "%s/cudnn-%s-%d-%s" % (SPACK, vs(ver, 4), cm, spack_hash("cudnn%d" % j))
        spack_noise(prefix, "cudnn")
    cudnn(prefix, ver, cm, libdir="lib64")
    expect("cudnn", prefix, vs(ver), "tarball")


def make_nccl(j):
    ver = nccl_version()
    cuda = "12.%d" % (j % 9)
    where = j % 3
    if where == 0:
        prefix = "apps/nccl/nccl_%s-1+cuda%s_x86_64" % (vs(ver), cuda)
    elif where == 1:
        prefix = "easybuild/software/NCCL/%s-GCCcore-12.3.0-CUDA-%s.0" % (vs(ver), cuda)
        write(prefix + "/easybuild/NCCL-%s.eb" % vs(ver), "name = 'NCCL'\n")
    else:
        prefix = "%s/nccl-%s-1-%s" % (SPACK, vs(ver), spack_hash("nccl%d" % j))
        spack_noise(prefix, "nccl")
    nccl(prefix, ver, cuda)
    expect("nccl", prefix, vs(ver), "tarball")


def make_wheels_cu12(j):
    v = cuda_versions(12)
    site = "venvs/cu12-%d/lib/python3.11/site-packages" % j
    nv = site + "/nvidia"
    write(nv + "/__init__.py", "")
    library(nv + "/cuda_runtime/lib", "libcudart", "12")
    write(nv + "/cuda_runtime/include/cuda_runtime_api.h", "#define CUDART_VERSION %d\n" % v["code"])
    files(nv + "/cuda_runtime/include", ["cuda_runtime.h", "driver_types.h", "vector_types.h", "cuda_fp16.h"])
    library(nv + "/cublas/lib", "libcublas", "12")
    library(nv + "/cublas/lib", "libcublasLt", "12")
    library(nv + "/cublas/lib", "libnvblas", "12")
    files(nv + "/cublas/include", ["cublas.h", "cublasLt.h", "cublas_api.h", "cublas_v2.h"])
    library(nv + "/cuda_nvrtc/lib", "libnvrtc", "12")
    library(nv + "/cuda_nvrtc/lib", "libnvrtc-builtins", v["xy"])
    elf(nv + "/cuda_nvcc/bin/nvcc", strings=["Cuda compilation tools, release %s, V%s" % (v["xy"], v["nvcc"])])
    files(nv + "/cuda_nvcc/bin", ["ptxas"])
    library(nv + "/cuda_cupti/lib", "libcupti", "12")
    for comp, stem, sover in (("cufft", "libcufft", "11"), ("curand", "libcurand", "10"),
                              ("cusparse", "libcusparse", "12"), ("cusolver", "libcusolver", "11"),
                              ("nvjitlink", "libnvJitLink", "12"), ("nvtx", "libnvToolsExt", "1")):
        write(nv + "/%s/__init__.py" % comp, "")
        library(nv + "/%s/lib" % comp, stem, sover)
        files(nv + "/%s/include" % comp, ["%s.h" % comp])
    dn = cudnn9_version()
    cudnn(nv + "/cudnn", dn, 12, soname_only=True)
    nc = nccl_version()
    nccl(nv + "/nccl", nc, v["xy"], soname_only=True)
    dist_info(site, "nvidia-cuda-runtime-cu12", v["cudart"])
    dist_info(site, "nvidia-cublas-cu12", v["lib"])
    dist_info(site, "nvidia-cuda-nvrtc-cu12", v["cudart"])
    dist_info(site, "nvidia-cuda-nvcc-cu12", v["nvcc"])
    dist_info(site, "nvidia-cuda-cupti-cu12", v["cudart"])
    dist_info(site, "nvidia-cudnn-cu12", vs(dn, 4))
    dist_info(site, "nvidia-nccl-cu12", vs(nc))
    site_noise(site)
    files("venvs/cu12-%d/bin" % j, ["python", "python3", "pip", "activate"], "#!/bin/sh\n")
    write("venvs/cu12-%d/pyvenv.cfg" % j, "version = 3.11.7\n")
    expect("cuda", nv, v["xy"], "wheel")
    expect("cudnn", nv + "/cudnn", vs(dn), "wheel")
    expect("nccl", nv + "/nccl", vs(nc), "wheel")


def make_wheels_cu13(j):
    v = cuda_versions(13)
    site = "venvs/cu13-%d/lib/python3.12/site-packages" % j
    cu = site + "/nvidia/cu13"
    write(site + "/nvidia/__init__.py", "")
    library(cu + "/lib", "libcudart", "13")
    library(cu + "/lib", "libcublas", "13", needed=["libcublasLt.so.13"])
    library(cu + "/lib", "libcublasLt", "13")
    library(cu + "/lib", "libnvrtc", "13")
    library(cu + "/lib", "libcufft", "12")
    library(cu + "/lib", "libcurand", "10")
    library(cu + "/lib", "libnvJitLink", "13")
    write(cu + "/include/cuda_runtime_api.h", "#define CUDART_VERSION  %d\n" % v["code"])
    write(cu + "/include/cuda.h", "#define CUDA_VERSION %d\n" % v["code"])
    files(cu + "/include", ["cuda_runtime.h", "driver_types.h", "cublas_v2.h", "cufft.h", "curand.h"])
    elf(cu + "/bin/nvcc", strings=["Cuda compilation tools, release %s, V%s" % (v["xy"], v["nvcc"])])
    files(cu + "/bin", ["ptxas", "nvlink", "fatbinary"])
    dn = cudnn9_version()
    cudnn(site + "/nvidia/cudnn", dn, 13, soname_only=True)
    nc = nccl_version()
    nccl(site + "/nvidia/nccl", nc, v["xy"], soname_only=True)
    dist_info(site, "nvidia-cuda-runtime", v["cudart"])
    dist_info(site, "nvidia-cublas", v["lib"])
    dist_info(site, "nvidia-cuda-nvcc", v["nvcc"])
    dist_info(site, "nvidia-cudnn-cu13", vs(dn, 4))
    dist_info(site, "nvidia-nccl-cu13", vs(nc))
    site_noise(site)
    files("venvs/cu13-%d/bin" % j, ["python", "python3", "pip", "activate"], "#!/bin/sh\n")
    write("venvs/cu13-%d/pyvenv.cfg" % j, "version = 3.12.3\n")
    expect("cuda", cu, v["xy"], "wheel")
    expect("cudnn", site + "/nvidia/cudnn", vs(dn), "wheel")
    expect("nccl", site + "/nvidia/nccl", vs(nc), "wheel")


def make_hpc_sdk(j):
    v = cuda_versions(12)
    rel = "opt/nvidia/hpc_sdk/Linux_x86_64/%d.%d" % (20 + j // 11, 1 + j % 11)
    xy = v["xy"]
    cuda = "%s/cuda/%s" % (rel, xy)
    cuda_toolkit(cuda, v, no_math=True, extra_noise=False)
    for d in ("bin", "include", "lib64", "nvvm"):
        link("%s/cuda/%s" % (rel, d), "%s/%s" % (xy, d))  # the default CUDA's links
    math = "%s/math_libs/%s" % (rel, xy)
    library(math + "/lib64", "libcublasLt", "12", v["lib"])
    library(math + "/lib64", "libcublas", "12", v["lib"], needed=["libcublasLt.so.12"])
    for stem, sover, full in CUDA_LIBS[:8]:
        library(math + "/lib64", stem, sover, full)
    files(math + "/include", ["cublas_v2.h", "cublas_api.h", "cufft.h", "curand.h", "cusparse.h", "cusolverDn.h"])
    nc = nccl_version()
    ncdir = "%s/comm_libs/%s/nccl" % (rel, xy)
    nccl(ncdir, nc, xy)
    files("%s/comm_libs/%s/nvshmem/lib" % (rel, xy), ["libnvshmem_host.so.3", "nvshmem_bootstrap_mpi.so"])
    files("%s/comm_libs/mpi/bin" % rel, ["mpicc", "mpirun", "mpiexec"])
    files("%s/compilers/bin" % rel, ["nvc", "nvc++", "nvfortran", "pgcc", "nvaccelinfo", "nvaccelerror", "localrc"])
    files("%s/compilers/lib" % rel, ["libnvc.so", "libnvcpumath.so", "libnvhpcatm.so", "libnvomp.so",
                                     "libacchost.so", "libaccdevice.so", "libcudanvhpc.so"])
    files("%s/compilers/include" % rel, ["openacc.h", "omp.h", "nvhpc_stdpar.h", "cuda_runtime_nvhpc.h"])
    files("%s/compilers/man/man1" % rel, ["nvc.1", "nvfortran.1"])
    files("%s/examples/OpenACC/samples" % rel, ["acc_c1.c", "acc_f1.f90", "Makefile"])
    files("%s/REDIST/compilers/lib" % rel, ["libnvc.so", "libnvomp.so"])
    files("opt/nvidia/hpc_sdk/modulefiles/nvhpc", ["%d.%d" % (20 + j // 11, 1 + j % 11)], "#%Module\n")
    expect("cuda", cuda, xy, "hpc-sdk")
    expect("nccl", ncdir, vs(nc), "hpc-sdk")


def make_conda(j):
    v = cuda_versions(12)
    env = "conda/envs/env-%d" % j
    tlib, tinc = env + "/targets/x86_64-linux/lib", env + "/targets/x86_64-linux/include"
    library(tlib, "libcudart", "12", v["cudart"])
    library(tlib, "libcublas", "12", v["lib"], needed=["libcublasLt.so.12"])
    library(tlib, "libcublasLt", "12", v["lib"])
    library(tlib, "libnvrtc", "12", v["cudart"])
    write(tinc + "/cuda_runtime_api.h", "#define CUDART_VERSION  %d\n" % v["code"])
    files(tinc, ["cuda_runtime.h", "driver_types.h", "cublas_v2.h", "vector_types.h"])
    for n in ("libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libnvrtc.so.12"):
        link(env + "/lib/" + n, "../targets/x86_64-linux/lib/" + n)
    dn, nc = cudnn9_version(), nccl_version()
    cudnn(env, dn, 12)
    nccl(env, nc, v["xy"])
    for pkg in ("cuda-cudart-%s-0" % v["cudart"], "cuda-nvrtc-%s-0" % v["cudart"], "libcublas-%s-0" % v["lib"],
                "cudnn-%s-h0" % vs(dn, 4), "nccl-%s-h0" % vs(nc), "python-3.11.9-h0", "pytorch-2.5.1-py3.11",
                "numpy-1.26.4-py311"):
        write(env + "/conda-meta/%s.json" % pkg, "{}\n")
    write(env + "/conda-meta/history", "==> 2024-11-14 <==\n")
    files(env + "/bin", ["python", "python3.11", "pip", "conda"], "#!/bin/sh\n")
    files(env + "/include/python3.11", ["Python.h", "object.h", "pyconfig.h"])
    files(env + "/lib", ["libpython3.11.so.1.0", "libz.so.1", "libstdc++.so.6", "libgomp.so.1"])
    site_noise(env + "/lib/python3.11/site-packages")
    files(env + "/share/doc", ["README"])
    expect("cuda", env, v["xy"], "conda")
    expect("cudnn", env, vs(dn), "conda")
    expect("nccl", env, vs(nc), "conda")


def make_non_install(k):
    """Things that are no installs: user projects (one vendoring CUDA headers),
    caches and data."""
    home = "home/user%d" % k
    proj = home + "/projects/proj-%d" % k
    files(proj + "/src", ["kernel%d.cu" % i for i in range(8)] + ["main.cpp", "CMakeLists.txt"])
    files(proj + "/include/proj", ["api.h", "kernels.cuh", "config.h"])
    files(proj + "/build/CMakeFiles/proj.dir/src", ["kernel%d.cu.o" % i for i in range(8)])
    files(proj + "/build", ["CMakeCache.txt", "Makefile", "cmake_install.cmake"])
    elf(proj + "/build/lib/libproj.so", soname="libproj.so",
        needed=["libcudart.so.12", "libcublas.so.12", "libc.so.6"])
    write(proj + "/third_party/cuda/include/cuda_runtime_api.h", "#define CUDART_VERSION  12040\n")
    write(proj + "/third_party/cuda/include/cuda.h", "#define CUDA_VERSION 12040\n")
    files(proj + "/.git/objects/%02x" % (k % 256), ["%038x" % (k * 1000 + i) for i in range(10)])
    files(proj + "/.git", ["HEAD", "config", "index", "description"])
    files(home + "/.cache/pip/http/%x" % (k % 16), ["%040x" % (k * 100 + i) for i in range(6)])
    files(home + "/data", ["shard-%04d.bin" % i for i in range(12)])
    files(home + "/.local/bin", ["jupyter", "ipython"], "#!/bin/sh\n")


LAYOUTS = [make_runfile, make_cudnn9, make_cudnn8, make_nccl, make_wheels_cu12, make_wheels_cu13,
           make_hpc_sdk, make_conda]
for i in range(N):
    LAYOUTS[i % len(LAYOUTS)](i // len(LAYOUTS))
for k in range(max(1, N // 8)):
    make_non_install(k)
# A conda base install holds no CUDA itself.
files("conda/conda-meta", ["conda-24.9.2-py311.json", "python-3.11.9-h0.json"], "{}\n")
files("conda/bin", ["conda", "python"], "#!/bin/sh\n")
files("conda/pkgs/cache", ["urls.txt", "497deca9.json"])

with open(EXPECTED, "w") as f:
    for e in expected:
        f.write("\t".join(e) + "\n")
print("made %d install prefixes holding %d installs (%d distinct ELF stubs by mkelfstub), %d non-install homes"
      % (N, len(expected), len(tree.stubs), max(1, N // 8)))
PY
end=$(date +%s.%N)
n_entries=$(find "$root" | wc -l)
n_dirs=$(find "$root" -type d | wc -l)
n_files=$(find "$root" -type f | wc -l)
n_links=$(find "$root" -type l | wc -l)
printf 'tree: %d entries (find | wc -l): %d directories, %d files, %d symlinks, %s on disk; built in %.1f s\n' \
        "$n_entries" "$n_dirs" "$n_files" "$n_links" "$(du -sh "$root" | cut -f1)" \
        "$(echo "$end - $start" | bc 2>/dev/null || python3 -c "print($end - $start)")"

# --- 2. correctness ----------------------------------------------------------
echo
echo "== correctness: cudamod scan --json ROOT"
"$cudamod" scan --json "$root" >"$work/scan.json" 2>"$work/scan.err" || {
        echo "cudamod scan failed (exit $?):" >&2
        cat "$work/scan.err" >&2
        exit 1
}
if [ -s "$work/scan.err" ]; then
        echo "cudamod said on stderr:"
        sed 's/^/  /' "$work/scan.err" | head -20
fi
python3 - "$root" "$work/expected.tsv" "$work/scan.json" <<'PY'
import collections, json, sys

root, expected_path, scan_path = sys.argv[1:]
expected = {}
with open(expected_path) as f:
    for line in f:
        comp, prefix, version, layout = line.rstrip("\n").split("\t")
        expected[(comp, prefix)] = (version, layout)
with open(scan_path) as f:
    doc = json.load(f)
found = {}
dups = []
for inst in doc["installs"]:
    p = inst["prefix"]
    rel = p[len(root) + 1:] if p.startswith(root + "/") else p
    key = (inst["component"], rel)
    if key in found:
        dups.append(key)
    found[key] = inst

by_comp_exp = collections.Counter(c for c, _ in expected)
by_comp_found = collections.Counter(c for c, _ in found)
by_layout_exp = collections.Counter((c, v[1]) for (c, _), v in expected.items())
by_layout_found = collections.Counter((c, i["layout"]) for (c, _), i in found.items())
print("%-8s %9s %9s" % ("", "created", "found"))
for c in ("cuda", "cudnn", "nccl"):
    print("%-8s %9d %9d" % (c, by_comp_exp[c], by_comp_found[c]))
print("%-8s %9d %9d" % ("total", len(expected), len(doc["installs"])))
print("by layout: " + ", ".join("%s/%s %d of %d" % (c, l, by_layout_found[(c, l)], n)
                                for (c, l), n in sorted(by_layout_exp.items())))

missing = sorted(set(expected) - set(found))
extra = sorted(set(found) - set(expected))
wrong_version = sorted(k for k in set(expected) & set(found)
                       if found[k]["version"] != expected[k][0])
wrong_layout = sorted(k for k in set(expected) & set(found)
                      if found[k]["layout"] != expected[k][1])
problems = collections.Counter(p.get("code", "?") for i in doc["installs"] for p in i.get("problems", []))
if problems:
    print("problems reported (by code): " + ", ".join("%s %d" % kv for kv in problems.most_common()))


def show(title, keys, fmt):
    if keys:
        print("%s (%d):" % (title, len(keys)))
        for k in keys[:25]:
            print("  " + fmt(k))
        if len(keys) > 25:
            print("  ... and %d more" % (len(keys) - 25))


show("MISSING: created but not found", missing, lambda k: "%-6s %s" % k)
show("UNEXPECTED: found but not created", extra, lambda k: "%-6s %s (layout %s)" % (k[0], k[1], found[k]["layout"]))
show("DUPLICATE records", dups, lambda k: "%-6s %s" % k)
show("note: version differs", wrong_version,
     lambda k: "%-6s %s: created %s, found %s" % (k[0], k[1], expected[k][0], found[k]["version"]))
show("note: layout differs", wrong_layout,
     lambda k: "%-6s %s: created %s, found %s" % (k[0], k[1], expected[k][1], found[k]["layout"]))
if missing or extra or dups or len(doc["installs"]) != len(expected):
    print("FAIL: cudamod found %d installs, %d were created; %d missing, %d unexpected, %d duplicated"
          % (len(doc["installs"]), len(expected), len(missing), len(extra), len(dups)))
    sys.exit(1)
print("ok: cudamod found exactly the %d installs created" % len(expected))
PY

# --- 3. timing ---------------------------------------------------------------
echo
echo "== timing (warm cache): hyperfine --warmup 3 --min-runs 10, stdout to /dev/null"
# -N: no intermediate shell; hyperfine sends the commands' output to /dev/null.
hyperfine -N --warmup 3 --min-runs 10 --style basic \
        --export-markdown "$work/hyperfine.md" --export-json "$work/hyperfine.json" \
        --command-name "cudamod scan --json ROOT" "$cudamod scan --json $root" \
        --command-name "cudamod scan ROOT (table)" "$cudamod --color=never scan $root" \
        --command-name "find ROOT" "find $root"
echo
cat "$work/hyperfine.md"
echo
python3 - "$work/hyperfine.json" <<'PY'
import json, sys

r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
find = r["find ROOT"]["mean"]
for name in ("cudamod scan --json ROOT", "cudamod scan ROOT (table)"):
    print("%-26s %8.1f ms  = %.2fx find (%.1f ms)" % (name, r[name]["mean"] * 1e3, r[name]["mean"] / find, find * 1e3))
print("goal: at most 1.0x find (issue 19; it was within 2x before)")
PY

echo
echo "== system calls (strace -c -f; failing in parentheses)"
bench_syscalls "cudamod scan --json --jobs 1=$cudamod scan --json --jobs 1 $root" \
        "cudamod scan --json=$cudamod scan --json $root" "find=find $root"

# --- 4. memory ---------------------------------------------------------------
echo
echo "== peak memory: /usr/bin/time -v cudamod scan --json ROOT >/dev/null"
/usr/bin/time -v "$cudamod" scan --json "$root" >/dev/null 2>"$work/time.txt"
grep -E 'Maximum resident set size' "$work/time.txt" | sed 's/^[[:space:]]*//'
