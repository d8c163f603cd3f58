/* test-evaluate.c: module lookup as Lmod does it, `module load` applied to
 * an environment, the differences `show` prints, and `cudamod show` on
 * hostile modulefiles. (Parity with the real Lmod over every generated tree
 * is tests/modules/show-parity.sh.) */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "evaluate.h"
#include "fixture.h"
#include "strbuf.h"
#include "testutil.h"

static const char *const clean_env[] = { "PATH=/usr/bin:/bin", "HOME=/nonexistent", NULL };

static void mp_of(struct strv *mp, const char *root, const char *dirs)
{
        struct strv rel = { 0 };

        modulepath_split(dirs, &rel);
        for (size_t i = 0; i < rel.len; i++)
                strv_push(mp, path_join(root, rel.items[i]));
        strv_release(&rel);
}

static void find_ok(const char *root, const char *dirs, const char *spec, const char *want_full,
                    const char *want_rel_path)
{
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *want_path = path_join(root, want_rel_path);
        struct modulefile m = { 0 };
        int r;

        mp_of(&mp, root, dirs);
        r = modulepath_find(&mp, spec, &m, &d);
        ck_assert_msg(r == 0, "%s: %s", spec, d.message ? d.message : "?");
        ck_assert_str_eq(m.fullname, want_full);
        ck_assert_str_eq(m.path, want_path);
        modulefile_release(&m);
}

/* The modulerc directives a site adds (ISSUE 18 item 6): hide_version,
 * hide_modulefile, module_alias, module_version names, and the global
 * modulerc files of the environment, as Lmod follows them
 * (tests/modules/modulerc.sh compares with Lmod itself). */
START_TEST(find_follows_the_modulerc_directives)
{
        char *root = fx_new();
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_free_ char *rc1 = path_join(root, "rc1.lua");
        _cleanup_free_ char *hid = path_join(root, "mp/t/2.lua");
        _cleanup_free_ char *rcvar = xasprintf("LMOD_MODULERCFILE=%s", rc1);
        char *env[] = { rcvar, NULL };
        struct modulefile m = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct modulefile *all = NULL;
        size_t n = 0;

        for (const char *const *v = (const char *const[]){ "11.8", "12.4", "12.9", NULL }; *v; v++) {
                _cleanup_free_ char *rel = xasprintf("mp/cuda/%s.lua", *v);
                _cleanup_free_ char *rel2 = xasprintf("mp/t/%s.lua", *v);

                fx_write(root, rel, "setenv('X', '1')\n");
                fx_write(root, rel2, "setenv('X', '1')\n");
        }
        fx_write(root, "mp/t/2.lua", "setenv('X', '1')\n");
        fx_write(root, "mp/cuda/.modulerc.lua",
                 "hide_version('cuda/12.9')\nmodule_alias('cuda/latest', 'cuda/11.8')\n"
                 "module_alias('mycu', 'cuda/latest')\nmodule_version('cuda/12.4', 'twelve')\n"
                 "module_alias('/loop', 'cuda/loop')\n");
        {
                _cleanup_free_ char *t = xasprintf("#%%Module\nhide-modulefile %s\nmodule-version t/12.4 default\n", hid);

                fx_write(root, "mp/t/.modulerc", t);
        }
        fx_write(root, "rc1.lua", "module_version('t/11.8', 'default')\nmodule_alias('g', 't/12.9')\n");
        find_ok(root, "mp", "cuda", "cuda/12.4", "mp/cuda/12.4.lua");
        find_ok(root, "mp", "cuda/12", "cuda/12.4", "mp/cuda/12.4.lua");
        find_ok(root, "mp", "cuda/latest", "cuda/11.8", "mp/cuda/11.8.lua");
        find_ok(root, "mp", "mycu", "cuda/11.8", "mp/cuda/11.8.lua");
        find_ok(root, "mp", "cuda/twelve", "cuda/12.4", "mp/cuda/12.4.lua");
        find_ok(root, "mp", "cuda/12.9", "cuda/12.9", "mp/cuda/12.9.lua"); /* by its full name */
        /* a marked default wins inside a partial version (Lmod's weights) */
        find_ok(root, "mp", "t", "t/12.4", "mp/t/12.4.lua");
        find_ok(root, "mp", "t/12", "t/12.4", "mp/t/12.4.lua");
        /* an alias that names itself ends */
        mp_of(&mp, root, "mp");
        ck_assert_int_eq(modulepath_find(&mp, "cuda/loop", &m, &d), -ENOENT);
        ck_assert_ptr_nonnull(strstr(d.message, "cuda/loop"));
        /* the global modulerc: its default wins over the directory's, its alias */
        ck_assert_int_eq(modulepath_find_rc(&mp, env, "t", &m, NULL), 0);
        ck_assert_str_eq(m.fullname, "t/11.8");
        modulefile_release(&m);
        ck_assert_int_eq(modulepath_find_rc(&mp, env, "g", &m, NULL), 0);
        ck_assert_str_eq(m.fullname, "t/12.9");
        modulefile_release(&m);
        /* hidden ones are not listed */
        ck_assert_int_eq(modulepath_list(&mp, &all, &n, NULL), 0);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(!streq(all[i].fullname, "cuda/12.9") && !streq(all[i].fullname, "t/2"),
                              "%s is listed", all[i].fullname);
        ck_assert_uint_eq(n, 5);
        modulefile_array_free(all, n);
        fx_free(root);
}
END_TEST

START_TEST(versions_order_as_lmod)
{
        ck_assert_int_gt(module_version_compare("12.10", "12.9"), 0);
        ck_assert_int_gt(module_version_compare("12.4.1", "12.4"), 0);
        ck_assert_int_lt(module_version_compare("8.9.7", "9.1.0"), 0);
        ck_assert_int_eq(module_version_compare("12.04", "12.4"), 0);
        ck_assert_int_lt(module_version_compare("12.9", "12.999999"), 0);
        ck_assert_int_gt(module_version_compare("12.0", "12.rc1"), 0);
        ck_assert_int_lt(module_version_compare("2.21.5", "2.21.5-cuda12"), 0);
}
END_TEST

START_TEST(find_follows_lmod_defaults)
{
        char *root = fx_new();

        /* a: the highest version across both directories, not the first */
        fx_write(root, "mp1/cuda/12.4.lua", "");
        fx_write(root, "mp2/cuda/12.9.lua", "");
        fx_write(root, "mp2/cuda/12.10.lua", "");
        fx_write(root, "mp2/cuda/.12.99.lua", "");
        find_ok(root, "mp1:mp2", "cuda", "cuda/12.10", "mp2/cuda/12.10.lua");
        /* hidden: never the default, but loadable by its full name */
        find_ok(root, "mp1:mp2", "cuda/.12.99", "cuda/.12.99", "mp2/cuda/.12.99.lua");
        /* extended default: the highest 12.x; the first directory has the full name */
        find_ok(root, "mp1:mp2", "cuda/12", "cuda/12.10", "mp2/cuda/12.10.lua");
        fx_write(root, "mp2/cuda/12.4.lua", "");
        find_ok(root, "mp2:mp1", "cuda/12.4", "cuda/12.4", "mp2/cuda/12.4.lua");
        find_ok(root, "mp1:mp2", "cuda/12.4", "cuda/12.4", "mp1/cuda/12.4.lua");
        /* a marked default wins over higher versions: .modulerc.lua */
        fx_write(root, "mp2/cuda/.modulerc.lua", "module_version(\"cuda/12.9\", \"default\")\n");
        find_ok(root, "mp1:mp2", "cuda", "cuda/12.9", "mp2/cuda/12.9.lua");
        /* a default symlink comes before the modulerc */
        fx_symlink(root, "mp2/cuda/default", "12.4.lua");
        find_ok(root, "mp1:mp2", "cuda", "cuda/12.4", "mp2/cuda/12.4.lua");

        /* Tcl: .modulerc, then .version; a file without #%Module is no module */
        fx_write(root, "tcl/nccl/2.21.5", "#%Module\nsetenv A 1\n");
        fx_write(root, "tcl/nccl/2.30.1", "#%Module\nsetenv A 2\n");
        fx_write(root, "tcl/nccl/9.9.9", "not a modulefile\n");
        find_ok(root, "tcl", "nccl", "nccl/2.30.1", "tcl/nccl/2.30.1");
        fx_write(root, "tcl/nccl/.version", "#%Module\nset ModulesVersion \"2.21.5\"\n");
        find_ok(root, "tcl", "nccl", "nccl/2.21.5", "tcl/nccl/2.21.5");
        fx_write(root, "tcl/nccl/.modulerc", "#%Module\nmodule-version nccl/2.30.1 default\n");
        find_ok(root, "tcl", "nccl", "nccl/2.30.1", "tcl/nccl/2.30.1");
        /* .lua before Tcl for the same version */
        fx_write(root, "tcl/nccl/2.30.1.lua", "");
        find_ok(root, "tcl", "nccl/2.30.1", "nccl/2.30.1", "tcl/nccl/2.30.1.lua");
        fx_free(root);
}
END_TEST

