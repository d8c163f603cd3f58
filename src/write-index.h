/* write-index.h: the index of an output directory (write-index.c),
 * INDEX_NAME: file -> sha256, install, module, and validate's results. */
#ifndef CUDAMOD_WRITE_INDEX_H
#define CUDAMOD_WRITE_INDEX_H

#include <jansson.h>
#include <sys/types.h>

#include "diag.h"
#include "write-types.h"

struct strbuf;
struct strv;

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


/* The results of `cudamod validate` kept in outdir's index (a directory
 * generate wrote), as its "validation" member, which generate keeps.
 * write_index_validation takes the lock (o: on_wait, userdata; may be
 * NULL) and replaces the member with validation (a JSON object);
 * -ENOENT when outdir has no index. read_index_validation: a new
 * reference, or NULL when none was recorded; *ret_validation is not
 * touched on error (callers initialise it). */
int write_index_validation(const char *outdir, json_t *validation, const struct write_options *o,
                           struct diag *d);
int read_index_validation(const char *outdir, json_t **ret_validation, struct diag *d);
/* The output directory of the generated tree a modulepath belongs to:
 * a directory of it, or one up to 8 levels above it (hierarchical:
 * OUT/Core, or a core level of several parts, naming.levels.core), that
 * holds the index; NULL when none does. Newly allocated. */
char *index_outdir_of(const struct strv *mp);

/* The module names outdir's index records: for each modulefile, its
 * directory ("CUDA/11/cudnn"), version ("8.9.7", from its module name),
 * install (real path), identity and base (NULL in an older index); and
 * the sha256 of the index ("" when there is none, or no outdir), for
 * write_options planned_index_sha. Every field is checked as config is:
 * the module name by the naming grammar (module_version_valid for each
 * part), the install by the path rules (written_value_problem), identity
 * and base likewise; when one fails, no name is returned and ignored says
 * why. Read without the lock. */
struct index_name {
        char *dir;
        char *version;
        char *install;
        char *identity;
        char *base;
        /* The module's full name ("cudnn/9.7.1"), the real path of the
         * toolkit it is for (NULL unless one of several) and its install's
         * kind ("runtime", or NULL), for `cudamod export`. */
        char *module;
        char *toolkit;
        char *kind;
        char *cuda_arch; /* "80,90" (install.h), or NULL */
};

struct index_names {
        struct index_name *items;
        size_t n;
        char sha[65];
        /* Why the index's names were all ignored (an entry that does not
         * pass the naming grammar or the path rules: the index is input,
         * and one bad entry means none is trusted), or NULL. */
        char *ignored;
};

int index_names_read(const char *outdir, struct index_names *ret, struct diag *d);
void index_names_release(struct index_names *n);

#endif
