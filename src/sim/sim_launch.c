/* MAP_ANONYMOUS and MAP_NORESERVE are outside POSIX 2008. */
#define _DEFAULT_SOURCE 1

#include "sim/sim_launch.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/error.h"
#include "lm_kernel_abi.h"
#include "sim/kernel_map.h"
#include "sim/rv32/rv_hart.h"
#include "sim/sim_cb.h"
#include "sim/sim_compute.h"

/* Instructions a hart runs before its core's other harts get a turn. */
#define SLICE 20000u
#define LINE_MAX_LEN 256
#define WAIT_MAX_LEN 160

/* What a blocked hart waits on, kept as numbers: a hart blocks thousands of
 * times per launch and the text is only needed to describe a deadlock. */
enum wait_kind { WAIT_NONE, WAIT_CB_RESERVE, WAIT_CB_FRONT, WAIT_SEM, WAIT_SEM_MIN };
typedef struct hart_wait {
    enum wait_kind kind;
    uint32_t a, b, c, d;
} hart_wait;

/* READY: can run, claimed by the thread that moves it to RUNNING; RUNNING:
 * a thread runs it, and only that thread changes its state; PARKED: every
 * hart blocked, until wake() makes it READY; DONE. */
enum core_state { CORE_READY, CORE_RUNNING, CORE_PARKED, CORE_DONE };

typedef struct sim_core sim_core;
typedef struct launch launch;

typedef struct hart_slot {
    rv_hart hart;
    bool present, done;
    uint32_t processor;
    const char *name;
    sim_core *core;
    hart_wait wait;          /* what a blocked hart waits on */
    char line[LINE_MAX_LEN]; /* print line being assembled */
    size_t line_len;
    uint32_t warned_pc[8]; /* pcs already warned about in this launch */
    uint32_t warned;
} hart_slot;

struct sim_core {
    uint32_t index, x, y;
    uint8_t *l1;
    hart_slot harts[LM_NUM_PROCESSORS];
    sim_cb cbs[LM_MAX_CBS];
    sim_compute *compute; /* when the core runs a compute kernel */
    atomic_int state;
    atomic_uint wakes; /* bumped by every write another core makes into this L1 */
    launch *launch;
};

struct launch {
    const sim_launch_desc *desc;
    sim_memory *memory;
    sim_core *cores;
    sim_core **by_index; /* core index -> its sim_core, NULL when idle */
    uint32_t threads;
    pthread_mutex_t mutex;
    pthread_cond_t changed;
    uint32_t idle, active; /* threads in the launch (each counts itself in), and asleep */
    /* Counts the cores that became ready or done: a thread with nothing to
     * run polls it (when the pool polls) before it sleeps on `changed`. */
    atomic_uint events;
    bool poll;
    atomic_bool abort;
    sim_unpacked *caches; /* the launcher's, SIM_UNPACK_CACHE per thread */
    lm_status status;
    char message[ERR_MESSAGE_MAX];
};

struct sim_launcher {
    sim_memory *memory;
    sim_pool *pool;
    uint8_t *locals; /* hart-private memories, lazily committed */
    size_t locals_size;
    rv_local *local_states; /* one per hart-private memory: what may be dirty */
    sim_compute *computes;  /* one compute engine per core, lazily committed */
    size_t computes_size;
    sim_unpacked *caches; /* SIM_UNPACK_CACHE unpacked tiles per pool thread */
};

const char *sim_processor_name(uint32_t processor) {
    static const char *const names[] = {"DM0", "DM1", "COMPUTE"};
    return processor < LM_NUM_PROCESSORS ? names[processor] : "?";
}

lm_status sim_launcher_create(sim_memory *memory, sim_pool *pool, sim_launcher **out_launcher) {
    sim_launcher *l = calloc(1, sizeof *l);
    if (!l) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    l->memory = memory;
    l->pool = pool;
    l->locals_size = (size_t)memory->num_cores * LM_NUM_PROCESSORS * KMAP_LOCAL_SIZE;
    void *p = mmap(NULL, l->locals_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        free(l);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "cannot reserve hart-private memory");
    }
    l->locals = p;
    l->computes_size = (size_t)memory->num_cores * sizeof(sim_compute);
    p = mmap(NULL, l->computes_size, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        munmap(l->locals, l->locals_size);
        free(l);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "cannot reserve compute engine state");
    }
    l->computes = p;
    size_t entries = (size_t)sim_pool_threads(pool) * SIM_UNPACK_CACHE;
    l->caches = aligned_alloc(_Alignof(sim_unpacked), entries * sizeof *l->caches);
    if (!l->caches) {
        sim_launcher_destroy(l);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    for (size_t i = 0; i < entries; i++)
        l->caches[i].epoch = 0;
    size_t harts = (size_t)memory->num_cores * LM_NUM_PROCESSORS;
    l->local_states = calloc(harts, sizeof *l->local_states);
    if (!l->local_states) {
        sim_launcher_destroy(l);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    }
    for (size_t i = 0; i < harts; i++) /* fresh anonymous memory reads as zeros */
        rv_local_init(&l->local_states[i], l->locals + i * KMAP_LOCAL_SIZE, true);
    *out_launcher = l;
    return LM_OK;
}

void sim_launcher_destroy(sim_launcher *l) {
    if (!l) return;
    munmap(l->locals, l->locals_size);
    munmap(l->computes, l->computes_size);
    free(l->caches);
    free(l->local_states);
    free(l);
}

/* ---- failures ---- */

