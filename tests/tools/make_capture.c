/* Captures a real workload through the public API and writes, into the
 * directory argv[1]:
 *   captured.lmb   the Light Metal binary: a JIT-compiled kernel computing
 *                  out[i] = in[i] * 3 + 7 on a 2x2 grid, and a golden of
 *                  "out". Named buffers, 4096 bytes each:
 *                    in    UInt32 without a shape, role from use: Input
 *                    out   UInt32 shape (32, 32), role from use: Output
 *                    f32   Float32 shape (4, 256), written and read back:
 *                          InputOutput
 *                    bf16  Float16_b shape (8, 256), written and read back
 *                          but named with the role Input
 *                    raw   no format (plain bytes), written and read back
 *   in.bin         the captured input
 *   out.bin        its result (what "out" holds after a replay)
 *   in2.bin        another input (its result no longer matches the golden)
 *   extra.bin      what f32, bf16 and raw hold
 */
#include <stdio.h>
#include <string.h>

#include "lightmetal/lightmetal.h"

enum { WORDS = 1024, PAGE = 1024 };

static const char *kernel_src =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    InterleavedAddrGenFast src = {.bank_base_address = get_arg_val(0),\n"
    "                                  .page_size = 1024, .is_dram = true};\n"
    "    InterleavedAddrGenFast dst = {.bank_base_address = get_arg_val(1),\n"
    "                                  .page_size = 1024, .is_dram = true};\n"
    "    uint32_t page = my_y() * 2 + my_x(), l1 = 0x20000;\n"
    "    noc_async_read_page(page, &src, l1);\n"
    "    noc_async_read_barrier();\n"
    "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
    "    for (int i = 0; i < 256; i++) w[i] = w[i] * 3u + 7u;\n"
    "    noc_async_write_page(page, &dst, l1);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

static int failed(lm_status st, const char *what) {
    if (!st) return 0;
    fprintf(stderr, "make_capture: %s: %s\n", what, lm_last_error());
    return 1;
}

static int save(const char *dir, const char *name, const uint32_t *words) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(words, 4, WORDS, f) != WORDS;
    if (f && fclose(f) != 0) bad = 1;
    if (bad) fprintf(stderr, "make_capture: cannot write %s\n", path);
    return bad;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_capture DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    static uint32_t in[WORDS], out[WORDS], in2[WORDS], got[WORDS], extra[WORDS], back[WORDS];
    for (uint32_t i = 0; i < WORDS; i++) {
        in[i] = i * 2654435761u + 11u;
        out[i] = in[i] * 3u + 7u;
        in2[i] = i ^ 0x5a5a5a5au;
        extra[i] = 0x3f800000u + i; /* float32 values from 1.0 up; bf16 pairs */
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
    lm_buffer bin, bout, bf32, bbf16, braw;
    lm_program prog;
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 1);
    lm_binary *binary = NULL;
    uint64_t ia = 0, oa = 0;
    lm_buffer_name_options n_in, n_out, n_f32, n_bf16;
    lm_buffer_name_options_init(&n_in);
    n_in.format = LM_DATA_FORMAT_UINT32;
    lm_buffer_name_options_init(&n_out);
    n_out.format = LM_DATA_FORMAT_UINT32;
    n_out.rank = 2;
    n_out.shape[0] = n_out.shape[1] = 32;
    lm_buffer_name_options_init(&n_f32);
    n_f32.format = LM_DATA_FORMAT_FLOAT32;
    n_f32.rank = 2;
    n_f32.shape[0] = 4;
    n_f32.shape[1] = 256;
    lm_buffer_name_options_init(&n_bf16);
    n_bf16.role = LM_BUFFER_ROLE_INPUT;
    n_bf16.format = LM_DATA_FORMAT_FLOAT16_B;
    n_bf16.rank = 2;
    n_bf16.shape[0] = 8;
    n_bf16.shape[1] = 256;
    int bad = failed(lm_light_metal_begin_capture(dev, NULL), "begin capture") ||
              failed(lm_create_buffer(dev, &bc, &bin), "create buffer") ||
              failed(lm_create_buffer(dev, &bc, &bout), "create buffer") ||
              failed(lm_create_buffer(dev, &bc, &bf32), "create buffer") ||
              failed(lm_create_buffer(dev, &bc, &bbf16), "create buffer") ||
              failed(lm_create_buffer(dev, &bc, &braw), "create buffer") ||
              failed(lm_capture_name_buffer_ex(bin, "in", &n_in), "name buffer") ||
              failed(lm_capture_name_buffer_ex(bout, "out", &n_out), "name buffer") ||
              failed(lm_capture_name_buffer_ex(bf32, "f32", &n_f32), "name buffer") ||
              failed(lm_capture_name_buffer_ex(bbf16, "bf16", &n_bf16), "name buffer") ||
              failed(lm_capture_name_buffer(braw, "raw"), "name buffer") ||
              failed(lm_enqueue_write_buffer(cq, bf32, extra, false), "write") ||
              failed(lm_enqueue_write_buffer(cq, bbf16, extra, false), "write") ||
              failed(lm_enqueue_write_buffer(cq, braw, extra, false), "write") ||
              failed(lm_buffer_address(bin, &ia), "address") ||
              failed(lm_buffer_address(bout, &oa), "address") ||
              failed(lm_enqueue_write_buffer(cq, bin, in, false), "write") ||
              failed(lm_create_program(dev, &prog), "create program") ||
              failed(lm_create_kernel_from_string(prog, "scale", kernel_src, &all, &kc, &k),
                     "create kernel");
    uint32_t args[2] = {(uint32_t)ia, (uint32_t)oa};
    for (uint32_t y = 0; y < 2 && !bad; y++)
        for (uint32_t x = 0; x < 2 && !bad; x++)
            bad = failed(lm_set_runtime_args(prog, k, (lm_core){x, y}, args, 2), "args");
    bad = bad || failed(lm_enqueue_program(cq, prog, false), "enqueue program") ||
          failed(lm_enqueue_read_buffer(cq, bout, got, true), "read") ||
          failed(lm_capture_compare_to_capture(cq, bout), "golden") ||
          failed(lm_enqueue_read_buffer(cq, bf32, back, true), "read") ||
          failed(lm_enqueue_read_buffer(cq, bbf16, back, true), "read") ||
          failed(lm_enqueue_read_buffer(cq, braw, back, true), "read") ||
          failed(lm_release_program(prog), "release program") ||
          failed(lm_light_metal_end_capture(dev, &binary), "end capture");
    if (!bad && memcmp(got, out, sizeof out) != 0) {
        fprintf(stderr, "make_capture: the live run computed a wrong result\n");
        bad = 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/captured.lmb", dir);
    if (!bad) bad = failed(lm_binary_save(binary, path), "save");
    if (binary) lm_binary_free(binary);
    lm_device_close(dev);
    if (bad) return 1;
    return save(dir, "in.bin", in) | save(dir, "out.bin", out) | save(dir, "in2.bin", in2) |
           save(dir, "extra.bin", extra);
}
