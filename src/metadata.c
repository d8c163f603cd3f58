/* metadata.c: what a package manager left in a prefix: Spack's
 * .spack/spec.json and EasyBuild's easybuild/<name>.eb, read as data. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <jansson.h>

#include "component.h"
#include "detect.h"
#include "install.h"
#include "metadata.h"
#include "strbuf.h"
#include "util-file.h"
#include "util-path.h"
#include "util.h"
#include "version.h"
#include "banned.h"

void metadata_release(struct metadata *m)
{
        free(m->file);
        free(m->name);
        free(m->cuda_hash);
        strv_release(&m->cuda_arch);
        free(m->versionsuffix);
        free(m->toolchain);
        *m = (struct metadata){ 0 };
}

static void metadata_releasep(struct metadata *m)
{
        metadata_release(m);
}

static void json_unrefp(json_t **j)
{
        json_decref(*j);
}

/* A version string's leading MAJOR[.MINOR[...]] (Spack's "2.7.0-6",
 * "12.6.0"); count 0 when it does not start with one. */
static struct version version_of(const char *s)
{
        struct version v = { 0 };

        if (!s || version_parse_prefix(s, &v, NULL) < 0)
                return (struct version){ 0 };
        return v;
}

/* Spack's versions are strings; very old specs wrote some as numbers. */
static const char *json_version_text(json_t *v, char buf[static 32])
{
        if (json_is_string(v))
                return json_string_value(v);
        if (json_is_integer(v)) {
                (void)snprintf(buf, 32, "%lld", (long long)json_integer_value(v));
                return buf;
        }
        return NULL;
}

/* A node's cuda dependency's hash: "dependencies" as a list of {"name",
 * "hash"} (spec format 2 on) or an object {"cuda": {"hash"}} (older). */
static const char *cuda_dependency_hash(json_t *node)
{
        json_t *deps = json_object_get(node, "dependencies");
        size_t i;
        json_t *d;

        if (json_is_array(deps)) {
                json_array_foreach(deps, i, d) {
                        const char *name = json_string_value(json_object_get(d, "name"));
                        if (name && streq(name, "cuda"))
                                return json_string_value(json_object_get(d, "hash"));
                }
        } else if (json_is_object(deps)) {
                d = json_object_get(deps, "cuda");
                if (json_is_object(d))
                        return json_string_value(json_object_get(d, "hash"));
                if (json_is_string(d))
                        return json_string_value(d);
        }
        return NULL;
}

/* The node named `name` (the list form: a node is {"<name>": {...}}) and,
 * with hash, of that hash; its body or NULL. */
static json_t *find_node(json_t *nodes, bool list_form, const char *name, const char *hash)
{
        size_t i;
        json_t *n;

        json_array_foreach(nodes, i, n) {
                json_t *body = list_form ? json_object_get(n, name) : n;
                const char *nname = list_form ? name : json_string_value(json_object_get(n, "name"));
                const char *h;

                if (!json_is_object(body) || !nname || !streq(nname, name))
                        continue;
                h = json_string_value(json_object_get(body, "hash"));
                if (!hash || !h || streq(h, hash))
                        return body;
        }
        return NULL;
}

int metadata_parse_spec_json(const char *buf, size_t len, const char *file, struct metadata *ret,
                             struct diag *d)
{
        _cleanup_(metadata_releasep) struct metadata m = { .source = "spec.json" };
        _cleanup_(json_unrefp) json_t *root = NULL;
        json_t *spec, *nodes, *node = NULL, *params, *arch, *cuda;
        const char *name = NULL, *hash, *s;
        json_error_t error;
        bool list_form;
        char num[32];