static void fail_launch(launch *ln, lm_status st, const char *fmt, ...) ERR_PRINTF(3, 4);
static rv_ecall_result bad_call(rv_hart *h, const char *fmt, ...) ERR_PRINTF(2, 3);

/* Records the launch's first failure and stops every thread. */
static void fail_launch(launch *ln, lm_status st, const char *fmt, ...) {
    pthread_mutex_lock(&ln->mutex);
    if (ln->status == LM_OK) {
        ln->status = st;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ln->message, sizeof ln->message, fmt, ap);
        va_end(ap);
    }
    atomic_store(&ln->abort, true);
    pthread_cond_broadcast(&ln->changed);
    pthread_mutex_unlock(&ln->mutex);
}

static void fail_hart(hart_slot *hs, const char *what) {
    sim_core *c = hs->core;
    fail_launch(c->launch, LM_ERR_DEVICE_FAULT, "core (%u,%u) %s kernel '%s': %s", c->x, c->y,
                sim_processor_name(hs->processor), hs->name, what);
}

/* An ecall the kernel got wrong: the hart faults with this detail. */
static rv_ecall_result bad_call(rv_hart *h, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->fault.detail, sizeof h->fault.detail, fmt, ap);
    va_end(ap);
    return RV_ECALL_FAULT;
}

static rv_ecall_result block(hart_slot *hs, enum wait_kind kind, uint32_t a, uint32_t b, uint32_t c,
                             uint32_t d) {
    hs->wait = (hart_wait){kind, a, b, c, d};
    return RV_ECALL_BLOCK;
}

/* The text of a hart's wait, for a deadlock's description. */
static const char *wait_text(const hart_wait *w, char *buf, size_t size) {
    switch (w->kind) {
    case WAIT_CB_RESERVE:
        snprintf(buf, size, "cb_reserve_back(cb %u, %u pages): %u of %u pages free", w->a, w->b,
                 w->c, w->d);
        return buf;
    case WAIT_CB_FRONT:
        snprintf(buf, size, "cb_wait_front(cb %u, %u pages): %u pages available", w->a, w->b, w->c);
        return buf;
    case WAIT_SEM:
    case WAIT_SEM_MIN:
        snprintf(buf, size, "%s(0x%x, %u): semaphore is %u",
                 w->kind == WAIT_SEM ? "noc_semaphore_wait" : "noc_semaphore_wait_min", w->a, w->b,
                 w->c);
        return buf;
    case WAIT_NONE:
        break;
    }
    return "(running)";
}

/* ---- memory seen by a hart ---- */

/* Host pointer for [addr, addr + size) of a hart's memory, or NULL. */
static uint8_t *guest_ptr(rv_hart *h, uint32_t addr, uint32_t size, bool write) {
    if (addr < h->l1_size && size <= h->l1_size - addr) return h->l1 + addr;
    if (addr >= KMAP_LOCAL_BASE && addr - KMAP_LOCAL_BASE < KMAP_LOCAL_SIZE &&
        size <= KMAP_LOCAL_SIZE - (addr - KMAP_LOCAL_BASE)) {
        if (write) rv_local_wrote(h->local_state, addr - KMAP_LOCAL_BASE, size);
        return h->local + (addr - KMAP_LOCAL_BASE);
    }
    if (!write && addr >= KMAP_CODE_BASE && addr - KMAP_CODE_BASE < h->image->code_size &&
        size <= h->image->code_size - (addr - KMAP_CODE_BASE))
        return (uint8_t *)h->image->code_bytes + (addr - KMAP_CODE_BASE);
    return NULL;
}

/* The core's own L1 only: CB and semaphore addresses must be there. */
static uint32_t *l1_word(rv_hart *h, uint32_t addr) {
    if (addr % 4 || addr >= h->l1_size || h->l1_size - addr < 4) return NULL;
    return (uint32_t *)(h->l1 + addr);
}

/* ---- the NoC ---- */

typedef struct noc_target {
    uint8_t *ptr;
    sim_core *core; /* a worker core taking part in the launch, to wake */
} noc_target;

static bool noc_resolve(launch *ln, uint64_t noc_addr, uint32_t size, noc_target *out, char *why,
                        size_t why_size) {
    const sim_geometry *g = &ln->memory->geometry;
    uint64_t local = noc_addr & ((1ull << LM_NOC_ADDR_BITS) - 1);
    uint32_t x = (uint32_t)(noc_addr >> LM_NOC_ADDR_BITS) & LM_NOC_COORD_MASK;
    uint32_t y = (uint32_t)(noc_addr >> (LM_NOC_ADDR_BITS + LM_NOC_COORD_BITS)) & LM_NOC_COORD_MASK;
    if (noc_addr >> 48) {
        snprintf(why, why_size, "NoC address 0x%llx has bits set above the unicast fields",
                 (unsigned long long)noc_addr);
        return false;
    }
    out->core = NULL;
    if (y == LM_NOC_DRAM_Y) {
        if (x >= g->dram_banks || local > g->dram_bank_size || size > g->dram_bank_size - local) {
            snprintf(why, why_size,
                     "NoC access of %u bytes at DRAM bank %u address 0x%llx is outside "
                     "DRAM (%u banks of %llu bytes)",
                     size, x, (unsigned long long)local, g->dram_banks,
                     (unsigned long long)g->dram_bank_size);
            return false;
        }
        out->ptr = sim_dram(ln->memory, x) + local;
        return true;
    }
    if (x >= g->grid_x || y >= g->grid_y || local > g->l1_size || size > g->l1_size - local) {
        snprintf(why, why_size,
                 "NoC access of %u bytes at core (%u,%u) address 0x%llx is outside "
                 "the %ux%u grid's L1",
                 size, x, y, (unsigned long long)local, g->grid_x, g->grid_y);
        return false;
    }
    uint32_t index = y * g->grid_x + x;
    out->ptr = sim_l1(ln->memory, index) + local;
    out->core = ln->by_index[index];
    return true;
}

