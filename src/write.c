/* write.c: put a generated modulefile tree on disk, safely (see write.h).
 *
 * A run has three phases, all under the lock: plan (read what is on disk
 * and the index, decide a status per file, touch nothing), report (diffs
 * for dry_run), apply (write, prune, remove emptied directories, rewrite
 * the index). Every file below the output directory is reached through
 * directory descriptors opened with O_NOFOLLOW, so a symlink planted in the
 * tree can never redirect a write or a removal outside it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <nettle/sha2.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "build-config.h"
#include "strbuf.h"
#include "write.h"
#include "banned.h"

#define INDEX_NAME ".cudamod-index.json"
#define LOCK_NAME ".cudamod.lock"
#define TMP_PREFIX ".cudamod-tmp."
#define INDEX_MAX ((size_t)64 * 1024 * 1024)
/* A file at a generated path is read to compare it with the new content;
 * cudamod writes nothing over 1 MiB (render.c), so a bigger one is not
 * what it wrote. */
#define CURRENT_MAX ((size_t)16 * 1024 * 1024)
#define DIFF_CONTEXT 3
/* Above this many cells in the LCS table (after the common prefix and
 * suffix are taken off) the middle is shown replaced as a whole. */
#define DIFF_MAX_CELLS ((size_t)4 * 1024 * 1024)

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

void sha256_hex(const void *data, size_t len, char ret[65])
{
        static const char hex[] = "0123456789abcdef";
        struct sha256_ctx ctx;
        uint8_t digest[SHA256_DIGEST_SIZE];

        sha256_init(&ctx);
        sha256_update(&ctx, len, data);
        sha256_digest(&ctx, sizeof(digest), digest);
        for (size_t i = 0; i < sizeof(digest); i++) {
                ret[2 * i] = hex[digest[i] >> 4];
                ret[2 * i + 1] = hex[digest[i] & 0xf];
        }
        ret[64] = '\0';
}

/* ---- unified diff ---- */

struct line {
        const char *s;
        size_t len; /* with its '\n', when it has one */
        uint32_t hash;
};

static size_t split_lines(const char *s, size_t len, struct line **ret)
{
        struct line *lines = NULL;
        size_t n = 0, alloc = 0, pos = 0;

        while (pos < len) {
                const char *nl = memchr(s + pos, '\n', len - pos);
                size_t end = nl ? (size_t)(nl - s) + 1 : len;
                uint32_t h = 2166136261u;

                for (size_t i = pos; i < end; i++)
                        h = (h ^ (unsigned char)s[i]) * 16777619u;
                if (n == alloc) {
                        alloc = alloc ? alloc * 2 : 64;
                        lines = xreallocarray(lines, alloc, sizeof(*lines));
                }
                lines[n++] = (struct line){ .s = s + pos, .len = end - pos, .hash = h };
                pos = end;
        }
        *ret = lines;
        return n;
}

static bool line_eq(const struct line *a, const struct line *b)
{
        return a->hash == b->hash && a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
}

/* Mark changed lines (ca for a, cb for b): those outside a longest common
 * subsequence, found by dynamic programming over what is left between the
 * common prefix and suffix; beyond DIFF_MAX_CELLS the whole middle. */
static void mark_changes(const struct line *a, size_t n, const struct line *b, size_t m, char *ca,
                         char *cb)
{
        size_t pre = 0, suf = 0, na, nb;

        while (pre < n && pre < m && line_eq(&a[pre], &b[pre]))
                pre++;
        while (suf < n - pre && suf < m - pre && line_eq(&a[n - 1 - suf], &b[m - 1 - suf]))
                suf++;
        na = n - pre - suf;
        nb = m - pre - suf;
        if (na > 0 && nb > 0 && na <= DIFF_MAX_CELLS / nb) {
                const struct line *x = a + pre, *y = b + pre;
                size_t w = nb + 1, i = 0, j = 0;
                /* min(na, nb) <= sqrt(DIFF_MAX_CELLS): the lengths fit. */
                uint16_t *L = xcalloc((na + 1) * w, sizeof(uint16_t));

                for (size_t ii = na; ii-- > 0;)
                        for (size_t jj = nb; jj-- > 0;) {
                                uint16_t v;
                                if (line_eq(&x[ii], &y[jj]))
                                        v = (uint16_t)(L[(ii + 1) * w + jj + 1] + 1);
                                else {
                                        uint16_t down = L[(ii + 1) * w + jj], right = L[ii * w + jj + 1];
                                        v = down > right ? down : right;
                                }
                                L[ii * w + jj] = v;
                        }
                while (i < na && j < nb) {
                        if (line_eq(&x[i], &y[j])) {
                                i++;
                                j++;
                        } else if (L[(i + 1) * w + j] >= L[i * w + j + 1])
                                ca[pre + i++] = 1;
                        else
                                cb[pre + j++] = 1;
                }
                memset(ca + pre + i, 1, na - i);
                memset(cb + pre + j, 1, nb - j);
                free(L);
        } else {
                memset(ca + pre, 1, na);
                memset(cb + pre, 1, nb);
        }
}

