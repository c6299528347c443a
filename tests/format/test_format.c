/* Light Metal binary: builder, writer and reader round trips, and a corpus of
 * corrupt files each rejected with its named reason. */
#include <stdlib.h>
#include <unistd.h>

#include "base/hash.h"
#include "format/lmb.h"
#include "lm_test.h"
#include "sample.h"

/* ----------------------------------------------------------- round trips */

static void test_sample_round_trip(void) {
    void *data;
    size_t size;
    CHECK_OK(sample_build(&data, &size));
    lmb_verify_options opts;
    lmb_verify_options_init(&opts);
    opts.check_blob_hashes = true;
    fb_reason reason = FB_ERR_DEPTH;
    CHECK_OK(lmb_verify(data, size, &opts, &reason));
    CHECK(reason == FB_OK);
    const char *diff = sample_check(data, true);
    if (diff) printf("  %s\n", diff);
    CHECK(diff == NULL);
    /* Layout: data region page-aligned, blobs stored once. */
    fb_table r = lmb_root(data);
    uint64_t off = lmb_LightMetalBinary_data_offset(r);
    CHECK(off % LMB_DATA_REGION_ALIGN == 0 && off > 0);
    CHECK_EQ_U64(off + lmb_LightMetalBinary_data_size(r), size);
    /* two ELFs (1000 -> 1024 each), one 4096-byte blob, traces of 100 (-> 128) and 64 */
    CHECK_EQ_U64(lmb_LightMetalBinary_data_size(r), 1024 + 1024 + 4096 + 128 + 64);
    free(data);
}

static void test_writer_save_and_map(void) {
    lmb_writer *w;
    CHECK_OK(lmb_writer_create(&w));
    fb_builder *b = lmb_writer_builder(w);
    uint8_t big[10000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)i;
    lmb_BlobRef ref;
    CHECK_OK(lmb_writer_add_blob(w, big, sizeof big, false, &ref));
    lmb_EnqueueWriteBuffer_start(b);
    lmb_EnqueueWriteBuffer_add_buffer_id(b, 1);
    lmb_EnqueueWriteBuffer_add_data(b, &ref);
    CHECK_OK(
        lmb_writer_add_command(w, LMB_Command_EnqueueWriteBuffer, lmb_EnqueueWriteBuffer_end(b)));
    CHECK_EQ_U64(lmb_writer_command_count(w), 1);
    lmb_header hdr;
    lmb_header_init(&hdr);
    CHECK_OK(lmb_writer_finish(w, &hdr));
    CHECK_FAILS(lmb_writer_finish(w, &hdr), LM_ERR_INVALID_STATE, "finished");
    CHECK_FAILS(lmb_writer_add_blob(w, big, 1, true, &ref), LM_ERR_INVALID_STATE, "finished");
    char path[] = "/tmp/lm_format_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK_OK(lmb_writer_save(w, path));
    lmb_writer_destroy(w);
    file_mapping m;
    CHECK_OK(file_map(path, &m));
    remove(path);
    lm_status st = lmb_verify(m.data, m.size, NULL, NULL);
    fb_table r = lmb_root(m.data);
    fb_table e = fb_vec_table(lmb_LightMetalBinary_commands(r), 0);
    lmb_BlobRef got = lmb_EnqueueWriteBuffer_data(lmb_CommandEntry_cmd(e));
    bool same = st == LM_OK && got.size == sizeof big &&
                !memcmp(lmb_blob_data(m.data, r, got), big, sizeof big);
    fb_str producer = lmb_LightMetalBinary_producer(r);
    bool producer_ok = producer.len == 10 && !memcmp(producer.ptr, "lightmetal", 10);
    file_unmap(&m);
    CHECK_OK(st);
    CHECK(same && producer_ok);
}

static void test_writer_rejects_misuse(void) {
    lmb_writer *w;
    CHECK_OK(lmb_writer_create(&w));
    fb_builder *b = lmb_writer_builder(w);
    lmb_FinishQueue_start(b);
    fb_ref t = lmb_FinishQueue_end(b);
    CHECK_FAILS(lmb_writer_add_command(w, LMB_Command_NONE, t), LM_ERR_INVALID_ARGUMENT,
                "command type 0");
    char past[32];
    snprintf(past, sizeof past, "command type %d", LMB_Command_COUNT + 1);
    CHECK_FAILS(lmb_writer_add_command(w, (lmb_Command)(LMB_Command_COUNT + 1), t),
                LM_ERR_INVALID_ARGUMENT, past);
    CHECK_FAILS(lmb_writer_add_command(w, LMB_Command_FinishQueue, 0), LM_ERR_INVALID_ARGUMENT,
                "table 0");
    CHECK_FAILS(lmb_writer_name_buffer(w, 1, LMB_BufferRole_Input, NULL), LM_ERR_INVALID_ARGUMENT,
                "name is NULL");
    CHECK_OK(lmb_writer_add_trace(w, 5, "x", 1));
    CHECK_FAILS(lmb_writer_add_trace(w, 5, "y", 1), LM_ERR_INVALID_ARGUMENT, "trace 5 added twice");
    lmb_BlobRef ref;
    CHECK_FAILS(lmb_writer_add_blob(w, NULL, 4, true, &ref), LM_ERR_INVALID_ARGUMENT, "NULL");
    CHECK_FAILS(lmb_writer_save(w, "/nonexistent/x"), LM_ERR_INVALID_STATE, "not finished");
    lmb_writer_destroy(w);
}

