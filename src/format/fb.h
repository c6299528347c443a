/* A small FlatBuffers runtime: zero-copy readers, a back-to-front builder and a
 * table-driven structural verifier.
 *
 * Readers (fb_get_*, fb_vec_*) do no checks: they are only for buffers that
 * passed fb_verify() with the descriptor of their root table, and then they
 * cannot read outside the buffer. Every multi-byte value is little-endian in
 * the buffer and read with memcpy, so buffers need no particular alignment in
 * host memory (FlatBuffers alignment is relative to the buffer start).
 *
 * Thread-safety: readers and fb_verify() only read the buffer and may run on
 * any number of threads at once; a builder belongs to one thread at a time.
 */
#ifndef LM_FORMAT_FB_H
#define LM_FORMAT_FB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lightmetal/lm_status.h"

/* Largest buffer the 32-bit offsets can describe safely (signed soffset). */
#define FB_MAX_BUFFER_SIZE 0x7fffffffu

/* ---------------------------------------------------------------- readers */

static inline uint16_t fb_rd_u16(const uint8_t *p) {
    uint16_t v;
    memcpy(&v, p, 2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap16(v);
#endif
    return v;
}
static inline uint32_t fb_rd_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}
static inline uint64_t fb_rd_u64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}
static inline int32_t fb_rd_i32(const uint8_t *p) {
    return (int32_t)fb_rd_u32(p);
}

/* A table inside a verified buffer; NULL means "absent". */
typedef const uint8_t *fb_table;

/* Offset of field `id` inside table t, or 0 when the field is absent. */
static inline uint32_t fb_field_offset(fb_table t, unsigned id) {
    const uint8_t *vt = t - fb_rd_i32(t);
    uint32_t entry = 4u + 2u * id;
    return entry + 2 <= fb_rd_u16(vt) ? fb_rd_u16(vt + entry) : 0;
}

static inline uint8_t fb_get_u8(fb_table t, unsigned id) {
    uint32_t o = fb_field_offset(t, id);
    return o ? t[o] : 0;
}
static inline uint16_t fb_get_u16(fb_table t, unsigned id) {
    uint32_t o = fb_field_offset(t, id);
    return o ? fb_rd_u16(t + o) : 0;
}
static inline uint32_t fb_get_u32(fb_table t, unsigned id) {
    uint32_t o = fb_field_offset(t, id);
    return o ? fb_rd_u32(t + o) : 0;
}
static inline uint64_t fb_get_u64(fb_table t, unsigned id) {
    uint32_t o = fb_field_offset(t, id);
    return o ? fb_rd_u64(t + o) : 0;
}
static inline bool fb_get_bool(fb_table t, unsigned id) {
    return fb_get_u8(t, id) != 0;
}

/* Inline struct field: pointer to its bytes, or NULL when absent. */
static inline const uint8_t *fb_get_struct(fb_table t, unsigned id) {
    uint32_t o = fb_field_offset(t, id);
    return o ? t + o : NULL;
}

/* Follows the uoffset stored at p. */
static inline const uint8_t *fb_deref(const uint8_t *p) {
    return p + fb_rd_u32(p);
}

static inline fb_table fb_get_table(fb_table t, unsigned id) {
    uint32_t o = fb_field_offset(t, id);
    return o ? fb_deref(t + o) : NULL;
}

/* A string: bytes (NUL-terminated in the buffer) and length. */
typedef struct fb_str {
    const char *ptr; /* NULL when absent */
    uint32_t len;
} fb_str;

static inline fb_str fb_get_str(fb_table t, unsigned id) {
    fb_str s = {NULL, 0};
    uint32_t o = fb_field_offset(t, id);
    if (o) {
        const uint8_t *p = fb_deref(t + o);
        s.len = fb_rd_u32(p);
        s.ptr = (const char *)(p + 4);
    }
    return s;
}

/* A vector: element bytes and element count (data NULL when absent). */
typedef struct fb_vec {
    const uint8_t *data;
    uint32_t len;
} fb_vec;

