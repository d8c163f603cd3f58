/* test-validate.c: `cudamod validate` end to end, as an admin runs it:
 * generate a tree, validate it, read the verdicts (human and JSON). The
 * checks one by one are test-validate-elf.c and test-validate-probe.c;
 * here a fake toolkit whose libcudart is real code (tests/fakecuda) goes
 * through every check, with the fake drivers, a hand-edited module, a
 * broken launcher, -j, and the real CUDA 13.0 install when there is one.
 * Targets (validate.targets, --target, --arch-list) use `env` as a
 * launcher, so they are tested where Slurm is not (tests/slurm has the
 * real one); what validate records, generate reads (cuda_arch_list:
 * detect). */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "layouts.h"
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

/* Run validate on root/mf/Core with extra arguments, reading the site
 * config root/CONFIG when config is not NULL. */
static void validate_with(struct run_result *r, const char *root, const char *config, const char *const *extra)
{
        _cleanup_free_ char *mp = path_join(root, "mf/Core");
        _cleanup_free_ char *cfg = config ? path_join(root, config) : NULL;
        const char *argv[26];
        size_t n = 0;

        if (cfg) {
                argv[n++] = "--config";
                argv[n++] = cfg;
        }
        argv[n++] = "validate";
        argv[n++] = "--modulepath";
        argv[n++] = mp;
        for (; extra && *extra && n < ELEMENTSOF(argv) - 1; extra++)
                argv[n++] = *extra;
        argv[n] = NULL;
        run_cudamod(r, argv, false);
}

