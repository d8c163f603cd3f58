/* util.h: small helpers shared by every module.
 *
 * Cleanup attributes in the style of systemd's alloc-util.h: a variable
 * declared _cleanup_free_ is freed when it leaves scope, and TAKE_PTR hands
 * ownership on. Out of memory in our own code is fatal (xmalloc family). */
#ifndef CUDAMOD_UTIL_H
#define CUDAMOD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define TAKE_PTR(p)                        \
        ({                                 \
                __typeof__(p) _tp_ = (p);  \
                (p) = NULL;                \
                _tp_;                      \
        })

#define TAKE_FD(fd)                  \
        ({                           \
                int _tfd_ = (fd);    \
                (fd) = -1;           \
                _tfd_;               \
        })

static inline void freep(void *p)
{
        free(*(void **)p);
}

static inline void closep(int *fd)
{
        if (*fd >= 0)
                close(*fd);
}

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}

static inline bool streq(const char *a, const char *b)
{
        return strcmp(a, b) == 0;
}

static inline bool startswith(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool endswith(const char *s, const char *suffix);

/* Locale-independent character classes: file contents and names are
 * compared as ASCII whatever LC_CTYPE says. */
static inline bool ascii_isdigit(char c)
{
        return c >= '0' && c <= '9';
}

static inline bool ascii_isalpha(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline char ascii_tolower(char c)
{
        return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool ascii_strcaseeq(const char *a, const char *b);

_noreturn_ void die_oom(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
_printf_(1, 2) char *xasprintf(const char *fmt, ...);

/* A growable array of owned strings; items are NULL-terminated. */
struct strv {
        char **items;
        size_t len;
        size_t alloc;
};

void strv_push(struct strv *v, char *owned);
void strv_add(struct strv *v, const char *s);
bool strv_contains(const struct strv *v, const char *s);
void strv_sort_uniq(struct strv *v);
void strv_release(struct strv *v);
/* The items joined with sep between them; newly allocated ("" when empty). */
char *strv_join(const struct strv *v, const char *sep);

/* The value of name in a NULL-terminated "NAME=value" list (an
 * environment, or the items of a strv), or NULL. */
const char *env_get(char *const *env, const char *name);

/* Path helpers: join two components without doubling '/'. */
char *path_join(const char *a, const char *b);
const char *path_basename(const char *path);
/* Whether one of path's components is name ("/a/stubs", "stubs/x/"). */
bool path_has_component(const char *path, const char *name);
/* Parent directory of path, newly allocated ("/" for "/x", "." for "x"). */
char *path_dirname(const char *path);
/* path made absolute against the working directory (symlinks and ".."
 * kept as written), with repeated slashes, "." components and trailing
 * slashes removed; newly allocated. */
char *path_absolute(const char *path);

/* The naming grammar: what a module version, and each part of a module
 * name, may be made of: [A-Za-z0-9._+-]+, not starting with '.'. Nothing
 * in it can close a quote or bracket of any module tool's language. */
bool module_version_char(char c);
bool module_version_valid(const char *s);

/* Whether every byte of s is ASCII (< 0x80). */
bool ascii_only(const char *s);

/* Whether s is valid UTF-8 (no overlongs, no surrogates). */
bool utf8_valid(const char *s);
/* The length of the valid UTF-8 sequence (no overlong form, no surrogate,
 * at most U+10FFFF) that s starts with, or 0 when it starts none. */
size_t utf8_seq_len(const unsigned char *s);
/* A name the config accepts for a variable: letters, digits and '_', not
 * starting with a digit. */
bool env_name_valid(const char *s);
/* s with every byte that is not part of valid UTF-8 replaced by U+FFFD. */
char *utf8_sanitize(const char *s);

#endif
