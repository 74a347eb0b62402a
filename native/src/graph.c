/*
 * graph.c - computation graphs and the pointer hash sets they are built with.
 *
 * A graph is one object in a context's pool, laid out as
 *
 *     [ struct ggspec_cgraph ][ nodes: size ][ leafs: size ][ hash keys: hash_size ][ grads: size ]
 *
 * (grads only when asked for), hash_size being ggspec_hash_size(2 * size).
 *
 * ggspec_build_forward_expand walks a tensor's sources depth first, in source order, and
 * appends each tensor after all of its sources: a tensor without an operation and without a
 * gradient (an input, a weight, a constant) to leafs, anything else (results of operations,
 * and parameters, which have a gradient) to nodes. The visited set makes the walk touch each
 * tensor once, across expansions. Unnamed tensors are named "leaf_<i>" / "node_<i>" after
 * their position.
 */
#include "ggspec.h"

#include <stdlib.h>
#include <string.h>

#include "assert.h"
#include "internal.h"

/* hash sets */

/*
 * Table sizes: the first prime past each power of two, so that pointer values (multiples of
 * the allocation alignment) spread over the slots.
 */
static const size_t hash_primes[] = {
    2, 3, 5, 11, 17, 37, 67, 131, 257, 521, 1031,
    2053, 4099, 8209, 16411, 32771, 65537, 131101,
    262147, 524309, 1048583, 2097169, 4194319, 8388617,
    16777259, 33554467, 67108879, 134217757, 268435459,
    536870923, 1073741827, 2147483659,
};

size_t ggspec_hash_size(size_t min_sz) {
    /* the smallest listed prime >= min_sz; past the list, min_sz made odd */
    const size_t n = sizeof(hash_primes) / sizeof(hash_primes[0]);
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (hash_primes[mid] < min_sz) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < n ? hash_primes[lo] : (min_sz | 1);
}

struct ggspec_hash_set ggspec_hash_set_new(size_t size) {
    struct ggspec_hash_set set;
    set.size = ggspec_hash_size(size);
    set.keys = calloc(set.size, sizeof(struct ggspec_tensor *));
    GGSPEC_ASSERT(set.keys != NULL, "result.keys != NULL");
    return set;
}

void ggspec_hash_set_free(struct ggspec_hash_set hash_set) {
    free(hash_set.keys);
}

/* the slot holding key, or the free slot where it would go; GGSPEC_HASHTABLE_FULL if neither */
size_t ggspec_hash_find(const struct ggspec_hash_set hash_set, struct ggspec_tensor * key) {
    /* an empty (size 0) set, as a graph view has, holds nothing and has no room */
    if (hash_set.size == 0) {
        return GGSPEC_HASHTABLE_FULL;
    }
    const size_t home = (size_t)(uintptr_t)key % hash_set.size;
    size_t i = home;
    while (hash_set.keys[i] != NULL && hash_set.keys[i] != key) {
        i = (i + 1) % hash_set.size;
        if (i == home) {
            return GGSPEC_HASHTABLE_FULL;
        }
    }
    return i;
}

bool ggspec_hash_contains(const struct ggspec_hash_set hash_set, struct ggspec_tensor * key) {
    const size_t i = ggspec_hash_find(hash_set, key);
    return i != GGSPEC_HASHTABLE_FULL && hash_set.keys[i] == key;
}

size_t ggspec_hash_insert(struct ggspec_hash_set hash_set, struct ggspec_tensor * key) {
    const size_t i = ggspec_hash_find(hash_set, key);
    GGSPEC_ASSERT(i != GGSPEC_HASHTABLE_FULL, "i != GGML_HASHTABLE_FULL"); /* CORE-11 */
    if (hash_set.keys[i] == key) {
        return GGSPEC_HASHTABLE_ALREADY_EXISTS;
    }
    GGSPEC_ASSERT(hash_set.keys[i] == NULL, "hash_set.keys[i] == NULL");
    hash_set.keys[i] = key;
    return i;
}

