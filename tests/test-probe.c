/* test-probe.c: cudamod-probe against fake CUDA libraries (tests/fakecuda/)
 * in a temporary directory, and against the real CUDA 13.0 install when
 * there is one.
 *
 * The probe runs in a clean environment (PATH and LD_LIBRARY_PATH only). It
 * is started through the dynamic loader with --inhibit-cache: a machine
 * whose ld.so.cache lists a real CUDA would otherwise answer the sonames
 * the fake directory lacks. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fixture.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"

#define REAL_CUDA_LIB "/usr/local/cuda-13.0/lib"


/* Run the probe with args (NULL-terminated), LD_LIBRARY_PATH=libdir (unset
 * when NULL); under `meson test --setup=valgrind` through valgrind too,
 * unless no_valgrind (the real CUDA libraries are not ours to check). */
static void run_probe(struct run_result *r, const char *libdir, const char *const *args, bool no_valgrind)
{
        static const char *const vg[] = {
                "valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
                "--errors-for-leak-kinds=definite,indirect", "--show-leak-kinds=definite,indirect",
        };
        const char *probe = getenv("CUDAMOD_PROBE");
        bool valgrind = getenv("CUDAMOD_UNDER_VALGRIND") != NULL && !no_valgrind;
        _cleanup_free_ char *ld_path = libdir ? xasprintf("LD_LIBRARY_PATH=%s", libdir) : NULL;
        const char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", ld_path, NULL };
        const char *argv[32];
        size_t k = 0;

        ck_assert_msg(probe != NULL, "CUDAMOD_PROBE is not set (run the tests with meson test)");
        if (valgrind)
                for (size_t i = 0; i < ELEMENTSOF(vg); i++)
                        argv[k++] = vg[i];
        argv[k++] = test_dynamic_loader();
        argv[k++] = "--inhibit-cache";
        if (libdir) {
                argv[k++] = "--library-path";
                argv[k++] = libdir;
        }
        argv[k++] = probe;
        for (size_t i = 0; args && args[i]; i++) {
                ck_assert(k < ELEMENTSOF(argv) - 1);
                argv[k++] = args[i];
        }
        argv[k] = NULL;

        run_program(r, NULL, argv, envp);
}

/* Run the probe, expect exit 0, and parse its document. */
static json_t *probe_json(const char *libdir, const char *const *args, bool no_valgrind)
{
        struct run_result r;
        json_error_t jerr;
        json_t *doc;

        run_probe(&r, libdir, args, no_valgrind);
        ck_assert_msg(r.status == 0, "probe exited %d: %s", r.status, r.err);
        doc = json_loads(r.out, 0, &jerr);
        ck_assert_msg(doc != NULL, "probe printed no JSON (%s): %s", jerr.text, r.out);
        ck_assert_int_eq(json_integer_value(json_object_get(doc, "probe")), 1);
        run_result_release(&r);
        return doc;
}

/* The value at a dotted path ("driver.devices.0.name"); NULL when absent. */
static json_t *jget(json_t *doc, const char *path)
{
        _cleanup_free_ char *copy = xstrdup(path);
        json_t *j = doc;
        char *save = NULL;

        for (char *part = strtok_r(copy, ".", &save); part && j; part = strtok_r(NULL, ".", &save))
                j = json_is_array(j) ? json_array_get(j, strtoul(part, NULL, 10)) : json_object_get(j, part);
        return j;
}

static void expect_int(json_t *doc, const char *path, long long v)
{
        json_t *j = jget(doc, path);

        ck_assert_msg(json_is_integer(j), "%s is not an integer", path);
        ck_assert_msg(json_integer_value(j) == v, "%s: %lld, expected %lld", path,
                      (long long)json_integer_value(j), v);
}

static void expect_str(json_t *doc, const char *path, const char *s)
{
        json_t *j = jget(doc, path);

        ck_assert_msg(json_is_string(j), "%s is not a string", path);
        ck_assert_msg(streq(json_string_value(j), s), "%s: '%s', expected '%s'", path, json_string_value(j), s);
}

static void expect_contains(json_t *doc, const char *path, const char *s)
{
        json_t *j = jget(doc, path);

        ck_assert_msg(json_is_string(j), "%s is not a string", path);
        ck_assert_msg(strstr(json_string_value(j), s), "%s: '%s' lacks '%s'", path, json_string_value(j), s);
}

