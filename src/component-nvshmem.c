/* component-nvshmem.c: NVSHMEM. Its installs (STACK.md §3.3): NVIDIA's
 * libnvshmem-linux-<arch>-<ver>_cuda<N>-archive tarballs, pip wheels
 * (nvidia/nvshmem), conda environments, HPC SDK comm_libs/X.Y/nvshmem,
 * Spack and EasyBuild prefixes, copies inside a CUDA prefix and NVIDIA's
 * apt packages (/usr/lib/<triple>/nvshmem/<N>, /usr/include/nvshmem_<N>).
 *
 * NVSHMEM links the CUDA runtime statically, so no DT_NEEDED tells the
 * CUDA major a build is for: only names and paths do (STACK.md §11). */
#include <errno.h>
#include <fcntl.h>

#include "component-nvshmem.h"
#include "detect.h"
#include "elf-file.h"
#include "install.h"
#include "libfile.h"
#include "name-hint.h"
#include "strbuf.h"
#include "util.h"
#include "util-path.h"
#include "version.h"
#include "banned.h"

/* The release, in non_abi/nvshmem_version.h (NVSHMEM_MAJOR_VERSION is the
 * OpenSHMEM spec's 1.3, never read). */
/* The CUDA major of a conda environment's cuda-version pin, 0 when none. */
static unsigned long conda_major(int dirfd)
{
        struct version v;

        return conda_cuda_version(dirfd, &v) == 0 ? v.n[0] : 0;
}

static const char *const nvshmem_vendor_macros[4] = {
        "NVSHMEM_VENDOR_MAJOR_VERSION", "NVSHMEM_VENDOR_MINOR_VERSION", "NVSHMEM_VENDOR_PATCH_VERSION", NULL,
};

static const char *const nvshmem_headers[] = { "nvshmem.h", NULL };
/* The release (NVSHMEM_VENDOR_*); nvshmem_constants.h's NVSHMEM_MAJOR_VERSION
 * is the OpenSHMEM specification's. */
static const char *const nvshmem_version_headers[] = { "non_abi/nvshmem_version.h", NULL };

/* …/comm_libs/<X.Y>/nvshmem: the CUDA version in the path, else count 0. */
static struct version hpc_sdk_cuda_of(const char *realpath)
{
        _cleanup_free_ char *xy = path_dirname(realpath);
        _cleanup_free_ char *comm = path_dirname(xy);
        struct version v = { 0 };

        if (streq(path_basename(realpath), "nvshmem") && streq(path_basename(comm), "comm_libs"))
                (void)version_parse(path_basename(xy), &v);
        return v;
}

/* NVIDIA's apt packages: the libraries in …/usr/lib/<triple>/nvshmem/<N>,
 * the headers in …/usr/include/nvshmem_<N>; ret as library_find fills it. */
