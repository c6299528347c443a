/* Fuzz target over verify + read: any input either fails verification with
 * LM_ERR_INVALID_FILE or verifies and can then be read completely (every
 * field of every table, every blob) and checked semantically without a
 * crash or an out-of-bounds read. Built as a libFuzzer target with clang
 * (LM_FUZZ_INSTRUMENT) and, everywhere, as a replay of the regression corpus. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/lmb_semantic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every field the descriptors describe (the zero-copy readers must be
 * safe on any buffer fb_verify accepted). */
static uint64_t walk(fb_table t, const fb_table_desc *d) {
    uint64_t sum = 0;
    for (uint32_t i = 0; i < d->field_count; i++) {
        const fb_field_desc *f = &d->fields[i];
        switch (f->base) {
        case FB_T_STRING: {
            fb_str s = fb_get_str(t, f->id);
            for (uint32_t k = 0; k < s.len; k++)
                sum += (uint8_t)s.ptr[k];
            break;
        }
        case FB_T_OBJ:
            if (f->st) {
                const uint8_t *p = fb_get_struct(t, f->id);
                for (uint32_t k = 0; p && k < f->st->size; k++)
                    sum += p[k];
            } else {
                fb_table sub = fb_get_table(t, f->id);
                if (sub) sum += walk(sub, f->tab);
            }
            break;
        case FB_T_UNION: {
            uint8_t type = fb_get_u8(t, f->id - 1u);
            fb_table sub = fb_get_table(t, f->id);
            if (sub && type >= 1 && type <= f->un->count)
                sum += walk(sub, f->un->members[type - 1]);
            break;
        }
        case FB_T_VECTOR: {
            fb_vec v = fb_get_vec(t, f->id);
            for (uint32_t k = 0; k < v.len; k++) {
                if (f->elem == FB_T_OBJ && f->tab)
                    sum += walk(fb_vec_table(v, k), f->tab);
                else if (f->elem == FB_T_STRING)
                    sum += fb_vec_str(v, k).len;
                else if (f->elem == FB_T_OBJ)
                    sum += fb_vec_struct(v, k, f->st->size)[0];
                else
                    sum += v.data[k];
            }
            break;
        }
        case FB_T_SHORT:
        case FB_T_USHORT:
            sum += fb_get_u16(t, f->id);
            break;
        case FB_T_INT:
        case FB_T_UINT:
        case FB_T_FLOAT:
            sum += fb_get_u32(t, f->id);
            break;
        case FB_T_LONG:
        case FB_T_ULONG:
        case FB_T_DOUBLE:
            sum += fb_get_u64(t, f->id);
            break;
        default:
            sum += fb_get_u8(t, f->id);
            break;
        }
    }
    return sum;
}

static void check(const uint8_t *data, size_t size) {
    lmb_verify_options opts;
    lmb_verify_options_init(&opts);
    opts.check_blob_hashes = true;
    if (lmb_verify(data, size, &opts, NULL) != LM_OK) return;
    volatile uint64_t sum = walk(lmb_root(data), &lmb_desc_LightMetalBinary);
    (void)sum;
    lmb_semantic_options sopts;
    lmb_semantic_options_init(&sopts);
    sopts.kernel_map = (lmb_kernel_map){0x40000000u, 0x00100000u, 0x20000000u, 0x00020000u};
    sopts.memory_map = (lmb_memory_map){32, 16, 0x10000, 2};
    (void)lmb_verify_semantics(data, size, &sopts, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    check(data, size);
    /* Resealed, a mutation gets past the table digest to every later check
     * (the digest itself is exercised by the unsealed pass). */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy) return 0;
    if (size) memcpy(copy, data, size);
    if (lmb_reseal(copy, size) == LM_OK) check(copy, size);
    free(copy);
    return 0;
}
