/* render.h: a small logic-less template renderer (mustache-like) whose
 * every substitution is a complete, escaped string literal of the target
 * language, so a template author cannot forget to quote or escape.
 *
 * Template syntax:
 *   {{key}}        the value as a quoted literal: Lua "…" (escapes \\ \" \r,
 *                  a newline as a backslash before a real newline, and \ddd
 *                  for other control bytes and bytes >= 0x80), Tcl "…"
 *                  (escapes \\ \" $ [ ] { }, \ooo for control bytes but the
 *                  newline, which stays literal; other bytes verbatim)
 *   {{%key}}       the value as comment text: a tab, bytes >= 0x80 and each
 *                  of \ " ' $ [ ] { } become '?', so it cannot end or
 *                  continue a line comment, end a Lua long comment or
 *                  long string (]]), a Tcl braced body or braced word
 *                  ({ }), or a Lua or Tcl quoted string (" ' \ $ [)
 *   {{#key}}…{{/key}}  a section: for a list, once per item with the item
 *                  as the innermost context; for a string, once when it is
 *                  not empty; for a bool, once when true
 *   {{^key}}…{{/key}}  an inverted section: once when the key is an empty
 *                  list, an empty string, false
 *   {{!text}}      a comment, dropped
 * A line holding only a section tag, an inverted tag, a closing tag or a
 * comment (and blanks) is removed whole, as mustache's standalone rule.
 * Keys are [A-Za-z0-9_]+ and are looked up from the innermost context out;
 * an unknown key, an unclosed or mismatched section, or a value used as
 * the wrong kind ({{list}}) is an error at TEMPLATE:LINE:COL.
 *
 * The gate: before anything is rendered, every string value of the context
 * tree is checked, whatever the template uses, and a value that some
 * reader of the modulefile would take as code (written_value_problem in
 * util-path.h: a control character, ']', and but in a text value set with
 * render_ctx_set_text also '"', '\\', '$' and '`'; a text may hold
 * newlines) is an error naming the value's origin ("site.yaml:4:19:
 * 'pytorch.cuda_arch_list'") when the caller gave one, else the template
 * and the key. No escaping in the modulefile prevents those: Lmod and
 * Environment Modules write a newline raw into the shell code they print,
 * and Lmod's tcl2lua copies a Tcl modulefile's values raw into the Lua
 * code it runs (doc/guide.md "Threat model").
 *
 * A render_ctx owns its keys, values and child contexts; render_ctx_free
 * frees the whole tree. Setting a key again replaces its value. */
#ifndef CUDAMOD_RENDER_H
#define CUDAMOD_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "diag.h"
#include "strbuf.h"

struct render_ctx;

struct render_ctx *render_ctx_new(void);
void render_ctx_free(struct render_ctx *c);
void render_ctx_set(struct render_ctx *c, const char *key, const char *value);
/* A value and where it came from, for the gate's message: "FILE:LINE:COL:
 * 'dotted.key'" or "'FILE': key" (origin may be NULL: unknown). */
void render_ctx_set_from(struct render_ctx *c, const char *key, const char *value,
                         const char *origin);
/* Text for people (help, messages): newlines, quotes, backslashes, '$'
 * and '`' allowed; other control bytes and ']' not. */
void render_ctx_set_text(struct render_ctx *c, const char *key, const char *value);
void render_ctx_set_bool(struct render_ctx *c, const char *key, bool value);
/* Make `key` a list (empty when never added to) without adding an item. */
void render_ctx_set_list(struct render_ctx *c, const char *key);
/* Append a new item (an empty context, owned by c) to the list `key`,
 * creating the list; returns the item to fill. */
struct render_ctx *render_ctx_add_item(struct render_ctx *c, const char *key);

/* Render tmpl (len bytes, named name in messages) with ctx for lang,
 * appending to out. Returns 0, or -EINVAL with d set (out then holds
 * partial text the caller must discard). */
int render(const char *tmpl, size_t len, const char *name, enum module_format lang,
           const struct render_ctx *ctx, struct strbuf *out, struct diag *d);

/* render without the gate: for the tests of the escapers alone, which must
 * hold for every byte string whatever the gate lets through. */
int render_ungated(const char *tmpl, size_t len, const char *name, enum module_format lang,
                   const struct render_ctx *ctx, struct strbuf *out, struct diag *d);

/* What {{key}} (or, comment, {{%key}}) renders s to in lang, appended to
 * out, without the gate: the escapers hold for every byte string on their
 * own (tests/fuzz/fuzz-escape.c checks that). */
void render_escape(enum module_format lang, bool comment, const char *s, struct strbuf *out);

/* Built-in templates: "cuda", "cudnn", "nccl", "modulerc" for each format.
 * The text is compiled into the binary from templates/<lua|tcl>/<name>.<lua|tcl>.in. */
struct template_text {
        const char *name;     /* "lua/cuda.lua.in" (for messages) */
        const char *text;
        size_t len;
};
const struct template_text *template_builtin(enum module_format f, const char *kind);

/* The template for kind: from dir (the config `templates:` directory,
 * file <lua|tcl>/<kind>.<lua|tcl>.in) when dir is non-empty and holds that
 * file, else the built-in one. *ret_text is newly allocated, *ret_name is
 * the file name for messages (newly allocated). A file that exists but is
 * not a regular file (a FIFO, a directory, a device: checked before it is
 * opened, and opened without blocking), a dangling symbolic link, a file
 * that cannot be read, an empty one or one larger than 1 MiB is an error
 * naming it; only a name that does not exist at all means the built-in. */
int template_load(const char *dir, enum module_format f, const char *kind, char **ret_text,
                  size_t *ret_len, char **ret_name, struct diag *d);

#endif