static void expect_null(json_t *doc, const char *path)
{
        json_t *j = jget(doc, path);

        ck_assert_msg(json_is_null(j), "%s is not null", path);
}

static void expect_loaded(json_t *doc, const char *lib, bool loaded)
{
        _cleanup_free_ char *path = xasprintf("%s.loaded", lib);

        ck_assert_msg(json_is_boolean(jget(doc, path)) && json_is_true(jget(doc, path)) == loaded,
                      "%s is not %s", path, loaded ? "true" : "false");
}


/* A fresh directory for the fake libraries, by its real path. */
static char *libdir_new(char **ret_root)
{
        char *root = fx_new();
        _cleanup_free_ char *lib = path_join(root, "lib");
        char *real;

        ck_assert_int_eq(mkdir(lib, 0755), 0);
        real = realpath(lib, NULL);
        ck_assert(real != NULL);
        *ret_root = root;
        return real;
}

static void expect_realpath(json_t *doc, const char *lib, const char *dir, const char *name)
{
        _cleanup_free_ char *key = xasprintf("%s.realpath", lib);
        _cleanup_free_ char *want = path_join(dir, name);

        expect_str(doc, key, want);
}

START_TEST(probe_reports_every_version_and_both_gpus)
{
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        json_t *doc;

        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libcuda.so.1", "CUDA_TWO_GPUS");
        fx_fake_library(lib, "libcudnn.so.9", "CUDNN9");
        fx_fake_library(lib, "libnccl.so.2", "NCCL2");
        doc = probe_json(lib, NULL, false);

        expect_str(doc, "cudart.soname", "libcudart.so.12");
        expect_loaded(doc, "cudart", true);
        expect_realpath(doc, "cudart", lib, "libcudart.so.12");
        expect_int(doc, "cudart.runtime_version", 12040);
        expect_int(doc, "cudart.driver_version", 12080);
        expect_int(doc, "cudart.device_count", 2);
        expect_null(doc, "cudart.error");

        expect_loaded(doc, "driver", true);
        expect_realpath(doc, "driver", lib, "libcuda.so.1");
        expect_int(doc, "driver.version", 12080);
        ck_assert_int_eq(json_array_size(jget(doc, "driver.devices")), 2);
        expect_int(doc, "driver.devices.0.index", 0);
        expect_str(doc, "driver.devices.0.name", "Fake H100");
        expect_str(doc, "driver.devices.0.compute_capability", "9.0");
        expect_int(doc, "driver.devices.0.memory_mib", 81559);
        expect_int(doc, "driver.devices.1.index", 1);
        expect_str(doc, "driver.devices.1.name", "Fake A100");
        expect_str(doc, "driver.devices.1.compute_capability", "8.0");
        expect_int(doc, "driver.devices.1.memory_mib", 40536);
        expect_null(doc, "driver.error");

        expect_str(doc, "cudnn.soname", "libcudnn.so.9");
        expect_realpath(doc, "cudnn", lib, "libcudnn.so.9");
        expect_int(doc, "cudnn.version", 90701);
        expect_int(doc, "cudnn.cudart_version", 12080);
        expect_null(doc, "cudnn.error");

        expect_str(doc, "nccl.soname", "libnccl.so.2");
        expect_realpath(doc, "nccl", lib, "libnccl.so.2");
        expect_int(doc, "nccl.version", 22105);
        expect_null(doc, "nccl.error");

        json_decref(doc);
        fx_free(root);
}
END_TEST

