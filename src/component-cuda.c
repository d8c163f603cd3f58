/* component-cuda.c: the CUDA Toolkit. Its installs in every layout of LAYOUTS.md §1:
 * runfile/deb/rpm trees (targets/<triple>), HPC SDK cuda/X.Y with its
 * math_libs, conda environments, prefixes assembled from wheels, pip wheel
 * trees (nvidia/<component> for CUDA 12, nvidia/cu13) and distribution
 * multiarch installs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>

#include "component-cuda.h"
#include "config-host.h"
#include "config-types.h"
#include "detect.h"
#include "diag.h"
#include "elf-file.h"
#include "install.h"
#include "lazy.h"
#include "libfile.h"
#include "name-hint.h"
#include "opset.h"
#include "strbuf.h"
#include "util.h"
#include "util-file.h"
#include "util-path.h"
#include "version.h"
#include "walk.h"
#include "banned.h"

/* The per-component folders of CUDA 12 wheels (site-packages/nvidia/…). */
/* What the libcudart soname says of the version: since CUDA 11 it is
 * "libcudart.so.MAJOR" or, for all of 11.x, "libcudart.so.11.0", so only
 * the major counts; up to 10.2 it is MAJOR.MINOR. */
static struct version cudart_soname_vote(const struct version *soname)
{
        if (soname->count && soname->n[0] >= 11)
                return version_truncate(soname, 1);
        return *soname;
}

static const char *const cu12_wheel_dirs[] = {
        "cuda_runtime", "cublas",   "cuda_nvrtc", "cuda_cupti", "cufft", "curand",
        "cusolver",     "cusparse", "nvjitlink",  "nvtx",       "cufile", "cuda_nvcc",
        NULL,
};

static bool in_list(const char *const *list, const char *s)
{
        for (; *list; list++)
                if (streq(*list, s))
                        return true;
        return false;
}

/* MAJOR.MINOR from a header define that is MAJOR*1000 + MINOR*10. */
static struct version version_from_code(long code)
{
        struct version v = { .n = { (unsigned long)(code / 1000), (unsigned long)(code % 1000 / 10) },
                             .count = 2 };
        return v;
}

/* CUDA_VERSION from cuda.h, else CUDART_VERSION from cuda_runtime_api.h. */
static struct version header_version(struct install *in, int fd, const char *dir_path,
                                     const char *include_rel)
{
        static const char *const files[][2] = {
                { "cuda.h", "CUDA_VERSION" },
                { "cuda_runtime_api.h", "CUDART_VERSION" },
        };
        struct version v = { 0 };

        for (size_t i = 0; i < ELEMENTSOF(files) && !v.count; i++) {
                _cleanup_free_ char *rel = path_join(include_rel, files[i][0]);
                struct strbuf sb = STRBUF_INIT;
                long code;

                if (read_head_at(fd, dir_path, rel, DETECT_MAX_HEADER_HEAD, in, &sb) >= 0 &&
                    header_define_long(sb.buf, sb.len, files[i][1], &code) >= 0 && code >= 1000 &&
                    code < 1000000)
                        v = version_from_code(code);
                strbuf_release(&sb);
        }
        return v;
}

/* The release and nvcc version carried by the nvcc (or ptxas) binary. */
static void nvcc_strings(struct install *in, int fd, const char *dir_path, const char *bin_rel,
                         struct version *ret_release)
{
        static const char *const tools[] = { "nvcc", "ptxas" };

        for (size_t i = 0; i < ELEMENTSOF(tools); i++) {
                _cleanup_free_ char *rel = path_join(bin_rel, tools[i]);
                struct strv found = { 0 };
                struct diag d = DIAG_INIT;
                struct version release, nvcc;

                if (check_regular_at(in, fd, dir_path, rel) < 0)
                        continue;
                if (elf_find_strings(fd, rel, "Cuda compilation tools, release ", &found, &d) >= 0 &&
                    found.len > 0 && nvcc_release_parse(found.items[0], &release, &nvcc) >= 0) {
                        *ret_release = release;
                        if (!in->components[CUDA_COMP_NVCC])
                                in->components[CUDA_COMP_NVCC] = version_to_string(&nvcc, 0);
                }
                strv_release(&found);
                diag_release(&d);
                if (ret_release->count)
                        return;
        }
}

static void set_component(struct install *in, enum cuda_comp c, const char *version)
{
        if (c >= 0 && c < _CUDA_COMP_MAX && !in->components[c] && version)
                in->components[c] = xstrdup(version);
}

static void components_from_dist_infos(struct install *in, const struct dist_infos *di)
{
        for (size_t i = 0; i < di->names.len; i++)
                set_component(in, cuda_comp_from_pip_name(di->names.items[i]),
                              di->versions.items[i]);
}

/* The libraries whose file names tell their component's version. */
static const struct {
        enum cuda_comp comp;
        const char *stem;
} lib_components[] = {
        { CUDA_COMP_CUDART, "libcudart" },     { CUDA_COMP_NVRTC, "libnvrtc" },
        { CUDA_COMP_CUPTI, "libcupti" },       { CUDA_COMP_CUBLAS, "libcublas" },
        { CUDA_COMP_CUFFT, "libcufft" },       { CUDA_COMP_CURAND, "libcurand" },
        { CUDA_COMP_CUSOLVER, "libcusolver" }, { CUDA_COMP_CUSPARSE, "libcusparse" },
        { CUDA_COMP_NVJITLINK, "libnvJitLink" },
};

/* The component versions the real file names of one library directory
 * tell (libcublas.so.11 -> libcublas.so.11.11.3.6: cuBLAS 11.11.3.6), for
 * the components no version.json or dist-info gave. A file name counts
 * when it has three parts or more and the soname's major: CUPTI's file is
 * named by its year (libcupti.so.11.8 -> libcupti.so.2022.3.0), which is
 * no component version. One listing of the directory. */
