/* test-render.c: the template renderer, its escaping checked against the
 * real interpreters, and the built-in templates.
 *
 * The interpreter checks run lua5.1, lua5.3 and tclsh when they are on
 * PATH (and print a note when they are not): each renders a value into a
 * file, lets the interpreter read it back and print its bytes as hex, in a
 * temporary working directory where a hostile value that became code would
 * create the file X. */
#include <check.h>

#include "component-table.h"
#include "testutil.h"
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fixture.h"
#include "component.h"
#include "render.h"
#include "render-check.h"
#include "strbuf.h"
#include "util.h"

/* ---- helpers ---- */

/* Rendered without the gate (render_ungated): the escapers must hold on
 * their own for every value; the gate has tests of its own (gate_*). */
static char *render_ok(const char *tmpl, enum module_format lang, const struct render_ctx *ctx)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        struct strbuf out = STRBUF_INIT;
        int r = render_ungated(tmpl, strlen(tmpl), "t", lang, ctx, &out, &d);

        ck_assert_msg(r == 0, "render failed: %s", d.message ? d.message : "?");
        return strbuf_detach(&out);
}

/* The error of a render that must fail, as "FILE:LINE:COL: message". */
static char *render_fails(const char *tmpl, enum module_format lang, const struct render_ctx *ctx)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
        int r = render(tmpl, strlen(tmpl), "t", lang, ctx, &out, &d);

        ck_assert_msg(r == -EINVAL, "render of '%s' returned %d, want -EINVAL", tmpl, r);
        return diag_format(&d);
}

static void assert_renders(const char *tmpl, enum module_format lang, const struct render_ctx *ctx,
                           const char *want)
{
        _cleanup_free_ char *got = render_ok(tmpl, lang, ctx);

        ck_assert_msg(streq(got, want), "template '%s':\n got '%s'\nwant '%s'", tmpl, got, want);
}

static char *hex(const char *s)
{
        struct strbuf sb = STRBUF_INIT;

        for (const unsigned char *p = (const unsigned char *)s; *p; p++)
                strbuf_addf(&sb, "%02x", *p);
        return strbuf_detach(&sb);
}

/* The program's path when it is on PATH, else NULL. */
static char *find_program(const char *name)
{
        const char *path = getenv("PATH");
        _cleanup_free_ char *copy = xstrdup(path ? path : "/usr/bin:/bin");

        for (char *dir = copy, *next; dir; dir = next) {
                next = strchr(dir, ':');
                if (next)
                        *next++ = '\0';
                if (*dir) {
                        char *p = path_join(dir, name);

                        if (access(p, X_OK) == 0)
                                return p;
                        free(p);
                }
        }
        return NULL;
}

static char *program_or_note(const char *name)
{
        char *p = find_program(name);

        if (!p)
                printf("note: %s is not on PATH, skipping its checks\n", name);
        return p;
}

static bool have_utf8_locale(void)
{
        locale_t l = newlocale(LC_ALL_MASK, "C.UTF-8", (locale_t)0);

        if (!l)
                return false;
        freelocale(l);
        return true;
}

/* Run prog with args in cwd; env NULL keeps ours. Captures stdout/stderr. */
static void run_in(struct run_result *r, const char *cwd, const char *const *env, const char *prog,
                   const char *a1, const char *a2)
{
        const char *argv[] = { prog, a1, a2, NULL };

        run_program(r, cwd, argv, env);
}

static bool exists_in(const char *dir, const char *name)
{
        _cleanup_free_ char *p = path_join(dir, name);

        return access(p, F_OK) == 0;
}

/* ---- substitution and escaping ---- */

START_TEST(render_substitutes_values_as_quoted_literals)
{
        struct render_ctx *c = render_ctx_new();

        render_ctx_set(c, "prefix", "/opt/cuda");
        render_ctx_set(c, "empty", "");
        assert_renders("setenv(\"CUDA_HOME\", {{prefix}})\n", FORMAT_LUA, c,
                       "setenv(\"CUDA_HOME\", \"/opt/cuda\")\n");
        assert_renders("setenv CUDA_HOME {{prefix}}\n", FORMAT_TCL, c,
                       "setenv CUDA_HOME \"/opt/cuda\"\n");
        assert_renders("x = {{ prefix }}{{empty}}", FORMAT_LUA, c, "x = \"/opt/cuda\"\"\"");
        assert_renders("no tags } { }} here", FORMAT_TCL, c, "no tags } { }} here");
        assert_renders("", FORMAT_LUA, c, "");
        render_ctx_free(c);
}
END_TEST

START_TEST(render_escapes_lua_with_lua51_escapes_only)
{
        static const struct {
                const char *in, *want;
        } t[] = {
                { "plain /a b", "\"plain /a b\"" },
                { "\"q\" 'a'", "\"\\\"q\\\" 'a'\"" },
                { "back\\slash\\", "\"back\\\\slash\\\\\"" },
                { "a\nb", "\"a\\\nb\"" },
                { "tab\there", "\"tab\\009here\"" },
                { "\xc3\xa9", "\"\\195\\169\"" },
                { "\xff\xfe", "\"\\255\\254\"" },
                { "]]=]$(x)`[exec x]{};", "\"]]=]$(x)`[exec x]{};\"" },
                { NULL, NULL },
        };
        struct render_ctx *c = render_ctx_new();

        for (size_t i = 0; t[i].in; i++) {
                render_ctx_set_text(c, "v", t[i].in);
                assert_renders("{{v}}", FORMAT_LUA, c, t[i].want);
        }
        render_ctx_free(c);
}
END_TEST

START_TEST(render_escapes_tcl_specials_and_control_bytes)
{
        static const struct {
                const char *in, *want;
        } t[] = {
                { "plain /a b;c", "\"plain /a b;c\"" },
                { "$HOME[exec x]", "\"\\$HOME\\[exec x\\]\"" },
                { "\"{}\\", "\"\\\"\\{\\}\\\\\"" },
                { "a\nb\tc", "\"a\nb\\011c\"" },
                { "\xc3\xa9\xff", "\"\xc3\xa9\xff\"" },
                { "'`]]", "\"'`\\]\\]\"" },
                { NULL, NULL },
        };
        struct render_ctx *c = render_ctx_new();

        for (size_t i = 0; t[i].in; i++) {
                render_ctx_set_text(c, "v", t[i].in);
                assert_renders("{{v}}", FORMAT_TCL, c, t[i].want);
        }
        render_ctx_free(c);
}
END_TEST

START_TEST(render_comment_tag_replaces_unsafe_bytes)
{
        struct render_ctx *c = render_ctx_new();

        render_ctx_set_text(c, "v", "/a b\n-- x\\\t\xc3\xa9\"'$[{}]=]; ok");
        assert_renders("-- {{%v}}\n", FORMAT_LUA, c, "-- /a b?-- x" "???????????" "=?; ok\n");
        assert_renders("# {{% v }}\n", FORMAT_TCL, c, "# /a b?-- x" "???????????" "=?; ok\n");
        render_ctx_free(c);
}
END_TEST

START_TEST(render_rejects_unknown_format)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
        struct render_ctx *c = render_ctx_new();

        ck_assert_int_eq(render("x", 1, "t", _FORMAT_INVALID, c, &out, &d), -EINVAL);
        ck_assert_ptr_nonnull(d.message);
        render_ctx_free(c);
}
END_TEST

/* ---- sections ---- */

START_TEST(render_section_repeats_for_each_list_item)
{
        struct render_ctx *c = render_ctx_new();

        render_ctx_set(render_ctx_add_item(c, "whatis"), "line", "Name: cuda");
        render_ctx_set(render_ctx_add_item(c, "whatis"), "line", "Version: 12.9");
        assert_renders("{{#whatis}}whatis({{line}})\n{{/whatis}}", FORMAT_LUA, c,
                       "whatis(\"Name: cuda\")\nwhatis(\"Version: 12.9\")\n");
        assert_renders("[{{#whatis}}x{{/whatis}}]", FORMAT_TCL, c, "[xx]");
        render_ctx_set_list(c, "empty");
        assert_renders("[{{#empty}}x{{/empty}}]", FORMAT_LUA, c, "[]");
        render_ctx_free(c);
}
END_TEST

START_TEST(render_section_over_string_and_bool_renders_once_when_set)
{
        struct render_ctx *c = render_ctx_new();

        render_ctx_set(c, "family", "cuda");
        render_ctx_set(c, "none", "");
        render_ctx_set_bool(c, "yes", true);
        render_ctx_set_bool(c, "no", false);
        assert_renders("{{#family}}family({{family}}){{/family}}", FORMAT_LUA, c, "family(\"cuda\")");
        assert_renders("[{{#none}}x{{/none}}]", FORMAT_LUA, c, "[]");
        assert_renders("[{{#yes}}y{{/yes}}{{#no}}n{{/no}}]", FORMAT_TCL, c, "[y]");
        render_ctx_free(c);
}
END_TEST

