/* validate-elf.c: the closure and lazy checks (validate.h), decided from the
 * files alone with resolve.h.
 *
 * Fail is for what makes a program that uses the module break at load time
 * or on the first call into a lazily loaded library: a need that resolves
 * nowhere, a cuDNN sub-library that is missing or comes from another
 * install or version (CUDNN_STATUS_SUBLIBRARY_*), two cuDNN versions
 * reachable, no libcublasLt/libnvrtc for the CUDA major cuDNN was built
 * for, a libnvJitLink older than the toolkit of the cuSPARSE that needs it
 * (undefined symbol __nvJitLink*_12_N). Warn is for what we could not
 * decide or what only might break: a library of the module we cannot read,
 * a driver library shipped inside the module, an unreadable ld.so.cache,
 * two copies of the same cuDNN version, a CUDA major or a file version we
 * cannot tell, a library directory too large to list (WALK_MAX_ENTRIES). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "validate-elf.h"
#include "detect.h"
#include "diag.h"
#include "elf-file.h"
#include "libfile.h"
#include "resolve.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "banned.h"

#define SHOW_PER_LIBRARY 3
#define SHOW_LIBRARIES 8

/* Set ret: the summary, then the problems' lines. */
static void findings_finish(struct findings *f, const char *summary, struct check *ret)
{
        check_set(ret, f->worst, "%s%s%s", summary, f->problems.len ? "\n" : "", f->problems.buf);
        findings_release(f);
}

/* Nothing to check: skip, unless reading what was there went wrong. */
static void findings_skip(struct findings *f, const char *why, struct check *ret)
{
        if (f->worst == CHECK_PASS) {
                check_set(ret, CHECK_SKIP, "%s", why);
                findings_release(f);
        } else {
                findings_finish(f, why, ret);
        }
}

/* The resolver's view of the module under test: its LD_LIBRARY_PATH and
 * the real loader cache (read per check: it is small). */
struct elf_context {
        struct resolve_env env;
        struct ldcache *cache;
};

static void elf_context_init(struct elf_context *c, const struct validate_module *m,
                             struct findings *f)
{
        struct diag d = DIAG_INIT;

        c->cache = NULL;
        if (ldcache_load(NULL, &c->cache, &d) < 0)
                findings_add(f, CHECK_WARN, "%s; the loader cache was not searched", d.message);
        diag_release(&d);
        resolve_env_init(&c->env, NULL, c->cache);
        for (size_t i = 0; i < m->ld_library_path.len; i++)
                strv_add(&c->env.ld_library_path, m->ld_library_path.items[i]);
}

static void elf_context_release(struct elf_context *c)
{
        resolve_env_release(&c->env);
        ldcache_free(c->cache);
        c->cache = NULL;
}

static void own_libs_collect(const struct validate_module *m, struct libset *ret,
                             struct findings *f)
{
        for (size_t i = 0; i < m->own_libdirs.len; i++) {
                struct strv names = { 0 };
                int r = dir_list(AT_FDCWD, m->own_libdirs.items[i], &names);

                if (r == -E2BIG)
                        findings_add(f, CHECK_WARN, "'%s' holds more than %d entries, its libraries not checked",
                                     m->own_libdirs.items[i], WALK_MAX_ENTRIES);
                if (r < 0)
                        continue;  /* the paths check reports any other error */
                for (size_t k = 0; k < names.len; k++) {
                        struct diag d = DIAG_INIT;

                        /* A system directory holds every package's
                         * libraries: only the kind's are the module's. */
                        if (m->system && component_of_soname(names.items[k]) != m->kind)
                                continue;
                        if (libset_add(ret, m->own_libdirs.items[i], names.items[k], &d) < 0)
                                findings_add(f, CHECK_WARN, "%s, skipping", d.message);
                        diag_release(&d);
                }
                strv_release(&names);
        }
}

