/* Verifier descriptors and names, expanded from the lists in lmb_schema.h. */
#include "format/lmb_schema.h"

#include <string.h>

#define LMB_SDESC_(S, size, align)                                                                 \
    const fb_struct_desc lmb_struct_##S = {#S, size, align, LMB_STRUCT_CHECK_##S};
LMB_STRUCTS(LMB_SDESC_)

#define LMB_UMEMBER_DESC_(U, name, value) &lmb_desc_##name,
#define LMB_UMEMBER_NAME_(U, name, value) #name,
#define LMB_UDESC_(U)                                                                              \
    static const fb_table_desc *const lmb_umembers_##U[] = {LMB_UNION_##U(LMB_UMEMBER_DESC_)};     \
    const char *const lmb_##U##_names[] = {LMB_UNION_##U(LMB_UMEMBER_NAME_)};                      \
    static const fb_union_desc lmb_union_##U = {                                                   \
        #U, sizeof lmb_umembers_##U / sizeof lmb_umembers_##U[0], lmb_umembers_##U,                \
        lmb_##U##_names};
LMB_UNIONS(LMB_UDESC_)

/* One descriptor row per field kind (a union gives two: type, then value).
 * Row: name, id, base, elem, required, enum_max, struct, table, union, max_len. */
#define LMB_DESC_(T, f, id, K, arg, req) LMB_DESC_##K(f, id, arg, req)
#define LMB_DESC_U8(f, id, arg, req) {#f, id, FB_T_UBYTE, 0, req, 0, NULL, NULL, NULL, 0},
#define LMB_DESC_U16(f, id, arg, req) {#f, id, FB_T_USHORT, 0, req, 0, NULL, NULL, NULL, 0},
#define LMB_DESC_U32(f, id, arg, req) {#f, id, FB_T_UINT, 0, req, 0, NULL, NULL, NULL, 0},
#define LMB_DESC_U64(f, id, arg, req) {#f, id, FB_T_ULONG, 0, req, 0, NULL, NULL, NULL, 0},
#define LMB_DESC_BOOL(f, id, arg, req) {#f, id, FB_T_BOOL, 0, req, 0, NULL, NULL, NULL, 0},
#define LMB_DESC_ENUM(f, id, arg, req)                                                             \
    {#f, id, FB_T_UBYTE, 0, req, LMB_##arg##_MAX, NULL, NULL, NULL, 0},
#define LMB_DESC_STRUCT(f, id, arg, req)                                                           \
    {#f, id, FB_T_OBJ, 0, req, 0, &lmb_struct_##arg, NULL, NULL, 0},
#define LMB_DESC_STRING(f, id, arg, req) {#f, id, FB_T_STRING, 0, req, 0, NULL, NULL, NULL, 0},
#define LMB_DESC_TABLE(f, id, arg, req)                                                            \
    {#f, id, FB_T_OBJ, 0, req, 0, NULL, &lmb_desc_##arg, NULL, 0},
#define LMB_DESC_VEC_U32(f, id, arg, req)                                                          \
    {#f, id, FB_T_VECTOR, FB_T_UINT, req, 0, NULL, NULL, NULL, 0},
#define LMB_DESC_VEC_ENUM(f, id, arg, req)                                                         \
    {#f, id, FB_T_VECTOR, FB_T_UBYTE, req, LMB_##arg##_MAX, NULL, NULL, NULL, 0},
#define LMB_DESC_VEC_STRUCT(f, id, arg, req)                                                       \
    {#f, id, FB_T_VECTOR, FB_T_OBJ, req, 0, &lmb_struct_##arg, NULL, NULL, 0},
#define LMB_DESC_VEC_TABLE(f, id, arg, req)                                                        \
    {#f, id, FB_T_VECTOR, FB_T_OBJ, req, 0, NULL, &lmb_desc_##arg, NULL, 0},
#define LMB_DESC_UNION(f, id, arg, req)                                                            \
    {#f "_type", (id)-1, FB_T_UTYPE, 0, 0, 0, NULL, NULL, &lmb_union_##arg, 0},                    \
        {#f, id, FB_T_UNION, 0, req, 0, NULL, NULL, &lmb_union_##arg, 0},

#define LMB_TDESC_(T)                                                                              \
    static const fb_field_desc lmb_fields_##T[] = {LMB_TABLE_##T(LMB_DESC_)};                      \
    const fb_table_desc lmb_desc_##T = {#T, sizeof lmb_fields_##T / sizeof lmb_fields_##T[0],      \
                                        lmb_fields_##T};
LMB_TABLES(LMB_TDESC_)

const char *lmb_command_name(unsigned type) {
    static const char *const names[] = {"NONE", LMB_UNION_Command(LMB_UMEMBER_NAME_)};
    return type < sizeof names / sizeof names[0] ? names[type] : NULL;
}

const char *lmb_enum_name(const char *enum_name, unsigned value) {
#define LMB_ENAME_(En, name, val)                                                                  \
    if (value == val) return #name;
#define LMB_ENUM_LOOKUP_(En)                                                                       \
    if (!strcmp(enum_name, #En)) {                                                                 \
        LMB_ENUM_##En(LMB_ENAME_) return NULL;                                                     \
    }
    LMB_ENUMS(LMB_ENUM_LOOKUP_)
    return NULL;
}
