#include "lmt_dump.h"

#include "lmt_json.h"

/* What a field holds, one per kind of the lmb_schema.h lists. */
typedef enum dump_kind {
    DK_U8,
    DK_U16,
    DK_U32,
    DK_U64,
    DK_BOOL,
    DK_ENUM,
    DK_STRUCT,
    DK_STRING,
    DK_TABLE,
    DK_VEC_U32,
    DK_VEC_ENUM,
    DK_VEC_STRUCT,
    DK_VEC_TABLE,
    DK_UNION,
} dump_kind;

typedef struct dump_struct dump_struct;
typedef struct dump_table dump_table;

typedef struct dump_struct_field {
    const char *name;
    uint32_t offset;
    dump_kind kind;        /* DK_U8 .. DK_U64, DK_ENUM or DK_STRUCT */
    const char *enum_name; /* DK_ENUM */
    const dump_struct *st; /* DK_STRUCT */
} dump_struct_field;

struct dump_struct {
    uint32_t size;
    uint32_t count;
    const dump_struct_field *fields;
};

typedef struct dump_field {
    const char *name;
    unsigned id;
    dump_kind kind;
    const char *enum_name; /* DK_ENUM, DK_VEC_ENUM */
    const dump_struct *st; /* DK_STRUCT, DK_VEC_STRUCT */
    const dump_table *tab; /* DK_TABLE, DK_VEC_TABLE */
    /* DK_UNION: member tables and names, indexed by type - 1. */
    const dump_table *const *members;
    const char *const *member_names;
    uint32_t member_count;
} dump_field;

struct dump_table {
    const char *name;
    uint32_t count;
    const dump_field *fields;
};

/* Forward declarations, so descriptors may refer to each other in any order. */
#define DUMP_STRUCT_FWD_(S, size, align) static const dump_struct dump_struct_##S;
LMB_STRUCTS(DUMP_STRUCT_FWD_)
#define DUMP_TABLE_FWD_(T) static const dump_table dump_table_##T;
LMB_TABLES(DUMP_TABLE_FWD_)

/* Member tables of each union, indexed by type - 1. */
#define DUMP_UMEMBER_(U, name, value) [(value)-1] = &dump_table_##name,
#define DUMP_UNION_DEF_(U)                                                                         \
    static const dump_table *const dump_union_##U[LMB_##U##_COUNT] = {LMB_UNION_##U(DUMP_UMEMBER_)};
LMB_UNIONS(DUMP_UNION_DEF_)

/* The per-kind descriptor arguments: enum name, struct, table, union. */
#define DUMP_NO_UNION NULL, NULL, 0
#define DUMP_ARG_U8(arg) NULL, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_U16(arg) NULL, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_U32(arg) NULL, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_U64(arg) NULL, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_BOOL(arg) NULL, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_ENUM(arg) #arg, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_STRUCT(arg) NULL, &dump_struct_##arg, NULL, DUMP_NO_UNION
#define DUMP_ARG_STRING(arg) NULL, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_TABLE(arg) NULL, NULL, &dump_table_##arg, DUMP_NO_UNION
#define DUMP_ARG_VEC_U32(arg) NULL, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_VEC_ENUM(arg) #arg, NULL, NULL, DUMP_NO_UNION
#define DUMP_ARG_VEC_STRUCT(arg) NULL, &dump_struct_##arg, NULL, DUMP_NO_UNION
#define DUMP_ARG_VEC_TABLE(arg) NULL, NULL, &dump_table_##arg, DUMP_NO_UNION
#define DUMP_ARG_UNION(arg) NULL, NULL, NULL, dump_union_##arg, lmb_##arg##_names, LMB_##arg##_COUNT

#define DUMP_SARG_U8(arg) NULL, NULL
#define DUMP_SARG_U16(arg) NULL, NULL
#define DUMP_SARG_U32(arg) NULL, NULL
#define DUMP_SARG_U64(arg) NULL, NULL
#define DUMP_SARG_ENUM(arg) #arg, NULL
#define DUMP_SARG_STRUCT(arg) NULL, &dump_struct_##arg

#define DUMP_SFIELD_(S, f, off, K, arg) {#f, off, DK_##K, DUMP_SARG_##K(arg)},
#define DUMP_STRUCT_DEF_(S, size, align)                                                           \
    static const dump_struct_field dump_sfields_##S[] = {LMB_STRUCT_##S(DUMP_SFIELD_)};            \
    static const dump_struct dump_struct_##S = {                                                   \
        size, sizeof dump_sfields_##S / sizeof dump_sfields_##S[0], dump_sfields_##S};
LMB_STRUCTS(DUMP_STRUCT_DEF_)

#define DUMP_FIELD_(T, f, id, K, arg, req) {#f, id, DK_##K, DUMP_ARG_##K(arg)},
#define DUMP_TABLE_DEF_(T)                                                                         \
    static const dump_field dump_fields_##T[] = {LMB_TABLE_##T(DUMP_FIELD_)};                      \
    static const dump_table dump_table_##T = {                                                     \
        #T, sizeof dump_fields_##T / sizeof dump_fields_##T[0], dump_fields_##T};
LMB_TABLES(DUMP_TABLE_DEF_)

