/* test-write.c: putting the generated tree on disk: statuses, the index,
 * hand-edited and foreign files left alone, pruning, dry runs that change
 * nothing, atomic replacement, the lock, paths that could escape the
 * output directory, and the unified diff against GNU diff. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "fixture.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "write.h"
#include "write-diff.h"
#include "write-index.h"
#include "write-name.h"
#include "write-site.h"

#define GEN(p, c, m) { .path = (p), .content = (c), .len = sizeof(c) - 1, .install = "/opt/x", .module = (m) }

static const char CUDA124[] = "-- cuda 12.4\nsetenv(\"CUDA_HOME\", \"/opt/cuda-12.4\")\n";
static const char CUDA129[] = "-- cuda 12.9\nsetenv(\"CUDA_HOME\", \"/opt/cuda-12.9\")\n";
static const char RC[] = "module_version(\"cuda/12.9\", \"default\")\n";
static const char CUDNN[] = "-- cudnn 9.7.1\nfamily(\"cudnn\")\n";

/* The tree most tests start from. */
static const struct gen_file base[] = {
        GEN("Core/cuda/12.4.lua", CUDA124, "cuda/12.4"),
        GEN("Core/cuda/12.9.lua", CUDA129, "cuda/12.9"),
        GEN("Core/cuda/.modulerc.lua", RC, NULL),
        GEN("CUDA/12/cudnn/9.7.1.lua", CUDNN, "cudnn/9.7.1"),
};
#define N_BASE ELEMENTSOF(base)

static int do_write(const struct gen_file *f, size_t n, const struct write_options *o,
                    struct write_result *res, struct diag *d)
{
        *res = (struct write_result){ 0 };
        return write_tree(f, n, o, res, d);
}

/* write_tree that must succeed. */
static void write_ok(const struct gen_file *f, size_t n, const struct write_options *o,
                     struct write_result *res)
{
        struct diag d = DIAG_INIT;
        int r = do_write(f, n, o, res, &d);

        ck_assert_msg(r == 0, "write_tree: %d: %s: %s", r, d.file ? d.file : "", d.message ? d.message : "");
        diag_release(&d);
}

static int status_of(const struct write_result *res, const char *path)
{
        for (size_t i = 0; i < res->n_files; i++)
                if (streq(res->files[i].path, path))
                        return (int)res->files[i].status;
        return -1;
}

#define assert_status(res, path, st) \
        ck_assert_msg(status_of(res, path) == (int)(st), "%s: %s, want %s", path, \
                      status_of(res, path) < 0 ? "absent" : file_status_to_string(status_of(res, path)), \
                      file_status_to_string(st))

static char *slurp(const char *dir, const char *rel)
{
        _cleanup_free_ char *p = path_join(dir, rel);
        struct strbuf sb = STRBUF_INIT;
        int r = strbuf_read_file(&sb, p, 1 << 24);

        ck_assert_msg(r == 0, "read '%s': %s", p, strerror(-r));
        return strbuf_detach(&sb);
}

static void assert_content(const char *dir, const char *rel, const char *want)
{
        _cleanup_free_ char *got = slurp(dir, rel);

        ck_assert_str_eq(got, want);
}

static bool exists(const char *dir, const char *rel)
{
        _cleanup_free_ char *p = path_join(dir, rel);
        struct stat st;

        return lstat(p, &st) == 0;
}

static struct stat stat_of(const char *dir, const char *rel)
{
        _cleanup_free_ char *p = path_join(dir, rel);
        struct stat st;

        ck_assert_msg(lstat(p, &st) == 0, "stat '%s': %s", p, strerror(errno));
        return st;
}

static bool same_file_state(const struct stat *a, const struct stat *b)
{
        return a->st_ino == b->st_ino && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
               a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A listing of everything below a directory: path, type, mode, size,
 * mtime, inode, and contents of regular files and link targets. */
static struct strv *snap_lines;
static size_t snap_prefix;

static int snap_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        struct strbuf sb = STRBUF_INIT;

        strbuf_addf(&sb, "%s %o %lld %lld.%09ld %llu", path + snap_prefix, (unsigned)st->st_mode,
                    (long long)st->st_size, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
                    (unsigned long long)st->st_ino);
        if (S_ISREG(st->st_mode)) {
                strbuf_addch(&sb, ' ');
                ck_assert_int_eq(strbuf_read_file(&sb, path, 1 << 24), 0);
        } else if (S_ISLNK(st->st_mode)) {
                char target[4096];
                ssize_t n = readlink(path, target, sizeof(target));
                ck_assert_int_ge(n, 0);
                strbuf_addstr(&sb, " -> ");
                strbuf_add(&sb, target, (size_t)n);
        }
        strv_push(snap_lines, strbuf_detach(&sb));
        return 0;
}

static char *snapshot(const char *dir)
{
        struct strv lines = { 0 };
        struct strbuf sb = STRBUF_INIT;

        snap_lines = &lines;
        snap_prefix = strlen(dir);
        ck_assert_int_eq(nftw(dir, snap_one, 32, FTW_PHYS), 0);
        strv_sort_uniq(&lines);
        for (size_t i = 0; i < lines.len; i++) {
                strbuf_addstr(&sb, lines.items[i]);
                strbuf_addch(&sb, '\n');
        }
        strv_release(&lines);
        return strbuf_detach(&sb);
}

/* A gen_file table like base but with one entry's content replaced. */
static struct gen_file *with_content(const char *path, const char *content)
{
        struct gen_file *f = xcalloc(N_BASE, sizeof(*f));

        memcpy(f, base, sizeof(base));
        for (size_t i = 0; i < N_BASE; i++)
                if (streq(f[i].path, path)) {
                        f[i].content = content;
                        f[i].len = strlen(content);
                }
        return f;
}

START_TEST(write_creates_files_into_empty_dir)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *index = NULL, *listing = NULL;
        char sha[65];
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        ck_assert_int_eq(res.n_files, N_BASE);
        ck_assert_int_eq(res.count[FILE_CREATED], N_BASE);
        /* Sorted by path. */
        ck_assert_str_eq(res.files[0].path, "CUDA/12/cudnn/9.7.1.lua");
        ck_assert_str_eq(res.files[1].path, "Core/cuda/.modulerc.lua");
        ck_assert_str_eq(res.files[3].path, "Core/cuda/12.9.lua");
        ck_assert_str_eq(res.files[3].module, "cuda/12.9");
        ck_assert_ptr_null(res.files[1].module);
        assert_content(out, "Core/cuda/12.4.lua", CUDA124);
        assert_content(out, "CUDA/12/cudnn/9.7.1.lua", CUDNN);
        ck_assert(exists(out, ".cudamod.lock"));
        index = slurp(out, ".cudamod-index.json");
        sha256_hex(CUDA124, strlen(CUDA124), sha);
        ck_assert_ptr_nonnull(strstr(index, sha));
        ck_assert_ptr_nonnull(strstr(index, "\"module\": \"cuda/12.4\""));
        ck_assert_ptr_nonnull(strstr(index, "\"install\": \"/opt/x\""));
        ck_assert_ptr_nonnull(strstr(index, "\"cudamod\": \"" CUDAMOD_VERSION "\""));
        /* No temporary file is left behind. */
        listing = snapshot(out);
        ck_assert_ptr_null(strstr(listing, ".cudamod-tmp."));
        write_result_release(&res);
        fx_free(root);
}
END_TEST

static void check_modes(mode_t mask, mode_t mode, mode_t file_mode, mode_t dir_mode)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out/deep");
        struct write_result res;
        mode_t old = umask(mask);
        struct stat st;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out, .mode = mode }, &res);
        umask(old);
        st = stat_of(out, "Core/cuda/12.4.lua");
        ck_assert_int_eq(st.st_mode & 07777, file_mode);
        st = stat_of(out, ".cudamod-index.json");
        ck_assert_int_eq(st.st_mode & 07777, file_mode);
        st = stat_of(out, "Core/cuda");
        ck_assert_int_eq(st.st_mode & 07777, dir_mode);
        st = stat_of(out, "CUDA");
        ck_assert_int_eq(st.st_mode & 07777, dir_mode);
        st = stat_of(root, "out");
        ck_assert_int_eq(st.st_mode & 07777, dir_mode);
        st = stat_of(out, "");
        ck_assert_int_eq(st.st_mode & 07777, dir_mode);
        write_result_release(&res);
        fx_free(root);
}

/* The index records what each name stands for, index_names_read gives
 * it back, and a write planned from an index another run has changed
 * since is refused (-EAGAIN), nothing written. */
START_TEST(write_index_keeps_names_and_refuses_a_stale_plan)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *index = NULL, *listing = NULL;
        struct gen_file files[N_BASE];
        struct index_names names = { 0 };
        struct diag d = DIAG_INIT;
        struct write_result res;
        char stale[65];
        bool changed = false;

        for (size_t i = 0; i < N_BASE; i++) {
                files[i] = base[i];
                if (files[i].module) {
                        files[i].identity = "cuda 12.4.1 cuda12 x86_64";
                        files[i].base = "Core/cuda/12.4";
                }
        }
        /* No tree yet: no names, and the sha of no index. */
        ck_assert_int_eq(index_names_read(out, &names, &d), 0);
        ck_assert_uint_eq(names.n, 0);
        ck_assert_str_eq(names.sha, "");
        write_ok(files, N_BASE, &(struct write_options){ .outdir = out, .planned_index_sha = "" }, &res);
        write_result_release(&res);
        index = slurp(out, ".cudamod-index.json");
        ck_assert_ptr_nonnull(strstr(index, "\"identity\": \"cuda 12.4.1 cuda12 x86_64\""));
        ck_assert_ptr_nonnull(strstr(index, "\"base\": \"Core/cuda/12.4\""));
        ck_assert_int_eq(index_names_read(out, &names, &d), 0);
        ck_assert_uint_eq(names.n, 3); /* the modulerc has no name */
        for (size_t i = 0; i < names.n; i++)
                if (streq(names.items[i].version, "9.7.1")) {
                        ck_assert_str_eq(names.items[i].dir, "CUDA/12/cudnn");
                        ck_assert_str_eq(names.items[i].install, "/opt/x");
                        ck_assert_str_eq(names.items[i].identity, "cuda 12.4.1 cuda12 x86_64");
                }
        ck_assert_uint_eq(strlen(names.sha), 64);
        /* Planned from the index before this one: refused. */
        memcpy(stale, names.sha, sizeof(stale));
        stale[0] = stale[0] == '0' ? '1' : '0';
        files[0].content = CUDA129;
        files[0].len = sizeof(CUDA129) - 1;
        ck_assert_int_eq(do_write(files, N_BASE,
                                  &(struct write_options){ .outdir = out, .planned_index_sha = stale,
                                                           .index_changed = &changed },
                                  &res, &d), -EAGAIN);
        ck_assert(changed);
        ck_assert_ptr_nonnull(strstr(d.message, "changed while this run was planning"));
        diag_release(&d);
        assert_content(out, "Core/cuda/12.4.lua", CUDA124);
        /* Planned from the index as it is: written. */
        write_ok(files, N_BASE, &(struct write_options){ .outdir = out, .planned_index_sha = names.sha }, &res);
        assert_content(out, "Core/cuda/12.4.lua", CUDA129);
        write_result_release(&res);
        index_names_release(&names);
        listing = snapshot(out);
        ck_assert_ptr_null(strstr(listing, ".cudamod-tmp."));
        fx_free(root);
}
END_TEST

