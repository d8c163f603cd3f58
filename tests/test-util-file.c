/* test-util-file.c: file_open_regular_at and file_read_regular_at, the one
 * way scan and doctor open what they read. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fixture.h"
#include "testutil.h"
#include "util-file.h"

static char *root;
static int root_fd = -1;

static void setup(void)
{
        root = fx_new();
        root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(root_fd, 0);
}

static void teardown(void)
{
        close(root_fd);
        fx_free(root);
}

START_TEST(regular_file_and_symlink_to_one_are_read)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strbuf sb = STRBUF_INIT;

        fx_write(root, "real.json", "{}\n");
        fx_symlink(root, "link.json", "real.json");
        ck_assert_int_eq(file_read_regular_at(root_fd, "real.json", NULL, 16, false, &sb, &d), 0);
        ck_assert_str_eq(sb.buf, "{}\n");
        strbuf_reset(&sb);
        ck_assert_int_eq(file_read_regular_at(root_fd, "link.json", NULL, 16, false, &sb, &d), 0);
        ck_assert_str_eq(sb.buf, "{}\n");
        ck_assert_ptr_null(d.message);
        strbuf_release(&sb);
}
END_TEST

START_TEST(size_limit_is_exact)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strbuf sb = STRBUF_INIT;

        fx_write(root, "f", "12345678");
        ck_assert_int_eq(file_read_regular_at(root_fd, "f", NULL, 8, false, &sb, &d), 0);
        ck_assert_uint_eq(sb.len, 8);
        strbuf_release(&sb);
        ck_assert_int_eq(file_read_regular_at(root_fd, "f", "/x/f", 7, false, &sb, &d), -EFBIG);
        ck_assert_uint_eq(sb.len, 0);
        ck_assert_str_eq(d.message, "'/x/f' is larger than 7 bytes");
        /* head: the first max bytes of a longer file. */
        ck_assert_int_eq(file_read_regular_at(root_fd, "f", NULL, 5, true, &sb, &d), 0);
        ck_assert_str_eq(sb.buf, "12345");
        strbuf_release(&sb);
}
END_TEST

/* Whatever is not a regular file is refused by its type, named in the
 * message, and (FIFO: would block; device: could act) never opened. */
START_TEST(special_files_are_refused_by_type)
{
        static const struct {
                const char *name;
                int err;
                const char *says;
        } cases[] = {
                { "fifo", -EINVAL, "'fifo' is a FIFO, not a regular file, not opened" },
                { "null", -EINVAL, "'null' is a character device, not a regular file, not opened" },
                { "dir", -EISDIR, "'dir' is a directory, not a regular file" },
                { "missing", -ENOENT, "cannot open 'missing': No such file or directory" },
                { NULL, 0, NULL },
        };
        _cleanup_free_ char *fifo = path_join(root, "fifo");

        ck_assert_int_eq(mkfifo(fifo, 0644), 0);
        fx_symlink(root, "null", "/dev/null");
        fx_mkdir(root, "dir");
        for (size_t i = 0; cases[i].name; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct strbuf sb = STRBUF_INIT;
                int fd = -1;

                ck_assert_int_eq(file_open_regular_at(root_fd, cases[i].name, NULL, &fd, NULL, &d), cases[i].err);
                ck_assert_int_eq(fd, -1);
                ck_assert_str_eq(d.message, cases[i].says);
                ck_assert_int_eq(file_read_regular_at(root_fd, cases[i].name, NULL, 16, true, &sb, &d),
                                 cases[i].err);
                strbuf_release(&sb);
        }
        /* The FIFO was never opened for reading: no reader is left, and a
         * writer still finds none. */
        ck_assert_int_eq(open(fifo, O_WRONLY | O_NONBLOCK), -1);
        ck_assert_int_eq(errno, ENXIO);
}
END_TEST

