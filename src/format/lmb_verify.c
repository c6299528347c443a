/* Structural verification of a Light Metal binary: the generic FlatBuffer
 * checks plus what the schema alone cannot say (data region, blob ranges,
 * version, sorted lists). Meaning (ids, limits, ELFs) is lmb_semantic.c. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

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
 * the same checks as the generic fb_verify() (the same fbv_* building
 * blocks, reasons and paths) without interpreting descriptors at run time,
 * which makes verification of large files about twice as fast. */
#define LMB_VT_DECL_(T) static bool lmb_vt_##T(fb_verifier *v, uint64_t pos);
LMB_TABLES(LMB_VT_DECL_)

typedef bool (*lmb_vt_fn)(fb_verifier *v, uint64_t pos);
typedef bool (*lmb_struct_check_fn)(fb_verifier *v, const uint8_t *p);

FBV_INLINE bool lmb_vk_scalar(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size) {
    return fbv_inline(v, t, fo, size, size);
}
FBV_INLINE bool lmb_vk_enum(fb_verifier *v, const fbv_table *t, uint32_t fo, uint8_t max) {
    return fbv_inline(v, t, fo, 1, 1) && fbv_enum(v, v->buf[t->pos + fo], max);
}
FBV_INLINE bool lmb_vk_struct(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size,
                              uint32_t align, lmb_struct_check_fn check) {
    return fbv_inline(v, t, fo, size, align) && (!check || check(v, v->buf + t->pos + fo));
}
FBV_INLINE bool lmb_vk_string(fb_verifier *v, const fbv_table *t, uint32_t fo) {
    uint64_t target = 0;
    return fbv_ref(v, t, fo, &target) && fbv_string(v, target, v->max_vector_len);
}
FBV_INLINE bool lmb_vk_table(fb_verifier *v, const fbv_table *t, uint32_t fo, lmb_vt_fn fn) {
    uint64_t target = 0;
    return fbv_ref(v, t, fo, &target) && fn(v, target);
}
FBV_INLINE bool lmb_vk_vec(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size,
                           uint32_t align, uint32_t *count, uint64_t *data) {
    uint64_t target = 0;
    return fbv_ref(v, t, fo, &target) &&
           fbv_vector(v, target, size, align, v->max_vector_len, count, data);
}
FBV_INLINE bool lmb_vk_vec_scalar(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size) {
    uint32_t count = 0;
    uint64_t data = 0;
    return lmb_vk_vec(v, t, fo, size, size, &count, &data);
}
FBV_INLINE bool lmb_vk_vec_enum(fb_verifier *v, const fbv_table *t, uint32_t fo, uint8_t max) {
    uint32_t count = 0;
    uint64_t data = 0;
    if (!lmb_vk_vec(v, t, fo, 1, 1, &count, &data)) return false;
    for (uint32_t i = 0; i < count; i++) {
        v->path[v->depth].index = i;
        if (!fbv_enum(v, v->buf[data + i], max)) return false;
    }
    v->path[v->depth].index = -1;
    return true;
}
FBV_INLINE bool lmb_vk_vec_struct(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size,
                                  uint32_t align, lmb_struct_check_fn check) {
    uint32_t count = 0;
    uint64_t data = 0;
    if (!lmb_vk_vec(v, t, fo, size, align, &count, &data)) return false;
    for (uint32_t i = 0; check && i < count; i++) {
        v->path[v->depth].index = i;
        if (!check(v, v->buf + data + (uint64_t)i * size)) return false;
    }
    v->path[v->depth].index = -1;
    return true;
}
FBV_INLINE bool lmb_vk_vec_table(fb_verifier *v, const fbv_table *t, uint32_t fo, lmb_vt_fn fn) {
    uint32_t count = 0;
    uint64_t data = 0;
    if (!lmb_vk_vec(v, t, fo, 4, 4, &count, &data)) return false;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t target = 0;
        v->path[v->depth].index = i;
        if (!fbv_follow(v, data + 4ull * i, &target) || !fn(v, target)) return false;
    }
    v->path[v->depth].index = -1;
    return true;
}

