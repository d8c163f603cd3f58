/* write.c: put a generated modulefile tree on disk, safely (see write.h).
 *
 * A run has three phases, all under the lock: plan (read what is on disk
 * and the index, decide a status per file, touch nothing), report (diffs
 * for dry_run), apply (write, prune, remove emptied directories, rewrite
 * the index). Every file below the output directory is reached through
 * directory descriptors opened with O_NOFOLLOW, so a symlink planted in the
 * tree can never redirect a write or a removal outside it. The output
 * directory and its lock are in write-outdir.c, reading and writing its
 * files in write-atomic.c, the index in write-index.c, the diffs in
 * write-diff.c, the names a file may take in write-name.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <sys/stat.h>

#include "strbuf.h"
#include "util-write.h"
#include "write.h"
#include "write-atomic.h"
#include "write-diff.h"
#include "write-index.h"
#include "write-name.h"
#include "write-outdir.h"
#include "banned.h"

static const char *const status_names[_FILE_STATUS_MAX] = {
        [FILE_CREATED] = "created",
        [FILE_UPDATED] = "updated",
        [FILE_UNCHANGED] = "unchanged",
        [FILE_PRUNED] = "pruned",
        [FILE_STALE] = "stale",
        [FILE_SKIPPED_EDITED] = "edited",
        [FILE_SKIPPED_FOREIGN] = "foreign",
        [FILE_HELD] = "held",
};

const char *file_status_to_string(enum file_status s)
{
        if ((unsigned)s >= _FILE_STATUS_MAX)
                return NULL;
        return status_names[s];
}

static int cmp_gen_ptr(const void *x, const void *y)
{
        const struct gen_file *const *a = x, *const *b = y;

        return strcmp((*a)->path, (*b)->path);
}

static int cmp_str_gen(const void *key, const void *elem)
{
        const struct gen_file *const *g = elem;

        return strcmp(key, (*g)->path);
}

/* Every path valid, none twice, none a directory of another. */
static int validate_files(const struct gen_file *files, size_t n, struct diag *d)
{
        _cleanup_free_ const struct gen_file **sorted = NULL;

        for (size_t i = 0; i < n; i++) {
                const char *why = gen_path_problem(files[i].path);
                if (why)
                        return diag_errorf(d, -EINVAL, "invalid output path '%s': %s",
                                           files[i].path ? files[i].path : "(null)", why);
                if (!files[i].content && files[i].len > 0)
                        return diag_errorf(d, -EINVAL, "no content for output path '%s'", files[i].path);
        }
        if (n == 0)
                return 0;
        sorted = xcalloc(n, sizeof(*sorted));
        for (size_t i = 0; i < n; i++)
                sorted[i] = &files[i];
        qsort(sorted, n, sizeof(*sorted), cmp_gen_ptr);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *p = xstrdup(sorted[i]->path);

                if (i > 0 && streq(sorted[i - 1]->path, p))
                        return diag_errorf(d, -EINVAL, "duplicate output path '%s'", p);
                for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
                        const struct gen_file **hit;
                        *s = '\0';
                        hit = bsearch(p, sorted, n, sizeof(*sorted), cmp_str_gen);
                        if (hit)
                                return diag_errorf(d, -EINVAL,
                                                   "output path '%s' is also a directory of '%s'", p,
                                                   sorted[i]->path);
                        *s = '/';
                }
        }
        return 0;
}

/* ---- plan and apply ---- */

static void add_parent_dir(struct strv *dirs, const char *rel)
{
        const char *slash = strrchr(rel, '/');

        if (slash)
                strv_push(dirs, xstrndup(rel, (size_t)(slash - rel)));
}

struct action {
        const char *path;          /* borrowed from the gen_file or the index */
        const struct gen_file *gen; /* NULL for a file only in the index */
        const char *module;        /* borrowed */
        enum file_status status;
        enum current current;
        struct strbuf content;     /* what is there now (CURRENT_FILE) */
        char sha[65];              /* of the new content */
        bool write;                /* create or replace it */
        bool remove;               /* prune it */
        bool unindex;              /* drop it from the index */
        const char *held_by;       /* FILE_HELD: borrowed from o->unseen */
};

