/* component-magma.c: MAGMA (icl-utk-edu). Its installs (STACK.md §4.2): a
 * site build (/apps/magma/2.8.0/{include,lib,lib/pkgconfig}), Spack and
 * EasyBuild prefixes (magma/2.9.0-foss-2024a-CUDA-12.6.0), a conda
 * environment, PyTorch CI's /usr/local/cuda-X.Y/magma inside a CUDA prefix,
 * a copy merged into a CUDA prefix, and Debian's packages (libmagma2,
 * libmagma-dev: /usr/lib/libmagma.so.2, /usr/include). There is no pip
 * wheel of MAGMA.
 *
 * libmagma.so has no version in its name (a CMake build's soname is
 * libmagma.so, a make.inc build has none), so the version comes from
 * magma_types.h, magma.pc and names; PyTorch's own builds link the static
 * libmagma.a, which an install may hold alone. */
#include <errno.h>
#include <fcntl.h>

#include "component-cuda.h"
#include "component-magma.h"
#include "detect.h"
#include "elf-file.h"
#include "install.h"
#include "libfile.h"
#include "name-hint.h"
#include "strbuf.h"
#include "util.h"
#include "util-path.h"
#include "version.h"
#include "walk.h"
#include "banned.h"

/* magma_types.h: MICRO, not PATCH. */
static const char *const magma_version_macros[4] = {
        "MAGMA_VERSION_MAJOR", "MAGMA_VERSION_MINOR", "MAGMA_VERSION_MICRO", NULL,
};

static const char *const magma_headers[] = { "magma_types.h", "magma_v2.h", "magma.h", NULL };

/* Where its library is: lib (where `make install` and CMake put it), then
 * lib64, then a CUDA prefix's targets/<triple>/lib, preferring a real
 * directory to a link (a CUDA prefix's lib64 is one to targets/, where a
 * copy lands). *ret_file is "libmagma.so", or "libmagma.a" when there is
 * no shared one. */
static int magma_lib_find(int fd, char **ret_rel, const char **ret_file)
{
        static const char *const files[] = { "libmagma.so", "libmagma.a" };
        struct strv dirs = { 0 }, triples = { 0 };
        int r = -ENOENT;

        strv_add(&dirs, "lib");
        strv_add(&dirs, "lib64");
        if (dir_list(fd, "targets", &triples) >= 0)
                for (size_t i = 0; i < triples.len; i++)
                        strv_push(&dirs, xasprintf("targets/%s/lib", triples.items[i]));
        for (size_t f = 0; f < ELEMENTSOF(files) && r < 0; f++)
                for (int pass = 0; pass < 2 && r < 0; pass++)
                        for (size_t i = 0; i < dirs.len && r < 0; i++) {
                                _cleanup_free_ char *rel = path_join(dirs.items[i], files[f]);

                                if (detect_is_symlink(fd, dirs.items[i]) != (pass == 1) || !detect_is_file(fd, rel))
                                        continue;
                                *ret_rel = xstrdup(dirs.items[i]);
                                *ret_file = files[f];
                                r = 0;
                        }
        strv_release(&dirs);
        strv_release(&triples);
        return r;
}

/* rel when it holds one of MAGMA's headers, newly allocated, else NULL. */
static char *magma_include(int fd, const char *rel)
{
        for (const char *const *h = magma_headers; *h; h++) {
                _cleanup_free_ char *file = path_join(rel, *h);

                if (detect_is_file(fd, file))
                        return xstrdup(rel);
        }
        return NULL;
}

/* The CUDA major libmagma.so loads: its DT_NEEDED libcudart.so.N, else
 * libcublas.so.N (libcusparse.so.12 is CUDA 12's and 13's alike and
 * tells nothing); 0 when neither. A cudart and a cublas of two majors are
 * a problem when in is given. */
static unsigned long needed_cuda_major(int fd, const char *rel, struct install *in)
{
        struct elf_info info = { 0 };
        unsigned long cudart = 0, cublas = 0;

        if (elf_read_info(fd, rel, &info, NULL) >= 0)
                for (size_t i = 0; i < info.needed.len; i++) {
                        struct version v;

                        if (!cudart && soname_version_parse(info.needed.items[i], "libcudart", &v) >= 0)
                                cudart = v.n[0];
                        if (!cublas && soname_version_parse(info.needed.items[i], "libcublas", &v) >= 0)
                                cublas = v.n[0];
                }
        elf_info_release(&info);
        if (in && cudart && cublas && cudart != cublas)
                install_add_problem(in, "cuda-major-mismatch",
                                    "libmagma.so needs libcudart.so.%lu but libcublas.so.%lu", cudart,
                                    cublas);
        return cudart ? cudart : cublas;
}

