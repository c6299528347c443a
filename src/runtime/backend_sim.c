/* The functional simulator as a device backend: the device side of the
 * command queues (the dispatcher) on top of sim/. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hash.h"
#include "lightmetal/lm_buffer.h"
#include "lm_kernel_abi.h"
#include "runtime/backend.h"
#include "runtime/device.h"
#include "runtime/program.h"
#include "runtime/trace.h"
#include "sim/sim_launch.h"
#include "sim/sim_memory.h"
#include "sim/sim_pool.h"

typedef struct sim_backend {
    rt_backend base;
    rt_backend_config config;
    sim_memory *memory;
    sim_pool *pool;
    sim_launcher *launcher;
    /* One launch at a time: a launch owns the cores' reserved L1 and the
     * hart-private memories from its set-up to its end. */
    pthread_mutex_t launch_mutex;
    pthread_mutex_t print_mutex;
} sim_backend;

static sim_pages to_pages(const rt_buffer_place *p) {
    return (sim_pages){
        .kind = p->memory == LM_BUFFER_DRAM ? SIM_MEM_DRAM : SIM_MEM_L1,
        .num_banks = p->num_banks,
        .address = p->address,
        .offset = p->offset,
        .shard = p->shard,
        .size = p->size,
        .page_size = p->page_size,
        .page_stride = p->page_stride,
    };
}

static void print_line(void *ctx, uint32_t x, uint32_t y, uint32_t processor, const char *line) {
    sim_backend *sb = ctx;
    pthread_mutex_lock(&sb->print_mutex);
    if (sb->config.print) {
        sb->config.print(sb->config.print_user, x, y, sim_processor_name(processor), line);
    } else {
        printf("[core (%u,%u) %s] %s\n", x, y, sim_processor_name(processor), line);
        fflush(stdout);
    }
    pthread_mutex_unlock(&sb->print_mutex);
}

/* Writes one core's reserved L1 as the launch needs it (kernel_abi layout). */
static void write_reserved_l1(sim_backend *sb, const rt_launch *l, const rt_launch_core *lc) {
    uint8_t *l1 = sim_l1(sb->memory, lc->core);
    const sim_geometry *g = &sb->memory->geometry;
    uint32_t info[7] = {
        [LM_CORE_INFO_X] = lc->core % g->grid_x,   [LM_CORE_INFO_Y] = lc->core / g->grid_x,
        [LM_CORE_INFO_GRID_X] = g->grid_x,         [LM_CORE_INFO_GRID_Y] = g->grid_y,
        [LM_CORE_INFO_DRAM_BANKS] = g->dram_banks, [LM_CORE_INFO_DRAM_ALIGN] = RT_DRAM_ALIGNMENT,
        [LM_CORE_INFO_L1_ALIGN] = RT_L1_ALIGNMENT,
    };
    memcpy(l1 + LM_L1_CORE_INFO, info, sizeof info);
    memset(l1 + LM_L1_SEMAPHORES, 0, LM_MAX_SEMAPHORES * LM_SEMAPHORE_STRIDE);
    for (uint32_t i = 0; i < lc->sem_count; i++)
        memcpy(l1 + LM_L1_SEMAPHORES + i * LM_SEMAPHORE_STRIDE, &l->words[lc->sems + i], 4);
    memset(l1 + LM_L1_CB_CONFIG, 0, LM_MAX_CBS * LM_CB_CONFIG_STRIDE);
    for (uint32_t i = 0; i < lc->cb_count; i++) {
        const uint32_t *slot = &l->words[lc->cbs + (1 + LM_CB_CONFIG_WORDS) * i];
        memcpy(l1 + LM_L1_CB_CONFIG + slot[0] * LM_CB_CONFIG_STRIDE, slot + 1,
               4 * LM_CB_CONFIG_WORDS);
    }
    for (uint32_t p = 0; p < LM_NUM_PROCESSORS; p++) {
        uint32_t at = p * LM_RUNTIME_ARGS_STRIDE;
        memcpy(l1 + LM_L1_RUNTIME_ARGS + at, &l->words[lc->args[p]], 4 * lc->args_count[p]);
        memcpy(l1 + LM_L1_COMMON_ARGS + at, &l->words[lc->common[p]], 4 * lc->common_count[p]);
    }
}

