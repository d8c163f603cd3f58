/* write-index.c: the output directory's index (.cudamod-index.json), the
 * record of every file cudamod wrote there (its sha256, install, module)
 * and of the last `cudamod validate`: loaded and checked with positions
 * in its errors, updated per file, and written back atomically only when
 * it changed. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <sys/stat.h>

#include "build-config.h"
#include "strbuf.h"
#include "util-path.h"
#include "util-write.h"
#include "util.h"
#include "write-atomic.h"
#include "write-index.h"
#include "write-name.h"
#include "write-outdir.h"
#include "banned.h"

#define INDEX_MAX ((size_t)64 * 1024 * 1024)

void json_check(int r)
{
        if (r < 0)
                die_oom();
}

static bool is_sha256_hex(const char *s)
{
        size_t n = 0;

        for (; s[n]; n++)
                if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
                        return false;
        return n == 64;
}

static bool optional_string(json_t *v)
{
        return !v || json_is_null(v) || json_is_string(v);
}

/* Line and column (1-based) of offset in buf. */
static void buf_position(const char *buf, size_t off, unsigned *line, unsigned *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < off; i++) {
                if (buf[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else
                        (*col)++;
        }
}

#define START_OVER "; remove it to start over (files identical to the generated ones are then adopted)"

/* The index's "files" object (a new reference; empty when there is no
 * index) and its raw bytes. */
int index_load(int outfd, const char *outdir, json_t **ret_files, struct strbuf *raw,
               struct diag *d)
{
        _cleanup_free_ char *path = path_join(outdir, INDEX_NAME);
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_close_ int fd = -1;
        json_error_t error;
        json_t *files, *v;
        const char *key, *nul;
        struct stat st;
        int r;

        fd = openat(outfd, INDEX_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT) {
                        *ret_files = json_object();
                        if (!*ret_files)
                                die_oom();
                        return 0;
                }
                return diag_set(d, -errno, path, 0, 0, "cannot read the index: %s%s", strerror(errno),
                                START_OVER);
        }
        if (fstat(fd, &st) < 0)
                return diag_set(d, -errno, path, 0, 0, "cannot stat the index: %s", strerror(errno));
        if (!S_ISREG(st.st_mode))
                return diag_set(d, -EBADMSG, path, 0, 0, "the index is not a regular file" START_OVER);
        if ((uint64_t)st.st_size > INDEX_MAX)
                return diag_set(d, -EFBIG, path, 0, 0, "the index is larger than 64 MiB (%jd bytes)" START_OVER,
                                (intmax_t)st.st_size);
        r = read_fd_upto(fd, raw, INDEX_MAX);
        if (r < 0)
                return diag_set(d, r, path, 0, 0, "cannot read the index: %s", strerror(-r));
        /* jansson skips a NUL between tokens; it has no place in the index. */
        nul = raw->len > 0 ? memchr(raw->buf, '\0', raw->len) : NULL;
        if (nul) {
                unsigned line, col;
                buf_position(raw->buf, (size_t)(nul - raw->buf), &line, &col);
                return diag_set(d, -EBADMSG, path, line, col, "corrupt index: NUL byte" START_OVER);
        }
        root = json_loadb(raw->buf, raw->len, JSON_REJECT_DUPLICATES, &error);
        if (!root)
                /* jansson gives column 0 before the first character of a line. */
                return diag_set(d, -EBADMSG, path, error.line > 0 ? (unsigned)error.line : 0,
                                error.line > 0 ? (error.column > 0 ? (unsigned)error.column : 1) : 0,
                                "corrupt index: %s" START_OVER, error.text);
        files = json_object_get(root, "files");
        if (!json_is_object(root) || !json_is_object(files))
                return diag_set(d, -EBADMSG, path, 0, 0,
                                "corrupt index: no \"files\" object" START_OVER);
        json_object_foreach(files, key, v) {
                const char *sha = json_string_value(json_object_get(v, "sha256"));
                const char *why = gen_path_problem(key);

                if (why)
                        return diag_set(d, -EBADMSG, path, 0, 0, "corrupt index: invalid path '%s': %s" START_OVER,
                                        key, why);
                if (!json_is_object(v) || !sha || !is_sha256_hex(sha) ||
                    !optional_string(json_object_get(v, "install")) ||
                    !optional_string(json_object_get(v, "module")) ||
                    !optional_string(json_object_get(v, "identity")) ||
                    !optional_string(json_object_get(v, "base")) ||
                    !optional_string(json_object_get(v, "toolkit")) ||
                    !optional_string(json_object_get(v, "kind")) ||
                    !optional_string(json_object_get(v, "cuda_arch")))
                        return diag_set(d, -EBADMSG, path, 0, 0, "corrupt index: malformed entry for '%s'" START_OVER,
                                        key);
        }
        *ret_files = json_incref(files);
        return 0;
}

