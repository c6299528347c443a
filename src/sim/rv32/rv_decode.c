/* RV32IM instruction decoding into the predecoded form (rv_insn.h).
 *
 * Strict: every reserved or unsupported encoding (compressed, CSR, FENCE.I,
 * shift amounts of 32 and more, unknown funct fields) decodes to ILLEGAL so a
 * kernel cannot depend on behaviour the hardware would not give it.
 */
#include "sim/rv32/rv_insn.h"

static const uint8_t rv_op_ends_[RV_OP_COUNT_] = {
#define RV_OP_ENDS_(name, ends) ends,
    RV_OPS(RV_OP_ENDS_)
#undef RV_OP_ENDS_
};

int rv_op_ends_block(rv_op op) {
    return op < RV_OP_COUNT_ && rv_op_ends_[op];
}

/* Immediate formats of the base ISA, sign-extended. The casts through
 * int32_t rely on two's complement, which C11 compilers we support provide. */
static int32_t imm_i(uint32_t w) {
    return (int32_t)w >> 20;
}
static int32_t imm_s(uint32_t w) {
    return ((int32_t)w >> 20 & ~31) | (int32_t)(w >> 7 & 31);
}
static int32_t imm_b(uint32_t w) {
    return ((int32_t)w >> 19 & ~4095) |
           (int32_t)((w << 4 & 0x800) | (w >> 20 & 0x7e0) | (w >> 7 & 0x1e));
}
static int32_t imm_u(uint32_t w) {
    return (int32_t)(w & 0xfffff000u);
}
static int32_t imm_j(uint32_t w) {
    return ((int32_t)w >> 11 & ~0xfffff) |
           (int32_t)((w & 0xff000) | (w >> 9 & 0x800) | (w >> 20 & 0x7fe));
}

static rv_insn make(rv_op op, uint32_t w, int32_t imm) {
    rv_insn in = {0};
    in.op = (uint8_t)op;
    in.rd = (uint8_t)(w >> 7 & 31);
    in.rs1 = (uint8_t)(w >> 15 & 31);
    in.rs2 = (uint8_t)(w >> 20 & 31);
    in.imm = imm;
    if (in.rd == 0) in.rd = RV_REG_SINK;
    return in;
}

static rv_insn illegal(uint32_t w) {
    rv_insn in = {0};
    in.op = RV_OP_ILLEGAL;
    in.imm = (int32_t)w;
    return in;
}

/* A static jump target is usable when it is a word of the decoded code. */
static int target_ok(uint32_t target, uint32_t code_lo, uint32_t code_hi) {
    return (target & 3) == 0 && target >= code_lo && target < code_hi;
}

static rv_insn decode_branch(uint32_t w, uint32_t pc, uint32_t code_lo, uint32_t code_hi) {
    static const int8_t ops[8] = {RV_OP_BEQ, RV_OP_BNE, -1,         -1,
                                  RV_OP_BLT, RV_OP_BGE, RV_OP_BLTU, RV_OP_BGEU};
    uint32_t f3 = w >> 12 & 7;
    if (ops[f3] < 0) return illegal(w);
    uint32_t target = pc + (uint32_t)imm_b(w);
    if (!target_ok(target, code_lo, code_hi)) {
        rv_insn in = make(RV_OP_BRANCH_OUT, w, (int32_t)target);
        in.rd = (uint8_t)f3;
        return in;
    }
    return make((rv_op)ops[f3], w, imm_b(w) / 4);
}

static rv_insn decode_op_imm(uint32_t w) {
    static const uint8_t ops[8] = {RV_OP_ADDI, RV_OP_SLLI, RV_OP_SLTI, RV_OP_SLTIU,
                                   RV_OP_XORI, RV_OP_SRLI, RV_OP_ORI,  RV_OP_ANDI};
    uint32_t f3 = w >> 12 & 7, f7 = w >> 25;
    if (f3 == 1 || f3 == 5) {
        /* Shifts: shamt is 5 bits on RV32; bit 25 set is reserved. */
        rv_op op = (rv_op)ops[f3];
        if (f3 == 5 && f7 == 0x20)
            op = RV_OP_SRAI;
        else if (f7 != 0)
            return illegal(w);
        return make(op, w, (int32_t)(w >> 20 & 31));
    }
    if (f3 == 0 && (w >> 15 & 31) == 0) return make(RV_OP_LI, w, imm_i(w)); /* li */
    return make((rv_op)ops[f3], w, imm_i(w));
}

static rv_insn decode_op(uint32_t w) {
    static const uint8_t base[8] = {RV_OP_ADD, RV_OP_SLL, RV_OP_SLT, RV_OP_SLTU,
                                    RV_OP_XOR, RV_OP_SRL, RV_OP_OR,  RV_OP_AND};
    static const uint8_t mext[8] = {RV_OP_MUL, RV_OP_MULH, RV_OP_MULHSU, RV_OP_MULHU,
                                    RV_OP_DIV, RV_OP_DIVU, RV_OP_REM,    RV_OP_REMU};
    uint32_t f3 = w >> 12 & 7, f7 = w >> 25;
    if (f7 == 0) return make((rv_op)base[f3], w, 0);
    if (f7 == 1) return make((rv_op)mext[f3], w, 0);
    if (f7 == 0x20 && f3 == 0) return make(RV_OP_SUB, w, 0);
    if (f7 == 0x20 && f3 == 5) return make(RV_OP_SRA, w, 0);
    return illegal(w);
}

