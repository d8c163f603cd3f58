/* util-term.h: what may reach a terminal. term_escape returns a new
 * string (free it); the input is any NUL-terminated bytes, never changed. */
#ifndef CUDAMOD_UTIL_TERM_H
#define CUDAMOD_UTIL_TERM_H

/* Terminal-safe form of a path or message: every C0 control (\n, \t, else
 * \xNN), DEL, every C1 control (U+0080-U+009F, which an 8-bit or UTF-8
 * terminal acts on as CSI, OSC, ...: its UTF-8 bytes \xc2\x80-\xc2\x9f)
 * and every byte that is not part of valid UTF-8 (\xff, a raw 0x9b) is
 * shown as a C escape; other valid UTF-8 (é) is kept. */
char *term_escape(const char *s);

#endif