/* A build for another architecture is hidden by its modulerc (cudamod's
 * plan): never what a bare name picks, as with Lmod and Environment
 * Modules, but loadable by its full name. */
START_TEST(find_skips_modules_a_modulerc_hides)
{
        char *root = fx_new();
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct modulefile m = { 0 };

        fx_write(root, "lua/nccl/2.21.5.lua", "");
        fx_write(root, "lua/nccl/2.22.3-aarch64.lua", "");
        fx_write(root, "lua/nccl/.modulerc.lua", "hide_version(\"nccl/2.22.3-aarch64\")\n");
        find_ok(root, "lua", "nccl", "nccl/2.21.5", "lua/nccl/2.21.5.lua");
        find_ok(root, "lua", "nccl/2.22.3-aarch64", "nccl/2.22.3-aarch64", "lua/nccl/2.22.3-aarch64.lua");
        fx_write(root, "tcl/nccl/2.21.5", "#%Module\n");
        fx_write(root, "tcl/nccl/2.22.3-aarch64", "#%Module\n");
        fx_write(root, "tcl/nccl/.modulerc",
                 "#%Module\nif {[info commands module-hide] ne \"\"} { module-hide \"nccl/2.22.3-aarch64\" } "
                 "elseif {[info commands hide-version] ne \"\"} { hide-version \"nccl/2.22.3-aarch64\" }\n");
        find_ok(root, "tcl", "nccl", "nccl/2.21.5", "tcl/nccl/2.21.5");
        /* The only one, hidden: a bare name finds nothing. */
        fx_write(root, "only/nccl/2.18.3-aarch64.lua", "");
        fx_write(root, "only/nccl/.modulerc.lua", "hide_version(\"nccl/2.18.3-aarch64\")\n");
        mp_of(&mp, root, "only");
        ck_assert_int_eq(modulepath_find(&mp, "nccl", &m, &d), -ENOENT);
        find_ok(root, "only", "nccl/2.18.3-aarch64", "nccl/2.18.3-aarch64", "only/nccl/2.18.3-aarch64.lua");
        fx_free(root);
}
END_TEST

START_TEST(find_reports_what_is_missing)
{
        char *root = fx_new();
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct modulefile m = { 0 };

        fx_write(root, "mp/cuda/12.4.lua", "");
        mp_of(&mp, root, "mp");
        ck_assert_int_eq(modulepath_find(&mp, "cudnn", &m, &d), -ENOENT);
        ck_assert_ptr_nonnull(strstr(d.message, "'cudnn' not found"));
        ck_assert_ptr_nonnull(strstr(d.message, "/mp)"));
        ck_assert_int_eq(modulepath_find(&mp, "cuda/11", &m, &d), -ENOENT);
        ck_assert_int_eq(modulepath_find(&mp, "../mp/cuda/12.4", &m, &d), -EINVAL);
        ck_assert_int_eq(modulepath_find(&mp, "/etc/passwd", &m, &d), -EINVAL);
        fx_free(root);
}
END_TEST

START_TEST(list_gives_every_module_once)
{
        char *root = fx_new();
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct modulefile *mods = NULL;
        size_t n = 0;

        fx_write(root, "a/cuda/12.10.lua", "");
        fx_write(root, "a/cuda/12.9.lua", "");
        fx_write(root, "a/cuda/.modulerc.lua", "");
        fx_write(root, "a/cuda/.11.0.lua", "");
        fx_write(root, "a/tool.lua", "");
        fx_write(root, "b/cuda/12.9.lua", "");
        fx_write(root, "b/nccl/2.21.5", "#%Module\n");
        mp_of(&mp, root, "a:b");
        ck_assert_int_eq(modulepath_list(&mp, &mods, &n, &d), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_str_eq(mods[0].fullname, "cuda/12.9");
        ck_assert_ptr_nonnull(strstr(mods[0].path, "/a/cuda/12.9.lua"));
        ck_assert_str_eq(mods[1].fullname, "cuda/12.10");
        ck_assert_str_eq(mods[2].fullname, "nccl/2.21.5");
        ck_assert(!mods[2].lua);
        ck_assert_str_eq(mods[3].fullname, "tool");
        modulefile_array_free(mods, n);
        fx_free(root);
}
END_TEST

/* Load specs from root/mp with start env extra ("NAME=value", NULL-terminated). */
static int load(const char *root, const char *dirs, const char *const *extra,
                const char *const *specs, struct evaluation *e, struct diag *d)
{
        _cleanup_(strv_release) struct strv mp = { 0 }, env = { 0 };
        size_t n = 0;

        for (const char *const *p = clean_env; *p; p++)
                strv_add(&env, *p);
        for (const char *const *p = extra; p && *p; p++)
                strv_add(&env, *p);
        mp_of(&mp, root, dirs);
        while (specs[n])
                n++;
        return evaluate_load(&(struct evaluate_options){ .environ = env.items, .modulepath = &mp },
                             (char *const *)specs, n, e, d);
}

static void load_ok(const char *root, const char *dirs, const char *const *extra,
                    const char *const *specs, struct evaluation *e)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        int r = load(root, dirs, extra, specs, e, &d);

        ck_assert_msg(r == 0, "load failed: %s:%u: %s", d.file ? d.file : "", d.line,
                      d.message ? d.message : "?");
}

static void assert_env(const struct strv *env, const char *name, const char *want)
{
        const char *have = env_get(env->items, name);

        if (!want)
                ck_assert_msg(!have, "%s should be unset, is '%s'", name, have);
        else {
                ck_assert_msg(have != NULL, "%s is unset, expected '%s'", name, want);
                ck_assert_str_eq(have, want);
        }
}

