/* install.c: the install record, the install set, and their JSON form. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>

#include "install.h"
#include "util-path.h"
#include "strbuf.h"
#include "banned.h"

static const char *const layout_names[_LAYOUT_MAX] = {
        [LAYOUT_TOOLKIT] = "toolkit", [LAYOUT_HPC_SDK] = "hpc-sdk", [LAYOUT_TARBALL] = "tarball",
        [LAYOUT_MERGED] = "merged",   [LAYOUT_WHEEL] = "wheel",     [LAYOUT_SYSTEM] = "system",
        [LAYOUT_CONDA] = "conda",
};

const char *layout_to_string(enum layout l)
{
        return l >= 0 && l < _LAYOUT_MAX ? layout_names[l] : NULL;
}

static const char *const kind_names[] = {
        [INSTALL_FULL] = "full",
        [INSTALL_RUNTIME] = "runtime",
};

const char *install_kind_to_string(enum install_kind k)
{
        return k >= 0 && k < _INSTALL_KIND_MAX ? kind_names[k] : NULL;
}

struct install *install_new(const struct component *c, enum layout l)
{
        struct install *in = xcalloc(1, sizeof(*in));

        in->component = c;
        in->layout = l;
        return in;
}

void install_free(struct install *in)
{
        if (!in)
                return;
        free(in->build);
        free(in->cuda_arch);
        for (size_t i = 0; i < _CUDA_COMP_MAX; i++)
                free(in->components[i]);
        free(in->nvidia_driver);
        free(in->arch);
        free(in->prefix);
        free(in->realpath);
        strv_release(&in->aliases);
        strv_release(&in->trees);
        free(in->bin_dir);
        free(in->include_dir);
        free(in->lib_dir);
        free(in->lib_id_path);
        strv_release(&in->extra_lib_dirs);
        strv_release(&in->extra_include_dirs);
        free(in->compat_dir);
        free(in->compat_driver);
        strv_release(&in->present);
        free(in->present_key);
        for (size_t i = 0; i < in->n_problems; i++) {
                free(in->problems[i].code);
                free(in->problems[i].message);
        }
        free(in->problems);
        strv_release(&in->evidence);
        free(in);
}

void install_add_problem(struct install *in, const char *code, const char *fmt, ...)
{
        struct strbuf sb = STRBUF_INIT;
        va_list ap;

        va_start(ap, fmt);
        strbuf_vaddf(&sb, fmt, ap);
        va_end(ap);
        /* The same finding from two sources is reported once. */
        for (size_t i = 0; i < in->n_problems; i++)
                if (streq(in->problems[i].code, code) && streq(in->problems[i].message, sb.buf)) {
                        strbuf_release(&sb);
                        return;
                }
        in->problems = xreallocarray(in->problems, in->n_problems + 1, sizeof(*in->problems));
        in->problems[in->n_problems].code = xstrdup(code);
        in->problems[in->n_problems].message = strbuf_detach(&sb);
        in->n_problems++;
}

const char *install_evidence(const struct install *in, const char *fact)
{
        for (size_t i = 0; i + 1 < in->evidence.len; i += 2)
                if (streq(in->evidence.items[i], fact))
                        return in->evidence.items[i + 1];
        return NULL;
}

void install_set_evidence(struct install *in, const char *fact, const char *source)
{
        if (install_evidence(in, fact))
                return;
        strv_add(&in->evidence, fact);
        strv_add(&in->evidence, source);
}

bool install_has_problem(const struct install *in, const char *code)
{
        for (size_t i = 0; i < in->n_problems; i++)
                if (streq(in->problems[i].code, code))
                        return true;
        return false;
}

/* Directories below an install's own that a module may name. */
static const char *const derived_dirs[][2] = {
        { "lib", "pkgconfig" },  /* lib_dir/pkgconfig: PKG_CONFIG_PATH */
        { "lib", "stubs" },      /* lib_dir/stubs: LIBRARY_PATH, last */
        { "prefix", "share/man" },
        { "prefix", "doc/man" },
};

