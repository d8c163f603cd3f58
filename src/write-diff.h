/* write-diff.h: the diffs of a dry run (write-diff.c). */
#ifndef CUDAMOD_WRITE_DIFF_H
#define CUDAMOD_WRITE_DIFF_H

#include <stddef.h>

struct strbuf;

/* A unified diff (3 lines of context) of a and b, with the given file
 * labels, appended to out; nothing when equal. Exposed for tests. */
void unified_diff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
                  const char *label_b, struct strbuf *out);

#endif
