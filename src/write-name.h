/* write-name.h: the names below an output directory (write-name.c): the
 * reserved ones, the rules a generated file's path obeys, and the sha256
 * by which the index knows a file's content. */
#ifndef CUDAMOD_WRITE_NAME_H
#define CUDAMOD_WRITE_NAME_H

#include <stddef.h>

#define INDEX_NAME ".cudamod-index.json"
#define LOCK_NAME ".cudamod.lock"

/* Why rel cannot name a generated file, or NULL when it can. */
const char *gen_path_problem(const char *rel);

/* sha256 of data as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char ret[65]);

#endif
