/* component-cudss.c: cuDSS, NVIDIA's sparse direct solver (STACK.md §2, §11).
 * Its installs: NVIDIA's redist archives (libcudss-linux-<arch>-<ver>_cuda12-
 * archive), pip wheels (nvidia/cu12, older nvidia/cudss), conda, Spack and
 * EasyBuild prefixes (cuDSS/0.6.0.5-CUDAcore-12.6.2), NVIDIA's Debian
 * packages (…/usr/lib/<triple>/libcudss/12, headers in
 * …/usr/include/libcudss/12) and copies merged into a CUDA prefix. */
#include <errno.h>
#include <fcntl.h>

#include "component-cudss.h"
#include "detect.h"
#include "diag.h"
#include "elf-file.h"
#include "install.h"
#include "libfile.h"
#include "name-hint.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "walk.h"
#include "banned.h"

static const char *const cudss_headers[] = { "cudss.h", NULL };

/* CUDSS_VER_MAJOR, _MINOR, _PATCH: what PyTorch's FindCUDSS reads. */
static const char *const cudss_macros[4] = { "CUDSS_VER_MAJOR", "CUDSS_VER_MINOR", "CUDSS_VER_PATCH", NULL };

/* libcudss links cuBLAS dynamically: its DT_NEEDED libcublas.so.N or
 * libcublasLt.so.N tell the CUDA major; 0 when neither is there. */
static unsigned long cublas_needed_major(int fd, const char *rel)
{
        struct elf_info info = { 0 };
        struct diag d = DIAG_INIT;
        unsigned long major = 0;

        if (elf_read_info(fd, rel, &info, &d) >= 0)
                for (size_t i = 0; i < info.needed.len && !major; i++) {
                        struct version v;
                        if (soname_version_parse(info.needed.items[i], "libcublas", &v) >= 0 ||
                            soname_version_parse(info.needed.items[i], "libcublasLt", &v) >= 0)
                                major = v.n[0];
                }
        elf_info_release(&info);
        diag_release(&d);
        return major;
}

/* nvidia/cu12: the directory the CUDA 12 wheels share since cuDSS 0.7. */
static unsigned long wheel_dir_cuda_major(const char *realpath)
{
        const char *base = path_basename(realpath);
        struct version v;

        if (startswith(base, "cu") && version_parse(base + 2, &v) == 0 && v.count == 1)
                return v.n[0];
        return 0;
}

/* The CUDA it targets: what its library loads, then what its names and
 * paths say; each source that names another major is a problem. */
static void settle_cuda(struct install *in, unsigned long elf_major, const struct version *hint,
                        const char *hint_source, const struct version *others, const char *const *sources,
                        size_t n)
{
        if (elf_major) {
                in->cuda_version = (struct version){ .n = { elf_major }, .count = 1 };
                if (hint->count && hint->n[0] == elf_major)
                        in->cuda_version = *hint;
        } else if (hint->count)
                in->cuda_version = *hint;
        for (size_t i = 0; i < n && !in->cuda_version.count; i++)
                if (others[i].count)
                        in->cuda_version = others[i];
        if (!in->cuda_version.count)
                return;
        if (hint->count && hint->n[0] != in->cuda_version.n[0])
                install_add_problem(in, "cuda-major-mismatch",
                                    "%s says CUDA %lu but libcudss loads CUDA %lu libraries", hint_source,
                                    hint->n[0], in->cuda_version.n[0]);
        for (size_t i = 0; i < n; i++)
                if (others[i].count && others[i].n[0] != in->cuda_version.n[0])
                        install_add_problem(in, "cuda-major-mismatch", "built for CUDA %lu but %s says CUDA %lu",
                                            in->cuda_version.n[0], sources[i], others[i].n[0]);
}

static void detect_cudss(const struct walk_dir *dir, struct install_list *l,
                         struct walk_verdict *verdict)
{
        const char *hint_source = "the directory name";
        _cleanup_free_ char *lib_rel = NULL;
        struct library_find f;
        struct dist_infos di = { 0 };
        struct name_hint hint = { 0 };
        struct version header = { 0 }, conda = { 0 };
        struct version_vote votes[3];
        struct install *in;
        unsigned long elf_major, wheel_major = 0;

        if (library_find(dir, "libcudss", cudss_headers, &f) < 0)
                return;
        in = library_install_new(&component_cudss, dir, &f, cudss_headers);
        lib_rel = path_join(f.ld.rel, f.ld.soname_file);
        if (f.include_rel) {
                _cleanup_free_ char *h = path_join(f.include_rel, "cudss.h");
                struct strbuf sb = STRBUF_INIT;

                if (read_head_at(f.include_fd, f.usr ? f.usr : dir->path, h, DETECT_MAX_HEADER_HEAD, in,
                                 &sb) >= 0)
                        (void)header_define_triple(sb.buf, sb.len, cudss_macros, &header);
                strbuf_release(&sb);
        }
        if (f.ld.soname.n[0] != 0)
                install_add_problem(in, "version-mismatch", "'%s' is not a cuDSS 0 soname",
                                    f.ld.soname_file);

        if (f.site) {
                dist_infos_read_path(f.site, &di);
                wheel_major = wheel_dir_cuda_major(dir->realpath);
        } else if (walk_dir_find(dir, "dist-info"))
                dist_infos_read(dir->fd, "dist-info", &di);
        if (dist_infos_name_hint(&di, "nvidia-cudss", &component_cudss, &hint) >= 0)
                hint_source = "the wheel name";
        else if (name_hint_of(&component_cudss, path_basename(dir->realpath),
                              dir->parent_realpath ? path_basename(dir->parent_realpath) : NULL,
                              &hint) < 0)
                hint = (struct name_hint){ 0 };

