/*
 * ggspec.h - the core of ggspec's native implementation: element types, tensors, views and
 * the memory context that holds them.
 *
 * Names follow ggml's with the prefix ggspec_ / GGSPEC_; enum values and the layout of
 * struct ggspec_tensor follow whisper.rn 0.4.0-rc.8 so that a tensor built here reads the
 * same field by field as one built by rc.8.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGSPEC_MAX_DIMS          4
#define GGSPEC_MAX_SRC           10
#define GGSPEC_MAX_NAME          64
#define GGSPEC_MAX_OP_PARAMS     64
#define GGSPEC_DEFAULT_N_THREADS 4

/* Objects in a context (tensors and their data) start at multiples of this. */
#define GGSPEC_MEM_ALIGN         16

enum ggspec_type {
    GGSPEC_TYPE_F32     = 0,
    GGSPEC_TYPE_F16     = 1,
    GGSPEC_TYPE_Q4_0    = 2,
    GGSPEC_TYPE_Q4_1    = 3,
    /* 4 and 5 were Q4_2 / Q4_3, long removed; the numbers stay unused */
    GGSPEC_TYPE_Q5_0    = 6,
    GGSPEC_TYPE_Q5_1    = 7,
    GGSPEC_TYPE_Q8_0    = 8,
    GGSPEC_TYPE_Q8_1    = 9,
    GGSPEC_TYPE_Q2_K    = 10,
    GGSPEC_TYPE_Q3_K    = 11,
    GGSPEC_TYPE_Q4_K    = 12,
    GGSPEC_TYPE_Q5_K    = 13,
    GGSPEC_TYPE_Q6_K    = 14,
    GGSPEC_TYPE_Q8_K    = 15,
    GGSPEC_TYPE_IQ2_XXS = 16,
    GGSPEC_TYPE_IQ2_XS  = 17,
    GGSPEC_TYPE_I8,
    GGSPEC_TYPE_I16,
    GGSPEC_TYPE_I32,
    GGSPEC_TYPE_COUNT,
};

enum ggspec_backend_type {
    GGSPEC_BACKEND_CPU       = 0,
    GGSPEC_BACKEND_GPU       = 10,
    GGSPEC_BACKEND_GPU_SPLIT = 20,
};

/* The operations, in rc.8's order (the numeric value of each is part of the ABI). */
enum ggspec_op {
    GGSPEC_OP_NONE = 0,

    GGSPEC_OP_DUP,
    GGSPEC_OP_ADD,
    GGSPEC_OP_ADD1,
    GGSPEC_OP_ACC,
    GGSPEC_OP_SUB,
    GGSPEC_OP_MUL,
    GGSPEC_OP_DIV,
    GGSPEC_OP_SQR,
    GGSPEC_OP_SQRT,
    GGSPEC_OP_LOG,
    GGSPEC_OP_SUM,
    GGSPEC_OP_SUM_ROWS,
    GGSPEC_OP_MEAN,
    GGSPEC_OP_ARGMAX,
    GGSPEC_OP_REPEAT,
    GGSPEC_OP_REPEAT_BACK,
    GGSPEC_OP_CONCAT,
    GGSPEC_OP_SILU_BACK,
    GGSPEC_OP_NORM,
    GGSPEC_OP_RMS_NORM,
    GGSPEC_OP_RMS_NORM_BACK,
    GGSPEC_OP_GROUP_NORM,

    GGSPEC_OP_MUL_MAT,
    GGSPEC_OP_MUL_MAT_ID,
    GGSPEC_OP_OUT_PROD,

