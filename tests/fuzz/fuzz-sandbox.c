/* fuzz-sandbox.c: the Lmod sandbox on hostile modulefiles (libFuzzer).
 *
 * Whatever the text, sandbox_eval returns (the instruction and memory
 * budgets end loops and allocations), reports an error or a list of
 * operations, and leaks nothing. The budgets are smaller than the
 * defaults so that each run stays short. */
#include <stdint.h>
#include <stdlib.h>

#include "lmod-sandbox.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const env[] = { "HOME=/home/fuzz", "MODULEPATH=/opt/modules", NULL };
        struct sandbox_options o = {
                .module_name = "cuda",
                .module_version = "12.9",
                .mode = size % 3 == 0 ? "unload" : "load",
                .environ = env,
                .max_instructions = 200000,
                .max_memory = 16 << 20,
                .max_cpu_ms = 1000,
        };
        struct sandbox_result res = { 0 };
        struct diag d = DIAG_INIT;

        if (sandbox_eval((const char *)data, size, "fuzz.lua", &o, &res, &d) == 0)
                sandbox_result_release(&res);
        diag_release(&d);
        return 0;
}
