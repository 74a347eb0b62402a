/*
 * alloc.c - tensor and graph allocators (ggml-alloc as rc.8 has it; see ggspec-alloc.h).
 *
 * The tensor allocator keeps a list of free blocks sorted by address. Allocation rounds the
 * tensor's size up to the alignment and takes the smallest block that fits, considering the
 * last block (the untouched tail of the buffer) only when no other block fits; on a tie the
 * later block wins. Freeing merges the range with the blocks it touches. max_size records the
 * highest end of any allocation (never reset), which is what measure mode reports.
 *
 * The graph allocator counts, for every tensor of a graph, its consumers (n_children) and
 * the views of it (n_views), then walks the nodes in order: it allocates each node's sources
 * and the node (a view takes its view_src's memory; an operation that can work in place may
 * take over a parent consumed only by it), and once a tensor has no consumers and no views
 * left it goes back to the free list. Tensors without consumers (the graph's outputs) are
 * never freed. Only tensors in the allocator's own buffer are ever freed.
 *
 * Deviations from rc.8, each where rc.8 would crash or corrupt: the graph's inputs (every
 * source of the walk's nodes that is not a node, has no data and is not a view) are all placed
 * before the first node (erratum ALLOC-20), so no input shares memory with another; a
 * graph without a visited
 * hash table (a graph view) gets a table of its own; the whole hash table is cleared before
 * each graph (rc.8 clears only as many slots as the new graph's table has, leaving stale
 * entries when an earlier graph's table was larger); and after alloc_graph_n the borrowed
 * table is forgotten entirely (rc.8 keeps its size with NULL keys, so a following
 * alloc_graph writes through NULL).
 */
#include "ggspec-alloc.h"
#include "ggspec-backend-impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assert.h"
#include "internal.h"

#define MAX_FREE_BLOCKS 256

/* offset rounded up so that (char *)buffer + result is a multiple of alignment (a power of 2) */
/* enforces ALLOC-1 */
static size_t aligned_offset(const void * buffer, size_t offset, size_t alignment) {
    const size_t mis = ((uintptr_t)buffer + offset) % alignment;
    return offset + (alignment - mis) % alignment;
}

struct free_block {
    char * addr;
    size_t size;
};

struct ggspec_tallocr {
    ggspec_backend_buffer_t buffer;
    bool                    buffer_owned;
    char *                  base;
    size_t                  alignment;

    int               n_free_blocks;
    struct free_block free_blocks[MAX_FREE_BLOCKS];

    size_t max_size;
    bool   measure;
};

static bool is_view(const struct ggspec_tensor * t) {
    return t->view_src != NULL;
}

/* the tensor's bytes were handed out by this allocator */
static bool tallocr_is_own(const struct ggspec_tallocr * alloc, const struct ggspec_tensor * t) {
    return t->buffer == alloc->buffer && (t->view_src == NULL || t->view_src->buffer == alloc->buffer);
}

static size_t padded_size(const struct ggspec_tallocr * alloc, struct ggspec_tensor * t) {
    return aligned_offset(NULL, ggspec_backend_buffer_get_alloc_size(alloc->buffer, t), alloc->alignment);
}

static void remove_block(struct ggspec_tallocr * alloc, int i) {
    alloc->n_free_blocks--;
    memmove(&alloc->free_blocks[i], &alloc->free_blocks[i + 1],
            (size_t)(alloc->n_free_blocks - i) * sizeof(struct free_block));
}