static bool present_stat(const char *path, bool file)
{
        return file ? is_file_at(AT_FDCWD, path) : is_dir_at(AT_FDCWD, path);
}

static void present_add(struct install *in, const char *path, bool file,
                        bool (*exists)(const char *path, bool file))
{
        if (path && exists(path, file))
                strv_add(&in->present, path);
}

char *install_present_key(const struct install *in)
{
        const char *dirs[] = { in->prefix, in->bin_dir, in->include_dir, in->lib_dir };
        struct strbuf sb = STRBUF_INIT;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                strbuf_addstr(&sb, dirs[i] ? dirs[i] : "");
                strbuf_addch(&sb, '\n');
        }
        for (size_t i = 0; i < in->extra_lib_dirs.len; i++) {
                strbuf_addstr(&sb, in->extra_lib_dirs.items[i]);
                strbuf_addch(&sb, '\n');
        }
        strbuf_addch(&sb, '\1');
        for (size_t i = 0; i < in->extra_include_dirs.len; i++) {
                strbuf_addstr(&sb, in->extra_include_dirs.items[i]);
                strbuf_addch(&sb, '\n');
        }
        return strbuf_detach(&sb);
}

void install_record_present(struct install *in)
{
        install_record_present_with(in, NULL);
}

void install_record_present_with(struct install *in, bool (*exists)(const char *path, bool file))
{
        const char *dirs[] = { in->prefix, in->bin_dir, in->include_dir, in->lib_dir };
        const struct strv *lists[] = { &in->extra_lib_dirs, &in->extra_include_dirs };
        _cleanup_free_ char *nvcc = in->bin_dir ? path_join(in->bin_dir, "nvcc") : NULL;

        if (!exists)
                exists = present_stat;
        strv_release(&in->present);
        free(in->present_key);
        in->present_key = install_present_key(in);
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                present_add(in, dirs[i], false, exists);
        for (size_t k = 0; k < ELEMENTSOF(lists); k++)
                for (size_t i = 0; i < lists[k]->len; i++)
                        present_add(in, lists[k]->items[i], false, exists);
        for (size_t i = 0; i < ELEMENTSOF(derived_dirs); i++) {
                const char *base = streq(derived_dirs[i][0], "lib") ? in->lib_dir : in->prefix;
                _cleanup_free_ char *p = base ? path_join(base, derived_dirs[i][1]) : NULL;

                present_add(in, p, false, exists);
        }
        present_add(in, nvcc, true, exists);
        strv_sort_uniq(&in->present);
}

bool install_path_present(const struct install *in, const char *path)
{
        return path && strv_contains(&in->present, path);
}

long install_cuda_major(const struct install *in)
{
        if (in->component->toolkit)
                return in->version.count ? (long)in->version.n[0] : -1;
        return in->cuda_version.count ? (long)in->cuda_version.n[0] : -1;
}

void install_list_release(struct install_list *l)
{
        for (size_t i = 0; i < l->len; i++)
                install_free(l->items[i]);
        free(l->items);
        install_list_index_end(l);
        *l = (struct install_list){ 0 };
}

/* An install in a list's index. The hash is its realpath's: the same
 * directory found as several components (at most one each) shares a
 * chain. */
struct index_entry {
        struct hashmap_entry ent;
        struct install *in;
};

struct index_key {
        const struct component *component;
        const char *realpath;
};

static bool index_equal(const struct hashmap_entry *entry, _unused_ const struct hashmap_entry *key,
                        const void *keydata)
{
        const struct install *in = hashmap_entry_of(entry, const struct index_entry, ent)->in;
        const struct index_key *k = keydata;

        return in->component == k->component && streq(in->realpath, k->realpath);
}

static void index_entry_free(struct hashmap_entry *e)
{
        free(hashmap_entry_of(e, struct index_entry, ent));
}

static void index_put(struct install_list *l, struct install *in)
{
        struct index_entry *e = xmalloc(sizeof(*e));

        hashmap_entry_init(&e->ent, hash_str(in->realpath));
        e->in = in;
        hashmap_add(&l->index, &e->ent);
}

