/* CUB reference for the gpuprims benchmark tour.
 *
 * Plain C prototypes of the functions bench/cub_reference.cu exports. They run
 * CUB (as shipped with the CUDA toolkit) on device memory the caller owns --
 * in the tour, the very buffers gpuprims holds, reached through
 * gpuprims_buffer_device_ptr -- on a stream the caller created, and time it
 * the way the anchor figures were timed (shared/anchors/cub_anchors.cu):
 * CUDA events, warm-up runs first, median of the timed runs.
 *
 * Every function that can fail returns a negative number (or NULL) and leaves
 * a message for cubref_last_error(). Streams, events and device pointers
 * cross as void * (a cudaStream_t, cudaEvent_t, device address), so C code
 * that includes this header needs no CUDA header.
 *
 * Only compiled when the bench is built with CUDA (GPUPRIMS_BENCH_WITH_CUB).
 */
#ifndef GPUPRIMS_BENCH_CUB_REFERENCE_H
#define GPUPRIMS_BENCH_CUB_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The message of the last failure in this thread ("" when none). */
const char *cubref_last_error(void);

/* CCCL version as major*1000000 + minor*1000 + patch (0 when unknown). */
uint32_t cubref_cccl_version(void);

/* Device count the CUDA runtime sees (0 on error or without a device). */
int cubref_device_count(void);

/* Streams and events (cudaStream_t / cudaEvent_t as void *). */
void *cubref_stream_create(void);                  /* non-blocking stream; NULL on error */
void cubref_stream_destroy(void *stream);
int cubref_stream_synchronize(void *stream);       /* 0 or -1 */
void *cubref_event_create(void);                   /* NULL on error */
void cubref_event_destroy(void *event);
int cubref_event_record(void *event, void *stream); /* 0 or -1 */
/* Waits for `stop`, then gives the milliseconds between the two events
 * (negative on error). */
double cubref_event_elapsed_ms(void *start, void *stop);

/* Device memory (cudaMalloc / cudaFree) and copies. 0 or -1. */
void *cubref_malloc(size_t bytes);                 /* NULL on error */
void cubref_free(void *dev);
int cubref_copy_to_host(void *host_dst, const void *dev_src, size_t bytes);

/* DeviceReduce::Sum (op SUM) or DeviceReduce::Max (op MAX) of n elements of
 * dtype at d_in (device memory), issued on `stream`. Temporary storage and
 * the device output are allocated once, outside the timed region; `warmup`
 * untimed runs, then `reps` timed runs (events around each call). Returns
 * the median in milliseconds, or a negative number on error or an
 * unsupported dtype/op (-2: unsupported). The result of one more run is
 * copied to result_host (one element of dtype) when it is not NULL.
 * dtype and op are the gpuprims constants (GPUPRIMS_DTYPE_*, GPUPRIMS_OP_*). */
double cubref_reduce_ms(uint32_t dtype, uint32_t op, const void *d_in, size_t n,
                        int warmup, int reps, void *stream, void *result_host);

/* As cubref_reduce_ms, but each timed run also hands the value to host
 * memory and waits for it, the stop event recorded after the wait -- the
 * work gpuprims_reduce does. mapped == 0: DeviceReduce into device memory,
 * cudaMemcpyAsync to pinned host memory, cudaStreamSynchronize. mapped != 0:
 * DeviceReduce writes straight into mapped pinned host memory,
 * cudaStreamSynchronize. */
double cubref_reduce_to_host_ms(uint32_t dtype, uint32_t op, int mapped, const void *d_in, size_t n,
                                int warmup, int reps, void *stream, void *result_host);

/* DeviceScan::InclusiveSum (mode GPUPRIMS_SCAN_INCLUSIVE) or ExclusiveSum
 * (GPUPRIMS_SCAN_EXCLUSIVE), op SUM only, from d_in to d_out (distinct device
 * buffers of n elements), issued on `stream`. Timing as cubref_reduce_ms.
 * After timing, d_out is overwritten with a copy of d_in and the scan runs
 * once more, so that what d_out holds on return was written by one run. */
double cubref_scan_ms(uint32_t dtype, uint32_t op, uint32_t mode, const void *d_in,
                      void *d_out, size_t n, int warmup, int reps, void *stream);

/* DeviceRadixSort out of place, called as the anchors called it (n as size_t, all
 * the key's bits): SortKeys / SortKeysDescending (value_dtype 0; d_values_* unused,
 * may be NULL) or SortPairs / SortPairsDescending (value_dtype
 * GPUPRIMS_DTYPE_U32, u32 keys only), order GPUPRIMS_ORDER_ASCENDING or
 * _DESCENDING, of n keys of key_dtype (U8, U16, U32, U64, F32, F16, BF16) from d_keys_in
 * to d_keys_out (and values from d_values_in to d_values_out), issued on
 * `stream`. CUB only reads the inputs, so every run sorts the same unsorted
 * input. Timing as cubref_reduce_ms. After timing, the outputs are poisoned
 * and the sort runs once more, so that what they hold on return was written
 * by one run. -2: combination not wired. */
