/* The content hash is XXH3-64 from Debian's libxxhash-dev, compiled into this
 * unit from its header (XXH_INLINE_ALL): nothing to link, so the static and
 * cross-built replayers need no extra library. */
#include "base/hash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

_Static_assert(sizeof(XXH3_state_t) <= sizeof(hash64_state), "hash64_state too small");
_Static_assert(alignof(XXH3_state_t) <= alignof(hash64_state), "hash64_state misaligned");

uint64_t hash64(const void *data, size_t size, uint64_t seed) {
    return XXH3_64bits_withSeed(size ? data : NULL, size, seed);
}

static XXH3_state_t *xxh_state(hash64_state *st) {
    return (XXH3_state_t *)(void *)st->opaque;
}

void hash64_begin(hash64_state *st, uint64_t seed) {
    XXH3_state_t *x = xxh_state(st);
    XXH3_INITSTATE(x);
    XXH3_64bits_reset_withSeed(x, seed);
}

void hash64_update(hash64_state *st, const void *data, size_t size) {
    if (size) XXH3_64bits_update(xxh_state(st), data, size);
}

uint64_t hash64_end(const hash64_state *st) {
    return XXH3_64bits_digest((const XXH3_state_t *)(const void *)st->opaque);
}
