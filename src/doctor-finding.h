/* doctor-finding.h: what `cudamod doctor` reports (the report's records),
 * and the run's state with the helpers a finding is written with
 * (doctor-finding.c): the findings of doctor.c's table and those of the
 * components (struct component's `doctor`) use them alike. */
#ifndef CUDAMOD_DOCTOR_FINDING_H
#define CUDAMOD_DOCTOR_FINDING_H

#include <stdbool.h>

#include "component.h"
#include "libfile.h"
#include "resolve.h"
#include "util.h"

struct doctor_options;

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
        /* doctor --build: the configure stops on it (a CMake error), where
         * the rest are warnings (the configure goes on and the torch built
         * lacks something or is wrong). Always false for doctor PATH. */
        bool fatal;
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

/* The state of one doctor_run: the options, the environment, the loader
 * cache, the resolver, the libraries read (torch's own that resolve
 * elsewhere joined), and the report being written. */
struct doctor {
        const struct doctor_options *o;
        char *const *env;
        struct ldcache *cache;
        struct resolve_env renv;
        struct libset libs;
        struct doctor_report *r;
        bool wheel;               /* torch's RPATH/RUNPATH points into nvidia/ wheels */
        /* The needed sonames that resolve nowhere, and for each the
         * libraries needing it (doctor.c's collect_unresolved). */
        struct strv unresolved, by;
};

/* A finding: what (owned), why (a format), and fix (owned), in that order. */
_printf_(5, 7) void doctor_add_finding(struct doctor_report *r, const char *id, const char *ref,
                                       char *what, const char *why_fmt, char *fix, ...);
_printf_(2, 3) void doctor_add_note(struct doctor_report *r, const char *fmt, ...);
/* Where the first library needing soname finds it (NULL: nowhere), and that
 * library's entry (may be NULL). */
const char *doctor_resolved_path(const struct doctor *doc, const char *soname,
                                 const struct libset_entry **by);
/* The first needed soname stem.so.N (or stem.so.N.0): its N (0: none);
 * *ret_soname (when not NULL) that soname, newly allocated. */
unsigned long doctor_needed_major(const struct doctor *doc, const char *stem, char **ret_soname);
/* The fix for a library of component c of another CUDA major: load its
 * module of torch's major, or, when there is none, the plain advice
 * ("a"/"an": the article before the component's name). Newly allocated. */
char *doctor_major_fix(const struct doctor_report *r, const struct component *c, const char *article);

#endif
