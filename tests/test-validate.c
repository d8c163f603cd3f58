/* test-validate.c: `cudamod validate` end to end, as an admin runs it:
 * generate a tree, validate it, read the verdicts (human and JSON). The
 * checks one by one are test-validate-elf.c and test-validate-probe.c;
 * here a fake toolkit whose libcudart is real code (tests/fakecuda) goes
 * through every check, with the fake drivers, a hand-edited module, a
 * broken launcher, -j, and the real CUDA 13.0 install when there is one. */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>

#include "fixture.h"
#include "strbuf.h"
#include "testutil.h"



/* root/sw/cuda-12.4: a runfile toolkit whose libcudart.so.12 answers
 * 12040, with a header that says so and declares what the build check
 * calls; its modules in root/mf (hierarchical, Lua); drivers in
 * root/drv-{two,old,none}/libcuda.so.1. */
static char *fake_site(void)
{
        char *root = fx_new();
        const char *argv[] = { "generate", "-o", NULL, NULL, NULL };
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        struct run_result r = { 0 };

        fx_cuda_toolkit(root, "sw/cuda-12.4",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                           .cudart = "12.4.127", .nvcc = "12.4.131" });
        fx_fake_library(root, "sw/cuda-12.4/targets/x86_64-linux/lib/libcudart.so.12.4.127", "CUDART12");
        fx_write(root, "sw/cuda-12.4/targets/x86_64-linux/include/cuda_runtime_api.h",
                 "#define CUDART_VERSION 12040\nint cudaRuntimeGetVersion(int *v);\n");
        fx_mkdir(root, "drv-two");
        fx_fake_library(root, "drv-two/libcuda.so.1", "CUDA_TWO_GPUS");
        fx_mkdir(root, "drv-old");
        fx_fake_library(root, "drv-old/libcuda.so.1", "CUDA_OLD");
        fx_mkdir(root, "drv-none");
        fx_fake_library(root, "drv-none/libcuda.so.1", "CUDA_NO_GPU");
        argv[2] = out;
        argv[3] = sw;
        run_cudamod(&r, argv, false);
        ck_assert_msg(r.status == 0, "generate failed: %s", r.err);
        run_result_release(&r);
        return root;
}

/* Run validate on root/mf/Core with extra arguments. */
static void validate(struct run_result *r, const char *root, const char *const *extra)
{
        _cleanup_free_ char *mp = path_join(root, "mf/Core");
        const char *argv[24] = { "validate", "--modulepath", mp };
        size_t n = 3;

        for (; extra && *extra && n < ELEMENTSOF(argv) - 1; extra++)
                argv[n++] = *extra;
        argv[n] = NULL;
        run_cudamod(r, argv, false);
}

static json_t *parse(const struct run_result *r)
{
        json_error_t e;
        json_t *doc = json_loads(r->out, 0, &e);

        ck_assert_msg(doc != NULL, "not JSON (%s): %s", e.text, r->out);
        ck_assert_str_eq(json_string_value(json_object_get(doc, "cudamod")), "validate");
        ck_assert_int_eq(json_integer_value(json_object_get(doc, "format")), 1);
        return doc;
}

static json_t *module_of(json_t *doc, const char *name)
{
        size_t i;
        json_t *m;

        json_array_foreach(json_object_get(doc, "modules"), i, m)
                if (streq(json_string_value(json_object_get(m, "module")), name))
                        return m;
        ck_abort_msg("no module %s in the report", name);
        return NULL;
}

static json_t *check_of(json_t *module, const char *id)
{
        size_t i;
        json_t *c;

        json_array_foreach(json_object_get(module, "checks"), i, c)
                if (streq(json_string_value(json_object_get(c, "id")), id))
                        return c;
        ck_abort_msg("no check %s", id);
        return NULL;
}

static void assert_check(json_t *module, const char *id, const char *status, const char *words)
{
        json_t *c = check_of(module, id);
        const char *s = json_string_value(json_object_get(c, "status"));
        const char *m = json_string_value(json_object_get(c, "message"));

        ck_assert_msg(streq(s, status), "%s is %s, not %s: %s", id, s, status, m);
        if (words)
                ck_assert_msg(strstr(m, words), "%s: '%s' not in: %s", id, words, m);
}

