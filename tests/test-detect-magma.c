/* test-detect-magma.c: the MAGMA detector: each layout's version, CUDA
 * major, directories and problems; the static-only build; disagreements. */
#include <check.h>
#include <stdlib.h>

#include "component-magma.h"
#include "fixture.h"
#include "layouts.h"
#include "scanhelp.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"

/* The install of MAGMA at prefix (relative to root), its directories checked. */
static const struct install *magma_at(const struct scan_result *r, const char *root, const char *prefix,
                                      const char *lib, const char *include)
{
        const struct install *in = find(r, &component_magma, prefix);
        _cleanup_free_ char *p = path_join(root, prefix);
        _cleanup_free_ char *l = path_join(p, lib), *i = path_join(p, include);

        ck_assert_msg(in != NULL, "no MAGMA at '%s'", prefix);
        ck_assert_str_eq(in->prefix, p);
        ck_assert_str_eq(in->lib_dir, l);
        ck_assert_str_eq(in->include_dir, i);
        return in;
}

START_TEST(magma_site_build_without_soname)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("magma-builds")->build(root);
        scan_fixture(root, layout_fixture_find("magma-builds")->roots, &r);
        ck_assert_int_eq(count_component(&r, &component_magma), 3);
        in = magma_at(&r, root, "apps/magma/2.8.0", "lib", "include");
        ck_assert_str_eq(ver(&in->version), "2.8.0");
        /* DT_NEEDED libcudart.so.12, libcublas.so.12 (and libcusparse.so.12,
         * which would say nothing). */
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_str_eq(in->arch, "x86_64");
        ck_assert(!in->static_only);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(magma_easybuild_and_spack)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("magma-builds")->build(root);
        scan_fixture(root, layout_fixture_find("magma-builds")->roots, &r);
        in = magma_at(&r, root, "easybuild/software/magma/2.9.0-foss-2024a-CUDA-12.6.0", "lib", "include");
        ck_assert_str_eq(ver(&in->version), "2.9.0");
        /* The name's CUDA 12.6.0 agrees with libcudart.so.12. */
        ck_assert_str_eq(ver(&in->cuda_version), "12.6.0");
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        in = find(&r, &component_magma, "/magma-2.10.0-w3jvkf7hq2mw5rcqbyzylpkyxpbfkm7v");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "2.10.0");
        ck_assert_int_eq(install_cuda_major(in), 13);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* Debian's libmagma2 and libmagma-dev: /usr/lib/libmagma.so.2 (not the
 * multiarch directory) with /usr/include and /usr/lib/pkgconfig: the
 * distribution's install, whose module prepends nothing. */
START_TEST(magma_debian_usr_lib_is_system)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_magma(root, "usr", &(struct fx_magma){ .version = "2.9.0", .cuda_major = 12 });
        scan_fixture(root, (const char *const[]){ "usr", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_magma), 1);
        in = magma_at(&r, root, "usr", "lib", "include");
        ck_assert_int_eq(in->layout, LAYOUT_SYSTEM);
        ck_assert_str_eq(ver(&in->version), "2.9.0");
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* PyTorch CI: a static libmagma.a in /usr/local/cuda-12.6/magma, inside a
 * prefix the toolkit's detector prunes: the CUDA major is the prefix's. */
