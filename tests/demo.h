/* demo.h: the bundled demo tree that the reference modulefiles/ are
 * generated from (doc/HACKING.md "Tests"; tests/modules/expect/demo.txt). */
#ifndef CUDAMOD_DEMO_H
#define CUDAMOD_DEMO_H

/* Under root/sw: CUDA 11.8 and 12.9 (runfile layout), cuDNN 8.9.7 for
 * CUDA 11 and 9.7.1 for CUDA 12 (archives), NCCL 2.21.5 for CUDA 12, and
 * for CUDA 12 cuSPARSELt 0.8.1.1, cuDSS 0.7.1.4 and NVSHMEM 3.4.5 (NVIDIA's
 * _cuda12 archives) and MAGMA 2.9.0 (a site build). */
void demo_build(const char *root);
/* The demo's CUDA 11.8 and 12.9, cuDNN and NCCL only, without the rest of
 * the stack: for the tests that count and name its files. */
void demo_build_core(const char *root);

/* The tree `cudamod doctor` is shown on: under root/sw, CUDA 12.4 and 13.0
 * (with cuSPARSE and libnvJitLink), cuDNN 9.1.0 for CUDA 12 and NCCL 2.21.5
 * for CUDA 12.4; a source-built torch 2.5.1 for CUDA 12.4 with cuDNN 9 and
 * NCCL at root/site-packages/torch. */
void demo_doctor_build(const char *root);
/* Its CUDA, cuDNN and NCCL trees without a torch (demo_doctor_trees), and
 * with Debian's torch instead (fx_debian_torch, its system libraries
 * reached through RUNPATH: the command reads the host's loader cache). */
void demo_doctor_trees(const char *root);
void demo_doctor_debian_build(const char *root);

#endif
