/* test-lmod-sandbox.c: evaluating Lmod modulefiles in the sandbox: the
 * reference modulefiles, the Lmod API, and hostile files. */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>

#include "fixture.h"
#include "lmod-sandbox.h"
#include "strbuf.h"
#include "testutil.h"
#include "util-path.h"

static int eval_opts(const char *text, size_t len, const struct sandbox_options *o,
                     struct sandbox_result *r, struct diag *d)
{
        return sandbox_eval(text, len, "test.lua", o, r, d);
}

/* Evaluate text that must succeed. */
static void eval_ok(const char *text, const struct sandbox_options *o, struct sandbox_result *r)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        int k = eval_opts(text, strlen(text), o, r, &d);

        ck_assert_msg(k == 0, "eval failed: %s (line %u)", d.message ? d.message : "?", d.line);
}

/* Evaluate text that must fail; ret must stay untouched. */
static void eval_fail(const char *text, size_t len, const struct sandbox_options *o, struct diag *d)
{
        struct sandbox_result r = { .ops = NULL, .n_ops = 4242 };
        int k = eval_opts(text, len, o, &r, d);

        ck_assert_int_eq(k, -EINVAL);
        ck_assert_ptr_nonnull(d->message);
        ck_assert_uint_eq(r.n_ops, 4242);
        ck_assert_ptr_null(r.ops);
}

static char *source_path(const char *rel)
{
        const char *src = getenv("CUDAMOD_SOURCE_ROOT");

        ck_assert_msg(src != NULL, "CUDAMOD_SOURCE_ROOT is not set");
        return path_join(src, rel);
}

static void eval_file(const char *rel, const struct sandbox_options *o, struct sandbox_result *r)
{
        _cleanup_free_ char *p = source_path(rel);
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        int k;

        ck_assert_int_eq(strbuf_read_file(&sb, p, 1 << 20), 0);
        k = sandbox_eval(sb.buf, sb.len, p, o, r, &d);
        ck_assert_msg(k == 0, "%s: %s (line %u)", rel, d.message ? d.message : "?", d.line);
}

static struct strv walked;

static int collect_lua(const char *p, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if (type == FTW_F && endswith(p, ".lua"))
                strv_add(&walked, p);
        return 0;
}

START_TEST(sandbox_evaluates_every_reference_lua_modulefile)
{
        static const char *const trees[] = { "modulefiles/lua-hierarchical", "modulefiles/lua-flat" };
        size_t modulercs = 0;

        for (size_t t = 0; t < ELEMENTSOF(trees); t++) {
                _cleanup_free_ char *root = source_path(trees[t]);

                ck_assert_int_eq(nftw(root, collect_lua, 16, FTW_PHYS), 0);
        }
        ck_assert_uint_ge(walked.len, 10);
        for (size_t i = 0; i < walked.len; i++) {
                _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct sandbox_result r = { 0 };
                int k;

                ck_assert_int_eq(strbuf_read_file(&sb, walked.items[i], 1 << 20), 0);
                k = sandbox_eval(sb.buf, sb.len, walked.items[i], NULL, &r, &d);
                ck_assert_msg(k == 0, "%s: %s", walked.items[i], d.message ? d.message : "?");
                ck_assert_uint_gt(r.n_ops, 0);
                if (endswith(walked.items[i], "/.modulerc.lua"))
                        modulercs++;
                sandbox_result_release(&r);
        }
        ck_assert_uint_ge(modulercs, 4);
        strv_release(&walked);
}
END_TEST

struct expected_op {
        enum sandbox_op_kind kind;
        const char *name;
        const char *value;
        unsigned line;
};

#define CUDA "/opt/cudamod-demo/sw/cuda-12.9"

START_TEST(sandbox_records_the_cuda_12_9_operations_in_order)
{
        static const struct expected_op want[] = {
                { SANDBOX_WHATIS, NULL, "Name: cuda", 4 },
                { SANDBOX_WHATIS, NULL, "Version: 12.9.1", 5 },
                { SANDBOX_WHATIS, NULL, "Description: NVIDIA CUDA Toolkit 12.9.1 (x86_64)", 6 },
                { SANDBOX_WHATIS, NULL, "Category: library, GPU", 7 },
                { SANDBOX_WHATIS, NULL, "Keywords: cuda, CUDA, GPU, PyTorch", 8 },
                { SANDBOX_WHATIS, NULL, "Extensions: cudart/12.9.79, nvcc/12.9.86", 9 },
                { SANDBOX_HELP, NULL, NULL, 10 },
                { SANDBOX_FAMILY, NULL, "cuda", 34 },
                { SANDBOX_PROPERTY, "arch", "gpu", 35 },
                { SANDBOX_PUSHENV, "CUDA_HOME", CUDA, 36 },
                { SANDBOX_PUSHENV, "CUDA_PATH", CUDA, 37 },
                { SANDBOX_PUSHENV, "CUDA_ROOT", CUDA, 38 },
                { SANDBOX_PUSHENV, "CUDAToolkit_ROOT", CUDA, 39 },
                { SANDBOX_SETENV, "CUDACXX", CUDA "/bin/nvcc", 40 },
                { SANDBOX_PREPEND_PATH, "PATH", CUDA "/bin", 41 },
                { SANDBOX_PREPEND_PATH, "LD_LIBRARY_PATH", CUDA "/nvvm/lib64", 42 },
                { SANDBOX_PREPEND_PATH, "LD_LIBRARY_PATH", CUDA "/extras/CUPTI/lib64", 43 },
                { SANDBOX_PREPEND_PATH, "LD_LIBRARY_PATH", CUDA "/targets/x86_64-linux/lib", 44 },
                { SANDBOX_PREPEND_PATH, "LIBRARY_PATH", CUDA "/nvvm/lib64", 45 },
                { SANDBOX_PREPEND_PATH, "LIBRARY_PATH", CUDA "/extras/CUPTI/lib64", 46 },
                { SANDBOX_PREPEND_PATH, "LIBRARY_PATH", CUDA "/targets/x86_64-linux/lib", 47 },
                { SANDBOX_PREPEND_PATH, "CPATH", CUDA "/extras/CUPTI/include", 48 },
                { SANDBOX_PREPEND_PATH, "CPATH", CUDA "/targets/x86_64-linux/include", 49 },
                { SANDBOX_PREPEND_PATH, "CMAKE_PREFIX_PATH", CUDA, 50 },
                { SANDBOX_APPEND_PATH, "LIBRARY_PATH", CUDA "/targets/x86_64-linux/lib/stubs", 51 },
                { SANDBOX_PREPEND_PATH, "MODULEPATH", "/opt/cudamod-demo/modulefiles/lua-hierarchical/CUDA/12", 52 },
        };
        struct sandbox_result r = { 0 };

        eval_file("modulefiles/lua-hierarchical/Core/cuda/12.9.lua", NULL, &r);
        ck_assert_uint_eq(r.n_ops, ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                const struct sandbox_op *op = &r.ops[i];

                ck_assert_msg(op->kind == want[i].kind, "op %zu: %s, want %s", i,
                              sandbox_op_kind_to_string(op->kind), sandbox_op_kind_to_string(want[i].kind));
                if (want[i].name)
                        ck_assert_str_eq(op->name, want[i].name);
                else
                        ck_assert_ptr_null(op->name);
                if (want[i].value)
                        ck_assert_str_eq(op->value, want[i].value);
                ck_assert_uint_eq(op->line, want[i].line);
                ck_assert_uint_eq(op->args.len, 0);
                if (op->kind >= SANDBOX_PREPEND_PATH && op->kind <= SANDBOX_REMOVE_PATH)
                        ck_assert_int_eq(op->delim, ':');
        }
        ck_assert(startswith(r.ops[6].value, "NVIDIA CUDA Toolkit 12.9.1 (x86_64) in " CUDA ".\n\nFor building"));
        ck_assert_ptr_nonnull(strstr(r.ops[6].value, "\n  CUDA_HOME          = " CUDA "\n"));
        ck_assert(endswith(r.ops[6].value, "lua-hierarchical/CUDA/12\n"));
        sandbox_result_release(&r);
}
END_TEST

