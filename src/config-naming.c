/* config-naming.c: the `naming` part of the site config: module version
 * and name templates per component, the hierarchy's level directories,
 * the presets that give EasyBuild's and Spack's names (`naming:
 * easybuild`), `arch`, and the templates' grammar (naming_template_fill).
 * Every template is checked when the config loads, filled with a sample
 * install, reported at the character that is wrong, and the names the
 * components get must differ, so that plan, which fills them with an
 * install's facts (plan-naming.c), never meets a bad name. */
#include <errno.h>

#include "component-cudnn.h"
#include "component-table.h"
#include "component.h"
#include "config-naming.h"
#include "config-yaml.h"
#include "strbuf.h"
#include "util.h"
#include "version.h"
#include "banned.h"

#define MODULE_VERSION_CHARS "(letters, digits and . _ + -)"

/* ---- the grammar ---- */

static const char *const kind_what[] = {
        [NAMING_VERSION] = "module version",
        [NAMING_NAME] = "module name",
        [NAMING_LEVEL] = "level directory",
};

/* A module name or level may use one fact (a version any but {name}). */
static bool placeholder_allowed(enum naming_kind kind, const char *name)
{
        return streq(name, kind == NAMING_NAME ? "name" : "cuda_major");
}

static const char *const placeholders[] = {
        "name", "version", "version_full", "major", "minor", "patch", "build",
        "cuda", "cuda_version", "cuda_full", "cuda_major", "arch", NULL,
};

static bool placeholder_known(const char *name)
{
        for (const char *const *p = placeholders; *p; p++)
                if (streq(*p, name))
                        return true;
        return false;
}

int naming_unknown_placeholder(const char *tmpl, const char *name, struct diag *d)
{
        return diag_errorf(d, -EINVAL, "naming template '%s' has an unknown placeholder '{%s}'; known: "
                           "{name} {version} {version_full} {major} {minor} {patch} {build} "
                           "{cuda_version} {cuda_full} {cuda_major} {arch}", tmpl, name);
}

/* Whether s is what kind may be; why not in *why. */
static bool result_valid(const char *s, enum naming_kind kind, const char **why)
{
        if (kind == NAMING_VERSION) {
                *why = "not starting with '.'";
                return module_version_valid(s);
        }
        if (kind == NAMING_NAME) {
                *why = "starting with a letter or digit";
                return (ascii_isalpha(*s) || ascii_isdigit(*s)) && module_version_valid(s);
        }
        *why = "each part between '/' starting with a letter or digit";
        for (const char *p = s;;) {
                size_t n = strcspn(p, "/");
                _cleanup_free_ char *part = xstrndup(p, n);

                if (!(ascii_isalpha(*part) || ascii_isdigit(*part)) || !module_version_valid(part))
                        return false;
                if (!p[n])
                        return true;
                p += n + 1;
        }
}

int naming_template_fill(const char *tmpl, enum naming_kind kind, naming_value_fn *value, const void *userdata,
                         char **ret, size_t *ret_at, struct diag *d)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        const char *why;

        if (ret_at)
                *ret_at = 0;
        if (!tmpl || !*tmpl)
                return diag_errorf(d, -EINVAL, "naming template is empty");
        for (const char *p = tmpl; *p;) {
                _cleanup_free_ char *name = NULL;
                const char *end;
                int r;

                if (ret_at)
                        *ret_at = (size_t)(p - tmpl);
                if (*p == '}')
                        return diag_errorf(d, -EINVAL, "naming template '%s' has a '}' without a '{'", tmpl);
                if (*p != '{' && (module_version_char(*p) || (*p == '/' && kind == NAMING_LEVEL))) {
                        strbuf_addch(&sb, *p++);
                        continue;
                }
                if (*p != '{' && (unsigned char)*p > ' ' && (unsigned char)*p < 0x7f)
                        return diag_errorf(d, -EINVAL, "naming template '%s' has '%c', which a %s "
                                           "cannot hold " MODULE_VERSION_CHARS, tmpl, *p, kind_what[kind]);
                if (*p != '{')
                        return diag_errorf(d, -EINVAL, "naming template '%s' has a space, control or "
                                           "non-ASCII character, which a %s cannot hold "
                                           MODULE_VERSION_CHARS, tmpl, kind_what[kind]);
                end = strchr(p, '}');
                if (!end)
                        return diag_errorf(d, -EINVAL, "naming template '%s' has a '{' without a '}'", tmpl);
                name = xstrndup(p + 1, (size_t)(end - p - 1));
                if (kind == NAMING_VERSION && streq(name, "name"))
                        return diag_errorf(d, -EINVAL, "naming template '%s' has '{name}', which only a "
                                           "module name may use", tmpl);
                if (kind != NAMING_VERSION && !placeholder_allowed(kind, name))
                        return diag_errorf(d, -EINVAL, "naming template '%s': a %s may use only %s, not "
                                           "'{%s}'", tmpl, kind_what[kind],
                                           kind == NAMING_NAME ? "{name} (every install of a component "
                                                                 "has one module name)"
                                                               : "{cuda_major} (a level holds the builds "
                                                                 "for one CUDA major)",
                                           name);
                if (!placeholder_known(name))
                        return naming_unknown_placeholder(tmpl, name, d);
                r = value(tmpl, name, userdata, &sb, d);
                if (r < 0)
                        return r;
                p = end + 1;
        }
        if (ret_at)
                *ret_at = 0;
        /* {build} and {arch} come from outside and may hold anything. */
        if (!result_valid(sb.buf, kind, &why))
                return diag_errorf(d, -EINVAL, "naming template '%s' gives '%s', which is not a valid %s "
                                   MODULE_VERSION_CHARS ", %s", tmpl, sb.buf, kind_what[kind], why);
        *ret = strbuf_detach(&sb);
        return 0;
}