struct actions {
        struct action *actions;
        size_t n;
};

static void actions_release(struct actions *p)
{
        for (size_t i = 0; i < p->n; i++)
                strbuf_release(&p->actions[i].content);
        free(p->actions);
        *p = (struct actions){ 0 };
}

static int cmp_action(const void *x, const void *y)
{
        const struct action *a = x, *b = y;

        return strcmp(a->path, b->path);
}

/* Whether a and b are the same path or one lies below the other. */
static bool path_related(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;

        if (strncmp(a, b, n) != 0)
                return false;
        return la == lb || (la < lb ? b[n] == '/' || (n > 0 && a[n - 1] == '/')
                                    : a[n] == '/' || (n > 0 && b[n - 1] == '/'));
}

/* The place the scan could not read that the install at realpath lies
 * at, below or around, or NULL: it was read whole. */
static const char *install_unseen(const struct write_options *o, const char *install)
{
        if (!install)
                return NULL;
        for (size_t i = 0; i < o->n_unseen; i++)
                if (path_related(o->unseen[i], install))
                        return o->unseen[i];
        return NULL;
}

static bool same_dir(const char *a, const char *b)
{
        size_t n = parent_len(a);

        return n == parent_len(b) && strncmp(a, b, n) == 0;
}

/* The modulercs beside a module whose install was not read whole are
 * held: they name the default, and the run did not see one candidate. */
static void hold_modulercs(struct actions *p, const struct strv *held_dirs, const struct strv *held_by,
                           const struct write_options *o)
{
        for (size_t i = 0; i < p->n; i++) {
                struct action *a = &p->actions[i];

                if (a->module || !a->gen || a->status != FILE_UPDATED)
                        continue;
                for (size_t k = 0; k < held_dirs->len; k++)
                        if (same_dir(held_dirs->items[k], a->path)) {
                                a->status = FILE_HELD;
                                a->write = false;
                                /* o's copy: held_by goes with the plan. */
                                for (size_t u = 0; u < o->n_unseen; u++)
                                        if (streq(o->unseen[u], held_by->items[k]))
                                                a->held_by = o->unseen[u];
                                break;
                        }
        }
}

/* The modules the index lists (files with a module; the modulercs are not). */
static size_t index_modules(json_t *old)
{
        const char *key;
        json_t *v;
        size_t n = 0;

        json_object_foreach(old, key, v)
                if (json_string_value(json_object_get(v, "module")))
                        n++;
        return n;
}

/* Decide each file's fate from what is on disk and in the old index,
 * touching nothing: the generated files, then the index entries no longer
 * generated. */
