/*
 * vdev-prefix.h - how vdev.c reaches the ggml-backend it plugs into.
 *
 * vdev.c names every backend type and function through VD(x) (lower case: types and
 * functions) and VDU(x) (upper case: enum constants), and includes the backend's
 * implementation header through VDEV_IMPL_HEADER. By default these are ggspec's own. To build
 * the device as a shim against another build, define all three on the command line, e.g.
 *
 *     -D'VD(x)=wsp_ggml_##x' -D'VDU(x)=WSP_GGML_##x' -DVDEV_IMPL_HEADER='"ggml-backend-impl.h"'
 */
#pragma once

#ifndef VD
#define VD(x) ggspec_##x
#endif

#ifndef VDU
#define VDU(x) GGSPEC_##x
#endif

#ifndef VDEV_IMPL_HEADER
#define VDEV_IMPL_HEADER "ggspec-backend-impl.h"
#endif

#include VDEV_IMPL_HEADER

/* the short names vdev.c and webgpu.c use for the backend's types */
typedef VD(backend_t)             backend_t;
typedef VD(backend_buffer_t)      buffer_t;
typedef VD(backend_buffer_type_t) buft_t;
typedef struct VD(tensor)         tensor_t;
typedef struct VD(cgraph)         cgraph_t;
