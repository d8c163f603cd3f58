/* evaluate-modulepath.h: modules looked up in a modulepath
 * (evaluate-modulepath.c), as evaluate.h tells: the modulefiles, their
 * versions and defaults, the modulerc files. A struct modulefile owns
 * its strings, a struct candidates its modulefiles. */
#ifndef CUDAMOD_EVALUATE_MODULEPATH_H
#define CUDAMOD_EVALUATE_MODULEPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "util.h"

/* A modulefile is read whole. Real ones are a few KiB (cudamod's own
 * about 3 KiB, EasyBuild's with long help texts tens of KiB); 1 MiB, as
 * for the site config and the templates, leaves a wide margin. */
#define MODULEFILE_MAX ((size_t)1 << 20)

struct modulefile {
        char *name;      /* "cuda" (may hold '/': "apps/cuda") */
        char *version;   /* "12.9", or "" for a module file without version */
        char *fullname;  /* "cuda/12.9" */
        char *path;      /* the modulefile */
        bool lua;        /* .lua (else Tcl, starting with #%Module) */
        bool hidden;     /* by a modulerc's hide_version or hide_modulefile */
};
void modulefile_release(struct modulefile *m);

/* Lmod's version order: < 0, 0, > 0. */
int module_version_compare(const char *a, const char *b);

/* Look spec up in the directories of mp. -ENOENT with d saying so when
 * nothing matches. */
int modulepath_find(const struct strv *mp, const char *spec, struct modulefile *ret,
                    struct diag *d);
/* Every module of every directory of mp, one per full name (the first
 * directory wins), sorted by name then version; hidden ones left out. */
int modulepath_list(const struct strv *mp, struct modulefile **ret, size_t *n_ret,
                    struct diag *d);
/* The same, with the modulerc files Lmod reads besides those of the
 * module directories: $LMOD_MODULERCFILE (a ':'-separated list, the first
 * file winning) and then $HOME/.modulerc.lua (else $HOME/.modulerc),
 * which wins over them, both from env (NULL: none). Every directive Lmod
 * 8.6 follows is followed, in .modulerc.lua and in the Tcl .modulerc and
 * .version: module_version (a default, or another name for a version),
 * module_alias (a name for another module; "/NAME" in a directory's file
 * is NAME under it), hide_version (a full name) and hide_modulefile (a
 * path). A spec goes through the aliases first (at most 16 hops). The
 * default of a name is the one a global modulerc marks, else the one its
 * directory marks, else the highest version that is not hidden. A hidden
 * version is never listed nor a default, but loads by its full name. */
int modulepath_find_rc(const struct strv *mp, char *const *env, const char *spec,
                       struct modulefile *ret, struct diag *d);
int modulepath_list_rc(const struct strv *mp, char *const *env, struct modulefile **ret,
                       size_t *n_ret, struct diag *d);
void modulefile_array_free(struct modulefile *a, size_t n);

/* Split a MODULEPATH-like value at ':' (empty entries dropped). */
void modulepath_split(const char *value, struct strv *ret);

void modulefile_copy(struct modulefile *to, const struct modulefile *from);
void modulefile_set(struct modulefile *m, const char *name, const char *version,
                    const char *path, bool lua);
/* The file of name/version in dir: version.lua first, then a Tcl file. */
bool modulefile_find_in_dir(const char *dir, const char *name, const char *version,
                            struct modulefile *ret);
/* Whether m's version is partial ("12") or lies under it ("12.9"). */
bool modulefile_under_partial(const struct modulefile *m, const void *partial);

/* The versions of one name found in a modulepath. */
struct candidates {
        struct modulefile *items;
        size_t n;
};
void candidates_release(struct candidates *c);
/* Every version of name in the directories of mp, each full name once
 * (the first directory wins). */
void candidates_collect(const struct strv *mp, const char *name, struct candidates *c);
/* The highest version among c's items accepted by keep (all when NULL). */
const struct modulefile *candidates_highest(const struct candidates *c,
                                            bool (*keep)(const struct modulefile *, const void *),
                                            const void *userdata);

/* Mark the items of c that the modulerc files (those of mp's directories
 * for name, and the global ones of env: see modulepath_find_rc) hide. */
void candidates_hide(const struct strv *mp, char *const *env, const char *name, struct candidates *c);
/* modulepath_find as Environment Modules looks up a Tcl tree: the
 * aliases and defaults of the modulerc files, nothing hidden by Lmod's
 * hide-version, no global modulerc. */
int modulepath_find_em(const struct strv *mp, const char *spec, struct modulefile *ret,
                       struct diag *d);

/* The version dir/name marks as its default, in Lmod's order, or NULL. */
char *dir_marked_default(const char *dir, const char *name);

/* The words of one Tcl line, split at blanks, quotes stripped. */
void tcl_words(const char *line, struct strv *ret);

#endif