/* enforces ALLOC-4, ALLOC-5, ALLOC-6, ALLOC-7, ALLOC-27 */
void ggspec_tallocr_alloc(ggspec_tallocr_t alloc, struct ggspec_tensor * tensor) {
    GGSPEC_ASSERT(!is_view(tensor), "!ggml_is_view(tensor)"); /* ALLOC-4 */
    GGSPEC_ASSERT(tensor->data == NULL, "tensor->data == NULL"); /* ALLOC-5 */

    const size_t size = padded_size(alloc, tensor);

    /* best fit among all blocks but the last; the last (the tail) is the fallback */
    int    best      = -1;
    size_t best_size = SIZE_MAX;
    size_t largest   = 0;
    for (int i = 0; i < alloc->n_free_blocks - 1; i++) {
        const size_t s = alloc->free_blocks[i].size;
        largest = s > largest ? s : largest;
        if (s >= size && s <= best_size) {
            best      = i;
            best_size = s;
        }
    }
    if (best == -1) {
        const int last = alloc->n_free_blocks - 1;
        const size_t s = last >= 0 ? alloc->free_blocks[last].size : 0;
        largest = s > largest ? s : largest;
        if (last >= 0 && s >= size) {
            best = last;
        } else {
            fprintf(stderr, "%s: not enough space in the buffer (needed %zu, largest block available %zu)\n",
                    "ggml_tallocr_alloc", size, largest);
            GGSPEC_ASSERT(false, "!\"not enough space in the buffer\"");
        }
    }

    struct free_block * block = &alloc->free_blocks[best];
    char * addr = block->addr;
    block->addr += size;
    block->size -= size;
    /* an interior range used up goes; the last one (it runs to the buffer's end) stays, empty:
       rc.8 drops it too, and then takes a range freed later for the buffer's end, so a buffer
       of exactly the measured size can run out (erratum ALLOC-7) */
    if (block->size == 0 && best != alloc->n_free_blocks - 1) {
        remove_block(alloc, best);
    }

    tensor->data   = addr;
    tensor->buffer = alloc->buffer;
    if (!alloc->measure) {
        ggspec_backend_buffer_init_tensor(alloc->buffer, tensor);
    }

    const size_t end = (size_t)(addr - alloc->base) + size;
    alloc->max_size = end > alloc->max_size ? end : alloc->max_size;
}

/* enforces ALLOC-8, ALLOC-26 */
static void tallocr_free_tensor(ggspec_tallocr_t alloc, struct ggspec_tensor * tensor) {
    if (!tallocr_is_own(alloc, tensor)) {
        /* weights and other tensors of other buffers reach here through the graph: ignore */
        return;
    }

    char * ptr = tensor->data;
    const size_t size = padded_size(alloc, tensor);

    for (int i = 0; i < alloc->n_free_blocks; i++) {
        struct free_block * block = &alloc->free_blocks[i];
        if (block->addr + block->size == ptr) {
            /* extends block i; may close the gap to block i + 1 */
            block->size += size;
            if (i < alloc->n_free_blocks - 1 && block->addr + block->size == alloc->free_blocks[i + 1].addr) {
                block->size += alloc->free_blocks[i + 1].size;
                remove_block(alloc, i + 1);
            }
            return;
        }
        if (ptr + size == block->addr) {
            /* extends block i downwards; may close the gap to block i - 1 */
            block->addr = ptr;
            block->size += size;
            if (i > 0 && alloc->free_blocks[i - 1].addr + alloc->free_blocks[i - 1].size == block->addr) {
                alloc->free_blocks[i - 1].size += block->size;
                remove_block(alloc, i);
            }
            return;
        }
    }

    GGSPEC_ASSERT(alloc->n_free_blocks < MAX_FREE_BLOCKS, "alloc->n_free_blocks < MAX_FREE_BLOCKS && \"out of free blocks\"");
    int pos = 0;
    while (pos < alloc->n_free_blocks && alloc->free_blocks[pos].addr < ptr) {
        pos++;
    }
    memmove(&alloc->free_blocks[pos + 1], &alloc->free_blocks[pos],
            (size_t)(alloc->n_free_blocks - pos) * sizeof(struct free_block));
    alloc->free_blocks[pos] = (struct free_block) { .addr = ptr, .size = size };
    alloc->n_free_blocks++;
}

