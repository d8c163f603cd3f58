/* test-generate-run.c: the engines of generate and validate linked
 * without their commands: generate_run over the demo's fixture tree (the
 * files it writes, what the result counts, the messages on the way and
 * the error that ends a refused run), and validate_run over the tree it
 * wrote. Through the built binary: test-generate.c, test-validate.c. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "demo.h"
#include "fixture.h"
#include "generate.h"
#include "strbuf.h"
#include "testutil.h"
#include "util-path.h"
#include "validate-run.h"

/* What the engine said on the way: "error: …", "warning: …", "verbose: …". */
static void collect(enum message_level level, const char *text, void *userdata)
{
        static const char *const names[] = { "error", "warning", "verbose" };
        struct strv *said = userdata;

        strv_push(said, xasprintf("%s: %s", names[level], text));
}

struct gen_fixture {
        char *root;
        char *out;
        char *sw;
        const char *roots[1];
        struct config cfg;
        struct scan_options so;
        struct strv said;
        struct generate_options o;
};

static void gen_fixture_init(struct gen_fixture *f)
{
        *f = (struct gen_fixture){ .root = fx_new() };
        demo_build_core(f->root);
        f->out = path_join(f->root, "mf");
        f->sw = path_join(f->root, "sw");
        f->roots[0] = f->sw;
        config_init_default(&f->cfg);
        free(f->cfg.output);
        f->cfg.output = xstrdup(f->out);
        f->so = (struct scan_options){ .roots = f->roots, .n_roots = 1, .jobs = 1 };
        f->o = (struct generate_options){ .cfg = &f->cfg, .scan = &f->so, .lock_timeout = -1,
                                          .log = { .say = collect, .userdata = &f->said } };
}

static void gen_fixture_release(struct gen_fixture *f)
{
        config_release(&f->cfg);
        strv_release(&f->said);
        free(f->out);
        free(f->sw);
        fx_free(f->root);
}

START_TEST(generate_run_writes_the_tree_and_counts_it)
{
        struct gen_fixture f;
        struct generate_result res;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *cuda = NULL, *index = NULL;
        int r;

        gen_fixture_init(&f);
        r = generate_run(&f.o, &res, &d);
        ck_assert_msg(r == 0, "generate_run: %d %s", r, d.message ? d.message : "");
        ck_assert_ptr_null(d.message);
        ck_assert_str_eq(res.outdir, f.out);
        ck_assert_uint_eq(res.plan.n_modules, 5);
        ck_assert_uint_eq(res.plan.n_rcs, 4);
        ck_assert_uint_eq(res.write.count[FILE_CREATED], 9);
        ck_assert_uint_eq(res.write.count[FILE_UNCHANGED], 0);
        ck_assert_uint_eq(res.write.n_files, 9);
        ck_assert_int_eq(res.stop_signal, 0);
        ck_assert(!res.spider_cache_failed);
        ck_assert_ptr_null(res.spider_cache);
        cuda = path_join(f.out, "Core/cuda/12.9.lua");
        index = path_join(f.out, ".cudamod-index.json");
        ck_assert(is_file_at(AT_FDCWD, cuda));
        ck_assert(is_file_at(AT_FDCWD, index));
        generate_result_release(&res);

        /* Again: nothing to do, and with check nothing drifts. */
        f.o.check = true;
        r = generate_run(&f.o, &res, &d);
        ck_assert_int_eq(r, 0);
        ck_assert_uint_eq(res.write.count[FILE_CREATED], 0);
        ck_assert_uint_eq(res.write.count[FILE_UNCHANGED], 9);
        generate_result_release(&res);
        /* Verbose lines come as they would on stderr. */
        ck_assert(strv_contains(&f.said, "verbose: 5 installations found"));
        gen_fixture_release(&f);
}
END_TEST

