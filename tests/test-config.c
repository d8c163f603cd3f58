/* test-config.c: the site config: defaults, the YAML loader and its errors,
 * the YAML writer (round trips), naming templates, and `cudamod config`.
 *
 * Buffers handed to the loader are copied into allocations of exactly
 * their length (no NUL after them), so ASan and valgrind catch any read past
 * len. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>

#include "component-cuda.h"
#include "component-cudnn.h"
#include "component-magma.h"
#include "component-nccl.h"
#include "component.h"
#include "config.h"
#include "config-host.h"
#include "config-naming.h"
#include "config-site.h"
#include "config-write.h"
#include "plan-naming.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"
#include "util-path.h"

static int load_len(struct config *c, const char *text, size_t len, struct diag *d)
{
        _cleanup_free_ char *buf = xmalloc(len ? len : 1);

        memcpy(buf, text, len);
        return config_load_buffer(c, buf, len, "site.yaml", d);
}

static int load(struct config *c, const char *text, struct diag *d)
{
        return load_len(c, text, strlen(text), d);
}

static char *to_yaml(const struct config *c)
{
        struct strbuf sb = STRBUF_INIT;

        config_to_yaml(c, &sb);
        return strbuf_detach(&sb);
}

/* Load text over the default, failing the test on an error. */
static void load_ok(struct config *c, const char *text)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        int r;

        config_init_default(c);
        r = load(c, text, &d);
        ck_assert_msg(r == 0, "'%s' refused: %u:%u: %s", text, d.line, d.col,
                      d.message ? d.message : "(no message)");
}

/* A file in $TMPDIR holding len bytes of text; the caller unlinks it. */
static char *temp_file(const char *text, size_t len)
{
        const char *tmp = getenv("TMPDIR");
        char *path = xasprintf("%s/test-config-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
        ck_assert_int_eq(close(fd), 0);
        return path;
}

/* ---- the built-in default ---- */

START_TEST(config_default_has_documented_values)
{
        struct config c;

        config_init_default(&c);
        ck_assert_ptr_null(c.file);
        ck_assert_ptr_null(c.output);
        ck_assert_int_eq(c.format, FORMAT_LUA);
        ck_assert_int_eq(c.layout, MODULE_LAYOUT_HIERARCHICAL);
        ck_assert_uint_eq(c.search.len, 0);
        ck_assert_uint_eq(c.exclude.len, 0);
        ck_assert_uint_eq(c.max_depth, 8);
        ck_assert_uint_eq(c.lock_timeout, 60);
        ck_assert_uint_eq(c.output_mode, 0644);
        for (int i = 0; i < N_COMPONENTS; i++) {
                ck_assert_int_eq(c.defaults[i].kind, DEFAULT_LATEST);
                ck_assert_ptr_null(c.defaults[i].version);
                ck_assert(c.ld_library_path[i]);
                ck_assert_uint_eq(c.env[i].len, 0);
        }
        ck_assert_str_eq(c.naming[component_cuda.index], "{major}.{minor}");
        ck_assert_str_eq(c.naming[component_cudnn.index], "{major}.{minor}.{patch}");
        ck_assert_str_eq(c.naming[component_nccl.index], "{major}.{minor}.{patch}");
        ck_assert(c.stubs_on_library_path);
        /* Forward compatibility only where the config asks for it. */
        ck_assert(!c.cuda_compat);
        ck_assert(c.pytorch_build_env);
        ck_assert_uint_eq(c.validate.n_targets, 0);
        ck_assert_uint_eq(c.validate.timeout, 120);
        ck_assert(!c.validate.require_device);
        ck_assert(c.validate.compile);
        config_release(&c);
}
END_TEST

START_TEST(config_default_strings_are_empty_not_null)
{
        struct config c;

        config_init_default(&c);
        ck_assert_ptr_nonnull(c.cuda_arch_list);
        ck_assert_str_eq(c.cuda_arch_list, "");
        ck_assert_ptr_nonnull(c.validate.launcher);
        ck_assert_str_eq(c.validate.launcher, "");
        ck_assert_ptr_nonnull(c.validate.driver_libdir);
        ck_assert_str_eq(c.validate.driver_libdir, "");
        ck_assert_ptr_nonnull(c.templates);
        ck_assert_str_eq(c.templates, "");
        config_release(&c);
}
END_TEST

START_TEST(config_format_and_layout_names_round_trip)
{
        for (int i = 0; i < _FORMAT_MAX; i++)
                ck_assert_int_eq(module_format_from_string(module_format_to_string(i)), i);
        for (int i = 0; i < _MODULE_LAYOUT_MAX; i++)
                ck_assert_int_eq(module_layout_from_string(module_layout_to_string(i)), i);
        ck_assert_int_eq(module_format_from_string("Lua"), _FORMAT_INVALID);
        ck_assert_int_eq(module_format_from_string(NULL), _FORMAT_INVALID);
        ck_assert_int_eq(module_layout_from_string("tree"), _MODULE_LAYOUT_INVALID);
        ck_assert_ptr_null(module_format_to_string(_FORMAT_INVALID));
        ck_assert_ptr_null(module_layout_to_string(_MODULE_LAYOUT_MAX));
}
END_TEST

/* ---- loading ---- */

START_TEST(config_empty_mapping_means_defaults)
{
        _cleanup_free_ char *want = NULL, *got = NULL;
        struct config def, c;

        config_init_default(&def);
        load_ok(&c, "{}\n");
        want = to_yaml(&def);
        got = to_yaml(&c);
        ck_assert_str_eq(got, want);
        ck_assert_str_eq(c.file, "site.yaml");
        config_release(&def);
        config_release(&c);
}
END_TEST

START_TEST(config_overlay_replaces_given_keys_only)
{
        struct config c;

        load_ok(&c, "layout: flat\n"
                    "defaults: { cudnn: none }\n"
                    "ld_library_path: { nccl: false }\n"
                    "validate: { timeout: 30 }\n");
        ck_assert_int_eq(c.layout, MODULE_LAYOUT_FLAT);
        ck_assert_int_eq(c.format, FORMAT_LUA);
        ck_assert_int_eq(c.defaults[component_cuda.index].kind, DEFAULT_LATEST);
        ck_assert_int_eq(c.defaults[component_cudnn.index].kind, DEFAULT_NONE);
        ck_assert_int_eq(c.defaults[component_nccl.index].kind, DEFAULT_LATEST);
        ck_assert(c.ld_library_path[component_cuda.index]);
        ck_assert(c.ld_library_path[component_cudnn.index]);
        ck_assert(!c.ld_library_path[component_nccl.index]);
        ck_assert_uint_eq(c.validate.timeout, 30);
        ck_assert(c.validate.compile);
        ck_assert_uint_eq(c.max_depth, 8);
        config_release(&c);
}
END_TEST

START_TEST(config_lists_replace_on_a_second_load)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config c;

        load_ok(&c, "search: [/a, /b]\nexclude: ['*/x/*']\nenv: {cuda: {setenv: {A: '1'}}}\n");
        ck_assert_int_eq(load(&c, "search: [/c]\nenv: {cuda: {setenv: {B: '2'}}}\n", &d), 0);
        ck_assert_uint_eq(c.search.len, 1);
        ck_assert_str_eq(c.search.items[0], "/c");
        ck_assert_uint_eq(c.exclude.len, 1);
        ck_assert_str_eq(c.exclude.items[0], "*/x/*");
        ck_assert_uint_eq(c.env[component_cuda.index].len, 1);
        ck_assert_str_eq(c.env[component_cuda.index].items[0].name, "B");
        config_release(&c);
}
END_TEST

/* exclude: the list form is the walk's patterns; the mapping form has them
 * under "paths" and each component's install patterns under its name, and
 * writes back as it was read. */
/* A root is a path, or {path: DIR, mount: BOOL}; the writer gives the
 * marked ones back in the long form, in their place, and the rest as
 * strings. */
START_TEST(config_search_takes_paths_and_mount_roots)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *yaml = NULL;
        struct config c, back;

        load_ok(&c, "search:\n  - /a\n  - {path: /b, mount: true}\n  - {path: /c, mount: false}\n"
                    "  - path: /d\n  - {mount: yes, path: /e}\n");
        ck_assert_uint_eq(c.search.len, 5);
        for (size_t i = 0; i < 5; i++) {
                char want[] = { '/', (char)('a' + i), '\0' };
                ck_assert_str_eq(c.search.items[i], want);
        }
        ck_assert_uint_eq(c.search_mounts.len, 2);
        ck_assert_str_eq(c.search_mounts.items[0], "/b");
        ck_assert_str_eq(c.search_mounts.items[1], "/e");
        yaml = to_yaml(&c);
        ck_assert_msg(strstr(yaml, "search:\n- /a\n- path: /b\n  mount: true\n- /c\n- /d\n- path: /e\n  mount: true\n"),
                      "%s", yaml);
        config_init_default(&back);
        ck_assert_int_eq(load(&back, yaml, &d), 0);
        ck_assert_uint_eq(back.search.len, 5);
        ck_assert_uint_eq(back.search_mounts.len, 2);
        ck_assert_str_eq(back.search_mounts.items[1], "/e");
        /* A later load's list replaces both. */
        ck_assert_int_eq(load(&back, "search: [/z]\n", &d), 0);
        ck_assert_uint_eq(back.search.len, 1);
        ck_assert_uint_eq(back.search_mounts.len, 0);
        config_release(&back);
        config_release(&c);
}
END_TEST

/* {path: DIR, optional: true}: a root that may be absent (scan.h's
 * scan_roots_check); the plain string form stays, and both round-trip. */
START_TEST(config_search_takes_optional_roots)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *yaml = NULL;
        struct config c, back;

        load_ok(&c, "search: [/apps, {path: /scratch/cuda, optional: true}, {path: /m, mount: true, optional: true},"
                    " {path: /n, optional: false}]\n");
        ck_assert_uint_eq(c.search.len, 4);
        ck_assert_uint_eq(c.search_optional.len, 2);
        ck_assert_str_eq(c.search_optional.items[0], "/scratch/cuda");
        ck_assert_str_eq(c.search_optional.items[1], "/m");
        ck_assert_uint_eq(c.search_mounts.len, 1);
        yaml = to_yaml(&c);
        ck_assert_msg(strstr(yaml, "search:\n- /apps\n- path: /scratch/cuda\n  optional: true\n- path: /m\n  "
                                   "mount: true\n  optional: true\n- /n\n"),
                      "%s", yaml);
        config_init_default(&back);
        ck_assert_int_eq(load(&back, yaml, &d), 0);
        ck_assert_uint_eq(back.search_optional.len, 2);
        ck_assert_str_eq(back.search_optional.items[1], "/m");
        ck_assert_int_eq(load(&back, "search: [/z]\n", &d), 0);
        ck_assert_uint_eq(back.search_optional.len, 0);
        ck_assert_int_eq(load(&back, "search: [{path: /a, optional: maybe}]\n", &d), -EINVAL);
        config_release(&back);
        config_release(&c);
}
END_TEST

