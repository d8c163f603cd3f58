/* test-hashmap.c: the one hash table (hashmap.h): entries are found,
 * replaced and removed by key, the table grows without losing any, keys
 * that all share one hash still work (a chain), and iteration meets every
 * entry once. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "testutil.h"
#include "util.h"

struct item {
        struct hashmap_entry ent;
        char *key;
        int value;
        bool seen;
};

static bool item_equal(const struct hashmap_entry *entry, const struct hashmap_entry *key,
                       const void *keydata)
{
        const struct item *a = hashmap_entry_of(entry, const struct item, ent);
        const struct item *b = hashmap_entry_of(key, const struct item, ent);

        return streq(a->key, keydata ? (const char *)keydata : b->key);
}

static void item_free(struct hashmap_entry *e)
{
        struct item *it = hashmap_entry_of(e, struct item, ent);

        free(it->key);
        free(it);
}

/* A hash of key, or (collide) the same hash for every key. */
static unsigned int key_hash(const char *key, bool collide)
{
        return collide ? 42u : hash_str(key);
}

static struct item *item_new(const char *key, int value, bool collide)
{
        struct item *it = xcalloc(1, sizeof(*it));

        hashmap_entry_init(&it->ent, key_hash(key, collide));
        it->key = xstrdup(key);
        it->value = value;
        return it;
}

static struct item *find(const struct hashmap *map, const char *key, bool collide)
{
        struct hashmap_entry k;

        hashmap_entry_init(&k, key_hash(key, collide));
        return hashmap_entry_of(hashmap_get(map, &k, key), struct item, ent);
}

static struct item *take(struct hashmap *map, const char *key, bool collide)
{
        struct hashmap_entry k;

        hashmap_entry_init(&k, key_hash(key, collide));
        return hashmap_entry_of(hashmap_remove(map, &k, key), struct item, ent);
}

START_TEST(hash_is_stable_within_a_process)
{
        char a[] = "/usr/local/cuda-12.4", b[] = "/usr/local/cuda-12.4";

        ck_assert_uint_eq(hash_str(a), hash_str(b));
        ck_assert_uint_eq(hash_bytes(a, 5), hash_bytes(b, 5));
        ck_assert_uint_eq(hash_str(""), hash_bytes("", 0));
        /* Not a proof, but a broken hash (a constant, a length) fails it. */
        ck_assert_uint_ne(hash_str("cuda"), hash_str("cudb"));
        ck_assert_uint_ne(hash_str("abcdefgh"), hash_str("abcdefgi"));
}
END_TEST

START_TEST(add_find_remove)
{
        struct hashmap map;
        struct item *it;

        hashmap_init(&map, item_equal, 0);
        ck_assert_ptr_null(find(&map, "cuda", false));
        ck_assert_ptr_null(take(&map, "cuda", false));
        hashmap_add(&map, &item_new("cuda", 1, false)->ent);
        hashmap_add(&map, &item_new("cudnn", 2, false)->ent);
        ck_assert_uint_eq(hashmap_count(&map), 2);
        ck_assert_int_eq(find(&map, "cuda", false)->value, 1);
        ck_assert_int_eq(find(&map, "cudnn", false)->value, 2);
        ck_assert_ptr_null(find(&map, "nccl", false));

        it = take(&map, "cuda", false);
        ck_assert_ptr_nonnull(it);
        ck_assert_int_eq(it->value, 1);
        item_free(&it->ent);
        ck_assert_uint_eq(hashmap_count(&map), 1);
        ck_assert_ptr_null(find(&map, "cuda", false));
        ck_assert_int_eq(find(&map, "cudnn", false)->value, 2);

        /* The lookup key may be a whole entry instead of keydata. */
        struct item key = { .key = (char *)"cudnn" };
        hashmap_entry_init(&key.ent, hash_str("cudnn"));
        ck_assert_ptr_eq(hashmap_get(&map, &key.ent, NULL), &find(&map, "cudnn", false)->ent);

        hashmap_release(&map, item_free);
        ck_assert_uint_eq(hashmap_count(&map), 0);
        ck_assert_ptr_null(find(&map, "cudnn", false));
        /* Usable again after release. */
        hashmap_add(&map, &item_new("nccl", 3, false)->ent);
        ck_assert_int_eq(find(&map, "nccl", false)->value, 3);
        hashmap_release(&map, item_free);
}
END_TEST

