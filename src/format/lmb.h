/* The Light Metal binary: writing, structural verification and opening.
 *
 * File layout (see schema/lightmetal.fbs): a FlatBuffer table area, zero
 * padding to a 4096-byte boundary, then the data region with every blob on a
 * 64-byte boundary. Blobs are referenced by lmb_BlobRef (offset relative to
 * the data region, size, hash64 with seed 0).
 *
 * Writing: a capture streams commands in as they happen. Build each command
 * table with the typed calls of lmb_schema.h on lmb_writer_builder(), then
 * hand its ref to lmb_writer_add_command(). Blobs are added with
 * lmb_writer_add_blob(); equal contents are stored once (hash, then a byte
 * comparison). lmb_writer_save() writes the table area and then the blobs
 * straight from where they live (no second copy of the data region).
 *
 * Reading: lmb_verify() checks a whole file; afterwards lmb_root() and the
 * readers of lmb_schema.h may be used without further checks, and
 * lmb_blob_data() gives a blob's bytes inside the (mapped) file.
 *
 * Thread-safety: a writer belongs to one thread at a time; verification and
 * readers only read and may run concurrently.
 */
#ifndef LM_FORMAT_LMB_H
#define LM_FORMAT_LMB_H

#include "base/file.h"
#include "format/lmb_schema.h"
#include "lightmetal/lm_buffer.h"

/* The format version this code writes; it reads any file with the same
 * major version (minor versions only add fields, which older readers skip). */
#define LMB_FORMAT_MAJOR 2
/* 2.1: BufferName.element_type; 2.2: empty BufferName shapes; 2.3: BufferName.scalar;
 * 2.4: EnqueueProgram.label */
#define LMB_FORMAT_MINOR 4

#define LMB_DATA_REGION_ALIGN 4096u
#define LMB_BLOB_ALIGN 64u

/* ----------------------------------------------------------- verification */

typedef struct lmb_verify_options {
    /* Re-hash every blob and compare with its BlobRef (reads the whole data
     * region; off by default because large files would pay for it at open). */
    bool check_blob_hashes;
    /* Accept a table area that does not match its digest: only for tools
     * that inspect damaged files (readers stay safe: the structure is still
     * verified). Never for running. */
    bool ignore_table_digest;
    uint32_t max_depth;      /* 0 = FB_MAX_DEPTH */
    uint32_t max_vector_len; /* 0 = 1 << 26 elements */
} lmb_verify_options;

void lmb_verify_options_init(lmb_verify_options *opts);

/* Structural verification of a whole file in memory (`size` may exceed
 * 4 GiB): the FlatBuffer (see fb_verify), the identifier, the major version,
 * the data region, every BlobRef's range and alignment (and hash when asked),
 * the hash algorithm and the table digest (so no byte of the table area can
 * have changed by accident since the file was written), and the ordering of `traces` (by trace_id)
 * and `kernel_binaries` (by hash), both strictly increasing. Errors: LM_ERR_INVALID_FILE with a
 * message naming the reason and the path; the reason in *out_reason when not NULL. */
lm_status lmb_verify(const void *data, uint64_t size, const lmb_verify_options *opts,
                     fb_reason *out_reason);

/* Only the FlatBuffer part: identifier and every table, offset, vector and
 * string, as lmb_verify() checks them, but not the data region, blob ranges,
 * version or ordering. For table areas on their own (e.g. produced by other
 * FlatBuffers tools); readers are safe afterwards, blob accessors are not. */
lm_status lmb_verify_table_area(const void *data, uint64_t size, fb_reason *out_reason);

/* The table area a digest covers: [0, end) with end the data region's start,
 * or the file's size when it has no data region. */
uint64_t lmb_table_area_end(const void *data, uint64_t size);

/* Recomputes a file's table digest and stores it in place: for tools and
 * tests that change a file on purpose. The root table must be readable.
 * Errors: LM_ERR_INVALID_FILE when the file's head or integrity field does
 * not verify. */
lm_status lmb_reseal(void *data, uint64_t size);

/* Root table of a verified file. */
static inline fb_table lmb_root(const void *data) {
    return fb_root(data);
}

/* Bytes of a blob of a verified file (NULL for an empty blob). */
static inline const uint8_t *lmb_blob_data(const void *file, fb_table root, lmb_BlobRef ref) {
    return ref.size ? (const uint8_t *)file + lmb_LightMetalBinary_data_offset(root) + ref.offset
                    : NULL;
}

/* Binary search of a verified file's sorted lists; false when absent. */
bool lmb_find_kernel_binary(fb_table root, uint64_t hash, lmb_BlobRef *out_ref);
bool lmb_find_trace(fb_table root, uint32_t trace_id, lmb_BlobRef *out_ref);

/* A CreateBuffer's layout and shard spec as the API has them (a verified
 * buffer; more core ranges than LM_MAX_CORE_RANGES give count > the maximum,
 * which shard_geometry_make refuses). */