static inline fb_vec fb_get_vec(fb_table t, unsigned id) {
    fb_vec v = {NULL, 0};
    uint32_t o = fb_field_offset(t, id);
    if (o) {
        const uint8_t *p = fb_deref(t + o);
        v.len = fb_rd_u32(p);
        v.data = p + 4;
    }
    return v;
}
static inline uint8_t fb_vec_u8(fb_vec v, uint32_t i) {
    return v.data[i];
}
static inline uint32_t fb_vec_u32(fb_vec v, uint32_t i) {
    return fb_rd_u32(v.data + 4u * i);
}
static inline uint64_t fb_vec_u64(fb_vec v, uint32_t i) {
    return fb_rd_u64(v.data + 8u * i);
}
static inline fb_table fb_vec_table(fb_vec v, uint32_t i) {
    return fb_deref(v.data + 4u * i);
}
static inline fb_str fb_vec_str(fb_vec v, uint32_t i) {
    const uint8_t *p = fb_deref(v.data + 4u * i);
    fb_str s = {(const char *)(p + 4), fb_rd_u32(p)};
    return s;
}
static inline const uint8_t *fb_vec_struct(fb_vec v, uint32_t i, uint32_t size) {
    return v.data + (size_t)size * i;
}

static inline void fb_wr_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void fb_wr_u32(uint8_t *p, uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    memcpy(p, &v, 4);
}
static inline void fb_wr_u64(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

/* Root table of a verified buffer. */
static inline fb_table fb_root(const void *buf) {
    return fb_deref((const uint8_t *)buf);
}

/* ----------------------------------------------------------- descriptors */

/* Base types, numbered as in FlatBuffers' reflection schema so tests can
 * compare descriptors with `flatc --bfbs` output directly. */
enum {
    FB_T_NONE = 0,
    FB_T_UTYPE = 1,
    FB_T_BOOL = 2,
    FB_T_BYTE = 3,
    FB_T_UBYTE = 4,
    FB_T_SHORT = 5,
    FB_T_USHORT = 6,
    FB_T_INT = 7,
    FB_T_UINT = 8,
    FB_T_LONG = 9,
    FB_T_ULONG = 10,
    FB_T_FLOAT = 11,
    FB_T_DOUBLE = 12,
    FB_T_STRING = 13,
    FB_T_VECTOR = 14,
    FB_T_OBJ = 15,
    FB_T_UNION = 16,
};

typedef struct fb_verifier fb_verifier;
typedef struct fb_table_desc fb_table_desc;

/* A FlatBuffers struct (fixed layout, stored inline). `check` may add
 * meaning-free structural checks (e.g. a blob range); it returns false after
 * reporting through fb_verify_fail(). */
typedef struct fb_struct_desc {
    const char *name;
    uint32_t size;
    uint32_t align;
    bool (*check)(fb_verifier *v, const uint8_t *p);
} fb_struct_desc;

typedef struct fb_union_desc {
    const char *name;
    uint32_t count;                      /* member types are 1..count */
    const fb_table_desc *const *members; /* members[type - 1] */
    const char *const *member_names;
} fb_union_desc;

typedef struct fb_field_desc {
    const char *name;
    uint16_t id;
    uint8_t base; /* FB_T_* */
    uint8_t elem; /* element base type of a vector */
    uint8_t required;
    uint8_t enum_max;         /* for enum-typed scalars: largest value (0 = not an enum) */
    const fb_struct_desc *st; /* OBJ struct field, or vector of structs */
    const fb_table_desc *tab; /* OBJ table field, or vector of tables */
    const fb_union_desc *un;  /* UNION value (and its UTYPE) */
    uint32_t max_len;         /* vector/string element limit; 0 = verifier default */
} fb_field_desc;

struct fb_table_desc {
    const char *name;
    uint32_t field_count;
    const fb_field_desc *fields;
};

/* -------------------------------------------------------------- verifier */

/* Every way a buffer can be rejected, each with a stable name. */
#define FB_REASONS(X)                                                                              \
    X(FB_OK, "ok", "no error")                                                                     \
    X(FB_ERR_TOO_SMALL, "too-small", "buffer is smaller than a FlatBuffer header")                 \
    X(FB_ERR_IDENTIFIER, "bad-identifier", "file identifier does not match")                       \
    X(FB_ERR_OFFSET, "offset-out-of-range", "an offset points outside the buffer")                 \
    X(FB_ERR_ALIGN, "misaligned", "a value is not aligned to its size")                            \
    X(FB_ERR_VTABLE, "bad-vtable", "a vtable is outside the buffer or has an invalid size")        \
    X(FB_ERR_FIELD, "field-out-of-table", "a field lies outside its table")                        \
    X(FB_ERR_REQUIRED, "missing-required", "a required field is absent")                           \
    X(FB_ERR_STRING, "bad-string", "a string is out of range or not NUL-terminated")               \
    X(FB_ERR_VECTOR, "bad-vector", "a vector is out of range")                                     \
    X(FB_ERR_LENGTH, "length-limit", "a vector or string is longer than allowed")                  \
    X(FB_ERR_UNION_TYPE, "bad-union-type", "a union type is not a member of the union")            \
    X(FB_ERR_UNION_VALUE, "bad-union-value", "a union type and value disagree")                    \
    X(FB_ERR_DEPTH, "too-deep", "tables are nested deeper than allowed")                           \
    X(FB_ERR_TABLE_COUNT, "too-many-tables", "more tables than the buffer size can justify")       \
    X(FB_ERR_ENUM, "bad-enum", "an enum field has an undefined value")                             \
    X(FB_ERR_BLOB, "blob-out-of-range", "a blob lies outside the data region")                     \
    X(FB_ERR_BLOB_ALIGN, "blob-misaligned", "a blob does not start on a 64-byte boundary")         \
    X(FB_ERR_BLOB_HASH, "blob-hash-mismatch", "a blob's bytes do not match its hash")              \
    X(FB_ERR_DATA_REGION, "bad-data-region", "the data region is outside the file or misaligned")  \
    X(FB_ERR_VERSION, "unsupported-version", "the format major version is not supported")          \
    X(FB_ERR_ORDER, "bad-order", "a sorted vector is out of order or has duplicates")              \
    X(FB_ERR_HASH_ALGORITHM, "unknown-hash-algorithm",                                             \
      "the file's hash algorithm is not supported")                                                \
    X(FB_ERR_DIGEST, "table-digest-mismatch",                                                      \
      "the table area does not match its digest (the file was changed)")

typedef enum fb_reason {
#define FB_REASON_ENUM_(id, name, text) id,
    FB_REASONS(FB_REASON_ENUM_)
#undef FB_REASON_ENUM_
        FB_REASON_COUNT_
} fb_reason;

/* Stable short name ("offset-out-of-range") and description of a reason. */
const char *fb_reason_name(fb_reason reason);
const char *fb_reason_text(fb_reason reason);

/* Hard ceiling for fb_verify_options.max_depth. */
#define FB_MAX_DEPTH 64

typedef struct fb_verify_options {
    uint32_t max_depth;      /* table nesting limit; default and maximum FB_MAX_DEPTH */
    uint32_t max_vector_len; /* default element limit for vectors; default 1 << 26 */
    uint64_t max_tables;     /* table visit budget; default size / 4 (DAG blow-up guard) */
    const char *identifier;  /* 4 chars expected at bytes 4..7, or NULL */
    void *user;              /* passed to struct check callbacks */
} fb_verify_options;

void fb_verify_options_init(fb_verify_options *opts);

/* Verifier state; exposed so struct checks can report failures. */
struct fb_verifier {
    const uint8_t *buf;
    uint64_t size;
    const fb_verify_options *opts;
    uint32_t max_depth;      /* opts->max_depth, at most FB_MAX_DEPTH */
    uint32_t max_vector_len; /* opts->max_vector_len */
    uint64_t tables_left;
    fb_reason reason;
    char detail[160];
    /* Path of the element being checked: one entry per open table field. */
    uint32_t depth;
    struct {
        const char *field;
        const char *const *member_names; /* of a union being checked, or NULL */
        uint32_t member;                 /* its type (names[member - 1]) */
        int64_t index;                   /* vector index, or -1 */
    } path[FB_MAX_DEPTH + 1];
};

/* Records a failure (the first one wins) at the current path, with a
 * printf-style detail; returns false so checks can `return fb_verify_fail()`. */
bool fb_verify_fail(fb_verifier *v, fb_reason reason, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4), cold))
#endif
    ;

