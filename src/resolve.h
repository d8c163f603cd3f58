/* resolve.h: where the dynamic loader would find a shared library, decided
 * from the files alone (nothing is loaded or executed). Shared by validate
 * (the closure and lazy checks) and doctor.
 *
 * The search order is glibc ld.so's (ld.so(8)) for a needed soname of an
 * object O:
 *   1. DT_RPATH of O, when O has no DT_RUNPATH (the RPATH of the objects
 *      that loaded O is not followed: callers resolve one object's needs);
 *   2. LD_LIBRARY_PATH (as given in struct resolve_env, not the process's);
 *   3. DT_RUNPATH of O;
 *   4. /etc/ld.so.cache (or the cache file given);
 *   5. the default directories of O's architecture.
 * $ORIGIN (and ${ORIGIN}) expand to the directory of O, $LIB to lib64 (64-bit)
 * or lib, $PLATFORM to the machine's name; an empty entry means the working
 * directory, as for ld.so. A candidate counts only if it is an ELF file of
 * O's class (32/64) and machine; ld.so skips the others and so do we. A
 * soname with a '/' is a path and is not searched. */
#ifndef CUDAMOD_RESOLVE_H
#define CUDAMOD_RESOLVE_H

#include <stdbool.h>

#include "diag.h"
#include "elf-file.h"
#include "util.h"

/* The loader cache (/etc/ld.so.cache, "glibc-ld.so.cache1.1" format, and
 * the old "ld.so-1.7.0" format followed by the new one). */
struct ldcache;

/* Load path (NULL: /etc/ld.so.cache). A missing file is success with an
 * empty cache. A malformed one is -EBADMSG with d set (bounded reads only:
 * a hostile file never crashes). */
int ldcache_load(const char *path, struct ldcache **ret, struct diag *d);
/* The cache's path for soname, for an object of this ELF class (32/64) and
 * machine (e_machine), or NULL. */
const char *ldcache_lookup(const struct ldcache *c, const char *soname, unsigned elf_class,
                           unsigned machine);
void ldcache_free(struct ldcache *c);

struct resolve_memo;

struct resolve_env {
        struct strv ld_library_path;   /* entries in order (empty: unset) */
        const struct ldcache *cache;   /* NULL: no cache */
        /* What was learnt about candidate files (missing, or their ELF
         * identification), so that the same file is looked at once however
         * many objects need it; made by resolve_env_init. */
        struct resolve_memo *memo;
};

/* Fill e from an LD_LIBRARY_PATH value (NULL or "": none; split at ':' and
 * ';' as ld.so does) and a cache (may be NULL). */
void resolve_env_init(struct resolve_env *e, const char *ld_library_path, const struct ldcache *cache);
void resolve_env_release(struct resolve_env *e);

enum resolve_source {
        RESOLVE_NOT_FOUND,
        RESOLVE_RPATH,
        RESOLVE_LD_LIBRARY_PATH,
        RESOLVE_RUNPATH,
        RESOLVE_LDCACHE,
        RESOLVE_DEFAULT_DIR,
        RESOLVE_PATH,          /* the needed name had a '/' */
        _RESOLVE_SOURCE_MAX,
};
/* "rpath", "LD_LIBRARY_PATH", "runpath", "ld.so.cache", "default", "path", "not found" */
const char *resolve_source_to_string(enum resolve_source s);

struct resolved {
        char *soname;                /* the DT_NEEDED entry */
        char *path;                  /* the file it resolves to (as found, not
                                      * canonicalised), or NULL */
        enum resolve_source source;
        char *searched_entry;        /* the directory entry that matched, with
                                      * $ORIGIN expanded, or NULL */
};

/* Resolve soname as needed by the object at obj_path whose facts are obj
 * (from elf_read_info). Returns 0 (ret->source may be RESOLVE_NOT_FOUND) or
 * a negative errno with d set for an internal error. */
int resolve_needed(const struct resolve_env *e, const char *obj_path, const struct elf_info *obj,
                   const char *soname, struct resolved *ret, struct diag *d);
void resolved_release(struct resolved *r);

/* The direct needs of one object: reads obj_path and resolves each
 * DT_NEEDED in order. ret->items[i] follows info->needed. */
struct resolve_list {
        struct resolved *items;
        size_t n;
};
int resolve_object(const struct resolve_env *e, const char *obj_path, struct elf_info *info_ret,
                   struct resolve_list *ret, struct diag *d);
/* The transitive closure of obj_path as ld.so loads it: breadth first, each
 * soname once (the first object to need a soname decides where it comes
 * from; later needs reuse it), RPATH inheritance ignored. */
int resolve_closure(const struct resolve_env *e, const char *obj_path, struct resolve_list *ret,
                    struct diag *d);
void resolve_list_release(struct resolve_list *l);

/* The directories obj_path's own RPATH (when it has no RUNPATH) and
 * RUNPATH name, expanded as ld.so expands them ($ORIGIN, $LIB, $PLATFORM;
 * entries it would drop left out), each once, added to ret. */
void resolve_object_dirs(const char *obj_path, const struct elf_info *obj, struct strv *ret);

/* libcuda.so.1, libnvidia-ml.so.1, libnvidia-ptxjitcompiler.so.1, … : the
 * driver's libraries, which a module must not provide and which only the
 * driver install (or --driver-libdir) supplies. */
bool resolve_is_driver_library(const char *soname);

#endif
