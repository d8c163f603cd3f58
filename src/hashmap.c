/* hashmap.c: a seeded, separately chained hash table of intrusive entries
 * (see hashmap.h for why it is seeded and what its order means). */
#include <pthread.h>
#include <sys/random.h>
#include <time.h>

#include "hashmap.h"
#include "util.h"
#include "banned.h"

/* --- the seeded hash: SipHash-1-3 ------------------------------------------ */

static uint64_t sip_key[2];
static pthread_once_t sip_once = PTHREAD_ONCE_INIT;

static uint64_t mix64(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ull;
        x ^= x >> 33;
        return x;
}

/* getrandom, or (no entropy yet, an old kernel, a seccomp filter) what
 * this process can see that another cannot predict well: the clocks, the
 * pid and where the loader put us. The fallback is weaker, not wrong. */
static void sip_seed(void)
{
        unsigned char raw[sizeof(sip_key)];

        if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) == (ssize_t)sizeof(raw)) {
                memcpy(sip_key, raw, sizeof(sip_key));
                return;
        }
        struct timespec mono, real;
        uint64_t stack = (uint64_t)(uintptr_t)&mono, code = (uint64_t)(uintptr_t)&sip_seed;

        clock_gettime(CLOCK_MONOTONIC, &mono);
        clock_gettime(CLOCK_REALTIME, &real);
        sip_key[0] = mix64((uint64_t)mono.tv_nsec ^ ((uint64_t)real.tv_sec << 20) ^ stack);
        sip_key[1] = mix64((uint64_t)real.tv_nsec ^ ((uint64_t)getpid() << 32) ^ code ^ sip_key[0]);
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                                        \
        do {                                                                            \
                v0 += v1;                                                               \
                v1 = ROTL(v1, 13);                                                      \
                v1 ^= v0;                                                               \
                v0 = ROTL(v0, 32);                                                      \
                v2 += v3;                                                               \
                v3 = ROTL(v3, 16);                                                      \
                v3 ^= v2;                                                               \
                v0 += v3;                                                               \
                v3 = ROTL(v3, 21);                                                      \
                v3 ^= v0;                                                               \
                v2 += v1;                                                               \
                v1 = ROTL(v1, 17);                                                      \
                v1 ^= v2;                                                               \
                v2 = ROTL(v2, 32);                                                      \
        } while (0)

static uint64_t load_le64(const unsigned char *p)
{
        uint64_t v = 0;

        for (int i = 7; i >= 0; i--)
                v = v << 8 | p[i];
        return v;
}

/* SipHash with one compression round per word and three finalisation
 * rounds, as specified (the same output as the reference for the key). */
static uint64_t siphash13(const unsigned char *in, size_t len, const uint64_t k[2])
{
        uint64_t v0 = 0x736f6d6570736575ull ^ k[0], v1 = 0x646f72616e646f6dull ^ k[1];
        uint64_t v2 = 0x6c7967656e657261ull ^ k[0], v3 = 0x7465646279746573ull ^ k[1];
        uint64_t b = (uint64_t)len << 56, m;
        const unsigned char *end = in + (len & ~(size_t)7);

        for (; in != end; in += 8) {
                m = load_le64(in);
                v3 ^= m;
                SIPROUND;
                v0 ^= m;
        }
        for (size_t i = 0; i < (len & 7); i++)
                b |= (uint64_t)in[i] << (8 * i);
        v3 ^= b;
        SIPROUND;
        v0 ^= b;
        v2 ^= 0xff;
        SIPROUND;
        SIPROUND;
        SIPROUND;
        return v0 ^ v1 ^ v2 ^ v3;
}

unsigned int hash_bytes(const void *data, size_t len)
{
        pthread_once(&sip_once, sip_seed);
        return (unsigned int)siphash13(data, len, sip_key);
}

unsigned int hash_str(const char *s)
{
        return hash_bytes(s, strlen(s));
}

