/* Fuzz target over replay: any input goes through lm_replay_open (complete
 * verification); one that opens and describes a small device (at most 4
 * cores, 4 DRAM banks of at most 16 MiB) is then run with lm_replay_run on a
 * simulated device of that geometry with a small watchdog, so every input
 * stays fast. Whatever the bytes, the host must not crash, hang or touch
 * memory it does not own (the sanitizers watch that), every failure must
 * leave a one-line message, and a run must report every device error it
 * caused (closing the device afterwards finds none). Built as a libFuzzer
 * target in a fuzz build (LM_FUZZ_INSTRUMENT) and, everywhere, as a replay
 * of the regression corpus, which make_replay_seeds wrote.
 *
 * Two bits of the input's size choose run options, so both paths get
 * exercised without taking bytes from the file: bit 0 runs the workload
 * twice (loops = 2), bit 1 compares goldens with a tolerance. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "format/lmb.h"
#include "lightmetal/lightmetal.h"

#define MAX_CORES 4u
#define MAX_BANKS 4u
#define MAX_BANK_SIZE (16ull << 20)
#define WATCHDOG 50000u /* instructions per kernel per launch */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Mutated files would almost all stop at the table digest: seal them
 * anew so mutations reach verification's later checks and the run. Blob
 * hashes are checked on half the inputs (bit 2 of the size), so changed
 * data reaches the device on the other half. */
static void reseal(uint8_t *file, size_t size) {
    (void)lmb_reseal(file, size);
}

/* Every failure names its cause in one line. */
static void expect_message(lm_status st) {
    if (st == LM_OK) return;
    const char *m = lm_last_error();
    if (!m || !m[0] || strchr(m, '\n')) abort();
}

/* Kernels' DPRINT output is dropped: the fuzzer's output stays readable. */
static void discard(void *user, uint32_t x, uint32_t y, const char *processor, const char *line) {
    (void)user;
    (void)x;
    (void)y;
    (void)processor;
    (void)line;
}

/* Device options for the verified file's system descriptor, or false when
 * the described device is larger than the fuzz target runs. */
static bool small_device(fb_table root, lm_device_options *o) {
    fb_table sys = lmb_LightMetalBinary_system(root);
    uint32_t gx = lmb_SystemDescriptor_grid_x(sys), gy = lmb_SystemDescriptor_grid_y(sys);
    uint32_t banks = lmb_SystemDescriptor_dram_banks(sys);
    uint64_t bank_size = lmb_SystemDescriptor_dram_bank_size(sys);
    if (gx == 0 || gy == 0 || gx * gy > MAX_CORES || banks > MAX_BANKS || bank_size > MAX_BANK_SIZE)
        return false;
    lm_device_options_init(o);
    o->grid_x = gx;
    o->grid_y = gy;
    o->l1_size = lmb_SystemDescriptor_l1_size(sys);
    o->dram_banks = banks;
    o->dram_bank_size = bank_size;
    /* What lm_replay_run gives a device it opens itself. */
    if (o->trace_region_size > bank_size / 2) o->trace_region_size = 0;
    o->num_threads = 1;
    o->watchdog_instructions = WATCHDOG;
    o->print = discard;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *file = malloc(size ? size : 1);
    if (!file) return 0;
    if (size) memcpy(file, data, size);
    reseal(file, size);
    lm_replay *r;
    lm_status st = lm_replay_open(file, size, &r);
    expect_message(st);
    lm_device_options o;
    if (!st && small_device(lmb_root(file), &o)) {
        lm_device *dev;
        lm_status ds = lm_device_open(&o, &dev);
        expect_message(ds); /* a descriptor outside the device's limits */
        if (!ds) {
            lm_replay_options ro;
            lm_replay_options_init(&ro);
            ro.loops = 1 + (uint32_t)(size & 1);
            ro.tolerance = (size & 2) != 0;
            ro.atol = 1e-3;
            ro.num_threads = 1;
            ro.check_blob_hashes = (size & 4) != 0;
            lm_replay_report report;
            expect_message(lm_replay_run(r, dev, &ro, &report));
            if (lm_device_close(dev) != LM_OK) abort(); /* an error the run did not report */
        }
    }
    if (!st) lm_replay_close(r);
    free(file);
    return 0;
}
