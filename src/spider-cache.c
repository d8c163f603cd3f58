/* spider-cache.c: Lmod's system spider cache, rebuilt (spider-cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process.h"
#include "spider-cache.h"
#include "strbuf.h"
#include "util.h"
#include "util-write.h"
#include "banned.h"

enum {
        RC_MAX_SIZE = 1 << 20,
        RC_MAX_STEPS = 1000000,
        RC_MAX_MEMORY = 64 << 20,
        REBUILD_TIMEOUT = 600,
};

void spider_cache_release(struct spider_cache *c)
{
        free(c->dir);
        free(c->timestamp);
        free(c->from);
        *c = (struct spider_cache){ 0 };
}

static const char tool_name[] = "update_lmod_system_cache_files";

static char *executable_in(const char *dir)
{
        char *p;

        if (!dir || !*dir)
                return NULL;
        p = path_join(dir, tool_name);
        if (access(p, X_OK) == 0)
                return p;
        free(p);
        return NULL;
}

char *spider_cache_find_tool(void)
{
        static const char *const places[] = {
                "/usr/share/lmod/lmod/libexec", "/opt/apps/lmod/lmod/libexec", "/usr/local/lmod/lmod/libexec",
                "/opt/lmod/lmod/libexec", "/usr/lib/lmod/lmod/libexec",
        };
        const char *cmd = getenv("LMOD_CMD");
        char *p = executable_in(getenv("LMOD_DIR"));

        if (!p && cmd && *cmd) {
                _cleanup_free_ char *dir = path_dirname(cmd);
                p = executable_in(dir);
        }
        for (size_t i = 0; !p && i < ELEMENTSOF(places); i++)
                p = executable_in(places[i]);
        return p;
}

struct capped {
        size_t used, cap;
};

/* Lua's allocator, at most cap bytes in all: an lmodrc that builds a huge
 * string fails to read instead of taking the machine's memory. */
static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
        struct capped *c = ud;
        size_t old = ptr ? osize : 0;
        void *p;

        if (nsize == 0) {
                free(ptr);
                c->used -= old;
                return NULL;
        }
        if (nsize > old && nsize - old > c->cap - c->used)
                return NULL;
        p = realloc(ptr, nsize);
        if (p)
                c->used = c->used - old + nsize;
        return p;
}

static void step_hook(lua_State *L, lua_Debug *ar)
{
        (void)ar;
        luaL_error(L, "runs too long");
}

/* t[key] as a string, or NULL. */
static char *field_string(lua_State *L, int t, const char *key)
{
        char *s = NULL;

        lua_getfield(L, t, key);
        if (lua_type(L, -1) == LUA_TSTRING)
                s = xstrdup(lua_tostring(L, -1));
        lua_pop(L, 1);
        return s;
}

/* Run one lmodrc in a state with no library: only its assignments
 * (scDescriptT = {...}) take effect. 1 with ret filled when it names a
 * cache, 0 when not (or it cannot be read: Lmod skips those too). */
static int read_one_rc(const char *file, struct spider_cache *ret, struct diag *d)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_free_ char *chunk = xasprintf("@%s", file);
        struct capped mem = { .cap = RC_MAX_MEMORY };
        lua_State *L;
        int r = 0;

        if (strbuf_read_file(&sb, file, RC_MAX_SIZE) < 0)
                return 0;
        /* As loadfile: a first line starting with '#' (#!) is skipped,
         * its newline kept for the line numbers. */
        if (sb.buf[0] == '#')
                for (size_t i = 0; i < sb.len && sb.buf[i] != '\n'; i++)
                        sb.buf[i] = ' ';
        L = lua_newstate(capped_alloc, &mem);
        if (!L)
                die_oom();
        lua_sethook(L, step_hook, LUA_MASKCOUNT, RC_MAX_STEPS);
        if (luaL_loadbufferx(L, sb.buf, sb.len, chunk, "t") != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
                /* One that names no cache is not ours to judge. */
                if (strstr(sb.buf, "scDescriptT"))
                        r = diag_errorf(d, -EINVAL, "cannot read scDescriptT in the lmodrc '%s' (cudamod runs it "
                                        "with no Lua library): %s", file,
                                        lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
                lua_close(L);
                return r;
        }
        lua_getglobal(L, "scDescriptT");
        if (lua_istable(L, -1)) {
                lua_rawgeti(L, -1, 1);
                if (lua_istable(L, -1)) {
                        char *dir = field_string(L, -1, "dir"), *ts = field_string(L, -1, "timestamp");

                        if (dir && ts && *dir == '/' && *ts == '/') {
                                *ret = (struct spider_cache){ .dir = dir, .timestamp = ts, .from = xstrdup(file) };
                                r = 1;
                        } else {
                                free(dir);
                                free(ts);
                                r = diag_errorf(d, -EINVAL, "the lmodrc '%s': scDescriptT[1] needs an absolute "
                                                "'dir' and 'timestamp'", file);
                        }
                }
        }
        lua_close(L);
        return r;
}

