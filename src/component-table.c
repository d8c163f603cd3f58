/* component-table.c: the component table and its lookups
 * (component-table.h). */
#include "component.h"
#include "component-cuda.h"
#include "component-cudnn.h"
#include "component-nccl.h"
#include "component-cusparselt.h"
#include "component-cudss.h"
#include "component-nvshmem.h"
#include "component-magma.h"
#include "component-cutensor.h"
#include "component-table.h"
#include "libfile.h"
#include "name-hint.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

const struct component *const component_table[N_COMPONENTS] = {
#define X(name) [COMPONENT_INDEX(name)] = &component_##name,
        COMPONENT_LIST(X)
#undef X
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

char *soname_advice(const char *soname)
{
        return soname_advice_of(component_of_soname(soname), soname);
}

int name_hint_parse(const char *component, const char *name, const char *parent,
                    struct name_hint *ret)
{
        return name_hint_of(component_from_string(component), name, parent, ret);
}
