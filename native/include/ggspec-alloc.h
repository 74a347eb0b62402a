/*
 * ggspec-alloc.h - placing tensors in buffers (ggml-alloc as rc.8 has it).
 *
 * A tensor allocator (tallocr) hands out aligned ranges of one buffer, best fit among its
 * free blocks, and takes them back; in measure mode it has no real memory and only records
 * the largest extent it would need. A graph allocator (gallocr) walks a graph in order,
 * allocates each node (or lets it reuse a parent's memory in place), and frees a tensor once
 * its last consumer has been placed, so that tensors live at the same time never overlap.
 * The legacy allocr bundles one of each.
 */
#pragma once

#include "ggspec-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* legacy API */
typedef struct ggspec_allocr * ggspec_allocr_t;

/* over caller memory (through a CPU buffer), or measuring only */
ggspec_allocr_t ggspec_allocr_new(void * data, size_t size, size_t alignment);
ggspec_allocr_t ggspec_allocr_new_measure(size_t alignment);

ggspec_allocr_t ggspec_allocr_new_from_buffer(ggspec_backend_buffer_t buffer);
ggspec_allocr_t ggspec_allocr_new_from_backend(ggspec_backend_t backend, size_t size); /* owns a new buffer */
ggspec_allocr_t ggspec_allocr_new_measure_from_backend(ggspec_backend_t backend);

ggspec_backend_buffer_t ggspec_allocr_get_buffer(ggspec_allocr_t alloc);

/* allocate the nodes in the order given by list (-1 entries are barriers where frees happen) */
void   ggspec_allocr_set_parse_seq(ggspec_allocr_t alloc, const int * list, int n);

void   ggspec_allocr_free       (ggspec_allocr_t alloc);
bool   ggspec_allocr_is_measure (ggspec_allocr_t alloc);
void   ggspec_allocr_reset      (ggspec_allocr_t alloc);
void   ggspec_allocr_alloc      (ggspec_allocr_t alloc, struct ggspec_tensor * tensor);
size_t ggspec_allocr_max_size   (ggspec_allocr_t alloc);

size_t ggspec_allocr_alloc_graph(ggspec_allocr_t alloc, struct ggspec_cgraph * graph);

/* tensor allocator (ggspec_tallocr_t is declared in ggspec-backend.h, for the scheduler) */

ggspec_tallocr_t ggspec_tallocr_new(void * data, size_t size, size_t alignment);
ggspec_tallocr_t ggspec_tallocr_new_measure(size_t alignment);
ggspec_tallocr_t ggspec_tallocr_new_from_buft(ggspec_backend_buffer_type_t buft, size_t size);
ggspec_tallocr_t ggspec_tallocr_new_from_backend(ggspec_backend_t backend, size_t size); /* owns a new buffer */
ggspec_tallocr_t ggspec_tallocr_new_from_buffer(ggspec_backend_buffer_t buffer);
ggspec_tallocr_t ggspec_tallocr_new_measure_from_buft(ggspec_backend_buffer_type_t buft);
ggspec_tallocr_t ggspec_tallocr_new_measure_from_backend(ggspec_backend_t backend);

ggspec_backend_buffer_t ggspec_tallocr_get_buffer(ggspec_tallocr_t talloc);

void   ggspec_tallocr_free       (ggspec_tallocr_t talloc);
bool   ggspec_tallocr_is_measure (ggspec_tallocr_t talloc);
void   ggspec_tallocr_reset      (ggspec_tallocr_t talloc);
void   ggspec_tallocr_alloc      (ggspec_tallocr_t talloc, struct ggspec_tensor * tensor);
size_t ggspec_tallocr_max_size   (ggspec_tallocr_t talloc);

/* graph allocator */
typedef struct ggspec_gallocr * ggspec_gallocr_t;

ggspec_gallocr_t ggspec_gallocr_new(void);
void   ggspec_gallocr_free(ggspec_gallocr_t galloc);

void   ggspec_gallocr_set_parse_seq(ggspec_gallocr_t galloc, const int * list, int n);
size_t ggspec_gallocr_alloc_graph(ggspec_gallocr_t galloc, ggspec_tallocr_t talloc, struct ggspec_cgraph * graph);

/* allocate each tensor with the tallocr hash_node_talloc[i] for the tensor in slot i of hash_set */
void   ggspec_gallocr_alloc_graph_n(ggspec_gallocr_t galloc, struct ggspec_cgraph * graph,
                                    struct ggspec_hash_set hash_set, ggspec_tallocr_t * hash_node_talloc);

/* utilities: one buffer holding every not yet allocated tensor of a no_alloc context */
ggspec_backend_buffer_t ggspec_backend_alloc_ctx_tensors_from_buft(struct ggspec_context * ctx, ggspec_backend_buffer_type_t buft);
ggspec_backend_buffer_t ggspec_backend_alloc_ctx_tensors(struct ggspec_context * ctx, ggspec_backend_t backend);

/* ggspec extension (test hook): the free blocks of a tallocr, as (offset from base, size) pairs;
   returns their count and fills at most max pairs */
int ggspec_tallocr_free_blocks(ggspec_tallocr_t talloc, size_t * offsets, size_t * sizes, int max);

#ifdef __cplusplus
}
#endif