START_TEST(render_inverted_section_renders_when_empty_or_false)
{
        struct render_ctx *c = render_ctx_new();

        render_ctx_set(c, "s", "x");
        render_ctx_set(c, "e", "");
        render_ctx_set_bool(c, "t", true);
        render_ctx_set_bool(c, "f", false);
        render_ctx_set_list(c, "none");
        render_ctx_add_item(c, "some");
        assert_renders("{{^s}}1{{/s}}{{^e}}2{{/e}}{{^t}}3{{/t}}{{^f}}4{{/f}}"
                       "{{^none}}5{{/none}}{{^some}}6{{/some}}",
                       FORMAT_LUA, c, "245");
        render_ctx_free(c);
}
END_TEST

START_TEST(render_nested_lists_look_up_outer_contexts)
{
        struct render_ctx *c = render_ctx_new();
        struct render_ctx *a, *b;

        render_ctx_set(c, "name", "top");
        render_ctx_set(c, "outer", "O");
        a = render_ctx_add_item(c, "xs");
        render_ctx_set(a, "name", "a");
        render_ctx_set(render_ctx_add_item(a, "ys"), "v", "1");
        b = render_ctx_add_item(a, "ys");
        render_ctx_set(b, "v", "2");
        render_ctx_set(b, "name", "b");
        render_ctx_set_list(render_ctx_add_item(c, "xs"), "ys");
        assert_renders("{{name}}:{{#xs}}<{{name}}{{#ys}}({{name}}{{v}}{{outer}}){{/ys}}>{{/xs}}",
                       FORMAT_LUA, c,
                       "\"top\":<\"a\"(\"a\"\"1\"\"O\")(\"b\"\"2\"\"O\")><\"top\">");
        render_ctx_free(c);
}
END_TEST

START_TEST(render_ctx_set_replaces_and_set_list_keeps_items)
{
        struct render_ctx *c = render_ctx_new();

        render_ctx_set(c, "k", "one");
        render_ctx_set(c, "k", "two");
        assert_renders("{{k}}", FORMAT_LUA, c, "\"two\"");
        render_ctx_set_bool(c, "k", true);
        assert_renders("{{#k}}b{{/k}}", FORMAT_LUA, c, "b");
        render_ctx_add_item(c, "k");
        render_ctx_set_list(c, "k");
        render_ctx_add_item(c, "k");
        assert_renders("{{#k}}i{{/k}}", FORMAT_LUA, c, "ii");
        render_ctx_set(c, "k", NULL);
        assert_renders("{{k}}", FORMAT_LUA, c, "\"\"");
        render_ctx_free(c);
        render_ctx_free(NULL);
}
END_TEST

START_TEST(render_nesting_is_limited_to_32_sections)
{
        struct render_ctx *c = render_ctx_new();
        struct strbuf ok = STRBUF_INIT, deep = STRBUF_INIT;
        _cleanup_free_ char *out = NULL, *err = NULL;

        render_ctx_set_bool(c, "b", true);
        for (int i = 0; i < 32; i++)
                strbuf_addstr(&ok, "{{#b}}");
        strbuf_addch(&ok, 'x');
        for (int i = 0; i < 32; i++)
                strbuf_addstr(&ok, "{{/b}}");
        out = render_ok(ok.buf, FORMAT_LUA, c);
        ck_assert_str_eq(out, "x");
        for (int i = 0; i < 33; i++)
                strbuf_addstr(&deep, "{{#b}}");
        err = render_fails(deep.buf, FORMAT_LUA, c);
        ck_assert_str_eq(err, "t:1:193: sections nested deeper than 32");
        strbuf_release(&ok);
        strbuf_release(&deep);
        render_ctx_free(c);
}
END_TEST

/* 20 sections nested over a list of two items: 2^20 copies of 12 bytes.
 * Refused at the text whose copy crosses 1 MiB, not rendered in full (the
 * render fuzzer found a template that took 10 s); 16 levels (768 KiB)
 * still render. */
START_TEST(render_output_is_bounded)
{
        struct render_ctx *c = render_ctx_new();
        struct strbuf deep = STRBUF_INIT, fits = STRBUF_INIT;
        _cleanup_free_ char *err = NULL, *out = NULL;

        render_ctx_set_list(c, "l");
        render_ctx_add_item(c, "l");
        render_ctx_add_item(c, "l");
        for (int i = 0; i < 20; i++)
                strbuf_addstr(&deep, "{{#l}}");
        strbuf_addstr(&deep, "\n0123456789a");
        for (int i = 0; i < 20; i++)
                strbuf_addstr(&deep, "{{/l}}");
        err = render_fails(deep.buf, FORMAT_LUA, c);
        ck_assert_str_eq(err, "t:1:121: the output is larger than 1 MiB (a section that repeats too often?)");
        for (int i = 0; i < 16; i++)
                strbuf_addstr(&fits, "{{#l}}");
        strbuf_addstr(&fits, "0123456789ab");
        for (int i = 0; i < 16; i++)
                strbuf_addstr(&fits, "{{/l}}");
        out = render_ok(fits.buf, FORMAT_TCL, c);
        ck_assert_uint_eq(strlen(out), 12u << 16);
        strbuf_release(&deep);
        strbuf_release(&fits);
        render_ctx_free(c);
}
END_TEST

/* ---- the standalone rule and comments ---- */

START_TEST(render_removes_standalone_tag_lines_exactly)
{
        static const struct {
                const char *tmpl, *want;
        } t[] = {
                { "a\n{{#yes}}\nb\n{{/yes}}\nc\n", "a\nb\nc\n" },
                { "a\n  \t{{#yes}}  \nb\n\t{{/yes}}\nc", "a\nb\nc" },
                { "{{#no}}\nb\n{{/no}}\nc\n", "c\n" },
                { "a\n{{^no}}\nb\n{{/no}}", "a\nb\n" },
                { "a\r\n{{#yes}}\r\nb\r\n{{/yes}}\r\n", "a\r\nb\r\n" },
                { "{{! a comment }}\nx\n", "x\n" },
                { "x\n  {{! multi\nline\ncomment }}  \ny\n", "x\ny\n" },
                { "{{#list}}\n- {{v}}\n{{/list}}\n", "- \"1\"\n- \"2\"\n" },
                /* Not standalone: text or a second tag on the line. */
                { "a {{#yes}}\nb{{/yes}}\n", "a \nb\n" },
                { "{{#yes}}{{/yes}}\nc\n", "\nc\n" },
                { "{{#yes}} x\n{{/yes}}", " x\n" },
                { "x{{! c }}y\n", "xy\n" },
                { "{{v0}}\n", "\"\"\n" },
                { "  {{v0}}  \n", "  \"\"  \n" },
                { "  {{%v0}}\n", "  \n" },
                { "{{#yes}}\n\n{{/yes}}\n", "\n" },
                { NULL, NULL },
        };
        struct render_ctx *c = render_ctx_new();

        render_ctx_set_bool(c, "yes", true);
        render_ctx_set_bool(c, "no", false);
        render_ctx_set(c, "v0", "");
        render_ctx_set(render_ctx_add_item(c, "list"), "v", "1");
        render_ctx_set(render_ctx_add_item(c, "list"), "v", "2");
        for (size_t i = 0; t[i].tmpl; i++)
                assert_renders(t[i].tmpl, FORMAT_LUA, c, t[i].want);
        render_ctx_free(c);
}
END_TEST

START_TEST(render_drops_comment_tags)
{
        struct render_ctx *c = render_ctx_new();

        assert_renders("a{{!x}}b{{! {{#y unknown_key }}c", FORMAT_TCL, c, "abc");
        assert_renders("a{{! {{#y}} }}c", FORMAT_TCL, c, "a }}c");
        render_ctx_free(c);
}
END_TEST

/* ---- errors ---- */

START_TEST(render_errors_report_template_position)
{
        static const struct {
                const char *tmpl, *want;
        } t[] = {
                { "{{prefx}}", "t:1:1: unknown key 'prefx'" },
                { "ab\n  x{{#nope}}y{{/nope}}", "t:2:4: unknown key 'nope'" },
                { "{{^nope}}{{/nope}}", "t:1:1: unknown key 'nope'" },
                { "{{%nope}}", "t:1:1: unknown key 'nope'" },
                { "{{#whatis}}\n  {{missing}}\n{{/whatis}}\n", "t:2:3: unknown key 'missing'" },
                { "a\n  {{#ops}}x", "t:2:3: section 'ops' is not closed" },
                { "{{#ops}}\n{{#whatis}}\n{{/whatis}}\n", "t:1:1: section 'ops' is not closed" },
                { "{{#whatis}}{{/ops}}", "t:1:12: '{{/ops}}' closes 'whatis'" },
                { "x\n{{/ops}}", "t:2:1: '{{/ops}}' closes no section" },
                { "ab{{name", "t:1:3: tag '{{' is not closed" },
                { "{{name}", "t:1:1: tag '{{' is not closed" },
                { "x{{", "t:1:2: tag '{{' is not closed" },
                { "{{}}", "t:1:1: tag has no key" },
                { "{{# }}", "t:1:1: tag has no key" },
                { "{{ # }}", "t:1:4: invalid character '#' in tag" },
                { "{{na-me}}", "t:1:5: invalid character '-' in tag" },
                { "{{{name}}}", "t:1:3: invalid character '{' in tag" },
                { "{{&name}}", "t:1:3: invalid character '&' in tag" },
                { "{{name\n}}", "t:1:7: invalid character '\\x0a' in tag" },
                { "{{na me}}", "t:1:6: invalid character 'm' in tag" },
                { "x\n{{! open", "t:2:1: comment '{{!' is not closed" },
                { "\r\n\t\xc3\xa9{{x}}", "t:2:4: unknown key 'x'" },
                { "{{! a\nb }}{{x}}", "t:2:5: unknown key 'x'" },
                { "{{whatis}}", "t:1:1: 'whatis' is a list, not a string" },
                { "{{%whatis}}", "t:1:1: 'whatis' is a list, not a string" },
                { "{{flag}}", "t:1:1: 'flag' is a bool, not a string" },
                { NULL, NULL },
        };
        struct render_ctx *c = render_ctx_new();

        render_ctx_set(c, "name", "cuda");
        render_ctx_set_bool(c, "flag", true);
        render_ctx_set_list(c, "ops");
        render_ctx_add_item(c, "whatis");
        for (size_t i = 0; t[i].tmpl; i++) {
                for (int lang = FORMAT_LUA; lang <= FORMAT_TCL; lang++) {
                        _cleanup_free_ char *err = render_fails(t[i].tmpl, lang, c);

                        ck_assert_msg(streq(err, t[i].want), "'%s': got '%s', want '%s'",
                                      t[i].tmpl, err, t[i].want);
                }
        }
        render_ctx_free(c);
}
END_TEST