static void test_blob_dedup_compares_bytes(void) {
    lmb_writer *w;
    CHECK_OK(lmb_writer_create(&w));
    uint8_t a[100], b2[100];
    memset(a, 1, sizeof a);
    memset(b2, 2, sizeof b2);
    lmb_BlobRef r1, r2, r3, r4;
    CHECK_OK(lmb_writer_add_blob(w, a, sizeof a, true, &r1));
    CHECK_OK(lmb_writer_add_blob(w, b2, sizeof b2, true, &r2));
    CHECK_OK(lmb_writer_add_blob(w, a, sizeof a, false, &r3));
    CHECK_OK(lmb_writer_add_blob(w, a, 50, true, &r4));
    CHECK(r1.offset == r3.offset && r1.hash == r3.hash);
    CHECK(r2.offset != r1.offset && r4.offset != r1.offset);
    CHECK(r1.offset % 64 == 0 && r2.offset % 64 == 0 && r4.offset % 64 == 0);
    uint64_t h1, h2;
    CHECK_OK(lmb_writer_add_kernel_binary(w, a, sizeof a, &h1));
    CHECK_OK(lmb_writer_add_kernel_binary(w, a, sizeof a, &h2));
    CHECK(h1 == h2 && h1 == r1.hash);
    lmb_writer_destroy(w);
}

/* Finishes and destroys the writer; *out_data is the verified file (to
 * free), or NULL after a failed check. */
static void finish_in_memory(lmb_writer *w, void **out_data, size_t *out_size) {
    *out_data = NULL;
    lmb_header hdr;
    lmb_header_init(&hdr);
    void *data = NULL;
    lm_status st = lmb_writer_finish(w, &hdr);
    if (!st) st = lmb_writer_to_memory(w, &data, out_size);
    lmb_writer_destroy(w);
    CHECK_OK(st);
    st = lmb_verify(data, *out_size, NULL, NULL);
    if (st) free(data);
    CHECK_OK(st);
    *out_data = data;
}

/* Thousands of commands through one writer: growth and vtable sharing. */
static void test_many_commands(void) {
    lmb_writer *w;
    CHECK_OK(lmb_writer_create(&w));
    fb_builder *b = lmb_writer_builder(w);
    for (uint32_t i = 0; i < 20000; i++) {
        uint32_t args[4] = {i, i + 1, i + 2, i + 3};
        fb_ref v = fb_create_vector_u32(b, args, 1 + i % 4);
        lmb_CoreCoord core = {(uint16_t)(i % 8), (uint16_t)(i / 8 % 8)};
        lmb_SetRuntimeArgs_start(b);
        lmb_SetRuntimeArgs_add_program_id(b, 1);
        lmb_SetRuntimeArgs_add_kernel_id(b, 2);
        lmb_SetRuntimeArgs_add_core(b, &core);
        lmb_SetRuntimeArgs_add_args(b, v);
        CHECK_OK(lmb_writer_add_command(w, LMB_Command_SetRuntimeArgs, lmb_SetRuntimeArgs_end(b)));
    }
    void *data;
    size_t size;
    finish_in_memory(w, &data, &size);
    CHECK(data != NULL);
    fb_vec cmds = lmb_LightMetalBinary_commands(lmb_root(data));
    CHECK_EQ_U64(cmds.len, 20000);
    const uint8_t *first_vt = NULL;
    for (uint32_t i = 0; i < cmds.len; i++) {
        fb_table t = lmb_CommandEntry_cmd(fb_vec_table(cmds, i));
        fb_vec args = lmb_SetRuntimeArgs_args(t);
        CHECK_EQ_U64(args.len, 1 + i % 4);
        CHECK_EQ_U64(fb_vec_u32(args, args.len - 1), i + args.len - 1);
        CHECK_EQ_U64(lmb_SetRuntimeArgs_core(t).y, i / 8 % 8);
        const uint8_t *vt = t - fb_rd_i32(t);
        if (i == 0) first_vt = vt;
        CHECK(vt == first_vt); /* one shared vtable */
    }
    free(data);
}

/* Vtables are shared across a growing index: of 400 tables in 200 shapes
 * (more than the index starts with), any two with equal vtable bytes share
 * one vtable. */
static void test_vtable_sharing_across_growth(void) {
    enum { SHAPES = 200, TABLES = 2 * SHAPES };
    fb_builder b;
    fb_builder_init(&b);
    fb_ref refs[TABLES];
    for (uint32_t i = 0; i < TABLES; i++) {
        uint32_t s = i % SHAPES;
        fb_start_table(&b);
        fb_add_u32(&b, s % 100, 7 + i);
        if (s >= 100) fb_add_u8(&b, 100, 1);
        refs[i] = fb_end_table(&b);
    }
    fb_ref vec = fb_create_vector_refs(&b, refs, TABLES);
    fb_start_table(&b);
    fb_add_ref(&b, 0, vec);
    fb_ref root = fb_end_table(&b);
    size_t size;
    const uint8_t *buf = fb_builder_finish(&b, root, NULL, &size);
    CHECK(buf != NULL);
    fb_vec tables = fb_get_vec(buf + fb_rd_u32(buf), 0);
    CHECK_EQ_U64(tables.len, TABLES);
    const uint8_t *vts[TABLES];
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < TABLES; i++) {
        fb_table t = fb_vec_table(tables, i);
        CHECK_EQ_U64(fb_get_u32(t, i % SHAPES % 100), 7 + i);
        vts[i] = t - fb_rd_i32(t);
        bool seen = false;
        for (uint32_t j = 0; j < i; j++) {
            bool same_bytes = fb_rd_u16(vts[j]) == fb_rd_u16(vts[i]) &&
                              memcmp(vts[j], vts[i], fb_rd_u16(vts[i])) == 0;
            CHECK(same_bytes == (vts[j] == vts[i]));
            seen |= same_bytes;
        }
        distinct += !seen;
    }
    CHECK(distinct >= SHAPES && distinct < TABLES);
    fb_builder_free(&b);
}

