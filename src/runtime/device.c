#include "runtime/device.h"

#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "runtime/buffer.h"
#include "runtime/cq.h"
#include "runtime/profile.h"
#include "runtime/program.h"
#include "runtime/trace.h"

static uint32_t online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1;
}

static void describe(const lm_device_options *o, lm_device_info *info) {
    *info = (lm_device_info){
        .grid_x = o->grid_x,
        .grid_y = o->grid_y,
        .l1_size = o->l1_size,
        .l1_unreserved_base = RT_L1_RESERVED,
        .l1_alignment = RT_L1_ALIGNMENT,
        .dram_banks = o->dram_banks,
        .dram_bank_size = o->dram_bank_size,
        .dram_unreserved_base = 0,
        .trace_region_base = o->dram_bank_size - o->trace_region_size,
        .trace_region_size = o->trace_region_size,
        .dram_alignment = RT_DRAM_ALIGNMENT,
        .num_command_queues = o->num_command_queues,
        .num_threads = o->num_threads ? o->num_threads : online_cpus(),
        .watchdog_instructions = o->watchdog_instructions,
        .strict_protocol = o->strict_protocol,
    };
}

lm_status rt_device_open(const lm_device_options *opts, lm_device **out_device) {
    lm_device *dev = calloc(1, sizeof *dev);
    if (!dev) return err_set(LM_ERR_OUT_OF_HOST_MEMORY, "out of host memory");
    describe(opts, &dev->info);
    pthread_mutex_init(&dev->mutex, NULL);
    pthread_cond_init(&dev->buffer_idle, NULL);
    const lm_device_info *i = &dev->info;
    alloc_init(&dev->dram, i->dram_unreserved_base, i->trace_region_base, RT_DRAM_ALIGNMENT, false);
    alloc_init(&dev->l1, i->l1_unreserved_base, i->l1_size, RT_L1_ALIGNMENT, true);
    alloc_init(&dev->trace_region, i->trace_region_base, i->dram_bank_size, RT_DRAM_ALIGNMENT,
               false);

    rt_backend_config bc = {
        .grid_x = i->grid_x,
        .grid_y = i->grid_y,
        .l1_size = i->l1_size,
        .dram_banks = i->dram_banks,
        .dram_bank_size = i->dram_bank_size,
        .num_threads = i->num_threads,
        .watchdog_instructions = opts->watchdog_instructions,
        .strict_protocol = opts->strict_protocol,
        .print = opts->print,
        .print_user = opts->print_user,
    };
    lm_status st = rt_backend_sim_create(&bc, &dev->backend);
    if (!st) st = rt_profile_create(&dev->profile);
    if (!st) st = rv_image_cache_create(RT_IMAGES_KEPT, &dev->images);
    for (uint32_t q = 0; !st && q < i->num_command_queues; q++)
        st = rt_cq_create(dev, q, &dev->queues[q]);
    if (st) {
        rt_device_close(dev);
        return st;
    }
    *out_device = dev;
    return LM_OK;
}

lm_status rt_device_add_close_callback(lm_device *dev, lm_device_close_fn fn, void *user) {
    pthread_mutex_lock(&dev->mutex);
    uint32_t n = dev->close_callback_count;
    if (n < LM_MAX_CLOSE_CALLBACKS) {
        dev->close_callbacks[n].fn = fn;
        dev->close_callbacks[n].user = user;
        dev->close_callback_count = n + 1;
    }
    pthread_mutex_unlock(&dev->mutex);
    if (n == LM_MAX_CLOSE_CALLBACKS)
        return err_set(LM_ERR_INVALID_ARGUMENT, "%u close callbacks are registered already",
                       LM_MAX_CLOSE_CALLBACKS);
    return LM_OK;
}

lm_status rt_device_close(lm_device *dev) {
    lm_status first = LM_OK;
    char message[ERR_MESSAGE_MAX] = "";
    /* Callbacks may use the device (release programs, free buffers), so they
     * run before anything is torn down, without the mutex held. */
    while (dev->close_callback_count > 0) {
        uint32_t i = --dev->close_callback_count;
        dev->close_callbacks[i].fn(dev, dev->close_callbacks[i].user);
    }
    for (uint32_t q = 0; q < LM_MAX_COMMAND_QUEUES; q++) {
        lm_status st = rt_cq_destroy(dev->queues[q]);
        if (st && !first) {
            first = st;
            err_copy(message, sizeof message);
        }
    }
    rt_trace_release_all(dev);
    rt_program_release_all(dev);
    rt_buffer_release_all(dev);
    rv_image_cache_destroy(dev->images);
    rt_profile_destroy(dev->profile);
    if (dev->backend) dev->backend->ops->destroy(dev->backend);
    alloc_destroy(&dev->dram);
    alloc_destroy(&dev->l1);
    alloc_destroy(&dev->trace_region);
    pthread_cond_destroy(&dev->buffer_idle);
    pthread_mutex_destroy(&dev->mutex);
    free(dev);
    if (first) err_set(first, "%s", message);
    return first;
}
