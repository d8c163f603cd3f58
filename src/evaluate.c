/* evaluate.c: module lookup in a modulepath, and `module load` applied to
 * an environment (Lua through the sandbox, Tcl through a Tcl safe
 * interpreter, or the real tool when the caller trusts the modulefiles). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "detect.h"
#include "evaluate.h"
#include "evaluate-tcl.h"
#include "lmod-sandbox.h"
#include "process.h"
#include "strbuf.h"
#include "util-file.h"
#include "banned.h"

/* A modulefile is read whole. Real ones are a few KiB (cudamod's own
 * about 3 KiB, EasyBuild's with long help texts tens of KiB); 1 MiB, as
 * for the site config and the templates, leaves a wide margin. */
#define MODULEFILE_MAX ((size_t)1 << 20)
/* Modules loaded by one evaluation, dependencies included. */
#define LOAD_MAX 256
/* Calls to modulefile functions (setenv, prepend_path, …) that the
 * modulefiles of one load make together: each is applied in time that
 * grows with the environment, so millions of them would take hours. A
 * real load (cuda, cudnn, nccl) makes about 120. */
#define LOAD_MAX_CALLS SANDBOX_DEFAULT_MAX_CALLS
/* The longest "NAME=value" a load may make, with its NUL: the kernel's
 * MAX_ARG_STRLEN (32 pages). execve() refuses a longer one with E2BIG, so
 * no command could run in that environment. It also bounds the work of
 * each prepend_path on a variable. */
#define ENV_ENTRY_MAX ((size_t)32 * 4096)
/* The most entries a path variable (PATH, LD_LIBRARY_PATH, …) may get
 * from a load. A shell searches PATH entry by entry for every command;
 * real ones hold tens, a large Spack environment a few hundred. Each
 * prepend_path goes through the whole variable, so this with
 * LOAD_MAX_CALLS bounds the work of a load to about a second. */
#define PATH_MAX_ENTRIES 4096
#define TOOL_TIMEOUT 60

void modulefile_release(struct modulefile *m)
{
        free(m->name);
        free(m->version);
        free(m->fullname);
        free(m->path);
        *m = (struct modulefile){ 0 };
}

void modulefile_array_free(struct modulefile *a, size_t n)
{
        for (size_t i = 0; i < n; i++)
                modulefile_release(&a[i]);
        free(a);
}

static void modulefile_copy(struct modulefile *to, const struct modulefile *from)
{
        to->name = xstrdup(from->name);
        to->version = xstrdup(from->version);
        to->fullname = xstrdup(from->fullname);
        to->path = xstrdup(from->path);
        to->lua = from->lua;
}

/* --- versions ---------------------------------------------------------- */

/* The next piece of a version: a run of digits or a run of letters;
 * anything else separates. Returns false at the end. */
static bool version_piece(const char **p, const char **start, size_t *len, bool *numeric)
{
        const char *s = *p;

        while (*s && !ascii_isdigit(*s) && !ascii_isalpha(*s))
                s++;
        if (!*s)
                return false;
        *start = s;
        *numeric = ascii_isdigit(*s);
        while (*s && (*numeric ? ascii_isdigit(*s) : ascii_isalpha(*s)))
                s++;
        *len = (size_t)(s - *start);
        *p = s;
        return true;
}

int module_version_compare(const char *a, const char *b)
{
        for (;;) {
                const char *sa, *sb;
                size_t la, lb;
                bool na, nb;
                bool ha = version_piece(&a, &sa, &la, &na);
                bool hb = version_piece(&b, &sb, &lb, &nb);
                int c;

                if (!ha || !hb)
                        return ha - hb;
                if (na != nb)
                        return na ? 1 : -1; /* a number beats a letter: 12.0 > 12.rc */
                if (na) {
                        while (la > 1 && *sa == '0')
                                sa++, la--;
                        while (lb > 1 && *sb == '0')
                                sb++, lb--;
                        if (la != lb)
                                return la < lb ? -1 : 1;
                }
                c = strncmp(sa, sb, la < lb ? la : lb);
                if (c)
                        return c;
                if (la != lb)
                        return la < lb ? -1 : 1;
        }
}

/* --- finding modulefiles ----------------------------------------------- */

void modulepath_split(const char *value, struct strv *ret)
{
        for (const char *p = value; p && *p;) {
                const char *end = strchrnul(p, ':');

                if (end > p)
                        strv_push(ret, xstrndup(p, (size_t)(end - p)));
                p = *end ? end + 1 : end;
        }
}

/* Whether path is a regular file (after symlinks) that Lmod would read as
 * a modulefile: *.lua, or a Tcl file starting with "#%Module". */
static bool is_modulefile(const char *path, bool *lua)
{
        struct stat st;
        char head[8];
        ssize_t n;
        int fd;

        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                return false;
        *lua = endswith(path, ".lua");
        if (*lua)
                return true;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return false;
        n = read(fd, head, sizeof(head));
        close(fd);
        return n == (ssize_t)sizeof(head) && memcmp(head, "#%Module", 8) == 0;
}

static void modulefile_set(struct modulefile *m, const char *name, const char *version,
                           const char *path, bool lua)
{
        m->name = xstrdup(name);
        m->version = xstrdup(version);
        m->fullname = *version ? xasprintf("%s/%s", name, version) : xstrdup(name);
        m->path = xstrdup(path);
        m->lua = lua;
}

/* The file of name/version in dir: version.lua first, then a Tcl file. */
static bool find_in_dir(const char *dir, const char *name, const char *version,
                        struct modulefile *ret)
{
        _cleanup_free_ char *base = *version ? xasprintf("%s/%s/%s", dir, name, version)
                                             : xasprintf("%s/%s", dir, name);
        _cleanup_free_ char *lua = xasprintf("%s.lua", base);
        bool is_lua;

        if (is_modulefile(lua, &is_lua)) {
                modulefile_set(ret, name, version, lua, true);
                return true;
        }
        if (is_modulefile(base, &is_lua) && !is_lua) {
                modulefile_set(ret, name, version, base, false);
                return true;
        }
        return false;
}

struct candidates {
        struct modulefile *items;
        size_t n;
};

static void candidates_release(struct candidates *c)
{
        modulefile_array_free(c->items, c->n);
        *c = (struct candidates){ 0 };
}

static bool candidates_have(const struct candidates *c, const char *fullname)
{
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->items[i].fullname, fullname))
                        return true;
        return false;
}

/* Every version of name in dir (dir/name/VERSION[.lua]), added to c unless
 * an earlier directory had it. */
static void collect_versions(const char *dir, const char *name, struct candidates *c)
{
        _cleanup_free_ char *ndir = xasprintf("%s/%s", dir, name);
        DIR *d = opendir(ndir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                _cleanup_free_ char *version = NULL;
                struct modulefile m = { 0 };

                if (streq(de->d_name, ".") || streq(de->d_name, "..") ||
                    startswith(de->d_name, ".modulerc") || streq(de->d_name, ".version") ||
                    streq(de->d_name, "default"))
                        continue;
                version = endswith(de->d_name, ".lua")
                                  ? xstrndup(de->d_name, strlen(de->d_name) - 4)
                                  : xstrdup(de->d_name);
                if (!find_in_dir(dir, name, version, &m))
                        continue;
                if (candidates_have(c, m.fullname)) {
                        modulefile_release(&m);
                        continue;
                }
                c->items = xreallocarray(c->items, c->n + 1, sizeof(*c->items));
                c->items[c->n++] = m;
        }
        closedir(d);
}

/* The version a module_version()/module-version line marks default:
 * "cuda/12.9" or "12.9" (or "/12.9") for name. */
static char *marked_version(const char *name, const char *target)
{
        size_t n = strlen(name);

        if (strncmp(target, name, n) == 0 && target[n] == '/')
                return xstrdup(target + n + 1);
        if (*target == '/')
                return xstrdup(target + 1);
        return strchr(target, '/') ? NULL : xstrdup(target);
}

