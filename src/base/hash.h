/* 64-bit content hash for content addressing and integrity (kernel ELFs,
 * data blobs, a binary's table digest, the kernel build cache).
 *
 * The function is built on XXH3-64 (xxHash 0.8), a widely used, specified
 * hash, so that large data can be hashed by several threads at once:
 * - up to HASH64_PIECE bytes: XXH3-64 of the bytes (`xxhsum -H3` of a file
 *   of them with seed 0 gives the same value);
 * - longer: the data is cut into HASH64_PIECE-byte pieces (the last one may
 *   be shorter); the value is XXH3-64 of the pieces' XXH3-64 values, each
 *   as 8 little-endian bytes, in order.
 * Files name this function LMB_HashAlgorithm_XXH3_64_Pieces.
 *
 * Properties, stated honestly:
 * - NOT cryptographic. Anyone can construct collisions on purpose. Code that
 *   deduplicates by hash must still compare the bytes when two hashes match,
 *   and nothing may trust a hash taken from a file as proof of integrity
 *   against an attacker (it does catch accidental corruption).
 * - Fast: it runs at memory bandwidth on one core, so data can be hashed as
 *   it streams elsewhere at little extra cost.
 * - Stable: the same bytes and seed give the same value on every host and in
 *   every version (pinned by known-answer tests), so hashes can be stored in
 *   files.
 *
 * Thread-safety: pure functions of their arguments; a state belongs to one
 * thread at a time.
 */
#ifndef LM_BASE_HASH_H
#define LM_BASE_HASH_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>

#define HASH64_PIECE ((size_t)1 << 20)

/* Hash of `size` bytes at `data` (data may be NULL when size is 0). */
uint64_t hash64(const void *data, size_t size, uint64_t seed);

/* The hash of `total` bytes from the hashes of their pieces (each the
 * hash64() of one HASH64_PIECE-byte piece, in order; `count` pieces cover
 * `total`), so that threads can hash pieces of one buffer in parallel. */
uint64_t hash64_combine(const uint64_t *pieces, size_t count, uint64_t total, uint64_t seed);

/* Incremental form for data that arrives in pieces: feeding the pieces in
 * order gives exactly hash64() of their concatenation. The state is opaque
 * and may live on the stack. */
typedef struct hash64_state {
    alignas(64) unsigned char piece[640]; /* the piece being fed */
    alignas(64) unsigned char outer[640]; /* the hashes of finished pieces */
    uint64_t total, first;                /* first: the first piece's hash */
    size_t in_piece;
} hash64_state;

void hash64_begin(hash64_state *st, uint64_t seed);
void hash64_update(hash64_state *st, const void *data, size_t size);

/* Feeds `size` bytes at `src` and copies them to `dst` in the same pass: one
 * read of the data, at about the cost of the copy alone. The two ranges must
 * not overlap. */
void hash64_update_copy(hash64_state *st, void *dst, const void *src, size_t size);
uint64_t hash64_end(const hash64_state *st);

/* Feeds a string with its terminating NUL (so "ab","c" and "a","bc" differ). */
void hash64_update_str(hash64_state *st, const char *s);

/* Feeds a number as 8 little-endian bytes (the same on every host). */
void hash64_update_u64(hash64_state *st, uint64_t v);

#endif
