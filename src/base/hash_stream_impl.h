/* The body of hash_stream_update (see hash_stream.h), included after
 * <xxhash.h> by each unit that compiles it for one vector unit: xxHash's
 * XXH3_accumulate_512 and XXH3_scrambleAcc name that unit's variants. */
#ifndef LM_BASE_HASH_STREAM_IMPL_H
#define LM_BASE_HASH_STREAM_IMPL_H

#include <string.h>

#include "base/hash_stream.h"

#define HS_STRIPES_PER_BLOCK ((HASH_STREAM_SECRET - XXH_STRIPE_LEN) / XXH_SECRET_CONSUME_RATE)

_Static_assert(XXH_STRIPE_LEN == 64, "xxHash stripe size");
_Static_assert(XXH_SECRET_DEFAULT_SIZE == HASH_STREAM_SECRET, "xxHash secret size");

/* Copies to *dst and moves it on, when there is a destination. */
static inline void hs_copy(unsigned char **dst, const unsigned char *src, size_t n) {
    if (!*dst) return;
    memcpy(*dst, src, n);
    *dst += n;
}

static inline void hs_end_stripes(hash_stream *s) {
    if (s->stripes == HS_STRIPES_PER_BLOCK) {
        XXH3_scrambleAcc(s->acc, s->secret + HASH_STREAM_SECRET - XXH_STRIPE_LEN);
        s->stripes = 0;
    }
}

/* Appends n <= 64 bytes to the window of the last 64. */
static inline void hs_push_tail(hash_stream *s, const unsigned char *p, size_t n) {
    memmove(s->tail, s->tail + n, 64 - n);
    memcpy(s->tail + 64 - n, p, n);
}

static inline void hs_update(hash_stream *s, void *dst_, const void *src_, size_t n) {
    unsigned char *dst = dst_;
    const unsigned char *src = src_;
    if (!n) return;
    if (s->total < HASH_STREAM_SHORT) {
        size_t k = HASH_STREAM_SHORT - s->total < n ? HASH_STREAM_SHORT - s->total : n;
        memcpy(s->head + s->total, src, k);
    }
    s->total += n;
    /* A stripe is accumulated only once a byte follows it: the stripe that
     * holds the last byte is hashed by another rule at the end. */
    if (s->pending) {
        size_t k = 64 - s->pending < n ? 64 - s->pending : n;
        hs_push_tail(s, src, k);
        hs_copy(&dst, src, k);
        src += k;
        n -= k;
        s->pending += (uint32_t)k;
        if (!n) return;
        XXH3_accumulate_512(s->acc, s->tail, s->secret + s->stripes * XXH_SECRET_CONSUME_RATE);
        s->stripes++;
        hs_end_stripes(s);
        s->pending = 0;
    }
    /* The hot loop: each stripe is copied and accumulated while in registers. */
    size_t left = n;
    while (left > 64) {
        size_t run = (left - 1) / 64, room = HS_STRIPES_PER_BLOCK - s->stripes;
        if (run > room) run = room;
        const unsigned char *secret = s->secret + s->stripes * XXH_SECRET_CONSUME_RATE;
        if (dst) {
            for (size_t i = 0; i < run; i++) {
                memcpy(dst + 64 * i, src + 64 * i, 64);
                XXH3_accumulate_512(s->acc, src + 64 * i, secret + i * XXH_SECRET_CONSUME_RATE);
            }
            dst += 64 * run;
        } else {
            for (size_t i = 0; i < run; i++)
                XXH3_accumulate_512(s->acc, src + 64 * i, secret + i * XXH_SECRET_CONSUME_RATE);
        }
        src += 64 * run;
        left -= 64 * run;
        s->stripes += (uint32_t)run;
        hs_end_stripes(s);
    }
    hs_copy(&dst, src, left);
    s->pending = (uint32_t)left;
    /* The window now ends where this input ends. */
    if (n >= 64)
        memcpy(s->tail, src + left - 64, 64);
    else
        hs_push_tail(s, src + left - n, n);
}

#endif