/* One line for a library of the module with needs that resolve nowhere. */
static void report_missing(struct findings *f, const struct libset_entry *lib, const struct strv *missing)
{
        struct strbuf sb = STRBUF_INIT;
        struct strv advice = { 0 };

        for (size_t i = 0; i < missing->len; i++)
                strv_push(&advice, soname_advice(missing->items[i]));
        strv_sort_uniq(&advice);
        strbuf_addf(&sb, "%s needs ", lib->name);
        strbuf_add_list(&sb, missing, SHOW_PER_LIBRARY);
        strbuf_addf(&sb, ", which %s nowhere: ", missing->len == 1 ? "resolves" : "resolve");
        for (size_t i = 0; i < advice.len; i++)
                strbuf_addf(&sb, "%s%s", i ? "; " : "", advice.items[i]);
        findings_add(f, CHECK_FAIL, "%s", sb.buf);
        strv_release(&advice);
        strbuf_release(&sb);
}

/* Totals of the closure check. */
struct closure_count {
        size_t needs, failing_libs;
        struct strv driver;  /* driver libraries needed, left to the driver */
};

/* Resolve the needs of one library of the module. */
static void closure_library(const struct elf_context *c, const struct libset_entry *lib,
                            struct closure_count *n, struct findings *f)
{
        struct strv missing = { 0 };

        if (resolve_is_driver_library(lib->name))
                findings_add(f, CHECK_WARN, "'%s' is a driver library inside the module: the "
                             "driver's own must be loaded; remove it from the module's "
                             "library directory", lib->path);
        for (size_t i = 0; i < lib->info.needed.len; i++) {
                const char *soname = lib->info.needed.items[i];
                struct resolved r = { 0 };

                n->needs++;
                if (resolve_is_driver_library(soname)) {
                        if (!strv_contains(&n->driver, soname))
                                strv_add(&n->driver, soname);
                        continue;
                }
                if (resolve_needed(&c->env, lib->path, &lib->info, soname, &r, NULL) < 0 ||
                    r.source == RESOLVE_NOT_FOUND)
                        strv_add(&missing, soname);
                resolved_release(&r);
        }
        if (missing.len && n->failing_libs++ < SHOW_LIBRARIES)
                report_missing(f, lib, &missing);
        strv_release(&missing);
}

void check_closure(const struct validate_module *m, struct check *ret)
{
        struct findings f = FINDINGS_INIT;
        struct closure_count n = { 0 };
        struct libset libs = { 0 };
        struct elf_context c;
        struct strbuf summary = STRBUF_INIT;

        ret->id = "closure";
        own_libs_collect(m, &libs, &f);
        if (libs.n == 0) {
                findings_skip(&f, "no shared library in the module's library directories", ret);
                return;
        }
        elf_context_init(&c, m, &f);
        for (size_t i = 0; i < libs.n; i++)
                closure_library(&c, &libs.items[i], &n, &f);
        if (n.failing_libs > SHOW_LIBRARIES)
                findings_add(&f, CHECK_FAIL, "and %zu more libraries", n.failing_libs - SHOW_LIBRARIES);
        strbuf_addf(&summary, "%zu %s, %zu %s", libs.n, libs.n == 1 ? "library" : "libraries",
                    n.needs, n.needs == 1 ? "need" : "needs");
        strbuf_addstr(&summary, n.failing_libs ? "; some do not resolve" : " resolved");
        if (n.driver.len) {
                strbuf_addstr(&summary, "; ");
                strbuf_add_list(&summary, &n.driver, n.driver.len);
                strbuf_addstr(&summary, " left to the driver");
        }
        findings_finish(&f, summary.buf, ret);
        strbuf_release(&summary);
        strv_release(&n.driver);
        elf_context_release(&c);
        libset_release(&libs);
}

/* --- lazy ------------------------------------------------------------ */

/* The module's library stem.so.N: path, ELF facts and N; NULL when absent
 * or unreadable (reported). */