START_TEST(sandbox_records_the_flat_cudnn_dependency_on_a_cuda_major)
{
        struct sandbox_result r = { 0 };
        const struct sandbox_op *dep = NULL;

        eval_file("modulefiles/lua-flat/cudnn/9.7.1.lua", NULL, &r);
        for (size_t i = 0; i < r.n_ops; i++)
                if (r.ops[i].kind == SANDBOX_DEPENDS_ON) {
                        ck_assert_ptr_null(dep);
                        dep = &r.ops[i];
                }
        ck_assert_ptr_nonnull(dep);
        ck_assert_uint_eq(dep->args.len, 1);
        ck_assert_str_eq(dep->args.items[0], "between(cuda,12,12.999999)");
        ck_assert_uint_eq(dep->line, 29);
        sandbox_result_release(&r);
}
END_TEST

START_TEST(sandbox_records_module_version_of_a_modulerc)
{
        struct sandbox_result r = { 0 };

        eval_file("modulefiles/lua-hierarchical/Core/cuda/.modulerc.lua", NULL, &r);
        ck_assert_uint_eq(r.n_ops, 1);
        ck_assert_int_eq(r.ops[0].kind, SANDBOX_MODULE_VERSION);
        ck_assert_uint_eq(r.ops[0].args.len, 2);
        ck_assert_str_eq(r.ops[0].args.items[0], "cuda/12.9");
        ck_assert_str_eq(r.ops[0].args.items[1], "default");
        ck_assert_uint_eq(r.ops[0].line, 4);
        sandbox_result_release(&r);
}
END_TEST

START_TEST(sandbox_path_ops_take_the_table_form_with_delim_and_priority)
{
        struct sandbox_result r = { 0 };

        eval_ok("prepend_path{\"PATH\", \"/opt/prio\", delim = \";\", priority = 100}\n"
                "append_path(\"X\", \"/a\", \"|\")\n"
                "remove_path{\"Y\", \"/b\"}\n"
                "prepend_path(\"Z\", 12)\n",
                NULL, &r);
        ck_assert_uint_eq(r.n_ops, 4);
        ck_assert_int_eq(r.ops[0].kind, SANDBOX_PREPEND_PATH);
        ck_assert_str_eq(r.ops[0].name, "PATH");
        ck_assert_str_eq(r.ops[0].value, "/opt/prio");
        ck_assert_int_eq(r.ops[0].delim, ';');
        ck_assert_uint_eq(r.ops[0].line, 1);
        ck_assert_int_eq(r.ops[1].kind, SANDBOX_APPEND_PATH);
        ck_assert_int_eq(r.ops[1].delim, '|');
        ck_assert_int_eq(r.ops[2].kind, SANDBOX_REMOVE_PATH);
        ck_assert_str_eq(r.ops[2].name, "Y");
        ck_assert_str_eq(r.ops[2].value, "/b");
        ck_assert_int_eq(r.ops[2].delim, ':');
        ck_assert_str_eq(r.ops[3].value, "12");
        ck_assert_uint_eq(r.ops[3].line, 4);
        sandbox_result_release(&r);
}
END_TEST

