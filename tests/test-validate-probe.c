/* test-validate-probe.c: the build, run and device checks (validate-probe.c)
 * on fake installs in a temporary directory: headers written here, the fake
 * libraries of tests/fakecuda/ copied under their sonames, the real C
 * compiler and the built cudamod-probe.
 *
 * This machine's /etc/ld.so.cache may list a real CUDA (libcudart.so.13,
 * libcudnn.so.9, libnccl.so.2, maybe libcuda.so.1). LD_LIBRARY_PATH comes
 * first, so a library the fixture provides always wins; the runtime the
 * tests load is libcudart.so.12 or .11.0, which the cache lacks. A test that
 * needs a library to be missing, or a soname the probe tries after one the
 * cache has, runs the probe through the "no-cache" launcher, a script that
 * starts it by the dynamic loader with --inhibit-cache. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "component-cuda.h"
#include "component-cudnn.h"
#include "component-cudss.h"
#include "component-cusparselt.h"
#include "component-magma.h"
#include "component-nccl.h"
#include "component-nvshmem.h"
#include "fixture.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "validate-probe.h"

/* --- fixture ------------------------------------------------------------ */


static const char *probe_path(void)
{
        const char *probe = getenv("CUDAMOD_PROBE");

        ck_assert_msg(probe != NULL, "CUDAMOD_PROBE is not set (run the tests with meson test)");
        return probe;
}

/* A fresh fixture root, by its real path (the probe reports real paths). */
static char *root_new(void)
{
        char *root = fx_new();
        char *real = realpath(root, NULL);

        ck_assert(real != NULL);
        free(root);
        return real;
}


/* A toolkit at root/prefix: include/cuda_runtime_api.h declaring
 * header_version, lib64/<soname> (the fake var) and the libcudart.so link. */
static void make_cuda(const char *root, const char *prefix, long header_version, const char *var,
                      const char *soname)
{
        _cleanup_free_ char *h = xasprintf("%s/include/cuda_runtime_api.h", prefix);
        _cleanup_free_ char *lib = xasprintf("%s/lib64/%s", prefix, soname);
        _cleanup_free_ char *dev = xasprintf("%s/lib64/libcudart.so", prefix);
        _cleanup_free_ char *text = xasprintf("#ifndef CUDA_RUNTIME_API_H\n"
                                              "#define CUDA_RUNTIME_API_H\n"
                                              "#define CUDART_VERSION %ld\n"
                                              "int cudaRuntimeGetVersion(int *runtimeVersion);\n"
                                              "int cudaDriverGetVersion(int *driverVersion);\n"
                                              "#endif\n",
                                              header_version);

        fx_write(root, h, text);
        fx_fake_library(root, lib, var);
        fx_symlink(root, dev, soname);
}

/* cuDNN at root/prefix: include/cudnn_version.h and cudnn.h, lib/<soname>
 * and the libcudnn.so link. */
static void make_cudnn(const char *root, const char *prefix, unsigned major, unsigned minor, unsigned patch,
                       const char *var, const char *soname)
{
        _cleanup_free_ char *vh = xasprintf("%s/include/cudnn_version.h", prefix);
        _cleanup_free_ char *h = xasprintf("%s/include/cudnn.h", prefix);
        _cleanup_free_ char *lib = xasprintf("%s/lib/%s", prefix, soname);
        _cleanup_free_ char *dev = xasprintf("%s/lib/libcudnn.so", prefix);
        _cleanup_free_ char *text = xasprintf("#define CUDNN_MAJOR %u\n"
                                              "#define CUDNN_MINOR %u\n"
                                              "#define CUDNN_PATCHLEVEL %u\n"
                                              "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n",
                                              major, minor, patch);

        fx_write(root, vh, text);
        fx_write(root, h, "#include <stddef.h>\n"
                          "#include \"cudnn_version.h\"\n"
                          "size_t cudnnGetVersion(void);\n"
                          "size_t cudnnGetCudartVersion(void);\n");
        fx_fake_library(root, lib, var);
        fx_symlink(root, dev, soname);
}

/* NCCL 2.21.5 at root/prefix: include/nccl.h, lib/libnccl.so.2 and link. */
static void make_nccl(const char *root, const char *prefix)
{
        _cleanup_free_ char *h = xasprintf("%s/include/nccl.h", prefix);
        _cleanup_free_ char *lib = xasprintf("%s/lib/libnccl.so.2", prefix);
        _cleanup_free_ char *dev = xasprintf("%s/lib/libnccl.so", prefix);

        fx_write(root, h, "#define NCCL_MAJOR 2\n"
                          "#define NCCL_MINOR 21\n"
                          "#define NCCL_PATCH 5\n"
                          "#define NCCL_SUFFIX \"\"\n"
                          "#define NCCL_VERSION_CODE 22105\n"
                          "typedef enum { ncclSuccess = 0 } ncclResult_t;\n"
                          "ncclResult_t ncclGetVersion(int *version);\n");
        fx_fake_library(root, lib, "NCCL2");
        fx_symlink(root, dev, "libnccl.so.2");
}

/* An executable shell script at root/rel; its path. */
static char *make_script(const char *root, const char *rel, const char *body)
{
        char *path = path_join(root, rel);
        _cleanup_free_ char *text = xasprintf("#!/bin/sh\n%s", body);

        fx_write(root, rel, text);
        ck_assert_int_eq(chmod(path, 0755), 0);
        return path;
}

/* The launcher that runs `env -i NAME=value... PROBE ARGS` with the probe
 * started by the dynamic loader with --inhibit-cache. */
static char *make_no_cache_launcher(const char *root)
{
        _cleanup_free_ char *body = xasprintf("for a do\n"
                                              "        shift\n"
                                              "        if [ \"$a\" = '%s' ]; then\n"
                                              "                set -- \"$@\" '%s' --inhibit-cache \"$a\"\n"
                                              "        else\n"
                                              "                set -- \"$@\" \"$a\"\n"
                                              "        fi\n"
                                              "done\n"
                                              "exec \"$@\"\n",
                                              probe_path(), test_dynamic_loader());

        return make_script(root, "no-cache-launcher", body);
}

/* A module as validate would see it: own library and include directories
 * (relative to root) first on the paths, then those of its dependencies. */
struct target {
        struct validate_module t;
        struct strv env;
        char *name, *version;
};

static void colon_join(struct strbuf *sb, const char *root, const char *const *a, const char *const *b)
{
        for (int k = 0; k < 2; k++)
                for (size_t i = 0; (k ? b : a) && (k ? b : a)[i]; i++) {
                        _cleanup_free_ char *p = path_join(root, (k ? b : a)[i]);

                        strbuf_addf(sb, "%s%s", sb->len ? ":" : "", p);
                }
}

static void target_init(struct target *g, const char *root, const char *module, const char *const *own_lib,
                        const char *const *own_inc, const char *const *dep_lib, const char *const *dep_inc)
{
        _cleanup_strbuf_ struct strbuf lib = STRBUF_INIT, inc = STRBUF_INIT;
        const char *slash = strchr(module, '/');

        *g = (struct target){ 0 };
        g->name = slash ? xstrndup(module, (size_t)(slash - module)) : xstrdup(module);
        g->version = xstrdup(slash ? slash + 1 : "");
        colon_join(&lib, root, own_lib, dep_lib);
        colon_join(&inc, root, own_inc, dep_inc);
        strv_add(&g->env, "PATH=/usr/bin:/bin");
        strv_push(&g->env, xasprintf("HOME=%s", root));
        if (lib.len) {
                strv_push(&g->env, xasprintf("LD_LIBRARY_PATH=%s", lib.buf));
                strv_push(&g->env, xasprintf("LIBRARY_PATH=%s", lib.buf));
        }
        if (inc.len)
                strv_push(&g->env, xasprintf("CPATH=%s", inc.buf));
        for (size_t i = 0; own_lib && own_lib[i]; i++)
                strv_push(&g->t.own_libdirs, path_join(root, own_lib[i]));
        for (size_t i = 0; own_inc && own_inc[i]; i++)
                strv_push(&g->t.own_incdirs, path_join(root, own_inc[i]));
        for (int k = 0; k < 2; k++)
                for (size_t i = 0; (k ? dep_lib : own_lib) && (k ? dep_lib : own_lib)[i]; i++)
                        strv_push(&g->t.ld_library_path, path_join(root, (k ? dep_lib : own_lib)[i]));
        g->t.module = module;
        g->t.name = g->name;
        g->t.version = g->version;
        g->t.file = "/dev/null";
        g->t.env = g->env.items;
        g->t.kind = module_kind_detect(g->t.name, &g->t.own_libdirs);
}

