/* testutil.c: run cudamod as a user would, and compare with golden files. */
#include <link.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strbuf.h"
#include "testutil.h"
#include "util.h"

bool can_drop_privileges(void)
{
        return geteuid() == 0;
}

void pipes_drain(int out_fd, int err_fd, struct strbuf *out, struct strbuf *err)
{
        struct pollfd p[2] = { { .fd = out_fd, .events = POLLIN }, { .fd = err_fd, .events = POLLIN } };
        int open_fds = 2;

        while (open_fds > 0) {
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                for (int i = 0; i < 2; i++) {
                        char buf[8192];
                        ssize_t n;

                        if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        n = read(p[i].fd, buf, sizeof(buf));
                        if (n <= 0) {
                                close(p[i].fd);
                                p[i].fd = -1;
                                open_fds--;
                                continue;
                        }
                        strbuf_add(i == 0 ? out : err, buf, (size_t)n);
                }
        }
}

/* A copy of the executable at path in $TMPDIR, mode 0755. */
static char *copy_executable(const char *path)
{
        const char *tmp = getenv("TMPDIR");
        char *dst = xasprintf("%s/cudamod-exe-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        struct strbuf sb = STRBUF_INIT;
        int fd;

        ck_assert_int_eq(strbuf_read_file(&sb, path, 512 * 1024 * 1024), 0);
        fd = mkstemp(dst);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, sb.buf, sb.len), (ssize_t)sb.len);
        ck_assert_int_eq(fchmod(fd, 0755), 0);
        ck_assert_int_eq(close(fd), 0);
        strbuf_release(&sb);
        return dst;
}

/* Run path (searched in our PATH) with argv in cwd (NULL: ours) and envp
 * (NULL: ours), as nobody when drop, capturing stdout and stderr. */
