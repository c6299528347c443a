/* lightmetal op library: tensors on the device and ttnn-style multi-core
 * operations, prefix lmnn_.
 *
 * Built only on the public host API (lightmetal.h): every buffer, program and
 * launch it makes is an lm_* call, so a Light Metal capture records a model
 * built from these ops with no extra code, and lm_replay runs it with no
 * compiler. Conventions as in lightmetal.h; tensors, dtypes, layouts, errors
 * and the program cache are described in lmnn_tensor.h. */
#ifndef LIGHTMETAL_NN_H
#define LIGHTMETAL_NN_H

#include "lightmetal/lightmetal.h"
#include "lightmetal/lmnn_tensor.h"
#include "lightmetal/lmnn_data.h"
#include "lightmetal/lmnn_unary.h"
#include "lightmetal/lmnn_binary.h"
#include "lightmetal/lmnn_reduce.h"
#include "lightmetal/lmnn_norm.h"
#include "lightmetal/lmnn_matmul.h"
#include "lightmetal/lmnn_attention.h"
#include "lightmetal/lmnn_conv.h"
#include "lightmetal/lmnn_rnn.h"

#endif