static lm_status run_program(sim_backend *sb, const rt_launch *l, uint64_t *instructions) {
    sim_core_kernels *cores = calloc(l->core_count ? l->core_count : 1, sizeof *cores);
    if (!cores) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory for a launch");
    pthread_mutex_lock(&sb->launch_mutex);
    uint32_t n = 0;
    for (uint32_t i = 0; i < l->core_count; i++) {
        const rt_launch_core *lc = &l->cores[i];
        write_reserved_l1(sb, l, lc);
        sim_core_kernels *k = &cores[n];
        *k = (sim_core_kernels){.core = lc->core};
        bool any = false;
        for (uint32_t p = 0; p < LM_NUM_PROCESSORS; p++) {
            if (lc->kernel[p] == UINT32_MAX) continue;
            k->image[p] = l->kernels[lc->kernel[p]].image;
            k->name[p] = l->kernels[lc->kernel[p]].name;
            if (p == LM_PROC_COMPUTE) k->fp32_acc = l->kernels[lc->kernel[p]].fp32_acc;
            any = true;
        }
        n += any;
    }
    sim_launch_desc desc = {
        .cores = cores,
        .core_count = n,
        .instruction_budget = sb->config.watchdog_instructions,
        .strict_protocol = sb->config.strict_protocol,
        .print = print_line,
        .print_ctx = sb,
    };
    uint64_t retired = 0;
    lm_status st = sim_launch_run(sb->launcher, &desc, &retired);
    pthread_mutex_unlock(&sb->launch_mutex);
    *instructions += retired;
    free(cores);
    return st;
}

/* Runs the launches of a trace stream, read in place from device DRAM. */
static lm_status run_trace(sim_backend *sb, const rt_cmd *cmd, uint64_t *instructions) {
    const uint8_t *at = sim_dram(sb->memory, 0) + cmd->u.trace.address;
    const uint32_t *stream = (const uint32_t *)at;
    size_t n = cmd->u.trace.size / sizeof(uint32_t), pos = 0;
    uint32_t launch = 0;
    while (pos < n) {
        rt_launch l;
        lm_status st =
            rt_trace_decode(stream, n, &pos, cmd->u.trace.kernel_count, sb->memory->num_cores, &l);
        l.kernels = (rt_launch_kernel *)cmd->u.trace.kernels;
        if (!st) st = run_program(sb, &l, instructions);
        if (st) return err_prefix(st, "trace launch %u", launch);
        launch++;
    }
    return LM_OK;
}

/* Transfers this large are shared out over the simulator's threads. */
#define PARALLEL_TRANSFER_BYTES (4u << 20)

typedef struct transfer {
    const sim_memory *memory;
    sim_pages pages;
    uint8_t *host;
    bool to_device;
    uint32_t parts;
} transfer;

static void transfer_part(void *ctx, uint32_t part) {
    const transfer *t = ctx;
    sim_memory_move_pages(t->memory, &t->pages, t->host, t->to_device, part, t->parts);
}

static void move(sim_backend *sb, const rt_buffer_place *place, void *host, bool to_device) {
    transfer t = {sb->memory, to_pages(place), host, to_device, sim_pool_threads(sb->pool)};
    if (place->size < PARALLEL_TRANSFER_BYTES || t.parts == 1)
        sim_memory_move_pages(sb->memory, &t.pages, host, to_device, 0, 1);
    else
        sim_pool_run(sb->pool, transfer_part, &t, t.parts);
}

/* One pass, shared out like any big transfer: the data is hashed piece by
 * piece as it is copied (sim_memory), so checking a file's blob costs no
 * second read. The bytes are on the device by the time
 * a mismatch is known, but the queue fails here, before any later command
 * can use them. */
typedef struct hashed_write {
    const sim_memory *memory;
    sim_pages pages;
    const void *src;
    uint32_t parts;
    uint64_t *pieces;
} hashed_write;

