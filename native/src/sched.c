/*
 * sched.c - the backend scheduler: one graph over several backends (spec/sched.md,
 * reference/sched.py; the functions below carry the reference model's names and order).
 *
 * Backends are kept in priority order: index 0 is the most wanted, the last one the fallback.
 * As in rc.8 an assignment is a backend's tensor allocator (tallocr); a tensor's assignment,
 * its copies on other backends and the pass that decided it live in arrays indexed by the
 * tensor's slot in the scheduler's hash set.
 *
 * sched_split_graph decides a backend for every tensor (passes 1 to 3), cuts the node list
 * into splits that run on one backend each and gives every cross-backend source a copy on the
 * reading backend (pass 4), then builds the allocation graph. sched_alloc_splits places it
 * with the graph allocator, one tallocr per backend; sched_compute_splits copies each split's
 * inputs and computes its node range, in batches when an eval callback watches.
 *
 * Profile `fixed` (what native/ implements):
 *   - SCHED-25's erratum: a false return from the eval callback (ask = false) stops the whole
 *     computation; rc.8 leaves only the current split and goes on with the next one.
 *   - rc.8 builds the copies and the allocation graph in a context over a fixed array in the
 *     scheduler, which a large graph with many copies overflows. Here the scheduler owns a
 *     pool sized for the graph at hand (grown, never shrunk); like rc.8's array it is reused
 *     by every split, so copies live until the next graph is split.
 *   - SCHED-33's erratum: a node that the weights rule or pass 2 would give to a backend whose
 *     supports_op refuses it goes to the highest-priority backend that accepts it (rc.8 never
 *     asks supports_op).
 *   - a graph without non-view nodes gets a first split with no backend, which compute skips
 *     (rc.8 keeps whatever backend the previous graph's first split had, or computes on NULL).
 *
 * The suite's self-tests plant defects here only in test variants (native/testing/defects.py).
 */
#include "ggspec-alloc.h"
#include "ggspec-backend-impl.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"

#define GGSPEC_MAX_BACKENDS     16
#define GGSPEC_MAX_SPLITS       256
#define GGSPEC_MAX_SPLIT_INPUTS 16

/* room for a cause string such as "1.wgt9" or "3.vsrc" */
#define SCHED_CAUSE_LEN 8

struct ggspec_backend_sched_split {
    ggspec_tallocr_t       tallocr;
    int                    i_start;
    int                    i_end;
    struct ggspec_tensor * inputs[GGSPEC_MAX_SPLIT_INPUTS];
    int                    n_inputs;
    struct ggspec_cgraph   graph; /* a view of nodes [i_start, i_end) of the caller's graph */
};

struct ggspec_backend_sched {
    bool is_reset; /* nothing split since the last reset */

    int                          n_backends;
    ggspec_backend_t             backends[GGSPEC_MAX_BACKENDS];
    ggspec_backend_buffer_type_t bufts[GGSPEC_MAX_BACKENDS];
    ggspec_tallocr_t             tallocs[GGSPEC_MAX_BACKENDS];

    ggspec_gallocr_t galloc;

    /* the tensors seen since the last reset; the arrays below are indexed by their slot */
    struct ggspec_hash_set hash_set;
    ggspec_tallocr_t *     node_talloc;                       /* the assignment */
    struct ggspec_tensor * (*node_copies)[GGSPEC_MAX_BACKENDS]; /* the copy on backend i */
    char                   (*node_cause)[SCHED_CAUSE_LEN];    /* the pass that assigned it */

    struct ggspec_cgraph * graph; /* the allocation graph of the last split graph */

    struct ggspec_backend_sched_split splits[GGSPEC_MAX_SPLITS];
    int                               n_splits;

    /* copies and the allocation graph live here until the next graph is split */
    struct ggspec_context * ctx;
    void *                  ctx_pool;
    size_t                  ctx_pool_size;

    ggspec_backend_sched_eval_callback callback_eval;
    void *                             callback_eval_user_data;
};

/* --- small helpers, each one rule ------------------------------------------------------- */

