/* slowfs.so: an LD_PRELOAD library that makes the filesystem slow, as a
 * network filesystem is: every call that looks a name up or reads a
 * directory waits SLOWFS_US microseconds (default 200, a LAN round trip to
 * an NFS server) before it is made. Intercepted: open, openat, stat, lstat,
 * fstatat (and their 64 variants), readlink, access, faccessat, and
 * getdents64 and openat2 made through syscall(3) (walk.c's getdents64;
 * openat2 so that no lookup escapes). Calls on a descriptor alone (fstat, read, close) are not delayed: a client answers
 * them from its caches.
 *
 * Each thread waits on its own: a program that has several threads
 * looking names up at once waits for all of them at once, as it does on
 * NFS. Only calls made through the dynamic symbol table are delayed:
 * glibc's own internal calls (readdir's getdents64, fts's openat in find)
 * are not, so find cannot be measured with it (bench/floor.sh models find
 * instead: its warm time plus its lookups times the delay).
 *
 * A benchmark library: nothing of it is installed; `ninja -C BUILD
 * bench/slowfs.so`. */
/* Its own declarations: glibc's headers, with _FILE_OFFSET_BITS=64,
 * rename open and stat to their 64 variants, which are defined here too. */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define SLOWFS_O_CREAT 0100
#define SLOWFS_O_TMPFILE 020200000
#define SLOWFS_AT_EMPTY_PATH 0x1000

static long delay_us = -1;

static void slow(void)
{
        struct timespec ts;

        if (delay_us < 0) {
                const char *s = getenv("SLOWFS_US");

                delay_us = s && *s ? strtol(s, NULL, 10) : 200;
        }
        if (delay_us <= 0)
                return;
        ts.tv_sec = delay_us / 1000000;
        ts.tv_nsec = (delay_us % 1000000) * 1000;
        while (nanosleep(&ts, &ts) < 0)
                ;
}

static void *real(const char *name)
{
        return dlsym(RTLD_NEXT, name);
}

typedef int (*open_at_fn)(int, const char *, int, ...);
typedef int (*open_fn)(const char *, int, ...);
typedef int (*stat_fn)(const char *, void *);
typedef int (*stat_at_fn)(int, const char *, void *, int);

#define OPEN_AT(name)                                                                \
        int name(int dirfd, const char *path, int flags, ...);                      \
        int name(int dirfd, const char *path, int flags, ...)                       \
        {                                                                            \
                static open_at_fn fn;                                                \
                int mode = 0;                                                        \
                if (!fn)                                                             \
                        fn = (open_at_fn)real(#name);                                \
                if (flags & (SLOWFS_O_CREAT | SLOWFS_O_TMPFILE)) {                   \
                        va_list ap;                                                  \
                        va_start(ap, flags);                                         \
                        mode = va_arg(ap, int);                                      \
                        va_end(ap);                                                  \
                }                                                                    \
                slow();                                                              \
                return fn(dirfd, path, flags, mode);                                 \
        }
#define OPEN(name)                                                                   \
        int name(const char *path, int flags, ...);                                 \
        int name(const char *path, int flags, ...)                                  \
        {                                                                            \
                static open_fn fn;                                                   \
                int mode = 0;                                                        \
                if (!fn)                                                             \
                        fn = (open_fn)real(#name);                                   \
                if (flags & (SLOWFS_O_CREAT | SLOWFS_O_TMPFILE)) {                   \
                        va_list ap;                                                  \
                        va_start(ap, flags);                                         \
                        mode = va_arg(ap, int);                                      \
                        va_end(ap);                                                  \
                }                                                                    \
                slow();                                                              \
                return fn(path, flags, mode);                                        \
        }
#define STAT_PATH(name)                                                              \
        int name(const char *path, void *st);                                       \
        int name(const char *path, void *st)                                        \
        {                                                                            \
                static stat_fn fn;                                                   \
                if (!fn)                                                             \
                        fn = (stat_fn)real(#name);                                   \
                slow();                                                              \
                return fn(path, st);                                                 \
        }
/* fstat(fd) is fstatat(fd, "", AT_EMPTY_PATH): no name looked up. */
#define STAT_AT(name)                                                                \
        int name(int dirfd, const char *path, void *st, int flags);                 \
        int name(int dirfd, const char *path, void *st, int flags)                  \
        {                                                                            \
                static stat_at_fn fn;                                                \
                if (!fn)                                                             \
                        fn = (stat_at_fn)real(#name);                                \
                if (!(path && !*path && (flags & SLOWFS_AT_EMPTY_PATH)))             \
                        slow();                                                      \
                return fn(dirfd, path, st, flags);                                   \
        }

OPEN_AT(openat)
OPEN_AT(openat64)
OPEN(open)
OPEN(open64)
STAT_PATH(stat)
STAT_PATH(stat64)
STAT_PATH(lstat)
STAT_PATH(lstat64)
STAT_AT(fstatat)
STAT_AT(fstatat64)

ssize_t readlink(const char *restrict path, char *restrict buf, size_t size)
{
        static ssize_t (*fn)(const char *, char *, size_t);

        if (!fn)
                fn = (ssize_t(*)(const char *, char *, size_t))real("readlink");
        slow();
        return fn(path, buf, size);
}

int access(const char *path, int mode)
{
        static int (*fn)(const char *, int);

        if (!fn)
                fn = (int (*)(const char *, int))real("access");
        slow();
        return fn(path, mode);
}

int faccessat(int dirfd, const char *path, int mode, int flags)
{
        static int (*fn)(int, const char *, int, int);

        if (!fn)
                fn = (int (*)(int, const char *, int, int))real("faccessat");
        slow();
        return fn(dirfd, path, mode, flags);
}

long syscall(long n, ...)
{
        static long (*fn)(long, ...);
        long a[6];
        va_list ap;

        if (!fn)
                fn = (long (*)(long, ...))real("syscall");
        va_start(ap, n);
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (n == SYS_getdents64 || n == SYS_openat2)
                slow();
        return fn(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
