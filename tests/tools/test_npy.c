/* The .npy reader and writer of the lightmetal tool (tools/lmt_npy.c):
 * valid files of every version and dtype, the writer's output read back,
 * and one hostile file per way a header or its data can be wrong, each
 * refused with a precise message. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lm_test.h"
#include "lmt_npy.h"

/* A file: magic, version major.0, the header length in the version's field,
 * `header`, then `data_len` bytes 0, 1, 2, ... */
static size_t make(uint8_t *out, size_t cap, unsigned major, const char *header, size_t data_len) {
    size_t hl = strlen(header), pre = major == 1 ? 10 : 12;
    if (pre + hl + data_len > cap) return 0;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (uint8_t)major;
    out[7] = 0;
    out[8] = (uint8_t)hl;
    out[9] = (uint8_t)(hl >> 8);
    if (major != 1) out[10] = out[11] = 0;
    memcpy(out + pre, header, hl);
    for (size_t i = 0; i < data_len; i++)
        out[pre + hl + i] = (uint8_t)i;
    return pre + hl + data_len;
}

static uint8_t buf[1 << 16];

/* Parses a v1.0 file with `header` and `data_len` bytes of data. */
static lm_status parse1(const char *header, size_t data_len, lmt_npy *out) {
    size_t n = make(buf, sizeof buf, 1, header, data_len);
    return lmt_npy_parse(buf, n, out);
}

#define HDR(descr, fortran, shape)                                                                 \
    "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }\n"

static void test_valid_versions(void) {
    lmt_npy a;
    for (unsigned major = 1; major <= 3; major++) {
        size_t n = make(buf, sizeof buf, major, HDR("<f4", "False", "(2, 3)"), 24);
        CHECK(n > 0);
        memset(&a, 0, sizeof a);
        CHECK_OK(lmt_npy_parse(buf, n, &a));
        CHECK(a.dtype == LMT_NPY_F4);
        CHECK_EQ_U64(a.rank, 2);
        CHECK_EQ_U64(a.shape[0], 2);
        CHECK_EQ_U64(a.shape[1], 3);
        CHECK_EQ_U64(a.count, 6);
        CHECK_EQ_U64(a.data_size, 24);
        CHECK((const uint8_t *)a.data == buf + n - 24);
    }
}

