/* test-detect-cuda.c: the CUDA Toolkit detector in each layout. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "component-cuda.h"
#include "fixture.h"
#include "layouts.h"
#include "scanhelp.h"
#include "testutil.h"
#include "util.h"

#define FIXTURE(name, result)                                                  \
        char *root = fx_new();                                                 \
        const struct layout_fixture *lf = layout_fixture_find(name);           \
        struct scan_result result = { 0 };                                     \
        lf->build(root);                                                       \
        scan_fixture(root, lf->roots, &result)

#define DONE(result)                          \
        scan_result_release(&result);         \
        fx_free(root)

START_TEST(cuda_runfile_uses_targets_dirs_and_version_json)
{
        FIXTURE("runfile", r);
        const struct install *in = find(&r, &component_cuda, "/usr/local/cuda-12.4");

        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(count_component(&r, &component_cuda), 1);
        ck_assert_str_eq(ver(&in->version), "12.4");
        ck_assert_str_eq(ver(&in->release), "12.4.1");
        ck_assert_str_eq(in->components[CUDA_COMP_CUDART], "12.4.127");
        ck_assert_str_eq(in->components[CUDA_COMP_NVCC], "12.4.131");
        ck_assert_int_eq(in->layout, LAYOUT_TOOLKIT);
        ck_assert_str_eq(in->arch, "x86_64");
        ck_assert(endswith(in->lib_dir, "/cuda-12.4/targets/x86_64-linux/lib"));
        ck_assert(endswith(in->include_dir, "/cuda-12.4/targets/x86_64-linux/include"));
        ck_assert(endswith(in->bin_dir, "/cuda-12.4/bin"));
        ck_assert_int_eq(in->extra_lib_dirs.len, 2); /* CUPTI and nvvm */
        ck_assert(endswith(in->extra_lib_dirs.items[0], "/extras/CUPTI/lib64"));
        ck_assert(endswith(in->extra_lib_dirs.items[1], "/nvvm/lib64"));
        ck_assert_int_eq(in->aliases.len, 3);
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

START_TEST(cuda_date_stamped_version_json_gives_no_release)
{
        FIXTURE("runfile-sbsa", r);
        const struct install *in = find(&r, &component_cuda, "/opt/cuda-12.8");

        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "12.8");
        ck_assert_int_eq(in->release.count, 0);
        ck_assert_str_eq(in->arch, "aarch64");
        ck_assert(endswith(in->lib_dir, "/targets/sbsa-linux/lib"));
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

START_TEST(cuda_version_txt_before_11_1)
{
        FIXTURE("version-txt", r);
        const struct install *in = find(&r, &component_cuda, "/usr/local/cuda-11.0");

        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "11.0");
        ck_assert_str_eq(ver(&in->release), "11.0.228");
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

START_TEST(cuda_hpc_sdk_adds_math_libs)
{
        FIXTURE("hpc-sdk", r);
        const struct install *in = find(&r, &component_cuda, "/24.5/cuda/12.4");

        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(count_component(&r, &component_cuda), 1);
        ck_assert_int_eq(in->layout, LAYOUT_HPC_SDK);
        ck_assert_int_eq(in->extra_lib_dirs.len, 3);
        ck_assert(endswith(in->extra_lib_dirs.items[2], "/math_libs/12.4/lib64"));
        ck_assert(endswith(in->extra_include_dirs.items[in->extra_include_dirs.len - 1], "/math_libs/12.4/include"));
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

START_TEST(cuda_hpc_sdk_without_math_libs_is_a_problem)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const char *const roots[] = { "hpc", NULL };
        const struct install *in;

        fx_cuda_toolkit(root, "hpc/Linux_x86_64/25.1/cuda/12.6",
                        &(struct fx_cuda){ .version = "12.6", .release = "12.6.3", .cudart = "12.6.77",
                                           .nvcc = "12.6.85", .no_math = true });
        scan_fixture(root, roots, &r);
        in = find(&r, &component_cuda, "/cuda/12.6");
        ck_assert_ptr_nonnull(in);
        ck_assert(install_has_problem(in, "missing-library"));
        DONE(r);
}
END_TEST

