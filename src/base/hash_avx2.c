/* See hash_avx2.h. Built with -mavx2 on x86-64 hosts only. */
#include "base/hash_avx2.h"

#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

uint64_t hash_xxh3_avx2(const void *data, size_t size, uint64_t seed) {
    return XXH3_64bits_withSeed(data, size, seed);
}

void hash_xxh3_update_avx2(void *state, const void *data, size_t size) {
    XXH3_64bits_update((XXH3_state_t *)state, data, size);
}
