/* config.c: the site configuration's schema: the built-in default, the
 * keys with their types and checks, the loader that walks them over the
 * YAML reader (config-yaml.c), and module naming templates. A key given
 * replaces its default; the first problem stops the load, reported with its
 * position and dotted key, and leaves the config as it was. The writer is
 * config-write.c. */
#include <errno.h>
#include <sys/stat.h>
#include <yaml.h>

#include "config.h"
#include "component.h"
#include "config-host.h"
#include "config-naming.h"
#include "config-site.h"
#include "config-yaml.h"
#include "strbuf.h"
#include "util.h"
#include "util-path.h"
#include "version.h"
#include "banned.h"

const char *const env_op_keys[ENV_OP_PUSHENV + 2] = {
        [ENV_OP_SETENV] = "setenv",
        [ENV_OP_PREPEND_PATH] = "prepend_path",
        [ENV_OP_APPEND_PATH] = "append_path",
        [ENV_OP_PUSHENV] = "pushenv",
        NULL,
};

bool env_op_is_scalar(enum env_op_kind kind)
{
        return kind == ENV_OP_SETENV || kind == ENV_OP_PUSHENV;
}

/* A site config is a few KiB; the cap bounds what the parser may allocate. */
#define CONFIG_MAX_SIZE ((size_t)1 << 20)
#define MAX_DEPTH_MAX 64
#define TIMEOUT_MAX 86400

static const char *const format_names[_FORMAT_MAX] = {
        [FORMAT_LUA] = "lua",
        [FORMAT_TCL] = "tcl",
};

static const char *const layout_names[_MODULE_LAYOUT_MAX] = {
        [MODULE_LAYOUT_HIERARCHICAL] = "hierarchical",
        [MODULE_LAYOUT_FLAT] = "flat",
};

const char *module_format_to_string(enum module_format f)
{
        return f >= 0 && f < _FORMAT_MAX ? format_names[f] : NULL;
}

enum module_format module_format_from_string(const char *s)
{
        for (int i = 0; s && i < _FORMAT_MAX; i++)
                if (streq(s, format_names[i]))
                        return (enum module_format)i;
        return _FORMAT_INVALID;
}

const char *module_layout_to_string(enum module_layout l)
{
        return l >= 0 && l < _MODULE_LAYOUT_MAX ? layout_names[l] : NULL;
}

enum module_layout module_layout_from_string(const char *s)
{
        for (int i = 0; s && i < _MODULE_LAYOUT_MAX; i++)
                if (streq(s, layout_names[i]))
                        return (enum module_layout)i;
        return _MODULE_LAYOUT_INVALID;
}

static const char *const driver_check_names[_DRIVER_CHECK_MAX] = {
        [DRIVER_CHECK_OFF] = "off",
        [DRIVER_CHECK_WARN] = "warn",
        [DRIVER_CHECK_ERROR] = "error",
};

const char *driver_check_to_string(enum driver_check c)
{
        return c >= 0 && c < _DRIVER_CHECK_MAX ? driver_check_names[c] : NULL;
}

enum driver_check driver_check_from_string(const char *s)
{
        for (int i = 0; s && i < _DRIVER_CHECK_MAX; i++)
                if (streq(s, driver_check_names[i]))
                        return (enum driver_check)i;
        return _DRIVER_CHECK_INVALID;
}

/* ---- the config struct ---- */

void config_init_default(struct config *c)
{
        *c = (struct config){
                .format = FORMAT_LUA,
                .layout = MODULE_LAYOUT_HIERARCHICAL,
                .driver_check = DRIVER_CHECK_WARN,
                .max_depth = 8,
                .stubs_on_library_path = true,
                .pytorch_build_env = true,
                .cuda_arch_list = xstrdup(""),
                .validate = {
                        .launcher = xstrdup(""),
                        .timeout = 120,
                        .driver_libdir = xstrdup(""),
                        .require_device = false,
                        .compile = true,
                },
                .templates = xstrdup(""),
                .lock_timeout = 60,
                .output_mode = 0644,
        };
        for (int i = 0; i < N_COMPONENTS; i++) {
                c->defaults[i].kind = DEFAULT_LATEST;
                c->ld_library_path[i] = true;
        }
        config_site_init_default(c);
        naming_init_default(c);
}

static void env_ops_add(struct env_ops *o, enum env_op_kind kind, const char *name, const char *value)
{
        if (o->len == o->alloc) {
                o->alloc = o->alloc ? 2 * o->alloc : 4;
                o->items = xreallocarray(o->items, o->alloc, sizeof(*o->items));
        }
        o->items[o->len++] = (struct env_op){ .kind = kind, .name = xstrdup(name), .value = xstrdup(value) };
}

static void env_ops_release(struct env_ops *o)
{
        for (size_t i = 0; i < o->len; i++) {
                free(o->items[i].name);
                free(o->items[i].value);
        }
        free(o->items);
        *o = (struct env_ops){ 0 };
}

static void targets_release(struct config *c)
{
        for (size_t i = 0; i < c->validate.n_targets; i++) {
                free(c->validate.targets[i].name);
                free(c->validate.targets[i].launcher);
        }
        free(c->validate.targets);
        c->validate.targets = NULL;
        c->validate.n_targets = 0;
}

static void host_compilers_release(struct config *c)
{
        for (size_t i = 0; i < c->n_host_compilers; i++) {
                free(c->host_compilers[i].path);
                free(c->host_compilers[i].module);
        }
        free(c->host_compilers);
        c->host_compilers = NULL;
        c->n_host_compilers = 0;
}

