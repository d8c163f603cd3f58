/* write-diff.c: the unified diff a dry run shows for each file it would
 * change (see unified_diff in write.h): lines compared by a longest common
 * subsequence over what the common prefix and suffix leave, changes slid
 * to where GNU diff prints them, hunks with 3 lines of context. */
#include <stdint.h>

#include "strbuf.h"
#include "util.h"
#include "write-diff.h"
#include "banned.h"

#define DIFF_CONTEXT 3
/* Above this many cells in the LCS table (after the common prefix and
 * suffix are taken off) the middle is shown replaced as a whole. */
#define DIFF_MAX_CELLS ((size_t)4 * 1024 * 1024)

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
