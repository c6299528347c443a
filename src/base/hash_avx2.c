/* See hash_avx2.h. Built with -mavx2 on x86-64 hosts only. */
#include "base/hash_avx2.h"

#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

#include "base/hash_stream_impl.h"

uint64_t hash_xxh3_avx2(const void *data, size_t size, uint64_t seed) {
    return XXH3_64bits_withSeed(data, size, seed);
}

void hash_stream_update_avx2(hash_stream *s, void *dst, const void *src, size_t n) {
    hs_update(s, dst, src, n);
}
