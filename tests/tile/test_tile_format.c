/* Data formats, tile layout and the public host helpers (lm_tile.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "lightmetal/lm_tile.h"
#include "lm_test.h"
#include "sim/tile/tile_format.h"

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

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* Uniform in [-range, range]. */
static float rng_float(float range) {
    return ((float)(rng_u32() & 0xffffff) / 8388608.0f - 1.0f) * range;
}

/* bfloat16 by a different route than the library: pick the nearer of the two
 * neighbouring bfloat16 values in double arithmetic, ties to the even one. */
static uint16_t ref_bf16(float x) {
    uint32_t u = f2u(x);
    if (isnan(x)) return (uint16_t)((u >> 16) | 0x40);
    uint16_t lo = (uint16_t)(u >> 16);
    uint16_t hi = (uint16_t)(lo + 1);
    double dl = fabs((double)u2f((uint32_t)lo << 16) - x);
    double dh = fabs((double)u2f((uint32_t)hi << 16) - x);
    if ((hi & 0x7f80) == 0x7f80 && (hi & 0x7f) == 0) { /* hi is Inf: its "value" for rounding */
        dh = fabs(ldexp(1.0, 128) - fabs((double)x));
    }
    if (dl < dh) return lo;
    if (dh < dl) return hi;
    return (lo & 1) ? hi : lo;
}

static void test_tile_sizes(void) {
    CHECK_EQ_U64(lm_tile_size(LM_DATA_FORMAT_FLOAT32), 4096);
    CHECK_EQ_U64(lm_tile_size(LM_DATA_FORMAT_FLOAT16_B), 2048);
    CHECK_EQ_U64(lm_tile_size(LM_DATA_FORMAT_BFP8_B), 1088);
    CHECK_EQ_U64(lm_tile_size(LM_DATA_FORMAT_UINT32), 4096);
    CHECK_EQ_U64(lm_tile_size(LM_DATA_FORMAT_INT32), 4096);
    CHECK_EQ_U64(lm_tile_size(LM_DATA_FORMAT_INVALID), 0);
    CHECK_EQ_U64(lm_tile_size((lm_data_format)77), 0);
    CHECK(strcmp(lm_data_format_name(LM_DATA_FORMAT_BFP8_B), "Bfp8_b") == 0);
    CHECK(strcmp(lm_data_format_name((lm_data_format)77), "Invalid") == 0);
}

static void test_bf16_known_values(void) {
    static const struct {
        uint32_t in;
        uint16_t out;
    } cases[] = {
        {0x3f800000, 0x3f80}, /* 1.0 */
        {0x3f808000, 0x3f80}, /* tie, even below */
        {0x3f818000, 0x3f82}, /* tie, even above */
        {0x3f808001, 0x3f81}, /* just above the tie */
        {0x3f807fff, 0x3f80}, /* just below the tie */
        {0x80000000, 0x8000}, /* -0 */
        {0x00000001, 0x0000}, /* smallest subnormal rounds to 0 */
        {0x007fffff, 0x0080}, /* largest subnormal rounds up to FLT_MIN */
        {0x7f800000, 0x7f80}, /* +Inf */
        {0xff800000, 0xff80}, /* -Inf */
        {0x7f7fffff, 0x7f80}, /* FLT_MAX overflows to Inf */
        {0x7f7f7fff, 0x7f7f}, /* ... but not just below the halfway point */
        {0x7f800001, 0x7fc0}, /* signalling NaN stays NaN (quieted) */
        {0xffc00000, 0xffc0}, /* negative quiet NaN keeps its sign */
        {0x7fffffff, 0x7fff}, /* NaN with all payload bits never becomes Inf */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float f = u2f(cases[i].in);
        uint16_t h;
        CHECK_OK(lm_float_to_bfloat16(&f, &h, 1));
        CHECK_EQ_U64(h, cases[i].out);
    }
}

