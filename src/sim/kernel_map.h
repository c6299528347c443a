/* The memory map a kernel sees on a simulated core (one per hart).
 *
 *   [KMAP_L1_BASE, + l1_size)          the core's L1 SRAM, shared by its harts
 *   [KMAP_LOCAL_BASE, + KMAP_LOCAL_SIZE) hart-private memory: data, bss, stack
 *   [KMAP_CODE_BASE, + KMAP_CODE_SIZE)   the kernel's code and read-only data
 *
 * Anything else traps. DRAM and other cores are reached only through the NoC
 * API (ecalls), never by address. The kernel SDK's linker script, the ELF
 * loader and the binary format's semantic verifier all follow these numbers.
 */
#ifndef LM_SIM_KERNEL_MAP_H
#define LM_SIM_KERNEL_MAP_H

#define KMAP_L1_BASE 0x00000000u
#define KMAP_LOCAL_BASE 0x20000000u
#define KMAP_LOCAL_SIZE 0x00020000u /* 128 KiB; the stack starts at the top */
#define KMAP_CODE_BASE 0x40000000u
#define KMAP_CODE_SIZE 0x00100000u /* 1 MiB */

#endif