START_TEST(sandbox_path_join_follows_lmod)
{
        static const struct {
                const char *call, *want;
        } cases[] = {
                { "pathJoin(\"/a\", \"b/c/\", \"d/\")", "/a/b/c/d" },
                { "pathJoin(\"/opt/\", \"/x/\")", "/opt/x" },
                { "pathJoin(\"a//b/\", \"\", \"c\")", "a/b/c" },
                { "pathJoin(\"/\")", "/" },
                { "pathJoin(\"/root\", \"CUDA\", 12)", "/root/CUDA/12" },
                { "pathJoin()", "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *text = xasprintf("setenv(\"A\", %s)", cases[i].call);
                struct sandbox_result r = { 0 };

                eval_ok(text, NULL, &r);
                ck_assert_uint_eq(r.n_ops, 1);
                ck_assert_msg(streq(r.ops[0].value, cases[i].want), "%s: \"%s\", want \"%s\"", cases[i].call,
                              r.ops[0].value, cases[i].want);
                sandbox_result_release(&r);
        }
}
END_TEST

START_TEST(sandbox_module_names_and_mode_come_from_the_options)
{
        static const struct {
                struct sandbox_options o;
                const char *name, *version, *full, *mode;
        } cases[] = {
                { { .module_name = "cuda", .module_version = "12.9" }, "cuda", "12.9", "cuda/12.9", "load" },
                { { .module_name = "cudnn", .module_version = "9.7.1", .mode = "unload" }, "cudnn", "9.7.1",
                  "cudnn/9.7.1", "unload" },
                { { .module_name = "nccl", .mode = "show" }, "nccl", "", "nccl", "show" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct sandbox_result r = { 0 };

                eval_ok("setenv(\"N\", myModuleName())\n"
                        "setenv(\"V\", myModuleVersion())\n"
                        "setenv(\"F\", myModuleFullName())\n"
                        "setenv(\"M\", mode())\n"
                        "setenv(\"L\", tostring(isloaded(\"cuda\")))\n",
                        &cases[i].o, &r);
                ck_assert_uint_eq(r.n_ops, 5);
                ck_assert_str_eq(r.ops[0].value, cases[i].name);
                ck_assert_str_eq(r.ops[1].value, cases[i].version);
                ck_assert_str_eq(r.ops[2].value, cases[i].full);
                ck_assert_str_eq(r.ops[3].value, cases[i].mode);
                ck_assert_str_eq(r.ops[4].value, "false");
                sandbox_result_release(&r);
        }
}
END_TEST

START_TEST(sandbox_getenv_reads_the_given_environment)
{
        static const char *const env[] = { "FOOBAR=long", "FOO=bar", "EMPTY=", NULL };
        struct sandbox_options o = { .environ = env };
        struct sandbox_result r = { 0 };

        eval_ok("setenv(\"A\", os.getenv(\"FOO\"))\n"
                "setenv(\"B\", tostring(os.getenv(\"FO\")))\n"
                "setenv(\"C\", os.getenv(\"NOPE\") or \"unset\")\n"
                "setenv(\"D\", os.getenv(\"EMPTY\"))\n"
                "setenv(\"E\", os.getenv(\"FOOBAR\"))\n",
                &o, &r);
        ck_assert_uint_eq(r.n_ops, 5);
        ck_assert_str_eq(r.ops[0].value, "bar");
        ck_assert_str_eq(r.ops[1].value, "nil");
        ck_assert_str_eq(r.ops[2].value, "unset");
        ck_assert_str_eq(r.ops[3].value, "");
        ck_assert_str_eq(r.ops[4].value, "long");
        sandbox_result_release(&r);
}
END_TEST

START_TEST(sandbox_lmod_error_fails_with_its_message_and_line)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        const char *text = "setenv(\"A\", \"b\")\nLmodError(\"no GPU \", \"here\")\n";

        eval_fail(text, strlen(text), NULL, &d);
        ck_assert_str_eq(d.message, "LmodError: no GPU here");
        ck_assert_str_eq(d.file, "test.lua");
        ck_assert_uint_eq(d.line, 2);
}
END_TEST

START_TEST(sandbox_records_help_messages_and_module_lists)
{
        struct sandbox_result r = { 0 };

        eval_ok("help(\"a\", \"b\\n\", \"c\")\n"
                "LmodMessage(\"hello \", \"world\")\n"
                "load(\"a\", \"b\")\n"
                "always_load(\"c\")\n"
                "try_load(\"d\")\n"
                "prereq(\"e\")\n"
                "prereq_any(\"f\", \"g\")\n"
                "conflict(\"h\")\n"
                "depends_on(atleast(\"cuda\", \"12\"), latest(\"nccl\"))\n"
                "unsetenv(\"U\")\n"
                "pushenv(\"CC\", \"nvc\")\n"
                "pushenv(\"CC\", false)\n"
                "print(\"ignored\")\n",
                NULL, &r);
        ck_assert_uint_eq(r.n_ops, 12);
        ck_assert_int_eq(r.ops[0].kind, SANDBOX_HELP);
        ck_assert_str_eq(r.ops[0].value, "ab\nc");
        ck_assert_int_eq(r.ops[1].kind, SANDBOX_MESSAGE);
        ck_assert_str_eq(r.ops[1].value, "hello world");
        ck_assert_int_eq(r.ops[2].kind, SANDBOX_LOAD);
        ck_assert_str_eq(r.ops[2].name, "load");
        ck_assert_uint_eq(r.ops[2].args.len, 2);
        ck_assert_str_eq(r.ops[2].args.items[1], "b");
        ck_assert_str_eq(r.ops[3].name, "always_load");
        ck_assert_str_eq(r.ops[4].name, "try_load");
        ck_assert_int_eq(r.ops[5].kind, SANDBOX_PREREQ);
        ck_assert_str_eq(r.ops[5].name, "prereq");
        ck_assert_str_eq(r.ops[6].name, "prereq_any");
        ck_assert_uint_eq(r.ops[6].args.len, 2);
        ck_assert_int_eq(r.ops[7].kind, SANDBOX_CONFLICT);
        ck_assert_str_eq(r.ops[7].args.items[0], "h");
        ck_assert_int_eq(r.ops[8].kind, SANDBOX_DEPENDS_ON);
        ck_assert_str_eq(r.ops[8].args.items[0], "atleast(cuda,12)");
        ck_assert_str_eq(r.ops[8].args.items[1], "latest(nccl)");
        ck_assert_int_eq(r.ops[9].kind, SANDBOX_UNSETENV);
        ck_assert_str_eq(r.ops[9].name, "U");
        ck_assert_ptr_null(r.ops[9].value);
        ck_assert_int_eq(r.ops[10].kind, SANDBOX_PUSHENV);
        ck_assert_str_eq(r.ops[10].value, "nvc");
        ck_assert_ptr_null(r.ops[11].value);
        ck_assert_uint_eq(r.ops[11].line, 12);
        for (size_t i = 0; i < r.n_ops; i++) {
                static const char *const kinds[] = { "help", "LmodMessage", "load", "load", "load", "prereq",
                                                     "prereq", "conflict", "depends_on", "unsetenv", "pushenv",
                                                     "pushenv" };

                ck_assert_str_eq(sandbox_op_kind_to_string(r.ops[i].kind), kinds[i]);
        }
        sandbox_result_release(&r);
}
END_TEST

static const char dumped_then_loaded[] = "local d = (\"x\").dump(function() return 1 end)\nload(d)()\n";

/* Hostile or broken files: each fails with a message naming what is
 * missing or wrong, and leaves no file X in the working directory. */
static const struct {
        const char *what;
        const char *text;
        size_t len; /* 0: strlen */
        const char *message; /* substring */
        bool exact;
} hostile[] = {
        { "os.execute", "os.execute(\"touch X\")", 0, "os.execute is not available in a modulefile", false },
        { "os.remove", "os.remove(\"X\")", 0, "os.remove is not available in a modulefile", false },
        { "os.exit", "os.exit(1)", 0, "os.exit is not available in a modulefile", false },
        { "os.rename", "os.rename(\"X\", \"Y\")", 0, "os.rename is not available in a modulefile", false },
        { "os.tmpname", "os.tmpname()", 0, "os.tmpname is not available in a modulefile", false },
        { "io.open", "io.open(\"X\", \"w\")", 0, "io.open(\"X\", \"w\") is not available in a modulefile", false },
        { "io.open of the driver's file to write", "io.open(\"/proc/driver/nvidia/version\", \"w\")", 0,
          "is not available in a modulefile", false },
        { "io.open of a path", "io.open(\"/proc/driver/nvidia/../../../etc/passwd\")", 0,
          "is not available in a modulefile", false },
        { "io.lines", "io.lines(\"X\")", 0, "io.lines is not available in a modulefile", false },
        { "require", "require(\"os\")", 0, "require is not available in a modulefile", false },
        /* load is Lmod's module load here: it compiles nothing */
        { "load", "local f = load(\"return 1\")\nf()", 0, "attempt to call a nil value (local 'f')", false },
        { "loadstring", "loadstring(\"return 1\")", 0, "loadstring is not available in a modulefile", false },
        { "dofile", "dofile(\"/etc/passwd\")", 0, "dofile is not available in a modulefile", false },
        { "loadfile", "loadfile(\"/etc/passwd\")", 0, "loadfile is not available in a modulefile", false },
        { "collectgarbage", "collectgarbage()", 0, "collectgarbage is not available in a modulefile", false },
        { "debug", "debug.getregistry()", 0, "debug is not available in a modulefile", false },
        { "string.dump", "load(string.dump(function() end))()", 0, "field 'dump'", false },
        { "a dump through the string metatable", dumped_then_loaded, 0, "field 'dump'", false },
        { "a binary chunk", "\x1bLua\x54\x00\x19\x93\r\n\x1a\n", 12, "binary chunks are not accepted", true },
        { "a text with the escape byte", "\x1b not Lua", 0, "binary chunks are not accepted", true },
        { "a table argument", "setenv(\"A\", {})", 0, "bad argument #2 to 'setenv'", false },
        { "a missing argument", "prepend_path(\"A\")", 0, "bad argument #2 to 'prepend_path'", false },
        { "a NUL byte in a value", "setenv(\"A\", \"a\\0b\")", 0, "NUL", false },
        { "a NUL byte in a name", "prepend_path{\"A\\0\", \"b\"}", 0, "NUL", false },
        { "a long delimiter", "append_path(\"A\", \"b\", \"::\")", 0, "delimiter", false },
        { "an error object", "error({})", 0, "(error object is a table value)", true },
        { "deep recursion", "local function f() return f() + 1 end f()", 0, "stack overflow", false },
        { "deep recursion through pcall", "local function f() local ok, e = pcall(f) if not ok then error(e, 0) end end f()", 0, "stack overflow", false },
        { "deep recursion in a metamethod",
          "local t = setmetatable({}, {__index = function(t, k) return t[k] end})\nlocal x = t.a", 0,
          "stack overflow", false },
};

/* io.open reads the NVIDIA driver's version files (below the sysroot, as
 * the cuda module's driver check does on a node: the first file there,
 * its first line); a file that is not there is nil and a message. */
START_TEST(sandbox_io_open_reads_the_driver_version)
{
        static const char text[] =
                "local f, e = io.open(\"/proc/driver/nvidia/version\", \"r\")\n"
                "setenv(\"PROC\", f and f:read(\"*l\") or \"nil: \" .. tostring(e))\n"
                "if f then f:close() end\n"
                "local g = io.open(\"/sys/module/nvidia/version\")\n"
                "setenv(\"SYS\", g and g:read(\"*a\") or \"nil\")\n";
        char *dir = fx_new();
        struct sandbox_options o = { .sysroot = dir };
        struct sandbox_result r = { 0 };

        fx_write(dir, "proc/driver/nvidia/version",
                 "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
                 "GCC version:  gcc version 12.2.0\n");
        eval_ok(text, &o, &r);
        ck_assert_uint_eq(r.n_ops, 2);
        ck_assert_str_eq(r.ops[0].value, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023");
        ck_assert_str_eq(r.ops[1].value, "nil");
        sandbox_result_release(&r);

        fx_write(dir, "sys/module/nvidia/version", "570.86.15\n");
        fx_mkdir(dir, "gone");
        o.sysroot = path_join(dir, "gone");
        eval_ok(text, &o, &r);
        ck_assert_msg(startswith(r.ops[0].value, "nil: /proc/driver/nvidia/version: "), "%s", r.ops[0].value);
        sandbox_result_release(&r);
        free((char *)o.sysroot);
        o.sysroot = dir;
        eval_ok(text, &o, &r);
        ck_assert_str_eq(r.ops[1].value, "570.86.15\n");
        sandbox_result_release(&r);
        fx_free(dir);
}
END_TEST

START_TEST(sandbox_refuses_what_is_not_in_the_sandbox)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        char *dir = fx_new();
        char old[4096];
        struct stat st;
        size_t len;

        ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
        ck_assert_int_eq(chdir(dir), 0);
        len = hostile[_i].len ? hostile[_i].len : strlen(hostile[_i].text);
        eval_fail(hostile[_i].text, len, NULL, &d);
        ck_assert_int_eq(lstat("X", &st), -1);
        ck_assert_int_eq(chdir(old), 0);
        fx_free(dir);
        if (hostile[_i].exact)
                ck_assert_msg(streq(d.message, hostile[_i].message), "%s: \"%s\"", hostile[_i].what, d.message);
        else
                ck_assert_msg(strstr(d.message, hostile[_i].message), "%s: \"%s\"", hostile[_i].what, d.message);
        ck_assert_str_eq(d.file, "test.lua");
}
END_TEST

/* A variable name no environment entry can carry: empty, or holding '='
 * ("A=B" set to "x" would be the entry "A=B=x", variable A), refused by
 * every function that names a variable, at the file and line of the call. */
START_TEST(sandbox_refuses_variable_names_no_environment_can_carry)
{
        static const struct {
                const char *call, *message;
        } cases[] = {
                { "setenv(\"\", \"x\")", "bad argument #1 to 'setenv' (the variable name is empty)" },
                { "setenv(\"A=B\", \"x\")", "bad argument #1 to 'setenv' (a variable name cannot hold '=')" },
                { "pushenv(\"=\", \"x\")", "bad argument #1 to 'pushenv' (a variable name cannot hold '=')" },
                { "pushenv(\"\", false)", "bad argument #1 to 'pushenv' (the variable name is empty)" },
                { "unsetenv(\"\")", "bad argument #1 to 'unsetenv' (the variable name is empty)" },
                { "unsetenv(\"PATH=\")", "bad argument #1 to 'unsetenv' (a variable name cannot hold '=')" },
                { "prepend_path(\"\", \"/x\")", "bad argument #1 to 'prepend_path' (the variable name is empty)" },
                { "prepend_path{\"A=B\", \"/x\"}", "bad argument #1 to 'prepend_path' (a variable name cannot hold '=')" },
                { "append_path(\"A=B\", \"/x\")", "bad argument #1 to 'append_path' (a variable name cannot hold '=')" },
                { "remove_path(\"\", \"/x\")", "bad argument #1 to 'remove_path' (the variable name is empty)" },
                { "setenv(\"A\\0B\", \"x\")", "bad argument #1 to 'setenv' (string contains a NUL byte)" },
                { NULL },
        };

        for (size_t i = 0; cases[i].call; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_free_ char *text = xasprintf("setenv(\"OK\", \"1\")\n%s\n", cases[i].call);

                eval_fail(text, strlen(text), NULL, &d);
                ck_assert_msg(streq(d.message, cases[i].message), "%s: \"%s\"", cases[i].call, d.message);
                ck_assert_str_eq(d.file, "test.lua");
                ck_assert_msg(d.line == 2, "%s: line %u", cases[i].call, d.line);
        }
        /* What may be a name still is: a property's, and odd but
         * well-formed variable names. */
        {
                static const char ok[] = "setenv(\"a.b-c\", \"x=y\")\nadd_property(\"=\", \"gpu\")\n";
                struct sandbox_result r = { 0 };
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_int_eq(eval_opts(ok, strlen(ok), NULL, &r, &d), 0);
                ck_assert_uint_eq(r.n_ops, 2);
                sandbox_result_release(&r);
        }
}
END_TEST

START_TEST(sandbox_endless_loop_exhausts_the_instruction_budget)
{
        static const char *const texts[] = {
                "while true do end",
                "while true do pcall(function() while true do end end) end",
                "local function f() while true do end end\nwhile true do xpcall(f, function() return 1 end) end",
        };
        struct sandbox_options o = { .max_instructions = 100000 };

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                eval_fail(texts[i], strlen(texts[i]), &o, &d);
                ck_assert_str_eq(d.message, "instruction budget exhausted");
        }
}
END_TEST