START_TEST(render_reads_only_len_bytes)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
        struct render_ctx *c = render_ctx_new();
        /* Unterminated copies, so ASan and valgrind see any overread. */
        static const char *const t[] = { "{{", "{{x", "{{x}", "{", "{{!", "{{! }", "{{#x}}", NULL };

        render_ctx_set(c, "x", "1");
        for (size_t i = 0; t[i]; i++) {
                size_t len = strlen(t[i]);
                _cleanup_free_ char *buf = xmalloc(len);

                memcpy(buf, t[i], len);
                strbuf_reset(&out);
                render(buf, len, "t", FORMAT_LUA, c, &out, &d);
        }
        render_ctx_free(c);
}
END_TEST

/* ---- the hostile values, through the real interpreters ---- */

static const char *const hostile[] = {
        "\"", "'", "]]", "]=]", "]==]", "$(touch X)", "`touch X`", "[exec touch X]", ";",
        "\\", "trailing\\", "a\nb", "a\tb", "a\rb", "{", "}", "}{", "{a}}", "\xc3\xa9\xe6\xbc\xa2",
        "\xff\xfe", "\x01" "1", "\\012", "${HOME}",
        "\" .. os.execute(\"touch X\") .. \"", "]] os.execute('touch X') --[[",
        "\"; exec touch X; set y \"", "} ; exec touch X ; {", "\\\"; exec touch X; #",
        "\\\n exec touch X", "[[", "[==[ x", "--[[", "\n}\nexec touch X\nproc q {} {\n", NULL,
};

/* Every byte 1..255 that a value may hold, once: not the control
 * characters the renderer's gate refuses (all but the tab, and the newline
 * in text). */
static char *all_bytes_of(bool text)
{
        char *s = xmalloc(256);
        size_t n = 0;

        for (int i = 1; i < 256; i++)
                if ((i >= 0x20 && i != 0x7f) || i == '\t' || (text && i == '\n'))
                        s[n++] = (char)i;
        s[n] = '\0';
        return s;
}

static char *all_bytes(void)
{
        return all_bytes_of(true);
}

/* Whether the gate refuses v as text. */
static bool gated(const char *v)
{
        for (const unsigned char *p = (const unsigned char *)v; *p; p++)
                if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
                        return true;
        return false;
}

struct interp {
        const char *label;
        char *prog;
        enum module_format lang;
        const char *const *env; /* NULL: ours */
        bool utf8;              /* a UTF-8 locale: only valid UTF-8 round-trips */
};

static const char *const env_c[] = { NULL };
static const char *const env_utf8[] = { "LANG=C.UTF-8", NULL };

static size_t interps_find(struct interp *t)
{
        size_t n = 0;
        char *lua51 = program_or_note("lua5.1"), *lua53 = program_or_note("lua5.3");
        char *tcl = program_or_note("tclsh");

        if (lua51)
                t[n++] = (struct interp){ "lua5.1", lua51, FORMAT_LUA, NULL, false };
        if (lua53)
                t[n++] = (struct interp){ "lua5.3", lua53, FORMAT_LUA, NULL, false };
        if (tcl) {
                t[n++] = (struct interp){ "tclsh (env -i)", tcl, FORMAT_TCL, env_c, false };
                if (have_utf8_locale())
                        t[n++] = (struct interp){ "tclsh (LANG=C.UTF-8)", xstrdup(tcl), FORMAT_TCL,
                                                  env_utf8, true };
                else
                        printf("note: no C.UTF-8 locale, tclsh checked in the C locale only\n");
        }
        return n;
}

static void interps_free(struct interp *t, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(t[i].prog);
}

static const char lua_driver[] =
        "local function hex(s)\n"
        "  return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end))\n"
        "end\n"
        "dofile('m.lua')\n"
        "io.write(hex(x))\n";

static const char tcl_driver[] =
        "proc hex s { binary scan [encoding convertto [encoding system] $s] H* h; return $h }\n"
        "source m.tcl\n"
        "puts -nonewline [hex $x]\n";

/* Render tmpl with v, let the interpreter read it and return the hex of x. */
static void check_round_trip(const struct interp *in, const char *tmpl, const char *v,
                             const char *want)
{
        struct render_ctx *c = render_ctx_new();
        _cleanup_free_ char *text = NULL, *want_hex = hex(want);
        char *dir = fx_new();
        struct run_result r;

        render_ctx_set_text(c, "v", v);
        if (gated(v)) {
                _cleanup_free_ char *e = render_fails(tmpl, in->lang, c);

                ck_assert_msg(strstr(e, "holds a control character"), "%s", e);
                fx_free(dir);
                render_ctx_free(c);
                return;
        }
        text = render_ok(tmpl, in->lang, c);
        fx_write(dir, in->lang == FORMAT_LUA ? "m.lua" : "m.tcl", text);
        fx_write(dir, "d", in->lang == FORMAT_LUA ? lua_driver : tcl_driver);
        run_in(&r, dir, in->env, in->prog, "d", NULL);
        ck_assert_msg(!exists_in(dir, "X"), "%s: value %.1000s was executed", in->label, want_hex);
        ck_assert_msg(r.status == 0, "%s: exit %d for value %.600s:\n%.1000s\nfile:\n%.1000s",
                      in->label, r.status, want_hex, r.err, text);
        if (!in->utf8 || utf8_valid(want))
                ck_assert_msg(streq(r.out, want_hex), "%s: value %.1000s came back as %.1000s",
                              in->label, want_hex, r.out);
        run_result_release(&r);
        fx_free(dir);
        render_ctx_free(c);
}

START_TEST(render_hostile_values_round_trip_through_interpreters)
{
        struct interp in[4];
        size_t n = interps_find(in);
        _cleanup_free_ char *bytes = all_bytes();

        for (size_t k = 0; k < n; k++) {
                const char *tmpl = in[k].lang == FORMAT_LUA ? "x = {{v}}\n" : "set x {{v}}\n";

                for (size_t i = 0; hostile[i]; i++)
                        check_round_trip(&in[k], tmpl, hostile[i], hostile[i]);
                check_round_trip(&in[k], tmpl, bytes, bytes);
        }
        interps_free(in, n);
}
END_TEST

START_TEST(render_hostile_values_stay_literal_inside_tcl_braced_body)
{
        struct interp in[4];
        size_t n = interps_find(in);
        _cleanup_free_ char *bytes = all_bytes();
        static const char tmpl[] = "proc p { } {\n    set ::x {{v}}\n}\np\n";

        for (size_t k = 0; k < n; k++) {
                if (in[k].lang != FORMAT_TCL)
                        continue;
                for (size_t i = 0; hostile[i]; i++)
                        check_round_trip(&in[k], tmpl, hostile[i], hostile[i]);
                check_round_trip(&in[k], tmpl, bytes, bytes);
        }
        interps_free(in, n);
}
END_TEST

START_TEST(render_hostile_comment_text_cannot_escape_the_comment)
{
        struct interp in[4];
        size_t n = interps_find(in);
        _cleanup_free_ char *bytes = all_bytes();

        for (size_t k = 0; k < n; k++) {
                const char *tmpl = in[k].lang == FORMAT_LUA ? "-- {{%v}}\nx = \"ok\"\n"
                                                            : "# {{%v}}\nset x ok\n";

                for (size_t i = 0; hostile[i]; i++)
                        check_round_trip(&in[k], tmpl, hostile[i], "ok");
                check_round_trip(&in[k], tmpl, bytes, "ok");
        }
        interps_free(in, n);
}
END_TEST

/* Comment text in the places a site template may put it: a Tcl braced
 * body (a proc's), a Lua long comment and long string, a quoted string. */