/* --- modulerc directives (lmod-api) --- */

static void version_rc_release(struct config_version_rc *v)
{
        free(v->version);
        strv_release(&v->aliases);
        strv_release(&v->tags);
        free(v->deprecated);
}

static void version_rcs_release(struct config *c)
{
        for (size_t i = 0; i < c->n_version_rcs; i++)
                version_rc_release(&c->version_rcs[i]);
        free(c->version_rcs);
        c->version_rcs = NULL;
        c->n_version_rcs = 0;
}

const struct config_version_rc *config_version_rc(const struct config *c, unsigned component,
                                                  const char *version)
{
        for (size_t i = 0; i < c->n_version_rcs; i++)
                if (c->version_rcs[i].component == component && streq(c->version_rcs[i].version, version))
                        return &c->version_rcs[i];
        return NULL;
}

/* --- end of the modulerc directives --- */

void config_release(struct config *c)
{
        version_rcs_release(c);
        free(c->file);
        free(c->output);
        strv_release(&c->search);
        strv_release(&c->search_mounts);
        strv_release(&c->search_optional);
        strv_release(&c->exclude);
        for (size_t i = 0; i < N_COMPONENTS; i++)
                strv_release(&c->exclude_installs[i]);
        for (int i = 0; i < N_COMPONENTS; i++) {
                free(c->defaults[i].version);
                free(c->naming[i]);
                free(c->module_name[i]);
                env_ops_release(&c->env[i]);
        }
        free(c->level_core);
        free(c->level_cuda);
        free(c->arch);
        free(c->cuda_arch_list);
        free(c->cuda_arch_list_origin);
        host_compilers_release(c);
        free(c->validate.launcher);
        targets_release(c);
        free(c->validate.driver_libdir);
        free(c->templates);
        config_site_release(c);
        *c = (struct config){ 0 };
}

static char *xstrdup_or_null(const char *s)
{
        return s ? xstrdup(s) : NULL;
}

static void strv_copy(struct strv *dst, const struct strv *src)
{
        *dst = (struct strv){ 0 };
        for (size_t i = 0; i < src->len; i++)
                strv_add(dst, src->items[i]);
}

/* A deep copy, so that a load can work on it and be dropped on error. */
static void config_copy(struct config *dst, const struct config *src)
{
        *dst = *src;
        dst->file = xstrdup_or_null(src->file);
        dst->output = xstrdup_or_null(src->output);
        strv_copy(&dst->search, &src->search);
        strv_copy(&dst->search_mounts, &src->search_mounts);
        strv_copy(&dst->search_optional, &src->search_optional);
        strv_copy(&dst->exclude, &src->exclude);
        for (size_t i = 0; i < N_COMPONENTS; i++)
                strv_copy(&dst->exclude_installs[i], &src->exclude_installs[i]);
        for (int i = 0; i < N_COMPONENTS; i++) {
                dst->defaults[i].version = xstrdup_or_null(src->defaults[i].version);
                dst->naming[i] = xstrdup_or_null(src->naming[i]);
                dst->module_name[i] = xstrdup_or_null(src->module_name[i]);
                dst->env[i] = (struct env_ops){ 0 };
                for (size_t k = 0; k < src->env[i].len; k++)
                        env_ops_add(&dst->env[i], src->env[i].items[k].kind, src->env[i].items[k].name,
                                    src->env[i].items[k].value);
        }
        dst->level_core = xstrdup_or_null(src->level_core);
        dst->level_cuda = xstrdup_or_null(src->level_cuda);
        dst->arch = xstrdup_or_null(src->arch);
        dst->cuda_arch_list = xstrdup_or_null(src->cuda_arch_list);
        dst->cuda_arch_list_origin = xstrdup_or_null(src->cuda_arch_list_origin);
        dst->host_compilers = NULL;
        if (src->n_host_compilers) {
                dst->host_compilers = xcalloc(src->n_host_compilers, sizeof(*dst->host_compilers));
                for (size_t i = 0; i < src->n_host_compilers; i++)
                        dst->host_compilers[i] = (struct config_host_compiler){
                                .cuda_major = src->host_compilers[i].cuda_major,
                                .path = xstrdup_or_null(src->host_compilers[i].path),
                                .module = xstrdup_or_null(src->host_compilers[i].module),
                        };
        }
        dst->validate.launcher = xstrdup_or_null(src->validate.launcher);
        dst->validate.targets = NULL;
        if (src->validate.n_targets) {
                dst->validate.targets = xcalloc(src->validate.n_targets, sizeof(*dst->validate.targets));
                for (size_t i = 0; i < src->validate.n_targets; i++)
                        dst->validate.targets[i] = (struct config_target){
                                .name = xstrdup_or_null(src->validate.targets[i].name),
                                .launcher = xstrdup_or_null(src->validate.targets[i].launcher),
                        };
        }
        dst->validate.driver_libdir = xstrdup_or_null(src->validate.driver_libdir);
        dst->templates = xstrdup_or_null(src->templates);
        dst->version_rcs = src->n_version_rcs ? xcalloc(src->n_version_rcs, sizeof(*dst->version_rcs)) : NULL;
        for (size_t i = 0; i < src->n_version_rcs; i++) {
                const struct config_version_rc *v = &src->version_rcs[i];

                dst->version_rcs[i] = (struct config_version_rc){
                        .component = v->component,
                        .version = xstrdup(v->version),
                        .hide = v->hide,
                        .deprecated = xstrdup_or_null(v->deprecated),
                };
                strv_copy(&dst->version_rcs[i].aliases, &v->aliases);
                strv_copy(&dst->version_rcs[i].tags, &v->tags);
        }
        config_site_copy(dst, src);
}