struct lib_names {
        struct version soname[ELEMENTSOF(lib_components)];
        struct version full[ELEMENTSOF(lib_components)];
        char *full_name[ELEMENTSOF(lib_components)];
};

static int lib_name(const char *name, unsigned char type _unused_, void *ctx)
{
        struct lib_names *ln = ctx;

        for (size_t k = 0; k < ELEMENTSOF(lib_components); k++) {
                struct version v;

                if (soname_version_parse(name, lib_components[k].stem, &v) < 0)
                        continue;
                if (!ln->soname[k].count || v.count < ln->soname[k].count)
                        ln->soname[k] = v;
                if (v.count >= 3 && (!ln->full[k].count || version_compare(&v, &ln->full[k]) > 0)) {
                        ln->full[k] = v;
                        free(ln->full_name[k]);
                        ln->full_name[k] = xstrdup(name);
                }
        }
        return 0;
}

static void components_from_lib_dir(struct install *in, const char *lib_dir)
{
        struct lib_names ln = { .soname = { { .count = 0 } } };
        struct strv names = { 0 };
        _cleanup_close_ int fd = -1;
        int r;

        if (!lib_dir)
                return;
        /* A listing the detectors read already (the visit's cache) is not
         * read again; other directories are streamed, not listed: one far
         * beyond a site's (the scan warns about those) costs no memory
         * here, and at most WALK_MAX_ENTRIES names are looked at. */
        r = dir_list_cached(lib_dir, &names);
        if (r == 0) {
                for (size_t i = 0; i < names.len; i++)
                        (void)lib_name(names.items[i], DT_UNKNOWN, &ln);
                strv_release(&names);
        } else if (r == -ENODATA || r == -E2BIG) {
                fd = open(lib_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
                if (fd < 0)
                        return;
                (void)walk_read_fd(fd, WALK_MAX_ENTRIES, lib_name, &ln);
        } else
                return;
        for (size_t k = 0; k < ELEMENTSOF(lib_components); k++) {
                _cleanup_free_ char *v = NULL, *path = NULL;

                if (ln.full[k].count && !in->components[lib_components[k].comp] &&
                    ln.full[k].n[0] == ln.soname[k].n[0]) {
                        path = path_join(lib_dir, ln.full_name[k]);
                        if (detect_is_file(AT_FDCWD, path)) {
                                v = version_to_string(&ln.full[k], 0);
                                set_component(in, lib_components[k].comp, v);
                        }
                }
                free(ln.full_name[k]);
        }
}

static void components_from_lib_dirs(struct install *in)
{
        components_from_lib_dir(in, in->lib_dir);
        for (size_t i = 0; i < in->extra_lib_dirs.len; i++)
                components_from_lib_dir(in, in->extra_lib_dirs.items[i]);
}

static struct version cudart_version_of(const struct install *in)
{
        struct version v = { 0 };

        if (in->components[CUDA_COMP_CUDART])
                (void)version_parse(in->components[CUDA_COMP_CUDART], &v);
        return v;
}

static void add_dir_if(struct strv *v, int fd, const char *prefix, const char *rel)
{
        _cleanup_free_ char *p = NULL;

        if (!detect_is_dir(fd, rel))
                return;
        p = path_join(prefix, rel);
        if (!strv_contains(v, p))
                strv_push(v, TAKE_PTR(p));
}

/* …/Linux_<arch>/<YY.M>/cuda/<X.Y>: the HPC SDK release directory, or NULL. */
static char *hpc_sdk_release_dir(const char *realpath)
{
        _cleanup_free_ char *cuda = path_dirname(realpath);
        _cleanup_free_ char *rel = NULL, *linux_arch = NULL;

        if (!streq(path_basename(cuda), "cuda"))
                return NULL;
        rel = path_dirname(cuda);
        linux_arch = path_dirname(rel);
        if (!startswith(path_basename(linux_arch), "Linux_"))
                return NULL;
        return TAKE_PTR(rel);
}

/* The math libraries of an HPC SDK CUDA live in ../../math_libs/X.Y. */
static void hpc_sdk_math_libs(struct install *in, const struct walk_dir *dir, const char *triple)
{
        _cleanup_free_ char *math = NULL;
        const char *xy = path_basename(dir->realpath);
        _cleanup_close_ int fd = -1;
        struct libdir ld = { 0 };
        _cleanup_free_ char *release_dir = hpc_sdk_release_dir(dir->realpath);

        math = xasprintf("%s/math_libs/%s", release_dir, xy);
        fd = open(math, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                install_add_problem(in, "missing-library",
                                    "no math libraries (cuBLAS, cuFFT, …) in '%s'", math);
                return;
        }
        if (find_lib_dir(fd, "libcublas", &ld) < 0) {
                install_add_problem(in, "missing-library", "no libcublas.so.* in '%s'", math);
                add_dir_if(&in->extra_lib_dirs, fd, math, "lib64");
        } else
                add_dir_if(&in->extra_lib_dirs, fd, math, ld.rel);
        if (triple) {
                _cleanup_free_ char *inc = xasprintf("targets/%s/include", triple);
                if (detect_is_dir(fd, inc) && !detect_is_symlink(fd, inc))
                        add_dir_if(&in->extra_include_dirs, fd, math, inc);
                else
                        add_dir_if(&in->extra_include_dirs, fd, math, "include");
        } else
                add_dir_if(&in->extra_include_dirs, fd, math, "include");
        libdir_release(&ld);
}

/* The include directory: targets/<triple>/include or include, preferring a
 * real directory that holds the runtime headers. */
static char *choose_include(int fd, const char *triple)
{
        _cleanup_free_ char *t = triple ? xasprintf("targets/%s/include", triple) : NULL;
        const char *cands[2] = { t, "include" };
        const char *fallback = NULL;

        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < 2; i++) {
                        _cleanup_free_ char *h = NULL;
                        if (!cands[i] || !detect_is_dir(fd, cands[i]))
                                continue;
                        if (!fallback)
                                fallback = cands[i];
                        if (pass == 0 && detect_is_symlink(fd, cands[i]))
                                continue;
                        h = path_join(cands[i], "cuda_runtime_api.h");
                        if (detect_is_file(fd, h))
                                return xstrdup(cands[i]);
                }
        return fallback ? xstrdup(fallback) : NULL;
}