/* Work the count hook cannot see: library functions that loop in C, and
 * finalizers, which Lua runs with hooks off. Each of these ran for hours
 * (or for ever) before it was priced; fuzz-sandbox found the first. */
START_TEST(sandbox_library_work_counts_against_the_budget)
{
        static const struct {
                const char *text, *message;
        } cases[] = {
                /* Allocation churn: a 6 KB string.rep per iteration. */
                { "for i = 1, 1e9 do string.rep(\"x\", 6380) end", "instruction budget exhausted" },
                { "local s = (\"x\"):rep(4096) for i = 1, 1e9 do local t = s .. i end",
                  "instruction budget exhausted" },
                /* string.rep building "" loops count times in C. */
                { "string.rep(\"\", 1e15)", NULL },
                { "string.rep(\"\", 1e15, \"\")", NULL },
                /* Backtracking patterns: n^5 steps without a hook. */
                { "local s = string.rep(\"a\", 3000) s:find(\".-.-.-.-b\")", "instruction budget exhausted" },
                { "local s = string.rep(\"a\", 3000) s:match(\"(.-)(.-)(.-)(.-)b\")",
                  "instruction budget exhausted" },
                { "local s = string.rep(\"a\", 3000) for w in s:gmatch(\"a*a*a*a*b\") do end",
                  "instruction budget exhausted" },
                { "local s = string.rep(\"a\", 3000) s:gsub(\"%b()a-a-a-b\", \"\")",
                  "instruction budget exhausted" },
                { "local s = string.rep(\"a\", 3000) s:find(\"[%a]-[^b]-.-.-b\", 1)",
                  "instruction budget exhausted" },
                /* table.move over an empty table loops e - f + 1 times in C. */
                { "table.move({}, 1, 1e12, 2)", "instruction budget exhausted" },
                { "local t = setmetatable({}, {__len = function() return 1e12 end}) table.insert(t, 1, 1)",
                  "instruction budget exhausted" },
                { "table.concat({}, \"\", 1, 1e12)", "instruction budget exhausted" },
                { "table.unpack({}, 1, 1e12)", "instruction budget exhausted" },
                /* A finalizer runs with hooks off, in the run or in lua_close. */
                { "setmetatable({}, {__gc = function() while true do end end})",
                  "__gc metamethods are not available in a modulefile" },
                { "pcall(setmetatable, {}, {__gc = function() while true do end end}) while true do end",
                  "instruction budget exhausted" },
        };

        /* The budget, not the CPU time limit, must end these (under
         * valgrind too): a smaller budget, a CPU limit far away. */
        struct sandbox_options o = { .max_instructions = 1000000, .max_cpu_ms = 600000 };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct sandbox_result r = { 0 };

                if (!cases[i].message) {
                        eval_ok(cases[i].text, &o, &r);
                        sandbox_result_release(&r);
                        continue;
                }
                eval_fail(cases[i].text, strlen(cases[i].text), &o, &d);
                ck_assert_msg(strstr(d.message, cases[i].message), "%s: %s", cases[i].text, d.message);
        }
}
END_TEST

