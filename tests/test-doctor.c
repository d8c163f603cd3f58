/* test-doctor.c: `cudamod doctor`'s diagnosis of a fake source-built torch
 * (tests/fixture.h fx_torch) against module-style CUDA, cuDNN and NCCL
 * trees: a healthy environment reports nothing, each failure of PYTORCH.md
 * §3 it looks for is found (and would be missed without its detection),
 * including the cuDNN/NCCL older than the build (R2, R8) when the RUNPATH
 * tells what it was built against; the suggestions pick one consistent set
 * of modules; the input forms; torch/version.py.
 *
 * Every case passes an explicit environment and a missing loader cache, so
 * that the host's CUDA (its /etc/ld.so.cache, its nvcc) never takes part. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "component-cudnn.h"
#include "component-nccl.h"
#include "doctor.h"
#include "fixture.h"
#include "layouts.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "banned.h"

#define WORDS(...) ((const char *const[]){ __VA_ARGS__, NULL })

#define TORCH "site-packages/torch"
#define CUDA12 "sw/cuda/12.4"
#define CUDA12_LIB "sw/cuda/12.4/targets/x86_64-linux/lib"
#define CUDA12_STUBS "sw/cuda/12.4/targets/x86_64-linux/lib/stubs"
#define CUDA13 "sw/cuda/13.0"
#define CUDA13_LIB "sw/cuda/13.0/targets/x86_64-linux/lib"
#define CUDNN91 "sw/cudnn/9.1.0"
#define CUDNN91_LIB "sw/cudnn/9.1.0/lib"
#define CUDNN97 "sw/cudnn/9.7.1"
#define CUDNN97_LIB "sw/cudnn/9.7.1/lib"
#define NCCL "sw/nccl/2.21.5"
#define NCCL_LIB "sw/nccl/2.21.5/lib"
#define GIT_VERSION "a8d6afb511a69687bbb2b7e88a3cf67917e1697e"

static char *root;

static void setup(void)
{
        root = fx_new();
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

/* --- the trees ------------------------------------------------------------ */

static void cuda12(void)
{
        fx_cuda_toolkit(root, CUDA12,
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131", .cusparse = true });
}

static void cuda13(void)
{
        fx_cuda_toolkit(root, CUDA13,
                        &(struct fx_cuda){ .version = "13.0", .release = "13.0.2", .cudart = "13.0.96",
                                           .nvcc = "13.0.88", .cusparse = true });
}

static void cudnn(const char *prefix, const char *version, unsigned cuda_major)
{
        fx_cudnn(root, prefix, &(struct fx_cudnn){ .version = version, .cuda_major = cuda_major });
}

static void nccl_at(const char *prefix, const char *version, const char *cuda)
{
        fx_nccl(root, prefix, &(struct fx_nccl){ .version = version, .cuda = cuda });
}

static void nccl(const char *cuda)
{
        nccl_at(NCCL, "2.21.5", cuda);
}

/* torch 2.5.1 for CUDA 12.4 with cuDNN 9, NCCL and cuSPARSE; runpath as
 * fx_torch's (may be NULL). */
static void torch(const char *runpath)
{
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .cusparse = true,
                                     .runpath = runpath });
}

/* Everything the healthy case has: torch, CUDA 12.4, cuDNN 9.1.0 (cu12),
 * NCCL 2.21.5+cuda12.4. */
static void healthy_tree(void)
{
        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        torch(NULL);
}

/* --- the environment -------------------------------------------------------- */

struct env {
        struct strv items;
};

static void env_init(struct env *e)
{
        *e = (struct env){ 0 };
        /* Never empty: doctor reads the process's environment for NULL. */
        strv_push(&e->items, xasprintf("HOME=%s", root));
}

static void env_release(struct env *e)
{
        strv_release(&e->items);
}

static void env_set(struct env *e, const char *name, const char *value)
{
        strv_push(&e->items, xasprintf("%s=%s", name, value));
}

/* NAME=the directories below root, ':'-separated. */
static void env_dirs(struct env *e, const char *name, const char *const *rels)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        for (; *rels; rels++) {
                _cleanup_free_ char *p = at(*rels);
                if (sb.len)
                        strbuf_addch(&sb, ':');
                strbuf_addstr(&sb, p);
        }
        env_set(e, name, sb.buf);
}

/* LD_LIBRARY_PATH = the directories; CUDA_HOME = cuda_home (NULL: unset). */
static void env_make(struct env *e, const char *const *llp, const char *cuda_home)
{
        env_init(e);
        if (llp)
                env_dirs(e, "LD_LIBRARY_PATH", llp);
        if (cuda_home) {
                _cleanup_free_ char *p = at(cuda_home);
                env_set(e, "CUDA_HOME", p);
        }
}

/* The healthy environment: NCCL, cuDNN 9.1.0 and CUDA 12.4 libraries on
 * LD_LIBRARY_PATH, CUDA_HOME the 12.4 toolkit. */
#define HEALTHY_LLP WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB)

static void env_healthy(struct env *e)
{
        env_make(e, HEALTHY_LLP, CUDA12);
}

/* --- running doctor ------------------------------------------------------------ */

/* Every finding and note, for the failure messages. */
static char *dump(const struct doctor_report *r)
{
        struct strbuf sb = STRBUF_INIT;

        strbuf_addf(&sb, "%zu finding(s):\n", r->n_findings);
        for (size_t i = 0; i < r->n_findings; i++) {
                const struct doctor_finding *f = &r->findings[i];
                strbuf_addf(&sb, "  [%s %s] what: %s\n      why: %s\n      fix: %s\n", f->id,
                            f->ref ? f->ref : "-", f->what ? f->what : "(null)", f->why ? f->why : "(null)",
                            f->fix ? f->fix : "(null)");
        }
        for (size_t i = 0; i < r->notes.len; i++)
                strbuf_addf(&sb, "  note: %s\n", r->notes.items[i]);
        for (size_t i = 0; i < r->n_libs; i++) {
                const struct doctor_library *l = &r->libs[i];
                strbuf_addf(&sb, "  lib %s\n", l->path);
                for (size_t j = 0; j < l->n_needs; j++)
                        strbuf_addf(&sb, "    %s -> %s (%s)\n", l->needs[j].soname,
                                    l->needs[j].path ? l->needs[j].path : "-",
                                    resolve_source_to_string(l->needs[j].source));
        }
        return strbuf_detach(&sb);
}

/* Run doctor on the path below root (or absolute) with e and modulepath mp
 * (may be NULL), asserting success. */
static void diagnose(const struct env *e, const struct strv *mp, const char *path,
                     struct doctor_report *r)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *p = path[0] == '/' ? xstrdup(path) : at(path);
        struct doctor_options o = {
                .environ = e->items.items, .ldcache = "/nonexistent", .modulepath = mp,
        };
        int ret;

        *r = (struct doctor_report){ 0 };
        ret = doctor_run(&o, (char *[]){ p }, 1, r, &d);
        ck_assert_msg(ret == 0, "doctor_run '%s': %d (%s)", p, ret, d.message ? d.message : "no message");
}

static bool contains_ci(const char *haystack, const char *needle)
{
        size_t n = strlen(needle);

        if (!haystack)
                return false;
        for (; *haystack; haystack++) {
                size_t i = 0;
                while (i < n && haystack[i] && ascii_tolower(haystack[i]) == ascii_tolower(needle[i]))
                        i++;
                if (i == n)
                        return true;
        }
        return n == 0;
}

/* what, why and fix of f, one string. */
static char *finding_text(const struct doctor_finding *f)
{
        return xasprintf("%s\n%s\n%s", f->what ? f->what : "", f->why ? f->why : "", f->fix ? f->fix : "");
}

/* The first finding with this id whose text holds word (NULL: any), or NULL. */
static const struct doctor_finding *find_finding(const struct doctor_report *r, const char *id,
                                                 const char *word)
{
        for (size_t i = 0; i < r->n_findings; i++) {
                _cleanup_free_ char *text = NULL;

                if (!streq(r->findings[i].id, id))
                        continue;
                text = finding_text(&r->findings[i]);
                if (!word || strstr(text, word))
                        return &r->findings[i];
        }
        return NULL;
}

/* Assert a finding with this id whose what holds what_word (NULL: any);
 * that its ref is one of refs ('|'-separated; NULL: not checked); that
 * what, why and fix are non-empty; and that its text holds each of words
 * (case-insensitively). Returns it. */
static const struct doctor_finding *assert_finding(const struct doctor_report *r, const char *id,
                                                   const char *refs, const char *what_word,
                                                   const char *const *words)
{
        const struct doctor_finding *f = NULL;
        _cleanup_free_ char *text = NULL;

        for (size_t i = 0; i < r->n_findings && !f; i++)
                if (streq(r->findings[i].id, id) &&
                    (!what_word || (r->findings[i].what && strstr(r->findings[i].what, what_word))))
                        f = &r->findings[i];
        ck_assert_msg(f != NULL, "no '%s' finding whose what names '%s'; the report:\n%s", id,
                      what_word ? what_word : "", dump(r));
        ck_assert_msg(f->what && *f->what && f->why && *f->why && f->fix && *f->fix,
                      "'%s' finding with an empty what, why or fix:\n%s", id, dump(r));
        if (refs) {
                _cleanup_free_ char *bars = xasprintf("|%s|", refs);
                _cleanup_free_ char *ref = xasprintf("|%s|", f->ref ? f->ref : "(null)");
                ck_assert_msg(strstr(bars, ref) != NULL, "'%s' finding has ref %s, not %s:\n%s", id,
                              f->ref ? f->ref : "NULL", refs, dump(r));
        }
        text = finding_text(f);
        for (; words && *words; words++)
                ck_assert_msg(contains_ci(text, *words), "'%s' finding does not name '%s':\n%s", id, *words,
                              dump(r));
        return f;
}

/* The finding of assert_finding, in a report of TORCH diagnosed with
 * LD_LIBRARY_PATH llp (may be NULL) and CUDA_HOME cuda_home (may be NULL). */
static void expect_finding(const char *const *llp, const char *cuda_home, const char *id, const char *refs,
                           const char *what_word, const char *const *words)
{
        struct env e;
        struct doctor_report r;

        env_make(&e, llp, cuda_home);
        diagnose(&e, NULL, TORCH, &r);
        assert_finding(&r, id, refs, what_word, words);
        doctor_report_release(&r);
        env_release(&e);
}

static void assert_no_finding(const struct doctor_report *r, const char *id)
{
        ck_assert_msg(find_finding(r, id, NULL) == NULL, "unexpected '%s' finding:\n%s", id, dump(r));
}

