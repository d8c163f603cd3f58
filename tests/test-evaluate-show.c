/* test-evaluate-show.c: what Lmod's `module show` says a module's own
 * path calls name (evaluate-show.c), in every shape Lmod 8.0 .. 8.7
 * prints, from the recordings in tests/data/lmod-show/ (each says which
 * Lmod prints it and where that was learned); and the trusted Tcl path
 * (evaluate_load with trust_modulefiles, through a stand-in `lmod` that
 * prints a recording) that reads them. A line that is not understood
 * fails the evaluation, naming the line. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evaluate.h"
#include "evaluate-show.h"
#include "fixture.h"
#include "strbuf.h"
#include "testutil.h"

static char *recording_path(const char *name)
{
        const char *src = getenv("CUDAMOD_SOURCE_ROOT");

        ck_assert_msg(src, "CUDAMOD_SOURCE_ROOT is not set");
        return xasprintf("%s/tests/data/lmod-show/%s", src, name);
}

/* A recording without its leading '#' comment lines: what Lmod printed. */
static char *recording(const char *name)
{
        _cleanup_free_ char *path = recording_path(name);
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        const char *p;

        ck_assert_int_eq(strbuf_read_file(&sb, path, 1 << 20), 0);
        p = sb.buf;
        while (*p == '#') {
                const char *nl = strchr(p, '\n');

                p = nl ? nl + 1 : p + strlen(p);
        }
        return xstrdup(p);
}

struct show_case {
        const char *file;
        const char *entries; /* "NAME=entry" lines, in order */
};

static const struct show_case cases[] = {
        { "lmod-8.0-lua.txt",
          "LD_LIBRARY_PATH=/apps/cudnn/9.1.0-cuda12/lib\n"
          "LIBRARY_PATH=/apps/cudnn/9.1.0-cuda12/lib\n"
          "CPATH=/apps/cudnn/9.1.0-cuda12/include\n"
          "CMAKE_PREFIX_PATH=/apps/cudnn/9.1.0-cuda12\n"
          "CUDNN_FLAGS=-I/apps/cudnn/9.1.0-cuda12/include\n"
          "CUDNN_FLAGS=-L/apps/cudnn/9.1.0-cuda12/lib\n" },
        { "lmod-8.6-lua.txt",
          "PATH=/apps/cuda/12.4/bin\n"
          "LD_LIBRARY_PATH=/apps/cuda/12.4/lib64\n"
          "LIBRARY_PATH=/apps/cuda/12.4/lib64/stubs\n"
          "NVCC_PREPEND_FLAGS=-ccbin=/usr/bin/g++-12\n"
          "CPATH=/apps/cuda/12.4/include\n"
          "MANPATH=/apps/cuda/12.4/doc/man\n"
          "MANPATH=/apps/cuda/12.4/share/man\n" },
        { "lmod-8.6-raw.txt",
          "PATH=/apps/odd\"dir/bin\n"
          "LD_LIBRARY_PATH=/apps/a,b/lib\n"
          "CPATH=/apps/back\\slash/include\n" },
        { "lmod-8.6-tcl.txt",
          "PATH=/apps/cuda/12.4/bin\n"
          "LD_LIBRARY_PATH=/apps/cuda/12.4/lib64\n"
          "LIBRARY_PATH=/apps/cuda/12.4/lib64/stubs\n"
          "NVCC_PREPEND_FLAGS=-ccbin=/usr/bin/g++-12\n"
          "CPATH=/apps/cuda/12.4/include\n"
          "MODULEPATH=/apps/modulefiles/CUDA/12\n" },
        { "lmod-8.7-lua.txt",
          "PATH=/apps/cuda/12.4/bin\n"
          "LD_LIBRARY_PATH=/apps/cuda/12.4/lib64\n"
          "LD_LIBRARY_PATH=/apps/cuda/12.4/extras/CUPTI/lib64\n"
          "LD_LIBRARY_PATH=/apps/cuda/12.4/nvvm/lib64\n"
          "LIBRARY_PATH=/apps/cuda/12.4/lib64/stubs\n"
          "CPATH=/apps/cuda/12.4/include\n"
          "CMAKE_PREFIX_PATH=/apps/cuda/12.4\n"
          "CUDA_SITE_LIST=/apps/cuda/12.4/a:b\n"
          "CUDA_SITE_LIST=/apps/cuda/12.4/c\n"
          "MODULEPATH=/apps/modulefiles/CUDA/12\n" },
        { "lmod-8.7-tcl.txt",
          "PATH=/apps/cuda/12.4/bin\n"
          "LD_LIBRARY_PATH=/apps/cuda/12.4/lib64\n"
          "LIBRARY_PATH=/apps/cuda/12.4/lib64/stubs\n"
          "NVCC_PREPEND_FLAGS=-ccbin=/usr/bin/g++-12\n"
          "CPATH=/apps/cuda/12.4/include\n"
          "MODULEPATH=/apps/modulefiles/CUDA/12\n" },
        { NULL, NULL },
};

