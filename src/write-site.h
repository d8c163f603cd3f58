/* write-site.h: before a write, the site's other module trees
 * (write-site.c). */
#ifndef CUDAMOD_WRITE_SITE_H
#define CUDAMOD_WRITE_SITE_H

#include <stdbool.h>
#include <stddef.h>

#include "diag.h"
#include "util.h"
#include "write-types.h"

/* site_check looks at the output tree and at every directory of the
 * modulepath (the caller's $MODULEPATH and config `modulepath`) and
 * reports, reading only:
 *   - foreign: files (relative to outdir) that cudamod did not write (not
 *     in the index, without its header) in a directory it writes into, or
 *     on the way to a hierarchy level (EasyBuild's CUDA/12.4.0.lua where
 *     CUDA/12/cudnn goes), unless the index lists a file in that very
 *     directory (an admin's file added to cudamod's own directory later
 *     is left alone, as write_tree leaves it): generate refuses to write
 *     beside them without --force;
 *   - on_modulepath: the output directory itself is on the modulepath
 *     while the layout is hierarchical (its Core/ and CUDA/ would read as
 *     modules named Core and CUDA);
 *   - warnings: a module name another tree also provides (shadowing), or
 *     one that differs only in case and that the config's family does not
 *     name (EasyBuild's CUDA beside cudamod's cuda: both load). */
struct site_name {
        const char *name;      /* "cuda" */
        const char *component; /* "cuda": its family key */
        const char *const *conflicts; /* the family's other names */
        size_t n_conflicts;
};

struct site_options {
        const char *outdir;    /* absolute */
        const char *const *modulepath;
        size_t n_modulepath;
        const struct site_name *names; /* one per module name generated */
        size_t n_names;
        /* The hierarchy levels the modules open ("CUDA/12", relative),
         * besides those the files lie in. */
        const char *const *levels;
        size_t n_levels;
};

struct site_report {
        struct strv foreign;
        struct strv warnings;
        bool on_modulepath;
};

/* Returns 0, or a negative errno with d set when the output tree cannot be
 * looked at fully (a directory or the index that cannot be read, more
 * than 100,000 entries): what it holds is then not known, and generate
 * refuses to write. Other trees that cannot be read give no warning. */
int site_check(const struct gen_file *files, size_t n_files, const struct site_options *o,
               struct site_report *ret, struct diag *d);
void site_report_release(struct site_report *r);

#endif
