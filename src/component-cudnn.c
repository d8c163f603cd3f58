/* component-cudnn.c: cuDNN. Its 8 and 9 installs (LAYOUTS.md §2): tarballs with lib
 * or lib64, copies inside a CUDA prefix, pip wheels (nvidia/cudnn), conda,
 * Spack and EasyBuild prefixes, and distribution multiarch packages. */
#include <errno.h>
#include <fcntl.h>

#include "component-cudnn.h"
#include "detect.h"
#include "diag.h"
#include "doctor-finding.h"
#include "elf-file.h"
#include "install.h"
#include "lazy.h"
#include "libfile.h"
#include "name-hint.h"
#include "resolve.h"
#include "strbuf.h"
#include "util.h"
#include "util-file.h"
#include "util-path.h"
#include "validate-check.h"
#include "version.h"
#include "walk.h"
#include "banned.h"

static const char *const cudnn8_libs[] = {
        "libcudnn_ops_infer", "libcudnn_ops_train", "libcudnn_cnn_infer", "libcudnn_cnn_train",
        "libcudnn_adv_infer", "libcudnn_adv_train", NULL,
};

static const char *const cudnn9_libs[] = {
        "libcudnn_graph", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv", "libcudnn_heuristic",
        "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled", NULL,
};

static const char *const *cudnn_sublibraries(unsigned long major)
{
        return major == 8 ? cudnn8_libs : major == 9 ? cudnn9_libs : NULL;
}

/* The version in cudnn_version.h (cuDNN >= 8) or cudnn.h (<= 7), looking
 * also in include/<triple> where the distribution packages put them. */
static int header_version(struct install *in, int fd, const char *dir_path,
                          const char *include_rel, struct version *ret)
{
        static const char *const files[] = {
                "cudnn_version.h", "cudnn_version_v9.h", "cudnn_version_v8.h", "cudnn.h",
        };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *rel = path_join(include_rel, files[i]);
                struct strbuf sb = STRBUF_INIT;
                int r = -ENOENT;

                if (read_head_at(fd, dir_path, rel, DETECT_MAX_HEADER_HEAD, in, &sb) >= 0)
                        r = cudnn_header_parse(sb.buf, sb.len, ret);
                strbuf_release(&sb);
                if (r >= 0)
                        return 0;
        }
        return -ENOENT;
}

/* The CUDA major the build targets, from its ELF files: DT_NEEDED
 * libcublas.so.N (cuDNN 8) or the libcublasLt.so.N / libnvrtc.so.N strings
 * it dlopens (cuDNN 9). 0 when the files do not tell. */
static unsigned long cuda_major_from_elf(int fd, const struct libdir *ld,
                                         unsigned long cudnn_major)
{
        if (cudnn_major == 8) {
                struct libdir sub = { 0 };
                unsigned long major = 0;

                if (libdir_in(fd, ld->rel, "libcudnn_ops_infer", &sub) >= 0) {
                        _cleanup_free_ char *rel = path_join(ld->rel, sub.soname_file);
                        struct elf_info info = { 0 };
                        struct diag d = DIAG_INIT;

                        if (elf_read_info(fd, rel, &info, &d) >= 0)
                                for (size_t i = 0; i < info.needed.len && !major; i++) {
                                        struct version v;
                                        if (soname_version_parse(info.needed.items[i], "libcublasLt", &v) >= 0 ||
                                            soname_version_parse(info.needed.items[i], "libcublas", &v) >= 0)
                                                major = v.n[0];
                                }
                        elf_info_release(&info);
                        diag_release(&d);
                }
                libdir_release(&sub);
                return major;
        }
        for (const char *const *lib = (const char *const[]){ "libcudnn_engines_precompiled",
                                                           "libcudnn_adv", NULL };
             *lib; lib++) {
                static const char *const prefixes[] = { "libcublasLt.so.", "libnvrtc.so." };
                struct libdir sub = { 0 };
                unsigned long major = 0;

                if (libdir_in(fd, ld->rel, *lib, &sub) < 0)
                        continue;
                for (size_t p = 0; p < ELEMENTSOF(prefixes) && !major; p++) {
                        _cleanup_free_ char *rel = path_join(ld->rel, sub.soname_file);
                        struct strv found = { 0 };
                        struct diag d = DIAG_INIT;

                        if (elf_find_strings(fd, rel, prefixes[p], &found, &d) >= 0)
                                for (size_t i = 0; i < found.len && !major; i++) {
                                        struct version v;
                                        /* "libnvrtc.so.%d" is a format, not a major. */
                                        if (version_parse(found.items[i] + strlen(prefixes[p]), &v) >= 0)
                                                major = v.n[0];
                                }
                        strv_release(&found);
                        diag_release(&d);
                }
                libdir_release(&sub);
                if (major)
                        return major;
        }
        return 0;
}

