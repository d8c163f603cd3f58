/* test-doctor-build.c: `cudamod doctor --build` (src/doctor-build.c), the
 * emulation of what a PyTorch source build's CMake would pick, on fixture
 * trees with the default places (/usr/local, /usr, /opt,
 * /etc/debian_version) under the fixture root (doctor_options.sysroot).
 *
 * Each expected pick is read off PyTorch's and CMake's code:
 *  - CMake's search order, cmSearchPath.cxx (CMake 3.25):
 *    AddPrefixPaths gives, for each prefix P, P/<sub>/<arch>, P/<sub>, P
 *    (not for P = "/"); AddSuffixes gives each directory's PATH_SUFFIXES
 *    first, then the directory itself; cmFindBase::FillSearchPaths runs
 *    <Pkg>_ROOT, CMAKE_PREFIX_PATH (variable), CMAKE_{LIBRARY,INCLUDE}_PATH,
 *    the same from the environment, HINTS, the system environment (PATH),
 *    CMAKE_SYSTEM_PREFIX_PATH (Modules/Platform/UnixPaths.cmake: /usr/local
 *    /usr / <cmake's prefix> <install prefix> /usr/X11R6 /usr/pkg /opt),
 *    PATHS. FIND_LIBRARY_USE_LIB64_PATHS is FALSE where /etc/debian_version
 *    exists (Modules/Platform/Linux.cmake:91-93).
 *  - PyTorch cmake/Modules_CUDA_fix/FindCUDNN.cmake:
 *    `list(APPEND CUDNN_ROOT $ENV{CUDNN_ROOT_DIR} ${CUDA_TOOLKIT_ROOT_DIR})`,
 *    `list(APPEND CMAKE_PREFIX_PATH ${CUDNN_ROOT})`,
 *    `find_path(CUDNN_INCLUDE_PATH cudnn.h HINTS ${CUDNN_INCLUDE_DIR}
 *    PATH_SUFFIXES cuda/include cuda include)`,
 *    `find_library(CUDNN_LIBRARY_PATH ${CUDNN_LIBNAME} PATHS ${CUDNN_LIBRARY}
 *    PATH_SUFFIXES lib lib64 cuda/lib cuda/lib64 lib/x64)` (STACK.md §7.4).
 *  - PyTorch cmake/Modules/FindNCCL.cmake: find_path(nccl.h HINTS
 *    ${NCCL_INCLUDE_DIR}), find_library(NAMES nccl HINTS ${NCCL_LIB_DIR}),
 *    no suffixes; the try_run "Found NCCL header version and library
 *    version do not match!" (§7.5).
 *  - PyTorch cmake/Modules_CUDA_fix/upstream/FindCUDA.cmake: nvcc in
 *    ENV CUDA_TOOLKIT_ROOT, ENV CUDA_PATH, ENV CUDA_BIN_PATH (bin, bin64,
 *    NO_DEFAULT_PATH), then the default search with /opt/cuda/bin (§7.2);
 *    cmake/public/cuda.cmake's "Found two conflicting CUDA versions".
 *  - CMake 3.25 Modules/CMakeDetermineCUDACompiler.cmake:37
 *    (`set(_CMAKE_CUDA_COMPILER_PATHS "$ENV{CUDA_PATH}/bin")` after
 *    CMAKE_CUDA_COMPILER / CUDACXX) and Modules/FindCUDAToolkit.cmake:637-641
 *    (CUDAToolkit_ROOT/bin first), 812-816 (include/cuda_runtime.h of the
 *    root), 834-837 (find_library(CUDA_CUDART cudart PATH_SUFFIXES lib64
 *    lib/x64) with the root appended to CMAKE_PREFIX_PATH).
 * Where cmake is installed, the same trees and environments go through the
 * real find_program/find_path/find_library and find_package(CUDAToolkit)
 * (a script written here from those facts) and the picks must agree. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "component-cudnn.h"
#include "component-cudss.h"
#include "component-cusparselt.h"
#include "component-magma.h"
#include "component-nccl.h"
#include "component-nvshmem.h"
#include "doctor-build.h"
#include "fixture.h"
#include "process.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "util-file.h"
#include "banned.h"

#define CUDA11 "sw/cuda/11.8"
#define CUDA12 "sw/cuda/12.4"
#define CUDA13 "sw/cuda/13.0"
#define CUDNN8 "sw/cudnn/8.9.7"
#define CUDNN9 "sw/cudnn/9.1.0"
#define NCCL "sw/nccl/2.21.5"

static char *root;
static char arch[128];

static void setup(void)
{
        struct utsname u;

        root = fx_new();
        ck_assert(uname(&u) == 0);
        snprintf(arch, sizeof(arch), "%s-linux-gnu", u.machine);
}

static void teardown(void)
{
        fx_free(root);
        root = NULL;
}

static char *at(const char *rel)
{
        return path_join(root, rel);
}

/* --- the trees ------------------------------------------------------------------ */

/* bin/nvcc as a script printing what nvcc --version prints (CMake runs it). */
static void nvcc_script(const char *prefix, const char *version, const char *full)
{
        _cleanup_free_ char *rel = xasprintf("%s/bin/nvcc", prefix), *path = at(rel);
        _cleanup_free_ char *text = xasprintf("#!/bin/sh\necho 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                                              "echo 'Cuda compilation tools, release %s, V%s'\n",
                                              version, full);

        unlink(path);
        fx_write(root, rel, text);
        ck_assert(chmod(path, 0755) == 0);
}

static void toolkit(const char *prefix, const char *version, const char *cudart, const char *nvcc)
{
        _cleanup_free_ char *release = xasprintf("%s.0", version);

        fx_cuda_toolkit(root, prefix,
                        &(struct fx_cuda){ .version = version, .release = release, .cudart = cudart, .nvcc = nvcc,
                                           .cupti = true });
        nvcc_script(prefix, version, nvcc);
        /* What FindCUDAToolkit looks for, and CUPTI's dev link. */
        {
                _cleanup_free_ char *h = xasprintf("%s/targets/x86_64-linux/include/cuda_runtime.h", prefix);
                _cleanup_free_ char *l = xasprintf("%s/extras/CUPTI/lib64/libcupti.so", prefix);
                _cleanup_free_ char *t = xasprintf("libcupti.so.%.*s", (int)strcspn(version, "."), version);

                fx_write(root, h, "#include \"cuda_runtime_api.h\"\n");
                fx_symlink(root, l, t);
        }
}

/* A Debian-like system root: /etc/debian_version, /usr/lib/<arch>; the
 * toolkits 11.8, 12.4 and 13.0 (with cuDNN 9.19.0 for CUDA 13 copied in,
 * as NVIDIA's CUDA 13 containers and PyTorch's CI have it); cuDNN 8.9.7
 * (CUDA 11) and 9.1.0 (CUDA 12); NCCL 2.21.5+cuda12.4. No /usr/local/cuda. */
static void tree(void)
{
        _cleanup_free_ char *multiarch = xasprintf("usr/lib/%s", arch);

        fx_write(root, "etc/debian_version", "12.11\n");
        fx_mkdir(root, multiarch);
        fx_mkdir(root, "usr/local/lib");
        toolkit(CUDA11, "11.8", "11.8.89", "11.8.89");
        toolkit(CUDA12, "12.4", "12.4.127", "12.4.131");
        toolkit(CUDA13, "13.0", "13.0.96", "13.0.88");
        fx_cudnn(root, CUDA13,
                 &(struct fx_cudnn){ .version = "9.19.0", .cuda_major = 13, .lib = "targets/x86_64-linux/lib",
                                     .include = "targets/x86_64-linux/include" });
        fx_cudnn(root, CUDNN8, &(struct fx_cudnn){ .version = "8.9.7", .cuda_major = 11 });
        fx_cudnn(root, CUDNN9, &(struct fx_cudnn){ .version = "9.1.0", .cuda_major = 12 });
        fx_nccl(root, NCCL, &(struct fx_nccl){ .version = "2.21.5", .cuda = "12.4" });
}

/* /usr/local/cuda -> the CUDA 13 toolkit. */
static void usr_local_cuda(void)
{
        _cleanup_free_ char *target = at(CUDA13);

        fx_symlink(root, "usr/local/cuda", target);
}

/* --- environments ------------------------------------------------------------------ */

struct env {
        struct strv items;
};

/* TORCH_CUDA_ARCH_LIST is set, so that the fixture's root (no GPU) does
 * not give every case the arch-list-unset finding; env_unset takes it
 * away for the cases about it. */
static void env_init(struct env *e)
{
        *e = (struct env){ 0 };
        strv_push(&e->items, xasprintf("HOME=%s", root));
        strv_push(&e->items, xstrdup("TORCH_CUDA_ARCH_LIST=8.0"));
}

static void env_unset(struct env *e, const char *name)
{
        size_t n = strlen(name);

        for (size_t i = 0; i < e->items.len;)
                if (strncmp(e->items.items[i], name, n) == 0 && e->items.items[i][n] == '=') {
                        free(e->items.items[i]);
                        memmove(&e->items.items[i], &e->items.items[i + 1],
                                (e->items.len - i) * sizeof(*e->items.items));
                        e->items.len--;
                } else {
                        i++;
                }
}

static void env_set(struct env *e, const char *name, const char *value)
{
        strv_push(&e->items, xasprintf("%s=%s", name, value));
}

/* NAME=the directories below root (':'-separated), then extra (may be NULL). */
static void env_dirs(struct env *e, const char *name, const char *const *rels, const char *extra)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        for (; rels && *rels; rels++) {
                _cleanup_free_ char *p = at(*rels);
                strbuf_addf(&sb, "%s%s", sb.len ? ":" : "", p);
        }
        if (extra)
                strbuf_addf(&sb, "%s%s", sb.len ? ":" : "", extra);
        env_set(e, name, sb.buf);
}

static void env_dir(struct env *e, const char *name, const char *rel)
{
        env_dirs(e, name, (const char *const[]){ rel, NULL }, NULL);
}

/* A cuda module loaded: its bin on PATH, CUDA_HOME, LOADEDMODULES. */
static void env_cuda(struct env *e, const char *prefix, const char *module)
{
        _cleanup_free_ char *bin = xasprintf("%s/bin", prefix);

        env_dirs(e, "PATH", (const char *const[]){ bin, NULL }, "/usr/bin:/bin");
        env_dir(e, "CUDA_HOME", prefix);
        env_set(e, "LOADEDMODULES", module);
}

/* The optional libraries no fixture has, off (so their findings do not
 * crowd the ones a case is about). */
static void env_others_off(struct env *e)
{
        env_set(e, "USE_CUSPARSELT", "0");
        env_set(e, "USE_CUDSS", "0");
        env_set(e, "USE_MAGMA", "0");
        env_set(e, "USE_NVSHMEM", "0");
}

/* --- running ---------------------------------------------------------------------------- */

static char *dump(const struct build_report *r)
{
        struct strbuf sb = STRBUF_INIT;

        for (size_t i = 0; i < N_BUILD; i++) {
                const struct build_component *c = &r->c[i];
                strbuf_addf(&sb, "  %s: %s v=%s cuda=%lu\n    header %s (%s)\n    library %s (%s)\n", c->name,
                            c->state, c->version ? c->version : "-", c->cuda_major,
                            c->header.path ? c->header.path : "-", c->header.from ? c->header.from : "-",
                            c->library.path ? c->library.path : "-", c->library.from ? c->library.from : "-");
        }
        for (size_t i = 0; i < r->n_findings; i++)
                strbuf_addf(&sb, "  [%s] %s\n    fix: %s\n", r->findings[i].id, r->findings[i].what,
                            r->findings[i].fix);
        for (size_t i = 0; i < r->notes.len; i++)
                strbuf_addf(&sb, "  note: %s\n", r->notes.items[i]);
        return strbuf_detach(&sb);
}

static void run_build(const struct env *e, const struct strv *mp, struct build_report *r)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv items = { 0 };

        for (size_t i = 0; i < e->items.len; i++)
                strv_add(&items, e->items.items[i]);
        ck_assert_int_eq(doctor_build_run(&(struct doctor_options){ .environ = items.items, .modulepath = mp,
                                                                    .sysroot = root },
                                          r, &d),
                         0);
        strv_release(&items);
}

