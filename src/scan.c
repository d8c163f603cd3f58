/* scan.c: the walk, the detectors, and the finishing of their records. */
#include <fnmatch.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>

#include <fcntl.h>

#include "component-table.h"
#include "detect.h"
#include "component.h"
#include "metadata.h"
#include "scan.h"
#include "util-path.h"
#include "util.h"
#include "walk.h"
#include "banned.h"

const char *const scan_default_roots[] = {
        "/usr/local",
        "/opt",
        "/usr/lib/cuda",
        "/usr/lib/nvidia-cuda-toolkit",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/opt/nvidia/hpc_sdk",
        NULL,
};

/* What the threads of a parallel scan share. */
struct scan_shared {
        pthread_mutex_t lock;
        size_t n_dirs;
};

struct scan_ctx {
        struct scan_result *result;
        const struct scan_options *opts;
        struct scan_shared *shared;
};

static bool present_cached(const char *path, bool file)
{
        return file ? detect_is_file(AT_FDCWD, path) : detect_is_dir(AT_FDCWD, path);
}

/* What a package manager wrote in the visited directory (metadata.h),
 * given to the installs found in it: read once, when one is there. A
 * file there that cannot be read or parsed is left, said with -v. */
static void apply_metadata(const struct walk_dir *dir, struct scan_result *r, size_t before)
{
        struct metadata m = { 0 };
        struct diag d = DIAG_INIT;
        int r_read = 1;

        for (size_t i = before; i < r->installs.len; i++) {
                struct install *in = r->installs.items[i];

                if (!streq(in->realpath, dir->realpath))
                        continue;
                if (r_read > 0) {
                        r_read = metadata_read(dir->fd, dir->path, &m, &d);
                        if (r_read < 0 && r_read != -ENOENT) {
                                _cleanup_free_ char *msg = diag_format(&d);

                                strv_push(&r->verbose, xasprintf("%s: ignored", msg));
                        }
                }
                if (r_read == 0)
                        metadata_apply(in, &m);
        }
        if (r_read == 0)
                metadata_release(&m);
        diag_release(&d);
}

static int visit(const struct walk_dir *dir, struct walk_verdict *verdict, void *userdata)
{
        struct scan_ctx *ctx = userdata;
        struct scan_result *r = ctx->result;
        size_t before = r->installs.len;

        pthread_mutex_lock(&ctx->shared->lock);
        ctx->shared->n_dirs++;
        if (ctx->opts->progress)
                ctx->opts->progress(ctx->shared->n_dirs, dir->path, ctx->opts->userdata);
        pthread_mutex_unlock(&ctx->shared->lock);
        detect_cache_begin(dir);
        FOREACH_COMPONENT(c) {
                struct walk_verdict v = { 0 };

                c->detect(dir, &r->installs, &v);
                if (v.prune) {
                        verdict->prune = true;
                        if (v.keep)
                                verdict->keep = v.keep;
                }
        }
        apply_metadata(dir, r, before);
        /* What of a new install's paths is there, while what the visit read
         * of its directory can tell (most are below it): recorded again at
         * the end only for an install whose paths changed since. */
        for (size_t i = before; i < r->installs.len; i++) {
                struct install *in = r->installs.items[i];
                struct stat st;

                install_record_present_with(in, present_cached);
                /* Its library directory's identity, for
                 * merge_shared_lib_dirs: here, where the thread holds the
                 * directory, not from "/" at the end of the walk. */
                if (in->lib_dir && detect_stat(in->lib_dir, &st) == 0 && S_ISDIR(st.st_mode)) {
                        in->lib_id_path = xstrdup(in->lib_dir);
                        in->lib_dev = st.st_dev;
                        in->lib_ino = st.st_ino;
                }
        }
        detect_cache_end();
        return 0;
}

/* A symlink to an install's real path, or to one of its trees. */
static void alias(const char *realpath, const char *path, void *userdata)
{
        struct scan_result *r = ((struct scan_ctx *)userdata)->result;

        for (size_t i = 0; i < r->installs.len; i++) {
                struct install *in = r->installs.items[i];
                if ((streq(in->realpath, realpath) || strv_contains(&in->trees, realpath)) &&
                    !streq(in->prefix, path) && !strv_contains(&in->aliases, path))
                        strv_add(&in->aliases, path);
        }
}