void install_list_index_begin(struct install_list *l)
{
        /* Small to start with (the map's own default): a parallel scan
         * begins one index for each subtree it hands to a thread, most of
         * which hold an install or none. It grows as installs are added. */
        install_list_index_end(l);
        hashmap_init(&l->index, index_equal, l->len);
        l->indexed = true;
        for (size_t i = 0; i < l->len; i++)
                index_put(l, l->items[i]);
}

void install_list_index_end(struct install_list *l)
{
        if (l->indexed)
                hashmap_release(&l->index, index_entry_free);
        l->indexed = false;
}

struct install *install_list_find(const struct install_list *l, const struct component *c,
                                  const char *realpath)
{
        if (l->indexed) {
                struct index_key k = { .component = c, .realpath = realpath };
                struct hashmap_entry key;
                struct index_entry *e;

                hashmap_entry_init(&key, hash_str(realpath));
                e = hashmap_entry_of(hashmap_get(&l->index, &key, &k), struct index_entry, ent);
                return e ? e->in : NULL;
        }
        for (size_t i = 0; i < l->len; i++)
                if (l->items[i]->component == c && streq(l->items[i]->realpath, realpath))
                        return l->items[i];
        return NULL;
}

static void fill_str(char **dst, char **src)
{
        if (!*dst && *src)
                *dst = TAKE_PTR(*src);
}

static void fill_strv(struct strv *dst, struct strv *src)
{
        for (size_t i = 0; i < src->len; i++)
                if (!strv_contains(dst, src->items[i]))
                        strv_add(dst, src->items[i]);
}

static void install_merge(struct install *into, struct install *from)
{
        if (!into->version.count)
                into->version = from->version;
        if (!into->release.count)
                into->release = from->release;
        if (!into->cuda_version.count)
                into->cuda_version = from->cuda_version;
        fill_str(&into->build, &from->build);
        fill_str(&into->cuda_arch, &from->cuda_arch);
        for (size_t i = 0; i < _CUDA_COMP_MAX; i++)
                fill_str(&into->components[i], &from->components[i]);
        fill_str(&into->nvidia_driver, &from->nvidia_driver);
        fill_str(&into->arch, &from->arch);
        fill_str(&into->bin_dir, &from->bin_dir);
        fill_str(&into->include_dir, &from->include_dir);
        fill_str(&into->lib_dir, &from->lib_dir);
        if (!into->lib_id_path && from->lib_id_path) {
                into->lib_id_path = TAKE_PTR(from->lib_id_path);
                into->lib_dev = from->lib_dev;
                into->lib_ino = from->lib_ino;
        }
        fill_strv(&into->extra_lib_dirs, &from->extra_lib_dirs);
        fill_strv(&into->extra_include_dirs, &from->extra_include_dirs);
        if (!into->compat_dir && from->compat_dir) {
                into->compat_dir = TAKE_PTR(from->compat_dir);
                free(into->compat_driver);
                into->compat_driver = TAKE_PTR(from->compat_driver);
        }
        if (!streq(into->prefix, from->prefix) && !strv_contains(&into->aliases, from->prefix))
                strv_add(&into->aliases, from->prefix);
        fill_strv(&into->aliases, &from->aliases);
        fill_strv(&into->trees, &from->trees);
        for (size_t i = 0; i < from->n_problems; i++)
                install_add_problem(into, from->problems[i].code, "%s", from->problems[i].message);
        for (size_t i = 0; i + 1 < from->evidence.len; i += 2)
                install_set_evidence(into, from->evidence.items[i], from->evidence.items[i + 1]);
        /* Headers seen on one visit make it whole for a build. */
        if (from->kind == INSTALL_FULL)
                into->kind = INSTALL_FULL;
}

struct install *install_list_add(struct install_list *l, struct install *in)
{
        struct install *old = install_list_find(l, in->component, in->realpath);

        if (old) {
                install_merge(old, in);
                install_free(in);
                return old;
        }
        if (l->len == l->alloc) {
                l->alloc = l->alloc ? l->alloc * 2 : 16;
                l->items = xreallocarray(l->items, l->alloc, sizeof(*l->items));
        }
        l->items[l->len++] = in;
        if (l->indexed)
                index_put(l, in);
        return in;
}

