/* validate-check.c: a check's outcome and the findings that make it
 * (validate-check.h). */
#include <stdarg.h>
#include <stdio.h>

#include "validate-check.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

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

void findings_finish(struct findings *f, const char *summary, struct check *ret)
{
        check_set(ret, f->worst, "%s%s%s", summary, f->problems.len ? "\n" : "", f->problems.buf);
        findings_release(f);
}

void findings_skip(struct findings *f, const char *why, struct check *ret)
{
        if (f->worst == CHECK_PASS) {
                check_set(ret, CHECK_SKIP, "%s", why);
                findings_release(f);
        } else {
                findings_finish(f, why, ret);
        }
}