/* view ops (VIEW, RESHAPE, PERMUTE, TRANSPOSE) are skipped by passes 2 and 4 */
static bool sched_is_view_op(enum ggspec_op op) {
    return op == GGSPEC_OP_VIEW || op == GGSPEC_OP_RESHAPE || op == GGSPEC_OP_PERMUTE || op == GGSPEC_OP_TRANSPOSE;
}

/* SCHED-4: a backend's priority is its index; a foreign backend gets INT_MAX */
static int sched_backend_prio(ggspec_backend_sched_t sched, ggspec_backend_t backend) {
    for (int i = 0; i < sched->n_backends; i++) {
        if (sched->backends[i] == backend) {
            return i;
        }
    }
    return INT_MAX;
}

static int sched_allocr_prio(ggspec_backend_sched_t sched, ggspec_tallocr_t talloc) {
    for (int i = 0; i < sched->n_backends; i++) {
        if (sched->tallocs[i] == talloc) {
            return i;
        }
    }
    return INT_MAX;
}

static ggspec_backend_t sched_allocr_backend(ggspec_backend_sched_t sched, ggspec_tallocr_t talloc) {
    if (talloc == NULL) {
        return NULL;
    }
    const int i = sched_allocr_prio(sched, talloc);
    GGSPEC_ASSERT(i < sched->n_backends, "tallocr not owned by the scheduler");
    return sched->backends[i];
}

static size_t sched_slot(ggspec_backend_sched_t sched, struct ggspec_tensor * t) {
    return ggspec_hash_find_or_insert(sched->hash_set, t);
}

static ggspec_tallocr_t sched_get_assignment(ggspec_backend_sched_t sched, struct ggspec_tensor * t) {
    return sched->node_talloc[sched_slot(sched, t)];
}

/* assign t; the cause is recorded only for a real assignment (NULL leaves it unassigned) */
static void sched_assign(ggspec_backend_sched_t sched, struct ggspec_tensor * t, ggspec_tallocr_t talloc, const char * cause) {
    const size_t slot = sched_slot(sched, t);
    sched->node_talloc[slot] = talloc;
    if (talloc != NULL) {
        snprintf(sched->node_cause[slot], SCHED_CAUSE_LEN, "%s", cause);
    }
}

/* SCHED-5, SCHED-6: the allocator owning buffer, else the highest-priority backend its type
   supports; a buffer no backend supports aborts */
static ggspec_tallocr_t sched_allocr_from_buffer(ggspec_backend_sched_t sched, ggspec_backend_buffer_t buffer) {
    if (buffer == NULL) {
        return NULL;
    }
    for (int i = 0; i < sched->n_backends; i++) {
        if (ggspec_tallocr_get_buffer(sched->tallocs[i]) == buffer) {
            return sched->tallocs[i];
        }
    }
    for (int i = 0; i < sched->n_backends; i++) {
        if (ggspec_backend_buft_supports_backend(buffer->buft, sched->backends[i])) {
            return sched->tallocs[i];
        }
    }
    GGSPEC_ASSERT(false, "tensor buffer type not supported by any backend"); /* SCHED-6 */
    return NULL;
}

/* SCHED-33 (erratum; profile fixed): rc.8's scheduler never asks supports_op. Here a computing
   node (not a leaf, not a view op) that the weights rule or pass 2 would give to a backend that
   refuses it goes to the highest-priority backend that accepts it; when none does, the choice stands */
static ggspec_tallocr_t sched_accepting(ggspec_backend_sched_t sched, struct ggspec_tensor * node, ggspec_tallocr_t talloc) {
    if (talloc == NULL || node->op == GGSPEC_OP_NONE || sched_is_view_op(node->op)) {
        return talloc;
    }
    if (ggspec_backend_supports_op(sched_allocr_backend(sched, talloc), node)) {
        return talloc;
    }
    for (int i = 0; i < sched->n_backends; i++) {
        if (ggspec_backend_supports_op(sched->backends[i], node)) {
            return sched->tallocs[i];
        }
    }
    return talloc;
}

/* SCHED-7: own buffer, else view_src's buffer, else the first source in a WEIGHTS buffer;
   writes the cause ("1.dst", "1.vsrc", "1.wgtN") into cause */