static void test_bf16_random_and_roundtrip(void) {
    enum { N = 100000 };
    static float in[N];
    static uint16_t h[N];
    for (int i = 0; i < N; i++)
        in[i] = u2f(rng_u32() ^ (rng_u32() << 16));
    CHECK_OK(lm_float_to_bfloat16(in, h, N));
    for (int i = 0; i < N; i++)
        CHECK_EQ_U64(h[i], ref_bf16(in[i]));
    /* Every bfloat16 value converts to float and back unchanged (quiet NaNs too). */
    static uint16_t all[65536], again[65536];
    static float wide[65536];
    for (uint32_t i = 0; i < 65536; i++)
        all[i] = (uint16_t)i;
    CHECK_OK(lm_bfloat16_to_float(all, wide, 65536));
    CHECK_OK(lm_float_to_bfloat16(wide, again, 65536));
    for (uint32_t i = 0; i < 65536; i++) {
        CHECK_EQ_U64(f2u(wide[i]), i << 16);
        bool signalling = (i & 0x7f80) == 0x7f80 && (i & 0x7f) && !(i & 0x40);
        CHECK_EQ_U64(again[i], signalling ? (i | 0x40) : i);
    }
}

static void test_bf16_errors(void) {
    float f = 1.0f;
    uint16_t h = 0;
    CHECK_FAILS(lm_float_to_bfloat16(NULL, &h, 1), LM_ERR_INVALID_ARGUMENT,
                "lm_float_to_bfloat16: src is NULL");
    CHECK_FAILS(lm_float_to_bfloat16(&f, NULL, 1), LM_ERR_INVALID_ARGUMENT,
                "lm_float_to_bfloat16: dst is NULL");
    CHECK_FAILS(lm_bfloat16_to_float(NULL, &f, 1), LM_ERR_INVALID_ARGUMENT,
                "lm_bfloat16_to_float: src is NULL");
    CHECK_FAILS(lm_bfloat16_to_float(&h, NULL, 1), LM_ERR_INVALID_ARGUMENT,
                "lm_bfloat16_to_float: dst is NULL");
    CHECK_OK(lm_float_to_bfloat16(NULL, NULL, 0));
    CHECK_OK(lm_bfloat16_to_float(NULL, NULL, 0));
}

/* The face layout: element (r, c) of a 64 x 96 matrix, value r * 1000 + c. */
static void test_tilize_layout_float32(void) {
    enum { R = 64, C = 96, T = (R / 32) * (C / 32) };
    static float m[R * C], tiles[T * 1024], back[R * C];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            m[r * C + c] = (float)(r * 1000 + c);
    CHECK_OK(lm_tilize(m, R, C, LM_DATA_FORMAT_FLOAT32, tiles, sizeof tiles));
    /* Spot checks of the documented layout in tile (1, 2) = tile number 5. */
    const float *t5 = tiles + 5 * 1024;
    CHECK(t5[0] == 32 * 1000 + 64);             /* face 0 row 0 col 0 */
    CHECK(t5[1] == 32 * 1000 + 65);             /* row-major inside the face */
    CHECK(t5[16] == 33 * 1000 + 64);            /* face 0 row 1 */
    CHECK(t5[256] == 32 * 1000 + 64 + 16);      /* face 1 = rows 0-15, cols 16-31 */
    CHECK(t5[512] == 48 * 1000 + 64);           /* face 2 = rows 16-31, cols 0-15 */
    CHECK(t5[768 + 17] == 49 * 1000 + 64 + 17); /* face 3 row 1 col 1 */
    /* Every element, through the internal offset function. */
    for (int tr = 0; tr < R / 32; tr++)
        for (int tc = 0; tc < C / 32; tc++)
            for (uint32_t r = 0; r < 32; r++)
                for (uint32_t c = 0; c < 32; c++)
                    CHECK(tiles[(tr * (C / 32) + tc) * 1024 + tile_face_offset(r, c)] ==
                          m[(tr * 32 + r) * C + tc * 32 + c]);
    CHECK_OK(lm_untilize(tiles, sizeof tiles, LM_DATA_FORMAT_FLOAT32, R, C, back, sizeof back));
    CHECK(memcmp(m, back, sizeof m) == 0);
}

/* Integer and float32 formats travel bit for bit, NaN payloads included. */
static void test_tilize_roundtrip_raw_formats(void) {
    static uint32_t m[32 * 64], tiles[2 * 1024], back[32 * 64];
    for (int i = 0; i < 32 * 64; i++)
        m[i] = rng_u32() ^ (rng_u32() << 16);
    m[0] = 0x7f800001;
    m[1] = 0xffffffff;
    const lm_data_format fmts[] = {LM_DATA_FORMAT_FLOAT32, LM_DATA_FORMAT_UINT32,
                                   LM_DATA_FORMAT_INT32};
    for (int f = 0; f < 3; f++) {
        CHECK_OK(lm_tilize(m, 32, 64, fmts[f], tiles, sizeof tiles));
        memset(back, 0, sizeof back);
        CHECK_OK(lm_untilize(tiles, sizeof tiles, fmts[f], 32, 64, back, sizeof back));
        CHECK(memcmp(m, back, sizeof m) == 0);
    }
}