static void test_valid_dtypes_and_spellings(void) {
    static const struct {
        const char *header;
        lmt_npy_dtype dtype;
        uint32_t rank;
        uint64_t count;
    } cases[] = {
        {HDR("<u4", "False", "(4,)"), LMT_NPY_U4, 1, 4},
        {HDR("<i4", "False", "(1, 1, 4)"), LMT_NPY_I4, 3, 4},
        {HDR("<u2", "False", "(8,)"), LMT_NPY_U2, 1, 8},
        {HDR("|u1", "False", "(16,)"), LMT_NPY_U1, 1, 16},
        {HDR("|u1", "False", "()"), LMT_NPY_U1, 0, 1},     /* a scalar */
        {HDR("<f4", "False", "(0, 5)"), LMT_NPY_F4, 2, 0}, /* empty */
        {HDR("<f8", "False", "(3,)"), LMT_NPY_F8, 1, 3},
        {HDR("<f2", "False", "(3,)"), LMT_NPY_F2, 1, 3},
        {HDR("<i8", "False", "(2, 2)"), LMT_NPY_I8, 2, 4},
        {HDR("<u8", "False", "(2,)"), LMT_NPY_U8, 1, 2},
        {HDR("<i2", "False", "(2,)"), LMT_NPY_I2, 1, 2},
        {HDR("|i1", "False", "(5,)"), LMT_NPY_I1, 1, 5},
        {HDR("|b1", "False", "(7,)"), LMT_NPY_B1, 1, 7},
        /* Key order, double quotes, no trailing comma, spaces and tabs. */
        {"{ \"shape\" :( 2 ,2 ,) ,\t'descr':\"<u2\",'fortran_order':False}", LMT_NPY_U2, 2, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lmt_npy a;
        unsigned esize = lmt_npy_dtype_size(cases[i].dtype);
        CHECK_OK(parse1(cases[i].header, (size_t)cases[i].count * esize, &a));
        CHECK(a.dtype == cases[i].dtype);
        CHECK_EQ_U64(a.rank, cases[i].rank);
        CHECK_EQ_U64(a.count, cases[i].count);
    }
}

static void test_writer_reads_back(void) {
    char h[LMT_NPY_HEADER_MAX];
    uint64_t shape[2] = {32, 32};
    size_t n = lmt_npy_header(LMT_NPY_U4, 2, shape, h);
    CHECK(n > 0);
    CHECK_EQ_U64(n % 64, 0); /* numpy's alignment of the data */
    CHECK(h[n - 1] == '\n');
    CHECK(!memcmp(h + 10, "{'descr': '<u4', 'fortran_order': False, 'shape': (32, 32), }", 61));
    memcpy(buf, h, n);
    memset(buf + n, 7, 4096);
    lmt_npy a;
    CHECK_OK(lmt_npy_parse(buf, n + 4096, &a));
    CHECK(a.dtype == LMT_NPY_U4);
    CHECK_EQ_U64(a.rank, 2);
    CHECK_EQ_U64(a.shape[1], 32);
    CHECK_EQ_U64(a.data_size, 4096);

    uint64_t one = 5;
    n = lmt_npy_header(LMT_NPY_U2, 1, &one, h);
    CHECK(n > 0 && n % 64 == 0);
    CHECK(strstr(h + 10, "'shape': (5,), }") != NULL);
    uint64_t big[LMT_NPY_MAX_RANK];
    for (int i = 0; i < LMT_NPY_MAX_RANK; i++)
        big[i] = UINT64_MAX;
    n = lmt_npy_header(LMT_NPY_F4, LMT_NPY_MAX_RANK, big, h); /* the longest header */
    CHECK(n > 0 && n <= LMT_NPY_HEADER_MAX && n % 64 == 0);
    CHECK_EQ_U64(lmt_npy_header(LMT_NPY_INVALID, 1, &one, h), 0);
    CHECK_EQ_U64(lmt_npy_header(LMT_NPY_F4, LMT_NPY_MAX_RANK + 1, big, h), 0);
}

static void test_format_shape(void) {
    char s[32];
    uint64_t shape[3] = {2, 3, 400000};
    lmt_npy_format_shape(0, shape, s, sizeof s);
    CHECK(!strcmp(s, "()"));
    lmt_npy_format_shape(1, shape, s, sizeof s);
    CHECK(!strcmp(s, "(2,)"));
    lmt_npy_format_shape(3, shape, s, sizeof s);
    CHECK(!strcmp(s, "(2, 3, 400000)"));
    lmt_npy_format_shape(3, shape, s, 10);
    CHECK(!strcmp(s, "(2, 3,..."));
}

/* The preamble: magic, version, header length. */
static void test_bad_preamble(void) {
    lmt_npy a;
    CHECK_FAILS(lmt_npy_parse("", 0, &a), LM_ERR_INVALID_FILE, "not a .npy file");
    CHECK_FAILS(lmt_npy_parse("PK\3\4 zip file", 14, &a), LM_ERR_INVALID_FILE,
                "not a .npy file (it does not start with the \\x93NUMPY magic)");
    CHECK_FAILS(lmt_npy_parse("\x93NUM", 4, &a), LM_ERR_INVALID_FILE,
                "truncated .npy file: 4 bytes, ends before the format version");
    CHECK_FAILS(lmt_npy_parse("\x93NUMPY\x01", 7, &a), LM_ERR_INVALID_FILE,
                "truncated .npy file: 7 bytes, ends before the format version");
    CHECK_FAILS(lmt_npy_parse("\x93NUMPY\x04\x00\x10\x00", 10, &a), LM_ERR_INVALID_FILE,
                "unsupported .npy format version 4.0 (1.0, 2.0 and 3.0 are read)");
    CHECK_FAILS(lmt_npy_parse("\x93NUMPY\x01\x01\x10\x00", 10, &a), LM_ERR_INVALID_FILE,
                "unsupported .npy format version 1.1");
    CHECK_FAILS(lmt_npy_parse("\x93NUMPY\x00\x00\x10\x00", 10, &a), LM_ERR_INVALID_FILE,
                "unsupported .npy format version 0.0");
    CHECK_FAILS(lmt_npy_parse("\x93NUMPY\x01\x00\x10", 9, &a), LM_ERR_INVALID_FILE,
                "truncated .npy file: 9 bytes, ends inside the header length");
    CHECK_FAILS(lmt_npy_parse("\x93NUMPY\x02\x00\x10\x00\x00", 11, &a), LM_ERR_INVALID_FILE,
                "truncated .npy file: 11 bytes, ends inside the header length");
    /* A header length beyond the file (v1: 16-bit, v2: 32-bit field). */
    size_t n = make(buf, sizeof buf, 1, HDR("<f4", "False", "(1,)"), 4);
    buf[9] = 0x40;
    CHECK_FAILS(lmt_npy_parse(buf, n, &a), LM_ERR_INVALID_FILE,
                "the .npy header length (16442 bytes) runs past the end of the file (62 bytes "
                "follow the 10-byte preamble)");
    n = make(buf, sizeof buf, 2, HDR("<f4", "False", "(1,)"), 4);
    buf[11] = 0xff;
    CHECK_FAILS(lmt_npy_parse(buf, n, &a), LM_ERR_INVALID_FILE,
                "the .npy header length (4278190138 bytes) runs past the end of the file");
    /* A header cut short: the file ends inside the dictionary. */
    n = make(buf, sizeof buf, 1, HDR("<f4", "False", "(1,)"), 0);
    CHECK_FAILS(lmt_npy_parse(buf, n - 30, &a), LM_ERR_INVALID_FILE, "runs past the end");
}

/* Header dictionaries numpy would not have written. */
static void test_malformed_dicts(void) {
    static const struct {
        const char *header, *needle;
    } cases[] = {
        {"", "expected '{' at the start of the header, found the end of the header"},
        {"descr", "expected '{' at the start of the header, found 'd' (header byte 0)"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
         "expected ',' or '}' after the value of 'shape', found the end of the header"},
        {"{'descr' '<f4'}", "expected ':' after a key, found '''"},
        {"{descr: '<f4'}", "expected a quoted string for a key, found 'd'"},
        {"{'descr': '<f4, 'fortran_order': False}",
         "expected ',' or '}' after the value of 'descr', found 'f'"},
        {"{'descr': '<f4", "unterminated string in 'descr'"},
        {"{'descr': '<\\x66'}", "'\\' in 'descr' (only plain ASCII strings are read)"},
        {"{'descr': '<f\xc3\xa4'}", "byte 0xc3 in 'descr'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
         "unknown key 'extra' (only 'descr', 'fortran_order' and 'shape')"},
        {"{'descr': '<f4', 'descr': '<f4'}", "key 'descr' appears twice (header byte 17)"},
        {"{'descr': '<f4', 'shape': (1,)}", "no 'fortran_order' key"},
        {"{'fortran_order': False, 'shape': (1,)}", "no 'descr' key"},
        {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
         "'descr' is a list: structured dtypes are not supported"},
        {"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
         "expected True or False for 'fortran_order', found '0'"},
        {"{'descr': '<f4', 'fortran_order': Falsehood, 'shape': (1,)}",
         "expected True or False for 'fortran_order', found 'F'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': 3}",
         "expected '(' to start 'shape', found '3'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [3]}",
         "expected '(' to start 'shape', found '['"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3)}",
         "'shape' (3) is not a tuple (a 1-D shape is (3,))"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}",
         "expected a dimension (a non-negative integer) in 'shape', found '-'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}",
         "expected a dimension (a non-negative integer) in 'shape', found ','"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}",
         "expected ',' or ')' in 'shape', found '3'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3.0,)}",
         "expected ',' or ')' in 'shape', found '.'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (03,)}",
         "dimension 0 of 'shape' has a leading zero"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 18446744073709551616)}",
         "dimension 1 of 'shape' does not fit in 64 bits"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
         "unexpected 'x' after the dictionary"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n\0",
         "unexpected byte 0x00 after the dictionary"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lmt_npy a;
        /* The NUL case: the header is one byte longer than strlen says. */
        size_t n = make(buf, sizeof buf, 1, cases[i].header, 0);
        if (strstr(cases[i].needle, "0x00")) {
            buf[8]++;
            buf[n++] = 0;
        }
        CHECK_FAILS(lmt_npy_parse(buf, n, &a), LM_ERR_INVALID_FILE, cases[i].needle);
        CHECK_ERROR_HAS("malformed .npy header: ");
    }
    /* 65 dimensions. */
    char many[512] = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
    for (int i = 0; i < 65; i++)
        strcat(many, "1, ");
    strcat(many, ")}");
    lmt_npy a;
    CHECK_FAILS(parse1(many, 4, &a), LM_ERR_INVALID_FILE, "'shape' has more than 64 dimensions");
}