static void validate(struct run_result *r, const char *root, const char *const *extra)
{
        validate_with(r, root, NULL, extra);
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

/* The object of the array doc[array] whose member key is name, or NULL. */
static json_t *find_named(json_t *doc, const char *array, const char *key, const char *name)
{
        size_t i;
        json_t *m;

        json_array_foreach(json_object_get(doc, array), i, m)
                if (streq(json_string_value(json_object_get(m, key)), name))
                        return m;
        return NULL;
}

static json_t *module_of(json_t *doc, const char *name)
{
        json_t *m = find_named(doc, "modules", "module", name);

        ck_assert_msg(m, "no module %s in the report", name);
        return m;
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

/* The cusparselt-wheels fixture (the cu12 wheel's header beside the cu13
 * wheel's library, which has none: a runtime install) with a CUDA 13.0
 * toolkit, its library the fake cuSPARSELt 0.8.1 (its RECORD written
 * again for it): the build check skips the runtime-only module with the
 * reason, the run check loads its library and passes without a header.
 * (No driver is given: the device check is not what this is about.) */
START_TEST(a_runtime_only_module_skips_build_and_runs)
{
        char *root = fx_new();
        const char *site = "venv/lib/python3.12/site-packages";
        const char *lib = "nvidia/cusparselt/lib/libcusparseLt.so.0";
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw"), *venv = path_join(root, "venv");
        _cleanup_free_ char *so = xasprintf("%s/%s", site, lib);
        struct run_result r = { 0 };
        json_t *doc, *m;

        fx_cuda_toolkit(root, "sw/cuda-13.0",
                        &(struct fx_cuda){ .version = "13.0", .release = "13.0.0", .cudart = "13.0.48",
                                           .nvcc = "13.0.48" });
        fx_fake_library(root, "sw/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13.0.48", "CUDART13");
        fx_write(root, "sw/cuda-13.0/targets/x86_64-linux/include/cuda_runtime_api.h",
                 "#define CUDART_VERSION 13000\nint cudaRuntimeGetVersion(int *v);\n");
        layout_fixture_find("cusparselt-wheels")->build(root);
        fx_fake_library(root, so, "CUSPARSELT");
        fx_wheel_record(root, site, "nvidia-cusparselt-cu13", "0.8.1", (const char *const[]){ lib, NULL });
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, venv, NULL }, false);
        ck_assert_msg(r.status == 0, "generate failed: %s", r.err);
        run_result_release(&r);

        validate(&r, root, (const char *const[]){ "--json", NULL });
        doc = parse(&r);
        m = module_of(doc, "cusparselt/0.8.1");
        assert_check(m, "build", "skip", "runtime-only: no header; a build cannot use it");
        assert_check(m, "run", "pass", "0.8.1");
        assert_check(m, "run", "pass", "a runtime-only install has none");
        assert_check(m, "closure", "pass", NULL);
        /* The toolkit's own module still builds. */
        assert_check(module_of(doc, "cuda/13.0"), "build", "pass", NULL);
        json_decref(doc);
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

/* --- targets ------------------------------------------------------------ */

/* Three targets: two whose launcher (env) works, one whose cannot start. */
static const char TARGETS[] = "validate:\n"
                              "  targets:\n"
                              "    - { name: one, launcher: env }\n"
                              "    - { name: two, launcher: 'env A=1' }\n"
                              "    - { name: broken, launcher: '/nonexistent/srun -p x' }\n";

/* fake_site with TARGETS in root/targets.yaml. */
static char *fake_site_with_targets(void)
{
        char *root = fake_site();

        fx_write(root, "targets.yaml", TARGETS);
        return root;
}

static json_t *target_of(json_t *doc, const char *name)
{
        json_t *t = find_named(doc, "targets", "name", name);

        ck_assert_msg(t, "no target %s in the report", name);
        return t;
}

/* The check id of module run through target. */
static json_t *check_on(json_t *module, const char *id, const char *target)
{
        size_t i;
        json_t *c;

        json_array_foreach(json_object_get(module, "checks"), i, c)
                if (streq(json_string_value(json_object_get(c, "id")), id) &&
                    streq(json_string_value(json_object_get(c, "target")), target))
                        return c;
        ck_abort_msg("no check %s on target %s", id, target);
        return NULL;
}

static void assert_strings(json_t *array, const char *const *want)
{
        size_t n = 0;

        for (; want[n]; n++) {
                const char *got = json_string_value(json_array_get(array, n));

                ck_assert_msg(got && streq(got, want[n]), "word %zu: '%s', not '%s'", n, got, want[n]);
        }
        ck_assert_uint_eq(json_array_size(array), n);
}

/* What a target showed through drv-two: the driver and both GPUs. */
static void assert_two_gpus(json_t *t)
{
        json_t *devs = json_object_get(t, "devices");

        ck_assert_int_eq(json_integer_value(json_object_get(t, "driver_version")), 12080);
        ck_assert_uint_eq(json_array_size(devs), 2);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 0), "name")), "Fake H100");
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 0), "compute_capability")), "9.0");
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 1), "name")), "Fake A100");
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 1), "compute_capability")), "8.0");
}

