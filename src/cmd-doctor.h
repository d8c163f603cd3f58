/* cmd-doctor.h: the `cudamod doctor` command (cmd-doctor.c), a row of main.c's table. */
#ifndef CUDAMOD_CMD_DOCTOR_H
#define CUDAMOD_CMD_DOCTOR_H

#include "cmd.h"

extern const struct command cmd_doctor;

#endif
