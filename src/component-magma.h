/* component-magma.h: the descriptor of MAGMA (component-magma.c), for
 * the table (component-table.c) and for code that asks for this one by
 * name. */
#ifndef CUDAMOD_COMPONENT_MAGMA_H
#define CUDAMOD_COMPONENT_MAGMA_H

#include "component.h"

extern const struct component component_magma;

#endif