        if (len > METADATA_MAX_FILE)
                return diag_set(d, -EFBIG, file, 0, 0, "file too large (%zu bytes, at most %d)", len,
                                METADATA_MAX_FILE);
        if (len > 0 && memchr(buf, '\0', len))
                return diag_set(d, -EBADMSG, file, 0, 0, "NUL byte in JSON text");
        root = json_loadb(len > 0 ? buf : "", len, JSON_REJECT_DUPLICATES, &error);
        if (!root)
                return diag_set(d, -EBADMSG, file, error.line > 0 ? (unsigned)error.line : 0,
                                error.column > 0 ? (unsigned)error.column : 0, "%s", error.text);
        spec = json_object_get(root, "spec");
        /* "spec": {"_meta": ..., "nodes": [...]}, or "spec": [...]. */
        list_form = json_is_array(spec);
        nodes = list_form ? spec : json_object_get(spec, "nodes");
        if (!json_is_array(nodes) || json_array_size(nodes) == 0)
                return diag_set(d, -EBADMSG, file, 0, 0, "no \"spec\" nodes");
        /* The root is the first node. */
        if (list_form) {
                json_t *first = json_array_get(nodes, 0);
                void *it = json_is_object(first) ? json_object_iter(first) : NULL;

                if (it) {
                        name = json_object_iter_key(it);
                        node = json_object_iter_value(it);
                }
        } else {
                node = json_array_get(nodes, 0);
                name = json_string_value(json_object_get(node, "name"));
        }
        if (!json_is_object(node) || !name || !*name)
                return diag_set(d, -EBADMSG, file, 0, 0, "the first node has no name");
        m.name = xstrdup(name);
        m.version = version_of(json_version_text(json_object_get(node, "version"), num));

        params = json_object_get(node, "parameters");
        arch = json_object_get(params, "cuda_arch");
        if (json_is_array(arch)) {
                size_t i;
                json_t *a;

                json_array_foreach(arch, i, a)
                        if (json_is_string(a))
                                strv_add(&m.cuda_arch, json_string_value(a));
        }

        hash = cuda_dependency_hash(node);
        cuda = hash || !list_form ? find_node(nodes, list_form, "cuda", hash) : NULL;
        if (!cuda && list_form)
                cuda = find_node(nodes, true, "cuda", NULL);
        if (cuda && (hash || json_object_get(json_object_get(node, "dependencies"), "cuda"))) {
                s = json_version_text(json_object_get(cuda, "version"), num);
                m.cuda = version_of(s);
                if (hash)
                        m.cuda_hash = xstrdup(hash);
        }
        m.file = xstrdup(file);
        *ret = m;
        m = (struct metadata){ 0 };
        return 0;
}

/* The easyconfig tokenizer: Python literals, enough of them to read the
 * top-level assignments EasyBuild's own easyconfigs make. */

#define EC_MAX_DEPTH 16
#define EC_MAX_NODES 65536

enum ec_kind { EC_STR, EC_NUM, EC_NAME, EC_TUPLE, EC_LIST, EC_DICT };

struct ec_value {
        enum ec_kind kind;
        char *s;                 /* EC_STR, EC_NUM, EC_NAME */
        struct ec_value *items;  /* the rest; a dict: key, value, key, value */
        size_t n;
        size_t alloc;            /* items allocated: grown by doubling */
};

/* Append v to ret's items: room doubles, so a list of n values costs
 * O(n) copies, not O(n^2) (EC_MAX_NODES values in one list). */
static void ec_push(struct ec_value *ret, struct ec_value v)
{
        if (ret->n == ret->alloc) {
                ret->alloc = ret->alloc ? 2 * ret->alloc : 4;
                ret->items = xreallocarray(ret->items, ret->alloc, sizeof(*ret->items));
        }
        ret->items[ret->n++] = v;
}

static void ec_value_release(struct ec_value *v)
{
        for (size_t i = 0; i < v->n; i++)
                ec_value_release(&v->items[i]);
        free(v->items);
        free(v->s);
        *v = (struct ec_value){ 0 };
}

struct ec_parser {
        const char *p, *end, *start;
        const char *file;
        size_t nodes;
        struct diag *d;
};

static unsigned ec_line(const struct ec_parser *ps, const char *at)
{
        unsigned line = 1;

        for (const char *q = ps->start; q < at; q++)
                line += *q == '\n';
        return line;
}

static int ec_error(struct ec_parser *ps, const char *at, const char *what)
{
        return diag_set(ps->d, -EBADMSG, ps->file, ec_line(ps, at), 0, "%s", what);
}

/* Skip blanks, comments and (inside brackets, depth > 0) newlines and
 * backslash continuations. */
static void ec_skip(struct ec_parser *ps, bool newlines)
{
        while (ps->p < ps->end) {
                char c = *ps->p;

                if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || (newlines && c == '\n'))
                        ps->p++;
                else if (c == '\\' && ps->p + 1 < ps->end && ps->p[1] == '\n')
                        ps->p += 2;
                else if (c == '#')
                        while (ps->p < ps->end && *ps->p != '\n')
                                ps->p++;
                else
                        break;
        }
}

/* A string literal at ps->p (after any r/b/u/f prefix): its value with
 * the common escapes undone. */