START_TEST(cuda_wheels_cu12_one_install_over_the_component_folders)
{
        FIXTURE("wheels-cu12", r);
        const struct install *in = find(&r, &component_cuda, "/site-packages/nvidia");

        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(count_component(&r, &component_cuda), 1);
        ck_assert_int_eq(in->layout, LAYOUT_WHEEL);
        ck_assert_str_eq(ver(&in->version), "12.8");
        ck_assert_str_eq(in->components[CUDA_COMP_CUDART], "12.8.57");
        ck_assert_str_eq(in->components[CUDA_COMP_CUBLAS], "12.8.3.14");
        ck_assert(endswith(in->lib_dir, "/nvidia/cuda_runtime/lib"));
        ck_assert(endswith(in->bin_dir, "/nvidia/cuda_nvcc/bin"));
        ck_assert_int_eq(in->extra_lib_dirs.len, 2);
        ck_assert(endswith(in->extra_lib_dirs.items[0], "/nvidia/cublas/lib"));
        ck_assert(endswith(in->extra_lib_dirs.items[1], "/nvidia/cuda_nvrtc/lib"));
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

START_TEST(cuda_wheels_cu13_merged_tree)
{
        FIXTURE("wheels-cu13", r);
        const struct install *in = find(&r, &component_cuda, "/nvidia/cu13");

        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_WHEEL);
        ck_assert_str_eq(ver(&in->version), "13.0");
        ck_assert(endswith(in->lib_dir, "/nvidia/cu13/lib"));
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

START_TEST(cuda_system_multiarch_install)
{
        FIXTURE("system", r);
        const struct install *in = find(&r, &component_cuda, "/usr");

        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(count_component(&r, &component_cuda), 1);
        ck_assert_int_eq(in->layout, LAYOUT_SYSTEM);
        ck_assert_str_eq(ver(&in->version), "12.0");
        ck_assert_str_eq(in->components[CUDA_COMP_CUDART], "12.0.146");
        ck_assert_str_eq(in->components[CUDA_COMP_NVCC], "12.0.140");
        ck_assert(endswith(in->lib_dir, "/usr/lib/x86_64-linux-gnu"));
        ck_assert(endswith(in->include_dir, "/usr/include"));
        ck_assert(endswith(in->bin_dir, "/usr/bin"));
        /* usr/lib/cuda and usr/lib/nvidia-cuda-toolkit are real
         * directories of the install, not links to it. */
        ck_assert_int_eq(in->aliases.len, 0);
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

START_TEST(cuda_conda_env_prefers_targets_over_lib_links)
{
        FIXTURE("conda", r);
        const struct install *in = find(&r, &component_cuda, "/envs/torch");

        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(in->layout, LAYOUT_CONDA);
        ck_assert_str_eq(ver(&in->version), "12.6");
        ck_assert(endswith(in->lib_dir, "/targets/x86_64-linux/lib"));
        DONE(r);
}
END_TEST

START_TEST(cuda_spack_and_easybuild_release_from_the_directory)
{
        char *root = fx_new();
        struct scan_result r = { 0 }, e = { 0 };
        const struct install *in;

        layout_fixture_find("spack")->build(root);
        layout_fixture_find("easybuild")->build(root);
        scan_fixture(root, (const char *const[]){ "spack", NULL }, &r);
        scan_fixture(root, (const char *const[]){ "easybuild", NULL }, &e);
        in = find(&r, &component_cuda, "-a6ajxenobex5bvpejykhtnfut4arfpwh");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->release), "12.4.0");
        in = find(&e, &component_cuda, "/software/CUDA/12.4.0");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->release), "12.4.0");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&e);
        DONE(r);
}
END_TEST

START_TEST(cuda_assembled_prefix_prefers_real_lib_dir)
{
        FIXTURE("assembled", r);
        const struct install *in = find(&r, &component_cuda, "/usr/local/cuda-13.0");

        ck_assert_ptr_nonnull(in);
        ck_assert(endswith(in->lib_dir, "/cuda-13.0/lib"));
        ck_assert(endswith(in->include_dir, "/cuda-13.0/include"));
        ck_assert_str_eq(in->components[CUDA_COMP_CUDART], "13.0.96");
        ck_assert_int_eq(in->aliases.len, 1);
        DONE(r);
}
END_TEST