START_TEST(load_applies_path_operations_as_lmod)
{
        char *root = fx_new();
        struct evaluation e = { 0 };

        /* The cases measured with Lmod 8.6.19 (see evaluate.h). */
        fx_write(root, "mp/t/1.lua",
                 "prepend_path(\"FOO\",\"/a\")\n"
                 "append_path(\"FOO\",\"/z\")\n"
                 "prepend_path(\"BAR\",\"/p1:/p2\")\n"
                 "append_path(\"BAZ\",\"/b1\")\n"
                 "prepend_path(\"BAZ\",\"/b1\")\n"
                 "remove_path(\"QUX\",\"/q\")\n"
                 "remove_path(\"ONE\",\"/only\")\n"
                 "setenv(\"S\",\"v\")\n"
                 "unsetenv(\"U\")\n"
                 "prepend_path(\"EMPTYV\",\"/e\")\n"
                 "prepend_path(\"REG\",\"/c//d/\")\n"
                 "prepend_path{\"SEMI\",\"/s\",delim=\";\"}\n");
        load_ok(root, "mp",
                (const char *const[]){ "FOO=/x:/a:/y:/z:/w", "BAZ=/c", "QUX=/q:/r", "ONE=/only",
                                       "U=1", "EMPTYV=", "SEMI=/t;/u", NULL },
                (const char *const[]){ "t/1", NULL }, &e);
        assert_env(&e.env, "FOO", "/a:/x:/y:/w:/z");
        assert_env(&e.env, "BAR", "/p1:/p2");
        assert_env(&e.env, "BAZ", "/b1:/c");
        assert_env(&e.env, "QUX", "/r");
        assert_env(&e.env, "ONE", NULL);
        assert_env(&e.env, "S", "v");
        assert_env(&e.env, "U", NULL);
        assert_env(&e.env, "EMPTYV", "/e");
        assert_env(&e.env, "REG", "/c/d");
        assert_env(&e.env, "SEMI", "/s;/t;/u");
        assert_env(&e.env, "LOADEDMODULES", "t/1");
        ck_assert_uint_eq(e.n_modules, 1);
        assert_env(&e.env_before_last, "FOO", "/x:/a:/y:/z:/w");
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

/* pushenv as Lmod's MainControl.pushenv applies it on load: the value,
 * over one the start environment had; pushenv(N, false) clears N. The
 * Tcl form is the built-in template's (pushenv where the tool has it). */
START_TEST(load_applies_pushenv_as_lmod)
{
        char *root = fx_new();
        struct evaluation e = { 0 };

        fx_write(root, "mp/t/1.lua",
                 "pushenv(\"CUDA_HOME\", \"/sw/cuda-12.9\")\n"
                 "pushenv(\"NEW\", \"n\")\n"
                 "pushenv(\"GONE\", false)\n");
        load_ok(root, "mp", (const char *const[]){ "CUDA_HOME=/usr/local/cuda", "GONE=g", NULL },
                (const char *const[]){ "t/1", NULL }, &e);
        assert_env(&e.env, "CUDA_HOME", "/sw/cuda-12.9");
        assert_env(&e.env, "NEW", "n");
        assert_env(&e.env, "GONE", NULL);
        evaluation_release(&e);
        e = (struct evaluation){ 0 };
        fx_write(root, "tcl/t/1",
                 "#%Module\n"
                 "if {[info commands pushenv] eq \"\" || ([info exists ::ModuleTool] && $::ModuleTool eq \"Lmod\" &&\n"
                 "        [package vcompare $::ModuleToolVersion 8.7.6] < 0)} {\n"
                 "    setenv \"CUDA_HOME\" \"/sw/setenv\"\n"
                 "} else {\n"
                 "    pushenv \"CUDA_HOME\" \"/sw/cuda-12.9\"\n"
                 "}\n");
        load_ok(root, "tcl", (const char *const[]){ "CUDA_HOME=/usr/local/cuda", NULL },
                (const char *const[]){ "t/1", NULL }, &e);
        assert_env(&e.env, "CUDA_HOME", "/sw/cuda-12.9");
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

START_TEST(load_resolves_dependencies_in_the_modulepath)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        fx_write(root, "mp/cuda/11.8.lua", "family(\"cuda\")\nsetenv(\"CUDA_HOME\",\"/c11\")\n");
        fx_write(root, "mp/cuda/12.4.lua", "family(\"cuda\")\nsetenv(\"CUDA_HOME\",\"/c124\")\n"
                                           "prepend_path(\"LD_LIBRARY_PATH\",\"/c124/lib\")\n");
        fx_write(root, "mp/cuda/12.9.lua", "family(\"cuda\")\nsetenv(\"CUDA_HOME\",\"/c129\")\n"
                                           "prepend_path(\"LD_LIBRARY_PATH\",\"/c129/lib\")\n");
        fx_write(root, "mp/cuda/13.0.lua", "family(\"cuda\")\nsetenv(\"CUDA_HOME\",\"/c13\")\n");
        fx_write(root, "mp/cudnn/9.7.1.lua",
                 "depends_on(between(\"cuda\",\"12\",\"12.999999\"))\n"
                 "prepend_path(\"LD_LIBRARY_PATH\",\"/cudnn/lib\")\n"
                 "setenv(\"SEEN\", os.getenv(\"CUDA_HOME\") or \"none\")\n");
        /* depends_on: the highest version in range, loaded first */
        load_ok(root, "mp", NULL, (const char *const[]){ "cudnn/9.7.1", NULL }, &e);
        ck_assert_uint_eq(e.n_modules, 2);
        ck_assert_str_eq(e.modules[0].file.fullname, "cuda/12.9");
        ck_assert_str_eq(e.modules[0].requested_by, "cudnn/9.7.1");
        ck_assert_ptr_null(e.modules[1].requested_by);
        assert_env(&e.env, "LD_LIBRARY_PATH", "/cudnn/lib:/c129/lib");
        assert_env(&e.env, "LOADEDMODULES", "cuda/12.9:cudnn/9.7.1");
        /* what the last module changed: env minus env_before_last */
        assert_env(&e.env_before_last, "LD_LIBRARY_PATH", "/c129/lib");
        /* os.getenv sees the environment as the load made it so far,
         * the dependency loaded by depends_on included (Lmod does the
         * same: tests/modules/lmod-api.sh compares) */
        assert_env(&e.env, "SEEN", "/c129");
        evaluation_release(&e);

        /* a loaded cuda in range satisfies it */
        load_ok(root, "mp", NULL, (const char *const[]){ "cuda/12.4", "cudnn", NULL }, &e);
        ck_assert_uint_eq(e.n_modules, 2);
        assert_env(&e.env, "LD_LIBRARY_PATH", "/cudnn/lib:/c124/lib");
        assert_env(&e.env, "SEEN", "/c124");
        evaluation_release(&e);

        /* one out of range is an error that says what to do */
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "cuda/13.0", "cudnn", NULL },
                              &e, &d),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(d.message, "cudnn/9.7.1 needs between(cuda,12,12.999999), "
                                                "but cuda/13.0 is loaded"));
        /* two of one family */
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "cuda/12.4", "cuda/11.8", NULL },
                              &e, &d),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(d.message, "cuda/12.4 is loaded already"));
        fx_free(root);
}
END_TEST

START_TEST(load_follows_the_hierarchy)
{
        char *root = fx_new();
        _cleanup_free_ char *level = path_join(root, "mf/CUDA/12");
        _cleanup_free_ char *cuda = xasprintf("family(\"cuda\")\nprepend_path(\"MODULEPATH\",\"%s\")\n",
                                              level);
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        fx_write(root, "mf/Core/cuda/12.9.lua", cuda);
        fx_write(root, "mf/CUDA/12/cudnn/9.7.1.lua", "setenv(\"CUDNN_ROOT\",\"/cudnn\")\n");
        fx_write(root, "mf/CUDA/12/cudnn/.modulerc.lua", "module_version(\"9.7.1\",\"default\")\n");
        fx_write(root, "mf/CUDA/12/cudnn/9.8.0.lua", "setenv(\"CUDNN_ROOT\",\"/newer\")\n");
        /* cudnn is only reachable once cuda extended MODULEPATH */
        ck_assert_int_eq(load(root, "mf/Core", NULL, (const char *const[]){ "cudnn", NULL }, &e, &d),
                         -ENOENT);
        load_ok(root, "mf/Core", NULL, (const char *const[]){ "cuda", "cudnn", NULL }, &e);
        ck_assert_str_eq(e.modules[1].file.fullname, "cudnn/9.7.1");
        assert_env(&e.env, "CUDNN_ROOT", "/cudnn");
        ck_assert_ptr_nonnull(strstr(env_get(e.env.items, "MODULEPATH"), "/mf/CUDA/12:"));
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

START_TEST(load_checks_prereq_conflict_cycles_and_errors)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        fx_write(root, "mp/a/1.lua", "setenv(\"A\",\"1\")\n");
        fx_write(root, "mp/p/1.lua", "setenv(\"X\",\"1\")\nprereq(\"a\")\n");
        fx_write(root, "mp/c/1.lua", "conflict(\"a\")\n");
        fx_write(root, "mp/loop/1.lua", "depends_on(\"loop2\")\n");
        fx_write(root, "mp/loop2/1.lua", "load(\"loop\")\n");
        fx_write(root, "mp/err/1.lua", "setenv(\"A\",\"1\")\nLmodError(\"no GPU here\")\n");
        fx_write(root, "mp/try/1.lua", "try_load(\"nonexistent\")\nsetenv(\"T\",\"1\")\n");
        fx_write(root, "mp/dep/1.lua", "depends_on(\"nonexistent/2\")\n");

        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "p", NULL }, &e, &d), -EINVAL);
        ck_assert_ptr_nonnull(strstr(d.message, "cannot load p/1 without a loaded first"));
        ck_assert_uint_eq(d.line, 2);
        load_ok(root, "mp", NULL, (const char *const[]){ "a", "p", NULL }, &e);
        evaluation_release(&e);
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "a", "c", NULL }, &e, &d),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(d.message, "c/1 conflicts with the loaded a"));
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "loop", NULL }, &e, &d), -ELOOP);
        ck_assert_ptr_nonnull(strstr(d.message, "loop/1 depends on itself"));
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "err", NULL }, &e, &d), -EINVAL);
        ck_assert_ptr_nonnull(strstr(d.message, "no GPU here"));
        ck_assert_ptr_nonnull(strstr(d.file ? d.file : d.message, "err/1.lua"));
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "dep", NULL }, &e, &d), -ENOENT);
        ck_assert_ptr_nonnull(strstr(d.message, "dep/1 needs nonexistent/2"));
        load_ok(root, "mp", NULL, (const char *const[]){ "try", NULL }, &e);
        assert_env(&e.env, "T", "1");
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

