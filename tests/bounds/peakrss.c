/* peakrss.c: run a command and print its peak resident set size.
 *
 *     peakrss FILE CMD [ARG...]
 *
 * runs CMD (searched in PATH) and writes its peak RSS in KiB to FILE, then
 * exits with CMD's status (128 + N for a signal). getrusage counts a child
 * from its fork, so the parent's own size is part of the figure: this
 * program is small, unlike bash or python. Used by tests/bounds/bounds.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        struct rusage ru;
        int status;
        pid_t pid;
        FILE *f;

        if (argc < 3) {
                fprintf(stderr, "usage: peakrss FILE CMD [ARG...]\n");
                return 2;
        }
        pid = fork();
        if (pid < 0) {
                perror("peakrss: fork");
                return 125;
        }
        if (pid == 0) {
                execvp(argv[2], argv + 2);
                fprintf(stderr, "peakrss: cannot run '%s': %s\n", argv[2], strerror(errno));
                _exit(127);
        }
        if (wait4(pid, &status, 0, &ru) < 0) {
                perror("peakrss: wait4");
                return 125;
        }
        f = fopen(argv[1], "w");
        if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) {
                perror("peakrss: cannot write the result");
                return 125;
        }
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return WEXITSTATUS(status);
}