START_TEST(config_exclude_takes_walk_and_component_patterns)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *yaml = NULL;
        struct config c, again;

        load_ok(&c, "exclude: {paths: ['*/.snapshot/*'], cudnn: ['/apps/cudnn/8.*'], nccl: [/opt/nccl]}\n");
        ck_assert_uint_eq(c.exclude.len, 1);
        ck_assert_str_eq(c.exclude.items[0], "*/.snapshot/*");
        ck_assert_uint_eq(c.exclude_installs[component_cudnn.index].len, 1);
        ck_assert_str_eq(c.exclude_installs[component_cudnn.index].items[0], "/apps/cudnn/8.*");
        ck_assert_str_eq(c.exclude_installs[component_nccl.index].items[0], "/opt/nccl");
        ck_assert_uint_eq(c.exclude_installs[component_cuda.index].len, 0);
        yaml = to_yaml(&c);
        load_ok(&again, yaml);
        ck_assert_str_eq(again.exclude.items[0], "*/.snapshot/*");
        ck_assert_str_eq(again.exclude_installs[component_cudnn.index].items[0], "/apps/cudnn/8.*");
        ck_assert_str_eq(again.exclude_installs[component_nccl.index].items[0], "/opt/nccl");
        config_release(&again);
        config_release(&c);

        config_init_default(&c);
        ck_assert_int_lt(load(&c, "exclude: {cudart: [/x]}\n", &d), 0);
        ck_assert_msg(strstr(d.message, "unknown key 'exclude.cudart'"), "%s", d.message);
        config_release(&c);
}
END_TEST

START_TEST(config_plain_version_is_its_source_text)
{
        static const struct {
                const char *yaml;
                enum default_kind kind;
                const char *version;
        } t[] = {
                { "defaults: {cuda: 12.9}", DEFAULT_VERSION, "12.9" },
                { "defaults: {cuda: 12.10}", DEFAULT_VERSION, "12.10" },
                { "defaults: {cuda: 12.0}", DEFAULT_VERSION, "12.0" },
                { "defaults: {cuda: 12}", DEFAULT_VERSION, "12" },
                { "defaults: {cuda: \"12.9\"}", DEFAULT_VERSION, "12.9" },
                { "defaults: {cuda: '12.4.1'}", DEFAULT_VERSION, "12.4.1" },
                { "defaults: {cuda: 9.1.0-cuda12}", DEFAULT_VERSION, "9.1.0-cuda12" },
                { "defaults: {cuda: latest}", DEFAULT_LATEST, NULL },
                { "defaults: {cuda: \"none\"}", DEFAULT_NONE, NULL },
                { NULL },
        };

        for (size_t i = 0; t[i].yaml; i++) {
                struct config c;

                load_ok(&c, t[i].yaml);
                ck_assert_msg(c.defaults[component_cuda.index].kind == t[i].kind, "%s", t[i].yaml);
                if (t[i].version)
                        ck_assert_str_eq(c.defaults[component_cuda.index].version, t[i].version);
                else
                        ck_assert_ptr_null(c.defaults[component_cuda.index].version);
                config_release(&c);
        }
}
END_TEST

/* cuda_compat: the two words it takes. */
START_TEST(config_cuda_compat_is_off_or_auto)
{
        struct config c;

        load_ok(&c, "cuda_compat: auto\n");
        ck_assert(c.cuda_compat);
        config_release(&c);
        load_ok(&c, "cuda_compat: off\n");
        ck_assert(!c.cuda_compat);
        config_release(&c);
}
END_TEST

START_TEST(config_accepts_yaml11_booleans_in_any_case)
{
        static const struct {
                const char *word;
                bool value;
        } t[] = {
                { "true", true }, { "True", true }, { "TRUE", true }, { "yes", true }, { "Yes", true },
                { "on", true },   { "ON", true },   { "false", false }, { "False", false },
                { "no", false },  { "NO", false },  { "off", false }, { "Off", false }, { NULL },
        };

        for (size_t i = 0; t[i].word; i++) {
                _cleanup_free_ char *yaml = xasprintf("stubs_on_library_path: %s\n"
                                                      "validate: {require_device: %s}\n",
                                                      t[i].word, t[i].word);
                struct config c;

                load_ok(&c, yaml);
                ck_assert_msg(c.stubs_on_library_path == t[i].value, "%s", t[i].word);
                ck_assert_msg(c.validate.require_device == t[i].value, "%s", t[i].word);
                config_release(&c);
        }
}
END_TEST

START_TEST(config_strings_take_plain_and_quoted_forms)
{
        struct config c;

        load_ok(&c, "output: /apps/modulefiles\n"
                    "templates: 'my templates'\n"
                    "pytorch: {cuda_arch_list: 8.0;9.0}\n"
                    "validate:\n"
                    "  launcher: |\n"
                    "    srun -p gpu\n"
                    "  driver_libdir: \"/usr/lib/\\u00e9\"\n");
        ck_assert_str_eq(c.output, "/apps/modulefiles");
        ck_assert_str_eq(c.templates, "my templates");
        ck_assert_str_eq(c.cuda_arch_list, "8.0;9.0");
        ck_assert_str_eq(c.validate.launcher, "srun -p gpu\n");
        ck_assert_str_eq(c.validate.driver_libdir, "/usr/lib/\xc3\xa9");
        config_release(&c);
}
END_TEST

START_TEST(config_empty_output_means_none)
{
        struct config c;

        load_ok(&c, "output: ''\n");
        ck_assert_ptr_null(c.output);
        config_release(&c);
}
END_TEST

START_TEST(config_env_ops_keep_file_order)
{
        static const struct {
                enum env_op_kind kind;
                const char *name, *value;
        } want[] = {
                { ENV_OP_PREPEND_PATH, "PATH", "/a/bin" },
                { ENV_OP_PREPEND_PATH, "PATH", "/b/bin" },
                { ENV_OP_PREPEND_PATH, "CPATH", "/a/include" },
                { ENV_OP_SETENV, "SITE_CUDA", "1" },
                { ENV_OP_SETENV, "_X2", "" },
                { ENV_OP_APPEND_PATH, "MANPATH", "/a/man" },
                { ENV_OP_PUSHENV, "CUDA_MODULE_LOADING", "LAZY" },
                { ENV_OP_PUSHENV, "_X3", "" },
        };
        struct config c;
        const struct env_ops *o;

        load_ok(&c, "env:\n"
                    "  nccl:\n"
                    "    prepend_path:\n"
                    "      PATH: [/a/bin, /b/bin]\n"
                    "      CPATH: /a/include\n"
                    "    setenv: { SITE_CUDA: 1, _X2: '' }\n"
                    "    append_path: { MANPATH: /a/man }\n"
                    "    pushenv: { CUDA_MODULE_LOADING: LAZY, _X3: '' }\n");
        o = &c.env[component_nccl.index];
        ck_assert_uint_eq(o->len, ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                ck_assert_int_eq(o->items[i].kind, want[i].kind);
                ck_assert_str_eq(o->items[i].name, want[i].name);
                ck_assert_str_eq(o->items[i].value, want[i].value);
        }
        ck_assert_uint_eq(c.env[component_cuda.index].len, 0);
        config_release(&c);
}
END_TEST

START_TEST(config_validate_targets_are_read)
{
        struct config c;

        load_ok(&c, "validate:\n"
                    "  targets:\n"
                    "    - { name: h100, launcher: 'srun -p h100 --gres=gpu:1 -t 5' }\n"
                    "    - launcher: ''\n"
                    "      name: local\n");
        ck_assert_uint_eq(c.validate.n_targets, 2);
        ck_assert_str_eq(c.validate.targets[0].name, "h100");
        ck_assert_str_eq(c.validate.targets[0].launcher, "srun -p h100 --gres=gpu:1 -t 5");
        ck_assert_str_eq(c.validate.targets[1].name, "local");
        ck_assert_str_eq(c.validate.targets[1].launcher, "");
        config_release(&c);
}
END_TEST

START_TEST(config_accepts_bom_crlf_comments_and_document_markers)
{
        struct config c;

        load_ok(&c, "\xef\xbb\xbf# site config\r\n---\r\nformat: tcl # Environment Modules\r\n"
                    "max_depth: 64\r\n...\r\n");
        ck_assert_int_eq(c.format, FORMAT_TCL);
        ck_assert_uint_eq(c.max_depth, 64);
        config_release(&c);
}
END_TEST

START_TEST(config_load_reads_a_file_and_records_it)
{
        static const char text[] = "format: tcl\n";
        _cleanup_free_ char *path = temp_file(text, strlen(text));
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config c;

        config_init_default(&c);
        ck_assert_int_eq(config_load(&c, path, &d), 0);
        ck_assert_int_eq(c.format, FORMAT_TCL);
        ck_assert_str_eq(c.file, path);
        config_release(&c);
        unlink(path);
}
END_TEST

START_TEST(config_missing_file_reports_errno)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config c;

        config_init_default(&c);
        ck_assert_int_eq(config_load(&c, "/nonexistent/site.yaml", &d), -ENOENT);
        ck_assert_str_eq(d.file, "/nonexistent/site.yaml");
        ck_assert_uint_eq(d.line, 0);
        ck_assert_ptr_nonnull(strstr(d.message, "cannot read the config"));
        ck_assert_ptr_null(c.file);
        config_release(&c);
}
END_TEST

START_TEST(config_larger_than_1mib_is_refused)
{
        const size_t big = ((size_t)1 << 20) + 1;
        _cleanup_free_ char *text = xmalloc(big), *path = NULL;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config c;

        /* A comment line, then "{}": valid YAML, only too large. */
        memset(text, ' ', big);
        text[0] = '#';
        memcpy(text + big - 3, "\n{}", 3);
        config_init_default(&c);
        ck_assert_int_eq(load_len(&c, text, big, &d), -EFBIG);
        ck_assert_ptr_nonnull(strstr(d.message, "larger than 1 MiB"));
        ck_assert_uint_eq(d.line, 0);

        path = temp_file(text, big);
        ck_assert_int_eq(config_load(&c, path, &d), -EFBIG);
        ck_assert_str_eq(d.file, path);
        ck_assert_ptr_nonnull(strstr(d.message, "larger than 1 MiB"));
        unlink(path);

        /* Exactly 1 MiB is fine. */
        text[1] = '#';
        ck_assert_int_eq(load_len(&c, text + 1, big - 1, &d), 0);
        config_release(&c);
}
END_TEST

/* ---- errors ---- */

/* Why loading text does not fail as described, or NULL when it does. */
static char *error_mismatch(const char *name, const char *text, size_t len, unsigned line,
                            unsigned col, const char *msg)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config c;
        char *why = NULL;
        int r;

        config_init_default(&c);
        r = load_len(&c, text, len, &d);
        if (r != -EINVAL || !d.message)
                why = xasprintf("%s: returned %d (%s)", name, r, d.message ? d.message : "no message");
        else if (!d.file || !streq(d.file, "site.yaml"))
                why = xasprintf("%s: file '%s'", name, d.file ? d.file : "(null)");
        else if (d.line != line || d.col != col)
                why = xasprintf("%s: at %u:%u, want %u:%u (%s)", name, d.line, d.col, line, col, d.message);
        else if (!strstr(d.message, msg))
                why = xasprintf("%s: message '%s' lacks '%s'", name, d.message, msg);
        else if (d.message[strlen(d.message) - 1] == '.')
                why = xasprintf("%s: message '%s' ends with '.'", name, d.message);
        config_release(&c);
        return why;
}

