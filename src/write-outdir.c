/* write-outdir.c: the output directory of a write: made when missing (a
 * non-directory in its way named), opened, locked (.cudamod.lock, flock(),
 * waited for with the holder named) and checked to be still the directory
 * at its path once locked; and the temporary files a killed run left. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "strbuf.h"
#include "util-write.h"
#include "util.h"
#include "write-atomic.h"
#include "write-name.h"
#include "write-outdir.h"
#include "banned.h"

/* The first existing prefix of path that is not a directory, or NULL. */
static char *find_non_directory(const char *path)
{
        _cleanup_free_ char *p = xstrdup(path);
        struct stat st;

        for (char *s = p + 1;; s++) {
                if (*s == '/' || *s == '\0') {
                        char saved = *s;
                        *s = '\0';
                        if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
                                return xstrdup(p);
                        *s = saved;
                }
                if (!*s)
                        return NULL;
        }
}

static int not_directory_error(const char *outdir, struct diag *d)
{
        _cleanup_free_ char *bad = find_non_directory(outdir);

        return diag_errorf(d, -ENOTDIR, "'%s' exists and is not a directory", bad ? bad : outdir);
}

/* mkdir -p outdir, each directory made given mode (fchmod: the umask
 * does not narrow it). */
static int create_outdir(const char *outdir, mode_t mode, struct diag *d)
{
        _cleanup_free_ char *p = xstrdup(outdir);

        for (char *s = p + 1;; s++) {
                if (*s == '/' || *s == '\0') {
                        char saved = *s;
                        *s = '\0';
                        if (mkdir(p, mode) == 0) {
                                _cleanup_close_ int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                                if (fd < 0 || fchmod(fd, mode) < 0)
                                        return diag_errorf(d, -errno, "cannot set the mode of '%s': %s", p,
                                                           strerror(errno));
                        } else {
                                struct stat st;
                                if (errno == ENOTDIR)
                                        return not_directory_error(outdir, d);
                                if (errno != EEXIST)
                                        return diag_errorf(d, -errno, "cannot create output directory '%s': %s",
                                                           outdir, strerror(errno));
                                if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode))
                                        return diag_errorf(d, -ENOTDIR, "'%s' exists and is not a directory", p);
                        }
                        *s = saved;
                }
                if (!*s)
                        return 0;
        }
}

/* The output directory, created with create_mode (0: not created), and
 * reached through no symlink another user could have planted
 * (dir_open_trusted); -ENOENT without a diag when it is missing and
 * create_mode is 0. */
int open_outdir(const char *outdir, mode_t create_mode, int *ret_fd, struct diag *d)
{
        bool create = create_mode != 0;
        int fd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 && errno == ENOENT && create) {
                int r = create_outdir(outdir, create_mode, d);
                if (r < 0)
                        return r;
                fd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        if (fd < 0) {
                if (errno == ENOTDIR)
                        return not_directory_error(outdir, d);
                if (errno == ENOENT && !create)
                        return -ENOENT;
                return diag_errorf(d, -errno, "cannot open output directory '%s': %s", outdir,
                                   strerror(errno));
        }
        /* Reached again one component at a time, and that descriptor used:
         * a symlink on the way that another user could have planted (in a
         * directory they may write) would have root write where they
         * chose. */
        if (outdir[0] == '/') {
                int opened = fd;
                int r = dir_open_trusted(outdir, 0, &fd, d);

                close(opened);
                if (r < 0)
                        return r;
        }
        *ret_fd = fd;
        return 0;
}

bool write_interrupted(const struct write_options *o)
{
        return o->interrupted && *o->interrupted;
}

/* "a directory", "a symlink"...: what a path that should be a regular file
 * is instead. */
static const char *file_kind(mode_t mode)
{
        if (S_ISDIR(mode))
                return "a directory";
        if (S_ISLNK(mode))
                return "a symlink";
        if (S_ISFIFO(mode))
                return "a FIFO";
        if (S_ISSOCK(mode))
                return "a socket";
        if (S_ISCHR(mode) || S_ISBLK(mode))
                return "a device";
        return S_ISREG(mode) ? "a regular file" : "not a regular file";
}

