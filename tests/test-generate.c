/* test-generate.c: `cudamod generate` end to end, through the built binary:
 * the reference tree modulefiles/, the command line, and what a re-run does.
 * The real Lmod and Environment Modules load these files in tests/modules/. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demo.h"
#include "fixture.h"
#include "layouts.h"
#include "strbuf.h"
#include "testutil.h"
#include "walk.h"

/* Where the reference tree says the demo lives. */
#define DEMO_ROOT "/opt/cudamod-demo"

static const char *const flavours[][3] = {
        /* directory, --format, --layout */
        { "lua-hierarchical", "lua", "hierarchical" },
        { "lua-flat", "lua", "flat" },
        { "tcl-hierarchical", "tcl", "hierarchical" },
        { "tcl-flat", "tcl", "flat" },
};

/* Every regular file below dir (relative paths, sorted), leaving out the
 * index and the lock, which are not part of the reference. */
static void list_files(const char *dir, const char *rel, struct strv *ret)
{
        _cleanup_free_ char *path = rel ? path_join(dir, rel) : xstrdup(dir);
        DIR *d = opendir(path);
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d))) {
                _cleanup_free_ char *sub = NULL, *full = NULL;
                struct stat st;

                if (streq(e->d_name, ".") || streq(e->d_name, "..") ||
                    streq(e->d_name, ".cudamod-index.json") || streq(e->d_name, ".cudamod.lock"))
                        continue;
                sub = rel ? path_join(rel, e->d_name) : xstrdup(e->d_name);
                full = path_join(dir, sub);
                ck_assert_int_eq(lstat(full, &st), 0);
                if (S_ISDIR(st.st_mode))
                        list_files(dir, sub, ret);
                else
                        strv_add(ret, sub);
        }
        closedir(d);
        strv_sort_uniq(ret);
}

static char *read_text(const char *path)
{
        struct strbuf sb = STRBUF_INIT;
        int r = strbuf_read_file(&sb, path, 1 << 20);

        ck_assert_msg(r == 0, "cannot read '%s': %s", path, strerror(-r));
        return strbuf_detach(&sb);
}

static char *read_text_at(const char *root, const char *rel)
{
        _cleanup_free_ char *path = path_join(root, rel);

        return read_text(path);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return remove(path);
}

static void generate(const char *root, const char *out, const char *format, const char *layout,
                     struct run_result *r)
{
        _cleanup_free_ char *sw = path_join(root, "sw");

        run_cudamod(r, (const char *const[]){ "generate", "-o", out, "--format", format, "--layout",
                                              layout, sw, NULL },
                    false);
}

START_TEST(generate_reference_tree_matches_modulefiles)
{
        char *root = fx_new();
        const char *src = getenv("CUDAMOD_SOURCE_ROOT");

        ck_assert_ptr_nonnull(src);
        demo_build(root);
        for (size_t i = 0; i < ELEMENTSOF(flavours); i++) {
                _cleanup_free_ char *out = xasprintf("%s/modulefiles/%s", root, flavours[i][0]);
                _cleanup_free_ char *ref = xasprintf("%s/modulefiles/%s", src, flavours[i][0]);
                struct strv got = { 0 }, want = { 0 };
                struct run_result r = { 0 };

                generate(root, out, flavours[i][1], flavours[i][2], &r);
                ck_assert_msg(r.status == 0, "%s: %s", flavours[i][0], r.err);
                /* Environment Modules and the hierarchy: said once. */
                if (streq(flavours[i][0], "tcl-hierarchical"))
                        ck_assert_str_eq(r.err, "cudamod: Environment Modules has no 'module spider' and its "
                                                "'module avail' does not descend the hierarchical layout: "
                                                "'module avail cudnn' finds nothing until a cuda module is "
                                                "loaded; --layout flat lists every module at once\n");
                else
                        ck_assert_str_eq(r.err, "");
                run_result_release(&r);
                list_files(out, NULL, &got);
                ck_assert_uint_gt(got.len, 0);
                if (updating_golden())
                        nftw(ref, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
                else {
                        list_files(ref, NULL, &want);
                        for (size_t k = 0; k < want.len || k < got.len; k++)
                                ck_assert_msg(k < want.len && k < got.len &&
                                                      streq(want.items[k], got.items[k]),
                                              "%s: file lists differ at '%s' / '%s'", flavours[i][0],
                                              k < want.len ? want.items[k] : "(end)",
                                              k < got.len ? got.items[k] : "(end)");
                }
                for (size_t k = 0; k < got.len; k++) {
                        _cleanup_free_ char *p = path_join(out, got.items[k]);
                        _cleanup_free_ char *text = read_text(p);
                        _cleanup_free_ char *norm = str_replace_all(text, root, DEMO_ROOT);
                        _cleanup_free_ char *rel = xasprintf("modulefiles/%s/%s", flavours[i][0],
                                                             got.items[k]);
                        assert_golden_file(rel, norm);
                }
                strv_release(&got);
                strv_release(&want);
        }
        fx_free(root);
}
END_TEST

/* The lines of text that start with one of the prefixes, blanks before
 * them cut, joined by newlines. */
static char *lines_starting(const char *text, const char *const *prefixes)
{
        struct strbuf sb = STRBUF_INIT;

        for (const char *p = text; *p;) {
                const char *end = strchr(p, '\n');
                size_t n = end ? (size_t)(end - p) : strlen(p);
                const char *q = p;

                while (*q == ' ')
                        q++;
                for (const char *const *x = prefixes; *x; x++)
                        if (startswith(q, *x)) {
                                strbuf_add(&sb, q, n - (size_t)(q - p));
                                strbuf_addch(&sb, '\n');
                                break;
                        }
                p = end ? end + 1 : p + n;
        }
        return strbuf_detach(&sb);
}

/* A cuDSS archive's module, in each format and layout: the PyTorch build
 * variables, its paths, and in the flat layout the cuda of its major. */
START_TEST(generate_cudss_module_environment)
{
        static const char *const prefixes[] = { "setenv", "pushenv", "prepend", "append", "depends_on", "prereq", NULL };
        static const char lua[] =
                "pushenv(\"CUDSS_ROOT\", \"@P@\")\n"
                "pushenv(\"CUDSS_ROOT_DIR\", \"@P@\")\n"
                "setenv(\"CUDSS_INCLUDE_DIR\", \"@P@/include\")\n"
                "setenv(\"CUDSS_LIBRARY\", \"@P@/lib\")\n"
                "setenv(\"USE_CUDSS\", \"1\")\n"
                "prepend_path(\"LD_LIBRARY_PATH\", \"@P@/lib\")\n"
                "prepend_path(\"LIBRARY_PATH\", \"@P@/lib\")\n"
                "prepend_path(\"CPATH\", \"@P@/include\")\n"
                "prepend_path(\"CMAKE_PREFIX_PATH\", \"@P@\")\n";
        static const char tcl[] =
                "setenv \"CUDSS_ROOT\" \"@P@\"\n"
                "pushenv \"CUDSS_ROOT\" \"@P@\"\n"
                "setenv \"CUDSS_ROOT_DIR\" \"@P@\"\n"
                "pushenv \"CUDSS_ROOT_DIR\" \"@P@\"\n"
                "setenv \"CUDSS_INCLUDE_DIR\" \"@P@/include\"\n"
                "setenv \"CUDSS_LIBRARY\" \"@P@/lib\"\n"
                "setenv \"USE_CUDSS\" \"1\"\n"
                "prepend-path \"LD_LIBRARY_PATH\" \"@P@/lib\"\n"
                "prepend-path \"LIBRARY_PATH\" \"@P@/lib\"\n"
                "prepend-path \"CPATH\" \"@P@/include\"\n"
                "prepend-path \"CMAKE_PREFIX_PATH\" \"@P@\"\n";
        static const struct {
                const char *format, *layout, *file, *dep, *env;
        } cases[] = {
                { "lua", "hierarchical", "CUDA/12/cudss/0.7.1.lua", "", lua },
                { "lua", "flat", "cudss/0.7.1.lua", "depends_on(between(\"cuda\", \"12\", \"12.999999\"))\n", lua },
                /* Environment Modules needs it in the hierarchy too (Lmod skips it). */
                { "tcl", "hierarchical", "CUDA/12/cudss/0.7.1", "prereq \"cuda@12:12.999999\"\n", tcl },
                { "tcl", "flat", "cudss/0.7.1", "prereq \"cuda@12:12.999999\"\n", tcl },
        };
        char *root = fx_new();
        _cleanup_free_ char *apps = path_join(root, "apps");
        _cleanup_free_ char *prefix = path_join(apps, "libcudss-linux-x86_64-0.7.1.4_cuda12-archive");

        layout_fixture_find("cudss-tarballs")->build(root);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = xasprintf("%s/out-%zu", root, i);
                _cleanup_free_ char *file = path_join(out, cases[i].file);
                _cleanup_free_ char *text = NULL, *got = NULL, *env = NULL, *want = NULL;
                struct run_result r = { 0 };

                run_cudamod(&r, (const char *const[]){ "generate", "-o", out, "--format", cases[i].format,
                                                      "--layout", cases[i].layout, apps, NULL },
                            false);
                ck_assert_msg(r.status == 0, "%s %s: %s", cases[i].format, cases[i].layout, r.err);
                run_result_release(&r);
                text = read_text(file);
                got = lines_starting(text, prefixes);
                env = str_replace_all(cases[i].env, "@P@", prefix);
                want = xasprintf("%s%s", cases[i].dep, env);
                ck_assert_msg(streq(got, want), "%s:\n%s\nexpected:\n%s", cases[i].file, got, want);
        }
        fx_free(root);
}
END_TEST

