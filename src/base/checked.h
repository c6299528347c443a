/* Overflow-checked size arithmetic.
 *
 * Every size that comes from a user or a file goes through these before it is
 * used to allocate, index or copy. Each returns true when the result fits and
 * stores it in *out; on overflow it returns false and leaves *out unspecified.
 */
#ifndef LM_BASE_CHECKED_H
#define LM_BASE_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool ck_add_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_add_overflow(a, b, out);
}
static inline bool ck_mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool ck_add_size(size_t a, size_t b, size_t *out) {
    return !__builtin_add_overflow(a, b, out);
}
static inline bool ck_mul_size(size_t a, size_t b, size_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool ck_add_u32(uint32_t a, uint32_t b, uint32_t *out) {
    return !__builtin_add_overflow(a, b, out);
}

/* Rounds `value` up to a multiple of `align` (a power of two, not zero). */
static inline bool ck_align_up_u64(uint64_t value, uint64_t align, uint64_t *out) {
    uint64_t bumped;
    if (!ck_add_u64(value, align - 1, &bumped)) return false;
    *out = bumped & ~(align - 1);
    return true;
}

/* True when [offset, offset + length) lies inside [0, limit). */
static inline bool ck_range_within(uint64_t offset, uint64_t length, uint64_t limit) {
    return offset <= limit && length <= limit - offset;
}

/* Ceiling division for a nonzero divisor, without the (a + b - 1) overflow. */
static inline uint64_t ck_div_ceil_u64(uint64_t a, uint64_t b) {
    return a / b + (a % b != 0);
}

static inline bool ck_is_pow2_u64(uint64_t v) {
    return v != 0 && (v & (v - 1)) == 0;
}

#endif
