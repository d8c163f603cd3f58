/* test-cmake-find.c: the emulation of CMake's find_program, find_path and
 * find_library (src/cmake-find.c) on one temp tree, each row a find in an
 * environment and the file CMake 3.25 returns for it by the documented
 * search procedure (cmake-find.h): <Pkg>_ROOT before CMAKE_PREFIX_PATH
 * before what find modules appended, P/lib/<arch> before P/lib64 before
 * P/lib, PATH_SUFFIXES before the directory, NAMES outer and directories
 * inner, HINTS before PATH before the system prefixes before PATHS, and
 * NO_DEFAULT_PATH. tests/test-doctor-build.c compares the same order with
 * the real cmake where one is installed. "@" in a row is the tree's root;
 * the system prefixes (/usr/local, /usr, /opt) are looked up under it. */
#include <check.h>
#include <sys/stat.h>

#include "cmake-find.h"
#include "fixture.h"
#include "testutil.h"
#include "util.h"
#include "banned.h"

#define ARCH "x86_64-linux-gnu"

static char *root;

static void setup(void)
{
        _cleanup_free_ char *prog = NULL;

        root = fx_new();
        /* <Pkg>_ROOT against CMAKE_PREFIX_PATH */
        fx_write(root, "pkgroot/include/x.h", "");
        fx_write(root, "cpp/include/x.h", "");
        /* lib/<arch>, lib64, lib of one prefix */
        fx_write(root, "cpp/lib/" ARCH "/libx.so", "");
        fx_write(root, "cpp/lib64/libx.so", "");
        fx_write(root, "cpp/lib/libx.so", "");
        fx_write(root, "l64/lib64/libm.so", "");
        fx_write(root, "l64/lib/libm.so", "");
        /* PATH_SUFFIXES first */
        fx_write(root, "suf/include/cuda/include/y.h", "");
        fx_write(root, "suf/include/y.h", "");
        /* NAMES outer: b in the first directory, a in the second */
        fx_write(root, "d1/libb.so", "");
        fx_write(root, "d2/liba.so", "");
        /* file names of one library name */
        fx_write(root, "ver/lib/libn.so.2", "");
        fx_write(root, "ver/lib/libn.so", "");
        fx_write(root, "ver/lib/libn.a", "");
        fx_write(root, "static/lib/libs.a", "");
        /* HINTS before the system prefixes, which are fallbacks */
        fx_write(root, "hint/z.h", "");
        fx_write(root, "usr/local/include/z.h", "");
        /* programs: an executable wins over a file that is not */
        fx_write(root, "bin2/prog", "");
        fx_write(root, "bin/prog", "#!/bin/sh\n");
        prog = xasprintf("%s/bin/prog", root);
        ck_assert_int_eq(chmod(prog, 0755), 0);
        /* appended prefixes come after the environment's CMAKE_PREFIX_PATH */
        fx_write(root, "app/include/w.h", "");
        fx_write(root, "cpp2/include/w.h", "");
        /* PATHS last; NO_DEFAULT_PATH */
        fx_write(root, "paths/v.h", "");
        fx_write(root, "cpp3/include/v.h", "");
}

static void teardown(void)
{
        fx_free(root);
        root = NULL;
}

