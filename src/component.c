/* component.c: the components' names and the helpers the descriptors
 * share (component.h). */
#include <errno.h>

#include "component.h"
#include "util.h"
#include "version.h"
#include "banned.h"

const char *const component_names[N_COMPONENTS + 1] = {
#define X(name) #name,
        COMPONENT_LIST(X)
#undef X
        NULL,
};

static bool stem_matches(const char *pattern, const char *stem)
{
        size_t n = strlen(pattern);

        if (n && pattern[n - 1] == '*')
                return strncmp(stem, pattern, n - 1) == 0;
        return streq(stem, pattern);
}

const char *component_easybuild_name(const struct component *c)
{
        return c->easybuild_name ? c->easybuild_name : c->label;
}

bool component_has_soname(const struct component *c, const char *soname)
{
        const char *so = strstr(soname, ".so");
        _cleanup_free_ char *stem = xstrndup(soname, so ? (size_t)(so - soname) : strlen(soname));

        for (const char *const *s = c ? c->stems : NULL; s && *s; s++)
                if (stem_matches(*s, stem))
                        return true;
        return false;
}

struct version component_code_mmp(long code)
{
        unsigned long c = code > 0 ? (unsigned long)code : 0;

        return (struct version){ .n = { c / 10000, c % 10000 / 100, c % 100 }, .count = 3 };
}

struct version component_code_library(long code)
{
        unsigned long c = code > 0 ? (unsigned long)code : 0;

        if (c >= 10000)
                return component_code_mmp(code);
        return (struct version){ .n = { c / 1000, c % 1000 / 100, c % 100 }, .count = 3 };
}

int component_macros_code(const char *const *macros, const char *buf, size_t len, long *ret)
{
        struct version v;
        int r = header_define_triple(buf, len, macros, &v);

        if (r < 0)
                return r;
        if (v.n[0] > 9999 || v.n[1] > 99 || v.n[2] > 99)
                return -EBADMSG;
        *ret = (long)(v.n[0] * 10000 + v.n[1] * 100 + v.n[2]);
        return 0;
}
