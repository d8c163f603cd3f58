/* util-write.c: files created where nothing planted can redirect them
 * (util-write.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "strbuf.h"
#include "util.h"
#include "util-write.h"
#include "banned.h"

mode_t dir_mode_for(mode_t file_mode)
{
        return (file_mode & 07777) | ((file_mode & 0444) >> 2);
}

/* Some filesystems cannot sync a directory; the rename stands. */
int sync_dir(int dirfd)
{
        if (fsync(dirfd) < 0 && errno != EINVAL)
                return -errno;
        return 0;
}

void random_suffix(char out[7])
{
        static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        static uint64_t counter;
        unsigned char raw[6];

        if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) != (ssize_t)sizeof(raw)) {
                struct timespec ts;
                uint64_t x;

                clock_gettime(CLOCK_MONOTONIC, &ts);
                x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
                    ++counter * 0x9e3779b97f4a7c15ull;
                for (size_t i = 0; i < sizeof(raw); i++) {
                        x ^= x >> 33;
                        x *= 0xff51afd7ed558ccdull;
                        raw[i] = (unsigned char)(x >> 56);
                }
        }
        for (size_t i = 0; i < sizeof(raw); i++)
                out[i] = chars[raw[i] % (sizeof(chars) - 1)];
        out[6] = '\0';
}

static int write_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, data, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                data += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Write data to a new temporary file next to name (its name in ret_tmp),
 * mode set, not yet synced or renamed. */
int write_temp(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
               char ret_tmp[static NAME_MAX + 1])
{
        /* Room for the prefix, '.', the suffix and the NUL. */
        size_t keep = NAME_MAX - strlen(TMP_PREFIX) - 7;
        _cleanup_close_ int fd = -1;
        char tmp[NAME_MAX + 1];
        int r = 0;

        if (strlen(name) < keep)
                keep = strlen(name);
        for (int attempt = 0; attempt < 100; attempt++) {
                char suffix[7];

                random_suffix(suffix);
                snprintf(tmp, sizeof(tmp), "%s%.*s.%s", TMP_PREFIX, (int)keep, name, suffix);
                fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                            0600);
                if (fd >= 0 || errno != EEXIST)
                        break;
        }
        if (fd < 0)
                return -errno;
        r = write_all(fd, data, len);
        if (r == 0 && fchmod(fd, mode) < 0)
                r = -errno;
        if (r == 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlinkat(dirfd, tmp, 0);
                return r;
        }
        memcpy(ret_tmp, tmp, sizeof(tmp));
        return 0;
}

/* One file alone (the index): temporary file, fsync, rename, directory
 * fsync. */
int write_atomic(int dirfd, const char *name, const char *data, size_t len, mode_t mode)
{
        char tmp[NAME_MAX + 1];
        _cleanup_close_ int fd = -1;
        int r;

        r = write_temp(dirfd, name, data, len, mode, tmp);
        if (r < 0)
                return r;
        fd = openat(dirfd, tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || fsync(fd) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
                r = -errno;
                (void)unlinkat(dirfd, tmp, 0);
                return r;
        }
        return sync_dir(dirfd);
}

/* Whether the symlink name in dirfd (lst: its lstat) is one only root or
 * the caller could have made or replaced. */
static bool symlink_trusted(int dirfd, const struct stat *lst)
{
        uid_t me = geteuid();
        struct stat dst;

        if (lst->st_uid != 0 && lst->st_uid != me)
                return false;
        if (fstat(dirfd, &dst) < 0)
                return false;
        if (dst.st_uid != 0 && dst.st_uid != me)
                return false;
        return !(dst.st_mode & 022) || (dst.st_mode & S_ISVTX);
}

/* Reached through at most this many symlinks (the kernel's own limit). */
#define TRUSTED_MAX_LINKS 40

int dir_open_trusted(const char *path, mode_t create_mode, int *ret_fd, struct diag *d)
{
        _cleanup_strbuf_ struct strbuf rest = STRBUF_INIT, at = STRBUF_INIT;
        _cleanup_close_ int fd = -1;
        unsigned links = 0;
        size_t pos = 0;

        if (path[0] != '/')
                return diag_errorf(d, -EINVAL, "'%s' is not an absolute path", path);
        fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return diag_errorf(d, -errno, "cannot open '/': %s", strerror(errno));
        strbuf_addstr(&rest, path);
        for (;;) {
                _cleanup_free_ char *comp = NULL;
                struct stat st;
                bool made = false;
                size_t end;
                int next;

                while (rest.buf[pos] == '/')
                        pos++;
                if (!rest.buf[pos])
                        break;
                end = pos;
                while (rest.buf[end] && rest.buf[end] != '/')
                        end++;
                comp = xstrndup(rest.buf + pos, end - pos);
                pos = end;
                if (streq(comp, "."))
                        continue;
                /* at: the directory reached so far, for messages. */
                if (streq(comp, "..")) {
                        char *slash = strrchr(at.buf, '/');
                        strbuf_setlen(&at, slash ? (size_t)(slash - at.buf) : 0);
                } else
                        strbuf_addf(&at, "/%s", comp);
                next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (next < 0 && errno == ENOENT && create_mode) {
                        if (mkdirat(fd, comp, create_mode) == 0)
                                made = true;
                        else if (errno != EEXIST)
                                return diag_errorf(d, -errno, "cannot create directory '%s': %s", at.buf,
                                                   strerror(errno));
                        next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (next >= 0) {
                        if (made && fchmod(next, create_mode) < 0) {
                                int err = -errno;
                                close(next);
                                return diag_errorf(d, err, "cannot set the mode of '%s': %s", at.buf,
                                                   strerror(-err));
                        }
                        close(fd);
                        fd = next;
                        continue;
                }
                if ((errno == ELOOP || errno == ENOTDIR) && fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        ssize_t n;
                        struct strbuf joined = STRBUF_INIT;

                        if (!symlink_trusted(fd, &st))
                                return diag_errorf(d, -ELOOP, "'%s' is a symlink another user could have made or "
                                                   "replaced (owner uid %ld); refusing to follow it", at.buf,
                                                   (long)st.st_uid);
                        if (++links > TRUSTED_MAX_LINKS)
                                return diag_errorf(d, -ELOOP, "cannot open '%s': %s", path, strerror(ELOOP));
                        n = readlinkat(fd, comp, target, sizeof(target) - 1);
                        if (n < 0)
                                return diag_errorf(d, -errno, "cannot read the symlink '%s': %s", at.buf,
                                                   strerror(errno));
                        target[n] = '\0';
                        /* What is left of the path now starts with the target. */
                        strbuf_addf(&joined, "%s/%s", target, rest.buf + pos);
                        strbuf_release(&rest);
                        rest = joined;
                        pos = 0;
                        {
                                char *slash = strrchr(at.buf, '/');
                                strbuf_setlen(&at, slash ? (size_t)(slash - at.buf) : 0);
                        }
                        if (target[0] == '/') {
                                close(fd);
                                fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                                if (fd < 0)
                                        return diag_errorf(d, -errno, "cannot open '/': %s", strerror(errno));
                                strbuf_reset(&at);
                        }
                        continue;
                }
                if (errno == ENOTDIR)
                        return diag_errorf(d, -ENOTDIR, "'%s' exists and is not a directory", at.buf);
                if (errno == ENOENT && !create_mode)
                        return diag_errorf(d, -ENOENT, "cannot open directory '%s': %s", at.buf, strerror(ENOENT));
                return diag_errorf(d, -errno, "cannot open directory '%s': %s", at.buf, strerror(errno));
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}
