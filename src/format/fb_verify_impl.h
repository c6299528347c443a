/* Building blocks of the structural verifier, shared by the generic,
 * descriptor-driven verifier (fb_verify.c) and the verifiers specialised for
 * the Light Metal schema (lmb_verify.c), so both apply exactly the same
 * rules and report the same reasons. Internal to format/.
 *
 * Every position is a 64-bit offset from the buffer start and every range is
 * checked with ck_range_within() before a byte is read, so no buffer can
 * make the verifier (or a reader after it) touch memory outside it. Each
 * check returns false after recording the failure with fb_verify_fail(). */
#ifndef LM_FORMAT_FB_VERIFY_IMPL_H
#define LM_FORMAT_FB_VERIFY_IMPL_H

#include <inttypes.h>

#include "base/checked.h"
#include "format/fb.h"

/* The checks are small and on the hot path of every table: inline them. */
#if defined(__GNUC__)
#define FBV_INLINE static inline __attribute__((always_inline))
#else
#define FBV_INLINE static inline
#endif

/* A table being checked: its position, vtable and inline size. */
typedef struct fbv_table {
    uint64_t pos;
    const uint8_t *vt;
    uint32_t vt_size;
    uint32_t tsize;
} fbv_table;

FBV_INLINE bool fbv_in(const fb_verifier *v, uint64_t pos, uint64_t len) {
    return ck_range_within(pos, len, v->size);
}

/* Follows the uoffset at `at` (in range and aligned already). */
FBV_INLINE bool fbv_follow(fb_verifier *v, uint64_t at, uint64_t *out_target) {
    uint32_t off = fb_rd_u32(v->buf + at);
    uint64_t target = at + off;
    if (off == 0 || target >= v->size)
        return fb_verify_fail(v, FB_ERR_OFFSET,
                              "offset %" PRIu32 " at byte %" PRIu64 " leads to byte %" PRIu64
                              " of %" PRIu64,
                              off, at, target, v->size);
    *out_target = target;
    return true;
}

/* Checks a table is within the nesting limit and the visit budget, aligned
 * and inside the buffer; *out_vt_pos is where its vtable claims to be (not
 * checked yet). */
FBV_INLINE bool fbv_table_head(fb_verifier *v, uint64_t pos, int64_t *out_vt_pos) {
    if (v->depth >= v->max_depth)
        return fb_verify_fail(v, FB_ERR_DEPTH, "more than %" PRIu32 " nested tables",
                              v->opts->max_depth);
    if (v->tables_left == 0)
        return fb_verify_fail(v, FB_ERR_TABLE_COUNT, "table visit budget exhausted");
    v->tables_left--;
    if (pos % 4) return fb_verify_fail(v, FB_ERR_ALIGN, "table at byte %" PRIu64, pos);
    if (!fbv_in(v, pos, 4))
        return fb_verify_fail(v, FB_ERR_OFFSET, "table at byte %" PRIu64 " past the end", pos);
    *out_vt_pos = (int64_t)pos - fb_rd_i32(v->buf + pos);
    return true;
}

/* Checks the vtable at vt_pos: inside the buffer, aligned, a sane size.
 * The outcome depends only on vt_pos and the buffer, which is what lets a
 * specialised verifier skip it for a vtable it has already accepted. */
FBV_INLINE bool fbv_vtable(fb_verifier *v, int64_t vt_pos) {
    if (vt_pos < 0 || !fbv_in(v, (uint64_t)vt_pos, 4))
        return fb_verify_fail(v, FB_ERR_VTABLE, "vtable at byte %" PRId64 " of %" PRIu64, vt_pos,
                              v->size);
    if (vt_pos % 2) return fb_verify_fail(v, FB_ERR_ALIGN, "vtable at byte %" PRId64, vt_pos);
    uint32_t vt_size = fb_rd_u16(v->buf + vt_pos);
    if (vt_size < 4 || vt_size % 2 || !fbv_in(v, (uint64_t)vt_pos, vt_size))
        return fb_verify_fail(v, FB_ERR_VTABLE, "vtable of %" PRIu32 " bytes at byte %" PRId64,
                              vt_size, vt_pos);
    return true;
}

/* Fills *t for the table at pos with an accepted vtable at vt_pos, checks
 * the table's inline part is inside the buffer and opens a nesting level. */
FBV_INLINE bool fbv_table_open(fb_verifier *v, uint64_t pos, int64_t vt_pos, fbv_table *t) {
    t->pos = pos;
    t->vt = v->buf + vt_pos;
    t->vt_size = fb_rd_u16(t->vt);
    t->tsize = fb_rd_u16(t->vt + 2);
    if (t->tsize < 4 || !fbv_in(v, pos, t->tsize))
        return fb_verify_fail(v, FB_ERR_VTABLE, "table of %" PRIu32 " bytes at byte %" PRIu64,
                              t->tsize, pos);
    v->depth++;
    return true;
}

