/* mkfixture: build a fixture tree from the command line, for the
 * integration scripts, the README's walk-through and the benchmarks:
 *   mkfixture demo DIR      the bundled demo tree (tests/demo.h)
 *   mkfixture doctor DIR    the doctor walk-through tree (demo_doctor_build)
 *   mkfixture doctor-debian DIR
 *                           the same with Debian's torch (demo_doctor_debian_build)
 *   mkfixture debian-torch DIR
 *                           Debian's torch alone (fx_debian_torch, RUNPATH)
 *   mkfixture doctor-build DIR
 *                           doctor --build's case: CUDA 11.8, CUDA 13.0 with
 *                           cuDNN 9.19.0 (CUDA 13) copied in and
 *                           usr/local/cuda pointing at it, cuDNN 8.9.7 (CUDA
 *                           11), etc/debian_version (DIR is the sysroot)
 *   mkfixture LAYOUT DIR    one layout fixture of tests/layouts.c
 *   mkfixture --list        the names, one per line, then the scan roots (not
 *                           doctor's: tests/modules expects one expectation
 *                           file per name listed) */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "demo.h"
#include "fixture.h"
#include "layouts.h"
#include "util.h"
#include "banned.h"

static const struct layout_fixture *chosen;
static const char *doctor;
static bool doctor_build;
static const char *target;

static void doctor_build_tree(const char *root)
{
        _cleanup_free_ char *usr_local_cuda = path_join(root, "sw/cuda/13.0");
        const char *const nvccs[] = { "sw/cuda/11.8/bin/nvcc", "sw/cuda/13.0/bin/nvcc", NULL };

        fx_write(root, "etc/debian_version", "12.11\n");
        fx_cuda_toolkit(root, "sw/cuda/11.8",
                        &(struct fx_cuda){ .version = "11.8", .release = "11.8.0", .cudart = "11.8.89",
                                           .nvcc = "11.8.89", .cupti = true });
        fx_cuda_toolkit(root, "sw/cuda/13.0",
                        &(struct fx_cuda){ .version = "13.0", .release = "13.0.2", .cudart = "13.0.96",
                                           .nvcc = "13.0.88", .cupti = true });
        fx_cudnn(root, "sw/cuda/13.0",
                 &(struct fx_cudnn){ .version = "9.19.0", .cuda_major = 13, .lib = "targets/x86_64-linux/lib",
                                     .include = "targets/x86_64-linux/include" });
        fx_cudnn(root, "sw/cudnn/8.9.7", &(struct fx_cudnn){ .version = "8.9.7", .cuda_major = 11 });
        fx_symlink(root, "usr/local/cuda", usr_local_cuda);
        /* find_program wants an executable nvcc (this one never runs). */
        for (size_t i = 0; nvccs[i]; i++) {
                _cleanup_free_ char *p = path_join(root, nvccs[i]);
                ck_assert(chmod(p, 0755) == 0);
        }
}

/* The fixture builders report failures through Check, so they run as the
 * one test of a suite (in this process). */
START_TEST(build)
{
        if (chosen)
                chosen->build(target);
        else if (doctor && streq(doctor, "doctor"))
                demo_doctor_build(target);
        else if (doctor && streq(doctor, "doctor-debian"))
                demo_doctor_debian_build(target);
        else if (doctor)
                fx_debian_torch(target, true);
        else if (doctor_build)
                doctor_build_tree(target);
        else
                demo_build(target);
}
END_TEST

static int run_builder(void)
{
        Suite *s = suite_create("mkfixture");
        TCase *tc = tcase_create("build");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, build);
        tcase_set_timeout(tc, 600);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_set_fork_status(sr, CK_NOFORK);
        srunner_run_all(sr, CK_SILENT);
        failed = srunner_ntests_failed(sr);
        if (failed) {
                TestResult **tr = srunner_failures(sr);
                fprintf(stderr, "mkfixture: %s\n", tr_msg(tr[0]));
                free(tr);
        }
        srunner_free(sr);
        return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
        const struct layout_fixture *f = NULL;

        if (argc == 2 && streq(argv[1], "--list")) {
                printf("demo sw\n");
                for (f = layout_fixtures; f->name; f++) {
                        printf("%s", f->name);
                        for (size_t i = 0; f->roots[i]; i++)
                                printf(" %s", f->roots[i]);
                        putchar('\n');
                }
                return 0;
        }
        if (argc != 3 || argv[1][0] == '-') {
                fputs("usage: mkfixture demo|doctor|doctor-debian|debian-torch|doctor-build|LAYOUT DIR | "
                      "mkfixture --list\n",
                      stderr);
                return 2;
        }
        if (streq(argv[1], "doctor") || streq(argv[1], "doctor-debian") || streq(argv[1], "debian-torch"))
                doctor = argv[1];
        doctor_build = streq(argv[1], "doctor-build");
        if (!streq(argv[1], "demo") && !doctor && !doctor_build && !(f = layout_fixture_find(argv[1]))) {
                fprintf(stderr, "mkfixture: no fixture '%s' (see --list)\n", argv[1]);
                return 2;
        }
        if (mkdir(argv[2], 0755) < 0 && errno != EEXIST) {
                fprintf(stderr, "mkfixture: cannot create '%s': %s\n", argv[2], strerror(errno));
                return 1;
        }
        chosen = f;
        /* The builders take paths below '/' for an absolute root only. */
        target = path_absolute(argv[2]);
        return run_builder();
}
