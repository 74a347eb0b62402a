/*
 * cpu.c - the CPU backend: host-memory buffers (malloc'd, or wrapping caller memory) and a
 * backend without any asynchronous entries that computes graphs with the graph executor
 * (executor.c) on n_threads threads.
 */
#include "ggspec-backend-impl.h"

#include <stdlib.h>
#include <string.h>

#include "assert.h"

/* every tensor address the CPU buffer type hands out is a multiple of this */
#define CPU_ALIGNMENT 64

/* buffers; the context is the base address */

static const char * cpu_buffer_name(ggspec_backend_buffer_t buffer) {
    GGSPEC_UNUSED(buffer);
    return "CPU";
}

static void * cpu_buffer_get_base(ggspec_backend_buffer_t buffer) {
    return buffer->context;
}

static void cpu_buffer_free(ggspec_backend_buffer_t buffer) {
    free(buffer->context);
}

static void cpu_buffer_set_tensor(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor,
                                  const void * data, size_t offset, size_t size) {
    GGSPEC_UNUSED(buffer);
    if (size > 0) {
        memcpy((char *)tensor->data + offset, data, size);
    }
}

static void cpu_buffer_get_tensor(ggspec_backend_buffer_t buffer, const struct ggspec_tensor * tensor,
                                  void * data, size_t offset, size_t size) {
    GGSPEC_UNUSED(buffer);
    if (size > 0) {
        memcpy(data, (const char *)tensor->data + offset, size);
    }
}

/* dst is in this buffer; any src whose bytes are host memory can be copied directly */
static bool cpu_buffer_cpy_tensor(ggspec_backend_buffer_t buffer, const struct ggspec_tensor * src,
                                  struct ggspec_tensor * dst) {
    GGSPEC_UNUSED(buffer);
    if (!ggspec_backend_buffer_is_host(src->buffer)) {
        return false;
    }
    const size_t n = ggspec_nbytes(src);
    if (n > 0) {
        memcpy(dst->data, src->data, n);
    }
    return true;
}

static void cpu_buffer_clear(ggspec_backend_buffer_t buffer, uint8_t value) {
    if (buffer->size > 0) {
        memset(buffer->context, value, buffer->size);
    }
}

/* a CPU buffer's entries; free_buffer is NULL where the memory belongs to the caller
   (cpu_buffer_from_ptr), which is then not freed */
#define CPU_BUFFER_IFACE(free_buffer_entry)        \
    {                                              \
        .get_name    = cpu_buffer_name,            \
        .free_buffer = free_buffer_entry,          \
        .get_base    = cpu_buffer_get_base,        \
        .init_tensor = NULL,                       \
        .set_tensor  = cpu_buffer_set_tensor,      \
        .get_tensor  = cpu_buffer_get_tensor,      \
        .cpy_tensor  = cpu_buffer_cpy_tensor,      \
        .clear       = cpu_buffer_clear,           \
        .reset       = NULL,                       \
    }

static const struct ggspec_backend_buffer_i cpu_buffer_iface          = CPU_BUFFER_IFACE(cpu_buffer_free);
static const struct ggspec_backend_buffer_i cpu_buffer_from_ptr_iface = CPU_BUFFER_IFACE(NULL);

/* the buffer type */

static const char * cpu_buft_name(ggspec_backend_buffer_type_t buft) {
    GGSPEC_UNUSED(buft);
    return "CPU";
}

static ggspec_backend_buffer_t cpu_buft_alloc_buffer(ggspec_backend_buffer_type_t buft, size_t size) {
    /*
     * malloc's result need not be CPU_ALIGNMENT-aligned, so the buffer is made CPU_ALIGNMENT
     * bytes larger (and reports that larger size) to leave room for aligning the first tensor.
     */
    /* BUFT-7 (profile fixed): a size whose padding wraps is an allocation that cannot succeed */
    GGSPEC_ASSERT(size <= SIZE_MAX - CPU_ALIGNMENT, "failed to allocate buffer");
    size += CPU_ALIGNMENT;
    void * data = malloc(size);
    GGSPEC_ASSERT(data != NULL, "failed to allocate buffer");
    return ggspec_backend_buffer_init(buft, cpu_buffer_iface, data, size);
}

static size_t cpu_buft_get_alignment(ggspec_backend_buffer_type_t buft) {
    GGSPEC_UNUSED(buft);
    return CPU_ALIGNMENT;
}

static bool cpu_buft_supports_backend(ggspec_backend_buffer_type_t buft, ggspec_backend_t backend) {
    GGSPEC_UNUSED(buft);
    return ggspec_backend_is_cpu(backend);
}

static bool cpu_buft_is_host(ggspec_backend_buffer_type_t buft) {
    GGSPEC_UNUSED(buft);
    return true;
}

