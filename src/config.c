/* config.c: the site configuration: the built-in default, the YAML loader,
 * the YAML writer and module naming templates.
 *
 * The loader makes two passes over libyaml's events. The first refuses,
 * wherever it is, what a config never needs and what makes YAML dangerous
 * or ambiguous: syntax errors, anchors and aliases (alias bombs), tags,
 * several documents, deep nesting, NUL bytes and input that is not UTF-8.
 * The second walks the schema as the events arrive and stops at the first
 * problem, reported with its position and dotted key. A plain scalar is
 * taken as its source text, so `cuda: 12.10` is the version "12.10", never
 * the float 12.1; a quoted scalar is always a string. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <yaml.h>

#include "config.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "banned.h"

/* A site config is a few KiB; the cap bounds what the parser may allocate. */
#define CONFIG_MAX_SIZE ((size_t)1 << 20)
/* The schema nests 5 levels deep (env.cuda.prepend_path.PATH[0]). */
#define CONFIG_MAX_NESTING 16
#define MAX_DEPTH_MAX 64
#define TIMEOUT_MAX 86400
/* How many bytes of a value a message quotes. */
#define QUOTE_MAX 60

static const char *const format_names[_FORMAT_MAX] = {
        [FORMAT_LUA] = "lua",
        [FORMAT_TCL] = "tcl",
};

static const char *const layout_names[_MODULE_LAYOUT_MAX] = {
        [MODULE_LAYOUT_HIERARCHICAL] = "hierarchical",
        [MODULE_LAYOUT_FLAT] = "flat",
};

const char *module_format_to_string(enum module_format f)
{
        return f >= 0 && f < _FORMAT_MAX ? format_names[f] : NULL;
}

enum module_format module_format_from_string(const char *s)
{
        for (int i = 0; s && i < _FORMAT_MAX; i++)
                if (streq(s, format_names[i]))
                        return (enum module_format)i;
        return _FORMAT_INVALID;
}

const char *module_layout_to_string(enum module_layout l)
{
        return l >= 0 && l < _MODULE_LAYOUT_MAX ? layout_names[l] : NULL;
}

enum module_layout module_layout_from_string(const char *s)
{
        for (int i = 0; s && i < _MODULE_LAYOUT_MAX; i++)
                if (streq(s, layout_names[i]))
                        return (enum module_layout)i;
        return _MODULE_LAYOUT_INVALID;
}

/* ---- the config struct ---- */

/* Keys of the top-level mapping, in the order of DESIGN.md section 4. */
enum top_key {
        KEY_OUTPUT,
        KEY_FORMAT,
        KEY_LAYOUT,
        KEY_SEARCH,
        KEY_EXCLUDE,
        KEY_MAX_DEPTH,
        KEY_DEFAULTS,
        KEY_NAMING,
        KEY_LD_LIBRARY_PATH,
        KEY_STUBS_ON_LIBRARY_PATH,
        KEY_ENV,
        KEY_PYTORCH,
        KEY_VALIDATE,
        KEY_TEMPLATES,
        KEY_LOCK_TIMEOUT,
        _KEY_MAX,
};

static const char *const top_keys[_KEY_MAX + 1] = {
        [KEY_OUTPUT] = "output",
        [KEY_FORMAT] = "format",
        [KEY_LAYOUT] = "layout",
        [KEY_SEARCH] = "search",
        [KEY_EXCLUDE] = "exclude",
        [KEY_MAX_DEPTH] = "max_depth",
        [KEY_DEFAULTS] = "defaults",
        [KEY_NAMING] = "naming",
        [KEY_LD_LIBRARY_PATH] = "ld_library_path",
        [KEY_STUBS_ON_LIBRARY_PATH] = "stubs_on_library_path",
        [KEY_ENV] = "env",
        [KEY_PYTORCH] = "pytorch",
        [KEY_VALIDATE] = "validate",
        [KEY_TEMPLATES] = "templates",
        [KEY_LOCK_TIMEOUT] = "lock_timeout",
};


static const char *const env_op_keys[] = {
        [ENV_OP_SETENV] = "setenv",
        [ENV_OP_PREPEND_PATH] = "prepend_path",
        [ENV_OP_APPEND_PATH] = "append_path",
        NULL,
};
#define ENV_OP_KINDS (ELEMENTSOF(env_op_keys) - 1)

enum pytorch_key { PYTORCH_BUILD_ENV, PYTORCH_CUDA_ARCH_LIST };
static const char *const pytorch_keys[] = { "build_env", "cuda_arch_list", NULL };

enum validate_key {
        VALIDATE_LAUNCHER,
        VALIDATE_TARGETS,
        VALIDATE_TIMEOUT,
        VALIDATE_DRIVER_LIBDIR,
        VALIDATE_REQUIRE_DEVICE,
        VALIDATE_COMPILE,
};
static const char *const validate_keys[] = {
        "launcher", "targets", "timeout", "driver_libdir", "require_device", "compile", NULL,
};

enum target_key { TARGET_NAME, TARGET_LAUNCHER };
static const char *const target_keys[] = { "name", "launcher", NULL };

void config_init_default(struct config *c)
{
        *c = (struct config){
                .format = FORMAT_LUA,
                .layout = MODULE_LAYOUT_HIERARCHICAL,
                .max_depth = 8,
                .stubs_on_library_path = true,
                .pytorch_build_env = true,
                .cuda_arch_list = xstrdup(""),
                .validate = {
                        .launcher = xstrdup(""),
                        .timeout = 120,
                        .driver_libdir = xstrdup(""),
                        .require_device = false,
                        .compile = true,
                },
                .templates = xstrdup(""),
                .lock_timeout = 60,
        };
        for (int i = 0; i < N_COMPONENTS; i++) {
                c->defaults[i].kind = DEFAULT_LATEST;
                c->naming[i] = xstrdup(component_table[i]->naming);
                c->ld_library_path[i] = true;
        }
}

