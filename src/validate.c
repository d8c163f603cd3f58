/* validate.c: what the checks share, and the syntax and paths checks. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "validate.h"
#include "banned.h"

const char *validate_refused_variable(char *const *env, char *const *start)
{
        static const char *const refused[] = {
                "LD_PRELOAD", "LD_AUDIT", "GCONV_PATH", "LD_DEBUG_OUTPUT", "LD_PROFILE",
                "LD_PROFILE_OUTPUT", "COMPILER_PATH", "GCC_EXEC_PREFIX",
        };

        for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
                const char *now = env_get(env, refused[i]), *was = env_get(start, refused[i]);

                if (now && (!was || !streq(now, was)))
                        return refused[i];
        }
        return NULL;
}

static const char *const check_status_names[_CHECK_STATUS_MAX] = {
        [CHECK_PASS] = "pass",
        [CHECK_WARN] = "warn",
        [CHECK_FAIL] = "fail",
        [CHECK_SKIP] = "skip",
};

void findings_add(struct findings *f, enum check_status s, const char *fmt, ...)
{
        struct strbuf *sb = s == CHECK_PASS ? &f->facts : &f->problems;
        va_list ap;

        if (s > f->worst && s != CHECK_SKIP)
                f->worst = s;
        if (sb->len)
                strbuf_addstr(sb, s == CHECK_PASS ? "; " : "\n");
        va_start(ap, fmt);
        strbuf_vaddf(sb, fmt, ap);
        va_end(ap);
}

void findings_release(struct findings *f)
{
        strbuf_release(&f->facts);
        strbuf_release(&f->problems);
}

const char *check_status_to_string(enum check_status s)
{
        return s < _CHECK_STATUS_MAX ? check_status_names[s] : NULL;
}

void check_release(struct check *c)
{
        free(c->message);
        c->message = NULL;
}

enum check_status check_set(struct check *c, enum check_status s, const char *fmt, ...)
{
        va_list ap;
        char *m;

        va_start(ap, fmt);
        if (vasprintf(&m, fmt, ap) < 0)
                die_oom();
        va_end(ap);
        free(c->message);
        c->message = m;
        c->status = s;
        return s;
}

/* Whether dir holds a file named prefix followed by a digit ("libcudart.so."
 * then "12"). */
static bool dir_has_versioned(const char *dir, const char *prefix)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        bool found = false;
        size_t n = strlen(prefix);

        if (!d)
                return false;
        while (!found && (de = readdir(d)))
                found = strncmp(de->d_name, prefix, n) == 0 && ascii_isdigit(de->d_name[n]);
        closedir(d);
        return found;
}

const struct component *module_kind_detect(const char *name, const struct strv *own_libdirs)
{
        const char *base = name ? path_basename(name) : "";

        /* The component the name says, when its library is there; else the
         * first in table order whose library is. */
        for (int pass = 0; pass < 2; pass++)
                FOREACH_COMPONENT(c) {
                        _cleanup_free_ char *prefix = xasprintf("%s.so.", c->library);

                        if (pass == 0 && !ascii_strcaseeq(base, c->name))
                                continue;
                        for (size_t i = 0; i < own_libdirs->len; i++) {
                                _cleanup_free_ char *bare = NULL;
                                struct stat st;

                                if (c->unversioned_soname) {
                                        bare = xasprintf("%s/%s.so", own_libdirs->items[i], c->library);
                                        if (stat(bare, &st) == 0 && S_ISREG(st.st_mode))
                                                return c;
                                } else if (dir_has_versioned(own_libdirs->items[i], prefix))
                                        return c;
                        }
                }
        return NULL;
}