const char *entry_sha(json_t *files, const char *rel)
{
        return json_string_value(json_object_get(json_object_get(files, rel), "sha256"));
}

static void set_string(json_t *obj, const char *key, const char *value)
{
        _cleanup_free_ char *clean = NULL;

        if (!value)
                return;
        /* The index is JSON: bytes that are not UTF-8 are shown as U+FFFD. */
        clean = utf8_sanitize(value);
        json_check(json_object_set_new(obj, key, json_string(clean)));
}

void index_set(json_t *files, const struct gen_file *g, const char *sha)
{
        json_t *e = json_object();

        if (!e)
                die_oom();
        json_check(json_object_set_new(e, "sha256", json_string(sha)));
        set_string(e, "install", g->install);
        set_string(e, "module", g->module);
        set_string(e, "identity", g->identity);
        set_string(e, "base", g->base);
        set_string(e, "toolkit", g->toolkit);
        set_string(e, "kind", g->kind);
        set_string(e, "cuda_arch", g->cuda_arch);
        json_check(json_object_set_new(files, g->path, e));
}

/* The index's bytes: sorted keys, 2-space indent, a final newline. */
/* The "validation" member of an index's raw bytes (a new reference), or
 * NULL: what `cudamod validate` recorded, kept across generate runs. */
static json_t *index_validation(const struct strbuf *raw)
{
        _cleanup_(json_decrefp) json_t *root = raw->len ? json_loadb(raw->buf, raw->len, 0, NULL) : NULL;
        json_t *v = json_object_get(root, "validation");

        return json_is_object(v) ? json_incref(v) : NULL;
}

static void index_dump(json_t *files, json_t *validation, struct strbuf *out)
{
        _cleanup_(json_decrefp) json_t *root = json_object();
        size_t n;

        if (!root)
                die_oom();
        json_check(json_object_set_new(root, "cudamod", json_string(CUDAMOD_VERSION)));
        json_check(json_object_set(root, "files", files));
        if (validation)
                json_check(json_object_set(root, "validation", validation));
        n = json_dumpb(root, NULL, 0, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (n == 0)
                die_oom();
        strbuf_grow(out, n + 1);
        if (json_dumpb(root, out->buf + out->len, n, JSON_INDENT(2) | JSON_SORT_KEYS) != n)
                die_oom();
        strbuf_setlen(out, out->len + n);
        strbuf_addch(out, '\n');
}

int write_index(int outfd, const char *outdir, json_t *files, const struct strbuf *old_raw,
                mode_t file_mode, struct diag *d)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        _cleanup_(json_decrefp) json_t *validation = index_validation(old_raw);
        int r;

        index_dump(files, validation, &sb);
        if (sb.len == old_raw->len && memcmp(sb.buf, old_raw->buf, sb.len) == 0)
                return 0;
        r = write_atomic(outfd, INDEX_NAME, sb.buf, sb.len, file_mode);
        if (r < 0) {
                _cleanup_free_ char *path = path_join(outdir, INDEX_NAME);
                return diag_errorf(d, r, "cannot write '%s': %s", path, strerror(-r));
        }
        return 0;
}

int write_index_validation(const char *outdir, json_t *validation, const struct write_options *o,
                           struct diag *d)
{
        _cleanup_close_ int outfd = -1, lockfd = -1;
        _cleanup_(json_decrefp) json_t *files = NULL;
        _cleanup_strbuf_ struct strbuf raw = STRBUF_INIT, sb = STRBUF_INIT;
        struct write_options lo = o ? *o : (struct write_options){ 0 };
        int r;

        lo.outdir = outdir;
        r = open_outdir(outdir, 0, &outfd, d);
        if (r < 0)
                return r;
        r = take_lock(outfd, &lo, false, &lockfd, d);
        if (r < 0)
                return r;
        r = index_load(outfd, outdir, &files, &raw, d);
        if (r < 0)
                return r;
        if (!raw.len)
                return diag_errorf(d, -ENOENT, "'%s' has no %s: not a directory cudamod generate wrote",
                                   outdir, INDEX_NAME);
        index_dump(files, validation, &sb);
        if (sb.len == raw.len && memcmp(sb.buf, raw.buf, sb.len) == 0)
                return 0;
        /* The mode generate gave it (the site's output_mode), unless o says. */
        if (!lo.mode) {
                struct stat st;

                lo.mode = fstatat(outfd, INDEX_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)
                                  ? (st.st_mode & 0666) | 0600
                                  : FILE_MODE_DEFAULT;
        }
        r = write_atomic(outfd, INDEX_NAME, sb.buf, sb.len, lo.mode & 07777);
        if (r < 0) {
                _cleanup_free_ char *path = path_join(outdir, INDEX_NAME);
                return diag_errorf(d, r, "cannot write '%s': %s", path, strerror(-r));
        }
        return 0;
}

