/* evaluate-show.c: the path entries a module's own calls name, read from
 * what the module tool's `module show` printed (evaluate-tool.c runs it).
 *
 * Environment Modules prints Tcl-like lines ("prepend-path\tVAR /dir").
 * Lmod prints one Lua call per command (utils.lua ShowCmdStr, MC_Show.lua;
 * the recordings in tests/data/lmod-show/ show each shape):
 *
 *   prepend_path("VAR","/dir")                          8.0 .. 8.7, defaults
 *   prepend_path{"VAR","/dir",delim=" "}                a delim other than ":"
 *   prepend_path{"VAR","/dir",priority="100"}           a priority other than 0
 *   prepend_path{"VAR","/dir",delim=":",priority="0"}   a Tcl modulefile read
 *                                                       through tcl2lua.tcl (8.7)
 *
 * Lmod's ShowCmdStr quotes values without escaping them (8.6: a '"' or a
 * newline in a value is printed as it is), while tcl2lua.tcl and
 * doubleQuoteString escape them as Lua does; both are read: a backslash
 * starts a Lua escape, and a quote (or a long string's "]]") ends a string
 * only where a ',' or the closing bracket follows it. Every Lmod line must be understood: a line
 * that is none of the header, separator, blank, comment (source_sh's
 * "--source_sh(...)") or a call of a command Lmod's show prints is an
 * error, so that a format cudamod does not know can never make a module
 * look as if it named no path at all. */
#include <errno.h>

#include "evaluate-modulepath.h"
#include "evaluate-show.h"
#include "strbuf.h"
#include "banned.h"

/* The longest excerpt of a line an error quotes. */
#define SHOW_EXCERPT 160
/* Calls nest (load(between("gcc","1","2")), execute{modeA={...}}); Lmod's
 * own never go deeper than 3. */
#define SHOW_MAX_DEPTH 8

/* --- Environment Modules ----------------------------------------------- */

/* EM's "prepend-path<TAB>[--delim X] VAR /dir..." */
static void em_line_entries(const char *line, struct strv *ret)
{
        _cleanup_(strv_release) struct strv w = { 0 };
        size_t first = 1;

        if (!startswith(line, "prepend-path") && !startswith(line, "append-path"))
                return;
        tcl_words(line, &w);
        while (first < w.len && w.items[first][0] == '-')
                first += startswith(w.items[first], "--delim") && !strchr(w.items[first], '=') ? 2 : 1;
        for (size_t i = first + 1; i < w.len; i++)
                strv_push(ret, xasprintf("%s=%s", w.items[first], w.items[i]));
}

/* --- Lmod -------------------------------------------------------------- */

struct show_arg {
        char *key;   /* "delim" in delim=":", or NULL for a positional one */
        char *str;   /* its value, when a string; else NULL */
};

struct show_call {
        struct show_arg *args;
        size_t n;
};

static void show_call_release(struct show_call *c)
{
        for (size_t i = 0; i < c->n; i++) {
                free(c->args[i].key);
                free(c->args[i].str);
        }
        free(c->args);
        *c = (struct show_call){ 0 };
}

struct show_parser {
        const char *p;
        const char *why; /* what was not understood, static */
};

static bool is_ident_start(char c)
{
        return ascii_isalpha(c) || c == '_';
}

static bool is_ident(char c)
{
        return is_ident_start(c) || ascii_isdigit(c) || c == '.';
}

/* Whether the n bytes at s are word. */
static bool word_is(const char *s, size_t n, const char *word)
{
        return strlen(word) == n && strncmp(s, word, n) == 0;
}

static void skip_blanks(struct show_parser *ps)
{
        while (*ps->p == ' ' || *ps->p == '\t')
                ps->p++;
}

/* Whether a quote at ps->p ends the string: what follows it (blanks
 * aside) is a ',' or the closing bracket of the call. */
static bool quote_ends(const char *after, char close)
{
        while (*after == ' ' || *after == '\t')
                after++;
        return *after == ',' || *after == close;
}

