/* test-detect-nccl.c: the NCCL detector: the CUDA version from the library
 * string, names and paths; layouts; disagreements. */
#include <check.h>
#include <stdlib.h>

#include "component-cuda.h"
#include "component-nccl.h"
#include "fixture.h"
#include "layouts.h"
#include "scanhelp.h"
#include "testutil.h"
#include "util.h"

START_TEST(nccl_tarball_cuda_version_from_library_string)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("nccl-tarballs")->build(root);
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_nccl), 2);
        in = find(&r, &component_nccl, "/nccl_2.21.5-1+cuda12.4_x86_64");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "2.21.5");
        ck_assert_str_eq(ver(&in->cuda_version), "12.4");
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        in = find(&r, &component_nccl, "_aarch64");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(in->arch, "aarch64");
        ck_assert_str_eq(ver(&in->cuda_version), "11.0");
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* No string in the library (stripped): the tarball name tells. */
START_TEST(nccl_cuda_version_from_name_when_library_is_silent)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nccl(root, "apps/nccl_2.19.3-1+cuda12.3_x86_64", &(struct fx_nccl){ .version = "2.19.3" });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_nccl, "_x86_64");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->cuda_version), "12.3");
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(nccl_name_disagreeing_with_library)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nccl(root, "apps/nccl_2.21.5-1+cuda11.0_x86_64", &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4" });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_nccl, "_x86_64");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->cuda_version), "12.4");
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(nccl_header_and_library_disagree)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_nccl(root, "apps/nccl", &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4" });
        fx_write(root, "apps/nccl/include/nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 20\n#define NCCL_PATCH 3\n");
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_nccl, "/apps/nccl");
        ck_assert_ptr_nonnull(in);
        ck_assert(install_has_problem(in, "version-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(nccl_hpc_sdk_comm_libs)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("hpc-sdk")->build(root);
        scan_fixture(root, (const char *const[]){ "opt/nvidia/hpc_sdk", NULL }, &r);
        in = find(&r, &component_nccl, "/comm_libs/12.4/nccl");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_HPC_SDK);
        ck_assert_str_eq(ver(&in->cuda_version), "12.4");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* The HPC SDK's default-version directories hold links into the versioned
 * ones: still one install each, the default path an alias. */
START_TEST(nccl_hpc_sdk_default_links_are_aliases)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        const char *rel = "opt/nvidia/hpc_sdk/Linux_x86_64/24.5";
        _cleanup_free_ char *inc = xasprintf("%s/comm_libs/nccl/include", rel);
        _cleanup_free_ char *lib = xasprintf("%s/comm_libs/nccl/lib", rel);
        _cleanup_free_ char *cbin = xasprintf("%s/cuda/bin", rel), *clib = xasprintf("%s/cuda/lib64", rel);
        _cleanup_free_ char *cinc = xasprintf("%s/cuda/include", rel);

        layout_fixture_find("hpc-sdk")->build(root);
        fx_symlink(root, inc, "../12.4/nccl/include");
        fx_symlink(root, lib, "../12.4/nccl/lib");
        fx_symlink(root, cbin, "12.4/bin");
        fx_symlink(root, clib, "12.4/lib64");
        fx_symlink(root, cinc, "12.4/include");
        scan_fixture(root, (const char *const[]){ "opt/nvidia/hpc_sdk", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_nccl), 1);
        ck_assert_int_eq(count_component(&r, &component_cuda), 1);
        in = find(&r, &component_nccl, "/comm_libs/12.4/nccl");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->aliases.len, 1);
        ck_assert(endswith(in->aliases.items[0], "/comm_libs/nccl"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(nccl_layouts_merged_wheel_conda_system_easybuild)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("merged")->build(root);
        layout_fixture_find("wheels-cu12")->build(root);
        layout_fixture_find("conda")->build(root);
        layout_fixture_find("system")->build(root);
        layout_fixture_find("easybuild")->build(root);
        scan_fixture(root, (const char *const[]){ "usr/local", "venv", "conda", "usr/lib/x86_64-linux-gnu",
                                                  "easybuild", NULL },
                     &r);
        ck_assert_int_eq(count_component(&r, &component_nccl), 5);
        in = find(&r, &component_nccl, "/usr/local/cuda-12.6");
        ck_assert(in && in->layout == LAYOUT_MERGED);
        in = find(&r, &component_nccl, "/nvidia/nccl");
        ck_assert(in && in->layout == LAYOUT_WHEEL);
        ck_assert_str_eq(ver(&in->version), "2.26.2");
        in = find(&r, &component_nccl, "/envs/torch");
        ck_assert(in && in->layout == LAYOUT_CONDA);
        in = find(&r, &component_nccl, "/usr");
        ck_assert(in && in->layout == LAYOUT_SYSTEM);
        in = find(&r, &component_nccl, "-CUDA-12.1.1");
        ck_assert(in && in->layout == LAYOUT_TARBALL);
        ck_assert_str_eq(ver(&in->cuda_version), "12.1");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("detect-nccl");
        TCase *tc = tcase_create("nccl");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, nccl_tarball_cuda_version_from_library_string);
        tcase_add_test(tc, nccl_cuda_version_from_name_when_library_is_silent);
        tcase_add_test(tc, nccl_name_disagreeing_with_library);
        tcase_add_test(tc, nccl_header_and_library_disagree);
        tcase_add_test(tc, nccl_hpc_sdk_comm_libs);
        tcase_add_test(tc, nccl_hpc_sdk_default_links_are_aliases);
        tcase_add_test(tc, nccl_layouts_merged_wheel_conda_system_easybuild);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
