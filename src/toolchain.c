/* toolchain.c: what validate and doctor both ask of a toolchain
 * (toolchain.h): the host compiler nvcc runs and which it is, what the
 * toolkit's crt/host_config.h accepts, and the version a component's
 * header declares. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "process.h"
#include "strbuf.h"
#include "toolchain.h"
#include "util-file.h"
#include "util-path.h"
#include "banned.h"

#define HEADER_MAX (4 * 1024 * 1024)

/* --- crt/host_config.h ------------------------------------------------- */

static const char *skip_blanks(const char *p, const char *end)
{
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

/* The line [p, e) with blanks trimmed, newly allocated. */
static char *line_trimmed(const char *p, const char *e)
{
        p = skip_blanks(p, e);
        while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
                e--;
        return xstrndup(p, (size_t)(e - p));
}

/* "#if __GNUC__ > 11" → 11; -1 when line has another shape. */
static long gnuc_limit(const char *line)
{
        const char *p = line;
        char *end;
        long n;

        if (!startswith(p, "#if"))
                return -1;
        p += 3;
        p += strspn(p, " \t");
        if (!startswith(p, "__GNUC__"))
                return -1;
        p += strlen("__GNUC__");
        p += strspn(p, " \t");
        if (*p != '>' || p[1] == '=')
                return -1;
        p++;
        p += strspn(p, " \t");
        if (*p < '0' || *p > '9')
                return -1;
        errno = 0;
        n = strtol(p, &end, 10);
        if (errno || n > 1000)
                return -1;
        end += strspn(end, " \t");
        return *end ? -1 : n;
}

/* "(__clang_major__ >= 15)" anywhere in line → 14; -1 when absent. */
static long clang_limit(const char *line)
{
        const char *p = strstr(line, "__clang_major__");

        for (; p; p = strstr(p + 1, "__clang_major__")) {
                const char *q = p + strlen("__clang_major__");
                char *end;
                long n;

                q += strspn(q, " \t");
                if (!startswith(q, ">="))
                        continue;
                q += 2;
                q += strspn(q, " \t");
                if (*q < '0' || *q > '9')
                        continue;
                n = strtol(q, &end, 10);
                if (n < 1 || n > 1000)
                        continue;
                return n - 1;
        }
        return -1;
}

int host_config_parse(const char *buf, size_t len, struct host_limits *ret)
{
        struct host_limits l = { .gcc_max = -1, .clang_max = -1 };
        /* 0: looking for the block; 1: in it, looking for the limit;
         * 2: limit found, looking for its #error before the #endif. */
        int gcc = 0, clang = 0;
        const char *p = buf, *end = buf + len;

        while (p < end) {
                const char *e = memchr(p, '\n', (size_t)(end - p));
                _cleanup_free_ char *line = line_trimmed(p, e ? e : end);

                p = e ? e + 1 : end;
                if (line[0] != '#')
                        continue;
                if (gcc == 0 && streq(line, "#if defined(__GNUC__)")) {
                        gcc = 1;
                        continue;
                }
                if (gcc == 1 && gnuc_limit(line) >= 0) {
                        l.gcc_max = gnuc_limit(line);
                        gcc = 2;
                        continue;
                }
                if (gcc == 2) {
                        if (startswith(line, "#error"))
                                l.gcc_enforced = true;
                        if (startswith(line, "#error") || startswith(line, "#endif") || startswith(line, "#if"))
                                gcc = 3;
                        continue;
                }
                /* The plain clang block (the Grace and HOS clang blocks
                 * have guards of their own, not this one). */
                if (clang == 0 && startswith(line, "#if defined(__clang__) && !defined(__ibmxl_vrm__)")) {
                        clang = 1;
                        continue;
                }
                if (clang == 1 && startswith(line, "#if") && clang_limit(line) >= 0) {
                        l.clang_max = clang_limit(line);
                        clang = 2;
                        continue;
                }
                if (clang == 2) {
                        if (startswith(line, "#error"))
                                l.clang_enforced = true;
                        if (startswith(line, "#error") || startswith(line, "#endif") || startswith(line, "#if"))
                                clang = 3;
                }
        }
        if (l.gcc_max < 0 && l.clang_max < 0)
                return -ENOENT;
        *ret = l;
        return 0;
}

/* --- the host compiler ------------------------------------------------- */

void host_compiler_release(struct host_compiler *h)
{
        free(h->path);
        free(h->version);
        *h = (struct host_compiler){ 0 };
}

static long macro_long(const char *text, const char *name)
{
        _cleanup_free_ char *key = xasprintf("#define %s ", name);
        const char *p = text;

        while ((p = strstr(p, key))) {
                if (p == text || p[-1] == '\n')
                        return strtol(p + strlen(key), NULL, 10);
                p++;
        }
        return -1;
}

int host_compiler_from_macros(const char *text, struct host_compiler *ret)
{
        long gnuc = macro_long(text, "__GNUC__"), clang = macro_long(text, "__clang_major__");
        struct host_compiler h = { .major = -1 };

        if (macro_long(text, "__INTEL_CLANG_COMPILER") >= 0 || macro_long(text, "__INTEL_LLVM_COMPILER") >= 0)
                h.kind = HOST_COMPILER_INTEL;
        else if (clang >= 0) {
                h.kind = HOST_COMPILER_CLANG;
                h.major = clang;
                h.version = xasprintf("%ld.%ld.%ld", clang, macro_long(text, "__clang_minor__"),
                                      macro_long(text, "__clang_patchlevel__"));
        } else if (gnuc >= 0) {
                h.kind = HOST_COMPILER_GCC;
                h.major = gnuc;
                h.version = xasprintf("%ld.%ld.%ld", gnuc, macro_long(text, "__GNUC_MINOR__"),
                                      macro_long(text, "__GNUC_PATCHLEVEL__"));
        } else
                return -ENOENT;
        if (!h.version)
                h.version = xstrdup("unknown");
        *ret = h;
        return 0;
}

/* The value of -ccbin (-ccbin=X, -ccbin X, --compiler-bindir[=| ]X) in an
 * nvcc flags variable, the last one given; NULL when none. */
static char *ccbin_of(const char *flags)
{
        _cleanup_free_ char *copy = flags ? xstrdup(flags) : NULL;
        char *found = NULL;
        bool next = false;

        if (!copy)
                return NULL;
        for (char *w = copy; *w;) {
                char *e = w + strcspn(w, " \t\n");
                bool last = !*e;

                *e = '\0';
                if (*w) {
                        if (next) {
                                free(found);
                                found = xstrdup(w);
                                next = false;
                        } else if (streq(w, "-ccbin") || streq(w, "--compiler-bindir"))
                                next = true;
                        else if (startswith(w, "-ccbin=") || startswith(w, "--compiler-bindir=")) {
                                free(found);
                                found = xstrdup(strchr(w, '=') + 1);
                        }
                }
                w = last ? e : e + 1;
        }
        return found;
}

/* What nvcc compiles host code with in env, as nvcc picks it: -ccbin in
 * NVCC_APPEND_FLAGS, else NVCC_PREPEND_FLAGS (a directory: its gcc), else
 * NVCC_CCBIN where the toolkit reads it (CUDA 13; 11.8 ignores it), else
 * `gcc` in nvcc's PATH (its own directories, then env's PATH). *ret_from
 * says which. NULL with *ret_err when it cannot be found. */
char *nvcc_host_compiler(const char *nvcc, char *const *env, unsigned long cuda_major, const char **ret_from,
                                int *ret_err)
{
        _cleanup_free_ char *append = ccbin_of(env_get(env, "NVCC_APPEND_FLAGS"));
        _cleanup_free_ char *prepend = ccbin_of(env_get(env, "NVCC_PREPEND_FLAGS"));
        const char *ccbin = append ? append : prepend, *from;
        _cleanup_free_ char *bindir = path_dirname(nvcc), *top = path_dirname(bindir), *search = NULL;
        const char *env_path = env_get(env, "PATH");
        struct stat st;

        if (!ccbin && cuda_major >= 13 && env_get(env, "NVCC_CCBIN") && *env_get(env, "NVCC_CCBIN")) {
                ccbin = env_get(env, "NVCC_CCBIN");
                from = "NVCC_CCBIN";
        } else
                from = append ? "-ccbin in NVCC_APPEND_FLAGS" : prepend ? "-ccbin in NVCC_PREPEND_FLAGS" : NULL;
        if (ccbin && strchr(ccbin, '/') && stat(ccbin, &st) == 0 && S_ISDIR(st.st_mode)) {
                _cleanup_free_ char *gcc = path_join(ccbin, "gcc");

                *ret_from = from;
                return process_find_program(gcc, env, ret_err);
        }
        if (ccbin) {
                *ret_from = from;
                return process_find_program(ccbin, env, ret_err);
        }
        *ret_from = "gcc on nvcc's PATH";
        search = xasprintf("PATH=%s/nvvm/bin:%s%s%s", top, bindir, env_path && *env_path ? ":" : "",
                           env_path ? env_path : "");
        return process_find_program("gcc", (char *[]){ search, NULL }, ret_err);
}

/* Ask path (started with env) which compiler it is: its predefined
 * macros. Returns 0, or -EIO with *ret_why saying what went wrong. */
int host_compiler_query(const char *path, char *const *env, unsigned timeout, struct host_compiler *ret,
                               char **ret_why)
{
        char *argv[] = { (char *)path, (char *)"-E", (char *)"-dM", (char *)"-x", (char *)"c++",
                         (char *)"/dev/null", NULL };
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        int r;

        r = process_run(path, argv, env, NULL, timeout, &c);
        if (r < 0) {
                *ret_why = xasprintf("cannot start it: %s", strerror(-r));
                return -EIO;
        }
        if (c.exec_errno) {
                *ret_why = xasprintf("it could not be started: %s", strerror(c.exec_errno));
                return -EIO;
        }
        if (!child_succeeded(&c)) {
                _cleanup_free_ char *ending = child_ending(&c);

                *ret_why = xasprintf("'%s -E -dM -x c++ /dev/null' failed (%s)", path, ending);
                return -EIO;
        }
        if (host_compiler_from_macros(c.out.buf, ret) < 0) {
                *ret_why = xstrdup("it defines neither __GNUC__ nor __clang__");
                return -EIO;
        }
        ret->path = xstrdup(path);
        return 0;
}

/* Whether h is accepted by limits; when not, *ret_max is the newest
 * accepted version of its kind (-1: none of its kind). */
bool host_compiler_accepted(const struct host_compiler *h, const struct host_limits *l, long *ret_max)
{
        *ret_max = -1;
        if (h->kind == HOST_COMPILER_INTEL)
                return !l->gcc_enforced; /* ICX is refused outright where the check is on */
        if (h->kind == HOST_COMPILER_CLANG) {
                *ret_max = l->clang_max;
                return !l->clang_enforced || l->clang_max < 0 || h->major <= l->clang_max;
        }
        *ret_max = l->gcc_max;
        return !l->gcc_enforced || l->gcc_max < 0 || h->major <= l->gcc_max;
}

/* --- headers and versions ---------------------------------------------- */

/* Read the first of names found in incdirs into ret_buf, its first head
 * bytes only when head is not 0; its path, or NULL when there is none. */
static char *header_read(const struct strv *incdirs, const char *const *names, size_t head,
                         struct strbuf *ret_buf)
{
        for (size_t n = 0; names[n]; n++)
                for (size_t i = 0; i < incdirs->len; i++) {
                        char *path = path_join(incdirs->items[i], names[n]);

                        strbuf_reset(ret_buf);
                        /* Type-checked before it is opened, as scan does:
                         * a device planted in a module's include directory
                         * is never opened. */
                        if (file_read_regular_at(AT_FDCWD, path, NULL, head ? head : HEADER_MAX, head != 0,
                                                 ret_buf, NULL) == 0)
                                return path;
                        free(path);
                }
        return NULL;
}

static int header_code(const struct component *c, const struct strbuf *buf, long *ret)
{
        if (c->header_code)
                return c->header_code(buf->buf, buf->len, ret);
        return component_macros_code(c->version_macros, buf->buf, buf->len, ret);
}

/* The version the component's header in incdirs declares, encoded as
 * the library's version function encodes it (12040, 90701, 8907, 22105).
 * Returns 0, -ENOENT when there is no such header or it declares no
 * version, another negative errno when the declaration is malformed;
 * *ret_file is the header read (or NULL). */
int component_header_version(const struct strv *incdirs, const struct component *c, long *ret, char **ret_file)
{
        _cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
        size_t head = c->version_header_head;
        int r;

        /* A long header (cuda_runtime_api.h is 600 KB) declares it in its
         * first lines: read the head first, the whole only when it is not
         * there. */
        *ret_file = header_read(incdirs, c->version_headers, head, &buf);
        if (!*ret_file)
                return -ENOENT;
        r = header_code(c, &buf, ret);
        if (r == -ENOENT && head && buf.len >= head) {
                free(*ret_file);
                *ret_file = header_read(incdirs, c->version_headers, 0, &buf);
                r = *ret_file ? header_code(c, &buf, ret) : -ENOENT;
        }
        return r;
}
