/* XXH3 compiled for AVX2 (hash_avx2.c): the same values as the portable
 * build, about twice as fast on large data. Only for hash.c, which calls it
 * after checking the CPU. */
#ifndef LM_BASE_HASH_AVX2_H
#define LM_BASE_HASH_AVX2_H

#include <stddef.h>
#include <stdint.h>

uint64_t hash_xxh3_avx2(const void *data, size_t size, uint64_t seed);

/* `state` is an XXH3_state_t (same layout in every build of xxHash). */
void hash_xxh3_update_avx2(void *state, const void *data, size_t size);

#endif