START_TEST(probe_cuda_major_chooses_the_runtime_soname)
{
        static const struct {
                const char *arg;   /* --cuda-major, or NULL */
                const char *soname;
                long long version; /* 0: not loaded */
        } cases[] = {
                { NULL, "libcudart.so.13", 13000 },
                { "13", "libcudart.so.13", 13000 },
                { "12", "libcudart.so.12", 12040 },
                { "11", "libcudart.so.11.0", 11080 },
                { "14", "libcudart.so.14", 0 },
                {},
        };
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);

        fx_fake_library(lib, "libcudart.so.11.0", "CUDART11");
        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libcudart.so.13", "CUDART13");
        for (size_t i = 0; cases[i].soname; i++) {
                const char *args[] = { "--cuda-major", cases[i].arg, "--no-driver", NULL };
                json_t *doc = probe_json(lib, cases[i].arg ? args : args + 2, false);

                expect_str(doc, "cudart.soname", cases[i].soname);
                if (cases[i].version) {
                        expect_loaded(doc, "cudart", true);
                        expect_realpath(doc, "cudart", lib, cases[i].soname);
                        expect_int(doc, "cudart.runtime_version", cases[i].version);
                } else {
                        expect_loaded(doc, "cudart", false);
                        expect_contains(doc, "cudart.error", cases[i].soname);
                }
                ck_assert_msg(jget(doc, "driver") == NULL, "--no-driver printed the driver");
                json_decref(doc);
        }
        fx_free(root);
}
END_TEST

START_TEST(probe_reports_an_old_driver)
{
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        json_t *doc;

        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libcuda.so.1", "CUDA_OLD");
        doc = probe_json(lib, NULL, false);
        expect_int(doc, "driver.version", 11040);
        ck_assert_int_eq(json_array_size(jget(doc, "driver.devices")), 1);
        expect_str(doc, "driver.devices.0.name", "Fake GTX 1050");
        expect_str(doc, "driver.devices.0.compute_capability", "6.1");
        /* This driver has only the 32-bit cuDeviceTotalMem. */
        expect_int(doc, "driver.devices.0.memory_mib", 2048);
        expect_null(doc, "driver.error");
        /* The 12.4 runtime needs a newer driver. */
        expect_int(doc, "cudart.driver_version", 11040);
        expect_null(doc, "cudart.device_count");
        expect_contains(doc, "cudart.error", "cudaGetDeviceCount");
        expect_contains(doc, "cudart.error", "insufficient");
        json_decref(doc);
        fx_free(root);
}
END_TEST

START_TEST(probe_reports_a_driver_without_devices)
{
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        json_t *doc;

        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libcuda.so.1", "CUDA_NO_GPU");
        doc = probe_json(lib, NULL, false);
        expect_loaded(doc, "driver", true);
        expect_int(doc, "driver.version", 12080);
        ck_assert(json_is_array(jget(doc, "driver.devices")));
        ck_assert_int_eq(json_array_size(jget(doc, "driver.devices")), 0);
        expect_null(doc, "driver.error");
        expect_int(doc, "cudart.device_count", 0);
        expect_null(doc, "cudart.error");
        json_decref(doc);
        fx_free(root);
}
END_TEST

START_TEST(probe_without_driver_still_loads_the_runtime)
{
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        json_t *doc;

        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libnccl.so.2", "NCCL2");
        doc = probe_json(lib, NULL, false);
        expect_loaded(doc, "driver", false);
        expect_null(doc, "driver.path");
        expect_contains(doc, "driver.error", "libcuda.so.1: cannot open shared object file");
        ck_assert(jget(doc, "driver.devices") == NULL);
        expect_loaded(doc, "cudart", true);
        expect_int(doc, "cudart.runtime_version", 12040);
        expect_int(doc, "cudart.driver_version", 0);
        expect_contains(doc, "cudart.error", "cudaGetDeviceCount failed: error 35");
        expect_loaded(doc, "cudnn", false);
        expect_contains(doc, "cudnn.error", "libcudnn.so.9");
        expect_contains(doc, "cudnn.error", "libcudnn.so.8");
        expect_int(doc, "nccl.version", 22105);
        json_decref(doc);
        fx_free(root);
}
END_TEST

/* A library that crashes the probe: it dies by the same signal and says on
 * stderr which call into which file it was in. */