static int hexval(char c)
{
        return ascii_isdigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A quoted string, its Lua escapes decoded (an unknown one is kept as it
 * is: Lmod 8.6 prints values unescaped). */
static int parse_quoted(struct show_parser *ps, char close, char **ret)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
        char q = *ps->p++;

        for (;;) {
                char c = *ps->p;

                if (!c) {
                        ps->why = "a string is not closed";
                        return -EINVAL;
                }
                if (c == q && quote_ends(ps->p + 1, close)) {
                        ps->p++;
                        break;
                }
                if (c != '\\') {
                        strbuf_addch(&sb, c);
                        ps->p++;
                        continue;
                }
                c = ps->p[1];
                ps->p += 2;
                switch (c) {
                case 'a': strbuf_addch(&sb, '\a'); break;
                case 'b': strbuf_addch(&sb, '\b'); break;
                case 'f': strbuf_addch(&sb, '\f'); break;
                case 'n': strbuf_addch(&sb, '\n'); break;
                case 'r': strbuf_addch(&sb, '\r'); break;
                case 't': strbuf_addch(&sb, '\t'); break;
                case 'v': strbuf_addch(&sb, '\v'); break;
                case '\\': case '"': case '\'': case '\n':
                        strbuf_addch(&sb, c);
                        break;
                case 'z':
                        while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
                                ps->p++;
                        break;
                case 'x':
                        if (hexval(ps->p[0]) >= 0 && hexval(ps->p[1]) >= 0) {
                                strbuf_addch(&sb, (char)(hexval(ps->p[0]) * 16 + hexval(ps->p[1])));
                                ps->p += 2;
                                break;
                        }
                        strbuf_add(&sb, ps->p - 2, 2);
                        break;
                default:
                        if (ascii_isdigit(c)) {
                                unsigned v = (unsigned)(c - '0');

                                for (int i = 0; i < 2 && ascii_isdigit(*ps->p); i++)
                                        v = v * 10 + (unsigned)(*ps->p++ - '0');
                                if (v <= 255) {
                                        strbuf_addch(&sb, (char)v);
                                        break;
                                }
                                ps->why = "a decimal escape is above 255";
                                return -EINVAL;
                        }
                        if (!c) {
                                ps->why = "a string is not closed";
                                return -EINVAL;
                        }
                        strbuf_add(&sb, ps->p - 2, 2);
                        break;
                }
        }
        *ret = strbuf_detach(&sb);
        return 0;
}

/* A long string: [[...]], [==[...]==]; a newline right after the opening
 * bracket is not part of it (Lua's rule). As for quotes, a closing bracket
 * ends it only where a ',' or close follows: Lmod 8.6 wraps help text in
 * [[ ]] whatever it holds. */
static int parse_long(struct show_parser *ps, char close_call, char **ret)
{
        const char *p = ps->p + 1, *body, *end;
        size_t level = 0;
        _cleanup_free_ char *close = NULL;

        while (*p == '=')
                p++, level++;
        if (*p != '[') {
                ps->why = "a '[' that opens no long string";
                return -EINVAL;
        }
        body = p + 1;
        if (*body == '\n')
                body++;
        close = xmalloc(level + 3);
        close[0] = ']';
        memset(close + 1, '=', level);
        close[level + 1] = ']';
        close[level + 2] = '\0';
        for (end = strstr(body, close); end && !quote_ends(end + level + 2, close_call);)
                end = strstr(end + 1, close);
        if (!end) {
                ps->why = "a long string is not closed";
                return -EINVAL;
        }
        *ret = xstrndup(body, (size_t)(end - body));
        ps->p = end + level + 2;
        return 0;
}

static int parse_args(struct show_parser *ps, char close, unsigned depth, struct show_call *ret);

/* One value: a string, a number, true/false/nil, a table {...} or a
 * nested call name(...). *ret_str: the string, when it is one. */
