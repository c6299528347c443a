/* Public device API: argument validation, then the runtime. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "format/lmb_semantic.h"
#include "lightmetal/lm_device.h"
#include "runtime/device.h"
#include "runtime/profile.h"

/* Option limits. Grids beyond 32x32 would not fit the NoC coordinate fields;
 * memory limits keep every device address inside 64 bits with room to spare. */
#define GRID_MAX 32u
#define L1_MIN (RT_L1_RESERVED + 64u * 1024u)
#define L1_MAX (64ull << 20)
#define DRAM_BANKS_MAX 64u
#define DRAM_BANK_MIN (1ull << 20)
#define DRAM_BANK_MAX (64ull << 30)
#define THREADS_MAX 1024u

void lm_device_options_init(lm_device_options *opts) {
    if (!opts) return;
    *opts = (lm_device_options){
        .grid_x = 8,
        .grid_y = 8,
        .l1_size = 1499136,
        .dram_banks = 12,
        .dram_bank_size = 1ull << 30,
        .trace_region_size = 8ull << 20,
        .num_command_queues = 2,
        .num_threads = 0,
        .watchdog_instructions = 4000000000ull,
    };
}

static lm_status bad_option(const char *field, unsigned long long value, const char *rule) {
    return err_set(LM_ERR_INVALID_ARGUMENT, "lm_device_open: options.%s = %llu: %s", field, value,
                   rule);
}

static lm_status validate_options(const lm_device_options *o) {
    if (o->grid_x < 1 || o->grid_x > GRID_MAX)
        return bad_option("grid_x", o->grid_x, "must be 1..32");
    if (o->grid_y < 1 || o->grid_y > GRID_MAX)
        return bad_option("grid_y", o->grid_y, "must be 1..32");
    if (o->l1_size < L1_MIN || o->l1_size > L1_MAX || o->l1_size % RT_L1_ALIGNMENT)
        return bad_option("l1_size", o->l1_size, "must be a multiple of 16 in [131072, 67108864]");
    if (o->dram_banks < 1 || o->dram_banks > DRAM_BANKS_MAX)
        return bad_option("dram_banks", o->dram_banks, "must be 1..64");
    if (o->dram_bank_size < DRAM_BANK_MIN || o->dram_bank_size > DRAM_BANK_MAX ||
        o->dram_bank_size % RT_DRAM_ALIGNMENT)
        return bad_option("dram_bank_size", o->dram_bank_size,
                          "must be a multiple of 32 in [1 MiB, 64 GiB]");
    if (o->trace_region_size % RT_DRAM_ALIGNMENT || o->trace_region_size > o->dram_bank_size / 2)
        return bad_option("trace_region_size", o->trace_region_size,
                          "must be a multiple of 32 and at most half of dram_bank_size");
    if (o->num_command_queues < 1 || o->num_command_queues > LM_MAX_COMMAND_QUEUES)
        return bad_option("num_command_queues", o->num_command_queues, "must be 1 or 2");
    if (o->watchdog_instructions == 0)
        return bad_option("watchdog_instructions", 0, "must be at least 1");
    if (o->num_threads > THREADS_MAX)
        return bad_option("num_threads", o->num_threads, "must be at most 1024 (0 = online CPUs)");
    return LM_OK;
}

lm_status lm_device_open(const lm_device_options *opts, lm_device **out_device) {
    if (!out_device) return err_set(LM_ERR_INVALID_ARGUMENT, "lm_device_open: out_device is NULL");
    lm_device_options defaults;
    if (!opts) {
        lm_device_options_init(&defaults);
        opts = &defaults;
    }
    lm_status st = validate_options(opts);
    if (st) return st;
    st = rt_device_open(opts, out_device);
    return st ? err_prefix(st, "lm_device_open") : LM_OK;
}

lm_status lm_device_close(lm_device *device) {
    if (!device) return LM_OK;
    lm_status st = rt_device_close(device);
    return st ? err_prefix(st, "lm_device_close: unreported device error") : LM_OK;
}

lm_status lm_device_add_close_callback(lm_device *device, lm_device_close_fn fn, void *user) {
    if (!device)
        return err_set(LM_ERR_INVALID_HANDLE, "lm_device_add_close_callback: device is NULL");
    if (!fn) return err_set(LM_ERR_INVALID_ARGUMENT, "lm_device_add_close_callback: fn is NULL");
    lm_status st = rt_device_add_close_callback(device, fn, user);
    return st ? err_prefix(st, "lm_device_add_close_callback") : LM_OK;
}

lm_status lm_device_get_info(const lm_device *device, lm_device_info *out_info) {
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "lm_device_get_info: device is NULL");
    if (!out_info) return err_set(LM_ERR_INVALID_ARGUMENT, "lm_device_get_info: out_info is NULL");
    *out_info = device->info;
    return LM_OK;
}

lm_command_queue *lm_device_command_queue(lm_device *device, uint32_t cq_id) {
    if (!device) {
        err_set(LM_ERR_INVALID_HANDLE, "lm_device_command_queue: device is NULL");
        return NULL;
    }
    if (cq_id >= device->info.num_command_queues) {
        err_set(LM_ERR_INVALID_ARGUMENT,
                "lm_device_command_queue: cq_id %u is out of range (device has %u queue%s)", cq_id,
                device->info.num_command_queues, device->info.num_command_queues == 1 ? "" : "s");
        return NULL;
    }
    return device->queues[cq_id];
}

lm_status lm_device_set_launch_label(lm_device *device, const char *label) {
    const char *fn = "lm_device_set_launch_label";
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    const char *problem = label ? lmb_launch_label_problem(label, strlen(label)) : NULL;
    if (problem) return err_set(LM_ERR_INVALID_ARGUMENT, "%s: the label %s", fn, problem);
    lm_status st = rt_profile_set_label(device->profile, label);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

lm_status lm_device_set_profiling(lm_device *device, bool enable) {
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "lm_device_set_profiling: device is NULL");
    rt_profile_set_enabled(device->profile, enable);
    return LM_OK;
}

/* The checks both profile getters make. */
static lm_status check_profile_args(const char *fn, const lm_device *device,
                                    const void *out_entries, const size_t *out_count) {
    if (!device) return err_set(LM_ERR_INVALID_HANDLE, "%s: device is NULL", fn);
    if (!out_entries || !out_count)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                       out_entries ? "out_count" : "out_entries");
    return LM_OK;
}

lm_status lm_device_get_profile(lm_device *device, lm_profile_entry **out_entries,
                                size_t *out_count) {
    const char *fn = "lm_device_get_profile";
    lm_status st = check_profile_args(fn, device, out_entries, out_count);
    if (!st) st = rt_profile_copy(device->profile, out_entries, out_count);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

void lm_profile_free(lm_profile_entry *entries) {
    free(entries);
}

lm_status lm_device_get_program_profile(lm_device *device, lm_profile_program_entry **out_entries,
                                        size_t *out_count) {
    const char *fn = "lm_device_get_program_profile";
    lm_status st = check_profile_args(fn, device, out_entries, out_count);
    if (!st) st = rt_profile_copy_programs(device->profile, out_entries, out_count);
    return st ? err_prefix(st, "%s", fn) : LM_OK;
}

void lm_profile_program_free(lm_profile_program_entry *entries) {
    free(entries);
}
