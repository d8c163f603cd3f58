/* fuzz-escape.c: the path escaper as a property (libFuzzer).
 *
 * For any byte string (up to its first NUL: values are C strings), the
 * literal `{{v}}` renders to must evaluate back to the same bytes:
 *   - Lua: with the embedded Lua, as `return <literal>` loaded in text mode;
 *   - Tcl: with a real tclsh (one started once, fed literals through a
 *     pipe), as the word of `set _ <literal>` inside a braced body, the
 *     way a modulefile holds it. The script is decoded the way
 *     Environment Modules reads a modulefile (the system encoding) and the
 *     value encoded back the way it exports it. Under ISO 8859-1 every
 *     byte string must come back; under UTF-8 every valid UTF-8 string —
 *     a Tcl string holds characters, not bytes, so bytes that are not
 *     UTF-8 cannot survive a UTF-8 locale whatever the escaping, which is
 *     why generate refuses such paths (plan.c, path_problem).
 *
 * The comment form ({{%v}}) must stay on one line and hold no backslash.
 * The escapers are called alone (render_escape), for every byte string:
 * they must hold on their own. The renderer's gate, in front of them,
 * refuses what some reader of a modulefile would take as code
 * (written_value_problem: control characters but, in a text, the tab and
 * the newline; ']'; and in a word also '"', '\\', '$', '`'; in Tcl any
 * byte >= 0x80); that it refuses exactly those, as a text and as a word,
 * is checked here too. */
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render.h"
#include "util.h"
#include "util-path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern char **environ;

/* Reads "<length>\n<literal>" records; answers, for each encoding, with
 * "<length>\n<bytes>" (the value re-encoded) or "-1\n<error>\n". */
static const char tcl_script[] =
        "fconfigure stdin -translation binary -encoding binary -buffering none\n"
        "fconfigure stdout -translation binary -encoding binary\n"
        "proc answer {s} { puts -nonewline stdout \"[string length $s]\\n$s\" }\n"
        "while {[gets stdin n] >= 0} {\n"
        "  set lit [read stdin $n]\n"
        "  foreach enc {iso8859-1 utf-8} {\n"
        "    set script \"if 1 {\\n  set _ [encoding convertfrom $enc $lit]\\n}\"\n"
        "    if {[catch {set v [eval $script]} err]} {\n"
        "      set e [encoding convertto utf-8 $err]\n"
        "      puts -nonewline stdout \"-1\\n[string length $e]\\n$e\"\n"
        "    } else {\n"
        "      answer [encoding convertto $enc $v]\n"
        "    }\n"
        "  }\n"
        "  flush stdout\n"
        "}\n";

/* The pipes to and from tclsh, as raw descriptors: libFuzzer's timeout
 * alarm interrupts a blocking read (EINTR), which stdio would take for an
 * error; these retry. */
static int tcl_in = -1, tcl_out = -1;

static void tcl_write(const void *buf, size_t len)
{
        for (const char *p = buf; len > 0;) {
                ssize_t k = write(tcl_in, p, len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        fprintf(stderr, "fuzz-escape: cannot write to tclsh: %s\n", strerror(errno));
                        abort();
                }
                p += k;
                len -= (size_t)k;
        }
}

static void tcl_read(void *buf, size_t len)
{
        for (char *p = buf; len > 0;) {
                ssize_t k = read(tcl_out, p, len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        fprintf(stderr, "fuzz-escape: tclsh stopped answering: %s\n",
                                k < 0 ? strerror(errno) : "end of file");
                        abort();
                }
                p += k;
                len -= (size_t)k;
        }
}

/* A decimal number (maybe negative) and a newline. */
static long tcl_read_number(void)
{
        char c;
        long n = 0;
        bool neg = false, digits = false;

        for (;;) {
                tcl_read(&c, 1);
                if (c == '-' && !digits && !neg) {
                        neg = true;
                } else if (c >= '0' && c <= '9' && n < 100000000) {
                        n = n * 10 + (c - '0');
                        digits = true;
                } else if (c == '\n' && digits) {
                        return neg ? -n : n;
                } else {
                        fprintf(stderr, "fuzz-escape: tclsh answered out of step (byte 0x%02x)\n",
                                (unsigned char)c);
                        abort();
                }
        }
}

static char *tcl_answer(size_t *len, char **err);

static void tcl_start(void)
{
        int to[2], from[2];
        pid_t pid;
        posix_spawn_file_actions_t fa;
        const char *tclsh = getenv("TCLSH") ? getenv("TCLSH") : "tclsh";
        char script[] = "/tmp/fuzz-escape-XXXXXX";
        char *argv[] = { (char *)tclsh, script, NULL };
        int fd = mkstemp(script);

        if (fd < 0 || write(fd, tcl_script, sizeof(tcl_script) - 1) != (ssize_t)sizeof(tcl_script) - 1)
                abort();
        close(fd);
        if (pipe(to) < 0 || pipe(from) < 0)
                abort();
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, to[0], 0);
        posix_spawn_file_actions_adddup2(&fa, from[1], 1);
        posix_spawn_file_actions_addclose(&fa, to[1]);
        posix_spawn_file_actions_addclose(&fa, from[0]);
        if (posix_spawnp(&pid, tclsh, &fa, NULL, argv, environ) != 0) {
                fprintf(stderr, "fuzz-escape: cannot start %s; the Tcl property needs it\n", tclsh);
                abort();
        }
        posix_spawn_file_actions_destroy(&fa);
        close(to[0]);
        close(from[1]);
        tcl_in = to[1];
        tcl_out = from[0];
        /* Once tclsh answers, it has read the script. */
        tcl_write("0\n", 2);
        for (int i = 0; i < 2; i++) {
                size_t len;
                char *err, *got = tcl_answer(&len, &err);
                free(got);
                free(err);
        }
        unlink(script);
}

