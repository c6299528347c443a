/* Device commands: what a command queue carries to the device's dispatcher.
 *
 * Commands are plain fixed-size records. Those that name only device state
 * (addresses, sizes, ids) can be stored in device memory and replayed by the
 * dispatcher later (metal traces); those that carry host pointers (buffer
 * reads and writes) can only travel through a queue.
 */
#ifndef LM_RUNTIME_COMMAND_H
#define LM_RUNTIME_COMMAND_H

#include <stdbool.h>
#include <stdint.h>

typedef enum rt_cmd_op {
    RT_CMD_INVALID = 0,
    RT_CMD_WRITE_BUFFER, /* host memory -> buffer pages */
    RT_CMD_READ_BUFFER,  /* buffer pages -> host memory */
    RT_CMD_PROGRAM,      /* runs a launch snapshot on the cores */
    RT_CMD_TRACE,        /* runs the launches of a trace stream in device DRAM */
    RT_CMD_FAULT,        /* fails on the device with `fault.message` (fault injection) */
    RT_CMD_MARKER,       /* does nothing: an event's place in the queue */
    RT_CMD_WAIT_QUEUE,   /* holds the queue until another queue completed a command */
} rt_cmd_op;

/* Where a buffer's pages are: everything the dispatcher needs, by value, so a
 * command never refers to a host-side buffer object. */
typedef struct rt_buffer_place {
    uint8_t memory;       /* LM_BUFFER_DRAM or LM_BUFFER_L1 */
    uint32_t num_banks;   /* DRAM banks, or worker cores for L1 */
    uint64_t address;     /* bank-local base */
    uint64_t offset;      /* the transfer starts this many bytes into the buffer */
    uint64_t size;        /* bytes transferred (the buffer's size for a whole one) */
    uint64_t page_size;   /* bytes per page */
    uint64_t page_stride; /* page_size rounded up to the memory's alignment */
    /* Sharded buffers: where each page lives (owned by the buffer, which the
     * command pins); NULL for interleaved ones. */
    const struct shard_geometry *shard;
} rt_buffer_place;

typedef struct rt_cmd {
    rt_cmd_op op;
    union {
        struct rt_cmd_write {
            rt_buffer_place place;
            const void *src;
            bool check_hash; /* fail unless the source hashes to `hash` */
            uint64_t hash;
        } write;
        struct {
            rt_buffer_place place;
            void *dst;
        } read;
        struct {
            const struct rt_launch *launch;
        } program;
        struct {
            uint64_t address, size; /* the stream: bank 0 of DRAM */
            const struct rt_launch_kernel *kernels;
            uint32_t kernel_count;
        } trace;
        struct {
            const char *message; /* static string */
        } fault;
        struct {
            struct lm_command_queue *queue;
            uint64_t seq;
        } wait;
    } u;
} rt_cmd;

#endif
