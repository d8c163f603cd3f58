/* test-plan.c: module names, placement, defaults and environment
 * operations, from scans of fixture trees. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include "component-cuda.h"
#include "component-cudnn.h"
#include "component-nccl.h"
#include "demo.h"
#include "fixture.h"
#include "layouts.h"
#include "plan.h"
#include "scanhelp.h"
#include "strbuf.h"
#include "testutil.h"
#include "util-path.h"
#include "version.h"

struct planned {
        char *root;
        struct scan_result scan;
        struct config cfg;
        struct plan plan;
};

static void plan_fixture(struct planned *p, const char *const *rel_roots, const char *out)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *outdir = path_join(p->root, out ? out : "mf");
        int r;

        if (rel_roots)
                scan_fixture(p->root, rel_roots, &p->scan);
        r = plan_build(&p->scan.installs, &p->cfg, outdir, &p->plan, &d);
        ck_assert_msg(r == 0, "plan_build: %s", d.message ? d.message : "?");
}

static void planned_release(struct planned *p)
{
        plan_release(&p->plan);
        scan_result_release(&p->scan);
        config_release(&p->cfg);
        fx_free(p->root);
}

static const struct module_plan *module(const struct plan *p, const char *path)
{
        for (size_t i = 0; i < p->n_modules; i++)
                if (streq(p->modules[i].path, path))
                        return &p->modules[i];
        return NULL;
}

/* The module's operations as text, one "verb NAME VALUE" per line, with the
 * fixture root replaced by @ROOT@. */
static char *ops_text(const struct module_plan *m, const char *root)
{
        static const char *const verbs[] = { "setenv", "prepend", "append", "pushenv" };
        struct strbuf sb = STRBUF_INIT;
        char *t;

        for (size_t i = 0; i < m->n_ops; i++)
                strbuf_addf(&sb, "%s %s %s\n", verbs[m->ops[i].kind], m->ops[i].name, m->ops[i].value);
        t = str_replace_all(sb.buf, root, "@ROOT@");
        strbuf_release(&sb);
        return t;
}

static bool has_warning(const struct plan *p, const char *needle)
{
        for (size_t i = 0; i < p->warnings.len; i++)
                if (strstr(p->warnings.items[i], needle))
                        return true;
        return false;
}

static bool has_op(const struct module_plan *m, enum env_op_kind k, const char *name)
{
        for (size_t i = 0; i < m->n_ops; i++)
                if (m->ops[i].kind == k && streq(m->ops[i].name, name))
                        return true;
        return false;
}

