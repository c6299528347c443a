/* Structural verifier: the shared checks (fb_verify_impl.h) and the generic
 * verifier that walks a buffer by its table descriptors. */
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include "format/fb_verify_impl.h"

static const struct {
    const char *name;
    const char *text;
} fb_reason_table[] = {
#define FB_REASON_ROW_(id, name, text) {name, text},
    FB_REASONS(FB_REASON_ROW_)
#undef FB_REASON_ROW_
};

const char *fb_reason_name(fb_reason reason) {
    return (unsigned)reason < FB_REASON_COUNT_ ? fb_reason_table[reason].name : "unknown";
}

const char *fb_reason_text(fb_reason reason) {
    return (unsigned)reason < FB_REASON_COUNT_ ? fb_reason_table[reason].text : "unknown";
}

void fb_verify_options_init(fb_verify_options *opts) {
    memset(opts, 0, sizeof *opts);
    opts->max_depth = FB_MAX_DEPTH;
    opts->max_vector_len = 1u << 26;
}

bool fb_verify_fail(fb_verifier *v, fb_reason reason, const char *fmt, ...) {
    if (v->reason != FB_OK) return false;
    v->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof v->detail, fmt, ap);
    va_end(ap);
    return false;
}

/* ------------------------------------------------------- shared checks */

bool fbv_string(fb_verifier *v, uint64_t pos, uint32_t limit) {
    if (pos % 4) return fb_verify_fail(v, FB_ERR_ALIGN, "string at byte %" PRIu64, pos);
    if (!fbv_in(v, pos, 4))
        return fb_verify_fail(v, FB_ERR_STRING, "length at byte %" PRIu64 " past the end", pos);
    uint32_t len = fb_rd_u32(v->buf + pos);
    if (len > limit)
        return fb_verify_fail(v, FB_ERR_LENGTH, "string of %" PRIu32 " bytes (limit %" PRIu32 ")",
                              len, limit);
    if (!fbv_in(v, pos + 4, (uint64_t)len + 1))
        return fb_verify_fail(v, FB_ERR_STRING,
                              "%" PRIu32 " bytes at byte %" PRIu64 " run past the end", len,
                              pos + 4);
    if (v->buf[pos + 4 + len] != 0)
        return fb_verify_fail(v, FB_ERR_STRING, "no NUL after %" PRIu32 " bytes", len);
    return true;
}

/* ------------------------------------------------- descriptor-driven walk */

static bool vf_table(fb_verifier *v, uint64_t pos, const fb_table_desc *desc);

/* Names the field being checked (for the failure path). */
static inline void fbv_at(fb_verifier *v, const char *field) {
    v->path[v->depth].field = field;
    v->path[v->depth].member_names = NULL;
    v->path[v->depth].index = -1;
}

static const uint8_t vf_scalar_sizes[FB_T_UNION + 1] = {
    [FB_T_UTYPE] = 1, [FB_T_BOOL] = 1,   [FB_T_BYTE] = 1,  [FB_T_UBYTE] = 1,
    [FB_T_SHORT] = 2, [FB_T_USHORT] = 2, [FB_T_INT] = 4,   [FB_T_UINT] = 4,
    [FB_T_FLOAT] = 4, [FB_T_LONG] = 8,   [FB_T_ULONG] = 8, [FB_T_DOUBLE] = 8,
};

static inline uint32_t vf_scalar_size(uint8_t base) {
    return base <= FB_T_UNION ? vf_scalar_sizes[base] : 0;
}

static bool vf_vector_elems(fb_verifier *v, uint64_t pos, const fb_field_desc *f) {
    uint32_t limit = f->max_len ? f->max_len : v->max_vector_len;
    bool is_struct = f->elem == FB_T_OBJ && f->st;
    bool is_ref = !is_struct && (f->elem == FB_T_OBJ || f->elem == FB_T_STRING);
    uint32_t size = is_struct ? f->st->size : is_ref ? 4 : vf_scalar_size(f->elem);
    uint32_t align = is_struct ? f->st->align : size;
    uint32_t count = 0;
    uint64_t data = 0;
    if (!fbv_vector(v, pos, size, align, limit, &count, &data)) return false;
    if (!is_struct && !is_ref && !f->enum_max) return true;
    if (is_struct && !f->st->check) return true;
    int64_t *index = &v->path[v->depth].index;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t at = data + (uint64_t)i * size;
        *index = i;
        if (is_struct) {
            if (!f->st->check(v, v->buf + at)) return false;
        } else if (is_ref) {
            uint64_t target = 0;
            if (!fbv_follow(v, at, &target)) return false;
            if (f->elem == FB_T_STRING ? !fbv_string(v, target, limit)
                                       : !vf_table(v, target, f->tab))
                return false;
        } else if (!fbv_enum(v, v->buf[at], f->enum_max)) {
            return false;
        }
    }
    *index = -1;
    return true;
}

/* Checks one present field whose value starts `fo` bytes into the table. */
static bool vf_value(fb_verifier *v, const fbv_table *t, const fb_field_desc *f, uint32_t fo) {
    uint64_t target = 0;
    switch (f->base) {
    case FB_T_STRING:
        return fbv_ref(v, t, fo, &target) &&
               fbv_string(v, target, f->max_len ? f->max_len : v->max_vector_len);
    case FB_T_VECTOR:
        return fbv_ref(v, t, fo, &target) && vf_vector_elems(v, target, f);
    case FB_T_OBJ:
        if (f->st)
            return fbv_inline(v, t, fo, f->st->size, f->st->align) &&
                   (!f->st->check || f->st->check(v, v->buf + t->pos + fo));
        return fbv_ref(v, t, fo, &target) && vf_table(v, target, f->tab);
    case FB_T_UNION: {
        uint8_t type = 0;
        if (!fbv_inline(v, t, fo, 4, 4) ||
            !fbv_union_type(v, t, f->id - 1u, f->un->name, f->un->count, &type))
            return false;
        v->path[v->depth].member_names = f->un->member_names;
        v->path[v->depth].member = type;
        return fbv_follow(v, t->pos + fo, &target) && vf_table(v, target, f->un->members[type - 1]);
    }
    default: {
        uint32_t size = vf_scalar_size(f->base);
        return fbv_inline(v, t, fo, size, size) &&
               (!f->enum_max || fbv_enum(v, v->buf[t->pos + fo], f->enum_max));
    }
    }
}

