/* cmd-config.h: the `cudamod config` command (cmd-config.c), a row of main.c's table. */
#ifndef CUDAMOD_CMD_CONFIG_H
#define CUDAMOD_CMD_CONFIG_H

#include "cmd.h"

extern const struct command cmd_config;

#endif