int spider_cache_from_lmodrc(const char *tool, struct spider_cache *ret, struct diag *d)
{
        _cleanup_(strv_release) struct strv files = { 0 };
        _cleanup_free_ char *libexec = tool ? path_dirname(tool) : NULL;
        const char *config_dir = getenv("LMOD_CONFIG_DIR"), *rc = getenv("LMOD_RC");

        if (libexec) {
                strv_push(&files, xasprintf("%s/../init/lmodrc.lua", libexec));
                strv_push(&files, xasprintf("%s/../../etc/lmodrc.lua", libexec));
        }
        if (config_dir && *config_dir)
                strv_push(&files, path_join(config_dir, "lmodrc.lua"));
        strv_add(&files, "/etc/lmodrc.lua");
        while (rc && *rc) {
                const char *colon = strchr(rc, ':');
                size_t n = colon ? (size_t)(colon - rc) : strlen(rc);

                if (n)
                        strv_push(&files, xstrndup(rc, n));
                rc = colon ? colon + 1 : NULL;
        }
        for (size_t i = 0; i < files.len; i++) {
                int r = read_one_rc(files.items[i], ret, d);

                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return diag_errorf(d, -ENOENT, "lmod.spider_cache is true, but no lmodrc names a cache (scDescriptT "
                           "in %s%s, or LMOD_RC)", libexec ? libexec : "", libexec ? "/../init/lmodrc.lua" : "");
}

/* Remove the directory name in parentfd and the files in it (one level:
 * what the tool made), by descriptor: its path could lead elsewhere now. */
static void remove_dir_at(int parentfd, const char *name)
{
        int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;

        if (fd >= 0 && !d)
                close(fd);
        if (d) {
                while ((de = readdir(d)))
                        if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                (void)unlinkat(dirfd(d), de->d_name, 0);
                closedir(d);
        }
        (void)unlinkat(parentfd, name, AT_REMOVEDIR);
}

/* A new directory .BASE.cudamod-tmp.XXXXXX in parentfd, mode 0700: its
 * name in ret_name, an open descriptor of it in *ret_fd. */
static int make_temp_dir(int parentfd, const char *base, char ret_name[static NAME_MAX + 1], int *ret_fd)
{
        int keep = (int)(strlen(base) < 200 ? strlen(base) : 200);

        for (int attempt = 0; attempt < 100; attempt++) {
                char suffix[7];
                int fd;

                random_suffix(suffix);
                snprintf(ret_name, NAME_MAX + 1, ".%.*s.cudamod-tmp.%s", keep, base, suffix);
                if (mkdirat(parentfd, ret_name, 0700) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return -errno;
                }
                fd = openat(parentfd, ret_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                        int r = -errno;
                        (void)unlinkat(parentfd, ret_name, AT_REMOVEDIR);
                        return r;
                }
                *ret_fd = fd;
                return 0;
        }
        return -EEXIST;
}

/* Give the file name in dirfd, a regular file the tool made there, the
 * mode users need to read it (the umask of root's cron may be 077).
 * Returns 0 when it is a regular file now of that mode, else -errno. */
static int chmod_made(int dirfd, const char *name, mode_t mode)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;

        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return fchmod(fd, mode) < 0 ? -errno : 0;
}