/* run_build with no_compile and the glibc version given. */
static void run_build_predict(const struct env *e, const char *glibc, struct build_report *r)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv items = { 0 };

        for (size_t i = 0; i < e->items.len; i++)
                strv_add(&items, e->items.items[i]);
        ck_assert_int_eq(doctor_build_run(&(struct doctor_options){ .environ = items.items, .sysroot = root,
                                                                    .no_compile = true, .glibc = glibc },
                                          r, &d),
                         0);
        strv_release(&items);
}

static const struct doctor_finding *finding(const struct build_report *r, const char *id, const char *needle)
{
        for (size_t i = 0; i < r->n_findings; i++)
                if (streq(r->findings[i].id, id) && (!needle || strstr(r->findings[i].what, needle)))
                        return &r->findings[i];
        return NULL;
}

#define ASSERT_FINDING(r, id, needle)                                                                 \
        ({                                                                                            \
                const struct doctor_finding *_f = finding(r, id, needle);                             \
                _cleanup_free_ char *_d = _f ? NULL : dump(r);                                        \
                ck_assert_msg(_f, "no %s finding about '%s':\n%s", id, needle ? needle : "", _d);     \
                _f;                                                                                   \
        })

static void assert_hit(const struct build_report *r, const struct cmake_find_hit *h, const char *rel, const char *from)
{
        _cleanup_free_ char *want = rel ? (rel[0] == '/' ? xstrdup(rel) : at(rel)) : NULL;
        _cleanup_free_ char *d = dump(r);

        if (!want) {
                ck_assert_msg(!h->path, "found '%s', expected nothing:\n%s", h->path, d);
                return;
        }
        ck_assert_msg(h->path && streq(h->path, want), "found '%s', expected '%s':\n%s", h->path ? h->path : "nothing",
                      want, d);
        ck_assert_msg(h->from && streq(h->from, from), "'%s' from '%s', expected from '%s':\n%s", h->path,
                      h->from ? h->from : "-", from, d);
}

/* --- TORCH_CUDA_ARCH_LIST ------------------------------------------------------------------ */

/* run_build with the site config's pytorch.cuda_arch_list. */
static void run_build_arch(const struct env *e, const struct strv *mp, const char *site, struct build_report *r)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strv items = { 0 };

        for (size_t i = 0; i < e->items.len; i++)
                strv_add(&items, e->items.items[i]);
        ck_assert_int_eq(doctor_build_run(&(struct doctor_options){ .environ = items.items, .modulepath = mp,
                                                                    .sysroot = root, .no_compile = true,
                                                                    .glibc = "2.36", .arch_list = site },
                                          r, &d),
                         0);
        strv_release(&items);
}

/* The fix of the arch-list-unset finding, or NULL when there is none. */
static char *unset_fix(const struct env *e, const struct strv *mp, const char *site)
{
        struct build_report r;
        const struct doctor_finding *f;
        char *fix;

        run_build_arch(e, mp, site, &r);
        f = finding(&r, BUILD_ARCH_LIST_UNSET, NULL);
        if (f) {
                ck_assert_msg(!f->fatal, "arch-list-unset is a warning");
                ck_assert_msg(strstr(f->why, "every architecture CUDA 12.4 knows"), "%s", f->why);
        }
        fix = f ? xstrdup(f->fix) : NULL;
        build_report_release(&r);
        return fix;
}

/* Unset on a node with no GPU: a warning whose fix is what validate
 * recorded in the tree's index, else the site config's list (a value of
 * either that is not an arch list is not offered as a line to paste);
 * with a GPU (the driver's /proc entry, or /dev/nvidia0), nothing. */
START_TEST(arch_list_unset_without_gpu)
{
        _cleanup_(strv_release) struct strv mp = { 0 };
        struct env e;
        char *fix;

        tree();
        fx_mkdir(root, "mf/Core");
        strv_push(&mp, at("mf/Core"));
        env_init(&e);
        env_unset(&e, "TORCH_CUDA_ARCH_LIST");
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);

        fix = unset_fix(&e, NULL, NULL);
        ck_assert_msg(fix && strstr(fix, "compute capabilities of the GPUs"), "%s", fix ? fix : "no finding");
        free(fix);
        fix = unset_fix(&e, &mp, "8.0;9.0");
        ck_assert_msg(fix && streq(fix, "export TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" (the site config's "
                                        "pytorch.cuda_arch_list)"),
                      "%s", fix ? fix : "no finding");
        free(fix);
        fx_write(root, "mf/.cudamod-index.json",
                 "{\"files\": {}, \"validation\": {\"targets\": [], \"arch_list\": \"8.6;9.0\"}}\n");
        fix = unset_fix(&e, &mp, "8.0;9.0");
        ck_assert_msg(fix && strstr(fix, "export TORCH_CUDA_ARCH_LIST=\"8.6;9.0\" (the GPUs `cudamod validate` "
                                         "found"),
                      "%s", fix ? fix : "no finding");
        free(fix);
        fx_write(root, "mf/.cudamod-index.json",
                 "{\"files\": {}, \"validation\": {\"arch_list\": \"8.6\\\"; rm -rf ~; echo \\\"\"}}\n");
        fix = unset_fix(&e, &mp, "9.0$(reboot)");
        ck_assert_msg(fix && !strstr(fix, "rm -rf") && !strstr(fix, "reboot") && strstr(fix, "compute capabilities"),
                      "%s", fix ? fix : "no finding");
        free(fix);

        fx_mkdir(root, "proc/driver/nvidia/gpus/0000:41:00.0");
        fix = unset_fix(&e, &mp, NULL);
        ck_assert_msg(!fix, "a GPU is visible, yet: %s", fix);
        {
                _cleanup_free_ char *gpu = at("proc/driver/nvidia/gpus/0000:41:00.0");
                ck_assert(rmdir(gpu) == 0);
        }
        fx_write(root, "dev/nvidia0", "");
        fix = unset_fix(&e, &mp, NULL);
        ck_assert_msg(!fix, "/dev/nvidia0 is there, yet: %s", fix);
        strv_release(&e.items);
}
END_TEST

/* The arch-list findings of TORCH_CUDA_ARCH_LIST=value with toolkit's
 * nvcc (the other rows off), joined: "what | fix" lines, "" for none. */
static char *arch_findings(const char *prefix, const char *module, const char *value)
{
        struct build_report r;
        struct env e;
        struct strbuf sb = STRBUF_INIT;

        env_init(&e);
        env_unset(&e, "TORCH_CUDA_ARCH_LIST");
        env_set(&e, "TORCH_CUDA_ARCH_LIST", value);
        env_cuda(&e, prefix, module);
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build_arch(&e, NULL, NULL, &r);
        for (size_t i = 0; i < r.n_findings; i++)
                if (streq(r.findings[i].id, BUILD_ARCH_LIST)) {
                        ck_assert_msg(r.findings[i].fatal, "%s", r.findings[i].what);
                        strbuf_addf(&sb, "%s | %s\n", r.findings[i].what, r.findings[i].fix);
                }
        build_report_release(&r);
        strv_release(&e.items);
        return strbuf_detach(&sb);
}

#define ASSERT_ARCH(prefix, module, value, needle)                                                            \
        ({                                                                                                      \
                _cleanup_free_ char *_f = arch_findings(prefix, module, value);                                 \
                if (*(needle))                                                                                  \
                        ck_assert_msg(strstr(_f, needle), "%s with %s: want '%s' in:\n%s", value, module,       \
                                      needle, _f);                                                              \
                else                                                                                            \
                        ck_assert_msg(!*_f, "%s with %s: want no arch-list finding, got:\n%s", value, module, _f); \
        })

/* What nvcc rejects, from the table where nvcc does not say (the
 * fixture's nvcc is a stub): CUDA 11 keeps sm_35, 12 drops it, 13 drops
 * everything before sm_75; and PyTorch's syntax. */
START_TEST(arch_list_rejected_or_malformed)
{
        tree();
        ASSERT_ARCH(CUDA12, "cuda/12.4", "3.5;8.0",
                    "TORCH_CUDA_ARCH_LIST='3.5;8.0': CUDA 12.4's nvcc does not compile for '3.5' (CUDA 12 "
                    "compiles for 5.0 and later) | export TORCH_CUDA_ARCH_LIST=\"8.0\"");
        ASSERT_ARCH(CUDA11, "cuda/11.8", "3.5;8.0", "");
        ASSERT_ARCH(CUDA13, "cuda/13.0", "7.0 7.5;9.0", "does not compile for '7.0' (CUDA 13 compiles for 7.5");
        ASSERT_ARCH(CUDA13, "cuda/13.0", "7.5;8.0;8.6+PTX;9.0a;10.0f;12.0;3.5(3.0)", "does not compile for '3.5(3.0)'");
        ASSERT_ARCH(CUDA13, "cuda/13.0", "7.5;8.0;8.6+PTX;9.0a;10.0f;12.0", "");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "Ampere;Hopper", "");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "3.5", "use a CUDA that still compiles for '3.5'");
        /* nvcc's names: the fix spells them as PyTorch does. */
        ASSERT_ARCH(CUDA12, "cuda/12.4", "sm_90;8.0",
                    "TORCH_CUDA_ARCH_LIST='sm_90;8.0': 'sm_90' is not an architecture PyTorch reads | export "
                    "TORCH_CUDA_ARCH_LIST=\"9.0;8.0\" (PyTorch writes nvcc's sm_XY as X.Y: 9.0)\n");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "compute_35 sm_100a",
                    "'compute_35', 'sm_100a' are not architectures PyTorch reads | export "
                    "TORCH_CUDA_ARCH_LIST=\"10.0a\" (PyTorch writes nvcc's sm_XY as X.Y: 3.5, 10.0a)\n");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "compute_35 sm_100a", "does not compile for '3.5' (CUDA 12");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "sm_9;sm_90b;sm_090", "'sm_9', 'sm_90b', 'sm_090' are not architectures "
                                                              "PyTorch reads | write each entry as MAJOR.MINOR");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "90", "'90' is not");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "9.0b,8.0", "'9.0b,8.0' is not");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "8.0+ptx", "'8.0+ptx' is not");
}
END_TEST

