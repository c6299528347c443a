/* Metal traces in Light Metal files: adding a trace's contents to a file
 * being written, and making a trace on a device from a verified file. Shared
 * by lm_collect_trace / lm_load_trace, Light Metal capture and replay, so the
 * traces travel the same way everywhere.
 */
#ifndef LM_RUNTIME_TRACE_BLOB_H
#define LM_RUNTIME_TRACE_BLOB_H

#include "format/lmb.h"
#include "runtime/trace.h"

/* Adds the trace (kernel ELFs to kernel_binaries, payload to traces) under
 * `file_id`. */
lm_status trace_blob_add(lmb_writer *writer, uint32_t file_id, const rt_trace_contents *trace);

/* Makes a new trace on cq's device from the file's trace `file_id`. The file
 * was verified (structure and semantics); with `check_hashes`, each distinct
 * kernel ELF the trace names is hashed against the file's hash first
 * (LM_ERR_INVALID_FILE, "blob-hash-mismatch: ..."), for a caller that has
 * not checked the blobs. */
lm_status trace_blob_load(lm_command_queue *cq, const void *file, uint32_t file_id,
                          bool check_hashes, uint32_t *out_trace_id);

#endif