/* Every sub-library of the major is there, from the same version. */
static void check_sub_libraries(struct install *in, int fd, const struct libdir *ld,
                                unsigned long major)
{
        const char *const *libs = cudnn_sublibraries(major);
        struct strbuf missing = STRBUF_INIT;

        if (!libs)
                return;
        for (; *libs; libs++) {
                struct libdir sub = { 0 };

                if (libdir_in(fd, ld->rel, *libs, &sub) < 0) {
                        strbuf_addf(&missing, "%s%s.so.%lu", missing.len ? ", " : "", *libs, major);
                        continue;
                }
                if (sub.soname.n[0] != major)
                        install_add_problem(in, "version-mismatch", "'%s/%s' is not cuDNN %lu",
                                            in->lib_dir, sub.soname_file, major);
                if (sub.full.count && ld->full.count && version_compare(&sub.full, &ld->full) != 0) {
                        _cleanup_free_ char *a = version_to_string(&sub.full, 0);
                        _cleanup_free_ char *b = version_to_string(&ld->full, 0);
                        install_add_problem(in, "version-mismatch",
                                            "%s is version %s but libcudnn is %s", *libs, a, b);
                }
                libdir_release(&sub);
        }
        if (missing.len)
                install_add_problem(in, "missing-library", "missing in '%s': %s", in->lib_dir,
                                    missing.buf);
        strbuf_release(&missing);
}

/* The version and CUDA major told by names: the directory and its parent
 * (archives, Spack, EasyBuild) and the wheel's dist-info. */
static void name_hints(const struct walk_dir *dir, const struct dist_infos *di,
                       struct name_hint *ret, const char **ret_source)
{
        struct name_hint h = { 0 };

        *ret = (struct name_hint){ 0 };
        if (dist_infos_name_hint(di, "nvidia-cudnn", &component_cudnn, &h) >= 0) {
                *ret = h;
                *ret_source = "the wheel name";
                return;
        }
        if (name_hint_of(&component_cudnn, path_basename(dir->realpath),
                         dir->parent_realpath ? path_basename(dir->parent_realpath) : NULL,
                         &h) >= 0) {
                *ret = h;
                *ret_source = "the directory name";
                return;
        }
        /* cuDNN <= 8.2 archives unpack to cuda/{include,lib64}: the archive
         * name is the parent's (cudnn-11.4-linux-x64-v8.2.4.15). */
        if (streq(path_basename(dir->realpath), "cuda") && dir->parent_realpath &&
            name_hint_of(&component_cudnn, path_basename(dir->parent_realpath), NULL, &h) >= 0) {
                *ret = h;
                *ret_source = "the archive directory name";
        }
}

static const char *const cudnn_headers[] = {
        "cudnn_version.h", "cudnn.h", "cudnn_version_v9.h", "cudnn_version_v8.h", NULL,
};

static void detect_cudnn(const struct walk_dir *dir, struct install_list *l,
                         struct walk_verdict *verdict)
{
        const char *hint_source = "the directory name";
        struct library_find f;
        struct dist_infos di = { 0 };
        struct name_hint hint;
        struct version header = { 0 };
        struct version_vote votes[3];
        struct install *in;
        unsigned long elf_major;

        if (library_find(dir, "libcudnn", cudnn_headers, &f) < 0)
                return;
        in = library_install_new(&component_cudnn, dir, &f, cudnn_headers);
        if (f.include_rel)
                (void)header_version(in, f.include_fd, f.usr ? f.usr : dir->path, f.include_rel,
                                     &header);

