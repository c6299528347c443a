#include "lmt_npy.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

/* "\x93NUMPY", then major and minor version bytes, then the header length
 * (2 bytes little-endian in 1.0, 4 bytes in 2.0 and 3.0). */
static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static const struct {
    lmt_npy_dtype dtype;
    const char *descr;
    unsigned size;
} npy_dtypes[] = {
    {LMT_NPY_F4, "<f4", 4}, {LMT_NPY_U4, "<u4", 4}, {LMT_NPY_I4, "<i4", 4}, {LMT_NPY_U2, "<u2", 2},
    {LMT_NPY_U1, "|u1", 1}, {LMT_NPY_F8, "<f8", 8}, {LMT_NPY_F2, "<f2", 2}, {LMT_NPY_I8, "<i8", 8},
    {LMT_NPY_U8, "<u8", 8}, {LMT_NPY_I2, "<i2", 2}, {LMT_NPY_I1, "|i1", 1}, {LMT_NPY_B1, "|b1", 1},
};

#define NPY_DTYPE_COUNT (sizeof npy_dtypes / sizeof npy_dtypes[0])

const char *lmt_npy_dtype_descr(lmt_npy_dtype dtype) {
    for (size_t i = 0; i < NPY_DTYPE_COUNT; i++)
        if (npy_dtypes[i].dtype == dtype) return npy_dtypes[i].descr;
    return "?";
}

unsigned lmt_npy_dtype_size(lmt_npy_dtype dtype) {
    for (size_t i = 0; i < NPY_DTYPE_COUNT; i++)
        if (npy_dtypes[i].dtype == dtype) return npy_dtypes[i].size;
    return 0;
}

void lmt_npy_format_shape(uint32_t rank, const uint64_t *shape, char *dst, size_t dst_size) {
    if (dst_size == 0) return;
    if (rank > LMT_NPY_MAX_RANK) rank = LMT_NPY_MAX_RANK;
    char buf[LMT_NPY_MAX_RANK * 22 + 8]; /* 20 digits and ", " per dimension */
    size_t len = 0;
    buf[len++] = '(';
    for (uint32_t i = 0; i < rank; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%" PRIu64, i ? ", " : "", shape[i]);
    if (rank == 1) buf[len++] = ',';
    buf[len++] = ')';
    buf[len] = '\0';
    if (len < dst_size) {
        memcpy(dst, buf, len + 1);
    } else if (dst_size < 4) {
        memcpy(dst, buf, dst_size - 1);
        dst[dst_size - 1] = '\0';
    } else {
        memcpy(dst, buf, dst_size - 4);
        memcpy(dst + dst_size - 4, "...", 4);
    }
}

/* ------------------------------------------------------------------ reader */

/* The header dictionary being parsed: text[0..len), at position pos. */
typedef struct npy_hdr {
    const char *text;
    size_t len, pos;
} npy_hdr;

static lm_status malformed(const npy_hdr *h, const char *fmt, ...) ERR_PRINTF(2, 3);

static lm_status malformed(const npy_hdr *h, const char *fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(LM_ERR_INVALID_FILE, "malformed .npy header: %s (header byte %zu)", what,
                   h->pos);
}

/* What stands at the current position, for messages. */
static const char *found(const npy_hdr *h, char buf[16]) {
    if (h->pos >= h->len) return "the end of the header";
    unsigned char c = (unsigned char)h->text[h->pos];
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, 16, "'%c'", c);
    else
        snprintf(buf, 16, "byte 0x%02x", c);
    return buf;
}

