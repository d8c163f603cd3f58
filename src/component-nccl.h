/* component-nccl.h: the descriptor of NCCL (component-nccl.c), for the
 * table (component-table.c) and for code that asks for this one by name. */
#ifndef CUDAMOD_COMPONENT_NCCL_H
#define CUDAMOD_COMPONENT_NCCL_H

#include "component.h"

extern const struct component component_nccl;

#endif
