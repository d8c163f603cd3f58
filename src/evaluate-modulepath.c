/* evaluate-modulepath.c: finding modulefiles in a modulepath the way Lmod
 * 8 and Environment Modules do (see evaluate.h): Lmod's version order,
 * the defaults a directory marks (a `default` symlink, `.modulerc.lua`,
 * `.modulerc`, `.version`), the highest version across the modulepath,
 * and the list of every module it holds. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "evaluate-env.h"
#include "evaluate-modulepath.h"
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
        to->hidden = from->hidden;
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
        m->hidden = false;
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

/* --- modulerc directives (Lmod's MRC) ----------------------------------- */

/* What modulerc files say: Lmod 8.6's module_version, module_alias,
 * hide_version, hide_modulefile (Lua), and module-version, module-alias,
 * hide-version, hide-modulefile, set ModulesVersion (Tcl, as Lmod's
 * RC2lua reads them). */
struct modulerc {
        char *default_version;  /* a directory's file: the version marked default */
        struct strv defaults;   /* global files: "name\tversion" marked default */
        struct strv user_defaults; /* $HOME's file: the same, weighing more */
        struct strv aliases;    /* "alias\ttarget", in order (a later one wins) */
        struct strv hidden;     /* full names and modulefile paths */
};

static void modulerc_release(struct modulerc *rc)
{
        free(rc->default_version);
        strv_release(&rc->defaults);
        strv_release(&rc->user_defaults);
        strv_release(&rc->aliases);
        strv_release(&rc->hidden);
        *rc = (struct modulerc){ 0 };
}

/* name: the module directory's name, or NULL for a global file. A full
 * name given as "/12.9" or "12.9" in a directory's file is under name. */
static char *rc_full_name(const char *name, const char *target)
{
        if (!name)
                return xstrdup(target);
        if (*target == '/')
                return xasprintf("%s%s", name, target);
        if (!strchr(target, '/'))
                return xasprintf("%s/%s", name, target);
        return xstrdup(target);
}

static void rc_module_version(struct modulerc *rc, const char *name, const char *target,
                              char *const *versions, size_t n)
{
        _cleanup_free_ char *full = rc_full_name(name, target);
        const char *slash = strrchr(full, '/');

        if (!slash || slash == full || !slash[1])
                return; /* Lmod: "w_Broken_FullName", ignored */
        for (size_t k = 0; k < n; k++) {
                if (streq(versions[k], "default")) {
                        if (name) {
                                free(rc->default_version);
                                rc->default_version = marked_version(name, full);
                        } else
                                strv_push(&rc->defaults, xasprintf("%.*s\t%s", (int)(slash - full), full,
                                                                   slash + 1));
                } else
                        strv_push(&rc->aliases, xasprintf("%.*s/%s\t%s", (int)(slash - full), full,
                                                          versions[k], full));
        }
}

static void rc_module_alias(struct modulerc *rc, const char *name, const char *alias,
                            const char *target)
{
        if (!*alias || !*target)
                return;
        if (name && *alias == '/')
                strv_push(&rc->aliases, xasprintf("%s%s\t%s", name, alias, target));
        else
                strv_push(&rc->aliases, xasprintf("%s\t%s", alias, target));
}

static void rc_hide(struct modulerc *rc, const char *name, const char *what, bool path)
{
        if (*what)
                strv_push(&rc->hidden, path ? xstrdup(what) : rc_full_name(name, what));
}

