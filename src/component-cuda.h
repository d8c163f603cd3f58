/* component-cuda.h: the descriptor of the CUDA Toolkit
 * (component-cuda.c), for the table (component-table.c) and for code
 * that asks for this one by name. */
#ifndef CUDAMOD_COMPONENT_CUDA_H
#define CUDAMOD_COMPONENT_CUDA_H

#include "component.h"

extern const struct component component_cuda;

#endif
