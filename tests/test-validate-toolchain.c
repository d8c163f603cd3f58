/* test-validate-toolchain.c: the nvcc and cmake checks
 * (validate-toolchain.c): crt/host_config.h read on the real CUDA 13.0
 * header (where /usr/local/cuda-13.0 is) and on recorded 11.8 and 12.6
 * shapes (tests/data/host_config/), a compiler's identity from its
 * macros, and check_nvcc on a toolkit in a temporary directory whose nvcc
 * and host compilers are small scripts (so that the outcome does not
 * depend on this machine's gcc), and on the real 13.0 toolkit. */
#include <check.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "component-table.h"
#include "fixture.h"
#include "strbuf.h"
#include "testutil.h"
#include "toolchain.h"
#include "util.h"
#include "validate-toolchain.h"
#include "banned.h"

#define REAL_CUDA "/usr/local/cuda-13.0"

static struct host_limits parse_file(const char *path)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        struct host_limits l;

        ck_assert_msg(strbuf_read_file(&sb, path, 1 << 20) == 0, "cannot read '%s'", path);
        ck_assert_int_eq(host_config_parse(sb.buf, sb.len, &l), 0);
        return l;
}

static char *data_path(const char *name)
{
        const char *src = getenv("CUDAMOD_SOURCE_ROOT");

        ck_assert_msg(src != NULL, "CUDAMOD_SOURCE_ROOT is not set (run the tests with meson test)");
        return xasprintf("%s/tests/data/host_config/%s", src, name);
}

START_TEST(host_config_of_cuda_11_8_accepts_gcc_11_and_clang_14)
{
        _cleanup_free_ char *p = data_path("cuda-11.8.h");
        struct host_limits l = parse_file(p);

        ck_assert_int_eq(l.gcc_max, 11);
        ck_assert(l.gcc_enforced);
        ck_assert_int_eq(l.clang_max, 14);
        ck_assert(l.clang_enforced);
}
END_TEST

START_TEST(host_config_of_cuda_12_6_accepts_gcc_13_and_clang_18)
{
        _cleanup_free_ char *p = data_path("cuda-12.6.h");
        struct host_limits l = parse_file(p);

        ck_assert_int_eq(l.gcc_max, 13);
        ck_assert(l.gcc_enforced);
        ck_assert_int_eq(l.clang_max, 18);
        ck_assert(l.clang_enforced);
}
END_TEST

/* The real header has a Grace clang block (16 to 20) and a HOS clang
 * block before the plain one: neither is the clang limit. */
START_TEST(host_config_of_the_real_cuda_13_0_accepts_gcc_15_and_clang_20)
{
        const char *h = REAL_CUDA "/include/crt/host_config.h";
        struct host_limits l;

        if (access(h, R_OK) != 0) {
                fprintf(stderr, "SKIP host_config_of_the_real_cuda_13_0: no %s\n", h);
                return;
        }
        l = parse_file(h);
        ck_assert_int_eq(l.gcc_max, 15);
        ck_assert(l.gcc_enforced);
        ck_assert_int_eq(l.clang_max, 20);
        ck_assert(l.clang_enforced);
}
END_TEST

START_TEST(host_config_without_its_errors_is_a_disabled_check)
{
        _cleanup_free_ char *p = data_path("disabled.h");
        struct host_limits l = parse_file(p);

        ck_assert_int_eq(l.gcc_max, 9);
        ck_assert(!l.gcc_enforced);
        ck_assert_int_eq(l.clang_max, 9);
        ck_assert(!l.clang_enforced);
}
END_TEST

START_TEST(host_config_that_states_no_limit_is_enoent)
{
        static const char *const texts[] = {
                "",
                "#pragma once\n#define X 1\n",
                /* a limit outside the GCC block is not one */
                "#if __GNUC__ > 11\n#error no\n#endif\n",
                /* the Grace block alone */
                "#if defined(__GRCO_CLANG_COMPILER__)\n"
                "#if (__GRCO_CLANG_COMPILER__ == 1) && ((__clang_major__ < 16) || (__clang_major__ > 20))\n"
                "#error no\n#endif\n#endif\n",
                NULL,
        };
        struct host_limits l = { .gcc_max = 77 };

        for (size_t i = 0; texts[i]; i++)
                ck_assert_int_eq(host_config_parse(texts[i], strlen(texts[i]), &l), -ENOENT);
        ck_assert_int_eq(l.gcc_max, 77); /* untouched on error */
}
END_TEST

START_TEST(host_compiler_kind_and_version_come_from_its_macros)
{
        static const struct {
                const char *macros;
                enum host_compiler_kind kind;
                long major;
                const char *version;
        } cases[] = {
                { "#define __GNUC__ 12\n#define __GNUC_MINOR__ 2\n#define __GNUC_PATCHLEVEL__ 0\n",
                  HOST_COMPILER_GCC, 12, "12.2.0" },
                /* clang defines __GNUC__ 4 too */
                { "#define __GNUC__ 4\n#define __clang__ 1\n#define __clang_major__ 19\n"
                  "#define __clang_minor__ 1\n#define __clang_patchlevel__ 7\n",
                  HOST_COMPILER_CLANG, 19, "19.1.7" },
                { "#define __GNUC__ 4\n#define __clang__ 1\n#define __clang_major__ 18\n"
                  "#define __INTEL_CLANG_COMPILER 20240000\n",
                  HOST_COMPILER_INTEL, -1, "unknown" },
                /* a name that only ends like the macro is another macro */
                { "#define X__GNUC__ 3\n#define __GNUC__ 11\n", HOST_COMPILER_GCC, 11, "11.-1.-1" },
                { NULL, 0, 0, NULL },
        };
        struct host_compiler h;

        for (size_t i = 0; cases[i].macros; i++) {
                ck_assert_int_eq(host_compiler_from_macros(cases[i].macros, &h), 0);
                ck_assert_int_eq(h.kind, cases[i].kind);
                ck_assert_int_eq(h.major, cases[i].major);
                ck_assert_str_eq(h.version, cases[i].version);
                host_compiler_release(&h);
        }
        ck_assert_int_eq(host_compiler_from_macros("#define __STDC__ 1\n", &h), -ENOENT);
}
END_TEST