/* Checks the whole buffer against the descriptor of its root table: every
 * offset, length and alignment, vtables, required fields, union types,
 * enums, nesting depth and vector limits, with overflow-safe arithmetic.
 * Only the first 2 GiB of `size` can hold tables (offsets are 32-bit);
 * whatever follows is not looked at. Returns LM_OK or LM_ERR_INVALID_FILE
 * with the message
 *   "invalid binary: <reason-name> (<description>) at <path>: <detail>"
 * e.g. "... at LightMetalBinary.commands[3].cmd<CreateKernel>.name: ...",
 * and the reason in *out_reason (when not NULL; FB_OK on success). */
lm_status fb_verify(const void *buf, uint64_t size, const fb_table_desc *root,
                    const fb_verify_options *opts, fb_reason *out_reason);

/* The same checks and result, with the root table checked by `check_root`:
 * a verifier specialised for one schema (built from fb_verify_impl.h) that
 * keeps no failure path, for speed. When it rejects the buffer, the
 * descriptor-driven pass runs from `root` to name the failing path; the two
 * make the same checks in the same order. */
lm_status fb_verify_with(const void *buf, uint64_t size, const fb_table_desc *root,
                         bool (*check_root)(fb_verifier *v, uint64_t pos),
                         const fb_verify_options *opts, fb_reason *out_reason);

