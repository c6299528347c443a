/* Hart set-up and fault descriptions (the interpreter is in rv_run.c). */
#include "sim/rv32/rv_hart.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

void rv_local_init(rv_local *local, uint8_t *bytes, bool known_zero) {
    local->bytes = bytes;
    local->data_end = 0;
    local->dirty_lo = known_zero ? KMAP_LOCAL_SIZE : 0;
}

lm_status rv_hart_init(rv_hart *hart, const rv_image *image, uint8_t *l1, uint32_t l1_size,
                       rv_local *local) {
    if (!hart || !image || !local || !local->bytes || (!l1 && l1_size))
        return err_set(LM_ERR_INVALID_ARGUMENT, "rv_hart_init: NULL hart, image or memory");
    if (l1_size > KMAP_LOCAL_BASE)
        return err_set(LM_ERR_INVALID_ARGUMENT,
                       "rv_hart_init: L1 of %u bytes overlaps local memory at 0x%08x", l1_size,
                       KMAP_LOCAL_BASE);
    memset(hart, 0, sizeof *hart);
    hart->image = image;
    hart->l1 = l1;
    hart->l1_size = l1_size;
    hart->local = local->bytes;
    hart->local_state = local;
    hart->pc = image->entry;
    hart->x[1] = RV_RETURN_ADDR;
    hart->x[2] = KMAP_LOCAL_BASE + KMAP_LOCAL_SIZE;
    /* Clear what may be dirty above the new data: the old data beyond it,
     * and whatever was written above the old data. */
    uint32_t end = image->data_size;
    if (local->data_end > end) memset(local->bytes + end, 0, local->data_end - end);
    uint32_t lo = local->dirty_lo > end ? local->dirty_lo : end;
    if (lo < KMAP_LOCAL_SIZE) memset(local->bytes + lo, 0, KMAP_LOCAL_SIZE - lo);
    memcpy(local->bytes, image->data_bytes, end);
    local->data_end = end;
    local->dirty_lo = KMAP_LOCAL_SIZE;
    return LM_OK;
}

void rv_fault_describe(const rv_hart *hart, char *buf, size_t buf_size) {
    const rv_fault *f = &hart->fault;
    switch (f->cause) {
    case RV_FAULT_NONE:
        snprintf(buf, buf_size, "no fault (pc 0x%08x)", hart->pc);
        break;
    case RV_FAULT_ILLEGAL:
        snprintf(buf, buf_size, "illegal instruction 0x%08x (pc 0x%08x)", f->insn, f->pc);
        break;
    case RV_FAULT_LOAD:
        snprintf(buf, buf_size, "%u-byte load at 0x%08x outside the hart's memory (pc 0x%08x)",
                 f->size, f->addr, f->pc);
        break;
    case RV_FAULT_STORE:
        snprintf(buf, buf_size, "%u-byte store at 0x%08x outside the hart's %s (pc 0x%08x)",
                 f->size, f->addr,
                 f->addr - KMAP_CODE_BASE < KMAP_CODE_SIZE ? "writable memory (code is read-only)"
                                                           : "memory",
                 f->pc);
        break;
    case RV_FAULT_JUMP:
        snprintf(buf, buf_size, "jump to %s 0x%08x (pc 0x%08x)",
                 f->addr & 3 ? "misaligned address" : "non-code address", f->addr, f->pc);
        break;
    case RV_FAULT_FETCH:
        snprintf(buf, buf_size, "execution reached non-code address 0x%08x", f->pc);
        break;
    case RV_FAULT_BREAKPOINT:
        snprintf(buf, buf_size, "ebreak (pc 0x%08x)", f->pc);
        break;
    case RV_FAULT_ECALL:
        snprintf(buf, buf_size, "ecall %u failed: %s (pc 0x%08x)", hart->x[17],
                 f->detail[0] ? f->detail : "rejected by the host", f->pc);
        break;
    default:
        snprintf(buf, buf_size, "unknown fault %d (pc 0x%08x)", (int)f->cause, f->pc);
        break;
    }
}