/* After the lock is held: outdir must still name the directory that was
 * opened and locked. An admin who moved it away or put something else in
 * its place while this run waited did not mean it to write there (and a
 * run started now would lock the new one: the two would not exclude each
 * other). */
static int check_outdir_unchanged(int outfd, const char *outdir, struct diag *d)
{
        struct stat locked, now, link;
        const char *what;

        if (fstat(outfd, &locked) < 0)
                return diag_errorf(d, -errno, "cannot stat output directory '%s': %s", outdir, strerror(errno));
        if (stat(outdir, &now) == 0 && S_ISDIR(now.st_mode) && now.st_dev == locked.st_dev &&
            now.st_ino == locked.st_ino)
                return 0;
        if (lstat(outdir, &link) < 0)
                what = errno == ENOENT ? "gone" : strerror(errno);
        else if (S_ISLNK(link.st_mode))
                what = stat(outdir, &now) == 0 && S_ISDIR(now.st_mode) ? "a symlink to another directory"
                                                                       : "a symlink to something that is not a directory";
        else if (S_ISDIR(link.st_mode))
                what = "another directory";
        else
                what = file_kind(link.st_mode);
        return diag_errorf(d, -ESTALE,
                           "'%s' was moved or replaced while this run waited for its lock (it is now %s); "
                           "nothing written", outdir, what);
}

/* Who holds the flock on the lock file (st: its stat), from /proc/locks:
 * its PID, or 0 when no line names it (another NFS client, no /proc). */
static pid_t lock_holder_pid(const struct stat *st)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/locks", "re");
        char line[256];

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f)) {
                char kind[16];
                unsigned maj, min;
                unsigned long ino;
                int pid;

                /* "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a
                 * waiter's line has "->" after the number. */
                if (strstr(line, "->") ||
                    sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%lu", kind, &pid, &maj, &min, &ino) != 5)
                        continue;
                if (streq(kind, "FLOCK") && pid > 0 && ino == (unsigned long)st->st_ino &&
                    maj == major(st->st_dev) && min == minor(st->st_dev))
                        return (pid_t)pid;
        }
        return 0;
}

/* Another user's process names itself (comm): what reaches a terminal
 * from it is printable ASCII. */
static void printable(char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f || *s == '\'')
                        *s = '?';
}

/* The holder of the lock on fd, in words ("PID 1234 (cudamod)"; NULL:
 * unknown), and whether it is known to be a cudamod run. /proc/locks
 * names a holder on this host; one on another NFS client stays unknown.
 * (Nothing is written into the lock file: a run that changes nothing
 * touches nothing, and its content could be stale.) */
static char *lock_holder(int fd, bool *ret_cudamod)
{
        char comm[64] = "", *nl;
        _cleanup_free_ char *comm_path = NULL;
        _cleanup_close_ int cfd = -1;
        struct stat st;
        ssize_t n;
        pid_t pid;

        *ret_cudamod = false;
        if (fstat(fd, &st) < 0)
                return NULL;
        pid = lock_holder_pid(&st);
        if (pid > 0) {
                comm_path = xasprintf("/proc/%ld/comm", (long)pid);
                cfd = open(comm_path, O_RDONLY | O_CLOEXEC);
                /* flock(1) on an inherited descriptor, a daemon that forked:
                 * the one that took it is gone, its children hold it. */
                if (cfd < 0 && errno == ENOENT)
                        return xasprintf("a process that inherited it from PID %ld (which has exited)", (long)pid);
                n = cfd >= 0 ? read(cfd, comm, sizeof(comm) - 1) : -1;
                comm[n > 0 ? n : 0] = '\0';
                if ((nl = strchr(comm, '\n')))
                        *nl = '\0';
                printable(comm);
                if (!*comm)
                        return xasprintf("PID %ld", (long)pid);
                *ret_cudamod = streq(comm, "cudamod");
                return xasprintf("PID %ld (%s)", (long)pid, comm);
        }
        return NULL;
}