/* Slide each run of changed lines in x as far down as equal lines allow
 * (merging with the runs it meets), then back up to the last place where
 * it sits next to a change in the other file, so that a replacement reads
 * as one block. Equal lines make many placements equally short; this is
 * the one GNU diff prints. cy is the other file's flags, m its length. */
static void compact(const struct line *x, size_t n, char *cx, const char *cy, size_t m)
{
        _cleanup_free_ char *ygap = NULL;
        size_t g = 0, i = 0;

        /* ygap[g]: the other file has changed lines after its g-th
         * unchanged line (and before the next). */
        ygap = xcalloc(m + 2, 1);
        for (size_t j = 0; j < m; j++) {
                if (cy[j])
                        ygap[g] = 1;
                else
                        g++;
        }
        g = 0; /* now: unchanged lines of x before i */
        while (i < n) {
                size_t s, e, len, best;

                if (!cx[i]) {
                        i++;
                        g++;
                        continue;
                }
                s = i;
                e = i;
                while (e < n && cx[e])
                        e++;
                do {
                        len = e - s;
                        while (s > 0 && line_eq(&x[s - 1], &x[e - 1])) {
                                cx[--s] = 1;
                                cx[--e] = 0;
                                g--;
                                while (s > 0 && cx[s - 1])
                                        s--;
                        }
                        best = ygap[g] ? e : SIZE_MAX;
                        while (e < n && line_eq(&x[s], &x[e])) {
                                cx[s++] = 0;
                                cx[e++] = 1;
                                g++;
                                while (e < n && cx[e])
                                        e++;
                                if (ygap[g])
                                        best = e;
                        }
                } while (e - s != len);
                while (best != SIZE_MAX && e > best) {
                        cx[--s] = 1;
                        cx[--e] = 0;
                        g--;
                }
                i = e;
        }
}

/* The edit script for a -> b as '=', '-', '+' ops, deletions before
 * insertions between two common lines. */
static size_t edit_script(const struct line *a, size_t n, const struct line *b, size_t m, char **ret)
{
        _cleanup_free_ char *ca = xcalloc(n + 1, 1), *cb = xcalloc(m + 1, 1);
        char *ops = xmalloc(n + m + 1);
        size_t i = 0, j = 0, k = 0;

        mark_changes(a, n, b, m, ca, cb);
        compact(a, n, ca, cb, m);
        compact(b, m, cb, ca, n);
        while (i < n || j < m) {
                if (i < n && ca[i]) {
                        ops[k++] = '-';
                        i++;
                } else if (j < m && cb[j]) {
                        ops[k++] = '+';
                        j++;
                } else {
                        ops[k++] = '=';
                        i++;
                        j++;
                }
        }
        *ret = ops;
        return k;
}

static void add_range(struct strbuf *out, size_t start, size_t count)
{
        /* GNU diff: an empty range names the line before it. */
        if (count == 0)
                strbuf_addf(out, "%zu,0", start - 1);
        else if (count == 1)
                strbuf_addf(out, "%zu", start);
        else
                strbuf_addf(out, "%zu,%zu", start, count);
}

static void add_line(struct strbuf *out, char prefix, const struct line *l)
{
        strbuf_addch(out, prefix);
        strbuf_add(out, l->s, l->len);
        if (l->len == 0 || l->s[l->len - 1] != '\n')
                strbuf_addstr(out, "\n\\ No newline at end of file\n");
}

