/* test-scan.c: `cudamod scan` end to end, as a user runs it: the JSON of
 * every layout fixture against its golden file, the table, hostile trees,
 * and the real CUDA 13.0 install when the machine has one. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "component-cuda.h"
#include "component-cudnn.h"
#include "component-nccl.h"
#include "component-table.h"
#include "demo.h"
#include "fixture.h"
#include "scanhelp.h"
#include "layouts.h"
#include "scan.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "walk.h"

/* Run scan --json on the fixture's roots; return the output with the
 * fixture root replaced by @ROOT@. */
static char *scan_json(const char *root, const char *const *rel_roots, struct run_result *r)
{
        const char *argv[8] = { "scan", "--json" };
        char *abs[6] = { 0 };
        size_t n = 2;

        for (size_t i = 0; rel_roots[i] && i < 5; i++) {
                abs[i] = path_join(root, rel_roots[i]);
                argv[n++] = abs[i];
        }
        argv[n] = NULL;
        run_cudamod(r, argv, false);
        for (size_t i = 0; abs[i]; i++)
                free(abs[i]);
        return str_replace_all(r->out, root, "@ROOT@");
}

static json_t *parse(const char *text)
{
        json_error_t err;
        json_t *j = json_loads(text, 0, &err);

        ck_assert_msg(j != NULL, "invalid JSON at %d:%d: %s\n%.2000s", err.line, err.column, err.text, text);
        return j;
}