START_TEST(config_errors_report_position_and_key)
{
        static const struct {
                const char *name;
                const char *yaml;
                size_t len; /* 0: strlen */
                unsigned line, col;
                const char *msg;
        } t[] = {
                /* unknown and duplicate keys */
                { "typo", "format: lua\nlayuot: flat\n", 0, 2, 1,
                  "unknown key 'layuot'; did you mean 'layout'?" },
                { "nested typo", "defaults:\n  cdua: latest\n", 0, 2, 3,
                  "unknown key 'defaults.cdua'; did you mean 'defaults.cuda'?" },
                { "duplicate", "format: lua\nlayout: flat\nformat: tcl\n", 0, 3, 1,
                  "duplicate key 'format'" },
                { "quoted duplicate", "format: lua\n'format': tcl\n", 0, 2, 1, "duplicate key 'format'" },
                { "nested duplicate", "naming: {cuda: '{major}', cuda: '{minor}'}\n", 0, 1, 27,
                  "duplicate key 'naming.cuda'" },
                { "duplicate variable", "env: {cuda: {setenv: {A: x, A: y}}}\n", 0, 1, 29,
                  "duplicate key 'env.cuda.setenv.A'" },
                { "list as key", "? [a]\n: b\n", 0, 1, 3, "a key must be a string, not a list" },
                /* wrong types */
                { "int word", "max_depth: deep\n", 0, 1, 12,
                  "'max_depth': expected an integer from 1 to 64, not 'deep'" },
                { "int quoted", "max_depth: \"8\"\n", 0, 1, 12,
                  "'max_depth': expected an integer from 1 to 64, not the string '8'" },
                { "int zero", "max_depth: 0\n", 0, 1, 12, "expected an integer from 1 to 64, not '0'" },
                { "int too big", "max_depth: 65\n", 0, 1, 12, "not '65'" },
                { "int overflow", "max_depth: 99999999999999999999999\n", 0, 1, 12, "from 1 to 64" },
                { "int octal", "max_depth: 010\n", 0, 1, 12, "not '010'" },
                { "int hex", "max_depth: 0x10\n", 0, 1, 12, "not '0x10'" },
                { "int negative", "max_depth: -1\n", 0, 1, 12, "not '-1'" },
                { "int float", "max_depth: 8.0\n", 0, 1, 12, "not '8.0'" },
                { "timeout range", "validate:\n  timeout: 86401\n", 0, 2, 12,
                  "'validate.timeout': expected an integer from 1 to 86400, not '86401'" },
                { "lock timeout range", "lock_timeout: 86401\n", 0, 1, 15,
                  "'lock_timeout': expected an integer from 0 to 86400, not '86401'" },
                { "output mode executable", "output_mode: 0755\n", 0, 1, 14,
                  "'output_mode': expected an octal file mode such as 0644 (read and write bits only, 0600 at "
                  "least), not '0755'" },
                { "output mode owner cannot write", "output_mode: \"0444\"\n", 0, 1, 14,
                  "expected an octal file mode such as 0644" },
                { "output mode setuid", "output_mode: 4644\n", 0, 1, 14, "not '4644'" },
                { "output mode decimal", "output_mode: 0648\n", 0, 1, 14, "not '0648'" },
                { "output mode long", "output_mode: 00644\n", 0, 1, 14, "not '00644'" },
                /* family, modulepath, lmod (config-site.c) */
                { "family not a list", "family: {cuda: CUDA}\n", 0, 1, 16,
                  "'family.cuda': expected a list of module names, not 'CUDA'" },
                { "family bad name", "family: {cuda: [cuda, 'CU DA']}\n", 0, 1, 23,
                  "'family.cuda[1]': expected a module name" },
                { "family code", "family: {cuda: ['a\")']}\n", 0, 1, 17, "expected a module name" },
                { "family twice", "family: {cuda: [CUDA, CUDA]}\n", 0, 1, 23,
                  "'family.cuda[1]': 'CUDA' is given twice" },
                { "family component", "family: {cdua: [x]}\n", 0, 1, 10, "did you mean 'family.cuda'?" },
                { "modulepath relative", "modulepath: [/a, b]\n", 0, 1, 19,
                  "'modulepath[1]': 'b' is not an absolute path" },
                { "spider cache half", "lmod: {spider_cache: {dir: /c}}\n", 0, 1, 22,
                  "'lmod.spider_cache': needs both 'dir' and 'timestamp'" },
                { "spider cache relative", "lmod: {spider_cache: {dir: c, timestamp: /t}}\n", 0, 1, 28,
                  "'lmod.spider_cache.dir': expected an absolute path, not 'c'" },
                { "spider cache word", "lmod: {spider_cache: maybe}\n", 0, 1, 22,
                  "'lmod.spider_cache': expected true, false or {dir: DIR, timestamp: FILE}" },
                { "cuda_compat word", "cuda_compat: yes\n", 0, 1, 14,
                  "'cuda_compat': expected off or auto, not 'yes'" },
                { "lmod extensions word", "lmod: {extensions: all}\n", 0, 1, 20,
                  "'lmod.extensions': expected true or false, not 'all'" },
                { "bool word", "stubs_on_library_path: maybe\n", 0, 1, 24,
                  "'stubs_on_library_path': expected true or false, not 'maybe'" },
                { "bool quoted", "pytorch: {build_env: 'yes'}\n", 0, 1, 22,
                  "'pytorch.build_env': expected true or false, not the string 'yes'" },
                { "bool null", "validate: {compile: }\n", 0, 1, 21,
                  "'validate.compile': expected true or false, not null" },
                { "string null", "output: ~\n", 0, 1, 9, "'output': expected a string, not null" },
                { "string empty plain", "templates:\n", 0, 1, 11,
                  "'templates': expected a string, not null" },
                { "string map", "output: {a: b}\n", 0, 1, 9, "'output': expected a string, not a mapping" },
                { "string list", "templates: [a]\n", 0, 1, 12, "'templates': expected a string, not a list" },
                { "format value", "format: lmod\n", 0, 1, 9, "'format': expected lua or tcl, not 'lmod'" },
                { "layout value", "layout: Flat\n", 0, 1, 9,
                  "'layout': expected hierarchical or flat, not 'Flat'" },
                { "search scalar", "search: /usr/local\n", 0, 1, 9,
                  "'search': expected a list of strings, not '/usr/local'" },
                { "search map", "search: {a: b}\n", 0, 1, 9,
                  "'search': expected a list of strings, not a mapping" },
                { "search item list", "search: [/a, [b]]\n", 0, 1, 14,
                  "'search[1]': expected a path or {path: DIR, mount: true}, not a list" },
                { "search mount word", "search: [/a, {path: /b, mount: maybe}]\n", 0, 1, 32,
                  "'search[1].mount': expected true or false, not 'maybe'" },
                { "search mount typo", "search:\n  - path: /b\n    mout: true\n", 0, 3, 5,
                  "unknown key 'search[0].mout'; did you mean 'search[0].mount'?" },
                { "search mount no path", "search:\n  - /a\n  - {mount: true}\n", 0, 3, 5,
                  "'search[1]': missing key 'path'" },
                { "search mount empty path", "search: [{path: '', mount: true}]\n", 0, 1, 17,
                  "'search[0].path': expected a non-empty path, not the string ''" },
                { "search mount path list", "search: [{path: [/a]}]\n", 0, 1, 17,
                  "'search[0].path': expected a non-empty path, not a list" },
                { "search mount twice", "search: [{path: /a, mount: true, mount: false}]\n", 0, 1, 34,
                  "duplicate key 'search[0].mount'" },
                { "search item empty", "search:\n  - /a\n  - ''\n", 0, 3, 5,
                  "'search[1]': expected a non-empty string, not the string ''" },
                { "exclude null item", "exclude: [a, ~]\n", 0, 1, 14,
                  "'exclude[1]': expected a non-empty string, not null" },
                { "defaults not map", "defaults: latest\n", 0, 1, 11,
                  "'defaults': expected a mapping, not 'latest'" },
                { "defaults word", "defaults:\n  cuda: newest\n", 0, 2, 9,
                  "'defaults.cuda': expected a version, 'latest' or 'none', not 'newest'" },
                { "defaults slash", "defaults: {nccl: 2.21/x}\n", 0, 1, 18,
                  "'defaults.nccl': expected a version, 'latest' or 'none', not '2.21/x'" },
                { "defaults null", "defaults: {cudnn: null}\n", 0, 1, 19,
                  "'defaults.cudnn': expected a version" },
                { "ld_library_path", "ld_library_path: {cuda: 1}\n", 0, 1, 25,
                  "'ld_library_path.cuda': expected true or false, not '1'" },
                { "long value is cut",
                  "format: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 0,
                  1, 9, "not 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'" },
                /* env */
                { "env component", "env: {cudart: {}}\n", 0, 1, 7,
                  "unknown key 'env.cudart'; did you mean 'env.cuda'?" },
                { "env kind", "env:\n  cuda:\n    prepend: {}\n", 0, 3, 5,
                  "unknown key 'env.cuda.prepend'; known keys: setenv, prepend_path, append_path, pushenv" },
                { "env variable name", "env: {cuda: {setenv: {SITE-CUDA: 1}}}\n", 0, 1, 23,
                  "'env.cuda.setenv': 'SITE-CUDA' is not a variable name" },
                { "env variable digit", "env: {cuda: {append_path: {1PATH: /x}}}\n", 0, 1, 28,
                  "'env.cuda.append_path': '1PATH' is not a variable name" },
                { "env setenv list", "env: {cuda: {setenv: {A: [x]}}}\n", 0, 1, 26,
                  "'env.cuda.setenv.A': expected a string, not a list" },
                { "env pushenv list", "env: {cuda: {pushenv: {A: [x]}}}\n", 0, 1, 27,
                  "'env.cuda.pushenv.A': expected a string, not a list" },
                { "env pushenv quote", "env: {cuda: {pushenv: {A: 'x\"y'}}}\n", 0, 1, 27,
                  "'env.cuda.pushenv.A': the value holds" },
                { "env path item", "env: {nccl: {prepend_path: {PATH: [/a, {b: c}]}}}\n", 0, 1, 40,
                  "'env.nccl.prepend_path.PATH[1]': expected a directory, not a mapping" },
                { "env path empty", "env: {nccl: {append_path: {PATH: ''}}}\n", 0, 1, 34,
                  "'env.nccl.append_path.PATH': expected a directory or a list of them, not the string ''" },
                { "env kind not map", "env: {cuda: {setenv: [A]}}\n", 0, 1, 22,
                  "'env.cuda.setenv': expected a mapping, not a list" },
                /* validate.targets */
                { "targets not list", "validate: {targets: {name: a}}\n", 0, 1, 21,
                  "'validate.targets': expected a list of targets" },
                { "target no launcher", "validate:\n  targets:\n    - name: h100\n", 0, 3, 7,
                  "'validate.targets[0]': missing key 'launcher'" },
                { "target no name", "validate:\n  targets:\n    - {launcher: x}\n", 0, 3, 7,
                  "'validate.targets[0]': missing key 'name'" },
                { "target empty name", "validate: {targets: [{name: '', launcher: x}]}\n", 0, 1, 29,
                  "'validate.targets[0].name': expected a target name, not the string ''" },
                { "target twice",
                  "validate: {targets: [{name: a, launcher: x}, {name: a, launcher: y}]}\n", 0, 1,
                  53, "'validate.targets[1].name': target 'a' is given twice" },
                { "target unknown key", "validate: {targets: [{name: a, launcher: x, nmae: b}]}\n", 0, 1, 45,
                  "unknown key 'validate.targets[0].nmae'; did you mean 'validate.targets[0].name'?" },
                /* naming templates */
                { "naming slash", "naming:\n  cuda: '{major}/{minor}'\n", 0, 2, 17,
                  "'naming.cuda': naming template '{major}/{minor}' has '/'" },
                { "naming space", "naming: {nccl: '{major} {minor}'}\n", 0, 1, 24,
                  "'naming.nccl': naming template '{major} {minor}' has a space" },
                { "naming placeholder", "naming: {cudnn: '{major}.{mnior}'}\n", 0, 1, 26,
                  "unknown placeholder '{mnior}'" },
                { "naming open brace", "naming: {cuda: '{major'}\n", 0, 1, 16, "has a '{' without a '}'" },
                { "naming close brace", "naming: {cuda: 'major}'}\n", 0, 1, 22, "has a '}' without a '{'" },
                { "naming leading dot", "naming: {cuda: '.{major}'}\n", 0, 1, 16,
                  "is not a valid module version" },
                { "naming empty", "naming: {cuda: ''}\n", 0, 1, 16,
                  "'naming.cuda': naming template is empty" },
                { "naming not string", "naming: {cuda: [a]}\n", 0, 1, 16,
                  "'naming.cuda': expected a naming template or a mapping of name and version, not a list" },
                { "naming name slash", "naming: {cudnn: {name: 'cu/dnn'}}\n", 0, 1, 27,
                  "'naming.cudnn.name': naming template 'cu/dnn' has '/', which a module name cannot hold" },
                { "naming name dollar", "naming: {cuda: {name: 'cu$da'}}\n", 0, 1, 26,
                  "'naming.cuda.name': naming template 'cu$da' has '$', which a module name cannot hold" },
                { "naming name quote", "naming: {cuda: {name: \"cu\\\"da\"}}\n", 0, 1, 23,
                  "has '\"', which a module name cannot hold" },
                { "naming version bracket", "naming: {cuda: '{major}[x]'}\n", 0, 1, 24,
                  "has '[', which a module version cannot hold" },
                { "naming name fact", "naming: {nccl: {name: 'nccl-{version}'}}\n", 0, 1, 29,
                  "a module name may use only {name}" },
                { "naming name leading dash", "naming: {nccl: {name: '-nccl'}}\n", 0, 1, 23,
                  "gives '-nccl', which is not a valid module name" },
                { "naming version name", "naming: {cuda: '{name}-{major}'}\n", 0, 1, 16,
                  "has '{name}', which only a module name may use" },
                { "naming level no major", "naming: {levels: {cuda: CUDA}}\n", 0, 1, 25,
                  "'naming.levels.cuda': the CUDA level 'CUDA' must hold {cuda_major}" },
                { "naming level fact", "naming: {levels: {cuda: 'CUDA/{cuda_version}'}}\n", 0, 1, 31,
                  "a level directory may use only {cuda_major}" },
                { "naming level dotdot", "naming: {levels: {cuda: 'x/../{cuda_major}'}}\n", 0, 1, 25,
                  "gives 'x/../12', which is not a valid level directory" },
                { "naming level empty part", "naming: {levels: {cuda: 'CUDA//{cuda_major}'}}\n", 0, 1, 25,
                  "which is not a valid level directory" },
                { "naming core placeholder", "naming: {levels: {core: 'Core{cuda_major}'}}\n", 0, 1, 25,
                  "'naming.levels.core': the core level 'Core{cuda_major}' is one directory" },
                { "naming levels nested", "naming: {levels: {core: CUDA, cuda: 'CUDA/{cuda_major}'}}\n", 0, 1, 9,
                  "'naming.levels': the core level 'CUDA' and the CUDA level 'CUDA/12' must not be" },
                { "naming names collide", "naming: {nccl: {name: CUDA}}\n", 0, 1, 9,
                  "'naming': cuda and nccl would both be named 'cuda' (and 'CUDA', the same but for case)" },
                { "naming preset collide", "naming: {preset: easybuild, cudnn: {name: NCCL}}\n", 0, 1, 9,
                  "'naming': cudnn and nccl would both be named 'NCCL'; give them different names" },
                { "naming preset unknown", "naming: easybuld\n", 0, 1, 9,
                  "'naming': expected a naming preset (cudamod, easybuild or spack), not 'easybuld'" },
                { "naming preset late", "naming: {cuda: '{major}', preset: spack}\n", 0, 1, 27,
                  "'naming.preset' must come first" },
                { "arch sbsa", "arch: sbsa\n", 0, 1, 7, "'arch': 'sbsa' is called 'aarch64' here" },
                { "arch unknown", "arch: mips\n", 0, 1, 7,
                  "'arch': expected an architecture (x86_64, aarch64 or ppc64le), not 'mips'" },
                /* the document */
                { "empty file", "", 0, 1, 1, "holds no configuration; write '{}' for the built-in defaults" },
                { "only comments", "# nothing\n\n# here\n", 0, 1, 1, "holds no configuration" },
                { "only whitespace", "  \n \n", 0, 1, 1, "holds no configuration" },
                { "document marker only", "---\n", 0, 1, 1, "holds no configuration" },
                { "explicit null", "null\n", 0, 1, 1, "holds no configuration" },
                { "top-level list", "- format: lua\n", 0, 1, 1,
                  "the top level must be a mapping of keys, not a list" },
                { "top-level scalar", "\n\nformat\n", 0, 3, 1,
                  "the top level must be a mapping of keys, not 'format'" },
                { "two documents", "format: lua\n---\nlayout: flat\n", 0, 2, 1,
                  "more than one YAML document" },
                { "second document after end", "format: lua\n...\n---\n", 0, 3, 1,
                  "more than one YAML document" },
                { "two documents after a schema error", "format: x\n---\n", 0, 2, 1,
                  "more than one YAML document" },
                { "anchor", "search: &roots [/a]\n", 0, 1, 9, "anchors and aliases are not supported" },
                { "alias", "search: [/a]\nexclude: *roots\n", 0, 2, 10,
                  "anchors and aliases are not supported" },
                { "anchor on a key", "&k format: lua\n", 0, 1, 1, "anchors and aliases are not supported" },
                { "merge key", "format: lua\n<<: {layout: flat}\n", 0, 2, 1, "unknown key '<<'" },
                { "core tag", "output: !!str /apps\n", 0, 1, 9, "tags are not supported: '!!str'" },
                { "local tag", "output: !path /apps\n", 0, 1, 9, "tags are not supported: '!path'" },
                { "tag on the top level", "!!map {format: lua}\n", 0, 1, 1,
                  "tags are not supported: '!!map'" },
                /* syntax */
                { "unclosed flow", "search: [/a, /b\nformat: lua\n", 0, 2, 7,
                  "syntax error: did not find expected ',' or ']' (while parsing a flow sequence at 1:9)" },
                { "unclosed quote", "output: \"/apps\n", 0, 2, 1,
                  "syntax error: found unexpected end of stream (while scanning a quoted scalar at 1:9)" },
                { "bad indentation", "format: lua\n  layout: flat\n", 0, 2, 9,
                  "syntax error: mapping values are not allowed in this context" },
                { "newline in an env value", "env:\n  cuda:\n    setenv: {X: \"a\\nid\"}\n", 0, 3, 17,
                  "'env.cuda.setenv.X': the value holds a control character" },
                { "colon in a path op", "env: {nccl: {prepend_path: {PATH: [\"/a:/b\"]}}}\n", 0, 1, 36,
                  "'env.nccl.prepend_path.PATH[0]': '/a:/b' holds ':'" },
                { "tab indentation", "validate:\n\ttimeout: 5\n", 0, 2, 1,
                  "syntax error: found character that cannot start any token" },
                { "syntax after schema error", "format: x\nsearch: [\n", 0, 3, 1, "syntax error" },
                { "bad escape", "output: \"\\q\"\n", 0, 1, 10,
                  "syntax error: found unknown escape character" },
                { "NUL escape", "output: \"a\\0b\"\n", 0, 1, 9, "strings must not hold a NUL character" },
                /* bytes */
                { "invalid UTF-8", "format: lua\nlayout: fl\xff" "at\n", 0, 2, 11,
                  "invalid UTF-8 (byte 0xff); a config is UTF-8 text" },
                { "columns count characters", "output: /\xc3\xa9\xc3\xa9/\xc0\xaf\n", 0, 1, 13,
                  "invalid UTF-8 (byte 0xc0)" },
                { "truncated UTF-8", "output: \xe2\x82", 0, 1, 9, "invalid UTF-8 (byte 0xe2)" },
                { "surrogate", "output: \xed\xa0\x80\n", 0, 1, 9, "invalid UTF-8 (byte 0xed)" },
                { "UTF-16 BOM", "\xff\xfe{\0}\0", 6, 1, 1, "invalid UTF-8 (byte 0xff)" },
                { "NUL byte", "format: lua\nlay\0out: flat\n", 26, 2, 4, "NUL byte; a config is UTF-8 text" },
                { "control character", "format: lua\nlayout: \x01\n", 0, 2, 9,
                  "invalid character: control characters are not allowed (U+0001)" },
                { "control character after BOM", "\xef\xbb\xbf\x7f", 0, 1, 1,
                  "invalid character: control characters are not allowed (U+007F)" },
                /* host_compiler */
                { "host compiler not absolute", "host_compiler:\n  \"11\": g++-11\n", 0, 2, 9,
                  "'host_compiler.11': 'g++-11' is not an absolute path" },
                { "host compiler not executable", "host_compiler: {\"11\": /etc/passwd}\n", 0, 1, 23,
                  "'host_compiler.11': '/etc/passwd' is not an executable file" },
                { "host compiler a directory", "host_compiler: {\"11\": /usr/bin}\n", 0, 1, 23,
                  "'host_compiler.11': '/usr/bin' is not an executable file" },
                { "host compiler missing", "host_compiler: {\"12\": /nonexistent/g++}\n", 0, 1, 23,
                  "'host_compiler.12': '/nonexistent/g++': No such file or directory" },
                { "host compiler blank", "host_compiler: {\"12\": \"/usr/bin/g++ -O2\"}\n", 0, 1, 23,
                  "holds a blank, a quote or a backslash" },
                { "host compiler key", "host_compiler: {cuda11: /usr/bin/gcc}\n", 0, 1, 17,
                  "'host_compiler': 'cuda11' is not a CUDA major version" },
                { "host compiler key zero", "host_compiler: {\"0\": /usr/bin/gcc}\n", 0, 1, 17,
                  "is not a CUDA major version" },
                { "host compiler twice", "host_compiler: {\"12\": /usr/bin/gcc, \"012\": /usr/bin/gcc}\n", 0, 1, 37,
                  "'host_compiler': CUDA 12 is given twice" },
                { "host compiler list", "host_compiler: {\"11\": [/usr/bin/gcc]}\n", 0, 1, 23,
                  "'host_compiler.11': expected a compiler path or {module: NAME}, not a list" },
                { "host compiler not a mapping", "host_compiler: /usr/bin/gcc\n", 0, 1, 16,
                  "'host_compiler': expected a mapping" },
                { "host compiler unknown key", "host_compiler: {\"11\": {modul: gcc/11}}\n", 0, 1, 24,
                  "unknown key 'host_compiler.11.modul'; did you mean 'host_compiler.11.module'?" },
                { "host compiler empty", "host_compiler: {\"11\": {}}\n", 0, 1, 23,
                  "'host_compiler.11': give 'module' (a module to depend on) or 'path' (the compiler)" },
                { "host compiler module name", "host_compiler: {\"11\": {module: \"gcc/11; rm -rf\"}}\n", 0, 1, 32,
                  "'host_compiler.11.module': 'gcc/11; rm -rf' is not a module name" },
                { "host compiler module path", "host_compiler: {\"11\": {module: gcc/11, path: bin/g++}}\n", 0, 1, 46,
                  "'host_compiler.11.path': 'bin/g++' is not an absolute path" },
                { NULL },
        };

        struct strbuf failures = STRBUF_INIT;

        /* All rows run; the failure lists every row that did not match. */
        for (size_t i = 0; t[i].name; i++) {
                _cleanup_free_ char *why = error_mismatch(t[i].name, t[i].yaml,
                                                          t[i].len ? t[i].len : strlen(t[i].yaml),
                                                          t[i].line, t[i].col, t[i].msg);
                if (why)
                        strbuf_addf(&failures, "\n  %s", why);
        }
        ck_assert_msg(failures.len == 0, "%s", failures.buf);
        strbuf_release(&failures);
}
END_TEST