START_TEST(write_modes_are_0644_and_0755_under_umask_022)
{
        check_modes(022, 0, 0644, 0755);
}
END_TEST

/* Root's cron under a hardened umask: the modes are still what users
 * need to load the modules, not 0600 and 0700. */
START_TEST(write_modes_are_0644_and_0755_under_umask_077)
{
        check_modes(077, 0, 0644, 0755);
}
END_TEST

/* The site's output_mode: files that mode, directories each read bit's
 * search bit, whatever the umask. */
START_TEST(write_modes_follow_the_configured_mode)
{
        check_modes(077, 0640, 0640, 0750);
        check_modes(0, 0600, 0600, 0700);
}
END_TEST

START_TEST(write_rerun_unchanged_touches_nothing)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *before = NULL, *after = NULL;
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        before = snapshot(out);
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        after = snapshot(out);
        ck_assert_int_eq(res.count[FILE_UNCHANGED], N_BASE);
        ck_assert_int_eq(res.n_files, N_BASE);
        /* Same inodes, same mtimes, index included. */
        ck_assert_str_eq(before, after);
        write_result_release(&res);
        fx_free(root);
}
END_TEST

START_TEST(write_update_renames_over_only_the_changed_file)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ struct gen_file *next = with_content("Core/cuda/12.4.lua", "-- cuda 12.4, new\n");
        struct stat changed0, other0, changed1, other1, index0, index1;
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        changed0 = stat_of(out, "Core/cuda/12.4.lua");
        other0 = stat_of(out, "Core/cuda/12.9.lua");
        index0 = stat_of(out, ".cudamod-index.json");
        write_ok(next, N_BASE, &(struct write_options){ .outdir = out }, &res);
        assert_status(&res, "Core/cuda/12.4.lua", FILE_UPDATED);
        ck_assert_int_eq(res.count[FILE_UPDATED], 1);
        ck_assert_int_eq(res.count[FILE_UNCHANGED], N_BASE - 1);
        changed1 = stat_of(out, "Core/cuda/12.4.lua");
        other1 = stat_of(out, "Core/cuda/12.9.lua");
        index1 = stat_of(out, ".cudamod-index.json");
        ck_assert(changed0.st_ino != changed1.st_ino);
        ck_assert(same_file_state(&other0, &other1));
        ck_assert(index0.st_ino != index1.st_ino);
        assert_content(out, "Core/cuda/12.4.lua", "-- cuda 12.4, new\n");
        write_result_release(&res);
        fx_free(root);
}
END_TEST

START_TEST(write_hand_edited_file_is_skipped_and_reported)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ struct gen_file *next = with_content("Core/cuda/12.4.lua", "-- cuda 12.4, new\n");
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        fx_write(out, "Core/cuda/12.4.lua", "-- my own edit\n");
        /* Whether or not the generated content changed. */
        for (int round = 0; round < 2; round++) {
                write_ok(round ? next : base, N_BASE, &(struct write_options){ .outdir = out }, &res);
                assert_status(&res, "Core/cuda/12.4.lua", FILE_SKIPPED_EDITED);
                ck_assert_int_eq(res.count[FILE_SKIPPED_EDITED], 1);
                ck_assert_int_eq(res.count[FILE_UNCHANGED], N_BASE - 1);
                assert_content(out, "Core/cuda/12.4.lua", "-- my own edit\n");
                write_result_release(&res);
        }
        fx_free(root);
}
END_TEST

START_TEST(write_force_overwrites_edited_file)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        fx_write(out, "Core/cuda/12.4.lua", "-- my own edit\n");
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out, .force = true }, &res);
        assert_status(&res, "Core/cuda/12.4.lua", FILE_UPDATED);
        assert_content(out, "Core/cuda/12.4.lua", CUDA124);
        write_result_release(&res);
        /* The index knows the new content: no longer edited. */
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        ck_assert_int_eq(res.count[FILE_UNCHANGED], N_BASE);
        write_result_release(&res);
        fx_free(root);
}
END_TEST

START_TEST(write_foreign_file_never_touched_even_with_force)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *index = NULL;
        struct write_result res;
        struct stat st0, st1;

        fx_write(out, "Core/cuda/12.4.lua", "-- written by the admin\n");
        st0 = stat_of(out, "Core/cuda/12.4.lua");
        for (int force = 0; force < 2; force++) {
                write_ok(base, N_BASE, &(struct write_options){ .outdir = out, .force = force, .prune = true },
                         &res);
                assert_status(&res, "Core/cuda/12.4.lua", FILE_SKIPPED_FOREIGN);
                ck_assert_int_eq(res.count[FILE_SKIPPED_FOREIGN], 1);
                write_result_release(&res);
        }
        st1 = stat_of(out, "Core/cuda/12.4.lua");
        ck_assert(same_file_state(&st0, &st1));
        assert_content(out, "Core/cuda/12.4.lua", "-- written by the admin\n");
        index = slurp(out, ".cudamod-index.json");
        ck_assert_ptr_null(strstr(index, "12.4.lua"));
        fx_free(root);
}
END_TEST

/* A symlink at a target is never followed, read or replaced. */
START_TEST(write_symlink_at_target_is_foreign)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *victim = path_join(root, "victim");
        _cleanup_free_ char *link = NULL;
        struct write_result res;
        char target[4096];
        ssize_t n;

        fx_write(root, "victim", "precious\n");
        fx_symlink(out, "Core/cuda/12.4.lua", victim);
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out, .force = true }, &res);
        assert_status(&res, "Core/cuda/12.4.lua", FILE_SKIPPED_FOREIGN);
        write_result_release(&res);
        assert_content(root, "victim", "precious\n");
        link = path_join(out, "Core/cuda/12.4.lua");
        n = readlink(link, target, sizeof(target) - 1);
        ck_assert_int_gt(n, 0);
        target[n] = '\0';
        ck_assert_str_eq(target, victim);
        fx_free(root);
}
END_TEST

/* A file an interrupted run left (or one copied in) that already has the
 * generated bytes becomes cudamod's. */
START_TEST(write_foreign_identical_file_is_adopted)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ struct gen_file *next = with_content("Core/cuda/12.4.lua", "-- cuda 12.4, new\n");
        struct write_result res;
        struct stat st0, st1;

        fx_write(out, "Core/cuda/12.4.lua", CUDA124);
        st0 = stat_of(out, "Core/cuda/12.4.lua");
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        assert_status(&res, "Core/cuda/12.4.lua", FILE_UNCHANGED);
        ck_assert_int_eq(res.count[FILE_CREATED], N_BASE - 1);
        write_result_release(&res);
        st1 = stat_of(out, "Core/cuda/12.4.lua");
        ck_assert(same_file_state(&st0, &st1));
        /* Now in the index: a change is an update. */
        write_ok(next, N_BASE, &(struct write_options){ .outdir = out }, &res);
        assert_status(&res, "Core/cuda/12.4.lua", FILE_UPDATED);
        write_result_release(&res);
        fx_free(root);
}
END_TEST

static const struct gen_file wide[] = {
        GEN("Core/cuda/12.4.lua", CUDA124, "cuda/12.4"),
        GEN("CUDA/12/cudnn/9.7.1.lua", CUDNN, "cudnn/9.7.1"),
        GEN("CUDA/11/cudnn/8.9.7.lua", "-- cudnn 8.9.7\n", "cudnn/8.9.7"),
        GEN("CUDA/11/nccl/2.18.lua", "-- nccl 2.18\n", "nccl/2.18"),
        GEN("Extra/a/b/c.lua", "-- deep\n", "c/1"),
};

START_TEST(write_prune_removes_stale_files_and_empty_dirs)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *index = NULL;
        struct write_result res;

        write_ok(wide, ELEMENTSOF(wide), &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        fx_write(out, "Extra/a/notes.txt", "not ours\n");
        /* Only the first two are still generated: three of five gone,
         * which takes force (write_prune_of_most_modules_needs_force). */
        write_ok(wide, 2, &(struct write_options){ .outdir = out, .prune = true, .force = true }, &res);
        ck_assert_int_eq(res.n_files, 5);
        assert_status(&res, "CUDA/11/cudnn/8.9.7.lua", FILE_PRUNED);
        assert_status(&res, "CUDA/11/nccl/2.18.lua", FILE_PRUNED);
        assert_status(&res, "Extra/a/b/c.lua", FILE_PRUNED);
        ck_assert_str_eq(res.files[0].path, "CUDA/11/cudnn/8.9.7.lua");
        ck_assert_str_eq(res.files[0].module, "cudnn/8.9.7");
        ck_assert_int_eq(res.count[FILE_PRUNED], 3);
        ck_assert_int_eq(res.count[FILE_UNCHANGED], 2);
        write_result_release(&res);
        ck_assert(!exists(out, "CUDA/11"));
        ck_assert(exists(out, "CUDA/12/cudnn/9.7.1.lua"));
        ck_assert(!exists(out, "Extra/a/b"));
        /* A directory holding a file cudamod did not write stays. */
        ck_assert(exists(out, "Extra/a/notes.txt"));
        index = slurp(out, ".cudamod-index.json");
        ck_assert_ptr_null(strstr(index, "CUDA/11"));
        ck_assert_ptr_null(strstr(index, "Extra"));
        fx_free(root);
}
END_TEST

/* A prune of more than half the modules the index lists is refused
 * without force, saying how many, and removes nothing; half is pruned. */
START_TEST(write_prune_of_most_modules_needs_force)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        struct write_result res;
        struct diag d = DIAG_INIT;

        write_ok(wide, 4, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        ck_assert_int_eq(do_write(wide, 1, &(struct write_options){ .outdir = out, .prune = true }, &res, &d),
                         -E2BIG);
        ck_assert_msg(d.message && strstr(d.message, "not pruning: 3 of the 4 modules in '") &&
                              strstr(d.message, "--force"), "%s", d.message);
        diag_release(&d);
        for (size_t i = 0; i < 4; i++)
                ck_assert_msg(exists(out, wide[i].path), "%s removed", wide[i].path);
        /* The same as a dry run: it says so before anything. */
        ck_assert_int_eq(do_write(wide, 1, &(struct write_options){ .outdir = out, .prune = true, .dry_run = true },
                                  &res, &d), -E2BIG);
        diag_release(&d);
        write_ok(wide, 2, &(struct write_options){ .outdir = out, .prune = true }, &res);
        ck_assert_int_eq(res.count[FILE_PRUNED], 2);
        write_result_release(&res);
        write_ok(wide, 1, &(struct write_options){ .outdir = out, .prune = true, .force = true }, &res);
        ck_assert_int_eq(res.count[FILE_PRUNED], 1);
        write_result_release(&res);
        fx_free(root);
}
END_TEST

/* An install the scan did not read whole (below or above a place it could
 * not read) keeps its modulefile as it is, stale or not, pruned or not,
 * and the modulerc beside it keeps the default it marks. */
