/* config-yaml.c: the YAML reader under the config loader: libyaml's
 * events, checked and walked with their positions. A load makes two passes
 * over them. The first (check_bytes, check_stream) refuses, wherever it is,
 * what a config never needs and what makes YAML dangerous or ambiguous:
 * syntax errors, anchors and aliases (alias bombs), tags, several documents,
 * deep nesting, NUL bytes and input that is not UTF-8. In the second the
 * schema (config.c) walks the events as they arrive with the iterators and
 * getters here and stops at the first problem, reported with its position
 * and dotted key. A plain scalar is taken as its source text, so
 * `cuda: 12.10` is the version "12.10", never the float 12.1; a quoted
 * scalar is always a string. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <yaml.h>

#include "config-yaml.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

/* The schema nests 5 levels deep (env.cuda.prepend_path.PATH[0]). */
#define CONFIG_MAX_NESTING 16
/* How many bytes of a value a message quotes. */
#define QUOTE_MAX 60

/* ---- characters ---- */

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

struct keyset_entry {
        struct hashmap_entry ent;
        const char *s;
};

static bool keyset_equal(const struct hashmap_entry *entry, _unused_ const struct hashmap_entry *key,
                         const void *keydata)
{
        return streq(hashmap_entry_of(entry, const struct keyset_entry, ent)->s, keydata);
}

static void keyset_entry_free(struct hashmap_entry *e)
{
        free(hashmap_entry_of(e, struct keyset_entry, ent));
}

/* Add s; false when it was there already. */
bool keyset_add(struct keyset *set, const char *s)
{
        struct hashmap_entry key;
        struct keyset_entry *e;

        if (!set->map.equal)
                hashmap_init(&set->map, keyset_equal, 0);
        hashmap_entry_init(&key, hash_str(s));
        if (hashmap_get(&set->map, &key, s))
                return false;
        e = xmalloc(sizeof(*e));
        e->ent = key;
        e->s = s;
        hashmap_add(&set->map, &e->ent);
        return true;
}

void keyset_release(struct keyset *set)
{
        hashmap_release(&set->map, keyset_entry_free);
        *set = (struct keyset){ 0 };
}

/* ---- the reader ---- */

void parser_release(struct parser *p)
{
        yaml_event_delete(&p->event);
        if (p->yaml_ready)
                yaml_parser_delete(&p->yaml);
        strbuf_release(&p->path);
}

int error_at(struct parser *p, const yaml_mark_t *m, const char *fmt, ...)
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
bool scalar_is_null(const yaml_event_t *e)
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
char *describe(const yaml_event_t *e)
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
int expected(struct parser *p, const char *what)
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
int parser_next(struct parser *p)
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

void path_truncate(struct parser *p, size_t len)
{
        strbuf_setlen(&p->path, len);
}

void map_iter_release(struct map_iter *it)
{
        strv_release(&it->seen);
        keyset_release(&it->seen_set);
}

int map_begin(struct parser *p, struct map_iter *it, const char *const *keys)
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

int map_next(struct parser *p, struct map_iter *it)
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

int seq_begin(struct parser *p, struct seq_iter *it, const char *what)
{
        if (p->event.type != YAML_SEQUENCE_START_EVENT)
                return expected(p, what);
        *it = (struct seq_iter){ .path_len = p->path.len };
        return 0;
}

int seq_next(struct parser *p, struct seq_iter *it)
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

int get_string(struct parser *p, const char *what, const char **ret)
{
        if (p->event.type != YAML_SCALAR_EVENT || scalar_is_null(&p->event))
                return expected(p, what);
        *ret = scalar_text(&p->event);
        return 0;
}

int set_string(struct parser *p, char **field)
{
        const char *s;
        int r = get_string(p, "a string", &s);

        if (r < 0)
                return r;
        free(*field);
        *field = xstrdup(s);
        return 0;
}

int get_bool(struct parser *p, bool *ret)
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
int get_uint(struct parser *p, unsigned min, unsigned max, unsigned *ret)
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

int parse_string_list(struct parser *p, struct strv *list)
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

/* The first pass: the whole stream must be one well-formed document
 * without anchors, aliases or tags, nested at most CONFIG_MAX_NESTING
 * deep, so that such problems are found wherever they are, before the
 * schema stops at a key. */
int check_stream(struct parser *p)
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

void parser_start(struct parser *p)
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
int check_bytes(struct parser *p)
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
