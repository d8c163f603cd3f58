/* test-metadata.c: what a package manager left in a prefix: Spack's
 * spec.json and EasyBuild's easyconfig, read as data (metadata.h), and
 * what they fill in an install.
 *
 * Buffers are exact-length copies (no NUL after them), so ASan and
 * valgrind catch a read past len. */
#include <check.h>
#include <errno.h>

#include "component-nvshmem.h"
#include "install.h"
#include "metadata.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "version.h"

static char *dup_exact(const char *s, size_t len)
{
        char *p = xmalloc(len ? len : 1);

        memcpy(p, s, len);
        return p;
}

static int parse(bool json, const char *text, struct metadata *m)
{
        size_t len = strlen(text);
        _cleanup_free_ char *buf = dup_exact(text, len);
        struct diag d = DIAG_INIT;
        int r = json ? metadata_parse_spec_json(buf, len, "f", m, &d)
                     : metadata_parse_easyconfig(buf, len, "f", m, &d);

        ck_assert_int_eq(r < 0, d.message != NULL);
        diag_release(&d);
        return r;
}

static void assert_version(const struct version *v, const char *want)
{
        _cleanup_free_ char *got = version_to_string(v, 0);

        ck_assert_msg(streq(got, want), "got '%s', want '%s'", got, want);
}

/* Spack 0.22's format: the root first, its cuda dependency by hash. */
static const char spec_v4[] =
        "{\"spec\": {\"_meta\": {\"version\": 4}, \"nodes\": [\n"
        " {\"name\": \"nvshmem\", \"version\": \"2.7.0-6\", \"namespace\": \"builtin\",\n"
        "  \"parameters\": {\"cuda\": true, \"cuda_arch\": [\"80\", \"90\"], \"mpi\": true},\n"
        "  \"dependencies\": [{\"name\": \"cuda\", \"hash\": \"abcdefg\", \"parameters\": {\"deptypes\": [\"build\", \"link\"], \"virtuals\": []}},\n"
        "                     {\"name\": \"openmpi\", \"hash\": \"zzz\", \"parameters\": {\"deptypes\": [\"link\"]}}],\n"
        "  \"hash\": \"root\"},\n"
        " {\"name\": \"cuda\", \"version\": \"11.0\", \"hash\": \"other\"},\n"
        " {\"name\": \"cuda\", \"version\": \"12.6.0\", \"hash\": \"abcdefg\"}]}}\n";

START_TEST(spec_json_reads_root_and_cuda_dependency)
{
        struct metadata m = { 0 };

        ck_assert_int_eq(parse(true, spec_v4, &m), 0);
        ck_assert_str_eq(m.name, "nvshmem");
        ck_assert_str_eq(m.source, "spec.json");
        assert_version(&m.version, "2.7.0");
        /* The node of the dependency's hash, not the first cuda. */
        assert_version(&m.cuda, "12.6.0");
        ck_assert_str_eq(m.cuda_hash, "abcdefg");
        ck_assert_uint_eq(m.cuda_arch.len, 2);
        ck_assert_str_eq(m.cuda_arch.items[1], "90");
        metadata_release(&m);
}
END_TEST

START_TEST(spec_json_reads_older_forms)
{
        /* Spack 0.16: "spec" a list of {"<name>": {...}}, dependencies
         * an object by name. */
        static const char list_form[] =
                "{\"spec\": [{\"nccl\": {\"version\": \"2.18.3-1\", \"dependencies\": {\"cuda\": {\"hash\": \"h1\", \"type\": [\"build\", \"link\"]}}}},\n"
                "            {\"cuda\": {\"version\": \"12.1.1\", \"hash\": \"h1\"}}]}";
        static const char no_cuda[] = "{\"spec\": {\"nodes\": [{\"name\": \"cuda\", \"version\": \"12.4.0\"}]}}";
        struct metadata m = { 0 };

        ck_assert_int_eq(parse(true, list_form, &m), 0);
        ck_assert_str_eq(m.name, "nccl");
        assert_version(&m.cuda, "12.1.1");
        metadata_release(&m);
        ck_assert_int_eq(parse(true, no_cuda, &m), 0);
        ck_assert_str_eq(m.name, "cuda");
        ck_assert_uint_eq(m.cuda.count, 0);
        metadata_release(&m);
}
END_TEST

START_TEST(spec_json_refuses_what_is_not_one)
{
        static const char *const bad[] = {
                "",
                "{\"spec\": {\"nodes\": [{\"name\": \"nvshmem\", \"version\": \"2.7.0\"",
                "{\"spec\": {\"nodes\": []}}",
                "{\"spec\": {\"nodes\": [{\"version\": \"1\"}]}}",
                "{\"spec\": 3}",
                "[1, 2]",
                "{\"spec\": {\"nodes\": [{\"name\": \"a\"}]}, \"spec\": 1}",
                NULL,
        };
        struct metadata m = { 0 };

        for (size_t i = 0; bad[i]; i++)
                ck_assert_msg(parse(true, bad[i], &m) == -EBADMSG, "accepted '%s'", bad[i]);
}
END_TEST