void unified_diff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                  const char *label_b, struct strbuf *out)
{
        _cleanup_free_ struct line *la = NULL, *lb = NULL;
        _cleanup_free_ char *ops = NULL;
        _cleanup_free_ size_t *apos = NULL, *bpos = NULL;
        size_t n, m, k, c = 0;

        if (alen == blen && (alen == 0 || memcmp(a, b, alen) == 0))
                return;
        n = split_lines(a, alen, &la);
        m = split_lines(b, blen, &lb);
        k = edit_script(la, n, lb, m, &ops);
        /* Line positions before each op. */
        apos = xcalloc(k + 1, sizeof(size_t));
        bpos = xcalloc(k + 1, sizeof(size_t));
        for (size_t i = 0; i < k; i++) {
                apos[i + 1] = apos[i] + (ops[i] != '+');
                bpos[i + 1] = bpos[i] + (ops[i] != '-');
        }
        strbuf_addf(out, "--- %s\n+++ %s\n", label_a, label_b);
        while (c < k) {
                size_t first, last_end, lo, hi, an = 0, bn = 0;

                while (c < k && ops[c] == '=')
                        c++;
                if (c == k)
                        break;
                first = c;
                /* Take changes separated by at most 2 * context equal lines
                 * into one hunk, as GNU diff does. */
                for (;;) {
                        size_t next;
                        while (c < k && ops[c] != '=')
                                c++;
                        last_end = c;
                        next = c;
                        while (next < k && ops[next] == '=')
                                next++;
                        if (next == k || next - last_end > 2 * DIFF_CONTEXT)
                                break;
                        c = next;
                }
                lo = first > DIFF_CONTEXT ? first - DIFF_CONTEXT : 0;
                hi = k - last_end > DIFF_CONTEXT ? last_end + DIFF_CONTEXT : k;
                for (size_t i = lo; i < hi; i++) {
                        an += ops[i] != '+';
                        bn += ops[i] != '-';
                }
                strbuf_addstr(out, "@@ -");
                add_range(out, apos[lo] + 1, an);
                strbuf_addstr(out, " +");
                add_range(out, bpos[lo] + 1, bn);
                strbuf_addstr(out, " @@\n");
                for (size_t i = lo; i < hi;) {
                        size_t j = i;
                        if (ops[i] == '=') {
                                add_line(out, ' ', &la[apos[i]]);
                                i++;
                                continue;
                        }
                        /* A run of changes: its deletions, then its insertions. */
                        while (j < hi && ops[j] != '=')
                                j++;
                        for (size_t t = i; t < j; t++)
                                if (ops[t] == '-')
                                        add_line(out, '-', &la[apos[t]]);
                        for (size_t t = i; t < j; t++)
                                if (ops[t] == '+')
                                        add_line(out, '+', &lb[bpos[t]]);
                        i = j;
                }
                c = hi;
        }
}

/* ---- paths ---- */