/* --- the table ------------------------------------------------------------- */

#define HASHMAP_MIN_BUCKETS 16

void hashmap_init(struct hashmap *map, hashmap_equal_fn *equal, size_t expected)
{
        *map = (struct hashmap)HASHMAP_INIT(equal);
        /* Buckets for expected entries at 3/4 load, so that filling the
         * map to that size never rehashes. */
        if (expected) {
                size_t n = HASHMAP_MIN_BUCKETS;

                while (n / 4 * 3 < expected)
                        n *= 2;
                map->buckets = xcalloc(n, sizeof(*map->buckets));
                map->n_buckets = n;
        }
}

void hashmap_release(struct hashmap *map, void (*free_entry)(struct hashmap_entry *e))
{
        if (free_entry) {
                struct hashmap_iter it;
                struct hashmap_entry *e;

                hashmap_iter_init(map, &it);
                while ((e = hashmap_iter_next(&it)))
                        free_entry(e);
        }
        free(map->buckets);
        *map = (struct hashmap)HASHMAP_INIT(map->equal);
}

static size_t bucket_of(const struct hashmap *map, unsigned int hash)
{
        return hash & (map->n_buckets - 1);
}

/* The link that points at the entry equal to key, or at the NULL that
 * ends key's bucket. */
static struct hashmap_entry **find_link(const struct hashmap *map, const struct hashmap_entry *key,
                                        const void *keydata)
{
        struct hashmap_entry **link = &map->buckets[bucket_of(map, key->hash)];

        for (; *link; link = &(*link)->next)
                if ((*link)->hash == key->hash && map->equal(*link, key, keydata))
                        break;
        return link;
}

struct hashmap_entry *hashmap_get(const struct hashmap *map, const struct hashmap_entry *key,
                                  const void *keydata)
{
        if (!map->count)
                return NULL;
        return *find_link(map, key, keydata);
}

static void rehash(struct hashmap *map, size_t n_buckets)
{
        struct hashmap_entry **old = map->buckets;
        size_t old_n = map->n_buckets;

        map->buckets = xcalloc(n_buckets, sizeof(*map->buckets));
        map->n_buckets = n_buckets;
        for (size_t i = 0; i < old_n; i++)
                for (struct hashmap_entry *e = old[i], *next; e; e = next) {
                        size_t b = bucket_of(map, e->hash);

                        next = e->next;
                        e->next = map->buckets[b];
                        map->buckets[b] = e;
                }
        free(old);
}

void hashmap_add(struct hashmap *map, struct hashmap_entry *e)
{
        size_t b;

        if (!map->n_buckets)
                rehash(map, HASHMAP_MIN_BUCKETS);
        else if (map->count + 1 > map->n_buckets / 4 * 3) {
                if (map->n_buckets > SIZE_MAX / 2 / sizeof(*map->buckets))
                        die_oom();
                rehash(map, map->n_buckets * 2);
        }
        b = bucket_of(map, e->hash);
        e->next = map->buckets[b];
        map->buckets[b] = e;
        map->count++;
}

struct hashmap_entry *hashmap_remove(struct hashmap *map, const struct hashmap_entry *key,
                                     const void *keydata)
{
        struct hashmap_entry **link, *e;

        if (!map->count)
                return NULL;
        link = find_link(map, key, keydata);
        e = *link;
        if (!e)
                return NULL;
        *link = e->next;
        e->next = NULL;
        map->count--;
        return e;
}

void hashmap_iter_init(const struct hashmap *map, struct hashmap_iter *it)
{
        *it = (struct hashmap_iter){ .map = map };
}

struct hashmap_entry *hashmap_iter_next(struct hashmap_iter *it)
{
        struct hashmap_entry *e = it->next;

        while (!e && it->bucket < it->map->n_buckets)
                e = it->map->buckets[it->bucket++];
        if (e)
                it->next = e->next;
        return e;
}
