/* render-check.h: the parse check of every rendered modulefile, before
 * anything is written (render-check.c). */
#ifndef CUDAMOD_RENDER_CHECK_H
#define CUDAMOD_RENDER_CHECK_H

#include <stddef.h>

#include "config-types.h"
#include "diag.h"
#include "strbuf.h"

/* Whether text (len bytes), a rendered modulefile of format lang, parses:
 * Lua is loaded (compiled, not run) by the embedded Lua in text mode; Tcl
 * is read as a script the way Tcl's parser (`info complete`) reads it:
 * braces, quotes and brackets balance, a close brace or quote ends its
 * word, and a backslash escapes the next byte. Returns 0, or -EINVAL with
 * d naming name and the parser's message (line and column when known). */
int modulefile_check_syntax(const char *text, size_t len, const char *name,
                            enum module_format lang, struct diag *d);

/* The structure of a Tcl script, for tests and fuzzers: one token per
 * command, word, comment, quote, substitution and braced word (a braced
 * word's content, when it reads as a script, in braces), none for the
 * bytes of words. Two scripts with the same shape run the same commands
 * with the same words; a value that changed it would have become code.
 * Returns 0, or -EINVAL where the script does not parse. */
int tcl_script_shape(const char *text, size_t len, struct strbuf *shape);

#endif
