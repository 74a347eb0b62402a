/* quants.h - cffi declarations: half precision and the Q4_0 / Q8_0 formats (include/ggspec.h) */

typedef uint16_t ggspec_fp16_t;

#define GGSPEC_QK4_0 32
#define GGSPEC_QK8_0 32

float         ggspec_fp16_to_fp32(ggspec_fp16_t x);
ggspec_fp16_t ggspec_fp32_to_fp16(float x);
void          ggspec_fp16_to_fp32_row(const ggspec_fp16_t * x, float * y, int n);
void          ggspec_fp32_to_fp16_row(const float * x, ggspec_fp16_t * y, int n);

void ggspec_quantize_row_q4_0_reference(const float * x, void * y, int k);
void ggspec_quantize_row_q8_0_reference(const float * x, void * y, int k);
void ggspec_dequantize_row_q4_0(const void * x, float * y, int k);
void ggspec_dequantize_row_q8_0(const void * x, float * y, int k);

size_t ggspec_quantize_q4_0(const float * src, void * dst, int n, int k, int64_t * hist);
size_t ggspec_quantize_q8_0(const float * src, void * dst, int n, int k, int64_t * hist);

bool   ggspec_quantize_requires_imatrix(enum ggspec_type type);
size_t ggspec_quantize_chunk(enum ggspec_type type, const float * src, void * dst, int start,
                             int nrows, int n_per_row, int64_t * hist, const float * imatrix);