/* A CUDA 12 wheel tree: site-packages/nvidia with cuda_runtime/ and friends. */
static void detect_cu12_wheels(const struct walk_dir *dir, struct install_list *l)
{
        struct install *in = install_new(&component_cuda, LAYOUT_WHEEL);
        _cleanup_free_ char *site = path_dirname(dir->realpath);
        struct dist_infos di = { 0 };
        struct libdir ld = { 0 };
        struct version_vote votes[3] = { 0 };
        struct version cudart;

        install_set_location(in, dir);
        if (libdir_in(dir->fd, "cuda_runtime/lib", "libcudart", &ld) >= 0) {
                _cleanup_free_ char *rel = path_join(ld.rel, ld.soname_file);
                _cleanup_free_ char *display = path_join(dir->path, rel);
                in->lib_dir = path_join(dir->path, ld.rel);
                check_library(in, dir->fd, rel, display, 0);
        } else
                install_add_problem(in, "missing-library", "no libcudart.so.* in '%s/cuda_runtime/lib'",
                                    dir->path);
        in->include_dir = detect_is_dir(dir->fd, "cuda_runtime/include")
                                  ? path_join(dir->path, "cuda_runtime/include")
                                  : NULL;
        if (detect_is_dir(dir->fd, "cuda_nvcc/bin"))
                in->bin_dir = path_join(dir->path, "cuda_nvcc/bin");
        for (const char *const *c = cu12_wheel_dirs; *c; c++) {
                _cleanup_free_ char *lib = xasprintf("%s/lib", *c);
                _cleanup_free_ char *inc = xasprintf("%s/include", *c);
                if (!streq(*c, "cuda_runtime")) {
                        add_dir_if(&in->extra_lib_dirs, dir->fd, dir->path, lib);
                        add_dir_if(&in->extra_include_dirs, dir->fd, dir->path, inc);
                }
        }
        dist_infos_read_path(site, &di);
        components_from_dist_infos(in, &di);
        cudart = cudart_version_of(in);
        votes[0] = (struct version_vote){ cudart, "the nvidia-cuda-runtime wheel" };
        if (in->include_dir)
                votes[1] = (struct version_vote){ header_version(in, dir->fd, dir->path,
                                                                 "cuda_runtime/include"),
                                                  "cuda_runtime/include/cuda_runtime_api.h" };
        votes[2] = (struct version_vote){ cudart_soname_vote(&ld.soname), "the libcudart soname" };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 2);
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the CUDA version",
                                    dir->path);
        dist_infos_release(&di);
        libdir_release(&ld);
        install_list_add(l, in);
}

/* The Debian/Ubuntu package trees that belong to the system install:
 * …/usr/lib/nvidia-cuda-toolkit and …/usr/lib/cuda. */
static char *debian_toolkit_prefix_of(const char *realpath)
{
        const char *base = path_basename(realpath);
        _cleanup_free_ char *lib = path_dirname(realpath);
        char *usr;

        if (!streq(base, "nvidia-cuda-toolkit") && !streq(base, "cuda"))
                return NULL;
        if (!streq(path_basename(lib), "lib"))
                return NULL;
        usr = path_dirname(lib);
        if (streq(path_basename(usr), "usr"))
                return usr;
        free(usr);
        return NULL;
}

/* A distribution install: the multiarch library directory, with headers in
 * …/usr/include and nvcc in …/usr/bin or …/usr/lib/nvidia-cuda-toolkit/bin. */
static void detect_system(const struct walk_dir *dir, const char *usr, const char *triple,
                          struct install_list *l)
{
        struct install *in;
        struct libdir ld = { 0 };
        _cleanup_close_ int usr_fd = -1;
        _cleanup_free_ char *soname_display = NULL;
        struct version_vote votes[4] = { 0 };
        struct version nvcc_release = { 0 }, header = { 0 };
        _cleanup_free_ char *full = NULL;

