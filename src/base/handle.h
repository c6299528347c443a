/* Generational handle table: turns object pointers into 64-bit handles that can
 * be checked.
 *
 * A handle packs a slot index, the object's type tag and the slot's generation.
 * Freeing an object bumps its slot's generation, so a handle kept after a free
 * (a double free, a use after free) is recognised as stale instead of reaching
 * freed or reused memory. Handle 0 is never issued.
 *
 * Thread-safety: the table has one mutex. Functions named *_locked must be
 * called between handle_table_lock() and handle_table_unlock(); callers copy
 * what they need out of the object before unlocking, so no object is used
 * after another thread could have freed it.
 */
#ifndef LM_BASE_HANDLE_H
#define LM_BASE_HANDLE_H

#include <pthread.h>
#include <stdint.h>

#include "lightmetal/lm_status.h"

typedef struct handle_slot {
    void *object; /* NULL while the slot is free */
    uint32_t generation;
    uint32_t next_free; /* index + 1 of the next free slot; 0 ends the list */
    uint8_t type;
} handle_slot;

typedef struct handle_table {
    pthread_mutex_t mutex;
    handle_slot *slots;
    uint32_t capacity;
    uint32_t count;     /* slots ever used (high-water mark) */
    uint32_t free_head; /* index + 1 of the first free slot; 0 when none */
} handle_table;

/* Outcome of a lookup, so callers can say exactly what was wrong. */
typedef enum handle_check {
    HANDLE_OK = 0,
    HANDLE_NULL,       /* the zero handle */
    HANDLE_WRONG_TYPE, /* a live or dead handle of another object type */
    HANDLE_UNKNOWN,    /* never issued by this table */
    HANDLE_STALE,      /* issued, then freed */
} handle_check;

/* Statically initialisable empty table. */
#define HANDLE_TABLE_INIT                                                                          \
    { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 }

void handle_table_lock(handle_table *table);
void handle_table_unlock(handle_table *table);

/* Registers `object` (not NULL) under `type` (1..255). LM_ERR_OUT_OF_HOST_MEMORY
 * when the table cannot grow. */
lm_status handle_alloc_locked(handle_table *table, uint8_t type, void *object,
                              uint64_t *out_handle);

/* Looks a handle up; on HANDLE_OK stores the object in *out_object. */
handle_check handle_get_locked(const handle_table *table, uint64_t handle, uint8_t type,
                               void **out_object);

/* Frees a handle that handle_get_locked() just accepted. */
void handle_free_locked(handle_table *table, uint64_t handle);

/* Human-readable reason for a failed check, e.g. "is stale (already freed)". */
const char *handle_check_string(handle_check check);

#endif
