/* lm_binary: a finished Light Metal file held by its writer (api/ only). */
#ifndef LM_API_BINARY_H
#define LM_API_BINARY_H

#include "format/lmb.h"
#include "lightmetal/lm_capture.h"

/* Wraps a finished writer (taking it over); NULL when out of memory, in
 * which case the writer is destroyed. */
lm_binary *api_binary_wrap(lmb_writer *writer);

/* The header fields that describe `info`'s device. */
void api_binary_header(const lm_device_info *info, lmb_header *hdr);

#endif
