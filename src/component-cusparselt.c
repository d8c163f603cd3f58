/* component-cusparselt.c: cuSPARSELt. Its installs (STACK.md §1.3): NVIDIA's
 * redist archives (libcusparse_lt-linux-<arch>-<ver>[_cuda12|_cuda13]-archive),
 * pip wheels (nvidia/cusparselt), conda environments, Spack and EasyBuild
 * prefixes, NVIDIA's CUDA-repository packages (…/lib/<triple>/libcusparseLt/12)
 * and copies inside a CUDA prefix. It links the CUDA runtime statically
 * (STACK.md §11), so the CUDA major it targets comes from names only. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "component-cusparselt.h"
#include "detect.h"
#include "elf-file.h"
#include "install.h"
#include "libfile.h"
#include "name-hint.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "walk.h"
#include "wheel-record.h"
#include "banned.h"

static const char *const cusparselt_headers[] = { "cusparseLt.h", NULL };
static const char *const cusparselt_macros[] = {
        "CUSPARSELT_VER_MAJOR", "CUSPARSELT_VER_MINOR", "CUSPARSELT_VER_PATCH", "CUSPARSELT_VER_BUILD",
};

/* The CUDA major a conda environment's cusparselt package is pinned to: its
 * conda-meta record depends on "cuda-version >=12,<13.0a0". 0 when none. */
static unsigned long conda_package_cuda_major(const struct walk_dir *dir)
{
        struct strv names = { 0 };
        unsigned long major = 0;

        if (!walk_dir_find(dir, "conda-meta") || dir_list(dir->fd, "conda-meta", &names) < 0)
                return 0;
        for (size_t i = 0; i < names.len && !major; i++) {
                _cleanup_free_ char *rel = NULL;
                struct strbuf sb = STRBUF_INIT;
                const char *p;
                struct version v;

                if (!startswith(names.items[i], "cusparselt-") || !endswith(names.items[i], ".json"))
                        continue;
                rel = path_join("conda-meta", names.items[i]);
                if (read_head_at(dir->fd, NULL, rel, 64 * 1024, NULL, &sb) >= 0 &&
                    (p = strstr(sb.buf, "\"cuda-version >=")) &&
                    version_parse_prefix(p + strlen("\"cuda-version >="), &v, NULL) >= 0)
                        major = v.n[0];
                strbuf_release(&sb);
        }
        strv_release(&names);
        return major;
}

/* The CUDA of a copy inside a CUDA prefix: the runtime beside it. */
static unsigned long merged_cuda_major(const struct walk_dir *dir, const struct libdir *ld)
{
        struct libdir rt = { 0 };
        unsigned long major = 0;

        if (libdir_in(dir->fd, ld->rel, "libcudart", &rt) >= 0)
                major = rt.soname.n[0];
        libdir_release(&rt);
        return major;
}

/* The version and CUDA major told by names: the wheel's dist-info (the
 * one whose RECORD the library fits, when the cu12 and cu13 wheels share
 * the folder), else the directory and its parent (archives, Spack,
 * EasyBuild). */
static void name_hints(const struct walk_dir *dir, const struct library_find *f,
                       struct name_hint *ret, const char **ret_source)
{
        struct dist_infos di = { 0 };

        *ret = (struct name_hint){ 0 };
        if (f->site && !f->wheel_name)
                dist_infos_read_path(f->site, &di);
        if (f->wheel_name &&
            dist_name_hint(&component_cusparselt, f->wheel_name, f->wheel_version, ret) >= 0)
                *ret_source = "the wheel's dist-info";
        else if (dist_infos_name_hint(&di, "nvidia-cusparselt", &component_cusparselt, ret) >= 0)
                *ret_source = "the wheel name";
        else if (!f->usr &&
                 name_hint_of(&component_cusparselt, path_basename(dir->realpath),
                              dir->parent_realpath ? path_basename(dir->parent_realpath) : NULL,
                              ret) >= 0)
                *ret_source = "the directory name";
        else
                *ret = (struct name_hint){ 0 };
        dist_infos_release(&di);
}

