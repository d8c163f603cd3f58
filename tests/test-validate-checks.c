/* test-validate-checks.c: validate's table of checks: the report's order
 * of ids and scopes, and the skips the table's runner makes for a module
 * that did not load or that the probe is not run for. */
#include <check.h>
#include <errno.h>

#include "component-cuda.h"
#include "diag.h"
#include "testutil.h"
#include "util.h"
#include "validate-checks.h"
#include "validate-probe.h"
#include "banned.h"

START_TEST(checks_table_lists_ids_in_report_order)
{
        static const struct {
                const char *id;
                enum check_scope scope;
        } want[] = {
                { "syntax", CHECK_PER_MODULE }, { "paths", CHECK_PER_MODULE },
                { "closure", CHECK_PER_MODULE }, { "lazy", CHECK_PER_MODULE },
                { "build", CHECK_PER_MODULE }, { "nvcc", CHECK_PER_MODULE },
                { "cmake", CHECK_PER_MODULE }, { "run", CHECK_PER_TARGET },
                { "device", CHECK_PER_TARGET }, { NULL, 0 },
        };
        size_t i;

        for (i = 0; want[i].id; i++) {
                ck_assert_ptr_nonnull(validate_checks[i].id);
                ck_assert_str_eq(validate_checks[i].id, want[i].id);
                ck_assert_int_eq(validate_checks[i].scope, want[i].scope);
                ck_assert_ptr_nonnull(validate_checks[i].run);
        }
        ck_assert_ptr_null(validate_checks[i].id);
}
END_TEST

START_TEST(checks_after_a_failed_load_skip_but_syntax_reports_it)
{
        struct diag d = DIAG_INIT;
        struct check_input in = { .load_error = &d };

        diag_set(&d, -EINVAL, "/m/cuda/12.9.lua", 3, 0, "unexpected symbol");
        for (const struct check_type *ct = validate_checks; ct->id; ct++) {
                struct check c;

                check_type_run(ct, &in, &c);
                ck_assert_str_eq(c.id, ct->id);
                if (streq(ct->id, "syntax")) {
                        ck_assert_int_eq(c.status, CHECK_FAIL);
                        ck_assert_msg(strstr(c.message, "unexpected symbol"), "%s", c.message);
                } else {
                        ck_assert_int_eq(c.status, CHECK_SKIP);
                        ck_assert_str_eq(c.message, "the module did not load");
                }
                check_release(&c);
        }
        diag_release(&d);
}
END_TEST

START_TEST(checks_per_target_skip_without_a_probe_run)
{
        struct validate_module m = { .module = "other/1", .name = "other", .version = "1",
                                     .kind = NULL };
        struct validate_options o = { 0 };
        struct check_input in = { .module = &m, .options = &o };

        ck_assert(!validate_module_needs_probe(&m));
        m.kind = &component_cuda;
        ck_assert(validate_module_needs_probe(&m));
        for (const struct check_type *ct = validate_checks; ct->id; ct++) {
                struct check c;

                if (ct->scope != CHECK_PER_TARGET)
                        continue;
                check_type_run(ct, &in, &c);
                ck_assert_int_eq(c.status, CHECK_SKIP);
                ck_assert_msg(strstr(c.message, "no libcudart, libcudnn, libnccl, libcusparseLt, libcudss, libnvshmem_host, libmagma or libcutensor in"), "%s", c.message);
                check_release(&c);
        }
}
END_TEST

static Suite *validate_checks_suite(void)
{
        Suite *s = suite_create("validate-checks");
        TCase *tc = tcase_create("table");

        tcase_add_test(tc, checks_table_lists_ids_in_report_order);
        tcase_add_test(tc, checks_after_a_failed_load_skip_but_syntax_reports_it);
        tcase_add_test(tc, checks_per_target_skip_without_a_probe_run);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(validate_checks_suite());
}