static int install_cmp(const void *pa, const void *pb)
{
        const struct install *a = *(struct install *const *)pa, *b = *(struct install *const *)pb;
        int r;

        if (a->component != b->component)
                return a->component->index < b->component->index ? -1 : 1;
        r = version_compare(&b->version, &a->version); /* newest first */
        if (r)
                return r;
        r = strcmp(a->prefix, b->prefix);
        if (r)
                return r;
        return strcmp(a->realpath, b->realpath);
}

void install_list_sort(struct install_list *l)
{
        for (size_t i = 0; i < l->len; i++) {
                struct install *in = l->items[i];
                size_t j = 0;

                strv_sort_uniq(&in->aliases);
                for (size_t k = 0; k < in->aliases.len; k++) {
                        if (streq(in->aliases.items[k], in->prefix)) {
                                free(in->aliases.items[k]);
                                continue;
                        }
                        in->aliases.items[j++] = in->aliases.items[k];
                }
                in->aliases.len = j;
                if (in->aliases.items)
                        in->aliases.items[j] = NULL;
        }
        if (l->len > 1)
                qsort(l->items, l->len, sizeof(*l->items), install_cmp);
}

/* A JSON string for a path or message that may not be UTF-8: invalid bytes
 * become U+FFFD (the install then carries a problem saying so). */
json_t *json_string_lossy(const char *s)
{
        _cleanup_free_ char *clean = NULL;
        json_t *j;

        if (!s)
                return json_null();
        if (utf8_valid(s))
                j = json_string(s);
        else {
                clean = utf8_sanitize(s);
                j = json_string(clean);
        }
        if (!j)
                die_oom();
        return j;
}

json_t *json_version(const struct version *v, unsigned parts)
{
        _cleanup_free_ char *s = NULL;

        if (!v->count)
                return json_null();
        s = version_to_string(v, parts);
        return json_string_lossy(s);
}

json_t *json_strv(const struct strv *v)
{
        json_t *a = json_array();

        if (!a)
                die_oom();
        for (size_t i = 0; i < v->len; i++)
                json_array_append_new(a, json_string_lossy(v->items[i]));
        return a;
}

void json_set(json_t *o, const char *key, json_t *value)
{
        if (!value || json_object_set_new(o, key, value) < 0)
                die_oom();
}

/* The component's own members. A package manager's metadata that names
 * the exact CUDA (metadata.h) gives all three parts, where a component
 * writes its CUDA. */
static void component_json(const struct install *in, json_t *o)
{
        in->component->to_json(in, o);
        if (in->cuda_version.count >= 3 && json_object_get(o, "cuda_version"))
                json_set(o, "cuda_version", json_version(&in->cuda_version, 3));
}

json_t *install_to_json(const struct install *in)
{
        json_t *o = json_object(), *problems, *evidence;
        long major = install_cuda_major(in);

        if (!o)
                die_oom();
        json_set(o, "component", json_string_lossy(in->component->name));
        json_set(o, "version", json_version(&in->version, in->component->version_parts));
        if (in->component->to_json)
                component_json(in, o);
        json_set(o, "cuda_major", major >= 0 ? json_integer(major) : json_null());
        json_set(o, "arch", json_string_lossy(in->arch));
        json_set(o, "layout", json_string_lossy(layout_to_string(in->layout)));
        json_set(o, "kind", json_string(install_kind_to_string(in->kind)));
        json_set(o, "prefix", json_string_lossy(in->prefix));
        json_set(o, "realpath", json_string_lossy(in->realpath));
        json_set(o, "aliases", json_strv(&in->aliases));
        json_set(o, "bin_dir", json_string_lossy(in->bin_dir));
        json_set(o, "include_dir", json_string_lossy(in->include_dir));
        json_set(o, "lib_dir", json_string_lossy(in->lib_dir));
        json_set(o, "extra_lib_dirs", json_strv(&in->extra_lib_dirs));
        json_set(o, "extra_include_dirs", json_strv(&in->extra_include_dirs));
        evidence = json_object();
        for (size_t i = 0; i + 1 < in->evidence.len; i += 2)
                json_set(evidence, in->evidence.items[i], json_string_lossy(in->evidence.items[i + 1]));
        json_set(o, "evidence", evidence);
        problems = json_array();
        for (size_t i = 0; i < in->n_problems; i++) {
                json_t *p = json_object();
                json_set(p, "code", json_string_lossy(in->problems[i].code));
                json_set(p, "message", json_string_lossy(in->problems[i].message));
                json_array_append_new(problems, p);
        }
        json_set(o, "problems", problems);
        return o;
}

