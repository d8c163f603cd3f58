/* component.c: the component table and its lookups. */
#include <errno.h>

#include "component.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

const struct component *const component_table[N_COMPONENTS] = {
#define X(name) [COMPONENT_INDEX(name)] = &component_##name,
        COMPONENT_LIST(X)
#undef X
};

const char *const component_names[N_COMPONENTS + 1] = {
#define X(name) #name,
        COMPONENT_LIST(X)
#undef X
        NULL,
};

const struct component *component_from_string(const char *name)
{
        if (!name)
                return NULL;
        FOREACH_COMPONENT(c)
                if (streq(c->name, name))
                        return c;
        return NULL;
}

const struct component *component_from_name_nocase(const char *name)
{
        if (!name)
                return NULL;
        FOREACH_COMPONENT(c)
                if (ascii_strcaseeq(c->name, name))
                        return c;
        return NULL;
}

const struct component *component_toolkit(void)
{
        FOREACH_COMPONENT(c)
                if (c->toolkit)
                        return c;
        return NULL;
}

static bool stem_matches(const char *pattern, const char *stem)
{
        size_t n = strlen(pattern);

        if (n && pattern[n - 1] == '*')
                return strncmp(stem, pattern, n - 1) == 0;
        return streq(stem, pattern);
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

const struct component *component_of_soname(const char *soname)
{
        FOREACH_COMPONENT(c)
                if (component_has_soname(c, soname))
                        return c;
        return NULL;
}

char *component_list(enum component_field field, const char *conj)
{
        struct strbuf sb = STRBUF_INIT;
        size_t i = 0;

        FOREACH_COMPONENT(c) {
                const char *s = field == COMPONENT_FIELD_LABEL ? c->label :
                                field == COMPONENT_FIELD_NAME ? c->name : c->library;

                i++;
                strbuf_addf(&sb, "%s%s", i == 1 ? "" : i == N_COMPONENTS ? conj : ", ", s);
        }
        return strbuf_detach(&sb);
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