static void skip_ws(npy_hdr *h) {
    while (h->pos < h->len) {
        char c = h->text[h->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        h->pos++;
    }
}

static lm_status expect_char(npy_hdr *h, char c, const char *where) {
    skip_ws(h);
    if (h->pos < h->len && h->text[h->pos] == c) {
        h->pos++;
        return LM_OK;
    }
    char buf[16];
    return malformed(h, "expected '%c' %s, found %s", c, where, found(h, buf));
}

/* A quoted string of printable ASCII without escapes (all that numpy writes
 * for keys and the dtypes we take). */
#define NPY_STRING_MAX 32
static lm_status parse_string(npy_hdr *h, const char *what, char out[NPY_STRING_MAX + 1]) {
    skip_ws(h);
    char buf[16];
    if (h->pos >= h->len || (h->text[h->pos] != '\'' && h->text[h->pos] != '"'))
        return malformed(h, "expected a quoted string for %s, found %s", what, found(h, buf));
    char quote = h->text[h->pos++];
    size_t n = 0;
    for (;;) {
        if (h->pos >= h->len) return malformed(h, "unterminated string in %s", what);
        unsigned char c = (unsigned char)h->text[h->pos];
        if (c == (unsigned char)quote) break;
        if (c < 0x20 || c >= 0x7f || c == '\\')
            return malformed(h, "%s in %s (only plain ASCII strings are read)", found(h, buf),
                             what);
        if (n == NPY_STRING_MAX)
            return malformed(h, "%s is longer than %d characters", what, NPY_STRING_MAX);
        out[n++] = (char)c;
        h->pos++;
    }
    h->pos++;
    out[n] = '\0';
    return LM_OK;
}

static bool is_ident(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static lm_status parse_bool(npy_hdr *h, bool *out) {
    skip_ws(h);
    static const struct {
        const char *word;
        bool value;
    } words[] = {{"True", true}, {"False", false}};
    for (size_t i = 0; i < 2; i++) {
        size_t n = strlen(words[i].word);
        if (h->len - h->pos >= n && !memcmp(h->text + h->pos, words[i].word, n) &&
            (h->pos + n == h->len || !is_ident(h->text[h->pos + n]))) {
            h->pos += n;
            *out = words[i].value;
            return LM_OK;
        }
    }
    char buf[16];
    return malformed(h, "expected True or False for 'fortran_order', found %s", found(h, buf));
}

/* A Python tuple of non-negative integers: "()", "(5,)", "(2, 3)". */
static lm_status parse_shape(npy_hdr *h, uint32_t *out_rank, uint64_t *shape) {
    lm_status st = expect_char(h, '(', "to start 'shape'");
    if (st) return st;
    uint32_t rank = 0;
    bool comma = false; /* a comma followed the last dimension */
    char buf[16];
    for (;;) {
        skip_ws(h);
        if (h->pos < h->len && h->text[h->pos] == ')') {
            if (rank == 1 && !comma)
                return malformed(
                    h, "'shape' (%" PRIu64 ") is not a tuple (a 1-D shape is (%" PRIu64 ",))",
                    shape[0], shape[0]);
            h->pos++;
            break;
        }
        if (rank > 0 && !comma)
            return malformed(h, "expected ',' or ')' in 'shape', found %s", found(h, buf));
        if (h->pos >= h->len || h->text[h->pos] < '0' || h->text[h->pos] > '9')
            return malformed(h,
                             "expected a dimension (a non-negative integer) in 'shape', found %s",
                             found(h, buf));
        if (rank == LMT_NPY_MAX_RANK)
            return malformed(h, "'shape' has more than %d dimensions", LMT_NPY_MAX_RANK);
        if (h->text[h->pos] == '0' && h->pos + 1 < h->len && h->text[h->pos + 1] >= '0' &&
            h->text[h->pos + 1] <= '9')
            return malformed(h, "dimension %u of 'shape' has a leading zero", (unsigned)rank);
        uint64_t v = 0;
        while (h->pos < h->len && h->text[h->pos] >= '0' && h->text[h->pos] <= '9') {
            unsigned d = (unsigned)(h->text[h->pos] - '0');
            if (v > (UINT64_MAX - d) / 10)
                return malformed(h, "dimension %u of 'shape' does not fit in 64 bits",
                                 (unsigned)rank);
            v = v * 10 + d;
            h->pos++;
        }
        shape[rank++] = v;
        skip_ws(h);
        comma = h->pos < h->len && h->text[h->pos] == ',';
        if (comma) h->pos++;
    }
    *out_rank = rank;
    return LM_OK;
}

/* The dictionary: exactly the keys 'descr', 'fortran_order' and 'shape', in
 * any order, an optional trailing comma, then only whitespace. */
static lm_status parse_dict(npy_hdr *h, char descr[NPY_STRING_MAX + 1], bool *fortran,
                            uint32_t *rank, uint64_t *shape) {
    enum { DESCR = 1, FORTRAN = 2, SHAPE = 4 };
    unsigned seen = 0;
    lm_status st = expect_char(h, '{', "at the start of the header");
    if (st) return st;
    char buf[16];
    for (;;) {
        skip_ws(h);
        if (h->pos < h->len && h->text[h->pos] == '}') {
            h->pos++;
            break;
        }
        size_t key_pos = h->pos;
        char key[NPY_STRING_MAX + 1];
        if ((st = parse_string(h, "a key", key))) return st;
        unsigned bit = !strcmp(key, "descr")           ? DESCR
                       : !strcmp(key, "fortran_order") ? FORTRAN
                       : !strcmp(key, "shape")         ? SHAPE
                                                       : 0;
        if (!bit) {
            h->pos = key_pos;
            return malformed(h, "unknown key '%s' (only 'descr', 'fortran_order' and 'shape')",
                             key);
        }
        if (seen & bit) {
            h->pos = key_pos;
            return malformed(h, "key '%s' appears twice", key);
        }
        seen |= bit;
        if ((st = expect_char(h, ':', "after a key"))) return st;
        if (bit == DESCR) {
            skip_ws(h);
            if (h->pos < h->len && h->text[h->pos] == '[')
                return malformed(h, "'descr' is a list: structured dtypes are not supported");
            st = parse_string(h, "'descr'", descr);
        } else if (bit == FORTRAN) {
            st = parse_bool(h, fortran);
        } else {
            st = parse_shape(h, rank, shape);
        }
        if (st) return st;
        skip_ws(h);
        if (h->pos < h->len && h->text[h->pos] == ',') {
            h->pos++;
            continue;
        }
        if (h->pos < h->len && h->text[h->pos] == '}') continue;
        return malformed(h, "expected ',' or '}' after the value of '%s', found %s", key,
                         found(h, buf));
    }
    skip_ws(h);
    if (h->pos < h->len) return malformed(h, "unexpected %s after the dictionary", found(h, buf));
    static const struct {
        unsigned bit;
        const char *name;
    } keys[] = {{DESCR, "descr"}, {FORTRAN, "fortran_order"}, {SHAPE, "shape"}};
    for (size_t i = 0; i < 3; i++)
        if (!(seen & keys[i].bit)) return malformed(h, "no '%s' key", keys[i].name);
    return LM_OK;
}

static lm_status dtype_of(const char *descr, lmt_npy_dtype *out) {
    for (size_t i = 0; i < NPY_DTYPE_COUNT; i++)
        if (!strcmp(npy_dtypes[i].descr, descr)) {
            *out = npy_dtypes[i].dtype;
            return LM_OK;
        }
    if (descr[0] == '>')
        return err_set(LM_ERR_INVALID_FILE,
                       "big-endian dtype '%s' is not supported (save little-endian data, e.g. "
                       "a.astype('<%s'))",
                       descr, descr + 1);
    return err_set(LM_ERR_INVALID_FILE,
                   "unsupported dtype '%s' (supported: '<f4', '<u4', '<i4', '<u2' (also bfloat16 "
                   "bit patterns), '|u1', and for buffers of those element types '<f8', '<f2', "
                   "'<i8', '<u8', '<i2', '|i1', '|b1')",
                   descr);
}

lm_status lmt_npy_parse(const void *bytes, uint64_t size, lmt_npy *out) {
    const unsigned char *p = bytes;
    if (size == 0) return err_set(LM_ERR_INVALID_FILE, "not a .npy file (it is empty)");
    if (!p) return err_set(LM_ERR_INVALID_ARGUMENT, "lmt_npy_parse: no bytes");
    size_t magic_len = size < sizeof npy_magic ? (size_t)size : sizeof npy_magic;
    if (memcmp(p, npy_magic, magic_len) != 0)
        return err_set(LM_ERR_INVALID_FILE,
                       "not a .npy file (it does not start with the \\x93NUMPY magic)");
    if (size < 8)
        return err_set(LM_ERR_INVALID_FILE,
                       "truncated .npy file: %" PRIu64 " bytes, ends before the format version",
                       size);
    unsigned major = p[6], minor = p[7];
    if (major < 1 || major > 3 || minor != 0)
        return err_set(LM_ERR_INVALID_FILE,
                       "unsupported .npy format version %u.%u (1.0, 2.0 and 3.0 are read)", major,
                       minor);
    unsigned len_bytes = major == 1 ? 2 : 4;
    uint64_t preamble = 8 + len_bytes;
    if (size < preamble)
        return err_set(LM_ERR_INVALID_FILE,
                       "truncated .npy file: %" PRIu64 " bytes, ends inside the header length",
                       size);
    uint64_t header_len = (uint64_t)p[8] | (uint64_t)p[9] << 8;
    if (len_bytes == 4) header_len |= (uint64_t)p[10] << 16 | (uint64_t)p[11] << 24;
    if (header_len > size - preamble)
        return err_set(LM_ERR_INVALID_FILE,
                       "the .npy header length (%" PRIu64 " bytes) runs past the end of the file "
                       "(%" PRIu64 " bytes follow the %u-byte preamble)",
                       header_len, size - preamble, (unsigned)preamble);

    npy_hdr h = {(const char *)p + preamble, (size_t)header_len, 0};
    char descr[NPY_STRING_MAX + 1];
    bool fortran = false;
    uint32_t rank = 0;
    uint64_t shape[LMT_NPY_MAX_RANK];
    lm_status st = parse_dict(&h, descr, &fortran, &rank, shape);
    if (st) return st;
    lmt_npy_dtype dtype = LMT_NPY_INVALID;
    if ((st = dtype_of(descr, &dtype))) return st;
    if (fortran)
        return err_set(LM_ERR_INVALID_FILE,
                       "'fortran_order': True is not supported (save a C-order "
                       "array, e.g. numpy.ascontiguousarray(a))");
    char shape_text[128];
    lmt_npy_format_shape(rank, shape, shape_text, sizeof shape_text);
    uint64_t count = 1;
    bool empty = false;
    for (uint32_t i = 0; i < rank; i++)
        if (shape[i] == 0) empty = true;
    for (uint32_t i = 0; i < rank && !empty; i++) {
        if (count > UINT64_MAX / shape[i])
            return err_set(LM_ERR_INVALID_FILE, "shape %s has more than 2^64 elements", shape_text);
        count *= shape[i];
    }
    if (empty) count = 0;
    unsigned esize = lmt_npy_dtype_size(dtype);
    if (count > UINT64_MAX / esize)
        return err_set(LM_ERR_INVALID_FILE, "shape %s of '%s' needs more than 2^64 bytes",
                       shape_text, descr);
    uint64_t need = count * esize, have = size - preamble - header_len;
    if (have < need)
        return err_set(LM_ERR_INVALID_FILE,
                       "truncated .npy data: %" PRIu64 " bytes, shape %s of '%s' needs %" PRIu64,
                       have, shape_text, descr, need);
    if (have > need)
        return err_set(LM_ERR_INVALID_FILE,
                       "%" PRIu64 " bytes after the .npy data (shape %s of '%s' is %" PRIu64
                       " bytes, the file holds %" PRIu64 ")",
                       have - need, shape_text, descr, need, have);
    out->dtype = dtype;
    out->rank = rank;
    memcpy(out->shape, shape, rank * sizeof shape[0]);
    out->count = count;
    out->data = p + preamble + header_len;
    out->data_size = need;
    return LM_OK;
}

/* ------------------------------------------------------------------ writer */

size_t lmt_npy_header(lmt_npy_dtype dtype, uint32_t rank, const uint64_t *shape, char *dst) {
    if (lmt_npy_dtype_size(dtype) == 0 || rank > LMT_NPY_MAX_RANK) return 0;
    char shape_text[LMT_NPY_MAX_RANK * 22 + 8];
    lmt_npy_format_shape(rank, shape, shape_text, sizeof shape_text);
    char dict[LMT_NPY_HEADER_MAX];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     lmt_npy_dtype_descr(dtype), shape_text);
    if (n < 0) return 0;
    /* numpy aligns the data to 64 bytes: pad with spaces, end with '\n'. */
    size_t total = 10 + (size_t)n + 1;
    total = (total + 63) / 64 * 64;
    if (total > LMT_NPY_HEADER_MAX) return 0;
    size_t header_len = total - 10;
    memcpy(dst, npy_magic, 6);
    dst[6] = 1;
    dst[7] = 0;
    dst[8] = (char)(header_len & 0xff);
    dst[9] = (char)(header_len >> 8);
    memcpy(dst + 10, dict, (size_t)n);
    memset(dst + 10 + n, ' ', header_len - (size_t)n - 1);
    dst[total - 1] = '\n';
    return total;
}

/* ------------------------------------------------------------- conversion */

uint32_t lmt_half_to_float_bits(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return sign | 0x7f800000u | man << 13; /* Inf, NaN (payload kept) */
    if (exp == 0) {
        if (man == 0) return sign;
        /* Subnormal: man * 2^-24; normalise into float32's range. */
        int32_t e = -14;
        while (!(man & 0x400u)) {
            man <<= 1;
            e--;
        }
        return sign | (uint32_t)(e + 127) << 23 | (man & 0x3ffu) << 13;
    }
    return sign | (exp - 15 + 127) << 23 | man << 13;
}

/* Rounds m >> shift to nearest, ties to even (shift 1..31). */
static uint32_t shift_round_even(uint32_t m, unsigned shift) {
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) r++;
    return r;
}