/* Where nvcc answers --list-gpu-arch, its list decides, not the table. */
START_TEST(arch_list_from_nvcc)
{
        _cleanup_free_ char *path = at(CUDA12 "/bin/nvcc");

        tree();
        unlink(path);
        fx_write(root, CUDA12 "/bin/nvcc",
                 "#!/bin/sh\n"
                 "if [ \"$1\" = --list-gpu-arch ]; then printf 'compute_50\\ncompute_80\\ncompute_90\\n'; exit 0; fi\n"
                 "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                 "echo 'Cuda compilation tools, release 12.4, V12.4.131'\n");
        ck_assert(chmod(path, 0755) == 0);
        ASSERT_ARCH(CUDA12, "cuda/12.4", "5.0;8.0;9.0a", "");
        ASSERT_ARCH(CUDA12, "cuda/12.4", "8.0;8.6;10.0",
                    "does not compile for '8.6', '10.0' (not in its --list-gpu-arch) | export "
                    "TORCH_CUDA_ARCH_LIST=\"8.0\"");
}
END_TEST

/* --- CMake itself -------------------------------------------------------------------------- */

struct cmake_picks {
        char *nvcc, *bin_dir, *include_dirs, *library_dir, *cudnn_include, *cudnn_library, *nccl_include,
                *nccl_library, *cub_include;
};

static void cmake_picks_release(struct cmake_picks *p)
{
        free(p->nvcc);
        free(p->bin_dir);
        free(p->include_dirs);
        free(p->library_dir);
        free(p->cudnn_include);
        free(p->cudnn_library);
        free(p->nccl_include);
        free(p->nccl_library);
        free(p->cub_include);
}

static char *line_value(const char *text, const char *key)
{
        _cleanup_free_ char *k = xasprintf("\n%s=", key);
        _cleanup_free_ char *t = xasprintf("\n%s", text);
        const char *p = strstr(t, k);

        if (!p)
                return NULL;
        p += strlen(k);
        {
                char *v = xstrndup(p, strcspn(p, "\n"));

                if (!*v || endswith(v, "-NOTFOUND")) {
                        free(v);
                        return NULL;
                }
                return v;
        }
}

/* The picks of the real CMake in e: FindCUDA's nvcc searches, then
 * find_package(CUDAToolkit) with CUDAToolkit_ROOT = that root (as
 * cuda.cmake sets it), FindCUDNN's and FindNCCL's searches as STACK.md
 * §7.4/§7.5 give them. setup.py's part is done here: CUDA_HOME as
 * CUDA_BIN_PATH, CMAKE_PREFIX_PATH and CUDNN_ROOT forwarded as -D. The
 * default prefixes are the fixture's. Returns false when cmake is not
 * installed. */
static bool cmake_run(const struct env *e, struct cmake_picks *ret)
{
        static const char script[] =
                "cmake_minimum_required(VERSION 3.18)\n"
                "project(doctorbuild NONE)\n"
                "set(CMAKE_SYSTEM_PREFIX_PATH \"${R}/usr/local;${R}/usr;${R};${R}/usr/X11R6;${R}/usr/pkg;${R}/opt\")\n"
                "set(CMAKE_SYSTEM_INCLUDE_PATH \"\")\nset(CMAKE_SYSTEM_LIBRARY_PATH \"\")\n"
                "set(CMAKE_SYSTEM_PROGRAM_PATH \"\")\n"
                "set_property(GLOBAL PROPERTY FIND_LIBRARY_USE_LIB64_PATHS FALSE)\n"
                "if(ARCH)\n  set(CMAKE_LIBRARY_ARCHITECTURE \"${ARCH}\")\nendif()\n"
                /* FindCUDA, stage A */
                "find_program(ROOT_NVCC NAMES nvcc PATHS ENV CUDA_TOOLKIT_ROOT ENV CUDA_PATH ENV CUDA_BIN_PATH\n"
                "  PATH_SUFFIXES bin bin64 NO_DEFAULT_PATH)\n"
                "find_program(ROOT_NVCC NAMES nvcc PATHS \"${R}/opt/cuda/bin\" PATH_SUFFIXES cuda/bin)\n"
                "get_filename_component(CUDA_TOOLKIT_ROOT_DIR \"${ROOT_NVCC}\" DIRECTORY)\n"
                "get_filename_component(CUDA_TOOLKIT_ROOT_DIR \"${CUDA_TOOLKIT_ROOT_DIR}\" DIRECTORY)\n"
                /* cuda.cmake: CUDAToolkit_ROOT = FindCUDA's root */
                "set(CUDAToolkit_ROOT \"${CUDA_TOOLKIT_ROOT_DIR}\")\n"
                "find_package(CUDAToolkit QUIET)\n"
                "get_filename_component(CUDART_DIR \"${CUDA_CUDART}\" DIRECTORY)\n"
                /* FindCUDNN and FindNCCL as modules: <Pkg>_ROOT counts
                 * only inside find_package(). */
                "list(APPEND CMAKE_MODULE_PATH \"${CMAKE_CURRENT_SOURCE_DIR}/modules\")\n"
                "find_package(CUDNN)\n"
                "find_package(NCCL)\n"
                "find_package(CUB)\n"
                "file(WRITE \"${OUT}\" \"NVCC=${ROOT_NVCC}\\nBIN=${CUDAToolkit_BIN_DIR}\\n"
                "INC=${CUDAToolkit_INCLUDE_DIRS}\\nLIB=${CUDART_DIR}\\nCUDNN_INC=${CUDNN_INCLUDE_PATH}\\n"
                "CUDNN_LIB=${CUDNN_LIBRARY_PATH}\\nNCCL_INC=${NCCL_INCLUDE_DIRS}\\nNCCL_LIB=${NCCL_LIBRARIES}\\n"
                "CUB_INC=${CUB_INCLUDE_DIR}\\n\")\n";
        /* STACK.md §7.4 and §7.5: the searches of PyTorch's modules
         * (written from those facts, not copied). */
        static const char find_cudnn[] =
                "list(APPEND CUDNN_ROOT $ENV{CUDNN_ROOT_DIR} ${CUDA_TOOLKIT_ROOT_DIR})\n"
                "list(APPEND CMAKE_PREFIX_PATH ${CUDNN_ROOT})\n"
                "find_path(CUDNN_INCLUDE_PATH cudnn.h HINTS $ENV{CUDNN_INCLUDE_DIR}\n"
                "  PATH_SUFFIXES cuda/include cuda include)\n"
                "find_library(CUDNN_LIBRARY_PATH cudnn PATHS $ENV{CUDNN_LIBRARY}\n"
                "  PATH_SUFFIXES lib lib64 cuda/lib cuda/lib64 lib/x64)\n";
        static const char find_nccl[] =
                "list(APPEND CMAKE_PREFIX_PATH $ENV{NCCL_ROOT_DIR} ${CUDA_TOOLKIT_ROOT_DIR})\n"
                "find_path(NCCL_INCLUDE_DIRS NAMES nccl.h HINTS $ENV{NCCL_INCLUDE_DIR})\n"
                "find_library(NCCL_LIBRARIES NAMES nccl nccl_static HINTS $ENV{NCCL_LIB_DIR})\n";
        /* PyTorch 2.6's cmake/Modules/FindCUB.cmake: one find_path with
         * FindCUDA's CUDA_TOOLKIT_INCLUDE (the root's include/) as hint. */
        static const char find_cub[] =
                "find_path(CUB_INCLUDE_DIR HINTS \"${CUDA_TOOLKIT_ROOT_DIR}/include\" NAMES cub/cub.cuh)\n";
        _cleanup_free_ char *cmake = NULL, *src = at("cmake-src"), *bld = at("cmake-build"), *out = at("cmake-out");
        _cleanup_free_ char *def_r = xasprintf("-DR=%s", root), *def_out = xasprintf("-DOUT=%s", out);
        _cleanup_free_ char *def_arch = NULL, *def_cpp = NULL, *def_cudnn = NULL, *multiarch = NULL;
        _cleanup_(child_release) struct child c = { .out = STRBUF_INIT, .err = STRBUF_INIT };
        _cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
        struct strv env = { 0 }, argv = { 0 };
        const char *cpp, *home;
        int err = 0;

        cmake = process_find_program("cmake", (char *[]){ (char *)"PATH=/usr/local/bin:/usr/bin:/bin", NULL }, &err);
        if (!cmake)
                return false;
        fx_mkdir(root, "cmake-src");
        fx_write(root, "cmake-src/CMakeLists.txt", script);
        fx_write(root, "cmake-src/modules/FindCUDNN.cmake", find_cudnn);
        fx_write(root, "cmake-src/modules/FindNCCL.cmake", find_nccl);
        fx_write(root, "cmake-src/modules/FindCUB.cmake", find_cub);
        for (size_t i = 0; i < e->items.len; i++)
                strv_add(&env, e->items.items[i]);
        home = env_get(env.items, "CUDA_HOME");
        if (home && !env_get(env.items, "CUDA_BIN_PATH"))
                strv_push(&env, xasprintf("CUDA_BIN_PATH=%s", home));
        if (!env_get(env.items, "PATH"))
                strv_add(&env, "PATH=/usr/bin:/bin");
        multiarch = xasprintf("%s/usr/lib/%s", root, arch);
        if (access(multiarch, F_OK) == 0)
                def_arch = xasprintf("-DARCH=%s", arch);
        cpp = env_get(env.items, "CMAKE_PREFIX_PATH");
        if (cpp) {
                _cleanup_free_ char *list = str_replace_all(cpp, ":", ";");
                def_cpp = xasprintf("-DCMAKE_PREFIX_PATH=%s", list);
        }
        if (env_get(env.items, "CUDNN_ROOT"))
                def_cudnn = xasprintf("-DCUDNN_ROOT=%s", env_get(env.items, "CUDNN_ROOT"));
        strv_add(&argv, cmake);
        strv_add(&argv, "-S");
        strv_add(&argv, src);
        strv_add(&argv, "-B");
        strv_add(&argv, bld);
        strv_add(&argv, def_r);
        strv_add(&argv, def_out);
        if (def_arch)
                strv_add(&argv, def_arch);
        if (def_cpp)
                strv_add(&argv, def_cpp);
        if (def_cudnn)
                strv_add(&argv, def_cudnn);
        ck_assert_int_eq(process_run(cmake, argv.items, env.items, NULL, 120, &c), 0);
        ck_assert_msg(child_succeeded(&c), "cmake failed:\n%s\n%s", c.out.buf, c.err.buf);
        ck_assert_int_eq(file_read_regular_at(AT_FDCWD, out, NULL, (size_t)1 << 20, false, &text, NULL), 0);
        *ret = (struct cmake_picks){
                .nvcc = line_value(text.buf, "NVCC"), .bin_dir = line_value(text.buf, "BIN"),
                .include_dirs = line_value(text.buf, "INC"), .library_dir = line_value(text.buf, "LIB"),
                .cudnn_include = line_value(text.buf, "CUDNN_INC"), .cudnn_library = line_value(text.buf, "CUDNN_LIB"),
                .nccl_include = line_value(text.buf, "NCCL_INC"), .nccl_library = line_value(text.buf, "NCCL_LIB"),
                .cub_include = line_value(text.buf, "CUB_INC"),
        };
        /* A fresh configure for the next environment of the same test. */
        {
                _cleanup_free_ char *cache = path_join(bld, "CMakeCache.txt");
                unlink(cache);
        }
        strv_release(&env);
        strv_release(&argv);
        return true;
}

static void same_file(const char *what, const char *cmake, const char *doctor, const char *text)
{
        _cleanup_free_ char *a = cmake ? realpath(cmake, NULL) : NULL, *b = doctor ? realpath(doctor, NULL) : NULL;

        if (!cmake || !doctor) {
                ck_assert_msg(!cmake && !doctor, "%s: cmake '%s', doctor '%s'\n%s", what, cmake ? cmake : "nothing",
                              doctor ? doctor : "nothing", text);
                return;
        }
        /* The same path as written: CMake's result is the directory it
         * found the file in, not the file's real location. */
        ck_assert_msg(streq(cmake, doctor) || (a && b && streq(a, b)), "%s: cmake '%s', doctor '%s'\n%s", what, cmake,
                      doctor, text);
        ck_assert_msg(streq(cmake, doctor), "%s: cmake '%s', doctor '%s' (the same file, another path)\n%s", what,
                      cmake, doctor, text);
}

/* doctor's picks against CMake's own in e (nothing when cmake is absent). */
static void compare_with_cmake(const struct env *e, const struct build_report *r)
{
        struct cmake_picks p = { 0 };
        _cleanup_free_ char *text = dump(r);
        _cleanup_free_ char *hdir = NULL, *ldir = NULL, *ndir = NULL, *bin = NULL, *inc = NULL;

        if (!cmake_run(e, &p))
                return;
        same_file("FindCUDA's nvcc", p.nvcc, r->c[BUILD_TOOLKIT].library.path, text);
        if (r->c[BUILD_CUDART].prefix)
                bin = path_join(r->c[BUILD_CUDART].prefix, "bin");
        same_file("CUDAToolkit_BIN_DIR", p.bin_dir, bin, text);
        if (r->c[BUILD_CUDART].header.path)
                inc = path_dirname(r->c[BUILD_CUDART].header.path);
        same_file("CUDAToolkit_INCLUDE_DIRS", p.include_dirs, inc, text);
        if (r->c[BUILD_CUDART].library.path)
                ldir = path_dirname(r->c[BUILD_CUDART].library.path);
        same_file("CUDAToolkit_LIBRARY_DIR (libcudart's)", p.library_dir, ldir, text);
        if (r->c[build_row(&component_cudnn)].header.path)
                hdir = path_dirname(r->c[build_row(&component_cudnn)].header.path);
        if (strcmp(r->c[build_row(&component_cudnn)].state, "off") != 0) {
                same_file("CUDNN_INCLUDE_PATH", p.cudnn_include, hdir, text);
                same_file("CUDNN_LIBRARY_PATH", p.cudnn_library, r->c[build_row(&component_cudnn)].library.path, text);
        }
        if (streq(r->c[build_row(&component_nccl)].state, "found") || streq(r->c[build_row(&component_nccl)].state, "not found")) {
                if (r->c[build_row(&component_nccl)].header.path)
                        ndir = path_dirname(r->c[build_row(&component_nccl)].header.path);
                same_file("NCCL_INCLUDE_DIRS", p.nccl_include, ndir, text);
                same_file("NCCL_LIBRARIES", p.nccl_library, r->c[build_row(&component_nccl)].library.path, text);
        }
        /* FindCUB (with USE_CUDA, a toolkit found): "Cannot find CUB."
         * exactly where CMake finds none. */
        ck_assert_msg(!r->c[BUILD_TOOLKIT].prefix || !p.cub_include == !!finding(r, BUILD_NO_CUB, NULL), "CUB_INCLUDE_DIR: cmake '%s', doctor %s\n%s",
                      p.cub_include ? p.cub_include : "nothing", finding(r, BUILD_NO_CUB, NULL) ? "no-cub" : "none",
                      text);
        cmake_picks_release(&p);
}

/* --- modules ---------------------------------------------------------------------------------- */

static void modulefile(const char *name, const char *lib, const char *prefix)
{
        _cleanup_free_ char *rel = xasprintf("mods/%s.lua", name), *libdir = at(lib), *p = at(prefix);
        _cleanup_free_ char *text = xasprintf("-- %s (test-doctor-build)\nprepend_path(\"LD_LIBRARY_PATH\", \"%s\")\n"
                                              "prepend_path(\"CMAKE_PREFIX_PATH\", \"%s\")\n",
                                              name, libdir, p);

        fx_write(root, rel, text);
}

static void modulepath(struct strv *mp)
{
        modulefile("cuda/11.8", CUDA11 "/lib64", CUDA11);
        modulefile("cuda/12.4", CUDA12 "/lib64", CUDA12);
        modulefile("cudnn/8.9.7", CUDNN8 "/lib", CUDNN8);
        modulefile("cudnn/9.1.0", CUDNN9 "/lib", CUDNN9);
        *mp = (struct strv){ 0 };
        strv_push(mp, at("mods"));
}

/* --- (1) everything loaded ------------------------------------------------------------------------ */

START_TEST(everything_loaded)
{
        struct build_report r;
        struct env e;

        tree();
        fx_cusparselt(root, "sw/cusparselt/0.6.2.3", &(struct fx_cusparselt){ .version = "0.6.2.3" });
        fx_cudss(root, "sw/cudss/0.3.0", &(struct fx_cudss){ .version = "0.3.0", .cuda_major = 12 });
        fx_magma(root, "sw/magma/2.8.0", &(struct fx_magma){ .version = "2.8.0", .cuda_major = 12 });
        fx_nvshmem(root, "sw/nvshmem/3.2.5", &(struct fx_nvshmem){ .version = "3.2.5" });
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4:cudnn/9.1.0:nccl/2.21.5");
        env_dir(&e, "CUDA_PATH", CUDA12);
        env_dir(&e, "CUDNN_ROOT", CUDNN9);
        env_dirs(&e, "CMAKE_PREFIX_PATH", (const char *const[]){ NCCL, CUDNN9, CUDA12, NULL }, NULL);
        env_set(&e, "USE_SYSTEM_NCCL", "1");
        env_dir(&e, "CUSPARSELT_ROOT", "sw/cusparselt/0.6.2.3");
        env_dir(&e, "CUDSS_ROOT", "sw/cudss/0.3.0");
        env_dir(&e, "MAGMA_HOME", "sw/magma/2.8.0");
        env_dir(&e, "NVSHMEM_HOME", "sw/nvshmem/3.2.5");
        run_build(&e, NULL, &r);
        {
                _cleanup_free_ char *d = dump(&r);
                ck_assert_msg(r.n_findings == 0, "findings in a healthy environment:\n%s", d);
        }
        /* FindCUDA: $CUDA_PATH/bin/nvcc (the first of its variables set). */
        assert_hit(&r, &r.c[BUILD_TOOLKIT].library, CUDA12 "/bin/nvcc", "CUDA_PATH");
        ck_assert_str_eq(r.cuda_version, "12.4");
        /* CMake's CUDA compiler: find_program(nvcc), whose default
         * search has CMAKE_PREFIX_PATH's <prefix>/bin before PATH. */
        assert_hit(&r, &r.c[BUILD_NVCC].library, CUDA12 "/bin/nvcc", "CMAKE_PREFIX_PATH");
        /* CUDNN_ROOT is <Pkg>_ROOT: its include/ and lib/ come first. */
        assert_hit(&r, &r.c[build_row(&component_cudnn)].header, CUDNN9 "/include/cudnn.h", "CUDNN_ROOT");
        assert_hit(&r, &r.c[build_row(&component_cudnn)].library, CUDNN9 "/lib/libcudnn.so", "CUDNN_ROOT");
        ck_assert_str_eq(r.c[build_row(&component_cudnn)].version, "9.1.0");
        ck_assert_uint_eq(r.c[build_row(&component_cudnn)].cuda_major, 12);
        /* FindNCCL: no suffixes; NCCL's prefix on CMAKE_PREFIX_PATH. */
        assert_hit(&r, &r.c[build_row(&component_nccl)].header, NCCL "/include/nccl.h", "CMAKE_PREFIX_PATH");
        assert_hit(&r, &r.c[build_row(&component_nccl)].library, NCCL "/lib/libnccl.so", "CMAKE_PREFIX_PATH");
        assert_hit(&r, &r.c[build_row(&component_cusparselt)].library, "sw/cusparselt/0.6.2.3/lib/libcusparseLt.so", "CUSPARSELT_ROOT");
        assert_hit(&r, &r.c[build_row(&component_cudss)].header, "sw/cudss/0.3.0/include/cudss.h", "CUDSS_ROOT");
        /* FindMAGMA: HINTS $ENV{MAGMA_HOME} PATH_SUFFIXES lib. */
        assert_hit(&r, &r.c[build_row(&component_magma)].library, "sw/magma/2.8.0/lib/libmagma.so", "MAGMA_HOME");
        assert_hit(&r, &r.c[build_row(&component_nvshmem)].header, "sw/nvshmem/3.2.5/include/nvshmem.h", "NVSHMEM_HOME");
        /* Kineto: CUDA_SOURCE_DIR/extras/CUPTI/lib64, NO_DEFAULT_PATH. */
        assert_hit(&r, &r.c[BUILD_CUPTI].library, CUDA12 "/extras/CUPTI/lib64/libcupti.so",
                   "CUDA_SOURCE_DIR (the toolkit)");
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* --- (2) cuda only ------------------------------------------------------------------------------------ */

START_TEST(cuda_only)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;

        tree();
        env_init(&e);
        env_cuda(&e, CUDA11, "cuda/11.8");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        /* setup.py (before 2.8) passes CUDA_HOME as CUDA_BIN_PATH. */
        assert_hit(&r, &r.c[BUILD_TOOLKIT].library, CUDA11 "/bin/nvcc", "CUDA_HOME (as CUDA_BIN_PATH)");
        assert_hit(&r, &r.c[BUILD_CUDART].library, CUDA11 "/lib64/libcudart.so", "CUDAToolkit_ROOT");
        /* Nothing has cuDNN: not the toolkit, not /usr/local, /usr, /opt. */
        assert_hit(&r, &r.c[build_row(&component_cudnn)].library, NULL, NULL);
        f = ASSERT_FINDING(&r, BUILD_OPTION_OFF, "cuDNN");
        ck_assert_msg(strstr(f->what, "USE_CUDNN off"), "%s", f->what);
        ck_assert_msg(strstr(f->fix, "USE_CUDNN=0"), "%s", f->fix);
        ck_assert_uint_eq(r.n_findings, 1);
        {
                _cleanup_free_ char *notes = strv_join(&r.notes, "\n");
                ck_assert_msg(!strstr(notes, "PyTorch 2.8"), "%s", notes);
        }
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&e.items);

        /* CUDA_HOME alone (no nvcc on PATH): only setup.py before 2.8
         * passes it on; a newer tree finds no toolkit, which is said. */
        env_init(&e);
        env_set(&e, "PATH", "/usr/bin:/bin");
        env_dir(&e, "CUDA_HOME", CUDA11);
        env_others_off(&e);
        run_build(&e, NULL, &r);
        assert_hit(&r, &r.c[BUILD_TOOLKIT].library, CUDA11 "/bin/nvcc", "CUDA_HOME (as CUDA_BIN_PATH)");
        {
                _cleanup_free_ char *notes = strv_join(&r.notes, "\n");
                ck_assert_msg(strstr(notes, "before PyTorch 2.8") && strstr(notes, "set CUDA_PATH"), "%s", notes);
        }
        build_report_release(&r);
        strv_release(&e.items);

        /* cuda/13.0, whose toolkit holds a cuDNN: FindCUDNN appends
         * CUDA_TOOLKIT_ROOT_DIR to CMAKE_PREFIX_PATH, so that one is found
         * (through the toolkit's lib64 link), for the right major. */
        env_init(&e);
        env_cuda(&e, CUDA13, "cuda/13.0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        assert_hit(&r, &r.c[build_row(&component_cudnn)].header, CUDA13 "/include/cudnn.h", "CUDA_TOOLKIT_ROOT_DIR (appended)");
        assert_hit(&r, &r.c[build_row(&component_cudnn)].library, CUDA13 "/lib64/libcudnn.so", "CUDA_TOOLKIT_ROOT_DIR (appended)");
        ck_assert_uint_eq(r.c[build_row(&component_cudnn)].cuda_major, 13);
        /* But CUB is in include/cccl/cub, where PyTorch 2.6's FindCUB
         * does not look: "Cannot find CUB.", fatal. */
        f = ASSERT_FINDING(&r, BUILD_NO_CUB, "include/cccl/cub");
        ck_assert(f->fatal);
        ck_assert_msg(strstr(f->why, "Cannot find CUB.") && strstr(f->why, "include/cccl") &&
                              strstr(f->fix, "CUDA 12") && strstr(f->fix, "2.9"),
                      "%s\n%s", f->why, f->fix);
        ck_assert_uint_eq(r.n_findings, 1);
        ck_assert_uint_eq(r.n_fatal, 1);
        ck_assert_str_eq(r.c[BUILD_TOOLKIT].verdict, "fatal");
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&e.items);

        /* CUB_ROOT naming include/cccl: find_package(CUB) takes it
         * (<Pkg>_ROOT), as CMake does. */
        env_init(&e);
        env_cuda(&e, CUDA13, "cuda/13.0");
        env_dir(&e, "CUB_ROOT", CUDA13 "/include/cccl");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        ck_assert_msg(!finding(&r, BUILD_NO_CUB, NULL), "no-cub with CUB_ROOT");
        ck_assert_str_eq(r.c[BUILD_TOOLKIT].verdict, "on");
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* A runtime-only cuSPARSELt loaded (NVIDIA's CUDA 13 wheel: the library,
 * no header; its module sets LD_LIBRARY_PATH only): the configure finds no
 * cuSPARSELt, and the finding says why and what has the header. */
START_TEST(cusparselt_runtime_only)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;
        const char *wheel = "venv/lib/python3.12/site-packages/nvidia/cusparselt";
        _cleanup_free_ char *lib = xasprintf("%s/lib", wheel);

        tree();
        fx_cusparselt(root, wheel, &(struct fx_cusparselt){ .version = "0.8.1.1", .soname_only = true,
                                                           .no_header = true });
        env_init(&e);
        env_cuda(&e, CUDA13, "cuda/13.0:cusparselt/0.8.1");
        env_dir(&e, "LD_LIBRARY_PATH", lib);
        env_set(&e, "USE_CUDSS", "0");
        env_set(&e, "USE_MAGMA", "0");
        env_set(&e, "USE_NVSHMEM", "0");
        run_build(&e, NULL, &r);
        f = ASSERT_FINDING(&r, BUILD_OPTION_OFF, "cuSPARSELt");
        ck_assert_msg(strstr(f->what, "USE_CUSPARSELT off") && strstr(f->what, "runtime-only install") &&
                              strstr(f->what, "nvidia-cusparselt-cu12 wheel") && strstr(f->what, "/nvidia/cusparselt/lib'"),
                      "%s", f->what);
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* --- (3) cuda 11 loaded, a CUDA 13 cuDNN in /usr/local/cuda ------------------------------------------------ */

START_TEST(cuda11_cudnn_in_usr_local_cuda)
{
        struct build_report r;
        struct env e;
        struct strv mp;
        const struct doctor_finding *f;

        tree();
        usr_local_cuda();
        modulepath(&mp);
        env_init(&e);
        env_cuda(&e, CUDA11, "cuda/11.8");
        env_others_off(&e);
        run_build(&e, &mp, &r);
        assert_hit(&r, &r.c[BUILD_TOOLKIT].library, CUDA11 "/bin/nvcc", "CUDA_HOME (as CUDA_BIN_PATH)");
        /* Header: the system prefix /usr/local with PATH_SUFFIXES
         * cuda/include; library: /usr/local with cuda/lib64 (cuda/lib
         * does not exist there). */
        assert_hit(&r, &r.c[build_row(&component_cudnn)].header, "usr/local/cuda/include/cudnn.h",
                   "default /usr/local + cuda/include");
        assert_hit(&r, &r.c[build_row(&component_cudnn)].library, "usr/local/cuda/lib64/libcudnn.so", "default /usr/local + cuda/lib64");
        ck_assert_str_eq(r.c[build_row(&component_cudnn)].version, "9.19.0");
        ck_assert_uint_eq(r.c[build_row(&component_cudnn)].cuda_major, 13);
        f = ASSERT_FINDING(&r, BUILD_CUDA_MAJOR, "cuDNN");
        ck_assert_msg(strstr(f->what, "CUDA 13") && strstr(f->what, "11.8"), "%s", f->what);
        ck_assert_msg(strstr(f->what, "only through the default places"), "%s", f->what);
        ck_assert_msg(strstr(f->fix, "module load cudnn/8.9.7"), "%s", f->fix);
        ck_assert_uint_eq(r.n_findings, 1);
        compare_with_cmake(&e, &r);
        build_report_release(&r);

        /* No modulepath: the option to turn off instead. */
        run_build(&e, NULL, &r);
        f = ASSERT_FINDING(&r, BUILD_CUDA_MAJOR, "cuDNN");
        ck_assert_msg(strstr(f->fix, "USE_CUDNN=0") && strstr(f->fix, "CUDNN_ROOT"), "%s", f->fix);
        build_report_release(&r);
        strv_release(&mp);
        strv_release(&e.items);
}
END_TEST

/* A Spack NVSHMEM (NVSHMEM_HOME) whose libraries and prefix name no CUDA:
 * its CUDA major is the one its spec.json names, as scan reads it; built
 * for CUDA 13 beside CUDA 12.4 it is a cuda-major finding, for CUDA 12
 * none. */
START_TEST(nvshmem_cuda_major_from_its_spec_json)
{
        static const struct {
                const char *prefix, *version, *cuda;
                unsigned long major;
        } cases[] = {
                { "sw/spack/nvshmem-3.1.7-1-k7qz3xvqmmb2fvmpyl4ld6hmxx3kbfzz", "3.1.7", "12.6.0", 12 },
                { "sw/spack/nvshmem-3.4.5-1-u2pzfvqtu4fjp3hmnzeysd6j4x5b5pmw", "3.4.5", "13.0.0", 13 },
        };

        tree();
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *spack = xasprintf("%s-1", cases[i].version);
                const struct build_component *c;
                struct build_report r;
                struct env e;

                fx_nvshmem(root, cases[i].prefix, &(struct fx_nvshmem){ .version = cases[i].version });
                fx_spack_spec(root, cases[i].prefix, "nvshmem", spack, cases[i].cuda);
                env_init(&e);
                env_cuda(&e, CUDA12, "cuda/12.4");
                env_set(&e, "USE_CUSPARSELT", "0");
                env_set(&e, "USE_CUDSS", "0");
                env_set(&e, "USE_MAGMA", "0");
                env_dir(&e, "NVSHMEM_HOME", cases[i].prefix);
                run_build(&e, NULL, &r);
                c = &r.c[build_row(&component_nvshmem)];
                ck_assert_msg(c->library.path && strstr(c->library.path, cases[i].prefix), "%s",
                              c->library.path ? c->library.path : "(none)");
                ck_assert_uint_eq(c->cuda_major, cases[i].major);
                if (cases[i].major == 13) {
                        const struct doctor_finding *f = ASSERT_FINDING(&r, BUILD_CUDA_MAJOR, "NVSHMEM");

                        ck_assert_msg(strstr(f->what, "CUDA 13") && strstr(f->what, "12.4"), "%s", f->what);
                } else
                        ck_assert_ptr_null(finding(&r, BUILD_CUDA_MAJOR, NULL));
                build_report_release(&r);
                strv_release(&e.items);
        }
}
END_TEST