lm_buffer_layout lmb_buffer_layout(fb_table create_buffer, lm_shard_spec *out_spec);

/* ----------------------------------------------------------------- writer */

typedef struct lmb_writer lmb_writer;

/* What a file says about the device it needs and who wrote it. */
typedef struct lmb_header {
    const char *producer; /* may be NULL */
    lmb_Version producer_version;
    uint16_t grid_x, grid_y;
    uint32_t l1_size;
    uint16_t dram_banks;
    uint64_t dram_bank_size;
    const uint8_t *data_formats; /* lmb_DataFormat values */
    size_t data_format_count;
    /* Device options that change results or faults (0: the reader's
     * default); lmb_header_init gives 2 queues. */
    uint8_t num_command_queues;
    uint64_t watchdog_instructions;
    uint64_t trace_region_size;
    bool strict_protocol;
} lmb_header;

void lmb_header_init(lmb_header *hdr);

lm_status lmb_writer_create(lmb_writer **out_writer);
void lmb_writer_destroy(lmb_writer *w);

/* The builder to build command tables on (owned by the writer). Tables,
 * strings and vectors built on it stay valid until the writer is destroyed. */
fb_builder *lmb_writer_builder(lmb_writer *w);

/* Appends a command: `table` was built on the builder with the member type's
 * calls. Errors: LM_ERR_INVALID_ARGUMENT (type out of range, table 0),
 * whatever the builder reported, LM_ERR_OUT_OF_HOST_MEMORY. */
lm_status lmb_writer_add_command(lmb_writer *w, lmb_Command type, fb_ref table);

/* Number of commands added so far (the index the next command gets). */
uint32_t lmb_writer_command_count(const lmb_writer *w);

/* Adds a blob to the data region, or finds an equal one already there.
 * copy = true: the writer keeps its own copy (the caller may free `data` at
 * once). copy = false: the writer borrows `data`, which must stay valid and
 * unchanged until the writer is destroyed (e.g. a mapped file). */
lm_status lmb_writer_add_blob(lmb_writer *w, const void *data, uint64_t size, bool copy,
                              lmb_BlobRef *out_ref);

/* Adds a kernel ELF (copied, stored once) and lists it in kernel_binaries;
 * CreateKernel refers to it by *out_hash. */
lm_status lmb_writer_add_kernel_binary(lmb_writer *w, const void *elf, uint64_t size,
                                       uint64_t *out_hash);

/* Adds a serialized trace (copied). Errors: LM_ERR_INVALID_ARGUMENT when the
 * trace id was added before. */
lm_status lmb_writer_add_trace(lmb_writer *w, uint32_t trace_id, const void *data, uint64_t size);

/* Names an input or output buffer. */
lm_status lmb_writer_name_buffer(lmb_writer *w, uint32_t buffer_id, lmb_BufferRole role,
                                 const char *name);

/* The same, with the contents described as a tensor of `format` elements in
 * `shape` (rank dimensions, outermost first; rank 0: no shape). The writer
 * stores what it is given; lmb_verify_semantics checks it against the
 * buffer. */
lm_status lmb_writer_name_tensor(lmb_writer *w, uint32_t buffer_id, lmb_BufferRole role,
                                 const char *name, lmb_DataFormat format, const uint32_t *shape,
                                 uint32_t rank);

/* A named buffer's contents as a tensor. */
typedef struct lmb_tensor_desc {
    lmb_DataFormat format;        /* Invalid: plain bytes */
    const uint32_t *shape;        /* `rank` dims, outermost first */
    uint32_t rank;                /* 0: no shape, or a scalar */
    bool scalar;                  /* a rank-0 tensor of one `format` element */
    lmb_ElementType element_type; /* outside the device; Invalid: the format's own */
} lmb_tensor_desc;

/* The same from a full description; stored as given, checked by
 * lmb_verify_semantics. */
lm_status lmb_writer_name_tensor_as(lmb_writer *w, uint32_t buffer_id, lmb_BufferRole role,
                                    const char *name, const lmb_tensor_desc *desc);

/* Completes the file. After this only lmb_writer_chunks/save/to_memory and
 * destroy may be called. */
lm_status lmb_writer_finish(lmb_writer *w, const lmb_header *hdr);

/* The finished file as a list of pieces (owned by the writer) and its size. */
void lmb_writer_chunks(const lmb_writer *w, const file_chunk **out_chunks, size_t *out_count,
                       uint64_t *out_size);

/* Writes the finished file atomically (file_save_atomic). */
lm_status lmb_writer_save(const lmb_writer *w, const char *path);

/* Copies the finished file into one malloc'ed buffer the caller frees. */
lm_status lmb_writer_to_memory(const lmb_writer *w, void **out_data, size_t *out_size);

#endif
