/* component-cutensor.c: cuTENSOR, NVIDIA's tensor contraction library. Its
 * installs: NVIDIA's redist archives, up to 2.2 one for every CUDA major it
 * is built for (libcutensor-linux-<arch>-<ver>-archive/{include,lib/11,
 * lib/12}: each lib/<N> its own install), from 2.3 one for each
 * (…-<ver>_cuda12-archive); pip wheels (cutensor-cu12, cutensor-cu13, both
 * in site-packages/cutensor/{include,lib}), conda environments and copies
 * merged into a prefix. PyTorch does not use it: its torch_build part is
 * empty. */
#include <errno.h>
#include <fcntl.h>

#include "component-cutensor.h"
#include "detect.h"
#include "install.h"
#include "libfile.h"
#include "name-hint.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "walk.h"
#include "banned.h"

static const char *const cutensor_headers[] = { "cutensor.h", NULL };

/* What cutensor.h spells its version out in; cutensorGetVersion() returns
 * MAJOR*10000+MINOR*100+PATCH. */
static const char *const cutensor_macros[4] = { "CUTENSOR_MAJOR", "CUTENSOR_MINOR", "CUTENSOR_PATCH", NULL };

/* The site-packages of a cutensor-cuNN wheel's package directory
 * (site-packages/cutensor: not under nvidia/ as NVIDIA's other wheels),
 * newly allocated, or NULL. */
static char *wheel_site_of(const char *realpath)
{
        _cleanup_free_ char *site = NULL;

        if (!streq(path_basename(realpath), "cutensor"))
                return NULL;
        site = path_dirname(realpath);
        if (streq(path_basename(site), "site-packages") || streq(path_basename(site), "dist-packages"))
                return TAKE_PTR(site);
        return NULL;
}

/* The name hint of the cutensor-cuNN wheel in site, from its dist-info
 * directory's name (cutensor_cu12-2.3.1.dist-info): the dist-infos the
 * scan reads are NVIDIA's nvidia-* only. -ENOENT when there is none. Not
 * "cutensor": cuQuantum's cutensornet-cu12 shares the site-packages. */
static int wheel_name_hint(const char *site, struct name_hint *ret)
{
        struct strv names = { 0 };
        int r = -ENOENT;

        if (dir_list(AT_FDCWD, site, &names) < 0)
                return -ENOENT;
        for (size_t i = 0; i < names.len && r < 0; i++) {
                const char *n = names.items[i];

                if ((startswith(n, "cutensor_cu") || startswith(n, "cutensor-cu")) && endswith(n, ".dist-info"))
                        r = name_hint_of(&component_cutensor, n, NULL, ret);
        }
        strv_release(&names);
        return r;
}

/* cutensor.h as read for the first of an archive's lib/<N>: the others
 * share it (a file is read once in a scan). */
struct header_head {
        bool tried;
        int r;
        struct strbuf sb;
};

/* One install: the library in f->ld (lib, or lib/<N> of an archive), cuda
 * the CUDA major that directory names (an archive's lib/<N>, a Debian
 * tree's; 0: none); head, when not NULL, the header read once for all of
 * an archive's. */
static void add_install(const struct walk_dir *dir, struct library_find *f, unsigned long cuda,
                        struct header_head *head, struct install_list *l)
{
        const char *hint_source = "the directory name";
        struct name_hint hint = { 0 };
        struct version header = { 0 }, conda = { 0 };
        struct version_vote votes[3];
        struct install *in = library_install_new(&component_cutensor, dir, f, cutensor_headers);

        /* An archive's lib/12 and lib/13 are two installs under one
         * prefix: each is known by its library directory (as Debian's
         * per-major trees are), and the archive is a tree of both, so
         * that a symlink to it is an alias of each. */
        if (cuda && f->layout == LAYOUT_TARBALL) {
                free(in->realpath);
                in->realpath = path_join(dir->realpath, f->ld.rel);
                strv_add(&in->trees, dir->realpath);
        }