/* Why rel cannot name a generated file, or NULL when it can. */
static const char *path_problem(const char *rel)
{
        const char *c = rel;

        if (!rel || !*rel)
                return "empty path";
        if (rel[0] == '/')
                return "absolute path";
        if (!utf8_valid(rel))
                return "not valid UTF-8";
        for (;;) {
                const char *e = strchrnul(c, '/');
                size_t n = (size_t)(e - c);

                if (n == 0)
                        return "empty path component";
                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return "'.' or '..' component";
                if (n >= strlen(TMP_PREFIX) && memcmp(c, TMP_PREFIX, strlen(TMP_PREFIX)) == 0)
                        return "reserved name";
                if (!*e)
                        break;
                c = e + 1;
        }
        if (streq(rel, INDEX_NAME) || streq(rel, LOCK_NAME))
                return "reserved name";
        return NULL;
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
                const char *why = path_problem(files[i].path);
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

/* Some filesystems cannot sync a directory; the rename stands. */
static int sync_dir(int dirfd)
{
        if (fsync(dirfd) < 0 && errno != EINVAL)
                return -errno;
        return 0;
}

/* The directory reldir ("" for the output directory itself) below outfd,
 * each component opened with O_NOFOLLOW and, with create, made (0755 less
 * the umask) when missing. -ENOENT without a diag when a component is
 * missing and create is off. */
static int open_dir(int outfd, const char *outdir, const char *reldir, bool create, int *ret_fd,
                    struct diag *d)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *dir = xstrdup(reldir);
        char *c = dir;

        fd = fcntl(outfd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return diag_errorf(d, -errno, "cannot open '%s': %s", outdir, strerror(errno));
        while (*c) {
                char *e = strchrnul(c, '/');
                bool last = *e == '\0';
                int next, err;
                struct stat st;

                *e = '\0';
                next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0 && errno == ENOENT && create) {
                        if (mkdirat(fd, c, 0755) < 0 && errno != EEXIST)
                                return diag_set(d, -errno, outdir, 0, 0, "cannot create directory '%s': %s",
                                                dir, strerror(errno));
                        /* Make the new entry durable before anything lands in it. */
                        err = sync_dir(fd);
                        if (err < 0) {
                                _cleanup_free_ char *parent = xstrndup(dir, c > dir ? (size_t)(c - dir - 1) : 0);
                                return diag_set(d, err, outdir, 0, 0,
                                                "cannot sync directory '%s' after creating '%s' in it: %s",
                                                *parent ? parent : ".", dir, strerror(-err));
                        }
                        next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (next < 0) {
                        err = -errno;
                        if (err == -ENOENT && !create)
                                return -ENOENT;
                        if ((err == -ELOOP || err == -ENOTDIR) && fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                                if (S_ISLNK(st.st_mode))
                                        return diag_set(d, -ELOOP, outdir, 0, 0,
                                                        "'%s' is a symlink; refusing to write through it", dir);
                                return diag_set(d, -ENOTDIR, outdir, 0, 0,
                                                "'%s' exists and is not a directory", dir);
                        }
                        return diag_set(d, err, outdir, 0, 0, "cannot open directory '%s': %s", dir,
                                        strerror(-err));
                }
                close(fd);
                fd = next;
                if (last)
                        break;
                *e = '/';
                c = e + 1;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* The directory holding rel; see open_dir. */
static int open_parent(int outfd, const char *outdir, const char *rel, bool create, int *ret_fd,
                       struct diag *d)
{
        const char *slash = strrchr(rel, '/');
        _cleanup_free_ char *dir = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup("");

        return open_dir(outfd, outdir, dir, create, ret_fd, d);
}

/* The directory of the last file reached, kept open: the files come
 * sorted by path, so most share the directory of the one before. */
struct parent_cache {
        char *dir;
        int fd;
};

#define PARENT_CACHE_INIT { .dir = NULL, .fd = -1 }

static void parent_cache_release(struct parent_cache *c)
{
        free(c->dir);
        if (c->fd >= 0)
                close(c->fd);
        *c = (struct parent_cache)PARENT_CACHE_INIT;
}

static size_t parent_len(const char *rel)
{
        const char *slash = strrchr(rel, '/');

        return slash ? (size_t)(slash - rel) : 0;
}

static bool parent_cached(const struct parent_cache *c, const char *rel)
{
        size_t n = parent_len(rel);

        return c->dir && strlen(c->dir) == n && strncmp(c->dir, rel, n) == 0;
}

/* The parent directory of rel (borrowed from the cache), or a negative
 * errno with d set. */
static int parent_get(struct parent_cache *c, int outfd, const char *outdir, const char *rel,
                      bool create, struct diag *d)
{
        size_t n = parent_len(rel);
        int fd, r;

        if (parent_cached(c, rel))
                return c->fd;
        parent_cache_release(c);
        r = open_parent(outfd, outdir, rel, create, &fd, d);
        if (r < 0)
                return r;
        c->dir = xstrndup(rel, n);
        c->fd = fd;
        return fd;
}

static int read_fd(int fd, struct strbuf *sb, size_t max)
{
        for (;;) {
                ssize_t n;

                strbuf_grow(sb, 65536);
                n = read(fd, sb->buf + sb->len, 65536);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return 0;
                sb->len += (size_t)n;
                sb->buf[sb->len] = '\0';
                if (sb->len > max)
                        return -EFBIG;
        }
}

enum current {
        CURRENT_ABSENT,
        CURRENT_FILE,  /* a regular file; content read */
        CURRENT_OTHER, /* a symlink, directory, device...: never touched */
};

/* What is at rel now, without following a symlink anywhere below outfd. */
static int read_current(int outfd, const char *outdir, const char *rel, enum current *ret,
                        struct strbuf *content, struct diag *d)
{
        _cleanup_close_ int dfd = -1, fd = -1;
        const char *name = path_basename(rel);
        struct stat st;
        int r;

        r = open_parent(outfd, outdir, rel, false, &dfd, d);
        if (r == -ENOENT) {
                *ret = CURRENT_ABSENT;
                return 0;
        }
        if (r < 0)
                return r;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno == ENOENT) {
                        *ret = CURRENT_ABSENT;
                        return 0;
                }
                return diag_set(d, -errno, outdir, 0, 0, "cannot stat '%s': %s", rel, strerror(errno));
        }
        /* Opening a device or a FIFO could have effects: only look into
         * regular files. */
        if (!S_ISREG(st.st_mode)) {
                *ret = CURRENT_OTHER;
                return 0;
        }
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT) {
                        *ret = CURRENT_ABSENT;
                        return 0;
                }
                if (errno == ELOOP) {
                        *ret = CURRENT_OTHER;
                        return 0;
                }
                return diag_set(d, -errno, outdir, 0, 0, "cannot read '%s': %s", rel, strerror(errno));
        }
        if (fstat(fd, &st) < 0)
                return diag_set(d, -errno, outdir, 0, 0, "cannot stat '%s': %s", rel, strerror(errno));
        if (!S_ISREG(st.st_mode)) {
                *ret = CURRENT_OTHER;
                return 0;
        }
        /* Refused before reading: a huge file costs nothing. */
        if ((uint64_t)st.st_size > CURRENT_MAX)
                return diag_set(d, -EFBIG, outdir, 0, 0,
                                "'%s' is %jd bytes, larger than any modulefile cudamod writes; move it away",
                                rel, (intmax_t)st.st_size);
        r = read_fd(fd, content, CURRENT_MAX);
        if (r == -EFBIG)
                return diag_set(d, r, outdir, 0, 0, "'%s' is too large (more than %zu bytes)", rel,
                                CURRENT_MAX);
        if (r < 0)
                return diag_set(d, r, outdir, 0, 0, "cannot read '%s': %s", rel, strerror(-r));
        *ret = CURRENT_FILE;
        return 0;
}

