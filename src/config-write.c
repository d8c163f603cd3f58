/* config-write.c: the YAML writer: config_to_yaml, what `cudamod config`
 * prints. Every key is written, in the order of config.c's table of keys, and a
 * string is quoted where a plain scalar would read back as something else,
 * so that config_load reads the document back to an equal config. */
#include <stdio.h>
#include <stdlib.h>
#include <yaml.h>

#include "component-table.h"
#include "component.h"
#include "config.h"
#include "config-naming.h"
#include "config-site.h"
#include "config-write.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

static int emit_to_strbuf(void *data, unsigned char *buffer, size_t size)
{
        strbuf_add(data, buffer, size);
        return 1;
}

static void emit(yaml_emitter_t *e, yaml_event_t *ev)
{
        /* Every event is well formed and every string valid UTF-8, so only
         * memory can run out here; anything else is a bug. */
        if (!yaml_emitter_emit(e, ev)) {
                if (e->error == YAML_MEMORY_ERROR)
                        die_oom();
                abort();
        }
}

/* Whether a plain scalar s would be read by YAML 1.1 as something other
 * than a string (null, a boolean, a number, a merge key): such a string
 * must be quoted to stay one. Errs on the side of quoting. */
static bool plain_changes_type(const char *s)
{
        static const char *const words[] = {
                "", "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n", "<<", "=",
        };

        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                if (ascii_strcaseeq(s, words[i]))
                        return true;
        if (*s == '+' || *s == '-')
                s++;
        return ascii_isdigit(*s) || *s == '.';
}

static void emit_scalar(yaml_emitter_t *e, const char *s, bool is_string)
{
        _cleanup_free_ char *safe = utf8_valid(s) ? NULL : utf8_sanitize(s);
        const char *v = safe ? safe : s;
        yaml_event_t ev;

        if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (const yaml_char_t *)v, (int)strlen(v),
                                          !is_string || !plain_changes_type(v), 1, YAML_ANY_SCALAR_STYLE))
                die_oom();
        emit(e, &ev);
}

static void emit_string(yaml_emitter_t *e, const char *s)
{
        emit_scalar(e, s ? s : "", true);
}

static void emit_bool(yaml_emitter_t *e, bool b)
{
        emit_scalar(e, b ? "true" : "false", false);
}

static void emit_uint(yaml_emitter_t *e, unsigned u)
{
        char buf[16];

        snprintf(buf, sizeof(buf), "%u", u);
        emit_scalar(e, buf, false);
}

/* The start or end of a mapping or sequence, in block style. */
static void emit_collection(yaml_emitter_t *e, yaml_event_type_t type)
{
        yaml_event_t ev;
        int ok;

        switch (type) {
        case YAML_MAPPING_START_EVENT:
                ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
                break;
        case YAML_MAPPING_END_EVENT:
                ok = yaml_mapping_end_event_initialize(&ev);
                break;
        case YAML_SEQUENCE_START_EVENT:
                ok = yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
                break;
        case YAML_SEQUENCE_END_EVENT:
                ok = yaml_sequence_end_event_initialize(&ev);
                break;
        default:
                abort(); /* only the four above are collections */
        }
        if (!ok)
                die_oom();
        emit(e, &ev);
}

static void emit_strv(yaml_emitter_t *e, const struct strv *v)
{
        emit_collection(e, YAML_SEQUENCE_START_EVENT);
        for (size_t i = 0; i < v->len; i++)
                emit_string(e, v->items[i]);
        emit_collection(e, YAML_SEQUENCE_END_EVENT);
}

struct op_ref {
        const struct env_op *op;
        size_t pos;   /* in the ops */
        size_t first; /* pos of the first op on the same variable */
};

static int cmp_size(size_t a, size_t b)
{
        return (a > b) - (a < b);
}

static int op_ref_by_name(const void *a, const void *b)
{
        const struct op_ref *x = a, *y = b;
        int r = strcmp(x->op->name, y->op->name);

        return r ? r : cmp_size(x->pos, y->pos);
}

static int op_ref_by_first(const void *a, const void *b)
{
        const struct op_ref *x = a, *y = b;

        return x->first != y->first ? cmp_size(x->first, y->first) : cmp_size(x->pos, y->pos);
}

/* The ops of one kind, by variable in order of first appearance; a
 * variable with several path ops becomes a list (setenv keeps the last,
 * the one that takes effect). Sorting keeps this O(n log n). */