int read_index_validation(const char *outdir, json_t **ret_validation, struct diag *d)
{
        _cleanup_close_ int outfd = -1;
        _cleanup_(json_decrefp) json_t *files = NULL;
        _cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;
        int r;

        r = open_outdir(outdir, 0, &outfd, d);
        if (r < 0)
                return r;
        r = index_load(outfd, outdir, &files, &raw, d);
        if (r < 0)
                return r;
        *ret_validation = index_validation(&raw);
        return 0;
}

static char *json_strdup(json_t *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(obj, key));

        return s ? xstrdup(s) : NULL;
}

static void index_name_release(struct index_name *n)
{
        free(n->dir);
        free(n->version);
        free(n->install);
        free(n->identity);
        free(n->base);
        free(n->module);
        free(n->toolkit);
        free(n->kind);
        free(n->cuda_arch);
}

/* Why one entry of the index cannot be trusted, or NULL (allocated). */
static char *index_name_problem(const char *key, const char *module, json_t *v)
{
        static const char *const fields[] = { "install", "identity", "base", "toolkit", "kind", "cuda_arch" };
        _cleanup_free_ char *parts = module ? xstrdup(module) : NULL;
        const char *why;

        if (!parts)
                return NULL;
        for (char *part = parts, *next; part; part = next) {
                next = strchr(part, '/');
                if (next)
                        *next++ = '\0';
                if (!module_version_valid(part))
                        return xasprintf("'%s': the module name '%s' is not made of letters, digits and . _ + - "
                                         "(a part starting with '.' or empty)", key, module);
        }
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                const char *s = json_string_value(json_object_get(v, fields[i]));

                if (s && (why = written_value_problem(s, i == 0 || i >= 3 ? WRITTEN_WORD : WRITTEN_TEXT, NULL)))
                        return xasprintf("'%s': its %s holds %s", key, fields[i], why);
        }
        return NULL;
}

int index_names_read(const char *outdir, struct index_names *ret, struct diag *d)
{
        _cleanup_close_ int outfd = -1;
        _cleanup_(json_decrefp) json_t *files = NULL;
        _cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;
        struct index_names n = { 0 };
        const char *key;
        json_t *v;
        int r;

        r = open_outdir(outdir, 0, &outfd, d);
        if (r == -ENOENT) {
                /* No tree yet: no names given. */
                *ret = n;
                return 0;
        }
        if (r < 0)
                return r;
        r = index_load(outfd, outdir, &files, &raw, d);
        if (r < 0)
                return r;
        if (raw.len)
                sha256_hex(raw.buf, raw.len, n.sha);
        n.items = xcalloc(json_object_size(files) + 1, sizeof(*n.items));
        json_object_foreach(files, key, v) {
                const char *module = json_string_value(json_object_get(v, "module"));
                const char *slash = module ? strrchr(module, '/') : NULL;
                const char *dir_end = strrchr(key, '/');

                n.ignored = index_name_problem(key, module, v);
                if (n.ignored) {
                        /* None is trusted: the names start over. */
                        for (size_t i = 0; i < n.n; i++)
                                index_name_release(&n.items[i]);
                        n.n = 0;
                        break;
                }
                if (!slash || !slash[1] || !dir_end)
                        continue;
                n.items[n.n++] = (struct index_name){
                        .dir = xstrndup(key, (size_t)(dir_end - key)),
                        .version = xstrdup(slash + 1),
                        .install = json_strdup(v, "install"),
                        .identity = json_strdup(v, "identity"),
                        .base = json_strdup(v, "base"),
                        .module = xstrdup(module),
                        .toolkit = json_strdup(v, "toolkit"),
                        .kind = json_strdup(v, "kind"),
                        .cuda_arch = json_strdup(v, "cuda_arch"),
                };
        }
        *ret = n;
        return 0;
}

void index_names_release(struct index_names *n)
{
        for (size_t i = 0; i < n->n; i++)
                index_name_release(&n->items[i]);
        free(n->items);
        free(n->ignored);
        *n = (struct index_names){ 0 };
}

/* The generated tree the modulepath belongs to: a directory of it, or one
 * above it (hierarchical: OUT/Core, or a core level of several parts,
 * naming.levels.core), that holds the index. */
char *index_outdir_of(const struct strv *mp)
{
        for (size_t i = 0; i < mp->len; i++) {
                _cleanup_free_ char *dir = xstrdup(mp->items[i]);

                for (unsigned up = 0; up < 8 && !streq(dir, "/") && !streq(dir, "."); up++) {
                        _cleanup_free_ char *index = path_join(dir, INDEX_NAME);
                        char *parent;

                        if (is_file_at(AT_FDCWD, index))
                                return TAKE_PTR(dir);
                        parent = path_dirname(dir);
                        free(dir);
                        dir = parent;
                }
        }
        return NULL;
}
