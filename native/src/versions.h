/*
 * versions.h - the entries whose signatures changed within this API generation, written once
 * for the two device backends (vdev.c, webgpu.c). The version adapter
 * (conformance/adapters/versions.py) reads the target's impl header and defines:
 *
 *   VDEV_STATUS_API        graph_compute and graph_plan_compute return enum ggml_status
 *                          (before: bool and void);
 *   VDEV_BACKEND_GUID      a backend carries a guid, which ggml_backend_is_cpu compares;
 *   VDEV_COPY_TWO_BACKENDS cpy_tensor_async is called on the destination's backend with both
 *                          backends (before: one backend).
 *
 * A device writes its entries in the oldest form (bool graph_compute, bool plan run, one-backend
 * cpy_tensor_async) and names the generated ones P_graph_compute_entry, P_plan_compute_entry and
 * P_cpy_tensor_async_entry in its iface; DEVICE_GUID_INIT(P) goes first in its backend struct.
 * Include after vdev-prefix.h and after the typedefs backend_t, tensor_t and cgraph_t.
 */
#pragma once

#ifdef VDEV_STATUS_API
#define DEVICE_COMPUTE_ENTRIES(P, graph_compute, plan_run)                                            \
    static enum VD(status) P##_graph_compute_entry(backend_t backend, cgraph_t * cgraph) {            \
        return graph_compute(backend, cgraph) ? VDU(STATUS_SUCCESS) : VDU(STATUS_FAILED);             \
    }                                                                                                  \
    static enum VD(status) P##_plan_compute_entry(backend_t backend, VD(backend_graph_plan_t) plan) { \
        return plan_run(backend, plan) ? VDU(STATUS_SUCCESS) : VDU(STATUS_FAILED);                    \
    }
#else
#define DEVICE_COMPUTE_ENTRIES(P, graph_compute, plan_run)                                   \
    static bool P##_graph_compute_entry(backend_t backend, cgraph_t * cgraph) {              \
        return graph_compute(backend, cgraph);                                               \
    }                                                                                         \
    static void P##_plan_compute_entry(backend_t backend, VD(backend_graph_plan_t) plan) {   \
        (void)plan_run(backend, plan);                                                       \
    }
#endif

/* DEVICE_GUID(P, 16 bytes) defines the device's guid; no backend of ggspec's is a CPU one */
#ifdef VDEV_BACKEND_GUID
#define DEVICE_GUID(P, ...)   static VD(guid) P##_guid = {__VA_ARGS__};
#define DEVICE_GUID_INIT(P)   .guid = &P##_guid,
#else
#define DEVICE_GUID(P, ...)
#define DEVICE_GUID_INIT(P)
#endif

#ifdef VDEV_COPY_TWO_BACKENDS
#define DEVICE_CPY_TENSOR_ASYNC_ENTRY(P, cpy_tensor_async)                                              \
    static bool P##_cpy_tensor_async_entry(backend_t backend_src, backend_t backend_dst,                \
                                           const tensor_t * src, tensor_t * dst) {                      \
        (void)backend_src;                                                                              \
        return cpy_tensor_async(backend_dst, src, dst);                                                 \
    }
#else
#define DEVICE_CPY_TENSOR_ASYNC_ENTRY(P, cpy_tensor_async)                                              \
    static bool P##_cpy_tensor_async_entry(backend_t backend, const tensor_t * src, tensor_t * dst) {   \
        return cpy_tensor_async(backend, src, dst);                                                     \
    }
#endif