json_t *install_list_to_json(const struct install_list *l)
{
        json_t *o = json_object(), *a = json_array();

        if (!o || !a)
                die_oom();
        json_set(o, "cudamod", json_string("scan"));
        json_set(o, "format", json_integer(1));
        for (size_t i = 0; i < l->len; i++)
                json_array_append_new(a, install_to_json(l->items[i]));
        json_set(o, "installs", a);
        return o;
}

/* The same document written straight into text: the scan's JSON without
 * building jansson's tree of it (building, dumping and freeing that tree
 * was 40 % of a 2,000-prefix scan's instructions). The text is what
 * json_dumpf(JSON_INDENT(2)) writes of install_list_to_json's tree, byte
 * for byte (tests/scan's goldens and tests/syscalls compare it): members
 * in insertion order, "{}" and "[]" when empty, strings escaped as jansson
 * escapes them ('"', '\\', \b \f \n \r \t, other controls as \u00XX in
 * capitals; '/', DEL and non-ASCII as they are). */
/* strbuf_add and strbuf_addch without a call while the buffer has room:
 * the writer adds some 600,000 pieces at 2,000 prefixes. */
static inline void jw_add(struct strbuf *sb, const char *p, size_t n)
{
        if (sb->alloc - sb->len > n) {
                memcpy(sb->buf + sb->len, p, n);
                strbuf_setlen(sb, sb->len + n);
        } else
                strbuf_add(sb, p, n);
}

static inline void jw_ch(struct strbuf *sb, char c)
{
        if (sb->alloc - sb->len > 1) {
                sb->buf[sb->len] = c;
                strbuf_setlen(sb, sb->len + 1);
        } else
                strbuf_addch(sb, c);
}

static void jw_newline(struct strbuf *sb, unsigned depth)
{
        static const char line[] = "\n                                ";
        size_t n = (size_t)depth * 2;

        if (n < sizeof(line) - 1) {
                jw_add(sb, line, n + 1);
                return;
        }
        jw_ch(sb, '\n');
        for (; n > 0;) {
                size_t k = n < sizeof(line) - 2 ? n : sizeof(line) - 2;

                jw_add(sb, line + 1, k);
                n -= k;
        }
}

/* Returns whether s holds a byte above 0x7f. */
static bool jw_escaped(struct strbuf *sb, const char *s, size_t len)
{
        static const char hex[] = "0123456789ABCDEF";
        size_t run = 0;
        unsigned char high = 0;

        jw_ch(sb, '"');
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)s[i];
                char esc[7] = { '\\', 0 };
                size_t n = 2;

                high |= c;
                if (c >= 0x20 && c != '"' && c != '\\')
                        continue;
                jw_add(sb, s + run, i - run);
                run = i + 1;
                switch (c) {
                case '"': esc[1] = '"'; break;
                case '\\': esc[1] = '\\'; break;
                case '\b': esc[1] = 'b'; break;
                case '\f': esc[1] = 'f'; break;
                case '\n': esc[1] = 'n'; break;
                case '\r': esc[1] = 'r'; break;
                case '\t': esc[1] = 't'; break;
                default:
                        esc[1] = 'u';
                        esc[2] = '0';
                        esc[3] = '0';
                        esc[4] = hex[c >> 4];
                        esc[5] = hex[c & 15];
                        n = 6;
                }
                jw_add(sb, esc, n);
        }
        jw_add(sb, s + run, len - run);
        jw_ch(sb, '"');
        return high & 0x80;
}

