/* The device backend interface: the only way the runtime reaches a device.
 *
 * Nothing above the runtime knows which backend it talks to. The functional
 * simulator is the one backend today (backend_sim.c).
 *
 * Contract: execute() runs one command to completion on the device. On failure
 * it returns LM_ERR_DEVICE_FAULT (or another status) and leaves the detail in
 * the calling thread's error message. Several threads may call execute() at
 * once (one per command queue). For a program launch or a trace replay it
 * adds the RISC-V instructions the kernels retired to *instructions (also
 * when it fails); other commands leave it alone.
 */
#ifndef LM_RUNTIME_BACKEND_H
#define LM_RUNTIME_BACKEND_H

#include <stdint.h>

#include "lightmetal/lm_status.h"
#include "runtime/command.h"

typedef struct rt_backend rt_backend;

typedef struct rt_backend_ops {
    void (*destroy)(rt_backend *backend);
    lm_status (*execute)(rt_backend *backend, uint32_t cq_id, const rt_cmd *cmd,
                         uint64_t *instructions);
} rt_backend_ops;

struct rt_backend {
    const rt_backend_ops *ops;
};

/* Geometry a backend is opened with. */
typedef struct rt_backend_config {
    uint32_t grid_x, grid_y;
    uint64_t l1_size;
    uint32_t dram_banks;
    uint64_t dram_bank_size;
    uint32_t num_threads;
    uint64_t watchdog_instructions;
    bool strict_protocol;
    void (*print)(void *user, uint32_t x, uint32_t y, const char *processor, const char *line);
    void *print_user;
} rt_backend_config;

/* The functional simulator. */
lm_status rt_backend_sim_create(const rt_backend_config *config, rt_backend **out_backend);

#endif
