/* The hello_world example with lightmetal's C API: the same kernels, the
 * printed lines checked through the print callback. */
#include <stdio.h>
#include <string.h>

#include "example.h"

typedef struct lines {
    char text[2048];
    int count;
} lines;

static void collect(void *user, uint32_t x, uint32_t y, const char *processor, const char *line) {
    lines *l = user;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "(%u,%u) %s: %s\n", x, y, processor, line);
    l->count++;
    printf("[core (%u,%u) %s] %s\n", x, y, processor, line);
}

int main(int argc, char **argv) {
    const char *capture = ex_capture_path(argc, argv);
    lines got = {"", 0};
    lm_device_options opts;
    lm_device_options_init(&opts);
    opts.print = collect;
    opts.print_user = &got;
    lm_device *dev = NULL;
    if (ex_failed(lm_device_open(&opts, &dev), "open device")) return 1;
    lm_program prog;
    lm_kernel k;
    lm_core_range_set core = lm_core_range_set_of(2, 1, 2, 1);
    int bad = ex_capture_begin(dev, capture) ||
              ex_failed(lm_create_program(dev, &prog), "program") ||
              ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/kernels/hello_dm0.cpp", &core,
                                  LM_PROCESSOR_DM0, &k),
                        "dm0 kernel") ||
              ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/kernels/hello_dm1.cpp", &core,
                                  LM_PROCESSOR_DM1, &k),
                        "dm1 kernel") ||
              ex_failed(ex_kernel(prog, LM_EXAMPLE_DIR "/kernels/hello_compute.cpp", &core,
                                  LM_PROCESSOR_COMPUTE, &k),
                        "compute kernel") ||
              ex_failed(lm_enqueue_program(lm_device_command_queue(dev, 0), prog, true), "run") ||
              ex_capture_end(dev, capture);
    static const char *const want[] = {
        "(2,1) DM0: Hello, Core {2, 1} on DM0\n", "(2,1) DM1: Hello, Core {2, 1} on DM1\n",
        "(2,1) DM1: value 7 and 2.500000\n",      "(2,1) COMPUTE: Hello from UNPACK\n",
        "(2,1) COMPUTE: Hello from MATH\n",       "(2,1) COMPUTE: Hello from PACK\n"};
    int missing = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(got.text, want[i])) {
            printf("missing: %s", want[i]);
            missing++;
        }
    bool pass = !bad && missing == 0 && got.count == 6;
    printf("%s hello_world (C host): %d lines from DM0, DM1 and COMPUTE\n", pass ? "PASS" : "FAIL",
           got.count);
    if (ex_failed(lm_device_close(dev), "close device")) pass = false;
    return pass ? 0 : 1;
}