/* Another core wrote into c's L1: if c is parked, it may be able to go on. */
static void wake(sim_core *self, sim_core *c) {
    if (!c || c == self) return;
    atomic_fetch_add(&c->wakes, 1);
    if (atomic_load(&c->state) != CORE_PARKED) return;
    launch *ln = c->launch;
    pthread_mutex_lock(&ln->mutex);
    int expected = CORE_PARKED;
    if (atomic_compare_exchange_strong(&c->state, &expected, CORE_READY)) {
        atomic_fetch_add(&ln->events, 1);
        pthread_cond_broadcast(&ln->changed);
    }
    pthread_mutex_unlock(&ln->mutex);
}

typedef struct mcast_rect {
    uint32_t x0, y0, x1, y1;
    uint32_t local;
} mcast_rect;

static bool mcast_decode(launch *ln, uint64_t a, uint32_t size, mcast_rect *r, char *why,
                         size_t why_size) {
    const sim_geometry *g = &ln->memory->geometry;
    r->local = (uint32_t)(a & ((1ull << LM_NOC_ADDR_BITS) - 1));
    r->x1 = (uint32_t)(a >> 36) & LM_NOC_COORD_MASK;
    r->y1 = (uint32_t)(a >> 42) & LM_NOC_COORD_MASK;
    r->x0 = (uint32_t)(a >> 48) & LM_NOC_COORD_MASK;
    r->y0 = (uint32_t)(a >> 54) & LM_NOC_COORD_MASK;
    if (a >> 60 || (a & ((1ull << LM_NOC_ADDR_BITS) - 1)) >> 32 || r->x0 > r->x1 || r->y0 > r->y1 ||
        r->x1 >= g->grid_x || r->y1 >= g->grid_y || r->local > g->l1_size ||
        size > g->l1_size - r->local) {
        snprintf(why, why_size,
                 "bad multicast address 0x%llx for %u bytes (rectangle (%u,%u)-(%u,%u) "
                 "in a %ux%u grid)",
                 (unsigned long long)a, size, r->x0, r->y0, r->x1, r->y1, g->grid_x, g->grid_y);
        return false;
    }
    return true;
}

static uint64_t arg64(const rv_hart *h, int lo) {
    return (uint64_t)h->x[lo + 1] << 32 | h->x[lo];
}

/* ---- circular buffers ---- */

static sim_cb *cb_get(hart_slot *hs, uint32_t cb, rv_ecall_result *bad) {
    if (cb >= LM_MAX_CBS || hs->core->cbs[cb].fifo_size == 0) {
        *bad = bad_call(&hs->hart, "circular buffer %u is not configured on this core", cb);
        return NULL;
    }
    return &hs->core->cbs[cb];
}

static void cb_advance(const sim_cb *c, uint32_t *ptr, uint32_t pages) {
    *ptr += pages * c->page_size;
    while (*ptr >= c->fifo_addr + c->fifo_size)
        *ptr -= c->fifo_size;
}

static rv_ecall_result do_cb(hart_slot *hs, uint32_t call) {
    rv_hart *h = &hs->hart;
    uint32_t id = h->x[10], pages = h->x[11];
    rv_ecall_result bad = RV_ECALL_FAULT;
    sim_cb *c = cb_get(hs, id, &bad);
    if (!c) return bad;
    uint32_t fill = sim_cb_fill(c), free_pages = c->num_pages - fill;
    bool counted = call != LM_ECALL_CB_WRITE_PTR && call != LM_ECALL_CB_READ_PTR;
    if (counted && pages > c->num_pages)
        return bad_call(h, "circular buffer %u: %u pages asked for, it holds only %u", id, pages,
                        c->num_pages);
    switch (call) {
    case LM_ECALL_CB_RESERVE_BACK:
        if (free_pages < pages)
            return block(hs, WAIT_CB_RESERVE, id, pages, free_pages, c->num_pages);
        if (pages > c->reserved) c->reserved = pages;
        return RV_ECALL_CONTINUE;
    case LM_ECALL_CB_PUSH_BACK:
        if (free_pages < pages)
            return bad_call(h,
                            "cb_push_back(cb %u, %u pages) with only %u pages free (missing "
                            "cb_reserve_back?)",
                            id, pages, free_pages);
        c->pushed += pages;
        c->reserved = c->reserved > pages ? c->reserved - pages : 0;
        c->packed = c->packed > pages ? c->packed - pages : 0;
        cb_advance(c, &c->wr_ptr, pages);
        return RV_ECALL_CONTINUE;
    case LM_ECALL_CB_WAIT_FRONT:
        if (fill < pages) return block(hs, WAIT_CB_FRONT, id, pages, fill, 0);
        if (pages > c->waited) c->waited = pages;
        return RV_ECALL_CONTINUE;
    case LM_ECALL_CB_POP_FRONT:
        if (fill < pages)
            return bad_call(h,
                            "cb_pop_front(cb %u, %u pages) with only %u pages available "
                            "(missing cb_wait_front?)",
                            id, pages, fill);
        c->popped += pages;
        c->waited = c->waited > pages ? c->waited - pages : 0;
        cb_advance(c, &c->rd_ptr, pages);
        return RV_ECALL_CONTINUE;
    case LM_ECALL_CB_WRITE_PTR:
        h->x[10] = c->wr_ptr;
        return RV_ECALL_CONTINUE;
    case LM_ECALL_CB_READ_PTR:
        h->x[10] = c->rd_ptr;
        return RV_ECALL_CONTINUE;
    case LM_ECALL_CB_PAGES_AVAILABLE:
        h->x[10] = fill >= pages;
        return RV_ECALL_CONTINUE;
    case LM_ECALL_CB_PAGES_FREE:
        h->x[10] = free_pages >= pages;
        return RV_ECALL_CONTINUE;
    }
    return bad_call(h, "unknown circular buffer call %u", call);
}

