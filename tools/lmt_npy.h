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

#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

/* The element types exchanged. bfloat16 has no NumPy dtype: it travels as
 * its 16-bit patterns in '<u2' (the upper half of a float32). */
typedef enum lmt_npy_dtype {
    LMT_NPY_INVALID = 0,
    LMT_NPY_F4, /* '<f4' float32 */
    LMT_NPY_U4, /* '<u4' uint32 */
    LMT_NPY_I4, /* '<i4' int32 */
    LMT_NPY_U2, /* '<u2' uint16 (bfloat16 bit patterns) */
    LMT_NPY_U1, /* '|u1' uint8 (plain bytes) */
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

#endif
