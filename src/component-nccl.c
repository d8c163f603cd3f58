/* component-nccl.c: NCCL. Its installs (LAYOUTS.md §3): tarballs, copies inside a
 * CUDA prefix, HPC SDK comm_libs/X.Y/nccl, pip wheels (nvidia/nccl), conda,
 * Spack and EasyBuild builds, and distribution packages. */
#include <errno.h>
#include <fcntl.h>

#include "component-nccl.h"
#include "detect.h"
#include "diag.h"
#include "doctor-finding.h"
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

/* …/comm_libs/<X.Y>/nccl: the CUDA version in the path, else count 0. */
static struct version hpc_sdk_cuda_of(const char *realpath)
{
        _cleanup_free_ char *xy = path_dirname(realpath);
        _cleanup_free_ char *comm = path_dirname(xy);
        struct version v = { 0 };

        if (streq(path_basename(realpath), "nccl") && streq(path_basename(comm), "comm_libs"))
                (void)version_parse(path_basename(xy), &v);
        return v;
}

/* "NCCL version 2.28.9+cuda13.0" inside libnccl (it links cudart statically,
 * so this string is the best record of the CUDA it was built with). */
static int nccl_elf_versions(int fd, const char *rel, struct version *ret_nccl,
                             struct version *ret_cuda)
{
        struct strv found = { 0 };
        struct diag d = DIAG_INIT;
        int r = -ENOENT;

        if (elf_find_strings(fd, rel, "NCCL version ", &found, &d) >= 0)
                for (size_t i = 0; i < found.len && r < 0; i++)
                        if (nccl_version_string_parse(found.items[i], ret_nccl, ret_cuda) >= 0)
                                r = 0;
        strv_release(&found);
        diag_release(&d);
        return r;
}

/* A distribution build may link cudart dynamically: DT_NEEDED tells the major. */
static unsigned long cudart_needed_major(int fd, const char *rel)
{
        struct elf_info info = { 0 };
        struct diag d = DIAG_INIT;
        unsigned long major = 0;

        if (elf_read_info(fd, rel, &info, &d) >= 0)
                for (size_t i = 0; i < info.needed.len && !major; i++) {
                        struct version v;
                        if (soname_version_parse(info.needed.items[i], "libcudart", &v) >= 0)
                                major = v.n[0];
                }
        elf_info_release(&info);
        diag_release(&d);
        return major;
}

static const char *const nccl_headers[] = { "nccl.h", NULL };

static void detect_nccl(const struct walk_dir *dir, struct install_list *l,
                        struct walk_verdict *verdict)
{
        const char *hint_source = "the directory name";
        _cleanup_free_ char *lib_rel = NULL;
        struct library_find f;
        struct dist_infos di = { 0 };
        struct name_hint hint = { 0 };
        struct version header = { 0 }, elf_nccl = { 0 }, elf_cuda = { 0 }, path_cuda;
        struct version_vote votes[4];
        struct install *in;
        unsigned long needed_major;

        if (library_find(dir, "libnccl", nccl_headers, &f) < 0)
                return;
        path_cuda = hpc_sdk_cuda_of(dir->realpath);
        if (path_cuda.count && !f.usr)
                f.layout = LAYOUT_HPC_SDK;
        in = library_install_new(&component_nccl, dir, &f, nccl_headers);
        /* ncclras (2.25+) and friends; a CUDA prefix's bin is CUDA's. */
        if (!f.usr && f.layout != LAYOUT_MERGED && detect_is_file(dir->fd, "bin/ncclras"))
                in->bin_dir = path_join(dir->path, "bin");
        lib_rel = path_join(f.ld.rel, f.ld.soname_file);
        (void)nccl_elf_versions(dir->fd, lib_rel, &elf_nccl, &elf_cuda);
        if (f.include_rel) {
                _cleanup_free_ char *h = path_join(f.include_rel, "nccl.h");
                struct strbuf sb = STRBUF_INIT;

                if (read_head_at(f.include_fd, f.usr ? f.usr : dir->path, h, DETECT_MAX_HEADER_HEAD, in,
                                 &sb) >= 0 &&
                    nccl_header_parse(sb.buf, sb.len, &header) == -EBADMSG)
                        install_add_problem(in, "version-mismatch",
                                            "'%s/nccl.h': NCCL_VERSION_CODE disagrees with NCCL_MAJOR, NCCL_MINOR and NCCL_PATCH",
                                            in->include_dir);
                strbuf_release(&sb);
        }
        if (f.ld.soname.n[0] != 2)
                install_add_problem(in, "version-mismatch", "'%s' is not an NCCL 2 soname",
                                    f.ld.soname_file);