        if (f->include_rel) {
                _cleanup_free_ char *h = path_join(f->include_rel, "cutensor.h");
                struct strbuf own = STRBUF_INIT;
                struct strbuf *sb = head ? &head->sb : &own;
                int r = head && head->tried ? head->r
                                            : read_head_at(f->include_fd, f->usr ? f->usr : dir->path, h,
                                                           DETECT_MAX_HEADER_HEAD, in, sb);

                if (head)
                        head->tried = true, head->r = r;
                if (r >= 0 && header_define_triple(sb->buf, sb->len, cutensor_macros, &header) == -EINVAL)
                        install_add_problem(in, "version-mismatch",
                                            "'%s/cutensor.h': a CUTENSOR_* version define is not a number",
                                            in->include_dir);
                strbuf_release(&own);
        }
        if (f->ld.soname.n[0] != 2)
                install_add_problem(in, "version-mismatch", "'%s' is not a cuTENSOR 2 soname (libcutensor.so.2)",
                                    f->ld.soname_file);

        if (f->site && wheel_name_hint(f->site, &hint) >= 0)
                hint_source = "the wheel name";
        else if (f->usr || name_hint_of(&component_cutensor, path_basename(dir->realpath),
                                        dir->parent_realpath ? path_basename(dir->parent_realpath) : NULL,
                                        &hint) < 0)
                hint = (struct name_hint){ 0 };

        votes[0] = (struct version_vote){ header, "cutensor.h" };
        votes[1] = (struct version_vote){ f->ld.full.count >= 3 ? f->ld.full : f->ld.soname,
                                          f->ld.full.count >= 3 ? "the libcutensor file name"
                                                                : "the libcutensor soname" };
        votes[2] = (struct version_vote){ hint.version, hint_source };
        version_votes_settle(in, votes, ELEMENTSOF(votes), 3);
        if (!in->version.count)
                install_add_problem(in, "no-version", "no file in '%s' tells the cuTENSOR version", in->prefix);
        /* The build number (2.3.1.0) is only in names. */
        if (hint.version.count == 4 && in->version.count) {
                struct version xyz = version_truncate(&hint.version, 3);
                if (version_compare(&xyz, &in->version) == 0)
                        in->build = xasprintf("%lu", hint.version.n[3]);
        }

        /* The CUDA it targets: the archive's lib/<N>, else the wheel's or
         * the directory's name, else the conda environment's pin. A name
         * (EasyBuild's cuTENSOR/2.0.1.2-CUDA-12.1.1 of the whole archive)
         * that says another major than lib/<N> is about another of its
         * lib/<N>: no problem. */
        if (!cuda && hint.cuda.count)
                cuda = hint.cuda.n[0];
        if (!cuda && f->layout == LAYOUT_CONDA && conda_cuda_version(dir->fd, &conda) >= 0)
                cuda = conda.n[0];
        if (cuda && hint.cuda.count && hint.cuda.n[0] == cuda)
                in->cuda_version = hint.cuda;
        else if (cuda)
                in->cuda_version = (struct version){ .n = { cuda }, .count = 1 };
        install_list_add(l, in);
}

/* NVIDIA's archives up to 2.2: include/ and one lib/<N> for each CUDA
 * major N, each its own install. -ENOENT when dir is not one. */
