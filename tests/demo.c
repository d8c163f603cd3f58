/* demo.c: the bundled demo tree (see demo.h). */
#include "demo.h"
#include "fixture.h"

void demo_build_core(const char *root)
{
        fx_cuda_toolkit(root, "sw/cuda-11.8",
                        &(struct fx_cuda){ .version = "11.8", .release = "11.8.0", .cudart = "11.8.89",
                                           .nvcc = "11.8.89", .cupti = true });
        fx_cuda_toolkit(root, "sw/cuda-12.9",
                        &(struct fx_cuda){ .version = "12.9", .release = "12.9.1", .cudart = "12.9.79",
                                           .nvcc = "12.9.86", .cupti = true });
        fx_cudnn(root, "sw/cudnn-linux-x86_64-8.9.7.29_cuda11-archive",
                 &(struct fx_cudnn){ .version = "8.9.7", .cuda_major = 11 });
        fx_cudnn(root, "sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive",
                 &(struct fx_cudnn){ .version = "9.7.1", .cuda_major = 12 });
        fx_nccl(root, "sw/nccl_2.21.5-1+cuda12.4_x86_64",
                &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4" });
}

void demo_build(const char *root)
{
        demo_build_core(root);
        /* One of each of the rest of the stack, all for CUDA 12: on a
         * swap to cuda/11.8 they go inactive (Lmod) or are unloaded (EM). */
        fx_cusparselt(root, "sw/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive",
                      &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_cudss(root, "sw/libcudss-linux-x86_64-0.7.1.4_cuda12-archive",
                 &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12 });
        fx_nvshmem(root, "sw/libnvshmem-linux-x86_64-3.4.5_cuda12-archive", &(struct fx_nvshmem){ .version = "3.4.5" });
        fx_magma(root, "sw/magma-2.9.0", &(struct fx_magma){ .version = "2.9.0", .cuda_major = 12 });
}

void demo_doctor_debian_build(const char *root)
{
        demo_doctor_trees(root);
        fx_debian_torch(root, true);
}

void demo_doctor_build(const char *root)
{
        demo_doctor_trees(root);
        fx_torch(root, "site-packages/torch",
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .cusparse = true });
}

void demo_doctor_trees(const char *root)
{
        fx_cuda_toolkit(root, "sw/cuda/12.4",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131", .cusparse = true });
        fx_cuda_toolkit(root, "sw/cuda/13.0",
                        &(struct fx_cuda){ .version = "13.0", .release = "13.0.2", .cudart = "13.0.96",
                                           .nvcc = "13.0.88", .cusparse = true });
        fx_cudnn(root, "sw/cudnn/9.1.0", &(struct fx_cudnn){ .version = "9.1.0", .cuda_major = 12 });
        fx_nccl(root, "sw/nccl/2.21.5", &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4" });
}
