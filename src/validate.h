/* validate.h: the checks of `cudamod validate` (DESIGN.md §6) for one
 * module that has been evaluated already.
 *
 * Two things are easily confused here: the module under test (struct
 * validate_module: the module loaded, with its dependencies, whose
 * environment the checks look at) and a launcher target (where the probe
 * runs: this machine, or a Slurm partition through `srun`; --target,
 * validate.targets). "target" means only the latter.
 *
 * The caller (cmd-validate.c, with evaluate.c) loads the module with its
 * dependencies and makes a struct validate_module of the load
 * (validate_module_init): the clean environment the module gives (plus
 * PATH/HOME basics), and the directories the module itself adds. Each
 * check fills one struct check; the table validate_checks[] lists them in
 * report order. They never print; messages say what was found and what to
 * do about it.
 *
 *   syntax, paths        validate.c (from the evaluation)
 *   closure, lazy        validate-elf.c (resolve.h)
 *   build, run, device   validate-probe.c (the C compiler, cudamod-probe)
 *   nvcc, cmake          validate-toolchain.c (the module's nvcc, cmake)
 *   the table            validate-checks.c */
#ifndef CUDAMOD_VALIDATE_H
#define CUDAMOD_VALIDATE_H

#include <stdbool.h>

#include "component.h"
#include "diag.h"
#include "strbuf.h"
#include "util.h"

enum check_status {
        CHECK_PASS,
        CHECK_WARN,
        CHECK_FAIL,
        CHECK_SKIP,
        _CHECK_STATUS_MAX,
};
/* "pass", "warn", "fail", "skip" */
const char *check_status_to_string(enum check_status s);

struct check {
        const char *id;          /* "syntax", "paths", "closure", "lazy", "build", "run",
                                  * "device" (static strings) */
        enum check_status status;
        char *message;           /* owned; one or more lines, no trailing newline */
};
void check_release(struct check *c);
/* Set c (replacing its message) and return c->status. */
_printf_(3, 4) enum check_status check_set(struct check *c, enum check_status s, const char *fmt, ...);

/* What a check found so far: the worst status, what passed (facts, joined
 * with "; ") and the problems (warn and fail, one line each). Initialise
 * with FINDINGS_INIT; findings_release frees the texts. */
struct findings {
        enum check_status worst;
        struct strbuf facts, problems;
};
#define FINDINGS_INIT { .worst = CHECK_PASS, .facts = STRBUF_INIT, .problems = STRBUF_INIT }
_printf_(3, 4) void findings_add(struct findings *f, enum check_status s, const char *fmt, ...);
void findings_release(struct findings *f);


struct validate_options {
        const char *probe;          /* the cudamod-probe executable (absolute) */
        char **launcher;            /* NULL-terminated argv put before the probe, or NULL */
        const char *driver_libdir;  /* appended to the probe's LD_LIBRARY_PATH, or NULL */
        bool require_device;        /* no driver / no GPU fails the device check */
        bool compile;               /* run the build check (false: skip it) */
        unsigned timeout;           /* seconds for one compiler or probe run; 0: 120 */
        const char *cc;             /* C compiler for the build check; NULL: "cc" */
        const char *cxx;            /* C++ compiler, for a header that needs one; NULL: "c++" */
        /* Where the build check looks the compiler up and what PATH it
         * runs with, so that its as, ld and collect2 come from there too:
         * the caller's PATH, never the module's (a module could put a
         * `cc` of its own in front). NULL: /usr/bin:/bin. */
        const char *cc_path;
        const char *cmake;          /* cmake for the cmake check, looked up in cc_path; NULL: "cmake" */
        /* The nvcc and cmake checks start what the module names (its PATH,
         * CC, CXX, CUDACXX, launchers; validate_refused_toolchain_variable)
         * with its whole environment; false: they refuse such a variable,
         * and start cmake, its C++ compiler and build tool from cc_path with
         * only the module's variables that they check. */
        bool trust_modulefiles;
};

/* The variables a module may not set for validate, which starts the
 * compiler and the probe with the module's environment, as root where it
 * runs as root: LD_PRELOAD and LD_AUDIT (a library of the module's choice
 * loaded into every program started, before its main), GCONV_PATH (one
 * loaded by iconv), LD_DEBUG_OUTPUT, LD_PROFILE and LD_PROFILE_OUTPUT
 * (files written where the module says); and for the compiler
 * COMPILER_PATH and GCC_EXEC_PREFIX (where gcc finds cc1, as and ld).
 * LD_LIBRARY_PATH is not one: loading the module's libraries is what the
 * run check is for. The first that env has with another value than in
 * start (what validate started the load from), or NULL. */