static char *default_from_modulerc_lua(const char *path, const char *name)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct sandbox_options so = { .module_name = name, .mode = "load",
                                      .environ = (const char *const[]){ NULL } };
        struct sandbox_result r = { 0 };
        char *ret = NULL;

        if (file_read_regular_at(AT_FDCWD, path, NULL, MODULEFILE_MAX, false, &sb, &d) < 0 ||
            sandbox_eval(sb.buf, sb.len, path, &so, &r, &d) < 0)
                return NULL;
        for (size_t i = 0; i < r.n_ops && !ret; i++) {
                const struct sandbox_op *op = &r.ops[i];

                if (op->kind != SANDBOX_MODULE_VERSION || op->args.len < 2)
                        continue;
                for (size_t k = 1; k < op->args.len && !ret; k++)
                        if (streq(op->args.items[k], "default"))
                                ret = marked_version(name, op->args.items[0]);
        }
        sandbox_result_release(&r);
        return ret;
}

/* The words of one Tcl line, split at blanks, quotes stripped (enough for
 * `module-version X default` and `set ModulesVersion "X"`). */
static void tcl_words(const char *line, struct strv *ret)
{
        for (const char *p = line; *p;) {
                const char *end;

                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p || *p == '#')
                        break;
                if (*p == '"' || *p == '{') {
                        char close = *p == '"' ? '"' : '}';

                        end = strchrnul(p + 1, close);
                        strv_push(ret, xstrndup(p + 1, (size_t)(end - p - 1)));
                        p = *end ? end + 1 : end;
                        continue;
                }
                end = p + strcspn(p, " \t");
                strv_push(ret, xstrndup(p, (size_t)(end - p)));
                p = end;
        }
}

static char *default_from_tcl(const char *path, const char *name, bool version_file)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        char *ret = NULL;

        if (file_read_regular_at(AT_FDCWD, path, NULL, 1 << 20, false, &sb, NULL) < 0)
                return NULL;
        for (char *line = sb.buf; line && *line && !ret;) {
                char *nl = strchr(line, '\n');
                struct strv w = { 0 };

                if (nl)
                        *nl = '\0';
                tcl_words(line, &w);
                if (version_file && w.len == 3 && streq(w.items[0], "set") &&
                    streq(w.items[1], "ModulesVersion"))
                        ret = xstrdup(w.items[2]);
                else if (!version_file && w.len >= 3 && streq(w.items[0], "module-version"))
                        for (size_t k = 2; k < w.len && !ret; k++)
                                if (streq(w.items[k], "default"))
                                        ret = marked_version(name, w.items[1]);
                strv_release(&w);
                line = nl ? nl + 1 : NULL;
        }
        return ret;
}

/* The version dir/name marks as its default, in Lmod's order, or NULL. */
static char *marked_default(const char *dir, const char *name)
{
        _cleanup_free_ char *ndir = xasprintf("%s/%s", dir, name);
        _cleanup_free_ char *link = path_join(ndir, "default");
        _cleanup_free_ char *rc_lua = path_join(ndir, ".modulerc.lua");
        _cleanup_free_ char *rc = path_join(ndir, ".modulerc");
        _cleanup_free_ char *ver = path_join(ndir, ".version");
        char target[4096];
        ssize_t n = readlink(link, target, sizeof(target) - 1);

        if (n > 0) {
                const char *base;

                target[n] = '\0';
                base = path_basename(target);
                return endswith(base, ".lua") ? xstrndup(base, strlen(base) - 4) : xstrdup(base);
        }
        if (access(rc_lua, F_OK) == 0)
                return default_from_modulerc_lua(rc_lua, name);
        if (access(rc, F_OK) == 0)
                return default_from_tcl(rc, name, false);
        if (access(ver, F_OK) == 0)
                return default_from_tcl(ver, name, true);
        return NULL;
}

/* The highest version among c's items accepted by keep (all when NULL). */
static const struct modulefile *highest(const struct candidates *c,
                                        bool (*keep)(const struct modulefile *, const void *),
                                        const void *userdata)
{
        const struct modulefile *best = NULL;

        for (size_t i = 0; i < c->n; i++) {
                const struct modulefile *m = &c->items[i];

                if (m->version[0] == '.' || (keep && !keep(m, userdata)))
                        continue;
                if (!best || module_version_compare(m->version, best->version) > 0)
                        best = m;
        }
        return best;
}

static bool under_partial(const struct modulefile *m, const void *partial)
{
        size_t n = strlen(partial);

        return strncmp(m->version, partial, n) == 0 && (m->version[n] == '.' || !m->version[n]);
}

static void collect_all(const struct strv *mp, const char *name, struct candidates *c)
{
        for (size_t i = 0; i < mp->len; i++)
                collect_versions(mp->items[i], name, c);
}

static int not_found(const struct strv *mp, const char *spec, struct diag *d)
{
        _cleanup_free_ char *joined = strv_join(mp, ":");

        return diag_errorf(d, -ENOENT, "module '%s' not found in the modulepath%s%s%s", spec,
                           mp->len ? " (" : " (it is empty)", joined, mp->len ? ")" : "");
}

/* name alone: a marked default, else the highest version anywhere, else a
 * versionless name.lua. */
static int find_by_name(const struct strv *mp, const char *name, struct modulefile *ret,
                        struct diag *d)
{
        _cleanup_(candidates_release) struct candidates c = { 0 };
        const struct modulefile *best;

        for (size_t i = 0; i < mp->len; i++) {
                _cleanup_free_ char *ndir = xasprintf("%s/%s", mp->items[i], name);
                _cleanup_free_ char *v = NULL;

                if (!is_dir_at(AT_FDCWD, ndir)) {
                        if (find_in_dir(mp->items[i], name, "", ret))
                                return 0;
                        continue;
                }
                v = marked_default(mp->items[i], name);
                if (v && find_in_dir(mp->items[i], name, v, ret))
                        return 0;
        }
        collect_all(mp, name, &c);
        best = highest(&c, NULL, NULL);
        if (!best)
                return not_found(mp, name, d);
        modulefile_copy(ret, best);
        return 0;
}

int modulepath_find(const struct strv *mp, const char *spec, struct modulefile *ret,
                    struct diag *d)
{
        const char *slash = strrchr(spec, '/');
        _cleanup_free_ char *name = NULL;
        _cleanup_(candidates_release) struct candidates c = { 0 };
        const struct modulefile *best;

        if (!*spec || spec[0] == '/' || strstr(spec, "..") || (slash && !slash[1]))
                return diag_errorf(d, -EINVAL, "'%s' is not a module name", spec);
        if (!slash)
                return find_by_name(mp, spec, ret, d);
        name = xstrndup(spec, (size_t)(slash - spec));
        for (size_t i = 0; i < mp->len; i++)
                if (find_in_dir(mp->items[i], name, slash + 1, ret))
                        return 0;
        /* "cuda/12": the highest 12.x (Lmod's extended default), or a name
         * with a '/' in it ("apps/cuda"). */
        collect_all(mp, name, &c);
        best = highest(&c, under_partial, slash + 1);
        if (best) {
                modulefile_copy(ret, best);
                return 0;
        }
        return find_by_name(mp, spec, ret, d);
}

static int compare_modulefiles(const void *a, const void *b)
{
        const struct modulefile *x = a, *y = b;
        int c = strcmp(x->name, y->name);

        return c ? c : module_version_compare(x->version, y->version);
}

int modulepath_list(const struct strv *mp, struct modulefile **ret, size_t *n_ret,
                    struct diag *d)
{
        struct candidates c = { 0 };