static void env_ops_add(struct env_ops *o, enum env_op_kind kind, const char *name, const char *value)
{
        if (o->len == o->alloc) {
                o->alloc = o->alloc ? 2 * o->alloc : 4;
                o->items = xreallocarray(o->items, o->alloc, sizeof(*o->items));
        }
        o->items[o->len++] = (struct env_op){ .kind = kind, .name = xstrdup(name), .value = xstrdup(value) };
}

static void env_ops_release(struct env_ops *o)
{
        for (size_t i = 0; i < o->len; i++) {
                free(o->items[i].name);
                free(o->items[i].value);
        }
        free(o->items);
        *o = (struct env_ops){ 0 };
}

static void targets_release(struct config *c)
{
        for (size_t i = 0; i < c->validate.n_targets; i++) {
                free(c->validate.targets[i].name);
                free(c->validate.targets[i].launcher);
        }
        free(c->validate.targets);
        c->validate.targets = NULL;
        c->validate.n_targets = 0;
}

void config_release(struct config *c)
{
        free(c->file);
        free(c->output);
        strv_release(&c->search);
        strv_release(&c->exclude);
        for (int i = 0; i < N_COMPONENTS; i++) {
                free(c->defaults[i].version);
                free(c->naming[i]);
                env_ops_release(&c->env[i]);
        }
        free(c->cuda_arch_list);
        free(c->cuda_arch_list_origin);
        free(c->validate.launcher);
        targets_release(c);
        free(c->validate.driver_libdir);
        free(c->templates);
        *c = (struct config){ 0 };
}

static char *xstrdup_or_null(const char *s)
{
        return s ? xstrdup(s) : NULL;
}

static void strv_copy(struct strv *dst, const struct strv *src)
{
        *dst = (struct strv){ 0 };
        for (size_t i = 0; i < src->len; i++)
                strv_add(dst, src->items[i]);
}

/* A deep copy, so that a load can work on it and be dropped on error. */
static void config_copy(struct config *dst, const struct config *src)
{
        *dst = *src;
        dst->file = xstrdup_or_null(src->file);
        dst->output = xstrdup_or_null(src->output);
        strv_copy(&dst->search, &src->search);
        strv_copy(&dst->exclude, &src->exclude);
        for (int i = 0; i < N_COMPONENTS; i++) {
                dst->defaults[i].version = xstrdup_or_null(src->defaults[i].version);
                dst->naming[i] = xstrdup_or_null(src->naming[i]);
                dst->env[i] = (struct env_ops){ 0 };
                for (size_t k = 0; k < src->env[i].len; k++)
                        env_ops_add(&dst->env[i], src->env[i].items[k].kind, src->env[i].items[k].name,
                                    src->env[i].items[k].value);
        }
        dst->cuda_arch_list = xstrdup_or_null(src->cuda_arch_list);
        dst->cuda_arch_list_origin = xstrdup_or_null(src->cuda_arch_list_origin);
        dst->validate.launcher = xstrdup_or_null(src->validate.launcher);
        dst->validate.targets = NULL;
        if (src->validate.n_targets) {
                dst->validate.targets = xcalloc(src->validate.n_targets, sizeof(*dst->validate.targets));
                for (size_t i = 0; i < src->validate.n_targets; i++)
                        dst->validate.targets[i] = (struct config_target){
                                .name = xstrdup_or_null(src->validate.targets[i].name),
                                .launcher = xstrdup_or_null(src->validate.targets[i].launcher),
                        };
        }
        dst->validate.driver_libdir = xstrdup_or_null(src->validate.driver_libdir);
        dst->templates = xstrdup_or_null(src->templates);
}

/* ---- characters ---- */

static bool module_version_char(char c)
{
        return ascii_isalpha(c) || ascii_isdigit(c) || c == '.' || c == '_' || c == '+' || c == '-';
}

/* What a module version may be: [A-Za-z0-9._+-]+, not starting with '.'. */
static bool module_version_valid(const char *s)
{
        if (!*s || *s == '.')
                return false;
        for (; *s; s++)
                if (!module_version_char(*s))
                        return false;
        return true;
}

/* Length of the UTF-8 sequence at p (at most n bytes), 0 when invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
        size_t len;
        uint32_t cp;

        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                len = 2, cp = p[0] & 0x1f;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
                len = 3, cp = p[0] & 0x0f;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
                len = 4, cp = p[0] & 0x07;
        else
                return 0;
        if (n < len)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

/* The 1-based line and column (in characters, as libyaml counts) of the
 * byte at offset; libyaml's reader reports only the offset. */
static void offset_position(const char *buf, size_t len, size_t offset, unsigned *ret_line,
                            unsigned *ret_col)
{
        const unsigned char *p = (const unsigned char *)buf;
        unsigned line = 1, col = 1;
        size_t i = 0;

        if (offset > len)
                offset = len;
        if (len >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
                i = 3; /* the byte order mark takes no column */
        for (; i < offset; i++) {
                if (p[i] == '\n' || (p[i] == '\r' && (i + 1 >= len || p[i + 1] != '\n'))) {
                        line++;
                        col = 1;
                } else if (p[i] != '\r' && (p[i] & 0xc0) != 0x80)
                        col++;
        }
        *ret_line = line;
        *ret_col = col;
}

/* 'value', cut to QUOTE_MAX bytes on a character boundary. */
static char *quote_value(const char *s)
{
        size_t n = strlen(s);

        if (n <= QUOTE_MAX)
                return xasprintf("'%s'", s);
        n = QUOTE_MAX;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
                n--;
        return xasprintf("'%.*s...'", (int)n, s);
}

/* Optimal string alignment distance (a transposition is one edit), case
 * insensitive; SIZE_MAX for strings longer than any key. */
static size_t edit_distance(const char *a, const char *b)
{
        enum { MAXLEN = 32 };
        size_t d[MAXLEN + 1][MAXLEN + 1];
        size_t la = strlen(a), lb = strlen(b);

        if (la > MAXLEN || lb > MAXLEN)
                return SIZE_MAX;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t cost = ascii_tolower(a[i - 1]) != ascii_tolower(b[j - 1]);
                        size_t best = d[i - 1][j - 1] + cost;

                        if (d[i - 1][j] + 1 < best)
                                best = d[i - 1][j] + 1;
                        if (d[i][j - 1] + 1 < best)
                                best = d[i][j - 1] + 1;
                        if (i > 1 && j > 1 && ascii_tolower(a[i - 1]) == ascii_tolower(b[j - 2]) &&
                            ascii_tolower(a[i - 2]) == ascii_tolower(b[j - 1]) && d[i - 2][j - 2] + 1 < best)
                                best = d[i - 2][j - 2] + 1;
                        d[i][j] = best;
                }
        return d[la][lb];
}