/* ---- printing ---- */

static void emit_line(hart_slot *hs) {
    launch *ln = hs->core->launch;
    hs->line[hs->line_len] = '\0';
    if (ln->desc->print)
        ln->desc->print(ln->desc->print_ctx, hs->core->x, hs->core->y, hs->processor, hs->line);
    hs->line_len = 0;
}

static void put_text(hart_slot *hs, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n' || hs->line_len == LINE_MAX_LEN - 1) emit_line(hs);
        if (s[i] != '\n') hs->line[hs->line_len++] = s[i];
    }
}

/* A tolerated protocol lapse, as one line through the print path: once per
 * pc and launch, at most for the first pcs of a kernel (a loop repeats it). */
static void warn(hart_slot *hs, const char *what) {
    uint32_t pc = hs->hart.pc;
    for (uint32_t i = 0; i < hs->warned; i++)
        if (hs->warned_pc[i] == pc) return;
    if (hs->warned == sizeof hs->warned_pc / sizeof hs->warned_pc[0]) return;
    hs->warned_pc[hs->warned++] = pc;
    launch *ln = hs->core->launch;
    if (!ln->desc->print) return;
    char line[2 * LINE_MAX_LEN];
    snprintf(line, sizeof line, "warning: kernel '%s' pc 0x%08x: %s", hs->name, pc, what);
    ln->desc->print(ln->desc->print_ctx, hs->core->x, hs->core->y, hs->processor, line);
}

/* Reads a NUL-terminated string of at most `max` bytes from hart memory. */
static bool guest_string(rv_hart *h, uint32_t addr, char *out, size_t max) {
    for (size_t i = 0; i < max; i++) {
        const uint8_t *p = guest_ptr(h, addr + (uint32_t)i, 1, false);
        if (!p) return false;
        out[i] = (char)*p;
        if (!*p) return true;
    }
    out[max - 1] = '\0';
    return true;
}

/* printf for kernels, formatted here from whitelisted conversions only: each
 * conversion spec handed to snprintf is rebuilt from flag, width and precision
 * characters and one known conversion letter, with an argument of the type
 * that letter takes, so a kernel's format string can never misuse snprintf. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static rv_ecall_result do_print(hart_slot *hs) {
    rv_hart *h = &hs->hart;
    char fmt[LINE_MAX_LEN];
    uint32_t nargs = h->x[12];
    if (!guest_string(h, h->x[10], fmt, sizeof fmt))
        return bad_call(h, "DPRINT format at 0x%x is outside the kernel's memory", h->x[10]);
    if (nargs > 16) return bad_call(h, "DPRINT with %u arguments (at most 16)", nargs);
    const uint8_t *args = guest_ptr(h, h->x[11], nargs * 4, false);
    if (nargs && !args) return bad_call(h, "DPRINT arguments at 0x%x are unreadable", h->x[11]);
    uint32_t used = 0;
    for (const char *p = fmt; *p;) {
        if (*p != '%') {
            const char *q = strchr(p, '%');
            size_t n = q ? (size_t)(q - p) : strlen(p);
            put_text(hs, p, n);
            p += n;
            continue;
        }
        char spec[16] = "%";
        size_t sl = 1;
        p++;
        while (*p && strchr("-+ 0#", *p) && sl < 6)
            spec[sl++] = *p++;
        while (*p >= '0' && *p <= '9' && sl < 10)
            spec[sl++] = *p++;
        if (*p == '.') {
            spec[sl++] = *p++;
            while (*p >= '0' && *p <= '9' && sl < 13)
                spec[sl++] = *p++;
        }
        char conv = *p ? *p++ : '\0';
        if (conv == '%') {
            put_text(hs, "%", 1);
            continue;
        }
        if (!strchr("diuxXcpfs", conv) || conv == '\0')
            return bad_call(h, "DPRINT format \"%s\": unsupported conversion '%%%c'", fmt,
                            conv ? conv : '?');
        if (used >= nargs)
            return bad_call(h, "DPRINT format \"%s\" wants more than its %u arguments", fmt, nargs);
        uint32_t v;
        memcpy(&v, args + 4 * used++, 4);
        char out[LINE_MAX_LEN], str[LINE_MAX_LEN];
        spec[sl++] = conv == 'p' ? 'x' : conv;
        spec[sl] = '\0';
        int n;
        switch (conv) {
        case 'd':
        case 'i':
            n = snprintf(out, sizeof out, spec, (int32_t)v);
            break;
        case 'f': {
            float f;
            memcpy(&f, &v, 4);
            n = snprintf(out, sizeof out, spec, (double)f);
            break;
        }
        case 's':
            if (!guest_string(h, v, str, sizeof str))
                return bad_call(h, "DPRINT %%s argument 0x%x is outside the kernel's memory", v);
            n = snprintf(out, sizeof out, spec, str);
            break;
        default:
            n = snprintf(out, sizeof out, spec, v);
            break;
        }
        if (n > 0) put_text(hs, out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1);
    }
    return RV_ECALL_CONTINUE;
}
#pragma GCC diagnostic pop

/* ---- semaphores and NoC ecalls ---- */