    GGSPEC_OP_SCALE,
    GGSPEC_OP_SET,
    GGSPEC_OP_CPY,
    GGSPEC_OP_CONT,
    GGSPEC_OP_RESHAPE,
    GGSPEC_OP_VIEW,
    GGSPEC_OP_PERMUTE,
    GGSPEC_OP_TRANSPOSE,
    GGSPEC_OP_GET_ROWS,
    GGSPEC_OP_GET_ROWS_BACK,
    GGSPEC_OP_DIAG,
    GGSPEC_OP_DIAG_MASK_INF,
    GGSPEC_OP_DIAG_MASK_ZERO,
    GGSPEC_OP_SOFT_MAX,
    GGSPEC_OP_SOFT_MAX_BACK,
    GGSPEC_OP_ROPE,
    GGSPEC_OP_ROPE_BACK,
    GGSPEC_OP_ALIBI,
    GGSPEC_OP_CLAMP,
    GGSPEC_OP_CONV_TRANSPOSE_1D,
    GGSPEC_OP_IM2COL,
    GGSPEC_OP_CONV_TRANSPOSE_2D,
    GGSPEC_OP_POOL_1D,
    GGSPEC_OP_POOL_2D,
    GGSPEC_OP_UPSCALE,
    GGSPEC_OP_PAD,
    GGSPEC_OP_ARGSORT,
    GGSPEC_OP_LEAKY_RELU,

    GGSPEC_OP_FLASH_ATTN,
    GGSPEC_OP_FLASH_FF,
    GGSPEC_OP_FLASH_ATTN_BACK,
    GGSPEC_OP_WIN_PART,
    GGSPEC_OP_WIN_UNPART,
    GGSPEC_OP_GET_REL_POS,
    GGSPEC_OP_ADD_REL_POS,

    GGSPEC_OP_UNARY,

    GGSPEC_OP_MAP_UNARY,
    GGSPEC_OP_MAP_BINARY,

    GGSPEC_OP_MAP_CUSTOM1_F32,
    GGSPEC_OP_MAP_CUSTOM2_F32,
    GGSPEC_OP_MAP_CUSTOM3_F32,

    GGSPEC_OP_MAP_CUSTOM1,
    GGSPEC_OP_MAP_CUSTOM2,
    GGSPEC_OP_MAP_CUSTOM3,

    GGSPEC_OP_CROSS_ENTROPY_LOSS,
    GGSPEC_OP_CROSS_ENTROPY_LOSS_BACK,

    GGSPEC_OP_COUNT,
};

struct ggspec_backend_buffer;
struct ggspec_context;
struct ggspec_cgraph; /* defined below, with the graph functions */

/*
 * A tensor: shape (ne, elements per dimension), strides (nb, bytes per step in each
 * dimension), where its bytes live (buffer + data, or view_src + view_offs for a view) and
 * the operation that produces it. Field names and order are rc.8's.
 */
struct ggspec_tensor {
    enum ggspec_type         type;
    enum ggspec_backend_type backend;

    struct ggspec_backend_buffer * buffer;

    int64_t ne[GGSPEC_MAX_DIMS];
    size_t  nb[GGSPEC_MAX_DIMS];

    enum ggspec_op op;

    /* operation parameters, stored as int32_t for alignment */
    int32_t op_params[GGSPEC_MAX_OP_PARAMS / sizeof(int32_t)];

    bool is_param;

    struct ggspec_tensor * grad;
    struct ggspec_tensor * src[GGSPEC_MAX_SRC];

    int     perf_runs;
    int64_t perf_cycles;
    int64_t perf_time_us;

    struct ggspec_tensor * view_src;  /* the root (non-view) tensor of a view, else NULL */
    size_t                 view_offs; /* byte offset of a view inside its root */

    void * data;

    char name[GGSPEC_MAX_NAME];

    void * extra;

    char padding[8];
};

struct ggspec_init_params {
    size_t mem_size;   /* bytes of the context's pool */
    void * mem_buffer; /* caller-owned pool, or NULL to have the context allocate one */
    bool   no_alloc;   /* when true, new tensors get no data (data stays NULL) */
};

/* type traits */
int              ggspec_blck_size    (enum ggspec_type type);
size_t           ggspec_type_size    (enum ggspec_type type);
size_t           ggspec_row_size     (enum ggspec_type type, int64_t ne);
const char *     ggspec_type_name    (enum ggspec_type type);
bool             ggspec_is_quantized (enum ggspec_type type);
enum ggspec_type ggspec_vec_dot_type (enum ggspec_type type);

