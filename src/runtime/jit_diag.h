/* What a failed kernel compile reports, for the kernel build (jit.c).
 *
 * The compiler's output can be any length, but lm_last_error() is bounded
 * (ERR_MESSAGE_MAX): so the whole output is kept per thread, for
 * lm_last_compile_log(), and the LM_ERR_COMPILE message carries a summary
 * line and as much of it as fits, saying what was left out and where it is.
 * lm_last_compile_log() (lightmetal/lm_program.h) is defined in jit_diag.c.
 *
 * SFPI (the compute engine's vector intrinsics) is out of scope. A kernel
 * written for it fails in many ways before the SDK's own SFPI message can
 * show, or without it at all (a missing ckernel_sfpu_*.h), so the summary
 * line itself says SFPI is out of scope whenever the source or the compiler's
 * messages show SFPI use.
 *
 * Thread-safety: any thread; the log is the calling thread's own.
 */
#ifndef LM_RUNTIME_JIT_DIAG_H
#define LM_RUNTIME_JIT_DIAG_H

#include <stdbool.h>
#include <stddef.h>

#include "lightmetal/lm_status.h"

/* Keeps the compiler's complete output `log` (log_size bytes; trailing
 * blanks dropped) as the calling thread's last compile log, replacing the
 * previous one, and records the LM_ERR_COMPILE message:
 *
 *   kernel 'NAME' failed to compile[: SFPI intrinsics ... are out of scope ...]
 *   <the log>
 *
 * When the log does not fit lm_last_error's bound, the message holds its
 * diagnostic lines only (no "In file included from" chains, no quoted
 * source lines and carets), as many whole lines as fit, then a line
 *   [S of T lines of compiler output shown (...): lm_last_compile_log() ...]
 * The message stays short enough for the public function's name to be
 * prefixed without losing its end. `source` is the kernel's text (searched
 * for SFPI, comments skipped). Returns LM_ERR_COMPILE. */
lm_status jit_compile_error(const char *name, const char *source, const char *log, size_t log_size);

/* Whether `text` shows SFPI use: the SFPI names (vFloat, vInt, vUInt,
 * dst_reg, v_if, v_elseif, v_else, v_endif, vConst*, sfpi::, ckernel::sfpu::,
 * the LLK SFPU wrappers _llk_*sfpu*) or a custom SFPU header (ckernel_sfpu*,
 * llk_*sfpu*, sfpi.h). With `is_source`, comments are skipped and inside
 * string literals only header names count; compiler messages are taken as
 * they are. On a match, writes what was found to `out` (out_size bytes,
 * NUL-terminated, possibly cut): "uses 'vFloat'" or "includes 'PATH'". */
bool jit_sfpi_evidence(const char *text, size_t size, bool is_source, char *out, size_t out_size);

#endif
