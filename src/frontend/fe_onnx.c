/* The ONNX loader: a serialized ModelProto to the checked graph form.
 *
 * A model file is untrusted. Before protobuf-c sees it, a scan of the wire
 * format (driven by the generated descriptors) checks every tag, varint and
 * length and the nesting depth of messages, so a truncated or mistyped file
 * gets a message saying where it breaks and a depth bomb cannot overflow
 * protobuf-c's recursion. protobuf-c then unpacks with an allocator capped
 * to a multiple of the file size, the result is copied into the graph's
 * arena (large tensor data handed over rather than copied) and the message
 * freed. The graph is checked as it is built (names
 * resolve, values are produced once, tensor data matches its shape) and
 * sorted topologically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/checked.h"
#include "base/error.h"
#include "base/file.h"
#include "frontend/fe_graph.h"
#include "onnx.pb-c.h"

/* Messages nested deeper than this are refused (a real model nests about 3
 * levels per subgraph: graph, node, attribute). */
#define FE_PB_MAX_DEPTH 64

/* ------------------------------------------------------------------ the
 * capped allocator */

/* Counts the bytes protobuf-c holds; refuses any request past `cap`. Each
 * block carries its size in front so that frees give it back. */
typedef struct pb_budget {
    size_t live;
    size_t cap;
    bool over_cap;
    bool out_of_memory;
} pb_budget;

#define PB_HEADER 16u

static void *pb_alloc(void *data, size_t size) {
    pb_budget *b = data;
    if (size > b->cap - b->live) {
        b->over_cap = true;
        return NULL;
    }
    unsigned char *p = malloc(PB_HEADER + size);
    if (!p) {
        b->out_of_memory = true;
        return NULL;
    }
    memcpy(p, &size, sizeof size);
    b->live += size;
    return p + PB_HEADER;
}

static void pb_free(void *data, void *ptr) {
    if (!ptr) return;
    pb_budget *b = data;
    unsigned char *p = (unsigned char *)ptr - PB_HEADER;
    size_t size;
    memcpy(&size, p, sizeof size);
    b->live -= size;
    free(p);
}

/* Unpacking takes a few times the file (an empty 2-byte message becomes a
 * struct of a few hundred bytes); this bounds it for a hostile file while
 * leaving any real model far below. */
static size_t pb_cap_for(size_t file_size) {
    size_t cap;
    if (!ck_mul_size(file_size, 32, &cap) || !ck_add_size(cap, (size_t)64 << 20, &cap))
        return SIZE_MAX;
    return cap;
}

/* ------------------------------------------------------------------ the
 * wire-format scan */

