/*
 * webgpu.c - a device backend on WebGPU (see ggspec-webgpu.h).
 *
 * One device per process, started lazily by the first ggspec_webgpu_init in that process:
 * dlopen of wgpu-native, an instance, an adapter, a device and its queue, the kernels
 * (webgpu.wgsl, embedded as webgpu_wgsl.h) parsed and validated into one shader module. Each
 * kernel's compute pipeline is compiled on its first dispatch (compiling all eight at start
 * took 0.15 CPU-s of lavapipe in every process, most of a start); a pipeline that fails to
 * compile makes that graph_compute return false. A device started
 * in a parent is never used in a forked child (init refuses it, naming both pids). The device
 * lives until the process ends; every backend of the process shares it and its buffer type.
 *
 * Buffers are WebGPU buffers (STORAGE | COPY_SRC | COPY_DST) whose size is rounded up to 4
 * bytes, WebGPU's copy granularity. Their base is an address reservation mapped with no access
 * rights, as the virtual device's, so tensor->data is not host memory; tensor->data - base is
 * the offset in the GPU buffer.
 *
 * Every operation goes to the device's one queue, so everything runs in submission order:
 * - set: the bytes are copied at the call (queue writeBuffer when offset and size are
 *   multiples of 4; else into a scratch buffer that k_bytes merges into the destination's
 *   words, leaving the bytes around the range as they were);
 * - get: a copy of the 4-aligned words that cover the range into a mappable staging buffer;
 *   the host bytes are written when the queue is waited for (synchronize, or at once for the
 *   synchronous get): get_async reads are a list delivered in order;
 * - device-to-device copies: copyBufferToBuffer when aligned and between two buffers, else
 *   through a scratch copy of the covering words and k_bytes;
 * - a graph: one compute pass, one dispatch per node, in node order (WebGPU orders the
 *   dispatches of a pass and makes each one's writes visible to the next).
 *
 * Everything of the host ggml-backend is reached through VD()/VDU() (vdev-prefix.h), so this
 * file also builds as a shim against rc.8's ggml-backend-impl.h, as vdev.c does.
 *
 * Built without webgpu.h (GGSPEC_HAVE_WGPU undefined) the file is a stub: init reports that.
 */
#define _DEFAULT_SOURCE

#include "vdev-prefix.h"
#include "ggspec-webgpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reason_set(char * reason, size_t size, const char * text) {
    if (reason != NULL && size > 0) {
        snprintf(reason, size, "%s", text);
    }
}

#ifndef GGSPEC_HAVE_WGPU

VD(backend_t) ggspec_webgpu_init(const char * lib_path, char * reason, size_t reason_size) {
    (void)lib_path;
    reason_set(reason, reason_size,
               "WebGPU unavailable: ggspec was built without webgpu.h (no wgpu package at build time)");
    return NULL;
}

bool ggspec_backend_is_webgpu(VD(backend_t) b) {
    (void)b;
    return false;
}

VD(backend_buffer_type_t) ggspec_webgpu_buffer_type(VD(backend_t) b) {
    (void)b;
    fprintf(stderr, "ggspec webgpu: built without WebGPU\n");
    abort();
}

bool ggspec_webgpu_compiled(void) {
    return false;
}

const char * ggspec_webgpu_adapter_name(void) {
    return "";
}

size_t ggspec_webgpu_pending(VD(backend_t) b) {
    (void)b;
    return 0;
}

#else /* GGSPEC_HAVE_WGPU */

#include <dlfcn.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>

#include "webgpu.h"
#include "wgpu.h"

#include "webgpu_wgsl.h" /* static const char webgpu_wgsl[] */

#include "versions.h"

/* the wgpu-native entries used, found with dlsym */
#define WG_FUNCS(X)                                                                                              \
    X(CreateInstance) X(InstanceRequestAdapter) X(InstanceProcessEvents) X(InstanceRelease)                      \
    X(AdapterRequestDevice) X(AdapterGetLimits) X(AdapterGetInfo) X(AdapterInfoFreeMembers) X(AdapterRelease)    \
    X(DeviceGetQueue) X(DeviceCreateBuffer) X(DeviceCreateShaderModule) X(DeviceCreateComputePipeline)           \
    X(DeviceCreateBindGroup) X(DeviceCreateBindGroupLayout) X(DeviceCreatePipelineLayout)                        \
    X(DeviceCreateCommandEncoder) X(DevicePoll) X(DeviceRelease)                                                 \
    X(QueueSubmit) X(QueueWriteBuffer) X(QueueRelease)                                                           \
    X(BufferMapAsync) X(BufferGetConstMappedRange) X(BufferGetMappedRange) X(BufferUnmap) X(BufferRelease)       \
    X(CommandEncoderCopyBufferToBuffer) X(CommandEncoderClearBuffer) X(CommandEncoderBeginComputePass)           \
    X(CommandEncoderFinish) X(CommandEncoderRelease) X(CommandBufferRelease)                                     \
    X(ComputePassEncoderSetPipeline) X(ComputePassEncoderSetBindGroup) X(ComputePassEncoderDispatchWorkgroups)   \
    X(ComputePassEncoderEnd) X(ComputePassEncoderRelease)                                                        \
    X(ComputePipelineRelease) X(BindGroupRelease) X(BindGroupLayoutRelease) X(PipelineLayoutRelease)             \
    X(ShaderModuleRelease)

static struct {
#define X(n) __typeof__(&wgpu##n) n;
    WG_FUNCS(X)
#undef X
} W;

enum wg_kernel {
    K_BYTES, K_CPY, K_BINARY, K_MUL_MAT, K_NORM, K_SOFT_MAX, K_UNARY, K_GET_ROWS, K_QUANTIZE, K_COPY_BLOCKS, K_COUNT
};
static const char * const kernel_names[K_COUNT] = {
    "k_bytes", "k_cpy", "k_binary", "k_mul_mat", "k_norm", "k_soft_max", "k_unary", "k_get_rows", "k_quantize",
    "k_copy_blocks",
};

#define WG_SLOTS 4        /* storage buffers bound per dispatch */
#define WG_PARAM_WORDS 64 /* the uniform block: array<vec4<u32>, 16>; word 63 stays 0 (webgpu.wgsl) */
#define WG_WORKGROUP 64
/* a dispatch's (slot of src0, slot of src1): src0 in 0..1, src1 in 0..2 (the destination is slot 0) */
#define WG_SLOT_PAIRS 6

struct wg_readback { /* a get whose host bytes are written when the queue is waited for */
    WGPUBuffer staging;
    size_t     skip;   /* bytes of the staging copy before the range */
    void *     host;
    size_t     size;
    int        mapped; /* 0 pending, 1 mapped, -1 failed */
};

