/* test-spider-cache.c: spider_cache_rebuild puts the cache and its
 * timestamp in place without following anything another user could have
 * planted (a symlink at the old fixed temporary name, a symlinked
 * directory in a directory others may write), and with the modes users
 * need whatever root's umask. The cache tool is a fake
 * update_lmod_system_cache_files, a shell script. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "spider-cache.h"
#include "strbuf.h"
#include "testutil.h"

/* Writes what the real tool writes: the cache files into -d and, unless
 * NO_TIMESTAMP is in its environment, the timestamp file -t. */
static const char fake_tool[] =
        "#!/bin/sh\n"
        "while [ $# -gt 1 ]; do\n"
        "  case $1 in -d) dir=$2; shift 2;; -t) ts=$2; shift 2;; *) break;; esac\n"
        "done\n"
        "echo 'spiderT = {}' >\"$dir/spiderT.lua\" || exit 1\n"
        "echo 'mrcT = {}' >\"$dir/rtm.lua\" || exit 1\n"
        "[ -n \"$NO_TIMESTAMP\" ] || echo 1700000000 >\"$ts\" || exit 1\n";

static char *root;

static void setup(void)
{
        _cleanup_free_ char *tool = NULL;

        root = fx_new();
        fx_write(root, "tool", fake_tool);
        tool = path_join(root, "tool");
        ck_assert_int_eq(chmod(tool, 0755), 0);
        fx_write(root, "victim", "precious\n");
        fx_mkdir(root, "victimdir");
        unsetenv("NO_TIMESTAMP");
}

static void teardown(void)
{
        unsetenv("NO_TIMESTAMP");
        fx_free(root);
}

static char *slurp_at(const char *path)
{
        struct strbuf sb = STRBUF_INIT;

        if (strbuf_read_file(&sb, path, 1 << 20) < 0) {
                strbuf_release(&sb);
                return NULL;
        }
        return strbuf_detach(&sb);
}

static int rebuild(const char *dir, const char *timestamp, struct diag *d)
{
        _cleanup_free_ char *tool = path_join(root, "tool");
        struct spider_cache c = { .dir = (char *)dir, .timestamp = (char *)timestamp };
        const char *mp[] = { "/nonexistent/modules" };

        return spider_cache_rebuild(tool, &c, mp, 1, d);
}

static void assert_victims_untouched(void)
{
        _cleanup_free_ char *v = path_join(root, "victim"), *content = slurp_at(v);
        _cleanup_free_ char *vd = path_join(root, "victimdir");
        struct run_result r;

        ck_assert_ptr_nonnull(content);
        ck_assert_str_eq(content, "precious\n");
        run_program(&r, NULL, (const char *const[]){ "ls", "-A", vd, NULL }, NULL);
        ck_assert_msg(!*r.out, "'%s' holds %s", vd, r.out);
        run_result_release(&r);
}

/* No trace of a temporary directory or file is left in dir (the planted
 * ".timestamp.cudamod-tmp" is not one). */
static void assert_no_temporaries(const char *dir)
{
        struct run_result r;

        run_program(&r, NULL, (const char *const[]){ "ls", "-A", dir, NULL }, NULL);
        ck_assert_msg(!strstr(r.out, "cudamod-tmp."), "'%s' holds %s", dir, r.out);
        run_result_release(&r);
}

static mode_t mode_at(const char *path)
{
        struct stat st;

        ck_assert_msg(lstat(path, &st) == 0, "%s: %s", path, strerror(errno));
        return st.st_mode & 07777;
}

/* A symlink at the old fixed name `.<timestamp>.cudamod-tmp` beside the
 * timestamp, when the tool's timestamp cannot simply be renamed there (it
 * wrote none, or the timestamp lies on another file system than the
 * cache): the file it points to is not truncated; the timestamp is a
 * fresh regular file. */