        if (f.site)
                dist_infos_read_path(f.site, &di);
        else if (walk_dir_find(dir, "dist-info"))
                dist_infos_read(dir->fd, "dist-info", &di);
        if (dist_infos_name_hint(&di, "nvidia-nccl", &component_nccl, &hint) >= 0)
                hint_source = "the wheel name";
        if (!hint.version.count && !hint.cuda.count)
                (void)name_hint_of(&component_nccl, path_basename(dir->realpath),
                                   dir->parent_realpath ? path_basename(dir->parent_realpath)
                                                        : NULL,
                                   &hint);

        votes[0] = (struct version_vote){ header, "nccl.h" };
        votes[1] = (struct version_vote){ elf_nccl, "libnccl" };
        votes[2] = (struct version_vote){ .source = "the libnccl file name" };
        if (f.ld.full.count >= 3)
                votes[2].value = f.ld.full;
        votes[3] = (struct version_vote){ hint.version, hint_source };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 3);
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the NCCL version",
                                    in->prefix);

        /* The CUDA it was built for: the string in the library, then names. */
        needed_major = cudart_needed_major(dir->fd, lib_rel);
        if (elf_cuda.count)
                in->cuda_version = elf_cuda;
        else if (hint.cuda.count)
                in->cuda_version = hint.cuda;
        else if (path_cuda.count)
                in->cuda_version = path_cuda;
        else if (needed_major)
                in->cuda_version = (struct version){ .n = { needed_major }, .count = 1 };
        if (in->cuda_version.count) {
                const struct version *others[] = { &hint.cuda, &path_cuda };
                for (size_t i = 0; i < ELEMENTSOF(others); i++)
                        if (others[i]->count && others[i]->n[0] != in->cuda_version.n[0])
                                install_add_problem(in, "cuda-major-mismatch",
                                                    "built for CUDA %lu but %s says CUDA %lu",
                                                    in->cuda_version.n[0],
                                                    i == 0 ? hint_source : "the HPC SDK path",
                                                    others[i]->n[0]);
                if (needed_major && needed_major != in->cuda_version.n[0])
                        install_add_problem(in, "cuda-major-mismatch",
                                            "built for CUDA %lu but it needs libcudart.so.%lu",
                                            in->cuda_version.n[0], needed_major);
        }
        if (in->cuda_version.count > 2)
                in->cuda_version = version_truncate(&in->cuda_version, 2);

        install_list_add(l, in);
        library_verdict(verdict, f.usr, f.layout);
        dist_infos_release(&di);
        library_find_release(&f);
}

static void nccl_to_json(const struct install *in, json_t *o)
{
        json_set(o, "cuda_version", json_version(&in->cuda_version, 2));
}

/* NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH as ncclGetVersion encodes them:
 * NCCL_VERSION(X,Y,Z) is x1000 up to 2.8, x10000 from 2.9. */
static int nccl_header_code(const char *buf, size_t len, long *ret)
{
        struct version v;
        int r = nccl_header_parse(buf, len, &v);

        if (r < 0)
                return r;
        if (v.n[0] > 99 || v.n[1] > 99 || v.n[2] > 99)
                return -EBADMSG;
        *ret = (long)(v.n[0] * (v.n[0] <= 2 && v.n[1] <= 8 ? 1000 : 10000) + v.n[1] * 100 + v.n[2]);
        return 0;
}

static unsigned long nccl_elf_cuda_major(const char *path, const struct elf_info *info)
{
        return lib_nccl_cuda_major(path, info, NULL);
}

static unsigned long nccl_module_cuda_major(const struct strv *own)
{
        return soname_file_cuda_major(own, "libnccl", nccl_elf_cuda_major);
}

/* doctor: the libnccl.so.2 torch loads is built for torch's CUDA major and
 * not older than torch's build. */