/* --- (4) header and library from different installs ---------------------------------------------------------- */

START_TEST(cudnn_header_and_library_apart)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;
        _cleanup_free_ char *deblib = xasprintf("lib/%s", arch);

        tree();
        /* Debian's libcudnn8-dev: /usr/include/cudnn*.h, /usr/lib/<arch>. */
        fx_cudnn(root, "usr", &(struct fx_cudnn){ .version = "8.9.7", .cuda_major = 12, .lib = deblib });
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_dir(&e, "CMAKE_LIBRARY_PATH", CUDNN9 "/lib");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        /* The header: nothing names an include directory, so /usr +
         * include; the library: CMAKE_LIBRARY_PATH, before the system
         * prefixes. */
        assert_hit(&r, &r.c[build_row(&component_cudnn)].header, "usr/include/cudnn.h", "default /usr + include");
        assert_hit(&r, &r.c[build_row(&component_cudnn)].library, CUDNN9 "/lib/libcudnn.so", "CMAKE_LIBRARY_PATH");
        f = ASSERT_FINDING(&r, BUILD_MIXED, "cuDNN");
        ck_assert_msg(strstr(f->what, "8.9.7") && strstr(f->what, "9.1.0"), "%s", f->what);
        ck_assert_msg(strstr(f->fix, "CUDNN_ROOT"), "%s", f->fix);
        compare_with_cmake(&e, &r);
        build_report_release(&r);

        /* Another cudnn.h in /usr/include/cuda: every directory's
         * PATH_SUFFIXES (cuda/include cuda include) come before the
         * directory itself (cmSearchPath::AddSuffixes). */
        fx_cudnn(root, "sw/cudnn/9.1.0-headers", &(struct fx_cudnn){ .version = "9.1.0", .include = "../../../usr/include/cuda" });
        run_build(&e, NULL, &r);
        assert_hit(&r, &r.c[build_row(&component_cudnn)].header, "usr/include/cuda/cudnn.h", "default /usr + include/cuda");
        ck_assert_str_eq(r.c[build_row(&component_cudnn)].version, "9.1.0");
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* Debian's cuDNN for the right major, found only in /usr: the configure
 * takes it as it should, so a note (naming the module that would name
 * it), not a problem. */
