/* cmake-find.c: CMake's find_program, find_path and find_library
 * (cmake-find.h), after CMake 3.25's cmSearchPath and cmFindBase. */
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmake-find.h"
#include "process.h"
#include "util.h"
#include "banned.h"

/* --- the environment ------------------------------------------------------------ */

static const char *getv(const struct cmake_find_env *b, const char *name)
{
        const char *v = env_get(b->env, name);

        return v && *v ? v : NULL;
}

bool cmake_is_true(const char *v, bool def)
{
        if (!v || !*v)
                return def;
        if (!strcasecmp(v, "0") || !strcasecmp(v, "OFF") || !strcasecmp(v, "NO") || !strcasecmp(v, "FALSE") ||
            !strcasecmp(v, "N") || !strcasecmp(v, "IGNORE") || !strcasecmp(v, "NOTFOUND") || endswith(v, "-NOTFOUND"))
                return false;
        return true;
}

/* name's ':'-separated entries (empty ones dropped). */
static void env_list(const struct cmake_find_env *b, const char *name, struct strv *ret)
{
        for (const char *p = getv(b, name); p && *p;) {
                const char *end = strchrnul(p, ':');

                if (end > p)
                        strv_push(ret, xstrndup(p, (size_t)(end - p)));
                p = *end ? end + 1 : end;
        }
}

char *cmake_find_rooted(const char *sysroot, const char *abs)
{
        if (!sysroot || streq(sysroot, "/"))
                return xstrdup(abs);
        if (streq(abs, "/"))
                return xstrdup(sysroot);
        return path_join(sysroot, abs + 1);
}

static char *rooted(const struct cmake_find_env *b, const char *abs)
{
        return cmake_find_rooted(b->sysroot, abs);
}

struct sdir {
        char *dir;
        char *from;     /* the label */
        char *prefix;   /* the prefix of a default, for the label's "+ rel" */
        bool fallback;
};

struct search {
        struct sdir *items;
        size_t n;
};

/* --- the search directories ---------------------------------------------------- */

static void sdir_add(struct search *s, const char *dir, const char *from, const char *prefix, bool fallback)
{
        if (!dir || !*dir)
                return;
        s->items = xreallocarray(s->items, s->n + 1, sizeof(*s->items));
        s->items[s->n++] = (struct sdir){ .dir = xstrdup(dir), .from = xstrdup(from),
                                          .prefix = prefix ? xstrdup(prefix) : NULL, .fallback = fallback };
}

static void search_release(struct search *s)
{
        for (size_t i = 0; i < s->n; i++) {
                free(s->items[i].dir);
                free(s->items[i].from);
                free(s->items[i].prefix);
        }
        free(s->items);
        *s = (struct search){ 0 };
}

/* cmSearchPath::AddPrefixPaths: P/<sub>/<arch> (lib, include), P/lib64
 * before P/lib where lib64 paths are used, P/<sub> (bin and sbin for
 * programs), then P itself (not "/"). */
static void add_prefix(const struct cmake_find_env *b, struct search *s, enum cmake_find_kind k, const char *p, const char *from,
                       bool fallback)
{
        const char *subs[3] = { NULL };
        bool def = fallback;

        if (!p || !*p)
                return;
        subs[0] = k == CMAKE_FIND_PROGRAM ? "bin" : k == CMAKE_FIND_PATH ? "include" : "lib";
        if (k == CMAKE_FIND_PROGRAM)
                subs[1] = "sbin";
        for (size_t i = 0; subs[i]; i++) {
                _cleanup_free_ char *d = path_join(p, subs[i]);

                if (k != CMAKE_FIND_PROGRAM && b->arch) {
                        _cleanup_free_ char *a = path_join(d, b->arch);
                        sdir_add(s, a, from, def ? p : NULL, fallback);
                }
                if (k == CMAKE_FIND_LIBRARY && b->lib64) {
                        _cleanup_free_ char *l = path_join(p, "lib64");
                        sdir_add(s, l, from, def ? p : NULL, fallback);
                }
                sdir_add(s, d, from, def ? p : NULL, fallback);
        }
        if (!streq(p, "/"))
                sdir_add(s, p, from, def ? p : NULL, fallback);
}

