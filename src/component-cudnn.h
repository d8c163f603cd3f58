/* component-cudnn.h: the descriptor of cuDNN (component-cudnn.c), for
 * the table (component-table.c) and for code that asks for this one by
 * name. */
#ifndef CUDAMOD_COMPONENT_CUDNN_H
#define CUDAMOD_COMPONENT_CUDNN_H

#include "component.h"

extern const struct component component_cudnn;

#endif