START_TEST(cudnn_only_in_system_dirs)
{
        struct build_report r;
        struct env e;
        struct strv mp;
        _cleanup_free_ char *deblib = xasprintf("lib/%s", arch), *libpath = NULL;
        _cleanup_free_ char *from = xasprintf("default /usr + lib/%s", arch);

        tree();
        modulepath(&mp);
        fx_cudnn(root, "usr", &(struct fx_cudnn){ .version = "8.9.7", .cuda_major = 12, .lib = deblib });
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_others_off(&e);
        run_build(&e, &mp, &r);
        libpath = xasprintf("usr/%s/libcudnn.so", deblib);
        assert_hit(&r, &r.c[build_row(&component_cudnn)].header, "usr/include/cudnn.h", "default /usr + include");
        assert_hit(&r, &r.c[build_row(&component_cudnn)].library, libpath, from);
        {
                _cleanup_free_ char *d = dump(&r);
                bool noted = false;

                ck_assert_msg(r.n_findings == 0, "%s", d);
                for (size_t i = 0; i < r.notes.len; i++)
                        noted |= strstr(r.notes.items[i], "only from the default places") &&
                                 strstr(r.notes.items[i], "module load cudnn/9.1.0");
                ck_assert_msg(noted, "no note of the default places:\n%s", d);
                ck_assert_str_eq(r.c[build_row(&component_cudnn)].verdict, "on");
        }
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&mp);
        strv_release(&e.items);
}
END_TEST

/* --- (5) CUDNN_ROOT set by hand to another install ------------------------------------------------------------------ */

START_TEST(cudnn_root_by_hand)
{
        struct build_report r;
        struct env e;
        struct strv mp;
        const struct doctor_finding *f;

        tree();
        modulepath(&mp);
        env_init(&e);
        env_cuda(&e, CUDA11, "cuda/11.8:cudnn/8.9.7");
        env_dir(&e, "CMAKE_PREFIX_PATH", CUDNN8);
        env_dir(&e, "CUDNN_ROOT", CUDNN9);
        env_others_off(&e);
        run_build(&e, &mp, &r);
        /* <Pkg>_ROOT is searched before CMAKE_PREFIX_PATH. */
        assert_hit(&r, &r.c[build_row(&component_cudnn)].header, CUDNN9 "/include/cudnn.h", "CUDNN_ROOT");
        assert_hit(&r, &r.c[build_row(&component_cudnn)].library, CUDNN9 "/lib/libcudnn.so", "CUDNN_ROOT");
        f = ASSERT_FINDING(&r, BUILD_CUDA_MAJOR, "cuDNN");
        ck_assert_msg(strstr(f->what, "CUDA 12"), "%s", f->what);
        ck_assert_msg(strstr(f->fix, "cudnn/8.9.7"), "%s", f->fix);
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&mp);
        strv_release(&e.items);
}
END_TEST

/* --- (6) NCCL only through CMAKE_PREFIX_PATH; and a header of another NCCL -------------------------------------------- */

START_TEST(nccl_through_cmake_prefix_path)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;

        tree();
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4:nccl/2.21.5");
        env_dir(&e, "CMAKE_PREFIX_PATH", NCCL);
        env_set(&e, "USE_SYSTEM_NCCL", "1");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        assert_hit(&r, &r.c[build_row(&component_nccl)].header, NCCL "/include/nccl.h", "CMAKE_PREFIX_PATH");
        assert_hit(&r, &r.c[build_row(&component_nccl)].library, NCCL "/lib/libnccl.so", "CMAKE_PREFIX_PATH");
        ck_assert_str_eq(r.c[build_row(&component_nccl)].version, "2.21.5");
        {
                _cleanup_free_ char *d = dump(&r);
                ck_assert_msg(r.n_findings == 0, "%s", d);
        }
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&e.items);

        /* Debian's nccl.h 2.18.3 in /usr/include, the library from
         * NCCL_LIB_DIR (HINTS): configure stops. */
        fx_nccl(root, "usr", &(struct fx_nccl){ .version = "2.18.3", .cuda = "12.2" });
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_dir(&e, "NCCL_LIB_DIR", NCCL "/lib");
        env_set(&e, "USE_SYSTEM_NCCL", "1");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        assert_hit(&r, &r.c[build_row(&component_nccl)].header, "usr/include/nccl.h", "default /usr + include");
        assert_hit(&r, &r.c[build_row(&component_nccl)].library, NCCL "/lib/libnccl.so", "NCCL_LIB_DIR");
        f = ASSERT_FINDING(&r, BUILD_MIXED, "NCCL");
        ck_assert_msg(strstr(f->why, "do not match"), "%s", f->why);
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&e.items);

        /* Without USE_SYSTEM_NCCL the bundled NCCL is built: nothing searched. */
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        ck_assert_str_eq(r.c[build_row(&component_nccl)].state, "bundled");
        ck_assert_uint_eq(r.n_findings, 0);
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* --- (7) nvcc on PATH from another toolkit than CUDA_PATH ------------------------------------------------------------- */

START_TEST(nvcc_of_another_toolkit)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;

        tree();
        env_init(&e);
        env_dirs(&e, "PATH", (const char *const[]){ CUDA13 "/bin", NULL }, "/usr/bin:/bin");
        env_dir(&e, "CUDA_PATH", CUDA12);
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        assert_hit(&r, &r.c[BUILD_TOOLKIT].library, CUDA12 "/bin/nvcc", "CUDA_PATH");
        assert_hit(&r, &r.c[BUILD_NVCC].library, CUDA13 "/bin/nvcc", "PATH");
        f = ASSERT_FINDING(&r, BUILD_CONFLICTING_CUDA, NULL);
        ck_assert_msg(strstr(f->what, "13.0") && strstr(f->what, "12.4"), "%s", f->what);
        ck_assert_msg(strstr(f->why, "Found two conflicting CUDA versions"), "%s", f->why);
        compare_with_cmake(&e, &r);
        build_report_release(&r);

        /* CUDACXX names CMake's compiler outright. */
        {
                _cleanup_free_ char *nvcc = at(CUDA12 "/bin/nvcc");
                env_set(&e, "CUDACXX", nvcc);
        }
        run_build(&e, NULL, &r);
        assert_hit(&r, &r.c[BUILD_NVCC].library, CUDA12 "/bin/nvcc", "CUDACXX");
        ck_assert(!finding(&r, BUILD_CONFLICTING_CUDA, NULL));
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* --- (8) nothing loaded ----------------------------------------------------------------------------------------------- */

