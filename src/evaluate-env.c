/* evaluate-env.c: a load's environment as a "NAME=value" strv: setting and
 * removing variables, the path operations (prepend_path, append_path,
 * remove_path) with Lmod's or Environment Modules' semantics and the
 * bounds on their result, and what differs between two environments
 * (env_diff_compute). */
#include <errno.h>

#include "evaluate-env.h"
#include "strbuf.h"
#include "banned.h"

/* --- the environment ----------------------------------------------------- */

/* The index maps a variable's name (what precedes the first '=' of its
 * item) to its position in vars. */
struct env_var {
        struct hashmap_entry ent;
        size_t pos;
};

/* What a lookup in the index compares with. */
struct env_key {
        const struct env *env;
        const char *name;
        size_t n;
};

static bool env_var_equal(const struct hashmap_entry *entry, _unused_ const struct hashmap_entry *key,
                          const void *keydata)
{
        const struct env_key *k = keydata;
        const char *item = k->env->vars.items[hashmap_entry_of(entry, const struct env_var, ent)->pos];

        return strncmp(item, k->name, k->n) == 0 && item[k->n] == '=';
}

static void env_var_free(struct hashmap_entry *e)
{
        free(hashmap_entry_of(e, struct env_var, ent));
}

static size_t item_name_len(const char *item)
{
        return (size_t)(strchrnul(item, '=') - item);
}

/* The index entry of name (n bytes), or NULL. */
static struct env_var *env_find(const struct env *e, const char *name, size_t n)
{
        struct env_key k = { .env = e, .name = name, .n = n };
        struct hashmap_entry key;

        hashmap_entry_init(&key, hash_bytes(name, n));
        return hashmap_entry_of(hashmap_get(&e->index, &key, &k), struct env_var, ent);
}

/* Index the last variable of vars, whose name is n bytes. */
static void env_index_last(struct env *e, size_t n)
{
        struct env_var *v = xmalloc(sizeof(*v));

        v->pos = e->vars.len - 1;
        hashmap_entry_init(&v->ent, hash_bytes(e->vars.items[v->pos], n));
        hashmap_add(&e->index, &v->ent);
}

void env_init(struct env *e, char *const *from)
{
        *e = (struct env){ 0 };
        hashmap_init(&e->index, env_var_equal, 0);
        for (char *const *v = from; v && *v; v++) {
                size_t n = item_name_len(*v);

                if (!(*v)[n] || env_find(e, *v, n))
                        continue;
                strv_add(&e->vars, *v);
                env_index_last(e, n);
        }
}

void env_release(struct env *e)
{
        strv_release(&e->vars);
        hashmap_release(&e->index, env_var_free);
        *e = (struct env){ 0 };
}

struct strv env_take_vars(struct env *e)
{
        struct strv v = e->vars;

        e->vars = (struct strv){ 0 };
        env_release(e);
        return v;
}

const char *env_lookup(const struct env *e, const char *name)
{
        size_t n = strlen(name);
        const struct env_var *v;

        if (memchr(name, '=', n))
                return NULL;
        v = env_find(e, name, n);
        return v ? e->vars.items[v->pos] + n + 1 : NULL;
}

void env_set(struct env *e, const char *name, const char *value)
{
        size_t n = strlen(name);
        struct env_var *v;
        char *item;

        /* The index is by what precedes the first '=' of an item: a name
         * holding one would be filed where no lookup finds it. Callers
         * refuse such names (the sandboxes, the config). */
        if (memchr(name, '=', n))
                return;
        item = xasprintf("%s=%s", name, value);
        v = env_find(e, name, n);
        if (v) {
                free(e->vars.items[v->pos]);
                e->vars.items[v->pos] = item;
                return;
        }
        strv_push(&e->vars, item);
        env_index_last(e, n);
}

/* The variable leaves the index and its position (the last variable
 * takes it: the order of an environment means nothing). */
