/* Kernel entry: set up the stack, run the static constructors (C++ kernels
 * with global objects), run kernel_main, report completion. The loader has
 * already placed .data and zeroed .bss.
 *
 * Also the few runtime functions compilers call on their own (struct copies,
 * zero fills) or that C++ needs, each in its own section so a kernel that
 * does not use one links without it. */
    .section .text.start, "ax"
    .globl _start
_start:
    lui   sp, %hi(__stack_top)
    addi  sp, sp, %lo(__stack_top)
    lui   s0, %hi(__init_array_start)
    addi  s0, s0, %lo(__init_array_start)
    lui   s1, %hi(__init_array_end)
    addi  s1, s1, %lo(__init_array_end)
1:  bgeu  s0, s1, 2f
    lw    t0, 0(s0)
    addi  s0, s0, 4
    jalr  t0
    j     1b
2:  call  kernel_main
    li    a7, 1          /* LM_ECALL_EXIT */
    li    a0, 0
    ecall
3:  j     3b

/* void *memcpy(void *dst, const void *src, size_t n): words when both
 * pointers are word aligned, bytes otherwise. */
    .section .text.memcpy, "ax"
    .globl memcpy
    .type memcpy, @function
memcpy:
    mv    t0, a0
    or    t1, a0, a1
    andi  t1, t1, 3
    bnez  t1, 2f
    li    t2, 4
1:  bltu  a2, t2, 2f
    lw    t1, 0(a1)
    sw    t1, 0(t0)
    addi  a1, a1, 4
    addi  t0, t0, 4
    addi  a2, a2, -4
    j     1b
2:  beqz  a2, 3f
    lbu   t1, 0(a1)
    sb    t1, 0(t0)
    addi  a1, a1, 1
    addi  t0, t0, 1
    addi  a2, a2, -1
    j     2b
3:  ret
    .size memcpy, . - memcpy

/* void *memmove(void *dst, const void *src, size_t n): forwards (memcpy)
 * unless dst lies inside [src, src + n), then backwards byte by byte. */
    .section .text.memmove, "ax"
    .globl memmove
    .type memmove, @function
memmove:
    bgeu  a1, a0, 2f
    add   t1, a1, a2
    bgeu  a0, t1, 2f
    add   t0, a0, a2
1:  beqz  a2, 3f
    addi  t0, t0, -1
    addi  t1, t1, -1
    lbu   t2, 0(t1)
    sb    t2, 0(t0)
    addi  a2, a2, -1
    j     1b
2:  tail  memcpy
3:  ret
    .size memmove, . - memmove

/* void *memset(void *dst, int c, size_t n): bytes up to a word boundary,
 * then words of the byte repeated, then the remaining bytes. */
    .section .text.memset, "ax"
    .globl memset
    .type memset, @function
memset:
    mv    t0, a0
    andi  a1, a1, 0xff
1:  beqz  a2, 4f
    andi  t1, t0, 3
    beqz  t1, 2f
    sb    a1, 0(t0)
    addi  t0, t0, 1
    addi  a2, a2, -1
    j     1b
2:  slli  t1, a1, 8
    or    t1, t1, a1
    slli  t2, t1, 16
    or    t1, t1, t2
    li    t2, 4
3:  bltu  a2, t2, 5f
    sw    t1, 0(t0)
    addi  t0, t0, 4
    addi  a2, a2, -4
    j     3b
5:  beqz  a2, 4f
    sb    a1, 0(t0)
    addi  t0, t0, 1
    addi  a2, a2, -1
    j     5b
4:  ret
    .size memset, . - memset

/* int memcmp(const void *a, const void *b, size_t n) */
    .section .text.memcmp, "ax"
    .globl memcmp
    .type memcmp, @function
memcmp:
1:  beqz  a2, 2f
    lbu   t0, 0(a0)
    lbu   t1, 0(a1)
    bne   t0, t1, 3f
    addi  a0, a0, 1
    addi  a1, a1, 1
    addi  a2, a2, -1
    j     1b
2:  li    a0, 0
    ret
3:  sub   a0, t0, t1
    ret
    .size memcmp, . - memcmp

/* C++: destructors of static objects are never run (a kernel ends when
 * kernel_main returns), so registering one does nothing. A pure virtual
 * call is an illegal instruction: a kernel fault at this function. */
    .section .text.__cxa_atexit, "ax"
    .globl __cxa_atexit
    .type __cxa_atexit, @function
__cxa_atexit:
    li    a0, 0
    ret
    .size __cxa_atexit, . - __cxa_atexit

    .section .text.__cxa_pure_virtual, "ax"
    .globl __cxa_pure_virtual
    .type __cxa_pure_virtual, @function
__cxa_pure_virtual:
    unimp
    .size __cxa_pure_virtual, . - __cxa_pure_virtual

    .section .sdata.__dso_handle, "aw"
    .globl __dso_handle
    .hidden __dso_handle
__dso_handle:
    .word 0