static ggspec_tallocr_t sched_allocr_from_cur(ggspec_backend_sched_t sched, struct ggspec_tensor * node, char cause[SCHED_CAUSE_LEN]) {
    cause[0] = '\0';
    ggspec_tallocr_t cur = sched_allocr_from_buffer(sched, node->buffer);
    if (cur != NULL) {
        strcpy(cause, "1.dst");
        return cur;
    }
    if (node->view_src != NULL) {
        cur = sched_allocr_from_buffer(sched, node->view_src->buffer);
        if (cur != NULL) {
            strcpy(cause, "1.vsrc");
            return cur;
        }
    }
    for (int i = 0; i < GGSPEC_MAX_SRC; i++) {
        const struct ggspec_tensor * src = node->src[i];
        if (src == NULL) {
            break;
        }
        if (src->buffer != NULL && src->buffer->usage == GGSPEC_BACKEND_BUFFER_USAGE_WEIGHTS) {
            /* an operation on weights runs where the weights are */
            snprintf(cause, SCHED_CAUSE_LEN, "1.wgt%d", i);
            return sched_accepting(sched, node, sched_allocr_from_buffer(sched, src->buffer));
        }
    }
    return NULL;
}

/* pass 1 for one tensor: assign it from where it already lives */
static void sched_assign_from_cur(ggspec_backend_sched_t sched, struct ggspec_tensor * t) {
    char cause[SCHED_CAUSE_LEN];
    ggspec_tallocr_t talloc = sched_allocr_from_cur(sched, t, cause);
    sched_assign(sched, t, talloc, cause);
}

/* --- construction, reset, free ---------------------------------------------------------- */

/* SCHED-26: reset the allocators, forget assignments and copies */
static void sched_reset(ggspec_backend_sched_t sched) {
    for (int i = 0; i < sched->n_backends; i++) {
        ggspec_tallocr_reset(sched->tallocs[i]);
    }
    const size_t n = sched->hash_set.size;
    memset(sched->hash_set.keys, 0, n * sizeof(sched->hash_set.keys[0]));
    memset(sched->node_talloc,   0, n * sizeof(sched->node_talloc[0]));
    memset(sched->node_copies,   0, n * sizeof(sched->node_copies[0]));
    memset(sched->node_cause,    0, n * sizeof(sched->node_cause[0]));
    sched->is_reset = true;
}

/* SCHED-1 to SCHED-4 */
/* enforces SCHED-2, SCHED-3 */
ggspec_backend_sched_t ggspec_backend_sched_new(ggspec_backend_t * backends, ggspec_backend_buffer_type_t * bufts,
                                                int n_backends, size_t graph_size) {
    GGSPEC_ASSERT(n_backends > 0, "n_backends > 0"); /* SCHED-1 */
    GGSPEC_ASSERT(n_backends <= GGSPEC_MAX_BACKENDS, "n_backends <= GGML_MAX_BACKENDS"); /* SCHED-2 */

    ggspec_backend_sched_t sched = calloc(1, sizeof(*sched));
    GGSPEC_ASSERT(sched != NULL, "sched != NULL");

    sched->hash_set    = ggspec_hash_set_new(graph_size + GGSPEC_MAX_SPLITS * GGSPEC_MAX_SPLIT_INPUTS);
    sched->node_talloc = calloc(sched->hash_set.size, sizeof(sched->node_talloc[0]));
    sched->node_copies = calloc(sched->hash_set.size, sizeof(sched->node_copies[0]));
    sched->node_cause  = calloc(sched->hash_set.size, sizeof(sched->node_cause[0]));
    GGSPEC_ASSERT(sched->node_talloc != NULL && sched->node_copies != NULL && sched->node_cause != NULL,
                  "sched->node_talloc != NULL");

    sched->n_backends = n_backends;
    for (int i = 0; i < n_backends; i++) {
        sched->backends[i] = backends[i];
        sched->bufts[i]    = bufts != NULL ? bufts[i] : ggspec_backend_get_default_buffer_type(backends[i]);
    }

    sched->galloc = ggspec_gallocr_new();

    /* every backend starts measuring */
    for (int i = 0; i < n_backends; i++) {
        sched->tallocs[i] = ggspec_tallocr_new_measure_from_buft(sched->bufts[i]);
    }

    sched_reset(sched);
    return sched;
}

