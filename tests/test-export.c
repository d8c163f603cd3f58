/* test-export.c: the export engine (export.c) over a tree generate_run
 * wrote from the demo's fixture, and over indexes written by hand (a
 * runtime install, an index that is not to be trusted, no index). What
 * Spack and EasyBuild make of the output: tests/modules/export.sh. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "demo.h"
#include "export.h"
#include "fixture.h"
#include "generate.h"
#include "strbuf.h"
#include "testutil.h"
#include "util-path.h"

static void quiet(enum message_level level, const char *text, void *userdata)
{
        (void)level;
        (void)text;
        (void)userdata;
}

/* The demo's tree generated into root/mf with the config text cfg_text
 * ("" for the defaults). */
static char *generated(const char *root, const char *cfg_text)
{
        _cleanup_free_ char *sw = path_join(root, "sw");
        char *out = path_join(root, "mf");
        const char *roots[1] = { sw };
        struct scan_options so = { .roots = roots, .n_roots = 1, .jobs = 1 };
        struct config cfg;
        struct generate_result res;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        int r;

        demo_build(root);
        config_init_default(&cfg);
        ck_assert_int_eq(config_load_buffer(&cfg, cfg_text, strlen(cfg_text), "site.yaml", &d), 0);
        free(cfg.output);
        cfg.output = xstrdup(out);
        r = generate_run(&(struct generate_options){ .cfg = &cfg, .scan = &so, .lock_timeout = -1,
                                                     .log = { .say = quiet } },
                         &res, &d);
        ck_assert_msg(r == 0, "generate_run: %s", d.message ? d.message : "?");
        generate_result_release(&res);
        config_release(&cfg);
        return out;
}

static int export_of(const char *dir, enum export_format f, struct strbuf *out, struct strv *left,
                     struct diag *d)
{
        strbuf_reset(out);
        return export_tree(dir, f, out, left, d);
}

START_TEST(export_spack_gives_an_external_per_module)
{
        _cleanup_free_ char *root = fx_new();
        _cleanup_free_ char *out = generated(root, "format: lua\n");
        _cleanup_free_ char *sw = path_join(root, "sw");
        _cleanup_free_ char *cuda = NULL, *cudnn = NULL;
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, again = STRBUF_INIT;
        _cleanup_(strv_release) struct strv left = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        ck_assert_int_eq(export_of(out, EXPORT_SPACK, &sb, &left, &d), 0);
        ck_assert_uint_eq(left.len, 0);
        cuda = xasprintf("  cuda:\n    buildable: false\n    externals:\n"
                         "    - spec: \"cuda@11.8.0\"\n      prefix: \"%s/cuda-11.8\"\n"
                         "      modules:\n      - \"cuda/11.8\"\n"
                         "    - spec: \"cuda@12.9.1\"\n", sw);
        ck_assert_msg(strstr(sb.buf, cuda), "%s", sb.buf);
        /* A library's module loads after the cuda of its major that opens
         * its level: the newest one. */
        cudnn = xasprintf("    - spec: \"cudnn@9.7.1.26\"\n"
                          "      prefix: \"%s/cudnn-linux-x86_64-9.7.1.26_cuda12-archive\"\n"
                          "      modules:\n      - \"cuda/12.9\"\n      - \"cudnn/9.7.1\"\n", sw);
        ck_assert_msg(strstr(sb.buf, cudnn), "%s", sb.buf);
        ck_assert(strstr(sb.buf, "    - spec: \"nccl@2.21.5 +cuda\"\n"));
        ck_assert(strstr(sb.buf, "    - spec: \"magma@2.9.0 +cuda\"\n"));
        ck_assert(strstr(sb.buf, "    - spec: \"nvshmem@3.4.5 +cuda\"\n"));
        /* The table's order: cuda, cudnn, nccl, ..., magma. */
        ck_assert(strstr(sb.buf, "  cuda:\n") < strstr(sb.buf, "  cudnn:\n"));
        ck_assert(strstr(sb.buf, "  nvshmem:\n") < strstr(sb.buf, "  magma:\n"));
        /* The same tree, the same bytes. */
        ck_assert_int_eq(export_of(out, EXPORT_SPACK, &again, &left, &d), 0);
        ck_assert_str_eq(again.buf, sb.buf);
        fx_free(TAKE_PTR(root));
}
END_TEST

START_TEST(export_easybuild_gives_a_section_per_module)
{
        _cleanup_free_ char *root = fx_new();
        _cleanup_free_ char *out = generated(root, "naming: easybuild\n");
        _cleanup_free_ char *sw = path_join(root, "sw");
        _cleanup_free_ char *cuda = NULL, *cudnn = NULL;
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_(strv_release) struct strv left = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        ck_assert_int_eq(export_of(out, EXPORT_EASYBUILD, &sb, &left, &d), 0);
        cuda = xasprintf("\n[CUDA/12.9.1]\nname = CUDA\nversion = 12.9.1\nprefix = %s/cuda-12.9\n", sw);
        ck_assert_msg(strstr(sb.buf, cuda), "%s", sb.buf);
        cudnn = xasprintf("\n[cuDNN/9.7.1.26-CUDA-12.9.1]\nname = cuDNN\nversion = 9.7.1.26\n"
                          "prefix = %s/cudnn-linux-x86_64-9.7.1.26_cuda12-archive\n", sw);
        ck_assert_msg(strstr(sb.buf, cudnn), "%s", sb.buf);
        ck_assert(strstr(sb.buf, "\n[magma/2.9.0-CUDA-12.9.1]\nname = magma\nversion = 2.9.0\n"));
        ck_assert(strstr(sb.buf, "\n[cuSPARSELt/0.8.1.1-CUDA-12.9.1]\nname = cuSPARSELt\n"));
        fx_free(TAKE_PTR(root));
}
END_TEST