static int ec_string(struct ec_parser *ps, char **ret)
{
        const char *start = ps->p;
        bool raw = false;
        struct strbuf sb = STRBUF_INIT;
        char q;
        bool triple;

        while (ps->p < ps->end && strchr("rRbBuUfF", *ps->p)) {
                raw |= *ps->p == 'r' || *ps->p == 'R';
                ps->p++;
        }
        q = *ps->p++;
        triple = ps->end - ps->p >= 2 && ps->p[0] == q && ps->p[1] == q;
        if (triple)
                ps->p += 2;
        for (;;) {
                if (ps->p >= ps->end || (!triple && *ps->p == '\n')) {
                        strbuf_release(&sb);
                        return ec_error(ps, start, "unterminated string");
                }
                if (*ps->p == q && (!triple || (ps->end - ps->p >= 3 && ps->p[1] == q && ps->p[2] == q))) {
                        ps->p += triple ? 3 : 1;
                        break;
                }
                if (*ps->p == '\\' && ps->p + 1 < ps->end) {
                        char e = ps->p[1];

                        ps->p += 2;
                        if (raw) {
                                strbuf_addch(&sb, '\\');
                                strbuf_addch(&sb, e);
                        } else if (e == 'n')
                                strbuf_addch(&sb, '\n');
                        else if (e == 't')
                                strbuf_addch(&sb, '\t');
                        else if (e != '\n')
                                strbuf_addch(&sb, e);
                        continue;
                }
                strbuf_addch(&sb, *ps->p++);
        }
        *ret = strbuf_detach(&sb);
        return 0;
}

static bool ec_string_start(const struct ec_parser *ps)
{
        const char *q = ps->p;

        while (q < ps->end && q - ps->p < 2 && strchr("rRbBuUfF", *q))
                q++;
        return q < ps->end && (*q == '\'' || *q == '"');
}

static bool is_name_char(char c)
{
        return isalnum((unsigned char)c) || c == '_';
}

static int ec_value(struct ec_parser *ps, unsigned depth, struct ec_value *ret);

/* The items of a (...), [...] or {...} up to `close`. */
static int ec_items(struct ec_parser *ps, unsigned depth, char close, bool dict, struct ec_value *ret)
{
        const char *start = ps->p - 1;

        for (;;) {
                struct ec_value v = { 0 };
                int r;

                ec_skip(ps, true);
                if (ps->p >= ps->end)
                        return ec_error(ps, start, "unterminated bracket");
                if (*ps->p == close) {
                        ps->p++;
                        return 0;
                }
                r = ec_value(ps, depth + 1, &v);
                if (r < 0)
                        return r;
                ec_push(ret, v);
                ec_skip(ps, true);
                if (dict) {
                        if (ps->p >= ps->end || *ps->p != ':')
                                return ec_error(ps, ps->p, "expected ':' in a dict");
                        ps->p++;
                        ec_skip(ps, true);
                        v = (struct ec_value){ 0 };
                        r = ec_value(ps, depth + 1, &v);
                        if (r < 0)
                                return r;
                        ec_push(ret, v);
                        ec_skip(ps, true);
                }
                if (ps->p < ps->end && *ps->p == ',')
                        ps->p++;
                else if (ps->p < ps->end && *ps->p != close)
                        return ec_error(ps, ps->p, "not a literal");
        }
}

/* One literal: a string (adjacent ones joined), a number, a name, or a
 * bracketed tuple, list or dict. -EBADMSG at anything else (an
 * expression), which the caller skips. */