static void assert_no_findings(const struct doctor_report *r)
{
        ck_assert_msg(r->n_findings == 0, "expected no findings:\n%s", dump(r));
}

static const struct doctor_library *find_lib(const struct doctor_report *r, const char *name)
{
        for (size_t i = 0; i < r->n_libs; i++)
                if (streq(path_basename(r->libs[i].path), name))
                        return &r->libs[i];
        return NULL;
}

static const struct doctor_need *find_need(const struct doctor_library *l, const char *soname)
{
        for (size_t i = 0; i < l->n_needs; i++)
                if (streq(l->needs[i].soname, soname))
                        return &l->needs[i];
        return NULL;
}

/* Whether two paths name the same file or directory. */
static bool same_path(const char *a, const char *b)
{
        _cleanup_free_ char *ra = NULL, *rb = NULL;

        if (!a || !b)
                return false;
        ra = realpath(a, NULL);
        rb = realpath(b, NULL);
        return ra && rb ? streq(ra, rb) : streq(a, b);
}

static bool path_is_below(const char *path, const char *rel_dir)
{
        _cleanup_free_ char *dir = at(rel_dir), *parent = NULL;

        if (!path)
                return false;
        parent = path_dirname(path);
        return same_path(parent, dir);
}

static const struct doctor_module *find_module(const struct doctor_report *r, const char *name)
{
        for (size_t i = 0; i < r->n_modules; i++)
                if (streq(r->modules[i].module, name))
                        return &r->modules[i];
        return NULL;
}

/* --- healthy ---------------------------------------------------------------- */