/* ---- the loader ---- */

/* A mapping's keys as a table: each row names its key, how its value is
 * read and where it goes (offset into the struct the walk fills; 0 and
 * FIELD_PARSE for a parser of the whole struct). map_walk reads the
 * mapping through the reader's map_begin/map_next, so an unknown key (the
 * rows' keys in row order are the known ones), a duplicate or a wrong type
 * gets the reader's error at its position. */
enum field_type {
        FIELD_STRING,      /* set_string: a string (char *), replacing the old one */
        FIELD_BOOL,        /* get_bool (bool) */
        FIELD_UINT,        /* get_uint in [min, max] (unsigned) */
        FIELD_STRING_LIST, /* parse_string_list (struct strv) */
        FIELD_PARSE,       /* parse(p, the field) */
};

struct field {
        const char *key; /* NULL ends a table */
        enum field_type type;
        size_t offset;
        unsigned min, max;
        int (*parse)(struct parser *p, void *field);
};

/* One row per component, its key the component's name (component_names). */
#define COMPONENT_FIELD(name, type_, array, ...) \
        { #name, (type_), offsetof(struct config, array[COMPONENT_INDEX(name)]), __VA_ARGS__ },

static int field_read(struct parser *p, const struct field *f, void *obj)
{
        void *at = (char *)obj + f->offset;

        switch (f->type) {
        case FIELD_STRING:
                return set_string(p, at);
        case FIELD_BOOL:
                return get_bool(p, at);
        case FIELD_UINT:
                return get_uint(p, f->min, f->max, at);
        case FIELD_STRING_LIST:
                return parse_string_list(p, at);
        case FIELD_PARSE:
                return f->parse(p, at);
        }
        return -EINVAL;
}

/* Read the mapping that is the current event into obj through fields;
 * on success p->path is the mapping's own again. */
static int map_walk(struct parser *p, const struct field *fields, void *obj)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        _cleanup_free_ const char **keys = NULL;
        size_t n = 0;
        int r;

        while (fields[n].key)
                n++;
        keys = xcalloc(n + 1, sizeof(*keys));
        for (size_t i = 0; i < n; i++)
                keys[i] = fields[i].key;
        r = map_begin(p, &it, keys);
        while (r >= 0 && (r = map_next(p, &it)) > 0)
                r = field_read(p, &fields[it.index], obj);
        return r;
}

static int parse_default(struct parser *p, void *field)
{
        static const char what[] = "a version, 'latest' or 'none'";
        struct default_spec *spec = field;
        const char *s;
        int r;

        r = get_string(p, what, &s);
        if (r < 0)
                return r;
        free(spec->version);
        spec->version = NULL;
        if (streq(s, "latest"))
                spec->kind = DEFAULT_LATEST;
        else if (streq(s, "none"))
                spec->kind = DEFAULT_NONE;
        else if (ascii_isdigit(s[0]) && module_version_valid(s)) {
                /* A module version as naming gives it ("9.1.0-cuda12") or
                 * a prefix of the version ("12", "12.9"). */
                spec->kind = DEFAULT_VERSION;
                spec->version = xstrdup(s);
        } else
                return expected(p, what);
        return 0;
}


/* A value that a module may hold: what every reader of a modulefile takes
 * as data (written_value_problem: no control character, quote, backslash,
 * '$', '`' or ']'), and a path variable cannot carry ':'. */
static int env_value_check(struct parser *p, enum env_op_kind kind, const char *s)
{
        size_t at;
        const char *why = written_value_problem(s, WRITTEN_WORD, &at);

        if (why)
                return error_at(p, &p->event.start_mark, "'%s': the value holds %s (byte %zu)", p->path.buf,
                                why, at + 1);
        if (!env_op_is_scalar(kind) && strchr(s, ':'))
                return error_at(p, &p->event.start_mark,
                                "'%s': '%s' holds ':'; give each directory as a list item",
                                p->path.buf, s);
        return 0;
}

/* The ops of one env kind: VAR: value, or for paths VAR: [value, ...]. */
static int parse_env_kind(struct parser *p, enum env_op_kind kind, struct env_ops *ops)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        int r;

        r = map_begin(p, &it, NULL);
        if (r < 0)
                return r;
        while ((r = map_next(p, &it)) > 0) {
                const char *what = env_op_is_scalar(kind) ? "a string" : "a directory or a list of them";
                const char *s;

                if (!env_name_valid(it.key)) {
                        _cleanup_free_ char *parent = xstrndup(p->path.buf, it.path_len);
                        return error_at(p, &it.key_mark,
                                        "'%s': '%s' is not a variable name (letters, digits and '_', "
                                        "not starting with a digit)",
                                        parent, it.key);
                }
                if (!env_op_is_scalar(kind) && p->event.type == YAML_SEQUENCE_START_EVENT) {
                        struct seq_iter si;

                        r = seq_begin(p, &si, what);
                        while (r >= 0 && (r = seq_next(p, &si)) > 0) {
                                r = get_string(p, "a directory", &s);
                                if (r < 0)
                                        return r;
                                if (!*s)
                                        return expected(p, "a directory");
                                r = env_value_check(p, kind, s);
                                if (r < 0)
                                        return r;
                                env_ops_add(ops, kind, it.key, s);
                        }
                        if (r < 0)
                                return r;
                        continue;
                }
                r = get_string(p, what, &s);
                if (r < 0)
                        return r;
                if (!env_op_is_scalar(kind) && !*s)
                        return expected(p, what);
                r = env_value_check(p, kind, s);
                if (r < 0)
                        return r;
                env_ops_add(ops, kind, it.key, s);
        }
        return r;
}