static int deb_find(const struct walk_dir *dir, struct library_find *ret, unsigned long *ret_major)
{
        struct library_find f = { .usr_fd = -1, .include_fd = -1 };
        unsigned long major;
        int r;

        f.usr = system_library_tree_of(dir->realpath, "nvshmem", &major);
        if (!f.usr)
                return -ENOENT;
        r = libdir_in(dir->fd, ".", "libnvshmem_host", &f.ld);
        if (r < 0) {
                if (r == -E2BIG)
                        libdir_warn_too_big(dir);
                library_find_release(&f);
                return -ENOENT;
        }
        f.layout = LAYOUT_SYSTEM;
        f.usr_fd = open(f.usr, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        f.include_fd = f.usr_fd;
        if (f.usr_fd >= 0) {
                _cleanup_free_ char *inc = xasprintf("include/nvshmem_%lu", major);
                _cleanup_free_ char *h = path_join(inc, "nvshmem.h");

                if (detect_is_file(f.usr_fd, h))
                        f.include_rel = TAKE_PTR(inc);
        }
        *ret = f;
        *ret_major = major;
        return 0;
}

/* The plugins next to libnvshmem_host are dlopen()ed by a soname whose
 * major the header names; one of another major is from another release
 * and fails to load (STACK.md §3.1, §10.9). */
static void check_plugins(struct install *in, int fd, const char *rel, const char *kind, long want)
{
        _cleanup_free_ char *prefix = xasprintf("nvshmem_%s_", kind);
        struct strv names = { 0 };

        if (want < 0 || dir_list(fd, rel, &names) < 0)
                return;
        for (size_t i = 0; i < names.len; i++) {
                const char *so = strstr(names.items[i], ".so.");
                struct version v;

                if (!startswith(names.items[i], prefix) || !so || version_parse(so + 4, &v) < 0 ||
                    v.n[0] == (unsigned long)want)
                        continue;
                install_add_problem(in, "version-mismatch",
                                    "'%s/%s' is a %s plugin of major %lu but this NVSHMEM loads major %ld",
                                    in->lib_dir, names.items[i], kind, v.n[0], want);
        }
        strv_release(&names);
}

/* The CUDA runtime beside it (a CUDA prefix it was copied into, a conda
 * environment): its soname's major, else 0. */
static unsigned long cudart_beside(int fd, const char *rel)
{
        struct libdir cudart;
        unsigned long major;

        if (libdir_in(fd, rel, "libcudart", &cudart) < 0)
                return 0;
        major = cudart.soname.n[0];
        libdir_release(&cudart);
        return major;
}

/* The name hints of the directory (archive, EasyBuild, Spack, HPC SDK)
 * or, in a wheel, of its dist-info. */
static const char *nvshmem_hints(const struct walk_dir *dir, const struct library_find *f,
                                 struct name_hint *ret)
{
        struct dist_infos di = { 0 };
        const char *source = NULL;

        *ret = (struct name_hint){ 0 };
        if (f->site)
                dist_infos_read_path(f->site, &di);
        if (dist_infos_name_hint(&di, "nvidia-nvshmem", &component_nvshmem, ret) >= 0)
                source = "the wheel name";
        else if (!f->usr && name_hint_of(&component_nvshmem, path_basename(dir->realpath),
                                         dir->parent_realpath ? path_basename(dir->parent_realpath)
                                                              : NULL,
                                         ret) >= 0)
                source = "the directory name";
        dist_infos_release(&di);
        return source;
}

/* A CUDA major as a one-part version; 0 is none (count 0). */
static struct version major_version(unsigned long major)
{
        return (struct version){ .n = { major }, .count = major ? 1 : 0 };
}

static void detect_nvshmem(const struct walk_dir *dir, struct install_list *l,
                           struct walk_verdict *verdict)
{
        const char *hint_source, *cuda_source = "";
        _cleanup_free_ char *device = NULL;
        struct library_find f;
        struct name_hint hint;
        struct version header = { 0 }, path_cuda, cuda = { 0 };
        struct version_vote votes[4], sources[5];
        struct install *in;
        long transport = -1, bootstrap = -1;
        unsigned long deb_major = 0, beside, conda;

        if (deb_find(dir, &f, &deb_major) < 0 &&
            library_find(dir, "libnvshmem_host", nvshmem_headers, &f) < 0)
                return;
        path_cuda = hpc_sdk_cuda_of(dir->realpath);
        if (path_cuda.count && !f.usr)
                f.layout = LAYOUT_HPC_SDK;
        in = library_install_new(&component_nvshmem, dir, &f, nvshmem_headers);
        /* nvshmem-info, nvshmrun; a CUDA prefix's bin is CUDA's. */
        if (!f.usr && f.layout != LAYOUT_MERGED && detect_is_file(dir->fd, "bin/nvshmem-info"))
                in->bin_dir = path_join(dir->path, "bin");
        if (f.include_rel) {
                _cleanup_free_ char *h = path_join(f.include_rel, nvshmem_version_headers[0]);
                struct strbuf sb = STRBUF_INIT;

                if (read_head_at(f.include_fd, f.usr ? f.usr : dir->path, h, DETECT_MAX_HEADER_HEAD, in,
                                 &sb) >= 0) {
                        (void)header_define_triple(sb.buf, sb.len, nvshmem_vendor_macros, &header);
                        (void)header_define_long(sb.buf, sb.len, "NVSHMEM_TRANSPORT_PLUGIN_MAJOR_VERSION",
                                                 &transport);
                        (void)header_define_long(sb.buf, sb.len, "NVSHMEM_BOOTSTRAP_PLUGIN_MAJOR_VERSION",
                                                 &bootstrap);
                }
                strbuf_release(&sb);
        }
        hint_source = nvshmem_hints(dir, &f, &hint);

        votes[0] = (struct version_vote){ header, "nvshmem_version.h" };
        votes[1] = (struct version_vote){ .source = "the libnvshmem_host file name" };
        if (f.ld.full.count >= 3)
                votes[1].value = f.ld.full;
        /* SOVERSION is the release's major: libnvshmem_host.so.3 is 3.x. */
        votes[2] = (struct version_vote){ f.ld.soname, "the libnvshmem_host soname" };
        votes[3] = (struct version_vote){ hint.version, hint_source };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 3);
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the NVSHMEM version",
                                    in->prefix);

        /* The CUDA it was built for: the package's directory, the HPC SDK
         * path, the archive/wheel/EasyBuild name, the conda environment's
         * pin, a CUDA runtime beside it. Any that disagrees is a problem. */
        beside = f.usr ? 0 : cudart_beside(dir->fd, f.ld.rel);
        conda = f.layout == LAYOUT_CONDA ? conda_major(dir->fd) : 0;
        sources[0] = (struct version_vote){ major_version(deb_major), "the package directory" };
        sources[1] = (struct version_vote){ path_cuda, "the HPC SDK path" };
        sources[2] = (struct version_vote){ hint.cuda, hint_source };
        sources[3] = (struct version_vote){ major_version(conda), "the conda environment's cuda-version" };
        sources[4] = (struct version_vote){ major_version(beside), "the libcudart beside it" };
        for (size_t i = 0; i < ELEMENTSOF(sources); i++) {
                if (!sources[i].value.count)
                        continue;
                if (!cuda.count) {
                        cuda = sources[i].value;
                        cuda_source = sources[i].source;
                } else if (sources[i].value.n[0] != cuda.n[0])
                        install_add_problem(in, "cuda-major-mismatch", "%s says CUDA %lu but %s says CUDA %lu",
                                            cuda_source, cuda.n[0], sources[i].source, sources[i].value.n[0]);
        }
        in->cuda_version = cuda.count > 2 ? version_truncate(&cuda, 2) : cuda;

        /* PyTorch's build needs the device library too (STACK.md §3.5): a
         * runtime-only install (conda's libnvshmem3, apt's
         * libnvshmem3-cuda-N without libnvshmem3-static-cuda-N) still runs
         * torch. */
        device = path_join(f.ld.rel, "libnvshmem_device.a");
        if (!detect_is_file(dir->fd, device))
                install_add_problem(in, "missing-device-library",
                                    "no libnvshmem_device.a in '%s': PyTorch's build cannot use this NVSHMEM (it needs libnvshmem_host, libnvshmem_device.a and nvshmem.h), running against it works",
                                    in->lib_dir);
        if (deb_major)
                install_add_problem(in, "pytorch-unfindable",
                                    "PyTorch's build looks for libnvshmem_host in $NVSHMEM_HOME/lib or lib64 and for nvshmem.h in $NVSHMEM_HOME/include, which '%s' and '%s' are not: building against it needs a directory with include and lib links to them",
                                    in->lib_dir, in->include_dir ? in->include_dir : "(no headers)");
        check_plugins(in, dir->fd, f.ld.rel, "transport", transport);
        check_plugins(in, dir->fd, f.ld.rel, "bootstrap", bootstrap);

        install_list_add(l, in);
        library_verdict(verdict, f.usr, f.layout);
        library_find_release(&f);
}