static void modulerc_read_lua(const char *path, const char *name, struct modulerc *rc)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct sandbox_options so = { .module_name = name, .mode = "load",
                                      .environ = (const char *const[]){ NULL } };
        struct sandbox_result r = { 0 };

        if (file_read_regular_at(AT_FDCWD, path, NULL, MODULEFILE_MAX, false, &sb, &d) < 0 ||
            sandbox_eval(sb.buf, sb.len, path, &so, &r, &d) < 0)
                return;
        for (size_t i = 0; i < r.n_ops; i++) {
                const struct sandbox_op *op = &r.ops[i];

                switch (op->kind) {
                case SANDBOX_MODULE_VERSION:
                        if (op->args.len >= 2)
                                rc_module_version(rc, name, op->args.items[0], op->args.items + 1,
                                                  op->args.len - 1);
                        break;
                case SANDBOX_MODULE_ALIAS:
                        rc_module_alias(rc, name, op->args.items[0], op->args.items[1]);
                        break;
                case SANDBOX_HIDE_VERSION:
                        rc_hide(rc, name, op->value, false);
                        break;
                case SANDBOX_HIDE_MODULEFILE:
                        rc_hide(rc, name, op->value, true);
                        break;
                default:
                        break;
                }
        }
        sandbox_result_release(&r);
}

/* One Tcl modulerc command, its words w. cudamod's own hide a build for
 * another architecture with module-hide where the tool has it, else
 * hide-version, inside `if {[info commands ...]} {...} elseif ...`: the
 * bodies of an `if` are read as commands too (whichever the tool runs,
 * the module is hidden). */
static void rc_tcl_command(struct modulerc *rc, const char *name, const struct strv *w, unsigned depth)
{
        if (w->len >= 3 && streq(w->items[0], "module-version"))
                rc_module_version(rc, name, w->items[1], w->items + 2, w->len - 2);
        else if (w->len == 3 && streq(w->items[0], "module-alias"))
                rc_module_alias(rc, name, w->items[1], w->items[2]);
        else if (w->len == 2 && streq(w->items[0], "hide-version"))
                rc_hide(rc, name, w->items[1], false);
        else if (w->len == 2 && streq(w->items[0], "hide-modulefile"))
                rc_hide(rc, name, w->items[1], true);
        else if (w->len >= 2 && streq(w->items[0], "module-hide")) {
                /* module-hide [--soft|--hard|--hidden-loaded ...] NAME... */
                for (size_t i = 1; i < w->len; i++)
                        if (w->items[i][0] != '-')
                                rc_hide(rc, name, w->items[i], false);
        } else if (w->len >= 3 && streq(w->items[0], "if") && depth < 4)
                for (size_t i = 2; i < w->len; i++) {
                        struct strv body = { 0 };

                        if (streq(w->items[i], "elseif") || streq(w->items[i], "else") ||
                            !strpbrk(w->items[i], " \t"))
                                continue;
                        tcl_words(w->items[i], &body);
                        rc_tcl_command(rc, name, &body, depth + 1);
                        strv_release(&body);
                }
}

static void modulerc_read_tcl(const char *path, const char *name, bool version_file,
                              struct modulerc *rc)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        if (file_read_regular_at(AT_FDCWD, path, NULL, MODULEFILE_MAX, false, &sb, NULL) < 0)
                return;
        for (char *line = sb.buf; line && *line;) {
                char *nl = strchr(line, '\n');
                struct strv w = { 0 };

                if (nl)
                        *nl = '\0';
                tcl_words(line, &w);
                if (version_file) {
                        if (name && w.len == 3 && streq(w.items[0], "set") &&
                            streq(w.items[1], "ModulesVersion")) {
                                free(rc->default_version);
                                rc->default_version = xstrdup(w.items[2]);
                        }
                } else
                        rc_tcl_command(rc, name, &w, 0);
                strv_release(&w);
                line = nl ? nl + 1 : NULL;
        }
}

/* What dir/name's modulerc says: the first of a `default` symlink,
 * .modulerc.lua, .modulerc and .version, as Lmod chooses. */