static int ec_value(struct ec_parser *ps, unsigned depth, struct ec_value *ret)
{
        const char *start = ps->p;

        *ret = (struct ec_value){ 0 };
        if (depth > EC_MAX_DEPTH)
                return ec_error(ps, start, "nested too deep");
        if (++ps->nodes > EC_MAX_NODES)
                return ec_error(ps, start, "too many values");
        if (ps->p >= ps->end)
                return ec_error(ps, start, "expected a value");
        if (ec_string_start(ps)) {
                struct strbuf sb = STRBUF_INIT;

                ret->kind = EC_STR;
                /* 'a' 'b' is 'ab'. */
                do {
                        char *s;
                        int r = ec_string(ps, &s);

                        if (r < 0) {
                                strbuf_release(&sb);
                                return r;
                        }
                        strbuf_addstr(&sb, s);
                        free(s);
                        ec_skip(ps, depth > 0);
                } while (ps->p < ps->end && ec_string_start(ps));
                ret->s = strbuf_detach(&sb);
                return 0;
        }
        if (*ps->p == '(' || *ps->p == '[' || *ps->p == '{') {
                char open = *ps->p++;
                int r;

                ret->kind = open == '(' ? EC_TUPLE : open == '[' ? EC_LIST : EC_DICT;
                r = ec_items(ps, depth, open == '(' ? ')' : open == '[' ? ']' : '}', open == '{', ret);
                if (r < 0)
                        ec_value_release(ret);
                return r;
        }
        if (is_name_char(*ps->p) || *ps->p == '-' || *ps->p == '.') {
                const char *s = ps->p;

                if (*ps->p == '-')
                        ps->p++;
                while (ps->p < ps->end && (is_name_char(*ps->p) || *ps->p == '.'))
                        ps->p++;
                ret->kind = isdigit((unsigned char)*s) || *s == '-' || *s == '.' ? EC_NUM : EC_NAME;
                ret->s = xstrndup(s, (size_t)(ps->p - s));
                return 0;
        }
        return ec_error(ps, start, "not a literal");
}

/* Skip the rest of a statement: to a newline outside brackets and
 * strings. An unterminated string or bracket is an error: the text is
 * not Python. */
static int ec_skip_statement(struct ec_parser *ps)
{
        unsigned depth = 0;

        while (ps->p < ps->end) {
                char c = *ps->p;

                if (c == '\'' || c == '"' ||
                    (ec_string_start(ps) && (ps->p == ps->start || !is_name_char(ps->p[-1])))) {
                        _cleanup_free_ char *s = NULL;
                        int r = ec_string(ps, &s);

                        if (r < 0)
                                return r;
                        continue;
                }
                if (c == '#' || (c == '\\' && ps->p + 1 < ps->end && ps->p[1] == '\n')) {
                        ec_skip(ps, false);
                        continue;
                }
                if (c == '(' || c == '[' || c == '{') {
                        if (++depth > EC_MAX_DEPTH * 4)
                                return ec_error(ps, ps->p, "nested too deep");
                } else if ((c == ')' || c == ']' || c == '}') && depth > 0)
                        depth--;
                else if (c == '\n' && depth == 0)
                        return 0;
                ps->p++;
        }
        return depth ? ec_error(ps, ps->end, "unterminated bracket") : 0;
}

/* The string a value is, directly or through a name assigned a string
 * earlier; NULL otherwise. */
static const char *ec_text(const struct ec_value *v, const struct strv *strings)
{
        if (v->kind == EC_STR)
                return v->s;
        if (v->kind == EC_NAME)
                for (size_t i = 0; i + 1 < strings->len; i += 2)
                        if (streq(strings->items[i], v->s))
                                return strings->items[i + 1];
        return NULL;
}

static void ec_assign(struct metadata *m, const char *key, const struct ec_value *v, struct strv *strings)
{
        const char *s = ec_text(v, strings);

        if (v->kind == EC_STR) {
                strv_add(strings, key);
                strv_add(strings, v->s);
        }
        if (streq(key, "name") && s) {
                free(m->name);
                m->name = xstrdup(s);
        } else if (streq(key, "version") && s)
                m->version = version_of(s);
        else if (streq(key, "versionsuffix") && s) {
                free(m->versionsuffix);
                m->versionsuffix = xstrdup(s);
        } else if (streq(key, "toolchain") && v->kind == EC_DICT) {
                const char *tn = NULL, *tv = NULL;

                for (size_t i = 0; i + 1 < v->n; i += 2) {
                        const char *k = ec_text(&v->items[i], strings);
                        const char *val = ec_text(&v->items[i + 1], strings);

                        if (k && streq(k, "name"))
                                tn = val;
                        else if (k && streq(k, "version"))
                                tv = val;
                }
                /* SYSTEM is {'name': 'system', 'version': 'system'}. */
                free(m->toolchain);
                m->toolchain = tn && tv && !streq(tn, "system") ? xasprintf("%s/%s", tn, tv)
                               : tn                              ? xstrdup(tn)
                                                                 : NULL;
        } else if (streq(key, "toolchain") && v->kind == EC_NAME && streq(v->s, "SYSTEM")) {
                free(m->toolchain);
                m->toolchain = xstrdup("system");
        } else if (streq(key, "dependencies") && v->kind == EC_LIST) {
                for (size_t i = 0; i < v->n; i++) {
                        const struct ec_value *dep = &v->items[i];
                        const char *dn, *dv;

                        if (dep->kind != EC_TUPLE || dep->n < 2)
                                continue;
                        dn = ec_text(&dep->items[0], strings);
                        dv = ec_text(&dep->items[1], strings);
                        if (dn && dv && (streq(dn, "CUDA") || streq(dn, "CUDAcore")))
                                m->cuda = version_of(dv);
                }
        }
}

