/* Structural verification of a Light Metal binary: the generic FlatBuffer
 * checks plus what the schema alone cannot say (data region, blob ranges,
 * version, sorted lists). Meaning (ids, limits, ELFs) is lmb_semantic.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/hash.h"
#include "format/fb_verify_impl.h"
#include "format/lmb.h"

typedef struct lmb_vctx {
    const uint8_t *file;
    uint64_t data_offset;
    uint64_t data_size;
    bool check_hashes;
} lmb_vctx;

bool lmb_blob_ref_check(fb_verifier *v, const uint8_t *p) {
    const lmb_vctx *c = v->opts->user;
    if (!c) return true; /* verifying the table area alone */
    lmb_BlobRef r = lmb_BlobRef_read(p);
    if (r.offset % LMB_BLOB_ALIGN)
        return fb_verify_fail(v, FB_ERR_BLOB_ALIGN, "blob offset %" PRIu64, r.offset);
    if (!ck_range_within(r.offset, r.size, c->data_size))
        return fb_verify_fail(v, FB_ERR_BLOB,
                              "blob [%" PRIu64 ", +%" PRIu64 ") in a data region of %" PRIu64
                              " bytes",
                              r.offset, r.size, c->data_size);
    if (c->check_hashes && hash64(c->file + c->data_offset + r.offset, r.size, 0) != r.hash)
        return fb_verify_fail(v, FB_ERR_BLOB_HASH, "blob at %" PRIu64 " of %" PRIu64 " bytes",
                              r.offset, r.size);
    return true;
}

/* ------------------------------------------------ specialised verifiers */

/* One function per table, expanded from the schema lists of lmb_schema.h:
 * the checks of the generic fb_verify() in the same order, from the same
 * fbv_* building blocks, without interpreting descriptors at run time and
 * without keeping a failure path (fb_verify_with() finds the path again with
 * the descriptors when a buffer fails, which costs nothing when it passes).
 *
 * Why a vtable memo: builders share one vtable among all tables of the same
 * shape, so a file of 100,000 commands has a handful of vtables. Whether a
 * table's fields fit in its inline part, are aligned and the required ones
 * are present depends only on its vtable and its position modulo 8 (tables
 * are 4-aligned, fields at most 8-aligned). The memo keeps, per table type,
 * the last (vtable, position mod 8) that passed all of that, and a table that
 * matches it skips those checks. Everything that depends on the table's own
 * bytes is checked every time: its extent in the buffer, enum values,
 * offsets, strings, vectors, nested tables and union types. */
enum {
#define LMB_VT_INDEX_(T) LMB_VT_INDEX_##T,
    LMB_TABLES(LMB_VT_INDEX_) LMB_VT_COUNT_
#undef LMB_VT_INDEX_
};

typedef struct lmb_vmemo {
    /* vtable position * 8 + table position % 8, or UINT64_MAX for none
     * (never a key: tables are 4-aligned) */
    uint64_t key[LMB_VT_COUNT_];
} lmb_vmemo;

#define LMB_VT_DECL_(T) static bool lmb_vt_##T(fb_verifier *v, lmb_vmemo *m, uint64_t pos);
LMB_TABLES(LMB_VT_DECL_)

typedef bool (*lmb_vt_fn)(fb_verifier *v, lmb_vmemo *m, uint64_t pos);
typedef bool (*lmb_struct_check_fn)(fb_verifier *v, const uint8_t *p);