/* A cuDNN for CUDA 13 beside only a CUDA 12: its module is written (a
 * CUDA 13 may come), and generate warns, naming the file, the missing
 * cuda major and what to do; in --json too. The cuDNN of the CUDA 12 is
 * no orphan. */
START_TEST(generate_warns_about_an_orphan_level)
{
        static const struct {
                const char *format, *layout, *file, *said;
        } cases[] = {
                { "lua", "hierarchical", "CUDA/13/cudnn/9.19.0.lua", "nothing puts '@OUT@/CUDA/13' on MODULEPATH" },
                { "tcl", "hierarchical", "CUDA/13/cudnn/9.19.0", "nothing puts '@OUT@/CUDA/13' on MODULEPATH" },
                { "lua", "flat", "cudnn/9.19.0.lua", "which needs one, cannot be loaded" },
        };
        char *root = fx_new();
        _cleanup_free_ char *sw = path_join(root, "sw");
        _cleanup_free_ char *prefix = path_join(sw, "cudnn-linux-x86_64-9.19.0.56_cuda13-archive");

        fx_cuda_toolkit(root, "sw/cuda-12.9",
                        &(struct fx_cuda){ .version = "12.9", .release = "12.9.1", .cudart = "12.9.79",
                                           .nvcc = "12.9.86" });
        fx_cudnn(root, "sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive",
                 &(struct fx_cudnn){ .version = "9.7.1", .cuda_major = 12 });
        fx_cudnn(root, "sw/cudnn-linux-x86_64-9.19.0.56_cuda13-archive",
                 &(struct fx_cudnn){ .version = "9.19.0", .cuda_major = 13 });
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = xasprintf("%s/out-%zu", root, i);
                _cleanup_free_ char *file = path_join(out, cases[i].file), *said = NULL, *want = NULL;
                struct run_result r = { 0 };
                json_error_t err;
                json_t *doc;
                size_t n = 0;

                said = str_replace_all(cases[i].said, "@OUT@", out);
                want = xasprintf("'%s': no cuda 13 module is generated", file);
                run_cudamod(&r, (const char *const[]){ "generate", "-o", out, "--format", cases[i].format,
                                                      "--layout", cases[i].layout, sw, NULL },
                            false);
                ck_assert_msg(r.status == 0, "%s", r.err);
                ck_assert_int_eq(access(file, F_OK), 0);
                ck_assert_msg(strstr(r.err, want) && strstr(r.err, said) &&
                              strstr(r.err, "cudnn/9.19.0"),
                              "%s %s: no orphan warning: %s", cases[i].format, cases[i].layout, r.err);
                ck_assert_msg(strstr(r.err, "install or generate a CUDA 13 module, or exclude") &&
                              strstr(r.err, prefix), "%s", r.err);
                ck_assert_msg(!strstr(r.err, "cuda 12 module"), "%s", r.err);
                run_result_release(&r);

                run_cudamod(&r, (const char *const[]){ "generate", "--json", "--dry-run", "-o", out,
                                                      "--format", cases[i].format, "--layout",
                                                      cases[i].layout, sw, NULL },
                            false);
                ck_assert_int_eq(r.status, 0);
                doc = json_loads(r.out, 0, &err);
                ck_assert_msg(doc != NULL, "%s: %s", err.text, r.out);
                for (size_t k = 0; k < json_array_size(json_object_get(doc, "warnings")); k++) {
                        const char *w = json_string_value(json_array_get(json_object_get(doc, "warnings"), k));

                        n += w && strstr(w, want) != NULL;
                }
                ck_assert_msg(n == 1, "%s", r.out);
                json_decref(doc);
                run_result_release(&r);
        }
        fx_free(root);
}
END_TEST

/* family.<component> and the toolkit's components (issue 18): conflict()
 * with the site's names, extensions() and an Extensions: whatis line
 * from version.json, a hostile component version left out. */
START_TEST(generate_family_conflicts_and_toolkit_extensions)
{
        char *root = fx_new();
        _cleanup_free_ char *cfg = path_join(root, "site.yaml"), *yaml = NULL, *lua = NULL, *tcl = NULL;
        _cleanup_free_ char *nofam = NULL;
        struct run_result r = { 0 };

        demo_build(root);
        fx_write(root, "sw/cuda-12.9/version.json",
                 "{\"cuda\": {\"version\": \"12.9.1\"}, \"cuda_nvcc\": {\"version\": \"12.9.86\"},\n"
                 " \"libcublas\": {\"version\": \"12.9.1.4\"},\n"
                 " \"libcufft\": {\"version\": \"11.4\\\"), os.execute(\\\"touch X\\\")--\"},\n"
                 " \"libcurand\": {\"version\": \"10.3, cuda/99\"}}\n");
        yaml = xasprintf("search: [%s/sw]\nlayout: flat\nfamily: {cuda: [cuda, CUDA, CUDA/12.4.0], nccl: []}\n"
                         "lmod: {extensions: true}\n", root);
        fx_write(root, "site.yaml", yaml);
        for (int f = 0; f < 2; f++) {
                _cleanup_free_ char *out = xasprintf("%s/%s", root, f ? "tcl" : "lua");
                run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "-o", out, "--format",
                                                       f ? "tcl" : "lua", NULL },
                            false);
                ck_assert_msg(r.status == 0, "%s", r.err);
                run_result_release(&r);
        }
        lua = read_text_at(root, "lua/cuda/12.9.lua");
        ck_assert_ptr_nonnull(strstr(lua, "\nfamily(\"cuda\")\nconflict(\"CUDA\")\nconflict(\"CUDA/12.4.0\")\n"
                                          "if LmodVersion and convertToCanonical(LmodVersion()) >= "
                                          "convertToCanonical(\"8.2.8\") then\n"
                                          "    extensions(\"cudart/12.9.79, nvcc/12.9.86, cublas/12.9.1.4\")\nend\n"));
        ck_assert_ptr_nonnull(strstr(lua, "\nwhatis(\"Extensions: cudart/12.9.79, nvcc/12.9.86, cublas/12.9.1.4\")\n"));
        ck_assert_ptr_null(strstr(lua, "touch"));
        /* lmod.extensions off (the default): the whatis line alone. */
        free(yaml);
        yaml = xasprintf("search: [%s/sw]\nlayout: flat\n", root);
        fx_write(root, "site.yaml", yaml);
        free(nofam);
        nofam = xasprintf("%s/noext", root);
        run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "-o", nofam, NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        run_result_release(&r);
        free(lua);
        lua = read_text_at(root, "noext/cuda/12.9.lua");
        ck_assert_ptr_null(strstr(lua, "extensions("));
        ck_assert_ptr_nonnull(strstr(lua, "\nwhatis(\"Extensions: cudart/12.9.79, nvcc/12.9.86, cublas/12.9.1.4\")\n"));
        ck_assert_ptr_null(strstr(lua, "cuda/99"));
        tcl = read_text_at(root, "tcl/cuda/12.9");
        ck_assert_ptr_nonnull(strstr(tcl, "\nfamily \"cuda\"\nconflict \"CUDA\"\nconflict \"CUDA/12.4.0\"\n"));
        ck_assert_ptr_nonnull(strstr(tcl, "\nmodule-whatis \"Extensions: cudart/12.9.79, nvcc/12.9.86, cublas/12.9.1.4\"\n"));
        ck_assert_ptr_null(strstr(tcl, "touch"));
        /* An empty family: neither family nor conflict; cuDNN keeps its own. */
        free(nofam);
        nofam = read_text_at(root, "lua/nccl/2.21.5.lua");
        ck_assert_ptr_null(strstr(nofam, "family("));
        ck_assert_ptr_null(strstr(nofam, "conflict("));
        free(nofam);
        nofam = read_text_at(root, "lua/cudnn/9.7.1.lua");
        ck_assert_ptr_nonnull(strstr(nofam, "\nfamily(\"cudnn\")\n"));
        ck_assert_ptr_null(strstr(nofam, "extensions("));
        fx_free(root);
}
END_TEST

