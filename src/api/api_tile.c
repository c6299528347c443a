/* Public tile helpers: argument validation, then the tile module. */
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "lightmetal/lm_tile.h"
#include "sim/tile/tile_format.h"

size_t lm_tile_size(lm_data_format format) {
    return tile_format_size(format);
}

const char *lm_data_format_name(lm_data_format format) {
    switch (format) {
    case LM_DATA_FORMAT_FLOAT32:
        return "Float32";
    case LM_DATA_FORMAT_FLOAT16_B:
        return "Float16_b";
    case LM_DATA_FORMAT_BFP8_B:
        return "Bfp8_b";
    case LM_DATA_FORMAT_UINT32:
        return "UInt32";
    case LM_DATA_FORMAT_INT32:
        return "Int32";
    case LM_DATA_FORMAT_INVALID:
        break;
    }
    return "Invalid";
}

/* Checks the shape and format shared by lm_tilize and lm_untilize and gives the
 * byte sizes of the row-major matrix and of its tiles. */
static lm_status check_shape(const char *fn, uint32_t rows, uint32_t cols, lm_data_format format,
                             size_t *out_matrix_bytes, size_t *out_tile_bytes) {
    if (!tile_format_valid(format))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: unknown data format %d", fn, (int)format);
    if (rows == 0 || rows % LM_TILE_DIM)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: rows %u is not a nonzero multiple of 32", fn,
                       rows);
    if (cols == 0 || cols % LM_TILE_DIM)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: cols %u is not a nonzero multiple of 32", fn,
                       cols);
    size_t elems;
    if (!ck_mul_size(rows, cols, &elems) || !ck_mul_size(elems, 4, out_matrix_bytes) ||
        !ck_mul_size(elems / LM_TILE_ELEMS, tile_format_size(format), out_tile_bytes))
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: a %u x %u matrix overflows the address space",
                       fn, rows, cols);
    return LM_OK;
}

lm_status lm_tilize(const void *src, uint32_t rows, uint32_t cols, lm_data_format format, void *dst,
                    size_t dst_size) {
    const char *fn = "lm_tilize";
    if (!src) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: src is NULL", fn);
    if (!dst) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
    size_t matrix_bytes, tile_bytes;
    lm_status st = check_shape(fn, rows, cols, format, &matrix_bytes, &tile_bytes);
    if (st) return st;
    if (dst_size < tile_bytes)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: dst_size %zu is smaller than the %zu bytes of %u x %u in %s", fn,
                       dst_size, tile_bytes, rows, cols, lm_data_format_name(format));
    tile_tilize(src, rows, cols, format, dst);
    return LM_OK;
}

lm_status lm_untilize(const void *src, size_t src_size, lm_data_format format, uint32_t rows,
                      uint32_t cols, void *dst, size_t dst_size) {
    const char *fn = "lm_untilize";
    if (!src) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: src is NULL", fn);
    if (!dst) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: dst is NULL", fn);
    size_t matrix_bytes, tile_bytes;
    lm_status st = check_shape(fn, rows, cols, format, &matrix_bytes, &tile_bytes);
    if (st) return st;
    if (src_size < tile_bytes)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: src_size %zu is smaller than the %zu bytes of %u x %u in %s", fn,
                       src_size, tile_bytes, rows, cols, lm_data_format_name(format));
    if (dst_size < matrix_bytes)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "%s: dst_size %zu is smaller than the %zu bytes of a %u x %u matrix", fn,
                       dst_size, matrix_bytes, rows, cols);
    tile_untilize(src, format, rows, cols, dst);
    return LM_OK;
}

lm_status lm_float_to_bfloat16(const float *src, uint16_t *dst, size_t count) {
    if (count && (!src || !dst))
        return err_set(LM_ERR_INVALID_ARGUMENT, "lm_float_to_bfloat16: %s is NULL",
                       src ? "dst" : "src");
    for (size_t i = 0; i < count; i++) {
        uint32_t bits;
        memcpy(&bits, &src[i], sizeof bits);
        dst[i] = tile_bf16_from_bits(bits);
    }
    return LM_OK;
}

lm_status lm_bfloat16_to_float(const uint16_t *src, float *dst, size_t count) {
    if (count && (!src || !dst))
        return err_set(LM_ERR_INVALID_ARGUMENT, "lm_bfloat16_to_float: %s is NULL",
                       src ? "dst" : "src");
    for (size_t i = 0; i < count; i++) {
        uint32_t bits = (uint32_t)src[i] << 16;
        memcpy(&dst[i], &bits, sizeof bits);
    }
    return LM_OK;
}
