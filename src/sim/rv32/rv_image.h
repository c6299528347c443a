/* A kernel image: an RV32IM ELF executable, validated and predecoded once.
 *
 * rv_image_load parses untrusted bytes (a kernel ELF from a file or a Light
 * Metal binary) and accepts only what the simulated core can run: ELF32,
 * little-endian, EM_RISCV, ET_EXEC, no compressed instructions, no hardware
 * float ABI, and PT_LOAD segments placed per sim/kernel_map.h:
 *   - executable segments inside the code region, 4-byte aligned, not writable;
 *   - writable segments inside the local region;
 *   - read-only data segments in either of the two;
 *   - no two segments overlapping; the entry point on an executable word.
 * Anything else fails with LM_ERR_INVALID_FILE and a message naming the field.
 *
 * The loaded image holds the predecoded code of the whole code extent, a
 * read-only copy of the code region's bytes (for loads of constants) and the
 * initial contents of the local region (data; bss is the zero tail).
 *
 * Ownership and threads: the image is immutable after rv_image_load returns,
 * so any number of harts on any threads may run it at once. It must outlive
 * every hart that uses it; rv_image_free releases it.
 */
#ifndef LM_SIM_RV32_RV_IMAGE_H
#define LM_SIM_RV32_RV_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"
#include "sim/rv32/rv_insn.h"

typedef struct rv_image {
    uint32_t entry; /* address of the first instruction */
    /* Code region: [KMAP_CODE_BASE, KMAP_CODE_BASE + code_size), code_size a
     * multiple of 4. insns has code_size / 4 + 1 entries: the last one is a
     * NOEXEC sentinel that catches execution running off the end. */
    uint32_t code_size;
    const uint8_t *code_bytes;
    const rv_insn *insns;
    /* Local region: [KMAP_LOCAL_BASE, KMAP_LOCAL_BASE + data_size) starts as
     * data_bytes; the rest of the region starts zeroed. */
    uint32_t data_size;
    const uint8_t *data_bytes;
} rv_image;

/* Validates and predecodes the ELF in elf[0, size). The bytes are not kept:
 * the caller may free them once this returns. */
lm_status rv_image_load(const void *elf, size_t size, rv_image **out_image);

/* Releases an image; NULL is accepted. No hart may use it afterwards. */
void rv_image_free(rv_image *image);

#endif