static void test_unsupported_arrays(void) {
    lmt_npy a;
    CHECK_FAILS(parse1(HDR("<f4", "True", "(2, 2)"), 16, &a), LM_ERR_INVALID_FILE,
                "'fortran_order': True is not supported (save a C-order array, e.g. "
                "numpy.ascontiguousarray(a))");
    CHECK_FAILS(parse1(HDR(">f4", "False", "(2,)"), 8, &a), LM_ERR_INVALID_FILE,
                "big-endian dtype '>f4' is not supported (save little-endian data, e.g. "
                "a.astype('<f4'))");
    CHECK_FAILS(parse1(HDR(">u2", "False", "(2,)"), 4, &a), LM_ERR_INVALID_FILE,
                "big-endian dtype '>u2'");
    static const char *unknown[] = {"<u1", "<b1", "<i1", "<f16", "|u2", "<c8", "O", ""};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        char h[128], needle[64];
        snprintf(h, sizeof h, "{'descr': '%s', 'fortran_order': False, 'shape': (1,)}", unknown[i]);
        snprintf(needle, sizeof needle, "unsupported dtype '%s' (supported: '<f4'", unknown[i]);
        CHECK_FAILS(parse1(h, 8, &a), LM_ERR_INVALID_FILE, needle);
    }
}

