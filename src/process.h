/* process.h: run a program with an explicit environment (no shell), its
 * stdout and stderr captured, with a time limit. */
#ifndef CUDAMOD_PROCESS_H
#define CUDAMOD_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "strbuf.h"

struct child {
        struct strbuf out, err;
        int wait_status;    /* from waitpid; meaningful when reaped */
        bool reaped;
        bool timed_out;
        int exec_errno;     /* execve (or the child's setup) failed with it; 0: it started */
};
void child_release(struct child *c);

/* A started program whose output is not collected yet. */
struct process {
        pid_t pid;
        int out, err;
        int exec_errno;      /* it could not be started (posix_spawn's error) */
        long long deadline;  /* CLOCK_MONOTONIC ms */
};

/* Start path with argv and envp in cwd (NULL: ours), stdin from /dev/null,
 * in a new process group, its deadline timeout seconds from now. Returns 0,
 * or a negative errno when the pipes or fork fail. Its output waits in the
 * pipes (64 KiB each before it blocks) until process_finish. */
int process_start(const char *path, char *const *argv, char *const *envp, const char *cwd,
                  unsigned timeout, struct process *ret);
/* Collect stdout and stderr (1 MiB each: stdout's start, stderr's end; the
 * rest read and dropped) until both close; at the deadline SIGTERM the
 * group (a launcher such as srun then cancels its job step), and SIGKILL
 * it 2 s later. The child is always reaped; ret->exec_errno is set when it could
 * not be started. p is spent. */
void process_finish(struct process *p, struct child *ret);

/* process_start then process_finish. Run path with argv and envp in cwd (NULL: ours), stdin from /dev/null, in
 * a new process group; collect stdout and stderr (1 MiB each: stdout's
 * start, stderr's end; the rest read and dropped) until both close; at
 * timeout seconds, SIGTERM then SIGKILL the group. The child is always reaped. Returns 0
 * with ret filled (ret->exec_errno set when it could not be started), or a
 * negative errno when the pipes or fork fail. */
int process_run(const char *path, char *const *argv, char *const *envp, const char *cwd,
                unsigned timeout, struct child *ret);
/* Where execvp would find name with the PATH of env ("/usr/bin:/bin" when
 * it has none), made absolute; a name holding '/' is taken as it is. NULL
 * with *ret_err (ENOENT, EACCES) when there is none. */
char *process_find_program(const char *name, char *const *env, int *ret_err);
/* "exit status 3", "killed by signal 9 (SIGKILL)": how a process ended,
 * from its wait status, or how a reaped child did. */
char *wait_status_string(int status);
char *child_ending(const struct child *c);
/* Reaped, in time, started, and exit status 0. */
bool child_succeeded(const struct child *c);

#endif