double cubref_radix_sort_ms(uint32_t key_dtype, uint32_t value_dtype, uint32_t order, const void *d_keys_in,
                            void *d_keys_out, const void *d_values_in, void *d_values_out, size_t n, int warmup,
                            int reps, void *stream);

/* DeviceMergeSort::SortKeysCopy / SortPairsCopy (CUB's comparison sort, the
 * quicksort rows' reference) out of place with a less-than comparator
 * (greater-than for GPUPRIMS_ORDER_DESCENDING), n as size_t; arguments,
 * wired combinations, timing and the poisoned last run as
 * cubref_radix_sort_ms. Not stable: equal keys' values may come out in any
 * order. */
double cubref_merge_sort_ms(uint32_t key_dtype, uint32_t value_dtype, uint32_t order, const void *d_keys_in,
                            void *d_keys_out, const void *d_values_in, void *d_values_out, size_t n, int warmup,
                            int reps, void *stream);

/* The lower median of each of nrows rows (offsets: nrows + 1 u32 entries) into d_out,
 * each row sorted by one block with cub::BlockRadixSort (the anchors' row_median_radix):
 * u16 rows of at most 128 keys (128 threads x 1) or f32 rows of at most 5120 (512 x 10),
 * longest row max_row. Timing as cubref_reduce_ms. -2: not wired. */
double cubref_row_median_block_sort_ms(uint32_t dtype, const void *d_values, const void *d_offsets, size_t nrows,
                                       size_t max_row, void *d_out, int warmup, int reps, void *stream);

/* cub::DeviceSegmentedSort::SortKeys of the nrows rows (offsets: nrows + 1 u32 entries)
 * of n u16 or f32 keys from d_values into d_sorted (n elements; what lies outside the
 * rows is left as it was). Timing as cubref_reduce_ms. -2: not wired. */
double cubref_segmented_sort_ms(uint32_t dtype, const void *d_values, void *d_sorted, size_t n, const void *d_offsets,
                                size_t nrows, int warmup, int reps, void *stream);

/* cub::DeviceBatchedTopK::MaxPairs (order GPUPRIMS_ORDER_DESCENDING) or MinPairs
 * (_ASCENDING), CCCL 3.5.0 and later: the k largest (smallest) keys of each of nrows rows
 * of f32 or bf16 keys at d_values, with their u32 index within the row as the value. Rows:
 * d_offsets NULL, uniform rows of row_len; else nrows + 1 u32 offsets (row_len unused), the
 * longest row max_row. Row r's min(k, its length) results go to d_out_keys + r * k (keys'
 * dtype) and d_out_indices + r * k (u32), in no particular order, ties at the k-th place
 * broken any way (CUB's only mode: determinism::not_guaranteed, output_ordering::unsorted).
 * One thread block a row: rows longer than the largest compiled bound (8,192, what CUB
 * 3.5.0 takes with u32 values in 48 KiB of shared memory) are -2, as are other dtypes and a build against an older CCCL; the reason is in
 * cubref_last_error(). config (config_len bytes, may be NULL) receives the configuration
 * that ran ("DeviceBatchedTopK::MaxPairs f32/u32-index, immediate sizes bounds<1, 256>,
 * ..."). Timing, and the outputs written by one run, as cubref_radix_sort_ms. */
double cubref_batched_topk_ms(uint32_t dtype, uint32_t order, const void *d_values, const void *d_offsets,
                              size_t nrows, size_t row_len, size_t max_row, size_t k, void *d_out_keys,
                              void *d_out_indices, int warmup, int reps, void *stream, char *config,
                              size_t config_len);

/* cub::DeviceTopK (CCCL >= 3.5.0) of n keys (f32 or u32) from d_in: the k (1..n) largest
 * (order DESCENDING: MaxKeys/MaxPairs) or smallest, to d_out_keys, with each one's u32
 * input index to d_out_indices (NULL: keys only; with indices n < 2^32), in no particular order,
 * ties at the k-th place broken any way (CUB's only mode: determinism::not_guaranteed,
 * output_ordering::unsorted). -2: not wired (other dtypes, k, a build against an older
 * CCCL; the reason in cubref_last_error()). Timing, and the outputs written by one run,
 * as cubref_radix_sort_ms. */
double cubref_topk_ms(uint32_t dtype, uint32_t order, const void *d_in, size_t n, size_t k, void *d_out_keys,
                      void *d_out_indices, int warmup, int reps, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* GPUPRIMS_BENCH_CUB_REFERENCE_H */