START_TEST(config_unknown_key_suggests_the_nearest)
{
        static const struct {
                const char *yaml;
                const char *want; /* NULL: no suggestion, the known keys are listed */
        } t[] = {
                { "fromat: lua", "did you mean 'format'?" },
                { "Format: lua", "did you mean 'format'?" },
                { "max-depth: 3", "did you mean 'max_depth'?" },
                { "maxdepth: 3", "did you mean 'max_depth'?" },
                { "templtes: x", "did you mean 'templates'?" },
                { "default: {}", "did you mean 'defaults'?" },
                { "ld_library_paths: {}", "did you mean 'ld_library_path'?" },
                { "validate: {timout: 3}", "did you mean 'validate.timeout'?" },
                { "pytorch: {build-env: true}", "did you mean 'pytorch.build_env'?" },
                { "ld_library_path: {nnccl: true}", "did you mean 'ld_library_path.nccl'?" },
                { "o: x", NULL },
                { "modulepaths: [/x]", "did you mean 'modulepath'?" },
                { "family_names: {}", NULL },
                { "stubs: true", NULL },
                { NULL },
        };

        for (size_t i = 0; t[i].yaml; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                struct config c;

                config_init_default(&c);
                ck_assert_int_eq(load(&c, t[i].yaml, &d), -EINVAL);
                ck_assert_msg(startswith(d.message, "unknown key '"), "%s: %s", t[i].yaml, d.message);
                if (t[i].want)
                        ck_assert_msg(strstr(d.message, t[i].want), "%s: '%s' lacks '%s'", t[i].yaml,
                                      d.message, t[i].want);
                else
                        ck_assert_msg(!strstr(d.message, "did you mean") && strstr(d.message, "known keys: "),
                                      "%s: %s", t[i].yaml, d.message);
                config_release(&c);
        }
}
END_TEST