/* Value checks of a present field whose place in the table is checked. */
FBV_INLINE bool lmb_vv_struct(fb_verifier *v, const fbv_table *t, uint32_t fo,
                              lmb_struct_check_fn check) {
    return !check || check(v, v->buf + t->pos + fo);
}
FBV_INLINE bool lmb_vv_string(fb_verifier *v, const fbv_table *t, uint32_t fo) {
    uint64_t target = 0;
    return fbv_follow(v, t->pos + fo, &target) && fbv_string(v, target, v->max_vector_len);
}
FBV_INLINE bool lmb_vv_table(fb_verifier *v, lmb_vmemo *m, const fbv_table *t, uint32_t fo,
                             lmb_vt_fn fn) {
    uint64_t target = 0;
    return fbv_follow(v, t->pos + fo, &target) && fn(v, m, target);
}
FBV_INLINE bool lmb_vv_vec(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size,
                           uint32_t align, uint32_t *count, uint64_t *data) {
    uint64_t target = 0;
    return fbv_follow(v, t->pos + fo, &target) &&
           fbv_vector(v, target, size, align, v->max_vector_len, count, data);
}
FBV_INLINE bool lmb_vv_vec_scalar(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size) {
    uint32_t count = 0;
    uint64_t data = 0;
    return lmb_vv_vec(v, t, fo, size, size, &count, &data);
}
FBV_INLINE bool lmb_vv_vec_enum(fb_verifier *v, const fbv_table *t, uint32_t fo, uint8_t max) {
    uint32_t count = 0;
    uint64_t data = 0;
    if (!lmb_vv_vec(v, t, fo, 1, 1, &count, &data)) return false;
    for (uint32_t i = 0; i < count; i++)
        if (!fbv_enum(v, v->buf[data + i], max)) return false;
    return true;
}
FBV_INLINE bool lmb_vv_vec_struct(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size,
                                  uint32_t align, lmb_struct_check_fn check) {
    uint32_t count = 0;
    uint64_t data = 0;
    if (!lmb_vv_vec(v, t, fo, size, align, &count, &data)) return false;
    for (uint32_t i = 0; check && i < count; i++)
        if (!check(v, v->buf + data + (uint64_t)i * size)) return false;
    return true;
}
FBV_INLINE bool lmb_vv_vec_table(fb_verifier *v, lmb_vmemo *m, const fbv_table *t, uint32_t fo,
                                 lmb_vt_fn fn) {
    uint32_t count = 0;
    uint64_t data = 0;
    if (!lmb_vv_vec(v, t, fo, 4, 4, &count, &data)) return false;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t target = 0;
        if (!fbv_follow(v, data + 4ull * i, &target) || !fn(v, m, target)) return false;
    }
    return true;
}

/* Per union: a switch over its members, and the value check of a union
 * field (type 1..count, then the member's table). */
#define LMB_VU_CASE_(U, name, value)                                                               \
    case value:                                                                                    \
        return lmb_vt_##name(v, m, pos);
