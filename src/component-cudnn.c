/* component-cudnn.c: cuDNN. Its 8 and 9 installs (LAYOUTS.md §2): tarballs with lib
 * or lib64, copies inside a CUDA prefix, pip wheels (nvidia/cudnn), conda,
 * Spack and EasyBuild prefixes, and distribution multiarch packages. */
#include <errno.h>
#include <fcntl.h>

#include "component-cudnn.h"
#include "detect.h"
#include "diag.h"
#include "elf-file.h"
#include "install.h"
#include "lazy.h"
#include "libfile.h"
#include "name-hint.h"
#include "strbuf.h"
#include "util.h"
#include "util-file.h"
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
        .lazy = validate_lazy_cudnn,
        .probe = { .key = "cudnn", .off = "--no-cudnn" },
        .module_cuda_major = cudnn_module_cuda_major,
        .torch_build = { .option = "USE_CUDNN", .root_variable = "CUDNN_ROOT", .library_stem = "libcudnn" },
};