START_TEST(descriptor_is_the_file_checked)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_close_ int fd = -1;
        struct stat st, want;

        fx_write(root, "f", "x");
        ck_assert_int_eq(fstatat(root_fd, "f", &want, 0), 0);
        ck_assert_int_eq(file_open_regular_at(root_fd, "f", NULL, &fd, &st, &d), 0);
        ck_assert(st.st_ino == want.st_ino && st.st_dev == want.st_dev && S_ISREG(st.st_mode));
        ck_assert_int_eq(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDONLY | O_NONBLOCK);
        ck_assert(!file_changed(fd, &st));
        fx_write(root, "f", "longer");  /* rewritten in place: same inode */
        ck_assert(file_changed(fd, &st));
}
END_TEST

/* The one-open path: with an oracle that says every name is a regular
 * file (a listing that is wrong, as after a race), each answer is still
 * the O_PATH path's: a regular file and a link to one inside are read, a
 * link to /dev/null (O_NOFOLLOW refuses it) and a FIFO
 * are refused by type, a link out of the directory is followed as before.
 * Absolute names never ask the oracle. */
static unsigned oracle_calls;

static int oracle_all_regular(int dirfd, const char *rel, const char **ret_name)
{
        oracle_calls++;
        *ret_name = rel;
        return dirfd;
}

START_TEST(listed_regular_gives_the_same_answers)
{
        static const struct {
                const char *name;
                int err;
        } cases[] = {
                { "real.json", 0 }, { "link.json", 0 }, { "out.json", 0 }, { "../real.json", 0 },
                { "null", -EINVAL }, { "fifo", -EINVAL }, { "missing", -ENOENT },
                { NULL, 0 },
        };
        _cleanup_free_ char *fifo = NULL;
        _cleanup_free_ char *abs = path_join(root, "real.json");
        _cleanup_free_ char *sub = path_join(root, "sub");
        _cleanup_close_ int sub_fd = -1;

        fx_mkdir(root, "sub");
        fx_write(root, "real.json", "{}\n");
        sub_fd = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(sub_fd, 0);
        fx_write(sub, "real.json", "{}\n");
        fx_symlink(sub, "link.json", "real.json");
        fx_symlink(sub, "out.json", "../real.json");
        fx_symlink(sub, "null", "/dev/null");
        fifo = path_join(sub, "fifo");
        ck_assert_int_eq(mkfifo(fifo, 0644), 0);

        file_set_listed_regular(oracle_all_regular);
        for (size_t i = 0; cases[i].name; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT, d2 = DIAG_INIT;
                struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
                int r;

                r = file_read_regular_at(sub_fd, cases[i].name, NULL, 16, false, &sb, &d);
                ck_assert_msg(r == cases[i].err, "%s: %d, want %d", cases[i].name, r, cases[i].err);
                file_set_listed_regular(NULL);
                ck_assert_int_eq(file_read_regular_at(sub_fd, cases[i].name, NULL, 16, false, &sb2, &d2), r);
                file_set_listed_regular(oracle_all_regular);
                ck_assert_str_eq(sb.buf, sb2.buf);
                if (r < 0)
                        ck_assert_str_eq(d.message, d2.message);
                strbuf_release(&sb);
                strbuf_release(&sb2);
        }
        ck_assert_uint_gt(oracle_calls, 0);
        oracle_calls = 0;
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct strbuf sb = STRBUF_INIT;

                ck_assert_int_eq(file_read_regular_at(AT_FDCWD, abs, NULL, 16, false, &sb, &d), 0);
                ck_assert_str_eq(sb.buf, "{}\n");
                strbuf_release(&sb);
        }
        ck_assert_uint_eq(oracle_calls, 0);
        file_set_listed_regular(NULL);
}
END_TEST

static Suite *util_file_suite(void)
{
        Suite *s = suite_create("util-file");
        TCase *tc = tcase_create("open");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, regular_file_and_symlink_to_one_are_read);
        tcase_add_test(tc, size_limit_is_exact);
        tcase_add_test(tc, special_files_are_refused_by_type);
        tcase_add_test(tc, descriptor_is_the_file_checked);
        tcase_add_test(tc, listed_regular_gives_the_same_answers);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(util_file_suite());
}
