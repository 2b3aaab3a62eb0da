/* Stand-in for cub_reference.cu in builds without CUDA: the tour and the
 * timer call the same functions either way, and here each says "no CUDA".
 * The tour then times with the wall clock and leaves the CUB columns empty. */
#include "cub_reference.h"

#ifdef GPUPRIMS_BENCH_WITH_CUB
#error "cub_reference_stub.c is for builds without CUB; build cub_reference.cu instead"
#endif

static const char no_cuda[] = "gpuprims_bench was built without CUDA (no CUB reference, no CUDA events)";

const char *cubref_last_error(void) { return no_cuda; }
uint32_t cubref_cccl_version(void) { return 0; }
int cubref_device_count(void) { return 0; }
void *cubref_stream_create(void) { return NULL; }
void cubref_stream_destroy(void *stream) { (void)stream; }
int cubref_stream_synchronize(void *stream) { (void)stream; return -1; }
void *cubref_event_create(void) { return NULL; }
void cubref_event_destroy(void *event) { (void)event; }
int cubref_event_record(void *event, void *stream) { (void)event; (void)stream; return -1; }
double cubref_event_elapsed_ms(void *start, void *stop) { (void)start; (void)stop; return -1.0; }
void *cubref_malloc(size_t bytes) { (void)bytes; return NULL; }
void cubref_free(void *dev) { (void)dev; }
int cubref_copy_to_host(void *host_dst, const void *dev_src, size_t bytes) {
  (void)host_dst; (void)dev_src; (void)bytes;
  return -1;
}
double cubref_reduce_ms(uint32_t dtype, uint32_t op, const void *d_in, size_t n, int warmup, int reps, void *stream,
                        void *result_host) {
  (void)dtype; (void)op; (void)d_in; (void)n; (void)warmup; (void)reps; (void)stream; (void)result_host;
  return -2.0;
}
double cubref_reduce_to_host_ms(uint32_t dtype, uint32_t op, int mapped, const void *d_in, size_t n, int warmup,
                                int reps, void *stream, void *result_host) {
  (void)mapped;
  return cubref_reduce_ms(dtype, op, d_in, n, warmup, reps, stream, result_host);
}
double cubref_scan_ms(uint32_t dtype, uint32_t op, uint32_t mode, const void *d_in, void *d_out, size_t n,
                      int warmup, int reps, void *stream) {
  (void)dtype; (void)op; (void)mode; (void)d_in; (void)d_out; (void)n; (void)warmup; (void)reps; (void)stream;
  return -2.0;
}
double cubref_radix_sort_ms(uint32_t key_dtype, uint32_t value_dtype, uint32_t order, const void *d_keys_in,
                            void *d_keys_out, const void *d_values_in, void *d_values_out, size_t n, int warmup,
                            int reps, void *stream) {
  (void)key_dtype; (void)value_dtype; (void)order; (void)d_keys_in; (void)d_keys_out; (void)d_values_in;
  (void)d_values_out; (void)n; (void)warmup; (void)reps; (void)stream;
  return -2.0;
}
double cubref_merge_sort_ms(uint32_t key_dtype, uint32_t value_dtype, uint32_t order, const void *d_keys_in,
                            void *d_keys_out, const void *d_values_in, void *d_values_out, size_t n, int warmup,
                            int reps, void *stream) {
  return cubref_radix_sort_ms(key_dtype, value_dtype, order, d_keys_in, d_keys_out, d_values_in, d_values_out, n,
                              warmup, reps, stream);
}
double cubref_row_median_block_sort_ms(uint32_t dtype, const void *d_values, const void *d_offsets, size_t nrows,
                                       size_t max_row, void *d_out, int warmup, int reps, void *stream) {
  (void)dtype; (void)d_values; (void)d_offsets; (void)nrows; (void)max_row; (void)d_out; (void)warmup; (void)reps;
  (void)stream;
  return -2.0;
}
double cubref_segmented_sort_ms(uint32_t dtype, const void *d_values, void *d_sorted, size_t n, const void *d_offsets,
                                size_t nrows, int warmup, int reps, void *stream) {
  (void)dtype; (void)d_values; (void)d_sorted; (void)n; (void)d_offsets; (void)nrows; (void)warmup; (void)reps;
  (void)stream;
  return -2.0;
}
double cubref_batched_topk_ms(uint32_t dtype, uint32_t order, const void *d_values, const void *d_offsets,
                              size_t nrows, size_t row_len, size_t max_row, size_t k, void *d_out_keys,
                              void *d_out_indices, int warmup, int reps, void *stream, char *config,
                              size_t config_len) {
  (void)dtype; (void)order; (void)d_values; (void)d_offsets; (void)nrows; (void)row_len; (void)max_row; (void)k;
  (void)d_out_keys; (void)d_out_indices; (void)warmup; (void)reps; (void)stream;
  if (config && config_len) config[0] = '\0';
  return -2.0;
}
double cubref_topk_ms(uint32_t dtype, uint32_t order, const void *d_in, size_t n, size_t k, void *d_out_keys,
                      void *d_out_indices, int warmup, int reps, void *stream) {
  (void)dtype; (void)order; (void)d_in; (void)n; (void)k; (void)d_out_keys; (void)d_out_indices; (void)warmup;
  (void)reps; (void)stream;
  return -2.0;
}