int spider_cache_rebuild(const char *tool, const struct spider_cache *c, const char *const *modulepath,
                         size_t n_modulepath, struct diag *d)
{
        _cleanup_free_ char *parent = path_dirname(c->dir);
        _cleanup_free_ char *base = xstrdup(path_basename(c->dir));
        _cleanup_free_ char *tmpl = NULL;
        _cleanup_free_ char *ts_tmp = NULL, *ts_dir = NULL, *ts_base = NULL, *ending = NULL;
        _cleanup_strbuf_ struct strbuf mp = STRBUF_INIT, ts = STRBUF_INIT;
        _cleanup_close_ int cachefd = -1, parentfd = -1, tmpfd = -1, tsfd = -1;
        char tmpname[NAME_MAX + 1];
        struct child ch = { 0 };
        char *argv[8];
        DIR *dir;
        struct dirent *de;
        int r;

        for (size_t i = 0; i < n_modulepath; i++)
                strbuf_addf(&mp, "%s%s", i ? ":" : "", modulepath[i]);
        /* Every directory by descriptor, none through a symlink another
         * user could have planted; every file made O_EXCL in a directory
         * of our own, or renamed over its name (util-write.h). */
        r = dir_open_trusted(c->dir, DIR_MODE_DEFAULT, &cachefd, d);
        if (r < 0)
                return r;
        r = dir_open_trusted(parent, 0, &parentfd, d);
        if (r < 0)
                return r;
        r = make_temp_dir(parentfd, base, tmpname, &tmpfd);
        if (r < 0)
                return diag_errorf(d, r, "cannot make a temporary directory beside '%s': %s", c->dir,
                                   strerror(-r));
        tmpl = path_join(parent, tmpname);
        ts_tmp = path_join(tmpl, "timestamp");
        argv[0] = (char *)tool;
        argv[1] = (char *)"-d";
        argv[2] = tmpl;
        argv[3] = (char *)"-t";
        argv[4] = ts_tmp;
        argv[5] = mp.buf;
        argv[6] = NULL;
        r = process_run(tool, argv, NULL, NULL, REBUILD_TIMEOUT, &ch);
        if (r < 0) {
                remove_dir_at(parentfd, tmpname);
                return diag_errorf(d, r, "cannot run '%s': %s", tool, strerror(-r));
        }
        if (!child_succeeded(&ch)) {
                /* Its last words. */
                size_t skip = ch.err.len > 1000 ? ch.err.len - 1000 : 0;
                _cleanup_free_ char *err = xstrndup(ch.err.buf + skip, ch.err.len - skip);
                size_t n = strlen(err);

                while (n && (err[n - 1] == '\n' || err[n - 1] == ' '))
                        err[--n] = '\0';

                ending = ch.exec_errno ? xasprintf("cannot start it: %s", strerror(ch.exec_errno)) : child_ending(&ch);
                for (char *q = err; *q; q++)
                        if ((unsigned char)*q < 0x20 && *q != '\n')
                                *q = '?';
                r = diag_errorf(d, -EIO, "the spider cache '%s' was not rebuilt: '%s' %s%s%s", c->dir, tool, ending,
                                *err ? ": " : "", err);
                child_release(&ch);
                remove_dir_at(parentfd, tmpname);
                return r;
        }
        child_release(&ch);
        /* The cache files, each readable by users and put in place by one
         * rename into the directory opened above, then the timestamp. */
        r = fcntl(tmpfd, F_DUPFD_CLOEXEC, 3);
        dir = r >= 0 ? fdopendir(r) : NULL;
        if (!dir) {
                r = diag_errorf(d, -errno, "cannot read '%s': %s", tmpl, strerror(errno));
                remove_dir_at(parentfd, tmpname);
                return r;
        }
        while ((de = readdir(dir))) {
                if (de->d_name[0] == '.' || streq(de->d_name, "timestamp") || strstr(de->d_name, ".old."))
                        continue;
                r = chmod_made(tmpfd, de->d_name, FILE_MODE_DEFAULT);
                if (r == -EINVAL)
                        continue;
                if (r >= 0 && renameat(tmpfd, de->d_name, cachefd, de->d_name) < 0)
                        r = -errno;
                if (r < 0) {
                        _cleanup_free_ char *to = path_join(c->dir, de->d_name);
                        r = diag_errorf(d, r, "cannot put '%s' in place: %s", to, strerror(-r));
                        closedir(dir);
                        remove_dir_at(parentfd, tmpname);
                        return r;
                }
        }
        closedir(dir);
        ts_dir = path_dirname(c->timestamp);
        ts_base = xstrdup(path_basename(c->timestamp));
        r = dir_open_trusted(ts_dir, DIR_MODE_DEFAULT, &tsfd, d);
        if (r < 0) {
                remove_dir_at(parentfd, tmpname);
                return r;
        }
        /* The tool's timestamp, renamed over the old one; on another file
         * system than the cache, the same bytes written there anew (a
         * random name made O_EXCL, renamed over it: nothing anyone put at
         * a name there is opened). */
        r = chmod_made(tmpfd, "timestamp", FILE_MODE_DEFAULT);
        if (r < 0 || renameat(tmpfd, "timestamp", tsfd, ts_base) < 0) {
                if (r == 0)
                        (void)strbuf_read_fileat(&ts, tmpfd, "timestamp", 1 << 16);
                r = write_atomic(tsfd, ts_base, ts.buf, ts.len, FILE_MODE_DEFAULT);
        } else
                r = sync_dir(tsfd);
        remove_dir_at(parentfd, tmpname);
        if (r < 0)
                return diag_errorf(d, r, "the spider cache is in '%s', but its timestamp '%s' could not be "
                                   "written: %s", c->dir, c->timestamp, strerror(-r));
        return 0;
}

