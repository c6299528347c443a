/* hello_kernel: a DPRINT from both data movement processors of every core.
 *
 * The host collects the printed lines through the device's print callback,
 * echoes them, and checks that each (core, processor) greeted exactly once.
 * Prints PASS or FAIL.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../common/example.h"

#define GRID 8

static int seen[GRID][GRID][2];
static int lines, wrong;

static void on_print(void *user, uint32_t x, uint32_t y, const char *processor, const char *line) {
    (void)user;
    int dm1 = strcmp(processor, "DM1") == 0;
    char expected[128];
    snprintf(expected, sizeof expected, "Hello from core (%u,%u), %s, launch 7", x, y, processor);
    printf("[core (%u,%u) %s] %s\n", x, y, processor, line);
    lines++;
    if (x >= GRID || y >= GRID || strcmp(line, expected) != 0)
        wrong++;
    else
        seen[y][x][dm1]++;
}

static int failed(lm_status st, const char *what) {
    if (st == LM_OK) return 0;
    fprintf(stderr, "hello_kernel: %s: %s: %s\n", what, lm_status_string(st), lm_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    lm_device_options opts;
    lm_device_options_init(&opts);
    opts.print = on_print;
    lm_device *dev;
    if (failed(lm_device_open(&opts, &dev), "open device") || ex_capture_begin(dev, capture))
        return 1;

    lm_program prog;
    lm_kernel k0, k1;
    lm_core_range_set all = lm_core_range_set_of(0, 0, GRID - 1, GRID - 1);
    lm_kernel_config c0, c1;
    lm_kernel_config_init(&c0, LM_PROCESSOR_DM0);
    lm_kernel_config_init(&c1, LM_PROCESSOR_DM1);
    lm_kernel_define d0[] = {{"PROCESSOR_NAME", "\"DM0\""}}, d1[] = {{"PROCESSOR_NAME", "\"DM1\""}};
    c0.defines = d0;
    c0.define_count = 1;
    c1.defines = d1;
    c1.define_count = 1;
    const char *path = LM_EXAMPLE_DIR "/kernels/hello.c";
    uint32_t launch[] = {7};
    if (failed(lm_create_program(dev, &prog), "create program") ||
        failed(lm_create_kernel(prog, path, &all, &c0, &k0), "create DM0 kernel") ||
        failed(lm_create_kernel(prog, path, &all, &c1, &k1), "create DM1 kernel") ||
        failed(lm_set_common_runtime_args(prog, k0, launch, 1), "set args") ||
        failed(lm_set_common_runtime_args(prog, k1, launch, 1), "set args") ||
        failed(lm_enqueue_program(lm_device_command_queue(dev, 0), prog, true), "run"))
        return 1;
    lm_release_program(prog);
    int bad = ex_capture_end(dev, capture);
    bad |= failed(lm_device_close(dev), "close device");

    for (int y = 0; y < GRID; y++)
        for (int x = 0; x < GRID; x++)
            for (int p = 0; p < 2; p++)
                bad |= seen[y][x][p] != 1;
    bad |= wrong != 0 || lines != GRID * GRID * 2;
    printf("%d greetings from %d cores\n%s\n", lines, GRID * GRID, bad ? "FAIL" : "PASS");
    return bad;
}