static void test_builder_misuse_is_sticky(void) {
    fb_builder b;
    fb_builder_init(&b);
    fb_add_u32(&b, 0, 5); /* outside a table */
    CHECK(fb_builder_status(&b) == LM_ERR_INTERNAL);
    CHECK_ERROR_HAS("outside a table");
    size_t size;
    CHECK(fb_builder_finish(&b, 0, NULL, &size) == NULL);
    fb_builder_reset(&b);
    fb_start_table(&b);
    fb_add_u32(&b, 1, 5);
    fb_add_u32(&b, 1, 6);
    CHECK(fb_end_table(&b) == 0);
    CHECK_ERROR_HAS("added twice");
    fb_builder_reset(&b);
    fb_start_table(&b);
    fb_create_string(&b, "x", 1);
    CHECK(fb_builder_status(&b) == LM_ERR_INTERNAL);
    CHECK_ERROR_HAS("inside a table");
    /* After a reset the same builder works again. */
    fb_builder_reset(&b);
    fb_ref s = fb_create_string(&b, "hello", 5);
    fb_start_table(&b);
    fb_add_ref(&b, 0, s);
    fb_add_u64(&b, 1, 77);
    fb_ref t = fb_end_table(&b);
    const void *buf = fb_builder_finish(&b, t, "TEST", &size);
    CHECK(buf != NULL && size % 8 == 0);
    fb_table root = fb_root(buf);
    CHECK(fb_get_u64(root, 1) == 77 && fb_get_str(root, 0).len == 5);
    CHECK(fb_get_u32(root, 7) == 0 && fb_get_str(root, 2).ptr == NULL);
    fb_builder_free(&b);
}

/* Bulk data beyond 4 GiB: a sparse file whose blob starts past 5 GiB. The
 * table area refers to it with 64-bit offsets; verification (with the blob
 * hash checked) and zero-copy access work through a mapping. */
static void test_blob_beyond_4gib(void) {
    const uint64_t far = 5ull << 30;
    uint8_t payload[64];
    for (int i = 0; i < 64; i++)
        payload[i] = (uint8_t)(i + 1);
    fb_builder b;
    fb_builder_init(&b);
    lmb_BlobRef ref = {far, sizeof payload, hash64(payload, sizeof payload, 0)};
    lmb_EnqueueWriteBuffer_start(&b);
    lmb_EnqueueWriteBuffer_add_buffer_id(&b, 1);
    lmb_EnqueueWriteBuffer_add_data(&b, &ref);
    fb_ref w = lmb_EnqueueWriteBuffer_end(&b);
    lmb_CommandEntry_start(&b);
    lmb_CommandEntry_add_cmd(&b, LMB_Command_EnqueueWriteBuffer, w);
    fb_ref e = lmb_CommandEntry_end(&b);
    fb_ref cmds = fb_create_vector_refs(&b, &e, 1);
    lmb_SystemDescriptor_start(&b);
    fb_ref sys = lmb_SystemDescriptor_end(&b);
    lmb_Version ver = {LMB_FORMAT_MAJOR, 0, 0};
    lmb_LightMetalBinary_start(&b);
    lmb_LightMetalBinary_add_format_version(&b, &ver);
    lmb_LightMetalBinary_add_system(&b, sys);
    lmb_LightMetalBinary_add_commands(&b, cmds);
    lmb_LightMetalBinary_add_data_offset(&b, LMB_DATA_REGION_ALIGN);
    lmb_LightMetalBinary_add_data_size(&b, far + sizeof payload);
    lmb_Integrity integrity = {LMB_HashAlgorithm_XXH3_64_Pieces, 0};
    lmb_LightMetalBinary_add_integrity(&b, &integrity);
    fb_ref root = lmb_LightMetalBinary_end(&b);
    size_t size;
    const void *finished = fb_builder_finish(&b, root, LMB_FILE_IDENTIFIER, &size);
    CHECK(finished && size <= LMB_DATA_REGION_ALIGN);
    /* The digest covers the table area with its padding. */
    static uint8_t table[LMB_DATA_REGION_ALIGN];
    memcpy(table, finished, size);
    size = LMB_DATA_REGION_ALIGN;
    CHECK_OK(lmb_reseal(table, size));
    char path[] = "/tmp/lm_format_big_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    bool written = pwrite(fd, table, size, 0) == (ssize_t)size &&
                   pwrite(fd, payload, sizeof payload, (off_t)(LMB_DATA_REGION_ALIGN + far)) ==
                       (ssize_t)sizeof payload;
    close(fd);
    fb_builder_free(&b);
    file_mapping m = {NULL, 0};
    lm_status st = written ? file_map(path, &m) : LM_ERR_IO;
    remove(path);
    CHECK(written);
    CHECK_OK(st);
    CHECK_EQ_U64(m.size, LMB_DATA_REGION_ALIGN + far + sizeof payload);
    lmb_verify_options opts;
    lmb_verify_options_init(&opts);
    opts.check_blob_hashes = true;
    st = lmb_verify(m.data, m.size, &opts, NULL);
    bool same = false;
    if (st == LM_OK) {
        fb_table r = lmb_root(m.data);
        fb_table cmd = lmb_CommandEntry_cmd(fb_vec_table(lmb_LightMetalBinary_commands(r), 0));
        lmb_BlobRef got = lmb_EnqueueWriteBuffer_data(cmd);
        const uint8_t *p = lmb_blob_data(m.data, r, got);
        same = got.offset == far && (uint64_t)(p - (const uint8_t *)m.data) > (4ull << 30) &&
               !memcmp(p, payload, sizeof payload);
    }
    file_unmap(&m);
    CHECK_OK(st);
    CHECK(same);
}