struct wg_device {
    pid_t                          pid;
    void *                         lib;
    WGPUInstance                   instance;
    WGPUAdapter                    adapter;
    WGPUDevice                     device;
    WGPUQueue                      queue;
    WGPULimits                     limits;
    size_t                         max_size;
    char                           name[640];
    WGPUShaderModule               module;
    WGPUBindGroupLayout            layout;
    WGPUPipelineLayout             pipeline_layout;
    WGPUComputePipeline            pipelines[K_COUNT][WG_SLOT_PAIRS]; /* made on first use */
    WGPUBuffer                     dummy[WG_SLOTS]; /* bound to unused slots (each its own) */
    struct VD(backend_buffer_type) buft;
    struct wg_readback *           reads;
    size_t                         n_reads, cap_reads;
    size_t                         errors;
};

struct wg_buffer {
    struct wg_device * dev;
    WGPUBuffer         buf;
    void *             base;
    size_t             map_len;
    size_t             size;
    uint64_t           padded; /* the GPU buffer's size: size rounded up to 4 (at least 4) */
};

static struct wg_device * G = NULL;      /* the process's device, once started */
static pid_t              G_failed_pid;  /* a start that failed in this pid is not retried */
static char               G_reason[512];

static void wg_fatal(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fprintf(stderr, "ggspec webgpu: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

static WGPUStringView sv(const char * s) {
    return (WGPUStringView) { .data = s, .length = WGPU_STRLEN };
}

static uint64_t pad4(uint64_t n) {
    return (n + 3) & ~(uint64_t)3;
}

/* --- callbacks ---------------------------------------------------------------------------- */

struct wg_wait {
    int    done;
    int    ok;
    void * handle;
    char   message[256];
};

static void copy_message(struct wg_wait * w, WGPUStringView m) {
    size_t n = m.data == NULL ? 0 : (m.length == WGPU_STRLEN ? strlen(m.data) : m.length);
    if (n >= sizeof(w->message)) {
        n = sizeof(w->message) - 1;
    }
    /* wgpu's messages span lines ("Caused by:" ...): one line, runs of white space as one space */
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        char c = m.data[i];
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
        if (c == ' ' && (out == 0 || w->message[out - 1] == ' ')) continue;
        w->message[out++] = c;
    }
    while (out > 0 && w->message[out - 1] == ' ') out--;
    w->message[out] = '\0';
}

static void on_adapter(WGPURequestAdapterStatus status, WGPUAdapter adapter, WGPUStringView message, void * u1,
                       void * u2) {
    (void)u2;
    struct wg_wait * w = u1;
    w->done = 1;
    w->ok = status == WGPURequestAdapterStatus_Success && adapter != NULL;
    w->handle = adapter;
    copy_message(w, message);
}

static void on_device(WGPURequestDeviceStatus status, WGPUDevice device, WGPUStringView message, void * u1,
                      void * u2) {
    (void)u2;
    struct wg_wait * w = u1;
    w->done = 1;
    w->ok = status == WGPURequestDeviceStatus_Success && device != NULL;
    w->handle = device;
    copy_message(w, message);
}

static void on_error(WGPUDevice const * device, WGPUErrorType type, WGPUStringView message, void * u1, void * u2) {
    (void)device;
    (void)u2;
    struct wg_device * dev = u1;
    struct wg_wait w;
    copy_message(&w, message);
    if (dev->errors++ < 8) {
        fprintf(stderr, "ggspec webgpu: device error %d: %s\n", (int)type, w.message);
    }
}

static void on_map(WGPUMapAsyncStatus status, WGPUStringView message, void * u1, void * u2) {
    (void)message;
    (void)u2;
    struct wg_readback * r = u1;
    r->mapped = status == WGPUMapAsyncStatus_Success ? 1 : -1;
}

/* --- starting the device ------------------------------------------------------------------ */

static bool load_functions(void * lib, char * why, size_t n) {
#define X(name)                                                                                  \
    W.name = (__typeof__(W.name))dlsym(lib, "wgpu" #name);                                       \
    if (W.name == NULL) {                                                                        \
        snprintf(why, n, "WebGPU unavailable: the wgpu-native library lacks wgpu" #name          \
                 " (a wgpu-native this backend was not written for)");                           \
        return false;                                                                            \
    }
    WG_FUNCS(X)
#undef X
    return true;
}

static WGPUBuffer new_buffer(struct wg_device * dev, uint64_t size, WGPUBufferUsage usage, bool mapped) {
    WGPUBufferDescriptor d = { .label = sv("ggspec"), .usage = usage, .size = size, .mappedAtCreation = mapped };
    return W.DeviceCreateBuffer(dev->device, &d);
}

static void device_release(struct wg_device * dev) {
    for (int k = 0; k < K_COUNT; k++) {
        for (int p = 0; p < WG_SLOT_PAIRS; p++) {
            if (dev->pipelines[k][p] != NULL) W.ComputePipelineRelease(dev->pipelines[k][p]);
        }
    }
    for (int s = 0; s < WG_SLOTS; s++) {
        if (dev->dummy[s] != NULL) W.BufferRelease(dev->dummy[s]);
    }
    if (dev->pipeline_layout != NULL) W.PipelineLayoutRelease(dev->pipeline_layout);
    if (dev->layout != NULL) W.BindGroupLayoutRelease(dev->layout);
    if (dev->module != NULL) W.ShaderModuleRelease(dev->module);
    if (dev->queue != NULL) W.QueueRelease(dev->queue);
    if (dev->device != NULL) W.DeviceRelease(dev->device);
    if (dev->adapter != NULL) W.AdapterRelease(dev->adapter);
    if (dev->instance != NULL) W.InstanceRelease(dev->instance);
    free(dev);
}

static bool wait_for(struct wg_device * dev, struct wg_wait * w) {
    for (int i = 0; i < 100000 && !w->done; i++) {
        W.InstanceProcessEvents(dev->instance);
        if (!w->done) usleep(100);
    }
    return w->done != 0;
}

static const char * backend_type_name(WGPUBackendType t) {
    switch (t) {
        case WGPUBackendType_Vulkan: return "Vulkan";
        case WGPUBackendType_Metal: return "Metal";
        case WGPUBackendType_D3D12: return "D3D12";
        case WGPUBackendType_OpenGL: return "OpenGL";
        case WGPUBackendType_OpenGLES: return "OpenGLES";
        default: return "other";
    }
}

static void buft_setup(struct wg_device * dev);

/* kernel k's pipeline for sources in slots s1 (0..1) and s2 (0..2), made on first use */
static WGPUComputePipeline pipeline(struct wg_device * dev, enum wg_kernel k, uint32_t s1, uint32_t s2) {
    const int pair = (int)(s1 * 3 + s2);
    if (dev->pipelines[k][pair] == NULL) {
        WGPUConstantEntry constants[2] = {
            { .key = sv("S1"), .value = (double)s1 },
            { .key = sv("S2"), .value = (double)s2 },
        };
        WGPUComputePipelineDescriptor cdesc = {
            .label = sv(kernel_names[k]), .layout = dev->pipeline_layout,
            .compute = { .module = dev->module, .entryPoint = sv(kernel_names[k]), .constantCount = 2,
                         .constants = constants },
        };
        dev->pipelines[k][pair] = W.DeviceCreateComputePipeline(dev->device, &cdesc);
    }
    return dev->pipelines[k][pair];
}

static struct wg_device * device_start(const char * lib_path, char * why, size_t n) {
    if (lib_path == NULL || lib_path[0] == '\0') {
        snprintf(why, n, "WebGPU unavailable: no wgpu-native library given (install the wgpu package or set GGSPEC_WGPU_LIB)");
        return NULL;
    }
    void * lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(why, n, "WebGPU unavailable: cannot load %s: %s", lib_path, dlerror());
        return NULL;
    }
    if (!load_functions(lib, why, n)) {
        return NULL; /* the library stays loaded: unloading Rust libraries is not reliable */
    }
    struct wg_device * dev = calloc(1, sizeof(*dev));
    if (dev == NULL) {
        snprintf(why, n, "WebGPU unavailable: out of memory");
        return NULL;
    }
    dev->pid = getpid();
    dev->lib = lib;

    WGPUInstanceExtras extras = {
        .chain = { .sType = (WGPUSType)WGPUSType_InstanceExtras },
        .backends = WGPUInstanceBackend_Primary, /* Vulkan, Metal, D3D12: no GL fallback */
    };
    WGPUInstanceDescriptor idesc = { .nextInChain = &extras.chain };
    dev->instance = W.CreateInstance(&idesc);
    if (dev->instance == NULL) {
        snprintf(why, n, "WebGPU unavailable: wgpuCreateInstance failed");
        device_release(dev);
        return NULL;
    }

    struct wg_wait wa = { 0 };
    WGPURequestAdapterOptions aopts = { .featureLevel = WGPUFeatureLevel_Core,
                                        .powerPreference = WGPUPowerPreference_HighPerformance };
    W.InstanceRequestAdapter(dev->instance, &aopts, (WGPURequestAdapterCallbackInfo) {
        .mode = WGPUCallbackMode_AllowProcessEvents, .callback = on_adapter, .userdata1 = &wa });
    if (!wait_for(dev, &wa) || !wa.ok) {
        snprintf(why, n, "WebGPU unavailable: no adapter (no Vulkan/Metal/D3D12 driver found%s%s)",
                 wa.message[0] ? ": " : "", wa.message);
        device_release(dev);
        return NULL;
    }
    dev->adapter = wa.handle;

    WGPUAdapterInfo info = { 0 };
    if (W.AdapterGetInfo(dev->adapter, &info) == WGPUStatus_Success) {
        struct wg_wait tmp;
        copy_message(&tmp, info.device);
        char desc[256];
        struct wg_wait tmp2;
        copy_message(&tmp2, info.description);
        snprintf(desc, sizeof(desc), "%s", tmp2.message);
        snprintf(dev->name, sizeof(dev->name), "%s (%s%s%s)", tmp.message, backend_type_name(info.backendType),
                 desc[0] ? ", " : "", desc);
        W.AdapterInfoFreeMembers(info);
    }

    WGPULimits limits = { 0 };
    if (W.AdapterGetLimits(dev->adapter, &limits) != WGPUStatus_Success) {
        snprintf(why, n, "WebGPU unavailable: the adapter gives no limits");
        device_release(dev);
        return NULL;
    }
    limits.nextInChain = NULL;
    dev->limits = limits;
    /* $GGSPEC_WEBGPU_MIN_ALIGNMENT, a power of two no smaller than the adapter's: the device is
       requested with that minStorageBufferOffsetAlignment (a larger one is always allowed), and the
       buffer type's alignment follows it: how the backend runs on an adapter that reports it
       (WebGPU's default limit is 256; lavapipe reports 32) */
    const char * wanted = getenv("GGSPEC_WEBGPU_MIN_ALIGNMENT");
    if (wanted != NULL && *wanted != '\0') {
        const unsigned long v = strtoul(wanted, NULL, 10);
        if (v >= dev->limits.minStorageBufferOffsetAlignment && v <= 65536 && (v & (v - 1)) == 0) {
            dev->limits.minStorageBufferOffsetAlignment = (uint32_t)v;
        }
    }

    struct wg_wait wd = { 0 };
    WGPUDeviceDescriptor ddesc = {
        .label = sv("ggspec"),
        .requiredLimits = &dev->limits, /* everything the adapter has: the largest buffers */
        .uncapturedErrorCallbackInfo = { .callback = on_error, .userdata1 = dev },
    };
    W.AdapterRequestDevice(dev->adapter, &ddesc, (WGPURequestDeviceCallbackInfo) {
        .mode = WGPUCallbackMode_AllowProcessEvents, .callback = on_device, .userdata1 = &wd });
    if (!wait_for(dev, &wd) || !wd.ok) {
        snprintf(why, n, "WebGPU unavailable: the adapter gave no device: %s", wd.message);
        device_release(dev);
        return NULL;
    }
    dev->device = wd.handle;
    dev->queue = W.DeviceGetQueue(dev->device);

    /* kernels bind whole buffers and address them with u32 byte offsets */
    uint64_t max = dev->limits.maxBufferSize;
    if (dev->limits.maxStorageBufferBindingSize < max) max = dev->limits.maxStorageBufferBindingSize;
    if (max > 0xFFFFFFFCull) max = 0xFFFFFFFCull;
    dev->max_size = (size_t)(max & ~(uint64_t)3);

    WGPUShaderSourceWGSL wgsl = { .chain = { .sType = WGPUSType_ShaderSourceWGSL },
                                  .code = { .data = webgpu_wgsl, .length = sizeof(webgpu_wgsl) - 1 } };
    WGPUShaderModuleDescriptor mdesc = { .nextInChain = &wgsl.chain, .label = sv("ggspec kernels") };
    const size_t errors_before = dev->errors;
    dev->module = W.DeviceCreateShaderModule(dev->device, &mdesc);

    WGPUBindGroupLayoutEntry entries[WG_SLOTS + 1];
    memset(entries, 0, sizeof(entries));
    for (int s = 0; s <= WG_SLOTS; s++) {
        entries[s].binding = (uint32_t)s;
        entries[s].visibility = WGPUShaderStage_Compute;
        entries[s].buffer.type = s < WG_SLOTS ? WGPUBufferBindingType_Storage : WGPUBufferBindingType_Uniform;
    }
    WGPUBindGroupLayoutDescriptor ldesc = { .label = sv("ggspec"), .entryCount = WG_SLOTS + 1, .entries = entries };
    dev->layout = W.DeviceCreateBindGroupLayout(dev->device, &ldesc);
    WGPUPipelineLayoutDescriptor pdesc = { .label = sv("ggspec"), .bindGroupLayoutCount = 1,
                                           .bindGroupLayouts = &dev->layout };
    dev->pipeline_layout = W.DeviceCreatePipelineLayout(dev->device, &pdesc);
    for (int s = 0; s < WG_SLOTS; s++) {
        dev->dummy[s] = new_buffer(dev, 4, WGPUBufferUsage_Storage, false);
    }
    W.DevicePoll(dev->device, true, NULL);
    if (dev->errors != errors_before) {
        snprintf(why, n, "WebGPU unavailable: the kernels did not validate on %.300s (see stderr)", dev->name);
        device_release(dev);
        return NULL;
    }
    buft_setup(dev);
    return dev;
}

/* --- submitting --------------------------------------------------------------------------- */

static WGPUCommandEncoder encoder(struct wg_device * dev) {
    WGPUCommandEncoderDescriptor d = { .label = sv("ggspec") };
    return W.DeviceCreateCommandEncoder(dev->device, &d);
}

static void submit(struct wg_device * dev, WGPUCommandEncoder enc) {
    WGPUCommandBufferDescriptor d = { .label = sv("ggspec") };
    WGPUCommandBuffer cb = W.CommandEncoderFinish(enc, &d);
    W.QueueSubmit(dev->queue, 1, &cb);
    W.CommandBufferRelease(cb);
    W.CommandEncoderRelease(enc);
}

/* a uniform block of WG_PARAM_WORDS words, filled at creation */
static WGPUBuffer params_buffer(struct wg_device * dev, const uint32_t * words) {
    WGPUBuffer b = new_buffer(dev, WG_PARAM_WORDS * 4, WGPUBufferUsage_Uniform, true);
    memcpy(W.BufferGetMappedRange(b, 0, WG_PARAM_WORDS * 4), words, WG_PARAM_WORDS * 4);
    W.BufferUnmap(b);
    return b;
}

/* one dispatch of kernel k over n threads with the buffers of slots (NULL: a dummy) */
static void dispatch(struct wg_device * dev, WGPUComputePassEncoder pass, enum wg_kernel k,
                     WGPUBuffer slots[WG_SLOTS], uint32_t * words, uint32_t n) {
    if (n == 0) {
        return;
    }
    words[36] = n;
    WGPUBuffer params = params_buffer(dev, words);
    WGPUBindGroupEntry e[WG_SLOTS + 1];
    memset(e, 0, sizeof(e));
    for (int s = 0; s < WG_SLOTS; s++) {
        e[s].binding = (uint32_t)s;
        e[s].buffer = slots[s] != NULL ? slots[s] : dev->dummy[s];
        e[s].size = WGPU_WHOLE_SIZE;
    }
    e[WG_SLOTS].binding = WG_SLOTS;
    e[WG_SLOTS].buffer = params;
    e[WG_SLOTS].size = WG_PARAM_WORDS * 4;
    WGPUBindGroupDescriptor d = { .label = sv("ggspec"), .layout = dev->layout, .entryCount = WG_SLOTS + 1,
                                  .entries = e };
    WGPUBindGroup group = W.DeviceCreateBindGroup(dev->device, &d);
    const uint32_t groups = (n + WG_WORKGROUP - 1) / WG_WORKGROUP;
    const uint32_t per_dim = dev->limits.maxComputeWorkgroupsPerDimension;
    const uint32_t x = groups < per_dim ? groups : per_dim;
    const uint32_t y = (groups + x - 1) / x;
    /* words[12], words[24]: the sources' slots (bind_tensor hands them out in order, so src0
       is in 0..1 and src1 in 0..2; an unused source keeps slot 0's word and reads nothing) */
    const uint32_t s1 = words[12] <= 1 ? words[12] : 1, s2 = words[24] <= 2 ? words[24] : 2;
    W.ComputePassEncoderSetPipeline(pass, pipeline(dev, k, s1, s2));
    W.ComputePassEncoderSetBindGroup(pass, 0, group, 0, NULL);
    W.ComputePassEncoderDispatchWorkgroups(pass, x, y, 1);
    W.BindGroupRelease(group); /* the pass keeps what it uses */
    W.BufferRelease(params);
}

/* bytes [src_off, +n) of scratch -> bytes [dst_off, +n) of dst, exactly (k_bytes) */
static void merge_bytes(struct wg_device * dev, WGPUCommandEncoder enc, WGPUBuffer dst, uint64_t dst_off,
                        WGPUBuffer src, uint64_t src_off, uint64_t n) {
    uint32_t words[WG_PARAM_WORDS] = { 0 };
    words[0] = 0;                 /* dst: slot 0 */
    words[2] = (uint32_t)dst_off;
    words[12] = 1;                /* src: slot 1 */
    words[14] = (uint32_t)src_off;
    words[37] = (uint32_t)n;
    const uint64_t first = dst_off / 4, last = (dst_off + n + 3) / 4;
    WGPUBuffer slots[WG_SLOTS] = { dst, src, NULL, NULL };
    WGPUComputePassDescriptor pd = { .label = sv("ggspec bytes") };
    WGPUComputePassEncoder pass = W.CommandEncoderBeginComputePass(enc, &pd);
    dispatch(dev, pass, K_BYTES, slots, words, (uint32_t)(last - first));
    W.ComputePassEncoderEnd(pass);
    W.ComputePassEncoderRelease(pass);
}

/* host bytes -> dst [off, +size), in queue order; the host bytes are read before returning */
static void write_bytes(struct wg_device * dev, WGPUBuffer dst, uint64_t off, const void * data, size_t size) {
    if (size == 0) {
        return;
    }
    if (off % 4 == 0 && size % 4 == 0) {
        W.QueueWriteBuffer(dev->queue, dst, off, data, size);
        return;
    }
    WGPUBuffer scratch = new_buffer(dev, pad4(size), WGPUBufferUsage_Storage, true);
    unsigned char * m = W.BufferGetMappedRange(scratch, 0, pad4(size));
    memcpy(m, data, size);
    memset(m + size, 0, pad4(size) - size);
    W.BufferUnmap(scratch);
    WGPUCommandEncoder enc = encoder(dev);
    merge_bytes(dev, enc, dst, off, scratch, 0, size);
    submit(dev, enc);
    W.BufferRelease(scratch);
}

/* src [src_off, +n) -> dst [dst_off, +n) on the GPU, in queue order */
static void copy_bytes(struct wg_device * dev, WGPUBuffer dst, uint64_t dst_off, WGPUBuffer src, uint64_t src_off,
                       uint64_t n) {
    if (n == 0) {
        return;
    }
    WGPUCommandEncoder enc = encoder(dev);
    if (dst != src && dst_off % 4 == 0 && src_off % 4 == 0 && n % 4 == 0) {
        W.CommandEncoderCopyBufferToBuffer(enc, src, src_off, dst, dst_off, n);
        submit(dev, enc);
        return;
    }
    const uint64_t a = src_off & ~(uint64_t)3, b = pad4(src_off + n);
    WGPUBuffer scratch = new_buffer(dev, b - a, WGPUBufferUsage_Storage | WGPUBufferUsage_CopyDst, false);
    W.CommandEncoderCopyBufferToBuffer(enc, src, a, scratch, 0, b - a);
    merge_bytes(dev, enc, dst, dst_off, scratch, src_off - a, n);
    submit(dev, enc);
    W.BufferRelease(scratch);
}

/* queue a read of src [off, +size) into host; delivered by deliver_reads */
static void read_bytes(struct wg_device * dev, WGPUBuffer src, uint64_t off, void * host, size_t size) {
    if (size == 0) {
        return;
    }
    const uint64_t a = off & ~(uint64_t)3, b = pad4(off + size);
    WGPUBuffer staging = new_buffer(dev, b - a, WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst, false);
    WGPUCommandEncoder enc = encoder(dev);
    W.CommandEncoderCopyBufferToBuffer(enc, src, a, staging, 0, b - a);
    submit(dev, enc);
    if (dev->n_reads == dev->cap_reads) {
        size_t cap = dev->cap_reads ? 2 * dev->cap_reads : 16;
        struct wg_readback * r = realloc(dev->reads, cap * sizeof(*r));
        if (r == NULL) wg_fatal("out of memory for the read list");
        dev->reads = r;
        dev->cap_reads = cap;
    }
    dev->reads[dev->n_reads++] = (struct wg_readback) {
        .staging = staging, .skip = (size_t)(off - a), .host = host, .size = size, .mapped = 0,
    };
}

/* wait for the queue, then write every queued read's bytes to the host, in order */
static void deliver_reads(struct wg_device * dev) {
    for (size_t i = 0; i < dev->n_reads; i++) {
        struct wg_readback * r = &dev->reads[i];
        W.BufferMapAsync(r->staging, WGPUMapMode_Read, 0, pad4(r->skip + r->size),
                         (WGPUBufferMapCallbackInfo) { .mode = WGPUCallbackMode_AllowProcessEvents,
                                                       .callback = on_map, .userdata1 = r });
    }
    W.DevicePoll(dev->device, true, NULL);
    for (size_t i = 0; i < dev->n_reads; i++) {
        struct wg_readback * r = &dev->reads[i];
        for (int t = 0; r->mapped == 0 && t < 100000; t++) {
            W.InstanceProcessEvents(dev->instance);
            if (r->mapped == 0) {
                W.DevicePoll(dev->device, true, NULL);
            }
        }
        if (r->mapped != 1) {
            wg_fatal("mapping a staging buffer failed");
        }
        const unsigned char * m = W.BufferGetConstMappedRange(r->staging, 0, pad4(r->skip + r->size));
        memcpy(r->host, m + r->skip, r->size);
        W.BufferUnmap(r->staging);
        W.BufferRelease(r->staging);
    }
    dev->n_reads = 0;
}

static void wait_idle(struct wg_device * dev) {
    if (dev->n_reads > 0) {
        deliver_reads(dev);
    } else {
        W.DevicePoll(dev->device, true, NULL);
    }
}

/* --- buffers ------------------------------------------------------------------------------ */

static const char * wg_buffer_name(buffer_t buffer) {
    (void)buffer;
    return "WebGPU";
}

static struct wg_buffer * as_wg_buffer(buffer_t buffer) {
    if (buffer == NULL || buffer->iface.get_name != wg_buffer_name) {
        return NULL;
    }
    return buffer->context;
}

static struct wg_buffer * tensor_wg_buffer(const tensor_t * t) {
    return as_wg_buffer(t->view_src != NULL ? t->view_src->buffer : t->buffer);
}

/* offset in wb of bytes [offset, +size) of tensor t; aborts outside the buffer */
static uint64_t locate(const struct wg_buffer * wb, const tensor_t * t, size_t offset, size_t size) {
    const uintptr_t base = (uintptr_t)wb->base, addr = (uintptr_t)t->data;
    if (!(addr >= base && addr - base <= wb->size)) wg_fatal("tensor address outside its WebGPU buffer");
    const size_t start = (size_t)(addr - base);
    if (!(offset <= wb->size - start && size <= wb->size - start - offset)) {
        wg_fatal("access past the end of a WebGPU buffer");
    }
    return start + offset;
}

static void wg_buffer_free(buffer_t buffer) {
    struct wg_buffer * wb = buffer->context;
    W.BufferRelease(wb->buf); /* the queue keeps it while submitted work uses it */
    munmap(wb->base, wb->map_len);
    free(wb);
}

static void * wg_buffer_get_base(buffer_t buffer) {
    const struct wg_buffer * wb = buffer->context;
    return wb->base;
}

static void wg_buffer_set_tensor(buffer_t buffer, tensor_t * tensor, const void * data, size_t offset, size_t size) {
    struct wg_buffer * wb = buffer->context;
    write_bytes(wb->dev, wb->buf, locate(wb, tensor, offset, size), data, size);
}

static void wg_buffer_get_tensor(buffer_t buffer, const tensor_t * tensor, void * data, size_t offset, size_t size) {
    struct wg_buffer * wb = buffer->context;
    read_bytes(wb->dev, wb->buf, locate(wb, tensor, offset, size), data, size);
    deliver_reads(wb->dev);
}

/* dst is in this buffer; src is copied on the device when it is in a WebGPU buffer of the same
   device. rc.8 calls the source buffer's entry with the destination's buffer (erratum COPY-6):
   a buffer of another type is refused like an unreachable source, never read as ours */
static bool wg_buffer_cpy_tensor(buffer_t buffer, const tensor_t * src, tensor_t * dst) {
    struct wg_buffer * wb = as_wg_buffer(buffer);
    struct wg_buffer * from = tensor_wg_buffer(src);
    if (wb == NULL || from == NULL || from->dev != wb->dev) {
        return false;
    }
    const size_t n = VD(nbytes)(src);
    copy_bytes(wb->dev, wb->buf, locate(wb, dst, 0, n), from->buf, locate(from, src, 0, n), n);
    return true;
}

static void wg_buffer_clear(buffer_t buffer, uint8_t value) {
    struct wg_buffer * wb = buffer->context;
    if (value == 0) {
        WGPUCommandEncoder enc = encoder(wb->dev);
        W.CommandEncoderClearBuffer(enc, wb->buf, 0, wb->padded);
        submit(wb->dev, enc);
        return;
    }
    const size_t chunk = (size_t)1 << 22;
    unsigned char * block = malloc(wb->padded < chunk ? (size_t)wb->padded : chunk);
    if (block == NULL) wg_fatal("out of memory for clear");
    memset(block, value, wb->padded < chunk ? (size_t)wb->padded : chunk);
    for (uint64_t at = 0; at < wb->padded; at += chunk) {
        const uint64_t n = wb->padded - at < chunk ? wb->padded - at : chunk;
        W.QueueWriteBuffer(wb->dev->queue, wb->buf, at, block, (size_t)n);
    }
    free(block);
}

/* --- the buffer type ---------------------------------------------------------------------- */

static const char * wg_buft_name(buft_t buft) {
    (void)buft;
    return "WebGPU";
}

static buffer_t wg_buft_alloc_buffer(buft_t buft, size_t size) {
    struct wg_device * dev = buft->context;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (size > dev->max_size) {
        fprintf(stderr, "ggspec webgpu: a buffer of %zu bytes is more than the device's %zu\n", size, dev->max_size);
        return NULL;
    }
    const uint64_t padded = size == 0 ? 4 : pad4(size);
    const size_t map_len = ((size_t)padded + page - 1) / page * page;
    struct wg_buffer * wb = calloc(1, sizeof(*wb));
    void * base = mmap(NULL, map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    const size_t errors = dev->errors;
    WGPUBuffer buf = wb != NULL && base != MAP_FAILED
        ? new_buffer(dev, padded, WGPUBufferUsage_Storage | WGPUBufferUsage_CopySrc | WGPUBufferUsage_CopyDst, false)
        : NULL;
    if (buf == NULL || dev->errors != errors) {
        fprintf(stderr, "ggspec webgpu: failed to allocate a buffer of %zu bytes\n", size);
        if (buf != NULL) W.BufferRelease(buf);
        if (base != MAP_FAILED) munmap(base, map_len);
        free(wb);
        return NULL;
    }
    *wb = (struct wg_buffer) { .dev = dev, .buf = buf, .base = base, .map_len = map_len, .size = size,
                               .padded = padded };
    const struct VD(backend_buffer_i) iface = {
        .get_name    = wg_buffer_name,
        .free_buffer = wg_buffer_free,
        .get_base    = wg_buffer_get_base,
        .init_tensor = NULL,
        .set_tensor  = wg_buffer_set_tensor,
        .get_tensor  = wg_buffer_get_tensor,
        .cpy_tensor  = wg_buffer_cpy_tensor,
        .clear       = wg_buffer_clear,
        .reset       = NULL,
    };
    return VD(backend_buffer_init)(buft, iface, wb, size);
}

static size_t wg_buft_get_alignment(buft_t buft) {
    const struct wg_device * dev = buft->context;
    return dev->limits.minStorageBufferOffsetAlignment;
}

static bool wg_buft_supports_backend(buft_t buft, backend_t backend) {
    return ggspec_backend_is_webgpu(backend) && backend->context == buft->context;
}

#ifdef VDEV_BUFT_MAX_SIZE
static size_t wg_buft_get_max_size(buft_t buft) {
    const struct wg_device * dev = buft->context;
    return dev->max_size;
}
#endif

static void buft_setup(struct wg_device * dev) {
    dev->buft = (struct VD(backend_buffer_type)) {
        .iface = {
            .get_name         = wg_buft_name,
            .alloc_buffer     = wg_buft_alloc_buffer,
            .get_alignment    = wg_buft_get_alignment,
            /* no get_alloc_size: a tensor needs only its nbytes. WebGPU moves whole 4-byte
               words, but each GPU buffer is its size rounded up to 4, and a range that does
               not cover whole words is merged into them (k_bytes, st16), so tensors may end
               anywhere, and two of them may share a word */
            .get_alloc_size   = NULL,
            .supports_backend = wg_buft_supports_backend,
            .is_host          = NULL,
#ifdef VDEV_BUFT_MAX_SIZE
            .get_max_size     = wg_buft_get_max_size,
#endif
        },
        .context = dev,
    };
}

/* --- the backend -------------------------------------------------------------------------- */

static const char * wg_backend_name(backend_t backend) {
    (void)backend;
    return "WebGPU";
}

static void wg_backend_free(backend_t backend) {
    wait_idle(backend->context);
    free(backend);
}

static buft_t wg_backend_default_buffer_type(backend_t backend) {
    struct wg_device * dev = backend->context;
    return &dev->buft;
}

static struct wg_buffer * device_buffer(const tensor_t * t, const char * what) {
    struct wg_buffer * wb = tensor_wg_buffer(t);
    if (wb == NULL) wg_fatal("%s: the tensor is not in a WebGPU buffer", what);
    return wb;
}

static void wg_set_tensor_async(backend_t backend, tensor_t * tensor, const void * data, size_t offset, size_t size) {
    struct wg_buffer * wb = device_buffer(tensor, "set_tensor_async");
    write_bytes(backend->context, wb->buf, locate(wb, tensor, offset, size), data, size);
}

static void wg_get_tensor_async(backend_t backend, const tensor_t * tensor, void * data, size_t offset,
                                size_t size) {
    struct wg_buffer * wb = device_buffer(tensor, "get_tensor_async");
    read_bytes(backend->context, wb->buf, locate(wb, tensor, offset, size), data, size);
}

static bool wg_cpy_tensor_async(backend_t backend, const tensor_t * src, tensor_t * dst) {
    struct wg_device * dev = backend->context;
    struct wg_buffer * s = tensor_wg_buffer(src), * d = tensor_wg_buffer(dst);
    if (s == NULL || d == NULL || s->dev != dev || d->dev != dev) {
        return false;
    }
    const size_t n = VD(nbytes)(src);
    copy_bytes(dev, d->buf, locate(d, dst, 0, n), s->buf, locate(s, src, 0, n), n);
    return true;
}

static void wg_synchronize(backend_t backend) {
    wait_idle(backend->context);
}

/* --- which nodes the kernels compute ------------------------------------------------------ */

#define T_F32 VDU(TYPE_F32)
#define T_F16 VDU(TYPE_F16)
#define T_I32 VDU(TYPE_I32)

static bool is_noop(const tensor_t * t) {
    return t->op == VDU(OP_NONE) || t->op == VDU(OP_VIEW) || t->op == VDU(OP_RESHAPE) ||
           t->op == VDU(OP_PERMUTE) || t->op == VDU(OP_TRANSPOSE);
}

#define T_Q4_0 VDU(TYPE_Q4_0)
#define T_Q8_0 VDU(TYPE_Q8_0)

static bool is_float(enum VD(type) t) {
    return t == T_F32 || t == T_F16;
}

/* every dimension fits the kernels' u32 arithmetic, and F32/I32 strides are whole words */
static bool fits(const tensor_t * t) {
    if (t == NULL) return true;
    const int64_t total = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
    if (total < 0 || total > 0x7FFFFFFF) return false;
    for (int d = 0; d < 4; d++) {
        if (t->ne[d] <= 0 || t->nb[d] > 0xFFFFFFFFu) return false;
        if ((t->type == T_F32 || t->type == T_I32) && t->nb[d] % 4 != 0) return false;
        if (t->nb[d] % 2 != 0) return false;
    }
    return true;
}

static bool is_quantized(enum VD(type) t) {
    return t == T_Q4_0 || t == T_Q8_0;
}

/* rows of whole blocks, each block right after the one before */
static bool adjacent_blocks(const tensor_t * t) {
    return t->ne[0] % 32 == 0 && t->nb[0] == VD(type_size)(t->type);
}

/* elements (blocks) in order, without gaps (the stride of an extent of 1 does not matter) */
static bool contiguous(const tensor_t * t) {
    size_t next = VD(type_size)(t->type);
    for (int d = 0; d < 4; d++) {
        if (t->ne[d] != 1 && t->nb[d] != next) return false;
        next *= (size_t)t->ne[d] / (d == 0 ? (size_t)VD(blck_size)(t->type) : 1);
    }
    return true;
}

static bool wg_supports_op(backend_t backend, const tensor_t * op) {
    (void)backend;
    if (is_noop(op)) {
        return true;
    }
    const tensor_t * a = op->src[0], * b = op->src[1];
    if (a == NULL || !fits(op) || !fits(a) || !fits(b)) {
        return false;
    }
    switch (op->op) {
        case VDU(OP_DUP):
        case VDU(OP_CONT):
            return (is_float(a->type) && is_float(op->type)) || (a->type == T_I32 && op->type == T_I32) ||
                   (is_quantized(a->type) && op->type == a->type && a->ne[0] % 32 == 0 && op->ne[0] % 32 == 0);
        case VDU(OP_CPY): /* the copy lands in src[1]'s memory, which op is a view of */
            return b != NULL && ((is_float(a->type) && is_float(b->type)) || (a->type == T_I32 && b->type == T_I32) ||
                                 (is_quantized(a->type) && b->type == a->type && a->ne[0] % 32 == 0 &&
                                  b->ne[0] % 32 == 0) ||
                                 (is_float(a->type) && is_quantized(b->type) && a->ne[0] % 32 == 0 &&
                                  a->nb[0] == VD(type_size)(a->type) && contiguous(b) && contiguous(op)));
        case VDU(OP_ADD):
            return b != NULL && ((a->type == T_F32 && b->type == T_F32 && op->type == T_F32) ||
                                 (a->type == T_F16 && is_float(b->type) && op->type == T_F16));
        case VDU(OP_MUL):
            return b != NULL && a->type == T_F32 && b->type == T_F32 && op->type == T_F32;
        case VDU(OP_SCALE):
            return a->type == T_F32 && op->type == T_F32 && b == NULL;
        case VDU(OP_MUL_MAT): /* Q4_0, Q8_0: adjacent blocks; an F32 b quantized to Q8_0 by the kernel */
            return b != NULL && op->type == T_F32 && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0 &&
                   ((is_float(a->type) && b->type == T_F32) ||
                    (is_quantized(a->type) && adjacent_blocks(a) &&
                     (b->type == T_F32 || (b->type == T_Q8_0 && adjacent_blocks(b)))));
        case VDU(OP_GET_ROWS): { /* rows of adjacent elements (whole blocks) by I32 indices, at most 3-D */
            const bool table = ((a->type == T_F32 || a->type == T_I32 || a->type == T_F16) &&
                                a->nb[0] == VD(type_size)(a->type)) ||
                               (is_quantized(a->type) && adjacent_blocks(a));
            return table && b != NULL && b->type == T_I32 && b->ne[3] == 1 &&
                   op->type == (a->type == T_I32 ? T_I32 : T_F32);
        }
        case VDU(OP_NORM):
            return a->type == T_F32 && op->type == T_F32;
        case VDU(OP_SOFT_MAX):
            return a->type == T_F32 && op->type == T_F32 && (b == NULL || b->type == T_F32);
        case VDU(OP_UNARY): {
            const int32_t u = op->op_params[0];
            return (u == VDU(UNARY_OP_GELU) || u == VDU(UNARY_OP_SILU)) && a->type == T_F32 && op->type == T_F32;
        }
        default:
            return false;
    }
}

/* --- graphs ------------------------------------------------------------------------------- */

struct wg_binding {
    WGPUBuffer slots[WG_SLOTS];
    uint32_t   words[WG_PARAM_WORDS];
    int        used;
};

/* describe tensor t as tensor k of the dispatch (its buffer gets a slot); false when t is
   not in a buffer of dev */
static bool bind_tensor(struct wg_device * dev, struct wg_binding * b, int k, const tensor_t * t) {
    struct wg_buffer * wb = tensor_wg_buffer(t);
    if (wb == NULL || wb->dev != dev || t->data == NULL) {
        fprintf(stderr, "ggspec webgpu: graph_compute: tensor %s is %s\n", t->name,
                t->data == NULL ? "not allocated" : "not in a buffer of this device");
        return false;
    }
    int slot = -1;
    for (int s = 0; s < b->used; s++) {
        if (b->slots[s] == wb->buf) slot = s;
    }
    if (slot < 0) {
        slot = b->used++;
        b->slots[slot] = wb->buf;
    }
    uint32_t * w = b->words + 12 * k;
    w[0] = (uint32_t)slot;
    w[1] = (uint32_t)t->type;
    w[2] = (uint32_t)locate(wb, t, 0, VD(nbytes)(t));
    for (int d = 0; d < 4; d++) {
        w[4 + d] = (uint32_t)t->ne[d];
        w[8 + d] = (uint32_t)t->nb[d];
    }
    return true;
}

static uint32_t nelements(const tensor_t * t) {
    return (uint32_t)(t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]);
}

static bool encode_node(struct wg_device * dev, WGPUComputePassEncoder pass, const tensor_t * node) {
    struct wg_binding b;
    memset(&b, 0, sizeof(b));
    const tensor_t * a = node->src[0], * src1 = node->src[1];
    const tensor_t * dst = node; /* a CPY node is a view of src[1]: its bytes are the destination */
    if (!bind_tensor(dev, &b, 0, dst) || !bind_tensor(dev, &b, 1, a)) {
        return false;
    }
    enum wg_kernel k;
    uint32_t n = nelements(dst);
    float f;
    switch (node->op) {
        case VDU(OP_DUP):
        case VDU(OP_CONT):
        case VDU(OP_CPY):
            k = K_CPY;
            if (is_quantized(dst->type)) { /* one thread a destination block */
                k = is_quantized(a->type) ? K_COPY_BLOCKS : K_QUANTIZE;
                n = nelements(dst) / 32;
            }
            break;
        case VDU(OP_ADD):
        case VDU(OP_MUL):
            if (!bind_tensor(dev, &b, 2, src1)) return false;
            k = K_BINARY;
            b.words[37] = node->op == VDU(OP_ADD) ? 0 : 1;
            break;
        case VDU(OP_SCALE):
            k = K_BINARY;
            b.words[37] = 2;
            memcpy(&b.words[38], node->op_params, 4);
            break;
        case VDU(OP_MUL_MAT):
            if (!bind_tensor(dev, &b, 2, src1)) return false;
            k = K_MUL_MAT;
            break;
        case VDU(OP_GET_ROWS):
            if (!bind_tensor(dev, &b, 2, src1)) return false;
            k = K_GET_ROWS;
            break;
        case VDU(OP_NORM):
            k = K_NORM;
            memcpy(&f, node->op_params, 4);
            memcpy(&b.words[38], &f, 4);
            n = nelements(a) / (uint32_t)a->ne[0];
            break;
        case VDU(OP_SOFT_MAX):
            k = K_SOFT_MAX;
            memcpy(&b.words[38], node->op_params, 4);
            if (src1 != NULL) {
                if (!bind_tensor(dev, &b, 2, src1)) return false;
                b.words[39] = 1;
            }
            n = nelements(a) / (uint32_t)a->ne[0];
            break;
        case VDU(OP_UNARY):
            k = K_UNARY;
            b.words[37] = node->op_params[0] == VDU(UNARY_OP_GELU) ? 0 : 1;
            break;
        default:
            return false;
    }
    dispatch(dev, pass, k, b.slots, b.words, n);
    return true;
}

static bool wg_graph_compute(backend_t backend, cgraph_t * cgraph) {
    struct wg_device * dev = backend->context;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const tensor_t * node = cgraph->nodes[i];
        if (!is_noop(node) && !wg_supports_op(backend, node)) {
            fprintf(stderr, "ggspec webgpu: graph_compute: node %d (%s, op %d) is not supported\n", i, node->name,
                    (int)node->op);
            return false;
        }
    }
    const size_t errors = dev->errors;
    WGPUCommandEncoder enc = encoder(dev);
    WGPUComputePassDescriptor pd = { .label = sv("ggspec graph") };
    WGPUComputePassEncoder pass = W.CommandEncoderBeginComputePass(enc, &pd);
    bool ok = true;
    for (int i = 0; i < cgraph->n_nodes && ok; i++) {
        const tensor_t * node = cgraph->nodes[i];
        if (is_noop(node)) {
            continue;
        }
        if (!encode_node(dev, pass, node)) {
            fprintf(stderr, "ggspec webgpu: graph_compute: node %d (%s) cannot be computed here\n", i, node->name);
            ok = false;
        }
    }
    W.ComputePassEncoderEnd(pass);
    W.ComputePassEncoderRelease(pass);
    if (ok) {
        submit(dev, enc);
    } else {
        W.CommandEncoderRelease(enc);
    }
    return ok && dev->errors == errors;
}

