/* hashmap.h: the one hash table (in the manner of git's hashmap.h).
 *
 * Entries are intrusive: a user's struct embeds a struct hashmap_entry,
 * which holds the entry's hash and the chain link; the map owns neither
 * the entries nor their keys, only its bucket array. The user computes the
 * hash (hash_bytes, hash_str: keyed by a per-process random seed) and
 * gives an equality function; a lookup passes a key entry (an entry with
 * the hash set, often a stack struct of the user's type) and optional
 * keydata for keys that are not a whole struct (a name of n bytes).
 *
 * Why seeded: the scan hashes path names and (device, inode) pairs of
 * directories any user may create; with a fixed hash one could fill a
 * directory with names of one bucket and make every lookup linear. The
 * hash is SipHash-1-3 (Aumasson and Bernstein; the variant Rust's and
 * Python's tables use) under a 128-bit key drawn from getrandom once per
 * process, so nobody outside the process can pick colliding keys.
 *
 * Iteration order follows the buckets, hence the seed: it differs from
 * run to run and must never reach output (keep an array for order, or
 * sort). Separate chaining: the bucket array doubles when the map holds
 * more than 3/4 as many entries as buckets; removal unlinks in place and
 * never moves an entry, so pointers to entries stay valid. */
#ifndef CUDAMOD_HASHMAP_H
#define CUDAMOD_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap_entry {
        struct hashmap_entry *next; /* the next entry of its bucket */
        unsigned int hash;
};

/* Whether entry (in the map) matches key (the entry given to a lookup,
 * whose hash equals entry's) and keydata (what the lookup passed, may be
 * NULL). */
typedef bool hashmap_equal_fn(const struct hashmap_entry *entry, const struct hashmap_entry *key,
                              const void *keydata);

struct hashmap {
        struct hashmap_entry **buckets;
        size_t n_buckets; /* a power of two, or 0 before the first add */
        size_t count;
        hashmap_equal_fn *equal;
};

#define HASHMAP_INIT(eq) { .buckets = NULL, .n_buckets = 0, .count = 0, .equal = (eq) }

/* The struct of type holding entry (a struct hashmap_entry *) as member;
 * NULL for NULL. */
#define hashmap_entry_of(entry, type, member)                                                 \
        ({                                                                                    \
                const struct hashmap_entry *_he_ = (entry);                                   \
                _he_ ? (type *)(void *)((char *)(uintptr_t)_he_ - offsetof(type, member)) : NULL; \
        })

/* The seeded hashes: equal input, equal hash, within one process. */
unsigned int hash_bytes(const void *data, size_t len);
unsigned int hash_str(const char *s);

static inline void hashmap_entry_init(struct hashmap_entry *e, unsigned int hash)
{
        e->next = NULL;
        e->hash = hash;
}

/* Allocates nothing; room for about expected entries comes with the first
 * add (0: a small table). */
void hashmap_init(struct hashmap *map, hashmap_equal_fn *equal, size_t expected);
/* Frees the bucket array; with free_entry, calls it on every entry first
 * (in no particular order). The map is empty and usable afterwards. */
void hashmap_release(struct hashmap *map, void (*free_entry)(struct hashmap_entry *e));

static inline size_t hashmap_count(const struct hashmap *map)
{
        return map->count;
}

/* The entry equal to key (and keydata), or NULL. */
struct hashmap_entry *hashmap_get(const struct hashmap *map, const struct hashmap_entry *key,
                                  const void *keydata);
/* Add e (hash set by hashmap_entry_init) without looking for an equal one:
 * the caller knows there is none, or wants both. */
void hashmap_add(struct hashmap *map, struct hashmap_entry *e);
/* Unlink and return the entry equal to key (and keydata), or NULL; the
 * caller frees it. */
struct hashmap_entry *hashmap_remove(struct hashmap *map, const struct hashmap_entry *key,
                                     const void *keydata);

/* Every entry once, in no particular order; the current entry may be
 * removed (and freed) before the next call, nothing else may change. */
struct hashmap_iter {
        const struct hashmap *map;
        size_t bucket;
        struct hashmap_entry *next;
};

void hashmap_iter_init(const struct hashmap *map, struct hashmap_iter *it);
struct hashmap_entry *hashmap_iter_next(struct hashmap_iter *it);

#endif
