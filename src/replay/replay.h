/* Internal to the replay layer and the tools built on it. */
#ifndef LM_REPLAY_REPLAY_H
#define LM_REPLAY_REPLAY_H

#include "format/lmb_semantic.h"

/* The semantic checks replay makes before running a file: the simulator's
 * kernel memory map and buffer layout. Tools that verify files use the same
 * options, so `lightmetal verify` accepts exactly what replay accepts. */
void rp_semantic_options(lmb_semantic_options *out_opts);

#endif