START_TEST(spider_timestamp_never_opens_a_planted_name)
{
        _cleanup_free_ char *cache = path_join(root, "cache"), *ts = path_join(root, "ts/timestamp");
        _cleanup_free_ char *victim = path_join(root, "victim"), *tsdir = path_join(root, "ts");
        _cleanup_free_ char *shm = NULL, *shm_ts = NULL, *content = NULL;
        struct diag d = DIAG_INIT;
        struct stat a, b;

        fx_mkdir(root, "ts");
        fx_symlink(root, "ts/.timestamp.cudamod-tmp", victim);
        setenv("NO_TIMESTAMP", "1", 1);
        ck_assert_msg(rebuild(cache, ts, &d) == 0, "%s", d.message);
        assert_victims_untouched();
        ck_assert(S_ISREG(lstat(ts, &a) == 0 ? a.st_mode : 0));
        assert_no_temporaries(tsdir);
        assert_no_temporaries(root);
        unsetenv("NO_TIMESTAMP");

        /* Another file system: the bytes the tool wrote, a new file. */
        if (stat("/dev/shm", &a) < 0 || stat(root, &b) < 0 || a.st_dev == b.st_dev)
                return;
        shm = xstrdup("/dev/shm/cudamod-spider-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(shm));
        shm_ts = path_join(shm, "timestamp");
        fx_symlink(shm, ".timestamp.cudamod-tmp", victim);
        ck_assert_msg(rebuild(cache, shm_ts, &d) == 0, "%s", d.message);
        assert_victims_untouched();
        content = slurp_at(shm_ts);
        ck_assert_ptr_nonnull(content);
        ck_assert_str_eq(content, "1700000000\n");
        ck_assert_uint_eq(mode_at(shm_ts), 0644);
        assert_no_temporaries(shm);
        fx_free(TAKE_PTR(shm));
}
END_TEST

/* A symlink in a directory others may write (not sticky), on the way to
 * the cache or to the timestamp, is refused and named: nothing is put
 * where it points. One of the caller's in a directory only they may
 * write is followed. */
START_TEST(spider_cache_refuses_a_symlink_others_could_plant)
{
        _cleanup_free_ char *pub = path_join(root, "pub"), *victimdir = path_join(root, "victimdir");
        _cleanup_free_ char *cache = path_join(root, "pub/cache/lmod"), *ts = path_join(root, "ts/timestamp");
        _cleanup_free_ char *ts2 = path_join(root, "pub/ts/timestamp"), *cache2 = path_join(root, "cache");
        _cleanup_free_ char *linked = path_join(root, "linked/lmod"), *file = NULL;
        struct diag d = DIAG_INIT;

        fx_mkdir(root, "pub");
        ck_assert_int_eq(chmod(pub, 0777), 0);
        fx_symlink(root, "pub/cache", victimdir);
        fx_symlink(root, "pub/ts", victimdir);
        ck_assert_int_eq(rebuild(cache, ts, &d), -ELOOP);
        ck_assert_msg(strstr(d.message, "/pub/cache' is a symlink another user could have made or replaced") &&
                      strstr(d.message, "refusing to follow it"), "%s", d.message);
        diag_release(&d);
        assert_victims_untouched();
        ck_assert_int_eq(rebuild(cache2, ts2, &d), -ELOOP);
        ck_assert_msg(strstr(d.message, "/pub/ts' is a symlink another user could have made"), "%s", d.message);
        diag_release(&d);
        assert_victims_untouched();
        assert_no_temporaries(root);

        /* Sticky, as /tmp: only its owner may replace it; followed. */
        ck_assert_int_eq(chmod(pub, 01777), 0);
        ck_assert_msg(rebuild(cache, ts, &d) == 0, "%s", d.message);
        file = path_join(victimdir, "lmod/spiderT.lua");
        ck_assert_int_eq(access(file, F_OK), 0);
        free(file);

        /* The caller's own, in a directory of theirs: followed. */
        fx_mkdir(root, "real");
        fx_symlink(root, "linked", "real");
        ck_assert_msg(rebuild(linked, ts, &d) == 0, "%s", d.message);
        file = path_join(root, "real/lmod/spiderT.lua");
        ck_assert_int_eq(access(file, F_OK), 0);
}
END_TEST

/* Root's cron under umask 077: the cache directory, its files and the
 * timestamp are still what users need to read (0755, 0644). */
START_TEST(spider_cache_modes_do_not_follow_the_umask)
{
        _cleanup_free_ char *cache = path_join(root, "new/cache"), *ts = path_join(root, "newts/timestamp");
        _cleanup_free_ char *file = path_join(root, "new/cache/spiderT.lua");
        _cleanup_free_ char *parent = path_join(root, "new"), *tsdir = path_join(root, "newts");
        struct diag d = DIAG_INIT;
        mode_t old = umask(077);
        int r = rebuild(cache, ts, &d);

        umask(old);
        ck_assert_msg(r == 0, "%s", d.message);
        ck_assert_uint_eq(mode_at(parent), 0755);
        ck_assert_uint_eq(mode_at(cache), 0755);
        ck_assert_uint_eq(mode_at(file), 0644);
        ck_assert_uint_eq(mode_at(tsdir), 0755);
        ck_assert_uint_eq(mode_at(ts), 0644);
        assert_no_temporaries(parent);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("spider-cache");
        TCase *tc = tcase_create("rebuild");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, spider_timestamp_never_opens_a_planted_name);
        tcase_add_test(tc, spider_cache_refuses_a_symlink_others_could_plant);
        tcase_add_test(tc, spider_cache_modes_do_not_follow_the_umask);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
