/* process.h: run a program with an explicit environment (no shell), its
 * stdout and stderr captured, with a time limit.
 *
 * The calling process makes itself a child subreaper (PR_SET_CHILD_SUBREAPER)
 * at the first process_start, so that whatever the program leaves behind,
 * even a process that called setsid() or was forked twice, becomes its
 * child rather than init's; process_finish kills and reaps all of them.
 * Its children other than the ones it had at process_start are taken to be
 * the program's: one process at a time per calling process. */
#ifndef CUDAMOD_PROCESS_H
#define CUDAMOD_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "strbuf.h"

struct child {
        struct strbuf out, err;
        int wait_status;    /* from waitpid; meaningful when reaped */
        bool reaped;
        bool timed_out;     /* it ran past its deadline and was killed */
        /* It exited, and something it left behind still held its stdout
         * or stderr open OUTPUT_HOLD_MS later (then killed, in strays). */
        bool output_held;
        unsigned strays;    /* processes it left behind, killed after it ended */
        int exec_errno;     /* execve (or the child's setup) failed with it; 0: it started */
};
void child_release(struct child *c);

/* A started program whose output is not collected yet. */
struct process {
        pid_t pid;
        int out, err;
        int exec_errno;      /* it could not be started (posix_spawn's error) */
        long long deadline;  /* CLOCK_MONOTONIC ms */
        pid_t *before;       /* our children when it started: not its */
        size_t n_before;
};

/* Start path with argv and envp in cwd (NULL: ours), stdin from /dev/null,
 * in a new process group, its deadline timeout seconds from now. Returns 0,
 * or a negative errno when the pipes or fork fail. Its output waits in the
 * pipes (64 KiB each before it blocks) until process_finish. */
int process_start(const char *path, char *const *argv, char *const *envp, const char *cwd,
                  unsigned timeout, struct process *ret);
/* Collect stdout and stderr (1 MiB each: stdout's start, stderr's end; the
 * rest read and dropped) until the child has exited and both close; at the
 * deadline SIGTERM the group (a launcher such as srun then cancels its job
 * step), and SIGKILL it 2 s later (ret->timed_out). When the child has
 * exited but its output is still held open 1 s later, that is
 * ret->output_held. Either way, once the child is reaped every process it
 * left behind is killed and reaped (ret->strays). ret->exec_errno is set
 * when it could not be started. p is spent. */
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
 * from its wait status, or how a reaped child did ("exit status 0, but 1
 * process it left behind held its output open: killed"). */
char *wait_status_string(int status);
char *child_ending(const struct child *c);
/* ", and 2 processes it had left behind" (to follow "killed"), or "". */
char *child_strays_string(const struct child *c);
/* Reaped, in time, started, its output not held open after it exited,
 * and exit status 0. */
bool child_succeeded(const struct child *c);

#endif