/* Shared trees (write-site.c): EasyBuild's CUDA/12.4.0.lua where the
 * hierarchy's CUDA/12 goes is refused, nothing written; --force writes. */
START_TEST(generate_refuses_to_write_among_another_tools_modules)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "all"), *sw = path_join(root, "sw");
        _cleanup_free_ char *core = path_join(out, "Core");
        struct run_result r = { 0 };

        demo_build(root);
        fx_write(root, "all/CUDA/12.4.0.lua", "conflict(\"CUDA\")\n");
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 1);
        ck_assert_msg(strstr(r.err, "/all/CUDA/12.4.0.lua' was not written by cudamod and lies where it would "
                                    "write") && strstr(r.err, "nothing written"), "%s", r.err);
        ck_assert_int_eq(access(core, F_OK), -1);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "generate", "--force", "-o", out, sw, NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.err, "(--force: writing beside it)"), "%s", r.err);
        ck_assert_int_eq(access(core, F_OK), 0);
        run_result_release(&r);
        fx_free(root);
}
END_TEST


START_TEST(generate_rerun_changes_nothing)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf");
        _cleanup_free_ char *first = NULL, *second = NULL;
        _cleanup_free_ char *cuda = path_join(out, "Core/cuda/12.9.lua");
        struct run_result r = { 0 };
        struct stat a, b;

        demo_build_core(root);
        generate(root, out, "lua", "hierarchical", &r);
        ck_assert_int_eq(r.status, 0);
        first = str_replace_all(r.out, root, "@ROOT@");
        ck_assert_str_eq(first, "created      CUDA/11/cudnn/.modulerc.lua\n"
                                "created      CUDA/11/cudnn/8.9.7.lua\n"
                                "created      CUDA/12/cudnn/.modulerc.lua\n"
                                "created      CUDA/12/cudnn/9.7.1.lua\n"
                                "created      CUDA/12/nccl/.modulerc.lua\n"
                                "created      CUDA/12/nccl/2.21.5.lua\n"
                                "created      Core/cuda/.modulerc.lua\n"
                                "created      Core/cuda/11.8.lua\n"
                                "created      Core/cuda/12.9.lua\n"
                                "@ROOT@/mf: 9 created, 0 updated, 0 unchanged, 0 pruned, 0 skipped\n");
        run_result_release(&r);
        ck_assert_int_eq(stat(cuda, &a), 0);
        ck_assert_int_eq(a.st_mode & 07777, 0644 & ~(mode_t)022);

        generate(root, out, "lua", "hierarchical", &r);
        ck_assert_int_eq(r.status, 0);
        second = str_replace_all(r.out, root, "@ROOT@");
        ck_assert_str_eq(second, "@ROOT@/mf: 0 created, 0 updated, 9 unchanged, 0 pruned, 0 skipped\n");
        run_result_release(&r);
        ck_assert_int_eq(stat(cuda, &b), 0);
        ck_assert_int_eq(a.st_ino, b.st_ino);
        ck_assert_int_eq(a.st_mtim.tv_nsec, b.st_mtim.tv_nsec);
        ck_assert_int_eq(a.st_mtim.tv_sec, b.st_mtim.tv_sec);

        /* --check on an up-to-date tree: 0; after an edit: 1, naming it. */
        {
                _cleanup_free_ char *sw = path_join(root, "sw");
                run_cudamod(&r, (const char *const[]){ "generate", "--check", "-o", out, sw, NULL }, false);
                ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
                run_result_release(&r);
                fx_write(root, "mf/Core/cuda/12.9.lua", "-- edited\n");
                run_cudamod(&r, (const char *const[]){ "generate", "--check", "-o", out, sw, NULL }, false);
                ck_assert_int_eq(r.status, 1);
                ck_assert_ptr_nonnull(strstr(r.out, "Core/cuda/12.9.lua"));
                run_result_release(&r);
        }
        fx_free(root);
}
END_TEST

START_TEST(generate_json_describes_the_run)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        struct run_result r = { 0 };
        json_error_t err;
        json_t *doc, *files;

        demo_build_core(root);
        run_cudamod(&r, (const char *const[]){ "generate", "--json", "--dry-run", "-o", out, sw, NULL },
                    false);
        ck_assert_int_eq(r.status, 0);
        doc = json_loads(r.out, 0, &err);
        ck_assert_msg(doc != NULL, "%s: %s", err.text, r.out);
        ck_assert_str_eq(json_string_value(json_object_get(doc, "output")), out);
        ck_assert(json_is_false(json_object_get(doc, "written")));
        ck_assert(json_is_true(json_object_get(doc, "drift")));
        files = json_object_get(doc, "files");
        ck_assert_uint_eq(json_array_size(files), 9);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(files, 0), "status")), "created");
        ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(doc, "summary"), "created")), 9);
        json_decref(doc);
        run_result_release(&r);
        /* --dry-run wrote nothing, not even the directory. */
        ck_assert_int_eq(access(out, F_OK), -1);
        fx_free(root);
}
END_TEST

START_TEST(generate_usage_and_config_errors_write_nothing)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *cfg = path_join(root, "site.yaml");
        struct run_result r = { 0 };

        demo_build(root);
        run_cudamod(&r, (const char *const[]){ "generate", root, NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "generate needs an output directory"));
        run_result_release(&r);

        run_cudamod(&r, (const char *const[]){ "generate", "--format", "yaml", "-o", out, NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "--format: 'yaml' is not one of lua, tcl"));
        run_result_release(&r);

        {
                _cleanup_free_ char *colon = path_join(root, "mf:x");
                run_cudamod(&r, (const char *const[]){ "generate", "-o", colon, root, NULL }, false);
                ck_assert_int_eq(r.status, 2);
                ck_assert_ptr_nonnull(strstr(r.err, "which MODULEPATH cannot carry"));
                run_result_release(&r);
                ck_assert_int_eq(access(colon, F_OK), -1);
        }
        {
                /* A newline would reach the shell raw through the module tools. */
                _cleanup_free_ char *nl = path_join(root, "mf\nx");
                run_cudamod(&r, (const char *const[]){ "generate", "-o", nl, root, NULL }, false);
                ck_assert_int_eq(r.status, 2);
                ck_assert_ptr_nonnull(strstr(r.err, "holds a control character"));
                run_result_release(&r);
                ck_assert_int_eq(access(nl, F_OK), -1);
        }
        {
                /* Environment Modules would re-encode it in a UTF-8 locale;
                 * Lmod carries the bytes. */
                _cleanup_free_ char *bad = path_join(root, "mf\xff");
                run_cudamod(&r, (const char *const[]){ "generate", "--format", "tcl", "-o", bad, root, NULL },
                            false);
                ck_assert_int_eq(r.status, 2);
                ck_assert_ptr_nonnull(strstr(r.err, "holds a byte that is not ASCII"));
                run_result_release(&r);
                ck_assert_int_eq(access(bad, F_OK), -1);
                run_cudamod(&r, (const char *const[]){ "generate", "--format", "lua", "-o", bad, root, NULL },
                            false);
                ck_assert_int_eq(r.status, 0);
                run_result_release(&r);
                ck_assert_int_eq(access(bad, F_OK), 0);
        }

        fx_write(root, "site.yaml", "format: lua\nlayuot: flat\n");
        run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "-o", out, root, NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "site.yaml:2:1:"));
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);
        ck_assert_int_eq(access(out, F_OK), -1);

        /* A site template with an error is found before anything is written. */
        fx_write(root, "site.yaml", "templates: tpl\n");
        fx_write(root, "tpl/lua/cuda.lua.in", "setenv(\"X\", {{nosuchkey}})\n");
        run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "-o", out, root, NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "cuda.lua.in:1:"));
        run_result_release(&r);
        ck_assert_int_eq(access(out, F_OK), -1);
        fx_free(root);
}
END_TEST

/* Every file of dir (relative path and content, "path\0content\0..."),
 * the index and lock included: what "nothing written" compares. */