static int actions_plan(const struct gen_file *files, size_t n_files, json_t *old, int outfd,
                      const struct write_options *o, struct actions *p, struct diag *d)
{
        /* A file held or stale for a place not read, and that place. */
        _cleanup_(strv_release) struct strv held_dirs = { 0 }, held_by = { 0 };
        size_t n_modules = index_modules(old), n_pruned = 0;
        const char *key;
        json_t *v;
        int r;

        p->actions = xcalloc(n_files + json_object_size(old) + 1, sizeof(*p->actions));
        for (size_t i = 0; i < n_files; i++) {
                const struct gen_file *g = &files[i];
                struct action *a = &p->actions[p->n++];
                const char *old_sha = entry_sha(old, g->path);

                *a = (struct action){ .path = g->path, .gen = g, .module = g->module,
                                      .content = STRBUF_INIT, .current = CURRENT_ABSENT };
                sha256_hex(g->content, g->len, a->sha);
                if (outfd >= 0) {
                        r = read_current(outfd, o->outdir, g->path, &a->current, &a->content, d);
                        if (r < 0)
                                return r;
                }
                if (a->current == CURRENT_ABSENT) {
                        a->status = FILE_CREATED;
                        a->write = true;
                } else if (a->current == CURRENT_OTHER) {
                        a->status = FILE_SKIPPED_FOREIGN;
                } else if (a->content.len == g->len &&
                           (g->len == 0 || memcmp(a->content.buf, g->content, g->len) == 0)) {
                        /* Also adopts a file an interrupted run wrote. */
                        a->status = FILE_UNCHANGED;
                } else if (!old_sha) {
                        a->status = FILE_SKIPPED_FOREIGN;
                } else {
                        char cur[65];
                        sha256_hex(a->content.buf, a->content.len, cur);
                        if (streq(cur, old_sha) || o->force) {
                                a->status = FILE_UPDATED;
                                a->write = true;
                        } else
                                a->status = FILE_SKIPPED_EDITED;
                }
                if (a->status == FILE_UPDATED && (a->held_by = install_unseen(o, g->install))) {
                        a->status = FILE_HELD;
                        a->write = false;
                        strv_add(&held_dirs, g->path);
                        strv_add(&held_by, a->held_by);
                }
        }
        /* Sorted, so that the index entries still generated are found. */
        qsort(p->actions, p->n, sizeof(*p->actions), cmp_action);
        json_object_foreach(old, key, v) {
                struct action *a, probe = { .path = key };
                const char *unseen;

                if (bsearch(&probe, p->actions, n_files, sizeof(*p->actions), cmp_action))
                        continue;
                a = &p->actions[p->n++];
                *a = (struct action){ .path = key, .module = json_string_value(json_object_get(v, "module")),
                                      .content = STRBUF_INIT, .status = FILE_STALE };
                /* Not generated because not seen: kept, whatever prune says. */
                unseen = install_unseen(o, json_string_value(json_object_get(v, "install")));
                if (unseen) {
                        strv_add(&held_dirs, key);
                        strv_add(&held_by, unseen);
                        continue;
                }
                if (!o->prune)
                        continue;
                r = read_current(outfd, o->outdir, key, &a->current, &a->content, d);
                if (r < 0)
                        return r;
                if (a->current == CURRENT_ABSENT) {
                        a->status = FILE_PRUNED;
                        a->unindex = true;
                } else if (a->current == CURRENT_OTHER) {
                        /* Replaced by something cudamod did not write. */
                        a->status = FILE_SKIPPED_FOREIGN;
                        a->unindex = true;
                } else {
                        char cur[65];
                        sha256_hex(a->content.buf, a->content.len, cur);
                        if (streq(cur, json_string_value(json_object_get(v, "sha256"))) || o->force) {
                                a->status = FILE_PRUNED;
                                a->remove = true;
                                a->unindex = true;
                        } else
                                a->status = FILE_SKIPPED_EDITED;
                }
                if (a->status == FILE_PRUNED && a->module)
                        n_pruned++;
        }
        qsort(p->actions, p->n, sizeof(*p->actions), cmp_action);
        hold_modulercs(p, &held_dirs, &held_by, o);
        /* Most of a tree gone at once is more often a scan that missed a
         * mount, or a wrong root, than a decommissioning. */
        if (n_pruned * 2 > n_modules && !o->force)
                return diag_errorf(d, -E2BIG,
                                   "not pruning: %zu of the %zu modules in '%s' would be removed, more "
                                   "than half (a missing mount or a wrong root looks like that); "
                                   "--force prunes them", n_pruned, n_modules, o->outdir);
        return 0;
}