/* A reading of the CUDA major and where it comes from. */
struct cuda_vote {
        unsigned long major;
        const char *source;
};

static void detect_cusparselt(const struct walk_dir *dir, struct install_list *l,
                              struct walk_verdict *verdict)
{
        const char *hint_source = NULL;
        struct library_find f;
        struct name_hint hint;
        struct version header = { 0 }, file = { 0 };
        struct version_vote votes[3];
        struct cuda_vote cuda[4];
        struct install *in;
        unsigned long deb_major = 0;
        const char *build = NULL;
        size_t n_cuda = 0;

        /* NVIDIA's CUDA-repository package is a per-library tree,
         * …/lib/<triple>/libcusparseLt/<N> (library_find). */
        if (library_find(dir, "libcusparseLt", cusparselt_headers, &f) < 0)
                return;
        deb_major = f.tree_major;
        in = library_install_new(&component_cusparselt, dir, &f, cusparselt_headers);
        if (f.include_rel) {
                _cleanup_free_ char *h = path_join(f.include_rel, "cusparseLt.h");
                struct strbuf sb = STRBUF_INIT;

                if (read_head_at(f.include_fd, f.usr ? f.usr : dir->path, h, DETECT_MAX_HEADER_HEAD, in,
                                 &sb) >= 0 &&
                    header_define_triple(sb.buf, sb.len, cusparselt_macros, &header) == -EINVAL)
                        install_add_problem(in, "version-mismatch",
                                            "'%s/cusparseLt.h': a CUSPARSELT_VER_* define is not a number",
                                            in->include_dir);
                strbuf_release(&sb);
        }
        if (f.ld.soname.n[0] != 0)
                install_add_problem(in, "version-mismatch", "'%s' is not a cuSPARSELt soname (libcusparseLt.so.0)",
                                    f.ld.soname_file);
        if (f.ld.full.count >= 3)
                file = f.ld.full;
        name_hints(dir, &f, &hint, &hint_source);

        votes[0] = (struct version_vote){ header, "cusparseLt.h" };
        votes[1] = (struct version_vote){ file, "the libcusparseLt file name" };
        votes[2] = (struct version_vote){ hint.version, hint_source };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 3);
        if (f.wheel_name && in->version.count && !header.count && file.count < 3)
                install_set_evidence(in, "version", "dist-info");
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the cuSPARSELt version",
                                    in->prefix);
        /* The build number (0.8.1.1): the header's, else the names'. */
        {
                const struct version *builds[] = { &header, &file, &hint.version };

                for (size_t i = 0; i < ELEMENTSOF(builds) && in->version.count && !build; i++) {
                        struct version xyz = version_truncate(builds[i], 3);

                        if (builds[i]->count == 4 && version_compare(&xyz, &in->version) == 0) {
                                in->build = xasprintf("%lu", builds[i]->n[3]);
                                build = votes[i].source;
                        }
                }
                for (size_t i = 0; i < ELEMENTSOF(builds) && in->build; i++) {
                        struct version xyz = version_truncate(builds[i], 3);

                        if (builds[i]->count == 4 && version_compare(&xyz, &in->version) == 0 &&
                            strtoul(in->build, NULL, 10) != builds[i]->n[3])
                                install_add_problem(in, "version-mismatch", "%s says build %s but %s says %lu",
                                                    build, in->build, votes[i].source, builds[i]->n[3]);
                }
        }

        /* The CUDA it targets, by the sources STACK.md §11 gives, first
         * wins, the others must agree. */
        if (deb_major)
                cuda[n_cuda++] = (struct cuda_vote){ deb_major, "its package directory" };
        if (hint.cuda.count)
                cuda[n_cuda++] = (struct cuda_vote){ hint.cuda.n[0], hint_source };
        if (f.layout == LAYOUT_CONDA)
                cuda[n_cuda++] = (struct cuda_vote){ conda_package_cuda_major(dir), "its conda package" };
        if (f.layout == LAYOUT_MERGED)
                cuda[n_cuda++] = (struct cuda_vote){ merged_cuda_major(dir, &f.ld), "the CUDA prefix it is in" };
        for (size_t i = 0; i < n_cuda; i++) {
                if (!cuda[i].major)
                        continue;
                if (!in->cuda_version.count) {
                        in->cuda_version = (struct version){ .n = { cuda[i].major }, .count = 1 };
                        if (f.wheel_name && cuda[i].source == hint_source)
                                install_set_evidence(in, "cuda_version", "dist-info");
                }
                else if (cuda[i].major != in->cuda_version.n[0])
                        install_add_problem(in, "cuda-major-mismatch", "%s says CUDA %lu but %s says CUDA %lu",
                                            cuda[0].source, in->cuda_version.n[0], cuda[i].source,
                                            cuda[i].major);
        }
        /* 0.5 to 0.7 were built for CUDA 12 only (one archive each). */
        if (!in->cuda_version.count && in->version.count && in->version.n[0] == 0 &&
            in->version.n[1] >= 5 && in->version.n[1] <= 7)
                in->cuda_version = (struct version){ .n = { 12 }, .count = 1 };

        install_list_add(l, in);
        library_verdict(verdict, f.usr, f.layout);
        library_find_release(&f);
}