START_TEST(every_check_passes_on_a_working_toolkit_with_two_gpus)
{
        char *root = fake_site();
        _cleanup_free_ char *drv = path_join(root, "drv-two");
        struct run_result r = { 0 };
        json_t *doc, *m, *devs;

        validate(&r, root, (const char *const[]){ "--json", "--driver-libdir", drv, NULL });
        ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.err, r.out);
        doc = parse(&r);
        ck_assert_uint_eq(json_array_size(json_object_get(doc, "modules")), 1);
        m = module_of(doc, "cuda/12.4");
        ck_assert_str_eq(json_string_value(json_object_get(m, "status")), "pass");
        assert_check(m, "syntax", "pass", NULL);
        assert_check(m, "paths", "pass", NULL);
        assert_check(m, "closure", "pass", NULL);
        assert_check(m, "build", "pass", NULL);
        assert_check(m, "run", "pass", "12040");
        assert_check(m, "device", "pass", "Fake H100");
        ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(m, "device"), "driver_version")),
                         12080);
        devs = json_object_get(json_object_get(m, "device"), "devices");
        ck_assert_uint_eq(json_array_size(devs), 2);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 1), "name")), "Fake A100");
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 0), "compute_capability")),
                         "9.0");
        ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(devs, 0), "memory_mib")), 81559);
        json_decref(doc);
        run_result_release(&r);

        /* The human form: the verdict, the GPUs, the summary. */
        validate(&r, root, (const char *const[]){ "--driver-libdir", drv, NULL });
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "pass  cuda/12.4\n"));
        ck_assert_ptr_nonnull(strstr(r.out, "device  pass"));
        ck_assert_ptr_nonnull(strstr(r.out, "1 module: 1 pass, 0 warn, 0 fail\n"));
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(device_skips_without_a_driver_and_fails_when_required_or_too_old)
{
        char *root = fake_site();
        _cleanup_free_ char *old = path_join(root, "drv-old"), *none = path_join(root, "drv-none");
        struct run_result r = { 0 };
        json_t *doc;

        /* No driver anywhere (a machine without a GPU): skip, and the
         * module passes. */
        if (access("/dev/nvidiactl", F_OK) != 0) {
                validate(&r, root, (const char *const[]){ "--json", NULL });
                ck_assert_int_eq(r.status, 0);
                doc = parse(&r);
                assert_check(module_of(doc, "cuda/12.4"), "device", "skip", "no NVIDIA driver");
                json_decref(doc);
                run_result_release(&r);
        }

        /* A driver without GPUs: skip; fail with --require-device. */
        validate(&r, root, (const char *const[]){ "--json", "--driver-libdir", none, NULL });
        ck_assert_int_eq(r.status, 0);
        doc = parse(&r);
        assert_check(module_of(doc, "cuda/12.4"), "device", "skip", NULL);
        json_decref(doc);
        run_result_release(&r);
        validate(&r, root, (const char *const[]){ "--json", "--require-device", "--driver-libdir", none, NULL });
        ck_assert_int_eq(r.status, 1);
        doc = parse(&r);
        assert_check(module_of(doc, "cuda/12.4"), "device", "fail", NULL);
        ck_assert_str_eq(json_string_value(json_object_get(module_of(doc, "cuda/12.4"), "status")), "fail");
        json_decref(doc);
        run_result_release(&r);

        /* A driver for CUDA 11.4 under a 12.4 runtime: fail, saying what to do. */
        validate(&r, root, (const char *const[]){ "--json", "--driver-libdir", old, NULL });
        ck_assert_int_eq(r.status, 1);
        doc = parse(&r);
        assert_check(module_of(doc, "cuda/12.4"), "device", "fail", "11040");
        json_decref(doc);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(a_hand_edited_module_with_stubs_on_the_loader_path_fails_paths)
{
        char *root = fake_site();
        _cleanup_free_ char *file = path_join(root, "mf/Core/cuda/12.4.lua");
        _cleanup_free_ char *stubs = path_join(root, "sw/cuda-12.4/targets/x86_64-linux/lib/stubs");
        _cleanup_free_ char *line = xasprintf("prepend_path(\"LD_LIBRARY_PATH\", \"%s\")\n"
                                              "prepend_path(\"CPATH\", \"%s/gone\")\n", stubs, root);
        struct run_result r = { 0 };
        FILE *f = fopen(file, "a");
        json_t *doc;

        ck_assert_ptr_nonnull(f);
        fputs(line, f);
        fclose(f);
        validate(&r, root, (const char *const[]){ "--json", "--no-compile", NULL });
        ck_assert_int_eq(r.status, 1);
        doc = parse(&r);
        assert_check(module_of(doc, "cuda/12.4"), "paths", "fail", "is a stubs directory");
        assert_check(module_of(doc, "cuda/12.4"), "paths", "fail", "/gone does not exist");
        assert_check(module_of(doc, "cuda/12.4"), "build", "skip", NULL);
        json_decref(doc);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(a_launcher_that_cannot_start_fails_run_and_says_so)
{
        char *root = fake_site();
        struct run_result r = { 0 };
        json_t *doc;

        validate(&r, root, (const char *const[]){ "--json", "--no-compile", "--launcher",
                                                  "/nonexistent/srun -p 'gpu a100' --gres=gpu:1", NULL });
        ck_assert_int_eq(r.status, 1);
        doc = parse(&r);
        assert_check(module_of(doc, "cuda/12.4"), "run", "fail", "/nonexistent/srun");
        json_decref(doc);
        run_result_release(&r);

        /* One that works (env as a launcher) passes. */
        validate(&r, root, (const char *const[]){ "--json", "--no-compile", "--launcher", "env", NULL });
        doc = parse(&r);
        assert_check(module_of(doc, "cuda/12.4"), "run", "pass", NULL);
        json_decref(doc);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(usage_errors_exit_2)
{
        char *root = fake_site();
        static const char *const bad[][4] = {
                { "-j", "0", NULL },
                { "-j", "x", NULL },
                { "--timeout", "0", NULL },
                { "--driver-libdir", "/nonexistent/driver", NULL },
                { "--launcher", "srun 'unbalanced", NULL },
                { "nosuchmodule", NULL },
        };
        struct run_result r = { 0 };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                validate(&r, root, bad[i]);
                ck_assert_msg(r.status == 2, "%s %s: status %d", bad[i][0], bad[i][1] ? bad[i][1] : "",
                              r.status);
                ck_assert_str_eq(r.out, "");
                ck_assert_ptr_nonnull(strstr(r.err, "cudamod: "));
                run_result_release(&r);
        }
        fx_free(root);
}
END_TEST

/* -j changes the speed, not the report: eight copies of the fake cuda
 * module under other names (one with stubs on LD_LIBRARY_PATH, so that
 * the report is not all alike). */
START_TEST(parallel_runs_give_the_same_report)
{
        char *root = fake_site();
        _cleanup_free_ char *src = path_join(root, "mf/Core/cuda/12.4.lua");
        _cleanup_free_ char *mp = path_join(root, "many");
        _cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
        struct run_result r1 = { 0 }, r4 = { 0 };

        ck_assert_int_eq(strbuf_read_file(&text, src, 1 << 20), 0);
        for (int i = 0; i < 8; i++) {
                _cleanup_free_ char *rel = xasprintf("many/cuda%d/12.4.lua", i);
                _cleanup_free_ char *body = str_replace_all(text.buf, "prepend_path(\"MODULEPATH\"",
                                                            "append_path(\"UNUSED\"");
                _cleanup_free_ char *edited =
                        i == 3 ? str_replace_all(body, "lib/stubs\")", "lib/stubs\")\n"
                                                 "prepend_path(\"LD_LIBRARY_PATH\", \"/x/lib/stubs\")")
                               : xstrdup(body);

                fx_write(root, rel, edited);
        }
        run_cudamod(&r1, (const char *const[]){ "validate", "--no-compile", "--modulepath", mp, "-j", "1", NULL },
                    false);
        run_cudamod(&r4, (const char *const[]){ "validate", "--no-compile", "--modulepath", mp, "-j", "4", NULL },
                    false);
        ck_assert_int_eq(r1.status, 1);
        ck_assert_int_eq(r4.status, 1);
        ck_assert_msg(streq(r1.out, r4.out), "-j 1 and -j 4 differ:\n%.2000s\n---\n%.2000s", r1.out, r4.out);
        ck_assert_ptr_nonnull(strstr(r1.out, "fail  cuda3/12.4\n"));
        ck_assert_ptr_nonnull(strstr(r1.out, "pass  cuda7/12.4\n"));
        ck_assert_ptr_nonnull(strstr(r1.out, "8 modules: 7 pass, 0 warn, 1 fail\n"));
        run_result_release(&r1);
        run_result_release(&r4);
        fx_free(root);
}
END_TEST

/* With -j, a worker that dies takes only its module down: the launcher
 * below kills its parent (the worker) for the module that sets
 * CUDAMOD_TEST_KILL, and runs the probe for the others. */
START_TEST(a_dying_worker_fails_only_its_module)
{
        char *root = fake_site();
        _cleanup_free_ char *src = path_join(root, "mf/Core/cuda/12.4.lua");
        _cleanup_free_ char *mp = path_join(root, "many");
        _cleanup_free_ char *launcher = path_join(root, "killer.sh");
        _cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
        struct run_result r = { 0 };

        ck_assert_int_eq(strbuf_read_file(&text, src, 1 << 20), 0);
        for (int i = 0; i < 4; i++) {
                _cleanup_free_ char *rel = xasprintf("many/cuda%d/12.4.lua", i);
                _cleanup_free_ char *body = str_replace_all(text.buf, "prepend_path(\"MODULEPATH\"",
                                                            "append_path(\"UNUSED\"");
                _cleanup_free_ char *edited = xasprintf("%s%s", body,
                                                        i == 2 ? "setenv(\"CUDAMOD_TEST_KILL\", \"1\")\n" : "");

                fx_write(root, rel, edited);
        }
        fx_write(root, "killer.sh",
                 "#!/bin/sh\n"
                 "for a in \"$@\"; do [ \"$a\" = CUDAMOD_TEST_KILL=1 ] && { kill -9 $PPID; exit 1; }; done\n"
                 "exec \"$@\"\n");
        ck_assert_int_eq(chmod(launcher, 0755), 0);
        run_cudamod(&r, (const char *const[]){ "validate", "--no-compile", "--modulepath", mp, "-j", "2",
                                               "--launcher", launcher, NULL },
                    false);
        ck_assert_int_eq(r.status, 1);
        ck_assert_msg(strstr(r.out, "fail  cuda2/12.4\n"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "did not finish: killed by signal 9"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "4 modules: 3 pass, 0 warn, 1 fail\n"), "%s", r.out);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* The hierarchy: cuDNN and NCCL below each cuda, each loaded with it. */
START_TEST(the_hierarchy_is_walked)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "fx");
        _cleanup_free_ char *mp = path_join(out, "Core");
        const char *mk[] = { getenv("MKFIXTURE"), "demo", sw, NULL };
        struct run_result r = { 0 };
        json_t *doc, *m;

        ck_assert_ptr_nonnull(mk[0]);
        run_program(&r, NULL, mk, NULL);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "validate", "--json", "--no-compile", "--modulepath", mp,
                                               "cudnn", NULL },
                    false);
        doc = parse(&r);
        ck_assert_uint_eq(json_array_size(json_object_get(doc, "modules")), 2);
        m = module_of(doc, "cudnn/9.7.1");
        ck_assert_str_eq(json_string_value(json_array_get(json_object_get(m, "with"), 0)), "cuda/12.9");
        assert_check(m, "syntax", "pass", NULL);
        assert_check(m, "paths", "pass", NULL);
        m = module_of(doc, "cudnn/8.9.7");
        ck_assert_str_eq(json_string_value(json_array_get(json_object_get(m, "with"), 0)), "cuda/11.8");
        json_decref(doc);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* A module that does not parse fails syntax with its file and line, and
 * every other check is skipped. */
