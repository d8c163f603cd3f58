/* test-util-term.c: what reaches a terminal (util-term.h): every C0 and C1
 * control and every byte that is not valid UTF-8 is escaped, the rest of
 * UTF-8 kept. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "util.h"
#include "util-term.h"

/* Whether s holds anything a terminal would act on: a C0 control or DEL,
 * a C1 control as UTF-8 (C2 80-9F), or a byte that is not valid UTF-8
 * (a raw 0x9b is CSI to an 8-bit terminal). */
static bool acts_on_terminal(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;

        while (*p) {
                size_t n = utf8_seq_len(p);

                if (n == 0 || *p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] <= 0x9f))
                        return true;
                p += n;
        }
        return false;
}

START_TEST(every_single_byte_is_shown_safely)
{
        for (unsigned b = 1; b < 256; b++) {
                char in[] = { 'a', (char)b, 'z', '\0' };
                _cleanup_free_ char *out = term_escape(in);
                _cleanup_free_ char *want = NULL;

                ck_assert_msg(!acts_on_terminal(out), "byte 0x%02x: '%s'", b, out);
                if (b == '\n')
                        want = xstrdup("a\\nz");
                else if (b == '\t')
                        want = xstrdup("a\\tz");
                else if (b < 0x20 || b >= 0x7f)
                        want = xasprintf("a\\x%02xz", b);
                else
                        want = xasprintf("a%cz", (char)b);
                ck_assert_str_eq(out, want);
        }
}
END_TEST

START_TEST(c1_controls_in_utf8_are_escaped)
{
        for (unsigned c = 0x80; c <= 0x9f; c++) {
                char in[] = { '/', 'o', 'p', 't', '/', (char)0xc2, (char)c, '2', '\0' };
                _cleanup_free_ char *out = term_escape(in);
                _cleanup_free_ char *want = xasprintf("/opt/\\xc2\\x%02x2", c);

                ck_assert_str_eq(out, want);
        }
}
END_TEST

START_TEST(other_utf8_is_kept_and_broken_utf8_escaped)
{
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "caf\xc3\xa9", "caf\xc3\xa9" },                    /* é */
                { "\xc2\xa0nbsp", "\xc2\xa0nbsp" },                  /* U+00A0, the first after C1 */
                { "\xe2\x82\xac \xf0\x9f\x98\x80", "\xe2\x82\xac \xf0\x9f\x98\x80" },
                { "\xc2", "\\xc2" },                                 /* cut short */
                { "\xc2z", "\\xc2z" },
                { "\xc0\x9b", "\\xc0\\x9b" },                        /* overlong ESC-like */
                { "\xe0\x82\x9b", "\\xe0\\x82\\x9b" },               /* overlong C1 */
                { "\xed\xa0\x80", "\\xed\\xa0\\x80" },               /* a surrogate */
                { "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },      /* past U+10FFFF */
                { "\x9b" "31m", "\\x9b" "31m" },                     /* raw 8-bit CSI */
                { "\xc2\x9d" "0;title\x07", "\\xc2\\x9d" "0;title\\x07" }, /* OSC ... BEL */
                { "\x1b[31m", "\\x1b[31m" },
                { NULL, NULL },
        };

        for (size_t i = 0; cases[i].in; i++) {
                _cleanup_free_ char *out = term_escape(cases[i].in);

                ck_assert_msg(streq(out, cases[i].out), "case %zu: '%s'", i, out);
                ck_assert(!acts_on_terminal(out));
        }
}
END_TEST

static Suite *util_term_suite(void)
{
        Suite *s = suite_create("util-term");
        TCase *tc = tcase_create("escape");

        tcase_add_test(tc, every_single_byte_is_shown_safely);
        tcase_add_test(tc, c1_controls_in_utf8_are_escaped);
        tcase_add_test(tc, other_utf8_is_kept_and_broken_utf8_escaped);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(util_term_suite());
}
