/* util-path.h: predicates on paths that every stage asks, in one place so
 * that scan, plan, validate and doctor apply the same rule: what a path
 * names (a directory, a regular file, a symlink; the first two after
 * symlinks, as real installs need), whether a directory is one of the
 * system's (never put on a path variable), and whether a path can go into
 * a module at all. Nothing here opens what a path names. */
#ifndef CUDAMOD_UTIL_PATH_H
#define CUDAMOD_UTIL_PATH_H

#include <stdbool.h>

/* Whether dirfd/rel (dirfd may be AT_FDCWD) is a directory, a regular file
 * (both after symlinks), a symlink (itself). False when it does not exist
 * or cannot be looked at. */
bool is_dir_at(int dirfd, const char *rel);
bool is_file_at(int dirfd, const char *rel);
bool is_symlink_at(int dirfd, const char *rel);

/* Whether dir is a system directory that is never prepended (/usr/lib*,
 * /usr/include, /usr/bin, /lib*, /bin, /usr, /usr/local/{bin,lib,include},
 * /usr/share/man). */
bool path_is_system_dir(const char *dir);

/* Whether s holds a control character other than tab: such a path or
 * value cannot go into a module (see path_problem in plan.c). */
bool path_has_control_char(const char *s);

#endif
