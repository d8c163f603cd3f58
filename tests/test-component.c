/* test-component.c: the component table: every row complete and where
 * its index says, the lookups by name and by soname, the codes, and the
 * man pages' lists of components equal to it. */
#include <check.h>
#include <stdlib.h>

#include "component-cuda.h"
#include "component-cudnn.h"
#include "component-nccl.h"
#include "component-table.h"
#include "component.h"
#include "strbuf.h"
#include "testutil.h"
#include "util.h"

START_TEST(every_row_is_complete_and_at_its_index)
{
        size_t toolkits = 0;

        for (size_t i = 0; i < N_COMPONENTS; i++) {
                const struct component *c = component_table[i];

                ck_assert_ptr_nonnull(c);
                ck_assert_uint_eq(c->index, i);
                ck_assert_str_eq(c->name, component_names[i]);
                ck_assert_msg(c->title && c->label && c->naming && c->library && c->help, "%s", c->name);
                ck_assert_msg(c->stems && c->stems[0] && c->detect && c->to_json, "%s", c->name);
                ck_assert_msg(c->version_parts >= 2 && c->version_parts <= 3, "%s", c->name);
                ck_assert_msg(c->version_headers && c->version_headers[0] && (c->header_code || c->version_macros) && c->code_version,
                              "%s", c->name);
                ck_assert_msg(c->build.what && c->build.header && c->build.libs[0] && c->build.program, "%s",
                              c->name);
                ck_assert_msg(c->probe.key && c->module_cuda_major, "%s", c->name);
                /* The probe loads it by default (and can be told not to), or
                 * only on request; never neither, unless it is the runtime. */
                ck_assert_msg(c->toolkit || c->probe.off || c->probe.request, "%s", c->name);
                /* A library either names its variables or emits its own. */
                ck_assert_msg(c->ops || (c->vars && c->vars[0].name), "%s", c->name);
                ck_assert_ptr_eq(component_from_string(c->name), c);
                toolkits += c->toolkit;
        }
        ck_assert_ptr_null(component_names[N_COMPONENTS]);
        ck_assert_uint_eq(toolkits, 1);
        ck_assert_ptr_nonnull(component_toolkit());
        ck_assert(component_toolkit()->toolkit);
}
END_TEST

/* doctor --build has a row for each order 1..TORCH_BUILD_LIBRARIES: each
 * must be some component's, once; a gap would be a row of nothing. */
START_TEST(torch_build_orders_run_one_to_the_count_each_once)
{
        unsigned seen[TORCH_BUILD_LIBRARIES + 1] = { 0 };

        FOREACH_COMPONENT(c) {
                unsigned o = c->torch_build.order;

                ck_assert_msg(o <= TORCH_BUILD_LIBRARIES, "%s: torch_build.order %u > %d", c->name, o,
                              TORCH_BUILD_LIBRARIES);
                if (o)
                        seen[o]++;
        }
        for (unsigned o = 1; o <= TORCH_BUILD_LIBRARIES; o++)
                ck_assert_msg(seen[o] == 1, "torch_build.order %u: %u components", o, seen[o]);
}
END_TEST

START_TEST(names_that_are_not_in_the_table_are_not_components)
{
        ck_assert_ptr_null(component_from_string("cudart"));
        ck_assert_ptr_null(component_from_string("CUDA"));
        ck_assert_ptr_null(component_from_string(""));
        ck_assert_ptr_null(component_from_string(NULL));
        ck_assert_ptr_eq(component_from_name_nocase("cuDNN"), &component_cudnn);
        ck_assert_ptr_null(component_from_name_nocase("cudnn9"));
}
END_TEST

START_TEST(sonames_map_to_the_component_that_ships_them)
{
        ck_assert_ptr_eq(component_of_soname("libcudart.so.12"), &component_cuda);
        ck_assert_ptr_eq(component_of_soname("libnppc.so.12"), &component_cuda);
        ck_assert_ptr_eq(component_of_soname("libcublasLt.so.13"), &component_cuda);
        ck_assert_ptr_eq(component_of_soname("libcudnn_engines_precompiled.so.9"), &component_cudnn);
        ck_assert_ptr_eq(component_of_soname("libnccl.so.2"), &component_nccl);
        ck_assert_ptr_null(component_of_soname("libnccl-net.so"));
        ck_assert_ptr_null(component_of_soname("libcuda.so.1"));
        ck_assert_ptr_null(component_of_soname("libstdc++.so.6"));
}
END_TEST

