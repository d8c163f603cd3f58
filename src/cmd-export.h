/* cmd-export.h: the `cudamod export` command (cmd-export.c), a row of main.c's table. */
#ifndef CUDAMOD_CMD_EXPORT_H
#define CUDAMOD_CMD_EXPORT_H

#include "cmd.h"

extern const struct command cmd_export;

#endif