/* The naive model: the first "NAME=" item of a strv. */
static const char *model_get(const struct strv *m, const char *name)
{
        return env_get(m->items, name);
}

static void model_set(struct strv *m, const char *name, const char *value)
{
        size_t n = strlen(name);

        for (size_t i = 0; i < m->len; i++)
                if (strncmp(m->items[i], name, n) == 0 && m->items[i][n] == '=') {
                        free(m->items[i]);
                        m->items[i] = xasprintf("%s=%s", name, value);
                        return;
                }
        strv_push(m, xasprintf("%s=%s", name, value));
}

static void model_unset(struct strv *m, const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; i < m->len; i++)
                if (strncmp(m->items[i], name, n) == 0 && m->items[i][n] == '=') {
                        free(m->items[i]);
                        m->items[i] = m->items[--m->len];
                        m->items[m->len] = NULL;
                        return;
                }
}

/* The index of a load's environment against a plain list searched item by
 * item: 30,000 sets and unsets of 3,000 names (the table grows, and every
 * unset moves the entries after it in its probe run back), then every
 * name looked up, and the variables are the model's, each once. */
START_TEST(env_index_agrees_with_a_list)
{
        const char *const start[] = { "A=1", "B=2", "A=shadowed", "NOEQUALS", "=empty-name", NULL };
        struct strv model = { 0 }, sorted_env = { 0 }, sorted_model = { 0 };
        struct env e;
        unsigned seed = 1;

        env_init(&e, (char *const *)start);
        strv_add(&model, "A=1");
        strv_add(&model, "B=2");
        strv_add(&model, "=empty-name");
        ck_assert_uint_eq(e.vars.len, 3);
        ck_assert_str_eq(env_lookup(&e, "A"), "1");
        ck_assert_ptr_null(env_lookup(&e, "NOEQUALS"));
        /* A name holding '=' names no variable, and leaves the index whole:
         * "A=B" filed under its whole name would be moved, on the unset of
         * an earlier variable, to a slot no lookup of it reaches. */
        env_set(&e, "X", "1");
        env_set(&e, "A=B", "y");
        env_unset(&e, "X");
        env_set(&e, "A=B", "z");
        env_unset(&e, "A=B");
        ck_assert_ptr_null(env_lookup(&e, "A=B"));
        ck_assert_str_eq(env_lookup(&e, "A"), "1");
        ck_assert_uint_eq(e.vars.len, 3);
        for (int op = 0; op < 30000; op++) {
                char name[16], value[16];

                seed = seed * 1103515245u + 12345u;
                snprintf(name, sizeof(name), "V%u", (seed >> 8) % 3000);
                snprintf(value, sizeof(value), "%d", op);
                if ((seed >> 4) % 3 == 0) {
                        env_unset(&e, name);
                        model_unset(&model, name);
                } else {
                        env_set(&e, name, value);
                        model_set(&model, name, value);
                }
                ck_assert_ptr_null(e.vars.items[e.vars.len]);
        }
        ck_assert_uint_eq(e.vars.len, model.len);
        for (unsigned i = 0; i < 3000; i++) {
                char name[16];
                const char *want, *got;

                snprintf(name, sizeof(name), "V%u", i);
                want = model_get(&model, name);
                got = env_lookup(&e, name);
                if (!want)
                        ck_assert_msg(got == NULL, "%s: %s, not unset", name, got);
                else
                        ck_assert_msg(got && streq(got, want), "%s: %s, not %s", name, got, want);
        }
        for (size_t i = 0; i < e.vars.len; i++)
                strv_add(&sorted_env, e.vars.items[i]);
        for (size_t i = 0; i < model.len; i++)
                strv_add(&sorted_model, model.items[i]);
        strv_sort_uniq(&sorted_env);
        strv_sort_uniq(&sorted_model);
        ck_assert_uint_eq(sorted_env.len, e.vars.len);
        for (size_t i = 0; i < sorted_model.len; i++)
                ck_assert_str_eq(sorted_env.items[i], sorted_model.items[i]);
        env_release(&e);
        strv_release(&model);
        strv_release(&sorted_env);
        strv_release(&sorted_model);
}
END_TEST

START_TEST(diff_classifies_changes)
{
        struct strv before = { 0 }, after = { 0 };
        struct env_diff diff = { 0 };

        strv_add(&before, "PATH=/usr/bin:/bin");
        strv_add(&before, "GONE=1");
        strv_add(&before, "SAME=x");
        strv_add(&before, "CHANGED=old");
        strv_add(&before, "LD_LIBRARY_PATH=/b");
        strv_add(&after, "PATH=/cuda/bin:/usr/bin:/bin");
        strv_add(&after, "SAME=x");
        strv_add(&after, "CHANGED=new");
        strv_add(&after, "LD_LIBRARY_PATH=/a:/b:/c");
        strv_add(&after, "NEWPATH=/x:/y");
        strv_add(&after, "LOADEDMODULES=cuda/12.9");
        strv_add(&after, "__LMOD_REF_COUNT_PATH=/cuda/bin:1");
        env_diff_compute(&before, &after, &diff);
        ck_assert_uint_eq(diff.n, 5);
        ck_assert_str_eq(diff.changes[0].name, "CHANGED");
        ck_assert_int_eq(diff.changes[0].kind, ENV_SET);
        ck_assert_str_eq(diff.changes[1].name, "GONE");
        ck_assert_int_eq(diff.changes[1].kind, ENV_UNSET);
        ck_assert_str_eq(diff.changes[2].name, "LD_LIBRARY_PATH");
        ck_assert_int_eq(diff.changes[2].kind, ENV_PATH);
        ck_assert_uint_eq(diff.changes[2].prepended.len, 1);
        ck_assert_str_eq(diff.changes[2].prepended.items[0], "/a");
        ck_assert_str_eq(diff.changes[2].appended.items[0], "/c");
        ck_assert_str_eq(diff.changes[3].name, "NEWPATH");
        ck_assert_int_eq(diff.changes[3].kind, ENV_SET);
        ck_assert_str_eq(diff.changes[4].name, "PATH");
        ck_assert_uint_eq(diff.changes[4].appended.len, 0);
        env_diff_release(&diff);
        strv_release(&before);
        strv_release(&after);
}
END_TEST

/* `cudamod show` end to end: the human and JSON forms. */
static void show(struct run_result *r, const char *root, const char *const *mods, bool json)
{
        _cleanup_free_ char *mp = path_join(root, "mp");
        const char *argv[16] = { "show", "--modulepath", mp };
        size_t n = 3;

        if (json)
                argv[n++] = "--json";
        for (; *mods && n < ELEMENTSOF(argv) - 1; mods++)
                argv[n++] = *mods;
        argv[n] = NULL;
        run_cudamod(r, argv, false);
}

START_TEST(show_prints_the_environment)
{
        char *root = fx_new();
        struct run_result r = { 0 };

        fx_write(root, "mp/cuda/12.9.lua",
                 "setenv(\"CUDA_HOME\",\"/sw/cuda\")\nprepend_path(\"PATH\",\"/sw/cuda/bin\")\n"
                 "append_path(\"LIBRARY_PATH\",\"/sw/cuda/lib/stubs\")\nunsetenv(\"HOME\")\n"
                 "LmodMessage(\"hello\")\n");
        show(&r, root, (const char *const[]){ "cuda", NULL }, false);
        ck_assert_msg(r.status == 0, "show failed: %s", r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "cuda/12.9"));
        ck_assert_ptr_nonnull(strstr(r.out, "message: hello"));
        ck_assert_ptr_nonnull(strstr(r.out, "CUDA_HOME          = /sw/cuda\n"));
        ck_assert_ptr_nonnull(strstr(r.out, "PATH               < /sw/cuda/bin\n"));
        ck_assert_ptr_nonnull(strstr(r.out, "HOME               -\n"));
        run_result_release(&r);

        show(&r, root, (const char *const[]){ "cuda", NULL }, true);
        ck_assert_msg(r.status == 0, "show --json failed: %s", r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "\"cudamod\": \"show\""));
        ck_assert_ptr_nonnull(strstr(r.out, "\"module\": \"cuda/12.9\""));
        ck_assert_ptr_nonnull(strstr(r.out, "\"action\": \"unset\""));
        ck_assert_ptr_nonnull(strstr(r.out, "\"prepend\": [\n        \"/sw/cuda/bin\""));
        run_result_release(&r);

        show(&r, root, (const char *const[]){ "cudnn", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "module 'cudnn' not found"));
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* A load just under the call cap: 6,000 variables set, every third one
 * unset again, 2,000 paths put in front. It loads, and show prints each
 * variable left as the calls left it. (Each call once cost a walk through
 * every variable set before it: under valgrind this load ran past its
 * CPU time limit.) */