static void test_tilize_bf16(void) {
    static float m[64 * 32], back[64 * 32];
    static uint16_t tiles[2 * 1024];
    for (int i = 0; i < 64 * 32; i++)
        m[i] = rng_float(1000.0f);
    m[5] = NAN;
    m[6] = -INFINITY;
    CHECK_OK(lm_tilize(m, 64, 32, LM_DATA_FORMAT_FLOAT16_B, tiles, sizeof tiles));
    /* Element (33, 17) is in tile 1 at row 1, col 17: face 1, row 1, col 1. */
    CHECK_EQ_U64(tiles[1024 + 256 + 16 + 1], ref_bf16(m[33 * 32 + 17]));
    CHECK_OK(lm_untilize(tiles, sizeof tiles, LM_DATA_FORMAT_FLOAT16_B, 64, 32, back, sizeof back));
    for (int i = 0; i < 64 * 32; i++)
        CHECK_EQ_U64(f2u(back[i]), (uint32_t)ref_bf16(m[i]) << 16);
}

/* Writes one face row of a tile (working form) and packs it as Bfp8_b. */
static void pack_row(int face, int row, const float *vals, uint8_t *out) {
    float t[1024] = {0};
    int r = (face / 2) * 16 + row, c0 = (face % 2) * 16;
    for (int i = 0; i < 16; i++)
        t[r * 32 + c0 + i] = vals[i];
    tile_pack(LM_DATA_FORMAT_BFP8_B, t, out);
}

static void test_bfp8_packing_rules(void) {
    uint8_t b[1088];
    float v[16] = {1.0f,        0.5f,        0.25f,         -1.0f,        1.5f,   1.9921875f,
                   1.0078125f,  1.01171875f, 0.0f,          -0.0f,        1e-40f, 1.99609375f,
                   0.00390625f, 0.00390625f, 0.0029296875f, -0.001953125f};
    pack_row(2, 3, v, b);
    /* face 2 row 3: exponent byte 2 * 16 + 3, mantissas at 64 + (2 * 16 + 3) * 16 */
    CHECK_EQ_U64(b[35], 127);
    const uint8_t *m = b + 64 + 35 * 16;
    CHECK_EQ_U64(m[0], 64);        /* 1.0 */
    CHECK_EQ_U64(m[1], 32);        /* 0.5 */
    CHECK_EQ_U64(m[2], 16);        /* 0.25 */
    CHECK_EQ_U64(m[3], 0x80 | 64); /* -1.0 */
    CHECK_EQ_U64(m[4], 96);        /* 1.5 */
    CHECK_EQ_U64(m[5], 127);       /* 1 + 127/128 rounds to 128: saturates at 127 */
    CHECK_EQ_U64(m[6], 65);        /* 1 + 1/128: exactly half a unit, rounds up */
    CHECK_EQ_U64(m[7], 65);        /* 1 + 1.5/128: 64.75 rounds to 65 */
    CHECK_EQ_U64(m[8], 0);         /* +0 */
    CHECK_EQ_U64(m[9], 0);         /* -0 packs as +0 */
    CHECK_EQ_U64(m[10], 0);        /* subnormal flushed */
    CHECK_EQ_U64(m[11], 127);      /* 1.99609375 saturates */
    CHECK_EQ_U64(m[12], 0);        /* 2^-8 is 0.25 unit: rounds to 0 */
    CHECK_EQ_U64(m[14], 0);        /* 0.1875 unit: rounds to 0 */
    CHECK_EQ_U64(m[15], 0);        /* -2^-9: 0 without a sign */
    /* Every other row of the tile is zero with exponent 0. */
    for (int i = 0; i < 64; i++)
        if (i != 35) CHECK_EQ_U64(b[i], 0);
    float out[1024];
    tile_unpack(LM_DATA_FORMAT_BFP8_B, b, out);
    const float *row = out + 19 * 32;
    CHECK(row[0] == 1.0f && row[3] == -1.0f && row[4] == 1.5f && row[5] == 1.984375f);
    CHECK(row[6] == 1.015625f && f2u(row[9]) == 0 && row[12] == 0.0f);

    /* A row whose largest value is 2^-6 times another row's: exponents are per row. */
    float w[16];
    for (int i = 0; i < 16; i++)
        w[i] = (float)(i + 1) * 0.015625f;
    pack_row(1, 0, w, b);
    CHECK_EQ_U64(b[16], 127 - 6 + 4); /* max is 16 / 64 = 2^-2 */
    CHECK_EQ_U64(b[64 + 16 * 16], 4); /* 1/64 at exponent -2: 1/16 of 64 */
}