static void random_suffix(char out[7])
{
        static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        static uint64_t counter;
        unsigned char raw[6];

        if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) != (ssize_t)sizeof(raw)) {
                struct timespec ts;
                uint64_t x;

                clock_gettime(CLOCK_MONOTONIC, &ts);
                x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
                    ++counter * 0x9e3779b97f4a7c15ull;
                for (size_t i = 0; i < sizeof(raw); i++) {
                        x ^= x >> 33;
                        x *= 0xff51afd7ed558ccdull;
                        raw[i] = (unsigned char)(x >> 56);
                }
        }
        for (size_t i = 0; i < sizeof(raw); i++)
                out[i] = chars[raw[i] % (sizeof(chars) - 1)];
        out[6] = '\0';
}

static int write_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, data, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                data += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Replace name in dirfd by data: a temporary file next to it, written,
 * given its mode, synced and renamed over it, then the directory synced.
 * Readers see the old file or the new one, never a part. */
/* Write data to a new temporary file next to name (its name in ret_tmp),
 * mode set, not yet synced or renamed. */
static int write_temp(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                      char ret_tmp[static NAME_MAX + 1])
{
        /* Room for the prefix, '.', the suffix and the NUL. */
        size_t keep = NAME_MAX - strlen(TMP_PREFIX) - 7;
        _cleanup_close_ int fd = -1;
        char tmp[NAME_MAX + 1];
        int r = 0;

        if (strlen(name) < keep)
                keep = strlen(name);
        for (int attempt = 0; attempt < 100; attempt++) {
                char suffix[7];

                random_suffix(suffix);
                snprintf(tmp, sizeof(tmp), "%s%.*s.%s", TMP_PREFIX, (int)keep, name, suffix);
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                            0600);
                if (fd >= 0 || errno != EEXIST)
                        break;
        }
        if (fd < 0)
                return -errno;
        r = write_all(fd, data, len);
        if (r == 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r == 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlinkat(dirfd, tmp, 0);
                return r;
        }
        memcpy(ret_tmp, tmp, sizeof(tmp));
        return 0;
}

/* One file alone (the index): temporary file, fsync, rename, directory
 * fsync. */
static int write_atomic(int dirfd, const char *name, const char *data, size_t len, mode_t mode)
{
        char tmp[NAME_MAX + 1];
        _cleanup_close_ int fd = -1;
        int r;

        r = write_temp(dirfd, name, data, len, mode, tmp);
        if (r < 0)
                return r;
        fd = openat(dirfd, tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fsync(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
                r = -errno;
                (void)unlinkat(dirfd, tmp, 0);
                return r;
        }
        return sync_dir(dirfd);
}

/* ---- the output directory, its lock and leftovers ---- */

/* The first existing prefix of path that is not a directory, or NULL. */
static char *find_non_directory(const char *path)
{
        _cleanup_free_ char *p = xstrdup(path);
        struct stat st;

        for (char *s = p + 1;; s++) {
                if (*s == '/' || *s == '\0') {
                        char saved = *s;
                        *s = '\0';
                        if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
                                return xstrdup(p);
                        *s = saved;
                }
                if (!*s)
                        return NULL;
        }
}

static int not_directory_error(const char *outdir, struct diag *d)
{
        _cleanup_free_ char *bad = find_non_directory(outdir);

        return diag_errorf(d, -ENOTDIR, "'%s' exists and is not a directory", bad ? bad : outdir);
}

/* mkdir -p outdir (0755 less the umask). */
static int create_outdir(const char *outdir, struct diag *d)
{
        _cleanup_free_ char *p = xstrdup(outdir);

        for (char *s = p + 1;; s++) {
                if (*s == '/' || *s == '\0') {
                        char saved = *s;
                        *s = '\0';
                        if (mkdir(p, 0755) < 0) {
                                struct stat st;
                                if (errno == ENOTDIR)
                                        return not_directory_error(outdir, d);
                                if (errno != EEXIST)
                                        return diag_errorf(d, -errno, "cannot create output directory '%s': %s",
                                                           outdir, strerror(errno));
                                if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
                                        return diag_errorf(d, -ENOTDIR, "'%s' exists and is not a directory", p);
                        }
                        *s = saved;
                }
                if (!*s)
                        return 0;
        }
}

/* The output directory, created unless create is off; -ENOENT without a
 * diag when it is missing and create is off. */
static int open_outdir(const char *outdir, bool create, int *ret_fd, struct diag *d)
{
        int fd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 && errno == ENOENT && create) {
                int r = create_outdir(outdir, d);
                if (r < 0)
                        return r;
                fd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (fd < 0) {
                if (errno == ENOTDIR)
                        return not_directory_error(outdir, d);
                if (errno == ENOENT && !create)
                        return -ENOENT;
                return diag_errorf(d, -errno, "cannot open output directory '%s': %s", outdir,
                                   strerror(errno));
        }
        *ret_fd = fd;
        return 0;
}

static bool interrupted(const struct write_options *o)
{
        return o->interrupted && *o->interrupted;
}

/* "a directory", "a symlink"...: what a path that should be a regular file
 * is instead. */
static const char *file_kind(mode_t mode)
{
        if (S_ISDIR(mode))
                return "a directory";
        if (S_ISLNK(mode))
                return "a symlink";
        if (S_ISFIFO(mode))
                return "a FIFO";
        if (S_ISSOCK(mode))
                return "a socket";
        if (S_ISCHR(mode) || S_ISBLK(mode))
                return "a device";
        return S_ISREG(mode) ? "a regular file" : "not a regular file";
}

/* After the lock is held: outdir must still name the directory that was
 * opened and locked. An admin who moved it away or put something else in
 * its place while this run waited did not mean it to write there (and a
 * run started now would lock the new one: the two would not exclude each
 * other). */
static int check_outdir_unchanged(int outfd, const char *outdir, struct diag *d)
{
        struct stat locked, now, link;
        const char *what;

        if (fstat(outfd, &locked) < 0)
                return diag_errorf(d, -errno, "cannot stat output directory '%s': %s", outdir, strerror(errno));
        if (stat(outdir, &now) == 0 && S_ISDIR(now.st_mode) && now.st_dev == locked.st_dev &&
            now.st_ino == locked.st_ino)
                return 0;
        if (lstat(outdir, &link) < 0)
                what = errno == ENOENT ? "gone" : strerror(errno);
        else if (S_ISLNK(link.st_mode))
                what = stat(outdir, &now) == 0 && S_ISDIR(now.st_mode) ? "a symlink to another directory"
                                                                       : "a symlink to something that is not a directory";
        else if (S_ISDIR(link.st_mode))
                what = "another directory";
        else
                what = file_kind(link.st_mode);
        return diag_errorf(d, -ESTALE,
                           "'%s' was moved or replaced while this run waited for its lock (it is now %s); "
                           "nothing written", outdir, what);
}

/* Who holds the flock on the lock file (st: its stat), from /proc/locks:
 * its PID, or 0 when no line names it (another NFS client, no /proc). */
static pid_t lock_holder_pid(const struct stat *st)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/locks", "re");
        char line[256];

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f)) {
                char kind[16];
                unsigned maj, min;
                unsigned long ino;
                int pid;

                /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a
                 * waiter's line has "->" after the number. */
                if (strstr(line, "->") ||
                    sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", kind, &pid, &maj, &min, &ino) != 5)
                        continue;
                if (streq(kind, "FLOCK") && pid > 0 && ino == (unsigned long)st->st_ino &&
                    maj == major(st->st_dev) && min == minor(st->st_dev))
                        return (pid_t)pid;
        }
        return 0;
}