/* The known key nearest to key, when it is close enough to be a typo. */
static const char *nearest_key(const char *const *keys, const char *key)
{
        const char *best = NULL;
        size_t best_d = 3, len = strlen(key);

        for (size_t i = 0; keys[i]; i++) {
                size_t dist = edit_distance(key, keys[i]);
                if (dist < best_d && dist < len) {
                        best = keys[i];
                        best_d = dist;
                }
        }
        return best;
}

/* A set of strings it does not own, to find duplicates in linear time
 * (a map may hold a hundred thousand keys in 1 MiB): open addressing,
 * at most half full. */
struct keyset {
        const char **slots;
        size_t n, cap;
};

static size_t str_hash(const char *s)
{
        uint64_t h = 14695981039346656037u; /* FNV-1a */

        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211u;
        return (size_t)h;
}

static void keyset_insert(struct keyset *set, const char *s)
{
        size_t i = str_hash(s) & (set->cap - 1);

        while (set->slots[i])
                i = (i + 1) & (set->cap - 1);
        set->slots[i] = s;
        set->n++;
}

/* Add s; false when it was there already. */
static bool keyset_add(struct keyset *set, const char *s)
{
        if (set->cap) {
                for (size_t i = str_hash(s) & (set->cap - 1); set->slots[i]; i = (i + 1) & (set->cap - 1))
                        if (streq(set->slots[i], s))
                                return false;
        }
        if (2 * (set->n + 1) > set->cap) {
                struct keyset bigger = { .cap = set->cap ? 2 * set->cap : 16 };

                bigger.slots = xcalloc(bigger.cap, sizeof(*bigger.slots));
                for (size_t i = 0; i < set->cap; i++)
                        if (set->slots[i])
                                keyset_insert(&bigger, set->slots[i]);
                free(set->slots);
                *set = bigger;
        }
        keyset_insert(set, s);
        return true;
}

static void keyset_release(struct keyset *set)
{
        free(set->slots);
        *set = (struct keyset){ 0 };
}

/* ---- the loader ---- */

struct parser {
        yaml_parser_t yaml;
        bool yaml_ready;
        yaml_event_t event; /* the current event */
        const char *file;
        const char *buf;
        size_t len;
        unsigned nesting;   /* open mappings and sequences */
        struct strbuf path; /* dotted key path of the current value */
        struct diag *d;
};

static void parser_release(struct parser *p)
{
        yaml_event_delete(&p->event);
        if (p->yaml_ready)
                yaml_parser_delete(&p->yaml);
        strbuf_release(&p->path);
}

__attribute__((format(printf, 3, 4))) static int error_at(struct parser *p, const yaml_mark_t *m,
                                                          const char *fmt, ...)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        return diag_set(p->d, -EINVAL, p->file, (unsigned)m->line + 1, (unsigned)m->column + 1, "%s",
                        sb.buf);
}

__attribute__((format(printf, 3, 4))) static int error_at_offset(struct parser *p, size_t offset,
                                                                 const char *fmt, ...)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        unsigned line, col;
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        offset_position(p->buf, p->len, offset, &line, &col);
        return diag_set(p->d, -EINVAL, p->file, line, col, "%s", sb.buf);
}

static const char *scalar_text(const yaml_event_t *e)
{
        return (const char *)e->data.scalar.value;
}

/* Empty, ~ and null written plain: YAML's null, which no key accepts. */
static bool scalar_is_null(const yaml_event_t *e)
{
        static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

        if (e->type != YAML_SCALAR_EVENT || e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(nulls); i++)
                if (streq(scalar_text(e), nulls[i]))
                        return true;
        return false;
}

/* The current value in words, for "expected X, not Y". */
static char *describe(const yaml_event_t *e)
{
        _cleanup_free_ char *q = NULL;

        switch (e->type) {
        case YAML_MAPPING_START_EVENT:
                return xstrdup("a mapping");
        case YAML_SEQUENCE_START_EVENT:
                return xstrdup("a list");
        case YAML_SCALAR_EVENT:
                if (scalar_is_null(e))
                        return xstrdup("null");
                q = quote_value(scalar_text(e));
                if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                        return xasprintf("the string %s", q);
                return TAKE_PTR(q);
        default:
                return xstrdup("nothing");
        }
}

/* "'KEY': expected WHAT, not VALUE" at the current value. */
static int expected(struct parser *p, const char *what)
{
        _cleanup_free_ char *desc = describe(&p->event);

        return error_at(p, &p->event.start_mark, "'%s': expected %s, not %s", p->path.buf, what, desc);
}