START_TEST(render_comment_text_cannot_end_a_braced_body_or_long_comment)
{
        static const char *const names[] = {
                "a};exec touch X;proc z {} {", "a]] os.execute(\"touch X\") --[[b",
                "a]=] os.execute('touch X') --[=[b", "a\" .. os.execute('touch X') .. \"b",
                "a' .. os.execute('touch X') .. 'b", "a\"; exec touch X; set y \"b", "a[exec touch X]b",
                "a$env(HOME)b", "\\", "}", "]]", NULL,
        };
        static const char *const tmpl[] = {
                [FORMAT_LUA] = "--[[ from {{%v}} ]]\nlocal s = [[ {{%v}} ]]\nlocal q = \"{{%v}}\" .. '{{%v}}'\n"
                               "--[==[ {{%v}} ]==]\nx = \"ok\"\n",
                [FORMAT_TCL] = "proc ModulesHelp { } { # from {{%v}}\n    puts stderr \"{{%v}}\"\n}\n"
                               "set s { {{%v}} }\nset x ok\nModulesHelp\n",
        };
        struct interp in[4];
        size_t n = interps_find(in);
        _cleanup_free_ char *bytes = all_bytes();

        for (size_t k = 0; k < n; k++) {
                for (size_t i = 0; names[i]; i++)
                        check_round_trip(&in[k], tmpl[in[k].lang], names[i], "ok");
                check_round_trip(&in[k], tmpl[in[k].lang], bytes, "ok");
        }
        /* Without an interpreter too: the text is what the README says. */
        {
                struct render_ctx *c = render_ctx_new();

                render_ctx_set(c, "v", names[0]);
                assert_renders("# {{%v}}", FORMAT_TCL, c, "# a?;exec touch X;proc z ?? ?");
                render_ctx_set(c, "v", names[1]);
                assert_renders("--[[ {{%v}} ]]", FORMAT_LUA, c, "--[[ a?? os.execute(?touch X?) --?" "?b ]]");
                render_ctx_free(c);
        }
        interps_free(in, n);
}
END_TEST

/* The gate passes it (render, not render_ok's render_ungated). */
static void gate_passes(const char *tmpl, enum module_format lang, const struct render_ctx *ctx, int b)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

        ck_assert_msg(render(tmpl, strlen(tmpl), "t", lang, ctx, &out, &d) == 0, "byte %d: %s", b,
                      d.message ? d.message : "?");
}

/* What some reader of a modulefile takes as code is refused, in every value
 * of the tree, used by the template or not, and the error names where the
 * value came from: in a word every control character, '"', '\\', '$', '`'
 * and ']'; in a text (help, messages) control characters but the tab and
 * the newline, and ']' (written_value_problem). */
START_TEST(render_gate_refuses_control_characters_naming_their_origin)
{
        for (int b = 1; b < 0x80; b++) {
                char v[] = { 'a', (char)b, 'b', '\0' };
                bool refused = b < 0x20 || b == 0x7f || strchr("\"\\$`]", b);
                bool text_refused = (b < 0x20 && b != '\t' && b != '\n') || b == 0x7f || b == ']';
                struct render_ctx *c = render_ctx_new();
                struct render_ctx *it;

                render_ctx_set(c, "v", v);
                if (refused) {
                        _cleanup_free_ char *e = render_fails("{{v}}", FORMAT_LUA, c);
                        _cleanup_free_ char *tail = xasprintf("(\\x%02x at byte 2)", b);

                        ck_assert_msg(startswith(e, "t: the value of 'v' holds ") && endswith(e, tail), "byte %d: %s",
                                      b, e);
                } else {
                        gate_passes("{{v}}", FORMAT_TCL, c, b);
                }
                /* Not used by the template, in a list item. */
                render_ctx_set(c, "v", "x");
                it = render_ctx_add_item(c, "ops");
                render_ctx_set(it, "value", v);
                if (refused)
                        free(render_fails("{{v}}", FORMAT_TCL, c));
                render_ctx_set_text(it, "value", v);
                if (text_refused)
                        free(render_fails("{{v}}", FORMAT_LUA, c));
                else
                        gate_passes("{{v}}", FORMAT_LUA, c, b);
                render_ctx_free(c);
        }
        {
                struct render_ctx *c = render_ctx_new();
                _cleanup_free_ char *e = NULL;

                /* A value with an origin is named by it, before a text that
                 * holds it too (the help holds every op's value). */
                render_ctx_set_text(c, "help", "TORCH_CUDA_ARCH_LIST = 8.0\x1b");
                render_ctx_set_from(render_ctx_add_item(c, "ops"), "value", "8.0\n/tmp/evil.sh",
                                    "site.yaml:4:19: 'pytorch.cuda_arch_list'");
                render_ctx_set_from(render_ctx_add_item(c, "ops"), "value", "8.0\x1b", "site.yaml:4:19: 'x'");
                e = render_fails("{{help}}", FORMAT_LUA, c);
                ck_assert_str_eq(e, "site.yaml:4:19: 'pytorch.cuda_arch_list': the value holds a control "
                                    "character, which Lmod and Environment Modules write raw into the shell "
                                    "code they print (\\x0a at byte 4)");
                render_ctx_free(c);
        }
}
END_TEST

/* The parse check run on every rendered file before it is written. */
START_TEST(modulefile_check_syntax_accepts_modules_and_reports_breakage)
{
        static const struct {
                enum module_format f;
                const char *text;
                const char *error; /* NULL: parses */
        } t[] = {
                { FORMAT_LUA, "setenv(\"A\", \"b\")\n-- x\n", NULL },
                { FORMAT_LUA, "--[[ a ]] x = [==[ ]] ]==]\n", NULL },
                { FORMAT_LUA, "setenv(\"A\", \"b)\n", "m:1: the rendered modulefile does not parse as Lua: unfinished string" },
                { FORMAT_LUA, "x = 1\n--[[ a\n", "m:3: the rendered modulefile does not parse as Lua: unfinished long comment" },
                { FORMAT_LUA, "\x1bLua", "m: the rendered modulefile does not parse as Lua: attempt to load a binary chunk" },
                { FORMAT_TCL, "#%Module\nproc ModulesHelp { } {\n    puts stderr \"a\\\"\\{\"\n}\nsetenv A {b}\n", NULL },
                { FORMAT_TCL, "set a [list \"x\" {y} $b ${c} $d(e[f])];# x\nif {1} {\n} else {}\n", NULL },
                { FORMAT_TCL, "set a {*}{x y}\nputs \\\n  a\nset b \\{\n", NULL },
                { FORMAT_TCL, "# a }\n# b {\\\n  still the comment {\nset x y\n", NULL },
                { FORMAT_TCL, "proc p { } {\n  # {\n}\n", "m:4:1: the rendered modulefile does not parse as Tcl: missing close-brace (for what opens at 1:12)" },
                { FORMAT_TCL, "set x \"a\n", "m:2:1: the rendered modulefile does not parse as Tcl: missing \" (for what opens at 1:7)" },
                { FORMAT_TCL, "set x [list a\n", "m:2:1: the rendered modulefile does not parse as Tcl: missing close-bracket (for what opens at 1:7)" },
                { FORMAT_TCL, "set x {a}b\n", "m:1:10: the rendered modulefile does not parse as Tcl: extra characters after close-brace (for what opens at 1:7)" },
                { FORMAT_TCL, "set x \"a\"b\n", "m:1:10: the rendered modulefile does not parse as Tcl: extra characters after close-quote (for what opens at 1:7)" },
                { FORMAT_TCL, "set x ${a\n", "m:2:1: the rendered modulefile does not parse as Tcl: missing close-brace for variable name (for what opens at 1:7)" },
                { FORMAT_TCL, NULL, NULL },
        };

        for (size_t i = 0; t[i].text; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                int r = modulefile_check_syntax(t[i].text, strlen(t[i].text), "m", t[i].f, &d);

                if (!t[i].error) {
                        ck_assert_msg(r == 0, "case %zu: %s", i, d.message);
                } else {
                        _cleanup_free_ char *e = NULL;

                        ck_assert_msg(r == -EINVAL, "case %zu parses", i);
                        e = diag_format(&d);
                        ck_assert_msg(startswith(e, t[i].error), "case %zu: %s", i, e);
                }
        }
}
END_TEST

/* Where tclsh is installed, the reader agrees with Tcl's own
 * `info complete` on complete and incomplete scripts. */
START_TEST(tcl_reader_agrees_with_info_complete)
{
        static const char *const scripts[] = {
                "a {b", "a \"b", "a [b", "a {b}", "# {\n", "a \\{", "a {\\}", "a \"[b\"", "a [b \"]\"",
                "a $b(c", "a ${b", "proc p { } { # }\n}", "a [b {]}]", "a \"{\"", "a {\"}", NULL,
        };
        _cleanup_free_ char *tcl = find_program("tclsh");
        char *dir;

        if (!tcl)
                return;
        dir = fx_new();
        for (size_t i = 0; scripts[i]; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_free_ char *driver = xasprintf("puts [info complete [read [open s]]]\n");
                struct run_result r;
                bool ours = modulefile_check_syntax(scripts[i], strlen(scripts[i]), "s", FORMAT_TCL, &d) == 0;

                fx_write(dir, "s", scripts[i]);
                fx_write(dir, "d", driver);
                run_in(&r, dir, env_c, tcl, "d", NULL);
                ck_assert_int_eq(r.status, 0);
                /* info complete says 1 for "extra characters": incomplete is
                 * what both must agree on. */
                if (streq(r.out, "0\n"))
                        ck_assert_msg(!ours, "'%s' is incomplete for Tcl, parses for us", scripts[i]);
                else if (!strstr(d.message ? d.message : "", "extra characters"))
                        ck_assert_msg(ours, "'%s' is complete for Tcl, not for us: %s", scripts[i], d.message);
                run_result_release(&r);
        }
        fx_free(dir);
}
END_TEST