static char *joined(const struct strv *v)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        for (size_t i = 0; i < v->len; i++) {
                strbuf_addstr(&sb, v->items[i]);
                strbuf_addch(&sb, '\n');
        }
        return strbuf_detach(&sb);
}

/* A stand-in for Lmod's lmod, in root/bin (the only PATH directory, so
 * that no tclsh, and so no Environment Modules, is found): `sh load`
 * loads cuda/12.4 from root/mp (LD_LIBRARY_PATH set), `sh show` prints
 * the file show_file (without its '#' lines) on stderr. */
static void fake_lmod(const char *root, const char *show_file)
{
        _cleanup_free_ char *script = NULL, *bin = path_join(root, "bin"), *lmod = NULL;
        _cleanup_free_ char *env = NULL;

        script = xasprintf("#!/bin/sh\n"
                           "case \"$2\" in\n"
                           "load) echo \"LOADEDMODULES=cuda/12.4; export LOADEDMODULES; "
                           "_LMFILES_=%s/mp/cuda/12.4; export _LMFILES_; "
                           "LD_LIBRARY_PATH=/apps/cuda/12.4/lib64; export LD_LIBRARY_PATH;\" ;;\n"
                           "show) /bin/sed '/^#/d' '%s' >&2 ;;\n"
                           "*) exit 3 ;;\n"
                           "esac\n",
                           root, show_file);
        fx_write(root, "bin/lmod", script);
        lmod = path_join(bin, "lmod");
        ck_assert_int_eq(chmod(lmod, 0755), 0);
        env = path_join(bin, "env");
        ck_assert_int_eq(symlink("/usr/bin/env", env), 0);
        fx_write(root, "mp/cuda/12.4", "#%Module\nprepend-path LD_LIBRARY_PATH /apps/cuda/12.4/lib64\n");
}

/* Load cuda/12.4 (a Tcl modulefile) through the stand-in lmod that
 * prints show_file. */
static int trusted_load(const char *root, struct evaluation *e, struct diag *d)
{
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_free_ char *path = xasprintf("PATH=%s/bin", root);
        _cleanup_free_ char *lmod = xasprintf("LMOD_CMD=%s/bin/lmod", root);
        char spec[] = "cuda/12.4", *specs[] = { spec };
        char *env[] = { path, lmod, NULL };

        strv_push(&mp, path_join(root, "mp"));
        return evaluate_load(&(struct evaluate_options){ .environ = env, .modulepath = &mp,
                                                         .trust_modulefiles = true },
                             specs, 1, e, d);
}

START_TEST(lmod_show_every_format_names_the_path_entries)
{
        const struct show_case *c = &cases[_i];
        _cleanup_free_ char *text = recording(c->file), *got = NULL;
        _cleanup_(strv_release) struct strv entries = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        ck_assert_msg(show_output_entries(text, true, "lmod show cuda/12.4", &entries, &d) == 0,
                      "%s: %s", c->file, d.message);
        got = joined(&entries);
        ck_assert_msg(streq(got, c->entries), "%s: got\n%s\nwant\n%s", c->file, got, c->entries);
}
END_TEST

/* The trusted Tcl path (Lmod evaluates the modulefile) reads each
 * recording: on a Tcl tree validated through Lmod 8.7, the module's own
 * entries are the ones its show names, none missing. */
