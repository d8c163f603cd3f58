/* export.c: `cudamod export`: a generated tree as its neighbours want it.
 * Spack builds on installs it did not make through packages.yaml's
 * externals (a spec, a prefix, the modules to load); EasyBuild through
 * external modules and the metadata file --external-modules-metadata
 * reads (a section per module with the software's name, version and
 * prefix). Both are made from the tree's index alone, which generate
 * wrote and index_names_read checks: what the modules are for is what
 * the modules say, and the same index gives the same bytes. */
#include <errno.h>
#include <stdlib.h>

#include "component-table.h"
#include "component.h"
#include "export.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "write-index.h"
#include "write-name.h"
#include "banned.h"

enum export_format export_format_from_string(const char *s)
{
        if (streq(s, "spack"))
                return EXPORT_SPACK;
        if (streq(s, "easybuild"))
                return EXPORT_EASYBUILD;
        return _EXPORT_FORMAT_INVALID;
}

/* Spack's builtin package of each component (spack/spack-packages,
 * repos/spack_repo/builtin/packages/<name>/package.py; before 2025
 * spack/spack var/spack/repos/builtin/packages) and the variant its
 * external spec needs: nccl, nvshmem and magma are CudaPackages whose
 * `cuda` variant defaults to off (nccl and nvshmem conflict with ~cuda),
 * so an external without +cuda would be taken for a build without CUDA. */
static const struct spack_package {
        const char *component;
        const char *package;
        const char *variants;
} spack_packages[] = {
        { "cuda", "cuda", "" },
        { "cudnn", "cudnn", "" },
        { "nccl", "nccl", " +cuda" },
        { "cusparselt", "cusparselt", "" },
        { "cudss", "cudss", "" },
        { "nvshmem", "nvshmem", " +cuda" },
        { "magma", "magma", " +cuda" },
        { "cutensor", "cutensor", "" },
};

static const struct spack_package *spack_package_of(const struct component *c)
{
        for (size_t i = 0; i < ELEMENTSOF(spack_packages); i++)
                if (streq(spack_packages[i].component, c->name))
                        return &spack_packages[i];
        return NULL;
}

struct entry {
        const struct component *c;
        char *version;           /* the full version: "12.9.1", "9.7.1.26" */
        struct version v;
        bool v_ok;
        long cuda_major;         /* -1: none known */
        const char *module;      /* "cudnn/9.7.1" (the index_name's) */
        const char *prefix;      /* the install's real path */
        const char *toolkit;     /* the toolkit's real path, or NULL */
        const char *cuda_arch;   /* "80,90", or NULL */
        bool runtime;
        const struct entry *cuda; /* the cuda module to load first, or NULL */
};

static void entries_release(struct entry *e, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(e[i].version);
        free(e);
}

/* What a version may hold to be written bare into a spec or an INI
 * value: the characters of versions (1.2.3, 2.21.5-1, 12.4+cuda). */
static bool version_word(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!ascii_isdigit(*s) && !ascii_isalpha(*s) && !strchr("._+-", *s))
                        return false;
        return true;
}

/* A cuda_arch list as the index holds it ("80,90"): letters and digits
 * separated by ',', nothing else to reach a spec. */
static bool arch_list_word(const char *s)
{
        bool item = false;

        for (; *s; s++) {
                if (*s == ',') {
                        if (!item)
                                return false;
                        item = false;
                } else if (ascii_isdigit(*s) || ascii_isalpha(*s))
                        item = true;
                else
                        return false;
        }
        return item;
}

/* An index entry's identity ("cudnn 9.7.1.26 cuda12 x86_64", then
 * " for CUDA 12.9.1" for one of several modules; plan.c
 * install_identity): component, full version, CUDA major. */
static int parse_identity(const char *identity, struct entry *e)
{
        _cleanup_free_ char *copy = xstrdup(identity);
        char *words[3], *save = NULL, *w = strtok_r(copy, " ", &save);
        char *end;

        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                if (!w)
                        return -EBADMSG;
                words[i] = w;
                w = strtok_r(NULL, " ", &save);
        }
        e->c = component_from_string(words[0]);
        if (!e->c || !version_word(words[1]) || !startswith(words[2], "cuda"))
                return -EBADMSG;
        errno = 0;
        e->cuda_major = strtol(words[2] + 4, &end, 10);
        if (errno || end == words[2] + 4 || *end)
                return -EBADMSG;
        e->version = xstrdup(words[1]);
        e->v_ok = version_parse(words[1], &e->v) >= 0;
        return 0;
}

