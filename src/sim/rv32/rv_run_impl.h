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
 *     handler does both, or does the first and jumps straight to the
 *     second's handler, saving a dispatch either way.
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
#define PC_OF(p) ((p)->pc)

#if RV_IMPL_GOTO
    static const void *const labels[RV_OP_COUNT_] = {
#define RV_LABEL_(name, ends) &&L_##name,
        RV_OPS(RV_LABEL_)
#undef RV_LABEL_
    };
#define OP(name) L_##name:
#define OPL(name) L_##name:
#define DISPATCH() goto *labels[in->op]
#else
#define OP(name) case RV_OP_##name:
#define OPL(name) /* a case that fused handlers also jump to */                                    \
    case RV_OP_##name:                                                                             \
        L_##name:
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

#define LOAD_FROM(ADDR, N, T, EXT)                                                                 \
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
        NEXT();                                                                                    \
    } while (0)
#define LOAD(N, T, EXT) LOAD_FROM(RS1 + IMM, N, T, EXT)
#define STORE(N, T, CONV)                                                                          \
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
        NEXT();                                                                                    \
    } while (0)
#define BRANCH(cond)                                                                               \
    do {                                                                                           \
        in += (cond) ? in->imm : 1;                                                                \
        ENTER();                                                                                   \
    } while (0)

    /* Handlers follow, one line each where possible so that the semantics
     * read as a table. */
    /* clang-format off */