START_TEST(config_failed_load_leaves_config_unchanged)
{
        static const char *const bad[] = {
                /* every key valid until the last */
                "output: /apps\nformat: tcl\nlayout: flat\nsearch: [/x]\nexclude: [y]\nmax_depth: 3\n"
                "defaults: {cuda: none}\nnaming: {cuda: '{major}'}\nld_library_path: {cuda: false}\n"
                "stubs_on_library_path: false\nenv: {cuda: {setenv: {A: b}}}\n"
                "pytorch: {build_env: false, cuda_arch_list: '9.0'}\n"
                "validate: {launcher: srun, targets: [{name: a, launcher: b}], timeout: 5}\n"
                "templates: t\nbogus: 1\n",
                "validate: {targets: [{name: a, launcher: b}, {name: c}]}\n",
                "env: {cuda: {setenv: {A: b}, prepend_path: {PATH: [/a, '']}}}\n",
                "format: tcl\n---\n",
                "format: tcl\nlayout: \xff\n",
                NULL,
        };
        _cleanup_free_ char *before = NULL;
        struct config c;

        load_ok(&c, "format: lua\nsearch: [/keep]\nenv: {nccl: {setenv: {KEEP: '1'}}}\n"
                    "validate: {targets: [{name: keep, launcher: x}]}\n");
        before = to_yaml(&c);
        for (size_t i = 0; bad[i]; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_free_ char *after = NULL;

                ck_assert_int_eq(load(&c, bad[i], &d), -EINVAL);
                after = to_yaml(&c);
                ck_assert_msg(streq(before, after), "case %zu changed the config", i);
                ck_assert_str_eq(c.file, "site.yaml");
        }
        config_release(&c);
}
END_TEST

START_TEST(config_alias_bomb_is_refused_quickly)
{
        struct strbuf sb = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config c;

        /* "Billion laughs": ten levels of ten aliases each. */
        strbuf_addstr(&sb, "search: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (int i = 1; i < 10; i++) {
                strbuf_addf(&sb, "x%d: &a%d [", i, i);
                for (int k = 0; k < 10; k++)
                        strbuf_addf(&sb, "%s*a%d", k ? ", " : "", i - 1);
                strbuf_addstr(&sb, "]\n");
        }
        config_init_default(&c);
        /* Refused at the first anchor, before anything is expanded. */
        ck_assert_int_eq(load(&c, sb.buf, &d), -EINVAL);
        ck_assert_uint_eq(d.line, 1);
        ck_assert_uint_eq(d.col, 9);
        ck_assert_str_eq(d.message, "anchors and aliases are not supported");
        config_release(&c);
        strbuf_release(&sb);
}
END_TEST

START_TEST(config_deep_nesting_is_refused)
{
        struct strbuf flow = STRBUF_INIT, block = STRBUF_INIT;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config c;

        /* The top-level mapping is level 1, so the 16th '[' opens level 17. */
        strbuf_addstr(&flow, "search: ");
        for (int i = 0; i < 100; i++)
                strbuf_addch(&flow, '[');
        for (int i = 0; i < 100; i++)
                strbuf_addch(&flow, ']');
        strbuf_addch(&flow, '\n');
        for (int i = 0; i < 100; i++)
                strbuf_addf(&block, "%*sk%d:\n", 2 * i, "", i);
        strbuf_addf(&block, "%*sx\n", 200, "");

        config_init_default(&c);
        ck_assert_int_eq(load(&c, flow.buf, &d), -EINVAL);
        ck_assert_str_eq(d.message, "nesting deeper than 16 levels");
        ck_assert_uint_eq(d.line, 1);
        ck_assert_uint_eq(d.col, 8 + 16);
        ck_assert_int_eq(load(&c, block.buf, &d), -EINVAL);
        ck_assert_str_eq(d.message, "nesting deeper than 16 levels");
        ck_assert_uint_eq(d.line, 17);
        ck_assert_uint_eq(d.col, 2 * 16 + 1);
        config_release(&c);
        strbuf_release(&flow);
        strbuf_release(&block);
}
END_TEST

START_TEST(config_invalid_utf8_on_a_later_line_is_positioned)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct config c;

        config_init_default(&c);
        /* Line 4, after "templates: '" (12) and the euro sign (1). */
        ck_assert_int_eq(load(&c, "# caf\xc3\xa9\r\nformat: lua\r\n\r\n"
                                  "templates: '\xe2\x82\xac\x80'\r\n", &d),
                         -EINVAL);
        ck_assert_uint_eq(d.line, 4);
        ck_assert_uint_eq(d.col, 14);
        ck_assert_str_eq(d.message, "invalid UTF-8 (byte 0x80); a config is UTF-8 text");
        config_release(&c);
}
END_TEST

/* Item n of the huge config of kind k (see below). */
static void add_huge_item(struct strbuf *sb, size_t k, size_t n)
{
        if (k == 0)
                strbuf_addf(sb, "      V%zu: x\n", n);
        else if (k == 1)
                strbuf_addf(sb, "  - {name: t%zu, launcher: x}\n", n);
        else
                strbuf_addstr(sb, "      - /a\n");
}

/* Near 1 MiB of variables, targets or path entries: duplicate checks and
 * the writer must not be quadratic (that took minutes). */
START_TEST(config_huge_maps_and_lists_stay_fast)
{
        static const struct {
                const char *head;
                unsigned head_lines;
                const char *again; /* item 0 once more, or NULL */
                const char *msg;
        } t[] = {
                { "env:\n  cuda:\n    setenv:\n", 3, "      V0: y\n", "duplicate key 'env.cuda.setenv.V0'" },
                { "validate:\n  targets:\n", 2, "  - {name: t0, launcher: y}\n",
                  "target 't0' is given twice" },
                { "env:\n  cuda:\n    prepend_path:\n      PATH:\n", 4, NULL, NULL },
                { NULL },
        };
        /* Valgrind is slow; a tenth of the size still checks what it
         * checks there (leaks, bad reads). How fast a big config loads is
         * for a benchmark; here only the test case timeout bounds it. */
        size_t size = getenv("CUDAMOD_UNDER_VALGRIND") ? 100000 : 1000000;

        for (size_t i = 0; t[i].head; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_free_ char *yaml = NULL;
                struct strbuf sb = STRBUF_INIT;
                struct config c;
                size_t n = 0;

                strbuf_addstr(&sb, t[i].head);
                for (; sb.len < size; n++)
                        add_huge_item(&sb, i, n);
                config_init_default(&c);
                ck_assert_int_eq(load(&c, sb.buf, &d), 0);
                yaml = to_yaml(&c);
                ck_assert_uint_eq(t[i].again ? c.validate.n_targets + c.env[component_cuda.index].len
                                             : c.env[component_cuda.index].len,
                                  n);
                if (t[i].again) {
                        strbuf_addstr(&sb, t[i].again);
                        ck_assert_int_eq(load(&c, sb.buf, &d), -EINVAL);
                        ck_assert_uint_eq(d.line, t[i].head_lines + n + 1);
                        ck_assert_ptr_nonnull(strstr(d.message, t[i].msg));
                }
                config_release(&c);
                strbuf_release(&sb);
        }
}
END_TEST