        for (size_t i = 0; i < mp->len; i++) {
                DIR *dir = opendir(mp->items[i]);
                struct dirent *de;

                if (!dir)
                        continue;
                while ((de = readdir(dir))) {
                        _cleanup_free_ char *full = path_join(mp->items[i], de->d_name);
                        struct modulefile m = { 0 };

                        if (de->d_name[0] == '.')
                                continue;
                        if (is_dir_at(AT_FDCWD, full)) {
                                collect_versions(mp->items[i], de->d_name, &c);
                                continue;
                        }
                        if (!endswith(de->d_name, ".lua"))
                                continue;
                        full[strlen(full) - 4] = '\0';
                        if (!find_in_dir(mp->items[i], path_basename(full), "", &m))
                                continue;
                        if (candidates_have(&c, m.fullname)) {
                                modulefile_release(&m);
                                continue;
                        }
                        c.items = xreallocarray(c.items, c.n + 1, sizeof(*c.items));
                        c.items[c.n++] = m;
                }
                closedir(dir);
        }
        /* Hidden versions are never listed. */
        for (size_t i = 0; i < c.n;) {
                if (c.items[i].version[0] == '.') {
                        modulefile_release(&c.items[i]);
                        c.items[i] = c.items[--c.n];
                } else
                        i++;
        }
        if (c.n)
                qsort(c.items, c.n, sizeof(*c.items), compare_modulefiles);
        *ret = c.items;
        *n_ret = c.n;
        return 0;
}

/* --- the environment ----------------------------------------------------- */

void env_set(struct strv *env, const char *name, const char *value)
{
        size_t n = strlen(name);
        char *item = xasprintf("%s=%s", name, value);

        for (size_t i = 0; i < env->len; i++)
                if (strncmp(env->items[i], name, n) == 0 && env->items[i][n] == '=') {
                        free(env->items[i]);
                        env->items[i] = item;
                        return;
                }
        strv_push(env, item);
}

void env_unset(struct strv *env, const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; i < env->len; i++)
                if (strncmp(env->items[i], name, n) == 0 && env->items[i][n] == '=') {
                        free(env->items[i]);
                        memmove(&env->items[i], &env->items[i + 1],
                                (env->len - i) * sizeof(*env->items));
                        env->len--;
                        return;
                }
}

static void env_copy(struct strv *to, char *const *from)
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

static void split_entries(const char *value, char delim, bool keep_empty, struct strv *ret)
{
        for (const char *p = value; p;) {
                const char *end = strchr(p, delim);
                size_t n = end ? (size_t)(end - p) : strlen(p);

                if (n || keep_empty)
                        strv_push(ret, path_regularize(p, n));
                p = end ? end + 1 : NULL;
        }
}

enum path_how { PATH_PREPEND, PATH_APPEND, PATH_REMOVE };

/* A set of borrowed strings (open addressing), so that a path of n entries
 * is merged in O(n), not O(n²): a value of ENV_ENTRY_MAX bytes can hold
 * 65,000 entries. */
struct str_set {
        const char **slots;
        size_t size; /* a power of two, at least twice the items */
};

static void str_set_init(struct str_set *set, size_t max_items)
{
        set->size = 16;
        while (set->size < 2 * max_items)
                set->size *= 2;
        set->slots = xcalloc(set->size, sizeof(*set->slots));
}

/* Add s; false when it was there already. */
static bool str_set_add(struct str_set *set, const char *s)
{
        size_t h = 14695981039346656037ULL;

        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                h = (h ^ *p) * 1099511628211ULL;
        for (size_t i = h & (set->size - 1);; i = (i + 1) & (set->size - 1)) {
                if (!set->slots[i]) {
                        set->slots[i] = s;
                        return true;
                }
                if (streq(set->slots[i], s))
                        return false;
        }
}