START_TEST(write_holds_the_modules_and_default_of_unseen_installs)
{
        static const char RC124[] = "module_version(\"cuda/12.4\", \"default\")\n";
        static const char CUDA129B[] = "-- cuda 12.9, half seen\n";
        static const struct gen_file before[] = {
                { .path = "Core/cuda/12.4.lua", .content = CUDA124, .len = sizeof(CUDA124) - 1,
                  .install = "/opt/cuda-12.4", .module = "cuda/12.4" },
                { .path = "Core/cuda/12.9.lua", .content = CUDA129, .len = sizeof(CUDA129) - 1,
                  .install = "/opt/cuda-12.9", .module = "cuda/12.9" },
                { .path = "Core/cuda/.modulerc.lua", .content = RC, .len = sizeof(RC) - 1 },
        };
        /* lib64 unreadable: no 12.9 at all, the default moved to 12.4. */
        static const struct gen_file gone[] = {
                { .path = "Core/cuda/12.4.lua", .content = CUDA124, .len = sizeof(CUDA124) - 1,
                  .install = "/opt/cuda-12.4", .module = "cuda/12.4" },
                { .path = "Core/cuda/.modulerc.lua", .content = RC124, .len = sizeof(RC124) - 1 },
        };
        /* bin unreadable: a 12.9 from half its facts. */
        static const struct gen_file half[] = {
                { .path = "Core/cuda/12.4.lua", .content = CUDA124, .len = sizeof(CUDA124) - 1,
                  .install = "/opt/cuda-12.4", .module = "cuda/12.4" },
                { .path = "Core/cuda/12.9.lua", .content = CUDA129B, .len = sizeof(CUDA129B) - 1,
                  .install = "/opt/cuda-12.9", .module = "cuda/12.9" },
                { .path = "Core/cuda/.modulerc.lua", .content = RC124, .len = sizeof(RC124) - 1 },
        };
        const char *const lib64[] = { "/opt/cuda-12.9/lib64" }, *const opt[] = { "/opt" };
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *rc = NULL, *cuda = NULL;
        struct write_result res;

        write_ok(before, ELEMENTSOF(before), &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        write_ok(gone, ELEMENTSOF(gone),
                 &(struct write_options){ .outdir = out, .prune = true, .force = true, .unseen = lib64, .n_unseen = 1 },
                 &res);
        assert_status(&res, "Core/cuda/12.9.lua", FILE_STALE);
        assert_status(&res, "Core/cuda/.modulerc.lua", FILE_HELD);
        assert_status(&res, "Core/cuda/12.4.lua", FILE_UNCHANGED);
        /* Which place not read is why. */
        for (size_t i = 0; i < res.n_files; i++)
                if (res.files[i].status == FILE_HELD)
                        ck_assert_str_eq(res.files[i].held_by, lib64[0]);
                else
                        ck_assert_ptr_null(res.files[i].held_by);
        write_result_release(&res);
        rc = slurp(out, "Core/cuda/.modulerc.lua");
        ck_assert_str_eq(rc, RC);
        ck_assert(exists(out, "Core/cuda/12.9.lua"));

        write_ok(half, ELEMENTSOF(half), &(struct write_options){ .outdir = out, .unseen = opt, .n_unseen = 1 }, &res);
        assert_status(&res, "Core/cuda/12.9.lua", FILE_HELD);
        assert_status(&res, "Core/cuda/.modulerc.lua", FILE_HELD);
        ck_assert_int_eq(res.count[FILE_HELD], 2);
        write_result_release(&res);
        cuda = slurp(out, "Core/cuda/12.9.lua");
        ck_assert_str_eq(cuda, CUDA129);

        /* Seen whole again: both change. */
        write_ok(half, ELEMENTSOF(half), &(struct write_options){ .outdir = out }, &res);
        assert_status(&res, "Core/cuda/12.9.lua", FILE_UPDATED);
        assert_status(&res, "Core/cuda/.modulerc.lua", FILE_UPDATED);
        write_result_release(&res);
        fx_free(root);
}
END_TEST

START_TEST(write_prune_keeps_edited_stale_unless_force)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        struct write_result res;

        write_ok(wide, 3, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        fx_write(out, "CUDA/11/cudnn/8.9.7.lua", "-- edited\n");
        write_ok(wide, 2, &(struct write_options){ .outdir = out, .prune = true }, &res);
        assert_status(&res, "CUDA/11/cudnn/8.9.7.lua", FILE_SKIPPED_EDITED);
        ck_assert_int_eq(res.count[FILE_PRUNED], 0);
        write_result_release(&res);
        assert_content(out, "CUDA/11/cudnn/8.9.7.lua", "-- edited\n");
        write_ok(wide, 2, &(struct write_options){ .outdir = out, .prune = true, .force = true }, &res);
        assert_status(&res, "CUDA/11/cudnn/8.9.7.lua", FILE_PRUNED);
        write_result_release(&res);
        ck_assert(!exists(out, "CUDA/11"));
        fx_free(root);
}
END_TEST

START_TEST(write_stale_without_prune_is_kept_and_reported)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *index = NULL;
        struct write_result res;

        write_ok(wide, 3, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        for (int round = 0; round < 2; round++) {
                write_ok(wide, 2, &(struct write_options){ .outdir = out }, &res);
                assert_status(&res, "CUDA/11/cudnn/8.9.7.lua", FILE_STALE);
                ck_assert_int_eq(res.count[FILE_STALE], 1);
                ck_assert_int_eq(res.count[FILE_UNCHANGED], 2);
                write_result_release(&res);
        }
        ck_assert(exists(out, "CUDA/11/cudnn/8.9.7.lua"));
        index = slurp(out, ".cudamod-index.json");
        ck_assert_ptr_nonnull(strstr(index, "CUDA/11/cudnn/8.9.7.lua"));
        fx_free(root);
}
END_TEST

START_TEST(write_prune_forgets_files_already_gone)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *index = NULL;
        _cleanup_free_ char *gone = NULL;
        struct write_result res;

        write_ok(wide, 3, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        gone = path_join(out, "CUDA/11/cudnn/8.9.7.lua");
        ck_assert_int_eq(unlink(gone), 0);
        write_ok(wide, 2, &(struct write_options){ .outdir = out, .prune = true }, &res);
        assert_status(&res, "CUDA/11/cudnn/8.9.7.lua", FILE_PRUNED);
        write_result_release(&res);
        index = slurp(out, ".cudamod-index.json");
        ck_assert_ptr_null(strstr(index, "CUDA/11"));
        fx_free(root);
}
END_TEST

/* A state with every kind of difference, for the dry-run tests. */
static const struct gen_file changed[] = {
        GEN("CUDA/12/cudnn/9.7.1.lua", "-- cudnn 9.7.1\nfamily(\"cudnn\")\nconflict(\"x\")\n", "cudnn/9.7.1"),
        GEN("Core/cuda/.modulerc.lua", RC, NULL),
        GEN("Core/cuda/12.4.lua", CUDA124, "cuda/12.4"),
        GEN("Core/cuda/13.0.lua", "-- cuda 13.0\n", "cuda/13.0"),
};

static void make_messy_tree(const char *out)
{
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        fx_write(out, "Core/cuda/.modulerc.lua", "-- edited\n");
        fx_write(out, "Core/cuda/.cudamod-tmp.12.4.lua.AbC123", "partial");
}

START_TEST(write_dry_run_and_check_change_nothing)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *before = NULL;
        struct write_result res, real;
        char *buf = NULL;
        size_t len = 0;

        make_messy_tree(out);
        before = snapshot(root);
        for (int mode = 0; mode < 4; mode++) {
                _cleanup_free_ char *after = NULL;
                FILE *f = open_memstream(&buf, &len);
                struct write_options o = { .outdir = out, .dry_run = mode & 1, .check = !(mode & 1),
                                           .prune = true, .force = mode >= 2, .diff_out = f };

                write_ok(changed, ELEMENTSOF(changed), &o, &res);
                fclose(f);
                free(buf);
                after = snapshot(root);
                ck_assert_str_eq(before, after);
                assert_status(&res, "Core/cuda/12.9.lua", FILE_PRUNED);
                assert_status(&res, "Core/cuda/13.0.lua", FILE_CREATED);
                assert_status(&res, "CUDA/12/cudnn/9.7.1.lua", FILE_UPDATED);
                assert_status(&res, "Core/cuda/.modulerc.lua", mode >= 2 ? FILE_UPDATED : FILE_SKIPPED_EDITED);
                write_result_release(&res);
        }
        /* The statuses are what a real run does. */
        write_ok(changed, ELEMENTSOF(changed), &(struct write_options){ .outdir = out, .prune = true }, &real);
        ck_assert_int_eq(real.count[FILE_PRUNED], 1);
        ck_assert_int_eq(real.count[FILE_CREATED], 1);
        ck_assert_int_eq(real.count[FILE_UPDATED], 1);
        ck_assert_int_eq(real.count[FILE_SKIPPED_EDITED], 1);
        ck_assert_int_eq(real.count[FILE_UNCHANGED], 1);
        write_result_release(&real);
        fx_free(root);
}
END_TEST

START_TEST(write_dry_run_prints_diffs)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        struct write_result res;
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        make_messy_tree(out);
        f = open_memstream(&buf, &len);
        write_ok(changed, ELEMENTSOF(changed),
                 &(struct write_options){ .outdir = out, .dry_run = true, .prune = true, .diff_out = f }, &res);
        fclose(f);
        /* Edited files get no diff; created, updated and pruned ones do,
         * in path order. */
        ck_assert_str_eq(buf,
                         "--- a/CUDA/12/cudnn/9.7.1.lua\n"
                         "+++ b/CUDA/12/cudnn/9.7.1.lua\n"
                         "@@ -1,2 +1,3 @@\n"
                         " -- cudnn 9.7.1\n"
                         " family(\"cudnn\")\n"
                         "+conflict(\"x\")\n"
                         "--- a/Core/cuda/12.9.lua\n"
                         "+++ /dev/null\n"
                         "@@ -1,2 +0,0 @@\n"
                         "--- cuda 12.9\n"
                         "-setenv(\"CUDA_HOME\", \"/opt/cuda-12.9\")\n"
                         "--- /dev/null\n"
                         "+++ b/Core/cuda/13.0.lua\n"
                         "@@ -0,0 +1 @@\n"
                         "+-- cuda 13.0\n");
        free(buf);
        write_result_release(&res);
        fx_free(root);
}
END_TEST

/* Nothing is created for a dry run: not the directory, not the lock. */
START_TEST(write_dry_run_creates_no_directory_or_lock)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out/sub");
        _cleanup_free_ char *empty = path_join(root, "empty");
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out, .dry_run = true }, &res);
        ck_assert_int_eq(res.count[FILE_CREATED], N_BASE);
        write_result_release(&res);
        ck_assert(!exists(root, "out"));
        fx_mkdir(root, "empty");
        write_ok(base, N_BASE, &(struct write_options){ .outdir = empty, .check = true }, &res);
        ck_assert_int_eq(res.count[FILE_CREATED], N_BASE);
        write_result_release(&res);
        ck_assert(!exists(empty, ".cudamod.lock"));
        fx_free(root);
}
END_TEST

