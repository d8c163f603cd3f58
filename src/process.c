/* process.c: run a program with an explicit environment, capture its
 * output, and end it at a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "process.h"
#include "banned.h"

#define OUTPUT_MAX (1024 * 1024)
/* From SIGTERM to SIGKILL when a child runs past its deadline. */
#define TERM_GRACE_MS 2000


void child_release(struct child *c)
{
        strbuf_release(&c->out);
        strbuf_release(&c->err);
}

static void close_pair(int p[2])
{
        closep(&p[0]);
        closep(&p[1]);
}

static long long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int process_start(const char *path, char *const *argv, char *const *envp, const char *cwd,
                  unsigned timeout, struct process *ret)
{
        int out[2] = { -1, -1 }, err[2] = { -1, -1 };
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, dfl;
        pid_t pid;
        int e;

        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
                e = -errno;
                close_pair(out);
                close_pair(err);
                return e;
        }
        /* posix_spawn (clone with CLONE_VFORK in glibc), not fork: copying
         * the page tables is what a fork costs, and it is not cheap. An
         * exec failure comes back as its return value. */
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
        posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
        if (cwd)
                posix_spawn_file_actions_addchdir_np(&fa, cwd);
        posix_spawnattr_init(&attr);
        sigemptyset(&none);
        sigemptyset(&dfl);
        sigaddset(&dfl, SIGPIPE);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &dfl);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                POSIX_SPAWN_SETSIGDEF);
        e = posix_spawn(&pid, path, &fa, &attr, argv, envp);
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        close(err[1]);
        *ret = (struct process){
                .pid = e ? 0 : pid,
                .out = out[0],
                .err = err[0],
                .exec_errno = e,
                .deadline = now_ms() + (long long)timeout * 1000,
        };
        return 0;
}

/* Reap pid, or give up at the deadline (ret->timed_out). A pidfd tells
 * when it exits; without one (old kernels), poll with short sleeps. */
static void wait_until(pid_t pid, long long deadline, struct child *ret)
{
        _cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        long nap_us = 200;

        while (!ret->reaped) {
                long long left = deadline - now_ms();
                pid_t w = waitpid(pid, &ret->wait_status, WNOHANG);

                if (w == pid) {
                        ret->reaped = true;
                        break;
                }
                if (w < 0 && errno != EINTR)
                        break;
                if (left <= 0) {
                        ret->timed_out = true;
                        break;
                }
                if (pidfd >= 0) {
                        struct pollfd pf = { .fd = pidfd, .events = POLLIN };

                        (void)poll(&pf, 1, left > INT_MAX ? INT_MAX : (int)left);
                } else {
                        nanosleep(&(struct timespec){ .tv_nsec = nap_us * 1000 }, NULL);
                        nap_us = nap_us < 50000 ? nap_us * 2 : nap_us;
                }
        }
}

