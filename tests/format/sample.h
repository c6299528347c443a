/* A sample Light Metal binary using every table and every field, shared by
 * the format tests (round trips, flatc conformance, corrupt files). */
#ifndef LM_TESTS_FORMAT_SAMPLE_H
#define LM_TESTS_FORMAT_SAMPLE_H

#include "format/lmb.h"

/* Builds the sample into a malloc'ed buffer (caller frees). */
lm_status sample_build(void **out_data, size_t *out_size);

/* Checks that `file` (verified) holds exactly the sample; with check_blobs
 * also compares the blob bytes. Returns NULL or a description of the first
 * difference. */
const char *sample_check(const void *file, bool check_blobs);

/* The sample's data blob contents. */
void sample_blob(uint8_t *out, size_t size);

#endif
