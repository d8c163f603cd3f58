/* validate-probe.h: the build, run and device checks of `cudamod validate`
 * (validate-probe.c): a program compiled against the module, and
 * cudamod-probe started with its environment, through a launcher or not. */
#ifndef CUDAMOD_VALIDATE_PROBE_H
#define CUDAMOD_VALIDATE_PROBE_H

#include <stdbool.h>

#include "component.h"
#include "validate.h"

struct probe_library {
        bool loaded;
        char *soname;      /* the soname tried (or loaded) */
        char *path;        /* where it was loaded from (realpath), or NULL */
        char *error;       /* dlerror() or the call's error, or NULL */
        long version;      /* cudaRuntimeGetVersion / cudnnGetVersion / ncclGetVersion; -1 */
        long version_error; /* the runtime's: cudaRuntimeGetVersion's error code, or -1 */
        long cudart_version; /* cudnn only: cudnnGetCudartVersion; -1 */
};

struct probe_device {
        int index;
        char *name;
        char *compute_capability;  /* "9.0" */
        long memory_mib;
};

struct probe_report {
        bool started;              /* the probe (or its launcher) was started */
        bool ran;                  /* the probe printed its JSON and exited 0 */
        char *launch_error;        /* why not: "the launcher 'srun' could not be started: …",
                                    * "timed out after 120 s", "exit status 3: <stderr tail>",
                                    * "unreadable output: …" */
        bool launcher_failed;      /* not ran, through a launcher that could not be started,
                                    * timed out or exited non-zero: the target's failure
                                    * rather than the module's */
        struct probe_library libs[N_COMPONENTS]; /* by component index */
        long runtime_driver_version;  /* cudaDriverGetVersion, -1 */
        int runtime_device_count;     /* cudaGetDeviceCount, -1 on error */
        char *runtime_device_error;   /* its error string, or NULL */
        bool driver_loaded;           /* libcuda.so.1 */
        char *driver_path;
        char *driver_error;
        long driver_version;          /* cuDriverGetVersion, -1 */
        struct probe_device *devices;
        size_t n_devices;
        char *visible_devices;        /* the CUDA_VISIBLE_DEVICES the probe saw, or NULL */
        char *host;                   /* where it ran, or NULL */
};
/* Free r's contents and reset it to an empty report (nothing loaded,
 * versions and counts -1); r must be zeroed or filled by probe_run. */
void probe_report_release(struct probe_report *r);

/* build: a C program that includes the kind's header (cuda_runtime_api.h,
 * cudnn.h, nccl.h), calls its version function, and links with -lcudart,
 * -lcudnn (and -lcudart), -lnccl, compiled with the module's environment
 * only (CPATH, LIBRARY_PATH, PATH from m->env; no -I/-L flags), in a
 * private temporary directory that is removed afterwards. Skip when
 * o->compile is false, for another module, or when no C compiler is found
 * (message says so). Fail quotes the compiler's first error lines. */
void check_build(const struct validate_module *m, const struct validate_options *o,
                 struct check *ret);

/* Start the probe with exactly m->env (LD_LIBRARY_PATH extended with
 * o->driver_libdir when given), through o->launcher when given (as
 * `LAUNCHER... PROBE --env NAME=value... ARGS`, so the environment reaches
 * the job step whatever the launcher exports, and the probe keeps what the
 * step sets: CUDA_VISIBLE_DEVICES, SLURM_*), in its own process group,
 * killed at the timeout. The probe is looked up in the PATH of m->env; a
 * launcher in cudamod's own PATH, and it runs in cudamod's environment
 * (srun needs PATH, SLURM_* and the like).
 * Arguments: --cuda-major N when the module's CUDA major is known (a cuda
 * module's runtime header, else the first libcudart.so.N on
 * m->ld_library_path); --no-cudnn / --no-nccl when the kind does not need
 * them. Returns 0 with ret filled (ret->ran false and launch_error set when
 * it could not be run or its output could not be read). */
int probe_run(const struct validate_module *m, const struct validate_options *o,
              struct probe_report *ret);

/* run: from a probe report, the kind's libraries loaded by soname, from
 * the module's own_libdirs, and their versions equal the headers' (in
 * own_incdirs: CUDART_VERSION, CUDNN_MAJOR/MINOR/PATCHLEVEL,
 * NCCL_MAJOR/MINOR/PATCH) and agree with the module's version as far as it
 * goes (cuda/12.9 and runtime 12090; cudnn/9.7.1 and 90701 — 8.x encodes
 * major*1000+minor*100+patch — nccl/2.21.5 and 22105); cudnn: its
 * cudnnGetCudartVersion major equals the loaded runtime's. Fail when the
 * probe did not run (the message says whether the launcher failed). */
void check_run(const struct validate_module *m, const struct probe_report *p, struct check *ret);
/* device: driver version ≥ what the runtime needs (runtime major*1000,
 * minor ignored as CUDA's minor version compatibility allows), the device
 * count, and per device its name, compute capability and memory in the
 * message ("2 GPUs: 0 NVIDIA H100 (9.0, 81559 MiB); …"). No driver or no
 * GPU: skip, or fail with o->require_device. A too-old driver: fail. */
void check_device(const struct validate_module *m, const struct validate_options *o,
                  const struct probe_report *p, struct check *ret);

#endif
