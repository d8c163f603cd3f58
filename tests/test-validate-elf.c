/* test-validate-elf.c: the closure and lazy checks on stub install trees:
 * each passes on a sound tree and fails, for the right reason, on a broken
 * one. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "component-cuda.h"
#include "component-cudnn.h"
#include "component-nccl.h"
#include "component.h"
#include "fixture.h"
#include "resolve.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "validate-elf.h"
#include "banned.h"

#define CUDA_LIB "cuda/targets/x86_64-linux/lib"

static char *root;
static char env_path[] = "PATH=/usr/bin:/bin", env_home[] = "HOME=/nonexistent";
static char *const env[] = { env_path, env_home, NULL };

static void setup(void)
{
        root = fx_new();
}

static void teardown(void)
{
        fx_free(root);
        root = NULL;
}

/* A module under test of this kind whose own library directories and
 * LD_LIBRARY_PATH are the given directories below root. */
static void target_init(struct validate_module *t, const struct component *kind, const char *const *own,
                        const char *const *llp)
{
        *t = (struct validate_module){
                .module = "test/1.0", .name = "test", .version = "1.0", .file = "/dev/null",
                .kind = kind, .env = env,
        };
        for (; own && *own; own++)
                strv_push(&t->own_libdirs, path_join(root, *own));
        for (; llp && *llp; llp++)
                strv_push(&t->ld_library_path, path_join(root, *llp));
}

static void target_release(struct validate_module *t)
{
        strv_release(&t->own_libdirs);
        strv_release(&t->own_incdirs);
        strv_release(&t->ld_library_path);
}

/* Run check on t and assert its status and that its message holds each of
 * words (NULL-terminated). */
static void assert_check(void (*check)(const struct validate_module *, struct check *),
                         const struct validate_module *t, const char *id, enum check_status want,
                         const char *const *words)
{
        struct check c = { 0 };

        check(t, &c);
        ck_assert_str_eq(c.id, id);
        ck_assert_ptr_nonnull(c.message);
        ck_assert_msg(c.status == want, "status %s, want %s: %s", check_status_to_string(c.status),
                      check_status_to_string(want), c.message);
        for (; words && *words; words++)
                ck_assert_msg(strstr(c.message, *words), "'%s' not in: %s", *words, c.message);
        check_release(&c);
}

#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void cudnn9(const char *prefix, const char *version, unsigned cuda_major)
{
        fx_cudnn(root, prefix, &(struct fx_cudnn){ .version = version, .cuda_major = cuda_major });
}

static void toolkit(const char *version, const char *cudart)
{
        fx_cuda_toolkit(root, "cuda", &(struct fx_cuda){
                .version = version, .release = version, .cudart = cudart, .nvcc = cudart,
        });
}

static void rm(const char *rel)
{
        _cleanup_free_ char *p = path_join(root, rel);

        ck_assert_msg(unlink(p) == 0, "unlink '%s'", p);
}

/* Whether this host's loader path outside the test tree (ld.so.cache,
 * default directories) provides one of sonames: then a test that needs
 * them missing cannot tell anything here and passes vacuously. */
static bool host_provides(const char *const *sonames)
{
        struct elfstub s = { .soname = "libprobe.so.1" };
        _cleanup_free_ char *obj = path_join(root, "host-probe/libprobe.so.1");
        struct elf_info info = { 0 };
        struct ldcache *cache = NULL;
        struct resolve_env e;
        bool found = false;

        fx_elf(root, obj, &s);
        ck_assert_int_eq(elf_read_info(AT_FDCWD, obj, &info, NULL), 0);
        (void)ldcache_load(NULL, &cache, NULL);
        resolve_env_init(&e, NULL, cache);
        for (; *sonames && !found; sonames++) {
                struct resolved r;
                ck_assert_int_eq(resolve_needed(&e, obj, &info, *sonames, &r, NULL), 0);
                found = r.source != RESOLVE_NOT_FOUND;
                resolved_release(&r);
        }
        resolve_env_release(&e);
        ldcache_free(cache);
        elf_info_release(&info);
        return found;
}

/* --- closure ------------------------------------------------------------ */

START_TEST(closure_passes_and_leaves_the_driver_library)
{
        struct validate_module t;

        fx_library(root, "m/lib", "libfoo", "1", "1.2.3", 0,
                   WORDS("libbar.so.1", "libcuda.so.1", "libc.so.6"), NULL);
        fx_library(root, "dep/lib", "libbar", "1", NULL, 0, NULL, NULL);
        target_init(&t, NULL, WORDS("m/lib"), WORDS("m/lib", "dep/lib"));
        assert_check(check_closure, &t, "closure", CHECK_PASS,
                     WORDS("1 library, 3 needs resolved", "libcuda.so.1 left to the driver"));
        target_release(&t);
}
END_TEST