static void dir_modulerc(const char *dir, const char *name, struct modulerc *rc)
{
        _cleanup_free_ char *ndir = xasprintf("%s/%s", dir, name);
        _cleanup_free_ char *link = path_join(ndir, "default");
        _cleanup_free_ char *rc_lua = path_join(ndir, ".modulerc.lua");
        _cleanup_free_ char *rc_tcl = path_join(ndir, ".modulerc");
        _cleanup_free_ char *ver = path_join(ndir, ".version");
        char target[4096];
        ssize_t n = readlink(link, target, sizeof(target) - 1);

        if (n > 0) {
                const char *base;

                target[n] = '\0';
                base = path_basename(target);
                rc->default_version = endswith(base, ".lua") ? xstrndup(base, strlen(base) - 4)
                                                             : xstrdup(base);
        } else if (access(rc_lua, F_OK) == 0)
                modulerc_read_lua(rc_lua, name, rc);
        else if (access(rc_tcl, F_OK) == 0)
                modulerc_read_tcl(rc_tcl, name, false, rc);
        else if (access(ver, F_OK) == 0)
                modulerc_read_tcl(ver, name, true, rc);
}

/* The version dir/name marks as its default, in Lmod's order, or NULL. */
char *dir_marked_default(const char *dir, const char *name)
{
        struct modulerc rc = { 0 };
        char *ret;

        dir_modulerc(dir, name, &rc);
        ret = TAKE_PTR(rc.default_version);
        modulerc_release(&rc);
        return ret;
}