static int syntax_error(struct parser *p)
{
        const yaml_parser_t *y = &p->yaml;
        const char *problem = y->problem ? y->problem : "unknown error";

        switch (y->error) {
        case YAML_MEMORY_ERROR:
                die_oom();
        case YAML_READER_ERROR:
                if (y->problem_value >= 0)
                        return error_at_offset(p, y->problem_offset, "invalid character: %s (U+%04X)",
                                               problem, (unsigned)y->problem_value);
                return error_at_offset(p, y->problem_offset, "invalid input: %s", problem);
        case YAML_SCANNER_ERROR:
        case YAML_PARSER_ERROR:
                if (y->context)
                        return error_at(p, &y->problem_mark, "syntax error: %s (%s at %u:%u)", problem,
                                        y->context, (unsigned)y->context_mark.line + 1,
                                        (unsigned)y->context_mark.column + 1);
                return error_at(p, &y->problem_mark, "syntax error: %s", problem);
        default:
                return error_at(p, &y->problem_mark, "cannot parse: %s", problem);
        }
}

/* The next event, refusing what no config needs. */
static int parser_next(struct parser *p)
{
        const yaml_char_t *anchor = NULL, *tag = NULL;
        yaml_event_t *e = &p->event;

        yaml_event_delete(e);
        if (!yaml_parser_parse(&p->yaml, e))
                return syntax_error(p);
        switch (e->type) {
        case YAML_ALIAS_EVENT:
                return error_at(p, &e->start_mark, "anchors and aliases are not supported");
        case YAML_SCALAR_EVENT:
                anchor = e->data.scalar.anchor;
                tag = e->data.scalar.tag;
                /* A double-quoted "\0" is the only way a NUL gets this far. */
                if (memchr(e->data.scalar.value, '\0', e->data.scalar.length))
                        return error_at(p, &e->start_mark, "strings must not hold a NUL character");
                break;
        case YAML_SEQUENCE_START_EVENT:
                anchor = e->data.sequence_start.anchor;
                tag = e->data.sequence_start.tag;
                p->nesting++;
                break;
        case YAML_MAPPING_START_EVENT:
                anchor = e->data.mapping_start.anchor;
                tag = e->data.mapping_start.tag;
                p->nesting++;
                break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                p->nesting--;
                break;
        default:
                break;
        }
        if (anchor)
                return error_at(p, &e->start_mark, "anchors and aliases are not supported");
        if (tag) {
                const char *t = (const char *)tag;
                if (startswith(t, "tag:yaml.org,2002:"))
                        return error_at(p, &e->start_mark, "tags are not supported: '!!%s'",
                                        t + strlen("tag:yaml.org,2002:"));
                return error_at(p, &e->start_mark, "tags are not supported: '%s'", t);
        }
        if (p->nesting > CONFIG_MAX_NESTING)
                return error_at(p, &e->start_mark, "nesting deeper than %d levels", CONFIG_MAX_NESTING);
        return 0;
}

static void path_truncate(struct parser *p, size_t len)
{
        p->path.len = len;
        p->path.buf[len] = '\0';
}

/* Walks one mapping: map_begin at its start event, then each map_next
 * that returns 1 leaves the value of the next key as the current event
 * (and the key in p->path), 0 at the end. Duplicate keys are refused;
 * with keys set, so are keys not in it. */
struct map_iter {
        const char *const *keys; /* NULL-terminated; NULL: any key */
        struct strv seen;        /* owns the keys */
        struct keyset seen_set;  /* finds them */
        size_t path_len;
        const char *key;
        int index;               /* of key in keys, or -1 */
        yaml_mark_t key_mark;
};

static void map_iter_release(struct map_iter *it)
{
        strv_release(&it->seen);
        keyset_release(&it->seen_set);
}

static int map_begin(struct parser *p, struct map_iter *it, const char *const *keys)
{
        if (p->event.type != YAML_MAPPING_START_EVENT)
                return expected(p, "a mapping");
        map_iter_release(it);
        *it = (struct map_iter){ .keys = keys, .path_len = p->path.len, .index = -1 };
        return 0;
}

static int unknown_key(struct parser *p, const struct map_iter *it, const char *key)
{
        _cleanup_free_ char *parent = xstrndup(p->path.buf, it->path_len);
        const char *dot = *parent ? "." : "";
        const char *near = nearest_key(it->keys, key);
        _cleanup_strbuf_ struct strbuf known = STRBUF_INIT;

        if (near)
                return error_at(p, &it->key_mark, "unknown key '%s'; did you mean '%s%s%s'?", p->path.buf,
                                parent, dot, near);
        for (size_t i = 0; it->keys[i]; i++)
                strbuf_addf(&known, "%s%s", i ? ", " : "", it->keys[i]);
        return error_at(p, &it->key_mark, "unknown key '%s'; known keys: %s", p->path.buf, known.buf);
}

static int map_next(struct parser *p, struct map_iter *it)
{
        const char *key;
        int r;

        path_truncate(p, it->path_len);
        r = parser_next(p);
        if (r < 0)
                return r;
        if (p->event.type == YAML_MAPPING_END_EVENT)
                return 0;
        it->key_mark = p->event.start_mark;
        if (p->event.type != YAML_SCALAR_EVENT) {
                _cleanup_free_ char *desc = describe(&p->event);
                return error_at(p, &it->key_mark, "%s%s%sa key must be a string, not %s",
                                it->path_len ? "'" : "", p->path.buf, it->path_len ? "': " : "", desc);
        }
        key = scalar_text(&p->event);
        strbuf_addf(&p->path, "%s%s", it->path_len ? "." : "", key);
        strv_add(&it->seen, key);
        it->key = it->seen.items[it->seen.len - 1];
        if (!keyset_add(&it->seen_set, it->key))
                return error_at(p, &it->key_mark, "duplicate key '%s'", p->path.buf);
        it->index = -1;
        for (size_t i = 0; it->keys && it->keys[i]; i++)
                if (streq(it->key, it->keys[i]))
                        it->index = (int)i;
        if (it->keys && it->index < 0)
                return unknown_key(p, it, it->key);
        r = parser_next(p);
        return r < 0 ? r : 1;
}