/* enforces ALLOC-9 */
void ggspec_tallocr_reset(ggspec_tallocr_t alloc) {
    const size_t off = aligned_offset(alloc->base, 0, alloc->alignment);
    alloc->n_free_blocks = 1;
    alloc->free_blocks[0].addr = alloc->base + off;
    if (alloc->measure) {
        /* half the address space: sums of sizes cannot overflow */
        alloc->free_blocks[0].size = SIZE_MAX / 2;
    } else {
        alloc->free_blocks[0].size = ggspec_backend_buffer_get_size(alloc->buffer) - off;
        ggspec_backend_buffer_reset(alloc->buffer);
    }
}

/* own_alignment: the buffer's alignment, asked for after its base (rc.8's order of the two
   entry calls, which a device's entry log shows), instead of `alignment` */
static ggspec_tallocr_t tallocr_make(ggspec_backend_buffer_t buffer, bool owned, size_t alignment, bool own_alignment) {
    GGSPEC_ASSERT(buffer != NULL, "buffer != NULL");
    ggspec_tallocr_t alloc = malloc(sizeof(*alloc));
    GGSPEC_ASSERT(alloc != NULL, "alloc != NULL");
    memset(alloc, 0, sizeof(*alloc));
    alloc->buffer       = buffer;
    alloc->buffer_owned = owned;
    alloc->base         = ggspec_backend_buffer_get_base(buffer);
    alloc->alignment    = own_alignment ? ggspec_backend_buffer_get_alignment(buffer) : alignment;
    alloc->max_size     = 0;
    alloc->measure      = false;
    ggspec_tallocr_reset(alloc);
    return alloc;
}

/* enforces ALLOC-1 */
ggspec_tallocr_t ggspec_tallocr_new(void * data, size_t size, size_t alignment) {
    /* the buffer object is ours, the memory stays the caller's */
    return tallocr_make(ggspec_backend_cpu_buffer_from_ptr(data, size), true, alignment, false);
}

/* enforces ALLOC-3 */
ggspec_tallocr_t ggspec_tallocr_new_measure(size_t alignment) {
    /* a stand-in address range that is never touched */
    ggspec_tallocr_t alloc = ggspec_tallocr_new((void *)0x1000, SIZE_MAX / 2, alignment);
    alloc->measure = true;
    return alloc;
}

/* enforces ALLOC-3 */
ggspec_tallocr_t ggspec_tallocr_new_measure_from_buft(ggspec_backend_buffer_type_t buft) {
    /* a real (tiny) buffer, so that alignment and allocation sizes are the buffer type's */
    ggspec_backend_buffer_t buffer = ggspec_backend_buft_alloc_buffer(buft, 1);
    ggspec_tallocr_t alloc = ggspec_tallocr_new_from_buffer(buffer);
    alloc->buffer_owned = true;
    alloc->measure      = true;
    ggspec_tallocr_reset(alloc);
    return alloc;
}

ggspec_tallocr_t ggspec_tallocr_new_measure_from_backend(ggspec_backend_t backend) {
    return ggspec_tallocr_new_measure_from_buft(ggspec_backend_get_default_buffer_type(backend));
}

/* enforces ALLOC-2 */
ggspec_tallocr_t ggspec_tallocr_new_from_buft(ggspec_backend_buffer_type_t buft, size_t size) {
    ggspec_backend_buffer_t buffer = ggspec_backend_buft_alloc_buffer(buft, size);
    ggspec_tallocr_t alloc = ggspec_tallocr_new_from_buffer(buffer);
    alloc->buffer_owned = true;
    return alloc;
}

ggspec_tallocr_t ggspec_tallocr_new_from_backend(ggspec_backend_t backend, size_t size) {
    return ggspec_tallocr_new_from_buft(ggspec_backend_get_default_buffer_type(backend), size);
}

