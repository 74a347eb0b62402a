/*
 * vdev.c - the virtual device backend (see ggspec-vdev.h for what it models).
 *
 * A device owns a buffer type, a FIFO queue of pending operations and, while it lives, one
 * backend. Each buffer keeps its bytes in a private host block ("storage") and hands out
 * addresses inside a reservation mapped with no access rights ("base"), so tensor->data of
 * a tensor in a device buffer is an address the host cannot use. Every byte that moves goes
 * through an address translation: tensor->data + offset - base = offset in storage.
 *
 * Asynchronous operations are submitted to the device queue. An eager device runs each one
 * at submission; a lazy one runs them in order at synchronize, which is when the host memory
 * given to set_async is read and the host memory given to get_async is written. Synchronous
 * buffer operations (set, get, clear, and a cpy_tensor that copies) and freeing the backend
 * drain the device's queue first, and freeing a buffer drains every device's queue, as a GPU
 * runtime synchronizes before a blocking copy or a free.
 *
 * Devices are never freed: their buffer type must stay valid for buffers and for callers
 * that keep the buffer type after freeing the backend. They are small, and a global list
 * keeps them reachable.
 *
 * Everything of the host ggml-backend is reached through VD()/VDU() (vdev-prefix.h), so this
 * file also builds as a shim against another ggml-backend's headers.
 *
 * Graphs are computed "on the device" by the host ggml-backend's own CPU backend, run on
 * shadow tensors: at submission, every node and source of the graph is copied with its data
 * pointer translated from the device address to the same bytes in storage (which is host
 * memory) and its sources pointed at the shadows. The shadow graph is one queue operation,
 * run in submission order like everything else: at once on an eager device, at synchronize on
 * a lazy one. Natively that CPU backend is ggspec's; as a shim it is the target's, so the
 * kernels are always those of the build under test. Each device keeps one such CPU backend
 * (one thread), created on its first graph.
 */
#define _DEFAULT_SOURCE

#include "vdev-prefix.h"
#include "ggspec-vdev.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "versions.h"

enum vdev_op_kind {
    VDEV_OP_SET,   /* host -> device */
    VDEV_OP_GET,   /* device -> host */
    VDEV_OP_CPY,   /* device -> device */
    VDEV_OP_GRAPH, /* compute a captured graph */
};

struct vdev_buffer;
struct vdev_graph;

struct vdev_op {
    enum vdev_op_kind    kind;
    struct vdev_buffer * dst;      /* SET, CPY */
    size_t               dst_offs;
    struct vdev_buffer * src;      /* GET, CPY */
    size_t               src_offs;
    const void *         host_src; /* SET */
    void *               host_dst; /* GET */
    size_t               size;
    struct vdev_graph *  graph;    /* GRAPH (owned by the operation) */
};

struct vdev_log_entry {
    size_t serial; /* order among the entries of every device */
    size_t text;   /* offset of the entry's text (NUL-terminated) in the device's log_text */
};

struct vdev_device {
    char *                         name;
    struct ggspec_vdev_params      params; /* params.name points at name */
    struct VD(backend_buffer_type) buft;
    struct vdev_op *               queue;
    size_t                         queue_len;
    size_t                         queue_cap;
    backend_t                      cpu;    /* computes this device's graphs; made on first use */
    size_t                         graphs_run;
    size_t                         n_buffers; /* buffers allocated so far: buffer#k is the k-th */
    size_t                         n_plans;   /* graph plans created so far: plan#k is the k-th */
    /* every entry called, in order (see ggspec-vdev.h); in pages of its own, not on the heap,
       so that the checks measuring the C heap (conformance/checks/_leaks.py) do not see it */
    struct vdev_log_entry *        log;
    size_t                         log_len;
    size_t                         log_cap;
    char *                         log_text;
    size_t                         text_len;
    size_t                         text_cap;
    struct vdev_device *           next;   /* the list of all devices */
};

/* the bits of ggspec_vdev_params.absent (reference/vdev.py OPTIONAL_ENTRIES, in this order) */
enum {
    VDEV_SET_ASYNC = 1u << 0, VDEV_GET_ASYNC = 1u << 1, VDEV_SYNCHRONIZE = 1u << 2, VDEV_RESET = 1u << 3,
    VDEV_INIT_TENSOR = 1u << 4, VDEV_ALL_OPTIONAL = (1u << 5) - 1,
};

/* whether the device has this optional entry */
static bool has(const struct vdev_device * dev, unsigned entry) {
    return (dev->params.absent & entry) == 0;
}

