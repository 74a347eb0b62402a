/*
 * graph_copy.c - copying an allocated graph onto another backend, and comparing two backends
 * node by node on the same graph.
 *
 * graph_copy duplicates every node and every tensor reachable from the nodes through src and
 * view_src, each once (a hash set maps originals to copies). A copy has the original's type,
 * shape, strides, op, op_params, name and (copied) sources. Copies of non-views live in
 * ctx_allocated and get one new buffer of the backend, and their bytes are copied from the
 * originals; copies of views live in ctx_unallocated and are initialised through their
 * copied view_src (view_init), so they address the new buffer at the original offset. The
 * copy's graph holds the copied nodes in the original order (and no leafs).
 */
#include "ggspec-alloc.h"
#include "ggspec-backend-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"

struct copy_state {
    struct ggspec_hash_set   set;
    struct ggspec_tensor **  copies; /* by slot of set */
    bool *                   done;   /* by slot: data copied / view initialised */
    struct ggspec_context *  ctx_allocated;
    struct ggspec_context *  ctx_unallocated;
};

/* a tensor like t in ctx, with t's strides */
static struct ggspec_tensor * dup_layout(struct ggspec_context * ctx, const struct ggspec_tensor * t) {
    struct ggspec_tensor * d = ggspec_dup_tensor(ctx, t);
    for (int i = 0; i < GGSPEC_MAX_DIMS; i++) {
        d->nb[i] = t->nb[i];
    }
    return d;
}

static struct ggspec_tensor * dup_tensor(struct copy_state * st, struct ggspec_tensor * src) {
    GGSPEC_ASSERT(src != NULL, "src != NULL");
    GGSPEC_ASSERT(src->data != NULL, "src->data && \"graph must be allocated\"");

    const size_t id = ggspec_hash_insert(st->set, src);
    if (id == GGSPEC_HASHTABLE_ALREADY_EXISTS) {
        return st->copies[ggspec_hash_find(st->set, src)];
    }

    struct ggspec_tensor * dst = dup_layout(src->view_src == NULL ? st->ctx_allocated : st->ctx_unallocated, src);
    if (src->view_src != NULL) {
        dst->view_src  = dup_tensor(st, src->view_src);
        dst->view_offs = src->view_offs;
    }
    dst->op = src->op;
    memcpy(dst->op_params, src->op_params, sizeof(dst->op_params));
    ggspec_set_name(dst, src->name);

    for (int i = 0; i < GGSPEC_MAX_SRC && src->src[i] != NULL; i++) {
        dst->src[i] = dup_tensor(st, src->src[i]);
    }

    st->copies[id] = dst;
    return dst;
}

static void init_tensor(struct copy_state * st, struct ggspec_tensor * src) {
    const size_t id = ggspec_hash_find(st->set, src);
    if (st->done[id]) {
        return;
    }
    st->done[id] = true;

    struct ggspec_tensor * dst = st->copies[id];
    if (dst->view_src != NULL) {
        init_tensor(st, src->view_src);
        ggspec_backend_view_init(dst->view_src->buffer, dst);
    } else {
        ggspec_backend_tensor_copy(src, dst);
    }

    for (int i = 0; i < GGSPEC_MAX_SRC && src->src[i] != NULL; i++) {
        init_tensor(st, src->src[i]);
    }
}

static struct ggspec_backend_graph_copy empty_copy(void) {
    return (struct ggspec_backend_graph_copy) { NULL, NULL, NULL, NULL };
}

static void free_state(struct copy_state * st) {
    free(st->set.keys);
    free(st->copies);
    free(st->done);
}

/* enforces GCOPY-1, GCOPY-3, GCOPY-4 */
struct ggspec_backend_graph_copy ggspec_backend_graph_copy(ggspec_backend_t backend, struct ggspec_cgraph * graph) {
    /*
     * rc.8 sizes its table by the graph's visited table, which a graph view does not have (a
     * division by zero there); ggspec falls back to a size that fits any view.
     */
    size_t hash_size = graph->visited_hash_table.size;
    if (hash_size == 0) {
        hash_size = ggspec_hash_size((size_t)graph->n_nodes * (GGSPEC_MAX_SRC + 2) + 1);
    }