/* Jetson (aarch64-linux, lib and lib64 both linked) and POWER (ppc64le). */
START_TEST(cuda_jetson_and_ppc64le_triples)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cuda_toolkit(root, "x/cuda-12.2", &(struct fx_cuda){ .version = "12.2", .release = "12.2.140",
                                                               .cudart = "12.2.140", .nvcc = "12.2.140",
                                                               .triple = "aarch64-linux" });
        fx_symlink(root, "x/cuda-12.2/lib", "targets/aarch64-linux/lib");
        fx_cuda_toolkit(root, "x/cuda-12.4", &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                               .cudart = "12.4.127", .nvcc = "12.4.131",
                                                               .triple = "ppc64le-linux" });
        scan_fixture(root, (const char *const[]){ "x", NULL }, &r);
        ck_assert_int_eq(r.installs.len, 2);
        in = find(&r, &component_cuda, "/cuda-12.2");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(in->arch, "aarch64");
        ck_assert(endswith(in->lib_dir, "/targets/aarch64-linux/lib"));
        ck_assert_int_eq(in->n_problems, 0);
        in = find(&r, &component_cuda, "/cuda-12.4");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(in->arch, "ppc64le");
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

/* An x86_64 library in an sbsa-linux target dir. */
START_TEST(cuda_arch_mismatch_between_triple_and_elf)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cuda_toolkit(root, "x/cuda-12.8", &(struct fx_cuda){ .version = "12.8", .release = "12.8.0",
                                                               .cudart = "12.8.57", .nvcc = "12.8.61",
                                                               .triple = "sbsa-linux" });
        fx_library(root, "x/cuda-12.8/targets/sbsa-linux/lib", "libcudart", "12", "12.8.57", 62, NULL, NULL);
        scan_fixture(root, (const char *const[]){ "x", NULL }, &r);
        in = find(&r, &component_cuda, "/cuda-12.8");
        ck_assert_ptr_nonnull(in);
        ck_assert(install_has_problem(in, "arch-mismatch"));
        DONE(r);
}
END_TEST

START_TEST(cuda_soname_major_disagreeing_with_version)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cuda_toolkit(root, "x/cuda-13.0", &(struct fx_cuda){ .version = "13.0", .release = "13.0.1",
                                                               .cudart = "13.0.96", .nvcc = "13.0.88" });
        fx_library(root, "x/cuda-13.0/targets/x86_64-linux/lib", "libcudart", "12", NULL, 62, NULL, NULL);
        fx_write(root, "x/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13", "");
        scan_fixture(root, (const char *const[]){ "x", NULL }, &r);
        in = find(&r, &component_cuda, "/cuda-13.0");
        ck_assert_ptr_nonnull(in);
        ck_assert(install_has_problem(in, "version-mismatch"));
        DONE(r);
}
END_TEST

/* Directories that merely hold bin/ and include/ (like /usr/local) are not
 * toolkits, and a toolkit's own subdirectories are never extra installs. */
START_TEST(cuda_no_false_positives)
{
        char *root = fx_new();
        struct scan_result r = { 0 };

        fx_mkdir(root, "local/bin");
        fx_mkdir(root, "local/lib");
        fx_write(root, "local/include/stdio.h", "");
        fx_write(root, "local/bin/nvcc", "#!/bin/sh\nexec /usr/local/cuda/bin/nvcc \"$@\"\n");
        fx_cuda_toolkit(root, "local/cuda-12.4", &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                                   .cudart = "12.4.127", .nvcc = "12.4.131" });
        scan_fixture(root, (const char *const[]){ "local", NULL }, &r);
        ck_assert_int_eq(r.installs.len, 1);
        ck_assert_ptr_nonnull(find(&r, &component_cuda, "/local/cuda-12.4"));
        DONE(r);
}
END_TEST

/* The message of the install's first problem with that code, or NULL. */
static const char *problem_message(const struct install *in, const char *code)
{
        for (size_t i = 0; i < in->n_problems; i++)
                if (streq(in->problems[i].code, code))
                        return in->problems[i].message;
        return NULL;
}

static void remove_file(const char *root, const char *rel)
{
        _cleanup_free_ char *p = path_join(root, rel);

        ck_assert_msg(unlink(p) == 0, "unlink '%s'", p);
}