#define LMB_VU_DEF_(U)                                                                             \
    static bool lmb_vu_##U(fb_verifier *v, lmb_vmemo *m, uint8_t type, uint64_t pos) {             \
        switch (type) {                                                                            \
            LMB_UNION_##U(LMB_VU_CASE_) default                                                    \
                : return fb_verify_fail(v, FB_ERR_UNION_TYPE, "type %u", type);                    \
        }                                                                                          \
    }                                                                                              \
    FBV_INLINE bool lmb_vv_union_##U(fb_verifier *v, lmb_vmemo *m, const fbv_table *t,             \
                                     uint32_t fo, unsigned id) {                                   \
        uint8_t type = 0;                                                                          \
        uint64_t target = 0;                                                                       \
        return fbv_union_type(v, t, id - 1u, #U, LMB_##U##_COUNT, &type) &&                        \
               fbv_follow(v, t->pos + fo, &target) && lmb_vu_##U(v, m, type, target);              \
    }
LMB_UNIONS(LMB_VU_DEF_)

/* Where a field of each kind sits: its inline size and alignment. */
#define LMB_VPLACE_U8(arg) fbv_inline(v, &t, fo, 1, 1)
#define LMB_VPLACE_BOOL(arg) fbv_inline(v, &t, fo, 1, 1)
#define LMB_VPLACE_U16(arg) fbv_inline(v, &t, fo, 2, 2)
#define LMB_VPLACE_U32(arg) fbv_inline(v, &t, fo, 4, 4)
#define LMB_VPLACE_U64(arg) fbv_inline(v, &t, fo, 8, 8)
#define LMB_VPLACE_ENUM(arg) fbv_inline(v, &t, fo, 1, 1)
#define LMB_VPLACE_STRUCT(arg) fbv_inline(v, &t, fo, LMB_SIZE_##arg, LMB_ALIGN_##arg)
#define LMB_VPLACE_STRING(arg) fbv_inline(v, &t, fo, 4, 4)
#define LMB_VPLACE_TABLE(arg) fbv_inline(v, &t, fo, 4, 4)
#define LMB_VPLACE_VEC_U32(arg) fbv_inline(v, &t, fo, 4, 4)
#define LMB_VPLACE_VEC_ENUM(arg) fbv_inline(v, &t, fo, 4, 4)
#define LMB_VPLACE_VEC_STRUCT(arg) fbv_inline(v, &t, fo, 4, 4)
#define LMB_VPLACE_VEC_TABLE(arg) fbv_inline(v, &t, fo, 4, 4)
#define LMB_VPLACE_UNION(arg) fbv_inline(v, &t, fo, 4, 4)

/* What a field of each kind holds. */
#define LMB_VVALUE_U8(id, arg) true
#define LMB_VVALUE_BOOL(id, arg) true
#define LMB_VVALUE_U16(id, arg) true
#define LMB_VVALUE_U32(id, arg) true
#define LMB_VVALUE_U64(id, arg) true
#define LMB_VVALUE_ENUM(id, arg) fbv_enum(v, v->buf[t.pos + fo], LMB_##arg##_MAX)
#define LMB_VVALUE_STRUCT(id, arg) lmb_vv_struct(v, &t, fo, LMB_STRUCT_CHECK_##arg)
#define LMB_VVALUE_STRING(id, arg) lmb_vv_string(v, &t, fo)
#define LMB_VVALUE_TABLE(id, arg) lmb_vv_table(v, m, &t, fo, lmb_vt_##arg)
#define LMB_VVALUE_VEC_U32(id, arg) lmb_vv_vec_scalar(v, &t, fo, 4)
#define LMB_VVALUE_VEC_ENUM(id, arg) lmb_vv_vec_enum(v, &t, fo, LMB_##arg##_MAX)
#define LMB_VVALUE_VEC_STRUCT(id, arg)                                                             \
    lmb_vv_vec_struct(v, &t, fo, LMB_SIZE_##arg, LMB_ALIGN_##arg, LMB_STRUCT_CHECK_##arg)
#define LMB_VVALUE_VEC_TABLE(id, arg) lmb_vv_vec_table(v, m, &t, fo, lmb_vt_##arg)
#define LMB_VVALUE_UNION(id, arg) lmb_vv_union_##arg(v, m, &t, fo, id)

/* Whether a field of each kind holds anything to check (else, on a known
 * vtable, there is nothing to do for it, not even finding it). */
#define LMB_VHAS_VALUE_U8(arg) 0
#define LMB_VHAS_VALUE_BOOL(arg) 0
#define LMB_VHAS_VALUE_U16(arg) 0
#define LMB_VHAS_VALUE_U32(arg) 0
#define LMB_VHAS_VALUE_U64(arg) 0
#define LMB_VHAS_VALUE_ENUM(arg) 1
#define LMB_VHAS_VALUE_STRUCT(arg) LMB_STRUCT_CHECKED_##arg
#define LMB_VHAS_VALUE_STRING(arg) 1
#define LMB_VHAS_VALUE_TABLE(arg) 1
#define LMB_VHAS_VALUE_VEC_U32(arg) 1
#define LMB_VHAS_VALUE_VEC_ENUM(arg) 1
#define LMB_VHAS_VALUE_VEC_STRUCT(arg) 1
#define LMB_VHAS_VALUE_VEC_TABLE(arg) 1
#define LMB_VHAS_VALUE_UNION(arg) 1

/* A union's type field is checked first, as in the descriptors; when the
 * value is absent, its type must be NONE. */
#define LMB_VTYPE_UNION(id)                                                                        \
    if (!known) {                                                                                  \
        fo = fbv_field(&t, (id)-1u);                                                               \
        if (fo && !fbv_inline(v, &t, fo, 1, 1)) return false;                                      \
    }
#define LMB_VABSENT_UNION(id) else if (!fbv_union_without_value(v, &t, (id)-1u)) return false;
#define LMB_VTYPE_U8(id)
#define LMB_VTYPE_U16(id)
#define LMB_VTYPE_U32(id)
#define LMB_VTYPE_U64(id)
#define LMB_VTYPE_BOOL(id)
#define LMB_VTYPE_ENUM(id)
#define LMB_VTYPE_STRUCT(id)
#define LMB_VTYPE_STRING(id)
#define LMB_VTYPE_TABLE(id)
#define LMB_VTYPE_VEC_U32(id)
#define LMB_VTYPE_VEC_ENUM(id)
#define LMB_VTYPE_VEC_STRUCT(id)
#define LMB_VTYPE_VEC_TABLE(id)
#define LMB_VABSENT_U8(id)
#define LMB_VABSENT_U16(id)
#define LMB_VABSENT_U32(id)
#define LMB_VABSENT_U64(id)
#define LMB_VABSENT_BOOL(id)
#define LMB_VABSENT_ENUM(id)
#define LMB_VABSENT_STRUCT(id)
#define LMB_VABSENT_STRING(id)
#define LMB_VABSENT_TABLE(id)
#define LMB_VABSENT_VEC_U32(id)
#define LMB_VABSENT_VEC_ENUM(id)
#define LMB_VABSENT_VEC_STRUCT(id)
#define LMB_VABSENT_VEC_TABLE(id)

#define LMB_VFIELD_(T, f, id, K, arg, req)                                                         \
    if (LMB_VHAS_VALUE_##K(arg) || !known) {                                                       \
        LMB_VTYPE_##K(id) fo = fbv_field(&t, id);                                                  \
        if (fo) {                                                                                  \
            if (!known && !LMB_VPLACE_##K(arg)) return false;                                      \
            if (!LMB_VVALUE_##K(id, arg)) return false;                                            \
        } else if (req && !known) {                                                                \
            return fbv_required(v, #T, #f);                                                        \
        }                                                                                          \
        LMB_VABSENT_##K(id)                                                                        \
    }

#define LMB_VT_DEF_(T)                                                                             \
    static bool lmb_vt_##T(fb_verifier *v, lmb_vmemo *m, uint64_t pos) {                           \
        fbv_table t = {0, NULL, 0, 0};                                                             \
        int64_t vt_pos = 0;                                                                        \
        uint32_t fo;                                                                               \
        if (!fbv_table_head(v, pos, &vt_pos)) return false;                                        \
        uint64_t key = (uint64_t)vt_pos * 8 + pos % 8;                                             \
        bool known = m->key[LMB_VT_INDEX_##T] == key;                                              \
        if (!known && !fbv_vtable(v, vt_pos)) return false;                                        \
        if (!fbv_table_open(v, pos, vt_pos, &t)) return false;                                     \
        LMB_TABLE_##T(LMB_VFIELD_) m->key[LMB_VT_INDEX_##T] = key;                                 \
        fbv_table_end(v);                                                                          \
        return true;                                                                               \
    }
LMB_TABLES(LMB_VT_DEF_)

static bool lmb_check_root(fb_verifier *v, uint64_t pos) {
    lmb_vmemo m;
    memset(&m, 0xff, sizeof m);
    return lmb_vt_LightMetalBinary(v, &m, pos);
}

lm_status lmb_verify_table_area(const void *data, uint64_t size, fb_reason *out_reason) {
    fb_verify_options fo;
    fb_verify_options_init(&fo);
    fo.identifier = LMB_FILE_IDENTIFIER;
    return fb_verify_with(data, size, &lmb_desc_LightMetalBinary, lmb_check_root, &fo, out_reason);
}

void lmb_verify_options_init(lmb_verify_options *opts) {
    memset(opts, 0, sizeof *opts);
}

static lm_status lmb_fail(fb_reason reason, fb_reason *out_reason, const char *path,
                          const char *fmt, ...) ERR_PRINTF(4, 5);

static lm_status lmb_fail(fb_reason reason, fb_reason *out_reason, const char *path,
                          const char *fmt, ...) {
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (out_reason) *out_reason = reason;
    return err_set(LM_ERR_INVALID_FILE, "invalid binary: %s (%s) at %s: %s", fb_reason_name(reason),
                   fb_reason_text(reason), path, detail);
}

/* ------------------------------------------------------------ integrity */

uint64_t lmb_table_area_end(const void *data, uint64_t size) {
    fb_table root = lmb_root(data);
    return lmb_LightMetalBinary_data_size(root) ? lmb_LightMetalBinary_data_offset(root) : size;
}

/* The digest of [0, end) with the digest's own 8 bytes read as zero, so the
 * file can carry it inside the area it covers. */
static uint64_t lmb_digest(const uint8_t *file, uint64_t end, uint64_t digest_pos) {
    static const uint8_t zero[8];
    hash64_state h;
    hash64_begin(&h, 0);
    hash64_update(&h, file, (size_t)digest_pos);
    hash64_update(&h, zero, sizeof zero);
    hash64_update(&h, file + digest_pos + 8, (size_t)(end - digest_pos - 8));
    return hash64_end(&h);
}

/* Where the digest is, given a root whose integrity field is in the table
 * area (the verifier has made sure, or lmb_reseal checks). */
static uint64_t lmb_digest_pos(const uint8_t *file) {
    fb_table root = lmb_root(file);
    return (uint64_t)(fb_get_struct(root, LMB_ID_LightMetalBinary_integrity) - file) + 8;
}

/* The root fields needed before the full pass (to check BlobRefs). */
static const fb_field_desc lmb_head_fields[] = {
    {"data_offset", LMB_ID_LightMetalBinary_data_offset, FB_T_ULONG, 0, 0, 0, NULL, NULL, NULL, 0},
    {"data_size", LMB_ID_LightMetalBinary_data_size, FB_T_ULONG, 0, 0, 0, NULL, NULL, NULL, 0},
    {"integrity", LMB_ID_LightMetalBinary_integrity, FB_T_OBJ, 0, 1, 0, &lmb_struct_Integrity, NULL,
     NULL, 0},
};
static const fb_table_desc lmb_head_desc = {"LightMetalBinary", 3, lmb_head_fields};

lm_status lmb_reseal(void *data, uint64_t size) {
    fb_verify_options fo;
    fb_verify_options_init(&fo);
    fo.identifier = LMB_FILE_IDENTIFIER;
    lm_status st = fb_verify(data, size, &lmb_head_desc, &fo, NULL);
    if (st) return st;
    uint64_t end = lmb_table_area_end(data, size), pos = lmb_digest_pos(data);
    if (end > size || pos + 8 > end)
        return err_set(LM_ERR_INVALID_FILE, "the table area is outside the file");
    fb_wr_u64((uint8_t *)data + pos, lmb_digest(data, end, pos));
    return LM_OK;
}

lm_status lmb_verify(const void *data, uint64_t size, const lmb_verify_options *opts,
                     fb_reason *out_reason) {
    lmb_verify_options defaults;
    if (!opts) {
        lmb_verify_options_init(&defaults);
        opts = &defaults;
    }
    fb_verify_options fo;
    fb_verify_options_init(&fo);
    fo.identifier = LMB_FILE_IDENTIFIER;
    if (opts->max_depth) fo.max_depth = opts->max_depth;
    if (opts->max_vector_len) fo.max_vector_len = opts->max_vector_len;
    if (out_reason) *out_reason = FB_OK;

    lm_status st = fb_verify(data, size, &lmb_head_desc, &fo, out_reason);
    if (st) return st;
    fb_table root = lmb_root(data);
    lmb_vctx ctx = {data, lmb_LightMetalBinary_data_offset(root),
                    lmb_LightMetalBinary_data_size(root), opts->check_blob_hashes};
    if (ctx.data_size && ctx.data_offset % LMB_DATA_REGION_ALIGN)
        return lmb_fail(FB_ERR_DATA_REGION, out_reason, "LightMetalBinary.data_offset",
                        "%" PRIu64 " is not a multiple of %u", ctx.data_offset,
                        LMB_DATA_REGION_ALIGN);
    if (!ck_range_within(ctx.data_offset, ctx.data_size, size))
        return lmb_fail(FB_ERR_DATA_REGION, out_reason, "LightMetalBinary.data_size",
                        "[%" PRIu64 ", +%" PRIu64 ") in a file of %" PRIu64 " bytes",
                        ctx.data_offset, ctx.data_size, size);
    fo.user = &ctx;
    st = fb_verify_with(data, size, &lmb_desc_LightMetalBinary, lmb_check_root, &fo, out_reason);
    if (st) return st;

    lmb_Version ver = lmb_LightMetalBinary_format_version(root);
    if (ver.major != LMB_FORMAT_MAJOR)
        return lmb_fail(FB_ERR_VERSION, out_reason, "LightMetalBinary.format_version",
                        "file is version %u.%u, this reader supports %u.x", ver.major, ver.minor,
                        LMB_FORMAT_MAJOR);
    lmb_Integrity integrity = lmb_LightMetalBinary_integrity(root);
    if (integrity.algorithm != LMB_HashAlgorithm_XXH3_64_Pieces)
        return lmb_fail(FB_ERR_HASH_ALGORITHM, out_reason, "LightMetalBinary.integrity.algorithm",
                        "%u (this reader knows XXH3_64_Pieces = %u)", integrity.algorithm,
                        LMB_HashAlgorithm_XXH3_64_Pieces);
    uint64_t end = lmb_table_area_end(data, size), pos = lmb_digest_pos(data);
    if (pos + 8 > end)
        return lmb_fail(FB_ERR_DIGEST, out_reason, "LightMetalBinary.integrity.table_digest",
                        "the digest lies outside the table area");
    uint64_t digest = opts->ignore_table_digest ? 0 : lmb_digest(data, end, pos);
    if (!opts->ignore_table_digest && digest != integrity.table_digest)
        return lmb_fail(FB_ERR_DIGEST, out_reason, "LightMetalBinary.integrity.table_digest",
                        "bytes [0, %" PRIu64 ") hash to %016" PRIx64 ", the file says %016" PRIx64,
                        end, digest, integrity.table_digest);
    char path[96];
    fb_vec traces = lmb_LightMetalBinary_traces(root);
    for (uint32_t i = 1; i < traces.len; i++) {
        uint32_t a = lmb_TraceDescriptor_trace_id(fb_vec_table(traces, i - 1));
        uint32_t b = lmb_TraceDescriptor_trace_id(fb_vec_table(traces, i));
        if (a >= b) {
            snprintf(path, sizeof path, "LightMetalBinary.traces[%" PRIu32 "].trace_id", i);
            return lmb_fail(FB_ERR_ORDER, out_reason, path, "trace id %" PRIu32 " follows %" PRIu32,
                            b, a);
        }
    }
    fb_vec kernels = lmb_LightMetalBinary_kernel_binaries(root);
    for (uint32_t i = 1; i < kernels.len; i++) {
        uint64_t a = lmb_vec_BlobRef_at(kernels, i - 1).hash;
        uint64_t b = lmb_vec_BlobRef_at(kernels, i).hash;
        if (a >= b) {
            snprintf(path, sizeof path, "LightMetalBinary.kernel_binaries[%" PRIu32 "].hash", i);
            return lmb_fail(FB_ERR_ORDER, out_reason, path,
                            "hash %016" PRIx64 " follows %016" PRIx64, b, a);
        }
    }
    return LM_OK;
}

bool lmb_find_kernel_binary(fb_table root, uint64_t hash, lmb_BlobRef *out_ref) {
    fb_vec v = lmb_LightMetalBinary_kernel_binaries(root);
    uint32_t lo = 0, hi = v.len;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        lmb_BlobRef r = lmb_vec_BlobRef_at(v, mid);
        if (r.hash == hash) {
            *out_ref = r;
            return true;
        }
        if (r.hash < hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

bool lmb_find_trace(fb_table root, uint32_t trace_id, lmb_BlobRef *out_ref) {
    fb_vec v = lmb_LightMetalBinary_traces(root);
    uint32_t lo = 0, hi = v.len;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        fb_table t = fb_vec_table(v, mid);
        uint32_t id = lmb_TraceDescriptor_trace_id(t);
        if (id == trace_id) {
            *out_ref = lmb_TraceDescriptor_data(t);
            return true;
        }
        if (id < trace_id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

lm_buffer_layout lmb_buffer_layout(fb_table c, lm_shard_spec *out) {
    memset(out, 0, sizeof *out);
    lmb_BufferLayout l = lmb_CreateBuffer_layout(c);
    fb_table sh = lmb_CreateBuffer_shard(c);
    if (l > LMB_BufferLayout_Interleaved && l <= LMB_BufferLayout_MAX && sh) {
        fb_vec v = lmb_ShardSpec_cores(sh);
        out->cores.count = v.len;
        for (uint32_t i = 0; i < v.len && i < LM_MAX_CORE_RANGES; i++) {
            lmb_CoreRange cr = lmb_vec_CoreRange_at(v, i);
            out->cores.ranges[i] = (lm_core_range){{cr.start.x, cr.start.y}, {cr.end.x, cr.end.y}};
        }
        out->shard_height = lmb_ShardSpec_shard_height(sh);
        out->shard_width = lmb_ShardSpec_shard_width(sh);
        out->tensor_height = lmb_ShardSpec_tensor_height(sh);
        out->tensor_width = lmb_ShardSpec_tensor_width(sh);
        out->col_major = lmb_ShardSpec_col_major(sh);
    }
    /* The enums share their numbering (lmb_BufferLayout mirrors lm_buffer_layout). */
    return (lm_buffer_layout)l;
}