/* enforces SCHED-39 */
void ggspec_backend_sched_free(ggspec_backend_sched_t sched) {
    if (sched == NULL) {
        return;
    }
    for (int i = 0; i < sched->n_backends; i++) {
        ggspec_tallocr_free(sched->tallocs[i]);
    }
    ggspec_gallocr_free(sched->galloc);
    ggspec_free(sched->ctx);
    free(sched->ctx_pool);
    ggspec_hash_set_free(sched->hash_set);
    free(sched->node_talloc);
    free(sched->node_copies);
    free(sched->node_cause);
    free(sched);
}

/* --- splitting -------------------------------------------------------------------------- */

/* SCHED-7: pre-allocated tensors and weights; user assignments are kept, and the sources of a
   user-assigned node wait for pass 3 */
static void sched_pass1(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph) {
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggspec_tensor * leaf = graph->leafs[i];
        if (sched_get_assignment(sched, leaf) != NULL) {
            continue;
        }
        sched_assign_from_cur(sched, leaf);
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggspec_tensor * node = graph->nodes[i];
        if (sched_get_assignment(sched, node) != NULL) {
            continue;
        }
        sched_assign_from_cur(sched, node);
        for (int j = 0; j < GGSPEC_MAX_SRC; j++) {
            struct ggspec_tensor * src = node->src[j];
            if (src == NULL) {
                break;
            }
            if (sched_get_assignment(sched, src) == NULL) {
                sched_assign_from_cur(sched, src);
            }
        }
    }
}

/* one of passes 2.1 to 2.4: carry the last seen assignment over unassigned non-view nodes */
static void sched_expand(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph, bool upward, bool skip_lowest,
                         const char * cause) {
    const int lowest = sched->n_backends - 1;
    ggspec_tallocr_t cur = NULL;
    for (int k = 0; k < graph->n_nodes; k++) {
        struct ggspec_tensor * node = graph->nodes[upward ? graph->n_nodes - 1 - k : k];
        if (sched_is_view_op(node->op)) {
            continue;
        }
        ggspec_tallocr_t mine = sched_get_assignment(sched, node);
        if (mine != NULL) {
            cur = skip_lowest && sched_allocr_prio(sched, mine) == lowest ? NULL : mine;
        } else {
            sched_assign(sched, node, sched_accepting(sched, node, cur), cause);
        }
    }
}

/* SCHED-8 to SCHED-11: devices up, devices down, anything up, anything down */
static void sched_pass2(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph) {
    const bool skip_lowest_up = true;
    sched_expand(sched, graph, true,  skip_lowest_up, "2.1");
    sched_expand(sched, graph, false, true,           "2.2");
    sched_expand(sched, graph, true,  false,          "2.3");
    sched_expand(sched, graph, false, false,          "2.4");
}

/* SCHED-12: a still unassigned view node takes its view_src's backend; each unassigned source
   takes its view_src's backend if it is a view, else the node's */
static void sched_pass3(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph) {
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggspec_tensor * node = graph->nodes[i];
        ggspec_tallocr_t cur = sched_get_assignment(sched, node);
        if (node->view_src != NULL && cur == NULL) {
            cur = sched_get_assignment(sched, node->view_src);
            sched_assign(sched, node, cur, "3.vsrc");
        }
        for (int j = 0; j < GGSPEC_MAX_SRC; j++) {
            struct ggspec_tensor * src = node->src[j];
            if (src == NULL) {
                break;
            }
            if (sched_get_assignment(sched, src) == NULL) {
                if (src->view_src != NULL) {
                    sched_assign(sched, src, sched_get_assignment(sched, src->view_src), "3.vsrc");
                } else {
                    sched_assign(sched, src, cur, "3.cur");
                }
            }
        }
    }
}

