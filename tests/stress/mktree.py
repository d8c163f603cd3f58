#!/usr/bin/env python3
"""mktree.py: build fake CUDA / cuDNN / NCCL install prefixes for the stress
tests and bench/generate.sh, with real ELF stub libraries written by
tests/mkelfstub (each distinct stub made once, then copied), in the layouts of
tests/fixture.c (the same files the detectors read).

usage: mktree.py MKELFSTUB ROOT SPEC...
  demo                         the demo tree of tests/demo.c under ROOT/sw:
                               CUDA 11.8 and 12.9, cuDNN 8.9.7 (CUDA 11) and
                               9.7.1 (CUDA 12), NCCL 2.21.5 (CUDA 12.4)
  cuda:X.Y.Z@REL               a CUDA toolkit (runfile layout) at ROOT/REL
  cudnn:A.B.C:MAJOR@REL        a cuDNN tarball for CUDA MAJOR at ROOT/REL
  nccl:A.B.C:X.Y@REL           an NCCL tarball built for CUDA X.Y at ROOT/REL
  synth:N[:DIR]                N prefixes under ROOT/DIR (default synth),
                               rotating cuda, cudnn, cudnn, nccl, nccl, with
                               distinct versions (see synthetic() below)
Prints nothing; exit 0 when done.

Stubs are cached in ROOT/../.mktree-stubs (created when missing) unless
MKTREE_STUBS names another directory.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from treebuild import TreeBuilder  # noqa: E402

MKELFSTUB, ROOT = sys.argv[1], sys.argv[2]
STUBS = os.environ.get("MKTREE_STUBS") or os.path.join(os.path.dirname(os.path.abspath(ROOT)), ".mktree-stubs")
tree = TreeBuilder(ROOT, MKELFSTUB, STUBS)
P, mkdirs, write, link, elf, library = tree.path, tree.mkdirs, tree.write, tree.link, tree.elf, tree.library


def cuda(prefix, release):
    """fx_cuda_toolkit: runfile layout, CUPTI, nvvm, version.json."""
    major, minor, patch = (int(x) for x in release.split("."))
    xy = "%d.%d" % (major, minor)
    cudart, nvcc = "%s.%d" % (xy, 100 + patch), "%s.%d" % (xy, 200 + patch)
    code = major * 1000 + minor * 10
    t = prefix + "/targets/x86_64-linux"
    inc, lib = t + "/include", t + "/lib"
    elf(prefix + "/bin/nvcc", strings=["Cuda compilation tools, release %s, V%s" % (xy, nvcc)])
    write(prefix + "/bin/nvcc.profile", "TOP = $(_HERE_)/..\n")
    write(inc + "/cuda.h", "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n#define CUDA_VERSION %d\n#endif\n" % code)
    write(inc + "/cuda_runtime_api.h", "#define CUDART_VERSION  %d\n" % code)
    link(prefix + "/include", "targets/x86_64-linux/include")
    cudart_so = "11.0" if major == 11 else str(major)
    library(lib, "libcudart", cudart_so, cudart)
    library(lib, "libcublasLt", str(major))
    library(lib, "libcublas", str(major), needed=["libcublasLt.so.%d" % major, "libc.so.6"])
    library(lib, "libnvrtc", str(major))
    elf(lib + "/stubs/libcuda.so", soname="libcuda.so.1")
    link(prefix + "/lib64", "targets/x86_64-linux/lib")
    library(prefix + "/nvvm/lib64", "libnvvm", "4")
    library(prefix + "/extras/CUPTI/lib64", "libcupti", str(major))
    write(prefix + "/extras/CUPTI/include/cupti.h", "/* cupti */\n")
    write(prefix + "/version.json",
          '{\n   "cuda" : {\n      "name" : "CUDA SDK",\n      "version" : "%s"\n   },\n'
          '   "cuda_cudart" : {\n      "name" : "CUDA Runtime (cudart)",\n      "version" : "%s"\n   },\n'
          '   "cuda_nvcc" : {\n      "name" : "CUDA NVCC",\n      "version" : "%s"\n   }\n}\n'
          % (release, cudart, nvcc))


def cudnn(prefix, version, cuda_major):
    """fx_cudnn: headers, libcudnn and its sub-libraries (lib)."""
    a, b, c = (int(x) for x in version.split("."))
    inc, lib = prefix + "/include", prefix + "/lib"
    write(inc + "/cudnn_version.h",
          "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
          "#define CUDNN_MAJOR %d\n#define CUDNN_MINOR %d\n#define CUDNN_PATCHLEVEL %d\n\n"
          "#define CUDNN_VERSION (CUDNN_MAJOR * %s + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
          "#define CUDNN_MAX_SM_MAJOR_NUMBER 12\n#define CUDNN_SM_90 900\n#endif\n"
          % (a, b, c, "10000" if a >= 9 else "1000"))
    write(inc + "/cudnn.h", '#include "cudnn_version.h"\n')
    maj = str(a)
    lt, blas, rtc = ("libcublasLt.so.%d" % cuda_major, "libcublas.so.%d" % cuda_major,
                     "libnvrtc.so.%d" % cuda_major)
    library(lib, "libcudnn", maj, version)
    if a >= 9:
        for s in ("libcudnn_graph", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv", "libcudnn_heuristic",
                  "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled"):
            needed = () if s == "libcudnn_graph" else ("libcudnn_graph.so.9", "libz.so.1")
            strings = (lt, rtc, "libnvrtc.so.%d") if s in ("libcudnn_engines_precompiled", "libcudnn_adv") else ()
            library(lib, s, maj, version, needed=needed, strings=strings)
    else:
        for s in ("libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer", "libcudnn_cnn_train",
                  "libcudnn_adv_infer", "libcudnn_adv_train"):
            needed = (blas, lt, "libc.so.6") if s == "libcudnn_ops_infer" else ()
            library(lib, s, maj, version, needed=needed)


def nccl(prefix, version, cuda_xy):
    """fx_nccl: nccl.h, libnccl with its "NCCL version" string, nccl.pc."""
    a, b, d = (int(x) for x in version.split("."))
    code = a * 1000 + b * 100 + d if (a <= 2 and b <= 8) else a * 10000 + b * 100 + d
    write(prefix + "/include/nccl.h",
          "#ifndef NCCL_H_\n#define NCCL_H_\n#include <cuda_runtime.h>\n"
          "#define NCCL_MAJOR %d\n#define NCCL_MINOR %d\n#define NCCL_PATCH %d\n"
          "#define NCCL_SUFFIX \"\"\n\n#define NCCL_VERSION_CODE %d\n#endif\n" % (a, b, d, code))
    library(prefix + "/lib", "libnccl", "2", version, needed=("libpthread.so.0", "libc.so.6"),
            strings=("NCCL version %s+cuda%s" % (version, cuda_xy),))
    write(prefix + "/lib/pkgconfig/nccl.pc",
          "prefix=/usr/local\nlibdir=${prefix}/lib\nName: nccl\nVersion: %s\n" % version)


def demo():
    cuda("sw/cuda-11.8", "11.8.0")
    cuda("sw/cuda-12.9", "12.9.1")
    cudnn("sw/cudnn-linux-x86_64-8.9.7.29_cuda11-archive", "8.9.7", 11)
    cudnn("sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive", "9.7.1", 12)
    nccl("sw/nccl_2.21.5-1+cuda12.4_x86_64", "2.21.5", "12.4")


def synthetic(n, d):
    """N prefixes rotating cuda, cudnn, cudnn, nccl, nccl, every one a distinct
    module in the hierarchical layout, and none the demo's: CUDA k is
    MAJOR.MINOR with major 12 + k // 70 and minor 20 + k % 70 (12.20 ...
    12.89, 13.20 ...: minors stay below 100 so that the CUDA_VERSION code
    MAJOR*1000+MINOR*10 is unambiguous; no CUDA 11, whose libcudart soname
    is 11.0 for every 11.x);
    cuDNN and NCCL builds alternate between CUDA 12 and 13, with versions
    9.B.C / 2.B.C whose (B, C) pairs are distinct within a major. The
    directory names follow the archives' (cudnn-linux-x86_64-V.N_cudaM-archive,
    nccl_V-1+cudaX.Y_x86_64)."""
    kinds = ("cuda", "cudnn", "cudnn", "nccl", "nccl")
    count = {"cuda": 0, "cudnn": 0, "nccl": 0}
    for i in range(n):
        kind = kinds[i % len(kinds)]
        k = count[kind]
        count[kind] += 1
        if kind == "cuda":
            major, minor = 12 + k // 70, 20 + k % 70
            cuda("%s/cuda-%d.%d" % (d, major, minor), "%d.%d.%d" % (major, minor, k % 7))
            continue
        major, j = 12 + k % 2, k // 2
        if kind == "cudnn":
            v = "9.%d.%d" % (20 + j // 100, j % 100)
            cudnn("%s/cudnn-linux-x86_64-%s.%d_cuda%d-archive" % (d, v, 10 + k % 50, major), v, major)
        else:
            v = "2.%d.%d" % (30 + j // 100, j % 100)
            nccl("%s/nccl_%s-1+cuda%d.4_x86_64" % (d, v, major), v, "%d.4" % major)


for spec in sys.argv[3:]:
    kind, _, rest = spec.partition(":")
    if spec == "demo":
        demo()
    elif kind == "synth":
        n, _, d = rest.partition(":")
        synthetic(int(n), d or "synth")
    elif kind in ("cuda", "cudnn", "nccl") and "@" in rest:
        args, _, rel = rest.partition("@")
        parts = args.split(":")
        if kind == "cuda":
            cuda(rel, parts[0])
        elif kind == "cudnn":
            cudnn(rel, parts[0], int(parts[1]))
        else:
            nccl(rel, parts[0], parts[1])
    else:
        sys.exit("mktree.py: bad spec '%s'" % spec)
for src in set(tree.stubs.values()):
    os.unlink(src)