static void test_bfp8_specials(void) {
    uint8_t b[1088];
    float v[16] = {INFINITY, 1.0f, -INFINITY, NAN, 1e30f, 0};
    pack_row(0, 0, v, b);
    CHECK_EQ_U64(b[0], 255);
    float out[1024];
    tile_unpack(LM_DATA_FORMAT_BFP8_B, b, out);
    CHECK(out[0] == INFINITY);
    CHECK(out[1] == 0.0f); /* finite values next to Inf flush to 0 */
    CHECK(out[2] == -INFINITY);
    CHECK(isnan(out[3]));
    CHECK(out[4] == 0.0f); /* 2^99.7 at shared exponent 255: far below one unit */
    /* A row with a value at exponent 254 and a smaller one next to an Inf. */
    float w[16] = {INFINITY, 2e38f};
    pack_row(0, 0, w, b);
    tile_unpack(LM_DATA_FORMAT_BFP8_B, b, out);
    CHECK(out[0] == INFINITY && out[1] > 1.9e38f && out[1] < 2.1e38f);
}

/* Decoding follows (-1)^s * m * 2^(e - 133) for every byte and exponent
 * (Inf/NaN only at e = 255 with m >= 64), subnormal results included. */
static void test_bfp8_decode_all(void) {
    static const uint32_t exps[] = {0, 1, 5, 6, 7, 100, 127, 200, 254, 255};
    uint8_t b[1088];
    float out[1024];
    for (size_t e = 0; e < sizeof exps / sizeof exps[0]; e++) {
        memset(b, (int)exps[e], 64);
        for (int i = 0; i < 1024; i++)
            b[64 + i] = (uint8_t)i;
        tile_unpack(LM_DATA_FORMAT_BFP8_B, b, out);
        for (int i = 0; i < 256; i++) {
            int m = i & 0x7f;
            /* byte i sits at face 0, row i / 16, col i % 16 */
            float got = out[(i / 16) * 32 + i % 16];
            if (exps[e] == 255 && m >= 64) {
                CHECK(m == 64 ? isinf(got) : isnan(got));
                CHECK(!!signbit(got) == (i >= 128));
                continue;
            }
            double want = ldexp((double)m, (int)exps[e] - 133) * ((i & 0x80) && m ? -1 : 1);
            CHECK((double)got == want);
        }
    }
}

/* Random tiles: decode(encode(x)) is within one output unit of the row. */
static void test_bfp8_roundtrip_error(void) {
    static float m[64 * 64], back[64 * 64];
    static uint8_t tiles[4 * 1088];
    for (int rep = 0; rep < 20; rep++) {
        float scale = ldexpf(1.0f, (int)(rng_u32() % 200) - 100);
        for (int i = 0; i < 64 * 64; i++)
            m[i] = rng_float(scale);
        CHECK_OK(lm_tilize(m, 64, 64, LM_DATA_FORMAT_BFP8_B, tiles, sizeof tiles));
        CHECK_OK(
            lm_untilize(tiles, sizeof tiles, LM_DATA_FORMAT_BFP8_B, 64, 64, back, sizeof back));
        for (int r = 0; r < 64; r++)
            for (int c0 = 0; c0 < 64; c0 += 16) {
                double maxabs = 0;
                for (int i = 0; i < 16; i++)
                    maxabs = fmax(maxabs, fabs(m[r * 64 + c0 + i]));
                int e;
                frexp(maxabs, &e); /* maxabs in [2^(e-1), 2^e) */
                double unit = ldexp(1.0, e - 1 - 6);
                for (int i = 0; i < 16; i++) {
                    double err = fabs((double)back[r * 64 + c0 + i] - m[r * 64 + c0 + i]);
                    CHECK(err <= unit);
                }
            }
    }
}