void process_finish(struct process *p, struct child *ret)
{
        struct pollfd pfd[2] = { { .fd = p->out, .events = POLLIN }, { .fd = p->err, .events = POLLIN } };
        long long deadline = p->deadline;
        pid_t pid = p->pid;
        int open_fds = 2;

        *ret = (struct child){ .out = STRBUF_INIT, .err = STRBUF_INIT };
        if (p->exec_errno) {
                ret->exec_errno = p->exec_errno;
                ret->reaped = true;
                close(p->out);
                close(p->err);
                *p = (struct process){ .out = -1, .err = -1 };
                return;
        }
        while (open_fds > 0) {
                long long left = deadline - now_ms();
                int r;

                if (left <= 0) {
                        ret->timed_out = true;
                        break;
                }
                r = poll(pfd, 2, left > INT_MAX ? INT_MAX : (int)left);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        ret->timed_out = true; /* cannot wait for it: end it */
                        break;
                }
                for (int i = 0; i < 2; i++) {
                        struct strbuf *sb = i == 0 ? &ret->out : &ret->err;
                        char buf[16384];
                        ssize_t n;

                        if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        n = read(pfd[i].fd, buf, sizeof(buf));
                        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (n <= 0) {
                                close(pfd[i].fd);
                                pfd[i].fd = -1;
                                open_fds--;
                                continue;
                        }
                        if (i == 1 && sb->len + (size_t)n > OUTPUT_MAX) {
                                /* stderr: its end says most, keep the last half */
                                size_t keep = OUTPUT_MAX / 2;

                                memmove(sb->buf, sb->buf + sb->len - keep, keep);
                                sb->len = keep;
                                sb->buf[keep] = '\0';
                        }
                        if (sb->len < OUTPUT_MAX)
                                strbuf_add(sb, buf, (size_t)n < OUTPUT_MAX - sb->len ? (size_t)n : OUTPUT_MAX - sb->len);
                }
        }

        /* Both pipes closed: the child may still be running (it closed them,
         * or it is exiting). Wait for it until the deadline. */
        wait_until(pid, deadline, ret);
        if (ret->timed_out && !ret->reaped) {
                /* The leader is not reaped yet, so its pid still names the
                 * group. SIGTERM first: a launcher (srun) cancels its job
                 * step on it, which a SIGKILLed one cannot, leaving the job
                 * holding its GPU until its time limit; then SIGKILL what
                 * is left after a grace period. */
                (void)kill(-pid, SIGTERM);
                (void)kill(pid, SIGTERM);
                wait_until(pid, now_ms() + TERM_GRACE_MS, ret);
                ret->timed_out = true;
                (void)kill(-pid, SIGKILL);
                if (!ret->reaped)
                        (void)kill(pid, SIGKILL);
        }
        for (int i = 0; i < 2; i++)
                if (pfd[i].fd >= 0)
                        close(pfd[i].fd);
        while (!ret->reaped) {
                pid_t w = waitpid(pid, &ret->wait_status, 0);

                if (w == pid)
                        ret->reaped = true;
                else if (w < 0 && errno != EINTR)
                        break;
        }

        *p = (struct process){ .out = -1, .err = -1 };
}

int process_run(const char *path, char *const *argv, char *const *envp, const char *cwd,
                unsigned timeout, struct child *ret)
{
        struct process p;
        int r = process_start(path, argv, envp, cwd, timeout, &p);

        if (r < 0) {
                *ret = (struct child){ .out = STRBUF_INIT, .err = STRBUF_INIT };
                return r;
        }
        process_finish(&p, ret);
        return 0;
}

/* Where execvp would find name with the PATH of env ("/usr/bin:/bin" when
 * it has none), made absolute; a name holding '/' is taken as it is.
 * NULL with *ret_err (ENOENT, EACCES) when there is none. */
char *process_find_program(const char *name, char *const *env, int *ret_err)
{
        const char *path = env_get(env, "PATH");
        int err = ENOENT;

        if (strchr(name, '/')) {
                struct stat st;

                /* Checked here rather than left to posix_spawn: where vfork
                 * is emulated (valgrind), its exec error comes back as an
                 * exit status 127, not as an error. */
                if (stat(name, &st) < 0 || !S_ISREG(st.st_mode)) {
                        *ret_err = ENOENT;
                        return NULL;
                }
                if (access(name, X_OK) < 0) {
                        *ret_err = EACCES;
                        return NULL;
                }
                return path_absolute(name);
        }
        if (!path)
                path = "/usr/bin:/bin";
        for (const char *p = path;;) {
                const char *colon = strchrnul(p, ':');
                _cleanup_free_ char *dir = colon > p ? xstrndup(p, (size_t)(colon - p)) : xstrdup(".");
                _cleanup_free_ char *full = path_join(dir, name);
                struct stat st;

                if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
                        if (access(full, X_OK) == 0)
                                return path_absolute(full);
                        err = EACCES;
                }
                if (*colon == '\0')
                        break;
                p = colon + 1;
        }
        *ret_err = err;
        return NULL;
}

char *wait_status_string(int status)
{
        if (WIFEXITED(status))
                return xasprintf("exit status %d", WEXITSTATUS(status));
        if (WIFSIGNALED(status)) {
                int sig = WTERMSIG(status);
                const char *abbrev = sigabbrev_np(sig);

                return abbrev ? xasprintf("killed by signal %d (SIG%s)", sig, abbrev)
                              : xasprintf("killed by signal %d", sig);
        }
        return xstrdup("ended abnormally");
}

char *child_ending(const struct child *c)
{
        return c->reaped ? wait_status_string(c->wait_status) : xstrdup("could not be waited for");
}

bool child_succeeded(const struct child *c)
{
        return c->reaped && !c->timed_out && c->exec_errno == 0 && WIFEXITED(c->wait_status) &&
               WEXITSTATUS(c->wait_status) == 0;
}

