/* FlatBuffers builder. The buffer is filled from its end towards its start,
 * so children are always written before the tables that point at them and
 * every uoffset points forward, as the format requires. Positions are kept
 * as distances from the end of the buffer, which do not change when the
 * buffer grows. */
#include <stdlib.h>

#include "base/checked.h"
#include "base/error.h"
#include "format/fb.h"

static void fb_fail(fb_builder *b, lm_status status, const char *what) {
    if (b->status == LM_OK) b->status = err_set(status, "fb_builder: %s", what);
}

void fb_builder_init(fb_builder *b) {
    memset(b, 0, sizeof *b);
}

void fb_builder_free(fb_builder *b) {
    free(b->buf);
    free(b->fields);
    free(b->vt_set);
    memset(b, 0, sizeof *b);
}

void fb_builder_reset(fb_builder *b) {
    b->used = 0;
    b->max_align = 1;
    b->status = LM_OK;
    b->field_count = 0;
    b->in_table = false;
    b->finished_size = 0;
    if (b->vt_count) memset(b->vt_set, 0, b->vt_cap * sizeof *b->vt_set);
    b->vt_count = 0;
}

/* Growth and failure path of fb_push. */
static uint8_t *fb_push_slow(fb_builder *b, size_t n) {
    if (b->status) return NULL;
    if (n > FB_MAX_BUFFER_SIZE - b->used) {
        fb_fail(b, LM_ERR_INVALID_ARGUMENT, "buffer would exceed the 2 GiB FlatBuffers limit");
        return NULL;
    }
    if (b->cap - b->used < n) {
        size_t need = b->used + n;
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < need)
            cap *= 2;
        if (cap > FB_MAX_BUFFER_SIZE) cap = FB_MAX_BUFFER_SIZE; /* >= need, checked above */
        uint8_t *nb = malloc(cap);
        if (!nb) {
            fb_fail(b, LM_ERR_OUT_OF_HOST_MEMORY, "out of memory growing the buffer");
            return NULL;
        }
        if (b->used) memcpy(nb + cap - b->used, b->buf + b->cap - b->used, b->used);
        free(b->buf);
        b->buf = nb;
        b->cap = cap;
    }
    b->used += n;
    return b->buf + b->cap - b->used;
}

/* Makes room for n more bytes at the front; returns where they go. The
 * capacity never exceeds FB_MAX_BUFFER_SIZE, so room in it is enough. */
static inline uint8_t *fb_push(fb_builder *b, size_t n) {
    if (b->status == LM_OK && b->cap - b->used >= n) {
        b->used += n;
        return b->buf + b->cap - b->used;
    }
    return fb_push_slow(b, n);
}

/* Pads so that after `len` more bytes the front is aligned to `align`. */
static void fb_prealign(fb_builder *b, size_t len, size_t align) {
    if (align > b->max_align) b->max_align = align;
    size_t pad = (size_t)(-(b->used + len)) & (align - 1);
    if (pad) {
        uint8_t *p = fb_push(b, pad);
        if (p) fb_zero_(p, pad);
    }
}

void fb_start_table_slow_(fb_builder *b) {
    if (b->in_table) fb_fail(b, LM_ERR_INTERNAL, "table started inside a table");
    b->in_table = true;
    b->field_count = 0;
    b->max_id = 0;
    b->table_start = (uint32_t)b->used;
}

static void fb_track_field(fb_builder *b, unsigned id) {
    if (b->status) return;
    if (!b->in_table) {
        fb_fail(b, LM_ERR_INTERNAL, "field added outside a table");
        return;
    }
    if (id > FB_MAX_FIELD_ID) {
        fb_fail(b, LM_ERR_INTERNAL, "field id too large");
        return;
    }
    if (b->field_count == b->field_cap) {
        size_t cap = b->field_cap ? b->field_cap * 2 : 16;
        void *nf = realloc(b->fields, cap * sizeof *b->fields);
        if (!nf) {
            fb_fail(b, LM_ERR_OUT_OF_HOST_MEMORY, "out of memory tracking fields");
            return;
        }
        b->fields = nf;
        b->field_cap = cap;
    }
    b->fields[b->field_count].id = id;
    b->fields[b->field_count].pos = (uint32_t)b->used;
    b->field_count++;
    if (id > b->max_id) b->max_id = id;
}

void fb_add_scalar_slow_(fb_builder *b, unsigned id, uint64_t v, uint32_t size) {
    fb_prealign(b, size, size);
    uint8_t *p = fb_push(b, size);
    if (!p) return;
    switch (size) {
    case 1:
        *p = (uint8_t)v;
        break;
    case 2:
        fb_wr_u16(p, (uint16_t)v);
        break;
    case 4:
        fb_wr_u32(p, (uint32_t)v);
        break;
    default:
        fb_wr_u64(p, v);
        break;
    }
    fb_track_field(b, id);
}

void fb_add_struct_slow_(fb_builder *b, unsigned id, const void *bytes, uint32_t size,
                         uint32_t align) {
    fb_prealign(b, size, align);
    uint8_t *p = fb_push(b, size);
    if (!p) return;
    memcpy(p, bytes, size);
    fb_track_field(b, id);
}

