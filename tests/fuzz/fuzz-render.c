/* fuzz-render.c: the template renderer on hostile templates and hostile
 * values (libFuzzer).
 *
 * Input: one byte choosing the format and the template (bit 0: Tcl, bit 1:
 * the built-in cuda template instead of a fuzzed one), then NUL-separated
 * fields: the template (when fuzzed), then the values, in the order of
 * keys[] below, reused round-robin. Every key generate sets is set, so the
 * built-in templates and templates like them render.
 *
 * The property besides not crashing: a built-in Lua template rendered with
 * any values is a modulefile the Lmod sandbox evaluates without a syntax
 * error, and its setenv of CUDAMOD_FUZZ carries the value unchanged — no
 * value can end a string literal or inject code. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmod-sandbox.h"
#include "render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fields {
        const char *item[64];
        size_t n, next;
};

static const char *next_value(struct fields *f)
{
        if (f->n == 0)
                return "";
        return f->item[f->next++ % f->n];
}

/* A variable name as the config accepts one, else a fixed one: the sandbox
 * refuses a name no environment can carry, such as "" or "A=B", so a
 * fuzzed one would fail the property for a value that can never reach a
 * template. */
static const char *variable_name(const char *s)
{
        return env_name_valid(s) ? s : "CUDAMOD_FUZZ_PATH";
}

static void fill(struct render_ctx *ctx, struct fields *f, const char **fuzz_value)
{
        static const char *const keys[] = { "cudamod_version", "source", "name", "version",
                                            "full_name", "prefix", "description", "help",
                                            "family", "modulepath", "deprecated", "extensions" };
        struct render_ctx *it;

        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                render_ctx_set(ctx, keys[i], next_value(f));
        render_ctx_set_bool(ctx, "property_gpu", f->n % 2 == 0);
        render_ctx_set_list(ctx, "conflicts");
        render_ctx_set(render_ctx_add_item(ctx, "conflicts"), "name", next_value(f));
        render_ctx_set_list(ctx, "whatis");
        for (int i = 0; i < 2; i++)
                render_ctx_set(render_ctx_add_item(ctx, "whatis"), "line", next_value(f));
        render_ctx_set_list(ctx, "depends");
        it = render_ctx_add_item(ctx, "depends");
        render_ctx_set(it, "name", next_value(f));
        render_ctx_set(it, "min", next_value(f));
        render_ctx_set(it, "max", next_value(f));
        render_ctx_set(it, "em_spec", next_value(f));
        render_ctx_set_list(ctx, "requires");
        render_ctx_set(render_ctx_add_item(ctx, "requires"), "module", next_value(f));
        render_ctx_set_list(ctx, "ops");
        it = render_ctx_add_item(ctx, "ops");
        render_ctx_set_bool(it, "setenv", true);
        render_ctx_set_bool(it, "prepend_path", false);
        render_ctx_set_bool(it, "append_path", false);
        render_ctx_set_bool(it, "pushenv", false);
        render_ctx_set(it, "name", "CUDAMOD_FUZZ");
        *fuzz_value = next_value(f);
        render_ctx_set(it, "value", *fuzz_value);
        /* The same value pushed (a root variable's pushenv). */
        it = render_ctx_add_item(ctx, "ops");
        render_ctx_set_bool(it, "setenv", false);
        render_ctx_set_bool(it, "prepend_path", false);
        render_ctx_set_bool(it, "append_path", false);
        render_ctx_set_bool(it, "pushenv", true);
        render_ctx_set(it, "name", "CUDAMOD_FUZZ_PUSHED");
        render_ctx_set(it, "value", *fuzz_value);
        it = render_ctx_add_item(ctx, "ops");
        render_ctx_set_bool(it, "setenv", false);
        render_ctx_set_bool(it, "prepend_path", true);
        render_ctx_set_bool(it, "append_path", false);
        render_ctx_set_bool(it, "pushenv", false);
        render_ctx_set(it, "name", variable_name(next_value(f)));
        render_ctx_set(it, "value", next_value(f));
        /* The node's driver: the check and the forward-compatibility
         * libraries. */
        render_ctx_set_list(ctx, "node_driver");
        it = render_ctx_add_item(ctx, "node_driver");
        render_ctx_set(it, "compat_dir", next_value(f));
        render_ctx_set(it, "compat_driver", next_value(f));
        render_ctx_set_bool(it, "check", true);
        render_ctx_set(it, "cuda", next_value(f));
        render_ctx_set(it, "major_min", next_value(f));
        render_ctx_set(it, "release_min", next_value(f));
        render_ctx_set_bool(it, "refuse", f->n % 2 == 0);
        render_ctx_set_list(ctx, "defaults");
        it = render_ctx_add_item(ctx, "defaults");
        render_ctx_set(it, "module", next_value(f));
        render_ctx_set(it, "version", next_value(f));
        render_ctx_set_list(ctx, "hidden");
        render_ctx_set(render_ctx_add_item(ctx, "hidden"), "module", next_value(f));
        render_ctx_set_list(ctx, "aliases");
        it = render_ctx_add_item(ctx, "aliases");
        render_ctx_set(it, "alias", next_value(f));
        render_ctx_set(it, "module", next_value(f));
        render_ctx_set_list(ctx, "tags");
        it = render_ctx_add_item(ctx, "tags");
        render_ctx_set(it, "tag", next_value(f));
        render_ctx_set(it, "module", next_value(f));
}

