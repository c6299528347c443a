/* Every RV32I and M instruction against values worked out from the ISA
 * manual. _start returns 0 when all pass, else the number of the first
 * failing check (in a0). Only t-registers, a0 and s-registers are used, so
 * the return address survives. */
    .option norvc
    .section .text.start
    .globl _start
_start:
    mv s11, ra

/* rd = op(a, b) for register-register forms */
.macro RR id, op, a, b, exp
    li a0, \id
    li t0, \a
    li t1, \b
    \op t2, t0, t1
    li t3, \exp
    beq t2, t3, 1f
    j fail
1:
.endm

/* rd = op(a, imm) */
.macro RI id, op, a, imm, exp
    li a0, \id
    li t0, \a
    \op t2, t0, \imm
    li t3, \exp
    beq t2, t3, 1f
    j fail
1:
.endm

.macro TAKEN id, op, a, b
    li a0, \id
    li t0, \a
    li t1, \b
    \op t0, t1, 1f
    j fail
1:
.endm

.macro NOT_TAKEN id, op, a, b
    li a0, \id
    li t0, \a
    li t1, \b
    \op t0, t1, 1f
    j 2f
1:
    j fail
2:
.endm

/* t2 holds a value to compare with exp */
.macro EXPECT id, exp
    li a0, \id
    li t3, \exp
    beq t2, t3, 1f
    j fail
