/* process.c: run a program with an explicit environment, capture its
 * output, and end it at a deadline. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "process.h"
#include "banned.h"

#define OUTPUT_MAX (1024 * 1024)


void child_release(struct child *c)
{
        strbuf_release(&c->out);
        strbuf_release(&c->err);
}

static long long now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* dup2 that also clears close-on-exec when fd already is target. Async-signal-safe. */
static int move_fd(int fd, int target)
{
        if (fd == target)
                return fcntl(fd, F_SETFD, 0);
        return dup2(fd, target);
}

/* Run path with argv and envp in cwd (NULL: ours), stdin from /dev/null, in
 * a new process group; collect stdout and stderr (OUTPUT_MAX each, the rest
 * read and dropped) until both close; at timeout seconds, SIGKILL the group.
 * The child is always reaped. Returns 0 with ret filled, or a negative
 * errno when the pipes or fork fail. */
int process_run(const char *path, char *const *argv, char *const *envp, const char *cwd,
                         unsigned timeout, struct child *ret)
{
        _cleanup_close_ int null_fd = -1, errpipe_r = -1;
        int out[2] = { -1, -1 }, err[2] = { -1, -1 }, errpipe[2] = { -1, -1 };
        struct pollfd pfd[2];
        int open_fds = 2, e = 0;
        long long deadline;
        pid_t pid;

        *ret = (struct child){ .out = STRBUF_INIT, .err = STRBUF_INIT };
        null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null_fd < 0)
                return -errno;
        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(errpipe, O_CLOEXEC) < 0) {
                e = -errno;
                goto fail;
        }

        pid = fork();
        if (pid < 0) {
                e = -errno;
                goto fail;
        }
        if (pid == 0) {
                int n;

                (void)setpgid(0, 0);
                if (move_fd(null_fd, STDIN_FILENO) < 0 || move_fd(out[1], STDOUT_FILENO) < 0 ||
                    move_fd(err[1], STDERR_FILENO) < 0 || (cwd && chdir(cwd) < 0))
                        n = errno;
                else {
                        execve(path, argv, envp);
                        n = errno;
                }
                if (write(errpipe[1], &n, sizeof(n)) < 0) {
                        /* nothing to do: the parent reports a failure without errno */
                }
                _exit(127);
        }

        /* Both sides set the group, so it exists before any kill. */
        (void)setpgid(pid, pid);
        close(out[1]);
        close(err[1]);
        close(errpipe[1]);
        errpipe_r = errpipe[0];

        pfd[0] = (struct pollfd){ .fd = out[0], .events = POLLIN };
        pfd[1] = (struct pollfd){ .fd = err[0], .events = POLLIN };
        deadline = now_ms() + (long long)timeout * 1000;
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
        while (!ret->timed_out && !ret->reaped) {
                pid_t w = waitpid(pid, &ret->wait_status, WNOHANG);

                if (w == pid)
                        ret->reaped = true;
                else if (w < 0 && errno != EINTR)
                        break;
                else if (now_ms() >= deadline)
                        ret->timed_out = true;
                else
                        nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
        }
        if (ret->timed_out) {
                /* The leader is not reaped yet, so its pid still names the group. */
                (void)kill(-pid, SIGKILL);
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

        if (read(errpipe_r, &e, sizeof(e)) == (ssize_t)sizeof(e))
                ret->exec_errno = e > 0 ? e : EIO;
        return 0;

fail:
        for (int i = 0; i < 2; i++) {
                if (out[i] >= 0)
                        close(out[i]);
                if (err[i] >= 0)
                        close(err[i]);
                if (errpipe[i] >= 0)
                        close(errpipe[i]);
        }
        child_release(ret);
        return e;
}

/* Where execvp would find name with the PATH of env ("/usr/bin:/bin" when
 * it has none), made absolute; a name holding '/' is taken as it is.
 * NULL with *ret_err (ENOENT, EACCES) when there is none. */
char *process_find_program(const char *name, char *const *env, int *ret_err)
{
        const char *path = env_get(env, "PATH");
        int err = ENOENT;

        if (strchr(name, '/'))
                return path_absolute(name);
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

/* "exit status 3", "killed by signal 9": how a reaped child ended. */
char *child_ending(const struct child *c)
{
        if (!c->reaped)
                return xstrdup("could not be waited for");
        if (WIFEXITED(c->wait_status))
                return xasprintf("exit status %d", WEXITSTATUS(c->wait_status));
        if (WIFSIGNALED(c->wait_status))
                return xasprintf("killed by signal %d", WTERMSIG(c->wait_status));
        return xstrdup("ended abnormally");
}

bool child_succeeded(const struct child *c)
{
        return c->reaped && !c->timed_out && c->exec_errno == 0 && WIFEXITED(c->wait_status) &&
               WEXITSTATUS(c->wait_status) == 0;
}