/* env.<component>: its ops by kind. The kinds stay a loop over
 * env_op_keys, the spelling the writer shares. */
static int parse_env_component(struct parser *p, void *field)
{
        _cleanup_(map_iter_release) struct map_iter ops = { 0 };
        struct env_ops *o = field;
        int r;

        /* A component given replaces its ops; ops stay in file order. */
        env_ops_release(o);
        r = map_begin(p, &ops, env_op_keys);
        if (r < 0)
                return r;
        while ((r = map_next(p, &ops)) > 0) {
                r = parse_env_kind(p, (enum env_op_kind)ops.index, o);
                if (r < 0)
                        return r;
        }
        return r;
}

static const struct field env_fields[] = {
#define X(name) COMPONENT_FIELD(name, FIELD_PARSE, env, .parse = parse_env_component)
        COMPONENT_LIST(X)
#undef X
        { NULL },
};

static int parse_env(struct parser *p, void *obj)
{
        return map_walk(p, env_fields, obj);
}

/* A host compiler's path: absolute, an executable regular file, no
 * control character and no ':' (it goes into NVCC_PREPEND_FLAGS and
 * CUDAHOSTCXX, both read by other programs). */
static int host_compiler_path_check(struct parser *p, const char *s)
{
        struct stat st;

        size_t at;
        const char *why = written_value_problem(s, WRITTEN_WORD, &at);

        if (why)
                return error_at(p, &p->event.start_mark, "'%s': the host compiler path holds %s (byte %zu)",
                                p->path.buf, why, at + 1);
        if (s[0] != '/')
                return error_at(p, &p->event.start_mark,
                                "'%s': '%s' is not an absolute path: give the compiler's full path (/usr/bin/g++-11)",
                                p->path.buf, s);
        if (strpbrk(s, " \t\"'\\"))
                return error_at(p, &p->event.start_mark,
                                "'%s': '%s' holds a blank, a quote or a backslash, which NVCC_PREPEND_FLAGS cannot carry (nvcc splits it at blanks)",
                                p->path.buf, s);
        if (stat(s, &st) < 0)
                return error_at(p, &p->event.start_mark, "'%s': '%s': %s", p->path.buf, s, strerror(errno));
        if (!S_ISREG(st.st_mode) || access(s, X_OK) < 0)
                return error_at(p, &p->event.start_mark, "'%s': '%s' is not an executable file", p->path.buf, s);
        return 0;
}

/* A module name as Lmod and Environment Modules take it: "gcc/12",
 * "GCCcore/12.3.0"; no blanks, quotes or shell and Tcl specials. */
static bool module_name_valid(const char *s)
{
        if (!*s || *s == '/' || *s == '-' || *s == '.')
                return false;
        for (; *s; s++)
                if (!ascii_isalpha(*s) && !ascii_isdigit(*s) && !strchr("._+-/", *s))
                        return false;
        return true;
}

static int parse_host_compiler_module(struct parser *p, void *field)
{
        char **module = field;
        const char *s;
        int r;

        r = get_string(p, "a module name (gcc/12)", &s);
        if (r >= 0 && !module_name_valid(s))
                r = error_at(p, &p->event.start_mark,
                             "'%s': '%s' is not a module name (letters, digits and . _ + - /)", p->path.buf, s);
        if (r >= 0)
                *module = xstrdup(s);
        return r;
}

static int parse_host_compiler_path(struct parser *p, void *field)
{
        char **path = field;
        const char *s;
        int r;

        r = get_string(p, "a compiler path", &s);
        if (r >= 0)
                r = host_compiler_path_check(p, s);
        if (r >= 0)
                *path = xstrdup(s);
        return r;
}

static const struct field host_compiler_fields[] = {
        { "module", FIELD_PARSE, offsetof(struct config_host_compiler, module),
          .parse = parse_host_compiler_module },
        { "path", FIELD_PARSE, offsetof(struct config_host_compiler, path), .parse = parse_host_compiler_path },
        { NULL },
};

static int parse_host_compiler_value(struct parser *p, struct config_host_compiler *h)
{
        yaml_mark_t start = p->event.start_mark;
        const char *s;
        int r;

        if (p->event.type == YAML_SCALAR_EVENT) {
                r = get_string(p, "a compiler path or {module: NAME}", &s);
                if (r < 0)
                        return r;
                r = host_compiler_path_check(p, s);
                if (r < 0)
                        return r;
                h->path = xstrdup(s);
                return 0;
        }
        if (p->event.type != YAML_MAPPING_START_EVENT)
                return expected(p, "a compiler path or {module: NAME}");
        r = map_walk(p, host_compiler_fields, h);
        if (r < 0)
                return r;
        if (!h->module && !h->path)
                return error_at(p, &start, "'%s': give 'module' (a module to depend on) or 'path' (the compiler)",
                                p->path.buf);
        return 0;
}

/* host_compiler: { "11": /usr/bin/g++-11, "12": {module: gcc/12} }: any
 * key that is a CUDA major, so a loop of its own. */