1:
.endm

    RR 1, add, 1, 2, 3
    RR 2, add, 0x7fffffff, 1, 0x80000000
    RR 3, add, 0xffffffff, 1, 0
    RR 4, sub, 0, 1, 0xffffffff
    RR 5, sub, 0x80000000, 1, 0x7fffffff
    RR 6, sll, 1, 31, 0x80000000
    RR 7, sll, 1, 32, 1
    RR 8, sll, 1, 33, 2
    RR 9, sll, 0x12345678, 0xffffffe4, 0x23456780
    RR 10, srl, 0x80000000, 31, 1
    RR 11, srl, 0x80000000, 32, 0x80000000
    RR 12, srl, 0xf0000000, 36, 0x0f000000
    RR 13, sra, 0x80000000, 31, 0xffffffff
    RR 14, sra, 0x80000000, 4, 0xf8000000
    RR 15, sra, 0x40000000, 33, 0x20000000
    RR 16, sra, 0x80000000, 32, 0x80000000
    RR 17, slt, -1, 0, 1
    RR 18, slt, 0, -1, 0
    RR 19, slt, 0x80000000, 0x7fffffff, 1
    RR 20, slt, 5, 5, 0
    RR 21, sltu, -1, 0, 0
    RR 22, sltu, 0, -1, 1
    RR 23, sltu, 5, 5, 0
    RR 24, xor, 0xff00ff00, 0x0ff00ff0, 0xf0f0f0f0
    RR 25, or, 0xff00ff00, 0x0ff00ff0, 0xfff0fff0
    RR 26, and, 0xff00ff00, 0x0ff00ff0, 0x0f000f00

    RR 30, mul, 3, 4, 12
    RR 31, mul, 0xffffffff, 0xffffffff, 1
    RR 32, mul, 0x80000000, 2, 0
    RR 33, mul, 0x12345678, 0x9abcdef0, 0x242d2080
    RR 34, mulh, -1, -1, 0
    RR 35, mulh, 0x80000000, 0x80000000, 0x40000000
    RR 36, mulh, -1, 1, 0xffffffff
    RR 37, mulh, 0x7fffffff, 0x7fffffff, 0x3fffffff
    RR 38, mulh, 0x80000000, 0x7fffffff, 0xc0000000
    RR 39, mulh, 0x12345678, 0x9abcdef0, 0xf8cc93d6
    RR 40, mulhsu, -1, 0xffffffff, 0xffffffff
    RR 41, mulhsu, 0x80000000, 0xffffffff, 0x80000000
    RR 42, mulhsu, 1, 0xffffffff, 0
    RR 43, mulhsu, 2, 0x80000000, 1
    RR 44, mulhsu, -2, 1, 0xffffffff
    RR 45, mulhsu, 0x12345678, 0x9abcdef0, 0x0b00ea4e
    RR 46, mulhu, 0xffffffff, 0xffffffff, 0xfffffffe
    RR 47, mulhu, 0x80000000, 2, 1
    RR 48, mulhu, 0x12345678, 0x9abcdef0, 0x0b00ea4e
    RR 50, div, 7, 2, 3
    RR 51, div, -7, 2, -3
    RR 52, div, 7, -2, -3
    RR 53, div, -7, -2, 3
    RR 54, div, 5, 0, 0xffffffff
    RR 55, div, 0, 0, 0xffffffff
    RR 56, div, 0x80000000, -1, 0x80000000
    RR 57, divu, 7, 2, 3
    RR 58, divu, 0xffffffff, 2, 0x7fffffff
    RR 59, divu, 5, 0, 0xffffffff
    RR 60, divu, 0x80000000, 0xffffffff, 0
    RR 61, rem, 7, 2, 1
    RR 62, rem, -7, 2, -1
    RR 63, rem, 7, -2, 1
    RR 64, rem, -7, -2, -1
    RR 65, rem, 5, 0, 5
    RR 66, rem, -5, 0, -5
    RR 67, rem, 0x80000000, -1, 0
    RR 68, remu, 7, 2, 1
    RR 69, remu, 0xffffffff, 10, 5
    RR 70, remu, 5, 0, 5
    RR 71, remu, 0x80000000, 0xffffffff, 0x80000000

    RI 80, addi, 1, -1, 0
    RI 81, addi, 0x7fffffff, 1, 0x80000000
    RI 82, addi, 0, -2048, 0xfffff800
    RI 83, addi, 0, 2047, 2047
    RI 84, slti, -1, 0, 1
    RI 85, slti, 0, -1, 0
    RI 86, slti, 0x80000000, -2048, 1
    RI 87, sltiu, 0, -1, 1
    RI 88, sltiu, 0xffffffff, -1, 0
    RI 89, sltiu, 0, 1, 1
    RI 90, sltiu, 1, 1, 0
    RI 91, xori, 0x00ff00ff, -1, 0xff00ff00
    RI 92, ori, 0xf0, 0x0f, 0xff
    RI 93, ori, 0, -2048, 0xfffff800
    RI 94, andi, 0xffffffff, 0x7ff, 0x7ff
    RI 95, andi, 0x12345678, -16, 0x12345670
    RI 96, slli, 1, 31, 0x80000000
    RI 97, slli, 0x12345678, 0, 0x12345678
    RI 98, srli, 0x80000000, 31, 1
    RI 99, srai, 0x80000000, 31, 0xffffffff
    RI 100, srai, 0x7fffffff, 30, 1

    lui t2, 0xfffff
    EXPECT 110, 0xfffff000
    lui t2, 0x12345
    addi t2, t2, 0x678
    EXPECT 111, 0x12345678
3:  auipc t2, 0x1
    lui t3, %hi(3b + 0x1000)
    addi t3, t3, %lo(3b + 0x1000)
    li a0, 112
    bne t2, t3, fail

    /* Writes to x0 are discarded, whatever writes them. */
    addi x0, x0, 5
    mv t2, x0
    EXPECT 120, 0
    li t0, 7
    add x0, t0, t0
    lui x0, 0x12345
    mul x0, t0, t0
    lw x0, -4(sp)
    mv t2, zero
    EXPECT 121, 0

    TAKEN 130, beq, 5, 5
    NOT_TAKEN 131, beq, 5, 6
    TAKEN 132, bne, 5, 6
    NOT_TAKEN 133, bne, 5, 5
    TAKEN 134, blt, -1, 1
    NOT_TAKEN 135, blt, 1, -1
    NOT_TAKEN 136, blt, 1, 1
    TAKEN 137, bge, 1, -1
    TAKEN 138, bge, 1, 1
    NOT_TAKEN 139, bge, -1, 1
    TAKEN 140, bltu, 1, -1
    NOT_TAKEN 141, bltu, -1, 1
    NOT_TAKEN 142, bltu, 1, 1
    TAKEN 143, bgeu, -1, 1
    TAKEN 144, bgeu, 1, 1
    NOT_TAKEN 145, bgeu, 1, -1

    /* jal links the next address */
    li a0, 150
    jal t4, 4f
