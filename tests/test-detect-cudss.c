/* test-detect-cudss.c: the cuDSS detector: every layout STACK.md §2.3 lists,
 * the version from cudss.h, file and directory names, the CUDA major from
 * libcudss's libcublas and from names and paths, and their disagreements. */
#include <check.h>
#include <stdlib.h>

#include "component-cuda.h"
#include "component-cudss.h"
#include "fixture.h"
#include "layouts.h"
#include "scanhelp.h"
#include "testutil.h"
#include "util.h"

START_TEST(cudss_archives_easybuild_and_spack)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("cudss-tarballs")->build(root);
        scan_fixture(root, (const char *const[]){ "apps", "easybuild", "spack", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cudss), 4);
        ck_assert_int_eq(count_component(&r, &component_cuda), 0);

        in = find(&r, &component_cudss, "/libcudss-linux-x86_64-0.7.1.4_cuda12-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "0.7.1");
        ck_assert_str_eq(in->build, "4");
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_str_eq(in->arch, "x86_64");
        ck_assert(endswith(in->include_dir, "_cuda12-archive/include"));
        ck_assert(endswith(in->lib_dir, "_cuda12-archive/lib"));
        ck_assert_int_eq(in->n_problems, 0);

        in = find(&r, &component_cudss, "/libcudss-linux-x86_64-0.8.0.10_cuda13-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "0.8.0");
        ck_assert_str_eq(in->build, "10");
        ck_assert_int_eq(install_cuda_major(in), 13);
        ck_assert_int_eq(in->n_problems, 0);

        /* EasyBuild's -CUDAcore-12.6.2 names the CUDA in full. */
        in = find(&r, &component_cudss, "/cuDSS/0.6.0.5-CUDAcore-12.6.2");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "0.6.0");
        ck_assert_str_eq(in->build, "5");
        ck_assert_str_eq(ver(&in->cuda_version), "12.6.2");
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);

        /* Spack's name has no CUDA: libcudss's libcublas.so.12 tells. */
        in = find(&r, &component_cudss, "/cudss-0.5.0-xqz3kd5f7ygxn4bwuhnx3hn5wbqvk2jd");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "0.5.0");
        ck_assert_ptr_null(in->build);
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* NVIDIA's Debian packages put the CUDA 12 and 13 builds side by side:
 * two installs with prefix usr, each with its own include tree. */
START_TEST(cudss_debian_trees_are_one_install_per_cuda_major)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *a = NULL, *b = NULL;
        _cleanup_free_ char *usr = path_join(root, "usr");

        layout_fixture_find("cudss-system")->build(root);
        scan_fixture(root, (const char *const[]){ "usr/lib/x86_64-linux-gnu", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cudss), 2);
        for (size_t i = 0; i < r.installs.len; i++) {
                const struct install *in = r.installs.items[i];
                if (endswith(in->lib_dir, "/libcudss/12"))
                        a = in;
                else if (endswith(in->lib_dir, "/libcudss/13"))
                        b = in;
        }
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(a->layout, LAYOUT_SYSTEM);
        ck_assert_int_eq(b->layout, LAYOUT_SYSTEM);
        ck_assert_str_eq(a->prefix, usr);
        ck_assert_str_eq(b->prefix, usr);
        ck_assert(endswith(a->include_dir, "/usr/include/libcudss/12"));
        ck_assert(endswith(b->include_dir, "/usr/include/libcudss/13"));
        ck_assert_str_eq(ver(&a->version), "0.7.1");
        ck_assert_str_eq(ver(&b->version), "0.7.1");
        ck_assert_int_eq(install_cuda_major(a), 12);
        ck_assert_int_eq(install_cuda_major(b), 13);
        ck_assert_int_eq(a->n_problems, 0);
        ck_assert_int_eq(b->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* A Debian tree whose library names no libcublas: the path tells; its
 * headers are looked for in its own include tree only. */
START_TEST(cudss_debian_tree_cuda_from_path_and_headers_only_in_its_tree)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cudss(root, "usr", &(struct fx_cudss){ .version = "0.7.1", .lib = "lib/x86_64-linux-gnu/libcudss/13",
                                                   .include = "include" });
        scan_fixture(root, (const char *const[]){ "usr/lib/x86_64-linux-gnu", NULL }, &r);
        in = find(&r, &component_cudss, "/usr");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 13);
        ck_assert_ptr_null(in->include_dir);
        ck_assert(install_has_problem(in, "missing-headers"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* A directory of …/usr/lib/<triple> not named after the library is no
 * Debian tree of it. */
START_TEST(cudss_tree_must_be_named_after_the_library)
{
        char *root = fx_new();
        struct scan_result r = { 0 };

        fx_cudss(root, "usr", &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12,
                                                   .lib = "lib/x86_64-linux-gnu/other/12",
                                                   .include = "include/other/12" });
        scan_fixture(root, (const char *const[]){ "usr/lib/x86_64-linux-gnu", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cudss), 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cudss_wheel_in_shared_cu12_directory)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("cudss-system")->build(root);
        scan_fixture(root, (const char *const[]){ "venv", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cudss), 1);
        in = find(&r, &component_cudss, "/site-packages/nvidia/cu12");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_WHEEL);
        ck_assert_str_eq(ver(&in->version), "0.7.1");
        ck_assert_str_eq(in->build, "4");
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert(endswith(in->lib_dir, "/nvidia/cu12/lib"));
        ck_assert(endswith(in->include_dir, "/nvidia/cu12/include"));
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* Older wheels had their own nvidia/cudss (STACK.md §2.3): the dist-info
 * tells the CUDA major. */
START_TEST(cudss_wheel_in_its_own_directory)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        const char *site = "venv/lib/python3.12/site-packages";
        _cleanup_free_ char *own = xasprintf("%s/nvidia/cudss", site);

        fx_cudss(root, own, &(struct fx_cudss){ .version = "0.5.0", .soname_only = true });
        fx_dist_info(root, site, "nvidia-cudss-cu12", "0.5.0.16");
        scan_fixture(root, (const char *const[]){ "venv", NULL }, &r);
        in = find(&r, &component_cudss, "/nvidia/cudss");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_WHEEL);
        ck_assert_str_eq(ver(&in->version), "0.5.0");
        ck_assert_str_eq(in->build, "16");
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* A wheel in nvidia/cu13 whose dist-info says cu12: both are named. */
START_TEST(cudss_wheel_directory_disagrees_with_dist)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        const char *site = "venv/lib/python3.12/site-packages";
        _cleanup_free_ char *cu13 = xasprintf("%s/nvidia/cu13", site);

        fx_cudss(root, cu13, &(struct fx_cudss){ .version = "0.7.1", .soname_only = true });
        fx_dist_info(root, site, "nvidia-cudss-cu12", "0.7.1.4");
        scan_fixture(root, (const char *const[]){ "venv", NULL }, &r);
        in = find(&r, &component_cudss, "/nvidia/cu13");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* A conda build whose library names no libcublas: the environment's
 * cuda-version pin tells. */