/* Spack's names: cusparselt-<ver>-cuda120-<hash> (the CUDA 12 archive). */
static bool cusparselt_name_hint(const char *p, struct name_hint *h)
{
        struct version v, cuda;
        const char *end;

        if (!name_version(p, &v, &end) || !startswith(end, "-cuda") ||
            !name_version(end + 5, &cuda, NULL) || cuda.count != 1 || cuda.n[0] < 100)
                return false;
        h->version = v;
        h->cuda = (struct version){ .n = { cuda.n[0] / 10 }, .count = 1 };
        return true;
}

static void cusparselt_to_json(const struct install *in, json_t *o)
{
        json_set(o, "build", json_string_lossy(in->build));
}

/* The CUDA major of the wheel that installed real, a library in
 * site-packages/nvidia/cusparselt/lib: the -cuN of the dist whose RECORD
 * gives the file its size (wheel-record.h: the cu12 and cu13 wheels share
 * the folder). 0 when not a wheel's or none tells. */
static unsigned long wheel_cuda_major(const char *real)
{
        _cleanup_free_ char *lib = path_dirname(real);
        _cleanup_free_ char *folder = path_dirname(lib);
        _cleanup_free_ char *site = wheel_site_packages_of(folder);
        _cleanup_(wheel_dists_release) struct wheel_dists d = { 0 };
        const struct wheel_dist *w;
        const char *cu;
        unsigned long major = 0;
        struct stat st;

        if (!site || stat(real, &st) < 0)
                return 0;
        wheel_dists_read(&(struct walk_dir){ 0 }, site, "nvidia-cusparselt-", &d);
        w = wheel_dists_owner(&d, real + strlen(site) + 1, st.st_size);
        cu = w ? strrchr(w->name, '-') : NULL;
        if (cu && startswith(cu, "-cu") && cu[3] >= '1' && cu[3] <= '9' &&
            strspn(cu + 3, "0123456789") == strlen(cu + 3) && strlen(cu + 3) <= 3)
                major = strtoul(cu + 3, NULL, 10);
        return major;
}

/* Only names tell (it links the runtime statically): the package
 * directory libcusparseLt/N, an archive's _cudaN, EasyBuild's -CUDA-N,
 * a wheel's dist name (nvidia-cusparselt-cu13: the runtime-only one). */
static unsigned long cusparselt_module_cuda_major(const struct strv *own)
{
        unsigned long lib_major = 0, major = 0;
        _cleanup_free_ char *path = find_soname_file(own, "libcusparseLt", &lib_major);
        _cleanup_free_ char *real = path ? realpath(path, NULL) : NULL;

        if (real)
                major = path_cuda_major(real, "libcusparseLt");
        if (!major && path)
                major = path_cuda_major(path, "libcusparseLt");
        if (!major && real)
                major = wheel_cuda_major(real);
        return major;
}