static int parse_host_compiler(struct parser *p, void *obj)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        struct config *c = obj;
        int r;

        r = map_begin(p, &it, NULL);
        if (r < 0)
                return r;
        host_compilers_release(c);
        while ((r = map_next(p, &it)) > 0) {
                struct config_host_compiler h = { 0 };
                char *end;
                unsigned long major;

                errno = 0;
                major = ascii_isdigit(it.key[0]) ? strtoul(it.key, &end, 10) : 0;
                if (errno || major < 1 || major > 99 || *end) {
                        _cleanup_free_ char *parent = xstrndup(p->path.buf, it.path_len);
                        return error_at(p, &it.key_mark,
                                        "'%s': '%s' is not a CUDA major version (\"11\", \"12\", \"13\")",
                                        parent[0] ? parent : "host_compiler", it.key);
                }
                if (config_host_compiler(c, (long)major)) {
                        _cleanup_free_ char *parent = xstrndup(p->path.buf, it.path_len);
                        return error_at(p, &it.key_mark, "'%s': CUDA %lu is given twice", parent, major);
                }
                r = parse_host_compiler_value(p, &h);
                if (r < 0) {
                        free(h.path);
                        free(h.module);
                        return r;
                }
                h.cuda_major = (unsigned)major;
                c->host_compilers = xreallocarray(c->host_compilers, c->n_host_compilers + 1,
                                                  sizeof(*c->host_compilers));
                c->host_compilers[c->n_host_compilers++] = h;
        }
        return r;
}

/* A target being read, and where its name was. */
struct target_entry {
        struct config_target t;
        yaml_mark_t name_mark;
};

static int parse_target_name(struct parser *p, void *obj)
{
        struct target_entry *e = obj;
        const char *s;
        int r;

        r = get_string(p, "a target name", &s);
        if (r >= 0 && !*s)
                r = expected(p, "a target name");
        if (r >= 0) {
                e->name_mark = p->event.start_mark;
                e->t.name = xstrdup(s);
        }
        return r;
}

static const struct field target_fields[] = {
        { "name", FIELD_PARSE, 0, .parse = parse_target_name },
        { "launcher", FIELD_STRING, offsetof(struct target_entry, t.launcher) },
        { NULL },
};

static int parse_target(struct parser *p, struct config *c, struct keyset *names)
{
        yaml_mark_t start = p->event.start_mark;
        struct target_entry e = { .name_mark = start };
        struct config_target t;
        size_t path_len = p->path.len;
        int r;

        r = map_walk(p, target_fields, &e);
        t = e.t;
        path_truncate(p, path_len);
        if (r >= 0 && !t.name)
                r = error_at(p, &start, "'%s': missing key 'name'", p->path.buf);
        if (r >= 0 && !t.launcher)
                r = error_at(p, &start, "'%s': missing key 'launcher'", p->path.buf);
        if (r >= 0 && !keyset_add(names, t.name))
                r = error_at(p, &e.name_mark, "'%s.name': target '%s' is given twice", p->path.buf, t.name);
        if (r < 0) {
                free(t.name);
                free(t.launcher);
                return r;
        }
        /* Double the array each time its length reaches a power of two. */
        if ((c->validate.n_targets & (c->validate.n_targets - 1)) == 0)
                c->validate.targets = xreallocarray(c->validate.targets,
                                                    c->validate.n_targets ? 2 * c->validate.n_targets : 1,
                                                    sizeof(*c->validate.targets));
        c->validate.targets[c->validate.n_targets++] = t;
        return 0;
}

/* validate.targets: the list replaces the old one; names are unique. */
static int parse_targets(struct parser *p, void *obj)
{
        _cleanup_(keyset_release) struct keyset names = { 0 };
        struct config *c = obj;
        struct seq_iter si;
        int r;

        r = seq_begin(p, &si, "a list of targets ({name, launcher})");
        if (r < 0)
                return r;
        targets_release(c);
        while ((r = seq_next(p, &si)) > 0)
                if ((r = parse_target(p, c, &names)) < 0)
                        break;
        return r;
}

static const struct field validate_fields[] = {
        { "launcher", FIELD_STRING, offsetof(struct config, validate.launcher) },
        { "targets", FIELD_PARSE, 0, .parse = parse_targets },
        { "timeout", FIELD_UINT, offsetof(struct config, validate.timeout), 1, TIMEOUT_MAX },
        { "driver_libdir", FIELD_STRING, offsetof(struct config, validate.driver_libdir) },
        { "require_device", FIELD_BOOL, offsetof(struct config, validate.require_device) },
        { "compile", FIELD_BOOL, offsetof(struct config, validate.compile) },
        { NULL },
};

static int parse_validate(struct parser *p, void *obj)
{
        return map_walk(p, validate_fields, obj);
}

#define SEARCH_ENTRY "a path or {path: DIR, mount: true}"

/* A {path: DIR, mount: BOOL} root being read. */
struct search_entry {
        char *path;
        bool mount;
        bool optional;
};

static int parse_search_path(struct parser *p, void *field)
{
        char **path = field;
        const char *s;
        int r;

        r = get_string(p, "a non-empty path", &s);
        if (r >= 0 && !*s)
                r = expected(p, "a non-empty path");
        if (r >= 0) {
                free(*path);
                *path = xstrdup(s);
        }
        return r;
}

static const struct field search_entry_fields[] = {
        { "path", FIELD_PARSE, offsetof(struct search_entry, path), .parse = parse_search_path },
        { "mount", FIELD_BOOL, offsetof(struct search_entry, mount) },
        { "optional", FIELD_BOOL, offsetof(struct search_entry, optional) },
        { NULL },
};