size_t ggspec_hash_find_or_insert(struct ggspec_hash_set hash_set, struct ggspec_tensor * key) {
    const size_t i = ggspec_hash_find(hash_set, key);
    GGSPEC_ASSERT(i != GGSPEC_HASHTABLE_FULL, "i != GGML_HASHTABLE_FULL"); /* CORE-11 */
    hash_set.keys[i] = key;
    return i;
}

/* graphs */

static size_t pad16(size_t n) {
    return (n + GGSPEC_MEM_ALIGN - 1) / GGSPEC_MEM_ALIGN * GGSPEC_MEM_ALIGN;
}

/* bytes of the graph object: the struct, then its pointer arrays */
static size_t graph_nbytes(size_t size, bool grads) {
    size_t slots = 2 * size + ggspec_hash_size(size * 2); /* nodes, leafs, hash keys */
    if (grads) {
        slots += size;
    }
    return sizeof(struct ggspec_cgraph) + slots * sizeof(struct ggspec_tensor *);
}

size_t ggspec_graph_overhead_custom(size_t size, bool grads) {
    return ggspec_internal_object_overhead() + pad16(graph_nbytes(size, grads));
}

size_t ggspec_graph_overhead(void) {
    return ggspec_graph_overhead_custom(GGSPEC_DEFAULT_GRAPH_SIZE, false);
}

/* enforces CORE-7 */
struct ggspec_cgraph * ggspec_new_graph_custom(struct ggspec_context * ctx, size_t size, bool grads) {
    struct ggspec_cgraph * g = ggspec_internal_new_object(ctx, GGSPEC_OBJECT_KIND_GRAPH, graph_nbytes(size, grads));

    const size_t hash_size = ggspec_hash_size(size * 2);
    struct ggspec_tensor ** nodes = (struct ggspec_tensor **)(g + 1);
    struct ggspec_tensor ** leafs = nodes + size;
    struct ggspec_tensor ** keys  = leafs + size;
    struct ggspec_tensor ** grad  = grads ? keys + hash_size : NULL;

    memset(keys, 0, hash_size * sizeof(*keys));

    *g = (struct ggspec_cgraph) {
        .size               = (int)size,
        .n_nodes            = 0,
        .n_leafs            = 0,
        .nodes              = nodes,
        .grads              = grad,
        .leafs              = leafs,
        .visited_hash_table = { hash_size, keys },
        .order              = GGSPEC_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT,
        .perf_runs          = 0,
        .perf_cycles        = 0,
        .perf_time_us       = 0,
    };
    return g;
}

struct ggspec_cgraph * ggspec_new_graph(struct ggspec_context * ctx) {
    return ggspec_new_graph_custom(ctx, GGSPEC_DEFAULT_GRAPH_SIZE, false);
}

/*
 * Nodes i0 .. i1-1 of a graph as a graph of their own, sharing the node (and grad) arrays. It
 * has no capacity (size 0), no leafs and an empty visited set: it is for computing, not for
 * expanding.
 */
/* enforces CORE-12 */
struct ggspec_cgraph ggspec_graph_view(struct ggspec_cgraph * cgraph0, int i0, int i1) {
    struct ggspec_cgraph v = {
        .size               = 0,
        .n_nodes            = i1 - i0,
        .n_leafs            = 0,
        .nodes              = cgraph0->nodes + i0,
        .grads              = cgraph0->grads != NULL ? cgraph0->grads + i0 : NULL,
        .leafs              = NULL,
        .visited_hash_table = { 0, NULL },
        .order              = cgraph0->order,
        .perf_runs          = 0,
        .perf_cycles        = 0,
        .perf_time_us       = 0,
    };
    return v;
}

/* enforces CORE-81 to CORE-85: capacities first, the gradient array after the lists; dst's visited set is
   not emptied */