/* Another user's process names itself (comm): what reaches a terminal
 * from it is printable ASCII. */
static void printable(char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '\'')
                        *s = '?';
}

/* The holder of the lock on fd, in words ("PID 1234 (cudamod)"; NULL:
 * unknown), and whether it is known to be a cudamod run. /proc/locks
 * names a holder on this host; one on another NFS client stays unknown.
 * (Nothing is written into the lock file: a run that changes nothing
 * touches nothing, and its content could be stale.) */
static char *lock_holder(int fd, bool *ret_cudamod)
{
        char comm[64] = "", *nl;
        _cleanup_free_ char *comm_path = NULL;
        _cleanup_close_ int cfd = -1;
        struct stat st;
        ssize_t n;
        pid_t pid;

        *ret_cudamod = false;
        if (fstat(fd, &st) < 0)
                return NULL;
        pid = lock_holder_pid(&st);
        if (pid > 0) {
                comm_path = xasprintf("/proc/%ld/comm", (long)pid);
                cfd = open(comm_path, O_RDONLY | O_CLOEXEC);
                /* flock(1) on an inherited descriptor, a daemon that forked:
                 * the one that took it is gone, its children hold it. */
                if (cfd < 0 && errno == ENOENT)
                        return xasprintf("a process that inherited it from PID %ld (which has exited)", (long)pid);
                n = cfd >= 0 ? read(cfd, comm, sizeof(comm) - 1) : -1;
                comm[n > 0 ? n : 0] = '\0';
                if ((nl = strchr(comm, '\n')))
                        *nl = '\0';
                printable(comm);
                if (!*comm)
                        return xasprintf("PID %ld", (long)pid);
                *ret_cudamod = streq(comm, "cudamod");
                return xasprintf("PID %ld (%s)", (long)pid, comm);
        }
        return NULL;
}

static double monotonic_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for the lock on fd, at most timeout seconds (negative: not at
 * all). Polled, so that the wait has an end; a signal that sets
 * *o->interrupted ends it at once. */