START_TEST(magma_static_in_cuda_prefix_subdirectory)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("magma-cuda")->build(root);
        scan_fixture(root, layout_fixture_find("magma-cuda")->roots, &r);
        ck_assert_int_eq(count_component(&r, &component_magma), 3);
        in = magma_at(&r, root, "usr/local/cuda-12.6/magma", "lib", "include");
        ck_assert_str_eq(ver(&in->version), "2.6.1");
        ck_assert(in->static_only);
        ck_assert_str_eq(ver(&in->cuda_version), "12");
        ck_assert_int_eq(in->layout, LAYOUT_TARBALL);
        ck_assert_ptr_null(in->arch);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(magma_merged_into_cuda_prefix_and_conda)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("magma-cuda")->build(root);
        scan_fixture(root, layout_fixture_find("magma-cuda")->roots, &r);
        in = magma_at(&r, root, "usr/local/cuda-13.0", "targets/x86_64-linux/lib", "targets/x86_64-linux/include");
        ck_assert_int_eq(in->layout, LAYOUT_MERGED);
        ck_assert_str_eq(ver(&in->version), "2.9.0");
        ck_assert_int_eq(install_cuda_major(in), 13);
        ck_assert_int_eq(in->n_problems, 0);
        in = magma_at(&r, root, "conda/envs/torch", "lib", "include");
        ck_assert_int_eq(in->layout, LAYOUT_CONDA);
        ck_assert_str_eq(ver(&in->version), "2.9.0");
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* pytorch's conda package magma-cuda126 names the CUDA of a static build. */
START_TEST(magma_conda_package_names_cuda)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_write(root, "conda/conda-meta/magma-cuda126-2.6.1-1.json", "{}\n");
        fx_magma(root, "conda", &(struct fx_magma){ .version = "2.6.1", .static_only = true });
        scan_fixture(root, (const char *const[]){ "conda", NULL }, &r);
        in = magma_at(&r, root, "conda", "lib", "include");
        ck_assert_int_eq(in->layout, LAYOUT_CONDA);
        ck_assert_str_eq(ver(&in->version), "2.6.1");
        ck_assert_str_eq(ver(&in->cuda_version), "12.6");
        ck_assert(in->static_only);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(magma_header_and_pkgconfig_disagree)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_magma(root, "apps/magma/2.8.0", &(struct fx_magma){ .version = "2.8.0", .cuda_major = 12 });
        fx_write(root, "apps/magma/2.8.0/lib/pkgconfig/magma.pc", "Name: magma\nVersion: 2.7.2\n");
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_magma, "/apps/magma/2.8.0");
        ck_assert_ptr_nonnull(in);
        /* The header wins; the other readings are problems. */
        ck_assert_str_eq(ver(&in->version), "2.8.0");
        ck_assert(install_has_problem(in, "version-mismatch"));
        ck_assert_ptr_nonnull(strstr(in->problems[0].message, "magma.pc says 2.7.2"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* An EasyBuild name for CUDA 11 on a build that loads CUDA 12's runtime;
 * and a build in a CUDA 13 prefix that loads CUDA 12's. */
START_TEST(magma_cuda_major_disagreements)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_magma(root, "eb/software/magma/2.7.2-foss-2023a-CUDA-11.8.0",
                 &(struct fx_magma){ .version = "2.7.2", .cuda_major = 12 });
        fx_cuda_toolkit(root, "usr/local/cuda-13.0",
                        &(struct fx_cuda){ .version = "13.0", .release = "13.0.2", .cudart = "13.0.96",
                                           .nvcc = "13.0.88" });
        fx_magma(root, "usr/local/cuda-13.0/magma", &(struct fx_magma){ .version = "2.9.0", .cuda_major = 12 });
        scan_fixture(root, (const char *const[]){ "eb", "usr/local", NULL }, &r);
        in = find(&r, &component_magma, "-CUDA-11.8.0");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        in = find(&r, &component_magma, "/cuda-13.0/magma");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 12);
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* No version anywhere but the header: a bare prefix named magma; no header:
 * missing-headers and, with no name either, no version. */
START_TEST(magma_version_from_header_only_and_missing_headers)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        _cleanup_free_ char *rm = xasprintf("rm -f '%s/opt/other/include/'*.h", root);
        const struct install *in;

        fx_magma(root, "opt/magma", &(struct fx_magma){ .version = "2.7.1", .cuda_major = 12 });
        fx_write(root, "opt/magma/lib/pkgconfig/magma.pc", "Name: magma\n");
        fx_magma(root, "opt/other", &(struct fx_magma){ .version = "2.7.1", .cuda_major = 12 });
        fx_write(root, "opt/other/lib/pkgconfig/magma.pc", "Name: magma\n");
        ck_assert_int_eq(system(rm), 0);
        scan_fixture(root, (const char *const[]){ "opt", NULL }, &r);
        in = find(&r, &component_magma, "/opt/magma");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "2.7.1");
        ck_assert_int_eq(in->n_problems, 0);
        in = find(&r, &component_magma, "/opt/other");
        ck_assert_ptr_nonnull(in);
        ck_assert(install_has_problem(in, "missing-headers"));
        ck_assert(install_has_problem(in, "no-version"));
        ck_assert_ptr_null(in->include_dir);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* The lines of a modulefile that change the environment or name a
 * dependency, trimmed, root written as @ROOT@. */
static char *env_lines(const char *path, const char *root)
{
        struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
        static const char *const starts[] = { "setenv", "pushenv", "prepend", "append", "depends_on", "prereq",
                                              NULL };
        char *res;

        ck_assert_int_eq(strbuf_read_file(&sb, path, 1 << 20), 0);
        for (char *line = sb.buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                line += strspn(line, " \t");
                for (const char *const *st = starts; *st; st++)
                        if (startswith(line, *st)) {
                                strbuf_addf(&out, "%s\n", line);
                                break;
                        }
        }
        res = str_replace_all(out.buf, root, "@ROOT@");
        strbuf_release(&sb);
        strbuf_release(&out);
        return res;
}