START_TEST(probe_crashing_in_a_library_says_where)
{
        static const char *const args[] = { "--no-cudnn", "--no-nccl", NULL };
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        _cleanup_free_ char *want = NULL;
        struct run_result r;

        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libcuda.so.1", "CUDA_CRASH");
        want = xasprintf("cudamod-probe: SIGSEGV while calling cuDeviceGetName in %s/libcuda.so.1\n", lib);
        /* Not under valgrind: a process killed by a signal has no leak
         * report to give. */
        run_probe(&r, lib, args, true);
        ck_assert_msg(r.status == 128 + SIGSEGV, "probe exited %d, not by SIGSEGV: %s", r.status, r.err);
        ck_assert_msg(strstr(r.err, want), "'%s' not in its stderr: %s", want, r.err);
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(probe_with_nothing_to_load_reports_every_library_missing)
{
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        const char *const libs[] = { "cudart", "driver", "cudnn", "nccl", NULL };

        for (int with_dir = 0; with_dir <= 1; with_dir++) {
                json_t *doc = probe_json(with_dir ? lib : NULL, NULL, false);

                for (size_t i = 0; libs[i]; i++) {
                        _cleanup_free_ char *error = xasprintf("%s.error", libs[i]);

                        expect_loaded(doc, libs[i], false);
                        expect_contains(doc, error, "cannot open shared object file");
                }
                expect_str(doc, "cudart.soname", "libcudart.so.11.0");
                expect_contains(doc, "cudart.error", "libcudart.so.13");
                json_decref(doc);
        }
        fx_free(root);
}
END_TEST

START_TEST(probe_names_missing_symbols)
{
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        json_t *doc;

        /* Libraries that load under the name but are something else. Two
         * runs: the loader answers a later dlopen by an earlier library's
         * soname, so no run may load a library whose soname is asked for
         * later. */
        fx_fake_library(lib, "libcudart.so.12", "CUDNN9");
        fx_fake_library(lib, "libcuda.so.1", "NCCL2");
        doc = probe_json(lib, (const char *const[]){ "--no-cudnn", "--no-nccl", NULL }, false);
        expect_loaded(doc, "cudart", true);
        expect_contains(doc, "cudart.error", "missing symbol 'cudaRuntimeGetVersion'");
        expect_null(doc, "cudart.runtime_version");
        expect_loaded(doc, "driver", true);
        expect_contains(doc, "driver.error", "missing symbol 'cuInit'");
        expect_contains(doc, "driver.error", "missing symbol 'cuDeviceTotalMem'");
        ck_assert_int_eq(json_array_size(jget(doc, "driver.devices")), 0);
        json_decref(doc);

        fx_free(root);
        free(lib);
        lib = libdir_new(&root);
        fx_fake_library(lib, "libcudnn.so.9", "CUDART12");
        fx_fake_library(lib, "libnccl.so.2", "CUDNN9");
        doc = probe_json(lib, (const char *const[]){ "--no-driver", NULL }, false);
        expect_loaded(doc, "nccl", true);
        expect_null(doc, "nccl.version");
        expect_contains(doc, "nccl.error", "missing symbol 'ncclGetVersion'");
        expect_loaded(doc, "cudnn", true);
        expect_null(doc, "cudnn.version");
        expect_contains(doc, "cudnn.error", "missing symbol 'cudnnGetVersion'");
        expect_contains(doc, "cudnn.error", "missing symbol 'cudnnGetCudartVersion'");
        json_decref(doc);
        fx_free(root);
}
END_TEST

START_TEST(probe_leaves_out_what_it_is_told_to_skip)
{
        static const char *const args[] = { "--no-cudnn", "--no-nccl", "--no-driver", NULL };
        json_t *doc = probe_json(NULL, args, false);

        ck_assert(jget(doc, "cudart") != NULL);
        ck_assert(jget(doc, "driver") == NULL);
        ck_assert(jget(doc, "cudnn") == NULL);
        ck_assert(jget(doc, "nccl") == NULL);
        json_decref(doc);
}
END_TEST

/* --env: the probe takes the module's environment from its arguments,
 * keeps what the job step set (CUDA_VISIBLE_DEVICES, SLURM_*), drops the
 * rest of the caller's, and executes itself again, so that the loader
 * sees the module's LD_LIBRARY_PATH. The driver answers by partition
 * (SLURM_JOB_PARTITION=h100: two Fake H100) and CUDA_VISIBLE_DEVICES; a
 * decoy directory on the caller's LD_LIBRARY_PATH has a driver with
 * other GPUs. Started directly and through the dynamic loader. */
START_TEST(probe_env_gives_the_module_environment_and_keeps_the_steps)
{
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        _cleanup_free_ char *decoy = path_join(root, "decoy");
        _cleanup_free_ char *caller_path = xasprintf("LD_LIBRARY_PATH=%s", decoy);
        _cleanup_free_ char *module_path = xasprintf("LD_LIBRARY_PATH=%s", lib);
        const char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin", caller_path, "CUDA_VISIBLE_DEVICES=1",
                               "SLURM_JOB_ID=7", "SLURM_JOB_PARTITION=h100", "FOO=bar", NULL };
        const char *probe = getenv("CUDAMOD_PROBE");

        ck_assert_ptr_nonnull(probe);
        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libcuda.so.1", "CUDA_BY_PARTITION");
        fx_fake_library(decoy, "libcudart.so.12", "CUDART12");
        fx_fake_library(decoy, "libcuda.so.1", "CUDA_TWO_GPUS");
        for (int via_loader = 0; via_loader <= 1; via_loader++) {
                const char *argv[] = { test_dynamic_loader(), "--inhibit-cache", probe, "--env", module_path,
                                       "--env", "CUDA_VISIBLE_DEVICES=5", "--cuda-major", "12", "--no-cudnn",
                                       "--no-nccl", NULL };
                struct run_result r;
                json_error_t jerr;
                json_t *doc;

                run_program(&r, NULL, via_loader ? argv : argv + 2, envp);
                ck_assert_msg(r.status == 0, "probe exited %d: %s", r.status, r.err);
                doc = json_loads(r.out, 0, &jerr);
                ck_assert_msg(doc != NULL, "probe printed no JSON (%s): %s", jerr.text, r.out);
                run_result_release(&r);
                ck_assert_msg(json_string_length(jget(doc, "host")) > 0, "no host");
                /* The step's CUDA_VISIBLE_DEVICES wins over the module's. */
                expect_str(doc, "visible_devices", "1");
                /* The module's LD_LIBRARY_PATH, not the caller's. */
                expect_realpath(doc, "cudart", lib, "libcudart.so.12");
                expect_int(doc, "cudart.runtime_version", 12040);
                expect_realpath(doc, "driver", lib, "libcuda.so.1");
                /* The partition (SLURM_*) kept, and device 1 of it only. */
                ck_assert_int_eq(json_array_size(jget(doc, "driver.devices")), 1);
                expect_str(doc, "driver.devices.0.name", "Fake H100");
                expect_int(doc, "cudart.device_count", 1);
                json_decref(doc);
        }
        fx_free(root);
}
END_TEST