int metadata_parse_easyconfig(const char *buf, size_t len, const char *file, struct metadata *ret,
                              struct diag *d)
{
        _cleanup_(metadata_releasep) struct metadata m = { .source = "easyconfig" };
        struct ec_parser ps = { .p = buf, .end = buf + len, .start = buf, .file = file, .d = d };
        struct strv strings = { 0 };
        int r = 0;

        if (len > METADATA_MAX_FILE)
                return diag_set(d, -EFBIG, file, 0, 0, "file too large (%zu bytes, at most %d)", len,
                                METADATA_MAX_FILE);
        if (len > 0 && memchr(buf, '\0', len))
                return diag_set(d, -EBADMSG, file, 0, 0, "NUL byte in an easyconfig");
        while (ps.p < ps.end && r >= 0) {
                const char *line, *key_end;
                _cleanup_free_ char *key = NULL;
                struct ec_value v = { 0 };

                ec_skip(&ps, true);
                if (ps.p >= ps.end)
                        break;
                /* Only `name = <literal>` at the start of a line. */
                line = ps.p;
                while (ps.p < ps.end && is_name_char(*ps.p))
                        ps.p++;
                key_end = ps.p;
                ec_skip(&ps, false);
                if (key_end == line || isdigit((unsigned char)*line) || ps.p >= ps.end || *ps.p != '=' ||
                    (ps.p + 1 < ps.end && ps.p[1] == '=') || (line > buf && line[-1] != '\n')) {
                        ps.p = line;
                        r = ec_skip_statement(&ps);
                        continue;
                }
                key = xstrndup(line, (size_t)(key_end - line));
                ps.p++;
                ec_skip(&ps, false);
                {
                        const char *value_start = ps.p;
                        struct diag ignored = DIAG_INIT;

                        ps.d = &ignored;
                        r = ec_value(&ps, 0, &v);
                        ps.d = d;
                        diag_release(&ignored);
                        ec_skip(&ps, false);
                        /* An expression ('%s' % x, f(), a + b): skipped. */
                        if (r < 0 || (ps.p < ps.end && *ps.p != '\n' && *ps.p != ';')) {
                                ec_value_release(&v);
                                if (ps.nodes > EC_MAX_NODES)
                                        r = ec_error(&ps, value_start, "too many values");
                                else {
                                        ps.p = value_start;
                                        r = ec_skip_statement(&ps);
                                }
                                continue;
                        }
                }
                ec_assign(&m, key, &v, &strings);
                ec_value_release(&v);
                if (ps.p < ps.end)
                        ps.p++;
        }
        strv_release(&strings);
        if (r < 0)
                return r;
        if (!m.name)
                return diag_set(d, -EBADMSG, file, 0, 0, "no name = '...' assignment");
        m.file = xstrdup(file);
        *ret = m;
        m = (struct metadata){ 0 };
        return 0;
}

static int read_file(int dirfd, const char *dir_path, const char *rel, struct strbuf *sb, char **ret_path,
                     struct diag *d)
{
        _cleanup_free_ char *path = path_join(dir_path, rel);
        int r = file_read_regular_at(dirfd, rel, path, METADATA_MAX_FILE, false, sb, d);

        if (r < 0)
                return r;
        *ret_path = TAKE_PTR(path);
        return 0;
}

int metadata_read(int dirfd, const char *dir_path, struct metadata *ret, struct diag *d)
{
        _cleanup_free_ char *path = NULL;
        struct strbuf sb = STRBUF_INIT;
        struct strv names = { 0 };
        int r = -ENOENT;

        if (detect_is_file(dirfd, ".spack/spec.json")) {
                r = read_file(dirfd, dir_path, ".spack/spec.json", &sb, &path, d);
                if (r >= 0)
                        r = metadata_parse_spec_json(sb.buf, sb.len, path, ret, d);
        } else if (detect_is_dir(dirfd, "easybuild") && dir_list(dirfd, "easybuild", &names) >= 0) {
                for (size_t i = 0; i < names.len; i++) {
                        _cleanup_free_ char *rel = NULL;

                        if (!endswith(names.items[i], ".eb"))
                                continue;
                        rel = path_join("easybuild", names.items[i]);
                        r = read_file(dirfd, dir_path, rel, &sb, &path, d);
                        if (r >= 0)
                                r = metadata_parse_easyconfig(sb.buf, sb.len, path, ret, d);
                        break;
                }
        }
        strv_release(&names);
        strbuf_release(&sb);
        return r;
}

