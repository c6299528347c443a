/* Conformance with Debian's flatc, the independent reference:
 * - our binaries convert with `flatc --json` and back with `flatc -b`, and
 *   the result reads the same in our reader;
 * - binaries flatc builds from JSON fixtures verify and read correctly;
 * - the typed lists of lmb_schema.h match the schema exactly, compared with
 *   the reflection data `flatc --bfbs` produces (read with our own runtime). */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/file.h"
#include "format/lmb.h"
#include "lm_test.h"
#include "sample.h"

static char tmpdir[64];

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...) {
    char cmd[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    if (rc != 0) printf("  command failed (%d): %s\n", rc, cmd);
    return rc;
}

static lm_status write_file(const char *path, const void *data, size_t size) {
    file_chunk c = {data, size};
    return file_save_atomic(path, &c, 1);
}

/* Our file -> JSON -> flatc's binary; then flatc's table area with our data
 * region re-attached must pass lmb_verify and read exactly like the sample. */
static void test_flatc_json_round_trip(void) {
    void *data;
    size_t size;
    CHECK_OK(sample_build(&data, &size));
    char bin[128], json[128], back[128];
    snprintf(bin, sizeof bin, "%s/sample.lmb", tmpdir);
    snprintf(json, sizeof json, "%s/sample.json", tmpdir);
    snprintf(back, sizeof back, "%s/back/sample.lmb", tmpdir);
    CHECK_OK(write_file(bin, data, size));
    CHECK(run(LM_FLATC " --json --strict-json -o %s " LM_SCHEMA " -- %s", tmpdir, bin) == 0);
    void *text;
    size_t text_size;
    CHECK_OK(file_read_all(json, &text, &text_size));
    bool names_ok = strstr(text, "\"cmd_type\": \"CompareToGolden\"") &&
                    strstr(text, "\"type\": \"DRAM\"") && strstr(text, "\"name\": \"output0\"");
    free(text);
    CHECK(names_ok);
    char backdir[128];
    snprintf(backdir, sizeof backdir, "%s/back", tmpdir);
    CHECK(run(LM_FLATC " -b -o %s " LM_SCHEMA " %s", backdir, json) == 0);
    void *fb;
    size_t fb_size;
    CHECK_OK(file_read_all(back, &fb, &fb_size));
    /* flatc's output is a plain FlatBuffer: verify its table area alone... */
    fb_verify_options fo;
    fb_verify_options_init(&fo);
    fo.identifier = LMB_FILE_IDENTIFIER;
    CHECK_OK(fb_verify(fb, fb_size, &lmb_desc_LightMetalBinary, &fo, NULL));
    CHECK_OK(lmb_verify_table_area(fb, fb_size, NULL));
    const char *diff = sample_check(fb, false);
    if (diff) printf("  %s\n", diff);
    CHECK(diff == NULL);
    /* ...then give it our data region back, where its data_offset says. */
    fb_table r = lmb_root(fb);
    uint64_t old_off = lmb_LightMetalBinary_data_offset(lmb_root(data));
    uint64_t dsize = lmb_LightMetalBinary_data_size(r);
    uint64_t new_off = (fb_size + 4095) / 4096 * 4096;
    uint8_t *joined = calloc(1, new_off + dsize);
    CHECK(joined);
    memcpy(joined, fb, fb_size);
    memcpy(joined + new_off, (uint8_t *)data + old_off, dsize);
    fb_table jr = lmb_root(joined);
    fb_wr_u64((uint8_t *)jr + fb_field_offset(jr, LMB_ID_LightMetalBinary_data_offset), new_off);
    /* The table area is flatc's, laid out its own way: seal it anew. */
    CHECK_OK(lmb_reseal(joined, new_off + dsize));
    lmb_verify_options vo;
    lmb_verify_options_init(&vo);
    vo.check_blob_hashes = true;
    CHECK_OK(lmb_verify(joined, new_off + dsize, &vo, NULL));
    diff = sample_check(joined, true);
    CHECK(diff == NULL);
    free(joined);
    free(fb);
    free(data);
}

/* A JSON fixture built by flatc reads correctly (defaults, unions, structs,
 * vectors of tables, enums by name). */
static void test_flatc_built_fixture(void) {
    char out[128], path[160];
    snprintf(out, sizeof out, "%s/fixture", tmpdir);
    CHECK(run(LM_FLATC " -b -o %s " LM_SCHEMA " %s", out, LM_FIXTURES "/small.json") == 0);
    snprintf(path, sizeof path, "%s/small.lmb", out);
    void *d;
    size_t n;
    CHECK_OK(file_read_all(path, &d, &n));
    /* A hand-written file carries no valid digest until sealed. */
    CHECK_FAILS(lmb_verify(d, n, NULL, NULL), LM_ERR_INVALID_FILE, "table-digest-mismatch");
    CHECK_OK(lmb_reseal(d, n));
    CHECK_OK(lmb_verify(d, n, NULL, NULL));
    fb_table r = lmb_root(d);
    CHECK(lmb_LightMetalBinary_format_version(r).minor == 3);
    CHECK(!lmb_LightMetalBinary_has_producer_version(r));
    fb_table sys = lmb_LightMetalBinary_system(r);
    CHECK(lmb_SystemDescriptor_grid_x(sys) == 4 && lmb_SystemDescriptor_grid_y(sys) == 2);
    CHECK(lmb_SystemDescriptor_dram_bank_size(sys) == 536870912);
    CHECK(fb_vec_u8(lmb_SystemDescriptor_data_formats(sys), 1) == LMB_DataFormat_Bfp8_b);
    fb_vec cmds = lmb_LightMetalBinary_commands(r);
    CHECK(cmds.len == 8);
    fb_table e = fb_vec_table(cmds, 0), t = lmb_CommandEntry_cmd(e);
    CHECK(lmb_CommandEntry_cmd_type(e) == LMB_Command_CreateBuffer);
    CHECK(lmb_CreateBuffer_type(t) == LMB_BufferType_L1 && lmb_CreateBuffer_address(t) == 917504);
    e = fb_vec_table(cmds, 2);
    t = lmb_CommandEntry_cmd(e);
    CHECK(lmb_CommandEntry_cmd_type(e) == LMB_Command_CreateKernel);
    CHECK(lmb_CreateKernel_binary_hash(t) == UINT64_MAX);
    lmb_CoreRange cr = lmb_vec_CoreRange_at(lmb_CreateKernel_cores(t), 0);
    CHECK(cr.end.x == 3 && cr.end.y == 1);
    fb_table cfg = lmb_CreateKernel_config(t);
    CHECK(lmb_KernelConfig_processor(cfg) == LMB_Processor_DM1);
    CHECK(lmb_KernelConfig_math_fidelity(cfg) == LMB_MathFidelity_Invalid); /* absent */
    CHECK(fb_vec_u32(lmb_KernelConfig_compile_args(cfg), 1) == 8);
    CHECK(lmb_CreateKernel_source(t).ptr == NULL);
    t = lmb_CommandEntry_cmd(fb_vec_table(cmds, 3));
    lmb_CBFormat f = lmb_vec_CBFormat_at(lmb_CreateCircularBuffer_formats(t), 0);
    CHECK(f.index == 31 && f.format == LMB_DataFormat_Bfp8_b && f.page_size == 1088);
    t = lmb_CommandEntry_cmd(fb_vec_table(cmds, 4));
    fb_table pc = fb_vec_table(lmb_SetRuntimeArgsMulti_per_core(t), 0);
    CHECK(fb_vec_u32(lmb_CoreArgs_args(pc), 0) == UINT32_MAX && lmb_CoreArgs_core(pc).x == 3);
    CHECK(lmb_CommandEntry_cmd_type(fb_vec_table(cmds, 7)) == LMB_Command_FinishQueue);
    CHECK(lmb_FinishQueue_cq_id(lmb_CommandEntry_cmd(fb_vec_table(cmds, 7))) == 0);
    lmb_BlobRef tr;
    CHECK(lmb_find_trace(r, 9, &tr) && !lmb_find_trace(r, 2, &tr));
    fb_table bn = fb_vec_table(lmb_LightMetalBinary_buffer_names(r), 0);
    CHECK(lmb_BufferName_role(bn) == LMB_BufferRole_Output);
    CHECK(lmb_BufferName_format(bn) == LMB_DataFormat_Int32);
    CHECK(lmb_BufferName_element_type(bn) == LMB_ElementType_Bool);
    free(d);
}

/* ------------------------------------------------- reflection comparison */

/* The parts of FlatBuffers' reflection schema (reflection.fbs) we read. */
static const fb_table_desc rf_type = {
    "Type", 3,
    (const fb_field_desc[]){{"base_type", 0, FB_T_BYTE, 0, 0, 0, NULL, NULL, NULL, 0},
                            {"element", 1, FB_T_BYTE, 0, 0, 0, NULL, NULL, NULL, 0},
                            {"index", 2, FB_T_INT, 0, 0, 0, NULL, NULL, NULL, 0}}};
static const fb_table_desc rf_field = {
    "Field", 5,
    (const fb_field_desc[]){{"name", 0, FB_T_STRING, 0, 1, 0, NULL, NULL, NULL, 0},
                            {"type", 1, FB_T_OBJ, 0, 1, 0, NULL, &rf_type, NULL, 0},
                            {"id", 2, FB_T_USHORT, 0, 0, 0, NULL, NULL, NULL, 0},
                            {"offset", 3, FB_T_USHORT, 0, 0, 0, NULL, NULL, NULL, 0},
                            {"required", 7, FB_T_BOOL, 0, 0, 0, NULL, NULL, NULL, 0}}};
static const fb_table_desc rf_object = {
    "Object", 5,
    (const fb_field_desc[]){{"name", 0, FB_T_STRING, 0, 1, 0, NULL, NULL, NULL, 0},
                            {"fields", 1, FB_T_VECTOR, FB_T_OBJ, 1, 0, NULL, &rf_field, NULL, 0},
                            {"is_struct", 2, FB_T_BOOL, 0, 0, 0, NULL, NULL, NULL, 0},
                            {"minalign", 3, FB_T_INT, 0, 0, 0, NULL, NULL, NULL, 0},
                            {"bytesize", 4, FB_T_INT, 0, 0, 0, NULL, NULL, NULL, 0}}};
static const fb_table_desc rf_enumval = {
    "EnumVal", 2,
    (const fb_field_desc[]){{"name", 0, FB_T_STRING, 0, 1, 0, NULL, NULL, NULL, 0},
                            {"value", 1, FB_T_LONG, 0, 0, 0, NULL, NULL, NULL, 0}}};
static const fb_table_desc rf_enum = {
    "Enum", 3,
    (const fb_field_desc[]){{"name", 0, FB_T_STRING, 0, 1, 0, NULL, NULL, NULL, 0},
                            {"values", 1, FB_T_VECTOR, FB_T_OBJ, 1, 0, NULL, &rf_enumval, NULL, 0},
                            {"is_union", 2, FB_T_BOOL, 0, 0, 0, NULL, NULL, NULL, 0}}};
static const fb_table_desc rf_schema = {
    "Schema", 3,
    (const fb_field_desc[]){{"objects", 0, FB_T_VECTOR, FB_T_OBJ, 1, 0, NULL, &rf_object, NULL, 0},
                            {"enums", 1, FB_T_VECTOR, FB_T_OBJ, 1, 0, NULL, &rf_enum, NULL, 0},
                            {"file_ident", 2, FB_T_STRING, 0, 0, 0, NULL, NULL, NULL, 0}}};

static fb_table rf_root;

static bool str_eq(fb_str s, const char *want) {
    return s.ptr && s.len == strlen(want) && !memcmp(s.ptr, want, s.len);
}

static bool name_is(fb_str s, const char *short_name) {
    return s.len > 6 && !memcmp(s.ptr, "lm.fb.", 6) &&
           str_eq((fb_str){s.ptr + 6, s.len - 6}, short_name);
}

static int32_t rf_find(unsigned vec_id, const char *short_name) {
    fb_vec v = fb_get_vec(rf_root, vec_id);
    for (uint32_t i = 0; i < v.len; i++)
        if (name_is(fb_get_str(fb_vec_table(v, i), 0), short_name)) return (int32_t)i;
    return -1;
}

static fb_table rf_at(unsigned vec_id, int32_t i) {
    return fb_vec_table(fb_get_vec(rf_root, vec_id), (uint32_t)i);
}

static fb_table rf_field_named(fb_table obj, const char *name) {
    fb_vec fields = fb_get_vec(obj, 1);
    for (uint32_t i = 0; i < fields.len; i++)
        if (str_eq(fb_get_str(fb_vec_table(fields, i), 0), name)) return fb_vec_table(fields, i);
    return NULL;
}

/* Type.index defaults to -1 (not 0), so read it raw. */
static int32_t rf_type_index(fb_table type) {
    uint32_t o = fb_field_offset(type, 2);
    return o ? fb_rd_i32(type + o) : -1;
}

static char mismatch[256];
#define MISMATCH(...) (snprintf(mismatch, sizeof mismatch, __VA_ARGS__), false)

static bool check_enum(const char *name, const char *const *names, const int *values, int count,
                       bool is_union) {
    int32_t i = rf_find(1, name);
    if (i < 0) return MISMATCH("enum %s missing from the schema", name);
    fb_table e = rf_at(1, i);
    if (fb_get_bool(e, 2) != is_union) return MISMATCH("%s: union flag differs", name);
    fb_vec vals = fb_get_vec(e, 1);
    if ((int)vals.len != count)
        return MISMATCH("%s: %u values in schema, %d in C", name, vals.len, count);
    for (int k = 0; k < count; k++) {
        fb_table v = fb_vec_table(vals, (uint32_t)k);
        fb_str vn = fb_get_str(v, 0);
        bool named = str_eq(vn, names[k]);
        if (!named || (int64_t)fb_get_u64(v, 1) != values[k])
            return MISMATCH("%s: value %d is %.*s = %lld", name, k, (int)vn.len, vn.ptr,
                            (long long)fb_get_u64(v, 1));
    }
    return true;
}

static bool check_object_ref(fb_table type, const char *want, bool want_struct) {
    int32_t idx = rf_type_index(type);
    if (idx < 0) return false;
    fb_table obj = rf_at(0, idx);
    return name_is(fb_get_str(obj, 0), want) && fb_get_bool(obj, 2) == want_struct;
}

/* Compares one C table descriptor with the schema's object, both ways. */
static bool check_table(const fb_table_desc *d) {
    int32_t i = rf_find(0, d->name);
    if (i < 0) return MISMATCH("table %s missing from the schema", d->name);
    fb_table obj = rf_at(0, i);
    if (fb_get_bool(obj, 2)) return MISMATCH("%s is a struct in the schema", d->name);
    if (fb_get_vec(obj, 1).len != d->field_count)
        return MISMATCH("%s: %u fields in schema, %u in C", d->name, fb_get_vec(obj, 1).len,
                        d->field_count);
    for (uint32_t k = 0; k < d->field_count; k++) {
        const fb_field_desc *f = &d->fields[k];
        fb_table sf = rf_field_named(obj, f->name);
        if (!sf) return MISMATCH("%s.%s missing from the schema", d->name, f->name);
        fb_table type = fb_get_table(sf, 1);
        uint8_t base = fb_get_u8(type, 0), elem = fb_get_u8(type, 1);
        if (fb_get_u16(sf, 2) != f->id) return MISMATCH("%s.%s: id differs", d->name, f->name);
        if (fb_get_bool(sf, 4 + 3) != (f->required != 0))
            return MISMATCH("%s.%s: required differs", d->name, f->name);
        if (base != f->base)
            return MISMATCH("%s.%s: base type %u vs %u", d->name, f->name, base, f->base);
        if (base == FB_T_VECTOR && elem != f->elem)
            return MISMATCH("%s.%s: element type differs", d->name, f->name);
        int32_t idx = rf_type_index(type);
        if (f->enum_max) {
            /* An enum: index names an enum whose largest value is enum_max. */
            if (idx < 0) return MISMATCH("%s.%s: not an enum in the schema", d->name, f->name);
            fb_vec vals = fb_get_vec(rf_at(1, idx), 1);
            if (fb_get_u64(fb_vec_table(vals, vals.len - 1), 1) != f->enum_max)
                return MISMATCH("%s.%s: enum range differs", d->name, f->name);
        } else if ((base == FB_T_UBYTE || (base == FB_T_VECTOR && elem == FB_T_UBYTE)) &&
                   idx >= 0) {
            return MISMATCH("%s.%s: enum in the schema, plain in C", d->name, f->name);
        }
        if (f->st && !check_object_ref(type, f->st->name, true))
            return MISMATCH("%s.%s: struct type differs", d->name, f->name);
        if (f->tab && !check_object_ref(type, f->tab->name, false))
            return MISMATCH("%s.%s: table type differs", d->name, f->name);
        if (f->un && (idx < 0 || !name_is(fb_get_str(rf_at(1, idx), 0), f->un->name)))
            return MISMATCH("%s.%s: union type differs", d->name, f->name);
    }
    return true;
}

/* Struct fields: X(struct, field, offset, kind, arg) -> name, offset, base */
typedef struct sfield {
    const char *name;
    uint16_t offset;
    uint8_t base;
    const char *type; /* nested struct or enum name, or NULL */
} sfield;
#define SBASE_U8 FB_T_UBYTE
#define SBASE_U16 FB_T_USHORT
#define SBASE_U32 FB_T_UINT
#define SBASE_U64 FB_T_ULONG
#define SBASE_ENUM FB_T_UBYTE
#define SBASE_STRUCT FB_T_OBJ
#define STYPE__ NULL
#define SFIELD_(S, f, off, K, arg) {#f, off, SBASE_##K, #arg},

static bool check_struct(const char *name, uint32_t size, uint32_t align, const sfield *fields,
                         uint32_t count) {
    int32_t i = rf_find(0, name);
    if (i < 0) return MISMATCH("struct %s missing from the schema", name);
    fb_table obj = rf_at(0, i);
    if (!fb_get_bool(obj, 2)) return MISMATCH("%s is a table in the schema", name);
    if (fb_get_u32(obj, 4) != size || fb_get_u32(obj, 3) != align)
        return MISMATCH("%s: size/align %u/%u in schema", name, fb_get_u32(obj, 4),
                        fb_get_u32(obj, 3));
    if (fb_get_vec(obj, 1).len != count) return MISMATCH("%s: field count differs", name);
    for (uint32_t k = 0; k < count; k++) {
        fb_table sf = rf_field_named(obj, fields[k].name);
        if (!sf) return MISMATCH("%s.%s missing from the schema", name, fields[k].name);
        fb_table type = fb_get_table(sf, 1);
        if (fb_get_u16(sf, 3) != fields[k].offset || fb_get_u8(type, 0) != fields[k].base)
            return MISMATCH("%s.%s: offset or type differs", name, fields[k].name);
        int32_t idx = rf_type_index(type);
        bool typed = strcmp(fields[k].type, "_") != 0;
        if (typed != (idx >= 0))
            return MISMATCH("%s.%s: type reference differs", name, fields[k].name);
        if (typed) {
            fb_table ref = rf_at(fields[k].base == FB_T_OBJ ? 0 : 1, idx);
            if (!name_is(fb_get_str(ref, 0), fields[k].type))
                return MISMATCH("%s.%s: refers to another type", name, fields[k].name);
        }
    }
    return true;
}

static void test_schema_matches_c_lists(void) {
    char out[128], path[160];
    snprintf(out, sizeof out, "%s/bfbs", tmpdir);
    CHECK(run(LM_FLATC " -b --schema -o %s " LM_SCHEMA, out) == 0);
    snprintf(path, sizeof path, "%s/lightmetal.bfbs", out);
    void *d;
    size_t n;
    CHECK_OK(file_read_all(path, &d, &n));
    fb_verify_options fo;
    fb_verify_options_init(&fo);
    fo.identifier = "BFBS";
    CHECK_OK(fb_verify(d, n, &rf_schema, &fo, NULL));
    rf_root = fb_root(d);
    CHECK(str_eq(fb_get_str(rf_root, 2), LMB_FILE_IDENTIFIER));

    uint32_t tables = 0, structs = 0, enums = 0;
#define CHECK_TABLE_(T)                                                                            \
    tables++;                                                                                      \
    if (!check_table(&lmb_desc_##T)) printf("  %s\n", mismatch);                                   \
    CHECK(check_table(&lmb_desc_##T));
    LMB_TABLES(CHECK_TABLE_)
#define CHECK_STRUCT_(S, size, align)                                                              \
    {                                                                                              \
        static const sfield f_[] = {LMB_STRUCT_##S(SFIELD_)};                                      \
        structs++;                                                                                 \
        bool ok_ = check_struct(#S, size, align, f_, sizeof f_ / sizeof f_[0]);                    \
        if (!ok_) printf("  %s\n", mismatch);                                                      \
        CHECK(ok_);                                                                                \
    }
    LMB_STRUCTS(CHECK_STRUCT_)
#define ENAME_(En, name, value) #name,
#define EVALUE_(En, name, value) value,
#define CHECK_ENUM_(En)                                                                            \
    {                                                                                              \
        static const char *const n_[] = {LMB_ENUM_##En(ENAME_)};                                   \
        static const int v_[] = {LMB_ENUM_##En(EVALUE_)};                                          \
        enums++;                                                                                   \
        bool ok_ = check_enum(#En, n_, v_, sizeof v_ / sizeof v_[0], false);                       \
        if (!ok_) printf("  %s\n", mismatch);                                                      \
        CHECK(ok_);                                                                                \
    }
    LMB_ENUMS(CHECK_ENUM_)
#define UNAME_(U, name, value) #name,
#define UVALUE_(U, name, value) value,
#define CHECK_UNION_(U)                                                                            \
    {                                                                                              \
        static const char *const n_[] = {"NONE", LMB_UNION_##U(UNAME_)};                           \
        static const int v_[] = {0, LMB_UNION_##U(UVALUE_)};                                       \
        enums++;                                                                                   \
        bool ok_ = check_enum(#U, n_, v_, sizeof v_ / sizeof v_[0], true);                         \
        if (!ok_) printf("  %s\n", mismatch);                                                      \
        CHECK(ok_);                                                                                \
    }
    LMB_UNIONS(CHECK_UNION_)
    /* The other direction: nothing in the schema that C does not know. */
    CHECK_EQ_U64(fb_get_vec(rf_root, 0).len, tables + structs);
    CHECK_EQ_U64(fb_get_vec(rf_root, 1).len, enums);
    CHECK_EQ_U64(LMB_Command_COUNT, lmb_desc_CommandEntry.fields[1].un->count);
    free(d);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/lm_conformance_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("FAIL cannot create a temporary directory\n");
        return 1;
    }
    TEST_RUN(test_flatc_json_round_trip);
    TEST_RUN(test_flatc_built_fixture);
    TEST_RUN(test_schema_matches_c_lists);
    run("rm -rf %s", tmpdir);
    return test_summary();
}
