/* component-cusparselt.h: the descriptor of cuSPARSELt
 * (component-cusparselt.c), for the table (component-table.c) and for
 * code that asks for this one by name. */
#ifndef CUDAMOD_COMPONENT_CUSPARSELT_H
#define CUDAMOD_COMPONENT_CUSPARSELT_H

#include "component.h"

extern const struct component component_cusparselt;

#endif
