/* doctor-finding.c: writing doctor's findings and notes, and what the
 * finders ask of the libraries read (doctor-finding.h). */
#include <stdarg.h>

#include "doctor-finding.h"
#include "strbuf.h"
#include "version.h"
#include "banned.h"

_printf_(5, 0) static void add_finding_v(struct doctor_report *r, const char *id, const char *ref,
                                         char *what, const char *why_fmt, va_list ap)
{
        struct doctor_finding *f;

        r->findings = xreallocarray(r->findings, r->n_findings + 1, sizeof(*r->findings));
        struct strbuf why = STRBUF_INIT;

        strbuf_vaddf(&why, why_fmt, ap);
        f = &r->findings[r->n_findings++];
        *f = (struct doctor_finding){ .id = id, .ref = ref, .what = what, .why = strbuf_detach(&why) };
}

void doctor_add_finding(struct doctor_report *r, const char *id, const char *ref,
                        char *what, const char *why_fmt, char *fix, ...)
{
        va_list ap;

        va_start(ap, fix);
        add_finding_v(r, id, ref, what, why_fmt, ap);
        va_end(ap);
        r->findings[r->n_findings - 1].fix = fix;
}

void doctor_add_note(struct doctor_report *r, const char *fmt, ...)
{
        struct strbuf sb = STRBUF_INIT;
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        strv_push(&r->notes, strbuf_detach(&sb));
}

const char *doctor_resolved_path(const struct doctor *doc, const char *soname,
                                 const struct libset_entry **by)
{
        for (size_t i = 0; i < doc->r->n_libs; i++)
                for (size_t k = 0; k < doc->r->libs[i].n_needs; k++) {
                        const struct doctor_need *n = &doc->r->libs[i].needs[k];

                        if (n->path && streq(n->soname, soname)) {
                                if (by)
                                        *by = &doc->libs.items[i];
                                return n->path;
                        }
                }
        return NULL;
}

unsigned long doctor_needed_major(const struct doctor *doc, const char *stem, char **ret_soname)
{
        for (size_t i = 0; i < doc->libs.n; i++) {
                const struct strv *needed = &doc->libs.items[i].info.needed;

                for (size_t k = 0; k < needed->len; k++) {
                        struct version v;

                        /* libcudart.so.11.0: CUDA 11's runtime. */
                        if (soname_version_parse(needed->items[k], stem, &v) >= 0 &&
                            (v.count == 1 || (v.count == 2 && v.n[1] == 0))) {
                                if (ret_soname)
                                        *ret_soname = xstrdup(needed->items[k]);
                                return v.n[0];
                        }
                }
        }
        return 0;
}

char *doctor_major_fix(const struct doctor_report *r, const struct component *c, const char *article)
{
        _cleanup_free_ char *lead = xasprintf("no %s module", c->name);

        for (size_t i = 0; i < r->unavailable.len; i++)
                if (startswith(r->unavailable.items[i], lead))
                        return xstrdup(r->unavailable.items[i]);
        return xasprintf("load %s %s module built for CUDA %lu%s%s", article, c->name, r->built.cuda_major,
                         r->module_load ? ": " : "", r->module_load ? r->module_load : "");
}