    struct copy_state st = {
        .set             = { hash_size, calloc(hash_size, sizeof(struct ggspec_tensor *)) },
        .copies          = calloc(hash_size, sizeof(struct ggspec_tensor *)),
        .done            = calloc(hash_size, sizeof(bool)),
        .ctx_allocated   = NULL,
        .ctx_unallocated = NULL,
    };
    if (st.set.keys == NULL || st.copies == NULL || st.done == NULL) {
        fprintf(stderr, "failed to allocate context for graph copy\n");
        free_state(&st);
        return empty_copy();
    }

    const int graph_size = graph->size > graph->n_nodes ? graph->size : graph->n_nodes;
    struct ggspec_init_params params = {
        .mem_size   = ggspec_tensor_overhead() * hash_size + ggspec_graph_overhead_custom((size_t)graph_size, false),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    st.ctx_allocated   = ggspec_init(params);
    st.ctx_unallocated = ggspec_init(params);

    for (int i = 0; i < graph->n_nodes; i++) {
        dup_tensor(&st, graph->nodes[i]);
    }

    ggspec_backend_buffer_t buffer = ggspec_backend_alloc_ctx_tensors(st.ctx_allocated, backend);
    if (buffer == NULL) {
        fprintf(stderr, "failed to allocate buffer for graph copy\n");
        free_state(&st);
        ggspec_free(st.ctx_allocated);
        ggspec_free(st.ctx_unallocated);
        return empty_copy();
    }

    for (int i = 0; i < graph->n_nodes; i++) {
        init_tensor(&st, graph->nodes[i]);
    }

    struct ggspec_cgraph * copy = ggspec_new_graph_custom(st.ctx_allocated, (size_t)graph_size, false);
    for (int i = 0; i < graph->n_nodes; i++) {
        copy->nodes[i] = st.copies[ggspec_hash_find(st.set, graph->nodes[i])];
    }
    copy->n_nodes = graph->n_nodes;

    free_state(&st);
    return (struct ggspec_backend_graph_copy) {
        .buffer          = buffer,
        .ctx_allocated   = st.ctx_allocated,
        .ctx_unallocated = st.ctx_unallocated,
        .graph           = copy,
    };
}

/* enforces GCOPY-5, GCOPY-8 */
void ggspec_backend_graph_copy_free(struct ggspec_backend_graph_copy copy) {
    ggspec_backend_buffer_free(copy.buffer);
    ggspec_free(copy.ctx_allocated);
    ggspec_free(copy.ctx_unallocated);
}

static bool is_view_op(enum ggspec_op op) {
    return op == GGSPEC_OP_VIEW || op == GGSPEC_OP_RESHAPE || op == GGSPEC_OP_PERMUTE || op == GGSPEC_OP_TRANSPOSE;
}

/*
 * Node i is computed on both backends (as a one-node graph view each), then, unless it is a
 * view operation, the callback sees both results; a false return ends the comparison. The
 * result is false only when the copy could not be made. Neither backend is synchronized: the
 * callback reads results with tensor_get, which waits for the data as a synchronous read does.
 */
/* enforces GCOPY-6, GCOPY-7 */
bool ggspec_backend_compare_graph_backend(ggspec_backend_t backend1, ggspec_backend_t backend2, struct ggspec_cgraph * graph,
                                          ggspec_backend_eval_callback callback, void * user_data) {
    struct ggspec_backend_graph_copy copy = ggspec_backend_graph_copy(backend2, graph);
    if (copy.buffer == NULL) {
        return false;
    }

    struct ggspec_cgraph * g1 = graph;
    struct ggspec_cgraph * g2 = copy.graph;

    for (int i = 0; i < g1->n_nodes; i++) {
        struct ggspec_tensor * t1 = g1->nodes[i];
        struct ggspec_tensor * t2 = g2->nodes[i];

        struct ggspec_cgraph g1v = ggspec_graph_view(g1, i, i + 1);
        struct ggspec_cgraph g2v = ggspec_graph_view(g2, i, i + 1);

        ggspec_backend_graph_compute(backend1, &g1v);
        ggspec_backend_graph_compute(backend2, &g2v);

        if (is_view_op(t1->op)) {
            continue;
        }
        if (!callback(i, t1, t2, user_data)) {
            break;
        }
    }

    ggspec_backend_graph_copy_free(copy);
    return true;
}
