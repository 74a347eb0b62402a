/*
 * ggspec-vdev.h - the virtual device backend: a stand-in for a GPU on a machine with only a
 * CPU. Its buffers are not host memory (their base address is mapped without any access
 * rights, so a host dereference faults), its bytes are reachable only through the buffer and
 * backend entries, and its asynchronous operations run in submission order like a GPU stream.
 *
 * The same declarations serve two builds. Natively the backend types are ggspec_'s. As a
 * shim compiled against another ggml-backend build, the includer defines VD(x) to that
 * build's prefix (say wsp_ggml_##x) and includes that build's ggml-backend-impl.h first;
 * the vdev's own functions keep their ggspec_vdev_ names in both cases.
 *
 * Graphs run on the device through the host build's own CPU backend, on shadow tensors that
 * point into the device storage, in the device's submission order (see vdev.c).
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

struct ggspec_vdev_params {
    const char * name;              /* backend, buffer type and buffer name (copied) */
    size_t       alignment;         /* the buffer type's alignment */
    bool         lazy;              /* async host reads/writes happen at synchronize */
    bool         async_entries;     /* the backend has set/get_tensor_async entries */
    bool         buffer_cpy_tensor; /* the buffers have a cpy_tensor entry */
    bool         cpy_tensor_async;  /* the backend has a cpy_tensor_async entry */
    size_t       alloc_pad;         /* 0: no get_alloc_size entry; else pad nbytes to this */
    uint64_t     ops_mask[2];       /* supports_op: bit `op` of this 128-bit mask */
    bool         compute_fails;     /* graph_compute computes, then returns false */
    size_t       base_offset;       /* a buffer's base lies this many bytes past a page boundary */
    uint32_t     absent;            /* optional entries left NULL, one bit each: 1 set_tensor_async,
                                       2 get_tensor_async, 4 synchronize (an eager device only),
                                       8 the buffers' reset, 16 the buffers' init_tensor */
};

/* a new device with its own buffer type, and a backend for it */
VD(backend_t)             ggspec_vdev_init(const struct ggspec_vdev_params * p);
VD(backend_buffer_type_t) ggspec_vdev_buffer_type(VD(backend_t) b);
bool                      ggspec_backend_is_vdev(VD(backend_t) b);

/* test hooks: raw bytes of a buffer's storage (the queue is not drained) */
void   ggspec_vdev_read (VD(backend_buffer_t) buf, size_t offset, void * out, size_t size);
void   ggspec_vdev_write(VD(backend_buffer_t) buf, size_t offset, const void * in, size_t size);
/* operations queued on the backend's device and not yet run */
size_t ggspec_vdev_pending(VD(backend_t) b);
/* how often a buffer's init_tensor / reset entries were called */
size_t ggspec_vdev_init_tensor_calls(VD(backend_buffer_t) buf);
size_t ggspec_vdev_reset_calls(VD(backend_buffer_t) buf);
/* how many graphs the device has computed (queued graphs count once they have run) */
size_t ggspec_vdev_graphs_run(VD(backend_t) b);

/* The device's entry log (given its buffer type, which outlives the backend): one line per
 * call of an entry of its buffer type, buffers or backend, in call order:
 *     ENTRY OBJECT ARGS...
 * OBJECT is `buft`, `backend` or `buffer#K` (the device's K-th allocated buffer, from 0);
 * tensors appear by name in single quotes, offsets, sizes and clear's value in decimal, a
 * backend argument by name, a graph as `N 'first node' 'last node'`, a plan as `plan#K`.
 * `serial` (may be NULL) receives the entry's position among the entries of all devices, so
 * that logs of several devices can be merged. No raw pointer is ever logged. */
bool         ggspec_buft_is_vdev(VD(backend_buffer_type_t) buft);
/* while suspended (true), no device logs anything (a leak check's measuring cycles, which only
   a C target runs) */
void         ggspec_vdev_log_suspend(bool suspended);
size_t       ggspec_vdev_log_len(VD(backend_buffer_type_t) buft);
const char * ggspec_vdev_log_entry(VD(backend_buffer_type_t) buft, size_t i, size_t * serial);
void         ggspec_vdev_log_clear(VD(backend_buffer_type_t) buft);

#ifdef __cplusplus
}
#endif
