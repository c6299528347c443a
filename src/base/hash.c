/* The content hash is built on XXH3-64 from Debian's libxxhash-dev,
 * compiled into this unit from its header (XXH_INLINE_ALL): nothing to link,
 * so the static and cross-built replayers need no extra library. */
#include "base/hash.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#if defined(HASH_HAVE_AVX2)
#include "base/hash_avx2.h"
#define HASH_AVX2() __builtin_cpu_supports("avx2")
#else
#endif

/* XXH3 on the widest vector path the CPU has (the values never differ). */
static uint64_t xxh3(const void *data, size_t size, uint64_t seed) {
#if defined(HASH_HAVE_AVX2)
    if (HASH_AVX2()) return hash_xxh3_avx2(data, size, seed);
#endif
    return XXH3_64bits_withSeed(data, size, seed);
}

static void xxh3_update(XXH3_state_t *state, const void *data, size_t size) {
#if defined(HASH_HAVE_AVX2)
    if (HASH_AVX2()) return hash_xxh3_update_avx2(state, data, size);
#endif
    XXH3_64bits_update(state, data, size);
}

_Static_assert(sizeof(XXH3_state_t) <= sizeof(((hash64_state *)0)->piece),
               "hash64_state too small");
_Static_assert(alignof(XXH3_state_t) <= 64, "hash64_state misaligned");

static XXH3_state_t *xxh(unsigned char *opaque) {
    return (XXH3_state_t *)(void *)opaque;
}

static void le64(unsigned char *b, uint64_t v) {
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static void put_le64(XXH3_state_t *outer, uint64_t v) {
    unsigned char b[8];
    le64(b, v);
    XXH3_64bits_update(outer, b, sizeof b);
}

uint64_t hash64(const void *data, size_t size, uint64_t seed) {
    if (size <= HASH64_PIECE) return xxh3(size ? data : NULL, size, seed);
    XXH3_state_t outer;
    XXH3_INITSTATE(&outer);
    XXH3_64bits_reset_withSeed(&outer, seed);
    const unsigned char *p = data;
    for (size_t at = 0; at < size; at += HASH64_PIECE) {
        size_t n = size - at < HASH64_PIECE ? size - at : HASH64_PIECE;
        put_le64(&outer, xxh3(p + at, n, seed));
    }
    return XXH3_64bits_digest(&outer);
}

uint64_t hash64_combine(const uint64_t *pieces, size_t count, uint64_t total, uint64_t seed) {
    if (total <= HASH64_PIECE) return count ? pieces[0] : XXH3_64bits_withSeed(NULL, 0, seed);
    XXH3_state_t outer;
    XXH3_INITSTATE(&outer);
    XXH3_64bits_reset_withSeed(&outer, seed);
    for (size_t i = 0; i < count; i++)
        put_le64(&outer, pieces[i]);
    return XXH3_64bits_digest(&outer);
}

void hash64_begin(hash64_state *st, uint64_t seed) {
    XXH3_INITSTATE(xxh(st->piece));
    XXH3_INITSTATE(xxh(st->outer));
    XXH3_64bits_reset_withSeed(xxh(st->piece), seed);
    XXH3_64bits_reset_withSeed(xxh(st->outer), seed);
    st->seed = seed;
    st->total = st->first = 0;
    st->in_piece = 0;
}

void hash64_update(hash64_state *st, const void *data, size_t size) {
    const unsigned char *p = data;
    while (size) {
        size_t n = HASH64_PIECE - st->in_piece;
        if (n > size) n = size;
        xxh3_update(xxh(st->piece), p, n);
        st->in_piece += n;
        st->total += n;
        p += n;
        size -= n;
        if (st->in_piece == HASH64_PIECE) {
            uint64_t h = XXH3_64bits_digest(xxh(st->piece));
            if (st->total == HASH64_PIECE) st->first = h;
            put_le64(xxh(st->outer), h);
            XXH3_64bits_reset_withSeed(xxh(st->piece), st->seed);
            st->in_piece = 0;
        }
    }
}

uint64_t hash64_end(const hash64_state *st) {
    const XXH3_state_t *piece = (const XXH3_state_t *)(const void *)st->piece;
    if (st->total < HASH64_PIECE) return XXH3_64bits_digest(piece);
    if (st->total == HASH64_PIECE) return st->first;
    if (!st->in_piece) return XXH3_64bits_digest((const XXH3_state_t *)(const void *)st->outer);
    XXH3_state_t outer; /* the state stays as it is: finish a copy */
    memcpy(&outer, st->outer, sizeof outer);
    put_le64(&outer, XXH3_64bits_digest(piece));
    return XXH3_64bits_digest(&outer);
}

void hash64_update_str(hash64_state *st, const char *s) {
    hash64_update(st, s, strlen(s) + 1);
}

void hash64_update_u64(hash64_state *st, uint64_t v) {
    unsigned char b[8];
    le64(b, v);
    hash64_update(st, b, sizeof b);
}