static void warning(const char *message, void *userdata)
{
        struct scan_result *r = ((struct scan_ctx *)userdata)->result;

        /* Detectors looking at one directory may meet one problem each. */
        if (!strv_contains(&r->warnings, message))
                strv_add(&r->warnings, message);
}

static void verbose(const char *message, void *userdata)
{
        struct scan_result *r = ((struct scan_ctx *)userdata)->result;

        if (!strv_contains(&r->verbose, message))
                strv_add(&r->verbose, message);
}

void scan_result_add_gap(struct scan_result *r, const char *path, const char *realpath, const char *why)
{
        for (size_t i = 0; i < r->n_gaps; i++)
                if (streq(r->gaps[i].path, path))
                        return;
        r->gaps = xreallocarray(r->gaps, r->n_gaps + 1, sizeof(*r->gaps));
        r->gaps[r->n_gaps++] = (struct scan_gap){
                .path = xstrdup(path), .realpath = xstrdup(realpath ? realpath : path), .why = xstrdup(why),
        };
}

static void incomplete(const char *path, const char *realpath, const char *why, void *userdata)
{
        scan_result_add_gap(((struct scan_ctx *)userdata)->result, path, realpath, why);
}

/* A subtree's own result, for a thread of a parallel walk. */
static void *fork_ctx(void *userdata)
{
        struct scan_ctx *parent = userdata;
        struct scan_ctx *ctx = xcalloc(1, sizeof(*ctx));

        ctx->result = xcalloc(1, sizeof(*ctx->result));
        install_list_index_begin(&ctx->result->installs);
        ctx->opts = parent->opts;
        ctx->shared = parent->shared;
        return ctx;
}

/* A subtree's result added to the scan's, as if the walk had been serial:
 * installs through install_list_add (which merges one met twice), the
 * warnings and gaps not yet there, in order. */
static void join_ctx(void *userdata, void *forked)
{
        struct scan_ctx *ctx = userdata, *sub = forked;
        struct scan_result *r = ctx->result, *s = sub->result;

        for (size_t i = 0; i < s->installs.len; i++)
                install_list_add(&r->installs, s->installs.items[i]);
        s->installs.len = 0;
        for (size_t i = 0; i < s->warnings.len; i++)
                warning(s->warnings.items[i], ctx);
        for (size_t i = 0; i < s->verbose.len; i++)
                verbose(s->verbose.items[i], ctx);
        for (size_t i = 0; i < s->n_gaps; i++)
                incomplete(s->gaps[i].path, s->gaps[i].realpath, s->gaps[i].why, ctx);
        scan_result_release(s);
        free(s);
        free(sub);
}

/* A path some reader of a modulefile would take as code: no module can
 * carry it (plan.c leaves the install out; doc/guide.md "Threat model"). */
static void flag_unsafe_path(struct install *in)
{
        const char *paths[] = { in->prefix, in->realpath, in->lib_dir, in->include_dir, in->bin_dir };

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                const char *why = paths[i] ? written_value_problem(paths[i], WRITTEN_WORD, NULL) : NULL;

                if (why) {
                        install_add_problem(in, "unsafe-path", "'%s' holds %s: the install gets no module",
                                            paths[i], why);
                        return;
                }
        }
}

/* What no single directory could tell: a system install seen only through
 * its toolkit trees, and paths that JSON cannot carry byte for byte. */
static void finalize(struct install *in)
{
        if (!in->lib_dir && !install_has_problem(in, "missing-library"))
                install_add_problem(in, "missing-library", "no library directory found for '%s'",
                                    in->prefix);
        if (!in->version.count && !install_has_problem(in, "no-version"))
                install_add_problem(in, "no-version", "no file in '%s' tells the version",
                                    in->prefix);
        if (!utf8_valid(in->prefix) || !utf8_valid(in->realpath))
                install_add_problem(in, "non-utf8-path",
                                    "the path is not valid UTF-8; JSON shows each invalid byte as U+FFFD");
        flag_unsafe_path(in);
}

