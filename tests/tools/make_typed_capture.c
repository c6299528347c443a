/* Captures a workload whose named buffers carry element types other than
 * their storage formats, checks that capture refuses pairs that do not fit,
 * and writes into the directory argv[1]:
 *   typed.lmb      a JIT-compiled kernel on a 2x2 grid computing, per element,
 *                    y    = ids * 3 - 7 (int32 arithmetic, wrapping)
 *                    mask = ids > 0
 *                    hout = x64 (a copy)      z64 = h16 (a copy)
 *                  Named buffers, 1024 elements (4096 bytes) each:
 *                    ids    Int64 stored as Int32, shape (32, 32), Input
 *                    y      Int64 stored as Int32, shape (32, 32), Output
 *                    mask   Bool stored as Int32, no shape, Output
 *                    x64    Float64 stored as Float32, shape (4, 256), Input
 *                    hout   Float16 stored as Float32, shape (4, 256), Output
 *                    h16    Float16 stored as Float32, shape (4, 256), Input
 *                    z64    Float64 stored as Float32, shape (4, 256), Output
 *                    flags  Bool stored as Int32, no shape, InputOutput
 *                    u64    UInt64 stored as UInt32, no shape, InputOutput
 *                    i8     Int8 stored as Int32, shape (32, 32), InputOutput
 *                    u16    UInt16 stored as UInt32, no shape, InputOutput
 *                    t64    an lmnn row-major float32 tensor (2, 3) named
 *                           Float64 with lmnn_capture_name_as
 *   badtype.lmb    typed.lmb with "ids" recorded as Float64 (stored as Int32,
 *                  a pair the format forbids), resealed
 *   badvalue.lmb   typed.lmb with "ids" recorded as element type 10 (undefined)
 * It also checks that the replay API reports the element types, and that
 * capturing a replay of typed.lmb records them again.
 * Exit status 1 when a capture step fails or a refusal is missing or worded
 * otherwise than expected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/lmb.h"
#include "lightmetal/lightmetal.h"
#include "lightmetal/nn.h"

enum { WORDS = 1024, PAGE = 1024, NBUF = 11 };

static const char *kernel_src =
    "#include \"dataflow_api.h\"\n"
    "static void rd(uint32_t page, uint32_t arg, uint32_t l1) {\n"
    "    InterleavedAddrGenFast g = {.bank_base_address = get_arg_val(arg),\n"
    "                                .page_size = 1024, .is_dram = true};\n"
    "    noc_async_read_page(page, &g, l1);\n"
    "    noc_async_read_barrier();\n"
    "}\n"
    "static void wr(uint32_t page, uint32_t arg, uint32_t l1) {\n"
    "    InterleavedAddrGenFast g = {.bank_base_address = get_arg_val(arg),\n"
    "                                .page_size = 1024, .is_dram = true};\n"
    "    noc_async_write_page(page, &g, l1);\n"
    "    noc_async_write_barrier();\n"
    "}\n"
    "void kernel_main(void) {\n"
    "    uint32_t page = my_y() * 2 + my_x();\n"
    "    uint32_t a = 0x20000, b = 0x21000, c = 0x22000;\n"
    "    rd(page, 0, a);\n"
    "    volatile uint32_t *ids = (volatile uint32_t *)a, *y = (volatile uint32_t *)b;\n"
    "    volatile uint32_t *m = (volatile uint32_t *)c;\n"
    "    for (int i = 0; i < 256; i++) {\n"
    "        y[i] = ids[i] * 3u - 7u;\n"
    "        m[i] = (int32_t)ids[i] > 0;\n"
    "    }\n"
    "    wr(page, 1, b);\n"
    "    wr(page, 2, c);\n"
    "    rd(page, 3, a);\n"
    "    wr(page, 4, a);\n"
    "    rd(page, 5, a);\n"
    "    wr(page, 6, a);\n"
    "}\n";

static int failed(lm_status st, const char *what) {
    if (!st) return 0;
    fprintf(stderr, "make_typed_capture: %s: %s\n", what, lm_last_error());
    return 1;
}

/* A call that must fail with `want` in its message. */
static int refused(lm_status st, const char *what, const char *want) {
    if (st == LM_ERR_INVALID_ARGUMENT && strstr(lm_last_error(), want)) return 0;
    fprintf(stderr,
            "make_typed_capture: %s: expected a refusal containing \"%s\", got status %d: %s\n",
            what, want, (int)st, st ? lm_last_error() : "(accepted)");
    return 1;
}