const char *validate_refused_variable(char *const *env, char *const *start);

/* The variables a module may not set for the nvcc and cmake checks, which
 * start nvcc and CMake, and CMake a C++ compiler and a build tool, as the
 * caller (root, from cron): a program named by CC, CXX, a
 * CMAKE_<LANG>_COMPILER, a *_COMPILER_LAUNCHER or *_LINKER_LAUNCHER,
 * CMAKE_MAKE_PROGRAM, CMAKE_GENERATOR, CMAKE_CROSSCOMPILING_EMULATOR, or
 * searched in CMAKE_PROGRAM_PATH; CMake code in CMAKE_TOOLCHAIN_FILE or
 * CMAKE_PROJECT_INCLUDE(_BEFORE) and CMAKE_PROJECT_TOP_LEVEL_INCLUDES;
 * CUDACXX other than the toolkit's own nvcc under the load's CUDA_HOME
 * (what cudamod writes); NVCC_PREPEND_FLAGS or NVCC_APPEND_FLAGS passing
 * options on to the host compiler or linker (-Xcompiler, -Xlinker). A -ccbin
 * there and CUDAHOSTCXX are allowed: the nvcc check asks that compiler which
 * it is. The first such variable's name in env (free it), or NULL;
 * validate_options.trust_modulefiles lets them through. */
char *validate_refused_toolchain_variable(char *const *env);

/* The module under test. Built by validate_module_init from a load (the
 * strings point into the evaluation, env into the caller's strv), or by
 * hand in tests; validate_module_release frees the three strvs. */
struct validate_module {
        const char *module;         /* "cudnn/9.7.1" */
        const char *name;           /* "cudnn" */
        const char *version;        /* "9.7.1" (may be "" when the module has none) */
        const char *file;           /* the modulefile */
        const struct component *kind; /* what it provides, or NULL: another module */
        /* The environment after loading the module with its dependencies,
         * minus the module tools' bookkeeping, with PATH ending in the
         * basics (/usr/bin:/bin) and HOME: what build and run start with.
         * NULL-terminated "NAME=value" strings. */
        char *const *env;
        /* What this module itself (not its dependencies) adds to
         * LD_LIBRARY_PATH and CPATH, in the order the variable has them. */
        struct strv own_libdirs;
        struct strv own_incdirs;
        /* LD_LIBRARY_PATH of env, split, in order. */
        struct strv ld_library_path;
        /* A module for a system install (its *_HOME-like variables name
         * /usr or a directory under /usr/lib, and it adds no library
         * directory, since the loader searches the system's): own_libdirs
         * and own_incdirs are the system directories that implies, and
         * only the kind's libraries there are its own. */
        bool system;
};

/* The kind of a module from the library files in its own_libdirs: the
 * kind its name says ("cudnn", "nccl", "cuda") when that library is there
 * (a cuDNN installed into the toolkit shares its lib directory), else the
 * first found of libcudart, libcudnn, libnccl. */
const struct component *module_kind_detect(const char *name, const struct strv *own_libdirs);

struct evaluation;

/* The module under test from e, the load of module (its last module) with
 * its dependencies: env is e's environment minus the module tools'
 * bookkeeping and MODULEPATH, put in ret_env, which must outlive ret. */
void validate_module_init(struct validate_module *ret, const char *module, const struct evaluation *e,
                          struct strv *ret_env);
/* When m adds no library directory and one of the *_HOME, *_ROOT, *_PATH,
 * *_DIR or *_PREFIX variables the module itself set (set: "NAME=value"
 * entries) names a system prefix (/usr, /usr/lib/…), make m a system
 * install's module: own_libdirs and own_incdirs become the loader's and
 * compiler's default directories under root ("" for the machine's; a test's
 * private root otherwise) that exist, and m->kind the component m->name
 * names, when its library is there. */
void validate_module_use_system_dirs(struct validate_module *m, const struct strv *set, const char *root);
void validate_module_release(struct validate_module *m);

/* -EPERM with d saying so when the load e sets a variable validate
 * refuses (validate_refused_variable, against start): checked before
 * anything is started with e's environment, and reported by syntax. */
int validate_refuse_load(const struct evaluation *e, char *const *start, struct diag *d);

/* Scratch directories of the checks that build something: a new
 * $TMPDIR/cudamod-WHAT-XXXXXX (NULL, with ret failed saying why, when it
 * cannot be made); removed with everything in it by the cleanup. */