static double monotonic_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for the lock on fd, at most timeout seconds (negative: not at
 * all). Polled, so that the wait has an end; a signal that sets
 * *o->interrupted ends it at once. */
static int wait_lock(int fd, const char *lock_path, const struct write_options *o, struct diag *d)
{
        long timeout = o->lock_timeout ? o->lock_timeout : WRITE_LOCK_TIMEOUT;
        double deadline = monotonic_now() + (timeout > 0 ? (double)timeout : 0);
        long delay_ms = 10;
        _cleanup_free_ char *holder = NULL;
        bool by_cudamod;

        holder = lock_holder(fd, &by_cudamod);
        if (o->on_wait && timeout > 0)
                o->on_wait(lock_path, holder, by_cudamod, o->userdata);
        for (;;) {
                double left;

                if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                        return 0;
                if (errno != EWOULDBLOCK && errno != EINTR)
                        return diag_errorf(d, -errno, "cannot lock '%s': %s", lock_path, strerror(errno));
                if (write_interrupted(o))
                        return diag_errorf(d, -EINTR, "interrupted while waiting for the lock '%s'", lock_path);
                left = deadline - monotonic_now();
                if (left <= 0)
                        break;
                {
                        double wait_s = (double)delay_ms / 1000 < left ? (double)delay_ms / 1000 : left;
                        struct timespec ts = { .tv_sec = (time_t)wait_s,
                                               .tv_nsec = (long)((wait_s - (double)(time_t)wait_s) * 1e9) };
                        (void)nanosleep(&ts, NULL);
                }
                if (delay_ms < 200)
                        delay_ms *= 2;
        }
        free(holder);
        holder = lock_holder(fd, &by_cudamod);
        if (timeout < 0)
                return diag_errorf(d, -ETIMEDOUT, "'%s' is locked by %s; not waiting (the lock timeout is 0)",
                                   lock_path, holder ? holder : "a process whose PID cannot be read");
        return diag_errorf(d, -ETIMEDOUT,
                           "'%s' is still locked by %s after %ld s; nothing done (--lock-timeout sets "
                           "how long to wait)", lock_path, holder ? holder : "a process whose PID cannot be read",
                           timeout);
}

/* A user's name for messages: "'nobody' (uid 65534)", or "uid N". */
static char *user_label(uid_t uid)
{
        struct passwd pw, *res = NULL;
        char buf[4096];

        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name && *res->pw_name) {
                _cleanup_free_ char *name = xstrdup(res->pw_name);

                printable(name);
                return xasprintf("'%s' (uid %ld)", name, (long)uid);
        }
        return xasprintf("uid %ld", (long)uid);
}

/* Why the lock file (st) is not one to use, or NULL: it must be a regular
 * file of the caller's, one link, that nobody else may write. Another
 * user's file, one they may write, or a link to some other file would let
 * them hold every run off (a shared flock is enough), or have ours fchmod
 * a file of their choice. */
static char *lock_file_problem(const struct stat *st)
{
        if (!S_ISREG(st->st_mode))
                return xasprintf("is %s, not a regular file", file_kind(st->st_mode));
        if (st->st_uid != geteuid()) {
                _cleanup_free_ char *owner = user_label(st->st_uid), *me = user_label(geteuid());
                return xasprintf("belongs to %s, not to %s who runs cudamod", owner, me);
        }
        if (st->st_nlink != 1)
                return xasprintf("has %ju links (another name for it is elsewhere)", (uintmax_t)st->st_nlink);
        if (st->st_mode & 022)
                return xasprintf("is mode %04o: others may write it", (unsigned)(st->st_mode & 07777));
        return NULL;
}

/* Hold the lock for the run. The lock file is the caller's: made O_EXCL
 * when missing, and one that another user owns or may write, or that is
 * not a plain file, is refused, named with its owner, never removed (the
 * admin looks first). A run that writes nothing does not create the lock
 * file, so it takes no lock when there is none yet, nor when it may not
 * use it (another user's: what it reads is still each file whole). */