ggspec_backend_buffer_type_t ggspec_backend_cpu_buffer_type(void) {
    static struct ggspec_backend_buffer_type cpu_buft = {
        .iface = {
            .get_name         = cpu_buft_name,
            .alloc_buffer     = cpu_buft_alloc_buffer,
            .get_alignment    = cpu_buft_get_alignment,
            .get_alloc_size   = NULL,
            .supports_backend = cpu_buft_supports_backend,
            .is_host          = cpu_buft_is_host,
        },
        .context = NULL,
    };
    return &cpu_buft;
}

/* enforces CPU-7 */
ggspec_backend_buffer_t ggspec_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    return ggspec_backend_buffer_init(ggspec_backend_cpu_buffer_type(), cpu_buffer_from_ptr_iface, ptr, size);
}

/* the backend */

struct cpu_backend_context {
    int    n_threads;
    void * work_data; /* graph_compute's work buffer: grows when a graph needs more, then reused */
    size_t work_size;
};

static const char * cpu_backend_name(ggspec_backend_t backend) {
    GGSPEC_UNUSED(backend);
    return "CPU";
}

static void cpu_backend_free(ggspec_backend_t backend) {
    struct cpu_backend_context * ctx = backend->context;
    free(ctx->work_data);
    free(ctx);
    free(backend);
}

static ggspec_backend_buffer_type_t cpu_backend_default_buffer_type(ggspec_backend_t backend) {
    GGSPEC_UNUSED(backend);
    return ggspec_backend_cpu_buffer_type();
}

static bool cpu_backend_supports_op(ggspec_backend_t backend, const struct ggspec_tensor * op) {
    GGSPEC_UNUSED(backend);
    switch (op->op) {
        case GGSPEC_OP_CPY:
            /* there is no conversion into the IQ2 types */
            return op->type != GGSPEC_TYPE_IQ2_XXS && op->type != GGSPEC_TYPE_IQ2_XS;
        case GGSPEC_OP_MUL_MAT:
            return op->src[1]->type == GGSPEC_TYPE_F32 ||
                   op->src[1]->type == ggspec_vec_dot_type(op->src[0]->type);
        default:
            return true;
    }
}

/*
 * Graphs. A plan holds its own copy of the graph's node list (CPU-19, profile fixed: rc.8
 * keeps only a shallow copy of the graph struct, so a graph cleared or rebuilt after planning
 * changes what the plan computes) and a work buffer of its own (CPU-18); graph_compute uses
 * the backend's work buffer, which only ever grows (CPU-17).
 */
struct cpu_plan {
    struct ggspec_cplan    cplan;
    struct ggspec_cgraph   cgraph; /* nodes points at the plan's own copy below */
    struct ggspec_tensor ** nodes;
};

static ggspec_backend_graph_plan_t cpu_backend_graph_plan_create(ggspec_backend_t backend, const struct ggspec_cgraph * cgraph) {
    const struct cpu_backend_context * ctx = backend->context;
    struct cpu_plan * plan = malloc(sizeof(*plan));
    GGSPEC_ASSERT(plan != NULL, "cpu_plan != NULL");

    plan->cplan  = ggspec_graph_plan(cgraph, ctx->n_threads);
    plan->cgraph = *cgraph;
    plan->nodes  = malloc(sizeof(struct ggspec_tensor *) * (size_t)(cgraph->n_nodes > 0 ? cgraph->n_nodes : 1));
    GGSPEC_ASSERT(plan->nodes != NULL, "cpu_plan->nodes != NULL");
    for (int i = 0; i < cgraph->n_nodes; i++) {
        plan->nodes[i] = cgraph->nodes[i];
    }
    plan->cgraph.nodes = plan->nodes;
    plan->cgraph.grads = NULL;
    plan->cgraph.leafs = NULL;
    plan->cgraph.n_leafs = 0;
    plan->cgraph.visited_hash_table.size = 0;
    plan->cgraph.visited_hash_table.keys = NULL;
    if (plan->cplan.work_size > 0) {
        /* CPU-20: a failed malloc leaves the plan without work memory; computing it aborts */
        plan->cplan.work_data = malloc(plan->cplan.work_size);
    }
    return plan;
}

static void cpu_backend_graph_plan_free(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan) {
    GGSPEC_UNUSED(backend);
    struct cpu_plan * p = plan;
    free(p->cplan.work_data);
    free(p->nodes);
    free(p);
}

static void cpu_backend_graph_plan_compute(ggspec_backend_t backend, ggspec_backend_graph_plan_t plan) {
    GGSPEC_UNUSED(backend);
    struct cpu_plan * p = plan;
    GGSPEC_ASSERT(p->cplan.work_size == 0 || p->cplan.work_data != NULL, "cplan->work_data"); /* CPU-20 */
    ggspec_graph_compute(&p->cgraph, &p->cplan);
}