#define LMB_VU_CASE_(U, name, value)                                                               \
    case value:                                                                                    \
        return lmb_vt_##name(v, pos);
static bool lmb_vu_Command(fb_verifier *v, uint8_t type, uint64_t pos) {
    switch (type) {
        LMB_UNION_Command(LMB_VU_CASE_) default
            : return fb_verify_fail(v, FB_ERR_UNION_TYPE, "type %u", type);
    }
}

FBV_INLINE bool lmb_vk_union(fb_verifier *v, const fbv_table *t, uint32_t fo, unsigned id) {
    uint8_t type = 0;
    uint64_t target = 0;
    if (!fbv_inline(v, t, fo, 4, 4) ||
        !fbv_union_type(v, t, id - 1u, "Command", LMB_Command_COUNT, &type))
        return false;
    v->path[v->depth].member_names = lmb_Command_names;
    v->path[v->depth].member = type;
    if (!fbv_follow(v, t->pos + fo, &target) || !lmb_vu_Command(v, type, target)) return false;
    v->path[v->depth].member_names = NULL;
    return true;
}

#define LMB_VK_U8(T, f, id, arg) lmb_vk_scalar(v, &t, fo, 1)
#define LMB_VK_BOOL(T, f, id, arg) lmb_vk_scalar(v, &t, fo, 1)
#define LMB_VK_U16(T, f, id, arg) lmb_vk_scalar(v, &t, fo, 2)
#define LMB_VK_U32(T, f, id, arg) lmb_vk_scalar(v, &t, fo, 4)
#define LMB_VK_U64(T, f, id, arg) lmb_vk_scalar(v, &t, fo, 8)
#define LMB_VK_ENUM(T, f, id, arg) lmb_vk_enum(v, &t, fo, LMB_##arg##_MAX)
#define LMB_VK_STRUCT(T, f, id, arg)                                                               \
    lmb_vk_struct(v, &t, fo, LMB_SIZE_##arg, LMB_ALIGN_##arg, LMB_STRUCT_CHECK_##arg)
#define LMB_VK_STRING(T, f, id, arg) lmb_vk_string(v, &t, fo)
#define LMB_VK_TABLE(T, f, id, arg) lmb_vk_table(v, &t, fo, lmb_vt_##arg)
#define LMB_VK_VEC_U32(T, f, id, arg) lmb_vk_vec_scalar(v, &t, fo, 4)
#define LMB_VK_VEC_ENUM(T, f, id, arg) lmb_vk_vec_enum(v, &t, fo, LMB_##arg##_MAX)
#define LMB_VK_VEC_STRUCT(T, f, id, arg)                                                           \
    lmb_vk_vec_struct(v, &t, fo, LMB_SIZE_##arg, LMB_ALIGN_##arg, LMB_STRUCT_CHECK_##arg)
#define LMB_VK_VEC_TABLE(T, f, id, arg) lmb_vk_vec_table(v, &t, fo, lmb_vt_##arg)
#define LMB_VK_UNION(T, f, id, arg) lmb_vk_union(v, &t, fo, id)

/* A union's type field comes first, as in the descriptors. */
#define LMB_VTYPE_U8(T, f, id)
#define LMB_VTYPE_U16(T, f, id)
#define LMB_VTYPE_U32(T, f, id)
#define LMB_VTYPE_U64(T, f, id)
#define LMB_VTYPE_BOOL(T, f, id)
#define LMB_VTYPE_ENUM(T, f, id)
#define LMB_VTYPE_STRUCT(T, f, id)
#define LMB_VTYPE_STRING(T, f, id)
#define LMB_VTYPE_TABLE(T, f, id)
#define LMB_VTYPE_VEC_U32(T, f, id)
#define LMB_VTYPE_VEC_ENUM(T, f, id)
#define LMB_VTYPE_VEC_STRUCT(T, f, id)
#define LMB_VTYPE_VEC_TABLE(T, f, id)
#define LMB_VTYPE_UNION(T, f, id)                                                                  \
    fbv_at_name(v, #f "_type");                                                                    \
    fo = fbv_field(&t, (id)-1u);                                                                   \
    if (fo && !lmb_vk_scalar(v, &t, fo, 1)) return false;
#define LMB_VABSENT_UNION(T, f, id) else if (!fbv_union_without_value(v, &t, (id)-1u)) return false;

#define LMB_VFIELD_(T, f, id, K, arg, req)                                                         \
    LMB_VTYPE_##K(T, f, id) fbv_at_name(v, #f);                                                    \
    fo = fbv_field(&t, id);                                                                        \
    if (fo) {                                                                                      \
        if (!LMB_VK_##K(T, f, id, arg)) return false;                                              \
    } else if (req) {                                                                              \
        return fbv_required(v, #T, #f);                                                            \
    }                                                                                              \
    LMB_VABSENT_##K(T, f, id)

#define LMB_VABSENT_U8(T, f, id)
#define LMB_VABSENT_U16(T, f, id)
#define LMB_VABSENT_U32(T, f, id)
#define LMB_VABSENT_U64(T, f, id)
#define LMB_VABSENT_BOOL(T, f, id)
#define LMB_VABSENT_ENUM(T, f, id)
#define LMB_VABSENT_STRUCT(T, f, id)
#define LMB_VABSENT_STRING(T, f, id)
#define LMB_VABSENT_TABLE(T, f, id)
#define LMB_VABSENT_VEC_U32(T, f, id)
#define LMB_VABSENT_VEC_ENUM(T, f, id)
#define LMB_VABSENT_VEC_STRUCT(T, f, id)
#define LMB_VABSENT_VEC_TABLE(T, f, id)

#define LMB_VT_DEF_(T)                                                                             \
    static bool lmb_vt_##T(fb_verifier *v, uint64_t pos) {                                         \
        fbv_table t = {0, NULL, 0, 0};                                                             \
        uint32_t fo;                                                                               \
        if (!fbv_table_begin(v, pos, &t)) return false;                                            \
        LMB_TABLE_##T(LMB_VFIELD_) fbv_table_end(v);                                               \
        return true;                                                                               \
    }
LMB_TABLES(LMB_VT_DEF_)

lm_status lmb_verify_table_area(const void *data, uint64_t size, fb_reason *out_reason) {
    fb_verify_options fo;
    fb_verify_options_init(&fo);
    fo.identifier = LMB_FILE_IDENTIFIER;
    return fb_verify_with(data, size, "LightMetalBinary", lmb_vt_LightMetalBinary, &fo, out_reason);
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

/* The root fields needed before the full pass (to check BlobRefs). */
static const fb_field_desc lmb_head_fields[] = {
    {"data_offset", LMB_ID_LightMetalBinary_data_offset, FB_T_ULONG, 0, 0, 0, NULL, NULL, NULL, 0},
    {"data_size", LMB_ID_LightMetalBinary_data_size, FB_T_ULONG, 0, 0, 0, NULL, NULL, NULL, 0},
};
static const fb_table_desc lmb_head_desc = {"LightMetalBinary", 2, lmb_head_fields};

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
    st = fb_verify_with(data, size, "LightMetalBinary", lmb_vt_LightMetalBinary, &fo, out_reason);
    if (st) return st;

    lmb_Version ver = lmb_LightMetalBinary_format_version(root);
    if (ver.major != LMB_FORMAT_MAJOR)
        return lmb_fail(FB_ERR_VERSION, out_reason, "LightMetalBinary.format_version",
                        "file is version %u.%u, this reader supports %u.x", ver.major, ver.minor,
                        LMB_FORMAT_MAJOR);
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