static void test_shape_and_data_sizes(void) {
    lmt_npy a;
    CHECK_FAILS(parse1(HDR("<f4", "False", "(4294967296, 4294967296)"), 0, &a), LM_ERR_INVALID_FILE,
                "shape (4294967296, 4294967296) has more than 2^64 elements");
    CHECK_FAILS(parse1(HDR("<f4", "False", "(4611686018427387904,)"), 0, &a), LM_ERR_INVALID_FILE,
                "shape (4611686018427387904,) of '<f4' needs more than 2^64 bytes");
    /* A zero dimension makes the array empty whatever the others say. */
    CHECK_OK(parse1(HDR("<f4", "False", "(4294967296, 4294967296, 0)"), 0, &a));
    CHECK_EQ_U64(a.count, 0);
    CHECK_FAILS(parse1(HDR("<f4", "False", "(2, 3)"), 23, &a), LM_ERR_INVALID_FILE,
                "truncated .npy data: 23 bytes, shape (2, 3) of '<f4' needs 24");
    CHECK_FAILS(parse1(HDR("<f4", "False", "(2, 3)"), 0, &a), LM_ERR_INVALID_FILE,
                "truncated .npy data: 0 bytes, shape (2, 3) of '<f4' needs 24");
    CHECK_FAILS(parse1(HDR("<u2", "False", "(2, 3)"), 13, &a), LM_ERR_INVALID_FILE,
                "1 bytes after the .npy data (shape (2, 3) of '<u2' is 12 bytes, the file holds "
                "13)");
    CHECK_FAILS(parse1(HDR("|u1", "False", "()"), 0, &a), LM_ERR_INVALID_FILE,
                "truncated .npy data: 0 bytes, shape () of '|u1' needs 1");
}

/* Every prefix of a valid file is refused, none crashes (run under the
 * sanitizers by `make test-asan`). */