static int entry_cmp(const void *a, const void *b)
{
        const struct entry *x = a, *y = b;
        int r;

        if (x->c->index != y->c->index)
                return x->c->index < y->c->index ? -1 : 1;
        if (x->v_ok && y->v_ok && (r = version_compare(&x->v, &y->v)) != 0)
                return r;
        if ((r = strcmp(x->version, y->version)) != 0)
                return r;
        return strcmp(x->module, y->module);
}

/* The cuda module a library's module is loaded after: in a hierarchy
 * its level is opened by one (CUDA/12 by any cuda 12.x), flat and Tcl
 * trees require one of its major (plan.c fill_module). The toolkit it is
 * for when the index names one, else the newest of its major; NULL when
 * the tree has none. e is sorted, so the last match is the newest. */
static const struct entry *cuda_for(const struct entry *e, size_t n, const struct entry *lib)
{
        const struct entry *best = NULL;

        if (lib->c->toolkit || lib->cuda_major < 0)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (!e[i].c->toolkit)
                        continue;
                if (lib->toolkit ? streq(e[i].prefix, lib->toolkit) : e[i].cuda_major == lib->cuda_major)
                        best = &e[i];
        }
        return best;
}

static int read_entries(const char *outdir, struct index_names *names, struct entry **ret, size_t *ret_n,
                        struct diag *d)
{
        struct entry *e;
        size_t n = 0;
        int r;

        r = index_names_read(outdir, names, d);
        if (r < 0)
                return r;
        if (!names->sha[0])
                return diag_errorf(d, -ENOENT, "'%s' has no %s: not a directory cudamod generate wrote "
                                   "(give the output directory of 'cudamod generate -o DIR')", outdir, INDEX_NAME);
        if (names->ignored)
                return diag_errorf(d, -EBADMSG, "'%s/%s' is not trusted: %s; run 'cudamod generate' again",
                                   outdir, INDEX_NAME, names->ignored);
        e = xcalloc(names->n + 1, sizeof(*e));
        for (size_t i = 0; i < names->n; i++) {
                const struct index_name *in = &names->items[i];

                if (!in->install)
                        continue;
                if (!in->identity || parse_identity(in->identity, &e[n]) < 0) {
                        entries_release(e, n + 1);
                        return diag_errorf(d, -EBADMSG, "'%s/%s': the module %s has no identity an export can "
                                           "read (written by an older cudamod?); run 'cudamod generate' again",
                                           outdir, INDEX_NAME, in->module);
                }
                e[n].module = in->module;
                e[n].prefix = in->install;
                e[n].toolkit = in->toolkit;
                e[n].cuda_arch = in->cuda_arch;
                e[n].runtime = in->kind && streq(in->kind, "runtime");
                n++;
        }
        qsort(e, n, sizeof(*e), entry_cmp);
        for (size_t i = 0; i < n; i++)
                e[i].cuda = cuda_for(e, n, &e[i]);
        *ret = e;
        *ret_n = n;
        return 0;
}

/* A YAML double-quoted scalar. The index's values hold no control
 * character (index_names_read); '"' and '\' are escaped all the same. */
static void yaml_quoted(struct strbuf *out, const char *s)
{
        strbuf_addch(out, '"');
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        strbuf_addch(out, '\\');
                strbuf_addch(out, *s);
        }
        strbuf_addch(out, '"');
}

static void left_out_runtime(struct strv *left_out, const struct entry *e)
{
        strv_push(left_out, xasprintf("%s: %s %s at %s is a runtime-only install (its libraries without "
                                      "headers): no build can compile against it", e->module, e->c->label,
                                      e->version, e->prefix));
}

/* Spack's packages.yaml (lib/spack/spack/schema/packages.py: a package's
 * `buildable` and `externals`, each external a `spec` with a `prefix`
 * and/or `modules`). buildable: false, so that Spack uses these and never
 * builds its own CUDA stack beside them. */