static char *tree_snapshot(const char *dir)
{
        struct strv files = { 0 };
        struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *index = path_join(dir, ".cudamod-index.json");

        list_files(dir, NULL, &files);
        for (size_t i = 0; i < files.len; i++) {
                _cleanup_free_ char *full = path_join(dir, files.items[i]), *text = read_text(full);

                strbuf_addf(&sb, "%s\n%s\n", files.items[i], text);
        }
        if (access(index, F_OK) == 0) {
                _cleanup_free_ char *text = read_text(index);

                strbuf_addf(&sb, "index\n%s\n", text);
        }
        strv_release(&files);
        return strbuf_detach(&sb);
}

/* pytorch.cuda_arch_list goes into TORCH_CUDA_ARCH_LIST, which the module
 * tools write raw into shell code: a newline in it is refused at its
 * position in the config, and nothing is written. */
START_TEST(generate_refuses_a_control_character_in_cuda_arch_list)
{
        static const char *const formats[] = { "lua", "tcl", NULL };
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *cfg = path_join(root, "site.yaml");
        _cleanup_free_ char *want = xasprintf("%s:3:19: 'pytorch.cuda_arch_list': the value holds a control "
                                              "character, which Lmod and Environment Modules write raw into the "
                                              "shell code they print (\\x0a at byte 4)", cfg);

        demo_build(root);
        fx_write(root, "site.yaml", "# site\npytorch:\n  cuda_arch_list: \"8.0\\n/tmp/evil.sh\"\n");
        for (size_t i = 0; formats[i]; i++) {
                struct run_result r = { 0 };

                run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "--format", formats[i],
                                                       "-o", out, root, NULL },
                            false);
                ck_assert_msg(r.status == 2, "%s: exit %d: %s", formats[i], r.status, r.err);
                ck_assert_msg(strstr(r.err, want), "%s: %s", formats[i], r.err);
                ck_assert_str_eq(r.out, "");
                ck_assert_int_eq(access(out, F_OK), -1);
                run_result_release(&r);
        }
        fx_free(root);
}
END_TEST

/* cuda_arch_list: detect takes the list from the index, which validate
 * wrote from what the GPU nodes answered, or someone edited: a hostile
 * value there is refused too, and the tree stays as it was. */
START_TEST(generate_refuses_a_hostile_arch_list_from_the_index)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *cfg = path_join(root, "site.yaml");
        _cleanup_free_ char *index = path_join(out, ".cudamod-index.json"), *before = NULL, *after = NULL;
        struct run_result r = { 0 };
        json_error_t jerr;
        json_t *doc, *validation;

        demo_build(root);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, root, NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        run_result_release(&r);
        doc = json_load_file(index, 0, &jerr);
        ck_assert_msg(doc, "%s", jerr.text);
        validation = json_pack("{s:s, s:[{s:s, s:i, s:[{s:i, s:s, s:s, s:i}]}], s:s}", "time", "2026-01-01T00:00:00Z",
                               "targets", "name", "h100", "driver_version", 12040, "devices", "index", 0,
                               "name", "H100", "compute_capability", "9.0\n/tmp/evil.sh", "memory_mib", 1,
                               "arch_list", "9.0\n/tmp/evil.sh");
        json_object_set_new(doc, "validation", validation);
        ck_assert_int_eq(json_dump_file(doc, index, JSON_INDENT(2)), 0);
        json_decref(doc);
        before = tree_snapshot(out);

        fx_write(root, "site.yaml", "pytorch:\n  cuda_arch_list: detect\n");
        run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "-o", out, root, NULL }, false);
        ck_assert_msg(r.status == 1 || r.status == 2, "exit %d: %s", r.status, r.err);
        ck_assert_msg(strstr(r.err, "validation.arch_list") && strstr(r.err, "holds a control character"), "%s",
                      r.err);
        ck_assert_ptr_nonnull(strstr(r.err, index));
        run_result_release(&r);
        after = tree_snapshot(out);
        ck_assert_str_eq(after, before);
        fx_free(root);
}
END_TEST

/* A site template that is a FIFO, a dangling link or empty: an error
 * naming it, nothing written, and no hang on the FIFO. */
START_TEST(generate_refuses_unusable_site_templates)
{
        static const struct {
                const char *what, *message;
        } t[] = {
                { "fifo", "template is not a regular file" },
                { "dangling", "template is a dangling symbolic link" },
                { "empty", "template is empty" },
                { NULL },
        };
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *cfg = path_join(root, "site.yaml");
        _cleanup_free_ char *tpl = path_join(root, "tpl/lua/cuda.lua.in");

        demo_build(root);
        fx_write(root, "site.yaml", "templates: tpl\n");
        fx_mkdir(root, "tpl/lua");
        for (size_t i = 0; t[i].what; i++) {
                struct run_result r = { 0 };
                _cleanup_free_ char *want = xasprintf("%s: %s", tpl, t[i].message);

                (void)unlink(tpl);
                if (streq(t[i].what, "fifo"))
                        ck_assert_int_eq(mkfifo(tpl, 0644), 0);
                else if (streq(t[i].what, "dangling"))
                        ck_assert_int_eq(symlink("nowhere.lua.in", tpl), 0);
                else
                        fx_write(root, "tpl/lua/cuda.lua.in", "");
                alarm(60); /* a blocked open fails the test */
                run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "-o", out, root, NULL },
                            false);
                alarm(0);
                ck_assert_msg(r.status == 2, "%s: exit %d: %s%s", t[i].what, r.status, r.out, r.err);
                ck_assert_msg(strstr(r.err, want), "%s: %s", t[i].what, r.err);
                ck_assert_int_eq(access(out, F_OK), -1);
                run_result_release(&r);
        }
        fx_free(root);
}
END_TEST

/* Every rendered file is parsed before any is written: one site template
 * that makes broken Lua or Tcl stops the run, naming the file, and not
 * even the modules of the other templates are written. */
START_TEST(generate_parses_every_file_before_writing_any)
{
        static const struct {
                const char *format, *file, *text, *message;
        } t[] = {
                { "lua", "tpl/lua/nccl.lua.in", "setenv(\"NCCL\" {{prefix}})\n", "does not parse as Lua" },
                { "tcl", "tpl/tcl/nccl.tcl.in", "#%Module\nproc p { } {\n    setenv NCCL {{prefix}}\n",
                  "does not parse as Tcl: missing close-brace" },
                { NULL },
        };
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *cfg = path_join(root, "site.yaml");

        demo_build(root);
        fx_write(root, "site.yaml", "templates: tpl\nlayout: flat\n");
        for (size_t i = 0; t[i].format; i++) {
                struct run_result r = { 0 };
                _cleanup_free_ char *file = xasprintf("%s/nccl/2.21.5%s:", out, streq(t[i].format, "lua") ? ".lua" : "");

                fx_write(root, t[i].file, t[i].text);
                run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "--format", t[i].format, "-o",
                                                       out, root, NULL },
                            false);
                ck_assert_msg(r.status == 2, "%s: exit %d: %s%s", t[i].format, r.status, r.out, r.err);
                ck_assert_msg(strstr(r.err, file) && strstr(r.err, t[i].message), "%s: %s", t[i].format, r.err);
                ck_assert_int_eq(access(out, F_OK), -1);
                run_result_release(&r);
        }
        fx_free(root);
}
END_TEST

START_TEST(generate_output_from_config_and_site_templates)
{
        char *root = fx_new();
        _cleanup_free_ char *cfg = path_join(root, "site.yaml"), *yaml = NULL, *text = NULL;
        _cleanup_free_ char *file = path_join(root, "out/cuda/12.9");
        struct run_result r = { 0 };

        demo_build(root);
        yaml = xasprintf("output: %s/out\nformat: tcl\nlayout: flat\nsearch: [%s/sw]\n"
                         "templates: tpl\n",
                         root, root);
        fx_write(root, "site.yaml", yaml);
        fx_write(root, "tpl/tcl/cuda.tcl.in", "#%Module\nsetenv SITE_CUDA {{prefix}}\n");
        run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        run_result_release(&r);
        text = read_text(file);
        {
                _cleanup_free_ char *want = xasprintf("#%%Module\nsetenv SITE_CUDA \"%s/sw/cuda-12.9\"\n", root);
                ck_assert_str_eq(text, want);
        }
        fx_free(root);
}
END_TEST

/* The body of a generated modulefile from its family line on, @P@ for
 * the NVSHMEM prefix. */
static char *module_body(const char *path, const char *prefix)
{
        _cleanup_free_ char *text = read_text(path);
        const char *family = strstr(text, "\nfamily");

        ck_assert_msg(family, "no family line in '%s'", path);
        return str_replace_all(family + 1, prefix, "@P@");
}