/* --------------------------------------------------------- corrupt files */

typedef struct corrupt {
    uint8_t *data;
    size_t size;
    fb_table root; /* of the intact copy, for locating things */
} corrupt;

static bool corrupt_begin(corrupt *c) {
    void *d;
    if (sample_build(&d, &c->size) != LM_OK) return false;
    c->data = d;
    c->root = lmb_root(d);
    return true;
}

static size_t pos_of(const corrupt *c, const void *p) {
    return (size_t)((const uint8_t *)p - c->data);
}

static fb_table sample_cmd(const corrupt *c, uint32_t i) {
    return fb_vec_table(lmb_LightMetalBinary_commands(c->root), i);
}

/* Verifies with blob hashes checked; expects `reason` and `needle`. The
 * file is resealed first (when its head allows), so that each check is met
 * on its own rather than as a digest mismatch (test_table_digest covers
 * that). */
static lm_status verify_reason(const corrupt *c, fb_reason *out_reason) {
    (void)lmb_reseal(c->data, c->size);
    lmb_verify_options opts;
    lmb_verify_options_init(&opts);
    opts.check_blob_hashes = true;
    return lmb_verify(c->data, c->size, &opts, out_reason);
}

#define CHECK_REJECTS(c, want, needle)                                                             \
    do {                                                                                           \
        fb_reason reason_ = FB_OK;                                                                 \
        CHECK_FAILS(verify_reason(c, &reason_), LM_ERR_INVALID_FILE, needle);                      \
        CHECK_ERROR_HAS(fb_reason_name(want));                                                     \
        if (reason_ != (want)) printf("  reason %s\n", fb_reason_name(reason_));                   \
        CHECK(reason_ == (want));                                                                  \
    } while (0)

static void test_reason_table(void) {
    for (int i = 0; i < FB_REASON_COUNT_; i++) {
        CHECK(fb_reason_name(i)[0] && fb_reason_text(i)[0]);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(fb_reason_name(i), fb_reason_name(j)) != 0);
    }
    CHECK(!strcmp(fb_reason_name(FB_REASON_COUNT_), "unknown"));
}

static void test_corrupt_truncated(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    c.size = 3;
    CHECK_REJECTS(&c, FB_ERR_TOO_SMALL, "3 bytes");
    c.size = 0;
    CHECK_REJECTS(&c, FB_ERR_TOO_SMALL, "0 bytes");
    /* Without its data region. */
    c.size = lmb_LightMetalBinary_data_offset(c.root);
    CHECK_REJECTS(&c, FB_ERR_DATA_REGION, "LightMetalBinary.data_size");
    /* Every shorter length is rejected too, never read past. */
    for (size_t n = 0; n < c.size; n += 1 + n / 64) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, c.data, n);
        lm_status st = lmb_verify(copy, n, NULL, NULL);
        free(copy);
        CHECK(st == LM_ERR_INVALID_FILE);
    }
    free(c.data);
}

static void test_corrupt_identifier(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    c.data[5] ^= 0x20;
    CHECK_REJECTS(&c, FB_ERR_IDENTIFIER, "expected \"LMB1\"");
    free(c.data);
}

static void test_corrupt_offsets(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    fb_wr_u32(c.data, 0xfffffff0u);
    CHECK_REJECTS(&c, FB_ERR_OFFSET, "at LightMetalBinary:");
    free(c.data);
    CHECK(corrupt_begin(&c));
    /* The system table's offset, pointed past the end of the file. */
    size_t at = pos_of(&c, c.root) + fb_field_offset(c.root, LMB_ID_LightMetalBinary_system);
    fb_wr_u32(c.data + at, (uint32_t)(c.size - at + 8));
    CHECK_REJECTS(&c, FB_ERR_OFFSET, "LightMetalBinary.system");
    /* An offset of 0 (pointing at itself) is the one way to make a loop. */
    fb_wr_u32(c.data + at, 0);
    CHECK_REJECTS(&c, FB_ERR_OFFSET, "offset 0");
    free(c.data);
}

static void test_corrupt_misaligned(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    fb_wr_u32(c.data, fb_rd_u32(c.data) + 1);
    CHECK_REJECTS(&c, FB_ERR_ALIGN, "table at byte");
    free(c.data);
    CHECK(corrupt_begin(&c));
    size_t at = pos_of(&c, c.root) + fb_field_offset(c.root, LMB_ID_LightMetalBinary_producer);
    fb_wr_u32(c.data + at, fb_rd_u32(c.data + at) + 2);
    CHECK_REJECTS(&c, FB_ERR_ALIGN, "LightMetalBinary.producer");
    free(c.data);
}