void fb_add_ref_slow_(fb_builder *b, unsigned id, fb_ref ref) {
    if (ref > b->used) {
        fb_fail(b, LM_ERR_INTERNAL, "reference to an object not yet written");
        return;
    }
    fb_prealign(b, 4, 4);
    uint8_t *p = fb_push(b, 4);
    if (!p) return;
    fb_wr_u32(p, (uint32_t)b->used - ref);
    fb_track_field(b, id);
}

/* Hash of a vtable for sharing identical ones; collisions only cost a
 * compare. A sum of one independent term per present field, so that
 * fb_end_table() can add the terms up while it writes the slots (no chain of
 * multiplies, no reading back) and fb_vt_hash() can recompute it from the
 * bytes when the index grows. */
static inline uint64_t fb_vt_term(uint32_t slot, uint32_t value) {
    return (((uint64_t)slot << 16) | value) * 0x9e3779b97f4a7c15ull;
}
static inline size_t fb_vt_final(uint64_t h) {
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    return (size_t)(h ^ (h >> 29));
}
static size_t fb_vt_hash(const uint8_t *vt) {
    uint32_t bytes = fb_rd_u16(vt);
    uint64_t h = 0;
    for (uint32_t i = 0; i < bytes; i += 2) {
        uint32_t e = fb_rd_u16(vt + i);
        if (e) h += fb_vt_term(i, e);
    }
    return fb_vt_final(h);
}

static bool fb_grow_vt_set(fb_builder *b) {
    size_t cap = b->vt_cap ? b->vt_cap * 2 : 64;
    uint32_t *set = calloc(cap, sizeof *set);
    if (!set) return false;
    for (size_t i = 0; i < b->vt_cap; i++) {
        uint32_t pos = b->vt_set[i];
        if (!pos) continue;
        const uint8_t *vt = b->buf + b->cap - pos;
        size_t h = fb_vt_hash(vt) & (cap - 1);
        while (set[h])
            h = (h + 1) & (cap - 1);
        set[h] = pos;
    }
    free(b->vt_set);
    b->vt_set = set;
    b->vt_cap = cap;
    return true;
}

/* Compares in the 2-byte units the new vtable was just written in (wider
 * loads of freshly stored halfwords stall on store forwarding). */
static inline bool fb_vt_equal(const uint8_t *a, const uint8_t *b, size_t bytes) {
    for (size_t i = 0; i < bytes; i += 2)
        if (fb_rd_u16(a + i) != fb_rd_u16(b + i)) return false;
    return true;
}

fb_ref fb_end_table(fb_builder *b) {
    if (!b->in_table) fb_fail(b, LM_ERR_INTERNAL, "end of a table that was not started");
    b->in_table = false;
    fb_prealign(b, 4, 4);
    uint8_t *soff = fb_push(b, 4);
    if (!soff) return 0;
    uint32_t table_pos = (uint32_t)b->used;
    size_t object_size = table_pos - b->table_start;
    size_t slots = b->field_count ? b->max_id + 1u : 0;
    size_t vt_bytes = 4 + 2 * slots;
    if (object_size > 0xffff || vt_bytes > 0xffff) {
        fb_fail(b, LM_ERR_INVALID_ARGUMENT, "table too large for a vtable");
        return 0;
    }
    /* Write the vtable in front of the table, then drop it again if an
     * identical one exists (the C++ builder shares vtables the same way). */
    uint8_t *vt = fb_push(b, vt_bytes);
    if (!vt) return 0;
    for (size_t i = 4; i < vt_bytes; i += 2)
        fb_wr_u16(vt + i, 0);
    fb_wr_u16(vt, (uint16_t)vt_bytes);
    fb_wr_u16(vt + 2, (uint16_t)object_size);
    uint64_t sum = fb_vt_term(0, (uint32_t)vt_bytes) + fb_vt_term(2, (uint32_t)object_size);
    /* Locals: the byte stores below could alias *b. */
    const struct fb_field_loc *fields = b->fields;
    size_t field_count = b->field_count;
    for (size_t i = 0; i < field_count; i++) {
        /* Every stored field has a nonzero offset: a slot already set is a
         * field added twice. */
        uint32_t slot = 4 + 2 * fields[i].id, off = table_pos - fields[i].pos;
        if (fb_rd_u16(vt + slot) != 0) {
            fb_fail(b, LM_ERR_INTERNAL, "field added twice to one table");
            return 0;
        }
        fb_wr_u16(vt + slot, (uint16_t)off);
        sum += fb_vt_term(slot, off);
    }
    size_t h = fb_vt_final(sum);
    uint32_t found = 0;
    if (b->vt_cap) {
        for (size_t k = h & (b->vt_cap - 1); b->vt_set[k]; k = (k + 1) & (b->vt_cap - 1)) {
            const uint8_t *old = b->buf + b->cap - b->vt_set[k];
            if (fb_rd_u16(old) == vt_bytes && fb_vt_equal(old, vt, vt_bytes)) {
                found = b->vt_set[k];
                break;
            }
        }
    }
    if (found) {
        b->used -= vt_bytes;
    } else {
        found = (uint32_t)b->used;
        if ((b->vt_count + 1) * 2 > b->vt_cap && !fb_grow_vt_set(b)) {
            fb_fail(b, LM_ERR_OUT_OF_HOST_MEMORY, "out of memory indexing vtables");
            return 0;
        }
        size_t k = h & (b->vt_cap - 1);
        while (b->vt_set[k])
            k = (k + 1) & (b->vt_cap - 1);
        b->vt_set[k] = found;
        b->vt_count++;
    }
    /* soffset = table address - vtable address; positions count from the end. */
    fb_wr_u32(b->buf + b->cap - table_pos, (uint32_t)((int64_t)found - (int64_t)table_pos));
    return table_pos;
}