/* generate: PyTorch CI's static MAGMA gets MAGMA_HOME, USE_MAGMA and its
 * paths but no LD_LIBRARY_PATH, in Lua and Tcl; hierarchical under
 * CUDA/12/magma (Tcl: with a prereq of its CUDA too), flat depending on
 * a CUDA 12 cuda module. */
START_TEST(magma_static_module_environment)
{
        static const struct {
                const char *format, *layout, *file, *want;
        } cases[] = {
                { "lua", "hierarchical", "CUDA/12/magma/2.6.1.lua", "" },
                { "lua", "flat", "magma/2.6.1.lua", "depends_on(between(\"cuda\", \"12\", \"12.999999\"))\n" },
                { "tcl", "hierarchical", "CUDA/12/magma/2.6.1", "prereq \"cuda@12:12.999999\"\n" },
                { "tcl", "flat", "magma/2.6.1", "prereq \"cuda@12:12.999999\"\n" },
                { NULL },
        };
        static const char *const lua =
                "pushenv(\"MAGMA_HOME\", \"@M@\")\n"
                "setenv(\"USE_MAGMA\", \"1\")\n"
                "prepend_path(\"LIBRARY_PATH\", \"@M@/lib\")\n"
                "prepend_path(\"CPATH\", \"@M@/include\")\n"
                "prepend_path(\"CMAKE_PREFIX_PATH\", \"@M@\")\n"
                "prepend_path(\"PKG_CONFIG_PATH\", \"@M@/lib/pkgconfig\")\n";
        static const char *const tcl =
                /* pushenv, setenv where the tool has none (the template) */
                "setenv \"MAGMA_HOME\" \"@M@\"\n"
                "pushenv \"MAGMA_HOME\" \"@M@\"\n"
                "setenv \"USE_MAGMA\" \"1\"\n"
                "prepend-path \"LIBRARY_PATH\" \"@M@/lib\"\n"
                "prepend-path \"CPATH\" \"@M@/include\"\n"
                "prepend-path \"CMAKE_PREFIX_PATH\" \"@M@\"\n"
                "prepend-path \"PKG_CONFIG_PATH\" \"@M@/lib/pkgconfig\"\n";
        char *root = fx_new();
        _cleanup_free_ char *usr = path_join(root, "usr/local");

        layout_fixture_find("magma-cuda")->build(root);
        for (size_t i = 0; cases[i].format; i++) {
                _cleanup_free_ char *out = xasprintf("%s/out-%s-%s", root, cases[i].format, cases[i].layout);
                _cleanup_free_ char *file = path_join(out, cases[i].file);
                _cleanup_free_ char *body = str_replace_all(streq(cases[i].format, "lua") ? lua : tcl, "@M@",
                                                            "@ROOT@/usr/local/cuda-12.6/magma");
                _cleanup_free_ char *want = xasprintf("%s%s", cases[i].want, body);
                _cleanup_free_ char *got = NULL;
                struct run_result r = { 0 };

                run_cudamod(&r, (const char *const[]){ "generate", "-o", out, "--format", cases[i].format,
                                                      "--layout", cases[i].layout, usr, NULL },
                            false);
                ck_assert_msg(r.status == 0, "%s %s: %s", cases[i].format, cases[i].layout, r.err);
                run_result_release(&r);
                got = env_lines(file, root);
                ck_assert_msg(streq(got, want), "%s %s:\n%s\nwanted:\n%s", cases[i].format, cases[i].layout, got,
                              want);
        }
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("detect-magma");
        TCase *tc = tcase_create("magma");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, magma_site_build_without_soname);
        tcase_add_test(tc, magma_easybuild_and_spack);
        tcase_add_test(tc, magma_debian_usr_lib_is_system);
        tcase_add_test(tc, magma_static_in_cuda_prefix_subdirectory);
        tcase_add_test(tc, magma_merged_into_cuda_prefix_and_conda);
        tcase_add_test(tc, magma_conda_package_names_cuda);
        tcase_add_test(tc, magma_header_and_pkgconfig_disagree);
        tcase_add_test(tc, magma_cuda_major_disagreements);
        tcase_add_test(tc, magma_version_from_header_only_and_missing_headers);
        tcase_add_test(tc, magma_static_module_environment);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
