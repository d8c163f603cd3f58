/* test-detect-cudnn.c: the cuDNN detector: versions, build numbers, the
 * CUDA major from names and from the libraries, layouts, broken installs. */
#include <check.h>
#include <stdlib.h>

#include "component-cuda.h"
#include "component-cudnn.h"
#include "fixture.h"
#include "layouts.h"
#include "scanhelp.h"
#include "testutil.h"
#include "util.h"

static void scan_one(const char *root, const char *rel, struct scan_result *r)
{
        scan_fixture(root, (const char *const[]){ rel, NULL }, r);
}

START_TEST(cudnn9_tarball_name_gives_build_and_cuda_major)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("cudnn-tarballs")->build(root);
        scan_one(root, "apps", &r);
        ck_assert_int_eq(count_component(&r, &component_cudnn), 6);
        in = find(&r, &component_cudnn, "/cudnn-linux-x86_64-9.7.1.26_cuda12-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "9.7.1");
        ck_assert_str_eq(in->build, "26");
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_str_eq(in->arch, "x86_64");
        ck_assert(endswith(in->lib_dir, "-archive/lib"));
        ck_assert_int_eq(in->n_problems, 0);

        /* cuDNN 8 renamed, in lib64: the major from DT_NEEDED libcublas.so.12. */
        in = find(&r, &component_cudnn, "/apps/cudnn/8.9.2");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert(endswith(in->lib_dir, "/8.9.2/lib64"));
        ck_assert_ptr_null(in->build);

        /* cuDNN 9 renamed: the major from the libcublasLt.so.11 string. */
        in = find(&r, &component_cudnn, "/apps/cudnn/9.1.0");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 11);

        in = find(&r, &component_cudnn, "/cudnn-linux-sbsa-9.7.1.26_cuda12-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(in->arch, "aarch64");

        /* <= 8.2: cuda/{include,lib64}, the build and CUDA in the parent's name. */
        in = find(&r, &component_cudnn, "/cudnn-11.4-linux-x64-v8.2.4.15/cuda");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "8.2.4");
        ck_assert_str_eq(in->build, "15");
        ck_assert_int_eq(install_cuda_major(in), 11);
        ck_assert_int_eq(count_component(&r, &component_cuda), 0);

        /* Sorted: version newest first within the component. */
        ck_assert_str_eq(ver(&r.installs.items[0]->version), "9.7.1");
        ck_assert_str_eq(ver(&r.installs.items[5]->version), "8.2.4");
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* The archive says cuda12 but the libraries load CUDA 11 libraries. */
START_TEST(cudnn_name_and_libraries_disagree_on_cuda_major)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cudnn(root, "apps/cudnn-linux-x86_64-9.2.0.82_cuda12-archive",
                 &(struct fx_cudnn){ .version = "9.2.0", .cuda_major = 11 });
        scan_one(root, "apps", &r);
        in = find(&r, &component_cudnn, "-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 11);
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* No name hint and no CUDA string: the major is unknown, not guessed. */
START_TEST(cudnn_unknown_cuda_major_stays_unknown)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cudnn(root, "apps/cudnn/9.3.0", &(struct fx_cudnn){ .version = "9.3.0", .cuda_major = 0 });
        scan_one(root, "apps", &r);
        in = find(&r, &component_cudnn, "/cudnn/9.3.0");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), -1);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cudnn_missing_sub_library_and_header_mismatch)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        _cleanup_free_ char *gone = NULL;

        fx_cudnn(root, "apps/cudnn-linux-x86_64-9.7.1.26_cuda12-archive",
                 &(struct fx_cudnn){ .version = "9.7.1", .cuda_major = 12 });
        gone = path_join(root, "apps/cudnn-linux-x86_64-9.7.1.26_cuda12-archive/lib/libcudnn_cnn.so.9.7.1");
        ck_assert_int_eq(unlink(gone), 0);
        fx_write(root, "apps/cudnn-linux-x86_64-9.7.1.26_cuda12-archive/include/cudnn_version.h",
                 "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 6\n#define CUDNN_PATCHLEVEL 0\n");
        scan_one(root, "apps", &r);
        in = find(&r, &component_cudnn, "-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert(install_has_problem(in, "missing-library"));
        ck_assert(install_has_problem(in, "version-mismatch"));
        ck_assert_str_eq(ver(&in->version), "9.6.0");
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cudnn_merged_into_cuda_prefix)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("merged")->build(root);
        scan_one(root, "usr/local", &r);
        in = find(&r, &component_cudnn, "/usr/local/cuda-12.6");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_MERGED);
        ck_assert(endswith(in->lib_dir, "/targets/x86_64-linux/lib"));
        ck_assert(endswith(in->include_dir, "/targets/x86_64-linux/include"));
        ck_assert_int_eq(install_cuda_major(in), 12);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cudnn_wheel_uses_dist_info)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("wheels-cu13")->build(root);
        scan_one(root, "env", &r);
        in = find(&r, &component_cudnn, "/nvidia/cudnn");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_WHEEL);
        ck_assert_str_eq(ver(&in->version), "9.19.0");
        ck_assert_str_eq(in->build, "56");
        ck_assert_int_eq(install_cuda_major(in), 13);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cudnn_system_headers_in_triple_include)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("system")->build(root);
        scan_one(root, "usr/lib/x86_64-linux-gnu", &r);
        in = find(&r, &component_cudnn, "/usr");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_SYSTEM);
        ck_assert(endswith(in->include_dir, "/usr/include/x86_64-linux-gnu"));
        ck_assert_str_eq(ver(&in->version), "9.7.0");
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cudnn_spack_and_easybuild_names)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("spack")->build(root);
        layout_fixture_find("easybuild")->build(root);
        scan_fixture(root, (const char *const[]){ "spack", "easybuild", NULL }, &r);
        in = find(&r, &component_cudnn, "-q3vxk2ixtwpgzjzpvlqcwwbcnhkpsmzr");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(in->build, "29");
        ck_assert_int_eq(install_cuda_major(in), 12);
        in = find(&r, &component_cudnn, "/cuDNN/9.5.0.50-CUDA-12.6.0");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(in->build, "50");
        ck_assert_int_eq(install_cuda_major(in), 12);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("detect-cudnn");
        TCase *tc = tcase_create("cudnn");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, cudnn9_tarball_name_gives_build_and_cuda_major);
        tcase_add_test(tc, cudnn_name_and_libraries_disagree_on_cuda_major);
        tcase_add_test(tc, cudnn_unknown_cuda_major_stays_unknown);
        tcase_add_test(tc, cudnn_missing_sub_library_and_header_mismatch);
        tcase_add_test(tc, cudnn_merged_into_cuda_prefix);
        tcase_add_test(tc, cudnn_wheel_uses_dist_info);
        tcase_add_test(tc, cudnn_system_headers_in_triple_include);
        tcase_add_test(tc, cudnn_spack_and_easybuild_names);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