static bool read_varint(const uint8_t *d, size_t *pos, size_t end, uint64_t *out) {
    uint64_t v = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (*pos >= end) return false;
        uint8_t byte = d[(*pos)++];
        v |= (uint64_t)(byte & 0x7f) << (7 * i);
        if (!(byte & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* The wire type a field is written with (packed repeated scalars may also
 * come length-delimited). */
static int field_wire_type(const ProtobufCFieldDescriptor *fd) {
    switch (fd->type) {
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT:
        return 5;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE:
        return 1;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_BYTES:
    case PROTOBUF_C_TYPE_MESSAGE:
        return 2;
    default:
        return 0;
    }
}

static const char *wire_type_name(int wt) {
    switch (wt) {
    case 0:
        return "varint";
    case 1:
        return "64-bit";
    case 2:
        return "length-delimited";
    case 5:
        return "32-bit";
    default:
        return "invalid";
    }
}

/* Checks the wire format of a `root` message in [data, data+size): tags,
 * varints, lengths, wire types of known fields, packed arrays, and the
 * nesting depth, without recursion. */
static lm_status pb_scan(const uint8_t *data, size_t size, const ProtobufCMessageDescriptor *root,
                         const char *label) {
    struct {
        const ProtobufCMessageDescriptor *desc;
        size_t end;
    } stack[FE_PB_MAX_DEPTH];
    unsigned depth = 1;
    stack[0].desc = root;
    stack[0].end = size;
    size_t pos = 0;
    for (;;) {
        while (pos == stack[depth - 1].end) {
            if (depth == 1) return LM_OK;
            depth--;
        }
        const ProtobufCMessageDescriptor *desc = stack[depth - 1].desc;
        size_t end = stack[depth - 1].end;
        size_t at = pos;
        uint64_t tag;
        if (!read_varint(data, &pos, end, &tag))
            return err_set(LM_ERR_INVALID_FILE,
                           "%s: not a valid ONNX protobuf file: %s at byte %zu: the field tag is "
                           "truncated or malformed",
                           label, desc->short_name, at);
        uint64_t number = tag >> 3;
        int wt = (int)(tag & 7);
        if (number == 0 || number > 536870911u)
            return err_set(LM_ERR_INVALID_FILE,
                           "%s: not a valid ONNX protobuf file: %s at byte %zu: field number %llu "
                           "is out of range",
                           label, desc->short_name, at, (unsigned long long)number);
        const ProtobufCFieldDescriptor *fd =
            protobuf_c_message_descriptor_get_field(desc, (unsigned)number);
        if (fd) {
            int want = field_wire_type(fd);
            bool packed = fd->label == PROTOBUF_C_LABEL_REPEATED && want != 2 && wt == 2;
            if (wt != want && !packed)
                return err_set(LM_ERR_INVALID_FILE,
                               "%s: not a valid ONNX protobuf file: %s at byte %zu: field '%s' "
                               "has wire type %d (%s), expected %s",
                               label, desc->short_name, at, fd->name, wt, wire_type_name(wt),
                               wire_type_name(want));
        }
        uint64_t v;
        switch (wt) {
        case 0:
            if (!read_varint(data, &pos, end, &v))
                return err_set(LM_ERR_INVALID_FILE,
                               "%s: not a valid ONNX protobuf file: %s at byte %zu: a varint is "
                               "truncated or longer than 10 bytes",
                               label, desc->short_name, at);
            break;
        case 1:
        case 5: {
            size_t n = wt == 1 ? 8 : 4;
            if (end - pos < n)
                return err_set(LM_ERR_INVALID_FILE,
                               "%s: not a valid ONNX protobuf file: %s at byte %zu: a %zu-byte "
                               "value runs past the end (byte %zu)",
                               label, desc->short_name, at, n, end);
            pos += n;
            break;
        }
        case 2: {
            if (!read_varint(data, &pos, end, &v))
                return err_set(LM_ERR_INVALID_FILE,
                               "%s: not a valid ONNX protobuf file: %s at byte %zu: a length is "
                               "truncated or malformed",
                               label, desc->short_name, at);
            if (v > end - pos)
                return err_set(LM_ERR_INVALID_FILE,
                               "%s: not a valid ONNX protobuf file: %s at byte %zu: field %s%s%s"
                               "of %llu bytes runs past the end of its message (%zu bytes left)",
                               label, desc->short_name, at, fd ? "'" : "", fd ? fd->name : "",
                               fd ? "' " : "", (unsigned long long)v, end - pos);
            size_t len = (size_t)v;
            if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (depth == FE_PB_MAX_DEPTH)
                    return err_set(LM_ERR_INVALID_FILE,
                                   "%s: messages are nested more than %d deep (at byte %zu, "
                                   "field '%s' of %s)",
                                   label, FE_PB_MAX_DEPTH, at, fd->name, desc->short_name);
                stack[depth].desc = fd->descriptor;
                stack[depth].end = pos + len;
                depth++;
                continue;
            }
            if (fd && field_wire_type(fd) != 2) {
                /* A packed array: whole elements only. */
                int ew = field_wire_type(fd);
                if (ew == 0) {
                    size_t p = pos;
                    while (p < pos + len)
                        if (!read_varint(data, &p, pos + len, &v))
                            return err_set(LM_ERR_INVALID_FILE,
                                           "%s: not a valid ONNX protobuf file: %s at byte %zu: "
                                           "packed field '%s' ends inside a varint",
                                           label, desc->short_name, at, fd->name);
                } else if (len % (ew == 1 ? 8u : 4u) != 0) {
                    return err_set(LM_ERR_INVALID_FILE,
                                   "%s: not a valid ONNX protobuf file: %s at byte %zu: packed "
                                   "field '%s' has %zu bytes, not a multiple of %u",
                                   label, desc->short_name, at, fd->name, len, ew == 1 ? 8u : 4u);
                }
            }
            pos += len;
            break;
        }
        case 3:
        case 4:
            return err_set(LM_ERR_INVALID_FILE,
                           "%s: not a valid ONNX protobuf file: %s at byte %zu: groups (wire type "
                           "%d) are not used by ONNX",
                           label, desc->short_name, at, wt);
        default:
            return err_set(LM_ERR_INVALID_FILE,
                           "%s: not a valid ONNX protobuf file: %s at byte %zu: invalid wire type "
                           "%d",
                           label, desc->short_name, at, wt);
        }
    }
}

/* Scans, then unpacks with the capped allocator. */
static lm_status pb_unpack(const void *data, size_t size, const ProtobufCMessageDescriptor *desc,
                           const char *label, pb_budget *budget, ProtobufCAllocator *alloc,
                           ProtobufCMessage **out) {
    lm_status st = pb_scan(data, size, desc, label);
    if (st != LM_OK) return st;
    budget->live = 0;
    budget->cap = pb_cap_for(size);
    budget->over_cap = budget->out_of_memory = false;
    alloc->alloc = pb_alloc;
    alloc->free = pb_free;
    alloc->allocator_data = budget;
    *out = protobuf_c_message_unpack(desc, alloc, size, data);
    if (*out) return LM_OK;
    if (budget->out_of_memory)
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory while parsing", label);
    if (budget->over_cap)
        return err_set(LM_ERR_INVALID_FILE,
                       "%s: parsing the %zu-byte file needs more than %zu bytes of memory (a "
                       "hostile or corrupted file)",
                       label, size, budget->cap);
    return err_set(LM_ERR_INVALID_FILE, "%s: not a valid ONNX protobuf file (%s does not parse)",
                   label, desc->short_name);
}

/* ------------------------------------------------------------------ the
 * loader's state */

typedef struct opset_entry {
    const char *domain;
    int64_t version;
} opset_entry;

typedef struct loader {
    const char *label;
    const char *dir; /* external data's directory; NULL refuses it */
    fe_arena *arena;
    fe_graph *g;
    /* name -> value index (open addressing, FE_NONE empty) */
    uint32_t *map;
    uint32_t map_mask;
    uint32_t value_cap;
    /* The model's opset_import, for the nodes of subgraphs too. */
    const struct opset_entry *opsets;
    size_t opset_count;
    bool have_default;
} loader;

static lm_status oom(const loader *L) {
    return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", L->label);
}

static const char *str_or_empty(const char *s) {
    return s ? s : "";
}

static char *copy_str(loader *L, const char *s) {
    s = str_or_empty(s);
    return fe_arena_strndup(L->arena, s, strlen(s));
}

/* ------------------------------------------------------------------ tensors */

/* Tensor data: `bytes` (at most FE_MAX_TENSOR_BYTES), never a NULL pointer. */
static void *alloc_data(loader *L, uint64_t bytes) {
    return fe_arena_alloc(L->arena, bytes ? (size_t)bytes : 1);
}

/* A tensor's raw_data of this many bytes or more is not copied: the arena
 * takes protobuf-c's allocation of it (a model's weights, which would
 * otherwise be held twice until the message is freed). */
#define FE_PB_ADOPT_BYTES ((size_t)64 << 10)

/* The arena takes tp's raw_data (pb_alloc's block) as it is; NULL when out
 * of host memory. The message is the loader's own unpacked one: it gives up
 * the data, so freeing it leaves the data be. */
static void *adopt_raw_data(loader *L, const Onnx__TensorProto *tp) {
    Onnx__TensorProto *own = (Onnx__TensorProto *)tp;
    void *data = own->raw_data.data;
    if (!fe_arena_adopt(L->arena, (unsigned char *)data - PB_HEADER, own->raw_data.len))
        return NULL;
    own->raw_data.data = NULL;
    own->raw_data.len = 0;
    return data;
}

static bool parse_u64(const char *s, uint64_t *out) {
    if (!s || !*s) return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return false;
        if (!ck_mul_u64(v, 10, &v) || !ck_add_u64(v, (uint64_t)(*s - '0'), &v)) return false;
    }
    *out = v;
    return true;
}

/* A relative path with no ".." component (either separator). */
static bool location_is_safe(const char *loc) {
    if (!loc[0] || loc[0] == '/' || loc[0] == '\\') return false;
    const char *p = loc;
    while (*p) {
        const char *q = p;
        while (*q && *q != '/' && *q != '\\')
            q++;
        if (q - p == 2 && p[0] == '.' && p[1] == '.') return false;
        p = *q ? q + 1 : q;
    }
    return true;
}

static lm_status read_external(loader *L, const Onnx__TensorProto *tp, const char *what,
                               uint64_t bytes, void **dstp) {
    if (!L->dir)
        return err_set(LM_ERR_INVALID_FILE,
                       "%s: %s: external data is not allowed here (no model directory)", L->label,
                       what);
    const char *location = NULL;
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const char *key = str_or_empty(tp->external_data[i]->key);
        const char *value = str_or_empty(tp->external_data[i]->value);
        if (strcmp(key, "location") == 0) {
            location = value;
        } else if (strcmp(key, "offset") == 0) {
            if (!parse_u64(value, &offset))
                return err_set(LM_ERR_INVALID_FILE,
                               "%s: %s: external data offset '%s' is not a number", L->label, what,
                               value);
        } else if (strcmp(key, "length") == 0) {
            if (!parse_u64(value, &length))
                return err_set(LM_ERR_INVALID_FILE,
                               "%s: %s: external data length '%s' is not a number", L->label, what,
                               value);
            has_length = true;
        }
    }
    if (!location)
        return err_set(LM_ERR_INVALID_FILE, "%s: %s: external data has no location", L->label,
                       what);
    if (!location_is_safe(location))
        return err_set(LM_ERR_INVALID_FILE,
                       "%s: %s: external data location '%s' must be a relative path inside the "
                       "model's directory (no absolute path, no '..')",
                       L->label, what, location);
    size_t dir_len = strlen(L->dir), loc_len = strlen(location);
    char *path = malloc(dir_len + loc_len + 2);
    if (!path) return oom(L);
    memcpy(path, L->dir, dir_len);
    path[dir_len] = '/';
    memcpy(path + dir_len + 1, location, loc_len + 1);
    file_mapping map = {0};
    lm_status st = file_map(path, &map);
    if (st != LM_OK) {
        free(path);
        return err_prefix(st, "%s: %s: external data", L->label, what);
    }
    if (!has_length) length = offset <= map.size ? map.size - offset : 0;
    if (!ck_range_within(offset, length, map.size)) {
        st = err_set(LM_ERR_INVALID_FILE,
                     "%s: %s: external data [%llu, +%llu) lies outside '%s' (%zu bytes)", L->label,
                     what, (unsigned long long)offset, (unsigned long long)length, location,
                     map.size);
    } else if (length != bytes) {
        st = err_set(LM_ERR_INVALID_FILE,
                     "%s: %s: external data in '%s' is %llu bytes, expected %llu", L->label, what,
                     location, (unsigned long long)length, (unsigned long long)bytes);
    } else if (!(*dstp = alloc_data(L, bytes))) {
        st = oom(L);
    } else if (bytes) {
        memcpy(*dstp, (const uint8_t *)map.data + offset, (size_t)bytes);
    }
    file_unmap(&map);
    free(path);
    return st;
}

static lm_status size_mismatch(const loader *L, const char *what, const char *source,
                               uint64_t given, uint64_t expected, const fe_tensor *t) {
    fe_type ty = {.elem = t->elem, .rank = (int32_t)t->rank};
    memcpy(ty.dims, t->dims, sizeof ty.dims);
    char buf[160];
    return err_set(LM_ERR_INVALID_FILE, "%s: %s: %s holds %llu bytes, expected %llu for %s",
                   L->label, what, source, (unsigned long long)given, (unsigned long long)expected,
                   fe_type_format(&ty, buf, sizeof buf));
}