/* One root of search: a path, or {path: DIR, mount: BOOL}. */
static int parse_search_entry(struct parser *p, struct config *c)
{
        struct search_entry e = { 0 };
        _cleanup_free_ char *path = NULL;
        yaml_mark_t start = p->event.start_mark;
        const char *s;
        int r;

        if (p->event.type == YAML_SCALAR_EVENT) {
                r = get_string(p, "a non-empty string", &s);
                if (r >= 0 && !*s)
                        r = expected(p, "a non-empty string");
                if (r >= 0)
                        strv_add(&c->search, s);
                return r;
        }
        if (p->event.type != YAML_MAPPING_START_EVENT)
                return expected(p, SEARCH_ENTRY);
        r = map_walk(p, search_entry_fields, &e);
        path = e.path;
        if (r < 0)
                return r;
        if (!path)
                return error_at(p, &start, "'%s': missing key 'path'", p->path.buf);
        strv_add(&c->search, path);
        if (e.mount && !strv_contains(&c->search_mounts, path))
                strv_add(&c->search_mounts, path);
        if (e.optional && !strv_contains(&c->search_optional, path))
                strv_add(&c->search_optional, path);
        return 0;
}

/* search: the roots, replacing the default's (or an earlier load's). */
static int parse_search(struct parser *p, void *obj)
{
        struct config *c = obj;
        struct seq_iter it;
        int r;

        r = seq_begin(p, &it, "a list of strings");
        if (r < 0)
                return r;
        strv_release(&c->search);
        strv_release(&c->search_mounts);
        strv_release(&c->search_optional);
        while ((r = seq_next(p, &it)) > 0)
                if ((r = parse_search_entry(p, c)) < 0)
                        return r;
        return r;
}

/* scan: jobs (0: one a CPU). */
static const struct field scan_fields[] = {
        { "jobs", FIELD_UINT, offsetof(struct config, scan_jobs), 0, CONFIG_SCAN_JOBS_MAX },
        { NULL },
};

static int parse_scan(struct parser *p, void *obj)
{
        return map_walk(p, scan_fields, obj);
}

static int parse_cuda_arch_list(struct parser *p, void *obj)
{
        struct config *c = obj;
        const yaml_mark_t m = p->event.start_mark;
        int r;

        r = set_string(p, &c->cuda_arch_list);
        /* The value goes into modules: the renderer's gate names it by its
         * place in this file. */
        free(c->cuda_arch_list_origin);
        c->cuda_arch_list_origin = xasprintf("%s:%u:%u: '%s'", p->file ? p->file : "<config>",
                                             (unsigned)m.line + 1, (unsigned)m.column + 1, p->path.buf);
        return r;
}

static const struct field pytorch_fields[] = {
        { "build_env", FIELD_BOOL, offsetof(struct config, pytorch_build_env) },
        { "cuda_arch_list", FIELD_PARSE, 0, .parse = parse_cuda_arch_list },
        { NULL },
};

static int parse_pytorch(struct parser *p, void *obj)
{
        return map_walk(p, pytorch_fields, obj);
}

/* exclude: a list of walk patterns, or a mapping of them ("paths") and of
 * each component's install patterns. */
static const struct field exclude_fields[] = {
        { "paths", FIELD_STRING_LIST, offsetof(struct config, exclude) },
#define X(name) COMPONENT_FIELD(name, FIELD_STRING_LIST, exclude_installs)
        COMPONENT_LIST(X)
#undef X
        { NULL },
};

static int parse_exclude(struct parser *p, void *obj)
{
        struct config *c = obj;

        if (p->event.type != YAML_MAPPING_START_EVENT)
                return parse_string_list(p, &c->exclude);
        return map_walk(p, exclude_fields, c);
}

/* defaults and ld_library_path: one value per component. */
static const struct field defaults_fields[] = {
#define X(name) COMPONENT_FIELD(name, FIELD_PARSE, defaults, .parse = parse_default)
        COMPONENT_LIST(X)
#undef X
        { NULL },
};

static const struct field ld_library_path_fields[] = {
#define X(name) COMPONENT_FIELD(name, FIELD_BOOL, ld_library_path)
        COMPONENT_LIST(X)
#undef X
        { NULL },
};

static int parse_defaults(struct parser *p, void *obj)
{
        return map_walk(p, defaults_fields, obj);
}

static int parse_ld_library_path(struct parser *p, void *obj)
{
        return map_walk(p, ld_library_path_fields, obj);
}

/* --- modulerc.<component>.<version> (lmod-api) ---
 * Each version key, alias and tag is a module version's characters
 * ([A-Za-z0-9._+-], not starting with '.'), so none can close a quote or
 * a bracket of the modulerc it goes into; the message is one line of text
 * that every reader keeps as data (written_value_problem: no control
 * character and no ']', which Lmod's tcl2lua would end its long string
 * with); it is written quoted, byte for byte. */
static int parse_name_list(struct parser *p, const char *what, const char *version, struct strv *list)
{
        struct seq_iter si;
        int r;

        strv_release(list);
        r = seq_begin(p, &si, what);
        while (r >= 0 && (r = seq_next(p, &si)) > 0) {
                const char *s;

                r = get_string(p, what, &s);
                if (r < 0)
                        return r;
                if (!module_version_valid(s) || streq(s, "default") || (version && streq(s, version)))
                        return error_at(p, &p->event.start_mark,
                                        "'%s': '%s' is not a valid %s name (letters, digits and . _ + -, "
                                        "not starting with '.'%s)",
                                        p->path.buf, s, what, version ? "; not 'default' nor the version itself" : "");
                strv_add(list, s);
        }
        return r;
}

static int parse_rc_aliases(struct parser *p, void *obj)
{
        struct config_version_rc *v = obj;

        return parse_name_list(p, "alias", v->version, &v->aliases);
}

static int parse_rc_tags(struct parser *p, void *field)
{
        return parse_name_list(p, "tag", NULL, field);
}