/* Drop NAME from the target's environment. */
static void target_unset(struct target *g, const char *name)
{
        size_t n = strlen(name), j = 0;

        for (size_t i = 0; i < g->env.len; i++) {
                if (strncmp(g->env.items[i], name, n) == 0 && g->env.items[i][n] == '=')
                        free(g->env.items[i]);
                else
                        g->env.items[j++] = g->env.items[i];
        }
        g->env.len = j;
        g->env.items[j] = NULL;
}

static void target_release(struct target *g)
{
        strv_release(&g->env);
        strv_release(&g->t.own_libdirs);
        strv_release(&g->t.own_incdirs);
        strv_release(&g->t.ld_library_path);
        free(g->name);
        free(g->version);
}

static struct validate_options options(const char *driver_libdir)
{
        return (struct validate_options){
                .probe = probe_path(),
                .driver_libdir = driver_libdir,
                .compile = true,
                .timeout = 60,
        };
}

/* NVSHMEM 3.4.5 at root/prefix, as the archive lays it out: its header
 * declares patch (5 is the library's), lib/libnvshmem_host.so.3 the fake
 * one (nvshmemx_vendor_get_version_info says 3.4.5) and its link. */
static void make_nvshmem(const char *root, const char *prefix, int patch)
{
        _cleanup_free_ char *v = xasprintf("%s/include/non_abi/nvshmem_version.h", prefix);
        _cleanup_free_ char *h = xasprintf("%s/include/nvshmem.h", prefix);
        _cleanup_free_ char *x = xasprintf("%s/include/nvshmemx.h", prefix);
        _cleanup_free_ char *lib = xasprintf("%s/lib/libnvshmem_host.so.3", prefix);
        _cleanup_free_ char *dev = xasprintf("%s/lib/libnvshmem_host.so", prefix);
        _cleanup_free_ char *text = xasprintf("#define NVSHMEM_VENDOR_MAJOR_VERSION 3\n"
                                              "#define NVSHMEM_VENDOR_MINOR_VERSION 4\n"
                                              "#define NVSHMEM_VENDOR_PATCH_VERSION %d\n", patch);

        fx_write(root, v, text);
        fx_write(root, h, "#include \"non_abi/nvshmem_version.h\"\n#define NVSHMEM_MAJOR_VERSION 1\n");
        fx_write(root, x, "#include \"nvshmem.h\"\nextern \"C\" void nvshmemx_vendor_get_version_info(int *, int *, int *);\n");
        fx_fake_library(root, lib, "NVSHMEM");
        fx_symlink(root, dev, "libnvshmem_host.so.3");
}

/* The three standard modules below root: cuda (12.4, runtime 12040),
 * cudnn (9.7.1 for CUDA 12) and nccl (2.21.5), and driver dirs. */
static void make_standard(const char *root)
{
        make_cuda(root, "cuda", 12040, "CUDART12", "libcudart.so.12");
        make_cudnn(root, "cudnn", 9, 7, 1, "CUDNN9", "libcudnn.so.9");
        make_nccl(root, "nccl");
        fx_fake_library(root, "driver/libcuda.so.1", "CUDA_TWO_GPUS");
        fx_fake_library(root, "old-driver/libcuda.so.1", "CUDA_OLD");
        fx_fake_library(root, "no-gpu-driver/libcuda.so.1", "CUDA_NO_GPU");
}

static const char *const cuda_lib[] = { "cuda/lib64", NULL };
static const char *const cuda_inc[] = { "cuda/include", NULL };
static const char *const cudnn_lib[] = { "cudnn/lib", NULL };
static const char *const cudnn_inc[] = { "cudnn/include", NULL };
static const char *const nccl_lib[] = { "nccl/lib", NULL };
static const char *const nccl_inc[] = { "nccl/include", NULL };

#define assert_check(c, want, ...)                                                                          \
        do {                                                                                                \
                const char *const words_[] = { __VA_ARGS__, NULL };                                         \
                ck_assert_msg((c)->status == (want), "%s: %s, expected %s: %s", (c)->id,                    \
                              check_status_to_string((c)->status), check_status_to_string(want),            \
                              (c)->message ? (c)->message : "(no message)");                                \
                ck_assert_msg((c)->message != NULL, "%s: no message", (c)->id);                             \
                for (size_t w_ = 0; words_[w_]; w_++)                                                       \
                        ck_assert_msg(strstr((c)->message, words_[w_]), "%s: '%s' lacks '%s'", (c)->id,     \
                                      (c)->message, words_[w_]);                                            \
        } while (0)

/* Run the probe for g, then the run and device checks. */
static void probe_checks(struct target *g, const struct validate_options *o, struct probe_report *ret_p,
                         struct check *ret_run, struct check *ret_device)
{
        ck_assert_int_eq(probe_run(&g->t, o, ret_p), 0);
        check_run(&g->t, ret_p, ret_run);
        check_device(&g->t, o, ret_p, ret_device);
        ck_assert_str_eq(ret_run->id, "run");
        ck_assert_str_eq(ret_device->id, "device");
}

static void probe_checks_release(struct target *g, struct probe_report *p, struct check *run,
                                 struct check *dev)
{
        probe_report_release(p);
        check_release(run);
        check_release(dev);
        target_release(g);
}

/* cuDSS at root/prefix: include/cudss.h declaring MAJOR.MINOR.PATCH and
 * cudssGetProperty as cudss.h and CUDA's library_types.h do, and the fake
 * lib/libcudss.so.0 (0.7.1) with its link. */
static void make_cudss(const char *root, const char *prefix, int major, int minor, int patch)
{
        _cleanup_free_ char *h = xasprintf("%s/include/cudss.h", prefix);
        _cleanup_free_ char *lib = xasprintf("%s/lib/libcudss.so.0", prefix);
        _cleanup_free_ char *dev = xasprintf("%s/lib/libcudss.so", prefix);
        _cleanup_free_ char *text = xasprintf("#define CUDSS_VER_MAJOR %d\n"
                                              "#define CUDSS_VER_MINOR %d\n"
                                              "#define CUDSS_VER_PATCH %d\n"
                                              "typedef enum { MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL } libraryPropertyType;\n"
                                              "typedef enum { CUDSS_STATUS_SUCCESS = 0 } cudssStatus_t;\n"
                                              "cudssStatus_t cudssGetProperty(libraryPropertyType propertyType, int *value);\n",
                                              major, minor, patch);

        fx_write(root, h, text);
        fx_fake_library(root, lib, "CUDSS");
        fx_symlink(root, dev, "libcudss.so.0");
}

static const char *const cudss_lib[] = { "cudss/lib", NULL };
static const char *const cudss_inc[] = { "cudss/include", NULL };

/* --- build -------------------------------------------------------------- */

START_TEST(build_passes_for_each_kind_with_module_paths_only)
{
        static const struct {
                const char *module;
                const char *const *lib, *const *inc, *const *dep_lib, *const *dep_inc;
                const char *header, *libs;
        } cases[] = {
                { "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL, "cuda_runtime_api.h", "-lcudart" },
                { "cudnn/9.7.1", cudnn_lib, cudnn_inc, cuda_lib, cuda_inc, "cudnn.h", "-lcudnn -lcudart" },
                { "nccl/2.21.5", nccl_lib, nccl_inc, cuda_lib, cuda_inc, "nccl.h", "-lnccl" },
                { NULL },
        };
        char *root = root_new();

        make_standard(root);
        for (size_t i = 0; cases[i].module; i++) {
                struct validate_options o = options(NULL);
                struct check c = { 0 };
                struct target g;

                target_init(&g, root, cases[i].module, cases[i].lib, cases[i].inc, cases[i].dep_lib,
                            cases[i].dep_inc);
                check_build(&g.t, &o, &c);
                ck_assert_str_eq(c.id, "build");
                assert_check(&c, CHECK_PASS, cases[i].header, cases[i].libs, "compiles and links");
                check_release(&c);
                target_release(&g);
        }
        fx_free(root);
}
END_TEST

START_TEST(build_fails_when_cpath_lacks_the_header)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct check c = { 0 };
        struct target g;

        make_standard(root);
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        target_unset(&g, "CPATH");
        check_build(&g.t, &o, &c);
        assert_check(&c, CHECK_FAIL, "does not build", "CPATH does not reach a header",
                     "cudamod-build.c:1:", "cuda_runtime_api.h: No such file or directory");
        check_release(&c);
        target_release(&g);
        fx_free(root);
}
END_TEST

START_TEST(build_fails_when_library_path_lacks_the_library)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct check c = { 0 };
        struct target g;

        make_standard(root);
        target_init(&g, root, "cudnn/9.7.1", cudnn_lib, cudnn_inc, cuda_lib, cuda_inc);
        target_unset(&g, "LIBRARY_PATH");
        check_build(&g.t, &o, &c);
        assert_check(&c, CHECK_FAIL, "does not build", "LIBRARY_PATH does not reach libcudnn.so",
                     "cannot find -lcudnn");
        check_release(&c);
        target_release(&g);
        fx_free(root);
}
END_TEST