/* ---- naming templates ---- */

START_TEST(naming_expand_fills_placeholders)
{
        static const struct version v4 = { .n = { 9, 1, 0, 70 }, .count = 4 };
        static const struct version v3 = { .n = { 2, 21, 5 }, .count = 3 };
        static const struct version v2 = { .n = { 12, 4 }, .count = 2 };
        static const struct version cuda2 = { .n = { 12, 6, 3 }, .count = 3 };
        static const struct version cuda1 = { .n = { 13 }, .count = 1 };
        static const struct {
                const char *tmpl;
                const struct version *v;
                const char *build;
                long cuda_major;
                const struct version *cuda;
                const char *want;
        } t[] = {
                { "{major}.{minor}", &v2, NULL, 12, NULL, "12.4" },
                { "{major}.{minor}.{patch}", &v3, NULL, -1, NULL, "2.21.5" },
                { "{major}.{minor}.{patch}.{build}", &v4, NULL, 12, NULL, "9.1.0.70" },
                { "{major}.{minor}.{patch}.{build}", &v3, "26", 12, NULL, "2.21.5.26" },
                { "{major}.{minor}.{patch}-cuda{cuda_major}", &v3, NULL, 12, NULL, "2.21.5-cuda12" },
                { "{major}.{minor}.{patch}+cuda{cuda}", &v3, NULL, 12, &cuda2, "2.21.5+cuda12.6" },
                { "{major}-cu{cuda}", &v3, NULL, 13, &cuda1, "2-cu13" },
                { "v{major}_{major}", &v2, NULL, -1, NULL, "v12_12" },
                { "latest", &v2, NULL, -1, NULL, "latest" },
                { NULL },
        };

        for (size_t i = 0; t[i].tmpl; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_free_ char *got = NULL;
                int r = plan_naming_expand_version(t[i].tmpl, t[i].v, t[i].build, t[i].cuda_major, t[i].cuda,
                                                   &got, &d);

                ck_assert_msg(r == 0, "'%s': %s", t[i].tmpl, d.message);
                ck_assert_str_eq(got, t[i].want);
        }
}
END_TEST

START_TEST(naming_expand_reports_missing_parts)
{
        static const struct version v2 = { .n = { 12, 4 }, .count = 2 };
        static const struct version v3 = { .n = { 8, 9, 7 }, .count = 3 };
        static const struct version none = { .count = 0 };
        static const struct {
                const char *tmpl;
                const struct version *v;
                long cuda_major;
                const char *want;
        } t[] = {
                { "{major}.{minor}.{patch}", &v2, 12,
                  "naming template '{major}.{minor}.{patch}' needs a patch version, and 12.4 has none" },
                { "{major}.{minor}.{patch}.{build}", &v3, 12,
                  "naming template '{major}.{minor}.{patch}.{build}' needs a build number, "
                  "and 8.9.7 has none" },
                { "{major}-cuda{cuda_major}", &v3, -1,
                  "naming template '{major}-cuda{cuda_major}' needs the CUDA major version, "
                  "and it is unknown "
                  "for 8.9.7" },
                { "{major}+{cuda}", &v3, -1,
                  "naming template '{major}+{cuda}' needs the CUDA version, and it is unknown for 8.9.7" },
                { "{major}", &none, 12,
                  "naming template '{major}' needs a major version, and an unknown version has none" },
                { NULL },
        };

        for (size_t i = 0; t[i].tmpl; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                char *got = (char *)"untouched";

                ck_assert_int_eq(plan_naming_expand_version(t[i].tmpl, t[i].v, NULL, t[i].cuda_major, NULL,
                                                            &got, &d),
                                 -EINVAL);
                ck_assert_str_eq(d.message, t[i].want);
                ck_assert_str_eq(got, "untouched");
        }
}
END_TEST

START_TEST(naming_expand_rejects_bad_templates)
{
        static const struct version v = { .n = { 12, 4, 1 }, .count = 3 };
        static const struct {
                const char *tmpl;
                const char *build;
                const char *want;
        } t[] = {
                { "", NULL, "naming template is empty" },
                { "{Major}", NULL, "unknown placeholder '{Major}'" },
                { "{}", NULL, "unknown placeholder '{}'" },
                { "{major", NULL, "has a '{' without a '}'" },
                { "{maj{or}", NULL, "unknown placeholder '{maj{or}'" },
                { "major}", NULL, "has a '}' without a '{'" },
                { "{major}/{minor}", NULL, "has '/', which a module version cannot hold" },
                { "{major}:{minor}", NULL, "has ':'" },
                { "{major}\t", NULL, "has a space, control or non-ASCII character" },
                { "{major}\xc3\xa9", NULL, "non-ASCII" },
                { ".{major}", NULL, "gives '.12', which is not a valid module version" },
                { "{build}", "7/8", "gives '7/8', which is not a valid module version" },
                { NULL },
        };

        for (size_t i = 0; t[i].tmpl; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                char *got = NULL;

                ck_assert_int_eq(plan_naming_expand_version(t[i].tmpl, &v, t[i].build, 12, NULL, &got, &d), -EINVAL);
                ck_assert_msg(strstr(d.message, t[i].want), "'%s': '%s' lacks '%s'", t[i].tmpl, d.message,
                              t[i].want);
                ck_assert_ptr_null(got);
        }
        ck_assert_int_eq(plan_naming_expand_version("{major}/", &v, NULL, 12, NULL, &(char *){ NULL }, NULL), -EINVAL);
}
END_TEST

/* ---- writing ---- */

/* c written, read back and written again gives the same bytes; the
 * config read back goes to ret_back when not NULL. */
static void assert_round_trip(const struct config *c, struct config *ret_back)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *first = to_yaml(c), *second = NULL;
        struct config back;
        int r;

        config_init_default(&back);
        r = load(&back, first, &d);
        ck_assert_msg(r == 0, "output refused at %u:%u: %s\n%s", d.line, d.col, d.message, first);
        second = to_yaml(&back);
        ck_assert_msg(streq(first, second), "round trip differs:\n%s\n----\n%s", first, second);
        if (ret_back)
                *ret_back = back;
        else
                config_release(&back);
}

/* modulerc.<component>.<version> (lmod-api): read, replaced per
 * component, round-tripped; hostile names refused where they stand. */
START_TEST(config_modulerc_loads_and_round_trips)
{
        struct config c;
        const struct config_version_rc *v;
        static const struct {
                const char *yaml;
                unsigned line, col;
                const char *msg;
        } bad[] = {
                { "modulerc: {cuda: {'12.9\"': {hide: true}}}\n", 1, 19, "'12.9\"' is not a module version" },
                { "modulerc:\n  cuda:\n    '12.9':\n      aliases: ['a]b']\n", 4, 17, "'a]b' is not a valid alias name" },
                { "modulerc:\n  cuda:\n    '12.9':\n      aliases: [default]\n", 4, 17, "'default' is not a valid alias name" },
                { "modulerc:\n  cuda:\n    '12.9':\n      aliases: ['12.9']\n", 4, 17, "is not a valid alias name" },
                { "modulerc:\n  cuda:\n    '12.9':\n      tags: ['$x']\n", 4, 14, "'$x' is not a valid tag name" },
                { "modulerc:\n  cuda:\n    '12.9':\n      deprecated: \"a\\nb\"\n", 4, 19, "a message on one line" },
                { "modulerc:\n  cuda:\n    '12.9':\n      hide: maybe\n", 4, 13, "expected" },
                { "modulerc:\n  cuda:\n    '12.9':\n      hidden: true\n", 4, 7, "unknown key" },
                { "modulerc:\n  cdua: {}\n", 2, 3, "unknown key" },
        };

        load_ok(&c, "modulerc:\n  cuda:\n    '11.8': {hide: true, deprecated: 'use \"cuda/12.9\" (now) $X \\\\ [x'}\n"
                    "    '12.9': {aliases: [latest, stable], tags: [lts]}\n  nccl:\n    '2.21.5': {hide: yes}\n");
        ck_assert_uint_eq(c.n_version_rcs, 3);
        v = config_version_rc(&c, 0, "11.8");
        ck_assert_ptr_nonnull(v);
        ck_assert(v->hide);
        ck_assert_str_eq(v->deprecated, "use \"cuda/12.9\" (now) $X \\\\ [x");
        v = config_version_rc(&c, 0, "12.9");
        ck_assert_ptr_nonnull(v);
        ck_assert(!v->hide);
        ck_assert_uint_eq(v->aliases.len, 2);
        ck_assert_str_eq(v->aliases.items[1], "stable");
        ck_assert_str_eq(v->tags.items[0], "lts");
        ck_assert_ptr_null(config_version_rc(&c, 0, "12.4"));
        assert_round_trip(&c, NULL);
        /* a second file's cuda replaces cuda's entries, keeps nccl's */
        ck_assert_int_eq(load(&c, "modulerc: {cuda: {'12.4': {hide: true}}}\n", NULL), 0);
        ck_assert_uint_eq(c.n_version_rcs, 2);
        ck_assert_ptr_null(config_version_rc(&c, 0, "11.8"));
        ck_assert_ptr_nonnull(config_version_rc(&c, 0, "12.4"));
        config_release(&c);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                config_init_default(&c);
                ck_assert_int_eq(load(&c, bad[i].yaml, &d), -EINVAL);
                ck_assert_msg(d.line == bad[i].line && d.col == bad[i].col && strstr(d.message, bad[i].msg),
                              "%zu: got %u:%u: %s", i, d.line, d.col, d.message);
                ck_assert_uint_eq(c.n_version_rcs, 0);
                config_release(&c);
        }
}
END_TEST

START_TEST(config_to_yaml_round_trips_the_default)
{
        struct config c;

        config_init_default(&c);
        assert_round_trip(&c, NULL);
        config_release(&c);
}
END_TEST