struct vdev_buffer {
    struct vdev_device * dev;
    unsigned char *      storage;  /* the bytes */
    void *               map;      /* the inaccessible reservation addresses are taken from */
    char *               base;     /* what get_base returns: map + params.base_offset */
    size_t               map_len;
    size_t               size;
    size_t               init_tensor_calls;
    size_t               reset_calls;
    size_t               index;    /* buffer#index of its device */
};

static struct vdev_device * all_devices = NULL;
static size_t log_serial = 0;
static bool   log_suspended = false;

/* the longest device name ggspec_vdev_init accepts, in bytes (a tensor's name is as long at most:
   the log's entries are formatted for names this long) */
#define VDEV_MAX_NAME 63

static void vdev_check(bool cond, const char * what) {
    if (!cond) {
        fflush(stdout);
        fprintf(stderr, "ggspec vdev: %s\n", what);
        abort();
    }
}

/* the entry log: one line per entry called, naming the object (buft, backend, buffer#k) and
   the arguments that identify tensors (by name) and ranges; never a pointer */

/* room for `need` more bytes in a mapping of `*cap` bytes holding `used` (a new, larger mapping
   when it is full; the old one is copied and unmapped) */
static void * log_room(void * map, size_t used, size_t * cap, size_t need) {
    if (used + need <= *cap) {
        return map;
    }
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = *cap == 0 ? 4 * page : 2 * *cap;
    while (len < used + need) {
        len *= 2;
    }
    void * grown = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    vdev_check(grown != MAP_FAILED, "out of memory for the log");
    if (map != NULL) {
        memcpy(grown, map, used);
        munmap(map, *cap);
    }
    *cap = len;
    return grown;
}

static void vlog(struct vdev_device * dev, const char * fmt, ...) {
    if (log_suspended) {
        return;
    }
    char text[512]; /* names are at most 63 bytes: an entry is far shorter */
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    vdev_check(n >= 0 && (size_t)n < sizeof(text), "cannot format a log entry");
    size_t entries_cap = dev->log_cap * sizeof(struct vdev_log_entry);
    dev->log = log_room(dev->log, dev->log_len * sizeof(struct vdev_log_entry), &entries_cap,
                        sizeof(struct vdev_log_entry));
    dev->log_cap = entries_cap / sizeof(struct vdev_log_entry);
    dev->log_text = log_room(dev->log_text, dev->text_len, &dev->text_cap, (size_t)n + 1);
    memcpy(dev->log_text + dev->text_len, text, (size_t)n + 1);
    dev->log[dev->log_len++] = (struct vdev_log_entry) { .serial = log_serial++, .text = dev->text_len };
    dev->text_len += (size_t)n + 1;
}

static const char * tname(const tensor_t * t) {
    return t != NULL ? t->name : "(null)";
}

/* the queue */

static void run_graph(struct vdev_graph * g);

static void run_op(const struct vdev_op * op) {
    if (op->kind == VDEV_OP_GRAPH) {
        run_graph(op->graph);
        return;
    }
    if (op->size == 0) {
        return;
    }
    switch (op->kind) {
        case VDEV_OP_SET:
            memcpy(op->dst->storage + op->dst_offs, op->host_src, op->size);
            break;
        case VDEV_OP_GET:
            memcpy(op->host_dst, op->src->storage + op->src_offs, op->size);
            break;
        case VDEV_OP_CPY:
            memmove(op->dst->storage + op->dst_offs, op->src->storage + op->src_offs, op->size);
            break;
        case VDEV_OP_GRAPH:
            break;
    }
}

static void drain(struct vdev_device * dev) {
    for (size_t i = 0; i < dev->queue_len; i++) {
        run_op(&dev->queue[i]);
    }
    dev->queue_len = 0;
}

static void submit(struct vdev_device * dev, struct vdev_op op) {
    if (!dev->params.lazy) {
        run_op(&op);
        return;
    }
    if (dev->queue_len == dev->queue_cap) {
        size_t cap = dev->queue_cap == 0 ? 16 : 2 * dev->queue_cap;
        struct vdev_op * q = realloc(dev->queue, cap * sizeof(*q));
        vdev_check(q != NULL, "out of memory for the queue");
        dev->queue = q;
        dev->queue_cap = cap;
    }
    dev->queue[dev->queue_len++] = op;
}

/* buffers */

static const char * vdev_buffer_name(buffer_t buffer);

static struct vdev_buffer * as_vdev_buffer(buffer_t buffer) {
    if (buffer == NULL || buffer->iface.get_name != vdev_buffer_name) {
        return NULL;
    }
    return buffer->context;
}

