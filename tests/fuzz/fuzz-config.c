/* fuzz-config.c: the YAML config loader on arbitrary bytes (libFuzzer).
 *
 * Besides not crashing, a config that loads must survive the round trip
 * config_to_yaml promises: its YAML loads again, over the built-in
 * default, to a config that prints the same YAML. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config-write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct config c, again;
        struct diag d = DIAG_INIT;
        struct strbuf first = STRBUF_INIT, second = STRBUF_INIT;

        config_init_default(&c);
        if (config_load_buffer(&c, (const char *)data, size, "fuzz.yaml", &d) < 0) {
                diag_release(&d);
                config_release(&c);
                return 0;
        }
        config_to_yaml(&c, &first);
        config_init_default(&again);
        if (config_load_buffer(&again, first.buf, first.len, "roundtrip.yaml", &d) < 0) {
                fprintf(stderr, "config_to_yaml wrote YAML that does not load: %s:%u:%u: %s\n%s",
                        d.file ? d.file : "?", d.line, d.col, d.message ? d.message : "?",
                        first.buf);
                abort();
        }
        config_to_yaml(&again, &second);
        if (first.len != second.len || memcmp(first.buf, second.buf, first.len) != 0) {
                fprintf(stderr, "config round trip changed the config:\n--- first\n%s--- second\n%s",
                        first.buf, second.buf);
                abort();
        }
        strbuf_release(&first);
        strbuf_release(&second);
        config_release(&again);
        config_release(&c);
        return 0;
}
