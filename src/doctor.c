/* doctor.c: a PyTorch build against an environment and a modulepath
 * (doctor.h).
 *
 * The order: the libraries and where their needs resolve; what the build
 * was for (version.py, the sonames, the cuDNN/NCCL beside its RUNPATH); the
 * environment; the modules that provide the needs, and a consistent set of
 * them; then the findings, whose advice names that set. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "doctor.h"
#include "component-cudnn.h"
#include "component-nccl.h"
#include "component-table.h"
#include "detect.h"
#include "elf-file.h"
#include "evaluate-modulepath.h"
#include "evaluate.h"
#include "libfile.h"
#include "metadata.h"
#include "process.h"
#include "strbuf.h"
#include "util-file.h"
#include "util-path.h"
#include "validate.h"
#include "version.h"
#include "banned.h"

#define VERSION_PY_MAX ((size_t)1 << 20)
#define SHOW 4

/* --- version.py ------------------------------------------------------------ */

/* The value of `name[: annotation] = value` on line (NULL when the line
 * assigns something else). *ret: the string, or NULL for None. -EBADMSG for
 * another value. */
static int assignment(const char *line, size_t len, const char *name, char **ret)
{
        size_t n = strlen(name), i;
        char quote;
        const char *end;

        if (len < n || memcmp(line, name, n) != 0)
                return 0;
        i = n;
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
                i++;
        if (i < len && line[i] == ':') {
                while (i < len && line[i] != '=')
                        i++;
        }
        if (i >= len || line[i] != '=' || (i + 1 < len && line[i + 1] == '='))
                return 0;
        for (i++; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
                ;
        while (len > i && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
                len--;
        if (len - i == 4 && memcmp(line + i, "None", 4) == 0) {
                *ret = NULL;
                return 1;
        }
        if (i >= len || (line[i] != '\'' && line[i] != '"'))
                return -EBADMSG;
        quote = line[i];
        end = memchr(line + i + 1, quote, len - i - 1);
        if (!end || (size_t)(end - line) != len - 1 || memchr(line + i + 1, '\0', (size_t)(end - line) - i - 1))
                return -EBADMSG;
        *ret = xstrndup(line + i + 1, (size_t)(end - line) - i - 1);
        return 1;
}

int torch_version_py_parse(const char *buf, size_t len, const char *file, struct doctor_built *ret,
                           struct diag *d)
{
        static const char *const names[] = { "__version__", "git_version", "cuda" };
        char *found[ELEMENTSOF(names)] = { NULL };
        bool seen[ELEMENTSOF(names)] = { false };
        char **fields[] = { &ret->torch_version, &ret->git_version, &ret->cuda };
        unsigned line_no = 0;

        for (size_t pos = 0; pos < len;) {
                const char *nl = memchr(buf + pos, '\n', len - pos);
                size_t end = nl ? (size_t)(nl - buf) : len;

                line_no++;
                for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                        char *value = NULL;
                        int r = assignment(buf + pos, end - pos, names[k], &value);

                        if (r < 0) {
                                for (size_t j = 0; j < ELEMENTSOF(names); j++)
                                        free(found[j]);
                                return diag_set(d, -EBADMSG, file, line_no, 0,
                                                "%s is neither a quoted string nor None", names[k]);
                        }
                        if (r > 0) {
                                free(found[k]);
                                found[k] = value;
                                seen[k] = true;
                        }
                }
                pos = end + 1;
        }
        /* Only now, on success: the last assignment of each wins. */
        for (size_t k = 0; k < ELEMENTSOF(names); k++)
                if (seen[k]) {
                        free(*fields[k]);
                        *fields[k] = found[k];
                }
        return 0;
}

void doctor_built_release(struct doctor_built *b)
{
        free(b->torch_version);
        free(b->git_version);
        free(b->cuda);
        strv_release(&b->sonames);
        for (size_t i = 0; i < N_COMPONENTS; i++)
                free(b->linked[i]);
        *b = (struct doctor_built){ 0 };
}

/* --- the libraries ----------------------------------------------------------- */

static bool is_torch_package(const char *dir)
{
        _cleanup_free_ char *lib = path_join(dir, "lib"), *version = path_join(dir, "version.py");
        _cleanup_free_ char *init = path_join(dir, "__init__.py");

        return is_dir_at(AT_FDCWD, lib) && (is_file_at(AT_FDCWD, version) || is_file_at(AT_FDCWD, init));
}

static int entry_compare(const void *a, const void *b)
{
        return strcmp(((const struct libset_entry *)a)->path, ((const struct libset_entry *)b)->path);
}

/* Every shared library in dir (names starting with prefix, if any):
 * returns how many were added, or a negative errno when dir cannot be
 * listed. */
static int add_dir(struct doctor *doc, const char *dir, const char *prefix)
{
        struct strv names = { 0 };
        size_t first = doc->libs.n;
        int added = 0, r = dir_list(AT_FDCWD, dir, &names);

        if (r < 0)
                return r;
        strv_sort_uniq(&names);
        /* Backwards, so that a library is named by its fullest name (its real
         * file libfoo.so.12.4.127, else its soname file), not its dev link. */
        for (size_t i = names.len; i-- > 0;) {
                struct diag d = DIAG_INIT;

                if (prefix && !startswith(names.items[i], prefix))
                        continue;
                r = libset_add(&doc->libs, dir, names.items[i], &d);
                if (r < 0)
                        doctor_add_note(doc->r, "%s; not diagnosed", d.message);
                added += r > 0;
                diag_release(&d);
        }
        strv_release(&names);
        /* qsort of nothing: items may still be NULL (an empty directory). */
        if (doc->libs.n > first)
                qsort(doc->libs.items + first, doc->libs.n - first, sizeof(*doc->libs.items),
                      entry_compare);
        return added;
}

static int add_path(struct doctor *doc, const char *given, struct diag *d)
{
        _cleanup_free_ char *path = path_absolute(given);
        struct stat st;
        int r;

        if (stat(path, &st) < 0)
                return diag_errorf(d, -errno, "'%s': %s", given, strerror(errno));
        if (S_ISDIR(st.st_mode)) {
                _cleanup_free_ char *parent = path_dirname(path);
                const char *torch = NULL;
                int added;

                if (is_torch_package(path))
                        torch = path;
                else if (streq(path_basename(path), "lib") && is_torch_package(parent))
                        torch = parent;
                if (torch) {
                        _cleanup_free_ char *lib = path_join(torch, "lib");

                        if (!doc->r->torch_dir)
                                doc->r->torch_dir = xstrdup(torch);
                        added = add_dir(doc, lib, NULL);
                        if (added >= 0 && (r = add_dir(doc, torch, "_C")) > 0)
                                added += r;
                } else
                        added = add_dir(doc, path, NULL);
                if (added == -E2BIG)
                        return diag_errorf(d, added,
                                           "'%s': more than %d entries in a directory, more than "
                                           "cudamod reads from one; name the library files instead",
                                           given, WALK_MAX_ENTRIES);
                if (added < 0)
                        return diag_errorf(d, added, "'%s': %s", given, strerror(-added));
                if (!added)
                        return diag_errorf(d, -ENOENT, "'%s': no shared library in this directory", given);
                return 0;
        }
        r = libset_add(&doc->libs, NULL, path, d);
        if (r < 0)
                return r;
        if (r == 0 && !S_ISREG(st.st_mode))
                return diag_errorf(d, -ENOEXEC, "'%s' is not a directory nor a shared library", given);
        if (r == 0) {
                /* Already in (the same file twice), or not a shared library. */
                for (size_t i = 0; i < doc->libs.n; i++)
                        if (doc->libs.items[i].dev == st.st_dev && doc->libs.items[i].ino == st.st_ino)
                                return 0;
                return diag_errorf(d, -ENOEXEC, "'%s' is not a shared library (ELF ET_DYN)", given);
        }
        return 0;
}

/* torch's own libraries, by soname: what doctor follows wherever it
 * resolves. A name prefix, because a distribution moves them out of
 * torch/lib (Debian: torch/lib/libtorch.so links into
 * /usr/lib/x86_64-linux-gnu, and libtorch_cuda.so.2.6 is only there); a
 * library in torch/lib itself is read anyway. */
static bool torch_own_soname(const char *soname)
{
        static const char *const prefixes[] = { "libtorch", "libc10", "libshm.", "libcaffe2_", NULL };

        for (const char *const *p = prefixes; *p; p++)
                if (startswith(soname, *p))
                        return true;
        return false;
}

/* r->libs with room for n, the new entries zeroed. */
static void libs_reserve(struct doctor_report *r, size_t *cap, size_t n)
{
        if (n <= *cap)
                return;
        r->libs = xreallocarray(r->libs, n, sizeof(*r->libs));
        memset(r->libs + *cap, 0, (n - *cap) * sizeof(*r->libs));
        *cap = n;
}

/* Each library's needs, where they resolve. For a torch package, one of
 * torch's own libraries that resolves outside the set joins it, and is
 * read in turn (library files or directories given are read alone). */
static void resolve_libraries(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        size_t cap = 0;

        for (size_t i = 0; i < doc->libs.n; i++) {
                struct doctor_library *l;
                char *by;

                libs_reserve(r, &cap, doc->libs.n + 1);
                l = &r->libs[i];
                by = l->needed_by;
                *l = (struct doctor_library){
                        .path = xstrdup(doc->libs.items[i].path),
                        .needed_by = by,
                        .runpath = doc->libs.items[i].info.runpath ? xstrdup(doc->libs.items[i].info.runpath) : NULL,
                        .rpath = doc->libs.items[i].info.rpath ? xstrdup(doc->libs.items[i].info.rpath) : NULL,
                        .needs = xcalloc(doc->libs.items[i].info.needed.len + 1, sizeof(*l->needs)),
                };
                r->n_libs = i + 1;
                for (size_t k = 0; k < doc->libs.items[i].info.needed.len; k++) {
                        /* libset_add below may move the entries. */
                        const struct libset_entry *e = &doc->libs.items[i];
                        const char *soname = e->info.needed.items[k];
                        struct doctor_need *n = &l->needs[l->n_needs++];
                        struct resolved res = { 0 };
                        struct diag d = DIAG_INIT;

                        *n = (struct doctor_need){ .soname = xstrdup(soname),
                                                   .driver = resolve_is_driver_library(soname) };
                        if (resolve_needed(&doc->renv, e->path, &e->info, soname, &res, &d) < 0)
                                doctor_add_note(r, "%s: %s", e->path, d.message);
                        else if (res.source != RESOLVE_NOT_FOUND) {
                                n->path = TAKE_PTR(res.path);
                                n->source = res.source;
                        }
                        resolved_release(&res);
                        diag_release(&d);
                        if (r->torch_dir && n->path && torch_own_soname(n->soname)) {
                                size_t before = doc->libs.n;

                                if (libset_add(&doc->libs, NULL, n->path, &d) < 0)
                                        doctor_add_note(r, "%s; not diagnosed", d.message);
                                diag_release(&d);
                                if (doc->libs.n > before) {
                                        libs_reserve(r, &cap, doc->libs.n + 1);
                                        l = &r->libs[i];
                                        n = &l->needs[l->n_needs - 1];
                                        r->libs[before].needed_by = xstrdup(doc->libs.items[i].name);
                                }
                        }
                }
                if ((doc->libs.items[i].info.rpath && strstr(doc->libs.items[i].info.rpath, "nvidia/")) ||
                    (doc->libs.items[i].info.runpath && strstr(doc->libs.items[i].info.runpath, "nvidia/")))
                        doc->wheel = true;
        }
}

/* The RUNPATH/RPATH directories of the libraries, as ld.so expands them,
 * each once. */
static void runpath_dirs(const struct doctor *doc, struct strv *ret)
{
        for (size_t i = 0; i < doc->libs.n; i++)
                resolve_object_dirs(doc->libs.items[i].path, &doc->libs.items[i].info, ret);
}

/* The version of stem.so.N's real file in one of dirs, as a string. */
static char *version_beside(const struct strv *dirs, const char *soname, const char *stem)
{
        for (size_t i = 0; i < dirs->len; i++) {
                _cleanup_free_ char *p = path_join(dirs->items[i], soname);
                struct version v;

                if (access(p, F_OK) < 0)
                        continue;
                v = lib_file_version(p, stem);
                if (v.count)
                        return version_to_string(&v, 3);
        }
        return NULL;
}

static void read_built(struct doctor *doc)
{
        struct doctor_built *b = &doc->r->built;
        _cleanup_(strv_release) struct strv dirs = { 0 };

        if (doc->r->torch_dir) {
                _cleanup_free_ char *file = path_join(doc->r->torch_dir, "version.py");
                struct strbuf sb = STRBUF_INIT;
                struct diag d = DIAG_INIT;
                int r = file_read_regular_at(AT_FDCWD, file, NULL, VERSION_PY_MAX, false, &sb, &d);

                if (r < 0 && r != -ENOENT)
                        doctor_add_note(doc->r, "%s", d.message);
                else if (r == -ENOENT)
                        doctor_add_note(doc->r, "%s does not exist: the CUDA torch was built for is taken "
                                        "from the libcudart.so.N it needs", file);
                else if (torch_version_py_parse(sb.buf, sb.len, file, b, &d) < 0) {
                        _cleanup_free_ char *m = diag_format(&d);
                        doctor_add_note(doc->r, "%s", m);
                }
                strbuf_release(&sb);
                diag_release(&d);
                /* What torch's setup.py writes when it has no git checkout
                 * (a distribution's build): no version to show. */
                if (b->git_version && streq(b->git_version, "Unknown")) {
                        free(b->git_version);
                        b->git_version = NULL;
                }
        }
        if (b->cuda) {
                struct version v;

                if (version_parse(b->cuda, &v) >= 0)
                        b->cuda_major = v.n[0];
        }
        if (!b->cuda_major)
                b->cuda_major = doctor_needed_major(doc, component_toolkit()->library, NULL);
        for (size_t i = 0; i < doc->libs.n; i++) {
                const struct strv *needed = &doc->libs.items[i].info.needed;

                for (size_t k = 0; k < needed->len; k++)
                        if (component_of_soname(needed->items[k]) && !strv_contains(&b->sonames, needed->items[k]))
                                strv_add(&b->sonames, needed->items[k]);
        }
        strv_sort_uniq(&b->sonames);
        runpath_dirs(doc, &dirs);
        FOREACH_COMPONENT(c) {
                _cleanup_free_ char *soname = NULL;

                if (!c->toolkit && doctor_needed_major(doc, c->library, &soname))
                        b->linked[c->index] = version_beside(&dirs, soname, c->library);
        }
}

/* --- the environment ------------------------------------------------------- */

/* MAJOR.MINOR of the toolkit at prefix: version.json, version.txt,
 * include/cuda.h, then the names of its libraries. */
char *doctor_toolkit_version(const char *prefix)
{
        _cleanup_free_ char *json = path_join(prefix, "version.json");
        _cleanup_free_ char *txt = path_join(prefix, "version.txt");
        _cleanup_free_ char *header = path_join(prefix, "include/cuda.h");
        _cleanup_free_ char *lib64 = path_join(prefix, "lib64");
        struct strbuf sb = STRBUF_INIT;
        struct version v = { .count = 0 };
        struct version_json vj = { 0 };

        if (file_read_regular_at(AT_FDCWD, json, NULL, (size_t)1 << 20, false, &sb, NULL) >= 0 &&
            version_json_parse(sb.buf, sb.len, json, &vj, NULL) >= 0)
                v = vj.cuda;
        version_json_release(&vj);
        strbuf_reset(&sb);
        if (!v.count && file_read_regular_at(AT_FDCWD, txt, NULL, (size_t)1 << 16, false, &sb, NULL) >= 0 &&
            version_txt_parse(sb.buf, sb.len, txt, &v, NULL) < 0)
                v.count = 0;
        strbuf_reset(&sb);
        if (!v.count && file_read_regular_at(AT_FDCWD, header, NULL, (size_t)4 << 20, false, &sb, NULL) >= 0 &&
            cuda_header_parse(sb.buf, sb.len, &v) < 0)
                v.count = 0;
        strbuf_release(&sb);
        if (!v.count)
                v = libdir_toolkit_version(lib64);
        return v.count ? version_to_string(&v, 2) : NULL;
}

static void read_environment(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        const char *home = env_get(doc->env, "CUDA_HOME");

        modulepath_split(env_get(doc->env, "LD_LIBRARY_PATH"), &r->ld_library_path);
        modulepath_split(env_get(doc->env, "LOADEDMODULES"), &r->loaded);
        r->toolkit_source = "CUDA_HOME";
        if (!home || !*home) {
                home = env_get(doc->env, "CUDA_PATH");
                r->toolkit_source = "CUDA_PATH";
        }
        if (home && *home)
                r->toolkit = xstrdup(home);
        else {
                r->toolkit_source = "nvcc on PATH";
                int err = 0;
                _cleanup_free_ char *nvcc = process_find_program("nvcc", doc->env, &err);
                _cleanup_free_ char *bin = nvcc ? path_dirname(nvcc) : NULL;

                if (bin)
                        r->toolkit = path_dirname(bin);
        }
        if (r->toolkit)
                r->toolkit_version = doctor_toolkit_version(r->toolkit);
        else
                r->toolkit_source = NULL;
}

/* --- modules ---------------------------------------------------------------- */

struct candidate {
        const struct module_unit *unit;
        struct doctor_module *m;     /* in the report */
        const char *version;         /* the module's version */
        struct strv files;           /* the real file of each of m->provides */
};

/* The sonames the modules should provide: what the libraries need of the
 * CUDA stack, and what those need in turn that resolves nowhere. */
static void wanted_sonames(const struct doctor *doc, const struct strv *unresolved, struct strv *ret)
{
        for (size_t i = 0; i < doc->r->built.sonames.len; i++)
                strv_add(ret, doc->r->built.sonames.items[i]);
        for (size_t i = 0; i < unresolved->len; i++)
                if (component_of_soname(unresolved->items[i]))
                        strv_add(ret, unresolved->items[i]);
        strv_sort_uniq(ret);
}

/* Lmod's preference for one kind: the version torch was built with
 * (prefix match), else the lowest newer one, else the highest. */
static const struct candidate *prefer(const struct candidate *c, size_t n, const char *built)
{
        const struct candidate *exact = NULL, *newer = NULL, *highest = NULL;

        for (size_t i = 0; i < n; i++) {
                const char *v = c[i].version;
                size_t bl = built ? strlen(built) : 0;

                if (built && strncmp(v, built, bl) == 0 && (!v[bl] || v[bl] == '.' || v[bl] == '-') &&
                    (!exact || module_version_compare(v, exact->version) > 0))
                        exact = &c[i];
                if (built && module_version_compare(v, built) > 0 &&
                    (!newer || module_version_compare(v, newer->version) < 0))
                        newer = &c[i];
                if (!highest || module_version_compare(v, highest->version) > 0)
                        highest = &c[i];
        }
        return exact ? exact : newer ? newer : highest;
}

/* The unit is loadable with the chosen cuda module (or none) before it. */
static bool under(const struct module_unit *u, const char *cuda)
{
        for (size_t i = 0; i + 1 < u->chain.len; i++)
                if (!cuda || !streq(u->chain.items[i], cuda))
                        return false;
        return true;
}

static void choose(struct doctor *doc, struct candidate *c, size_t n, const struct strv *wanted)
{
        struct doctor_report *r = doc->r;
        unsigned long major = r->built.cuda_major;
        const char *cuda = NULL;

        /* The toolkit first: the others are chosen below it. */
        FOREACH_COMPONENT(kind) {
                const char *built = kind->toolkit ? r->built.cuda : r->built.linked[kind->index];
                _cleanup_free_ struct candidate *ok = xcalloc(n + 1, sizeof(*ok));
                const struct candidate *pick;
                bool needed = false;
                size_t n_ok = 0;

                for (size_t i = 0; i < wanted->len; i++)
                        needed |= component_of_soname(wanted->items[i]) == kind;
                if (!needed)
                        continue;
                for (size_t i = 0; i < n; i++)
                        if (streq(c[i].m->kind, kind->name) && c[i].m->provides.len &&
                            (!major || !c[i].m->cuda_major || c[i].m->cuda_major == major) &&
                            (kind->toolkit ? c[i].unit->chain.len == 1 : under(c[i].unit, cuda)))
                                ok[n_ok++] = c[i];
                pick = prefer(ok, n_ok, built);
                if (!pick)
                        continue;
                strv_add(&r->chosen, pick->unit->module);
                if (kind->toolkit)
                        cuda = pick->unit->module;
        }
}

/* A prefix holding several components (/usr/local/cuda-13.0 with cuDNN
 * and NCCL in lib64/) puts a library of another component in a module's
 * directory: the module of that component provides it, not this one. A
 * soname of another kind is dropped when a module of its kind provides the
 * same file; a module left providing nothing is dropped. Returns the
 * candidates left (r->modules compacted with them). */
static size_t drop_merged(struct doctor_report *r, struct candidate *c, size_t n)
{
        size_t kept = 0;

        for (size_t i = 0; i < n; i++) {
                struct strv provides = { 0 }, files = { 0 };

                for (size_t s = 0; s < c[i].m->provides.len; s++) {
                        const char *soname = c[i].m->provides.items[s], *file = c[i].files.items[s];
                        const struct component *kind = component_of_soname(soname);
                        bool other = false;

                        for (size_t k = 0; k < n && kind && !streq(kind->name, c[i].m->kind) && !other; k++)
                                if (k != i && streq(c[k].m->kind, kind->name))
                                        for (size_t t = 0; t < c[k].m->provides.len && !other; t++)
                                                other = streq(c[k].m->provides.items[t], soname) &&
                                                        streq(c[k].files.items[t], file);
                        if (!other) {
                                strv_add(&provides, soname);
                                strv_add(&files, file);
                        }
                }
                strv_release(&c[i].m->provides);
                c[i].m->provides = provides;
                strv_release(&c[i].files);
                c[i].files = files;
        }
        /* Then the modules left providing something. */
        for (size_t i = 0; i < n; i++) {
                if (!c[i].m->provides.len) {
                        free(c[i].m->module);
                        strv_release(&c[i].m->provides);
                        strv_release(&c[i].files);
                        continue;
                }
                r->modules[kept] = *c[i].m;
                c[kept] = c[i];
                c[kept].m = &r->modules[kept];
                kept++;
        }
        r->n_modules = kept;
        return kept;
}

/* For each component torch needs that no chosen module is of: the plain
 * advice (r->unavailable). */
static void unavailable(struct doctor *doc, const struct candidate *c, size_t n, const struct strv *wanted)
{
        struct doctor_report *r = doc->r;
        unsigned long major = r->built.cuda_major;

        FOREACH_COMPONENT(kind) {
                const char *soname = NULL;
                bool chosen = false;
                struct strv others = { 0 };
                unsigned long other_major = 0;
                _cleanup_free_ char *stem = NULL, *label = NULL, *cuda = NULL, *what = NULL;
                struct version v;

                /* The component's own library (libcudart) names it best. */
                for (size_t i = 0; i < wanted->len; i++)
                        if (component_of_soname(wanted->items[i]) == kind &&
                            (!soname || startswith(wanted->items[i], kind->library)))
                                soname = wanted->items[i];
                for (size_t i = 0; i < n && soname; i++) {
                        if (!streq(c[i].m->kind, kind->name))
                                continue;
                        if (strv_contains(&r->chosen, c[i].m->module))
                                chosen = true;
                        else if (c[i].m->cuda_major && c[i].m->cuda_major != major) {
                                strv_add(&others, c[i].m->module);
                                other_major = c[i].m->cuda_major;
                        }
                }
                if (!soname || chosen) {
                        strv_release(&others);
                        continue;
                }
                stem = soname_stem(soname);
                label = soname_version_parse(soname, stem, &v) >= 0 && v.count && v.n[0]
                                ? xasprintf("%s %lu", kind->label, v.n[0]) : xstrdup(kind->label);
                cuda = major ? xasprintf(" for CUDA %lu", major) : xstrdup("");
                /* "a CUDA 12 toolkit", "cuDNN 9 for CUDA 12". */
                what = kind->toolkit ? xasprintf("a %s toolkit", label) : xasprintf("%s%s", label, cuda);
                if (others.len) {
                        struct strbuf sb = STRBUF_INIT;

                        strbuf_add_list(&sb, &others, SHOW);
                        strv_push(&r->unavailable,
                                  xasprintf("no %s module%s (%s %s for CUDA %lu): install %s (%s) and generate "
                                            "its module, or use a torch built for CUDA %lu", kind->name, cuda, sb.buf,
                                            others.len == 1 ? "is" : "are", other_major, what, soname, other_major));
                        strbuf_release(&sb);
                } else
                        strv_push(&r->unavailable, xasprintf("no %s module%s: install %s (%s) and generate its module",
                                                             kind->name, cuda, what, soname));
                strv_release(&others);
        }
}

static void suggest(struct doctor *doc, const struct strv *unresolved)
{
        struct doctor_report *r = doc->r;
        _cleanup_(strv_release) struct strv start = { 0 }, wanted = { 0 };
        struct module_unit *units = NULL;
        struct candidate *cands;
        size_t n_units = 0, n_cands = 0;

        if (!doc->o->modulepath || !doc->o->modulepath->len)
                return;
        wanted_sonames(doc, unresolved, &wanted);
        evaluate_basic_env(&start);
        module_units_discover(&(struct evaluate_options){ .environ = start.items,
                                                          .modulepath = doc->o->modulepath,
                                                          .trust_modulefiles = doc->o->trust_modulefiles },
                              &units, &n_units);
        cands = xcalloc(n_units + 1, sizeof(*cands));
        r->modules = xcalloc(n_units + 1, sizeof(*r->modules));
        for (size_t i = 0; i < n_units; i++) {
                const struct module_unit *u = &units[i];
                const struct loaded_module *m;
                _cleanup_(strv_release) struct strv own = { 0 }, provides = { 0 }, files = { 0 };
                const struct component *kind;

                if (!u->evaluated) {
                        if (u->error)
                                strv_push(&r->notes, xasprintf("module %s left out: %s", u->module,
                                                               u->error));
                        continue;
                }
                m = &u->eval.modules[u->eval.n_modules - 1];
                evaluation_own_entries(&u->eval, "LD_LIBRARY_PATH", &own);
                kind = module_kind_detect(m->file.name, &own);
                if (!kind)
                        continue;
                for (size_t w = 0; w < wanted.len; w++)
                        for (size_t k = 0; k < own.len; k++) {
                                _cleanup_free_ char *p = path_join(own.items[k], wanted.items[w]);
                                char *real = strv_contains(&provides, wanted.items[w]) ? NULL : realpath(p, NULL);

                                if (real) {
                                        strv_add(&provides, wanted.items[w]);
                                        strv_push(&files, real);
                                }
                        }
                if (!provides.len)
                        continue;
                r->modules[r->n_modules] = (struct doctor_module){
                        .module = xstrdup(u->module),
                        .kind = kind->name,
                        .cuda_major = metadata_module_cuda_major(kind, &own),
                        .provides = provides,
                };
                provides = (struct strv){ 0 };
                cands[n_cands++] = (struct candidate){ .unit = u, .m = &r->modules[r->n_modules],
                                                       .version = m->file.version, .files = files };
                files = (struct strv){ 0 };
                r->n_modules++;
        }
        n_cands = drop_merged(r, cands, n_cands);
        /* A module of a hierarchy below a cuda module is for that CUDA. */
        for (size_t i = 0; i < n_cands; i++)
                for (size_t k = 0; k < n_cands && !cands[i].m->cuda_major; k++)
                        if (streq(cands[k].m->kind, component_toolkit()->name) && cands[i].unit->chain.len > 1 &&
                            streq(cands[i].unit->chain.items[0], cands[k].unit->module))
                                cands[i].m->cuda_major = cands[k].m->cuda_major;
        choose(doc, cands, n_cands, &wanted);
        if (r->chosen.len) {
                _cleanup_free_ char *line = strv_join(&r->chosen, " ");

                r->module_load = xasprintf("module load %s", line);
        }
        for (size_t w = 0; w < wanted.len; w++) {
                bool provided = false;

                for (size_t i = 0; i < n_cands && !provided; i++)
                        provided = strv_contains(&r->chosen, cands[i].unit->module) &&
                                   strv_contains(&cands[i].m->provides, wanted.items[w]);
                if (!provided)
                        strv_add(&r->unprovided, wanted.items[w]);
        }
        unavailable(doc, cands, n_cands, &wanted);
        for (size_t i = 0; i < n_cands; i++)
                strv_release(&cands[i].files);
        free(cands);
        for (size_t i = 0; i < n_units; i++)
                module_unit_release(&units[i]);
        free(units);
}

/* --- the findings ------------------------------------------------------------ */

/* What to do to get the CUDA stack right: the module line, else advice. */
static char *fix_load(const struct doctor *doc, const struct strv *sonames)
{
        const struct doctor_report *r = doc->r;
        struct strv advice = { 0 };
        bool loaded = r->chosen.len > 0;
        char *s;

        /* A line of modules all loaded already is no advice. */
        for (size_t i = 0; i < r->chosen.len; i++)
                loaded &= strv_contains(&r->loaded, r->chosen.items[i]);
        if (r->module_load && !loaded)
                strv_add(&advice, r->module_load);
        for (size_t i = 0; i < r->unavailable.len; i++)
                strv_add(&advice, r->unavailable.items[i]);
        if (advice.len) {
                s = strv_join(&advice, "; ");
                strv_release(&advice);
                return s;
        }
        for (size_t i = 0; i < sonames->len; i++)
                strv_push(&advice, soname_advice(sonames->items[i]));
        strv_sort_uniq(&advice);
        s = advice.len ? strv_join(&advice, "; ") : xstrdup("install what provides them");
        strv_release(&advice);
        if (!doc->o->modulepath || !doc->o->modulepath->len) {
                char *t = xasprintf("%s (give --modulepath to have cudamod name the modules)", s);
                free(s);
                s = t;
        }
        return s;
}

/* Second level: what the CUDA-stack libraries found need in turn. */
static void unresolved_below(struct doctor *doc, struct strv *missing, struct strv *by)
{
        struct strv seen = { 0 };

        for (size_t i = 0; i < doc->r->n_libs; i++)
                for (size_t k = 0; k < doc->r->libs[i].n_needs; k++) {
                        const struct doctor_need *n = &doc->r->libs[i].needs[k];
                        struct elf_info info = { 0 };
                        struct resolve_list list = { 0 };

                        if (!n->path || !component_of_soname(n->soname) || strv_contains(&seen, n->path))
                                continue;
                        strv_add(&seen, n->path);
                        if (resolve_object(&doc->renv, n->path, &info, &list, NULL) >= 0)
                                for (size_t j = 0; j < list.n; j++)
                                        if (list.items[j].source == RESOLVE_NOT_FOUND &&
                                            !resolve_is_driver_library(list.items[j].soname)) {
                                                strv_add(missing, list.items[j].soname);
                                                strv_add(by, n->soname);
                                        }
                        resolve_list_release(&list);
                        elf_info_release(&info);
                }
        strv_release(&seen);
}

/* Every need that resolves nowhere (driver libraries aside), with who
 * needs it: missing->items[i] is needed by by->items[i]. */
static void collect_unresolved(struct doctor *doc, struct strv *missing, struct strv *by)
{
        struct doctor_report *r = doc->r;

        for (size_t i = 0; i < r->n_libs; i++)
                for (size_t k = 0; k < r->libs[i].n_needs; k++) {
                        const struct doctor_need *n = &r->libs[i].needs[k];

                        if (n->path || n->driver)
                                continue;
                        strv_add(missing, n->soname);
                        strv_add(by, doc->libs.items[i].name);
                }
        unresolved_below(doc, missing, by);
}

/* The set's library that is the file at path, or -1. */
static ssize_t lib_index(const struct doctor *doc, const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return -1;
        for (size_t i = 0; i < doc->libs.n; i++)
                if (doc->libs.items[i].dev == st.st_dev && doc->libs.items[i].ino == st.st_ino)
                        return (ssize_t)i;
        return -1;
}

/* The need ld.so stops at when it loads library start: breadth first, each
 * library's needs in order (driver libraries aside: notes); NULL when all
 * resolve. *ret_by: the library that needs it. */
static const char *first_missing(const struct doctor *doc, size_t start, const char **ret_by)
{
        _cleanup_free_ size_t *queue = xcalloc(doc->libs.n + 1, sizeof(*queue));
        _cleanup_free_ bool *seen = xcalloc(doc->libs.n + 1, sizeof(*seen));
        size_t head = 0, tail = 0;

        queue[tail++] = start;
        seen[start] = true;
        while (head < tail) {
                const struct doctor_library *l = &doc->r->libs[queue[head++]];

                for (size_t k = 0; k < l->n_needs; k++) {
                        const struct doctor_need *n = &l->needs[k];
                        ssize_t j;

                        if (!n->path && !n->driver) {
                                *ret_by = doc->libs.items[queue[head - 1]].name;
                                return n->soname;
                        }
                        if (n->path && (j = lib_index(doc, n->path)) >= 0 && !seen[j]) {
                                seen[j] = true;
                                queue[tail++] = (size_t)j;
                        }
                }
        }
        return NULL;
}

/* The set's library named name (a file of dir), or -1. */
static ssize_t lib_in(const struct doctor *doc, const char *dir, const char *prefix, const char *suffix)
{
        for (size_t i = 0; i < doc->libs.n; i++) {
                const char *p = doc->libs.items[i].path, *base = path_basename(p);
                _cleanup_free_ char *d = path_dirname(p);

                if (streq(d, dir) && startswith(base, prefix) && endswith(base, suffix))
                        return (ssize_t)i;
        }
        return -1;
}

/* What the user sees of the first need that does not resolve, as Python
 * raises it: torch's __init__ first loads lib/libtorch_global_deps.so
 * with ctypes.CDLL (OSError), then imports torch._C, an extension module
 * (ImportError); a library neither reaches is loaded later (libtorch_cuda_
 * linalg at the first linalg call, libcaffe2_nvrtc for NVRTC). */
static char *failure_text(const struct doctor *doc, const char *shown)
{
        const struct doctor_report *r = doc->r;
        const char *soname = NULL, *by = NULL;

        if (r->torch_dir) {
                _cleanup_free_ char *lib = path_join(r->torch_dir, "lib");
                ssize_t g = lib_in(doc, lib, "libtorch_global_deps.so", "");
                ssize_t c = lib_in(doc, r->torch_dir, "_C", ".so");

                if (g >= 0 && (soname = first_missing(doc, (size_t)g, &by)))
                        return xasprintf("`import torch` fails at once: torch loads lib/libtorch_global_deps.so "
                                         "with ctypes, which raises \"OSError: %s: cannot open shared object "
                                         "file: No such file or directory\"%s", soname,
                                         component_of_soname(soname)
                                                 ? " (torch 2.x then looks for nvidia-* wheels on sys.path and, "
                                                   "finding none, ends with \"ValueError: ... not found in the "
                                                   "system path\")"
                                                 : "");
                if (c >= 0 && (soname = first_missing(doc, (size_t)c, &by)))
                        return xasprintf("`import torch` fails loading torch._C: \"ImportError: %s: cannot open "
                                         "shared object file: No such file or directory\" (%s needs it)",
                                         soname, by);
                for (size_t i = 0; i < doc->libs.n && !soname; i++)
                        soname = first_missing(doc, i, &by);
                if (soname)
                        return xasprintf("`import torch` works, but loading %s later fails (\"%s: cannot open "
                                         "shared object file: No such file or directory\")", by, soname);
        }
        for (size_t i = 0; i < doc->libs.n && !soname; i++)
                soname = first_missing(doc, i, &by);
        if (soname)
                return xasprintf("the loader refuses %s: \"%s: cannot open shared object file: No such file or "
                                 "directory\"", by, soname);
        /* Only what the CUDA libraries found need in turn. */
        return xasprintf("the loader refuses a library whose needs do not resolve: `import torch` fails "
                         "with \"%s: cannot open shared object file: No such file or directory\"", shown);
}

static void report_unresolved(struct doctor *doc, const struct strv *missing, const struct strv *by)
{
        struct doctor_report *r = doc->r;
        _cleanup_(strv_release) struct strv names = { 0 };
        _cleanup_free_ char *ldp = strv_join(&r->ld_library_path, ":");
        struct strbuf what = STRBUF_INIT;
        const char *shown = NULL;

        /* One item per soname: who needs it. */
        for (size_t i = 0; i < missing->len; i++) {
                struct strv who = { 0 };

                if (strv_contains(&names, missing->items[i]))
                        continue;
                strv_add(&names, missing->items[i]);
                for (size_t k = i; k < missing->len; k++)
                        if (streq(missing->items[k], missing->items[i]) && !strv_contains(&who, by->items[k]))
                                strv_add(&who, by->items[k]);
                if (!shown || startswith(missing->items[i], "libcudart.so"))
                        shown = missing->items[i];
                strbuf_addf(&what, "%s%s (needed by ", what.len ? "; " : "", missing->items[i]);
                strbuf_add_list(&what, &who, SHOW);
                strbuf_addch(&what, ')');
                strv_release(&who);
        }
        if (names.len) {
                _cleanup_free_ char *fails = failure_text(doc, shown);

                doctor_add_finding(r, DOCTOR_UNRESOLVED, "R1",
                                   xasprintf("%s %s nowhere: not in LD_LIBRARY_PATH (%s), the libraries' "
                                             "RUNPATH, the loader cache nor the system directories",
                                             what.buf, names.len == 1 ? "resolves" : "resolve", *ldp ? ldp : "unset"),
                                   "%s", fix_load(doc, &names), fails);
        }
        strbuf_release(&what);
}

static void find_stubs(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        struct strv where = { 0 }, fixes = { 0 };

        for (size_t i = 0; i < r->ld_library_path.len; i++)
                if (path_has_component(r->ld_library_path.items[i], "stubs")) {
                        strv_push(&where, xasprintf("'%s' is on LD_LIBRARY_PATH", r->ld_library_path.items[i]));
                        strv_push(&fixes, xasprintf("remove '%s' from LD_LIBRARY_PATH (unload the module "
                                                    "that puts it there; stubs belong on LIBRARY_PATH only)",
                                                    r->ld_library_path.items[i]));
                }
        for (size_t i = 0; i < doc->libs.n; i++) {
                const struct libset_entry *e = &doc->libs.items[i];
                const char *lists[] = { e->info.runpath, e->info.rpath };
                const char *what[] = { "RUNPATH", "RPATH" };

                for (size_t l = 0; l < ELEMENTSOF(lists); l++) {
                        struct strv entries = { 0 };

                        modulepath_split(lists[l], &entries);
                        for (size_t k = 0; k < entries.len; k++)
                                if (path_has_component(entries.items[k], "stubs")) {
                                        strv_push(&where, xasprintf("%s has '%s' in its %s", e->name,
                                                                    entries.items[k], what[l]));
                                        strv_push(&fixes, xasprintf("rebuild torch so that the stubs stay out of its "
                                                                    "%s (PyTorch filters them since PR #109493), or "
                                                                    "rewrite it: patchelf --set-rpath without '%s' %s",
                                                                    what[l], entries.items[k], e->path));
                                }
                        strv_release(&entries);
                }
        }
        for (size_t i = 0; i < r->n_libs; i++)
                for (size_t k = 0; k < r->libs[i].n_needs; k++) {
                        const struct doctor_need *n = &r->libs[i].needs[k];
                        _cleanup_free_ char *dir = n->path ? path_dirname(n->path) : NULL;

                        if (n->driver && dir && path_has_component(dir, "stubs") && !strv_contains(&where, n->path)) {
                                _cleanup_free_ char *w = xasprintf("%s resolves to the stub '%s'", n->soname, n->path);
                                if (!strv_contains(&where, w))
                                        strv_add(&where, w);
                        }
                }
        if (where.len) {
                struct strbuf sb = STRBUF_INIT;

                strv_sort_uniq(&fixes);
                strbuf_add_list(&sb, &where, where.len);
                doctor_add_finding(r, DOCTOR_STUBS, "R9", strbuf_detach(&sb),
                                   "the stub libcuda.so.1 would be loaded instead of the driver's: "
                                   "torch.cuda.is_available() is False, or CUDA fails with \"CUDA driver "
                                   "version is insufficient\"",
                                   fixes.len ? strv_join(&fixes, "; ") : xstrdup("remove the stubs directory from the loader path"));
        }
        strv_release(&where);
        strv_release(&fixes);
}

/* The CUDA toolkit libraries torch needs come from a toolkit of its major:
 * libcusparse.so.12 is also the soname of CUDA 13's cuSPARSE, so a CUDA 13
 * in the loader cache satisfies a CUDA 12 torch's need silently. */
static void find_toolkit_libs(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        struct strv dirs = { 0 }, wrong = { 0 };
        unsigned long other = 0;

        if (!r->built.cuda_major)
                return;
        for (size_t i = 0; i < r->n_libs; i++)
                for (size_t k = 0; k < r->libs[i].n_needs; k++) {
                        const struct doctor_need *n = &r->libs[i].needs[k];
                        const struct component *kind = n->path ? component_of_soname(n->soname) : NULL;
                        _cleanup_free_ char *dir = kind && kind->toolkit ? real_dirname(n->path) : NULL;
                        struct version v;

                        if (!dir || strv_contains(&dirs, dir))
                                continue;
                        strv_add(&dirs, dir);
                        v = libdir_toolkit_version(dir);
                        if (!v.count) {
                                /* Files named by soname only: the libcudart.so.N beside it. */
                                struct strv one = { 0 };

                                strv_add(&one, dir);
                                free(find_soname_file(&one, "libcudart", &v.n[0]));
                                v.count = v.n[0] ? 1 : 0;
                                strv_release(&one);
                        }
                        if (v.count && v.n[0] != r->built.cuda_major) {
                                _cleanup_free_ char *vs = version_to_string(&v, 2);

                                strv_push(&wrong, xasprintf("%s from '%s' (CUDA %s)", n->soname, dir, vs));
                                other = v.n[0];
                        }
                }
        if (wrong.len) {
                struct strbuf sb = STRBUF_INIT;

                strbuf_add_list(&sb, &wrong, wrong.len);
                doctor_add_finding(r, DOCTOR_CUDA_MAJOR, "R5",
                                   xasprintf("torch is built for CUDA %lu, but %s: a toolkit of CUDA %lu",
                                             r->built.cuda_major, sb.buf, other),
                                   "some CUDA libraries keep their soname across CUDA majors (cuSPARSE, cuFFT, "
                                   "cuRAND, cuSOLVER): the other major's copy loads without an error, then fails "
                                   "with undefined symbols or needs that CUDA's runtime and driver%s",
                                   xasprintf("put a CUDA %lu toolkit's library directory first: %s",
                                             r->built.cuda_major,
                                             r->module_load ? r->module_load : "load a cuda module of that major"),
                                   "");
                strbuf_release(&sb);
        }
        strv_release(&dirs);
        strv_release(&wrong);
}

/* A library of a component torch needs, built for another CUDA major than
 * torch (metadata_module_cuda_major read on the directory it
 * resolves in): for the components that say what that breaks. */
static void find_component_cuda_major(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        bool seen[N_COMPONENTS] = { false };

        if (!r->built.cuda_major)
                return;
        for (size_t i = 0; i < r->built.sonames.len; i++) {
                const char *soname = r->built.sonames.items[i];
                const struct component *c = component_of_soname(soname);
                const char *path = c && c->doctor_cuda_major_why && !seen[c->index]
                                           ? doctor_resolved_path(doc, soname, NULL) : NULL;
                _cleanup_free_ char *dir = path ? real_dirname(path) : NULL;
                unsigned long cuda;

                if (!dir)
                        continue;
                seen[c->index] = true;
                cuda = metadata_module_cuda_major(c, &(struct strv){ .items = (char *[]){ dir, NULL }, .len = 1 });
                if (!cuda || cuda == r->built.cuda_major)
                        continue;
                doctor_add_finding(r, DOCTOR_CUDA_MAJOR, "R5",
                                   xasprintf("the %s that resolves ('%s') is built for CUDA %lu, but torch for CUDA %lu",
                                             c->label, path, cuda, r->built.cuda_major),
                                   "%s", doctor_major_fix(r, c, "a"), c->doctor_cuda_major_why);
        }
}

static void find_nvjitlink(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        const char *cusparse = NULL;
        struct elf_info info = { 0 };
        struct resolved res = { 0 };
        _cleanup_free_ char *jit = NULL, *dir = NULL;

        for (size_t i = 0; i < r->built.sonames.len && !cusparse; i++)
                if (startswith(r->built.sonames.items[i], "libcusparse.so."))
                        cusparse = doctor_resolved_path(doc, r->built.sonames.items[i], NULL);
        if (!cusparse || elf_read_info(AT_FDCWD, cusparse, &info, NULL) < 0)
                return;
        for (size_t i = 0; i < info.needed.len && !jit; i++)
                if (startswith(info.needed.items[i], "libnvJitLink.so."))
                        jit = xstrdup(info.needed.items[i]);
        dir = real_dirname(cusparse);
        if (jit && dir && resolve_needed(&doc->renv, cusparse, &info, jit, &res, NULL) >= 0 &&
            res.source != RESOLVE_NOT_FOUND && !same_real_dir(res.path, cusparse)) {
                struct version want = libdir_toolkit_version(dir);
                struct version have = lib_file_version(res.path, "libnvJitLink");
                struct version have2 = version_truncate(&have, 2);

                if (want.count && have.count && version_compare(&have2, &want) < 0) {
                        _cleanup_free_ char *ws = lib_version_string(&want), *hs = lib_version_string(&have);

                        doctor_add_finding(r, DOCTOR_NVJITLINK, "R7",
                                           xasprintf("%s resolves to '%s' (%s, through %s), older than the CUDA "
                                                     "%s toolkit of the libcusparse in '%s'", jit, res.path, hs,
                                                     resolve_source_to_string(res.source), ws, dir),
                                           "cuSPARSE calls the libnvJitLink of its own toolkit: an older one fails "
                                           "with \"undefined symbol: __nvJitLinkComplete_%lu_%lu, version %s\"",
                                           xasprintf("put '%s' ahead of '%s' in LD_LIBRARY_PATH, or unload the "
                                                     "older cuda module%s%s", dir, res.searched_entry ? res.searched_entry : res.path,
                                                     r->module_load ? ": " : "", r->module_load ? r->module_load : ""),
                                           want.n[0], want.n[1], jit);
                }
        }
        resolved_release(&res);
        elf_info_release(&info);
}

/* "nvidia-cudnn-cu12" of a dist-info directory. */
static char *dist_name(const char *sp, const char *entry)
{
        _cleanup_free_ char *meta = xasprintf("%s/%s/METADATA", sp, entry);
        struct strbuf sb = STRBUF_INIT;
        char *name = NULL, *version = NULL;
        const char *dash;

        if (file_read_regular_at(AT_FDCWD, meta, NULL, (size_t)1 << 20, false, &sb, NULL) >= 0 &&
            metadata_parse(sb.buf, sb.len, &name, &version) >= 0 && name) {
                free(version);
                strbuf_release(&sb);
                return name;
        }
        free(name);
        free(version);
        strbuf_release(&sb);
        dash = strchr(entry, '-');
        name = xstrndup(entry, dash ? (size_t)(dash - entry) : strlen(entry) - strlen(".dist-info"));
        for (char *p = name; *p; p++)
                if (*p == '_')
                        *p = '-';
        return name;
}

static void find_nvidia_wheels(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        _cleanup_free_ char *sp = NULL, *nv = NULL;
        struct strv entries = { 0 }, trees = { 0 }, dists = { 0 };

        if (!r->torch_dir)
                return;
        sp = path_dirname(r->torch_dir);
        nv = path_join(sp, "nvidia");
        if (dir_list(AT_FDCWD, nv, &entries) < 0)
                return;
        strv_sort_uniq(&entries);
        for (size_t i = 0; i < entries.len; i++) {
                _cleanup_free_ char *lib = xasprintf("%s/%s/lib", nv, entries.items[i]);

                if (is_dir_at(AT_FDCWD, lib))
                        strv_push(&trees, xasprintf("nvidia/%s", entries.items[i]));
        }
        strv_release(&entries);
        if (trees.len && dir_list(AT_FDCWD, sp, &entries) >= 0) {
                strv_sort_uniq(&entries);
                for (size_t i = 0; i < entries.len; i++)
                        if (startswith(entries.items[i], "nvidia_") && endswith(entries.items[i], ".dist-info"))
                                strv_push(&dists, dist_name(sp, entries.items[i]));
        }
        if (trees.len && doc->wheel)
                doctor_add_note(r, "'%s' holds nvidia/* wheel libraries, which this torch (a pip wheel: its "
                                "RPATH points into nvidia/) is meant to use", sp);
        else if (trees.len) {
                struct strbuf sb = STRBUF_INIT;
                _cleanup_free_ char *pkgs = dists.len ? strv_join(&dists, " ") : NULL;

                strbuf_add_list(&sb, &trees, trees.len);
                doctor_add_finding(r, DOCTOR_NVIDIA_WHEELS, NULL,
                                   xasprintf("'%s' beside this source-built torch holds NVIDIA wheel libraries: %s",
                                             sp, sb.buf),
                                   "when libcudart is loaded, torch's _load_global_deps() preloads cuDNN, "
                                   "cuBLAS, NCCL, … from site-packages/nvidia/*/lib (PYTORCH.md §2.2), ahead of "
                                   "the modules' libraries torch was built against: a silent mix of versions%s",
                                   pkgs ? xasprintf("pip uninstall %s (or use a virtual environment without "
                                                    "them)", pkgs)
                                        : xasprintf("remove '%s' (or use a virtual environment without the "
                                                    "nvidia-* wheels)", nv),
                                   "");
                strbuf_release(&sb);
        }
        strv_release(&entries);
        strv_release(&trees);
        strv_release(&dists);
}

static void find_toolkit_major(struct doctor *doc)
{
        struct doctor_report *r = doc->r;
        struct version t, b;

        if (!r->toolkit_version || !r->built.cuda || version_parse(r->toolkit_version, &t) < 0 ||
            version_parse(r->built.cuda, &b) < 0)
                return;
        if (t.n[0] != b.n[0])
                doctor_add_finding(r, DOCTOR_TOOLKIT_MAJOR, "B9",
                                   xasprintf("the toolkit of this environment ('%s', from %s) is CUDA %s, but "
                                             "torch was built for CUDA %s", r->toolkit, r->toolkit_source,
                                             r->toolkit_version, r->built.cuda),
                                   "extensions fail (\"The detected CUDA version (%s) mismatches the version "
                                   "that was used to compile PyTorch (%s)\"), and the toolkit's libraries on "
                                   "the loader path are of the other major",
                                   xasprintf("load a cuda/%lu.x module instead%s%s", b.n[0],
                                             r->module_load ? ": " : "", r->module_load ? r->module_load : ""),
                                   r->toolkit_version, r->built.cuda);
        else if (b.count >= 2 && t.count >= 2 && t.n[1] != b.n[1])
                doctor_add_note(r, "the loaded toolkit is CUDA %s and torch was built for %s: the same major "
                                "works (minor version compatibility); extensions build with a warning",
                                r->toolkit_version, r->built.cuda);
}

static void driver_notes(struct doctor *doc)
{
        struct strv missing = { 0 };

        for (size_t i = 0; i < doc->r->n_libs; i++)
                for (size_t k = 0; k < doc->r->libs[i].n_needs; k++) {
                        const struct doctor_need *n = &doc->r->libs[i].needs[k];

                        if (n->driver && !n->path && !strv_contains(&missing, n->soname))
                                strv_add(&missing, n->soname);
                }
        if (missing.len) {
                _cleanup_free_ char *s = strv_join(&missing, ", ");

                doctor_add_note(doc->r, "%s: the driver's, not found here (normal without a GPU); on a GPU "
                                "node the NVIDIA driver provides it", s);
        }
        strv_release(&missing);
}

/* --- the findings, in the order they are reported --------------------------- */

static void find_unresolved(struct doctor *doc)
{
        report_unresolved(doc, &doc->unresolved, &doc->by);
}

/* The components' own findings (struct component's `doctor`: cuDNN's
 * sub-libraries and versions, NCCL's CUDA major and version), in table
 * order. */
static void find_components(struct doctor *doc)
{
        FOREACH_COMPONENT(c)
                if (c->doctor)
                        c->doctor(doc);
}

/* One finder: it adds its findings and notes to doc->r. A new finding is
 * a new row here, or a component's `doctor`; doctor_run walks the table
 * after the suggestions, which the findings' advice names. */
struct doctor_check {
        const char *name;
        void (*run)(struct doctor *doc);
};

static const struct doctor_check doctor_checks[] = {
        { .name = "unresolved", .run = find_unresolved },
        { .name = "stubs", .run = find_stubs },
        { .name = "toolkit-libs", .run = find_toolkit_libs },
        { .name = "components", .run = find_components },
        { .name = "cuda-major", .run = find_component_cuda_major },
        { .name = "nvjitlink", .run = find_nvjitlink },
        { .name = "nvidia-wheels", .run = find_nvidia_wheels },
        { .name = "toolkit-major", .run = find_toolkit_major },
        { .name = "driver", .run = driver_notes },
        {},
};

/* --- the run ----------------------------------------------------------------- */

int doctor_run(const struct doctor_options *o, char *const *paths, size_t n_paths,
               struct doctor_report *ret, struct diag *d)
{
        extern char **environ;
        struct doctor_report r = { 0 };
        struct doctor doc = { .o = o, .env = o->environ ? o->environ : environ, .r = &r };
        struct diag cd = DIAG_INIT;
        int err = 0;

        for (size_t i = 0; i < n_paths && err >= 0; i++)
                err = add_path(&doc, paths[i], d);
        if (err < 0) {
                libset_release(&doc.libs);
                doctor_report_release(&r);
                return err;
        }
        if (ldcache_load(o->ldcache, &doc.cache, &cd) < 0)
                doctor_add_note(&r, "%s; the loader cache was not searched", cd.message);
        diag_release(&cd);
        read_environment(&doc);
        resolve_env_init(&doc.renv, env_get(doc.env, "LD_LIBRARY_PATH"), doc.cache);
        resolve_libraries(&doc);
        read_built(&doc);

        collect_unresolved(&doc, &doc.unresolved, &doc.by);
        /* The suggestions first: the findings' advice names them. */
        suggest(&doc, &doc.unresolved);
        for (const struct doctor_check *c = doctor_checks; c->name; c++)
                c->run(&doc);

        strv_release(&doc.unresolved);
        strv_release(&doc.by);
        resolve_env_release(&doc.renv);
        ldcache_free(doc.cache);
        libset_release(&doc.libs);
        *ret = r;
        return 0;
}

void doctor_report_release(struct doctor_report *r)
{
        free(r->torch_dir);
        doctor_built_release(&r->built);
        for (size_t i = 0; i < r->n_libs; i++) {
                free(r->libs[i].path);
                free(r->libs[i].needed_by);
                free(r->libs[i].runpath);
                free(r->libs[i].rpath);
                for (size_t k = 0; k < r->libs[i].n_needs; k++) {
                        free(r->libs[i].needs[k].soname);
                        free(r->libs[i].needs[k].path);
                }
                free(r->libs[i].needs);
        }
        free(r->libs);
        strv_release(&r->ld_library_path);
        strv_release(&r->loaded);
        free(r->toolkit);
        free(r->toolkit_version);
        for (size_t i = 0; i < r->n_findings; i++) {
                free(r->findings[i].what);
                free(r->findings[i].why);
                free(r->findings[i].fix);
        }
        free(r->findings);
        strv_release(&r->notes);
        for (size_t i = 0; i < r->n_modules; i++) {
                free(r->modules[i].module);
                strv_release(&r->modules[i].provides);
        }
        free(r->modules);
        strv_release(&r->chosen);
        free(r->module_load);
        strv_release(&r->unprovided);
        strv_release(&r->unavailable);
        *r = (struct doctor_report){ 0 };
}
