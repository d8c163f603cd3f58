/* config-site.c: the keys of the site config that say how cudamod's tree
 * fits into the module trees a site has already (family, modulepath,
 * lmod): their default, copy, release and loader. */
#include <errno.h>

#include "component-table.h"
#include "component.h"
#include "config-site.h"
#include "config-yaml.h"
#include "util.h"
#include "banned.h"

void config_site_init_default(struct config *c)
{
        for (int i = 0; i < N_COMPONENTS; i++) {
                c->family[i] = (struct strv){ 0 };
                strv_add(&c->family[i], component_table[i]->name);
        }
        c->modulepath = (struct strv){ 0 };
        c->spider_cache = (struct config_spider_cache){ 0 };
}

void config_site_release(struct config *c)
{
        for (int i = 0; i < N_COMPONENTS; i++)
                strv_release(&c->family[i]);
        strv_release(&c->modulepath);
        free(c->spider_cache.dir);
        free(c->spider_cache.timestamp);
        c->spider_cache = (struct config_spider_cache){ 0 };
}

static void copy_strv(struct strv *dst, const struct strv *src)
{
        *dst = (struct strv){ 0 };
        for (size_t i = 0; i < src->len; i++)
                strv_add(dst, src->items[i]);
}

/* dst already holds src's fields by value (config_copy). */
void config_site_copy(struct config *dst, const struct config *src)
{
        for (int i = 0; i < N_COMPONENTS; i++)
                copy_strv(&dst->family[i], &src->family[i]);
        copy_strv(&dst->modulepath, &src->modulepath);
        dst->spider_cache.dir = src->spider_cache.dir ? xstrdup(src->spider_cache.dir) : NULL;
        dst->spider_cache.timestamp = src->spider_cache.timestamp ? xstrdup(src->spider_cache.timestamp) : NULL;
}

bool config_spider_cache_enabled(const struct config *c)
{
        return c->spider_cache.from_lmodrc || c->spider_cache.dir;
}

/* A module name as a family or conflict: what module names are made of
 * ([A-Za-z0-9._+-], '/' between parts), so that it reads the same in Lua,
 * Tcl and the shell code the tools print. */
static bool module_name_valid(const char *s)
{
        if (!*s || *s == '/' || *s == '.')
                return false;
        for (const char *q = s; *q; q++)
                if (!ascii_isalpha(*q) && !ascii_isdigit(*q) && !strchr("._+-/", *q))
                        return false;
        return s[strlen(s) - 1] != '/' && !strstr(s, "//");
}

/* family: {COMPONENT: [NAME...]}. */
int config_parse_family(struct parser *p, struct config *c)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        r = map_begin(p, &it, component_names);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                struct strv *v = &c->family[it.index];
                struct seq_iter si;

                r = seq_begin(p, &si, "a list of module names");
                if (r < 0)
                        return r;
                strv_release(v);
                while ((r = seq_next(p, &si)) > 0) {
                        const char *s;

                        r = get_string(p, "a module name", &s);
                        if (r < 0)
                                return r;
                        if (!module_name_valid(s))
                                return expected(p, "a module name (letters, digits, '._+-', '/' between parts)");
                        for (size_t k = 0; k < v->len; k++)
                                if (streq(v->items[k], s))
                                        return error_at(p, &p->event.start_mark, "'%s': '%s' is given twice",
                                                        p->path.buf, s);
                        strv_add(v, s);
                }
                if (r < 0)
                        return r;
        }
        return r;
}

/* modulepath: [DIR...], absolute directories. */
int config_parse_modulepath(struct parser *p, struct config *c)
{
        int r = parse_string_list(p, &c->modulepath);

        if (r < 0)
                return r;
        for (size_t i = 0; i < c->modulepath.len; i++)
                if (c->modulepath.items[i][0] != '/')
                        return error_at(p, &p->event.start_mark, "'%s[%zu]': '%s' is not an absolute path",
                                        p->path.buf, i, c->modulepath.items[i]);
        return 0;
}

static const char *const lmod_keys[] = { "spider_cache", "extensions", NULL };
static const char *const spider_cache_keys[] = { "dir", "timestamp", NULL };

static int set_absolute(struct parser *p, char **field)
{
        const char *s;
        int r = get_string(p, "an absolute path", &s);

        if (r < 0)
                return r;
        if (s[0] != '/')
                return expected(p, "an absolute path");
        free(*field);
        *field = xstrdup(s);
        return 0;
}

/* spider_cache: true | false | {dir: DIR, timestamp: FILE}. */
static int parse_spider_cache(struct parser *p, struct config *c)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        struct config_spider_cache *sc = &c->spider_cache;
        const yaml_mark_t start = p->event.start_mark;
        int r;

        if (p->event.type != YAML_MAPPING_START_EVENT) {
                bool on;

                r = get_bool(p, &on);
                if (r < 0)
                        return expected(p, "true, false or {dir: DIR, timestamp: FILE}");
                free(sc->dir);
                free(sc->timestamp);
                *sc = (struct config_spider_cache){ .from_lmodrc = on };
                return 0;
        }
        free(sc->dir);
        free(sc->timestamp);
        *sc = (struct config_spider_cache){ 0 };
        r = map_begin(p, &it, spider_cache_keys);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                r = set_absolute(p, it.index == 0 ? &sc->dir : &sc->timestamp);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        path_truncate(p, it.path_len);
        if (!sc->dir || !sc->timestamp)
                return error_at(p, &start, "'%s': needs both 'dir' and 'timestamp' (or write 'true' to "
                                "read them from the lmodrc's scDescriptT)", p->path.buf);
        return 0;
}

/* lmod: {spider_cache: ..., extensions: BOOL}. */
int config_parse_lmod(struct parser *p, struct config *c)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        r = map_begin(p, &it, lmod_keys);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                if (it.index == 0)
                        r = parse_spider_cache(p, c);
                else
                        r = get_bool(p, &c->lmod_extensions);
                if (r < 0)
                        return r;
        }
        return r;
}