        if (f.site)
                dist_infos_read_path(f.site, &di);
        else if (walk_dir_find(dir, "dist-info"))
                dist_infos_read(dir->fd, "dist-info", &di);
        name_hints(dir, &di, &hint, &hint_source);

        votes[0] = (struct version_vote){ header, "cudnn_version.h" };
        votes[1] = (struct version_vote){ f.ld.full.count >= 3 ? f.ld.full : f.ld.soname,
                                          f.ld.full.count >= 3 ? "the libcudnn file name"
                                                               : "the libcudnn soname" };
        votes[2] = (struct version_vote){ hint.version, hint_source };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 3);
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the cuDNN version",
                                    in->prefix);
        /* The build number (9.7.1.26) is in no header, only in names. */
        if (hint.version.count == 4 && in->version.count) {
                struct version xyz = version_truncate(&hint.version, 3);
                if (version_compare(&xyz, &in->version) == 0)
                        in->build = xasprintf("%lu", hint.version.n[3]);
        }

        elf_major = cuda_major_from_elf(dir->fd, &f.ld, f.ld.soname.n[0]);
        if (elf_major) {
                in->cuda_version = (struct version){ .n = { elf_major }, .count = 1 };
                if (hint.cuda.count && hint.cuda.n[0] != elf_major)
                        install_add_problem(in, "cuda-major-mismatch",
                                            "%s says CUDA %lu but its libraries load CUDA %lu libraries",
                                            hint_source, hint.cuda.n[0], elf_major);
                else if (hint.cuda.count)
                        in->cuda_version = hint.cuda;
        } else if (hint.cuda.count)
                in->cuda_version = hint.cuda;

        check_sub_libraries(in, dir->fd, &f.ld, f.ld.soname.n[0]);

        install_list_add(l, in);
        library_verdict(verdict, f.usr, f.layout);
        dist_infos_release(&di);
        library_find_release(&f);
}

/* The forms of cuDNN's names after "cudnn-":
 *   <cver>-linux-<arch>-v<ver>    (8.2 and older archives)
 *   cuda<cver>-linux-<arch>-v<ver> (ALCF)
 *   <ver>-<cmajor>[-<hash>]       (Spack: 8.9.7.29-12) */
static bool cudnn_name_hint(const char *p, struct name_hint *h)
{
        const char *vmark, *end;
        struct version v;

        for (vmark = strstr(p, "-v"); vmark; vmark = strstr(vmark + 1, "-v"))
                if (name_version(vmark + 2, &v, NULL))
                        break;
        if (vmark) {
                h->version = v;
                if (startswith(p, "cuda"))
                        p += 4;
                if (name_version(p, &v, &end) && *end == '-')
                        h->cuda = v;
                return true;
        }
        if (!name_version(p, &v, &end) || *end != '-')
                return false;
        h->version = v;
        if (name_version(end + 1, &v, NULL) && v.count <= 2) {
                h->cuda = v;
                return true;
        }
        return false;
}

static void cudnn_to_json(const struct install *in, json_t *o)
{
        json_set(o, "build", json_string_lossy(in->build));
}

/* CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL as cudnnGetVersion encodes
 * them: major*10000+minor*100+patch from 9, major*1000+… before. */
static int cudnn_header_code(const char *buf, size_t len, long *ret)
{
        struct version v;
        int r = cudnn_header_parse(buf, len, &v);

        if (r < 0)
                return r;
        if (v.n[0] > 99 || v.n[1] > 99 || v.n[2] > 99)
                return -EBADMSG;
        *ret = (long)(v.n[0] * (v.n[0] >= 9 ? 10000 : 1000) + v.n[1] * 100 + v.n[2]);
        return 0;
}

/* The libcudnn_* sub-libraries name the libcublas (so the CUDA) they need. */
static unsigned long cudnn_module_cuda_major(const struct strv *own)
{
        unsigned long major = 0, lib_major = 0;
        _cleanup_free_ char *path = find_soname_file(own, "libcudnn", &lib_major);

        if (!path)
                return 0;
        for (const char *const *s = cudnn_sublibraries(lib_major); s && *s && !major; s++) {
                _cleanup_free_ char *dir = path_dirname(path);
                _cleanup_free_ char *sub = xasprintf("%s/%s.so.%lu", dir, *s, lib_major);
                struct elf_info info = { 0 };

                if (elf_read_info(AT_FDCWD, sub, &info, NULL) >= 0)
                        major = lib_cuda_major_named_by(sub, &info);
                elf_info_release(&info);
        }
        return major;
}

