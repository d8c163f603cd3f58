/* test-detect-cutensor.c: the cuTENSOR detector: NVIDIA's archive with one
 * lib/<N> for each CUDA major (one install each, known by its library
 * directory), the one-major archives of 2.3 on, the cutensor-cuNN wheels in
 * site-packages/cutensor, a conda environment, and the version from
 * cutensor.h against the library's file name. */
#include <check.h>
#include <stdlib.h>

#include "component-cutensor.h"
#include "fixture.h"
#include "scanhelp.h"
#include "testutil.h"
#include "util.h"

/* The install of component c whose library directory ends with suffix. */
static const struct install *find_lib(const struct scan_result *r, const char *suffix)
{
        for (size_t i = 0; i < r->installs.len; i++) {
                const struct install *in = r->installs.items[i];

                if (in->component == &component_cutensor && in->lib_dir && endswith(in->lib_dir, suffix))
                        return in;
        }
        return NULL;
}

START_TEST(cutensor_archive_one_install_per_cuda_major)
{
        static const char archive[] = "apps/libcutensor-linux-x86_64-2.2.0.0-archive";
        char *root = fx_new();
        _cleanup_free_ char *real = NULL;
        struct scan_result r = { 0 };
        const struct install *a, *b;

        fx_cutensor(root, archive, &(struct fx_cutensor){ .version = "2.2.0", .cuda_major = 12, .lib = "lib/12" });
        fx_cutensor(root, archive,
                    &(struct fx_cutensor){ .version = "2.2.0", .cuda_major = 13, .lib = "lib/13", .no_header = true });
        /* A symlink to the archive: an alias of both. */
        fx_symlink(root, "apps/cutensor", "libcutensor-linux-x86_64-2.2.0.0-archive");
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cutensor), 2);

        a = find_lib(&r, "-archive/lib/12");
        b = find_lib(&r, "-archive/lib/13");
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        real = path_join(root, archive);
        for (const struct install *in = a; in; in = in == a ? b : NULL) {
                ck_assert_str_eq(ver(&in->version), "2.2.0");
                ck_assert_str_eq(in->build, "0");
                ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
                ck_assert_str_eq(in->prefix, real);
                ck_assert(endswith(in->include_dir, "-archive/include"));
                ck_assert_int_eq(in->aliases.len, 1);
                ck_assert(endswith(in->aliases.items[0], "/apps/cutensor"));
                ck_assert_int_eq(in->n_problems, 0);
        }
        ck_assert_int_eq(install_cuda_major(a), 12);
        ck_assert_int_eq(install_cuda_major(b), 13);
        ck_assert(endswith(a->realpath, "-archive/lib/12"));
        ck_assert(endswith(b->realpath, "-archive/lib/13"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* From 2.3 NVIDIA ships one archive for each CUDA major: lib/ directly,
 * the major in its name. */
START_TEST(cutensor_one_major_archive)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cutensor(root, "apps/libcutensor-linux-x86_64-2.3.1.0_cuda13-archive",
                    &(struct fx_cutensor){ .version = "2.3.1", .cuda_major = 13 });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cutensor), 1);
        in = find(&r, &component_cutensor, "_cuda13-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "2.3.1");
        ck_assert_str_eq(in->build, "0");
        ck_assert_int_eq(install_cuda_major(in), 13);
        ck_assert_str_eq(in->realpath, in->prefix);
        ck_assert(endswith(in->lib_dir, "_cuda13-archive/lib"));
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* cutensor-cu12 and cutensor-cu13 both install site-packages/cutensor:
 * the wheel's name tells the CUDA major, not cuQuantum's cutensornet-cu13
 * beside it. */
START_TEST(cutensor_wheels)
{
        static const char *const sites[] = { "venv12/lib/python3.12/site-packages",
                                             "venv13/lib/python3.12/site-packages" };
        char *root = fx_new();
        struct scan_result r = { 0 };

        for (unsigned i = 0; i < 2; i++) {
                _cleanup_free_ char *pkg = path_join(sites[i], "cutensor");
                _cleanup_free_ char *dist = xasprintf("cutensor-cu%u", 12 + i);

                fx_cutensor(root, pkg, &(struct fx_cutensor){ .version = "2.3.1", .cuda_major = 12 + i,
                                                              .soname_only = true });
                fx_dist_info(root, sites[i], "cutensornet-cu13", "2.9.0");
                fx_dist_info(root, sites[i], dist, "2.3.1");
        }
        scan_fixture(root, (const char *const[]){ "venv12", "venv13", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cutensor), 2);
        for (unsigned i = 0; i < 2; i++) {
                _cleanup_free_ char *suffix = xasprintf("%s/cutensor", sites[i]);
                const struct install *in = find(&r, &component_cutensor, suffix);

                ck_assert_ptr_nonnull(in);
                ck_assert_str_eq(ver(&in->version), "2.3.1");
                ck_assert_int_eq(in->layout, LAYOUT_WHEEL);
                ck_assert_int_eq(install_cuda_major(in), 12 + i);
                ck_assert(endswith(in->lib_dir, "/cutensor/lib"));
                ck_assert_int_eq(in->n_problems, 0);
        }
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cutensor_conda_cuda_from_cuda_version_pin)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cutensor(root, "conda/envs/tensor", &(struct fx_cutensor){ .version = "2.1.0", .cuda_major = 12 });
        fx_write(root, "conda/envs/tensor/conda-meta/cutensor-2.1.0.9-h1234567_0.json", "{}\n");
        fx_write(root, "conda/envs/tensor/conda-meta/cuda-version-12.6-h7480c83_3.json", "{}\n");
        scan_fixture(root, (const char *const[]){ "conda", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cutensor), 1);
        in = find(&r, &component_cutensor, "/conda/envs/tensor");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "2.1.0");
        ck_assert_int_eq(in->layout, LAYOUT_CONDA);
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cutensor_header_and_file_name_disagree)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cutensor(root, "opt/cutensor", &(struct fx_cutensor){ .version = "2.2.0" });
        fx_library(root, "opt/cutensor/lib", "libcutensor", "2", "2.3.1", 62, NULL, NULL);
        scan_fixture(root, (const char *const[]){ "opt", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cutensor), 1);
        in = find(&r, &component_cutensor, "/opt/cutensor");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "2.2.0");
        ck_assert(install_has_problem(in, "version-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("detect-cutensor");
        TCase *tc = tcase_create("layouts");

        tcase_add_test(tc, cutensor_archive_one_install_per_cuda_major);
        tcase_add_test(tc, cutensor_one_major_archive);
        tcase_add_test(tc, cutensor_wheels);
        tcase_add_test(tc, cutensor_conda_cuda_from_cuda_version_pin);
        tcase_add_test(tc, cutensor_header_and_file_name_disagree);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