/* An instruction can be slow without allocating: == on two long strings
 * compares them whole. Time is bounded too. */
START_TEST(sandbox_slow_instructions_hit_the_cpu_time_limit)
{
        static const char *const text =
                "local a = (\"x\"):rep(8 << 20)\n"
                "local b = a:sub(1, -2) .. \"y\"\n"
                "while true do local _ = a == b end\n";
        struct sandbox_options o = { .max_cpu_ms = 200, .max_memory = 64 << 20 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        eval_fail(text, strlen(text), &o, &d);
        ck_assert_str_eq(d.message, "CPU time limit exceeded");
}
END_TEST

/* What modulefiles do with these functions still works, priced or not. */
START_TEST(sandbox_priced_functions_keep_their_results)
{
        static const char *const text =
                "local v = myModuleVersion()\n"
                "local major, minor = v:match(\"^(%d+)%.(%d+)\")\n"
                "local base = (\"/sw/cuda-12.9/\"):gsub(\"/+$\", \"\")\n"
                "local parts = {}\n"
                "for p in (\"a:b:c\"):gmatch(\"[^:]+\") do table.insert(parts, p) end\n"
                "table.sort(parts, function(x, y) return x > y end)\n"
                "table.insert(parts, 1, (\"-\"):rep(3, \"+\"))\n"
                "table.remove(parts)\n"
                "local m = table.move({1, 2, 3}, 1, 3, 2)\n"
                "setmetatable(parts, {__index = function() return \"?\" end})\n"
                "setenv(\"X\", major .. \".\" .. minor .. \" \" .. base .. \" \" .. table.concat(parts, \",\") ..\n"
                "       \" \" .. select(\"#\", table.unpack(m)) .. \" \" .. tostring(base:find(\".\", 1, true)) ..\n"
                "       \" \" .. (\"x\"):rep(0) .. parts[99])\n";
        struct sandbox_options o = { .module_name = "cuda", .module_version = "12.9" };
        struct sandbox_result r = { 0 };

        eval_ok(text, &o, &r);
        ck_assert_uint_eq(r.n_ops, 1);
        ck_assert_str_eq(r.ops[0].value, "12.9 /sw/cuda-12.9 -+-+-,c,b 4 12 ?");
        sandbox_result_release(&r);
}
END_TEST

START_TEST(sandbox_huge_allocation_exceeds_the_memory_limit)
{
        static const char *const texts[] = {
                "local t = {} for i = 1, 1e9 do t[i] = i end",
                "local s = \"x\" while true do s = s .. s end",
                "string.rep(\"x\", 1 << 30)",
        };
        struct sandbox_options o = { .max_memory = 8 << 20 };

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                eval_fail(texts[i], strlen(texts[i]), &o, &d);
                ck_assert_msg(streq(d.message, "memory limit exceeded"), "%s: %s", texts[i], d.message);
        }
}
END_TEST