static int compare_strings(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* /proc/PID/FILE (NUL-separated strings) one a line, sorted when asked;
 * NULL when it cannot be read. */
static char *proc_strings(pid_t pid, const char *file, bool sorted)
{
        _cleanup_free_ char *path = xasprintf("/proc/%d/%s", (int)pid, file);
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_(strv_release) struct strv v = { 0 };

        if (strbuf_read_file(&sb, path, 1 << 20) < 0)
                return NULL;
        for (size_t i = 0; i < sb.len; i += strlen(sb.buf + i) + 1)
                strv_add(&v, sb.buf + i);
        if (sorted)
                qsort(v.items, v.len, sizeof(*v.items), compare_strings);
        return strv_join(&v, "\n");
}

/* The whole environment of the probe once it executed itself again, read
 * from /proc while the driver hangs in cuInit (partition "hang"): the
 * module's variables and the step's, nothing else of the caller's. */
START_TEST(probe_env_leaves_out_the_rest_of_the_callers_environment)
{
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        _cleanup_free_ char *module_path = xasprintf("LD_LIBRARY_PATH=%s", lib);
        _cleanup_free_ char *want = xasprintf("BAR=baz\nCUDA_VISIBLE_DEVICES=1\n%s\nSLURM_JOB_ID=7\n"
                                              "SLURM_JOB_PARTITION=hang",
                                              module_path);
        _cleanup_free_ char *env = NULL, *want_cmdline = NULL;
        const char *probe = getenv("CUDAMOD_PROBE");
        const char *envp[] = { "PATH=/usr/bin:/bin", "FOO=bar", "CUDA_VISIBLE_DEVICES=1", "SLURM_JOB_ID=7",
                               "SLURM_JOB_PARTITION=hang", NULL };
        const char *argv[] = { probe, "--env", module_path, "--env", "CUDA_VISIBLE_DEVICES=5", "--env", "BAR=baz",
                               "--cuda-major", "12", "--no-cudnn", "--no-nccl", NULL };
        int status;
        pid_t pid;

        ck_assert_ptr_nonnull(probe);
        want_cmdline = xasprintf("%s\n--cuda-major\n12\n--no-cudnn\n--no-nccl", probe);
        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libcuda.so.1", "CUDA_BY_PARTITION");
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0)
                        _exit(126);
                execve(probe, (char *const *)argv, (char *const *)envp);
                _exit(127);
        }
        /* Wait for the second execution: its arguments lack the --env. */
        for (int i = 0; i < 1000; i++) {
                _cleanup_free_ char *cmdline = proc_strings(pid, "cmdline", false);

                if (cmdline && streq(cmdline, want_cmdline)) {
                        env = proc_strings(pid, "environ", true);
                        break;
                }
                ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0, "the probe ended (status %#x)", status);
                usleep(10 * 1000);
        }
        kill(pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(env != NULL, "the probe did not execute itself again with its arguments less --env");
        ck_assert_str_eq(env, want);
        fx_free(root);
}
END_TEST

