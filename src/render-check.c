/* render-check.c: whether a rendered modulefile parses, before it is
 * written: Lua through the embedded Lua's loader (compiled, never run),
 * Tcl through a reader of Tcl's syntax rules (the Tcl(n) manual's twelve
 * rules, as Tcl_ParseCommand and `info complete` apply them): commands
 * end at a newline or ';', '#' at a command's start is a comment to the
 * end of the line, a word is braced ({…}, braces nest, a backslash escapes
 * the next byte), quoted ("…") or bare, and quoted and bare words hold
 * command substitutions ([…], a script) and variables ($name, ${name},
 * $name(index)). A close brace or quote must end its word. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "render-check.h"
#include "strbuf.h"
#include "util.h"
#include "banned.h"

/* ---- Tcl ---- */

#define TCL_MAX_NESTING 256

struct tcl_reader {
        const char *s;
        size_t len, at;
        struct strbuf *shape; /* or NULL */
        unsigned depth;
        size_t err_at, open_at; /* the error, and what it belongs to */
        const char *err;
};

static int tcl_fail(struct tcl_reader *t, size_t at, size_t open_at, const char *what)
{
        t->err_at = at;
        t->open_at = open_at;
        t->err = what;
        return -EINVAL;
}

static bool tcl_space(char c)
{
        return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

static bool tcl_at_end(const struct tcl_reader *t)
{
        return t->at >= t->len;
}

static char tcl_peek(const struct tcl_reader *t)
{
        return tcl_at_end(t) ? '\0' : t->s[t->at];
}

static void shape_add(struct tcl_reader *t, const char *what)
{
        if (t->shape)
                strbuf_addstr(t->shape, what);
}

static int tcl_script(struct tcl_reader *t, bool bracketed);

/* A backslash sequence at t->at: the backslash and the byte after it
 * (a backslash-newline takes the blanks after it too, as Tcl does). */
static void tcl_backslash(struct tcl_reader *t)
{
        t->at++;
        if (tcl_at_end(t))
                return;
        if (t->s[t->at++] == '\n')
                while (!tcl_at_end(t) && tcl_space(t->s[t->at]))
                        t->at++;
}

/* [script] at t->at. */
static int tcl_command_subst(struct tcl_reader *t)
{
        size_t open = t->at;
        int r;

        if (++t->depth > TCL_MAX_NESTING)
                return tcl_fail(t, open, open, "brackets nested too deep");
        t->at++;
        shape_add(t, "[");
        r = tcl_script(t, true);
        if (r < 0)
                return r;
        if (tcl_at_end(t))
                return tcl_fail(t, t->at, open, "missing close-bracket");
        t->at++;
        shape_add(t, "]");
        t->depth--;
        return 0;
}

static int tcl_variable(struct tcl_reader *t);

/* One character of a word where substitutions happen, or the backslash,
 * command or variable substitution that starts there. */
static int tcl_substitution_step(struct tcl_reader *t)
{
        switch (t->s[t->at]) {
        case '\\':
                tcl_backslash(t);
                return 0;
        case '[':
                return tcl_command_subst(t);
        case '$':
                return tcl_variable(t);
        default:
                t->at++;
                return 0;
        }
}

/* Substitutions up to stop (not taken) or the end: the inside of a quoted
 * word or of an array index. */
static int tcl_substitutions_until(struct tcl_reader *t, char stop)
{
        while (!tcl_at_end(t) && t->s[t->at] != stop) {
                int r = tcl_substitution_step(t);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* $name, ${name} or $name(index) at t->at; a lone $ is a literal. */
static int tcl_variable(struct tcl_reader *t)
{
        size_t open = t->at++;
        int r;

        if (tcl_peek(t) == '{') {
                const char *close = memchr(t->s + t->at, '}', t->len - t->at);

                if (!close)
                        return tcl_fail(t, t->len, open, "missing close-brace for variable name");
                t->at = (size_t)(close - t->s) + 1;
                shape_add(t, "$");
                return 0;
        }
        {
                size_t name = t->at;

                while (!tcl_at_end(t)) {
                        char c = t->s[t->at];

                        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
                                t->at++;
                        else if (c == ':' && t->at + 1 < t->len && t->s[t->at + 1] == ':')
                                t->at += 2;
                        else
                                break;
                }
                if (t->at == name && tcl_peek(t) != '(')
                        return 0;
        }
        shape_add(t, "$");
        if (tcl_peek(t) != '(')
                return 0;
        /* The index: substitutions, up to ')'. */
        open = t->at++;
        r = tcl_substitutions_until(t, ')');
        if (r < 0)
                return r;
        if (tcl_at_end(t))
                return tcl_fail(t, t->len, open, "missing )");
        t->at++;
        return 0;
}

/* Whether the byte at t->at ends a word (or t is at its end). */
static bool tcl_word_end(const struct tcl_reader *t, bool bracketed)
{
        char c = tcl_peek(t);

        return tcl_at_end(t) || tcl_space(c) || c == '\n' || c == ';' || (bracketed && c == ']') ||
               (c == '\\' && t->at + 1 < t->len && t->s[t->at + 1] == '\n');
}

/* A braced word at t->at; its content, as a script when it reads as one,
 * goes into the shape (a proc's body, an if's branches). */
static int tcl_braced(struct tcl_reader *t, bool bracketed)
{
        size_t open = t->at, depth = 0;

        do {
                char c = t->s[t->at];

                if (c == '\\') {
                        tcl_backslash(t);
                        continue;
                }
                if (c == '{')
                        depth++;
                else if (c == '}')
                        depth--;
                t->at++;
        } while (depth > 0 && !tcl_at_end(t));
        if (depth > 0)
                return tcl_fail(t, t->len, open, "missing close-brace");
        if (t->shape) {
                struct tcl_reader inner = { .s = t->s + open + 1, .len = t->at - open - 2,
                                            .shape = t->shape, .depth = t->depth + 1 };
                size_t mark = t->shape->len;

                strbuf_addch(t->shape, '{');
                if (inner.depth > TCL_MAX_NESTING || tcl_script(&inner, false) < 0) {
                        strbuf_setlen(t->shape, mark);
                        strbuf_addstr(t->shape, "{?");
                }
                strbuf_addch(t->shape, '}');
        }
        /* {*} before a word expands it. */
        if (t->at - open == 3 && t->s[open + 1] == '*' && !tcl_word_end(t, bracketed))
                return 1;
        if (!tcl_word_end(t, bracketed))
                return tcl_fail(t, t->at, open, "extra characters after close-brace");
        return 0;
}

static int tcl_quoted(struct tcl_reader *t, bool bracketed)
{
        size_t open = t->at++;
        int r;

        shape_add(t, "\"");
        r = tcl_substitutions_until(t, '"');
        if (r < 0)
                return r;
        if (tcl_at_end(t))
                return tcl_fail(t, t->len, open, "missing \"");
        t->at++;
        shape_add(t, "\"");
        if (!tcl_word_end(t, bracketed))
                return tcl_fail(t, t->at, open, "extra characters after close-quote");
        return 0;
}

static int tcl_bare(struct tcl_reader *t, bool bracketed)
{
        shape_add(t, "w");
        while (!tcl_word_end(t, bracketed)) {
                int r = tcl_substitution_step(t);

                if (r < 0)
                        return r;
        }
        return 0;
}

static int tcl_word(struct tcl_reader *t, bool bracketed)
{
        for (;;) {
                int r;

                if (tcl_peek(t) == '{') {
                        r = tcl_braced(t, bracketed);
                        if (r > 0)
                                continue; /* {*}: the word itself follows */
                        return r;
                }
                if (tcl_peek(t) == '"')
                        return tcl_quoted(t, bracketed);
                return tcl_bare(t, bracketed);
        }
}

/* A script up to its end, or (bracketed) up to the ']' that ends it,
 * left at t->at. */
static int tcl_script(struct tcl_reader *t, bool bracketed)
{
        for (;;) {
                /* Between commands: blanks, newlines, ';'. */
                while (!tcl_at_end(t)) {
                        char c = t->s[t->at];

                        if (tcl_space(c) || c == '\n' || c == ';')
                                t->at++;
                        else if (c == '\\' && t->at + 1 < t->len && t->s[t->at + 1] == '\n')
                                tcl_backslash(t);
                        else
                                break;
                }
                if (tcl_at_end(t) || (bracketed && t->s[t->at] == ']'))
                        return 0;
                if (t->s[t->at] == '#') {
                        while (!tcl_at_end(t) && t->s[t->at] != '\n') {
                                if (t->s[t->at] == '\\')
                                        tcl_backslash(t);
                                else
                                        t->at++;
                        }
                        shape_add(t, "#");
                        continue;
                }
                shape_add(t, "(");
                for (;;) {
                        int r;

                        while (!tcl_at_end(t) && (tcl_space(t->s[t->at]) ||
                                                  (t->s[t->at] == '\\' && t->at + 1 < t->len &&
                                                   t->s[t->at + 1] == '\n')))
                                if (t->s[t->at] == '\\')
                                        tcl_backslash(t);
                                else
                                        t->at++;
                        if (tcl_at_end(t) || t->s[t->at] == '\n' || t->s[t->at] == ';' ||
                            (bracketed && t->s[t->at] == ']'))
                                break;
                        r = tcl_word(t, bracketed);
                        if (r < 0)
                                return r;
                }
                shape_add(t, ")");
        }
}

/* Line and column (1-based) of byte at in s. */
static void position_of(const char *s, size_t at, unsigned *line, unsigned *col)
{
        *line = 1;
        *col = 1;
        for (size_t i = 0; i < at; i++) {
                if (s[i] == '\n') {
                        (*line)++;
                        *col = 1;
                } else {
                        (*col)++;
                }
        }
}

int tcl_script_shape(const char *text, size_t len, struct strbuf *shape)
{
        struct tcl_reader t = { .s = text, .len = len, .shape = shape };

        return tcl_script(&t, false);
}

static int check_tcl(const char *text, size_t len, const char *name, struct diag *d)
{
        struct tcl_reader t = { .s = text, .len = len };
        unsigned line, col, oline, ocol;

        if (tcl_script(&t, false) >= 0)
                return 0;
        position_of(text, t.err_at, &line, &col);
        position_of(text, t.open_at, &oline, &ocol);
        if (t.open_at == t.err_at)
                return diag_set(d, -EINVAL, name, line, col,
                                "the rendered modulefile does not parse as Tcl: %s", t.err);
        return diag_set(d, -EINVAL, name, line, col,
                        "the rendered modulefile does not parse as Tcl: %s (for what opens at %u:%u)",
                        t.err, oline, ocol);
}

/* ---- Lua ---- */

/* Lua's message "NAME:LINE: what" as a diag at NAME:LINE. */
static int lua_message_diag(const char *msg, const char *name, struct diag *d)
{
        size_t n = strlen(name);
        unsigned long line = 0;
        const char *p = msg;

        if (strncmp(msg, name, n) == 0 && msg[n] == ':') {
                char *end;

                line = strtoul(msg + n + 1, &end, 10);
                if (end != msg + n + 1 && *end == ':' && line <= 0xffffffffUL) {
                        p = end + 1;
                        while (*p == ' ')
                                p++;
                } else {
                        line = 0;
                }
        }
        return diag_set(d, -EINVAL, name, (unsigned)line, 0,
                        "the rendered modulefile does not parse as Lua: %s", p);
}

static int check_lua(const char *text, size_t len, const char *name, struct diag *d)
{
        _cleanup_free_ char *chunk = xasprintf("@%s", name);
        lua_State *L = luaL_newstate();
        int r = 0;

        if (!L)
                return diag_set(d, -ENOMEM, name, 0, 0, "cannot create a Lua state");
        /* Compiled only: nothing in the file runs. */
        if (luaL_loadbufferx(L, text, len, chunk, "t") != LUA_OK) {
                const char *msg = lua_tostring(L, -1);

                r = lua_message_diag(msg ? msg : "?", name, d);
        }
        lua_close(L);
        return r;
}

int modulefile_check_syntax(const char *text, size_t len, const char *name,
                            enum module_format lang, struct diag *d)
{
        switch (lang) {
        case FORMAT_LUA:
                return check_lua(text, len, name, d);
        case FORMAT_TCL:
                return check_tcl(text, len, name, d);
        default:
                return diag_set(d, -EINVAL, name, 0, 0, "unknown module format");
        }
}