char *validate_scratch_new(const char *what, struct check *ret);
void validate_scratch_removep(char **dir);
/* Write content into the new file dir/name; -EIO with ret failed. */
int validate_scratch_write(const char *dir, const char *name, const char *content, struct check *ret);
/* A compiler's lines naming an error (else its first lines), at most max,
 * trimmed, each on a line of its own indented by two blanks (gcc's echo of
 * the source line, "  132 | #error ...", is left out). */
char *validate_compiler_errors(const char *text, unsigned max);

/* syntax: the load's outcome: load_error (the load failed or was
 * refused: fail with its message), else e loaded (Lua or Tcl). */
void check_syntax(const struct evaluation *e, const struct diag *load_error, struct check *ret);
/* paths: every directory the load e adds (to a path list, or as a
 * *_HOME, *_ROOT, *_PATH, *_DIR variable) exists; no stubs directory on
 * LD_LIBRARY_PATH; no system directory put in front of what the variable
 * had. */
void check_paths(const struct evaluation *e, struct check *ret);

/* --- validate-elf.c -------------------------------------------------- */

/* closure: every DT_NEEDED of every shared library (ELF ET_DYN, regular
 * file or symlink to one, each real file once) in own_libdirs resolves
 * with m->ld_library_path, the library's RUNPATH/RPATH and the system
 * loader path; the driver's libraries are exempt (they come from the
 * driver) and listed as such. Fail names each library and its missing
 * needs (at most a few, then "and N more") and what to load or install. */
void check_closure(const struct validate_module *m, struct check *ret);
/* lazy: what is dlopen()ed later resolves too (PYTORCH.md R3, R5, R7):
 * - cudnn: the sub-libraries libcudnn_*.so.<major> resolve, all from one
 *   directory and of one version (the file versions), and that directory
 *   is libcudnn's; the one cuDNN version reachable through LD_LIBRARY_PATH
 *   (two libcudnn.so.<major> in different directories: fail); the CUDA
 *   major the cuDNN build targets (from the sub-libraries' DT_NEEDED
 *   libcublasLt.so.N / libnvrtc.so.N, or for cuDNN 9, which dlopen()s
 *   them, the names in their read-only data) has libcublasLt.so.N and
 *   libnvrtc.so.N resolvable;
 * - cuda: libnvJitLink.so.N resolves from the same toolkit as
 *   libcusparse.so.N, or one at least as new (file versions);
 * - other kinds: skip. */
/* The lazy checks of the toolkit (libcusparse's libnvJitLink) and of
 * cuDNN (its sub-libraries), the components' `lazy`. */
void validate_lazy_cuda(const struct validate_module *m, struct check *ret);
void validate_lazy_cudnn(const struct validate_module *m, struct check *ret);
void check_lazy(const struct validate_module *m, struct check *ret);

/* --- validate-probe.c ------------------------------------------------ */

/* The version code the component's version header (the first of its
 * version_headers found in incdirs) declares: 0, -ENOENT when there is
 * none or it declares none, another negative errno when malformed;
 * *ret_file: the header read (or NULL), newly allocated. */
int component_header_version(const struct strv *incdirs, const struct component *c, long *ret, char **ret_file);

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


/* --- validate-toolchain.c -------------------------------------------- */

/* What a toolkit's crt/host_config.h accepts (STACK.md §6.1): the newest
 * GCC major (`#if __GNUC__ > N` after `#if defined(__GNUC__)`) and clang
 * major (M-1 of `__clang_major__ >= M` in the block guarded by
 * `defined(__clang__) && !defined(__ibmxl_vrm__)`), -1 when not stated;
 * *_enforced: an #error follows the condition (copies with the #error
 * deleted let every compiler through). */
struct host_limits {
        long gcc_max;
        bool gcc_enforced;
        long clang_max;
        bool clang_enforced;
};
/* Returns 0, or -ENOENT when buf states neither limit. */
int host_config_parse(const char *buf, size_t len, struct host_limits *ret);

enum host_compiler_kind {
        HOST_COMPILER_GCC,
        HOST_COMPILER_CLANG,
        HOST_COMPILER_INTEL, /* ICX: refused by every CUDA 12 and 13 header */
};

