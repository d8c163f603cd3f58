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

/* What a value may hold to be written into a modulefile, whatever reads it
 * (doc/guide.md "Threat model"): a word (a path, a name, an environment
 * value) or a text for people (a message, help, whatis). */
enum written_kind {
        WRITTEN_WORD,
        WRITTEN_TEXT,
};

/* Why s cannot be written into a modulefile for some program that reads
 * one, or NULL; *ret_at (may be NULL) gets the offending byte's offset.
 * Refused everywhere: control characters (C0, but the tab and the newline
 * in a text: Lmod's tcl2lua fails on a tab in a path; DEL; C1, U+0080-
 * U+009F as UTF-8 or a lone byte 0x80-0x9f) and ']', which closes the
 * Lua long strings that Lmod's tcl2lua and its spider cache put values
 * in. Refused in words also: '"' and '\', which tcl2lua and RC2lua copy
 * raw into the Lua strings of the code they hand to Lmod, and '$' and '`',
 * which a shell expands where a value reaches it in double quotes. */
const char *written_value_problem(const char *s, enum written_kind kind, size_t *ret_at);

#endif