START_TEST(build_takes_cc_from_cudamods_path_not_the_modules)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct check c = { 0 };
        struct target g;
        _cleanup_free_ char *fake = NULL, *marker = NULL, *script = NULL;

        make_standard(root);
        marker = path_join(root, "FAKE-CC-RAN");
        fake = path_join(root, "fakebin/cc");
        script = xasprintf("#!/bin/sh\ntouch '%s'\nexit 1\n", marker);
        fx_write(root, "fakebin/cc", script);
        ck_assert_int_eq(chmod(fake, 0755), 0);
        fx_write(root, "fakebin/as", script);
        free(fake);
        fake = path_join(root, "fakebin/as");
        ck_assert_int_eq(chmod(fake, 0755), 0);
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        target_unset(&g, "PATH");
        strv_push(&g.env, xasprintf("PATH=%s/fakebin:/usr/bin:/bin", root));
        g.t.env = g.env.items;
        o.cc_path = "/usr/bin:/bin";
        check_build(&g.t, &o, &c);
        assert_check(&c, CHECK_PASS, "compiles and links");
        ck_assert_msg(access(marker, F_OK) != 0, "the module's cc (or as) ran");
        check_release(&c);
        target_release(&g);
        fx_free(root);
}
END_TEST

/* Which variables a load may not set for validate (validate.h). */
START_TEST(validate_refuses_loader_variables_set_by_a_module)
{
        static const struct {
                const char *env[3], *start[2];
                const char *want;
        } cases[] = {
                { { "LD_PRELOAD=/tmp/x.so", NULL }, { NULL }, "LD_PRELOAD" },
                { { "LD_AUDIT=/tmp/x.so", NULL }, { NULL }, "LD_AUDIT" },
                { { "LD_DEBUG_OUTPUT=/etc/x", NULL }, { NULL }, "LD_DEBUG_OUTPUT" },
                { { "GCONV_PATH=/tmp/g", NULL }, { NULL }, "GCONV_PATH" },
                { { "LD_PROFILE=libc.so.6", NULL }, { NULL }, "LD_PROFILE" },
                { { "COMPILER_PATH=/tmp/bin", NULL }, { NULL }, "COMPILER_PATH" },
                { { "GCC_EXEC_PREFIX=/tmp/", NULL }, { NULL }, "GCC_EXEC_PREFIX" },
                { { "LD_PRELOAD=", NULL }, { NULL }, "LD_PRELOAD" },
                /* What the load started from is not the module's doing. */
                { { "LD_PRELOAD=/a.so", NULL }, { "LD_PRELOAD=/a.so", NULL }, NULL },
                { { "LD_PRELOAD=/b.so", NULL }, { "LD_PRELOAD=/a.so", NULL }, "LD_PRELOAD" },
                { { "LD_LIBRARY_PATH=/m/lib", "LD_DEBUG=libs", NULL }, { NULL }, NULL },
                { { NULL }, { NULL }, NULL },
                { { "END", NULL }, { NULL }, NULL },
        };

        for (size_t i = 0; !cases[i].env[0] || !streq(cases[i].env[0], "END"); i++) {
                const char *got = validate_refused_variable((char *const *)cases[i].env,
                                                            (char *const *)cases[i].start);

                if (!cases[i].want)
                        ck_assert_msg(!got, "case %zu: %s refused", i, got);
                else
                        ck_assert_msg(got && streq(got, cases[i].want), "case %zu: %s", i,
                                      got ? got : "nothing refused");
        }
}
END_TEST

START_TEST(build_skips_when_not_asked_without_compiler_or_for_other_modules)
{
        static const char *const other_lib[] = { "other/lib", NULL };
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct check c = { 0 };
        struct target g, other;

        make_standard(root);
        fx_mkdir(root, "other/lib");
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        o.compile = false;
        check_build(&g.t, &o, &c);
        assert_check(&c, CHECK_SKIP, "not asked for");

        o.compile = true;
        o.cc = "cudamod-no-such-cc";
        check_build(&g.t, &o, &c);
        assert_check(&c, CHECK_SKIP, "no C compiler", "'cudamod-no-such-cc'", "/usr/bin:/bin");

        o.cc = NULL;
        target_init(&other, root, "tools/1.0", other_lib, NULL, NULL, NULL);
        ck_assert_ptr_eq(other.t.kind, NULL);
        check_build(&other.t, &o, &c);
        assert_check(&c, CHECK_SKIP, "not a CUDA, cuDNN, NCCL, cuSPARSELt, cuDSS, NVSHMEM, MAGMA or cuTENSOR module");

        check_release(&c);
        target_release(&other);
        target_release(&g);
        fx_free(root);
}
END_TEST

/* Whether dir holds nothing but "." and "..". */
static bool dir_is_empty(const char *dir)
{
        struct run_result r;
        bool empty;

        run_program(&r, NULL, (const char *const[]){ "ls", "-A", dir, NULL }, NULL);
        ck_assert_int_eq(r.status, 0);
        empty = r.out[0] == '\0';
        run_result_release(&r);
        return empty;
}

START_TEST(build_removes_its_temporary_directory)
{
        char *root = root_new();
        _cleanup_free_ char *tmp = path_join(root, "tmp");
        const char *old = getenv("TMPDIR");
        _cleanup_free_ char *saved = old ? xstrdup(old) : NULL;
        struct validate_options o = options(NULL);
        struct check c = { 0 };
        struct target g;

        make_standard(root);
        fx_mkdir(root, "tmp");
        ck_assert_int_eq(setenv("TMPDIR", tmp, 1), 0);
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        check_build(&g.t, &o, &c);
        ck_assert_int_eq(c.status, CHECK_PASS);
        ck_assert_msg(dir_is_empty(tmp), "check_build left files in '%s'", tmp);
        target_unset(&g, "CPATH");
        check_build(&g.t, &o, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        ck_assert_msg(dir_is_empty(tmp), "a failed check_build left files in '%s'", tmp);
        if (saved)
                setenv("TMPDIR", saved, 1);
        else
                unsetenv("TMPDIR");
        check_release(&c);
        target_release(&g);
        fx_free(root);
}
END_TEST

/* --- run and device ------------------------------------------------------ */

START_TEST(run_and_device_pass_for_a_cuda_module_on_two_gpus)
{
        char *root = root_new();
        _cleanup_free_ char *driver = path_join(root, "driver");
        _cleanup_free_ char *lib = path_join(root, "cuda/lib64/libcudart.so.12");
        struct validate_options o = options(driver);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert_msg(p.ran, "probe did not run: %s", p.launch_error);
        ck_assert_str_eq(p.libs[component_cuda.index].soname, "libcudart.so.12");
        ck_assert_str_eq(p.libs[component_cuda.index].path, lib);
        ck_assert_int_eq(p.libs[component_cuda.index].version, 12040);
        ck_assert(!p.libs[component_cudnn.index].loaded && !p.libs[component_nccl.index].loaded);
        assert_check(&run, CHECK_PASS, "libcudart.so.12 12.4 (12040)", lib, "cuda_runtime_api.h",
                     "module version 12.4");
        ck_assert_int_eq(p.driver_version, 12080);
        ck_assert_int_eq((int)p.n_devices, 2);
        assert_check(&dev, CHECK_PASS, "2 GPUs: 0 Fake H100 (9.0, 81559 MiB); 1 Fake A100 (8.0, 40536 MiB)",
                     "driver 12080 (CUDA 12.8)");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_fails_when_header_and_library_disagree)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        /* The header says 12.8, the library is 12.4. */
        make_cuda(root, "cuda", 12080, "CUDART12", "libcudart.so.12");
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_FAIL, "libcudart.so.12 is 12.4 (12040)", "declares 12.8 (12080)",
                     "cuda_runtime_api.h", "different installs");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_fails_when_the_module_version_disagrees)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        target_init(&g, root, "cuda/12.9", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_FAIL, "the module is cuda/12.9", "libcudart.so.12 is 12.4 (12040)");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_warns_without_a_header_to_compare)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        target_init(&g, root, "cuda/12.4", cuda_lib, NULL, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_WARN, "no cuda_runtime_api.h", "12.4 (12040)");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

/* CUDA 11.8 as a site installs it: lib64/libcudart.so.11.8.89 (the fake
 * that, like the real one, cannot tell its version without a driver), its
 * soname link libcudart.so.11.0, and the header declaring header_version
 * (0: none). */
