/* Kernel entry: set up the stack, run kernel_main, report completion.
 * The loader has already placed .data and zeroed .bss. */
    .section .text.start, "ax"
    .globl _start
_start:
    lui   sp, %hi(__stack_top)
    addi  sp, sp, %lo(__stack_top)
    call  kernel_main
    li    a7, 1          /* LM_ECALL_EXIT */
    li    a0, 0
    ecall
1:  j     1b