START_TEST(write_removes_leftover_temp_files)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *decoy = path_join(root, "decoy");
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        fx_write(out, "Core/cuda/.cudamod-tmp.12.4.lua.AbC123", "partial");
        fx_write(out, ".cudamod-tmp..cudamod-index.json.XyZ789", "{");
        fx_write(out, "CUDA/12/cudnn/.cudamod-tmp.9.7.1.lua.Qq1234", "");
        fx_write(out, "Unrelated/.cudamod-tmp.x.lua.Aa0000", "not in a generated directory");
        fx_write(root, "decoy", "keep\n");
        fx_symlink(out, "Core/cuda/.cudamod-tmp.link.Zz9999", decoy);
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        ck_assert_int_eq(res.count[FILE_UNCHANGED], N_BASE);
        write_result_release(&res);
        ck_assert(!exists(out, "Core/cuda/.cudamod-tmp.12.4.lua.AbC123"));
        ck_assert(!exists(out, ".cudamod-tmp..cudamod-index.json.XyZ789"));
        ck_assert(!exists(out, "CUDA/12/cudnn/.cudamod-tmp.9.7.1.lua.Qq1234"));
        ck_assert(exists(out, "Unrelated/.cudamod-tmp.x.lua.Aa0000"));
        /* Only regular files: a link is not something cudamod made. */
        ck_assert(exists(out, "Core/cuda/.cudamod-tmp.link.Zz9999"));
        assert_content(root, "decoy", "keep\n");
        fx_free(root);
}
END_TEST

START_TEST(write_refuses_invalid_paths)
{
        static const struct {
                const char *path;
                const char *path2;
                const char *message;
        } cases[] = {
                { "/etc/passwd", NULL, "absolute path" },
                { "../escape.lua", NULL, "'.' or '..' component" },
                { "Core/../../escape.lua", NULL, "'.' or '..' component" },
                { "Core/./x.lua", NULL, "'.' or '..' component" },
                { "Core//x.lua", NULL, "empty path component" },
                { "Core/x/", NULL, "empty path component" },
                { "", NULL, "empty path" },
                { "Core/\xff.lua", NULL, "not valid UTF-8" },
                { ".cudamod-index.json", NULL, "reserved name" },
                { ".cudamod.lock", NULL, "reserved name" },
                { "Core/.cudamod-tmp.x", NULL, "reserved name" },
                { "Core/x.lua", "Core/x.lua", "duplicate output path 'Core/x.lua'" },
                { "Core/x", "Core/x/y.lua", "'Core/x' is also a directory of 'Core/x/y.lua'" },
                { NULL, NULL, NULL },
        };

        for (size_t i = 0; cases[i].path; i++) {
                char *root = fx_new();
                _cleanup_free_ char *before = snapshot(root), *after = NULL;
                _cleanup_free_ char *out = path_join(root, "out");
                struct gen_file f[3] = { GEN("Core/ok.lua", "ok\n", NULL), GEN("", "x\n", NULL),
                                         GEN("Core/x-z.lua", "z\n", NULL) };
                struct write_result res;
                struct diag d = DIAG_INIT;
                size_t n = 2;
                int r;

                f[1].path = cases[i].path;
                if (cases[i].path2) {
                        f[0].path = cases[i].path2;
                        n = 3;
                }
                r = do_write(f, n, &(struct write_options){ .outdir = out }, &res, &d);
                ck_assert_msg(r == -EINVAL, "%s: %d", cases[i].path, r);
                ck_assert_msg(d.message && strstr(d.message, cases[i].message), "%s: '%s'", cases[i].path,
                              d.message);
                after = snapshot(root);
                ck_assert_str_eq(before, after);
                diag_release(&d);
                fx_free(root);
        }
}
END_TEST

START_TEST(write_refuses_symlinked_component)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *elsewhere = path_join(root, "elsewhere");
        struct write_result res;

        fx_mkdir(root, "elsewhere");
        fx_symlink(out, "Core", elsewhere);
        for (int dry = 0; dry < 2; dry++) {
                struct diag d = DIAG_INIT;
                int r = do_write(base, N_BASE, &(struct write_options){ .outdir = out, .dry_run = dry }, &res, &d);

                ck_assert_int_eq(r, -ELOOP);
                ck_assert_str_eq(d.message, "'Core' is a symlink; refusing to write through it");
                ck_assert_str_eq(d.file, out);
                diag_release(&d);
        }
        /* Nothing went through the link, nor was anything written before
         * the problem was found. */
        ck_assert(!exists(elsewhere, "cuda"));
        ck_assert(!exists(out, "CUDA"));
        fx_free(root);
}
END_TEST

START_TEST(write_component_that_is_a_file_is_an_error)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        struct write_result res;
        struct diag d = DIAG_INIT;
        int r;

        fx_write(out, "Core/cuda", "a file\n");
        r = do_write(base, N_BASE, &(struct write_options){ .outdir = out }, &res, &d);
        ck_assert_int_eq(r, -ENOTDIR);
        ck_assert_str_eq(d.message, "'Core/cuda' exists and is not a directory");
        assert_content(out, "Core/cuda", "a file\n");
        diag_release(&d);
        fx_free(root);
}
END_TEST

START_TEST(write_outdir_that_is_a_file_is_an_error)
{
        char *root = fx_new();
        _cleanup_free_ char *file = path_join(root, "file");
        _cleanup_free_ char *below = path_join(root, "file/sub/out");
        _cleanup_free_ char *want = xasprintf("'%s' exists and is not a directory", file);
        const char *outs[] = { file, below };

        fx_write(root, "file", "x\n");
        for (size_t i = 0; i < ELEMENTSOF(outs); i++)
                for (int dry = 0; dry < 2; dry++) {
                        struct write_result res;
                        struct diag d = DIAG_INIT;
                        int r = do_write(base, N_BASE, &(struct write_options){ .outdir = outs[i], .dry_run = dry },
                                         &res, &d);

                        ck_assert_int_eq(r, -ENOTDIR);
                        ck_assert_str_eq(d.message, want);
                        diag_release(&d);
                }
        assert_content(root, "file", "x\n");
        fx_free(root);
}
END_TEST

/* Run write_tree in a child, as nobody when we are root; its return value
 * and message come back. */
static int write_as_nobody(const char *outdir, char **ret_message)
{
        int p[2], status;
        struct strbuf msg = STRBUF_INIT;
        char buf[512];
        ssize_t n;
        pid_t pid;

        ck_assert_int_eq(pipe(p), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct write_result res = { 0 };
                struct diag d = DIAG_INIT;
                int r;

                close(p[0]);
                if (can_drop_privileges() && (setgid(65534) < 0 || setuid(65534) < 0))
                        _exit(100);
                r = write_tree(base, N_BASE, &(struct write_options){ .outdir = outdir }, &res, &d);
                if (d.message && write(p[1], d.message, strlen(d.message)) < 0)
                        _exit(101);
                diag_release(&d);
                write_result_release(&res);
                _exit(-r);
        }
        close(p[1]);
        while ((n = read(p[0], buf, sizeof(buf))) > 0)
                strbuf_add(&msg, buf, (size_t)n);
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_lt(WEXITSTATUS(status), 100);
        *ret_message = strbuf_detach(&msg);
        return -WEXITSTATUS(status);
}

START_TEST(write_unwritable_outdir_is_an_error)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *message = NULL, *want = NULL;
        int r;

        fx_mkdir(root, "out");
        if (!can_drop_privileges())
                ck_assert_int_eq(chmod(out, 0555), 0);
        r = write_as_nobody(out, &message);
        ck_assert_int_eq(r, -EACCES);
        want = xasprintf("cannot create lock file '%s/.cudamod.lock': Permission denied", out);
        ck_assert_str_eq(message, want);
        ck_assert(!exists(out, "Core"));
        fx_free(root);
}
END_TEST

/* An output directory reached through a symlink in a directory others
 * may write (not sticky) is refused: they could have made it, and root
 * would write where it points. One of the caller's, in a directory of
 * theirs, is followed. */
START_TEST(write_outdir_through_a_planted_symlink_is_refused)
{
        char *root = fx_new();
        _cleanup_free_ char *pub = path_join(root, "pub"), *victim = path_join(root, "victim");
        _cleanup_free_ char *out = path_join(root, "pub/out"), *linked = path_join(root, "linked");
        struct write_result res;
        struct diag d = DIAG_INIT;

        fx_mkdir(root, "victim");
        fx_mkdir(root, "pub");
        ck_assert_int_eq(chmod(pub, 0777), 0);
        fx_symlink(root, "pub/out", victim);
        ck_assert_int_eq(do_write(base, N_BASE, &(struct write_options){ .outdir = out }, &res, &d), -ELOOP);
        ck_assert_msg(strstr(d.message, "/pub/out' is a symlink another user could have made or replaced"),
                      "%s", d.message);
        diag_release(&d);
        ck_assert(!exists(victim, "Core"));
        ck_assert(!exists(victim, ".cudamod.lock"));
        ck_assert(!exists(victim, ".cudamod-index.json"));
        fx_symlink(root, "linked", "victim");
        write_ok(base, N_BASE, &(struct write_options){ .outdir = linked }, &res);
        write_result_release(&res);
        ck_assert(exists(victim, "Core/cuda/12.4.lua"));
        fx_free(root);
}
END_TEST

START_TEST(write_uncreatable_outdir_is_an_error)
{
        char *root = fx_new();
        _cleanup_free_ char *ro = path_join(root, "ro");
        _cleanup_free_ char *out = path_join(root, "ro/new/out");
        _cleanup_free_ char *message = NULL, *want = NULL;
        int r;

        fx_mkdir(root, "ro");
        if (!can_drop_privileges())
                ck_assert_int_eq(chmod(ro, 0555), 0);
        r = write_as_nobody(out, &message);
        ck_assert_int_eq(r, -EACCES);
        want = xasprintf("cannot create output directory '%s': Permission denied", out);
        ck_assert_str_eq(message, want);
        ck_assert(!exists(root, "ro/new"));
        fx_free(root);
}
END_TEST