/* lm_noc_async_read_strided and lm_noc_async_write_strided: `count` moves
 * of `size` bytes between NoC address noc + i * noc_stride and L1 address
 * l1 + i * l1_stride, in order, as the loop of single transfers would make
 * them. Both whole ranges are checked first, so a bad one moves nothing. */
static rv_ecall_result noc_strided(hart_slot *hs, bool write) {
    rv_hart *h = &hs->hart;
    const char *fn = write ? "lm_noc_async_write_strided" : "lm_noc_async_read_strided";
    uint64_t noc = write ? arg64(h, 11) : arg64(h, 10);
    uint32_t l1 = write ? h->x[10] : h->x[12], size = h->x[13], count = h->x[14];
    uint32_t l1_stride = write ? h->x[15] : h->x[16], noc_stride = write ? h->x[16] : h->x[15];
    if (count == 0) return RV_ECALL_CONTINUE; /* as a loop of no transfers */
    uint64_t noc_span = (uint64_t)(count - 1) * noc_stride + size;
    uint64_t l1_span = (uint64_t)(count - 1) * l1_stride + size;
    if (noc_span > UINT32_MAX)
        return bad_call(h,
                        "%s: %u transfers of %u bytes %u apart span %llu bytes, more than any "
                        "memory",
                        fn, count, size, noc_stride, (unsigned long long)noc_span);
    char why[200];
    noc_target t;
    if (!noc_resolve(hs->core->launch, noc, (uint32_t)noc_span, &t, why, sizeof why))
        return bad_call(h, "%s: %s", fn, why);
    if (l1 >= h->l1_size || l1_span > h->l1_size - l1)
        return bad_call(h, "%s: %s [0x%x, +%llu) (%u transfers of %u bytes %u apart) is outside L1",
                        fn, write ? "source" : "destination", l1, (unsigned long long)l1_span,
                        count, size, l1_stride);
    uint8_t *far = t.ptr, *near = h->l1 + l1;
    for (uint32_t i = 0; i < count; i++, far += noc_stride, near += l1_stride) {
        if (write)
            memmove(far, near, size);
        else
            memmove(near, far, size);
    }
    if (write) wake(hs->core, t.core);
    return RV_ECALL_CONTINUE;
}

static rv_ecall_result do_noc(hart_slot *hs, uint32_t call) {
    rv_hart *h = &hs->hart;
    launch *ln = hs->core->launch;
    char why[200];
    noc_target t;
    switch (call) {
    case LM_ECALL_NOC_READ: {
        uint32_t dst = h->x[12], size = h->x[13];
        if (!noc_resolve(ln, arg64(h, 10), size, &t, why, sizeof why))
            return bad_call(h, "noc_async_read: %s", why);
        if (dst >= h->l1_size || size > h->l1_size - dst)
            return bad_call(h, "noc_async_read: destination [0x%x, +%u) is outside L1", dst, size);
        memmove(h->l1 + dst, t.ptr, size);
        return RV_ECALL_CONTINUE;
    }
    case LM_ECALL_NOC_READ_STRIDED:
    case LM_ECALL_NOC_WRITE_STRIDED:
        return noc_strided(hs, call == LM_ECALL_NOC_WRITE_STRIDED);
    case LM_ECALL_NOC_WRITE: {
        uint32_t src = h->x[10], size = h->x[13];
        if (!noc_resolve(ln, arg64(h, 11), size, &t, why, sizeof why))
            return bad_call(h, "noc_async_write: %s", why);
        if (src >= h->l1_size || size > h->l1_size - src)
            return bad_call(h, "noc_async_write: source [0x%x, +%u) is outside L1", src, size);
        memmove(t.ptr, h->l1 + src, size);
        wake(hs->core, t.core);
        return RV_ECALL_CONTINUE;
    }
    case LM_ECALL_NOC_MCAST:
    case LM_ECALL_SEM_SET_MCAST: {
        bool sem = call == LM_ECALL_SEM_SET_MCAST;
        const char *fn = sem ? "noc_semaphore_set_multicast" : "noc_async_write_multicast";
        uint32_t src = h->x[10], size = sem ? 4 : h->x[13], dests = sem ? h->x[13] : h->x[14];
        mcast_rect r;
        if (!mcast_decode(ln, arg64(h, 11), size, &r, why, sizeof why))
            return bad_call(h, "%s: %s", fn, why);
        if (src >= h->l1_size || size > h->l1_size - src || (sem && (src % 4 || r.local % 4)))
            return bad_call(h, "%s: source [0x%x, +%u) is outside L1 or misaligned", fn, src, size);
        sim_core *self = hs->core;
        bool self_in = self->x >= r.x0 && self->x <= r.x1 && self->y >= r.y0 && self->y <= r.y1;
        uint32_t count = (r.x1 - r.x0 + 1) * (r.y1 - r.y0 + 1) - self_in;
        if (dests != count)
            return bad_call(h,
                            "%s: num_dests is %u but the rectangle (%u,%u)-(%u,%u) has %u "
                            "destination cores",
                            fn, dests, r.x0, r.y0, r.x1, r.y1, count);
        uint32_t gx = ln->memory->geometry.grid_x;
        for (uint32_t y = r.y0; y <= r.y1; y++)
            for (uint32_t x = r.x0; x <= r.x1; x++) {
                if (x == self->x && y == self->y) continue;
                uint32_t index = y * gx + x;
                uint8_t *dst = sim_l1(ln->memory, index) + r.local;
                if (sem)
                    __atomic_store_n((uint32_t *)dst, *(uint32_t *)(h->l1 + src), __ATOMIC_SEQ_CST);
                else
                    memmove(dst, h->l1 + src, size);
                wake(self, ln->by_index[index]);
            }
        return RV_ECALL_CONTINUE;
    }
    case LM_ECALL_NOC_BARRIER:
        return RV_ECALL_CONTINUE; /* transfers are already complete */
    case LM_ECALL_SEM_INC:
    case LM_ECALL_SEM_SET_REMOTE: {
        bool inc = call == LM_ECALL_SEM_INC;
        const char *fn = inc ? "noc_semaphore_inc" : "noc_semaphore_set_remote";
        uint64_t a = inc ? arg64(h, 10) : arg64(h, 11);
        if (!noc_resolve(ln, a, 4, &t, why, sizeof why)) return bad_call(h, "%s: %s", fn, why);
        if ((a & 3) || ((a >> 42) & LM_NOC_COORD_MASK) == LM_NOC_DRAM_Y)
            return bad_call(h, "%s: semaphore address 0x%llx is not a 4-byte aligned L1 word", fn,
                            (unsigned long long)a);
        if (inc) {
            __atomic_fetch_add((uint32_t *)t.ptr, h->x[12], __ATOMIC_SEQ_CST);
        } else {
            uint32_t *src = l1_word(h, h->x[10]);
            if (!src) return bad_call(h, "%s: source 0x%x is not an L1 word", fn, h->x[10]);
            __atomic_store_n((uint32_t *)t.ptr, __atomic_load_n(src, __ATOMIC_SEQ_CST),
                             __ATOMIC_SEQ_CST);
        }
        wake(hs->core, t.core);
        return RV_ECALL_CONTINUE;
    }
    case LM_ECALL_SEM_SET:
    case LM_ECALL_SEM_WAIT:
    case LM_ECALL_SEM_WAIT_MIN: {
        uint32_t addr = h->x[10], value = h->x[11];
        uint32_t *w = l1_word(h, addr);
        if (!w) return bad_call(h, "semaphore address 0x%x is not a 4-byte aligned L1 word", addr);
        if (call == LM_ECALL_SEM_SET) {
            __atomic_store_n(w, value, __ATOMIC_SEQ_CST);
            return RV_ECALL_CONTINUE;
        }
        uint32_t now = __atomic_load_n(w, __ATOMIC_SEQ_CST);
        bool ok = call == LM_ECALL_SEM_WAIT ? now == value : now >= value;
        if (!ok)
            return block(hs, call == LM_ECALL_SEM_WAIT ? WAIT_SEM : WAIT_SEM_MIN, addr, value, now,
                         0);
        return RV_ECALL_CONTINUE;
    }
    }
    return bad_call(h, "unknown NoC call %u", call);
}