static bool fb_not_in_table(fb_builder *b) {
    if (b->in_table) fb_fail(b, LM_ERR_INTERNAL, "string or vector built inside a table");
    return b->status == LM_OK;
}

fb_ref fb_create_string(fb_builder *b, const char *s, size_t len) {
    if (!fb_not_in_table(b)) return 0;
    if (len > FB_MAX_BUFFER_SIZE) {
        fb_fail(b, LM_ERR_INVALID_ARGUMENT, "string too long");
        return 0;
    }
    fb_prealign(b, len + 1, 4);
    uint8_t *p = fb_push(b, len + 1);
    if (!p) return 0;
    if (len) memcpy(p, s, len);
    p[len] = 0;
    p = fb_push(b, 4);
    if (!p) return 0;
    fb_wr_u32(p, (uint32_t)len);
    return (fb_ref)b->used;
}

uint8_t *fb_alloc_vector(fb_builder *b, size_t count, uint32_t elem_size, uint32_t align,
                         fb_ref *out_ref) {
    *out_ref = 0;
    if (!fb_not_in_table(b)) return NULL;
    size_t bytes;
    if (!ck_mul_size(count, elem_size, &bytes) || bytes > FB_MAX_BUFFER_SIZE) {
        fb_fail(b, LM_ERR_INVALID_ARGUMENT, "vector too long");
        return NULL;
    }
    fb_prealign(b, bytes, align > 4 ? align : 4);
    if (!fb_push(b, bytes)) return NULL;
    uint8_t *len = fb_push(b, 4);
    if (!len) return NULL;
    fb_wr_u32(len, (uint32_t)count);
    *out_ref = (fb_ref)b->used;
    return len + 4;
}

fb_ref fb_create_vector(fb_builder *b, const void *elems, size_t count, uint32_t elem_size,
                        uint32_t align) {
    fb_ref ref;
    uint8_t *p = fb_alloc_vector(b, count, elem_size, align, &ref);
    if (p && count) memcpy(p, elems, (size_t)count * elem_size);
    return ref;
}

fb_ref fb_create_vector_u32(fb_builder *b, const uint32_t *values, size_t count) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    fb_ref ref;
    uint8_t *p = fb_alloc_vector(b, count, 4, 4, &ref);
    if (p)
        for (size_t i = 0; i < count; i++)
            fb_wr_u32(p + 4 * i, values[i]);
    return ref;
#else
    return fb_create_vector(b, values, count, 4, 4);
#endif
}

fb_ref fb_create_vector_refs(fb_builder *b, const fb_ref *refs, size_t count) {
    if (!fb_not_in_table(b)) return 0;
    if (count > FB_MAX_BUFFER_SIZE / 4) {
        fb_fail(b, LM_ERR_INVALID_ARGUMENT, "vector too long");
        return 0;
    }
    fb_prealign(b, count * 4, 4);
    uint8_t *p = fb_push(b, count * 4);
    if (!p) return 0;
    uint32_t front = (uint32_t)b->used;
    for (size_t i = 0; i < count; i++) {
        uint32_t pos = front - 4 * (uint32_t)i;
        if (!refs[i] || refs[i] >= pos) {
            fb_fail(b, LM_ERR_INTERNAL, "vector element refers to a missing object");
            return 0;
        }
        fb_wr_u32(p + 4 * i, pos - refs[i]);
    }
    p = fb_push(b, 4);
    if (!p) return 0;
    fb_wr_u32(p, (uint32_t)count);
    return (fb_ref)b->used;
}

const void *fb_builder_finish(fb_builder *b, fb_ref root, const char *identifier,
                              size_t *out_size) {
    *out_size = 0;
    if (!fb_not_in_table(b)) return NULL;
    if (!root || root > b->used) fb_fail(b, LM_ERR_INTERNAL, "finish without a root table");
    fb_prealign(b, identifier ? 8 : 4, b->max_align > 4 ? b->max_align : 4);
    if (identifier) {
        uint8_t *p = fb_push(b, 4);
        if (p) memcpy(p, identifier, 4);
    }
    uint8_t *p = fb_push(b, 4);
    if (!p) return NULL;
    fb_wr_u32(p, (uint32_t)b->used - root);
    b->finished_size = b->used;
    *out_size = b->used;
    return p;
}
