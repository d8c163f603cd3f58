/* faultinject.c: an LD_PRELOAD library that makes chosen file-system calls
 * of a process fail (or raises a signal at one), for tests/faults/faults.sh.
 *
 * It wraps the calls through which cudamod writes (write, pwrite, writev,
 * fsync, fdatasync, syncfs, open/openat, mkdir/mkdirat, rename/renameat/
 * renameat2, unlink/unlinkat/rmdir, fchmod) and looks only at those on
 * paths equal to or below one directory; the path of a file descriptor is
 * read from /proc/self/fd, that of an *at() call is its directory's path
 * joined with the name. Calls elsewhere (stdout, the scanned installs) pass
 * through untouched and uncounted.
 *
 * Environment (read once, at load):
 *   CUDAMOD_FAULT_DIR=DIR   absolute, without symlinks; unset or empty: the
 *                           library does nothing at all
 *   CUDAMOD_FAULT=RULE[,RULE]...   RULE is OP:WHAT:WHEN
 *     OP    write   write, pwrite, writev
 *           fsync   fsync, fdatasync (files and directories)
 *           syncfs  syncfs
 *           open    open, openat (every one, whatever the flags)
 *           creat   open, openat with O_CREAT (counted as open as well)
 *           mkdir   mkdir, mkdirat
 *           rename  rename, renameat, renameat2 (the path is the source)
 *           unlink  unlink, unlinkat (with AT_REMOVEDIR too), rmdir
 *           fchmod  fchmod
 *     WHAT  an errno name (ENOSPC, EIO, EACCES, EPERM, EROFS, EDQUOT, ...)
 *           or number: the call does nothing and fails with it; or a signal
 *           name (KILL, TERM, INT, HUP, QUIT, STOP): the signal is raised
 *           just before the call, which then goes ahead (if the process is
 *           still there)
 *     WHEN  N   the Nth matching call of OP (1-based)
 *           N+  the Nth and every later one (a disk that stays full)
 *   CUDAMOD_FAULT_LOG=FILE  append a line per matching call,
 *                           "OP N PATH RESULT", N its number among OP's
 *                           matching calls, RESULT "ok", the errno name
 *                           injected or the signal name raised. A run with
 *                           a log and no CUDAMOD_FAULT counts the calls a
 *                           sweep has to cover: the first N-1 calls of a run
 *                           with OP:WHAT:N are the same as a clean run's.
 *
 * Under AddressSanitizer, whose runtime must come first among the loaded
 * libraries: LD_PRELOAD="/path/libasan.so.N /path/faultinject.so". ASan's
 * own interceptors (write...) then call this library's, which call libc's. */
#undef _FILE_OFFSET_BITS /* define open, not an alias of open64 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

enum op { OP_WRITE, OP_FSYNC, OP_SYNCFS, OP_OPEN, OP_CREAT, OP_MKDIR, OP_RENAME, OP_UNLINK, OP_FCHMOD, OP_MAX };

static const char *const op_names[OP_MAX] = {
        [OP_WRITE] = "write", [OP_FSYNC] = "fsync",   [OP_SYNCFS] = "syncfs",
        [OP_OPEN] = "open",   [OP_CREAT] = "creat",   [OP_MKDIR] = "mkdir",
        [OP_RENAME] = "rename", [OP_UNLINK] = "unlink", [OP_FCHMOD] = "fchmod",
};

static const struct {
        const char *name;
        int value;
} errnos[] = {
        { "ENOSPC", ENOSPC }, { "EIO", EIO },       { "EACCES", EACCES },   { "EPERM", EPERM },
        { "EROFS", EROFS },   { "EDQUOT", EDQUOT }, { "ENOTDIR", ENOTDIR }, { "EISDIR", EISDIR },
        { "ELOOP", ELOOP },   { "EEXIST", EEXIST }, { "ENOENT", ENOENT },   { "EBUSY", EBUSY },
        { "EINTR", EINTR },   { "EFBIG", EFBIG },   { "ENOMEM", ENOMEM },   { "ESTALE", ESTALE },
        { "EINVAL", EINVAL }, { "EBADF", EBADF },   { "EMFILE", EMFILE },   { "ENFILE", ENFILE },
        { "EXDEV", EXDEV },   { "ENAMETOOLONG", ENAMETOOLONG },
}, signals[] = {
        { "KILL", SIGKILL }, { "TERM", SIGTERM }, { "INT", SIGINT },
        { "HUP", SIGHUP },   { "QUIT", SIGQUIT }, { "STOP", SIGSTOP },
};