START_TEST(trusted_tcl_through_lmod_reads_every_format)
{
        const struct show_case *c = &cases[_i];
        char *root = fx_new();
        _cleanup_free_ char *file = recording_path(c->file), *got = NULL;
        _cleanup_(strv_release) struct strv own = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct evaluation e = { 0 };

        fake_lmod(root, file);
        ck_assert_msg(trusted_load(root, &e, &d) == 0, "%s: %s", c->file, d.message);
        ck_assert_uint_eq(e.n_modules, 1);
        got = joined(&e.modules[0].path_entries);
        ck_assert_msg(streq(got, c->entries), "%s: got\n%s\nwant\n%s", c->file, got, c->entries);
        evaluation_own_entries(&e, "LD_LIBRARY_PATH", &own);
        ck_assert_uint_ge(own.len, 1);
        evaluation_release(&e);
        fx_free(root);
}
END_TEST

/* A show line cudamod does not understand fails the load, naming it:
 * the module is never taken as one that names no path. */
START_TEST(trusted_tcl_unknown_show_line_fails_naming_it)
{
        char *root = fx_new();
        _cleanup_free_ char *text = recording("lmod-8.7-tcl.txt"), *bad = NULL, *file = NULL;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct evaluation e = { 0 };

        bad = xasprintf("%sprepend_path[[\"PATH\",\"/apps/x/bin\"]]\n", text);
        fx_write(root, "show.txt", bad);
        file = path_join(root, "show.txt");
        fake_lmod(root, file);
        ck_assert_int_eq(trusted_load(root, &e, &d), -EINVAL);
        ck_assert_msg(strstr(d.message, "lmod show cuda/12.4, line 17") &&
                      strstr(d.message, "'prepend_path[[\"PATH\",\"/apps/x/bin\"]]'"),
                      "%s", d.message);
        ck_assert_uint_eq(e.n_modules, 0);
        fx_free(root);
}
END_TEST

/* A show that fails is an error too, with what the tool said. */
START_TEST(trusted_tcl_failed_show_is_an_error)
{
        char *root = fx_new();
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct evaluation e = { 0 };

        fake_lmod(root, "/nonexistent/show.txt");
        ck_assert_int_eq(trusted_load(root, &e, &d), -EINVAL);
        ck_assert_msg(strstr(d.message, "lmod show cuda/12.4 failed") &&
                      strstr(d.message, "/nonexistent/show.txt"), "%s", d.message);
        fx_free(root);
}
END_TEST

struct bad_case {
        const char *text;
        const char *message; /* what the error says, after "lmod show m, " */
};

static const struct bad_case bad_cases[] = {
        { "Lmod Warning: something new\n", "line 1: not a call: 'Lmod Warning: something new'" },
        { "whatis(\"x\")\nprepend_pathx(\"PATH\",\"/a\")\n",
          "line 2: a command cudamod does not know: 'prepend_pathx(\"PATH\",\"/a\")'" },
        { "prepend_path(\"PATH\",\"/a\"\n", "line 1: a string is not closed" },
        { "prepend_path(\"PATH\",\"/a\") trailing\n", "line 1: text after the call" },
        { "prepend_path(\"PATH\")\n", "line 1: a path call without a variable name and a value" },
        { "prepend_path{\"PATH\",\"/a\",delim=\"\"}\n", "line 1: an empty delim" },
        { "append_path(\"PATH\",\"/a\",\":\",\"x\")\n",
          "line 1: a path call's arguments are not a name, a value and a delimiter" },
        { "help([[never closed\n", "line 1: a long string is not closed" },
        { "setenv(\"A\",os.getenv)\n", "line 1: a bare word that is no value" },
        { "setenv(A=)\n", "line 1: an argument that is no Lua value" },
        { "load(between(between(between(between(between(between(between(between(between(\"x\")))))))))\n",
          "line 1: calls nested too deep" },
        { "help([[a\nb]])\nwhatis(\"a\\300\")\n", "line 3: a decimal escape is above 255" },
        { NULL, NULL },
};