uint16_t lmt_float_bits_to_half(uint32_t f) {
    uint16_t sign = (uint16_t)((f >> 16) & 0x8000u);
    uint32_t exp = (f >> 23) & 0xffu, man = f & 0x7fffffu;
    if (exp == 0xff) /* Inf stays Inf; NaN stays a (quiet) NaN */
        return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | man >> 13 : 0));
    int32_t e = (int32_t)exp - 127 + 15;
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        /* A half subnormal (or zero): the value in units of 2^-24. Rounding
         * may carry into the smallest normal, which encodes correctly. */
        if (e < -10 || exp == 0) return sign;
        return (uint16_t)(sign | shift_round_even(man | 0x800000u, (unsigned)(14 - e)));
    }
    /* A carry out of the mantissa bumps the exponent: up to Inf at the top. */
    return (uint16_t)(sign | shift_round_even((uint32_t)e << 23 | man, 13));
}

/* Reads one element of an integer dtype: into *sv for the signed dtypes
 * (*is_signed set), into *uv for the unsigned ones and bool. */
static bool read_int(lmt_npy_dtype t, const unsigned char *p, int64_t *sv, uint64_t *uv,
                     bool *is_signed) {
    *is_signed = true;
    switch (t) {
    case LMT_NPY_I8: {
        int64_t v;
        memcpy(&v, p, 8);
        *sv = v;
        return true;
    }
    case LMT_NPY_I4: {
        int32_t v;
        memcpy(&v, p, 4);
        *sv = v;
        return true;
    }
    case LMT_NPY_I2: {
        int16_t v;
        memcpy(&v, p, 2);
        *sv = v;
        return true;
    }
    case LMT_NPY_I1:
        *sv = (int8_t)p[0];
        return true;
    default:
        break;
    }
    *is_signed = false;
    switch (t) {
    case LMT_NPY_U8:
        memcpy(uv, p, 8);
        return true;
    case LMT_NPY_U4: {
        uint32_t v;
        memcpy(&v, p, 4);
        *uv = v;
        return true;
    }
    case LMT_NPY_U2: {
        uint16_t v;
        memcpy(&v, p, 2);
        *uv = v;
        return true;
    }
    case LMT_NPY_U1:
    case LMT_NPY_B1:
        *uv = p[0];
        return true;
    default:
        return false;
    }
}

