/* The compute engine of one core, as its compute kernel drives it through
 * ecalls: the dst register file with tt-metal's ownership protocol
 * (tile_regs_acquire -> math -> tile_regs_commit -> tile_regs_wait -> pack ->
 * tile_regs_release), unpacking operands from the fronts of circular buffers
 * and packing results to their backs.
 *
 * acquire_dst/release_dst, the older one-call forms, hold dst for math and
 * pack at once.
 *
 * Misuse is a kernel fault with a message, never silent garbage: math outside
 * acquire/commit, packing before wait, a dst index beyond the register file
 * (16 tiles, 8 with fp32 accumulation), reading a CB tile the kernel did not
 * wait for, packing beyond the space it reserved, a CB page too small for a
 * tile of its format.
 */
#ifndef LM_SIM_COMPUTE_H
#define LM_SIM_COMPUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/rv32/rv_hart.h"
#include "sim/sim_cb.h"
#include "sim/tile/tile_engine.h"

/* Unpacked operand tiles, kept because kernels reuse them (matmul uses each
 * A tile for a row of outputs and keeps B resident). A tile is known by its
 * circular buffer and its page sequence number (pages ever pushed before it):
 * every cb_push_back makes new numbers, so an entry cannot outlive the data
 * it was made from unless a kernel rewrites a page after pushing it. 64
 * entries (256 KiB) stay in the host's cache while a core runs; four times as
 * many hit more often but made matmul slower overall. The entries belong to
 * a host thread, shared by the cores it runs one after another (a core
 * mostly runs to its end before the next): the memory the cores of a launch
 * unpack into stays hot instead of being 256 KiB of fresh memory per core. */
#define SIM_UNPACK_CACHE 64

typedef struct sim_unpacked {
    uint64_t key;   /* cb | format << 8 | sequence << 16 */
    uint64_t epoch; /* valid when equal to the engine's epoch */
    _Alignas(64) float v[TILE_ELEMS];
} sim_unpacked;

typedef struct sim_compute {
    tile_dst dst;
    tile_rand rand; /* rand_tile_init / rand_tile */
    int regs;       /* where the dst protocol stands (sim_compute.c) */
    bool strict;    /* protocol lapses the chip tolerates are faults */
    /* A tolerated lapse of the last ecall, for the launcher to print with the
     * core and pc; "" when none. */
    char warning[448];
    /* Unique to this engine's launch (process-wide): tells its entries in
     * the shared cache from any other core's or launch's. */
    uint64_t epoch;
    /* SIM_UNPACK_CACHE entries of the host thread running the core, set by
     * the launcher before the core runs. */
    sim_unpacked *cache;
} sim_compute;

/* Prepares the engine for a launch. With `strict`, the protocol lapses the
 * chip tolerates (packing into free CB pages that were not reserved, packing
 * after tile_regs_commit without tile_regs_wait) are faults; without it they
 * run, and each leaves a message in `warning`. */
void sim_compute_reset(sim_compute *c, bool fp32_acc, bool strict);

/* Handles a compute ecall (LM_ECALL_COMPUTE_FIRST..LM_ECALL_COMPUTE_LAST) of
 * the hart; `cbs` are the core's circular buffers. On misuse returns
 * RV_ECALL_FAULT with hart->fault.detail set. */
rv_ecall_result sim_compute_ecall(sim_compute *c, sim_cb *cbs, rv_hart *hart, uint32_t call);

/* The kernel API's name for the compute ecall `call` the hart is making
 * ("copy_tile", "exp_tile", ...), for messages; never fails. */
void sim_compute_call_name(const rv_hart *hart, uint32_t call, char *buf, size_t size);

#endif