START_TEST(show_a_load_of_thousands_of_variables)
{
        char *root = fx_new();
        struct run_result r = { 0 };

        fx_write(root, "mp/many/1.lua",
                 "for i = 1, 6000 do setenv('V' .. i, 'v' .. i) end\n"
                 "for i = 3, 6000, 3 do unsetenv('V' .. i) end\n"
                 "for i = 1, 2000 do prepend_path('P' .. i, '/p/' .. i) end\n");
        show(&r, root, (const char *const[]){ "many", NULL }, false);
        ck_assert_msg(r.status == 0, "show failed: %s", r.err);
        for (int i = 1; i <= 6000; i++) {
                char line[64];

                snprintf(line, sizeof(line), "\n  V%-18d= v%d\n", i, i);
                if (i % 3)
                        ck_assert_msg(strstr(r.out, line) != NULL, "V%d missing", i);
                else
                        ck_assert_msg(strstr(r.out, line + 1) == NULL, "V%d not unset", i);
        }
        ck_assert_ptr_nonnull(strstr(r.out, "\n  P1999              = /p/1999\n"));
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* Hostile modulefiles: each ends with a clear error and exit 1, and what
 * it tried to run did not run (no file appears). */
static const struct {
        const char *body;
        const char *message;
} hostile[] = {
        { "while true do end\n", "instruction budget exhausted" },
        { "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1e6) end\n", "memory limit exceeded" },
        { "os.execute('touch @PWNED@')\n", "os.execute is not available in a modulefile" },
        { "io.open('@PWNED@', 'w')\n", "is not available in a modulefile" },
        { "require('os').execute('touch @PWNED@')\n", "require is not available" },
        { "local function f() return f() + 1 end f()\n", "stack overflow" },
        { "load(string.dump(function() end))()\n", "dump" },
        { "loadstring('os.execute(\"touch @PWNED@\")')()\n", "loadstring is not available" },
        /* Resource bounds: 44 bytes that would make a million calls to
         * apply (hours), copies outside the Lua heap (gigabytes), and
         * variables no program could be started with. */
        { "for i = 1, 1e6 do setenv('V' .. i, 'x') end\n",
          "more than 10000 calls to modulefile functions (setenv, prepend_path, …)" },
        { "local s = string.rep('x', 1 << 20) for i = 1, 200 do whatis(s) end\n", "memory limit exceeded" },
        { "setenv('A', string.rep('x', 200000))\n",
          "setenv would make 'A' 200000 bytes long, more than the 131069 that Linux passes to a "
          "program (MAX_ARG_STRLEN): no command could run after this load" },
        { "local t = {} for i = 1, 3000 do t[i] = string.rep('d', 60) .. i end "
          "prepend_path('P', table.concat(t, ':', 1, 1500)) prepend_path('P', table.concat(t, ':', 1501, 3000))\n",
          "prepend_path would make 'P' 193892 bytes long" },
        { "local t = {} for i = 1, 5000 do t[i] = '/p' .. i end prepend_path('P', table.concat(t, ':'))\n",
          "prepend_path would give 'P' 5000 entries, more than the 4096 cudamod evaluates" },
        { "local t = {} for i = 1, 6000 do t[i] = '/p' .. i end "
          "append_path('P', table.concat(t, ':', 1, 3000)) append_path('P', table.concat(t, ':', 3001, 6000))\n",
          "append_path would give 'P' 6000 entries" },
        /* NAME is copied into every entry a module names: 120 MB a call. */
        { "local n, v = string.rep('N', 60000), string.rep('a:', 2000) for i = 1, 3 do prepend_path(n, v) end\n",
          "memory limit exceeded" },
};

START_TEST(show_refuses_hostile_modulefiles)
{
        char *root = fx_new();
        _cleanup_free_ char *pwned = path_join(root, "PWNED");
        _cleanup_free_ char *body = str_replace_all(hostile[_i].body, "@PWNED@", pwned);
        struct run_result r = { 0 };
        struct stat st;

        fx_write(root, "mp/evil/1.lua", body);
        show(&r, root, (const char *const[]){ "evil", NULL }, false);
        ck_assert_msg(r.status == 1, "status %d for %s: %s", r.status, hostile[_i].body, r.err);
        ck_assert_msg(strstr(r.err, "evil/1.lua:") != NULL, "no file in: %s", r.err);
        ck_assert_msg(strstr(r.err, hostile[_i].message) != NULL, "'%s' not in: %s",
                      hostile[_i].message, r.err);
        ck_assert_str_eq(r.out, "");
        ck_assert_int_ne(stat(pwned, &st), 0);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* A modulefile is read whole: over 1 MiB it is refused before anything
 * is read beyond the limit; exactly 1 MiB is evaluated. */
START_TEST(show_refuses_modulefiles_over_1_mib)
{
        const size_t max = (size_t)1 << 20;
        char *root = fx_new();
        _cleanup_free_ char *body = xmalloc(max + 2);
        struct run_result r = { 0 };

        memset(body, 'x', max + 1);
        memcpy(body, "setenv('A', '1') --", 19);
        body[max + 1] = '\0';
        fx_write(root, "mp/big/1.lua", body);
        show(&r, root, (const char *const[]){ "big", NULL }, false);
        ck_assert_int_eq(r.status, 1);
        ck_assert_ptr_nonnull(strstr(r.err, "big/1.lua: larger than 1 MiB, too large for a modulefile"));
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);

        body[max] = '\0';
        fx_write(root, "mp/big/1.lua", body);
        show(&r, root, (const char *const[]){ "big", NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "A "));
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* The modulefiles of one load share the bounds: a module may make 6,000
 * calls or record 40 MB, but not two of them together. */
START_TEST(load_bounds_are_shared_by_the_modules_of_a_load)
{
        char *root = fx_new();
        struct evaluation e = { 0 };

        fx_write(root, "mp/a/1.lua", "depends_on('b') for i = 1, 6000 do setenv('A' .. i, 'x') end\n");
        fx_write(root, "mp/b/1.lua", "for i = 1, 6000 do setenv('B' .. i, 'x') end\n");
        fx_write(root, "mp/c/1.lua",
                 "depends_on('d') local s = string.rep('x', 100000) for i = 1, 400 do whatis(s) end\n");
        fx_write(root, "mp/d/1.lua", "local s = string.rep('y', 100000) for i = 1, 400 do whatis(s) end\n");
        load_ok(root, "mp", NULL, (const char *const[]){ "b", NULL }, &e);
        evaluation_release(&e);
        load_ok(root, "mp", NULL, (const char *const[]){ "d", NULL }, &e);
        evaluation_release(&e);
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "a", NULL }, &e, &d), -E2BIG);
                ck_assert_msg(strstr(d.message, "make more than 10000 calls to modulefile functions "
                                                "(setenv, prepend_path, …) together"),
                              "%s", d.message);
        }
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_int_lt(load(root, "mp", NULL, (const char *const[]){ "c", NULL }, &e, &d), 0);
                ck_assert_msg(streq(d.message, "memory limit exceeded"), "%s", d.message);
                /* c's depends_on loads d first (each call is applied as
                 * it is made): c's own records then pass the cap. */
                ck_assert_ptr_nonnull(strstr(d.file, "c/1.lua"));
        }
        fx_free(root);
}
END_TEST

/* The cap on a path variable's entries is on what the load adds: a
 * caller's MODULEPATH of more than 4,096 entries (10,001 in the report; 4,501
 * here, which is cheaper under valgrind) is not the module's fault, while
 * more than 4,096 added by the load still fail. */