START_TEST(plan_demo_hierarchy_places_cudnn_and_nccl_under_their_cuda_major)
{
        struct planned p = { .root = fx_new() };
        static const char *const paths[] = {
                "CUDA/11/cudnn/8.9.7.lua", "CUDA/12/cudnn/9.7.1.lua", "CUDA/12/nccl/2.21.5.lua",
                "Core/cuda/11.8.lua",      "Core/cuda/12.9.lua",      NULL,
        };
        static const char *const rcs[][2] = {
                { "CUDA/11/cudnn/.modulerc.lua", "cudnn/8.9.7" },
                { "CUDA/12/cudnn/.modulerc.lua", "cudnn/9.7.1" },
                { "CUDA/12/nccl/.modulerc.lua", "nccl/2.21.5" },
                { "Core/cuda/.modulerc.lua", "cuda/12.9" },
        };
        _cleanup_free_ char *level = NULL;

        config_init_default(&p.cfg);
        demo_build_core(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_uint_eq(p.plan.n_modules, 5);
        for (size_t i = 0; paths[i]; i++)
                ck_assert_str_eq(p.plan.modules[i].path, paths[i]);
        ck_assert_uint_eq(p.plan.n_rcs, ELEMENTSOF(rcs));
        for (size_t i = 0; i < ELEMENTSOF(rcs); i++) {
                ck_assert_str_eq(p.plan.rcs[i].path, rcs[i][0]);
                ck_assert_str_eq(p.plan.rcs[i].module, rcs[i][1]);
        }
        level = xasprintf("%s/mf/CUDA/12", p.root);
        ck_assert_str_eq(module(&p.plan, "Core/cuda/12.9.lua")->modulepath, level);
        ck_assert_ptr_null(module(&p.plan, "CUDA/12/cudnn/9.7.1.lua")->modulepath);
        ck_assert_uint_eq(module(&p.plan, "CUDA/12/cudnn/9.7.1.lua")->n_deps, 0);
        ck_assert_str_eq(module(&p.plan, "CUDA/12/nccl/2.21.5.lua")->family, "nccl");
        ck_assert_uint_eq(p.plan.warnings.len, 0);
        planned_release(&p);
}
END_TEST

/* config driver_check: the toolkit's modules get the two minimum drivers
 * of NVIDIA's table (the version.json's nvidia_driver replacing the
 * release's), no other module does, and with off none does. */
START_TEST(plan_driver_check_is_for_the_toolkit_only)
{
        static const enum driver_check modes[] = { DRIVER_CHECK_WARN, DRIVER_CHECK_ERROR, DRIVER_CHECK_OFF };

        for (size_t k = 0; k < ELEMENTSOF(modes); k++) {
                struct planned p = { .root = fx_new() };
                const struct module_plan *m;

                config_init_default(&p.cfg);
                p.cfg.driver_check = modes[k];
                demo_build_core(p.root);
                plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
                for (size_t i = 0; i < p.plan.n_modules; i++) {
                        m = &p.plan.modules[i];
                        if (modes[k] == DRIVER_CHECK_OFF || !m->install->component->toolkit) {
                                ck_assert_ptr_null(m->driver_major_min);
                                ck_assert_ptr_null(m->driver_release_min);
                                ck_assert(!m->driver_refuse);
                        }
                }
                if (modes[k] != DRIVER_CHECK_OFF) {
                        m = module(&p.plan, "Core/cuda/12.9.lua");
                        ck_assert_str_eq(m->driver_cuda, "12.9");
                        ck_assert_str_eq(m->driver_major_min, "525.60.13");
                        ck_assert_str_eq(m->driver_release_min, "575.51.03");
                        ck_assert(m->driver_refuse == (modes[k] == DRIVER_CHECK_ERROR));
                        m = module(&p.plan, "Core/cuda/11.8.lua");
                        ck_assert_str_eq(m->driver_major_min, "450.80.02");
                        ck_assert_str_eq(m->driver_release_min, "520.61.05");
                }
                planned_release(&p);
        }
}
END_TEST

/* A runfile's version.json names the driver it shipped ("nvidia_driver"):
 * that is the release's minimum, not the table's. */
START_TEST(plan_driver_check_takes_the_version_json_driver)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *m;

        config_init_default(&p.cfg);
        demo_build_core(p.root);
        fx_write(p.root, "sw/cuda-12.9/version.json",
                 "{ \"cuda\": { \"name\": \"CUDA SDK\", \"version\": \"12.9.1\" },\n"
                 "  \"nvidia_driver\": { \"name\": \"NVIDIA Linux Driver\", \"version\": \"575.57.08\" } }\n");
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        m = module(&p.plan, "Core/cuda/12.9.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->driver_release_min, "575.57.08");
        ck_assert_str_eq(m->driver_major_min, "525.60.13");
        planned_release(&p);
}
END_TEST

START_TEST(plan_cuda_operations_follow_design_section_5)
{
        struct planned p = { .root = fx_new() };
        _cleanup_free_ char *ops = NULL;
        /* The scan reports the real directories (lib64 and include are
         * links into targets/x86_64-linux in a runfile tree). */
        const char *want =
                "pushenv CUDA_HOME @ROOT@/sw/cuda-12.9\n"
                "pushenv CUDA_PATH @ROOT@/sw/cuda-12.9\n"
                "pushenv CUDA_ROOT @ROOT@/sw/cuda-12.9\n"
                "pushenv CUDAToolkit_ROOT @ROOT@/sw/cuda-12.9\n"
                "setenv CUDACXX @ROOT@/sw/cuda-12.9/bin/nvcc\n"
                "prepend PATH @ROOT@/sw/cuda-12.9/bin\n"
                /* Prepended last-first: lib first, then CUPTI, then nvvm. */
                "prepend LD_LIBRARY_PATH @ROOT@/sw/cuda-12.9/nvvm/lib64\n"
                "prepend LD_LIBRARY_PATH @ROOT@/sw/cuda-12.9/extras/CUPTI/lib64\n"
                "prepend LD_LIBRARY_PATH @ROOT@/sw/cuda-12.9/targets/x86_64-linux/lib\n"
                "prepend LIBRARY_PATH @ROOT@/sw/cuda-12.9/nvvm/lib64\n"
                "prepend LIBRARY_PATH @ROOT@/sw/cuda-12.9/extras/CUPTI/lib64\n"
                "prepend LIBRARY_PATH @ROOT@/sw/cuda-12.9/targets/x86_64-linux/lib\n"
                "prepend CPATH @ROOT@/sw/cuda-12.9/extras/CUPTI/include\n"
                "prepend CPATH @ROOT@/sw/cuda-12.9/targets/x86_64-linux/include\n"
                "prepend CMAKE_PREFIX_PATH @ROOT@/sw/cuda-12.9\n"
                "append LIBRARY_PATH @ROOT@/sw/cuda-12.9/targets/x86_64-linux/lib/stubs\n";

        config_init_default(&p.cfg);
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ops = ops_text(module(&p.plan, "Core/cuda/12.9.lua"), p.root);
        ck_assert_str_eq(ops, want);
        planned_release(&p);
}
END_TEST

START_TEST(plan_cudnn_and_nccl_operations_follow_design_section_5)
{
        struct planned p = { .root = fx_new() };
        _cleanup_free_ char *cudnn = NULL, *nccl = NULL;
        const char *want_cudnn =
                "pushenv CUDNN_ROOT @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive\n"
                "pushenv CUDNN_HOME @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive\n"
                "pushenv CUDNN_PATH @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive\n"
                "setenv CUDNN_INCLUDE_DIR @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive/include\n"
                "setenv CUDNN_LIB_DIR @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive/lib\n"
                "prepend LD_LIBRARY_PATH @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive/lib\n"
                "prepend LIBRARY_PATH @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive/lib\n"
                "prepend CPATH @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive/include\n"
                "prepend CMAKE_PREFIX_PATH @ROOT@/sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive\n";
        const char *want_nccl =
                "pushenv NCCL_ROOT @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64\n"
                "pushenv NCCL_HOME @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64\n"
                "setenv NCCL_INCLUDE_DIR @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64/include\n"
                "setenv NCCL_LIB_DIR @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64/lib\n"
                "setenv USE_SYSTEM_NCCL 1\n"
                "prepend LD_LIBRARY_PATH @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64/lib\n"
                "prepend LIBRARY_PATH @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64/lib\n"
                "prepend CPATH @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64/include\n"
                "prepend CMAKE_PREFIX_PATH @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64\n"
                "prepend PKG_CONFIG_PATH @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64/lib/pkgconfig\n";

        config_init_default(&p.cfg);
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        cudnn = ops_text(module(&p.plan, "CUDA/12/cudnn/9.7.1.lua"), p.root);
        nccl = ops_text(module(&p.plan, "CUDA/12/nccl/2.21.5.lua"), p.root);
        ck_assert_str_eq(cudnn, want_cudnn);
        ck_assert_str_eq(nccl, want_nccl);
        planned_release(&p);
}
END_TEST

/* Plan decides from what the scan recorded, never from the disk: a
 * directory removed after the scan is still named, one made after it is
 * not (generate scans right before it plans). */
START_TEST(plan_does_not_look_at_the_disk)
{
        struct planned p = { .root = fx_new() };
        const char *nccl_dir = "sw/nccl_2.21.5-1+cuda12.4_x86_64";
        _cleanup_free_ char *pc = NULL, *pc_file = NULL, *ops = NULL;

        config_init_default(&p.cfg);
        demo_build(p.root);
        scan_fixture(p.root, (const char *const[]){ "sw", NULL }, &p.scan);
        pc = xasprintf("%s/%s/lib/pkgconfig", p.root, nccl_dir);
        pc_file = path_join(pc, "nccl.pc");
        ck_assert_int_eq(unlink(pc_file), 0);
        ck_assert_int_eq(rmdir(pc), 0);
        /* The toolkit's man pages would be on MANPATH had the scan seen them. */
        fx_mkdir(p.root, "sw/cuda-12.9/share/man");
        plan_fixture(&p, NULL, NULL);
        ops = ops_text(module(&p.plan, "CUDA/12/nccl/2.21.5.lua"), p.root);
        ck_assert_msg(strstr(ops, "prepend PKG_CONFIG_PATH @ROOT@/sw/nccl_2.21.5-1+cuda12.4_x86_64/lib/pkgconfig\n"),
                      "%s", ops);
        free(ops);
        ops = ops_text(module(&p.plan, "Core/cuda/12.9.lua"), p.root);
        ck_assert_msg(!strstr(ops, "MANPATH"), "%s", ops);
        planned_release(&p);
}
END_TEST

/* Forward compatibility (config cuda_compat): never by default; with auto,
 * the toolkit that has compat/ gets its directory and driver (for the
 * module's block, never an op: no path variable names compat/ at plan
 * time), the one without gets nothing. */
START_TEST(plan_cuda_compat_only_when_configured)
{
        const struct layout_fixture *f = layout_fixture_find("compat");

        for (int on = 0; on <= 1; on++) {
                struct planned p = { .root = fx_new() };
                const struct module_plan *m129, *m124;
                _cleanup_free_ char *want = NULL;

                config_init_default(&p.cfg);
                p.cfg.cuda_compat = on;
                f->build(p.root);
                plan_fixture(&p, f->roots, NULL);
                m129 = module(&p.plan, "Core/cuda/12.9.lua");
                m124 = module(&p.plan, "Core/cuda/12.4.lua");
                want = path_join(p.root, "usr/local/cuda-12.9/compat");
                if (on) {
                        ck_assert_str_eq(m129->compat_dir, want);
                        ck_assert_str_eq(m129->compat_driver, "575.51.03");
                        ck_assert_msg(strstr(m129->help, "is of an older branch than 575.51.03, it\nalso puts"),
                                      "%s", m129->help);
                } else {
                        ck_assert_ptr_null(m129->compat_dir);
                        ck_assert_ptr_null(m129->compat_driver);
                        ck_assert_msg(!strstr(m129->help, "Forward"), "%s", m129->help);
                }
                ck_assert_ptr_null(m124->compat_dir);
                for (size_t i = 0; i < m129->n_ops; i++)
                        ck_assert_msg(!strstr(m129->ops[i].value, "compat"), "%s %s", m129->ops[i].name,
                                      m129->ops[i].value);
                planned_release(&p);
        }
}
END_TEST

START_TEST(plan_config_switches_change_the_operations)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *cuda, *cudnn, *nccl;

        config_init_default(&p.cfg);
        p.cfg.ld_library_path[component_cuda.index] = false;
        p.cfg.stubs_on_library_path = false;
        p.cfg.pytorch_build_env = false;
        free(p.cfg.cuda_arch_list);
        p.cfg.cuda_arch_list = xstrdup("8.0;9.0");
        p.cfg.env[component_nccl.index].items = xcalloc(2, sizeof(struct env_op));
        p.cfg.env[component_nccl.index].items[0] = (struct env_op){ ENV_OP_SETENV, xstrdup("NCCL_IB_DISABLE"),
                                                              xstrdup("1") };
        p.cfg.env[component_nccl.index].items[1] = (struct env_op){ ENV_OP_PUSHENV, xstrdup("NCCL_SOCKET_IFNAME"),
                                                              xstrdup("ib0") };
        p.cfg.env[component_nccl.index].len = p.cfg.env[component_nccl.index].alloc = 2;
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        cuda = module(&p.plan, "Core/cuda/12.9.lua");
        cudnn = module(&p.plan, "CUDA/12/cudnn/9.7.1.lua");
        nccl = module(&p.plan, "CUDA/12/nccl/2.21.5.lua");
        ck_assert(!has_op(cuda, ENV_OP_PREPEND_PATH, "LD_LIBRARY_PATH"));
        ck_assert(has_op(cuda, ENV_OP_PREPEND_PATH, "LIBRARY_PATH"));
        ck_assert(!has_op(cuda, ENV_OP_APPEND_PATH, "LIBRARY_PATH"));
        ck_assert(!has_op(cuda, ENV_OP_SETENV, "CUDACXX"));
        ck_assert(has_op(cuda, ENV_OP_PUSHENV, "CUDA_HOME"));
        ck_assert(has_op(cuda, ENV_OP_SETENV, "TORCH_CUDA_ARCH_LIST"));
        ck_assert(!has_op(cudnn, ENV_OP_PUSHENV, "CUDNN_ROOT"));
        ck_assert(has_op(cudnn, ENV_OP_PUSHENV, "CUDNN_HOME"));
        ck_assert(has_op(cudnn, ENV_OP_PREPEND_PATH, "LD_LIBRARY_PATH"));
        ck_assert(!has_op(nccl, ENV_OP_SETENV, "USE_SYSTEM_NCCL"));
        ck_assert(!has_op(nccl, ENV_OP_PUSHENV, "NCCL_ROOT"));
        /* The site's ops come last, as the config gives them: env.nccl.pushenv a pushenv. */
        ck_assert_str_eq(nccl->ops[nccl->n_ops - 2].name, "NCCL_IB_DISABLE");
        ck_assert_int_eq(nccl->ops[nccl->n_ops - 2].kind, ENV_OP_SETENV);
        ck_assert_str_eq(nccl->ops[nccl->n_ops - 1].name, "NCCL_SOCKET_IFNAME");
        ck_assert_int_eq(nccl->ops[nccl->n_ops - 1].kind, ENV_OP_PUSHENV);
        planned_release(&p);
}
END_TEST