void env_unset(struct env *e, const char *name)
{
        size_t n = strlen(name), p, last;
        struct env_key k = { .env = e, .name = name, .n = n };
        struct hashmap_entry key, *removed;

        if (memchr(name, '=', n))
                return;
        hashmap_entry_init(&key, hash_bytes(name, n));
        removed = hashmap_remove(&e->index, &key, &k);
        if (!removed)
                return;
        p = hashmap_entry_of(removed, struct env_var, ent)->pos;
        env_var_free(removed);
        free(e->vars.items[p]);
        last = --e->vars.len;
        if (p != last) {
                const char *moved = e->vars.items[last];

                /* Found while the item is still at last. */
                env_find(e, moved, item_name_len(moved))->pos = p;
                e->vars.items[p] = e->vars.items[last];
        }
        e->vars.items[last] = NULL;
}

void env_copy(struct strv *to, char *const *from)
{
        for (char *const *e = from; e && *e; e++)
                if (strchr(*e, '='))
                        strv_add(to, *e);
}

bool env_is_bookkeeping(const char *name)
{
        static const char *const exact[] = {
                "_LMFILES_", "LOADEDMODULES", "_", "SHLVL", "PWD", "OLDPWD", "_ModuleTable_Sz_",
        };
        static const char *const prefixes[] = {
                "_ModuleTable", "__LMOD_", "LMOD_", "__MODULES_", "MODULES_", "BASH_FUNC_",
        };

        for (size_t i = 0; i < ELEMENTSOF(exact); i++)
                if (streq(name, exact[i]))
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (startswith(name, prefixes[i]))
                        return true;
        return false;
}

/* Lmod's path_regularize: "//" → "/", no trailing '/' (but "/" itself). */
static char *path_regularize(const char *s, size_t n)
{
        char *r = xmalloc(n + 1);
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (!(s[i] == '/' && k > 0 && r[k - 1] == '/'))
                        r[k++] = s[i];
        while (k > 1 && r[k - 1] == '/')
                k--;
        r[k] = '\0';
        return r;
}

void split_entries(const char *value, char delim, bool keep_empty, struct strv *ret)
{
        for (const char *p = value; p;) {
                const char *end = strchr(p, delim);
                size_t n = end ? (size_t)(end - p) : strlen(p);

                if (n || keep_empty)
                        strv_push(ret, path_regularize(p, n));
                p = end ? end + 1 : NULL;
        }
}

static bool str_set_equal(const struct hashmap_entry *entry, _unused_ const struct hashmap_entry *key,
                          const void *keydata)
{
        return streq(hashmap_entry_of(entry, const struct str_set_entry, ent)->s, keydata);
}

void str_set_init(struct str_set *set, size_t max_items)
{
        *set = (struct str_set){ .max = max_items };
        hashmap_init(&set->map, str_set_equal, max_items);
        set->entries = xreallocarray(NULL, max_items ? max_items : 1, sizeof(*set->entries));
}

void str_set_release(struct str_set *set)
{
        hashmap_release(&set->map, NULL);
        free(set->entries);
        *set = (struct str_set){ 0 };
}

/* Add s; false when it was there already. */
bool str_set_add(struct str_set *set, const char *s)
{
        struct hashmap_entry key;
        struct str_set_entry *e;

        hashmap_entry_init(&key, hash_str(s));
        if (hashmap_get(&set->map, &key, s))
                return false;
        if (set->n == set->max)
                abort(); /* the caller said how many it adds at most */
        e = &set->entries[set->n++];
        e->ent = key;
        e->s = s;
        hashmap_add(&set->map, &e->ent);
        return true;
}

static bool str_set_has(const struct str_set *set, const char *s)
{
        struct hashmap_entry key;

        hashmap_entry_init(&key, hash_str(s));
        return hashmap_get(&set->map, &key, s) != NULL;
}

/* The entries of a copy of value, split at delim and regularised in
 * place (as path_regularize does): pointers into buf, which the caller
 * frees with the array. */
struct entries {
        char *buf;
        const char **items;
        size_t len;
};

static void entries_split(const char *value, char delim, bool keep_empty, bool regularize,
                          struct entries *ret)
{
        size_t cap = 1;