/* --- validate and doctor: the cuDNN a process loads -------------------------- */

/* The version of the cuDNN whose libcudnn is path in dir: the real file's
 * name, else the headers beside the library directory (a wheel names its
 * files libcudnn.so.9 only); dir NULL: the name only. */
static struct version cudnn_version_of(const char *path, const char *dir)
{
        static const char *const headers[] = { "../include/cudnn_version.h", "../include/cudnn.h" };
        struct version v = lib_file_version(path, "libcudnn");

        for (size_t i = 0; i < ELEMENTSOF(headers) && !v.count && dir; i++) {
                _cleanup_free_ char *h = path_join(dir, headers[i]);
                struct strbuf sb = STRBUF_INIT;

                if (file_read_regular_at(AT_FDCWD, h, NULL, (size_t)1 << 20, false, &sb, NULL) < 0 || cudnn_header_parse(sb.buf, sb.len, &v) < 0)
                        v.count = 0;
                strbuf_release(&sb);
        }
        return v;
}

/* The libcudnn.so.N (soname) files LD_LIBRARY_PATH reaches, each real
 * file once: more than one is what validate's lazy check and doctor both
 * fault (sub-libraries load from either). */
struct cudnn_reach {
        struct strv files;      /* their real paths */
        struct strv shown;      /* "<version> in '<entry>'" for each */
        bool differ;            /* one's version is not own's, or not known */
};

/* headers: when a file's name does not tell its version, read the
 * headers beside its real directory (doctor; validate goes by the names). */
static void cudnn_reach(const struct strv *ld_library_path, const char *soname, const struct version *own,
                        bool headers, struct cudnn_reach *ret)
{
        for (size_t i = 0; i < ld_library_path->len; i++) {
                _cleanup_free_ char *p = path_join(ld_library_path->items[i], soname);
                _cleanup_free_ char *real = realpath(p, NULL), *dir = NULL, *vs = NULL;
                struct version v;

                if (!real || strv_contains(&ret->files, real))
                        continue;
                strv_add(&ret->files, real);
                dir = headers ? path_dirname(real) : NULL;
                v = cudnn_version_of(p, dir);
                ret->differ |= !v.count || !own->count || version_compare(&v, own) != 0;
                vs = lib_version_string(&v);
                strv_push(&ret->shown, xasprintf("%s in '%s'", vs, ld_library_path->items[i]));
        }
}

static void cudnn_reach_release(struct cudnn_reach *r)
{
        strv_release(&r->files);
        strv_release(&r->shown);
}

/* --- validate's lazy check -------------------------------------------------- */

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
        struct cudnn_reach reach = { 0 };

        cudnn_reach(&m->ld_library_path, soname, &c->version, false, &reach);
        if (reach.files.len > 1) {
                struct strbuf sb = STRBUF_INIT;

                strbuf_add_list(&sb, &reach.shown, reach.shown.len);
                if (reach.differ)
                        findings_add(f, CHECK_FAIL, "two cuDNN versions are reachable through "
                                     "LD_LIBRARY_PATH (%s): sub-libraries may load from the other "
                                     "(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH); unload the other "
                                     "cudnn module", sb.buf);
                else
                        findings_add(f, CHECK_WARN, "%s is reachable twice through LD_LIBRARY_PATH "
                                     "(%s); keep one", soname, sb.buf);
                strbuf_release(&sb);
        }
        cudnn_reach_release(&reach);
}

/* The sub-libraries to check: those of the major, and any other
 * libcudnn_*.so.N beside the dispatcher. */