static void test_corrupt_vtable(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    size_t root = pos_of(&c, c.root);
    fb_wr_u32(c.data + root, 0x7ffffff0u); /* vtable far before the buffer */
    CHECK_REJECTS(&c, FB_ERR_VTABLE, "vtable at byte");
    free(c.data);
    CHECK(corrupt_begin(&c));
    root = pos_of(&c, c.root);
    fb_wr_u32(c.data + root, 0); /* vtable = the table itself: size 0 */
    CHECK_REJECTS(&c, FB_ERR_VTABLE, "vtable of 0 bytes");
    free(c.data);
    CHECK(corrupt_begin(&c));
    /* The CreateBuffer table claims to be 4 bytes long: fields fall outside. */
    fb_table t = lmb_CommandEntry_cmd(sample_cmd(&c, 0));
    size_t vt = pos_of(&c, t - fb_rd_i32(t));
    fb_wr_u16(c.data + vt + 2, 4);
    CHECK_REJECTS(&c, FB_ERR_FIELD, "commands[0].cmd<CreateBuffer>");
    free(c.data);
}

static void test_corrupt_union(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    fb_table e = sample_cmd(&c, 7);
    size_t at = pos_of(&c, e) + fb_field_offset(e, LMB_ID_CommandEntry_cmd - 1);
    c.data[at] = 200;
    CHECK_REJECTS(&c, FB_ERR_UNION_TYPE, "LightMetalBinary.commands[7].cmd: type 200");
    c.data[at] = 0;
    CHECK_REJECTS(&c, FB_ERR_UNION_VALUE, "type is NONE");
    /* A wrong member type: the CreateKernel table read as EnqueueWriteBuffer
     * has no room for the 24-byte BlobRef where its cores offset is. */
    c.data[at] = LMB_Command_EnqueueWriteBuffer;
    CHECK_REJECTS(&c, FB_ERR_FIELD, "commands[7].cmd<EnqueueWriteBuffer>.data: 24 bytes");
    free(c.data);
    CHECK(corrupt_begin(&c));
    /* The value's vtable entry removed while the type stays. */
    e = sample_cmd(&c, 3);
    size_t vt = pos_of(&c, e - fb_rd_i32(e));
    /* CommandEntry vtables are shared by all commands: break all of them. */
    fb_wr_u16(c.data + vt + 4 + 2 * LMB_ID_CommandEntry_cmd, 0);
    CHECK_REJECTS(&c, FB_ERR_REQUIRED, "CommandEntry.cmd");
    free(c.data);
}

static void test_corrupt_required_enum_string(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    fb_table k = lmb_CommandEntry_cmd(sample_cmd(&c, 7));
    size_t vt = pos_of(&c, k - fb_rd_i32(k));
    fb_wr_u16(c.data + vt + 4 + 2 * LMB_ID_CreateKernel_config, 0);
    CHECK_REJECTS(&c, FB_ERR_REQUIRED, "at LightMetalBinary.commands[7].cmd<CreateKernel>.config");
    free(c.data);
    CHECK(corrupt_begin(&c));
    fb_table cb = lmb_CommandEntry_cmd(sample_cmd(&c, 0));
    c.data[pos_of(&c, cb) + fb_field_offset(cb, LMB_ID_CreateBuffer_type)] = 9;
    CHECK_REJECTS(&c, FB_ERR_ENUM,
                  "commands[0].cmd<CreateBuffer>.type: value 9 (largest defined 2)");
    free(c.data);
    CHECK(corrupt_begin(&c));
    fb_str name = lmb_CreateKernel_name(lmb_CommandEntry_cmd(sample_cmd(&c, 7)));
    c.data[pos_of(&c, name.ptr) + name.len] = 'x';
    CHECK_REJECTS(&c, FB_ERR_STRING, "cmd<CreateKernel>.name: no NUL");
    free(c.data);
    CHECK(corrupt_begin(&c));
    fb_table sys = lmb_LightMetalBinary_system(c.root);
    fb_vec df = lmb_SystemDescriptor_data_formats(sys);
    c.data[pos_of(&c, df.data) + 1] = 0xee;
    CHECK_REJECTS(&c, FB_ERR_ENUM, "LightMetalBinary.system.data_formats[1]: value 238");
    free(c.data);
}

static void test_corrupt_huge_lengths(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    fb_table cfg = lmb_CreateKernel_config(lmb_CommandEntry_cmd(sample_cmd(&c, 7)));
    fb_vec ca = lmb_KernelConfig_compile_args(cfg);
    size_t len_at = pos_of(&c, ca.data) - 4;
    fb_wr_u32(c.data + len_at, 0xffffffffu);
    CHECK_REJECTS(&c, FB_ERR_LENGTH, "config.compile_args: 4294967295 elements");
    fb_wr_u32(c.data + len_at, 1u << 20);
    CHECK_REJECTS(&c, FB_ERR_VECTOR, "config.compile_args: 1048576 elements");
    free(c.data);
    CHECK(corrupt_begin(&c));
    fb_str name = lmb_CreateKernel_name(lmb_CommandEntry_cmd(sample_cmd(&c, 7)));
    fb_wr_u32(c.data + pos_of(&c, name.ptr) - 4, 0x7fffffff);
    CHECK_REJECTS(&c, FB_ERR_LENGTH, "string of 2147483647 bytes");
    fb_wr_u32(c.data + pos_of(&c, name.ptr) - 4, 1000000);
    CHECK_REJECTS(&c, FB_ERR_STRING, "run past the end");
    free(c.data);
    /* The command count itself. */
    CHECK(corrupt_begin(&c));
    fb_vec cmds = lmb_LightMetalBinary_commands(c.root);
    fb_wr_u32(c.data + pos_of(&c, cmds.data) - 4, 0x40000000);
    CHECK_REJECTS(&c, FB_ERR_LENGTH, "LightMetalBinary.commands");
    free(c.data);
}