START_TEST(load_caps_the_entries_a_load_adds_not_those_it_starts_with)
{
        char *root = fx_new();
        _cleanup_(strv_release) struct strv mp = { 0 }, env = { 0 };
        _cleanup_free_ char *more = path_join(root, "more");
        struct strbuf path = STRBUF_INIT, half = STRBUF_INIT;
        struct evaluation e = { 0 };

        fx_mkdir(root, "more");
        strv_push(&mp, path_join(root, "mp"));
        for (int i = 0; i < 4500; i++)
                strv_push(&mp, xasprintf("/n/%d", i));
        strbuf_addstr(&path, "PATH=/usr/bin:/bin");
        for (int i = 0; i < 5000; i++)
                strbuf_addf(&path, ":/p/%d", i);
        strv_add(&env, path.buf);
        strv_add(&env, "HOME=/nonexistent");
        for (int i = 0; i < 2049; i++)
                strbuf_addf(&half, "%s/a/%d", i ? ":" : "", i);
        {
                _cleanup_free_ char *text = xasprintf("prepend_path('MODULEPATH', '%s')\nprepend_path('PATH', '/x')\n", more);
                _cleanup_free_ char *other = str_replace_all(half.buf, "/a/", "/b/");
                _cleanup_free_ char *adds = xasprintf("prepend_path('PATH', '%s')\nappend_path('PATH', '%s')\n",
                                                      half.buf, other);

                fx_write(root, "mp/h/1.lua", text);
                fx_write(root, "mp/many/1.lua", adds);
        }
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                const char *specs[] = { "h", NULL };
                int r = evaluate_load(&(struct evaluate_options){ .environ = env.items, .modulepath = &mp },
                                      (char *const *)specs, 1, &e, &d);

                ck_assert_msg(r == 0, "%s:%u: %s", d.file, d.line, d.message);
                ck_assert_ptr_nonnull(strstr(env_get(e.env.items, "MODULEPATH"), "/n/4499"));
                ck_assert(startswith(env_get(e.env.items, "MODULEPATH"), more));
                evaluation_release(&e);
        }
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                const char *specs[] = { "many", NULL };
                int r = evaluate_load(&(struct evaluate_options){ .environ = env.items, .modulepath = &mp },
                                      (char *const *)specs, 1, &e, &d);

                ck_assert_int_eq(r, -E2BIG);
                ck_assert_uint_eq(d.line, 2);
                ck_assert_msg(strstr(d.message, "append_path would give 'PATH' 9100 entries, 4098 more than the "
                                                "5002 it had before this load, more than the 4096 cudamod evaluates"),
                              "%s", d.message);
        }
        strbuf_release(&path);
        strbuf_release(&half);
        fx_free(root);
}
END_TEST

static int load_with_cpu(const char *root, const char *spec, unsigned max_cpu_ms, struct evaluation *e,
                         struct diag *d)
{
        _cleanup_(strv_release) struct strv mp = { 0 };
        const char *specs[] = { spec, NULL };

        mp_of(&mp, root, "mp");
        return evaluate_load(&(struct evaluate_options){ .environ = (char *const *)clean_env,
                                                         .modulepath = &mp, .max_cpu_ms = max_cpu_ms },
                             (char *const *)specs, 1, e, d);
}

static double thread_cpu_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A chain of depends_on shares one CPU budget: eight files, each well
 * within it alone, together exceed it (each had 10 s of its own before). */
START_TEST(load_cpu_time_is_shared_by_the_modules_of_a_load)
{
        /* Slow instructions: == compares 1 MiB each time. */
        static const char burn[] = "local a = ('x'):rep(1 << 20)\nlocal b = a:sub(1, -2) .. 'y'\n"
                                   "for i = 1, 200 do local _ = a == b end\n";
        char *root = fx_new();
        struct evaluation e = { 0 };
        double one[3];
        unsigned budget;

        for (int i = 1; i <= 8; i++) {
                _cleanup_free_ char *rel = xasprintf("mp/w%d/1.lua", i);
                _cleanup_free_ char *text = i < 8 ? xasprintf("depends_on('w%d')\n%s", i + 1, burn) : xstrdup(burn);

                fx_write(root, rel, text);
        }
        /* What one file costs here (the median of three), then a budget of
         * two files: one fits with room, eight do not. */
        for (int k = 0; k < 3; k++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                double t0 = thread_cpu_ms();

                ck_assert_msg(load_with_cpu(root, "w8", 60000, &e, &d) == 0, "%s", d.message);
                one[k] = thread_cpu_ms() - t0;
                evaluation_release(&e);
        }
        for (int k = 0; k < 2; k++)
                for (int j = k + 1; j < 3; j++)
                        if (one[j] < one[k]) {
                                double t = one[k];
                                one[k] = one[j];
                                one[j] = t;
                        }
        budget = (unsigned)(one[1] * 2) + 1;
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_msg(load_with_cpu(root, "w8", budget, &e, &d) == 0, "one file in %u ms: %s", budget,
                              d.message);
                evaluation_release(&e);
        }
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_msg(load_with_cpu(root, "w1", budget, &e, &d) == -EINVAL, "eight files in %u ms loaded",
                              budget);
                ck_assert_msg(strstr(d.message, "CPU time limit exceeded") &&
                                      strstr(d.message, "for the whole load, shared by its modulefiles"),
                              "%s", d.message);
                ck_assert_ptr_nonnull(d.file);
                ck_assert_msg(!strstr(d.file, "w1/"), "%s: %s", d.file, d.message);
        }
        fx_free(root);
}
END_TEST

START_TEST(show_binary_chunk_is_refused)
{
        char *root = fx_new();
        struct run_result r = { 0 };

        fx_write(root, "mp/evil/1.lua", "\x1bLuaS\x00 binary");
        show(&r, root, (const char *const[]){ "evil", NULL }, false);
        ck_assert_int_eq(r.status, 1);
        ck_assert_ptr_nonnull(strstr(r.err, "binary chunks are not accepted"));
        run_result_release(&r);
        fx_free(root);
}
END_TEST


/* --- Tcl modulefiles in the safe interpreter ---------------------------------- */

static int load_with(const char *root, const char *dirs, const char *const *extra,
                     const char *const *specs, bool strict, struct evaluation *e, struct diag *d)
{
        _cleanup_(strv_release) struct strv mp = { 0 }, env = { 0 };
        size_t n = 0;

        for (const char *const *p = clean_env; *p; p++)
                strv_add(&env, *p);
        for (const char *const *p = extra; p && *p; p++)
                strv_add(&env, *p);
        mp_of(&mp, root, dirs);
        while (specs[n])
                n++;
        return evaluate_load(&(struct evaluate_options){ .environ = env.items,
                                                         .modulepath = &mp,
                                                         .strict_modes = strict },
                             (char *const *)specs, n, e, d);
}

START_TEST(tcl_load_applies_path_operations_as_environment_modules)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_free_ char *mp = path_join(root, "mp");
        _cleanup_free_ char *want_mp = xasprintf("/tmp/mp1:%s", mp);

        /* The cases measured with Environment Modules 5.2's modulecmd.tcl:
         * an entry already there stays, none is regularised. */
        fx_write(root, "mp/x/1",
                 "#%Module\n"
                 "prepend-path FOO /b\n"
                 "prepend-path FOO /a//\n"
                 "append-path FOO /c/\n"
                 "prepend-path FOO /x:/y\n"
                 "append-path BAR /q\n"
                 "remove-path BAZ /z\n"
                 "setenv E \"a b\"\n"
                 "unsetenv U\n"
                 "prepend-path -d , COMMA x\n"
                 "module use /tmp/mp1\n"
                 "setenv H $env(HOME)\n"
                 "setenv G [getenv NOPE dflt]\n"
                 "setenv N [module-info name]\n"
                 "setenv M [module-info mode]\n"
                 "if {[info exists ::ModuleTool] && $::ModuleTool eq \"Modules\"} { setenv EM 1 }\n"
                 "setenv R [file tail [file dirname $ModulesCurrentModulefile]]\n");
        load_ok(root, "mp",
                (const char *const[]){ "FOO=/a:/q:/a", "BAR=/q:/r", "BAZ=/z", "U=1", "COMMA=y,x", NULL },
                (const char *const[]){ "x", NULL }, &e);
        assert_env(&e.env, "FOO", "/x:/y:/a//:/b:/a:/q:/a:/c/");
        assert_env(&e.env, "BAR", "/q:/r");
        assert_env(&e.env, "BAZ", NULL);
        assert_env(&e.env, "E", "a b");
        assert_env(&e.env, "U", NULL);
        assert_env(&e.env, "COMMA", "y,x");
        assert_env(&e.env, "MODULEPATH", want_mp);
        assert_env(&e.env, "H", "/nonexistent");
        assert_env(&e.env, "G", "dflt");
        assert_env(&e.env, "N", "x/1");
        assert_env(&e.env, "M", "load");
        assert_env(&e.env, "EM", "1");
        assert_env(&e.env, "R", "x");
        assert_env(&e.env, "LOADEDMODULES", "x/1");
        ck_assert_uint_eq(e.n_modules, 1);
        ck_assert(!e.modules[0].file.lua);
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

