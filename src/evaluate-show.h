/* evaluate-show.h: the path entries a real tool's `module show`
 * names (evaluate-show.c). */
#ifndef CUDAMOD_EVALUATE_SHOW_H
#define CUDAMOD_EVALUATE_SHOW_H

#include <stdbool.h>

#include "diag.h"
#include "util.h"

/* The path entries ("NAME=entry", in order) that the prepend and append
 * calls in text, what the tool's `module show` printed, name, added to
 * ret. lmod: Lmod's output, where every line must be understood (else
 * -EINVAL, d naming what and the line); else Environment Modules'. */
int show_output_entries(const char *text, bool lmod, const char *what, struct strv *ret,
                        struct diag *d);

#endif