static lm_status out_of_range(uint64_t i, bool is_signed, int64_t sv, uint64_t uv,
                              lm_data_format storage) {
    char value[32];
    if (is_signed)
        snprintf(value, sizeof value, "%" PRId64, sv);
    else
        snprintf(value, sizeof value, "%" PRIu64, uv);
    return err_set(LM_ERR_INVALID_FILE, "element %" PRIu64 " is %s, outside the %s range %s", i,
                   value, storage == LM_DATA_FORMAT_INT32 ? "Int32" : "UInt32",
                   storage == LM_DATA_FORMAT_INT32 ? "-2147483648..2147483647" : "0..4294967295");
}

lm_status lmt_npy_to_storage(lmt_npy_dtype from, const void *src, uint64_t count,
                             lm_data_format storage, void *dst) {
    const unsigned char *s = src;
    unsigned char *d = dst;
    unsigned size = lmt_npy_dtype_size(from);
    if (storage == LM_DATA_FORMAT_FLOAT32) {
        if (from != LMT_NPY_F4 && from != LMT_NPY_F8 && from != LMT_NPY_F2)
            return err_set(LM_ERR_INVALID_ARGUMENT, "dtype '%s' does not convert to Float32",
                           lmt_npy_dtype_descr(from));
        for (uint64_t i = 0; i < count; i++) {
            uint32_t bits;
            if (from == LMT_NPY_F8) {
                double v;
                memcpy(&v, s + i * 8, 8);
                float f = (float)v; /* the default rounding: to nearest, ties to even */
                memcpy(&bits, &f, 4);
            } else if (from == LMT_NPY_F2) {
                uint16_t h;
                memcpy(&h, s + i * 2, 2);
                bits = lmt_half_to_float_bits(h);
            } else {
                memcpy(&bits, s + i * 4, 4);
            }
            memcpy(d + i * 4, &bits, 4);
        }
        return LM_OK;
    }
    if ((storage != LM_DATA_FORMAT_INT32 && storage != LM_DATA_FORMAT_UINT32) || !size ||
        from == LMT_NPY_F4 || from == LMT_NPY_F8 || from == LMT_NPY_F2)
        return err_set(LM_ERR_INVALID_ARGUMENT, "dtype '%s' does not convert to data format %d",
                       lmt_npy_dtype_descr(from), (int)storage);
    int64_t lo = storage == LM_DATA_FORMAT_INT32 ? INT32_MIN : 0;
    uint64_t hi = storage == LM_DATA_FORMAT_INT32 ? (uint64_t)INT32_MAX : UINT32_MAX;
    for (uint64_t i = 0; i < count; i++) {
        int64_t sv = 0;
        uint64_t uv = 0;
        bool is_signed;
        read_int(from, s + i * size, &sv, &uv, &is_signed);
        if (from == LMT_NPY_B1 && uv > 1)
            return err_set(LM_ERR_INVALID_FILE,
                           "element %" PRIu64 " is byte %" PRIu64 ", not a bool (0 or 1)", i, uv);
        if (is_signed ? sv < lo || (sv >= 0 && (uint64_t)sv > hi) : uv > hi)
            return out_of_range(i, is_signed, sv, uv, storage);
        uint32_t w = is_signed ? (uint32_t)sv : (uint32_t)uv; /* in range: exact */
        memcpy(d + i * 4, &w, 4);
    }
    return LM_OK;
}