static void make_cuda_11(const char *root, long header_version)
{
        fx_fake_library(root, "cuda/lib64/libcudart.so.11.8.89", "CUDART11_NEEDS_DRIVER");
        fx_symlink(root, "cuda/lib64/libcudart.so.11.0", "libcudart.so.11.8.89");
        if (header_version) {
                _cleanup_free_ char *text = xasprintf("#define CUDART_VERSION %ld\n", header_version);

                fx_write(root, "cuda/include/cuda_runtime_api.h", text);
        }
}

START_TEST(run_reads_the_version_of_cuda_11_without_a_driver)
{
        char *root = root_new();
        _cleanup_free_ char *lib = path_join(root, "cuda/lib64/libcudart.so.11.8.89");
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_cuda_11(root, 11080);
        target_init(&g, root, "cuda/11.8", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert_int_eq(p.libs[component_cuda.index].version, -1);
        ck_assert_int_eq(p.libs[component_cuda.index].version_error, 35);
        assert_check(&run, CHECK_PASS, "libcudart.so.11.0 11.8 (11080) from", lib, "without a driver (error 35",
                     "its file name 'libcudart.so.11.8.89' says 11.8 (11080)",
                     "cuda_runtime_api.h' (CUDART_VERSION) says 11.8 (11080)", "module version 11.8");
        ck_assert_int_eq(dev.status, CHECK_SKIP);
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_reads_cuda_11s_version_json_without_a_driver_and_fails_when_the_sources_disagree)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        /* The file name, version.json and the header tell. */
        make_cuda_11(root, 11080);
        fx_write(root, "cuda/version.json", "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"11.8.0\"},"
                                            " \"cuda_cudart\": {\"name\": \"CUDA Runtime (cudart)\", \"version\": \"11.8.89\"}}");
        target_init(&g, root, "cuda/11.8", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_PASS, "version.json' (cuda_cudart) says 11.8 (11080)", "its file name",
                     "(CUDART_VERSION) says 11.8");
        probe_checks_release(&g, &p, &run, &dev);

        /* A header of another install: that is a failure, naming each. */
        make_cuda_11(root, 11070);
        target_init(&g, root, "cuda/11.8", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_FAIL, "did not tell its version without a driver (error 35)", "disagrees",
                     "says 11.8 (11080)", "(CUDART_VERSION) says 11.7 (11070)");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_without_a_driver_fails_when_nothing_tells_the_version)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        /* The soname is the real file, no header, no version.json:
         * nothing says which 11.x. */
        fx_fake_library(root, "cuda/lib64/libcudart.so.11.0", "CUDART11_NEEDS_DRIVER");
        target_init(&g, root, "cuda/11.8", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_FAIL, "did not tell its version without a driver (error 35)",
                     "neither its file name, version.json nor the module's headers tell it");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_passes_for_cudnn_and_nccl_with_their_cuda)
{
        static const struct {
                const char *module;
                const char *const *lib, *const *inc;
                const char *words[3];
        } cases[] = {
                { "cudnn/9.7.1.26", cudnn_lib, cudnn_inc,
                  { "libcudnn.so.9 9.7.1 (90701)", "built for CUDA 12 (cudart 12080)", "runtime 12.4 (12040)" } },
                { "nccl/2.21.5", nccl_lib, nccl_inc, { "libnccl.so.2 2.21.5 (22105)", "nccl.h", "2.21.5" } },
                { NULL },
        };
        char *root = root_new();

        make_standard(root);
        for (size_t i = 0; cases[i].module; i++) {
                _cleanup_free_ char *driver = path_join(root, "driver");
                struct validate_options o = options(driver);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;

                target_init(&g, root, cases[i].module, cases[i].lib, cases[i].inc, cuda_lib, cuda_inc);
                probe_checks(&g, &o, &p, &run, &dev);
                /* The runtime comes from the dependency's libcudart.so.12,
                 * not whatever the probe would try first. */
                ck_assert_str_eq(p.libs[component_cuda.index].soname, "libcudart.so.12");
                assert_check(&run, CHECK_PASS, cases[i].words[0], cases[i].words[1], cases[i].words[2]);
                assert_check(&dev, CHECK_PASS, "2 GPUs");
                probe_report_release(&p);
                check_release(&run);
                check_release(&dev);
                target_release(&g);
        }
        fx_free(root);
}
END_TEST

static const char *const nvshmem_lib[] = { "nvshmem/lib", NULL };
static const char *const nvshmem_inc[] = { "nvshmem/include", NULL };

/* The probe asks nvshmemx_vendor_get_version_info (the release, not
 * nvshmem_info_get_version's OpenSHMEM 1.3); the build is
 * build_passes_for_a_library_component's. */
START_TEST(run_passes_for_nvshmem)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_cuda(root, "cuda", 12040, "CUDART12", "libcudart.so.12");
        make_nvshmem(root, "nvshmem", 5);
        target_init(&g, root, "nvshmem/3.4.5", nvshmem_lib, nvshmem_inc, cuda_lib, cuda_inc);
        ck_assert_ptr_eq(g.t.kind, &component_nvshmem);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert(p.libs[component_nvshmem.index].loaded);
        ck_assert_int_eq(p.libs[component_nvshmem.index].version, 30405);
        assert_check(&run, CHECK_PASS, "libnvshmem_host.so.3 3.4.5 (30405)", "equal to",
                     "non_abi/nvshmem_version.h");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_fails_when_nvshmem_header_and_library_disagree)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_cuda(root, "cuda", 12040, "CUDART12", "libcudart.so.12");
        make_nvshmem(root, "nvshmem", 2);
        target_init(&g, root, "nvshmem/3.4.5", nvshmem_lib, nvshmem_inc, cuda_lib, cuda_inc);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_FAIL, "libnvshmem_host.so.3 is 3.4.5 (30405)", "declares 3.4.2 (30402)",
                     "nvshmem_version.h", "different installs");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_fails_when_cudnn_targets_another_cuda_major)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_cuda(root, "cuda", 12040, "CUDART12", "libcudart.so.12");
        make_cudnn(root, "cudnn", 9, 7, 1, "CUDNN9_CUDA13", "libcudnn.so.9");
        target_init(&g, root, "cudnn/9.7.1", cudnn_lib, cudnn_inc, cuda_lib, cuda_inc);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert_int_eq(p.libs[component_cudnn.index].cudart_version, 13000);
        assert_check(&run, CHECK_FAIL, "cuDNN 9.7.1 (90701) is built for CUDA 13 (cudart 13000)",
                     "loaded runtime is 12.4 (12040), libcudart.so.12", "load a CUDA 13 module");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_reads_cudnn_8_versions)
{
        static const char *const cuda11_lib[] = { "cuda11/lib64", NULL };
        static const char *const cuda11_inc[] = { "cuda11/include", NULL };
        char *root = root_new();
        _cleanup_free_ char *launcher = make_no_cache_launcher(root);
        char *argv[] = { launcher, NULL };
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        /* The probe tries libcudnn.so.9 first: without the cache, only the
         * module's libcudnn.so.8 is there. */
        make_cuda(root, "cuda11", 11080, "CUDART11", "libcudart.so.11.0");
        make_cudnn(root, "cudnn8", 8, 9, 7, "CUDNN8", "libcudnn.so.8");
        o.launcher = argv;
        target_init(&g, root, "cudnn/8.9.7", (const char *const[]){ "cudnn8/lib", NULL },
                    (const char *const[]){ "cudnn8/include", NULL }, cuda11_lib, cuda11_inc);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert_msg(p.ran, "probe did not run: %s", p.launch_error);
        ck_assert_str_eq(p.libs[component_cuda.index].soname, "libcudart.so.11.0");
        assert_check(&run, CHECK_PASS, "libcudnn.so.8 8.9.7 (8907)", "cudnn_version.h",
                     "built for CUDA 11 (cudart 11080)", "runtime 11.8 (11080)");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_fails_when_another_copy_comes_first)
{
        static const char *const dep_lib[] = { "cuda/lib64", NULL };
        char *root = root_new();
        _cleanup_free_ char *other = path_join(root, "elsewhere/lib");
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        fx_fake_library(root, "elsewhere/lib/libcudnn.so.9", "CUDNN9");
        /* elsewhere/lib is on LD_LIBRARY_PATH before the module's own. */
        target_init(&g, root, "cudnn/9.7.1", (const char *const[]){ "elsewhere/lib", "cudnn/lib", NULL },
                    cudnn_inc, dep_lib, cuda_inc);
        strv_release(&g.t.own_libdirs);
        strv_push(&g.t.own_libdirs, path_join(root, "cudnn/lib"));
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_FAIL, "libcudnn.so.9 was loaded from", other, "not from the module's",
                     "cudnn/lib", "another cuDNN comes first on the loader path");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(run_fails_when_the_library_cannot_be_loaded)
{
        char *root = root_new();
        _cleanup_free_ char *launcher = make_no_cache_launcher(root);
        char *argv[] = { launcher, NULL };
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        o.launcher = argv;
        /* The module's directory is missing from LD_LIBRARY_PATH. */
        target_init(&g, root, "nccl/2.21.5", nccl_lib, nccl_inc, cuda_lib, cuda_inc);
        target_unset(&g, "LD_LIBRARY_PATH");
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert(p.ran);
        assert_check(&run, CHECK_FAIL, "NCCL could not be loaded", "libnccl.so.2", "LD_LIBRARY_PATH must reach",
                     "nccl/lib");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

/* MAGMA at root/prefix: fx_magma's headers declaring version, its
 * libmagma.so replaced by the fake library var (tests/fakecuda). */
static void make_magma(const char *root, const char *prefix, const char *version, bool ilp64, const char *var)
{
        _cleanup_free_ char *lib = xasprintf("%s/lib/libmagma.so", prefix);

        fx_magma(root, prefix, &(struct fx_magma){ .version = version, .cuda_major = 12, .ilp64 = ilp64 });
        fx_fake_library(root, lib, var);
}

static const char *const magma_lib[] = { "magma/lib", NULL };
static const char *const magma_inc[] = { "magma/include", NULL };

/* magma_version with a 32-bit and a 64-bit (ILP64) magma_int_t, each equal
 * to its magma_types.h; a header of another release fails. */
START_TEST(run_checks_magma_against_its_header)
{
        static const struct {
                const char *version, *var;
                bool ilp64;
                enum check_status want;
                const char *words[3];
        } cases[] = {
                { "2.9.0", "MAGMA", false, CHECK_PASS, { "libmagma.so 2.9.0 (20900)", "equal to", "magma_types.h" } },
                { "2.10.0", "MAGMA_ILP64", true, CHECK_PASS, { "libmagma.so 2.10.0 (21000)", "equal to", "agrees with the module version 2.10.0" } },
                { "2.8.0", "MAGMA", false, CHECK_FAIL,
                  { "libmagma.so is 2.9.0 (20900)", "magma_types.h' declares 2.8.0 (20800)", "different installs" } },
                { NULL },
        };

        for (size_t i = 0; cases[i].version; i++) {
                char *root = root_new();
                _cleanup_free_ char *module = xasprintf("magma/%s", cases[i].version);
                struct validate_options o = options(NULL);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;

                make_standard(root);
                make_magma(root, "magma", cases[i].version, cases[i].ilp64, cases[i].var);
                target_init(&g, root, module, magma_lib, magma_inc, cuda_lib, cuda_inc);
                probe_checks(&g, &o, &p, &run, &dev);
                assert_check(&run, cases[i].want, cases[i].words[0], cases[i].words[1], cases[i].words[2]);
                probe_checks_release(&g, &p, &run, &dev);
                fx_free(root);
        }
}
END_TEST

/* A static-only MAGMA's module adds no library directory to
 * LD_LIBRARY_PATH, and even one that did would offer only libmagma.a:
 * nothing to load, so validate does not take it for a MAGMA module. */
START_TEST(static_magma_module_is_not_run)
{
        char *root = root_new();
        struct target g;

        fx_magma(root, "magma", &(struct fx_magma){ .version = "2.6.1", .static_only = true });
        target_init(&g, root, "magma/2.6.1", magma_lib, magma_inc, NULL, NULL);
        ck_assert_ptr_null(g.t.kind);
        target_release(&g);
        fx_free(root);
}
END_TEST

START_TEST(run_and_device_skip_other_modules)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p = { 0 };
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        fx_mkdir(root, "other/lib");
        target_init(&g, root, "tools/1.0", (const char *const[]){ "other/lib", NULL }, NULL, NULL, NULL);
        probe_report_release(&p);
        check_run(&g.t, &p, &run);
        check_device(&g.t, &o, &p, &dev);
        assert_check(&run, CHECK_SKIP, "not a CUDA, cuDNN, NCCL, cuSPARSELt, cuDSS, NVSHMEM, MAGMA or cuTENSOR module");
        assert_check(&dev, CHECK_SKIP, "not a CUDA, cuDNN, NCCL, cuSPARSELt, cuDSS, NVSHMEM, MAGMA or cuTENSOR module");
        check_release(&run);
        check_release(&dev);
        target_release(&g);
        fx_free(root);
}
END_TEST

