/* wheel-record.h: which wheel installed a file (wheel-record.c).
 *
 * Two wheels of one package for two CUDA majors (nvidia-cusparselt-cu12
 * and nvidia-cusparselt-cu13) install into one folder of
 * site-packages/nvidia: the one installed last overwrote the files of the
 * same name, and the other's files it does not ship stay. Each wheel's
 * dist-info RECORD lists the files it installed (path relative to
 * site-packages, hash, size): the size a file there has tells whose it is,
 * and a header that only the other wheel lists is not the library's.
 * Only the dist-info's METADATA (Name, Version) and RECORD are read, each
 * bounded, as regular files (util-file.h); a dist-info that is not what
 * pip writes is left out, with a verbose line (walk_dir_verbose). The
 * hashes are not checked: that would read every library whole. */
#ifndef CUDAMOD_WHEEL_RECORD_H
#define CUDAMOD_WHEEL_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

#include "util.h"
#include "walk.h"

/* The most of a RECORD read: NVIDIA's wheels' are a few lines (the CUDA
 * 13 nvcc wheel's, with CCCL's headers, 600 KiB). */
#define WHEEL_MAX_RECORD (4 * 1024 * 1024)

/* A dist name normalised as PEP 503 does: lower case, each run of '-',
 * '_' and '.' one '-' ("nvidia_cusparselt_cu13" is
 * "nvidia-cusparselt-cu13"). To be freed. */
char *wheel_name_normalise(const char *name);

struct wheel_dist {
        char *name;          /* normalised (PEP 503): "nvidia-cusparselt-cu13" */
        char *version;       /* METADATA Version: "0.8.1" */
        char *dist_info;     /* "nvidia_cusparselt_cu13-0.8.1.dist-info" */
        struct strv files;   /* the RECORD's paths below nvidia/, as written */
        long long *sizes;    /* their sizes, -1 when the RECORD gives none */
};

struct wheel_dists {
        struct wheel_dist *items;
        size_t len;
};

/* The dist-infos in site (an absolute path; dir: the visit, for the
 * verbose lines) whose normalised name starts with prefix
 * ("nvidia-cusparselt-"), with their RECORDs. */
void wheel_dists_read(const struct walk_dir *dir, const char *site, const char *prefix, struct wheel_dists *ret);
void wheel_dists_release(struct wheel_dists *d);
/* Whether w's RECORD lists rel (relative to site-packages); its size
 * there (-1: not given) in *ret_size when it does. */
bool wheel_dist_lists(const struct wheel_dist *w, const char *rel, long long *ret_size);
/* The dist that installed site/rel as it is, size bytes: the one whose
 * RECORD gives it that size; the only one listing it when no RECORD gives
 * a size. NULL when none lists it or none fits. */
const struct wheel_dist *wheel_dists_owner(const struct wheel_dists *d, const char *rel, off_t size);

#endif