/* contexts */
struct ggspec_context * ggspec_init(struct ggspec_init_params params);
void                    ggspec_free(struct ggspec_context * ctx);
size_t                  ggspec_tensor_overhead(void);
size_t                  ggspec_used_mem(const struct ggspec_context * ctx);
bool                    ggspec_get_no_alloc(const struct ggspec_context * ctx);
struct ggspec_tensor *  ggspec_get_first_tensor(const struct ggspec_context * ctx);
struct ggspec_tensor *  ggspec_get_next_tensor(const struct ggspec_context * ctx, struct ggspec_tensor * tensor);

/* tensors */
struct ggspec_tensor * ggspec_new_tensor(struct ggspec_context * ctx, enum ggspec_type type,
                                         int n_dims, const int64_t * ne);
struct ggspec_tensor * ggspec_new_tensor_1d(struct ggspec_context * ctx, enum ggspec_type type,
                                            int64_t ne0);
struct ggspec_tensor * ggspec_new_tensor_2d(struct ggspec_context * ctx, enum ggspec_type type,
                                            int64_t ne0, int64_t ne1);
struct ggspec_tensor * ggspec_new_tensor_3d(struct ggspec_context * ctx, enum ggspec_type type,
                                            int64_t ne0, int64_t ne1, int64_t ne2);
struct ggspec_tensor * ggspec_new_tensor_4d(struct ggspec_context * ctx, enum ggspec_type type,
                                            int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);

size_t                 ggspec_nbytes  (const struct ggspec_tensor * tensor);
const char *           ggspec_get_name(const struct ggspec_tensor * tensor);
struct ggspec_tensor * ggspec_set_name(struct ggspec_tensor * tensor, const char * name);