static bool str_set_has(const struct str_set *set, const char *s)
{
        size_t h = 14695981039346656037ULL;

        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                h = (h ^ *p) * 1099511628211ULL;
        for (size_t i = h & (set->size - 1); set->slots[i]; i = (i + 1) & (set->size - 1))
                if (streq(set->slots[i], s))
                        return true;
        return false;
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
static int path_apply(struct strv *env, const char *name, const char *value, char delim,
                      enum path_how how, bool em, size_t max_entries, size_t *ret_len,
                      size_t *ret_entries)
{
        struct entries old = { 0 }, add = { 0 };
        struct str_set in_add, in_out;
        const char *cur = env_get(env->items, name);
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
        free(in_add.slots);
        free(in_out.slots);
        entries_release(&old);
        entries_release(&add);
        return r;
}

/* --- loading Lua modulefiles ------------------------------------------- */

struct loader {
        const struct evaluate_options *o;
        struct strv env;
        struct strv start;       /* env when the load started */
        struct loaded_module *mods;
        size_t n_mods;
        struct strv families;   /* "family\tfullname" of the loaded modules */
        struct strv in_progress; /* fullnames being loaded (cycle detection) */
        struct strv last_done;   /* env after the last completed module */
        struct strv before_last; /* env after the one before */
        size_t n_calls;          /* recorded calls of the modulefiles loaded so far */
        size_t call_bytes;       /* and the memory they and the path entries took */
        size_t mem_max;          /* the cap on that and each file's Lua state */
        unsigned cpu_ms;         /* the CPU time of the whole load */
        size_t n_evaluated;      /* modulefiles evaluated so far */
        long long cpu_deadline_ns; /* this thread's CPU clock when it is spent */
        /* The load is of Tcl modulefiles, evaluated in the safe
         * interpreter by tclsh, and applied with Environment Modules'
         * semantics (entries stay where they are, prereq loads what is
         * missing, a default wins inside a partial version or range). */
        bool tcl;
        char *tclsh;
};

static long long thread_cpu_ns(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return 0;
        return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The sandbox's "CPU time limit exceeded" (at line) is the load's: say
 * so, and how many files shared it. */
static int cpu_limit_error(const struct loader *l, const struct modulefile *mf, unsigned line,
                           struct diag *d)
{
        _cleanup_free_ char *where = l->n_evaluated
                                             ? xasprintf(", shared by its modulefiles: %zu evaluated before this one",
                                                         l->n_evaluated)
                                             : xstrdup("");

        return diag_set(d, -EINVAL, mf->path, line, 0,
                        "CPU time limit exceeded (%.1f s for the whole load%s)", l->cpu_ms / 1000.0, where);
}

static void loaded_modules_free(struct loaded_module *m, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                modulefile_release(&m[i].file);
                free(m[i].requested_by);
                strv_release(&m[i].messages);
                strv_release(&m[i].path_entries);
        }
        free(m);
}

static void loader_release(struct loader *l)
{
        strv_release(&l->env);
        strv_release(&l->start);
        loaded_modules_free(l->mods, l->n_mods);
        strv_release(&l->families);
        strv_release(&l->in_progress);
        strv_release(&l->last_done);
        strv_release(&l->before_last);
        free(l->tclsh);
}

static const struct loaded_module *loaded_named(const struct loader *l, const char *name)
{
        for (size_t i = 0; i < l->n_mods; i++)
                if (streq(l->mods[i].file.name, name))
                        return &l->mods[i];
        return NULL;
}

/* A dependency argument: "cuda", "cuda/12.9", or a bound made by between()
 * ("between(cuda,12,12.999999)"), atleast() or latest(). */
struct dep_spec {
        char *name;
        char *version;   /* exact or partial version, or NULL */
        char *lo, *hi;   /* bounds (inclusive), or NULL */
        bool latest;
};

static void dep_spec_release(struct dep_spec *s)
{
        free(s->name);
        free(s->version);
        free(s->lo);
        free(s->hi);
}

/* Environment Modules' "name@version", "name@lo:hi", "name@lo:" and
 * "name@:hi" (bounds inclusive). */
static int dep_spec_parse_em(const char *arg, const char *at, struct dep_spec *ret,
                             struct diag *d)
{
        const char *colon = strchr(at + 1, ':');

        if (at == arg || !at[1] || (colon && colon == at + 1 && !colon[1]))
                return diag_errorf(d, -EINVAL, "malformed version specification '%s'", arg);
        ret->name = xstrndup(arg, (size_t)(at - arg));
        if (!colon) {
                ret->version = xstrdup(at + 1);
                return 0;
        }
        ret->lo = colon > at + 1 ? xstrndup(at + 1, (size_t)(colon - at - 1)) : NULL;
        ret->hi = colon[1] ? xstrdup(colon + 1) : NULL;
        ret->latest = !ret->lo && !ret->hi;
        return 0;
}

static int dep_spec_parse(const char *arg, bool em, struct dep_spec *ret, struct diag *d)
{
        static const struct {
                const char *fn;
                int n_args;
        } bounds[] = { { "between(", 3 }, { "atleast(", 2 }, { "latest(", 1 } };

        if (em && strchr(arg, '@'))
                return dep_spec_parse_em(arg, strchr(arg, '@'), ret, d);
        for (size_t b = 0; b < ELEMENTSOF(bounds); b++) {
                struct strv parts = { 0 };
                size_t n = strlen(bounds[b].fn);

                if (!startswith(arg, bounds[b].fn))
                        continue;
                if (!endswith(arg, ")"))
                        return diag_errorf(d, -EINVAL, "malformed version bound '%s'", arg);
                _cleanup_free_ char *inner = xstrndup(arg + n, strlen(arg) - n - 1);
                split_entries(inner, ',', true, &parts);
                if ((int)parts.len != bounds[b].n_args) {
                        strv_release(&parts);
                        return diag_errorf(d, -EINVAL, "malformed version bound '%s'", arg);
                }
                ret->name = xstrdup(parts.items[0]);
                ret->lo = parts.len > 1 ? xstrdup(parts.items[1]) : NULL;
                ret->hi = parts.len > 2 ? xstrdup(parts.items[2]) : NULL;
                ret->latest = bounds[b].n_args == 1;
                strv_release(&parts);
                return 0;
        }
        {
                const char *slash = strrchr(arg, '/');

                ret->name = slash ? xstrndup(arg, (size_t)(slash - arg)) : xstrdup(arg);
                ret->version = slash ? xstrdup(slash + 1) : NULL;
        }
        return 0;
}

static bool in_bounds(const struct modulefile *m, const void *userdata)
{
        const struct dep_spec *s = userdata;

        return (!s->lo || module_version_compare(m->version, s->lo) >= 0) &&
               (!s->hi || module_version_compare(m->version, s->hi) <= 0);
}

static bool satisfies(const struct modulefile *m, const struct dep_spec *s)
{
        if (!streq(m->name, s->name))
                return false;
        if (s->version)
                return under_partial(m, s->version);
        return in_bounds(m, s);
}

static int load_file(struct loader *l, const struct modulefile *mf, const char *requested_by,
                     struct diag *d);

/* The version marked default by the first directory of mp that marks one
 * for name, as a file. */
static bool marked_default_file(const struct strv *mp, const char *name, struct modulefile *ret)
{
        for (size_t i = 0; i < mp->len; i++) {
                _cleanup_free_ char *ndir = xasprintf("%s/%s", mp->items[i], name);
                _cleanup_free_ char *v = NULL;

                if (!is_dir_at(AT_FDCWD, ndir))
                        continue;
                v = marked_default(mp->items[i], name);
                if (v)
                        return find_in_dir(mp->items[i], name, v, ret);
        }
        return false;
}

/* What Environment Modules loads for s: an exact name/version; else,
 * among the versions under a partial one or in a range, the marked
 * default when it is one of them, otherwise the highest. */
static int em_find(const struct strv *mp, const struct dep_spec *s, const char *arg,
                   struct modulefile *ret, struct diag *d)
{
        _cleanup_(candidates_release) struct candidates c = { 0 };
        bool (*keep)(const struct modulefile *, const void *) = in_bounds;
        const void *userdata = s;
        const struct modulefile *best;
        struct modulefile def = { 0 };

        if (!s->version && !s->lo && !s->hi && !s->latest)
                return modulepath_find(mp, s->name, ret, d);
        if (s->version) {
                for (size_t i = 0; i < mp->len; i++)
                        if (find_in_dir(mp->items[i], s->name, s->version, ret))
                                return 0;
                keep = under_partial;
                userdata = s->version;
        }
        if (!s->latest && marked_default_file(mp, s->name, &def)) {
                if (keep(&def, userdata)) {
                        *ret = def;
                        return 0;
                }
                modulefile_release(&def);
        }
        collect_all(mp, s->name, &c);
        best = highest(&c, keep, userdata);
        if (!best) {
                if (s->version)
                        return modulepath_find(mp, arg, ret, d);
                return diag_errorf(d, -ENOENT, "no module satisfies %s in the modulepath", arg);
        }
        modulefile_copy(ret, best);
        return 0;
}

/* Find what a dependency argument names. */
static int dep_find(struct loader *l, const struct dep_spec *s, const char *arg,
                    struct modulefile *ret, struct diag *d)
{
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_(candidates_release) struct candidates c = { 0 };
        const struct modulefile *best;

        modulepath_split(env_get(l->env.items, "MODULEPATH"), &mp);
        if (l->tcl)
                return em_find(&mp, s, arg, ret, d);
        if (!s->lo && !s->latest)
                return modulepath_find(&mp, arg, ret, d);
        collect_all(&mp, s->name, &c);
        best = highest(&c, in_bounds, s);
        if (!best)
                return diag_errorf(d, -ENOENT, "no module satisfies %s in the modulepath", arg);
        modulefile_copy(ret, best);
        return 0;
}

/* depends_on / load / always_load / try_load of one argument. */
static int load_dependency(struct loader *l, const struct modulefile *parent,
                           const struct sandbox_op *op, const char *arg, struct diag *d)
{
        struct dep_spec s = { 0 };
        struct modulefile m = { 0 };
        const struct loaded_module *have;
        int r = dep_spec_parse(arg, l->tcl, &s, d);

        if (r < 0)
                goto out;
        have = loaded_named(l, s.name);
        if (have) {
                if (!satisfies(&have->file, &s))
                        r = diag_errorf(d, -EINVAL, "%s needs %s, but %s is loaded (%s: load the one you mean)",
                                        parent->fullname, arg, have->file.fullname,
                                        l->tcl ? "Environment Modules would refuse it"
                                               : "Lmod would swap them");
                goto out;
        }
        r = dep_find(l, &s, arg, &m, d);
        if (r == -ENOENT && op->name && streq(op->name, "try_load")) {
                r = 0;
                goto out;
        }
        if (r >= 0)
                r = load_file(l, &m, parent->fullname, d);
        else if (d) {
                _cleanup_free_ char *why = d->message ? xstrdup(d->message) : NULL;

                diag_errorf(d, r, "%s needs %s: %s", parent->fullname, arg, why ? why : "not found");
        }
out:
        modulefile_release(&m);
        dep_spec_release(&s);
        return r;
}

static bool any_loaded(const struct loader *l, const struct strv *args, bool all);

/* Environment Modules' prereq (its auto_handling): load what is missing;
 * of "one of" the first that is found. */
static int em_load_requirement(struct loader *l, const struct modulefile *mf,
                               const struct sandbox_op *op, struct diag *d)
{
        bool all = !streq(op->name, "prereq_any");
        int r = -ENOENT;

        for (size_t i = 0; i < op->args.len; i++) {
                struct strv one = { .items = &op->args.items[i], .len = 1 };

                if (all && any_loaded(l, &one, true))
                        continue;
                if (d)
                        diag_release(d);
                r = load_dependency(l, mf, op, op->args.items[i], d);
                if (all ? r < 0 : r != -ENOENT)
                        return r;
        }
        return r == -ENOENT && !all ? r : 0;
}

static bool any_loaded(const struct loader *l, const struct strv *args, bool all)
{
        size_t hits = 0;

        for (size_t i = 0; i < args->len; i++) {
                struct dep_spec s = { 0 };
                const struct loaded_module *have = NULL;

                if (dep_spec_parse(args->items[i], l->tcl, &s, NULL) == 0)
                        have = loaded_named(l, s.name);
                if (have && satisfies(&have->file, &s))
                        hits++;
                dep_spec_release(&s);
        }
        return all ? hits == args->len : hits > 0;
}

static int apply_family(struct loader *l, const struct modulefile *mf, const char *family,
                        struct diag *d)
{
        size_t n = strlen(family);

        for (size_t i = 0; i < l->families.len; i++)
                if (strncmp(l->families.items[i], family, n) == 0 && l->families.items[i][n] == '\t')
                        return diag_errorf(d, -EINVAL,
                                           "%s and %s are both of family '%s' (%s: load only the "
                                           "one you mean)",
                                           l->families.items[i] + n + 1, mf->fullname, family,
                                           l->tcl ? "Environment Modules would refuse it"
                                                  : "Lmod would swap them");
        strv_push(&l->families, xasprintf("%s\t%s", family, mf->fullname));
        return 0;
}

/* The error for a variable that would be too long for execve(). */
static int too_long(const struct modulefile *mf, const struct sandbox_op *op, size_t value_len,
                    struct diag *d)
{
        size_t overhead = strlen(op->name) + 2; /* '=' and the NUL */

        return diag_set(d, -E2BIG, mf->path, op->line, 0,
                        "%s would make '%s' %zu bytes long, more than the %zu that Linux passes "
                        "to a program (MAX_ARG_STRLEN): no command could run after this load",
                        sandbox_op_kind_to_string(op->kind), op->name, value_len,
                        overhead < ENV_ENTRY_MAX ? ENV_ENTRY_MAX - overhead : 0);
}

/* The entries of name in env, split at delim. */
static size_t count_entries(char *const *env, const char *name, char delim)
{
        const char *v = env_get(env, name);
        size_t n = v && *v ? 1 : 0;

        for (; v && *v; v++)
                n += *v == delim;
        return n;
}

/* The cap is on what the load adds: the entries the variable had when it
 * started (a caller's MODULEPATH of 10,000 directories, say) are not the
 * module's doing. */
static int too_many_entries(const struct modulefile *mf, const struct sandbox_op *op,
                            size_t entries, size_t had, struct diag *d)
{
        if (had)
                return diag_set(d, -E2BIG, mf->path, op->line, 0,
                                "%s would give '%s' %zu entries, %zu more than the %zu it had "
                                "before this load, more than the %d cudamod evaluates (a shell "
                                "searches PATH entry by entry; real ones hold tens)",
                                sandbox_op_kind_to_string(op->kind), op->name, entries, entries - had,
                                had, PATH_MAX_ENTRIES);
        return diag_set(d, -E2BIG, mf->path, op->line, 0,
                        "%s would give '%s' %zu entries, more than the %d cudamod evaluates (a "
                        "shell searches PATH entry by entry; real ones hold tens)",
                        sandbox_op_kind_to_string(op->kind), op->name, entries, PATH_MAX_ENTRIES);
}

/* prepend_path, append_path, remove_path; the entries a module names are
 * also kept (for evaluation_own_entries), and charged to the load's
 * memory cap with the calls, since NAME is copied into each. */
static int apply_path_op(struct loader *l, const struct modulefile *mf, const struct sandbox_op *op,
                         struct loaded_module *self, struct diag *d)
{
        char delim = op->delim ? op->delim : ':';
        size_t len = strlen(op->value), n_entries = 1, had = 0;
        _cleanup_(strv_release) struct strv named = { 0 };

        if (op->kind != SANDBOX_REMOVE_PATH) {
                /* Checked first, so that splitting it costs no more than
                 * a value that may be set. */
                if (strlen(op->name) + 1 + len + 1 > ENV_ENTRY_MAX)
                        return too_long(mf, op, len, d);
                for (const char *p = op->value; *p; p++)
                        n_entries += *p == delim;
                if (n_entries > PATH_MAX_ENTRIES)
                        return too_many_entries(mf, op, n_entries, 0, d);
                had = count_entries(l->start.items, op->name, delim);
        }
        if (path_apply(&l->env, op->name, op->value, delim,
                       op->kind == SANDBOX_PREPEND_PATH  ? PATH_PREPEND
                       : op->kind == SANDBOX_APPEND_PATH ? PATH_APPEND
                                                         : PATH_REMOVE,
                       l->tcl, had + PATH_MAX_ENTRIES, &len, &n_entries) < 0)
                return n_entries > had + PATH_MAX_ENTRIES ? too_many_entries(mf, op, n_entries, had, d)
                                                          : too_long(mf, op, len, d);
        if (op->kind == SANDBOX_REMOVE_PATH)
                return 0;
        if (l->tcl) {
                for (const char *p = op->value; *p;) {
                        const char *end = strchrnul(p, delim);

                        if (end > p)
                                strv_push(&named, xstrndup(p, (size_t)(end - p)));
                        p = *end ? end + 1 : end;
                }
        } else
                split_entries(op->value, delim, false, &named);
        for (size_t i = 0; i < named.len; i++) {
                l->call_bytes += strlen(op->name) + strlen(named.items[i]) + 2 + sizeof(char *);
                if (l->call_bytes > l->mem_max)
                        return diag_set(d, -EINVAL, mf->path, op->line, 0, "memory limit exceeded");
                strv_push(&self->path_entries, xasprintf("%s=%s", op->name, named.items[i]));
        }
        return 0;
}

static int apply_op(struct loader *l, const struct modulefile *mf, const struct sandbox_op *op,
                    struct loaded_module *self, struct diag *d)
{
        _cleanup_free_ char *list = NULL;
        size_t len;
        int r;

        switch (op->kind) {
        case SANDBOX_SETENV:
        case SANDBOX_PUSHENV:
                len = op->value ? strlen(op->value) : 0;
                if (strlen(op->name) + 1 + len + 1 > ENV_ENTRY_MAX)
                        return too_long(mf, op, len, d);
                env_set(&l->env, op->name, op->value);
                return 0;
        case SANDBOX_UNSETENV:
                env_unset(&l->env, op->name);
                return 0;
        case SANDBOX_PREPEND_PATH:
        case SANDBOX_APPEND_PATH:
        case SANDBOX_REMOVE_PATH:
                return apply_path_op(l, mf, op, self, d);
        case SANDBOX_FAMILY:
                return apply_family(l, mf, op->value, d);
        case SANDBOX_DEPENDS_ON:
        case SANDBOX_LOAD:
                for (size_t i = 0; i < op->args.len; i++) {
                        r = load_dependency(l, mf, op, op->args.items[i], d);
                        if (r < 0)
                                return r;
                }
                return 0;
        case SANDBOX_PREREQ:
                if (any_loaded(l, &op->args, !streq(op->name, "prereq_any")))
                        return 0;
                if (l->tcl)
                        return em_load_requirement(l, mf, op, d);
                list = strv_join(&op->args, " ");
                return diag_set(d, -EINVAL, mf->path, op->line, 0,
                                "cannot load %s without %s%s loaded first", mf->fullname,
                                streq(op->name, "prereq_any") ? "one of " : "", list);
        case SANDBOX_CONFLICT:
                if (!any_loaded(l, &op->args, false))
                        return 0;
                list = strv_join(&op->args, " ");
                return diag_set(d, -EINVAL, mf->path, op->line, 0,
                                "%s conflicts with the loaded %s", mf->fullname, list);
        case SANDBOX_MESSAGE:
                strv_add(&self->messages, op->value);
                return 0;
        default:
                return 0;
        }
}

static void path_var_append(struct strv *env, const char *name, const char *value)
{
        const char *cur = env_get(env->items, name);
        _cleanup_free_ char *v = cur && *cur ? xasprintf("%s:%s", cur, value) : xstrdup(value);

        env_set(env, name, v);
}

/* Why st is one that another user can change, or NULL. */
static char *strict_modes_problem(const struct stat *st)
{
        if (st->st_uid != geteuid())
                return xasprintf("owned by uid %u", (unsigned)st->st_uid);
        if (st->st_mode & (S_IWGRP | S_IWOTH))
                return xasprintf("writable by %s (mode %04o)",
                                 st->st_mode & S_IWOTH ? "others" : "its group",
                                 (unsigned)(st->st_mode & 07777));
        return NULL;
}

/* evaluate_options.strict_modes for the modulefile path. */
static int strict_modes_check(const struct loader *l, const char *path, struct diag *d)
{
        _cleanup_(strv_release) struct strv mp = { 0 };
        _cleanup_free_ char *real = realpath(path, NULL), *root = NULL;
        size_t n;

        if (!real)
                return diag_errorf(d, -errno, "%s: %s", path, strerror(errno));
        modulepath_split(env_get(l->env.items, "MODULEPATH"), &mp);
        for (size_t i = 0; i < mp.len && !root; i++) {
                char *dir = realpath(mp.items[i], NULL);

                n = dir ? strlen(dir) : 0;
                if (dir && strncmp(real, dir, n) == 0 && (real[n] == '/' || n == 1))
                        root = dir;
                else
                        free(dir);
        }
        for (char *p = real;;) {
                struct stat st;
                _cleanup_free_ char *why = NULL;
                char *slash;

                if (stat(p, &st) < 0)
                        return diag_errorf(d, -errno, "%s: %s", p, strerror(errno));
                why = strict_modes_problem(&st);
                if (why)
                        return diag_set(d, -EPERM, path, 0, 0,
                                        "refused: '%s' is %s, and cudamod runs as root: it loads "
                                        "no modulefile that another user could change (fix the "
                                        "owner or mode, or give --no-strict-modes)",
                                        p, why);
                if ((root && streq(p, root)) || streq(p, "/"))
                        return 0;
                slash = strrchr(p, '/');
                if (slash == p)
                        slash[1] = '\0';
                else
                        *slash = '\0';
        }
}

/* -EFBIG for a file larger than MODULEFILE_MAX (the Tcl driver reads it). */
/* Read a modulefile (Lua) into text, or only check it (Tcl: tclsh reads
 * it): either way its type is checked on an O_PATH descriptor before it is
 * opened, so a device or FIFO planted on the modulepath is refused, never
 * opened (opening a tape drive rewinds it). -EFBIG over MODULEFILE_MAX;
 * other errors carry the reader's message in why. */
static int read_modulefile(const char *path, bool check_only, struct strbuf *text, struct diag *why)
{
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        if (!check_only)
                return file_read_regular_at(AT_FDCWD, path, NULL, MODULEFILE_MAX, false, text, why);
        r = file_open_regular_at(AT_FDCWD, path, NULL, &fd, &st, why);
        if (r < 0)
                return r;
        return (size_t)st.st_size > MODULEFILE_MAX ? -EFBIG : 0;
}

static int load_file(struct loader *l, const struct modulefile *mf, const char *requested_by,
                     struct diag *d)
{
        _cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
        _cleanup_(strv_release) struct strv start_env = { 0 };
        _cleanup_diag_ struct diag why = DIAG_INIT;
        struct sandbox_options so = {
                .module_name = mf->name,
                .module_version = mf->version,
                .mode = "load",
                .max_instructions = l->o->max_instructions,
        };
        struct sandbox_result res = { 0 };
        struct loaded_module self = { 0 };
        int r;

        if (mf->lua == l->tcl)
                return diag_errorf(d, -ENOEXEC,
                                   "%s (%s) is a %s modulefile, loaded from a %s one: cudamod "
                                   "evaluates a tree of one kind",
                                   mf->fullname, mf->path, mf->lua ? "Lua" : "Tcl",
                                   mf->lua ? "Tcl" : "Lua");
        if (strv_contains(&l->in_progress, mf->fullname))
                return diag_errorf(d, -ELOOP, "%s depends on itself (through %s)", mf->fullname,
                                   requested_by ? requested_by : "the command line");
        if (l->n_mods >= LOAD_MAX)
                return diag_errorf(d, -E2BIG, "more than %d modules to load", LOAD_MAX);
        if (l->o->strict_modes) {
                r = strict_modes_check(l, mf->path, d);
                if (r < 0)
                        return r;
        }
        r = read_modulefile(mf->path, l->tcl, &text, &why);
        if (r == -EFBIG)
                return diag_set(d, r, mf->path, 0, 0,
                                "larger than 1 MiB, too large for a modulefile (real ones are a "
                                "few KiB)");
        if (r < 0 && why.message)
                return diag_errorf(d, r, "%s", why.message);
        if (r < 0)
                return diag_errorf(d, r, "%s: %s", mf->path, strerror(-r));
        /* What the modulefiles loaded before this one recorded is kept
         * until the load ends: they all share one memory cap. */
        if (l->call_bytes >= l->mem_max)
                return diag_set(d, -EINVAL, mf->path, 0, 0, "memory limit exceeded");
        so.max_memory = l->mem_max - l->call_bytes;
        /* And one CPU budget: each file gets what the ones before it left
         * (a chain of depends_on would otherwise get 10 s per file). */
        {
                long long left = l->cpu_deadline_ns - thread_cpu_ns();

                if (left <= 0)
                        return cpu_limit_error(l, mf, 0, d);
                so.max_cpu_ms = (unsigned)((left + 999999) / 1000000);
        }
        env_copy(&start_env, l->env.items);
        so.environ = (const char *const *)start_env.items;
        if (l->tcl)
                r = tcl_safe_eval(mf,
                                  &(struct tcl_eval_options){
                                          .tclsh = l->tclsh,
                                          .environ = start_env.items,
                                          .max_calls = LOAD_MAX_CALLS,
                                          .max_bytes = so.max_memory,
                                  },
                                  &res, d);
        else
                r = sandbox_eval(text.buf, text.len, mf->path, &so, &res, d);
        if (r < 0 && d && d->message && streq(d->message, "CPU time limit exceeded"))
                return cpu_limit_error(l, mf, d->line, d);
        l->n_evaluated++;
        if (r < 0)
                return r;
        l->n_calls += res.n_ops;
        l->call_bytes += res.bytes;
        if (l->n_calls > LOAD_MAX_CALLS) {
                sandbox_result_release(&res);
                return diag_set(d, -E2BIG, mf->path, 0, 0,
                                "the modulefiles of this load make more than %d calls to "
                                "modulefile functions (setenv, prepend_path, …) together; a real "
                                "load makes about a hundred",
                                LOAD_MAX_CALLS);
        }
        strv_add(&l->in_progress, mf->fullname);
        for (size_t i = 0; i < res.n_ops && r >= 0; i++)
                r = apply_op(l, mf, &res.ops[i], &self, d);
        free(l->in_progress.items[--l->in_progress.len]);
        l->in_progress.items[l->in_progress.len] = NULL;
        sandbox_result_release(&res);
        if (r < 0) {
                strv_release(&self.messages);
                strv_release(&self.path_entries);
                return r;
        }
        path_var_append(&l->env, "LOADEDMODULES", mf->fullname);
        path_var_append(&l->env, "_LMFILES_", mf->path);
        modulefile_copy(&self.file, mf);
        self.requested_by = requested_by ? xstrdup(requested_by) : NULL;
        l->mods = xreallocarray(l->mods, l->n_mods + 1, sizeof(*l->mods));
        l->mods[l->n_mods++] = self;
        strv_release(&l->before_last);
        l->before_last = l->last_done;
        l->last_done = (struct strv){ 0 };
        env_copy(&l->last_done, l->env.items);
        return 0;
}

/* --- Tcl through the real tool ----------------------------------------- */

/* The module command for Tcl modulefiles, as an argv prefix ending before
 * the shell name: {tclsh, modulecmd.tcl} or {lmod}. */
static int find_tool(char *const *env, struct strv *ret, struct diag *d)
{
        static const char *const em_paths[] = {
                "/usr/lib/x86_64-linux-gnu/modulecmd.tcl",
                "/usr/lib/aarch64-linux-gnu/modulecmd.tcl",
                "/usr/share/modules/libexec/modulecmd.tcl",
                "/usr/lib/modulecmd.tcl",
        };
        static const char *const lmod_paths[] = {
                "/usr/share/lmod/lmod/libexec/lmod",
        };
        const char *em = env_get(env, "MODULES_CMD"), *lmod = env_get(env, "LMOD_CMD");
        int ignored;
        _cleanup_free_ char *tclsh = process_find_program("tclsh", env, &ignored);

        for (size_t i = 0; !em && i < ELEMENTSOF(em_paths); i++)
                if (access(em_paths[i], R_OK) == 0)
                        em = em_paths[i];
        if (em && tclsh && access(em, R_OK) == 0) {
                strv_add(ret, tclsh);
                strv_add(ret, em);
                return 0;
        }
        for (size_t i = 0; !lmod && i < ELEMENTSOF(lmod_paths); i++)
                if (access(lmod_paths[i], X_OK) == 0)
                        lmod = lmod_paths[i];
        if (lmod && access(lmod, X_OK) == 0) {
                strv_add(ret, lmod);
                return 0;
        }
        return diag_errorf(d, -ENOEXEC,
                           "Tcl modulefiles are evaluated by Environment Modules or Lmod, and "
                           "neither was found (set MODULES_CMD to modulecmd.tcl, with tclsh on "
                           "PATH, or LMOD_CMD to Lmod's lmod)");
}

/* Run the tool's `sh load SPECS` in env and evaluate its output in
 * /bin/sh; the environment afterwards goes to ret. */
static int tool_load(const struct strv *tool, char *const *env, char *const *specs,
                     size_t n_specs, struct strv *ret, struct diag *d)
{
        static const char script[] =
                "code=$(\"$@\") || exit 90; eval \"$code\" || exit 91; exec env -0";
        _cleanup_(strv_release) struct strv argv = { 0 };
        _cleanup_(child_release) struct child c = { 0 };
        int r;

        strv_add(&argv, "/bin/sh");
        strv_add(&argv, "-c");
        strv_add(&argv, script);
        strv_add(&argv, "sh");
        for (size_t i = 0; i < tool->len; i++)
                strv_add(&argv, tool->items[i]);
        strv_add(&argv, "sh");
        strv_add(&argv, "load");
        for (size_t i = 0; i < n_specs; i++)
                strv_add(&argv, specs[i]);
        r = process_run("/bin/sh", argv.items, env, NULL, TOOL_TIMEOUT, &c);
        if (r < 0)
                return diag_errorf(d, r, "cannot run /bin/sh: %s", strerror(-r));
        if (!child_succeeded(&c)) {
                _cleanup_free_ char *how = c.timed_out ? xstrdup("timed out") : child_ending(&c);

                return diag_errorf(d, -EINVAL, "%s failed to load the modules (%s): %s",
                                   tool->items[tool->len - 1], how,
                                   c.err.len ? c.err.buf : "(no message)");
        }
        for (size_t off = 0; off < c.out.len;) {
                size_t n = strnlen(c.out.buf + off, c.out.len - off);

                if (memchr(c.out.buf + off, '=', n))
                        strv_push(ret, xstrndup(c.out.buf + off, n));
                off += n + 1;
        }
        return 0;
}

/* The path entries one line of `module show` names: EM's
 * "prepend-path<TAB>VAR /dir" or Lmod's prepend_path("VAR","/dir"). */
static void show_line_entries(const char *line, struct strv *ret)
{
        _cleanup_(strv_release) struct strv w = { 0 };
        size_t first = 1;

        if (startswith(line, "prepend-path") || startswith(line, "append-path")) {
                tcl_words(line, &w);
                while (first < w.len && w.items[first][0] == '-')
                        first += startswith(w.items[first], "--delim") && !strchr(w.items[first], '=') ? 2 : 1;
        } else if (startswith(line, "prepend_path(\"") || startswith(line, "append_path(\"")) {
                for (const char *p = strchr(line, '"'); p;) {
                        const char *end = strchr(p + 1, '"');

                        if (!end)
                                break;
                        strv_push(&w, xstrndup(p + 1, (size_t)(end - p - 1)));
                        p = strchr(end + 1, '"');
                }
                first = 0;
        }
        for (size_t i = first + 1; i < w.len; i++)
                strv_push(ret, xasprintf("%s=%s", w.items[first], w.items[i]));
}

/* The path entries the module's own prepend/append calls name, from the
 * tool's `show` (on stderr for both tools), in env. */
static void tool_show_entries(const struct strv *tool, char *const *env, const char *module,
                              struct strv *ret)
{
        _cleanup_(strv_release) struct strv argv = { 0 };
        _cleanup_(child_release) struct child c = { 0 };

        for (size_t i = 0; i < tool->len; i++)
                strv_add(&argv, tool->items[i]);
        strv_add(&argv, "sh");
        strv_add(&argv, "show");
        strv_add(&argv, module);
        if (process_run(argv.items[0], argv.items, env, NULL, TOOL_TIMEOUT, &c) < 0 ||
            !child_succeeded(&c))
                return;
        for (char *line = c.err.buf; line && *line;) {
                char *nl = strchr(line, '\n');

                if (nl)
                        *nl = '\0';
                show_line_entries(line, ret);
                line = nl ? nl + 1 : NULL;
        }
}

static int evaluate_tcl(struct loader *l, char *const *specs, size_t n_specs,
                        struct evaluation *ret, struct diag *d)
{
        _cleanup_(strv_release) struct strv tool = { 0 }, after = { 0 }, before = { 0 };
        _cleanup_(strv_release) struct strv names = { 0 }, files = { 0 }, old = { 0 };
        size_t first;
        int r = find_tool(l->env.items, &tool, d);

        if (r < 0)
                return r;
        r = tool_load(&tool, l->env.items, specs, n_specs, &after, d);
        if (r < 0)
                return r;
        modulepath_split(env_get(l->env.items, "LOADEDMODULES"), &old);
        modulepath_split(env_get(after.items, "LOADEDMODULES"), &names);
        modulepath_split(env_get(after.items, "_LMFILES_"), &files);
        if (names.len != files.len || names.len <= old.len)
                return diag_errorf(d, -EINVAL, "%s loaded nothing (LOADEDMODULES is unchanged)",
                                   tool.items[tool.len - 1]);
        first = old.len;
        if (names.len - first > 1)
                r = tool_load(&tool, l->env.items, names.items + first, names.len - first - 1,
                              &before, d);
        else
                env_copy(&before, l->env.items);
        if (r < 0)
                return r;
        ret->modules = xcalloc(names.len - first, sizeof(*ret->modules));
        for (size_t i = first; i < names.len; i++) {
                const char *slash = strrchr(names.items[i], '/');
                struct modulefile *m = &ret->modules[ret->n_modules++].file;
                _cleanup_free_ char *name = slash ? xstrndup(names.items[i],
                                                             (size_t)(slash - names.items[i]))
                                                  : xstrdup(names.items[i]);

                modulefile_set(m, name, slash ? slash + 1 : "", files.items[i],
                               endswith(files.items[i], ".lua"));
        }
        tool_show_entries(&tool, after.items, names.items[names.len - 1],
                          &ret->modules[ret->n_modules - 1].path_entries);
        ret->env = after;
        ret->env_before_last = before;
        after = before = (struct strv){ 0 };
        return 0;
}

/* --- evaluate_load --------------------------------------------------------- */

void evaluation_release(struct evaluation *e)
{
        loaded_modules_free(e->modules, e->n_modules);
        strv_release(&e->env);
        strv_release(&e->env_before_last);
        *e = (struct evaluation){ 0 };
}

void evaluate_start_env(const struct evaluate_options *o, struct strv *ret)
{
        extern char **environ;

        env_copy(ret, o->environ ? o->environ : environ);
        if (o->modulepath) {
                _cleanup_free_ char *joined = strv_join(o->modulepath, ":");

                env_set(ret, "MODULEPATH", joined);
        }
}

/* A load of Tcl modulefiles in the safe interpreter: tclsh is found on
 * the PATH of the start environment (the caller's, never a module's). */
static int tcl_begin(struct loader *l, struct diag *d)
{
        l->tclsh = tcl_find_interpreter(l->env.items);
        if (!l->tclsh)
                return diag_errorf(d, -ENOEXEC,
                                   "Tcl modulefiles are evaluated in a Tcl safe interpreter, and "
                                   "no tclsh was found on PATH (install tcl, or give "
                                   "--trust-modulefiles to have Environment Modules or Lmod "
                                   "evaluate them)");
        l->tcl = true;
        return 0;
}

int evaluate_load(const struct evaluate_options *o, char *const *specs, size_t n_specs,
                  struct evaluation *ret, struct diag *d)
{
        _cleanup_(loader_release) struct loader l = {
                .o = o,
                .mem_max = o->max_memory ? o->max_memory : SANDBOX_DEFAULT_MEMORY,
                .cpu_ms = o->max_cpu_ms ? o->max_cpu_ms : SANDBOX_DEFAULT_CPU_MS,
        };
        int r = 0;

        l.cpu_deadline_ns = thread_cpu_ns() + (long long)l.cpu_ms * 1000000;
        evaluate_start_env(o, &l.env);
        env_copy(&l.last_done, l.env.items);
        env_copy(&l.start, l.env.items);
        for (size_t i = 0; i < n_specs && r >= 0; i++) {
                _cleanup_(strv_release) struct strv mp = { 0 };
                struct modulefile m = { 0 };

                modulepath_split(env_get(l.env.items, "MODULEPATH"), &mp);
                r = modulepath_find(&mp, specs[i], &m, d);
                if (r >= 0 && !m.lua && i == 0) {
                        modulefile_release(&m);
                        /* The tool's files cannot be checked before it
                         * runs them: strict modes keep the safe way. */
                        if (o->trust_modulefiles && !o->strict_modes)
                                return evaluate_tcl(&l, specs, n_specs, ret, d);
                        r = tcl_begin(&l, d);
                        if (r < 0)
                                return r;
                }
                if (r >= 0 && l.tcl) {
                        /* Environment Modules' choice ("cuda/12": the
                         * default when it is a 12.x). */
                        struct dep_spec s = { 0 };

                        modulefile_release(&m);
                        r = dep_spec_parse(specs[i], true, &s, d);
                        if (r >= 0)
                                r = em_find(&mp, &s, specs[i], &m, d);
                        dep_spec_release(&s);
                }
                if (r >= 0) {
                        const struct loaded_module *had = loaded_named(&l, m.name);

                        if (!had)
                                r = load_file(&l, &m, NULL, d);
                        else if (!streq(had->file.fullname, m.fullname))
                                r = diag_errorf(d, -EINVAL, "%s is loaded already; %s would replace it",
                                                had->file.fullname, m.fullname);
                }
                modulefile_release(&m);
        }
        if (r < 0)
                return r;
        *ret = (struct evaluation){
                .modules = TAKE_PTR(l.mods),
                .n_modules = l.n_mods,
                .env = l.env,
                .env_before_last = l.before_last,
        };
        l.n_mods = 0;
        l.env = l.before_last = (struct strv){ 0 };
        return 0;
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

        for (size_t i = 0; i < after->len; i++) {
                const char *eq = strchr(after->items[i], '=');
                _cleanup_free_ char *name = xstrndup(after->items[i], (size_t)(eq - after->items[i]));
                const char *old = env_get(before->items, name);
                struct env_change c = { 0 };

                if (env_is_bookkeeping(name) || (old && streq(old, eq + 1)))
                        continue;
                c.name = TAKE_PTR(name);
                c.value = xstrdup(eq + 1);
                c.old_value = old ? xstrdup(old) : NULL;
                c.kind = old && path_extension(old, c.value, &c.prepended, &c.appended) ? ENV_PATH
                                                                                       : ENV_SET;
                r.changes = xreallocarray(r.changes, r.n + 1, sizeof(*r.changes));
                r.changes[r.n++] = c;
        }
        for (size_t i = 0; i < before->len; i++) {
                const char *eq = strchr(before->items[i], '=');
                _cleanup_free_ char *name = xstrndup(before->items[i], (size_t)(eq - before->items[i]));

                if (env_is_bookkeeping(name) || env_get(after->items, name))
                        continue;
                r.changes = xreallocarray(r.changes, r.n + 1, sizeof(*r.changes));
                r.changes[r.n++] = (struct env_change){
                        .name = TAKE_PTR(name),
                        .kind = ENV_UNSET,
                        .old_value = xstrdup(eq + 1),
                };
        }
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

/* --- units of a modulepath ------------------------------------------------ */

#define HIERARCHY_DEPTH_MAX 4

/* The entries name's value has in after but not in before. */
static void added_entries(const struct strv *before, const struct strv *after, const char *name,
                          struct strv *ret)
{
        _cleanup_(strv_release) struct strv b = { 0 }, a = { 0 };

        modulepath_split(env_get(before->items, name), &b);
        modulepath_split(env_get(after->items, name), &a);
        for (size_t i = 0; i < a.len; i++)
                if (!strv_contains(&b, a.items[i]) && !strv_contains(ret, a.items[i]))
                        strv_add(ret, a.items[i]);
}

void evaluation_own_entries(const struct evaluation *e, const char *name, struct strv *ret)
{
        const struct loaded_module *m = &e->modules[e->n_modules - 1];
        size_t n = strlen(name);
        struct str_set seen;

        if (!m->path_entries.len) {
                added_entries(&e->env_before_last, &e->env, name, ret);
                return;
        }
        str_set_init(&seen, ret->len + m->path_entries.len);
        for (size_t i = 0; i < ret->len; i++)
                str_set_add(&seen, ret->items[i]);
        for (size_t i = 0; i < m->path_entries.len; i++) {
                const char *it = m->path_entries.items[i];

                if (strncmp(it, name, n) == 0 && it[n] == '=' && str_set_add(&seen, it + n + 1))
                        strv_add(ret, it + n + 1);
        }
        free(seen.slots);
}

void evaluate_basic_env(struct strv *env)
{
        static const char *const keep[] = { "HOME", "USER", "LOGNAME", "TMPDIR", "LANG",
                                            "MODULES_CMD", "LMOD_CMD" };

        strv_add(env, "PATH=/usr/bin:/bin");
        for (size_t i = 0; i < ELEMENTSOF(keep); i++) {
                const char *v = getenv(keep[i]);

                if (v)
                        strv_push(env, xasprintf("%s=%s", keep[i], v));
        }
}

void module_unit_release(struct module_unit *u)
{
        strv_release(&u->chain);
        free(u->module);
        free(u->file);
        free(u->error);
        evaluation_release(&u->eval);
}

struct discovery {
        const struct evaluate_options *o;
        struct module_unit *units;
        size_t n;
};

static void discover(struct discovery *v, const struct strv *dirs, const struct strv *parents,
                     unsigned depth)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct evaluate_options eo = *v->o;
        struct modulefile *mods = NULL;
        size_t n = 0;

        if (modulepath_list(dirs, &mods, &n, &d) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                struct module_unit *u;
                struct evaluation e = { 0 };
                _cleanup_(strv_release) struct strv before = { 0 }, after = { 0 }, added = { 0 };

                v->units = xreallocarray(v->units, v->n + 1, sizeof(*v->units));
                u = &v->units[v->n++];
                *u = (struct module_unit){ .module = xstrdup(mods[i].fullname), .file = xstrdup(mods[i].path) };
                for (size_t k = 0; k < parents->len; k++)
                        strv_add(&u->chain, parents->items[k]);
                strv_add(&u->chain, mods[i].fullname);
                diag_release(&d);
                if (depth >= HIERARCHY_DEPTH_MAX)
                        continue;
                if (evaluate_load(&eo, u->chain.items, u->chain.len, &e, &d) < 0) {
                        u->error = d.message ? diag_format(&d) : NULL;
                        continue;
                }
                modulepath_split(env_get(e.env_before_last.items, "MODULEPATH"), &before);
                modulepath_split(env_get(e.env.items, "MODULEPATH"), &after);
                u->eval = e;
                u->evaluated = true;
                for (size_t k = 0; k < after.len; k++)
                        if (!strv_contains(&before, after.items[k]))
                                strv_add(&added, after.items[k]);
                if (added.len) {
                        /* u moves when the array grows: copy the chain. */
                        _cleanup_(strv_release) struct strv chain = { 0 };

                        for (size_t k = 0; k < u->chain.len; k++)
                                strv_add(&chain, u->chain.items[k]);
                        discover(v, &added, &chain, depth + 1);
                }
        }
        modulefile_array_free(mods, n);
}

void module_units_discover(const struct evaluate_options *o, struct module_unit **ret,
                           size_t *n_ret)
{
        struct discovery v = { .o = o };

        discover(&v, o->modulepath, &(struct strv){ 0 }, 0);
        *ret = v.units;
        *n_ret = v.n;
}