/* enforces ALLOC-2 */
ggspec_tallocr_t ggspec_tallocr_new_from_buffer(ggspec_backend_buffer_t buffer) {
    GGSPEC_ASSERT(buffer != NULL, "buffer != NULL");
    return tallocr_make(buffer, false, 0, true);
}

ggspec_backend_buffer_t ggspec_tallocr_get_buffer(ggspec_tallocr_t alloc) {
    return alloc->buffer;
}

/* enforces ALLOC-9 */
void ggspec_tallocr_free(ggspec_tallocr_t alloc) {
    if (alloc == NULL) {
        return;
    }
    if (alloc->buffer_owned) {
        ggspec_backend_buffer_free(alloc->buffer);
    }
    free(alloc);
}

bool ggspec_tallocr_is_measure(ggspec_tallocr_t alloc) {
    return alloc->measure;
}

size_t ggspec_tallocr_max_size(ggspec_tallocr_t alloc) {
    return alloc->max_size;
}

int ggspec_tallocr_free_blocks(ggspec_tallocr_t alloc, size_t * offsets, size_t * sizes, int max) {
    for (int i = 0; i < alloc->n_free_blocks && i < max; i++) {
        offsets[i] = (size_t)(alloc->free_blocks[i].addr - alloc->base);
        sizes[i]   = alloc->free_blocks[i].size;
    }
    return alloc->n_free_blocks;
}

/* graph allocator */

struct hash_node {
    int  n_children;
    int  n_views;
    bool is_node; /* a node of the graph being placed (not one of its inputs) */
};

struct ggspec_gallocr {
    ggspec_tallocr_t        talloc;      /* set during alloc_graph */
    struct ggspec_hash_set  hash_set;
    struct hash_node *      hash_values;
    size_t                  hash_values_size;
    ggspec_tallocr_t *      hash_allocs; /* set during alloc_graph_n */
    int *                   parse_seq;
    int                     parse_seq_len;
    bool                    keys_owned;
};

/* enforces ALLOC-10 */
ggspec_gallocr_t ggspec_gallocr_new(void) {
    ggspec_gallocr_t galloc = calloc(1, sizeof(*galloc));
    GGSPEC_ASSERT(galloc != NULL, "galloc != NULL");
    return galloc;
}

/* enforces ALLOC-10, ALLOC-25 */
void ggspec_gallocr_free(ggspec_gallocr_t galloc) {
    if (galloc == NULL) {
        return;
    }
    if (galloc->keys_owned) {
        free(galloc->hash_set.keys);
    }
    free(galloc->hash_values);
    free(galloc->parse_seq);
    free(galloc);
}

/* enforces ALLOC-10 */
void ggspec_gallocr_set_parse_seq(ggspec_gallocr_t galloc, const int * list, int n) {
    free(galloc->parse_seq);
    galloc->parse_seq = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    GGSPEC_ASSERT(galloc->parse_seq != NULL, "galloc->parse_seq != NULL");
    if (n > 0) {
        memcpy(galloc->parse_seq, list, sizeof(int) * (size_t)n);
    }
    galloc->parse_seq_len = n;
}

static struct hash_node * hash_get(ggspec_gallocr_t galloc, struct ggspec_tensor * t) {
    return &galloc->hash_values[ggspec_hash_find_or_insert(galloc->hash_set, t)];
}

/* the operations whose kernels may write their result over their first operand */
static bool op_can_inplace(enum ggspec_op op) {
    switch (op) {
        case GGSPEC_OP_SCALE:
        case GGSPEC_OP_DIAG_MASK_ZERO:
        case GGSPEC_OP_DIAG_MASK_INF:
        case GGSPEC_OP_ADD:
        case GGSPEC_OP_ADD1:
        case GGSPEC_OP_SUB:
        case GGSPEC_OP_MUL:
        case GGSPEC_OP_DIV:
        case GGSPEC_OP_SQR:
        case GGSPEC_OP_SQRT:
        case GGSPEC_OP_LOG:
        case GGSPEC_OP_UNARY:
        case GGSPEC_OP_ROPE:
        case GGSPEC_OP_RMS_NORM:
        case GGSPEC_OP_SOFT_MAX:
            return true;
        default:
            return false;
    }
}