        ret->buf = xstrdup(value);
        for (const char *p = value; *p; p++)
                cap += *p == delim;
        ret->items = xreallocarray(NULL, cap, sizeof(*ret->items));
        ret->len = 0;
        for (char *p = ret->buf; p;) {
                char *end = strchr(p, delim), *w = p;
                size_t n;

                if (end)
                        *end = '\0';
                for (const char *q = p; *q; q++)
                        if (!(regularize && *q == '/' && w > p && w[-1] == '/'))
                                *w++ = *q;
                while (regularize && w - p > 1 && w[-1] == '/')
                        w--;
                *w = '\0';
                n = (size_t)(w - p);
                if (n || keep_empty)
                        ret->items[ret->len++] = p;
                p = end ? end + 1 : NULL;
        }
}

static void entries_release(struct entries *e)
{
        free(e->buf);
        free(e->items);
}

/* Apply a path operation to name; -E2BIG (nothing changed) when the
 * result would be longer than ENV_ENTRY_MAX or hold more than max_entries
 * entries, its length and entries in *ret_len and *ret_entries. Linear in
 * the length of the variable and of value. */
int path_apply(struct env *env, const char *name, const char *value, char delim,
               enum path_how how, bool em, size_t max_entries, size_t *ret_len,
               size_t *ret_entries)
{
        struct entries old = { 0 }, add = { 0 };
        struct str_set in_add, in_out;
        const char *cur = env_lookup(env, name);
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        size_t n_out = 0;
        int r = 0;

        entries_split(cur && *cur ? cur : "", delim, cur && *cur, !em, &old);
        entries_split(value, delim, false, !em, &add);
        str_set_init(&in_add, add.len);
        str_set_init(&in_out, old.len + add.len);
        for (size_t i = 0; i < add.len; i++)
                str_set_add(&in_add, add.items[i]);
#define OUT(e)                                      \
        do {                                        \
                if (n_out++)                        \
                        strbuf_addch(&sb, delim);   \
                strbuf_addstr(&sb, (e));            \
        } while (0)
        if (em) {
                /* Environment Modules: an entry already there stays where it
                 * is (and counts once more), the others go in front or at
                 * the end; remove-path drops every copy; nothing else of the
                 * old value changes. */
                for (size_t i = 0; i < old.len; i++)
                        str_set_add(&in_out, old.items[i]);
                if (how == PATH_PREPEND)
                        for (size_t i = 0; i < add.len; i++)
                                if (str_set_add(&in_out, add.items[i]))
                                        OUT(add.items[i]);
                for (size_t i = 0; i < old.len; i++)
                        if (how != PATH_REMOVE || !str_set_has(&in_add, old.items[i]))
                                OUT(old.items[i]);
                if (how == PATH_APPEND)
                        for (size_t i = 0; i < add.len; i++)
                                if (str_set_add(&in_out, add.items[i]))
                                        OUT(add.items[i]);
        } else {
                if (how == PATH_PREPEND)
                        for (size_t i = 0; i < add.len; i++)
                                if (str_set_add(&in_out, add.items[i]))
                                        OUT(add.items[i]);
                for (size_t i = 0; i < old.len; i++)
                        if (!str_set_has(&in_add, old.items[i]) &&
                            (!*old.items[i] || str_set_add(&in_out, old.items[i])))
                                OUT(old.items[i]);
                if (how == PATH_APPEND)
                        for (size_t i = 0; i < add.len; i++)
                                if (str_set_add(&in_out, add.items[i]))
                                        OUT(add.items[i]);
        }
#undef OUT
        if (how != PATH_REMOVE &&
            (strlen(name) + 1 + sb.len + 1 > ENV_ENTRY_MAX || n_out > max_entries)) {
                *ret_len = sb.len;
                *ret_entries = n_out;
                r = -E2BIG;
        } else if (how == PATH_REMOVE && n_out == 0)
                env_unset(env, name);
        else if (n_out || cur)
                env_set(env, name, sb.buf);
        str_set_release(&in_add);
        str_set_release(&in_out);
        entries_release(&old);
        entries_release(&add);
        return r;
}

/* --- differences ------------------------------------------------------------ */

static int compare_changes(const void *a, const void *b)
{
        return strcmp(((const struct env_change *)a)->name, ((const struct env_change *)b)->name);
}

