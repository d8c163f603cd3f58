/* test-strbuf.c: the string buffer (strbuf.h): always terminated, buf never
 * NULL, and strbuf_setlen both cuts and takes in bytes written into the
 * room strbuf_grow made. */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "testutil.h"
#include "util.h"

START_TEST(empty_buffer_is_an_empty_string)
{
        struct strbuf sb = STRBUF_INIT;
        char *s;

        ck_assert_ptr_nonnull(sb.buf);
        ck_assert_str_eq(sb.buf, "");
        strbuf_setlen(&sb, 0);
        ck_assert_uint_eq(sb.len, 0);
        ck_assert_str_eq(sb.buf, "");
        s = strbuf_detach(&sb);
        ck_assert_str_eq(s, "");
        free(s);
        strbuf_release(&sb);
}
END_TEST

START_TEST(setlen_cuts_and_terminates)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        strbuf_addstr(&sb, "/usr/local/cuda-12.4");
        strbuf_setlen(&sb, strlen("/usr/local"));
        ck_assert_uint_eq(sb.len, 10);
        ck_assert_str_eq(sb.buf, "/usr/local");
        strbuf_addf(&sb, "/%s", "nccl");
        ck_assert_str_eq(sb.buf, "/usr/local/nccl");
        strbuf_setlen(&sb, 0);
        ck_assert_str_eq(sb.buf, "");
}
END_TEST

START_TEST(setlen_takes_in_bytes_written_into_the_room)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        strbuf_addstr(&sb, "ab");
        strbuf_grow(&sb, 4);
        ck_assert_uint_ge(sb.alloc, sb.len + 4 + 1);
        memcpy(sb.buf + sb.len, "cdef", 4);
        strbuf_setlen(&sb, sb.len + 4);
        ck_assert_uint_eq(sb.len, 6);
        ck_assert_str_eq(sb.buf, "abcdef");
        /* Up to the last byte of the allocation (the terminator's). */
        strbuf_setlen(&sb, sb.alloc - 1);
        ck_assert_uint_eq(sb.len, sb.alloc - 1);
        ck_assert_int_eq(sb.buf[sb.len], '\0');
}
END_TEST

/* Past the allocation is a bug, not a silent overflow. */
START_TEST(setlen_past_the_allocation_aborts)
{
        struct strbuf sb = STRBUF_INIT;

        strbuf_addstr(&sb, "abc");
        strbuf_setlen(&sb, sb.alloc);
}
END_TEST

START_TEST(setlen_on_an_unallocated_buffer_aborts)
{
        struct strbuf sb = STRBUF_INIT;

        strbuf_setlen(&sb, 1);
}
END_TEST

static Suite *strbuf_suite(void)
{
        Suite *s = suite_create("strbuf");
        TCase *tc = tcase_create("strbuf");

        tcase_add_test(tc, empty_buffer_is_an_empty_string);
        tcase_add_test(tc, setlen_cuts_and_terminates);
        tcase_add_test(tc, setlen_takes_in_bytes_written_into_the_room);
        suite_add_tcase(s, tc);

        /* Aborts need a forked test: skipped where CK_FORK=no (valgrind). */
        if (!getenv("CK_FORK") || !streq(getenv("CK_FORK"), "no")) {
                TCase *bug = tcase_create("bug");

                tcase_add_test_raise_signal(bug, setlen_past_the_allocation_aborts, SIGABRT);
                tcase_add_test_raise_signal(bug, setlen_on_an_unallocated_buffer_aborts, SIGABRT);
                suite_add_tcase(s, bug);
        }
        return s;
}

int main(void)
{
        return run_suite(strbuf_suite());
}