/* enforces ALLOC-14 */
static ggspec_tallocr_t node_tallocr(ggspec_gallocr_t galloc, struct ggspec_tensor * node) {
    if (galloc->talloc != NULL) {
        return galloc->talloc;
    }
    return galloc->hash_allocs[ggspec_hash_find_or_insert(galloc->hash_set, node)];
}

/* a view takes its bytes from its view_src; it is registered with the allocator's buffer */
/* enforces ALLOC-15, ALLOC-16 */
static void init_view(ggspec_gallocr_t galloc, struct ggspec_tensor * view, bool update_backend) {
    ggspec_tallocr_t alloc = node_tallocr(galloc, view);

    GGSPEC_ASSERT(view->view_src != NULL && view->view_src->data != NULL, "view->view_src != NULL && view->view_src->data != NULL");
    if (update_backend) {
        view->backend = view->view_src->backend;
    }
    view->buffer = alloc->buffer;
    view->data   = (char *)view->view_src->data + view->view_offs;
    if (!alloc->measure) {
        ggspec_backend_buffer_init_tensor(alloc->buffer, view);
    }
}

static void allocate_node(ggspec_gallocr_t galloc, struct ggspec_tensor * node) {
    ggspec_tallocr_t alloc = node_tallocr(galloc, node);

    if (node->data != NULL) {
        return;
    }
    if (is_view(node)) {
        init_view(galloc, node, true);
        return;
    }

    if (op_can_inplace(node->op)) {
        for (int i = 0; i < GGSPEC_MAX_SRC && node->src[i] != NULL; i++) {
            struct ggspec_tensor * parent = node->src[i];
            if (!tallocr_is_own(alloc, parent)) {
                continue; /* memory the allocator does not manage is never overwritten */
            }
            struct hash_node * p_hn = hash_get(galloc, parent);
            if (parent->data == NULL || p_hn->n_children != 1 || p_hn->n_views != 0 ||
                !ggspec_internal_same_layout(node, parent)) {
                continue;
            }
            if (is_view(parent)) {
                /* reuse the viewed tensor only when the view starts at it and nothing else uses it */
                struct ggspec_tensor * view_src = parent->view_src;
                struct hash_node * vs_hn = hash_get(galloc, view_src);
                if (vs_hn->n_views == 1 && vs_hn->n_children == 0 && view_src->data == parent->data) {
                    node->view_src = view_src;
                    vs_hn->n_views += 1;
                    init_view(galloc, node, false);
                    return;
                }
            } else {
                node->view_src = parent;
                p_hn->n_views += 1;
                init_view(galloc, node, false);
                return;
            }
        }
    }
    ggspec_tallocr_alloc(alloc, node);
}

static void free_node(ggspec_gallocr_t galloc, struct ggspec_tensor * node) {
    tallocr_free_tensor(node_tallocr(galloc, node), node);
}

/* one consumer of parent is done: free it (or its view_src) when nothing uses it any more */
static void release_parent(ggspec_gallocr_t galloc, struct ggspec_tensor * parent) {
    struct hash_node * p_hn = hash_get(galloc, parent);
    p_hn->n_children -= 1;
    if (p_hn->n_children != 0 || p_hn->n_views != 0) {
        return;
    }
    if (is_view(parent)) {
        struct ggspec_tensor * view_src = parent->view_src;
        struct hash_node * vs_hn = hash_get(galloc, view_src);
        vs_hn->n_views -= 1;
        if (vs_hn->n_views == 0 && vs_hn->n_children == 0) {
            free_node(galloc, view_src);
        }
    } else {
        free_node(galloc, parent);
    }
}