/* Whether some process's command line holds marker: a child polls
 * /proc for up to ms milliseconds and exits 1 at the first one it sees. */
static pid_t watch_cmdlines(const char *marker, int ms)
{
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid > 0)
                return pid;
        for (int t = 0; t < ms; t += 5) {
                DIR *dir = opendir("/proc");
                struct dirent *de;

                while (dir && (de = readdir(dir))) {
                        char path[300], buf[65536];
                        ssize_t n;
                        int fd;

                        if (de->d_name[0] < '0' || de->d_name[0] > '9')
                                continue;
                        (void)snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
                        fd = open(path, O_RDONLY | O_CLOEXEC);
                        if (fd < 0)
                                continue;
                        n = read(fd, buf, sizeof(buf) - 1);
                        close(fd);
                        if (n > 0 && memmem(buf, (size_t)n, marker, strlen(marker)))
                                _exit(1);
                }
                if (dir)
                        closedir(dir);
                usleep(5000);
        }
        _exit(0);
}

/* The environment a Tcl load starts from reaches tclsh through its own
 * environment, which only its owner can read, never its command line,
 * which every local user can (ps, /proc/PID/cmdline): a token in the
 * caller's environment stays private. Its bytes arrive as they are. */
START_TEST(tcl_environment_is_not_on_a_command_line)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_free_ char *marker = xasprintf("cudamod-secret-%ld-%ld", (long)getpid(), (long)time(NULL));
        _cleanup_free_ char *entry = xasprintf("SECRET=%s caf\xc3\xa9 \xe9\nx", marker);
        _cleanup_free_ char *want = xasprintf("%s caf\xc3\xa9 \xe9\nx", marker);
        int status;
        pid_t watcher;

        /* Busy for a moment, so that a watcher sees tclsh while it runs. */
        fx_write(root, "mp/v/1",
                 "#%Module\n"
                 "for {set i 0} {$i < 2000000} {incr i} {}\n"
                 "setenv GOT [getenv SECRET]\n");
        watcher = watch_cmdlines(marker, 4000);
        load_ok(root, "mp", (const char *const[]){ entry, NULL }, (const char *const[]){ "v/1", NULL }, &e);
        kill(watcher, SIGKILL); /* SIGTERM: the suite's handler would pass it on to the group */
        ck_assert_int_eq(waitpid(watcher, &status, 0), watcher);
        ck_assert_msg(!(WIFEXITED(status) && WEXITSTATUS(status) == 1),
                      "the caller's environment was on a command line");
        assert_env(&e.env, "GOT", want);
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

/* No value can pass for a record: newlines, quotes, brackets, control
 * characters and non-ASCII come back as they were. */
START_TEST(tcl_values_come_back_exactly)
{
        char *root = fx_new();
        struct evaluation e = { 0 };

        fx_write(root, "mp/v/1",
                 "#%Module\n"
                 "setenv A \"x\\nsetenv B x42\\nend\\n\"\n"
                 "setenv Q {\"quoted\" [not run] $notavar \\t}\n"
                 "setenv U \"\\u00e9\\u4e2d\"\n"
                 "setenv T \"a\\tb\\rc\"\n"
                 "setenv RAW \"caf\xc3\xa9 \xe9\"\n"
                 "setenv EMPTY {}\n");
        load_ok(root, "mp", NULL, (const char *const[]){ "v/1", NULL }, &e);
        assert_env(&e.env, "A", "x\nsetenv B x42\nend\n");
        assert_env(&e.env, "B", NULL);
        assert_env(&e.env, "Q", "\"quoted\" [not run] $notavar \\t");
        /* Bytes as they are, as Environment Modules in the C locale: an
         * escape below U+0100 is that byte, above it its UTF-8. */
        assert_env(&e.env, "U", "\xe9\xe4\xb8\xad");
        assert_env(&e.env, "RAW", "caf\xc3\xa9 \xe9");
        assert_env(&e.env, "T", "a\tb\rc");
        assert_env(&e.env, "EMPTY", "");
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

/* Environment Modules' choice, measured with its modulecmd.tcl: prereq
 * loads a missing requirement; inside a range or a partial version the
 * marked default wins when it is one of them, else the highest. */
START_TEST(tcl_prereq_loads_the_default_in_range)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        static const char *const versions[] = { "11.8", "12.1", "12.9", "12.10" };

        for (size_t i = 0; i < ELEMENTSOF(versions); i++) {
                _cleanup_free_ char *rel = xasprintf("mp/cuda/%s", versions[i]);
                _cleanup_free_ char *text = xasprintf("#%%Module\nsetenv CV %s\n", versions[i]);

                fx_write(root, rel, text);
        }
        fx_write(root, "mp/cudnn/1", "#%Module\nprereq cuda@12:12.999999\nsetenv X 1\n");
        fx_write(root, "mp/cudnn/2", "#%Module\nprereq cuda@11:11.9 cuda@12\nsetenv X 2\n");
        fx_write(root, "mp/cudnn/3", "#%Module\nprereq cuda/12\n");
        fx_write(root, "mp/cuda/.modulerc", "#%Module\nmodule-version cuda/12.1 default\n");
        load_ok(root, "mp", NULL, (const char *const[]){ "cudnn/1", NULL }, &e);
        assert_env(&e.env, "CV", "12.1");
        assert_env(&e.env, "LOADEDMODULES", "cuda/12.1:cudnn/1");
        ck_assert_str_eq(e.modules[0].requested_by, "cudnn/1");
        evaluation_release(&e);
        load_ok(root, "mp", NULL, (const char *const[]){ "cuda/12", NULL }, &e);
        assert_env(&e.env, "CV", "12.1");
        evaluation_release(&e);
        fx_write(root, "mp/cuda/.modulerc", "#%Module\nmodule-version cuda/11.8 default\n");
        load_ok(root, "mp", NULL, (const char *const[]){ "cudnn/1", NULL }, &e);
        assert_env(&e.env, "CV", "12.10");
        evaluation_release(&e);
        load_ok(root, "mp", NULL, (const char *const[]){ "cudnn/2", NULL }, &e);
        assert_env(&e.env, "CV", "11.8");
        evaluation_release(&e);
        load_ok(root, "mp", NULL, (const char *const[]){ "cudnn/3", NULL }, &e);
        assert_env(&e.env, "CV", "12.10");
        evaluation_release(&e);
        /* Already loaded: nothing more. */
        load_ok(root, "mp", NULL, (const char *const[]){ "cuda/12.9", "cudnn/1", NULL }, &e);
        assert_env(&e.env, "LOADEDMODULES", "cuda/12.9:cudnn/1");
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

/* What a Tcl modulefile may not do in the safe interpreter: each is an
 * error at its line, and nothing happens. */
static const struct {
        const char *body; /* after "#%Module\nsetenv OK 1\n"; %s: the marker */
        const char *message;
} tcl_refused[] = {
        { "exec /bin/sh -c {touch %s}\n", "exec is not available" },
        { "close [open %s w]\n", "open is not available" },
        { "file delete %s\n", "file delete is not available" },
        { "source %s\n", "source is not available" },
        { "system {touch %s}\n", "system is not available" },
        { "socket localhost 22 ;# %s\n", "socket is not available" },
        { "puts stdout {touch %s}\n", "puts to stdout" },
        { "exit 0 ;# %s\n", "exit is not available" },
        { "interp create x ;# %s\n", "invalid command name \"interp\"" },
        { "load %s\n", "load is not available" },
        { "cd / ;# %s\n", "cd is not available" },
        { "glob * ;# %s\n", "glob is not available" },
        { "source-sh bash %s\n", "source-sh is not available" },
        { "proc f {} {f}\nf ;# %s\n", "too many nested evaluations" },
        { "set x [string repeat a 2000000000] ;# %s\n", "" },
        { NULL, NULL },
};

START_TEST(tcl_modulefile_cannot_run_anything)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *marker = path_join(root, "PWNED");
        const char *at = strstr(tcl_refused[_i].body, "%s");
        _cleanup_free_ char *text = xasprintf("#%%Module\nsetenv OK 1\n%.*s%s%s",
                                              (int)(at - tcl_refused[_i].body), tcl_refused[_i].body,
                                              marker, at + 2);
        int r;

        fx_write(root, "mp/evil/1", text);
        r = load(root, "mp", NULL, (const char *const[]){ "evil/1", NULL }, &e, &d);
        ck_assert_msg(r == -EINVAL, "%s: %d", tcl_refused[_i].body, r);
        ck_assert_msg(strstr(d.message, tcl_refused[_i].message), "%s: %s", tcl_refused[_i].body,
                      d.message);
        if (strstr(tcl_refused[_i].message, "not available"))
                ck_assert_msg(strstr(d.message, "--trust-modulefiles"), "%s", d.message);
        ck_assert_ptr_nonnull(strstr(d.file, "evil/1"));
        if (!strstr(tcl_refused[_i].body, "proc") && !strstr(tcl_refused[_i].body, "repeat"))
                ck_assert_uint_eq(d.line, 3);
        ck_assert_msg(access(marker, F_OK) != 0, "%s ran", tcl_refused[_i].body);
        fx_free(root);
}
END_TEST