/* Where the entries of b sit together in a, or -1. */
static long find_block(const struct strv *a, const struct strv *b)
{
        for (size_t i = 0; b->len && i + b->len <= a->len; i++) {
                size_t k = 0;

                while (k < b->len && streq(a->items[i + k], b->items[k]))
                        k++;
                if (k == b->len)
                        return (long)i;
        }
        return -1;
}

/* after = P:before:A, entry by entry → the entries of P and A. The old
 * value also counts with its duplicates dropped, as Lmod drops them when
 * it changes a path. */
static bool path_extension(const char *before, const char *after, struct strv *pre,
                           struct strv *app)
{
        _cleanup_(strv_release) struct strv b = { 0 }, a = { 0 }, uniq = { 0 };
        long at;

        if (!*before)
                return false;
        split_entries(before, ':', true, &b);
        split_entries(after, ':', true, &a);
        at = find_block(&a, &b);
        if (at < 0) {
                for (size_t i = 0; i < b.len; i++)
                        if (!strv_contains(&uniq, b.items[i]))
                                strv_add(&uniq, b.items[i]);
                at = find_block(&a, &uniq);
                if (at < 0)
                        return false;
                strv_release(&b);
                b = uniq;
                uniq = (struct strv){ 0 };
        }
        if (a.len == b.len)
                return false;
        for (size_t i = 0; i < (size_t)at; i++)
                strv_add(pre, a.items[i]);
        for (size_t i = (size_t)at + b.len; i < a.len; i++)
                strv_add(app, a.items[i]);
        return true;
}

void env_diff_compute(const struct strv *before, const struct strv *after, struct env_diff *ret)
{
        struct env_diff r = { 0 };
        struct env b, a;
        size_t alloc = 0;

        /* Indexed by name, so that two environments of 10,000 variables
         * (a load may set that many) compare in linear time. */
        env_init(&b, before->items);
        env_init(&a, after->items);
        for (size_t i = 0; i < a.vars.len; i++) {
                const char *eq = strchr(a.vars.items[i], '=');
                _cleanup_free_ char *name = xstrndup(a.vars.items[i], (size_t)(eq - a.vars.items[i]));
                const char *old = env_lookup(&b, name);
                struct env_change c = { 0 };

                if (env_is_bookkeeping(name) || (old && streq(old, eq + 1)))
                        continue;
                c.name = TAKE_PTR(name);
                c.value = xstrdup(eq + 1);
                c.old_value = old ? xstrdup(old) : NULL;
                c.kind = old && path_extension(old, c.value, &c.prepended, &c.appended) ? ENV_PATH
                                                                                       : ENV_SET;
                if (r.n == alloc)
                        r.changes = xreallocarray(r.changes, alloc = alloc ? 2 * alloc : 16,
                                                  sizeof(*r.changes));
                r.changes[r.n++] = c;
        }
        for (size_t i = 0; i < b.vars.len; i++) {
                const char *eq = strchr(b.vars.items[i], '=');
                _cleanup_free_ char *name = xstrndup(b.vars.items[i], (size_t)(eq - b.vars.items[i]));

                if (env_is_bookkeeping(name) || env_lookup(&a, name))
                        continue;
                if (r.n == alloc)
                        r.changes = xreallocarray(r.changes, alloc = alloc ? 2 * alloc : 16,
                                                  sizeof(*r.changes));
                r.changes[r.n++] = (struct env_change){
                        .name = TAKE_PTR(name),
                        .kind = ENV_UNSET,
                        .old_value = xstrdup(eq + 1),
                };
        }
        env_release(&b);
        env_release(&a);
        if (r.n)
                qsort(r.changes, r.n, sizeof(*r.changes), compare_changes);
        *ret = r;
}

void env_diff_release(struct env_diff *d)
{
        for (size_t i = 0; i < d->n; i++) {
                free(d->changes[i].name);
                free(d->changes[i].value);
                free(d->changes[i].old_value);
                strv_release(&d->changes[i].prepended);
                strv_release(&d->changes[i].appended);
        }
        free(d->changes);
        *d = (struct env_diff){ 0 };
}