/* a new tensor with t's type, extents and strides */
static struct ggspec_tensor * sched_dup_tensor_layout(struct ggspec_context * ctx, const struct ggspec_tensor * t) {
    struct ggspec_tensor * dup = ggspec_dup_tensor(ctx, t);
    for (int i = 0; i < GGSPEC_MAX_DIMS; i++) {
        dup->nb[i] = t->nb[i];
    }
    return dup;
}

/* SCHED-17, SCHED-18: add src to the split's inputs unless it is there already */
static void sched_add_input(struct ggspec_backend_sched_split * split, struct ggspec_tensor * src) {
    for (int k = 0; k < split->n_inputs; k++) {
        if (split->inputs[k] == src) {
            return;
        }
    }
    const int n_inputs = split->n_inputs;
    GGSPEC_ASSERT(n_inputs < GGSPEC_MAX_SPLIT_INPUTS, "n_inputs < GGML_MAX_SPLIT_INPUTS"); /* SCHED-18 */
    split->inputs[n_inputs] = src;
    split->n_inputs = n_inputs + 1;
}

/* SCHED-13 to SCHED-19: cut splits where the backend changes; collect and copy inputs */
static void sched_pass4(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph) {
    ggspec_tallocr_t cur = NULL;
    for (int i = 0; i < graph->n_nodes; i++) {
        if (!sched_is_view_op(graph->nodes[i]->op)) {
            cur = sched_get_assignment(sched, graph->nodes[i]);
            break;
        }
    }
    int cur_split = 0;
    struct ggspec_backend_sched_split * split = &sched->splits[0];
    split->tallocr  = cur;
    split->i_start  = 0;
    split->n_inputs = 0;
    memset(split->inputs, 0, sizeof(split->inputs));
    int cur_id = sched_allocr_prio(sched, cur);

    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggspec_tensor * node = graph->nodes[i];
        if (sched_is_view_op(node->op)) {
            continue;
        }
        ggspec_tallocr_t mine = sched_get_assignment(sched, node);
        GGSPEC_ASSERT(mine != NULL, "node_allocr != NULL"); /* SCHED-14 */

        if (mine != cur) {
            split->i_end = i;
            cur_split++;
            GGSPEC_ASSERT(cur_split < GGSPEC_MAX_SPLITS, "cur_split < GGML_MAX_SPLITS"); /* SCHED-15 */
            split = &sched->splits[cur_split];
            split->tallocr  = mine;
            split->i_start  = i;
            split->n_inputs = 0;
            memset(split->inputs, 0, sizeof(split->inputs));
            cur    = mine;
            cur_id = sched_allocr_prio(sched, mine);
        }

        for (int j = 0; j < GGSPEC_MAX_SRC; j++) {
            struct ggspec_tensor * src = node->src[j];
            if (src == NULL) {
                break;
            }
            ggspec_tallocr_t src_talloc = sched_get_assignment(sched, src);
            GGSPEC_ASSERT(src_talloc != NULL, "src_allocr != NULL"); /* SCHED-16 */
            if (src_talloc == mine) {
                continue;
            }
            sched_add_input(split, src);

            /* SCHED-19: one copy per (input, backend), reused by later splits on the backend */
            const size_t slot = sched_slot(sched, src);
            if (sched->node_copies[slot][cur_id] == NULL) {
                struct ggspec_tensor * copy = sched_dup_tensor_layout(sched->ctx, src);
                ggspec_format_name(copy, "%s#%s", ggspec_backend_name(sched_allocr_backend(sched, cur)), src->name);
                sched->node_copies[slot][cur_id] = copy;
                sched_assign(sched, copy, cur, "4.cpy");
            }
            node->src[j] = sched->node_copies[slot][cur_id]; /* the caller's graph now reads the copy */
        }
    }
    split->i_end = graph->n_nodes;
    sched->n_splits = cur_split + 1;
}

