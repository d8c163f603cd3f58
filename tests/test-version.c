/* test-version.c: version numbers, version files and name hints.
 *
 * Buffers handed to the parsers are copied into allocations of exactly
 * their length (no NUL after them), so ASan and valgrind catch any read past
 * len. */
#include <check.h>

#include "component-table.h"
#include "testutil.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>

#include "name-hint.h"
#include "util.h"
#include "version.h"

/* An exact-length, unterminated copy of len bytes of s. */
static char *dup_exact(const char *s, size_t len)
{
        char *p = xmalloc(len ? len : 1);

        memcpy(p, s, len);
        return p;
}

/* The version as text, "" for count 0, for comparing in one assertion. */
static void assert_version(const struct version *v, const char *want, const char *ctx)
{
        _cleanup_free_ char *got = version_to_string(v, 0);

        ck_assert_msg(streq(got, want), "%s: got '%s', want '%s'", ctx, got, want);
}

static int header_define(const char *text, const char *name, long *ret)
{
        size_t len = strlen(text);
        _cleanup_free_ char *buf = dup_exact(text, len);

        return header_define_long(buf, len, name, ret);
}

/* ---- version_parse and friends ---- */

START_TEST(version_parse_accepts_dotted_numbers)
{
        static const struct {
                const char *in;
                unsigned count;
                unsigned long n[VERSION_MAX_PARTS];
        } t[] = {
                { "12", 1, { 12 } },
                { "12.4", 2, { 12, 4 } },
                { "12.4.131", 3, { 12, 4, 131 } },
                { "9.7.1.26", 4, { 9, 7, 1, 26 } },
                { "0", 1, { 0 } },
                { "007.08", 2, { 7, 8 } },
                { "999999999.0", 2, { 999999999, 0 } },
                { "12.6.20241114", 3, { 12, 6, 20241114 } },
                { NULL },
        };

        for (size_t i = 0; t[i].in; i++) {
                struct version v;

                ck_assert_msg(version_parse(t[i].in, &v) == 0, "'%s' rejected", t[i].in);
                ck_assert_uint_eq(v.count, t[i].count);
                for (unsigned k = 0; k < t[i].count; k++)
                        ck_assert_msg(v.n[k] == t[i].n[k], "'%s' part %u", t[i].in, k);
        }
}
END_TEST