START_TEST(each_target_gets_a_cell_and_a_broken_launcher_fails_the_target_not_the_module)
{
        char *root = fake_site_with_targets();
        _cleanup_free_ char *drv = path_join(root, "drv-two");
        static const char *const names[] = { "one", "two", "broken" };
        static const char *const statuses[] = { "ok", "ok", "launcher-failed" };
        struct run_result r = { 0 };
        json_t *doc, *targets, *m, *cells, *c;
        size_t i;

        validate_with(&r, root, "targets.yaml", (const char *const[]){ "--json", "--no-compile", "--driver-libdir",
                                                                        drv, NULL });
        /* Every module passed, but a launcher failed. */
        ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
        doc = parse(&r);

        /* The targets, in the config's order. */
        targets = json_object_get(doc, "targets");
        ck_assert_uint_eq(json_array_size(targets), 3);
        for (i = 0; i < ELEMENTSOF(names); i++) {
                json_t *t = json_array_get(targets, i);

                ck_assert_str_eq(json_string_value(json_object_get(t, "name")), names[i]);
                ck_assert_msg(streq(json_string_value(json_object_get(t, "status")), statuses[i]),
                              "target %s is %s", names[i], json_string_value(json_object_get(t, "status")));
        }
        assert_strings(json_object_get(target_of(doc, "one"), "launcher"), (const char *const[]){ "env", NULL });
        assert_strings(json_object_get(target_of(doc, "two"), "launcher"),
                       (const char *const[]){ "env", "A=1", NULL });
        assert_strings(json_object_get(target_of(doc, "broken"), "launcher"),
                       (const char *const[]){ "/nonexistent/srun", "-p", "x", NULL });
        ck_assert_msg(strstr(json_string_value(json_object_get(target_of(doc, "broken"), "message")) ?: "",
                             "/nonexistent/srun"),
                      "broken: %s", json_string_value(json_object_get(target_of(doc, "broken"), "message")));
        assert_two_gpus(target_of(doc, "one"));
        assert_two_gpus(target_of(doc, "two"));
        ck_assert_uint_eq(json_array_size(json_object_get(target_of(doc, "broken"), "devices")), 0);
        for (i = 0; i < 2; i++) {
                const char *host = json_string_value(json_object_get(target_of(doc, names[i]), "host"));

                ck_assert_msg(host && *host, "target %s: no host", names[i]);
        }
        ck_assert_str_eq(json_string_value(json_object_get(doc, "arch_list")), "8.0;9.0");

        /* The module: one cell per target; the broken target is not the
         * module's failure. */
        m = module_of(doc, "cuda/12.4");
        ck_assert_str_eq(json_string_value(json_object_get(m, "status")), "pass");
        cells = json_object_get(m, "targets");
        ck_assert_uint_eq(json_object_size(cells), 3);
        ck_assert_str_eq(json_string_value(json_object_get(cells, "one")), "pass");
        ck_assert_str_eq(json_string_value(json_object_get(cells, "two")), "pass");
        ck_assert_str_eq(json_string_value(json_object_get(cells, "broken")), "launcher-failed");

        /* run and device once per target, saying which; the others once. */
        for (i = 0; i < 2; i++) {
                c = check_on(m, "run", names[i]);
                ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "pass");
                ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(c, "message")), "12040"));
                c = check_on(m, "device", names[i]);
                ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "pass");
                ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(c, "message")), "Fake A100"));
        }
        c = check_on(m, "run", "broken");
        ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "fail");
        ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(c, "message")), "/nonexistent/srun"));
        check_on(m, "device", "broken");
        ck_assert_uint_eq(json_array_size(json_object_get(m, "checks")), 7 + 2 * 3);
        json_array_foreach(json_object_get(m, "checks"), i, c) {
                const char *id = json_string_value(json_object_get(c, "id"));

                ck_assert_msg((streq(id, "run") || streq(id, "device")) == json_is_string(json_object_get(c, "target")),
                              "check %s: \"target\" where it does not belong, or missing", id);
        }
        json_decref(doc);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(target_keeps_the_named_targets_and_rejects_unknown_ones)
{
        char *root = fake_site_with_targets();
        _cleanup_free_ char *drv = path_join(root, "drv-two");
        struct run_result r = { 0 };
        json_t *doc, *cells;

        /* One target, whose launcher works: nothing failed. */
        validate_with(&r, root, "targets.yaml",
                      (const char *const[]){ "--json", "--no-compile", "--driver-libdir", drv, "--target", "one",
                                             NULL });
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        doc = parse(&r);
        ck_assert_uint_eq(json_array_size(json_object_get(doc, "targets")), 1);
        ck_assert_str_eq(json_string_value(json_object_get(target_of(doc, "one"), "status")), "ok");
        cells = json_object_get(module_of(doc, "cuda/12.4"), "targets");
        ck_assert_uint_eq(json_object_size(cells), 1);
        ck_assert_str_eq(json_string_value(json_object_get(cells, "one")), "pass");
        json_decref(doc);
        run_result_release(&r);

        /* A name the config lacks: a usage error naming it and the ones
         * there are. */
        validate_with(&r, root, "targets.yaml", (const char *const[]){ "--json", "--target", "nosuch", NULL });
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strstr(r.err, "nosuch") && strstr(r.err, "one, two, broken"), "%s", r.err);
        run_result_release(&r);

        /* --launcher is a target of its own: not with --target. */
        validate_with(&r, root, "targets.yaml",
                      (const char *const[]){ "--json", "--launcher", "env", "--target", "one", NULL });
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strstr(r.err, "--launcher") && strstr(r.err, "--target"), "%s", r.err);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(arch_list_prints_the_gpus_compute_capabilities_only)
{
        char *root = fake_site_with_targets();
        _cleanup_free_ char *two = path_join(root, "drv-two"), *none = path_join(root, "drv-none");
        struct run_result r = { 0 };

        /* This machine, and a configured target: the same list, sorted. */
        validate(&r, root, (const char *const[]){ "--arch-list", "--no-compile", "--driver-libdir", two, NULL });
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        ck_assert_str_eq(r.out, "8.0;9.0\n");
        run_result_release(&r);
        validate_with(&r, root, "targets.yaml",
                      (const char *const[]){ "--arch-list", "--no-compile", "--driver-libdir", two, "--target", "two",
                                             NULL });
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        ck_assert_str_eq(r.out, "8.0;9.0\n");
        run_result_release(&r);

        /* No GPU seen: no list, and a failure saying so. */
        validate(&r, root, (const char *const[]){ "--arch-list", "--no-compile", "--driver-libdir", none, NULL });
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strstr(r.err, "no GPU"), "%s", r.err);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* The line of text that starts with prefix, without its newline. */
static char *line_starting(const char *text, const char *prefix)
{
        for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (startswith(p, prefix))
                        return xstrndup(p, strcspn(p, "\n"));
        ck_abort_msg("no line starting with '%s' in:\n%s", prefix, text);
        return NULL;
}

