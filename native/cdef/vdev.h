/* vdev.h - cffi declarations: the virtual device backend (include/ggspec-vdev.h) */

struct ggspec_vdev_params {
    const char * name;
    size_t alignment;
    bool lazy;
    bool async_entries;
    bool buffer_cpy_tensor;
    bool cpy_tensor_async;
    size_t alloc_pad;
    uint64_t ops_mask[2];
    bool compute_fails;
    size_t base_offset;
};

ggspec_backend_t             ggspec_vdev_init(const struct ggspec_vdev_params * p);
ggspec_backend_buffer_type_t ggspec_vdev_buffer_type(ggspec_backend_t b);
bool                         ggspec_backend_is_vdev(ggspec_backend_t b);

void   ggspec_vdev_read(ggspec_backend_buffer_t buf, size_t offset, void * out, size_t size);
void   ggspec_vdev_write(ggspec_backend_buffer_t buf, size_t offset, const void * in, size_t size);
size_t ggspec_vdev_pending(ggspec_backend_t b);
size_t ggspec_vdev_init_tensor_calls(ggspec_backend_buffer_t buf);
size_t ggspec_vdev_reset_calls(ggspec_backend_buffer_t buf);

bool         ggspec_buft_is_vdev(ggspec_backend_buffer_type_t buft);
size_t       ggspec_vdev_log_len(ggspec_backend_buffer_type_t buft);
const char * ggspec_vdev_log_entry(ggspec_backend_buffer_type_t buft, size_t i, size_t * serial);
void         ggspec_vdev_log_clear(ggspec_backend_buffer_type_t buft);