/* A string as json_string_lossy makes it, or null. */
static void jw_string(struct strbuf *sb, const char *s)
{
        _cleanup_free_ char *clean = NULL;
        size_t start;

        if (!s) {
                jw_add(sb, "null", 4);
                return;
        }
        /* ASCII is valid UTF-8: checked (and the string written again,
         * sanitised) only when it holds another byte. */
        start = sb->len;
        if (!jw_escaped(sb, s, strlen(s)) || utf8_valid(s))
                return;
        strbuf_setlen(sb, start);
        clean = utf8_sanitize(s);
        jw_escaped(sb, clean, strlen(clean));
}

/* Opens member key of an object at depth (the object's own depth). */
static void jw_key(struct strbuf *sb, size_t *n, unsigned depth, const char *key)
{
        if ((*n)++)
                jw_ch(sb, ',');
        jw_newline(sb, depth + 1);
        jw_escaped(sb, key, strlen(key));
        jw_add(sb, ": ", 2);
}

/* jw_key of a literal that needs no escape, quoted and ": " added at
 * compile time. */
#define JW_KEY(sb, n, depth, key) jw_key_literal(sb, n, depth, "\"" key "\": ", sizeof("\"" key "\": ") - 1)

static void jw_key_literal(struct strbuf *sb, size_t *n, unsigned depth, const char *text, size_t len)
{
        if ((*n)++)
                jw_ch(sb, ',');
        jw_newline(sb, depth + 1);
        jw_add(sb, text, len);
}

static void jw_close(struct strbuf *sb, size_t n, unsigned depth, char c)
{
        if (n)
                jw_newline(sb, depth);
        jw_ch(sb, c);
}

static void jw_value(struct strbuf *sb, json_t *v, unsigned depth);

static void jw_members(struct strbuf *sb, size_t *n, json_t *o, unsigned depth)
{
        const char *key;
        json_t *val;

        json_object_foreach(o, key, val) {
                jw_key(sb, n, depth, key);
                jw_value(sb, val, depth + 1);
        }
}

