/* An RV32IM hart (one simulated RISC-V processor) and the interpreter that
 * runs it.
 *
 * Memory seen by a hart (sim/kernel_map.h): its core's L1 at address 0, its
 * private local memory (data, bss, stack) and its image's code region, which
 * is read-only. Anything else traps. Loads and stores of any width may be
 * unaligned as long as every byte lies inside one region: clang emits such
 * accesses for packed structures, and allowing them costs nothing.
 *
 * Typical use by the core scheduler:
 *
 *     rv_hart h;
 *     rv_local_init(&local, bytes, true);             // once per memory
 *     rv_hart_init(&h, image, l1, l1_size, &local);  // per launch
 *     for (;;) {
 *         rv_stop s = rv_run(&h, slice, on_ecall, ctx);
 *         if (s == RV_STOP_BLOCK) { park; continue later; }
 *         if (s == RV_STOP_FAULT) { rv_fault_describe(&h, msg, sizeof msg); fail; }
 *         ...
 *     }
 *
 * Threads: a hart is plain data; one thread at a time may run it. Harts of
 * the same image may run concurrently; harts of one core share the L1 and see
 * each other's stores in whatever order the scheduler interleaves them.
 */
#ifndef LM_SIM_RV32_RV_HART_H
#define LM_SIM_RV32_RV_HART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"
#include "sim/kernel_map.h"
#include "sim/rv32/rv_image.h"

/* Where a kernel's entry function returns to: rv_hart_init puts it in ra, and
 * a jump there ends the run with RV_STOP_EXIT (exit code in a0). It lies just
 * past the code region, so it can never be a real instruction. */
#define RV_RETURN_ADDR (KMAP_CODE_BASE + KMAP_CODE_SIZE)

typedef enum rv_fault_cause {
    RV_FAULT_NONE = 0,
    RV_FAULT_ILLEGAL,    /* not an RV32IM instruction; insn holds the word */
    RV_FAULT_LOAD,       /* load outside the hart's memory; addr, size */
    RV_FAULT_STORE,      /* store outside the hart's writable memory; addr, size */
    RV_FAULT_JUMP,       /* jump or taken branch to a non-code or misaligned addr */
    RV_FAULT_FETCH,      /* execution reached a word that is not code (pc) */
    RV_FAULT_BREAKPOINT, /* ebreak */
    RV_FAULT_ECALL       /* the host rejected an ecall; detail says why */
} rv_fault_cause;

/* Set when rv_run returns RV_STOP_FAULT. `pc` is the faulting instruction. */
typedef struct rv_fault {
    rv_fault_cause cause;
    uint32_t pc;
    uint32_t addr; /* LOAD/STORE: first byte; JUMP: target */
    uint32_t size; /* LOAD/STORE: access width in bytes */
    uint32_t insn; /* ILLEGAL: the instruction word */
    char detail[200];
} rv_fault;

/* A hart's private memory (KMAP_LOCAL_SIZE bytes) and which part of it may
 * hold anything but zeros, kept by the owner of the memory from one launch to
 * the next. Why: every launch must start from the image's data and zeros,
 * and clearing all 128 KiB of every hart dominated the cost of launching a
 * small program; kernels touch a few hundred bytes of stack. Everything
 * outside [0, data_end) and [dirty_lo, KMAP_LOCAL_SIZE) is zero. */
typedef struct rv_local {
    uint8_t *bytes;
    uint32_t data_end; /* the last image's data and bss end here */
    uint32_t dirty_lo; /* lowest byte at or above data_end ever written */
} rv_local;

/* Sets up `local` over `bytes` (KMAP_LOCAL_SIZE bytes, owned by the caller
 * and outliving `local`). known_zero: the bytes are all zero (fresh anonymous
 * memory); otherwise the first rv_hart_init clears them all. */
void rv_local_init(rv_local *local, uint8_t *bytes, bool known_zero);

/* Records a host write of `size` bytes at offset `off` of local memory (the
 * interpreter records the hart's own stores). */
static inline void rv_local_wrote(rv_local *local, uint32_t off, uint32_t size) {
    if (size == 0 || off + size <= local->data_end) return;
    uint32_t lo = off > local->data_end ? off : local->data_end;
    if (lo < local->dirty_lo) local->dirty_lo = lo;
}

