/* cmd-doctor-build.c: `cudamod doctor --build`: prints what
 * doctor-build.c found (text or JSON). */
#include <errno.h>

#include "cmd-doctor-build.h"
#include "diag.h"
#include "output.h"
#include "doctor-build.h"
#include "install.h"
#include "strbuf.h"
#include "util-path.h"
#include "util-term.h"
#include "banned.h"

static json_t *string_or_null(const char *s)
{
        return s ? json_string_lossy(s) : json_null();
}

static json_t *hit_json(const struct cmake_find_hit *h)
{
        if (!h->path)
                return json_null();
        return json_pack("{s:o, s:o, s:b}", "path", json_string_lossy(h->path), "from", string_or_null(h->from),
                         "default", h->fallback);
}

/* What the configure's cache would hold for the row: the toolkit's root
 * (CUDA_TOOLKIT_ROOT_DIR), else the program or library it picks
 * (CMAKE_CUDA_COMPILER, CUDA_CUDART, CUDNN_LIBRARY_PATH, ...), the
 * header's directory (CUDNN_INCLUDE_PATH, ...) and the version; null when
 * it picks nothing. */
static json_t *pick_json(size_t row, const struct build_component *c)
{
        const char *path = row == BUILD_TOOLKIT ? c->prefix : c->library.path;
        _cleanup_free_ char *inc = row != BUILD_TOOLKIT && c->header.path ? path_dirname(c->header.path) : NULL;
        const char *version = c->version ? c->version : c->library_version;

        if (!path)
                return json_null();
        /* The host compiler's "gcc 14.2.0": the version alone. */
        if (row == BUILD_HOST && version && strchr(version, ' '))
                version = strchr(version, ' ') + 1;
        return json_pack("{s:o, s:o, s:o}", "path", json_string_lossy(path), "include_dir", string_or_null(inc),
                         "version", string_or_null(version));
}

static const char *status_of(const struct build_report *r)
{
        return r->n_fatal ? "fatal" : r->n_findings ? "problems" : "ok";
}

static json_t *build_json(const struct build_report *r, const struct strv *mp)
{
        json_t *comps = json_array(), *findings = json_array(), *doc;
        const struct build_cpp_extension *x = &r->cpp_extension;

        for (size_t i = 0; i < N_BUILD; i++) {
                const struct build_component *c = &r->c[i];

                json_array_append_new(
                        comps, json_pack("{s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
                                         c->name, "label", c->label, "option", string_or_null(c->option), "state",
                                         c->state, "verdict", string_or_null(c->verdict), "pick", pick_json(i, c),
                                         "prefix", string_or_null(c->prefix), "version", string_or_null(c->version),
                                         "library_version", string_or_null(c->library_version), "cuda_major",
                                         c->cuda_major ? json_integer((json_int_t)c->cuda_major) : json_null(),
                                         "header", hit_json(&c->header), "library", hit_json(&c->library)));
        }
        for (size_t i = 0; i < r->n_findings; i++) {
                const struct doctor_finding *f = &r->findings[i];

                json_array_append_new(findings,
                                      json_pack("{s:s, s:s, s:o, s:o, s:o}", "id", f->id, "severity",
                                                f->fatal ? "fatal" : "warning", "what", json_string_lossy(f->what),
                                                "why", json_string_lossy(f->why), "fix", json_string_lossy(f->fix)));
        }
        doc = json_pack("{s:s, s:i, s:s, s:s, s:{s:o, s:o}, s:o, s:{s:s, s:o, s:o}, s:o, s:o, s:o, s:o, s:o}",
                         "cudamod", "doctor", "format", 1, "mode", "build", "status", status_of(r), "cuda", "version",
                         string_or_null(r->cuda_version), "major",
                         r->cuda_major ? json_integer((json_int_t)r->cuda_major) : json_null(), "glibc",
                         string_or_null(r->glibc), "compile", "state", r->compile.state, "why",
                         string_or_null(r->compile.why), "command", json_strv(&r->compile.argv), "loaded_modules",
                         json_strv(&r->loaded), "modulepath", json_strv(mp), "components", comps, "findings",
                         findings, "notes", json_strv(&r->notes));
        /* What torch.utils.cpp_extension would use (doctor-build.h). */
        json_object_set_new(doc, "cpp_extension",
                            json_pack("{s:o, s:o, s:o, s:o, s:o}", "cuda_home", string_or_null(x->cuda_home), "from",
                                      string_or_null(x->from), "nvcc", string_or_null(x->nvcc), "ccbin",
                                      string_or_null(x->ccbin), "cxx", string_or_null(x->cxx)));
        return doc;
}

static void folded(const char *prefix, const char *text)
{
        print_folded(prefix, strlen(prefix), text);
}

