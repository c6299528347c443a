/* The interpreter's handlers, one per operation, written one line each
 * where possible so that the semantics read as a table. Included by
 * rv_run_impl.h inside the interpreter function (hence no include guard):
 * once per handler copy (RV_COPY) with computed goto, once as the cases of
 * the switch otherwise. Uses that file's macros. */
/* clang-format off */

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
    OP(BEQ) { BRANCH(RS1 == RS2); }
    OP(BNE) { BRANCH(RS1 != RS2); }
    OP(BLT) { BRANCH((int32_t)RS1 < (int32_t)RS2); }
    OP(BGE) { BRANCH((int32_t)RS1 >= (int32_t)RS2); }
    OP(BLTU) { BRANCH(RS1 < RS2); }
    OP(BGEU) { BRANCH(RS1 >= RS2); }
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
         * counts only once it completes. The host reads the argument
         * registers a0..a7 and returns in a0 and a1 (rv_hart.h): only those
         * cross, the rest wait for the run's end (an ecall per few dozen
         * instructions makes the whole file a real cost). */
        memcpy(&hart->x[10], &x[10], 8 * sizeof x[0]);
        hart->pc = PC_OF(in);
        hart->instret = instret0 + (uint64_t)(left0 - left) - 1;
        rv_ecall_result r = RV_ECALL_FAULT;
        if (ecall)
            r = ecall(ctx, hart);
        else
            snprintf(hart->fault.detail, sizeof hart->fault.detail, "no ecall handler");
        if (r == RV_ECALL_CONTINUE || r == RV_ECALL_EXIT) {
            x[10] = hart->x[10];
            x[11] = hart->x[11];
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
    /* The addi, then the following branch, in one handler. */
#define ADDI_THEN(cond)                                                                            \
    do {                                                                                           \
    RD = RS1 + IMM;                                                                            \
    in++;                                                                                      \
    BRANCH(cond);                                                                              \
    } while (0)
    OP(ADDI_BEQ) { ADDI_THEN(RS1 == RS2); }
    OP(ADDI_BNE) { ADDI_THEN(RS1 != RS2); }
    OP(ADDI_BLT) { ADDI_THEN((int32_t)RS1 < (int32_t)RS2); }
    OP(ADDI_BGE) { ADDI_THEN((int32_t)RS1 >= (int32_t)RS2); }
    OP(ADDI_BLTU) { ADDI_THEN(RS1 < RS2); }
    OP(ADDI_BGEU) { ADDI_THEN(RS1 >= RS2); }
#undef ADDI_THEN
    /* li, then the following branch (a compare with a constant). */
#define LI_THEN(cond)                                                                              \
    do {                                                                                           \
    RD = IMM;                                                                                  \
    in++;                                                                                      \
    BRANCH(cond);                                                                              \
    } while (0)
    OP(LI_BEQ) { LI_THEN(RS1 == RS2); }
    OP(LI_BNE) { LI_THEN(RS1 != RS2); }
    OP(LI_BLT) { LI_THEN((int32_t)RS1 < (int32_t)RS2); }
    OP(LI_BGE) { LI_THEN((int32_t)RS1 >= (int32_t)RS2); }
    OP(LI_BLTU) { LI_THEN(RS1 < RS2); }
    OP(LI_BGEU) { LI_THEN(RS1 >= RS2); }
#undef LI_THEN
    /* A load, store or addi, then the addi that follows it. */
    OP(LW_ADDI) {
        LOAD_DO(RS1 + IMM, 4, uint32_t, rv_le32);
        in++;
        RD = RS1 + IMM;
        NEXT();
    }
    OP(SW_ADDI) {
        STORE_DO(4, uint32_t, rv_le32);
        in++;
        RD = RS1 + IMM;
        NEXT();
    }
    OP(ADDI_ADDI) {
        RD = RS1 + IMM;
        in++;
        RD = RS1 + IMM;
        NEXT();
    }

/* clang-format on */
