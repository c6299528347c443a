/* Fuzz target for the interpreter: random instruction words run as a kernel.
 *
 * The input's words become the code segment (plus a small data segment); the
 * program runs in slices under a budget, with an ecall handler whose answer
 * (continue, block, exit, fault) depends on a7. Every run goes through both
 * dispatchers — computed goto and switch — and they must agree exactly on
 * registers, pc, instructions retired, the stop reason and memory. Whatever
 * the words, the host must not crash and nothing outside the hart's memory may
 * change (the sanitizers watch that). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rv_test_elf.h"
#include "sim/rv32/rv_hart.h"

#define MAX_WORDS 1024
#define L1_SIZE (64u * 1024u)
#define SLICES 8
#define SLICE_BUDGET 4000

static rv_ecall_result on_ecall(void *ctx, rv_hart *h) {
    (void)ctx;
    switch (h->x[17] & 3) {
    case 0:
        h->x[10] = h->x[11] + 1;
        return RV_ECALL_CONTINUE;
    case 1:
        return RV_ECALL_BLOCK;
    case 2:
        return RV_ECALL_EXIT;
    default:
        snprintf(h->fault.detail, sizeof h->fault.detail, "rejected");
        return RV_ECALL_FAULT;
    }
}

typedef struct outcome {
    rv_stop stop;
    uint32_t x[32], pc;
    uint64_t instret;
} outcome;

static void run(const rv_image *image, uint8_t *l1, uint8_t *local, bool use_switch, outcome *out) {
    rv_hart h;
    memset(l1, 0, L1_SIZE);
    rv_local ls;
    rv_local_init(&ls, local, false);
    if (rv_hart_init(&h, image, l1, L1_SIZE, &ls)) abort();
    rv_stop stop = RV_STOP_BUDGET;
    for (int s = 0; s < SLICES && (stop == RV_STOP_BUDGET || stop == RV_STOP_BLOCK); s++)
        stop = use_switch ? rv_run_switch(&h, SLICE_BUDGET, on_ecall, NULL)
                          : rv_run(&h, SLICE_BUDGET, on_ecall, NULL);
    out->stop = stop;
    memcpy(out->x, h.x, sizeof out->x);
    out->pc = h.pc;
    out->instret = h.instret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint32_t words[MAX_WORDS];
    size_t n = size / 4 < MAX_WORDS ? size / 4 : MAX_WORDS;
    if (n == 0) return 0;
    memcpy(words, data, n * 4);
    static const uint8_t initial[64] = {1, 2, 3, 4};
    test_seg segs[2] = {
        {0, KMAP_CODE_BASE, ELF_PF_R | ELF_PF_X, 0, words, (uint32_t)(n * 4)},
        {0, KMAP_LOCAL_BASE, ELF_PF_R | ELF_PF_W, 256, initial, sizeof initial},
    };
    static uint8_t elf[52 + 64 + 4 * MAX_WORDS + 64 + 16];
    size_t elf_size = test_elf_build(elf, sizeof elf, KMAP_CODE_BASE, segs, 2);
    rv_image *image;
    if (rv_image_load(elf, elf_size, &image)) return 0; /* the loader may refuse: fine */
    /* Static: fresh allocations of this size cost page faults on every input. */
    static _Alignas(64) uint8_t l1a[L1_SIZE], l1b[L1_SIZE];
    static _Alignas(64) uint8_t la[KMAP_LOCAL_SIZE], lb[KMAP_LOCAL_SIZE];
    outcome a, b;
    run(image, l1a, la, false, &a);
    run(image, l1b, lb, true, &b);
    if (a.stop != b.stop || a.pc != b.pc || a.instret != b.instret ||
        memcmp(a.x, b.x, sizeof a.x) || memcmp(l1a, l1b, L1_SIZE) ||
        memcmp(la, lb, KMAP_LOCAL_SIZE))
        abort(); /* the two dispatchers disagree */
    rv_image_free(image);
    return 0;
}