typedef struct rv_hart {
    uint32_t x[32]; /* x[0] reads as zero; writes to it are discarded */
    uint32_t pc;
    uint64_t instret; /* instructions completed since rv_hart_init */
    const rv_image *image;
    uint8_t *l1; /* the core's L1, l1_size bytes, shared with its other harts */
    uint32_t l1_size;
    uint8_t *local; /* private memory, KMAP_LOCAL_SIZE bytes (local_state->bytes) */
    rv_local *local_state;
    rv_fault fault;
} rv_hart;

/* Prepares `hart` to run `image` from its entry point: copies the image's
 * initial data into local memory and zeroes the rest (bss and stack; only
 * what may be dirty, see rv_local), zeroes the registers, then sets sp to the
 * top of local memory (16-byte aligned, as the ilp32 ABI wants) and ra to
 * RV_RETURN_ADDR. The loader, not a crt0, sets sp, so an entry function
 * written in C works as is.
 * The caller owns l1 (l1_size bytes) and local; both must outlive every
 * rv_run of this hart, and one local memory serves one hart at a time.
 * l1_size must be at most KMAP_LOCAL_BASE (the L1 window ends where local
 * memory starts).
 * Errors: LM_ERR_INVALID_ARGUMENT for a NULL pointer or an oversized L1. */
lm_status rv_hart_init(rv_hart *hart, const rv_image *image, uint8_t *l1, uint32_t l1_size,
                       rv_local *local);

/* What the host callback decides about an ecall. */
typedef enum rv_ecall_result {
    RV_ECALL_CONTINUE, /* done; execution goes on after the ecall */
    RV_ECALL_BLOCK,    /* cannot complete now; rerunning the hart retries it */
    RV_ECALL_EXIT,     /* the kernel is finished */
    RV_ECALL_FAULT     /* bad request; the callback wrote hart->fault.detail */
} rv_ecall_result;

/* Called for every ecall, with hart->pc at the ecall and the argument
 * registers a0..a7 (x[10..17]) current in hart->x: the call number in a7 and
 * the arguments in a0..a6 by convention of the kernel SDK. The other
 * registers of hart->x may be stale (the interpreter keeps them elsewhere
 * during a run): read none of them. Writes to a0 and a1 (the results) are
 * kept for CONTINUE and EXIT, any others never; all are discarded for BLOCK
 * and FAULT, so a parked or failed ecall leaves the hart exactly as it was
 * before it. Changes to pc or instret are ignored. The callback must not run
 * the same hart. */
typedef rv_ecall_result (*rv_ecall_fn)(void *ctx, rv_hart *hart);

typedef enum rv_stop {
    RV_STOP_EXIT,   /* returned to RV_RETURN_ADDR, or an ecall said EXIT */
    RV_STOP_BLOCK,  /* an ecall said BLOCK; pc is at that ecall */
    RV_STOP_BUDGET, /* the instruction budget ran out; run again to go on */
    RV_STOP_FAULT   /* hart->fault says what; rerunning faults again */
} rv_stop;

/* Runs the hart until it exits, blocks, faults or has used `budget`
 * instructions. The budget is checked where basic blocks begin (after every
 * jump, branch and ecall), so a run can go past it by less than the length of
 * one straight-line run of code; hart->instret is always exact, and a
 * stopped hart resumes where it stopped. A budget of 0 runs nothing.
 * On EXIT after a return, pc is RV_RETURN_ADDR; after an EXIT ecall, pc is
 * the ecall. On FAULT no register has been written by the faulting
 * instruction, pc is that instruction and it is not counted in instret.
 * ecall may be NULL: every ecall then faults. */
rv_stop rv_run(rv_hart *hart, uint64_t budget, rv_ecall_fn ecall, void *ctx);

/* The same interpreter with portable switch dispatch instead of computed
 * goto. Identical behaviour, slower; rv_run uses it itself on compilers
 * without labels as values. Exposed so both are always built and tested. */
rv_stop rv_run_switch(rv_hart *hart, uint64_t budget, rv_ecall_fn ecall, void *ctx);

/* Writes a one-line description of hart->fault into buf (always terminated),
 * e.g. "4-byte load at 0x30000000 outside the hart's memory (pc
 * 0x40000010)". The caller adds which core, processor and kernel it was. */
void rv_fault_describe(const rv_hart *hart, char *buf, size_t buf_size);

#endif
