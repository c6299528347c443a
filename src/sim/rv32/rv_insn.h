/* The predecoded form of RV32IM instructions, shared by the decoder, the ELF
 * loader (which decodes each kernel once) and the interpreter.
 *
 * Every 32-bit word of a kernel's code region becomes one rv_insn: the
 * operation as a small index (a dispatch-table slot), register numbers and one
 * immediate, already sign-extended and, where possible, already folded
 * (AUIPC becomes a constant load, branch offsets are counted in instructions).
 * Words that must not execute (illegal encodings, non-executable data) become
 * trapping operations, so the interpreter never has to validate anything at
 * run time except data addresses and indirect jump targets.
 *
 * Internal to lm_rv32; nothing here is part of the simulator's interface.
 */
#ifndef LM_SIM_RV32_RV_INSN_H
#define LM_SIM_RV32_RV_INSN_H

#include <stdint.h>

/* Register number that receives writes to x0. Decoding rd = 0 to this sink
 * keeps x0 at zero without a per-instruction reset: nothing ever reads it. */
#define RV_REG_SINK 32

/* X(name, ends_block). An operation ends a block when the next instruction to
 * run is not simply the following word: control transfers, ecalls (the host
 * may park the hart there) and the operations that always trap. */
#define RV_OPS(X)                                                                                  \
    X(LI, 0) /* rd = imm (LUI; ADDI from x0; AUIPC folded with its pc) */                          \
    X(ADDI, 0)                                                                                     \
    X(SLTI, 0)                                                                                     \
    X(SLTIU, 0)                                                                                    \
    X(XORI, 0)                                                                                     \
    X(ORI, 0)                                                                                      \
    X(ANDI, 0)                                                                                     \
    X(SLLI, 0)                                                                                     \
    X(SRLI, 0)                                                                                     \
    X(SRAI, 0)                                                                                     \
    X(ADD, 0)                                                                                      \
    X(SUB, 0)                                                                                      \
    X(SLL, 0)                                                                                      \
    X(SLT, 0)                                                                                      \
    X(SLTU, 0)                                                                                     \
    X(XOR, 0)                                                                                      \
    X(SRL, 0)                                                                                      \
    X(SRA, 0)                                                                                      \
    X(OR, 0)                                                                                       \
    X(AND, 0)                                                                                      \
    X(MUL, 0)                                                                                      \
    X(MULH, 0)                                                                                     \
    X(MULHSU, 0)                                                                                   \
    X(MULHU, 0)                                                                                    \
    X(DIV, 0)                                                                                      \
    X(DIVU, 0)                                                                                     \
    X(REM, 0)                                                                                      \
    X(REMU, 0)                                                                                     \
    X(LB, 0)                                                                                       \
    X(LH, 0)                                                                                       \
    X(LW, 0)                                                                                       \
    X(LBU, 0)                                                                                      \
    X(LHU, 0)                                                                                      \
    X(SB, 0)                                                                                       \
    X(SH, 0)                                                                                       \
    X(SW, 0)                                                                                       \
    X(NOP, 0) /* FENCE */                                                                          \
    X(BEQ, 1) /* imm = target offset in instructions */                                            \
    X(BNE, 1)                                                                                      \
    X(BLT, 1)                                                                                      \
    X(BGE, 1)                                                                                      \
    X(BLTU, 1)                                                                                     \
    X(BGEU, 1)                                                                                     \
    X(BRANCH_OUT, 1) /* branch whose target is not code: rd = funct3, imm = target address */      \
    X(JAL, 1)        /* imm = target offset in instructions */                                     \
    X(JAL_OUT, 1)    /* jal whose target is not code: imm = target address */                      \
    X(JALR, 1)                                                                                     \
    X(ECALL, 1)                                                                                    \
    X(EBREAK, 1)                                                                                   \
    X(ILLEGAL, 1) /* imm = the instruction word */                                                 \
    X(NOEXEC, 1)  /* a word outside any executable segment, or past the end of code */             \
    /* Fused pairs (rv_fuse): the first word of a common two-instruction idiom                     \
     * runs both; the second word keeps its own decoding for jumps into it. */                     \
    X(LI2, 0)      /* lui/auipc + addi on one register: rd = imm */                                \
    X(SHADD, 0)    /* slli + add: rd = x[rs2] + (x[rs1] << imm) */                                 \
    X(SHADD_LW, 0) /* SHADD, then an lw based on rd (array indexing) */                            \
    X(ADD_LW, 0)   /* add, then an lw based on rd (indexed load) */                                \
    X(CALL, 1)     /* auipc/lui + jalr through one register: rd = pc + 8, imm = offset */          \
    X(ADDI_BEQ, 1) /* addi, then the branch that follows */                                        \
    X(ADDI_BNE, 1)                                                                                 \
    X(ADDI_BLT, 1)                                                                                 \
    X(ADDI_BGE, 1)                                                                                 \
    X(ADDI_BLTU, 1)                                                                                \
    X(ADDI_BGEU, 1)                                                                                \
    X(LI_BEQ, 1) /* li, then the branch that follows */                                            \
    X(LI_BNE, 1)                                                                                   \
    X(LI_BLT, 1)                                                                                   \
    X(LI_BGE, 1)                                                                                   \
    X(LI_BLTU, 1)                                                                                  \
    X(LI_BGEU, 1)                                                                                  \
    X(LW_ADDI, 0)   /* lw, then the addi that follows (on any registers) */                        \
    X(SW_ADDI, 0)   /* sw, then the addi that follows */                                           \
    X(ADDI_ADDI, 0) /* addi, then the addi that follows */