START_TEST(closure_fails_on_a_need_that_resolves_nowhere)
{
        struct validate_module t;

        if (host_provides(WORDS("libcublasLt.so.12")))
                return;
        fx_library(root, "m/lib", "libfoo", "1", "1.2.3", 0,
                   WORDS("libcublasLt.so.12", "libcudamod-nowhere.so.3", "libc.so.6"), NULL);
        fx_library(root, "m/lib", "libok", "1", NULL, 0, WORDS("libfoo.so.1"), NULL);
        target_init(&t, NULL, WORDS("m/lib"), WORDS("m/lib"));
        assert_check(check_closure, &t, "closure", CHECK_FAIL,
                     WORDS("2 libraries, 4 needs; some do not resolve",
                           "libfoo.so.1 needs libcublasLt.so.12 and libcudamod-nowhere.so.3, which resolve nowhere",
                           "load a cuda/12.x module", "install it"));
        target_release(&t);
}
END_TEST

/* A module for a system install (Debian's: CUDA_HOME names
 * /usr/lib/nvidia-cuda-toolkit, no LD_LIBRARY_PATH, since the loader
 * searches /usr/lib/<triple>) is checked against those directories, and
 * only the kind's libraries there are its own: another package's library
 * with a need that resolves nowhere is not the module's failure. */
START_TEST(system_install_module_is_checked_against_the_system_directories)
{
        _cleanup_free_ char *libdir = path_join(root, "usr/lib/x86_64-linux-gnu");
        _cleanup_free_ char *incdir = path_join(root, "usr/include");
        struct strv set = { 0 };
        struct validate_module t;

        fx_library(root, "usr/lib/x86_64-linux-gnu", "libcudart", "12", "12.4.127", 0, WORDS("libc.so.6"), NULL);
        fx_library(root, "usr/lib/x86_64-linux-gnu", "libcudamod-other", "1", NULL, 0,
                   WORDS("libcudamod-nowhere.so.3"), NULL);
        fx_mkdir(root, "usr/include");
        fx_mkdir(root, "usr/lib/nvidia-cuda-toolkit");
        target_init(&t, NULL, NULL, NULL);
        t.name = "cuda";

        /* Not a system prefix: nothing changes. */
        strv_push(&set, xasprintf("CUDA_HOME=%s/usr/lib/nvidia-cuda-toolkit", root));
        validate_module_use_system_dirs(&t, &set, root);
        ck_assert(!t.system && !t.kind && t.own_libdirs.len == 0);
        strv_release(&set);

        strv_add(&set, "CUDA_HOME=/usr/lib/nvidia-cuda-toolkit");
        validate_module_use_system_dirs(&t, &set, root);
        ck_assert(t.system);
        ck_assert_ptr_eq(t.kind, &component_cuda);
        /* usr/lib/<triple>, then usr/lib (the loader's order). */
        ck_assert_uint_eq(t.own_libdirs.len, 2);
        ck_assert_str_eq(t.own_libdirs.items[0], libdir);
        ck_assert_uint_eq(t.own_incdirs.len, 1);
        ck_assert_str_eq(t.own_incdirs.items[0], incdir);
        assert_check(check_closure, &t, "closure", CHECK_PASS, WORDS("1 library, 1 need resolved"));
        target_release(&t);

        /* A module whose name is no component is left alone. */
        target_init(&t, NULL, NULL, NULL);
        t.name = "gcc";
        validate_module_use_system_dirs(&t, &set, root);
        ck_assert(!t.system && !t.kind && t.own_libdirs.len == 0);
        target_release(&t);
        strv_release(&set);
}
END_TEST

START_TEST(closure_cudnn8_for_cuda12_with_cuda13_fails)
{
        struct validate_module t;

        if (host_provides(WORDS("libcublas.so.12", "libcublasLt.so.12")))
                return;
        fx_cudnn(root, "cudnn", &(struct fx_cudnn){ .version = "8.9.7", .cuda_major = 12 });
        toolkit("13.0", "13.0.88");
        target_init(&t, &component_cudnn, WORDS("cudnn/lib"), WORDS("cudnn/lib", CUDA_LIB));
        assert_check(check_closure, &t, "closure", CHECK_FAIL,
                     WORDS("libcudnn_ops_infer.so.8 needs libcublas.so.12 and libcublasLt.so.12",
                           "load a cuda/12.x module"));
        target_release(&t);
}
END_TEST