/* The dataflow API name of a NoC ecall that needs the NoC, or NULL for the
 * semaphore calls that touch only the core's own L1. */
static const char *noc_call_name(const rv_hart *h, uint32_t call) {
    switch (call) {
    case LM_ECALL_NOC_READ:
        return "noc_async_read";
    case LM_ECALL_NOC_WRITE:
        return "noc_async_write";
    case LM_ECALL_NOC_MCAST:
        return "noc_async_write_multicast";
    case LM_ECALL_NOC_BARRIER:
        return h->x[10] ? "noc_async_write_barrier" : "noc_async_read_barrier";
    case LM_ECALL_SEM_INC:
        return "noc_semaphore_inc";
    case LM_ECALL_SEM_SET_REMOTE:
        return "noc_semaphore_set_remote";
    case LM_ECALL_SEM_SET_MCAST:
        return "noc_semaphore_set_multicast";
    case LM_ECALL_NOC_READ_STRIDED:
        return "lm_noc_async_read_strided";
    case LM_ECALL_NOC_WRITE_STRIDED:
        return "lm_noc_async_write_strided";
    }
    return NULL;
}

static rv_ecall_result on_ecall(void *ctx, rv_hart *h) {
    hart_slot *hs = ctx;
    uint32_t call = h->x[17];
    if (call == LM_ECALL_EXIT) return RV_ECALL_EXIT;
    if (call == LM_ECALL_PRINT) return do_print(hs);
    if (call >= LM_ECALL_NOC_FIRST && call <= LM_ECALL_NOC_LAST) {
        /* The chip's compute processors have no NoC access: refuse what would
         * silently work here but cannot run there. */
        const char *noc = hs->processor == LM_PROC_COMPUTE ? noc_call_name(h, call) : NULL;
        if (noc)
            return bad_call(h,
                            "%s is not available on the compute processor (it has no NoC "
                            "access; move the transfer to a data movement kernel)",
                            noc);
        return do_noc(hs, call);
    }
    if (call >= LM_ECALL_CB_RESERVE_BACK && call <= LM_ECALL_CB_PAGES_FREE) return do_cb(hs, call);
    if (call >= LM_ECALL_COMPUTE_FIRST && call <= LM_ECALL_COMPUTE_LAST) {
        if (hs->processor != LM_PROC_COMPUTE) {
            char name[48];
            sim_compute_call_name(h, call, name, sizeof name);
            return bad_call(h,
                            "%s is not available on a data movement processor (the compute "
                            "engine belongs to the compute processor)",
                            name);
        }
        sim_compute *cp = hs->core->compute;
        rv_ecall_result res = sim_compute_ecall(cp, hs->core->cbs, h, call);
        if (cp->warning[0]) warn(hs, cp->warning);
        cp->warning[0] = '\0';
        return res;
    }
    return bad_call(h, "unknown ecall %u (a7)", call);
}