/* Walks one sequence like map_iter; the path gets "[i]". */
struct seq_iter {
        size_t path_len;
        size_t index;
};

static int seq_begin(struct parser *p, struct seq_iter *it, const char *what)
{
        if (p->event.type != YAML_SEQUENCE_START_EVENT)
                return expected(p, what);
        *it = (struct seq_iter){ .path_len = p->path.len };
        return 0;
}

static int seq_next(struct parser *p, struct seq_iter *it)
{
        int r;

        path_truncate(p, it->path_len);
        r = parser_next(p);
        if (r < 0)
                return r;
        if (p->event.type == YAML_SEQUENCE_END_EVENT)
                return 0;
        strbuf_addf(&p->path, "[%zu]", it->index++);
        return 1;
}

static int get_string(struct parser *p, const char *what, const char **ret)
{
        if (p->event.type != YAML_SCALAR_EVENT || scalar_is_null(&p->event))
                return expected(p, what);
        *ret = scalar_text(&p->event);
        return 0;
}

static int set_string(struct parser *p, char **field)
{
        const char *s;
        int r = get_string(p, "a string", &s);

        if (r < 0)
                return r;
        free(*field);
        *field = xstrdup(s);
        return 0;
}

static int get_bool(struct parser *p, bool *ret)
{
        static const char *const yes[] = { "true", "yes", "on" }, *const no[] = { "false", "no", "off" };

        if (p->event.type == YAML_SCALAR_EVENT && p->event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
                for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                        if (ascii_strcaseeq(scalar_text(&p->event), yes[i])) {
                                *ret = true;
                                return 0;
                        }
                        if (ascii_strcaseeq(scalar_text(&p->event), no[i])) {
                                *ret = false;
                                return 0;
                        }
                }
        return expected(p, "true or false");
}

/* A plain decimal integer in [min, max]; no sign, no leading zero (YAML
 * 1.1 reads 010 as octal), no '_'. */
static int get_uint(struct parser *p, unsigned min, unsigned max, unsigned *ret)
{
        _cleanup_free_ char *what = xasprintf("an integer from %u to %u", min, max);
        unsigned long v = 0;
        const char *s;

        if (p->event.type != YAML_SCALAR_EVENT || p->event.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
                return expected(p, what);
        s = scalar_text(&p->event);
        if (!ascii_isdigit(s[0]) || (s[0] == '0' && s[1]))
                return expected(p, what);
        for (; *s; s++) {
                if (!ascii_isdigit(*s))
                        return expected(p, what);
                v = v * 10 + (unsigned long)(*s - '0');
                if (v > max)
                        return expected(p, what);
        }
        if (v < min)
                return expected(p, what);
        *ret = (unsigned)v;
        return 0;
}

static int parse_string_list(struct parser *p, struct strv *list)
{
        struct seq_iter it;
        int r;

        r = seq_begin(p, &it, "a list of strings");
        if (r < 0)
                return r;
        strv_release(list);
        while ((r = seq_next(p, &it)) > 0) {
                const char *s;

                r = get_string(p, "a non-empty string", &s);
                if (r < 0)
                        return r;
                if (!*s)
                        return expected(p, "a non-empty string");
                strv_add(list, s);
        }
        return r;
}

static int parse_default(struct parser *p, struct default_spec *spec)
{
        static const char what[] = "a version, 'latest' or 'none'";
        const char *s;
        int r;

        r = get_string(p, what, &s);
        if (r < 0)
                return r;
        free(spec->version);
        spec->version = NULL;
        if (streq(s, "latest"))
                spec->kind = DEFAULT_LATEST;
        else if (streq(s, "none"))
                spec->kind = DEFAULT_NONE;
        else if (ascii_isdigit(s[0]) && module_version_valid(s)) {
                /* A module version as naming gives it ("9.1.0-cuda12") or
                 * a prefix of the version ("12", "12.9"). */
                spec->kind = DEFAULT_VERSION;
                spec->version = xstrdup(s);
        } else
                return expected(p, what);
        return 0;
}

/* Every part a template may ask for, so only the template itself can fail. */
static int naming_check(const char *tmpl, struct diag *d)
{
        static const struct version sample = { .n = { 1, 2, 3, 4 }, .count = 4 };
        static const struct version sample_cuda = { .n = { 12, 4 }, .count = 2 };
        _cleanup_free_ char *out = NULL;

        return naming_expand(tmpl, &sample, NULL, 12, &sample_cuda, &out, d);
}

static int parse_naming(struct parser *p, char **field)
{
        _cleanup_diag_ struct diag why = DIAG_INIT;
        const char *s;
        int r;

        r = get_string(p, "a naming template", &s);
        if (r < 0)
                return r;
        if (naming_check(s, &why) < 0)
                return error_at(p, &p->event.start_mark, "'%s': %s", p->path.buf, why.message);
        free(*field);
        *field = xstrdup(s);
        return 0;
}

/* A value that a module may hold: Lmod 8.6 and Environment Modules 5.2
 * write a newline in a value raw into the shell code they print (so the
 * rest would run as a command), and a path variable cannot carry ':'. */
static int env_value_check(struct parser *p, enum env_op_kind kind, const char *s)
{
        for (const unsigned char *c = (const unsigned char *)s; *c; c++)
                if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
                        return error_at(p, &p->event.start_mark,
                                        "'%s': a value must not hold a control character (a "
                                        "newline, …): the module tools pass it to the shell unquoted",
                                        p->path.buf);
        if (kind != ENV_OP_SETENV && strchr(s, ':'))
                return error_at(p, &p->event.start_mark,
                                "'%s': '%s' holds ':'; give each directory as a list item",
                                p->path.buf, s);
        return 0;
}

/* The ops of one env kind: VAR: value, or for paths VAR: [value, ...]. */
static int parse_env_kind(struct parser *p, enum env_op_kind kind, struct env_ops *ops)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        r = map_begin(p, &it, NULL);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                const char *what = kind == ENV_OP_SETENV ? "a string" : "a directory or a list of them";
                const char *s;

                if (!env_name_valid(it.key)) {
                        _cleanup_free_ char *parent = xstrndup(p->path.buf, it.path_len);
                        return error_at(p, &it.key_mark,
                                        "'%s': '%s' is not a variable name (letters, digits and '_', "
                                        "not starting with a digit)",
                                        parent, it.key);
                }
                if (kind != ENV_OP_SETENV && p->event.type == YAML_SEQUENCE_START_EVENT) {
                        struct seq_iter si;

                        r = seq_begin(p, &si, what);
                        while (r >= 0 && (r = seq_next(p, &si)) > 0) {
                                r = get_string(p, "a directory", &s);
                                if (r < 0)
                                        return r;
                                if (!*s)
                                        return expected(p, "a directory");
                                r = env_value_check(p, kind, s);
                                if (r < 0)
                                        return r;
                                env_ops_add(ops, kind, it.key, s);
                        }
                        if (r < 0)
                                return r;
                        continue;
                }
                r = get_string(p, what, &s);
                if (r < 0)
                        return r;
                if (kind != ENV_OP_SETENV && !*s)
                        return expected(p, what);
                r = env_value_check(p, kind, s);
                if (r < 0)
                        return r;
                env_ops_add(ops, kind, it.key, s);
        }
        return r;
}