static void test_corrupt_blobs(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    fb_table w = lmb_CommandEntry_cmd(sample_cmd(&c, 2));
    size_t at = pos_of(&c, w) + fb_field_offset(w, LMB_ID_EnqueueWriteBuffer_data);
    lmb_BlobRef ref = lmb_BlobRef_read(c.data + at), bad = ref;
    bad.size = ~0ull - 10;
    lmb_BlobRef_write(c.data + at, &bad);
    CHECK_REJECTS(&c, FB_ERR_BLOB, "commands[2].cmd<EnqueueWriteBuffer>.data");
    bad = ref;
    bad.offset += 1;
    lmb_BlobRef_write(c.data + at, &bad);
    CHECK_REJECTS(&c, FB_ERR_BLOB_ALIGN, "cmd<EnqueueWriteBuffer>.data");
    bad = ref;
    bad.hash ^= 1;
    lmb_BlobRef_write(c.data + at, &bad);
    CHECK_REJECTS(&c, FB_ERR_BLOB_HASH, "cmd<EnqueueWriteBuffer>.data");
    /* Hashes are checked only when asked. */
    CHECK_OK(lmb_verify(c.data, c.size, NULL, NULL));
    lmb_BlobRef_write(c.data + at, &ref);
    /* A flipped byte inside the data region. */
    c.data[lmb_LightMetalBinary_data_offset(c.root) + ref.offset + 5] ^= 1;
    CHECK_REJECTS(&c, FB_ERR_BLOB_HASH, "LightMetalBinary.");
    free(c.data);
    CHECK(corrupt_begin(&c));
    fb_vec kb = lmb_LightMetalBinary_kernel_binaries(c.root);
    lmb_BlobRef k = lmb_vec_BlobRef_at(kb, 1);
    k.offset = 1ull << 40;
    lmb_BlobRef_write(c.data + pos_of(&c, kb.data) + LMB_SIZE_BlobRef, &k);
    CHECK_REJECTS(&c, FB_ERR_BLOB, "LightMetalBinary.kernel_binaries[1]");
    free(c.data);
}

static void test_corrupt_root_fields(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    size_t root = pos_of(&c, c.root);
    size_t at = root + fb_field_offset(c.root, LMB_ID_LightMetalBinary_data_offset);
    fb_wr_u64(c.data + at, fb_rd_u64(c.data + at) + 64);
    CHECK_REJECTS(&c, FB_ERR_DATA_REGION, "is not a multiple of 4096");
    fb_wr_u64(c.data + at, fb_rd_u64(c.data + at) - 64 + 4096);
    CHECK_REJECTS(&c, FB_ERR_DATA_REGION, "LightMetalBinary.data_size");
    free(c.data);
    CHECK(corrupt_begin(&c));
    root = pos_of(&c, c.root);
    at = root + fb_field_offset(c.root, LMB_ID_LightMetalBinary_format_version);
    fb_wr_u16(c.data + at, LMB_FORMAT_MAJOR + 1);
    fb_wr_u16(c.data + at + 2, 0);
    CHECK_REJECTS(&c, FB_ERR_VERSION, "file is version 3.0");
    free(c.data);
}

/* Swaps two elements of a vector of offsets (offsets are relative). */
static void swap_refs(uint8_t *data, size_t p0, size_t p1) {
    uint64_t t0 = p0 + fb_rd_u32(data + p0), t1 = p1 + fb_rd_u32(data + p1);
    fb_wr_u32(data + p0, (uint32_t)(t1 - p0));
    fb_wr_u32(data + p1, (uint32_t)(t0 - p1));
}

static void test_corrupt_order(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    fb_vec tr = lmb_LightMetalBinary_traces(c.root);
    swap_refs(c.data, pos_of(&c, tr.data), pos_of(&c, tr.data) + 4);
    CHECK_REJECTS(&c, FB_ERR_ORDER, "LightMetalBinary.traces[1].trace_id: trace id 77 follows 78");
    free(c.data);
    CHECK(corrupt_begin(&c));
    fb_vec kb = lmb_LightMetalBinary_kernel_binaries(c.root);
    lmb_BlobRef k0 = lmb_vec_BlobRef_at(kb, 0);
    lmb_BlobRef_write(c.data + pos_of(&c, kb.data) + LMB_SIZE_BlobRef, &k0);
    CHECK_REJECTS(&c, FB_ERR_ORDER, "LightMetalBinary.kernel_binaries[1].hash");
    free(c.data);
}

/* Every single-bit flip of the table area: rejected or, if still valid,
 * fully readable. Run under ASan this proves no flip reads out of bounds. */