/* Checks a table's header and vtable and opens a nesting level. */
FBV_INLINE bool fbv_table_begin(fb_verifier *v, uint64_t pos, fbv_table *t) {
    int64_t vt_pos = 0;
    return fbv_table_head(v, pos, &vt_pos) && fbv_vtable(v, vt_pos) &&
           fbv_table_open(v, pos, vt_pos, t);
}

FBV_INLINE void fbv_table_end(fb_verifier *v) {
    v->depth--;
}

/* Offset of field `id` in the table, 0 when absent. */
FBV_INLINE uint32_t fbv_field(const fbv_table *t, unsigned id) {
    uint32_t slot = 4u + 2u * id;
    return slot + 2 <= t->vt_size ? fb_rd_u16(t->vt + slot) : 0;
}

static inline bool fbv_required(fb_verifier *v, const char *table, const char *field) {
    return fb_verify_fail(v, FB_ERR_REQUIRED, "%s.%s", table, field);
}

/* An inline value of `size` bytes at offset fo, aligned to `align`. */
FBV_INLINE bool fbv_inline(fb_verifier *v, const fbv_table *t, uint32_t fo, uint32_t size,
                           uint32_t align) {
    if ((uint64_t)fo + size > t->tsize)
        return fb_verify_fail(v, FB_ERR_FIELD,
                              "%" PRIu32 " bytes at offset %" PRIu32 " of a %" PRIu32 "-byte table",
                              size, fo, t->tsize);
    if ((t->pos + fo) & (align - 1))
        return fb_verify_fail(v, FB_ERR_ALIGN, "field at byte %" PRIu64 " (needs %" PRIu32 ")",
                              t->pos + fo, align);
    return true;
}

FBV_INLINE bool fbv_enum(fb_verifier *v, uint8_t value, uint8_t max) {
    if (value > max)
        return fb_verify_fail(v, FB_ERR_ENUM, "value %u (largest defined %u)", value, max);
    return true;
}

/* An offset field: inside the table, aligned, and leading inside the buffer. */
FBV_INLINE bool fbv_ref(fb_verifier *v, const fbv_table *t, uint32_t fo, uint64_t *out_target) {
    return fbv_inline(v, t, fo, 4, 4) && fbv_follow(v, t->pos + fo, out_target);
}

bool fbv_string(fb_verifier *v, uint64_t pos, uint32_t limit);

/* A vector's length and element range; *out_data is the first element. */
/* The union type stored at field id `type_id` must be 1..count when a value
 * is present: type NONE with a value and a type beyond the union both fail.
 * fbv_union_without_value: a present type whose value is absent fails. */
FBV_INLINE bool fbv_vector(fb_verifier *v, uint64_t pos, uint32_t elem_size, uint32_t align,
                           uint32_t limit, uint32_t *out_count, uint64_t *out_data) {
    if (pos % 4) return fb_verify_fail(v, FB_ERR_ALIGN, "vector at byte %" PRIu64, pos);
    if (!fbv_in(v, pos, 4))
        return fb_verify_fail(v, FB_ERR_VECTOR, "length at byte %" PRIu64 " past the end", pos);
    uint32_t count = fb_rd_u32(v->buf + pos);
    if (count > limit)
        return fb_verify_fail(v, FB_ERR_LENGTH, "%" PRIu32 " elements (limit %" PRIu32 ")", count,
                              limit);
    uint64_t data = pos + 4;
    if (!fbv_in(v, data, (uint64_t)count * elem_size)) /* < 2^48: no overflow */
        return fb_verify_fail(v, FB_ERR_VECTOR,
                              "%" PRIu32 " elements of %" PRIu32 " bytes at byte %" PRIu64
                              " run past the end",
                              count, elem_size, data);
    if (data & (align - 1))
        return fb_verify_fail(v, FB_ERR_ALIGN,
                              "vector data at byte %" PRIu64 " (needs %" PRIu32 ")", data, align);
    *out_count = count;
    *out_data = data;
    return true;
}

FBV_INLINE bool fbv_union_type(fb_verifier *v, const fbv_table *t, unsigned type_id,
                               const char *union_name, uint32_t count, uint8_t *out_type) {
    uint32_t to = fbv_field(t, type_id);
    uint8_t type = 0;
    if (to) {
        if (to >= t->tsize)
            return fb_verify_fail(v, FB_ERR_FIELD,
                                  "union type at offset %" PRIu32 " of a %" PRIu32 "-byte table",
                                  to, t->tsize);
        type = v->buf[t->pos + to];
    }
    if (type == 0) return fb_verify_fail(v, FB_ERR_UNION_VALUE, "value present but type is NONE");
    if (type > count)
        return fb_verify_fail(v, FB_ERR_UNION_TYPE, "type %u (union %s has %" PRIu32 " members)",
                              type, union_name, count);
    *out_type = type;
    return true;
}

FBV_INLINE bool fbv_union_without_value(fb_verifier *v, const fbv_table *t, unsigned type_id) {
    uint32_t to = fbv_field(t, type_id);
    if (to && to < t->tsize && v->buf[t->pos + to] != 0)
        return fb_verify_fail(v, FB_ERR_UNION_VALUE, "type %u but no value", v->buf[t->pos + to]);
    return true;
}

#endif
