#include "base/handle.h"

#include <stdlib.h>

#include "base/error.h"

/* Layout: bits 0..23 slot index + 1, bits 24..31 type, bits 32..63 generation. */
#define HANDLE_INDEX_BITS 24
#define HANDLE_MAX_SLOTS ((1u << HANDLE_INDEX_BITS) - 1)

static uint64_t pack(uint32_t index, uint8_t type, uint32_t generation) {
    return (uint64_t)generation << 32 | (uint64_t)type << HANDLE_INDEX_BITS | (index + 1);
}

void handle_table_lock(handle_table *table) {
    pthread_mutex_lock(&table->mutex);
}
void handle_table_unlock(handle_table *table) {
    pthread_mutex_unlock(&table->mutex);
}

static lm_status grow(handle_table *table) {
    if (table->capacity >= HANDLE_MAX_SLOTS)
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "too many live objects (limit %u)",
                       HANDLE_MAX_SLOTS);
    uint32_t cap = table->capacity ? table->capacity * 2 : 64;
    if (cap > HANDLE_MAX_SLOTS) cap = HANDLE_MAX_SLOTS;
    handle_slot *slots = realloc(table->slots, (size_t)cap * sizeof *slots);
    if (!slots) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "cannot grow the handle table");
    table->slots = slots;
    table->capacity = cap;
    return LM_OK;
}

lm_status handle_alloc_locked(handle_table *table, uint8_t type, void *object,
                              uint64_t *out_handle) {
    uint32_t index;
    if (table->free_head) {
        index = table->free_head - 1;
        table->free_head = table->slots[index].next_free;
    } else {
        if (table->count == table->capacity) {
            lm_status st = grow(table);
            if (st) return st;
        }
        index = table->count++;
        table->slots[index].generation = 1;
    }
    handle_slot *slot = &table->slots[index];
    slot->object = object;
    slot->type = type;
    slot->next_free = 0;
    *out_handle = pack(index, type, slot->generation);
    return LM_OK;
}

handle_check handle_get_locked(const handle_table *table, uint64_t handle, uint8_t type,
                               void **out_object) {
    *out_object = NULL;
    if (handle == 0) return HANDLE_NULL;
    uint32_t index_plus_1 = (uint32_t)(handle & HANDLE_MAX_SLOTS);
    uint8_t handle_type = (uint8_t)(handle >> HANDLE_INDEX_BITS);
    uint32_t generation = (uint32_t)(handle >> 32);
    if (handle_type != type) return HANDLE_WRONG_TYPE;
    if (index_plus_1 == 0 || index_plus_1 > table->count) return HANDLE_UNKNOWN;
    const handle_slot *slot = &table->slots[index_plus_1 - 1];
    if (generation == 0 || generation > slot->generation) return HANDLE_UNKNOWN;
    if (generation != slot->generation || !slot->object) return HANDLE_STALE;
    *out_object = slot->object;
    return HANDLE_OK;
}

void handle_free_locked(handle_table *table, uint64_t handle) {
    uint32_t index = (uint32_t)(handle & HANDLE_MAX_SLOTS) - 1;
    handle_slot *slot = &table->slots[index];
    slot->object = NULL;
    /* Generation 0 marks "never valid"; after wrapping, skip it. A slot would
     * need 2^32 reuses before an old handle could look live again. */
    if (++slot->generation == 0) slot->generation = 1;
    slot->next_free = table->free_head;
    table->free_head = index + 1;
}

const char *handle_check_string(handle_check check) {
    switch (check) {
    case HANDLE_OK:
        return "is valid";
    case HANDLE_NULL:
        return "is null";
    case HANDLE_WRONG_TYPE:
        return "is not a handle of this object type";
    case HANDLE_UNKNOWN:
        return "was never issued";
    case HANDLE_STALE:
        return "is stale (the object was already released)";
    }
    return "is invalid";
}
