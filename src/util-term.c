/* util-term.c: text made safe for a terminal. */
#include "strbuf.h"
#include "util.h"
#include "util-term.h"
#include "banned.h"

char *term_escape(const char *s)
{
        struct strbuf sb = STRBUF_INIT;
        const unsigned char *p = (const unsigned char *)s;

        while (*p) {
                size_t n = utf8_seq_len(p);

                if (*p == '\n')
                        strbuf_addstr(&sb, "\\n");
                else if (*p == '\t')
                        strbuf_addstr(&sb, "\\t");
                else if (*p < 0x20 || *p == 0x7f)
                        strbuf_addf(&sb, "\\x%02x", *p);
                else if (*p >= 0x80) {
                        /* A C1 control is the two bytes C2 80-9F in UTF-8:
                         * shown as those bytes, like one that is not UTF-8. */
                        if (n > 1 && !(p[0] == 0xc2 && p[1] <= 0x9f)) {
                                strbuf_add(&sb, p, n);
                                p += n;
                                continue;
                        }
                        for (size_t k = 0; k < (n > 1 ? n : 1); k++)
                                strbuf_addf(&sb, "\\x%02x", p[k]);
                        p += n > 1 ? n : 1;
                        continue;
                } else
                        strbuf_addch(&sb, (char)*p);
                p++;
        }
        return strbuf_detach(&sb);
}