/* --- check_nvcc on a scripted toolkit --------------------------------- */

/* root/cuda: include/crt/host_config.h (GCC up to gcc_max, enforced),
 * include/cuda_runtime_api.h (CUDA 11.8), lib64/libcudart.so.11.0, and
 * bin/nvcc: a script that fails like nvcc with the header's #error when
 * the -ccbin it is given (else `gcc` on PATH) says a GCC above gcc_max,
 * else writes the program, which prints what the real one prints without
 * a driver, loading cudart from cudart_dir. root/hostbin: gcc (12) and
 * root/gcc11/bin/g++ (11), scripts that answer -E -dM as GCC does. */
static char *make_toolkit_reporting(long gcc_max, const char *cudart_dir, const char *report)
{
        char *root = fx_new();
        _cleanup_free_ char *hc = xasprintf("#if defined(__GNUC__)\n\n#if __GNUC__ > %ld\n\n"
                                            "#error -- unsupported GNU version! gcc versions later than %ld are not supported!\n\n"
                                            "#endif\n#endif\n",
                                            gcc_max, gcc_max);
        _cleanup_free_ char *lib = xasprintf("%s/cuda/lib64", root);
        _cleanup_free_ char *nvcc = xasprintf(
                "#!/bin/sh\n"
                "# --dryrun with FAKE_DRYRUN_HOST_DIR: print what a real nvcc whose\n"
                "# profile puts that directory on PATH would run.\n"
                "if [ \"$1\" = --dryrun ] && [ -n \"$FAKE_DRYRUN_HOST_DIR\" ]; then\n"
                "        echo \"#$ _HERE_=/x\" >&2\n"
                "        echo \"#$ PATH=$FAKE_DRYRUN_HOST_DIR:$PATH\" >&2\n"
                "        echo \"#$ INCLUDES=\\\"-I/x\\\"  \" >&2\n"
                "        echo \"#$ g++ -D__CUDA_ARCH_LIST__=520 -E -x c++ cudamod-nvcc.cu\" >&2\n"
                "        exit 0\n"
                "fi\n"
                "out= cc=gcc\n"
                "[ -n \"$FAKE_DRYRUN_HOST_DIR\" ] && cc=$FAKE_DRYRUN_HOST_DIR/g++\n"
                "for a in $NVCC_PREPEND_FLAGS \"$@\"; do\n"
                "        case $a in -ccbin=*) cc=${a#-ccbin=} ;; esac\n"
                "done\n"
                "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                "major=$(\"$cc\" -E -dM -x c++ /dev/null | sed -n 's/^#define __GNUC__ //p')\n"
                "if [ \"$major\" -gt %ld ]; then\n"
                "        echo \"In file included from cuda_runtime.h:83,\" >&2\n"
                "        echo \"host_config.h:3:2: error: #error -- unsupported GNU version! gcc versions later than %ld are not supported!\" >&2\n"
                "        echo \"    3 | #error -- unsupported GNU version!\" >&2\n"
                "        exit 1\n"
                "fi\n"
                "printf '#!/bin/sh\\necho \"cudart %s/libcudart.so.11.0\"\\nprintf \"%s\"\\n' > \"$out\"\n"
                "chmod +x \"$out\"\n",
                gcc_max, gcc_max, cudart_dir ? cudart_dir : lib, report);
        _cleanup_free_ char *p = NULL;

        fx_write(root, "cuda/include/crt/host_config.h", hc);
        fx_write(root, "cuda/include/cuda_runtime_api.h", "#define CUDART_VERSION 11080\n");
        fx_write(root, "cuda/lib64/libcudart.so.11.0", "");
        fx_write(root, "cuda/bin/nvcc", nvcc);
        fx_write(root, "hostbin/gcc", "#!/bin/sh\nprintf '#define __GNUC__ 12\\n#define __GNUC_MINOR__ 2\\n#define __GNUC_PATCHLEVEL__ 0\\n'\n");
        fx_write(root, "gcc11/bin/g++", "#!/bin/sh\nprintf '#define __GNUC__ 11\\n#define __GNUC_MINOR__ 3\\n#define __GNUC_PATCHLEVEL__ 0\\n'\n");
        ck_assert_int_eq(chmod(p = xasprintf("%s/cuda/bin/nvcc", root), 0755), 0);
        free(TAKE_PTR(p));
        ck_assert_int_eq(chmod(p = xasprintf("%s/hostbin/gcc", root), 0755), 0);
        free(TAKE_PTR(p));
        ck_assert_int_eq(chmod(p = xasprintf("%s/gcc11/bin/g++", root), 0755), 0);
        free(TAKE_PTR(p));
        return root;
}

static char *make_toolkit(long gcc_max, const char *cudart_dir)
{
        return make_toolkit_reporting(gcc_max, cudart_dir, "error 35 cudaErrorInsufficientDriver\\\\n");
}

/* The module under test: the toolkit at root/cuda with env (PATH first,
 * then extra "NAME=value" items). */
static void module_of(struct validate_module *m, struct strv *env, const char *root, const char *const *extra)
{
        strv_push(env, xasprintf("PATH=%s/cuda/bin:%s/hostbin:/usr/bin:/bin", root, root));
        strv_push(env, xasprintf("LD_LIBRARY_PATH=%s/cuda/lib64", root));
        for (size_t i = 0; extra && extra[i]; i++)
                strv_add(env, extra[i]);
        *m = (struct validate_module){
                .module = "cuda/11.8",
                .name = "cuda",
                .version = "11.8",
                .kind = component_toolkit(),
                .env = env->items,
        };
        strv_push(&m->own_libdirs, xasprintf("%s/cuda/lib64", root));
        strv_push(&m->own_incdirs, xasprintf("%s/cuda/include", root));
}

/* check_nvcc on the module of module_of, validate's own PATH (cc_path)
 * being root/hostbin:/usr/bin:/bin. */
static void run_nvcc(const char *root, const char *const *extra, struct check *ret)
{
        _cleanup_free_ char *cc_path = xasprintf("%s/hostbin:/usr/bin:/bin", root);
        struct validate_options o = { .compile = true, .timeout = 30, .cc_path = cc_path };
        struct validate_module m;
        _cleanup_(strv_release) struct strv env = { 0 };

        module_of(&m, &env, root, extra);
        *ret = (struct check){ 0 };
        check_nvcc(&m, &o, ret);
        m.env = NULL;
        validate_module_release(&m);
}

#define assert_has(msg, words) ck_assert_msg(strstr((msg), (words)), "'%s' not in: %s", (words), (msg))

START_TEST(nvcc_with_a_gcc_the_toolkit_refuses_fails_naming_both_and_the_fix)
{
        char *root = make_toolkit(11, NULL);
        _cleanup_free_ char *gcc = xasprintf("'%s/hostbin/gcc'", root);
        struct check c;

        run_nvcc(root, NULL, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        assert_has(c.message, gcc);
        assert_has(c.message, "is GCC 12.2.0");
        assert_has(c.message, "accepts GCC up to 11");
        assert_has(c.message, "host_compiler: {\"11\": /path/to/g++}");
        /* and nvcc's own first error line */
        assert_has(c.message, "error: #error -- unsupported GNU version! gcc versions later than 11");
        ck_assert_msg(!strstr(c.message, "    3 | #error"), "gcc's source echo quoted: %s", c.message);
        check_release(&c);
        fx_free(root);
}
END_TEST

/* CUDA 12.x's headers on glibc 2.41 or newer (Debian trixie): nvcc's host
 * pass stops at <bits/mathcalls.h> whatever the host compiler; the check
 * fails quoting nvcc and says that no host compiler helps. */
START_TEST(nvcc_failing_on_a_newer_glibc_says_no_host_compiler_helps)
{
        char *root = make_toolkit(13, NULL);
        _cleanup_free_ char *nvcc = xasprintf("%s/cuda/bin/nvcc", root);
        struct check c;

        fx_write(root, "cuda/bin/nvcc",
                 "#!/bin/sh\n"
                 "[ \"$1\" = --dryrun ] && exit 1\n"
                 "echo '/usr/include/x86_64-linux-gnu/bits/mathcalls.h(79): error: exception specification is "
                 "incompatible with that of previous function \"cospi\" (declared at line 5554 of "
                 "/x/include/crt/math_functions.h)' >&2\n"
                 "echo '1 error detected in the compilation of \"cudamod-nvcc.cu\".' >&2\n"
                 "exit 1\n");
        ck_assert_int_eq(chmod(nvcc, 0755), 0);
        run_nvcc(root, NULL, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        assert_has(c.message, "a .cu program does not build");
        assert_has(c.message, "without the noexcept this C library's <bits/mathcalls.h> gives them (glibc 2.41 and newer)");
        assert_has(c.message, "no host compiler helps");
        assert_has(c.message, "exception specification is incompatible with that of previous function \"cospi\"");
        check_release(&c);
        fx_free(root);
}
END_TEST

START_TEST(nvcc_with_ccbin_in_nvcc_prepend_flags_uses_it_and_runs_the_program)
{
        char *root = make_toolkit(11, NULL);
        _cleanup_free_ char *flags = xasprintf("NVCC_PREPEND_FLAGS=-ccbin=%s/gcc11/bin/g++", root);
        _cleanup_free_ char *lib = xasprintf("'%s/cuda/lib64/libcudart.so.11.0'", root);
        struct check c;

        run_nvcc(root, (const char *const[]){ flags, NULL }, &c);
        ck_assert_msg(c.status == CHECK_PASS, "%s", c.message);
        assert_has(c.message, "(-ccbin in NVCC_PREPEND_FLAGS) is GCC 11.3.0, accepted by");
        assert_has(c.message, lib);
        assert_has(c.message, "cudaGetDeviceCount returned 35 cudaErrorInsufficientDriver (no driver here, or one older than the runtime)");
        check_release(&c);
        fx_free(root);
}
END_TEST

/* What nvcc --dryrun runs wins over the reading of the variables: a
 * profile (Debian's puts a gcc wrapper first on nvcc's PATH) can pick a
 * compiler that is not `gcc` on the module's PATH. */
START_TEST(nvcc_host_compiler_is_what_nvcc_dryrun_runs)
{
        char *root = make_toolkit(11, NULL);
        _cleanup_free_ char *dry = xasprintf("FAKE_DRYRUN_HOST_DIR=%s/gcc11/bin", root);
        _cleanup_free_ char *gxx = xasprintf("'%s/gcc11/bin/g++' (what 'nvcc --dryrun' runs) is GCC 11.3.0", root);
        struct check c;

        run_nvcc(root, (const char *const[]){ dry, NULL }, &c);
        ck_assert_msg(c.status == CHECK_PASS, "%s", c.message);
        assert_has(c.message, gxx);
        check_release(&c);
        fx_free(root);
}
END_TEST

/* CMake's host compiler is CUDAHOSTCXX: a refused one fails though nvcc's
 * own is fine. */
START_TEST(nvcc_check_fails_a_cudahostcxx_the_toolkit_refuses)
{
        char *root = make_toolkit(11, NULL);
        _cleanup_free_ char *flags = xasprintf("NVCC_PREPEND_FLAGS=-ccbin=%s/gcc11/bin/g++", root);
        _cleanup_free_ char *hostcxx = xasprintf("CUDAHOSTCXX=%s/hostbin/gcc", root);
        struct check c;

        run_nvcc(root, (const char *const[]){ flags, hostcxx, NULL }, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        assert_has(c.message, "CMake's host compiler");
        assert_has(c.message, "(CUDAHOSTCXX) is GCC 12.2.0");
        check_release(&c);
        fx_free(root);
}
END_TEST

/* -allow-unsupported-compiler lets the refused gcc through: a warning,
 * not a pass (the script nvcc here still refuses it, as a real one would
 * not: the build fails, so the check still fails; what is tested is the
 * comparison's verdict). */
START_TEST(nvcc_check_warns_when_the_flags_allow_an_unsupported_compiler)
{
        char *root = make_toolkit(11, NULL);
        struct check c;

        run_nvcc(root, (const char *const[]){ "NVCC_APPEND_FLAGS=-allow-unsupported-compiler", NULL }, &c);
        assert_has(c.message, "which '");
        assert_has(c.message, "refuses, and the module's nvcc flags pass -allow-unsupported-compiler");
        ck_assert_msg(!strstr(c.message, "accepts GCC up to 11: give"), "%s", c.message);
        check_release(&c);
        fx_free(root);
}
END_TEST

/* With a GPU (what the program prints there): the kernel ran, or the
 * check fails saying why it did not. */
START_TEST(nvcc_program_on_a_gpu_runs_its_kernel_or_fails)
{
        char *root = make_toolkit_reporting(15, NULL, "devices 2\\\\nkernel 42 0 cudaSuccess\\\\n");
        struct check c;

        run_nvcc(root, NULL, &c);
        ck_assert_msg(c.status == CHECK_PASS, "%s", c.message);
        assert_has(c.message, "2 device(s), the kernel ran on device 0");
        check_release(&c);
        fx_free(root);

        root = make_toolkit_reporting(15, NULL, "devices 1\\\\nkernel 0 209 cudaErrorNoKernelImageForDevice\\\\n");
        run_nvcc(root, NULL, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        assert_has(c.message, "found 1 device(s), but its kernel did not run on device 0: cudaErrorNoKernelImageForDevice");
        check_release(&c);
        fx_free(root);
}
END_TEST

START_TEST(nvcc_program_that_loads_another_cudart_fails)
{
        char *root = make_toolkit(15, "/elsewhere/lib64");
        struct check c;

        run_nvcc(root, NULL, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        assert_has(c.message, "loaded '/elsewhere/lib64/libcudart.so.11.0', not the module's libcudart");
        check_release(&c);
        fx_free(root);
}
END_TEST

START_TEST(nvcc_check_skips_other_modules_and_a_module_without_nvcc)
{
        char *const env[] = { (char *)"PATH=/nonexistent:/nonexistent2", NULL };
        struct validate_options o = { .compile = true };
        struct validate_module m = { .module = "cuda/12.4", .name = "cuda", .kind = component_toolkit(), .env = env };
        struct check c = { 0 };

        check_nvcc(&m, &o, &c);
        ck_assert_int_eq(c.status, CHECK_SKIP);
        ck_assert_str_eq(c.message, "the module's PATH has no executable nvcc");
        check_release(&c);
        check_cmake(&m, &o, &c);
        ck_assert_int_eq(c.status, CHECK_SKIP);
        check_release(&c);
        m.kind = NULL;
        check_nvcc(&m, &o, &c);
        ck_assert_int_eq(c.status, CHECK_SKIP);
        assert_has(c.message, "not a CUDA module");
        check_release(&c);
        o.compile = false;
        m.kind = component_toolkit();
        check_nvcc(&m, &o, &c);
        ck_assert_int_eq(c.status, CHECK_SKIP);
        check_release(&c);
}
END_TEST

START_TEST(cmake_check_skips_without_cmake)
{
        char *root = make_toolkit(15, NULL);
        struct validate_options o = { .compile = true, .timeout = 30, .cc_path = "/nonexistent" };
        struct validate_module m;
        _cleanup_(strv_release) struct strv env = { 0 };
        struct check c = { 0 };

        module_of(&m, &env, root, NULL);
        check_cmake(&m, &o, &c);
        ck_assert_int_eq(c.status, CHECK_SKIP);
        assert_has(c.message, "no cmake in cudamod's PATH (/nonexistent)");
        check_release(&c);
        m.env = NULL;
        validate_module_release(&m);
        fx_free(root);
}
END_TEST

/* A cmake without a build tool for its generator (a minimal system with
 * no make): a failure that says what is missing, not only CMake's words. */
START_TEST(cmake_check_without_a_build_tool_says_so)
{
        char *root = make_toolkit(15, NULL);
        _cleanup_free_ char *cmake = xasprintf("%s/bin/cmake", root), *bin = xasprintf("%s/bin", root);
        struct validate_options o = { .compile = true, .timeout = 30, .cc_path = bin };
        struct validate_module m;
        _cleanup_(strv_release) struct strv env = { 0 };
        struct check c = { 0 };

        _cleanup_free_ char *cxx = xasprintf("%s/bin/c++", root);

        fx_write(root, "bin/cmake",
                 "#!/bin/sh\n"
                 "echo 'CMake Error: CMake was unable to find a build program corresponding to \"Unix Makefiles\".  "
                 "CMAKE_MAKE_PROGRAM is not set.  You probably need to select a different build tool.' >&2\n"
                 "exit 1\n");
        ck_assert_int_eq(chmod(cmake, 0755), 0);
        fx_write(root, "bin/c++", "#!/bin/sh\nexit 1\n");
        ck_assert_int_eq(chmod(cxx, 0755), 0);
        module_of(&m, &env, root, NULL);
        /* validate names CMake's build tool itself: none in its PATH. */
        check_cmake(&m, &o, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        assert_has(c.message, "no build tool (gmake or make) in cudamod's PATH");
        check_release(&c);
        /* Trusting the module, CMake looks for one and says it found none. */
        o.trust_modulefiles = true;
        check_cmake(&m, &o, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        assert_has(c.message, "CMake found no build tool for its generator (make, or ninja with -G Ninja)");
        assert_has(c.message, "CMAKE_MAKE_PROGRAM is not set");
        check_release(&c);
        m.env = NULL;
        validate_module_release(&m);
        fx_free(root);
}
END_TEST

/* --- what the module may name for the nvcc and cmake checks ------------ */

/* validate_refused_toolchain_variable: a compiler, launcher, build tool
 * or CMake code the module names is refused; its paths, CUDA variables, a
 * CUDACXX that is its own toolkit's nvcc and a -ccbin are not. */
START_TEST(toolchain_variables_naming_programs_are_refused)
{
        static const struct {
                const char *env[4];
                const char *want;
        } cases[] = {
                { { "CC=/tmp/x/cc", NULL }, "CC" },
                { { "CXX=/tmp/x/c++", NULL }, "CXX" },
                { { "CXX=", NULL }, "CXX" },
                { { "CMAKE_CXX_COMPILER_LAUNCHER=/tmp/x/l", NULL }, "CMAKE_CXX_COMPILER_LAUNCHER" },
                { { "CMAKE_CUDA_COMPILER_LAUNCHER=ccache", NULL }, "CMAKE_CUDA_COMPILER_LAUNCHER" },
                { { "CMAKE_C_LINKER_LAUNCHER=/tmp/x/l", NULL }, "CMAKE_C_LINKER_LAUNCHER" },
                { { "CMAKE_CXX_COMPILER=/tmp/x/c++", NULL }, "CMAKE_CXX_COMPILER" },
                { { "CMAKE_CUDA_HOST_COMPILER=/tmp/x/g++", NULL }, "CMAKE_CUDA_HOST_COMPILER" },
                { { "CMAKE_MAKE_PROGRAM=/tmp/x/make", NULL }, "CMAKE_MAKE_PROGRAM" },
                { { "CMAKE_TOOLCHAIN_FILE=/tmp/x/t.cmake", NULL }, "CMAKE_TOOLCHAIN_FILE" },
                { { "CMAKE_PROJECT_INCLUDE=/tmp/x/i.cmake", NULL }, "CMAKE_PROJECT_INCLUDE" },
                { { "CMAKE_PROJECT_TOP_LEVEL_INCLUDES=/tmp/x/i.cmake", NULL }, "CMAKE_PROJECT_TOP_LEVEL_INCLUDES" },
                { { "CMAKE_GENERATOR=Ninja", NULL }, "CMAKE_GENERATOR" },
                { { "CMAKE_PROGRAM_PATH=/tmp/x", NULL }, "CMAKE_PROGRAM_PATH" },
                /* CUDACXX: only the toolkit's own nvcc under CUDA_HOME */
                { { "CUDA_HOME=/opt/cuda", "CUDACXX=/opt/cuda/bin/nvcc", NULL }, NULL },
                { { "CUDA_HOME=/opt/cuda/", "CUDACXX=/opt/cuda/bin/nvcc", NULL }, NULL },
                { { "CUDA_HOME=/w/nvidia", "CUDACXX=/w/nvidia/cuda_nvcc/bin/nvcc", NULL }, NULL },
                { { "CUDACXX=/opt/cuda/bin/nvcc", NULL }, "CUDACXX" },
                { { "CUDA_HOME=/opt/cuda", "CUDACXX=/tmp/x/nvcc", NULL }, "CUDACXX" },
                { { "CUDA_HOME=/opt/cuda", "CUDACXX=/opt/cuda-evil/bin/nvcc", NULL }, "CUDACXX" },
                { { "CUDA_HOME=/opt/cuda", "CUDACXX=/opt/cuda/bin/../../../tmp/nvcc", NULL }, "CUDACXX" },
                { { "CUDA_HOME=/opt/cuda", "CUDACXX=/opt/cuda/bin/c++", NULL }, "CUDACXX" },
                { { "CUDA_HOME=cuda", "CUDACXX=cuda/bin/nvcc", NULL }, "CUDACXX" },
                /* nvcc's flags: -ccbin is the host compiler check's; options
                 * passed on to the host compiler or linker are refused */
                { { "NVCC_PREPEND_FLAGS=-ccbin=/usr/bin/g++-11", NULL }, NULL },
                { { "NVCC_APPEND_FLAGS=-allow-unsupported-compiler", NULL }, NULL },
                { { "NVCC_APPEND_FLAGS=-O2 -Xcompiler -B/tmp/x", NULL }, "NVCC_APPEND_FLAGS" },
                { { "NVCC_PREPEND_FLAGS=--compiler-options=-fplugin=/tmp/x.so", NULL }, "NVCC_PREPEND_FLAGS" },
                { { "NVCC_PREPEND_FLAGS=-Xlinker=-plugin=/tmp/x.so", NULL }, "NVCC_PREPEND_FLAGS" },
                /* what the checks are about */
                { { "CUDAHOSTCXX=/usr/bin/g++-11", "CMAKE_PREFIX_PATH=/opt/cuda", "CPATH=/opt/cuda/include", NULL }, NULL },
                { { "PATH=/tmp/x:/usr/bin", "LD_LIBRARY_PATH=/opt/cuda/lib64", "MY_CC=/tmp/x/cc", NULL }, NULL },
                { { NULL }, NULL },
                { { "END", NULL }, NULL },
        };

        for (size_t i = 0; !cases[i].env[0] || !streq(cases[i].env[0], "END"); i++) {
                _cleanup_free_ char *got = validate_refused_toolchain_variable((char *const *)cases[i].env);

                if (!cases[i].want)
                        ck_assert_msg(!got, "case %zu: %s refused", i, got);
                else
                        ck_assert_msg(got && streq(got, cases[i].want), "case %zu: %s", i, got ? got : "nothing refused");
        }
}
END_TEST

/* Replace env's PATH entry with path (owned), in place: a module's env
 * points at env's items. */
static void set_path(struct strv *env, char *path)
{
        for (size_t i = 0; i < env->len; i++)
                if (startswith(env->items[i], "PATH=")) {
                        free(env->items[i]);
                        env->items[i] = path;
                        return;
                }
        ck_abort_msg("no PATH");
}

/* root/evil/bin: c++, CC, g++, gcc, make, gmake, ld and a launcher, each
 * touching root/RAN-<name> and failing. */
static void make_evil_bin(const char *root)
{
        static const char *const names[] = { "c++", "CC", "g++", "gcc", "make", "gmake", "ld", "launcher", NULL };

        for (size_t i = 0; names[i]; i++) {
                _cleanup_free_ char *rel = xasprintf("evil/bin/%s", names[i]);
                _cleanup_free_ char *script = xasprintf("#!/bin/sh\ntouch '%s/RAN-%s'\nexit 1\n", root, names[i]);
                _cleanup_free_ char *path = path_join(root, rel);

                fx_write(root, rel, script);
                ck_assert_int_eq(chmod(path, 0755), 0);
        }
}

/* Which of make_evil_bin's programs ran: "RAN-c++ RAN-make ", or "". */
static char *evil_ran(const char *root)
{
        static const char *const names[] = { "c++", "CC", "g++", "gcc", "make", "gmake", "ld", "launcher", NULL };
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        for (size_t i = 0; names[i]; i++) {
                _cleanup_free_ char *p = xasprintf("%s/RAN-%s", root, names[i]);

                if (access(p, F_OK) == 0) {
                        strbuf_addf(&sb, "RAN-%s ", names[i]);
                        unlink(p);
                }
        }
        return strbuf_detach(&sb);
}

/* A module that sets CXX or a launcher: both checks fail saying so and
 * start nothing; trusted, they start what it says. */
START_TEST(nvcc_and_cmake_refuse_a_compiler_or_launcher_the_module_names)
{
        char *root = make_toolkit(15, NULL);
        _cleanup_free_ char *cc_path = xasprintf("%s/hostbin:/usr/bin:/bin", root);
        _cleanup_free_ char *cxx = xasprintf("CXX=%s/evil/bin/c++", root);
        _cleanup_free_ char *launcher = xasprintf("CMAKE_CXX_COMPILER_LAUNCHER=%s/evil/bin/launcher", root);
        const char *const *sets[] = { (const char *const[]){ cxx, NULL }, (const char *const[]){ launcher, NULL }, NULL };
        struct validate_options o = { .compile = true, .timeout = 30, .cc_path = cc_path };

        make_evil_bin(root);
        for (size_t i = 0; sets[i]; i++) {
                struct validate_module m;
                _cleanup_(strv_release) struct strv env = { 0 };
                _cleanup_free_ char *want = xasprintf("refused: the load sets %.*s='%s/evil/bin/", (int)strcspn(sets[i][0], "="),
                                                      sets[i][0], root);
                struct check c = { 0 };

                module_of(&m, &env, root, sets[i]);
                o.trust_modulefiles = false;
                check_nvcc(&m, &o, &c);
                ck_assert_int_eq(c.status, CHECK_FAIL);
                assert_has(c.message, want);
                assert_has(c.message, "the nvcc check would start");
                assert_has(c.message, "--trust-modulefiles");
                check_release(&c);
                check_cmake(&m, &o, &c);
                ck_assert_int_eq(c.status, CHECK_FAIL);
                assert_has(c.message, want);
                assert_has(c.message, "the cmake check would start");
                check_release(&c);
                {
                        _cleanup_free_ char *ran = evil_ran(root);

                        ck_assert_msg(!*ran, "%s ran", ran);
                }
                o.trust_modulefiles = true;
                check_nvcc(&m, &o, &c);
                ck_assert_msg(!strstr(c.message ? c.message : "", "refused"), "%s", c.message);
                check_release(&c);
                m.env = NULL;
                validate_module_release(&m);
        }
        fx_free(root);
}
END_TEST

/* A gcc on the module's PATH (a host compiler module's) is not started:
 * nvcc's default host compiler is validate's own gcc, and the check warns
 * naming both; trusted, the module's is checked. */
START_TEST(nvcc_check_starts_no_gcc_of_the_modules_path)
{
        char *root = make_toolkit(15, NULL);
        _cleanup_free_ char *cc_path = xasprintf("%s/hostbin:/usr/bin:/bin", root);
        _cleanup_free_ char *theirs = xasprintf("the module's PATH gives nvcc the host compiler '%s/evil/bin/gcc'", root);
        _cleanup_free_ char *ours = xasprintf("'%s/hostbin/gcc' (gcc on nvcc's PATH) is GCC 12.2.0", root);
        struct validate_options o = { .compile = true, .timeout = 30, .cc_path = cc_path };
        struct validate_module m;
        _cleanup_(strv_release) struct strv env = { 0 };
        struct check c = { 0 };

        make_evil_bin(root);
        module_of(&m, &env, root, NULL);
        set_path(&env, xasprintf("PATH=%s/cuda/bin:%s/evil/bin:/usr/bin:/bin", root, root));
        check_nvcc(&m, &o, &c);
        ck_assert_msg(c.status == CHECK_WARN, "%s", c.message);
        assert_has(c.message, theirs);
        assert_has(c.message, ours);
        check_release(&c);
        {
                _cleanup_free_ char *ran = evil_ran(root);

                ck_assert_msg(!*ran, "%s ran", ran);
        }
        o.trust_modulefiles = true;
        check_nvcc(&m, &o, &c);
        check_release(&c);
        {
                _cleanup_free_ char *ran = evil_ran(root);

                ck_assert_msg(strstr(ran, "RAN-gcc"), "trusted, the module's gcc did not run: '%s'", ran);
        }
        m.env = NULL;
        validate_module_release(&m);
        fx_free(root);
}
END_TEST

/* --- the real CUDA 13.0 ----------------------------------------------- */

static void real_module(struct validate_module *m, struct strv *env)
{
        strv_add(env, "PATH=" REAL_CUDA "/bin:/usr/bin:/bin");
        strv_add(env, "LD_LIBRARY_PATH=" REAL_CUDA "/lib");
        strv_add(env, "CPATH=" REAL_CUDA "/include");
        strv_add(env, "HOME=/nonexistent");
        *m = (struct validate_module){
                .module = "cuda/13.0", .name = "cuda", .version = "13.0",
                .kind = component_toolkit(), .env = env->items,
        };
        strv_add(&m->own_libdirs, REAL_CUDA "/lib");
        strv_add(&m->own_incdirs, REAL_CUDA "/include");
}

START_TEST(nvcc_and_cmake_pass_on_the_real_cuda_13_0)
{
        struct validate_options o = { .compile = true, .timeout = 300, .cc_path = "/usr/bin:/bin" };
        struct validate_module m;
        _cleanup_(strv_release) struct strv env = { 0 };
        struct check c = { 0 };

        if (access(REAL_CUDA "/bin/nvcc", X_OK) != 0) {
                fprintf(stderr, "SKIP nvcc_and_cmake_pass_on_the_real_cuda_13_0: no " REAL_CUDA "/bin/nvcc\n");
                return;
        }
        real_module(&m, &env);
        check_nvcc(&m, &o, &c);
        ck_assert_msg(c.status == CHECK_PASS, "%s", c.message);
        assert_has(c.message, "'" REAL_CUDA "/lib/libcudart.so.13'");
        /* no driver here: the runtime's error is reported, a GPU machine counts */
        assert_has(c.message, "cudaGetDeviceCount");
        check_release(&c);
        if (access("/usr/bin/cmake", X_OK) == 0) {
                check_cmake(&m, &o, &c);
                ck_assert_msg(c.status == CHECK_PASS, "%s", c.message);
                assert_has(c.message, "nvcc '" REAL_CUDA "/bin/nvcc' 13.0");
                assert_has(c.message, "cudart '" REAL_CUDA);
                check_release(&c);
        }
        m.env = NULL;
        validate_module_release(&m);
}
END_TEST

/* /usr/local/cuda is a symbolic link to cuda-13.0 here: a module whose
 * nvcc is not the toolkit CMake's FindCUDAToolkit reports must fail. With
 * CUDACXX naming /usr/local/cuda's nvcc (the other toolkit's path on a
 * site where the link leads elsewhere), CMake's compiler is not the one
 * the module's PATH gives when they differ; here they are one file, so
 * the check passes: it compares files, not spellings. */
START_TEST(cmake_check_compares_files_not_spellings)
{
        struct validate_options o = { .compile = true, .timeout = 300, .cc_path = "/usr/bin:/bin" };
        struct validate_module m;
        _cleanup_(strv_release) struct strv env = { 0 };
        struct check c = { 0 };

        if (access("/usr/local/cuda/bin/nvcc", X_OK) != 0 || access("/usr/bin/cmake", X_OK) != 0) {
                fprintf(stderr, "SKIP cmake_check_compares_files_not_spellings: no /usr/local/cuda or cmake\n");
                return;
        }
        strv_add(&env, "CUDACXX=/usr/local/cuda/bin/nvcc");
        strv_add(&env, "CUDA_HOME=/usr/local/cuda");
        real_module(&m, &env);
        check_cmake(&m, &o, &c);
        ck_assert_msg(c.status == CHECK_PASS, "%s", c.message);
        check_release(&c);
        m.env = NULL;
        validate_module_release(&m);
}
END_TEST

/* A CUDACXX leading to another toolkit's nvcc: CMake configures, and
 * the check says it found the other toolkit. */
START_TEST(cmake_check_fails_when_cmake_finds_another_toolkit)
{
        struct validate_options o = { .compile = true, .timeout = 300, .cc_path = "/usr/bin:/bin" };
        struct validate_module m;
        _cleanup_(strv_release) struct strv env = { 0 };
        struct check c = { 0 };
        char *root;
        _cleanup_free_ char *fake_lib = NULL;

        if (access(REAL_CUDA "/bin/nvcc", X_OK) != 0 || access("/usr/bin/cmake", X_OK) != 0) {
                fprintf(stderr, "SKIP cmake_check_fails_when_cmake_finds_another_toolkit: no " REAL_CUDA " or cmake\n");
                return;
        }
        /* The module says its libraries are in root/lib64 (none there):
         * CMake finds 13.0's cudart, which is not the module's. */
        root = fx_new();
        fake_lib = path_join(root, "lib64");
        fx_mkdir(root, "lib64");
        real_module(&m, &env);
        strv_release(&m.own_libdirs);
        strv_add(&m.own_libdirs, fake_lib);
        check_cmake(&m, &o, &c);
        ck_assert_int_eq(c.status, CHECK_FAIL);
        assert_has(c.message, "not one in the module's library directories");
        check_release(&c);
        m.env = NULL;
        validate_module_release(&m);
        fx_free(root);
}
END_TEST

/* CMake looks for its C++ compiler and build tool in each
 * CMAKE_PREFIX_PATH entry's bin first, then PATH: with the module's
 * putting c++, make, ld there, the cmake check starts none of them (it
 * fails at the scripted nvcc, after CMake's C++ compiler checks);
 * trusted, CMake starts them. */
START_TEST(cmake_check_starts_no_program_of_the_modules_prefix_or_path)
{
        struct validate_options o = { .compile = true, .timeout = 60, .cc_path = "/usr/bin:/bin" };
        struct validate_module m;
        _cleanup_(strv_release) struct strv env = { 0 };
        struct check c = { 0 };
        char *root;

        if (access("/usr/bin/cmake", X_OK) != 0 || access("/usr/bin/c++", X_OK) != 0) {
                fprintf(stderr, "SKIP cmake_check_starts_no_program_of_the_modules_prefix_or_path: no cmake or c++\n");
                return;
        }
        root = make_toolkit(15, NULL);
        make_evil_bin(root);
        strv_push(&env, xasprintf("CMAKE_PREFIX_PATH=%s/evil:%s/cuda", root, root));
        module_of(&m, &env, root, NULL);
        set_path(&env, xasprintf("PATH=%s/evil/bin:%s/cuda/bin:/usr/bin:/bin", root, root));
        check_cmake(&m, &o, &c);
        ck_assert_msg(c.status == CHECK_FAIL, "%s", c.message);
        assert_has(c.message, "enable_language(CUDA)");
        check_release(&c);
        {
                _cleanup_free_ char *ran = evil_ran(root);

                ck_assert_msg(!*ran, "%s ran", ran);
        }
        o.trust_modulefiles = true;
        check_cmake(&m, &o, &c);
        check_release(&c);
        {
                _cleanup_free_ char *ran = evil_ran(root);

                ck_assert_msg(*ran, "trusted, CMake started none of the module's programs");
        }
        m.env = NULL;
        validate_module_release(&m);
        fx_free(root);
}
END_TEST

static Suite *toolchain_suite(void)
{
        Suite *s = suite_create("validate-toolchain");
        TCase *tc = tcase_create("host_config");

        tcase_add_test(tc, host_config_of_cuda_11_8_accepts_gcc_11_and_clang_14);
        tcase_add_test(tc, host_config_of_cuda_12_6_accepts_gcc_13_and_clang_18);
        tcase_add_test(tc, host_config_of_the_real_cuda_13_0_accepts_gcc_15_and_clang_20);
        tcase_add_test(tc, host_config_without_its_errors_is_a_disabled_check);
        tcase_add_test(tc, host_config_that_states_no_limit_is_enoent);
        tcase_add_test(tc, host_compiler_kind_and_version_come_from_its_macros);
        suite_add_tcase(s, tc);

        tc = tcase_create("nvcc");
        tcase_set_timeout(tc, 600);
        tcase_add_test(tc, nvcc_with_a_gcc_the_toolkit_refuses_fails_naming_both_and_the_fix);
        tcase_add_test(tc, nvcc_failing_on_a_newer_glibc_says_no_host_compiler_helps);
        tcase_add_test(tc, nvcc_with_ccbin_in_nvcc_prepend_flags_uses_it_and_runs_the_program);
        tcase_add_test(tc, nvcc_check_fails_a_cudahostcxx_the_toolkit_refuses);
        tcase_add_test(tc, nvcc_host_compiler_is_what_nvcc_dryrun_runs);
        tcase_add_test(tc, nvcc_check_warns_when_the_flags_allow_an_unsupported_compiler);
        tcase_add_test(tc, nvcc_program_on_a_gpu_runs_its_kernel_or_fails);
        tcase_add_test(tc, nvcc_program_that_loads_another_cudart_fails);
        tcase_add_test(tc, nvcc_check_skips_other_modules_and_a_module_without_nvcc);
        tcase_add_test(tc, cmake_check_skips_without_cmake);
        tcase_add_test(tc, cmake_check_without_a_build_tool_says_so);
        tcase_add_test(tc, toolchain_variables_naming_programs_are_refused);
        tcase_add_test(tc, nvcc_and_cmake_refuse_a_compiler_or_launcher_the_module_names);
        tcase_add_test(tc, nvcc_check_starts_no_gcc_of_the_modules_path);
        tcase_add_test(tc, nvcc_and_cmake_pass_on_the_real_cuda_13_0);
        tcase_add_test(tc, cmake_check_compares_files_not_spellings);
        tcase_add_test(tc, cmake_check_fails_when_cmake_finds_another_toolkit);
        tcase_add_test(tc, cmake_check_starts_no_program_of_the_modules_prefix_or_path);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(toolchain_suite());
}