static int parse_rc_deprecated(struct parser *p, void *field)
{
        char **deprecated = field;
        const char *s, *why;
        size_t at;
        int r;

        r = get_string(p, "a message", &s);
        if (r < 0)
                return r;
        if (strchr(s, '\n'))
                return error_at(p, &p->event.start_mark, "'%s': a message on one line", p->path.buf);
        if ((why = written_value_problem(s, WRITTEN_TEXT, &at)))
                return error_at(p, &p->event.start_mark, "'%s': the message holds %s (byte %zu)", p->path.buf,
                                why, at + 1);
        if (!*s)
                return expected(p, "a message");
        free(*deprecated);
        *deprecated = xstrdup(s);
        return 0;
}

static const struct field version_rc_fields[] = {
        { "hide", FIELD_BOOL, offsetof(struct config_version_rc, hide) },
        { "aliases", FIELD_PARSE, 0, .parse = parse_rc_aliases },
        { "tags", FIELD_PARSE, offsetof(struct config_version_rc, tags), .parse = parse_rc_tags },
        { "deprecated", FIELD_PARSE, offsetof(struct config_version_rc, deprecated),
          .parse = parse_rc_deprecated },
        { NULL },
};

/* modulerc.<component>.<version>: the component's entries replace the
 * old ones (the index and the whole config, no row), the versions are any
 * keys: two loops of their own. */
static int parse_modulerc(struct parser *p, void *obj)
{
        _cleanup_(map_iter_release) struct map_iter it = { 0 };
        struct config *c = obj;
        int r;

        r = map_begin(p, &it, component_names);
        while (r >= 0 && (r = map_next(p, &it)) > 0) {
                _cleanup_(map_iter_release) struct map_iter vit = { 0 };

                /* A component given replaces its entries. */
                for (size_t i = 0; i < c->n_version_rcs;) {
                        if (c->version_rcs[i].component == (unsigned)it.index) {
                                version_rc_release(&c->version_rcs[i]);
                                memmove(&c->version_rcs[i], &c->version_rcs[i + 1],
                                        (c->n_version_rcs - i - 1) * sizeof(*c->version_rcs));
                                c->n_version_rcs--;
                        } else
                                i++;
                }
                r = map_begin(p, &vit, NULL);
                while (r >= 0 && (r = map_next(p, &vit)) > 0) {
                        struct config_version_rc *v;

                        if (!module_version_valid(vit.key)) {
                                _cleanup_free_ char *parent = xstrndup(p->path.buf, vit.path_len);
                                return error_at(p, &vit.key_mark,
                                                "'%s': '%s' is not a module version (letters, digits and "
                                                ". _ + -, not starting with '.')",
                                                parent, vit.key);
                        }
                        c->version_rcs = xreallocarray(c->version_rcs, c->n_version_rcs + 1,
                                                       sizeof(*c->version_rcs));
                        v = &c->version_rcs[c->n_version_rcs++];
                        *v = (struct config_version_rc){ .component = (unsigned)it.index,
                                                         .version = xstrdup(vit.key) };
                        r = map_walk(p, version_rc_fields, v);
                }
        }
        return r;
}
/* --- end of modulerc --- */

/* output_mode: the mode, in octal, of every file generate writes ("0644",
 * 0640): read and write bits only, and the owner reads and writes. */
static int parse_output_mode(struct parser *p, void *field)
{
        static const char what[] = "an octal file mode such as 0644 (read and write bits only, 0600 at least)";
        unsigned v = 0;
        const char *s;
        int r = get_string(p, what, &s);

        if (r < 0)
                return r;
        if (!*s || strlen(s) > 4)
                return expected(p, what);
        for (; *s; s++) {
                if (*s < '0' || *s > '7')
                        return expected(p, what);
                v = v * 8 + (unsigned)(*s - '0');
        }
        if ((v & ~0666u) || (v & 0600) != 0600)
                return expected(p, what);
        *(unsigned *)field = v;
        return 0;
}

/* output: "" is how config_to_yaml writes "no output". */
static int parse_output(struct parser *p, void *field)
{
        char **output = field;
        int r;

        r = set_string(p, output);
        if (r >= 0 && !**output) {
                free(*output);
                *output = NULL;
        }
        return r;
}

static int parse_format(struct parser *p, void *field)
{
        const char *s;
        int r;

        r = get_string(p, "lua or tcl", &s);
        if (r >= 0 && module_format_from_string(s) < 0)
                r = expected(p, "lua or tcl");
        if (r >= 0)
                *(enum module_format *)field = module_format_from_string(s);
        return r;
}

/* cuda_compat: off or auto (a word, not a boolean: "auto" is what the
 * module does, by the node's driver). */
static int parse_cuda_compat(struct parser *p, void *field)
{
        const char *s;
        int r;

        r = get_string(p, "off or auto", &s);
        if (r >= 0 && !streq(s, "off") && !streq(s, "auto"))
                r = expected(p, "off or auto");
        if (r >= 0)
                *(bool *)field = streq(s, "auto");
        return r;
}

static int parse_layout(struct parser *p, void *field)
{
        const char *s;
        int r;

        r = get_string(p, "hierarchical or flat", &s);
        if (r >= 0 && module_layout_from_string(s) < 0)
                r = expected(p, "hierarchical or flat");
        if (r >= 0)
                *(enum module_layout *)field = module_layout_from_string(s);
        return r;
}

static int parse_driver_check(struct parser *p, void *field)
{
        const char *s;
        int r;

        r = get_string(p, "off, warn or error", &s);
        if (r >= 0 && driver_check_from_string(s) < 0)
                r = expected(p, "off, warn or error");
        if (r >= 0)
                *(enum driver_check *)field = driver_check_from_string(s);
        return r;
}