START_TEST(nothing_loaded)
{
        struct build_report r;
        struct env e;

        if (access("/usr/bin/nvcc", F_OK) == 0 || access("/bin/nvcc", F_OK) == 0)
                return; /* this host has an nvcc on the bare PATH */
        tree();
        env_init(&e);
        env_set(&e, "PATH", "/usr/bin:/bin");
        run_build(&e, NULL, &r);
        ASSERT_FINDING(&r, BUILD_NO_TOOLKIT, NULL);
        ck_assert_str_eq(r.c[BUILD_TOOLKIT].state, "not found");
        ck_assert_uint_eq(r.n_findings, 1);
        compare_with_cmake(&e, &r);
        build_report_release(&r);

        /* /usr/local/cuda: FindCUDA's default search reaches
         * /usr/local + cuda/bin, and that is only a default. */
        usr_local_cuda();
        run_build(&e, NULL, &r);
        assert_hit(&r, &r.c[BUILD_TOOLKIT].library, "usr/local/cuda/bin/nvcc", "default /usr/local + cuda/bin");
        ck_assert_str_eq(r.cuda_version, "13.0");
        /* But CMake's CUDA language looks for nvcc in CUDA_PATH and the
         * default places without cuda/bin: enable_language(CUDA) fails. */
        ASSERT_FINDING(&r, BUILD_NO_CUDA_COMPILER, NULL);
        compare_with_cmake(&e, &r);
        build_report_release(&r);

        /* A wrapper /usr/local/bin/nvcc (this project's machines have one):
         * FindCUDA's root is /usr/local (the default prefix's bin comes
         * before its cuda/bin), FindCUDAToolkit's is the `#$ TOP=` that
         * `nvcc -v` prints. */
        {
                _cleanup_free_ char *top = at(CUDA13 "/bin/..");
                _cleanup_free_ char *wrapper = xasprintf(
                        "#!/bin/sh\nif [ \"$1\" = -v ]; then echo '#$ TOP=%s' >&2; exit 1; fi\n"
                        "echo 'Cuda compilation tools, release 13.0, V13.0.88'\n", top);
                _cleanup_free_ char *path = at("usr/local/bin/nvcc"), *want_top = at(CUDA13);

                fx_write(root, "usr/local/bin/nvcc", wrapper);
                ck_assert(chmod(path, 0755) == 0);
                run_build(&e, NULL, &r);
                assert_hit(&r, &r.c[BUILD_TOOLKIT].library, "usr/local/bin/nvcc", "default /usr/local + bin");
                ck_assert_str_eq(r.c[BUILD_CUDART].prefix, want_top);
                ck_assert_str_eq(r.cuda_version, "13.0");
                compare_with_cmake(&e, &r);
                build_report_release(&r);
        }
        strv_release(&e.items);
}
END_TEST

/* --- the host compiler, stubs ------------------------------------------------------------------------------------------------ */

START_TEST(host_compiler_refused)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;
        _cleanup_free_ char *gxx = at("bin/g++-13");

        tree();
        fx_write(root, CUDA11 "/targets/x86_64-linux/include/crt/host_config.h",
                 "#if defined(__GNUC__)\n#if __GNUC__ > 11\n#error -- unsupported GNU version! gcc versions later "
                 "than 11 are not supported!\n#endif\n#endif\n");
        fx_write(root, "bin/g++-13",
                 "#!/bin/sh\necho '#define __GNUC__ 13'\necho '#define __GNUC_MINOR__ 2'\n"
                 "echo '#define __GNUC_PATCHLEVEL__ 0'\necho '#define __VERSION__ \"13.2.0\"'\n");
        ck_assert(chmod(gxx, 0755) == 0);
        env_init(&e);
        env_cuda(&e, CUDA11, "cuda/11.8");
        env_set(&e, "CUDAHOSTCXX", gxx);
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        ck_assert_str_eq(r.c[BUILD_HOST].library.path, gxx);
        f = ASSERT_FINDING(&r, BUILD_HOST_COMPILER, NULL);
        ck_assert_msg(strstr(f->what, "up to 11"), "%s", f->what);
        ck_assert_msg(strstr(f->fix, "g++-11"), "%s", f->fix);
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

