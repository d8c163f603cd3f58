/* test-detect-nvshmem.c: the NVSHMEM detector: its layouts, the release
 * (never the OpenSHMEM spec version), the CUDA major from names and paths
 * alone (it links cudart statically), and what makes it unusable for a
 * PyTorch build. */
#include <check.h>
#include <stdlib.h>

#include "component-nvshmem.h"
#include "fixture.h"
#include "scanhelp.h"
#include "testutil.h"
#include "util.h"

static void assert_path(const char *root, const char *got, const char *rel)
{
        _cleanup_free_ char *want = path_join(root, rel);

        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, want);
}

/* NVIDIA's redist archives, for CUDA 12 and 13 (3.5: transport .so.4). */
START_TEST(nvshmem_archive_tarballs)
{
        const char *a12 = "apps/libnvshmem-linux-x86_64-3.4.5_cuda12-archive";
        const char *a13 = "apps/libnvshmem-linux-sbsa-3.5.19_cuda13-archive";
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        _cleanup_free_ char *lib = path_join(a12, "lib"), *inc = path_join(a12, "include");
        _cleanup_free_ char *bin = path_join(a12, "bin");

        fx_nvshmem(root, a12, &(struct fx_nvshmem){ .version = "3.4.5" });
        fx_nvshmem(root, a13, &(struct fx_nvshmem){ .version = "3.5.19", .transport = 4, .machine = 183 });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_nvshmem), 2);
        in = find(&r, &component_nvshmem, "3.4.5_cuda12-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "3.4.5");
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_str_eq(in->arch, "x86_64");
        assert_path(root, in->lib_dir, lib);
        assert_path(root, in->include_dir, inc);
        assert_path(root, in->bin_dir, bin);
        ck_assert_int_eq(in->n_problems, 0);
        in = find(&r, &component_nvshmem, "3.5.19_cuda13-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "3.5.19");
        ck_assert_str_eq(ver(&in->cuda_version), "13");
        ck_assert_str_eq(in->arch, "aarch64");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* nvidia-nvshmem-cu12: libnvshmem_host.so.3 only, the CUDA in the dist name. */
START_TEST(nvshmem_wheel_cu12)
{
        const char *site = "venv/lib/python3.12/site-packages";
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        _cleanup_free_ char *pkg = xasprintf("%s/nvidia/nvshmem", site);

        fx_nvshmem(root, pkg, &(struct fx_nvshmem){ .version = "3.3.20", .soname_only = true, .no_bin = true });
        fx_dist_info(root, site, "nvidia-nvshmem-cu12", "3.3.20");
        scan_fixture(root, (const char *const[]){ "venv", NULL }, &r);
        in = find(&r, &component_nvshmem, "/nvidia/nvshmem");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_WHEEL);
        ck_assert_str_eq(ver(&in->version), "3.3.20");
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        ck_assert_ptr_null(in->bin_dir);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* conda's runtime-only libnvshmem3: no libnvshmem_device.a, so PyTorch's
 * build cannot use it; the CUDA from the environment's cuda-version. */
START_TEST(nvshmem_conda_runtime_only)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nvshmem(root, "conda/envs/torch", &(struct fx_nvshmem){ .version = "3.4.5", .no_device = true,
                                                                    .no_bin = true });
        fx_write(root, "conda/envs/torch/conda-meta/cuda-version-12.9-h4f385c5_3.json", "{}\n");
        fx_write(root, "conda/envs/torch/conda-meta/libnvshmem3-3.4.5-h1a2b3c4_0.json", "{}\n");
        scan_fixture(root, (const char *const[]){ "conda", NULL }, &r);
        in = find(&r, &component_nvshmem, "/envs/torch");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_CONDA);
        ck_assert_str_eq(ver(&in->version), "3.4.5");
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        ck_assert_int_eq(in->n_problems, 1);
        ck_assert(install_has_problem(in, "missing-device-library"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* Two names of the CUDA that disagree: the environment pins CUDA 13 but
 * the runtime beside it is CUDA 12. */
START_TEST(nvshmem_conda_cuda_disagreement)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nvshmem(root, "conda/envs/x", &(struct fx_nvshmem){ .version = "3.4.5", .no_bin = true });
        fx_library(root, "conda/envs/x/lib", "libcudart", "12", "12.9.79", 0, NULL, NULL);
        fx_write(root, "conda/envs/x/conda-meta/cuda-version-13.0-h1_3.json", "{}\n");
        scan_fixture(root, (const char *const[]){ "conda", NULL }, &r);
        in = find(&r, &component_nvshmem, "/envs/x");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->cuda_version), "13");
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(nvshmem_hpc_sdk_comm_libs)
{
        const char *p = "opt/nvidia/hpc_sdk/Linux_x86_64/24.5/comm_libs/12.4/nvshmem";
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nvshmem(root, p, &(struct fx_nvshmem){ .version = "3.0.6" });
        scan_fixture(root, (const char *const[]){ "opt/nvidia/hpc_sdk", NULL }, &r);
        in = find(&r, &component_nvshmem, "/comm_libs/12.4/nvshmem");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_HPC_SDK);
        ck_assert_str_eq(ver(&in->version), "3.0.6");
        ck_assert_str_eq(ver(&in->cuda_version), "12.4");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* EasyBuild's NVSHMEM/<ver>-gompi-<tc>-CUDA-<cver> and a Spack prefix,
 * whose name tells no CUDA (a flat module is still made). */
START_TEST(nvshmem_easybuild_and_spack)
{
        const char *eb = "sw/software/NVSHMEM/3.2.5-gompi-2024a-CUDA-12.6.0";
        const char *sp = "sw/spack/linux-zen2/gcc-12.3.0/nvshmem-3.4.5-q3vxk2ixtwpgzjzpvlqcwwbcnhkpsmzr";
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nvshmem(root, eb, &(struct fx_nvshmem){ .version = "3.2.5" });
        fx_nvshmem(root, sp, &(struct fx_nvshmem){ .version = "3.4.5" });
        scan_fixture(root, (const char *const[]){ "sw", NULL }, &r);
        in = find(&r, &component_nvshmem, "-CUDA-12.6.0");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_str_eq(ver(&in->version), "3.2.5");
        ck_assert_str_eq(ver(&in->cuda_version), "12.6");
        ck_assert_int_eq(in->n_problems, 0);
        in = find(&r, &component_nvshmem, "cnhkpsmzr");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "3.4.5");
        ck_assert_int_eq(in->cuda_version.count, 0);
        ck_assert_int_eq(install_cuda_major(in), -1);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* Copied into a CUDA 12 prefix: the runtime beside it tells the major. */
START_TEST(nvshmem_merged_into_cuda_prefix)
{
        const char *p = "usr/local/cuda-12.8";
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cuda_toolkit(root, p, &(struct fx_cuda){ .version = "12.8", .release = "12.8.1", .cudart = "12.8.57", .nvcc = "12.8.61" });
        fx_nvshmem(root, p, &(struct fx_nvshmem){ .version = "3.4.5", .lib = "targets/x86_64-linux/lib",
                                                   .include = "targets/x86_64-linux/include", .no_bin = true });
        scan_fixture(root, (const char *const[]){ "usr/local", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_nvshmem), 1);
        in = find(&r, &component_nvshmem, "/cuda-12.8");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_MERGED);
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        ck_assert_ptr_null(in->bin_dir);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* NVIDIA's apt packages: /usr/lib/<triple>/nvshmem/12 and
 * /usr/include/nvshmem_12; no NVSHMEM_HOME PyTorch could use. */
START_TEST(nvshmem_apt_package)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nvshmem(root, "usr", &(struct fx_nvshmem){ .version = "3.3.24", .lib = "lib/x86_64-linux-gnu/nvshmem/12",
                                                       .include = "include/nvshmem_12", .no_bin = true });
        scan_fixture(root, (const char *const[]){ "usr/lib/x86_64-linux-gnu", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_nvshmem), 1);
        in = find(&r, &component_nvshmem, "/usr");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_SYSTEM);
        ck_assert_str_eq(ver(&in->version), "3.3.24");
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        assert_path(root, in->lib_dir, "usr/lib/x86_64-linux-gnu/nvshmem/12");
        assert_path(root, in->include_dir, "usr/include/nvshmem_12");
        /* No loader searches nvshmem/12: its module puts it on the paths
         * (plan.c; tests/modules/expect/nvshmem.txt loads it). */
        ck_assert_int_eq(in->n_problems, 1);
        ck_assert(install_has_problem(in, "pytorch-unfindable"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* nvshmem_version.h is from another release than libnvshmem_host. */
START_TEST(nvshmem_header_and_library_disagree)
{
        const char *p = "apps/libnvshmem-linux-x86_64-3.4.5_cuda12-archive";
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nvshmem(root, p, &(struct fx_nvshmem){ .version = "3.4.5" });
        fx_write(root, "apps/libnvshmem-linux-x86_64-3.4.5_cuda12-archive/include/non_abi/nvshmem_version.h",
                 "#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n#define NVSHMEM_VENDOR_MINOR_VERSION 2\n"
                 "#define NVSHMEM_VENDOR_PATCH_VERSION 5\n#define NVSHMEM_TRANSPORT_PLUGIN_MAJOR_VERSION 3\n");
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_nvshmem, "_cuda12-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "3.2.5");
        ck_assert(install_has_problem(in, "version-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* Only the vendor macros tell the release: without them the OpenSHMEM
 * spec version (1.3) in nvshmem_constants.h is never taken for it. */
START_TEST(nvshmem_spec_version_is_not_the_release)
{
        const char *p = "apps/nvshmem";
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nvshmem(root, p, &(struct fx_nvshmem){ .version = "3.4.5", .soname_only = true });
        fx_write(root, "apps/nvshmem/include/non_abi/nvshmem_version.h", "/* empty */\n");
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_nvshmem, "/apps/nvshmem");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->version.count, 0);
        ck_assert(install_has_problem(in, "no-version"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* A transport plugin of another major than the host library loads. */
START_TEST(nvshmem_plugin_of_another_release)
{
        const char *p = "apps/libnvshmem-linux-x86_64-3.5.19_cuda12-archive";
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nvshmem(root, p, &(struct fx_nvshmem){ .version = "3.5.19", .transport = 4, .plugin_major = 3 });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_nvshmem, "_cuda12-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->n_problems, 1);
        ck_assert(install_has_problem(in, "version-mismatch"));
        ck_assert_ptr_nonnull(strstr(in->problems[0].message, "nvshmem_transport_ibrc.so.3"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("detect-nvshmem");
        TCase *tc = tcase_create("nvshmem");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, nvshmem_archive_tarballs);
        tcase_add_test(tc, nvshmem_wheel_cu12);
        tcase_add_test(tc, nvshmem_conda_runtime_only);
        tcase_add_test(tc, nvshmem_conda_cuda_disagreement);
        tcase_add_test(tc, nvshmem_hpc_sdk_comm_libs);
        tcase_add_test(tc, nvshmem_easybuild_and_spack);
        tcase_add_test(tc, nvshmem_merged_into_cuda_prefix);
        tcase_add_test(tc, nvshmem_apt_package);
        tcase_add_test(tc, nvshmem_header_and_library_disagree);
        tcase_add_test(tc, nvshmem_spec_version_is_not_the_release);
        tcase_add_test(tc, nvshmem_plugin_of_another_release);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