/* the device buffer of dev that holds tensor's bytes, or NULL */
static struct vdev_buffer * tensor_buffer_on(const struct vdev_device * dev, const tensor_t * tensor) {
    buffer_t buf = tensor->view_src != NULL ? tensor->view_src->buffer : tensor->buffer;
    struct vdev_buffer * vb = as_vdev_buffer(buf);
    return vb != NULL && vb->dev == dev ? vb : NULL;
}

/* the device buffer (of any device) that holds tensor's bytes; aborts when there is none */
static struct vdev_buffer * tensor_device_buffer(const tensor_t * tensor, const char * what) {
    buffer_t buf = tensor->view_src != NULL ? tensor->view_src->buffer : tensor->buffer;
    struct vdev_buffer * vb = as_vdev_buffer(buf);
    vdev_check(vb != NULL, what);
    return vb;
}

/* storage offset of bytes [offset, offset + size) of tensor, which must lie inside vb */
static size_t locate(const struct vdev_buffer * vb, const tensor_t * tensor, size_t offset, size_t size) {
    const uintptr_t base = (uintptr_t)vb->base;
    const uintptr_t addr = (uintptr_t)tensor->data;
    vdev_check(addr >= base && addr - base <= vb->size, "tensor address outside its device buffer");
    const size_t start = (size_t)(addr - base);
    vdev_check(offset <= vb->size - start && size <= vb->size - start - offset,
               "access past the end of a device buffer");
    return start + offset;
}

/* the device buffer an entry of ours was called on; another type's buffer (rc.8's tensor_get
   calls t->buffer's entry with the view's root buffer, erratum TDATA-6) aborts, as touching its
   context as ours would crash a real device backend */
static struct vdev_buffer * own_buffer(buffer_t buffer) {
    struct vdev_buffer * vb = as_vdev_buffer(buffer);
    vdev_check(vb != NULL, "a buffer entry of the device was called on another type's buffer");
    return vb;
}

static const char * vdev_buffer_name(buffer_t buffer) {
    const struct vdev_buffer * vb = own_buffer(buffer);
    vlog(vb->dev, "get_name buffer#%zu", vb->index);
    return vb->dev->name;
}

static void vdev_buffer_free(buffer_t buffer) {
    struct vdev_buffer * vb = own_buffer(buffer);
    vlog(vb->dev, "free_buffer buffer#%zu", vb->index);
    /* any device's queue may hold an operation on this buffer (async set/get accept a buffer
       of another device), so all of them are drained */
    for (struct vdev_device * dev = all_devices; dev != NULL; dev = dev->next) {
        drain(dev);
    }
    free(vb->storage);
    munmap(vb->map, vb->map_len);
    free(vb);
}

static void * vdev_buffer_get_base(buffer_t buffer) {
    const struct vdev_buffer * vb = own_buffer(buffer);
    vlog(vb->dev, "get_base buffer#%zu", vb->index);
    return vb->base;
}

static void vdev_buffer_init_tensor(buffer_t buffer, tensor_t * tensor) {
    struct vdev_buffer * vb = own_buffer(buffer);
    vlog(vb->dev, "init_tensor buffer#%zu '%s'", vb->index, tname(tensor));
    vb->init_tensor_calls++;
}

static void vdev_buffer_set_tensor(buffer_t buffer, tensor_t * tensor, const void * data, size_t offset, size_t size) {
    struct vdev_buffer * vb = own_buffer(buffer);
    vlog(vb->dev, "set_tensor buffer#%zu '%s' %zu %zu", vb->index, tname(tensor), offset, size);
    drain(vb->dev);
    const size_t at = locate(vb, tensor, offset, size);
    if (size > 0) {
        memcpy(vb->storage + at, data, size);
    }
}

static void vdev_buffer_get_tensor(buffer_t buffer, const tensor_t * tensor, void * data, size_t offset, size_t size) {
    struct vdev_buffer * vb = own_buffer(buffer);
    vlog(vb->dev, "get_tensor buffer#%zu '%s' %zu %zu", vb->index, tname(tensor), offset, size);
    drain(vb->dev);
    const size_t at = locate(vb, tensor, offset, size);
    if (size > 0) {
        memcpy(data, vb->storage + at, size);
    }
}

/* dst is in this buffer; src can be copied (after draining) when it is on the same device.
   rc.8 calls the *source* buffer's entry with the destination's buffer (erratum COPY-6): a
   buffer of another type (a WebGPU buffer, say) is refused as an unreachable source would be,
   so that tensor_copy goes on to the staged copy (COPY-7), instead of reading its context as
   ours (spec/backend.md, What a device backend must do) */