/* The directories, in the order CMake searches them. */
static void search_dirs(const struct cmake_find_env *b, const struct cmake_find *f, struct search *s)
{
        struct search raw = { 0 };
        _cleanup_(strv_release) struct strv cpp = { 0 }, extra = { 0 }, envpath = { 0 };
        const char *extra_var = f->kind == CMAKE_FIND_PROGRAM ? "CMAKE_PROGRAM_PATH"
                                : f->kind == CMAKE_FIND_PATH  ? "CMAKE_INCLUDE_PATH"
                                                        : "CMAKE_LIBRARY_PATH";

        if (!f->no_default) {
                /* <Pkg>_ROOT: the variable (setup.py forwards the
                 * environment's CUDNN_ROOT as -D) and the environment's
                 * (CMP0074 NEW). */
                if (f->root_var) {
                        _cleanup_(strv_release) struct strv roots = { 0 };

                        env_list(b, f->root_var, &roots);
                        for (size_t i = 0; i < roots.len; i++)
                                add_prefix(b, &raw, f->kind, roots.items[i], f->root_var, false);
                }
                /* CMAKE_PREFIX_PATH: setup.py's variable holds the
                 * environment's entries, then what the find modules
                 * appended so far; the environment's again after (no
                 * new directory). */
                env_list(b, "CMAKE_PREFIX_PATH", &cpp);
                for (size_t i = 0; i < cpp.len; i++)
                        add_prefix(b, &raw, f->kind, cpp.items[i], "CMAKE_PREFIX_PATH", false);
                for (size_t i = 0; i < b->n_appended; i++)
                        add_prefix(b, &raw, f->kind, b->appended[i].prefix, b->appended[i].from, false);
                env_list(b, extra_var, &extra);
                for (size_t i = 0; i < extra.len; i++)
                        sdir_add(&raw, extra.items[i], extra_var, NULL, false);
        }
        for (size_t i = 0; f->hints && f->hints[i]; i++)
                sdir_add(&raw, f->hints[i], f->hints_from, f->hints_fallback ? f->hints[i] : NULL,
                         f->hints_fallback);
        if (!f->no_default) {
                _cleanup_(strv_release) struct strv lib = { 0 };
                const char *spp[] = { "/usr/local", "/usr", "/", NULL };
                const char *late[] = { "/usr/X11R6", "/usr/pkg", "/opt", NULL };
                int err = 0;
                _cleanup_free_ char *cmake = process_find_program("cmake", b->env, &err);
                _cleanup_free_ char *cbin = cmake ? path_dirname(cmake) : NULL;
                _cleanup_free_ char *cprefix = cbin ? path_dirname(cbin) : NULL;

                /* The system environment: LIB / INCLUDE, then PATH, as
                 * they are (the bin -> lib rewrite is Windows'). */
                env_list(b, f->kind == CMAKE_FIND_PATH ? "INCLUDE" : f->kind == CMAKE_FIND_LIBRARY ? "LIB" : "NO SUCH", &lib);
                for (size_t i = 0; i < lib.len; i++)
                        sdir_add(&raw, lib.items[i], f->kind == CMAKE_FIND_PATH ? "INCLUDE" : "LIB", NULL, false);
                env_list(b, "PATH", &envpath);
                for (size_t i = 0; i < envpath.len; i++)
                        sdir_add(&raw, envpath.items[i], "PATH", NULL, false);
                /* CMAKE_SYSTEM_PREFIX_PATH (Platform/UnixPaths.cmake):
                 * /usr/local /usr /, cmake's own prefix, the install
                 * prefix (torch/, never holds these), /usr/X11R6 /usr/pkg
                 * /opt. */
                for (size_t i = 0; spp[i]; i++) {
                        _cleanup_free_ char *p = rooted(b, spp[i]);
                        _cleanup_free_ char *label = xasprintf("default %s", spp[i]);

                        add_prefix(b, &raw, f->kind, p, label, true);
                }
                if (cprefix && !streq(cprefix, "/usr") && !streq(cprefix, "/usr/local") && !streq(cprefix, "/"))
                        add_prefix(b, &raw, f->kind, cprefix, "cmake's prefix", true);
                for (size_t i = 0; late[i]; i++) {
                        _cleanup_free_ char *p = rooted(b, late[i]);
                        _cleanup_free_ char *label = xasprintf("default %s", late[i]);

                        add_prefix(b, &raw, f->kind, p, label, true);
                }
        }
        for (size_t i = 0; f->paths && f->paths[i]; i++)
                sdir_add(&raw, f->paths[i], f->paths_from, NULL, false);

        /* cmSearchPath::AddSuffixes: each directory's suffixed forms,
         * then the directory. */
        for (size_t i = 0; i < raw.n; i++) {
                const struct sdir *d = &raw.items[i];

                for (size_t k = 0; f->suffixes && f->suffixes[k]; k++) {
                        _cleanup_free_ char *p = path_join(d->dir, f->suffixes[k]);
                        sdir_add(s, p, d->from, d->prefix, d->fallback);
                }
                sdir_add(s, d->dir, d->from, d->prefix, d->fallback);
        }
        search_release(&raw);
}