/* --------------------------------------------------------------- builder */

/* Reference to an object already in the builder (distance from the end of
 * the buffer). 0 is never a valid reference. */
typedef uint32_t fb_ref;

/* A growable back-to-front builder. Failures (out of memory, 2 GiB limit,
 * misuse) are sticky: the builder keeps accepting calls, returns 0 refs and
 * fb_builder_finish() reports the first failure. Reusing a builder after
 * fb_builder_reset() keeps its memory, so steady-state building allocates
 * nothing. */
typedef struct fb_builder {
    uint8_t *buf; /* data lives in buf[cap - used, cap) */
    size_t cap;
    size_t used;
    size_t max_align;
    lm_status status;
    /* Fields of the table being built: (id, position) pairs. */
    struct fb_field_loc {
        uint32_t id;
        uint32_t pos;
    } * fields;
    size_t field_count, field_cap;
    uint32_t max_id;
    uint32_t table_start; /* `used` when the table began */
    bool in_table;
    /* Written vtables, for deduplication: open-addressing set of positions. */
    uint32_t *vt_set;
    size_t vt_cap, vt_count;
    size_t finished_size;
} fb_builder;

void fb_builder_init(fb_builder *b);
void fb_builder_free(fb_builder *b);
/* Empties the builder, keeping its memory for the next buffer. */
void fb_builder_reset(fb_builder *b);

/* Sticky status (LM_OK while everything went well). */
static inline lm_status fb_builder_status(const fb_builder *b) {
    return b->status;
}

/* Largest field id a table may use. */
#define FB_MAX_FIELD_ID 0x7ffdu

void fb_start_table_slow_(fb_builder *b);
/* Begins a table; add its fields, then fb_end_table() returns its ref. */
static inline void fb_start_table(fb_builder *b) {
    if (b->in_table) {
        fb_start_table_slow_(b); /* misuse: reported there */
        return;
    }
    b->in_table = true;
    b->field_count = 0;
    b->max_id = 0;
    b->table_start = (uint32_t)b->used;
}
fb_ref fb_end_table(fb_builder *b);

/* Slow paths of the inline calls below (growth, failures, misuse). */
void fb_add_scalar_slow_(fb_builder *b, unsigned id, uint64_t v, uint32_t size);
void fb_add_struct_slow_(fb_builder *b, unsigned id, const void *bytes, uint32_t size,
                         uint32_t align);
void fb_add_ref_slow_(fb_builder *b, unsigned id, fb_ref ref);

/* Zeroes padding: under 8 bytes but for over-aligned structs, too short
 * for a call to memset to pay off. */
static inline void fb_zero_(uint8_t *p, size_t n) {
    if (n >= 16) {
        memset(p, 0, n);
        return;
    }
    static const uint8_t zeros[16];
    if (n & 8) memcpy(p + (n & 7), zeros, 8);
    if (n & 4) memcpy(p + (n & 3), zeros, 4);
    if (n & 2) memcpy(p + (n & 1), zeros, 2);
    if (n & 1) p[0] = 0;
}

/* Reserves `size` bytes aligned to `size` (a power of two <= 8) for field
 * `id` when that needs no growth and nothing failed; NULL otherwise. Kept
 * inline because building a file is mostly this. */