START_TEST(scan_layout_matches_golden)
{
        const struct layout_fixture *f = &layout_fixtures[_i];
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *out = NULL, *golden = NULL;
        json_t *j;

        f->build(root);
        out = scan_json(root, f->roots, &r);
        ck_assert_msg(r.status == 0, "%s: exit %d: %s", f->name, r.status, r.err);
        ck_assert_msg(r.err[0] == '\0', "%s: unexpected stderr: %s", f->name, r.err);
        j = parse(out);
        ck_assert_str_eq(json_string_value(json_object_get(j, "cudamod")), "scan");
        ck_assert_int_eq(json_integer_value(json_object_get(j, "format")), 1);
        ck_assert_int_gt(json_array_size(json_object_get(j, "installs")), 0);
        json_decref(j);
        golden = xasprintf("scan-%s.json", f->name);
        assert_golden(golden, out);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* The same tree scanned twice gives byte-identical output. */
/* exclude.<component>: an install of that component whose prefix matches
 * is left out; another component in the same tree, and the same
 * component elsewhere, stay. */
START_TEST(scan_leaves_out_the_installs_a_component_excludes)
{
        char *root = fx_new();
        _cleanup_free_ char *sw = path_join(root, "sw");
        _cleanup_free_ char *pattern = path_join(root, "sw/cudnn-*8.9.7*");
        const char *roots[] = { sw };
        struct strv excl[N_COMPONENTS] = { { 0 } };
        struct scan_result r = { 0 };
        struct diag d = DIAG_INIT;

        demo_build(root);
        strv_add(&excl[component_cudnn.index], pattern);
        /* A pattern of another component does not touch cuDNN. */
        strv_add(&excl[component_nccl.index], pattern);
        ck_assert_int_eq(scan_run(&(struct scan_options){ .roots = roots, .n_roots = 1, .exclude_installs = excl },
                                  &r, &d), 0);
        ck_assert_uint_eq(count_component(&r, &component_cudnn), 1);
        ck_assert_ptr_nonnull(find(&r, &component_cudnn, "cudnn-linux-x86_64-9.7.1.26_cuda12-archive"));
        ck_assert_uint_eq(count_component(&r, &component_cuda), 2);
        ck_assert_uint_eq(count_component(&r, &component_nccl), 1);
        scan_result_release(&r);
        for (size_t i = 0; i < N_COMPONENTS; i++)
                strv_release(&excl[i]);
        diag_release(&d);
        fx_free(root);
}
END_TEST

START_TEST(scan_output_is_deterministic)
{
        char *root = fx_new();
        struct run_result a = { 0 }, b = { 0 };
        const char *const roots[] = { "usr/local", "apps", NULL };

        layout_fixture_find("runfile")->build(root);
        layout_fixture_find("cudnn-tarballs")->build(root);
        free(scan_json(root, roots, &a));
        free(scan_json(root, roots, &b));
        ck_assert_str_eq(a.out, b.out);
        run_result_release(&a);
        run_result_release(&b);
        fx_free(root);
}
END_TEST

/* A component name longer than the header ("cusparselt") widens the
 * first column for every row, so the columns stay aligned. */
START_TEST(scan_table_columns_fit_the_longest_component_name)
{
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *sw = path_join(root, "sw"), *out = NULL;

        demo_build(root);
        run_cudamod(&r, (const char *const[]){ "--color=never", "scan", sw, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        out = str_replace_all(r.out, root, "@ROOT@");
        ck_assert_msg(startswith(out, "COMPONENT  VERSION "), "header:\n%s", out);
        ck_assert_msg(strstr(out, "\ncusparselt 0.8.1.1 "), "cusparselt row:\n%s", out);
        ck_assert_msg(strstr(out, "\ncuda       12.9 (12.9.1) "), "cuda row:\n%s", out);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(scan_table_lists_each_install_once_with_aliases)
{
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *local = NULL, *out = NULL;

        layout_fixture_find("runfile")->build(root);
        local = path_join(root, "usr/local");
        run_cudamod(&r, (const char *const[]){ "--color=never", "scan", local, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        out = str_replace_all(r.out, root, "@ROOT@");
        ck_assert_msg(strstr(out, "COMPONENT VERSION") == out, "no header:\n%s", out);
        ck_assert_msg(strstr(out, "cuda      12.4 (12.4.1)      12    x86_64  toolkit  @ROOT@/usr/local/cuda-12.4\n"),
                      "row missing:\n%s", out);
        ck_assert_msg(strstr(out, "aliases    @ROOT@/etc/alternatives/cuda\n"), "chain link missing:\n%s", out);
        ck_assert_msg(strstr(out, "@ROOT@/usr/local/cuda\n"), "alias missing:\n%s", out);
        ck_assert_msg(strstr(out, "@ROOT@/usr/local/cuda-12\n"), "major link missing:\n%s", out);
        /* Once: the prefix appears as a row exactly one time. */
        ck_assert_ptr_eq(strstr(strstr(out, "toolkit") + 1, "toolkit"), NULL);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(scan_empty_root_says_nothing_found)
{
        char *root = fx_new();
        struct run_result r = { 0 };

        run_cudamod(&r, (const char *const[]){ "scan", root, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_str_eq(r.out, "no CUDA, cuDNN, NCCL, cuSPARSELt, cuDSS, NVSHMEM, MAGMA or cuTENSOR installation found\n");
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "scan", "--json", root, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_str_eq(r.out, "{\n  \"cudamod\": \"scan\",\n  \"format\": 1,\n  \"installs\": [],\n  \"unread\": []\n}\n");
        run_result_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(scan_missing_root_is_an_error)
{
        static const char want[] = "cudamod: root '/nonexistent/cudamod-root' does not exist (a typo, or a "
                                   "filesystem not mounted?); where it may be absent, list it in the config's "
                                   "search as {path: /nonexistent/cudamod-root, optional: true}\n";
        struct run_result r = { 0 };

        run_cudamod(&r, (const char *const[]){ "scan", "/nonexistent/cudamod-root", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.err, want);
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "-q", "scan", "--json", "/nonexistent/cudamod-root", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.err, want);
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);
}
END_TEST

/* Symlink loops and a link to the parent end the walk there, with a
 * warning for a loop, and the installs beside them are still found. */
START_TEST(scan_survives_symlink_loops)
{
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *out = NULL;
        const char *const roots[] = { "usr/local", NULL };
        json_t *j;

        layout_fixture_find("runfile")->build(root);
        fx_symlink(root, "usr/local/loop-a", "loop-b");
        fx_symlink(root, "usr/local/loop-b", "loop-a");
        fx_symlink(root, "usr/local/self", "self");
        fx_symlink(root, "usr/local/cuda-12.4/targets/up", "../..");
        fx_mkdir(root, "usr/local/deep/er");
        fx_symlink(root, "usr/local/deep/er/back", "../../deep");
        out = scan_json(root, roots, &r);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.err, "symlink loop at '") && strstr(r.err, "loop-a', skipping"),
                      "no loop warning: %s", r.err);
        ck_assert_msg(strstr(r.err, "self', skipping"), "no self-loop warning: %s", r.err);
        j = parse(out);
        ck_assert_int_eq(json_array_size(json_object_get(j, "installs")), 1);
        json_decref(j);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* An unreadable directory is skipped with a warning; the rest is found. */
START_TEST(scan_skips_unreadable_directories)
{
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *secret = NULL, *out = NULL;
        const char *const roots[] = { "apps", NULL };
        json_t *j;

        layout_fixture_find("cudnn-tarballs")->build(root);
        fx_cudnn(root, "apps/secret/cudnn-9.2", &(struct fx_cudnn){ .version = "9.2.0", .cuda_major = 12 });
        secret = path_join(root, "apps/secret");
        ck_assert_int_eq(chmod(secret, 0), 0);
        {
                const char *argv[] = { "scan", "--json", NULL, NULL };
                _cleanup_free_ char *apps = path_join(root, roots[0]);
                argv[2] = apps;
                run_cudamod(&r, argv, true);
        }
        out = str_replace_all(r.out, root, "@ROOT@");
        ck_assert_msg(r.status == 0, "exit %d: %.2000s", r.status, r.err);
        ck_assert_msg(strstr(r.err, "cannot open directory '") && strstr(r.err, "apps/secret': Permission denied, skipping"),
                      "no warning: %s", r.err);
        j = parse(out);
        ck_assert_int_eq(json_array_size(json_object_get(j, "installs")), 6);
        /* The JSON says the list may be short, and where. */
        {
                const json_t *unread = json_object_get(j, "unread");

                ck_assert_msg(json_array_size(unread) == 1, "unread: %.2000s", out);
                ck_assert_str_eq(json_string_value(json_object_get(json_array_get(unread, 0), "path")),
                                 "@ROOT@/apps/secret");
                ck_assert_str_eq(json_string_value(json_object_get(json_array_get(unread, 0), "why")),
                                 "Permission denied");
        }
        json_decref(j);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

static const json_t *find_install(const json_t *doc, const char *component, const char *prefix_suffix)
{
        const json_t *installs = json_object_get(doc, "installs");
        size_t i;
        const json_t *in;

        json_array_foreach(installs, i, in) {
                const char *c = json_string_value(json_object_get(in, "component"));
                const char *p = json_string_value(json_object_get(in, "prefix"));
                if (streq(c, component) && endswith(p, prefix_suffix))
                        return in;
        }
        return NULL;
}

static bool has_problem(const json_t *in, const char *code)
{
        size_t i;
        const json_t *p;

        json_array_foreach(json_object_get(in, "problems"), i, p)
                if (streq(json_string_value(json_object_get(p, "code")), code))
                        return true;
        return false;
}

/* Broken installs are reported with their problems, never crash the scan,
 * and leave the healthy installs beside them untouched. */
START_TEST(scan_reports_broken_installs_as_problems)
{
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *out = NULL;
        const char *const roots[] = { "apps", NULL };
        const json_t *in;
        json_t *j;

        fx_cuda_toolkit(root, "apps/good-12.4", &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                                  .cudart = "12.4.127", .nvcc = "12.4.131" });
        fx_cuda_toolkit(root, "apps/truncated", &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                                  .cudart = "12.4.127", .nvcc = "12.4.131" });
        fx_write(root, "apps/truncated/version.json", "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"vers");
        fx_cuda_toolkit(root, "apps/notjson", &(struct fx_cuda){ .version = "12.2", .release = "12.2.0",
                                                                .cudart = "12.2.53", .nvcc = "12.2.91" });
        fx_write(root, "apps/notjson/version.json", "CUDA Version 12.2.0\n");
        fx_cuda_toolkit(root, "apps/textlib", &(struct fx_cuda){ .version = "12.1", .release = "12.1.0",
                                                                .cudart = "12.1.55", .nvcc = "12.1.66" });
        fx_write(root, "apps/textlib/targets/x86_64-linux/lib/libcudart.so.12.1.55", "this is not ELF\n");
        fx_cuda_toolkit(root, "apps/elf32", &(struct fx_cuda){ .version = "12.3", .release = "12.3.0",
                                                              .cudart = "12.3.52", .nvcc = "12.3.52" });
        fx_elf(root, "apps/elf32/targets/x86_64-linux/lib/libcudart.so.12.3.52",
               &(struct elfstub){ .elf32 = true, .soname = "libcudart.so.12" });
        fx_cuda_toolkit(root, "apps/disagree", &(struct fx_cuda){ .version = "12.5", .release = "12.5.0",
                                                                 .cudart = "12.5.39", .nvcc = "12.5.40" });
        fx_write(root, "apps/disagree/targets/x86_64-linux/include/cuda.h", "#define CUDA_VERSION 12020\n");
        fx_mkdir(root, "apps/nolib/include");
        fx_mkdir(root, "apps/nolib/lib64");
        fx_write(root, "apps/nolib/version.json", "{ \"cuda\": { \"name\": \"CUDA SDK\", \"version\": \"12.0.0\" } }\n");
        fx_write(root, "apps/nolib/include/cuda_runtime_api.h", "#define CUDART_VERSION 12000\n");
        /* Truncated version.json and no libcudart: targets/ tells the arch. */
        fx_cuda_toolkit(root, "apps/broken-sbsa", &(struct fx_cuda){ .version = "12.8", .release = "12.8.0",
                                                                    .cudart = "12.8.57", .nvcc = "12.8.61",
                                                                    .triple = "sbsa-linux" });
        fx_write(root, "apps/broken-sbsa/version.json", "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n      \"vers");
        for (size_t i = 0; i < 3; i++) {
                static const char *const f[] = { "libcudart.so", "libcudart.so.12", "libcudart.so.12.8.57" };
                _cleanup_free_ char *p = xasprintf("%s/apps/broken-sbsa/targets/sbsa-linux/lib/%s", root, f[i]);
                ck_assert_int_eq(unlink(p), 0);
        }

        out = scan_json(root, roots, &r);
        ck_assert_msg(r.status == 0, "exit %d: %.2000s", r.status, r.err);
        j = parse(out);
        in = find_install(j, "cuda", "/apps/good-12.4");
        ck_assert_ptr_nonnull(in);
        ck_assert_int_eq(json_array_size(json_object_get(in, "problems")), 0);
        in = find_install(j, "cuda", "/apps/truncated");
        ck_assert_ptr_nonnull(in);
        ck_assert(has_problem(in, "bad-version-file"));
        ck_assert_str_eq(json_string_value(json_object_get(in, "version")), "12.4");
        in = find_install(j, "cuda", "/apps/notjson");
        ck_assert(in && has_problem(in, "bad-version-file"));
        ck_assert_msg(strstr(out, "apps/notjson/version.json:1:"), "no position in: %.1500s", strstr(out, "notjson"));
        in = find_install(j, "cuda", "/apps/textlib");
        ck_assert(in && has_problem(in, "not-elf"));
        in = find_install(j, "cuda", "/apps/elf32");
        ck_assert(in && has_problem(in, "elf-class"));
        in = find_install(j, "cuda", "/apps/disagree");
        ck_assert(in && has_problem(in, "version-mismatch"));
        in = find_install(j, "cuda", "/apps/nolib");
        ck_assert(in && has_problem(in, "missing-library"));
        in = find_install(j, "cuda", "/apps/broken-sbsa");
        ck_assert(in && has_problem(in, "bad-version-file") && has_problem(in, "missing-library"));
        ck_assert_msg(json_is_string(json_object_get(in, "arch")), "arch is not a string");
        ck_assert_str_eq(json_string_value(json_object_get(in, "arch")), "aarch64");
        json_decref(j);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* Replace root/rel with a special file: 'c' a character device like
 * /dev/null (1:3), 'p' a FIFO, 'l' a symlink to /dev/null. */
static void fx_special(const char *root, const char *rel, char kind)
{
        _cleanup_free_ char *p = path_join(root, rel);

        ck_assert(unlink(p) == 0 || errno == ENOENT);
        if (kind == 'c')
                ck_assert_msg(mknod(p, S_IFCHR | 0644, makedev(1, 3)) == 0, "mknod '%s': %s", p,
                              strerror(errno));
        else if (kind == 'p')
                ck_assert_int_eq(mkfifo(p, 0644), 0);
        else
                ck_assert_int_eq(symlink("/dev/null", p), 0);
}

/* A version.json, cuda.h or bin/nvcc that is a device, a FIFO or a link to
 * one is a not-regular-file problem naming it (opening a device can act;
 * tests/readers/readers.sh shows under strace that none is opened). */
START_TEST(scan_reports_special_files_without_reading_them)
{
        static const struct {
                const char *prefix, *file;
                char kind;
                const char *says;
        } cases[] = {
                { "apps/chr-json", "version.json", 'c', "is a character device, not a regular file" },
                { "apps/fifo-json", "version.json", 'p', "is a FIFO, not a regular file" },
                { "apps/link-json", "version.json", 'l', "is a character device, not a regular file" },
                { "apps/fifo-header", "targets/x86_64-linux/include/cuda.h", 'p',
                  "is a FIFO, not a regular file" },
                { "apps/chr-nvcc", "bin/nvcc", 'c', "is a character device, not a regular file" },
                { "apps/link-nvcc", "bin/nvcc", 'l', "is a character device, not a regular file" },
                { NULL, NULL, 0, NULL },
        };
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *out = NULL;
        const char *const roots[] = { "apps", NULL };
        json_t *j;

        if (geteuid() != 0)
                return; /* mknod needs root */
        for (size_t i = 0; cases[i].prefix; i++) {
                _cleanup_free_ char *rel = path_join(cases[i].prefix, cases[i].file);

                fx_cuda_toolkit(root, cases[i].prefix, &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                                         .cudart = "12.4.127", .nvcc = "12.4.131" });
                fx_special(root, rel, cases[i].kind);
        }
        out = scan_json(root, roots, &r);
        ck_assert_msg(r.status == 0, "exit %d: %.2000s", r.status, r.err);
        j = parse(out);
        for (size_t i = 0; cases[i].prefix; i++) {
                _cleanup_free_ char *prefix = xasprintf("/%s", cases[i].prefix);
                _cleanup_free_ char *want = xasprintf("'@ROOT@/%s/%s' %s", cases[i].prefix, cases[i].file,
                                                      cases[i].says);
                const json_t *in = find_install(j, "cuda", prefix);

                ck_assert_msg(in, "no install %s in %.3000s", prefix, out);
                ck_assert_msg(has_problem(in, "not-regular-file"), "%s: %.3000s", prefix, out);
                ck_assert_msg(strstr(out, want), "no \"%s\" in %.4000s", want, out);
                /* The other files still tell the version. */
                ck_assert_str_eq(json_string_value(json_object_get(in, "version")), "12.4");
        }
        json_decref(j);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* The result, not only the warnings, tells what the scan could not read:
 * an unreadable directory (as nobody) and a CUDA whose lib64/ is mode 000
 * are gaps with their paths and why; the same tree readable has none. */
START_TEST(scan_result_records_what_it_could_not_read)
{
        char *root = fx_new();
        _cleanup_free_ char *apps = path_join(root, "apps"), *secret = path_join(root, "apps/secret");
        _cleanup_free_ char *lib64 = path_join(root, "apps/cuda-12.4/lib64");
        const char *roots[] = { apps };
        struct scan_result r = { 0 };
        struct diag d = DIAG_INIT;
        pid_t pid;
        int status;

        fx_cuda_toolkit(root, "apps/cuda-12.4", &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                                  .cudart = "12.4.127", .nvcc = "12.4.131" });
        fx_mkdir(root, "apps/secret/cuda-11.8");
        ck_assert_int_eq(scan_run(&(struct scan_options){ .roots = roots, .n_roots = 1 }, &r, &d), 0);
        ck_assert(scan_complete(&r));
        scan_result_release(&r);
        if (!can_drop_privileges()) {
                fx_free(root);
                return;
        }
        ck_assert_int_eq(chmod(secret, 0), 0);
        ck_assert_int_eq(access(lib64, F_OK), 0);
        ck_assert_int_eq(chmod(lib64, 0), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                bool ok;

                if (setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(3);
                ok = scan_run(&(struct scan_options){ .roots = roots, .n_roots = 1 }, &r, &d) == 0 &&
                     !scan_complete(&r) && r.n_gaps == 2 && streq(r.gaps[0].path, lib64) &&
                     streq(r.gaps[0].realpath, lib64) && streq(r.gaps[0].why, "Permission denied") &&
                     streq(r.gaps[1].path, secret) && streq(r.gaps[1].why, "Permission denied");
                scan_result_release(&r);
                _exit(ok ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        ck_assert_int_eq(chmod(lib64, 0755), 0);
        fx_free(root);
}
END_TEST

/* What scan reads is bounded: a 1 GiB version.json (sparse) is a problem
 * on its install and is not read past 1 MiB; a library directory of more
 * than WALK_MAX_ENTRIES entries is not listed (a warning names the
 * prefix), and the walk skips it when it gets there (here through a
 * symlink). The installs beside them are found as usual. */
START_TEST(scan_bounds_what_it_reads)
{
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *out = NULL, *json = NULL, *lib = NULL, *want = NULL;
        const char *const roots[] = { "apps", NULL };
        const json_t *in;
        json_t *j;

        fx_cuda_toolkit(root, "apps/good-12.4", &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                                  .cudart = "12.4.127", .nvcc = "12.4.131" });
        fx_cuda_toolkit(root, "apps/huge-json", &(struct fx_cuda){ .version = "12.5", .release = "12.5.0",
                                                                  .cudart = "12.5.39", .nvcc = "12.5.40" });
        json = path_join(root, "apps/huge-json/version.json");
        ck_assert_int_eq(truncate(json, (off_t)1 << 30), 0);
        fx_cuda_toolkit(root, "apps/huge-lib", &(struct fx_cuda){ .version = "12.6", .release = "12.6.0",
                                                                 .cudart = "12.6.37", .nvcc = "12.6.20" });
        lib = path_join(root, "apps/huge-lib/targets/x86_64-linux/lib");
        fx_many_files(lib, 0, WALK_MAX_ENTRIES);
        fx_symlink(root, "apps/scratch", "huge-lib/targets/x86_64-linux/lib");

        out = scan_json(root, roots, &r);
        ck_assert_msg(r.status == 0, "exit %d: %.2000s", r.status, r.err);
        j = parse(out);
        in = find_install(j, "cuda", "/apps/good-12.4");
        ck_assert(in && json_array_size(json_object_get(in, "problems")) == 0);
        in = find_install(j, "cuda", "/apps/huge-json");
        ck_assert(in && has_problem(in, "bad-version-file"));
        ck_assert_str_eq(json_string_value(json_object_get(in, "version")), "12.5");
        ck_assert_msg(strstr(out, "'@ROOT@/apps/huge-json/version.json' is larger than 1048576 bytes"),
                      "%.3000s", out);
        in = find_install(j, "cuda", "/apps/huge-lib");
        ck_assert(in && has_problem(in, "missing-library"));
        want = xasprintf("cudamod: cannot look for libraries in '%s/apps/huge-lib': a library "
                         "directory there holds more than 100000 entries (no install's holds that "
                         "many), skipping\n",
                         root);
        ck_assert_msg(strstr(r.err, want), "'%s' not in: %s", want, r.err);
        free(want);
        want = xasprintf("cudamod: cannot scan '%s/apps/scratch': more than 100000 entries (no "
                         "install directory holds that many; 'exclude:' in the config leaves it "
                         "out), skipping\n",
                         root);
        ck_assert_msg(strstr(r.err, want), "'%s' not in: %s", want, r.err);
        json_decref(j);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* Prefix names with spaces, quotes, ]], $(...), a newline and non-ASCII
 * bytes come out unchanged in JSON (valid UTF-8) or marked (invalid), and
 * escaped in the table; nothing is executed. Those a reader of a
 * modulefile would take as code (quotes, ']', '$', a newline) are named
 * unsafe-path: they get no module. */
START_TEST(scan_hostile_prefix_names)
{
        static const char *const names[] = {
                "apps/cuda 12.4 with spaces", "apps/it's \"quoted\"", "apps/a]]b[[c", "apps/$(touch PWNED)",
                "apps/new\nline", "apps/caf\xc3\xa9-12.4", "apps/bad\xff\xfe-bytes", NULL,
        };
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *apps = NULL, *pwned = NULL;
        json_t *j;
        size_t i;
        const json_t *in;

        for (const char *const *n = names; *n; n++)
                fx_cuda_toolkit(root, *n, &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                            .cudart = "12.4.127", .nvcc = "12.4.131" });
        apps = path_join(root, "apps");
        run_cudamod(&r, (const char *const[]){ "scan", "--json", apps, NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %.2000s", r.status, r.err);
        j = parse(r.out);
        ck_assert_int_eq(json_array_size(json_object_get(j, "installs")), 7);
        json_array_foreach(json_object_get(j, "installs"), i, in) {
                const char *p = json_string_value(json_object_get(in, "prefix"));
                bool bad = strstr(p, "bad") != NULL;
                bool unsafe = strpbrk(p, "\"]$\n") != NULL;
                ck_assert_msg(has_problem(in, "non-utf8-path") == bad, "%s", p);
                ck_assert_msg(has_problem(in, "unsafe-path") == unsafe, "%s", p);
                if (!bad && !unsafe)
                        ck_assert_int_eq(json_array_size(json_object_get(in, "problems")), 0);
        }
        ck_assert_ptr_nonnull(strstr(r.out, "new\\nline"));
        ck_assert_ptr_nonnull(strstr(r.out, "caf\xc3\xa9-12.4"));
        ck_assert_ptr_nonnull(strstr(r.out, "bad\xef\xbf\xbd\xef\xbf\xbd-bytes"));
        json_decref(j);
        run_result_release(&r);

        run_cudamod(&r, (const char *const[]){ "scan", apps, NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.out, "new\\nline") && strstr(r.out, "bad\\xff\\xfe-bytes"), "%s", r.out);
        ck_assert_ptr_null(strstr(r.out, "new\nline"));
        run_result_release(&r);
        pwned = path_join(root, "PWNED");
        ck_assert_int_ne(access(pwned, F_OK), 0);
        fx_free(root);
}
END_TEST

/* Whether s holds what a terminal acts on: a C0 control but the newline
 * ending a line, DEL, a C1 control as UTF-8 (C2 80-9F), or a byte that is
 * not valid UTF-8 (a raw 0x9b is CSI to an 8-bit terminal). */
static bool acts_on_terminal(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (*p) {
                size_t n = utf8_seq_len(p);

                if (n == 0 || (*p < 0x20 && *p != '\n') || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f))
                        return true;
                p += n;
        }
        return false;
}

/* Install paths holding C1 controls (CSI U+009B and OSC U+009D in UTF-8,
 * a raw 0x9b) reach neither stdout nor stderr of the table or the
 * warnings raw: they are shown as \xc2\x9b, \x9b. */
START_TEST(scan_c1_controls_never_reach_the_terminal)
{
        static const char *const names[] = {
                "apps/csi\xc2\x9b" "31m-12.4", "apps/osc\xc2\x9d" "0;owned\xc2\x9c-12.4", "apps/raw\x9b" "2J-12.4", NULL,
        };
        char *root = fx_new();
        struct run_result r = { 0 };
        _cleanup_free_ char *apps = NULL;

        for (const char *const *n = names; *n; n++)
                fx_cuda_toolkit(root, *n, &(struct fx_cuda){ .version = "12.4", .release = "12.4.1",
                                                            .cudart = "12.4.127", .nvcc = "12.4.131" });
        apps = path_join(root, "apps");
        run_cudamod(&r, (const char *const[]){ "--color=never", "scan", apps, NULL }, false);
        ck_assert_msg(r.status == 0 || r.status == 1, "exit %d: %.2000s", r.status, r.err);
        ck_assert_msg(!acts_on_terminal(r.out), "raw control on stdout: %s", r.out);
        ck_assert_msg(!acts_on_terminal(r.err), "raw control on stderr: %s", r.err);
        ck_assert_msg(strstr(r.out, "csi\\xc2\\x9b31m") || strstr(r.err, "csi\\xc2\\x9b31m"), "%s%s", r.out, r.err);
        ck_assert_msg(strstr(r.out, "raw\\x9b2J") || strstr(r.err, "raw\\x9b2J"), "%s%s", r.out, r.err);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

/* The real CUDA 13.0 install of these machines: a toolkit assembled from
 * NVIDIA's wheels, with cuDNN 9.19.0 and NCCL 2.28.9 inside the prefix. */
START_TEST(scan_real_cuda_13_install)
{
        struct run_result r = { 0 };
        const json_t *in;
        json_t *j;
        size_t i, n_cuda = 0, n_cudnn = 0, n_nccl = 0;

        if (access("/usr/local/cuda-13.0", F_OK) != 0) {
                printf("scan_real_cuda_13_install: skipped, /usr/local/cuda-13.0 is absent\n");
                return;
        }
        run_cudamod(&r, (const char *const[]){ "scan", "--json", "/usr/local", NULL }, false);
        ck_assert_msg(r.status == 0, "exit %d: %.2000s", r.status, r.err);
        j = parse(r.out);
        json_array_foreach(json_object_get(j, "installs"), i, in) {
                const char *c = json_string_value(json_object_get(in, "component"));
                const char *v = json_string_value(json_object_get(in, "version"));
                if (streq(c, "cuda")) {
                        n_cuda++;
                        ck_assert_str_eq(v, "13.0");
                        ck_assert_str_eq(json_string_value(json_object_get(in, "prefix")), "/usr/local/cuda-13.0");
                        ck_assert_str_eq(json_string_value(json_array_get(json_object_get(in, "aliases"), 0)),
                                         "/usr/local/cuda");
                } else if (streq(c, "cudnn")) {
                        n_cudnn++;
                        ck_assert_str_eq(v, "9.19.0");
                        ck_assert_int_eq(json_integer_value(json_object_get(in, "cuda_major")), 13);
                } else if (streq(c, "nccl")) {
                        n_nccl++;
                        ck_assert_str_eq(v, "2.28.9");
                        ck_assert_str_eq(json_string_value(json_object_get(in, "cuda_version")), "13.0");
                }
        }
        ck_assert_int_eq(n_cuda, 1);
        ck_assert_int_eq(n_cudnn, 1);
        ck_assert_int_eq(n_nccl, 1);
        json_decref(j);
        run_result_release(&r);
}
END_TEST

START_TEST(cli_usage_errors_exit_2)
{
        struct run_result r = { 0 };

        run_cudamod(&r, (const char *const[]){ "frobnicate", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.err, "cudamod: 'frobnicate' is not a cudamod command; see 'cudamod --help'\n");
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "scan", "--bogus", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "--color=sometimes", "scan", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ NULL }, false);
        ck_assert_int_eq(r.status, 2);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "help", "nosuch", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        run_result_release(&r);
        /* A config that cannot be read is a configuration error… */
        run_cudamod(&r, (const char *const[]){ "--config", "/nonexistent/site.yaml", "scan", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/site.yaml"));
        ck_assert_str_eq(r.out, "");
        run_result_release(&r);
        /* …but --help works without reading it. */
        run_cudamod(&r, (const char *const[]){ "--config", "/nonexistent/site.yaml", "scan", "--help", NULL }, false);
        ck_assert_int_eq(r.status, 0);
        run_result_release(&r);
}
END_TEST

START_TEST(cli_help_and_version_exit_0)
{
        struct run_result r = { 0 };

        run_cudamod(&r, (const char *const[]){ "--help", NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "  scan       find the CUDA stack's installations (CUDA, cuDNN, NCCL, ...)\n"));
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "help", "scan", NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_eq(strstr(r.out, "usage: cudamod scan [--json] [--jobs N] [ROOT...]\n"), r.out);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "scan", "--help", NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_eq(strstr(r.out, "usage: cudamod scan"), r.out);
        run_result_release(&r);
        run_cudamod(&r, (const char *const[]){ "--version", NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_eq(strstr(r.out, "cudamod "), r.out);
        run_result_release(&r);
}
END_TEST

/* Our stdout is the product: a write error must not pass as success. */
START_TEST(cli_write_error_on_stdout_is_reported)
{
        const char *bin = getenv("CUDAMOD_BIN");
        _cleanup_free_ char *cmd = NULL;
        char *root;
        int st;

        if (access("/dev/full", W_OK) != 0)
                return;
        root = fx_new();
        cmd = xasprintf("'%s' scan --json '%s' >/dev/full 2>/dev/null", bin, root);
        st = system(cmd);
        fx_free(root);
        ck_assert(WIFEXITED(st));
        ck_assert_int_eq(WEXITSTATUS(st), 1);
}
END_TEST

/* --json writes the document as text (install_list_write_json), not by
 * dumping a jansson tree: the text must be what jansson writes of the
 * tree install_list_to_json builds, for every component's members and for
 * strings jansson escapes, non-UTF-8 bytes, nulls and empty lists. */
START_TEST(scan_json_text_matches_jansson)
{
        static const char *const hostile[] = {
                "/p/a\"b\\c/d\x01\x1f\x7f\t\n\r\b\f/e\xc3\xa9\xe2\x80\xa8",
                "/p/bad\xff\xfe utf8",
                "/p/plain",
        };
        struct install_list l = { 0 };
        struct strbuf sb = STRBUF_INIT;
        json_t *doc, *unread = json_array();
        char *want;
        size_t k = 0;

        for (const struct component *const *c = component_table; c < component_table + N_COMPONENTS; c++, k++) {
                struct install *in = install_new(*c, (enum layout)(k % _LAYOUT_MAX));
                const char *h = hostile[k % 3];

                ck_assert_int_eq(version_parse(k % 2 ? "12.4.1" : "9.1", &in->version), 0);
                ck_assert_int_eq(version_parse("12.8.90", &in->release), 0);
                if (k % 4 != 3) /* else no CUDA major: null */
                        ck_assert_int_eq(version_parse("12.6", &in->cuda_version), 0);
                in->build = k % 2 ? xstrdup("26") : NULL;
                in->components[0] = xstrdup("12.8.93");
                in->static_only = k % 2;
                in->arch = k % 3 ? xstrdup("x86_64") : NULL;
                in->prefix = xasprintf("%s/%zu", h, k);
                in->realpath = xasprintf("%s/%zu/real", h, k);
                if (k % 2) {
                        strv_add(&in->aliases, h);
                        strv_add(&in->aliases, "/p/alias");
                        in->bin_dir = xasprintf("%s/bin", h);
                        strv_add(&in->extra_include_dirs, h);
                }
                in->include_dir = xstrdup(h);
                in->lib_dir = k % 3 ? xstrdup("/p/lib") : NULL;
                strv_add(&in->extra_lib_dirs, "/p/lib64");
                in->kind = (enum install_kind)(k % _INSTALL_KIND_MAX);
                if (k % 3) { /* else no evidence: {} */
                        install_set_evidence(in, "cuda_version", h);
                        install_set_evidence(in, "version", "dist-info");
                        install_set_evidence(in, "cuda_version", "not this one");
                        ck_assert_str_eq(install_evidence(in, "cuda_version"), h);
                        ck_assert_ptr_null(install_evidence(in, "arch"));
                }
                if (k % 2 == 0) {
                        install_add_problem(in, "bad-\"code\"", "message with %s", h);
                        install_add_problem(in, "second", "\\ and \x02");
                }
                install_list_add(&l, in);
        }
        ck_assert_int_eq(json_array_append_new(unread, json_pack("{s:s, s:s}", "path", "/q/\"x\"", "why", "a\tb")),
                         0);
        json_array_append_new(unread, json_pack("{s:i, s:b, s:n, s:[], s:{}}", "n", -3, "t", 1, "z", "e", "o"));
        /* Deeper than the writer's line of spaces. */
        json_array_append_new(unread, json_pack("[[[[[[[[[[[[[[[[[[[[{s:s}]]]]]]]]]]]]]]]]]]]]", "deep", "x"));
        doc = install_list_to_json(&l);
        json_object_set(doc, "unread", unread);
        want = json_dumps(doc, JSON_INDENT(2));
        install_list_write_json(&sb, &l, unread);
        ck_assert_str_eq(sb.buf, want);

        /* And an empty scan. */
        install_list_release(&l);
        free(want);
        json_decref(doc);
        strbuf_release(&sb);
        json_array_clear(unread);
        doc = install_list_to_json(&l);
        json_object_set(doc, "unread", unread);
        want = json_dumps(doc, JSON_INDENT(2));
        install_list_write_json(&sb, &l, unread);
        ck_assert_str_eq(sb.buf, want);
        free(want);
        json_decref(doc);
        json_decref(unread);
        strbuf_release(&sb);
}
END_TEST

/* A listing is one allocation of entries and names (walk.h): every name
 * read comes back whole, with its d_type, sorted, over a directory whose
 * names outgrow the gathering buffer many times (names of 5 to 255 bytes,
 * every byte but '/' and NUL), and its copy is the same. */
START_TEST(walk_listing_holds_every_name_sorted)
{
        char *root = fx_new();
        _cleanup_free_ char *dir = path_join(root, "d");
        const size_t n_names = 3000;
        char **names = xcalloc(n_names, sizeof(*names));
        struct walk_entry *e = NULL, *copy;
        size_t n = 0;
        int fd, r;

        fx_mkdir(root, "d");
        for (size_t i = 0; i < n_names; i++) {
                /* Five digits that keep the names apart, then bytes of
                 * every value but '/' and NUL: 5 to 255 in all. */
                size_t len = 5 + (i * 37) % 251;
                char *name = xmalloc(len + 1);
                _cleanup_free_ char *rel = NULL;

                snprintf(name, 6, "%05zu", i);
                for (size_t k = 5; k < len; k++) {
                        name[k] = (char)(1 + (i * 7 + k * 13) % 255);
                        if (name[k] == '/')
                                name[k] = '_';
                }
                name[len] = '\0';
                names[i] = name;
                rel = xasprintf("d/%s", name);
                if (i % 3 == 0)
                        fx_mkdir(root, rel);
                else if (i % 3 == 1)
                        fx_write(root, rel, "");
                else
                        fx_symlink(root, rel, "nowhere");
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        r = walk_read_entries(fd, WALK_MAX_ENTRIES, &e, &n);
        close(fd);
        ck_assert_int_eq(r, 0);
        ck_assert_uint_eq(n, n_names);
        for (size_t i = 1; i < n; i++)
                ck_assert_msg(strcmp(e[i - 1].name, e[i].name) < 0, "not sorted at %zu", i);
        for (size_t i = 0; i < n_names; i++) {
                struct walk_dir d = { .entries = e, .n_entries = n };
                const struct walk_entry *f = walk_dir_find(&d, names[i]);
                unsigned char want = i % 3 == 0 ? DT_DIR : i % 3 == 1 ? DT_REG : DT_LNK;

                ck_assert_msg(f != NULL, "name %zu missing", i);
                ck_assert_str_eq(f->name, names[i]);
                if (f->type != DT_UNKNOWN)
                        ck_assert_int_eq(f->type, want);
        }
        copy = walk_entries_copy(e, n);
        for (size_t i = 0; i < n; i++) {
                ck_assert_str_eq(copy[i].name, e[i].name);
                ck_assert_int_eq(copy[i].type, e[i].type);
        }
        ck_assert_ptr_null(walk_entries_copy(e, 0));
        walk_entries_free(copy);
        walk_entries_free(e);
        for (size_t i = 0; i < n_names; i++)
                free(names[i]);
        free(names);
        fx_free(root);
}
END_TEST

/* Forward compatibility: the toolkit's compat/ (and conda's cuda-compat/)
 * with the driver of its libcuda.so.<driver>; a toolkit without one is
 * null; the table names it. A compat/ holding only links, or a libcuda
 * whose suffix is no driver version (libcuda.so.1), is none. */
START_TEST(scan_reports_forward_compatibility)
{
        char *root = fx_new();
        const struct layout_fixture *f = layout_fixture_find("compat");
        struct run_result r = { 0 };
        _cleanup_free_ char *out = NULL, *local = path_join(root, "usr/local");
        json_t *j, *installs;
        size_t i;
        json_t *in;
        unsigned seen = 0;

        f->build(root);
        /* Not a driver: a soname link, a name with letters, a CUDA major. */
        fx_cuda_toolkit(root, "usr/local/cuda-12.6",
                        &(struct fx_cuda){ .version = "12.6", .release = "12.6.3", .cudart = "12.6.77",
                                           .nvcc = "12.6.85" });
        fx_symlink(root, "usr/local/cuda-12.6/compat/libcuda.so.1", "/nonexistent/libcuda.so.575.51.03");
        fx_write(root, "usr/local/cuda-12.6/compat/libcuda.so.12.6", "");
        fx_write(root, "usr/local/cuda-12.6/compat/libcuda.so.575.51.03x", "");
        out = scan_json(root, f->roots, &r);
        j = parse(out);
        installs = json_object_get(j, "installs");
        json_array_foreach(installs, i, in) {
                const char *prefix = json_string_value(json_object_get(in, "prefix"));
                json_t *compat = json_object_get(in, "compat");

                ck_assert_msg(compat != NULL, "no compat member in %s", prefix);
                if (streq(prefix, "@ROOT@/usr/local/cuda-12.9")) {
                        ck_assert_str_eq(json_string_value(json_object_get(compat, "driver")), "575.51.03");
                        ck_assert_str_eq(json_string_value(json_object_get(compat, "dir")),
                                         "@ROOT@/usr/local/cuda-12.9/compat");
                        seen |= 1;
                } else if (streq(prefix, "@ROOT@/conda")) {
                        ck_assert_str_eq(json_string_value(json_object_get(compat, "driver")), "570.124.06");
                        ck_assert_str_eq(json_string_value(json_object_get(compat, "dir")),
                                         "@ROOT@/conda/cuda-compat");
                        seen |= 2;
                } else {
                        ck_assert_msg(json_is_null(compat), "%s: compat is not null", prefix);
                        seen |= streq(prefix, "@ROOT@/usr/local/cuda-12.4") ? 4 : streq(prefix, "@ROOT@/usr/local/cuda-12.6") ? 8 : 0;
                }
        }
        ck_assert_uint_eq(seen, 15);
        json_decref(j);
        run_result_release(&r);

        run_cudamod(&r, (const char *const[]){ "--color=never", "scan", local, NULL }, false);
        free(out);
        out = str_replace_all(r.out, root, "@ROOT@");
        ck_assert_msg(strstr(out, "\n    compat     @ROOT@/usr/local/cuda-12.9/compat (forward compatibility, driver "
                                  "575.51.03)\n"),
                      "no compat line:\n%s", out);
        run_result_release(&r);
        fx_free(root);
}
END_TEST

static Suite *scan_suite(void)
{
        Suite *s = suite_create("scan");
        TCase *tc = tcase_create("golden");
        size_t n = 0;

        while (layout_fixtures[n].name)
                n++;
        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, scan_layout_matches_golden, 0, (int)n);
        tcase_add_test(tc, scan_output_is_deterministic);
        tcase_add_test(tc, scan_leaves_out_the_installs_a_component_excludes);
        tcase_add_test(tc, scan_table_columns_fit_the_longest_component_name);
        tcase_add_test(tc, scan_json_text_matches_jansson);
        suite_add_tcase(s, tc);

        tc = tcase_create("cli");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, scan_table_lists_each_install_once_with_aliases);
        tcase_add_test(tc, scan_reports_forward_compatibility);
        tcase_add_test(tc, scan_empty_root_says_nothing_found);
        tcase_add_test(tc, scan_missing_root_is_an_error);
        tcase_add_test(tc, cli_usage_errors_exit_2);
        tcase_add_test(tc, cli_help_and_version_exit_0);
        tcase_add_test(tc, cli_write_error_on_stdout_is_reported);
        suite_add_tcase(s, tc);

        tc = tcase_create("hostile");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, scan_survives_symlink_loops);
        tcase_add_test(tc, scan_skips_unreadable_directories);
        tcase_add_test(tc, scan_result_records_what_it_could_not_read);
        tcase_add_test(tc, scan_reports_broken_installs_as_problems);
        tcase_add_test(tc, scan_hostile_prefix_names);
        tcase_add_test(tc, scan_c1_controls_never_reach_the_terminal);
        tcase_add_test(tc, scan_reports_special_files_without_reading_them);
        tcase_add_test(tc, walk_listing_holds_every_name_sorted);
        suite_add_tcase(s, tc);

        tc = tcase_create("bounds");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, scan_bounds_what_it_reads);
        suite_add_tcase(s, tc);

        tc = tcase_create("real");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, scan_real_cuda_13_install);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(scan_suite());
}