static void test_every_prefix(void) {
    size_t n = make(buf, sizeof buf, 2, HDR("<i4", "False", "(3, 5)"), 60);
    for (size_t len = 0; len < n; len++) {
        lmt_npy a;
        CHECK_STATUS(lmt_npy_parse(buf, len, &a), LM_ERR_INVALID_FILE);
    }
    lmt_npy a;
    CHECK_OK(lmt_npy_parse(buf, n, &a));
}

/* Random byte changes to a valid file (a fixed seed): each result is a
 * refusal, or an array that lies inside the bytes given. Under the
 * sanitizers this also shows that no input reads out of bounds. */
static void test_mutations(void) {
    static uint8_t orig[256], m[256];
    size_t n = make(orig, sizeof orig, 1, HDR("<u2", "False", "(2, 3)"), 12);
    uint32_t x = 12345;
    for (int round = 0; round < 50000; round++) {
        memcpy(m, orig, n);
        for (int k = 0; k < 1 + round % 4; k++) {
            x = x * 1664525u + 1013904223u;
            m[(x >> 8) % n] = (uint8_t)(x >> 24);
        }
        x = x * 1664525u + 1013904223u;
        size_t len = round % 3 ? n : (x >> 8) % (n + 1);
        lmt_npy a;
        lm_status st = lmt_npy_parse(m, len, &a);
        if (st == LM_OK) {
            const uint8_t *d = a.data;
            CHECK(d >= m && d + a.data_size == m + len);
            CHECK_EQ_U64(a.data_size, a.count * lmt_npy_dtype_size(a.dtype));
        } else {
            CHECK_STATUS(st, LM_ERR_INVALID_FILE);
        }
    }
}

static uint32_t f32_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* binary16 <-> binary32: every half survives the round trip; rounding,
 * subnormals, overflow and NaN at the edges. */
static void test_half_conversions(void) {
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint32_t f = lmt_half_to_float_bits((uint16_t)h);
        bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
        if (nan)
            CHECK((f & 0x7f800000u) == 0x7f800000u && (f & 0x7fffffu));
        else
            CHECK_EQ_U64(lmt_float_bits_to_half(f), h);
    }
    CHECK_EQ_U64(lmt_half_to_float_bits(0x3c00), f32_bits(1.0f));
    CHECK_EQ_U64(lmt_half_to_float_bits(0x0001), f32_bits(0x1p-24f)); /* smallest subnormal */
    CHECK_EQ_U64(lmt_half_to_float_bits(0x03ff), f32_bits(1023 * 0x1p-24f));
    CHECK_EQ_U64(lmt_half_to_float_bits(0x7bff), f32_bits(65504.0f));
    CHECK_EQ_U64(lmt_half_to_float_bits(0xfc00), f32_bits(-INFINITY));
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(65519.0f)), 0x7bff);
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(65520.0f)), 0x7c00); /* tie: to even = Inf */
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(-1e10f)), 0xfc00);
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(0x1p-25f)), 0x0000);     /* tie: to even 0 */
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(3 * 0x1p-25f)), 0x0002); /* tie: to even 2 */
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(0x1.000002p-25f)), 0x0001);
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(1e-30f)), 0x0000);
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(-0.0f)), 0x8000);
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(1.0f + 0x1p-11f)), 0x3c00); /* tie: even */
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(1.0f + 3 * 0x1p-11f)), 0x3c02);
    CHECK_EQ_U64(lmt_float_bits_to_half(f32_bits(0x1.ffep-15f)), 0x0400); /* rounds to normal */
    CHECK_EQ_U64(lmt_float_bits_to_half(0x7fc00001u) & 0x7e00u, 0x7e00);  /* NaN stays NaN */
}

/* Element types to storage and back: ranges are checked on the way in,
 * never wrapped. */