static bool is_regular(const char *path)
{
        struct stat st;

        return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void modulerc_read_global(const char *path, struct modulerc *rc)
{
        if (access(path, R_OK) < 0 || !is_regular(path))
                return;
        if (endswith(path, ".lua"))
                modulerc_read_lua(path, NULL, rc);
        else
                modulerc_read_tcl(path, NULL, false, rc);
}

/* The global modulerc files of env, in the order Lmod applies them (a
 * later one wins): $LMOD_MODULERCFILE's from the last to the first, then
 * $HOME's. */
static void global_modulerc(char *const *env, struct modulerc *rc)
{
        _cleanup_(strv_release) struct strv files = { 0 };
        const char *home;

        if (!env)
                return;
        modulepath_split(env_get(env, "LMOD_MODULERCFILE"), &files);
        for (size_t i = files.len; i > 0; i--)
                modulerc_read_global(files.items[i - 1], rc);
        home = env_get(env, "HOME");
        if (home && *home) {
                _cleanup_free_ char *lua = path_join(home, ".modulerc.lua");
                _cleanup_free_ char *tcl = path_join(home, ".modulerc");

                size_t first = rc->defaults.len;

                if (access(lua, R_OK) == 0 && is_regular(lua))
                        modulerc_read_global(lua, rc);
                else
                        modulerc_read_global(tcl, rc);
                /* Its defaults weigh more than the system's. */
                for (size_t i = first; i < rc->defaults.len; i++)
                        strv_add(&rc->user_defaults, rc->defaults.items[i]);
                while (rc->defaults.len > first) {
                        free(rc->defaults.items[--rc->defaults.len]);
                        rc->defaults.items[rc->defaults.len] = NULL;
                }
        }
}

static bool rc_marks(const struct strv *defaults, const struct modulefile *m)
{
        size_t n = strlen(m->name);

        for (size_t i = 0; i < defaults->len; i++)
                if (strncmp(defaults->items[i], m->name, n) == 0 && defaults->items[i][n] == '\t' &&
                    streq(defaults->items[i] + n + 1, m->version))
                        return true;
        return false;
}

/* The version the first directory of mp that marks one for name marks
 * default (and holds), or NULL. */
static char *first_dir_default(const struct strv *mp, const char *name)
{
        for (size_t i = 0; i < mp->len; i++) {
                struct modulerc rc = { 0 };
                struct modulefile m = { 0 };
                bool have;

                dir_modulerc(mp->items[i], name, &rc);
                have = rc.default_version && modulefile_find_in_dir(mp->items[i], name, rc.default_version, &m);
                modulefile_release(&m);
                if (have) {
                        char *v = TAKE_PTR(rc.default_version);

                        modulerc_release(&rc);
                        return v;
                }
                modulerc_release(&rc);
        }
        return NULL;
}

/* Lmod's choice among c's items accepted by keep: the highest by weight,
 * then version. A default marked by $HOME's modulerc weighs 3, by a
 * global one 2, by its directory 1 (dir_default), any other version 0;
 * a hidden version is a choice only when marked. */
static const struct modulefile *rc_choose(const struct modulerc *global, const char *dir_default,
                                          const struct candidates *c,
                                          bool (*keep)(const struct modulefile *, const void *),
                                          const void *userdata)
{
        const struct modulefile *best = NULL;
        int best_w = -1;

        for (size_t i = 0; i < c->n; i++) {
                const struct modulefile *m = &c->items[i];
                int w = rc_marks(&global->user_defaults, m) ? 3
                        : rc_marks(&global->defaults, m)    ? 2
                        : dir_default && streq(m->version, dir_default) ? 1
                                                                        : 0;

                if ((keep && !keep(m, userdata)) || (!w && (m->hidden || m->version[0] == '.')))
                        continue;
                if (!best || w > best_w ||
                    (w == best_w && module_version_compare(m->version, best->version) > 0)) {
                        best = m;
                        best_w = w;
                }
        }
        return best;
}

/* The target of alias in rc's aliases (the last definition), or NULL. */
static const char *rc_alias_target(const struct modulerc *rc, const char *alias)
{
        size_t n = strlen(alias);
        const char *hit = NULL;

        for (size_t i = 0; i < rc->aliases.len; i++)
                if (strncmp(rc->aliases.items[i], alias, n) == 0 && rc->aliases.items[i][n] == '\t')
                        hit = rc->aliases.items[i] + n + 1;
        return hit;
}

/* Whether mp holds a module directory or a versionless file called name. */
static bool mp_has_name(const struct strv *mp, const char *name)
{
        for (size_t i = 0; i < mp->len; i++) {
                _cleanup_free_ char *ndir = xasprintf("%s/%s", mp->items[i], name);
                _cleanup_free_ char *lua = xasprintf("%s.lua", ndir);

                if (is_dir_at(AT_FDCWD, ndir) || access(lua, F_OK) == 0)
                        return true;
        }
        return false;
}

/* One hop: what spec is an alias of, in the global rc, then in the
 * modulerc of spec's own directory in mp, then (a name no directory
 * holds) in those of every module directory of mp. */
static char *alias_hop(const struct strv *mp, const struct modulerc *global, const char *spec)
{
        const char *slash = strrchr(spec, '/');
        _cleanup_free_ char *name = slash ? xstrndup(spec, (size_t)(slash - spec)) : xstrdup(spec);
        const char *t = rc_alias_target(global, spec);
        char *ret = NULL;

        if (t)
                return xstrdup(t);
        for (size_t i = 0; i < mp->len && !ret; i++) {
                struct modulerc rc = { 0 };

                dir_modulerc(mp->items[i], name, &rc);
                t = rc_alias_target(&rc, spec);
                if (t)
                        ret = xstrdup(t);
                modulerc_release(&rc);
        }
        if (ret || mp_has_name(mp, name))
                return ret;
        for (size_t i = 0; i < mp->len && !ret; i++) {
                DIR *dir = opendir(mp->items[i]);
                struct dirent *de;

                if (!dir)
                        continue;
                while (!ret && (de = readdir(dir))) {
                        _cleanup_free_ char *full = path_join(mp->items[i], de->d_name);
                        struct modulerc rc = { 0 };

                        if (de->d_name[0] == '.' || !is_dir_at(AT_FDCWD, full))
                                continue;
                        dir_modulerc(mp->items[i], de->d_name, &rc);
                        t = rc_alias_target(&rc, spec);
                        if (t)
                                ret = xstrdup(t);
                        modulerc_release(&rc);
                }
                closedir(dir);
        }
        return ret;
}

#define ALIAS_HOPS_MAX 16

/* spec through the aliases; a copy of spec when it is none. */
static char *alias_resolve(const struct strv *mp, const struct modulerc *global, const char *spec)
{
        char *cur = xstrdup(spec);

        for (int hop = 0; hop < ALIAS_HOPS_MAX; hop++) {
                char *next = alias_hop(mp, global, cur);

                if (!next || streq(next, cur)) {
                        free(next);
                        break;
                }
                free(cur);
                cur = next;
        }
        return cur;
}

static bool rc_hides(const struct modulerc *rc, const struct modulefile *m)
{
        return strv_contains(&rc->hidden, m->fullname) || strv_contains(&rc->hidden, m->path);
}

/* Mark c's items that the modulerc files hide. */
static void candidates_mark_hidden(const struct strv *mp, const struct modulerc *global,
                                   const char *name, struct candidates *c)
{
        for (size_t i = 0; i < mp->len; i++) {
                struct modulerc rc = { 0 };

                dir_modulerc(mp->items[i], name, &rc);
                for (size_t k = 0; k < c->n; k++)
                        if (rc_hides(&rc, &c->items[k]) || rc_hides(global, &c->items[k]))
                                c->items[k].hidden = true;
                modulerc_release(&rc);
        }
}

/* The highest version among c's items accepted by keep (all when NULL). */
const struct modulefile *candidates_highest(const struct candidates *c,
                                            bool (*keep)(const struct modulefile *, const void *),
                                            const void *userdata)
{
        const struct modulefile *best = NULL;

        for (size_t i = 0; i < c->n; i++) {
                const struct modulefile *m = &c->items[i];

                if (m->version[0] == '.' || m->hidden || (keep && !keep(m, userdata)))
                        continue;
                if (!best || module_version_compare(m->version, best->version) > 0)
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

/* name alone: the default a global modulerc marks, else the first
 * directory's marked default, else the highest version anywhere that is
 * not hidden, else a versionless name.lua. global NULL: Environment
 * Modules' lookup (no Lmod directive but the defaults). */
static int find_by_name(const struct strv *mp, const struct modulerc *global, const char *name,
                        struct modulefile *ret, struct diag *d)
{
        _cleanup_(candidates_release) struct candidates c = { 0 };
        const struct modulefile *best;
        size_t n = strlen(name);
        const char *gdef = NULL;

        /* A global modulerc's mark wins over everything (rc_choose). */
        for (size_t i = 0; global && !gdef && i < global->defaults.len + global->user_defaults.len; i++) {
                const char *it = i < global->defaults.len ? global->defaults.items[i]
                                                          : global->user_defaults.items[i - global->defaults.len];

                if (strncmp(it, name, n) == 0 && it[n] == '\t')
                        gdef = it;
        }
        if (gdef) {
                _cleanup_free_ char *dir_default = first_dir_default(mp, name);

                candidates_collect(mp, name, &c);
                candidates_mark_hidden(mp, global, name, &c);
                best = rc_choose(global, dir_default, &c, NULL, NULL);
                if (best) {
                        modulefile_copy(ret, best);
                        return 0;
                }
                candidates_release(&c);
        }
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
        if (global)
                candidates_mark_hidden(mp, global, name, &c);
        best = candidates_highest(&c, NULL, NULL);
        if (!best)
                return not_found(mp, name, d);
        modulefile_copy(ret, best);
        return 0;
}

static int find_spec(const struct strv *mp, const struct modulerc *global, const char *spec,
                     struct modulefile *ret, struct diag *d)
{
        const char *slash = strrchr(spec, '/');
        _cleanup_free_ char *name = NULL;
        _cleanup_(candidates_release) struct candidates c = { 0 };
        const struct modulefile *best;

        if (!*spec || spec[0] == '/' || strstr(spec, "..") || (slash && !slash[1]))
                return diag_errorf(d, -EINVAL, "'%s' is not a module name", spec);
        if (!slash)
                return find_by_name(mp, global, spec, ret, d);
        name = xstrndup(spec, (size_t)(slash - spec));
        for (size_t i = 0; i < mp->len; i++)
                if (modulefile_find_in_dir(mp->items[i], name, slash + 1, ret)) {
                        if (global) {
                                struct candidates one = { .items = ret, .n = 1 };

                                candidates_mark_hidden(mp, global, name, &one);
                        }
                        return 0;
                }
        /* "cuda/12": the highest 12.x (Lmod's extended default), or a name
         * with a '/' in it ("apps/cuda"). */
        candidates_collect(mp, name, &c);
        if (global) {
                /* Lmod: a marked default weighs more inside it too. */
                _cleanup_free_ char *dir_default = first_dir_default(mp, name);

                candidates_mark_hidden(mp, global, name, &c);
                best = rc_choose(global, dir_default, &c, modulefile_under_partial, slash + 1);
        } else
                best = candidates_highest(&c, modulefile_under_partial, slash + 1);
        if (best) {
                modulefile_copy(ret, best);
                return 0;
        }
        return find_by_name(mp, global, spec, ret, d);
}

int modulepath_find_rc(const struct strv *mp, char *const *env, const char *spec,
                       struct modulefile *ret, struct diag *d)
{
        struct modulerc global = { 0 };
        _cleanup_free_ char *target = NULL;
        int r;

        if (!*spec || spec[0] == '/' || strstr(spec, ".."))
                return diag_errorf(d, -EINVAL, "'%s' is not a module name", spec);
        global_modulerc(env, &global);
        target = alias_resolve(mp, &global, spec);
        r = find_spec(mp, &global, target, ret, d);
        if (r == -ENOENT && !streq(target, spec)) {
                _cleanup_free_ char *why = d && d->message ? xstrdup(d->message) : NULL;

                r = diag_errorf(d, r, "'%s' is an alias of '%s' (a modulerc says so): %s", spec, target,
                                why ? why : "not found");
        }
        modulerc_release(&global);
        return r;
}

void candidates_hide(const struct strv *mp, char *const *env, const char *name, struct candidates *c)
{
        struct modulerc global = { 0 };

        global_modulerc(env, &global);
        candidates_mark_hidden(mp, &global, name, c);
        modulerc_release(&global);
}

int modulepath_find(const struct strv *mp, const char *spec, struct modulefile *ret,
                    struct diag *d)
{
        return modulepath_find_rc(mp, NULL, spec, ret, d);
}

int modulepath_find_em(const struct strv *mp, const char *spec, struct modulefile *ret,
                       struct diag *d)
{
        struct modulerc none = { 0 };
        _cleanup_free_ char *target = NULL;

        if (!*spec || spec[0] == '/' || strstr(spec, ".."))
                return diag_errorf(d, -EINVAL, "'%s' is not a module name", spec);
        /* Environment Modules follows module-alias and module-version too
         * (not hide-version: it ignores that one). */
        target = alias_resolve(mp, &none, spec);
        return find_spec(mp, NULL, target, ret, d);
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
        return modulepath_list_rc(mp, NULL, ret, n_ret, d);
}

int modulepath_list_rc(const struct strv *mp, char *const *env, struct modulefile **ret,
                       size_t *n_ret, struct diag *d)
{
        struct candidates c = { 0 };
        struct modulerc global = { 0 };

        global_modulerc(env, &global);

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
                                size_t first = c.n;

                                collect_versions(mp->items[i], de->d_name, &c);
                                {
                                        struct candidates mine = { .items = c.items + first, .n = c.n - first };

                                        candidates_mark_hidden(mp, &global, de->d_name, &mine);
                                }
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
        modulerc_release(&global);
        /* Hidden versions are never listed. */
        for (size_t i = 0; i < c.n;) {
                if (c.items[i].version[0] == '.' || c.items[i].hidden) {
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