START_TEST(write_corrupt_index_is_an_error_with_position)
{
        static const struct {
                const char *text;
                unsigned line;
                const char *message;
        } cases[] = {
                { "{\n  \"cudamod\": \"0.1.0\",\n  \"files\": {\n    \"a\": {},\n  }\n}\n", 5, "corrupt index: " },
                { "", 1, "corrupt index: " },
                { "{\"files\": []}\n", 0, "corrupt index: no \"files\" object" },
                { "[]\n", 0, "corrupt index: no \"files\" object" },
                { "{\"files\": {\"a.lua\": {\"sha256\": \"xyz\"}}}\n", 0, "malformed entry for 'a.lua'" },
                { "{\"files\": {\"a.lua\": 3}}\n", 0, "malformed entry for 'a.lua'" },
                /* An index must not lead a prune outside the tree. */
                { "{\"files\": {\"../victim\": {\"sha256\": "
                  "\"0000000000000000000000000000000000000000000000000000000000000000\"}}}\n",
                  0, "invalid path '../victim'" },
                { "{\"files\": {}}\n\0", 2, "NUL byte" },
                { NULL, 0, NULL },
        };

        for (size_t i = 0; cases[i].text; i++) {
                char *root = fx_new();
                _cleanup_free_ char *out = path_join(root, "out");
                _cleanup_free_ char *index = path_join(out, ".cudamod-index.json");
                _cleanup_free_ char *before = NULL, *after = NULL;
                struct write_result res;
                size_t len = strlen(cases[i].text) + (strstr(cases[i].message, "NUL") ? 1 : 0);
                FILE *f;

                fx_write(root, "victim", "keep\n");
                fx_mkdir(root, "out");
                f = fopen(index, "we");
                ck_assert_ptr_nonnull(f);
                ck_assert_int_eq(fwrite(cases[i].text, 1, len, f), len);
                ck_assert_int_eq(fclose(f), 0);
                before = snapshot(root);
                for (int dry = 0; dry < 2; dry++) {
                        struct diag d = DIAG_INIT;
                        int r = do_write(base, N_BASE,
                                         &(struct write_options){ .outdir = out, .dry_run = dry, .prune = true,
                                                                  .force = true },
                                         &res, &d);
                        ck_assert_msg(r == -EBADMSG, "case %zu: %d", i, r);
                        ck_assert_str_eq(d.file, index);
                        ck_assert_msg(d.line == cases[i].line, "case %zu: line %u", i, d.line);
                        if (cases[i].line)
                                ck_assert_uint_gt(d.col, 0);
                        ck_assert_msg(strstr(d.message, cases[i].message), "case %zu: '%s'", i, d.message);
                        ck_assert_ptr_nonnull(strstr(d.message, "remove it to start over"));
                        diag_release(&d);
                }
                /* Nothing but the lock appeared. */
                after = snapshot(root);
                ck_assert(strlen(after) > strlen(before));
                assert_content(root, "victim", "keep\n");
                ck_assert(!exists(out, "Core"));
                fx_free(root);
        }
}
END_TEST

/* Starting over: files identical to the generated ones are adopted, the
 * others are foreign. */
START_TEST(write_removed_index_adopts_identical_files)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *index = path_join(out, ".cudamod-index.json");
        struct write_result res;

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        fx_write(out, "Core/cuda/12.9.lua", "-- edited\n");
        ck_assert_int_eq(unlink(index), 0);
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        ck_assert_int_eq(res.count[FILE_UNCHANGED], N_BASE - 1);
        assert_status(&res, "Core/cuda/12.9.lua", FILE_SKIPPED_FOREIGN);
        write_result_release(&res);
        ck_assert(exists(out, ".cudamod-index.json"));
        fx_free(root);
}
END_TEST

static unsigned wait_calls;
static char *wait_path, *wait_holder;

static void on_wait(const char *lock_path, const char *holder, bool by_cudamod, void *userdata)
{
        wait_calls++;
        free(wait_path);
        wait_path = xstrdup(lock_path);
        free(wait_holder);
        wait_holder = holder ? xstrdup(holder) : NULL;
        /* The holder is this test's child: not a cudamod run. */
        ck_assert(!by_cudamod);
        ck_assert_ptr_eq(userdata, &wait_calls);
}

static void release_lock(pid_t pid)
{
        int status;

        kill(pid, SIGKILL);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
}

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(write_waits_for_the_lock)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *lock = path_join(out, ".cudamod.lock");
        struct write_result res;
        int p[2], status;
        double t0;
        pid_t pid;
        char c;

        fx_mkdir(root, "out");
        ck_assert_int_eq(pipe(p), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
                if (fd < 0 || flock(fd, LOCK_EX) < 0 || write(p[1], "x", 1) != 1)
                        _exit(1);
                usleep(200 * 1000);
                _exit(0);
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &c, 1), 1);
        close(p[0]);
        wait_calls = 0;
        t0 = now();
        write_ok(base, N_BASE,
                 &(struct write_options){ .outdir = out, .on_wait = on_wait, .userdata = &wait_calls }, &res);
        ck_assert_int_eq(wait_calls, 1);
        ck_assert_str_eq(wait_path, lock);
        {
                /* Named by its PID, from /proc/locks. */
                _cleanup_free_ char *want = xasprintf("PID %ld (", (long)pid);
                ck_assert_msg(wait_holder && strncmp(wait_holder, want, strlen(want)) == 0, "holder: %s",
                              wait_holder ? wait_holder : "(null)");
        }
        ck_assert(now() - t0 > 0.1);
        ck_assert_int_eq(res.count[FILE_CREATED], N_BASE);
        write_result_release(&res);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        /* The lock file stays; a free lock means no waiting. */
        ck_assert(exists(out, ".cudamod.lock"));
        write_ok(base, N_BASE,
                 &(struct write_options){ .outdir = out, .on_wait = on_wait, .userdata = &wait_calls }, &res);
        ck_assert_int_eq(wait_calls, 1);
        write_result_release(&res);
        free(wait_path);
        wait_path = NULL;
        free(wait_holder);
        wait_holder = NULL;
        fx_free(root);
}
END_TEST

/* A held lock ends the wait after lock_timeout seconds (or at once when
 * negative) with -ETIMEDOUT, the holder's PID in the message, and nothing
 * written; also for a check. */
START_TEST(write_lock_timeout_names_the_holder)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *lock = path_join(out, ".cudamod.lock");
        _cleanup_free_ char *want = NULL;
        struct write_result res;
        struct diag d = DIAG_INIT;
        double t0;
        pid_t pid;

        fx_mkdir(root, "out");
        pid = hold_lock(lock);
        want = xasprintf("is still locked by PID %ld (", (long)pid);
        t0 = now();
        ck_assert_int_eq(do_write(base, N_BASE, &(struct write_options){ .outdir = out, .lock_timeout = 1 }, &res, &d),
                         -ETIMEDOUT);
        ck_assert(now() - t0 >= 0.9 && now() - t0 < 10);
        ck_assert_msg(strstr(d.message, want) && strstr(d.message, "after 1 s"), "%s", d.message);
        diag_release(&d);
        ck_assert(!exists(out, "Core"));
        ck_assert_int_eq(do_write(base, N_BASE,
                                  &(struct write_options){ .outdir = out, .check = true, .lock_timeout = 1 }, &res, &d),
                         -ETIMEDOUT);
        diag_release(&d);
        t0 = now();
        ck_assert_int_eq(do_write(base, N_BASE, &(struct write_options){ .outdir = out, .lock_timeout = -1 }, &res, &d),
                         -ETIMEDOUT);
        ck_assert(now() - t0 < 0.5);
        ck_assert_msg(strstr(d.message, "not waiting"), "%s", d.message);
        diag_release(&d);
        release_lock(pid);
        fx_free(root);
}
END_TEST

static mode_t mode_of(const char *path)
{
        struct stat st;

        ck_assert_int_eq(stat(path, &st), 0);
        return st.st_mode & 07777;
}

/* The lock file is created 0600 (whatever the umask lets through), and
 * one of ours readable by others is tightened, also by a check; one that
 * others may write (they could hold it open), or that has another name
 * elsewhere, is refused by a write and left as it is. */
START_TEST(write_lock_file_is_private)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *lock = path_join(out, ".cudamod.lock");
        _cleanup_free_ char *other = path_join(root, "other");
        struct write_result res;
        struct diag d = DIAG_INIT;
        mode_t mask = umask(0);

        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        umask(mask);
        ck_assert_uint_eq(mode_of(lock), 0600);
        ck_assert_int_eq(chmod(lock, 0644), 0);
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out, .check = true }, &res);
        write_result_release(&res);
        ck_assert_uint_eq(mode_of(lock), 0600);
        ck_assert_int_eq(chmod(lock, 0666), 0);
        ck_assert_int_eq(do_write(base, N_BASE, &(struct write_options){ .outdir = out, .lock_timeout = -1 }, &res, &d),
                         -EPERM);
        ck_assert_msg(strstr(d.message, "/out/.cudamod.lock' is mode 0666: others may write it; refusing to use it") &&
                      strstr(d.message, "remove it"), "%s", d.message);
        diag_release(&d);
        ck_assert_uint_eq(mode_of(lock), 0666);
        /* A check reads without it. */
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out, .check = true }, &res);
        write_result_release(&res);
        ck_assert_int_eq(chmod(lock, 0600), 0);
        ck_assert_int_eq(link(lock, other), 0);
        ck_assert_int_eq(do_write(base, N_BASE, &(struct write_options){ .outdir = out, .lock_timeout = -1 }, &res, &d),
                         -EPERM);
        ck_assert_msg(strstr(d.message, "has 2 links"), "%s", d.message);
        diag_release(&d);
        fx_free(root);
}
END_TEST

/* A lock file another user made in an output directory they may write
 * (a shared flock on it would hold root's runs off for ever) is refused
 * at once, its owner named, and never removed; the caller's own lock
 * file is made O_EXCL when missing. Needs root (chown). */
START_TEST(write_lock_file_of_another_owner_is_refused)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *lock = path_join(out, ".cudamod.lock");
        struct write_result res;
        struct diag d = DIAG_INIT;
        struct stat st;
        int fd;

        if (!can_drop_privileges()) {
                fx_free(root);
                return;
        }
        fx_mkdir(root, "out");
        fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(chown(lock, 65534, 65534), 0);
        ck_assert_int_eq(do_write(base, N_BASE, &(struct write_options){ .outdir = out, .lock_timeout = 5 }, &res, &d),
                         -EPERM);
        ck_assert_msg(strstr(d.message, "/out/.cudamod.lock' belongs to ") && strstr(d.message, "(uid 65534), not to ") &&
                      strstr(d.message, "(uid 0) who runs cudamod; refusing to use it") &&
                      strstr(d.message, "remove it"), "%s", d.message);
        diag_release(&d);
        /* Left for the admin to look at; nothing written. */
        ck_assert_int_eq(lstat(lock, &st), 0);
        ck_assert_uint_eq(st.st_uid, 65534);
        ck_assert(!exists(out, "Core"));
        /* A check reads without it. */
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out, .check = true, .lock_timeout = -1 }, &res);
        write_result_release(&res);
        /* Removed, the next run makes its own. */
        ck_assert_int_eq(unlink(lock), 0);
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        ck_assert_int_eq(lstat(lock, &st), 0);
        ck_assert_uint_eq(st.st_uid, geteuid());
        ck_assert_uint_eq(st.st_mode & 07777, 0600);
        fx_free(root);
}
END_TEST

/* Another user can neither take the lock of a root-owned tree (0600,
 * flock needs a descriptor and they get none) nor so make root's run
 * wait; their own runs that write fail at once, their checks go without
 * the lock. */