static bool path_matches(const struct strv *patterns, const char *path)
{
        _cleanup_free_ char *slashed = path ? xasprintf("%s/", path) : NULL;

        for (size_t i = 0; path && i < patterns->len; i++)
                if (fnmatch(patterns->items[i], path, 0) == 0 || fnmatch(patterns->items[i], slashed, 0) == 0)
                        return true;
        return false;
}

/* Whether the config leaves the install out (exclude.<component>): its
 * prefix, real path or an alias matches one of the component's patterns. */
static bool install_excluded(const struct scan_options *opts, const struct install *in)
{
        const struct strv *pats = opts->exclude_installs ? &opts->exclude_installs[in->component->index] : NULL;

        if (!pats || !pats->len)
                return false;
        if (path_matches(pats, in->prefix) || path_matches(pats, in->realpath))
                return true;
        for (size_t i = 0; i < in->aliases.len; i++)
                if (path_matches(pats, in->aliases.items[i]))
                        return true;
        return false;
}

static void drop_excluded(const struct scan_options *opts, struct install_list *l)
{
        size_t k = 0;

        for (size_t i = 0; i < l->len; i++) {
                if (install_excluded(opts, l->items[i]))
                        install_free(l->items[i]);
                else
                        l->items[k++] = l->items[i];
        }
        l->len = k;
}

/* One install reached as two prefixes: a directory whose include/ and lib/
 * are links into another install (HPC SDK comm_libs/nccl, a hand-made
 * "current" tree) is that install. Same component and same real library
 * directory: the prefix whose library directory is not reached through a
 * link stays, the other becomes its alias. */
struct lib_key {
        dev_t dev;
        ino_t ino;
        size_t component;
        size_t pos;
};