static void check_lua_module(const struct strbuf *text, const char *want)
{
        struct sandbox_options o = { .module_name = "cuda", .module_version = "12.9" };
        struct sandbox_result res = { 0 };
        struct diag d = DIAG_INIT;
        const char *got = NULL, *pushed = NULL;

        if (sandbox_eval(text->buf, text->len, "cuda/12.9.lua", &o, &res, &d) < 0) {
                fprintf(stderr, "the built-in template rendered a modulefile the sandbox refuses: %s\n%s",
                        d.message ? d.message : "?", text->buf);
                abort();
        }
        for (size_t i = 0; i < res.n_ops; i++)
                if (res.ops[i].kind == SANDBOX_SETENV && res.ops[i].name &&
                    strcmp(res.ops[i].name, "CUDAMOD_FUZZ") == 0)
                        got = res.ops[i].value;
                else if (res.ops[i].kind == SANDBOX_PUSHENV && res.ops[i].name &&
                         strcmp(res.ops[i].name, "CUDAMOD_FUZZ_PUSHED") == 0)
                        pushed = res.ops[i].value;
        if (!pushed || strcmp(pushed, want) != 0) {
                fprintf(stderr, "pushenv(CUDAMOD_FUZZ_PUSHED) does not carry the value: %s\n%s",
                        pushed ? "changed" : "missing", text->buf);
                abort();
        }
        if (!got || strcmp(got, want) != 0) {
                fprintf(stderr, "setenv(CUDAMOD_FUZZ) does not carry the value: %s\n%s",
                        got ? "changed" : "missing", text->buf);
                abort();
        }
        sandbox_result_release(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fields f = { 0 };
        struct render_ctx *ctx;
        struct strbuf out = STRBUF_INIT;
        struct diag d = DIAG_INIT;
        const char *tmpl, *fuzz_value = "";
        size_t tmpl_len;
        enum module_format lang;
        bool builtin;
        char *s;

        if (size == 0)
                return 0;
        lang = data[0] & 1 ? FORMAT_TCL : FORMAT_LUA;
        builtin = data[0] & 2;
        s = malloc(size);
        if (!s)
                return 0;
        memcpy(s, data + 1, size - 1);
        s[size - 1] = '\0';

        /* Split on NUL: field 0 is the fuzzed template (unless built in). */
        for (char *p = s, *end = s + size - 1; f.n < 64; p += strlen(p) + 1) {
                f.item[f.n++] = p;
                if (p + strlen(p) >= end)
                        break;
        }
        if (builtin) {
                const struct template_text *t = template_builtin(lang, "cuda");
                tmpl = t->text;
                tmpl_len = t->len;
        } else {
                tmpl = f.item[0];
                tmpl_len = strlen(f.item[0]);
                f.next = 1;
        }
        ctx = render_ctx_new();
        fill(ctx, &f, &fuzz_value);
        if (render(tmpl, tmpl_len, "fuzz.in", lang, ctx, &out, &d) == 0) {
                if (builtin && lang == FORMAT_LUA)
                        check_lua_module(&out, fuzz_value);
        } else if (builtin && !strstr(d.message, "the value of '")) {
                /* The renderer's gate refuses what a reader would take as
                 * code (fuzz-escape and fuzz-modulefile check that it
                 * refuses exactly that); any other error is a bug. */
                fprintf(stderr, "the built-in template failed to render: %s\n", d.message);
                abort();
        }
        diag_release(&d);
        strbuf_release(&out);
        render_ctx_free(ctx);
        free(s);
        return 0;
}
