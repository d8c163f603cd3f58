/* component-cutensor.h: the descriptor of cuTENSOR
 * (component-cutensor.c), for the table (component-table.c) and for code
 * that asks for this one by name. */
#ifndef CUDAMOD_COMPONENT_CUTENSOR_H
#define CUDAMOD_COMPONENT_CUTENSOR_H

#include "component.h"

extern const struct component component_cutensor;

#endif