static lm_buffer_name_options typed(lm_data_format f, lm_element_type t, uint32_t rank, uint64_t d0,
                                    uint64_t d1) {
    lm_buffer_name_options o;
    lm_buffer_name_options_init(&o);
    o.format = f;
    o.element_type = t;
    o.rank = rank;
    o.shape[0] = d0;
    o.shape[1] = d1;
    return o;
}

/* Copies the saved binary with "ids"'s element type replaced by `value`,
 * reseals its digest and writes it to dir/name. */
static int write_patched(const char *dir, const char *name, const void *data, uint64_t size,
                         uint8_t value) {
    unsigned char *copy = malloc(size);
    if (!copy) return 1;
    memcpy(copy, data, size);
    fb_vec names = lmb_LightMetalBinary_buffer_names(lmb_root(copy));
    int bad = 1;
    for (uint32_t i = 0; i < names.len; i++) {
        fb_table t = fb_vec_table(names, i);
        if (strcmp(lmb_BufferName_name(t).ptr, "ids") != 0) continue;
        uint32_t off = fb_field_offset(t, LMB_ID_BufferName_element_type);
        if (!off) break;
        copy[(const unsigned char *)t - copy + off] = value;
        bad = failed(lmb_reseal(copy, size), "reseal");
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = bad ? NULL : fopen(path, "wb");
    if (!bad && (!f || fwrite(copy, 1, size, f) != size)) bad = 1;
    if (f && fclose(f) != 0) bad = 1;
    if (bad) fprintf(stderr, "make_typed_capture: cannot write %s\n", path);
    free(copy);
    return bad;
}

/* The replay API reports the element types the capture gave. */
static int check_replay_info(const void *bytes, uint64_t size, const char *what) {
    lm_replay *r;
    if (failed(lm_replay_open(bytes, size, &r), what)) return 1;
    static const struct {
        const char *name;
        lm_element_type type;
        lm_data_format format;
    } want[] = {{"ids", LM_ELEMENT_TYPE_INT64, LM_DATA_FORMAT_INT32},
                {"mask", LM_ELEMENT_TYPE_BOOL, LM_DATA_FORMAT_INT32},
                {"hout", LM_ELEMENT_TYPE_FLOAT16, LM_DATA_FORMAT_FLOAT32},
                {"u64", LM_ELEMENT_TYPE_UINT64, LM_DATA_FORMAT_UINT32},
                {"t64", LM_ELEMENT_TYPE_FLOAT64, LM_DATA_FORMAT_FLOAT32}};
    int bad = 0;
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int found = 0;
        for (uint32_t i = 0; i < lm_replay_buffer_count(r); i++) {
            lm_replay_buffer_info bi;
            if (lm_replay_buffer_info_at(r, i, &bi) || strcmp(bi.name, want[w].name)) continue;
            found = bi.element_type == want[w].type && bi.format == want[w].format;
        }
        if (!found) {
            fprintf(stderr, "make_typed_capture: %s: '%s' is not %s stored as %s\n", what,
                    want[w].name, lm_element_type_name(want[w].type),
                    lm_data_format_name(want[w].format));
            bad = 1;
        }
    }
    lm_replay_close(r);
    return bad;
}

