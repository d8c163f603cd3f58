/* cmd-generate.h: the `cudamod generate` command (cmd-generate.c), a row of main.c's table. */
#ifndef CUDAMOD_CMD_GENERATE_H
#define CUDAMOD_CMD_GENERATE_H

#include "cmd.h"

extern const struct command cmd_generate;

#endif