static char *own_library(const struct validate_module *m, const char *stem, struct elf_info *info,
                         unsigned long *major, struct findings *f)
{
        char *path = find_soname_file(&m->own_libdirs, stem, major);
        struct diag d = DIAG_INIT;

        if (path && elf_read_info(AT_FDCWD, path, info, &d) < 0) {
                findings_add(f, CHECK_FAIL, "%s", d.message);
                free(TAKE_PTR(path));
        }
        diag_release(&d);
        return path;
}

/* The CUDA majors whose libcublasLt the LD_LIBRARY_PATH offers ("13"). */
static void offered_cuda_majors(const struct validate_module *m, struct strv *ret)
{
        for (size_t i = 0; i < m->ld_library_path.len; i++) {
                struct strv names = { 0 };

                if (dir_list(AT_FDCWD, m->ld_library_path.items[i], &names) < 0)
                        continue;
                for (size_t k = 0; k < names.len; k++) {
                        struct version v;

                        if (soname_version_parse(names.items[k], "libcublasLt", &v) >= 0 && v.count == 1)
                                strv_push(ret, xasprintf("%lu", v.n[0]));
                }
                strv_release(&names);
        }
        strv_sort_uniq(ret);
}

/* cuDNN as the process would see it: the dispatcher of the module and the
 * sub-libraries it dlopen()s. */
struct cudnn {
        char *path;              /* the module's libcudnn.so.N */
        struct elf_info info;
        unsigned long major;
        struct version version;  /* its file version (count 0: unknown) */
        struct strv subs;        /* where each sub-library resolves (found ones) */
};

static void cudnn_release(struct cudnn *c)
{
        free(c->path);
        elf_info_release(&c->info);
        strv_release(&c->subs);
}

/* libcudnn.so.N in more than one LD_LIBRARY_PATH directory. */
static void cudnn_check_reachable(const struct validate_module *m, const struct cudnn *c,
                                  struct findings *f)
{
        _cleanup_free_ char *soname = xasprintf("libcudnn.so.%lu", c->major);
        struct strv files = { 0 }, shown = { 0 };
        bool differ = false;

        for (size_t i = 0; i < m->ld_library_path.len; i++) {
                _cleanup_free_ char *p = path_join(m->ld_library_path.items[i], soname);
                _cleanup_free_ char *real = realpath(p, NULL);
                struct version v;

                if (!real || strv_contains(&files, real))
                        continue;
                strv_add(&files, real);
                v = lib_file_version(p, "libcudnn");
                differ |= !v.count || !c->version.count || version_compare(&v, &c->version) != 0;
                {
                        _cleanup_free_ char *vs = lib_version_string(&v);
                        strv_push(&shown, xasprintf("%s in '%s'", vs, m->ld_library_path.items[i]));
                }
        }
        if (files.len > 1) {
                struct strbuf sb = STRBUF_INIT;

                strbuf_add_list(&sb, &shown, shown.len);
                if (differ)
                        findings_add(f, CHECK_FAIL, "two cuDNN versions are reachable through "
                                     "LD_LIBRARY_PATH (%s): sub-libraries may load from the other "
                                     "(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH); unload the other "
                                     "cudnn module", sb.buf);
                else
                        findings_add(f, CHECK_WARN, "%s is reachable twice through LD_LIBRARY_PATH "
                                     "(%s); keep one", soname, sb.buf);
                strbuf_release(&sb);
        }
        strv_release(&files);
        strv_release(&shown);
}

/* The sub-libraries to check: those of the major, and any other
 * libcudnn_*.so.N beside the dispatcher. */
