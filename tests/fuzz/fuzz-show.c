/* fuzz-show.c: the reader of a module tool's `module show` output
 * (evaluate-show.c), Lmod's and Environment Modules', on arbitrary bytes
 * (libFuzzer): an error or entries, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evaluate-show.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s = malloc(size + 1);

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        for (int lmod = 0; lmod <= 1; lmod++) {
                struct strv entries = { 0 };
                struct diag d = DIAG_INIT;

                (void)show_output_entries(s, lmod, "fuzz show m", &entries, &d);
                strv_release(&entries);
                diag_release(&d);
        }
        free(s);
        return 0;
}