static void cudnn_sub_sonames(const struct cudnn *c, struct strv *ret)
{
        _cleanup_free_ char *dir = path_dirname(c->path);
        _cleanup_free_ char *suffix = xasprintf(".so.%lu", c->major);
        struct strv names = { 0 };

        for (const char *const *s = cudnn_sublibraries(c->major); s && *s; s++)
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

static void cudnn_lazy(const struct validate_module *m, struct check *ret)
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

/* --- doctor ------------------------------------------------------------------- */

/* cuDNN as torch loads it: the dispatcher and what it dlopen()s. */
struct cudnn_found {
        char *soname;                 /* libcudnn.so.N */
        unsigned long major;          /* N */
        const char *path;             /* where it resolves (in the report) */
        const struct libset_entry *by; /* the first library needing it */
        char *dir;                    /* its real directory */
        struct elf_info info;
        struct version version;
        char *ver;                    /* the version as text ("unknown") */
        struct strv subs;             /* the sub-libraries resolved in dir */
};

static void cudnn_found_release(struct cudnn_found *c)
{
        free(c->soname);
        free(c->dir);
        elf_info_release(&c->info);
        free(c->ver);
        strv_release(&c->subs);
}

/* Another version of libcudnn.so.N on LD_LIBRARY_PATH is a finding: a
 * sub-library the first lacks comes from it. One in the loader cache (a
 * distribution's cuDNN) is a note: it is reached only for what the
 * dispatcher's directory lacks, which the sub-library check reports. */
static void cudnn_reachable(struct doctor *doc, const struct cudnn_found *c)
{
        struct doctor_report *r = doc->r;
        struct cudnn_reach reach = { 0 };
        const char *cached = doc->cache ? ldcache_lookup(doc->cache, c->soname, c->info.elf_class, c->info.machine)
                                        : NULL;

        cudnn_reach(&r->ld_library_path, c->soname, &c->version, true, &reach);
        if (reach.files.len > 1 && reach.differ) {
                struct strbuf sb = STRBUF_INIT;

                strbuf_add_list(&sb, &reach.shown, reach.shown.len);
                doctor_add_finding(r, DOCTOR_CUDNN_VERSIONS, "R5",
                                   xasprintf("two cuDNN versions are on LD_LIBRARY_PATH: %s; %s loads the one in '%s'",
                                             sb.buf, c->by->name, c->dir),
                                   "cuDNN dlopen()s its sub-libraries by soname, so they can come from the "
                                   "other version (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH), and a cuDNN "
                                   "older than torch's build fails its check (\"cuDNN version "
                                   "incompatibility\")%s",
                                   xasprintf("keep one cuDNN on the loader path: unload the other cudnn module "
                                             "or remove its directory from LD_LIBRARY_PATH%s%s",
                                             r->module_load ? "; this torch wants: " : "",
                                             r->module_load ? r->module_load : ""),
                                   "");
                strbuf_release(&sb);
        }
        if (cached) {
                _cleanup_free_ char *real = realpath(cached, NULL), *dir = NULL, *ws = NULL;
                struct version w;

                if (real && !strv_contains(&reach.files, real)) {
                        dir = path_dirname(real);
                        w = cudnn_version_of(cached, dir);
                        if (!w.count || !c->version.count || version_compare(&w, &c->version) != 0) {
                                ws = lib_version_string(&w);
                                doctor_add_note(r, "the loader cache also offers cuDNN %s ('%s'): a sub-library "
                                                "missing beside '%s' would load from there", ws, cached, c->path);
                        }
                }
        }
        cudnn_reach_release(&reach);
}

/* The sub-libraries, as libcudnn dlopen()s them: all there, all beside it. */
static void cudnn_subs(struct doctor *doc, struct cudnn_found *c)
{
        struct strv missing = { 0 }, foreign = { 0 };
        struct strbuf sb = STRBUF_INIT;

        for (const char *const *s = cudnn_sublibraries(c->major); s && *s; s++) {
                _cleanup_free_ char *sub = xasprintf("%s.so.%lu", *s, c->major);
                struct resolved res = { 0 };

                if (resolve_needed(&doc->renv, c->path, &c->info, sub, &res, NULL) < 0 ||
                    res.source == RESOLVE_NOT_FOUND)
                        strv_add(&missing, sub);
                else if (!same_real_dir(res.path, c->path))
                        strv_push(&foreign, xasprintf("%s from '%s'", sub, res.path));
                else
                        strv_add(&c->subs, res.path);
                resolved_release(&res);
        }
        if (missing.len || foreign.len) {
                strbuf_addf(&sb, "libcudnn.so.%lu (cuDNN %s) is in '%s', but ", c->major, c->ver, c->dir);
                if (missing.len) {
                        strbuf_add_list(&sb, &missing, missing.len);
                        strbuf_addf(&sb, " %s nowhere", missing.len == 1 ? "resolves" : "resolve");
                }
                if (foreign.len) {
                        strbuf_addstr(&sb, missing.len ? ", and " : "");
                        strbuf_add_list(&sb, &foreign, foreign.len);
                        strbuf_addstr(&sb, foreign.len == 1 ? " comes from another directory" :
                                                              " come from other directories");
                }
                doctor_add_finding(doc->r, DOCTOR_CUDNN_SUBLIBRARIES, foreign.len ? "R5" : "R3", strbuf_detach(&sb),
                                   "cuDNN %lu loads its sub-libraries by soname at the first convolution: %s",
                                   xasprintf("use one complete cuDNN: reinstall cuDNN %s whole in '%s' and put it "
                                             "first in LD_LIBRARY_PATH (load its cudnn module last)", c->ver, c->dir),
                                   c->major,
                                   foreign.len ? "from two installs they fail with "
                                                 "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"
                                               : "a missing one fails with \"Unable to load any of "
                                                 "{libcudnn_…}\" and CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED");
        }
        strv_release(&missing);
        strv_release(&foreign);
}

/* The CUDA major this cuDNN is built for is torch's. */
static void cudnn_cuda_major(struct doctor *doc, const struct cudnn_found *c)
{
        struct doctor_report *r = doc->r;
        unsigned long cuda = 0;

        for (size_t i = 0; i < c->subs.len && !cuda; i++) {
                struct elf_info si = { 0 };

                if (elf_read_info(AT_FDCWD, c->subs.items[i], &si, NULL) >= 0)
                        cuda = lib_cuda_major_named_by(c->subs.items[i], &si);
                elf_info_release(&si);
        }
        if (!cuda)
                cuda = lib_cuda_major_named_by(c->path, &c->info);
        if (cuda && r->built.cuda_major && cuda != r->built.cuda_major)
                doctor_add_finding(r, DOCTOR_CUDA_MAJOR, "R5",
                                   xasprintf("the cuDNN (%s) that resolves ('%s') is built for CUDA %lu, but "
                                             "torch for CUDA %lu", c->ver, c->path, cuda, r->built.cuda_major),
                                   "it loads libcublasLt and libnvrtc of CUDA %lu beside torch's CUDA %lu: "
                                   "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH or a crash at the first "
                                   "convolution (#188892)",
                                   doctor_major_fix(r, &component_cudnn, "a"), cuda, r->built.cuda_major);
}

/* Not older than the build (torch's own rule: the same major, a minor at
 * least the build's). */
static void cudnn_build(struct doctor *doc, const struct cudnn_found *c)
{
        struct doctor_report *r = doc->r;
        const struct version *v = &c->version;
        struct version b;

        if (!r->built.linked[component_cudnn.index] || !v->count || version_parse(r->built.linked[component_cudnn.index], &b) < 0 || b.count < 2)
                return;
        if (b.n[0] == v->n[0] && (v->count < 2 || v->n[1] >= b.n[1]))
                return;
        doctor_add_finding(r, DOCTOR_CUDNN_BUILD, "R2",
                           xasprintf("torch was built against cuDNN %s, but cuDNN %s resolves ('%s')", r->built.linked[component_cudnn.index],
                                     c->ver, c->path),
                           "torch accepts the same major and a minor at least the build's: the first "
                           "convolution fails with \"cuDNN version incompatibility: PyTorch was compiled  "
                           "against (%lu, %lu, …) but found runtime version …\"",
                           xasprintf("load cuDNN %s or a newer %lu.x%s%s", r->built.linked[component_cudnn.index], b.n[0],
                                     r->module_load ? ": " : "", r->module_load ? r->module_load : ""),
                           b.n[0], b.n[1]);
}

/* doctor: the cuDNN torch loads (the libcudnn.so.N it needs, where that
 * resolves): one version reachable, its sub-libraries complete and beside
 * it, built for torch's CUDA major, not older than torch's build. */
static void cudnn_doctor(struct doctor *doc)
{
        struct cudnn_found c = { 0 };

        c.major = doctor_needed_major(doc, "libcudnn", &c.soname);
        c.path = c.major ? doctor_resolved_path(doc, c.soname, &c.by) : NULL;
        if (c.path && elf_read_info(AT_FDCWD, c.path, &c.info, NULL) >= 0 && (c.dir = real_dirname(c.path))) {
                c.version = cudnn_version_of(c.path, c.dir);
                c.ver = lib_version_string(&c.version);
                cudnn_reachable(doc, &c);
                cudnn_subs(doc, &c);
                cudnn_cuda_major(doc, &c);
                cudnn_build(doc, &c);
        }
        cudnn_found_release(&c);
}

const struct component component_cudnn = {
        .name = "cudnn",
        .title = "NVIDIA cuDNN",
        .label = "cuDNN",
        .index = COMPONENT_INDEX(cudnn),
        .version_parts = 3,
        .cuda_parts = 1,
        .naming = "{major}.{minor}.{patch}",
        .library = "libcudnn",
        .stems = (const char *const[]){ "libcudnn*", NULL },
        .dlopened = cudnn_sublibraries,
        .wheel = "nvidia-cudnn",
        .name_hint = cudnn_name_hint,
        .detect = detect_cudnn,
        .to_json = cudnn_to_json,
        .vars = (const struct component_var[]){
                { "CUDNN_ROOT", COMPONENT_VALUE_PREFIX, .build = true },
                { "CUDNN_HOME", COMPONENT_VALUE_PREFIX },
                { "CUDNN_PATH", COMPONENT_VALUE_PREFIX },
                { "CUDNN_INCLUDE_DIR", COMPONENT_VALUE_INCLUDE_DIR, .build = true },
                { "CUDNN_LIB_DIR", COMPONENT_VALUE_LIB_DIR, .build = true },
                { NULL },
        },
        .help = "For building PyTorch from source (CUDNN_ROOT, CUDNN_INCLUDE_DIR,\n"
                "CUDNN_LIB_DIR) and running it (libcudnn*.so on LD_LIBRARY_PATH).\n",
        .version_headers = (const char *const[]){ "cudnn_version.h", "cudnn.h", NULL },
        .header_code = cudnn_header_code,
        .code_version = component_code_library,
        .build = {
                .what = "cuDNN",
                .header = "cudnn.h",
                .libs = { "-lcudnn", "-lcudart", NULL },
                .program = "#include <cudnn.h>\n"
                           "\n"
                           "int main(void)\n"
                           "{\n"
                           "        return cudnnGetVersion() > 0 ? 0 : 1;\n"
                           "}\n",
        },
        .lazy = cudnn_lazy,
        .probe = { .key = "cudnn", .off = "--no-cudnn" },
        .module_cuda_major = cudnn_module_cuda_major,
        .doctor = cudnn_doctor,
        .torch_build = {
                .option = "USE_CUDNN",
                .root_variable = "CUDNN_ROOT",
                .library_stem = "libcudnn",
                .order = 1,
                .enable = { "USE_CUDNN" },
                .find_root = "CUDNN_ROOT",
                .append_root = "CUDNN_ROOT",
                .append_root_dir = "CUDNN_ROOT_DIR",
                .static_switch = "USE_STATIC_CUDNN",
                .static_name = "libcudnn_static.a",
                .always_wanted = true,
                .off_why = "cmake only warns (\"Cannot find cuDNN library. Turning the option off\"): the "
                           "torch built has no cuDNN (slow convolutions, torch.backends.cudnn.is_available() False)",
                .header = { .names = (const char *const[]){ "cudnn.h", NULL }, .suffixes = (const char *const[]){ "cuda/include", "cuda", "include", NULL },
                            .hints = "CUDNN_INCLUDE_DIR" },
                .library = { .names = (const char *const[]){ "cudnn", NULL }, .suffixes = (const char *const[]){ "lib", "lib64", "cuda/lib", "cuda/lib64", "lib/x64", NULL },
                             .paths = "CUDNN_LIBRARY", .paths_else = "CUDNN_LIB_DIR" },
        },
};