/* The calls a file makes are recorded outside Lua's heap: without a
 * count, `for i = 1, 1e6 do setenv(...) end` (44 bytes) records a million
 * of them for the caller to apply, and with a long string each copy is
 * megabytes. The count and the bytes are bounded, the line is named, and
 * a pcall in the file cannot catch the error and go on. */
START_TEST(sandbox_recorded_calls_are_bounded)
{
        static const struct {
                const char *text;
                struct sandbox_options o;
                const char *message;
        } cases[] = {
                { "\nfor i = 1, 1e6 do setenv(\"V\" .. i, \"x\") end", { 0 },
                  "more than 10000 calls to modulefile functions (setenv, prepend_path, …); "
                  "a modulefile makes tens" },
                { "\nfor i = 1, 1e6 do pcall(prepend_path, \"P\", \"/x\" .. i) end setenv(\"A\", \"1\")",
                  { 0 }, "more than 10000 calls" },
                { "\nfor i = 1, 10 do whatis(\"x\") end", { .max_calls = 5 }, "more than 5 calls" },
                /* 100 copies of 1 MiB: 100 MiB outside the Lua heap uncharged. */
                { "local s = string.rep(\"x\", 1 << 20)\nfor i = 1, 100 do setenv(\"A\", s) end",
                  { .max_memory = 8 << 20 }, "memory limit exceeded" },
                { "local s = string.rep(\"x\", 1 << 20)\nfor i = 1, 100 do pcall(help, s, s) end",
                  { .max_memory = 8 << 20 }, "memory limit exceeded" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                eval_fail(cases[i].text, strlen(cases[i].text), &cases[i].o, &d);
                ck_assert_msg(strstr(d.message, cases[i].message) != NULL, "%s: %s", cases[i].text,
                              d.message);
                /* Called through pcall, the caller is pcall: no line. */
                if (!strstr(cases[i].text, "pcall"))
                        ck_assert_msg(d.line == 2, "%s: line %u", cases[i].text, d.line);
        }
}
END_TEST

/* Up to the limits everything is recorded, and the bytes are reported. */
START_TEST(sandbox_records_up_to_the_call_limit)
{
        static const char text[] = "for i = 1, 10000 do setenv(\"V\" .. i, \"x\") end";
        struct sandbox_result r = { 0 };

        eval_ok(text, NULL, &r);
        ck_assert_uint_eq(r.n_ops, SANDBOX_DEFAULT_MAX_CALLS);
        ck_assert_str_eq(r.ops[9999].name, "V10000");
        ck_assert_uint_ge(r.bytes, 10000 * (sizeof(struct sandbox_op) + 4));
        sandbox_result_release(&r);
}
END_TEST

START_TEST(sandbox_errors_name_the_file_and_line)
{
        static const struct {
                const char *text;
                unsigned line;
                const char *message; /* substring */
        } cases[] = {
                { "setenv(\"A\", \"b\")\n\nlocal = 3\n", 3, "<name> expected" },
                { "x = 1\nerror(\"boom\")\n", 2, "boom" },
                { "\n\n\nlocal s = nil .. \"x\"\n", 4, "attempt to concatenate a nil value" },
                { "help([[\nunterminated", 1, "unfinished long string" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                eval_fail(cases[i].text, strlen(cases[i].text), NULL, &d);
                ck_assert_str_eq(d.file, "test.lua");
                ck_assert_msg(d.line == cases[i].line || (i == 3 && d.line == 2), "case %zu: line %u", i, d.line);
                ck_assert_msg(strstr(d.message, cases[i].message), "case %zu: %s", i, d.message);
                ck_assert(!startswith(d.message, "test.lua"));
        }
}
END_TEST

START_TEST(sandbox_long_paths_still_give_file_and_line)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct sandbox_result r = { .n_ops = 7 };
        const char *path = "/a/very/long/directory/name/that/lua/shortens/in/its/messages/cuda/12.9.lua";
        int k = sandbox_eval("\nerror(\"boom\")", 14, path, NULL, &r, &d);

        ck_assert_int_eq(k, -EINVAL);
        ck_assert_str_eq(d.file, path);
        ck_assert_uint_eq(d.line, 2);
        ck_assert_str_eq(d.message, "boom");
        ck_assert_uint_eq(r.n_ops, 7);
}
END_TEST

START_TEST(sandbox_environment_holds_only_the_safe_functions)
{
        struct sandbox_result r = { 0 };

        eval_ok("local names = {}\n"
                "for k in pairs(_G) do names[#names + 1] = k end\n"
                "table.sort(names)\n"
                "setenv(\"G\", table.concat(names, \" \"))\n"
                "setenv(\"S\", tostring(_G == _ENV))\n"
                "setenv(\"U\", tostring(unpack({\"u\"})))\n",
                NULL, &r);
        ck_assert_uint_eq(r.n_ops, 3);
        ck_assert_str_eq(r.ops[0].value,
                         "LmodError LmodMessage LmodWarning _G add_property always_load always_unload "
                         "append_path assert atleast between conflict depends_on error extensions family "
                         "getmetatable help hide_modulefile hide_version hierarchyA io ipairs isDir isFile "
                         "isloaded latest load math mode module_alias module_version myFileName "
                         "myModuleFullName myModuleName myModuleUsrName myModuleVersion next os pairs "
                         "pathJoin pcall prepend_path prereq prereq_any print pushenv rawequal rawget rawlen "
                         "rawset remove_path requireFullName select set_alias set_shell_function setenv "
                         "setmetatable string table tonumber tostring try_load type unload unpack unsetenv "
                         "userInGroup userInGroups whatis xpcall");
        ck_assert_str_eq(r.ops[1].value, "true");
        ck_assert_str_eq(r.ops[2].value, "u");
        sandbox_result_release(&r);
}
END_TEST

/* The Lmod functions site modulefiles use beyond cudamod's own (ISSUE 18
 * item 8): recorded or answered, never run. */
START_TEST(sandbox_answers_the_site_functions)
{
        char *dir = fx_new();
        _cleanup_free_ char *file = xasprintf("%s/Compiler/gcc/4.8/boost/1.55.lua", dir);
        _cleanup_free_ char *text = xasprintf(
                "setenv('F', myFileName())\n"
                "setenv('U', myModuleUsrName())\n"
                "local h = hierarchyA(myModuleFullName(), 2)\n"
                "setenv('H', table.concat(h, ','))\n"
                "setenv('D', tostring(isDir('%s')) .. tostring(isDir('%s/nope')) .. tostring(isDir(nil)))\n"
                "setenv('I', tostring(isFile('%s')) .. tostring(isFile('%s')))\n"
                "setenv('Y', os.date('%%Y', 0))\n"
                "setenv('T', type(os.time()))\n"
                "set_alias('ll', 'ls -l; $(id)')\n"
                "set_shell_function('f', 'echo \"$1\"', 'echo')\n"
                "set_shell_function('g', 'true')\n"
                "extensions('numpy/1.12', 'scipy/1.1')\n"
                "unload('a', 'b/1')\n"
                "LmodWarning('w', 1)\n",
                dir, dir, file, dir);
        struct sandbox_options o = { .module_name = "boost", .module_version = "1.55",
                                     .module_file = file, .module_usr_name = "boost" };
        struct sandbox_result r = { 0 };

        fx_write(dir, "Compiler/gcc/4.8/boost/1.55.lua", "x");
        eval_ok(text, &o, &r);
        ck_assert_uint_eq(r.n_ops, 13);
        ck_assert_str_eq(r.ops[0].value, file);
        ck_assert_str_eq(r.ops[1].value, "boost");
        /* two components a level, from the end: gcc/4.8, then the
         * scratch directory's name and Compiler */
        ck_assert_msg(startswith(r.ops[2].value, "gcc/4.8,") && endswith(r.ops[2].value, "/Compiler"),
                      "%s", r.ops[2].value);
        ck_assert_str_eq(r.ops[3].value, "truefalsefalse");
        ck_assert_str_eq(r.ops[4].value, "truefalse");
        ck_assert_str_eq(r.ops[5].value, "1970");
        ck_assert_str_eq(r.ops[6].value, "number");
        ck_assert_int_eq(r.ops[7].kind, SANDBOX_SET_ALIAS);
        ck_assert_str_eq(r.ops[7].name, "ll");
        ck_assert_str_eq(r.ops[7].value, "ls -l; $(id)");
        ck_assert_int_eq(r.ops[8].kind, SANDBOX_SET_SHELL_FUNCTION);
        ck_assert_str_eq(r.ops[8].value, "echo \"$1\"");
        ck_assert_str_eq(r.ops[8].args.items[0], "echo");
        ck_assert_uint_eq(r.ops[9].args.len, 0);
        ck_assert_int_eq(r.ops[10].kind, SANDBOX_EXTENSIONS);
        ck_assert_str_eq(r.ops[10].value, "numpy/1.12, scipy/1.1");
        ck_assert_int_eq(r.ops[11].kind, SANDBOX_UNLOAD);
        ck_assert_uint_eq(r.ops[11].args.len, 2);
        ck_assert_int_eq(r.ops[12].kind, SANDBOX_WARNING);
        ck_assert_str_eq(r.ops[12].value, "w1");
        sandbox_result_release(&r);
        fx_free(dir);
}
END_TEST

START_TEST(sandbox_warning_and_require_full_name)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct sandbox_options o = { .module_name = "cuda", .module_version = "12.9",
                                     .module_usr_name = "cuda/12.9" };
        struct sandbox_result r = { 0 };

        eval_ok("requireFullName()\nLmodWarning('a', 'b')\n", &o, &r);
        ck_assert_uint_eq(r.n_ops, 1);
        ck_assert_int_eq(r.ops[0].kind, SANDBOX_WARNING);
        ck_assert_str_eq(r.ops[0].value, "ab");
        sandbox_result_release(&r);
        o.module_usr_name = "cuda";
        eval_fail("\nrequireFullName()\n", strlen("\nrequireFullName()\n"), &o, &d);
        ck_assert_uint_eq(d.line, 2);
        ck_assert_ptr_nonnull(strstr(d.message, "must be loaded with the version specified, e.g. \"cuda/12.9\""));
}
END_TEST

