/* message.c: the engines' messages on the way (message.h). */
#include "message.h"
#include "strbuf.h"
#include "banned.h"

void message_vsay(const struct message_sink *s, enum message_level level, const char *fmt, va_list ap)
{
        _cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

        if (!s->say)
                return;
        strbuf_vaddf(&sb, fmt, ap);
        s->say(level, sb.buf, s->userdata);
}

void message_say(const struct message_sink *s, enum message_level level, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        message_vsay(s, level, fmt, ap);
        va_end(ap);
}