static const char *op_value(const struct module_plan *m, const char *name)
{
        for (size_t i = 0; i < m->n_ops; i++)
                if (streq(m->ops[i].name, name))
                        return m->ops[i].value;
        return NULL;
}

/* host_compiler: a path gives CUDAHOSTCXX and -ccbin to the cuda modules
 * of its major; a module alone makes them load it and sets neither. */
START_TEST(plan_host_compiler_sets_cudahostcxx_and_ccbin_or_loads_its_module)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *cuda12, *cuda11, *cudnn;

        config_init_default(&p.cfg);
        p.cfg.host_compilers = xcalloc(2, sizeof(*p.cfg.host_compilers));
        p.cfg.host_compilers[0] = (struct config_host_compiler){ .cuda_major = 12, .path = xstrdup("/opt/gcc 13/g++") };
        p.cfg.host_compilers[1] = (struct config_host_compiler){ .cuda_major = 11, .module = xstrdup("gcc/11") };
        p.cfg.n_host_compilers = 2;
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        cuda12 = module(&p.plan, "Core/cuda/12.9.lua");
        cuda11 = module(&p.plan, "Core/cuda/11.8.lua");
        cudnn = module(&p.plan, "CUDA/12/cudnn/9.7.1.lua");
        ck_assert_ptr_nonnull(cuda12);
        ck_assert_ptr_nonnull(cuda11);
        ck_assert_str_eq(op_value(cuda12, "CUDAHOSTCXX"), "/opt/gcc 13/g++");
        ck_assert_str_eq(op_value(cuda12, "NVCC_PREPEND_FLAGS"), "-ccbin=/opt/gcc 13/g++");
        ck_assert_ptr_null(cuda12->requires);
        ck_assert_str_eq(cuda11->requires, "gcc/11");
        ck_assert_ptr_nonnull(strstr(cuda11->help, "It loads gcc/11, the host compiler"));
        ck_assert_ptr_null(op_value(cuda11, "CUDAHOSTCXX"));
        ck_assert_ptr_null(op_value(cuda11, "NVCC_PREPEND_FLAGS"));
        ck_assert_ptr_null(op_value(cudnn, "CUDAHOSTCXX"));
        ck_assert_ptr_null(cudnn->requires);
        planned_release(&p);
}
END_TEST

/* The config's position of pytorch.cuda_arch_list travels with its op, so
 * that the renderer's gate can name it; the scan's values carry none. */
START_TEST(plan_arch_list_op_carries_its_config_position)
{
        static const char yaml[] = "# site\npytorch:\n  cuda_arch_list: \"8.0;9.0\"\n";
        struct planned p = { .root = fx_new() };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        const struct module_plan *cuda;
        bool seen = false;

        config_init_default(&p.cfg);
        ck_assert_int_eq(config_load_buffer(&p.cfg, yaml, strlen(yaml), "site.yaml", &d), 0);
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        cuda = module(&p.plan, "Core/cuda/12.9.lua");
        for (size_t i = 0; i < cuda->n_ops; i++) {
                if (streq(cuda->ops[i].name, "TORCH_CUDA_ARCH_LIST")) {
                        ck_assert_str_eq(cuda->ops[i].origin, "site.yaml:3:19: 'pytorch.cuda_arch_list'");
                        seen = true;
                } else {
                        ck_assert_ptr_null(cuda->ops[i].origin);
                }
        }
        ck_assert(seen);
        planned_release(&p);
}
END_TEST

START_TEST(plan_stubs_are_never_on_ld_library_path)
{
        const struct layout_fixture *f;

        for (f = layout_fixtures; f->name; f++) {
                struct planned p = { .root = fx_new() };

                config_init_default(&p.cfg);
                f->build(p.root);
                plan_fixture(&p, f->roots, NULL);
                for (size_t i = 0; i < p.plan.n_modules; i++) {
                        const struct module_plan *m = &p.plan.modules[i];
                        for (size_t k = 0; k < m->n_ops; k++) {
                                const struct plan_op *op = &m->ops[k];
                                if (strstr(op->value, "/stubs"))
                                        ck_assert_msg(op->kind == ENV_OP_APPEND_PATH &&
                                                              streq(op->name, "LIBRARY_PATH"),
                                                      "%s: %s %s", f->name, op->name, op->value);
                                /* Values are never empty or end in '/'. */
                                ck_assert_msg(*op->value && op->value[strlen(op->value) - 1] != '/',
                                              "%s: %s '%s'", f->name, op->name, op->value);
                        }
                }
                planned_release(&p);
        }
}
END_TEST

START_TEST(plan_system_install_sets_only_root_variables)
{
        struct planned p = { .root = fx_new() };

        config_init_default(&p.cfg);
        layout_fixture_find("system")->build(p.root);
        plan_fixture(&p, layout_fixture_find("system")->roots, NULL);
        ck_assert_uint_gt(p.plan.n_modules, 0);
        for (size_t i = 0; i < p.plan.n_modules; i++) {
                const struct module_plan *m = &p.plan.modules[i];
                ck_assert_int_eq(m->install->layout, LAYOUT_SYSTEM);
                for (size_t k = 0; k < m->n_ops; k++)
                        ck_assert_msg(m->ops[k].kind == ENV_OP_SETENV || m->ops[k].kind == ENV_OP_PUSHENV,
                                      "%s: %s %s", m->path,
                                      m->ops[k].name, m->ops[k].value);
        }
        planned_release(&p);
}
END_TEST

START_TEST(plan_flat_layout_depends_on_the_cuda_major)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *m;

        config_init_default(&p.cfg);
        p.cfg.layout = MODULE_LAYOUT_FLAT;
        p.cfg.format = FORMAT_TCL;
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_ptr_nonnull(module(&p.plan, "cuda/12.9"));
        ck_assert_ptr_null(module(&p.plan, "cuda/12.9")->modulepath);
        m = module(&p.plan, "cudnn/8.9.7");
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->n_deps, 1);
        ck_assert_str_eq(m->deps[0].name, "cuda");
        ck_assert_str_eq(m->deps[0].min, "11");
        ck_assert_str_eq(m->deps[0].max, "11.999999");
        ck_assert_str_eq(m->deps[0].em_spec, "cuda@11:11.999999");
        ck_assert_str_eq(p.plan.rcs[0].path, "cuda/.modulerc");
        planned_release(&p);
}
END_TEST

static void two_cudnn_builds(const char *root)
{
        fx_cudnn(root, "sw/cudnn-linux-x86_64-9.7.1.26_cuda11-archive",
                 &(struct fx_cudnn){ .version = "9.7.1", .cuda_major = 11 });
        fx_cudnn(root, "sw/cudnn-linux-x86_64-9.7.1.26_cuda12-archive",
                 &(struct fx_cudnn){ .version = "9.7.1", .cuda_major = 12 });
}

