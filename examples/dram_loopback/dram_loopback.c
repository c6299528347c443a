/* dram_loopback: DRAM -> L1 -> DRAM on one core.
 *
 * A data movement kernel on core (0,0) reads every page of an interleaved
 * DRAM buffer into an L1 staging area and writes it to a second DRAM buffer.
 * The host checks the copy byte for byte. Prints PASS or FAIL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/example.h"

#define PAGE_SIZE 2048
#define PAGES 96

static int failed(lm_status st, const char *what) {
    if (st == LM_OK) return 0;
    fprintf(stderr, "dram_loopback: %s: %s: %s\n", what, lm_status_string(st), lm_last_error());
    return 1;
}

static lm_status make_buffer(lm_device *dev, lm_buffer_type type, uint64_t size, lm_buffer *out) {
    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.type = type;
    cfg.size = size;
    cfg.page_size = size < PAGE_SIZE ? size : PAGE_SIZE;
    return lm_create_buffer(dev, &cfg, out);
}

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static uint8_t input[PAGES * PAGE_SIZE], output[PAGES * PAGE_SIZE];
    for (size_t i = 0; i < sizeof input; i++)
        input[i] = (uint8_t)(i * 13 + (i >> 11));

    lm_device *dev;
    if (failed(lm_device_open(NULL, &dev), "open device") || ex_capture_begin(dev, capture))
        return 1;
    lm_command_queue *cq = lm_device_command_queue(dev, 0);
    lm_buffer src, dst, staging;
    if (failed(make_buffer(dev, LM_BUFFER_DRAM, sizeof input, &src), "create src") ||
        failed(make_buffer(dev, LM_BUFFER_DRAM, sizeof input, &dst), "create dst") ||
        failed(make_buffer(dev, LM_BUFFER_L1, PAGE_SIZE, &staging), "create staging"))
        return 1;

    lm_program prog;
    lm_kernel k;
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, LM_PROCESSOR_DM0);
    lm_core_range_set core0 = lm_core_range_set_of(0, 0, 0, 0);
    if (failed(lm_create_program(dev, &prog), "create program") ||
        failed(lm_create_kernel(prog, LM_EXAMPLE_DIR "/kernels/loopback.c", &core0, &kc, &k),
               "create kernel"))
        return 1;

    uint64_t src_addr, dst_addr, l1_addr;
    lm_buffer_address(src, &src_addr);
    lm_buffer_address(dst, &dst_addr);
    lm_buffer_address(staging, &l1_addr); /* page 0 of an L1 buffer is on core (0,0) */
    uint32_t args[] = {(uint32_t)src_addr, (uint32_t)dst_addr, (uint32_t)l1_addr, PAGES, PAGE_SIZE};
    lm_core c00 = {0, 0};
    int bad = failed(lm_set_runtime_args(prog, k, c00, args, 5), "set runtime args") ||
              failed(lm_enqueue_write_buffer(cq, src, input, false), "write input") ||
              failed(lm_enqueue_program(cq, prog, false), "enqueue program") ||
              failed(lm_enqueue_read_buffer(cq, dst, output, true), "read output");
    bad = bad || memcmp(input, output, sizeof input) != 0;
    bad = bad || ex_capture_input(src, "input", capture) ||
          ex_capture_output(cq, dst, "output", capture) || ex_capture_end(dev, capture);
    printf("copied %d pages of %d bytes through L1 at 0x%llx\n", PAGES, PAGE_SIZE,
           (unsigned long long)l1_addr);
    lm_release_program(prog);
    bad |= failed(lm_device_close(dev), "close device");
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