static int lib_key_cmp(const void *pa, const void *pb)
{
        const struct lib_key *a = pa, *b = pb;

        if (a->dev != b->dev)
                return a->dev < b->dev ? -1 : 1;
        if (a->ino != b->ino)
                return a->ino < b->ino ? -1 : 1;
        if (a->component != b->component)
                return a->component < b->component ? -1 : 1;
        return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static bool same_lib(const struct lib_key *a, const struct lib_key *b)
{
        return a->dev == b->dev && a->ino == b->ino && a->component == b->component;
}

static void merge_shared_lib_dirs(struct install_list *l)
{
        struct lib_key *keys = xcalloc(l->len ? l->len : 1, sizeof(*keys));
        size_t n_keys = 0, kept = 0;

        /* The same directory is the same device and inode: one stat an
         * install, a sort to bring those that share one together, and a
         * realpath only for them. */
        for (size_t i = 0; i < l->len; i++) {
                const struct install *in = l->items[i];
                struct stat st = { 0 };

                if (!in->lib_dir)
                        continue;
                if (in->lib_id_path && streq(in->lib_id_path, in->lib_dir)) {
                        st.st_dev = in->lib_dev;
                        st.st_ino = in->lib_ino;
                } else if (stat(in->lib_dir, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                keys[n_keys++] = (struct lib_key){ .dev = st.st_dev, .ino = st.st_ino,
                                                   .component = in->component->index, .pos = i };
        }
        if (n_keys > 1)
                qsort(keys, n_keys, sizeof(*keys), lib_key_cmp);
        for (size_t g = 0; g < n_keys;) {
                size_t end = g + 1;

                while (end < n_keys && same_lib(&keys[g], &keys[end]))
                        end++;
                /* Within the group, in list order, as a pairwise pass would. */
                for (size_t gi = g; gi < end; gi++) {
                        size_t i = keys[gi].pos;
                        struct install *a = l->items[i];

                        if (!a)
                                continue;
                        for (size_t gj = gi + 1; gj < end; gj++) {
                                size_t j = keys[gj].pos;
                                struct install *b = l->items[j];
                                struct install *keep, *drop;
                                _cleanup_free_ char *real_b = NULL;

                                if (!b)
                                        continue;
                                real_b = realpath(b->lib_dir, NULL);
                                /* Keep the one whose lib_dir is already canonical. */
                                if (real_b && streq(b->lib_dir, real_b)) {
                                        _cleanup_free_ char *real_a = realpath(a->lib_dir, NULL);

                                        if (real_a && !streq(a->lib_dir, real_a)) {
                                                keep = b;
                                                drop = a;
                                                l->items[i] = b;
                                        } else {
                                                keep = a;
                                                drop = b;
                                        }
                                } else {
                                        keep = a;
                                        drop = b;
                                }
                                l->items[j] = NULL;
                                if (!strv_contains(&keep->aliases, drop->prefix))
                                        strv_add(&keep->aliases, drop->prefix);
                                for (size_t k = 0; k < drop->aliases.len; k++)
                                        if (!strv_contains(&keep->aliases, drop->aliases.items[k]))
                                                strv_add(&keep->aliases, drop->aliases.items[k]);
                                install_free(drop);
                                a = keep;
                        }
                }
                g = end;
        }
        for (size_t i = 0; i < l->len; i++)
                if (l->items[i])
                        l->items[kept++] = l->items[i];
        l->len = kept;
        free(keys);
}

/* A field of /proc/self/mountinfo decoded in place: the kernel writes a
 * space, tab, newline and backslash as an octal escape (\040 for a space). */
static void mountinfo_unescape(char *s)
{
        char *o = s;

        for (; *s; s++)
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
                    s[3] <= '7') {
                        *o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
                        s += 3;
                } else
                        *o++ = *s;
        *o = '\0';
}

/* Whether the directory real (canonical) is a mount point: on another
 * device than its parent, or named as one in /proc/self/mountinfo (a bind
 * mount within one filesystem keeps the device). Anything that cannot
 * be told is not one. */
static bool mount_point(const char *real)
{
        _cleanup_free_ char *parent = NULL, *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        struct stat st, parent_st;
        size_t cap = 0;

        if (streq(real, "/"))
                return true;
        parent = path_dirname(real);
        if (stat(real, &st) < 0 || stat(parent, &parent_st) < 0)
                return false;
        if (st.st_dev != parent_st.st_dev)
                return true;
        f = fopen("/proc/self/mountinfo", "re");
        while (f && getline(&line, &cap, f) > 0) {
                /* "36 35 98:0 /mnt1 /mnt2 rw,noatime ...": the fifth field. */
                char *field = line;

                for (int i = 0; i < 4 && field; i++)
                        if ((field = strchr(field, ' ')))
                                field++;
                if (!field)
                        continue;
                field[strcspn(field, " \n")] = '\0';
                mountinfo_unescape(field);
                if (streq(field, real))
                        return true;
        }
        return false;
}

static int seen_entry(const char *name, unsigned char type, void *ctx)
{
        (void)name;
        (void)type;
        *(bool *)ctx = true;
        return 1;
}

/* Whether the directory path holds no entry (one that cannot be read is
 * not empty: the walk reports it). */
static bool empty_dir(const char *path)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
        bool any = false;

        return fd >= 0 && walk_read_fd(fd, 1, seen_entry, &any) == 0 && !any;
}

static bool must_be_mount(const struct scan_options *opts, const char *abs)
{
        for (size_t i = 0; opts->mounts && i < opts->mounts->len; i++) {
                _cleanup_free_ char *m = path_absolute(opts->mounts->items[i]);

                if (streq(m, abs))
                        return true;
        }
        return false;
}

/* The config's search marks root optional (matched as given or by
 * absolute path). */
static bool optional_root(const struct scan_options *opts, const char *root)
{
        _cleanup_free_ char *abs = path_absolute(root);

        for (size_t i = 0; opts->optional && i < opts->optional->len; i++) {
                _cleanup_free_ char *o = path_absolute(opts->optional->items[i]);

                if (streq(opts->optional->items[i], root) || streq(o, abs))
                        return true;
        }
        return false;
}

int scan_roots_check(const struct scan_options *so, struct diag *d)
{
        for (size_t i = 0; so->roots && i < so->n_roots; i++) {
                struct stat st;

                if (stat(so->roots[i], &st) == 0 || (errno != ENOENT && errno != ENOTDIR) ||
                    optional_root(so, so->roots[i]))
                        continue;
                return diag_errorf(d, -ENOENT, "root '%s' does not exist (a typo, or a filesystem not mounted?); "
                                   "where it may be absent, list it in the config's search as "
                                   "{path: %s, optional: true}",
                                   so->roots[i], so->roots[i]);
        }
        return 0;
}

/* The roots to walk, into walk: those marked a mount that are not one are
 * gaps instead (with a warning), and the empty ones are recorded. */
static void check_roots(const struct scan_options *opts, const char *const *roots, size_t n,
                        struct scan_result *r, const char **walk, size_t *ret_n)
{
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *abs = path_absolute(roots[i]);
                _cleanup_free_ char *real = realpath(abs, NULL);

                if (!real && (errno == ENOENT || errno == ENOTDIR) && optional_root(opts, roots[i])) {
                        strv_push(&r->verbose, xasprintf("'%s' does not exist: skipped (optional: true)", abs));
                        continue;
                }
                if (real && must_be_mount(opts, abs) && !mount_point(real)) {
                        _cleanup_free_ char *msg = xasprintf(
                                "'%s' is not a mount point, but the config's search says it is one "
                                "(mount: true): is its filesystem mounted? skipping", abs);

                        if (!strv_contains(&r->warnings, msg))
                                strv_add(&r->warnings, msg);
                        scan_result_add_gap(r, abs, real, "not a mount point (search: mount: true)");
                        continue;
                }
                if (real && empty_dir(real)) {
                        r->empty_roots = xreallocarray(r->empty_roots, r->n_empty_roots + 1,
                                                       sizeof(*r->empty_roots));
                        r->empty_roots[r->n_empty_roots++] = (struct scan_root){
                                .path = xstrdup(abs), .realpath = xstrdup(real),
                        };
                }
                walk[k++] = roots[i];
        }
        *ret_n = k;
}