/* EasyBuild's NCCL-2.22.3-GCCcore-13.3.0-CUDA-12.6.0.eb, as it is
 * written (comments, a docstring, expressions, a multi-line list). */
static const char nccl_eb[] =
        "# This easyconfig was built by ...\n"
        "name = 'NCCL'\n"
        "version = '2.22.3'\n"
        "versionsuffix = '-CUDA-%(cudaver)s'\n"
        "\n"
        "homepage = 'https://developer.nvidia.com/nccl'\n"
        "description = \"\"\"The NVIDIA Collective Communications Library (NCCL) implements multi-GPU and\n"
        " multi-node collective communication primitives = 'not an assignment'.\"\"\"\n"
        "\n"
        "toolchain = {'name': 'GCCcore', 'version': '13.3.0'}\n"
        "\n"
        "github_account = 'NVIDIA'\n"
        "source_urls = [GITHUB_SOURCE]\n"
        "sources = ['v%(version)s-1.tar.gz']\n"
        "checksums = [{'v2.22.3-1.tar.gz': '45151629a9494460e73375281e8b0fe379141528879301899ece9b776faca024'}]\n"
        "local_x = '%s' % version\n"
        "builddependencies = [('binutils', '2.42')]\n"
        "\n"
        "dependencies = [\n"
        "    ('CUDA', '12.6.0', '', SYSTEM),  # the CUDA\n"
        "    ('UCX-CUDA', '1.16.0', versionsuffix),\n"
        "]\n"
        "if True:\n"
        "    name = 'indented'\n"
        "cuda_compute_capabilities = ['5.0', '6.0', '7.0', '7.5', '8.0', '8.6', '9.0']\n"
        "moduleclass = 'lib'\n";

START_TEST(easyconfig_reads_simple_assignments)
{
        struct metadata m = { 0 };

        ck_assert_int_eq(parse(false, nccl_eb, &m), 0);
        ck_assert_str_eq(m.source, "easyconfig");
        ck_assert_str_eq(m.name, "NCCL");
        assert_version(&m.version, "2.22.3");
        ck_assert_str_eq(m.versionsuffix, "-CUDA-%(cudaver)s");
        ck_assert_str_eq(m.toolchain, "GCCcore/13.3.0");
        assert_version(&m.cuda, "12.6.0");
        metadata_release(&m);
}
END_TEST

START_TEST(easyconfig_tokenizer_cases)
{
        static const struct {
                const char *text;
                const char *name, *cuda, *toolchain;
        } rows[] = {
                /* A dependency's version through a name given a string. */
                { "name = \"cuDNN\"\nlocal_cuda_ver = '12.4.0'\ndependencies = [('CUDA', local_cuda_ver, '', SYSTEM)]\n",
                  "cuDNN", "12.4.0", NULL },
                /* Adjacent strings join; a backslash continues a line. */
                { "name = 'NV' 'SHMEM'\ntoolchain = \\\n    SYSTEM\ndependencies = [('CUDAcore', '11.8.0')]\n",
                  "NVSHMEM", "11.8.0", "system" },
                /* Escapes and raw strings; a tuple for dependencies is not a list. */
                { "name = 'a\\'b'\nx = r'\\d'\ndependencies = (('CUDA', '12.6.0'),)\n", "a'b", "", NULL },
                /* Assignments that are expressions are skipped, the last simple one stands. */
                { "name = 'x'\nname = 'y' + 'z'\nversion = f(1)\n", "x", "", NULL },
                { "toolchain = {'name': 'system', 'version': 'system'}\nname='magma';dependencies=[('CUDA','12.6.0')]\n",
                  "magma", "", "system" },
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                struct metadata m = { 0 };
                _cleanup_free_ char *cuda = NULL;

                ck_assert_msg(parse(false, rows[i].text, &m) == 0, "row %zu", i);
                cuda = version_to_string(&m.cuda, 0);
                ck_assert_msg(streq(m.name, rows[i].name), "row %zu: name '%s'", i, m.name);
                ck_assert_msg(streq(cuda, rows[i].cuda), "row %zu: cuda '%s'", i, cuda);
                ck_assert_msg(rows[i].toolchain ? m.toolchain && streq(m.toolchain, rows[i].toolchain)
                                                : !m.toolchain,
                              "row %zu: toolchain '%s'", i, m.toolchain ? m.toolchain : "(none)");
                metadata_release(&m);
        }
}
END_TEST

