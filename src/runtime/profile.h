/* Launch labels and the launch profile of a device (lm_device_set_launch_label,
 * lm_device_set_profiling, lm_device_get_profile, lm_device_get_program_profile).
 *
 * Labels and program names are interned once and known by their ids from
 * then on (0: none), so a queued command carries numbers, not strings; the
 * texts stay put until the device closes, so a text may be used without a
 * lock. The profile is kept per (label, program) launched.
 *
 * Thread-safety: every function may be called from any thread; the host
 * threads set labels while the dispatchers add launch times.
 */
#ifndef LM_RUNTIME_PROFILE_H
#define LM_RUNTIME_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "lightmetal/lm_device.h"

typedef struct rt_profile rt_profile;

lm_status rt_profile_create(rt_profile **out_profile);
void rt_profile_destroy(rt_profile *p);

/* Makes `label` (NULL or "" for none) the current label. Errors: out of
 * host memory; more than RT_PROFILE_MAX_LABELS distinct labels. The caller
 * checked the length. */
#define RT_PROFILE_MAX_LABELS (1u << 20)
lm_status rt_profile_set_label(rt_profile *p, const char *label);

/* The id of a program's name (the kernels' names, joined by the caller),
 * interned if new; cut to LM_MAX_LAUNCH_LABEL bytes, with what is not
 * printable UTF-8 made '?'. 0 when out of host memory. */
uint32_t rt_profile_program(rt_profile *p, const char *name);

/* The current label's id (0: none) and its text (NULL for none; valid until
 * the device closes). */
uint32_t rt_profile_current(const rt_profile *p);
const char *rt_profile_text(rt_profile *p, uint32_t id);

/* Whether launches are timed now. */
bool rt_profile_enabled(const rt_profile *p);

/* Starts timing (clearing what was measured) or stops. */
void rt_profile_set_enabled(rt_profile *p, bool enable);

/* Adds one launch of `seconds` and `instructions` (retired by its kernels)
 * of program `program` under label `label` (ids; 0 for none). */
void rt_profile_add(rt_profile *p, uint32_t label, uint32_t program, double seconds,
                    uint64_t instructions);

/* The measured labels in order of first launch, as lm_device_get_profile
 * gives them (one allocation, lm_profile_free). */
lm_status rt_profile_copy(rt_profile *p, lm_profile_entry **out_entries, size_t *out_count);

/* The measured (label, program) pairs in order of first launch, as
 * lm_device_get_program_profile gives them (one allocation, free()). */
lm_status rt_profile_copy_programs(rt_profile *p, lm_profile_program_entry **out_entries,
                                   size_t *out_count);

/* Monotonic seconds, for the dispatchers' timing. */
double rt_profile_now(void);

#endif
