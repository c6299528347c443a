/* What lm_create_kernel builds, written out for comparison with
 * `lightmetal kcc`:
 *   kcc_reference KERNEL.c dm0|dm1|compute OUT.elf [NAME=VALUE...]
 * creates the kernel through the public API (with the given defines and the
 * compile-time arguments 7,8) on a small device and writes the ELF the
 * runtime placed. Exit 0 on success, 1 with a message otherwise. */
#include <stdio.h>
#include <string.h>

#include "lightmetal/lightmetal.h"
#include "runtime/program.h"

static int fail(const char *what) {
    fprintf(stderr, "kcc_reference: %s: %s\n", what, lm_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: kcc_reference KERNEL.c dm0|dm1|compute OUT.elf [NAME=VALUE...]\n");
        return 1;
    }
    lm_processor proc = !strcmp(argv[2], "dm0")   ? LM_PROCESSOR_DM0
                        : !strcmp(argv[2], "dm1") ? LM_PROCESSOR_DM1
                                                  : LM_PROCESSOR_COMPUTE;
    lm_kernel_define defs[16];
    uint32_t n = 0;
    for (int i = 4; i < argc && n < 16; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq) *eq = '\0';
        defs[n++] = (lm_kernel_define){argv[i], eq ? eq + 1 : NULL};
    }
    uint32_t args[] = {7, 8};
    lm_kernel_config kc;
    lm_kernel_config_init(&kc, proc);
    kc.defines = defs;
    kc.define_count = n;
    kc.compile_args = args;
    kc.compile_arg_count = 2;
    lm_device_options o;
    lm_device_options_init(&o);
    o.grid_x = 1;
    o.grid_y = 1;
    o.dram_banks = 1;
    o.dram_bank_size = 64 << 20;
    lm_device *dev;
    if (lm_device_open(&o, &dev)) return fail("open");
    lm_program prog;
    lm_kernel k;
    lm_core_range_set one = lm_core_range_set_of(0, 0, 0, 0);
    if (lm_create_program(dev, &prog)) return fail("program");
    if (lm_create_kernel(prog, argv[1], &one, &kc, &k)) return fail("lm_create_kernel");
    rt_kernel_desc d;
    if (rt_kernel_describe(prog, k, &d)) return fail("describe");
    FILE *f = fopen(argv[3], "wb");
    int ok = f && fwrite(d.elf, 1, d.elf_size, f) == d.elf_size;
    if (f && fclose(f) != 0) ok = 0;
    lm_device_close(dev);
    if (!ok) {
        fprintf(stderr, "kcc_reference: cannot write %s\n", argv[3]);
        return 1;
    }
    return 0;
}