const struct component component_cusparselt = {
        .name = "cusparselt",
        .title = "NVIDIA cuSPARSELt",
        .label = "cuSPARSELt",
        .index = COMPONENT_INDEX(cusparselt),
        .version_parts = 3,
        .cuda_parts = 1,
        .naming = "{major}.{minor}.{patch}",
        .library = "libcusparseLt",
        .stems = (const char *const[]){ "libcusparseLt", NULL },
        .wheel = "nvidia-cusparselt",
        .archive = "libcusparse_lt",
        .name_hint = cusparselt_name_hint,
        .detect = detect_cusparselt,
        .to_json = cusparselt_to_json,
        .vars = (const struct component_var[]){
                /* FindCUSPARSELT.cmake (STACK.md §1.5): the root as
                 * <Pkg>_ROOT and as the deprecated CUSPARSELT_ROOT_DIR
                 * older trees read; CUSPARSELT_LIBRARY is searched as a
                 * directory (PATHS), so it gets the library directory. */
                { "CUSPARSELT_ROOT", COMPONENT_VALUE_PREFIX, .build = true },
                { "CUSPARSELT_ROOT_DIR", COMPONENT_VALUE_PREFIX, .build = true },
                { "CUSPARSELT_INCLUDE_DIR", COMPONENT_VALUE_INCLUDE_DIR, .build = true },
                { "CUSPARSELT_LIBRARY", COMPONENT_VALUE_LIB_DIR, .build = true },
                { "USE_CUSPARSELT", COMPONENT_VALUE_ONE, .build = true },
                { NULL },
        },
        .help = "For building PyTorch from source against this cuSPARSELt (USE_CUSPARSELT=1,\n"
                "CUSPARSELT_ROOT, CUSPARSELT_INCLUDE_DIR, CUSPARSELT_LIBRARY) and running\n"
                "it (libcusparseLt.so.0 on LD_LIBRARY_PATH).\n",
        .version_headers = (const char *const[]){ "cusparseLt.h", NULL },
        .version_macros = cusparselt_macros,
        .code_version = component_code_mmp,
        .build = {
                .what = "cuSPARSELt",
                .header = "cusparseLt.h",
                .libs = { "-lcusparseLt", NULL },
                .program = "#include <cusparseLt.h>\n"
                           "\n"
                           "int main()\n"
                           "{\n"
                           "        int major = -1;\n"
                           "\n"
                           "        return cusparseLtGetProperty(MAJOR_VERSION, &major) == CUSPARSE_STATUS_SUCCESS &&\n"
                           "                               major >= 0\n"
                           "                       ? 0\n"
                           "                       : 1;\n"
                           "}\n",
                .cplusplus = true,
        },
        .probe = {
                .key = "cusparselt",
                .request = "cusparselt=libcusparseLt.so.0:cusparseLtGetProperty:property",
        },
        .module_cuda_major = cusparselt_module_cuda_major,
        .doctor_cuda_major_why = "it carries its own CUDA runtime, built for the other major: torch's sparse semi-structured kernels fail (or need a newer driver than torch)",
        .torch_build = {
                .option = "USE_CUSPARSELT",
                .root_variable = "CUSPARSELT_ROOT",
                .library_stem = "libcusparseLt",
                .order = 2,
                .enable = { "USE_CUSPARSELT" },
                .find_root = "CUSPARSELT_ROOT",
                .append_root = "CUSPARSELT_ROOT",
                .append_root_dir = "CUSPARSELT_ROOT_DIR",
                .header_from = "the nvidia-cusparselt-cu12 wheel (the cu13 one has none), NVIDIA's "
                               "libcusparselt-dev package or the libcusparse_lt archive",
                .header = { .names = (const char *const[]){ "cusparseLt.h", NULL }, .suffixes = (const char *const[]){ "cuda/include", "cuda", "include", NULL },
                            .hints = "CUSPARSELT_INCLUDE_DIR" },
                .library = { .names = (const char *const[]){ "libcusparseLt.so", NULL }, .suffixes = (const char *const[]){ "lib", "lib64", "cuda/lib", "cuda/lib64", "lib/x64", NULL },
                             .paths = "CUSPARSELT_LIBRARY" },
        },
};
