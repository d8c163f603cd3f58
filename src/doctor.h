/* doctor.h: `cudamod doctor`: a PyTorch build (or any shared libraries)
 * against an environment and a modulepath (doc/guide.md, "When torch does not load"; doc/reference.md).
 *
 * Nothing is loaded or executed: the libraries' DT_NEEDED are resolved with
 * resolve.h under the environment's LD_LIBRARY_PATH, each library's
 * RUNPATH/RPATH ($ORIGIN expanded) and the system loader path; torch's own
 * libraries (libtorch*, libc10*, libshm, libcaffe2_*) are followed wherever
 * they resolve, and their needs read in turn; torch's version.py is read as
 * text; the modules are evaluated with the Lmod
 * sandbox (evaluate.h).
 *
 * A finding is something wrong: each says what, why it matters and what to
 * do. What is only worth knowing (the driver's libraries not found on a
 * login node, a minor-version difference) is a note. */
#ifndef CUDAMOD_DOCTOR_H
#define CUDAMOD_DOCTOR_H

#include <stdbool.h>

#include "component.h"
#include "diag.h"
#include "doctor-finding.h"
#include "resolve.h"
#include "util.h"

struct doctor_options {
        /* The environment diagnosed (NULL-terminated "NAME=value"; NULL:
         * the process's): LD_LIBRARY_PATH, CUDA_HOME/CUDA_PATH, PATH,
         * LOADEDMODULES. */
        char *const *environ;
        /* The loader cache (NULL: /etc/ld.so.cache; a missing file: none). */
        const char *ldcache;
        /* Where the modules are, for the suggestions (NULL or empty: none). */
        const struct strv *modulepath;
        /* Tcl modulefiles: the real module tool instead of the safe
         * interpreter (evaluate_options.trust_modulefiles). */
        bool trust_modulefiles;
        /* doctor --build: the root the default places (/usr/local, /usr,
         * /opt, /etc/debian_version) are looked up under (NULL: "/"). */
        const char *sysroot;
        /* doctor --build: compile no probe with the CUDA compiler (only the
         * prediction from the versions is made). */
        bool no_compile;
        /* doctor --build: the glibc version the prediction from versions
         * uses ("2.41"; NULL: gnu_get_libc_version()'s), for tests. */
        const char *glibc;
        /* doctor --build: the site config's pytorch.cuda_arch_list
         * ("8.0;9.0"; NULL, "" or "detect": none), the fix's second
         * choice when TORCH_CUDA_ARCH_LIST is unset on a node without a
         * GPU (the first: what validate recorded in the tree's index). */
        const char *arch_list;
};

/* Diagnose the libraries of paths: a torch package directory (it holds
 * version.py or __init__.py, and lib/), its lib/ directory, another
 * directory (every shared library in it), or a shared library file.
 * Returns 0 (findings or not), or -ENOENT/-ENOEXEC/-ENOTDIR with d set when
 * a path does not exist or is neither a directory nor a shared library (a
 * usage error: nothing is reported). */
int doctor_run(const struct doctor_options *o, char *const *paths, size_t n_paths,
               struct doctor_report *ret, struct diag *d);
void doctor_report_release(struct doctor_report *r);

/* Parse torch/version.py: __version__, git_version and cuda, each a
 * quoted string ('…' or "…") or None, with or without a type annotation
 * ("cuda: Optional[str] = '12.4'"). Fields not found stay as they are.
 * Returns 0, or -EBADMSG with d set (file and line) for a line assigning
 * one of them something else than a string or None (a string holding a NUL
 * byte included); ret is then untouched. */
int torch_version_py_parse(const char *buf, size_t len, const char *file, struct doctor_built *ret,
                           struct diag *d);
/* The CUDA version ("12.4") of the toolkit at prefix: version.json,
 * version.txt, include/cuda.h, else its lib64's file names; NULL when none
 * tells. Newly allocated. */
char *doctor_toolkit_version(const char *prefix);

/* Free what a struct doctor_built holds and zero it. */
void doctor_built_release(struct doctor_built *b);

#endif