/* enforces ALLOC-11 */
static void alloc_graph_impl(ggspec_gallocr_t galloc, struct ggspec_cgraph * gf) {
    const int * seq     = galloc->parse_seq;
    const int   seq_len = galloc->parse_seq_len;

    /* count consumers and views; give views of already placed tensors their address */
    for (int i = 0; i < gf->n_nodes; i++) {
        struct ggspec_tensor * node = gf->nodes[i];
        hash_get(galloc, node)->is_node = true;
        if (is_view(node)) {
            hash_get(galloc, node->view_src)->n_views += 1;
            if (node->buffer == NULL && node->data != NULL) {
                init_view(galloc, node, true);
            }
        }
        for (int j = 0; j < GGSPEC_MAX_SRC && node->src[j] != NULL; j++) {
            struct ggspec_tensor * parent = node->src[j];
            hash_get(galloc, parent)->n_children += 1;
            if (is_view(parent) && parent->buffer == NULL && parent->data != NULL) {
                init_view(galloc, parent, true);
            }
        }
    }

    const int n = seq_len > 0 ? seq_len : gf->n_nodes;

    /*
     * The graph's inputs first (erratum ALLOC-20, as corrected): every source of the walk's
     * nodes, in walk order and sources in order, that is not itself a node, has no data and is
     * not a view. Their bytes are set before the graph runs, so they are all live from the
     * start. (rc.8 places an input only when its first consumer comes up, so it can land on a
     * range freed earlier in the run.) The sources, not gf->leafs: the scheduler's allocation
     * graph lists nodes only, its inputs are sources of its nodes.
     */
    for (int ind = 0; ind < n; ind++) {
        if (seq_len > 0 && seq[ind] == -1) {
            continue;
        }
        struct ggspec_tensor * node = gf->nodes[seq_len > 0 ? seq[ind] : ind];
        for (int j = 0; j < GGSPEC_MAX_SRC && node->src[j] != NULL; j++) {
            struct ggspec_tensor * src = node->src[j];
            if (src->data == NULL && !is_view(src) && !hash_get(galloc, src)->is_node) {
                ggspec_tallocr_alloc(node_tallocr(galloc, src), src);
            }
        }
    }

    /* allocate in order; without a parse sequence, release after every node, else at barriers */
    int last_barrier = 0;
    for (int ind = 0; ind < n; ind++) {
        if (seq_len == 0 || seq[ind] != -1) {
            struct ggspec_tensor * node = gf->nodes[seq_len > 0 ? seq[ind] : ind];
            for (int j = 0; j < GGSPEC_MAX_SRC && node->src[j] != NULL; j++) {
                allocate_node(galloc, node->src[j]);
            }
            allocate_node(galloc, node);
        }

        if (seq_len == 0 || seq[ind] == -1) {
            const int from = seq_len > 0 ? last_barrier : ind;
            const int to   = seq_len > 0 ? ind : ind + 1;
            for (int k = from; k < to; k++) {
                struct ggspec_tensor * node = gf->nodes[seq_len > 0 ? seq[k] : k];
                for (int j = 0; j < GGSPEC_MAX_SRC && node->src[j] != NULL; j++) {
                    release_parent(galloc, node->src[j]);
                }
            }
            if (seq_len > 0) {
                last_barrier = ind + 1;
            }
        }
    }
}

static void ensure_values(ggspec_gallocr_t galloc, size_t n) {
    if (galloc->hash_values == NULL || galloc->hash_values_size < n) {
        free(galloc->hash_values);
        galloc->hash_values = malloc(sizeof(struct hash_node) * n);
        GGSPEC_ASSERT(galloc->hash_values != NULL, "galloc->hash_values != NULL");
        galloc->hash_values_size = n;
    }
}

