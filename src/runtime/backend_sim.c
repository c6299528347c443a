/* The functional simulator as a device backend. */
#include <stdlib.h>

#include "base/error.h"
#include "lightmetal/lm_buffer.h"
#include "runtime/backend.h"
#include "sim/sim_memory.h"

typedef struct sim_backend {
    rt_backend base;
    sim_memory *memory;
} sim_backend;

static sim_pages to_pages(const rt_buffer_place *p) {
    return (sim_pages){
        .kind = p->memory == LM_BUFFER_DRAM ? SIM_MEM_DRAM : SIM_MEM_L1,
        .num_banks = p->num_banks,
        .address = p->address,
        .size = p->size,
        .page_size = p->page_size,
        .page_stride = p->page_stride,
    };
}

static lm_status sim_execute(rt_backend *backend, uint32_t cq_id, const rt_cmd *cmd) {
    sim_backend *sb = (sim_backend *)backend;
    switch (cmd->op) {
    case RT_CMD_WRITE_BUFFER: {
        sim_pages pages = to_pages(&cmd->u.write.place);
        sim_memory_write_pages(sb->memory, &pages, cmd->u.write.src);
        return LM_OK;
    }
    case RT_CMD_READ_BUFFER: {
        sim_pages pages = to_pages(&cmd->u.read.place);
        sim_memory_read_pages(sb->memory, &pages, cmd->u.read.dst);
        return LM_OK;
    }
    case RT_CMD_FAULT:
        return err_set(LM_ERR_DEVICE_FAULT, "%s", cmd->u.fault.message);
    case RT_CMD_INVALID:
        break;
    }
    return err_set(LM_ERR_INTERNAL, "command queue %u: unknown command %d", cq_id, (int)cmd->op);
}

static void sim_destroy(rt_backend *backend) {
    sim_backend *sb = (sim_backend *)backend;
    sim_memory_destroy(sb->memory);
    free(sb);
}

static const rt_backend_ops sim_ops = {
    .destroy = sim_destroy,
    .execute = sim_execute,
};

lm_status rt_backend_sim_create(const rt_backend_config *config, rt_backend **out_backend) {
    sim_backend *sb = calloc(1, sizeof *sb);
    if (!sb) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    sim_geometry g = {
        .grid_x = config->grid_x,
        .grid_y = config->grid_y,
        .l1_size = config->l1_size,
        .dram_banks = config->dram_banks,
        .dram_bank_size = config->dram_bank_size,
    };
    lm_status st = sim_memory_create(&g, &sb->memory);
    if (st) {
        free(sb);
        return st;
    }
    sb->base.ops = &sim_ops;
    *out_backend = &sb->base;
    return LM_OK;
}
