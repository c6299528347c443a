/* lightmetal — the whole public host API.
 *
 * Conventions: every function that can fail returns lm_status (LM_OK = 0) and
 * leaves a detail message in lm_last_error(); outputs are `out_*` pointers,
 * written only on success; options structs have an *_init() helper that sets
 * the defaults. */
#ifndef LIGHTMETAL_LIGHTMETAL_H
#define LIGHTMETAL_LIGHTMETAL_H

#include "lightmetal/lm_version.h"
#include "lightmetal/lm_status.h"
#include "lightmetal/lm_device.h"
#include "lightmetal/lm_buffer.h"
#include "lightmetal/lm_queue.h"
#include "lightmetal/lm_program.h"
#include "lightmetal/lm_trace.h"
#include "lightmetal/lm_capture.h"
#include "lightmetal/lm_replay.h"
#include "lightmetal/lm_tile.h"

#endif
