/* util.c: allocation that cannot fail, string vectors and path helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>

#include "util.h"
#include "banned.h"

bool ascii_strcaseeq(const char *a, const char *b)
{
        for (; *a && *b; a++, b++)
                if (ascii_tolower(*a) != ascii_tolower(*b))
                        return false;
        return *a == *b;
}

bool endswith(const char *s, const char *suffix)
{
        size_t ls = strlen(s), lx = strlen(suffix);

        return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

void die_oom(void)
{
        static const char msg[] = "cudamod: out of memory\n";

        /* write(2) rather than stdio: stdio may need memory itself. */
        if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
                abort();
        abort();
}

void *xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);

        if (!p)
                die_oom();
        return p;
}

void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n ? n : 1, size ? size : 1);

        if (!p)
                die_oom();
        return p;
}

void *xrealloc(void *p, size_t n)
{
        void *q = realloc(p, n ? n : 1);

        if (!q)
                die_oom();
        return q;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
        if (size && n > SIZE_MAX / size)
                die_oom();
        return xrealloc(p, n * size);
}

char *xstrdup(const char *s)
{
        char *p = strdup(s);

        if (!p)
                die_oom();
        return p;
}

char *xstrndup(const char *s, size_t n)
{
        char *p = strndup(s, n);

        if (!p)
                die_oom();
        return p;
}

char *xasprintf(const char *fmt, ...)
{
        va_list ap;
        char *p;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&p, fmt, ap);
        va_end(ap);
        if (r < 0)
                die_oom();
        return p;
}

void strv_push(struct strv *v, char *owned)
{
        if (v->len + 2 > v->alloc) {
                v->alloc = v->alloc ? v->alloc * 2 : 8;
                v->items = xreallocarray(v->items, v->alloc, sizeof(char *));
        }
        v->items[v->len++] = owned;
        v->items[v->len] = NULL;
}

void strv_add(struct strv *v, const char *s)
{
        strv_push(v, xstrdup(s));
}

bool strv_contains(const struct strv *v, const char *s)
{
        for (size_t i = 0; i < v->len; i++)
                if (streq(v->items[i], s))
                        return true;
        return false;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort_uniq(struct strv *v)
{
        size_t j = 0;

        if (v->len == 0)
                return;
        qsort(v->items, v->len, sizeof(char *), cmp_str);
        for (size_t i = 0; i < v->len; i++) {
                if (j > 0 && streq(v->items[j - 1], v->items[i])) {
                        free(v->items[i]);
                        continue;
                }
                v->items[j++] = v->items[i];
        }
        v->len = j;
        v->items[j] = NULL;
}

void strv_release(struct strv *v)
{
        for (size_t i = 0; i < v->len; i++)
                free(v->items[i]);
        free(v->items);
        *v = (struct strv){ 0 };
}

char *strv_join(const struct strv *v, const char *sep)
{
        size_t n = 1, k = strlen(sep);
        char *r, *p;

        for (size_t i = 0; i < v->len; i++)
                n += strlen(v->items[i]) + (i ? k : 0);
        p = r = xmalloc(n);
        for (size_t i = 0; i < v->len; i++) {
                size_t l = strlen(v->items[i]);

                if (i) {
                        memcpy(p, sep, k);
                        p += k;
                }
                memcpy(p, v->items[i], l);
                p += l;
        }
        *p = '\0';
        return r;
}

char *path_join(const char *a, const char *b)
{
        size_t la = strlen(a);

        while (*b == '/')
                b++;
        size_t lb = strlen(b);
        bool slash = !(la > 0 && a[la - 1] == '/');
        char *p;

        /* Not xasprintf: the scan joins a path for every name it looks
         * at, and vasprintf's format machinery was 14 % of its instructions. */
        if (la > SIZE_MAX / 2 || lb > SIZE_MAX / 2)
                die_oom();
        p = xmalloc(la + slash + lb + 1);
        memcpy(p, a, la);
        if (slash)
                p[la] = '/';
        memcpy(p + la + slash, b, lb + 1);
        return p;
}

bool path_has_component(const char *path, const char *name)
{
        size_t n = strlen(name);

        for (const char *s = path; (s = strstr(s, name)); s += n)
                if ((s == path || s[-1] == '/') && (s[n] == '\0' || s[n] == '/'))
                        return true;
        return false;
}

const char *path_basename(const char *path)
{
        const char *s = strrchr(path, '/');

        if (!s)
                return path;
        if (s[1] == '\0' && s != path) {
                /* Trailing slash: look at the component before it. */
                const char *e = s;
                while (e > path && e[-1] != '/')
                        e--;
                return e;
        }
        return s + 1;
}

char *path_dirname(const char *path)
{
        const char *s = strrchr(path, '/');

        if (!s)
                return xstrdup(".");
        if (s == path)
                return xstrdup("/");
        return xstrndup(path, (size_t)(s - path));
}

char *path_absolute(const char *path)
{
        char *joined, *out;
        size_t o = 0;

        if (path[0] == '/')
                joined = xstrdup(path);
        else {
                char *cwd = getcwd(NULL, 0);
                joined = cwd ? path_join(cwd, path) : xstrdup(path);
                free(cwd);
        }
        out = xmalloc(strlen(joined) + 2);
        for (const char *p = joined; *p;) {
                const char *e;
                size_t n;

                while (*p == '/')
                        p++;
                e = strchrnul(p, '/');
                n = (size_t)(e - p);
                if (n == 0 || (n == 1 && p[0] == '.')) {
                        p = e;
                        continue;
                }
                if (joined[0] == '/' || o > 0)
                        out[o++] = '/';
                memcpy(out + o, p, n);
                o += n;
                p = e;
        }
        if (o == 0)
                out[o++] = joined[0] == '/' ? '/' : '.';
        out[o] = '\0';
        free(joined);
        return out;
}

bool ascii_only(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s >= 0x80)
                        return false;
        return true;
}

bool module_version_char(char c)
{
        return ascii_isalpha(c) || ascii_isdigit(c) || c == '.' || c == '_' || c == '+' || c == '-';
}

bool module_version_valid(const char *s)
{
        if (!*s || *s == '.')
                return false;
        for (; *s; s++)
                if (!module_version_char(*s))
                        return false;
        return true;
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
size_t utf8_seq_len(const unsigned char *s)
{
        unsigned char c = s[0];
        size_t n;
        unsigned long cp;

        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf) {
                n = 2;
                cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
                n = 3;
                cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
                n = 4;
                cp = c & 0x07;
        } else
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return n;
}

bool utf8_valid(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (*p) {
                size_t n = utf8_seq_len(p);
                if (n == 0)
                        return false;
                p += n;
        }
        return true;
}

char *utf8_sanitize(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t cap = strlen(s) * 3 + 1, o = 0;
        char *r = xmalloc(cap);

        while (*p) {
                size_t n = utf8_seq_len(p);
                if (n == 0) {
                        memcpy(r + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        p++;
                        continue;
                }
                memcpy(r + o, p, n);
                o += n;
                p += n;
        }
        r[o] = '\0';
        return r;
}

const char *env_get(char *const *env, const char *name)
{
        size_t n = strlen(name);

        for (char *const *e = env; e && *e; e++)
                if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

bool env_name_valid(const char *s)
{
        if (!ascii_isalpha(*s) && *s != '_')
                return false;
        for (; *s; s++)
                if (!ascii_isalpha(*s) && !ascii_isdigit(*s) && *s != '_')
                        return false;
        return true;
}