/* A FIFO, a dangling symbolic link, an empty file: errors naming the file,
 * never a block on the open nor a fall back to the built-in template. */
START_TEST(template_load_refuses_fifo_dangling_link_and_empty_file)
{
        char *dir = fx_new();
        _cleanup_free_ char *fifo = path_join(dir, "lua/cuda.lua.in");
        _cleanup_free_ char *link = path_join(dir, "lua/cudnn.lua.in");
        _cleanup_free_ char *empty = path_join(dir, "lua/nccl.lua.in");
        _cleanup_free_ char *good = path_join(dir, "lua/modulerc.lua.in");
        static const struct {
                const char *kind, *message;
        } t[] = {
                { "cuda", "template is not a regular file" },
                { "cudnn", "template is a dangling symbolic link" },
                { "nccl", "template is empty" },
                { NULL },
        };
        const char *paths[] = { fifo, link, empty };
        char *text = NULL, *name = NULL;
        size_t len = 0;

        fx_write(dir, "lua/nccl.lua.in", "");
        fx_write(dir, "target", "-- x\n");
        ck_assert_int_eq(mkfifo(fifo, 0644), 0);
        ck_assert_int_eq(symlink("gone", link), 0);
        alarm(10); /* an open that blocks on the FIFO fails the test */
        for (size_t i = 0; t[i].kind; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_int_lt(template_load(dir, FORMAT_LUA, t[i].kind, &text, &len, &name, &d), 0);
                ck_assert_str_eq(d.file, paths[i]);
                ck_assert_str_eq(d.message, t[i].message);
        }
        alarm(0);
        /* A link to a regular file is used. */
        ck_assert_int_eq(symlink("../target", good), 0);
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_int_eq(template_load(dir, FORMAT_LUA, "modulerc", &text, &len, &name, &d), 0);
                ck_assert_str_eq(text, "-- x\n");
                ck_assert_str_eq(name, good);
                free(text);
                free(name);
        }
        fx_free(dir);
}
END_TEST

/* ---- the built-in templates ---- */

static const char *const kinds[] = { "cuda", "cudnn", "nccl", "modulerc", NULL };

struct module_values {
        const char *version, *source, *prefix, *help, *family, *modulepath;
        /* config modulerc (lmod-api): the message of a deprecated
         * version, and a name used as an alias and a tag of the version
         * (which is also hidden); "" or NULL: none. */
        const char *deprecated, *alias;
        /* config cuda_compat: the forward-compatibility directory and its
         * driver; NULL: none. The stubs give the node driver 535.104.05. */
        const char *compat_dir, *compat_driver;
        const char *conflict;   /* or NULL */
        const char *extensions; /* or NULL */
        const char *whatis[2];
        const char *dep[4]; /* name, min, max, em_spec */
        const char *ops[4][2];
        bool gpu;
};

static const struct module_values plain_values = {
        .version = "12.9",
        .source = "/opt/cuda-12.9",
        .prefix = "/opt/cuda-12.9",
        .help = "CUDA 12.9 in /opt/cuda-12.9.\n\nSets CUDA_HOME.",
        .family = "cuda",
        .modulepath = "/apps/modulefiles/CUDA/12",
        .conflict = "CUDA",
        .extensions = "cublas/12.9.1.4, nvcc/12.9.86",
        .whatis = { "Name: cuda", "Version: cuda/12.9" },
        .dep = { "cuda", "12", "12.999999", "cuda@12:12.999999" },
        .ops = { { "CUDA_HOME", "/opt/cuda-12.9" }, { "PATH", "/opt/cuda-12.9/bin" },
                 { "LIBRARY_PATH", "/opt/cuda-12.9/lib64/stubs" }, { "CUDA_ROOT", "/opt/cuda-12.9" } },
        .gpu = true,
};

static const struct module_values empty_values = { .version = "", .source = "", .prefix = "",
                                                   .help = "", .family = "", .modulepath = "" };

/* op i of the fill: setenv, prepend_path, append_path, pushenv in turn. */
static const char *const op_keys[] = { "setenv", "prepend_path", "append_path", "pushenv" };

static struct render_ctx *module_ctx(const struct module_values *v, const char *kind)
{
        struct render_ctx *c = render_ctx_new();
        _cleanup_free_ char *full = xasprintf("%s/%s", kind, v->version);

        render_ctx_set(c, "cudamod_version", "0.1.0");
        render_ctx_set(c, "source", v->source);
        render_ctx_set(c, "name", kind);
        render_ctx_set(c, "version", v->version);
        render_ctx_set(c, "full_name", full);
        render_ctx_set(c, "prefix", v->prefix);
        render_ctx_set_text(c, "description", v->help);
        render_ctx_set_text(c, "help", v->help);
        render_ctx_set(c, "family", v->family);
        render_ctx_set_list(c, "conflicts");
        if (v->conflict)
                render_ctx_set(render_ctx_add_item(c, "conflicts"), "name", v->conflict);
        render_ctx_set(c, "extensions", v->extensions ? v->extensions : "");
        render_ctx_set_bool(c, "property_gpu", v->gpu);
        render_ctx_set(c, "modulepath", v->modulepath);
        render_ctx_set(c, "deprecated", v->deprecated ? v->deprecated : "");
        render_ctx_set_list(c, "hidden");
        render_ctx_set_list(c, "aliases");
        render_ctx_set_list(c, "tags");
        if (v->alias && *v->alias) {
                _cleanup_free_ char *alias = xasprintf("%s/%s", kind, v->alias);
                struct render_ctx *it;

                render_ctx_set(render_ctx_add_item(c, "hidden"), "module", full);
                it = render_ctx_add_item(c, "aliases");
                render_ctx_set(it, "alias", alias);
                render_ctx_set(it, "module", full);
                it = render_ctx_add_item(c, "tags");
                render_ctx_set(it, "tag", v->alias);
                render_ctx_set(it, "module", full);
        }
        render_ctx_set_list(c, "whatis");
        render_ctx_set_list(c, "depends");
        render_ctx_set_list(c, "requires");
        render_ctx_set_list(c, "node_driver");
        if (v->compat_dir && *v->compat_dir) {
                struct render_ctx *it = render_ctx_add_item(c, "node_driver");

                render_ctx_set(it, "compat_dir", v->compat_dir);
                render_ctx_set(it, "compat_driver", v->compat_driver);
                render_ctx_set_bool(it, "check", false);
        }
        render_ctx_set_list(c, "ops");
        render_ctx_set_list(c, "defaults");
        for (size_t i = 0; i < 2 && v->whatis[i]; i++)
                render_ctx_set(render_ctx_add_item(c, "whatis"), "line", v->whatis[i]);
        if (v->dep[0]) {
                struct render_ctx *d = render_ctx_add_item(c, "depends");

                render_ctx_set(d, "name", v->dep[0]);
                render_ctx_set(d, "min", v->dep[1]);
                render_ctx_set(d, "max", v->dep[2]);
                render_ctx_set(d, "em_spec", v->dep[3]);
        }
        for (size_t i = 0; i < ELEMENTSOF(op_keys) && v->ops[i][0]; i++) {
                struct render_ctx *o = render_ctx_add_item(c, "ops");

                for (size_t k = 0; k < ELEMENTSOF(op_keys); k++)
                        render_ctx_set_bool(o, op_keys[k], k == i);
                render_ctx_set(o, "name", v->ops[i][0]);
                render_ctx_set(o, "value", v->ops[i][1]);
        }
        if (*v->version) {
                struct render_ctx *d = render_ctx_add_item(c, "defaults");

                render_ctx_set(d, "module", full);
                render_ctx_set(d, "version", v->version);
        }
        return c;
}

/* One call as the stub interpreters log it: the name, then each argument
 * as hex. */
static void log_call(struct strbuf *sb, const char *name, const char *a, const char *b,
                     const char *c)
{
        const char *args[] = { a, b, c };

        strbuf_addstr(sb, name);
        for (size_t i = 0; i < 3 && args[i]; i++) {
                _cleanup_free_ char *h = hex(args[i]);

                strbuf_addf(sb, " %s", h);
        }
        strbuf_addch(sb, '\n');
}

/* The calls a built-in template must make, in order. */
static char *expected_log(const struct module_values *v, const char *kind, bool rc,
                          enum module_format f)
{
        struct strbuf sb = STRBUF_INIT;
        bool lua = f == FORMAT_LUA;
        _cleanup_free_ char *full = xasprintf("%s/%s", kind, v->version);