/* CUDA 11.8 from Debian's packages in a site tree: no version.json, yet
 * nvcc's --version text and the real file names of the libraries tell
 * each component's version; CUPTI's year-named file does not. */
START_TEST(cuda_site_11_8_components_from_file_names)
{
        FIXTURE("site-11.8", r);
        const struct install *in = find(&r, &component_cuda, "/apps/cuda/11.8");

        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "11.8");
        ck_assert_int_eq(in->release.count, 0);
        ck_assert_str_eq(in->components[CUDA_COMP_CUDART], "11.8.89");
        ck_assert_str_eq(in->components[CUDA_COMP_NVCC], "11.8.89");
        ck_assert_str_eq(in->components[CUDA_COMP_NVRTC], "11.8.89");
        ck_assert_str_eq(in->components[CUDA_COMP_CUBLAS], "11.11.3.6");
        ck_assert_str_eq(in->components[CUDA_COMP_CUFFT], "10.9.0.58");
        ck_assert_str_eq(in->components[CUDA_COMP_CURAND], "10.3.0.86");
        ck_assert_str_eq(in->components[CUDA_COMP_CUSPARSE], "11.7.5.86");
        ck_assert_ptr_null(in->components[CUDA_COMP_CUPTI]);
        ck_assert_ptr_null(in->components[CUDA_COMP_CUSOLVER]);
        ck_assert_str_eq(in->arch, "x86_64");
        ck_assert_int_eq(in->n_problems, 0);
        DONE(r);
}
END_TEST

/* version.json's component versions stand; the file names add the rest. */
START_TEST(cuda_version_json_components_before_file_names)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cuda_toolkit(root, "x/cuda-12.4", &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                               .cudart = "12.4.127", .nvcc = "12.4.131",
                                                               .cusparse = true });
        /* cuBLAS's real file, and a version.json that says otherwise. */
        fx_library(root, "x/cuda-12.4/targets/x86_64-linux/lib", "libcublas", "12", "12.4.2.65", 62, NULL, NULL);
        fx_write(root, "x/cuda-12.4/version.json",
                 "{ \"cuda\": { \"version\": \"12.4.1\" },\n"
                 "  \"cuda_cudart\": { \"version\": \"12.4.127\" },\n"
                 "  \"cuda_nvcc\": { \"version\": \"12.4.131\" },\n"
                 "  \"libcublas\": { \"version\": \"12.4.5.8\" } }\n");
        scan_fixture(root, (const char *const[]){ "x", NULL }, &r);
        in = find(&r, &component_cuda, "/cuda-12.4");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(in->components[CUDA_COMP_CUDART], "12.4.127");
        ck_assert_str_eq(in->components[CUDA_COMP_NVCC], "12.4.131");
        ck_assert_str_eq(in->components[CUDA_COMP_CUBLAS], "12.4.5.8");
        ck_assert_str_eq(in->components[CUDA_COMP_CUSPARSE], "12.3.1.170");
        ck_assert_str_eq(in->components[CUDA_COMP_NVJITLINK], "12.4.127");
        DONE(r);
}
END_TEST

/* Aliases of a system install are the links that lead to it: a link
 * /usr/local/cuda -> /usr/lib/cuda (an admin's, for CUDA_HOME-less
 * builds) is one, whether usr/lib/cuda is a scan root (walked before the
 * link is followed) or reached only through the link. */
START_TEST(cuda_system_aliases_are_the_links_to_it)
{
        static const char *const roots[][5] = {
                { "usr/local", "usr/lib/cuda", "usr/lib/nvidia-cuda-toolkit", "usr/lib/x86_64-linux-gnu", NULL },
                { "usr/local", "usr/lib/x86_64-linux-gnu", NULL },
        };
        char *root = fx_new();
        _cleanup_free_ char *link = path_join(root, "usr/local/cuda");

        layout_fixture_find("system")->build(root);
        fx_symlink(root, "usr/local/cuda", "../lib/cuda");
        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                struct scan_result r = { 0 };
                const struct install *in;

                scan_fixture(root, roots[i], &r);
                ck_assert_int_eq(count_component(&r, &component_cuda), 1);
                in = find(&r, &component_cuda, "/usr");
                ck_assert_ptr_nonnull(in);
                ck_assert_int_eq(in->layout, LAYOUT_SYSTEM);
                ck_assert_msg(in->aliases.len == 1, "roots %zu: %zu aliases, first '%s'", i, in->aliases.len,
                              in->aliases.len ? in->aliases.items[0] : "");
                ck_assert_str_eq(in->aliases.items[0], link);
                ck_assert_str_eq(in->components[CUDA_COMP_NVCC], "12.0.140");
                scan_result_release(&r);
        }
        fx_free(root);
}
END_TEST