/* --library: each call convention, the version as MAJOR*10000+MINOR*100+PATCH
 * under the request's name, and a library that is not there or whose call
 * fails is an error in its object, not a failure of the probe. */
START_TEST(probe_library_requests_read_each_call)
{
        static const char *const args[] = {
                "--no-cudnn", "--no-nccl", "--no-driver",
                "--library", "cusparselt=libcusparseLt.so.0:cusparseLtGetProperty:property",
                "--library", "cudss=libcudss.so.0:cudssGetProperty:property",
                "--library", "nvshmem=libnvshmem_host.so.3:nvshmemx_vendor_get_version_info:int3",
                "--library", "magma=libmagma.so:magma_version:magma",
                "--library", "gone=libgone.so.7,libgone.so.6:gone_version:int3",
                "--library", "nosym=libcudss.so.0:cudssGetVersion:property",
                NULL,
        };
        char *root;
        _cleanup_free_ char *lib = libdir_new(&root);
        json_t *doc;

        fx_fake_library(lib, "libcudart.so.12", "CUDART12");
        fx_fake_library(lib, "libcusparseLt.so.0", "CUSPARSELT");
        fx_fake_library(lib, "libcudss.so.0", "CUDSS");
        fx_fake_library(lib, "libnvshmem_host.so.3", "NVSHMEM");
        fx_fake_library(lib, "libmagma.so", "MAGMA_ILP64");
        doc = probe_json(lib, args, false);

        expect_realpath(doc, "cusparselt", lib, "libcusparseLt.so.0");
        expect_int(doc, "cusparselt.version", 801);
        expect_null(doc, "cusparselt.error");
        expect_int(doc, "cudss.version", 701);
        expect_int(doc, "nvshmem.version", 30405);
        expect_realpath(doc, "magma", lib, "libmagma.so");
        expect_int(doc, "magma.version", 21000);
        expect_loaded(doc, "gone", false);
        expect_str(doc, "gone.soname", "libgone.so.6");
        expect_contains(doc, "gone.error", "libgone.so.7");
        expect_null(doc, "gone.version");
        expect_loaded(doc, "nosym", true);
        expect_contains(doc, "nosym.error", "missing symbol 'cudssGetVersion'");
        ck_assert_ptr_null(jget(doc, "cudnn"));
        json_decref(doc);

        /* A 32-bit magma_int_t reads the same; a failing property call is
         * its error. */
        fx_fake_library(lib, "libmagma.so", "MAGMA");
        fx_fake_library(lib, "libcusparseLt.so.0", "CUSPARSELT_BROKEN");
        doc = probe_json(lib, args, false);
        expect_int(doc, "magma.version", 20900);
        expect_null(doc, "cusparselt.version");
        expect_contains(doc, "cusparselt.error", "cusparseLtGetProperty(0) failed: error 7");
        json_decref(doc);
        fx_free(root);
}
END_TEST