/* Copies typed-field storage into `*dstp` (allocated once its size is
 * checked), converting to the element type's
 * own representation. */
static lm_status copy_typed(loader *L, const Onnx__TensorProto *tp, const char *what,
                            const fe_tensor *t, uint64_t bytes, void **dstp) {
    uint64_t n = t->count;
    size_t es = fe_elem_size(t->elem);
    const char *field;
    size_t given;
    switch (t->elem) {
    case FE_FLOAT:
    case FE_COMPLEX64:
        field = "float_data";
        given = tp->n_float_data;
        break;
    case FE_INT32:
    case FE_INT16:
    case FE_INT8:
    case FE_UINT16:
    case FE_UINT8:
    case FE_BOOL:
    case FE_FLOAT16:
    case FE_BFLOAT16:
        field = "int32_data";
        given = tp->n_int32_data;
        break;
    case FE_INT64:
        field = "int64_data";
        given = tp->n_int64_data;
        break;
    case FE_DOUBLE:
    case FE_COMPLEX128:
        field = "double_data";
        given = tp->n_double_data;
        break;
    case FE_UINT32:
    case FE_UINT64:
        field = "uint64_data";
        given = tp->n_uint64_data;
        break;
    default:
        return err_set(LM_ERR_UNSUPPORTED, "%s: %s: element type %s is not supported", L->label,
                       what, fe_elem_name(t->elem));
    }
    /* Complex numbers take two entries each. */
    uint64_t per = (t->elem == FE_COMPLEX64 || t->elem == FE_COMPLEX128) ? 2 : 1;
    uint64_t want = n * per; /* bytes is bounded, so this cannot overflow */
    if (given != want) {
        char source[64];
        snprintf(source, sizeof source, "%s (%zu entries)", field, given);
        return size_mismatch(L, what, source, (uint64_t)given * (es / per), bytes, t);
    }
    void *dst = *dstp = alloc_data(L, bytes);
    if (!dst) return oom(L);
    if (n == 0) return LM_OK; /* the fields may be NULL */
    switch (t->elem) {
    case FE_FLOAT:
    case FE_COMPLEX64:
        memcpy(dst, tp->float_data, (size_t)bytes);
        break;
    case FE_INT32:
        memcpy(dst, tp->int32_data, (size_t)bytes);
        break;
    case FE_INT64:
        memcpy(dst, tp->int64_data, (size_t)bytes);
        break;
    case FE_DOUBLE:
    case FE_COMPLEX128:
        memcpy(dst, tp->double_data, (size_t)bytes);
        break;
    case FE_UINT64:
        memcpy(dst, tp->uint64_data, (size_t)bytes);
        break;
    case FE_UINT32:
        for (uint64_t i = 0; i < n; i++)
            ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
        break;
    case FE_INT16:
        for (uint64_t i = 0; i < n; i++)
            ((int16_t *)dst)[i] = (int16_t)tp->int32_data[i];
        break;
    case FE_INT8:
        for (uint64_t i = 0; i < n; i++)
            ((int8_t *)dst)[i] = (int8_t)tp->int32_data[i];
        break;
    case FE_UINT16:
    case FE_FLOAT16:
    case FE_BFLOAT16:
        /* float16/bfloat16: the bits in the low half (ONNX's convention). */
        for (uint64_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = (uint16_t)(uint32_t)tp->int32_data[i];
        break;
    case FE_UINT8:
        for (uint64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = (uint8_t)(uint32_t)tp->int32_data[i];
        break;
    case FE_BOOL:
        for (uint64_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
        break;
    default:
        break;
    }
    return LM_OK;
}

/* TensorProto -> fe_tensor in the arena. `what` names it in messages
 * ("initializer 'w'", "node 'c' (Constant): attribute 'value'"). */
static lm_status convert_tensor(loader *L, const Onnx__TensorProto *tp, const char *what,
                                fe_tensor **out) {
    fe_tensor *t = fe_arena_alloc(L->arena, sizeof *t);
    if (!t) return oom(L);
    if (tp->name && tp->name[0]) {
        t->name = copy_str(L, tp->name);
        if (!t->name) return oom(L);
    }
    int32_t dt = tp->has_data_type ? tp->data_type : 0;
    if (dt == FE_UNDEFINED)
        return err_set(LM_ERR_INVALID_FILE, "%s: %s: the tensor has no data type", L->label, what);
    if (dt < 0 || dt >= FE_ELEM_COUNT_)
        return err_set(LM_ERR_UNSUPPORTED, "%s: %s: element type %d is not supported", L->label,
                       what, (int)dt);
    t->elem = (fe_elem)dt;
    if (tp->n_dims > FE_MAX_RANK)
        return err_set(LM_ERR_UNSUPPORTED, "%s: %s: rank %zu is more than the %d supported",
                       L->label, what, tp->n_dims, FE_MAX_RANK);
    t->rank = (uint32_t)tp->n_dims;
    uint64_t count = 1;
    bool overflow = false;
    for (size_t i = 0; i < tp->n_dims; i++) {
        int64_t d = tp->dims[i];
        if (d < 0)
            return err_set(LM_ERR_INVALID_FILE, "%s: %s: dim %zu is negative (%lld)", L->label,
                           what, i, (long long)d);
        t->dims[i] = d;
        if (!ck_mul_u64(count, (uint64_t)d, &count) || count > (uint64_t)INT64_MAX) overflow = true;
    }
    if (overflow)
        return err_set(LM_ERR_INVALID_FILE, "%s: %s: the product of its dims overflows int64",
                       L->label, what);
    t->count = count;
    if (tp->segment)
        return err_set(LM_ERR_UNSUPPORTED, "%s: %s: segmented tensors are not supported", L->label,
                       what);
    if (t->elem == FE_STRING) {
        /* Strings are not held; the shape is. */
        if (tp->has_data_location &&
            tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
            return err_set(LM_ERR_UNSUPPORTED,
                           "%s: %s: string tensors with external data are not supported", L->label,
                           what);
        *out = t;
        return LM_OK;
    }
    size_t es = fe_elem_size(t->elem);
    uint64_t bytes;
    if (!ck_mul_u64(count, es, &bytes) || bytes > FE_MAX_TENSOR_BYTES)
        return err_set(LM_ERR_INVALID_FILE,
                       "%s: %s: %llu elements of %s exceed the %llu-byte limit on a tensor",
                       L->label, what, (unsigned long long)count, fe_elem_name(t->elem),
                       (unsigned long long)FE_MAX_TENSOR_BYTES);
    /* The data is allocated only once its source is known to hold exactly
     * `bytes`: a header claiming gigabytes with no data costs nothing. */
    void *dst = NULL;
    lm_status st = LM_OK;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        st = read_external(L, tp, what, bytes, &dst);
    } else if (tp->has_data_location &&
               tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT) {
        st = err_set(LM_ERR_INVALID_FILE, "%s: %s: unknown data_location %d", L->label, what,
                     (int)tp->data_location);
    } else if (tp->has_raw_data) {
        if (tp->raw_data.len != bytes)
            return size_mismatch(L, what, "raw_data", tp->raw_data.len, bytes, t);
        if (bytes >= FE_PB_ADOPT_BYTES) {
            if (!(dst = adopt_raw_data(L, tp))) return oom(L);
        } else {
            if (!(dst = alloc_data(L, bytes))) return oom(L);
            if (bytes) memcpy(dst, tp->raw_data.data, (size_t)bytes);
        }
    } else {
        st = copy_typed(L, tp, what, t, bytes, &dst);
    }
    if (st != LM_OK) return st;
    if (t->elem == FE_BOOL) {
        /* Any nonzero byte is true; keep the documented 0/1. */
        uint8_t *b = dst;
        for (uint64_t i = 0; i < count; i++)
            b[i] = b[i] != 0;
    }
    t->data = dst;
    *out = t;
    return LM_OK;
}

/* ------------------------------------------------------------------ types */

static const char *type_kind_name(Onnx__TypeProto__ValueCase c) {
    switch (c) {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
        return "sequence";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        return "map";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
        return "optional";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        return "sparse tensor";
    default:
        return "untyped";
    }
}

static void type_unknown(fe_type *t) {
    memset(t, 0, sizeof *t);
    t->rank = -1;
}

/* A ValueInfoProto's type. `strict` (graph inputs and outputs): a
 * non-tensor type or an unknown element type is an error, except an
 * optional (*out_opt) and a sequence of tensors (*out_seq), either or
 * both, which give their tensors' type; otherwise (value_info) such a type
 * is left unknown. Rank > FE_MAX_RANK is an error either way. */
static lm_status convert_type(loader *L, const Onnx__ValueInfoProto *vi, const char *kind,
                              bool strict, fe_type *out, bool *out_seq, bool *out_opt) {
    type_unknown(out);
    *out_seq = *out_opt = false;
    const Onnx__TypeProto *tp = vi->type;
    const char *name = str_or_empty(vi->name);
    if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return LM_OK;
    if (strict && tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && tp->optional_type &&
        tp->optional_type->elem_type) {
        *out_opt = true;
        tp = tp->optional_type->elem_type;
    }
    if (strict && tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && tp->sequence_type &&
        tp->sequence_type->elem_type &&
        tp->sequence_type->elem_type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        *out_seq = true;
        tp = tp->sequence_type->elem_type;
    }
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
        if (!strict) return LM_OK;
        return err_set(LM_ERR_UNSUPPORTED, "%s: %s '%s': %s types are not supported", L->label,
                       kind, name, type_kind_name(tp->value_case));
    }
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (!tt) return LM_OK;
    int32_t elem = tt->has_elem_type ? tt->elem_type : 0;
    if (elem < 0 || elem >= FE_ELEM_COUNT_) {
        if (strict)
            return err_set(LM_ERR_UNSUPPORTED, "%s: %s '%s': element type %d is not supported",
                           L->label, kind, name, (int)elem);
        elem = 0;
    }
    out->elem = (fe_elem)elem;
    if (!tt->shape) return LM_OK;
    if (tt->shape->n_dim > FE_MAX_RANK)
        return err_set(LM_ERR_UNSUPPORTED, "%s: %s '%s': rank %zu is more than the %d supported",
                       L->label, kind, name, tt->shape->n_dim, FE_MAX_RANK);
    out->rank = (int32_t)tt->shape->n_dim;
    for (size_t i = 0; i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        out->dims[i] = -1;
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
            d->dim_value >= 0) {
            out->dims[i] = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   d->dim_param && d->dim_param[0]) {
            out->sym[i] = copy_str(L, d->dim_param);
            if (!out->sym[i]) return oom(L);
        }
    }
    return LM_OK;
}

/* ------------------------------------------------------------------ names */

static uint32_t hash_str(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static uint32_t *map_slot(loader *L, const char *name) {
    uint32_t i = hash_str(name) & L->map_mask;
    for (;;) {
        uint32_t v = L->map[i];
        if (v == FE_NONE || strcmp(L->g->values[v].name, name) == 0) return &L->map[i];
        i = (i + 1) & L->map_mask;
    }
}

static uint32_t find_value(loader *L, const char *name) {
    return *map_slot(L, name);
}

/* Adds a value named `name` (must be new). */
static lm_status add_value(loader *L, const char *name, uint32_t *out) {
    uint32_t *slot = map_slot(L, name);
    fe_graph *g = L->g;
    if (g->value_count >= L->value_cap) /* cannot happen: the bound counts every definition */
        return err_set(LM_ERR_INVALID_FILE, "%s: too many values", L->label);
    fe_value *v = &g->values[g->value_count];
    v->name = copy_str(L, name);
    if (!v->name) return oom(L);
    type_unknown(&v->type);
    v->producer = FE_NONE;
    *slot = g->value_count;
    *out = g->value_count++;
    return LM_OK;
}

/* ------------------------------------------------------------------ nodes */

static const char *node_label_raw(const Onnx__NodeProto *n, size_t index, char *buf, size_t size) {
    fe_node tmp = {.name = str_or_empty(n->name),
                   .op_type = str_or_empty(n->op_type),
                   .index = (uint32_t)index};
    return fe_node_label(&tmp, buf, size);
}

static fe_attr_type infer_attr_type(const Onnx__AttributeProto *a) {
    if (a->has_type) return (fe_attr_type)a->type;
    /* Old models omit the type: take the one field that is set. */
    if (a->has_f) return FE_ATTR_FLOAT;
    if (a->has_i) return FE_ATTR_INT;
    if (a->has_s) return FE_ATTR_STRING;
    if (a->t) return FE_ATTR_TENSOR;
    if (a->g) return FE_ATTR_GRAPH;
    if (a->sparse_tensor) return FE_ATTR_SPARSE_TENSOR;
    if (a->tp) return FE_ATTR_TYPE_PROTO;
    if (a->n_floats) return FE_ATTR_FLOATS;
    if (a->n_ints) return FE_ATTR_INTS;
    if (a->n_strings) return FE_ATTR_STRINGS;
    if (a->n_tensors) return FE_ATTR_TENSORS;
    if (a->n_graphs) return FE_ATTR_GRAPHS;
    if (a->n_sparse_tensors) return FE_ATTR_SPARSE_TENSORS;
    if (a->n_type_protos) return FE_ATTR_TYPE_PROTOS;
    return FE_ATTR_UNDEFINED;
}

static lm_status convert_subgraph(loader *L, const Onnx__GraphProto *gp, const char *nlabel,
                                  const char *attr, fe_subgraph **out);

static lm_status convert_attr(loader *L, const Onnx__AttributeProto *a, const char *nlabel,
                              fe_attr *out) {
    const char *name = str_or_empty(a->name);
    if (!name[0])
        return err_set(LM_ERR_INVALID_FILE, "%s: node %s: an attribute has no name", L->label,
                       nlabel);
    out->name = copy_str(L, name);
    if (!out->name) return oom(L);
    out->type = infer_attr_type(a);
    switch (out->type) {
    case FE_ATTR_FLOAT:
        out->f = a->f;
        break;
    case FE_ATTR_INT:
        out->i = a->i;
        break;
    case FE_ATTR_STRING:
        out->s = fe_arena_strndup(L->arena, (const char *)a->s.data, a->s.len);
        if (!out->s) return oom(L);
        out->s_len = a->s.len;
        break;
    case FE_ATTR_TENSOR: {
        char what[512];
        snprintf(what, sizeof what, "node %s: attribute '%s'", nlabel, name);
        if (!a->t)
            return err_set(LM_ERR_INVALID_FILE, "%s: %s: a TENSOR attribute with no tensor",
                           L->label, what);
        fe_tensor *t;
        lm_status st = convert_tensor(L, a->t, what, &t);
        if (st != LM_OK) return st;
        out->t = t;
        break;
    }
    case FE_ATTR_FLOATS: {
        float *f = fe_arena_alloc(L->arena, a->n_floats * sizeof *f);
        if (!f) return oom(L);
        if (a->n_floats) memcpy(f, a->floats, a->n_floats * sizeof *f);
        out->floats = f;
        out->count = a->n_floats;
        break;
    }
    case FE_ATTR_INTS: {
        int64_t *v = fe_arena_alloc(L->arena, a->n_ints * sizeof *v);
        if (!v) return oom(L);
        if (a->n_ints) memcpy(v, a->ints, a->n_ints * sizeof *v);
        out->ints = v;
        out->count = a->n_ints;
        break;
    }
    case FE_ATTR_STRINGS: {
        const char **v = fe_arena_alloc(L->arena, a->n_strings * sizeof *v);
        if (!v) return oom(L);
        for (size_t i = 0; i < a->n_strings; i++) {
            v[i] = fe_arena_strndup(L->arena, (const char *)a->strings[i].data, a->strings[i].len);
            if (!v[i]) return oom(L);
        }
        out->strings = v;
        out->count = a->n_strings;
        break;
    }
    case FE_ATTR_GRAPH: {
        if (!a->g)
            return err_set(LM_ERR_INVALID_FILE, "%s: node %s: graph attribute '%s' has no graph",
                           L->label, nlabel, name);
        fe_subgraph *sg = NULL;
        lm_status st = convert_subgraph(L, a->g, nlabel, name, &sg);
        if (st != LM_OK) return st;
        out->graph = sg;
        out->count = 1;
        break;
    }
    /* Recorded by type (and count) only: no op this compiler runs reads them. */
    case FE_ATTR_SPARSE_TENSOR:
    case FE_ATTR_TYPE_PROTO:
        out->count = 1;
        break;
    case FE_ATTR_TENSORS:
        out->count = a->n_tensors;
        break;
    case FE_ATTR_GRAPHS:
        out->count = a->n_graphs;
        break;
    case FE_ATTR_SPARSE_TENSORS:
        out->count = a->n_sparse_tensors;
        break;
    case FE_ATTR_TYPE_PROTOS:
        out->count = a->n_type_protos;
        break;
    default:
        if (out->type == FE_ATTR_UNDEFINED)
            return err_set(LM_ERR_INVALID_FILE, "%s: node %s: attribute '%s' has no type", L->label,
                           nlabel, name);
        return err_set(LM_ERR_INVALID_FILE, "%s: node %s: attribute '%s' has unknown type %d",
                       L->label, nlabel, name, (int)out->type);
    }
    return LM_OK;
}

/* ------------------------------------------------------------------ sort */

/* Min-heap of node file positions: Kahn's algorithm taking the earliest
 * ready node keeps a sorted file's order. */
static void heap_push(uint32_t *h, uint32_t *n, uint32_t v) {
    uint32_t i = (*n)++;
    h[i] = v;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (h[p] <= h[i]) break;
        uint32_t t = h[p];
        h[p] = h[i];
        h[i] = t;
        i = p;
    }
}

static uint32_t heap_pop(uint32_t *h, uint32_t *n) {
    uint32_t top = h[0];
    h[0] = h[--(*n)];
    uint32_t i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && h[l] < h[m]) m = l;
        if (r < *n && h[r] < h[m]) m = r;
        if (m == i) break;
        uint32_t t = h[m];
        h[m] = h[i];
        h[i] = t;
        i = m;
    }
    return top;
}

