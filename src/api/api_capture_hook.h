/* The one place where api/ meets the Light Metal recorder.
 *
 * CAPTURE(device, hook, args...) calls hook(device, args...) when a capture of
 * the device is active. With LM_ENABLE_CAPTURE=0 it expands to nothing — not
 * even `device` is evaluated — so the API layer carries no trace of the
 * recorder. */
#ifndef LM_API_CAPTURE_HOOK_H
#define LM_API_CAPTURE_HOOK_H

#if LM_ENABLE_CAPTURE
#include "capture/capture.h"
#include "runtime/device.h"
#define CAPTURE(device, hook, ...)                                                                 \
    do {                                                                                           \
        lm_device *capture_device_ = (device);                                                     \
        if (capture_device_ && capture_device_->capture) hook(capture_device_, __VA_ARGS__);       \
    } while (0)
#else
#define CAPTURE(device, hook, ...) ((void)0)
#endif

#endif