START_TEST(write_lock_of_another_user_cannot_be_held)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out");
        _cleanup_free_ char *lock = path_join(out, ".cudamod.lock");
        struct write_result res;
        int p[2], status;
        pid_t pid;
        char c;

        if (!can_drop_privileges()) {
                fx_free(root);
                return;
        }
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        ck_assert_int_eq(chmod(lock, 0644), 0); /* as an earlier version made it */
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        ck_assert_int_eq(pipe(p), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct write_result cres = { 0 };
                struct diag d = DIAG_INIT;
                int fd, ok = 1;

                if (setgid(65534) < 0 || setuid(65534) < 0)
                        _exit(3);
                fd = open(lock, O_RDONLY | O_CLOEXEC);
                if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
                        ok = 0; /* it would hold every run off */
                if (write_tree(base, N_BASE, &(struct write_options){ .outdir = out }, &cres, &d) != -EACCES ||
                    !d.message || !strstr(d.message, "cannot open lock file '") ||
                    !strstr(d.message, "read-write: Permission denied"))
                        ok = 0;
                diag_release(&d);
                if (write_tree(base, N_BASE, &(struct write_options){ .outdir = out, .check = true, .lock_timeout = -1 },
                               &cres, &d) != 0)
                        ok = 0;
                write_result_release(&cres);
                diag_release(&d);
                /* Stay alive while root's run goes. */
                if (write(p[1], ok ? "y" : "n", 1) != 1)
                        _exit(4);
                usleep(300 * 1000);
                _exit(ok ? 0 : 1);
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &c, 1), 1);
        close(p[0]);
        wait_calls = 0;
        write_ok(base, N_BASE,
                 &(struct write_options){ .outdir = out, .lock_timeout = -1, .on_wait = on_wait, .userdata = &wait_calls },
                 &res);
        ck_assert_int_eq(wait_calls, 0);
        write_result_release(&res);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: %c, status %d", c, status);
        fx_free(root);
}
END_TEST

START_TEST(write_index_bytes_are_deterministic)
{
        char *root = fx_new();
        _cleanup_free_ char *a = path_join(root, "a"), *b = path_join(root, "b");
        _cleanup_free_ char *ia = NULL, *ib = NULL, *want = NULL;
        struct gen_file reversed[N_BASE];
        struct write_result res;
        char s1[65], s2[65], s3[65], s4[65];

        for (size_t i = 0; i < N_BASE; i++)
                reversed[i] = base[N_BASE - 1 - i];
        write_ok(base, N_BASE, &(struct write_options){ .outdir = a }, &res);
        write_result_release(&res);
        write_ok(reversed, N_BASE, &(struct write_options){ .outdir = b }, &res);
        write_result_release(&res);
        ia = slurp(a, ".cudamod-index.json");
        ib = slurp(b, ".cudamod-index.json");
        ck_assert_str_eq(ia, ib);
        sha256_hex(CUDNN, strlen(CUDNN), s1);
        sha256_hex(RC, strlen(RC), s2);
        sha256_hex(CUDA124, strlen(CUDA124), s3);
        sha256_hex(CUDA129, strlen(CUDA129), s4);
        want = xasprintf("{\n"
                         "  \"cudamod\": \"%s\",\n"
                         "  \"files\": {\n"
                         "    \"CUDA/12/cudnn/9.7.1.lua\": {\n"
                         "      \"install\": \"/opt/x\",\n"
                         "      \"module\": \"cudnn/9.7.1\",\n"
                         "      \"sha256\": \"%s\"\n"
                         "    },\n"
                         "    \"Core/cuda/.modulerc.lua\": {\n"
                         "      \"install\": \"/opt/x\",\n"
                         "      \"sha256\": \"%s\"\n"
                         "    },\n"
                         "    \"Core/cuda/12.4.lua\": {\n"
                         "      \"install\": \"/opt/x\",\n"
                         "      \"module\": \"cuda/12.4\",\n"
                         "      \"sha256\": \"%s\"\n"
                         "    },\n"
                         "    \"Core/cuda/12.9.lua\": {\n"
                         "      \"install\": \"/opt/x\",\n"
                         "      \"module\": \"cuda/12.9\",\n"
                         "      \"sha256\": \"%s\"\n"
                         "    }\n"
                         "  }\n"
                         "}\n",
                         CUDAMOD_VERSION, s1, s2, s3, s4);
        ck_assert_str_eq(ia, want);
        fx_free(root);
}
END_TEST

/* The "validation" member of dir's index (a new reference), or NULL. */
static json_t *index_member(const char *dir)
{
        _cleanup_free_ char *text = slurp(dir, ".cudamod-index.json");
        json_error_t e;
        json_t *index = json_loads(text, 0, &e), *v;

        ck_assert_msg(index != NULL, "the index is not JSON (%s): %s", e.text, text);
        ck_assert_uint_eq(json_object_size(json_object_get(index, "files")), N_BASE);
        v = json_incref(json_object_get(index, "validation"));
        json_decref(index);
        return v;
}

START_TEST(write_index_validation_is_kept_by_later_writes)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "out"), *empty = path_join(root, "empty");
        _cleanup_(json_decrefp) json_t *v = json_pack("{s:s, s:[{s:s}]}", "arch_list", "8.0;9.0", "targets",
                                                       "name", "a100");
        _cleanup_(json_decrefp) json_t *v2 = json_pack("{s:s}", "arch_list", "9.0");
        struct stat before[N_BASE], after;
        struct write_result res;
        struct diag d = DIAG_INIT;
        json_t *got;

        /* Not a directory generate wrote: refused. */
        fx_mkdir(root, "empty");
        ck_assert_int_eq(write_index_validation(empty, v, NULL, &d), -ENOENT);
        ck_assert_ptr_nonnull(strstr(d.message, ".cudamod-index.json"));
        diag_release(&d);
        ck_assert(!exists(empty, ".cudamod-index.json"));

        /* Nothing recorded yet. */
        write_ok(base, N_BASE, &(struct write_options){ .outdir = out }, &res);
        write_result_release(&res);
        got = (json_t *)1;
        ck_assert_int_eq(read_index_validation(out, &got, &d), 0);
        ck_assert_ptr_null(got);

        /* Recorded: in the index, and no module file touched. */
        for (size_t i = 0; i < N_BASE; i++)
                before[i] = stat_of(out, base[i].path);
        ck_assert_int_eq(write_index_validation(out, v, NULL, &d), 0);
        for (size_t i = 0; i < N_BASE; i++) {
                after = stat_of(out, base[i].path);
                ck_assert_msg(same_file_state(&before[i], &after), "%s was touched", base[i].path);
        }
        got = index_member(out);
        ck_assert_msg(json_equal(got, v), "the index's validation is not the one written");
        json_decref(got);
        ck_assert_int_eq(read_index_validation(out, &got, &d), 0);
        ck_assert_msg(json_equal(got, v), "read_index_validation does not give it back");
        json_decref(got);

        /* A write that changes the index keeps it. */
        write_ok(changed, ELEMENTSOF(changed), &(struct write_options){ .outdir = out, .prune = true }, &res);
        ck_assert_int_eq(res.count[FILE_CREATED], 1);
        write_result_release(&res);
        ck_assert_int_eq(read_index_validation(out, &got, &d), 0);
        ck_assert_msg(json_equal(got, v), "write_tree dropped the validation");
        json_decref(got);

        /* A new one replaces it. */
        ck_assert_int_eq(write_index_validation(out, v2, NULL, &d), 0);
        ck_assert_int_eq(read_index_validation(out, &got, &d), 0);
        ck_assert_msg(json_equal(got, v2), "the second validation did not replace the first");
        json_decref(got);
        diag_release(&d);
        fx_free(root);
}
END_TEST

