/* component-cudss.h: the descriptor of cuDSS (component-cudss.c), for
 * the table (component-table.c) and for code that asks for this one by
 * name. */
#ifndef CUDAMOD_COMPONENT_CUDSS_H
#define CUDAMOD_COMPONENT_CUDSS_H

#include "component.h"

extern const struct component component_cudss;

#endif