START_TEST(version_parse_rejects_malformed)
{
        static const char *const bad[] = {
                "", ".", "1.", ".1", "1..2", "+1", "-1", "1.-2", " 1", "1 ", "1. 2", "1.2.3.4.5",
                "1234567890", "1.1234567890", "1.a", "a", "v1.2", "1.2.3.4.", "0x10", "1,2",
                "12.4\n", "99999999999999999999999", NULL,
        };

        for (size_t i = 0; bad[i]; i++) {
                struct version v = { .n = { 42 }, .count = 42 };

                ck_assert_msg(version_parse(bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
                ck_assert_msg(v.count == 42, "'%s': output written on failure", bad[i]);
        }
        ck_assert_int_eq(version_parse(NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(version_parse_prefix_stops_at_first_stop_char)
{
        static const struct {
                const char *in;
                const char *want;
                const char *rest;
        } t[] = {
                { "12.4abc", "12.4", "abc" },
                { "12.4.", "12.4", "." },
                { "12.4.x", "12.4", ".x" },
                { "1.2.3.4.5", "1.2.3.4", ".5" },
                { "9.7.1.26_cuda12", "9.7.1.26", "_cuda12" },
                { "13.0, V13.0.88", "13.0", ", V13.0.88" },
                { "7", "7", "" },
                { NULL },
        };

        for (size_t i = 0; t[i].in; i++) {
                struct version v;
                const char *end;

                ck_assert_int_eq(version_parse_prefix(t[i].in, &v, &end), 0);
                assert_version(&v, t[i].want, t[i].in);
                ck_assert_str_eq(end, t[i].rest);
        }
        ck_assert_int_eq(version_parse_prefix("x1", NULL, NULL), -EINVAL);
        ck_assert_int_eq(version_parse_prefix("", NULL, NULL), -EINVAL);
        ck_assert_int_eq(version_parse_prefix("1.1234567890", NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(version_compare_missing_part_sorts_first)
{
        static const struct {
                const char *a, *b;
                int sign;
        } t[] = {
                { "12.4", "12.4", 0 },
                { "12.4", "12.4.0", -1 },
                { "12.4.0", "12.4.1", -1 },
                { "12.4.1", "12.4", 1 },
                { "9.10", "9.9", 1 },
                { "11.8.89", "12.0", -1 },
                { "2.28.9", "2.28.9.0", -1 },
                { "999999999", "1.1.1.1", 1 },
                { NULL },
        };

        for (size_t i = 0; t[i].a; i++) {
                struct version a, b;
                int c;

                ck_assert_int_eq(version_parse(t[i].a, &a), 0);
                ck_assert_int_eq(version_parse(t[i].b, &b), 0);
                c = version_compare(&a, &b);
                ck_assert_msg((c > 0) - (c < 0) == t[i].sign, "%s vs %s: %d", t[i].a, t[i].b, c);
                c = version_compare(&b, &a);
                ck_assert_msg((c > 0) - (c < 0) == -t[i].sign, "%s vs %s: %d", t[i].b, t[i].a, c);
        }
}
END_TEST

START_TEST(version_compare_empty_version_sorts_first)
{
        struct version none = { .count = 0 }, zero = { .n = { 0 }, .count = 1 };

        ck_assert_int_eq(version_compare(&none, &none), 0);
        ck_assert_int_lt(version_compare(&none, &zero), 0);
        ck_assert_int_gt(version_compare(&zero, &none), 0);
}
END_TEST

START_TEST(version_to_string_formats_requested_parts)
{
        static const struct {
                const char *in;
                unsigned parts;
                const char *want;
        } t[] = {
                { "12.4.131", 0, "12.4.131" },
                { "12.4.131", 2, "12.4" },
                { "12.4.131", 1, "12" },
                { "12.4.131", 3, "12.4.131" },
                { "12.4.131", 9, "12.4.131" },
                { "9.7.1.26", 0, "9.7.1.26" },
                { "007", 0, "7" },
                { NULL },
        };
        struct version none = { .count = 0 };
        _cleanup_free_ char *empty = version_to_string(&none, 0);

        for (size_t i = 0; t[i].in; i++) {
                struct version v;
                _cleanup_free_ char *s = NULL;

                ck_assert_int_eq(version_parse(t[i].in, &v), 0);
                s = version_to_string(&v, t[i].parts);
                ck_assert_str_eq(s, t[i].want);
        }
        ck_assert_str_eq(empty, "");
}
END_TEST

START_TEST(version_truncate_keeps_leading_parts)
{
        struct version v, t;

        ck_assert_int_eq(version_parse("12.6.20241114", &v), 0);
        t = version_truncate(&v, 2);
        assert_version(&t, "12.6", "truncate 2");
        ck_assert_uint_eq(t.n[2], 0);
        t = version_truncate(&v, 3);
        assert_version(&t, "12.6.20241114", "truncate 3");
        t = version_truncate(&v, 4);
        assert_version(&t, "12.6.20241114", "truncate 4");
        t = version_truncate(&v, 0);
        ck_assert_uint_eq(t.count, 0);
}
END_TEST

/* ---- component names ---- */

START_TEST(cuda_comp_names_round_trip)
{
        static const struct {
                enum cuda_comp c;
                const char *name, *json_key;
        } t[] = {
                { CUDA_COMP_CUDART, "cudart", "cuda_cudart" },
                { CUDA_COMP_NVCC, "nvcc", "cuda_nvcc" },
                { CUDA_COMP_NVRTC, "nvrtc", "cuda_nvrtc" },
                { CUDA_COMP_CUPTI, "cupti", "cuda_cupti" },
                { CUDA_COMP_CUBLAS, "cublas", "libcublas" },
                { CUDA_COMP_CUFFT, "cufft", "libcufft" },
                { CUDA_COMP_CURAND, "curand", "libcurand" },
                { CUDA_COMP_CUSOLVER, "cusolver", "libcusolver" },
                { CUDA_COMP_CUSPARSE, "cusparse", "libcusparse" },
                { CUDA_COMP_NVJITLINK, "nvjitlink", "libnvjitlink" },
                { _CUDA_COMP_INVALID, NULL, NULL },
        };

        for (size_t i = 0; t[i].name; i++) {
                ck_assert_str_eq(cuda_comp_to_string(t[i].c), t[i].name);
                ck_assert_int_eq(cuda_comp_from_version_json_key(t[i].json_key), t[i].c);
        }
        ck_assert_ptr_null(cuda_comp_to_string(_CUDA_COMP_MAX));
        ck_assert_ptr_null(cuda_comp_to_string(_CUDA_COMP_INVALID));
}
END_TEST

START_TEST(cuda_comp_unknown_json_keys_are_invalid)
{
        static const char *const keys[] = {
                "cuda", "cuda_cccl", "libnpp", "cudart", "CUDA_CUDART", "cuda_cudart ",
                "libcublaslt", "nvidia_driver", "", NULL,
        };

        for (size_t i = 0; keys[i]; i++)
                ck_assert_msg(cuda_comp_from_version_json_key(keys[i]) == _CUDA_COMP_INVALID,
                              "'%s'", keys[i]);
        ck_assert_int_eq(cuda_comp_from_version_json_key(NULL), _CUDA_COMP_INVALID);
}
END_TEST

START_TEST(cuda_comp_from_pip_name_normalises_like_pep503)
{
        static const struct {
                const char *name;
                enum cuda_comp want;
        } t[] = {
                { "nvidia-cuda-runtime", CUDA_COMP_CUDART },
                { "nvidia-cuda-runtime-cu12", CUDA_COMP_CUDART },
                { "nvidia_cuda_runtime_cu12", CUDA_COMP_CUDART },
                { "NVIDIA-Cuda_Runtime-CU13", CUDA_COMP_CUDART },
                { "nvidia.cuda.runtime", CUDA_COMP_CUDART },
                { "nvidia--cuda__runtime", CUDA_COMP_CUDART },
                { "nvidia-cuda-nvcc-cu12", CUDA_COMP_NVCC },
                { "nvidia-cuda-nvrtc", CUDA_COMP_NVRTC },
                { "nvidia-cuda-cupti-cu11", CUDA_COMP_CUPTI },
                { "nvidia_cublas", CUDA_COMP_CUBLAS },
                { "nvidia-cublas-cu12", CUDA_COMP_CUBLAS },
                { "nvidia-cufft-cu12", CUDA_COMP_CUFFT },
                { "nvidia-curand", CUDA_COMP_CURAND },
                { "nvidia-cusolver-cu12", CUDA_COMP_CUSOLVER },
                { "nvidia-cusparse", CUDA_COMP_CUSPARSE },
                { "nvidia-nvjitlink-cu12", CUDA_COMP_NVJITLINK },
                { "nvidia-cudnn-cu12", _CUDA_COMP_INVALID },
                { "nvidia-nccl-cu13", _CUDA_COMP_INVALID },
                { "nvidia-cusparselt-cu12", _CUDA_COMP_INVALID },
                { "nvidia-cublas-cu", _CUDA_COMP_INVALID },
                { "nvidia-cublas-cu1234", _CUDA_COMP_INVALID },
                { "nvidia-cublas-12", _CUDA_COMP_INVALID },
                { "cublas", _CUDA_COMP_INVALID },
                { "-cu12", _CUDA_COMP_INVALID },
                { "", _CUDA_COMP_INVALID },
                { NULL },
        };

        for (size_t i = 0; t[i].name; i++)
                ck_assert_msg(cuda_comp_from_pip_name(t[i].name) == t[i].want, "'%s'", t[i].name);
        ck_assert_int_eq(cuda_comp_from_pip_name(NULL), _CUDA_COMP_INVALID);
}
END_TEST

START_TEST(cuda_comp_from_pip_name_rejects_overlong_names)
{
        char name[4096];

        memset(name, '-', sizeof(name) - 1);
        name[sizeof(name) - 1] = '\0';
        memcpy(name, "nvidia-cublas", 13);
        /* Dashes collapse, so this is "nvidia-cublas-": not a component. */
        ck_assert_int_eq(cuda_comp_from_pip_name(name), _CUDA_COMP_INVALID);
        memset(name, 'a', sizeof(name) - 1);
        ck_assert_int_eq(cuda_comp_from_pip_name(name), _CUDA_COMP_INVALID);
}
END_TEST

/* ---- version.json ---- */

static const char version_json_11_8[] =
        "{\n"
        "   \"cuda\" : {\n"
        "      \"name\" : \"CUDA SDK\",\n"
        "      \"version\" : \"11.8.0\"\n"
        "   },\n"
        "   \"cuda_cccl\" : {\n"
        "      \"name\" : \"CUDA C++ Core Compute Libraries\",\n"
        "      \"version\" : \"11.8.89\"\n"
        "   },\n"
        "   \"cuda_cudart\" : {\n"
        "      \"name\" : \"CUDA Runtime (cudart)\",\n"
        "      \"version\" : \"11.8.89\"\n"
        "   },\n"
        "   \"cuda_cupti\" : {\n"
        "      \"name\" : \"CUPTI\",\n"
        "      \"version\" : \"11.8.87\"\n"
        "   },\n"
        "   \"cuda_nvcc\" : {\n"
        "      \"name\" : \"CUDA NVCC\",\n"
        "      \"version\" : \"11.8.89\"\n"
        "   },\n"
        "   \"cuda_nvrtc\" : {\n"
        "      \"name\" : \"CUDA NVRTC\",\n"
        "      \"version\" : \"11.8.89\"\n"
        "   },\n"
        "   \"fabricmanager\" : {\n"
        "      \"name\" : \"Fabric Manager\",\n"
        "      \"version\" : \"520.61.05\"\n"
        "   },\n"
        "   \"libcublas\" : {\n"
        "      \"name\" : \"CUDA cuBLAS\",\n"
        "      \"version\" : \"11.11.3.6\"\n"
        "   },\n"
        "   \"libcufft\" : {\n"
        "      \"name\" : \"CUDA cuFFT\",\n"
        "      \"version\" : \"10.9.0.58\"\n"
        "   },\n"
        "   \"libcurand\" : {\n"
        "      \"name\" : \"CUDA cuRAND\",\n"
        "      \"version\" : \"10.3.0.86\"\n"
        "   },\n"
        "   \"libcusolver\" : {\n"
        "      \"name\" : \"CUDA cuSOLVER\",\n"
        "      \"version\" : \"11.4.1.48\"\n"
        "   },\n"
        "   \"libcusparse\" : {\n"
        "      \"name\" : \"CUDA cuSPARSE\",\n"
        "      \"version\" : \"11.7.5.86\"\n"
        "   },\n"
        "   \"nsight_compute\" : {\n"
        "      \"name\" : \"Nsight Compute\",\n"
        "      \"version\" : \"2022.3.0.22\"\n"
        "   }\n"
        "}\n";

static int version_json(const char *text, size_t len, struct version_json *ret, struct diag *d)
{
        _cleanup_free_ char *buf = dup_exact(text, len);

        return version_json_parse(buf, len, "version.json", ret, d);
}

START_TEST(version_json_update_release_is_kept)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct version_json vj;
        static const struct {
                enum cuda_comp c;
                const char *want;
        } comps[] = {
                { CUDA_COMP_CUDART, "11.8.89" },
                { CUDA_COMP_NVCC, "11.8.89" },
                { CUDA_COMP_NVRTC, "11.8.89" },
                { CUDA_COMP_CUPTI, "11.8.87" },
                { CUDA_COMP_CUBLAS, "11.11.3.6" },
                { CUDA_COMP_CUFFT, "10.9.0.58" },
                { CUDA_COMP_CURAND, "10.3.0.86" },
                { CUDA_COMP_CUSOLVER, "11.4.1.48" },
                { CUDA_COMP_CUSPARSE, "11.7.5.86" },
                { CUDA_COMP_NVJITLINK, NULL },
                { _CUDA_COMP_INVALID, NULL },
        };

        ck_assert_int_eq(version_json(version_json_11_8, strlen(version_json_11_8), &vj, &d), 0);
        assert_version(&vj.cuda, "11.8", "cuda");
        assert_version(&vj.release, "11.8.0", "release");
        for (size_t i = 0; comps[i].c != _CUDA_COMP_INVALID; i++) {
                if (comps[i].want)
                        ck_assert_str_eq(vj.components[comps[i].c], comps[i].want);
                else
                        ck_assert_ptr_null(vj.components[comps[i].c]);
        }
        ck_assert_ptr_null(d.message);
        version_json_release(&vj);
        ck_assert_ptr_null(vj.components[CUDA_COMP_CUDART]);
        version_json_release(&vj); /* twice is harmless */
}
END_TEST

START_TEST(version_json_date_stamp_gives_no_release)
{
        static const struct {
                const char *cuda;
                const char *want_cuda, *want_release;
        } t[] = {
                { "11.8.20220929", "11.8", "" },
                { "12.1.20230222", "12.1", "" },
                { "12.6.20241114", "12.6", "" },
                { "13.2.20260407", "13.2", "" },
                { "12.2.140", "12.2", "" },  /* Jetson build number */
                { "12.6.11", "12.6", "12.6.11" },
                { "11.5.2", "11.5", "11.5.2" },
                { "13.3.1", "13.3", "13.3.1" },
                { "12.4.99", "12.4", "12.4.99" },
                { "12.4.100", "12.4", "" },
                { "12.4", "12.4", "" },
                { "12.4.1.2", "12.4", "" },
                { "12.4.0-rc1", "12.4", "" },
                { NULL },
        };

        for (size_t i = 0; t[i].cuda; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_free_ char *text = xasprintf(
                        "{\"cuda\":{\"name\":\"CUDA SDK\",\"version\":\"%s\"},"
                        "\"cuda_cudart\":{\"name\":\"x\",\"version\":\"12.6.77\"}}",
                        t[i].cuda);
                struct version_json vj;

                ck_assert_msg(version_json(text, strlen(text), &vj, &d) == 0, "%s: %s", t[i].cuda,
                              d.message);
                assert_version(&vj.cuda, t[i].want_cuda, t[i].cuda);
                assert_version(&vj.release, t[i].want_release, t[i].cuda);
                ck_assert_str_eq(vj.components[CUDA_COMP_CUDART], "12.6.77");
                version_json_release(&vj);
        }
}
END_TEST

START_TEST(version_json_ignores_odd_component_values)
{
        static const char text[] =
                "{\"cuda\":{\"version\":\"12.4.1\"},"
                "\"cuda_cudart\":\"12.4.127\","
                "\"cuda_nvcc\":{\"version\":12.4},"
                "\"cuda_nvrtc\":{\"version\":\"12.4.x\"},"
                "\"libcublas\":{\"name\":\"CUDA cuBLAS\"},"
                "\"libcufft\":[\"11.2.1.3\"],"
                "\"libcurand\":null,"
                "\"libnvjitlink\":{\"version\":\"12.4.127\"},"
                "\"libnvjitlink\":{\"version\":\"12.4.128\"},"
                "\"unknown\":{\"version\":\"1.0\"}}";
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct version_json vj;

        ck_assert_int_eq(version_json(text, strlen(text), &vj, &d), 0);
        for (int c = 0; c < _CUDA_COMP_MAX; c++)
                if (c != CUDA_COMP_NVJITLINK)
                        ck_assert_msg(!vj.components[c], "%s set", cuda_comp_to_string(c));
        /* Duplicate keys are allowed; jansson keeps the last. */
        ck_assert_str_eq(vj.components[CUDA_COMP_NVJITLINK], "12.4.128");
        version_json_release(&vj);
}
END_TEST

START_TEST(version_json_syntax_error_reports_position)
{
        static const char text[] = "{\n   \"cuda\" : {\n      \"version\" : 11.8.0\n   }\n}\n";
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *s = NULL;
        struct version_json vj = { .cuda.count = 7 };

        ck_assert_int_eq(version_json(text, strlen(text), &vj, &d), -EBADMSG);
        ck_assert_uint_eq(vj.cuda.count, 7);
        ck_assert_str_eq(d.file, "version.json");
        ck_assert_uint_eq(d.line, 3);
        ck_assert_uint_gt(d.col, 0);
        ck_assert_ptr_nonnull(d.message);
        s = diag_format(&d);
        ck_assert_msg(startswith(s, "version.json:3:"), "%s", s);
}
END_TEST

START_TEST(version_json_nul_byte_reports_position)
{
        static const char text[] = "{\"cuda\":\n {\"version\":\"12.4.1\"}\0}";
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct version_json vj;

        ck_assert_int_eq(version_json(text, sizeof(text) - 1, &vj, &d), -EBADMSG);
        ck_assert_uint_eq(d.line, 2);
        ck_assert_uint_eq(d.col, 22);
}
END_TEST

#define NUL_JSON "{\"cu\0da\":{\"version\":\"12.4.1\"}}"

START_TEST(version_json_rejects_hostile_input)
{
        static const struct {
                const char *text;
                size_t len; /* 0: strlen */
                const char *needle; /* in the message, or NULL */
        } t[] = {
                { "", 0, NULL },
                { "   \n", 0, NULL },
                { "{", 0, NULL },
                { "{\"cuda\" : {\"version\" : \"12.4", 0, NULL },
                { "{\"cuda\" : {\"version\" : \"12.4.1\"}", 0, NULL },
                { "{\"cuda\":{\"version\":\"12.4.1\"}} trailing", 0, NULL },
                { "{\"cuda\":{\"version\":\"\xff\xfe\"}}", 0, NULL },
                { "{\"cuda\":{\"version\":\"12.4\xc3\"}}", 0, NULL },
                { "{\"cuda\":{\"version\":\"\\ud800\"}}", 0, NULL },
                { "\xef\xbb\xbf{\"cuda\":{\"version\":\"12.4.1\"}}", 0, NULL },
                { NUL_JSON, sizeof(NUL_JSON) - 1, NULL },
                { "[]", 0, "object" },
                { "\"12.4\"", 0, NULL },
                { "{}", 0, "\"cuda\"" },
                { "{\"cuda\":\"12.4.1\"}", 0, "\"cuda\"" },
                { "{\"cuda\":{\"name\":\"CUDA SDK\"}}", 0, "\"version\"" },
                { "{\"cuda\":{\"version\":12.4}}", 0, "\"version\"" },
                { "{\"cuda\":{\"version\":\"\"}}", 0, "\"cuda\"" },
                { "{\"cuda\":{\"version\":\"12\"}}", 0, "MAJOR.MINOR" },
                { "{\"cuda\":{\"version\":\"x.y.z\"}}", 0, "MAJOR.MINOR" },
                { "{\"cuda\":{\"version\":\"12.x\"}}", 0, "MAJOR.MINOR" },
                { "{\"cuda\":{\"version\":\"-12.4\"}}", 0, "MAJOR.MINOR" },
                { "{\"cuda\":{\"version\":\"12345678901.4\"}}", 0, "MAJOR.MINOR" },
                { "{\"cuda\":{\"version\":\"12.12345678901\"}}", 0, "MAJOR.MINOR" },
                { "{\"cuda\":{\"version\":\"12.4.1\"},\"x\":1e99999}", 0, NULL },
                { "{\"cuda\":{\"version\":\"12.4.1\"},\"x\":123456789012345678901234567890}", 0,
                  NULL },
                { NULL },
        };

        for (size_t i = 0; t[i].text; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                size_t len = t[i].len ? t[i].len : strlen(t[i].text);
                struct version_json vj = { .cuda.count = 9 };
                int r;

                r = version_json(t[i].text, len, &vj, &d);
                ck_assert_msg(r == -EBADMSG, "row %zu: %d", i, r);
                ck_assert_msg(vj.cuda.count == 9, "row %zu: output written", i);
                ck_assert_msg(d.message && *d.message, "row %zu: no message", i);
                ck_assert_str_eq(d.file, "version.json");
                if (t[i].needle)
                        ck_assert_msg(strstr(d.message, t[i].needle), "row %zu: '%s'", i,
                                      d.message);
        }
}
END_TEST

START_TEST(version_json_truncated_at_every_length_fails_cleanly)
{
        size_t full = strlen(version_json_11_8);

        /* Every proper prefix of the document is invalid JSON except those
         * that end only in trailing whitespace after the closing brace. */
        for (size_t len = 0; len < full - 1; len++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct version_json vj;

                ck_assert_msg(version_json(version_json_11_8, len, &vj, &d) == -EBADMSG, "len %zu",
                              len);
        }
}
END_TEST

START_TEST(version_json_rejects_oversized_input)
{
        size_t len = ((size_t)16 << 20) + 1;
        _cleanup_free_ char *buf = xcalloc(1, len);
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct version_json vj;

        ck_assert_int_eq(version_json_parse(buf, len, "big.json", &vj, &d), -EFBIG);
        ck_assert_str_eq(d.file, "big.json");
        ck_assert_int_eq(version_json_parse(buf, len, NULL, &vj, NULL), -EFBIG);
}
END_TEST

START_TEST(version_json_accepts_null_diag_and_file)
{
        static const char good[] = "{\"cuda\":{\"version\":\"13.0.2\"}}";
        struct version_json vj;

        ck_assert_int_eq(version_json_parse("{", 1, NULL, &vj, NULL), -EBADMSG);
        ck_assert_int_eq(version_json_parse(good, sizeof(good) - 1, NULL, &vj, NULL), 0);
        assert_version(&vj.release, "13.0.2", "release");
        version_json_release(&vj);
        version_json_release(NULL);
}
END_TEST

/* ---- version.txt ---- */

START_TEST(version_txt_reads_first_line)
{
        static const struct {
                const char *text;
                const char *want;
        } t[] = {
                { "CUDA Version 11.0.228\n", "11.0.228" },
                { "CUDA Version 9.0.176", "9.0.176" },
                { "CUDA Version 10.2.89\r\n", "10.2.89" },
                { "CUDA Version 11.0.207 \t\n", "11.0.207" },
                { "CUDA Version 9.2.148\nCUDA Patch Version 9.2.148.1\n"
                  "CUDA Patch Version 9.2.88.1\n",
                  "9.2.148" },
                { "\xef\xbb\xbf" "CUDA Version 8.0.61\n", "8.0.61" },
                { "CUDA Version 10.1\n", "10.1" },
                { NULL },
        };

        for (size_t i = 0; t[i].text; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                size_t len = strlen(t[i].text);
                _cleanup_free_ char *buf = dup_exact(t[i].text, len);
                struct version v;

                ck_assert_msg(version_txt_parse(buf, len, "version.txt", &v, &d) == 0,
                              "row %zu: %s", i, d.message);
                assert_version(&v, t[i].want, t[i].text);
        }
}
END_TEST

START_TEST(version_txt_rejects_malformed)
{
        static const struct {
                const char *text;
                size_t len; /* 0: strlen */
                unsigned col;
        } t[] = {
                { "", 0, 0 },
                { "\n", 0, 1 },
                { "CUDA Version\n", 0, 1 },
                { "CUDA Version \n", 0, 1 },
                { "cuda version 11.0.228\n", 0, 1 },
                { "CUDA  Version 11.0.228\n", 0, 1 },
                { "\nCUDA Version 11.0.228\n", 0, 1 },
                { "CUDA Version 11\n", 0, 14 },
                { "CUDA Version v11.0\n", 0, 14 },
                { "CUDA Version 11.0.228 beta\n", 0, 22 },
                { "CUDA Version 11.0.228x\n", 0, 22 },
                { "CUDA Version 11.0.2\0" "28\n", 23, 14 },
                { "CUDA Version 1234567890.0\n", 0, 14 },
                { "CUDA Version 11.0.228.1.2\n", 0, 24 },
                { "CUDA Version 11.0.11111111111111111111111111111111111111111111111111111111111\n",
                  0, 14 },
                { "\xff\xfe\x00\x43", 4, 1 },
                { NULL },
        };

        for (size_t i = 0; t[i].text; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                size_t len = t[i].len ? t[i].len : strlen(t[i].text);
                _cleanup_free_ char *buf = dup_exact(t[i].text, len);
                struct version v = { .count = 5 };

                ck_assert_msg(version_txt_parse(buf, len, "version.txt", &v, &d) == -EBADMSG,
                              "row %zu accepted", i);
                ck_assert_uint_eq(v.count, 5);
                ck_assert_str_eq(d.file, "version.txt");
                ck_assert_msg(d.col == t[i].col, "row %zu: col %u, want %u", i, d.col, t[i].col);
        }
}
END_TEST

/* ---- header defines ---- */

START_TEST(header_define_matches_whole_tokens)
{
        static const struct {
                const char *text;
                const char *name;
                int r;
                long want;
        } t[] = {
                { "#define CUDA_VERSION 13000\n", "CUDA_VERSION", 0, 13000 },
                { "#define CUDART_VERSION  13000\n", "CUDART_VERSION", 0, 13000 },
                { "#define CUDART_VERSION 13000\n", "CUDA_VERSION", -ENOENT, 0 },
                { "#define CUDA_VERSION_X 1\n#define CUDA_VERSION 12040\n", "CUDA_VERSION", 0,
                  12040 },
                { "#define XCUDA_VERSION 1\n", "CUDA_VERSION", -ENOENT, 0 },
                { "  #  define\tCUDA_VERSION\t11080\n", "CUDA_VERSION", 0, 11080 },
                { "\t#define CUSOLVER_VER_MAJOR 12\n", "CUSOLVER_VER_MAJOR", 0, 12 },
                { "#define CUDA_VERSION 10020 /* CUDA 10.2 */\n", "CUDA_VERSION", 0, 10020 },
                { "#define CUDA_VERSION 10020 // CUDA 10.2\n", "CUDA_VERSION", 0, 10020 },
                { "#define CUDA_VERSION 10020L\n", "CUDA_VERSION", 0, 10020 },
                { "#define NEG -5\n", "NEG", 0, -5 },
                { "int x; // #define CUDA_VERSION 1\n", "CUDA_VERSION", -ENOENT, 0 },
                { "#ifdef CUDA_VERSION 1\n", "CUDA_VERSION", -ENOENT, 0 },
                { "#defined CUDA_VERSION 1\n", "CUDA_VERSION", -ENOENT, 0 },
                { "#define CUDA_VERSION\n", "CUDA_VERSION", -EINVAL, 0 },
                { "#define CUDA_VERSION 0x3000\n", "CUDA_VERSION", -EINVAL, 0 },
                { "#define CUDA_VERSION 13000 + 1\n", "CUDA_VERSION", -EINVAL, 0 },
                { "#define CUDA_VERSION (13000)\n", "CUDA_VERSION", -EINVAL, 0 },
                { "#define CUDA_VERSION 1 \\\n  + 2\n", "CUDA_VERSION", -EINVAL, 0 },
                { "#define NCCL_VERSION(X,Y,Z) ((X) * 10000 + (Y) * 100 + (Z))\n"
                  "#define NCCL_VERSION 5\n",
                  "NCCL_VERSION", 0, 5 },
                { "#define NCCL_VERSION(X,Y,Z) 1\n", "NCCL_VERSION", -ENOENT, 0 },
                { "#define A 1\n#define A 2\n", "A", 0, 1 },
                { "", "A", -ENOENT, 0 },
                { NULL },
        };

        for (size_t i = 0; t[i].text; i++) {
                long v = -42;
                int r = header_define(t[i].text, t[i].name, &v);

                ck_assert_msg(r == t[i].r, "row %zu: %d, want %d", i, r, t[i].r);
                ck_assert_msg(v == (r == 0 ? t[i].want : -42), "row %zu: value %ld", i, v);
        }
}
END_TEST

START_TEST(header_define_handles_crlf_tabs_and_no_final_newline)
{
        static const char *const texts[] = {
                "#define CUDNN_MAJOR 9\r\n#define CUDNN_MINOR 19\r\n",
                "#define\tCUDNN_MAJOR\t9\n#define\tCUDNN_MINOR\t19",
                "/* c */\r\n#define CUDNN_MAJOR 9 \r\n#define CUDNN_MINOR 19\t\r",
                "#define CUDNN_MAJOR 9\n\n\n#define CUDNN_MINOR 19",
                NULL,
        };

        for (size_t i = 0; texts[i]; i++) {
                long v;

                ck_assert_int_eq(header_define(texts[i], "CUDNN_MINOR", &v), 0);
                ck_assert_int_eq(v, 19);
                ck_assert_int_eq(header_define(texts[i], "CUDNN_MAJOR", &v), 0);
                ck_assert_int_eq(v, 9);
        }
}
END_TEST

START_TEST(header_define_rejects_out_of_range_numbers)
{
        long v = 0;

        ck_assert_int_eq(header_define("#define X 9223372036854775807\n", "X", &v), 0);
        ck_assert(v == LONG_MAX);
        ck_assert_int_eq(header_define("#define X -9223372036854775808\n", "X", &v), 0);
        ck_assert(v == LONG_MIN);
        ck_assert_int_eq(header_define("#define X 9223372036854775808\n", "X", &v), -EINVAL);
        ck_assert_int_eq(header_define("#define X -9223372036854775809\n", "X", &v), -EINVAL);
        ck_assert_int_eq(header_define("#define X 99999999999999999999999999999\n", "X", &v),
                         -EINVAL);
        ck_assert_int_eq(header_define("#define X -\n", "X", &v), -EINVAL);
}
END_TEST

START_TEST(header_define_rejects_bad_names)
{
        long v;

        ck_assert_int_eq(header_define("#define X 1\n", "", &v), -EINVAL);
        ck_assert_int_eq(header_define_long("#define X 1\n", 12, NULL, &v), -EINVAL);
        ck_assert_int_eq(header_define("#define X 1\n", "(", &v), -EINVAL);
}
END_TEST

START_TEST(header_define_stops_at_len)
{
        static const char text[] = "#define CUDA_VERSION 12040\n";
        long v;

        /* The value is cut by len: "1204" is what the buffer holds. */
        ck_assert_int_eq(header_define_long(text, 25, "CUDA_VERSION", &v), 0);
        ck_assert_int_eq(v, 1204);
        ck_assert_int_eq(header_define_long(text, 18, "CUDA_VERSION", &v), -ENOENT);
        ck_assert_int_eq(header_define_long(text, 0, "CUDA_VERSION", &v), -ENOENT);
}
END_TEST

START_TEST(cuda_header_gives_major_minor)
{
        static const struct {
                long code;
                const char *want;
        } t[] = {
                { 13000, "13.0" }, { 12040, "12.4" }, { 11080, "11.8" }, { 10020, "10.2" },
                { 9020, "9.2" },   { 12090, "12.9" }, { 0, NULL },
        };

        for (size_t i = 0; t[i].want; i++) {
                _cleanup_free_ char *text = xasprintf(
                        "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n"
                        "#define CUDA_VERSION_MAJOR 99\n#define CUDA_VERSION %ld\n#endif\n",
                        t[i].code);
                _cleanup_free_ char *buf = dup_exact(text, strlen(text));
                struct version v;

                ck_assert_int_eq(cuda_header_parse(buf, strlen(text), &v), 0);
                assert_version(&v, t[i].want, text);
        }
}
END_TEST

START_TEST(cuda_header_rejects_bad_values)
{
        static const struct {
                const char *text;
                int r;
        } t[] = {
                { "#define CUDA_VERSION 12041\n", -EBADMSG },
                { "#define CUDA_VERSION 999\n", -EBADMSG },
                { "#define CUDA_VERSION -12040\n", -EBADMSG },
                { "#define CUDA_VERSION 9223372036854775800\n", -EBADMSG },
                { "#define CUDA_VERSION __CUDA_API_VERSION\n", -EINVAL },
                { "#define CUDART_VERSION 12040\n", -ENOENT },
                { "", -ENOENT },
                { NULL },
        };

        for (size_t i = 0; t[i].text; i++) {
                struct version v = { .count = 3 };
                size_t len = strlen(t[i].text);
                _cleanup_free_ char *buf = dup_exact(t[i].text, len);

                ck_assert_msg(cuda_header_parse(buf, len, &v) == t[i].r, "row %zu", i);
                ck_assert_uint_eq(v.count, 3);
        }
}
END_TEST

/* cudnn_version.h of cuDNN 8.9.7, defines as shipped. */
static const char cudnn_version_8_9_7[] =
        "/*\n * Copyright 2014-2023 NVIDIA Corporation.  All rights reserved.\n */\n\n"
        "/**\n * \\file: The master cuDNN version file.\n */\n\n"
        "#ifndef CUDNN_VERSION_H_\n"
        "#define CUDNN_VERSION_H_\n\n"
        "#define CUDNN_MAJOR 8\n"
        "#define CUDNN_MINOR 9\n"
        "#define CUDNN_PATCHLEVEL 7\n\n"
        "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n\n"
        "/* cannot use constexpr here since this is a C-only file */\n"
        "/* Below is the max SM version this cuDNN library is aware of and supports natively */\n\n"
        "#define CUDNN_MAX_SM_MAJOR_NUMBER 9\n"
        "#define CUDNN_MAX_SM_MINOR_NUMBER 0\n"
        "#define CUDNN_MAX_DEVICE_VERSION (CUDNN_MAX_SM_MAJOR_NUMBER * 100) + "
        "(CUDNN_MAX_SM_MINOR_NUMBER * 10)\n\n"
        "/* Here are constants for each of the SM Architectures we support to use in "
        "code where device version checks must be made */\n\n"
        "/* MAXWELL SM 50 52 53 */\n"
        "#define CUDNN_SM_50 500\n"
        "#define CUDNN_SM_52 520\n"
        "#define CUDNN_SM_53 530\n\n"
        "#define CUDNN_SM_90 900\n\n"
        "/* To be used when we need to reference the latest SM */\n"
        "#define CUDNN_SM_9X_END 999\n\n"
        "/* This is the minimum SM version this cuDNN library supports */\n"
        "#define CUDNN_MIN_DEVICE_VERSION CUDNN_SM_35\n\n"
        "#endif /* CUDNN_VERSION_H */\n";

START_TEST(cudnn_header_ignores_sm_macros)
{
        size_t len = strlen(cudnn_version_8_9_7);
        _cleanup_free_ char *buf = dup_exact(cudnn_version_8_9_7, len);
        struct version v;

        ck_assert_int_eq(cudnn_header_parse(buf, len, &v), 0);
        assert_version(&v, "8.9.7", "cudnn 8.9.7");
}
END_TEST

/* magma_types.h spells its parts out (MICRO, not PATCH): all three or
 * nothing, each a plain number. */
START_TEST(header_define_triple_reads_magma_types_h)
{
        static const char text[] =
                "// MAGMA version\n#define MAGMA_VERSION_MAJOR 2\n#define MAGMA_VERSION_MINOR 10\n"
                "#define MAGMA_VERSION_MICRO 0\n\n"
                "// stage is \"svn\", \"beta#\", \"rc#\" (release candidate), or blank (\"\") for final release\n"
                "#define MAGMA_VERSION_STAGE \"svn\"\n";
        static const char no_micro[] = "#define MAGMA_VERSION_MAJOR 2\n#define MAGMA_VERSION_MINOR 10\n"
                                       "#define MAGMA_VERSION_PATCH 0\n";
        static const char bad[] = "#define MAGMA_VERSION_MAJOR 2\n#define MAGMA_VERSION_MINOR x\n"
                                  "#define MAGMA_VERSION_MICRO 0\n";
        _cleanup_free_ char *buf = dup_exact(text, strlen(text));
        _cleanup_free_ char *nm = dup_exact(no_micro, strlen(no_micro));
        _cleanup_free_ char *b = dup_exact(bad, strlen(bad));
        static const char *const magma_names[4] = { "MAGMA_VERSION_MAJOR", "MAGMA_VERSION_MINOR",
                                                    "MAGMA_VERSION_MICRO", NULL };
        struct version v = { .count = 0 };

        ck_assert_int_eq(header_define_triple(buf, strlen(text), magma_names, &v),
                         0);
        assert_version(&v, "2.10.0", "magma 2.10.0");
        ck_assert_int_eq(header_define_triple(nm, strlen(no_micro), magma_names, &v),
                         -ENOENT);
        ck_assert_int_eq(header_define_triple(b, strlen(bad), magma_names, &v),
                         -EINVAL);
        /* Untouched on failure. */
        assert_version(&v, "2.10.0", "magma 2.10.0 kept");
}
END_TEST

/* The names MAGMA's installs carry: EasyBuild, Spack, pytorch's conda
 * packages (magma-cuda126: CUDA 12.6). */
START_TEST(name_hint_magma_forms)
{
        struct name_hint h;

        ck_assert_int_eq(name_hint_parse("magma", "2.9.0-foss-2024a-CUDA-12.6.0", "magma", &h), 0);
        assert_version(&h.version, "2.9.0", "easybuild version");
        assert_version(&h.cuda, "12.6.0", "easybuild cuda");
        ck_assert_int_eq(name_hint_parse("magma", "magma-2.8.0-w3jvkf7hq2mw5rcqbyzylpkyxpbfkm7v", NULL, &h), 0);
        assert_version(&h.version, "2.8.0", "spack version");
        ck_assert_uint_eq(h.cuda.count, 0);
        ck_assert_int_eq(name_hint_parse("magma", "magma-cuda126-2.6.1-1", NULL, &h), 0);
        assert_version(&h.version, "2.6.1", "conda version");
        assert_version(&h.cuda, "12.6", "conda cuda");
        ck_assert_int_eq(name_hint_parse("magma", "magma-cuda118-2.6.1-1", NULL, &h), 0);
        assert_version(&h.cuda, "11.8", "conda cuda 11.8");
        ck_assert_int_eq(name_hint_parse("magma", "2.8.0", "magma", &h), 0);
        assert_version(&h.version, "2.8.0", "site version");
        /* A MAGMA version under another component's directory is not one. */
        ck_assert_int_eq(name_hint_parse("magma", "12.6.0", "CUDA", &h), -ENOENT);
}
END_TEST

START_TEST(cudnn_header_reads_sm_macros_first_then_version)
{
        static const char text[] =
                "#define CUDNN_MAX_SM_MAJOR_NUMBER 12\r\n"
                "#define CUDNN_MAX_SM_MINOR_NUMBER 1\r\n"
                "#define CUDNN_SM_90 900\r\n"
                "#define CUDNN_MAJOR_X 1\r\n"
                "#define CUDNN_MAJOR 9\r\n"
                "#define CUDNN_MINOR 19\r\n"
                "#define CUDNN_PATCHLEVEL 0\r\n"
                "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + "
                "CUDNN_PATCHLEVEL)";
        _cleanup_free_ char *buf = dup_exact(text, sizeof(text) - 1);
        struct version v;

        ck_assert_int_eq(cudnn_header_parse(buf, sizeof(text) - 1, &v), 0);
        assert_version(&v, "9.19.0", "cudnn 9.19.0");
}
END_TEST

START_TEST(cudnn_header_missing_or_bad_macro_fails)
{
        static const struct {
                const char *text;
                int r;
        } t[] = {
                { "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n", -ENOENT },
                { "#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n", -ENOENT },
                { "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR x\n#define CUDNN_PATCHLEVEL 0\n",
                  -EINVAL },
                { "#define CUDNN_MAJOR -9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n",
                  -EINVAL },
                { "#define CUDNN_MAJOR 1000000000\n#define CUDNN_MINOR 1\n"
                  "#define CUDNN_PATCHLEVEL 0\n",
                  -EINVAL },
                { "#define CUDNN_VERSION 8907\n", -ENOENT },
                { "", -ENOENT },
                { NULL },
        };

        for (size_t i = 0; t[i].text; i++) {
                struct version v = { .count = 9 };
                size_t len = strlen(t[i].text);
                _cleanup_free_ char *buf = dup_exact(t[i].text, len);

                ck_assert_msg(cudnn_header_parse(buf, len, &v) == t[i].r, "row %zu", i);
                ck_assert_uint_eq(v.count, 9);
        }
}
END_TEST

START_TEST(nccl_header_checks_version_code)
{
        static const struct {
                unsigned long major, minor, patch;
                const char *code; /* NULL: no NCCL_VERSION_CODE line */
                int r;
        } t[] = {
                { 2, 21, 5, "22105", 0 },
                { 2, 28, 9, "22809", 0 },
                { 2, 8, 4, "2804", 0 },
                { 2, 3, 5, "2305", 0 },
                { 2, 9, 6, "20906", 0 },
                { 2, 10, 3, "21003", 0 },
                { 3, 0, 1, "30001", 0 },
                { 2, 21, 5, NULL, 0 },
                { 2, 21, 5, "NCCL_VERSION(2, 21, 5)", 0 },
                { 2, 21, 5, "2215", -EBADMSG },
                { 2, 8, 4, "20804", -EBADMSG },
                { 2, 9, 6, "2906", -EBADMSG },
                { 2, 21, 5, "-22105", -EBADMSG },
                { 2, 21, 5, "22106", -EBADMSG },
                { 0, 0, 0, "", 1 }, /* sentinel */
        };

        for (size_t i = 0; t[i].r != 1; i++) {
                _cleanup_free_ char *text = xasprintf(
                        "#ifndef NCCL_H_\n#define NCCL_H_\n#include <cuda_runtime.h>\n"
                        "#define NCCL_MAJOR %lu\n#define NCCL_MINOR %lu\n#define NCCL_PATCH %lu\n"
                        "#define NCCL_SUFFIX \"\"\n\n%s%s\n"
                        "#define NCCL_VERSION(X,Y,Z) (((X) <= 2 && (Y) <= 8) ? "
                        "(X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))\n",
                        t[i].major, t[i].minor, t[i].patch,
                        t[i].code ? "#define NCCL_VERSION_CODE " : "", t[i].code ? t[i].code : "");
                size_t len = strlen(text);
                _cleanup_free_ char *buf = dup_exact(text, len);
                struct version v = { .count = 7 };
                int r = nccl_header_parse(buf, len, &v);

                ck_assert_msg(r == t[i].r, "row %zu: %d", i, r);
                if (r == 0) {
                        ck_assert_uint_eq(v.count, 3);
                        ck_assert_uint_eq(v.n[0], t[i].major);
                        ck_assert_uint_eq(v.n[1], t[i].minor);
                        ck_assert_uint_eq(v.n[2], t[i].patch);
                } else
                        ck_assert_uint_eq(v.count, 7);
        }
}
END_TEST

START_TEST(nccl_header_needs_all_three_parts)
{
        static const char text[] = "#define NCCL_MAJOR 2\n#define NCCL_MINOR 21\n";
        struct version v;

        ck_assert_int_eq(nccl_header_parse(text, sizeof(text) - 1, &v), -ENOENT);
        ck_assert_int_eq(nccl_header_parse("", 0, &v), -ENOENT);
}
END_TEST

/* ---- METADATA, nvcc and NCCL strings, sonames ---- */

START_TEST(metadata_reads_name_and_version)
{
        static const struct {
                const char *text;
                const char *name, *version;
        } t[] = {
                { "Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 9.19.0.56\n"
                  "Summary: cuDNN runtime libraries\nRequires-Dist: nvidia-cublas\n\n"
                  "Version: 1.0\nbody\n",
                  "nvidia-cudnn-cu13", "9.19.0.56" },
                { "Metadata-Version: 2.1\r\nName: nvidia-cuda-runtime-cu12\r\nVersion: 12.8.57\r\n",
                  "nvidia-cuda-runtime-cu12", "12.8.57" },
                { "version:2.26.2\nNAME:\tnvidia-nccl-cu12  \n", "nvidia-nccl-cu12", "2.26.2" },
                { "Name: a\nName: b\nVersion: 1\nVersion: 2", "a", "1" },
                { "Name: torch\nVersion: 2.7.1+cu128\n", "torch", "2.7.1+cu128" },
                { NULL },
        };

        for (size_t i = 0; t[i].text; i++) {
                size_t len = strlen(t[i].text);
                _cleanup_free_ char *buf = dup_exact(t[i].text, len);
                _cleanup_free_ char *name = NULL, *version = NULL;

                ck_assert_msg(metadata_parse(buf, len, &name, &version) == 0, "row %zu", i);
                ck_assert_str_eq(name, t[i].name);
                ck_assert_str_eq(version, t[i].version);
        }
}
END_TEST

START_TEST(metadata_requires_both_headers_before_body)
{
        static const struct {
                const char *text;
                size_t len;
        } t[] = {
                { "", 0 },
                { "Name: nvidia-nccl-cu12\n", 0 },
                { "Version: 2.26.2\n", 0 },
                { "Name: nvidia-nccl-cu12\n\nVersion: 2.26.2\n", 0 },
                { "Name: nvidia-nccl-cu12\r\n\r\nVersion: 2.26.2\r\n", 0 },
                { "Name:\nVersion: 1\n", 0 },
                { "Name:   \nVersion: 1\n", 0 },
                { "Name: a\0b\nVersion: 1\n", 21 },
                { "Names: a\nVersions: 1\n", 0 },
                { "\nName: a\nVersion: 1\n", 0 },
                { NULL, 0 },
        };

        for (size_t i = 0; t[i].text; i++) {
                size_t len = t[i].len ? t[i].len : strlen(t[i].text);
                _cleanup_free_ char *buf = dup_exact(t[i].text, len);
                char *name = (char *)"unset", *version = (char *)"unset";

                ck_assert_msg(metadata_parse(buf, len, &name, &version) == -EBADMSG, "row %zu", i);
                ck_assert_str_eq(name, "unset");
                ck_assert_str_eq(version, "unset");
        }
}
END_TEST

START_TEST(nvcc_release_string_is_found_anywhere)
{
        static const struct {
                const char *s;
                int r;
                const char *release, *nvcc;
        } t[] = {
                { "Cuda compilation tools, release 13.0, V13.0.88", 0, "13.0", "13.0.88" },
                { "nvcc: NVIDIA (R) Cuda compiler driver\n"
                  "Copyright (c) 2005-2024 NVIDIA Corporation\n"
                  "Built on Thu_Mar_28_02:18:24_PDT_2024\n"
                  "Cuda compilation tools, release 12.4, V12.4.131\n"
                  "Build cuda_12.4.r12.4/compiler.34097967_0\n",
                  0, "12.4", "12.4.131" },
                { "Cuda compilation tools, release 12.0, V12.0.140\n", 0, "12.0", "12.0.140" },
                { "Cuda compilation tools, release %s, V%s|"
                  "Cuda compilation tools, release 11.5, V11.5.119",
                  0, "11.5", "11.5.119" },
                { "Cuda compilation tools, release 13.0", -EBADMSG, NULL, NULL },
                { "Cuda compilation tools, release 13.0, 13.0.88", -EBADMSG, NULL, NULL },
                { "Cuda compilation tools, release 13, V13.0.88", -EBADMSG, NULL, NULL },
                { "Cuda compilation tools, release 13.0, V", -EBADMSG, NULL, NULL },
                { "cuda compilation tools, release 13.0, V13.0.88", -ENOENT, NULL, NULL },
                { "", -ENOENT, NULL, NULL },
                { NULL },
        };

        for (size_t i = 0; t[i].s; i++) {
                struct version release = { .count = 9 }, nvcc = { .count = 9 };
                int r = nvcc_release_parse(t[i].s, &release, &nvcc);

                ck_assert_msg(r == t[i].r, "row %zu: %d", i, r);
                if (r == 0) {
                        assert_version(&release, t[i].release, t[i].s);
                        assert_version(&nvcc, t[i].nvcc, t[i].s);
                } else {
                        ck_assert_uint_eq(release.count, 9);
                        ck_assert_uint_eq(nvcc.count, 9);
                }
        }
        ck_assert_int_eq(
                nvcc_release_parse("Cuda compilation tools, release 1.2, V1.2.3", NULL, NULL), 0);
        ck_assert_int_eq(nvcc_release_parse(NULL, NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(nccl_version_string_gives_nccl_and_cuda)
{
        static const struct {
                const char *s;
                int r;
                const char *nccl, *cuda;
        } t[] = {
                { "NCCL version 2.28.9+cuda13.0", 0, "2.28.9", "13.0" },
                { "NCCL version 2.21.5+cuda12.4\n", 0, "2.21.5", "12.4" },
                { "xx NCCL version 2.19.0a0+cuda12.2 yy", 0, "2.19.0", "12.2" },
                { "NCCL version 2.28.9 compiled with CUDA 13.0", -EBADMSG, NULL, NULL },
                { "NCCL version %s|NCCL version 2.18.3+cuda12.1", 0, "2.18.3", "12.1" },
                { "NCCL version 2.28.9+cuda13", -EBADMSG, NULL, NULL },
                { "NCCL version 2.28.9+cuda", -EBADMSG, NULL, NULL },
                { "NCCL version 2+cuda13.0", -EBADMSG, NULL, NULL },
                { "NCCL version 2.28.9 +cuda13.0", -EBADMSG, NULL, NULL },
                { "nccl version 2.28.9+cuda13.0", -ENOENT, NULL, NULL },
                { "", -ENOENT, NULL, NULL },
                { NULL },
        };

        for (size_t i = 0; t[i].s; i++) {
                struct version nccl = { .count = 9 }, cuda = { .count = 9 };
                int r = nccl_version_string_parse(t[i].s, &nccl, &cuda);

                ck_assert_msg(r == t[i].r, "row %zu: %d", i, r);
                if (r == 0) {
                        assert_version(&nccl, t[i].nccl, t[i].s);
                        assert_version(&cuda, t[i].cuda, t[i].s);
                } else {
                        ck_assert_uint_eq(nccl.count, 9);
                        ck_assert_uint_eq(cuda.count, 9);
                }
        }
        ck_assert_int_eq(nccl_version_string_parse(NULL, NULL, NULL), -EINVAL);
}
END_TEST

START_TEST(soname_version_needs_stem_then_so)
{
        static const struct {
                const char *filename, *stem;
                int r;
                const char *want;
        } t[] = {
                { "libcudart.so.12.4.127", "libcudart", 0, "12.4.127" },
                { "libcudart.so.12", "libcudart", 0, "12" },
                { "libnccl.so.2.28.9", "libnccl", 0, "2.28.9" },
                { "libcudnn.so.9.7.1", "libcudnn", 0, "9.7.1" },
                { "libcudnn_adv.so.9", "libcudnn", -ENOENT, NULL },
                { "libcudart.so", "libcudart", -ENOENT, NULL },
                { "libcudart.so.", "libcudart", -ENOENT, NULL },
                { "libcudart_static.a", "libcudart", -ENOENT, NULL },
                { "libcudart.so.12.bak", "libcudart", -ENOENT, NULL },
                { "libcudart.so.12.4.127.1.2", "libcudart", -ENOENT, NULL },
                { "libcudart.so.1234567890", "libcudart", -ENOENT, NULL },
                { "libcublasLt.so.12", "libcublas", -ENOENT, NULL },
                { "libcublas.so.12", "libcublasLt", -ENOENT, NULL },
                { "xlibcudart.so.12", "libcudart", -ENOENT, NULL },
                { "", "libcudart", -ENOENT, NULL },
                { NULL },
        };

        for (size_t i = 0; t[i].filename; i++) {
                struct version v = { .count = 9 };
                int r = soname_version_parse(t[i].filename, t[i].stem, &v);

                ck_assert_msg(r == t[i].r, "%s: %d", t[i].filename, r);
                if (r == 0)
                        assert_version(&v, t[i].want, t[i].filename);
                else
                        ck_assert_uint_eq(v.count, 9);
        }
        ck_assert_int_eq(soname_version_parse("libx.so.1", "", NULL), -EINVAL);
        ck_assert_int_eq(soname_version_parse(NULL, "libx", NULL), -EINVAL);
}
END_TEST

/* ---- name hints ---- */

static const struct name_hint_row {
        const char *component, *name, *parent;
        const char *version, *cuda; /* "" for count 0 */
} name_hint_rows[] = {
        /* cuDNN archives */
        { "cudnn", "cudnn-linux-x86_64-9.7.1.26_cuda12-archive", NULL, "9.7.1.26", "12" },
        { "cudnn", "cudnn-linux-x86_64-9.7.1.26_cuda12-archive.tar.xz", NULL, "9.7.1.26", "12" },
        { "cudnn", "cudnn-linux-sbsa-8.9.7.29_cuda11-archive", NULL, "8.9.7.29", "11" },
        { "cudnn", "cudnn-linux-ppc64le-8.9.7.29_cuda12-archive", NULL, "8.9.7.29", "12" },
        { "cudnn", "cudnn-linux-x86_64-8.3.2.44_cuda11.5-archive", NULL, "8.3.2.44", "11.5" },
        { "cudnn", "cudnn-linux-x86_64-9.12.0.46_cuda13-archive", NULL, "9.12.0.46", "13" },
        { "cudnn", "cudnn-11.4-linux-x64-v8.2.4.15", NULL, "8.2.4.15", "11.4" },
        { "cudnn", "cudnn-11.4-linux-x64-v8.2.4.15.tgz", NULL, "8.2.4.15", "11.4" },
        { "cudnn", "cudnn-10.2-linux-x64-v8.1.0.77", NULL, "8.1.0.77", "10.2" },
        { "cudnn", "cudnn-9.0-linux-x64-v7.2.1.38", NULL, "7.2.1.38", "9.0" },
        { "cudnn", "cudnn-11.4-linux-aarch64sbsa-v8.2.4.15", NULL, "8.2.4.15", "11.4" },
        { "cudnn", "cudnn-cuda12-linux-x64-v9.0.0.312", NULL, "9.0.0.312", "12" },
        /* Spack */
        { "cudnn", "cudnn-9.17.0.29-13-abcdefghijklmnopqrstuvwxyz234567", NULL, "9.17.0.29", "13" },
        { "cudnn", "cudnn-8.9.7.29-12-a6ajxenobex5bvpejykhtnfut4arfpwh", NULL, "8.9.7.29", "12" },
        { "cudnn", "cudnn-8.2.4.15-11.4-a6ajxenobex5bvpejykhtnfut4arfpwh", NULL, "8.2.4.15",
          "11.4" },
        { "cudnn", "cudnn-9.2.0.82-11", NULL, "9.2.0.82", "11" },
        { "cudnn", "cudnn-7.6.5-2bcdefghijklmnopqrstuvwxyz234567", NULL, "7.6.5", "" },
        { "nccl", "nccl-2.21.5-1-a6ajxenobex5bvpejykhtnfut4arfpwh", NULL, "2.21.5", "" },
        { "nccl", "nccl-2.21.5-1", NULL, "2.21.5", "" },
        { "cuda", "cuda-11.1.1-a6ajxenobex5bvpejykhtnfut4arfpwh", NULL, "11.1.1", "" },
        { "cuda", "cuda-12.4.0-abcdefghijklmnopqrstuvwxyz234567", NULL, "12.4.0", "" },
        { "cuda", "cuda-12.4", NULL, "12.4", "" },
        { "cuda", "cuda-12.4.1", NULL, "12.4.1", "" },
        { "cuda", "CUDA-12.4.1", NULL, "12.4.1", "" },
        /* EasyBuild */
        { "cudnn", "8.9.2.26-CUDA-12.1.1", "cuDNN", "8.9.2.26", "12.1.1" },
        { "cudnn", "9.5.0.50-CUDA-12.6.0", "cuDNN", "9.5.0.50", "12.6.0" },
        { "nccl", "2.18.3-GCCcore-12.3.0-CUDA-12.1.1", "NCCL", "2.18.3", "12.1.1" },
        { "nccl", "2.18.3-GCCcore-12.3.0-CUDA-12.1.1", NULL, "2.18.3", "12.1.1" },
        { "nccl", "2.10.3-GCCcore-11.2.0", "NCCL", "2.10.3", "" },
        { "cuda", "12.4.0", "CUDA", "12.4.0", "" },
        { "cuda", "12.4", "cuda", "12.4", "" }, /* HPC SDK cuda/12.4 */
        /* NCCL tarballs and HPC SDK */
        { "nccl", "nccl_2.21.5-1+cuda12.4_x86_64", NULL, "2.21.5", "12.4" },
        { "nccl", "nccl_2.18.3-1+cuda12.1_x86_64.txz", NULL, "2.18.3", "12.1" },
        { "nccl", "nccl_2.28.9-1+cuda13.0_aarch64", NULL, "2.28.9", "13.0" },
        { "nccl", "nccl", "12.4", "", "12.4" },
        /* pip dist-info */
        { "nccl", "nvidia_nccl_cu12-2.26.2.dist-info", NULL, "2.26.2", "12" },
        { "nccl", "nvidia_nccl_cu13-2.28.9.dist-info", "site-packages", "2.28.9", "13" },
        { "cudnn", "nvidia_cudnn_cu13-9.19.0.56.dist-info", NULL, "9.19.0.56", "13" },
        { "cudnn", "nvidia_cudnn_cu12-9.7.1.26.dist-info", NULL, "9.7.1.26", "12" },
        { "cuda", "nvidia_cuda_runtime_cu12-12.8.57.dist-info", NULL, "12.8.57", "12" },
        { "cuda", "nvidia_cuda_runtime-13.0.96.dist-info", NULL, "13.0.96", "" },
        { "cuda", "nvidia_cublas-13.1.0.3.dist-info", NULL, "13.1.0.3", "" },
        { "cuda", "nvidia_cuda_nvcc_cu12-12.8.61.post1.dist-info", NULL, "12.8.61", "12" },
        /* bare versions */
        { "cudnn", "9.7.1", NULL, "9.7.1", "" },
        { "cudnn", "9.7.1", "cudnn", "9.7.1", "" },
        { "nccl", "2.26.2", "apps", "2.26.2", "" },
        { NULL },
};

START_TEST(name_hint_reads_known_layouts)
{
        for (const struct name_hint_row *t = name_hint_rows; t->component; t++) {
                struct name_hint h;
                int r = name_hint_parse(t->component, t->name, t->parent, &h);

                ck_assert_msg(r == 0, "%s '%s' (parent '%s'): %d", t->component, t->name,
                              t->parent ? t->parent : "", r);
                assert_version(&h.version, t->version, t->name);
                assert_version(&h.cuda, t->cuda, t->name);
        }
}
END_TEST

START_TEST(name_hint_never_takes_compiler_version)
{
        struct name_hint h;

        ck_assert_int_eq(name_hint_parse("nccl", "2.18.3-GCCcore-12.3.0-CUDA-12.1.1", "NCCL", &h),
                         0);
        ck_assert_uint_eq(h.cuda.count, 3);
        ck_assert_uint_eq(h.cuda.n[1], 1);
        ck_assert_int_eq(name_hint_parse("nccl", "2.18.3-GCCcore-12.3.0", "NCCL", &h), 0);
        ck_assert_uint_eq(h.cuda.count, 0);
        ck_assert_int_eq(name_hint_parse("cudnn", "8.9.2.26-foss-2023a", "cuDNN", &h), 0);
        ck_assert_uint_eq(h.cuda.count, 0);
}
END_TEST

START_TEST(name_hint_names_without_hints_are_enoent)
{
        static const struct {
                const char *component, *name, *parent;
        } t[] = {
                { "cudnn", "cudnn", NULL },
                { "cudnn", "cudnn", "9.7.1" },
                { "cudnn", "lib", NULL },
                { "cudnn", "foo", NULL },
                { "cuda", "cuda", NULL },
                { "cuda", "cuda", "12.4" },
                { "nccl", "nccl", NULL },
                { "nccl", "nccl", "comm_libs" },
                { "nccl", "nccl", "12" },
                { "cudnn", "", NULL },
                { "cudnn", "9", NULL },
                { "cuda", "2024", NULL },
                { "cudnn", "cuda-12.4", NULL },
                { "nccl", "cudnn-linux-x86_64-9.7.1.26_cuda12-archive", NULL },
                { "cuda", "cudnn-8.9.7.29-12-a6ajxenobex5bvpejykhtnfut4arfpwh", NULL },
                { "cudnn", "12.4.0", "CUDA" },
                { "cudnn", "nvidia_nccl_cu12-2.26.2.dist-info", NULL },
                { "cuda", "nvidia_cudnn_cu12-9.7.1.26.dist-info", NULL },
                { "cuda", "nvidia_cusparselt_cu12-0.6.3.dist-info", NULL },
                { "nccl", "nvidia_nccl_cu12.dist-info", NULL },
                { "nccl", "nvidia_nccl_cu12-.dist-info", NULL },
                { "nccl", ".dist-info", NULL },
                { "cudnn", "cudnn-linux-x86_64", NULL },
                { "cudnn", "cudnn-linux-x86_64-archive", NULL },
                { "cudnn", "cudnn-", NULL },
                { "cuda", "cuda-12.4x", NULL },
                { "cuda", "cuda-1.2.3.4.5", NULL },
                { "cuda", "cuda-12345678901", NULL },
                { "cuda", "lib64", NULL },
                { "cuda", "12.4.", NULL },
                { NULL },
        };

        for (size_t i = 0; t[i].component; i++) {
                struct name_hint h = { .version.count = 9 };
                int r = name_hint_parse(t[i].component, t[i].name, t[i].parent, &h);

                ck_assert_msg(r == -ENOENT, "%s '%s': %d", t[i].component, t[i].name, r);
                ck_assert_uint_eq(h.version.count, 9);
        }
}
END_TEST

START_TEST(name_hint_rejects_bad_arguments)
{
        struct name_hint h;

        ck_assert_int_eq(name_hint_parse("cublas", "cuda-12.4", NULL, &h), -EINVAL);
        ck_assert_int_eq(name_hint_parse(NULL, "cuda-12.4", NULL, &h), -EINVAL);
        ck_assert_int_eq(name_hint_parse("cuda", NULL, NULL, &h), -EINVAL);
}
END_TEST

START_TEST(name_hint_survives_hostile_names)
{
        static const char *const names[] = {
                "cudnn linux x86_64 9.7.1.26 cuda12 archive",
                "cudnn-\"9.7.1\"",
                "cudnn-9.7.1\n-cuda12",
                "nccl_2.21.5-1+cuda12.4\n_x86_64",
                "\xff\xfe\xfd",
                "cudnn-\xff.9",
                "nccl_\xff-1+cuda\xff",
                "cuda-",
                "cuda_",
                "-",
                "+cuda",
                "cuda",
                "9.7.1-cuda",
                "9.7.1-cuda-",
                "9.7.1+cuda+cuda-cuda_cuda",
                "cudnn--v",
                "cudnn-v-v-v9",
                "cudnn-linux-",
                "cudnn-linux--",
                "nvidia_-.dist-info",
                "-1.dist-info",
                "\xef\xbb\xbf" "cuda-12.4",
                "cuda-12.4'; rm -rf /",
                NULL,
        };
        static const char *const components[] = { "cuda", "cudnn", "nccl", NULL };
        static const char *const parents[] = { NULL, "cuDNN", "NCCL", "12.4", "\xff", NULL };

        for (size_t i = 0; names[i]; i++)
                for (size_t c = 0; components[c]; c++)
                        for (size_t p = 0; p < ELEMENTSOF(parents); p++) {
                                struct name_hint h;
                                int r = name_hint_parse(components[c], names[i], parents[p], &h);

                                ck_assert_msg(r == 0 || r == -ENOENT, "'%s': %d", names[i], r);
                        }
}
END_TEST

START_TEST(name_hint_survives_very_long_names)
{
        static const char *const fill = "-cuda12.4_9.7.1";
        struct name_hint h;
        size_t n = 100000;
        _cleanup_free_ char *name = xmalloc(n + 1);

        for (size_t i = 0; i < n; i++)
                name[i] = fill[i % strlen(fill)];
        name[n] = '\0';
        memcpy(name, "cudnn", 5);
        ck_assert_int_eq(name_hint_parse("cudnn", name, NULL, &h), -ENOENT);

        /* 255 bytes is the longest file name; it is still read. */
        memset(name, 'a', 255);
        memcpy(name, "cuda-12.4-", 10);
        name[255] = '\0';
        ck_assert_int_eq(name_hint_parse("cuda", name, NULL, &h), 0);
        assert_version(&h.version, "12.4", "long name");
        name[255] = 'a';
        name[256] = '\0';
        ck_assert_int_eq(name_hint_parse("cuda", name, NULL, &h), -ENOENT);
}
END_TEST

/* ---- every parser against random bytes ---- */

static uint32_t rng_next(uint32_t *state)
{
        /* xorshift32: deterministic, so a failure reproduces. */
        *state ^= *state << 13;
        *state ^= *state >> 17;
        *state ^= *state << 5;
        return *state;
}

START_TEST(parsers_survive_random_bytes)
{
        static const char alphabet[] = "0123456789.-_+#define cuda CUDA_VERSION {}\":,\n\r\t\0\xff"
                                       "NCCL version release V";
        uint32_t state = 0x12345678;

        for (unsigned round = 0; round < 3000; round++) {
                size_t len = rng_next(&state) % 96;
                _cleanup_free_ char *buf = xmalloc(len + 1);
                _cleanup_free_ char *exact = NULL;
                _cleanup_free_ char *name = NULL, *version = NULL;
                struct version_json vj;
                struct name_hint h;
                struct version v, w;
                long l;

                for (size_t i = 0; i < len; i++) {
                        uint32_t x = rng_next(&state);

                        buf[i] = x & 1 ? alphabet[(x >> 1) % (sizeof(alphabet) - 1)]
                                       : (char)(x >> 8);
                }
                buf[len] = '\0';
                exact = dup_exact(buf, len);

                if (version_json_parse(exact, len, "f", &vj, NULL) == 0)
                        version_json_release(&vj);
                (void)version_txt_parse(exact, len, "f", &v, NULL);
                (void)header_define_long(exact, len, "CUDA_VERSION", &l);
                (void)cuda_header_parse(exact, len, &v);
                (void)cudnn_header_parse(exact, len, &v);
                (void)nccl_header_parse(exact, len, &v);
                (void)metadata_parse(exact, len, &name, &version);
                (void)version_parse(buf, &v);
                (void)version_parse_prefix(buf, &v, NULL);
                (void)nvcc_release_parse(buf, &v, &w);
                (void)nccl_version_string_parse(buf, &v, &w);
                (void)soname_version_parse(buf, "libcudart", &v);
                (void)cuda_comp_from_pip_name(buf);
                (void)name_hint_parse("cudnn", buf, buf, &h);
                (void)name_hint_parse("nccl", buf, "NCCL", &h);
                (void)name_hint_parse("cuda", buf, NULL, &h);
        }
}
END_TEST

static Suite *version_suite(void)
{
        Suite *s = suite_create("version");
        TCase *tc;

        tc = tcase_create("version_numbers");
        tcase_add_test(tc, version_parse_accepts_dotted_numbers);
        tcase_add_test(tc, version_parse_rejects_malformed);
        tcase_add_test(tc, version_parse_prefix_stops_at_first_stop_char);
        tcase_add_test(tc, version_compare_missing_part_sorts_first);
        tcase_add_test(tc, version_compare_empty_version_sorts_first);
        tcase_add_test(tc, version_to_string_formats_requested_parts);
        tcase_add_test(tc, version_truncate_keeps_leading_parts);
        suite_add_tcase(s, tc);

        tc = tcase_create("component_names");
        tcase_add_test(tc, cuda_comp_names_round_trip);
        tcase_add_test(tc, cuda_comp_unknown_json_keys_are_invalid);
        tcase_add_test(tc, cuda_comp_from_pip_name_normalises_like_pep503);
        tcase_add_test(tc, cuda_comp_from_pip_name_rejects_overlong_names);
        suite_add_tcase(s, tc);

        tc = tcase_create("version_files");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, version_json_update_release_is_kept);
        tcase_add_test(tc, version_json_date_stamp_gives_no_release);
        tcase_add_test(tc, version_json_ignores_odd_component_values);
        tcase_add_test(tc, version_json_syntax_error_reports_position);
        tcase_add_test(tc, version_json_nul_byte_reports_position);
        tcase_add_test(tc, version_json_rejects_hostile_input);
        tcase_add_test(tc, version_json_truncated_at_every_length_fails_cleanly);
        tcase_add_test(tc, version_json_rejects_oversized_input);
        tcase_add_test(tc, version_json_accepts_null_diag_and_file);
        tcase_add_test(tc, version_txt_reads_first_line);
        tcase_add_test(tc, version_txt_rejects_malformed);
        suite_add_tcase(s, tc);

        tc = tcase_create("headers");
        tcase_add_test(tc, header_define_matches_whole_tokens);
        tcase_add_test(tc, header_define_handles_crlf_tabs_and_no_final_newline);
        tcase_add_test(tc, header_define_rejects_out_of_range_numbers);
        tcase_add_test(tc, header_define_rejects_bad_names);
        tcase_add_test(tc, header_define_stops_at_len);
        tcase_add_test(tc, cuda_header_gives_major_minor);
        tcase_add_test(tc, header_define_triple_reads_magma_types_h);
        tcase_add_test(tc, name_hint_magma_forms);
        tcase_add_test(tc, cuda_header_rejects_bad_values);
        tcase_add_test(tc, cudnn_header_ignores_sm_macros);
        tcase_add_test(tc, cudnn_header_reads_sm_macros_first_then_version);
        tcase_add_test(tc, cudnn_header_missing_or_bad_macro_fails);
        tcase_add_test(tc, nccl_header_checks_version_code);
        tcase_add_test(tc, nccl_header_needs_all_three_parts);
        suite_add_tcase(s, tc);

        tc = tcase_create("strings");
        tcase_add_test(tc, metadata_reads_name_and_version);
        tcase_add_test(tc, metadata_requires_both_headers_before_body);
        tcase_add_test(tc, nvcc_release_string_is_found_anywhere);
        tcase_add_test(tc, nccl_version_string_gives_nccl_and_cuda);
        tcase_add_test(tc, soname_version_needs_stem_then_so);
        suite_add_tcase(s, tc);

        tc = tcase_create("name_hints");
        tcase_add_test(tc, name_hint_reads_known_layouts);
        tcase_add_test(tc, name_hint_never_takes_compiler_version);
        tcase_add_test(tc, name_hint_names_without_hints_are_enoent);
        tcase_add_test(tc, name_hint_rejects_bad_arguments);
        tcase_add_test(tc, name_hint_survives_hostile_names);
        tcase_add_test(tc, name_hint_survives_very_long_names);
        suite_add_tcase(s, tc);

        tc = tcase_create("robustness");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, parsers_survive_random_bytes);
        suite_add_tcase(s, tc);

        return s;
}

int main(void)
{
        return run_suite(version_suite());
}
