/* cmd-doctor-build.h: `cudamod doctor --build` (cmd-doctor-build.c), which
 * cmd-doctor.c runs for that option. */
#ifndef CUDAMOD_CMD_DOCTOR_BUILD_H
#define CUDAMOD_CMD_DOCTOR_BUILD_H

#include <stdbool.h>

#include "cmd.h"
#include "doctor.h"
#include "util.h"

/* The command: run, print (text or JSON), and the exit status (0 nothing
 * found, notes allowed; 1 warnings only: the configure finishes; 2 usage;
 * 3 a fatal finding: the configure would stop). */
int doctor_build_command(const struct doctor_options *o, bool json, const struct strv *mp,
                         const struct global_options *g);

#endif