int scan_run(const struct scan_options *opts, struct scan_result *ret, struct diag *d)
{
        struct scan_result r = { 0 };
        struct scan_shared shared = { .lock = PTHREAD_MUTEX_INITIALIZER };
        struct scan_ctx ctx = { .result = &r, .opts = opts, .shared = &shared };
        struct walk_options wo = {
                .max_depth = opts->max_depth,
                .exclude = opts->exclude,
                .warn_missing_roots = opts->roots != NULL,
                .jobs = opts->jobs,
        };
        static const struct walk_ops ops = {
                .visit = visit, .alias = alias, .warning = warning, .verbose = verbose, .incomplete = incomplete,
                .fork = fork_ctx, .join = join_ctx,
        };
        const char *const *roots = opts->roots ? opts->roots : scan_default_roots;
        size_t n = opts->roots ? opts->n_roots : ELEMENTSOF(scan_default_roots) - 1, n_walk;
        _cleanup_free_ const char **walk = xcalloc(n + 1, sizeof(*walk));
        int err;

        check_roots(opts, roots, n, &r, walk, &n_walk);
        install_list_index_begin(&r.installs);
        err = walk_roots(walk, n_walk, &wo, &ops, &ctx);
        install_list_index_end(&r.installs);
        pthread_mutex_destroy(&shared.lock);
        if (err < 0) {
                scan_result_release(&r);
                return diag_errorf(d, err, "scan failed: %s", strerror(-err));
        }
        merge_shared_lib_dirs(&r.installs);
        drop_excluded(opts, &r.installs);
        for (size_t i = 0; i < r.installs.len; i++) {
                struct install *in = r.installs.items[i];
                _cleanup_free_ char *key = install_present_key(in);

                finalize(in);
                if (!in->present_key || !streq(key, in->present_key))
                        install_record_present(in);
        }
        install_list_sort(&r.installs);
        *ret = r;
        return 0;
}

void scan_result_release(struct scan_result *r)
{
        install_list_release(&r->installs);
        strv_release(&r->warnings);
        strv_release(&r->verbose);
        for (size_t i = 0; i < r->n_gaps; i++) {
                free(r->gaps[i].path);
                free(r->gaps[i].realpath);
                free(r->gaps[i].why);
        }
        free(r->gaps);
        r->gaps = NULL;
        r->n_gaps = 0;
        for (size_t i = 0; i < r->n_empty_roots; i++) {
                free(r->empty_roots[i].path);
                free(r->empty_roots[i].realpath);
        }
        free(r->empty_roots);
        r->empty_roots = NULL;
        r->n_empty_roots = 0;
}