#if !RV_IMPL_GOTO
dispatch:
    switch ((rv_op)in->op) {
#endif


    OP(LI) { RD = IMM; NEXT(); }
    OP(ADDI) { RD = RS1 + IMM; NEXT(); }
    OP(SLTI) { RD = (int32_t)RS1 < in->imm; NEXT(); }
    OP(SLTIU) { RD = RS1 < IMM; NEXT(); }
    OP(XORI) { RD = RS1 ^ IMM; NEXT(); }
    OP(ORI) { RD = RS1 | IMM; NEXT(); }
    OP(ANDI) { RD = RS1 & IMM; NEXT(); }
    OP(SLLI) { RD = RS1 << in->imm; NEXT(); }
    OP(SRLI) { RD = RS1 >> in->imm; NEXT(); }
    OP(SRAI) { RD = rv_sra(RS1, IMM); NEXT(); }
    OP(ADD) { RD = RS1 + RS2; NEXT(); }
    OP(SUB) { RD = RS1 - RS2; NEXT(); }
    OP(SLL) { RD = RS1 << (RS2 & 31); NEXT(); }
    OP(SLT) { RD = (int32_t)RS1 < (int32_t)RS2; NEXT(); }
    OP(SLTU) { RD = RS1 < RS2; NEXT(); }
    OP(XOR) { RD = RS1 ^ RS2; NEXT(); }
    OP(SRL) { RD = RS1 >> (RS2 & 31); NEXT(); }
    OP(SRA) { RD = rv_sra(RS1, RS2 & 31); NEXT(); }
    OP(OR) { RD = RS1 | RS2; NEXT(); }
    OP(AND) { RD = RS1 & RS2; NEXT(); }
    OP(MUL) { RD = RS1 * RS2; NEXT(); }
    OP(MULH) { RD = rv_high((uint64_t)((int64_t)(int32_t)RS1 * (int32_t)RS2)); NEXT(); }
    OP(MULHSU) { RD = rv_high((uint64_t)((int64_t)(int32_t)RS1 * (int64_t)RS2)); NEXT(); }
    OP(MULHU) { RD = rv_high((uint64_t)RS1 * RS2); NEXT(); }
    OP(DIV) { RD = rv_div(RS1, RS2); NEXT(); }
    OP(DIVU) { RD = RS2 == 0 ? UINT32_MAX : RS1 / RS2; NEXT(); }
    OP(REM) { RD = rv_rem(RS1, RS2); NEXT(); }
    OP(REMU) { RD = RS2 == 0 ? RS1 : RS1 % RS2; NEXT(); }
    OP(LB) { LOAD(1, uint8_t, (uint32_t)(int32_t)(int8_t)); }
    OP(LH) { LOAD(2, uint16_t, (uint32_t)(int32_t)(int16_t)rv_le16); }
    OP(LW) { LOAD(4, uint32_t, rv_le32); }
    OP(LBU) { LOAD(1, uint8_t, (uint32_t)); }
    OP(LHU) { LOAD(2, uint16_t, (uint32_t)rv_le16); }
    OP(SB) { STORE(1, uint8_t, ); }
    OP(SH) { STORE(2, uint16_t, rv_le16); }
    OP(SW) { STORE(4, uint32_t, rv_le32); }
    OP(NOP) { NEXT(); }
    OPL(BEQ) { BRANCH(RS1 == RS2); }
    OPL(BNE) { BRANCH(RS1 != RS2); }
    OPL(BLT) { BRANCH((int32_t)RS1 < (int32_t)RS2); }
    OPL(BGE) { BRANCH((int32_t)RS1 >= (int32_t)RS2); }
    OPL(BLTU) { BRANCH(RS1 < RS2); }
    OPL(BGEU) { BRANCH(RS1 >= RS2); }
    OP(BRANCH_OUT) {
        if (rv_branch_taken(in->rd, RS1, RS2)) TRAP(RV_FAULT_JUMP, IMM, 0);
        in++;
        ENTER();
    }
    OP(JAL) {
        RD = PC_OF(in) + 4;
        in += in->imm;
        ENTER();
    }
    OP(JAL_OUT) { TRAP(RV_FAULT_JUMP, IMM, 0); }
    OP(JALR) {
        uint32_t target = (RS1 + IMM) & ~1u, off = target - KMAP_CODE_BASE;
        if (RV_UNLIKELY(off >= code_size || (off & 3))) {
            if (target != RV_RETURN_ADDR) TRAP(RV_FAULT_JUMP, target, 0);
            RD = PC_OF(in) + 4;
            returned = 1;
            stop = RV_STOP_EXIT;
            goto out;
        }
        RD = PC_OF(in) + 4;
        in = base + off / 4;
        ENTER();
    }
    OP(ECALL) {
        /* The hart is made current for the host, minus this ecall, which
         * counts only once it completes. */
        memcpy(hart->x, x, sizeof hart->x);
        hart->pc = PC_OF(in);
        hart->instret = instret0 + (uint64_t)(left0 - left) - 1;
        rv_ecall_result r = RV_ECALL_FAULT;
        if (ecall)
            r = ecall(ctx, hart);
        else
            snprintf(hart->fault.detail, sizeof hart->fault.detail, "no ecall handler");
        if (r == RV_ECALL_CONTINUE || r == RV_ECALL_EXIT) {
            memcpy(x, hart->x, sizeof hart->x);
            x[0] = 0;
            if (r == RV_ECALL_EXIT) {
                stop = RV_STOP_EXIT;
                goto out;
            }
            in++;
            ENTER();
        }
        left += 1;
        if (r == RV_ECALL_BLOCK) {
            stop = RV_STOP_BLOCK;
            goto out;
        }
        if (!hart->fault.detail[0] && r != RV_ECALL_FAULT)
            snprintf(hart->fault.detail, sizeof hart->fault.detail,
                     "the host returned an unknown result %d", (int)r);
        TRAP(RV_FAULT_ECALL, 0, 0);
    }
    OP(EBREAK) { TRAP(RV_FAULT_BREAKPOINT, 0, 0); }
    OP(ILLEGAL) { TRAP(RV_FAULT_ILLEGAL, 0, 0); }
    OP(NOEXEC) { TRAP(RV_FAULT_FETCH, PC_OF(in), 0); }
    OP(LI2) {
        RD = IMM;
        in += 2;
        DISPATCH();
    }
    OP(SHADD) {
        RD = RS2 + (RS1 << in->imm);
        in += 2;
        DISPATCH();
    }
    /* The lw's base is the register just computed: it is used straight from
     * the host register, not reloaded from the register file. */
    OP(SHADD_LW) {
        uint32_t base_ = RS2 + (RS1 << in->imm);
        RD = base_;
        in += 2;
        LOAD_FROM(base_ + IMM, 4, uint32_t, rv_le32);
    }
    OP(ADD_LW) {
        uint32_t base_ = RS1 + RS2;
        RD = base_;
        in++;
        LOAD_FROM(base_ + IMM, 4, uint32_t, rv_le32);
    }
    OP(CALL) {
        RD = PC_OF(in) + 8;
        in += in->imm;
        ENTER();
    }
    /* The addi, then straight into the following branch's handler: one
     * dispatch for the pair, and a jump the host predicts per loop. */
#define ADDI_THEN(branch)                                                                          \
    do {                                                                                           \
    RD = RS1 + IMM;                                                                            \
    in++;                                                                                      \
    goto L_##branch;                                                                           \
    } while (0)
    OP(ADDI_BEQ) { ADDI_THEN(BEQ); }
    OP(ADDI_BNE) { ADDI_THEN(BNE); }
    OP(ADDI_BLT) { ADDI_THEN(BLT); }
    OP(ADDI_BGE) { ADDI_THEN(BGE); }
    OP(ADDI_BLTU) { ADDI_THEN(BLTU); }
    OP(ADDI_BGEU) { ADDI_THEN(BGEU); }
#undef ADDI_THEN

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
#undef OPL
#undef DISPATCH
#undef NEXT
#undef ENTER
#undef TRAP
#undef LOAD
#undef LOAD_FROM
#undef STORE
#undef BRANCH
}
