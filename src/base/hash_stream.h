/* XXH3-64 in streaming form, able to copy the bytes it reads to a second
 * place in the same pass: a write to device memory that must also be hashed
 * then costs one read of the data, with the hash's arithmetic hidden behind
 * the memory traffic. Internal to base/hash (hash.h is the interface).
 *
 * Feeding any split of a byte string gives XXH3_64bits_withSeed() of the
 * whole string (the library's one-shot function is the reference; the tests
 * compare the two). The long-input rule this relies on: every 64-byte stripe
 * but the one holding the last byte is accumulated with the secret's
 * stripe-in-block offset, the accumulators are scrambled after each full
 * block of stripes, and the last 64 bytes are accumulated with their own
 * secret offset; inputs of up to 240 bytes are hashed by other rules, so the
 * first 240 bytes are kept until the length is known.
 *
 * The update is compiled twice, for the baseline vector unit (hash.c) and for
 * AVX2 (hash_avx2.c); both give the same values. */
#ifndef LM_BASE_HASH_STREAM_H
#define LM_BASE_HASH_STREAM_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#define HASH_STREAM_SECRET 192 /* the default secret's size; seeds derive one as long */
#define HASH_STREAM_SHORT 240  /* the longest input hashed without stripes */

typedef struct hash_stream {
    alignas(64) uint64_t acc[8];
    alignas(64) unsigned char secret[HASH_STREAM_SECRET];
    unsigned char tail[64]; /* the last 64 bytes fed (only those fed are meaningful) */
    unsigned char head[HASH_STREAM_SHORT]; /* the first bytes fed */
    uint64_t seed, total;
    uint32_t pending; /* bytes fed since the last accumulated stripe, 0..64 */
    uint32_t stripes; /* stripes accumulated in the current block */
} hash_stream;

void hash_stream_begin(hash_stream *s, uint64_t seed);

/* Feeds `n` bytes at `src`; when `dst` is not NULL also copies them there
 * (the two must not overlap). */
void hash_stream_update(hash_stream *s, void *dst, const void *src, size_t n);

/* hash_stream_update on the baseline vector unit, whatever the CPU has (for
 * the tests: both variants must give the same values). */
void hash_stream_update_portable(hash_stream *s, void *dst, const void *src, size_t n);

/* The hash of everything fed so far; the state is left as it was. */
uint64_t hash_stream_end(const hash_stream *s);

#endif