static int parse_value(struct show_parser *ps, char close, unsigned depth, char **ret_str)
{
        const char *start = ps->p;

        *ret_str = NULL;
        if (*ps->p == '"' || *ps->p == '\'')
                return parse_quoted(ps, close, ret_str);
        if (*ps->p == '[')
                return parse_long(ps, close, ret_str);
        if (*ps->p == '{' || is_ident_start(*ps->p)) {
                _cleanup_(show_call_release) struct show_call inner = { 0 };
                char open = *ps->p;

                if (open != '{') {
                        size_t n;

                        while (is_ident(*ps->p))
                                ps->p++;
                        n = (size_t)(ps->p - start);
                        if (word_is(start, n, "true") || word_is(start, n, "false") ||
                            word_is(start, n, "nil"))
                                return 0;
                        skip_blanks(ps);
                        if (*ps->p != '(' && *ps->p != '{') {
                                ps->why = "a bare word that is no value";
                                return -EINVAL;
                        }
                        open = *ps->p;
                }
                if (depth >= SHOW_MAX_DEPTH) {
                        ps->why = "calls nested too deep";
                        return -EINVAL;
                }
                ps->p++;
                return parse_args(ps, open == '(' ? ')' : '}', depth + 1, &inner);
        }
        if (ascii_isdigit(*ps->p) || (*ps->p == '-' && ascii_isdigit(ps->p[1]))) {
                ps->p++;
                while (ascii_isdigit(*ps->p) || *ps->p == '.' || ascii_isalpha(*ps->p))
                        ps->p++;
                return 0;
        }
        ps->why = "an argument that is no Lua value";
        return -EINVAL;
}

/* The arguments of a call up to its closing bracket close (consumed),
 * ps->p just after the opening one. */
static int parse_args(struct show_parser *ps, char close, unsigned depth, struct show_call *ret)
{
        for (;;) {
                _cleanup_free_ char *key = NULL, *str = NULL;
                int r;

                skip_blanks(ps);
                if (*ps->p == close) {
                        ps->p++;
                        return 0;
                }
                if (is_ident_start(*ps->p)) {
                        const char *q = ps->p;

                        while (is_ident(*q))
                                q++;
                        while (*q == ' ' || *q == '\t')
                                q++;
                        if (*q == '=' && q[1] != '=') {
                                size_t n = 0;

                                while (is_ident(ps->p[n]))
                                        n++;
                                key = xstrndup(ps->p, n);
                                ps->p = q + 1;
                                skip_blanks(ps);
                        }
                }
                r = parse_value(ps, close, depth, &str);
                if (r < 0)
                        return r;
                ret->args = xreallocarray(ret->args, ret->n + 1, sizeof(*ret->args));
                ret->args[ret->n++] = (struct show_arg){ .key = TAKE_PTR(key), .str = TAKE_PTR(str) };
                skip_blanks(ps);
                if (*ps->p == ',' || *ps->p == ';')
                        ps->p++;
                else if (*ps->p != close) {
                        ps->why = *ps->p ? "arguments not separated by ','" : "a call is not closed";
                        return -EINVAL;
                }
        }
}

/* The commands Lmod's show prints (MC_Show.lua, 8.0 .. 8.7), path ones
 * first. */
static const char *const show_commands[] = {
        "prepend_path", "append_path",
        "remove_path", "setenv", "unsetenv", "pushenv", "help", "whatis", "family", "conflict",
        "load", "load_any", "try_load", "try_add", "always_load", "unload", "always_unload",
        "depends_on", "depends_on_any", "prereq", "prereq_any", "mgrload", "inherit",
        "add_property", "remove_property", "set_alias", "unset_alias", "set_shell_function",
        "unset_shell_function", "execute", "extensions", "complete", "uncomplete",
        "LmodMessage", "LmodMsgRaw", "LmodBreak", "os.exit", "source_sh",
};

static bool show_command_known(const char *name, size_t n)
{
        for (size_t i = 0; i < ELEMENTSOF(show_commands); i++)
                if (word_is(name, n, show_commands[i]))
                        return true;
        return false;
}

/* A prepend_path/append_path call's entries: positional name, value and
 * (a Lua modulefile's third argument) delim, or delim= and priority=; the
 * value is split at delim, empty entries dropped, as Lmod does. */