bool lmt_npy_from_storage(lm_data_format storage, const void *src, uint64_t count, lmt_npy_dtype to,
                          void *dst) {
    const unsigned char *s = src;
    unsigned char *d = dst;
    unsigned size = lmt_npy_dtype_size(to);
    if (storage == LM_DATA_FORMAT_FLOAT32) {
        if (to != LMT_NPY_F4 && to != LMT_NPY_F8 && to != LMT_NPY_F2) return false;
        for (uint64_t i = 0; i < count; i++) {
            uint32_t bits;
            memcpy(&bits, s + i * 4, 4);
            if (to == LMT_NPY_F8) {
                float f;
                memcpy(&f, &bits, 4);
                double v = f;
                memcpy(d + i * 8, &v, 8);
            } else if (to == LMT_NPY_F2) {
                uint16_t h = lmt_float_bits_to_half(bits);
                memcpy(d + i * 2, &h, 2);
            } else {
                memcpy(d + i * 4, &bits, 4);
            }
        }
        return true;
    }
    if (storage != LM_DATA_FORMAT_INT32 && storage != LM_DATA_FORMAT_UINT32) return false;
    if (!size || to == LMT_NPY_F4 || to == LMT_NPY_F8 || to == LMT_NPY_F2) return false;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t w;
        memcpy(&w, s + i * 4, 4);
        /* 64 bits: sign- or zero-extended; narrower: the low bits (wraps). */
        uint64_t v = storage == LM_DATA_FORMAT_INT32 ? (uint64_t)(int64_t)(int32_t)w : w;
        if (to == LMT_NPY_B1) v = w != 0;
        for (unsigned b = 0; b < size; b++) /* little-endian */
            d[i * size + b] = (unsigned char)(v >> (8 * b));
    }
    return true;
}
