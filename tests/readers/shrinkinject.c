/* shrinkinject.c: an LD_PRELOAD library that truncates one file just after
 * the process's Kth read or mapping of it, for tests/readers/readers.sh: a
 * library that shrinks while cudamod reads it, made certain, where a race
 * with a truncating loop would be luck.
 *
 * It wraps read, pread, pread64, mmap and mmap64 and counts the calls on a
 * descriptor of the file (same device and inode as the path had at load).
 * After the Kth succeeds, truncate(2) cuts the file to N bytes, once.
 *
 * Environment (read once, at load; without CUDAMOD_SHRINK_FILE the library
 * does nothing):
 *   CUDAMOD_SHRINK_FILE=PATH  the file
 *   CUDAMOD_SHRINK_TO=N       its size afterwards (default 64)
 *   CUDAMOD_SHRINK_AFTER=K    the call after which it is cut (default 2: a
 *                             mapping reader has then mapped it, a pread
 *                             reader read its ELF identification and header) */
#undef _FILE_OFFSET_BITS /* define pread and mmap, not aliases of the 64 ones */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static const char *file;
static struct stat target;
static long after = 2, calls;
static off_t to = 64;
static bool done = true;

__attribute__((constructor)) static void shrink_init(void)
{
        const char *s;

        file = getenv("CUDAMOD_SHRINK_FILE");
        if (!file || !*file || stat(file, &target) < 0)
                return;
        if ((s = getenv("CUDAMOD_SHRINK_TO")))
                to = (off_t)atoll(s);
        if ((s = getenv("CUDAMOD_SHRINK_AFTER")))
                after = atol(s);
        done = false;
}

static void count(int fd)
{
        struct stat st;

        if (done || fd < 0 || fstat(fd, &st) < 0 || st.st_dev != target.st_dev ||
            st.st_ino != target.st_ino)
                return;
        if (++calls >= after) {
                done = true;
                (void)truncate(file, to);
        }
}

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pread64_fn)(int, void *, size_t, off64_t);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef void *(*mmap64_fn)(void *, size_t, int, int, int, off64_t);

#define REAL(name) \
        static name##_fn real_##name; \
        if (!real_##name) \
                real_##name = (name##_fn)dlsym(RTLD_NEXT, #name)

ssize_t read(int fd, void *buf, size_t n)
{
        REAL(read);
        ssize_t r = real_read(fd, buf, n);
        if (r >= 0)
                count(fd);
        return r;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
        REAL(pread);
        ssize_t r = real_pread(fd, buf, n, off);
        if (r >= 0)
                count(fd);
        return r;
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
        REAL(pread64);
        ssize_t r = real_pread64(fd, buf, n, off);
        if (r >= 0)
                count(fd);
        return r;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
        REAL(mmap);
        void *p = real_mmap(addr, len, prot, flags, fd, off);
        if (p != MAP_FAILED)
                count(fd);
        return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
        REAL(mmap64);
        void *p = real_mmap64(addr, len, prot, flags, fd, off);
        if (p != MAP_FAILED)
                count(fd);
        return p;
}
