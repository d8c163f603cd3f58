/* test-validate-pool.c: validate's worker pool: results in item order
 * whatever the number of workers, done in workers with more than one job,
 * and a dead worker losing only its item. */
#include <check.h>
#include <signal.h>
#include <unistd.h>

#include "testutil.h"
#include "util.h"
#include "validate-pool.h"
#include "banned.h"

#define N_ITEMS 12

struct progress_seen {
        size_t calls, ends, last_done, total;
};

/* Item i: {"i": i, "pid": the process that made it}; item kill_item (if
 * not -1) kills its worker instead. */
struct items {
        long kill_item;
        struct progress_seen progress;
};

static json_t *item_work(size_t i, void *userdata)
{
        const struct items *it = userdata;

        if ((long)i == it->kill_item)
                raise(SIGKILL);
        return json_pack("{s:I, s:I}", "i", (json_int_t)i, "pid", (json_int_t)getpid());
}

static json_t *item_lost(size_t i, const char *why, void *userdata)
{
        (void)userdata;
        return json_pack("{s:I, s:s}", "i", (json_int_t)i, "lost", why);
}

static void item_progress(size_t done, size_t total, bool end, void *userdata)
{
        struct items *it = userdata;

        it->progress.calls++;
        it->progress.ends += end;
        it->progress.last_done = done;
        it->progress.total = total;
}

static const struct validate_pool_ops ops = {
        .work = item_work,
        .lost = item_lost,
        .progress = item_progress,
};

static void results_release(json_t **results, size_t n)
{
        for (size_t i = 0; i < n; i++)
                json_decref(results[i]);
}

START_TEST(pool_one_job_works_in_this_process_in_order)
{
        struct items it = { .kill_item = -1 };
        json_t *results[N_ITEMS] = { 0 };

        ck_assert_int_eq(validate_pool_run(N_ITEMS, 1, &ops, &it, results), 0);
        for (size_t i = 0; i < N_ITEMS; i++) {
                ck_assert_ptr_nonnull(results[i]);
                ck_assert_int_eq(json_integer_value(json_object_get(results[i], "i")), (json_int_t)i);
                ck_assert_int_eq(json_integer_value(json_object_get(results[i], "pid")), getpid());
        }
        ck_assert_uint_eq(it.progress.ends, 1);
        ck_assert_uint_eq(it.progress.last_done, N_ITEMS);
        ck_assert_uint_eq(it.progress.total, N_ITEMS);
        results_release(results, N_ITEMS);
}
END_TEST

START_TEST(pool_workers_keep_item_order)
{
        struct items it = { .kill_item = -1 };
        json_t *results[N_ITEMS] = { 0 };

        ck_assert_int_eq(validate_pool_run(N_ITEMS, 4, &ops, &it, results), 0);
        for (size_t i = 0; i < N_ITEMS; i++) {
                ck_assert_ptr_nonnull(results[i]);
                ck_assert_int_eq(json_integer_value(json_object_get(results[i], "i")), (json_int_t)i);
                /* Done in a worker, not here. */
                ck_assert_int_ne(json_integer_value(json_object_get(results[i], "pid")), getpid());
        }
        ck_assert_uint_eq(it.progress.ends, 1);
        ck_assert_uint_eq(it.progress.last_done, N_ITEMS);
        results_release(results, N_ITEMS);
}
END_TEST

START_TEST(pool_dead_worker_loses_only_its_item)
{
        struct items it = { .kill_item = 5 };
        json_t *results[N_ITEMS] = { 0 };

        ck_assert_int_eq(validate_pool_run(N_ITEMS, 3, &ops, &it, results), 0);
        for (size_t i = 0; i < N_ITEMS; i++) {
                const char *lost = json_string_value(json_object_get(results[i], "lost"));

                ck_assert_ptr_nonnull(results[i]);
                ck_assert_int_eq(json_integer_value(json_object_get(results[i], "i")), (json_int_t)i);
                if (i == 5) {
                        ck_assert_ptr_nonnull(lost);
                        ck_assert_msg(strstr(lost, "signal 9"), "%s", lost);
                } else
                        ck_assert_ptr_null(lost);
        }
        results_release(results, N_ITEMS);
}
END_TEST

static Suite *validate_pool_suite(void)
{
        Suite *s = suite_create("validate-pool");
        TCase *pool = tcase_create("pool");

        tcase_add_test(pool, pool_one_job_works_in_this_process_in_order);
        tcase_add_test(pool, pool_workers_keep_item_order);
        tcase_add_test(pool, pool_dead_worker_loses_only_its_item);
        suite_add_tcase(s, pool);
        return s;
}

int main(void)
{
        return run_suite(validate_pool_suite());
}