struct row {
        const char *name;
        const char *env[4];          /* "NAME=value", "@" the root */
        bool lib64;
        bool appended;               /* @/app appended by a find module, as "APP (appended)" */
        struct cmake_find find;
        const char *version;
        const char *path;            /* "@/..." or NULL: not found */
        const char *from;
        bool fallback;
};

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct row rows[] = {
        { "pkg_root_before_cmake_prefix_path", { "X_ROOT=@/pkgroot", "CMAKE_PREFIX_PATH=@/cpp" }, false, false,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("x.h"), .root_var = "X_ROOT" }, NULL,
          "@/pkgroot/include/x.h", "X_ROOT", false },
        { "cmake_prefix_path_without_pkg_root", { "CMAKE_PREFIX_PATH=@/cpp" }, false, false,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("x.h"), .root_var = "X_ROOT" }, NULL,
          "@/cpp/include/x.h", "CMAKE_PREFIX_PATH", false },
        { "library_architecture_first", { "CMAKE_PREFIX_PATH=@/cpp" }, true, false,
          { .kind = CMAKE_FIND_LIBRARY, .names = NAMES("x") }, NULL,
          "@/cpp/lib/" ARCH "/libx.so", "CMAKE_PREFIX_PATH", false },
        { "lib64_before_lib_where_used", { "CMAKE_PREFIX_PATH=@/l64" }, true, false,
          { .kind = CMAKE_FIND_LIBRARY, .names = NAMES("m") }, NULL,
          "@/l64/lib64/libm.so", "CMAKE_PREFIX_PATH", false },
        { "lib_only_where_lib64_is_not_used", { "CMAKE_PREFIX_PATH=@/l64" }, false, false,
          { .kind = CMAKE_FIND_LIBRARY, .names = NAMES("m") }, NULL,
          "@/l64/lib/libm.so", "CMAKE_PREFIX_PATH", false },
        { "path_suffixes_before_the_directory", { "CMAKE_PREFIX_PATH=@/suf" }, false, false,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("y.h"), .suffixes = NAMES("cuda/include") }, NULL,
          "@/suf/include/cuda/include/y.h", "CMAKE_PREFIX_PATH", false },
        { "names_outer_directories_inner", { "CMAKE_LIBRARY_PATH=@/d1:@/d2" }, false, false,
          { .kind = CMAKE_FIND_LIBRARY, .names = NAMES("a", "b") }, NULL,
          "@/d2/liba.so", "CMAKE_LIBRARY_PATH", false },
        { "versioned_soname_first", { "CMAKE_PREFIX_PATH=@/ver" }, false, false,
          { .kind = CMAKE_FIND_LIBRARY, .names = NAMES("n") }, "2",
          "@/ver/lib/libn.so.2", "CMAKE_PREFIX_PATH", false },
        { "shared_before_static", { "CMAKE_PREFIX_PATH=@/ver" }, false, false,
          { .kind = CMAKE_FIND_LIBRARY, .names = NAMES("n") }, NULL,
          "@/ver/lib/libn.so", "CMAKE_PREFIX_PATH", false },
        { "static_when_alone", { "CMAKE_PREFIX_PATH=@/static" }, false, false,
          { .kind = CMAKE_FIND_LIBRARY, .names = NAMES("s") }, NULL,
          "@/static/lib/libs.a", "CMAKE_PREFIX_PATH", false },
        { "hints_before_system_prefixes", { "PATH=@/nowhere" }, false, false,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("z.h"), .hints = NAMES("@/hint"), .hints_from = "Z_DIR" }, NULL,
          "@/hint/z.h", "Z_DIR", false },
        { "system_prefix_is_a_fallback", { "PATH=@/nowhere" }, false, false,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("z.h") }, NULL,
          "@/usr/local/include/z.h", "default /usr/local + include", true },
        { "program_must_be_executable", { "PATH=@/bin2:@/bin" }, false, false,
          { .kind = CMAKE_FIND_PROGRAM, .names = NAMES("prog") }, NULL,
          "@/bin/prog", "PATH", false },
        { "environment_before_appended", { "CMAKE_PREFIX_PATH=@/cpp2" }, false, true,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("w.h") }, NULL,
          "@/cpp2/include/w.h", "CMAKE_PREFIX_PATH", false },
        { "appended_prefix", { "PATH=@/nowhere" }, false, true,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("w.h") }, NULL,
          "@/app/include/w.h", "APP (appended)", false },
        { "paths_after_everything", { "CMAKE_PREFIX_PATH=@/cpp3" }, false, false,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("v.h"), .paths = NAMES("@/paths"), .paths_from = "V" }, NULL,
          "@/cpp3/include/v.h", "CMAKE_PREFIX_PATH", false },
        { "no_default_path_keeps_hints_and_paths", { "CMAKE_PREFIX_PATH=@/cpp3" }, false, false,
          { .kind = CMAKE_FIND_PATH, .names = NAMES("v.h"), .paths = NAMES("@/paths"), .paths_from = "V",
            .no_default = true }, NULL,
          "@/paths/v.h", "V", false },
        { "not_found", { "PATH=@/nowhere" }, false, false,
          { .kind = CMAKE_FIND_LIBRARY, .names = NAMES("missing") }, NULL, NULL, NULL, false },
        { NULL },
};

