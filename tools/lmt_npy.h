/* NumPy .npy files for `lightmetal run --input/--output NAME=FILE.npy`.
 *
 * A deliberately small subset of the format (numpy's format.py describes
 * it): the reader takes versions 1.0, 2.0 and 3.0, C-order arrays
 * ('fortran_order': False) of the little-endian dtypes below, and nothing
 * else; the writer writes version 1.0 exactly as numpy.save does (header
 * padded with spaces to a multiple of 64 bytes, ending in a newline).
 *
 * The reader treats the file as hostile: every length and dimension is
 * checked before use, and each refusal is one precise message (err_set,
 * LM_ERR_INVALID_FILE) saying what is wrong and where.
 *
 * Thread-safety: no shared state.
 */
#ifndef LM_TOOLS_LMT_NPY_H
#define LM_TOOLS_LMT_NPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"
#include "lightmetal/lm_tile.h"

/* The element types exchanged. bfloat16 has no NumPy dtype: it travels as
 * its 16-bit patterns in '<u2' (the upper half of a float32). The types after
 * U1 are those of named buffers' element types (lm_element_type), converted
 * to and from their storage format by `lightmetal run`. */
typedef enum lmt_npy_dtype {
    LMT_NPY_INVALID = 0,
    LMT_NPY_F4, /* '<f4' float32 */
    LMT_NPY_U4, /* '<u4' uint32 */
    LMT_NPY_I4, /* '<i4' int32 */
    LMT_NPY_U2, /* '<u2' uint16 (bfloat16 bit patterns) */
    LMT_NPY_U1, /* '|u1' uint8 (plain bytes) */
    LMT_NPY_F8, /* '<f8' float64 */
    LMT_NPY_F2, /* '<f2' float16 (IEEE binary16) */
    LMT_NPY_I8, /* '<i8' int64 */
    LMT_NPY_U8, /* '<u8' uint64 */
    LMT_NPY_I2, /* '<i2' int16 */
    LMT_NPY_I1, /* '|i1' int8 */
    LMT_NPY_B1, /* '|b1' bool, one byte: 0 or 1 */
} lmt_npy_dtype;

/* Most dimensions a file may have (NumPy's own limit). */
#define LMT_NPY_MAX_RANK 64

/* The dtype's descr string ("<f4", ...); "?" for an invalid value. */
const char *lmt_npy_dtype_descr(lmt_npy_dtype dtype);

/* Bytes per element; 0 for an invalid value. */
unsigned lmt_npy_dtype_size(lmt_npy_dtype dtype);

/* A parsed file. `data` points into the bytes given to lmt_npy_parse. */
typedef struct lmt_npy {
    lmt_npy_dtype dtype;
    uint32_t rank; /* 0 for a scalar */
    uint64_t shape[LMT_NPY_MAX_RANK];
    uint64_t count;     /* elements: the product of the shape */
    const void *data;   /* count * element size bytes */
    uint64_t data_size; /* count * element size */
} lmt_npy;

/* Parses the `size` bytes of a whole .npy file. The data must be exactly
 * what the shape and dtype say (no byte missing, none left over).
 * Errors: LM_ERR_INVALID_FILE naming the problem; `*out` is written only on
 * success. */
lm_status lmt_npy_parse(const void *bytes, uint64_t size, lmt_npy *out);

/* Longest header lmt_npy_header writes (a rank of LMT_NPY_MAX_RANK with
 * 20-digit dimensions fits). */
#define LMT_NPY_HEADER_MAX 2048

/* Writes the version 1.0 header (magic, version, length, dict, padding) of
 * an array of `dtype` and shape[0..rank) into dst, which has room for
 * LMT_NPY_HEADER_MAX bytes; the data follows it unchanged. Returns the
 * header's length in bytes, or 0 (nothing usable in dst) for an invalid
 * dtype or a rank above LMT_NPY_MAX_RANK. */
size_t lmt_npy_header(lmt_npy_dtype dtype, uint32_t rank, const uint64_t *shape, char *dst);

/* Formats a shape as Python prints a tuple ("()", "(5,)", "(2, 3)") into
 * dst (always NUL-terminated; "..." ends a shape that does not fit). */
void lmt_npy_format_shape(uint32_t rank, const uint64_t *shape, char *dst, size_t dst_size);

/* ------------------------------------------------- element type conversion
 * A named buffer may hold a tensor whose element type is narrower or wider
 * than its storage format (lm_element_type). Storage formats converted to:
 * LM_DATA_FORMAT_FLOAT32, _INT32 and _UINT32 (4-byte little-endian
 * elements). Source and destination must not overlap. */

/* Converts `count` elements of dtype `from` at src into `storage` elements
 * at dst (count * 4 bytes):
 *   integers (I8 U8 I4 U4 I2 I1 U2 U1) -> INT32 or UINT32: the value, which
 *       must lie in the storage's range; B1 -> 0 or 1 (a byte other than 0
 *       and 1 is not a bool);
 *   F8 -> FLOAT32 rounds to nearest, ties to even (beyond float32's range to
 *       +-Inf, as NumPy's astype does); F2 -> FLOAT32 is exact (subnormals,
 *       infinities, NaN payloads kept); F4 -> FLOAT32 copies.
 * Errors: LM_ERR_INVALID_FILE "element I is V, outside ..." for the first
 * value that does not fit (nothing is wrapped); LM_ERR_INVALID_ARGUMENT for a
 * pair not listed. dst is partly written on error. */
lm_status lmt_npy_to_storage(lmt_npy_dtype from, const void *src, uint64_t count,
                             lm_data_format storage, void *dst);

/* The other way, for outputs: `count` `storage` elements at src into dtype
 * `to` at dst (count * lmt_npy_dtype_size(to) bytes):
 *   INT32 -> I8 sign-extends, UINT32 -> U8 zero-extends; to I2 I1 U2 U1 the
 *       value wraps modulo 2^bits (the narrow type's own arithmetic, which the
 *       device ran in 32 bits, wraps the same way); to B1 nonzero is True;
 *   FLOAT32 -> F8 is exact; FLOAT32 -> F2 rounds to nearest even, overflows
 *       to +-Inf, keeps NaN a NaN.
 * Returns false (nothing written) for a pair not listed. */
bool lmt_npy_from_storage(lm_data_format storage, const void *src, uint64_t count, lmt_npy_dtype to,
                          void *dst);

/* IEEE binary16 <-> binary32 bit patterns (exported for tests). */
uint32_t lmt_half_to_float_bits(uint16_t h);
uint16_t lmt_float_bits_to_half(uint32_t f);

#endif