static void dump_table_value(lmt_json *j, const char *key, const dump_table *d, fb_table t);

static void dump_enum(lmt_json *j, const char *key, const char *enum_name, unsigned v) {
    const char *name = lmb_enum_name(enum_name, v);
    /* flatc prints values without a name as numbers. */
    if (name)
        lmt_json_cstr(j, key, name);
    else
        lmt_json_u64(j, key, v);
}

static void dump_struct_value(lmt_json *j, const char *key, const dump_struct *d,
                              const uint8_t *p) {
    lmt_json_begin_object(j, key);
    for (uint32_t i = 0; i < d->count; i++) {
        const dump_struct_field *f = &d->fields[i];
        const uint8_t *q = p + f->offset;
        switch (f->kind) {
        case DK_U8:
            lmt_json_u64(j, f->name, q[0]);
            break;
        case DK_U16:
            lmt_json_u64(j, f->name, fb_rd_u16(q));
            break;
        case DK_U32:
            lmt_json_u64(j, f->name, fb_rd_u32(q));
            break;
        case DK_U64:
            lmt_json_u64(j, f->name, fb_rd_u64(q));
            break;
        case DK_ENUM:
            dump_enum(j, f->name, f->enum_name, q[0]);
            break;
        case DK_STRUCT:
            dump_struct_value(j, f->name, f->st, q);
            break;
        default:
            break; /* no other kinds occur in structs */
        }
    }
    lmt_json_end_object(j);
}

/* flatc prints a (key) field even when absent; the field lists do not
 * record `key`, and the schema has exactly one. */
static bool dump_is_key(const dump_table *d, const dump_field *f) {
    return d == &dump_table_TraceDescriptor && f->id == LMB_ID_TraceDescriptor_trace_id;
}

static void dump_field_value(lmt_json *j, const dump_table *d, const dump_field *f, fb_table t) {
    if (f->kind == DK_UNION) {
        /* The type lives in the field before the value, named <field>_type. */
        char type_key[96];
        snprintf(type_key, sizeof type_key, "%s_type", f->name);
        if (fb_field_offset(t, f->id - 1u) != 0) {
            unsigned type = fb_get_u8(t, f->id - 1u);
            bool member = type >= 1 && type <= f->member_count;
            if (member)
                lmt_json_cstr(j, type_key, f->member_names[type - 1]);
            else if (type == 0)
                lmt_json_cstr(j, type_key, "NONE");
            else
                lmt_json_u64(j, type_key, type);
            fb_table v = fb_get_table(t, f->id);
            if (v && member) dump_table_value(j, f->name, f->members[type - 1], v);
        }
        return;
    }
    if (fb_field_offset(t, f->id) == 0 && !dump_is_key(d, f)) return;
    switch (f->kind) {
    case DK_U8:
        lmt_json_u64(j, f->name, fb_get_u8(t, f->id));
        break;
    case DK_U16:
        lmt_json_u64(j, f->name, fb_get_u16(t, f->id));
        break;
    case DK_U32:
        lmt_json_u64(j, f->name, fb_get_u32(t, f->id));
        break;
    case DK_U64:
        lmt_json_u64(j, f->name, fb_get_u64(t, f->id));
        break;
    case DK_BOOL:
        lmt_json_bool(j, f->name, fb_get_bool(t, f->id));
        break;
    case DK_ENUM:
        dump_enum(j, f->name, f->enum_name, fb_get_u8(t, f->id));
        break;
    case DK_STRUCT:
        dump_struct_value(j, f->name, f->st, fb_get_struct(t, f->id));
        break;
    case DK_STRING: {
        fb_str s = fb_get_str(t, f->id);
        lmt_json_string(j, f->name, s.ptr, s.len);
        break;
    }
    case DK_TABLE:
        dump_table_value(j, f->name, f->tab, fb_get_table(t, f->id));
        break;
    case DK_VEC_U32:
    case DK_VEC_ENUM:
    case DK_VEC_STRUCT:
    case DK_VEC_TABLE: {
        fb_vec v = fb_get_vec(t, f->id);
        lmt_json_begin_array(j, f->name);
        for (uint32_t i = 0; i < v.len; i++) {
            if (f->kind == DK_VEC_U32)
                lmt_json_u64(j, NULL, fb_vec_u32(v, i));
            else if (f->kind == DK_VEC_ENUM)
                dump_enum(j, NULL, f->enum_name, fb_vec_u8(v, i));
            else if (f->kind == DK_VEC_STRUCT)
                dump_struct_value(j, NULL, f->st, fb_vec_struct(v, i, f->st->size));
            else
                dump_table_value(j, NULL, f->tab, fb_vec_table(v, i));
        }
        lmt_json_end_array(j);
        break;
    }
    case DK_UNION:
        break; /* handled above */
    }
}

static void dump_table_value(lmt_json *j, const char *key, const dump_table *d, fb_table t) {
    lmt_json_begin_object(j, key);
    for (uint32_t i = 0; i < d->count; i++)
        dump_field_value(j, d, &d->fields[i], t);
    lmt_json_end_object(j);
}

void lmt_dump_root(FILE *out, fb_table root) {
    lmt_json j;
    lmt_json_init(&j, out);
    dump_table_value(&j, NULL, &dump_table_LightMetalBinary, root);
}