START_TEST(sandbox_refuses_names_a_shell_cannot_define)
{
        static const char *const bad[] = {
                "set_alias('a;b', 'x')", "set_alias('$(id)', 'x')", "set_alias('', 'x')",
                "set_alias('-x', 'x')", "set_shell_function('a b', 'x')", "set_alias('a\\nb', 'x')",
                "set_shell_function('f')",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                eval_fail(bad[i], strlen(bad[i]), NULL, &d);
                ck_assert_msg(strstr(d.message, "bad argument"), "%s: %s", bad[i], d.message);
        }
}
END_TEST

/* on_call: each call given as it is made, before the file reads the
 * environment; its error ends the run even inside a pcall. */
struct calls_seen {
        int n;
        int fail_at;
};

static int count_call(void *userdata, const struct sandbox_op *op, struct diag *d)
{
        struct calls_seen *c = userdata;

        (void)op;
        if (++c->n == c->fail_at)
                return diag_set(d, -EINVAL, "x.lua", op->line, 0, "no such module");
        return 0;
}

static const char *calls_getenv(void *userdata, const char *name)
{
        const struct calls_seen *c = userdata;
        static char buf[16];

        snprintf(buf, sizeof(buf), "%d", c->n);
        return streq(name, "N") ? buf : NULL;
}

