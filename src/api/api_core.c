/* Public calls about cores: where work goes (lm_split_work_to_cores), NoC
 * coordinates, and direct L1 access. */
#include "base/error.h"
#include "lightmetal/lm_device.h"
#include "lightmetal/lm_program.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "api/api_capture_hook.h"

lm_status lm_worker_core_from_logical_core(const lm_device *device, lm_core logical,
                                           lm_core *out_noc) {
    const char *fn = "lm_worker_core_from_logical_core";
    if (!device || !out_noc)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       device ? "out_noc" : "device");
    if (logical.x >= device->info.grid_x || logical.y >= device->info.grid_y)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: core (%u,%u) is outside the %ux%u grid", fn,
                       logical.x, logical.y, device->info.grid_x, device->info.grid_y);
    *out_noc = logical;
    return LM_OK;
}

static lm_status l1_access(const char *fn, lm_device *device, lm_core core, uint64_t address,
                           uint64_t size, void *host, bool to_device) {
    if (!device) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: device is NULL", fn);
    if (!host)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, to_device ? "src" : "dst");
    lm_status st = rt_l1_transfer(device->queues[0], core, address, size, host, to_device, NULL);
    if (st) return err_prefix(st, "%s", fn);
    if (to_device) CAPTURE(device, cap_write_l1, 0, core, address, size, host);
    return LM_OK;
}

lm_status lm_device_write_l1(lm_device *device, lm_core core, uint64_t address, uint64_t size,
                             const void *src) {
    return l1_access("lm_device_write_l1", device, core, address, size, (void *)src, true);
}

lm_status lm_device_read_l1(lm_device *device, lm_core core, uint64_t address, uint64_t size,
                            void *dst) {
    return l1_access("lm_device_read_l1", device, core, address, size, dst, false);
}

/* Adds the cores with ordinals [first, first + n) of the grid's order to
 * `set` as rectangles: whole lines where it can, the partial ones alone. */
static void add_run(lm_core_range_set *set, lm_core grid, bool row_major, uint32_t first,
                    uint32_t n) {
    uint32_t line = row_major ? grid.x : grid.y; /* cores per line */
    while (n) {
        uint32_t pos = first % line, l = first / line;
        uint32_t take = pos || n < line ? (line - pos < n ? line - pos : n) : n / line * line;
        uint32_t lines = pos || n < line ? 1 : take / line;
        lm_core a, b;
        if (row_major) {
            a = (lm_core){pos, l};
            b = lines > 1 || take == line ? (lm_core){line - 1, l + lines - 1}
                                          : (lm_core){pos + take - 1, l};
        } else {
            a = (lm_core){l, pos};
            b = lines > 1 || take == line ? (lm_core){l + lines - 1, line - 1}
                                          : (lm_core){l, pos + take - 1};
        }
        set->ranges[set->count++] = (lm_core_range){a, b};
        first += take;
        n -= take;
    }
}

lm_status lm_split_work_to_cores(lm_core grid_size, uint32_t units, bool row_major,
                                 lm_work_split *out_split) {
    const char *fn = "lm_split_work_to_cores";
    if (!out_split) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: out_split is NULL", fn);
    if (grid_size.x == 0 || grid_size.y == 0)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: grid of %ux%u cores is empty", fn, grid_size.x,
                       grid_size.y);
    lm_work_split w = {0};
    uint32_t cores = grid_size.x * grid_size.y;
    w.num_cores = units < cores ? units : cores;
    if (w.num_cores) {
        uint32_t per = units / w.num_cores, extra = units % w.num_cores;
        uint32_t n1 = extra ? extra : w.num_cores;
        w.units_per_core_group_1 = extra ? per + 1 : per;
        w.units_per_core_group_2 = extra ? per : 0;
        add_run(&w.all_cores, grid_size, row_major, 0, w.num_cores);
        add_run(&w.core_group_1, grid_size, row_major, 0, n1);
        add_run(&w.core_group_2, grid_size, row_major, n1, w.num_cores - n1);
    }
    *out_split = w;
    return LM_OK;
}