START_TEST(sha256_hex_known_vectors)
{
        char h[65];

        sha256_hex("", 0, h);
        ck_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        sha256_hex("abc", 3, h);
        ck_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
END_TEST

START_TEST(file_status_names)
{
        static const char *const want[] = { "created", "updated", "unchanged", "pruned",
                                             "stale",   "edited",  "foreign", "held" };

        ck_assert_int_eq(ELEMENTSOF(want), _FILE_STATUS_MAX);
        for (int i = 0; i < _FILE_STATUS_MAX; i++)
                ck_assert_str_eq(file_status_to_string((enum file_status)i), want[i]);
        ck_assert_ptr_null(file_status_to_string(_FILE_STATUS_MAX));
}
END_TEST

/* ---- unified_diff against GNU diff ---- */

static const char *const gnu_diff = "/usr/bin/diff";

static char *numbers(int from, int to, const char *edits)
{
        struct strbuf sb = STRBUF_INIT;

        /* edits: "N=text" replacements, "N-" deletions, "N+text" insertions
         * after line N, separated by ';'. */
        for (int i = from; i <= to; i++) {
                char key[32];
                const char *e;
                bool keep = true;

                snprintf(key, sizeof(key), ";%d=", i);
                if (edits && (e = strstr(edits, key))) {
                        e += strlen(key);
                        strbuf_add(&sb, e, strcspn(e, ";"));
                        strbuf_addch(&sb, '\n');
                        keep = false;
                }
                snprintf(key, sizeof(key), ";%d-", i);
                if (edits && strstr(edits, key))
                        keep = false;
                if (keep)
                        strbuf_addf(&sb, "%d\n", i);
                snprintf(key, sizeof(key), ";%d+", i);
                if (edits && (e = strstr(edits, key))) {
                        e += strlen(key);
                        strbuf_add(&sb, e, strcspn(e, ";"));
                        strbuf_addch(&sb, '\n');
                }
        }
        return strbuf_detach(&sb);
}

/* GNU diff -u of a and b without its two header lines. */
static char *gnu_hunks(const char *root, const char *a, size_t alen, const char *b, size_t blen)
{
        _cleanup_free_ char *pa = path_join(root, "a"), *pb = path_join(root, "b");
        char *const argv[] = { (char *)"diff", (char *)"-u", pa, pb, NULL };
        posix_spawn_file_actions_t fa;
        struct strbuf sb = STRBUF_INIT;
        int p[2], status;
        char buf[4096];
        ssize_t n;
        pid_t pid;
        char *s;
        FILE *f;

        f = fopen(pa, "we");
        ck_assert_int_eq(fwrite(a, 1, alen, f), alen);
        ck_assert_int_eq(fclose(f), 0);
        f = fopen(pb, "we");
        ck_assert_int_eq(fwrite(b, 1, blen, f), blen);
        ck_assert_int_eq(fclose(f), 0);
        /* Spawned directly, without a shell: one exec per comparison. */
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        ck_assert_int_eq(posix_spawn_file_actions_init(&fa), 0);
        ck_assert_int_eq(posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO), 0);
        ck_assert_int_eq(posix_spawn(&pid, gnu_diff, &fa, NULL, argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        close(p[1]);
        while ((n = read(p[0], buf, sizeof(buf))) > 0)
                strbuf_add(&sb, buf, (size_t)n);
        close(p[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
        s = sb.buf;
        for (int i = 0; i < 2 && *s; i++)
                s = strchr(s, '\n') ? strchr(s, '\n') + 1 : s + strlen(s);
        s = xstrdup(s);
        strbuf_release(&sb);
        return s;
}

static char *our_hunks(const char *a, size_t alen, const char *b, size_t blen)
{
        struct strbuf sb = STRBUF_INIT;
        char *p;

        unified_diff(a, alen, b, blen, "a/x", "b/x", &sb);
        if (sb.len == 0)
                return strbuf_detach(&sb);
        ck_assert(startswith(sb.buf, "--- a/x\n+++ b/x\n"));
        p = xstrdup(sb.buf + strlen("--- a/x\n+++ b/x\n"));
        strbuf_release(&sb);
        return p;
}

static void assert_same_as_gnu(const char *root, const char *name, const char *a, size_t alen,
                               const char *b, size_t blen)
{
        _cleanup_free_ char *want = gnu_hunks(root, a, alen, b, blen);
        _cleanup_free_ char *got = our_hunks(a, alen, b, blen);

        ck_assert_msg(streq(want, got), "%s:\n--- GNU diff:\n%s--- unified_diff:\n%s", name, want, got);
}

START_TEST(unified_diff_matches_gnu_diff)
{
        static const struct {
                const char *name;
                int a_from, a_to;
                const char *a_edits;
                int b_from, b_to;
                const char *b_edits;
        } cases[] = {
                { "equal", 1, 30, NULL, 1, 30, NULL },
                { "one line replaced", 1, 30, NULL, 1, 30, ";15=x" },
                { "first line replaced", 1, 30, NULL, 1, 30, ";1=x" },
                { "last line replaced", 1, 30, NULL, 1, 30, ";30=x" },
                { "changes 6 apart share a hunk", 1, 30, NULL, 1, 30, ";5=x;12=y" },
                { "changes 7 apart are two hunks", 1, 30, NULL, 1, 30, ";5=x;13=y" },
                { "deletion", 1, 30, NULL, 1, 30, ";10-" },
                { "insertion", 1, 30, NULL, 1, 30, ";10+new" },
                { "insertion at start", 1, 10, NULL, 1, 10, ";0+new" },
                { "appended lines", 1, 10, NULL, 1, 12, NULL },
                { "prepended lines", 3, 10, NULL, 1, 10, NULL },
                { "truncated", 1, 12, NULL, 1, 4, NULL },
                { "everything replaced", 1, 5, NULL, 6, 9, NULL },
                { "from nothing", 1, 0, NULL, 1, 3, NULL },
                { "to nothing", 1, 3, NULL, 1, 0, NULL },
                { "scattered", 1, 40, ";3-;4-;20=a;21=b;33+c", 1, 40, ";7=q;35-;38-" },
                { "one line of four", 1, 4, NULL, 1, 4, ";2=two" },
                { "small insert and delete", 1, 8, ";2-", 1, 8, ";6-" },
                { NULL, 0, 0, NULL, 0, 0, NULL },
        };
        static const struct {
                const char *name;
                const char *a, *b;
        } texts[] = {
                { "no newline at end of new", "a\nb\nc\n", "a\nb\nc" },
                { "no newline at end of old", "a\nb\nc", "a\nb\nc\n" },
                { "no newline at end of either", "a\nb\nc", "a\nb\nd" },
                { "unchanged last line without newline", "a\nb\nc", "x\nb\nc" },
                { "repeated line", "x\ny\nx\n", "x\n" },
                { "blank lines", "\n\na\n\n", "\na\n\n\n" },
                { "single line", "a\n", "b\n" },
                { "empty to no newline", "", "a" },
                { "duplicate lines grow", "a\nb\nc\n", "a\nb\nb\nc\n" },
                { "swap", "a\nb\n", "b\na\n" },
                { NULL, NULL, NULL },
        };
        char *root;

        if (access(gnu_diff, X_OK) != 0)
                return; /* nothing to compare with */
        root = fx_new();
        for (size_t i = 0; cases[i].name; i++) {
                _cleanup_free_ char *a = NULL, *b = NULL;

                a = numbers(cases[i].a_from, cases[i].a_to, cases[i].a_edits);
                b = numbers(cases[i].b_from, cases[i].b_to, cases[i].b_edits);
                /* "insertion at start" edits line 0, which numbers() skips. */
                if (cases[i].b_edits && startswith(cases[i].b_edits, ";0+")) {
                        char *t = xasprintf("new\n%s", b);
                        free(b);
                        b = t;
                }
                assert_same_as_gnu(root, cases[i].name, a, strlen(a), b, strlen(b));
        }
        for (size_t i = 0; texts[i].name; i++)
                assert_same_as_gnu(root, texts[i].name, texts[i].a, strlen(texts[i].a), texts[i].b,
                                   strlen(texts[i].b));
        fx_free(root);
}
END_TEST

/* Apply the hunks of a unified diff to a, checking every context and
 * removed line and every header count; the result, newly allocated. */
static char *apply_hunks(const char *a, const char *diff)
{
        struct strbuf out = STRBUF_INIT;
        const char *ap = a, *p = diff;
        size_t aline = 1;

        for (int i = 0; i < 2 && *p; i++)
                p = strchr(p, '\n') + 1;
        while (*p) {
                unsigned long as, ac = 1, bs, bc = 1, seen_a = 0, seen_b = 0;
                char *end;

                ck_assert(startswith(p, "@@ -"));
                as = strtoul(p + 4, &end, 10);
                if (*end == ',')
                        ac = strtoul(end + 1, &end, 10);
                ck_assert(startswith(end, " +"));
                bs = strtoul(end + 2, &end, 10);
                if (*end == ',')
                        bc = strtoul(end + 1, &end, 10);
                ck_assert(startswith(end, " @@\n"));
                p = end + 4;
                /* An empty range names the line before it. */
                if (ac == 0)
                        as++;
                ck_assert_uint_ge(as, aline);
                while (aline < as) {
                        const char *nl = strchr(ap, '\n');
                        strbuf_add(&out, ap, (size_t)(nl - ap) + 1);
                        ap = nl + 1;
                        aline++;
                }
                (void)bs;
                while (*p && *p != '@') {
                        const char *nl = strchr(p, '\n');
                        size_t len = (size_t)(nl - p); /* without the '\n' */
                        bool no_newline = startswith(nl + 1, "\\ No newline at end of file\n");

                        if (*p == ' ' || *p == '-') {
                                ck_assert(strncmp(ap, p + 1, len - 1) == 0);
                                ap += len - 1;
                                if (no_newline)
                                        ck_assert(*ap == '\0');
                                else {
                                        ck_assert(*ap == '\n');
                                        ap++;
                                }
                                aline++;
                                seen_a++;
                        }
                        if (*p == ' ' || *p == '+') {
                                strbuf_add(&out, p + 1, len - 1);
                                if (!no_newline)
                                        strbuf_addch(&out, '\n');
                                seen_b++;
                        }
                        ck_assert(*p == ' ' || *p == '-' || *p == '+');
                        p = nl + 1;
                        if (no_newline)
                                p = strchr(p, '\n') + 1;
                }
                ck_assert_uint_eq(seen_a, ac);
                ck_assert_uint_eq(seen_b, bc);
        }
        strbuf_addstr(&out, ap);
        return strbuf_detach(&out);
}

static size_t changed_lines(const char *hunks)
{
        size_t n = 0;

        for (const char *p = hunks; *p; p = strchr(p, '\n') + 1)
                if (*p == '-' || *p == '+')
                        n++;
        return n;
}

/* Random small files over a few distinct lines have many equally short
 * edit scripts, and which one GNU diff picks depends on the inside of its
 * algorithm: ours must apply, and be no longer than GNU's. */
START_TEST(unified_diff_on_random_inputs_applies_and_is_minimal)
{
        static const char *const words[] = { "a\n", "b\n", "c\n", "\n", "end" };
        uint32_t seed = 12345;
        bool have_gnu = access(gnu_diff, X_OK) == 0;
        char *root = fx_new();

        for (int iter = 0; iter < 150; iter++) {
                struct strbuf t[2] = { STRBUF_INIT, STRBUF_INIT };
                struct strbuf diff = STRBUF_INIT;
                _cleanup_free_ char *applied = NULL;

                for (int k = 0; k < 2; k++) {
                        unsigned n;
                        seed = seed * 1103515245u + 12345u;
                        n = (seed >> 16) % 14;
                        for (unsigned j = 0; j < n; j++) {
                                seed = seed * 1103515245u + 12345u;
                                /* "end" (no newline) only last. */
                                strbuf_addstr(&t[k], words[(seed >> 16) % (j + 1 == n ? 5 : 4)]);
                        }
                }
                unified_diff(t[0].buf, t[0].len, t[1].buf, t[1].len, "a/x", "b/x", &diff);
                applied = apply_hunks(t[0].buf, diff.buf);
                ck_assert_msg(streq(applied, t[1].buf), "case %d:\n%s", iter, diff.buf);
                if (have_gnu) {
                        _cleanup_free_ char *gnu = gnu_hunks(root, t[0].buf, t[0].len, t[1].buf, t[1].len);
                        ck_assert_msg(changed_lines(diff.buf) - (diff.len ? 2 : 0) <= changed_lines(gnu),
                                      "case %d:\n%s--- GNU:\n%s", iter, diff.buf, gnu);
                }
                strbuf_release(&diff);
                strbuf_release(&t[0]);
                strbuf_release(&t[1]);
        }
        fx_free(root);
}
END_TEST

START_TEST(unified_diff_equal_inputs_give_nothing)
{
        struct strbuf sb = STRBUF_INIT;

        unified_diff("a\nb\n", 4, "a\nb\n", 4, "a/x", "b/x", &sb);
        unified_diff("", 0, "", 0, "a/x", "b/x", &sb);
        ck_assert_uint_eq(sb.len, 0);
        unified_diff("", 0, "a\n", 2, "/dev/null", "b/x", &sb);
        ck_assert_str_eq(sb.buf, "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n");
        strbuf_release(&sb);
}
END_TEST

/* Too large for the LCS table: the middle is replaced in one hunk, with
 * the common prefix and suffix still as context. */
START_TEST(unified_diff_large_input_falls_back_to_one_hunk)
{
        struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, got = STRBUF_INIT, want = STRBUF_INIT;
        const int n = 2500;

        for (int i = 0; i < 10; i++) {
                strbuf_addf(&a, "same %d\n", i);
                strbuf_addf(&b, "same %d\n", i);
        }
        for (int i = 0; i < n; i++) {
                strbuf_addf(&a, "old %d\n", i);
                strbuf_addf(&b, "new %d\n", i);
        }
        strbuf_addstr(&a, "tail\n");
        strbuf_addstr(&b, "tail\n");
        unified_diff(a.buf, a.len, b.buf, b.len, "a/x", "b/x", &got);
        strbuf_addf(&want, "--- a/x\n+++ b/x\n@@ -8,%d +8,%d @@\n same 7\n same 8\n same 9\n", n + 4, n + 4);
        for (int i = 0; i < n; i++)
                strbuf_addf(&want, "-old %d\n", i);
        for (int i = 0; i < n; i++)
                strbuf_addf(&want, "+new %d\n", i);
        strbuf_addstr(&want, " tail\n");
        ck_assert(streq(got.buf, want.buf));
        strbuf_release(&a);
        strbuf_release(&b);
        strbuf_release(&got);
        strbuf_release(&want);
}
END_TEST

/* ---- site_check: the site's other module trees (write-site.c) ---- */

static const struct gen_file site_hier_files[] = {
        { .path = "Core/cuda/12.4.lua", .content = "x", .len = 1, .module = "cuda/12.4" },
        { .path = "Core/cuda/.modulerc.lua", .content = "x", .len = 1 },
        { .path = "CUDA/12/cudnn/9.7.1.lua", .content = "x", .len = 1, .module = "cudnn/9.7.1" },
};
static const struct gen_file site_flat_files[] = {
        { .path = "cuda/12.4.lua", .content = "x", .len = 1, .module = "cuda/12.4" },
};

static void site_run(const struct gen_file *files, size_t n, const char *outdir, const char *const *mp,
                     size_t n_mp, const char *const *conflicts, size_t n_conflicts, struct site_report *r)
{
        const struct site_name names[] = {
                { .name = "cuda", .component = "cuda", .conflicts = conflicts, .n_conflicts = n_conflicts },
                { .name = "cudnn", .component = "cudnn" },
        };
        const struct site_options o = { .outdir = outdir, .modulepath = mp, .n_modulepath = n_mp,
                                        .names = names, .n_names = 2 };

        ck_assert_int_eq(site_check(files, n, &o, r, NULL), 0);
}

START_TEST(site_check_refuses_easybuild_cuda_where_the_hierarchy_goes)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "all");
        struct site_report r = { 0 };

        fx_write(root, "all/CUDA/12.4.0.lua", "conflict(\"CUDA\")\n");
        fx_write(root, "all/GCC/12.3.0.lua", "setenv(\"X\", \"1\")\n");
        site_run(site_hier_files, ELEMENTSOF(site_hier_files), out, NULL, 0, NULL, 0, &r);
        ck_assert_uint_eq(r.foreign.len, 1);
        ck_assert_str_eq(r.foreign.items[0], "CUDA/12.4.0.lua");
        ck_assert(!r.on_modulepath);
        site_report_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(site_check_knows_its_own_files_by_index_and_header)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "t");
        struct site_report r = { 0 };

        /* Ours by the header, ours by the index (edited: no header), and
         * a site's file in our module directory. */
        fx_write(root, "t/Core/cuda/12.9.lua", "-- Generated by cudamod 0.1.0 from /opt/cuda\n");
        fx_write(root, "t/Core/cuda/11.8", "#%Module\n# Generated by cudamod 0.1.0 from /opt/cuda\n");
        fx_write(root, "t/CUDA/12/cudnn/9.1.0.lua", "-- edited by hand\n");
        fx_write(root, "t/.cudamod-index.json",
                 "{\"format\": 1, \"files\": {\"CUDA/12/cudnn/9.1.0.lua\": {\"sha256\": \"0000000000000000000000000000000000000000000000000000000000000000\"}}}\n");
        fx_write(root, "t/Core/cuda/local.lua", "-- Generated by cudamod, said the site\n");
        fx_write(root, "t/Core/GCC/12.lua", "setenv(\"X\", \"1\")\n");
        site_run(site_hier_files, ELEMENTSOF(site_hier_files), out, NULL, 0, NULL, 0, &r);
        ck_assert_uint_eq(r.foreign.len, 1);
        ck_assert_str_eq(r.foreign.items[0], "Core/cuda/local.lua");
        site_report_release(&r);
        /* Once the index lists a file of Core/cuda, the directory is
         * cudamod's: an admin's file added there is left alone. */
        fx_write(root, "t/.cudamod-index.json",
                 "{\"format\": 1, \"files\": {\"CUDA/12/cudnn/9.1.0.lua\": {\"sha256\": \"0000000000000000000000000000000000000000000000000000000000000000\"}, "
                 "\"Core/cuda/12.9.lua\": {\"sha256\": \"0000000000000000000000000000000000000000000000000000000000000000\"}}}\n");
        site_run(site_hier_files, ELEMENTSOF(site_hier_files), out, NULL, 0, NULL, 0, &r);
        ck_assert_uint_eq(r.foreign.len, 0);
        site_report_release(&r);
        fx_free(root);
}
END_TEST

/* What the output tree holds must be known before anything is written
 * beside it: an index that cannot be read (here: corrupt), or a link
 * where it goes, is an error naming it, not a check skipped. */
START_TEST(site_check_fails_when_the_output_tree_cannot_be_read)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "t");
        const struct site_name names[] = { { .name = "cuda", .component = "cuda" } };
        const struct site_options o = { .outdir = out, .names = names, .n_names = 1 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct site_report r = { 0 };

        fx_write(root, "t/Core/GCC/12.lua", "setenv(\"X\", \"1\")\n");
        fx_write(root, "t/.cudamod-index.json", "{\"format\": 1, \"files\": ");
        ck_assert_int_eq(site_check(site_hier_files, ELEMENTSOF(site_hier_files), &o, &r, &d), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(d.file, ".cudamod-index.json"));
        ck_assert_uint_eq(r.foreign.len, 0);
        fx_free(root);
}
END_TEST