START_TEST(closure_skips_without_libraries)
{
        struct validate_module t;

        fx_write(root, "m/lib/README", "nothing\n");
        target_init(&t, NULL, WORDS("m/lib"), WORDS("m/lib"));
        assert_check(check_closure, &t, "closure", CHECK_SKIP, WORDS("no shared library"));
        target_release(&t);
}
END_TEST

START_TEST(closure_warns_on_driver_library_inside_the_module)
{
        struct validate_module t;

        fx_library(root, "m/lib", "libcuda", "1", "550.54.15", 0, WORDS("libc.so.6"), NULL);
        target_init(&t, NULL, WORDS("m/lib"), WORDS("m/lib"));
        assert_check(check_closure, &t, "closure", CHECK_WARN,
                     WORDS("1 library, 1 need resolved", "m/lib/libcuda.so' is a driver library inside the module",
                           "remove it"));
        target_release(&t);
}
END_TEST

/* --- lazy: cuDNN -------------------------------------------------------- */

static void cudnn_target(struct validate_module *t, const char *const *llp)
{
        target_init(t, &component_cudnn, WORDS("cudnn/lib"), llp);
}

START_TEST(lazy_cudnn_passes_with_its_cuda)
{
        struct validate_module t;

        cudnn9("cudnn", "9.7.1", 12);
        toolkit("12.4", "12.4.127");
        cudnn_target(&t, WORDS("cudnn/lib", CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_PASS,
                     WORDS("cuDNN 9.7.1", "7 sub-libraries resolve there, all 9.7.1", "CUDA 12",
                           "libcublasLt.so.12 and libnvrtc.so.12 resolve"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_cudnn_for_cuda12_with_only_cuda13_fails)
{
        struct validate_module t;

        if (host_provides(WORDS("libcublasLt.so.12", "libnvrtc.so.12")))
                return;
        cudnn9("cudnn", "9.7.1", 12);
        toolkit("13.0", "13.0.88");
        cudnn_target(&t, WORDS("cudnn/lib", CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_FAIL,
                     WORDS("built for CUDA 12", "libcublasLt.so.12 and libnvrtc.so.12 resolve nowhere",
                           "load a cuda/12.x module or install a cuDNN built for CUDA 13"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_cudnn_missing_sub_library_fails)
{
        struct validate_module t;

        cudnn9("cudnn", "9.7.1", 12);
        toolkit("12.4", "12.4.127");
        rm("cudnn/lib/libcudnn_cnn.so.9.7.1");
        rm("cudnn/lib/libcudnn_cnn.so.9");
        rm("cudnn/lib/libcudnn_cnn.so");
        cudnn_target(&t, WORDS("cudnn/lib", CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_FAIL,
                     WORDS("libcudnn.so.9 loads libcudnn_cnn.so.9, which is missing from its directory",
                           "SUBLIBRARY_LOADING_FAILED", "incomplete", "reinstall cuDNN 9.7.1"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_cudnn_two_versions_reachable_fails)
{
        struct validate_module t;

        cudnn9("cudnn", "9.7.1", 12);
        cudnn9("other", "9.1.0", 12);
        toolkit("12.4", "12.4.127");
        cudnn_target(&t, WORDS("cudnn/lib", "other/lib", CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_FAIL,
                     WORDS("two cuDNN versions are reachable", "9.7.1 in '", "9.1.0 in '",
                           "unload the other cudnn module"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_cudnn_sub_library_from_another_directory_fails)
{
        struct validate_module t;

        cudnn9("cudnn", "9.7.1", 12);
        toolkit("12.4", "12.4.127");
        fx_library(root, "stray/lib", "libcudnn_ops", "9", "9.1.0", 0, NULL, NULL);
        cudnn_target(&t, WORDS("stray/lib", "cudnn/lib", CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_FAIL,
                     WORDS("libcudnn_ops.so.9 resolves to '", "stray/lib/libcudnn_ops.so.9'",
                           "not to libcudnn's directory", "VERSION_MISMATCH",
                           "stray/lib' from LD_LIBRARY_PATH"));
        target_release(&t);
}
END_TEST

/* --- lazy: cuSPARSE and libnvJitLink ------------------------------------ */

/* A CUDA 12.4 toolkit with cuSPARSE (file version 12.3.1.170) and its
 * libnvJitLink 12.4.127. */
static void toolkit_with_cusparse(void)
{
        toolkit("12.4", "12.4.127");
        fx_library(root, CUDA_LIB, "libcusparse", "12", "12.3.1.170", 0,
                   WORDS("libnvJitLink.so.12", "libc.so.6"), NULL);
        fx_library(root, CUDA_LIB, "libnvJitLink", "12", "12.4.127", 0, NULL, NULL);
}

START_TEST(lazy_cuda_nvjitlink_of_the_same_toolkit_passes)
{
        struct validate_module t;

        toolkit_with_cusparse();
        target_init(&t, &component_cuda, WORDS(CUDA_LIB), WORDS(CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_PASS,
                     WORDS("libnvJitLink.so.12 resolves to '", "same toolkit as libcusparse.so.12"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_cuda_newer_nvjitlink_elsewhere_passes)
{
        struct validate_module t;

        toolkit_with_cusparse();
        fx_library(root, "new/lib", "libnvJitLink", "12", "12.6.77", 0, NULL, NULL);
        target_init(&t, &component_cuda, WORDS(CUDA_LIB), WORDS("new/lib", CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_PASS, WORDS("new/lib/libnvJitLink.so.12'"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_cuda_older_nvjitlink_fails)
{
        struct validate_module t;

        toolkit_with_cusparse();
        fx_library(root, "old/lib", "libnvJitLink", "12", "12.1.105", 0, NULL, NULL);
        target_init(&t, &component_cuda, WORDS(CUDA_LIB), WORDS("old/lib", CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_FAIL,
                     WORDS("old/lib/libnvJitLink.so.12' (12.1.105, through LD_LIBRARY_PATH)",
                           "older than the CUDA 12.4 toolkit", "__nvJitLinkComplete_12_4",
                           "unload the older cuda module"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_cuda_unknown_versions_warn)
{
        struct validate_module t;

        toolkit_with_cusparse();
        fx_library(root, "wheel/lib", "libnvJitLink", "12", NULL, 0, NULL, NULL);
        target_init(&t, &component_cuda, WORDS(CUDA_LIB), WORDS("wheel/lib", CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_WARN, WORDS("cannot be compared"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_cuda_without_cusparse_skips)
{
        struct validate_module t;

        toolkit("12.4", "12.4.127");
        target_init(&t, &component_cuda, WORDS(CUDA_LIB), WORDS(CUDA_LIB));
        assert_check(check_lazy, &t, "lazy", CHECK_SKIP, WORDS("no libcusparse"));
        target_release(&t);
}
END_TEST

START_TEST(lazy_other_kinds_skip)
{
        struct validate_module t;

        fx_library(root, "m/lib", "libfoo", "1", NULL, 0, NULL, NULL);
        target_init(&t, NULL, WORDS("m/lib"), WORDS("m/lib"));
        assert_check(check_lazy, &t, "lazy", CHECK_SKIP, WORDS("not a cuda or cudnn module"));
        t.kind = &component_nccl;
        assert_check(check_lazy, &t, "lazy", CHECK_SKIP, WORDS("NCCL"));
        target_release(&t);
}
END_TEST

static Suite *validate_elf_suite(void)
{
        Suite *s = suite_create("validate-elf");
        TCase *cl = tcase_create("closure");
        TCase *lz = tcase_create("lazy");

        tcase_add_checked_fixture(cl, setup, teardown);
        tcase_add_test(cl, closure_passes_and_leaves_the_driver_library);
        tcase_add_test(cl, closure_fails_on_a_need_that_resolves_nowhere);
        tcase_add_test(cl, system_install_module_is_checked_against_the_system_directories);
        tcase_add_test(cl, closure_cudnn8_for_cuda12_with_cuda13_fails);
        tcase_add_test(cl, closure_skips_without_libraries);
        tcase_add_test(cl, closure_warns_on_driver_library_inside_the_module);
        suite_add_tcase(s, cl);

        tcase_add_checked_fixture(lz, setup, teardown);
        tcase_add_test(lz, lazy_cudnn_passes_with_its_cuda);
        tcase_add_test(lz, lazy_cudnn_for_cuda12_with_only_cuda13_fails);
        tcase_add_test(lz, lazy_cudnn_missing_sub_library_fails);
        tcase_add_test(lz, lazy_cudnn_two_versions_reachable_fails);
        tcase_add_test(lz, lazy_cudnn_sub_library_from_another_directory_fails);
        tcase_add_test(lz, lazy_cuda_nvjitlink_of_the_same_toolkit_passes);
        tcase_add_test(lz, lazy_cuda_newer_nvjitlink_elsewhere_passes);
        tcase_add_test(lz, lazy_cuda_older_nvjitlink_fails);
        tcase_add_test(lz, lazy_cuda_unknown_versions_warn);
        tcase_add_test(lz, lazy_cuda_without_cusparse_skips);
        tcase_add_test(lz, lazy_other_kinds_skip);
        suite_add_tcase(s, lz);
        return s;
}

int main(void)
{
        return run_suite(validate_elf_suite());
}