/* a plan is the node list, copied */
struct wg_plan {
    int         n_nodes;
    tensor_t ** nodes;
};

static VD(backend_graph_plan_t) wg_plan_create(backend_t backend, const cgraph_t * cgraph) {
    (void)backend;
    struct wg_plan * p = calloc(1, sizeof(*p));
    if (p == NULL) wg_fatal("out of memory for a plan");
    p->n_nodes = cgraph->n_nodes;
    p->nodes = calloc((size_t)(cgraph->n_nodes > 0 ? cgraph->n_nodes : 1), sizeof(tensor_t *));
    if (p->nodes == NULL) wg_fatal("out of memory for a plan");
    for (int i = 0; i < cgraph->n_nodes; i++) {
        p->nodes[i] = cgraph->nodes[i];
    }
    return p;
}

static void wg_plan_free(backend_t backend, VD(backend_graph_plan_t) plan) {
    (void)backend;
    struct wg_plan * p = plan;
    free(p->nodes);
    free(p);
}

static bool wg_plan_run(backend_t backend, VD(backend_graph_plan_t) plan) {
    struct wg_plan * p = plan;
    cgraph_t view;
    memset(&view, 0, sizeof(view));
    view.size = p->n_nodes;
    view.n_nodes = p->n_nodes;
    view.nodes = p->nodes;
    return wg_graph_compute(backend, &view);
}