/* What a template is filled with when the config loads: a sample
 * install of a component, built for a CUDA of major cuda_major. */
struct naming_sample {
        const char *name;
        long cuda_major;
};

static int sample_value(const char *tmpl, const char *name, const void *userdata, struct strbuf *out,
                        struct diag *d)
{
        static const char *const values[][2] = {
                { "version", "1.2.3" }, { "version_full", "1.2.3.4" }, { "major", "1" },
                { "minor", "2" }, { "patch", "3" }, { "build", "4" }, { "cuda", "12.4" },
                { "cuda_version", "12.4" }, { "cuda_full", "12.4.1" }, { "arch", "x86_64" },
        };
        const struct naming_sample *s = userdata;

        if (streq(name, "name")) {
                strbuf_addstr(out, s->name);
                return 0;
        }
        if (streq(name, "cuda_major")) {
                strbuf_addf(out, "%ld", s->cuda_major);
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(values); i++)
                if (streq(name, values[i][0])) {
                        strbuf_addstr(out, values[i][1]);
                        return 0;
                }
        return naming_unknown_placeholder(tmpl, name, d);
}

/* The module name and the level directories as they come out of c's
 * templates (checked: they take only {name} and {cuda_major}), for
 * naming_collisions. */
static char *sample_module_name(const struct config *c, const struct component *comp)
{
        const char *tmpl = c->module_name[comp->index] ? c->module_name[comp->index] : NAMING_NAME_DEFAULT;
        const struct naming_sample s = { .name = comp->name, .cuda_major = -1 };
        char *ret = NULL;

        if (naming_template_fill(tmpl, NAMING_NAME, sample_value, &s, &ret, NULL, NULL) < 0)
                return xstrdup(comp->name);
        return ret;
}

static char *sample_level(const struct config *c, long cuda_major)
{
        const char *tmpl = cuda_major < 0 ? (c->level_core ? c->level_core : NAMING_LEVEL_CORE_DEFAULT)
                                          : (c->level_cuda ? c->level_cuda : NAMING_LEVEL_CUDA_DEFAULT);
        const struct naming_sample s = { .cuda_major = cuda_major };
        char *ret = NULL;

        if (naming_template_fill(tmpl, NAMING_LEVEL, sample_value, &s, &ret, NULL, NULL) < 0)
                return cuda_major < 0 ? xstrdup(NAMING_LEVEL_CORE_DEFAULT) : xasprintf("CUDA/%ld", cuda_major);
        return ret;
}

/* ---- presets ---- */

enum naming_preset { PRESET_CUDAMOD, PRESET_EASYBUILD, PRESET_SPACK, _PRESET_MAX };
static const char *const preset_names[] = {
        [PRESET_CUDAMOD] = "cudamod",
        [PRESET_EASYBUILD] = "easybuild",
        [PRESET_SPACK] = "spack",
        NULL,
};

/* What each preset names a component. EasyBuildMNS: `<name>/<version>
 * [-<toolchain>][<versionsuffix>]` with the easyconfig's name (CUDA,
 * cuDNN, NCCL, ...): CUDA by its full release (CUDA/12.9.1), and what was
 * built for a CUDA with the versionsuffix `-CUDA-%(cudaver)s`, the FULL
 * version of its CUDA dependency ({cuda_full}: one module per toolkit
 * when the install does not name it, plan.c). The toolchain part
 * (NCCL's `-GCCcore-13.3.0`, magma's `-foss-2024a`) names a compiler
 * toolchain cudamod knows nothing of, so it is left out, and `cudamod
 * config` says so (naming_preset_note). Spack: lowercase package names,
 * `{name}/{version}` (its lmod default projection), and cuDNN's package
 * versions carry the CUDA it is for ("9.2.0.82-12", "8.7.0.84-11.8"). */