/* enforces ALLOC-13 */
size_t ggspec_gallocr_alloc_graph(ggspec_gallocr_t galloc, ggspec_tallocr_t talloc, struct ggspec_cgraph * graph) {
    size_t hash_size = graph->visited_hash_table.size;
    if (hash_size == 0) {
        /* a graph view: room for every node, its sources and their view_srcs */
        hash_size = ggspec_hash_size((size_t)graph->n_nodes * (GGSPEC_MAX_SRC + 2) + 1);
    }

    if (!galloc->keys_owned || galloc->hash_set.size < hash_size) {
        if (galloc->keys_owned) {
            free(galloc->hash_set.keys);
        }
        galloc->hash_set.keys = malloc(sizeof(struct ggspec_tensor *) * hash_size);
        GGSPEC_ASSERT(galloc->hash_set.keys != NULL, "galloc->hash_set.keys != NULL");
        galloc->hash_set.size = hash_size;
        galloc->keys_owned = true;
    }
    ensure_values(galloc, galloc->hash_set.size);

    memset(galloc->hash_set.keys, 0, sizeof(struct ggspec_tensor *) * galloc->hash_set.size);
    memset(galloc->hash_values, 0, sizeof(struct hash_node) * galloc->hash_set.size);

    galloc->talloc = talloc;
    alloc_graph_impl(galloc, graph);
    galloc->talloc = NULL;

    return ggspec_tallocr_max_size(talloc);
}

/* enforces ALLOC-14 */
void ggspec_gallocr_alloc_graph_n(ggspec_gallocr_t galloc, struct ggspec_cgraph * graph,
                                  struct ggspec_hash_set hash_set, ggspec_tallocr_t * hash_node_talloc) {
    const size_t hash_size = hash_set.size;
    GGSPEC_ASSERT(hash_size >= (size_t)(graph->n_nodes + graph->n_leafs), "hash_size >= (size_t)(graph->n_nodes + graph->n_leafs)");

    galloc->talloc = NULL;
    ensure_values(galloc, hash_size);

    if (galloc->keys_owned) {
        free(galloc->hash_set.keys);
    }
    /* borrow the caller's table for this call */
    galloc->hash_set   = hash_set;
    galloc->keys_owned = false;
    memset(galloc->hash_values, 0, sizeof(struct hash_node) * hash_size);
    galloc->hash_allocs = hash_node_talloc;

    alloc_graph_impl(galloc, graph);

    galloc->hash_set    = (struct ggspec_hash_set) { 0, NULL };
    galloc->hash_allocs = NULL;
}

/* legacy API */

struct ggspec_allocr {
    ggspec_tallocr_t talloc;
    ggspec_gallocr_t galloc;
};

static ggspec_allocr_t allocr_wrap(ggspec_tallocr_t talloc) {
    ggspec_allocr_t alloc = malloc(sizeof(*alloc));
    GGSPEC_ASSERT(alloc != NULL, "alloc != NULL");
    alloc->talloc = talloc;
    alloc->galloc = ggspec_gallocr_new();
    return alloc;
}

/* enforces ALLOC-22 */
ggspec_allocr_t ggspec_allocr_new(void * data, size_t size, size_t alignment) {
    return allocr_wrap(ggspec_tallocr_new(data, size, alignment));
}

ggspec_allocr_t ggspec_allocr_new_measure(size_t alignment) {
    return allocr_wrap(ggspec_tallocr_new_measure(alignment));
}

ggspec_allocr_t ggspec_allocr_new_from_buffer(ggspec_backend_buffer_t buffer) {
    return allocr_wrap(ggspec_tallocr_new_from_buffer(buffer));
}

ggspec_allocr_t ggspec_allocr_new_from_backend(ggspec_backend_t backend, size_t size) {
    return allocr_wrap(ggspec_tallocr_new_from_backend(backend, size));
}

ggspec_allocr_t ggspec_allocr_new_measure_from_backend(ggspec_backend_t backend) {
    return allocr_wrap(ggspec_tallocr_new_measure_from_backend(backend));
}