static void hashed_part(void *ctx, uint32_t part) {
    const hashed_write *t = ctx;
    sim_memory_write_pieces_hashed(t->memory, &t->pages, t->src, part, t->parts, t->pieces);
}

static lm_status write_hashed(sim_backend *sb, const struct rt_cmd_write *w) {
    size_t count = (size_t)((w->place.size + HASH64_PIECE - 1) / HASH64_PIECE);
    uint64_t one, *pieces = count > 1 ? malloc(count * sizeof *pieces) : &one;
    if (!pieces) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    hashed_write t = {sb->memory, to_pages(&w->place), w->src, sim_pool_threads(sb->pool), pieces};
    if (w->place.size < PARALLEL_TRANSFER_BYTES || t.parts == 1) {
        t.parts = 1;
        hashed_part(&t, 0);
    } else {
        sim_pool_run(sb->pool, hashed_part, &t, t.parts);
    }
    uint64_t got = hash64_combine(pieces, count, w->place.size, 0);
    if (pieces != &one) free(pieces);
    if (got != w->hash)
        return err_set(LM_ERR_INVALID_FILE,
                       "blob-hash-mismatch: the %llu bytes written hash to %016llx, the file says "
                       "%016llx",
                       (unsigned long long)w->place.size, (unsigned long long)got,
                       (unsigned long long)w->hash);
    return LM_OK;
}

static lm_status sim_execute(rt_backend *backend, uint32_t cq_id, const rt_cmd *cmd,
                             uint64_t *instructions) {
    sim_backend *sb = (sim_backend *)backend;
    switch (cmd->op) {
    case RT_CMD_WRITE_BUFFER:
        if (cmd->u.write.check_hash) return write_hashed(sb, &cmd->u.write);
        move(sb, &cmd->u.write.place, (void *)cmd->u.write.src, true);
        return LM_OK;
    case RT_CMD_READ_BUFFER:
        move(sb, &cmd->u.read.place, cmd->u.read.dst, false);
        return LM_OK;
    case RT_CMD_PROGRAM:
        return run_program(sb, cmd->u.program.launch, instructions);
    case RT_CMD_TRACE:
        return run_trace(sb, cmd, instructions);
    case RT_CMD_FAULT:
        return err_set(LM_ERR_DEVICE_FAULT, "%s", cmd->u.fault.message);
    case RT_CMD_MARKER: /* the queue handles these itself */
    case RT_CMD_WAIT_QUEUE:
        return LM_OK;
    case RT_CMD_INVALID:
        break;
    }
    return err_set(LM_ERR_INTERNAL, "command queue %u: unknown command %d", cq_id, (int)cmd->op);
}

static void sim_destroy(rt_backend *backend) {
    sim_backend *sb = (sim_backend *)backend;
    sim_launcher_destroy(sb->launcher);
    sim_pool_destroy(sb->pool);
    sim_memory_destroy(sb->memory);
    pthread_mutex_destroy(&sb->print_mutex);
    pthread_mutex_destroy(&sb->launch_mutex);
    free(sb);
}

static const rt_backend_ops sim_ops = {
    .destroy = sim_destroy,
    .execute = sim_execute,
};

lm_status rt_backend_sim_create(const rt_backend_config *config, rt_backend **out_backend) {
    sim_backend *sb = calloc(1, sizeof *sb);
    if (!sb) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    sb->base.ops = &sim_ops;
    sb->config = *config;
    pthread_mutex_init(&sb->launch_mutex, NULL);
    pthread_mutex_init(&sb->print_mutex, NULL);
    sim_geometry g = {
        .grid_x = config->grid_x,
        .grid_y = config->grid_y,
        .l1_size = config->l1_size,
        .dram_banks = config->dram_banks,
        .dram_bank_size = config->dram_bank_size,
    };
    lm_status st = sim_memory_create(&g, &sb->memory);
    if (!st) st = sim_pool_create(config->num_threads, &sb->pool);
    if (!st) st = sim_launcher_create(sb->memory, sb->pool, &sb->launcher);
    if (st) {
        sim_destroy(&sb->base);
        return st;
    }
    *out_backend = &sb->base;
    return LM_OK;
}
