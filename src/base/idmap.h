/* A hash map from nonzero 64-bit keys to 64-bit values: object ids and
 * handles in the recorder, the verifier and replay, where a file or a
 * workload may hold hundreds of thousands of objects and every lookup must
 * stay O(1).
 *
 * Open addressing with linear probing; removal shifts the following entries
 * back, so no tombstones build up. Iterate with idmap_next().
 *
 * Ownership: the map owns its arrays (idmap_free). Thread-safety: none; a
 * map belongs to one thread at a time (or to its owner's lock).
 */
#ifndef LM_BASE_IDMAP_H
#define LM_BASE_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct idmap {
    uint64_t *keys; /* 0 = empty slot */
    uint64_t *values;
    size_t count, capacity; /* capacity is 0 or a power of two */
} idmap;

#define IDMAP_INIT                                                                                 \
    { NULL, NULL, 0, 0 }

/* The value stored for `key`, or NULL. The pointer is valid until the map
 * changes. */
uint64_t *idmap_find(const idmap *m, uint64_t key);

/* Stores `value` for `key` (nonzero), replacing an earlier value. Returns
 * false only when out of memory (the map is unchanged then). */
bool idmap_put(idmap *m, uint64_t key, uint64_t value);

/* Removes `key`; false when it was absent. */
bool idmap_remove(idmap *m, uint64_t key);

/* Iteration: start with *cursor = 0; each call gives the next entry and
 * returns false after the last. The map must not change meanwhile. */
bool idmap_next(const idmap *m, size_t *cursor, uint64_t *out_key, uint64_t *out_value);

void idmap_free(idmap *m);

#endif