        if (libdir_in(dir->fd, ".", "libcudart", &ld) < 0)
                return;
        in = install_new(&component_cuda, LAYOUT_SYSTEM);
        in->prefix = xstrdup(usr);
        in->realpath = xstrdup(usr);
        in->lib_dir = xstrdup(dir->path);
        soname_display = path_join(dir->path, ld.soname_file);
        check_library(in, dir->fd, ld.soname_file, soname_display, 0);
        usr_fd = open(usr, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (usr_fd >= 0) {
                _cleanup_free_ char *tinc = triple ? xasprintf("include/%s", triple) : NULL;
                if (detect_is_file(usr_fd, "include/cuda_runtime_api.h"))
                        in->include_dir = path_join(usr, "include");
                else if (tinc && detect_is_dir(usr_fd, tinc)) {
                        _cleanup_free_ char *h = path_join(tinc, "cuda_runtime_api.h");
                        if (detect_is_file(usr_fd, h))
                                in->include_dir = path_join(usr, tinc);
                }
                if (in->include_dir)
                        header = header_version(in, usr_fd, usr, in->include_dir + strlen(usr) + 1);
                if (detect_is_file(usr_fd, "bin/nvcc"))
                        in->bin_dir = path_join(usr, "bin");
                nvcc_strings(in, usr_fd, usr, "lib/nvidia-cuda-toolkit/bin", &nvcc_release);
        }
        if (ld.full.count) {
                full = version_to_string(&ld.full, 0);
                set_component(in, CUDA_COMP_CUDART, full);
        }
        if (!in->include_dir)
                install_add_problem(in, "missing-headers", "no cuda_runtime_api.h in '%s/include'", usr);
        votes[0] = (struct version_vote){ header, "cuda.h" };
        votes[1] = (struct version_vote){ ld.full, "the libcudart file name" };
        votes[2] = (struct version_vote){ nvcc_release, "nvcc" };
        votes[3] = (struct version_vote){ cudart_soname_vote(&ld.soname), "the libcudart soname" };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 2);
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file tells the version of the CUDA in '%s'",
                                    dir->path);
        components_from_lib_dirs(in);
        libdir_release(&ld);
        install_list_add(l, in);
}

/* version.json: MAJOR.MINOR, and the release and component versions it
 * gives; anything wrong with the file is a problem on the install. */
static struct version read_version_json(struct install *in, const struct walk_dir *dir)
{
        _cleanup_free_ char *file = path_join(dir->path, "version.json");
        struct strbuf sb = STRBUF_INIT;
        struct version_json vj = { 0 };
        struct diag d = DIAG_INIT;
        struct version ret = { 0 };
        int r = file_read_regular_at(dir->fd, "version.json", file, DETECT_MAX_VERSION_FILE, false,
                                     &sb, &d);

        if (r == -EINVAL || r == -EISDIR || r == -ESTALE)
                install_add_file_problem(in, r, &d);
        else if (r < 0)
                install_add_problem(in, "bad-version-file", "%s", d.message);
        else if (version_json_parse(sb.buf, sb.len, file, &vj, &d) < 0) {
                _cleanup_free_ char *msg = diag_format(&d);
                install_add_problem(in, "bad-version-file", "%s", msg);
        } else {
                ret = vj.cuda;
                if (vj.release.count)
                        in->release = vj.release;
                for (size_t i = 0; i < _CUDA_COMP_MAX; i++)
                        set_component(in, (enum cuda_comp)i, vj.components[i]);
                if (vj.nvidia_driver && !in->nvidia_driver)
                        in->nvidia_driver = xstrdup(vj.nvidia_driver);
        }
        version_json_release(&vj);
        diag_release(&d);
        strbuf_release(&sb);
        return ret;
}

/* version.txt (CUDA <= 11.0): MAJOR.MINOR, and the release. */
static struct version read_version_txt(struct install *in, const struct walk_dir *dir)
{
        _cleanup_free_ char *file = path_join(dir->path, "version.txt");
        struct strbuf sb = STRBUF_INIT;
        struct diag d = DIAG_INIT;
        struct version rel, ret = { 0 };

        int r = read_head_at(dir->fd, dir->path, "version.txt", 4096, in, &sb);

        if (r == -EINVAL || r == -EISDIR || r == -ESTALE)
                ; /* not a regular file: read_head_at recorded the problem */
        else if (r < 0 || version_txt_parse(sb.buf, sb.len, file, &rel, &d) < 0) {
                _cleanup_free_ char *msg = d.message ? diag_format(&d) : xasprintf("cannot read '%s'", file);
                install_add_problem(in, "bad-version-file", "%s", msg);
        } else {
                ret = version_truncate(&rel, 2);
                if (!in->release.count && rel.count >= 3)
                        in->release = version_truncate(&rel, 3);
        }
        diag_release(&d);
        strbuf_release(&sb);
        return ret;
}

/* The architecture the names in targets/ say, when they all say one
 * (a toolkit with cross-compilation targets says several: NULL). */
static const char *arch_of_targets(const struct strv *triples)
{
        const char *arch = NULL;

        for (size_t i = 0; i < triples->len; i++) {
                const char *a = elf_machine_to_arch(elf_machine_from_triple(triples->items[i]));

                if (!a)
                        continue;
                if (arch && !streq(arch, a))
                        return NULL;
                arch = a;
        }
        return arch;
}

/* The /usr a packaged toolkit belongs to: …/usr for …/usr/local/cuda-X.Y
 * (under a private root too), else the system's. */
static char *packaged_usr_of(const char *realpath)
{
        _cleanup_free_ char *local = path_dirname(realpath);
        char *usr;

        if (!streq(path_basename(local), "local"))
                return xstrdup("/usr");
        usr = path_dirname(local);
        if (streq(path_basename(usr), "usr"))
                return usr;
        free(usr);
        return xstrdup("/usr");
}

/* The deb and rpm packages of CUDA 10.1 and 10.2 install cuBLAS outside
 * the toolkit prefix, in the multiarch directory (deb) or /usr/lib64 (rpm):
 * a lib dir without libcublas is their layout. Note where cuBLAS is, or
 * name every place it was looked for. Anything else without it misses it. */