/* Capturing a replay of the binary keeps its element types. */
static int check_recapture(const lm_device_options *o, const void *bytes, uint64_t size) {
    lm_device *dev;
    lm_replay *r;
    lm_binary *again = NULL;
    if (failed(lm_device_open(o, &dev), "open device")) return 1;
    int bad = failed(lm_replay_open(bytes, size, &r), "replay open");
    if (!bad) {
        bad = failed(lm_light_metal_begin_capture(dev, NULL), "begin capture") ||
              failed(lm_replay_run(r, dev, NULL, NULL), "replay under capture") ||
              failed(lm_light_metal_end_capture(dev, &again), "end capture");
        lm_replay_close(r);
    }
    const void *b2;
    uint64_t n2;
    if (!bad) bad = failed(lm_binary_data(again, &b2, &n2), "binary data");
    if (!bad) bad = check_replay_info(b2, n2, "recaptured");
    if (again) lm_binary_free(again);
    lm_device_close(dev);
    return bad;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_typed_capture DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    static uint32_t data[NBUF][WORDS], back[WORDS];
    for (uint32_t i = 0; i < WORDS; i++) {
        data[0][i] = (uint32_t)((int32_t)(i * 7919u % 2001u) - 1000); /* ids: both signs */
        float x = (float)i * 0.25f - 100.0f, h = (float)i / 64.0f;
        memcpy(&data[3][i], &x, 4);
        memcpy(&data[5][i], &h, 4);
        data[7][i] = i % 3 == 0;                           /* flags */
        data[8][i] = i * 4194301u;                         /* u64 */
        data[9][i] = (uint32_t)((int32_t)(i % 256) - 128); /* i8 */
        data[10][i] = i * 64u;                             /* u16 */
    }

    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 2;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.trace_region_size = 0;
    lm_device *dev;
    if (failed(lm_device_open(&o, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);

    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.size = WORDS * 4;
    bc.page_size = PAGE;
    lm_buffer buf[NBUF];
    static const char *names[NBUF] = {"ids", "y",     "mask", "x64", "hout", "h16",
                                      "z64", "flags", "u64",  "i8",  "u16"};
    const lm_data_format I = LM_DATA_FORMAT_INT32, U = LM_DATA_FORMAT_UINT32,
                         F = LM_DATA_FORMAT_FLOAT32;
    lm_buffer_name_options opts[NBUF] = {
        typed(I, LM_ELEMENT_TYPE_INT64, 2, 32, 32),   typed(I, LM_ELEMENT_TYPE_INT64, 2, 32, 32),
        typed(I, LM_ELEMENT_TYPE_BOOL, 0, 0, 0),      typed(F, LM_ELEMENT_TYPE_FLOAT64, 2, 4, 256),
        typed(F, LM_ELEMENT_TYPE_FLOAT16, 2, 4, 256), typed(F, LM_ELEMENT_TYPE_FLOAT16, 2, 4, 256),
        typed(F, LM_ELEMENT_TYPE_FLOAT64, 2, 4, 256), typed(I, LM_ELEMENT_TYPE_BOOL, 0, 0, 0),
        typed(U, LM_ELEMENT_TYPE_UINT64, 0, 0, 0),    typed(I, LM_ELEMENT_TYPE_INT8, 2, 32, 32),
        typed(U, LM_ELEMENT_TYPE_UINT16, 0, 0, 0),
    };
    lm_program prog;
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    lm_binary *binary = NULL;
    int bad = failed(lm_light_metal_begin_capture(dev, NULL), "begin capture");
    for (int i = 0; i < NBUF && !bad; i++)
        bad = failed(lm_create_buffer(dev, &bc, &buf[i]), "create buffer") ||
              failed(lm_capture_name_buffer_ex(buf[i], names[i], &opts[i]), names[i]);

    /* Pairs the format forbids, refused with what the element type needs. */
    lm_buffer spare;
    bad = bad || failed(lm_create_buffer(dev, &bc, &spare), "create buffer");
    lm_buffer_name_options no = typed(F, LM_ELEMENT_TYPE_INT64, 0, 0, 0);
    bad = bad || refused(lm_capture_name_buffer_ex(spare, "bad", &no), "Int64 as Float32",
                         "lm_capture_name_buffer: element type Int64 needs format Int32, the "
                         "options give Float32");
    no = typed(LM_DATA_FORMAT_INVALID, LM_ELEMENT_TYPE_BOOL, 0, 0, 0);
    bad = bad || refused(lm_capture_name_buffer_ex(spare, "bad", &no), "Bool as plain bytes",
                         "element type Bool needs format Int32 or UInt32, the options give none "
                         "(plain bytes)");
    no = typed(LM_DATA_FORMAT_FLOAT16_B, LM_ELEMENT_TYPE_FLOAT16, 0, 0, 0);
    bad = bad || refused(lm_capture_name_buffer_ex(spare, "bad", &no), "Float16 as Float16_b",
                         "element type Float16 needs format Float32, the options give Float16_b");
    no = typed(I, LM_ELEMENT_TYPE_UINT64, 0, 0, 0);
    bad = bad || refused(lm_capture_name_buffer_ex(spare, "bad", &no), "UInt64 as Int32",
                         "element type UInt64 needs format UInt32, the options give Int32");
    no = typed(I, (lm_element_type)10, 0, 0, 0);
    bad = bad || refused(lm_capture_name_buffer_ex(spare, "bad", &no), "element type 10",
                         "element type 10 is not a lm_element_type");

    /* The op library: the element type must fit the tensor's dtype. */
    lmnn_tensor_options to;
    lmnn_tensor_options_init(&to);
    to.dtype = LMNN_FLOAT32;
    to.layout = LMNN_ROW_MAJOR;
    lmnn_shape shape = LMNN_SHAPE(2, 3);
    float six[6] = {0.5f, -1, 2, 3.25f, 1e-3f, 7};
    lmnn_tensor t64 = {0}, tb = {0};
    bad = bad || failed(lmnn_from_host(dev, &shape, six, sizeof six, &to, &t64), "tensor");
    bad = bad || refused(lmnn_capture_name_as(t64, "t64", LM_ELEMENT_TYPE_INT64), "lmnn Int64",
                         "lmnn_capture_name_as: element type Int64 needs a row-major int32 "
                         "tensor, given row_major float32");
    bad = bad || failed(lmnn_capture_name_as(t64, "t64", LM_ELEMENT_TYPE_FLOAT64), "lmnn name");
    to.dtype = LMNN_BFLOAT16;
    bad = bad || failed(lmnn_from_host(dev, &shape, six, sizeof six, &to, &tb), "tensor");
    bad = bad || refused(lmnn_capture_name_as(tb, "tb", LM_ELEMENT_TYPE_FLOAT16), "lmnn Float16",
                         "element type Float16 needs a row-major float32 tensor, given row_major "
                         "bfloat16");

    uint64_t addr[7];
    static const int arg_buf[7] = {0, 1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 7 && !bad; i++)
        bad = failed(lm_buffer_address(buf[arg_buf[i]], &addr[i]), "address");
    for (int i = 0; i < NBUF && !bad; i++)
        if (i == 0 || i == 3 || i == 5 || i >= 7)
            bad = failed(lm_enqueue_write_buffer(cq, buf[i], data[i], false), "write");
    bad = bad || failed(lm_create_program(dev, &prog), "create program") ||
          failed(lm_create_kernel_from_string(prog, "typed", kernel_src, &all, &kc, &k),
                 "create kernel");
    uint32_t args[7];
    for (int i = 0; i < 7; i++)
        args[i] = (uint32_t)addr[i];
    for (uint32_t y = 0; y < 2 && !bad; y++)
        for (uint32_t x = 0; x < 2 && !bad; x++)
            bad = failed(lm_set_runtime_args(prog, k, (lm_core){x, y}, args, 7), "args");
    bad = bad || failed(lm_enqueue_program(cq, prog, false), "enqueue program");
    for (int i = 1; i < NBUF && !bad; i++)
        if (i != 3 && i != 5) bad = failed(lm_enqueue_read_buffer(cq, buf[i], back, true), "read");
    bad = bad || failed(lm_release_program(prog), "release program") ||
          failed(lm_light_metal_end_capture(dev, &binary), "end capture");
    if (t64.id) lmnn_tensor_free(t64);
    if (tb.id) lmnn_tensor_free(tb);
    char path[4096];
    snprintf(path, sizeof path, "%s/typed.lmb", dir);
    if (!bad) bad = failed(lm_binary_save(binary, path), "save");
    const void *bytes;
    uint64_t size;
    if (!bad) bad = failed(lm_binary_data(binary, &bytes, &size), "binary data");
    if (!bad)
        bad = check_replay_info(bytes, size, "replay") || check_recapture(&o, bytes, size) ||
              write_patched(dir, "badtype.lmb", bytes, size, LMB_ElementType_Float64) ||
              write_patched(dir, "badvalue.lmb", bytes, size, 10);
    if (binary) lm_binary_free(binary);
    lm_device_close(dev);
    return bad;
}
