/* cmd-help.h: the `cudamod help` command (cmd-help.c), a row of main.c's table. */
#ifndef CUDAMOD_CMD_HELP_H
#define CUDAMOD_CMD_HELP_H

#include "cmd.h"

extern const struct command cmd_help;

#endif
