/* The interpreter loop, written once and instantiated twice by rv_run.c:
 * with computed-goto dispatch (RV_IMPL_GOTO 1) and with a switch
 * (RV_IMPL_GOTO 0). Define RV_IMPL_NAME and RV_IMPL_GOTO before including.
 *
 * Why it is shaped like this:
 *   - The image was decoded once (rv_insn.h), so a handler only reads fields.
 *   - Registers live in a local array of 33: entry 32 swallows writes to x0,
 *     so no handler tests rd. The array is copied to and from the hart only at
 *     the run's edges and around ecalls.
 *   - Instructions are counted where blocks begin: `left` drops by the length
 *     of the straight-line run being entered, and the budget test sits on the
 *     same path. A trap part-way through a run gives back the instructions it
 *     did not execute (block_len of the trapping one), keeping instret exact.
 *   - Common instruction pairs were fused at load time (rv_fuse); a fused
 *     handler does both, saving a dispatch.
 *   - With computed goto, every handler exists in RV_HANDLER_COPIES copies
 *     and each instruction names its copy (rv_spread): more jump sites, each
 *     with fewer successors for the host's predictors to tell apart.
 *   - Data accesses check the local window first (stacks and globals), then
 *     L1, then the read-only code window; each check covers the whole access,
 *     which is then a memcpy, so no guest address ever reaches host memory
 *     outside the three windows.
 */
#ifndef RV_IMPL_NAME
#error "define RV_IMPL_NAME and RV_IMPL_GOTO before including rv_run_impl.h"
#endif

rv_stop RV_IMPL_NAME(rv_hart *hart, uint64_t budget, rv_ecall_fn ecall, void *ctx) {
    const rv_insn *const base = hart->image->insns;
    const uint8_t *const code = hart->image->code_bytes;
    const uint64_t code_size = hart->image->code_size;
    uint8_t *const l1 = hart->l1;
    const uint64_t l1_size = hart->l1_size;
    uint8_t *const local = hart->local;
    /* Kept in memory, not in registers the handlers need: stores rarely
     * lower the dirty mark, so this costs two loads and compares per store. */
    rv_local *const local_state = hart->local_state;
    const uint64_t instret0 = hart->instret;
    const int64_t left0 = budget > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)budget;
    int64_t left = left0;
    uint32_t x[RV_REG_SINK + 1];
    const rv_insn *in = base;
    rv_stop stop = RV_STOP_FAULT;
    int returned = 0;
    rv_fault_cause cause = RV_FAULT_NONE;
    uint32_t fault_addr = 0, fault_size = 0;

    memcpy(x, hart->x, sizeof hart->x);
    x[0] = 0;
    hart->fault.cause = RV_FAULT_NONE;
    hart->fault.detail[0] = '\0';

#define RS1 x[in->rs1]
#define RS2 x[in->rs2]
#define RD x[in->rd]
#define IMM ((uint32_t)in->imm)
#define PC_OF(p) (KMAP_CODE_BASE + (uint32_t)((p)-base) * 4u)

#if RV_IMPL_GOTO
#if RV_HANDLER_COPIES != 4
#error "rv_run_impl.h instantiates exactly four handler copies"
#endif
    /* clang-format off */
    /* Indexed by rv_insn.op: copy * RV_OP_COUNT_ + operation. */
    static const void *const labels[RV_OP_COUNT_ * RV_HANDLER_COPIES] = {
#define RV_LABEL_(name, ends) &&L_##name##_0,
        RV_OPS(RV_LABEL_)
#undef RV_LABEL_
#define RV_LABEL_(name, ends) &&L_##name##_1,
        RV_OPS(RV_LABEL_)
#undef RV_LABEL_
#define RV_LABEL_(name, ends) &&L_##name##_2,
        RV_OPS(RV_LABEL_)
#undef RV_LABEL_
#define RV_LABEL_(name, ends) &&L_##name##_3,
        RV_OPS(RV_LABEL_)
#undef RV_LABEL_
    };
    /* Labels of the copy being instantiated (RV_COPY), pasted in two steps
     * so that RV_COPY expands first. */
#define RV_LABEL2_(name, copy) L_##name##_##copy
#define RV_LABEL1_(name, copy) RV_LABEL2_(name, copy)
#define OP(name) RV_LABEL1_(name, RV_COPY):
    /* clang-format on */
#define DISPATCH() goto *labels[in->op]
#else
#define OP(name) case RV_OP_##name:
#define DISPATCH() goto dispatch
#endif
#define NEXT()                                                                                     \
    do {                                                                                           \
        in++;                                                                                      \
        DISPATCH();                                                                                \
    } while (0)
#define ENTER()                                                                                    \
    do {                                                                                           \
        if (RV_UNLIKELY(left <= 0)) goto out_budget;                                               \
        left -= in->block_len;                                                                     \
        DISPATCH();                                                                                \
    } while (0)
#define TRAP(c, a, s)                                                                              \
    do {                                                                                           \
        cause = (c);                                                                               \
        fault_addr = (a);                                                                          \
        fault_size = (s);                                                                          \
        goto trap;                                                                                 \
    } while (0)

    /* Where to start: a stopped hart resumes at its pc; one that returned
     * stays returned. */
    {
        uint32_t off = hart->pc - KMAP_CODE_BASE;
        if (hart->pc == RV_RETURN_ADDR) {
            stop = RV_STOP_EXIT;
            returned = 1;
            goto out;
        }
        if (off >= code_size || (off & 3)) {
            hart->fault.cause = RV_FAULT_FETCH;
            hart->fault.pc = hart->pc;
            return RV_STOP_FAULT;
        }
        in = base + off / 4;
        ENTER();
    }