static void test_tilize_errors(void) {
    static float m[32 * 32], t[1024];
    const lm_status E = LM_ERR_INVALID_ARGUMENT;
    CHECK_FAILS(lm_tilize(NULL, 32, 32, LM_DATA_FORMAT_FLOAT32, t, sizeof t), E,
                "lm_tilize: src is NULL");
    CHECK_FAILS(lm_tilize(m, 32, 32, LM_DATA_FORMAT_FLOAT32, NULL, sizeof t), E,
                "lm_tilize: dst is NULL");
    CHECK_FAILS(lm_tilize(m, 0, 32, LM_DATA_FORMAT_FLOAT32, t, sizeof t), E,
                "rows 0 is not a nonzero multiple of 32");
    CHECK_FAILS(lm_tilize(m, 33, 32, LM_DATA_FORMAT_FLOAT32, t, sizeof t), E,
                "rows 33 is not a nonzero multiple of 32");
    CHECK_FAILS(lm_tilize(m, 32, 48, LM_DATA_FORMAT_FLOAT32, t, sizeof t), E,
                "cols 48 is not a nonzero multiple of 32");
    CHECK_FAILS(lm_tilize(m, 32, 32, LM_DATA_FORMAT_INVALID, t, sizeof t), E,
                "lm_tilize: unknown data format 0");
    CHECK_FAILS(lm_tilize(m, 32, 32, (lm_data_format)99, t, sizeof t), E, "unknown data format 99");
    CHECK_FAILS(lm_tilize(m, 32, 32, LM_DATA_FORMAT_FLOAT32, t, sizeof t - 1), E,
                "dst_size 4095 is smaller than the 4096 bytes of 32 x 32 in Float32");
    CHECK_FAILS(lm_tilize(m, 0xffffffe0u, 0xffffffe0u, LM_DATA_FORMAT_FLOAT32, t, sizeof t), E,
                "overflows");
    CHECK_OK(lm_tilize(m, 32, 32, LM_DATA_FORMAT_BFP8_B, t, 1088));

    CHECK_FAILS(lm_untilize(NULL, sizeof t, LM_DATA_FORMAT_FLOAT32, 32, 32, m, sizeof m), E,
                "lm_untilize: src is NULL");
    CHECK_FAILS(lm_untilize(t, sizeof t, LM_DATA_FORMAT_FLOAT32, 32, 32, NULL, sizeof m), E,
                "lm_untilize: dst is NULL");
    CHECK_FAILS(lm_untilize(t, sizeof t, LM_DATA_FORMAT_FLOAT32, 64, 32, m, sizeof m), E,
                "src_size 4096 is smaller than the 8192 bytes");
    CHECK_FAILS(lm_untilize(t, sizeof t, LM_DATA_FORMAT_BFP8_B, 32, 32, m, 100), E,
                "dst_size 100 is smaller than the 4096 bytes of a 32 x 32 matrix");
    CHECK_FAILS(lm_untilize(t, sizeof t, (lm_data_format)6, 32, 32, m, sizeof m), E,
                "lm_untilize: unknown data format 6");
    CHECK_FAILS(lm_untilize(t, sizeof t, LM_DATA_FORMAT_INT32, 32, 1, m, sizeof m), E,
                "cols 1 is not a nonzero multiple of 32");
    CHECK_FAILS(
        lm_untilize(t, sizeof t, LM_DATA_FORMAT_INT32, 0xffffffe0u, 0xffffffe0u, m, sizeof m), E,
        "overflows");
}

int main(void) {
    TEST_RUN(test_tile_sizes);
    TEST_RUN(test_bf16_known_values);
    TEST_RUN(test_bf16_random_and_roundtrip);
    TEST_RUN(test_bf16_errors);
    TEST_RUN(test_tilize_layout_float32);
    TEST_RUN(test_tilize_roundtrip_raw_formats);
    TEST_RUN(test_tilize_bf16);
    TEST_RUN(test_bfp8_packing_rules);
    TEST_RUN(test_bfp8_specials);
    TEST_RUN(test_bfp8_decode_all);
    TEST_RUN(test_bfp8_roundtrip_error);
    TEST_RUN(test_tilize_errors);
    return test_summary();
}
