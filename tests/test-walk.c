/* test-walk.c: the directory walk: each directory once, symlinks as
 * aliases, loops, unreadable and huge directories skipped with a warning, depth
 * and exclusion bounds, pseudo filesystems left alone. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "testutil.h"
#include "util.h"
#include "walk.h"

struct seen {
        struct strv visited;  /* walked paths */
        struct strv aliases;  /* "realpath <- path" */
        struct strv warnings;
        struct strv gaps;     /* "path (realpath): why" */
        const char *prune_name; /* prune directories with this base name */
};

static int on_visit(const struct walk_dir *dir, struct walk_verdict *v, void *userdata)
{
        struct seen *s = userdata;

        strv_add(&s->visited, dir->path);
        if (s->prune_name && streq(path_basename(dir->path), s->prune_name))
                v->prune = true;
        return 0;
}

static void on_alias(const char *realpath, const char *path, void *userdata)
{
        struct seen *s = userdata;

        strv_push(&s->aliases, xasprintf("%s <- %s", realpath, path));
}

static void on_warning(const char *message, void *userdata)
{
        struct seen *s = userdata;

        strv_add(&s->warnings, message);
}

static void on_incomplete(const char *path, const char *realpath, const char *why, void *userdata)
{
        struct seen *s = userdata;

        strv_push(&s->gaps, xasprintf("%s (%s): %s", path, realpath, why));
}

static const struct walk_ops ops = {
        .visit = on_visit, .alias = on_alias, .warning = on_warning, .incomplete = on_incomplete,
};

static void seen_release(struct seen *s)
{
        strv_release(&s->visited);
        strv_release(&s->aliases);
        strv_release(&s->warnings);
        strv_release(&s->gaps);
}

static bool visited(const struct seen *s, const char *root, const char *rel)
{
        _cleanup_free_ char *p = rel[0] ? path_join(root, rel) : xstrdup(root);

        return strv_contains(&s->visited, p);
}

static size_t count_visits(const struct seen *s, const char *suffix)
{
        size_t n = 0;

        for (size_t i = 0; i < s->visited.len; i++)
                if (endswith(s->visited.items[i], suffix))
                        n++;
        return n;
}

static void walk(const char *root, const struct walk_options *o, struct seen *s)
{
        const char *roots[] = { root };

        ck_assert_int_eq(walk_roots(roots, 1, o, &ops, s), 0);
}

START_TEST(walk_visits_every_directory_once_in_order)
{
        char *root = fx_new();
        struct seen s = { 0 };

        fx_mkdir(root, "b/x");
        fx_mkdir(root, "a/y/z");
        fx_write(root, "a/file", "x");
        walk(root, &(struct walk_options){ 0 }, &s);
        ck_assert_int_eq(s.visited.len, 6);
        ck_assert(visited(&s, root, ""));
        ck_assert(visited(&s, root, "a/y/z"));
        ck_assert(visited(&s, root, "b/x"));
        ck_assert_int_eq(s.warnings.len, 0);
        seen_release(&s);
        fx_free(root);
}
END_TEST

/* A directory reached directly and through links is visited once, under
 * its direct path; every link of the chain is an alias. */
START_TEST(walk_symlink_chain_becomes_aliases)
{
        char *root = fx_new();
        struct seen s = { 0 };
        _cleanup_free_ char *target = path_join(root, "local/cuda-12.4");
        _cleanup_free_ char *alt = path_join(root, "etc/alternatives/cuda");
        _cleanup_free_ char *local = path_join(root, "local");
        _cleanup_free_ char *want1 = NULL, *want2 = NULL;

        fx_mkdir(root, "local/cuda-12.4/bin");
        fx_symlink(root, "etc/alternatives/cuda", target);
        fx_symlink(root, "local/cuda", alt);
        walk(local, &(struct walk_options){ 0 }, &s);
        ck_assert_int_eq(count_visits(&s, "/cuda-12.4"), 1);
        ck_assert_int_eq(count_visits(&s, "/cuda"), 0);
        want1 = xasprintf("%s <- %s/cuda", target, local);
        want2 = xasprintf("%s <- %s", target, alt);
        ck_assert_msg(strv_contains(&s.aliases, want1), "missing %s", want1);
        ck_assert_msg(strv_contains(&s.aliases, want2), "missing %s", want2);
        seen_release(&s);
        fx_free(root);
}
END_TEST

