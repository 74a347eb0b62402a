/*
 * ggspec-webgpu.h - a device backend on WebGPU: buffers in GPU memory, a real queue, and
 * WGSL kernels compiled at run time (native/src/webgpu.c). wgpu-native is loaded with dlopen
 * when the first backend is made, in the process that makes it, so a build without wgpu and a
 * process that never asks for the device pay nothing.
 *
 * As ggspec-vdev.h, the same declarations serve the native build (ggspec_ types) and a shim
 * compiled against another ggml-backend (VD(x) defined to that build's prefix first).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef VD
#include "ggspec-backend.h"
#define VD(x) ggspec_##x
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A backend on the process's WebGPU device, started on first use from the wgpu-native library
   at lib_path. NULL when there is none: reason (reason_size bytes) then says why in one line
   (no library, no adapter, a device started in another process before a fork, a build without
   the WebGPU headers). Every backend of a process shares the one device and its buffer type. */
VD(backend_t)             ggspec_webgpu_init(const char * lib_path, char * reason, size_t reason_size);
bool                      ggspec_backend_is_webgpu(VD(backend_t) b);
VD(backend_buffer_type_t) ggspec_webgpu_buffer_type(VD(backend_t) b);
/* whether this build has the WebGPU code at all (false: built without webgpu.h) */
bool                      ggspec_webgpu_compiled(void);
/* the adapter's description (name, driver, backend), "" before a device started */
const char *              ggspec_webgpu_adapter_name(void);
/* test hook: get_tensor_async reads not yet delivered (synchronize delivers them) */
size_t                    ggspec_webgpu_pending(VD(backend_t) b);

#ifdef __cplusplus
}
#endif