START_TEST(a_broken_modulefile_fails_syntax_with_file_and_line)
{
        char *root = fake_site();
        _cleanup_free_ char *file = path_join(root, "mf/Core/cuda/12.4.lua");
        struct run_result r = { 0 };
        json_t *doc, *m;
        size_t i;
        json_t *c;
        FILE *f = fopen(file, "a");

        ck_assert_ptr_nonnull(f);
        fputs("setenv(\"BROKEN\"\n", f);
        fclose(f);
        validate(&r, root, (const char *const[]){ "--json", NULL });
        ck_assert_int_eq(r.status, 1);
        doc = parse(&r);
        m = module_of(doc, "cuda/12.4");
        assert_check(m, "syntax", "fail", "12.4.lua:");
        json_array_foreach(json_object_get(m, "checks"), i, c)
                if (i > 0)
                        ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "skip");
        json_decref(doc);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* A Tcl tree goes through the real module tool (Lmod's lmod, or
 * Environment Modules when MODULES_CMD names it). */
START_TEST(a_tcl_tree_validates_through_the_module_tool)
{
        const char *em = getenv("MODULES_CMD");
        char *root;
        _cleanup_free_ char *out = NULL, *sw = NULL, *mp = NULL, *drv = NULL;
        struct run_result r = { 0 };
        json_t *doc, *m;

        if (!(em && *em) && access("/usr/share/lmod/lmod/libexec/lmod", X_OK) != 0) {
                ck_assert_msg(!getenv("CUDAMOD_REQUIRE_MODULE_TOOLS"),
                              "CUDAMOD_REQUIRE_MODULE_TOOLS is set and no module tool is installed");
                fprintf(stderr, "SKIP a_tcl_tree_validates_through_the_module_tool: no module tool\n");
                return;
        }
        root = fake_site();
        out = path_join(root, "tcl");
        sw = path_join(root, "sw");
        mp = path_join(out, "Core");
        drv = path_join(root, "drv-two");
        run_cudamod(&r, (const char *const[]){ "generate", "--format", "tcl", "-o", out, sw, NULL }, false);
        ck_assert_msg(r.status == 0, "generate: %s", r.err);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "validate", "--json", "--driver-libdir", drv, "--modulepath", mp,
                                               NULL },
                    false);
        ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.err, r.out);
        doc = parse(&r);
        m = module_of(doc, "cuda/12.4");
        assert_check(m, "syntax", "pass", "Tcl");
        assert_check(m, "closure", "pass", NULL);
        assert_check(m, "build", "pass", NULL);
        assert_check(m, "run", "pass", "12040");
        assert_check(m, "device", "pass", "Fake A100");
        json_decref(doc);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* The real NVIDIA libraries, when this machine has them (ISSUE 4 item 7). */
