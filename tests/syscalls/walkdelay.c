/* walkdelay.so: an LD_PRELOAD library that makes a directory's walk take
 * a random time, so that the threads of a parallel scan finish their
 * subtrees in an order that changes from run to run. Every openat(2) of a
 * directory and every getdents64 read through syscall(3) (how walk.c
 * reads) sleeps 0 to WALKDELAY_MAX_US microseconds (default 2000), drawn
 * from WALKDELAY_SEED (default: the time and the pid).
 *
 * A test library: nothing of it is installed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t state;
static long max_us = -1;

static void init(void)
{
        const char *s = getenv("WALKDELAY_SEED"), *m = getenv("WALKDELAY_MAX_US");

        state = s && *s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        state = state * 2 + 1;
        max_us = m && *m ? strtol(m, NULL, 10) : 2000;
}

static void delay(void)
{
        uint64_t x;

        pthread_mutex_lock(&lock);
        if (max_us < 0)
                init();
        /* xorshift64 */
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        x = state;
        pthread_mutex_unlock(&lock);
        if (max_us > 0)
                usleep((useconds_t)(x % (uint64_t)(max_us + 1)));
}

/* openat64: what a program built with _FILE_OFFSET_BITS=64 calls. */
int openat64(int dirfd, const char *path, int flags, ...)
{
        static int (*real)(int, const char *, int, ...);
        mode_t mode = 0;

        if (!real)
                real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
        if (flags & (O_CREAT | O_TMPFILE)) {
                va_list ap;

                va_start(ap, flags);
                mode = (mode_t)va_arg(ap, int);
                va_end(ap);
        }
        if (flags & O_DIRECTORY)
                delay();
        return real(dirfd, path, flags, mode);
}

long syscall(long n, ...)
{
        static long (*real)(long, ...);
        long a[6];
        va_list ap;

        if (!real)
                real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
        va_start(ap, n);
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (n == SYS_getdents64)
                delay();
        return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
