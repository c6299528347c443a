#include "runtime/profile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/hash.h"

struct rt_profile {
    pthread_mutex_t mutex; /* everything below but `current` and `enabled` */
    char **texts;          /* label id - 1 -> its text */
    uint32_t count, cap;   /* labels, and room in every per-id array (ids 0..cap) */
    uint32_t *slots;       /* open addressing by text hash: an id, or 0 */
    uint32_t slot_mask;
    /* Per id (0 = no label): launches and seconds since profiling was
     * enabled; `order` lists the ids launched, first launch first. */
    uint64_t *launches;
    double *seconds;
    uint32_t *order, ordered;
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
    free(p->launches);
    free(p->seconds);
    free(p->order);
    pthread_mutex_destroy(&p->mutex);
    free(p);
}

static uint32_t *slot_of(rt_profile *p, const char *text, size_t len) {
    uint32_t i = (uint32_t)hash64(text, len, 0) & p->slot_mask;
    for (;; i = (i + 1) & p->slot_mask) {
        uint32_t id = p->slots[i];
        if (id == 0 || strcmp(p->texts[id - 1], text) == 0) return &p->slots[i];
    }
}

/* Room for one more label: the per-id arrays and a hash index kept at most
 * half full. Called locked. */
static lm_status grow(rt_profile *p) {
    if (p->count == RT_PROFILE_MAX_LABELS)
        return err_set(LM_ERR_INVALID_ARGUMENT, "more than %u distinct launch labels",
                       RT_PROFILE_MAX_LABELS);
    if (p->count < p->cap) return LM_OK;
    uint32_t cap = p->cap ? p->cap * 2 : 64;
    char **texts = realloc(p->texts, cap * sizeof *texts);
    if (texts) p->texts = texts;
    uint64_t *launches = texts ? realloc(p->launches, (cap + 1) * sizeof *launches) : NULL;
    if (launches) p->launches = launches;
    double *seconds = launches ? realloc(p->seconds, (cap + 1) * sizeof *seconds) : NULL;
    if (seconds) p->seconds = seconds;
    uint32_t *order = seconds ? realloc(p->order, (cap + 1) * sizeof *order) : NULL;
    if (order) p->order = order;
    uint32_t *slots = order ? calloc((size_t)cap * 2, sizeof *slots) : NULL;
    if (!slots) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory for launch labels");
    /* The measurements of the new ids start at zero. */
    uint32_t from = p->cap ? p->cap + 1 : 0;
    memset(p->launches + from, 0, (cap + 1 - from) * sizeof *p->launches);
    memset(p->seconds + from, 0, (cap + 1 - from) * sizeof *p->seconds);
    free(p->slots);
    p->slots = slots;
    p->slot_mask = cap * 2 - 1;
    p->cap = cap;
    for (uint32_t id = 1; id <= p->count; id++)
        *slot_of(p, p->texts[id - 1], strlen(p->texts[id - 1])) = id;
    return LM_OK;
}

lm_status rt_profile_set_label(rt_profile *p, const char *label) {
    if (!label || !*label) {
        atomic_store(&p->current, 0);
        return LM_OK;
    }
    size_t len = strlen(label);
    pthread_mutex_lock(&p->mutex);
    uint32_t id = p->cap ? *slot_of(p, label, len) : 0;
    lm_status st = LM_OK;
    if (id == 0 && !(st = grow(p))) {
        char *text = malloc(len + 1);
        if (!text) {
            st = err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory for launch labels");
        } else {
            memcpy(text, label, len + 1);
            p->texts[p->count++] = text;
            id = p->count;
            *slot_of(p, label, len) = id;
        }
    }
    if (!st) atomic_store(&p->current, id);
    pthread_mutex_unlock(&p->mutex);
    return st;
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

bool rt_profile_enabled(const rt_profile *p) {
    return atomic_load(&((rt_profile *)p)->enabled);
}

void rt_profile_set_enabled(rt_profile *p, bool enable) {
    pthread_mutex_lock(&p->mutex);
    if (enable) {
        for (uint32_t i = 0; i < p->ordered; i++) {
            p->launches[p->order[i]] = 0;
            p->seconds[p->order[i]] = 0;
        }
        p->ordered = 0;
    }
    atomic_store(&p->enabled, enable);
    pthread_mutex_unlock(&p->mutex);
}

void rt_profile_add(rt_profile *p, uint32_t id, double seconds) {
    pthread_mutex_lock(&p->mutex);
    /* The arrays exist once a label does; launches with none before that
     * have nowhere to go until then, so make room for id 0 now. */
    if (p->cap == 0 && grow(p)) {
        pthread_mutex_unlock(&p->mutex);
        return; /* out of memory: the launch goes unmeasured */
    }
    if (p->launches[id]++ == 0) p->order[p->ordered++] = id;
    p->seconds[id] += seconds;
    pthread_mutex_unlock(&p->mutex);
}

lm_status rt_profile_copy(rt_profile *p, lm_profile_entry **out_entries, size_t *out_count) {
    pthread_mutex_lock(&p->mutex);
    size_t n = p->ordered, bytes = n * sizeof(lm_profile_entry);
    for (uint32_t i = 0; i < n; i++)
        bytes += p->order[i] ? strlen(p->texts[p->order[i] - 1]) + 1 : 1;
    lm_profile_entry *e = n ? malloc(bytes) : NULL;
    if (n && !e) {
        pthread_mutex_unlock(&p->mutex);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    /* The texts follow the entries in the same allocation. */
    char *text = (char *)(e + n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = p->order[i];
        const char *src = id ? p->texts[id - 1] : "";
        size_t len = strlen(src) + 1;
        memcpy(text, src, len);
        e[i] = (lm_profile_entry){text, p->launches[id], p->seconds[id]};
        text += len;
    }
    pthread_mutex_unlock(&p->mutex);
    *out_entries = e;
    *out_count = n;
    return LM_OK;
}
