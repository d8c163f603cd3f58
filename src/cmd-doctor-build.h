/* cmd-doctor-build.h: the printing half of `cudamod doctor --build`
 * (cmd-doctor-build.c), which cmd-doctor.c calls for --build: the
 * report of doctor-build.h as text or JSON. */
#ifndef CUDAMOD_CMD_DOCTOR_BUILD_H
#define CUDAMOD_CMD_DOCTOR_BUILD_H

#include <stdbool.h>

#include "doctor.h"
#include "util.h"

struct global_options;

/* Run doctor_build_run, print (text or JSON), and return the exit status
 * (0 nothing found, 1 problems, 2 usage). */
int doctor_build_command(const struct doctor_options *o, bool json, const struct strv *mp,
                         const struct global_options *g);

#endif