START_TEST(sandbox_on_call_applies_each_call_before_the_file_goes_on)
{
        struct calls_seen c = { 0 };
        struct sandbox_options o = { .on_call = count_call, .getenv = calls_getenv, .userdata = &c };
        struct sandbox_result r = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        eval_ok("setenv('A', os.getenv('N'))\nsetenv('B', os.getenv('N'))\nwhatis('x')\n", &o, &r);
        ck_assert_str_eq(r.ops[0].value, "0");
        ck_assert_str_eq(r.ops[1].value, "1");
        ck_assert_int_eq(c.n, 3);
        sandbox_result_release(&r);
        c = (struct calls_seen){ .fail_at = 1 };
        {
                const char *t = "pcall(depends_on, 'x')\nlocal ok = pcall(setenv, 'A', 'b')\nsetenv('C', 'd')\n";

                eval_fail(t, strlen(t), &o, &d);
        }
        ck_assert_int_eq(c.n, 1);
        ck_assert_str_eq(d.message, "no such module");
        ck_assert_str_eq(d.file, "x.lua");
}
END_TEST

int main(void)
{
        Suite *s = suite_create("lmod-sandbox");
        TCase *tc = tcase_create("lmod-sandbox");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, sandbox_evaluates_every_reference_lua_modulefile);
        tcase_add_test(tc, sandbox_records_the_cuda_12_9_operations_in_order);
        tcase_add_test(tc, sandbox_records_the_flat_cudnn_dependency_on_a_cuda_major);
        tcase_add_test(tc, sandbox_records_module_version_of_a_modulerc);
        tcase_add_test(tc, sandbox_path_ops_take_the_table_form_with_delim_and_priority);
        tcase_add_test(tc, sandbox_path_join_follows_lmod);
        tcase_add_test(tc, sandbox_module_names_and_mode_come_from_the_options);
        tcase_add_test(tc, sandbox_getenv_reads_the_given_environment);
        tcase_add_test(tc, sandbox_lmod_error_fails_with_its_message_and_line);
        tcase_add_test(tc, sandbox_records_help_messages_and_module_lists);
        tcase_add_loop_test(tc, sandbox_refuses_what_is_not_in_the_sandbox, 0, (int)ELEMENTSOF(hostile));
        tcase_add_test(tc, sandbox_io_open_reads_the_driver_version);
        tcase_add_test(tc, sandbox_refuses_variable_names_no_environment_can_carry);
        tcase_add_test(tc, sandbox_endless_loop_exhausts_the_instruction_budget);
        tcase_add_test(tc, sandbox_library_work_counts_against_the_budget);
        tcase_add_test(tc, sandbox_priced_functions_keep_their_results);
        tcase_add_test(tc, sandbox_slow_instructions_hit_the_cpu_time_limit);
        tcase_add_test(tc, sandbox_huge_allocation_exceeds_the_memory_limit);
        tcase_add_test(tc, sandbox_recorded_calls_are_bounded);
        tcase_add_test(tc, sandbox_records_up_to_the_call_limit);
        tcase_add_test(tc, sandbox_errors_name_the_file_and_line);
        tcase_add_test(tc, sandbox_long_paths_still_give_file_and_line);
        tcase_add_test(tc, sandbox_environment_holds_only_the_safe_functions);
        tcase_add_test(tc, sandbox_answers_the_site_functions);
        tcase_add_test(tc, sandbox_warning_and_require_full_name);
        tcase_add_test(tc, sandbox_refuses_names_a_shell_cannot_define);
        tcase_add_test(tc, sandbox_on_call_applies_each_call_before_the_file_goes_on);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
