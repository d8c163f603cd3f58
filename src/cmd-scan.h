/* cmd-scan.h: the `cudamod scan` command (cmd-scan.c), a row of main.c's table. */
#ifndef CUDAMOD_CMD_SCAN_H
#define CUDAMOD_CMD_SCAN_H

#include "cmd.h"

extern const struct command cmd_scan;

#endif