5:  j fail
4:  lui t3, %hi(5b)
    addi t3, t3, %lo(5b)
    bne t4, t3, fail
    /* jalr clears bit 0 of the target and links */
    li a0, 151
    lui t0, %hi(6f)
    addi t0, t0, %lo(6f)
    addi t0, t0, 1
    jalr t4, 0(t0)
7:  j fail
6:  lui t3, %hi(7b)
    addi t3, t3, %lo(7b)
    bne t4, t3, fail
    /* jalr with an offset, and with rd == rs1 (the old value is the base) */
    li a0, 152
    lui t0, %hi(8f + 8)
    addi t0, t0, %lo(8f + 8)
    jalr t0, -8(t0)
9:  j fail
8:  lui t3, %hi(9b)
    addi t3, t3, %lo(9b)
    bne t0, t3, fail
    /* a call through a register and back */
    li a0, 153
    lui t0, %hi(leaf)
    addi t0, t0, %lo(leaf)
    li t2, 1
    jalr ra, 0(t0)
    mv ra, s11
    EXPECT 154, 2

    fence
    fence rw, rw

    /* loads of every width, with and without sign extension, aligned or not */
    lui s0, %hi(buf)
    addi s0, s0, %lo(buf)
    lb t2, 0(s0)
    EXPECT 160, 0x01
    lb t2, 1(s0)
    EXPECT 161, 0x7f
    lb t2, 2(s0)
    EXPECT 162, 0xffffffff
    lb t2, 3(s0)
    EXPECT 163, 0xffffff80
    lbu t2, 2(s0)
    EXPECT 164, 0xff
    lbu t2, 3(s0)
    EXPECT 165, 0x80
    lh t2, 0(s0)
    EXPECT 166, 0x7f01
    lh t2, 2(s0)
    EXPECT 167, 0xffff80ff
    lhu t2, 2(s0)
    EXPECT 168, 0x80ff
    lw t2, 0(s0)
    EXPECT 169, 0x80ff7f01
    lw t2, 1(s0)
    EXPECT 170, 0x7880ff7f
    lh t2, 3(s0)
    EXPECT 171, 0x7880
    addi s1, s0, 8
    lw t2, -4(s1)
    EXPECT 172, 0x12345678

    /* stores of every width, then read back */
    li t0, 0xa1b2c3d4
    sw t0, 8(s0)
    sb t0, 12(s0)
    sh t0, 13(s0)
    sb zero, 15(s0)
    lw t2, 8(s0)
    EXPECT 180, 0xa1b2c3d4
    lw t2, 12(s0)
    EXPECT 181, 0x00c3d4d4
    sw t0, 17(s0)
    lw t2, 16(s0)
    EXPECT 182, 0xb2c3d400
    lbu t2, 20(s0)
    EXPECT 183, 0xa1
    li t0, 0x5566
    sh t0, -2(s1)
    lw t2, 4(s0)
    EXPECT 184, 0x55665678

    /* read-only data in the code region */
    lui s2, %hi(ro)
    addi s2, s2, %lo(ro)
    lw t2, 0(s2)
    EXPECT 190, 0xdeadbeef
    lb t2, 3(s2)
    EXPECT 191, 0xffffffde
    lhu t2, 1(s2)
    EXPECT 192, 0xadbe

    /* the core's L1 at address 0 */
    li t0, 0xcafef00d
    sw t0, 64(zero)
    lw t2, 64(zero)
    EXPECT 200, 0xcafef00d
    lb t2, 67(zero)
    EXPECT 201, 0xffffffca

    li a0, 0
    mv ra, s11
    ret

fail:
    mv ra, s11
    ret

leaf:
    addi t2, t2, 1
    ret

    .section .rodata
    .p2align 2
ro: .word 0xdeadbeef

    .data
    .p2align 2
buf: .word 0x80ff7f01, 0x12345678, 0, 0, 0, 0
