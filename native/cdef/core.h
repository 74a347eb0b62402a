/* core.h - cffi declarations: types, tensors, views, contexts (include/ggspec.h) */

#define GGSPEC_MAX_DIMS 4
#define GGSPEC_MAX_SRC 10
#define GGSPEC_MAX_NAME 64
#define GGSPEC_MAX_OP_PARAMS 64
#define GGSPEC_DEFAULT_N_THREADS 4
#define GGSPEC_MEM_ALIGN 16

enum ggspec_type {
    GGSPEC_TYPE_F32 = 0,
    GGSPEC_TYPE_F16 = 1,
    GGSPEC_TYPE_Q4_0 = 2,
    GGSPEC_TYPE_Q4_1 = 3,
    GGSPEC_TYPE_Q5_0 = 6,
    GGSPEC_TYPE_Q5_1 = 7,
    GGSPEC_TYPE_Q8_0 = 8,
    GGSPEC_TYPE_Q8_1 = 9,
    GGSPEC_TYPE_Q2_K = 10,
    GGSPEC_TYPE_Q3_K = 11,
    GGSPEC_TYPE_Q4_K = 12,
    GGSPEC_TYPE_Q5_K = 13,
    GGSPEC_TYPE_Q6_K = 14,
    GGSPEC_TYPE_Q8_K = 15,
    GGSPEC_TYPE_IQ2_XXS = 16,
    GGSPEC_TYPE_IQ2_XS = 17,
    GGSPEC_TYPE_I8 = 18,
    GGSPEC_TYPE_I16 = 19,
    GGSPEC_TYPE_I32 = 20,
    GGSPEC_TYPE_COUNT = 21,
};

enum ggspec_backend_type {
    GGSPEC_BACKEND_CPU = 0,
    GGSPEC_BACKEND_GPU = 10,
    GGSPEC_BACKEND_GPU_SPLIT = 20,
};

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
    GGSPEC_OP_COUNT,};

struct ggspec_backend_buffer;
struct ggspec_context;
struct ggspec_cgraph;

struct ggspec_tensor {
    enum ggspec_type type;
    enum ggspec_backend_type backend;
    struct ggspec_backend_buffer * buffer;
    int64_t ne[4];
    size_t nb[4];
    enum ggspec_op op;
    int32_t op_params[16];
    bool is_param;
    struct ggspec_tensor * grad;
    struct ggspec_tensor * src[10];
    int perf_runs;
    int64_t perf_cycles;
    int64_t perf_time_us;
    struct ggspec_tensor * view_src;
    size_t view_offs;
    void * data;
    char name[64];
    void * extra;
    char padding[8];
};

struct ggspec_init_params {
    size_t mem_size;
    void * mem_buffer;
    bool no_alloc;
};

int              ggspec_blck_size(enum ggspec_type type);
size_t           ggspec_type_size(enum ggspec_type type);
size_t           ggspec_row_size(enum ggspec_type type, int64_t ne);
const char *     ggspec_type_name(enum ggspec_type type);
bool             ggspec_is_quantized(enum ggspec_type type);
enum ggspec_type ggspec_vec_dot_type(enum ggspec_type type);

struct ggspec_context * ggspec_init(struct ggspec_init_params params);
void                    ggspec_free(struct ggspec_context * ctx);
size_t                  ggspec_tensor_overhead(void);
size_t                  ggspec_used_mem(const struct ggspec_context * ctx);
bool                    ggspec_get_no_alloc(const struct ggspec_context * ctx);
struct ggspec_tensor *  ggspec_get_first_tensor(const struct ggspec_context * ctx);
struct ggspec_tensor *  ggspec_get_next_tensor(const struct ggspec_context * ctx, struct ggspec_tensor * tensor);

struct ggspec_tensor * ggspec_new_tensor(struct ggspec_context * ctx, enum ggspec_type type, int n_dims, const int64_t * ne);
struct ggspec_tensor * ggspec_new_tensor_1d(struct ggspec_context * ctx, enum ggspec_type type, int64_t ne0);
struct ggspec_tensor * ggspec_new_tensor_2d(struct ggspec_context * ctx, enum ggspec_type type, int64_t ne0, int64_t ne1);
struct ggspec_tensor * ggspec_new_tensor_3d(struct ggspec_context * ctx, enum ggspec_type type, int64_t ne0, int64_t ne1, int64_t ne2);
struct ggspec_tensor * ggspec_new_tensor_4d(struct ggspec_context * ctx, enum ggspec_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);

size_t                 ggspec_nbytes(const struct ggspec_tensor * tensor);
const char *           ggspec_get_name(const struct ggspec_tensor * tensor);
struct ggspec_tensor * ggspec_set_name(struct ggspec_tensor * tensor, const char * name);

struct ggspec_tensor * ggspec_view_1d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, size_t offset);
struct ggspec_tensor * ggspec_view_2d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
struct ggspec_tensor * ggspec_view_3d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset);
struct ggspec_tensor * ggspec_view_4d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset);
