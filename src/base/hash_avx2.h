/* XXH3 compiled for AVX2 (hash_avx2.c): the same values as the portable
 * build, about twice as fast on large data. Only for hash.c, which calls it
 * after checking the CPU. */
#ifndef LM_BASE_HASH_AVX2_H
#define LM_BASE_HASH_AVX2_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash_stream.h"

uint64_t hash_xxh3_avx2(const void *data, size_t size, uint64_t seed);

void hash_stream_update_avx2(hash_stream *s, void *dst, const void *src, size_t n);

#endif