/* The words of a line, blanks squeezed: "a  b " -> "a b". */
static char *squeeze(const char *line)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        for (const char *p = line; *p; p++)
                if (*p != ' ' || (sb.len && sb.buf[sb.len - 1] != ' '))
                        strbuf_addch(&sb, *p);
        if (sb.len && sb.buf[sb.len - 1] == ' ')
                sb.buf[--sb.len] = '\0';
        return strbuf_detach(&sb);
}

START_TEST(several_targets_print_a_matrix_and_what_each_target_saw)
{
        char *root = fake_site_with_targets();
        _cleanup_free_ char *drv = path_join(root, "drv-two");
        _cleanup_free_ char *header = NULL, *row = NULL, *h = NULL, *w = NULL;
        struct run_result r = { 0 };

        validate_with(&r, root, "targets.yaml", (const char *const[]){ "--no-compile", "--driver-libdir", drv, NULL });
        ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
        header = line_starting(r.out, "module ");
        row = line_starting(r.out, "cuda/12.4 ");
        h = squeeze(header);
        w = squeeze(row);
        ck_assert_str_eq(h, "module one two broken");
        ck_assert_str_eq(w, "cuda/12.4 pass pass launcher-failed");
        /* The matrix's columns line up under the targets' names. */
        ck_assert_uint_eq(strstr(row, "launcher-failed") - row, strstr(header, "broken") - header);
        ck_assert_msg(strstr(r.out, "pass  cuda/12.4\n"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "run@broken"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "target one (env): driver 12080"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "target two (env A=1): driver 12080"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "2 GPUs\n    GPU 0: Fake H100, compute capability 9.0, 81559 MiB\n"
                                    "    GPU 1: Fake A100, compute capability 8.0, 40536 MiB\n"),
                      "%s", r.out);
        ck_assert_msg(strstr(r.out, "target broken (/nonexistent/srun -p x): the launcher failed"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "TORCH_CUDA_ARCH_LIST for the GPUs seen: 8.0;9.0\n"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "1 module: 1 pass, 0 warn, 0 fail; 3 targets, 1 whose launcher failed\n"), "%s",
                      r.out);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* --- what validate records, and generate reads --------------------------- */

/* The "validation" member of root/mf's index (a new reference), or NULL. */
static json_t *recorded(const char *root)
{
        _cleanup_free_ char *path = path_join(root, "mf/.cudamod-index.json");
        json_error_t e;
        json_t *index = json_load_file(path, 0, &e), *v;

        ck_assert_msg(index != NULL, "'%s': %s", path, e.text);
        v = json_incref(json_object_get(index, "validation"));
        json_decref(index);
        return v;
}

static json_t *recorded_target(json_t *v, const char *name)
{
        return find_named(v, "targets", "name", name);
}

/* generate into root/mf again, with the site config root/CONFIG. */
static void generate_with(struct run_result *r, const char *root, const char *config)
{
        _cleanup_free_ char *cfg = path_join(root, config);
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");

        run_cudamod(r, (const char *const[]){ "--config", cfg, "generate", "-o", out, sw, NULL }, false);
}

static char *cuda_modulefile(const char *root)
{
        _cleanup_free_ char *path = path_join(root, "mf/Core/cuda/12.4.lua");
        struct strbuf sb = STRBUF_INIT;

        ck_assert_int_eq(strbuf_read_file(&sb, path, 1 << 20), 0);
        return strbuf_detach(&sb);
}

/* Recording the results waits for the output directory's lock: validate
 * says so on stderr, naming the holder, and --lock-timeout ends the wait
 * with exit 1 and the holder's PID. */
START_TEST(validate_says_when_it_waits_for_the_lock)
{
        char *root = fake_site_with_targets();
        _cleanup_free_ char *two = path_join(root, "drv-two"), *lock = path_join(root, "mf/.cudamod.lock");
        _cleanup_free_ char *waits = NULL, *gave_up = NULL;
        struct run_result r = { 0 };
        int status;
        pid_t pid;

        pid = hold_lock(lock);
        validate_with(&r, root, "targets.yaml", (const char *const[]){ "--json", "--no-compile", "--driver-libdir",
                                                                        two, "--target", "one", "--lock-timeout",
                                                                        "1", NULL });
        kill(pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        waits = xasprintf("'%s' is locked by PID %ld (", lock, (long)pid);
        gave_up = xasprintf("the validation results were not recorded: '%s' is still locked by PID %ld (", lock,
                            (long)pid);
        ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
        ck_assert_msg(strstr(r.err, waits) && strstr(r.err, "; waiting (at most 1 s, --lock-timeout)"), "%s", r.err);
        ck_assert_msg(strstr(r.err, gave_up), "%s", r.err);
        ck_assert_msg(!strstr(r.err, "another cudamod run"), "%s", r.err);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(a_validation_is_recorded_and_generate_detects_the_arch_list_from_it)
{
        char *root = fake_site_with_targets();
        _cleanup_free_ char *two = path_join(root, "drv-two"), *none = path_join(root, "drv-none");
        _cleanup_free_ char *old = path_join(root, "drv-old"), *text = NULL;
        struct run_result r = { 0 };
        json_t *v, *again, *t;
        const char *time;

        validate_with(&r, root, "targets.yaml", (const char *const[]){ "--json", "--no-compile", "--driver-libdir",
                                                                        two, NULL });
        ck_assert_int_eq(r.status, 1);
        run_result_release(&r);

        /* What the targets that ran showed; not the broken one. */
        v = recorded(root);
        ck_assert_msg(json_is_object(v), "no validation recorded in the index");
        ck_assert_str_eq(json_string_value(json_object_get(v, "arch_list")), "8.0;9.0");
        time = json_string_value(json_object_get(v, "time"));
        ck_assert_msg(time && strlen(time) == 20 && time[4] == '-' && time[10] == 'T' && time[19] == 'Z',
                      "time: '%s'", time);
        ck_assert_uint_eq(json_array_size(json_object_get(v, "targets")), 2);
        assert_two_gpus(recorded_target(v, "one"));
        assert_two_gpus(recorded_target(v, "two"));
        ck_assert_ptr_null(recorded_target(v, "broken"));

        /* generate with cuda_arch_list: detect takes the list and keeps
         * the record. */
        fx_write(root, "detect.yaml", "pytorch:\n  cuda_arch_list: detect\n");
        generate_with(&r, root, "detect.yaml");
        ck_assert_msg(r.status == 0, "generate: %s", r.err);
        run_result_release(&r);
        text = cuda_modulefile(root);
        ck_assert_msg(strstr(text, "setenv(\"TORCH_CUDA_ARCH_LIST\", \"8.0;9.0\")"), "%s", text);
        again = recorded(root);
        ck_assert_msg(json_equal(v, again), "generate changed or dropped the validation");
        json_decref(again);

        /* A later validation where no driver answers (a login node)
         * records nothing: the index is left as it was. */
        validate_with(&r, root, "targets.yaml", (const char *const[]){ "--json", "--no-compile", "--target", "one",
                                                                        NULL });
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        run_result_release(&r);
        again = recorded(root);
        ck_assert_msg(json_equal(v, again), "a validation where no driver answered changed the record");
        json_decref(again);

        /* A driver that answers with no GPU replaces that target's entry. */
        validate_with(&r, root, "targets.yaml", (const char *const[]){ "--json", "--no-compile", "--driver-libdir",
                                                                        none, "--target", "one", NULL });
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        run_result_release(&r);
        again = recorded(root);
        t = recorded_target(again, "one");
        ck_assert_ptr_nonnull(t);
        ck_assert_uint_eq(json_array_size(json_object_get(t, "devices")), 0);
        assert_two_gpus(recorded_target(again, "two"));
        ck_assert_str_eq(json_string_value(json_object_get(again, "arch_list")), "8.0;9.0");
        json_decref(again);

        /* One through a target that sees another GPU: that target's entry
         * is replaced, the other's kept, and the list is of both. */
        validate_with(&r, root, "targets.yaml", (const char *const[]){ "--json", "--no-compile", "--driver-libdir",
                                                                        old, "--target", "one", NULL });
        ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err); /* the driver is too old */
        run_result_release(&r);
        json_decref(v);
        v = recorded(root);
        ck_assert_uint_eq(json_array_size(json_object_get(v, "targets")), 2);
        t = recorded_target(v, "one");
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(json_integer_value(json_object_get(t, "driver_version")), 11040);
        ck_assert_uint_eq(json_array_size(json_object_get(t, "devices")), 1);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(t, "devices"), 0),
                                                           "compute_capability")),
                         "6.1");
        assert_two_gpus(recorded_target(v, "two"));
        ck_assert_str_eq(json_string_value(json_object_get(v, "arch_list")), "6.1;8.0;9.0");
        json_decref(v);
        fx_free(root);
}
END_TEST