static bool vdev_buffer_cpy_tensor(buffer_t buffer, const tensor_t * src, tensor_t * dst) {
    struct vdev_buffer * vb = as_vdev_buffer(buffer);
    if (vb == NULL) {
        return false;
    }
    vlog(vb->dev, "cpy_tensor buffer#%zu '%s' '%s'", vb->index, tname(src), tname(dst));
    struct vdev_buffer * src_vb = tensor_buffer_on(vb->dev, src);
    if (src_vb == NULL) {
        return false;
    }
    drain(vb->dev);
    const size_t n = VD(nbytes)(src);
    const size_t from = locate(src_vb, src, 0, n);
    const size_t to = locate(vb, dst, 0, n);
    if (n > 0) {
        memmove(vb->storage + to, src_vb->storage + from, n);
    }
    return true;
}

static void vdev_buffer_clear(buffer_t buffer, uint8_t value) {
    struct vdev_buffer * vb = own_buffer(buffer);
    vlog(vb->dev, "clear buffer#%zu %u", vb->index, (unsigned)value);
    drain(vb->dev);
    memset(vb->storage, value, vb->size);
}

static void vdev_buffer_reset(buffer_t buffer) {
    struct vdev_buffer * vb = own_buffer(buffer);
    vlog(vb->dev, "reset buffer#%zu", vb->index);
    vb->reset_calls++;
}

/* the buffer type; its context is the device */

static const char * vdev_buft_name(buft_t buft) {
    struct vdev_device * dev = buft->context;
    vlog(dev, "get_name buft");
    return dev->name;
}

