/* Entry of the workload as a static Linux rv32 program (for qemu-riscv32):
 * no libc exists for rv32 on Debian, so exit through the syscall directly.
 * The exit status is the low byte of the result, which the benchmark
 * compares with the simulated run's. */
    .option norvc
    .text
    .globl _start
_start:
    li a0, ISS_ROUNDS
    call iss_workload
    andi a0, a0, 0xff
    li a7, 93 /* exit */
    ecall