static void preset_apply(struct config *c, enum naming_preset preset)
{
        FOREACH_COMPONENT(comp) {
                size_t i = comp->index;
                const char *name = NAMING_NAME_DEFAULT;
                char *version;

                if (preset == PRESET_CUDAMOD)
                        version = xstrdup(comp->naming);
                else if (comp->toolkit)
                        version = xstrdup("{version_full}");
                else if (preset == PRESET_EASYBUILD)
                        version = xstrdup("{version_full}-CUDA-{cuda_full}");
                else if (comp == &component_cudnn)
                        version = xstrdup("{version_full}-{cuda_version}");
                else
                        version = xstrdup("{version_full}");
                if (preset == PRESET_EASYBUILD)
                        name = component_easybuild_name(comp);
                free(c->naming[i]);
                c->naming[i] = version;
                free(c->module_name[i]);
                c->module_name[i] = xstrdup(name);
        }
        free(c->level_core);
        c->level_core = xstrdup(NAMING_LEVEL_CORE_DEFAULT);
        free(c->level_cuda);
        c->level_cuda = xstrdup(NAMING_LEVEL_CUDA_DEFAULT);
        c->naming_preset = preset_names[preset];
}

const char *naming_preset_note(const struct config *c)
{
        if (!c->naming_preset || !streq(c->naming_preset, preset_names[PRESET_EASYBUILD]))
                return NULL;
        return "naming preset 'easybuild' writes EasyBuild's names but for the toolchain part some "
               "easyconfigs put before -CUDA-... (NCCL/2.22.3-GCCcore-13.3.0-CUDA-12.6.0, "
               "magma/2.9.0-foss-2024a-CUDA-12.6.0, NVSHMEM/3.1.7-gompi-2024a-CUDA-12.6.0): it names the "
               "compiler toolchain EasyBuild built with, which cudamod cannot know; a site that needs it "
               "writes it into naming.<component> (\"{version_full}-GCCcore-13.3.0-CUDA-{cuda_full}\")";
}

void naming_init_default(struct config *c)
{
        preset_apply(c, PRESET_CUDAMOD);
}

/* ---- the loader ---- */

/* The sample install every template is tried on when loaded, so that only
 * the template itself can fail there. */
static int naming_check(struct parser *p, const char *tmpl, enum naming_kind kind, long cuda_major)
{
        const struct naming_sample s = { .name = "cudnn", .cuda_major = cuda_major };
        _cleanup_diag_ struct diag why = DIAG_INIT;
        _cleanup_free_ char *out = NULL;
        yaml_mark_t m = p->event.start_mark;
        size_t at = 0;

        if (naming_template_fill(tmpl, kind, sample_value, &s, &out, &at, &why) >= 0)
                return 0;
        /* The column of the character at fault, in a scalar on one line
         * written as it reads (no escapes: its text is as long as the
         * template, and its quotes). */
        if (at && p->event.start_mark.line == p->event.end_mark.line) {
                bool quoted = p->event.data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
                              p->event.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
                if (p->event.end_mark.column - p->event.start_mark.column == strlen(tmpl) + 2 * quoted)
                        m.column += at + quoted;
        }
        return error_at(p, &m, "'%s': %s", p->path.buf, why.message);
}

static int parse_template(struct parser *p, enum naming_kind kind, long cuda_major, char **field)
{
        const char *s;
        int r;

        r = get_string(p, "a naming template", &s);
        if (r < 0)
                return r;
        if (kind == NAMING_LEVEL && cuda_major < 0 && strchr(s, '{'))
                return error_at(p, &p->event.start_mark, "'%s': the core level '%s' is one directory "
                                "for every toolkit: it takes no placeholder", p->path.buf, s);
        r = naming_check(p, s, kind, cuda_major);
        if (r < 0)
                return r;
        if (kind == NAMING_LEVEL && cuda_major >= 0 && !strstr(s, "{cuda_major}"))
                return error_at(p, &p->event.start_mark, "'%s': the CUDA level '%s' must hold "
                                "{cuda_major}: each CUDA major has a level of its own", p->path.buf, s);
        free(*field);
        *field = xstrdup(s);
        return 0;
}

static int parse_preset(struct parser *p, struct config *c)
{
        const char *s;
        int r;

        r = get_string(p, "a naming preset (cudamod, easybuild or spack)", &s);
        if (r < 0)
                return r;
        for (int i = 0; i < _PRESET_MAX; i++)
                if (streq(s, preset_names[i])) {
                        preset_apply(c, (enum naming_preset)i);
                        return 0;
                }
        return expected(p, "a naming preset (cudamod, easybuild or spack)");
}