/* A Tcl name holding '=' ("A=B" set to "y" would be the entry "A=B=y",
 * variable A) is refused at its line, as the Lua sandbox refuses it. Let
 * through, this sequence left the load's index pointing past its last
 * variable, and the second setenv crashed cudamod. */
START_TEST(tcl_variable_name_cannot_hold_equals)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        fx_write(root, "mp/eq/1", "#%Module\nsetenv X 1\nsetenv A=B y\nunsetenv X\nsetenv A=B z\n");
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "eq/1", NULL }, &e, &d),
                         -EINVAL);
        ck_assert_msg(strstr(d.message, "a variable name cannot hold '=' ('A=B')"), "%s", d.message);
        ck_assert_uint_eq(d.line, 3);
        fx_free(root);
}
END_TEST

START_TEST(tcl_endless_loop_ends)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        fx_write(root, "mp/loop/1", "#%Module\nwhile 1 {}\n");
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "loop/1", NULL }, &e, &d),
                         -EINVAL);
        ck_assert_msg(strstr(d.message, "limit exceeded") || strstr(d.message, "longer than"),
                      "%s", d.message);
        fx_free(root);
}
END_TEST

START_TEST(tcl_without_tclsh_is_refused_naming_trust)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_(strv_release) struct strv mp = { 0 };
        static char path[] = "PATH=/nonexistent", spec[] = "a/1";
        char *env[] = { path, NULL }, *specs[] = { spec };

        fx_write(root, "mp/a/1", "#%Module\nsetenv A 1\n");
        mp_of(&mp, root, "mp");
        ck_assert_int_eq(evaluate_load(&(struct evaluate_options){ .environ = env, .modulepath = &mp },
                                       specs, 1, &e, &d),
                         -ENOEXEC);
        ck_assert_ptr_nonnull(strstr(d.message, "no tclsh"));
        ck_assert_ptr_nonnull(strstr(d.message, "--trust-modulefiles"));
        fx_free(root);
}
END_TEST

START_TEST(tcl_and_lua_do_not_mix)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        fx_write(root, "mp/t/1", "#%Module\nmodule load l\n");
        fx_write(root, "mp/l/1.lua", "setenv(\"L\",\"1\")\n");
        ck_assert_int_eq(load(root, "mp", NULL, (const char *const[]){ "t/1", NULL }, &e, &d), -ENOEXEC);
        ck_assert_ptr_nonnull(strstr(d.message, "is a Lua modulefile, loaded from a Tcl one"));
        fx_free(root);
}
END_TEST

/* OpenSSH's StrictModes: the file and the directories above it up to its
 * modulepath directory. */
START_TEST(strict_modes_refuse_what_others_can_change)
{
        char *root = fx_new();
        struct evaluation e = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *file = path_join(root, "mp/a/1.lua"), *dir = path_join(root, "mp/a");
        _cleanup_free_ char *mpdir = path_join(root, "mp");

        fx_write(root, "mp/a/1.lua", "setenv(\"A\",\"1\")\n");
        fx_write(root, "mp/t/1", "#%Module\nsetenv T 1\n");
        chmod(root, 0755);
        chmod(mpdir, 0777); /* the modulepath directory's own parent is not looked at */
        chmod(mpdir, 0755);
        chmod(dir, 0755);
        chmod(file, 0644);
        ck_assert_msg(load_with(root, "mp", NULL, (const char *const[]){ "a/1", NULL }, true, &e, &d) == 0,
                      "a 0644 file refused: %s", d.message);
        evaluation_release(&e);
        chmod(file, 0664);
        ck_assert_int_eq(load_with(root, "mp", NULL, (const char *const[]){ "a/1", NULL }, true, &e, &d),
                         -EPERM);
        ck_assert_ptr_nonnull(strstr(d.message, "is writable by its group (mode 0664)"));
        ck_assert_ptr_nonnull(strstr(d.message, "--no-strict-modes"));
        ck_assert_int_eq(load_with(root, "mp", NULL, (const char *const[]){ "a/1", NULL }, false, &e, &d),
                         0);
        evaluation_release(&e);
        chmod(file, 0644);
        chmod(dir, 0757);
        ck_assert_int_eq(load_with(root, "mp", NULL, (const char *const[]){ "a/1", NULL }, true, &e, &d),
                         -EPERM);
        ck_assert_ptr_nonnull(strstr(d.message, "/mp/a' is writable by others (mode 0757)"));
        chmod(dir, 0755);
        chmod(mpdir, 0775);
        ck_assert_int_eq(load_with(root, "mp", NULL, (const char *const[]){ "a/1", NULL }, true, &e, &d),
                         -EPERM);
        chmod(mpdir, 0755);
        /* Tcl too, before tclsh sees it. */
        {
                _cleanup_free_ char *t = path_join(root, "mp/t/1");

                chmod(t, 0666);
                ck_assert_int_eq(load_with(root, "mp", NULL, (const char *const[]){ "t/1", NULL }, true,
                                           &e, &d),
                                 -EPERM);
        }
        if (geteuid() == 0) {
                ck_assert_int_eq(chown(file, 65534, 65534), 0);
                ck_assert_int_eq(load_with(root, "mp", NULL, (const char *const[]){ "a/1", NULL }, true,
                                           &e, &d),
                                 -EPERM);
                ck_assert_ptr_nonnull(strstr(d.message, "owned by uid 65534"));
        }
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("evaluate");
        TCase *tc = tcase_create("evaluate");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, versions_order_as_lmod);
        tcase_add_test(tc, find_follows_lmod_defaults);
        tcase_add_test(tc, find_skips_modules_a_modulerc_hides);
        tcase_add_test(tc, find_follows_the_modulerc_directives);
        tcase_add_test(tc, find_reports_what_is_missing);
        tcase_add_test(tc, list_gives_every_module_once);
        tcase_add_test(tc, load_applies_path_operations_as_lmod);
        tcase_add_test(tc, load_applies_pushenv_as_lmod);
        tcase_add_test(tc, load_resolves_dependencies_in_the_modulepath);
        tcase_add_test(tc, load_follows_the_hierarchy);
        tcase_add_test(tc, load_checks_prereq_conflict_cycles_and_errors);
        tcase_add_test(tc, env_index_agrees_with_a_list);
        tcase_add_test(tc, diff_classifies_changes);
        tcase_add_test(tc, show_prints_the_environment);
        tcase_add_test(tc, show_a_load_of_thousands_of_variables);
        tcase_add_loop_test(tc, show_refuses_hostile_modulefiles, 0, (int)ELEMENTSOF(hostile));
        tcase_add_test(tc, show_binary_chunk_is_refused);
        tcase_add_test(tc, show_refuses_modulefiles_over_1_mib);
        tcase_add_test(tc, load_bounds_are_shared_by_the_modules_of_a_load);
        tcase_add_test(tc, load_cpu_time_is_shared_by_the_modules_of_a_load);
        tcase_add_test(tc, load_caps_the_entries_a_load_adds_not_those_it_starts_with);
        tcase_add_test(tc, tcl_load_applies_path_operations_as_environment_modules);
        tcase_add_test(tc, tcl_values_come_back_exactly);
        tcase_add_test(tc, tcl_environment_is_not_on_a_command_line);
        tcase_add_test(tc, tcl_prereq_loads_the_default_in_range);
        tcase_add_loop_test(tc, tcl_modulefile_cannot_run_anything, 0, (int)ELEMENTSOF(tcl_refused) - 1);
        tcase_add_test(tc, tcl_variable_name_cannot_hold_equals);
        tcase_add_test(tc, tcl_endless_loop_ends);
        tcase_add_test(tc, tcl_without_tclsh_is_refused_naming_trust);
        tcase_add_test(tc, tcl_and_lua_do_not_mix);
        tcase_add_test(tc, strict_modes_refuse_what_others_can_change);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
