/* buffer.h - cffi declarations: buffer types and buffers, with their interfaces
   (include/ggspec-backend.h, include/ggspec-backend-impl.h) */

typedef struct ggspec_backend_buffer_type * ggspec_backend_buffer_type_t;
typedef struct ggspec_backend_buffer * ggspec_backend_buffer_t;
typedef struct ggspec_backend * ggspec_backend_t;

enum ggspec_backend_buffer_usage {
    GGSPEC_BACKEND_BUFFER_USAGE_ANY = 0,
    GGSPEC_BACKEND_BUFFER_USAGE_WEIGHTS = 1,
};

typedef void * ggspec_backend_buffer_type_context_t;

struct ggspec_backend_buffer_type_i {
    const char *            (*get_name)        (ggspec_backend_buffer_type_t buft);
    ggspec_backend_buffer_t (*alloc_buffer)    (ggspec_backend_buffer_type_t buft, size_t size);
    size_t                  (*get_alignment)   (ggspec_backend_buffer_type_t buft);
    size_t                  (*get_alloc_size)  (ggspec_backend_buffer_type_t buft, const struct ggspec_tensor * tensor);
    bool                    (*supports_backend)(ggspec_backend_buffer_type_t buft, ggspec_backend_t backend);
    bool                    (*is_host)         (ggspec_backend_buffer_type_t buft);
};

struct ggspec_backend_buffer_type {
    struct ggspec_backend_buffer_type_i iface;
    ggspec_backend_buffer_type_context_t context;
};

typedef void * ggspec_backend_buffer_context_t;

struct ggspec_backend_buffer_i {
    const char * (*get_name)   (ggspec_backend_buffer_t buffer);
    void         (*free_buffer)(ggspec_backend_buffer_t buffer);
    void *       (*get_base)   (ggspec_backend_buffer_t buffer);
    void         (*init_tensor)(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor);
    void         (*set_tensor) (ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor, const void * data, size_t offset, size_t size);
    void         (*get_tensor) (ggspec_backend_buffer_t buffer, const struct ggspec_tensor * tensor, void * data, size_t offset, size_t size);
    bool         (*cpy_tensor) (ggspec_backend_buffer_t buffer, const struct ggspec_tensor * src, struct ggspec_tensor * dst);
    void         (*clear)      (ggspec_backend_buffer_t buffer, uint8_t value);
    void         (*reset)      (ggspec_backend_buffer_t buffer);
};

struct ggspec_backend_buffer {
    struct ggspec_backend_buffer_i iface;
    ggspec_backend_buffer_type_t buft;
    ggspec_backend_buffer_context_t context;
    size_t size;
    enum ggspec_backend_buffer_usage usage;
};

const char *            ggspec_backend_buft_name(ggspec_backend_buffer_type_t buft);
ggspec_backend_buffer_t ggspec_backend_buft_alloc_buffer(ggspec_backend_buffer_type_t buft, size_t size);
size_t                  ggspec_backend_buft_get_alignment(ggspec_backend_buffer_type_t buft);
size_t                  ggspec_backend_buft_get_alloc_size(ggspec_backend_buffer_type_t buft, struct ggspec_tensor * tensor);
bool                    ggspec_backend_buft_supports_backend(ggspec_backend_buffer_type_t buft, ggspec_backend_t backend);
bool                    ggspec_backend_buft_is_host(ggspec_backend_buffer_type_t buft);

ggspec_backend_buffer_t ggspec_backend_buffer_init(ggspec_backend_buffer_type_t buft, struct ggspec_backend_buffer_i iface, ggspec_backend_buffer_context_t context, size_t size);

const char *                 ggspec_backend_buffer_name(ggspec_backend_buffer_t buffer);
void                         ggspec_backend_buffer_free(ggspec_backend_buffer_t buffer);
void *                       ggspec_backend_buffer_get_base(ggspec_backend_buffer_t buffer);
size_t                       ggspec_backend_buffer_get_size(ggspec_backend_buffer_t buffer);
void                         ggspec_backend_buffer_init_tensor(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor);
size_t                       ggspec_backend_buffer_get_alignment(ggspec_backend_buffer_t buffer);
size_t                       ggspec_backend_buffer_get_alloc_size(ggspec_backend_buffer_t buffer, struct ggspec_tensor * tensor);
void                         ggspec_backend_buffer_clear(ggspec_backend_buffer_t buffer, uint8_t value);
bool                         ggspec_backend_buffer_is_host(ggspec_backend_buffer_t buffer);
void                         ggspec_backend_buffer_set_usage(ggspec_backend_buffer_t buffer, enum ggspec_backend_buffer_usage usage);
ggspec_backend_buffer_type_t ggspec_backend_buffer_get_type(ggspec_backend_buffer_t buffer);
void                         ggspec_backend_buffer_reset(ggspec_backend_buffer_t buffer);