static void emit_env_kind(yaml_emitter_t *e, const struct env_ops *o, enum env_op_kind kind)
{
        _cleanup_free_ struct op_ref *refs = xcalloc(o->len ? o->len : 1, sizeof(*refs));
        size_t n = 0;

        for (size_t i = 0; i < o->len; i++)
                if (o->items[i].kind == kind)
                        refs[n++] = (struct op_ref){ .op = &o->items[i], .pos = i, .first = i };
        qsort(refs, n, sizeof(*refs), op_ref_by_name);
        for (size_t i = 1; i < n; i++)
                if (streq(refs[i].op->name, refs[i - 1].op->name))
                        refs[i].first = refs[i - 1].first;
        qsort(refs, n, sizeof(*refs), op_ref_by_first);

        emit_collection(e, YAML_MAPPING_START_EVENT);
        for (size_t i = 0, end; i < n; i = end) {
                for (end = i + 1; end < n && refs[end].first == refs[i].first; end++)
                        ;
                emit_string(e, refs[i].op->name);
                if (env_op_is_scalar(kind) || end - i == 1) {
                        emit_string(e, refs[end - 1].op->value);
                        continue;
                }
                emit_collection(e, YAML_SEQUENCE_START_EVENT);
                for (size_t k = i; k < end; k++)
                        emit_string(e, refs[k].op->value);
                emit_collection(e, YAML_SEQUENCE_END_EVENT);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);
}

static void emit_env_kind_once(yaml_emitter_t *e, const struct env_ops *o, enum env_op_kind kind,
                               bool done[])
{
        if (done[kind])
                return;
        done[kind] = true;
        emit_string(e, env_op_keys[kind]);
        emit_env_kind(e, o, kind);
}

/* Kinds in the order their first op appears, so that reading the output
 * back gives the ops in the same order; kinds without ops follow, empty,
 * so that every key is documented. */
static void emit_env_component(yaml_emitter_t *e, const struct env_ops *o)
{
        bool done[ENV_OP_KINDS] = { false };

        emit_collection(e, YAML_MAPPING_START_EVENT);
        for (size_t i = 0; i < o->len; i++)
                emit_env_kind_once(e, o, o->items[i].kind, done);
        for (size_t k = 0; k < ENV_OP_KINDS; k++)
                emit_env_kind_once(e, o, (enum env_op_kind)k, done);
        emit_collection(e, YAML_MAPPING_END_EVENT);
}

static void emit_key(yaml_emitter_t *e, const char *key)
{
        emit_string(e, key);
}

/* The list form unless a component has patterns of its own. */
static void emit_exclude(yaml_emitter_t *e, const struct config *c)
{
        bool per_component = false;

        FOREACH_COMPONENT(comp)
                per_component |= c->exclude_installs[comp->index].len > 0;
        if (!per_component) {
                emit_strv(e, &c->exclude);
                return;
        }
        emit_collection(e, YAML_MAPPING_START_EVENT);
        emit_key(e, "paths");
        emit_strv(e, &c->exclude);
        FOREACH_COMPONENT(comp)
                if (c->exclude_installs[comp->index].len) {
                        emit_key(e, comp->name);
                        emit_strv(e, &c->exclude_installs[comp->index]);
                }
        emit_collection(e, YAML_MAPPING_END_EVENT);
}

/* modulerc.<component>.<version> (lmod-api): only when there is one. */
static void emit_modulerc(yaml_emitter_t *e, const struct config *c)
{
        if (!c->n_version_rcs)
                return;
        emit_key(e, "modulerc");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        FOREACH_COMPONENT(comp) {
                bool any = false;

                for (size_t i = 0; i < c->n_version_rcs; i++) {
                        const struct config_version_rc *v = &c->version_rcs[i];

                        if (v->component != comp->index)
                                continue;
                        if (!any) {
                                emit_key(e, comp->name);
                                emit_collection(e, YAML_MAPPING_START_EVENT);
                                any = true;
                        }
                        emit_string(e, v->version);
                        emit_collection(e, YAML_MAPPING_START_EVENT);
                        emit_key(e, "hide");
                        emit_bool(e, v->hide);
                        emit_key(e, "aliases");
                        emit_collection(e, YAML_SEQUENCE_START_EVENT);
                        for (size_t k = 0; k < v->aliases.len; k++)
                                emit_string(e, v->aliases.items[k]);
                        emit_collection(e, YAML_SEQUENCE_END_EVENT);
                        emit_key(e, "tags");
                        emit_collection(e, YAML_SEQUENCE_START_EVENT);
                        for (size_t k = 0; k < v->tags.len; k++)
                                emit_string(e, v->tags.items[k]);
                        emit_collection(e, YAML_SEQUENCE_END_EVENT);
                        if (v->deprecated) {
                                emit_key(e, "deprecated");
                                emit_string(e, v->deprecated);
                        }
                        emit_collection(e, YAML_MAPPING_END_EVENT);
                }
                if (any)
                        emit_collection(e, YAML_MAPPING_END_EVENT);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);
}

