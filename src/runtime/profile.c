#include "runtime/profile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/text.h"

/* What one program did under one label since profiling was enabled. */
typedef struct profile_cell {
    uint32_t label, program; /* text ids (label 0: none) */
    uint64_t launches, instructions;
    double seconds;
} profile_cell;

struct rt_profile {
    pthread_mutex_t mutex; /* everything below but `current` and `enabled` */
    /* Interned texts, labels and program names alike: id - 1 -> text. */
    char **texts;
    uint32_t count, cap, labels; /* texts, room for them, how many are labels */
    uint32_t *slots;             /* open addressing by text hash: an id, or 0 */
    uint32_t slot_mask;
    /* The measurements: one cell per (label, program) launched, first launch
     * first, and an index of the cells by pair (a cell's position + 1). */
    profile_cell *cells;
    uint32_t cell_count, cell_cap;
    uint32_t *cell_slots;
    uint32_t cell_mask;
    _Atomic uint32_t current;
    _Atomic bool enabled;
};

double rt_profile_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

lm_status rt_profile_create(rt_profile **out_profile) {
    rt_profile *p = calloc(1, sizeof *p);
    if (!p) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    pthread_mutex_init(&p->mutex, NULL);
    atomic_init(&p->current, 0);
    atomic_init(&p->enabled, false);
    *out_profile = p;
    return LM_OK;
}

void rt_profile_destroy(rt_profile *p) {
    if (!p) return;
    for (uint32_t i = 0; i < p->count; i++)
        free(p->texts[i]);
    free(p->texts);
    free(p->slots);
    free(p->cells);
    free(p->cell_slots);
    pthread_mutex_destroy(&p->mutex);
    free(p);
}

/* ---- interned texts ---- */

static uint32_t *slot_of(rt_profile *p, const char *text, size_t len) {
    uint32_t i = (uint32_t)hash64(text, len, 0) & p->slot_mask;
    for (;; i = (i + 1) & p->slot_mask) {
        uint32_t id = p->slots[i];
        if (id == 0 || strcmp(p->texts[id - 1], text) == 0) return &p->slots[i];
    }
}

/* Room for one more text, with a hash index kept at most half full. */
static lm_status grow_texts(rt_profile *p) {
    if (p->count < p->cap) return LM_OK;
    uint32_t cap = p->cap ? p->cap * 2 : 64;
    char **texts = realloc(p->texts, cap * sizeof *texts);
    if (texts) p->texts = texts;
    uint32_t *slots = texts ? calloc((size_t)cap * 2, sizeof *slots) : NULL;
    if (!slots) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory for launch labels");
    free(p->slots);
    p->slots = slots;
    p->slot_mask = cap * 2 - 1;
    p->cap = cap;
    for (uint32_t id = 1; id <= p->count; id++)
        *slot_of(p, p->texts[id - 1], strlen(p->texts[id - 1])) = id;
    return LM_OK;
}

/* The id of `text` (not empty), interned if new. Called locked. */
static lm_status intern(rt_profile *p, const char *text, bool label, uint32_t *out_id) {
    size_t len = strlen(text);
    uint32_t id = p->cap ? *slot_of(p, text, len) : 0;
    if (id) {
        *out_id = id;
        return LM_OK;
    }
    if (label && p->labels == RT_PROFILE_MAX_LABELS)
        return err_set(LM_ERR_INVALID_ARGUMENT, "more than %u distinct launch labels",
                       RT_PROFILE_MAX_LABELS);
    lm_status st = grow_texts(p);
    if (st) return st;
    char *copy = malloc(len + 1);
    if (!copy) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory for launch labels");
    memcpy(copy, text, len + 1);
    p->texts[p->count++] = copy;
    p->labels += label;
    *slot_of(p, copy, len) = p->count;
    *out_id = p->count;
    return LM_OK;
}

lm_status rt_profile_set_label(rt_profile *p, const char *label) {
    if (!label || !*label) {
        atomic_store(&p->current, 0);
        return LM_OK;
    }
    pthread_mutex_lock(&p->mutex);
    uint32_t id = 0;
    lm_status st = intern(p, label, true, &id);
    if (!st) atomic_store(&p->current, id);
    pthread_mutex_unlock(&p->mutex);
    return st;
}

uint32_t rt_profile_program(rt_profile *p, const char *name) {
    /* Cut to a label's length and made printable: a kernel may be named by
     * any path. */
    char text[LM_MAX_LAUNCH_LABEL + 1];
    snprintf(text, sizeof text, "%s", name && *name ? name : "(unnamed)");
    text_clean(text);
    pthread_mutex_lock(&p->mutex);
    uint32_t id = 0;
    if (intern(p, text, false, &id)) id = 0; /* out of memory: counted as unnamed */
    pthread_mutex_unlock(&p->mutex);
    return id;
}

uint32_t rt_profile_current(const rt_profile *p) {
    return atomic_load(&((rt_profile *)p)->current);
}

const char *rt_profile_text(rt_profile *p, uint32_t id) {
    if (id == 0) return NULL;
    pthread_mutex_lock(&p->mutex);
    const char *text = id <= p->count ? p->texts[id - 1] : NULL;
    pthread_mutex_unlock(&p->mutex);
    return text;
}

/* ---- measurements ---- */

bool rt_profile_enabled(const rt_profile *p) {
    return atomic_load(&((rt_profile *)p)->enabled);
}