static void test_storage_conversions(void) {
    int64_t i8[4] = {-2147483648LL, 2147483647LL, 0, -1};
    int32_t w[4];
    CHECK_OK(lmt_npy_to_storage(LMT_NPY_I8, i8, 4, LM_DATA_FORMAT_INT32, w));
    CHECK(w[0] == INT32_MIN && w[1] == INT32_MAX && w[3] == -1);
    int64_t back[4];
    CHECK(lmt_npy_from_storage(LM_DATA_FORMAT_INT32, w, 4, LMT_NPY_I8, back));
    CHECK(!memcmp(back, i8, sizeof i8));
    i8[2] = 2147483648LL;
    CHECK_FAILS(lmt_npy_to_storage(LMT_NPY_I8, i8, 4, LM_DATA_FORMAT_INT32, w), LM_ERR_INVALID_FILE,
                "element 2 is 2147483648, outside the Int32 range -2147483648..2147483647");
    uint64_t u8[2] = {4294967295ULL, 4294967296ULL};
    CHECK_FAILS(lmt_npy_to_storage(LMT_NPY_U8, u8, 2, LM_DATA_FORMAT_UINT32, w),
                LM_ERR_INVALID_FILE, "element 1 is 4294967296, outside the UInt32 range");
    int8_t s1[2] = {5, -3};
    CHECK_FAILS(lmt_npy_to_storage(LMT_NPY_I1, s1, 2, LM_DATA_FORMAT_UINT32, w),
                LM_ERR_INVALID_FILE, "element 1 is -3, outside the UInt32 range 0..4294967295");
    uint8_t b1[3] = {1, 0, 2};
    CHECK_FAILS(lmt_npy_to_storage(LMT_NPY_B1, b1, 3, LM_DATA_FORMAT_INT32, w), LM_ERR_INVALID_FILE,
                "element 2 is byte 2, not a bool (0 or 1)");
    CHECK_FAILS(lmt_npy_to_storage(LMT_NPY_F8, i8, 1, LM_DATA_FORMAT_INT32, w),
                LM_ERR_INVALID_ARGUMENT, "dtype '<f8' does not convert");
    /* Outputs: bool is nonzero, narrow types wrap, float16 rounds. */
    int32_t got[3] = {0, -7, 300};
    uint8_t bo[3], u1[3];
    int16_t i2[3];
    CHECK(lmt_npy_from_storage(LM_DATA_FORMAT_INT32, got, 3, LMT_NPY_B1, bo));
    CHECK(bo[0] == 0 && bo[1] == 1 && bo[2] == 1);
    CHECK(lmt_npy_from_storage(LM_DATA_FORMAT_INT32, got, 3, LMT_NPY_U1, u1));
    CHECK(u1[1] == 249 && u1[2] == 44);
    CHECK(lmt_npy_from_storage(LM_DATA_FORMAT_INT32, got, 3, LMT_NPY_I2, i2));
    CHECK(i2[1] == -7 && i2[2] == 300);
    float f[2] = {0.1f, 1e6f};
    double d[2];
    uint16_t h[2];
    CHECK(lmt_npy_from_storage(LM_DATA_FORMAT_FLOAT32, f, 2, LMT_NPY_F8, d));
    CHECK(d[0] == (double)0.1f && d[1] == 1e6);
    CHECK(lmt_npy_from_storage(LM_DATA_FORMAT_FLOAT32, f, 2, LMT_NPY_F2, h));
    CHECK(h[0] == 0x2e66 && h[1] == 0x7c00);
    double in[2] = {0.1, 1e300};
    float out[2];
    CHECK_OK(lmt_npy_to_storage(LMT_NPY_F8, in, 2, LM_DATA_FORMAT_FLOAT32, out));
    CHECK(out[0] == 0.1f && isinf(out[1]));
    CHECK(!lmt_npy_from_storage(LM_DATA_FORMAT_FLOAT32, f, 2, LMT_NPY_I8, d));
    CHECK(!lmt_npy_from_storage(LM_DATA_FORMAT_FLOAT16_B, f, 2, LMT_NPY_F8, d));
}

int main(void) {
    TEST_RUN(test_valid_versions);
    TEST_RUN(test_valid_dtypes_and_spellings);
    TEST_RUN(test_writer_reads_back);
    TEST_RUN(test_format_shape);
    TEST_RUN(test_bad_preamble);
    TEST_RUN(test_malformed_dicts);
    TEST_RUN(test_unsupported_arrays);
    TEST_RUN(test_shape_and_data_sizes);
    TEST_RUN(test_every_prefix);
    TEST_RUN(test_mutations);
    TEST_RUN(test_half_conversions);
    TEST_RUN(test_storage_conversions);
    return test_summary();
}