static bool cpu_backend_graph_compute(ggspec_backend_t backend, struct ggspec_cgraph * cgraph) {
    struct cpu_backend_context * ctx = backend->context;
    struct ggspec_cplan cplan = ggspec_graph_plan(cgraph, ctx->n_threads);

    if (ctx->work_size < cplan.work_size) {
        void * grown = realloc(ctx->work_data, cplan.work_size);
        GGSPEC_ASSERT(grown != NULL, "cplan->work_data"); /* CPU-20 */
        ctx->work_data = grown;
        ctx->work_size = cplan.work_size;
    }
    cplan.work_data = ctx->work_data;
    /* the whole buffer is the work area: a larger one left by an earlier graph is fine */
    if (cplan.work_size > 0) {
        cplan.work_size = ctx->work_size;
    }

    ggspec_graph_compute(cgraph, &cplan);
    return true;
}

static const struct ggspec_backend_i cpu_backend_iface = {
    .get_name                = cpu_backend_name,
    .free                    = cpu_backend_free,
    .get_default_buffer_type = cpu_backend_default_buffer_type,
    .set_tensor_async        = NULL,
    .get_tensor_async        = NULL,
    .cpy_tensor_async        = NULL,
    .synchronize             = NULL,
    .graph_plan_create       = cpu_backend_graph_plan_create,
    .graph_plan_free         = cpu_backend_graph_plan_free,
    .graph_plan_compute      = cpu_backend_graph_plan_compute,
    .graph_compute           = cpu_backend_graph_compute,
    .supports_op             = cpu_backend_supports_op,
};

ggspec_backend_t ggspec_backend_cpu_init(void) {
    struct cpu_backend_context * ctx = malloc(sizeof(*ctx));
    GGSPEC_ASSERT(ctx != NULL, "ctx != NULL");
    *ctx = (struct cpu_backend_context) { .n_threads = GGSPEC_DEFAULT_N_THREADS, .work_data = NULL, .work_size = 0 };

    ggspec_backend_t backend = malloc(sizeof(*backend));
    GGSPEC_ASSERT(backend != NULL, "backend != NULL");
    *backend = (struct ggspec_backend) { .iface = cpu_backend_iface, .context = ctx };
    return backend;
}

/* a backend is the CPU backend when its name entry is the CPU backend's */
/* enforces CPU-12 */
bool ggspec_backend_is_cpu(ggspec_backend_t backend) {
    return backend != NULL && backend->iface.get_name == cpu_backend_name;
}

/* enforces CPU-13 */
void ggspec_backend_cpu_set_n_threads(ggspec_backend_t backend_cpu, int n_threads) {
    GGSPEC_ASSERT(ggspec_backend_is_cpu(backend_cpu), "ggml_backend_is_cpu(backend_cpu)"); /* CPU-13 */
    struct cpu_backend_context * ctx = backend_cpu->context;
    ctx->n_threads = n_threads;
}

int ggspec_backend_cpu_get_n_threads(ggspec_backend_t backend_cpu) {
    GGSPEC_ASSERT(ggspec_backend_is_cpu(backend_cpu), "ggml_backend_is_cpu(backend_cpu)"); /* CPU-13 */
    const struct cpu_backend_context * ctx = backend_cpu->context;
    return ctx->n_threads;
}

/* test hook (ggspec extension): the current size of the backend's graph_compute work buffer */
size_t ggspec_backend_cpu_work_size(ggspec_backend_t backend_cpu) {
    GGSPEC_ASSERT(ggspec_backend_is_cpu(backend_cpu), "ggml_backend_is_cpu(backend_cpu)"); /* CPU-13 */
    const struct cpu_backend_context * ctx = backend_cpu->context;
    return ctx->work_size;
}

/* test hook (ggspec extension): the address of the backend's graph_compute work buffer (NULL while empty) */
void * ggspec_backend_cpu_work_data(ggspec_backend_t backend_cpu) {
    GGSPEC_ASSERT(ggspec_backend_is_cpu(backend_cpu), "ggml_backend_is_cpu(backend_cpu)"); /* CPU-13 */
    const struct cpu_backend_context * ctx = backend_cpu->context;
    return ctx->work_data;
}

/* test hooks (ggspec extension): a CPU plan's own work buffer size and its thread count */
size_t ggspec_backend_cpu_plan_work_size(ggspec_backend_graph_plan_t plan) {
    const struct cpu_plan * p = plan;
    return p->cplan.work_size;
}

int ggspec_backend_cpu_plan_n_threads(ggspec_backend_graph_plan_t plan) {
    const struct cpu_plan * p = plan;
    return p->cplan.n_threads;
}
