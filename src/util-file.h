/* util-file.h: opening the files of an install for reading without acting
 * on anything that is not a regular file.
 *
 * Opening a device can act (a tape rewinds, a watchdog starts) and opening
 * a FIFO can block, so every file scan and doctor read goes through
 * file_open_regular_at: what the path names (symlinks followed, as real
 * installs need: lib64 -> targets/x86_64-linux/lib, libcudart.so ->
 * libcudart.so.12) is looked at through an O_PATH descriptor, which never
 * opens the object itself, and only a regular file is then opened for
 * reading (a name a listing says is a regular file itself may take the
 * one-open path below). The descriptors returned are the caller's to
 * close. */
#ifndef CUDAMOD_UTIL_FILE_H
#define CUDAMOD_UTIL_FILE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "diag.h"
#include "strbuf.h"

/* "a character device", "a FIFO", "a directory", ... for st_mode. */
const char *file_mode_describe(mode_t mode);

/* Open dirfd/path (dirfd may be AT_FDCWD) read-only, O_NONBLOCK|O_NOCTTY|
 * O_CLOEXEC, if it is a regular file: its type is checked on an O_PATH
 * descriptor first, the file is reopened through that descriptor (so the
 * object checked is the object opened) and checked again with fstat (same
 * device and inode, still regular). display names the file in the diag
 * (NULL: path). *ret_fd gets the descriptor, *ret_st (may be NULL) its
 * stat. Errors: -EISDIR for a directory, -EINVAL for any other file that
 * is not regular (diag: "'F' is a character device, not a regular file";
 * the object was never opened), -ESTALE when the file was replaced between
 * the check and the open, or the errno of the lookup or the open. */
int file_open_regular_at(int dirfd, const char *path, const char *display, int *ret_fd,
                         struct stat *ret_st, struct diag *d);

/* One open instead of two, for a file a listing says is regular: a
 * thread's oracle, which, when the directory listings the caller read say
 * that dirfd/rel (rel relative) is a regular file, or a symlink that leads
 * to one by names of the same directory, returns a descriptor of that
 * directory the caller holds and sets *ret_name to the regular file's name
 * in it (one component); -1 when they do not say. With it,
 * file_open_regular_at opens such a file with one openat(O_NOFOLLOW) of
 * that name relative to that descriptor, then checks the type; everything
 * else, and every open without an oracle (NULL, the default), takes the
 * O_PATH path above. The detectors set it for a visit
 * (detect_cache_begin). */
typedef int file_listed_regular_fn(int dirfd, const char *rel, const char **ret_name);
void file_set_listed_regular(file_listed_regular_fn *fn);

/* Read the regular file dirfd/path (opened as by file_open_regular_at)
 * into ret, which gets a NUL after the bytes. With head, only its first max
 * bytes; without, a file of more than max bytes is -EFBIG ("'F' is larger
 * than MAX bytes"). On error ret is as it was. */
int file_read_regular_at(int dirfd, const char *path, const char *display, size_t max,
                         bool head, struct strbuf *ret, struct diag *d);

/* Whether the file behind fd differs from *st (size, modification time or
 * inode change time): it changed while we read it. */
bool file_changed(int fd, const struct stat *st);

#endif