static void cublas_outside_prefix(struct install *in, const struct walk_dir *dir)
{
        static const struct {
                const char *arch, *rel;
        } places[] = {
                { "x86_64", "lib/x86_64-linux-gnu" },
                { "aarch64", "lib/aarch64-linux-gnu" },
                { "ppc64le", "lib/powerpc64le-linux-gnu" },
                { NULL, "lib64" },
        };
        const struct version *v = &in->version;
        _cleanup_free_ char *usr = NULL;
        _cleanup_close_ int usr_fd = -1;
        struct strbuf looked = STRBUF_INIT;

        if (!(v->count >= 2 && v->n[0] == 10 && (v->n[1] == 1 || v->n[1] == 2))) {
                install_add_problem(in, "missing-library", "no libcublas.so.* in '%s'", in->lib_dir);
                return;
        }
        usr = packaged_usr_of(dir->realpath);
        usr_fd = open(usr, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (size_t i = 0; i < ELEMENTSOF(places); i++) {
                _cleanup_free_ char *where = NULL;
                struct libdir ld = { 0 };

                if (places[i].arch && in->arch && !streq(places[i].arch, in->arch))
                        continue;
                where = path_join(usr, places[i].rel);
                /* Only the cuBLAS of CUDA 10, not a newer system one. */
                if (usr_fd >= 0 && libdir_in(usr_fd, places[i].rel, "libcublas", &ld) >= 0 &&
                    ld.soname.count && ld.soname.n[0] == 10) {
                        _cleanup_free_ char *file = ld.full.count ? version_to_string(&ld.full, 0) : NULL;

                        install_add_problem(in, "library-outside-prefix",
                                            "cuBLAS (%s) is in '%s', outside the toolkit, where the deb "
                                            "and rpm packages of CUDA 10.1 and 10.2 install it",
                                            ld.soname_file, where);
                        if (file && ld.full.n[0] == 10)
                                set_component(in, CUDA_COMP_CUBLAS, file);
                        libdir_release(&ld);
                        strbuf_release(&looked);
                        return;
                }
                libdir_release(&ld);
                strbuf_addf(&looked, "%s'%s'", looked.len ? ", " : "", where);
        }
        install_add_problem(in, "missing-library",
                            "no libcublas.so.10 in '%s' nor in %s, where the deb and rpm packages of "
                            "CUDA 10.1 and 10.2 install cuBLAS",
                            in->lib_dir, looked.buf);
        strbuf_release(&looked);
}

/* Does the directory look like a toolkit prefix at all? Cheap: names only. */
static bool looks_like_toolkit(const struct walk_dir *dir)
{
        bool inc = walk_dir_find(dir, "include") != NULL;
        bool lib = walk_dir_find(dir, "lib") || walk_dir_find(dir, "lib64");

        return walk_dir_find(dir, "version.json") || walk_dir_find(dir, "version.txt") ||
               walk_dir_find(dir, "targets") || (inc && lib) ||
               (walk_dir_find(dir, "bin") && walk_dir_find(dir, "nvvm"));
}

/* The forward-compatibility libraries (NVIDIA's cuda-compat-X-Y package;
 * LAYOUTS.md §1): <toolkit>/compat/libcuda.so.<driver>, beside its
 * libcuda.so.1 and libcuda.so links and the driver's
 * libnvidia-ptxjitcompiler, libnvidia-nvvm and libcudadebugger, where the
 * package installs them (/usr/local/cuda-12.9/compat); conda's cuda-compat
 * package puts the same files in <env>/cuda-compat. The driver is the
 * newest libcuda.so.<driver> that is a regular file: a driver version has
 * three or two numbers, the first the branch (575), never a CUDA major. */
static void find_compat(struct install *in, const struct walk_dir *dir)
{
        static const char *const dirs[] = { "compat", "cuda-compat" };

        for (size_t i = 0; i < ELEMENTSOF(dirs) && !in->compat_dir; i++) {
                struct strv names = { 0 };
                struct version best = { 0 };
                const char *best_name = NULL;

                if (!walk_dir_find(dir, dirs[i]) || dir_list(dir->fd, dirs[i], &names) < 0)
                        continue;
                for (size_t j = 0; j < names.len; j++) {
                        const char *v = names.items[j] + strlen("libcuda.so.");
                        _cleanup_free_ char *rel = NULL;
                        struct version ver;

                        if (!startswith(names.items[j], "libcuda.so.") || v[strspn(v, "0123456789.")] || version_parse(v, &ver) < 0 || ver.count < 2 ||
                            ver.count > 3 || ver.n[0] < 100)
                                continue;
                        rel = path_join(dirs[i], names.items[j]);
                        if (!detect_is_file(dir->fd, rel))
                                continue;
                        if (!best_name || version_compare(&ver, &best) > 0) {
                                best = ver;
                                best_name = v;
                        }
                }
                if (best_name) {
                        in->compat_dir = path_join(dir->path, dirs[i]);
                        in->compat_driver = xstrdup(best_name);
                }
                strv_release(&names);
        }
}

static void detect_toolkit(const struct walk_dir *dir, struct install_list *l,
                           struct walk_verdict *verdict)
{
        struct install *in;
        struct libdir ld = { 0 };
        bool has_cudart, has_nvcc, has_version_file, has_header, no_cublas = false;
        const char *targets_arch = NULL;
        _cleanup_free_ char *include_rel = NULL, *hpc_release = NULL;
        struct version json_ver = { 0 }, txt_ver = { 0 }, header = { 0 }, nvcc_release = { 0 };
        struct version meta_ver = { 0 }, hint_ver = { 0 };
        struct version_vote votes[6];
        struct dist_infos di = { 0 };
        struct name_hint hint = { 0 };
        unsigned machine = 0;
        enum layout layout = LAYOUT_TOOLKIT;

        {
                int r = find_lib_dir(dir->fd, "libcudart", &ld);

                if (r == -E2BIG)
                        libdir_warn_too_big(dir);
                has_cudart = r >= 0;
        }
        has_nvcc = detect_is_file(dir->fd, "bin/nvcc");
        has_version_file = walk_dir_find(dir, "version.json") || walk_dir_find(dir, "version.txt");
        include_rel = choose_include(dir->fd, ld.triple);
        if (!ld.triple) {
                /* A toolkit without libcudart still names its triple. */
                struct strv t = { 0 };
                if (dir_list(dir->fd, "targets", &t) >= 0 && t.len > 0) {
                        if (!include_rel)
                                include_rel = choose_include(dir->fd, t.items[0]);
                        targets_arch = arch_of_targets(&t);
                }
                strv_release(&t);
        }
        if (include_rel) {
                _cleanup_free_ char *h = path_join(include_rel, "cuda_runtime_api.h");
                has_header = detect_is_file(dir->fd, h);
        } else
                has_header = false;
        if (!has_cudart && !(has_nvcc && (has_version_file || has_header)) &&
            !(has_version_file && has_header)) {
                libdir_release(&ld);
                return;
        }

        hpc_release = hpc_sdk_release_dir(dir->realpath);
        if (hpc_release)
                layout = LAYOUT_HPC_SDK;
        else if (walk_dir_find(dir, "conda-meta"))
                layout = LAYOUT_CONDA;
        else {
                _cleanup_free_ char *site = wheel_site_packages_of(dir->realpath);
                if (site)
                        layout = LAYOUT_WHEEL;
        }
        in = install_new(&component_cuda, layout);
        install_set_location(in, dir);

        if (ld.triple)
                machine = elf_machine_from_triple(ld.triple);
        if (machine && elf_machine_to_arch(machine))
                in->arch = xstrdup(elf_machine_to_arch(machine));
        else if (!has_cudart && targets_arch)
                /* No library to read it from: targets/<triple> says it. */
                in->arch = xstrdup(targets_arch);
        if (has_cudart) {
                _cleanup_free_ char *rel = path_join(ld.rel, ld.soname_file);
                _cleanup_free_ char *display = path_join(dir->path, rel);
                in->lib_dir = path_join(dir->path, ld.rel);
                check_library(in, dir->fd, rel, display, machine);
                if (ld.full.count) {
                        _cleanup_free_ char *full = version_to_string(&ld.full, 0);
                        set_component(in, CUDA_COMP_CUDART, full);
                }
                no_cublas = layout != LAYOUT_HPC_SDK && !libdir_has(&ld, dir->fd, "libcublas");
        } else
                install_add_problem(in, "missing-library", "no libcudart.so.* in '%s'", dir->path);
        if (include_rel)
                in->include_dir = path_join(dir->path, include_rel);
        else
                install_add_problem(in, "missing-headers", "no cuda_runtime_api.h in '%s'", dir->path);
        if (detect_is_dir(dir->fd, "bin"))
                in->bin_dir = path_join(dir->path, "bin");

        add_dir_if(&in->extra_lib_dirs, dir->fd, dir->path, "extras/CUPTI/lib64");
        add_dir_if(&in->extra_include_dirs, dir->fd, dir->path, "extras/CUPTI/include");
        {
                _cleanup_free_ char *nvvm_lib = path_join(dir->path, "nvvm/lib64");
                if (!in->lib_dir || !streq(nvvm_lib, in->lib_dir))
                        add_dir_if(&in->extra_lib_dirs, dir->fd, dir->path, "nvvm/lib64");
        }
        if (layout == LAYOUT_HPC_SDK)
                hpc_sdk_math_libs(in, dir, ld.triple);
        find_compat(in, dir);

        /* Versions, most reliable source first (LAYOUTS.md §0). */
        if (walk_dir_find(dir, "version.json"))
                json_ver = read_version_json(in, dir);
        if (walk_dir_find(dir, "version.txt"))
                txt_ver = read_version_txt(in, dir);
        if (walk_dir_find(dir, "dist-info"))
                dist_infos_read(dir->fd, "dist-info", &di);
        components_from_dist_infos(in, &di);
        meta_ver = cudart_version_of(in);
        if (include_rel)
                header = header_version(in, dir->fd, dir->path, include_rel);
        if (has_nvcc)
                nvcc_strings(in, dir->fd, dir->path, "bin", &nvcc_release);
        else
                /* A bin/nvcc that is a device or FIFO is a problem, not a read. */
                (void)check_regular_at(in, dir->fd, dir->path, "bin/nvcc");
        if (name_hint_of(&component_cuda, path_basename(dir->realpath), NULL, &hint) >= 0 ||
            (!hint.version.count && dir->parent_realpath &&
             name_hint_of(&component_cuda, path_basename(dir->realpath),
                          path_basename(dir->parent_realpath), &hint) >= 0))
                hint_ver = hint.version;

        /* What the binaries prove first: a version.json or version.txt
         * is a note the installer wrote, and one left by another release
         * (a toolkit updated in place) says less than cuda.h, libcudart's
         * own name and nvcc; where they disagree it is named, and loses. */
        votes[0] = (struct version_vote){ header, "cuda.h" };
        votes[1] = (struct version_vote){ meta_ver, "the cudart version" };
        votes[2] = (struct version_vote){ nvcc_release, "nvcc" };
        votes[3] = (struct version_vote){ json_ver, "version.json" };
        votes[4] = (struct version_vote){ txt_ver, "version.txt" };
        votes[5] = (struct version_vote){ cudart_soname_vote(&ld.soname), "the libcudart soname" };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 2);
        /* The release a version file gave is of the version it said. */
        if (in->release.count && in->version.count) {
                struct version xy = version_truncate(&in->release, 2);
                if (version_compare(&xy, &in->version) != 0)
                        in->release = (struct version){ 0 };
        }
        if (!in->version.count && hint_ver.count >= 2)
                in->version = version_truncate(&hint_ver, 2);
        /* The release from the directory name (cuda-12.4.1, Spack, EasyBuild)
         * when no file gave it and it agrees with the version. */
        if (!in->release.count && hint_ver.count >= 3 && in->version.count) {
                struct version xy = version_truncate(&hint_ver, 2);
                if (version_compare(&xy, &in->version) == 0)
                        in->release = version_truncate(&hint_ver, 3);
        }
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the CUDA version",
                                    dir->path);
        if (no_cublas)
                cublas_outside_prefix(in, dir);
        components_from_lib_dirs(in);
        if (hpc_release && in->version.count) {
                /* cuda/X.Y names its version: check the files agree. */
                struct version xy;
                if (version_parse(path_basename(dir->realpath), &xy) >= 0 && xy.count == 2 &&
                    version_compare(&xy, &in->version) != 0) {
                        _cleanup_free_ char *v = version_to_string(&in->version, 2);
                        install_add_problem(in, "version-mismatch",
                                            "the directory name says %s but the files say %s",
                                            path_basename(dir->realpath), v);
                }
        }
        dist_infos_release(&di);
        libdir_release(&ld);
        install_list_add(l, in);

        verdict->prune = true;
        if (layout == LAYOUT_CONDA)
                verdict->keep = detect_conda_keep;
}

