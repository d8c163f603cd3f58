/* spider-cache.h: rebuild Lmod's system spider cache (LMOD.md §4:
 * update_lmod_system_cache_files, scDescriptT) after generate changed a
 * tree, so that `module spider` and `module keyword` see the new modules
 * at once.
 *
 * The cache is built by Lmod's own update_lmod_system_cache_files into a
 * temporary directory beside the cache directory, and each file it made is
 * then renamed into the cache directory, the timestamp file last: a user's
 * Lmod reads the old cache or the new one, never half of one. Every
 * directory is reached by descriptor through no symlink another user could
 * have planted (dir_open_trusted), the files are made 0644 and directories
 * 0755 whatever the umask, and a timestamp on another file system is
 * written anew under a random name and renamed over the old one
 * (util-write.h). Nothing here prints; a failure fills d (the tool's exit
 * status and stderr). */
#ifndef CUDAMOD_SPIDER_CACHE_H
#define CUDAMOD_SPIDER_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"

struct spider_cache {
        char *dir;       /* the cache directory (scDescriptT dir) */
        char *timestamp; /* its timestamp file */
        char *from;      /* the lmodrc that named them, or NULL (the config) */
};
void spider_cache_release(struct spider_cache *c);

/* Lmod's update_lmod_system_cache_files: $LMOD_DIR's, else next to
 * $LMOD_CMD, else in the usual install places; NULL when none. */
char *spider_cache_find_tool(void);

/* The first scDescriptT entry of the lmodrc files Lmod reads, in its order
 * (the tool's ../init/lmodrc.lua, ../../etc/lmodrc.lua,
 * $LMOD_CONFIG_DIR/lmodrc.lua, /etc/lmodrc.lua, $LMOD_RC's files). Each is
 * run as Lua with nothing but its own assignments (no library, a step
 * limit). -ENOENT with d set when none names a cache. */
int spider_cache_from_lmodrc(const char *tool, struct spider_cache *ret, struct diag *d);

/* Whether Lmod's spider, run by this process (root from cron), would
 * evaluate something another user chose under dir: NULL when every file
 * and directory there (dir itself included, symlinks followed as the
 * spider follows them) is owned by root or the caller and not writable by
 * group or others (the StrictModes rule of validate); else why, naming the
 * first one (allocated). A modulefile is Lua or Tcl that Lmod runs with its
 * full library (os.execute), so generate leaves such a directory out of
 * the rebuild with a warning, never runs it. Missing: NULL. */
char *spider_cache_foreign(const char *dir);

/* Build the cache of the directories in modulepath with tool, then put it
 * in place (see above). */
int spider_cache_rebuild(const char *tool, const struct spider_cache *c, const char *const *modulepath,
                         size_t n_modulepath, struct diag *d);

#endif