static int wait_lock(int fd, const char *lock_path, const struct write_options *o, struct diag *d)
{
        long timeout = o->lock_timeout ? o->lock_timeout : WRITE_LOCK_TIMEOUT;
        double deadline = monotonic_now() + (timeout > 0 ? (double)timeout : 0);
        long delay_ms = 10;
        _cleanup_free_ char *holder = NULL;
        bool by_cudamod;

        holder = lock_holder(fd, &by_cudamod);
        if (o->on_wait && timeout > 0)
                o->on_wait(lock_path, holder, by_cudamod, o->userdata);
        for (;;) {
                double left;

                if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                        return 0;
                if (errno != EWOULDBLOCK && errno != EINTR)
                        return diag_errorf(d, -errno, "cannot lock '%s': %s", lock_path, strerror(errno));
                if (interrupted(o))
                        return diag_errorf(d, -EINTR, "interrupted while waiting for the lock '%s'", lock_path);
                left = deadline - monotonic_now();
                if (left <= 0)
                        break;
                {
                        double wait_s = (double)delay_ms / 1000 < left ? (double)delay_ms / 1000 : left;
                        struct timespec ts = { .tv_sec = (time_t)wait_s,
                                               .tv_nsec = (long)((wait_s - (double)(time_t)wait_s) * 1e9) };
                        (void)nanosleep(&ts, NULL);
                }
                if (delay_ms < 200)
                        delay_ms *= 2;
        }
        free(holder);
        holder = lock_holder(fd, &by_cudamod);
        if (timeout < 0)
                return diag_errorf(d, -ETIMEDOUT, "'%s' is locked by %s; not waiting (the lock timeout is 0)",
                                   lock_path, holder ? holder : "a process whose PID cannot be read");
        return diag_errorf(d, -ETIMEDOUT,
                           "'%s' is still locked by %s after %ld s; nothing done (--lock-timeout sets "
                           "how long to wait)", lock_path, holder ? holder : "a process whose PID cannot be read",
                           timeout);
}

/* Hold the lock for the run. A run that writes nothing does not create the
 * lock file, so it takes no lock when there is none yet, nor when it may
 * not open it read-write (it is another user's: what it reads is still
 * each file whole). */
