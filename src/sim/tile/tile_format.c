#include "sim/tile/tile_format.h"

#include <string.h>

/* Tiles are little-endian in device memory and copied to and from host floats
 * with memcpy. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the tile formats assume a little-endian host"
#endif

static uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

bool tile_format_valid(lm_data_format format) {
    return tile_format_size(format) != 0;
}

size_t tile_format_size(lm_data_format format) {
    switch (format) {
    case LM_DATA_FORMAT_FLOAT32:
    case LM_DATA_FORMAT_UINT32:
    case LM_DATA_FORMAT_INT32:
        return TILE_ELEMS * 4;
    case LM_DATA_FORMAT_FLOAT16_B:
        return TILE_ELEMS * 2;
    case LM_DATA_FORMAT_BFP8_B:
        return TILE_BFP8_EXP_BYTES + TILE_ELEMS;
    case LM_DATA_FORMAT_INVALID:
        break;
    }
    return 0;
}

/* ---- Bfp8_b ---------------------------------------------------------------- */

/* Biased exponent used for sharing; subnormals count as 0 since they are
 * flushed (tt-metal's packer does the same). */
static uint32_t bfp8_exponent(uint32_t bits) {
    return (bits >> 23) & 0xffu;
}

/* One value -> sign + 7-bit magnitude under the row's shared exponent. */
static uint8_t bfp8_encode(uint32_t bits, uint32_t shared_exp) {
    uint32_t exp = bfp8_exponent(bits);
    if (exp == 0) return 0; /* zero or subnormal */
    uint32_t mant = (bits & 0x007fffffu) | 0x00800000u;
    uint32_t shift = shared_exp - exp; /* shared_exp >= exp by construction */
    mant = shift > 31 ? 0 : mant >> shift;
    mant = (mant + (1u << 16)) >> 17;
    if (mant > 127) mant = 127;
    if (mant == 0) return 0;
    return (uint8_t)(((bits >> 31) << 7) | mant);
}

/* sign + magnitude under a shared exponent -> float32 bits, exactly
 * (-1)^s * m * 2^(e - 133), except that e = 255 with m >= 64 encodes Inf
 * (m = 64) or NaN, as in tt-metal's unpacker. */
static uint32_t bfp8_decode(uint8_t byte, uint32_t shared_exp) {
    uint32_t sign = (uint32_t)(byte >> 7) << 31;
    uint32_t m = byte & 0x7fu;
    if (m == 0) return 0;
    uint32_t lead = 31u - (uint32_t)__builtin_clz(m); /* 0..6 */
    uint32_t shift = 6 - lead;
    if (shared_exp > shift) {
        uint32_t frac = ((m << (shift + 1)) & 0x7fu) << 16;
        return sign | ((shared_exp - shift) << 23) | frac;
    }
    /* Below the normal range: the value is a multiple of 2^-133, hence an exact
     * subnormal with significand m * 2^(e + 16). */
    return sign | (m << (shared_exp + 16));
}

static void bfp8_pack(const float *in, uint8_t *dst) {
    for (uint32_t face = 0; face < 4; face++) {
        for (uint32_t fr = 0; fr < TILE_FACE_DIM; fr++) {
            uint32_t r = (face / 2) * TILE_FACE_DIM + fr;
            uint32_t c0 = (face % 2) * TILE_FACE_DIM;
            const float *row = in + r * TILE_DIM + c0;
            uint32_t shared = 0;
            for (uint32_t i = 0; i < TILE_FACE_DIM; i++) {
                uint32_t e = bfp8_exponent(f2u(row[i]));
                if (e > shared) shared = e;
            }
            uint32_t row_index = face * TILE_FACE_DIM + fr;
            dst[row_index] = (uint8_t)shared;
            uint8_t *mant = dst + TILE_BFP8_EXP_BYTES + row_index * TILE_FACE_DIM;
            for (uint32_t i = 0; i < TILE_FACE_DIM; i++)
                mant[i] = bfp8_encode(f2u(row[i]), shared);
        }
    }
}

static void bfp8_unpack(const uint8_t *src, float *out) {
    for (uint32_t face = 0; face < 4; face++) {
        for (uint32_t fr = 0; fr < TILE_FACE_DIM; fr++) {
            uint32_t r = (face / 2) * TILE_FACE_DIM + fr;
            uint32_t c0 = (face % 2) * TILE_FACE_DIM;
            uint32_t row_index = face * TILE_FACE_DIM + fr;
            uint32_t shared = src[row_index];
            const uint8_t *mant = src + TILE_BFP8_EXP_BYTES + row_index * TILE_FACE_DIM;
            for (uint32_t i = 0; i < TILE_FACE_DIM; i++)
                out[r * TILE_DIM + c0 + i] = u2f(bfp8_decode(mant[i], shared));
        }
    }
}

/* ---- all formats ----------------------------------------------------------- */

