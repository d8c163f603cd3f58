/* evaluate-modulepath.c: finding modulefiles in a modulepath the way Lmod
 * 8 and Environment Modules do (see evaluate.h): Lmod's version order,
 * the defaults a directory marks (a `default` symlink, `.modulerc.lua`,
 * `.modulerc`, `.version`), the highest version across the modulepath,
 * and the list of every module it holds. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "evaluate.h"
#include "evaluate-internal.h"
#include "lmod-sandbox.h"
#include "strbuf.h"
#include "util-file.h"
#include "util-path.h"
#include "banned.h"

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

void modulefile_copy(struct modulefile *to, const struct modulefile *from)
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

void modulefile_set(struct modulefile *m, const char *name, const char *version,
                    const char *path, bool lua)
{
        m->name = xstrdup(name);
        m->version = xstrdup(version);
        m->fullname = *version ? xasprintf("%s/%s", name, version) : xstrdup(name);
        m->path = xstrdup(path);
        m->lua = lua;
}

/* The file of name/version in dir: version.lua first, then a Tcl file. */
bool modulefile_find_in_dir(const char *dir, const char *name, const char *version,
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

void candidates_release(struct candidates *c)
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
                if (!modulefile_find_in_dir(dir, name, version, &m))
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
void tcl_words(const char *line, struct strv *ret)
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
char *dir_marked_default(const char *dir, const char *name)
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

/* Whether the Tcl words w (a line, or a braced body in it) hide fullname
 * (`module-hide NAME`, `hide-version NAME`). */
static bool tcl_words_hide(const struct strv *w, const char *fullname, unsigned depth)
{
        for (size_t i = 0; i < w->len; i++) {
                if ((streq(w->items[i], "module-hide") || streq(w->items[i], "hide-version"))) {
                        for (size_t k = i + 1; k < w->len; k++)
                                if (w->items[k][0] != '-')
                                        return streq(w->items[k], fullname);
                        return false;
                }
                if (depth < 4 && strpbrk(w->items[i], " \t")) {
                        struct strv inner = { 0 };
                        bool hit;

                        tcl_words(w->items[i], &inner);
                        hit = tcl_words_hide(&inner, fullname, depth + 1);
                        strv_release(&inner);
                        if (hit)
                                return true;
                }
        }
        return false;
}

/* Whether the modulerc beside m hides it (cudamod hides the builds for
 * another architecture than the tree's: hide_version in Lua, module-hide
 * or hide-version in Tcl), as Lmod and Environment Modules do when they
 * pick a default. */
static bool modulefile_hidden(const struct modulefile *m)
{
        _cleanup_free_ char *dir = path_dirname(m->path);
        _cleanup_free_ char *rc_lua = path_join(dir, ".modulerc.lua");
        _cleanup_free_ char *rc = path_join(dir, ".modulerc");
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        bool hidden = false;

        if (access(rc_lua, F_OK) == 0) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct sandbox_options so = { .module_name = m->name, .mode = "load",
                                              .environ = (const char *const[]){ NULL } };
                struct sandbox_result r = { 0 };

                if (file_read_regular_at(AT_FDCWD, rc_lua, NULL, MODULEFILE_MAX, false, &sb, &d) < 0 ||
                    sandbox_eval(sb.buf, sb.len, rc_lua, &so, &r, &d) < 0)
                        return false;
                for (size_t i = 0; i < r.n_ops && !hidden; i++)
                        hidden = r.ops[i].kind == SANDBOX_HIDE_VERSION && r.ops[i].args.len >= 1 &&
                                 streq(r.ops[i].args.items[0], m->fullname);
                sandbox_result_release(&r);
                return hidden;
        }
        if (access(rc, F_OK) != 0 || file_read_regular_at(AT_FDCWD, rc, NULL, 1 << 20, false, &sb, NULL) < 0)
                return false;
        for (char *line = sb.buf; line && *line && !hidden;) {
                char *nl = strchr(line, '\n');
                struct strv w = { 0 };

                if (nl)
                        *nl = '\0';
                tcl_words(line, &w);
                hidden = tcl_words_hide(&w, m->fullname, 0);
                strv_release(&w);
                line = nl ? nl + 1 : NULL;
        }
        return hidden;
}

/* The highest version among c's items accepted by keep (all when NULL),
 * hidden ones left out. */
const struct modulefile *candidates_highest(const struct candidates *c,
                                            bool (*keep)(const struct modulefile *, const void *),
                                            const void *userdata)
{
        const struct modulefile *best = NULL;

        for (size_t i = 0; i < c->n; i++) {
                const struct modulefile *m = &c->items[i];

                if (m->version[0] == '.' || (keep && !keep(m, userdata)))
                        continue;
                if (best && module_version_compare(m->version, best->version) <= 0)
                        continue;
                if (!modulefile_hidden(m))
                        best = m;
        }
        return best;
}

bool modulefile_under_partial(const struct modulefile *m, const void *partial)
{
        size_t n = strlen(partial);

        return strncmp(m->version, partial, n) == 0 && (m->version[n] == '.' || !m->version[n]);
}

void candidates_collect(const struct strv *mp, const char *name, struct candidates *c)
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
                        if (modulefile_find_in_dir(mp->items[i], name, "", ret))
                                return 0;
                        continue;
                }
                v = dir_marked_default(mp->items[i], name);
                if (v && modulefile_find_in_dir(mp->items[i], name, v, ret))
                        return 0;
        }
        candidates_collect(mp, name, &c);
        best = candidates_highest(&c, NULL, NULL);
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
                if (modulefile_find_in_dir(mp->items[i], name, slash + 1, ret))
                        return 0;
        /* "cuda/12": the highest 12.x (Lmod's extended default), or a name
         * with a '/' in it ("apps/cuda"). */
        candidates_collect(mp, name, &c);
        best = candidates_highest(&c, modulefile_under_partial, slash + 1);
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
                        if (!modulefile_find_in_dir(mp->items[i], path_basename(full), "", &m))
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