static void cudnn_sub_sonames(const struct cudnn *c, struct strv *ret)
{
        _cleanup_free_ char *dir = path_dirname(c->path);
        _cleanup_free_ char *suffix = xasprintf(".so.%lu", c->major);
        struct strv names = { 0 };

        for (const char *const *s = component_cudnn.dlopened(c->major); s && *s; s++)
                strv_push(ret, xasprintf("%s%s", *s, suffix));
        if (dir_list(AT_FDCWD, dir, &names) >= 0)
                for (size_t i = 0; i < names.len; i++)
                        if (startswith(names.items[i], "libcudnn_") && endswith(names.items[i], suffix))
                                strv_add(ret, names.items[i]);
        strv_release(&names);
        strv_sort_uniq(ret);
}

/* One sub-library, dlopen()ed by soname from the dispatcher: from its
 * directory and of its version. Returns false when that directory lacks it
 * (wherever else it may resolve). */
static bool cudnn_check_sub(const struct elf_context *ctx, struct cudnn *c, const char *soname,
                            struct findings *f)
{
        _cleanup_free_ char *stem = soname_stem(soname), *dir = path_dirname(c->path);
        _cleanup_free_ char *own = path_join(dir, soname), *fix = NULL;
        struct resolved r = { 0 };
        struct version v;

        if (access(own, F_OK) < 0 ||
            resolve_needed(&ctx->env, c->path, &c->info, soname, &r, NULL) < 0 ||
            r.source == RESOLVE_NOT_FOUND) {
                resolved_release(&r);
                return false;
        }
        v = lib_file_version(r.path, stem);
        if (!same_real_dir(r.path, c->path)) {
                fix = r.source == RESOLVE_LD_LIBRARY_PATH
                              ? xasprintf("remove '%s' from LD_LIBRARY_PATH", r.searched_entry)
                              : xasprintf("put '%s' first in LD_LIBRARY_PATH", dir);
                findings_add(f, CHECK_FAIL, "%s resolves to '%s' (%s), not to libcudnn's directory "
                             "'%s': sub-libraries from two installs fail with "
                             "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH; %s", soname, r.path,
                             resolve_source_to_string(r.source), dir, fix);
        } else if (v.count && c->version.count && version_compare(&v, &c->version) != 0) {
                _cleanup_free_ char *a = lib_version_string(&v), *b = lib_version_string(&c->version);
                findings_add(f, CHECK_FAIL, "'%s' is version %s but libcudnn is %s: reinstall "
                             "cuDNN %s whole", r.path, a, b, b);
        }
        strv_add(&c->subs, r.path);
        resolved_release(&r);
        return true;
}

static void cudnn_check_subs(const struct elf_context *ctx, struct cudnn *c, struct findings *f)
{
        _cleanup_free_ char *dir = path_dirname(c->path), *ver = lib_version_string(&c->version);
        struct strv sonames = { 0 }, missing = { 0 };

        cudnn_sub_sonames(c, &sonames);
        for (size_t i = 0; i < sonames.len; i++)
                if (!cudnn_check_sub(ctx, c, sonames.items[i], f))
                        strv_add(&missing, sonames.items[i]);
        if (missing.len) {
                struct strbuf sb = STRBUF_INIT;

                strbuf_add_list(&sb, &missing, missing.len);
                findings_add(f, CHECK_FAIL, "libcudnn.so.%lu loads %s, which %s missing from its "
                             "directory (CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED, or a mix with "
                             "another cuDNN found elsewhere): the cuDNN in '%s' is incomplete; "
                             "reinstall cuDNN %s whole", c->major, sb.buf,
                             missing.len == 1 ? "is" : "are", dir, ver);
                strbuf_release(&sb);
        }
        strv_release(&sonames);
        strv_release(&missing);
}

/* Advice when the CUDA libraries of cuDNN's CUDA major do not resolve. */
static char *cuda_major_advice(const struct validate_module *m, unsigned long major)
{
        struct strv offered = { 0 };
        struct strbuf sb = STRBUF_INIT;

        offered_cuda_majors(m, &offered);
        strbuf_addf(&sb, "load a cuda/%lu.x module", major);
        for (size_t i = 0; i < offered.len; i++)
                if (strtoul(offered.items[i], NULL, 10) != major)
                        strbuf_addf(&sb, " or install a cuDNN built for CUDA %s", offered.items[i]);
        strv_release(&offered);
        return strbuf_detach(&sb);
}