START_TEST(generate_detect_without_a_recorded_gpu_warns_and_sets_no_arch_list)
{
        char *root = fake_site();
        _cleanup_free_ char *none = path_join(root, "drv-none");
        struct run_result r = { 0 };

        fx_write(root, "detect.yaml", "pytorch:\n  cuda_arch_list: detect\n");
        for (int validated = 0; validated <= 1; validated++) {
                _cleanup_free_ char *text = NULL;
                json_t *v;

                /* First nothing validated; then a validation whose driver
                 * shows no GPU: recorded, with no arch list. */
                if (validated) {
                        validate(&r, root, (const char *const[]){ "--no-compile", "--driver-libdir", none, NULL });
                        ck_assert_int_eq(r.status, 0);
                        run_result_release(&r);
                }
                v = recorded(root);
                ck_assert_msg(validated ? v && json_is_null(json_object_get(v, "arch_list")) : !v,
                              "the record after %s validation", validated ? "a GPU-less" : "no");
                json_decref(v);
                generate_with(&r, root, "detect.yaml");
                ck_assert_msg(r.status == 0, "generate: %s", r.err);
                ck_assert_msg(strstr(r.err, "cuda_arch_list is 'detect'") && strstr(r.err, "cudamod validate"),
                              "no warning: '%s'", r.err);
                run_result_release(&r);
                text = cuda_modulefile(root);
                ck_assert_msg(!strstr(text, "TORCH_CUDA_ARCH_LIST"), "%s", text);
        }
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

/* Without --modulepath: the output of the config file given beats an
 * unrelated MODULEPATH; a modulepath that does not exist is a usage error
 * and one without modules a failure, never a silent pass. */
START_TEST(modulepath_default_and_empty_modulepaths)
{
        char *root = fake_site();
        _cleanup_free_ char *cfg = path_join(root, "out.yaml"), *empty = path_join(root, "empty");
        _cleanup_free_ char *text = xasprintf("output: %s/mf\n", root);
        const char *old = getenv("MODULEPATH");
        _cleanup_free_ char *saved = old ? xstrdup(old) : NULL;
        struct run_result r = { 0 };
        json_t *doc;

        fx_write(root, "out.yaml", text);
        fx_mkdir(root, "empty");
        ck_assert_int_eq(setenv("MODULEPATH", empty, 1), 0);
        run_cudamod(&r, (const char *const[]){ "--config", cfg, "validate", "--no-compile", "--json", NULL }, false);
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        doc = parse(&r);
        module_of(doc, "cuda/12.4");
        json_decref(doc);
        run_result_release(&r);

        /* MODULEPATH alone, empty: exit 1 and a message. */
        run_cudamod(&r, (const char *const[]){ "validate", "--no-compile", NULL }, false);
        ck_assert_msg(r.status == 1 && strstr(r.err, "no modules in the modulepath"), "status %d: %s", r.status,
                      r.err);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "validate", "--modulepath", "/nonexistent/mf", NULL }, false);
        ck_assert_msg(r.status == 2 && strstr(r.err, "'/nonexistent/mf' does not exist"), "status %d: %s",
                      r.status, r.err);
        run_result_release(&r);
        if (saved)
                setenv("MODULEPATH", saved, 1);
        else
                unsetenv("MODULEPATH");
        fx_free(root);
}
END_TEST

