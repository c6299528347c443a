/* Writes the seed corpus of the replay fuzz target (fuzz_replay.c) into the
 * directory argv[1]: small workloads captured through the public API on a
 * small device (2x1 cores, 2 DRAM banks of 16 MiB, the geometry the fuzz
 * target runs), each one checked by replaying it (every golden must match):
 *   copy.lmb   no kernels: DRAM and L1 buffers written and read, one freed
 *   scale.lmb  one data movement kernel on both cores, with per-core and
 *              common runtime arguments
 *   tiles.lmb  reader, compute (bfloat16 add) and writer kernels on one core,
 *              with three circular buffers
 *   trace.lmb  two cores synchronised by a semaphore, as a metal trace:
 *              captured, replayed twice, collected and loaded again
 *              (LoadTrace), replayed, both released
 * Every workload names its buffers and records goldens. The committed corpus
 * (tests/replay/fuzz_corpus) was written by this program; run it again when
 * the format changes.
 */
#include <stdio.h>
#include <string.h>

#include "lightmetal/lightmetal.h"

#define PAGE 1024u
#define WORDS 512u /* two pages of uint32 */

static int failed(lm_status st, const char *what) {
    if (!st) return 0;
    fprintf(stderr, "make_replay_seeds: %s: %s\n", what, lm_last_error());
    return 1;
}

static lm_status buffer(lm_device *dev, lm_buffer_type type, uint64_t size, uint64_t page,
                        lm_buffer *out) {
    lm_buffer_config c;
    lm_buffer_config_init(&c);
    c.type = type;
    c.size = size;
    c.page_size = page;
    return lm_create_buffer(dev, &c, out);
}

static uint32_t address(lm_buffer b) {
    uint64_t a = 0;
    lm_buffer_address(b, &a);
    return (uint32_t)a;
}

static lm_status kernel(lm_program prog, const char *name, const char *src,
                        const lm_core_range_set *cores, lm_processor p, lm_kernel *out) {
    lm_kernel_config c;
    lm_kernel_config_init(&c, p);
    return lm_create_kernel_from_string(prog, name, src, cores, &c, out);
}

static lm_status cb(lm_program prog, const lm_core_range_set *cores, uint32_t index) {
    lm_circular_buffer_config c;
    lm_circular_buffer_config_init(&c);
    uint32_t tile = (uint32_t)lm_tile_size(LM_DATA_FORMAT_FLOAT16_B);
    c.total_size = 2 * tile;
    c.index_count = 1;
    c.indices[0] = (lm_cb_index_config){index, LM_DATA_FORMAT_FLOAT16_B, tile};
    lm_circular_buffer h;
    return lm_create_circular_buffer(prog, cores, &c, &h);
}

static void fill(uint32_t *w, uint32_t n, uint32_t seed) {
    for (uint32_t i = 0; i < n; i++)
        w[i] = (i + seed) * 2654435761u;
}

/* No kernels: transfers, a freed buffer and goldens. */
static int copy_workload(lm_device *dev, lm_command_queue *cq) {
    static uint32_t data[WORDS], small[128], got[WORDS];
    fill(data, WORDS, 1);
    fill(small, 128, 2);
    lm_buffer d, l1, tmp;
    return failed(buffer(dev, LM_BUFFER_DRAM, sizeof data, PAGE, &d), "dram buffer") ||
           failed(buffer(dev, LM_BUFFER_L1, sizeof small, 256, &l1), "l1 buffer") ||
           failed(buffer(dev, LM_BUFFER_DRAM, PAGE, PAGE, &tmp), "buffer") ||
           failed(lm_capture_name_buffer(d, "data"), "name") ||
           failed(lm_capture_name_buffer(l1, "small"), "name") ||
           failed(lm_enqueue_write_buffer(cq, d, data, false), "write") ||
           failed(lm_enqueue_write_buffer(cq, l1, small, false), "write") ||
           failed(lm_enqueue_write_buffer(cq, tmp, data, false), "write") ||
           failed(lm_enqueue_read_buffer(cq, d, got, false), "read") ||
           failed(lm_finish(cq), "finish") || failed(lm_deallocate_buffer(tmp), "deallocate") ||
           failed(lm_capture_compare_to_capture(cq, d), "golden") ||
           failed(lm_capture_compare_to_capture(cq, l1), "golden");
}