START_TEST(version_codes_read_as_each_library_writes_them)
{
        struct version v;

        v = component_cuda.code_version(12040);
        ck_assert_uint_eq(v.count, 2);
        ck_assert_uint_eq(v.n[0], 12);
        ck_assert_uint_eq(v.n[1], 4);
        v = component_code_library(8907);
        ck_assert(v.n[0] == 8 && v.n[1] == 9 && v.n[2] == 7);
        v = component_code_library(90701);
        ck_assert(v.n[0] == 9 && v.n[1] == 7 && v.n[2] == 1);
        v = component_code_mmp(801);
        ck_assert(v.count == 3 && v.n[0] == 0 && v.n[1] == 8 && v.n[2] == 1);
        v = component_code_mmp(21000);
        ck_assert(v.n[0] == 2 && v.n[1] == 10 && v.n[2] == 0);
}
END_TEST

/* The doc file, its runs of blanks (line breaks, tabs) one space each. */
static char *read_doc(const char *name)
{
        const char *src = getenv("CUDAMOD_SOURCE_ROOT");
        _cleanup_free_ char *path = NULL;
        struct strbuf sb = STRBUF_INIT;
        char *w;

        ck_assert_msg(src, "CUDAMOD_SOURCE_ROOT is not set");
        path = xasprintf("%s/doc/%s", src, name);
        ck_assert_int_ge(strbuf_read_file(&sb, path, 1 << 20), 0);
        w = sb.buf;
        for (const char *r = sb.buf; *r; r++)
                if (*r == ' ' || *r == '\t' || *r == '\n') {
                        if (w == sb.buf || w[-1] != ' ')
                                *w++ = ' ';
                } else
                        *w++ = *r;
        *w = '\0';
        return strbuf_detach(&sb);
}

/* Every component (the toolkit too or not), its name or label between
 * pre and post, joined by ", ", the last by conj. */
static char *join(const char *pre, const char *post, bool label, bool toolkit, const char *conj)
{
        struct strbuf sb = STRBUF_INIT;
        size_t n = 0, total = N_COMPONENTS - (toolkit ? 0 : 1);

        FOREACH_COMPONENT(c) {
                if (c->toolkit && !toolkit)
                        continue;
                n++;
                strbuf_addstr(&sb, n == 1 ? "" : n == total ? conj : ", ");
                strbuf_addf(&sb, "%s%s%s", pre, label ? c->label : c->name, post);
        }
        return strbuf_detach(&sb);
}

/* list is in doc, whole: what follows it is not one more item. */
static void ck_doc_lists(const char *doc, const char *name, const char *list)
{
        const char *at = strstr(doc, list);

        ck_assert_msg(at, "%s does not list the components as \"%s\"", name, list);
        at += strlen(list);
        ck_assert_msg(*at != ',' && !startswith(at, " and ") && !startswith(at, " or "),
                      "%s lists more components than \"%s\"", name, list);
}

/* The man pages name the components in prose that cannot be generated:
 * they must list what the table holds, in its order. */
START_TEST(the_man_pages_list_the_table)
{
        _cleanup_free_ char *man = read_doc("cudamod.1.scd");
        _cleanup_free_ char *site = read_doc("cudamod-site.yaml.5.scd");
        _cleanup_free_ char *labels = join("", "", true, true, " and ");
        _cleanup_free_ char *libraries = join("", "", true, false, " and ");
        _cleanup_free_ char *names = join("*", "*", false, false, ", ");
        static const char *const keys[] = { "family", "defaults", "naming", "ld_library_path" };
        _cleanup_free_ char *name_line = xasprintf("find %s installs,", labels);
        _cleanup_free_ char *toolkit_line = xasprintf("CUDA Toolkit, %s installation", libraries);

        ck_doc_lists(man, "cudamod(1)", name_line);
        ck_doc_lists(man, "cudamod(1)", toolkit_line);
        ck_doc_lists(man, "cudamod(1)", names);
        ck_doc_lists(site, "cudamod-site.yaml(5)", names);
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *pre = xasprintf("*%s.", keys[i]);
                _cleanup_free_ char *list = join(pre, "*", false, true, ", ");

                ck_doc_lists(site, "cudamod-site.yaml(5)", list);
        }
        _cleanup_free_ char *setenv = join("*env.", ".setenv*", false, true, ", ");
        _cleanup_free_ char *prepend = join("*env.", ".prepend_path*", false, true, ", ");
        _cleanup_free_ char *append = join("*env.", ".append_path*", false, true, ", ");
        _cleanup_free_ char *paths = xasprintf("%s, %s", prepend, append);

        ck_doc_lists(site, "cudamod-site.yaml(5)", setenv);
        ck_doc_lists(site, "cudamod-site.yaml(5)", paths);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("component");
        TCase *tc = tcase_create("table");

        tcase_add_test(tc, every_row_is_complete_and_at_its_index);
        tcase_add_test(tc, torch_build_orders_run_one_to_the_count_each_once);
        tcase_add_test(tc, names_that_are_not_in_the_table_are_not_components);
        tcase_add_test(tc, sonames_map_to_the_component_that_ships_them);
        tcase_add_test(tc, version_codes_read_as_each_library_writes_them);
        tcase_add_test(tc, the_man_pages_list_the_table);
        suite_add_tcase(s, tc);
        return run_suite(s);
}
