/* cmd-validate.h: the `cudamod validate` command (cmd-validate.c), a row of main.c's table. */
#ifndef CUDAMOD_CMD_VALIDATE_H
#define CUDAMOD_CMD_VALIDATE_H

#include "cmd.h"

extern const struct command cmd_validate;

#endif
