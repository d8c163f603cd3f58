/* component-nvshmem.h: the descriptor of NVSHMEM (component-nvshmem.c),
 * for the table (component-table.c) and for code that asks for this one
 * by name. */
#ifndef CUDAMOD_COMPONENT_NVSHMEM_H
#define CUDAMOD_COMPONENT_NVSHMEM_H

#include "component.h"

extern const struct component component_nvshmem;

#endif
