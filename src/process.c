/* process.c: run a program with an explicit environment, capture its
 * output, and end it at a deadline. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "process.h"
#include "util.h"
#include "banned.h"

#define OUTPUT_MAX (1024 * 1024)
/* From SIGTERM to SIGKILL when a child runs past its deadline. */
#define TERM_GRACE_MS 2000
/* How long, after the child exited, what it left behind may keep its
 * output open (finishing a write) before that counts as held. */
#define OUTPUT_HOLD_MS 1000
/* Rounds of killing what is left: each one reaches a level deeper. */
#define STRAY_ROUNDS 64


/* --- what a child leaves behind ------------------------------------------ */

struct pids {
        pid_t *items;
        size_t len, alloc;
};

static void pids_add(struct pids *v, pid_t pid)
{
        if (v->len == v->alloc) {
                v->alloc = v->alloc ? 2 * v->alloc : 16;
                v->items = xreallocarray(v->items, v->alloc, sizeof(*v->items));
        }
        v->items[v->len++] = pid;
}

static bool pids_have(const pid_t *items, size_t n, pid_t pid)
{
        for (size_t i = 0; i < n; i++)
                if (items[i] == pid)
                        return true;
        return false;
}

/* Add the pids in text ("12 34 ") to v. */
static void pids_parse(struct pids *v, const char *text)
{
        for (const char *p = text; *p;) {
                char *end;
                long n = strtol(p, &end, 10);

                if (end == p) {
                        p++;
                        continue;
                }
                if (n > 0 && n <= INT_MAX)
                        pids_add(v, (pid_t)n);
                p = end;
        }
}

/* Our children now, zombies included: every thread's
 * /proc/self/task/TID/children, or where the kernel has no such file
 * (CONFIG_PROC_CHILDREN off), each process whose PPid is ours. */
static void list_children(struct pids *ret)
{
        DIR *d = opendir("/proc/self/task");
        pid_t self = getpid();
        struct dirent *de;
        bool have_files = false;

        while (d && (de = readdir(d))) {
                _cleanup_free_ char *path = NULL;
                struct strbuf sb = STRBUF_INIT;

                if (de->d_name[0] == '.')
                        continue;
                path = xasprintf("/proc/self/task/%s/children", de->d_name);
                if (strbuf_read_file(&sb, path, 1 << 20) == 0) {
                        have_files = true;
                        pids_parse(ret, sb.buf);
                }
                strbuf_release(&sb);
        }
        if (d)
                closedir(d);
        if (have_files)
                return;
        d = opendir("/proc");
        while (d && (de = readdir(d))) {
                _cleanup_free_ char *path = NULL;
                struct strbuf sb = STRBUF_INIT;
                const char *paren;
                int ppid;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                path = xasprintf("/proc/%s/stat", de->d_name);
                /* "PID (COMM) S PPID ...": COMM may hold ") ". */
                if (strbuf_read_file_head(&sb, path, 4096) == 0 && (paren = strrchr(sb.buf, ')')) &&
                    sscanf(paren + 1, " %*c %d", &ppid) == 1 && ppid == self)
                        pids_add(ret, (pid_t)atoi(de->d_name));
                strbuf_release(&sb);
        }
        if (d)
                closedir(d);
}

/* Kill and reap our children that are not in p->before: what the child
 * left behind, which reaches us however it detached (setsid, a double
 * fork) since we are a subreaper. Killing one hands its own children to
 * us, so go round until none is left. Returns how many were killed, not
 * counting those that had ended by themselves nor, with group_killed,
 * those of the child's process group (signalled already, maybe not dead
 * yet). */
static unsigned kill_strays(const struct process *p, bool group_killed)
{
        unsigned killed = 0;

        for (int round = 0; round < STRAY_ROUNDS; round++) {
                struct pids kids = { 0 };
                size_t found = 0;

                list_children(&kids);
                for (size_t i = 0; i < kids.len; i++) {
                        pid_t k = kids.items[i], group;
                        siginfo_t si = { 0 };

                        if (pids_have(p->before, p->n_before, k))
                                continue;
                        found++;
                        /* One that has ended already is reaped, not counted. */
                        if (waitid(P_PID, (id_t)k, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                            si.si_pid == k)
                                continue;
                        group = getpgid(k);
                        if (kill(k, SIGKILL) == 0 && !(group_killed && group == p->pid))
                                killed++;
                }
                for (size_t i = 0; i < kids.len; i++)
                        if (!pids_have(p->before, p->n_before, kids.items[i]))
                                while (waitpid(kids.items[i], NULL, 0) < 0 && errno == EINTR)
                                        ;
                free(kids.items);
                if (!found)
                        break;
        }
        return killed;
}

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

        struct pids before = { 0 };

        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
                e = -errno;
                close_pair(out);
                close_pair(err);
                return e;
        }
        /* What the child leaves behind becomes ours, not init's, to be
         * killed when it ends (not inherited by fork: set in each process
         * that runs one). A kernel without it (before 3.4) leaves them to
         * init, as before. */
        (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        list_children(&before);
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
                .before = before.items,
                .n_before = before.len,
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

/* Read what is in pfd[i] into ret (stdout's start, stderr's end). */
static void read_output(struct pollfd pfd[2], int *open_fds, struct child *ret)
{
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
                        (*open_fds)--;
                        continue;
                }
                if (i == 1 && sb->len + (size_t)n > OUTPUT_MAX) {
                        /* stderr: its end says most, keep the last half */
                        size_t keep = OUTPUT_MAX / 2;

                        memmove(sb->buf, sb->buf + sb->len - keep, keep);
                        strbuf_setlen(sb, keep);
                }
                if (sb->len < OUTPUT_MAX)
                        strbuf_add(sb, buf, (size_t)n < OUTPUT_MAX - sb->len ? (size_t)n : OUTPUT_MAX - sb->len);
        }
}

