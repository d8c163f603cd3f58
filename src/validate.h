/* validate.h: the checks of `cudamod validate` (doc/guide.md, `cudamod validate`) for one
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

#include "validate-check.h"
#include "diag.h"
#include "strbuf.h"
#include "util.h"

struct component;

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

#endif
