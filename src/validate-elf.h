/* validate-elf.h: the closure and lazy checks of `cudamod validate`
 * (validate-elf.c; the components' lazy checks are lazy.c's): what the
 * module's libraries need, and what they dlopen() later, resolve with its
 * environment (resolve.h). */
#ifndef CUDAMOD_VALIDATE_ELF_H
#define CUDAMOD_VALIDATE_ELF_H

#include "validate-check.h"
#include "validate.h"

/* closure: every DT_NEEDED of every shared library (ELF ET_DYN, regular
 * file or symlink to one, each real file once) in own_libdirs resolves
 * with m->ld_library_path, the library's RUNPATH/RPATH and the system
 * loader path; the driver's libraries are exempt (they come from the
 * driver) and listed as such. Fail names each library and its missing
 * needs (at most a few, then "and N more") and what to load or install. */
void check_closure(const struct validate_module *m, struct check *ret);
/* lazy: what the module's libraries dlopen() later resolves too: its
 * kind's `lazy` (lazy.h); other kinds skip. */
void check_lazy(const struct validate_module *m, struct check *ret);

#endif