/* A link to a directory outside the roots is walked under the link's path. */
START_TEST(walk_follows_links_out_of_the_root)
{
        char *root = fx_new();
        struct seen s = { 0 };
        _cleanup_free_ char *gpfs = path_join(root, "gpfs/sw/cuda-12.4");
        _cleanup_free_ char *apps = path_join(root, "apps");

        fx_mkdir(root, "gpfs/sw/cuda-12.4/bin");
        fx_mkdir(root, "apps");
        fx_symlink(root, "apps/cuda", gpfs);
        walk(apps, &(struct walk_options){ 0 }, &s);
        ck_assert(visited(&s, root, "apps/cuda"));
        ck_assert(visited(&s, root, "apps/cuda/bin"));
        seen_release(&s);
        fx_free(root);
}
END_TEST

START_TEST(walk_symlink_loops_end_with_a_warning)
{
        char *root = fx_new();
        struct seen s = { 0 };
        bool warned = false;

        fx_mkdir(root, "d/e");
        fx_symlink(root, "d/a", "b");
        fx_symlink(root, "d/b", "a");
        fx_symlink(root, "d/e/parent", "..");
        fx_symlink(root, "d/e/root", "/");
        fx_symlink(root, "d/self", "self");
        walk(root, &(struct walk_options){ .max_depth = 3 }, &s);
        for (size_t i = 0; i < s.warnings.len; i++)
                if (strstr(s.warnings.items[i], "symlink loop at '") && endswith(s.warnings.items[i], "/d/a', skipping"))
                        warned = true;
        ck_assert_msg(warned, "no loop warning");
        /* parent link: d is not walked again. */
        ck_assert_int_eq(count_visits(&s, "/d"), 1);
        seen_release(&s);
        fx_free(root);
}
END_TEST

START_TEST(walk_depth_is_bounded)
{
        char *root = fx_new();
        struct seen s = { 0 };

        fx_mkdir(root, "1/2/3/4/5/6/7/8/9/10");
        walk(root, &(struct walk_options){ .max_depth = 3 }, &s);
        ck_assert(visited(&s, root, "1/2/3"));
        ck_assert(!visited(&s, root, "1/2/3/4"));
        seen_release(&s);
        s = (struct seen){ 0 };
        walk(root, &(struct walk_options){ 0 }, &s);
        ck_assert(visited(&s, root, "1/2/3/4/5/6/7/8"));
        ck_assert(!visited(&s, root, "1/2/3/4/5/6/7/8/9"));
        seen_release(&s);
        fx_free(root);
}
END_TEST

START_TEST(walk_prune_stops_descent)
{
        char *root = fx_new();
        struct seen s = { .prune_name = "cuda-12.4" };

        fx_mkdir(root, "cuda-12.4/targets/x86_64-linux/lib");
        fx_mkdir(root, "other/x");
        walk(root, &(struct walk_options){ 0 }, &s);
        ck_assert(visited(&s, root, "cuda-12.4"));
        ck_assert(!visited(&s, root, "cuda-12.4/targets"));
        ck_assert(visited(&s, root, "other/x"));
        seen_release(&s);
        fx_free(root);
}
END_TEST

START_TEST(walk_exclude_patterns)
{
        char *root = fx_new();
        struct seen s = { 0 };
        struct strv ex = { 0 };

        fx_mkdir(root, "gpfs/.snapshot/daily/cuda");
        fx_mkdir(root, "gpfs/sw/cuda");
        strv_add(&ex, "*/.snapshot/*");
        walk(root, &(struct walk_options){ .exclude = &ex }, &s);
        ck_assert(!visited(&s, root, "gpfs/.snapshot"));
        ck_assert(!visited(&s, root, "gpfs/.snapshot/daily"));
        ck_assert(visited(&s, root, "gpfs/sw/cuda"));
        strv_release(&ex);
        seen_release(&s);
        fx_free(root);
}
END_TEST

/* Overlapping roots: a directory is visited once even when two roots reach it. */
START_TEST(walk_overlapping_roots_visit_once)
{
        char *root = fx_new();
        struct seen s = { 0 };
        _cleanup_free_ char *a = path_join(root, "opt"), *b = path_join(root, "opt/nvidia/hpc_sdk");
        const char *roots[] = { a, b };

        fx_mkdir(root, "opt/nvidia/hpc_sdk/Linux_x86_64/24.5/cuda/12.4/bin");
        ck_assert_int_eq(walk_roots(roots, 2, &(struct walk_options){ .max_depth = 3 }, &ops, &s), 0);
        ck_assert_int_eq(count_visits(&s, "/hpc_sdk"), 1);
        /* The deeper root gives the directories below it their own depth. */
        ck_assert(visited(&s, root, "opt/nvidia/hpc_sdk/Linux_x86_64/24.5/cuda"));
        seen_release(&s);
        fx_free(root);
}
END_TEST