static void nvshmem_to_json(const struct install *in, json_t *o)
{
        json_set(o, "cuda_version", json_version(&in->cuda_version, 2));
}

/* No DT_NEEDED names the CUDA: the directory holding libnvshmem_host
 * does (nvshmem/12), or its install prefix: its name (…_cuda12-archive,
 * comm_libs/12.4/nvshmem, 3.2.5-gompi-2024a-CUDA-12.6.0), a wheel's
 * dist-info, a conda environment's cuda-version. */
static unsigned long nvshmem_module_cuda_major(const struct strv *own)
{
        unsigned long lib_major = 0, major = 0;
        _cleanup_free_ char *path = find_soname_file(own, "libnvshmem_host", &lib_major);
        _cleanup_free_ char *dir = path ? path_dirname(path) : NULL;
        _cleanup_free_ char *real = dir ? realpath(dir, NULL) : NULL;
        _cleanup_free_ char *usr = NULL, *prefix = NULL, *parent = NULL, *site = NULL;
        _cleanup_close_ int fd = -1;
        struct dist_infos di = { 0 };
        struct name_hint h;

        if (!real)
                return 0;
        usr = system_library_tree_of(real, "nvshmem", &major);
        if (usr)
                return major;
        prefix = path_dirname(real);
        parent = path_dirname(prefix);
        if (name_hint_of(&component_nvshmem, path_basename(prefix), path_basename(parent), &h) >= 0 &&
            h.cuda.count)
                return h.cuda.n[0];
        site = wheel_site_packages_of(prefix);
        if (site) {
                dist_infos_read_path(site, &di);
                if (dist_infos_name_hint(&di, "nvidia-nvshmem", &component_nvshmem, &h) >= 0 && h.cuda.count)
                        major = h.cuda.n[0];
                dist_infos_release(&di);
                return major;
        }
        fd = open(prefix, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd >= 0 ? conda_major(fd) : 0;
}

const struct component component_nvshmem = {
        .name = "nvshmem",
        .title = "NVIDIA NVSHMEM",
        .label = "NVSHMEM",
        .index = COMPONENT_INDEX(nvshmem),
        .version_parts = 3,
        .cuda_parts = 2,
        .naming = "{major}.{minor}.{patch}",
        .library = "libnvshmem_host",
        .stems = (const char *const[]){ "libnvshmem_host", NULL },
        .wheel = "nvidia-nvshmem",
        .archive = "libnvshmem",
        .hpc_sdk_comm_libs = true,
        .detect = detect_nvshmem,
        .to_json = nvshmem_to_json,
        .vars = (const struct component_var[]){
                /* What PyTorch's build reads (STACK.md §3.5) and what
                 * EasyBuild's NVSHMEM modules set. */
                { "NVSHMEM_HOME", COMPONENT_VALUE_PREFIX },
                { "USE_NVSHMEM", COMPONENT_VALUE_ONE, .build = true },
                { NULL },
        },
        .help = "For building PyTorch from source with NVSHMEM (USE_NVSHMEM=1, NVSHMEM_HOME;\n"
                "it needs libnvshmem_host, libnvshmem_device.a and nvshmem.h) and running\n"
                "it (libnvshmem_host.so.3 and the nvshmem_bootstrap_*/nvshmem_transport_*\n"
                "plugins it loads on LD_LIBRARY_PATH).\n",
        .version_headers = nvshmem_version_headers,
        .version_macros = nvshmem_vendor_macros,
        .code_version = component_code_mmp,
        .build = {
                .what = "NVSHMEM",
                .header = "nvshmem.h",
                .libs = { "-lnvshmem_host", NULL },
                .program = "#include <nvshmem.h>\n"
                           "#include <nvshmemx.h>\n"
                           "\n"
                           "int main(void)\n"
                           "{\n"
                           "        int major = 0, minor = 0, patch = 0;\n"
                           "\n"
                           "        nvshmemx_vendor_get_version_info(&major, &minor, &patch);\n"
                           "        return major > 0 ? 0 : 1;\n"
                           "}\n",
                /* nvshmem.h is C++ (templates in its device headers). */
                .cplusplus = true,
        },
        .probe = {
                .key = "nvshmem",
                .request = "nvshmem=libnvshmem_host.so.3:nvshmemx_vendor_get_version_info:int3",
        },
        .module_cuda_major = nvshmem_module_cuda_major,
        .doctor_cuda_major_why = "it carries its own CUDA runtime, built for the other major: symmetric memory fails at initialisation (or needs a newer driver than torch)",
        .torch_build = {
                .option = "USE_NVSHMEM",
                .root_variable = "NVSHMEM_HOME",
                .library_stem = "libnvshmem_host",
                .order = 6,
                .enable = { "USE_NVSHMEM" },
                .required = "nvshmem_device",
                .library_first = true,
                .header = { .names = (const char *const[]){ "nvshmem.h", NULL }, .hints = "NVSHMEM_HOME", .hints_dir = "include" },
                .library = { .names = (const char *const[]){ "nvshmem_host", "libnvshmem_host.so.3", NULL }, .suffixes = (const char *const[]){ "lib", "lib64", "cuda/lib", "cuda/lib64", "lib/x64", NULL },
                             .hints = "NVSHMEM_HOME" },
        },
};