static int parse_env(struct parser *p, struct config *c)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        r = map_begin(p, &it, component_names);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                _cleanup_(map_iter_release) struct map_iter ops = { 0 };
                struct env_ops *o = &c->env[it.index];

                /* A component given replaces its ops; ops stay in file order. */
                env_ops_release(o);
                r = map_begin(p, &ops, env_op_keys);
                if (r < 0)
                        return r;
                while ((r = map_next(p, &ops)) > 0) {
                        r = parse_env_kind(p, (enum env_op_kind)ops.index, o);
                        if (r < 0)
                                return r;
                }
                if (r < 0)
                        return r;
        }
        return r;
}

static int parse_target(struct parser *p, struct config *c, struct keyset *names)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        struct config_target t = { 0 };
        yaml_mark_t start = p->event.start_mark, name_mark = start;
        int r;

        r = map_begin(p, &it, target_keys);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                if (it.index == TARGET_NAME) {
                        const char *s;

                        r = get_string(p, "a target name", &s);
                        if (r >= 0 && !*s)
                                r = expected(p, "a target name");
                        if (r >= 0) {
                                name_mark = p->event.start_mark;
                                t.name = xstrdup(s);
                        }
                } else
                        r = set_string(p, &t.launcher);
                if (r < 0)
                        break;
        }
        path_truncate(p, it.path_len);
        if (r >= 0 && !t.name)
                r = error_at(p, &start, "'%s': missing key 'name'", p->path.buf);
        if (r >= 0 && !t.launcher)
                r = error_at(p, &start, "'%s': missing key 'launcher'", p->path.buf);
        if (r >= 0 && !keyset_add(names, t.name))
                r = error_at(p, &name_mark, "'%s.name': target '%s' is given twice", p->path.buf, t.name);
        if (r < 0) {
                free(t.name);
                free(t.launcher);
                return r;
        }
        /* Double the array each time its length reaches a power of two. */
        if ((c->validate.n_targets & (c->validate.n_targets - 1)) == 0)
                c->validate.targets = xreallocarray(c->validate.targets,
                                                    c->validate.n_targets ? 2 * c->validate.n_targets : 1,
                                                    sizeof(*c->validate.targets));
        c->validate.targets[c->validate.n_targets++] = t;
        return 0;
}

static int parse_validate(struct parser *p, struct config *c)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        _cleanup_(keyset_release) struct keyset names = { 0 };
        int r;

        r = map_begin(p, &it, validate_keys);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                struct seq_iter si;

                switch ((enum validate_key)it.index) {
                case VALIDATE_LAUNCHER:
                        r = set_string(p, &c->validate.launcher);
                        break;
                case VALIDATE_TARGETS:
                        r = seq_begin(p, &si, "a list of targets ({name, launcher})");
                        if (r < 0)
                                break;
                        targets_release(c);
                        keyset_release(&names);
                        while ((r = seq_next(p, &si)) > 0)
                                if ((r = parse_target(p, c, &names)) < 0)
                                        break;
                        break;
                case VALIDATE_TIMEOUT:
                        r = get_uint(p, 1, TIMEOUT_MAX, &c->validate.timeout);
                        break;
                case VALIDATE_DRIVER_LIBDIR:
                        r = set_string(p, &c->validate.driver_libdir);
                        break;
                case VALIDATE_REQUIRE_DEVICE:
                        r = get_bool(p, &c->validate.require_device);
                        break;
                case VALIDATE_COMPILE:
                        r = get_bool(p, &c->validate.compile);
                        break;
                }
                if (r < 0)
                        return r;
        }
        return r;
}

static int parse_pytorch(struct parser *p, struct config *c)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        r = map_begin(p, &it, pytorch_keys);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                if (it.index == PYTORCH_BUILD_ENV) {
                        r = get_bool(p, &c->pytorch_build_env);
                } else {
                        const yaml_mark_t m = p->event.start_mark;

                        r = set_string(p, &c->cuda_arch_list);
                        /* The value goes into modules: the renderer's gate
                         * names it by its place in this file. */
                        free(c->cuda_arch_list_origin);
                        c->cuda_arch_list_origin = xasprintf("%s:%u:%u: '%s'", p->file ? p->file : "<config>",
                                                             (unsigned)m.line + 1, (unsigned)m.column + 1,
                                                             p->path.buf);
                }
                if (r < 0)
                        return r;
        }
        return r;
}