START_TEST(generate_run_refusals_end_in_the_diag)
{
        struct gen_fixture f;
        struct generate_result res;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *gone = NULL, *want = NULL;
        const char *roots[2];
        int r;

        gen_fixture_init(&f);
        /* A configuration error: -EINVAL, nothing scanned or written. */
        free(f.cfg.output);
        f.cfg.output = path_join(f.root, "a:b");
        r = generate_run(&f.o, &res, &d);
        ck_assert_int_eq(r, -EINVAL);
        want = xasprintf("the output directory '%s/a:b' holds ':', which MODULEPATH cannot carry", f.root);
        ck_assert_str_eq(d.message, want);
        ck_assert_uint_eq(f.said.len, 0);
        generate_result_release(&res);
        diag_release(&d);

        /* --prune with a root that is gone: a failure, not a usage error. */
        free(f.cfg.output);
        f.cfg.output = xstrdup(f.out);
        gone = path_join(f.root, "gone");
        roots[0] = f.sw;
        roots[1] = gone;
        f.so.roots = roots;
        f.so.n_roots = 2;
        f.o.prune = true;
        r = generate_run(&f.o, &res, &d);
        ck_assert_int_eq(r, -ENOENT);
        free(want);
        want = xasprintf("'%s': No such file or directory; not pruning, so that a missing mount does not "
                         "remove the modules of everything under it", gone);
        ck_assert_str_eq(d.message, want);
        ck_assert(!is_dir_at(AT_FDCWD, f.out));
        generate_result_release(&res);
        gen_fixture_release(&f);
}
END_TEST

START_TEST(validate_run_validates_the_units_of_a_generated_tree)
{
        struct gen_fixture f;
        struct generate_result gres;
        struct validate_result res;
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_(strv_release) struct strv mp = { 0 }, none = { 0 };
        char *named[] = { (char *)"cuda/12.9", (char *)"nosuch" };
        struct validate_run_options o;
        const char *status;
        int r;

        gen_fixture_init(&f);
        ck_assert_int_eq(generate_run(&f.o, &gres, &d), 0);
        generate_result_release(&gres);
        strv_push(&mp, path_join(f.out, "Core"));
        o = (struct validate_run_options){
                .cfg = &f.cfg, .modulepath = &mp, .modules = named, .n_modules = 1,
                .targets = &none, .probe = getenv("CUDAMOD_PROBE"), .no_compile = true, .jobs = 1,
                .lock_timeout = -1, .log = { .say = collect, .userdata = &f.said },
        };
        ck_assert_ptr_nonnull(o.probe);

        r = validate_run(&o, &res, &d);
        ck_assert_msg(r == 0, "validate_run: %d %s", r, d.message ? d.message : "");
        ck_assert_uint_eq(res.n_units, 1);
        ck_assert_str_eq(res.units[0].module, "cuda/12.9");
        ck_assert_uint_eq(res.n_targets, 1);
        ck_assert_str_eq(res.targets[0].name, "local");
        ck_assert_str_eq(json_string_value(json_object_get(res.results[0], "module")), "cuda/12.9");
        status = json_string_value(json_object_get(res.results[0], "status"));
        ck_assert_ptr_nonnull(status);
        ck_assert_int_eq(validate_result_failed(&res, false), streq(status, "fail"));
        ck_assert_uint_eq(json_array_size(json_object_get(res.summary, "targets")), 1);
        validate_result_release(&res);

        /* A MODULE the modulepath does not have: a usage error. */
        o.modules = named + 1;
        ck_assert_int_eq(validate_run(&o, &res, &d), -EINVAL);
        ck_assert_str_eq(d.message, "no module 'nosuch' in the modulepath (or below its modules)");
        validate_result_release(&res);
        diag_release(&d);

        /* No probe: said before anything is loaded. */
        o.modules = named;
        o.probe = NULL;
        ck_assert_int_eq(validate_run(&o, &res, &d), -EINVAL);
        ck_assert_ptr_nonnull(strstr(d.message, "cudamod-probe was not found"));
        validate_result_release(&res);
        gen_fixture_release(&f);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("generate-run");
        TCase *tc = tcase_create("generate-run");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, generate_run_writes_the_tree_and_counts_it);
        tcase_add_test(tc, generate_run_refusals_end_in_the_diag);
        tcase_add_test(tc, validate_run_validates_the_units_of_a_generated_tree);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