/* Any jansson value (the components' to_json members, "unread"). */
static void jw_value(struct strbuf *sb, json_t *v, unsigned depth)
{
        size_t n = 0, i;
        json_t *e;
        char *text;

        switch (json_typeof(v)) {
        case JSON_OBJECT:
                jw_ch(sb, '{');
                jw_members(sb, &n, v, depth);
                jw_close(sb, n, depth, '}');
                break;
        case JSON_ARRAY:
                jw_ch(sb, '[');
                json_array_foreach(v, i, e) {
                        if (n++)
                                jw_ch(sb, ',');
                        jw_newline(sb, depth + 1);
                        jw_value(sb, e, depth + 1);
                }
                jw_close(sb, n, depth, ']');
                break;
        case JSON_STRING:
                jw_escaped(sb, json_string_value(v), json_string_length(v));
                break;
        case JSON_INTEGER:
                strbuf_addf(sb, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                break;
        case JSON_TRUE:
                jw_add(sb, "true", 4);
                break;
        case JSON_FALSE:
                jw_add(sb, "false", 5);
                break;
        case JSON_NULL:
                jw_add(sb, "null", 4);
                break;
        default:
                /* A real: jansson's own formatting. */
                text = json_dumps(v, JSON_ENCODE_ANY);
                if (!text)
                        die_oom();
                strbuf_addstr(sb, text);
                free(text);
        }
}

static void jw_strv(struct strbuf *sb, const struct strv *v, unsigned depth)
{
        jw_ch(sb, '[');
        for (size_t i = 0; i < v->len; i++) {
                if (i)
                        jw_ch(sb, ',');
                jw_newline(sb, depth + 1);
                jw_string(sb, v->items[i]);
        }
        jw_close(sb, v->len, depth, ']');
}

static void jw_install(struct strbuf *sb, const struct install *in, unsigned depth)
{
        long major = install_cuda_major(in);
        _cleanup_free_ char *version = in->version.count ? version_to_string(&in->version, in->component->version_parts)
                                                        : NULL;
        size_t n = 0;

        jw_ch(sb, '{');
        JW_KEY(sb, &n, depth, "component");
        jw_string(sb, in->component->name);
        JW_KEY(sb, &n, depth, "version");
        jw_string(sb, version);
        if (in->component->to_json) {
                json_t *o = json_object();

                if (!o)
                        die_oom();
                component_json(in, o);
                jw_members(sb, &n, o, depth);
                json_decref(o);
        }
        JW_KEY(sb, &n, depth, "cuda_major");
        if (major >= 0) {
                /* printf's "%ld", without its machinery. */
                char digits[24], *d = digits + sizeof(digits);
                unsigned long u = (unsigned long)major;

                do
                        *--d = (char)('0' + u % 10);
                while ((u /= 10) != 0);
                jw_add(sb, d, (size_t)(digits + sizeof(digits) - d));
        } else
                jw_add(sb, "null", 4);
        JW_KEY(sb, &n, depth, "arch");
        jw_string(sb, in->arch);
        JW_KEY(sb, &n, depth, "layout");
        jw_string(sb, layout_to_string(in->layout));
        JW_KEY(sb, &n, depth, "kind");
        jw_string(sb, install_kind_to_string(in->kind));
        JW_KEY(sb, &n, depth, "prefix");
        jw_string(sb, in->prefix);
        JW_KEY(sb, &n, depth, "realpath");
        jw_string(sb, in->realpath);
        JW_KEY(sb, &n, depth, "aliases");
        jw_strv(sb, &in->aliases, depth + 1);
        JW_KEY(sb, &n, depth, "bin_dir");
        jw_string(sb, in->bin_dir);
        JW_KEY(sb, &n, depth, "include_dir");
        jw_string(sb, in->include_dir);
        JW_KEY(sb, &n, depth, "lib_dir");
        jw_string(sb, in->lib_dir);
        JW_KEY(sb, &n, depth, "extra_lib_dirs");
        jw_strv(sb, &in->extra_lib_dirs, depth + 1);
        JW_KEY(sb, &n, depth, "extra_include_dirs");
        jw_strv(sb, &in->extra_include_dirs, depth + 1);
        JW_KEY(sb, &n, depth, "evidence");
        jw_ch(sb, '{');
        for (size_t i = 0; i + 1 < in->evidence.len; i += 2) {
                if (i)
                        jw_ch(sb, ',');
                jw_newline(sb, depth + 2);
                jw_string(sb, in->evidence.items[i]);
                jw_add(sb, ": ", 2);
                jw_string(sb, in->evidence.items[i + 1]);
        }
        jw_close(sb, in->evidence.len / 2, depth + 1, '}');
        JW_KEY(sb, &n, depth, "problems");
        jw_ch(sb, '[');
        for (size_t i = 0; i < in->n_problems; i++) {
                size_t m = 0;

                if (i)
                        jw_ch(sb, ',');
                jw_newline(sb, depth + 2);
                jw_ch(sb, '{');
                JW_KEY(sb, &m, depth + 2, "code");
                jw_string(sb, in->problems[i].code);
                JW_KEY(sb, &m, depth + 2, "message");
                jw_string(sb, in->problems[i].message);
                jw_close(sb, m, depth + 2, '}');
        }
        jw_close(sb, in->n_problems, depth + 1, ']');
        jw_close(sb, n, depth, '}');
}

void install_list_write_json(struct strbuf *sb, const struct install_list *l, json_t *unread)
{
        size_t n = 0;

        jw_ch(sb, '{');
        JW_KEY(sb, &n, 0, "cudamod");
        jw_string(sb, "scan");
        JW_KEY(sb, &n, 0, "format");
        jw_ch(sb, '1');
        JW_KEY(sb, &n, 0, "installs");
        jw_ch(sb, '[');
        for (size_t i = 0; i < l->len; i++) {
                if (i)
                        jw_ch(sb, ',');
                jw_newline(sb, 2);
                jw_install(sb, l->items[i], 2);
        }
        jw_close(sb, l->len, 1, ']');
        if (unread) {
                JW_KEY(sb, &n, 0, "unread");
                jw_value(sb, unread, 1);
        }
        jw_close(sb, n, 0, '}');
}