/* defaults, naming and ld_library_path: one value per component. */
static int parse_per_component(struct parser *p, struct config *c, enum top_key key)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        r = map_begin(p, &it, component_names);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                if (key == KEY_DEFAULTS)
                        r = parse_default(p, &c->defaults[it.index]);
                else if (key == KEY_NAMING)
                        r = parse_naming(p, &c->naming[it.index]);
                else
                        r = get_bool(p, &c->ld_library_path[it.index]);
                if (r < 0)
                        return r;
        }
        return r;
}

static int parse_top_value(struct parser *p, struct config *c, enum top_key key)
{
        const char *s;
        int r;

        switch (key) {
        case KEY_OUTPUT:
                r = set_string(p, &c->output);
                if (r >= 0 && !*c->output) {
                        /* "" is how config_to_yaml writes "no output". */
                        free(c->output);
                        c->output = NULL;
                }
                return r;
        case KEY_FORMAT:
                r = get_string(p, "lua or tcl", &s);
                if (r >= 0 && module_format_from_string(s) < 0)
                        r = expected(p, "lua or tcl");
                if (r >= 0)
                        c->format = module_format_from_string(s);
                return r;
        case KEY_LAYOUT:
                r = get_string(p, "hierarchical or flat", &s);
                if (r >= 0 && module_layout_from_string(s) < 0)
                        r = expected(p, "hierarchical or flat");
                if (r >= 0)
                        c->layout = module_layout_from_string(s);
                return r;
        case KEY_SEARCH:
                return parse_string_list(p, &c->search);
        case KEY_EXCLUDE:
                return parse_string_list(p, &c->exclude);
        case KEY_MAX_DEPTH:
                return get_uint(p, 1, MAX_DEPTH_MAX, &c->max_depth);
        case KEY_DEFAULTS:
        case KEY_NAMING:
        case KEY_LD_LIBRARY_PATH:
                return parse_per_component(p, c, key);
        case KEY_STUBS_ON_LIBRARY_PATH:
                return get_bool(p, &c->stubs_on_library_path);
        case KEY_ENV:
                return parse_env(p, c);
        case KEY_PYTORCH:
                return parse_pytorch(p, c);
        case KEY_VALIDATE:
                return parse_validate(p, c);
        case KEY_TEMPLATES:
                return set_string(p, &c->templates);
        case KEY_LOCK_TIMEOUT:
                return get_uint(p, 0, TIMEOUT_MAX, &c->lock_timeout);
        case _KEY_MAX:
                break;
        }
        return -EINVAL;
}

static int parse_stream(struct parser *p, struct config *c)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        static const yaml_mark_t start = { 0 };
        int r;

        r = parser_next(p); /* stream start */
        if (r >= 0)
                r = parser_next(p);
        if (r < 0)
                return r;
        if (p->event.type == YAML_STREAM_END_EVENT)
                return error_at(p, &start, "holds no configuration; write '{}' for the built-in defaults");
        r = parser_next(p); /* the document's root */
        if (r < 0)
                return r;
        if (scalar_is_null(&p->event))
                return error_at(p, &start, "holds no configuration; write '{}' for the built-in defaults");
        if (p->event.type != YAML_MAPPING_START_EVENT) {
                _cleanup_free_ char *desc = describe(&p->event);
                return error_at(p, &p->event.start_mark, "the top level must be a mapping of keys, not %s",
                                desc);
        }
        r = map_begin(p, &it, top_keys);
        while (r >= 0 && (r = map_next(p, &it)) > 0)
                r = parse_top_value(p, c, (enum top_key)it.index);
        return r;
}

/* The first pass: the whole stream must be one well-formed document
 * without anchors, aliases or tags, nested at most CONFIG_MAX_NESTING
 * deep, so that such problems are found wherever they are, before the
 * schema stops at a key. */
static int check_stream(struct parser *p)
{
        unsigned documents = 0;
        int r;

        do {
                r = parser_next(p);
                if (r < 0)
                        return r;
                if (p->event.type == YAML_DOCUMENT_START_EVENT && ++documents > 1)
                        return error_at(p, &p->event.start_mark, "more than one YAML document");
        } while (p->event.type != YAML_STREAM_END_EVENT);
        return 0;
}

static void parser_start(struct parser *p)
{
        yaml_event_delete(&p->event);
        if (p->yaml_ready)
                yaml_parser_delete(&p->yaml);
        if (!yaml_parser_initialize(&p->yaml))
                die_oom();
        p->yaml_ready = true;
        p->nesting = 0;
        /* The encoding is left to libyaml: the bytes are checked UTF-8, and
         * only detection skips a byte order mark without counting it. */
        yaml_parser_set_input_string(&p->yaml, (const unsigned char *)p->buf, p->len);
}

/* NUL bytes and invalid UTF-8, which libyaml reports by byte offset only
 * and in its own words. */
static int check_bytes(struct parser *p)
{
        const unsigned char *b = (const unsigned char *)p->buf;

        for (size_t i = 0; i < p->len;) {
                size_t n;

                if (b[i] == 0)
                        return error_at_offset(p, i, "NUL byte; a config is UTF-8 text");
                n = utf8_len(b + i, p->len - i);
                if (n == 0)
                        return error_at_offset(p, i, "invalid UTF-8 (byte 0x%02x); a config is UTF-8 text",
                                               b[i]);
                i += n;
        }
        return 0;
}

int config_load_buffer(struct config *c, const char *buf, size_t len, const char *file,
                       struct diag *d)
{
        _cleanup_(parser_release) struct parser p = {
                .file = file ? file : "<config>",
                .buf = buf,
                .len = len,
                .path = STRBUF_INIT,
                .d = d,
        };
        _cleanup_(config_release) struct config tmp = { 0 };
        int r;

