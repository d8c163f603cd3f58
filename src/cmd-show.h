/* cmd-show.h: the `cudamod show` command (cmd-show.c), a row of main.c's table. */
#ifndef CUDAMOD_CMD_SHOW_H
#define CUDAMOD_CMD_SHOW_H

#include "cmd.h"

extern const struct command cmd_show;

#endif