/* the entries of later builds of this API generation (versions.h) */
DEVICE_COMPUTE_ENTRIES(wg, wg_graph_compute, wg_plan_run)
DEVICE_GUID(wg, 'g', 'g', 's', 'p', 'e', 'c', '-', 'w', 'e', 'b', 'g', 'p', 'u', 0, 0, 1)
DEVICE_CPY_TENSOR_ASYNC_ENTRY(wg, wg_cpy_tensor_async)

/* --- the public functions ----------------------------------------------------------------- */

backend_t ggspec_webgpu_init(const char * lib_path, char * reason, size_t reason_size) {
    const pid_t pid = getpid();
    if (G != NULL && G->pid != pid) {
        char text[256];
        snprintf(text, sizeof(text),
                 "WebGPU unavailable: the device was started in process %d before a fork; this is %d "
                 "(start WebGPU in the process that uses it)", (int)G->pid, (int)pid);
        reason_set(reason, reason_size, text);
        return NULL;
    }
    if (G == NULL) {
        if (G_failed_pid == pid) {
            reason_set(reason, reason_size, G_reason);
            return NULL;
        }
        G = device_start(lib_path, G_reason, sizeof(G_reason));
        if (G == NULL) {
            G_failed_pid = pid;
            reason_set(reason, reason_size, G_reason);
            return NULL;
        }
    }
    backend_t backend = malloc(sizeof(*backend));
    if (backend == NULL) {
        reason_set(reason, reason_size, "out of memory for a backend");
        return NULL;
    }
    *backend = (struct VD(backend)) {
        DEVICE_GUID_INIT(wg)
        .iface = {
            .get_name                = wg_backend_name,
            .free                    = wg_backend_free,
            .get_default_buffer_type = wg_backend_default_buffer_type,
            .set_tensor_async        = wg_set_tensor_async,
            .get_tensor_async        = wg_get_tensor_async,
            .cpy_tensor_async        = wg_cpy_tensor_async_entry,
            .synchronize             = wg_synchronize,
            .graph_plan_create       = wg_plan_create,
            .graph_plan_free         = wg_plan_free,
            .graph_plan_compute      = wg_plan_compute_entry,
            .graph_compute           = wg_graph_compute_entry,
            .supports_op             = wg_supports_op,
        },
        .context = G,
    };
    reason_set(reason, reason_size, "");
    return backend;
}

bool ggspec_backend_is_webgpu(backend_t b) {
    return b != NULL && b->iface.get_name == wg_backend_name;
}

buft_t ggspec_webgpu_buffer_type(backend_t b) {
    if (!ggspec_backend_is_webgpu(b)) wg_fatal("ggspec_webgpu_buffer_type: not a WebGPU backend");
    struct wg_device * dev = b->context;
    return &dev->buft;
}

bool ggspec_webgpu_compiled(void) {
    return true;
}

const char * ggspec_webgpu_adapter_name(void) {
    return G != NULL ? G->name : "";
}

size_t ggspec_webgpu_pending(backend_t b) {
    if (!ggspec_backend_is_webgpu(b)) wg_fatal("ggspec_webgpu_pending: not a WebGPU backend");
    const struct wg_device * dev = b->context;
    return dev->n_reads;
}

#endif /* GGSPEC_HAVE_WGPU */