/* Sorts g->nodes (in file order, producer = file position) topologically
 * and renumbers producers to sorted positions. */
static lm_status sort_nodes(loader *L) {
    fe_graph *g = L->g;
    uint32_t n = g->node_count;
    if (n == 0) return LM_OK;
    uint64_t edges = 0;
    for (uint32_t i = 0; i < n; i++)
        edges += (uint64_t)g->nodes[i].input_count + g->nodes[i].implicit_count;
    if (edges > UINT32_MAX)
        return err_set(LM_ERR_INVALID_FILE, "%s: too many node inputs", L->label);
    uint32_t *indeg = calloc(n, sizeof *indeg);
    uint32_t *start = calloc((size_t)n + 1, sizeof *start);
    uint32_t *adj = malloc((edges ? edges : 1) * sizeof *adj);
    uint32_t *heap = malloc((size_t)n * sizeof *heap);
    uint32_t *order = malloc((size_t)n * sizeof *order);
    lm_status st = LM_OK;
    if (!indeg || !start || !adj || !heap || !order) {
        st = oom(L);
        goto done;
    }
    /* Edges producer -> consumer, as CSR by producer (a subgraph's reads
     * of this graph are edges too). */
    for (uint32_t i = 0; i < n; i++) {
        const fe_node *nd = &g->nodes[i];
        for (uint32_t k = 0; k < nd->input_count + nd->implicit_count; k++) {
            uint32_t v = k < nd->input_count ? nd->inputs[k] : nd->implicit[k - nd->input_count];
            if (v == FE_NONE || g->values[v].producer == FE_NONE) continue;
            start[g->values[v].producer + 1]++;
            indeg[i]++;
        }
    }
    for (uint32_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    {
        uint32_t *fill = heap; /* reused as a cursor array before the heap is needed */
        for (uint32_t i = 0; i < n; i++)
            fill[i] = start[i];
        for (uint32_t i = 0; i < n; i++) {
            const fe_node *nd = &g->nodes[i];
            for (uint32_t k = 0; k < nd->input_count + nd->implicit_count; k++) {
                uint32_t v =
                    k < nd->input_count ? nd->inputs[k] : nd->implicit[k - nd->input_count];
                if (v == FE_NONE || g->values[v].producer == FE_NONE) continue;
                adj[fill[g->values[v].producer]++] = i;
            }
        }
    }
    uint32_t hn = 0, done_count = 0;
    for (uint32_t i = 0; i < n; i++)
        if (indeg[i] == 0) heap_push(heap, &hn, i);
    while (hn) {
        uint32_t u = heap_pop(heap, &hn);
        order[done_count++] = u;
        for (uint32_t e = start[u]; e < start[u + 1]; e++)
            if (--indeg[adj[e]] == 0) heap_push(heap, &hn, adj[e]);
    }
    if (done_count < n) {
        /* Walk back through unfinished producers until a node repeats: it
         * is on a cycle. `heap` marks the step at which a node was seen. */
        uint32_t u = 0;
        while (indeg[u] == 0)
            u++;
        memset(heap, 0xff, (size_t)n * sizeof *heap);
        uint32_t step = 0;
        while (heap[u] == UINT32_MAX) {
            heap[u] = step++;
            const fe_node *nd = &g->nodes[u];
            uint32_t next = u;
            for (uint32_t k = 0; k < nd->input_count; k++) {
                uint32_t v = nd->inputs[k];
                if (v == FE_NONE) continue;
                uint32_t p = g->values[v].producer;
                if (p != FE_NONE && indeg[p] != 0) {
                    next = p;
                    break;
                }
            }
            u = next;
        }
        /* u is on the cycle: list it (consumer first, then what it reads). */
        char msg[600] = "";
        size_t len = 0;
        uint32_t w = u;
        for (unsigned hop = 0; hop < 6; hop++) {
            char lb[200];
            fe_node_label(&g->nodes[w], lb, sizeof lb);
            int wr = snprintf(msg + len, sizeof msg - len, "%s%s", hop ? " <- " : "", lb);
            if (wr < 0 || (size_t)wr >= sizeof msg - len) break;
            len += (size_t)wr;
            uint32_t next = w;
            const fe_node *nd = &g->nodes[w];
            for (uint32_t k = 0; k < nd->input_count; k++) {
                uint32_t v = nd->inputs[k];
                if (v == FE_NONE) continue;
                uint32_t p = g->values[v].producer;
                if (p != FE_NONE && indeg[p] != 0) {
                    next = p;
                    break;
                }
            }
            w = next;
            if (w == u) break;
        }
        char lb[200];
        st = err_set(LM_ERR_INVALID_FILE,
                     "%s: node %s is on a cycle (%s%s): the graph cannot be sorted", L->label,
                     fe_node_label(&g->nodes[u], lb, sizeof lb), msg, w == u ? " <- ..." : " ...");
        goto done;
    }
    {
        fe_node *sorted = fe_arena_alloc(L->arena, (size_t)n * sizeof *sorted);
        if (!sorted) {
            st = oom(L);
            goto done;
        }
        /* indeg now serves as file position -> sorted position. */
        for (uint32_t k = 0; k < n; k++) {
            sorted[k] = g->nodes[order[k]];
            indeg[order[k]] = k;
        }
        for (uint32_t v = 0; v < g->value_count; v++)
            if (g->values[v].producer != FE_NONE)
                g->values[v].producer = indeg[g->values[v].producer];
        g->nodes = sorted;
    }
done:
    free(indeg);
    free(start);
    free(adj);
    free(heap);
    free(order);
    return st;
}

/* ------------------------------------------------------------------ model */

static const char *norm_domain(const char *d) {
    d = str_or_empty(d);
    return strcmp(d, "ai.onnx") == 0 ? "" : d;
}

static bool subgraph_defines(const fe_subgraph *sg, const char *name);

/* Outside values one node's subgraphs may read (the list is searched
 * linearly). */
#define FE_MAX_IMPLICIT 4096

/* A name, once, in a growing list (arena; *cap grows by doubling). */
static lm_status add_name(loader *L, const char ***list, uint32_t *count, uint32_t *cap,
                          const char *name) {
    for (uint32_t i = 0; i < *count; i++)
        if (strcmp((*list)[i], name) == 0) return LM_OK;
    if (*count == FE_MAX_IMPLICIT)
        return err_set(LM_ERR_UNSUPPORTED,
                       "%s: a node's subgraphs read more than %d values from outside them",
                       L->label, FE_MAX_IMPLICIT);
    if (*count == *cap) {
        uint32_t grown = *cap ? 2 * *cap : 8;
        const char **l = fe_arena_alloc(L->arena, grown * sizeof *l);
        if (!l) return oom(L);
        if (*count) memcpy(l, *list, *count * sizeof *l);
        *list = l;
        *cap = grown;
    }
    (*list)[(*count)++] = name;
    return LM_OK;
}

/* A node's name, op, domain, opset and attributes (subgraphs converted);
 * implicit_names: what its subgraphs read from outside them. */
static lm_status convert_node_head(loader *L, const Onnx__NodeProto *np, uint32_t index,
                                   const char *lb, fe_node *nd) {
    nd->index = index;
    nd->name = copy_str(L, np->name);
    nd->op_type = copy_str(L, np->op_type);
    const char *dom = norm_domain(np->domain);
    nd->domain = copy_str(L, dom);
    if (!nd->name || !nd->op_type || !nd->domain) return oom(L);
    if (!nd->op_type[0])
        return err_set(LM_ERR_INVALID_FILE, "%s: node %s has no op_type", L->label, lb);
    bool found = false;
    for (size_t k = 0; k < L->opset_count; k++)
        if (strcmp(L->opsets[k].domain, dom) == 0) {
            nd->opset = L->opsets[k].version;
            found = true;
        }
    if (!dom[0] && L->have_default && !found) {
        nd->opset = L->g->opset;
        found = true;
    }
    if (!found)
        return err_set(LM_ERR_INVALID_FILE,
                       "%s: node %s: domain '%s' is not imported by the model (opset_import)",
                       L->label, lb, dom[0] ? dom : "ai.onnx");
    nd->attr_count = (uint32_t)np->n_attribute;
    nd->attrs = fe_arena_alloc(L->arena, np->n_attribute * sizeof *nd->attrs);
    if (!nd->attrs) return oom(L);
    uint32_t cap = 0;
    for (size_t k = 0; k < np->n_attribute; k++) {
        lm_status st = convert_attr(L, np->attribute[k], lb, &nd->attrs[k]);
        if (st != LM_OK) return st;
        for (size_t j = 0; j < k; j++)
            if (strcmp(nd->attrs[j].name, nd->attrs[k].name) == 0)
                return err_set(LM_ERR_INVALID_FILE, "%s: node %s: attribute '%s' is given twice",
                               L->label, lb, nd->attrs[k].name);
        const fe_subgraph *sg = nd->attrs[k].graph;
        if (!sg) continue;
        /* Free names of the subgraph: read there, defined neither there nor
         * by its nested subgraphs' own definitions. */
        for (uint32_t i = 0; i < sg->node_count; i++) {
            const fe_node *sn = &sg->nodes[i];
            for (uint32_t j = 0; j < sn->input_count + sn->implicit_count; j++) {
                const char *r = j < sn->input_count ? sg->in_names[i][j]
                                                    : sn->implicit_names[j - sn->input_count];
                if (!r[0] || subgraph_defines(sg, r)) continue;
                if ((st = add_name(L, &nd->implicit_names, &nd->implicit_count, &cap, r)))
                    return st;
            }
        }
        for (uint32_t j = 0; j < sg->output_count; j++)
            if (!subgraph_defines(sg, sg->outputs[j]) &&
                (st = add_name(L, &nd->implicit_names, &nd->implicit_count, &cap, sg->outputs[j])))
                return st;
    }
    /* Gradient differentiates the ops computing its attribute y, so it
     * comes after them, as if it read y. */
    if (!strcmp(dom, FE_TRAINING_DOMAIN) && !strcmp(nd->op_type, "Gradient"))
        for (uint32_t k = 0; k < nd->attr_count; k++)
            if (!strcmp(nd->attrs[k].name, "y") && nd->attrs[k].type == FE_ATTR_STRING) {
                lm_status st =
                    add_name(L, &nd->implicit_names, &nd->implicit_count, &cap, nd->attrs[k].s);
                if (st) return st;
            }
    return LM_OK;
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool subgraph_defines(const fe_subgraph *sg, const char *name) {
    return bsearch(&name, sg->defined, sg->defined_count, sizeof *sg->defined, cmp_name) != NULL;
}

static const char **copy_names(loader *L, char **names, size_t count) {
    const char **out = fe_arena_alloc(L->arena, (count ? count : 1) * sizeof *out);
    for (size_t i = 0; out && i < count; i++)
        if (!(out[i] = copy_str(L, names[i]))) return NULL;
    return out;
}

/* A graph attribute, by name (fe_subgraph). Its names must be defined once
 * within it; what it reads from outside is resolved where it is inlined. */
static lm_status convert_subgraph(loader *L, const Onnx__GraphProto *gp, const char *nlabel,
                                  const char *attr, fe_subgraph **out) {
    if (gp->n_node > FE_MAX_NODES)
        return err_set(LM_ERR_INVALID_FILE, "%s: node %s: subgraph '%s' has %zu nodes", L->label,
                       nlabel, attr, gp->n_node);
    if (gp->n_sparse_initializer)
        return err_set(LM_ERR_UNSUPPORTED,
                       "%s: node %s: subgraph '%s': sparse initializers are "
                       "not supported",
                       L->label, nlabel, attr);
    fe_subgraph *sg = fe_arena_alloc(L->arena, sizeof *sg);
    if (!sg) return oom(L);
    sg->name = copy_str(L, attr);
    sg->input_count = (uint32_t)gp->n_input;
    sg->output_count = (uint32_t)gp->n_output;
    sg->init_count = (uint32_t)gp->n_initializer;
    sg->node_count = (uint32_t)gp->n_node;
    sg->inputs = fe_arena_alloc(L->arena, (gp->n_input ? gp->n_input : 1) * sizeof *sg->inputs);
    sg->outputs = fe_arena_alloc(L->arena, (gp->n_output ? gp->n_output : 1) * sizeof *sg->outputs);
    sg->init_names = fe_arena_alloc(L->arena, (gp->n_initializer ? gp->n_initializer : 1) *
                                                  sizeof *sg->init_names);
    sg->inits =
        fe_arena_alloc(L->arena, (gp->n_initializer ? gp->n_initializer : 1) * sizeof *sg->inits);
    sg->nodes = fe_arena_alloc(L->arena, (gp->n_node ? gp->n_node : 1) * sizeof *sg->nodes);
    sg->in_names = fe_arena_alloc(L->arena, (gp->n_node ? gp->n_node : 1) * sizeof *sg->in_names);
    sg->out_names = fe_arena_alloc(L->arena, (gp->n_node ? gp->n_node : 1) * sizeof *sg->out_names);
    if (!sg->name || !sg->inputs || !sg->outputs || !sg->init_names || !sg->inits || !sg->nodes ||
        !sg->in_names || !sg->out_names)
        return oom(L);
    for (size_t i = 0; i < gp->n_input; i++)
        if (!(sg->inputs[i] = copy_str(L, gp->input[i]->name))) return oom(L);
    for (size_t i = 0; i < gp->n_output; i++)
        if (!(sg->outputs[i] = copy_str(L, gp->output[i]->name))) return oom(L);
    for (size_t i = 0; i < gp->n_initializer; i++) {
        char what[400];
        snprintf(what, sizeof what, "node %s: subgraph '%s': initializer '%s'", nlabel, attr,
                 str_or_empty(gp->initializer[i]->name));
        fe_tensor *t;
        lm_status st = convert_tensor(L, gp->initializer[i], what, &t);
        if (st != LM_OK) return st;
        sg->inits[i] = t;
        if (!(sg->init_names[i] = copy_str(L, gp->initializer[i]->name))) return oom(L);
    }
    for (uint32_t i = 0; i < sg->node_count; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        char lb[300];
        node_label_raw(np, i, lb, sizeof lb);
        fe_node *nd = &sg->nodes[i];
        lm_status st = convert_node_head(L, np, i, lb, nd);
        if (st != LM_OK) return st;
        nd->input_count = (uint32_t)np->n_input;
        nd->output_count = (uint32_t)np->n_output;
        sg->in_names[i] = copy_names(L, np->input, np->n_input);
        sg->out_names[i] = copy_names(L, np->output, np->n_output);
        if (!sg->in_names[i] || !sg->out_names[i]) return oom(L);
    }
    /* Every name it defines, sorted: each defined once. */
    uint64_t defs = (uint64_t)sg->input_count + sg->init_count;
    for (uint32_t i = 0; i < sg->node_count; i++)
        defs += sg->nodes[i].output_count;
    if (defs > FE_MAX_VALUES)
        return err_set(LM_ERR_INVALID_FILE, "%s: node %s: subgraph '%s' defines %llu values",
                       L->label, nlabel, attr, (unsigned long long)defs);
    sg->defined = fe_arena_alloc(L->arena, (defs ? defs : 1) * sizeof *sg->defined);
    if (!sg->defined) return oom(L);
    for (uint32_t i = 0; i < sg->input_count; i++)
        sg->defined[sg->defined_count++] = sg->inputs[i];
    for (uint32_t i = 0; i < sg->init_count; i++)
        sg->defined[sg->defined_count++] = sg->init_names[i];
    for (uint32_t i = 0; i < sg->node_count; i++)
        for (uint32_t j = 0; j < sg->nodes[i].output_count; j++)
            if (sg->out_names[i][j][0]) sg->defined[sg->defined_count++] = sg->out_names[i][j];
    qsort(sg->defined, sg->defined_count, sizeof *sg->defined, cmp_name);
    for (uint32_t i = 1; i < sg->defined_count; i++)
        if (!strcmp(sg->defined[i - 1], sg->defined[i]))
            return err_set(LM_ERR_INVALID_FILE,
                           "%s: node %s: subgraph '%s' defines '%s' more than once", L->label,
                           nlabel, attr, sg->defined[i]);
    *out = sg;
    return LM_OK;
}

static lm_status convert_model(loader *L, const Onnx__ModelProto *m) {
    fe_graph *g = L->g;
    g->ir_version = m->has_ir_version ? m->ir_version : 0;
    g->producer = copy_str(L, m->producer_name);
    if (!g->producer) return oom(L);

    /* Opsets. */
    opset_entry *opsets = fe_arena_alloc(L->arena, m->n_opset_import * sizeof *opsets);
    if (!opsets) return oom(L);
    bool have_default = false;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *d = norm_domain(m->opset_import[i]->domain);
        for (size_t k = 0; k < i; k++)
            if (strcmp(opsets[k].domain, d) == 0)
                return err_set(LM_ERR_INVALID_FILE, "%s: opset_import lists domain '%s' twice",
                               L->label, d[0] ? d : "ai.onnx");
        opsets[i].domain = d;
        opsets[i].version = m->opset_import[i]->has_version ? m->opset_import[i]->version : 0;
        if (!d[0]) {
            have_default = true;
            g->opset = opsets[i].version;
        }
    }
    /* Before IR version 3 models had no opset_import: opset 1. */
    if (!have_default && g->ir_version < 3) {
        have_default = true;
        g->opset = 1;
    }
    L->opsets = opsets;
    L->opset_count = m->n_opset_import;
    L->have_default = have_default;

    const Onnx__GraphProto *gp = m->graph;
    if (!gp) return err_set(LM_ERR_INVALID_FILE, "%s: the model has no graph", L->label);
    if (gp->n_node > FE_MAX_NODES)
        return err_set(LM_ERR_INVALID_FILE, "%s: %zu nodes exceed the limit of %u", L->label,
                       gp->n_node, FE_MAX_NODES);
    if (gp->n_sparse_initializer)
        return err_set(LM_ERR_UNSUPPORTED, "%s: sparse initializer '%s' is not supported", L->label,
                       gp->sparse_initializer[0]->values
                           ? str_or_empty(gp->sparse_initializer[0]->values->name)
                           : "");

    /* Every definition makes at most one value. */
    uint64_t bound = (uint64_t)gp->n_initializer + gp->n_input;
    for (size_t i = 0; i < gp->n_node; i++)
        bound += gp->node[i]->n_output;
    if (bound > FE_MAX_VALUES)
        return err_set(LM_ERR_INVALID_FILE, "%s: %llu values exceed the limit of %u", L->label,
                       (unsigned long long)bound, FE_MAX_VALUES);
    L->value_cap = (uint32_t)bound;
    g->values = fe_arena_alloc(L->arena, (size_t)bound * sizeof *g->values);
    uint32_t map_size = 16;
    while (map_size < 2 * bound)
        map_size *= 2;
    L->map = malloc((size_t)map_size * sizeof *L->map);
    if (!g->values || !L->map) return oom(L);
    memset(L->map, 0xff, (size_t)map_size * sizeof *L->map);
    L->map_mask = map_size - 1;

    /* Initializers. */
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        const char *name = str_or_empty(tp->name);
        if (!name[0])
            return err_set(LM_ERR_INVALID_FILE, "%s: initializer #%zu has no name", L->label, i);
        if (find_value(L, name) != FE_NONE)
            return err_set(LM_ERR_INVALID_FILE, "%s: initializer '%s' is defined twice", L->label,
                           name);
        char what[400];
        snprintf(what, sizeof what, "initializer '%s'", name);
        fe_tensor *t;
        lm_status st = convert_tensor(L, tp, what, &t);
        if (st != LM_OK) return st;
        uint32_t v;
        st = add_value(L, name, &v);
        if (st != LM_OK) return st;
        fe_value *val = &g->values[v];
        val->konst = t;
        val->initializer = true;
        val->type.elem = t->elem;
        val->type.rank = (int32_t)t->rank;
        memcpy(val->type.dims, t->dims, sizeof t->dims);
    }

    /* Graph inputs (an initializer listed as an input stays an initializer:
     * its value is the default). */
    g->inputs = fe_arena_alloc(L->arena, gp->n_input * sizeof *g->inputs);
    if (!g->inputs) return oom(L);
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        const char *name = str_or_empty(vi->name);
        if (!name[0])
            return err_set(LM_ERR_INVALID_FILE, "%s: graph input #%zu has no name", L->label, i);
        uint32_t v = find_value(L, name);
        if (v != FE_NONE) {
            if (g->values[v].initializer) continue;
            return err_set(LM_ERR_INVALID_FILE, "%s: graph input '%s' is listed twice", L->label,
                           name);
        }
        fe_type ty;
        bool seq, opt;
        lm_status st = convert_type(L, vi, "graph input", true, &ty, &seq, &opt);
        if (st != LM_OK) return st;
        st = add_value(L, name, &v);
        if (st != LM_OK) return st;
        g->values[v].type = ty;
        g->values[v].graph_input = true;
        g->values[v].declared_seq = seq;
        g->values[v].declared_opt = opt;
        g->inputs[g->input_count++] = v;
    }

    /* Nodes, in file order; their outputs first, so that inputs may refer
     * to values produced later in an unsorted file. */
    uint32_t nn = (uint32_t)gp->n_node;
    g->nodes = fe_arena_alloc(L->arena, (size_t)nn * sizeof *g->nodes);
    if (!g->nodes) return oom(L);
    g->node_count = nn;
    for (uint32_t i = 0; i < nn; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        fe_node *nd = &g->nodes[i];
        char lb[300];
        node_label_raw(np, i, lb, sizeof lb);
        lm_status hst = convert_node_head(L, np, i, lb, nd);
        if (hst != LM_OK) return hst;
        nd->output_count = (uint32_t)np->n_output;
        nd->outputs = fe_arena_alloc(L->arena, np->n_output * sizeof *nd->outputs);
        if (!nd->outputs) return oom(L);
        for (size_t k = 0; k < np->n_output; k++) {
            const char *name = str_or_empty(np->output[k]);
            if (!name[0]) {
                nd->outputs[k] = FE_NONE;
                continue;
            }
            uint32_t v = find_value(L, name);
            if (v != FE_NONE) {
                const fe_value *old = &g->values[v];
                char olb[300];
                if (old->producer != FE_NONE)
                    node_label_raw(gp->node[old->producer], old->producer, olb, sizeof olb);
                return err_set(LM_ERR_INVALID_FILE,
                               "%s: node %s: output '%s' is already defined %s%s", L->label, lb,
                               name,
                               old->producer != FE_NONE ? "as an output of node "
                               : old->initializer       ? "as an initializer"
                                                        : "as a graph input",
                               old->producer != FE_NONE ? olb : "");
            }
            lm_status st = add_value(L, name, &v);
            if (st != LM_OK) return st;
            g->values[v].producer = i;
            nd->outputs[k] = v;
        }
    }
    for (uint32_t i = 0; i < nn; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        fe_node *nd = &g->nodes[i];
        nd->input_count = (uint32_t)np->n_input;
        nd->inputs = fe_arena_alloc(L->arena, np->n_input * sizeof *nd->inputs);
        if (!nd->inputs) return oom(L);
        for (size_t k = 0; k < np->n_input; k++) {
            const char *name = str_or_empty(np->input[k]);
            if (!name[0]) {
                nd->inputs[k] = FE_NONE;
                continue;
            }
            uint32_t v = find_value(L, name);
            if (v == FE_NONE) {
                char lb[300];
                return err_set(LM_ERR_INVALID_FILE, "%s: node %s: input '%s' is not defined",
                               L->label, node_label_raw(np, i, lb, sizeof lb), name);
            }
            nd->inputs[k] = v;
        }
        /* What its subgraphs read from this graph. */
        if (nd->implicit_count) {
            nd->implicit = fe_arena_alloc(L->arena, nd->implicit_count * sizeof *nd->implicit);
            if (!nd->implicit) return oom(L);
        }
        for (uint32_t k = 0; k < nd->implicit_count; k++) {
            uint32_t v = find_value(L, nd->implicit_names[k]);
            if (v == FE_NONE) {
                char lb[300];
                return err_set(LM_ERR_INVALID_FILE, "%s: node %s: %s '%s', which is not defined",
                               L->label, node_label_raw(np, i, lb, sizeof lb),
                               strcmp(nd->op_type, "Gradient") ? "a subgraph reads"
                                                               : "attribute y names",
                               nd->implicit_names[k]);
            }
            nd->implicit[k] = v;
        }
    }

    /* Declared types of intermediate values. */
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const Onnx__ValueInfoProto *vi = gp->value_info[i];
        uint32_t v = find_value(L, str_or_empty(vi->name));
        if (v == FE_NONE || g->values[v].producer == FE_NONE) continue;
        bool seq, opt;
        lm_status st = convert_type(L, vi, "value", false, &g->values[v].type, &seq, &opt);
        if (st != LM_OK) return st;
    }

    /* Graph outputs. */
    g->outputs = fe_arena_alloc(L->arena, gp->n_output * sizeof *g->outputs);
    if (!g->outputs) return oom(L);
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        const char *name = str_or_empty(vi->name);
        if (!name[0])
            return err_set(LM_ERR_INVALID_FILE, "%s: graph output #%zu has no name", L->label, i);
        uint32_t v = find_value(L, name);
        if (v == FE_NONE)
            return err_set(LM_ERR_INVALID_FILE, "%s: graph output '%s' is not defined", L->label,
                           name);
        fe_type ty;
        bool seq, opt;
        lm_status st = convert_type(L, vi, "graph output", true, &ty, &seq, &opt);
        if (st != LM_OK) return st;
        fe_value *val = &g->values[v];
        val->declared_seq = seq;
        val->declared_opt = opt;
        /* A node's output takes the declared type where the declaration says
         * more; inputs and initializers keep theirs. (For a sequence or an
         * optional, its tensors' type, until the node makes it.) */
        if (val->producer != FE_NONE) {
            if (ty.elem != FE_UNDEFINED) val->type.elem = ty.elem;
            if (ty.rank >= 0) {
                val->type.rank = ty.rank;
                memcpy(val->type.dims, ty.dims, sizeof ty.dims);
                memcpy(val->type.sym, ty.sym, sizeof ty.sym);
            }
        }
        val->graph_output = true;
        g->outputs[g->output_count++] = v;
    }

    lm_status st = sort_nodes(L);
    if (st != LM_OK) return st;

    for (uint32_t i = 0; i < g->node_count; i++) {
        for (uint32_t k = 0; k < g->nodes[i].input_count; k++)
            if (g->nodes[i].inputs[k] != FE_NONE) g->values[g->nodes[i].inputs[k]].use_count++;
        for (uint32_t k = 0; k < g->nodes[i].implicit_count; k++)
            g->values[g->nodes[i].implicit[k]].use_count++;
    }
    for (uint32_t i = 0; i < g->output_count; i++)
        g->values[g->outputs[i]].use_count++;
    g->value_cap = L->value_cap;
    g->node_cap = g->node_count;
    return LM_OK;
}