struct rule {
        enum op op;
        int err;               /* or */
        int sig;
        unsigned long n;
        bool and_later;
        char what[16];         /* as written, for the log */
};

#define MAX_RULES 16

static struct rule rules[MAX_RULES];
static size_t n_rules;
static unsigned long counts[OP_MAX];
static char fault_dir[PATH_MAX];
static size_t fault_dir_len;
static int log_fd = -1;
static __thread int busy; /* inside the library: pass everything through */

#define REAL(name) \
        static __typeof__(name) *real_##name; \
        if (!real_##name) \
                real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static void die(const char *what, const char *arg)
{
        fprintf(stderr, "faultinject: %s: '%s'\n", what, arg);
        _exit(99);
}

static int lookup(const char *name, bool sig)
{
        size_t n = sig ? sizeof(signals) / sizeof(signals[0]) : sizeof(errnos) / sizeof(errnos[0]);

        for (size_t i = 0; i < n; i++)
                if (strcmp(sig ? signals[i].name : errnos[i].name, name) == 0)
                        return sig ? signals[i].value : errnos[i].value;
        return 0;
}

static void parse_rule(char *s)
{
        char *what = strchr(s, ':'), *when, *end;
        struct rule *r;
        size_t i;

        if (n_rules == MAX_RULES)
                die("too many rules", s);
        r = &rules[n_rules];
        when = what ? strchr(what + 1, ':') : NULL;
        if (!when)
                die("a rule is OP:WHAT:WHEN", s);
        *what++ = '\0';
        *when++ = '\0';
        for (i = 0; i < OP_MAX; i++)
                if (strcmp(s, op_names[i]) == 0)
                        break;
        if (i == OP_MAX)
                die("unknown operation", s);
        r->op = (enum op)i;
        if (strlen(what) >= sizeof(r->what))
                die("unknown errno or signal", what);
        snprintf(r->what, sizeof(r->what), "%s", what);
        r->sig = lookup(what, true);
        r->err = r->sig ? 0 : lookup(what, false);
        if (!r->sig && !r->err) {
                long v = strtol(what, &end, 10);
                if (*end || v <= 0 || v > 4095)
                        die("unknown errno or signal", what);
                r->err = (int)v;
        }
        errno = 0;
        r->n = strtoul(when, &end, 10);
        r->and_later = *end == '+';
        if (errno || r->n == 0 || (*end && strcmp(end, "+") != 0))
                die("WHEN is N or N+ (N from 1)", when);
        n_rules++;
}

__attribute__((constructor)) static void faultinject_init(void)
{
        const char *dir = getenv("CUDAMOD_FAULT_DIR");
        const char *spec = getenv("CUDAMOD_FAULT");
        const char *log = getenv("CUDAMOD_FAULT_LOG");

        if (!dir || !*dir)
                return;
        if (dir[0] != '/' || strlen(dir) >= sizeof(fault_dir))
                die("CUDAMOD_FAULT_DIR must be an absolute path", dir);
        if (spec && *spec) {
                char *copy = strdup(spec), *save = NULL;

                if (!copy)
                        die("out of memory", spec);
                for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
                        parse_rule(t);
                free(copy);
        }
        if (log && *log) {
                REAL(open);
                log_fd = real_open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (log_fd < 0)
                        die("cannot open CUDAMOD_FAULT_LOG", log);
        }
        snprintf(fault_dir, sizeof(fault_dir), "%s", dir);
        fault_dir_len = strlen(fault_dir);
        while (fault_dir_len > 1 && fault_dir[fault_dir_len - 1] == '/')
                fault_dir[--fault_dir_len] = '\0';
}

static ssize_t real_write_call(int fd, const void *buf, size_t n)
{
        REAL(write);
        return real_write(fd, buf, n);
}

static bool under_dir(const char *path)
{
        return fault_dir_len > 0 && strncmp(path, fault_dir, fault_dir_len) == 0 &&
               (path[fault_dir_len] == '\0' || path[fault_dir_len] == '/');
}

/* The path fd refers to, in buf ("" when unknown). */
static void fd_path(int fd, char *buf, size_t size)
{
        char proc[64];
        ssize_t n;

        buf[0] = '\0';
        if (fd == AT_FDCWD) {
                if (!getcwd(buf, size))
                        buf[0] = '\0';
                return;
        }
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, buf, size - 1);
        buf[n > 0 ? n : 0] = '\0';
}