/* A NULL-terminated copy of v with "@" replaced by the root. */
static void rooted_list(const char *const *v, struct strv *ret)
{
        for (size_t i = 0; v && v[i]; i++)
                strv_push(ret, str_replace_all(v[i], "@", root));
}

START_TEST(cmake_find_follows_the_search_procedure)
{
        const struct row *r = &rows[_i];
        _cleanup_(strv_release) struct strv env = { 0 }, hints = { 0 }, paths = { 0 };
        _cleanup_free_ char *app = xasprintf("%s/app", root), *want = NULL;
        const struct cmake_find_prefix appended[] = { { .prefix = app, .from = (char *)"APP (appended)" } };
        struct cmake_find f = r->find;
        struct cmake_find_hit hit = { 0 };

        rooted_list(r->env, &env);
        /* no cmake of the machine's, and nothing on its PATH */
        if (!env_get(env.items, "PATH"))
                strv_push(&env, str_replace_all("PATH=@/nowhere", "@", root));
        rooted_list(r->find.hints, &hints);
        rooted_list(r->find.paths, &paths);
        if (r->find.hints)
                f.hints = (const char *const *)hints.items;
        if (r->find.paths)
                f.paths = (const char *const *)paths.items;
        cmake_find_run(&(struct cmake_find_env){ .env = env.items, .sysroot = root, .arch = ARCH, .lib64 = r->lib64,
                                                 .appended = r->appended ? appended : NULL,
                                                 .n_appended = r->appended ? 1 : 0 },
                       &f, r->version, &hit);
        if (!r->path) {
                ck_assert_msg(!hit.path, "%s: found '%s'", r->name, hit.path);
                return;
        }
        want = str_replace_all(r->path, "@", root);
        ck_assert_msg(hit.path, "%s: nothing found", r->name);
        ck_assert_msg(streq(hit.path, want), "%s: found '%s', not '%s'", r->name, hit.path, want);
        ck_assert_msg(streq(hit.from, r->from), "%s: from '%s', not '%s'", r->name, hit.from, r->from);
        ck_assert_msg(hit.fallback == r->fallback, "%s: fallback %d", r->name, hit.fallback);
        cmake_find_hit_release(&hit);
}
END_TEST

START_TEST(cmake_is_true_as_if_does)
{
        static const char *const no[] = { "0", "OFF", "off", "NO", "FALSE", "n", "IGNORE", "NOTFOUND",
                                          "CUDNN-NOTFOUND", NULL };
        static const char *const yes[] = { "1", "ON", "yes", "TRUE", "Y", "2", "anything", NULL };

        for (size_t i = 0; no[i]; i++)
                ck_assert_msg(!cmake_is_true(no[i], true), "'%s' is true", no[i]);
        for (size_t i = 0; yes[i]; i++)
                ck_assert_msg(cmake_is_true(yes[i], false), "'%s' is false", yes[i]);
        ck_assert(cmake_is_true(NULL, true));
        ck_assert(!cmake_is_true("", false));
}
END_TEST

START_TEST(cmake_find_rooted_under_sysroot)
{
        _cleanup_free_ char *a = cmake_find_rooted(NULL, "/usr/local"), *b = cmake_find_rooted("/", "/opt"),
                            *c = cmake_find_rooted("/r", "/usr"), *d = cmake_find_rooted("/r", "/");

        ck_assert_str_eq(a, "/usr/local");
        ck_assert_str_eq(b, "/opt");
        ck_assert_str_eq(c, "/r/usr");
        ck_assert_str_eq(d, "/r");
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("cmake-find");
        TCase *tc = tcase_create("search");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_loop_test(tc, cmake_find_follows_the_search_procedure, 0, (int)(sizeof(rows) / sizeof(rows[0]) - 1));
        tcase_add_test(tc, cmake_is_true_as_if_does);
        tcase_add_test(tc, cmake_find_rooted_under_sysroot);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(suite());
}