static int detect_archive(const struct walk_dir *dir, struct install_list *l)
{
        struct header_head head = { .sb = STRBUF_INIT };
        struct strv names = { 0 };
        int found = -ENOENT;

        if (!walk_dir_find(dir, "include") || !walk_dir_find(dir, "lib") || dir_list(dir->fd, "lib", &names) < 0)
                return -ENOENT;
        for (size_t i = 0; i < names.len; i++) {
                struct library_find f = { .usr_fd = -1, .include_fd = dir->fd, .layout = LAYOUT_TARBALL };
                _cleanup_free_ char *rel = NULL;
                struct version v;

                /* lib/12, not the lib/11.0 of cuTENSOR 1's archives. */
                if (version_parse(names.items[i], &v) < 0 || v.count != 1)
                        continue;
                rel = path_join("lib", names.items[i]);
                if (libdir_in(dir->fd, rel, "libcutensor", &f.ld) < 0) {
                        library_find_release(&f);
                        continue;
                }
                if (detect_is_file(dir->fd, "include/cutensor.h"))
                        f.include_rel = xstrdup("include");
                add_install(dir, &f, v.n[0], &head, l);
                library_find_release(&f);
                found = 0;
        }
        strv_release(&names);
        strbuf_release(&head.sb);
        return found;
}

static void detect_cutensor(const struct walk_dir *dir, struct install_list *l,
                            struct walk_verdict *verdict)
{
        struct library_find f;

        if (library_find(dir, "libcutensor", cutensor_headers, &f) < 0) {
                if (detect_archive(dir, l) >= 0)
                        library_verdict(verdict, NULL, LAYOUT_TARBALL);
                return;
        }
        if (!f.usr && !f.site && (f.site = wheel_site_of(dir->realpath)))
                f.layout = LAYOUT_WHEEL;
        add_install(dir, &f, f.tree_major, NULL, l);
        library_verdict(verdict, f.usr, f.layout);
        library_find_release(&f);
}

static void cutensor_to_json(const struct install *in, json_t *o)
{
        json_set(o, "build", json_string_lossy(in->build));
}

/* libcutensor.so.2 names the libcublasLt (so the CUDA) it needs; else the
 * archive's lib/<N> it is in tells. */
static unsigned long cutensor_module_cuda_major(const struct strv *own)
{
        unsigned long major = soname_file_cuda_major(own, "libcutensor", lib_cuda_major_named_by);

        for (size_t i = 0; i < own->len && !major; i++)
                major = path_cuda_major(own->items[i], "lib");
        return major;
}

const struct component component_cutensor = {
        .name = "cutensor",
        .title = "NVIDIA cuTENSOR",
        .label = "cuTENSOR",
        .index = COMPONENT_INDEX(cutensor),
        .version_parts = 3,
        .cuda_parts = 1,
        .naming = "{major}.{minor}.{patch}",
        .library = "libcutensor",
        /* libcutensor and the multi-GPU libcutensorMg. */
        .stems = (const char *const[]){ "libcutensor", "libcutensorMg", NULL },
        /* cutensor-cu12, cutensor-cu13: no nvidia- prefix. */
        .wheel = "cutensor",
        .archive = "libcutensor",
        .detect = detect_cutensor,
        .to_json = cutensor_to_json,
        .vars = (const struct component_var[]){
                { "CUTENSOR_ROOT", COMPONENT_VALUE_PREFIX },
                { NULL },
        },
        .help = "For building against this cuTENSOR (CUTENSOR_ROOT) and running it\n"
                "(libcutensor.so.2 on LD_LIBRARY_PATH).\n",
        .version_headers = cutensor_headers,
        .version_macros = cutensor_macros,
        .code_version = component_code_mmp,
        .build = {
                .what = "cuTENSOR",
                .header = "cutensor.h",
                .libs = { "-lcutensor", NULL },
                .program = "#include <cutensor.h>\n"
                           "\n"
                           "int main(void)\n"
                           "{\n"
                           "        return cutensorGetVersion() >= 20000 ? 0 : 1;\n"
                           "}\n",
        },
        .probe = { .key = "cutensor", .request = "cutensor=libcutensor.so.2:cutensorGetVersion:code" },
        .module_cuda_major = cutensor_module_cuda_major,
        .doctor_cuda_major_why = "it loads the libcublasLt of its own CUDA major beside torch's: a program that uses both fails to load or crashes",
};