/* views: offset is in bytes from the start of a */
struct ggspec_tensor * ggspec_view_1d(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int64_t ne0, size_t offset);
struct ggspec_tensor * ggspec_view_2d(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
struct ggspec_tensor * ggspec_view_3d(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int64_t ne0, int64_t ne1, int64_t ne2,
                                      size_t nb1, size_t nb2, size_t offset);
struct ggspec_tensor * ggspec_view_4d(struct ggspec_context * ctx, struct ggspec_tensor * a,
                                      int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset);

/*
 * Graphs (graph.c). A graph lists the tensors needed to compute its outputs: nodes (tensors
 * made by an operation, and parameters) in an order where every node comes after its sources,
 * and leafs (tensors without an operation: inputs, weights, constants). Field names and order
 * are rc.8's.
 */
#define GGSPEC_DEFAULT_GRAPH_SIZE 2048

/* what ggspec_hash_find / _insert return instead of an index */
#define GGSPEC_HASHTABLE_FULL           ((size_t)-1)
#define GGSPEC_HASHTABLE_ALREADY_EXISTS ((size_t)-2)

enum ggspec_cgraph_eval_order {
    GGSPEC_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT = 0,
    GGSPEC_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT,
    GGSPEC_CGRAPH_EVAL_ORDER_COUNT
};

/* an open-addressing set of tensor pointers (linear probing; keys[i] == NULL is a free slot) */
struct ggspec_hash_set {
    size_t                  size;
    struct ggspec_tensor ** keys;
};

struct ggspec_cgraph {
    int size;    /* capacity of nodes / leafs (0 for a view) */
    int n_nodes;
    int n_leafs;

    struct ggspec_tensor ** nodes;
    struct ggspec_tensor ** grads; /* NULL unless created with grads */
    struct ggspec_tensor ** leafs;

    struct ggspec_hash_set visited_hash_table; /* every tensor the graph has visited */

    enum ggspec_cgraph_eval_order order;

    int     perf_runs;
    int64_t perf_cycles;
    int64_t perf_time_us;
};

void                   ggspec_build_forward_expand(struct ggspec_cgraph * cgraph, struct ggspec_tensor * tensor);

struct ggspec_cgraph * ggspec_new_graph         (struct ggspec_context * ctx); /* size GGSPEC_DEFAULT_GRAPH_SIZE, no grads */
struct ggspec_cgraph * ggspec_new_graph_custom  (struct ggspec_context * ctx, size_t size, bool grads);
struct ggspec_cgraph * ggspec_graph_dup         (struct ggspec_context * ctx, struct ggspec_cgraph * cgraph);
struct ggspec_cgraph   ggspec_graph_view        (struct ggspec_cgraph * cgraph, int i0, int i1);
void                   ggspec_graph_cpy         (struct ggspec_cgraph * src, struct ggspec_cgraph * dst);
void                   ggspec_graph_clear       (struct ggspec_cgraph * cgraph);
struct ggspec_tensor * ggspec_graph_get_tensor  (struct ggspec_cgraph * cgraph, const char * name);

size_t ggspec_graph_overhead(void);
size_t ggspec_graph_overhead_custom(size_t size, bool grads);

/* the hash sets graphs and allocators use (ggml-impl.h in rc.8) */
struct ggspec_hash_set ggspec_hash_set_new(size_t size);
bool   ggspec_hash_contains      (const struct ggspec_hash_set hash_set, struct ggspec_tensor * key);
size_t ggspec_hash_find          (const struct ggspec_hash_set hash_set, struct ggspec_tensor * key);
size_t ggspec_hash_insert        (      struct ggspec_hash_set hash_set, struct ggspec_tensor * key);
size_t ggspec_hash_find_or_insert(      struct ggspec_hash_set hash_set, struct ggspec_tensor * key);
/* static in rc.8, public here: the table size used for at least min_sz keys, and freeing a set */
size_t ggspec_hash_size(size_t min_sz);
void   ggspec_hash_set_free(struct ggspec_hash_set hash_set);

/*
 * Computing a graph on the CPU (executor.c, each node with kernels.c): ggspec_graph_plan says
 * how much work memory the graph needs with n_threads threads; the caller provides it in
 * work_data.
 */
struct ggspec_cplan {
    size_t    work_size;
    uint8_t * work_data;

    int n_threads;

    /* when it returns true, ggspec_graph_compute stops before the next node */
    bool (*abort_callback)(void * data);
    void * abort_callback_data;
};

#define GGSPEC_EXIT_SUCCESS 0
#define GGSPEC_EXIT_ABORTED 1

struct ggspec_cplan ggspec_graph_plan   (const struct ggspec_cgraph * cgraph, int n_threads);
int                 ggspec_graph_compute(struct ggspec_cgraph * cgraph, struct ggspec_cplan * cplan);

/*
 * Operations (ops.c). Each returns a new tensor whose op, op_params and src describe the
 * computation; nothing is computed until a graph holding it is (kernels.c). The _inplace
 * variants return a view of their first operand. UNARY keeps its enum ggspec_unary_op in
 * op_params[0].
 */
enum ggspec_unary_op {
    GGSPEC_UNARY_OP_ABS,
    GGSPEC_UNARY_OP_SGN,
    GGSPEC_UNARY_OP_NEG,
    GGSPEC_UNARY_OP_STEP,
    GGSPEC_UNARY_OP_TANH,
    GGSPEC_UNARY_OP_ELU,
    GGSPEC_UNARY_OP_RELU,
    GGSPEC_UNARY_OP_GELU,
    GGSPEC_UNARY_OP_GELU_QUICK,
    GGSPEC_UNARY_OP_SILU,

    GGSPEC_UNARY_OP_COUNT,
};

/* tensor shape helpers */
int64_t ggspec_nelements     (const struct ggspec_tensor * tensor);
int64_t ggspec_nrows         (const struct ggspec_tensor * tensor);
bool    ggspec_is_contiguous (const struct ggspec_tensor * tensor);
bool    ggspec_is_transposed (const struct ggspec_tensor * tensor);
bool    ggspec_is_permuted   (const struct ggspec_tensor * tensor);
bool    ggspec_are_same_shape(const struct ggspec_tensor * t0, const struct ggspec_tensor * t1);
const char *         ggspec_op_name(enum ggspec_op op);
const char *         ggspec_unary_op_name(enum ggspec_unary_op op);
enum ggspec_unary_op ggspec_get_unary_op(const struct ggspec_tensor * tensor);

struct ggspec_tensor * ggspec_dup_tensor (struct ggspec_context * ctx, const struct ggspec_tensor * src);
struct ggspec_tensor * ggspec_view_tensor(struct ggspec_context * ctx, struct ggspec_tensor * src);
struct ggspec_tensor * ggspec_format_name(struct ggspec_tensor * tensor, const char * fmt, ...);

/* marks a tensor as a parameter: it gets a gradient tensor and is a node of graphs, not a leaf */
void ggspec_set_param(struct ggspec_context * ctx, struct ggspec_tensor * tensor);

struct ggspec_tensor * ggspec_dup          (struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_dup_inplace  (struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_add          (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_add_inplace  (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_mul          (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_mul_inplace  (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_scale        (struct ggspec_context * ctx, struct ggspec_tensor * a, float s);
struct ggspec_tensor * ggspec_scale_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, float s);
struct ggspec_tensor * ggspec_mul_mat      (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_cpy          (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_cont         (struct ggspec_context * ctx, struct ggspec_tensor * a);

struct ggspec_tensor * ggspec_reshape   (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_reshape_1d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0);
struct ggspec_tensor * ggspec_reshape_2d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1);
struct ggspec_tensor * ggspec_reshape_3d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
struct ggspec_tensor * ggspec_reshape_4d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
struct ggspec_tensor * ggspec_permute   (struct ggspec_context * ctx, struct ggspec_tensor * a, int axis0, int axis1, int axis2, int axis3);
struct ggspec_tensor * ggspec_transpose (struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_get_rows  (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);

struct ggspec_tensor * ggspec_norm            (struct ggspec_context * ctx, struct ggspec_tensor * a, float eps);
struct ggspec_tensor * ggspec_norm_inplace    (struct ggspec_context * ctx, struct ggspec_tensor * a, float eps);
struct ggspec_tensor * ggspec_soft_max        (struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_soft_max_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_soft_max_ext    (struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * mask, float scale);

struct ggspec_tensor * ggspec_unary        (struct ggspec_context * ctx, struct ggspec_tensor * a, enum ggspec_unary_op op);
struct ggspec_tensor * ggspec_unary_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, enum ggspec_unary_op op);
struct ggspec_tensor * ggspec_gelu         (struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_gelu_inplace (struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_silu         (struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_silu_inplace (struct ggspec_context * ctx, struct ggspec_tensor * a);

/*
 * Half precision and quantization (quants.c). fp16 values are IEEE binary16 bit patterns;
 * fp32 -> fp16 rounds to nearest, ties to even. Q4_0 and Q8_0 blocks hold 32 values: an fp16
 * scale d, then 16 bytes of 4-bit codes (value = (code - 8) * d; byte j holds elements j and
 * j + 16 in its low and high nibble) or 32 signed bytes (value = q * d).
 */
typedef uint16_t ggspec_fp16_t;

#define GGSPEC_QK4_0 32
#define GGSPEC_QK8_0 32

float         ggspec_fp16_to_fp32(ggspec_fp16_t x);
ggspec_fp16_t ggspec_fp32_to_fp16(float x);
void          ggspec_fp16_to_fp32_row(const ggspec_fp16_t * x, float * y, int n);
void          ggspec_fp32_to_fp16_row(const float * x, ggspec_fp16_t * y, int n);

/* one row of k values (k a multiple of 32), rc.8's reference rounding; y points at blocks */
void ggspec_quantize_row_q4_0_reference(const float * x, void * y, int k);
void ggspec_quantize_row_q8_0_reference(const float * x, void * y, int k);
void ggspec_dequantize_row_q4_0(const void * x, float * y, int k);
void ggspec_dequantize_row_q8_0(const void * x, float * y, int k);

/* n values in rows of k; hist (16 counters, may be NULL here) counts the codes made */
size_t ggspec_quantize_q4_0(const float * src, void * dst, int n, int k, int64_t * hist);
size_t ggspec_quantize_q8_0(const float * src, void * dst, int n, int k, int64_t * hist);

bool   ggspec_quantize_requires_imatrix(enum ggspec_type type);
/* quantize nrows rows of n_per_row values from src + start into their place in dst */
size_t ggspec_quantize_chunk(enum ggspec_type type, const float * src, void * dst, int start,
                             int nrows, int n_per_row, int64_t * hist, const float * imatrix);

#ifdef __cplusplus
}
#endif