START_TEST(config_to_yaml_round_trips_every_key_with_odd_strings)
{
        static const char *const odd[] = {
                "12.9", "true", "no", "~", "null", "", " leading space", "trailing space ", "a: b",
                "# not a comment", "x #y", "'single'", "\"double\"", "line\nbreak", "two\n\nbreaks\n",
                "tab\there", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "- dash", "[flow]", "{flow}",
                "*star", "&amp", "!bang", "%percent", "@at", "`tick", "|pipe", ">gt", "?q", "0x10",
                "-1", ".5", ".inf", "<<", "=", "back\\slash", "ctl\x01x", "\xc2\x85nel",
                NULL,
        };
        struct config c;

        load_ok(&c, "output: /apps/modulefiles\n"
                    "format: tcl\n"
                    "layout: flat\n"
                    "search: [/usr/local, /opt/nvidia/hpc_sdk]\n"
                    "exclude: ['*/.snapshot/*']\n"
                    "max_depth: 4\n"
                    "defaults: {cuda: '12.9', cudnn: none, nccl: 2.21.5-cuda12}\n"
                    "naming: {cuda: '{major}.{minor}.{patch}', cudnn: 'v{major}+{cuda}', "
                    "nccl: '{major}.{minor}.{patch}-cuda{cuda_major}'}\n"
                    "ld_library_path: {cuda: false, cudnn: true, nccl: false}\n"
                    "stubs_on_library_path: false\n"
                    "env:\n"
                    "  cuda:\n"
                    "    append_path: {MANPATH: /m}\n"
                    "    prepend_path: {PATH: [/a, /b], CPATH: /c}\n"
                    "    setenv: {SITE_CUDA: '1'}\n"
                    "  nccl: {setenv: {NCCL_DEBUG: WARN}, pushenv: {NCCL_HOME: /n}}\n"
                    "pytorch: {build_env: false, cuda_arch_list: '8.0;9.0'}\n"
                    "validate:\n"
                    "  launcher: srun -p gpu --gres=gpu:1 -t 5\n"
                    "  targets: [{name: h100, launcher: 'srun -p h100'}, {name: local, launcher: ''}]\n"
                    "  timeout: 86400\n"
                    "  driver_libdir: /usr/lib64/nvidia\n"
                    "  require_device: true\n"
                    "  compile: false\n"
                    "templates: site-templates\n");
        assert_round_trip(&c, NULL);

        /* Every odd string in every string field and as an env value, read
         * back as the same string. */
        for (size_t i = 0; odd[i]; i++) {
                struct config back;

                free(c.templates);
                c.templates = xstrdup(odd[i]);
                free(c.cuda_arch_list);
                c.cuda_arch_list = xstrdup(odd[i]);
                free(c.validate.launcher);
                c.validate.launcher = xstrdup(odd[i]);
                free(c.validate.driver_libdir);
                c.validate.driver_libdir = xstrdup(odd[i]);
                free(c.validate.targets[1].launcher);
                c.validate.targets[1].launcher = xstrdup(odd[i]);
                strv_add(&c.exclude, *odd[i] ? odd[i] : "x");
                /* A value some reader of a modulefile would take as code
                 * is refused (see config_errors_report_position_and_key). */
                free(c.env[component_nccl.index].items[0].value);
                c.env[component_nccl.index].items[0].value =
                        xstrdup(written_value_problem(odd[i], WRITTEN_WORD, NULL) ? "x" : odd[i]);
                if (*odd[i]) {
                        free(c.output);
                        c.output = xstrdup(odd[i]);
                }
                assert_round_trip(&c, &back);
                ck_assert_str_eq(back.templates, odd[i]);
                ck_assert_str_eq(back.cuda_arch_list, odd[i]);
                ck_assert_str_eq(back.validate.launcher, odd[i]);
                ck_assert_str_eq(back.validate.driver_libdir, odd[i]);
                ck_assert_str_eq(back.validate.targets[1].launcher, odd[i]);
                ck_assert_str_eq(back.exclude.items[back.exclude.len - 1], *odd[i] ? odd[i] : "x");
                ck_assert_str_eq(back.env[component_nccl.index].items[0].value,
                                 written_value_problem(odd[i], WRITTEN_WORD, NULL) ? "x" : odd[i]);
                if (*odd[i])
                        ck_assert_str_eq(back.output, odd[i]);
                config_release(&back);
        }
        config_release(&c);
}
END_TEST

/* Presets set names, versions and levels; the keys after them change
 * some; the writer writes what they came to, and it reads back so. */
START_TEST(config_naming_presets_load_and_round_trip)
{
        struct config c, back;
        _cleanup_free_ char *yaml = NULL;
        struct diag d = DIAG_INIT;

        load_ok(&c, "naming: easybuild\n");
        ck_assert_str_eq(c.module_name[component_cuda.index], "CUDA");
        ck_assert_str_eq(c.module_name[component_cudnn.index], "cuDNN");
        ck_assert_str_eq(c.module_name[component_magma.index], "magma");
        ck_assert_str_eq(c.naming[component_cuda.index], "{version_full}");
        ck_assert_str_eq(c.naming[component_nccl.index], "{version_full}-CUDA-{cuda_full}");
        ck_assert_str_eq(c.naming[component_cudnn.index], "{version_full}-CUDA-{cuda_full}");
        /* `cudamod config` says what it cannot honour: the toolchain part. */
        ck_assert_ptr_nonnull(naming_preset_note(&c));
        ck_assert_ptr_nonnull(strstr(naming_preset_note(&c), "GCCcore-13.3.0"));
        config_release(&c);
        load_ok(&c, "naming: spack\n");
        ck_assert_ptr_null(naming_preset_note(&c));
        ck_assert_str_eq(c.module_name[component_cudnn.index], "{name}");
        ck_assert_str_eq(c.naming[component_cudnn.index], "{version_full}-{cuda_version}");
        ck_assert_str_eq(c.naming[component_nccl.index], "{version_full}");
        config_release(&c);

        load_ok(&c, "naming:\n"
                    "  preset: easybuild\n"
                    "  levels: {core: base, cuda: 'gpu/cuda{cuda_major}'}\n"
                    "  nccl: {name: NCCL, version: '{version}-GCCcore-13.3.0-CUDA-{cuda_version}'}\n"
                    "  cuda: '{major}.{minor}'\n"
                    "arch: aarch64\n");
        ck_assert_str_eq(c.module_name[component_cuda.index], "CUDA");
        ck_assert_str_eq(c.naming[component_cuda.index], "{major}.{minor}");
        ck_assert_str_eq(c.level_core, "base");
        ck_assert_str_eq(c.arch, "aarch64");
        yaml = to_yaml(&c);
        config_init_default(&back);
        ck_assert_msg(config_load_buffer(&back, yaml, strlen(yaml), "<yaml>", &d) == 0, "%s\n%s", d.message, yaml);
        for (size_t i = 0; i < N_COMPONENTS; i++) {
                ck_assert_str_eq(back.naming[i], c.naming[i]);
                ck_assert_str_eq(back.module_name[i], c.module_name[i]);
        }
        ck_assert_str_eq(back.level_core, "base");
        ck_assert_str_eq(back.level_cuda, "gpu/cuda{cuda_major}");
        ck_assert_str_eq(back.arch, "aarch64");
        {
                _cleanup_free_ char *name = plan_module_name(&back, &component_nccl);
                _cleanup_free_ char *level = plan_level(&back, 12);
                ck_assert_str_eq(name, "NCCL");
                ck_assert_str_eq(level, "gpu/cuda12");
        }
        config_release(&back);
        config_release(&c);
}
END_TEST

START_TEST(config_host_compiler_loads_and_round_trips)
{
        struct config c, back;
        const struct config_host_compiler *h;
        _cleanup_free_ char *yaml = NULL;
        struct diag d = DIAG_INIT;

        load_ok(&c, "host_compiler:\n"
                    "  \"11\": /bin/sh\n"
                    "  \"12\": {module: gcc/12}\n"
                    "  \"13\": {module: GCCcore/13.3.0, path: /bin/sh}\n");
        h = config_host_compiler(&c, 11);
        ck_assert_ptr_nonnull(h);
        ck_assert_str_eq(h->path, "/bin/sh");
        ck_assert_ptr_null(h->module);
        h = config_host_compiler(&c, 12);
        ck_assert_str_eq(h->module, "gcc/12");
        ck_assert_ptr_null(h->path);
        h = config_host_compiler(&c, 13);
        ck_assert_str_eq(h->module, "GCCcore/13.3.0");
        ck_assert_str_eq(h->path, "/bin/sh");
        ck_assert_ptr_null(config_host_compiler(&c, 10));

        yaml = to_yaml(&c);
        config_init_default(&back);
        ck_assert_msg(config_load_buffer(&back, yaml, strlen(yaml), "<yaml>", &d) == 0, "%s\n%s", d.message, yaml);
        ck_assert_uint_eq(back.n_host_compilers, 3);
        ck_assert_str_eq(config_host_compiler(&back, 13)->module, "GCCcore/13.3.0");
        ck_assert_str_eq(config_host_compiler(&back, 13)->path, "/bin/sh");
        ck_assert_str_eq(config_host_compiler(&back, 11)->path, "/bin/sh");
        ck_assert_ptr_null(config_host_compiler(&back, 11)->module);
        config_release(&back);
        config_release(&c);
        diag_release(&d);
}
END_TEST

START_TEST(config_to_yaml_keeps_strings_strings)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *yaml = NULL;
        struct config c, back;

        config_init_default(&c);
        free(c.validate.launcher);
        c.validate.launcher = xstrdup("true");
        free(c.cuda_arch_list);
        c.cuda_arch_list = xstrdup("9.0");
        free(c.output);
        c.output = xstrdup("12.9");
        yaml = to_yaml(&c);
        ck_assert_ptr_nonnull(strstr(yaml, "output: '12.9'\n"));
        ck_assert_ptr_nonnull(strstr(yaml, "  launcher: 'true'\n"));
        ck_assert_ptr_nonnull(strstr(yaml, "  cuda_arch_list: '9.0'\n"));
        ck_assert_ptr_nonnull(strstr(yaml, "stubs_on_library_path: true\n"));
        ck_assert_ptr_nonnull(strstr(yaml, "max_depth: 8\n"));

        config_init_default(&back);
        ck_assert_int_eq(load(&back, yaml, &d), 0);
        ck_assert_str_eq(back.validate.launcher, "true");
        ck_assert_str_eq(back.cuda_arch_list, "9.0");
        ck_assert_str_eq(back.output, "12.9");
        config_release(&back);
        config_release(&c);
}
END_TEST

/* output_mode: octal, quoted or not, and back the same. */
START_TEST(config_output_mode_loads_and_round_trips)
{
        _cleanup_free_ char *yaml = NULL;
        struct config c, back;

        load_ok(&c, "output_mode: 0640\n");
        ck_assert_uint_eq(c.output_mode, 0640);
        yaml = to_yaml(&c);
        ck_assert_msg(strstr(yaml, "output_mode: '0640'") || strstr(yaml, "output_mode: \"0640\""), "%s", yaml);
        load_ok(&back, yaml);
        ck_assert_uint_eq(back.output_mode, 0640);
        config_release(&back);
        config_release(&c);
        load_ok(&c, "output_mode: \"600\"\n");
        ck_assert_uint_eq(c.output_mode, 0600);
        config_release(&c);
}
END_TEST