/* The CUDA major of the toolkit whose prefix fd is (its libcudart.so.N,
 * else its directory name, cuda-12.6), 0 when it is no CUDA prefix. */
static unsigned long cuda_prefix_major(int fd, const char *realpath)
{
        struct libdir ld = { 0 };
        struct name_hint h = { 0 };
        unsigned long major = 0;
        bool cuda = find_lib_dir(fd, "libcudart", &ld) >= 0;

        if (cuda && ld.soname.count)
                major = ld.soname.n[0];
        libdir_release(&ld);
        if (major)
                return major;
        if (!cuda && !detect_is_file(fd, "bin/nvcc") && !detect_is_file(fd, "version.json"))
                return 0;
        if (name_hint_of(&component_cuda, path_basename(realpath), NULL, &h) >= 0 && h.version.count)
                return h.version.n[0];
        return 0;
}

/* A conda environment's record of its MAGMA package: conda-forge's
 * libmagma-2.9.0-<build>.json, pytorch's magma-cuda126-2.6.1-1.json. */
static int conda_hint(int fd, struct name_hint *ret)
{
        struct strv names = { 0 };
        int r = -ENOENT;

        if (dir_list(fd, "conda-meta", &names) < 0)
                return -ENOENT;
        for (size_t i = 0; i < names.len && r < 0; i++) {
                const char *n = names.items[i];
                _cleanup_free_ char *s = NULL;

                if (!endswith(n, ".json") || !(startswith(n, "magma-") || startswith(n, "libmagma-")))
                        continue;
                s = xstrndup(n + (startswith(n, "lib") ? 3 : 0),
                             strlen(n) - strlen(".json") - (startswith(n, "lib") ? 3 : 0));
                r = name_hint_of(&component_magma, s, NULL, ret);
        }
        strv_release(&names);
        return r;
}

/* magma.pc's "Version:" line. */
static void pc_version(struct install *in, int fd, const char *dir_path, const char *lib_rel,
                       struct version *ret)
{
        _cleanup_free_ char *rel = path_join(lib_rel, "pkgconfig/magma.pc");
        struct strbuf sb = STRBUF_INIT;