static void detect_cuda(const struct walk_dir *dir, struct install_list *l,
                        struct walk_verdict *verdict)
{
        const char *base = path_basename(dir->realpath);
        _cleanup_free_ char *usr = NULL;
        const char *triple = NULL;

        /* A multiarch library directory of a distribution install. */
        usr = system_prefix_of(dir->realpath, &triple);
        if (usr) {
                detect_system(dir, usr, triple, l);
                return;
        }
        /* The distribution's toolkit trees add an alias and nvcc to it. */
        free(usr);
        usr = debian_toolkit_prefix_of(dir->realpath);
        if (usr) {
                /* A partial record: merged with the multiarch one by realpath;
                 * scan_finalize reports what is still missing. */
                struct install *in = install_new(&component_cuda, LAYOUT_SYSTEM);
                struct version rel = { 0 };

                in->prefix = xstrdup(usr);
                in->realpath = xstrdup(usr);
                /* The tree is a real directory of the install, not an
                 * alias; the path is one when a link led here
                 * (/usr/local/cuda -> /usr/lib/cuda). */
                strv_add(&in->trees, dir->realpath);
                if (detect_is_symlink(AT_FDCWD, dir->path))
                        strv_add(&in->aliases, dir->path);
                nvcc_strings(in, dir->fd, dir->path, "bin", &rel);
                if (rel.count)
                        in->version = version_truncate(&rel, 2);
                install_list_add(l, in);
                verdict->prune = true;
                return;
        }
        if (streq(base, "nvidia") && walk_dir_is_dir(dir, "cuda_runtime")) {
                detect_cu12_wheels(dir, l);
                return;
        }
        /* Pieces of other layouts that are not installs by themselves. */
        if (dir->parent_realpath) {
                const char *pbase = path_basename(dir->parent_realpath);
                if (streq(pbase, "targets") || (streq(pbase, "nvidia") && in_list(cu12_wheel_dirs, base)))
                        return;
                /* HPC SDK: cuda/ itself only holds links to the default X.Y. */
                if (streq(base, "cuda")) {
                        _cleanup_free_ char *pp = path_dirname(dir->parent_realpath);
                        if (startswith(path_basename(pp), "Linux_"))
                                return;
                }
        }
        /* /usr is the system install's prefix, found from its lib dirs. */
        if (streq(base, "usr"))
                return;
        if (looks_like_toolkit(dir))
                detect_toolkit(dir, l, verdict);
}

