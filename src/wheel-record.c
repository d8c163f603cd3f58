/* wheel-record.c: which wheel installed a file (wheel-record.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "util-file.h"
#include "util-path.h"
#include "util.h"
#include "version.h"
#include "wheel-record.h"
#include "banned.h"

char *wheel_name_normalise(const char *s)
{
        struct strbuf sb = STRBUF_INIT;

        for (; *s; s++) {
                if (*s == '-' || *s == '_' || *s == '.') {
                        if (sb.len == 0 || sb.buf[sb.len - 1] != '-')
                                strbuf_addch(&sb, '-');
                } else
                        strbuf_addch(&sb, (char)ascii_tolower(*s));
        }
        return strbuf_detach(&sb);
}

static void dist_release(struct wheel_dist *w)
{
        free(w->name);
        free(w->version);
        free(w->dist_info);
        strv_release(&w->files);
        free(w->sizes);
        *w = (struct wheel_dist){ 0 };
}

/* One CSV field of a RECORD line at *p (pip quotes a path holding ',' or
 * '"', doubling the quote): its text in ret; the position after it (at
 * ',' or the end) in *p. -EBADMSG for an unterminated quote. */
static int csv_field(const char **p, const char *end, struct strbuf *ret)
{
        const char *s = *p;

        strbuf_reset(ret);
        if (s < end && *s == '"') {
                for (s++;; s++) {
                        if (s >= end)
                                return -EBADMSG;
                        if (*s == '"') {
                                if (s + 1 < end && s[1] == '"')
                                        s++;
                                else {
                                        s++;
                                        break;
                                }
                        }
                        strbuf_addch(ret, *s);
                }
                if (s < end && *s != ',')
                        return -EBADMSG;
        } else {
                const char *c = memchr(s, ',', (size_t)(end - s));

                if (!c)
                        c = end;
                strbuf_add(ret, s, (size_t)(c - s));
                s = c;
        }
        *p = s;
        return 0;
}

/* Parse a RECORD into w: its lines below nvidia/ (the others, the
 * dist-info's own and console scripts' ../../bin, are not the package's
 * files here). Why it is not a RECORD, or NULL. */
static const char *record_parse(const char *buf, size_t len, struct wheel_dist *w)
{
        struct strbuf path = STRBUF_INIT, hash = STRBUF_INIT, size = STRBUF_INIT;
        const char *why = NULL;
        size_t alloc = 0;

        if (memchr(buf, '\0', len))
                return "it holds a NUL byte";
        for (const char *line = buf, *next; !why && line < buf + len; line = next) {
                const char *end = memchr(line, '\n', (size_t)(buf + len - line));
                const char *p = line;
                long long n = -1;

                next = end ? end + 1 : buf + len;
                if (!end)
                        end = buf + len;
                if (end > line && end[-1] == '\r')
                        end--;
                if (end == line)
                        continue;
                if (csv_field(&p, end, &path) < 0 || (p < end && (p++, csv_field(&p, end, &hash) < 0)) ||
                    (p < end && (p++, csv_field(&p, end, &size) < 0)) || p < end) {
                        why = "a line is not path,hash,size";
                        break;
                }
                if (!startswith(path.buf, "nvidia/"))
                        continue;
                if (strstr(path.buf, "/../") || endswith(path.buf, "/..") || !utf8_valid(path.buf)) {
                        why = "a path under nvidia/ leaves it or is not UTF-8";
                        break;
                }
                if (size.len) {
                        char *e;

                        errno = 0;
                        n = strtoll(size.buf, &e, 10);
                        if (errno || *e || n < 0 || !ascii_isdigit(size.buf[0])) {
                                why = "a size is not a number";
                                break;
                        }
                }
                if (w->files.len == alloc) {
                        alloc = alloc ? alloc * 2 : 8;
                        w->sizes = xreallocarray(w->sizes, alloc, sizeof(*w->sizes));
                }
                w->sizes[w->files.len] = n;
                strv_add(&w->files, path.buf);
                strbuf_reset(&size);
        }
        strbuf_release(&path);
        strbuf_release(&hash);
        strbuf_release(&size);
        return why;
}

