/* buffer_loopback: the smallest complete host program.
 *
 * Opens a simulated device, writes a DRAM buffer through command queue 0,
 * copies it into an L1 buffer through queue 1 (by way of the host), reads
 * both back and checks every byte. Prints PASS or FAIL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/example.h"

#define SIZE (64 * 2048)

static int check(lm_status st, const char *what) {
    if (st == LM_OK) return 0;
    fprintf(stderr, "buffer_loopback: %s failed: %s: %s\n", what, lm_status_string(st),
            lm_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    static uint8_t input[SIZE], staged[SIZE], output[SIZE];
    for (int i = 0; i < SIZE; i++)
        input[i] = (uint8_t)(i * 7 + 3);

    lm_device *dev;
    if (check(lm_device_open(NULL, &dev), "lm_device_open") || ex_capture_begin(dev, capture))
        return 1;
    lm_device_info info;
    lm_device_get_info(dev, &info);
    printf("device: %ux%u cores, %llu KiB L1 each, %u DRAM banks of %llu MiB\n", info.grid_x,
           info.grid_y, (unsigned long long)info.l1_size / 1024, info.dram_banks,
           (unsigned long long)info.dram_bank_size >> 20);

    lm_buffer_config cfg;
    lm_buffer_config_init(&cfg);
    cfg.size = SIZE;
    cfg.page_size = 2048;
    lm_buffer dram, l1;
    int failed = check(lm_create_buffer(dev, &cfg, &dram), "create DRAM buffer");
    cfg.type = LM_BUFFER_L1;
    failed |= check(lm_create_buffer(dev, &cfg, &l1), "create L1 buffer");
    if (failed) return 1;

    lm_command_queue *cq0 = lm_device_command_queue(dev, 0);
    lm_command_queue *cq1 = lm_device_command_queue(dev, 1);
    failed |= check(lm_enqueue_write_buffer(cq0, dram, input, false), "write DRAM");
    failed |= check(lm_enqueue_read_buffer(cq0, dram, staged, false), "read DRAM");
    failed |= check(lm_finish(cq0), "finish queue 0");
    failed |= check(lm_enqueue_write_buffer(cq1, l1, staged, true), "write L1");
    failed |= check(lm_enqueue_read_buffer(cq1, l1, output, true), "read L1");

    uint64_t dram_addr = 0, l1_addr = 0;
    lm_buffer_address(dram, &dram_addr);
    lm_buffer_address(l1, &l1_addr);
    printf("DRAM buffer at 0x%llx, L1 buffer at 0x%llx, %d bytes, pages of 2048 bytes\n",
           (unsigned long long)dram_addr, (unsigned long long)l1_addr, SIZE);

    failed |= memcmp(input, output, SIZE) != 0;
    failed |= ex_capture_output(cq1, l1, "l1", capture) || ex_capture_end(dev, capture);
    failed |= check(lm_device_close(dev), "lm_device_close");
    printf("%s\n", failed ? "FAIL" : "PASS");
    return failed;
}