/* A host compiler as its predefined macros tell (`-E -dM`). */
struct host_compiler {
        char *path;       /* absolute, or NULL (from macros alone) */
        enum host_compiler_kind kind;
        long major;
        char *version;    /* "12.2.0" */
};
void host_compiler_release(struct host_compiler *h);
/* From the output of `CC -E -dM -x c++ /dev/null`: 0, or -ENOENT when it
 * defines neither __GNUC__ nor __clang__. */
int host_compiler_from_macros(const char *text, struct host_compiler *ret);

/* What nvcc compiles host code with in env: -ccbin in NVCC_APPEND_FLAGS,
 * else NVCC_PREPEND_FLAGS, else NVCC_CCBIN (CUDA 13), else `gcc` on nvcc's
 * PATH; *ret_from says which (static). NULL with *ret_err when none. */
char *nvcc_host_compiler(const char *nvcc, char *const *env, unsigned long cuda_major, const char **ret_from,
                         int *ret_err);
/* Run path -E -dM -x c++ /dev/null (env) and read what compiler it is: 0,
 * or -EIO with *ret_why. */
int host_compiler_query(const char *path, char *const *env, unsigned timeout, struct host_compiler *ret,
                        char **ret_why);
/* Whether h passes limits; else *ret_max is the newest of its kind (-1). */
bool host_compiler_accepted(const struct host_compiler *h, const struct host_limits *l, long *ret_max);

/* nvcc: for a CUDA module that puts an nvcc on PATH, the host compilers
 * the environment gives nvcc (-ccbin in NVCC_APPEND_FLAGS or
 * NVCC_PREPEND_FLAGS, NVCC_CCBIN for CUDA 13, else `gcc` on nvcc's PATH)
 * and CMake (CUDAHOSTCXX) against the toolkit's crt/host_config.h (a
 * compiler it refuses: fail naming both and the config fix), then a .cu
 * program (a kernel and cudaGetDeviceCount) compiled and linked with
 * `nvcc -cudart shared` and started, all with m->env only: it must load
 * the module's libcudart. Without a driver cudaGetDeviceCount returns an
 * error, which is reported, not failed. Skip when o->compile is false,
 * for another module, or without an nvcc. Fail quotes nvcc's first error
 * lines. */
void check_nvcc(const struct validate_module *m, const struct validate_options *o, struct check *ret);
/* cmake: where cmake is in cudamod's PATH (o->cc_path), a project with
 * enable_language(CUDA) and find_package(CUDAToolkit REQUIRED) configured
 * with m->env only: CMake's CUDA compiler must be the module's nvcc, the
 * toolkit's bin directory the module's, its cudart in the module's
 * library directories, and the compiler's and the toolkit's versions equal
 * (PyTorch stops otherwise). Skip without cmake (saying so), for another
 * module, or without an nvcc. */
void check_cmake(const struct validate_module *m, const struct validate_options *o, struct check *ret);

/* --- validate-checks.c ----------------------------------------------- */

/* A check runs once for the module under test, or once per launcher
 * target (run and device read what the probe saw through that target). */
enum check_scope {
        CHECK_PER_MODULE,
        CHECK_PER_TARGET,
};

/* What a check is given. Per module: eval and module, or load_error
 * alone when the load failed. Per target also options with that target's
 * launcher, and probe: the probe's report through it, or NULL when the
 * module has nothing for the probe to load (validate_module_needs_probe). */
struct check_input {
        const struct evaluation *eval;
        const struct diag *load_error;
        const struct validate_module *module;
        const struct validate_options *options;
        const struct probe_report *probe;
};

/* One row of validate_checks[]: a check of its own id. needs_load: the
 * check looks at the loaded module, so a module that did not load skips
 * it (syntax, which reports the failed load, does not). */
struct check_type {
        const char *id;
        enum check_scope scope;
        bool needs_load;
        /* It checks what the module is for (its libraries resolve, build,
         * load): a module passes only when one such check ran (pass or
         * warn); otherwise it is "unchecked". */
        bool substantive;
        void (*run)(const struct check_input *in, struct check *ret);
};

/* Every check, in the report's order: the per-module ones in table
 * order, then for each target its per-target ones in table order. Ends
 * with a row whose id is NULL. */
extern const struct check_type validate_checks[];

/* Whether the probe is started for m at all: not for a module with none
 * of the libraries it loads (its per-target checks skip). */
bool validate_module_needs_probe(const struct validate_module *m);

/* Run ct on in into ret, whose id it sets: a skip saying why when the
 * module did not load and ct needs it, or, per target, when in->probe is
 * NULL; else ct->run. */
void check_type_run(const struct check_type *ct, const struct check_input *in, struct check *ret);

#endif