        if (rc) {
                if (*v->version)
                        log_call(&sb, lua ? "module_version" : "module-version", full, "default", NULL);
                if (v->alias && *v->alias) {
                        _cleanup_free_ char *alias = xasprintf("%s/%s", kind, v->alias);

                        log_call(&sb, lua ? "hide_version" : "module-hide", full, NULL, NULL);
                        log_call(&sb, lua ? "module_alias" : "module-alias", alias, full, NULL);
                        if (!lua)
                                log_call(&sb, "module-tag", v->alias, full, NULL);
                }
                return strbuf_detach(&sb);
        }
        for (size_t i = 0; i < 2 && v->whatis[i]; i++)
                log_call(&sb, lua ? "whatis" : "module-whatis", v->whatis[i], NULL, NULL);
        if (lua)
                log_call(&sb, "help", v->help, NULL, NULL);
        if (*v->family)
                log_call(&sb, "family", v->family, NULL, NULL);
        if (v->conflict)
                log_call(&sb, "conflict", v->conflict, NULL, NULL);
        if (lua && v->extensions && *v->extensions)
                log_call(&sb, "extensions", v->extensions, NULL, NULL);
        if (v->gpu && lua)
                log_call(&sb, "add_property", "arch", "gpu", NULL);
        if (v->dep[0]) {
                if (lua) {
                        _cleanup_free_ char *b = xasprintf("%s %s %s", v->dep[0], v->dep[1], v->dep[2]);

                        log_call(&sb, "depends_on", b, NULL, NULL);
                } else {
                        log_call(&sb, "prereq", v->dep[3], NULL, NULL);
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(op_keys) && v->ops[i][0]; i++) {
                static const char *const tcl_ops[] = { "setenv", "prepend-path", "append-path", "pushenv" };

                log_call(&sb, lua ? op_keys[i] : tcl_ops[i], v->ops[i][0], v->ops[i][1], NULL);
        }
        if (*v->modulepath) {
                if (lua)
                        log_call(&sb, "prepend_path", "MODULEPATH", v->modulepath, NULL);
                else
                        log_call(&sb, "module", "use", v->modulepath, NULL);
        }
        if (v->deprecated && *v->deprecated)
                log_call(&sb, lua ? "LmodMessage" : "deprecated", v->deprecated, NULL, NULL);
        /* The node's driver (the block is last): the stubs give 535.104.05,
         * older than the compat one. */
        if (v->compat_dir && *v->compat_dir)
                log_call(&sb, lua ? "prepend_path" : "prepend-path", "LD_LIBRARY_PATH", v->compat_dir, NULL);
        /* The Tcl stubs call ModulesHelp after sourcing the file. */
        if (!lua)
                log_call(&sb, "help", v->help, NULL, NULL);
        return strbuf_detach(&sb);
}

/* Stubs for exactly the Lmod 8.6 functions the templates may call: any
 * other call is an error. between() returns its arguments joined. */
static const char lua_stubs[] =
        "local function hex(s)\n"
        "  return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end))\n"
        "end\n"
        "local out = {}\n"
        "local function stub(name)\n"
        "  return function(...)\n"
        "    local t = { name }\n"
        "    for i = 1, select('#', ...) do t[#t + 1] = hex((select(i, ...))) end\n"
        "    out[#out + 1] = table.concat(t, ' ') .. '\\n'\n"
        "  end\n"
        "end\n"
        "local env = { between = function(a, b, c) return a .. ' ' .. b .. ' ' .. c end,\n"
        "              mode = function() return 'load' end,\n"
        "              LmodVersion = function() return '8.6.19' end,\n"
        "              convertToCanonical = function(s) return s end,\n"
        "              pcall = pcall, type = type, ipairs = ipairs, tonumber = tonumber, math = math,\n"
        "              io = { open = function(f)\n"
        "                if f ~= '/proc/driver/nvidia/version' then return nil end\n"
        "                return { read = function() return 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 2023' end,\n"
        "                         close = function() end }\n"
        "              end } }\n"
        "for _, f in ipairs({ 'whatis', 'help', 'family', 'add_property', 'depends_on', 'setenv', 'pushenv',\n"
        "                     'prepend_path', 'append_path', 'module_version', 'LmodMessage',\n"
        "                     'hide_version', 'module_alias', 'conflict', 'extensions' }) do\n"
        "  env[f] = stub(f)\n"
        "end\n"
        "local chunk = assert(loadfile(arg[1]))\n"
        "setfenv(chunk, env)\n"
        "chunk()\n"
        "io.write(table.concat(out))\n";

static const char tcl_stubs[] =
        "proc hex s { binary scan [encoding convertto [encoding system] $s] H* h; return $h }\n"
        "set ::log {}\n"
        "proc rec {name args} {\n"
        "    set l [list $name]\n"
        "    foreach a $args { lappend l [hex $a] }\n"
        "    append ::log [join $l { }] \\n\n"
        "}\n"
        "foreach c {setenv pushenv prepend-path append-path module-whatis family prereq module module-version\n"
        "           module-hide module-alias module-tag conflict} {\n"
        "    interp alias {} $c {} rec $c\n"
        "}\n"
        "proc module-info {what args} { return [expr {$what eq {mode} && $args eq {load}}] }\n"
        "set f [open [lindex $argv 0] r]\n"
        "if {[gets $f] ne {#%Module}} { error {first line is not #%Module} }\n"
        "close $f\n"
        "rename open real_open\n"
        "proc open {f args} {\n"
        "    if {$f ne {/proc/driver/nvidia/version}} { error \"couldn't open \\\"$f\\\": no such file or directory\" }\n"
        "    set c [file tempfile path]\n"
        "    puts $c {NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 2023}\n"
        "    seek $c 0\n"
        "    file delete $path\n"
        "    return $c\n"
        "}\n"
        "rename puts real_puts\n"
        "proc puts {args} { if {[llength $args] == 2 && [lindex $args 0] eq {stderr}} { rec deprecated [lindex $args 1] } else { real_puts {*}$args } }\n"
        "source [lindex $argv 0]\n"
        "rename puts {}\n"
        "rename real_puts puts\n"
        "if {[info procs ModulesHelp] ne {}} {\n"
        "    rename puts real_puts\n"
        "    proc puts {args} { rec help [lindex $args end] }\n"
        "    ModulesHelp\n"
        "    rename puts {}\n"
        "    rename real_puts puts\n"
        "}\n"
        "puts -nonewline $::log\n";

/* Render each built-in template with v and check it with the real tools. */
static void check_builtin_templates(const struct module_values *v)
{
        _cleanup_free_ char *luac = program_or_note("luac5.1"), *lua = program_or_note("lua5.1"),
                            *tcl = program_or_note("tclsh");
        char *dir = fx_new();

        fx_write(dir, "stubs.lua", lua_stubs);
        fx_write(dir, "stubs.tcl", tcl_stubs);
        for (enum module_format f = FORMAT_LUA; f <= FORMAT_TCL; f++) {
                for (size_t i = 0; kinds[i]; i++) {
                        const struct template_text *t = template_builtin(f, kinds[i]);
                        bool rc = streq(kinds[i], "modulerc");
                        /* The modulerc names the default of the cuda module. */
                        struct render_ctx *c = module_ctx(v, rc ? "cuda" : kinds[i]);
                        _cleanup_diag_ struct diag d = DIAG_INIT;
                        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
                        _cleanup_free_ char *want = expected_log(v, rc ? "cuda" : kinds[i], rc, f);
                        const char *file = f == FORMAT_LUA ? "m.lua" : "m.tcl";
                        const char *prog = f == FORMAT_LUA ? lua : tcl;
                        struct run_result r;
                        int ret;

                        ck_assert_ptr_nonnull(t);
                        /* The escapers alone: the gate would refuse most. */
                        ret = render_ungated(t->text, t->len, t->name, f, c, &out, &d);
                        ck_assert_msg(ret == 0, "%s: %s", t->name, d.message);
                        render_ctx_free(c);
                        if (f == FORMAT_LUA)
                                ck_assert_msg(startswith(out.buf, "-- Generated by cudamod 0.1.0"),
                                              "%s: header:\n%.500s", t->name, out.buf);
                        else
                                ck_assert_msg(startswith(out.buf, "#%Module\n# Generated by cudamod 0.1.0"),
                                              "%s: header:\n%.500s", t->name, out.buf);
                        ck_assert_msg(!strstr(out.buf, "{{") && !strstr(out.buf, "\n\n\n"),
                                      "%s:\n%.2000s", t->name, out.buf);
                        fx_write(dir, file, out.buf);
                        if (f == FORMAT_LUA && luac) {
                                run_in(&r, dir, NULL, luac, "-p", file);
                                ck_assert_msg(r.status == 0, "luac5.1 -p %s: %.1000s\n%.2000s", t->name, r.err,
                                              out.buf);
                                run_result_release(&r);
                        }
                        if (prog) {
                                run_in(&r, dir, f == FORMAT_TCL ? env_c : NULL, prog,
                                       f == FORMAT_LUA ? "stubs.lua" : "stubs.tcl", file);
                                ck_assert_msg(r.status == 0, "%s: %.1000s\n%.2000s", t->name, r.err, out.buf);
                                ck_assert_msg(streq(r.out, want), "%s: calls\n%.1500s\nwant\n%.1500s", t->name,
                                              r.out, want);
                                ck_assert(!exists_in(dir, "X"));
                                run_result_release(&r);
                        }
                }
        }
        fx_free(dir);
}

START_TEST(builtin_templates_exist_for_every_kind_and_format)
{
        /* One template drives every component; the modulerc has its own. */
        for (enum module_format f = FORMAT_LUA; f <= FORMAT_TCL; f++) {
                for (size_t i = 0; kinds[i]; i++) {
                        const struct template_text *t = template_builtin(f, kinds[i]);
                        const char *file = streq(kinds[i], "modulerc") ? "modulerc" : "module";
                        _cleanup_free_ char *name = xasprintf("%s/%s.%s.in", f == FORMAT_LUA ? "lua" : "tcl",
                                                              file, f == FORMAT_LUA ? "lua" : "tcl");

                        ck_assert_ptr_nonnull(t);
                        ck_assert_str_eq(t->name, name);
                        ck_assert_uint_eq(strlen(t->text), t->len);
                        ck_assert_uint_gt(t->len, 0);
                }
        }
        ck_assert_ptr_null(template_builtin(FORMAT_LUA, "cudart"));
        ck_assert_ptr_null(template_builtin(FORMAT_LUA, "../lua/cuda"));
        ck_assert_ptr_null(template_builtin(_FORMAT_INVALID, "cuda"));
        ck_assert_ptr_null(template_builtin(FORMAT_TCL, NULL));
}
END_TEST

START_TEST(builtin_templates_render_loadable_modulefiles)
{
        check_builtin_templates(&plain_values);
}
END_TEST

START_TEST(builtin_templates_render_with_empty_values)
{
        check_builtin_templates(&empty_values);
}
END_TEST

START_TEST(builtin_templates_keep_hostile_values_literal)
{
        _cleanup_free_ char *bytes = all_bytes(), *line = all_bytes_of(false);
        const struct module_values v = {
                .version = "12.9\"]]$(touch X)[exec touch X]",
                .source = line,
                .prefix = "/opt/a b/$HOME/[x]/\"q\"/{/a\\",
                .help = bytes,
                .family = "cu}da{",
                .modulepath = "/apps/]=]/`touch X`",
                .deprecated = line,
                .compat_dir = "/c\"]]$(touch X)[exec touch X]{/compat} ]==]",
                .compat_driver = "575.51.03",
                .alias = "x.y_z+1-",
                .conflict = "CU]]DA\") os.execute('touch X') --[[ } exec touch X {",
                .extensions = "a/1\"), os.execute('touch X'), (\"]==] [exec touch X] $X",
                .whatis = { line, "Name: } ; exec touch X ; {" },
                .dep = { "cuda\"", "1]]", "2\\", "cuda@1:2;exec touch X" },
                .ops = { { "A", line }, { "B", "}\texec touch X\t{" }, { "C", "]] os.execute('touch X') --[[" },
                         { "D", "\" } [exec touch X] {" } },
                .gpu = true,
        };

        check_builtin_templates(&v);
}
END_TEST

START_TEST(builtin_lua_cuda_template_output_is_exact)
{
        const struct template_text *t = template_builtin(FORMAT_LUA, "cuda");
        struct render_ctx *c = module_ctx(&plain_values, "cuda");
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

        ck_assert_int_eq(render(t->text, t->len, t->name, FORMAT_LUA, c, &out, &d), 0);
        ck_assert_str_eq(out.buf,
                         "-- Generated by cudamod 0.1.0 from /opt/cuda-12.9\n"
                         "-- Edits are kept: once this file is changed, cudamod leaves it alone unless run with --force.\n"
                         "\n"
                         "whatis(\"Name: cuda\")\n"
                         "whatis(\"Version: cuda/12.9\")\n"
                         "help(\"CUDA 12.9 in /opt/cuda-12.9.\\\n\\\nSets CUDA_HOME.\")\n"
                         "\n"
                         "family(\"cuda\")\n"
                         "conflict(\"CUDA\")\n"
                         "if LmodVersion and convertToCanonical(LmodVersion()) >= convertToCanonical(\"8.2.8\") then\n"
                         "    extensions(\"cublas/12.9.1.4, nvcc/12.9.86\")\n"
                         "end\n"
                         "add_property(\"arch\", \"gpu\")\n"
                         "depends_on(between(\"cuda\", \"12\", \"12.999999\"))\n"
                         "setenv(\"CUDA_HOME\", \"/opt/cuda-12.9\")\n"
                         "prepend_path(\"PATH\", \"/opt/cuda-12.9/bin\")\n"
                         "append_path(\"LIBRARY_PATH\", \"/opt/cuda-12.9/lib64/stubs\")\n"
                         "pushenv(\"CUDA_ROOT\", \"/opt/cuda-12.9\")\n"
                         "prepend_path(\"MODULEPATH\", \"/apps/modulefiles/CUDA/12\")\n");
        render_ctx_free(c);
}
END_TEST

/* The driver check (config driver_check): the block is there only with
 * its item, the figures are quoted literals compared at load (never code),
 * the refusal only with refuse; nothing of it without the item. */
START_TEST(builtin_cuda_templates_hold_the_driver_check_only_when_asked)
{
        static const char *const want[2][3] = {
                { "older(driver, \"525.60.13\")", "older(driver, \"575.51.03\")",
                  "io.open(file, \"r\")" },
                { "set cudamod_major_min \"525.60.13\"", "set cudamod_release_min \"575.51.03\"",
                  "open $cudamod_file r" },
        };
        static const char *const refusal[2] = { "LmodError(text)", "puts stderr $cudamod_text\n        break\n" };
        static const char *const message[2] = { "LmodMessage(text)", "puts stderr $cudamod_text\n    } elseif" };

        for (enum module_format f = FORMAT_LUA; f <= FORMAT_TCL; f++)
                for (int mode = 0; mode < 3; mode++) { /* none, warn, refuse */
                        const struct template_text *t = template_builtin(f, "cuda");
                        struct render_ctx *c = module_ctx(&plain_values, "cuda");
                        _cleanup_diag_ struct diag d = DIAG_INIT;
                        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

                        if (mode) {
                                struct render_ctx *it = render_ctx_add_item(c, "node_driver");
                                render_ctx_set(it, "compat_dir", "");
                                render_ctx_set(it, "compat_driver", "");
                                render_ctx_set_bool(it, "check", true);
                                render_ctx_set(it, "cuda", "12.9");
                                render_ctx_set(it, "major_min", "525.60.13");
                                render_ctx_set(it, "release_min", "575.51.03");
                                render_ctx_set_bool(it, "refuse", mode == 2);
                        }
                        ck_assert_int_eq(render(t->text, t->len, t->name, f, c, &out, &d), 0);
                        for (size_t i = 0; i < 3; i++)
                                ck_assert_msg(!strstr(out.buf, want[f][i]) == !mode, "%s mode %d: %s in\n%s",
                                              t->name, mode, want[f][i], out.buf);
                        ck_assert(!strstr(out.buf, "/proc/driver/nvidia/version") == !mode);
                        ck_assert(!strstr(out.buf, refusal[f]) == (mode != 2));
                        ck_assert(!strstr(out.buf, message[f]) == (mode != 1));
                        render_ctx_free(c);
                }
}
END_TEST

START_TEST(builtin_tcl_cuda_template_output_is_exact)
{
        const struct template_text *t = template_builtin(FORMAT_TCL, "cuda");
        struct render_ctx *c = module_ctx(&plain_values, "cuda");
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

        ck_assert_int_eq(render(t->text, t->len, t->name, FORMAT_TCL, c, &out, &d), 0);
        ck_assert_str_eq(out.buf,
                         "#%Module\n"
                         "# Generated by cudamod 0.1.0 from /opt/cuda-12.9\n"
                         "# Edits are kept: once this file is changed, cudamod leaves it alone unless run with --force.\n"
                         "\n"
                         "module-whatis \"Name: cuda\"\n"
                         "module-whatis \"Version: cuda/12.9\"\n"
                         "proc ModulesHelp { } {\n"
                         "    puts stderr \"CUDA 12.9 in /opt/cuda-12.9.\n\nSets CUDA_HOME.\"\n"
                         "}\n"
                         "\n"
                         "family \"cuda\"\n"
                         "conflict \"CUDA\"\n"
                         "# Environment Modules: needs a cuda of this CUDA major (and unloads this\n"
                         "# module with it). Lmod reading this file skips it: its hierarchy does that.\n"
                         "if {![info exists ::ModuleTool] || $::ModuleTool ne \"Lmod\"} {\n"
                         "    prereq \"cuda@12:12.999999\"\n"
                         "}\n"
                         "setenv \"CUDA_HOME\" \"/opt/cuda-12.9\"\n"
                         "prepend-path \"PATH\" \"/opt/cuda-12.9/bin\"\n"
                         "append-path \"LIBRARY_PATH\" \"/opt/cuda-12.9/lib64/stubs\"\n"
                         "if {[info commands pushenv] eq \"\" || ([info exists ::ModuleTool] && $::ModuleTool eq \"Lmod\" &&\n"
                         "        [package vcompare $::ModuleToolVersion 8.7.6] < 0)} {\n"
                         "    setenv \"CUDA_ROOT\" \"/opt/cuda-12.9\"\n"
                         "} else {\n"
                         "    pushenv \"CUDA_ROOT\" \"/opt/cuda-12.9\"\n"
                         "}\n"
                         "module use \"/apps/modulefiles/CUDA/12\"\n");
        render_ctx_free(c);
}
END_TEST

/* ---- template_load ---- */

START_TEST(template_load_prefers_the_override_directory)
{
        char *dir = fx_new();
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *want_name = path_join(dir, "tcl/nccl.tcl.in");

        fx_write(dir, "tcl/nccl.tcl.in", "#%Module\nsetenv X {{prefix}}\n");
        for (int pass = 0; pass < 2; pass++) {
                const char *base = pass == 0 ? dir : "";
                char *text = NULL, *name = NULL;
                size_t len = 0;

                /* The override for tcl/nccl; built-in for the rest. */
                ck_assert_int_eq(template_load(base, FORMAT_TCL, "nccl", &text, &len, &name, &d), 0);
                if (pass == 0) {
                        ck_assert_str_eq(text, "#%Module\nsetenv X {{prefix}}\n");
                        ck_assert_str_eq(name, want_name);
                } else {
                        ck_assert_str_eq(name, "tcl/module.tcl.in");
                        ck_assert_mem_eq(text, template_builtin(FORMAT_TCL, "nccl")->text, len);
                }
                ck_assert_uint_eq(len, strlen(text));
                free(text);
                free(name);

                ck_assert_int_eq(template_load(base, FORMAT_LUA, "nccl", &text, &len, &name, &d), 0);
                ck_assert_str_eq(name, "lua/module.lua.in");
                ck_assert_uint_eq(len, template_builtin(FORMAT_LUA, "nccl")->len);
                free(text);
                free(name);
        }
        fx_free(dir);
}
END_TEST

/* A site's module.<ext>.in is every component's template, and its
 * <component>.<ext>.in wins over it for that component. */
START_TEST(template_load_takes_the_site_module_template_for_every_component)
{
        char *dir = fx_new();
        _cleanup_diag_ struct diag d = DIAG_INIT;

        fx_write(dir, "lua/module.lua.in", "setenv(\"ALL\", {{prefix}})\n");
        fx_write(dir, "lua/cudnn.lua.in", "setenv(\"DNN\", {{prefix}})\n");
        FOREACH_COMPONENT(c) {
                _cleanup_free_ char *want = path_join(dir, streq(c->name, "cudnn") ? "lua/cudnn.lua.in"
                                                                                    : "lua/module.lua.in");
                char *text = NULL, *name = NULL;
                size_t len = 0;

                ck_assert_int_eq(template_load(dir, FORMAT_LUA, c->name, &text, &len, &name, &d), 0);
                ck_assert_str_eq(name, want);
                ck_assert_ptr_nonnull(strstr(text, streq(c->name, "cudnn") ? "DNN" : "ALL"));
                free(text);
                free(name);
        }
        /* The modulerc is not a component: module.lua.in is not its template. */
        {
                char *text = NULL, *name = NULL;
                size_t len = 0;

                ck_assert_int_eq(template_load(dir, FORMAT_LUA, "modulerc", &text, &len, &name, &d), 0);
                ck_assert_str_eq(name, "lua/modulerc.lua.in");
                free(text);
                free(name);
        }
        fx_free(dir);
}
END_TEST

START_TEST(template_load_falls_back_when_the_directory_is_missing)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        char *text = NULL, *name = NULL;
        size_t len = 0;