START_TEST(walk_unreadable_directory_warns_and_continues)
{
        char *root = fx_new();
        _cleanup_free_ char *secret = path_join(root, "secret");
        pid_t pid;
        int status;

        fx_mkdir(root, "secret/inner");
        fx_mkdir(root, "open/inner");
        ck_assert_int_eq(chmod(secret, 0), 0);
        /* In a child, as nobody when we are root (root reads anything). */
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct seen s = { 0 };
                const char *roots[] = { root };
                bool ok;

                if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
                        _exit(3);
                _cleanup_free_ char *gap = xasprintf("%s (%s): Permission denied", secret, secret);

                walk_roots(roots, 1, &(struct walk_options){ 0 }, &ops, &s);
                /* Also reported as a gap: the walk is incomplete. */
                ok = s.warnings.len == 1 && strstr(s.warnings.items[0], "secret': Permission denied, skipping") &&
                     visited(&s, root, "open/inner") && s.gaps.len == 1 && streq(s.gaps.items[0], gap);
                seen_release(&s);
                _exit(ok ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        fx_free(root);
}
END_TEST

START_TEST(walk_leaves_proc_alone)
{
        struct seen s = { 0 };

        if (access("/proc/self", F_OK) != 0)
                return;
        walk("/proc", &(struct walk_options){ 0 }, &s);
        ck_assert_int_eq(s.visited.len, 0);
        seen_release(&s);
}
END_TEST

/* Roots are reported absolute, as spelled: ".", "//", trailing slashes and
 * relative paths normalised, symlinks kept. */
START_TEST(walk_roots_are_made_absolute)
{
        char *root = fx_new();
        struct seen s = { 0 };
        const char *roots[] = { "./local//cuda-12.4/." };
        _cleanup_free_ char *want = path_join(root, "local/cuda-12.4");

        fx_mkdir(root, "local/cuda-12.4/bin");
        ck_assert_int_eq(chdir(root), 0);
        ck_assert_int_eq(walk_roots(roots, 1, &(struct walk_options){ 0 }, &ops, &s), 0);
        ck_assert_str_eq(s.visited.items[0], want);
        ck_assert(visited(&s, root, "local/cuda-12.4/bin"));
        ck_assert_int_eq(chdir("/"), 0); /* CK_FORK=no: later tests share the cwd */
        seen_release(&s);
        fx_free(root);
}
END_TEST

START_TEST(path_absolute_normalises)
{
        static const struct { const char *in, *out; } cases[] = {
                { "/usr/local/", "/usr/local" }, { "//usr//local/./cuda", "/usr/local/cuda" },
                { "/", "/" }, { "/.", "/" }, { "/a/../b", "/a/../b" }, { NULL, NULL },
        };

        for (size_t i = 0; cases[i].in; i++) {
                _cleanup_free_ char *p = path_absolute(cases[i].in);
                ck_assert_str_eq(p, cases[i].out);
        }
}
END_TEST


/* A directory of more than WALK_MAX_ENTRIES entries (a scratch area of
 * millions of files) is not listed whole: it is skipped, with a warning
 * naming it, the limit and 'exclude:', and the walk goes on beside it.
 * One of exactly WALK_MAX_ENTRIES is walked. */
START_TEST(walk_huge_directory_is_skipped_with_a_warning)
{
        char *root = fx_new();
        _cleanup_free_ char *big = path_join(root, "scratch/big");
        _cleanup_free_ char *want = NULL;
        struct seen s = { 0 };

        fx_mkdir(root, "scratch/big/sub");
        fx_mkdir(root, "apps/x");
        fx_many_files(big, 0, WALK_MAX_ENTRIES - 1);
        walk(root, &(struct walk_options){ 0 }, &s);
        ck_assert(visited(&s, root, "scratch/big/sub"));
        ck_assert_int_eq(s.warnings.len, 0);
        seen_release(&s);

        s = (struct seen){ 0 };
        fx_many_files(big, WALK_MAX_ENTRIES, 1);
        walk(root, &(struct walk_options){ 0 }, &s);
        ck_assert(visited(&s, root, "scratch"));
        ck_assert(!visited(&s, root, "scratch/big"));
        ck_assert(!visited(&s, root, "scratch/big/sub"));
        ck_assert(visited(&s, root, "apps/x"));
        ck_assert_int_eq(s.warnings.len, 1);
        want = xasprintf("cannot scan '%s': more than 100000 entries (no install directory holds "
                         "that many; 'exclude:' in the config leaves it out), skipping", big);
        ck_assert_str_eq(s.warnings.items[0], want);
        free(want);
        want = xasprintf("%s (%s): more than 100000 entries", big, big);
        ck_assert_int_eq(s.gaps.len, 1);
        ck_assert_str_eq(s.gaps.items[0], want);
        seen_release(&s);
        fx_free(root);
}
END_TEST

START_TEST(walk_missing_root)
{
        struct seen s = { 0 };
        const char *roots[] = { "/nonexistent/cudamod" };

        ck_assert_int_eq(walk_roots(roots, 1, &(struct walk_options){ 0 }, &ops, &s), 0);
        ck_assert_int_eq(s.warnings.len, 0);
        ck_assert_int_eq(s.gaps.len, 0);
        /* A root asked for that is missing: the walk is incomplete. */
        ck_assert_int_eq(walk_roots(roots, 1, &(struct walk_options){ .warn_missing_roots = true }, &ops, &s), 0);
        ck_assert_int_eq(s.warnings.len, 1);
        ck_assert_int_eq(s.gaps.len, 1);
        ck_assert_str_eq(s.gaps.items[0], "/nonexistent/cudamod (/nonexistent/cudamod): No such file or directory");
        seen_release(&s);
}
END_TEST

/* In a directory the visitor prunes (an install), an entry that cannot be
 * read (a subdirectory, a file, a symlink into an unreadable tree) is a
 * gap: what was seen of the install is partial. The readable ones, kept
 * children and exclusions are not. */
START_TEST(walk_unreadable_entry_of_a_pruned_directory_is_a_gap)
{
        char *root = fx_new();
        _cleanup_free_ char *lib64 = path_join(root, "sw/cuda-12.9/lib64");
        _cleanup_free_ char *version = path_join(root, "sw/cuda-12.9/version.json");
        _cleanup_free_ char *hidden = path_join(root, "hidden");
        pid_t pid;
        int status;

        fx_mkdir(root, "sw/cuda-12.9/lib64");
        fx_mkdir(root, "sw/cuda-12.9/bin");
        fx_mkdir(root, "hidden/targets");
        fx_write(root, "sw/cuda-12.9/version.json", "{}\n");
        fx_write(root, "sw/cuda-12.9/README", "\n");
        fx_symlink(root, "sw/cuda-12.9/targets", "../../hidden/targets");
        fx_mkdir(root, "sw/cuda-11.8/lib64");
        ck_assert_int_eq(chmod(lib64, 0), 0);
        ck_assert_int_eq(chmod(version, 0), 0);
        /* Root-owned 0700 is closed to nobody; to ourselves only 0. */
        ck_assert_int_eq(chmod(hidden, geteuid() == 0 ? 0700 : 0), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                struct seen s = { .prune_name = NULL };
                const char *roots[] = { root };
                _cleanup_free_ char *sw = path_join(root, "sw");
                const char *want[] = { "lib64", "targets", "version.json" };
                bool ok = true;

                if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
                        _exit(3);
                /* Prune both installs; leave 'hidden' out of the walk. */
                roots[0] = sw;
                s.prune_name = "cuda-12.9";
                walk_roots(roots, 1, &(struct walk_options){ 0 }, &ops, &s);
                ok = s.gaps.len == 3;
                for (size_t i = 0; ok && i < ELEMENTSOF(want); i++) {
                        _cleanup_free_ char *p = xasprintf("%s/cuda-12.9/%s", sw, want[i]);
                        _cleanup_free_ char *g = xasprintf("%s (%s): Permission denied", p, p);
                        ok = streq(s.gaps.items[i], g);
                }
                ok = ok && s.warnings.len == 3 && strstr(s.warnings.items[0], "what the scan knows of '");
                seen_release(&s);
                _exit(ok ? 0 : 1);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        ck_assert_int_eq(chmod(lib64, 0755), 0);
        ck_assert_int_eq(chmod(hidden, 0755), 0);
        fx_free(root);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("walk");
        TCase *tc = tcase_create("walk");

        tcase_add_test(tc, walk_visits_every_directory_once_in_order);
        tcase_add_test(tc, walk_symlink_chain_becomes_aliases);
        tcase_add_test(tc, walk_follows_links_out_of_the_root);
        tcase_add_test(tc, walk_symlink_loops_end_with_a_warning);
        tcase_add_test(tc, walk_depth_is_bounded);
        tcase_add_test(tc, walk_prune_stops_descent);
        tcase_add_test(tc, walk_exclude_patterns);
        tcase_add_test(tc, walk_overlapping_roots_visit_once);
        tcase_add_test(tc, walk_unreadable_directory_warns_and_continues);
        tcase_add_test(tc, walk_leaves_proc_alone);
        tcase_add_test(tc, walk_missing_root);
        tcase_add_test(tc, walk_unreadable_entry_of_a_pruned_directory_is_a_gap);
        tcase_add_test(tc, walk_roots_are_made_absolute);
        tcase_add_test(tc, path_absolute_normalises);
        suite_add_tcase(s, tc);

        tc = tcase_create("bounds");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, walk_huge_directory_is_skipped_with_a_warning);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