START_TEST(stubs_on_ld_library_path)
{
        struct build_report r;
        struct env e;

        tree();
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_dir(&e, "LD_LIBRARY_PATH", CUDA12 "/targets/x86_64-linux/lib/stubs");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        ASSERT_FINDING(&r, DOCTOR_STUBS, "stubs");
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST


/* --- fatal or not: USE_SYSTEM_NCCL, USE_SYSTEM_LIBS ------------------------------------------------------------------ */

/* cmake/External/nccl.cmake: if(USE_SYSTEM_NCCL) find_package(NCCL
 * REQUIRED): no NCCL stops the configure ("Could NOT find NCCL (missing:
 * NCCL_INCLUDE_DIRS NCCL_LIBRARIES)"); CMakeLists.txt's
 * if(USE_SYSTEM_LIBS) sets USE_SYSTEM_NCCL ON when USE_NCCL is. A cuDNN
 * that is not found only turns USE_CUDNN off (cuda.cmake's "Cannot find
 * cuDNN library. Turning the option off"): a warning. */
START_TEST(system_nccl_missing_is_fatal)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;

        tree();
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_set(&e, "USE_SYSTEM_NCCL", "1");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        f = ASSERT_FINDING(&r, BUILD_REQUIRED, "USE_SYSTEM_NCCL is on");
        ck_assert(f->fatal);
        ck_assert_msg(strstr(f->why, "Could NOT find NCCL"), "%s", f->why);
        ck_assert_str_eq(r.c[build_row(&component_nccl)].verdict, "fatal");
        ck_assert_uint_eq(r.n_fatal, 1);
        /* cuDNN 9.1.0 is not on any path here: USE_CUDNN goes off, a warning. */
        f = ASSERT_FINDING(&r, BUILD_OPTION_OFF, "cuDNN");
        ck_assert(!f->fatal);
        ck_assert_str_eq(r.c[build_row(&component_cudnn)].verdict, "off");
        ck_assert_str_eq(r.c[BUILD_TOOLKIT].verdict, "on");
        compare_with_cmake(&e, &r);
        build_report_release(&r);
        strv_release(&e.items);

        /* USE_SYSTEM_LIBS alone turns it on, over USE_SYSTEM_NCCL=0. */
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_set(&e, "USE_SYSTEM_LIBS", "ON");
        env_set(&e, "USE_SYSTEM_NCCL", "0");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        f = ASSERT_FINDING(&r, BUILD_REQUIRED, "USE_SYSTEM_LIBS");
        ck_assert(f->fatal);
        ck_assert_uint_eq(r.n_findings, 1);
        build_report_release(&r);

        /* USE_DISTRIBUTED=0 does not turn NCCL off: PyTorch 2.6's USE_NCCL
         * depends on USE_CUDA (torch.cuda.nccl), and the configure searches
         * it and stops all the same. */
        env_set(&e, "USE_DISTRIBUTED", "0");
        run_build(&e, NULL, &r);
        f = ASSERT_FINDING(&r, BUILD_REQUIRED, "USE_SYSTEM_LIBS");
        ck_assert(f->fatal);
        ck_assert_str_eq(r.c[build_row(&component_nccl)].verdict, "fatal");
        build_report_release(&r);

        /* With USE_NCCL off nothing of NCCL is searched. */
        env_set(&e, "USE_NCCL", "0");
        run_build(&e, NULL, &r);
        ck_assert_str_eq(r.c[build_row(&component_nccl)].verdict, "off");
        ck_assert_uint_eq(r.n_findings, 0);
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* --- the CUDA compiler identification ------------------------------------------------------------------------------ */

/* What nvcc 12.4 says on a glibc 2.41 system (Debian trixie) for a .cu
 * including <cmath> (NVIDIA/cuda-samples#378 has the same lines for 12.9). */
static const char glibc_clash[] =
        "/usr/include/x86_64-linux-gnu/bits/mathcalls.h(79): error: exception specification is incompatible "
        "with that of previous function \"cospi\" (declared at line 2601 of "
        "/usr/lib/nvidia-cuda-toolkit/include/crt/math_functions.h)\n"
        "  extern double cospi (double __x) noexcept (true); extern double __cospi (double __x) noexcept (true);\n"
        "                                   ^\n\n"
        "/usr/include/x86_64-linux-gnu/bits/mathcalls.h(81): error: exception specification is incompatible "
        "with that of previous function \"sinpi\" (declared at line 2556 of "
        "/usr/lib/nvidia-cuda-toolkit/include/crt/math_functions.h)\n"
        "4 errors detected in the compilation of \"probe.cu\".\n";

/* prefix/bin/nvcc: says its version, and fails any compile (-c) with
 * message on stderr, recording its arguments in prefix/nvcc.args. */
static void failing_nvcc(const char *prefix, const char *message)
{
        _cleanup_free_ char *rel = xasprintf("%s/bin/nvcc", prefix), *path = at(rel), *msg = at("nvcc-message");
        _cleanup_free_ char *args = xasprintf("%s/%s/nvcc.args", root, prefix);
        _cleanup_free_ char *text = xasprintf(
                "#!/bin/sh\nfor a; do if [ \"$a\" = -c ]; then echo \"$*\" > '%s'; cat '%s' >&2; exit 1; fi; done\n"
                "echo 'Cuda compilation tools, release 12.4, V12.4.131'\n",
                args, msg);

        fx_write(root, "nvcc-message", message);
        unlink(path);
        fx_write(root, rel, text);
        ck_assert(chmod(path, 0755) == 0);
}

START_TEST(compile_fails_with_glibc_clash)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;
        _cleanup_free_ char *gxx = at("bin/g++-13");

        tree();
        failing_nvcc(CUDA12, glibc_clash);
        /* CUDAHOSTCXX is CMake's host compiler: passed as -ccbin. */
        fx_write(root, "bin/g++-13",
                 "#!/bin/sh\necho '#define __GNUC__ 13'\necho '#define __GNUC_MINOR__ 4'\n"
                 "echo '#define __GNUC_PATCHLEVEL__ 0'\necho '#define __VERSION__ \"13.4.0\"'\n");
        ck_assert(chmod(gxx, 0755) == 0);
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_set(&e, "CUDAHOSTCXX", gxx);
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        f = ASSERT_FINDING(&r, BUILD_GLIBC_MATH, "sinpi");
        ck_assert(f->fatal);
        ck_assert_msg(strstr(f->what, "CUDA " BUILD_GLIBC_FIXED_CUDA " fixed it") && strstr(f->what, "glibc "),
                      "%s", f->what);
        ck_assert_msg(strstr(f->fix, "CUDA " BUILD_GLIBC_FIXED_CUDA " or newer") && strstr(f->fix, "glibc older"),
                      "%s", f->fix);
        ck_assert_str_eq(r.compile.state, "failed");
        ck_assert_str_eq(r.c[BUILD_NVCC].verdict, "fatal");
        ck_assert_str_eq(r.c[BUILD_TOOLKIT].verdict, "fatal");
        ck_assert_uint_eq(r.n_findings, 1);
        {
                _cleanup_free_ char *args_path = at(CUDA12 "/nvcc.args");
                _cleanup_strbuf_ struct strbuf args = STRBUF_INIT;
                _cleanup_free_ char *want = xasprintf("-ccbin %s -c probe.cu -o probe.o", gxx);

                ck_assert_int_eq(file_read_regular_at(AT_FDCWD, args_path, NULL, 4096, false, &args, NULL), 0);
                ck_assert_msg(strstr(args.buf, want), "nvcc ran with '%s', want '%s'", args.buf, want);
        }
        build_report_release(&r);

        /* Another error: a cuda-compile finding with nvcc's first lines. */
        failing_nvcc(CUDA12, "probe.cu(1): catastrophic error: cannot open source file \"cuda_runtime.h\"\n");
        run_build(&e, NULL, &r);
        f = ASSERT_FINDING(&r, BUILD_CUDA_COMPILE, "cannot open source file");
        ck_assert(f->fatal);
        ck_assert(!finding(&r, BUILD_GLIBC_MATH, NULL));
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* The toolkits' nvcc scripts compile nothing and exit 0: the probe passes.
 * Without the compile (--no-compile), glibc >= 2.41 with a CUDA before
 * 13.0 is the prediction. */
START_TEST(glibc_predicted_from_versions)
{
        struct build_report r;
        struct env e;
        const struct doctor_finding *f;

        tree();
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        ck_assert_str_eq(r.compile.state, "passed");
        ck_assert_uint_eq(r.n_findings, 0);
        build_report_release(&r);

        run_build_predict(&e, "2.41", &r);
        ck_assert_str_eq(r.compile.state, "not run");
        f = ASSERT_FINDING(&r, BUILD_GLIBC_MATH, "predicted from the versions");
        ck_assert(f->fatal);
        ck_assert_msg(strstr(f->what, "glibc 2.41") && strstr(f->what, "CUDA 12.4"), "%s", f->what);
        build_report_release(&r);

        run_build_predict(&e, "2.36", &r);
        ck_assert(!finding(&r, BUILD_GLIBC_MATH, NULL));
        build_report_release(&r);
        strv_release(&e.items);

        env_init(&e);
        env_cuda(&e, CUDA13, "cuda/13.0");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build_predict(&e, "2.41", &r);
        ck_assert(!finding(&r, BUILD_GLIBC_MATH, NULL));
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

/* The real CUDA 13.0 of this project's machines, when there: its nvcc
 * compiles the probe with the system's gcc (bookworm: glibc 2.36). */
START_TEST(compile_with_real_cuda13)
{
        struct build_report r;
        struct env e;

        if (access("/usr/local/cuda-13.0/bin/nvcc", X_OK) < 0)
                return;
        tree();
        env_init(&e);
        env_set(&e, "PATH", "/usr/local/cuda-13.0/bin:/usr/bin:/bin");
        env_set(&e, "CUDA_HOME", "/usr/local/cuda-13.0");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build(&e, NULL, &r);
        {
                _cleanup_free_ char *d = dump(&r);

                ck_assert_msg(streq(r.compile.state, "passed"), "probe %s: %s\n%s", r.compile.state,
                              r.compile.why ? r.compile.why : "", d);
                ck_assert_msg(!finding(&r, BUILD_CUDA_COMPILE, NULL) && !finding(&r, BUILD_GLIBC_MATH, NULL), "%s", d);
                ck_assert_str_eq(r.c[BUILD_NVCC].verdict, "on");
        }
        /* Its CUB is in include/cccl/cub (no include/cub): PyTorch 2.6's
         * configure stops with "Cannot find CUB.". */
        {
                const struct doctor_finding *f = ASSERT_FINDING(&r, BUILD_NO_CUB, "'/usr/local/cuda-13.0'");

                ck_assert(f->fatal && strstr(f->what, "include/cccl/cub"));
                ck_assert_str_eq(r.c[BUILD_TOOLKIT].verdict, "fatal");
        }
        build_report_release(&r);

        /* The command: exit 3, the finding fatal in the JSON. */
        {
                struct run_result rr;
                json_t *doc, *f = NULL, *fs;
                json_error_t jerr;
                size_t i;

                strv_add(&e.items, "LC_ALL=C");
                run_program(&rr, root,
                            (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", "--json", "--no-compile",
                                                   NULL },
                            (const char *const *)e.items.items);
                ck_assert_msg(rr.status == 3, "exit %d: %s%s", rr.status, rr.out, rr.err);
                doc = json_loads(rr.out, 0, &jerr);
                ck_assert_msg(doc, "not JSON (%s): %s", jerr.text, rr.out);
                ck_assert_str_eq(json_string_value(json_object_get(doc, "status")), "fatal");
                json_array_foreach(json_object_get(doc, "findings"), i, fs)
                        if (streq(json_string_value(json_object_get(fs, "id")), "no-cub"))
                                f = fs;
                ck_assert_msg(f, "no no-cub finding: %s", rr.out);
                ck_assert_str_eq(json_string_value(json_object_get(f, "severity")), "fatal");
                ck_assert_str_eq(json_string_value(json_object_get(
                                         json_array_get(json_object_get(doc, "components"), BUILD_TOOLKIT), "verdict")),
                                 "fatal");
                json_decref(doc);
                run_result_release(&rr);
        }
        strv_release(&e.items);
}
END_TEST

/* --- the command ------------------------------------------------------------------------------------------------------ */

START_TEST(command_exit_status_and_json)
{
        struct env e;
        struct run_result r;
        _cleanup_free_ char *test_root = xasprintf("CUDAMOD_TEST_ROOT=%s", root);
        json_t *doc;
        json_error_t jerr;

        tree();
        usr_local_cuda();
        env_init(&e);
        env_cuda(&e, CUDA11, "cuda/11.8");
        env_others_off(&e);
        strv_add(&e.items, test_root);
        strv_add(&e.items, "LC_ALL=C");
        run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", "--json", NULL },
                    (const char *const *)e.items.items);
        ck_assert_msg(r.status == 1, "exit %d: %s%s", r.status, r.out, r.err);
        doc = json_loads(r.out, 0, &jerr);
        ck_assert_msg(doc, "not JSON (%s): %s", jerr.text, r.out);
        ck_assert_str_eq(json_string_value(json_object_get(doc, "mode")), "build");
        ck_assert_str_eq(json_string_value(json_object_get(doc, "status")), "problems");
        ck_assert_uint_eq(json_array_size(json_object_get(doc, "components")), N_BUILD);
        {
                json_t *cudnn = json_array_get(json_object_get(doc, "components"), build_row(&component_cudnn));
                json_t *lib = json_object_get(cudnn, "library");

                ck_assert_str_eq(json_string_value(json_object_get(cudnn, "name")), "cudnn");
                ck_assert_int_eq(json_integer_value(json_object_get(cudnn, "cuda_major")), 13);
                ck_assert_str_eq(json_string_value(json_object_get(lib, "from")), "default /usr/local + cuda/lib64");
                ck_assert(json_is_true(json_object_get(lib, "default")));
        }
        {
                json_t *x = json_object_get(doc, "cpp_extension");
                _cleanup_free_ char *home = at(CUDA11), *nvcc = at(CUDA11 "/bin/nvcc");

                ck_assert_str_eq(json_string_value(json_object_get(x, "cuda_home")), home);
                ck_assert_str_eq(json_string_value(json_object_get(x, "from")), "CUDA_HOME");
                ck_assert_str_eq(json_string_value(json_object_get(x, "nvcc")), nvcc);
                ck_assert(json_is_null(json_object_get(x, "ccbin")));
                ck_assert_str_eq(json_string_value(json_object_get(x, "cxx")), "c++");
        }
        json_decref(doc);
        run_result_release(&r);

        /* The text report; exit 0 when nothing is wrong. */
        run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", NULL },
                    (const char *const *)e.items.items);
        ck_assert_msg(r.status == 1 && strstr(r.out, "default /usr/local + cuda/lib64") &&
                              strstr(r.out, "[cuda-major]") && strstr(r.out, "USE_CUDNN=0"),
                      "exit %d: %s%s", r.status, r.out, r.err);
        run_result_release(&r);
        strv_add(&e.items, "USE_CUDNN=0");
        run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", NULL },
                    (const char *const *)e.items.items);
        ck_assert_msg(r.status == 0 && strstr(r.out, "nothing wrong found"), "exit %d: %s%s", r.status, r.out, r.err);
        run_result_release(&r);

        /* TORCH_CUDA_ARCH_LIST: unset (the fixture's root shows no GPU), a
         * warning whose fix is the site config's list; not PyTorch's
         * syntax, fatal. */
        {
                _cleanup_free_ char *site = at("site.yaml");
                struct env a = { 0 };
                json_t *f;

                fx_write(root, "site.yaml", "pytorch:\n  cuda_arch_list: '8.0;9.0'\n");
                for (size_t i = 0; i < e.items.len; i++)
                        strv_add(&a.items, e.items.items[i]);
                env_unset(&a, "TORCH_CUDA_ARCH_LIST");
                run_program(&r, root,
                            (const char *const[]){ getenv("CUDAMOD_BIN"), "--config", site, "doctor", "--build",
                                                   "--json", NULL },
                            (const char *const *)a.items.items);
                ck_assert_msg(r.status == 1, "exit %d: %s%s", r.status, r.out, r.err);
                doc = json_loads(r.out, 0, &jerr);
                ck_assert_msg(doc, "not JSON (%s): %s", jerr.text, r.out);
                f = json_array_get(json_object_get(doc, "findings"), 0);
                ck_assert_str_eq(json_string_value(json_object_get(f, "id")), "arch-list-unset");
                ck_assert_str_eq(json_string_value(json_object_get(f, "severity")), "warning");
                ck_assert_str_eq(json_string_value(json_object_get(f, "fix")),
                                 "export TORCH_CUDA_ARCH_LIST=\"8.0;9.0\" (the site config's pytorch.cuda_arch_list)");
                json_decref(doc);
                run_result_release(&r);
                strv_add(&a.items, "TORCH_CUDA_ARCH_LIST=sm_80");
                run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", "--json", NULL },
                            (const char *const *)a.items.items);
                ck_assert_msg(r.status == 3, "exit %d: %s%s", r.status, r.out, r.err);
                doc = json_loads(r.out, 0, &jerr);
                ck_assert_msg(doc, "not JSON (%s): %s", jerr.text, r.out);
                f = json_array_get(json_object_get(doc, "findings"), 0);
                ck_assert_str_eq(json_string_value(json_object_get(f, "id")), "arch-list");
                ck_assert_str_eq(json_string_value(json_object_get(f, "severity")), "fatal");
                ck_assert_str_eq(json_string_value(json_object_get(doc, "status")), "fatal");
                json_decref(doc);
                run_result_release(&r);
                strv_release(&a.items);
        }

        /* USE_SYSTEM_NCCL with no NCCL: the configure stops, exit 3. */
        strv_add(&e.items, "USE_SYSTEM_NCCL=1");
        run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", "--json", NULL },
                    (const char *const *)e.items.items);
        ck_assert_msg(r.status == 3, "exit %d: %s%s", r.status, r.out, r.err);
        doc = json_loads(r.out, 0, &jerr);
        ck_assert_msg(doc, "not JSON (%s): %s", jerr.text, r.out);
        ck_assert_str_eq(json_string_value(json_object_get(doc, "status")), "fatal");
        {
                json_t *nccl = json_array_get(json_object_get(doc, "components"), build_row(&component_nccl));
                json_t *f = json_array_get(json_object_get(doc, "findings"), 0);
                json_t *tk = json_array_get(json_object_get(doc, "components"), BUILD_TOOLKIT);
                _cleanup_free_ char *prefix = at(CUDA11);

                ck_assert_str_eq(json_string_value(json_object_get(nccl, "verdict")), "fatal");
                ck_assert(json_is_null(json_object_get(nccl, "pick")));
                ck_assert_str_eq(json_string_value(json_object_get(f, "id")), "required-missing");
                ck_assert_str_eq(json_string_value(json_object_get(f, "severity")), "fatal");
                ck_assert_str_eq(json_string_value(json_object_get(tk, "verdict")), "on");
                ck_assert_str_eq(json_string_value(json_object_get(json_object_get(tk, "pick"), "path")), prefix);
                ck_assert_str_eq(json_string_value(json_object_get(json_object_get(tk, "pick"), "version")), "11.8");
                ck_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "compile"), "state")),
                                 "passed");
        }
        json_decref(doc);
        run_result_release(&r);
        run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", NULL },
                    (const char *const *)e.items.items);
        ck_assert_msg(r.status == 3 && strstr(r.out, "[fatal required-missing]") && strstr(r.out, "1 fatal"),
                      "exit %d: %s%s", r.status, r.out, r.err);
        run_result_release(&r);
        strv_release(&e.items);

        /* A cuDNN of the toolkit's major only in /usr: a note, exit 0
         * (no /usr/local/cuda, whose cuDNN for CUDA 13 comes first). */
        {
                _cleanup_free_ char *deblib = xasprintf("lib/%s", arch), *link = at("usr/local/cuda");

                ck_assert_int_eq(unlink(link), 0);

                fx_cudnn(root, "usr", &(struct fx_cudnn){ .version = "9.1.0", .cuda_major = 12, .lib = deblib });
        }
        env_init(&e);
        env_cuda(&e, CUDA12, "cuda/12.4");
        env_others_off(&e);
        strv_add(&e.items, test_root);
        strv_add(&e.items, "LC_ALL=C");
        run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", NULL },
                    (const char *const *)e.items.items);
        ck_assert_msg(r.status == 0 && strstr(r.out, "\nnotes\n") &&
                              strstr(r.out, "nothing wrong found"),
                      "exit %d: %s%s", r.status, r.out, r.err);
        run_result_release(&r);

        /* --no-compile goes with --build only. */
        run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--no-compile", "/x", NULL },
                    (const char *const *)e.items.items);
        ck_assert_msg(r.status == 2, "exit %d: %s%s", r.status, r.out, r.err);
        run_result_release(&r);

        /* A PATH with --build: usage error. */
        run_program(&r, root, (const char *const[]){ getenv("CUDAMOD_BIN"), "doctor", "--build", "/x", NULL },
                    (const char *const *)e.items.items);
        ck_assert_msg(r.status == 2 && !*r.out, "exit %d: %s%s", r.status, r.out, r.err);
        run_result_release(&r);
        strv_release(&e.items);
}
END_TEST