/* LOAD_DO and STORE_DO access memory for the instruction at `in` (or trap);
 * the other macros dispatch the next instruction afterwards. */
#define LOAD_DO(ADDR, N, T, EXT)                                                                   \
    do {                                                                                           \
        uint32_t a_ = (ADDR), o_ = a_ - KMAP_LOCAL_BASE;                                           \
        const uint8_t *p_;                                                                         \
        if (RV_LIKELY(o_ <= KMAP_LOCAL_SIZE - (N)))                                                \
            p_ = local + o_;                                                                       \
        else if ((uint64_t)a_ + (N) <= l1_size)                                                    \
            p_ = l1 + a_;                                                                          \
        else if ((uint64_t)(o_ = a_ - KMAP_CODE_BASE) + (N) <= code_size)                          \
            p_ = code + o_;                                                                        \
        else                                                                                       \
            TRAP(RV_FAULT_LOAD, a_, N);                                                            \
        T v_;                                                                                      \
        memcpy(&v_, p_, N);                                                                        \
        RD = EXT(v_);                                                                              \
    } while (0)
#define LOAD_FROM(ADDR, N, T, EXT)                                                                 \
    do {                                                                                           \
        LOAD_DO(ADDR, N, T, EXT);                                                                  \
        NEXT();                                                                                    \
    } while (0)
#define LOAD(N, T, EXT) LOAD_FROM(RS1 + IMM, N, T, EXT)
#define STORE_DO(N, T, CONV)                                                                       \
    do {                                                                                           \
        uint32_t a_ = RS1 + IMM, o_ = a_ - KMAP_LOCAL_BASE;                                        \
        uint8_t *p_;                                                                               \
        if (RV_LIKELY(o_ <= KMAP_LOCAL_SIZE - (N))) {                                              \
            if (RV_UNLIKELY(o_ < local_state->dirty_lo && o_ + (N) > local_state->data_end))       \
                rv_local_wrote(local_state, o_, N);                                                \
            p_ = local + o_;                                                                       \
        } else if ((uint64_t)a_ + (N) <= l1_size)                                                  \
            p_ = l1 + a_;                                                                          \
        else                                                                                       \
            TRAP(RV_FAULT_STORE, a_, N);                                                           \
        T v_ = CONV((T)RS2);                                                                       \
        memcpy(p_, &v_, N);                                                                        \
    } while (0)
#define STORE(N, T, CONV)                                                                          \
    do {                                                                                           \
        STORE_DO(N, T, CONV);                                                                      \
        NEXT();                                                                                    \
    } while (0)
#define BRANCH(cond)                                                                               \
    do {                                                                                           \
        in += (cond) ? in->imm : 1;                                                                \
        ENTER();                                                                                   \
    } while (0)

    /* The handlers (rv_run_handlers.h): every copy with computed goto, or
     * the cases of one switch. */
    /* clang-format off */
#if !RV_IMPL_GOTO
dispatch:
    switch (rv_insn_op(in)) {
#endif
#if RV_IMPL_GOTO
#define RV_COPY 0
#include "sim/rv32/rv_run_handlers.h"
#undef RV_COPY
#define RV_COPY 1
#include "sim/rv32/rv_run_handlers.h"
#undef RV_COPY
#define RV_COPY 2
#include "sim/rv32/rv_run_handlers.h"
#undef RV_COPY
#define RV_COPY 3
#include "sim/rv32/rv_run_handlers.h"
#undef RV_COPY
#else
#include "sim/rv32/rv_run_handlers.h"
#endif

#if !RV_IMPL_GOTO
    default:
        TRAP(RV_FAULT_ILLEGAL, 0, 0); /* unreachable: the decoder makes only known ops */
    }
#endif
    /* clang-format on */

trap:
    /* The trapping instruction and the rest of its run were charged on entry
     * but never executed. The ecall case already gave back its one. */
    if (cause != RV_FAULT_ECALL) left += in->block_len;
    hart->fault.cause = cause;
    hart->fault.pc = PC_OF(in);
    hart->fault.addr = fault_addr;
    hart->fault.size = fault_size;
    {
        size_t at = (size_t)(in - base) * 4; /* the NOEXEC sentinel lies past the bytes */
        hart->fault.insn = at < code_size ? rv_le32_at(code + at) : 0;
    }
    stop = RV_STOP_FAULT;
    goto out;

out_budget:
    stop = RV_STOP_BUDGET;
out:
    hart->pc = returned ? RV_RETURN_ADDR : PC_OF(in);
    memcpy(hart->x, x, sizeof hart->x);
    hart->instret = instret0 + (uint64_t)(left0 - left);
    return stop;

#undef RS1
#undef RS2
#undef RD
#undef IMM
#undef PC_OF
#undef OP
#ifdef RV_LABEL1_
#undef RV_LABEL1_
#undef RV_LABEL2_
#endif
#undef DISPATCH
#undef NEXT
#undef ENTER
#undef TRAP
#undef LOAD
#undef LOAD_FROM
#undef STORE
#undef STORE_DO
#undef LOAD_DO
#undef BRANCH
}
