/* ops.h - cffi declarations: operations and tensor shape helpers (include/ggspec.h) */

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

int64_t ggspec_nelements(const struct ggspec_tensor * tensor);
int64_t ggspec_nrows(const struct ggspec_tensor * tensor);
bool    ggspec_is_contiguous(const struct ggspec_tensor * tensor);
bool    ggspec_is_transposed(const struct ggspec_tensor * tensor);
bool    ggspec_is_permuted(const struct ggspec_tensor * tensor);
bool    ggspec_are_same_shape(const struct ggspec_tensor * t0, const struct ggspec_tensor * t1);
const char *         ggspec_op_name(enum ggspec_op op);
const char *         ggspec_unary_op_name(enum ggspec_unary_op op);
enum ggspec_unary_op ggspec_get_unary_op(const struct ggspec_tensor * tensor);

struct ggspec_tensor * ggspec_dup_tensor(struct ggspec_context * ctx, const struct ggspec_tensor * src);
struct ggspec_tensor * ggspec_view_tensor(struct ggspec_context * ctx, struct ggspec_tensor * src);
void ggspec_set_param(struct ggspec_context * ctx, struct ggspec_tensor * tensor);

struct ggspec_tensor * ggspec_dup(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_dup_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_add(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_add_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_mul(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_mul_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_scale(struct ggspec_context * ctx, struct ggspec_tensor * a, float s);
struct ggspec_tensor * ggspec_scale_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, float s);
struct ggspec_tensor * ggspec_mul_mat(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_cpy(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_cont(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_reshape(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_reshape_1d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0);
struct ggspec_tensor * ggspec_reshape_2d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1);
struct ggspec_tensor * ggspec_reshape_3d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
struct ggspec_tensor * ggspec_reshape_4d(struct ggspec_context * ctx, struct ggspec_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
struct ggspec_tensor * ggspec_permute(struct ggspec_context * ctx, struct ggspec_tensor * a, int axis0, int axis1, int axis2, int axis3);
struct ggspec_tensor * ggspec_transpose(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_get_rows(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * b);
struct ggspec_tensor * ggspec_norm(struct ggspec_context * ctx, struct ggspec_tensor * a, float eps);
struct ggspec_tensor * ggspec_norm_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, float eps);
struct ggspec_tensor * ggspec_soft_max(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_soft_max_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_soft_max_ext(struct ggspec_context * ctx, struct ggspec_tensor * a, struct ggspec_tensor * mask, float scale);
struct ggspec_tensor * ggspec_unary(struct ggspec_context * ctx, struct ggspec_tensor * a, enum ggspec_unary_op op);
struct ggspec_tensor * ggspec_unary_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a, enum ggspec_unary_op op);
struct ggspec_tensor * ggspec_gelu(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_gelu_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_silu(struct ggspec_context * ctx, struct ggspec_tensor * a);
struct ggspec_tensor * ggspec_silu_inplace(struct ggspec_context * ctx, struct ggspec_tensor * a);