lm_status fe_onnx_load_memory(const void *data, size_t size, const char *dir, const char *label,
                              fe_graph **out_graph) {
    *out_graph = NULL;
    if (!label) label = "model";
    if (!data && size) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: no data", label);
    static const uint8_t empty[1];
    if (!data) data = empty;
    pb_budget budget;
    ProtobufCAllocator alloc;
    ProtobufCMessage *msg;
    lm_status st =
        pb_unpack(data, size, &onnx__model_proto__descriptor, label, &budget, &alloc, &msg);
    if (st != LM_OK) return st;
    fe_graph *g = calloc(1, sizeof *g);
    if (!g) {
        protobuf_c_message_free_unpacked(msg, &alloc);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", label);
    }
    loader L = {.label = label, .dir = dir, .arena = &g->arena, .g = g};
    g->path = fe_arena_strndup(&g->arena, label, strlen(label));
    st = g->path ? convert_model(&L, (const Onnx__ModelProto *)msg) : oom(&L);
    free(L.map);
    protobuf_c_message_free_unpacked(msg, &alloc);
    if (st != LM_OK) {
        fe_graph_free(g);
        return st;
    }
    *out_graph = g;
    return LM_OK;
}

lm_status fe_onnx_load(const char *path, fe_graph **out_graph) {
    *out_graph = NULL;
    file_mapping map = {0};
    lm_status st = file_map(path, &map);
    if (st != LM_OK) return st;
    /* External data resolves against the model's directory. */
    size_t len = strlen(path);
    char *dir = malloc(len + 2);
    if (!dir) {
        file_unmap(&map);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "%s: out of host memory", path);
    }
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    }
    st = fe_onnx_load_memory(map.data, map.size, dir, path, out_graph);
    free(dir);
    file_unmap(&map);
    return st;
}

lm_status fe_onnx_load_tensor(const void *data, size_t size, const char *label, fe_arena *arena,
                              fe_tensor *out_tensor) {
    if (!label) label = "tensor";
    if (!data && size) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: no data", label);
    static const uint8_t empty[1];
    if (!data) data = empty;
    pb_budget budget;
    ProtobufCAllocator alloc;
    ProtobufCMessage *msg;
    lm_status st =
        pb_unpack(data, size, &onnx__tensor_proto__descriptor, label, &budget, &alloc, &msg);
    if (st != LM_OK) return st;
    loader L = {.label = label, .dir = NULL, .arena = arena};
    const Onnx__TensorProto *tp = (const Onnx__TensorProto *)msg;
    char what[400];
    snprintf(what, sizeof what, "tensor '%s'", str_or_empty(tp->name));
    fe_tensor *t;
    st = convert_tensor(&L, tp, what, &t);
    protobuf_c_message_free_unpacked(msg, &alloc);
    if (st == LM_OK) *out_tensor = *t;
    return st;
}
