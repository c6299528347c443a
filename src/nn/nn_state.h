/* What the op library keeps per device: the program cache. Created on the
 * device's first tensor or op, dropped by the device's close callback (which
 * also cuts the device's tensors loose: their handles then report the closed
 * device instead of touching freed memory). */
#ifndef LM_NN_STATE_H
#define LM_NN_STATE_H

#include "lightmetal/lm_device.h"
#include "lightmetal/lm_status.h"

/* Makes sure `device` has its state and close callback. Errors name `op`. */
lm_status nn_state_attach(const char *op, lm_device *device);

/* Marks every tensor of `device` as orphaned (nn_tensor.c). */
void nn_tensor_orphan_all(lm_device *device);

#endif
