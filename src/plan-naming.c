/* plan-naming.c: the config's naming templates filled with an install's
 * facts (plan-naming.h): module versions, module names, the hierarchy's
 * level directories, and the architecture the tree is for. */
#include <errno.h>
#include <sys/utsname.h>

#include "plan-naming.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

/* Append the value of placeholder {name}, or fail naming what is missing. */
static int fact_value(const char *tmpl, const char *name, const void *userdata, struct strbuf *out,
                      struct diag *d)
{
        const struct naming_facts *f = userdata;
        static const char *const parts[] = { "major", "minor", "patch" };
        static const struct version none = { .count = 0 };
        const struct version *v = f->version ? f->version : &none;
        _cleanup_free_ char *have = v->count ? version_to_string(v, 0) : xstrdup("an unknown version");

        for (unsigned i = 0; i < ELEMENTSOF(parts); i++) {
                if (!streq(name, parts[i]))
                        continue;
                if (v->count <= i)
                        return diag_errorf(d, -EINVAL,
                                           "naming template '%s' needs a %s version, and %s has none", tmpl,
                                           parts[i], have);
                strbuf_addf(out, "%lu", v->n[i]);
                return 0;
        }
        if (streq(name, "build")) {
                if (f->build && *f->build)
                        strbuf_addstr(out, f->build);
                else if (v->count >= 4)
                        strbuf_addf(out, "%lu", v->n[3]);
                else
                        return diag_errorf(d, -EINVAL,
                                           "naming template '%s' needs a build number, and %s has none", tmpl,
                                           have);
                return 0;
        }
        if (streq(name, "cuda_major")) {
                if (f->cuda_major < 0)
                        return diag_errorf(d, -EINVAL, "naming template '%s' needs the CUDA major version, "
                                           "and it is unknown for %s", tmpl, have);
                strbuf_addf(out, "%ld", f->cuda_major);
                return 0;
        }
        if (streq(name, "cuda") || streq(name, "cuda_version")) {
                _cleanup_free_ char *s = NULL;

                if (f->cuda && f->cuda->count)
                        /* MAJOR.MINOR, or only the major when that is all that is known. */
                        s = version_to_string(f->cuda, 2);
                else if (f->cuda_major >= 0)
                        s = xasprintf("%ld", f->cuda_major);
                else
                        return diag_errorf(d, -EINVAL, "naming template '%s' needs the CUDA version, "
                                           "and it is unknown for %s", tmpl, have);
                strbuf_addstr(out, s);
                return 0;
        }
        if (streq(name, "cuda_full")) {
                if (!f->cuda_full || !*f->cuda_full)
                        return diag_errorf(d, -EINVAL, "naming template '%s' needs the full CUDA version, "
                                           "and it is unknown for %s", tmpl, have);
                strbuf_addstr(out, f->cuda_full);
                return 0;
        }
        if (streq(name, "version") || streq(name, "version_full")) {
                const char *s = streq(name, "version") ? f->version_str : f->version_full;

                if (!s || !*s)
                        return diag_errorf(d, -EINVAL, "naming template '%s' needs the version, and it "
                                           "is unknown", tmpl);
                strbuf_addstr(out, s);
                return 0;
        }
        if (streq(name, "arch")) {
                if (!f->arch || !*f->arch)
                        return diag_errorf(d, -EINVAL, "naming template '%s' needs the architecture, "
                                           "and it is unknown for %s", tmpl, have);
                strbuf_addstr(out, f->arch);
                return 0;
        }
        if (streq(name, "name") && f->name) {
                strbuf_addstr(out, f->name);
                return 0;
        }
        return naming_unknown_placeholder(tmpl, name, d);
}

int plan_naming_expand(const char *tmpl, enum naming_kind kind, const struct naming_facts *f, char **ret,
                       size_t *ret_at, struct diag *d)
{
        return naming_template_fill(tmpl, kind, fact_value, f, ret, ret_at, d);
}

int plan_naming_expand_version(const char *tmpl, const struct version *v, const char *build, long cuda_major,
                               const struct version *cuda, char **ret, struct diag *d)
{
        _cleanup_free_ char *str = v && v->count ? version_to_string(v, 0) : NULL;
        struct naming_facts f = { .version = v, .version_str = str, .version_full = str, .build = build,
                                  .cuda_major = cuda_major, .cuda = cuda };

        return plan_naming_expand(tmpl, NAMING_VERSION, &f, ret, NULL, d);
}

char *plan_module_name(const struct config *c, const struct component *comp)
{
        const char *tmpl = c->module_name[comp->index] ? c->module_name[comp->index] : NAMING_NAME_DEFAULT;
        struct naming_facts f = { .name = comp->name, .cuda_major = -1 };
        char *ret = NULL;

        /* Checked when loaded: a name template uses only {name}. */
        if (plan_naming_expand(tmpl, NAMING_NAME, &f, &ret, NULL, NULL) < 0)
                return xstrdup(comp->name);
        return ret;
}

char *plan_level(const struct config *c, long cuda_major)
{
        const char *tmpl = cuda_major < 0 ? (c->level_core ? c->level_core : NAMING_LEVEL_CORE_DEFAULT)
                                          : (c->level_cuda ? c->level_cuda : NAMING_LEVEL_CUDA_DEFAULT);
        struct naming_facts f = { .cuda_major = cuda_major };
        char *ret = NULL;

        if (plan_naming_expand(tmpl, NAMING_LEVEL, &f, &ret, NULL, NULL) < 0)
                return cuda_major < 0 ? xstrdup(NAMING_LEVEL_CORE_DEFAULT) : xasprintf("CUDA/%ld", cuda_major);
        return ret;
}

const char *plan_arch(const struct config *c)
{
        static struct utsname u;

        if (c && c->arch)
                return c->arch;
        if (!u.machine[0] && uname(&u) < 0)
                return NULL;
        return u.machine[0] ? u.machine : NULL;
}