/* SCHED-20, SCHED-21: per split, its input copies (linked to their inputs) then its nodes */
static struct ggspec_cgraph * sched_allocation_graph(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph) {
    struct ggspec_cgraph * out = ggspec_new_graph_custom(
        sched->ctx, (size_t)graph->n_nodes + (size_t)sched->n_splits * GGSPEC_MAX_SPLIT_INPUTS, false);
    for (int s = 0; s < sched->n_splits; s++) {
        struct ggspec_backend_sched_split * split = &sched->splits[s];
        split->graph = ggspec_graph_view(graph, split->i_start, split->i_end);
        const int backend_id = sched_allocr_prio(sched, split->tallocr);
        for (int j = 0; j < split->n_inputs; j++) {
            struct ggspec_tensor * input = split->inputs[j];
            struct ggspec_tensor * input_cpy = sched->node_copies[sched_slot(sched, input)][backend_id];
            GGSPEC_ASSERT(input_cpy->src[0] == NULL || input_cpy->src[0] == input,
                          "input_cpy->src[0] == NULL || input_cpy->src[0] == input");
            /* the input stays live until its copy is placed */
            input_cpy->src[0] = input;
            out->nodes[out->n_nodes++] = input_cpy;
        }
        for (int i = split->i_start; i < split->i_end; i++) {
            out->nodes[out->n_nodes++] = graph->nodes[i];
        }
    }
    return out;
}

/* a fresh context for this graph's copies and allocation graph, over the scheduler's pool */
static void sched_new_context(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph) {
    const size_t max_copies = (size_t)GGSPEC_MAX_SPLITS * GGSPEC_MAX_SPLIT_INPUTS;
    const size_t need = max_copies * ggspec_tensor_overhead() +
                        ggspec_graph_overhead_custom((size_t)graph->n_nodes + max_copies, false) + GGSPEC_MEM_ALIGN;

    ggspec_free(sched->ctx);
    sched->ctx = NULL;
    if (sched->ctx_pool_size < need) {
        free(sched->ctx_pool);
        sched->ctx_pool_size = need + GGSPEC_MEM_ALIGN - need % GGSPEC_MEM_ALIGN;
        sched->ctx_pool      = aligned_alloc(GGSPEC_MEM_ALIGN, sched->ctx_pool_size);
        GGSPEC_ASSERT(sched->ctx_pool != NULL, "sched->ctx_pool != NULL");
    }
    struct ggspec_init_params params = {
        .mem_size   = sched->ctx_pool_size,
        .mem_buffer = sched->ctx_pool,
        .no_alloc   = true,
    };
    sched->ctx = ggspec_init(params);
}

/* passes 1 to 4 and the allocation graph */
static void sched_split_graph(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph) {
    sched->n_splits = 0;
    sched->is_reset = false;
    sched_new_context(sched, graph);

    sched_pass1(sched, graph);
    sched_pass2(sched, graph);
    sched_pass3(sched, graph);
    sched_pass4(sched, graph);
    sched->graph = sched_allocation_graph(sched, graph);
}

static void sched_alloc_splits(ggspec_backend_sched_t sched) {
    ggspec_gallocr_alloc_graph_n(sched->galloc, sched->graph, sched->hash_set, sched->node_talloc);
}

/* --- computing -------------------------------------------------------------------------- */

/* SCHED-24: ask node by node until one is wanted, compute the range up to and including it,
   then show it (ask = false); false when the callback asks to stop */
static bool sched_compute_watched(ggspec_backend_sched_t sched, ggspec_backend_t backend, struct ggspec_cgraph * g) {
    ggspec_backend_sched_eval_callback cb = sched->callback_eval;
    void * ud = sched->callback_eval_user_data;
    const int n = g->n_nodes;
    int j0 = 0;
    while (j0 < n) {
        struct ggspec_tensor * t = g->nodes[j0];
        bool need = cb(t, true, ud);
        int j1 = j0;
        while (!need && j1 < n - 1) {
            j1++;
            t = g->nodes[j1];
            need = cb(t, true, ud);
        }
        struct ggspec_cgraph gv = ggspec_graph_view(g, j0, j1 + 1);
        ggspec_backend_graph_compute(backend, &gv);
        if (need && !cb(t, false, ud)) {
            return false;
        }
        j0 = j1 + 1;
    }
    return true;
}

/* SCHED-22 to SCHED-25: copy each split's inputs, then compute it. Erratum SCHED-25 (profile
   fixed): a false return from the callback stops the whole graph, not only the split */
