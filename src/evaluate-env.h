/* evaluate-env.h: the environment of a load (evaluate-env.c): the
 * variables indexed by name, the path operations on them, and the
 * differences `show` prints. A struct str_set borrows its strings, which
 * must outlive it (str_set_release frees what it owns). */
#ifndef CUDAMOD_EVALUATE_ENV_H
#define CUDAMOD_EVALUATE_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "hashmap.h"
#include "util.h"

/* The longest "NAME=value" a load may make, with its NUL: the kernel's
 * MAX_ARG_STRLEN (32 pages). execve() refuses a longer one with E2BIG, so
 * no command could run in that environment. It also bounds the work of
 * each prepend_path on a variable. */
#define ENV_ENTRY_MAX ((size_t)32 * 4096)

/* Variables the module tools keep for themselves (_ModuleTable*, __LMOD_*,
 * LMOD_*, _LMFILES_, LOADEDMODULES, __MODULES_*, MODULES_*, BASH_FUNC_*)
 * and the shell's own (_, SHLVL, PWD, OLDPWD). MODULEPATH is not one. */
bool env_is_bookkeeping(const char *name);

/* One variable's change between two environments. */
enum env_change_kind {
        ENV_SET,      /* new or changed value that is not a path extension */
        ENV_PATH,     /* entries put in front of and/or after the old value */
        ENV_UNSET,
};
struct env_change {
        char *name;
        enum env_change_kind kind;
        char *value;          /* the new value (NULL for ENV_UNSET) */
        char *old_value;      /* or NULL */
        struct strv prepended, appended; /* ENV_PATH: the entries, in order */
};
struct env_diff {
        struct env_change *changes; /* sorted by name */
        size_t n;
};
/* What differs from before to after, bookkeeping variables left out. A
 * changed variable is ENV_PATH when after = P:before:A with P or A not
 * empty (':'-separated), else ENV_SET (a new variable is ENV_SET, whatever
 * its value). */
void env_diff_compute(const struct strv *before, const struct strv *after, struct env_diff *ret);
void env_diff_release(struct env_diff *d);

/* A load's environment: the "NAME=value" variables a program would be
 * started with, each name once, indexed by name, so that a lookup, a set
 * and an unset cost the same with ten variables as with the 10,000 a
 * load may set (the index maps a name to its position in vars; the order
 * is vars', never the index's). The order of vars is not kept across
 * env_unset. */
struct env {
        struct strv vars;
        struct hashmap index;
};
/* A copy of the "NAME=value" items of from (NULL-terminated); of a name
 * given twice the first is kept, as getenv(3) would find it. */
void env_init(struct env *e, char *const *from);
void env_release(struct env *e);
/* The variables, e released. */
struct strv env_take_vars(struct env *e);
const char *env_lookup(const struct env *e, const char *name);
/* A name holding '=' names no variable: env_lookup gives NULL, env_set
 * and env_unset do nothing (the sandboxes refuse such names first). */
void env_set(struct env *e, const char *name, const char *value);
void env_unset(struct env *e, const char *name);

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

#endif