/* -j changes the speed, not the report: eight copies of the fake cuda
 * module under other names (one with stubs on LD_LIBRARY_PATH, so that
 * the report is not all alike). */
/* "pass" needs evidence: beside the working cuda module, a cudnn module
 * that points at no library (nothing substantive can run: unchecked, exit
 * 0, 1 with --strict) and a gcc module (not of the CUDA stack: not
 * checked, whatever --strict). */
START_TEST(pass_needs_evidence_unchecked_and_not_checked_are_apart)
{
        char *root = fake_site();
        _cleanup_free_ char *cudnn = xasprintf("setenv(\"CUDNN_ROOT\", \"%s/sw/empty\")\n", root);
        _cleanup_free_ char *gcc = xasprintf("prepend_path(\"PATH\", \"%s/sw/gcc/bin\")\n", root);
        struct run_result r = { 0 };
        json_t *doc;

        fx_mkdir(root, "sw/empty");
        fx_mkdir(root, "sw/gcc/bin");
        fx_write(root, "mf/Core/cudnn/9.0.lua", cudnn);
        fx_write(root, "mf/Core/gcc/12.lua", gcc);
        validate(&r, root, (const char *const[]){ "--json", NULL });
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        doc = parse(&r);
        ck_assert_str_eq(json_string_value(json_object_get(module_of(doc, "cuda/12.4"), "status")), "pass");
        ck_assert_str_eq(json_string_value(json_object_get(module_of(doc, "cudnn/9.0"), "status")), "unchecked");
        ck_assert_str_eq(json_string_value(json_object_get(module_of(doc, "gcc/12"), "status")), "not-checked");
        json_decref(doc);
        run_result_release(&r);

        validate(&r, root, NULL);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.out, "unchecked  cudnn/9.0\n"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "not checked  gcc/12\n"), "%s", r.out);
        ck_assert_msg(strstr(r.out, "3 modules: 1 pass, 0 warn, 0 fail, 1 unchecked (nothing could be checked), "
                                    "1 not checked (not of the CUDA stack)\n"), "%s", r.out);
        run_result_release(&r);

        validate(&r, root, (const char *const[]){ "--strict", NULL });
        ck_assert_int_eq(r.status, 1);
        run_result_release(&r);
        validate(&r, root, (const char *const[]){ "--strict", "cuda", "gcc", NULL });
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

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

