/* evaluate-internal.h: what the files of the evaluator (evaluate.c,
 * evaluate-modulepath.c, evaluate-env.c, evaluate-tool.c) share and no
 * other stage uses; the API is evaluate.h. A struct candidates owns its
 * modulefiles; a struct str_set borrows its strings, which must outlive
 * it, and owns only its slots (free them). */
#ifndef CUDAMOD_EVALUATE_INTERNAL_H
#define CUDAMOD_EVALUATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "evaluate.h"
#include "hashmap.h"
#include "util.h"

/* A modulefile is read whole. Real ones are a few KiB (cudamod's own
 * about 3 KiB, EasyBuild's with long help texts tens of KiB); 1 MiB, as
 * for the site config and the templates, leaves a wide margin. */
#define MODULEFILE_MAX ((size_t)1 << 20)
/* The longest "NAME=value" a load may make, with its NUL: the kernel's
 * MAX_ARG_STRLEN (32 pages). execve() refuses a longer one with E2BIG, so
 * no command could run in that environment. It also bounds the work of
 * each prepend_path on a variable. */
#define ENV_ENTRY_MAX ((size_t)32 * 4096)

/* --- modulefiles (evaluate-modulepath.c) ------------------------------- */

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

/* --- the environment (evaluate-env.c) ---------------------------------- */

void env_copy(struct strv *to, char *const *from);
void split_entries(const char *value, char delim, bool keep_empty, struct strv *ret);

enum path_how { PATH_PREPEND, PATH_APPEND, PATH_REMOVE };

/* Apply a path operation to name; -E2BIG (nothing changed) when the
 * result would be longer than ENV_ENTRY_MAX or hold more than max_entries
 * entries, its length and entries in *ret_len and *ret_entries. em: with
 * Environment Modules' semantics, else Lmod's. */
int path_apply(struct env *env, const char *name, const char *value, char delim,
               enum path_how how, bool em, size_t max_entries, size_t *ret_len,
               size_t *ret_entries);

/* A set of borrowed strings (a hash map), so that a path of n entries is
 * merged in O(n), not O(n²): a value of ENV_ENTRY_MAX bytes can hold
 * 65,000 entries. Its entries are allocated for max_items at init. */
struct str_set_entry {
        struct hashmap_entry ent;
        const char *s;
};
struct str_set {
        struct hashmap map;
        struct str_set_entry *entries;
        size_t n, max;
};
void str_set_init(struct str_set *set, size_t max_items);
void str_set_release(struct str_set *set);
/* Add s; false when it was there already. At most max_items adds. */
bool str_set_add(struct str_set *set, const char *s);

/* --- the real tool (evaluate-tool.c, evaluate-show.c) ------------------ */

/* The path entries ("NAME=entry", in order) that the prepend and append
 * calls in text, what the tool's `module show` printed, name, added to
 * ret. lmod: Lmod's output, where every line must be understood (else
 * -EINVAL, d naming what and the line); else Environment Modules'. */
int show_output_entries(const char *text, bool lmod, const char *what, struct strv *ret,
                        struct diag *d);

/* Load specs of Tcl modulefiles with the real tool (Environment Modules or
 * Lmod) from env, the start environment. */
int evaluate_tool(char *const *env, char *const *specs, size_t n_specs,
                  struct evaluation *ret, struct diag *d);

#endif
