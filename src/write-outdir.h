/* write-outdir.h: the output directory and its lock (write-outdir.c). */
#ifndef CUDAMOD_WRITE_OUTDIR_H
#define CUDAMOD_WRITE_OUTDIR_H

#include <stdbool.h>
#include <sys/types.h>

#include "diag.h"
#include "write-types.h"

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

#endif
