/* lazy.c: the lazy checks of the toolkit and of cuDNN (lazy.h), and the
 * resolver's view of the module under test that they and the closure
 * check (validate-elf.c) share. Fail and warn as validate-elf.c says. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>

#include "validate-check.h"
#include "component.h"
#include "detect.h"
#include "diag.h"
#include "elf-file.h"
#include "lazy.h"
#include "libfile.h"
#include "resolve.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "banned.h"

void elf_context_init(struct elf_context *c, const struct validate_module *m, struct findings *f)
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

void elf_context_release(struct elf_context *c)
{
        resolve_env_release(&c->env);
        ldcache_free(c->cache);
        c->cache = NULL;
}

char *validate_own_library(const struct validate_module *m, const char *stem, struct elf_info *info,
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
static void cudnn_sub_sonames(const struct validate_module *m, const struct cudnn *c, struct strv *ret)
{
        _cleanup_free_ char *dir = path_dirname(c->path);
        _cleanup_free_ char *suffix = xasprintf(".so.%lu", c->major);
        struct strv names = { 0 };

        for (const char *const *s = m->kind->dlopened(c->major); s && *s; s++)
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

static void cudnn_check_subs(const struct validate_module *m, const struct elf_context *ctx, struct cudnn *c,
                             struct findings *f)
{
        _cleanup_free_ char *dir = path_dirname(c->path), *ver = lib_version_string(&c->version);
        struct strv sonames = { 0 }, missing = { 0 };

        cudnn_sub_sonames(m, c, &sonames);
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

        c.path = validate_own_library(m, "libcudnn", &c.info, &c.major, &f);
        if (!c.path) {
                findings_skip(&f, "no libcudnn.so.N in the module's library directories", ret);
                return;
        }
        elf_context_init(&ctx, m, &f);
        c.version = lib_file_version(c.path, "libcudnn");
        ver = lib_version_string(&c.version);
        dir = path_dirname(c.path);
        cudnn_check_reachable(m, &c, &f);
        cudnn_check_subs(m, &ctx, &c, &f);
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
        _cleanup_free_ char *cusparse = validate_own_library(m, "libcusparse", &info, &major, &f);
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
                /* libnvJitLink is the toolkit's: its advice names it. */
                _cleanup_free_ char *advice = soname_advice_of(component_has_soname(m->kind, jit) ? m->kind : NULL,
                                                               jit);
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