/* CUDA 10.2's deb put cuBLAS in /usr/lib/x86_64-linux-gnu: its layout,
 * noted, not a missing library. */
START_TEST(cuda_10_2_deb_cublas_outside_the_prefix)
{
        FIXTURE("deb-10.2", r);
        const struct install *in = find(&r, &component_cuda, "/usr/local/cuda-10.2");
        const char *msg;

        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "10.2");
        ck_assert(!install_has_problem(in, "missing-library"));
        msg = problem_message(in, "library-outside-prefix");
        ck_assert_ptr_nonnull(msg);
        ck_assert_msg(strstr(msg, "/usr/lib/x86_64-linux-gnu'") && strstr(msg, "libcublas.so.10"), "%s", msg);
        ck_assert_str_eq(in->components[CUDA_COMP_CUBLAS], "10.2.2.89");
        ck_assert_int_eq(in->n_problems, 1);
        DONE(r);
}
END_TEST

/* The rpm's /usr/lib64 too; with cuBLAS nowhere (or only a newer system
 * one, libcublas.so.12), the problem names every place it is expected.
 * A 12.x toolkit without cuBLAS is missing it, as before. */
START_TEST(cuda_10_x_without_cublas_names_where_it_is_expected)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        const char *msg;

        fx_cuda_toolkit(root, "usr/local/cuda-10.1",
                        &(struct fx_cuda){ .version = "10.1", .release = "10.1.243", .cudart = "10.1.243",
                                           .nvcc = "10.1.243", .version_file = FX_VERSION_TXT, .no_math = true });
        fx_library(root, "usr/lib/x86_64-linux-gnu", "libcublas", "12", "12.0.2.224", 62, NULL, NULL);
        fx_cuda_toolkit(root, "usr/local/cuda-12.4",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131", .no_math = true });
        scan_fixture(root, (const char *const[]){ "usr/local", NULL }, &r);
        in = find(&r, &component_cuda, "/usr/local/cuda-10.1");
        ck_assert_ptr_nonnull(in);
        msg = problem_message(in, "missing-library");
        ck_assert_ptr_nonnull(msg);
        ck_assert_msg(strstr(msg, "/usr/lib/x86_64-linux-gnu'") && strstr(msg, "/usr/lib64'") &&
                              strstr(msg, "CUDA 10.1 and 10.2"),
                      "%s", msg);
        ck_assert(!install_has_problem(in, "library-outside-prefix"));
        in = find(&r, &component_cuda, "/usr/local/cuda-12.4");
        ck_assert_ptr_nonnull(in);
        msg = problem_message(in, "missing-library");
        ck_assert_ptr_nonnull(msg);
        ck_assert_msg(startswith(msg, "no libcublas.so.* in '") && !strstr(msg, "lib64'"), "%s", msg);
        scan_result_release(&r);

        /* The rpm layout. */
        fx_library(root, "usr/lib64", "libcublas", "10", "10.2.1.243", 62, NULL, NULL);
        scan_fixture(root, (const char *const[]){ "usr/local", NULL }, &r);
        in = find(&r, &component_cuda, "/usr/local/cuda-10.1");
        ck_assert_ptr_nonnull(in);
        ck_assert(!install_has_problem(in, "missing-library"));
        msg = problem_message(in, "library-outside-prefix");
        ck_assert_ptr_nonnull(msg);
        ck_assert_msg(strstr(msg, "/usr/lib64'"), "%s", msg);
        ck_assert_str_eq(in->components[CUDA_COMP_CUBLAS], "10.2.1.243");
        DONE(r);
}
END_TEST

/* A broken toolkit (version.json cut short, libcudart gone) still says
 * its architecture by its targets/<triple>; a cross toolkit with two
 * architectures' targets says none. */