static buffer_t vdev_buft_alloc_buffer(buft_t buft, size_t size) {
    struct vdev_device * dev = buft->context;
    vlog(dev, "alloc_buffer buft %zu", size);
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t bytes = (size > 0 ? size : 1) + dev->params.base_offset;

    struct vdev_buffer * vb = calloc(1, sizeof(*vb));
    unsigned char * storage = calloc(1, bytes);
    const size_t map_len = (bytes + page - 1) / page * page;
    void * base = map_len >= bytes && bytes > dev->params.base_offset
        ? mmap(NULL, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        : MAP_FAILED;
    if (vb == NULL || storage == NULL || base == MAP_FAILED) {
        /* as a GPU backend does when device memory runs out: report and return NULL */
        fprintf(stderr, "ggspec vdev: %s: failed to allocate a buffer of %zu bytes\n", dev->name, size);
        free(vb);
        free(storage);
        if (base != MAP_FAILED) {
            munmap(base, map_len);
        }
        return NULL;
    }

    *vb = (struct vdev_buffer) {
        .dev = dev, .storage = storage, .map = base, .base = (char *)base + dev->params.base_offset,
        .map_len = map_len, .size = size,
        .init_tensor_calls = 0, .reset_calls = 0, .index = dev->n_buffers++,
    };

    const struct VD(backend_buffer_i) iface = {
        .get_name    = vdev_buffer_name,
        .free_buffer = vdev_buffer_free,
        .get_base    = vdev_buffer_get_base,
        .init_tensor = has(dev, VDEV_INIT_TENSOR) ? vdev_buffer_init_tensor : NULL,
        .set_tensor  = vdev_buffer_set_tensor,
        .get_tensor  = vdev_buffer_get_tensor,
        .cpy_tensor  = dev->params.buffer_cpy_tensor ? vdev_buffer_cpy_tensor : NULL,
        .clear       = vdev_buffer_clear,
        .reset       = has(dev, VDEV_RESET) ? vdev_buffer_reset : NULL,
    };
    return VD(backend_buffer_init)(buft, iface, vb, size);
}

static size_t vdev_buft_get_alignment(buft_t buft) {
    struct vdev_device * dev = buft->context;
    vlog(dev, "get_alignment buft");
    return dev->params.alignment;
}

/* present only when alloc_pad != 0: nbytes rounded up to a multiple of alloc_pad */
static size_t vdev_buft_get_alloc_size(buft_t buft, const tensor_t * tensor) {
    struct vdev_device * dev = buft->context;
    vlog(dev, "get_alloc_size buft '%s'", tname(tensor));
    const size_t pad = dev->params.alloc_pad;
    return (VD(nbytes)(tensor) + pad - 1) / pad * pad;
}

static const char * vdev_backend_name(backend_t backend);

/* how a log names a backend given as an argument: a device's own name (no entry is called on
   it), another backend's name as its get_name entry gives it */
static const char * backend_label(backend_t backend) {
    if (backend == NULL) {
        return "(null)";
    }
    if (ggspec_backend_is_vdev(backend)) {
        const struct vdev_device * dev = backend->context;
        return dev->name;
    }
    return backend->iface.get_name(backend);
}

static bool vdev_buft_supports_backend(buft_t buft, backend_t backend) {
    vlog(buft->context, "supports_backend buft %s", backend_label(backend));
    return ggspec_backend_is_vdev(backend) && backend->context == buft->context;
}

/* the backend; its context is the device */

static const char * vdev_backend_name(backend_t backend) {
    struct vdev_device * dev = backend->context;
    vlog(dev, "get_name backend");
    return dev->name;
}

static void vdev_backend_free(backend_t backend) {
    vlog(backend->context, "free backend");
    drain(backend->context);
    free(backend);
}

static buft_t vdev_backend_default_buffer_type(backend_t backend) {
    struct vdev_device * dev = backend->context;
    vlog(dev, "get_default_buffer_type backend");
    return &dev->buft;
}

static void vdev_backend_set_tensor_async(backend_t backend, tensor_t * tensor, const void * data,
                                          size_t offset, size_t size) {
    struct vdev_device * dev = backend->context;
    vlog(dev, "set_tensor_async backend '%s' %zu %zu", tname(tensor), offset, size);
    struct vdev_buffer * vb = tensor_device_buffer(tensor, "set_tensor_async: the tensor is not in a device buffer");
    const size_t at = locate(vb, tensor, offset, size);
    submit(dev, (struct vdev_op) { .kind = VDEV_OP_SET, .dst = vb, .dst_offs = at, .host_src = data, .size = size });
}

static void vdev_backend_get_tensor_async(backend_t backend, const tensor_t * tensor, void * data,
                                          size_t offset, size_t size) {
    struct vdev_device * dev = backend->context;
    vlog(dev, "get_tensor_async backend '%s' %zu %zu", tname(tensor), offset, size);
    struct vdev_buffer * vb = tensor_device_buffer(tensor, "get_tensor_async: the tensor is not in a device buffer");
    const size_t at = locate(vb, tensor, offset, size);
    submit(dev, (struct vdev_op) { .kind = VDEV_OP_GET, .src = vb, .src_offs = at, .host_dst = data, .size = size });
}

/* a device-to-device copy when both tensors are on this device; false otherwise */
static bool vdev_backend_cpy_tensor_async(backend_t backend, const tensor_t * src, tensor_t * dst) {
    struct vdev_device * dev = backend->context;
    vlog(dev, "cpy_tensor_async backend '%s' '%s'", tname(src), tname(dst));
    struct vdev_buffer * src_vb = tensor_buffer_on(dev, src);
    struct vdev_buffer * dst_vb = tensor_buffer_on(dev, dst);
    if (src_vb == NULL || dst_vb == NULL) {
        return false;
    }
    const size_t n = VD(nbytes)(src);
    submit(dev, (struct vdev_op) {
        .kind = VDEV_OP_CPY,
        .src = src_vb, .src_offs = locate(src_vb, src, 0, n),
        .dst = dst_vb, .dst_offs = locate(dst_vb, dst, 0, n),
        .size = n,
    });
    return true;
}

static void vdev_backend_synchronize(backend_t backend) {
    vlog(backend->context, "synchronize backend");
    drain(backend->context);
}

static bool vdev_backend_supports_op(backend_t backend, const tensor_t * op) {
    struct vdev_device * dev = backend->context;
    vlog(dev, "supports_op backend '%s' %s", tname(op), VD(op_name)(op->op));
    const unsigned code = (unsigned)op->op;
    return code < 128 && ((dev->params.ops_mask[code / 64] >> (code % 64)) & 1u) != 0;
}

/* graphs */

#ifndef VDEV_MAX_SRC
#define VDEV_MAX_SRC 10 /* GGML_MAX_SRC in rc.8 and in ggspec */
#endif


/* a graph captured at submission: per node, the node's shadow followed by its sources' */
struct vdev_graph {
    struct vdev_device * dev;
    int                  n_nodes;
    tensor_t *           shadows; /* n_nodes * (1 + VDEV_MAX_SRC) */
    tensor_t **          nodes;   /* n_nodes pointers into shadows */
};

/* the shadow of t: its fields, with data pointing at the same bytes in storage */
static void make_shadow(const struct vdev_device * dev, const tensor_t * t, tensor_t * shadow) {
    *shadow = *t;
    struct vdev_buffer * vb = tensor_buffer_on(dev, t);
    vdev_check(vb != NULL, "graph_compute: a tensor of the graph is not in a buffer of this device");
    vdev_check(t->data != NULL, "graph_compute: a tensor of the graph is not allocated");
    shadow->data     = vb->storage + locate(vb, t, 0, VD(nbytes)(t));
    shadow->buffer   = NULL;
    shadow->view_src = NULL;
    shadow->grad     = NULL;
    for (int j = 0; j < VDEV_MAX_SRC; j++) {
        shadow->src[j] = NULL;
    }
}

/* ops that read and write nothing (their node only describes memory): the CPU kernels skip
   them, so, like a real device backend, the device does not look at where they live (a
   scheduler's split may hold a view of a tensor on another backend, SCHED-13) */
static bool is_noop(const tensor_t * t) {
    return t->op == VDU(OP_NONE) || t->op == VDU(OP_VIEW) || t->op == VDU(OP_RESHAPE) ||
           t->op == VDU(OP_PERMUTE) || t->op == VDU(OP_TRANSPOSE);
}

static struct vdev_graph * capture_graph(struct vdev_device * dev, const cgraph_t * cgraph) {
    const int n = cgraph->n_nodes;
    struct vdev_graph * g = calloc(1, sizeof(*g));
    vdev_check(g != NULL, "out of memory for a graph");
    g->dev     = dev;
    g->n_nodes = n;
    g->shadows = calloc((size_t)(n > 0 ? n : 1) * (1 + VDEV_MAX_SRC), sizeof(tensor_t));
    g->nodes   = calloc((size_t)(n > 0 ? n : 1), sizeof(tensor_t *));
    vdev_check(g->shadows != NULL && g->nodes != NULL, "out of memory for a graph");

    for (int i = 0; i < n; i++) {
        const tensor_t * node = cgraph->nodes[i];
        tensor_t * block = g->shadows + (size_t)i * (1 + VDEV_MAX_SRC);
        if (is_noop(node)) { /* computed as nothing: no memory, no sources */
            block[0] = *node;
            block[0].data = NULL;
            block[0].buffer = NULL;
            block[0].view_src = NULL;
            block[0].grad = NULL;
            for (int j = 0; j < VDEV_MAX_SRC; j++) {
                block[0].src[j] = NULL;
            }
            g->nodes[i] = &block[0];
            continue;
        }
        make_shadow(dev, node, &block[0]);
        for (int j = 0; j < VDEV_MAX_SRC; j++) {
            if (node->src[j] != NULL) {
                make_shadow(dev, node->src[j], &block[1 + j]);
                block[0].src[j] = &block[1 + j];
            }
        }
        g->nodes[i] = &block[0];
    }
    return g;
}

static void run_graph(struct vdev_graph * g) {
    struct vdev_device * dev = g->dev;
    if (dev->cpu == NULL) {
        dev->cpu = VD(backend_cpu_init)();
        vdev_check(dev->cpu != NULL, "graph_compute: no CPU backend to compute with");
        VD(backend_cpu_set_n_threads)(dev->cpu, 1);
    }
    cgraph_t view;
    memset(&view, 0, sizeof(view));
    view.size    = g->n_nodes;
    view.n_nodes = g->n_nodes;
    view.nodes   = g->nodes;
    VD(backend_graph_compute)(dev->cpu, &view);
    dev->graphs_run++;

    free(g->shadows);
    free(g->nodes);
    free(g);
}

/* a graph in the log: its node count and its first and last nodes' names */
#define GRAPH_FMT "%d '%s' '%s'"
#define GRAPH_ARGS(n, nodes) (n), (n) > 0 ? tname((nodes)[0]) : "", (n) > 0 ? tname((nodes)[(n) - 1]) : ""

static bool submit_graph(backend_t backend, cgraph_t * cgraph) {
    struct vdev_device * dev = backend->context;
    struct vdev_graph * g = capture_graph(dev, cgraph);
    submit(dev, (struct vdev_op) { .kind = VDEV_OP_GRAPH, .graph = g });
    return !dev->params.compute_fails;
}

static bool vdev_backend_graph_compute(backend_t backend, cgraph_t * cgraph) {
    vlog(backend->context, "graph_compute backend " GRAPH_FMT, GRAPH_ARGS(cgraph->n_nodes, cgraph->nodes));
    return submit_graph(backend, cgraph);
}

/* a plan keeps its own copy of the node list; computing it submits that list as a graph */
struct vdev_plan {
    int         n_nodes;
    tensor_t ** nodes;
    size_t      index; /* plan#index of its device */
};

static VD(backend_graph_plan_t) vdev_backend_graph_plan_create(backend_t backend, const cgraph_t * cgraph) {
    struct vdev_device * dev = backend->context;
    vlog(dev, "graph_plan_create backend " GRAPH_FMT, GRAPH_ARGS(cgraph->n_nodes, cgraph->nodes));
    struct vdev_plan * plan = calloc(1, sizeof(*plan));
    vdev_check(plan != NULL, "out of memory for a plan");
    plan->index = dev->n_plans++;
    plan->n_nodes = cgraph->n_nodes;
    plan->nodes   = calloc((size_t)(cgraph->n_nodes > 0 ? cgraph->n_nodes : 1), sizeof(tensor_t *));
    vdev_check(plan->nodes != NULL, "out of memory for a plan");
    for (int i = 0; i < cgraph->n_nodes; i++) {
        plan->nodes[i] = cgraph->nodes[i];
    }
    return plan;
}

static void vdev_backend_graph_plan_free(backend_t backend, VD(backend_graph_plan_t) plan) {
    struct vdev_plan * p = plan;
    vlog(backend->context, "graph_plan_free backend plan#%zu", p->index);
    free(p->nodes);
    free(p);
}

static void vdev_backend_graph_plan_compute(backend_t backend, VD(backend_graph_plan_t) plan) {
    struct vdev_plan * p = plan;
    vlog(backend->context, "graph_plan_compute backend plan#%zu", p->index);
    cgraph_t view;
    memset(&view, 0, sizeof(view));
    view.size    = p->n_nodes;
    view.n_nodes = p->n_nodes;
    view.nodes   = p->nodes;
    submit_graph(backend, &view);
}

/* a plan's computation reports no failure in the oldest form (graph_plan_compute returned void) */
static bool vdev_backend_plan_run(backend_t backend, VD(backend_graph_plan_t) plan) {
    vdev_backend_graph_plan_compute(backend, plan);
    return true;
}

/* the entries of later builds of this API generation (versions.h) */
DEVICE_COMPUTE_ENTRIES(vdev, vdev_backend_graph_compute, vdev_backend_plan_run)
DEVICE_GUID(vdev, 'g', 'g', 's', 'p', 'e', 'c', '-', 'v', 'd', 'e', 'v', 0, 0, 0, 0, 1)
DEVICE_CPY_TENSOR_ASYNC_ENTRY(vdev, vdev_backend_cpy_tensor_async)

/* the public functions */

backend_t ggspec_vdev_init(const struct ggspec_vdev_params * p) {
    const char * name = p->name != NULL ? p->name : "VDEV";
    const size_t len = strlen(name);
    if (len > VDEV_MAX_NAME) { /* the entry log formats names of at most this many bytes */
        fprintf(stderr, "ggspec vdev: a device name of %zu bytes (at most %d): no device\n", len, VDEV_MAX_NAME);
        return NULL;
    }
    if ((p->absent & ~(uint32_t)VDEV_ALL_OPTIONAL) != 0 || (p->lazy && (p->absent & VDEV_SYNCHRONIZE) != 0)) {
        fprintf(stderr, "ggspec vdev: absent entries 0x%x: unknown bits, or a lazy device without synchronize: "
                        "no device\n", (unsigned)p->absent);
        return NULL;
    }
    struct vdev_device * dev = calloc(1, sizeof(*dev));
    vdev_check(dev != NULL, "out of memory for a device");

    dev->name = malloc(len + 1);
    vdev_check(dev->name != NULL, "out of memory for a device");
    memcpy(dev->name, name, len + 1);

    dev->params = *p;
    dev->params.name = dev->name;

    dev->buft = (struct VD(backend_buffer_type)) {
        .iface = {
            .get_name         = vdev_buft_name,
            .alloc_buffer     = vdev_buft_alloc_buffer,
            .get_alignment    = vdev_buft_get_alignment,
            .get_alloc_size   = p->alloc_pad != 0 ? vdev_buft_get_alloc_size : NULL,
            .supports_backend = vdev_buft_supports_backend,
            .is_host          = NULL,
        },
        .context = dev,
    };

    dev->next = all_devices;
    all_devices = dev;

    backend_t backend = malloc(sizeof(*backend));
    vdev_check(backend != NULL, "out of memory for a backend");
    *backend = (struct VD(backend)) {
        DEVICE_GUID_INIT(vdev)
        .iface = {
            .get_name                = vdev_backend_name,
            .free                    = vdev_backend_free,
            .get_default_buffer_type = vdev_backend_default_buffer_type,
            .set_tensor_async        = p->async_entries && has(dev, VDEV_SET_ASYNC) ? vdev_backend_set_tensor_async : NULL,
            .get_tensor_async        = p->async_entries && has(dev, VDEV_GET_ASYNC) ? vdev_backend_get_tensor_async : NULL,
            .cpy_tensor_async        = p->cpy_tensor_async ? vdev_cpy_tensor_async_entry : NULL,
            .synchronize             = has(dev, VDEV_SYNCHRONIZE) ? vdev_backend_synchronize : NULL,
            .graph_plan_create       = vdev_backend_graph_plan_create,
            .graph_plan_free         = vdev_backend_graph_plan_free,
            .graph_plan_compute      = vdev_plan_compute_entry,
            .graph_compute           = vdev_graph_compute_entry,
            .supports_op             = vdev_backend_supports_op,
        },
        .context = dev,
    };
    return backend;
}

bool ggspec_backend_is_vdev(backend_t b) {
    return b != NULL && b->iface.get_name == vdev_backend_name;
}

buft_t ggspec_vdev_buffer_type(backend_t b) {
    vdev_check(ggspec_backend_is_vdev(b), "ggspec_vdev_buffer_type: not a vdev backend");
    struct vdev_device * dev = b->context;
    return &dev->buft;
}

static struct vdev_buffer * checked_buffer(buffer_t buf, size_t offset, size_t size) {
    struct vdev_buffer * vb = as_vdev_buffer(buf);
    vdev_check(vb != NULL, "not a vdev buffer");
    vdev_check(offset <= vb->size && size <= vb->size - offset, "raw access past the end of a device buffer");
    return vb;
}

void ggspec_vdev_read(buffer_t buf, size_t offset, void * out, size_t size) {
    const struct vdev_buffer * vb = checked_buffer(buf, offset, size);
    if (size > 0) {
        memcpy(out, vb->storage + offset, size);
    }
}

void ggspec_vdev_write(buffer_t buf, size_t offset, const void * in, size_t size) {
    struct vdev_buffer * vb = checked_buffer(buf, offset, size);
    if (size > 0) {
        memcpy(vb->storage + offset, in, size);
    }
}

size_t ggspec_vdev_pending(backend_t b) {
    vdev_check(ggspec_backend_is_vdev(b), "ggspec_vdev_pending: not a vdev backend");
    const struct vdev_device * dev = b->context;
    return dev->queue_len;
}

size_t ggspec_vdev_init_tensor_calls(buffer_t buf) {
    const struct vdev_buffer * vb = as_vdev_buffer(buf);
    vdev_check(vb != NULL, "not a vdev buffer");
    return vb->init_tensor_calls;
}

size_t ggspec_vdev_reset_calls(buffer_t buf) {
    const struct vdev_buffer * vb = as_vdev_buffer(buf);
    vdev_check(vb != NULL, "not a vdev buffer");
    return vb->reset_calls;
}

void ggspec_vdev_log_suspend(bool suspended) {
    log_suspended = suspended;
}

bool ggspec_buft_is_vdev(buft_t buft) {
    return buft != NULL && buft->iface.get_name == vdev_buft_name;
}

size_t ggspec_vdev_log_len(buft_t buft) {
    vdev_check(ggspec_buft_is_vdev(buft), "ggspec_vdev_log_len: not a vdev buffer type");
    const struct vdev_device * dev = buft->context;
    return dev->log_len;
}

const char * ggspec_vdev_log_entry(buft_t buft, size_t i, size_t * serial) {
    vdev_check(ggspec_buft_is_vdev(buft), "ggspec_vdev_log_entry: not a vdev buffer type");
    const struct vdev_device * dev = buft->context;
    vdev_check(i < dev->log_len, "ggspec_vdev_log_entry: no such entry");
    if (serial != NULL) {
        *serial = dev->log[i].serial;
    }
    return dev->log_text + dev->log[i].text;
}

void ggspec_vdev_log_clear(buft_t buft) {
    vdev_check(ggspec_buft_is_vdev(buft), "ggspec_vdev_log_clear: not a vdev buffer type");
    struct vdev_device * dev = buft->context;
    if (dev->log != NULL) {
        munmap(dev->log, dev->log_cap * sizeof(struct vdev_log_entry));
    }
    if (dev->log_text != NULL) {
        munmap(dev->log_text, dev->text_cap);
    }
    dev->log = NULL;
    dev->log_text = NULL;
    dev->log_len = dev->log_cap = dev->text_len = dev->text_cap = 0;
}

size_t ggspec_vdev_graphs_run(backend_t b) {
    vdev_check(ggspec_backend_is_vdev(b), "ggspec_vdev_graphs_run: not a vdev backend");
    const struct vdev_device * dev = b->context;
    return dev->graphs_run;
}