        if (read_head_at(fd, dir_path, rel, 64 * 1024, in, &sb) >= 0)
                for (const char *p = sb.buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                        if (startswith(p, "Version:")) {
                                const char *v = p + strlen("Version:");
                                const char *end;

                                v += strspn(v, " \t");
                                if (version_parse_prefix(v, ret, &end) < 0 || ret->count < 3 ||
                                    !(*end == '\n' || *end == '\r' || *end == '\0' || *end == ' '))
                                        *ret = (struct version){ 0 };
                                break;
                        }
        strbuf_release(&sb);
}

/* The MAGMA install whose prefix is fd (path as walked, realpath), if it
 * is one: enclosing_major is the CUDA major of the CUDA prefix it sits in
 * (PyTorch CI's cuda-X.Y/magma), 0 when none, -1 to look at its parent. */
static struct install *magma_install(int fd, const char *path, const char *realpath,
                                     const char *parent_realpath, bool conda, long enclosing)
{
        _cleanup_free_ char *lib_rel = NULL, *file_rel = NULL, *include_rel = NULL;
        const char *file, *hint_source = "the directory name";
        struct name_hint hint = { 0 };
        struct version header = { 0 }, pc = { 0 };
        struct version_vote votes[3];
        struct install *in;
        unsigned long needed = 0, own_cuda, enclosing_major = 0;
        enum layout layout;

        if (!detect_is_dir(fd, "include") || magma_lib_find(fd, &lib_rel, &file) < 0)
                return NULL;
        file_rel = path_join(lib_rel, file);
        own_cuda = cuda_prefix_major(fd, realpath);
        /* Debian's libmagma2 and libmagma-dev install into /usr/lib, not
         * the multiarch directory: a …/usr with it in lib (or RPM's lib64)
         * is the distribution's, even beside Debian's own CUDA there. */
        if (streq(path_basename(realpath), "usr") && (streq(lib_rel, "lib") || streq(lib_rel, "lib64")))
                layout = LAYOUT_SYSTEM;
        else
                layout = conda ? LAYOUT_CONDA : own_cuda ? LAYOUT_MERGED : LAYOUT_TARBALL;
        if (enclosing > 0)
                enclosing_major = (unsigned long)enclosing;
        else if (enclosing < 0 && parent_realpath) {
                _cleanup_close_ int pfd = open(parent_realpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (pfd >= 0)
                        enclosing_major = cuda_prefix_major(pfd, parent_realpath);
        }

        in = install_new(&component_magma, layout);
        in->prefix = xstrdup(path);
        in->realpath = xstrdup(realpath);
        in->lib_dir = path_join(path, lib_rel);
        /* Beside targets/<triple>/lib, its headers are in that include. */
        if (startswith(lib_rel, "targets/")) {
                _cleanup_free_ char *dir = path_dirname(lib_rel);
                _cleanup_free_ char *inc = path_join(dir, "include");

                if (!detect_is_symlink(fd, inc))
                        include_rel = magma_include(fd, inc);
        }
        if (!include_rel)
                include_rel = magma_include(fd, "include");
        if (include_rel)
                in->include_dir = path_join(path, include_rel);
        else
                install_add_problem(in, "missing-headers", "no magma_types.h in '%s/include'", path);

        if (streq(file, "libmagma.so")) {
                _cleanup_free_ char *display = path_join(in->lib_dir, file);

                if (check_library(in, fd, file_rel, display, 0) >= 0)
                        needed = needed_cuda_major(fd, file_rel, in);
        } else {
                /* An archive carries no DT_NEEDED: nothing tells its CUDA
                 * but the names and the prefix around it. */
                in->static_only = true;
        }

        if (include_rel) {
                _cleanup_free_ char *h = path_join(include_rel, "magma_types.h");
                struct strbuf sb = STRBUF_INIT;

                if (read_head_at(fd, path, h, DETECT_MAX_HEADER_HEAD, in, &sb) >= 0 &&
                    header_define_triple(sb.buf, sb.len, magma_version_macros, &header) < 0)
                        header = (struct version){ 0 };
                strbuf_release(&sb);
        }
        pc_version(in, fd, path, lib_rel, &pc);
        if (conda && conda_hint(fd, &hint) >= 0)
                hint_source = "the conda package name";
        else if (name_hint_of(&component_magma, path_basename(realpath),
                              parent_realpath ? path_basename(parent_realpath) : NULL, &hint) < 0)
                hint = (struct name_hint){ 0 };

        votes[0] = (struct version_vote){ header, "magma_types.h" };
        votes[1] = (struct version_vote){ pc, "magma.pc" };
        votes[2] = (struct version_vote){ hint.version, hint_source };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 3);
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the MAGMA version", path);

        /* The CUDA it was built for: what libmagma.so loads, else the names
         * (EasyBuild's -CUDA-12.6.0, pytorch's magma-cuda126), else the CUDA
         * prefix it sits in or was copied into. */
        if (needed && !(hint.cuda.count && hint.cuda.n[0] == needed))
                in->cuda_version = (struct version){ .n = { needed }, .count = 1 };
        else if (hint.cuda.count)
                in->cuda_version = hint.cuda;
        else if (enclosing_major || own_cuda)
                in->cuda_version = (struct version){ .n = { enclosing_major ? enclosing_major : own_cuda },
                                                     .count = 1 };
        if (needed && hint.cuda.count && hint.cuda.n[0] != needed)
                install_add_problem(in, "cuda-major-mismatch",
                                    "%s says CUDA %lu but libmagma.so loads CUDA %lu libraries", hint_source,
                                    hint.cuda.n[0], needed);
        if (in->cuda_version.count && (enclosing_major || own_cuda) &&
            (enclosing_major ? enclosing_major : own_cuda) != in->cuda_version.n[0])
                install_add_problem(in, "cuda-major-mismatch",
                                    "built for CUDA %lu but it is in the CUDA %lu prefix '%s'",
                                    in->cuda_version.n[0], enclosing_major ? enclosing_major : own_cuda,
                                    enclosing_major ? parent_realpath : realpath);
        return in;
}

static void detect_magma(const struct walk_dir *dir, struct install_list *l,
                         struct walk_verdict *verdict)
{
        bool conda = walk_dir_find(dir, "conda-meta") != NULL;
        struct install *in;