/* family, modulepath, lmod (config-site.c). */
static void emit_site(yaml_emitter_t *e, const struct config *c)
{
        const struct config_spider_cache *sc = &c->spider_cache;

        emit_key(e, "family");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        for (int i = 0; i < N_COMPONENTS; i++) {
                emit_key(e, component_names[i]);
                emit_strv(e, &c->family[i]);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);
        emit_key(e, "modulepath");
        emit_strv(e, &c->modulepath);
        emit_key(e, "lmod");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        emit_key(e, "spider_cache");
        if (sc->dir) {
                emit_collection(e, YAML_MAPPING_START_EVENT);
                emit_key(e, "dir");
                emit_string(e, sc->dir);
                emit_key(e, "timestamp");
                emit_string(e, sc->timestamp);
                emit_collection(e, YAML_MAPPING_END_EVENT);
        } else
                emit_bool(e, sc->from_lmodrc);
        emit_key(e, "extensions");
        emit_bool(e, c->lmod_extensions);
        emit_collection(e, YAML_MAPPING_END_EVENT);
}

/* search: a root marked a mount or optional as {path: DIR, mount: true,
 * optional: true}, the others as plain strings. */
static void emit_search(yaml_emitter_t *e, const struct config *c)
{
        emit_collection(e, YAML_SEQUENCE_START_EVENT);
        for (size_t i = 0; i < c->search.len; i++) {
                bool mount = strv_contains(&c->search_mounts, c->search.items[i]);
                bool optional = strv_contains(&c->search_optional, c->search.items[i]);

                if (!mount && !optional) {
                        emit_string(e, c->search.items[i]);
                        continue;
                }
                emit_collection(e, YAML_MAPPING_START_EVENT);
                emit_key(e, "path");
                emit_string(e, c->search.items[i]);
                if (mount) {
                        emit_key(e, "mount");
                        emit_bool(e, true);
                }
                if (optional) {
                        emit_key(e, "optional");
                        emit_bool(e, true);
                }
                emit_collection(e, YAML_MAPPING_END_EVENT);
        }
        emit_collection(e, YAML_SEQUENCE_END_EVENT);
}

