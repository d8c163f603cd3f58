/* validate-checks.c: the table of validate's checks (doc/guide.md, `cudamod validate`):
 * one row each, its id, whether it runs per module or per launcher target,
 * and the function that runs it from a struct check_input. A new check is
 * a new row here; cmd-validate.c only walks the table. */
#include "component-table.h"
#include "validate-check.h"
#include "validate-checks.h"
#include "validate-elf.h"
#include "validate-probe.h"
#include "validate-toolchain.h"
#include "banned.h"

static void run_syntax(const struct check_input *in, struct check *ret)
{
        check_syntax(in->eval, in->load_error, ret);
}

static void run_paths(const struct check_input *in, struct check *ret)
{
        check_paths(in->eval, ret);
}

static void run_closure(const struct check_input *in, struct check *ret)
{
        check_closure(in->module, ret);
}

static void run_lazy(const struct check_input *in, struct check *ret)
{
        check_lazy(in->module, ret);
}

static void run_build(const struct check_input *in, struct check *ret)
{
        check_build(in->module, in->options, ret);
}

static void run_nvcc(const struct check_input *in, struct check *ret)
{
        check_nvcc(in->module, in->options, ret);
}

static void run_cmake(const struct check_input *in, struct check *ret)
{
        check_cmake(in->module, in->options, ret);
}

static void run_run(const struct check_input *in, struct check *ret)
{
        check_run(in->module, in->probe, ret);
}

static void run_device(const struct check_input *in, struct check *ret)
{
        check_device(in->module, in->options, in->probe, ret);
}

const struct check_type validate_checks[] = {
        { .id = "syntax", .scope = CHECK_PER_MODULE, .needs_load = false, .run = run_syntax },
        { .id = "paths", .scope = CHECK_PER_MODULE, .needs_load = true, .run = run_paths },
        { .id = "closure", .substantive = true, .scope = CHECK_PER_MODULE, .needs_load = true, .run = run_closure },
        { .id = "lazy", .scope = CHECK_PER_MODULE, .needs_load = true, .run = run_lazy },
        { .id = "build", .substantive = true, .scope = CHECK_PER_MODULE, .needs_load = true, .run = run_build },
        { .id = "nvcc", .substantive = true, .scope = CHECK_PER_MODULE, .needs_load = true, .run = run_nvcc },
        { .id = "cmake", .substantive = true, .scope = CHECK_PER_MODULE, .needs_load = true, .run = run_cmake },
        { .id = "run", .substantive = true, .scope = CHECK_PER_TARGET, .needs_load = true, .run = run_run },
        { .id = "device", .scope = CHECK_PER_TARGET, .needs_load = true, .run = run_device },
        {},
};

bool validate_module_needs_probe(const struct validate_module *m)
{
        return m->kind != NULL;
}

void check_type_run(const struct check_type *ct, const struct check_input *in, struct check *ret)
{
        *ret = (struct check){ .id = ct->id };
        if (ct->needs_load && !in->module) {
                check_set(ret, CHECK_SKIP, "the module did not load");
                return;
        }
        /* Nothing for the probe to load, so it was not started: each
         * per-target check says so, rather than that the probe failed. */
        if (ct->scope == CHECK_PER_TARGET && !in->probe) {
                _cleanup_free_ char *libs = component_list(COMPONENT_FIELD_LIBRARY, " or ");

                check_set(ret, CHECK_SKIP, "no %s in the module's LD_LIBRARY_PATH directories", libs);
                return;
        }
        ct->run(in, ret);
}
