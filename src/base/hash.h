/* Fast 64-bit content hash for content addressing (kernel ELFs, data blobs,
 * the kernel build cache).
 *
 * Properties, stated honestly:
 * - NOT cryptographic. Anyone can construct collisions on purpose. Code that
 *   deduplicates by hash must still compare the bytes when two hashes match,
 *   and nothing may trust a hash taken from a file as proof of integrity
 *   against an attacker (it does catch accidental corruption).
 * - For non-adversarial inputs the output behaves like a random 64-bit value:
 *   every input bit affects every output bit (a final avalanche step), so the
 *   chance that two different inputs collide is about 2^-64.
 * - Fast on large inputs: eight independent 64-bit multiply lanes consume 64
 *   bytes per step, which runs at memory bandwidth on one core.
 * - Stable: the same bytes and seed give the same value on every host and in
 *   every version (values are pinned by known-answer tests), so hashes can be
 *   stored in files. Input is read as little-endian words on every host.
 *
 * Thread-safety: pure functions of their arguments.
 */
#ifndef LM_BASE_HASH_H
#define LM_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Hash of `size` bytes at `data` (data may be NULL when size is 0). */
uint64_t hash64(const void *data, size_t size, uint64_t seed);

/* Incremental form for data that arrives in pieces: feeding the pieces in
 * order gives exactly hash64() of their concatenation. */
typedef struct hash64_state {
    uint64_t lane[8];
    uint64_t total; /* bytes fed so far */
    uint64_t seed;
    unsigned char buf[64]; /* a partial stripe waiting for more bytes */
    size_t buffered;
} hash64_state;

void hash64_begin(hash64_state *st, uint64_t seed);
void hash64_update(hash64_state *st, const void *data, size_t size);
uint64_t hash64_end(const hash64_state *st);

#endif