static void nccl_doctor(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        const char *path = doctor_resolved_path(doc, "libnccl.so.2", NULL);
        struct elf_info info = { 0 };
        struct version nccl = { .count = 0 };
        unsigned long cuda;

        if (!path || elf_read_info(AT_FDCWD, path, &info, NULL) < 0)
                return;
        cuda = lib_nccl_cuda_major(path, &info, &nccl);
        if (!nccl.count)
                nccl = lib_file_version(path, "libnccl");
        if (cuda && r->built.cuda_major && cuda != r->built.cuda_major) {
                _cleanup_free_ char *ns = lib_version_string(&nccl);

                doctor_add_finding(r, DOCTOR_CUDA_MAJOR, "R5",
                                   xasprintf("the NCCL (%s) that resolves ('%s') is built for CUDA %lu, but torch "
                                             "for CUDA %lu", ns, path, cuda, r->built.cuda_major),
                                   "NCCL carries its own CUDA runtime: one of another major than torch's "
                                   "fails at the first collective (or needs a newer driver than torch)%s",
                                   doctor_major_fix(r, &component_nccl, "an"), "");
        }
        if (r->built.linked[component_nccl.index] && nccl.count) {
                struct version b;

                if (version_parse(r->built.linked[component_nccl.index], &b) >= 0 && version_compare(&nccl, &b) < 0) {
                        _cleanup_free_ char *ns = lib_version_string(&nccl);

                        doctor_add_finding(r, DOCTOR_NCCL_BUILD, "R8",
                                           xasprintf("torch was built against NCCL %s, but the older NCCL %s "
                                                     "resolves ('%s')", r->built.linked[component_nccl.index], ns, path),
                                           "symbols torch uses may be missing: `import torch` fails with "
                                           "\"undefined symbol: ncclCommRegister\" or similar%s",
                                           xasprintf("load NCCL %s or newer%s%s", r->built.linked[component_nccl.index],
                                                     r->module_load ? ": " : "", r->module_load ? r->module_load : ""),
                                           "");
                }
        }
        elf_info_release(&info);
}

const struct component component_nccl = {
        .name = "nccl",
        .title = "NVIDIA NCCL",
        .label = "NCCL",
        .index = COMPONENT_INDEX(nccl),
        .version_parts = 3,
        .cuda_parts = 2,
        .naming = "{major}.{minor}.{patch}",
        .library = "libnccl",
        .stems = (const char *const[]){ "libnccl", NULL },
        .wheel = "nvidia-nccl",
        .hpc_sdk_comm_libs = true,
        .detect = detect_nccl,
        .to_json = nccl_to_json,
        .vars = (const struct component_var[]){
                { "NCCL_ROOT", COMPONENT_VALUE_PREFIX, .build = true },
                { "NCCL_HOME", COMPONENT_VALUE_PREFIX },
                { "NCCL_INCLUDE_DIR", COMPONENT_VALUE_INCLUDE_DIR, .build = true },
                { "NCCL_LIB_DIR", COMPONENT_VALUE_LIB_DIR, .build = true },
                /* Without it PyTorch builds its bundled NCCL and ignores
                 * this one (PYTORCH.md §5.3). */
                { "USE_SYSTEM_NCCL", COMPONENT_VALUE_ONE, .build = true },
                { NULL },
        },
        .pkgconfig = true,
        .help = "For building PyTorch from source against this NCCL (USE_SYSTEM_NCCL=1,\n"
                "NCCL_ROOT, NCCL_INCLUDE_DIR, NCCL_LIB_DIR) and running it (libnccl.so.2\n"
                "on LD_LIBRARY_PATH).\n",
        .version_headers = (const char *const[]){ "nccl.h", NULL },
        .header_code = nccl_header_code,
        .code_version = component_code_library,
        .build = {
                .what = "NCCL",
                .header = "nccl.h",
                .libs = { "-lnccl", NULL },
                .program = "#include <nccl.h>\n"
                           "\n"
                           "int main(void)\n"
                           "{\n"
                           "        int v = 0;\n"
                           "\n"
                           "        return ncclGetVersion(&v) == 0 && v > 0 ? 0 : 1;\n"
                           "}\n",
        },
        .probe = { .key = "nccl", .off = "--no-nccl" },
        .module_cuda_major = nccl_module_cuda_major,
        .doctor = nccl_doctor,
        .torch_build = {
                .option = "USE_SYSTEM_NCCL",
                .root_variable = "NCCL_ROOT",
                .library_stem = "libnccl",
                .order = 4,
                /* Not USE_DISTRIBUTED: PyTorch 2.6's USE_NCCL depends on
                 * USE_CUDA alone (cmake_dependent_option, for torch.cuda.nccl),
                 * and its configure searches NCCL with distributed off
                 * (tests/pytorch saw it). */
                .enable = { "USE_NCCL" },
                .system = "USE_SYSTEM_NCCL",
                .find_root = "NCCL_ROOT",
                .append_root_dir = "NCCL_ROOT_DIR",
                .version_variable = "NCCL_VERSION",
                .mismatch_fatal = true,
                .header = { .names = (const char *const[]){ "nccl.h", NULL }, .hints = "NCCL_INCLUDE_DIR" },
                .library = { .names = (const char *const[]){ "nccl", "nccl_static", NULL }, .hints = "NCCL_LIB_DIR" },
        },
};