START_TEST(config_site_keys_load_and_round_trip)
{
        _cleanup_free_ char *yaml = NULL;
        struct config c, back;

        config_init_default(&c);
        ck_assert_uint_eq(c.family[0].len, 1);
        ck_assert_str_eq(c.family[0].items[0], "cuda");
        ck_assert(!config_spider_cache_enabled(&c));
        ck_assert(!c.lmod_extensions);
        config_release(&c);
        load_ok(&c, "family: {cuda: [cuda, CUDA, CUDA/12.4.0], nccl: []}\n"
                    "modulepath: [/apps/eb/modules/all]\n"
                    "lmod: {spider_cache: {dir: /apps/lmod/cache, timestamp: /apps/lmod/cache/ts.txt}}\n");
        ck_assert_uint_eq(c.family[0].len, 3);
        ck_assert_str_eq(c.family[0].items[1], "CUDA");
        ck_assert_str_eq(c.family[0].items[2], "CUDA/12.4.0");
        ck_assert_uint_eq(c.family[2].len, 0);
        ck_assert_str_eq(c.family[1].items[0], "cudnn");
        ck_assert_str_eq(c.modulepath.items[0], "/apps/eb/modules/all");
        ck_assert(config_spider_cache_enabled(&c));
        ck_assert(!c.spider_cache.from_lmodrc);
        ck_assert_str_eq(c.spider_cache.timestamp, "/apps/lmod/cache/ts.txt");
        yaml = to_yaml(&c);
        load_ok(&back, yaml);
        ck_assert_uint_eq(back.family[0].len, 3);
        ck_assert_str_eq(back.family[0].items[2], "CUDA/12.4.0");
        ck_assert_uint_eq(back.family[2].len, 0);
        ck_assert_str_eq(back.modulepath.items[0], "/apps/eb/modules/all");
        ck_assert_str_eq(back.spider_cache.dir, "/apps/lmod/cache");
        config_release(&back);
        config_release(&c);
        load_ok(&c, "lmod: {spider_cache: true, extensions: true}\n");
        ck_assert(c.spider_cache.from_lmodrc && !c.spider_cache.dir);
        ck_assert(c.lmod_extensions);
        free(yaml);
        yaml = to_yaml(&c);
        load_ok(&back, yaml);
        ck_assert(back.spider_cache.from_lmodrc);
        ck_assert(back.lmod_extensions);
        config_release(&back);
        config_release(&c);
}
END_TEST

START_TEST(config_to_yaml_writes_every_key_in_design_order)
{
        static const char *const keys[] = {
                "output:", "format:", "layout:", "search:", "exclude:", "max_depth:", "defaults:",
                "naming:", "ld_library_path:", "stubs_on_library_path:", "env:", "pytorch:",
                "host_compiler:", "validate:", "templates:", "lock_timeout:", "output_mode:", "family:", "modulepath:", "lmod:",
                NULL,
        };
        _cleanup_free_ char *yaml = NULL;
        struct config c;
        const char *p;

        config_init_default(&c);
        yaml = to_yaml(&c);
        p = yaml;
        for (size_t i = 0; keys[i]; i++) {
                const char *q = strstr(p, keys[i]);

                ck_assert_msg(q && (q == yaml || q[-1] == '\n'), "'%s' missing or out of order", keys[i]);
                p = q + 1;
        }
        ck_assert_ptr_nonnull(strstr(yaml, "\n    setenv: {}\n    prepend_path: {}\n    append_path: {}\n    pushenv: {}\n"));
        config_release(&c);
}
END_TEST

START_TEST(config_to_yaml_groups_env_ops_by_kind_in_first_seen_order)
{
        _cleanup_free_ char *yaml = NULL;
        struct config c;
        struct env_op swap;

        load_ok(&c, "env: {cuda: {append_path: {P: [/x, /y]}, setenv: {A: '1'}}}\n");
        /* Ops built in code may interleave kinds, which YAML cannot: P /x,
         * A 1, P /y is written as P [/x, /y], A 1. */
        swap = c.env[component_cuda.index].items[1];
        c.env[component_cuda.index].items[1] = c.env[component_cuda.index].items[2];
        c.env[component_cuda.index].items[2] = swap;
        ck_assert_str_eq(c.env[component_cuda.index].items[1].name, "A");
        yaml = to_yaml(&c);
        ck_assert_ptr_nonnull(strstr(yaml, "  cuda:\n"
                                           "    append_path:\n"
                                           "      P:\n"
                                           "      - /x\n"
                                           "      - /y\n"
                                           "    setenv:\n"
                                           "      A: '1'\n"
                                           "    prepend_path: {}\n"));
        assert_round_trip(&c, NULL);
        config_release(&c);
}
END_TEST

/* ---- the command ---- */

START_TEST(config_command_default_loads_back_identically)
{
        struct run_result def = { 0 }, again = { 0 };
        _cleanup_free_ char *path = NULL;

        run_cudamod(&def, (const char *const[]){ "config", "--default", NULL }, false);
        ck_assert_int_eq(def.status, 0);
        ck_assert_str_eq(def.err, "");
        ck_assert_ptr_nonnull(strstr(def.out, "max_depth: 8\n"));
        path = temp_file(def.out, strlen(def.out));
        run_cudamod(&again, (const char *const[]){ "--config", path, "config", NULL }, false);
        ck_assert_int_eq(again.status, 0);
        ck_assert_str_eq(again.err, "");
        ck_assert_str_eq(again.out, def.out);
        unlink(path);
        run_result_release(&def);
        run_result_release(&again);
}
END_TEST

START_TEST(config_command_overlays_the_config_file)
{
        static const char text[] = "format: tcl\ndefaults: {cuda: 12.9}\n";
        _cleanup_free_ char *path = temp_file(text, strlen(text));
        struct run_result r = { 0 }, def = { 0 };

        run_cudamod(&r, (const char *const[]){ "--config", path, "config", NULL }, false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "format: tcl\n"));
        ck_assert_ptr_nonnull(strstr(r.out, "  cuda: '12.9'\n"));
        ck_assert_ptr_nonnull(strstr(r.out, "layout: hierarchical\n"));
        /* --default ignores --config */
        run_cudamod(&def, (const char *const[]){ "--config", path, "config", "--default", NULL }, false);
        ck_assert_int_eq(def.status, 0);
        ck_assert_ptr_nonnull(strstr(def.out, "format: lua\n"));
        unlink(path);
        run_result_release(&r);
        run_result_release(&def);
}
END_TEST

START_TEST(config_command_bad_config_exits_2_with_position)
{
        static const char text[] = "format: lua\nlayuot: flat\n";
        _cleanup_free_ char *path = temp_file(text, strlen(text));
        _cleanup_free_ char *want =
                xasprintf("cudamod: %s:2:1: unknown key 'layuot'; did you mean 'layout'?\n", path);
        struct run_result r = { 0 };

        run_cudamod(&r, (const char *const[]){ "--config", path, "config", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.out, "");
        ck_assert_str_eq(r.err, want);
        unlink(path);
        run_result_release(&r);
}
END_TEST

START_TEST(config_command_usage_errors_and_help)
{
        struct run_result r = { 0 };

        run_cudamod(&r, (const char *const[]){ "config", "extra", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.out, "");
        ck_assert_ptr_nonnull(strstr(r.err, "usage: cudamod config [--default]"));
        run_result_release(&r);

        run_cudamod(&r, (const char *const[]){ "config", "--bogus", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        run_result_release(&r);

        run_cudamod(&r, (const char *const[]){ "--config", "/nonexistent/x.yaml", "config", "--help", NULL },
                    false);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "usage: cudamod config [--default]"));
        run_result_release(&r);

        run_cudamod(&r, (const char *const[]){ "--config", "/nonexistent/x.yaml", "config", NULL }, false);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.out, "");
        ck_assert_ptr_nonnull(strstr(r.err, "cudamod: /nonexistent/x.yaml: cannot read the config"));
        run_result_release(&r);
}
END_TEST

static Suite *config_suite(void)
{
        Suite *s = suite_create("config");
        TCase *tc;

        tc = tcase_create("default");
        tcase_add_test(tc, config_default_has_documented_values);
        tcase_add_test(tc, config_default_strings_are_empty_not_null);
        tcase_add_test(tc, config_format_and_layout_names_round_trip);
        suite_add_tcase(s, tc);

        tc = tcase_create("load");
        tcase_add_test(tc, config_empty_mapping_means_defaults);
        tcase_add_test(tc, config_overlay_replaces_given_keys_only);
        tcase_add_test(tc, config_lists_replace_on_a_second_load);
        tcase_add_test(tc, config_search_takes_paths_and_mount_roots);
        tcase_add_test(tc, config_search_takes_optional_roots);
        tcase_add_test(tc, config_exclude_takes_walk_and_component_patterns);
        tcase_add_test(tc, config_plain_version_is_its_source_text);
        tcase_add_test(tc, config_accepts_yaml11_booleans_in_any_case);
        tcase_add_test(tc, config_cuda_compat_is_off_or_auto);
        tcase_add_test(tc, config_strings_take_plain_and_quoted_forms);
        tcase_add_test(tc, config_empty_output_means_none);
        tcase_add_test(tc, config_env_ops_keep_file_order);
        tcase_add_test(tc, config_validate_targets_are_read);
        tcase_add_test(tc, config_accepts_bom_crlf_comments_and_document_markers);
        tcase_add_test(tc, config_load_reads_a_file_and_records_it);
        tcase_add_test(tc, config_missing_file_reports_errno);
        tcase_add_test(tc, config_larger_than_1mib_is_refused);
        suite_add_tcase(s, tc);

        tc = tcase_create("errors");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, config_errors_report_position_and_key);
        tcase_add_test(tc, config_unknown_key_suggests_the_nearest);
        tcase_add_test(tc, config_failed_load_leaves_config_unchanged);
        tcase_add_test(tc, config_alias_bomb_is_refused_quickly);
        tcase_add_test(tc, config_deep_nesting_is_refused);
        tcase_add_test(tc, config_invalid_utf8_on_a_later_line_is_positioned);
        suite_add_tcase(s, tc);

        tc = tcase_create("size");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, config_huge_maps_and_lists_stay_fast);
        suite_add_tcase(s, tc);

        tc = tcase_create("naming");
        tcase_add_test(tc, naming_expand_fills_placeholders);
        tcase_add_test(tc, naming_expand_reports_missing_parts);
        tcase_add_test(tc, naming_expand_rejects_bad_templates);
        suite_add_tcase(s, tc);

        tc = tcase_create("yaml");
        tcase_add_test(tc, config_to_yaml_round_trips_the_default);
        tcase_add_test(tc, config_to_yaml_round_trips_every_key_with_odd_strings);
        tcase_add_test(tc, config_to_yaml_keeps_strings_strings);
        tcase_add_test(tc, config_host_compiler_loads_and_round_trips);
        tcase_add_test(tc, config_naming_presets_load_and_round_trip);
        tcase_add_test(tc, config_modulerc_loads_and_round_trips);
        tcase_add_test(tc, config_to_yaml_writes_every_key_in_design_order);
        tcase_add_test(tc, config_to_yaml_groups_env_ops_by_kind_in_first_seen_order);
        tcase_add_test(tc, config_site_keys_load_and_round_trip);
        tcase_add_test(tc, config_output_mode_loads_and_round_trips);
        suite_add_tcase(s, tc);

        tc = tcase_create("command");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, config_command_default_loads_back_identically);
        tcase_add_test(tc, config_command_overlays_the_config_file);
        tcase_add_test(tc, config_command_bad_config_exits_2_with_position);
        tcase_add_test(tc, config_command_usage_errors_and_help);
        suite_add_tcase(s, tc);

        return s;
}

int main(void)
{
        return run_suite(config_suite());
}
