/* metadata.h: what a package manager left in a prefix (metadata.c).
 *
 * Spack writes the concrete spec of what it installed to
 * <prefix>/.spack/spec.json; EasyBuild copies the easyconfig it built
 * from to <prefix>/easybuild/<name>-<version><suffix>.eb. Both name the
 * CUDA the install was built with, which a library that links the CUDA
 * runtime statically (NVSHMEM) does not. They are read as data: the JSON
 * with jansson, the easyconfig's simple top-level assignments with a
 * small tokenizer of Python literals (never evaluated). What they say
 * fills what the install's own files did not tell, and never overrides
 * what those files prove. */
#ifndef CUDAMOD_METADATA_H
#define CUDAMOD_METADATA_H

#include <stddef.h>

#include "diag.h"
#include "util.h"
#include "version.h"

struct component;
struct install;

/* The largest metadata file read (a spec.json of a package with a deep
 * dependency tree is tens of KiB; an easyconfig a few). */
#define METADATA_MAX_FILE (1024 * 1024)

struct metadata {
        const char *source;     /* "spec.json" or "easyconfig" (static) */
        char *file;             /* the file it was read from */
        char *name;             /* the package, as written ("nvshmem", "NVSHMEM") */
        struct version version; /* its version, count 0 when none parses */
        struct version cuda;    /* the version of its CUDA dependency, count 0 when none */
        char *cuda_hash;        /* spec.json: the CUDA dependency's hash */
        struct strv cuda_arch;  /* spec.json: the cuda_arch variant's values */
        char *versionsuffix;    /* easyconfig */
        char *toolchain;        /* easyconfig: "GCCcore/13.3.0", "system" */
};

void metadata_release(struct metadata *m);

/* Parse a spec.json text (file names it in the diag): the root node's name,
 * version and cuda_arch, and its cuda dependency's version and hash. The
 * "spec": {"nodes": [...]} form of Spack 0.17 on, and the older "spec":
 * [{"<name>": {...}}, ...] list, with dependencies as a list of
 * {"name", "hash"} or an object by name. -EBADMSG (diag set) when it is
 * not JSON or has no root node with a name. */
int metadata_parse_spec_json(const char *buf, size_t len, const char *file, struct metadata *ret,
                             struct diag *d);

/* Parse an easyconfig's text: of its top-level assignments of Python
 * literals (strings, numbers, names, tuples, lists, dicts), name, version,
 * versionsuffix, toolchain and dependencies' ('CUDA', '<version>', ...)
 * (or 'CUDAcore'), a dependency's version given by a name assigned a string
 * earlier (local_cuda_ver = '12.6.0'). Anything else is skipped to the end
 * of its statement. -EBADMSG (diag set) when the text cannot be tokenized
 * (an unterminated string or bracket, nesting deeper than a limit) or
 * assigns no name. */
int metadata_parse_easyconfig(const char *buf, size_t len, const char *file, struct metadata *ret,
                              struct diag *d);

/* Read the metadata of the prefix open at dirfd (path dir_path, for
 * messages): .spack/spec.json, else the one easybuild/<name>.eb (the first by
 * name when several). Files are opened as the scan opens files (regular
 * files only, no symlink followed out of the prefix's listings, at most
 * METADATA_MAX_FILE bytes). 0 and ret filled; -ENOENT when there is none;
 * another negative errno with d set when one is there but unreadable or
 * malformed. */
int metadata_read(int dirfd, const char *dir_path, struct metadata *ret, struct diag *d);

/* Whether m describes an install of the component named `component`
 * (compared without case: Spack's "nvshmem", EasyBuild's "NVSHMEM"). */
bool metadata_names(const struct metadata *m, const char *component);

/* Fill `in` from m where its files did not tell: the CUDA the build
 * targets (all the parts the metadata gives, with evidence "cuda_version"
 * = m->source). Where they told a CUDA major that differs, or a minor
 * that differs, the install keeps its own and gets a "metadata-disagrees"
 * problem naming both. The toolkit (cuda) itself gets its release X.Y.Z
 * when its files gave none and the version agrees. */
void metadata_apply(struct install *in, const struct metadata *m);

/* The CUDA major the libraries in a module's own library directories are
 * for, as scan tells it: what c's module_cuda_major finds in the files,
 * else the major of the CUDA the metadata of a prefix holding them (the
 * directory above one, as scan reads an install's) names, where that
 * metadata is c's; 0 when neither tells. doctor and doctor --build ask
 * this, so that an NVSHMEM whose CUDA only its spec.json names is judged
 * for it as scan and generate judged it. */
unsigned long metadata_module_cuda_major(const struct component *c, const struct strv *own_libdirs);

#endif