rv_insn rv_decode(uint32_t w, uint32_t pc, uint32_t code_lo, uint32_t code_hi) {
    uint32_t f3 = w >> 12 & 7;
    switch (w & 0x7f) {
    case 0x37: /* LUI */
        return make(RV_OP_LI, w, imm_u(w));
    case 0x17: /* AUIPC: the code never moves, so the result is a constant */
        return make(RV_OP_LI, w, (int32_t)(pc + (uint32_t)imm_u(w)));
    case 0x6f: { /* JAL */
        uint32_t target = pc + (uint32_t)imm_j(w);
        if (!target_ok(target, code_lo, code_hi)) return make(RV_OP_JAL_OUT, w, (int32_t)target);
        return make(RV_OP_JAL, w, imm_j(w) / 4);
    }
    case 0x67: /* JALR */
        if (f3 != 0) return illegal(w);
        return make(RV_OP_JALR, w, imm_i(w));
    case 0x63:
        return decode_branch(w, pc, code_lo, code_hi);
    case 0x03: { /* loads */
        static const int8_t ops[8] = {RV_OP_LB,  RV_OP_LH,  RV_OP_LW, -1,
                                      RV_OP_LBU, RV_OP_LHU, -1,       -1};
        if (ops[f3] < 0) return illegal(w);
        return make((rv_op)ops[f3], w, imm_i(w));
    }
    case 0x23: { /* stores */
        static const int8_t ops[8] = {RV_OP_SB, RV_OP_SH, RV_OP_SW, -1, -1, -1, -1, -1};
        if (ops[f3] < 0) return illegal(w);
        return make((rv_op)ops[f3], w, imm_s(w));
    }
    case 0x13:
        return decode_op_imm(w);
    case 0x33:
        return decode_op(w);
    case 0x0f: /* FENCE orders memory; the simulator is sequentially consistent */
        if (f3 != 0) return illegal(w);
        return make(RV_OP_NOP, w, 0);
    case 0x73:
        if (w == 0x00000073u) return make(RV_OP_ECALL, w, 0);
        if (w == 0x00100073u) return make(RV_OP_EBREAK, w, 0);
        return illegal(w);
    default:
        return illegal(w);
    }
}

/* Idioms compilers emit all the time (the ones RISC-V cores fuse, too).
 * Each fused form writes exactly the registers the pair would. The "X, then
 * Y" forms run X and then Y from Y's own word: one dispatch saved, and a trap
 * in Y still reports Y's pc. Only words whose fields are never rewritten
 * here (branches, lw, addi) are such a Y; a Y's op may still change (it may
 * start a pair of its own), which the X handler does not read. */
void rv_fuse(rv_insn *insns, uint32_t count, uint32_t code_lo, uint32_t code_hi) {
    for (uint32_t i = 0; i + 1 < count; i++) {
        rv_insn *a = &insns[i];
        const rv_insn *b = &insns[i + 1];
        int b_branch = b->op >= RV_OP_BEQ && b->op <= RV_OP_BGEU;
        if (a->op == RV_OP_LI && a->rd != RV_REG_SINK && b->rs1 == a->rd && b->rd == a->rd &&
            (b->op == RV_OP_ADDI || b->op == RV_OP_JALR)) {
            uint32_t value = (uint32_t)a->imm + (uint32_t)b->imm;
            if (b->op == RV_OP_ADDI) {
                a->op = RV_OP_LI2;
                a->imm = (int32_t)value;
            } else if (b->op == RV_OP_JALR && target_ok(value & ~1u, code_lo, code_hi)) {
                a->op = RV_OP_CALL;
                a->imm = (int32_t)((value & ~1u) - (code_lo + 4 * i)) / 4;
            }
        } else if (a->op == RV_OP_SLLI && a->rd != RV_REG_SINK && b->op == RV_OP_ADD &&
                   b->rd == a->rd && (b->rs1 == a->rd) != (b->rs2 == a->rd)) {
            a->op = RV_OP_SHADD;
            a->rs2 = b->rs1 == a->rd ? b->rs2 : b->rs1;
            if (i + 2 < count && insns[i + 2].op == RV_OP_LW && insns[i + 2].rs1 == a->rd)
                a->op = RV_OP_SHADD_LW;
        } else if (a->op == RV_OP_ADD && a->rd != RV_REG_SINK && b->op == RV_OP_LW &&
                   b->rs1 == a->rd) {
            a->op = RV_OP_ADD_LW;
        } else if (a->op == RV_OP_ADDI && b_branch) {
            a->op = (uint16_t)(RV_OP_ADDI_BEQ + (b->op - RV_OP_BEQ));
        } else if (a->op == RV_OP_LI && b_branch) {
            a->op = (uint16_t)(RV_OP_LI_BEQ + (b->op - RV_OP_BEQ));
        } else if (b->op == RV_OP_ADDI &&
                   (a->op == RV_OP_LW || a->op == RV_OP_SW || a->op == RV_OP_ADDI)) {
            a->op = (uint16_t)(a->op == RV_OP_LW   ? RV_OP_LW_ADDI
                               : a->op == RV_OP_SW ? RV_OP_SW_ADDI
                                                   : RV_OP_ADDI_ADDI);
        }
    }
}

void rv_spread(rv_insn *insns, uint32_t count) {
    for (uint32_t i = 0; i < count; i++)
        insns[i].op = (uint16_t)(insns[i].op + RV_OP_COUNT_ * (i % RV_HANDLER_COPIES));
}