/* naming.<component>: a version template, or {name: T, version: T}. */
static int parse_component_naming(struct parser *p, struct config *c, size_t i)
{
        static const char *const keys[] = { "name", "version", NULL };
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        if (p->event.type != YAML_MAPPING_START_EVENT) {
                if (p->event.type != YAML_SCALAR_EVENT)
                        return expected(p, "a naming template or a mapping of name and version");
                return parse_template(p, NAMING_VERSION, 12, &c->naming[i]);
        }
        r = map_begin(p, &it, keys);
        while (r >= 0 && (r = map_next(p, &it)) > 0)
                r = parse_template(p, it.index == 0 ? NAMING_NAME : NAMING_VERSION, 12,
                                   it.index == 0 ? &c->module_name[i] : &c->naming[i]);
        return r;
}

static int parse_levels(struct parser *p, struct config *c)
{
        static const char *const keys[] = { "core", "cuda", NULL };
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        r = map_begin(p, &it, keys);
        while (r >= 0 && (r = map_next(p, &it)) > 0)
                r = parse_template(p, NAMING_LEVEL, it.index == 0 ? -1 : 12,
                                   it.index == 0 ? &c->level_core : &c->level_cuda);
        return r;
}

/* Two components with one name would be one module to the tools (Lmod
 * and Environment Modules both compare names case-insensitively in some
 * places, and file systems may), and a level inside the other would show
 * its modules as names of the outer one. */
static int naming_collisions(struct parser *p, const struct config *c, const yaml_mark_t *m)
{
        _cleanup_free_ char *core = sample_level(c, -1);
        _cleanup_free_ char *cuda = sample_level(c, 12);
        size_t n = strlen(core);

        FOREACH_COMPONENT(a) {
                _cleanup_free_ char *na = sample_module_name(c, a);

                for (size_t k = a->index + 1; k < N_COMPONENTS; k++) {
                        const struct component *b = component_table[k];
                        _cleanup_free_ char *nb = sample_module_name(c, b);

                        if (strcasecmp(na, nb) == 0)
                                return error_at(p, m, "'naming': %s and %s would both be named '%s'%s%s%s; "
                                                "give them different names", a->name, b->name, na,
                                                streq(na, nb) ? "" : " (and '", streq(na, nb) ? "" : nb,
                                                streq(na, nb) ? "" : "', the same but for case)");
                }
        }
        if (strcasecmp(core, cuda) == 0 || (strncasecmp(core, cuda, n) == 0 && cuda[n] == '/') ||
            (strncasecmp(cuda, core, strlen(cuda)) == 0 && core[strlen(cuda)] == '/'))
                return error_at(p, m, "'naming.levels': the core level '%s' and the CUDA level '%s' "
                                "must not be one directory or one inside the other", core, cuda);
        return 0;
}

int parse_naming(struct parser *p, struct config *c)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        const char *keys[N_COMPONENTS + 3];
        yaml_mark_t start = p->event.start_mark;
        size_t n = 0;
        int r;

        if (p->event.type == YAML_SCALAR_EVENT) {
                r = parse_preset(p, c);
                return r < 0 ? r : naming_collisions(p, c, &start);
        }
        keys[n++] = "preset";
        keys[n++] = "levels";
        FOREACH_COMPONENT(comp)
                keys[n++] = comp->name;
        keys[n] = NULL;
        r = map_begin(p, &it, keys);
        while (r >= 0 && (r = map_next(p, &it)) > 0) {
                if (it.index == 0 && it.seen.len > 1)
                        return error_at(p, &it.key_mark, "'naming.preset' must come first: it sets "
                                        "every name the keys after it change");
                if (it.index == 0)
                        r = parse_preset(p, c);
                else if (it.index == 1)
                        r = parse_levels(p, c);
                else
                        r = parse_component_naming(p, c, (size_t)(it.index - 2));
        }
        return r < 0 ? r : naming_collisions(p, c, &start);
}

int parse_arch(struct parser *p, struct config *c)
{
        static const char *const arches[] = { "x86_64", "aarch64", "ppc64le", NULL };
        const char *s;
        int r;

        r = get_string(p, "an architecture (x86_64, aarch64 or ppc64le)", &s);
        if (r < 0)
                return r;
        for (const char *const *a = arches; *a; a++)
                if (streq(s, *a)) {
                        free(c->arch);
                        c->arch = xstrdup(s);
                        return 0;
                }
        if (streq(s, "sbsa") || streq(s, "arm64"))
                return error_at(p, &p->event.start_mark, "'%s': '%s' is called 'aarch64' here", p->path.buf, s);
        return expected(p, "an architecture (x86_64, aarch64 or ppc64le)");
}