/* ---- what the spider may evaluate ---- */

enum {
        TRUST_MAX_DEPTH = 32,
        TRUST_MAX_ENTRIES = 200000,
};

/* Why st is one another user than root and the caller can change, or NULL. */
static char *foreign_stat(const struct stat *st)
{
        if (st->st_uid != 0 && st->st_uid != geteuid())
                return xasprintf("owned by uid %u", (unsigned)st->st_uid);
        if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_IWGRP | S_IWOTH)))
                return xasprintf("writable by %s (mode %04o)", st->st_mode & S_IWOTH ? "others" : "its group",
                                 (unsigned)(st->st_mode & 07777));
        return NULL;
}

/* The first entry below the directory dirfd (named path) that is foreign,
 * as Lmod's spider walks it: symlinks followed, to files and directories. */
static char *foreign_below(int dirfd, const char *path, unsigned depth, size_t *budget)
{
        int fd = dup(dirfd);
        DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *de;
        char *why = NULL;

        if (!dir) {
                if (fd >= 0)
                        close(fd);
                return xasprintf("'%s' cannot be read: %s", path, strerror(errno));
        }
        while (!why && (de = readdir(dir))) {
                _cleanup_free_ char *child = NULL, *bad = NULL;
                struct stat st;
                int sub;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                child = path_join(path, de->d_name);
                if (*budget == 0) {
                        why = xasprintf("'%s' holds more than %d entries, more than cudamod checks", path,
                                        TRUST_MAX_ENTRIES);
                        break;
                }
                (*budget)--;
                /* A dangling link, or gone: the spider cannot read it either. */
                if (fstatat(dirfd, de->d_name, &st, 0) < 0)
                        continue;
                if ((bad = foreign_stat(&st))) {
                        why = xasprintf("'%s' is %s", child, bad);
                        break;
                }
                if (!S_ISDIR(st.st_mode))
                        continue;
                if (depth >= TRUST_MAX_DEPTH) {
                        why = xasprintf("'%s' is more than %d levels deep (a symlink loop?)", child,
                                        TRUST_MAX_DEPTH);
                        break;
                }
                sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOCTTY | O_CLOEXEC);
                if (sub < 0)
                        continue;
                why = foreign_below(sub, child, depth + 1, budget);
                close(sub);
        }
        closedir(dir);
        return why;
}

char *spider_cache_foreign(const char *dir)
{
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOCTTY | O_CLOEXEC);
        size_t budget = TRUST_MAX_ENTRIES;
        struct stat st;
        char *bad;

        /* Missing or not a directory: the spider reads nothing there. */
        if (fd < 0 || fstat(fd, &st) < 0)
                return NULL;
        if ((bad = foreign_stat(&st))) {
                char *why = xasprintf("'%s' is %s", dir, bad);
                free(bad);
                return why;
        }
        return foreign_below(fd, dir, 0, &budget);
}
