/* install.h: the record that flows from scan to plan.
 *
 * An install is one install of a component (component.h) found on disk. It owns all
 * its strings. `realpath` (with the component) is its identity: the same
 * directory reached through several paths is one install whose other paths
 * are `aliases`. Paths that are unknown are NULL; `version` is count 0 when
 * no file told it (and a problem says so). */
#ifndef CUDAMOD_INSTALL_H
#define CUDAMOD_INSTALL_H

#include <jansson.h>

#include "component.h"
#include "hashmap.h"
#include "util.h"
#include "version.h"


enum layout {
        LAYOUT_TOOLKIT, /* runfile/deb/rpm tree, Spack and EasyBuild prefixes */
        LAYOUT_HPC_SDK, /* NVIDIA HPC SDK: cuda/X.Y, math_libs, comm_libs */
        LAYOUT_TARBALL, /* cuDNN or NCCL archive unpacked as is */
        LAYOUT_MERGED,  /* cuDNN or NCCL copied into a CUDA prefix */
        LAYOUT_WHEEL,   /* pip wheels under site-packages/nvidia */
        LAYOUT_SYSTEM,  /* distribution multiarch install under /usr */
        LAYOUT_CONDA,   /* conda environment */
        _LAYOUT_MAX,
        _LAYOUT_INVALID = -1,
};

const char *layout_to_string(enum layout l);

/* What a build can use of an install: all of it, or (runtime) only its
 * libraries: no header for a compiler to include (NVIDIA's CUDA 13
 * cuSPARSELt wheel is lib/libcusparseLt.so.0 alone). A runtime install's
 * module puts it on the loader path only. */
enum install_kind {
        INSTALL_FULL,
        INSTALL_RUNTIME,
        _INSTALL_KIND_MAX,
};

const char *install_kind_to_string(enum install_kind k);

struct problem {
        char *code;
        char *message;
};

struct install {
        const struct component *component;
        struct version version;  /* cuda: MAJOR.MINOR; cudnn, nccl: MAJOR.MINOR.PATCH */
        struct version release;  /* cuda: toolkit release X.Y.Z when known */
        char *build;             /* cudnn: 4th number (e.g. "26") when known */
        /* The GPU architectures a package manager built it for, as its
         * metadata says ("80,90": Spack's cuda_arch variant), or NULL;
         * for `cudamod export` (through the index). */
        char *cuda_arch;
        struct version cuda_version; /* cudnn, nccl: the CUDA the build targets, as known */
        char *components[_CUDA_COMP_MAX]; /* cuda: component versions */
        /* cuda: the driver the release shipped with, as its version.json
         * says ("nvidia_driver", runfile installs), or NULL. */
        char *nvidia_driver;
        char *arch;              /* "x86_64", "aarch64", "ppc64le" or NULL */
        enum layout layout;
        enum install_kind kind;
        char *prefix;
        char *realpath;
        struct strv aliases;     /* symlinks that lead to it */
        /* Real directories that belong to it besides realpath (Debian's
         * …/usr/lib/cuda and …/usr/lib/nvidia-cuda-toolkit of a system
         * install): not aliases, but a symlink to one is. */
        struct strv trees;
        char *bin_dir;
        char *include_dir;
        char *lib_dir;
        /* The device and inode lib_id_path (lib_dir when it was taken)
         * stats as, taken during the visit that found it (merging installs
         * that share a library directory asks for them). */
        char *lib_id_path;
        dev_t lib_dev;
        ino_t lib_ino;
        struct strv extra_lib_dirs;
        struct strv extra_include_dirs;
        /* cuda: the forward-compatibility libraries of NVIDIA's
         * cuda-compat-X-Y package (<toolkit>/compat, conda's
         * <env>/cuda-compat) and the driver their libcuda.so.<driver>
         * is from ("575.51.03"), or NULL when it has none. */
        char *compat_dir;
        char *compat_driver;
        /* Its library is only an archive (a static-only MAGMA, libmagma.a):
         * a program links it in, so nothing is loaded at run time and its
         * module puts nothing on LD_LIBRARY_PATH. */
        bool static_only;
        struct problem *problems;
        size_t n_problems;
        /* Where a fact came from when no file of the install's own told it
         * (metadata a package manager left: "spec.json", "easyconfig",
         * "dist-info"): pairs fact ("cuda_version"), source, in the order
         * set, one per fact. scan --json prints them as an object. */
        struct strv evidence;
        /* What the scan found on disk of the paths a module may name (the
         * directories above, and those below them plan derives: pkgconfig,
         * man pages, stubs, bin/nvcc), sorted: plan decides from this and
         * never looks at the filesystem itself. Filled by
         * install_record_present at the end of the scan. */
        struct strv present;
        /* The paths present was recorded from (install_present_key), or
         * NULL: recorded again only when they changed. */
        char *present_key;
};