ggspec_backend_buffer_t ggspec_allocr_get_buffer(ggspec_allocr_t alloc) {
    return ggspec_tallocr_get_buffer(alloc->talloc);
}

void ggspec_allocr_set_parse_seq(ggspec_allocr_t alloc, const int * list, int n) {
    ggspec_gallocr_set_parse_seq(alloc->galloc, list, n);
}

/* enforces ALLOC-22 */
void ggspec_allocr_free(ggspec_allocr_t alloc) {
    if (alloc == NULL) {
        return;
    }
    ggspec_gallocr_free(alloc->galloc);
    ggspec_tallocr_free(alloc->talloc);
    free(alloc);
}

bool ggspec_allocr_is_measure(ggspec_allocr_t alloc) {
    return ggspec_tallocr_is_measure(alloc->talloc);
}

void ggspec_allocr_reset(ggspec_allocr_t alloc) {
    ggspec_tallocr_reset(alloc->talloc);
}

void ggspec_allocr_alloc(ggspec_allocr_t alloc, struct ggspec_tensor * tensor) {
    ggspec_tallocr_alloc(alloc->talloc, tensor);
}

size_t ggspec_allocr_max_size(ggspec_allocr_t alloc) {
    return ggspec_tallocr_max_size(alloc->talloc);
}

/* enforces ALLOC-22 */
size_t ggspec_allocr_alloc_graph(ggspec_allocr_t alloc, struct ggspec_cgraph * graph) {
    return ggspec_gallocr_alloc_graph(alloc->galloc, alloc->talloc, graph);
}

/* utilities */

static size_t pad_to(size_t n, size_t align) {
    return (n + align - 1) / align * align;
}

/* enforces ALLOC-23, ALLOC-24 */
ggspec_backend_buffer_t ggspec_backend_alloc_ctx_tensors_from_buft(struct ggspec_context * ctx, ggspec_backend_buffer_type_t buft) {
    GGSPEC_ASSERT(ggspec_get_no_alloc(ctx) == true, "ggml_get_no_alloc(ctx) == true"); /* ALLOC-24 */

    const size_t alignment = ggspec_backend_buft_get_alignment(buft);

    size_t nbytes = 0;
    for (struct ggspec_tensor * t = ggspec_get_first_tensor(ctx); t != NULL; t = ggspec_get_next_tensor(ctx, t)) {
        if (t->data == NULL && t->view_src == NULL) {
            nbytes += pad_to(ggspec_backend_buft_get_alloc_size(buft, t), alignment);
        }
    }
    if (nbytes == 0) {
        return NULL; /* nothing left to allocate */
    }

    ggspec_backend_buffer_t buffer = ggspec_backend_buft_alloc_buffer(buft, nbytes);
    if (buffer == NULL) {
        return NULL;
    }

    ggspec_tallocr_t tallocr = ggspec_tallocr_new_from_buffer(buffer);
    for (struct ggspec_tensor * t = ggspec_get_first_tensor(ctx); t != NULL; t = ggspec_get_next_tensor(ctx, t)) {
        if (t->data == NULL) {
            if (t->view_src == NULL) {
                ggspec_tallocr_alloc(tallocr, t);
            } else {
                ggspec_backend_view_init(buffer, t);
            }
        } else if (t->view_src != NULL) {
            /* a view made after its root was placed: it has an address but no buffer yet (a view
               that already has one makes view_init abort, as in rc.8) */
            ggspec_backend_view_init(buffer, t);
        }
    }
    ggspec_tallocr_free(tallocr);
    return buffer;
}

ggspec_backend_buffer_t ggspec_backend_alloc_ctx_tensors(struct ggspec_context * ctx, ggspec_backend_t backend) {
    return ggspec_backend_alloc_ctx_tensors_from_buft(ctx, ggspec_backend_get_default_buffer_type(backend));
}
