/* layouts.c: the fixture of each install layout (see layouts.h). */
#include <stddef.h>

#include "fixture.h"
#include "layouts.h"
#include "util.h"

/* NVIDIA runfile on x86_64, with the deb-style alternatives chain
 * /usr/local/cuda -> /etc/alternatives/cuda -> /usr/local/cuda-12.4 and a
 * major link /usr/local/cuda-12. */
static void build_runfile(const char *root)
{
        _cleanup_free_ char *alt = path_join(root, "etc/alternatives/cuda");
        _cleanup_free_ char *target = path_join(root, "usr/local/cuda-12.4");

        fx_cuda_toolkit(root, "usr/local/cuda-12.4",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131", .cupti = true });
        fx_symlink(root, "etc/alternatives/cuda", target);
        fx_symlink(root, "usr/local/cuda", alt);
        fx_symlink(root, "usr/local/cuda-12", "cuda-12.4");
}

/* An Arm server (sbsa) runfile whose version.json "cuda" is a date stamp. */
static void build_runfile_sbsa(const char *root)
{
        fx_cuda_toolkit(root, "opt/cuda-12.8",
                        &(struct fx_cuda){ .version = "12.8", .release = "12.8.0", .cudart = "12.8.57",
                                           .nvcc = "12.8.61", .triple = "sbsa-linux",
                                           .version_file = FX_VERSION_JSON_DATE });
}

/* CUDA 11.0 and older: version.txt, no version.json. */
static void build_version_txt(const char *root)
{
        fx_cuda_toolkit(root, "usr/local/cuda-11.0",
                        &(struct fx_cuda){ .version = "11.0", .release = "11.0.228", .cudart = "11.0.221",
                                           .nvcc = "11.0.221", .version_file = FX_VERSION_TXT });
}

/* NVIDIA HPC SDK: cuda/X.Y without math libraries, math_libs/X.Y, and
 * comm_libs/X.Y/nccl. */
static void build_hpc_sdk(const char *root)
{
        const char *rel = "opt/nvidia/hpc_sdk/Linux_x86_64/24.5";
        _cleanup_free_ char *cuda = xasprintf("%s/cuda/12.4", rel);
        _cleanup_free_ char *math = xasprintf("%s/math_libs/12.4", rel);
        _cleanup_free_ char *mlib = xasprintf("%s/lib64", math), *minc = xasprintf("%s/include/cublas_v2.h", math);
        _cleanup_free_ char *nccl = xasprintf("%s/comm_libs/12.4/nccl", rel);

        fx_cuda_toolkit(root, cuda,
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131", .no_math = true, .cupti = true });
        fx_library(root, mlib, "libcublasLt", "12", "12.4.5.8", 62, NULL, NULL);
        fx_library(root, mlib, "libcublas", "12", "12.4.5.8", 62,
                   (const char *const[]){ "libcublasLt.so.12", NULL }, NULL);
        fx_write(root, minc, "/* cublas */\n");
        fx_nccl(root, nccl, &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4" });
}

/* cuDNN tarballs: 9.x and 8.9 archives kept under their names, an 8.x
 * renamed into lib64 (CUDA major only from DT_NEEDED), a 9.x renamed (only
 * from the dlopen strings), and an sbsa archive. */
static void build_cudnn_tarballs(const char *root)
{
        fx_cudnn(root, "apps/cudnn-linux-x86_64-9.7.1.26_cuda12-archive",
                 &(struct fx_cudnn){ .version = "9.7.1", .cuda_major = 12 });
        fx_cudnn(root, "apps/cudnn-linux-x86_64-8.9.7.29_cuda11-archive",
                 &(struct fx_cudnn){ .version = "8.9.7", .cuda_major = 11 });
        fx_cudnn(root, "apps/cudnn/8.9.2", &(struct fx_cudnn){ .version = "8.9.2", .cuda_major = 12, .lib = "lib64" });
        fx_cudnn(root, "apps/cudnn/9.1.0", &(struct fx_cudnn){ .version = "9.1.0", .cuda_major = 11 });
        fx_cudnn(root, "apps/cudnn-linux-sbsa-9.7.1.26_cuda12-archive",
                 &(struct fx_cudnn){ .version = "9.7.1", .cuda_major = 12, .machine = 183 });
        /* <= 8.2: cudnn-11.4-linux-x64-v8.2.4.15.tgz unpacks to cuda/{include,lib64}. */
        fx_cudnn(root, "apps/cudnn-11.4-linux-x64-v8.2.4.15/cuda",
                 &(struct fx_cudnn){ .version = "8.2.4", .cuda_major = 11, .lib = "lib64" });
}

/* cuDNN and NCCL copied into a runfile CUDA prefix (through its include
 * and lib64 links, so the files land in targets/x86_64-linux). */
static void build_merged(const char *root)
{
        fx_cuda_toolkit(root, "usr/local/cuda-12.6",
                        &(struct fx_cuda){ .version = "12.6", .release = "12.6.3", .cudart = "12.6.77",
                                           .nvcc = "12.6.85" });
        fx_cudnn(root, "usr/local/cuda-12.6",
                 &(struct fx_cudnn){ .version = "9.5.1", .cuda_major = 12, .lib = "lib64" });
        fx_nccl(root, "usr/local/cuda-12.6",
                &(struct fx_nccl){ .version = "2.23.4", .cuda = "12.6", .lib = "lib64" });
}

/* NCCL tarballs named as NVIDIA names them, x86_64 and aarch64. */
static void build_nccl_tarballs(const char *root)
{
        fx_nccl(root, "apps/nccl_2.21.5-1+cuda12.4_x86_64", &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4" });
        fx_nccl(root, "apps/nccl_2.18.3-1+cuda11.0_aarch64",
                &(struct fx_nccl){ .version = "2.18.3", .cuda = "11.0", .machine = 183 });
}

/* pip wheels for CUDA 12: one folder per component, versions in dist-info. */
static void build_wheels_cu12(const char *root)
{
        const char *site = "venv/lib/python3.11/site-packages";
        _cleanup_free_ char *nv = xasprintf("%s/nvidia", site);
        _cleanup_free_ char *rt = xasprintf("%s/cuda_runtime", nv), *rtlib = xasprintf("%s/lib", rt);
        _cleanup_free_ char *rth = xasprintf("%s/include/cuda_runtime_api.h", rt);
        _cleanup_free_ char *blas = xasprintf("%s/cublas/lib", nv), *rtc = xasprintf("%s/cuda_nvrtc/lib", nv);
        _cleanup_free_ char *nvcc = xasprintf("%s/cuda_nvcc/bin/nvcc", nv);
        _cleanup_free_ char *cudnn = xasprintf("%s/cudnn", nv), *nccl = xasprintf("%s/nccl", nv);

        fx_library(root, rtlib, "libcudart", "12", NULL, 62, NULL, NULL);
        fx_write(root, rth, "#define CUDART_VERSION 12080\n");
        fx_library(root, blas, "libcublas", "12", NULL, 62, NULL, NULL);
        fx_library(root, blas, "libcublasLt", "12", NULL, 62, NULL, NULL);
        fx_library(root, rtc, "libnvrtc", "12", NULL, 62, NULL, NULL);
        fx_elf(root, nvcc, &(struct elfstub){ .strings = (const char *const[]){
                                                      "Cuda compilation tools, release 12.8, V12.8.93", NULL } });
        fx_cudnn(root, cudnn, &(struct fx_cudnn){ .version = "9.7.1", .cuda_major = 12, .soname_only = true });
        fx_nccl(root, nccl, &(struct fx_nccl){ .version = "2.26.2", .cuda = "12.2", .soname_only = true });
        fx_dist_info(root, site, "nvidia-cuda-runtime-cu12", "12.8.57");
        fx_dist_info(root, site, "nvidia-cublas-cu12", "12.8.3.14");
        fx_dist_info(root, site, "nvidia-cuda-nvrtc-cu12", "12.8.61");
        fx_dist_info(root, site, "nvidia-cuda-nvcc-cu12", "12.8.93");
        fx_dist_info(root, site, "nvidia-cudnn-cu12", "9.7.1.26");
        fx_dist_info(root, site, "nvidia-nccl-cu12", "2.26.2");
}

/* pip wheels for CUDA 13: the merged nvidia/cu13 tree, cuDNN and NCCL in
 * their own folders. */
static void build_wheels_cu13(const char *root)
{
        const char *site = "env/lib/python3.12/site-packages";
        _cleanup_free_ char *cu13 = xasprintf("%s/nvidia/cu13", site), *lib = xasprintf("%s/lib", cu13);
        _cleanup_free_ char *h = xasprintf("%s/include/cuda_runtime_api.h", cu13);
        _cleanup_free_ char *ch = xasprintf("%s/include/cuda.h", cu13);
        _cleanup_free_ char *nvcc = xasprintf("%s/bin/nvcc", cu13);
        _cleanup_free_ char *cudnn = xasprintf("%s/nvidia/cudnn", site), *nccl = xasprintf("%s/nvidia/nccl", site);

        fx_library(root, lib, "libcudart", "13", NULL, 62, NULL, NULL);
        fx_library(root, lib, "libcublas", "13", NULL, 62, (const char *const[]){ "libcublasLt.so.13", NULL }, NULL);
        fx_library(root, lib, "libcublasLt", "13", NULL, 62, NULL, NULL);
        fx_write(root, h, "#define CUDART_VERSION  13000\n");
        fx_write(root, ch, "#define CUDA_VERSION 13000\n");
        fx_elf(root, nvcc, &(struct elfstub){ .strings = (const char *const[]){
                                                      "Cuda compilation tools, release 13.0, V13.0.88", NULL } });
        fx_cudnn(root, cudnn, &(struct fx_cudnn){ .version = "9.19.0", .cuda_major = 13, .soname_only = true });
        fx_nccl(root, nccl, &(struct fx_nccl){ .version = "2.28.9", .cuda = "13.0", .soname_only = true });
        fx_dist_info(root, site, "nvidia-cuda-runtime", "13.0.96");
        fx_dist_info(root, site, "nvidia-cublas", "13.1.0.3");
        fx_dist_info(root, site, "nvidia-cuda-nvcc", "13.0.88");
        fx_dist_info(root, site, "nvidia-cudnn-cu13", "9.19.0.56");
        fx_dist_info(root, site, "nvidia-nccl-cu13", "2.28.9");
}

/* Debian/Ubuntu packages: multiarch libraries, /usr/include headers, and
 * the toolkit tree /usr/lib/nvidia-cuda-toolkit. */
static void build_system(const char *root)
{
        const char *lib = "usr/lib/x86_64-linux-gnu";

        fx_library(root, lib, "libcudart", "12", "12.0.146", 62, NULL, NULL);
        fx_library(root, lib, "libcublas", "12", "12.0.2.224", 62, NULL, NULL);
        fx_write(root, "usr/include/cuda.h", "#define CUDA_VERSION 12000\n");
        fx_write(root, "usr/include/cuda_runtime_api.h", "#define CUDART_VERSION  12000\n");
        fx_write(root, "usr/bin/nvcc", "#!/bin/sh\n\nexec /usr/lib/nvidia-cuda-toolkit/bin/nvcc \"$@\"\n");
        fx_elf(root, "usr/lib/nvidia-cuda-toolkit/bin/nvcc",
               &(struct elfstub){ .strings = (const char *const[]){
                                          "Cuda compilation tools, release 12.0, V12.0.140\n"
                                          "Build cuda_12.0.r12.0/compiler.32267302_0", NULL } });
        /* nvidia-cuda-toolkit's /usr/lib/cuda: real directories holding
         * links back into /usr (as `dpkg -x` of 11.8's packages shows). */
        fx_mkdir(root, "usr/lib/cuda/bin");
        fx_mkdir(root, "usr/lib/cuda/lib64");
        fx_symlink(root, "usr/lib/cuda/include/cuda.h", "../../../include/cuda.h");
        fx_mkdir(root, "usr/lib/nvidia-cuda-toolkit/libdevice");
        fx_symlink(root, "usr/lib/cuda/nvvm/libdevice", "../../nvidia-cuda-toolkit/libdevice");
        fx_cudnn(root, "usr", &(struct fx_cudnn){ .version = "9.7.0", .cuda_major = 12,
                                                  .lib = "lib/x86_64-linux-gnu",
                                                  .include = "include/x86_64-linux-gnu" });
        fx_nccl(root, "usr", &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4", .lib = "lib/x86_64-linux-gnu" });
}

/* CUDA 11.8 from Debian bookworm's packages (libcudart11.0, libcublas11,
 * nvidia-cuda-toolkit, …) laid out as a site installs it: real bin,
 * include and lib64, no version.json; every version is in a file name
 * (as `dpkg -x` shows them) or in nvcc's --version text. */
static void build_site_11_8(const char *root)
{
        const char *lib = "apps/cuda/11.8/lib64";

        fx_elf(root, "apps/cuda/11.8/bin/nvcc",
               &(struct elfstub){ .strings = (const char *const[]){
                                          "Cuda compilation tools, release 11.8, V11.8.89\n"
                                          "Build cuda_11.8.r11.8/compiler.31833905_0", NULL } });
        fx_write(root, "apps/cuda/11.8/include/cuda.h", "#define CUDA_VERSION 11080\n");
        fx_write(root, "apps/cuda/11.8/include/cuda_runtime_api.h", "#define CUDART_VERSION  11080\n");
        fx_library(root, lib, "libcudart", "11.0", "11.8.89", 62, NULL, NULL);
        fx_library(root, lib, "libcublasLt", "11", "11.11.3.6", 62, NULL, NULL);
        fx_library(root, lib, "libcublas", "11", "11.11.3.6", 62,
                   (const char *const[]){ "libcublasLt.so.11", NULL }, NULL);
        fx_library(root, lib, "libcufft", "10", "10.9.0.58", 62, NULL, NULL);
        fx_library(root, lib, "libcurand", "10", "10.3.0.86", 62, NULL, NULL);
        fx_library(root, lib, "libcusparse", "11", "11.7.5.86", 62, NULL, NULL);
        fx_library(root, lib, "libnvrtc", "11.2", "11.8.89", 62, NULL, NULL);
        /* CUPTI's file is named by its year version, not 11.8.87. */
        fx_library(root, lib, "libcupti", "11.8", "2022.3.0", 62, NULL, NULL);
}

/* CUDA 10.2 from NVIDIA's deb repository: the toolkit in
 * /usr/local/cuda-10.2 (version.txt), its cuBLAS (libcublas10) outside it
 * in /usr/lib/x86_64-linux-gnu, as the 10.1 and 10.2 packages put it. */
static void build_deb_10_2(const char *root)
{
        const char *lib = "usr/lib/x86_64-linux-gnu";

        fx_cuda_toolkit(root, "usr/local/cuda-10.2",
                        &(struct fx_cuda){ .version = "10.2", .release = "10.2.89", .cudart = "10.2.89",
                                           .nvcc = "10.2.89", .version_file = FX_VERSION_TXT,
                                           .no_math = true });
        fx_library(root, lib, "libcublasLt", "10", "10.2.2.89", 62, NULL, NULL);
        fx_library(root, lib, "libcublas", "10", "10.2.2.89", 62,
                   (const char *const[]){ "libcublasLt.so.10", NULL }, NULL);
}

/* A conda environment: targets/<triple> with lib/ links, cuDNN and NCCL
 * straight in lib/ and include/. */
static void build_conda(const char *root)
{
        const char *env = "conda/envs/torch";
        _cleanup_free_ char *tlib = xasprintf("%s/targets/x86_64-linux/lib", env);
        _cleanup_free_ char *tinc = xasprintf("%s/targets/x86_64-linux/include/cuda_runtime_api.h", env);
        _cleanup_free_ char *meta = xasprintf("%s/conda-meta/cuda-cudart-12.6.37-0.json", env);
        _cleanup_free_ char *link = xasprintf("%s/lib/libcudart.so.12", env);
        _cleanup_free_ char *target = xasprintf("%s/%s/libcudart.so.12.6.37", root, tlib);

        fx_library(root, tlib, "libcudart", "12", "12.6.37", 62, NULL, NULL);
        fx_library(root, tlib, "libcublas", "12", "12.6.4.1", 62, NULL, NULL);
        fx_write(root, tinc, "#define CUDART_VERSION  12060\n");
        fx_write(root, meta, "{}\n");
        fx_symlink(root, link, target);
        fx_cudnn(root, env, &(struct fx_cudnn){ .version = "9.3.0", .cuda_major = 12 });
        fx_nccl(root, env, &(struct fx_nccl){ .version = "2.23.4", .cuda = "12.6" });
}

/* Spack prefixes: runfile tree and source-built NCCL under hashed names. */
static void build_spack(const char *root)
{
        const char *base = "spack/opt/spack/linux-ubuntu22.04-zen2/gcc-12.3.0";
        _cleanup_free_ char *cuda = xasprintf("%s/cuda-12.4.0-a6ajxenobex5bvpejykhtnfut4arfpwh", base);
        _cleanup_free_ char *cudnn = xasprintf("%s/cudnn-8.9.7.29-12-q3vxk2ixtwpgzjzpvlqcwwbcnhkpsmzr", base);
        _cleanup_free_ char *nccl = xasprintf("%s/nccl-2.21.5-1-tkz5zbofwdddcqcyf6kbm3nuvthrqhcs", base);

        fx_cuda_toolkit(root, cuda,
                        &(struct fx_cuda){ .version = "12.4", .cudart = "12.4.99", .nvcc = "12.4.99",
                                           .version_file = FX_VERSION_JSON_DATE });
        fx_cudnn(root, cudnn, &(struct fx_cudnn){ .version = "8.9.7", .cuda_major = 12 });
        fx_nccl(root, nccl, &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4" });
}

/* EasyBuild: software/<Name>/<version>, the CUDA of cuDNN/NCCL builds in
 * the version suffix, and its extra lib link in the CUDA prefix. */
static void build_easybuild(const char *root)
{
        fx_cuda_toolkit(root, "easybuild/software/CUDA/12.4.0",
                        &(struct fx_cuda){ .version = "12.4", .cudart = "12.4.99", .nvcc = "12.4.99",
                                           .version_file = FX_VERSION_JSON_DATE, .cupti = true });
        fx_symlink(root, "easybuild/software/CUDA/12.4.0/lib", "lib64");
        fx_write(root, "easybuild/software/CUDA/12.4.0/easybuild/CUDA-12.4.0.eb", "name = 'CUDA'\n");
        fx_cudnn(root, "easybuild/software/cuDNN/9.5.0.50-CUDA-12.6.0",
                 &(struct fx_cudnn){ .version = "9.5.0", .cuda_major = 12 });
        fx_nccl(root, "easybuild/software/NCCL/2.18.3-GCCcore-12.3.0-CUDA-12.1.1",
                &(struct fx_nccl){ .version = "2.18.3", .cuda = "12.1" });
}

/* A prefix assembled from wheels (like /usr/local/cuda-13.0 here): real
 * lib/, lib64 -> lib, targets links pointing back, dist-info/ copies. */
static void build_assembled(const char *root)
{
        const char *p = "usr/local/cuda-13.0";
        _cleanup_free_ char *lib = xasprintf("%s/lib", p), *di = xasprintf("%s/dist-info", p);
        _cleanup_free_ char *h = xasprintf("%s/include/cuda_runtime_api.h", p);
        _cleanup_free_ char *ch = xasprintf("%s/include/cuda.h", p);
        _cleanup_free_ char *nvcc = xasprintf("%s/bin/nvcc", p);
        _cleanup_free_ char *l64 = xasprintf("%s/lib64", p);
        _cleanup_free_ char *ti = xasprintf("%s/targets/x86_64-linux/include", p);
        _cleanup_free_ char *tl = xasprintf("%s/targets/x86_64-linux/lib", p);
        _cleanup_free_ char *target = path_join(root, p);

        fx_library(root, lib, "libcudart", "13", NULL, 62, NULL, NULL);
        fx_library(root, lib, "libcublas", "13", NULL, 62, NULL, NULL);
        fx_write(root, h, "#define CUDART_VERSION  13000\n");
        fx_write(root, ch, "#define CUDA_VERSION 13000\n");
        fx_elf(root, nvcc, &(struct elfstub){ .strings = (const char *const[]){
                                                      "Cuda compilation tools, release 13.0, V13.0.88", NULL } });
        fx_symlink(root, l64, "lib");
        fx_symlink(root, ti, "../../include");
        fx_symlink(root, tl, "../../lib");
        fx_cudnn(root, p, &(struct fx_cudnn){ .version = "9.19.0", .cuda_major = 13, .soname_only = true });
        fx_nccl(root, p, &(struct fx_nccl){ .version = "2.28.9", .cuda = "13.0", .soname_only = true });
        fx_dist_info(root, di, "nvidia-cuda-runtime", "13.0.96");
        fx_dist_info(root, di, "nvidia-cuda-nvcc", "13.0.88");
        fx_dist_info(root, di, "nvidia-cudnn-cu13", "9.19.0.56");
        fx_dist_info(root, di, "nvidia-nccl-cu13", "2.28.9");
        fx_symlink(root, "usr/local/cuda", target);
}

/* cuSPARSELt from NVIDIA's archives, Spack and EasyBuild: a 0.6 archive
 * (one CUDA 12 build, no suffix), a 0.8 archive for CUDA 13, Spack's
 * 0.8.1-cuda120 and an EasyBuild 0.7.1.0-CUDA-12.6.0. */
static void build_cusparselt_tarballs(const char *root)
{
        fx_cusparselt(root, "apps/libcusparse_lt-linux-x86_64-0.6.3.2-archive",
                      &(struct fx_cusparselt){ .version = "0.6.3.2" });
        fx_cusparselt(root, "apps/libcusparse_lt-linux-x86_64-0.8.0.4_cuda13-archive",
                      &(struct fx_cusparselt){ .version = "0.8.0.4" });
        fx_cusparselt(root,
                      "apps/spack/opt/spack/linux-ubuntu22.04-zen2/gcc-12.3.0/"
                      "cusparselt-0.8.1-cuda120-p4kq3w5dcvqnvrfsw2b3zbd7bhqgxl6c",
                      &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_cusparselt(root, "apps/easybuild/software/cuSPARSELt/0.7.1.0-CUDA-12.6.0",
                      &(struct fx_cusparselt){ .version = "0.7.1.0" });
}

/* cuSPARSELt from packages: NVIDIA's CUDA-repository deb for CUDA 12
 * (lib/<triple>/libcusparseLt/12, include/libcusparseLt/12), the CUDA 12
 * wheel (the library by its soname only) and a conda environment whose
 * package record pins CUDA 13. */
static void build_cusparselt_packages(const char *root)
{
        const char *site = "venv/lib/python3.11/site-packages";
        _cleanup_free_ char *wheel = xasprintf("%s/nvidia/cusparselt", site);

        fx_cusparselt(root, "usr", &(struct fx_cusparselt){ .version = "0.8.1.1",
                                                           .lib = "lib/x86_64-linux-gnu/libcusparseLt/12",
                                                           .include = "include/libcusparseLt/12" });
        fx_cusparselt(root, wheel, &(struct fx_cusparselt){ .version = "0.6.3.2", .soname_only = true });
        fx_dist_info(root, site, "nvidia-cusparselt-cu12", "0.6.3");
        fx_cusparselt(root, "conda/envs/torch", &(struct fx_cusparselt){ .version = "0.8.0.4" });
        fx_write(root, "conda/envs/torch/conda-meta/cusparselt-0.8.0.4-hbd2cd06_1.json",
                 "{\n  \"build\": \"hbd2cd06_1\",\n  \"depends\": [\n    \"__glibc >=2.28,<3.0.a0\",\n"
                 "    \"cuda-version >=13,<14.0a0\",\n    \"libgcc >=14\"\n  ],\n"
                 "  \"name\": \"cusparselt\",\n  \"version\": \"0.8.0.4\"\n}\n");
}

/* cuSPARSELt wheels as pip leaves them, RECORDs included: a venv that had
 * torch for CUDA 12 (nvidia-cusparselt-cu12 0.6.3: lib/libcusparseLt.so.0
 * and include/cusparseLt.h) and then torch for CUDA 13, whose
 * nvidia-cusparselt-cu13 0.8.1 (the library alone, no header) went into
 * the same nvidia/cusparselt: its library replaced cu12's, cu12's header
 * stays. What is there is the cu13 wheel: a runtime install. */
static void build_cusparselt_wheels(const char *root)
{
        const char *site = "venv/lib/python3.12/site-packages";
        _cleanup_free_ char *wheel = xasprintf("%s/nvidia/cusparselt", site);
        static const char *const lib[] = { "nvidia/cusparselt/lib/libcusparseLt.so.0", NULL };

        fx_cusparselt(root, wheel, &(struct fx_cusparselt){ .version = "0.6.3.2", .soname_only = true });
        fx_wheel_record(root, site, "nvidia-cusparselt-cu12", "0.6.3",
                        (const char *const[]){ "nvidia/cusparselt/include/cusparseLt.h", lib[0], NULL });
        fx_cusparselt(root, wheel, &(struct fx_cusparselt){ .version = "0.8.1.1", .soname_only = true,
                                                           .no_header = true,
                                                           .strings = (const char *const[]){ "cuSPARSELt 0.8.1 for CUDA 13", NULL } });
        fx_wheel_record(root, site, "nvidia-cusparselt-cu13", "0.8.1", lib);
}

/* NVSHMEM without CUDA: NVIDIA's archives for CUDA 12 and 13, an
 * EasyBuild prefix, the nvidia-nvshmem-cu12 wheel (libnvshmem_host.so.3
 * only) and NVIDIA's apt package (nvshmem/12, include/nvshmem_12). */
static void build_nvshmem(const char *root)
{
        const char *site = "venv/lib/python3.12/site-packages";
        _cleanup_free_ char *wheel = xasprintf("%s/nvidia/nvshmem", site);

        fx_nvshmem(root, "apps/libnvshmem-linux-x86_64-3.4.5_cuda12-archive",
                   &(struct fx_nvshmem){ .version = "3.4.5" });
        fx_nvshmem(root, "apps/libnvshmem-linux-x86_64-3.5.19_cuda13-archive",
                   &(struct fx_nvshmem){ .version = "3.5.19", .transport = 4 });
        fx_nvshmem(root, "apps/software/NVSHMEM/3.2.5-gompi-2024a-CUDA-12.6.0",
                   &(struct fx_nvshmem){ .version = "3.2.5" });
        fx_nvshmem(root, wheel, &(struct fx_nvshmem){ .version = "3.3.20", .soname_only = true, .no_bin = true });
        fx_dist_info(root, site, "nvidia-nvshmem-cu12", "3.3.20");
        fx_nvshmem(root, "usr", &(struct fx_nvshmem){ .version = "3.3.24", .lib = "lib/x86_64-linux-gnu/nvshmem/12",
                                                       .include = "include/nvshmem_12", .no_bin = true });
}

/* What a package manager wrote in a prefix (metadata.h): a Spack
 * NVSHMEM whose libraries name no CUDA, with its spec.json (Spack 0.22's
 * format, the cuda dependency by hash); an EasyBuild NVSHMEM with its
 * easyconfig; a Spack NCCL whose spec.json says CUDA 13.0.0 where its
 * library says 12.9; a Spack NVSHMEM with a truncated spec.json (left,
 * scan goes on); the Spack CUDA 12.6.0 the NVSHMEM's spec.json names (by
 * its hash); a Spack CUDA
 * whose version.json says 12.4 where cuda.h, libcudart and nvcc say 12.9. */
static void build_metadata(const char *root)
{
        const char *base = "spack/opt/spack/linux-ubuntu22.04-zen2/gcc-12.3.0";
        _cleanup_free_ char *nvshmem = xasprintf("%s/nvshmem-3.1.7-1-k7qz3xvqmmb2fvmpyl4ld6hmxx3kbfzz", base);
        _cleanup_free_ char *broken = xasprintf("%s/nvshmem-3.0.6-4-a2g3sd4lm5xw6fxq7eqlb4rr7mjsoqhv", base);
        _cleanup_free_ char *nccl = xasprintf("%s/nccl-2.23.4-1-5qbq2ts7nfiyhapjvqbn5whgxofrzqz7", base);
        _cleanup_free_ char *cuda = xasprintf("%s/cuda-12.9.1-ycpnb6nqfo7v3wuytkeaxkn2q6d2jwqy", base);
        _cleanup_free_ char *cuda126 = xasprintf("%s/cuda-12.6.0-ffjxl7u7gsm5hgvzkmmm2rj3lavwhvja", base);
        _cleanup_free_ char *f = NULL;
        const char *eb = "easybuild/software/NVSHMEM/3.2.5-gompi-2024a-CUDA-12.6.0";

        fx_nvshmem(root, nvshmem, &(struct fx_nvshmem){ .version = "3.1.7" });
        f = xasprintf("%s/.spack/spec.json", nvshmem);
        fx_write(root, f,
                 "{\n \"spec\": {\n  \"_meta\": {\"version\": 4},\n  \"nodes\": [\n"
                 "   {\"name\": \"nvshmem\", \"version\": \"3.1.7-1\", \"arch\": {\"platform\": \"linux\", \"platform_os\": \"ubuntu22.04\", \"target\": \"zen2\"},\n"
                 "    \"compiler\": {\"name\": \"gcc\", \"version\": \"12.3.0\"}, \"namespace\": \"builtin\",\n"
                 "    \"parameters\": {\"build_system\": \"makefile\", \"cuda\": true, \"cuda_arch\": [\"80\", \"90\"], \"gdrcopy\": false, \"mpi\": true, \"ucx\": false},\n"
                 "    \"package_hash\": \"lzqdnnt5xzeo2yaw6ttvvn5jmt2krj7wrpkxfyslj62tfx6ogeuq====\",\n"
                 "    \"dependencies\": [\n"
                 "     {\"name\": \"cuda\", \"hash\": \"ffjxl7u7gsm5hgvzkmmm2rj3lavwhvja\", \"parameters\": {\"deptypes\": [\"build\", \"link\"], \"virtuals\": []}},\n"
                 "     {\"name\": \"openmpi\", \"hash\": \"3xnkcgvqv2y4ai7qeukpgmmmeleswyaq\", \"parameters\": {\"deptypes\": [\"build\", \"link\"], \"virtuals\": [\"mpi\"]}}\n"
                 "    ],\n    \"hash\": \"k7qz3xvqmmb2fvmpyl4ld6hmxx3kbfzz\"},\n"
                 "   {\"name\": \"cuda\", \"version\": \"12.6.0\", \"arch\": {\"platform\": \"linux\", \"platform_os\": \"ubuntu22.04\", \"target\": \"zen2\"},\n"
                 "    \"namespace\": \"builtin\", \"parameters\": {\"allow-unsupported-compilers\": false, \"dev\": false},\n"
                 "    \"hash\": \"ffjxl7u7gsm5hgvzkmmm2rj3lavwhvja\"},\n"
                 "   {\"name\": \"openmpi\", \"version\": \"4.1.6\", \"hash\": \"3xnkcgvqv2y4ai7qeukpgmmmeleswyaq\"}\n"
                 "  ]\n }\n}\n");
        free(f);
        fx_nvshmem(root, broken, &(struct fx_nvshmem){ .version = "3.0.6" });
        f = xasprintf("%s/.spack/spec.json", broken);
        fx_write(root, f, "{\n \"spec\": {\n  \"_meta\": {\"version\": 4},\n  \"nodes\": [\n   {\"name\": \"nvshmem\", \"vers");
        free(f);
        fx_nvshmem(root, eb, &(struct fx_nvshmem){ .version = "3.2.5" });
        f = xasprintf("%s/easybuild/NVSHMEM-3.2.5-gompi-2024a-CUDA-12.6.0.eb", eb);
        fx_write(root, f,
                 "easyblock = 'MakeCp'\n\nname = 'NVSHMEM'\nversion = '3.2.5'\nversionsuffix = '-CUDA-%(cudaver)s'\n\n"
                 "homepage = 'https://developer.nvidia.com/nvshmem'\n"
                 "description = \"\"\"NVSHMEM is a parallel programming interface based on OpenSHMEM that provides\n"
                 " efficient and scalable communication for NVIDIA GPU clusters.\"\"\"\n\n"
                 "toolchain = {'name': 'gompi', 'version': '2024a'}\n\n"
                 "source_urls = ['https://developer.download.nvidia.com/compute/redist/nvshmem/%(version)s/source/']\n"
                 "sources = ['nvshmem_src_%(version)s-1.txz']\n\n"
                 "builddependencies = [('CMake', '3.29.3')]\n\n"
                 "dependencies = [\n    ('CUDA', '12.6.0', '', SYSTEM),\n    ('NCCL', '2.22.3', versionsuffix),\n    ('UCX-CUDA', '1.16.0', versionsuffix),\n]\n\n"
                 "moduleclass = 'lib'\n");
        free(f);
        fx_nccl(root, nccl, &(struct fx_nccl){ .version = "2.23.4", .cuda = "12.9" });
        f = xasprintf("%s/.spack/spec.json", nccl);
        fx_write(root, f,
                 "{\"spec\": {\"_meta\": {\"version\": 4}, \"nodes\": [\n"
                 " {\"name\": \"nccl\", \"version\": \"2.23.4-1\", \"parameters\": {\"cuda\": true, \"cuda_arch\": [\"90\"]},\n"
                 "  \"dependencies\": [{\"name\": \"cuda\", \"hash\": \"7bslq2mdnxwdjkqpvvqyqbbpocvqfrlq\", \"parameters\": {\"deptypes\": [\"build\", \"link\"], \"virtuals\": []}}],\n"
                 "  \"hash\": \"5qbq2ts7nfiyhapjvqbn5whgxofrzqz7\"},\n"
                 " {\"name\": \"cuda\", \"version\": \"13.0.0\", \"hash\": \"7bslq2mdnxwdjkqpvvqyqbbpocvqfrlq\"}]}}\n");
        free(f);
        fx_cuda_toolkit(root, cuda126,
                        &(struct fx_cuda){ .version = "12.6", .release = "12.6.0", .cudart = "12.6.37",
                                           .nvcc = "12.6.20", .version_file = FX_VERSION_JSON_DATE });
        fx_cuda_toolkit(root, cuda,
                        &(struct fx_cuda){ .version = "12.9", .release = "12.9.1", .cudart = "12.9.79", .nvcc = "12.9.86",
                                           .version_file = FX_VERSION_JSON_DATE });
        f = xasprintf("%s/version.json", cuda);
        fx_write(root, f, "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"version\" : \"12.4.1\"\n   }\n}\n");
}

/* MAGMA built by a site (make.inc: no soname), by EasyBuild (CMake,
 * soname libmagma.so) and by Spack (for CUDA 13, ILP64). */
static void build_magma_builds(const char *root)
{
        fx_magma(root, "apps/magma/2.8.0", &(struct fx_magma){ .version = "2.8.0", .cuda_major = 12, .no_soname = true });
        fx_magma(root, "easybuild/software/magma/2.9.0-foss-2024a-CUDA-12.6.0",
                 &(struct fx_magma){ .version = "2.9.0", .cuda_major = 12 });
        fx_magma(root, "spack/opt/spack/linux-ubuntu22.04-zen2/gcc-12.3.0/magma-2.10.0-w3jvkf7hq2mw5rcqbyzylpkyxpbfkm7v",
                 &(struct fx_magma){ .version = "2.10.0", .cuda_major = 13, .ilp64 = true });
}

/* MAGMA with a CUDA: PyTorch CI's static build in /usr/local/cuda-12.6/magma,
 * a libmagma.so copied into a CUDA 13.0 prefix, and conda-forge's libmagma
 * in an environment (its CUDA runtime left out: the conda layout has its
 * own fixture). */
static void build_magma_cuda(const char *root)
{
        const char *env = "conda/envs/torch";
        _cleanup_free_ char *meta = xasprintf("%s/conda-meta/libmagma-2.9.0-h19665d7_1.json", env);

        fx_cuda_toolkit(root, "usr/local/cuda-12.6",
                        &(struct fx_cuda){ .version = "12.6", .release = "12.6.3", .cudart = "12.6.77",
                                           .nvcc = "12.6.85" });
        fx_magma(root, "usr/local/cuda-12.6/magma", &(struct fx_magma){ .version = "2.6.1", .static_only = true });
        fx_cuda_toolkit(root, "usr/local/cuda-13.0",
                        &(struct fx_cuda){ .version = "13.0", .release = "13.0.2", .cudart = "13.0.96",
                                           .nvcc = "13.0.88" });
        fx_magma(root, "usr/local/cuda-13.0", &(struct fx_magma){ .version = "2.9.0", .cuda_major = 13, .lib = "lib64" });
        fx_write(root, meta, "{}\n");
        fx_magma(root, env, &(struct fx_magma){ .version = "2.9.0", .cuda_major = 12 });
}

/* cuDSS from NVIDIA's archives (one per CUDA major since they are split),
 * an EasyBuild prefix (cuDSS/0.6.0.5-CUDAcore-12.6.2, as upstream names
 * it) and a Spack prefix, each on its own, with no CUDA around. */
static void build_cudss_tarballs(const char *root)
{
        fx_cudss(root, "apps/libcudss-linux-x86_64-0.7.1.4_cuda12-archive",
                 &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12 });
        fx_cudss(root, "apps/libcudss-linux-x86_64-0.8.0.10_cuda13-archive",
                 &(struct fx_cudss){ .version = "0.8.0", .cuda_major = 13 });
        fx_cudss(root, "easybuild/software/cuDSS/0.6.0.5-CUDAcore-12.6.2",
                 &(struct fx_cudss){ .version = "0.6.0", .cuda_major = 12 });
        fx_cudss(root, "spack/opt/spack/linux-ubuntu22.04-zen2/gcc-12.3.0/cudss-0.5.0-xqz3kd5f7ygxn4bwuhnx3hn5wbqvk2jd",
                 &(struct fx_cudss){ .version = "0.5.0", .cuda_major = 12 });
}

/* cuDSS from NVIDIA's Debian packages (the CUDA 12 and 13 builds side by
 * side in …/libcudss/<N>), a CUDA 12 wheel in the nvidia/cu12 directory it
 * shares with the other cu12 wheels (soname files only), and a conda
 * environment pinning cuda-version 12.9. */
static void build_cudss_system(const char *root)
{
        const char *site = "venv/lib/python3.12/site-packages";
        _cleanup_free_ char *cu12 = xasprintf("%s/nvidia/cu12", site);
        _cleanup_free_ char *cu12_lib = xasprintf("%s/lib", cu12);

        fx_cudss(root, "usr", &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12,
                                                   .lib = "lib/x86_64-linux-gnu/libcudss/12",
                                                   .include = "include/libcudss/12" });
        fx_cudss(root, "usr", &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 13,
                                                   .lib = "lib/x86_64-linux-gnu/libcudss/13",
                                                   .include = "include/libcudss/13" });
        fx_cudss(root, cu12, &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12, .soname_only = true });
        fx_library(root, cu12_lib, "libcublas", "12", NULL, 62, (const char *const[]){ "libcublasLt.so.12", NULL },
                   NULL);
        fx_dist_info(root, site, "nvidia-cudss-cu12", "0.7.1.4");
        fx_dist_info(root, site, "nvidia-cublas-cu12", "12.9.1.4");
        fx_cudss(root, "conda/envs/solver", &(struct fx_cudss){ .version = "0.6.0", .cuda_major = 12 });
        fx_write(root, "conda/envs/solver/conda-meta/libcudss-0.6.0.5-h5888daf_1.json", "{}\n");
        fx_write(root, "conda/envs/solver/conda-meta/cuda-version-12.9-h4f385c5_3.json", "{}\n");
}

/* cuTENSOR from NVIDIA's archives: 2.2.0.0's one prefix with a library
 * directory for each CUDA major (lib/11, lib/12: two installs, each under
 * its own CUDA/<N>), and 2.3.1.0's one-major _cuda13 archive (lib/). */
static void build_cutensor_tarballs(const char *root)
{
        static const char multi[] = "apps/libcutensor-linux-x86_64-2.2.0.0-archive";

        fx_cutensor(root, multi, &(struct fx_cutensor){ .version = "2.2.0", .cuda_major = 11, .lib = "lib/11" });
        fx_cutensor(root, multi, &(struct fx_cutensor){ .version = "2.2.0", .cuda_major = 12, .lib = "lib/12",
                                                         .no_header = true });
        fx_cutensor(root, "apps/libcutensor-linux-x86_64-2.3.1.0_cuda13-archive",
                    &(struct fx_cutensor){ .version = "2.3.1", .cuda_major = 13 });
}

/* CUDA forward compatibility: NVIDIA's cuda-compat-12-9 package in the
 * 12.9 toolkit's compat/ (driver 575.51.03), a 12.4 toolkit without one,
 * and a conda environment with conda's cuda-compat package in
 * <env>/cuda-compat (driver 570.124.06). */
static void build_compat(const char *root)
{
        fx_cuda_toolkit(root, "usr/local/cuda-12.9",
                        &(struct fx_cuda){ .version = "12.9", .release = "12.9.1", .cudart = "12.9.79",
                                           .nvcc = "12.9.86", .compat = "575.51.03" });
        fx_cuda_toolkit(root, "usr/local/cuda-12.4",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131" });
        fx_cuda_toolkit(root, "conda",
                        &(struct fx_cuda){ .version = "12.8", .release = "12.8.1", .cudart = "12.8.90",
                                           .nvcc = "12.8.93", .compat = "570.124.06",
                                           .compat_dir = "cuda-compat" });
        fx_write(root, "conda/conda-meta/history", "==> 2025-05-01 12:00:00 <==\n");
}

const struct layout_fixture layout_fixtures[] = {
        { "runfile", build_runfile, { "usr/local", NULL } },
        { "runfile-sbsa", build_runfile_sbsa, { "opt", NULL } },
        { "version-txt", build_version_txt, { "usr/local", NULL } },
        { "hpc-sdk", build_hpc_sdk, { "opt/nvidia/hpc_sdk", NULL } },
        { "cudnn-tarballs", build_cudnn_tarballs, { "apps", NULL } },
        { "merged", build_merged, { "usr/local", NULL } },
        { "nccl-tarballs", build_nccl_tarballs, { "apps", NULL } },
        { "wheels-cu12", build_wheels_cu12, { "venv", NULL } },
        { "wheels-cu13", build_wheels_cu13, { "env", NULL } },
        { "system", build_system,
          { "usr/lib/cuda", "usr/lib/nvidia-cuda-toolkit", "usr/lib/x86_64-linux-gnu", NULL } },
        { "site-11.8", build_site_11_8, { "apps", NULL } },
        { "deb-10.2", build_deb_10_2, { "usr/local", NULL } },
        { "conda", build_conda, { "conda", NULL } },
        { "spack", build_spack, { "spack", NULL } },
        { "easybuild", build_easybuild, { "easybuild", NULL } },
        { "assembled", build_assembled, { "usr/local", NULL } },
        { "cusparselt-tarballs", build_cusparselt_tarballs, { "apps", NULL } },
        { "cusparselt-packages", build_cusparselt_packages,
          { "usr/lib/x86_64-linux-gnu", "venv", "conda", NULL } },
        { "cusparselt-wheels", build_cusparselt_wheels, { "venv", NULL } },
        { "nvshmem", build_nvshmem, { "apps", "venv", "usr/lib/x86_64-linux-gnu", NULL } },
        { "metadata", build_metadata, { "spack", "easybuild", NULL } },
        { "magma-builds", build_magma_builds, { "apps", "easybuild", "spack", NULL } },
        { "magma-cuda", build_magma_cuda, { "usr/local", "conda", NULL } },
        { "cudss-tarballs", build_cudss_tarballs, { "apps", "easybuild", "spack" } },
        { "cudss-system", build_cudss_system, { "usr/lib/x86_64-linux-gnu", "venv", "conda" } },
        { "cutensor-tarballs", build_cutensor_tarballs, { "apps", NULL } },
        { "compat", build_compat, { "usr/local", "conda", NULL } },
                { NULL, NULL, { NULL } },
};

const struct layout_fixture *layout_fixture_find(const char *name)
{
        for (const struct layout_fixture *f = layout_fixtures; f->name; f++)
                if (streq(f->name, name))
                        return f;
        return NULL;
}
