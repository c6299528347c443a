/* The kernel image cache (contract in rv_image_cache.h): a small array
 * searched by hash, the ELF's bytes kept to compare, so equal hashes of
 * different kernels never share an image. */
#include "sim/rv32/rv_image_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hash.h"

typedef struct cache_entry {
    uint64_t hash;
    void *elf; /* a copy of the bytes the image came from */
    size_t size;
    rv_image *image;
    uint32_t refs;
    uint64_t used; /* the cache's clock at the last get */
} cache_entry;

struct rv_image_cache {
    pthread_mutex_t mutex;
    cache_entry *entries;
    uint32_t count, cap, keep;
    uint64_t clock;
};

lm_status rv_image_cache_create(uint32_t keep, rv_image_cache **out_cache) {
    rv_image_cache *c = calloc(1, sizeof *c);
    if (!c) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    pthread_mutex_init(&c->mutex, NULL);
    c->keep = keep;
    *out_cache = c;
    return LM_OK;
}

static void entry_free(cache_entry *e) {
    rv_image_free(e->image);
    free(e->elf);
}

void rv_image_cache_destroy(rv_image_cache *cache) {
    if (!cache) return;
    for (uint32_t i = 0; i < cache->count; i++)
        entry_free(&cache->entries[i]);
    free(cache->entries);
    pthread_mutex_destroy(&cache->mutex);
    free(cache);
}

/* Drops the least recently used images nothing holds while more than
 * `keep` are unheld. Called locked. */
static void trim(rv_image_cache *c) {
    for (;;) {
        uint32_t unheld = 0, oldest = UINT32_MAX;
        for (uint32_t i = 0; i < c->count; i++) {
            if (c->entries[i].refs) continue;
            unheld++;
            if (oldest == UINT32_MAX || c->entries[i].used < c->entries[oldest].used) oldest = i;
        }
        if (unheld <= c->keep) return;
        entry_free(&c->entries[oldest]);
        c->entries[oldest] = c->entries[--c->count];
    }
}

lm_status rv_image_cache_get(rv_image_cache *cache, const void *elf, size_t size, uint64_t hash,
                             const rv_image **out_image, const void **out_elf) {
    uint64_t h = hash ? hash : hash64(elf, size, 0);
    pthread_mutex_lock(&cache->mutex);
    for (uint32_t i = 0; i < cache->count; i++) {
        cache_entry *e = &cache->entries[i];
        if (e->hash == h && e->size == size && !memcmp(e->elf, elf, size)) {
            e->refs++;
            e->used = ++cache->clock;
            *out_image = e->image;
            if (out_elf) *out_elf = e->elf;
            pthread_mutex_unlock(&cache->mutex);
            return LM_OK;
        }
    }
    pthread_mutex_unlock(&cache->mutex);
    /* Decoded unlocked (it is the slow part); a racing get of the same ELF
     * may cache a second copy, which is only memory. Kept under the bytes'
     * own hash: a caller's wrong one must not hide them from later gets. */
    if (hash) h = hash64(elf, size, 0);
    rv_image *image;
    lm_status st = rv_image_load(elf, size, &image);
    if (st) return st;
    void *copy = malloc(size ? size : 1);
    if (!copy) {
        rv_image_free(image);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    memcpy(copy, elf, size);
    pthread_mutex_lock(&cache->mutex);
    if (cache->count == cache->cap) {
        uint32_t cap = cache->cap ? cache->cap * 2 : 32;
        cache_entry *grown = realloc(cache->entries, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&cache->mutex);
            rv_image_free(image);
            free(copy);
            return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
        }
        cache->entries = grown;
        cache->cap = cap;
    }
    cache->entries[cache->count++] = (cache_entry){h, copy, size, image, 1, ++cache->clock};
    pthread_mutex_unlock(&cache->mutex);
    *out_image = image;
    if (out_elf) *out_elf = copy;
    return LM_OK;
}

void rv_image_cache_hold(rv_image_cache *cache, const rv_image *image) {
    pthread_mutex_lock(&cache->mutex);
    for (uint32_t i = 0; i < cache->count; i++) {
        if (cache->entries[i].image != image) continue;
        cache->entries[i].refs++;
        cache->entries[i].used = ++cache->clock;
        break;
    }
    pthread_mutex_unlock(&cache->mutex);
}

void rv_image_cache_put(rv_image_cache *cache, const rv_image *image) {
    if (!image) return;
    pthread_mutex_lock(&cache->mutex);
    for (uint32_t i = 0; i < cache->count; i++) {
        if (cache->entries[i].image != image) continue;
        if (cache->entries[i].refs) cache->entries[i].refs--;
        break;
    }
    trim(cache);
    pthread_mutex_unlock(&cache->mutex);
}