void process_finish(struct process *p, struct child *ret)
{
        struct pollfd pfd[3] = { { .fd = p->out, .events = POLLIN }, { .fd = p->err, .events = POLLIN },
                                 { .fd = -1, .events = POLLIN } };
        long long deadline = p->deadline, hold_until = 0;
        pid_t pid = p->pid;
        int open_fds = 2;
        long nap_ms = 1;
        bool group_killed;
        _cleanup_close_ int pidfd = -1;

        *ret = (struct child){ .out = STRBUF_INIT, .err = STRBUF_INIT };
        if (p->exec_errno) {
                ret->exec_errno = p->exec_errno;
                ret->reaped = true;
                close(p->out);
                close(p->err);
                free(p->before);
                *p = (struct process){ .out = -1, .err = -1 };
                return;
        }
        /* A pidfd tells when it exits; without one (old kernels), poll
         * with short naps. */
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

        /* Until it has exited and both pipes are closed. Its exit and the
         * end of its output are apart: what it started may hold the pipes
         * open after it (a daemon, a process in another session), which is
         * not a child that runs too long. */
        for (;;) {
                long long now = now_ms(), until;
                int r, wait_ms;

                if (!ret->reaped) {
                        pid_t w = waitpid(pid, &ret->wait_status, WNOHANG);

                        if (w == pid) {
                                ret->reaped = true;
                                hold_until = now + OUTPUT_HOLD_MS < deadline ? now + OUTPUT_HOLD_MS
                                                                             : deadline;
                        } else if (w < 0 && errno != EINTR) {
                                break; /* not ours to wait for (ECHILD): "could not be waited for" */
                        }
                }
                if (ret->reaped && open_fds == 0)
                        break;
                if (ret->reaped && now >= hold_until) {
                        ret->output_held = true;
                        break;
                }
                if (!ret->reaped && now >= deadline) {
                        ret->timed_out = true;
                        break;
                }
                until = ret->reaped ? hold_until : deadline;
                wait_ms = until - now > INT_MAX ? INT_MAX : (int)(until - now);
                pfd[2].fd = ret->reaped ? -1 : pidfd;
                if (!ret->reaped && pidfd < 0) {
                        wait_ms = wait_ms < nap_ms ? wait_ms : (int)nap_ms;
                        nap_ms = nap_ms < 50 ? nap_ms * 2 : nap_ms;
                }
                r = poll(pfd, 3, wait_ms);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        ret->timed_out = !ret->reaped; /* cannot wait for it: end it */
                        ret->output_held = ret->reaped && open_fds > 0;
                        break;
                }
                read_output(pfd, &open_fds, ret);
        }

        group_killed = ret->timed_out && !ret->reaped;
        if (group_killed) {
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
        while (!ret->reaped) {
                pid_t w = waitpid(pid, &ret->wait_status, 0);

                if (w == pid)
                        ret->reaped = true;
                else if (w < 0 && errno != EINTR)
                        break;
        }
        /* Whatever it left behind goes with it, in its group or not; then
         * what they had written is read, and the pipes closed. */
        if (ret->reaped)
                ret->strays = kill_strays(p, group_killed);
        for (long long end = now_ms() + 100; open_fds > 0 && now_ms() < end;) {
                pfd[2].fd = -1;
                if (poll(pfd, 2, 20) < 0 && errno != EINTR)
                        break;
                read_output(pfd, &open_fds, ret);
        }
        for (int i = 0; i < 2; i++)
                if (pfd[i].fd >= 0)
                        close(pfd[i].fd);
        free(p->before);
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
        _cleanup_free_ char *how = NULL;

        if (!c->reaped)
                return xstrdup("could not be waited for");
        how = wait_status_string(c->wait_status);
        if (!c->output_held)
                return TAKE_PTR(how);
        if (!c->strays)
                return xasprintf("%s, but its output was still held open %d s after it ended, by "
                                 "no process of its own (left as it is)",
                                 how, OUTPUT_HOLD_MS / 1000);
        return xasprintf("%s, but what it left behind held its output open %d s after it ended: "
                         "killed %u process%s",
                         how, OUTPUT_HOLD_MS / 1000, c->strays, c->strays == 1 ? "" : "es");
}

char *child_strays_string(const struct child *c)
{
        if (!c->strays)
                return xstrdup("");
        return xasprintf(", and %u process%s it had left behind", c->strays, c->strays == 1 ? "" : "es");
}

bool child_succeeded(const struct child *c)
{
        return c->reaped && !c->timed_out && !c->output_held && c->exec_errno == 0 &&
               WIFEXITED(c->wait_status) && WEXITSTATUS(c->wait_status) == 0;
}