/* libcublasLt.so.N and libnvrtc.so.N of the CUDA major cuDNN is built for
 * resolve from the sub-library that loads them. Returns the major (0:
 * unknown). */
static unsigned long cudnn_check_cuda(const struct validate_module *m, const struct elf_context *ctx,
                                      const struct cudnn *c, struct findings *f)
{
        static const char *const stems[] = { "libcublasLt", "libnvrtc" };
        struct strv missing = { 0 };
        struct elf_info info = { 0 };
        unsigned long major = 0;
        size_t src;

        for (src = 0; src < c->subs.len && !major; src++) {
                elf_info_release(&info);
                if (elf_read_info(AT_FDCWD, c->subs.items[src], &info, NULL) >= 0)
                        major = lib_cuda_major_named_by(c->subs.items[src], &info);
        }
        if (!major) {
                findings_add(f, CHECK_WARN, "cannot tell which CUDA cuDNN was built for (no "
                             "sub-library names libcublasLt.so.N or libnvrtc.so.N), so their "
                             "libcublasLt and libnvrtc were not checked");
                elf_info_release(&info);
                return 0;
        }
        for (size_t k = 0; k < ELEMENTSOF(stems); k++) {
                _cleanup_free_ char *soname = xasprintf("%s.so.%lu", stems[k], major);
                struct resolved r = { 0 };

                if (resolve_needed(&ctx->env, c->subs.items[src - 1], &info, soname, &r, NULL) < 0 ||
                    r.source == RESOLVE_NOT_FOUND)
                        strv_add(&missing, soname);
                resolved_release(&r);
        }
        if (missing.len) {
                _cleanup_free_ char *advice = cuda_major_advice(m, major);
                struct strbuf sb = STRBUF_INIT;

                strbuf_add_list(&sb, &missing, missing.len);
                findings_add(f, CHECK_FAIL, "this cuDNN is built for CUDA %lu ('%s' loads "
                             "libcublasLt.so.%lu), but %s %s nowhere: %s", major,
                             path_basename(c->subs.items[src - 1]), major, sb.buf,
                             missing.len == 1 ? "resolves" : "resolve", advice);
                strbuf_release(&sb);
        }
        strv_release(&missing);
        elf_info_release(&info);
        return major;
}

void validate_lazy_cudnn(const struct validate_module *m, struct check *ret)
{
        struct findings f = FINDINGS_INIT;
        struct cudnn c = { 0 };
        struct elf_context ctx;
        _cleanup_free_ char *ver = NULL, *dir = NULL, *summary = NULL;
        unsigned long cuda;

        c.path = own_library(m, "libcudnn", &c.info, &c.major, &f);
        if (!c.path) {
                findings_skip(&f, "no libcudnn.so.N in the module's library directories", ret);
                return;
        }
        elf_context_init(&ctx, m, &f);
        c.version = lib_file_version(c.path, "libcudnn");
        ver = lib_version_string(&c.version);
        dir = path_dirname(c.path);
        cudnn_check_reachable(m, &c, &f);
        cudnn_check_subs(&ctx, &c, &f);
        cuda = cudnn_check_cuda(m, &ctx, &c, &f);
        if (f.worst == CHECK_PASS)
                summary = xasprintf("cuDNN %s in '%s': %zu sub-libraries resolve there, all %s; "
                                    "built for CUDA %lu, whose libcublasLt.so.%lu and libnvrtc.so.%lu "
                                    "resolve", ver, dir, c.subs.len, ver, cuda, cuda, cuda);
        else
                summary = xasprintf("cuDNN %s in '%s':", ver, dir);
        findings_finish(&f, summary, ret);
        elf_context_release(&ctx);
        cudnn_release(&c);
}

