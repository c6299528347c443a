/* File helpers: read-only mappings and crash-safe saves.
 *
 * Errors: every function returns LM_ERR_IO (or LM_ERR_OUT_OF_HOST_MEMORY) with a
 * message naming the path, the step that failed and the OS reason.
 * Thread-safety: none of these share state; call them from any thread.
 */
#ifndef LM_BASE_FILE_H
#define LM_BASE_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "lightmetal/lm_status.h"

/* A whole file mapped read-only. `data` is NULL for an empty file. */
typedef struct file_mapping {
    const void *data;
    size_t size;
} file_mapping;

/* Maps `path` read-only and privately; the mapping outlives the descriptor. */
lm_status file_map(const char *path, file_mapping *out_mapping);

/* Releases a mapping made by file_map; a zeroed mapping is accepted. */
void file_unmap(file_mapping *mapping);

/* One piece of a file being saved; pieces are written in order. */
typedef struct file_chunk {
    const void *data;
    size_t size;
} file_chunk;

/* Writes the chunks to `path` crash-safely: either the whole new content is at
 * `path` afterwards (flushed to disk), or `path` is untouched (a previous file
 * stays intact). Nothing else is left behind, even when the process is killed
 * mid-save (SIGKILL, SIGXFSZ): the content goes to an unnamed temporary file
 * (O_TMPFILE) that gets a name only when complete, by a link when `path` does
 * not exist yet, else by a link under a temporary name and a rename over
 * `path` (a kill between those two leaves that name). Where the file system
 * has no unnamed files, a named temporary file next to `path` is written and
 * renamed instead; a kill then leaves it behind. */
lm_status file_save_atomic(const char *path, const file_chunk *chunks, size_t chunk_count);

/* Where the content of a save goes (file_save_atomic_with). */
typedef struct file_sink file_sink;

/* Appends bytes to the file being saved. LM_ERR_IO naming the path. */
lm_status file_sink_write(file_sink *sink, const void *data, size_t size);

/* Produces a file's content through file_sink_write(); returning anything but
 * LM_OK abandons the save (the message is kept). */
typedef lm_status (*file_produce_fn)(void *ctx, file_sink *sink);

/* file_save_atomic with the content streamed by `produce(ctx, sink)`, called
 * once, so it need not be in memory all at once. Same guarantees. */
lm_status file_save_atomic_with(const char *path, file_produce_fn produce, void *ctx);

/* For tests: true makes saves use the named-temporary scheme, as on a file
 * system without unnamed temporary files. Process-wide. */
void file_force_named_temp(bool on);

/* Reads a whole file into a malloc'ed buffer (NUL-terminated for convenience;
 * the terminator is not counted in *out_size). The caller frees *out_data. */
lm_status file_read_all(const char *path, void **out_data, size_t *out_size);

#endif
