/* Upstream's Vulkan backend (llama-cpp-python's vendored llama.cpp), without ggspec: the defects
 * ggspec's --device vulkan runs found, each shown by plain API calls on this machine's driver.
 * Built and run by bench/vulkan_defects.py against a target's cached library and headers.
 *
 *   vulkan_defects clear VALUE            buffer clear(VALUE) on a Vulkan buffer, then read it back
 *   vulkan_defects mul_mat K M N          F32 MUL_MAT (K x M weights, K x N input) on the device
 *   vulkan_defects copy N                 tensor_copy of N bytes between two Vulkan buffers
 *   vulkan_defects empty                  alloc_buffer(0) from the device, then clear(0) it
 *
 * Prints what it saw and exits 1 when the device's result differs from the exact one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

ggml_backend_t ggml_backend_vk_init(size_t dev);
int ggml_backend_vk_get_device_count(void) __attribute__((weak));

static ggml_backend_t device(void) {
    if (ggml_backend_vk_get_device_count) ggml_backend_vk_get_device_count(); /* starts the instance (0.2.56 on) */
    return ggml_backend_vk_init(0);
}

static int clear(int value) {
    ggml_backend_t vk = device();
    ggml_backend_buffer_t buf = ggml_backend_alloc_buffer(vk, 64);
    struct ggml_init_params ip = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *t = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 16);
    ggml_backend_buffer_clear(buf, (uint8_t)value);
    ggml_backend_tensor_alloc(buf, t, (char *)ggml_backend_buffer_get_base(buf));
    unsigned char got[16];
    ggml_backend_tensor_get(t, got, 0, sizeof got);
    int bad = 0;
    printf("clear(0x%02x), bytes 0..15 read back:", value);
    for (int i = 0; i < 16; i++) { printf(" %02x", got[i]); bad += got[i] != (unsigned char)value; }
    printf("\n%d of 16 bytes differ from 0x%02x\n", bad, value);
    ggml_free(ctx); ggml_backend_buffer_free(buf); ggml_backend_free(vk);
    return bad != 0;
}

static int mul_mat(int K, int M, int N) {
    ggml_backend_t vk = device();
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor *y = ggml_mul_mat(ctx, w, x);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, vk);
    ggml_backend_buffer_clear(buf, 0);
    float *hw = malloc(sizeof(float) * K * M), *hx = malloc(sizeof(float) * K * N), *hy = malloc(sizeof(float) * M * N);
    /* small integers: every product and sum is exact in F16 and F32, so any rounding is exact too */
    for (int i = 0; i < K * M; i++) hw[i] = (float)(i % 7) - 3;
    for (int i = 0; i < K * N; i++) hx[i] = (float)(i % 5) - 2;
    ggml_backend_tensor_set(w, hw, 0, sizeof(float) * K * M);
    ggml_backend_tensor_set(x, hx, 0, sizeof(float) * K * N);
    struct ggml_cgraph *g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    printf("supports_op(MUL_MAT) = %d\n", ggml_backend_supports_op(vk, y));
    ggml_backend_graph_compute(vk, g);
    ggml_backend_tensor_get(y, hy, 0, sizeof(float) * M * N);
    int bad = 0, zero = 0;
    for (int n = 0; n < N; n++) for (int m = 0; m < M; m++) {
        float s = 0;
        for (int k = 0; k < K; k++) s += hw[m * K + k] * hx[n * K + k];
        if (s != hy[n * M + m]) {
            if (bad < 3) printf("y[%d,%d] = %g, exact %g\n", m, n, hy[n * M + m], s);
            bad++; zero += hy[n * M + m] == 0.0f;
        }
    }
    printf("MUL_MAT K=%d M=%d N=%d: %d of %d elements wrong (%d of them 0: not computed)\n", K, M, N, bad, M * N, zero);
    ggml_backend_buffer_free(buf); ggml_free(ctx); ggml_backend_free(vk);
    return bad != 0;
}

/* tensor_copy between tensors in two Vulkan buffers (both written with tensor_set, no clear):
 * the destination must end with the source's bytes and the source keep them. */
static int copy(int n) {
    ggml_backend_t vk = device();
    struct ggml_init_params ip = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *src = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, n), *dst = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, n);
    ggml_backend_buffer_t bs = ggml_backend_alloc_buffer(vk, 256), bd = ggml_backend_alloc_buffer(vk, 256);
    ggml_backend_tensor_alloc(bs, src, (char *)ggml_backend_buffer_get_base(bs));
    ggml_backend_tensor_alloc(bd, dst, (char *)ggml_backend_buffer_get_base(bd));
    unsigned char *a = malloc(n), *b = malloc(n), *gs = malloc(n), *gd = malloc(n);
    for (int i = 0; i < n; i++) { a[i] = (unsigned char)(0x40 + i); b[i] = 0x22; }
    ggml_backend_tensor_set(src, a, 0, n);
    ggml_backend_tensor_set(dst, b, 0, n);
    ggml_backend_tensor_copy(src, dst);
    ggml_backend_tensor_get(src, gs, 0, n);
    ggml_backend_tensor_get(dst, gd, 0, n);
    int bad_dst = 0, bad_src = 0;
    for (int i = 0; i < n; i++) { bad_dst += gd[i] != a[i]; bad_src += gs[i] != a[i]; }
    printf("copy %d bytes: destination starts %02x %02x %02x %02x (want %02x %02x %02x %02x), source starts "
           "%02x %02x %02x %02x\n", n, gd[0], gd[1], gd[2], gd[3], a[0], a[1], a[2], a[3], gs[0], gs[1], gs[2], gs[3]);
    printf("copy %d bytes: %d destination bytes lack the source's, %d source bytes changed\n", n, bad_dst, bad_src);
    free(a); free(b); free(gs); free(gd);
    ggml_backend_buffer_free(bs); ggml_backend_buffer_free(bd); ggml_free(ctx); ggml_backend_free(vk);
    return bad_dst != 0 || bad_src != 0;
}

/* An empty buffer: the spec's alloc_buffer(0) is a buffer of size 0 (BUFT-2), and clearing it
 * does nothing (BUF-9). Aborts in the port where it asserts. */
static int empty(void) {
    ggml_backend_t vk = device();
    ggml_backend_buffer_t buf = ggml_backend_alloc_buffer(vk, 0);
    printf("alloc_buffer(0): a buffer of size %zu\n", ggml_backend_buffer_get_size(buf));
    fflush(stdout);
    ggml_backend_buffer_clear(buf, 0);
    printf("empty buffer: alloc_buffer(0) and clear(0) returned\n");
    ggml_backend_buffer_free(buf); ggml_backend_free(vk);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "clear") == 0) return clear((int)strtol(argv[2], NULL, 0));
    if (argc == 5 && strcmp(argv[1], "mul_mat") == 0) return mul_mat(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    if (argc == 3 && strcmp(argv[1], "copy") == 0 && atoi(argv[2]) > 0 && atoi(argv[2]) <= 256) return copy(atoi(argv[2]));
    if (argc == 2 && strcmp(argv[1], "empty") == 0) return empty();
    fprintf(stderr, "usage: %s clear VALUE | mul_mat K M N | copy N (1..256) | empty\n", argv[0]);
    return 2;
}