void tile_unpack(lm_data_format format, const void *src, float *out) {
    const uint8_t *bytes = src;
    switch (format) {
    case LM_DATA_FORMAT_FLOAT32:
    case LM_DATA_FORMAT_UINT32:
    case LM_DATA_FORMAT_INT32:
        for (uint32_t r = 0; r < TILE_DIM; r++)
            for (uint32_t c = 0; c < TILE_DIM; c += TILE_FACE_DIM)
                memcpy(out + r * TILE_DIM + c, bytes + 4 * tile_face_offset(r, c),
                       4 * TILE_FACE_DIM);
        break;
    case LM_DATA_FORMAT_FLOAT16_B:
        /* A face row is 16 contiguous values: walk them as such, so the
         * compiler turns the widening into vector code (this is the hottest
         * conversion: every matmul operand passes through it). */
        for (uint32_t r = 0; r < TILE_DIM; r++)
            for (uint32_t c0 = 0; c0 < TILE_DIM; c0 += TILE_FACE_DIM) {
                const uint8_t *in = bytes + 2 * tile_face_offset(r, c0);
                float *row = out + r * TILE_DIM + c0;
                uint16_t h[TILE_FACE_DIM]; /* little-endian, like the host (see above) */
                memcpy(h, in, sizeof h);
                uint32_t w[TILE_FACE_DIM];
                for (uint32_t i = 0; i < TILE_FACE_DIM; i++)
                    w[i] = (uint32_t)h[i] << 16;
                memcpy(row, w, sizeof w);
            }
        break;
    case LM_DATA_FORMAT_BFP8_B:
        bfp8_unpack(bytes, out);
        break;
    case LM_DATA_FORMAT_INVALID:
        break;
    }
}

void tile_pack(lm_data_format format, const float *in, void *dst) {
    uint8_t *bytes = dst;
    switch (format) {
    case LM_DATA_FORMAT_FLOAT32:
    case LM_DATA_FORMAT_UINT32:
    case LM_DATA_FORMAT_INT32:
        for (uint32_t r = 0; r < TILE_DIM; r++)
            for (uint32_t c = 0; c < TILE_DIM; c += TILE_FACE_DIM)
                memcpy(bytes + 4 * tile_face_offset(r, c), in + r * TILE_DIM + c,
                       4 * TILE_FACE_DIM);
        break;
    case LM_DATA_FORMAT_FLOAT16_B:
        for (uint32_t r = 0; r < TILE_DIM; r++)
            for (uint32_t c0 = 0; c0 < TILE_DIM; c0 += TILE_FACE_DIM) {
                /* A face row at a time, branch-free, so the compiler turns
                 * it into vector code (every tilized matmul operand and
                 * bfloat16 result passes here); the bits of
                 * tile_bf16_from_bits. */
                uint32_t w[TILE_FACE_DIM];
                uint16_t h[TILE_FACE_DIM]; /* little-endian, like the host */
                memcpy(w, in + r * TILE_DIM + c0, sizeof w);
                for (uint32_t i = 0; i < TILE_FACE_DIM; i++) {
                    uint32_t u = w[i];
                    uint32_t nan = (u >> 16) | 0x0040u;
                    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
                    h[i] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
                }
                memcpy(bytes + 2 * tile_face_offset(r, c0), h, sizeof h);
            }
        break;
    case LM_DATA_FORMAT_BFP8_B:
        bfp8_pack(in, bytes);
        break;
    case LM_DATA_FORMAT_INVALID:
        break;
    }
}

/* ---- matrices ---------------------------------------------------------------- */

void tile_tilize(const void *src, uint32_t rows, uint32_t cols, lm_data_format format, void *dst) {
    size_t tile_bytes = tile_format_size(format);
    if (!tile_bytes) return;
    const uint8_t *in = src;
    uint8_t *out = dst;
    float block[TILE_ELEMS];
    for (uint32_t tr = 0; tr < rows / TILE_DIM; tr++)
        for (uint32_t tc = 0; tc < cols / TILE_DIM; tc++) {
            for (uint32_t r = 0; r < TILE_DIM; r++) {
                size_t row = (size_t)tr * TILE_DIM + r;
                memcpy(block + r * TILE_DIM, in + 4 * (row * cols + (size_t)tc * TILE_DIM),
                       4 * TILE_DIM);
            }
            tile_pack(format, block, out);
            out += tile_bytes;
        }
}

void tile_untilize(const void *src, lm_data_format format, uint32_t rows, uint32_t cols,
                   void *dst) {
    size_t tile_bytes = tile_format_size(format);
    if (!tile_bytes) return;
    const uint8_t *in = src;
    uint8_t *out = dst;
    float block[TILE_ELEMS];
    for (uint32_t tr = 0; tr < rows / TILE_DIM; tr++)
        for (uint32_t tc = 0; tc < cols / TILE_DIM; tc++) {
            tile_unpack(format, in, block);
            in += tile_bytes;
            for (uint32_t r = 0; r < TILE_DIM; r++) {
                size_t row = (size_t)tr * TILE_DIM + r;
                memcpy(out + 4 * (row * cols + (size_t)tc * TILE_DIM), block + r * TILE_DIM,
                       4 * TILE_DIM);
            }
        }
}
