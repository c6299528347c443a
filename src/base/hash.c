/* The content hash is built on XXH3-64 from Debian's libxxhash-dev,
 * compiled into this unit from its header (XXH_INLINE_ALL): nothing to link,
 * so the static and cross-built replayers need no extra library. One-shot
 * hashes use xxHash's own function; streaming uses hash_stream, which gives
 * the same values and can copy while it hashes. */
#include "base/hash.h"

#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/hash_stream_impl.h"

#if defined(HASH_HAVE_AVX2)
#include "base/hash_avx2.h"
#define HASH_AVX2() __builtin_cpu_supports("avx2")
#endif

/* XXH3 on the widest vector path the CPU has (the values never differ). */
static uint64_t xxh3(const void *data, size_t size, uint64_t seed) {
#if defined(HASH_HAVE_AVX2)
    if (HASH_AVX2()) return hash_xxh3_avx2(data, size, seed);
#endif
    return XXH3_64bits_withSeed(data, size, seed);
}

void hash_stream_begin(hash_stream *s, uint64_t seed) {
    static const uint64_t init[8] = XXH3_INIT_ACC;
    memcpy(s->acc, init, sizeof s->acc);
    /* As XXH3 does: seed 0 uses the default secret, others one derived from it. */
    if (seed)
        XXH3_initCustomSecret(s->secret, seed);
    else
        memcpy(s->secret, XXH3_kSecret, sizeof s->secret);
    s->seed = seed;
    s->total = 0;
    s->pending = s->stripes = 0;
}

void hash_stream_update_portable(hash_stream *s, void *dst, const void *src, size_t n) {
    hs_update(s, dst, src, n);
}

void hash_stream_update(hash_stream *s, void *dst, const void *src, size_t n) {
#if defined(HASH_HAVE_AVX2)
    if (HASH_AVX2()) return hash_stream_update_avx2(s, dst, src, n);
#endif
    hs_update(s, dst, src, n);
}

uint64_t hash_stream_end(const hash_stream *s) {
    if (s->total <= HASH_STREAM_SHORT) return XXH3_64bits_withSeed(s->head, s->total, s->seed);
    XXH_ALIGN(64) uint64_t acc[8];
    memcpy(acc, s->acc, sizeof acc);
    XXH3_accumulate_512(acc, s->tail,
                        s->secret + HASH_STREAM_SECRET - XXH_STRIPE_LEN - XXH_SECRET_LASTACC_START);
    return XXH3_mergeAccs(acc, s->secret + XXH_SECRET_MERGEACCS_START,
                          (uint64_t)s->total * XXH_PRIME64_1);
}

_Static_assert(sizeof(hash_stream) <= sizeof(((hash64_state *)0)->piece), "hash64_state too small");
_Static_assert(alignof(hash_stream) <= 64, "hash64_state misaligned");

static hash_stream *stream(unsigned char *opaque) {
    return (hash_stream *)(void *)opaque;
}

static const hash_stream *cstream(const unsigned char *opaque) {
    return (const hash_stream *)(const void *)opaque;
}

/* Feeds a piece's hash to the outer hash, as 8 little-endian bytes. */
static void put_le64(hash_stream *outer, uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    hash_stream_update(outer, NULL, b, sizeof b);
}

uint64_t hash64(const void *data, size_t size, uint64_t seed) {
    if (size <= HASH64_PIECE) return xxh3(size ? data : NULL, size, seed);
    hash_stream outer;
    hash_stream_begin(&outer, seed);
    const unsigned char *p = data;
    for (size_t at = 0; at < size; at += HASH64_PIECE) {
        size_t n = size - at < HASH64_PIECE ? size - at : HASH64_PIECE;
        put_le64(&outer, xxh3(p + at, n, seed));
    }
    return hash_stream_end(&outer);
}

uint64_t hash64_combine(const uint64_t *pieces, size_t count, uint64_t total, uint64_t seed) {
    if (total <= HASH64_PIECE) return count ? pieces[0] : XXH3_64bits_withSeed(NULL, 0, seed);
    hash_stream outer;
    hash_stream_begin(&outer, seed);
    for (size_t i = 0; i < count; i++)
        put_le64(&outer, pieces[i]);
    return hash_stream_end(&outer);
}

void hash64_begin(hash64_state *st, uint64_t seed) {
    hash_stream_begin(stream(st->piece), seed);
    hash_stream_begin(stream(st->outer), seed);
    st->total = st->first = 0;
    st->in_piece = 0;
}

void hash64_update_copy(hash64_state *st, void *dst, const void *src, size_t size) {
    unsigned char *d = dst;
    const unsigned char *p = src;
    while (size) {
        size_t n = HASH64_PIECE - st->in_piece;
        if (n > size) n = size;
        hash_stream_update(stream(st->piece), d, p, n);
        st->in_piece += n;
        st->total += n;
        p += n;
        if (d) d += n;
        size -= n;
        if (st->in_piece == HASH64_PIECE) {
            uint64_t h = hash_stream_end(stream(st->piece));
            if (st->total == HASH64_PIECE) st->first = h;
            put_le64(stream(st->outer), h);
            hash_stream_begin(stream(st->piece), cstream(st->piece)->seed);
            st->in_piece = 0;
        }
    }
}

void hash64_update(hash64_state *st, const void *data, size_t size) {
    hash64_update_copy(st, NULL, data, size);
}

uint64_t hash64_end(const hash64_state *st) {
    const hash_stream *piece = cstream(st->piece);
    if (st->total < HASH64_PIECE) return hash_stream_end(piece);
    if (st->total == HASH64_PIECE) return st->first;
    if (!st->in_piece) return hash_stream_end(cstream(st->outer));
    hash_stream outer = *cstream(st->outer); /* the state stays as it is: finish a copy */
    put_le64(&outer, hash_stream_end(piece));
    return hash_stream_end(&outer);
}

void hash64_update_str(hash64_state *st, const char *s) {
    hash64_update(st, s, strlen(s) + 1);
}

void hash64_update_u64(hash64_state *st, uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    hash64_update(st, b, sizeof b);
}