/* ---- scheduling ---- */

/* Runs a core's harts until all finished, or none can make progress. */
static void run_core(launch *ln, sim_core *c) {
    uint64_t budget = ln->desc->instruction_budget;
    for (;;) {
        if (atomic_load(&ln->abort)) return;
        unsigned wakes_seen = atomic_load(&c->wakes);
        bool progress = false, all_done = true;
        for (uint32_t p = 0; p < LM_NUM_PROCESSORS; p++) {
            hart_slot *hs = &c->harts[p];
            if (!hs->present || hs->done) continue;
            uint64_t before = hs->hart.instret;
            if (before >= budget) {
                char what[96];
                snprintf(what, sizeof what, "watchdog: more than %llu instructions (pc 0x%08x)",
                         (unsigned long long)budget, hs->hart.pc);
                fail_hart(hs, what);
                return;
            }
            uint64_t slice = budget - before < SLICE ? budget - before : SLICE;
            rv_stop stop = rv_run(&hs->hart, slice, on_ecall, hs);
            progress |= hs->hart.instret != before;
            if (stop == RV_STOP_FAULT) {
                char what[300];
                rv_fault_describe(&hs->hart, what, sizeof what);
                fail_hart(hs, what);
                return;
            }
            if (stop == RV_STOP_EXIT) {
                hs->done = true;
                progress = true;
                if (hs->line_len) emit_line(hs);
                continue;
            }
            if (stop != RV_STOP_BLOCK) hs->wait.kind = WAIT_NONE;
            all_done = false;
        }
        if (all_done) {
            atomic_store(&c->state, CORE_DONE);
            atomic_fetch_add(&ln->events, 1);
            return;
        }
        if (progress) continue;
        /* Nothing moved: park unless another core wrote here meanwhile. */
        pthread_mutex_lock(&ln->mutex);
        bool park = atomic_load(&c->wakes) == wakes_seen;
        if (park) {
            atomic_store(&c->state, CORE_PARKED);
            /* wake() reads the state without the lock, after counting: one that
             * counted after the load above and read the state before the store
             * left the core parked. Looking at the count again after the store
             * catches it (sequentially consistent: one of the two sees the
             * other). */
            if (atomic_load(&c->wakes) != wakes_seen) {
                atomic_store(&c->state, CORE_RUNNING); /* wake() needs the lock to move it */
                park = false;
            }
        }
        pthread_mutex_unlock(&ln->mutex);
        if (park) return;
    }
}

static void describe_deadlock(launch *ln) {
    char *m = ln->message;
    size_t cap = sizeof ln->message;
    size_t n = (size_t)snprintf(m, cap, "deadlock: every running kernel is blocked");
    for (uint32_t i = 0; i < ln->desc->core_count && n < cap; i++) {
        sim_core *c = &ln->cores[i];
        for (uint32_t p = 0; p < LM_NUM_PROCESSORS && n < cap; p++) {
            hart_slot *hs = &c->harts[p];
            if (!hs->present || hs->done) continue;
            char wait[WAIT_MAX_LEN];
            n +=
                (size_t)snprintf(m + n, cap - n, "; core (%u,%u) %s kernel '%s' at pc 0x%08x in %s",
                                 c->x, c->y, sim_processor_name(p), hs->name, hs->hart.pc,
                                 wait_text(&hs->wait, wait, sizeof wait));
        }
    }
    ln->status = LM_ERR_DEVICE_FAULT;
}

/* True when some core can run. Called locked: only then is it final. */
static bool any_ready(launch *ln) {
    for (uint32_t i = 0; i < ln->desc->core_count; i++)
        if (atomic_load(&ln->cores[i].state) == CORE_READY) return true;
    return false;
}

/* True while some core has not finished. */
static bool any_left(launch *ln) {
    for (uint32_t i = 0; i < ln->desc->core_count; i++)
        if (atomic_load(&ln->cores[i].state) != CORE_DONE) return true;
    return false;
}

/* Called locked when the working threads might all be idle: if every thread
 * still working waits, no core is ready and some is not done, nothing can
 * ever wake anyone. (A thread waits while another runs the last cores: when
 * they finish, that is the end, not a deadlock.) */
static void check_deadlock(launch *ln) {
    if (ln->active == 0 || ln->idle != ln->active || atomic_load(&ln->abort) || any_ready(ln) ||
        !any_left(ln))
        return;
    if (ln->status == LM_OK) describe_deadlock(ln);
    atomic_store(&ln->abort, true);
    pthread_cond_broadcast(&ln->changed);
}

/* Runs core c if it is ready and no other thread took it first. */
static bool claim_and_run(launch *ln, sim_core *c, uint32_t t) {
    int expected = CORE_READY;
    if (!atomic_compare_exchange_strong(&c->state, &expected, CORE_RUNNING)) return false;
    if (c->compute) c->compute->cache = ln->caches + (size_t)t * SIM_UNPACK_CACHE;
    run_core(ln, c);
    return true;
}

/* Thread `t` of the launch runs its own cores first -- t, t + threads,
 * t + 2 * threads, ..., which keeps a core on one thread from launch to
 * launch -- then any other core that is ready: a thread whose cores are done
 * or blocked takes work from the others instead of waiting for them, so a
 * launch whose cores do unequal work still keeps every thread busy. */