/* A Tcl tree is evaluated in the Tcl safe interpreter (tclsh), not by a
 * module tool. */
START_TEST(a_tcl_tree_validates_in_the_safe_interpreter)
{
        char *root;
        _cleanup_free_ char *out = NULL, *sw = NULL, *mp = NULL, *drv = NULL;
        struct run_result r = { 0 };
        json_t *doc, *m;

        if (system("command -v tclsh >/dev/null 2>&1") != 0) {
                ck_assert_msg(!getenv("CUDAMOD_REQUIRE_MODULE_TOOLS"),
                              "CUDAMOD_REQUIRE_MODULE_TOOLS is set and tclsh is not installed");
                fprintf(stderr, "SKIP a_tcl_tree_validates_in_the_safe_interpreter: no tclsh\n");
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
        assert_check(m, "syntax", "pass", "Tcl safe interpreter");
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
                if (startswith(name, "cuda/")) {
                        assert_check(m, "run", "pass", "(13000)");
                        /* nvcc built and started a .cu program; CMake found this toolkit. */
                        assert_check(m, "nvcc", "pass", "cudaGetDeviceCount");
                        if (access("/usr/bin/cmake", X_OK) == 0)
                                assert_check(m, "cmake", "pass", "/usr/local/cuda-13.0/bin/nvcc");
                } else
                        assert_check(m, "nvcc", "skip", NULL);
                if (startswith(name, "cudnn/"))
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
        tcase_add_test(tc, pass_needs_evidence_unchecked_and_not_checked_are_apart);
        tcase_add_test(tc, device_skips_without_a_driver_and_fails_when_required_or_too_old);
        tcase_add_test(tc, a_hand_edited_module_with_stubs_on_the_loader_path_fails_paths);
        tcase_add_test(tc, a_launcher_that_cannot_start_fails_run_and_says_so);
        tcase_add_test(tc, each_target_gets_a_cell_and_a_broken_launcher_fails_the_target_not_the_module);
        tcase_add_test(tc, target_keeps_the_named_targets_and_rejects_unknown_ones);
        tcase_add_test(tc, arch_list_prints_the_gpus_compute_capabilities_only);
        tcase_add_test(tc, several_targets_print_a_matrix_and_what_each_target_saw);
        tcase_add_test(tc, a_validation_is_recorded_and_generate_detects_the_arch_list_from_it);
        tcase_add_test(tc, validate_says_when_it_waits_for_the_lock);
        tcase_add_test(tc, generate_detect_without_a_recorded_gpu_warns_and_sets_no_arch_list);
        tcase_add_test(tc, usage_errors_exit_2);
        tcase_add_test(tc, modulepath_default_and_empty_modulepaths);
        tcase_add_test(tc, parallel_runs_give_the_same_report);
        tcase_add_test(tc, a_dying_worker_fails_only_its_module);
        tcase_add_test(tc, the_hierarchy_is_walked);
        tcase_add_test(tc, a_broken_modulefile_fails_syntax_with_file_and_line);
        tcase_add_test(tc, a_tcl_tree_validates_in_the_safe_interpreter);
        tcase_add_test(tc, the_real_cuda_13_install_validates);
        tcase_add_test(tc, a_runtime_only_module_skips_build_and_runs);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