static const char *scale_src =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    InterleavedAddrGenFast src = {.bank_base_address = get_arg_val(0),\n"
    "                                  .page_size = 1024, .is_dram = true};\n"
    "    InterleavedAddrGenFast dst = {.bank_base_address = get_arg_val(1),\n"
    "                                  .page_size = 1024, .is_dram = true};\n"
    "    uint32_t l1 = 0x20000, mul = get_common_arg_val(0), add = get_common_arg_val(1);\n"
    "    noc_async_read_page(my_x(), &src, l1);\n"
    "    noc_async_read_barrier();\n"
    "    volatile uint32_t *w = (volatile uint32_t *)l1;\n"
    "    for (int i = 0; i < 256; i++) w[i] = w[i] * mul + add;\n"
    "    noc_async_write_page(my_x(), &dst, l1);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

/* One kernel on both cores: out = in * 3 + 7, page x on core x. */
static int scale_workload(lm_device *dev, lm_command_queue *cq) {
    static uint32_t in[WORDS];
    fill(in, WORDS, 3);
    lm_buffer bin, bout;
    lm_program prog;
    lm_kernel k;
    lm_core_range_set all = lm_core_range_set_of(0, 0, 1, 0);
    if (failed(buffer(dev, LM_BUFFER_DRAM, sizeof in, PAGE, &bin), "buffer") ||
        failed(buffer(dev, LM_BUFFER_DRAM, sizeof in, PAGE, &bout), "buffer") ||
        failed(lm_capture_name_buffer(bin, "in"), "name") ||
        failed(lm_capture_name_buffer(bout, "out"), "name") ||
        failed(lm_enqueue_write_buffer(cq, bin, in, false), "write") ||
        failed(lm_create_program(dev, &prog), "program") ||
        failed(kernel(prog, "scale", scale_src, &all, LM_PROCESSOR_DM0, &k), "kernel"))
        return 1;
    uint32_t args[2] = {address(bin), address(bout)}, common[2] = {3, 7};
    return failed(lm_set_runtime_args(prog, k, (lm_core){0, 0}, args, 2), "args") ||
           failed(lm_set_runtime_args(prog, k, (lm_core){1, 0}, args, 2), "args") ||
           failed(lm_set_common_runtime_args(prog, k, common, 2), "common args") ||
           failed(lm_enqueue_program(cq, prog, false), "launch") ||
           failed(lm_capture_compare_to_capture(cq, bout), "golden") ||
           failed(lm_release_program(prog), "release");
}

static const char *reader_src =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    uint32_t tiles = get_arg_val(0), size = get_tile_size(0);\n"
    "    InterleavedAddrGenFast a = {.bank_base_address = get_arg_val(1), .page_size = size,\n"
    "                                .is_dram = true};\n"
    "    InterleavedAddrGenFast b = {.bank_base_address = get_arg_val(2), .page_size = size,\n"
    "                                .is_dram = true};\n"
    "    for (uint32_t t = 0; t < tiles; t++) {\n"
    "        cb_reserve_back(0, 1);\n"
    "        cb_reserve_back(1, 1);\n"
    "        noc_async_read_tile(t, &a, get_write_ptr(0));\n"
    "        noc_async_read_tile(t, &b, get_write_ptr(1));\n"
    "        noc_async_read_barrier();\n"
    "        cb_push_back(0, 1);\n"
    "        cb_push_back(1, 1);\n"
    "    }\n"
    "}\n";

static const char *add_src = "#include \"compute_kernel_api.h\"\n"
                             "void kernel_main(void) {\n"
                             "    uint32_t tiles = get_arg_val(0);\n"
                             "    binary_op_init_common(0, 1, 16);\n"
                             "    add_tiles_init(0, 1);\n"
                             "    for (uint32_t t = 0; t < tiles; t++) {\n"
                             "        cb_wait_front(0, 1);\n"
                             "        cb_wait_front(1, 1);\n"
                             "        tile_regs_acquire();\n"
                             "        add_tiles(0, 1, 0, 0, 0);\n"
                             "        tile_regs_commit();\n"
                             "        tile_regs_wait();\n"
                             "        cb_reserve_back(16, 1);\n"
                             "        pack_tile(0, 16);\n"
                             "        cb_push_back(16, 1);\n"
                             "        tile_regs_release();\n"
                             "        cb_pop_front(0, 1);\n"
                             "        cb_pop_front(1, 1);\n"
                             "    }\n"
                             "}\n";

static const char *writer_src =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    uint32_t tiles = get_arg_val(0);\n"
    "    InterleavedAddrGenFast dst = {.bank_base_address = get_arg_val(1),\n"
    "                                  .page_size = get_tile_size(16), .is_dram = true};\n"
    "    for (uint32_t t = 0; t < tiles; t++) {\n"
    "        cb_wait_front(16, 1);\n"
    "        noc_async_write_tile(t, &dst, get_read_ptr(16));\n"
    "        noc_async_write_barrier();\n"
    "        cb_pop_front(16, 1);\n"
    "    }\n"
    "}\n";

/* out = a + b on two bfloat16 tiles: reader, compute, writer on core (0,0). */
static int tiles_workload(lm_device *dev, lm_command_queue *cq) {
    enum { TILES = 2, TILE = 2048 };
    static uint16_t a[TILES * TILE / 2], b[TILES * TILE / 2];
    for (uint32_t i = 0; i < TILES * TILE / 2; i++) {
        a[i] = (uint16_t)(0x3f80u + (i % 97u));  /* bfloat16 values in [1, 2) */
        b[i] = (uint16_t)(0xbf00u + (i % 113u)); /* and in (-1, -0.5] */
    }
    lm_buffer da, db, dout;
    lm_program prog;
    lm_kernel reader, compute, writer;
    lm_core_range_set core = lm_core_range_set_of(0, 0, 0, 0);
    if (failed(buffer(dev, LM_BUFFER_DRAM, sizeof a, TILE, &da), "buffer") ||
        failed(buffer(dev, LM_BUFFER_DRAM, sizeof b, TILE, &db), "buffer") ||
        failed(buffer(dev, LM_BUFFER_DRAM, sizeof a, TILE, &dout), "buffer") ||
        failed(lm_capture_name_buffer(da, "a"), "name") ||
        failed(lm_capture_name_buffer(db, "b"), "name") ||
        failed(lm_capture_name_buffer(dout, "sum"), "name") ||
        failed(lm_enqueue_write_buffer(cq, da, a, false), "write") ||
        failed(lm_enqueue_write_buffer(cq, db, b, false), "write") ||
        failed(lm_create_program(dev, &prog), "program") || failed(cb(prog, &core, 0), "cb") ||
        failed(cb(prog, &core, 1), "cb") || failed(cb(prog, &core, 16), "cb") ||
        failed(kernel(prog, "reader", reader_src, &core, LM_PROCESSOR_DM0, &reader), "kernel") ||
        failed(kernel(prog, "add", add_src, &core, LM_PROCESSOR_COMPUTE, &compute), "kernel") ||
        failed(kernel(prog, "writer", writer_src, &core, LM_PROCESSOR_DM1, &writer), "kernel"))
        return 1;
    uint32_t rargs[3] = {TILES, address(da), address(db)}, cargs[1] = {TILES};
    uint32_t wargs[2] = {TILES, address(dout)};
    lm_core c0 = {0, 0};
    return failed(lm_set_runtime_args(prog, reader, c0, rargs, 3), "args") ||
           failed(lm_set_runtime_args(prog, compute, c0, cargs, 1), "args") ||
           failed(lm_set_runtime_args(prog, writer, c0, wargs, 2), "args") ||
           failed(lm_enqueue_program(cq, prog, false), "launch") ||
           failed(lm_capture_compare_to_capture(cq, dout), "golden") ||
           failed(lm_release_program(prog), "release");
}

static const char *sender_src = "#include \"dataflow_api.h\"\n"
                                "void kernel_main(void) {\n"
                                "    volatile uint32_t *w = (volatile uint32_t *)0x30000;\n"
                                "    for (uint32_t i = 0; i < 64; i++) w[i] = 0x100u + i;\n"
                                "    noc_async_write(0x30000, get_noc_addr(1, 0, 0x30000), 256);\n"
                                "    noc_async_write_barrier();\n"
                                "    noc_semaphore_inc(get_noc_addr(1, 0, get_semaphore(0)), 1);\n"
                                "}\n";

static const char *receiver_src =
    "#include \"dataflow_api.h\"\n"
    "void kernel_main(void) {\n"
    "    volatile uint32_t *sem = (volatile uint32_t *)get_semaphore(0);\n"
    "    noc_semaphore_wait(sem, 1);\n"
    "    noc_semaphore_set(sem, 0);\n"
    "    volatile uint32_t *w = (volatile uint32_t *)0x30000;\n"
    "    for (uint32_t i = 0; i < 64; i++) w[i] += get_arg_val(1);\n"
    "    uint64_t dst = get_noc_addr_interleaved(0, &(InterleavedAddrGenFast){\n"
    "        .bank_base_address = get_arg_val(0), .page_size = 256, .is_dram = true}, 0);\n"
    "    noc_async_write(0x30000, dst, 256);\n"
    "    noc_async_write_barrier();\n"
    "}\n";

/* Core (0,0) hands a block to core (1,0) under a semaphore; (1,0) writes it
 * out. Run through metal traces, one of them collected and loaded again. */
static int trace_workload(lm_device *dev, lm_command_queue *cq) {
    lm_buffer out;
    lm_program prog;
    lm_kernel sender, receiver;
    uint32_t sem, trace, loaded;
    lm_core_range_set c0 = lm_core_range_set_of(0, 0, 0, 0), c1 = lm_core_range_set_of(1, 0, 1, 0);
    lm_core_range_set both = lm_core_range_set_of(0, 0, 1, 0);
    if (failed(buffer(dev, LM_BUFFER_DRAM, 256, 256, &out), "buffer") ||
        failed(lm_capture_name_buffer(out, "block"), "name") ||
        failed(lm_create_program(dev, &prog), "program") ||
        failed(lm_create_semaphore(prog, &both, 0, &sem), "semaphore") ||
        failed(kernel(prog, "sender", sender_src, &c0, LM_PROCESSOR_DM0, &sender), "kernel") ||
        failed(kernel(prog, "receiver", receiver_src, &c1, LM_PROCESSOR_DM1, &receiver), "kernel"))
        return 1;
    uint32_t args[2] = {address(out), 5};
    lm_binary *blob = NULL;
    const void *data;
    uint64_t size;
    int bad = failed(lm_set_runtime_args(prog, receiver, (lm_core){1, 0}, args, 2), "args") ||
              failed(lm_begin_trace_capture(cq, &trace), "begin trace") ||
              failed(lm_enqueue_program(cq, prog, false), "record") ||
              failed(lm_end_trace_capture(cq, trace), "end trace") ||
              failed(lm_replay_trace(cq, trace, false), "replay trace") ||
              failed(lm_replay_trace(cq, trace, true), "replay trace") ||
              failed(lm_collect_trace(dev, trace, &blob), "collect trace") ||
              failed(lm_binary_data(blob, &data, &size), "trace data") ||
              failed(lm_load_trace(cq, data, size, &loaded), "load trace") ||
              failed(lm_replay_trace(cq, loaded, true), "replay loaded trace") ||
              failed(lm_capture_compare_to_capture(cq, out), "golden") ||
              failed(lm_release_trace(dev, trace), "release trace") ||
              failed(lm_release_trace(dev, loaded), "release trace") ||
              failed(lm_release_program(prog), "release");
    if (blob) lm_binary_free(blob);
    return bad;
}

/* Captures `workload` on a fresh small device, saves it as dir/name, then
 * replays it and requires every golden to match. */
static int capture(const char *dir, const char *name,
                   int (*workload)(lm_device *, lm_command_queue *)) {
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 2;
    o.grid_y = 1;
    o.dram_banks = 2;
    o.dram_bank_size = 16 << 20;
    o.num_threads = 1;
    lm_device *dev;
    if (failed(lm_device_open(&o, &dev), "open device")) return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_binary *bin = NULL;
    int bad = failed(lm_light_metal_begin_capture(dev, NULL), "begin capture") ||
              workload(dev, cq) || failed(lm_finish(cq), "finish") ||
              failed(lm_light_metal_end_capture(dev, &bin), "end capture");
    bad |= failed(lm_device_close(dev), "close device");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!bad) bad = failed(lm_binary_save(bin, path), "save");
    lm_binary_free(bin);
    lm_replay *r = NULL;
    lm_replay_report report;
    if (!bad)
        bad = failed(lm_replay_open_file(path, &r), "open the capture") ||
              failed(lm_replay_run(r, NULL, NULL, &report), "replay the capture");
    if (!bad && report.goldens_checked == 0) {
        fprintf(stderr, "make_replay_seeds: %s checks no golden\n", name);
        bad = 1;
    }
    lm_replay_close(r);
    return bad;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_replay_seeds DIR\n");
        return 2;
    }
    return capture(argv[1], "copy.lmb", copy_workload) ||
           capture(argv[1], "scale.lmb", scale_workload) ||
           capture(argv[1], "tiles.lmb", tiles_workload) ||
           capture(argv[1], "trace.lmb", trace_workload);
}