static void cuda_to_json(const struct install *in, json_t *o)
{
        json_t *comps = json_object();

        if (!comps)
                die_oom();
        json_set(o, "release", json_version(&in->release, 3));
        for (size_t i = 0; i < _CUDA_COMP_MAX; i++)
                if (in->components[i])
                        json_set(comps, cuda_comp_to_string((enum cuda_comp)i), json_string_lossy(in->components[i]));
        json_set(o, "components", comps);
        if (in->compat_dir) {
                json_t *compat = json_object();

                if (!compat)
                        die_oom();
                json_set(compat, "driver", json_string_lossy(in->compat_driver));
                json_set(compat, "dir", json_string_lossy(in->compat_dir));
                json_set(o, "compat", compat);
        } else
                json_set(o, "compat", json_null());
}

static void ops_cuda(struct opset *s, const struct install *in, const struct config *cfg)
{
        struct strv libs = { 0 }, incs = { 0 }, v = { 0 };
        _cleanup_free_ char *nvcc = in->bin_dir ? path_join(in->bin_dir, "nvcc") : NULL;
        _cleanup_free_ char *stubs = in->lib_dir ? path_join(in->lib_dir, "stubs") : NULL;

        /* The roots are pushed: unload (and a swap) gives back the
         * CUDA_HOME the user had before the load. */
        opset_pushenv(s, "CUDA_HOME", in->prefix);
        opset_pushenv(s, "CUDA_PATH", in->prefix);
        opset_pushenv(s, "CUDA_ROOT", in->prefix);
        opset_pushenv(s, "CUDAToolkit_ROOT", in->prefix);
        if (cfg->pytorch_build_env && install_path_present(in, nvcc))
                opset_setenv(s, "CUDACXX", nvcc);
        /* The host compiler the site gives this CUDA major: CMake (and
         * PyTorch's build) reads CUDAHOSTCXX, a bare nvcc only its flags
         * (CUDA 11.8's ignores NVCC_CCBIN). A {module: NAME} alone sets
         * neither: that module's gcc, first on PATH, is nvcc's default. */
        {
                const struct config_host_compiler *h = config_host_compiler(cfg, install_cuda_major(in));

                if (h && h->path) {
                        _cleanup_free_ char *flags = xasprintf("-ccbin=%s", h->path);

                        opset_setenv(s, "CUDAHOSTCXX", h->path);
                        opset_setenv(s, "NVCC_PREPEND_FLAGS", flags);
                }
        }
        if (*cfg->cuda_arch_list && !streq(cfg->cuda_arch_list, "detect")) {
                opset_setenv(s, "TORCH_CUDA_ARCH_LIST", cfg->cuda_arch_list);
                if (cfg->cuda_arch_list_origin)
                        s->ops[s->n - 1].origin = xstrdup(cfg->cuda_arch_list_origin);
        }

        opset_path_add(s, &v, in->bin_dir);
        opset_prepends(s, "PATH", &v);

        opset_path_add(s, &libs, in->lib_dir);
        for (size_t i = 0; i < in->extra_lib_dirs.len; i++)
                opset_path_add(s, &libs, in->extra_lib_dirs.items[i]);
        if (cfg->ld_library_path[component_cuda.index]) {
                for (size_t i = 0; i < libs.len; i++)
                        strv_add(&v, libs.items[i]);
                opset_prepends(s, "LD_LIBRARY_PATH", &v);
        }
        opset_prepends(s, "LIBRARY_PATH", &libs);

        opset_path_add(s, &incs, in->include_dir);
        for (size_t i = 0; i < in->extra_include_dirs.len; i++)
                opset_path_add(s, &incs, in->extra_include_dirs.items[i]);
        opset_prepends(s, "CPATH", &incs);

        opset_path_add(s, &v, in->prefix);
        opset_prepends(s, "CMAKE_PREFIX_PATH", &v);
        opset_pkgconfig(s, &v, in->lib_dir);
        opset_prepends(s, "PKG_CONFIG_PATH", &v);
        {
                _cleanup_free_ char *m1 = path_join(in->prefix, "share/man");
                _cleanup_free_ char *m2 = path_join(in->prefix, "doc/man");
                opset_path_add(s, &v, m1);
                opset_path_add(s, &v, m2);
                opset_prepends(s, "MANPATH", &v);
        }
        /* The stub libcuda.so lets -lcuda link on a node without a driver;
         * it goes last on LIBRARY_PATH and never on LD_LIBRARY_PATH. */
        if (cfg->stubs_on_library_path && !s->no_paths && install_path_present(in, stubs) && !path_is_system_dir(stubs))
                opset_push(s, ENV_OP_APPEND_PATH, "LIBRARY_PATH", stubs);
}