static void sched_compute_splits(ggspec_backend_sched_t sched) {
    for (int s = 0; s < sched->n_splits; s++) {
        struct ggspec_backend_sched_split * split = &sched->splits[s];
        ggspec_backend_t backend = sched_allocr_backend(sched, split->tallocr);
        if (backend == NULL) {
            /* only a graph without non-view nodes has a split without a backend: nothing to
               compute (rc.8 would use a stale or a NULL backend here) */
            continue;
        }
        const int backend_id = sched_backend_prio(sched, backend);

        for (int j = 0; j < split->n_inputs; j++) {
            struct ggspec_tensor * input = split->inputs[j];
            struct ggspec_tensor * input_cpy = sched->node_copies[sched_slot(sched, input)][backend_id];
            GGSPEC_ASSERT(input->buffer != NULL, "input->buffer != NULL"); /* SCHED-23 */
            GGSPEC_ASSERT(input_cpy->buffer != NULL, "input_cpy->buffer != NULL");
            ggspec_backend_tensor_copy_async(backend, input, input_cpy);
        }

        if (sched->callback_eval == NULL) {
            ggspec_backend_graph_compute(backend, &split->graph);
        } else if (!sched_compute_watched(sched, backend, &split->graph)) {
            return;
        }
    }
}

/* SCHED-27: the graph must fit the hash set; reset if needed, split, allocate, compute */
void ggspec_backend_sched_graph_compute(ggspec_backend_sched_t sched, struct ggspec_cgraph * graph) {
    GGSPEC_ASSERT((int)sched->hash_set.size >= graph->n_nodes + GGSPEC_MAX_SPLITS * GGSPEC_MAX_SPLIT_INPUTS,
                  "(int)sched->hash_set.size >= graph->n_nodes + GGML_MAX_SPLITS*GGML_MAX_SPLIT_INPUTS");
    if (!sched->is_reset) {
        sched_reset(sched);
    }
    sched_split_graph(sched, graph);
    sched_alloc_splits(sched);
    sched_compute_splits(sched);
}

/* SCHED-28, SCHED-29: measure once, then one buffer per backend of the measured size */
void ggspec_backend_sched_init_measure(ggspec_backend_sched_t sched, struct ggspec_cgraph * measure_graph) {
    GGSPEC_ASSERT(ggspec_tallocr_is_measure(sched->tallocs[0]), "ggml_tallocr_is_measure(sched->tallocs[0])"); /* SCHED-28 */
    sched_split_graph(sched, measure_graph);
    sched_alloc_splits(sched);
    for (int i = 0; i < sched->n_backends; i++) {
        const size_t size = ggspec_tallocr_max_size(sched->tallocs[i]);
        ggspec_tallocr_free(sched->tallocs[i]);
        sched->tallocs[i] = ggspec_tallocr_new_from_buft(sched->bufts[i], size);
    }
    sched_reset(sched);
}

void ggspec_backend_sched_reset(ggspec_backend_sched_t sched) {
    sched_reset(sched);
}

void ggspec_backend_sched_set_eval_callback(ggspec_backend_sched_t sched, ggspec_backend_sched_eval_callback callback,
                                            void * user_data) {
    sched->callback_eval           = callback;
    sched->callback_eval_user_data = user_data;
}

/* SCHED-30 */
int ggspec_backend_sched_get_n_splits(ggspec_backend_sched_t sched) {
    return sched->n_splits;
}

/* SCHED-31: the index of one of the scheduler's backends; a foreign backend aborts */
static int sched_backend_index(ggspec_backend_sched_t sched, ggspec_backend_t backend) {
    const int i = sched_backend_prio(sched, backend);
    GGSPEC_ASSERT(i >= 0 && i < sched->n_backends, "backend_index >= 0 && backend_index < sched->n_backends"); /* SCHED-31 */
    return i;
}

ggspec_tallocr_t ggspec_backend_sched_get_tallocr(ggspec_backend_sched_t sched, ggspec_backend_t backend) {
    return sched->tallocs[sched_backend_index(sched, backend)];
}