START_TEST(site_check_allows_a_site_module_beside_ours_in_core_and_warns)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "modules");
        _cleanup_free_ char *core = path_join(out, "Core");
        const char *const mp[] = { core };
        const char *const conflicts[] = { "CUDA" };
        struct site_report r = { 0 };

        fx_write(root, "modules/Core/CUDA/12.4.0.lua", "conflict(\"CUDA\")\n");
        site_run(site_hier_files, ELEMENTSOF(site_hier_files), out, mp, 1, NULL, 0, &r);
        ck_assert_uint_eq(r.foreign.len, 0);
        ck_assert_uint_eq(r.warnings.len, 1);
        ck_assert_msg(strstr(r.warnings.items[0], "/Core/CUDA' (Core/CUDA/12.4.0.lua) provides modules 'CUDA' "
                                                  "beside cudamod's 'cuda'"), "%s", r.warnings.items[0]);
        site_report_release(&r);
        /* Named in the family: they conflict, no warning. */
        site_run(site_hier_files, ELEMENTSOF(site_hier_files), out, mp, 1, conflicts, 1, &r);
        ck_assert_uint_eq(r.foreign.len, 0);
        ck_assert_uint_eq(r.warnings.len, 0);
        site_report_release(&r);
        fx_free(root);
}
END_TEST

START_TEST(site_check_warns_about_the_same_name_elsewhere_and_an_output_on_modulepath)
{
        char *root = fx_new();
        _cleanup_free_ char *out = path_join(root, "t"), *other = path_join(root, "other");
        const char *const mp[] = { other, out, "relative/dir", "/nonexistent/cudamod-test" };
        struct site_report r = { 0 };

        /* Another tree's cuda, even one cudamod wrote, shadows ours. */
        fx_write(root, "other/cuda/12.1.lua", "-- Generated by cudamod 0.0.9 from /opt/cuda-12.1\n");
        fx_mkdir(root, "t");
        site_run(site_hier_files, ELEMENTSOF(site_hier_files), out, mp, ELEMENTSOF(mp), NULL, 0, &r);
        ck_assert(r.on_modulepath);
        ck_assert_uint_eq(r.warnings.len, 1);
        ck_assert_msg(strstr(r.warnings.items[0], "module 'cuda' of '") &&
                      strstr(r.warnings.items[0], "/t' is also provided by '") &&
                      strstr(r.warnings.items[0], "/other/cuda' (cuda/12.1.lua)"), "%s", r.warnings.items[0]);
        site_report_release(&r);
        /* The flat layout in a directory on MODULEPATH is what it is for. */
        site_run(site_flat_files, ELEMENTSOF(site_flat_files), out, mp + 1, 1, NULL, 0, &r);
        ck_assert(!r.on_modulepath);
        ck_assert_uint_eq(r.foreign.len + r.warnings.len, 0);
        site_report_release(&r);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("write");
        TCase *tc = tcase_create("write");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, write_creates_files_into_empty_dir);
        tcase_add_test(tc, write_index_keeps_names_and_refuses_a_stale_plan);
        tcase_add_test(tc, site_check_refuses_easybuild_cuda_where_the_hierarchy_goes);
        tcase_add_test(tc, site_check_knows_its_own_files_by_index_and_header);
        tcase_add_test(tc, site_check_fails_when_the_output_tree_cannot_be_read);
        tcase_add_test(tc, site_check_allows_a_site_module_beside_ours_in_core_and_warns);
        tcase_add_test(tc, site_check_warns_about_the_same_name_elsewhere_and_an_output_on_modulepath);
        tcase_add_test(tc, write_modes_are_0644_and_0755_under_umask_022);
        tcase_add_test(tc, write_modes_are_0644_and_0755_under_umask_077);
        tcase_add_test(tc, write_modes_follow_the_configured_mode);
        tcase_add_test(tc, write_rerun_unchanged_touches_nothing);
        tcase_add_test(tc, write_update_renames_over_only_the_changed_file);
        tcase_add_test(tc, write_hand_edited_file_is_skipped_and_reported);
        tcase_add_test(tc, write_force_overwrites_edited_file);
        tcase_add_test(tc, write_foreign_file_never_touched_even_with_force);
        tcase_add_test(tc, write_symlink_at_target_is_foreign);
        tcase_add_test(tc, write_foreign_identical_file_is_adopted);
        tcase_add_test(tc, write_prune_removes_stale_files_and_empty_dirs);
        tcase_add_test(tc, write_prune_of_most_modules_needs_force);
        tcase_add_test(tc, write_holds_the_modules_and_default_of_unseen_installs);
        tcase_add_test(tc, write_prune_keeps_edited_stale_unless_force);
        tcase_add_test(tc, write_stale_without_prune_is_kept_and_reported);
        tcase_add_test(tc, write_prune_forgets_files_already_gone);
        tcase_add_test(tc, write_dry_run_and_check_change_nothing);
        tcase_add_test(tc, write_dry_run_prints_diffs);
        tcase_add_test(tc, write_dry_run_creates_no_directory_or_lock);
        tcase_add_test(tc, write_removes_leftover_temp_files);
        tcase_add_test(tc, write_refuses_invalid_paths);
        tcase_add_test(tc, write_refuses_symlinked_component);
        tcase_add_test(tc, write_outdir_through_a_planted_symlink_is_refused);
        tcase_add_test(tc, write_component_that_is_a_file_is_an_error);
        tcase_add_test(tc, write_outdir_that_is_a_file_is_an_error);
        tcase_add_test(tc, write_unwritable_outdir_is_an_error);
        tcase_add_test(tc, write_uncreatable_outdir_is_an_error);
        tcase_add_test(tc, write_corrupt_index_is_an_error_with_position);
        tcase_add_test(tc, write_removed_index_adopts_identical_files);
        tcase_add_test(tc, write_waits_for_the_lock);
        tcase_add_test(tc, write_lock_timeout_names_the_holder);
        tcase_add_test(tc, write_lock_file_is_private);
        tcase_add_test(tc, write_lock_file_of_another_owner_is_refused);
        tcase_add_test(tc, write_lock_of_another_user_cannot_be_held);
        tcase_add_test(tc, write_index_bytes_are_deterministic);
        tcase_add_test(tc, write_index_validation_is_kept_by_later_writes);
        tcase_add_test(tc, sha256_hex_known_vectors);
        tcase_add_test(tc, file_status_names);
        tcase_add_test(tc, unified_diff_matches_gnu_diff);
        tcase_add_test(tc, unified_diff_on_random_inputs_applies_and_is_minimal);
        tcase_add_test(tc, unified_diff_equal_inputs_give_nothing);
        tcase_add_test(tc, unified_diff_large_input_falls_back_to_one_hunk);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