/* An NVSHMEM module's exact environment in the four flavours: NVSHMEM_HOME
 * (PyTorch, EasyBuild), USE_NVSHMEM, its lib/ on the library paths; below
 * CUDA/12 in the hierarchy, depending on a CUDA 12 cuda when flat. */
START_TEST(generate_nvshmem_module_environment)
{
        static const char *const want_lua =
                "pushenv(\"NVSHMEM_HOME\", \"@P@\")\n"
                "setenv(\"USE_NVSHMEM\", \"1\")\n"
                "prepend_path(\"LD_LIBRARY_PATH\", \"@P@/lib\")\n"
                "prepend_path(\"LIBRARY_PATH\", \"@P@/lib\")\n"
                "prepend_path(\"CPATH\", \"@P@/include\")\n"
                "prepend_path(\"CMAKE_PREFIX_PATH\", \"@P@\")\n";
        static const char *const want_tcl =
                "if {[info commands pushenv] eq \"\" || ([info exists ::ModuleTool] && $::ModuleTool eq \"Lmod\" &&\n"
                "        [package vcompare $::ModuleToolVersion 8.7.6] < 0)} {\n"
                "    setenv \"NVSHMEM_HOME\" \"@P@\"\n"
                "} else {\n"
                "    pushenv \"NVSHMEM_HOME\" \"@P@\"\n"
                "}\n"
                "setenv \"USE_NVSHMEM\" \"1\"\n"
                "prepend-path \"LD_LIBRARY_PATH\" \"@P@/lib\"\n"
                "prepend-path \"LIBRARY_PATH\" \"@P@/lib\"\n"
                "prepend-path \"CPATH\" \"@P@/include\"\n"
                "prepend-path \"CMAKE_PREFIX_PATH\" \"@P@\"\n";
        static const char *const tcl_prereq =
                "family \"nvshmem\"\n"
                "# Environment Modules: needs a cuda of this CUDA major (and unloads this\n"
                "# module with it). Lmod reading this file skips it: its hierarchy does that.\n"
                "if {![info exists ::ModuleTool] || $::ModuleTool ne \"Lmod\"} {\n"
                "    prereq \"cuda@12:12.999999\"\n"
                "}\n";
        char *root = fx_new();
        _cleanup_free_ char *prefix = path_join(root, "sw/libnvshmem-linux-x86_64-3.4.5_cuda12-archive");

        fx_cuda_toolkit(root, "sw/cuda-12.9",
                        &(struct fx_cuda){ .version = "12.9", .release = "12.9.1", .cudart = "12.9.79",
                                           .nvcc = "12.9.86" });
        fx_nvshmem(root, "sw/libnvshmem-linux-x86_64-3.4.5_cuda12-archive", &(struct fx_nvshmem){ .version = "3.4.5" });
        for (size_t i = 0; i < ELEMENTSOF(flavours); i++) {
                bool lua = streq(flavours[i][1], "lua"), hier = streq(flavours[i][2], "hierarchical");
                _cleanup_free_ char *out = path_join(root, flavours[i][0]);
                _cleanup_free_ char *file = xasprintf("%s/%snvshmem/3.4.5%s", out, hier ? "CUDA/12/" : "",
                                                      lua ? ".lua" : "");
                _cleanup_free_ char *body = NULL, *want = NULL;
                struct run_result r = { 0 };

                generate(root, out, flavours[i][1], flavours[i][2], &r);
                ck_assert_msg(r.status == 0, "%s: %s", flavours[i][0], r.err);
                run_result_release(&r);
                body = module_body(file, prefix);
                if (lua)
                        want = xasprintf("family(\"nvshmem\")\nadd_property(\"arch\", \"gpu\")\n%s%s",
                                         hier ? "" : "depends_on(between(\"cuda\", \"12\", \"12.999999\"))\n",
                                         want_lua);
                else
                        want = xasprintf("%s%s", tcl_prereq, want_tcl);
                ck_assert_msg(streq(body, want), "%s:\n%s\nwant:\n%s", flavours[i][0], body, want);
        }
        fx_free(root);
}
END_TEST

/* What the metadata fixture's package managers wrote, through generate:
 * the Spack NVSHMEM whose libraries name no CUDA gets CUDA 12.6.0 from its
 * spec.json, so a place below CUDA/12 in the hierarchy and, flat, a
 * depends_on a CUDA 12. With naming: easybuild, it and the EasyBuild
 * NVSHMEM whose easyconfig names CUDA 12.6.0 get one module each,
 * -CUDA-12.6.0, depending on exactly the Spack CUDA 12.6.0; an NVSHMEM
 * archive nothing names the CUDA of gets one per CUDA 12 toolkit; the
 * NVSHMEM of the truncated spec.json (its CUDA unknown) is left with a
 * warning, not the whole tree. */