        votes[0] = (struct version_vote){ header, "cudss.h" };
        votes[1] = (struct version_vote){ f.ld.full.count >= 3 ? f.ld.full : f.ld.soname,
                                          f.ld.full.count >= 3 ? "the libcudss file name"
                                                               : "the libcudss soname" };
        votes[2] = (struct version_vote){ hint.version, hint_source };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 3);
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the cuDSS version",
                                    in->prefix);
        /* The build number (0.7.1.4) is only in names. */
        if (hint.version.count == 4 && in->version.count) {
                struct version xyz = version_truncate(&hint.version, 3);
                if (version_compare(&xyz, &in->version) == 0)
                        in->build = xasprintf("%lu", hint.version.n[3]);
        }

        if (f.layout == LAYOUT_CONDA)
                (void)conda_cuda_version(dir->fd, &conda);
        elf_major = cublas_needed_major(dir->fd, lib_rel);
        {
                const struct version others[] = {
                        { .n = { f.tree_major }, .count = f.tree_major ? 1 : 0 },
                        { .n = { wheel_major }, .count = wheel_major ? 1 : 0 },
                        conda,
                };
                static const char *const sources[] = {
                        "the Debian package path", "the wheel directory", "the conda cuda-version package",
                };
                settle_cuda(in, elf_major, &hint.cuda, hint_source, others, sources, ELEMENTSOF(others));
        }

        install_list_add(l, in);
        library_verdict(verdict, f.usr, f.layout);
        dist_infos_release(&di);
        library_find_release(&f);
}

static void cudss_to_json(const struct install *in, json_t *o)
{
        json_set(o, "build", json_string_lossy(in->build));
}

/* libcudss.so.0 names the libcublas (so the CUDA) it needs. */
static unsigned long cudss_module_cuda_major(const struct strv *own)
{
        return soname_file_cuda_major(own, "libcudss", lib_cuda_major_named_by);
}

const struct component component_cudss = {
        .name = "cudss",
        .title = "NVIDIA cuDSS",
        .label = "cuDSS",
        .index = COMPONENT_INDEX(cudss),
        .version_parts = 3,
        .cuda_parts = 1,
        .naming = "{major}.{minor}.{patch}",
        .library = "libcudss",
        /* libcudss and its threading and communication layers
         * (libcudss_mtlayer_gomp, libcudss_commlayer_nccl, …). */
        .stems = (const char *const[]){ "libcudss*", NULL },
        .wheel = "nvidia-cudss",
        .archive = "libcudss",
        .detect = detect_cudss,
        .to_json = cudss_to_json,
        .vars = (const struct component_var[]){
                /* FindCUDSS reads CUDSS_ROOT as <Pkg>_ROOT and the older
                 * CUDSS_ROOT_DIR into CMAKE_PREFIX_PATH; CUDSS_LIBRARY is
                 * a directory it searches last (STACK.md §2.5). */
                { "CUDSS_ROOT", COMPONENT_VALUE_PREFIX, .build = true },
                { "CUDSS_ROOT_DIR", COMPONENT_VALUE_PREFIX, .build = true },
                { "CUDSS_INCLUDE_DIR", COMPONENT_VALUE_INCLUDE_DIR, .build = true },
                { "CUDSS_LIBRARY", COMPONENT_VALUE_LIB_DIR, .build = true },
                { "USE_CUDSS", COMPONENT_VALUE_ONE, .build = true },
                { NULL },
        },
        .help = "For building PyTorch from source against this cuDSS (USE_CUDSS=1,\n"
                "CUDSS_ROOT, CUDSS_ROOT_DIR, CUDSS_INCLUDE_DIR, CUDSS_LIBRARY) and running\n"
                "it (libcudss.so.0 and its layer plug-ins on LD_LIBRARY_PATH).\n",
        .version_headers = (const char *const[]){ "cudss.h", NULL },
        .version_macros = cudss_macros,
        .code_version = component_code_mmp,
        .build = {
                .what = "cuDSS",
                .header = "cudss.h",
                .libs = { "-lcudss", NULL },
                .program = "#include <cudss.h>\n"
                           "\n"
                           "int main(void)\n"
                           "{\n"
                           "        int v = -1;\n"
                           "\n"
                           "        return cudssGetProperty(MAJOR_VERSION, &v) == CUDSS_STATUS_SUCCESS && v >= 0 ? 0 : 1;\n"
                           "}\n",
        },
        .probe = { .key = "cudss", .request = "cudss=libcudss.so.0:cudssGetProperty:property" },
        .module_cuda_major = cudss_module_cuda_major,
        .doctor_cuda_major_why = "it loads the libcublas of its own CUDA major beside torch's: torch.linalg's sparse solvers fail to load or crash",
        .torch_build = {
                .option = "USE_CUDSS",
                .root_variable = "CUDSS_ROOT",
                .library_stem = "libcudss",
                .order = 3,
                .enable = { "USE_CUDSS" },
                .find_root = "CUDSS_ROOT",
                .append_root = "CUDSS_ROOT",
                .append_root_dir = "CUDSS_ROOT_DIR",
                .header = { .names = (const char *const[]){ "cudss.h", NULL }, .suffixes = (const char *const[]){ "cuda/include", "cuda", "include", NULL },
                            .hints = "CUDSS_INCLUDE_DIR" },
                .library = { .names = (const char *const[]){ "libcudss.so", NULL }, .suffixes = (const char *const[]){ "lib", "lib64", "cuda/lib", "cuda/lib64", "lib/x64", NULL },
                             .paths = "CUDSS_LIBRARY" },
        },
};