        ck_assert_int_eq(template_load("/nonexistent/cudamod-templates", FORMAT_LUA, "modulerc", &text,
                                       &len, &name, &d), 0);
        ck_assert_str_eq(name, "lua/modulerc.lua.in");
        free(text);
        free(name);
        ck_assert_int_eq(template_load(NULL, FORMAT_LUA, "modulerc", &text, &len, &name, &d), 0);
        free(text);
        free(name);
}
END_TEST

START_TEST(template_load_reports_unusable_files)
{
        char *dir = fx_new();
        _cleanup_free_ char *big = xmalloc(1024 * 1024 + 2);
        _cleanup_free_ char *p_nul = path_join(dir, "lua/cudnn.lua.in");
        _cleanup_free_ char *p_big = path_join(dir, "lua/cuda.lua.in");
        _cleanup_free_ char *p_dir = path_join(dir, "tcl/cuda.tcl.in");
        _cleanup_free_ char *p_file = path_join(dir, "file");
        static const struct {
                const char *kind;
                enum module_format f;
                const char *message;
                unsigned line, col;
        } t[] = {
                { "cudnn", FORMAT_LUA, "template holds a NUL byte", 2, 3 },
                { "cuda", FORMAT_LUA, "template is larger than 1 MiB", 0, 0 },
                { "cuda", FORMAT_TCL, "template is not a regular file", 0, 0 },
                { NULL },
        };
        const char *paths[] = { p_nul, p_big, p_dir };
        char *text = (char *)"untouched", *name = (char *)"untouched";
        size_t len = 42;
        int fd;

        fx_write(dir, "lua/x", "");
        fd = open(p_nul, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "a\nbc\0d", 6), 6);
        close(fd);
        memset(big, 'x', 1024 * 1024 + 1);
        big[1024 * 1024 + 1] = '\0';
        fx_write(dir, "lua/cuda.lua.in", big);
        fx_mkdir(dir, "tcl/cuda.tcl.in");
        for (size_t i = 0; t[i].kind; i++) {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_int_lt(template_load(dir, t[i].f, t[i].kind, &text, &len, &name, &d), 0);
                ck_assert_str_eq(d.file, paths[i]);
                ck_assert_str_eq(d.message, t[i].message);
                ck_assert_uint_eq(d.line, t[i].line);
                ck_assert_uint_eq(d.col, t[i].col);
        }
        /* A file where the directory should be. */
        fx_write(dir, "file", "");
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_int_eq(template_load(p_file, FORMAT_LUA, "cuda", &text, &len, &name, &d), -ENOTDIR);
                ck_assert_ptr_nonnull(strstr(d.file, "/file/lua/cuda.lua.in"));
        }
        {
                _cleanup_diag_ struct diag d = DIAG_INIT;

                ck_assert_int_eq(template_load(dir, FORMAT_LUA, "cudart", &text, &len, &name, &d), -EINVAL);
                ck_assert_str_eq(d.message, "no template 'cudart' for format 'lua'");
        }
        ck_assert_str_eq(text, "untouched");
        ck_assert_str_eq(name, "untouched");
        ck_assert_uint_eq(len, 42);
        fx_free(dir);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("render");
        TCase *tc = tcase_create("render");
        TCase *ti = tcase_create("interpreters");
        TCase *tt = tcase_create("templates");

        tcase_add_test(tc, render_substitutes_values_as_quoted_literals);
        tcase_add_test(tc, render_escapes_lua_with_lua51_escapes_only);
        tcase_add_test(tc, render_escapes_tcl_specials_and_control_bytes);
        tcase_add_test(tc, render_comment_tag_replaces_unsafe_bytes);
        tcase_add_test(tc, render_rejects_unknown_format);
        tcase_add_test(tc, render_section_repeats_for_each_list_item);
        tcase_add_test(tc, render_section_over_string_and_bool_renders_once_when_set);
        tcase_add_test(tc, render_inverted_section_renders_when_empty_or_false);
        tcase_add_test(tc, render_nested_lists_look_up_outer_contexts);
        tcase_add_test(tc, render_ctx_set_replaces_and_set_list_keeps_items);
        tcase_add_test(tc, render_nesting_is_limited_to_32_sections);
        tcase_add_test(tc, render_output_is_bounded);
        tcase_add_test(tc, render_removes_standalone_tag_lines_exactly);
        tcase_add_test(tc, render_drops_comment_tags);
        tcase_add_test(tc, render_errors_report_template_position);
        tcase_add_test(tc, render_reads_only_len_bytes);
        suite_add_tcase(s, tc);

        tcase_set_timeout(ti, 120);
        tcase_add_test(ti, render_hostile_values_round_trip_through_interpreters);
        tcase_add_test(ti, render_hostile_values_stay_literal_inside_tcl_braced_body);
        tcase_add_test(ti, render_hostile_comment_text_cannot_escape_the_comment);
        tcase_add_test(ti, render_comment_text_cannot_end_a_braced_body_or_long_comment);
        tcase_add_test(ti, tcl_reader_agrees_with_info_complete);
        suite_add_tcase(s, ti);

        tcase_set_timeout(tt, 60);
        tcase_add_test(tt, builtin_templates_exist_for_every_kind_and_format);
        tcase_add_test(tt, builtin_templates_render_loadable_modulefiles);
        tcase_add_test(tt, builtin_templates_render_with_empty_values);
        tcase_add_test(tt, builtin_templates_keep_hostile_values_literal);
        tcase_add_test(tt, builtin_lua_cuda_template_output_is_exact);
        tcase_add_test(tt, builtin_tcl_cuda_template_output_is_exact);
        tcase_add_test(tt, builtin_cuda_templates_hold_the_driver_check_only_when_asked);
        tcase_add_test(tt, template_load_prefers_the_override_directory);
        tcase_add_test(tt, template_load_takes_the_site_module_template_for_every_component);
        tcase_add_test(tt, template_load_falls_back_when_the_directory_is_missing);
        tcase_add_test(tt, template_load_reports_unusable_files);
        tcase_add_test(tt, template_load_refuses_fifo_dangling_link_and_empty_file);
        tcase_add_test(tt, render_gate_refuses_control_characters_naming_their_origin);
        tcase_add_test(tt, modulefile_check_syntax_accepts_modules_and_reports_breakage);
        suite_add_tcase(s, tt);
        return run_suite(s);
}