        /* A CUDA prefix's walk is pruned by the toolkit: its magma/
         * subdirectory (PyTorch CI) is looked at from here. */
        if (walk_dir_is_dir(dir, "magma")) {
                _cleanup_close_ int fd = openat(dir->fd, "magma", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                unsigned long major = cuda_prefix_major(dir->fd, dir->realpath);

                if (fd >= 0 && major) {
                        _cleanup_free_ char *path = path_join(dir->path, "magma");
                        _cleanup_free_ char *real = path_join(dir->realpath, "magma");
                        _cleanup_free_ char *resolved = realpath(real, NULL);

                        in = magma_install(fd, path, resolved ? resolved : real, dir->realpath, false,
                                           (long)major);
                        if (in)
                                install_list_add(l, in);
                }
        }
        in = magma_install(dir->fd, dir->path, dir->realpath, dir->parent_realpath, conda, -1);
        if (!in)
                return;
        install_list_add(l, in);
        library_verdict(verdict, NULL, in->layout);
}

/* pytorch's conda packages: magma-cuda126-2.6.1-1 is MAGMA 2.6.1 for
 * CUDA 12.6 (the last digit is the minor). */
static bool magma_name_hint(const char *p, struct name_hint *h)
{
        const char *end;
        struct version cv, v;
        unsigned long n;

        if (!startswith(p, "cuda") || version_parse_prefix(p + 4, &cv, &end) < 0 || cv.count != 1 ||
            *end != '-' || cv.n[0] < 10 || !name_version(end + 1, &v, NULL))
                return false;
        n = cv.n[0];
        h->version = v;
        h->cuda = (struct version){ .n = { n / 10, n % 10 }, .count = 2 };
        return true;
}

static void magma_to_json(const struct install *in, json_t *o)
{
        json_set(o, "static_only", json_boolean(in->static_only));
}

/* libmagma.so names the libcudart/libcublas it needs. */
static unsigned long magma_module_cuda_major(const struct strv *own)
{
        for (size_t i = 0; i < own->len; i++) {
                _cleanup_free_ char *path = path_join(own->items[i], "libmagma.so");
                unsigned long major = detect_is_file(AT_FDCWD, path) ? needed_cuda_major(AT_FDCWD, path, NULL) : 0;

                if (major)
                        return major;
        }
        return 0;
}

const struct component component_magma = {
        .name = "magma",
        .title = "MAGMA",
        .label = "MAGMA",
        .easybuild_name = "magma",
        .index = COMPONENT_INDEX(magma),
        .version_parts = 3,
        .cuda_parts = 1,
        .naming = "{major}.{minor}.{patch}",
        .library = "libmagma",
        .unversioned_soname = true,
        .stems = (const char *const[]){ "libmagma", "libmagma_sparse", NULL },
        .name_hint = magma_name_hint,
        .detect = detect_magma,
        .to_json = magma_to_json,
        .vars = (const struct component_var[]){
                /* PyTorch's FindMAGMA reads only MAGMA_HOME (STACK.md §4.3). */
                { "MAGMA_HOME", COMPONENT_VALUE_PREFIX },
                { "USE_MAGMA", COMPONENT_VALUE_ONE, .build = true },
                { NULL },
        },
        .pkgconfig = true,
        .help = "For building PyTorch from source against this MAGMA (USE_MAGMA=1,\n"
                "MAGMA_HOME) and running it (libmagma.so on LD_LIBRARY_PATH; a static\n"
                "libmagma.a is linked in and needs nothing at run time).\n",
        .version_headers = (const char *const[]){ "magma_types.h", NULL },
        .version_macros = magma_version_macros,
        .code_version = component_code_mmp,
        .build = {
                .what = "MAGMA",
                .header = "magma_v2.h",
                .libs = { "-lmagma", NULL },
                /* magma_v2.h includes magma_types.h, which includes
                 * cuda_runtime.h and cublas_v2.h: the CUDA dependency's
                 * CPATH must reach them. */
                .program = "#include <magma_v2.h>\n"
                           "\n"
                           "int main(void)\n"
                           "{\n"
                           "        magma_int_t major = 0, minor = 0, micro = 0;\n"
                           "\n"
                           "        magma_version(&major, &minor, &micro);\n"
                           "        return major > 0 ? 0 : 1;\n"
                           "}\n",
        },
        .probe = { .key = "magma", .request = "magma=libmagma.so:magma_version:magma" },
        .module_cuda_major = magma_module_cuda_major,
        .doctor_cuda_major_why = "it loads libcudart and libcublas of its own CUDA major beside torch's: the first torch.linalg call on the GPU fails to load libtorch_cuda_linalg or crashes",
        .torch_build = {
                .option = "USE_MAGMA",
                .root_variable = "MAGMA_HOME",
                .library_stem = "libmagma",
                .order = 5,
                .enable = { "USE_MAGMA" },
                .default_hint = "/usr/local/magma",
                .library_first = true,
                .header_optional = true,
                .header = { .names = (const char *const[]){ "magma.h", NULL },
                            .suffixes = (const char *const[]){ "include", NULL }, .hints = "MAGMA_HOME" },
                .library = { .names = (const char *const[]){ "magma", NULL },
                             .suffixes = (const char *const[]){ "lib", NULL }, .hints = "MAGMA_HOME" },
        },
};
