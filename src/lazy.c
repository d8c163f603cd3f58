/* lazy.c: the lazy check of the toolkit (lazy.h), and what it, cuDNN's
 * (component-cudnn.c) and the closure check (validate-elf.c) share: the
 * resolver's view of the module under test, the module's own library.
 * Fail and warn as validate-elf.c says. */
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