void rt_profile_set_enabled(rt_profile *p, bool enable) {
    pthread_mutex_lock(&p->mutex);
    if (enable && p->cell_count) {
        p->cell_count = 0;
        memset(p->cell_slots, 0, ((size_t)p->cell_mask + 1) * sizeof *p->cell_slots);
    }
    atomic_store(&p->enabled, enable);
    pthread_mutex_unlock(&p->mutex);
}

static uint32_t *cell_slot(rt_profile *p, uint32_t label, uint32_t program) {
    uint64_t key = (uint64_t)label << 32 | program;
    uint32_t i = (uint32_t)hash64(&key, sizeof key, 0) & p->cell_mask;
    for (;; i = (i + 1) & p->cell_mask) {
        uint32_t at = p->cell_slots[i];
        if (at == 0 || (p->cells[at - 1].label == label && p->cells[at - 1].program == program))
            return &p->cell_slots[i];
    }
}

/* Room for one more cell, the index at most half full. Called locked. */
static bool grow_cells(rt_profile *p) {
    if (p->cell_count < p->cell_cap) return true;
    uint32_t cap = p->cell_cap ? p->cell_cap * 2 : 64;
    profile_cell *cells = realloc(p->cells, cap * sizeof *cells);
    if (cells) p->cells = cells;
    uint32_t *slots = cells ? calloc((size_t)cap * 2, sizeof *slots) : NULL;
    if (!slots) return false;
    free(p->cell_slots);
    p->cell_slots = slots;
    p->cell_mask = cap * 2 - 1;
    p->cell_cap = cap;
    for (uint32_t i = 0; i < p->cell_count; i++)
        *cell_slot(p, p->cells[i].label, p->cells[i].program) = i + 1;
    return true;
}

void rt_profile_add(rt_profile *p, uint32_t label, uint32_t program, double seconds,
                    uint64_t instructions) {
    pthread_mutex_lock(&p->mutex);
    uint32_t *slot = p->cell_cap ? cell_slot(p, label, program) : NULL;
    if (!slot || !*slot) {
        /* Out of memory: the launch goes unmeasured. */
        if (!grow_cells(p)) goto done;
        p->cells[p->cell_count] = (profile_cell){label, program, 0, 0, 0};
        slot = cell_slot(p, label, program);
        *slot = ++p->cell_count;
    }
    profile_cell *c = &p->cells[*slot - 1];
    c->launches++;
    c->instructions += instructions;
    c->seconds += seconds;
done:
    pthread_mutex_unlock(&p->mutex);
}

static const char *text_or_empty(const rt_profile *p, uint32_t id) {
    return id ? p->texts[id - 1] : "";
}

/* Copies `src` to *to and moves *to past it. */
static const char *put_text(char **to, const char *src) {
    size_t len = strlen(src) + 1;
    char *at = memcpy(*to, src, len);
    *to += len;
    return at;
}

lm_status rt_profile_copy(rt_profile *p, lm_profile_entry **out_entries, size_t *out_count) {
    pthread_mutex_lock(&p->mutex);
    /* One entry per label, in order of its first cell: first[id] is its
     * entry + 1. The texts follow the entries in the same allocation. */
    uint32_t *first = p->cell_count ? calloc((size_t)p->count + 1, sizeof *first) : NULL;
    size_t n = 0, bytes = 0;
    for (uint32_t i = 0; first && i < p->cell_count; i++) {
        uint32_t id = p->cells[i].label;
        if (first[id]) continue;
        first[id] = (uint32_t)++n;
        bytes += strlen(text_or_empty(p, id)) + 1;
    }
    lm_profile_entry *e = n ? calloc(1, n * sizeof *e + bytes) : NULL;
    if (p->cell_count && !e) {
        pthread_mutex_unlock(&p->mutex);
        free(first);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    char *text = (char *)(e + n);
    for (uint32_t i = 0; i < p->cell_count; i++) {
        const profile_cell *c = &p->cells[i];
        lm_profile_entry *to = &e[first[c->label] - 1];
        if (!to->label) to->label = put_text(&text, text_or_empty(p, c->label));
        to->launches += c->launches;
        to->seconds += c->seconds;
        to->instructions += c->instructions;
    }
    pthread_mutex_unlock(&p->mutex);
    free(first);
    *out_entries = e;
    *out_count = n;
    return LM_OK;
}

lm_status rt_profile_copy_programs(rt_profile *p, lm_profile_program_entry **out_entries,
                                   size_t *out_count) {
    pthread_mutex_lock(&p->mutex);
    size_t n = p->cell_count, bytes = 0;
    for (uint32_t i = 0; i < n; i++)
        bytes += strlen(text_or_empty(p, p->cells[i].label)) +
                 strlen(text_or_empty(p, p->cells[i].program)) + 2;
    lm_profile_program_entry *e = n ? malloc(n * sizeof *e + bytes) : NULL;
    if (n && !e) {
        pthread_mutex_unlock(&p->mutex);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    char *text = (char *)(e + n);
    for (uint32_t i = 0; i < n; i++) {
        const profile_cell *c = &p->cells[i];
        const char *label = put_text(&text, text_or_empty(p, c->label));
        const char *program = put_text(&text, text_or_empty(p, c->program));
        e[i] = (lm_profile_program_entry){label, program, c->launches, c->seconds, c->instructions};
    }
    pthread_mutex_unlock(&p->mutex);
    *out_entries = e;
    *out_count = n;
    return LM_OK;
}