/* The keys config-naming.c and config-site.c read. */
static int parse_naming_key(struct parser *p, void *obj)
{
        return parse_naming(p, obj);
}

static int parse_arch_key(struct parser *p, void *obj)
{
        return parse_arch(p, obj);
}

static int parse_family_key(struct parser *p, void *obj)
{
        return config_parse_family(p, obj);
}

static int parse_modulepath_key(struct parser *p, void *obj)
{
        return config_parse_modulepath(p, obj);
}

static int parse_lmod_key(struct parser *p, void *obj)
{
        return config_parse_lmod(p, obj);
}

/* The top-level keys, in the order `cudamod config` writes them (an unknown key's
 * message lists them so). */
static const struct field top_fields[] = {
        { "output", FIELD_PARSE, offsetof(struct config, output), .parse = parse_output },
        { "format", FIELD_PARSE, offsetof(struct config, format), .parse = parse_format },
        { "layout", FIELD_PARSE, offsetof(struct config, layout), .parse = parse_layout },
        { "driver_check", FIELD_PARSE, offsetof(struct config, driver_check), .parse = parse_driver_check },
        { "search", FIELD_PARSE, 0, .parse = parse_search },
        { "exclude", FIELD_PARSE, 0, .parse = parse_exclude },
        { "max_depth", FIELD_UINT, offsetof(struct config, max_depth), 1, MAX_DEPTH_MAX },
        { "defaults", FIELD_PARSE, 0, .parse = parse_defaults },
        { "naming", FIELD_PARSE, 0, .parse = parse_naming_key },
        { "ld_library_path", FIELD_PARSE, 0, .parse = parse_ld_library_path },
        { "stubs_on_library_path", FIELD_BOOL, offsetof(struct config, stubs_on_library_path) },
        { "cuda_compat", FIELD_PARSE, offsetof(struct config, cuda_compat), .parse = parse_cuda_compat },
        { "env", FIELD_PARSE, 0, .parse = parse_env },
        { "pytorch", FIELD_PARSE, 0, .parse = parse_pytorch },
        { "host_compiler", FIELD_PARSE, 0, .parse = parse_host_compiler },
        { "validate", FIELD_PARSE, 0, .parse = parse_validate },
        { "templates", FIELD_STRING, offsetof(struct config, templates) },
        { "lock_timeout", FIELD_UINT, offsetof(struct config, lock_timeout), 0, TIMEOUT_MAX },
        { "output_mode", FIELD_PARSE, offsetof(struct config, output_mode), .parse = parse_output_mode },
        { "modulerc", FIELD_PARSE, 0, .parse = parse_modulerc },
        { "family", FIELD_PARSE, 0, .parse = parse_family_key },
        { "modulepath", FIELD_PARSE, 0, .parse = parse_modulepath_key },
        { "lmod", FIELD_PARSE, 0, .parse = parse_lmod_key },
        { "scan", FIELD_PARSE, 0, .parse = parse_scan },
        { "arch", FIELD_PARSE, 0, .parse = parse_arch_key },
        { NULL },
};

static int parse_stream(struct parser *p, struct config *c)
{
        static const yaml_mark_t start = { 0 };
        int r;

        r = parser_next(p); /* stream start */
        if (r >= 0)
                r = parser_next(p);
        if (r < 0)
                return r;
        if (p->event.type == YAML_STREAM_END_EVENT)
                return error_at(p, &start, "holds no configuration; write '{}' for the built-in defaults");
        r = parser_next(p); /* the document's root */
        if (r < 0)
                return r;
        if (scalar_is_null(&p->event))
                return error_at(p, &start, "holds no configuration; write '{}' for the built-in defaults");
        if (p->event.type != YAML_MAPPING_START_EVENT) {
                _cleanup_free_ char *desc = describe(&p->event);
                return error_at(p, &p->event.start_mark, "the top level must be a mapping of keys, not %s",
                                desc);
        }
        return map_walk(p, top_fields, c);
}

int config_load_buffer(struct config *c, const char *buf, size_t len, const char *file,
                       struct diag *d)
{
        _cleanup_(parser_release) struct parser p = {
                .file = file ? file : "<config>",
                .buf = buf,
                .len = len,
                .path = STRBUF_INIT,
                .d = d,
        };
        _cleanup_(config_release) struct config tmp = { 0 };
        int r;

        if (len > CONFIG_MAX_SIZE)
                return diag_set(d, -EFBIG, p.file, 0, 0, "larger than 1 MiB, too large for a config");
        r = check_bytes(&p);
        if (r < 0)
                return r;
        parser_start(&p);
        r = check_stream(&p);
        if (r < 0)
                return r;
        parser_start(&p);
        config_copy(&tmp, c);
        r = parse_stream(&p, &tmp);
        if (r < 0)
                return r;
        free(tmp.file);
        tmp.file = xstrdup_or_null(file);
        config_release(c);
        *c = tmp;
        tmp = (struct config){ 0 };
        return 0;
}

int config_load(struct config *c, const char *path, struct diag *d)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        int r;

        r = strbuf_read_file(&sb, path, CONFIG_MAX_SIZE);
        if (r == -EFBIG)
                return diag_set(d, r, path, 0, 0, "larger than 1 MiB, too large for a config");
        if (r < 0)
                return diag_set(d, r, path, 0, 0, "cannot read the config: %s", strerror(-r));
        return config_load_buffer(c, sb.buf, sb.len, path, d);
}
