/* doctor.h: `cudamod doctor`: a PyTorch build (or any shared libraries)
 * against an environment and a modulepath (DESIGN.md §7, PYTORCH.md §2-3).
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
};

/* One DT_NEEDED of a library and where it resolves. */
struct doctor_need {
        char *soname;
        char *path;                  /* the file found, or NULL */
        enum resolve_source source;  /* RESOLVE_NOT_FOUND when path is NULL */
        bool driver;                 /* a driver library (resolve_is_driver_library) */
};

struct doctor_library {
        char *path;
        /* NULL for a library of the paths given; for one of torch's own
         * libraries found elsewhere (a Debian torch's libtorch_cuda.so in
         * /usr/lib/x86_64-linux-gnu, through the loader cache or a RUNPATH):
         * the name of the library that needs it. */
        char *needed_by;
        char *runpath, *rpath;       /* as in the file, or NULL */
        struct doctor_need *needs;   /* in DT_NEEDED order */
        size_t n_needs;
};

/* What the torch (or the libraries) was built for. */
struct doctor_built {
        char *torch_version;         /* version.py __version__, or NULL */
        char *git_version;           /* version.py git_version, or NULL (also for 'Unknown': Debian) */
        char *cuda;                  /* version.py cuda ("12.4"), or NULL (CPU build, no file) */
        unsigned long cuda_major;    /* from cuda, else from the libcudart.so.N needed; 0 */
        /* The CUDA, cuDNN and NCCL sonames the libraries need (libcudart.so.12,
         * libcublas.so.12, libcudnn.so.9, libnccl.so.2, ...), sorted. */
        struct strv sonames;
        /* By component index: the versions of the libraries (cuDNN, NCCL,
         * ...; not the toolkit's, which is `cuda`) the build linked
         * against, when a RUNPATH/RPATH directory of the libraries still
         * holds them ("9.1.0", "2.21.5"), or NULL. */
        char *linked[N_COMPONENTS];
};

struct doctor_finding {
        const char *id;     /* static: see DOCTOR_* below */
        const char *ref;    /* the failure of PYTORCH.md §3 it prevents ("R1"), or NULL */
        char *what;         /* one or more sentences, no trailing newline */
        char *why;
        char *fix;
};

/* The ids of the findings. */
#define DOCTOR_UNRESOLVED "unresolved"          /* R1: a need resolves nowhere */
#define DOCTOR_STUBS "stubs"                    /* R9: a stubs directory on the path or in RUNPATH */
#define DOCTOR_CUDNN_VERSIONS "cudnn-versions"  /* R5/R2: two cuDNN versions reachable */
#define DOCTOR_CUDNN_SUBLIBRARIES "cudnn-sublibraries" /* R3/R5: sub-libraries missing or
                                                 * from another directory than libcudnn */
#define DOCTOR_CUDA_MAJOR "cuda-major"          /* R5: cuDNN or NCCL built for another CUDA major */
#define DOCTOR_CUDNN_BUILD "cudnn-build"        /* R2: the cuDNN found is older than torch's build
                                                 * (another major, or a lower minor) */
#define DOCTOR_NCCL_BUILD "nccl-build"          /* R8: the NCCL found is older than torch's build */
#define DOCTOR_NVJITLINK "nvjitlink"            /* R7: libnvJitLink older than cuSPARSE's toolkit */
#define DOCTOR_NVIDIA_WHEELS "nvidia-wheels"    /* §2.2: site-packages/nvidia/ wheels next to torch */
#define DOCTOR_TOOLKIT_MAJOR "toolkit-major"    /* B9: the loaded toolkit's major differs from torch's */

/* A module of the modulepath that provides needed sonames. */
struct doctor_module {
        char *module;                /* "cudnn/9.1.0" */
        const char *kind;            /* static: its component's name, "cudnn" */
        unsigned long cuda_major;    /* the CUDA major it is for (0: unknown) */
        /* The needed sonames its own library directories hold, less those of
         * another component that a module of that component provides from
         * the same file (a cuda module of a prefix holding cuDNN too). */
        struct strv provides;
};

struct doctor_report {
        /* The torch package directory, when a PATH was one (or its lib/). */
        char *torch_dir;
        struct doctor_built built;
        struct doctor_library *libs;
        size_t n_libs;
        /* The environment: LD_LIBRARY_PATH entries, the modules loaded
         * (LOADEDMODULES), the toolkit (CUDA_HOME, else CUDA_PATH, else the
         * prefix of the nvcc on PATH) and its version ("12.4"), or NULL. */
        struct strv ld_library_path;
        struct strv loaded;
        char *toolkit;
        const char *toolkit_source;  /* static: "CUDA_HOME", "CUDA_PATH", "nvcc on PATH" */
        char *toolkit_version;
        struct doctor_finding *findings;
        size_t n_findings;
        struct strv notes;
        /* Suggestions (a modulepath given): every module that provides a
         * needed soname; the chosen consistent set, in load order, and the
         * line that loads it; the needed sonames that no module of the set
         * provides. The set: for each of cuda, cudnn, nccl that torch needs,
         * one module of torch's CUDA major (cudnn and nccl: below the chosen
         * cuda in a hierarchy) whose version is the one torch was built
         * with or linked against (version.py's cuda, built.cudnn,
         * built.nccl; a prefix match), else the lowest newer one, else the
         * highest. */
        struct doctor_module *modules;
        size_t n_modules;
        struct strv chosen;          /* "cuda/12.4", "cudnn/9.1.0", "nccl/2.21.5" */
        char *module_load;           /* "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5", or NULL */
        struct strv unprovided;
        /* For each component torch needs that no module of its CUDA major
         * provides, one sentence of advice: "no cudnn module for CUDA 12
         * (cudnn/9.19.0 is for CUDA 13): install cuDNN 9 for CUDA 12 ...". */
        struct strv unavailable;
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
