/* multicast_semaphore: one core multicasts a block to a rectangle of cores.
 *
 * Core (0,0) writes a block to every other core of the 8x8 grid with one
 * multicast, releases them with a multicast semaphore and waits on a counting
 * semaphore until all have answered. Each receiver stamps the block with its
 * coordinates and writes it back to DRAM; the host checks every word.
 * Prints PASS or FAIL.
 */
#include <stdio.h>
#include <string.h>

#include "../common/example.h"

#define GX 8
#define GY 8
#define BLOCK_WORDS 256

static int failed(lm_status st, const char *what) {
    if (st == LM_OK) return 0;
    fprintf(stderr, "multicast_semaphore: %s: %s: %s\n", what, lm_status_string(st),
            lm_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    lm_device *dev;
    if (failed(lm_device_open(NULL, &dev), "open device") || ex_capture_begin(dev, capture))
        return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);

    /* An L1 buffer with one page per core gives every core the same block address. */
    lm_buffer_config bc;
    lm_buffer_config_init(&bc);
    bc.type = LM_BUFFER_L1;
    bc.size = GX * GY * BLOCK_WORDS * 4;
    bc.page_size = BLOCK_WORDS * 4;
    lm_buffer block, out;
    if (failed(lm_create_buffer(dev, &bc, &block), "create block")) return 1;
    bc.type = LM_BUFFER_DRAM;
    if (failed(lm_create_buffer(dev, &bc, &out), "create output")) return 1;
    uint64_t block_addr, out_addr;
    lm_buffer_address(block, &block_addr);
    lm_buffer_address(out, &out_addr);

    lm_program prog;
    lm_kernel sender, receiver;
    lm_core_range_set all = lm_core_range_set_of(0, 0, GX - 1, GY - 1);
    lm_core_range_set origin = lm_core_range_set_of(0, 0, 0, 0);
    lm_core_range_set others = {.count = 2};
    others.ranges[0] = (lm_core_range){{1, 0}, {GX - 1, 0}};
    others.ranges[1] = (lm_core_range){{0, 1}, {GX - 1, GY - 1}};
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_kernel_define defs[] = {{"BLOCK_WORDS", "256"}};
    kc.defines = defs;
    kc.define_count = 1;
    uint32_t go, done;
    if (failed(lm_create_program(dev, &prog), "create program") ||
        failed(lm_create_semaphore(prog, &all, 0, &go), "semaphore") ||
        failed(lm_create_semaphore(prog, &origin, 0, &done), "semaphore") ||
        failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/sender.c", &origin, &kc, &sender),
               "sender kernel") ||
        failed(
            lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/receiver.c", &others, &kc, &receiver),
            "receiver kernel"))
        return 1;
    uint32_t sargs[] = {(uint32_t)block_addr, GX - 1, GY - 1, GX * GY - 1};
    int bad = failed(lm_set_runtime_args(prog, sender, (lm_core){0, 0}, sargs, 4), "args");
    for (uint32_t y = 0; y < GY; y++)
        for (uint32_t x = 0; x < GX; x++) {
            if (!x && !y) continue;
            uint32_t rargs[] = {(uint32_t)block_addr, (uint32_t)out_addr, 0, 0};
            bad |= failed(lm_set_runtime_args(prog, receiver, (lm_core){x, y}, rargs, 4), "args");
        }
    uint32_t width[] = {GX};
    bad |= failed(lm_set_common_runtime_args(prog, receiver, width, 1), "common args");
    bad |= failed(lm_enqueue_program(cq, prog, true), "run");

    static uint32_t result[GX * GY * BLOCK_WORDS];
    bad |= failed(lm_enqueue_read_buffer(cq, out, result, true), "read output");
    bad |= ex_capture_output(cq, out, "output", capture) || ex_capture_end(dev, capture);
    int mismatches = 0;
    for (uint32_t c = 1; c < GX * GY; c++)
        for (uint32_t i = 0; i < BLOCK_WORDS; i++) {
            uint32_t stamp = (c / GX) << 8 | (c % GX);
            mismatches += result[c * BLOCK_WORDS + i] != (0x1000u + i + (stamp << 16));
        }
    printf("%d cores received a %d-byte block by multicast; %d mismatching words\n", GX * GY - 1,
           BLOCK_WORDS * 4, mismatches);
    lm_release_program(prog);
    bad |= mismatches != 0;
    bad |= failed(lm_device_close(dev), "close device");
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