START_TEST(lmod_show_line_not_understood_is_an_error)
{
        const struct bad_case *c = &bad_cases[_i];
        _cleanup_(strv_release) struct strv entries = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        ck_assert_int_eq(show_output_entries(c->text, true, "lmod show m", &entries, &d), -EINVAL);
        ck_assert_msg(startswith(d.message, "lmod show m, ") && strstr(d.message, c->message),
                      "%s: %s", c->text, d.message);
        ck_assert_uint_eq(entries.len, 0);
}
END_TEST

/* Values the way Lua writes them: escapes decoded (tcl2lua, %q), a quote
 * that ends no string kept (8.6 prints values unescaped), long strings
 * of any level, nested calls and tables, keys in any order. */
START_TEST(lmod_show_reads_lua_values)
{
        static const char text[] =
                "whatis([==[a ]] b]==])\n"
                "help([[a ]] in help, as 8.6 prints it\n]])\n"
                "setenv(\"A\",\"x\\\"y\\\\z\\65\\x41\\tq\")\n"
                "setenv(\"B\",\"say \"hi\" now\")\n"
                "execute{cmd=\"true\", modeA={\"load\",\"unload\"}}\n"
                "load(atleast(\"gcc\",\"12\"))\n"
                "set_shell_function(\"f\",\"echo \\\"$1\\\"\",\"\")\n"
                "--source_sh(\"bash\",\"/apps/env.sh\")\n"
                "prepend_path{priority=\"10\",\"P\",\"/a b:/c\\\"d\",delim=\":\"}\n"
                "append_path{\"Q\",\"::/e::/f:\"}\n"
                "prepend_path(\"R\",\"/g;/h\",\";\")\n"
                "prepend_path{\"S\",\"/i/x//j\",delim=\"/x/\"}\n";
        _cleanup_(strv_release) struct strv entries = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *got = NULL;

        ck_assert_msg(show_output_entries(text, true, "lmod show m", &entries, &d) == 0, "%s",
                      d.message);
        got = joined(&entries);
        ck_assert_str_eq(got, "P=/a b\nP=/c\"d\nQ=/e\nQ=/f\nR=/g\nR=/h\nS=/i\nS=/j\n");
}
END_TEST

/* Environment Modules' show keeps its reading: prepend-path and
 * append-path lines, --delim skipped; other lines say nothing. */
START_TEST(em_show_reads_path_lines)
{
        static const char text[] =
                "-------------------------------------------------------------------\n"
                "/apps/modulefiles/cuda/12.4:\n\n"
                "module-whatis\t{CUDA Toolkit 12.4}\n"
                "setenv\t\tCUDA_HOME /apps/cuda/12.4\n"
                "prepend-path\tPATH /apps/cuda/12.4/bin\n"
                "prepend-path\t--delim { } NVCC_PREPEND_FLAGS -ccbin=/usr/bin/g++-12\n"
                "append-path\tLIBRARY_PATH /apps/cuda/12.4/lib64/stubs\n"
                "-------------------------------------------------------------------\n";
        _cleanup_(strv_release) struct strv entries = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *got = NULL;

        ck_assert_int_eq(show_output_entries(text, false, "modulecmd.tcl show m", &entries, &d), 0);
        got = joined(&entries);
        ck_assert_str_eq(got, "PATH=/apps/cuda/12.4/bin\n"
                              "NVCC_PREPEND_FLAGS=-ccbin=/usr/bin/g++-12\n"
                              "LIBRARY_PATH=/apps/cuda/12.4/lib64/stubs\n");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("evaluate-show");
        TCase *tc = tcase_create("evaluate-show");
        int n_cases = 0, n_bad = 0;

        while (cases[n_cases].file)
                n_cases++;
        while (bad_cases[n_bad].text)
                n_bad++;
        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, lmod_show_every_format_names_the_path_entries, 0, n_cases);
        tcase_add_loop_test(tc, trusted_tcl_through_lmod_reads_every_format, 0, n_cases);
        tcase_add_test(tc, trusted_tcl_unknown_show_line_fails_naming_it);
        tcase_add_test(tc, trusted_tcl_failed_show_is_an_error);
        tcase_add_loop_test(tc, lmod_show_line_not_understood_is_an_error, 0, n_bad);
        tcase_add_test(tc, lmod_show_reads_lua_values);
        tcase_add_test(tc, em_show_reads_path_lines);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
