/* evaluate-tool.h: Tcl modulefiles loaded by the real tool
 * (evaluate-tool.c), for evaluate_options.trust_modulefiles. */
#ifndef CUDAMOD_EVALUATE_TOOL_H
#define CUDAMOD_EVALUATE_TOOL_H

#include <stddef.h>

#include "diag.h"
#include "evaluate-types.h"

/* Load specs of Tcl modulefiles with the real tool (Environment Modules or
 * Lmod) from env, the start environment. */
int evaluate_tool(char *const *env, char *const *specs, size_t n_specs,
                  struct evaluation *ret, struct diag *d);

#endif
