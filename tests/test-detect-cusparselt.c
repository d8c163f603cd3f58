/* test-detect-cusparselt.c: the cuSPARSELt detector: its layouts, the
 * version and build from the header and names, the CUDA major from names,
 * package directories, conda records and the enclosing prefix (it links
 * the runtime statically, so no DT_NEEDED tells), disagreements; and the
 * modules generate writes for it. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "component-cuda.h"
#include "component-cusparselt.h"
#include "detect.h"
#include "fixture.h"
#include "layouts.h"
#include "scanhelp.h"
#include "testutil.h"
#include "util.h"
#include "strbuf.h"

static const struct install *expect(const struct scan_result *r, const char *suffix, const char *version,
                                    const char *build, long cuda_major, enum layout layout)
{
        const struct install *in = find(r, &component_cusparselt, suffix);

        ck_assert_msg(in != NULL, "no cuSPARSELt install at '…%s'", suffix);
        ck_assert_str_eq(ver(&in->version), version);
        ck_assert_str_eq(in->build ? in->build : "", build);
        ck_assert_int_eq(install_cuda_major(in), cuda_major);
        ck_assert_int_eq(in->layout, layout);
        return in;
}

START_TEST(cusparselt_archives_spack_easybuild)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        layout_fixture_find("cusparselt-tarballs")->build(root);
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cusparselt), 4);
        /* 0.5 to 0.7 were CUDA 12 builds only: the version tells. */
        in = expect(&r, "/libcusparse_lt-linux-x86_64-0.6.3.2-archive", "0.6.3", "2", 12, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        ck_assert_str_eq(in->arch, "x86_64");
        ck_assert(endswith(in->include_dir, "-0.6.3.2-archive/include"));
        ck_assert(endswith(in->lib_dir, "-0.6.3.2-archive/lib"));
        in = expect(&r, "/libcusparse_lt-linux-x86_64-0.8.0.4_cuda13-archive", "0.8.0", "4", 13, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        /* Spack's 0.8.1-cuda120 is the CUDA 12 archive, not CUDA 120. */
        in = expect(&r, "-p4kq3w5dcvqnvrfsw2b3zbd7bhqgxl6c", "0.8.1", "1", 12, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        in = expect(&r, "/cuSPARSELt/0.7.1.0-CUDA-12.6.0", "0.7.1", "0", 12, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* From 0.8 one archive per CUDA major: the same version twice, and an Arm
 * server (sbsa) build. */
START_TEST(cusparselt_cuda12_and_cuda13_archives)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cusparselt(root, "apps/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive",
                      &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_cusparselt(root, "apps/libcusparse_lt-linux-x86_64-0.8.1.1_cuda13-archive",
                      &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_cusparselt(root, "apps/libcusparse_lt-linux-sbsa-0.8.1.1_cuda13-archive",
                      &(struct fx_cusparselt){ .version = "0.8.1.1", .machine = ELFSTUB_AARCH64 });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cusparselt), 3);
        in = expect(&r, "x86_64-0.8.1.1_cuda12-archive", "0.8.1", "1", 12, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        in = expect(&r, "x86_64-0.8.1.1_cuda13-archive", "0.8.1", "1", 13, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        in = expect(&r, "sbsa-0.8.1.1_cuda13-archive", "0.8.1", "1", 13, LAYOUT_TARBALL);
        ck_assert_str_eq(in->arch, "aarch64");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* Archives without a suffix: 0.5 to 0.7 were built for CUDA 12 only; 0.4
 * and older had builds for CUDA 11 too, so nothing tells. */
START_TEST(cusparselt_version_tells_cuda_12_from_0_5_to_0_7)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cusparselt(root, "apps/libcusparse_lt-linux-x86_64-0.4.0.7-archive",
                      &(struct fx_cusparselt){ .version = "0.4.0.7" });
        fx_cusparselt(root, "apps/libcusparse_lt-linux-x86_64-0.5.0.1-archive",
                      &(struct fx_cusparselt){ .version = "0.5.0.1" });
        fx_cusparselt(root, "apps/libcusparse_lt-linux-x86_64-0.7.1.0-archive",
                      &(struct fx_cusparselt){ .version = "0.7.1.0" });
        fx_cusparselt(root, "apps/cusparselt-0.8.1.1", &(struct fx_cusparselt){ .version = "0.8.1.1" });
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = expect(&r, "-0.4.0.7-archive", "0.4.0", "7", -1, LAYOUT_TARBALL);
        ck_assert_int_eq(in->n_problems, 0);
        expect(&r, "-0.5.0.1-archive", "0.5.0", "1", 12, LAYOUT_TARBALL);
        expect(&r, "-0.7.1.0-archive", "0.7.1", "0", 12, LAYOUT_TARBALL);
        /* From 0.8 each CUDA major has its build: only names tell. */
        expect(&r, "/cusparselt-0.8.1.1", "0.8.1", "1", -1, LAYOUT_TARBALL);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_deb_wheel_conda)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        _cleanup_free_ char *usr = path_join(root, "usr");
        _cleanup_free_ char *inc = path_join(root, "usr/include/libcusparseLt/12");
        _cleanup_free_ char *lib = path_join(root, "usr/lib/x86_64-linux-gnu/libcusparseLt/12");

        layout_fixture_find("cusparselt-packages")->build(root);
        scan_fixture(root, (const char *const[]){ "usr/lib/x86_64-linux-gnu", "venv", "conda", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cusparselt), 3);
        in = expect(&r, "/usr", "0.8.1", "1", 12, LAYOUT_SYSTEM);
        ck_assert_str_eq(in->prefix, usr);
        ck_assert_str_eq(in->include_dir, inc);
        ck_assert_str_eq(in->lib_dir, lib);
        ck_assert_int_eq(in->n_problems, 0);
        /* The wheel's soname-only library: header and dist name tell. */
        in = expect(&r, "/nvidia/cusparselt", "0.6.3", "2", 12, LAYOUT_WHEEL);
        ck_assert_int_eq(in->n_problems, 0);
        in = expect(&r, "/envs/torch", "0.8.0", "4", 13, LAYOUT_CONDA);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* The CUDA 12 and CUDA 13 packages side by side: two installs, one /usr. */
START_TEST(cusparselt_deb_for_two_cuda_majors)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cusparselt(root, "usr", &(struct fx_cusparselt){ .version = "0.8.1.1",
                                                           .lib = "lib/x86_64-linux-gnu/libcusparseLt/12",
                                                           .include = "include/libcusparseLt/12" });
        fx_cusparselt(root, "usr", &(struct fx_cusparselt){ .version = "0.8.1.1",
                                                           .lib = "lib/x86_64-linux-gnu/libcusparseLt/13",
                                                           .include = "include/libcusparseLt/13" });
        scan_fixture(root, (const char *const[]){ "usr/lib/x86_64-linux-gnu", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cusparselt), 2);
        for (size_t i = 0; i < r.installs.len; i++) {
                _cleanup_free_ char *want_inc = NULL;
                long major;

                in = r.installs.items[i];
                major = install_cuda_major(in);
                ck_assert(major == 12 || major == 13);
                ck_assert(endswith(in->lib_dir, major == 12 ? "/libcusparseLt/12" : "/libcusparseLt/13"));
                want_inc = xasprintf("%s/usr/include/libcusparseLt/%ld", root, major);
                ck_assert_str_eq(in->include_dir, want_inc);
                ck_assert_int_eq(in->n_problems, 0);
        }
        ck_assert_int_ne(install_cuda_major(r.installs.items[0]), install_cuda_major(r.installs.items[1]));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_cu13_wheel)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        const char *site = "env/lib/python3.12/site-packages";
        _cleanup_free_ char *wheel = xasprintf("%s/nvidia/cusparselt", site);

        fx_cusparselt(root, wheel, &(struct fx_cusparselt){ .version = "0.8.1.1", .soname_only = true });
        fx_dist_info(root, site, "nvidia-cusparselt-cu13", "0.8.1");
        scan_fixture(root, (const char *const[]){ "env", NULL }, &r);
        in = expect(&r, "/nvidia/cusparselt", "0.8.1", "1", 13, LAYOUT_WHEEL);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* NVIDIA's real CUDA 13 wheel: lib/libcusparseLt.so.0 and no include/
 * at all; its dist-info tells the version and the CUDA major. */
START_TEST(cusparselt_cu13_wheel_runtime_only)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        const char *site = "env/lib/python3.12/site-packages";
        _cleanup_free_ char *wheel = xasprintf("%s/nvidia/cusparselt", site);

        fx_cusparselt(root, wheel, &(struct fx_cusparselt){ .version = "0.8.1.1", .soname_only = true,
                                                           .no_header = true });
        fx_wheel_record(root, site, "nvidia-cusparselt-cu13", "0.8.1",
                        (const char *const[]){ "nvidia/cusparselt/lib/libcusparseLt.so.0", NULL });
        scan_fixture(root, (const char *const[]){ "env", NULL }, &r);
        in = expect(&r, "/nvidia/cusparselt", "0.8.1", "", 13, LAYOUT_WHEEL);
        ck_assert_int_eq(in->kind, INSTALL_RUNTIME);
        ck_assert_ptr_null(in->include_dir);
        ck_assert_str_eq(install_evidence(in, "kind"), "dist-info");
        ck_assert_str_eq(install_evidence(in, "version"), "dist-info");
        ck_assert_str_eq(install_evidence(in, "cuda_version"), "dist-info");
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* The cu12 wheel, then the cu13 one, into one folder (the layout
 * fixture cusparselt-wheels): the verbose lines say what was left. */
START_TEST(cusparselt_shared_wheel_folder_says_why)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        bool lib_line = false, header_line = false;

        layout_fixture_find("cusparselt-wheels")->build(root);
        scan_fixture(root, (const char *const[]){ "venv", NULL }, &r);
        in = expect(&r, "/nvidia/cusparselt", "0.8.1", "", 13, LAYOUT_WHEEL);
        ck_assert_int_eq(in->kind, INSTALL_RUNTIME);
        for (size_t i = 0; i < r.verbose.len; i++) {
                const char *v = r.verbose.items[i];

                lib_line |= strstr(v, "libcusparseLt.so.0' is not nvidia-cusparselt-cu12 0.6.3's") != NULL;
                header_line |= strstr(v, "cusparseLt.h' is nvidia-cusparselt-cu12 0.6.3's, not "
                                         "nvidia-cusparselt-cu13 0.8.1's") != NULL;
        }
        ck_assert(lib_line);
        ck_assert(header_line);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* A dist-info that is not what pip writes is left out, with a verbose
 * line: a RECORD with a NUL byte, one whose size is not a number, a
 * METADATA naming another dist than its directory. */
START_TEST(cusparselt_hostile_dist_info_left_out)
{
        static const char *const bad[] = {
                "nvidia/cusparselt/lib/libcusparseLt.so.0,sha256=x,12\n\0\n",
                "nvidia/cusparselt/lib/libcusparseLt.so.0,sha256=x,-12\n",
                "\"nvidia/cusparselt/lib/libcusparseLt.so.0,sha256=x,12\n",
                "nvidia/cusparselt/../../../../etc/passwd,sha256=x,12\n",
        };
        static const char *const why[] = {
                "a NUL byte", "a size is not a number", "a line is not path,hash,size", "leaves it",
        };

        for (size_t k = 0; k < ELEMENTSOF(bad) + 1; k++) {
                char *root = fx_new();
                struct scan_result r = { 0 };
                const char *site = "env/lib/python3.12/site-packages";
                const char *di = "env/lib/python3.12/site-packages/nvidia_cusparselt_cu13-0.8.1.dist-info";
                _cleanup_free_ char *wheel = xasprintf("%s/nvidia/cusparselt", site);
                _cleanup_free_ char *record = xasprintf("%s/RECORD", di), *meta = xasprintf("%s/METADATA", di);
                const struct install *in;
                bool said = false;

                fx_cusparselt(root, wheel, &(struct fx_cusparselt){ .version = "0.8.1.1", .soname_only = true,
                                                                   .no_header = true });
                fx_dist_info(root, site, "nvidia-cusparselt-cu13", "0.8.1");
                if (k < ELEMENTSOF(bad)) {
                        _cleanup_free_ char *p = path_join(root, record);
                        FILE *f = fopen(p, "w");

                        ck_assert_ptr_nonnull(f);
                        /* The NUL is written too: up to the last "\n". */
                        ck_assert_int_eq(fwrite(bad[k], 1, strlen(bad[k]) + (k == 0 ? 2 : 0), f),
                                         strlen(bad[k]) + (k == 0 ? 2 : 0));
                        fclose(f);
                } else
                        fx_write(root, meta, "Metadata-Version: 2.4\nName: nvidia-cusparselt-cu12\nVersion: 0.8.1\n");
                scan_fixture(root, (const char *const[]){ "env", NULL }, &r);
                in = find(&r, &component_cusparselt, "/nvidia/cusparselt");
                ck_assert_ptr_nonnull(in);
                ck_assert_int_eq(in->kind, INSTALL_RUNTIME);
                ck_assert_ptr_null(install_evidence(in, "kind"));
                for (size_t i = 0; i < r.verbose.len; i++)
                        said |= strstr(r.verbose.items[i], "is left out: ") &&
                                strstr(r.verbose.items[i], k < ELEMENTSOF(bad) ? why[k] : "METADATA Name");
                ck_assert_msg(said, "case %zu: no verbose line", k);
                scan_result_release(&r);
                fx_free(root);
        }
}
END_TEST

/* PyTorch CI's way: the archive copied into /usr/local/cuda-12.6. */
START_TEST(cusparselt_merged_into_a_cuda_prefix)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cuda_toolkit(root, "usr/local/cuda-12.6",
                        &(struct fx_cuda){ .version = "12.6", .release = "12.6.3", .cudart = "12.6.77",
                                           .nvcc = "12.6.85" });
        fx_cusparselt(root, "usr/local/cuda-12.6", &(struct fx_cusparselt){ .version = "0.7.1.0", .lib = "lib64" });
        scan_fixture(root, (const char *const[]){ "usr/local", NULL }, &r);
        ck_assert_int_eq(count_component(&r, &component_cuda), 1);
        in = expect(&r, "/usr/local/cuda-12.6", "0.7.1", "0", 12, LAYOUT_MERGED);
        ck_assert(endswith(in->lib_dir, "/targets/x86_64-linux/lib"));
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* A 0.8 copy in a CUDA 13 prefix: the prefix is the only source, and it
 * is not the version rule's CUDA 12. */
START_TEST(cusparselt_merged_cuda_from_the_prefix)
{
        char *root = fx_new();
        struct scan_result r = { 0 };

        fx_cuda_toolkit(root, "opt/cuda-13.0",
                        &(struct fx_cuda){ .version = "13.0", .release = "13.0.0", .cudart = "13.0.48",
                                           .nvcc = "13.0.48" });
        fx_cusparselt(root, "opt/cuda-13.0", &(struct fx_cusparselt){ .version = "0.8.1.1", .lib = "lib64" });
        scan_fixture(root, (const char *const[]){ "opt", NULL }, &r);
        expect(&r, "/opt/cuda-13.0", "0.8.1", "1", 13, LAYOUT_MERGED);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_header_and_library_disagree)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cusparselt(root, "apps/cusparselt", &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_write(root, "apps/cusparselt/include/cusparseLt.h",
                 "#define CUSPARSELT_VER_MAJOR 0\n#define CUSPARSELT_VER_MINOR 7\n"
                 "#define CUSPARSELT_VER_PATCH 1\n#define CUSPARSELT_VER_BUILD 0\n");
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_cusparselt, "/apps/cusparselt");
        ck_assert_ptr_nonnull(in);
        /* The header is the first reading. */
        ck_assert_str_eq(ver(&in->version), "0.7.1");
        ck_assert(install_has_problem(in, "version-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_build_numbers_disagree)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_cusparselt(root, "apps/cusparselt", &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_write(root, "apps/cusparselt/include/cusparseLt.h",
                 "#define CUSPARSELT_VER_MAJOR 0\n#define CUSPARSELT_VER_MINOR 8\n"
                 "#define CUSPARSELT_VER_PATCH 1\n#define CUSPARSELT_VER_BUILD 3\n");
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_cusparselt, "/apps/cusparselt");
        ck_assert_ptr_nonnull(in);
        ck_assert_str_eq(ver(&in->version), "0.8.1");
        ck_assert_str_eq(in->build, "3");
        ck_assert_int_eq(in->n_problems, 1);
        ck_assert(install_has_problem(in, "version-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_name_and_conda_record_disagree)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        const char *p = "eb/software/cuSPARSELt/0.8.0.4-CUDA-13.0.0";
        _cleanup_free_ char *meta = xasprintf("%s/conda-meta/cusparselt-0.8.0.4-h0_0.json", p);

        fx_cusparselt(root, p, &(struct fx_cusparselt){ .version = "0.8.0.4" });
        fx_write(root, meta, "{ \"depends\": [ \"cuda-version >=12,<13.0a0\" ] }\n");
        scan_fixture(root, (const char *const[]){ "eb", NULL }, &r);
        in = find(&r, &component_cusparselt, "-CUDA-13.0.0");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(install_cuda_major(in), 13);
        ck_assert(install_has_problem(in, "cuda-major-mismatch"));
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_wrong_soname_and_missing_header)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;

        fx_mkdir(root, "apps/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive/include");
        fx_library(root, "apps/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive/lib", "libcusparseLt", "1",
                   "1.0.0", 62, NULL, NULL);
        scan_fixture(root, (const char *const[]){ "apps", NULL }, &r);
        in = find(&r, &component_cusparselt, "_cuda12-archive");
        ck_assert_ptr_nonnull(in);
        ck_assert(install_has_problem(in, "missing-headers"));
        ck_assert(install_has_problem(in, "version-mismatch"));
        ck_assert_int_eq(install_cuda_major(in), 12);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

/* Fedora/EL (negativo17): /usr/lib64 and /usr/include, no CUDA in names. */
START_TEST(cusparselt_rpm_in_usr_lib64)
{
        char *root = fx_new();
        struct scan_result r = { 0 };
        const struct install *in;
        _cleanup_free_ char *inc = path_join(root, "usr/include");

        fx_cusparselt(root, "usr", &(struct fx_cusparselt){ .version = "0.6.3.2", .lib = "lib64" });
        scan_fixture(root, (const char *const[]){ "usr/lib64", NULL }, &r);
        in = expect(&r, "/usr", "0.6.3", "2", 12, LAYOUT_SYSTEM);
        ck_assert_str_eq(in->include_dir, inc);
        ck_assert_int_eq(in->n_problems, 0);
        scan_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_header_defines)
{
        static const char *const names[] = {
                "CUSPARSELT_VER_MAJOR", "CUSPARSELT_VER_MINOR", "CUSPARSELT_VER_PATCH", "CUSPARSELT_VER_BUILD",
        };
        static const char four[] = "#define CUSPARSELT_VER_MAJOR 0\n#define CUSPARSELT_VER_MINOR 10\n"
                                   "#  define CUSPARSELT_VER_PATCH 2\n#define CUSPARSELT_VER_BUILD 5\n";
        static const char three[] = "#define CUSPARSELT_VER_MAJOR 0\n#define CUSPARSELT_VER_MINOR 1\n"
                                    "#define CUSPARSELT_VER_PATCH 0\n";
        static const char bad[] = "#define CUSPARSELT_VER_MAJOR 0\n#define CUSPARSELT_VER_MINOR x\n"
                                  "#define CUSPARSELT_VER_PATCH 0\n";
        struct version v;
        long code;

        ck_assert_int_eq(header_define_triple(four, strlen(four), names, &v), 0);
        ck_assert_str_eq(ver(&v), "0.10.2.5");
        ck_assert_int_eq(header_define_triple(three, strlen(three), names, &v), 0);
        ck_assert_str_eq(ver(&v), "0.1.0");
        ck_assert_int_eq(header_define_triple(bad, strlen(bad), names, &v), -EINVAL);
        ck_assert_int_eq(header_define_triple(three, strlen(three) - 28, names, &v), -ENOENT);
        /* The probe's code, not the header's ambiguous CUSPARSELT_VERSION. */
        ck_assert_int_eq(component_macros_code(component_cusparselt.version_macros, four, strlen(four), &code), 0);
        ck_assert_int_eq(code, 1002);
        v = component_cusparselt.code_version(code);
        ck_assert_str_eq(ver(&v), "0.10.2");
}
END_TEST

START_TEST(cusparselt_path_cuda_major)
{
        static const struct {
                const char *path;
                unsigned long major;
        } cases[] = {
                { "/usr/lib/x86_64-linux-gnu/libcusparseLt/12/libcusparseLt.so.0", 12 },
                { "/usr/lib/x86_64-linux-gnu/libcusparseLt/13", 13 },
                { "/opt/libcusparse_lt-linux-sbsa-0.8.1.1_cuda13-archive/lib/libcusparseLt.so.0", 13 },
                { "/sw/software/cuSPARSELt/0.8.0.4-CUDA-12.8.0/lib", 12 },
                { "/spack/gcc-12.3.0/cusparselt-0.8.1-cuda120-p4kq3w5d/lib", 12 },
                { "/usr/local/cuda-12.6/targets/x86_64-linux/lib", 12 },
                { "/sw/libcusparseLt/lib", 0 },
                { "/opt/libcusparse_lt-linux-x86_64-0.6.3.2-archive/lib", 0 },
                { "/sw/GCCcore-12.3.0/lib", 0 },
                { NULL, 0 },
        };

        for (size_t i = 0; cases[i].path; i++)
                ck_assert_msg(path_cuda_major(cases[i].path, "libcusparseLt") == cases[i].major, "'%s': %lu, not %lu",
                              cases[i].path, path_cuda_major(cases[i].path, "libcusparseLt"), cases[i].major);
}
END_TEST

/* The module's environment in both layouts and both formats: hierarchical
 * under CUDA/<major>/cusparselt, flat needing a cuda of its major. */
static void check_module(const char *out, const char *rel, const char *prefix, const char *const *lines)
{
        _cleanup_free_ char *path = path_join(out, rel);
        _cleanup_strbuf_ struct strbuf text = STRBUF_INIT;

        ck_assert_msg(strbuf_read_file(&text, path, 1 << 20) >= 0, "no '%s'", path);
        for (const char *const *l = lines; *l; l++) {
                _cleanup_free_ char *line = str_replace_all(*l, "@P@", prefix);
                ck_assert_msg(strstr(text.buf, line), "'%s' lacks: %s", rel, line);
        }
}

START_TEST(cusparselt_generate_both_layouts_and_formats)
{
        char *root = fx_new();
        _cleanup_free_ char *apps = path_join(root, "apps");
        _cleanup_free_ char *p = path_join(root, "apps/libcusparse_lt-linux-x86_64-0.8.0.4_cuda13-archive");
        static const char *const lua[] = {
                "pushenv(\"CUSPARSELT_ROOT\", \"@P@\")\n"
                "pushenv(\"CUSPARSELT_ROOT_DIR\", \"@P@\")\n"
                "setenv(\"CUSPARSELT_INCLUDE_DIR\", \"@P@/include\")\n"
                "setenv(\"CUSPARSELT_LIBRARY\", \"@P@/lib\")\n"
                "setenv(\"USE_CUSPARSELT\", \"1\")\n"
                "prepend_path(\"LD_LIBRARY_PATH\", \"@P@/lib\")\n"
                "prepend_path(\"LIBRARY_PATH\", \"@P@/lib\")\n"
                "prepend_path(\"CPATH\", \"@P@/include\")\n"
                "prepend_path(\"CMAKE_PREFIX_PATH\", \"@P@\")\n",
                NULL,
        };
        static const char *const lua_flat[] = { "depends_on(between(\"cuda\", \"13\", \"13.999999\"))\n", NULL };
        static const char *const tcl[] = {
                "if {[info commands pushenv] eq \"\" || ([info exists ::ModuleTool] && $::ModuleTool eq \"Lmod\" &&\n"
                "        [package vcompare $::ModuleToolVersion 8.7.6] < 0)} {\n"
                "    setenv \"CUSPARSELT_ROOT\" \"@P@\"\n"
                "} else {\n"
                "    pushenv \"CUSPARSELT_ROOT\" \"@P@\"\n"
                "}\n"
                "if {[info commands pushenv] eq \"\" || ([info exists ::ModuleTool] && $::ModuleTool eq \"Lmod\" &&\n"
                "        [package vcompare $::ModuleToolVersion 8.7.6] < 0)} {\n"
                "    setenv \"CUSPARSELT_ROOT_DIR\" \"@P@\"\n"
                "} else {\n"
                "    pushenv \"CUSPARSELT_ROOT_DIR\" \"@P@\"\n"
                "}\n"
                "setenv \"CUSPARSELT_INCLUDE_DIR\" \"@P@/include\"\n"
                "setenv \"CUSPARSELT_LIBRARY\" \"@P@/lib\"\n"
                "setenv \"USE_CUSPARSELT\" \"1\"\n"
                "prepend-path \"LD_LIBRARY_PATH\" \"@P@/lib\"\n"
                "prepend-path \"LIBRARY_PATH\" \"@P@/lib\"\n"
                "prepend-path \"CPATH\" \"@P@/include\"\n"
                "prepend-path \"CMAKE_PREFIX_PATH\" \"@P@\"\n",
                NULL,
        };
        static const char *const tcl_flat[] = { "prereq \"cuda@13:13.999999\"\n", NULL };

        layout_fixture_find("cusparselt-tarballs")->build(root);
        fx_cusparselt(root, "apps/libcusparse_lt-linux-x86_64-0.4.0.7-archive",
                      &(struct fx_cusparselt){ .version = "0.4.0.7" });
        for (int format = 0; format < 2; format++)
                for (int flat = 0; flat < 2; flat++) {
                        _cleanup_free_ char *out = xasprintf("%s/out-%d-%d", root, format, flat);
                        struct run_result r;

                        run_cudamod(&r,
                                    (const char *const[]){ "generate", "-o", out, "--format", format ? "tcl" : "lua",
                                                           "--layout", flat ? "flat" : "hierarchical", apps, NULL },
                                    false);
                        ck_assert_msg(r.status == 0, "generate: %s", r.err);
                        if (flat) {
                                check_module(out, format ? "cusparselt/0.8.0" : "cusparselt/0.8.0.lua", p,
                                             format ? tcl : lua);
                                check_module(out, format ? "cusparselt/0.8.0" : "cusparselt/0.8.0.lua", p,
                                             format ? tcl_flat : lua_flat);
                                /* No CUDA major is fine without a hierarchy. */
                                check_module(out, format ? "cusparselt/0.4.0" : "cusparselt/0.4.0.lua", p,
                                             (const char *const[]){ "USE_CUSPARSELT", NULL });
                        } else {
                                _cleanup_free_ char *skipped = NULL;

                                check_module(out, format ? "CUDA/13/cusparselt/0.8.0" : "CUDA/13/cusparselt/0.8.0.lua",
                                             p, format ? tcl : lua);
                                ck_assert(strstr(r.err, "the CUDA major it was built for is unknown"));
                                ck_assert(strstr(r.err, "0.4.0.7-archive"));
                                skipped = xasprintf("%s/CUDA/12/cusparselt/0.4.0%s", out, format ? "" : ".lua");
                                ck_assert(access(skipped, F_OK) != 0);
                        }
                        run_result_release(&r);
                }
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("detect-cusparselt");
        TCase *tc = tcase_create("cusparselt");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, cusparselt_archives_spack_easybuild);
        tcase_add_test(tc, cusparselt_cuda12_and_cuda13_archives);
        tcase_add_test(tc, cusparselt_version_tells_cuda_12_from_0_5_to_0_7);
        tcase_add_test(tc, cusparselt_deb_wheel_conda);
        tcase_add_test(tc, cusparselt_deb_for_two_cuda_majors);
        tcase_add_test(tc, cusparselt_cu13_wheel);
        tcase_add_test(tc, cusparselt_cu13_wheel_runtime_only);
        tcase_add_test(tc, cusparselt_shared_wheel_folder_says_why);
        tcase_add_test(tc, cusparselt_hostile_dist_info_left_out);
        tcase_add_test(tc, cusparselt_merged_into_a_cuda_prefix);
        tcase_add_test(tc, cusparselt_merged_cuda_from_the_prefix);
        tcase_add_test(tc, cusparselt_header_and_library_disagree);
        tcase_add_test(tc, cusparselt_build_numbers_disagree);
        tcase_add_test(tc, cusparselt_name_and_conda_record_disagree);
        tcase_add_test(tc, cusparselt_wrong_soname_and_missing_header);
        tcase_add_test(tc, cusparselt_rpm_in_usr_lib64);
        tcase_add_test(tc, cusparselt_header_defines);
        tcase_add_test(tc, cusparselt_path_cuda_major);
        tcase_add_test(tc, cusparselt_generate_both_layouts_and_formats);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