static bool file_fits(enum cmake_find_kind k, const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return false;
        if (k == CMAKE_FIND_PROGRAM)
                return S_ISREG(st.st_mode) && access(path, X_OK) == 0;
        if (k == CMAKE_FIND_LIBRARY)
                return !S_ISDIR(st.st_mode);
        return true;
}

/* The file names tried for one NAMES entry: a name with a library suffix
 * as it is; a bare one as lib<name>.so, then lib<name>.a (after
 * lib<name>.so.<version> when version is given, FindNCCL's NCCL_VERSION). */
static void file_names(enum cmake_find_kind k, const char *name, const char *version, struct strv *ret)
{
        if (k != CMAKE_FIND_LIBRARY || endswith(name, ".so") || endswith(name, ".a") || strstr(name, ".so.")) {
                strv_add(ret, name);
                return;
        }
        if (version)
                strv_push(ret, xasprintf("lib%s.so.%s", name, version));
        strv_push(ret, xasprintf("lib%s.so", name));
        strv_push(ret, xasprintf("lib%s.a", name));
}

/* The first hit: names outer, directories inner (no NAMES_PER_DIR). */
void cmake_find_run(const struct cmake_find_env *b, const struct cmake_find *f, const char *version, struct cmake_find_hit *ret)
{
        struct search s = { 0 };

        *ret = (struct cmake_find_hit){ 0 };
        search_dirs(b, f, &s);
        for (size_t n = 0; f->names[n] && !ret->path; n++) {
                _cleanup_(strv_release) struct strv files = { 0 };

                file_names(f->kind, f->names[n], version, &files);
                for (size_t i = 0; i < s.n && !ret->path; i++)
                        for (size_t k = 0; k < files.len && !ret->path; k++) {
                                _cleanup_free_ char *p = path_join(s.items[i].dir, files.items[k]);
                                const struct sdir *d = &s.items[i];

                                if (!file_fits(f->kind, p))
                                        continue;
                                ret->path = TAKE_PTR(p);
                                ret->fallback = d->fallback;
                                if (d->prefix && !streq(d->prefix, d->dir))
                                        ret->from = xasprintf("%s + %s", d->from,
                                                              d->dir + strlen(d->prefix) +
                                                                      (d->prefix[strlen(d->prefix) - 1] != '/'));
                                else
                                        ret->from = xstrdup(d->from);
                        }
        }
        search_release(&s);
}

void cmake_find_hit_release(struct cmake_find_hit *h)
{
        free(h->path);
        free(h->from);
        *h = (struct cmake_find_hit){ 0 };
}