static void test_corrupt_bit_flips(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    size_t table_end = lmb_LightMetalBinary_data_offset(c.root);
    int accepted = 0, rejected = 0;
    uint8_t *sealed = malloc(c.size);
    CHECK(sealed);
    fb_verify_options fo;
    fb_verify_options_init(&fo);
    fo.identifier = LMB_FILE_IDENTIFIER;
    for (size_t i = 0; i < table_end; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            c.data[i] ^= (uint8_t)(1u << bit);
            /* The specialised pass (which names the failure through the
             * generic one) and the generic verifier alone agree exactly. */
            fb_reason r1 = FB_OK, r2 = FB_OK;
            lm_status s1 = lmb_verify_table_area(c.data, c.size, &r1);
            char m1[512];
            snprintf(m1, sizeof m1, "%s", lm_last_error());
            lm_status s2 = fb_verify(c.data, c.size, &lmb_desc_LightMetalBinary, &fo, &r2);
            CHECK(s1 == s2 && r1 == r2);
            if (s1) CHECK(!strcmp(m1, lm_last_error()));
            /* As changed, every flip is refused (the table digest)... */
            CHECK(lmb_verify(c.data, c.size, NULL, NULL) == LM_ERR_INVALID_FILE);
            /* ...and resealed, the structural checks decide alone. */
            memcpy(sealed, c.data, c.size);
            (void)lmb_reseal(sealed, c.size);
            lm_status st = lmb_verify(sealed, c.size, NULL, NULL);
            if (st == LM_OK) {
                accepted++;
                (void)sample_check(sealed, true); /* may differ; must not crash */
            } else {
                CHECK(st == LM_ERR_INVALID_FILE);
                CHECK(strstr(lm_last_error(), "invalid binary: ") == lm_last_error());
                rejected++;
            }
            c.data[i] ^= (uint8_t)(1u << bit);
        }
    }
    CHECK(rejected > 0 && accepted > 0);
    free(sealed);
    free(c.data);
}

/* The table area carries a digest: a change anywhere in it is refused with
 * a clear reason, including changes that are structurally valid (the
 * reproducer: one byte of the commands vector's length). */
static void test_table_digest(void) {
    corrupt c;
    CHECK(corrupt_begin(&c));
    fb_vec cmds = lmb_LightMetalBinary_commands(c.root);
    size_t len_at = pos_of(&c, cmds.data) - 4;
    CHECK(cmds.len > 2);
    c.data[len_at] = (uint8_t)(cmds.len - 1); /* one command fewer: still well formed */
    fb_reason reason = FB_OK;
    CHECK_FAILS(lmb_verify(c.data, c.size, NULL, &reason), LM_ERR_INVALID_FILE,
                "table-digest-mismatch");
    CHECK(reason == FB_ERR_DIGEST);
    CHECK_ERROR_HAS("LightMetalBinary.integrity.table_digest");
    /* The same change, resealed, is a valid (different) file. */
    CHECK_OK(lmb_reseal(c.data, c.size));
    CHECK_OK(lmb_verify(c.data, c.size, NULL, NULL));
    CHECK_EQ_U64(lmb_LightMetalBinary_commands(lmb_root(c.data)).len, cmds.len - 1);
    /* The padding up to the data region is covered too. */
    size_t pad = lmb_LightMetalBinary_data_offset(c.root) - 1;
    c.data[pad] ^= 0x40;
    CHECK_FAILS(lmb_verify(c.data, c.size, NULL, NULL), LM_ERR_INVALID_FILE,
                "table-digest-mismatch");
    c.data[pad] ^= 0x40;
    /* An unknown hash algorithm is refused by name. */
    fb_table r = lmb_root(c.data);
    uint8_t *alg = (uint8_t *)r + fb_field_offset(r, LMB_ID_LightMetalBinary_integrity);
    *alg = 7;
    CHECK_OK(lmb_reseal(c.data, c.size));
    CHECK_FAILS(lmb_verify(c.data, c.size, NULL, &reason), LM_ERR_INVALID_FILE,
                "unknown-hash-algorithm");
    CHECK(reason == FB_ERR_HASH_ALGORITHM);
    *alg = 0;
    CHECK_FAILS(lmb_verify(c.data, c.size, NULL, NULL), LM_ERR_INVALID_FILE,
                "unknown-hash-algorithm");
    free(c.data);
}

/* A recursive test schema: Node { child: Node; kids: [Node]; } */
static const fb_table_desc node_desc;
static const fb_field_desc node_fields[] = {
    {"child", 0, FB_T_OBJ, 0, 0, 0, NULL, &node_desc, NULL, 0},
    {"kids", 1, FB_T_VECTOR, FB_T_OBJ, 0, 0, NULL, &node_desc, NULL, 0},
};
static const fb_table_desc node_desc = {"Node", 2, node_fields};

static const void *node_chain(fb_builder *b, int length, size_t *out_size) {
    fb_builder_reset(b);
    fb_ref child = 0;
    for (int i = 0; i < length; i++) {
        fb_start_table(b);
        fb_add_ref(b, 0, child);
        child = fb_end_table(b);
    }
    return fb_builder_finish(b, child, NULL, out_size);
}

static void test_corrupt_deep_nesting(void) {
    fb_builder b;
    fb_builder_init(&b);
    size_t size;
    const void *buf = node_chain(&b, 100, &size);
    CHECK(buf);
    fb_reason reason;
    CHECK_FAILS(fb_verify(buf, size, &node_desc, NULL, &reason), LM_ERR_INVALID_FILE,
                "too-deep (tables are nested deeper than allowed) at Node.child.child");
    CHECK(reason == FB_ERR_DEPTH);
    buf = node_chain(&b, 30, &size);
    CHECK_OK(fb_verify(buf, size, &node_desc, NULL, NULL));
    fb_verify_options opts;
    fb_verify_options_init(&opts);
    opts.max_depth = 30;
    CHECK_OK(fb_verify(buf, size, &node_desc, &opts, NULL));
    opts.max_depth = 29;
    CHECK_FAILS(fb_verify(buf, size, &node_desc, &opts, NULL), LM_ERR_INVALID_FILE,
                "more than 29 nested tables");
    fb_builder_free(&b);
}