START_TEST(healthy_source_build_reports_nothing)
{
        struct env e;
        struct doctor_report r;
        const struct doctor_library *cuda_lib;
        const struct doctor_need *n;
        _cleanup_free_ char *torch_dir = at(TORCH), *cuda_home = at(CUDA12);
        static const char *const libs[] = {
                "libc10.so", "libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so", "libtorch.so",
                "libtorch_global_deps.so", NULL,
        };

        healthy_tree();
        env_healthy(&e);
        env_set(&e, "LOADEDMODULES", "cuda/12.4:cudnn/9.1.0:nccl/2.21.5");
        diagnose(&e, NULL, TORCH, &r);

        assert_no_findings(&r);
        ck_assert_msg(same_path(r.torch_dir, torch_dir), "torch_dir %s", r.torch_dir ? r.torch_dir : "NULL");
        ck_assert_msg(r.built.torch_version && streq(r.built.torch_version, "2.5.1"), "version %s",
                      r.built.torch_version ? r.built.torch_version : "NULL");
        ck_assert_msg(r.built.git_version && streq(r.built.git_version, GIT_VERSION), "git_version %s",
                      r.built.git_version ? r.built.git_version : "NULL");
        ck_assert_msg(r.built.cuda && streq(r.built.cuda, "12.4"), "cuda %s", r.built.cuda ? r.built.cuda : "NULL");
        ck_assert_uint_eq(r.built.cuda_major, 12);
        for (const char *const *s = WORDS("libcudart.so.12", "libcublas.so.12", "libcudnn.so.9", "libnccl.so.2");
             *s; s++)
                ck_assert_msg(strv_contains(&r.built.sonames, *s), "built.sonames lacks %s", *s);
        ck_assert_msg(!strv_contains(&r.built.sonames, "libc10.so"), "built.sonames holds torch's own libc10.so");

        for (const char *const *l = libs; *l; l++)
                ck_assert_msg(find_lib(&r, *l) != NULL, "%s not in libs:\n%s", *l, dump(&r));
        cuda_lib = find_lib(&r, "libtorch_cuda.so");
        ck_assert_msg(cuda_lib->runpath && streq(cuda_lib->runpath, "$ORIGIN"), "runpath %s",
                      cuda_lib->runpath ? cuda_lib->runpath : "NULL");
        ck_assert_ptr_null(cuda_lib->rpath);

        n = find_need(cuda_lib, "libcudart.so.12");
        ck_assert_msg(n && n->source == RESOLVE_LD_LIBRARY_PATH && path_is_below(n->path, CUDA12_LIB),
                      "libcudart.so.12:\n%s", dump(&r));
        ck_assert(!n->driver);
        n = find_need(cuda_lib, "libcudnn.so.9");
        ck_assert_msg(n && n->source == RESOLVE_LD_LIBRARY_PATH && path_is_below(n->path, CUDNN91_LIB),
                      "libcudnn.so.9:\n%s", dump(&r));
        n = find_need(cuda_lib, "libc10.so");
        ck_assert_msg(n && n->source == RESOLVE_RUNPATH && path_is_below(n->path, TORCH "/lib"),
                      "libc10.so:\n%s", dump(&r));
        n = find_need(cuda_lib, "libcuda.so.1");
        ck_assert_msg(n && n->driver, "libcuda.so.1 is not a driver need:\n%s", dump(&r));
        ck_assert_msg(cuda_lib->n_needs == 10, "libtorch_cuda.so has %zu needs:\n%s", cuda_lib->n_needs,
                      dump(&r));
        ck_assert_str_eq(cuda_lib->needs[0].soname, "libc10.so");

        ck_assert_uint_eq(r.ld_library_path.len, 3);
        ck_assert_uint_eq(r.loaded.len, 3);
        ck_assert_str_eq(r.loaded.items[1], "cudnn/9.1.0");
        ck_assert_msg(same_path(r.toolkit, cuda_home), "toolkit %s", r.toolkit ? r.toolkit : "NULL");
        ck_assert_msg(r.toolkit_source && streq(r.toolkit_source, "CUDA_HOME"), "toolkit_source %s",
                      r.toolkit_source ? r.toolkit_source : "NULL");
        ck_assert_msg(r.toolkit_version && streq(r.toolkit_version, "12.4"), "toolkit_version %s",
                      r.toolkit_version ? r.toolkit_version : "NULL");
        /* No modulepath: no suggestions. */
        ck_assert_uint_eq(r.n_modules, 0);
        ck_assert_uint_eq(r.chosen.len, 0);
        ck_assert_ptr_null(r.module_load);

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* The RUNPATH of a source build keeps the directories it was linked
 * against: they tell the cuDNN and NCCL versions it was built with. */
START_TEST(built_cudnn_and_nccl_versions_from_runpath)
{
        struct env e;
        struct doctor_report r;
        const struct doctor_need *n;

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        torch(CUDNN91_LIB ":" NCCL_LIB);
        env_make(&e, WORDS(CUDA12_LIB), CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        ck_assert_msg(r.built.linked[component_cudnn.index] && streq(r.built.linked[component_cudnn.index], "9.1.0"), "built.cudnn %s:\n%s",
                      r.built.linked[component_cudnn.index] ? r.built.linked[component_cudnn.index] : "NULL", dump(&r));
        ck_assert_msg(r.built.linked[component_nccl.index] && streq(r.built.linked[component_nccl.index], "2.21.5"), "built.nccl %s:\n%s",
                      r.built.linked[component_nccl.index] ? r.built.linked[component_nccl.index] : "NULL", dump(&r));
        n = find_need(find_lib(&r, "libtorch_cuda.so"), "libcudnn.so.9");
        ck_assert_msg(n && n->source == RESOLVE_RUNPATH, "libcudnn.so.9:\n%s", dump(&r));
        assert_no_finding(&r, DOCTOR_UNRESOLVED);

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(built_cuda_major_from_libcudart_without_version_py)
{
        struct env e;
        struct doctor_report r;

        cuda12();
        fx_torch(root, TORCH, &(struct fx_torch){ .cuda = "12.4", .no_version_py = true });
        env_make(&e, WORDS(CUDA12_LIB), CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        ck_assert_ptr_nonnull(r.torch_dir);
        ck_assert_ptr_null(r.built.cuda);
        ck_assert_ptr_null(r.built.torch_version);
        ck_assert_uint_eq(r.built.cuda_major, 12);
        ck_assert_msg(strv_contains(&r.built.sonames, "libcudart.so.12"), "%s", dump(&r));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- R1: unresolved ----------------------------------------------------------- */

START_TEST(unresolved_without_ld_library_path_is_r1)
{
        struct env e;
        struct doctor_report r;
        const struct doctor_need *n;

        healthy_tree();
        env_make(&e, NULL, CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        assert_finding(&r, DOCTOR_UNRESOLVED, "R1", "libcudart.so.12", NULL);
        n = find_need(find_lib(&r, "libtorch_global_deps.so"), "libcudart.so.12");
        ck_assert_msg(n && n->source == RESOLVE_NOT_FOUND && !n->path, "%s", dump(&r));
        ck_assert_uint_eq(r.ld_library_path.len, 0);

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* A driver library that resolves nowhere (a login node) is a note. */
START_TEST(unresolved_driver_library_is_not_a_finding)
{
        struct env e;
        struct doctor_report r;

        healthy_tree();
        env_healthy(&e);
        diagnose(&e, NULL, TORCH, &r);

        ck_assert_msg(find_finding(&r, DOCTOR_UNRESOLVED, "libcuda.so.1") == NULL, "%s", dump(&r));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- R9: stubs ---------------------------------------------------------------- */

START_TEST(stubs_on_ld_library_path_is_r9)
{
        struct env e;
        struct doctor_report r;

        healthy_tree();
        env_make(&e, WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB, CUDA12_STUBS), CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        assert_finding(&r, DOCTOR_STUBS, "R9", NULL, WORDS("stubs"));
        ck_assert_msg(find_finding(&r, DOCTOR_STUBS, CUDA12_STUBS) != NULL, "the finding does not name '%s':\n%s",
                      CUDA12_STUBS, dump(&r));

        doctor_report_release(&r);
        env_release(&e);

        /* Spelt with a trailing '/', it is the same directory. */
        expect_finding(WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB, CUDA12_STUBS "/"), CUDA12, DOCTOR_STUBS, "R9", NULL,
                       WORDS("stubs/"));
}
END_TEST

START_TEST(stubs_in_torch_runpath_is_r9)
{
        struct env e;
        struct doctor_report r;

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        torch(CUDA12_STUBS);
        env_healthy(&e);
        diagnose(&e, NULL, TORCH, &r);

        assert_finding(&r, DOCTOR_STUBS, "R9", NULL, WORDS("stubs"));
        ck_assert_msg(find_finding(&r, DOCTOR_STUBS, CUDA12_STUBS) != NULL, "the finding does not name '%s':\n%s",
                      CUDA12_STUBS, dump(&r));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- R5/R2: two cuDNN versions ------------------------------------------------- */

START_TEST(two_cudnn_versions_on_ld_library_path)
{
        healthy_tree();
        cudnn(CUDNN97, "9.7.1", 12);
        expect_finding(WORDS(NCCL_LIB, CUDNN91_LIB, CUDNN97_LIB, CUDA12_LIB), CUDA12,
                       DOCTOR_CUDNN_VERSIONS, "R5|R2", NULL, WORDS("9.1.0", "9.7.1"));
}
END_TEST

/* --- R2/R8: older than the build --------------------------------------------------- */

/* torch's RUNPATH keeps cuDNN 9.7.1's directory (it was built against it),
 * LD_LIBRARY_PATH puts 9.1.0 first. */
START_TEST(cudnn_older_than_the_build_is_r2)
{
        struct env e;
        struct doctor_report r;

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        cudnn(CUDNN97, "9.7.1", 12);
        nccl("12.4");
        torch(CUDNN97_LIB);
        env_healthy(&e);
        diagnose(&e, NULL, TORCH, &r);

        ck_assert_msg(r.built.linked[component_cudnn.index] && streq(r.built.linked[component_cudnn.index], "9.7.1"), "built.cudnn %s",
                      r.built.linked[component_cudnn.index] ? r.built.linked[component_cudnn.index] : "NULL");
        assert_finding(&r, DOCTOR_CUDNN_BUILD, "R2", NULL, WORDS("9.7.1", "9.1.0"));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(cudnn_newer_than_the_build_is_fine)
{
        struct env e;
        struct doctor_report r;

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        cudnn(CUDNN97, "9.7.1", 12);
        nccl("12.4");
        torch(CUDNN91_LIB);
        env_make(&e, WORDS(NCCL_LIB, CUDNN97_LIB, CUDA12_LIB), CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        ck_assert_msg(r.built.linked[component_cudnn.index] && streq(r.built.linked[component_cudnn.index], "9.1.0"), "built.cudnn %s",
                      r.built.linked[component_cudnn.index] ? r.built.linked[component_cudnn.index] : "NULL");
        assert_no_findings(&r);

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(nccl_older_than_the_build_is_r8)
{
        struct env e;
        struct doctor_report r;

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        nccl_at("sw/nccl/2.18.3", "2.18.3", "12.2");
        torch(NCCL_LIB);
        env_make(&e, WORDS("sw/nccl/2.18.3/lib", CUDNN91_LIB, CUDA12_LIB), CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        ck_assert_msg(r.built.linked[component_nccl.index] && streq(r.built.linked[component_nccl.index], "2.21.5"), "built.nccl %s",
                      r.built.linked[component_nccl.index] ? r.built.linked[component_nccl.index] : "NULL");
        assert_finding(&r, DOCTOR_NCCL_BUILD, "R8", NULL, WORDS("2.21.5", "2.18.3"));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- R3/R5: sub-libraries ------------------------------------------------------ */

static void remove_sublibrary(const char *libdir, const char *stem)
{
        static const char *const suffixes[] = { ".so", ".so.9", ".so.9.1.0", NULL };

        for (const char *const *s = suffixes; *s; s++) {
                _cleanup_free_ char *rel = xasprintf("%s/%s%s", libdir, stem, *s);
                _cleanup_free_ char *p = at(rel);
                ck_assert_msg(unlink(p) == 0, "unlink '%s'", p);
        }
}

START_TEST(cudnn_sublibrary_missing_is_r3)
{
        healthy_tree();
        remove_sublibrary(CUDNN91_LIB, "libcudnn_engines_precompiled");
        expect_finding(HEALTHY_LLP, CUDA12,
                       DOCTOR_CUDNN_SUBLIBRARIES, "R3", NULL, WORDS("libcudnn_engines_precompiled.so.9"));
}
END_TEST

START_TEST(cudnn_sublibrary_from_another_directory)
{
        healthy_tree();
        cudnn(CUDNN97, "9.7.1", 12);
        remove_sublibrary(CUDNN91_LIB, "libcudnn_engines_precompiled");
        expect_finding(WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB, CUDNN97_LIB), CUDA12,
                       DOCTOR_CUDNN_SUBLIBRARIES, "R5", NULL, WORDS("libcudnn_engines_precompiled.so.9"));
}
END_TEST

/* --- R5: CUDA major of cuDNN and NCCL -------------------------------------------- */

START_TEST(cudnn_for_another_cuda_major_is_r5)
{
        cuda12();
        cudnn(CUDNN91, "9.1.0", 13);
        nccl("12.4");
        torch(NULL);
        expect_finding(HEALTHY_LLP, CUDA12, DOCTOR_CUDA_MAJOR, "R5", NULL, WORDS("cuDNN", "13"));
}
END_TEST

START_TEST(nccl_for_another_cuda_major_is_r5)
{
        struct env e;
        struct doctor_report r;
        const struct doctor_finding *f;

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("13.0");
        torch(NULL);
        env_healthy(&e);
        diagnose(&e, NULL, TORCH, &r);

        f = assert_finding(&r, DOCTOR_CUDA_MAJOR, "R5", NULL, WORDS("NCCL", "13"));
        ck_assert_msg(!contains_ci(f->what, "cudnn"), "the NCCL finding is about cuDNN:\n%s", dump(&r));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* A library of a component that says what its CUDA major breaks (here
 * cuSPARSELt, whose major only its archive's name tells): the CUDA 13 build
 * first on LD_LIBRARY_PATH of a torch for CUDA 12 is a cuda-major finding
 * naming it, and the CUDA 12 build is none. */
START_TEST(cusparselt_of_another_cuda_major_is_r5)
{
        const char *lt12 = "sw/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive";
        const char *lt13 = "sw/libcusparse_lt-linux-x86_64-0.8.1.1_cuda13-archive";
        _cleanup_free_ char *lt12_lib = path_join(lt12, "lib"), *lt13_lib = path_join(lt13, "lib");
        struct doctor_report r;
        struct env e;

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        fx_cusparselt(root, lt12, &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_cusparselt(root, lt13, &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .cusparse = true,
                                     .cusparselt = true });
        expect_finding(WORDS(lt13_lib, NCCL_LIB, CUDNN91_LIB, CUDA12_LIB), CUDA12, DOCTOR_CUDA_MAJOR, "R5",
                       "cuSPARSELt", WORDS("CUDA 13", "torch for CUDA 12", "cusparselt module"));

        env_make(&e, WORDS(lt12_lib, NCCL_LIB, CUDNN91_LIB, CUDA12_LIB), CUDA12);
        diagnose(&e, NULL, TORCH, &r);
        ck_assert_msg(!find_finding(&r, DOCTOR_CUDA_MAJOR, "cuSPARSELt"), "%s", dump(&r));
        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* libcusparse.so.12 is in CUDA 12 and 13: the CUDA 13 one first on
 * LD_LIBRARY_PATH loads without an error. */
START_TEST(cusparse_from_a_toolkit_of_another_major_is_r5)
{
        struct env e;
        struct doctor_report r;
        const struct doctor_need *n;

        healthy_tree();
        cuda13();
        env_make(&e, WORDS(NCCL_LIB, CUDNN91_LIB, CUDA13_LIB, CUDA12_LIB), CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        n = find_need(find_lib(&r, "libtorch_cuda.so"), "libcusparse.so.12");
        ck_assert_msg(n && path_is_below(n->path, CUDA13_LIB), "%s", dump(&r));
        assert_finding(&r, DOCTOR_CUDA_MAJOR, "R5", "libcusparse.so.12", WORDS(CUDA13_LIB, "13"));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- R7: libnvJitLink ------------------------------------------------------------ */

START_TEST(older_nvjitlink_first_is_r7)
{
        healthy_tree();
        fx_library(root, "old/nvjitlink/lib", "libnvJitLink", "12", "12.1.105", 0, NULL, NULL);
        expect_finding(WORDS("old/nvjitlink/lib", NCCL_LIB, CUDNN91_LIB, CUDA12_LIB), CUDA12,
                       DOCTOR_NVJITLINK, "R7", NULL, WORDS("libnvJitLink.so.12", "old/nvjitlink/lib", "12.1"));
}
END_TEST

START_TEST(newer_nvjitlink_first_is_fine)
{
        struct env e;
        struct doctor_report r;

        healthy_tree();
        fx_library(root, "new/nvjitlink/lib", "libnvJitLink", "12", "12.6.77", 0, NULL, NULL);
        env_make(&e, WORDS("new/nvjitlink/lib", NCCL_LIB, CUDNN91_LIB, CUDA12_LIB), CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        assert_no_findings(&r);

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- §2.2: nvidia wheels next to a source build ----------------------------------- */

static void nvidia_cudnn_wheel(void)
{
        fx_cudnn(root, "site-packages/nvidia/cudnn",
                 &(struct fx_cudnn){ .version = "9.1.0", .cuda_major = 12, .soname_only = true });
        fx_dist_info(root, "site-packages", "nvidia-cudnn-cu12", "9.1.0.70");
}

START_TEST(nvidia_wheels_next_to_source_build)
{
        struct env e;
        struct doctor_report r;
        const struct doctor_finding *f;

        healthy_tree();
        nvidia_cudnn_wheel();
        env_healthy(&e);
        diagnose(&e, NULL, TORCH, &r);

        f = assert_finding(&r, DOCTOR_NVIDIA_WHEELS, NULL, NULL, WORDS("nvidia"));
        ck_assert_msg(strstr(f->fix, "nvidia-cudnn-cu12") != NULL, "the fix does not name nvidia-cudnn-cu12:\n%s",
                      dump(&r));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(nvidia_wheels_of_a_wheel_torch_are_fine)
{
        struct env e;
        struct doctor_report r;

        cuda12();
        nccl("12.4");
        nvidia_cudnn_wheel();
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .cusparse = true,
                                     .wheel_rpath = true });
        env_make(&e, WORDS(NCCL_LIB, CUDA12_LIB), CUDA12);
        diagnose(&e, NULL, TORCH, &r);

        assert_no_finding(&r, DOCTOR_NVIDIA_WHEELS);
        ck_assert_msg(find_lib(&r, "libtorch_cuda.so")->rpath != NULL, "%s", dump(&r));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- the toolkit's major ---------------------------------------------------------- */

START_TEST(cuda_home_of_another_major)
{
        struct env e;
        struct doctor_report r;

        healthy_tree();
        cuda13();
        env_make(&e, WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB), CUDA13);
        diagnose(&e, NULL, TORCH, &r);

        assert_finding(&r, DOCTOR_TOOLKIT_MAJOR, NULL, NULL, WORDS("13.0", "12.4"));
        ck_assert_msg(r.toolkit_version && streq(r.toolkit_version, "13.0"), "%s",
                      r.toolkit_version ? r.toolkit_version : "NULL");

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(nvcc_on_path_of_another_major)
{
        struct env e;
        struct doctor_report r;
        _cleanup_free_ char *nvcc = at(CUDA13 "/bin/nvcc"), *prefix = at(CUDA13);

        healthy_tree();
        cuda13();
        ck_assert_int_eq(chmod(nvcc, 0755), 0);
        env_make(&e, WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB), NULL);
        env_dirs(&e, "PATH", WORDS(CUDA13 "/bin"));
        diagnose(&e, NULL, TORCH, &r);

        ck_assert_msg(same_path(r.toolkit, prefix), "toolkit %s", r.toolkit ? r.toolkit : "NULL");
        ck_assert_msg(r.toolkit_source && streq(r.toolkit_source, "nvcc on PATH"), "toolkit_source %s",
                      r.toolkit_source ? r.toolkit_source : "NULL");
        assert_finding(&r, DOCTOR_TOOLKIT_MAJOR, NULL, NULL, WORDS("13.0"));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* CUDA_PATH counts when CUDA_HOME is unset, and CUDA_HOME before it. */
START_TEST(cuda_path_without_cuda_home)
{
        struct env e;
        struct doctor_report r;
        _cleanup_free_ char *prefix13 = at(CUDA13), *prefix12 = at(CUDA12);

        healthy_tree();
        cuda13();
        env_make(&e, WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB), NULL);
        env_set(&e, "CUDA_PATH", prefix13);
        diagnose(&e, NULL, TORCH, &r);

        ck_assert_msg(same_path(r.toolkit, prefix13), "toolkit %s", r.toolkit ? r.toolkit : "NULL");
        ck_assert_msg(r.toolkit_source && streq(r.toolkit_source, "CUDA_PATH"), "toolkit_source %s",
                      r.toolkit_source ? r.toolkit_source : "NULL");
        assert_finding(&r, DOCTOR_TOOLKIT_MAJOR, NULL, NULL, WORDS("13.0"));
        doctor_report_release(&r);

        env_set(&e, "CUDA_HOME", prefix12);
        diagnose(&e, NULL, TORCH, &r);
        ck_assert_msg(same_path(r.toolkit, prefix12), "toolkit %s", r.toolkit ? r.toolkit : "NULL");
        assert_no_findings(&r);

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- suggestions ---------------------------------------------------------------- */

/* mods/NAME.lua prepending the library directory lib (below root) to
 * LD_LIBRARY_PATH, and setting CUDA_HOME to cuda_home when given. */
static void modulefile(const char *name, const char *lib, const char *cuda_home)
{
        _cleanup_free_ char *rel = xasprintf("mods/%s.lua", name);
        _cleanup_free_ char *libdir = at(lib);
        _cleanup_free_ char *home = cuda_home ? at(cuda_home) : NULL;
        _cleanup_free_ char *text = NULL;

        text = xasprintf("-- %s (test-doctor)\n%s%s%sprepend_path(\"LD_LIBRARY_PATH\", \"%s\")\n", name,
                         home ? "setenv(\"CUDA_HOME\", \"" : "", home ? home : "", home ? "\")\n" : "",
                         libdir);
        fx_write(root, rel, text);
}

/* cuda/12.4, cuda/13.0, cudnn/9.1.0 (CUDA 12), cudnn/9.7.1 (CUDA 13),
 * nccl/2.21.5 (CUDA 12.4), each in mods/, with their trees and torch. */
static void modulepath_tree(struct strv *mp, bool with_cudnn)
{
        healthy_tree();
        cuda13();
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cuda/13.0", CUDA13_LIB, CUDA13);
        if (with_cudnn) {
                cudnn(CUDNN97, "9.7.1", 13);
                modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
                modulefile("cudnn/9.7.1", CUDNN97_LIB, NULL);
        }
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        *mp = (struct strv){ 0 };
        strv_push(mp, at("mods"));
}

static void assert_module(const struct doctor_report *r, const char *name, const char *kind,
                          unsigned long cuda_major, const char *soname)
{
        const struct doctor_module *m = find_module(r, name);
        _cleanup_free_ char *provides = NULL;

        ck_assert_msg(m != NULL, "%s not in modules (%zu of them)", name, r->n_modules);
        provides = strv_join(&m->provides, " ");
        ck_assert_msg(m->kind && streq(m->kind, kind), "%s: kind %s", name, m->kind ? m->kind : "NULL");
        ck_assert_msg(m->cuda_major == cuda_major, "%s: cuda_major %lu, not %lu", name, m->cuda_major, cuda_major);
        ck_assert_msg(strv_contains(&m->provides, soname), "%s provides '%s', not %s", name, provides, soname);
}

/* TORCH diagnosed in an environment with nothing loaded, against mp. */
static void diagnose_clean(const struct strv *mp, struct doctor_report *r)
{
        struct env e;

        env_make(&e, NULL, NULL);
        diagnose(&e, mp, TORCH, r);
        env_release(&e);
}

START_TEST(suggestions_choose_one_cuda_major)
{
        struct doctor_report r;
        struct strv mp;
        _cleanup_free_ char *chosen = NULL, *unprovided = NULL;

        modulepath_tree(&mp, true);
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        unprovided = strv_join(&r.unprovided, " ");
        ck_assert_msg(streq(chosen, "cuda/12.4 cudnn/9.1.0 nccl/2.21.5"), "chosen '%s'", chosen);
        ck_assert_msg(r.module_load && streq(r.module_load, "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5"),
                      "module_load '%s'", r.module_load ? r.module_load : "NULL");
        ck_assert_msg(r.unprovided.len == 0, "unprovided '%s'", unprovided);
        assert_module(&r, "cuda/12.4", "cuda", 12, "libcudart.so.12");
        assert_module(&r, "cuda/12.4", "cuda", 12, "libcusparse.so.12");
        assert_module(&r, "cudnn/9.1.0", "cudnn", 12, "libcudnn.so.9");
        assert_module(&r, "cudnn/9.7.1", "cudnn", 13, "libcudnn.so.9");
        assert_module(&r, "nccl/2.21.5", "nccl", 12, "libnccl.so.2");
        /* Only the libcusparse.so.12 that CUDA 13 keeps. */
        assert_module(&r, "cuda/13.0", "cuda", 13, "libcusparse.so.12");
        ck_assert_msg(!strv_contains(&find_module(&r, "cuda/13.0")->provides, "libcudart.so.12"),
                      "cuda/13.0 provides libcudart.so.12");

        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* A torch built with NVSHMEM gets the NVSHMEM module for its CUDA major
 * in the suggested line: the CUDA 12 archive's, not the newer CUDA 13
 * one; only their paths and the wheel's dist-info tell (NVSHMEM links
 * cudart statically). */
START_TEST(suggestions_include_the_nvshmem_of_torchs_cuda_major)
{
        const char *nv12 = "sw/nvshmem/libnvshmem-linux-x86_64-3.4.5_cuda12-archive";
        const char *nv13 = "sw/nvshmem/libnvshmem-linux-x86_64-3.5.19_cuda13-archive";
        const char *wheel = "venv/lib/python3.12/site-packages/nvidia/nvshmem";
        _cleanup_free_ char *lib12 = path_join(nv12, "lib"), *lib13 = path_join(nv13, "lib");
        _cleanup_free_ char *libw = path_join(wheel, "lib");
        _cleanup_free_ char *chosen = NULL;
        struct doctor_report r;
        struct strv mp = { 0 };

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        fx_nvshmem(root, nv12, &(struct fx_nvshmem){ .version = "3.4.5" });
        fx_nvshmem(root, nv13, &(struct fx_nvshmem){ .version = "3.5.19", .transport = 4 });
        fx_nvshmem(root, wheel, &(struct fx_nvshmem){ .version = "3.3.20", .soname_only = true, .no_bin = true });
        fx_dist_info(root, "venv/lib/python3.12/site-packages", "nvidia-nvshmem-cu12", "3.3.20");
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .nvshmem = true,
                                     .cusparse = true });
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        modulefile("nvshmem/3.4.5", lib12, NULL);
        modulefile("nvshmem/3.5.19", lib13, NULL);
        modulefile("nvshmem/3.3.20", libw, NULL);
        strv_push(&mp, at("mods"));
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        ck_assert_msg(streq(chosen, "cuda/12.4 cudnn/9.1.0 nccl/2.21.5 nvshmem/3.4.5"), "chosen '%s'", chosen);
        ck_assert_msg(r.module_load && streq(r.module_load, "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5 nvshmem/3.4.5"),
                      "module_load '%s'", r.module_load ? r.module_load : "NULL");
        ck_assert_msg(r.unprovided.len == 0, "unprovided");
        assert_module(&r, "nvshmem/3.4.5", "nvshmem", 12, "libnvshmem_host.so.3");
        assert_module(&r, "nvshmem/3.5.19", "nvshmem", 13, "libnvshmem_host.so.3");
        /* The wheel's CUDA is in its dist-info only. */
        assert_module(&r, "nvshmem/3.3.20", "nvshmem", 12, "libnvshmem_host.so.3");

        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* Spack NVSHMEMs, whose libraries and prefixes name no CUDA: the CUDA of
 * each is what its spec.json names, as scan reads it, so the one for
 * torch's CUDA 12 is suggested and the newer one for CUDA 13 is not. */
START_TEST(suggestions_take_the_nvshmem_cuda_from_its_spec_json)
{
        const char *nv12 = "sw/spack/nvshmem-3.1.7-1-k7qz3xvqmmb2fvmpyl4ld6hmxx3kbfzz";
        const char *nv13 = "sw/spack/nvshmem-3.4.5-1-u2pzfvqtu4fjp3hmnzeysd6j4x5b5pmw";
        _cleanup_free_ char *lib12 = path_join(nv12, "lib"), *lib13 = path_join(nv13, "lib");
        _cleanup_free_ char *chosen = NULL;
        struct doctor_report r;
        struct strv mp = { 0 };

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        fx_nvshmem(root, nv12, &(struct fx_nvshmem){ .version = "3.1.7" });
        fx_spack_spec(root, nv12, "nvshmem", "3.1.7-1", "12.6.0");
        fx_nvshmem(root, nv13, &(struct fx_nvshmem){ .version = "3.4.5" });
        fx_spack_spec(root, nv13, "nvshmem", "3.4.5-1", "13.0.0");
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .nvshmem = true,
                                     .cusparse = true });
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        modulefile("nvshmem/3.1.7", lib12, NULL);
        modulefile("nvshmem/3.4.5", lib13, NULL);
        strv_push(&mp, at("mods"));
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        ck_assert_msg(streq(chosen, "cuda/12.4 cudnn/9.1.0 nccl/2.21.5 nvshmem/3.1.7"), "chosen '%s'", chosen);
        assert_module(&r, "nvshmem/3.1.7", "nvshmem", 12, "libnvshmem_host.so.3");
        assert_module(&r, "nvshmem/3.4.5", "nvshmem", 13, "libnvshmem_host.so.3");

        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* Of two cuDNN modules for torch's CUDA major, the one of the version
 * torch was built against (its RUNPATH tells) rather than the highest. */
START_TEST(suggestions_prefer_the_built_cudnn_version)
{
        struct doctor_report r;
        struct strv mp = { 0 };
        _cleanup_free_ char *chosen = NULL;

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        cudnn(CUDNN97, "9.7.1", 12);
        nccl("12.4");
        torch(CUDNN91_LIB);
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
        modulefile("cudnn/9.7.1", CUDNN97_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        strv_push(&mp, at("mods"));
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        ck_assert_msg(streq(chosen, "cuda/12.4 cudnn/9.1.0 nccl/2.21.5"), "chosen '%s'", chosen);
        assert_module(&r, "cudnn/9.7.1", "cudnn", 12, "libcudnn.so.9");

        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* torch needs libcusparseLt.so.0: of a cuSPARSELt module for each CUDA
 * major (told by the archive's _cudaN, the library links the runtime
 * statically), the one for torch's. */
START_TEST(suggestions_include_cusparselt_of_torchs_cuda_major)
{
        struct doctor_report r;
        struct strv mp = { 0 };
        _cleanup_free_ char *chosen = NULL, *unprovided = NULL;
        const char *lt12 = "sw/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive";
        const char *lt13 = "sw/libcusparse_lt-linux-x86_64-0.8.1.1_cuda13-archive";
        _cleanup_free_ char *lt12_lib = path_join(lt12, "lib"), *lt13_lib = path_join(lt13, "lib");

        cuda12();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        fx_cusparselt(root, lt12, &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_cusparselt(root, lt13, &(struct fx_cusparselt){ .version = "0.8.1.1" });
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .cusparse = true,
                                     .cusparselt = true });
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        modulefile("cusparselt/0.8.1-cu13", lt13_lib, NULL);
        modulefile("cusparselt/0.8.1-cu12", lt12_lib, NULL);
        strv_push(&mp, at("mods"));
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        unprovided = strv_join(&r.unprovided, " ");
        assert_module(&r, "cusparselt/0.8.1-cu12", "cusparselt", 12, "libcusparseLt.so.0");
        assert_module(&r, "cusparselt/0.8.1-cu13", "cusparselt", 13, "libcusparseLt.so.0");
        ck_assert_msg(strv_contains(&r.chosen, "cusparselt/0.8.1-cu12") &&
                              !strv_contains(&r.chosen, "cusparselt/0.8.1-cu13"),
                      "chosen '%s'", chosen);
        ck_assert_msg(r.module_load && strstr(r.module_load, "cusparselt/0.8.1-cu12"), "module_load '%s'",
                      r.module_load ? r.module_load : "NULL");
        ck_assert_msg(!strv_contains(&r.unprovided, "libcusparseLt.so.0"), "unprovided '%s'", unprovided);

        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* A torch for CUDA 13 whose libcusparseLt.so.0 comes from a runtime-only
 * install's module (the cusparselt-wheels fixture: NVIDIA's cu13 wheel,
 * the library and no header of its own; the module sets LD_LIBRARY_PATH
 * only): running torch needs no header, so doctor finds nothing wrong, and
 * offers that module for libcusparseLt.so.0. */
START_TEST(cusparselt_from_a_runtime_only_module_is_fine)
{
        const char *wheel_lib = "venv/lib/python3.12/site-packages/nvidia/cusparselt/lib";
        struct doctor_report r;
        struct strv mp = { 0 };
        struct env e;
        const struct doctor_library *l;
        const struct doctor_need *n;
        _cleanup_free_ char *want = NULL;

        cuda13();
        layout_fixture_find("cusparselt-wheels")->build(root);
        fx_torch(root, TORCH, &(struct fx_torch){ .cuda = "13.0", .cusparse = true, .cusparselt = true });
        modulefile("cuda/13.0", CUDA13_LIB, CUDA13);
        modulefile("cusparselt/0.8.1", wheel_lib, NULL);
        strv_push(&mp, at("mods"));
        env_make(&e, WORDS(wheel_lib, CUDA13_LIB), CUDA13);
        env_set(&e, "LOADEDMODULES", "cuda/13.0:cusparselt/0.8.1");
        diagnose(&e, &mp, TORCH, &r);
        ck_assert_msg(r.n_findings == 0, "%s", dump(&r));
        for (size_t i = 0; i < r.notes.len; i++)
                ck_assert_msg(!contains_ci(r.notes.items[i], "header"), "%s", dump(&r));
        l = find_lib(&r, "libtorch_cuda.so");
        n = find_need(l, "libcusparseLt.so.0");
        want = xasprintf("%s/%s/libcusparseLt.so.0", root, wheel_lib);
        ck_assert_msg(n->path && streq(n->path, want), "%s", dump(&r));
        assert_module(&r, "cusparselt/0.8.1", "cusparselt", 13, "libcusparseLt.so.0");
        doctor_report_release(&r);
        env_release(&e);
        strv_release(&mp);
}
END_TEST

/* torch built with cuDSS needs libcudss.so.0: of a cuDSS module for each
 * CUDA major, the one for torch's goes into the suggested load line. */
START_TEST(suggestions_include_cudss_of_the_cuda_major)
{
        struct doctor_report r;
        struct strv mp;
        _cleanup_free_ char *chosen = NULL;

        modulepath_tree(&mp, true);
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .cusparse = true,
                                     .extra_needed = (const char *const[]){ "libcudss.so.0", NULL } });
        fx_cudss(root, "sw/cudss/0.7.1", &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 12 });
        fx_cudss(root, "sw/cudss/0.7.1-cuda13", &(struct fx_cudss){ .version = "0.7.1", .cuda_major = 13 });
        modulefile("cudss/0.7.1", "sw/cudss/0.7.1/lib", NULL);
        modulefile("cudss/0.7.1-cuda13", "sw/cudss/0.7.1-cuda13/lib", NULL);
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        ck_assert_msg(streq(chosen, "cuda/12.4 cudnn/9.1.0 nccl/2.21.5 cudss/0.7.1"), "chosen '%s'", chosen);
        ck_assert_msg(r.module_load &&
                              streq(r.module_load, "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5 cudss/0.7.1"),
                      "module_load '%s'", r.module_load ? r.module_load : "NULL");
        ck_assert_msg(r.unprovided.len == 0, "unprovided %zu", r.unprovided.len);
        assert_module(&r, "cudss/0.7.1", "cudss", 12, "libcudss.so.0");
        assert_module(&r, "cudss/0.7.1-cuda13", "cudss", 13, "libcudss.so.0");

        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* A torch built with the whole stack needs one library of each of the
 * seven components; of two builds of each library (CUDA 12 and 13), the
 * line has the one for torch's CUDA 12, in table order, and nothing is
 * left unprovided. */
START_TEST(suggestions_cover_all_seven_components)
{
        static const char *const lt[] = { "sw/libcusparse_lt-linux-x86_64-0.8.1.1_cuda12-archive",
                                          "sw/libcusparse_lt-linux-x86_64-0.8.1.1_cuda13-archive" };
        static const char *const sh[] = { "sw/libnvshmem-linux-x86_64-3.4.5_cuda12-archive",
                                          "sw/libnvshmem-linux-x86_64-3.4.5_cuda13-archive" };
        struct doctor_report r;
        struct strv mp = { 0 };
        _cleanup_free_ char *chosen = NULL, *unprovided = NULL;

        cuda12();
        cuda13();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        for (int i = 0; i < 2; i++) {
                _cleanup_free_ char *lt_lib = path_join(lt[i], "lib"), *sh_lib = path_join(sh[i], "lib");
                unsigned major = i == 0 ? 12 : 13;
                const char *tag = i == 0 ? "" : "-cuda13";
                _cleanup_free_ char *ds = xasprintf("sw/cudss/0.7.1%s", tag), *mg = xasprintf("sw/magma/2.9.0%s", tag);
                _cleanup_free_ char *ds_lib = path_join(ds, "lib"), *mg_lib = path_join(mg, "lib");
                _cleanup_free_ char *m_lt = xasprintf("cusparselt/0.8.1%s", tag), *m_sh = xasprintf("nvshmem/3.4.5%s", tag);
                _cleanup_free_ char *m_ds = xasprintf("cudss/0.7.1%s", tag), *m_mg = xasprintf("magma/2.9.0%s", tag);

                fx_cusparselt(root, lt[i], &(struct fx_cusparselt){ .version = "0.8.1.1" });
                fx_nvshmem(root, sh[i], &(struct fx_nvshmem){ .version = "3.4.5" });
                fx_cudss(root, ds, &(struct fx_cudss){ .version = "0.7.1", .cuda_major = major });
                fx_magma(root, mg, &(struct fx_magma){ .version = "2.9.0", .cuda_major = major });
                modulefile(m_lt, lt_lib, NULL);
                modulefile(m_sh, sh_lib, NULL);
                modulefile(m_ds, ds_lib, NULL);
                modulefile(m_mg, mg_lib, NULL);
        }
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .cusparse = true,
                                     .cusparselt = true, .nvshmem = true, .magma = true,
                                     .extra_needed = (const char *const[]){ "libcudss.so.0", NULL } });
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cuda/13.0", CUDA13_LIB, CUDA13);
        modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        strv_push(&mp, at("mods"));
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        unprovided = strv_join(&r.unprovided, " ");
        ck_assert_msg(r.module_load &&
                              streq(r.module_load, "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5 cusparselt/0.8.1 "
                                                   "cudss/0.7.1 nvshmem/3.4.5 magma/2.9.0"),
                      "module_load '%s'\n%s", r.module_load ? r.module_load : "NULL", dump(&r));
        ck_assert_msg(r.unprovided.len == 0, "unprovided '%s'", unprovided);
        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* A torch built against a shared MAGMA needs libmagma.so: of two MAGMA
 * modules, the one whose libmagma.so loads torch's CUDA 12 joins the line. */
START_TEST(suggestions_add_the_magma_of_torchs_cuda_major)
{
        struct doctor_report r;
        struct strv mp = { 0 };
        _cleanup_free_ char *chosen = NULL, *unprovided = NULL;

        cuda12();
        cuda13();
        nccl("12.4");
        cudnn(CUDNN91, "9.1.0", 12);
        fx_magma(root, "sw/magma/2.9.0", &(struct fx_magma){ .version = "2.9.0", .cuda_major = 12 });
        fx_magma(root, "sw/magma/2.9.0-cuda13", &(struct fx_magma){ .version = "2.9.0", .cuda_major = 13 });
        fx_torch(root, TORCH,
                 &(struct fx_torch){ .cuda = "12.4", .cudnn_major = 9, .nccl = true, .cusparse = true,
                                     .magma = true });
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cuda/13.0", CUDA13_LIB, CUDA13);
        modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        modulefile("magma/2.9.0-cuda13", "sw/magma/2.9.0-cuda13/lib", NULL);
        modulefile("magma/2.9.0", "sw/magma/2.9.0/lib", NULL);
        strv_push(&mp, at("mods"));
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        unprovided = strv_join(&r.unprovided, " ");
        ck_assert_msg(r.module_load && streq(r.module_load, "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5 magma/2.9.0"),
                      "module_load '%s'", r.module_load ? r.module_load : "NULL");
        ck_assert_msg(r.unprovided.len == 0, "unprovided '%s'", unprovided);
        assert_module(&r, "magma/2.9.0", "magma", 12, "libmagma.so");
        assert_module(&r, "magma/2.9.0-cuda13", "magma", 13, "libmagma.so");

        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

START_TEST(suggestions_without_cudnn_module_leave_it_unprovided)
{
        struct doctor_report r;
        struct strv mp;
        _cleanup_free_ char *chosen = NULL, *unprovided = NULL;

        modulepath_tree(&mp, false);
        diagnose_clean(&mp, &r);

        chosen = strv_join(&r.chosen, " ");
        unprovided = strv_join(&r.unprovided, " ");
        ck_assert_msg(strv_contains(&r.unprovided, "libcudnn.so.9"), "unprovided '%s'", unprovided);
        ck_assert_msg(!strv_contains(&r.unprovided, "libcudart.so.12"), "unprovided '%s'", unprovided);
        ck_assert_msg(streq(chosen, "cuda/12.4 nccl/2.21.5"), "chosen '%s'", chosen);
        ck_assert_msg(find_module(&r, "cudnn/9.1.0") == NULL, "a cudnn module listed");
        ck_assert_msg(r.unavailable.len == 1 &&
                              streq(r.unavailable.items[0], "no cudnn module for CUDA 12: install cuDNN 9 for CUDA 12 "
                                                            "(libcudnn.so.9) and generate its module"),
                      "unavailable '%s'", r.unavailable.len ? r.unavailable.items[0] : "");

        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* --- a Debian torch: its libraries outside torch/lib ----------------------------- */

#define DEB_TORCH FX_DEBIAN_TORCH
#define LDCACHE "etc/ld.so.cache"

/* Run doctor on the Debian torch with the fake loader cache of
 * fx_debian_torch's system directory. */
static void diagnose_debian(const struct env *e, const struct strv *mp, struct doctor_report *r)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *p = at(DEB_TORCH), *cache = at(LDCACHE);
        struct doctor_options o = { .environ = e->items.items, .ldcache = cache, .modulepath = mp };
        int ret;

        *r = (struct doctor_report){ 0 };
        ret = doctor_run(&o, (char *[]){ p }, 1, r, &d);
        ck_assert_msg(ret == 0, "doctor_run '%s': %d (%s)", p, ret, d.message ? d.message : "no message");
}

/* The Debian torch, CUDA 12.4 and 13.0, cuDNN 9.1.0 for CUDA 12, NCCL
 * 2.21.5, the loader cache of the system directory, and a module for each
 * (mods/). */
static void debian_tree(struct strv *mp)
{
        cuda12();
        cuda13();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        fx_debian_torch(root, false);
        fx_ldcache(root, LDCACHE, FX_DEBIAN_SYS);
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cuda/13.0", CUDA13_LIB, CUDA13);
        modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        *mp = (struct strv){ 0 };
        strv_push(mp, at("mods"));
}

/* torch/lib holds links into the system directory, and libtorch_cuda.so is
 * not there at all: libtorch.so needs it, the loader cache finds it. Its
 * needs (NCCL, cuBLAS, cuSPARSE) are torch's too, and the suggested line
 * provides them: loaded, every need resolves. */
START_TEST(debian_torch_follows_its_libraries_through_the_loader_cache)
{
        _cleanup_free_ char *sys = at(FX_DEBIAN_SYS);
        const struct doctor_library *cuda_lib;
        struct doctor_report r;
        struct strv mp;
        struct env e;
        _cleanup_free_ char *sonames = NULL;

        debian_tree(&mp);
        env_make(&e, NULL, NULL);
        diagnose_debian(&e, &mp, &r);

        cuda_lib = find_lib(&r, "libtorch_cuda.so.2.6");
        ck_assert_msg(cuda_lib != NULL, "libtorch_cuda.so.2.6 not read:\n%s", dump(&r));
        ck_assert_msg(path_is_below(cuda_lib->path, FX_DEBIAN_SYS), "libtorch_cuda at %s, not in %s", cuda_lib->path, sys);
        ck_assert_msg(cuda_lib->needed_by && streq(cuda_lib->needed_by, "libtorch.so.2.6"), "needed by %s",
                      cuda_lib->needed_by ? cuda_lib->needed_by : "NULL");
        ck_assert_msg(find_lib(&r, "libtorch.so") && !find_lib(&r, "libtorch.so")->needed_by,
                      "torch/lib/libtorch.so not a given library:\n%s", dump(&r));
        sonames = strv_join(&r.built.sonames, " ");
        ck_assert_msg(streq(sonames, "libcublas.so.12 libcublasLt.so.12 libcudart.so.12 libcudnn.so.9 "
                                     "libcusparse.so.12 libnccl.so.2"),
                      "sonames '%s'", sonames);
        assert_finding(&r, DOCTOR_UNRESOLVED, "R1", "libnccl.so.2", WORDS("libtorch_cuda.so.2.6"));
        ck_assert_msg(r.module_load && streq(r.module_load, "module load cuda/12.4 cudnn/9.1.0 nccl/2.21.5"),
                      "module_load '%s'\n%s", r.module_load ? r.module_load : "NULL", dump(&r));
        ck_assert_msg(r.unprovided.len == 0, "unprovided %zu", r.unprovided.len);
        ck_assert_msg(r.built.git_version == NULL, "git_version '%s'", r.built.git_version);
        doctor_report_release(&r);
        env_release(&e);

        /* The line loaded: nothing wrong. */
        env_make(&e, HEALTHY_LLP, CUDA12);
        diagnose_debian(&e, &mp, &r);
        assert_no_findings(&r);
        doctor_report_release(&r);
        env_release(&e);
        strv_release(&mp);
}
END_TEST

/* What Python raises, by the first need ld.so stops at: torch loads
 * lib/libtorch_global_deps.so with ctypes first (OSError), then torch._C
 * (ImportError). */
START_TEST(debian_torch_failure_is_oserror_or_importerror_as_python_raises_it)
{
        const struct doctor_finding *f;
        struct doctor_report r;
        struct strv mp;
        struct env e;

        debian_tree(&mp);
        env_make(&e, NULL, NULL);
        diagnose_debian(&e, NULL, &r);
        f = assert_finding(&r, DOCTOR_UNRESOLVED, "R1", NULL, NULL);
        ck_assert_msg(strstr(f->why, "\"OSError: libcudart.so.12: cannot open shared object file: No such file or "
                                     "directory\""), "why: %s", f->why);
        doctor_report_release(&r);
        env_release(&e);

        /* CUDA there: global deps load; torch._C's libtorch_python needs cuDNN. */
        env_make(&e, WORDS(CUDA12_LIB), NULL);
        diagnose_debian(&e, NULL, &r);
        f = assert_finding(&r, DOCTOR_UNRESOLVED, "R1", NULL, NULL);
        ck_assert_msg(strstr(f->why, "\"ImportError: libcudnn.so.9: cannot open shared object file: No such file or "
                                     "directory\" (libtorch_python.so.2.6 needs it)") && !strstr(f->why, "OSError"),
                      "why: %s", f->why);
        doctor_report_release(&r);
        env_release(&e);
        strv_release(&mp);
}
END_TEST

/* The site has cuDNN only for CUDA 13, inside the CUDA 13 prefix (as
 * /usr/local/cuda-13.0 has it), with a cudnn module of its own; cuda/12.4
 * and nccl are loaded. The advice says plainly that no cuDNN for CUDA 12
 * exists instead of the line already loaded, and cuda/13.0 does not
 * "provide" the cuDNN its directory holds: the cudnn module does. */
START_TEST(suggestions_say_when_no_module_is_for_torchs_cuda_major)
{
        _cleanup_free_ char *loaded = NULL;
        const struct doctor_finding *f;
        const struct doctor_module *m;
        struct doctor_report r;
        struct strv mp;
        struct env e;

        cuda12();
        cuda13();
        nccl("12.4");
        cudnn("sw/cuda/13.0/targets/x86_64-linux", "9.19.0", 13);
        fx_debian_torch(root, false);
        fx_ldcache(root, LDCACHE, FX_DEBIAN_SYS);
        modulefile("cuda/12.4", CUDA12_LIB, CUDA12);
        modulefile("cuda/13.0", CUDA13_LIB, CUDA13);
        modulefile("cudnn/9.19.0", CUDA13_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        mp = (struct strv){ 0 };
        strv_push(&mp, at("mods"));
        env_make(&e, WORDS(NCCL_LIB, CUDA12_LIB), CUDA12);
        env_set(&e, "LOADEDMODULES", "cuda/12.4:nccl/2.21.5");
        diagnose_debian(&e, &mp, &r);

        assert_module(&r, "cudnn/9.19.0", "cudnn", 13, "libcudnn.so.9");
        m = find_module(&r, "cuda/13.0");
        ck_assert_msg(m && !strv_contains(&m->provides, "libcudnn.so.9"), "cuda/13.0 provides libcudnn.so.9:\n%s",
                      dump(&r));
        ck_assert_msg(r.module_load && streq(r.module_load, "module load cuda/12.4 nccl/2.21.5"), "module_load '%s'",
                      r.module_load ? r.module_load : "NULL");
        loaded = strv_join(&r.unavailable, "|");
        ck_assert_msg(streq(loaded, "no cudnn module for CUDA 12 (cudnn/9.19.0 is for CUDA 13): install cuDNN 9 for "
                                    "CUDA 12 (libcudnn.so.9) and generate its module, or use a torch built for CUDA 13"),
                      "unavailable '%s'", loaded);
        f = assert_finding(&r, DOCTOR_UNRESOLVED, "R1", "libcudnn.so.9", WORDS("no cudnn module for CUDA 12"));
        ck_assert_msg(!strstr(f->fix, "module load"), "fix suggests the modules loaded: %s", f->fix);

        doctor_report_release(&r);
        env_release(&e);
        strv_release(&mp);
}
END_TEST

/* Only a CUDA 13 toolkit module for a CUDA 12 torch: the advice says so,
 * naming the runtime, and cuda/13.0 (it has libcusparse.so.12, CUDA 12's
 * soname too) is not chosen. */
START_TEST(suggestions_say_when_no_toolkit_is_for_torchs_cuda_major)
{
        _cleanup_free_ char *text = NULL;
        struct doctor_report r;
        struct strv mp = { 0 };
        struct env e;

        cuda13();
        cudnn(CUDNN91, "9.1.0", 12);
        nccl("12.4");
        fx_debian_torch(root, false);
        fx_ldcache(root, LDCACHE, FX_DEBIAN_SYS);
        modulefile("cuda/13.0", CUDA13_LIB, CUDA13);
        modulefile("cudnn/9.1.0", CUDNN91_LIB, NULL);
        modulefile("nccl/2.21.5", NCCL_LIB, NULL);
        strv_push(&mp, at("mods"));
        env_make(&e, NULL, NULL);
        diagnose_debian(&e, &mp, &r);

        text = strv_join(&r.unavailable, "|");
        ck_assert_msg(streq(text, "no cuda module for CUDA 12 (cuda/13.0 is for CUDA 13): install a CUDA 12 toolkit "
                                  "(libcudart.so.12) and generate its module, or use a torch built for CUDA 13"),
                      "unavailable '%s'", text);
        ck_assert_msg(r.module_load && streq(r.module_load, "module load cudnn/9.1.0 nccl/2.21.5"), "module_load '%s'",
                      r.module_load ? r.module_load : "NULL");
        doctor_report_release(&r);
        env_release(&e);
        strv_release(&mp);
}
END_TEST

/* CUDA 11's runtime is libcudart.so.11.0: the module's CUDA major is
 * still known (the suggestion list showed "CUDA ?"). */
START_TEST(suggestions_know_the_cuda_major_of_a_cuda_11_module)
{
        struct doctor_report r;
        struct strv mp = { 0 };

        fx_cuda_toolkit(root, "sw/cuda/11.8",
                        &(struct fx_cuda){ .version = "11.8", .release = "11.8.0", .cudart = "11.8.89",
                                           .nvcc = "11.8.89" });
        fx_torch(root, TORCH, &(struct fx_torch){ .cuda = "11.8" });
        modulefile("cuda/11.8", "sw/cuda/11.8/targets/x86_64-linux/lib", "sw/cuda/11.8");
        strv_push(&mp, at("mods"));
        diagnose_clean(&mp, &r);

        assert_module(&r, "cuda/11.8", "cuda", 11, "libcublas.so.11");
        ck_assert_msg(r.module_load && streq(r.module_load, "module load cuda/11.8"), "module_load '%s'",
                      r.module_load ? r.module_load : "NULL");
        doctor_report_release(&r);
        strv_release(&mp);
}
END_TEST

/* --- input forms ------------------------------------------------------------------ */

START_TEST(input_torch_lib_dir_is_the_package)
{
        struct env e;
        struct doctor_report r;
        _cleanup_free_ char *torch_dir = at(TORCH);

        healthy_tree();
        env_healthy(&e);
        diagnose(&e, NULL, TORCH "/lib", &r);

        ck_assert_msg(same_path(r.torch_dir, torch_dir), "torch_dir %s", r.torch_dir ? r.torch_dir : "NULL");
        ck_assert_msg(r.built.cuda && streq(r.built.cuda, "12.4"), "cuda %s", r.built.cuda ? r.built.cuda : "NULL");
        ck_assert_msg(find_lib(&r, "libtorch_cuda.so") && find_lib(&r, "libc10.so"), "%s", dump(&r));
        assert_no_findings(&r);

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(input_one_library_file)
{
        struct env e;
        struct doctor_report r;

        healthy_tree();
        env_healthy(&e);
        diagnose(&e, NULL, TORCH "/lib/libtorch_cuda.so", &r);

        ck_assert_msg(r.n_libs == 1, "%zu libraries:\n%s", r.n_libs, dump(&r));
        ck_assert_str_eq(path_basename(r.libs[0].path), "libtorch_cuda.so");
        ck_assert_ptr_null(r.torch_dir);
        ck_assert_msg(strv_contains(&r.built.sonames, "libcudart.so.12"), "%s", dump(&r));
        ck_assert_uint_eq(r.built.cuda_major, 12);

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(input_other_directory_takes_its_libraries)
{
        struct env e;
        struct doctor_report r;

        healthy_tree();
        env_healthy(&e);
        diagnose(&e, NULL, CUDNN91_LIB, &r);

        ck_assert_ptr_null(r.torch_dir);
        /* libcudnn and its 7 sub-libraries, each real file once. */
        ck_assert_msg(r.n_libs == 8, "%zu libraries:\n%s", r.n_libs, dump(&r));

        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(input_missing_path_is_enoent)
{
        struct env e;
        struct doctor_report r = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *p = at("no/such/torch");
        struct doctor_options o;
        int ret;

        env_make(&e, NULL, NULL);
        o = (struct doctor_options){ .environ = e.items.items, .ldcache = "/nonexistent" };
        ret = doctor_run(&o, (char *[]){ p }, 1, &r, &d);
        ck_assert_int_eq(ret, -ENOENT);
        ck_assert_msg(d.message && strstr(d.message, p), "message '%s'", d.message ? d.message : "NULL");
        env_release(&e);
}
END_TEST

START_TEST(input_text_file_is_enoexec)
{
        struct env e;
        struct doctor_report r = { 0 };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *p = at(TORCH "/version.py");
        struct doctor_options o;
        int ret;

        healthy_tree();
        env_make(&e, NULL, NULL);
        o = (struct doctor_options){ .environ = e.items.items, .ldcache = "/nonexistent" };
        ret = doctor_run(&o, (char *[]){ p }, 1, &r, &d);
        ck_assert_int_eq(ret, -ENOEXEC);
        ck_assert_msg(d.message && strstr(d.message, "version.py"), "message '%s'", d.message ? d.message : "NULL");
        env_release(&e);
}
END_TEST

START_TEST(input_empty_directory_is_enoent)
{
        _cleanup_free_ char *p = at("empty");
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct doctor_report r = { 0 };
        struct doctor_options o;
        struct env e;

        /* Under UBSan this used to stop at a qsort of a NULL array. */
        ck_assert_int_eq(mkdir(p, 0755), 0);
        env_make(&e, NULL, NULL);
        o = (struct doctor_options){ .environ = e.items.items, .ldcache = "/nonexistent" };
        ck_assert_int_eq(doctor_run(&o, (char *[]){ p }, 1, &r, &d), -ENOENT);
        ck_assert_msg(d.message && strstr(d.message, "no shared library"), "message '%s'",
                      d.message ? d.message : "NULL");
        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(input_fifo_version_py_is_not_opened)
{
        _cleanup_free_ char *vp = at(TORCH "/version.py");
        struct doctor_report r;
        struct env e;
        bool noted = false;

        healthy_tree();
        ck_assert_int_eq(unlink(vp), 0);
        ck_assert_int_eq(mkfifo(vp, 0644), 0);
        env_healthy(&e);
        diagnose(&e, NULL, TORCH, &r);
        for (size_t i = 0; i < r.notes.len; i++)
                noted |= strstr(r.notes.items[i], "version.py' is a FIFO, not a regular file") != NULL;
        ck_assert_msg(noted, "no note on the FIFO:\n%s", dump(&r));
        doctor_report_release(&r);
        env_release(&e);
}
END_TEST

/* --- version.py -------------------------------------------------------------------- */

static bool streq_null(const char *a, const char *b)
{
        return a && b ? streq(a, b) : a == b;
}

START_TEST(version_py_parses_the_fields)
{
        static const struct {
                const char *text;
                const char *version, *git, *cuda;
        } cases[] = {
                { "cuda = '11.8'\n", NULL, NULL, "11.8" },
                { "cuda: Optional[str] = \"12.4\"\n", NULL, NULL, "12.4" },
                { "cuda: Optional[str] = None\n", NULL, NULL, NULL },
                { "cuda = None\n__version__ = '2.3.0+cpu'\n", "2.3.0+cpu", NULL, NULL },
                { "debug = False\nhip: Optional[str] = None\n", NULL, NULL, NULL },
                { "", NULL, NULL, NULL },
                { "from typing import Optional\n\n"
                  "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
                  "__version__ = '2.5.1'\ndebug = False\ncuda: Optional[str] = '12.4'\n"
                  "git_version = '" GIT_VERSION "'\nhip: Optional[str] = None\n",
                  "2.5.1", GIT_VERSION, "12.4" },
                { "__version__ = \"2.6.0a0+gitabc\"\ngit_version = 'abc'\n", "2.6.0a0+gitabc", "abc", NULL },
                { NULL },
        };

        for (size_t i = 0; cases[i].text; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct doctor_built b = { 0 };
                int ret = torch_version_py_parse(cases[i].text, strlen(cases[i].text), "torch/version.py", &b, &d);

                ck_assert_msg(ret == 0, "case %zu: %d (%s)", i, ret, d.message ? d.message : "");
                ck_assert_msg(streq_null(b.torch_version, cases[i].version), "case %zu: __version__ %s", i,
                              b.torch_version ? b.torch_version : "NULL");
                ck_assert_msg(streq_null(b.git_version, cases[i].git), "case %zu: git_version %s", i,
                              b.git_version ? b.git_version : "NULL");
                ck_assert_msg(streq_null(b.cuda, cases[i].cuda), "case %zu: cuda %s", i, b.cuda ? b.cuda : "NULL");
                doctor_built_release(&b);
        }
}
END_TEST

START_TEST(version_py_unquoted_value_is_ebadmsg_with_line)
{
        static const struct {
                const char *text;
                const char *where;
        } cases[] = {
                { "__version__ = '2.5.1'\ndebug = False\ncuda = 12.4\n", "version.py:3" },
                { "cuda: Optional[str] = 12.4\n", "version.py:1" },
                { "__version__ = '2.5.1'\ngit_version = abc\n", "version.py:2" },
                { "cuda = '12\0004'\n", "version.py:1" },
                { NULL },
        };
        static const size_t lengths[] = { 0, 0, 0, 14 }; /* the last: a NUL inside the quotes */

        for (size_t i = 0; cases[i].text; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_free_ char *msg = NULL;
                struct doctor_built b = { 0 };
                size_t len = lengths[i] ? lengths[i] : strlen(cases[i].text);
                int ret = torch_version_py_parse(cases[i].text, len, "torch/version.py", &b, &d);

                ck_assert_msg(ret == -EBADMSG, "case %zu: %d", i, ret);
                /* Nothing is set on an error, not even what came before the bad line. */
                ck_assert_msg(!b.torch_version && !b.git_version && !b.cuda, "case %zu: fields set", i);
                msg = diag_format(&d);
                ck_assert_msg(strstr(msg, cases[i].where) != NULL, "case %zu: '%s' lacks '%s'", i, msg,
                              cases[i].where);
                doctor_built_release(&b);
        }
}
END_TEST

/* --- the command ------------------------------------------------------------------ */

/* Run `cudamod ARGS...` with exactly the environment e (plus PATH). */
static void doctor_cli(struct run_result *r, struct env *e, const char *const *args)
{
        const char *argv[16] = { getenv("CUDAMOD_BIN"), "doctor" };
        size_t n = 2;

        ck_assert_ptr_nonnull(argv[0]);
        for (; *args && n < ELEMENTSOF(argv) - 1; args++)
                argv[n++] = *args;
        argv[n] = NULL;
        env_set(e, "PATH", "/usr/bin:/bin");
        strv_add(&e->items, "LC_ALL=C");
        run_program(r, root, argv, (const char *const *)e->items.items);
}

/* A version.py carrying terminal escapes: the text report shows them as
 * \x1b, never the raw bytes; JSON keeps the value (jansson escapes it). */
START_TEST(command_escapes_control_bytes_from_files)
{
        _cleanup_free_ char *torch_dir = at(TORCH), *vp = at(TORCH "/version.py");
        struct run_result r = { 0 };
        struct env e;
        FILE *f;

        healthy_tree();
        f = fopen(vp, "w");
        ck_assert_ptr_nonnull(f);
        fputs("__version__ = '2.5.1\x1b]0;owned\x07\x1b[2J'\ngit_version = '\x1b[31mabc'\n"
              "cuda = '12.4\x1b[0m'\n", f);
        ck_assert_int_eq(fclose(f), 0);
        env_init(&e);
        env_dirs(&e, "LD_LIBRARY_PATH", WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB));
        doctor_cli(&r, &e, WORDS(torch_dir));
        ck_assert_msg(r.status == 0 || r.status == 1, "exit %d: %.2000s", r.status, r.err);
        ck_assert_msg(!strchr(r.out, '\x1b') && !strchr(r.out, '\x07'), "raw escapes in:\n%.2000s", r.out);
        ck_assert_msg(strstr(r.out, "torch 2.5.1\\x1b]0;owned\\x07\\x1b[2J (git \\x1b[31mab"),
                      "%.2000s", r.out);
        ck_assert_msg(strstr(r.out, "built for CUDA 12.4\\x1b[0m\n"), "%.2000s", r.out);
        run_result_release(&r);
        env_release(&e);
}
END_TEST

START_TEST(command_exit_status_and_json)
{
        _cleanup_free_ char *torch_dir = at(TORCH), *missing = at("no-such-torch");
        struct run_result r = { 0 };
        struct env e;
        json_error_t je;
        json_t *doc;

        healthy_tree();
        /* Healthy: exit 0, the JSON document, no finding. */
        env_init(&e);
        env_dirs(&e, "LD_LIBRARY_PATH", WORDS(NCCL_LIB, CUDNN91_LIB, CUDA12_LIB));
        doctor_cli(&r, &e, WORDS("--json", torch_dir));
        ck_assert_msg(r.status == 0, "exit %d: %.2000s", r.status, r.err);
        doc = json_loads(r.out, 0, &je);
        ck_assert_msg(doc, "not JSON (%s): %s", je.text, r.out);
        ck_assert_str_eq(json_string_value(json_object_get(doc, "cudamod")), "doctor");
        ck_assert_int_eq(json_integer_value(json_object_get(doc, "format")), 1);
        ck_assert_str_eq(json_string_value(json_object_get(doc, "status")), "ok");
        ck_assert_int_eq(json_array_size(json_object_get(doc, "findings")), 0);
        ck_assert_int_eq(json_array_size(json_object_get(doc, "libraries")), 7);
        ck_assert(json_is_array(json_object_get(json_object_get(doc, "modules"), "unprovided")));
        ck_assert(json_is_null(json_object_get(json_object_get(doc, "modules"), "module_load")));
        json_decref(doc);
        run_result_release(&r);
        env_release(&e);

        /* Nothing on the loader path: exit 1, the text report names R1. */
        env_init(&e);
        doctor_cli(&r, &e, WORDS(torch_dir));
        ck_assert_msg(r.status == 1, "exit %d: %.2000s%.1000s", r.status, r.out, r.err);
        ck_assert_msg(strstr(r.out, "[R1 unresolved] libcudart.so.12"), "%.2000s", r.out);
        /* The closing line counts the findings listed, "problem" for one.
         * How many there are depends on the machine: the command reads the
         * real /etc/ld.so.cache, where a CUDA toolkit of another major
         * (/usr/local/cuda-13.0/lib here) adds R4 and R5 findings beside R1;
         * a machine without one (the trixie chroot) has R1 alone. */
        {
                const char *h = strstr(r.out, "\nproblems (");
                unsigned long n;
                char want[64];

                ck_assert_msg(h && sscanf(h, "\nproblems (%lu)", &n) == 1 && n >= 1, "%.2000s", r.out);
                snprintf(want, sizeof(want), "\n%lu problem%s found\n", n, n == 1 ? "" : "s");
                ck_assert_msg(strstr(r.out, want), "no '%s' in:\n%s", want + 1, r.out + strlen(r.out) / 2);
        }
        run_result_release(&r);
        env_release(&e);

        /* Usage errors: exit 2, nothing on stdout. */
        env_init(&e);
        doctor_cli(&r, &e, WORDS(missing));
        ck_assert_msg(r.status == 2 && !*r.out && strstr(r.err, "no-such-torch"), "exit %d: %s%s", r.status,
                      r.out, r.err);
        run_result_release(&r);
        env_release(&e);
        env_init(&e);
        doctor_cli(&r, &e, WORDS("--bogus", torch_dir));
        ck_assert_msg(r.status == 2 && !*r.out, "exit %d: %s%s", r.status, r.out, r.err);
        run_result_release(&r);
        env_release(&e);
        env_init(&e);
        doctor_cli(&r, &e, (const char *const[]){ NULL });
        ck_assert_msg(r.status == 2 && !*r.out && strstr(r.err, "usage"), "exit %d: %s%s", r.status, r.out, r.err);
        run_result_release(&r);
        env_release(&e);
}
END_TEST

static Suite *doctor_suite(void)
{
        Suite *s = suite_create("doctor");
        TCase *tc = tcase_create("doctor");
        TCase *vp = tcase_create("version-py");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, healthy_source_build_reports_nothing);
        tcase_add_test(tc, built_cudnn_and_nccl_versions_from_runpath);
        tcase_add_test(tc, built_cuda_major_from_libcudart_without_version_py);
        tcase_add_test(tc, unresolved_without_ld_library_path_is_r1);
        tcase_add_test(tc, unresolved_driver_library_is_not_a_finding);
        tcase_add_test(tc, stubs_on_ld_library_path_is_r9);
        tcase_add_test(tc, stubs_in_torch_runpath_is_r9);
        tcase_add_test(tc, two_cudnn_versions_on_ld_library_path);
        tcase_add_test(tc, cudnn_older_than_the_build_is_r2);
        tcase_add_test(tc, cudnn_newer_than_the_build_is_fine);
        tcase_add_test(tc, nccl_older_than_the_build_is_r8);
        tcase_add_test(tc, cudnn_sublibrary_missing_is_r3);
        tcase_add_test(tc, cudnn_sublibrary_from_another_directory);
        tcase_add_test(tc, cudnn_for_another_cuda_major_is_r5);
        tcase_add_test(tc, nccl_for_another_cuda_major_is_r5);
        tcase_add_test(tc, cusparse_from_a_toolkit_of_another_major_is_r5);
        tcase_add_test(tc, older_nvjitlink_first_is_r7);
        tcase_add_test(tc, newer_nvjitlink_first_is_fine);
        tcase_add_test(tc, nvidia_wheels_next_to_source_build);
        tcase_add_test(tc, nvidia_wheels_of_a_wheel_torch_are_fine);
        tcase_add_test(tc, cuda_home_of_another_major);
        tcase_add_test(tc, nvcc_on_path_of_another_major);
        tcase_add_test(tc, cuda_path_without_cuda_home);
        tcase_add_test(tc, suggestions_choose_one_cuda_major);
        tcase_add_test(tc, suggestions_prefer_the_built_cudnn_version);
        tcase_add_test(tc, suggestions_include_the_nvshmem_of_torchs_cuda_major);
        tcase_add_test(tc, suggestions_take_the_nvshmem_cuda_from_its_spec_json);
        tcase_add_test(tc, suggestions_without_cudnn_module_leave_it_unprovided);
        tcase_add_test(tc, suggestions_add_the_magma_of_torchs_cuda_major);
        tcase_add_test(tc, cusparselt_of_another_cuda_major_is_r5);
        tcase_add_test(tc, suggestions_cover_all_seven_components);
        tcase_add_test(tc, suggestions_include_cudss_of_the_cuda_major);
        tcase_add_test(tc, suggestions_include_cusparselt_of_torchs_cuda_major);
        tcase_add_test(tc, cusparselt_from_a_runtime_only_module_is_fine);
        tcase_add_test(tc, debian_torch_follows_its_libraries_through_the_loader_cache);
        tcase_add_test(tc, debian_torch_failure_is_oserror_or_importerror_as_python_raises_it);
        tcase_add_test(tc, suggestions_say_when_no_module_is_for_torchs_cuda_major);
        tcase_add_test(tc, suggestions_know_the_cuda_major_of_a_cuda_11_module);
        tcase_add_test(tc, suggestions_say_when_no_toolkit_is_for_torchs_cuda_major);
        tcase_add_test(tc, input_torch_lib_dir_is_the_package);
        tcase_add_test(tc, input_one_library_file);
        tcase_add_test(tc, input_other_directory_takes_its_libraries);
        tcase_add_test(tc, input_missing_path_is_enoent);
        tcase_add_test(tc, input_text_file_is_enoexec);
        tcase_add_test(tc, input_empty_directory_is_enoent);
        tcase_add_test(tc, input_fifo_version_py_is_not_opened);
        tcase_add_test(tc, command_escapes_control_bytes_from_files);
        tcase_add_test(tc, command_exit_status_and_json);
        suite_add_tcase(s, tc);

        tcase_add_test(vp, version_py_parses_the_fields);
        tcase_add_test(vp, version_py_unquoted_value_is_ebadmsg_with_line);
        suite_add_tcase(s, vp);
        return s;
}

int main(void)
{
        return run_suite(doctor_suite());
}