/* dry_run: a diff per file the run would create, update or prune. */
static void actions_diff(const struct actions *p, FILE *out)
{
        struct strbuf sb = STRBUF_INIT;

        for (size_t i = 0; i < p->n; i++) {
                const struct action *a = &p->actions[i];
                _cleanup_free_ char *la = xasprintf("a/%s", a->path);
                _cleanup_free_ char *lb = xasprintf("b/%s", a->path);

                if (a->status == FILE_CREATED)
                        unified_diff("", 0, a->gen->content, a->gen->len, "/dev/null", lb, &sb);
                else if (a->status == FILE_UPDATED)
                        unified_diff(a->content.buf, a->content.len, a->gen->content, a->gen->len, la, lb, &sb);
                else if (a->status == FILE_PRUNED && a->current == CURRENT_FILE)
                        unified_diff(a->content.buf, a->content.len, "", 0, la, "/dev/null", &sb);
        }
        if (out && sb.len > 0)
                fwrite(sb.buf, 1, sb.len, out);
        strbuf_release(&sb);
}

/* outdir itself as "." in messages that name directories below it. */
static const char *dir_label(const char *reldir)
{
        return *reldir ? reldir : ".";
}

/* 1 when the directory name in dirfd holds anything, 0 when it is empty,
 * a negative errno when it cannot be read. */