#define SHA "\"sha256\": \"0000000000000000000000000000000000000000000000000000000000000000\""

/* A runtime-only install (NVIDIA's CUDA 13 cuSPARSELt wheel) is left out,
 * and said; a prefix configobj would read otherwise too. */
START_TEST(export_leaves_out_runtime_installs)
{
        _cleanup_free_ char *root = fx_new();
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_(strv_release) struct strv left = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;

        fx_write(root, ".cudamod-index.json",
                 "{\"files\": {\n"
                 "\"Core/cuda/13.0.lua\": {" SHA ", \"install\": \"/apps/cuda-13.0\", \"module\": \"cuda/13.0\","
                 " \"identity\": \"cuda 13.0.1 cuda13 x86_64\"},\n"
                 "\"CUDA/13/cusparselt/0.8.1.lua\": {" SHA ", \"install\": \"/apps/whl\","
                 " \"module\": \"cusparselt/0.8.1\", \"identity\": \"cusparselt 0.8.1.1 cuda13 x86_64\","
                 " \"kind\": \"runtime\"},\n"
                 "\"CUDA/13/nccl/2.28.3.lua\": {" SHA ", \"install\": \"/apps/nccl,2\","
                 " \"module\": \"nccl/2.28.3\", \"identity\": \"nccl 2.28.3 cuda13 x86_64\"}\n"
                 "}}\n");
        ck_assert_int_eq(export_of(root, EXPORT_SPACK, &sb, &left, &d), 0);
        ck_assert(!strstr(sb.buf, "cusparselt"));
        ck_assert(strstr(sb.buf, "    - spec: \"nccl@2.28.3 +cuda\"\n      prefix: \"/apps/nccl,2\"\n"
                                 "      modules:\n      - \"cuda/13.0\"\n      - \"nccl/2.28.3\"\n"));
        ck_assert_uint_eq(left.len, 1);
        ck_assert_msg(strstr(left.items[0], "cusparselt/0.8.1: cuSPARSELt 0.8.1.1 at /apps/whl is a runtime-only"),
                      "%s", left.items[0]);
        strv_release(&left);
        ck_assert_int_eq(export_of(root, EXPORT_EASYBUILD, &sb, &left, &d), 0);
        ck_assert(!strstr(sb.buf, "cusparselt"));
        ck_assert(!strstr(sb.buf, "nccl"));
        ck_assert(strstr(sb.buf, "\n[cuda/13.0]\nname = CUDA\nversion = 13.0.1\nprefix = /apps/cuda-13.0\n"));
        ck_assert_uint_eq(left.len, 2);
        ck_assert(strstr(left.items[0], "nccl/2.28.3: its prefix '/apps/nccl,2' holds what configobj"));
        fx_free(TAKE_PTR(root));
}
END_TEST

START_TEST(export_refuses_what_is_not_a_generated_tree)
{
        _cleanup_free_ char *root = fx_new();
        _cleanup_free_ char *gone = path_join(root, "gone");
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_(strv_release) struct strv left = { 0 };
        struct diag d = DIAG_INIT;

        ck_assert_int_eq(export_of(root, EXPORT_SPACK, &sb, &left, &d), -ENOENT);
        ck_assert_msg(strstr(d.message, "has no .cudamod-index.json: not a directory cudamod generate wrote"),
                      "%s", d.message);
        diag_release(&d);
        ck_assert_int_lt(export_of(gone, EXPORT_SPACK, &sb, &left, &d), 0);
        ck_assert_ptr_nonnull(d.message);
        diag_release(&d);
        /* An entry without the identity an export reads. */
        fx_write(root, ".cudamod-index.json",
                 "{\"files\": {\"Core/cuda/13.0.lua\": {" SHA ", \"install\": \"/apps/cuda-13.0\","
                 " \"module\": \"cuda/13.0\"}}}\n");
        ck_assert_int_eq(export_of(root, EXPORT_EASYBUILD, &sb, &left, &d), -EBADMSG);
        ck_assert_msg(strstr(d.message, "the module cuda/13.0 has no identity"), "%s", d.message);
        diag_release(&d);
        /* A value a module writer would refuse: none is trusted. */
        fx_write(root, ".cudamod-index.json",
                 "{\"files\": {\"Core/cuda/13.0.lua\": {" SHA ", \"install\": \"/apps/cuda\\\"13\","
                 " \"module\": \"cuda/13.0\", \"identity\": \"cuda 13.0.1 cuda13 x86_64\"}}}\n");
        ck_assert_int_eq(export_of(root, EXPORT_SPACK, &sb, &left, &d), -EBADMSG);
        ck_assert_msg(strstr(d.message, "is not trusted"), "%s", d.message);
        diag_release(&d);
        ck_assert_int_eq(export_format_from_string("spack"), EXPORT_SPACK);
        ck_assert_int_eq(export_format_from_string("easybuild"), EXPORT_EASYBUILD);
        ck_assert_int_eq(export_format_from_string("conda"), _EXPORT_FORMAT_INVALID);
        fx_free(TAKE_PTR(root));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("export");
        TCase *tc = tcase_create("export");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, export_spack_gives_an_external_per_module);
        tcase_add_test(tc, export_easybuild_gives_a_section_per_module);
        tcase_add_test(tc, export_leaves_out_runtime_installs);
        tcase_add_test(tc, export_refuses_what_is_not_a_generated_tree);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