/* dirfd's path joined with name, in buf. */
static void at_path(int dirfd, const char *name, char *buf, size_t size)
{
        char dir[PATH_MAX];

        if (!name)
                name = "";
        if (name[0] == '/') {
                snprintf(buf, size, "%s", name);
                return;
        }
        fd_path(dirfd, dir, sizeof(dir));
        if (!dir[0]) {
                buf[0] = '\0';
                return;
        }
        snprintf(buf, size, "%s%s%s", dir, name[0] && strcmp(dir, "/") != 0 ? "/" : "", name);
}

static void log_call(enum op op, unsigned long n, const char *path, const char *result)
{
        char line[PATH_MAX + 96];
        int len;

        if (log_fd < 0)
                return;
        len = snprintf(line, sizeof(line), "%s %lu %s %s\n", op_names[op], n, path, result);
        if (len > 0)
                (void)!real_write_call(log_fd, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
}

/* Count a matching call of op on path and decide its fate: 0 to go ahead,
 * else the errno to fail with. A signal rule raises its signal here. */
static int decide(enum op op, const char *path)
{
        unsigned long n;

        if (!path[0] || !under_dir(path))
                return 0;
        n = __atomic_add_fetch(&counts[op], 1, __ATOMIC_SEQ_CST);
        for (size_t i = 0; i < n_rules; i++) {
                const struct rule *r = &rules[i];

                if (r->op != op || !(n == r->n || (r->and_later && n > r->n)))
                        continue;
                log_call(op, n, path, r->what);
                if (r->sig) {
                        raise(r->sig);
                        return 0;
                }
                return r->err;
        }
        log_call(op, n, path, "ok");
        return 0;
}

static int decide_fd(enum op op, int fd)
{
        char path[PATH_MAX];
        int err;

        if (busy || !fault_dir_len)
                return 0;
        busy++;
        fd_path(fd, path, sizeof(path));
        err = decide(op, path);
        busy--;
        return err;
}

static int decide_at(enum op op, int dirfd, const char *name)
{
        char path[PATH_MAX];
        int err;

        if (busy || !fault_dir_len)
                return 0;
        busy++;
        at_path(dirfd, name, path, sizeof(path));
        err = decide(op, path);
        busy--;
        return err;
}

static int decide_open(int dirfd, const char *name, int flags)
{
        char path[PATH_MAX];
        int err, err2 = 0;

        if (busy || !fault_dir_len)
                return 0;
        busy++;
        at_path(dirfd, name, path, sizeof(path));
        err = decide(OP_OPEN, path);
        if (flags & O_CREAT)
                err2 = decide(OP_CREAT, path);
        busy--;
        return err ? err : err2;
}

#define FAIL_WITH(decision, ret) \
        do { \
                int err_ = (decision); \
                if (err_) { \
                        errno = err_; \
                        return (ret); \
                } \
        } while (0)

/* ---- the wrappers ---- */

ssize_t write(int fd, const void *buf, size_t n)
{
        REAL(write);
        FAIL_WITH(decide_fd(OP_WRITE, fd), -1);
        return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
        REAL(pwrite);
        FAIL_WITH(decide_fd(OP_WRITE, fd), -1);
        return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
        REAL(pwrite64);
        FAIL_WITH(decide_fd(OP_WRITE, fd), -1);
        return real_pwrite64(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
        REAL(writev);
        FAIL_WITH(decide_fd(OP_WRITE, fd), -1);
        return real_writev(fd, iov, cnt);
}

int fsync(int fd)
{
        REAL(fsync);
        FAIL_WITH(decide_fd(OP_FSYNC, fd), -1);
        return real_fsync(fd);
}

int fdatasync(int fd)
{
        REAL(fdatasync);
        FAIL_WITH(decide_fd(OP_FSYNC, fd), -1);
        return real_fdatasync(fd);
}

int syncfs(int fd)
{
        REAL(syncfs);
        FAIL_WITH(decide_fd(OP_SYNCFS, fd), -1);
        return real_syncfs(fd);
}

int fchmod(int fd, mode_t mode)
{
        REAL(fchmod);
        FAIL_WITH(decide_fd(OP_FCHMOD, fd), -1);
        return real_fchmod(fd, mode);
}

/* The mode argument is there only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, mode) \
        do { \
                if ((flags) & O_CREAT || ((flags) & O_TMPFILE) == O_TMPFILE) { \
                        va_list ap; \
                        va_start(ap, flags); \
                        mode = (mode_t)va_arg(ap, int); \
                        va_end(ap); \
                } \
        } while (0)

int open(const char *path, int flags, ...)
{
        mode_t mode = 0;

        REAL(open);
        OPEN_MODE(flags, mode);
        FAIL_WITH(decide_open(AT_FDCWD, path, flags), -1);
        return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
        mode_t mode = 0;

        REAL(open64);
        OPEN_MODE(flags, mode);
        FAIL_WITH(decide_open(AT_FDCWD, path, flags), -1);
        return real_open64(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
        mode_t mode = 0;

        REAL(openat);
        OPEN_MODE(flags, mode);
        FAIL_WITH(decide_open(dirfd, path, flags), -1);
        return real_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
        mode_t mode = 0;

        REAL(openat64);
        OPEN_MODE(flags, mode);
        FAIL_WITH(decide_open(dirfd, path, flags), -1);
        return real_openat64(dirfd, path, flags, mode);
}

int mkdir(const char *path, mode_t mode)
{
        REAL(mkdir);
        FAIL_WITH(decide_at(OP_MKDIR, AT_FDCWD, path), -1);
        return real_mkdir(path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode)
{
        REAL(mkdirat);
        FAIL_WITH(decide_at(OP_MKDIR, dirfd, path), -1);
        return real_mkdirat(dirfd, path, mode);
}

int rename(const char *from, const char *to)
{
        REAL(rename);
        FAIL_WITH(decide_at(OP_RENAME, AT_FDCWD, from), -1);
        return real_rename(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
        REAL(renameat);
        FAIL_WITH(decide_at(OP_RENAME, fromfd, from), -1);
        return real_renameat(fromfd, from, tofd, to);
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags)
{
        REAL(renameat2);
        FAIL_WITH(decide_at(OP_RENAME, fromfd, from), -1);
        return real_renameat2(fromfd, from, tofd, to, flags);
}

int unlink(const char *path)
{
        REAL(unlink);
        FAIL_WITH(decide_at(OP_UNLINK, AT_FDCWD, path), -1);
        return real_unlink(path);
}

int unlinkat(int dirfd, const char *path, int flags)
{
        REAL(unlinkat);
        FAIL_WITH(decide_at(OP_UNLINK, dirfd, path), -1);
        return real_unlinkat(dirfd, path, flags);
}

int rmdir(const char *path)
{
        REAL(rmdir);
        FAIL_WITH(decide_at(OP_UNLINK, AT_FDCWD, path), -1);
        return real_rmdir(path);
}
