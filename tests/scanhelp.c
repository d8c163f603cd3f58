/* scanhelp.c: see scanhelp.h. */
#include <check.h>

#include "scanhelp.h"
#include "util.h"

void scan_fixture(const char *root, const char *const *rel_roots, struct scan_result *ret)
{
        char *abs[8] = { 0 };
        size_t n = 0;
        struct diag d = DIAG_INIT;
        int r;

        while (rel_roots[n] && n < 8) {
                abs[n] = path_join(root, rel_roots[n]);
                n++;
        }
        r = scan_run(&(struct scan_options){ .roots = (const char *const *)abs, .n_roots = n }, ret, &d);
        ck_assert_msg(r == 0, "scan failed: %s", d.message);
        for (size_t i = 0; i < n; i++)
                free(abs[i]);
}

const struct install *find(const struct scan_result *r, const struct component *c, const char *suffix)
{
        for (size_t i = 0; i < r->installs.len; i++) {
                const struct install *in = r->installs.items[i];
                if (in->component == c && endswith(in->prefix, suffix))
                        return in;
        }
        return NULL;
}

const char *ver(const struct version *v)
{
        static char buf[64];
        char *s = v->count ? version_to_string(v, 0) : xstrdup("");

        snprintf(buf, sizeof(buf), "%s", s);
        free(s);
        return buf;
}

size_t count_component(const struct scan_result *r, const struct component *c)
{
        size_t n = 0;

        for (size_t i = 0; i < r->installs.len; i++)
                n += r->installs.items[i]->component == c;
        return n;
}