static int path_call_entries(struct show_parser *ps, const struct show_call *c, struct strv *ret)
{
        const char *name = NULL, *value = NULL, *delim = ":";
        size_t n_pos = 0;

        for (size_t i = 0; i < c->n; i++) {
                const struct show_arg *a = &c->args[i];

                if (a->key) {
                        if (streq(a->key, "delim") && a->str)
                                delim = a->str;
                        continue;
                }
                if (!a->str || n_pos >= 3) {
                        ps->why = "a path call's arguments are not a name, a value and a delimiter";
                        return -EINVAL;
                }
                if (n_pos == 0)
                        name = a->str;
                else if (n_pos == 1)
                        value = a->str;
                else
                        delim = a->str;
                n_pos++;
        }
        if (!name || !value || !*name) {
                ps->why = "a path call without a variable name and a value";
                return -EINVAL;
        }
        if (!*delim) {
                ps->why = "an empty delim";
                return -EINVAL;
        }
        for (const char *p = value; *p;) {
                const char *end = strstr(p, delim);
                size_t n = end ? (size_t)(end - p) : strlen(p);

                if (n)
                        strv_push(ret, xasprintf("%s=%.*s", name, (int)n, p));
                p += n;
                if (end)
                        p += strlen(delim);
        }
        return 0;
}

/* Whether the line at p (up to eol) is one Lmod prints around the calls:
 * blank, a separator of dashes, the "   /path/to/file:" header, or a Lua
 * comment. */
static bool lmod_frame_line(const char *p, const char *eol)
{
        const char *q = p;

        while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
                q++;
        if (q == eol)
                return true;
        /* a separator of dashes, or a comment ("--source_sh(...)") */
        if (eol - q >= 2 && q[0] == '-' && q[1] == '-')
                return true;
        return q > p && eol[-1] == ':' && memchr(q, '/', (size_t)(eol - q));
}

static int lmod_entries(const char *text, const char *what, struct strv *ret, struct diag *d)
{
        struct show_parser ps = { .p = text };
        unsigned line = 1;

        while (*ps.p) {
                const char *start = ps.p, *eol = strchrnul(ps.p, '\n'), *name;
                _cleanup_(show_call_release) struct show_call c = { 0 };
                size_t n = 0;
                char close;
                int r = 0;

                if (lmod_frame_line(ps.p, eol)) {
                        ps.p = *eol ? eol + 1 : eol;
                        line++;
                        continue;
                }
                skip_blanks(&ps);
                name = ps.p;
                while (is_ident(name[n]))
                        n++;
                ps.p += n;
                if (!n || (*ps.p != '(' && *ps.p != '{')) {
                        ps.why = "not a call";
                        r = -EINVAL;
                } else if (!show_command_known(name, n)) {
                        ps.why = "a command cudamod does not know";
                        r = -EINVAL;
                } else {
                        close = *ps.p++ == '(' ? ')' : '}';
                        r = parse_args(&ps, close, 0, &c);
                        if (r >= 0) {
                                skip_blanks(&ps);
                                if (*ps.p == '\r')
                                        ps.p++;
                                if (*ps.p && *ps.p != '\n') {
                                        ps.why = "text after the call";
                                        r = -EINVAL;
                                }
                        }
                        if (r >= 0 && (word_is(name, n, "prepend_path") ||
                                       word_is(name, n, "append_path")))
                                r = path_call_entries(&ps, &c, ret);
                }
                if (r < 0)
                        return diag_errorf(d, r, "%s, line %u: %s: '%.*s%s'", what, line, ps.why,
                                           (int)((size_t)(eol - start) < SHOW_EXCERPT ? (size_t)(eol - start) : SHOW_EXCERPT),
                                           start, (size_t)(eol - start) > SHOW_EXCERPT ? "..." : "");
                for (const char *s = start; s < ps.p; s++)
                        line += *s == '\n';
                if (*ps.p == '\n') {
                        ps.p++;
                        line++;
                }
        }
        return 0;
}

int show_output_entries(const char *text, bool lmod, const char *what, struct strv *ret,
                        struct diag *d)
{
        _cleanup_(strv_release) struct strv entries = { 0 };

        if (lmod) {
                int r = lmod_entries(text, what, &entries, d);

                if (r < 0)
                        return r;
        } else {
                _cleanup_free_ char *copy = xstrdup(text);

                for (char *line = copy; line && *line;) {
                        char *nl = strchr(line, '\n');

                        if (nl)
                                *nl = '\0';
                        em_line_entries(line, &entries);
                        line = nl ? nl + 1 : NULL;
                }
        }
        for (size_t i = 0; i < entries.len; i++)
                strv_add(ret, entries.items[i]);
        return 0;
}