START_TEST(plan_flat_cudnn_builds_for_two_majors_get_suffixes)
{
        struct planned p = { .root = fx_new() };

        config_init_default(&p.cfg);
        p.cfg.layout = MODULE_LAYOUT_FLAT;
        two_cudnn_builds(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_uint_eq(p.plan.n_modules, 2);
        ck_assert_str_eq(p.plan.modules[0].path, "cudnn/9.7.1-cuda11.lua");
        ck_assert_str_eq(p.plan.modules[1].path, "cudnn/9.7.1-cuda12.lua");
        ck_assert(has_warning(&p.plan, "2 installs would share module 'cudnn/9.7.1'"));
        planned_release(&p);
}
END_TEST

START_TEST(plan_hierarchy_keeps_builds_for_two_majors_apart)
{
        struct planned p = { .root = fx_new() };

        config_init_default(&p.cfg);
        two_cudnn_builds(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_uint_eq(p.plan.n_modules, 2);
        ck_assert_str_eq(p.plan.modules[0].path, "CUDA/11/cudnn/9.7.1.lua");
        ck_assert_str_eq(p.plan.modules[1].path, "CUDA/12/cudnn/9.7.1.lua");
        /* No renaming; only that no cuda module reaches either level. */
        ck_assert_uint_eq(p.plan.warnings.len, 2);
        ck_assert(has_warning(&p.plan, "CUDA/11/cudnn/9.7.1.lua': no cuda 11 module is generated"));
        ck_assert(has_warning(&p.plan, "CUDA/12/cudnn/9.7.1.lua': no cuda 12 module is generated"));
        planned_release(&p);
}
END_TEST

START_TEST(plan_two_cuda_releases_of_one_minor_are_named_by_release)
{
        struct planned p = { .root = fx_new() };

        config_init_default(&p.cfg);
        fx_cuda_toolkit(p.root, "sw/cuda-12.4.0",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.0", .cudart = "12.4.99",
                                           .nvcc = "12.4.99" });
        fx_cuda_toolkit(p.root, "sw/cuda-12.4.1",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131" });
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_uint_eq(p.plan.n_modules, 2);
        ck_assert_str_eq(p.plan.modules[0].path, "Core/cuda/12.4.0.lua");
        ck_assert_str_eq(p.plan.modules[1].path, "Core/cuda/12.4.1.lua");
        ck_assert_str_eq(p.plan.rcs[0].module, "cuda/12.4.1");
        ck_assert(has_warning(&p.plan, "2 installs would share module 'cuda/12.4'"));
        planned_release(&p);
}
END_TEST

START_TEST(plan_identical_installs_are_numbered_in_scan_order)
{
        struct planned p = { .root = fx_new() };
        const struct fx_cuda c = { .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                   .nvcc = "12.4.131" };

        config_init_default(&p.cfg);
        fx_cuda_toolkit(p.root, "sw/a/cuda", &c);
        fx_cuda_toolkit(p.root, "sw/b/cuda", &c);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_uint_eq(p.plan.n_modules, 2);
        ck_assert_str_eq(p.plan.modules[0].path, "Core/cuda/12.4-2.lua");
        ck_assert(endswith(p.plan.modules[0].install->prefix, "/sw/b/cuda"));
        ck_assert_str_eq(p.plan.modules[1].path, "Core/cuda/12.4.lua");
        ck_assert(endswith(p.plan.modules[1].install->prefix, "/sw/a/cuda"));
        ck_assert(has_warning(&p.plan, "/sw/b/cuda"));
        planned_release(&p);
}
END_TEST

START_TEST(plan_builds_for_another_architecture_give_way)
{
        struct planned p = { .root = fx_new() };
        const struct layout_fixture *f = layout_fixture_find("cudnn-tarballs");
        struct utsname u;

        ck_assert_int_eq(uname(&u), 0);
        if (!streq(u.machine, "x86_64"))
                return; /* the fixture's foreign build is the aarch64 one */
        config_init_default(&p.cfg);
        f->build(p.root);
        plan_fixture(&p, f->roots, NULL);
        ck_assert(endswith(module(&p.plan, "CUDA/12/cudnn/9.7.1.lua")->install->prefix,
                           "cudnn-linux-x86_64-9.7.1.26_cuda12-archive"));
        ck_assert(endswith(module(&p.plan, "CUDA/12/cudnn/9.7.1-aarch64.lua")->install->prefix,
                           "cudnn-linux-sbsa-9.7.1.26_cuda12-archive"));
        /* The default is the same build in both formats. */
        for (size_t i = 0; i < p.plan.n_rcs; i++)
                if (streq(p.plan.rcs[i].path, "CUDA/12/cudnn/.modulerc.lua"))
                        ck_assert_str_eq(p.plan.rcs[i].module, "cudnn/9.7.1");
        plan_release(&p.plan);
        p.cfg.format = FORMAT_TCL;
        plan_fixture(&p, NULL, NULL);
        for (size_t i = 0; i < p.plan.n_rcs; i++)
                if (streq(p.plan.rcs[i].path, "CUDA/12/cudnn/.modulerc"))
                        ck_assert_str_eq(p.plan.rcs[i].module, "cudnn/9.7.1");
        planned_release(&p);
}
END_TEST

START_TEST(plan_equal_versions_default_to_the_first_in_scan_order)
{
        struct planned p = { .root = fx_new() };
        const struct fx_cuda c = { .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                   .nvcc = "12.4.131" };

        for (int f = FORMAT_LUA; f <= FORMAT_TCL; f++) {
                config_init_default(&p.cfg);
                p.cfg.format = f;
                if (f == FORMAT_LUA) {
                        fx_cuda_toolkit(p.root, "sw/a/cuda", &c);
                        fx_cuda_toolkit(p.root, "sw/b/cuda", &c);
                }
                plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
                ck_assert_uint_eq(p.plan.n_rcs, 1);
                ck_assert_str_eq(p.plan.rcs[0].module, "cuda/12.4");
                plan_release(&p.plan);
                scan_result_release(&p.scan);
                config_release(&p.cfg);
        }
        fx_free(p.root);
}
END_TEST

START_TEST(plan_defaults_follow_the_config)
{
        static const struct {
                enum default_kind kind;
                const char *version;
                const char *want; /* the cuda default, NULL: none */
                bool warns;
        } cases[] = {
                { DEFAULT_LATEST, NULL, "cuda/12.9", false },
                { DEFAULT_VERSION, "11.8", "cuda/11.8", false },
                { DEFAULT_VERSION, "11", "cuda/11.8", false },
                { DEFAULT_VERSION, "12.9.1", "cuda/12.9", false },
                { DEFAULT_VERSION, "10.2", NULL, true },
                { DEFAULT_NONE, NULL, NULL, false },
                { .want = "sentinel" },
        };

        for (size_t i = 0; !cases[i].want || !streq(cases[i].want, "sentinel"); i++) {
                struct planned p = { .root = fx_new() };
                const char *got = NULL;

                config_init_default(&p.cfg);
                p.cfg.defaults[component_cuda.index].kind = cases[i].kind;
                p.cfg.defaults[component_cuda.index].version = cases[i].version ? xstrdup(cases[i].version) : NULL;
                demo_build(p.root);
                plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
                for (size_t k = 0; k < p.plan.n_rcs; k++)
                        if (startswith(p.plan.rcs[k].path, "Core/cuda/"))
                                got = p.plan.rcs[k].module;
                if (cases[i].want)
                        ck_assert_msg(got && streq(got, cases[i].want), "case %zu: %s", i, got ? got : "none");
                else
                        ck_assert_msg(!got, "case %zu: %s", i, got);
                ck_assert_int_eq(has_warning(&p.plan, "defaults.cuda"), cases[i].warns);
                planned_release(&p);
        }
}
END_TEST

/* Flat layout, one cuDNN version built for CUDA 11 and 12 (cudnn/9.1.0-cuda11,
 * -cuda12): the default is the build for the default cuda's major, whichever
 * the scan met first, so that `module load cuda cudnn` loads two modules that
 * go together; with cuda 11.8 the default, the CUDA 11 build. */
START_TEST(plan_flat_default_follows_the_default_cuda)
{
        static const struct {
                const char *cuda_default, *want;
        } cases[] = {
                { NULL, "cudnn/9.1.0-cuda12" },
                { "11.8", "cudnn/9.1.0-cuda11" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct planned p = { .root = fx_new() };
                const char *got = NULL;

                config_init_default(&p.cfg);
                p.cfg.layout = MODULE_LAYOUT_FLAT;
                if (cases[i].cuda_default) {
                        p.cfg.defaults[component_cuda.index].kind = DEFAULT_VERSION;
                        p.cfg.defaults[component_cuda.index].version = xstrdup(cases[i].cuda_default);
                }
                demo_build(p.root);
                /* "a-…" is met first in scan order, and is for CUDA 11. */
                fx_cudnn(p.root, "sw/a-cudnn-9.1.0-cuda11", &(struct fx_cudnn){ .version = "9.1.0", .cuda_major = 11 });
                fx_cudnn(p.root, "sw/z-cudnn-9.1.0-cuda12", &(struct fx_cudnn){ .version = "9.1.0", .cuda_major = 12 });
                p.cfg.defaults[component_cudnn.index].kind = DEFAULT_VERSION;
                p.cfg.defaults[component_cudnn.index].version = xstrdup("9.1");
                plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
                for (size_t k = 0; k < p.plan.n_rcs; k++)
                        if (startswith(p.plan.rcs[k].path, "cudnn/"))
                                got = p.plan.rcs[k].module;
                ck_assert_msg(got && streq(got, cases[i].want), "case %zu: %s", i, got ? got : "none");
                planned_release(&p);
        }
}
END_TEST

START_TEST(plan_leaves_out_installs_it_cannot_serve)
{
        struct planned p = { .root = fx_new() };

        config_init_default(&p.cfg);
        /* Its libraries name no CUDA library: the CUDA major is unknown. */
        fx_cudnn(p.root, "sw/cudnn-a", &(struct fx_cudnn){ .version = "9.1.0", .cuda_major = 0 });
        /* A newline would reach the shell raw through Lmod and EM. */
        fx_cuda_toolkit(p.root, "sw/cuda-12.8\nid",
                        &(struct fx_cuda){ .version = "12.8", .release = "12.8.1", .cudart = "12.8.90",
                                           .nvcc = "12.8.93" });
        /* A prefix holding ':' cannot be put on a path variable. */
        fx_cuda_toolkit(p.root, "sw/cuda:12.9",
                        &(struct fx_cuda){ .version = "12.9", .release = "12.9.1", .cudart = "12.9.79",
                                           .nvcc = "12.9.86" });
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_uint_eq(p.plan.n_modules, 0);
        ck_assert(has_warning(&p.plan, "the CUDA major it was built for is unknown"));
        ck_assert(has_warning(&p.plan, "holds ':'"));
        ck_assert(has_warning(&p.plan, "holds a control character"));
        planned_release(&p);
}
END_TEST

/* A toolkit deeper than PATH_MAX: the scan finds it (it walks by
 * directory descriptors), no program could open it by name, and it gets no
 * module, with a warning, rather than one with CUDA_HOME and nothing else. */
START_TEST(plan_refuses_prefixes_longer_than_path_max)
{
        struct planned p = { .root = fx_new() };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *deep = path_join(p.root, "deep");
        const char *roots[] = { deep, NULL };
        char name[201];
        int fd;

        config_init_default(&p.cfg);
        fx_cuda_toolkit(p.root, "sw/cuda-12.8",
                        &(struct fx_cuda){ .version = "12.8", .release = "12.8.1", .cudart = "12.8.90",
                                           .nvcc = "12.8.93" });
        memset(name, 'd', 200);
        name[200] = '\0';
        fx_mkdir(p.root, "deep");
        fd = open(deep, O_RDONLY | O_DIRECTORY);
        ck_assert_int_ge(fd, 0);
        for (int i = 0; i < 21; i++) { /* 21 × 201 bytes */
                int next;

                ck_assert_int_eq(mkdirat(fd, name, 0755), 0);
                next = openat(fd, name, O_RDONLY | O_DIRECTORY);
                ck_assert_int_ge(next, 0);
                close(fd);
                fd = next;
        }
        {
                _cleanup_free_ char *from = path_join(p.root, "sw/cuda-12.8");

                ck_assert_int_eq(renameat(AT_FDCWD, from, fd, "cuda-12.8"), 0);
        }
        close(fd);
        ck_assert_int_eq(scan_run(&(struct scan_options){ .roots = roots, .n_roots = 1, .max_depth = 30 },
                                  &p.scan, &d), 0);
        ck_assert_uint_eq(p.scan.installs.len, 1);
        ck_assert_uint_gt(strlen(p.scan.installs.items[0]->prefix), PATH_MAX);
        plan_fixture(&p, NULL, NULL);
        ck_assert_uint_eq(p.plan.n_modules, 0);
        ck_assert(has_warning(&p.plan, "gets no module"));
        ck_assert(has_warning(&p.plan, "longer than the 4095 bytes Linux accepts in a path name (PATH_MAX)"));
        /* fx_free (nftw) cannot reach what is deeper than PATH_MAX: cut
         * the chain in two, its lower half moved up beside it. */
        fd = open(deep, O_RDONLY | O_DIRECTORY);
        ck_assert_int_ge(fd, 0);
        for (int i = 0; i < 10; i++) {
                int next = openat(fd, name, O_RDONLY | O_DIRECTORY);

                ck_assert_int_ge(next, 0);
                close(fd);
                fd = next;
        }
        {
                _cleanup_free_ char *lower = path_join(p.root, "lower");

                ck_assert_int_eq(renameat(fd, name, AT_FDCWD, lower), 0);
        }
        close(fd);
        planned_release(&p);
}
END_TEST

/* A prefix that is not ASCII (here not even UTF-8) gets a Lua module (Lua
 * strings are bytes), and no Tcl one: Lmod's tcl2lua reads a Tcl modulefile
 * as ISO 8859-1 and writes UTF-8, Environment Modules in a UTF-8 locale
 * would export other bytes. */
START_TEST(plan_refuses_non_utf8_paths_for_tcl_only)
{
        for (int f = FORMAT_LUA; f <= FORMAT_TCL; f++) {
                struct planned p = { .root = fx_new() };

                config_init_default(&p.cfg);
                p.cfg.format = (enum module_format)f;
                fx_cuda_toolkit(p.root, "sw/cuda-\xff" "12.8",
                                &(struct fx_cuda){ .version = "12.8", .release = "12.8.1",
                                                   .cudart = "12.8.90", .nvcc = "12.8.93" });
                plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
                ck_assert_uint_eq(p.plan.n_modules, (f == FORMAT_LUA ? 1 : 0));
                ck_assert(has_warning(&p.plan, "Lmod reading a Tcl modulefile turns") == (f == FORMAT_TCL));
                planned_release(&p);
        }
}
END_TEST

START_TEST(plan_naming_templates_name_the_modules)
{
        struct planned p = { .root = fx_new() };

        config_init_default(&p.cfg);
        free(p.cfg.naming[component_cuda.index]);
        p.cfg.naming[component_cuda.index] = xstrdup("{major}.{minor}.{patch}");
        free(p.cfg.naming[component_cudnn.index]);
        p.cfg.naming[component_cudnn.index] = xstrdup("{major}.{minor}.{patch}.{build}-cu{cuda_major}");
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_ptr_nonnull(module(&p.plan, "Core/cuda/12.9.1.lua"));
        ck_assert_ptr_nonnull(module(&p.plan, "CUDA/12/cudnn/9.7.1.26-cu12.lua"));
        planned_release(&p);
}
END_TEST

/* ---- site naming, names that stay, the architecture rule ---- */

static bool on_x86_64(void)
{
        struct utsname u;

        ck_assert_int_eq(uname(&u), 0);
        return streq(u.machine, "x86_64");
}

static const struct modulerc_plan *rc_of(const struct plan *p, const char *path)
{
        for (size_t i = 0; i < p->n_rcs; i++)
                if (streq(p->rcs[i].path, path))
                        return &p->rcs[i];
        return NULL;
}

static void load_config_text(struct config *c, const char *yaml)
{
        _cleanup_diag_ struct diag d = DIAG_INIT;

        ck_assert_msg(config_load_buffer(c, yaml, strlen(yaml), "site.yaml", &d) == 0, "%s",
                      d.message ? d.message : "?");
}

/* Finding 7 of issue 18: a lone aarch64 NCCL (for CUDA 11) was named
 * nccl/2.18.3 and made the default on an x86_64 host, so `module load
 * cuda/11.8 nccl` gave it. */
START_TEST(plan_lone_foreign_build_carries_its_arch_and_is_never_a_default)
{
        struct planned p = { .root = fx_new() };
        const struct layout_fixture *f = layout_fixture_find("nccl-tarballs");
        const struct modulerc_plan *rc;
        const struct module_plan *m;

        if (!on_x86_64())
                return; /* the fixture's foreign build is the aarch64 one */
        config_init_default(&p.cfg);
        f->build(p.root);
        plan_fixture(&p, f->roots, NULL);
        ck_assert_ptr_null(module(&p.plan, "CUDA/11/nccl/2.18.3.lua"));
        m = module(&p.plan, "CUDA/11/nccl/2.18.3-aarch64.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert(m->foreign && !m->is_default);
        rc = rc_of(&p.plan, "CUDA/11/nccl/.modulerc.lua");
        ck_assert_ptr_nonnull(rc);
        ck_assert_ptr_null(rc->module);
        ck_assert_uint_eq(rc->hidden.len, 1);
        ck_assert_str_eq(rc->hidden.items[0], "nccl/2.18.3-aarch64");
        /* The native one is as before: the default, nothing hidden. */
        rc = rc_of(&p.plan, "CUDA/12/nccl/.modulerc.lua");
        ck_assert_str_eq(rc->module, "nccl/2.21.5");
        ck_assert_uint_eq(rc->hidden.len, 0);
        /* With defaults: none, it is still hidden (an unmarked directory's
         * default is its highest version). */
        plan_release(&p.plan);
        load_config_text(&p.cfg, "defaults: {nccl: none}\n");
        plan_fixture(&p, NULL, NULL);
        rc = rc_of(&p.plan, "CUDA/11/nccl/.modulerc.lua");
        ck_assert_ptr_nonnull(rc);
        ck_assert_ptr_null(rc->module);
        ck_assert_uint_eq(rc->hidden.len, 1);
        planned_release(&p);
}
END_TEST

/* arch: aarch64: a tree for the Arm partition, where the sbsa build is
 * the plain name and default, and the x86_64 builds the foreign ones. */
START_TEST(plan_arch_config_selects_the_architecture_the_tree_is_for)
{
        struct planned p = { .root = fx_new() };
        const struct layout_fixture *f = layout_fixture_find("cudnn-tarballs");
        const struct modulerc_plan *rc;

        config_init_default(&p.cfg);
        load_config_text(&p.cfg, "arch: aarch64\n");
        f->build(p.root);
        plan_fixture(&p, f->roots, NULL);
        ck_assert(endswith(module(&p.plan, "CUDA/12/cudnn/9.7.1.lua")->install->prefix,
                           "cudnn-linux-sbsa-9.7.1.26_cuda12-archive"));
        ck_assert(endswith(module(&p.plan, "CUDA/12/cudnn/9.7.1-x86_64.lua")->install->prefix,
                           "cudnn-linux-x86_64-9.7.1.26_cuda12-archive"));
        ck_assert_ptr_nonnull(module(&p.plan, "CUDA/12/cudnn/8.9.2-x86_64.lua"));
        rc = rc_of(&p.plan, "CUDA/12/cudnn/.modulerc.lua");
        ck_assert_str_eq(rc->module, "cudnn/9.7.1");
        ck_assert_uint_eq(rc->hidden.len, 2);
        /* CUDA 11 has only x86_64 builds: all hidden, no default. */
        rc = rc_of(&p.plan, "CUDA/11/cudnn/.modulerc.lua");
        ck_assert_ptr_null(rc->module);
        ck_assert_uint_eq(rc->hidden.len, 3);
        planned_release(&p);
}
END_TEST

/* Finding 2 of issue 18 and issue 32: EasyBuild's names (EasyBuildMNS:
 * CUDA/12.9.1, cuDNN/9.7.1.26-CUDA-12.9.1, NCCL/2.21.5-CUDA-12.9.1): the
 * full version of the toolkit a build goes with, whatever its library
 * says of its CUDA (NCCL's 12.4). */
START_TEST(plan_easybuild_preset_gives_easybuild_names)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *m;

        config_init_default(&p.cfg);
        load_config_text(&p.cfg, "naming: easybuild\n");
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        m = module(&p.plan, "Core/CUDA/12.9.1.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->full_name, "CUDA/12.9.1");
        ck_assert_str_eq(m->family, "cuda");
        ck_assert_ptr_nonnull(m->modulepath);
        ck_assert(endswith(m->modulepath, "/mf/CUDA/12"));
        m = module(&p.plan, "CUDA/12/cuDNN/9.7.1.26-CUDA-12.9.1.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->full_name, "cuDNN/9.7.1.26-CUDA-12.9.1");
        ck_assert_str_eq(m->family, "cudnn");
        ck_assert_ptr_nonnull(module(&p.plan, "CUDA/12/NCCL/2.21.5-CUDA-12.9.1.lua"));
        ck_assert_ptr_nonnull(module(&p.plan, "CUDA/11/cuDNN/8.9.7.29-CUDA-11.8.0.lua"));
        ck_assert_uint_eq(p.plan.n_modules, 9);
        ck_assert_str_eq(rc_of(&p.plan, "Core/CUDA/.modulerc.lua")->module, "CUDA/12.9.1");
        ck_assert(strstr(module(&p.plan, "Core/CUDA/12.9.1.lua")->help, "'module avail cuDNN NCCL"));
        /* Flat: the dependency names the toolkit's module. */
        plan_release(&p.plan);
        p.cfg.layout = MODULE_LAYOUT_FLAT;
        p.cfg.format = FORMAT_TCL;
        plan_fixture(&p, NULL, NULL);
        m = module(&p.plan, "NCCL/2.21.5-CUDA-12.9.1");
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->n_deps, 1);
        ck_assert_str_eq(m->deps[0].name, "CUDA");
        ck_assert_str_eq(m->deps[0].min, "12.9.1");
        ck_assert_str_eq(m->deps[0].max, "12.9.1");
        ck_assert_str_eq(m->deps[0].em_spec, "CUDA/12.9.1");
        ck_assert(strstr(m->help, "It needs CUDA/12.9.1, the toolkit it is for."));
        planned_release(&p);
}
END_TEST

/* Issue 33: the easybuild preset sets what EasyBuild's module generator
 * writes in every module (EBROOT<NAME>, EBVERSION<NAME>, NAME as
 * convert_name makes it), which easyblocks read; no other preset does. */
START_TEST(plan_easybuild_preset_sets_ebroot_and_ebversion)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *m;

        config_init_default(&p.cfg);
        load_config_text(&p.cfg, "naming: easybuild\n");
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        m = module(&p.plan, "Core/CUDA/12.9.1.lua");
        ck_assert_str_eq(op_value(m, "EBROOTCUDA"), m->install->prefix);
        ck_assert_str_eq(op_value(m, "EBVERSIONCUDA"), "12.9.1");
        m = module(&p.plan, "CUDA/12/cuDNN/9.7.1.26-CUDA-12.9.1.lua");
        ck_assert_str_eq(op_value(m, "EBROOTCUDNN"), m->install->prefix);
        ck_assert_str_eq(op_value(m, "EBVERSIONCUDNN"), "9.7.1.26");
        m = module(&p.plan, "CUDA/12/cuSPARSELt/0.8.1.1-CUDA-12.9.1.lua");
        ck_assert_str_eq(op_value(m, "EBVERSIONCUSPARSELT"), "0.8.1.1");
        m = module(&p.plan, "CUDA/12/magma/2.9.0-CUDA-12.9.1.lua");
        ck_assert_str_eq(op_value(m, "EBROOTMAGMA"), m->install->prefix);
        ck_assert_str_eq(op_value(m, "EBVERSIONMAGMA"), "2.9.0");
        /* The default names set none. */
        plan_release(&p.plan);
        config_release(&p.cfg);
        config_init_default(&p.cfg);
        plan_fixture(&p, NULL, NULL);
        for (size_t i = 0; i < p.plan.n_modules; i++)
                for (size_t k = 0; k < p.plan.modules[i].n_ops; k++)
                        ck_assert(!startswith(p.plan.modules[i].ops[k].name, "EB"));
        planned_release(&p);
}
END_TEST

static const struct module_plan *module_named(const struct plan *p, const char *full_name)
{
        for (size_t i = 0; i < p->n_modules; i++)
                if (streq(p->modules[i].full_name, full_name))
                        return &p->modules[i];
        return NULL;
}

/* Issue 32: a cuDNN whose files do not say which CUDA 12 it was built
 * with, at a site with two CUDA 12 toolkits, is what EasyBuild installs
 * twice: cuDNN/9.7.1.26-CUDA-12.4.1 and cuDNN/9.7.1.26-CUDA-12.9.1, each
 * needing exactly its toolkit; here two modules of one prefix, told apart
 * by their identity, and the default the one for the newest toolkit. */
START_TEST(plan_easybuild_one_module_per_toolkit_of_the_major)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *a, *b, *m;
        const struct modulerc_plan *rc;

        config_init_default(&p.cfg);
        load_config_text(&p.cfg, "naming: easybuild\nlayout: flat\ndefaults: {cudnn: latest}\n");
        demo_build(p.root);
        fx_cuda_toolkit(p.root, "sw/cuda-12.4",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131" });
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        a = module_named(&p.plan, "cuDNN/9.7.1.26-CUDA-12.4.1");
        b = module_named(&p.plan, "cuDNN/9.7.1.26-CUDA-12.9.1");
        ck_assert_ptr_nonnull(a);
        ck_assert_ptr_nonnull(b);
        ck_assert_ptr_eq(a->install, b->install);
        ck_assert_ptr_nonnull(a->toolkit);
        ck_assert(endswith(a->toolkit->prefix, "sw/cuda-12.4"));
        ck_assert(endswith(b->toolkit->prefix, "sw/cuda-12.9"));
        ck_assert_str_ne(a->identity, b->identity);
        ck_assert_uint_eq(a->n_deps, 1);
        ck_assert_str_eq(a->deps[0].min, "12.4.1");
        ck_assert_str_eq(a->deps[0].max, "12.4.1");
        ck_assert_str_eq(b->deps[0].min, "12.9.1");
        ck_assert(strstr(a->description, "for CUDA 12.4.1"));
        /* NCCL too (its library says 12.4: EasyBuild's name is the toolkit's). */
        ck_assert_ptr_nonnull(module_named(&p.plan, "NCCL/2.21.5-CUDA-12.4.1"));
        ck_assert_ptr_nonnull(module_named(&p.plan, "NCCL/2.21.5-CUDA-12.9.1"));
        /* CUDA 11 has one toolkit: one module. */
        ck_assert_ptr_nonnull(module_named(&p.plan, "cuDNN/8.9.7.29-CUDA-11.8.0"));
        /* Three toolkits, cuDNN 8, and two of each CUDA 12 build (cuDNN 9,
         * NCCL, cuSPARSELt, cuDSS, NVSHMEM, MAGMA). */
        ck_assert_uint_eq(p.plan.n_modules, 3 + 1 + 2 * 6);
        rc = rc_of(&p.plan, "cuDNN/.modulerc.lua");
        ck_assert_ptr_nonnull(rc);
        ck_assert_str_eq(rc->module, "cuDNN/9.7.1.26-CUDA-12.9.1");
        /* The names stay with what they name on the next run. */
        {
                struct plan_given g[16];
                struct plan again;
                _cleanup_diag_ struct diag d = DIAG_INIT;
                _cleanup_free_ char *outdir = path_join(p.root, "mf");

                ck_assert_uint_le(p.plan.n_modules, ELEMENTSOF(g));
                for (size_t i = 0; i < p.plan.n_modules; i++)
                        g[i] = (struct plan_given){ .dir = p.plan.modules[i].dir,
                                                    .version = p.plan.modules[i].version,
                                                    .install = p.plan.modules[i].install->realpath,
                                                    .identity = p.plan.modules[i].identity,
                                                    .base = p.plan.modules[i].base };
                ck_assert_int_eq(plan_build_given(&p.scan.installs, &p.cfg, outdir, g, p.plan.n_modules,
                                                  &again, &d), 0);
                ck_assert_uint_eq(again.n_modules, p.plan.n_modules);
                for (size_t i = 0; i < again.n_modules; i++)
                        ck_assert_str_eq(again.modules[i].full_name, p.plan.modules[i].full_name);
                m = module_named(&again, "cuDNN/9.7.1.26-CUDA-12.4.1");
                ck_assert(endswith(m->toolkit->prefix, "sw/cuda-12.4"));
                plan_release(&again);
        }
        planned_release(&p);
}
END_TEST

/* Where the install's own metadata names the exact CUDA it was built
 * with (a Spack spec, an easyconfig: cuda_version X.Y.Z), one module,
 * named and depending on that toolkit only. */
START_TEST(plan_easybuild_named_cuda_gives_one_module)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *m;

        config_init_default(&p.cfg);
        load_config_text(&p.cfg, "naming: easybuild\nlayout: flat\n");
        demo_build(p.root);
        fx_cuda_toolkit(p.root, "sw/cuda-12.4",
                        &(struct fx_cuda){ .version = "12.4", .release = "12.4.1", .cudart = "12.4.127",
                                           .nvcc = "12.4.131" });
        scan_fixture(p.root, (const char *const[]){ "sw", NULL }, &p.scan);
        for (size_t i = 0; i < p.scan.installs.len; i++) {
                struct install *in = p.scan.installs.items[i];

                if (in->component == &component_cudnn && in->version.n[0] == 9)
                        ck_assert_int_eq(version_parse("12.4.1", &in->cuda_version), 0);
        }
        plan_fixture(&p, NULL, NULL);
        ck_assert_ptr_null(module_named(&p.plan, "cuDNN/9.7.1.26-CUDA-12.9.1"));
        m = module_named(&p.plan, "cuDNN/9.7.1.26-CUDA-12.4.1");
        ck_assert_ptr_nonnull(m);
        ck_assert_ptr_nonnull(m->toolkit);
        ck_assert(endswith(m->toolkit->prefix, "sw/cuda-12.4"));
        ck_assert_str_eq(m->deps[0].em_spec, "CUDA/12.4.1");
        /* NCCL's files name no X.Y.Z: one per toolkit still. */
        ck_assert_ptr_nonnull(module_named(&p.plan, "NCCL/2.21.5-CUDA-12.9.1"));
        ck_assert_ptr_nonnull(module_named(&p.plan, "NCCL/2.21.5-CUDA-12.4.1"));
        planned_release(&p);
}
END_TEST

/* Spack's: lowercase package names, the full version, cuDNN's with the
 * CUDA it is for (Spack's cudnn versions: 9.2.0.82-12, 8.7.0.84-11.8). */
START_TEST(plan_spack_preset_gives_spack_names)
{
        struct planned p = { .root = fx_new() };

        config_init_default(&p.cfg);
        load_config_text(&p.cfg, "naming: spack\n");
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        ck_assert_ptr_nonnull(module(&p.plan, "Core/cuda/12.9.1.lua"));
        ck_assert_ptr_nonnull(module(&p.plan, "CUDA/12/cudnn/9.7.1.26-12.lua"));
        ck_assert_ptr_nonnull(module(&p.plan, "CUDA/12/nccl/2.21.5.lua"));
        planned_release(&p);
}
END_TEST

START_TEST(plan_site_templates_name_modules_and_levels)
{
        struct planned p = { .root = fx_new() };
        const struct module_plan *m;

        config_init_default(&p.cfg);
        load_config_text(&p.cfg, "naming:\n"
                                 "  levels: {core: base, cuda: 'gpu/cuda{cuda_major}'}\n"
                                 "  cudnn: {name: cuDNN, version: '{version}-cuda{cuda_major}'}\n"
                                 "  nccl: {name: nccl-site}\n");
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        m = module(&p.plan, "base/cuda/12.9.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert(endswith(m->modulepath, "/mf/gpu/cuda12"));
        ck_assert_ptr_nonnull(module(&p.plan, "gpu/cuda12/cuDNN/9.7.1-cuda12.lua"));
        ck_assert_ptr_nonnull(module(&p.plan, "gpu/cuda11/cuDNN/8.9.7-cuda11.lua"));
        m = module(&p.plan, "gpu/cuda12/nccl-site/2.21.5.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->full_name, "nccl-site/2.21.5");
        ck_assert_str_eq(m->family, "nccl");
        planned_release(&p);
}
END_TEST

/* The names plan gave, as the index records them. */
static struct plan_given *given_of(const struct plan *p, size_t *ret_n)
{
        struct plan_given *g = xcalloc(p->n_modules + 1, sizeof(*g));

        for (size_t i = 0; i < p->n_modules; i++) {
                const struct module_plan *m = &p->modules[i];
                g[i] = (struct plan_given){ .dir = m->dir, .version = m->version,
                                            .install = m->install->realpath,
                                            .identity = m->identity, .base = m->base };
        }
        *ret_n = p->n_modules;
        return g;
}

/* Finding 3 of issue 18: `generate -o T demo` then `generate -o T demo
 * cudnn-tarballs` gave CUDA/11/cudnn/8.9.7 to the tarballs' build and
 * moved demo's to 8.9.7-2. */
START_TEST(plan_given_names_stay_with_their_installs)
{
        struct planned first = { .root = fx_new() }, second = { 0 }, fresh = { 0 };
        const struct layout_fixture *f = layout_fixture_find("cudnn-tarballs");
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *outdir = path_join(first.root, "mf");
        struct plan_given *g;
        const struct module_plan *m;
        size_t n;

        config_init_default(&first.cfg);
        demo_build(first.root);
        plan_fixture(&first, (const char *const[]){ "sw", NULL }, NULL);
        g = given_of(&first.plan, &n);
        f->build(first.root);
        config_init_default(&second.cfg);
        scan_fixture(first.root, (const char *const[]){ "sw", "apps", NULL }, &second.scan);
        ck_assert_int_eq(plan_build_given(&second.scan.installs, &second.cfg, outdir, g, n, &second.plan, &d), 0);
        m = module(&second.plan, "CUDA/11/cudnn/8.9.7.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert_msg(strstr(m->install->prefix, "/sw/"), "8.9.7 went to %s", m->install->prefix);
        m = module(&second.plan, "CUDA/11/cudnn/8.9.7-2.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert(strstr(m->install->prefix, "/apps/"));
        ck_assert(has_warning(&second.plan, "module 'cudnn/8.9.7' is the name an earlier run gave"));
        /* ... naming the install that has it. */
        ck_assert(has_warning(&second.plan, "/sw/cudnn-linux-x86_64-8.9.7.29_cuda11-archive (the output "
                                            "directory's index)"));
        /* Every module of the first run has its name and install still. */
        for (size_t i = 0; i < first.plan.n_modules; i++) {
                m = module(&second.plan, first.plan.modules[i].path);
                ck_assert_msg(m && streq(m->install->realpath, first.plan.modules[i].install->realpath),
                              "%s moved", first.plan.modules[i].path);
        }
        /* Without them (--rename), the scan order decides again. */
        config_init_default(&fresh.cfg);
        ck_assert_int_eq(plan_build(&second.scan.installs, &fresh.cfg, outdir, &fresh.plan, &d), 0);
        m = module(&fresh.plan, "CUDA/11/cudnn/8.9.7.lua");
        ck_assert(strstr(m->install->prefix, "/apps/"));
        plan_release(&fresh.plan);
        config_release(&fresh.cfg);
        planned_release(&second);
        free(g);
        planned_release(&first);
}
END_TEST

/* A name whose install is not in this run (its root not given, or gone
 * but not pruned) is given to no one else; one given under another
 * naming binds nothing (the site renamed on purpose). */
START_TEST(plan_given_names_are_not_given_to_another_install)
{
        struct planned p = { .root = fx_new() };
        const struct plan_given phantom[] = {
                { .dir = "Core/cuda", .version = "12.9", .install = "/elsewhere/cuda-12.9",
                  .identity = "cuda 12.9.1 cuda12 x86_64", .base = "Core/cuda/12.9" },
                { .dir = "Core/cuda", .version = "12.9-2", .install = "/elsewhere/cuda-12.9b",
                  .identity = "cuda 12.9.1 cuda12 x86_64", .base = "Core/cuda/12.9" },
        };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *outdir = path_join(p.root, "mf");
        struct plan_given renamed;
        const struct module_plan *m;

        config_init_default(&p.cfg);
        demo_build(p.root);
        scan_fixture(p.root, (const char *const[]){ "sw", NULL }, &p.scan);
        ck_assert_int_eq(plan_build_given(&p.scan.installs, &p.cfg, outdir, phantom, 2, &p.plan, &d), 0);
        ck_assert_ptr_null(module(&p.plan, "Core/cuda/12.9.lua"));
        ck_assert_ptr_null(module(&p.plan, "Core/cuda/12.9-2.lua"));
        m = module(&p.plan, "Core/cuda/12.9.1.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(rc_of(&p.plan, "Core/cuda/.modulerc.lua")->module, "cuda/12.9.1");
        plan_release(&p.plan);

        /* The same install, named "12.9" under the old naming; the site
         * now names CUDA by release: the new name wins. */
        m = NULL;
        plan_fixture(&p, NULL, NULL);
        for (size_t i = 0; i < p.plan.n_modules; i++)
                if (streq(p.plan.modules[i].path, "Core/cuda/12.9.lua"))
                        m = &p.plan.modules[i];
        ck_assert_ptr_nonnull(m);
        renamed = (struct plan_given){ .dir = "Core/cuda", .version = "12.9", .install = m->install->realpath,
                                       .identity = m->identity, .base = "Core/cuda/12.9" };
        {
                _cleanup_free_ char *identity = xstrdup(m->identity);
                renamed.identity = identity;
                plan_release(&p.plan);
                load_config_text(&p.cfg, "naming: {cuda: '{version_full}'}\n");
                ck_assert_int_eq(plan_build_given(&p.scan.installs, &p.cfg, outdir, &renamed, 1, &p.plan, &d), 0);
                ck_assert_ptr_nonnull(module(&p.plan, "Core/cuda/12.9.1.lua"));
                ck_assert_ptr_null(module(&p.plan, "Core/cuda/12.9.lua"));
        }
        planned_release(&p);
}
END_TEST

/* An index written before identities: its entries bind the install at
 * that real path whose name they extend (12.9-2 of a 12.9). */
START_TEST(plan_given_names_of_an_older_index_bind_by_real_path)
{
        struct planned p = { .root = fx_new() };
        _cleanup_diag_ struct diag d = DIAG_INIT;
        _cleanup_free_ char *outdir = path_join(p.root, "mf");
        _cleanup_free_ char *real = NULL;
        const struct module_plan *m;
        struct plan_given old;

        config_init_default(&p.cfg);
        demo_build(p.root);
        plan_fixture(&p, (const char *const[]){ "sw", NULL }, NULL);
        real = xstrdup(module(&p.plan, "Core/cuda/12.9.lua")->install->realpath);
        plan_release(&p.plan);
        old = (struct plan_given){ .dir = "Core/cuda", .version = "12.9-2", .install = real };
        ck_assert_int_eq(plan_build_given(&p.scan.installs, &p.cfg, outdir, &old, 1, &p.plan, &d), 0);
        m = module(&p.plan, "Core/cuda/12.9-2.lua");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->install->realpath, real);
        ck_assert_ptr_null(module(&p.plan, "Core/cuda/12.9.lua"));
        /* Another directory's entry binds nothing. */
        plan_release(&p.plan);
        old.dir = "Core/other";
        ck_assert_int_eq(plan_build_given(&p.scan.installs, &p.cfg, outdir, &old, 1, &p.plan, &d), 0);
        ck_assert_ptr_nonnull(module(&p.plan, "Core/cuda/12.9.lua"));
        planned_release(&p);
}
END_TEST

START_TEST(plan_system_directories_are_recognised)
{
        static const struct {
                const char *dir;
                bool system;
        } cases[] = {
                { "/usr/lib", true },         { "/usr/lib64", true },
                { "/usr/lib/x86_64-linux-gnu", true },
                { "/lib/aarch64-linux-gnu", true },
                { "/usr/include", true },     { "/usr/bin", true },
                { "/lib64", true },           { "/usr", true },
                { "/usr/lib/cuda", false },   { "/usr/lib/x86_64-linux-gnu/nccl", false },
                { "/usr/local/cuda/lib64", false },
                { "/opt/lib", false },        { NULL, false },
        };

        for (size_t i = 0; cases[i].dir; i++)
                ck_assert_msg(path_is_system_dir(cases[i].dir) == cases[i].system, "%s", cases[i].dir);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("plan");
        TCase *tc = tcase_create("plan");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, plan_demo_hierarchy_places_cudnn_and_nccl_under_their_cuda_major);
        tcase_add_test(tc, plan_cuda_operations_follow_design_section_5);
        tcase_add_test(tc, plan_driver_check_is_for_the_toolkit_only);
        tcase_add_test(tc, plan_driver_check_takes_the_version_json_driver);
        tcase_add_test(tc, plan_cudnn_and_nccl_operations_follow_design_section_5);
        tcase_add_test(tc, plan_config_switches_change_the_operations);
        tcase_add_test(tc, plan_cuda_compat_only_when_configured);
        tcase_add_test(tc, plan_host_compiler_sets_cudahostcxx_and_ccbin_or_loads_its_module);
        tcase_add_test(tc, plan_arch_list_op_carries_its_config_position);
        tcase_add_test(tc, plan_stubs_are_never_on_ld_library_path);
        tcase_add_test(tc, plan_system_install_sets_only_root_variables);
        tcase_add_test(tc, plan_flat_layout_depends_on_the_cuda_major);
        tcase_add_test(tc, plan_flat_cudnn_builds_for_two_majors_get_suffixes);
        tcase_add_test(tc, plan_hierarchy_keeps_builds_for_two_majors_apart);
        tcase_add_test(tc, plan_two_cuda_releases_of_one_minor_are_named_by_release);
        tcase_add_test(tc, plan_identical_installs_are_numbered_in_scan_order);
        tcase_add_test(tc, plan_builds_for_another_architecture_give_way);
        tcase_add_test(tc, plan_lone_foreign_build_carries_its_arch_and_is_never_a_default);
        tcase_add_test(tc, plan_arch_config_selects_the_architecture_the_tree_is_for);
        tcase_add_test(tc, plan_easybuild_preset_gives_easybuild_names);
        tcase_add_test(tc, plan_easybuild_preset_sets_ebroot_and_ebversion);
        tcase_add_test(tc, plan_easybuild_one_module_per_toolkit_of_the_major);
        tcase_add_test(tc, plan_easybuild_named_cuda_gives_one_module);
        tcase_add_test(tc, plan_spack_preset_gives_spack_names);
        tcase_add_test(tc, plan_site_templates_name_modules_and_levels);
        tcase_add_test(tc, plan_given_names_stay_with_their_installs);
        tcase_add_test(tc, plan_given_names_are_not_given_to_another_install);
        tcase_add_test(tc, plan_given_names_of_an_older_index_bind_by_real_path);
        tcase_add_test(tc, plan_does_not_look_at_the_disk);
        tcase_add_test(tc, plan_flat_default_follows_the_default_cuda);
        tcase_add_test(tc, plan_equal_versions_default_to_the_first_in_scan_order);
        tcase_add_test(tc, plan_defaults_follow_the_config);
        tcase_add_test(tc, plan_leaves_out_installs_it_cannot_serve);
        tcase_add_test(tc, plan_refuses_non_utf8_paths_for_tcl_only);
        tcase_add_test(tc, plan_refuses_prefixes_longer_than_path_max);
        tcase_add_test(tc, plan_naming_templates_name_the_modules);
        tcase_add_test(tc, plan_system_directories_are_recognised);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
