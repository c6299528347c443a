/* File helpers: read-only mappings and crash-safe saves.
 *
 * Errors: every function returns LM_ERR_IO (or LM_ERR_OUT_OF_HOST_MEMORY) with a
 * message naming the path, the step that failed and the OS reason.
 * Thread-safety: none of these share state; call them from any thread.
 */
#ifndef LM_BASE_FILE_H
#define LM_BASE_FILE_H

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

/* Writes the chunks to a temporary file next to `path`, flushes it to disk,
 * then renames it over `path`. Either the whole new content is at `path`
 * afterwards, or `path` is untouched (a previous file stays intact) and no
 * temporary file is left behind. */
lm_status file_save_atomic(const char *path, const file_chunk *chunks, size_t chunk_count);

/* Reads a whole file into a malloc'ed buffer (NUL-terminated for convenience;
 * the terminator is not counted in *out_size). The caller frees *out_data. */
lm_status file_read_all(const char *path, void **out_data, size_t *out_size);

#endif