/* The libnvJitLink that resolves for cuSPARSE is its toolkit's or newer. */
static void nvjitlink_compare(const char *cusparse, const struct resolved *r, struct findings *f)
{
        _cleanup_free_ char *dir = real_dirname(cusparse);
        struct version want = libdir_toolkit_version(dir ? dir : "."), have = lib_file_version(r->path, "libnvJitLink");
        _cleanup_free_ char *ws = lib_version_string(&want), *hs = lib_version_string(&have);
        struct version have2 = version_truncate(&have, 2);

        if (!want.count || !have.count)
                findings_add(f, CHECK_WARN, "%s resolves to '%s' (%s), outside cuSPARSE's directory "
                             "'%s', and the versions cannot be compared (toolkit %s, libnvJitLink %s): "
                             "make sure it is from the same CUDA or a newer one", r->soname, r->path,
                             resolve_source_to_string(r->source), dir, ws, hs);
        else if (version_compare(&have2, &want) < 0)
                findings_add(f, CHECK_FAIL, "%s resolves to '%s' (%s, through %s), older than the "
                             "CUDA %s toolkit of libcusparse in '%s': cuSPARSE fails with "
                             "\"undefined symbol: __nvJitLinkComplete_%lu_%lu\"; put '%s' first in "
                             "LD_LIBRARY_PATH or unload the older cuda module", r->soname, r->path,
                             hs, resolve_source_to_string(r->source), ws, dir, want.n[0], want.n[1], dir);
}

void validate_lazy_cuda(const struct validate_module *m, struct check *ret)
{
        struct findings f = FINDINGS_INIT;
        struct elf_info info = { 0 };
        struct resolved r = { 0 };
        struct elf_context ctx;
        unsigned long major = 0;
        _cleanup_free_ char *cusparse = own_library(m, "libcusparse", &info, &major, &f);
        _cleanup_free_ char *summary = NULL, *jit = NULL;

        for (size_t i = 0; cusparse && i < info.needed.len && !jit; i++)
                if (startswith(info.needed.items[i], "libnvJitLink.so."))
                        jit = xstrdup(info.needed.items[i]);
        if (!jit) {
                if (cusparse)
                        findings_finish(&f, "libcusparse does not load libnvJitLink", ret);
                else
                        findings_skip(&f, "no libcusparse.so.N in the module: nothing loaded lazily to check", ret);
                elf_info_release(&info);
                return;
        }
        elf_context_init(&ctx, m, &f);
        if (resolve_needed(&ctx.env, cusparse, &info, jit, &r, NULL) < 0 || r.source == RESOLVE_NOT_FOUND) {
                _cleanup_free_ char *advice = soname_advice(jit);
                findings_add(&f, CHECK_FAIL, "libcusparse.so.%lu needs %s, which resolves nowhere: %s",
                             major, jit, advice);
        } else if (!same_real_dir(r.path, cusparse))
                nvjitlink_compare(cusparse, &r, &f);
        summary = f.worst == CHECK_PASS
                          ? xasprintf("%s resolves to '%s', from the same toolkit as libcusparse.so.%lu "
                                      "or a newer one", jit, r.path, major)
                          : xasprintf("libcusparse.so.%lu and %s:", major, jit);
        findings_finish(&f, summary, ret);
        resolved_release(&r);
        elf_context_release(&ctx);
        elf_info_release(&info);
}

void check_lazy(const struct validate_module *m, struct check *ret)
{
        ret->id = "lazy";
        if (m->kind && m->kind->lazy)
                m->kind->lazy(m, ret);
        else if (m->kind)
                check_set(ret, CHECK_SKIP, "%s dlopen()s nothing that the module must provide", m->kind->label);
        else
                check_set(ret, CHECK_SKIP, "not a cuda or cudnn module: nothing loaded lazily to check");
}