/* The specialised verifier skips the layout checks of a table whose vtable
 * it has accepted before, but only at the same position modulo 8: a table
 * that borrows the vtable of one 4 bytes away has its 8-byte field
 * misaligned, and is rejected exactly as by the generic verifier. */
static void test_corrupt_borrowed_vtable(void) {
    lmb_writer *w;
    CHECK_OK(lmb_writer_create(&w));
    fb_builder *b = lmb_writer_builder(w);
    for (uint32_t i = 0; i < 12; i++) {
        lmb_CreateBuffer_start(b);
        lmb_CreateBuffer_add_size(b, 4096 + i);
        lmb_CreateBuffer_add_buffer_id(b, i + 1);
        if (i % 3 == 1) lmb_CreateBuffer_add_type(b, LMB_BufferType_DRAM);
        if (i % 3 == 2) lmb_CreateBuffer_add_page_size(b, 1024);
        CHECK_OK(lmb_writer_add_command(w, LMB_Command_CreateBuffer, lmb_CreateBuffer_end(b)));
    }
    void *data;
    size_t size;
    finish_in_memory(w, &data, &size);
    CHECK(data != NULL);
    uint8_t *bytes = data;
    fb_vec cmds = lmb_LightMetalBinary_commands(lmb_root(data));
    /* Table j borrows the vtable of table i = j - 1 (the one the verifier
     * has just accepted) from another position modulo 8. */
    bool patched = false;
    for (uint32_t j = 1; j < cmds.len && !patched; j++) {
        fb_table ti = lmb_CommandEntry_cmd(fb_vec_table(cmds, j - 1));
        fb_table tj = lmb_CommandEntry_cmd(fb_vec_table(cmds, j));
        size_t pi = (size_t)(ti - bytes), pj = (size_t)(tj - bytes);
        if (pi % 8 == pj % 8) continue;
        size_t vt_i = pi - (size_t)(int64_t)fb_rd_i32(ti);
        fb_wr_u32(bytes + pj, (uint32_t)(int32_t)((int64_t)pj - (int64_t)vt_i));
        char needle[96];
        snprintf(needle, sizeof needle, "commands[%" PRIu32 "].cmd<CreateBuffer>.size", j);
        fb_reason reason = FB_OK;
        CHECK_FAILS(lmb_verify(data, size, NULL, &reason), LM_ERR_INVALID_FILE, needle);
        CHECK(reason == FB_ERR_ALIGN);
        patched = true;
    }
    CHECK(patched);
    free(data);
}

/* Shared subtables: 1000 x 1000 visits from a few kilobytes. */
static void test_corrupt_table_explosion(void) {
    fb_builder b;
    fb_builder_init(&b);
    fb_start_table(&b);
    fb_ref leaf = fb_end_table(&b);
    fb_ref refs[1000];
    for (int i = 0; i < 1000; i++)
        refs[i] = leaf;
    fb_ref kids = fb_create_vector_refs(&b, refs, 1000);
    fb_start_table(&b);
    fb_add_ref(&b, 1, kids);
    fb_ref mid = fb_end_table(&b);
    for (int i = 0; i < 1000; i++)
        refs[i] = mid;
    kids = fb_create_vector_refs(&b, refs, 1000);
    fb_start_table(&b);
    fb_add_ref(&b, 1, kids);
    fb_ref top = fb_end_table(&b);
    size_t size;
    const void *buf = fb_builder_finish(&b, top, NULL, &size);
    CHECK(buf && size < 10000);
    fb_reason reason;
    CHECK_FAILS(fb_verify(buf, size, &node_desc, NULL, &reason), LM_ERR_INVALID_FILE,
                "too-many-tables");
    CHECK(reason == FB_ERR_TABLE_COUNT);
    fb_builder_free(&b);
}

int main(void) {
    TEST_RUN(test_sample_round_trip);
    TEST_RUN(test_writer_save_and_map);
    TEST_RUN(test_writer_rejects_misuse);
    TEST_RUN(test_blob_dedup_compares_bytes);
    TEST_RUN(test_many_commands);
    TEST_RUN(test_blob_beyond_4gib);
    TEST_RUN(test_vtable_sharing_across_growth);
    TEST_RUN(test_builder_misuse_is_sticky);
    TEST_RUN(test_reason_table);
    TEST_RUN(test_corrupt_truncated);
    TEST_RUN(test_corrupt_identifier);
    TEST_RUN(test_corrupt_offsets);
    TEST_RUN(test_corrupt_misaligned);
    TEST_RUN(test_corrupt_vtable);
    TEST_RUN(test_corrupt_union);
    TEST_RUN(test_corrupt_required_enum_string);
    TEST_RUN(test_corrupt_huge_lengths);
    TEST_RUN(test_corrupt_blobs);
    TEST_RUN(test_corrupt_root_fields);
    TEST_RUN(test_corrupt_order);
    TEST_RUN(test_corrupt_bit_flips);
    TEST_RUN(test_table_digest);
    TEST_RUN(test_corrupt_deep_nesting);
    TEST_RUN(test_corrupt_table_explosion);
    TEST_RUN(test_corrupt_borrowed_vtable);
    return test_summary();
}
