#include "base/idmap.h"

#include <stdlib.h>

/* Mixed so that keys differing only in high bits (handle generations, type
 * tags) or in low bits (dense ids) spread over the table alike. */
static size_t slot_of(const idmap *m, uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (m->capacity - 1);
}

/* The slot holding `key`, or the empty slot where it would go. */
static size_t probe(const idmap *m, uint64_t key) {
    size_t mask = m->capacity - 1, i = slot_of(m, key);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

uint64_t *idmap_find(const idmap *m, uint64_t key) {
    if (!m->capacity || !key) return NULL;
    size_t i = probe(m, key);
    return m->keys[i] ? &m->values[i] : NULL;
}

static bool grow(idmap *m) {
    size_t cap = m->capacity ? m->capacity * 2 : 16;
    idmap g = {calloc(cap, sizeof *g.keys), malloc(cap * sizeof *g.values), 0, cap};
    if (!g.keys || !g.values) {
        idmap_free(&g);
        return false;
    }
    for (size_t k = 0; k < m->capacity; k++) {
        if (!m->keys[k]) continue;
        size_t s = probe(&g, m->keys[k]);
        g.keys[s] = m->keys[k];
        g.values[s] = m->values[k];
        g.count++;
    }
    idmap_free(m);
    *m = g;
    return true;
}

bool idmap_put(idmap *m, uint64_t key, uint64_t value) {
    if ((m->count + 1) * 2 > m->capacity && !grow(m)) return false;
    size_t i = probe(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->count++;
    }
    m->values[i] = value;
    return true;
}

bool idmap_remove(idmap *m, uint64_t key) {
    if (!m->capacity || !key) return false;
    size_t mask = m->capacity - 1, hole = probe(m, key);
    if (!m->keys[hole]) return false;
    /* Shift back every later entry of the run that the hole would cut off
     * from its home slot. */
    for (size_t j = (hole + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        size_t home = slot_of(m, m->keys[j]);
        bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (!movable) continue;
        m->keys[hole] = m->keys[j];
        m->values[hole] = m->values[j];
        hole = j;
    }
    m->keys[hole] = 0;
    m->count--;
    return true;
}

bool idmap_next(const idmap *m, size_t *cursor, uint64_t *out_key, uint64_t *out_value) {
    for (size_t i = *cursor; i < m->capacity; i++)
        if (m->keys[i]) {
            *out_key = m->keys[i];
            *out_value = m->values[i];
            *cursor = i + 1;
            return true;
        }
    *cursor = m->capacity;
    return false;
}

void idmap_free(idmap *m) {
    free(m->keys);
    free(m->values);
    *m = (idmap)IDMAP_INIT;
}