static int take_lock(int outfd, const struct write_options *o, bool readonly, int *ret_fd,
                     struct diag *d)
{
        _cleanup_free_ char *lock_path = path_join(o->outdir, LOCK_NAME);
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        /* Read-write: flock is granted on any descriptor, so one a reader
         * may open would let every user who can read the tree hold it.
         * O_NONBLOCK: a FIFO in its place must not hang the open. */
        fd = openat(outfd, LOCK_NAME,
                    O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (readonly ? 0 : O_CREAT), 0600);
        if (fd < 0) {
                int err = errno;

                if (readonly && (err == ENOENT || err == EACCES)) {
                        *ret_fd = -1;
                        return 0;
                }
                if ((err == ELOOP || err == EISDIR) && fstatat(outfd, LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return diag_errorf(d, -err, "lock file '%s' is %s, not a regular file; remove it", lock_path,
                                           file_kind(st.st_mode));
                if (err == EACCES && fstatat(outfd, LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return diag_errorf(d, -err,
                                           "cannot open lock file '%s' read-write: %s (it belongs to uid %ld, "
                                           "mode %04o): run cudamod as its owner", lock_path, strerror(err),
                                           (long)st.st_uid, (unsigned)(st.st_mode & 07777));
                return diag_errorf(d, -err, "cannot %s lock file '%s': %s",
                                   err == EACCES || err == EROFS ? "create" : "open", lock_path, strerror(err));
        }
        if (fstat(fd, &st) < 0)
                return diag_errorf(d, -errno, "cannot stat lock file '%s': %s", lock_path, strerror(errno));
        if (!S_ISREG(st.st_mode))
                return diag_errorf(d, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL,
                                   "lock file '%s' is %s, not a regular file; remove it", lock_path,
                                   file_kind(st.st_mode));
        /* One an earlier version made 0644, or anyone's umask: ours, so ours to close. */
        if ((st.st_mode & 07777 & ~(mode_t)0600) && st.st_uid == geteuid() && fchmod(fd, 0600) < 0)
                return diag_errorf(d, -errno, "cannot make lock file '%s' mode 0600: %s", lock_path,
                                   strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK)
                        return diag_errorf(d, -errno, "cannot lock '%s': %s", lock_path, strerror(errno));
                r = wait_lock(fd, lock_path, o, d);
                if (r < 0)
                        return r;
        }
        r = check_outdir_unchanged(outfd, o->outdir, d);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Remove the temporary files a killed run left in reldir. Best effort: a
 * directory that cannot be opened is looked at again when written. */
static void remove_temp_files_in(int outfd, const char *outdir, const char *reldir)
{
        _cleanup_close_ int fd = -1;
        DIR *dir;
        struct dirent *de;
        int dfd;

        if (open_dir(outfd, outdir, reldir, false, &fd, NULL) < 0)
                return;
        dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0)
                return;
        dir = fdopendir(dfd);
        if (!dir) {
                close(dfd);
                return;
        }
        while ((de = readdir(dir))) {
                struct stat st;
                if (!startswith(de->d_name, TMP_PREFIX))
                        continue;
                if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                        (void)unlinkat(fd, de->d_name, 0);
        }
        closedir(dir);
}

static void add_parent_dir(struct strv *dirs, const char *rel)
{
        const char *slash = strrchr(rel, '/');

        if (slash)
                strv_push(dirs, xstrndup(rel, (size_t)(slash - rel)));
}

/* ---- the index ---- */

static void json_check(int r)
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
static int index_load(int outfd, const char *outdir, json_t **ret_files, struct strbuf *raw,
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
        r = read_fd(fd, raw, INDEX_MAX);
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
                const char *why = path_problem(key);

                if (why)
                        return diag_set(d, -EBADMSG, path, 0, 0, "corrupt index: invalid path '%s': %s" START_OVER,
                                        key, why);
                if (!json_is_object(v) || !sha || !is_sha256_hex(sha) ||
                    !optional_string(json_object_get(v, "install")) ||
                    !optional_string(json_object_get(v, "module")))
                        return diag_set(d, -EBADMSG, path, 0, 0, "corrupt index: malformed entry for '%s'" START_OVER,
                                        key);
        }
        *ret_files = json_incref(files);
        return 0;
}

static const char *entry_sha(json_t *files, const char *rel)
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

static void index_set(json_t *files, const struct gen_file *g, const char *sha)
{
        json_t *e = json_object();

        if (!e)
                die_oom();
        json_check(json_object_set_new(e, "sha256", json_string(sha)));
        set_string(e, "install", g->install);
        set_string(e, "module", g->module);
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
        out->len += n;
        out->buf[out->len] = '\0';
        strbuf_addch(out, '\n');
}

/* ---- plan and apply ---- */

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

                k = open_parent(outfd, outdir, dir, false, &pfd, r == 0 ? d : NULL);
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

        r = open_parent(outfd, outdir, a->path, false, &dfd, d);
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
        int r = parent_get(c, outfd, outdir, rel, false, d);

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
                if (interrupted(o)) {
                        r = interrupted_error(d);
                        break;
                }
                r = dfd = parent_get(&pc, outfd, outdir, a->path, true, d);
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
                        if (interrupted(o)) {
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
        if (r == 0 && interrupted(o))
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
                        if (r == 0 && interrupted(o))
                                r = interrupted_error(d);
                        if (r == 0)
                                r = remove_one(outfd, outdir, a, index, &emptied, d);
                        continue;
                }
                if (!tmp[i][0])
                        continue;
                if (r == 0 && interrupted(o))
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
                        dfd = parent_get(&pc, outfd, outdir, a->path, false, NULL);
                        if (dfd >= 0)
                                (void)unlinkat(dfd, tmp[i], 0);
                        continue;
                }
                r = dfd = staged_parent_get(&pc, outfd, outdir, a->path, d);
                if (r < 0) {
                        /* Once more, only to remove the temporary file. */
                        dfd = parent_get(&pc, outfd, outdir, a->path, false, NULL);
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

static int write_index(int outfd, const char *outdir, json_t *files, const struct strbuf *old_raw,
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

int write_tree(const struct gen_file *files, size_t n_files, const struct write_options *o,
               struct write_result *ret, struct diag *d)
{
        bool readonly = o->dry_run || o->check;
        _cleanup_close_ int outfd = -1, lockfd = -1;
        _cleanup_(json_decrefp) json_t *old = NULL, *index = NULL;
        _cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;
        struct actions p = { 0 };
        struct write_result res = { 0 };
        mode_t mask, file_mode;
        int r;

        if (!o->outdir || !*o->outdir)
                return diag_errorf(d, -EINVAL, "no output directory");
        r = validate_files(files, n_files, d);
        if (r < 0)
                return r;
        mask = umask(0);
        umask(mask);
        file_mode = 0644 & ~mask;

        r = open_outdir(o->outdir, !readonly, &outfd, d);
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

int write_index_validation(const char *outdir, json_t *validation, const struct write_options *o,
                           struct diag *d)
{
        _cleanup_close_ int outfd = -1, lockfd = -1;
        _cleanup_(json_decrefp) json_t *files = NULL;
        _cleanup_strbuf_ struct strbuf raw = STRBUF_INIT, sb = STRBUF_INIT;
        struct write_options lo = o ? *o : (struct write_options){ 0 };
        mode_t mask = umask(0);
        int r;

        umask(mask);
        lo.outdir = outdir;
        r = open_outdir(outdir, false, &outfd, d);
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
        r = write_atomic(outfd, INDEX_NAME, sb.buf, sb.len, 0644 & ~mask);
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

        r = open_outdir(outdir, false, &outfd, d);
        if (r < 0)
                return r;
        r = index_load(outfd, outdir, &files, &raw, d);
        if (r < 0)
                return r;
        *ret_validation = index_validation(&raw);
        return 0;
}
