/* lightmetal — tiles and data formats on the host side.
 *
 * The device computes on 32x32 tiles. In memory (DRAM, L1, circular buffers) a
 * tile is stored in tt-metal's tile layout: four 16x16 faces
 *     face 0 = rows 0-15, cols 0-15     face 1 = rows 0-15, cols 16-31
 *     face 2 = rows 16-31, cols 0-15    face 3 = rows 16-31, cols 16-31
 * one after the other, each face row-major. Multi-byte values are little-endian.
 *
 * Data formats and their tile sizes:
 *   LM_DATA_FORMAT_FLOAT32    IEEE binary32, 4096 bytes per tile
 *   LM_DATA_FORMAT_FLOAT16_B  bfloat16 (upper half of a binary32), 2048 bytes
 *   LM_DATA_FORMAT_BFP8_B     block float, 1088 bytes: 64 exponent bytes (one per
 *                             16-value face row: face 0 rows 0-15, then faces 1,
 *                             2, 3), then 1024 mantissa bytes in the face order
 *                             above; each is sign (bit 7) + 7-bit magnitude m, and
 *                             a value is (-1)^sign * m * 2^(exp - 133)
 *   LM_DATA_FORMAT_UINT32 / LM_DATA_FORMAT_INT32
 *                             32-bit integers, 4096 bytes, copied bit for bit
 *
 * Conversions (identical bits on every host; they use integer operations only):
 *   - float32 -> bfloat16 rounds to nearest, ties to even; NaN stays NaN (its
 *     upper 16 bits with the quiet bit set); overflow rounds to +-Inf.
 *   - float32 -> bfp8_b follows tt-metal's host packer (pack_as_bfp_tiles,
 *     convert_u32_to_bfp), tile layout included: the shared exponent of a face
 *     row is the largest biased exponent among its 16 values; each value's
 *     24-bit significand (hidden bit included) is shifted right by (shared -
 *     own exponent), truncating, then rounded to 7 bits by adding half an output
 *     unit and truncating (ties away from zero), saturating at 127. Zeros and
 *     subnormals become 0 (with a + sign). A row holding Inf/NaN gets shared
 *     exponent 255 and decodes to Inf/NaN there; its other values keep what
 *     fits at that exponent (most become 0).
 *   - bfloat16 / bfp8_b -> float32 is exact.
 *
 * Thread-safety: every function here is pure and may be called from any thread.
 */
#ifndef LIGHTMETAL_LM_TILE_H
#define LIGHTMETAL_LM_TILE_H

#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_TILE_DIM 32
#define LM_TILE_ELEMS 1024

typedef enum lm_data_format {
    LM_DATA_FORMAT_INVALID = 0,
    LM_DATA_FORMAT_FLOAT32 = 1,
    LM_DATA_FORMAT_FLOAT16_B = 2,
    LM_DATA_FORMAT_BFP8_B = 3,
    LM_DATA_FORMAT_UINT32 = 4,
    LM_DATA_FORMAT_INT32 = 5,
} lm_data_format;

/* Bytes of one 32x32 tile in `format`; 0 for an unknown format. */
size_t lm_tile_size(lm_data_format format);

/* Stable short name of a format ("Float16_b", ...); "Invalid" when unknown. */
const char *lm_data_format_name(lm_data_format format);

/* Converts a row-major rows x cols matrix into rows/32 * cols/32 tiles of
 * `format`, written one after the other to dst in row-major tile order (tile
 * (tr, tc) is tile number tr * (cols / 32) + tc).
 * src holds 4-byte elements: float for the float formats, uint32_t / int32_t
 * for the integer formats. dst_size must be at least the tiles' total size.
 * Errors: LM_ERR_INVALID_ARGUMENT for NULL pointers, rows or cols zero or not a
 * multiple of 32, an unknown format, a size that overflows, or a dst_size too
 * small. Nothing is written on error. */
lm_status lm_tilize(const void *src, uint32_t rows, uint32_t cols, lm_data_format format, void *dst,
                    size_t dst_size);

/* The inverse of lm_tilize: reads rows/32 * cols/32 tiles of `format` from src
 * (src_size at least their total size) and writes the row-major matrix of
 * 4-byte elements to dst (dst_size at least rows * cols * 4). Same errors. */
lm_status lm_untilize(const void *src, size_t src_size, lm_data_format format, uint32_t rows,
                      uint32_t cols, void *dst, size_t dst_size);

/* Converts count floats to bfloat16 (round to nearest even) and back (exact).
 * src and dst must not overlap. Errors: LM_ERR_INVALID_ARGUMENT for a NULL
 * pointer while count > 0. */
lm_status lm_float_to_bfloat16(const float *src, uint16_t *dst, size_t count);
lm_status lm_bfloat16_to_float(const uint16_t *src, float *dst, size_t count);

#ifdef __cplusplus
}
#endif

#endif