void ggspec_graph_cpy(struct ggspec_cgraph * src, struct ggspec_cgraph * dst) {
    GGSPEC_ASSERT(dst->size >= src->n_leafs, "dst->size >= src->n_leafs");
    GGSPEC_ASSERT(dst->size >= src->n_nodes, "dst->size >= src->n_nodes");
    GGSPEC_ASSERT(dst->visited_hash_table.size >= src->visited_hash_table.size,
                  "dst->visited_hash_table.size >= src->visited_hash_table.size");

    dst->n_leafs = src->n_leafs;
    dst->n_nodes = src->n_nodes;
    dst->order   = src->order;

    for (int i = 0; i < src->n_leafs; i++) {
        dst->leafs[i] = src->leafs[i];
    }
    for (int i = 0; i < src->n_nodes; i++) {
        dst->nodes[i] = src->nodes[i];
    }
    if (src->grads != NULL) {
        GGSPEC_ASSERT(dst->grads != NULL, "dst->grads != NULL");
        for (int i = 0; i < src->n_nodes; i++) {
            dst->grads[i] = src->grads[i];
        }
    }
    for (size_t i = 0; i < src->visited_hash_table.size; i++) {
        if (src->visited_hash_table.keys[i] != NULL) {
            ggspec_hash_insert(dst->visited_hash_table, src->visited_hash_table.keys[i]);
        }
    }
}

/* enforces CORE-86 */
struct ggspec_cgraph * ggspec_graph_dup(struct ggspec_context * ctx, struct ggspec_cgraph * cgraph) {
    struct ggspec_cgraph * copy = ggspec_new_graph_custom(ctx, (size_t)cgraph->size, cgraph->grads != NULL);
    ggspec_graph_cpy(cgraph, copy);
    return copy;
}

/* enforces CORE-13 */
void ggspec_graph_clear(struct ggspec_cgraph * cgraph) {
    cgraph->n_leafs = 0;
    cgraph->n_nodes = 0;
    if (cgraph->visited_hash_table.keys != NULL) {
        memset(cgraph->visited_hash_table.keys, 0, cgraph->visited_hash_table.size * sizeof(struct ggspec_tensor *));
    }
}

struct ggspec_tensor * ggspec_graph_get_tensor(struct ggspec_cgraph * cgraph, const char * name) {
    /* leafs first, then nodes, as rc.8 searches */
    for (int i = 0; i < cgraph->n_leafs; i++) {
        if (strcmp(cgraph->leafs[i]->name, name) == 0) {
            return cgraph->leafs[i];
        }
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        if (strcmp(cgraph->nodes[i]->name, name) == 0) {
            return cgraph->nodes[i];
        }
    }
    return NULL;
}

/* building */

static void visit(struct ggspec_cgraph * g, struct ggspec_tensor * t) {
    if (ggspec_hash_insert(g->visited_hash_table, t) == GGSPEC_HASHTABLE_ALREADY_EXISTS) {
        return;
    }

    for (int i = 0; i < GGSPEC_MAX_SRC; i++) {
        /* right-to-left graphs visit the sources from the last slot down */
        const int k = g->order == GGSPEC_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT ? GGSPEC_MAX_SRC - 1 - i : i;
        if (t->src[k] != NULL) {
            visit(g, t->src[k]);
        }
    }

    if (t->op == GGSPEC_OP_NONE && t->grad == NULL) {
        GGSPEC_ASSERT(g->n_leafs < g->size, "cgraph->n_leafs < cgraph->size"); /* CORE-10 */
        if (t->name[0] == '\0') {
            ggspec_format_name(t, "leaf_%d", g->n_leafs);
        }
        g->leafs[g->n_leafs++] = t;
    } else {
        GGSPEC_ASSERT(g->n_nodes < g->size, "cgraph->n_nodes < cgraph->size"); /* CORE-9 */
        if (t->name[0] == '\0') {
            ggspec_format_name(t, "node_%d", g->n_nodes);
        }
        g->nodes[g->n_nodes] = t;
        if (g->grads != NULL) {
            g->grads[g->n_nodes] = t->grad;
        }
        g->n_nodes++;
    }
}

/* enforces CORE-6, CORE-8 */
void ggspec_build_forward_expand(struct ggspec_cgraph * cgraph, struct ggspec_tensor * tensor) {
    const int n0 = cgraph->n_nodes;
    visit(cgraph, tensor);
    if (cgraph->n_nodes > n0) {
        /* whatever was added, the tensor asked for comes last */
        GGSPEC_ASSERT(cgraph->nodes[cgraph->n_nodes - 1] == tensor, "cgraph->nodes[cgraph->n_nodes - 1] == tensor");
    }
}