static bool vf_table(fb_verifier *v, uint64_t pos, const fb_table_desc *desc) {
    fbv_table t = {0, NULL, 0, 0};
    if (!fbv_table_begin(v, pos, &t)) return false;
    v->path[v->depth].member_names = NULL;
    v->path[v->depth].index = -1;
    for (uint32_t i = 0; i < desc->field_count; i++) {
        const fb_field_desc *f = &desc->fields[i];
        uint32_t fo = fbv_field(&t, f->id);
        fbv_at(v, f->name);
        if (fo) {
            if (!vf_value(v, &t, f, fo)) return false;
        } else if (f->required) {
            return fbv_required(v, desc->name, f->name);
        } else if (f->base == FB_T_UNION && !fbv_union_without_value(v, &t, f->id - 1u)) {
            return false;
        }
    }
    fbv_table_end(v);
    return true;
}

/* ------------------------------------------------------------ entry */

/* Renders the failure path, e.g. "LightMetalBinary.commands[3].cmd<X>.name". */
static void vf_path(const fb_verifier *v, const char *root, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "%s", root);
    for (uint32_t d = 1; d <= v->depth && n < cap; d++) {
        n += (size_t)snprintf(out + n, cap - n, ".%s", v->path[d].field);
        if (n < cap && v->path[d].index >= 0)
            n += (size_t)snprintf(out + n, cap - n, "[%" PRId64 "]", v->path[d].index);
        if (n < cap && v->path[d].member_names)
            n += (size_t)snprintf(out + n, cap - n, "<%s>",
                                  v->path[d].member_names[v->path[d].member - 1]);
    }
}

/* One pass over the buffer: the root table by check_root when given, else
 * by its descriptor. Leaves the first failure (if any) in *v. */
static void vf_pass(fb_verifier *v, const void *buf, uint64_t size,
                    bool (*check_root)(fb_verifier *v, uint64_t pos), const fb_table_desc *root,
                    const fb_verify_options *opts) {
    v->buf = buf;
    /* Tables live in the first 2 GiB; anything after is not looked at. */
    v->size = size < FB_MAX_BUFFER_SIZE ? size : FB_MAX_BUFFER_SIZE;
    v->opts = opts;
    v->max_depth = opts->max_depth < FB_MAX_DEPTH ? opts->max_depth : FB_MAX_DEPTH;
    v->max_vector_len = opts->max_vector_len;
    v->tables_left = opts->max_tables ? opts->max_tables : v->size / 4;
    v->reason = FB_OK;
    v->detail[0] = 0;
    v->depth = 0;
    uint64_t root_pos = 0;
    if (!buf || v->size < (opts->identifier ? 8u : 4u)) {
        fb_verify_fail(v, FB_ERR_TOO_SMALL, "%" PRIu64 " bytes", size);
    } else if (opts->identifier && memcmp(v->buf + 4, opts->identifier, 4) != 0) {
        fb_verify_fail(v, FB_ERR_IDENTIFIER, "expected \"%.4s\"", opts->identifier);
    } else if (fbv_follow(v, 0, &root_pos)) {
        if (check_root)
            check_root(v, root_pos);
        else
            vf_table(v, root_pos, root);
    }
}

static lm_status vf_run(const void *buf, uint64_t size,
                        bool (*check_root)(fb_verifier *v, uint64_t pos), const fb_table_desc *root,
                        const fb_verify_options *opts, fb_reason *out_reason) {
    fb_verify_options defaults;
    if (!opts) {
        fb_verify_options_init(&defaults);
        opts = &defaults;
    }
    fb_verifier v;
    vf_pass(&v, buf, size, check_root, root, opts);
    char path[512];
    if (v.reason != FB_OK && check_root) {
        /* The specialised pass keeps no path. The descriptor-driven pass
         * makes the same checks in the same order, so it stops at the same
         * failure and can name where it is. Should it ever accept what the
         * specialised pass rejected, the buffer is still rejected. */
        fb_verifier slow;
        vf_pass(&slow, buf, size, NULL, root, opts);
        if (slow.reason != FB_OK)
            v = slow;
        else
            v.depth = 0;
    }
    if (out_reason) *out_reason = v.reason;
    if (v.reason == FB_OK) return LM_OK;
    vf_path(&v, root->name, path, sizeof path);
    return err_set(LM_ERR_INVALID_FILE, "invalid binary: %s (%s) at %s: %s",
                   fb_reason_name(v.reason), fb_reason_text(v.reason), path, v.detail);
}

lm_status fb_verify(const void *buf, uint64_t size, const fb_table_desc *root,
                    const fb_verify_options *opts, fb_reason *out_reason) {
    return vf_run(buf, size, NULL, root, opts, out_reason);
}

lm_status fb_verify_with(const void *buf, uint64_t size, const fb_table_desc *root,
                         bool (*check_root)(fb_verifier *v, uint64_t pos),
                         const fb_verify_options *opts, fb_reason *out_reason) {
    return vf_run(buf, size, check_root, root, opts, out_reason);
}