static void spawn(struct run_result *r, const char *cwd, const char *path, const char *const *argv,
                  const char *const *envp, bool drop)
{
        struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
        int po[2], pe[2], status;
        pid_t pid;

        ck_assert_int_eq(pipe2(po, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(pe, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(po[1], STDOUT_FILENO);
                dup2(pe[1], STDERR_FILENO);
                if (cwd && chdir(cwd) < 0)
                        _exit(126);
                if (drop && (setgid(65534) < 0 || setuid(65534) < 0))
                        _exit(126);
                execvpe(path, (char *const *)argv, envp ? (char *const *)envp : environ);
                _exit(127);
        }
        close(po[1]);
        close(pe[1]);
        pipes_drain(po[0], pe[0], &out, &err);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        r->out = strbuf_detach(&out);
        r->err = strbuf_detach(&err);
}

/* Valgrind's own notes ("--PID-- WARNING: unhandled amd64-linux syscall:
 * 434", pidfd_open on valgrind 3.19, which cudamod falls back from) taken
 * out of err, so that a test compares what cudamod said; errors and leaks
 * ("==PID==" lines) stay, and the exit status reports them. */
static void drop_valgrind_notes(char *err)
{
        char *w = err;

        for (const char *p = err; *p;) {
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
                size_t digits = p[0] == '-' && p[1] == '-' ? strspn(p + 2, "0123456789") : 0;

                if (!(digits > 0 && p[2 + digits] == '-' && p[3 + digits] == '-')) {
                        memmove(w, p, len);
                        w += len;
                }
                p += len;
        }
        *w = '\0';
}

void run_cudamod(struct run_result *r, const char *const *argv, bool drop_privileges)
{
        /* Under `meson test --setup=valgrind` the binary runs under valgrind
         * too: a leak or error there fails the test. */
        static const char *const vg[] = {
                "valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full",
                "--errors-for-leak-kinds=definite,indirect", "--show-leak-kinds=definite,indirect",
        };
        bool under_valgrind = getenv("CUDAMOD_UNDER_VALGRIND") != NULL;
        bool drop = drop_privileges && geteuid() == 0;
        _cleanup_free_ char *copy = NULL;
        _cleanup_free_ const char **args = NULL;
        const char *bin = getenv("CUDAMOD_BIN");
        size_t n = 0, k = 0;

        ck_assert_msg(bin != NULL, "CUDAMOD_BIN is not set (run the tests with meson test)");
        /* The build tree may sit below a directory that nobody cannot
         * traverse (mktemp -d makes 0700): run a copy from the temp dir. */
        if (drop) {
                copy = copy_executable(bin);
                bin = copy;
        }
        while (argv[n])
                n++;
        args = xcalloc(n + ELEMENTSOF(vg) + 3, sizeof(char *));
        if (under_valgrind)
                for (size_t i = 0; i < ELEMENTSOF(vg); i++)
                        args[k++] = vg[i];
        args[k++] = under_valgrind ? bin : "cudamod";
        for (size_t i = 0; i < n; i++)
                args[k++] = argv[i];
        spawn(r, NULL, under_valgrind ? "valgrind" : bin, args, NULL, drop);
        if (under_valgrind && r->err)
                drop_valgrind_notes(r->err);
        if (copy)
                unlink(copy);
}

void run_program(struct run_result *r, const char *cwd, const char *const *argv,
                 const char *const *envp)
{
        spawn(r, cwd, argv[0], argv, envp, false);
}

void run_result_release(struct run_result *r)
{
        free(r->out);
        free(r->err);
        r->out = r->err = NULL;
}

char *str_replace_all(const char *s, const char *from, const char *to)
{
        struct strbuf sb = STRBUF_INIT;
        size_t lf = strlen(from);
        const char *p;

        if (lf == 0)
                return xstrdup(s);
        while ((p = strstr(s, from))) {
                strbuf_add(&sb, s, (size_t)(p - s));
                strbuf_addstr(&sb, to);
                s = p + lf;
        }
        strbuf_addstr(&sb, s);
        return strbuf_detach(&sb);
}

bool updating_golden(void)
{
        const char *u = getenv("CUDAMOD_UPDATE_GOLDEN");

        return u && streq(u, "1");
}

void assert_golden(const char *name, const char *text)
{
        _cleanup_free_ char *rel = xasprintf("tests/golden/%s", name);

        assert_golden_file(rel, text);
}

void assert_golden_file(const char *rel, const char *text)
{
        const char *src = getenv("CUDAMOD_SOURCE_ROOT");
        const char *name = rel;
        _cleanup_free_ char *path = NULL;
        struct strbuf want = STRBUF_INIT;
        const char *a, *b;
        unsigned line = 1;
        int r;

        ck_assert_msg(src != NULL, "CUDAMOD_SOURCE_ROOT is not set");
        path = xasprintf("%s/%s", src, rel);
        if (updating_golden()) {
                FILE *f;
                for (char *slash = strchr(path + strlen(src) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                        *slash = '\0';
                        mkdir(path, 0755);
                        *slash = '/';
                }
                f = fopen(path, "we");
                ck_assert_msg(f != NULL, "cannot write '%s': %s", path, strerror(errno));
                fputs(text, f);
                ck_assert_int_eq(fclose(f), 0);
                return;
        }
        r = strbuf_read_file(&want, path, 16 * 1024 * 1024);
        ck_assert_msg(r == 0, "cannot read golden file '%s': %s", path, strerror(-r));
        for (a = want.buf, b = text; *a && *a == *b; a++, b++)
                if (*a == '\n')
                        line++;
        if (*a || *b) {
                const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
                int la = ea ? (int)(ea - a) : (int)strlen(a), lb = eb ? (int)(eb - b) : (int)strlen(b);
                ck_abort_msg("%s differs at line %u:\n  want: ...%.*s\n  got:  ...%.*s", name, line, la,
                             a, lb, b);
        }
        strbuf_release(&want);
}

int run_suite(Suite *s)
{
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int find_interp(struct dl_phdr_info *info, size_t size, void *data)
{
        const char **ret = data;

        (void)size;
        for (int i = 0; i < info->dlpi_phnum; i++)
                if (info->dlpi_phdr[i].p_type == PT_INTERP) {
                        *ret = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
                        return 1;
                }
        return 0;
}

const char *test_dynamic_loader(void)
{
        const char *interp = NULL;

        dl_iterate_phdr(find_interp, &interp);
        ck_assert_msg(interp != NULL, "no PT_INTERP in the test executable");
        return interp;
}

/* A child that holds an exclusive flock on path (opened read-write,
 * created 0600) until it is killed; returns once it holds it. */
pid_t hold_lock(const char *path)
{
        int p[2];
        pid_t pid;
        char c;

        ck_assert_int_eq(pipe(p), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
                if (fd < 0 || flock(fd, LOCK_EX) < 0 || write(p[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &c, 1), 1);
        close(p[0]);
        return pid;
}