        if (len > CONFIG_MAX_SIZE)
                return diag_set(d, -EFBIG, p.file, 0, 0, "larger than 1 MiB, too large for a config");
        r = check_bytes(&p);
        if (r < 0)
                return r;
        parser_start(&p);
        r = check_stream(&p);
        if (r < 0)
                return r;
        parser_start(&p);
        config_copy(&tmp, c);
        r = parse_stream(&p, &tmp);
        if (r < 0)
                return r;
        free(tmp.file);
        tmp.file = xstrdup_or_null(file);
        config_release(c);
        *c = tmp;
        tmp = (struct config){ 0 };
        return 0;
}

int config_load(struct config *c, const char *path, struct diag *d)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        int r;

        r = strbuf_read_file(&sb, path, CONFIG_MAX_SIZE);
        if (r == -EFBIG)
                return diag_set(d, r, path, 0, 0, "larger than 1 MiB, too large for a config");
        if (r < 0)
                return diag_set(d, r, path, 0, 0, "cannot read the config: %s", strerror(-r));
        return config_load_buffer(c, sb.buf, sb.len, path, d);
}

/* ---- the writer ---- */

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
                if (kind == ENV_OP_SETENV || end - i == 1) {
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

static void emit_config(yaml_emitter_t *e, const struct config *c)
{
        emit_collection(e, YAML_MAPPING_START_EVENT);
        emit_key(e, "output");
        emit_string(e, c->output);
        emit_key(e, "format");
        emit_string(e, module_format_to_string(c->format));
        emit_key(e, "layout");
        emit_string(e, module_layout_to_string(c->layout));
        emit_key(e, "search");
        emit_strv(e, &c->search);
        emit_key(e, "exclude");
        emit_strv(e, &c->exclude);
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
        for (int i = 0; i < N_COMPONENTS; i++) {
                emit_key(e, component_names[i]);
                emit_string(e, c->naming[i]);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);
        emit_key(e, "ld_library_path");
        emit_collection(e, YAML_MAPPING_START_EVENT);
        for (int i = 0; i < N_COMPONENTS; i++) {
                emit_key(e, component_names[i]);
                emit_bool(e, c->ld_library_path[i]);
        }
        emit_collection(e, YAML_MAPPING_END_EVENT);
        emit_key(e, "stubs_on_library_path");
        emit_bool(e, c->stubs_on_library_path);
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

/* ---- naming templates ---- */

#define MODULE_VERSION_CHARS "(letters, digits and . _ + -)"

/* Append the value of placeholder {name}, or fail naming what is missing. */
static int placeholder_value(const char *tmpl, const char *name, const struct version *v,
                             const char *build, long cuda_major, const struct version *cuda,
                             struct strbuf *out, struct diag *d)
{
        static const char *const parts[] = { "major", "minor", "patch" };
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
                if (build && *build)
                        strbuf_addstr(out, build);
                else if (v->count >= 4)
                        strbuf_addf(out, "%lu", v->n[3]);
                else
                        return diag_errorf(d, -EINVAL,
                                           "naming template '%s' needs a build number, and %s has none", tmpl,
                                           have);
                return 0;
        }
        if (streq(name, "cuda_major")) {
                if (cuda_major < 0)
                        return diag_errorf(d, -EINVAL, "naming template '%s' needs the CUDA major version, "
                                           "and it is unknown for %s", tmpl, have);
                strbuf_addf(out, "%ld", cuda_major);
                return 0;
        }
        if (streq(name, "cuda")) {
                _cleanup_free_ char *s = NULL;

                if (!cuda || !cuda->count)
                        return diag_errorf(d, -EINVAL, "naming template '%s' needs the CUDA version, "
                                           "and it is unknown for %s", tmpl, have);
                /* MAJOR.MINOR, or only the major when that is all that is known. */
                s = version_to_string(cuda, 2);
                strbuf_addstr(out, s);
                return 0;
        }
        return diag_errorf(d, -EINVAL, "naming template '%s' has an unknown placeholder '{%s}'; known: "
                           "{major} {minor} {patch} {build} {cuda_major} {cuda}", tmpl, name);
}

int naming_expand(const char *tmpl, const struct version *v, const char *build, long cuda_major,
                  const struct version *cuda, char **ret, struct diag *d)
{
        static const struct version none = { .count = 0 };
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        if (!tmpl || !*tmpl)
                return diag_errorf(d, -EINVAL, "naming template is empty");
        for (const char *p = tmpl; *p;) {
                _cleanup_free_ char *name = NULL;
                const char *end;
                int r;

                if (*p == '}')
                        return diag_errorf(d, -EINVAL, "naming template '%s' has a '}' without a '{'", tmpl);
                if (*p != '{' && module_version_char(*p)) {
                        strbuf_addch(&sb, *p++);
                        continue;
                }
                if (*p != '{' && (unsigned char)*p > ' ' && (unsigned char)*p < 0x7f)
                        return diag_errorf(d, -EINVAL, "naming template '%s' has '%c', which a module "
                                           "version cannot hold " MODULE_VERSION_CHARS, tmpl, *p);
                if (*p != '{')
                        return diag_errorf(d, -EINVAL, "naming template '%s' has a space, control or "
                                           "non-ASCII character, which a module version cannot hold "
                                           MODULE_VERSION_CHARS, tmpl);
                end = strchr(p, '}');
                if (!end)
                        return diag_errorf(d, -EINVAL, "naming template '%s' has a '{' without a '}'", tmpl);
                name = xstrndup(p + 1, (size_t)(end - p - 1));
                r = placeholder_value(tmpl, name, v ? v : &none, build, cuda_major, cuda, &sb, d);
                if (r < 0)
                        return r;
                p = end + 1;
        }
        /* {build} comes from outside and may hold anything. */
        if (!module_version_valid(sb.buf))
                return diag_errorf(d, -EINVAL, "naming template '%s' gives '%s', which is not a valid "
                                   "module version " MODULE_VERSION_CHARS, tmpl, sb.buf);
        *ret = strbuf_detach(&sb);
        return 0;
}