/* Many entries (the table doubles several times) and, in the second run
 * of this loop test, all of them on one chain. */
START_TEST(grow_and_collide_keep_every_entry)
{
        bool collide = _i == 1;
        size_t n = collide ? 2000 : 50000;
        struct hashmap map;
        char key[32];

        hashmap_init(&map, item_equal, _i == 2 ? n : 0);
        for (size_t i = 0; i < n; i++) {
                snprintf(key, sizeof(key), "k%zu", i);
                hashmap_add(&map, &item_new(key, (int)i, collide)->ent);
        }
        ck_assert_uint_eq(hashmap_count(&map), n);
        for (size_t i = 0; i < n; i++) {
                struct item *it;

                snprintf(key, sizeof(key), "k%zu", i);
                it = find(&map, key, collide);
                ck_assert_msg(it && it->value == (int)i, "key %s", key);
        }
        ck_assert_ptr_null(find(&map, "k-1", collide));
        /* Remove every other one; the rest stay found. */
        for (size_t i = 0; i < n; i += 2) {
                snprintf(key, sizeof(key), "k%zu", i);
                item_free(&take(&map, key, collide)->ent);
        }
        ck_assert_uint_eq(hashmap_count(&map), n / 2);
        for (size_t i = 0; i < n; i++) {
                snprintf(key, sizeof(key), "k%zu", i);
                if (i % 2)
                        ck_assert_int_eq(find(&map, key, collide)->value, (int)i);
                else
                        ck_assert_ptr_null(find(&map, key, collide));
        }
        hashmap_release(&map, item_free);
}
END_TEST

START_TEST(iteration_meets_every_entry_once)
{
        enum { N = 1000 };
        struct item *items[N];
        struct hashmap map;
        struct hashmap_iter iter;
        struct hashmap_entry *e;
        size_t met = 0;
        char key[32];

        hashmap_init(&map, item_equal, 0);
        for (size_t i = 0; i < N; i++) {
                snprintf(key, sizeof(key), "%zu", i);
                items[i] = item_new(key, (int)i, i % 3 == 0);
                hashmap_add(&map, &items[i]->ent);
        }
        hashmap_iter_init(&map, &iter);
        while ((e = hashmap_iter_next(&iter))) {
                struct item *it = hashmap_entry_of(e, struct item, ent);

                ck_assert(!it->seen);
                it->seen = true;
                met++;
        }
        ck_assert_uint_eq(met, N);
        for (size_t i = 0; i < N; i++)
                ck_assert(items[i]->seen);

        /* Removing the current entry while iterating is allowed. */
        met = 0;
        hashmap_iter_init(&map, &iter);
        while ((e = hashmap_iter_next(&iter))) {
                struct item *it = hashmap_entry_of(e, struct item, ent);

                if (it->value % 2 == 0)
                        item_free(&take(&map, it->key, it->value % 3 == 0)->ent);
                met++;
        }
        ck_assert_uint_eq(met, N);
        ck_assert_uint_eq(hashmap_count(&map), N / 2);
        hashmap_release(&map, item_free);

        /* An empty map, never added to, iterates nothing. */
        hashmap_init(&map, item_equal, 0);
        hashmap_iter_init(&map, &iter);
        ck_assert_ptr_null(hashmap_iter_next(&iter));
        hashmap_release(&map, NULL);
}
END_TEST

static Suite *hashmap_suite(void)
{
        Suite *s = suite_create("hashmap");
        TCase *tc = tcase_create("hashmap");

        tcase_add_test(tc, hash_is_stable_within_a_process);
        tcase_add_test(tc, add_find_remove);
        /* 0: spread, 1: one chain, 2: sized up front */
        tcase_add_loop_test(tc, grow_and_collide_keep_every_entry, 0, 3);
        tcase_add_test(tc, iteration_meets_every_entry_once);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return run_suite(hashmap_suite());
}