ggspec_backend_buffer_t ggspec_backend_sched_get_buffer(ggspec_backend_sched_t sched, ggspec_backend_t backend) {
    return ggspec_tallocr_get_buffer(sched->tallocs[sched_backend_index(sched, backend)]);
}

/* SCHED-32 */
void ggspec_backend_sched_set_node_backend(ggspec_backend_sched_t sched, struct ggspec_tensor * node, ggspec_backend_t backend) {
    sched_assign(sched, node, sched->tallocs[sched_backend_index(sched, backend)], "user");
}

/* SCHED-32 */
ggspec_backend_t ggspec_backend_sched_get_node_backend(ggspec_backend_sched_t sched, struct ggspec_tensor * node) {
    return sched_allocr_backend(sched, sched_get_assignment(sched, node));
}

/* --- test hooks (ggspec extensions): the plan of the last split graph ------------------- */

/* the slot of t if the scheduler has seen it, else SIZE_MAX (looking does not insert) */
static size_t sched_debug_slot(ggspec_backend_sched_t sched, struct ggspec_tensor * t) {
    const size_t i = ggspec_hash_find(sched->hash_set, t);
    if (i == GGSPEC_HASHTABLE_FULL || sched->hash_set.keys[i] != t) {
        return SIZE_MAX;
    }
    return i;
}

static const struct ggspec_backend_sched_split * sched_debug_split(ggspec_backend_sched_t sched, int k) {
    GGSPEC_ASSERT(k >= 0 && k < sched->n_splits, "split index out of range");
    return &sched->splits[k];
}

int ggspec_backend_sched_debug_n_splits(ggspec_backend_sched_t sched) {
    return sched->n_splits;
}

int ggspec_backend_sched_debug_split_backend(ggspec_backend_sched_t sched, int k) {
    const struct ggspec_backend_sched_split * split = sched_debug_split(sched, k);
    return split->tallocr == NULL ? -1 : sched_allocr_prio(sched, split->tallocr);
}

int ggspec_backend_sched_debug_split_i_start(ggspec_backend_sched_t sched, int k) {
    return sched_debug_split(sched, k)->i_start;
}

int ggspec_backend_sched_debug_split_i_end(ggspec_backend_sched_t sched, int k) {
    return sched_debug_split(sched, k)->i_end;
}

int ggspec_backend_sched_debug_split_n_inputs(ggspec_backend_sched_t sched, int k) {
    return sched_debug_split(sched, k)->n_inputs;
}

struct ggspec_tensor * ggspec_backend_sched_debug_split_input(ggspec_backend_sched_t sched, int k, int j) {
    const struct ggspec_backend_sched_split * split = sched_debug_split(sched, k);
    GGSPEC_ASSERT(j >= 0 && j < split->n_inputs, "input index out of range");
    return split->inputs[j];
}

int ggspec_backend_sched_debug_tensor_backend(ggspec_backend_sched_t sched, struct ggspec_tensor * t) {
    const size_t slot = sched_debug_slot(sched, t);
    if (slot == SIZE_MAX || sched->node_talloc[slot] == NULL) {
        return -1;
    }
    return sched_allocr_prio(sched, sched->node_talloc[slot]);
}

const char * ggspec_backend_sched_debug_tensor_cause(ggspec_backend_sched_t sched, struct ggspec_tensor * t) {
    const size_t slot = sched_debug_slot(sched, t);
    return slot == SIZE_MAX ? "" : sched->node_cause[slot];
}

struct ggspec_tensor * ggspec_backend_sched_debug_tensor_copy(ggspec_backend_sched_t sched, struct ggspec_tensor * t,
                                                              int backend_index) {
    const size_t slot = sched_debug_slot(sched, t);
    if (slot == SIZE_MAX || backend_index < 0 || backend_index >= sched->n_backends) {
        return NULL;
    }
    return sched->node_copies[slot][backend_index];
}

bool ggspec_backend_sched_debug_is_reset(ggspec_backend_sched_t sched) {
    return sched->is_reset;
}

struct ggspec_cgraph * ggspec_backend_sched_debug_alloc_graph(ggspec_backend_sched_t sched) {
    return sched->is_reset ? NULL : sched->graph;
}