static void export_spack(const struct entry *e, size_t n, struct strbuf *out, struct strv *left_out)
{
        const struct component *open = NULL;

        strbuf_addstr(out, "# Spack externals of a CUDA stack cudamod generated (cudamod export spack):\n"
                           "# put them in a configuration scope, e.g. spack config add -f FILE\n"
                           "packages:\n");
        for (size_t i = 0; i < n; i++) {
                const struct spack_package *p = spack_package_of(e[i].c);

                if (e[i].runtime) {
                        left_out_runtime(left_out, &e[i]);
                        continue;
                }
                if (!p) {
                        strv_push(left_out, xasprintf("%s: Spack has no package of %s", e[i].module, e[i].c->label));
                        continue;
                }
                if (open != e[i].c) {
                        open = e[i].c;
                        strbuf_addf(out, "  %s:\n    buildable: false\n    externals:\n", p->package);
                }
                strbuf_addf(out, "    - spec: \"%s@%s%s", p->package, e[i].version, p->variants);
                /* The GPU architectures the install's metadata says it was
                 * built for: Spack's CudaPackage variant, so only on those. */
                if (e[i].cuda_arch && *p->variants && arch_list_word(e[i].cuda_arch))
                        strbuf_addf(out, " cuda_arch=%s", e[i].cuda_arch);
                strbuf_addstr(out, "\"\n      prefix: ");
                yaml_quoted(out, e[i].prefix);
                strbuf_addstr(out, "\n      modules:\n");
                if (e[i].cuda) {
                        strbuf_addstr(out, "      - ");
                        yaml_quoted(out, e[i].cuda->module);
                        strbuf_addch(out, '\n');
                }
                strbuf_addstr(out, "      - ");
                yaml_quoted(out, e[i].module);
                strbuf_addch(out, '\n');
        }
        if (!open)
                /* No package: an empty mapping, which the schema accepts. */
                strbuf_addstr(out, "  {}\n");
}

/* Whether s reads back as itself as an unquoted configobj value
 * (EasyBuild reads the file with ConfigObj): no ',' (a list), '#' (a
 * comment), quote at the start, '%' (interpolation), no blank at either
 * end; and the same with Python's configparser. */
static bool ini_value_ok(const char *s)
{
        size_t n = strlen(s);

        return n > 0 && !strpbrk(s, ",#\"'%") && s[0] != ' ' && s[n - 1] != ' ';
}

/* EasyBuild's external modules metadata (docs.easybuild.io, "Using
 * external modules": a section per module name, `name`, `version` and
 * `prefix` of the software it provides; framework:
 * easybuild/tools/config.py and easyconfig/easyconfig.py
 * handle_external_module_metadata). */
static void export_easybuild(const struct entry *e, size_t n, struct strbuf *out, struct strv *left_out)
{
        strbuf_addstr(out, "# EasyBuild external modules metadata of a CUDA stack cudamod generated\n"
                           "# (cudamod export easybuild): eb --external-modules-metadata=FILE\n");
        for (size_t i = 0; i < n; i++) {
                if (e[i].runtime) {
                        left_out_runtime(left_out, &e[i]);
                        continue;
                }
                if (!ini_value_ok(e[i].prefix)) {
                        strv_push(left_out, xasprintf("%s: its prefix '%s' holds what configobj would not read "
                                                      "back as it is (',', '#', a quote, '%%' or a blank at an end)",
                                                      e[i].module, e[i].prefix));
                        continue;
                }
                strbuf_addf(out, "\n[%s]\nname = %s\nversion = %s\nprefix = %s\n", e[i].module,
                            component_easybuild_name(e[i].c), e[i].version, e[i].prefix);
        }
}

int export_tree(const char *outdir, enum export_format f, struct strbuf *out, struct strv *left_out,
                struct diag *d)
{
        struct index_names names = { 0 };
        struct entry *e = NULL;
        size_t n = 0;
        int r;

        r = read_entries(outdir, &names, &e, &n, d);
        if (r >= 0) {
                if (f == EXPORT_SPACK)
                        export_spack(e, n, out, left_out);
                else
                        export_easybuild(e, n, out, left_out);
                entries_release(e, n);
        }
        index_names_release(&names);
        return r < 0 ? r : 0;
}