static void thread_main(void *ctx, uint32_t t) {
    launch *ln = ctx;
    uint32_t n = ln->desc->core_count;
    pthread_mutex_lock(&ln->mutex);
    ln->active++;
    pthread_mutex_unlock(&ln->mutex);
    for (;;) {
        bool ran = false;
        unsigned seen = atomic_load(&ln->events);
        for (uint32_t i = t; i < n; i += ln->threads)
            ran |= claim_and_run(ln, &ln->cores[i], t);
        for (uint32_t i = 0; !ran && i < n; i++)
            if (i % ln->threads != t) ran = claim_and_run(ln, &ln->cores[i], t);
        if (atomic_load(&ln->abort) || !any_left(ln)) break;
        if (ran) continue;
        /* Nothing to run: poll for a core made ready or done before
         * sleeping (the other threads are finishing the launch's last cores,
         * often within microseconds, and a wake-up costs more). */
        for (sim_spin s = sim_spin_start(ln->poll); sim_spin_more(&s);)
            if (atomic_load(&ln->events) != seen || atomic_load(&ln->abort)) break;
        if (atomic_load(&ln->events) != seen) continue;
        pthread_mutex_lock(&ln->mutex);
        if (!any_ready(ln) && any_left(ln) && !atomic_load(&ln->abort)) {
            ln->idle++;
            check_deadlock(ln);
            if (!atomic_load(&ln->abort)) pthread_cond_wait(&ln->changed, &ln->mutex);
            ln->idle--;
        }
        pthread_mutex_unlock(&ln->mutex);
    }
    pthread_mutex_lock(&ln->mutex);
    ln->active--;
    check_deadlock(ln);
    pthread_cond_broadcast(&ln->changed);
    pthread_mutex_unlock(&ln->mutex);
}

/* Reads the CB configuration the dispatcher left in the core's L1. */
static void load_cbs(sim_core *c) {
    for (uint32_t i = 0; i < LM_MAX_CBS; i++) {
        uint32_t w[LM_CB_CONFIG_WORDS];
        memcpy(w, c->l1 + LM_L1_CB_CONFIG + i * LM_CB_CONFIG_STRIDE, sizeof w);
        sim_cb *cb = &c->cbs[i];
        *cb = (sim_cb){.fifo_addr = w[0],
                       .fifo_size = w[1],
                       .page_size = w[2],
                       .num_pages = w[3],
                       .format = w[4]};
        cb->wr_ptr = cb->rd_ptr = cb->fifo_addr;
    }
}

lm_status sim_launch_run(sim_launcher *l, const sim_launch_desc *desc, uint64_t *out_instructions) {
    sim_memory *mem = l->memory;
    launch ln = {.desc = desc, .memory = mem, .caches = l->caches};
    ln.cores = calloc(desc->core_count ? desc->core_count : 1, sizeof *ln.cores);
    ln.by_index = calloc(mem->num_cores, sizeof *ln.by_index);
    if (!ln.cores || !ln.by_index) {
        free(ln.cores);
        free(ln.by_index);
        return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory for a launch");
    }
    pthread_mutex_init(&ln.mutex, NULL);
    pthread_cond_init(&ln.changed, NULL);
    lm_status st = LM_OK;
    for (uint32_t i = 0; i < desc->core_count && !st; i++) {
        const sim_core_kernels *k = &desc->cores[i];
        sim_core *c = &ln.cores[i];
        c->index = k->core;
        c->x = k->core % mem->geometry.grid_x;
        c->y = k->core / mem->geometry.grid_x;
        c->l1 = sim_l1(mem, k->core);
        c->launch = &ln;
        atomic_init(&c->state, CORE_READY);
        atomic_init(&c->wakes, 0);
        ln.by_index[k->core] = c;
        load_cbs(c);
        if (k->image[LM_PROC_COMPUTE]) {
            c->compute = &l->computes[k->core];
            sim_compute_reset(c->compute, k->fp32_acc, desc->strict_protocol);
        }
        for (uint32_t p = 0; p < LM_NUM_PROCESSORS && !st; p++) {
            hart_slot *hs = &c->harts[p];
            if (!k->image[p]) continue;
            hs->present = true;
            hs->processor = p;
            hs->name = k->name[p] ? k->name[p] : "?";
            hs->core = c;
            rv_local *local = &l->local_states[(size_t)k->core * LM_NUM_PROCESSORS + p];
            st =
                rv_hart_init(&hs->hart, k->image[p], c->l1, (uint32_t)mem->geometry.l1_size, local);
        }
    }
    if (!st) {
        uint32_t threads = sim_pool_threads(l->pool);
        ln.threads = desc->core_count < threads ? desc->core_count : threads;
        ln.active = 0; /* each thread counts itself in: offered threads may not come */
        ln.poll = sim_pool_polls(l->pool);
        atomic_init(&ln.events, 0);
        atomic_init(&ln.abort, false);
        sim_pool_offer(l->pool, thread_main, &ln, ln.threads);
        if (ln.status) st = err_set(ln.status, "%s", ln.message);
    }
    if (out_instructions) {
        uint64_t sum = 0;
        for (uint32_t i = 0; i < desc->core_count; i++)
            for (uint32_t p = 0; p < LM_NUM_PROCESSORS; p++)
                if (ln.cores[i].harts[p].present) sum += ln.cores[i].harts[p].hart.instret;
        *out_instructions = sum;
    }
    pthread_cond_destroy(&ln.changed);
    pthread_mutex_destroy(&ln.mutex);
    free(ln.by_index);
    free(ln.cores);
    return st;
}