int take_lock(int outfd, const struct write_options *o, bool readonly, int *ret_fd,
              struct diag *d)
{
        _cleanup_free_ char *lock_path = path_join(o->outdir, LOCK_NAME);
        _cleanup_free_ char *problem = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        /* Read-write: flock is granted on any descriptor, so one a reader
         * may open would let every user who can read the tree hold it.
         * O_NONBLOCK: a FIFO in its place must not hang the open. */
        for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
                fd = openat(outfd, LOCK_NAME, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd >= 0 || errno != ENOENT || readonly)
                        break;
                /* Ours from the start: another's made in between is EEXIST,
                 * opened above again and judged. */
                fd = openat(outfd, LOCK_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
                            O_CLOEXEC, 0600);
                if (fd < 0 && errno != EEXIST)
                        break;
        }
        if (fd < 0) {
                int err = errno;

                if (readonly && (err == ENOENT || err == EACCES)) {
                        *ret_fd = -1;
                        return 0;
                }
                if ((err == ELOOP || err == EISDIR) && fstatat(outfd, LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0)
                        return diag_errorf(d, -err, "lock file '%s' is %s, not a regular file; remove it", lock_path,
                                           file_kind(st.st_mode));
                if (err == EACCES && fstatat(outfd, LOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                        _cleanup_free_ char *owner = user_label(st.st_uid);
                        return diag_errorf(d, -err,
                                           "cannot open lock file '%s' read-write: %s (it belongs to %s, "
                                           "mode %04o): run cudamod as its owner", lock_path, strerror(err),
                                           owner, (unsigned)(st.st_mode & 07777));
                }
                return diag_errorf(d, -err, "cannot %s lock file '%s': %s",
                                   err == EACCES || err == EROFS ? "create" : "open", lock_path, strerror(err));
        }
        if (fstat(fd, &st) < 0)
                return diag_errorf(d, -errno, "cannot stat lock file '%s': %s", lock_path, strerror(errno));
        problem = lock_file_problem(&st);
        if (problem && readonly && S_ISREG(st.st_mode)) {
                /* Reading needs no lock; the run that writes says why. */
                *ret_fd = -1;
                return 0;
        }
        if (problem)
                return diag_errorf(d, S_ISDIR(st.st_mode) ? -EISDIR : S_ISREG(st.st_mode) ? -EPERM : -EINVAL,
                                   "lock file '%s' %s; refusing to use it (whoever may write it can hold every "
                                   "run off): remove it, and let only the owner of '%s' write there", lock_path,
                                   problem, o->outdir);
        /* One an earlier version made 0644, or anyone's umask: ours, so ours to close. */
        if ((st.st_mode & 07777 & ~(mode_t)0600) && fchmod(fd, 0600) < 0)
                return diag_errorf(d, -errno, "cannot make lock file '%s' mode 0600: %s", lock_path,
                                   strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK)
                        return diag_errorf(d, -errno, "cannot lock '%s': %s", lock_path, strerror(errno));
                r = wait_lock(fd, lock_path, o, d);
                if (r < 0)
                        return r;
        }
        r = check_outdir_unchanged(outfd, o->outdir, d);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* Remove the temporary files a killed run left in reldir. Best effort: a
 * directory that cannot be opened is looked at again when written. */
void remove_temp_files_in(int outfd, const char *outdir, const char *reldir)
{
        _cleanup_close_ int fd = -1;
        DIR *dir;
        struct dirent *de;
        int dfd;

        if (open_dir(outfd, outdir, reldir, 0, &fd, NULL) < 0)
                return;
        dfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0)
                return;
        dir = fdopendir(dfd);
        if (!dir) {
                close(dfd);
                return;
        }
        while ((de = readdir(dir))) {
                struct stat st;
                if (!startswith(de->d_name, TMP_PREFIX))
                        continue;
                if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                        (void)unlinkat(fd, de->d_name, 0);
        }
        closedir(dir);
}

