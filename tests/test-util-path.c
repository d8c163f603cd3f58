/* test-util-path.c: the path predicates every stage shares (util-path.h).
 * path_is_system_dir is in test-plan.c, with the placement it decides. */
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "strbuf.h"
#include "testutil.h"
#include "util-path.h"

static char *root;
static int root_fd = -1;

static void setup(void)
{
        root = fx_new();
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(root_fd, 0);
        fx_mkdir(root, "dir");
        fx_write(root, "file", "x\n");
        fx_symlink(root, "link-dir", "dir");
        fx_symlink(root, "link-file", "file");
        fx_symlink(root, "dangling", "missing");
        ck_assert_int_eq(mkfifoat(root_fd, "fifo", 0600), 0);
}

static void teardown(void)
{
        close(root_fd);
        fx_free(root);
}

START_TEST(types_are_told_after_symlinks_except_the_symlink_itself)
{
        static const struct {
                const char *rel;
                bool dir, file, symlink;
        } cases[] = {
                { "dir", true, false, false },
                { "file", false, true, false },
                { "link-dir", true, false, true },
                { "link-file", false, true, true },
                { "dangling", false, false, true },
                { "fifo", false, false, false },
                { "missing", false, false, false },
                { "file/below", false, false, false },
                { NULL },
        };

        for (size_t i = 0; cases[i].rel; i++) {
                ck_assert_msg(is_dir_at(root_fd, cases[i].rel) == cases[i].dir, "%s", cases[i].rel);
                ck_assert_msg(is_file_at(root_fd, cases[i].rel) == cases[i].file, "%s", cases[i].rel);
                ck_assert_msg(is_symlink_at(root_fd, cases[i].rel) == cases[i].symlink, "%s",
                              cases[i].rel);
        }
}
END_TEST

START_TEST(absolute_paths_need_no_directory)
{
        _cleanup_free_ char *dir = xasprintf("%s/link-dir", root);
        _cleanup_free_ char *file = xasprintf("%s/file", root);

        ck_assert(is_dir_at(AT_FDCWD, dir));
        ck_assert(is_symlink_at(AT_FDCWD, dir));
        ck_assert(is_file_at(AT_FDCWD, file));
        ck_assert(!is_dir_at(AT_FDCWD, file));
        /* dirfd is ignored for an absolute path. */
        ck_assert(is_file_at(-1, file));
}
END_TEST

START_TEST(control_characters_but_tab_are_found)
{
        static const struct {
                const char *s;
                bool control;
        } cases[] = {
                { "", false },
                { "/opt/cuda-12.9", false },
                { "/opt/with space/cuda", false },
                { "/opt/a\tb", false },
                { "/opt/caf\xc3\xa9", false },
                { "/opt/a\nb", true },
                { "/opt/a\rb", true },
                { "\x1b[31m", true },
                { "/opt/\x7f", true },
                { "/opt/\x01", true },
                { NULL },
        };

        for (size_t i = 0; cases[i].s; i++)
                ck_assert_msg(path_has_control_char(cases[i].s) == cases[i].control, "case %zu", i);
}
END_TEST

static Suite *util_path_suite(void)
{
        Suite *s = suite_create("util-path");
        TCase *tc = tcase_create("predicates");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, types_are_told_after_symlinks_except_the_symlink_itself);
        tcase_add_test(tc, absolute_paths_need_no_directory);
        tcase_add_test(tc, control_characters_but_tab_are_found);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(util_path_suite());
}
