/* testutil.h: running the built cudamod from a test, golden files, and a lock holder. */
#ifndef CUDAMOD_TESTUTIL_H
#define CUDAMOD_TESTUTIL_H

#include <stdbool.h>
#include <sys/types.h>

struct run_result {
        int status;   /* exit status, or 128+signal */
        char *out;    /* stdout */
        char *err;    /* stderr */
};

/* Run $CUDAMOD_BIN with argv (NULL-terminated, without argv[0]). When
 * drop_privileges is set and we are root, the child runs as nobody. */
void run_cudamod(struct run_result *r, const char *const *argv, bool drop_privileges);
void run_result_release(struct run_result *r);
/* Run argv (argv[0] searched in our PATH) in cwd (NULL: ours) with envp
 * (NULL: ours), capturing stdout and stderr. */
void run_program(struct run_result *r, const char *cwd, const char *const *argv,
                 const char *const *envp);

/* Read two pipes (a child's stdout and stderr) until both reach EOF,
 * appending to out and err, and close them. */
struct strbuf;
void pipes_drain(int out_fd, int err_fd, struct strbuf *out, struct strbuf *err);

/* s with every occurrence of from replaced by to; newly allocated. */
char *str_replace_all(const char *s, const char *from, const char *to);

/* Compare text with tests/golden/NAME; with CUDAMOD_UPDATE_GOLDEN=1 in the
 * environment, write it there instead. Fails the test on a difference and
 * shows the first differing line. */
void assert_golden(const char *name, const char *text);
/* The same for a file at rel below the source root (parents created when
 * updating). */
void assert_golden_file(const char *rel, const char *text);
/* Whether CUDAMOD_UPDATE_GOLDEN=1. */
bool updating_golden(void);

/* Run every test of the suite (freeing it); the exit status for main(). */
#include <check.h>
/* A child that holds an exclusive flock on path (opened read-write,
 * created 0600) until it is killed; returns once it holds it. */
pid_t hold_lock(const char *path);

int run_suite(Suite *s);

/* The dynamic loader (our own PT_INTERP; the programs under test have the
 * same), to run one with --inhibit-cache --library-path. */
const char *test_dynamic_loader(void);

/* Whether the test may drop privileges (root) to make unreadable dirs real. */
bool can_drop_privileges(void);

#endif