static int dir_has_entries(int dirfd, const char *name)
{
        int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct dirent *de;
        DIR *dir;
        int r = 0;

        if (fd < 0)
                return -errno;
        dir = fdopendir(fd);
        if (!dir) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((de = readdir(dir)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..")) {
                        r = 1;
                        break;
                }
        closedir(dir);
        return r;
}

/* Remove the directories that held pruned files, deepest first, when they
 * are empty now (never the output directory). One still holding files is
 * kept; any other failure is reported (the first; the rest are tried). */
static int remove_empty_dirs(int outfd, const char *outdir, struct strv *dirs, struct diag *d)
{
        struct strv all = { 0 };
        int r = 0;

        for (size_t i = 0; i < dirs->len; i++)
                for (char *p = xstrdup(dirs->items[i]); p;) {
                        char *slash = strrchr(p, '/');
                        strv_add(&all, p);
                        if (slash)
                                *slash = '\0';
                        else {
                                free(p);
                                p = NULL;
                        }
                }
        strv_sort_uniq(&all);
        for (size_t i = all.len; i-- > 0;) {
                _cleanup_close_ int pfd = -1;
                const char *dir = all.items[i];
                int k;

                k = open_parent(outfd, outdir, dir, 0, &pfd, r == 0 ? d : NULL);
                if (k == -ENOENT)
                        continue;
                if (k < 0) {
                        if (r == 0)
                                r = k;
                        continue;
                }
                if (unlinkat(pfd, path_basename(dir), AT_REMOVEDIR) < 0) {
                        int err = errno;
                        /* The permission is checked before the emptiness:
                         * a directory that holds files is not an error. */
                        if (err != ENOTEMPTY && err != EEXIST && err != ENOENT && r == 0 &&
                            dir_has_entries(pfd, path_basename(dir)) != 1)
                                r = diag_set(d, -err, outdir, 0, 0, "cannot remove directory '%s': %s", dir,
                                             strerror(err));
                        continue;
                }
                k = sync_dir(pfd);
                if (k < 0 && r == 0) {
                        _cleanup_free_ char *parent = path_dirname(dir);
                        r = diag_set(d, k, outdir, 0, 0, "cannot sync directory '%s' after removing '%s': %s",
                                     dir_label(streq(parent, ".") ? "" : parent), dir, strerror(-k));
                }
        }
        strv_release(&all);
        return r;
}

static void index_action(json_t *index, const struct action *a)
{
        if (a->status == FILE_CREATED || a->status == FILE_UPDATED || a->status == FILE_UNCHANGED)
                index_set(index, a->gen, a->sha);
        else if (a->unindex)
                json_check(json_object_del(index, a->path));
}

/* Prune one file, and drop it from the index once it is gone; its
 * directory is remembered in emptied. */
static int remove_one(int outfd, const char *outdir, const struct action *a, json_t *index,
                      struct strv *emptied, struct diag *d)
{
        _cleanup_close_ int dfd = -1;
        int r;

        r = open_parent(outfd, outdir, a->path, 0, &dfd, d);
        if (r == -ENOENT) {
                index_action(index, a);
                return 0;
        }
        if (r < 0)
                return r;
        if (unlinkat(dfd, path_basename(a->path), 0) < 0 && errno != ENOENT)
                return diag_set(d, -errno, outdir, 0, 0, "cannot remove '%s': %s", a->path,
                                strerror(errno));
        index_action(index, a);
        add_parent_dir(emptied, a->path);
        r = sync_dir(dfd);
        if (r < 0) {
                _cleanup_free_ char *dir = xstrndup(a->path, parent_len(a->path));
                return diag_set(d, r, outdir, 0, 0, "cannot sync directory '%s' after removing '%s': %s",
                                dir_label(dir), a->path, strerror(-r));
        }
        return 0;
}

/* Sync the cached directory once renames into it are done. */
static int parent_sync(const struct parent_cache *c, const char *outdir, struct diag *d)
{
        int r = sync_dir(c->fd);

        if (r < 0)
                return diag_set(d, r, outdir, 0, 0, "cannot sync directory '%s': %s", dir_label(c->dir),
                                strerror(-r));
        return 0;
}

/* The directory of a staged file, opened again for its sync or rename:
 * it exists unless someone removed it since (open_dir says nothing then). */
static int staged_parent_get(struct parent_cache *c, int outfd, const char *outdir, const char *rel,
                             struct diag *d)
{
        int r = parent_get(c, outfd, outdir, rel, 0, d);

        if (r == -ENOENT) {
                _cleanup_free_ char *dir = xstrndup(rel, parent_len(rel));
                return diag_set(d, r, outdir, 0, 0, "cannot write '%s': its directory '%s' went away: %s", rel,
                                dir_label(dir), strerror(-r));
        }
        return r;
}

static int interrupted_error(struct diag *d)
{
        return diag_errorf(d, -EINTR, "interrupted");
}

/* Carry out the plan in three phases, so that a tree of thousands of files
 * costs a few syncs, not two per file:
 *   1. every new content goes to a temporary file beside its target;
 *   2. one syncfs makes them all durable (an fsync each where syncfs fails:
 *      it also reports errors of other files on the filesystem);
 *   3. each is renamed over its target, and each directory synced once.
 * A kill at any point leaves every target old or new (temporary files are
 * removed by the next run). On a failure or when interrupted (checked
 * between two files) nothing more is put in place and the temporary files
 * are removed. The index is updated entry by entry, as each change is made
 * (and at once for the entries that need no change on disk), so an index
 * written after a failure describes what is on disk. */
static int actions_apply(const struct actions *p, int outfd, const struct write_options *o,
                         mode_t file_mode, json_t *index, struct diag *d)
{
        const char *outdir = o->outdir;
        char (*tmp)[NAME_MAX + 1] = xcalloc(p->n + 1, sizeof(*tmp));
        struct parent_cache pc = PARENT_CACHE_INIT;
        struct strv emptied = { 0 };
        size_t staged = 0;
        bool renamed = false; /* into pc's directory since it was last synced */
        int r = 0, dfd, k;

        for (size_t i = 0; i < p->n && r == 0; i++) {
                const struct action *a = &p->actions[i];

                if (!a->write)
                        continue;
                if (write_interrupted(o)) {
                        r = interrupted_error(d);
                        break;
                }
                r = dfd = parent_get(&pc, outfd, outdir, a->path, dir_mode_for(file_mode), d);
                if (r < 0)
                        break;
                r = write_temp(dfd, path_basename(a->path), a->gen->content, a->gen->len, file_mode, tmp[i]);
                if (r < 0)
                        r = diag_set(d, r, outdir, 0, 0, "cannot write '%s': %s", a->path, strerror(-r));
                else
                        staged++;
        }
        if (r == 0 && staged > 0 && syncfs(outfd) < 0) {
                for (size_t i = 0; i < p->n && r == 0; i++) {
                        _cleanup_close_ int fd = -1;

                        if (!tmp[i][0])
                                continue;
                        if (write_interrupted(o)) {
                                r = interrupted_error(d);
                                break;
                        }
                        r = dfd = staged_parent_get(&pc, outfd, outdir, p->actions[i].path, d);
                        if (r < 0)
                                break;
                        r = 0;
                        fd = openat(dfd, tmp[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
                        if (fd < 0 || fsync(fd) < 0)
                                r = diag_set(d, -errno, outdir, 0, 0, "cannot sync '%s': %s",
                                             p->actions[i].path, strerror(errno));
                }
        }
        if (r == 0 && write_interrupted(o))
                r = interrupted_error(d);
        for (size_t i = 0; i < p->n; i++) {
                const struct action *a = &p->actions[i];

                if (!a->write && !a->remove) {
                        /* Nothing changes on disk: unchanged, already gone,
                         * or not ours any more. */
                        index_action(index, a);
                        continue;
                }
                if (a->remove) {
                        if (r == 0 && write_interrupted(o))
                                r = interrupted_error(d);
                        if (r == 0)
                                r = remove_one(outfd, outdir, a, index, &emptied, d);
                        continue;
                }
                if (!tmp[i][0])
                        continue;
                if (r == 0 && write_interrupted(o))
                        r = interrupted_error(d);
                /* A directory is synced when the renames move on from it
                 * (and the last one at the end), not after each rename. */
                if (renamed && !parent_cached(&pc, a->path)) {
                        k = parent_sync(&pc, outdir, r == 0 ? d : NULL);
                        if (r == 0)
                                r = k;
                        renamed = false;
                }
                if (r < 0) {
                        /* Nothing of a failed run is put in place. */
                        dfd = parent_get(&pc, outfd, outdir, a->path, 0, NULL);
                        if (dfd >= 0)
                                (void)unlinkat(dfd, tmp[i], 0);
                        continue;
                }
                r = dfd = staged_parent_get(&pc, outfd, outdir, a->path, d);
                if (r < 0) {
                        /* Once more, only to remove the temporary file. */
                        dfd = parent_get(&pc, outfd, outdir, a->path, 0, NULL);
                        if (dfd >= 0)
                                (void)unlinkat(dfd, tmp[i], 0);
                        continue;
                }
                r = 0;
                if (renameat(dfd, tmp[i], dfd, path_basename(a->path)) < 0) {
                        int err = errno;
                        struct stat st;

                        /* The directory removed since its file was staged. */
                        if (err == ENOENT && fstat(dfd, &st) == 0 && st.st_nlink == 0) {
                                _cleanup_free_ char *dir = xstrndup(a->path, parent_len(a->path));
                                r = diag_set(d, -err, outdir, 0, 0, "cannot write '%s': its directory '%s' went "
                                             "away: %s", a->path, dir_label(dir), strerror(err));
                        } else
                                r = diag_set(d, -err, outdir, 0, 0, "cannot write '%s': %s", a->path, strerror(err));
                        (void)unlinkat(dfd, tmp[i], 0);
                        continue;
                }
                renamed = true;
                index_action(index, a);
        }
        if (renamed) {
                k = parent_sync(&pc, outdir, r == 0 ? d : NULL);
                if (r == 0)
                        r = k;
        }
        parent_cache_release(&pc);
        k = remove_empty_dirs(outfd, outdir, &emptied, r == 0 ? d : NULL);
        if (r == 0)
                r = k;
        strv_release(&emptied);
        free(tmp);
        return r;
}

int write_tree(const struct gen_file *files, size_t n_files, const struct write_options *o,
               struct write_result *ret, struct diag *d)
{
        bool readonly = o->dry_run || o->check;
        _cleanup_close_ int outfd = -1, lockfd = -1;
        _cleanup_(json_decrefp) json_t *old = NULL, *index = NULL;
        _cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;
        struct actions p = { 0 };
        struct write_result res = { 0 };
        mode_t file_mode = o->mode ? o->mode & 07777 : FILE_MODE_DEFAULT;
        int r;

        if (!o->outdir || !*o->outdir)
                return diag_errorf(d, -EINVAL, "no output directory");
        r = validate_files(files, n_files, d);
        if (r < 0)
                return r;
        r = open_outdir(o->outdir, readonly ? 0 : dir_mode_for(file_mode), &outfd, d);
        if (r < 0 && !(r == -ENOENT && readonly))
                return r;
        if (outfd >= 0) {
                r = take_lock(outfd, o, readonly, &lockfd, d);
                if (r < 0)
                        return r;
        }
        if (outfd >= 0 && !readonly) {
                struct strv dirs = { 0 };
                _cleanup_(json_decrefp) json_t *peek = NULL;
                const char *key;
                json_t *v;

                strv_add(&dirs, "");
                for (size_t i = 0; i < n_files; i++)
                        add_parent_dir(&dirs, files[i].path);
                /* The index is read properly below; a broken one is no
                 * reason to leave debris, nor its paths one to follow. */
                if (index_load(outfd, o->outdir, &peek, &raw, NULL) == 0)
                        json_object_foreach(peek, key, v)
                                add_parent_dir(&dirs, key);
                strbuf_reset(&raw);
                strv_sort_uniq(&dirs);
                for (size_t i = 0; i < dirs.len; i++)
                        remove_temp_files_in(outfd, o->outdir, dirs.items[i]);
                strv_release(&dirs);
        }
        if (outfd >= 0) {
                r = index_load(outfd, o->outdir, &old, &raw, d);
                if (r < 0)
                        return r;
                if (o->planned_index_sha) {
                        char sha[65] = "";

                        if (raw.len)
                                sha256_hex(raw.buf, raw.len, sha);
                        if (!streq(sha, o->planned_index_sha) && o->index_changed)
                                *o->index_changed = true;
                        if (!streq(sha, o->planned_index_sha))
                                return diag_errorf(d, -EAGAIN, "the index of '%s' changed while this run "
                                                   "was planning (another cudamod generate?); nothing "
                                                   "written, run it again", o->outdir);
                }
        } else {
                old = json_object();
                if (!old)
                        die_oom();
        }

        r = actions_plan(files, n_files, old, outfd, o, &p, d);
        if (r < 0)
                goto out;
        if (o->dry_run)
                actions_diff(&p, o->diff_out);
        if (!readonly) {
                index = json_copy(old);
                if (!index)
                        die_oom();
                r = actions_apply(&p, outfd, o, file_mode, index, d);
                if (r < 0) {
                        /* Keep the first error; the index is best effort now. */
                        struct diag ignored = DIAG_INIT;
                        write_index(outfd, o->outdir, index, &raw, file_mode, &ignored);
                        diag_release(&ignored);
                        goto out;
                }
                r = write_index(outfd, o->outdir, index, &raw, file_mode, d);
                if (r < 0)
                        goto out;
        }

        res.files = xcalloc(p.n + 1, sizeof(*res.files));
        res.n_files = p.n;
        for (size_t i = 0; i < p.n; i++) {
                const struct action *a = &p.actions[i];
                res.files[i] = (struct file_report){
                        .path = xstrdup(a->path),
                        .status = a->status,
                        .module = a->module ? xstrdup(a->module) : NULL,
                        .held_by = a->held_by ? xstrdup(a->held_by) : NULL,
                };
                res.count[a->status]++;
        }
        *ret = res;
        r = 0;
out:
        actions_release(&p);
        return r;
}

void write_result_release(struct write_result *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_files; i++) {
                free(r->files[i].path);
                free(r->files[i].module);
                free(r->files[i].held_by);
        }
        free(r->files);
        *r = (struct write_result){ 0 };
}
