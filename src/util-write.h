/* util-write.h: creating files and directories where another user may
 * have planted something (OpenSSH StrictModes' reasoning, for writes).
 *
 * Every file cudamod writes (modulefiles, modulercs, the index, the spider
 * cache and its timestamp) is created O_CREAT|O_EXCL|O_NOFOLLOW under a
 * random name in a directory the caller holds open, given its mode with
 * fchmod (so the umask cannot narrow it), and renamed into place: no
 * symlink or file someone put at a fixed name is ever opened for writing.
 * Directories are reached by descriptor, one component at a time, and a
 * symlink on the way is followed only when nobody but root or the caller
 * could have put it there. Nothing here prints; descriptors returned are
 * the caller's to close. */
#ifndef CUDAMOD_UTIL_WRITE_H
#define CUDAMOD_UTIL_WRITE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "diag.h"

/* What every temporary file's name starts with; a later run removes those
 * a killed one left. */
#define TMP_PREFIX ".cudamod-tmp."

/* The mode of files, and of the directories made for them, unless the
 * config says another (output_mode). */
#define FILE_MODE_DEFAULT ((mode_t)0644)
#define DIR_MODE_DEFAULT ((mode_t)0755)

/* The mode of a directory holding files of file_mode: each read bit with
 * its search bit (0640 -> 0750). */
mode_t dir_mode_for(mode_t file_mode);

/* Six random characters of [A-Za-z0-9] and a NUL. */
void random_suffix(char out[7]);

/* Some filesystems cannot sync a directory; the rename stands. */
int sync_dir(int dirfd);

/* Write data to a new temporary file next to name (its name in ret_tmp:
 * TMP_PREFIX, part of name, a random suffix), created O_EXCL|O_NOFOLLOW,
 * mode set with fchmod, not yet synced or renamed. */
int write_temp(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
               char ret_tmp[static NAME_MAX + 1]);

/* One file alone (the index, a timestamp): temporary file, fsync, rename
 * over name, directory fsync. */
int write_atomic(int dirfd, const char *name, const char *data, size_t len, mode_t mode);

/* Open the directory path (absolute), from "/" one component at a time
 * with O_DIRECTORY|O_NOFOLLOW. A symlink on the way is followed only when
 * it belongs to root or the caller and lies in a directory of theirs that
 * nobody else may write (or a sticky one): a symlink another user could
 * have made or replaced is refused (-ELOOP, d names it). With create_mode
 * (0: none), a missing component is made with that mode, set with fchmod
 * so that the umask does not narrow it. */
int dir_open_trusted(const char *path, mode_t create_mode, int *ret_fd, struct diag *d);

#endif
