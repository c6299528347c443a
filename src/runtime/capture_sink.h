/* Where a Light Metal recorder listens, as a table of functions the device
 * carries while a capture is active (device->capture_sink). The API layer
 * calls the recorder directly; the replay layer goes through this table, so a
 * replay can be captured again without a replay-only program linking the
 * recorder. Every entry mirrors the public call it records.
 */
#ifndef LM_RUNTIME_CAPTURE_SINK_H
#define LM_RUNTIME_CAPTURE_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_capture.h"
#include "lightmetal/lm_program.h"

typedef struct rt_capture_sink {
    void (*create_buffer)(lm_device *dev, lm_buffer buffer);
    void (*deallocate_buffer)(lm_device *dev, lm_buffer buffer);
    /* size 0: the whole buffer; else `size` bytes at `offset` */
    void (*write_buffer)(lm_device *dev, uint32_t cq, lm_buffer buffer, uint64_t offset,
                         uint64_t size, const void *src, bool blocking);
    void (*read_buffer)(lm_device *dev, uint32_t cq, lm_buffer buffer, uint64_t offset,
                        uint64_t size, bool blocking);
    void (*write_l1)(lm_device *dev, uint32_t cq, lm_core core, uint64_t address, uint64_t size,
                     const void *src);
    void (*record_event)(lm_device *dev, uint32_t cq, uint32_t event_id);
    void (*wait_for_event)(lm_device *dev, uint32_t cq, uint32_t event_id);
    void (*event_synchronize)(lm_device *dev, uint32_t event_id);
    void (*finish)(lm_device *dev, uint32_t cq);
    void (*create_program)(lm_device *dev, lm_program program);
    void (*release_program)(lm_device *dev, lm_program program);
    void (*create_kernel)(lm_device *dev, lm_program program, lm_kernel kernel,
                          const lm_core_range_set *cores, const lm_kernel_config *cfg);
    void (*set_runtime_args)(lm_device *dev, lm_program program, lm_kernel kernel, lm_core core,
                             const uint32_t *args, uint32_t count);
    void (*set_common_runtime_args)(lm_device *dev, lm_program program, lm_kernel kernel,
                                    const uint32_t *args, uint32_t count);
    void (*create_cb)(lm_device *dev, lm_program program, lm_circular_buffer cb,
                      const lm_core_range_set *cores, const lm_circular_buffer_config *cfg);
    void (*update_cb)(lm_device *dev, lm_program program, lm_circular_buffer cb,
                      const lm_circular_buffer_config *cfg);
    void (*create_semaphore)(lm_device *dev, lm_program program, const lm_core_range_set *cores,
                             uint32_t initial_value, uint32_t id);
    void (*enqueue_program)(lm_device *dev, uint32_t cq, lm_program program, bool blocking);
    void (*trace_exists)(lm_device *dev, uint32_t cq, uint32_t trace_id);
    void (*replay_trace)(lm_device *dev, uint32_t cq, uint32_t trace_id, bool blocking);
    void (*release_trace)(lm_device *dev, uint32_t trace_id);
    lm_status (*golden)(lm_device *dev, uint32_t cq, lm_buffer buffer, const void *data,
                        uint64_t size);
    lm_status (*name_buffer)(lm_device *dev, lm_buffer buffer, const char *name,
                             const lm_buffer_name_options *opts);
} rt_capture_sink;

#endif
