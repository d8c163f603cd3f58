/* version.c: version numbers, and the files and names they are read from.
 *
 * Every parser takes a buffer that need not be NUL-terminated and may hold
 * any bytes; nothing here reads past len, prints, or touches the
 * filesystem. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>

#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "banned.h"

/* 9 digits always fit an unsigned long, and no real version part has more. */
#define VERSION_PART_MAX_DIGITS 9
/* version.json is a few KiB; anything this large is not one. */
#define VERSION_JSON_MAX ((size_t)16 << 20)

static bool ascii_isblank(char c)
{
        return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

static bool ascii_isident(char c)
{
        return ascii_isdigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ascii_startswith_ci(const char *s, const char *prefix)
{
        for (; *prefix; s++, prefix++)
                if (ascii_tolower(*s) != ascii_tolower(*prefix))
                        return false;
        return true;
}

int version_parse_prefix(const char *s, struct version *ret, const char **ret_end)
{
        struct version v = { .count = 0 };
        const char *p = s;

        if (!s || !ascii_isdigit(*p))
                return -EINVAL;

        for (;;) {
                unsigned long n = 0;
                unsigned digits = 0;

                for (; ascii_isdigit(*p); p++) {
                        if (++digits > VERSION_PART_MAX_DIGITS)
                                return -EINVAL;
                        n = n * 10 + (unsigned long)(*p - '0');
                }
                v.n[v.count++] = n;

                /* A dot continues the version only when a digit follows and
                 * there is room for another part; otherwise it is left for
                 * the caller, like any other stop character. */
                if (v.count >= VERSION_MAX_PARTS || p[0] != '.' || !ascii_isdigit(p[1]))
                        break;
                p++;
        }

        if (ret)
                *ret = v;
        if (ret_end)
                *ret_end = p;
        return 0;
}

int version_parse(const char *s, struct version *ret)
{
        struct version v;
        const char *end;
        int r;

        r = version_parse_prefix(s, &v, &end);
        if (r < 0)
                return r;
        if (*end != '\0')
                return -EINVAL;
        if (ret)
                *ret = v;
        return 0;
}

int version_compare(const struct version *a, const struct version *b)
{
        unsigned n = a->count > b->count ? a->count : b->count;

        if (n > VERSION_MAX_PARTS)
                n = VERSION_MAX_PARTS;
        for (unsigned i = 0; i < n; i++) {
                /* A missing part sorts before every present one (-1). */
                bool ha = i < a->count, hb = i < b->count;

                if (ha != hb)
                        return ha ? 1 : -1;
                if (a->n[i] != b->n[i])
                        return a->n[i] < b->n[i] ? -1 : 1;
        }
        return 0;
}

char *version_to_string(const struct version *v, unsigned parts)
{
        struct strbuf sb = STRBUF_INIT;
        unsigned n = v->count > VERSION_MAX_PARTS ? VERSION_MAX_PARTS : v->count;

        if (parts != 0 && parts < n)
                n = parts;
        for (unsigned i = 0; i < n; i++)
                strbuf_addf(&sb, "%s%lu", i ? "." : "", v->n[i]);
        return strbuf_detach(&sb);
}

/* parts == 0 gives the empty version (count 0), as "the first 0 parts";
 * unlike version_to_string, 0 does not mean "all". */
struct version version_truncate(const struct version *v, unsigned parts)
{
        struct version t = { .count = 0 };
        unsigned n = v->count > VERSION_MAX_PARTS ? VERSION_MAX_PARTS : v->count;

        if (parts < n)
                n = parts;
        for (unsigned i = 0; i < n; i++)
                t.n[i] = v->n[i];
        t.count = n;
        return t;
}

static const struct cuda_comp_name {
        const char *name;
        const char *json_key;
        const char *pip_name;
} cuda_comp_names[_CUDA_COMP_MAX] = {
        [CUDA_COMP_CUDART] = { "cudart", "cuda_cudart", "nvidia-cuda-runtime" },
        [CUDA_COMP_NVCC] = { "nvcc", "cuda_nvcc", "nvidia-cuda-nvcc" },
        [CUDA_COMP_NVRTC] = { "nvrtc", "cuda_nvrtc", "nvidia-cuda-nvrtc" },
        [CUDA_COMP_CUPTI] = { "cupti", "cuda_cupti", "nvidia-cuda-cupti" },
        [CUDA_COMP_CUBLAS] = { "cublas", "libcublas", "nvidia-cublas" },
        [CUDA_COMP_CUFFT] = { "cufft", "libcufft", "nvidia-cufft" },
        [CUDA_COMP_CURAND] = { "curand", "libcurand", "nvidia-curand" },
        [CUDA_COMP_CUSOLVER] = { "cusolver", "libcusolver", "nvidia-cusolver" },
        [CUDA_COMP_CUSPARSE] = { "cusparse", "libcusparse", "nvidia-cusparse" },
        [CUDA_COMP_NVJITLINK] = { "nvjitlink", "libnvjitlink", "nvidia-nvjitlink" },
};

const char *cuda_comp_to_string(enum cuda_comp c)
{
        if (c < 0 || c >= _CUDA_COMP_MAX)
                return NULL;
        return cuda_comp_names[c].name;
}

enum cuda_comp cuda_comp_from_version_json_key(const char *key)
{
        if (!key)
                return _CUDA_COMP_INVALID;
        for (int i = 0; i < _CUDA_COMP_MAX; i++)
                if (streq(cuda_comp_names[i].json_key, key))
                        return (enum cuda_comp)i;
        return _CUDA_COMP_INVALID;
}

bool pip_name_normalise(const char *name, char *buf, size_t size, unsigned long *ret_cuda_major)
{
        size_t n = 0, k;
        unsigned long major = 0;

        for (const char *p = name; *p; p++) {
                char c = *p;

                if (c == '-' || c == '_' || c == '.') {
                        if (n > 0 && buf[n - 1] == '-')
                                continue;
                        c = '-';
                }
                if (n + 1 >= size)
                        return false;
                buf[n++] = ascii_tolower(c);
        }
        buf[n] = '\0';

        /* "-cu" and one to three digits may end the name. */
        k = n;
        while (k > 0 && ascii_isdigit(buf[k - 1]))
                k--;
        if (k < n && n - k <= 3 && k > 3 && memcmp(buf + k - 3, "-cu", 3) == 0) {
                for (size_t i = k; i < n; i++)
                        major = major * 10 + (unsigned long)(buf[i] - '0');
                buf[k - 3] = '\0';
        }

        *ret_cuda_major = major;
        return true;
}

enum cuda_comp cuda_comp_from_pip_name(const char *name)
{
        char buf[PIP_NAME_MAX + 1];
        unsigned long major;

        if (!name || !pip_name_normalise(name, buf, sizeof(buf), &major))
                return _CUDA_COMP_INVALID;
        for (int i = 0; i < _CUDA_COMP_MAX; i++)
                if (streq(cuda_comp_names[i].pip_name, buf))
                        return (enum cuda_comp)i;
        return _CUDA_COMP_INVALID;
}

/* Whether s is short printable ASCII, safe to quote in a message. */
static bool printable(const char *s)
{
        size_t n = 0;

        for (; *s; s++)
                if (++n > 64 || *s < ' ' || *s > '~')
                        return false;
        return true;
}

/* Our own, as jansson's json_decrefp exists only from 2.11 on. */
static void json_unrefp(json_t **j)
{
        json_decref(*j);
}

/* The 1-based line and column of offset off in buf. */
static void buf_position(const char *buf, size_t off, unsigned *ret_line, unsigned *ret_col)
{
        unsigned line = 1, col = 1;

        for (size_t i = 0; i < off; i++) {
                if (buf[i] == '\n') {
                        line++;
                        col = 1;
                } else
                        col++;
        }
        *ret_line = line;
        *ret_col = col;
}

void version_json_release(struct version_json *vj)
{
        if (!vj)
                return;
        for (size_t i = 0; i < ELEMENTSOF(vj->components); i++)
                free(vj->components[i]);
        free(vj->nvidia_driver);
        *vj = (struct version_json){ .cuda.count = 0 };
}

static void version_json_releasep(struct version_json *vj)
{
        version_json_release(vj);
}

int version_json_parse(const char *buf, size_t len, const char *file, struct version_json *ret,
                       struct diag *d)
{
        _cleanup_(version_json_releasep) struct version_json vj = { .cuda.count = 0 };
        _cleanup_(json_unrefp) json_t *root = NULL;
        json_t *cuda, *value;
        const char *key, *s, *end;
        const char *nul;
        json_error_t error;
        struct version v;

        if (len > VERSION_JSON_MAX)
                return diag_set(d, -EFBIG, file, 0, 0, "file too large (%zu bytes, at most %zu)",
                                len, VERSION_JSON_MAX);

        /* jansson rejects NUL inside strings but silently skips one between
         * tokens; a NUL byte has no place in a JSON text at all. */
        nul = len > 0 ? memchr(buf, '\0', len) : NULL;
        if (nul) {
                unsigned line, col;

                buf_position(buf, (size_t)(nul - buf), &line, &col);
                return diag_set(d, -EBADMSG, file, line, col, "NUL byte in JSON text");
        }

        root = json_loadb(len > 0 ? buf : "", len, 0, &error);
        if (!root)
                return diag_set(d, -EBADMSG, file, error.line > 0 ? (unsigned)error.line : 0,
                                error.column > 0 ? (unsigned)error.column : 0, "%s", error.text);
        if (!json_is_object(root))
                return diag_set(d, -EBADMSG, file, 1, 0, "expected a JSON object at top level");

        cuda = json_object_get(root, "cuda");
        if (!json_is_object(cuda))
                return diag_set(d, -EBADMSG, file, 0, 0, "no \"cuda\" object");
        s = json_string_value(json_object_get(cuda, "version"));
        if (!s)
                return diag_set(d, -EBADMSG, file, 0, 0, "no \"cuda\".\"version\" string");
        if (version_parse_prefix(s, &v, &end) < 0 || v.count < 2)
                return diag_set(d, -EBADMSG, file, 0, 0,
                                "\"cuda\".\"version\" '%s' does not start with MAJOR.MINOR",
                                printable(s) ? s : "?");

        vj.cuda = version_truncate(&v, 2);
        /* A third part of 100 or more is a runfile date stamp (20241114) or a
         * Jetson build number (140), not an update number. */
        if (*end == '\0' && v.count == 3 && v.n[2] < 100)
                vj.release = v;

        json_object_foreach(root, key, value) {
                enum cuda_comp c = cuda_comp_from_version_json_key(key);

                if (c < 0 || !json_is_object(value))
                        continue;
                s = json_string_value(json_object_get(value, "version"));
                if (!s || version_parse(s, NULL) < 0)
                        continue;
                free(vj.components[c]);
                vj.components[c] = xstrdup(s);
        }
        /* The driver the runfile shipped (plan's driver check). */
        value = json_object_get(root, "nvidia_driver");
        s = json_is_object(value) ? json_string_value(json_object_get(value, "version")) : NULL;
        if (s && version_parse(s, &v) == 0 && v.count >= 2)
                vj.nvidia_driver = xstrdup(s);

        *ret = vj;
        vj = (struct version_json){ .cuda.count = 0 };
        return 0;
}

/* The line starting at *pos, without its "\n" or "\r\n", and *pos moved past
 * it. False at the end of the buffer. */
static bool buf_next_line(const char *buf, size_t len, size_t *pos, const char **ret_line,
                          size_t *ret_len)
{
        const char *start, *nl;
        size_t n;

        if (*pos >= len)
                return false;
        start = buf + *pos;
        nl = memchr(start, '\n', len - *pos);
        n = nl ? (size_t)(nl - start) : len - *pos;
        *pos += nl ? n + 1 : n;
        if (n > 0 && start[n - 1] == '\r')
                n--;
        *ret_line = start;
        *ret_len = n;
        return true;
}

int version_txt_parse(const char *buf, size_t len, const char *file, struct version *ret,
                      struct diag *d)
{
        static const char prefix[] = "CUDA Version ";
        char text[64];
        const char *line, *end;
        size_t n, pos = 0, skip = 0;
        struct version v;

        if (!buf_next_line(buf, len, &pos, &line, &n))
                return diag_set(d, -EBADMSG, file, 0, 0, "empty file");

        /* Tolerate a UTF-8 byte order mark and trailing blanks. */
        if (n >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
                skip = 3;
        while (n > skip && ascii_isblank(line[n - 1]))
                n--;

        if (n - skip < sizeof(prefix) - 1 || memcmp(line + skip, prefix, sizeof(prefix) - 1) != 0)
                return diag_set(d, -EBADMSG, file, 1, 1,
                                "expected 'CUDA Version X.Y.Z' on the first line");
        skip += sizeof(prefix) - 1;
        n -= skip;
        if (n >= sizeof(text) || memchr(line + skip, '\0', n))
                return diag_set(d, -EBADMSG, file, 1, (unsigned)skip + 1, "invalid version");
        memcpy(text, line + skip, n);
        text[n] = '\0';

        if (version_parse_prefix(text, &v, &end) < 0 || v.count < 2)
                return diag_set(d, -EBADMSG, file, 1, (unsigned)skip + 1, "invalid version");
        if (*end != '\0')
                return diag_set(d, -EBADMSG, file, 1, (unsigned)(skip + (size_t)(end - text)) + 1,
                                "unexpected text after the version");

        *ret = v;
        return 0;
}

/* A decimal integer with an optional sign and C integer suffix (u, l, ul,
 * ll…), then blanks and an optional comment up to the end of the line. */
static int parse_define_value(const char *p, const char *e, long *ret)
{
        bool neg = false;
        unsigned long n = 0;
        const char *digits;

        if (p < e && (*p == '-' || *p == '+'))
                neg = *p++ == '-';
        digits = p;
        for (; p < e && ascii_isdigit(*p); p++) {
                unsigned long dgt = (unsigned long)(*p - '0');

                if (n > ((unsigned long)LONG_MAX + 1 - dgt) / 10)
                        return -EINVAL;
                n = n * 10 + dgt;
        }
        if (p == digits)
                return -EINVAL;
        if (!neg && n > LONG_MAX)
                return -EINVAL;
        while (p < e && (*p == 'u' || *p == 'U' || *p == 'l' || *p == 'L'))
                p++;
        while (p < e && ascii_isblank(*p))
                p++;
        if (p < e && !(e - p >= 2 && p[0] == '/' && (p[1] == '/' || p[1] == '*')))
                return -EINVAL;

        if (neg)
                *ret = n == (unsigned long)LONG_MAX + 1 ? LONG_MIN : -(long)n;
        else
                *ret = (long)n;
        return 0;
}

/* The first object-like `#define name` wins; a function-like macro of that
 * name (`#define NAME(x) …`) is not the define asked for and is skipped. */
int header_define_long(const char *buf, size_t len, const char *name, long *ret)
{
        const char *line;
        size_t n, pos = 0, name_len;

        if (!name || !ascii_isident(*name))
                return -EINVAL;
        name_len = strlen(name);

        while (buf_next_line(buf, len, &pos, &line, &n)) {
                const char *p = line, *e = line + n, *tok;

                while (p < e && ascii_isblank(*p))
                        p++;
                if (p >= e || *p != '#')
                        continue;
                p++;
                while (p < e && ascii_isblank(*p))
                        p++;
                if (e - p < 7 || memcmp(p, "define", 6) != 0 || !ascii_isblank(p[6]))
                        continue;
                p += 7;
                while (p < e && ascii_isblank(*p))
                        p++;
                tok = p;
                while (p < e && ascii_isident(*p))
                        p++;
                if ((size_t)(p - tok) != name_len || memcmp(tok, name, name_len) != 0)
                        continue;
                if (p < e && *p == '(')
                        continue;
                if (p < e && !ascii_isblank(*p))
                        continue;
                while (p < e && ascii_isblank(*p))
                        p++;
                return parse_define_value(p, e, ret);
        }
        return -ENOENT;
}

/* A define that must hold a version part: 0 to 999999999. */
static int header_define_part(const char *buf, size_t len, const char *name,
                              unsigned long *ret)
{
        long l;
        int r;

        r = header_define_long(buf, len, name, &l);
        if (r < 0)
                return r;
        if (l < 0 || l > 999999999L)
                return -EINVAL;
        *ret = (unsigned long)l;
        return 0;
}

int header_define_triple(const char *buf, size_t len, const char *const names[4],
                         struct version *ret)
{
        struct version v = { .count = 3 };
        int r;

        for (size_t i = 0; i < 3; i++) {
                r = header_define_part(buf, len, names[i], &v.n[i]);
                if (r < 0)
                        return r;
        }
        /* The build number is optional: older headers may lack it. */
        if (names[3] && header_define_part(buf, len, names[3], &v.n[3]) == 0)
                v.count = 4;

        *ret = v;
        return 0;
}

int cuda_header_parse(const char *buf, size_t len, struct version *ret)
{
        long l;
        int r;

        r = header_define_long(buf, len, "CUDA_VERSION", &l);
        if (r < 0)
                return r;
        /* MAJOR*1000 + MINOR*10: 13000 is 13.0, 12040 is 12.4. */
        if (l < 1000 || l % 10 != 0 || l / 1000 > 999999999L)
                return -EBADMSG;

        *ret = (struct version){ .n = { (unsigned long)(l / 1000), (unsigned long)(l % 1000 / 10) },
                                 .count = 2 };
        return 0;
}

int cudnn_header_parse(const char *buf, size_t len, struct version *ret)
{
        struct version v = { .count = 3 };
        int r;

        /* CUDNN_VERSION is not read: its formula changed between 8 and 9. */
        r = header_define_part(buf, len, "CUDNN_MAJOR", &v.n[0]);
        if (r < 0)
                return r;
        r = header_define_part(buf, len, "CUDNN_MINOR", &v.n[1]);
        if (r < 0)
                return r;
        r = header_define_part(buf, len, "CUDNN_PATCHLEVEL", &v.n[2]);
        if (r < 0)
                return r;

        *ret = v;
        return 0;
}

/* NCCL_VERSION_CODE is only a cross-check: when it is absent or not a plain
 * number (NCCL before 2.3.5), the three parts stand alone. */
int nccl_header_parse(const char *buf, size_t len, struct version *ret)
{
        struct version v = { .count = 3 };
        long code;
        int r;

        r = header_define_part(buf, len, "NCCL_MAJOR", &v.n[0]);
        if (r < 0)
                return r;
        r = header_define_part(buf, len, "NCCL_MINOR", &v.n[1]);
        if (r < 0)
                return r;
        r = header_define_part(buf, len, "NCCL_PATCH", &v.n[2]);
        if (r < 0)
                return r;

        r = header_define_long(buf, len, "NCCL_VERSION_CODE", &code);
        if (r == 0) {
                /* The NCCL_VERSION(X,Y,Z) formula: x1000 up to 2.8, x10000
                 * from 2.9. Parts are at most 9 digits, so no overflow in
                 * unsigned long long. */
                unsigned long long scale = v.n[0] <= 2 && v.n[1] <= 8 ? 1000 : 10000;
                unsigned long long want = v.n[0] * scale + v.n[1] * 100ULL + v.n[2];

                if (code < 0 || (unsigned long long)code != want)
                        return -EBADMSG;
        }

        *ret = v;
        return 0;
}

static char *strip_value(const char *p, const char *e)
{
        while (p < e && ascii_isblank(*p))
                p++;
        while (e > p && ascii_isblank(e[-1]))
                e--;
        return xstrndup(p, (size_t)(e - p));
}

/* Header names are matched case-insensitively, as in e-mail headers; the
 * first of each wins. Missing or empty Name or Version is -EBADMSG, as is a
 * NUL byte inside either value. */
int metadata_parse(const char *buf, size_t len, char **ret_name, char **ret_version)
{
        _cleanup_free_ char *name = NULL, *version = NULL;
        const char *line;
        size_t n, pos = 0;

        while (buf_next_line(buf, len, &pos, &line, &n)) {
                const char *e = line + n;
                char **target;
                size_t skip;

                if (n == 0)
                        break; /* the body starts after the first blank line */
                if (n >= 5 && ascii_startswith_ci(line, "name:")) {
                        target = &name;
                        skip = 5;
                } else if (n >= 8 && ascii_startswith_ci(line, "version:")) {
                        target = &version;
                        skip = 8;
                } else
                        continue;
                if (*target)
                        continue;
                if (memchr(line, '\0', n))
                        return -EBADMSG;
                *target = strip_value(line + skip, e);
        }

        if (!name || !version || !*name || !*version)
                return -EBADMSG;
        if (ret_name)
                *ret_name = TAKE_PTR(name);
        if (ret_version)
                *ret_version = TAKE_PTR(version);
        return 0;
}

/* The first occurrence that parses wins: -ENOENT when the marker is absent,
 * -EBADMSG when it is there but no occurrence is well formed. */
int nvcc_release_parse(const char *s, struct version *ret_release, struct version *ret_nvcc)
{
        static const char marker[] = "Cuda compilation tools, release ";
        const char *p;
        int r = -ENOENT;

        if (!s)
                return -EINVAL;
        for (p = strstr(s, marker); p; p = strstr(p + 1, marker)) {
                struct version release, nvcc;
                const char *q = p + sizeof(marker) - 1;

                r = -EBADMSG;
                if (version_parse_prefix(q, &release, &q) < 0 || release.count < 2)
                        continue;
                if (!startswith(q, ", V"))
                        continue;
                if (version_parse_prefix(q + 3, &nvcc, NULL) < 0 || nvcc.count < 2)
                        continue;

                if (ret_release)
                        *ret_release = release;
                if (ret_nvcc)
                        *ret_nvcc = nvcc;
                return 0;
        }
        return r;
}

/* NCCL_SUFFIX (e.g. "a0") may sit between the version and "+cuda". Errors
 * as for nvcc_release_parse. */
int nccl_version_string_parse(const char *s, struct version *ret_nccl, struct version *ret_cuda)
{
        static const char marker[] = "NCCL version ";
        const char *p;
        int r = -ENOENT;

        if (!s)
                return -EINVAL;
        for (p = strstr(s, marker); p; p = strstr(p + 1, marker)) {
                struct version nccl, cuda;
                const char *q = p + sizeof(marker) - 1;
                size_t suffix = 0;

                r = -EBADMSG;
                if (version_parse_prefix(q, &nccl, &q) < 0 || nccl.count < 2)
                        continue;
                while (suffix < 32 && q[suffix] && q[suffix] != '+' &&
                       (ascii_isident(q[suffix]) || q[suffix] == '.' || q[suffix] == '-'))
                        suffix++;
                q += suffix;
                if (!startswith(q, "+cuda"))
                        continue;
                if (version_parse_prefix(q + 5, &cuda, NULL) < 0 || cuda.count < 2)
                        continue;

                if (ret_nccl)
                        *ret_nccl = nccl;
                if (ret_cuda)
                        *ret_cuda = cuda;
                return 0;
        }
        return r;
}

int soname_version_parse(const char *filename, const char *stem, struct version *ret)
{
        size_t l;

        if (!filename || !stem || !*stem)
                return -EINVAL;
        l = strlen(stem);
        if (strncmp(filename, stem, l) != 0 || !startswith(filename + l, ".so."))
                return -ENOENT;
        if (version_parse(filename + l + 4, ret) < 0)
                return -ENOENT;
        return 0;
}