/* One answer of tclsh: the bytes (allocated, *len set), or NULL with the
 * error text in *err. */
static char *tcl_answer(size_t *len, char **err)
{
        long n = tcl_read_number();
        char *buf;

        *err = NULL;
        if (n < 0) {
                long m = tcl_read_number();
                if (m < 0 || !(*err = calloc(1, (size_t)m + 1)))
                        abort();
                tcl_read(*err, (size_t)m);
                return NULL;
        }
        buf = malloc((size_t)n + 1);
        if (!buf)
                abort();
        tcl_read(buf, (size_t)n);
        buf[n] = '\0';
        *len = (size_t)n;
        return buf;
}

/* The literal (or, comment, the comment text) of value, escaper alone. */
static void rendered(enum module_format lang, bool comment, const char *value, struct strbuf *out)
{
        render_escape(lang, comment, value, out);
}

static void fail(const char *what, const char *value, const struct strbuf *lit)
{
        fprintf(stderr, "fuzz-escape: %s\nvalue:   ", what);
        for (const unsigned char *p = (const unsigned char *)value; *p; p++)
                fprintf(stderr, "%02x", *p);
        fprintf(stderr, "\nliteral: %s\n", lit->buf);
        abort();
}

static void check_lua(lua_State *L, const char *value)
{
        struct strbuf lit = STRBUF_INIT, chunk = STRBUF_INIT;
        const char *got;
        size_t len;

        rendered(FORMAT_LUA, false, value, &lit);
        strbuf_addf(&chunk, "return %s", lit.buf);
        if (luaL_loadbufferx(L, chunk.buf, chunk.len, "=literal", "t") != LUA_OK ||
            lua_pcall(L, 0, 1, 0) != LUA_OK)
                fail("the Lua literal does not load", value, &lit);
        got = lua_tolstring(L, -1, &len);
        if (!got || len != strlen(value) || memcmp(got, value, len) != 0)
                fail("the Lua literal evaluates to other bytes", value, &lit);
        lua_settop(L, 0);
        strbuf_release(&chunk);
        strbuf_release(&lit);
}

static void check_tcl(const char *value)
{
        static const char *const enc[] = { "ISO 8859-1", "UTF-8" };
        struct strbuf lit = STRBUF_INIT;
        bool utf8 = utf8_valid(value);

        rendered(FORMAT_TCL, false, value, &lit);
        {
                char head[32];
                int k = snprintf(head, sizeof(head), "%zu\n", lit.len);
                tcl_write(head, (size_t)k);
                tcl_write(lit.buf, lit.len);
        }
        for (int i = 0; i < 2; i++) {
                size_t len = 0;
                char *err, *got = tcl_answer(&len, &err);

                if (!got) {
                        fprintf(stderr, "fuzz-escape: tclsh (%s): %s\n", enc[i], err);
                        fail("the Tcl literal does not evaluate", value, &lit);
                }
                if ((i == 0 || utf8) && (len != strlen(value) || memcmp(got, value, len) != 0)) {
                        fprintf(stderr, "fuzz-escape: under %s\n", enc[i]);
                        fail("the Tcl literal evaluates to other bytes", value, &lit);
                }
                free(got);
        }
        strbuf_release(&lit);
}

static void check_comment(const char *value)
{
        for (int f = FORMAT_LUA; f <= FORMAT_TCL; f++) {
                struct strbuf out = STRBUF_INIT;

                strbuf_addstr(&out, "# ");
                rendered((enum module_format)f, true, value, &out);
                if (strpbrk(out.buf, "\n\r\\") || strlen(out.buf) != out.len)
                        fail("a comment can be ended or continued", value, &out);
                strbuf_release(&out);
        }
}

/* The gate, as a text and as a word, for both formats: a value is
 * refused exactly when written_value_problem names a reason, and the
 * message says what the value holds. */
static void check_gate(const char *value)
{
        for (int text = 0; text <= 1; text++)
                for (int f = FORMAT_LUA; f <= FORMAT_TCL; f++) {
                        struct render_ctx *ctx = render_ctx_new();
                        struct strbuf out = STRBUF_INIT;
                        struct diag d = DIAG_INIT;
                        const char *why = written_value_problem(value, text ? WRITTEN_TEXT : WRITTEN_WORD, NULL);
                        int r;

                        /* And no byte >= 0x80 in Tcl (Lmod's tcl2lua). */
                        if (!why && f == FORMAT_TCL && !ascii_only(value))
                                why = "a byte that is not ASCII";

                        if (text)
                                render_ctx_set_text(ctx, "v", value);
                        else
                                render_ctx_set(ctx, "v", value);
                        r = render("{{v}}", 5, "fuzz.in", (enum module_format)f, ctx, &out, &d);
                        if (why && (r == 0 || !strstr(d.message, why)))
                                fail("the gate let through what a reader would take as code", value, &out);
                        if (!why && r < 0)
                                fail("the gate refused a value every reader keeps as data", value, &out);
                        diag_release(&d);
                        strbuf_release(&out);
                        render_ctx_free(ctx);
                }
}

static lua_State *L;

/* The state lives for the whole run; closed at exit, so valgrind sees
 * nothing left behind. */
static void close_lua(void)
{
        lua_close(L);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *value = malloc(size + 1);

        if (!value)
                return 0;
        memcpy(value, data, size);
        value[size] = '\0';
        if (!L) {
                L = luaL_newstate();
                atexit(close_lua);
                tcl_start();
        }
        check_gate(value);
        check_lua(L, value);
        check_tcl(value);
        check_comment(value);
        free(value);
        return 0;
}