START_TEST(probe_usage_errors_exit_2)
{
        static const struct {
                const char *args[3];
                int status;
        } cases[] = {
                { { "--bogus" }, 2 },
                { { "--cuda-major" }, 2 },
                { { "--cuda-major", "twelve" }, 2 },
                { { "--cuda-major", "10" }, 2 },
                { { "--cuda-major", "12x" }, 2 },
                { { "extra" }, 2 },
                { { "--env", "=x" }, 2 },
                { { "--env", "noequals" }, 2 },
                { { "--env" }, 2 },
                { { "--library", "x" }, 2 },
                { { "--library", "cudart=libcudart.so.12:cudaRuntimeGetVersion:int3" }, 2 },
                { { "--library", "Bad=libx.so:f:int3" }, 2 },
                { { "--library", "x=libx.so:f:varargs" }, 2 },
                { { "--library", "x=:f:int3" }, 2 },
                { { "--library", "x=/tmp/libx.so:f:int3" }, 2 },
                { { "--library", "x=libx.so::int3" }, 2 },
                { { "--help" }, 0 },
                { { NULL }, -1 },
        };

        for (size_t i = 0; cases[i].status >= 0; i++) {
                struct run_result r;

                run_probe(&r, NULL, cases[i].args, false);
                ck_assert_msg(r.status == cases[i].status, "%s: exit %d", cases[i].args[0], r.status);
                if (cases[i].status == 2) {
                        ck_assert_msg(r.out[0] == '\0', "%s printed '%s'", cases[i].args[0], r.out);
                        ck_assert_msg(strstr(r.err, "usage: cudamod-probe"), "%s: '%s'", cases[i].args[0], r.err);
                } else {
                        ck_assert(startswith(r.out, "usage: cudamod-probe"));
                }
                run_result_release(&r);
        }
}
END_TEST

START_TEST(probe_fails_when_stdout_cannot_be_written)
{
        const char *probe = getenv("CUDAMOD_PROBE");
        const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
        int status;
        pid_t pid;

        ck_assert(probe != NULL);
        if (access("/dev/full", W_OK) != 0)
                return;
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
                int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

                if (fd < 0 || null < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0)
                        _exit(126);
                execve(probe, (char *const[]){ (char *)"cudamod-probe", (char *)"--no-driver", NULL },
                       (char *const *)envp);
                _exit(127);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 1);
}
END_TEST

START_TEST(probe_reads_the_real_cuda_13_install)
{
        _cleanup_free_ char *real_lib = NULL;
        json_t *doc;

        if (access(REAL_CUDA_LIB, F_OK) != 0)
                return; /* no real CUDA here: nothing to check */
        real_lib = realpath(REAL_CUDA_LIB, NULL);
        ck_assert(real_lib != NULL);
        doc = probe_json(REAL_CUDA_LIB, NULL, true);
        expect_str(doc, "cudart.soname", "libcudart.so.13");
        expect_loaded(doc, "cudart", true);
        expect_realpath(doc, "cudart", real_lib, "libcudart.so.13");
        expect_int(doc, "cudart.runtime_version", 13000);
        expect_loaded(doc, "driver", false);
        expect_contains(doc, "driver.error", "libcuda.so.1");
        expect_loaded(doc, "cudnn", true);
        expect_int(doc, "cudnn.version", 91900);
        expect_int(doc, "cudnn.cudart_version", 13010);
        expect_loaded(doc, "nccl", true);
        expect_int(doc, "nccl.version", 22809);
        json_decref(doc);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("probe");
        TCase *tc = tcase_create("probe");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, probe_reports_every_version_and_both_gpus);
        tcase_add_test(tc, probe_cuda_major_chooses_the_runtime_soname);
        tcase_add_test(tc, probe_reports_an_old_driver);
        tcase_add_test(tc, probe_reports_a_driver_without_devices);
        tcase_add_test(tc, probe_without_driver_still_loads_the_runtime);
        tcase_add_test(tc, probe_with_nothing_to_load_reports_every_library_missing);
        tcase_add_test(tc, probe_crashing_in_a_library_says_where);
        tcase_add_test(tc, probe_names_missing_symbols);
        tcase_add_test(tc, probe_leaves_out_what_it_is_told_to_skip);
        tcase_add_test(tc, probe_env_gives_the_module_environment_and_keeps_the_steps);
        tcase_add_test(tc, probe_env_leaves_out_the_rest_of_the_callers_environment);
        tcase_add_test(tc, probe_library_requests_read_each_call);
        tcase_add_test(tc, probe_usage_errors_exit_2);
        tcase_add_test(tc, probe_fails_when_stdout_cannot_be_written);
        tcase_add_test(tc, probe_reads_the_real_cuda_13_install);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