static inline uint8_t *fb_field_room_(fb_builder *b, unsigned id, uint32_t size, uint32_t align) {
    size_t pad = (size_t)(-(b->used + size)) & (align - 1);
    if (b->status != LM_OK || !b->in_table || id > FB_MAX_FIELD_ID ||
        b->field_count == b->field_cap || b->cap - b->used < pad + size)
        return NULL;
    b->used += pad + size;
    uint8_t *p = b->buf + b->cap - b->used;
    fb_zero_(p + size, pad);
    if (b->max_align < align) b->max_align = align;
    b->fields[b->field_count].id = id;
    b->fields[b->field_count].pos = (uint32_t)b->used;
    b->field_count++;
    if (id > b->max_id) b->max_id = id;
    return p;
}

/* Scalars equal to 0 are not stored (all schema defaults are zero);
 * the reader returns 0 for absent fields either way. */
static inline void fb_add_u8(fb_builder *b, unsigned id, uint8_t v) {
    if (!v) return;
    uint8_t *p = fb_field_room_(b, id, 1, 1);
    if (p)
        *p = v;
    else
        fb_add_scalar_slow_(b, id, v, 1);
}
static inline void fb_add_u16(fb_builder *b, unsigned id, uint16_t v) {
    if (!v) return;
    uint8_t *p = fb_field_room_(b, id, 2, 2);
    if (p)
        fb_wr_u16(p, v);
    else
        fb_add_scalar_slow_(b, id, v, 2);
}
static inline void fb_add_u32(fb_builder *b, unsigned id, uint32_t v) {
    if (!v) return;
    uint8_t *p = fb_field_room_(b, id, 4, 4);
    if (p)
        fb_wr_u32(p, v);
    else
        fb_add_scalar_slow_(b, id, v, 4);
}
static inline void fb_add_u64(fb_builder *b, unsigned id, uint64_t v) {
    if (!v) return;
    uint8_t *p = fb_field_room_(b, id, 8, 8);
    if (p)
        fb_wr_u64(p, v);
    else
        fb_add_scalar_slow_(b, id, v, 8);
}
/* An inline struct: `size` bytes already in little-endian buffer layout,
 * `align` a power of two <= 8. */
static inline void fb_add_struct(fb_builder *b, unsigned id, const void *bytes, uint32_t size,
                                 uint32_t align) {
    uint8_t *p = fb_field_room_(b, id, size, align);
    if (p)
        memcpy(p, bytes, size);
    else
        fb_add_struct_slow_(b, id, bytes, size, align);
}
/* A reference to a string, vector or table built earlier (0 = absent). */
static inline void fb_add_ref(fb_builder *b, unsigned id, fb_ref ref) {
    if (!ref) return;
    uint8_t *p = ref <= b->used ? fb_field_room_(b, id, 4, 4) : NULL;
    if (p)
        fb_wr_u32(p, (uint32_t)b->used - ref);
    else
        fb_add_ref_slow_(b, id, ref);
}

fb_ref fb_create_string(fb_builder *b, const char *s, size_t len);
/* A vector of `count` elements of `elem_size` bytes already in buffer layout
 * (scalars little-endian, structs packed), aligned to `align`. */
fb_ref fb_create_vector(fb_builder *b, const void *elems, size_t count, uint32_t elem_size,
                        uint32_t align);
/* Vector of uint32 values given in host order. */
fb_ref fb_create_vector_u32(fb_builder *b, const uint32_t *values, size_t count);
/* Starts a vector of `count` elements and returns where to write their bytes
 * (buffer layout; valid until the next builder call); *out_ref receives the
 * vector. Returns NULL (and *out_ref = 0) after a failure. */
uint8_t *fb_alloc_vector(fb_builder *b, size_t count, uint32_t elem_size, uint32_t align,
                         fb_ref *out_ref);
/* Vector of references (tables or strings), in the given order. */
fb_ref fb_create_vector_refs(fb_builder *b, const fb_ref *refs, size_t count);

/* Writes the root offset and the 4-char identifier (may be NULL); returns a
 * pointer to the finished buffer, owned by the builder until the next reset,
 * and its size in *out_size. Returns NULL and reports through the sticky
 * status when anything failed while building. */
const void *fb_builder_finish(fb_builder *b, fb_ref root, const char *identifier, size_t *out_size);

#endif