START_TEST(the_real_cuda_13_install_validates)
{
        const char *cuda = "/usr/local/cuda-13.0";
        _cleanup_free_ char *lib = path_join(cuda, "lib/libcudart.so.13");
        char *root;
        _cleanup_free_ char *out = NULL, *mp = NULL;
        struct run_result r = { 0 };
        json_t *doc, *m;
        size_t i;

        if (access(lib, R_OK) != 0) {
                fprintf(stderr, "SKIP the_real_cuda_13_install_validates: no %s\n", lib);
                return;
        }
        root = fx_new();
        out = path_join(root, "mf");
        mp = path_join(out, "Core");
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, cuda, NULL }, false);
        ck_assert_msg(r.status == 0, "generate: %s", r.err);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "validate", "--json", "--modulepath", mp, NULL }, false);
        doc = parse(&r);
        json_array_foreach(json_object_get(doc, "modules"), i, m) {
                static const char *const ids[] = { "syntax", "paths", "closure", "build", "run" };
                const char *name = json_string_value(json_object_get(m, "module"));

                for (size_t k = 0; k < ELEMENTSOF(ids); k++)
                        assert_check(m, ids[k], "pass", NULL);
                ck_assert_msg(!streq(json_string_value(json_object_get(check_of(m, "lazy"), "status")), "fail"),
                              "%s: lazy failed", name);
                /* no driver on these machines: skip (a GPU machine: pass) */
                if (access("/dev/nvidiactl", F_OK) != 0)
                        assert_check(m, "device", "skip", NULL);
                if (startswith(name, "cuda/"))
                        assert_check(m, "run", "pass", "(13000)");
                else if (startswith(name, "cudnn/"))
                        assert_check(m, "run", "pass", "(91900)");
                else if (startswith(name, "nccl/"))
                        assert_check(m, "run", "pass", "(22809)");
        }
        ck_assert_uint_eq(json_array_size(json_object_get(doc, "modules")), 3);
        ck_assert_int_eq(r.status, 0);
        json_decref(doc);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("validate");
        TCase *tc = tcase_create("validate");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, every_check_passes_on_a_working_toolkit_with_two_gpus);
        tcase_add_test(tc, device_skips_without_a_driver_and_fails_when_required_or_too_old);
        tcase_add_test(tc, a_hand_edited_module_with_stubs_on_the_loader_path_fails_paths);
        tcase_add_test(tc, a_launcher_that_cannot_start_fails_run_and_says_so);
        tcase_add_test(tc, usage_errors_exit_2);
        tcase_add_test(tc, parallel_runs_give_the_same_report);
        tcase_add_test(tc, a_dying_worker_fails_only_its_module);
        tcase_add_test(tc, the_hierarchy_is_walked);
        tcase_add_test(tc, a_broken_modulefile_fails_syntax_with_file_and_line);
        tcase_add_test(tc, a_tcl_tree_validates_through_the_module_tool);
        tcase_add_test(tc, the_real_cuda_13_install_validates);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