START_TEST(easyconfig_refuses_hostile_text)
{
        static const char *const bad[] = {
                "name = 'unterminated\n",
                "name = 'x'\ndependencies = [('CUDA', '12.6.0'\n",
                "name = \"\"\"never closed\n",
                "version = '1'\n",
                "",
                NULL,
        };
        struct metadata m = { 0 };
        struct strbuf deep = STRBUF_INIT;

        for (size_t i = 0; bad[i]; i++)
                ck_assert_msg(parse(false, bad[i], &m) == -EBADMSG, "accepted '%s'", bad[i]);
        /* Nesting without end, and a long run of values: refused, bounded. */
        strbuf_addstr(&deep, "name = 'x'\ndependencies = ");
        for (int i = 0; i < 100000; i++)
                strbuf_addch(&deep, '[');
        ck_assert_int_eq(parse(false, deep.buf, &m), -EBADMSG);
        strbuf_setlen(&deep, 0);
        strbuf_addstr(&deep, "name = 'x'\ndependencies = [");
        for (int i = 0; i < 70000; i++)
                strbuf_addstr(&deep, "1,");
        strbuf_addstr(&deep, "]\n");
        ck_assert_int_eq(parse(false, deep.buf, &m), -EBADMSG);
        strbuf_release(&deep);
}
END_TEST

START_TEST(parsers_survive_random_bytes)
{
        unsigned seed = 32;
        char buf[512];
        static const char alphabet[] = "'\"()[]{},:=#\\\n abc_0123.rRCUDA";

        for (int round = 0; round < 20000; round++) {
                size_t len = (size_t)(rand_r(&seed) % sizeof(buf));
                struct metadata m = { 0 };

                for (size_t i = 0; i < len; i++)
                        buf[i] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
                {
                        _cleanup_free_ char *copy = dup_exact(buf, len);
                        struct diag d = DIAG_INIT;

                        if (metadata_parse_easyconfig(copy, len, "f", &m, &d) == 0)
                                metadata_release(&m);
                        diag_release(&d);
                        if (metadata_parse_spec_json(copy, len, "f", &m, &d) == 0)
                                metadata_release(&m);
                        diag_release(&d);
                }
        }
}
END_TEST

/* What the metadata fills, keeps and names, by what the files told. */
START_TEST(apply_fills_never_overrides)
{
        static const struct {
                const char *files; /* the CUDA the files told, "" none */
                const char *meta;
                const char *want;
                bool evidence, problem;
        } rows[] = {
                { "", "12.6.0", "12.6.0", true, false },
                { "12", "12.6.0", "12.6.0", true, false },
                { "12.6", "12.6.0", "12.6.0", true, false },
                { "13", "12.6.0", "13", false, true },
                { "12.4", "12.6.0", "12.4", false, true },
                { "12.6", "12.6", "12.6", false, false },
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                struct install *in = install_new(&component_nvshmem, LAYOUT_TOOLKIT);
                struct metadata m = { .source = "spec.json", .file = (char *)"p/.spack/spec.json",
                                      .name = (char *)"nvshmem" };
                _cleanup_free_ char *got = NULL;

                if (*rows[i].files)
                        ck_assert_int_eq(version_parse(rows[i].files, &in->cuda_version), 0);
                ck_assert_int_eq(version_parse(rows[i].meta, &m.cuda), 0);
                metadata_apply(in, &m);
                got = version_to_string(&in->cuda_version, 0);
                ck_assert_msg(streq(got, rows[i].want), "row %zu: got %s", i, got);
                ck_assert_msg((install_evidence(in, "cuda_version") != NULL) == rows[i].evidence, "row %zu", i);
                ck_assert_msg(install_has_problem(in, "metadata-disagrees") == rows[i].problem, "row %zu", i);
                /* Another component's metadata (a CUDA prefix's) is not its. */
                m.name = (char *)"cuda";
                in->cuda_version = (struct version){ 0 };
                metadata_apply(in, &m);
                ck_assert_uint_eq(in->cuda_version.count, 0);
                install_free(in);
        }
}
END_TEST

static Suite *metadata_suite(void)
{
        Suite *s = suite_create("metadata");
        TCase *tc = tcase_create("spec_json");

        tcase_add_test(tc, spec_json_reads_root_and_cuda_dependency);
        tcase_add_test(tc, spec_json_reads_older_forms);
        tcase_add_test(tc, spec_json_refuses_what_is_not_one);
        suite_add_tcase(s, tc);

        tc = tcase_create("easyconfig");
        tcase_add_test(tc, easyconfig_reads_simple_assignments);
        tcase_add_test(tc, easyconfig_tokenizer_cases);
        tcase_add_test(tc, easyconfig_refuses_hostile_text);
        suite_add_tcase(s, tc);

        tc = tcase_create("apply");
        tcase_add_test(tc, apply_fills_never_overrides);
        suite_add_tcase(s, tc);

        tc = tcase_create("robustness");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, parsers_survive_random_bytes);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(metadata_suite());
}