/* Read site/entry (a dist-info) into w; why it is left out, or NULL. */
static char *dist_read(int site_fd, const char *entry, const char *prefix,
                       struct wheel_dist *w)
{
        _cleanup_free_ char *meta = path_join(entry, "METADATA"), *record = path_join(entry, "RECORD");
        _cleanup_free_ char *name = NULL, *version = NULL, *dir_name = NULL, *stem = NULL;
        struct strbuf sb = STRBUF_INIT;
        const char *dash = strchr(entry, '-');
        const char *why;
        struct version v;
        int r;

        stem = dash ? xstrndup(entry, (size_t)(dash - entry)) : xstrdup(entry);
        dir_name = wheel_name_normalise(stem);
        if (!startswith(dir_name, prefix))
                return NULL;
        r = file_read_regular_at(site_fd, meta, NULL, 64 * 1024, true, &sb, NULL);
        if (r < 0 || metadata_parse(sb.buf, sb.len, &name, &version) < 0) {
                strbuf_release(&sb);
                return xasprintf("its METADATA %s", r < 0 ? "cannot be read as a regular file"
                                                           : "has no Name or Version");
        }
        strbuf_release(&sb);
        w->name = wheel_name_normalise(name);
        if (!streq(w->name, dir_name))
                return xstrdup("its METADATA Name is not the dist-info's name");
        if (version_parse_prefix(version, &v, NULL) < 0 || !utf8_valid(version) ||
            written_value_problem(version, WRITTEN_WORD, NULL))
                return xstrdup("its METADATA Version is not a version");
        w->version = TAKE_PTR(version);
        w->dist_info = xstrdup(entry);
        r = file_read_regular_at(site_fd, record, NULL, WHEEL_MAX_RECORD, false, &sb, NULL);
        if (r < 0) {
                strbuf_release(&sb);
                return r == -EFBIG ? xasprintf("its RECORD is larger than %d bytes", WHEEL_MAX_RECORD)
                                   : xasprintf("its RECORD cannot be read as a regular file (%s)", strerror(-r));
        }
        why = record_parse(sb.buf, sb.len, w);
        strbuf_release(&sb);
        return why ? xasprintf("its RECORD is not what pip writes: %s", why) : NULL;
}

void wheel_dists_read(const struct walk_dir *dir, const char *site, const char *prefix, struct wheel_dists *ret)
{
        _cleanup_close_ int fd = open(site, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct walk_entry *e = NULL;
        size_t n = 0;

        *ret = (struct wheel_dists){ 0 };
        if (fd < 0 || walk_read_entries(fd, WALK_MAX_ENTRIES, &e, &n) < 0) {
                walk_entries_free(e);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct wheel_dist w = { 0 };
                _cleanup_free_ char *why = NULL;

                if (!endswith(e[i].name, ".dist-info") || !startswith(e[i].name, "nvidia"))
                        continue;
                why = dist_read(fd, e[i].name, prefix, &w);
                if (why)
                        walk_dir_verbose(dir, "'%s/%s' is left out: %s", site, e[i].name, why);
                if (why || !w.dist_info) {
                        dist_release(&w);
                        continue;
                }
                ret->items = xreallocarray(ret->items, ret->len + 1, sizeof(*ret->items));
                ret->items[ret->len++] = w;
        }
        walk_entries_free(e);
}

void wheel_dists_release(struct wheel_dists *d)
{
        for (size_t i = 0; i < d->len; i++)
                dist_release(&d->items[i]);
        free(d->items);
        *d = (struct wheel_dists){ 0 };
}

bool wheel_dist_lists(const struct wheel_dist *w, const char *rel, long long *ret_size)
{
        for (size_t i = 0; i < w->files.len; i++)
                if (streq(w->files.items[i], rel)) {
                        if (ret_size)
                                *ret_size = w->sizes[i];
                        return true;
                }
        return false;
}

const struct wheel_dist *wheel_dists_owner(const struct wheel_dists *d, const char *rel, off_t size)
{
        const struct wheel_dist *only = NULL;
        size_t listing = 0;

        for (size_t i = 0; i < d->len; i++) {
                long long n;

                if (!wheel_dist_lists(&d->items[i], rel, &n))
                        continue;
                if (n >= 0 && n == (long long)size)
                        return &d->items[i];
                listing++;
                if (n < 0)
                        only = &d->items[i];
        }
        return listing == 1 ? only : NULL;
}