/* "PATH  (from)", or the hit's absence. */
static char *hit_text(const struct cmake_find_hit *h)
{
        _cleanup_free_ char *p = term_escape(h->path), *f = term_escape(h->from ? h->from : "?");

        return xasprintf("%s  (%s)", p, f);
}

static void print_build(const struct build_report *r, const struct strv *mp, const struct global_options *g)
{
        _cleanup_free_ char *loaded = strv_join(&r->loaded, " ");

        printf("what `python setup.py develop` would find here (PyTorch's CMake searches emulated)\n");
        folded("  modules loaded: ", *loaded ? loaded : "(none)");
        for (size_t i = 0; i < N_BUILD; i++) {
                const struct build_component *c = &r->c[i];
                _cleanup_free_ char *v = term_escape(c->version ? c->version : c->library_version ? c->library_version : "");
                _cleanup_free_ char *cuda = c->cuda_major && i != BUILD_CUDART ? xasprintf(" for CUDA %lu", c->cuda_major)
                                                                              : xstrdup("");
                bool one = i == BUILD_TOOLKIT || i == BUILD_NVCC || i == BUILD_HOST;

                if (streq(c->state, "bundled")) {
                        printf("  %-14s bundled: third_party/nccl is built (USE_SYSTEM_NCCL is off)\n", c->label);
                        continue;
                }
                if (streq(c->state, "off")) {
                        printf("  %-14s off (%s)\n", c->label, c->option ? c->option : "USE_KINETO");
                        continue;
                }
                if (streq(c->state, "not searched") || (!c->library.path && !c->header.path)) {
                        printf("  %-14s %s%s%s%s\n", c->label, c->state,
                               c->option && streq(c->state, "not found") ? " (" : "",
                               c->option && streq(c->state, "not found") ? c->option : "",
                               c->option && streq(c->state, "not found") ? " goes off)" : "");
                        continue;
                }
                if (one || (i == BUILD_CUDART && !c->header.path)) {
                        _cleanup_free_ char *t = c->library.path ? hit_text(&c->library) : xstrdup(c->state);
                        printf("  %-14s %-10s %s%s\n", c->label, v, t, cuda);
                        continue;
                }
                if (streq(c->state, "found") && *cuda)
                        printf("  %-14s %-10s%s\n", c->label, v, cuda);
                else if (streq(c->state, "found"))
                        printf("  %-14s %s\n", c->label, v);
                else
                        printf("  %-14s %s%s%s\n", c->label, c->state, *v ? " " : "", v);
                if (c->header.path) {
                        _cleanup_free_ char *t = hit_text(&c->header);
                        printf("      header   %s\n", t);
                }
                if (c->library.path) {
                        _cleanup_free_ char *t = hit_text(&c->library);
                        printf("      library  %s\n", t);
                }
        }
        if (r->n_findings) {
                printf("%sproblems (%zu)%s\n", g->color ? "\033[1;31m" : "", r->n_findings, g->color ? "\033[0m" : "");
                for (size_t i = 0; i < r->n_findings; i++) {
                        const struct doctor_finding *f = &r->findings[i];
                        _cleanup_free_ char *head = xasprintf("  %zu. [%s%s] ", i + 1, f->fatal ? "fatal " : "",
                                                              f->id);

                        folded(head, f->what);
                        folded("     why: ", f->why);
                        folded("     fix: ", f->fix);
                }
        }
        if (r->notes.len) {
                printf("notes\n");
                for (size_t i = 0; i < r->notes.len; i++)
                        folded("  - ", r->notes.items[i]);
        }
        if (!mp->len && r->n_findings)
                printf("(no modulepath: give --modulepath DIR to have the fixes name modules)\n");
        if (r->n_fatal)
                printf("%zu problem%s found, %zu fatal: the configure would stop; fix %s before `python setup.py "
                       "develop`\n",
                       r->n_findings, r->n_findings == 1 ? "" : "s", r->n_fatal, r->n_findings == 1 ? "it" : "them");
        else if (r->n_findings)
                printf("%zu problem%s found: fix %s before `python setup.py develop`\n", r->n_findings,
                       r->n_findings == 1 ? "" : "s", r->n_findings == 1 ? "it" : "them");
        else
                printf("nothing wrong found\n");
}

int doctor_build_command(const struct doctor_options *o, bool json, const struct strv *mp,
                         const struct global_options *g)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct build_report r = { 0 };
        int status;

        if (doctor_build_run(o, &r, &d) < 0) {
                log_diag(&d);
                return EXIT_USAGE;
        }
        if (json)
                json_dump_stdout(build_json(&r, mp));
        else
                print_build(&r, mp, g);
        /* 3: the configure would stop; 1: it would go on, but the torch
         * built lacks something or is wrong; notes alone: 0. */
        status = r.n_fatal ? EXIT_BUILD_FATAL : r.n_findings ? EXIT_FOUND_FAILURE : 0;
        build_report_release(&r);
        return finish_stdout(status);
}
