/* write-atomic.h: reaching and reading the files below the output
 * directory (write-atomic.c); writing a file and syncing a directory are
 * util-write.h's. Paths called rel are relative to the output directory,
 * whose descriptor is outfd and whose name (for messages) is outdir. A
 * struct parent_cache owns its dir and fd (parent_cache_release); what
 * parent_get returns is borrowed from it. */
#ifndef CUDAMOD_WRITE_ATOMIC_H
#define CUDAMOD_WRITE_ATOMIC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "diag.h"

struct strbuf;

/* The directory reldir ("" for the output directory itself) below outfd,
 * each component opened with O_NOFOLLOW and, with create_mode (0: none),
 * made with that mode (set with fchmod: the umask does not narrow it)
 * when missing. -ENOENT without a diag when a component is missing and
 * create_mode is 0. */
int open_dir(int outfd, const char *outdir, const char *reldir, mode_t create_mode, int *ret_fd,
             struct diag *d);
/* The directory holding rel; see open_dir. */
int open_parent(int outfd, const char *outdir, const char *rel, mode_t create_mode, int *ret_fd,
                struct diag *d);

/* The directory of the last file reached, kept open: the files come
 * sorted by path, so most share the directory of the one before. */
struct parent_cache {
        char *dir;
        int fd;
};

#define PARENT_CACHE_INIT { .dir = NULL, .fd = -1 }

void parent_cache_release(struct parent_cache *c);
/* The length of rel's directory part (0 for a file at the top). */
size_t parent_len(const char *rel);
/* Whether c holds rel's directory open. */
bool parent_cached(const struct parent_cache *c, const char *rel);
/* The parent directory of rel (borrowed from the cache), or a negative
 * errno with d set. */
int parent_get(struct parent_cache *c, int outfd, const char *outdir, const char *rel,
               mode_t create_mode, struct diag *d);

/* Read fd to its end into sb; -EFBIG once it holds more than max. */
int read_fd_upto(int fd, struct strbuf *sb, size_t max);

enum current {
        CURRENT_ABSENT,
        CURRENT_FILE,  /* a regular file; content read */
        CURRENT_OTHER, /* a symlink, directory, device...: never touched */
};
/* What is at rel now, without following a symlink anywhere below outfd. */
int read_current(int outfd, const char *outdir, const char *rel, enum current *ret,
                 struct strbuf *content, struct diag *d);

#endif
