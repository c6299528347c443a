/* Content hash: eight lanes, each folding one 64-bit word per 64-byte stripe
 * through a bijective step (xor, odd multiply, rotate). Because each step is a
 * bijection of the input word for a fixed lane state, a single changed word
 * always changes its lane; the lanes are combined and avalanched at the end
 * together with the total length, so inputs that differ only by trailing zero
 * bytes still hash differently. */
#include "base/hash.h"

#include <string.h>

#define HASH_K1 0x9709cd381ee638bdull
#define HASH_K2 0xee883c16a41b0e39ull
#define HASH_K3 0xbf1d4f0a2b12771dull
#define HASH_K4 0xc4185ac05fb10505ull
#define HASH_K5 0xbb877321d1a3fa4dull

static inline uint64_t hash_rotl(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t hash_load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t hash_step(uint64_t lane, uint64_t word) {
    return hash_rotl((lane ^ word) * HASH_K1, 29);
}

/* Spreads every input bit over the whole word (xor-shift / multiply rounds). */
static inline uint64_t hash_avalanche(uint64_t x) {
    x ^= x >> 31;
    x *= HASH_K4;
    x ^= x >> 29;
    x *= HASH_K5;
    x ^= x >> 32;
    return x;
}

static void hash_stripes(uint64_t lane[8], const unsigned char *p, size_t stripes) {
    uint64_t l0 = lane[0], l1 = lane[1], l2 = lane[2], l3 = lane[3];
    uint64_t l4 = lane[4], l5 = lane[5], l6 = lane[6], l7 = lane[7];
    for (size_t i = 0; i < stripes; i++, p += 64) {
        l0 = hash_step(l0, hash_load64(p + 0));
        l1 = hash_step(l1, hash_load64(p + 8));
        l2 = hash_step(l2, hash_load64(p + 16));
        l3 = hash_step(l3, hash_load64(p + 24));
        l4 = hash_step(l4, hash_load64(p + 32));
        l5 = hash_step(l5, hash_load64(p + 40));
        l6 = hash_step(l6, hash_load64(p + 48));
        l7 = hash_step(l7, hash_load64(p + 56));
    }
    lane[0] = l0, lane[1] = l1, lane[2] = l2, lane[3] = l3;
    lane[4] = l4, lane[5] = l5, lane[6] = l6, lane[7] = l7;
}

void hash64_begin(hash64_state *st, uint64_t seed) {
    memset(st, 0, sizeof *st);
    st->seed = seed;
    /* Distinct starting values make the lanes order-sensitive. */
    for (int i = 0; i < 8; i++)
        st->lane[i] = hash_avalanche(seed + (uint64_t)(i + 1) * HASH_K2);
}

void hash64_update(hash64_state *st, const void *data, size_t size) {
    const unsigned char *p = data;
    st->total += size;
    if (st->buffered) {
        size_t take = 64 - st->buffered;
        if (take > size) take = size;
        memcpy(st->buf + st->buffered, p, take);
        st->buffered += take;
        p += take;
        size -= take;
        if (st->buffered < 64) return;
        hash_stripes(st->lane, st->buf, 1);
        st->buffered = 0;
    }
    size_t stripes = size / 64;
    hash_stripes(st->lane, p, stripes);
    p += stripes * 64;
    size -= stripes * 64;
    if (size) memcpy(st->buf, p, size);
    st->buffered = size;
}

uint64_t hash64_end(const hash64_state *st) {
    uint64_t lane[8];
    memcpy(lane, st->lane, sizeof lane);
    /* The tail (0..63 bytes) goes through the lanes zero-padded; the length
     * folded in below tells padding apart from real zero bytes. */
    if (st->buffered) {
        unsigned char last[64] = {0};
        memcpy(last, st->buf, st->buffered);
        hash_stripes(lane, last, 1);
    }
    uint64_t h = hash_avalanche(st->total ^ st->seed ^ HASH_K3);
    for (int i = 0; i < 8; i++)
        h = hash_rotl((h ^ hash_avalanche(lane[i])) * HASH_K2, 31);
    return hash_avalanche(h);
}

uint64_t hash64(const void *data, size_t size, uint64_t seed) {
    hash64_state st;
    hash64_begin(&st, seed);
    if (size) hash64_update(&st, data, size);
    return hash64_end(&st);
}
