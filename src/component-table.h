/* component-table.h: the component table (component-table.c), above
 * every component-<name>.c: the descriptors in COMPONENT_LIST order, and
 * the lookups that walk them. Code above the component files reaches a
 * component through here, or through its own component-<name>.h where it
 * asks for that one by name. */
#ifndef CUDAMOD_COMPONENT_TABLE_H
#define CUDAMOD_COMPONENT_TABLE_H

#include "component.h"
#include "name-hint.h"

extern const struct component *const component_table[N_COMPONENTS];

#define FOREACH_COMPONENT(c) \
        for (const struct component *const *_c = component_table, *c; \
             _c < component_table + N_COMPONENTS && (c = *_c); _c++)

/* The component named name (case-sensitive), or NULL. */
const struct component *component_from_string(const char *name);
/* The same, ignoring ASCII case ("CUDA", "cuDNN" directory names). */
const struct component *component_from_name_nocase(const char *name);
/* The CUDA Toolkit's row: the component the others depend on. */
const struct component *component_toolkit(void);
/* The component whose library has this soname ("libcudnn_ops.so.9"),
 * by its stems (component_has_soname), or NULL. */
const struct component *component_of_soname(const char *soname);
/* "CUDA, cuDNN or NCCL" (labels), "libcudart, libcudnn or libnccl"
 * (libraries), "cuda, cudnn, nccl" (names): every component, for messages
 * and help texts; conj is " or ", " and ", ", ". */
enum component_field { COMPONENT_FIELD_LABEL, COMPONENT_FIELD_LIBRARY, COMPONENT_FIELD_NAME };
char *component_list(enum component_field field, const char *conj);

/* What to do about a soname that resolves nowhere (libfile.h
 * soname_advice_of, for the component whose library it is): "load a
 * cuda/12.x module", …, or "install it or load the module that provides
 * it". Newly allocated. */
char *soname_advice(const char *soname);

/* name_hint_of (name-hint.h) for the component named `component`
 * ("cudnn"); -EINVAL when there is none. */
int name_hint_parse(const char *component, const char *name, const char *parent,
                    struct name_hint *ret);

#endif
