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