/* CUDART_VERSION: 12040 for 12.4. */
static int cuda_header_code(const char *buf, size_t len, long *ret)
{
        long code;
        int r = header_define_long(buf, len, "CUDART_VERSION", &code);

        if (r < 0)
                return r;
        if (code < 1000)
                return -EBADMSG;
        *ret = code;
        return 0;
}

static struct version cuda_code_version(long code)
{
        unsigned long c = code > 0 ? (unsigned long)code : 0;

        return (struct version){ .n = { c / 1000, c % 1000 / 10 }, .count = 2 };
}

/* libcudart.so.N; CUDA 11's runtime is libcudart.so.11.0 (two parts, which
 * find_soname_file does not take), so then cuBLAS's libcublas.so.N, whose
 * major is CUDA's since 10.1. */
static unsigned long cuda_module_cuda_major(const struct strv *own)
{
        unsigned long major = 0;

        free(find_soname_file(own, "libcudart", &major));
        if (!major)
                free(find_soname_file(own, "libcublas", &major));
        return major;
}

const struct component component_cuda = {
        .name = "cuda",
        .title = "NVIDIA CUDA Toolkit",
        .label = "CUDA",
        .index = COMPONENT_INDEX(cuda),
        .toolkit = true,
        .version_parts = 2,
        .naming = "{major}.{minor}",
        .library = "libcudart",
        .stems = (const char *const[]){ "libcudart", "libcublas", "libcublasLt", "libcufft", "libcufftw",
                                        "libcurand", "libcusolver", "libcusolverMg", "libcusparse", "libnvrtc",
                                        "libnvrtc-builtins", "libnvJitLink", "libcupti", "libnvToolsExt",
                                        "libnvjpeg", "libcufile", "libnvblas", "libnpp*", NULL },
        .detect = detect_cuda,
        .to_json = cuda_to_json,
        .ops = ops_cuda,
        .help = "For building PyTorch and CUDA extensions from source, and for running\n"
                "them: nvcc on PATH, the toolkit's headers and libraries on CPATH,\n"
                "LIBRARY_PATH and LD_LIBRARY_PATH, and CUDA_HOME/CUDA_PATH for the build.\n",
        .version_headers = (const char *const[]){ "cuda_runtime_api.h", NULL },
        /* cuda_runtime_api.h is 600 KB; CUDART_VERSION is in its first lines. */
        .version_header_head = 64 * 1024,
        .header_code = cuda_header_code,
        .code_version = cuda_code_version,
        .build = {
                .what = "the CUDA runtime",
                .header = "cuda_runtime_api.h",
                .libs = { "-lcudart", NULL },
                .program = "#include <cuda_runtime_api.h>\n"
                           "\n"
                           "int main(void)\n"
                           "{\n"
                           "        int v = 0;\n"
                           "\n"
                           "        return cudaRuntimeGetVersion(&v) == 0 && v > 0 ? 0 : 1;\n"
                           "}\n",
        },
        .lazy = validate_lazy_cuda,
        .probe = { .key = "cudart", .version_key = "runtime_version" },
        .module_cuda_major = cuda_module_cuda_major,
        .torch_build = { .option = "USE_CUDA", .root_variable = NULL, .library_stem = "libcudart" },
};
