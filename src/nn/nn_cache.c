/* The program cache: per device, programs by key (op name, attributes and
 * the tensors' shapes, dtypes, layouts and memory configs).
 *
 * A linear list searched by a 64-bit hash and then the whole key: models have
 * tens to hundreds of distinct op instances, and a hit must stay far cheaper
 * than the launch it saves (nn_cached_launch_vs_enqueue). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "nn/nn_internal.h"
#include "nn/nn_state.h"

typedef struct cache_entry {
    uint64_t hash;
    size_t key_len;
    uint8_t *key;
    nn_program program;
} cache_entry;

typedef struct device_state {
    lm_device *device;
    cache_entry *entries;
    size_t count, capacity;
    uint64_t hits, misses;
    struct device_state *next;
} device_state;

static pthread_mutex_t states_mutex = PTHREAD_MUTEX_INITIALIZER;
static device_state *states;

/* Callers hold states_mutex. */
static device_state *find_state(const lm_device *device) {
    for (device_state *s = states; s; s = s->next)
        if (s->device == device) return s;
    return NULL;
}

static void release_entries(device_state *s) {
    for (size_t i = 0; i < s->count; i++) {
        lm_release_program(s->entries[i].program.program);
        free(s->entries[i].key);
    }
    s->count = 0;
}

static void on_device_close(lm_device *device, void *user) {
    (void)user;
    pthread_mutex_lock(&states_mutex);
    device_state **p = &states;
    while (*p && (*p)->device != device)
        p = &(*p)->next;
    device_state *s = *p;
    if (s) *p = s->next;
    pthread_mutex_unlock(&states_mutex);
    if (s) {
        release_entries(s);
        free(s->entries);
        free(s);
    }
    nn_tensor_orphan_all(device);
}

lm_status nn_state_attach(const char *op, lm_device *device) {
    if (!device) return nn_fail(LM_ERR_INVALID_HANDLE, op, "device is NULL");
    pthread_mutex_lock(&states_mutex);
    device_state *s = find_state(device);
    lm_status st = LM_OK;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s) {
            st = nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory for the device's op state");
        } else if ((st = lm_device_add_close_callback(device, on_device_close, NULL))) {
            free(s);
            st = nn_fail_call(st, op);
        } else {
            s->device = device;
            s->next = states;
            states = s;
        }
    }
    pthread_mutex_unlock(&states_mutex);
    return st;
}

/* ---- keys ---- */

void nn_key_init(nn_key *key, const char *op) {
    key->len = 0;
    key->overflow = false;
    nn_key_add(key, op, strlen(op) + 1);
}

void nn_key_add(nn_key *key, const void *data, size_t size) {
    if (size > NN_KEY_MAX - key->len) {
        key->overflow = true;
        return;
    }
    memcpy(key->bytes + key->len, data, size);
    key->len += size;
}

void nn_key_u32(nn_key *key, uint32_t value) {
    nn_key_add(key, &value, sizeof value);
}

void nn_key_f64(nn_key *key, double value) {
    nn_key_add(key, &value, sizeof value);
}

void nn_key_tensor(nn_key *key, const nn_tensor *t) {
    nn_key_u32(key, t->shape.rank);
    nn_key_add(key, t->shape.dims, t->shape.rank * sizeof t->shape.dims[0]);
    nn_key_u32(key, (uint32_t)t->dtype);
    nn_key_u32(key, (uint32_t)t->layout);
    nn_key_u32(key, (uint32_t)t->memory.type);
    nn_key_u32(key, (uint32_t)t->memory.layout);
    if (nn_memory_is_sharded(&t->memory)) {
        const lmnn_shard_spec *s = &t->memory.shard;
        nn_key_u32(key, s->height);
        nn_key_u32(key, s->width);
        nn_key_u32(key, (uint32_t)s->orientation);
        nn_key_u32(key, s->grid.count);
        nn_key_add(key, s->grid.ranges, s->grid.count * sizeof s->grid.ranges[0]);
    }
}

/* ---- lookup ---- */

nn_program *nn_cache_find(lm_device *device, const nn_key *key) {
    uint64_t h = hash64(key->bytes, key->len, 0);
    nn_program *found = NULL;
    pthread_mutex_lock(&states_mutex);
    device_state *s = find_state(device);
    for (size_t i = 0; s && i < s->count && !found; i++) {
        cache_entry *e = &s->entries[i];
        if (e->hash == h && e->key_len == key->len && !memcmp(e->key, key->bytes, key->len))
            found = &e->program;
    }
    if (s) {
        if (found)
            s->hits++;
        else
            s->misses++;
    }
    pthread_mutex_unlock(&states_mutex);
    return found;
}

lm_status nn_cache_add(const char *op, lm_device *device, const nn_key *key, nn_program *program,
                       nn_program **out) {
    if (key->overflow) {
        nn_program_discard(program);
        return nn_fail(LM_ERR_INTERNAL, op, "program cache key longer than %d bytes", NN_KEY_MAX);
    }
    lm_status st = nn_state_attach(op, device);
    if (st) {
        nn_program_discard(program);
        return st;
    }
    uint8_t *copy = malloc(key->len);
    pthread_mutex_lock(&states_mutex);
    device_state *s = find_state(device);
    if (copy && s->count == s->capacity) {
        size_t cap = s->capacity ? s->capacity * 2 : 16;
        cache_entry *grown = realloc(s->entries, cap * sizeof *grown);
        if (grown) {
            s->entries = grown;
            s->capacity = cap;
        }
    }
    if (!copy || s->count == s->capacity) {
        pthread_mutex_unlock(&states_mutex);
        free(copy);
        nn_program_discard(program);
        return nn_fail(LM_ERR_OUT_OF_HOST_MEMORY, op, "no memory for the program cache");
    }
    memcpy(copy, key->bytes, key->len);
    cache_entry *e = &s->entries[s->count++];
    *e = (cache_entry){hash64(key->bytes, key->len, 0), key->len, copy, *program};
    /* Entries never move while the device lives except when the array grows,
     * which only happens here, before the caller uses *out. */
    *out = &e->program;
    pthread_mutex_unlock(&states_mutex);
    return LM_OK;
}

lm_status lmnn_program_cache_get_stats(lm_device *device, lmnn_program_cache_stats *out_stats) {
    const char *op = "lmnn_program_cache_get_stats";
    if (!device) return nn_fail(LM_ERR_INVALID_HANDLE, op, "device is NULL");
    if (!out_stats) return nn_fail(LM_ERR_INVALID_ARGUMENT, op, "out_stats is NULL");
    pthread_mutex_lock(&states_mutex);
    device_state *s = find_state(device);
    *out_stats = s ? (lmnn_program_cache_stats){s->hits, s->misses, s->count}
                   : (lmnn_program_cache_stats){0, 0, 0};
    pthread_mutex_unlock(&states_mutex);
    return LM_OK;
}

lm_status lmnn_program_cache_clear(lm_device *device) {
    if (!device)
        return nn_fail(LM_ERR_INVALID_HANDLE, "lmnn_program_cache_clear", "device is NULL");
    pthread_mutex_lock(&states_mutex);
    device_state *s = find_state(device);
    if (s) release_entries(s);
    pthread_mutex_unlock(&states_mutex);
    return LM_OK;
}

nn_program *nn_cache_entry(lm_device *device, size_t index) {
    nn_program *found = NULL;
    pthread_mutex_lock(&states_mutex);
    device_state *s = find_state(device);
    if (s && index < s->count) found = &s->entries[index].program;
    pthread_mutex_unlock(&states_mutex);
    return found;
}