bool metadata_names(const struct metadata *m, const char *component)
{
        return m->name && ascii_strcaseeq(m->name, component);
}

/* The cuda_arch a spec.json names ("80", "90a"), joined with ',' as a
 * Spack spec writes a multi-valued variant; values that are not letters
 * and digits are not taken (the metadata is input). */
static void metadata_apply_cuda_arch(struct install *in, const struct metadata *m)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        if (in->cuda_arch || !m->cuda_arch.len)
                return;
        for (size_t i = 0; i < m->cuda_arch.len; i++) {
                const char *a = m->cuda_arch.items[i];

                if (!*a || strlen(a) > 8)
                        return;
                for (const char *p = a; *p; p++)
                        if (!ascii_isdigit(*p) && !ascii_isalpha(*p))
                                return;
                if (sb.len)
                        strbuf_addch(&sb, ',');
                strbuf_addstr(&sb, a);
        }
        /* Not in scan's report (no evidence either): only the index and
         * `cudamod export` carry it. */
        in->cuda_arch = strbuf_detach(&sb);
}

void metadata_apply(struct install *in, const struct metadata *m)
{
        _cleanup_free_ char *said = NULL, *own = NULL;
        struct version mine;

        if (!metadata_names(m, in->component->name))
                return;
        if (in->component->toolkit) {
                /* The toolkit: its release, when its files gave none. */
                struct version xy = version_truncate(&m->version, 2);

                if (in->release.count || m->version.count < 3 || !in->version.count)
                        return;
                if (version_compare(&xy, &in->version) == 0) {
                        in->release = version_truncate(&m->version, 3);
                        install_set_evidence(in, "release", m->source);
                        return;
                }
                said = version_to_string(&m->version, 3);
                own = version_to_string(&in->version, 2);
                install_add_problem(in, "metadata-disagrees", "%s '%s' says CUDA %s but the files say %s",
                                    m->source, m->file, said, own);
                return;
        }
        metadata_apply_cuda_arch(in, m);
        if (!m->cuda.count)
                return;
        mine = in->cuda_version;
        said = version_to_string(&m->cuda, 0);
        if (!mine.count) {
                in->cuda_version = version_truncate(&m->cuda, 3);
                install_set_evidence(in, "cuda_version", m->source);
                return;
        }
        /* The files told a major (a DT_NEEDED, a name), perhaps a minor:
         * the metadata may add the parts they did not tell. */
        {
                unsigned common = mine.count < m->cuda.count ? mine.count : m->cuda.count;
                struct version a = version_truncate(&mine, common), b = version_truncate(&m->cuda, common);

                if (version_compare(&a, &b) == 0) {
                        if (m->cuda.count > mine.count) {
                                in->cuda_version = version_truncate(&m->cuda, 3);
                                install_set_evidence(in, "cuda_version", m->source);
                        }
                        return;
                }
        }
        own = version_to_string(&mine, 0);
        install_add_problem(in, "metadata-disagrees", "%s '%s' says CUDA %s but the files say CUDA %s", m->source,
                            m->file, said, own);
}

unsigned long metadata_module_cuda_major(const struct component *c, const struct strv *own_libdirs)
{
        unsigned long major = c->module_cuda_major(own_libdirs);

        /* The toolkit is its own CUDA; its files always tell. */
        if (major || c->toolkit)
                return major;
        for (size_t i = 0; !major && i < own_libdirs->len; i++) {
                _cleanup_free_ char *real = realpath(own_libdirs->items[i], NULL);
                _cleanup_free_ char *prefix = real ? path_dirname(real) : NULL;
                _cleanup_close_ int fd = -1;
                struct metadata m = { 0 };
                struct diag d = DIAG_INIT;

                if (!prefix)
                        continue;
                fd = open(prefix, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                /* Unreadable or malformed: unknown, as scan leaves it. */
                if (fd >= 0 && metadata_read(fd, prefix, &m, &d) == 0) {
                        if (metadata_names(&m, c->name) && m.cuda.count)
                                major = m.cuda.n[0];
                        metadata_release(&m);
                }
                diag_release(&d);
        }
        return major;
}