START_TEST(cudss_conda_cuda_from_cuda_version_pin)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cudss(root, "conda/envs/s", &(struct fx_cudss){ .version = "0.6.0" });
        fx_write(root, "conda/envs/s/conda-meta/cuda-version-13.0-h4f385c5_3.json", "{}\n");
        scan_fixture(root, (const char *const[]){ "conda", NULL }, &r);
        in = find(&r, &component_cudss, "/envs/s");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_CONDA);
        ck_assert_str_eq(ver(&in->version), "0.6.0");
        ck_assert_str_eq(ver(&in->cuda_version), "13.0");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* The conda pin disagrees with the libcublas libcudss needs. */
START_TEST(cudss_conda_pin_disagrees_with_library)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cudss(root, "conda/envs/solver", &(struct fx_cudss){ .version = "0.6.0", .cuda_major = 12 });
        fx_write(root, "conda/envs/solver/conda-meta/cuda-version-13.0-h4f385c5_3.json", "{}\n");
        scan_fixture(root, (const char *const[]){ "conda", NULL }, &r);
        in = find(&r, &component_cudss, "/envs/solver");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* cuDSS copied into a CUDA prefix, as PyTorch's CI does. */
START_TEST(cudss_merged_into_cuda_prefix)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cuda_toolkit(root, "usr/local/cuda-12.6",
                        &(struct fx_cuda){ .version = "12.6", .release = "12.6.3", .cudart = "12.6.77",
                                           .nvcc = "12.6.85" });
        fx_cudss(root, "usr/local/cuda-12.6", &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12,
                                                                  .lib = "lib64" });
        scan_fixture(root, (const char *const[]){ "usr/local", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cuda), 1);
        in = find(&r, &component_cudss, "/usr/local/cuda-12.6");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_MERGED);
        ck_assert_str_eq(ver(&in->version), "0.7.1");
        ck_assert_int_eq(install_cuda_major(in), 12);
        /* lib64 is a link into targets/: the real directory. */
        ck_assert(endswith(in->lib_dir, "/cuda-12.6/targets/x86_64-linux/lib"));
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cudss_header_and_library_disagree)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cudss(root, "apps/cudss", &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12 });
        fx_write(root, "apps/cudss/include/cudss.h",
                 "#define CUDSS_VER_MAJOR 0\n#define CUDSS_VER_MINOR 6\n#define CUDSS_VER_PATCH 0\n");
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_cudss, "/apps/cudss");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "0.6.0");
        ck_assert(install_has_problem(in, "version-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* An archive named for CUDA 13 whose library needs CUDA 12's cuBLAS. */
START_TEST(cudss_archive_name_disagrees_with_cublas)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cudss(root, "apps/libcudss-linux-x86_64-0.7.1.4_cuda13-archive",
                 &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12 });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_cudss, "_cuda13-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* Nothing but the header tells: no version problem, no CUDA (flat only). */
START_TEST(cudss_version_from_header_alone)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cudss(root, "apps/cudss", &(struct fx_cudss){ .version = "0.7.1", .soname_only = true });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_cudss, "/apps/cudss");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "0.7.1");
        ck_assert_int_eq(install_cuda_major(in), -1);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("detect-cudss");
        TCase *tc = tcase_create("cudss");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, cudss_archives_easybuild_and_spack);
        tcase_add_test(tc, cudss_debian_trees_are_one_install_per_cuda_major);
        tcase_add_test(tc, cudss_debian_tree_cuda_from_path_and_headers_only_in_its_tree);
        tcase_add_test(tc, cudss_tree_must_be_named_after_the_library);
        tcase_add_test(tc, cudss_wheel_in_shared_cu12_directory);
        tcase_add_test(tc, cudss_wheel_in_its_own_directory);
        tcase_add_test(tc, cudss_wheel_directory_disagrees_with_dist);
        tcase_add_test(tc, cudss_conda_cuda_from_cuda_version_pin);
        tcase_add_test(tc, cudss_conda_pin_disagrees_with_library);
        tcase_add_test(tc, cudss_merged_into_cuda_prefix);
        tcase_add_test(tc, cudss_header_and_library_disagree);
        tcase_add_test(tc, cudss_archive_name_disagrees_with_cublas);
        tcase_add_test(tc, cudss_version_from_header_alone);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
