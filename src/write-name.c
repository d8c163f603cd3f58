/* write-name.c: the names below an output directory (write-name.h): the
 * writer, its index and site check all ask them, from below write.c. */
#include <nettle/sha2.h>
#include <stdint.h>

#include "util.h"
#include "util-write.h"
#include "write-name.h"
#include "banned.h"

void sha256_hex(const void *data, size_t len, char ret[65])
{
        static const char hex[] = "0123456789abcdef";
        struct sha256_ctx ctx;
        uint8_t digest[SHA256_DIGEST_SIZE];

        sha256_init(&ctx);
        sha256_update(&ctx, len, data);
        sha256_digest(&ctx, sizeof(digest), digest);
        for (size_t i = 0; i < sizeof(digest); i++) {
                ret[2 * i] = hex[digest[i] >> 4];
                ret[2 * i + 1] = hex[digest[i] & 0xf];
        }
        ret[64] = '\0';
}

/* Why rel cannot name a generated file, or NULL when it can. */
const char *gen_path_problem(const char *rel)
{
        const char *c = rel;

        if (!rel || !*rel)
                return "empty path";
        if (rel[0] == '/')
                return "absolute path";
        if (!utf8_valid(rel))
                return "not valid UTF-8";
        for (;;) {
                const char *e = strchrnul(c, '/');
                size_t n = (size_t)(e - c);

                if (n == 0)
                        return "empty path component";
                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return "'.' or '..' component";
                if (n >= strlen(TMP_PREFIX) && memcmp(c, TMP_PREFIX, strlen(TMP_PREFIX)) == 0)
                        return "reserved name";
                if (!*e)
                        break;
                c = e + 1;
        }
        if (streq(rel, INDEX_NAME) || streq(rel, LOCK_NAME))
                return "reserved name";
        return NULL;
}