START_TEST(device_fails_with_a_driver_older_than_the_runtime)
{
        char *root = root_new();
        _cleanup_free_ char *driver = path_join(root, "old-driver");
        struct validate_options o = options(driver);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_PASS, "12.4 (12040)");
        assert_check(&dev, CHECK_FAIL, "driver 11040 (CUDA 11.4) is older than the runtime 12040 needs (≥ 12000)",
                     "update the NVIDIA driver or use a CUDA ≤ 11.4 module");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

/* A driver that crashes the probe: run fails and says the probe failed,
 * how (SIGSEGV) and in which call into which file; device names the same. */
START_TEST(probe_crashed_by_a_library_says_where)
{
        char *root = root_new();
        _cleanup_free_ char *driver = path_join(root, "crash-driver");
        _cleanup_free_ char *where = NULL;
        struct validate_options o = options(driver);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        fx_fake_library(root, "crash-driver/libcuda.so.1", "CUDA_CRASH");
        where = xasprintf("cudamod-probe: SIGSEGV while calling cuDeviceGetName in %s/libcuda.so.1", driver);
        o.require_device = true;
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert(!p.ran);
        ck_assert(p.started);
        ck_assert(!p.launcher_failed);
        assert_check(&run, CHECK_FAIL, "the probe failed: killed by signal 11 (SIGSEGV)", where);
        assert_check(&dev, CHECK_FAIL, "the probe failed, so no device was queried", where);
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(device_without_driver_or_gpu_skips_unless_required)
{
        static const struct {
                const char *driver;   /* below root, or NULL: none */
                bool require;
                enum check_status status;
                const char *words[2];
        } cases[] = {
                { NULL, false, CHECK_SKIP, { "no NVIDIA driver", "libcuda.so.1" } },
                { NULL, true, CHECK_FAIL, { "no NVIDIA driver", "--driver-libdir" } },
                { "no-gpu-driver", false, CHECK_SKIP, { "driver 12080 (CUDA 12.8) sees no GPU", "GPU node" } },
                { "no-gpu-driver", true, CHECK_FAIL, { "sees no GPU", "GPU node" } },
                { "driver", true, CHECK_PASS, { "2 GPUs", "Fake H100" } },
                { NULL },
        };
        char *root = root_new();
        _cleanup_free_ char *launcher = make_no_cache_launcher(root);
        char *argv[] = { launcher, NULL };

        make_standard(root);
        for (size_t i = 0; cases[i].words[0]; i++) {
                _cleanup_free_ char *driver = cases[i].driver ? path_join(root, cases[i].driver) : NULL;
                struct validate_options o = options(driver);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;

                /* Without the cache: a machine with a real driver must not
                 * answer libcuda.so.1. */
                o.launcher = argv;
                o.require_device = cases[i].require;
                target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
                probe_checks(&g, &o, &p, &run, &dev);
                assert_check(&run, CHECK_PASS, "12.4 (12040)");
                assert_check(&dev, cases[i].status, cases[i].words[0], cases[i].words[1]);
                probe_report_release(&p);
                check_release(&run);
                check_release(&dev);
                target_release(&g);
        }
        fx_free(root);
}
END_TEST

/* --- launching ------------------------------------------------------------ */

START_TEST(launcher_that_cannot_start_is_reported_as_the_launchers)
{
        static const struct {
                const char *launcher;
                const char *words[2];
        } cases[] = {
                { "cudamod-no-such-launcher", { "the launcher 'cudamod-no-such-launcher' could not be started", "not found in PATH (" } },
                { "/nonexistent/srun", { "the launcher '/nonexistent/srun' could not be started", "No such file or directory" } },
                { NULL },
        };
        char *root = root_new();

        make_standard(root);
        for (size_t i = 0; cases[i].launcher; i++) {
                char *argv[] = { (char *)cases[i].launcher, (char *)"-p", (char *)"gpu", NULL };
                struct validate_options o = options(NULL);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;

                o.launcher = argv;
                target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
                probe_checks(&g, &o, &p, &run, &dev);
                ck_assert(!p.ran);
                ck_assert(p.launcher_failed);
                ck_assert_msg(strstr(p.launch_error, cases[i].words[0]), "'%s'", p.launch_error);
                ck_assert_msg(strstr(p.launch_error, cases[i].words[1]), "'%s'", p.launch_error);
                assert_check(&run, CHECK_FAIL, "the launcher failed", cases[i].words[0]);
                assert_check(&dev, CHECK_SKIP, "the probe did not run");
                probe_report_release(&p);
                check_release(&run);
                check_release(&dev);
                target_release(&g);
        }
        fx_free(root);
}
END_TEST

START_TEST(probe_that_cannot_start_is_not_the_launchers)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        o.probe = "/nonexistent/cudamod-probe";
        o.require_device = true;
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert(!p.ran);
        ck_assert(!p.launcher_failed);
        assert_check(&run, CHECK_FAIL, "the probe did not run",
                     "the probe '/nonexistent/cudamod-probe' could not be started");
        assert_check(&dev, CHECK_FAIL, "the probe did not run");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(working_launchers_pass_the_environment_through)
{
        char *root = root_new();
        _cleanup_free_ char *driver = path_join(root, "driver");
        _cleanup_free_ char *script = make_script(root, "bin/launch", "exec \"$@\"\n");
        char *env_argv[] = { (char *)"env", NULL };
        char *script_argv[] = { script, NULL };
        char **launchers[] = { env_argv, script_argv, NULL };

        make_standard(root);
        for (size_t i = 0; launchers[i]; i++) {
                struct validate_options o = options(driver);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;

                o.launcher = launchers[i];
                target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
                probe_checks(&g, &o, &p, &run, &dev);
                ck_assert_msg(p.ran, "probe did not run: %s", p.launch_error);
                assert_check(&run, CHECK_PASS, "libcudart.so.12 12.4 (12040)");
                assert_check(&dev, CHECK_PASS, "2 GPUs");
                probe_report_release(&p);
                check_release(&run);
                check_release(&dev);
                target_release(&g);
        }
        fx_free(root);
}
END_TEST

/* Whether pid is gone (or a zombie waiting for its parent), within 5 s. */
static bool process_gone(pid_t pid)
{
        for (int i = 0; i < 500; i++) {
                _cleanup_free_ char *stat_path = xasprintf("/proc/%d/stat", (int)pid);
                struct strbuf sb = STRBUF_INIT;
                const char *paren;
                bool zombie = false;

                if (kill(pid, 0) < 0 && errno == ESRCH)
                        return true;
                if (strbuf_read_file(&sb, stat_path, 4096) == 0 && (paren = strrchr(sb.buf, ')')))
                        zombie = paren[1] == ' ' && paren[2] == 'Z';
                strbuf_release(&sb);
                if (zombie)
                        return true;
                nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        return false;
}

START_TEST(hung_launcher_is_killed_at_the_timeout)
{
        char *root = root_new();
        _cleanup_free_ char *pidfile = path_join(root, "sleep.pid");
        _cleanup_free_ char *body = xasprintf("sleep 60 &\necho $! > '%s'\nwait\n", pidfile);
        _cleanup_free_ char *script = make_script(root, "bin/hang", body);
        struct strbuf pid_text = STRBUF_INIT;
        char *argv[] = { script, NULL };
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;
        time_t start;

        make_standard(root);
        o.launcher = argv;
        o.timeout = 1;
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        start = time(NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert_msg(time(NULL) - start < 10, "the timeout did not stop the launcher");
        ck_assert(!p.ran);
        ck_assert(p.launcher_failed);
        ck_assert_msg(strstr(p.launch_error, "timed out after 1 s"), "'%s'", p.launch_error);
        assert_check(&run, CHECK_FAIL, "the launcher failed", "timed out after 1 s");
        /* The whole process group went, the background sleep too. */
        ck_assert_int_eq(strbuf_read_file(&pid_text, pidfile, 64), 0);
        ck_assert_msg(process_gone((pid_t)atoi(pid_text.buf)), "sleep %s survived", pid_text.buf);
        strbuf_release(&pid_text);
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

/* --- what a launcher leaves behind --------------------------------------- */

/* The live processes whose command line holds marker (a fixture root);
 * with kill_them, SIGKILLed too (so that a failing test leaves none). */
static size_t processes_holding(const char *marker, bool kill_them)
{
        DIR *d = opendir("/proc");
        struct dirent *de;
        size_t n = 0;

        ck_assert(d != NULL);
        while ((de = readdir(d))) {
                _cleanup_free_ char *path = NULL;
                struct strbuf sb = STRBUF_INIT;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                path = xasprintf("/proc/%s/cmdline", de->d_name);
                if (strbuf_read_file_head(&sb, path, 65536) == 0) {
                        for (size_t i = 0; i < sb.len; i++)
                                if (sb.buf[i] == '\0')
                                        sb.buf[i] = ' ';
                        if (strstr(sb.buf, marker)) {
                                n++;
                                if (kill_them)
                                        (void)kill((pid_t)atoi(de->d_name), SIGKILL);
                        }
                }
                strbuf_release(&sb);
        }
        closedir(d);
        return n;
}

/* A launcher script whose body may run "$STRAY 300": a sleep named by a
 * path under root, to be found by processes_holding(root). */
static char *make_stray_launcher(const char *root, const char *rel, const char *body)
{
        _cleanup_free_ char *stray = path_join(root, "bin/stray-sleep");
        _cleanup_free_ char *text = xasprintf("STRAY='%s'\n%s", stray, body);

        fx_mkdir(root, "bin");
        if (access(stray, F_OK) != 0)
                ck_assert_int_eq(symlink("/bin/sleep", stray), 0);
        return make_script(root, rel, text);
}

static double seconds_since(const struct timespec *t0)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The launcher ended; what it started still holds its output: that is
 * said, the holders are killed, and it is no timeout. */
START_TEST(launcher_whose_leftovers_hold_its_output_is_not_reported_as_timed_out)
{
        static const struct {
                const char *body;
                const char *words[3];
        } cases[] = {
                /* In its process group, the probe run behind it. */
                { "\"$STRAY\" 300 &\nexec \"$@\"\n",
                  { "exit status 0", "held its output open", "killed 1 process" } },
                /* In a session of its own, after a double fork. */
                { "( setsid \"$STRAY\" 300 & )\nexit 0\n",
                  { "exit status 0", "held its output open", "killed 1 process" } },
                { NULL },
        };
        char *root = root_new();
        _cleanup_free_ char *driver = path_join(root, "driver");

        make_standard(root);
        for (size_t i = 0; cases[i].body; i++) {
                _cleanup_free_ char *rel = xasprintf("bin/leave%zu", i);
                _cleanup_free_ char *script = make_stray_launcher(root, rel, cases[i].body);
                char *argv[] = { script, NULL };
                struct validate_options o = options(driver);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;
                struct timespec t0;
                size_t left;
                double took;

                o.launcher = argv;
                o.timeout = 10;
                target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
                clock_gettime(CLOCK_MONOTONIC, &t0);
                probe_checks(&g, &o, &p, &run, &dev);
                took = seconds_since(&t0);
                left = processes_holding(root, true);
                ck_assert_msg(left == 0, "case %zu: %zu processes it left survived", i, left);
                ck_assert_msg(took < 5, "case %zu: took %.1f s of its 10 s timeout", i, took);
                ck_assert(p.launcher_failed);
                ck_assert_msg(!strstr(p.launch_error, "timed out"), "case %zu: '%s'", i, p.launch_error);
                for (size_t w = 0; w < 3; w++)
                        ck_assert_msg(strstr(p.launch_error, cases[i].words[w]), "case %zu: '%s' lacks '%s'",
                                      i, p.launch_error, cases[i].words[w]);
                assert_check(&run, CHECK_FAIL, "the launcher failed", "held its output open");
                probe_checks_release(&g, &p, &run, &dev);
        }
        fx_free(root);
}
END_TEST

/* A launcher that detaches a process from its output and group (setsid
 * after a double fork) and runs the probe: the run passes, and that
 * process does not outlive it. */
START_TEST(processes_a_launcher_detached_are_killed_when_it_exits)
{
        char *root = root_new();
        _cleanup_free_ char *driver = path_join(root, "driver");
        _cleanup_free_ char *script = make_stray_launcher(
                root, "bin/detach", "( setsid \"$STRAY\" 300 </dev/null >/dev/null 2>&1 & )\nexec \"$@\"\n");
        char *argv[] = { script, NULL };
        struct validate_options o = options(driver);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;
        size_t left;

        make_standard(root);
        o.launcher = argv;
        o.timeout = 10;
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        probe_checks(&g, &o, &p, &run, &dev);
        left = processes_holding(root, true);
        ck_assert_msg(left == 0, "%zu processes it detached survived", left);
        ck_assert_msg(p.ran, "probe did not run: %s", p.launch_error);
        assert_check(&run, CHECK_PASS, "libcudart.so.12 12.4 (12040)");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

/* At the timeout, what a hung launcher put in sessions of its own is
 * killed with it, and the message says so. */
START_TEST(hung_launcher_and_what_it_detached_are_killed_at_the_timeout)
{
        char *root = root_new();
        _cleanup_free_ char *script = make_stray_launcher(
                root, "bin/hang-detached",
                "setsid \"$STRAY\" 300 &\n( setsid \"$STRAY\" 301 </dev/null >/dev/null 2>&1 & )\nsleep 300\n");
        char *argv[] = { script, NULL };
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;
        struct timespec t0;
        size_t left;
        double took;

        make_standard(root);
        o.launcher = argv;
        o.timeout = 1;
        target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        probe_checks(&g, &o, &p, &run, &dev);
        took = seconds_since(&t0);
        left = processes_holding(root, true);
        ck_assert_msg(left == 0, "%zu processes it detached survived", left);
        /* The timeout, and the 2 s from SIGTERM to SIGKILL at most. */
        ck_assert_msg(took < 4.5, "took %.1f s", took);
        ck_assert(p.launcher_failed);
        ck_assert_msg(strstr(p.launch_error, "timed out after 1 s, killed, and 2 processes it had left behind"),
                      "'%s'", p.launch_error);
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(failing_or_garbled_runs_are_reported)
{
        static const struct {
                const char *body;
                bool launcher_failed;
                const char *words[2];
        } cases[] = {
                { "echo 'srun: error: no partition gpu' >&2\nexit 3\n", true,
                  { "exit status 3", "srun: error: no partition gpu" } },
                /* More output than is kept: read, dropped, no deadlock. */
                { "head -c 3000000 /dev/zero | tr '\\000' x >&2\necho >&2\necho last words >&2\nexit 1\n", true,
                  { "exit status 1", "last words" } },
                { "echo 'this is not JSON'\n", false, { "unreadable output", "line 1" } },
                { "echo '{\"probe\": 7}'\n", false, { "unreadable output", "not a cudamod-probe document" } },
                { NULL },
        };
        char *root = root_new();

        make_standard(root);
        for (size_t i = 0; cases[i].body; i++) {
                _cleanup_free_ char *rel = xasprintf("bin/launch%zu", i);
                _cleanup_free_ char *script = make_script(root, rel, cases[i].body);
                char *argv[] = { script, NULL };
                struct validate_options o = options(NULL);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;

                o.launcher = argv;
                target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
                probe_checks(&g, &o, &p, &run, &dev);
                ck_assert(!p.ran);
                ck_assert_int_eq(p.launcher_failed, cases[i].launcher_failed);
                ck_assert_msg(strlen(p.launch_error) < 4096, "launch_error is %zu bytes", strlen(p.launch_error));
                assert_check(&run, CHECK_FAIL, cases[i].words[0], cases[i].words[1]);
                probe_report_release(&p);
                check_release(&run);
                check_release(&dev);
                target_release(&g);
        }
        fx_free(root);
}
END_TEST

/* A launcher or a node that answers a compute capability holding shell
 * code: it would go into the index and from there into TORCH_CUDA_ARCH_LIST
 * (pytorch.cuda_arch_list: detect), so the answer is not taken. */
START_TEST(probe_answer_with_a_hostile_compute_capability_is_refused)
{
        static const char *const ccs[] = { "9.0\\n/tmp/evil.sh", "9.0;/tmp/x", "\\u001b[2J", "9", "", NULL };
        char *root = root_new();

        make_standard(root);
        for (size_t i = 0; ccs[i]; i++) {
                _cleanup_free_ char *rel = xasprintf("bin/liar%zu", i);
                _cleanup_free_ char *body = xasprintf(
                        "cat <<'EOF'\n{\"probe\": 1, \"cudart\": {\"loaded\": true, \"runtime_version\": 12040, "
                        "\"driver_version\": 12040, \"device_count\": 1}, \"driver\": {\"loaded\": true, "
                        "\"version\": 12040, \"devices\": [{\"index\": 0, \"name\": \"H100\", "
                        "\"compute_capability\": \"%s\", \"memory_mib\": 1}]}}\nEOF\n", ccs[i]);
                _cleanup_free_ char *script = make_script(root, rel, body);
                char *argv[] = { script, NULL };
                struct validate_options o = options(NULL);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;

                o.launcher = argv;
                target_init(&g, root, "cuda/12.4", cuda_lib, cuda_inc, NULL, NULL);
                probe_checks(&g, &o, &p, &run, &dev);
                ck_assert_msg(!p.ran, "compute capability '%s' taken", ccs[i]);
                assert_check(&run, CHECK_FAIL, "unreadable output", "compute_capability");
                probe_report_release(&p);
                check_release(&run);
                check_release(&dev);
                target_release(&g);
        }
        fx_free(root);
}
END_TEST

START_TEST(report_release_is_idempotent)
{
        struct probe_report p = { 0 };

        probe_report_release(&p);
        ck_assert_int_eq(p.libs[component_cuda.index].version, -1);
        ck_assert_int_eq(p.driver_version, -1);
        probe_report_release(&p);
}
END_TEST

/* --- cuSPARSELt: a C++ header, the version by cusparseLtGetProperty ---- */

/* cuSPARSELt 0.8.1 at root/prefix: include/cusparseLt.h declaring
 * major.minor.patch (it includes <cstddef> and the toolkit's cusparse.h, as
 * the real one), lib/libcusparseLt.so.0 (the fake var) and the dev link;
 * cusparse.h and library_types.h in cuda/include. */
static void make_cusparselt(const char *root, const char *prefix, unsigned major, unsigned minor, unsigned patch,
                            const char *var)
{
        _cleanup_free_ char *h = xasprintf("%s/include/cusparseLt.h", prefix);
        _cleanup_free_ char *lib = xasprintf("%s/lib/libcusparseLt.so.0", prefix);
        _cleanup_free_ char *dev = xasprintf("%s/lib/libcusparseLt.so", prefix);
        _cleanup_free_ char *text = xasprintf("#if !defined(CUSPARSELT_HEADER_)\n"
                                              "#define CUSPARSELT_HEADER_\n"
                                              "#include \"cusparse.h\"\n"
                                              "#include <cstddef>\n"
                                              "#include <library_types.h>\n"
                                              "#define CUSPARSELT_VER_MAJOR %u\n"
                                              "#define CUSPARSELT_VER_MINOR %u\n"
                                              "#define CUSPARSELT_VER_PATCH %u\n"
                                              "#define CUSPARSELT_VER_BUILD 1\n"
                                              "extern \"C\" cusparseStatus_t cusparseLtGetProperty(libraryPropertyType propertyType, int *value);\n"
                                              "#endif\n",
                                              major, minor, patch);

        fx_write(root, h, text);
        fx_write(root, "cuda/include/cusparse.h", "typedef enum { CUSPARSE_STATUS_SUCCESS = 0 } cusparseStatus_t;\n");
        fx_write(root, "cuda/include/library_types.h",
                 "typedef enum libraryPropertyType_t { MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL } libraryPropertyType;\n");
        fx_fake_library(root, lib, var);
        fx_symlink(root, dev, "libcusparseLt.so.0");
}

static const char *const cusparselt_lib[] = { "cusparselt/lib", NULL };
static const char *const cusparselt_inc[] = { "cusparselt/include", NULL };

/* Without the toolkit's headers the real cusparseLt.h does not compile
 * either (the build with them is build_passes_for_a_library_component's). */
START_TEST(cusparselt_build_fails_without_the_toolkit_headers)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct check c = { 0 };
        struct target g;

        make_standard(root);
        make_cusparselt(root, "cusparselt", 0, 8, 1, "CUSPARSELT");
        target_init(&g, root, "cusparselt/0.8.1", cusparselt_lib, cusparselt_inc, cuda_lib, NULL);
        check_build(&g.t, &o, &c);
        assert_check(&c, CHECK_FAIL, "cusparseLt.h", "CPATH does not reach a header");
        check_release(&c);
        target_release(&g);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_run_reads_the_version_by_get_property)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        make_cusparselt(root, "cusparselt", 0, 8, 1, "CUSPARSELT");
        target_init(&g, root, "cusparselt/0.8.1", cusparselt_lib, cusparselt_inc, cuda_lib, cuda_inc);
        probe_checks(&g, &o, &p, &run, &dev);
        ck_assert_int_eq(p.libs[component_cusparselt.index].version, 801);
        assert_check(&run, CHECK_PASS, "libcusparseLt.so.0 0.8.1 (801)", "equal to", "cusparseLt.h",
                     "agrees with the module version 0.8.1");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_run_fails_when_header_and_library_disagree)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        /* The header says 0.7.1, the library 0.8.1. */
        make_standard(root);
        make_cusparselt(root, "cusparselt", 0, 7, 1, "CUSPARSELT");
        target_init(&g, root, "cusparselt/0.8.1", cusparselt_lib, cusparselt_inc, cuda_lib, cuda_inc);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_FAIL, "libcusparseLt.so.0 is 0.8.1 (801)", "declares 0.7.1 (701)", "cusparseLt.h",
                     "different installs");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

START_TEST(cusparselt_run_fails_when_get_property_fails)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct probe_report p;
        struct check run = { 0 }, dev = { 0 };
        struct target g;

        make_standard(root);
        make_cusparselt(root, "cusparselt", 0, 8, 1, "CUSPARSELT_BROKEN");
        target_init(&g, root, "cusparselt/0.8.1", cusparselt_lib, cusparselt_inc, cuda_lib, cuda_inc);
        probe_checks(&g, &o, &p, &run, &dev);
        assert_check(&run, CHECK_FAIL, "libcusparseLt.so.0", "did not tell its version",
                     "cusparseLtGetProperty(0) failed: error 7");
        probe_checks_release(&g, &p, &run, &dev);
        fx_free(root);
}
END_TEST

/* The probe asks libcudss.so.0 by cudssGetProperty: 0.7.1 is 701. */
START_TEST(run_passes_for_cudss_and_fails_when_its_header_disagrees)
{
        static const struct {
                int minor;
                enum check_status want;
                const char *words[3];
        } cases[] = {
                { 7, CHECK_PASS, { "libcudss.so.0 0.7.1 (701)", "cudss.h", "0.7.1" } },
                { 6, CHECK_FAIL, { "libcudss.so.0 is 0.7.1 (701)", "declares 0.6.1 (601)", "cudss.h" } },
                { -1 },
        };
        char *root = root_new();

        make_standard(root);
        for (size_t i = 0; cases[i].minor >= 0; i++) {
                _cleanup_free_ char *driver = path_join(root, "driver");
                struct validate_options o = options(driver);
                struct probe_report p;
                struct check run = { 0 }, dev = { 0 };
                struct target g;

                make_cudss(root, "cudss", 0, cases[i].minor, 1);
                target_init(&g, root, "cudss/0.7.1", cudss_lib, cudss_inc, cuda_lib, cuda_inc);
                probe_checks(&g, &o, &p, &run, &dev);
                assert_check(&run, cases[i].want, cases[i].words[0], cases[i].words[1], cases[i].words[2]);
                probe_report_release(&p);
                check_release(&run);
                check_release(&dev);
                target_release(&g);
        }
        fx_free(root);
}
END_TEST

/* --- the build of each library component -------------------------------- */

static void make_cudss_071(const char *root)
{
        make_standard(root);
        make_cudss(root, "cudss", 0, 7, 1);
}

static void make_magma_290(const char *root)
{
        make_standard(root);
        make_magma(root, "magma", "2.9.0", false, "MAGMA");
}

static void make_nvshmem_345(const char *root)
{
        make_cuda(root, "cuda", 12040, "CUDART12", "libcudart.so.12");
        make_nvshmem(root, "nvshmem", 5);
}

static void make_cusparselt_081(const char *root)
{
        make_standard(root);
        make_cusparselt(root, "cusparselt", 0, 8, 1, "CUSPARSELT");
}

/* The module's header and -l with its paths and its CUDA's:
 * cudssGetProperty is the call cuDSS has instead of a GetVersion;
 * magma_v2.h needs no CUDA header here (the real one does: cuda_inc);
 * nvshmem.h and cusparseLt.h need C++. */
static const struct {
        const char *module;
        void (*make)(const char *root);
        const char *const *lib, *const *inc;
        const struct component *kind;
        const char *words[4];
} library_builds[] = {
        { "cudss/0.7.1", make_cudss_071, cudss_lib, cudss_inc, &component_cudss,
          { "cudss.h", "-lcudss", "compiles and links" } },
        { "magma/2.9.0", make_magma_290, magma_lib, magma_inc, &component_magma,
          { "magma_v2.h", "-lmagma", "compiles and links" } },
        { "nvshmem/3.4.5", make_nvshmem_345, nvshmem_lib, nvshmem_inc, &component_nvshmem,
          { "nvshmem.h", "-lnvshmem_host", "compiles and links" } },
        { "cusparselt/0.8.1", make_cusparselt_081, cusparselt_lib, cusparselt_inc, &component_cusparselt,
          { "cusparseLt.h", "-lcusparseLt", "compiles and links", "c++" } },
};

START_TEST(build_passes_for_a_library_component)
{
        char *root = root_new();
        struct validate_options o = options(NULL);
        struct check c = { 0 };
        struct target g;

        library_builds[_i].make(root);
        target_init(&g, root, library_builds[_i].module, library_builds[_i].lib, library_builds[_i].inc,
                    cuda_lib, cuda_inc);
        ck_assert_ptr_eq(g.t.kind, library_builds[_i].kind);
        check_build(&g.t, &o, &c);
        assert_check(&c, CHECK_PASS, library_builds[_i].words[0], library_builds[_i].words[1],
                     library_builds[_i].words[2]);
        if (library_builds[_i].words[3])
                assert_check(&c, CHECK_PASS, library_builds[_i].words[3]);
        check_release(&c);
        target_release(&g);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("validate-probe");
        TCase *tc = tcase_create("validate-probe");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, build_passes_for_each_kind_with_module_paths_only);
        tcase_add_loop_test(tc, build_passes_for_a_library_component, 0, (int)ELEMENTSOF(library_builds));
        tcase_add_test(tc, run_passes_for_cudss_and_fails_when_its_header_disagrees);
        tcase_add_test(tc, build_fails_when_cpath_lacks_the_header);
        tcase_add_test(tc, build_fails_when_library_path_lacks_the_library);
        tcase_add_test(tc, build_takes_cc_from_cudamods_path_not_the_modules);
        tcase_add_test(tc, validate_refuses_loader_variables_set_by_a_module);
        tcase_add_test(tc, build_skips_when_not_asked_without_compiler_or_for_other_modules);
        tcase_add_test(tc, build_removes_its_temporary_directory);
        tcase_add_test(tc, run_and_device_pass_for_a_cuda_module_on_two_gpus);
        tcase_add_test(tc, run_fails_when_header_and_library_disagree);
        tcase_add_test(tc, run_fails_when_the_module_version_disagrees);
        tcase_add_test(tc, run_warns_without_a_header_to_compare);
        tcase_add_test(tc, run_reads_the_version_of_cuda_11_without_a_driver);
        tcase_add_test(tc, run_reads_cuda_11s_version_json_without_a_driver_and_fails_when_the_sources_disagree);
        tcase_add_test(tc, run_without_a_driver_fails_when_nothing_tells_the_version);
        tcase_add_test(tc, run_passes_for_cudnn_and_nccl_with_their_cuda);
        tcase_add_test(tc, run_fails_when_cudnn_targets_another_cuda_major);
        tcase_add_test(tc, run_passes_for_nvshmem);
        tcase_add_test(tc, run_fails_when_nvshmem_header_and_library_disagree);
        tcase_add_test(tc, run_reads_cudnn_8_versions);
        tcase_add_test(tc, run_fails_when_another_copy_comes_first);
        tcase_add_test(tc, run_fails_when_the_library_cannot_be_loaded);
        tcase_add_test(tc, run_and_device_skip_other_modules);
        tcase_add_test(tc, run_checks_magma_against_its_header);
        tcase_add_test(tc, static_magma_module_is_not_run);
        tcase_add_test(tc, device_fails_with_a_driver_older_than_the_runtime);
        tcase_add_test(tc, device_without_driver_or_gpu_skips_unless_required);
        tcase_add_test(tc, launcher_that_cannot_start_is_reported_as_the_launchers);
        tcase_add_test(tc, probe_that_cannot_start_is_not_the_launchers);
        tcase_add_test(tc, probe_crashed_by_a_library_says_where);
        tcase_add_test(tc, working_launchers_pass_the_environment_through);
        tcase_add_test(tc, hung_launcher_is_killed_at_the_timeout);
        tcase_add_test(tc, failing_or_garbled_runs_are_reported);
        tcase_add_test(tc, probe_answer_with_a_hostile_compute_capability_is_refused);
        tcase_add_test(tc, report_release_is_idempotent);
        tcase_add_test(tc, cusparselt_build_fails_without_the_toolkit_headers);
        tcase_add_test(tc, cusparselt_run_reads_the_version_by_get_property);
        tcase_add_test(tc, cusparselt_run_fails_when_header_and_library_disagree);
        tcase_add_test(tc, cusparselt_run_fails_when_get_property_fails);
        suite_add_tcase(s, tc);
        /* Each waits out a hold or a timeout: seconds, not the default 4. */
        tc = tcase_create("leftovers");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, launcher_whose_leftovers_hold_its_output_is_not_reported_as_timed_out);
        tcase_add_test(tc, processes_a_launcher_detached_are_killed_when_it_exits);
        tcase_add_test(tc, hung_launcher_and_what_it_detached_are_killed_at_the_timeout);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