START_TEST(cuda_broken_toolkit_arch_from_targets)
{
        static const struct {
                const char *triple, *arch;
        } cases[] = {
                { "x86_64-linux", "x86_64" },
                { "sbsa-linux", "aarch64" },
                { "ppc64le-linux", "ppc64le" },
                { NULL, NULL },
        };
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        for (size_t i = 0; cases[i].triple; i++) {
                _cleanup_free_ char *prefix = xasprintf("x/cuda-%zu", i);
                _cleanup_free_ char *lib = xasprintf("%s/targets/%s/lib", prefix, cases[i].triple);
                _cleanup_free_ char *json = path_join(prefix, "version.json");
                _cleanup_free_ char *f1 = xasprintf("%s/libcudart.so.12.4.127", lib);
                _cleanup_free_ char *f2 = xasprintf("%s/libcudart.so.12", lib);
                _cleanup_free_ char *f3 = xasprintf("%s/libcudart.so", lib);

                fx_cuda_toolkit(root, prefix, &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                                .cudart = "12.4.127", .nvcc = "12.4.131",
                                                                .triple = cases[i].triple });
                remove_file(root, f1);
                remove_file(root, f2);
                remove_file(root, f3);
                fx_write(root, json, "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"vers");
        }
        fx_cuda_toolkit(root, "x/cross", &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                           .cudart = "12.4.127", .nvcc = "12.4.131" });
        remove_file(root, "x/cross/targets/x86_64-linux/lib/libcudart.so.12.4.127");
        remove_file(root, "x/cross/targets/x86_64-linux/lib/libcudart.so.12");
        remove_file(root, "x/cross/targets/x86_64-linux/lib/libcudart.so");
        fx_mkdir(root, "x/cross/targets/sbsa-linux/include");
        scan_fixture(root, (const char *const[]){ "x", NULL }, &r);
        for (size_t i = 0; cases[i].triple; i++) {
                _cleanup_free_ char *suffix = xasprintf("/x/cuda-%zu", i);

                in = find(&r, &component_cuda, suffix);
                ck_assert_ptr_nonnull(in);
                ck_assert(install_has_problem(in, "bad-version-file"));
                ck_assert(install_has_problem(in, "missing-library"));
                ck_assert_ptr_nonnull(in->arch);
                ck_assert_str_eq(in->arch, cases[i].arch);
        }
        in = find(&r, &component_cuda, "/x/cross");
        ck_assert_ptr_nonnull(in);
        ck_assert_ptr_null(in->arch);
        DONE(r);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("detect-cuda");
        TCase *tc = tcase_create("cuda");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, cuda_runfile_uses_targets_dirs_and_version_json);
        tcase_add_test(tc, cuda_date_stamped_version_json_gives_no_release);
        tcase_add_test(tc, cuda_version_txt_before_11_1);
        tcase_add_test(tc, cuda_hpc_sdk_adds_math_libs);
        tcase_add_test(tc, cuda_hpc_sdk_without_math_libs_is_a_problem);
        tcase_add_test(tc, cuda_wheels_cu12_one_install_over_the_component_folders);
        tcase_add_test(tc, cuda_wheels_cu13_merged_tree);
        tcase_add_test(tc, cuda_system_multiarch_install);
        tcase_add_test(tc, cuda_conda_env_prefers_targets_over_lib_links);
        tcase_add_test(tc, cuda_spack_and_easybuild_release_from_the_directory);
        tcase_add_test(tc, cuda_assembled_prefix_prefers_real_lib_dir);
        tcase_add_test(tc, cuda_jetson_and_ppc64le_triples);
        tcase_add_test(tc, cuda_arch_mismatch_between_triple_and_elf);
        tcase_add_test(tc, cuda_soname_major_disagreeing_with_version);
        tcase_add_test(tc, cuda_no_false_positives);
        tcase_add_test(tc, cuda_site_11_8_components_from_file_names);
        tcase_add_test(tc, cuda_version_json_components_before_file_names);
        tcase_add_test(tc, cuda_system_aliases_are_the_links_to_it);
        tcase_add_test(tc, cuda_10_2_deb_cublas_outside_the_prefix);
        tcase_add_test(tc, cuda_10_x_without_cublas_names_where_it_is_expected);
        tcase_add_test(tc, cuda_broken_toolkit_arch_from_targets);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