START_TEST(generate_metadata_gives_the_cuda)
{
        static const char *const deps[] = { "depends_on", "prereq", NULL };
        static const struct {
                const char *file, *dep;
        } eb[] = {
                { "NVSHMEM/3.1.7-CUDA-12.6.0.lua", "depends_on(between(\"CUDA\", \"12.6.0\", \"12.6.0\"))\n" },
                { "NVSHMEM/3.2.5-CUDA-12.6.0.lua", "depends_on(between(\"CUDA\", \"12.6.0\", \"12.6.0\"))\n" },
                { "NVSHMEM/3.4.5-CUDA-12.6.0.lua", "depends_on(between(\"CUDA\", \"12.6.0\", \"12.6.0\"))\n" },
                { "NVSHMEM/3.4.5-CUDA-12.9.1.lua", "depends_on(between(\"CUDA\", \"12.9.1\", \"12.9.1\"))\n" },
        };
        const struct layout_fixture *f = layout_fixture_find("metadata");
        char *root = fx_new();
        _cleanup_free_ char *spack = path_join(root, "spack"), *easybuild = path_join(root, "easybuild");
        _cleanup_free_ char *apps = path_join(root, "apps"), *cfg = path_join(root, "eb.yaml");
        _cleanup_free_ char *hier = path_join(root, "hier"), *flat = path_join(root, "flat");
        _cleanup_free_ char *ebout = path_join(root, "eb"), *ebdir = path_join(ebout, "NVSHMEM");
        _cleanup_free_ char *lost = NULL;
        char *text, *got;
        struct strv files = { 0 };
        struct run_result r = { 0 };

        f->build(root);
        fx_nvshmem(root, "apps/libnvshmem-linux-x86_64-3.4.5_cuda12-archive", &(struct fx_nvshmem){ .version = "3.4.5" });
        fx_write(root, "eb.yaml", "naming: easybuild\nlayout: flat\n");

        run_cudamod(&r, (const char *const[]){ "generate", "-o", hier, "--layout", "hierarchical", spack,
                                              easybuild, NULL },
                    false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        run_result_release(&r);
        text = read_text_at(hier, "CUDA/12/nvshmem/3.1.7.lua");
        ck_assert(strstr(text, "nvshmem-3.1.7-1-k7qz3xvqmmb2fvmpyl4ld6hmxx3kbfzz/lib\""));
        free(text);

        run_cudamod(&r, (const char *const[]){ "generate", "-o", flat, "--layout", "flat", spack, easybuild,
                                              NULL },
                    false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        run_result_release(&r);
        text = read_text_at(flat, "nvshmem/3.1.7.lua");
        got = lines_starting(text, deps);
        ck_assert_str_eq(got, "depends_on(between(\"cuda\", \"12\", \"12.999999\"))\n");
        free(text);
        free(got);

        run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "-o", ebout, spack, easybuild, apps,
                                              NULL },
                    false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        lost = xasprintf("cudamod: nvshmem at '%s/opt/spack/linux-ubuntu22.04-zen2/gcc-12.3.0/"
                         "nvshmem-3.0.6-4-a2g3sd4lm5xw6fxq7eqlb4rr7mjsoqhv' gets no module: its naming "
                         "'{version_full}-CUDA-{cuda_full}' needs the CUDA it was built for, and that is "
                         "unknown\n",
                         spack);
        ck_assert_msg(strstr(r.err, lost), "%s", r.err);
        run_result_release(&r);
        list_files(ebdir, NULL, &files);
        ck_assert_uint_eq(files.len, ELEMENTSOF(eb) + 1);
        ck_assert_str_eq(files.items[0], ".modulerc.lua");
        for (size_t i = 0; i < ELEMENTSOF(eb); i++) {
                ck_assert_str_eq(files.items[i + 1], strchr(eb[i].file, '/') + 1);
                text = read_text_at(ebout, eb[i].file);
                got = lines_starting(text, deps);
                ck_assert_msg(streq(got, eb[i].dep), "%s:\n%s", eb[i].file, got);
                free(text);
                free(got);
        }
        strv_release(&files);
        fx_free(root);
}
END_TEST

/* --modulepath OUT, where OUT is the output directory of a hierarchical
 * tree (it holds the index) and not OUT/Core: show, validate and doctor
 * use its Core, with a note on stderr (-q: none). */
START_TEST(modulepath_of_the_output_directory_is_its_core)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *core = path_join(out, "Core"), *note = NULL, *lua = NULL, *mp = NULL;
        struct run_result r = { 0 };

        demo_build_core(root);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        note = xasprintf("cudamod: note: '%s' is the output directory of a tree cudamod generated; using its core "
                         "level '%s' (what `module use` takes)\n",
                         out, core);
        lua = xasprintf("%s/cuda/12.9.lua", core);
        mp = xasprintf("\"modulepath\": [\n    \"%s\"\n  ]", core);

        run_cudamod(&r, (const char *const[]){ "show", "--modulepath", out, "cuda/12.9", NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_str_eq(r.err, note);
        ck_assert_msg(strstr(r.out, lua), "%s", r.out);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "-q", "show", "--modulepath", out, "cuda/12.9", NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_str_eq(r.err, "");
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "validate", "--modulepath", out, "--no-compile", "--json", "cuda/12.9",
                                               NULL },
                    false);
        ck_assert_msg(strstr(r.err, note) == r.err && !strstr(r.err, "no modules"), "exit %d: %s", r.status, r.err);
        ck_assert_msg(strstr(r.out, "\"cuda/12.9\""), "%s", r.out);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "doctor", "--build", "--no-compile", "--json", "--modulepath", out,
                                               NULL },
                    false);
        ck_assert_str_eq(r.err, note);
        ck_assert_msg(strstr(r.out, mp), "%s", r.out);
        run_result_release(&r);
        /* From Core, cudnn is behind the cuda modules: show names them, as
         * `module spider` does; a name nowhere gets no such line. */
        {
                _cleanup_free_ char *want = xasprintf("cudamod: module 'cudnn' not found in the modulepath (%s)\n"
                                                      "cudamod: cudnn/8.9.7 is behind cuda/11.8: module load "
                                                      "cuda/11.8 first\n"
                                                      "cudamod: cudnn/9.7.1 is behind cuda/12.9: module load "
                                                      "cuda/12.9 first\n",
                                                      core);

                run_cudamod(&r, (const char *const[]){ "show", "--modulepath", core, "cudnn", NULL }, false);
                ck_assert_int_eq(r.status, 2);
                ck_assert_str_eq(r.err, want);
                run_result_release(&r);
                run_cudamod(&r, (const char *const[]){ "show", "--modulepath", core, "cuda/12.9", "cudnn/9.7",
                                                       NULL },
                            false);
                ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
                run_result_release(&r);
                run_cudamod(&r, (const char *const[]){ "show", "--modulepath", core, "cuda/11.8", "cudnn/9",
                                                       NULL },
                            false);
                ck_assert_int_eq(r.status, 2);
                ck_assert_msg(strstr(r.err, "\ncudamod: cudnn/9.7.1 is behind cuda/12.9: module load cuda/12.9 "
                                            "first\n") && !strstr(r.err, "8.9.7"),
                              "%s", r.err);
                run_result_release(&r);
                run_cudamod(&r, (const char *const[]){ "show", "--modulepath", core, "cudn", NULL }, false);
                ck_assert_int_eq(r.status, 2);
                ck_assert_msg(!strstr(r.err, "behind"), "%s", r.err);
                run_result_release(&r);
        }
        /* OUT/Core itself, as before: no note. */
        run_cudamod(&r, (const char *const[]){ "show", "--modulepath", core, "cuda/12.9", NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_str_eq(r.err, "");
        run_result_release(&r);
        fx_free(root);
}
END_TEST

static char *snapshot(const char *dir);

/* A root listed that does not exist is a usage error (exit 2, nothing
 * written or pruned); one the config marks optional is skipped, and with
 * --prune still refused: it may be an unmounted filesystem. */
START_TEST(generate_prune_refuses_when_a_named_root_is_missing)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *gone = path_join(root, "apps"), *other = path_join(root, "mf2");
        _cleanup_free_ char *cuda = path_join(out, "Core/cuda/12.9.lua");
        _cleanup_free_ char *conf = path_join(root, "optional.yaml"), *text = NULL, *want = NULL;
        _cleanup_free_ char *before = NULL, *after = NULL;
        struct run_result r = { 0 };

        demo_build_core(root);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        before = snapshot(out);
        want = xasprintf("cudamod: root '%s' does not exist (a typo, or a filesystem not mounted?); where it "
                         "may be absent, list it in the config's search as {path: %s, optional: true}\n",
                         gone, gone);
        for (int prune = 0; prune < 2; prune++) {
                run_cudamod(&r, (const char *const[]){ "generate", prune ? "--prune" : "-o", prune ? "-o" : out,
                                                       prune ? out : gone, prune ? gone : NULL, NULL },
                            false);
                ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
                ck_assert_str_eq(r.err, want);
                run_result_release(&r);
        }
        after = snapshot(out);
        ck_assert_str_eq(after, before);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", other, sw, gone, NULL }, false);
        ck_assert_int_eq(r.status, 2);
        run_result_release(&r);
        ck_assert_int_eq(access(other, F_OK), -1);
        run_cudamod(&r, (const char *const[]){ "scan", gone, NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.err, want);
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);

        text = xasprintf("search: ['%s', {path: '%s', optional: true}]\n", sw, gone);
        fx_write(root, "optional.yaml", text);
        run_cudamod(&r, (const char *const[]){ "--config", conf, "scan", NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_str_eq(r.err, "");
        ck_assert_msg(strstr(r.out, "12.9"), "%s", r.out);
        run_result_release(&r);
        /* An optional root that is gone, with --prune: nothing is pruned,
         * exit 1 (it may be an unmounted filesystem). */
        run_cudamod(&r, (const char *const[]){ "--config", conf, "generate", "--prune", "-o", out, gone, NULL },
                    false);
        ck_assert_int_eq(r.status, 1);
        ck_assert_ptr_nonnull(strstr(r.err, "not pruning"));
        run_result_release(&r);
        ck_assert_int_eq(access(cuda, F_OK), 0);
        /* Without --prune the files are kept and reported stale. */
        run_cudamod(&r, (const char *const[]){ "--config", conf, "-q", "generate", "-o", out, gone, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "9 stale (--prune removes them)"));
        run_result_release(&r);
        ck_assert_int_eq(access(cuda, F_OK), 0);
        fx_free(root);
}
END_TEST

static int chown_nobody(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        return lchown(path, 65534, 65534);
}

/* Every regular file below dir with its content, "path\ncontent\n..." */
static char *snapshot(const char *dir)
{
        struct strv files = { 0 };
        struct strbuf sb = STRBUF_INIT;

        list_files(dir, NULL, &files);
        for (size_t i = 0; i < files.len; i++) {
                _cleanup_free_ char *p = path_join(dir, files.items[i]);
                _cleanup_free_ char *text = read_text(p);

                strbuf_addf(&sb, "%s\n%s\n", files.items[i], text);
        }
        strv_release(&files);
        return strbuf_detach(&sb);
}

/* A directory under a root that the scan cannot read (mode 000, as
 * nobody; one of too many entries, as root) makes the installs below it
 * look gone: --prune refuses, exit 1, naming it, also with -q, and
 * removes nothing. */
START_TEST(generate_prune_refuses_after_an_incomplete_scan)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *cuda = path_join(sw, "cuda-12.9"), *big = path_join(sw, "scratch");
        _cleanup_free_ char *before = NULL, *after = NULL, *want = NULL;
        struct run_result r = { 0 };

        demo_build(root);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        before = snapshot(out);

        if (can_drop_privileges()) {
                ck_assert_int_eq(chmod(cuda, 0), 0);
                run_cudamod(&r, (const char *const[]){ "-q", "generate", "--prune", "-o", out, sw, NULL }, true);
                ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
                want = xasprintf("not pruning: the scan could not read '%s': Permission denied", cuda);
                ck_assert_msg(strstr(r.err, want), "%s", r.err);
                ck_assert_str_eq(r.out, "");
                run_result_release(&r);
                after = snapshot(out);
                ck_assert_str_eq(after, before);
                ck_assert_int_eq(chmod(cuda, 0755), 0);
                free(want);
                free(after);
        }
        /* As root, who reads anything: a directory too big to list. */
        fx_mkdir(root, "sw/scratch");
        fx_many_files(big, 0, WALK_MAX_ENTRIES + 1);
        run_cudamod(&r, (const char *const[]){ "-q", "generate", "--prune", "--force", "-o", out, sw, NULL },
                    false);
        ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
        want = xasprintf("not pruning: the scan could not read '%s': more than 100000 entries", big);
        ck_assert_msg(strstr(r.err, want), "%s", r.err);
        run_result_release(&r);
        after = snapshot(out);
        ck_assert_str_eq(after, before);
        fx_free(root);
}
END_TEST

#define DEMO_NCCL "nccl_2.21.5-1+cuda12.4_x86_64"

/* A root that is an empty directory while the index records modules from
 * it (a mount point whose filesystem is missing: the usual state) is not
 * read: --prune refuses, exit 1, naming it, and a warning names the
 * modules kept; without --prune they are kept too. An empty root the
 * index records nothing from is only empty. */
START_TEST(generate_prune_keeps_the_modules_of_an_empty_root)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *apps = path_join(root, "apps"), *empty = path_join(root, "empty");
        _cleanup_free_ char *from = path_join(sw, DEMO_NCCL), *to = path_join(apps, DEMO_NCCL);
        _cleanup_free_ char *away = path_join(root, DEMO_NCCL);
        _cleanup_free_ char *nccl = path_join(out, "CUDA/12/nccl/2.21.5.lua");
        _cleanup_free_ char *before = NULL, *after = NULL, *want = NULL, *kept = NULL;
        struct run_result r = { 0 };

        demo_build_core(root);
        fx_mkdir(root, "apps");
        fx_mkdir(root, "empty");
        ck_assert_int_eq(rename(from, to), 0);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, apps, NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        run_result_release(&r);
        ck_assert_int_eq(access(nccl, F_OK), 0);
        before = snapshot(out);

        /* Its mount is gone: apps is an empty directory. One of the five
         * modules would go, fewer than half: only the root tells. */
        ck_assert_int_eq(rename(to, away), 0);
        run_cudamod(&r, (const char *const[]){ "generate", "--prune", "-o", out, sw, apps, NULL }, false);
        ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
        want = xasprintf("not pruning: the scan could not read '%s': an empty directory, but the index "
                         "records modules from it", apps);
        ck_assert_msg(strstr(r.err, want), "%s", r.err);
        kept = xasprintf("'%s' is an empty directory, but the index of '%s' records 1 module from it "
                         "('CUDA/12/nccl/2.21.5'): an unmounted mount point looks like that; not read, it is "
                         "kept as it is", apps, out);
        ck_assert_msg(strstr(r.err, kept), "%s", r.err);
        run_result_release(&r);
        after = snapshot(out);
        ck_assert_str_eq(after, before);
        free(after);

        /* Without --prune: kept, the same warning, exit 0. */
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, apps, NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_msg(strstr(r.err, kept), "%s", r.err);
        run_result_release(&r);
        after = snapshot(out);
        ck_assert_str_eq(after, before);

        /* Mounted again, beside an empty root of which the index records
         * nothing: a complete scan, nothing to prune, no warning. */
        ck_assert_int_eq(rename(away, to), 0);
        run_cudamod(&r, (const char *const[]){ "generate", "--prune", "-o", out, sw, apps, empty, NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_msg(!strstr(r.err, "empty directory"), "%s", r.err);
        run_result_release(&r);
        ck_assert_int_eq(access(nccl, F_OK), 0);
        fx_free(root);
}
END_TEST

/* A root the config marks a mount (search: [{path: DIR, mount: true}])
 * that is not a mount point is not read, even when it holds files (the
 * mount point's own directory may hold stale ones): its modules are kept,
 * a warning says why, and --prune refuses. */
START_TEST(generate_mount_root_that_is_not_mounted_is_not_read)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *plain = path_join(root, "plain.yaml"), *mount = path_join(root, "mount.yaml");
        _cleanup_free_ char *cuda = path_join(out, "Core/cuda/12.9.lua");
        _cleanup_free_ char *before = NULL, *after = NULL, *want = NULL, *text = NULL;
        struct run_result r = { 0 };

        demo_build_core(root);
        text = xasprintf("search: ['%s']\n", sw);
        fx_write(root, "plain.yaml", text);
        free(text);
        text = xasprintf("search:\n  - {path: '%s', mount: true}\n", sw);
        fx_write(root, "mount.yaml", text);
        run_cudamod(&r, (const char *const[]){ "--config", plain, "generate", "-o", out, NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        run_result_release(&r);
        before = snapshot(out);

        want = xasprintf("'%s' is not a mount point, but the config's search says it is one "
                         "(mount: true): is its filesystem mounted? skipping", sw);
        run_cudamod(&r, (const char *const[]){ "--config", mount, "generate", "--prune", "-o", out, NULL },
                    false);
        ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
        ck_assert_msg(strstr(r.err, want), "%s", r.err);
        ck_assert_msg(strstr(r.err, "not pruning: the scan could not read '") &&
                      strstr(r.err, "': not a mount point (search: mount: true)"), "%s", r.err);
        run_result_release(&r);
        after = snapshot(out);
        ck_assert_str_eq(after, before);
        free(after);

        /* Without --prune: nothing is rewritten from what it holds, the
         * modules are kept, exit 0. */
        run_cudamod(&r, (const char *const[]){ "--config", mount, "generate", "-o", out, NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_msg(strstr(r.err, want), "%s", r.err);
        run_result_release(&r);
        after = snapshot(out);
        ck_assert_str_eq(after, before);
        ck_assert_int_eq(access(cuda, F_OK), 0);

        /* scan says so too, and lists it unread. */
        run_cudamod(&r, (const char *const[]){ "--config", mount, "scan", "--json", NULL }, false);
        ck_assert_msg(strstr(r.out, "not a mount point (search: mount: true)"), "%s", r.out);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* A prune that would remove more than half of the tree's modules is
 * refused with the count, and done with --force. */
START_TEST(generate_prune_of_most_modules_needs_force)
{
        static const char *const gone[] = {
                "cuda-12.9", "cudnn-linux-x86_64-9.7.1.26_cuda12-archive",
                "cudnn-linux-x86_64-8.9.7.29_cuda11-archive", "nccl_2.21.5-1+cuda12.4_x86_64",
        };
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw"), *moved = path_join(root, "moved");
        _cleanup_free_ char *cuda = path_join(out, "Core/cuda/12.9.lua");
        struct run_result r = { 0 };

        demo_build_core(root);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        fx_mkdir(root, "moved");
        for (size_t i = 0; i < ELEMENTSOF(gone); i++) {
                _cleanup_free_ char *from = path_join(sw, gone[i]), *to = path_join(moved, gone[i]);
                ck_assert_int_eq(rename(from, to), 0);
        }
        run_cudamod(&r, (const char *const[]){ "-q", "generate", "--prune", "-o", out, sw, NULL }, false);
        ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
        ck_assert_msg(strstr(r.err, "not pruning: 4 of the 5 modules in '") && strstr(r.err, "--force prunes them"),
                      "%s", r.err);
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);
        ck_assert_int_eq(access(cuda, F_OK), 0);
        run_cudamod(&r, (const char *const[]){ "generate", "--prune", "--force", "-o", out, sw, NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_msg(strstr(r.out, "pruned       Core/cuda/12.9.lua\n"), "%s", r.out);
        run_result_release(&r);
        ck_assert_int_ne(access(cuda, F_OK), 0);
        fx_free(root);
}
END_TEST

/* A partly unreadable CUDA (its lib64/ or bin/ mode 000, as nobody) is
 * neither rewritten from half its facts nor dropped from the default:
 * its modulefile and the modulerc stay as they are, reported held. */
START_TEST(generate_partly_unreadable_install_keeps_its_module_and_the_default)
{
        static const char *const subdirs[] = { "lib64", "bin" };
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *before = NULL;
        struct run_result r = { 0 };

        if (!can_drop_privileges()) {
                fx_free(root);
                return;
        }
        demo_build(root);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        ck_assert_int_eq(nftw(out, chown_nobody, 16, FTW_PHYS), 0);
        before = snapshot(out);
        for (size_t i = 0; i < ELEMENTSOF(subdirs); i++) {
                _cleanup_free_ char *dir = xasprintf("%s/cuda-12.9/%s", sw, subdirs[i]);
                _cleanup_free_ char *after = NULL, *want = NULL;

                ck_assert_int_eq(chmod(dir, 0), 0);
                run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, true);
                ck_assert_msg(r.status == 0, "%s: exit %d: %s", subdirs[i], r.status, r.err);
                ck_assert_msg(strstr(r.out, " held (their install was not read whole)"), "%s: %s", subdirs[i], r.out);
                want = xasprintf("the scan could not read '%s'", dir);
                ck_assert_msg(strstr(r.err, want), "%s: %s", subdirs[i], r.err);
                run_result_release(&r);
                after = snapshot(out);
                ck_assert_msg(streq(after, before), "%s: the tree changed", subdirs[i]);
                ck_assert_int_eq(chmod(dir, 0755), 0);
        }
        fx_free(root);
}
END_TEST

/* The lock file is 0600 (one left 0644 by an earlier version is
 * tightened), so another user cannot open it to hold every run off. */
START_TEST(generate_lock_file_is_private)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *lock = path_join(out, ".cudamod.lock");
        struct run_result r = { 0 };
        struct stat st;
        int status;
        pid_t pid;

        demo_build(root);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
        ck_assert_int_eq(stat(lock, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        ck_assert_int_eq(chmod(lock, 0644), 0);
        run_cudamod(&r, (const char *const[]){ "generate", "--check", "-o", out, sw, NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        run_result_release(&r);
        ck_assert_int_eq(stat(lock, &st), 0);
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        if (!can_drop_privileges()) {
                fx_free(root);
                return;
        }
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd;

                if (setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(3);
                fd = open(lock, O_RDONLY | O_CLOEXEC);
                _exit(fd < 0 && errno == EACCES ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "nobody can open the lock file");
        fx_free(root);
}
END_TEST

/* Every regular file and directory below dir has the mode files (or
 * directories) must have; the lock file is 0600. */
static int want_file_mode, want_dir_mode;
static int check_mode_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)ftw;
        if (flag == FTW_D)
                ck_assert_msg((int)(st->st_mode & 07777) == want_dir_mode, "%s: %04o", path,
                              (unsigned)(st->st_mode & 07777));
        else if (S_ISREG(st->st_mode) && !strstr(path, "/.cudamod.lock"))
                ck_assert_msg((int)(st->st_mode & 07777) == want_file_mode, "%s: %04o", path,
                              (unsigned)(st->st_mode & 07777));
        return 0;
}

/* Root's cron under umask 077: generate still writes 0644 files and 0755
 * directories (users load the modules); output_mode "0640" gives 0640 and
 * 0750; one no other user can read is written with a warning. */
START_TEST(generate_modes_do_not_follow_the_umask)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *out2 = path_join(root, "mf2"), *out3 = path_join(root, "mf3");
        _cleanup_free_ char *cfg = path_join(root, "site.yaml"), *cfg3 = path_join(root, "private.yaml");
        struct run_result r = { 0 };
        mode_t old;

        demo_build(root);
        fx_write(root, "site.yaml", "output_mode: \"0640\"\n");
        fx_write(root, "private.yaml", "output_mode: \"0600\"\n");
        old = umask(077);
        run_cudamod(&r, (const char *const[]){ "generate", "-o", out, sw, NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "--config", cfg, "generate", "-o", out2, sw, NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_ptr_null(strstr(r.err, "output_mode"));
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "--config", cfg3, "generate", "-o", out3, sw, NULL }, false);
        umask(old);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.err, "output_mode is 0600: no user but the owner of '") &&
                      strstr(r.err, "can read, so load, its modules"), "%s", r.err);
        run_result_release(&r);
        want_file_mode = 0644;
        want_dir_mode = 0755;
        ck_assert_int_eq(nftw(out, check_mode_entry, 16, FTW_PHYS), 0);
        want_file_mode = 0640;
        want_dir_mode = 0750;
        ck_assert_int_eq(nftw(out2, check_mode_entry, 16, FTW_PHYS), 0);
        want_file_mode = 0600;
        want_dir_mode = 0700;
        ck_assert_int_eq(nftw(out3, check_mode_entry, 16, FTW_PHYS), 0);
        fx_free(root);
}
END_TEST

/* A held lock: generate, --check and --dry-run wait --lock-timeout
 * seconds, saying who holds it (not "another cudamod run": it is not one),
 * then exit 1 with the holder's PID, having written nothing. */
START_TEST(generate_lock_timeout_names_the_holder)
{
        static const char *const modes[] = { "--force", "--check", "--dry-run" };
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "mf"), *sw = path_join(root, "sw");
        _cleanup_free_ char *lock = path_join(out, ".cudamod.lock"), *cuda = path_join(out, "Core/cuda/12.9.lua");
        _cleanup_free_ char *waits = NULL, *gave_up = NULL;
        struct run_result r = { 0 };
        int status;
        pid_t pid;

        demo_build(root);
        fx_mkdir(root, "mf");
        pid = hold_lock(lock);
        waits = xasprintf("cudamod: '%s' is locked by PID %ld (", lock, (long)pid);
        gave_up = xasprintf("'%s' is still locked by PID %ld (", lock, (long)pid);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                run_cudamod(&r, (const char *const[]){ "generate", modes[i], "--lock-timeout", "1", "-o", out, sw, NULL },
                            false);
                ck_assert_msg(r.status == 1, "%s: status %d: %s", modes[i], r.status, r.err);
                ck_assert_msg(strstr(r.err, waits) && strstr(r.err, "waiting (at most 1 s"), "%s: %s", modes[i], r.err);
                ck_assert_msg(strstr(r.err, gave_up) && strstr(r.err, "after 1 s"), "%s: %s", modes[i], r.err);
                ck_assert_msg(!strstr(r.err, "another cudamod run"), "%s: %s", modes[i], r.err);
                ck_assert_str_eq(r.out, "");
                run_result_release(&r);
                ck_assert_int_ne(access(cuda, F_OK), 0);
        }
        run_cudamod(&r, (const char *const[]){ "generate", "--lock-timeout", "soon", "-o", out, sw, NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, "--lock-timeout takes seconds"), "%s", r.err);
        run_result_release(&r);
        kill(pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        fx_free(root);
}
END_TEST

START_TEST(scan_reads_search_and_exclude_from_the_config)
{
        char *root = fx_new();
        _cleanup_free_ char *cfg = path_join(root, "site.yaml"), *yaml = NULL;
        struct run_result r = { 0 };

        demo_build(root);
        yaml = xasprintf("search: [%s/sw]\nexclude: ['*/cuda-11.8']\n", root);
        fx_write(root, "site.yaml", yaml);
        run_cudamod(&r, (const char *const[]){ "--config", cfg, "scan", NULL }, false);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "/sw/cuda-12.9\n"));
        ck_assert_ptr_null(strstr(r.out, "/sw/cuda-11.8"));
        run_result_release(&r);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("generate");
        TCase *tc = tcase_create("generate");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, generate_reference_tree_matches_modulefiles);
        tcase_add_test(tc, generate_rerun_changes_nothing);
        tcase_add_test(tc, generate_family_conflicts_and_toolkit_extensions);
        tcase_add_test(tc, generate_refuses_to_write_among_another_tools_modules);
        tcase_add_test(tc, generate_warns_about_an_orphan_level);
        tcase_add_test(tc, generate_cudss_module_environment);
        tcase_add_test(tc, generate_json_describes_the_run);
        tcase_add_test(tc, generate_usage_and_config_errors_write_nothing);
        tcase_add_test(tc, generate_output_from_config_and_site_templates);
        tcase_add_test(tc, generate_nvshmem_module_environment);
        tcase_add_test(tc, generate_metadata_gives_the_cuda);
        tcase_add_test(tc, generate_refuses_a_control_character_in_cuda_arch_list);
        tcase_add_test(tc, generate_refuses_a_hostile_arch_list_from_the_index);
        tcase_add_test(tc, generate_refuses_unusable_site_templates);
        tcase_add_test(tc, generate_parses_every_file_before_writing_any);
        tcase_add_test(tc, generate_prune_refuses_when_a_named_root_is_missing);
        tcase_add_test(tc, modulepath_of_the_output_directory_is_its_core);
        tcase_add_test(tc, generate_prune_refuses_after_an_incomplete_scan);
        tcase_add_test(tc, generate_prune_keeps_the_modules_of_an_empty_root);
        tcase_add_test(tc, generate_mount_root_that_is_not_mounted_is_not_read);
        tcase_add_test(tc, generate_prune_of_most_modules_needs_force);
        tcase_add_test(tc, generate_partly_unreadable_install_keeps_its_module_and_the_default);
        tcase_add_test(tc, generate_lock_file_is_private);
        tcase_add_test(tc, generate_modes_do_not_follow_the_umask);
        tcase_add_test(tc, generate_lock_timeout_names_the_holder);
        tcase_add_test(tc, scan_reads_search_and_exclude_from_the_config);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