typedef enum rv_op {
#define RV_OP_ENUM_(name, ends) RV_OP_##name,
    RV_OPS(RV_OP_ENUM_)
#undef RV_OP_ENUM_
        RV_OP_COUNT_
} rv_op;

/* The interpreter has RV_HANDLER_COPIES copies of every handler and each
 * predecoded instruction names one of them (rv_spread). Why: every copy ends
 * in its own indirect jump, so the host's branch predictors see fewer
 * successors per jump site; on the interpreter benchmark (bench/rv32) four
 * copies run about 20 % faster than one (eight were no faster). */
#define RV_HANDLER_COPIES 4
_Static_assert(RV_OP_COUNT_ <= 65536 / RV_HANDLER_COPIES, "dispatch slots must fit in rv_insn.op");

/* One predecoded instruction. `block_len` is the number of instructions from
 * this one to the end of its straight-line run (the next block-ending
 * operation), inclusive: entering the code here and running to the end of the
 * run executes exactly that many instructions, which is what lets the
 * interpreter count per block and still keep an exact instruction count.
 * The size is a power of two so that indexing by address is a shift, and
 * an instruction's address follows from its index: the code region's base
 * plus 4 per instruction. */
typedef struct rv_insn {
    uint16_t op; /* dispatch slot: the rv_op plus RV_OP_COUNT_ times a handler copy */
    uint8_t rd;  /* RV_REG_SINK when the encoding names x0 */
    uint8_t rs1;
    uint8_t rs2;
    uint8_t unused_[3];
    int32_t imm;
    uint32_t block_len;
} rv_insn;
_Static_assert(sizeof(rv_insn) == 16, "rv_insn is indexed by shifting");

/* The operation of a predecoded instruction, whichever handler copy it uses. */
static inline rv_op rv_insn_op(const rv_insn *in) {
    return (rv_op)(in->op % RV_OP_COUNT_);
}

/* Decodes the instruction word found at address `pc` of the code region.
 * Never fails: anything outside RV32IM becomes RV_OP_ILLEGAL. Branch and JAL
 * targets are resolved against the executable range [code_lo, code_hi): a
 * target outside it (or misaligned) gives the *_OUT form, which traps only
 * when the jump is actually taken. block_len is left 0 for the caller. */
rv_insn rv_decode(uint32_t word, uint32_t pc, uint32_t code_lo, uint32_t code_hi);

/* True for operations that end a block (see RV_OPS). */
int rv_op_ends_block(rv_op op);

/* Rewrites the first instruction of each fusable pair in insns[0, count) in
 * place (the sentinel at insns[count] is never fused); insns[0] is the word
 * at code_lo. Run after block_len is set: a fused pair lies inside one
 * block, so the counts stay right. */
void rv_fuse(rv_insn *insns, uint32_t count, uint32_t code_lo, uint32_t code_hi);

/* Assigns each instruction in insns[0, count) a handler copy by its position
 * (neighbours get different copies); run last, as it changes rv_insn.op. */
void rv_spread(rv_insn *insns, uint32_t count);

#endif