struct install *install_new(const struct component *c, enum layout l);
void install_free(struct install *in);
_printf_(3, 4) void install_add_problem(struct install *in, const char *code, const char *fmt, ...);
bool install_has_problem(const struct install *in, const char *code);
/* Record that `fact` was told by `source`, unless a source is recorded for
 * it already (the first one stands, as the first value set does). */
void install_set_evidence(struct install *in, const char *fact, const char *source);
/* The source recorded for `fact`, or NULL. */
const char *install_evidence(const struct install *in, const char *fact);
/* Record in in->present which of its paths are there (directories, and
 * bin/nvcc as a file); whether one is. */
void install_record_present(struct install *in);
/* The same with exists(path, file) telling whether a path is there (a
 * directory, or with file a regular file); NULL: a stat each. */
void install_record_present_with(struct install *in, bool (*exists)(const char *path, bool file));
/* What install_record_present looks at, as one string (to be freed). */
char *install_present_key(const struct install *in);
bool install_path_present(const struct install *in, const char *path);

/* The CUDA major the install targets (cuda: its own), or -1 when unknown. */
long install_cuda_major(const struct install *in);

/* A set of installs keyed by (component, realpath). */
struct install_list {
        struct install **items;
        size_t len;
        size_t alloc;
        /* The installs by component and realpath, while
         * install_list_index_begin is in force: install_list_find in
         * constant time. Entries are the list's own (not the installs'),
         * so that an install may pass from an indexed list to another. */
        struct hashmap index;
        bool indexed;
};

void install_list_release(struct install_list *l);
/* Index the list (the scan's: one find for every install it adds) until
 * install_list_index_end; meanwhile only install_list_add may change it. */
void install_list_index_begin(struct install_list *l);
void install_list_index_end(struct install_list *l);
struct install *install_list_find(const struct install_list *l, const struct component *c,
                                  const char *realpath);
/* Add `in` (taking ownership). When an install with the same key is there,
 * merge: its missing fields are filled from `in`, `in`'s prefix and aliases
 * become aliases, and `in` is freed. Returns the install kept. */
struct install *install_list_add(struct install_list *l, struct install *in);
/* Sort by component, then version newest first, then prefix; sort each
 * install's aliases and drop the prefix from them. */
void install_list_sort(struct install_list *l);

/* A JSON string for a path or message that may not be UTF-8: invalid
 * bytes become U+FFFD; NULL gives JSON null. */
json_t *json_string_lossy(const char *s);
/* A JSON array of those strings. */
json_t *json_strv(const struct strv *v);
/* A version of `parts` parts, or null when none is known. */
json_t *json_version(const struct version *v, unsigned parts);
/* o[key] = value (taking it); out of memory (value NULL) aborts. */
void json_set(json_t *o, const char *key, json_t *value);

/* The JSON object of doc/guide.md, `cudamod scan` for one install / for a scan. */
json_t *install_to_json(const struct install *in);
json_t *install_list_to_json(const struct install_list *l);
/* The text json_dumpf(JSON_INDENT(2)) writes of install_list_to_json(l)
 * with "unread" (when not NULL) set on it, appended to sb. */
struct strbuf;
void install_list_write_json(struct strbuf *sb, const struct install_list *l, json_t *unread);

#endif