/* --- torch.utils.cpp_extension -------------------------------------------------------------------------------------- */

/* The note about cpp_extension's CUDA_HOME, or NULL. */
static const char *cpp_extension_note(const struct build_report *r)
{
        for (size_t i = 0; i < r->notes.len; i++)
                if (strstr(r->notes.items[i], "torch.utils.cpp_extension"))
                        return r->notes.items[i];
        return NULL;
}

/* r->cpp_extension: cuda_home (below root; NULL: none), its from, nvcc,
 * ccbin and cxx as they are. */
static void assert_cpp_extension(const struct build_report *r, const char *home, const char *from, const char *nvcc,
                                 const char *ccbin, const char *cxx)
{
        const struct build_cpp_extension *x = &r->cpp_extension;
        _cleanup_free_ char *want = home ? (home[0] == '/' || !*home ? xstrdup(home) : at(home)) : NULL, *d = dump(r);

        ck_assert_msg(want ? x->cuda_home && streq(x->cuda_home, want) : !x->cuda_home,
                      "cuda_home '%s', expected '%s':\n%s", x->cuda_home ? x->cuda_home : "(null)",
                      want ? want : "(null)", d);
        ck_assert_msg(from ? x->from && streq(x->from, from) : !x->from, "from '%s', expected '%s'",
                      x->from ? x->from : "(null)", from ? from : "(null)");
        ck_assert_msg(nvcc ? x->nvcc && streq(x->nvcc, nvcc) : !x->nvcc, "nvcc '%s', expected '%s'",
                      x->nvcc ? x->nvcc : "(null)", nvcc ? nvcc : "(null)");
        ck_assert_msg(ccbin ? x->ccbin && streq(x->ccbin, ccbin) : !x->ccbin, "ccbin '%s', expected '%s'",
                      x->ccbin ? x->ccbin : "(null)", ccbin ? ccbin : "(null)");
        ck_assert_str_eq(x->cxx, cxx);
}

/* PyTorch 2.6's torch/utils/cpp_extension.py: _find_cuda_home() takes
 * `os.environ.get('CUDA_HOME') or os.environ.get('CUDA_PATH')`, else the
 * directory above shutil.which("nvcc")'s bin, else /usr/local/cuda if it
 * exists; build.ninja's nvcc is $PYTORCH_NVCC, else CUDA_HOME/bin/nvcc;
 * its CUDA flags get `-ccbin $CC` when CC is set; the C++ compiler is
 * get_cxx_compiler(): CXX, else c++. */
START_TEST(cpp_extension_rules)
{
        struct build_report r;
        struct env e;
        _cleanup_free_ char *nvcc12 = at(CUDA12 "/bin/nvcc");

        tree();
        /* CUDA_HOME first, though CUDA_PATH (which the configure takes)
         * and PATH say other toolkits: a note, not a finding. */
        env_init(&e);
        env_dirs(&e, "PATH", (const char *const[]){ CUDA11 "/bin", NULL }, "/usr/bin:/bin");
        env_dir(&e, "CUDA_HOME", CUDA12);
        env_dir(&e, "CUDA_PATH", CUDA13);
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build_predict(&e, "2.36", &r);
        assert_cpp_extension(&r, CUDA12, "CUDA_HOME", nvcc12, NULL, "c++");
        {
                _cleanup_free_ char *d = dump(&r), *home = at(CUDA12), *cmake = at(CUDA13);
                _cleanup_free_ char *want = xasprintf("torch.utils.cpp_extension would use CUDA_HOME=%s (from "
                                                      "CUDA_HOME) where the configure uses %s (from CUDA_PATH)",
                                                      home, cmake);
                const char *note = cpp_extension_note(&r);

                ck_assert_msg(note && streq(note, want), "expected the note '%s':\n%s", want, d);
        }
        build_report_release(&r);
        strv_release(&e.items);

        /* An empty CUDA_HOME gives way to CUDA_PATH; the configure takes
         * the same toolkit: no note. PYTORCH_NVCC is build.ninja's nvcc;
         * CC is -ccbin, CXX the C++ compiler, as they are. */
        env_init(&e);
        env_dirs(&e, "PATH", (const char *const[]){ CUDA11 "/bin", NULL }, "/usr/bin:/bin");
        env_set(&e, "CUDA_HOME", "");
        env_dir(&e, "CUDA_PATH", CUDA13);
        env_set(&e, "PYTORCH_NVCC", "ccache-nvcc");
        env_set(&e, "CC", "gcc-12");
        env_set(&e, "CXX", "/usr/bin/g++-12");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build_predict(&e, "2.36", &r);
        assert_cpp_extension(&r, CUDA13, "CUDA_PATH", "ccache-nvcc", "gcc-12", "/usr/bin/g++-12");
        ck_assert_msg(!cpp_extension_note(&r), "%s", cpp_extension_note(&r));
        build_report_release(&r);
        strv_release(&e.items);

        /* Only nvcc on PATH: shutil.which skips a directory named nvcc
         * and a file that is not executable, keeps the entry as it is
         * (a trailing slash), and the toolkit is two dirname()s up. An
         * empty CC is still passed (`-ccbin ''`). */
        fx_mkdir(root, "x/nvcc");
        fx_write(root, "y/nvcc", "not a program\n");
        {
                _cleanup_free_ char *x = at("x"), *y = at("y"), *bin = at(CUDA12 "/bin/");
                _cleanup_free_ char *path = xasprintf("%s:%s:%s:/usr/bin:/bin", x, y, bin);

                env_init(&e);
                env_set(&e, "PATH", path);
        }
        env_set(&e, "CC", "");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build_predict(&e, "2.36", &r);
        assert_cpp_extension(&r, CUDA12, "PATH", nvcc12, "", "c++");
        ck_assert_str_eq(r.c[BUILD_TOOLKIT].prefix, r.cpp_extension.cuda_home);
        ck_assert_msg(!cpp_extension_note(&r), "%s", cpp_extension_note(&r));
        build_report_release(&r);
        /* An empty CUDA_PATH is taken (`"" or ""` is ""), nvcc on PATH
         * is not looked for, and build.ninja's nvcc is relative. */
        env_set(&e, "CUDA_PATH", "");
        run_build_predict(&e, "2.36", &r);
        assert_cpp_extension(&r, "", "CUDA_PATH", "bin/nvcc", "", "c++");
        build_report_release(&r);
        strv_release(&e.items);

        /* Nothing: no CUDA_HOME (and a note: the configure's
         * /usr/local/bin/nvcc is not cpp_extension's); then
         * /usr/local/cuda, under the root. */
        if (access("/usr/bin/nvcc", F_OK) == 0 || access("/bin/nvcc", F_OK) == 0)
                return; /* this host has an nvcc on the bare PATH */
        env_init(&e);
        env_set(&e, "PATH", "/usr/bin:/bin");
        env_set(&e, "USE_CUDNN", "0");
        env_others_off(&e);
        run_build_predict(&e, "2.36", &r);
        assert_cpp_extension(&r, NULL, NULL, NULL, NULL, "c++");
        ck_assert_msg(!cpp_extension_note(&r), "%s", cpp_extension_note(&r));
        build_report_release(&r);
        /* FindCUDA reads CUDA_TOOLKIT_ROOT, cpp_extension does not. */
        {
                _cleanup_free_ char *tk = at(CUDA13), *want = xasprintf(
                        "torch.utils.cpp_extension would use no CUDA_HOME (none in CUDA_HOME, CUDA_PATH, nvcc on PATH "
                        "nor /usr/local/cuda) where the configure uses %s (from CUDA_TOOLKIT_ROOT)", tk);
                struct env e2;

                env_init(&e2);
                for (size_t i = 1; i < e.items.len; i++)
                        strv_add(&e2.items, e.items.items[i]);
                env_set(&e2, "CUDA_TOOLKIT_ROOT", tk);
                run_build_predict(&e2, "2.36", &r);
                assert_cpp_extension(&r, NULL, NULL, NULL, NULL, "c++");
                ck_assert_msg(cpp_extension_note(&r) && streq(cpp_extension_note(&r), want), "'%s', expected '%s'",
                              cpp_extension_note(&r) ? cpp_extension_note(&r) : "(none)", want);
                build_report_release(&r);
                strv_release(&e2.items);
        }
        usr_local_cuda();
        run_build_predict(&e, "2.36", &r);
        {
                _cleanup_free_ char *nvcc = at("usr/local/cuda/bin/nvcc");

                assert_cpp_extension(&r, "usr/local/cuda", "/usr/local/cuda", nvcc, NULL, "c++");
                ck_assert_msg(!cpp_extension_note(&r), "%s", cpp_extension_note(&r));
        }
        build_report_release(&r);
        /* USE_CUDA=0: cpp_extension is still said, no note. */
        env_set(&e, "USE_CUDA", "0");
        env_set(&e, "CUDA_HOME", "/nonexistent");
        run_build_predict(&e, "2.36", &r);
        assert_cpp_extension(&r, "/nonexistent", "CUDA_HOME", "/nonexistent/bin/nvcc", NULL, "c++");
        ck_assert_msg(!cpp_extension_note(&r), "%s", cpp_extension_note(&r));
        build_report_release(&r);
        strv_release(&e.items);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("doctor-build");
        TCase *tc = tcase_create("emulation");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, everything_loaded);
        tcase_add_test(tc, cuda_only);
        tcase_add_test(tc, cusparselt_runtime_only);
        tcase_add_test(tc, cuda11_cudnn_in_usr_local_cuda);
        tcase_add_test(tc, nvshmem_cuda_major_from_its_spec_json);
        tcase_add_test(tc, cudnn_header_and_library_apart);
        tcase_add_test(tc, cudnn_only_in_system_dirs);
        tcase_add_test(tc, cudnn_root_by_hand);
        tcase_add_test(tc, nccl_through_cmake_prefix_path);
        tcase_add_test(tc, nvcc_of_another_toolkit);
        tcase_add_test(tc, nothing_loaded);
        tcase_add_test(tc, host_compiler_refused);
        tcase_add_test(tc, stubs_on_ld_library_path);
        tcase_add_test(tc, system_nccl_missing_is_fatal);
        tcase_add_test(tc, compile_fails_with_glibc_clash);
        tcase_add_test(tc, glibc_predicted_from_versions);
        tcase_add_test(tc, compile_with_real_cuda13);
        tcase_add_test(tc, command_exit_status_and_json);
        tcase_add_test(tc, cpp_extension_rules);
        tcase_add_test(tc, arch_list_unset_without_gpu);
        tcase_add_test(tc, arch_list_rejected_or_malformed);
        tcase_add_test(tc, arch_list_from_nvcc);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(suite());
}