static void emit_config(yaml_emitter_t *e, const struct config *c)
{
        emit_collection(e, YAML_MAPPING_START_EVENT);
        emit_key(e, "output");
        emit_string(e, c->output);
        emit_key(e, "format");
        emit_string(e, module_format_to_string(c->format));
        emit_key(e, "layout");
        emit_string(e, module_layout_to_string(c->layout));
        emit_key(e, "driver_check");
        emit_string(e, driver_check_to_string(c->driver_check));
        emit_key(e, "search");
        emit_search(e, c);
        emit_key(e, "exclude");
        emit_exclude(e, c);
        emit_key(e, "max_depth");
        emit_uint(e, c->max_depth);

        emit_key(e, "defaults");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        for (int i = 0; i < N_COMPONENTS; i++) {
                const struct default_spec *s = &c->defaults[i];
                emit_key(e, component_names[i]);
                emit_string(e, s->kind == DEFAULT_VERSION ? s->version
                               : s->kind == DEFAULT_NONE  ? "none"
                                                          : "latest");
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);
        emit_key(e, "naming");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        if ((c->level_core && !streq(c->level_core, "Core")) ||
            (c->level_cuda && !streq(c->level_cuda, "CUDA/{cuda_major}"))) {
                emit_key(e, "levels");
                emit_collection(e, YAML_MAPPING_START_EVENT);
                emit_key(e, "core");
                emit_string(e, c->level_core ? c->level_core : "Core");
                emit_key(e, "cuda");
                emit_string(e, c->level_cuda ? c->level_cuda : "CUDA/{cuda_major}");
                emit_collection(e, YAML_MAPPING_END_EVENT);
        }
        for (int i = 0; i < N_COMPONENTS; i++) {
                emit_key(e, component_names[i]);
                if (!c->module_name[i] || streq(c->module_name[i], "{name}")) {
                        emit_string(e, c->naming[i]);
                        continue;
                }
                emit_collection(e, YAML_MAPPING_START_EVENT);
                emit_key(e, "name");
                emit_string(e, c->module_name[i]);
                emit_key(e, "version");
                emit_string(e, c->naming[i]);
                emit_collection(e, YAML_MAPPING_END_EVENT);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);
        if (c->arch) {
                emit_key(e, "arch");
                emit_string(e, c->arch);
        }
        emit_key(e, "ld_library_path");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        for (int i = 0; i < N_COMPONENTS; i++) {
                emit_key(e, component_names[i]);
                emit_bool(e, c->ld_library_path[i]);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);
        emit_key(e, "stubs_on_library_path");
        emit_bool(e, c->stubs_on_library_path);
        emit_key(e, "cuda_compat");
        emit_string(e, c->cuda_compat ? "auto" : "off");
        emit_key(e, "env");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        for (int i = 0; i < N_COMPONENTS; i++) {
                emit_key(e, component_names[i]);
                emit_env_component(e, &c->env[i]);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);

        emit_key(e, "pytorch");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        emit_key(e, "build_env");
        emit_bool(e, c->pytorch_build_env);
        emit_key(e, "cuda_arch_list");
        emit_string(e, c->cuda_arch_list);
        emit_collection(e, YAML_MAPPING_END_EVENT);

        emit_key(e, "host_compiler");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        for (size_t i = 0; i < c->n_host_compilers; i++) {
                const struct config_host_compiler *h = &c->host_compilers[i];
                char major[16];

                snprintf(major, sizeof(major), "%u", h->cuda_major);
                emit_string(e, major);
                if (h->path && !h->module) {
                        emit_string(e, h->path);
                        continue;
                }
                emit_collection(e, YAML_MAPPING_START_EVENT);
                emit_key(e, "module");
                emit_string(e, h->module);
                if (h->path) {
                        emit_key(e, "path");
                        emit_string(e, h->path);
                }
                emit_collection(e, YAML_MAPPING_END_EVENT);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);

        emit_key(e, "validate");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        emit_key(e, "launcher");
        emit_string(e, c->validate.launcher);
        emit_key(e, "targets");
        emit_collection(e, YAML_SEQUENCE_START_EVENT);
        for (size_t i = 0; i < c->validate.n_targets; i++) {
                emit_collection(e, YAML_MAPPING_START_EVENT);
                emit_key(e, "name");
                emit_string(e, c->validate.targets[i].name);
                emit_key(e, "launcher");
                emit_string(e, c->validate.targets[i].launcher);
                emit_collection(e, YAML_MAPPING_END_EVENT);
        }
        emit_collection(e, YAML_SEQUENCE_END_EVENT);
        emit_key(e, "timeout");
        emit_uint(e, c->validate.timeout);
        emit_key(e, "driver_libdir");
        emit_string(e, c->validate.driver_libdir);
        emit_key(e, "require_device");
        emit_bool(e, c->validate.require_device);
        emit_key(e, "compile");
        emit_bool(e, c->validate.compile);
        emit_collection(e, YAML_MAPPING_END_EVENT);

        emit_key(e, "templates");
        emit_string(e, c->templates);
        emit_key(e, "lock_timeout");
        emit_uint(e, c->lock_timeout);
        {
                char mode[8];

                snprintf(mode, sizeof(mode), "%04o", c->output_mode & 07777);
                emit_key(e, "output_mode");
                emit_string(e, mode);
        }
        emit_modulerc(e, c);
        emit_site(e, c);

        emit_key(e, "scan");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        emit_key(e, "jobs");
        emit_uint(e, c->scan_jobs);
        emit_collection(e, YAML_MAPPING_END_EVENT);
        emit_collection(e, YAML_MAPPING_END_EVENT);
}

void config_to_yaml(const struct config *c, struct strbuf *out)
{
        yaml_emitter_t e;
        yaml_event_t ev;

        if (!yaml_emitter_initialize(&e))
                die_oom();
        yaml_emitter_set_output(&e, emit_to_strbuf, out);
        yaml_emitter_set_unicode(&e, 1);
        yaml_emitter_set_width(&e, -1);
        yaml_emitter_set_indent(&e, 2);

        if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING))
                die_oom();
        emit(&e, &ev);
        if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1))
                die_oom();
        emit(&e, &ev);
        emit_config(&e, c);
        if (!yaml_document_end_event_initialize(&ev, 1))
                die_oom();
        emit(&e, &ev);
        if (!yaml_stream_end_event_initialize(&ev))
                die_oom();
        emit(&e, &ev);
        yaml_emitter_delete(&e);
}
