/* write-internal.h: what the files of the writer (write.c, write-atomic.c,
 * write-outdir.c, write-index.c) share and no other stage uses; the API is
 * write.h. Paths called rel are relative to the output directory, whose
 * descriptor is outfd and whose name (for messages) is outdir. A struct
 * parent_cache owns its dir and fd (parent_cache_release); what
 * parent_get returns is borrowed from it. */
#ifndef CUDAMOD_WRITE_INTERNAL_H
#define CUDAMOD_WRITE_INTERNAL_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "diag.h"
#include "util-write.h"
#include "write.h"

struct strbuf;

#define INDEX_NAME ".cudamod-index.json"
#define LOCK_NAME ".cudamod.lock"

/* Why rel cannot name a generated file, or NULL when it can (write.c). */
const char *gen_path_problem(const char *rel);

/* --- reaching and writing files (write-atomic.c) ----------------------- */

/* (Writing a file and syncing a directory: util-write.h.) */
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

/* --- the output directory (write-outdir.c) ----------------------------- */

/* The output directory, created with create_mode (0: not created), and
 * reached through no symlink another user could have planted
 * (dir_open_trusted); -ENOENT without a diag when it is missing and
 * create_mode is 0. */
int open_outdir(const char *outdir, mode_t create_mode, int *ret_fd, struct diag *d);
/* Whether o's interrupted flag is set: stop at the next file. */
bool write_interrupted(const struct write_options *o);
/* Hold the lock for the run (its descriptor in *ret_fd; -1 when a run
 * that writes nothing takes none). */
int take_lock(int outfd, const struct write_options *o, bool readonly, int *ret_fd,
              struct diag *d);
/* Remove the temporary files a killed run left in reldir. Best effort: a
 * directory that cannot be opened is looked at again when written. */
void remove_temp_files_in(int outfd, const char *outdir, const char *reldir);

/* --- the index (write-index.c) ----------------------------------------- */

/* Abort on a jansson error: the only one of its setters is out of memory. */
void json_check(int r);
/* The index's "files" object (a new reference; empty when there is no
 * index) and its raw bytes. */
int index_load(int outfd, const char *outdir, json_t **ret_files, struct strbuf *raw,
               struct diag *d);
/* The sha256 files records for rel, or NULL. */
const char *entry_sha(json_t *files, const char *rel);
/* Record g, whose content has sha256 sha, in files. */
void index_set(json_t *files, const struct gen_file *g, const char *sha);
/* Write the index with files (and the validation old_raw had), unless it
 * would be old_raw byte for byte. */
int write_index(int outfd, const char *outdir, json_t *files, const struct strbuf *old_raw,
                mode_t file_mode, struct diag *d);

#endif
