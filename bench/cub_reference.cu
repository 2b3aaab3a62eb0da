// CUB reference for the gpuprims benchmark tour (see cub_reference.h).
//
// Timed the way shared/anchors/cub_anchors.cu timed the anchor figures: CUDA
// events around each call, warm-up first, median of the timed runs, temporary
// storage allocated once outside the timed region. The difference: the work
// runs on the caller's stream (the one the tour hands to gpuprims too), and on
// the caller's device data (gpuprims' own buffers).
#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>
// cub::DeviceBatchedTopK and cub::DeviceTopK first appear in CCCL 3.5.0 (CUDA 13.5); the
// toolkit's 3.0.1 lacks them, and there cubref_batched_topk_ms and cubref_topk_ms say so (-2).
#if CCCL_MAJOR_VERSION > 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION >= 5)
#define CUBREF_HAVE_BATCHED_TOPK 1
#include <cub/device/device_batched_topk.cuh>
#include <cub/device/device_topk.cuh>
#include <cuda/argument>
#include <cuda/iterator>
#include <cuda/std/execution>
#include <cuda/stream>
#else
#define CUBREF_HAVE_BATCHED_TOPK 0
#endif
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "gpuprims.h"
#include "cub_reference.h"

namespace {

thread_local std::string g_error;

bool ok(cudaError_t e, const char *what, int line) {
  if (e == cudaSuccess) return true;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s: %s (%s) [cub_reference.cu:%d]", what, cudaGetErrorString(e),
                cudaGetErrorName(e), line);
  g_error = buf;
  (void)cudaGetLastError();  // clear a sticky-less error so the next call starts clean
  return false;
}
#define CK(expr) ok((expr), #expr, __LINE__)

// Owns one CUDA runtime allocation or handle, released with `Release`; null when
// acquiring it failed (the error is in g_error).
template <class H, cudaError_t (*Release)(H)>
struct Owned {
  H h = nullptr;
  Owned() = default;
  ~Owned() {
    if (h) Release(h);
  }
  Owned(const Owned &) = delete;
  Owned &operator=(const Owned &) = delete;
};

struct DeviceMem : Owned<void *, cudaFree> {
  explicit DeviceMem(size_t bytes) {
    if (!CK(cudaMalloc(&h, bytes ? bytes : 1))) h = nullptr;
  }
};

struct PinnedMem : Owned<void *, cudaFreeHost> {
  explicit PinnedMem(size_t bytes) {
    if (!CK(cudaMallocHost(&h, bytes ? bytes : 1))) h = nullptr;
  }
};

struct MappedMem : Owned<void *, cudaFreeHost> {  // pinned host memory the device writes to directly
  void *d = nullptr;
  explicit MappedMem(size_t bytes) {
    if (!CK(cudaHostAlloc(&h, bytes ? bytes : 1, cudaHostAllocMapped))) {
      h = nullptr;
    } else if (!CK(cudaHostGetDevicePointer(&d, h, 0))) {
      cudaFreeHost(h);
      h = nullptr;
    }
  }
};

struct Event : Owned<cudaEvent_t, cudaEventDestroy> {
  Event() {
    if (!CK(cudaEventCreate(&h))) h = nullptr;
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return -1.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// `call(temp, temp_bytes)` issues one CUB device-wide call on stream s
// (temp == nullptr asks for the size, as CUB does). Temporary storage is asked for
// and allocated once, outside the timed region; then `warmup` untimed calls and
// `reps` calls each between two events. Afterwards `check(run)` may issue one more
// call through `run()` to fetch a result, and returns false on failure. Returns
// the median ms, negative on error.
template <typename Call, typename Check>
double time_cub(Call &call, int warmup, int reps, cudaStream_t s, Check check) {
  size_t temp_bytes = 0;
  if (!CK(call(nullptr, temp_bytes))) return -1.0;
  DeviceMem temp(temp_bytes);
  Event a, b;
  if (!temp.h || !a.h || !b.h) return -1.0;
  auto run = [&]() -> cudaError_t {
    size_t tb = temp_bytes;
    return call(temp.h, tb);
  };
  for (int r = 0; r < warmup; ++r)
    if (!CK(run())) return -1.0;
  if (!CK(cudaStreamSynchronize(s)) || !CK(cudaGetLastError())) return -1.0;
  std::vector<double> ms;
  ms.reserve(reps > 0 ? (size_t)reps : 1);
  for (int r = 0; r < reps; ++r) {
    if (!CK(cudaEventRecord(a.h, s))) return -1.0;
    if (!CK(run())) return -1.0;
    if (!CK(cudaEventRecord(b.h, s))) return -1.0;
    if (!CK(cudaEventSynchronize(b.h))) return -1.0;
    float x = 0.0f;
    if (!CK(cudaEventElapsedTime(&x, a.h, b.h))) return -1.0;
    ms.push_back(x);
  }
  if (!CK(cudaGetLastError()) || !check(run)) return -1.0;
  return median(ms);
}

enum class RedOp { Sum, Min, Max };

// How the value ends up, inside the timed region:
//   Dest::Device  in device memory (as the anchors);
//   Dest::Memcpy  in device memory, then cudaMemcpyAsync to pinned host memory
//                 and cudaStreamSynchronize;
//   Dest::Mapped  written by the kernel straight into mapped pinned host
//                 memory, then cudaStreamSynchronize.
// The last two do what gpuprims_reduce does: hand the value to host memory.
enum class Dest { Device, Memcpy, Mapped };

template <typename T>
double reduce_t(RedOp op, Dest dest, const void *d_in_v, size_t n, int warmup, int reps, cudaStream_t s,
                void *result_host) {
  const T *d_in = static_cast<const T *>(d_in_v);
  DeviceMem out(sizeof(T));
  PinnedMem pinned(dest == Dest::Memcpy ? sizeof(T) : 0);
  MappedMem mapped(dest == Dest::Mapped ? sizeof(T) : 0);
  if (!out.h || !pinned.h || !mapped.h) return -1.0;
  T *d_out = static_cast<T *>(dest == Dest::Mapped ? mapped.d : out.h);
  auto reduce = [&](void *temp, size_t &temp_bytes) -> cudaError_t {
    // n passed as size_t, as the anchors did (the same CUB dispatch path).
    switch (op) {
      case RedOp::Sum: return cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, n, s);
      case RedOp::Min: return cub::DeviceReduce::Min(temp, temp_bytes, d_in, d_out, n, s);
      default: return cub::DeviceReduce::Max(temp, temp_bytes, d_in, d_out, n, s);
    }
  };
  auto call = [&](void *temp, size_t &temp_bytes) -> cudaError_t {
    cudaError_t e = reduce(temp, temp_bytes);
    if (e != cudaSuccess || dest == Dest::Device || temp == nullptr) return e;
    if (dest == Dest::Memcpy) {
      e = cudaMemcpyAsync(pinned.h, d_out, sizeof(T), cudaMemcpyDeviceToHost, s);
      if (e != cudaSuccess) return e;
    }
    return cudaStreamSynchronize(s);
  };
  // One more run into a poisoned output, copied out once for the check.
  auto fetch = [&](auto &run) {
    return !result_host ||
           (CK(cudaMemsetAsync(d_out, 0xA5, sizeof(T), s)) && CK(run()) &&
            CK(cudaMemcpyAsync(result_host, d_out, sizeof(T), cudaMemcpyDeviceToHost, s)) &&
            CK(cudaStreamSynchronize(s)));
  };
  return time_cub(call, warmup, reps, s, fetch);
}

template <typename T>
double scan_t(bool inclusive, const void *d_in_v, void *d_out_v, size_t n, int warmup, int reps, cudaStream_t s) {
  const T *d_in = static_cast<const T *>(d_in_v);
  T *d_out = static_cast<T *>(d_out_v);
  auto call = [&](void *temp, size_t &temp_bytes) -> cudaError_t {
    if (inclusive) return cub::DeviceScan::InclusiveSum(temp, temp_bytes, d_in, d_out, n, s);
    return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, d_in, d_out, n, s);
  };
  // Overwrite the output with the input (not the answer), then one more run:
  // what d_out holds now was written by that run.
  auto refresh = [&](auto &run) {
    return CK(cudaMemcpyAsync(d_out, d_in, n * sizeof(T), cudaMemcpyDeviceToDevice, s)) && CK(run()) &&
           CK(cudaStreamSynchronize(s)) && CK(cudaGetLastError());
  };
  return time_cub(call, warmup, reps, s, refresh);
}

// Poisons a sort's outputs (d_values_out may be null: keys only), then one more run:
// what they hold afterwards was written by that run.
auto rerun_into_poisoned(void *d_keys_out, size_t key_bytes, void *d_values_out, size_t value_bytes, cudaStream_t s) {
  return [=](auto &run) {
    return CK(cudaMemsetAsync(d_keys_out, 0xA5, key_bytes, s)) &&
           (!d_values_out || CK(cudaMemsetAsync(d_values_out, 0xA5, value_bytes, s))) && CK(run()) &&
           CK(cudaStreamSynchronize(s)) && CK(cudaGetLastError());
  };
}

// DeviceRadixSort out of place, as the anchors called it: SortKeys / SortPairs (or
// their Descending forms) from d_keys_in (and d_values_in) to d_keys_out (and
// d_values_out), n as size_t, all the key's bits. V = cub::NullType: keys only. CUB
// only reads the inputs (it sorts through its temporary storage), so every run sorts
// the same unsorted input and nothing needs restoring between runs.
template <typename K, typename V>
double radix_sort_t(bool descending, const void *d_keys_in_v, void *d_keys_out_v, const void *d_values_in_v,
                    void *d_values_out_v, size_t n, int warmup, int reps, cudaStream_t s) {
  constexpr bool keys_only = std::is_same<V, cub::NullType>::value;
  constexpr int end_bit = int(sizeof(K) * 8);
  const K *d_keys_in = static_cast<const K *>(d_keys_in_v);
  K *d_keys_out = static_cast<K *>(d_keys_out_v);
  auto call = [&](void *temp, size_t &temp_bytes) -> cudaError_t {
    if constexpr (keys_only) {
      if (descending)
        return cub::DeviceRadixSort::SortKeysDescending(temp, temp_bytes, d_keys_in, d_keys_out, n, 0, end_bit, s);
      return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, d_keys_in, d_keys_out, n, 0, end_bit, s);
    } else {
      const V *d_values_in = static_cast<const V *>(d_values_in_v);
      V *d_values_out = static_cast<V *>(d_values_out_v);
      if (descending)
        return cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, d_keys_in, d_keys_out, d_values_in,
                                                         d_values_out, n, 0, end_bit, s);
      return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out, n,
                                             0, end_bit, s);
    }
  };
  auto refresh = rerun_into_poisoned(d_keys_out, n * sizeof(K), keys_only ? nullptr : d_values_out_v,
                                     keys_only ? 0 : n * sizeof(V), s);
  return time_cub(call, warmup, reps, s, refresh);
}

// The merge sort's comparators: a strict weak order on the keys. The tour's float
// rows hold no NaN and no zeros, where `<` and the library's total order differ.
struct Less {
  template <typename T>
  __host__ __device__ bool operator()(const T &a, const T &b) const { return a < b; }
};
struct Greater {
  template <typename T>
  __host__ __device__ bool operator()(const T &a, const T &b) const { return b < a; }
};

// DeviceMergeSort::SortKeysCopy / SortPairsCopy, CUB's comparison sort, from d_keys_in
// (and d_values_in) to d_keys_out (and d_values_out), n as size_t. The Copy forms
// only read the inputs, so, as for radix_sort_t, every run sorts the same unsorted
// input. Not stable (nor is gpuprims_quicksort): the values of equal keys may come
// out in any order.
template <typename K, typename V, typename Cmp>
double merge_sort_t(const void *d_keys_in_v, void *d_keys_out_v, const void *d_values_in_v, void *d_values_out_v,
                    size_t n, int warmup, int reps, cudaStream_t s) {
  constexpr bool keys_only = std::is_same<V, cub::NullType>::value;
  const K *d_keys_in = static_cast<const K *>(d_keys_in_v);
  K *d_keys_out = static_cast<K *>(d_keys_out_v);
  auto call = [&](void *temp, size_t &temp_bytes) -> cudaError_t {
    if constexpr (keys_only) {
      return cub::DeviceMergeSort::SortKeysCopy(temp, temp_bytes, d_keys_in, d_keys_out, n, Cmp(), s);
    } else {
      return cub::DeviceMergeSort::SortPairsCopy(temp, temp_bytes, d_keys_in, static_cast<const V *>(d_values_in_v),
                                                 d_keys_out, static_cast<V *>(d_values_out_v), n, Cmp(), s);
    }
  };
  auto refresh = rerun_into_poisoned(d_keys_out, n * sizeof(K), keys_only ? nullptr : d_values_out_v,
                                     keys_only ? 0 : n * sizeof(V), s);
  return time_cub(call, warmup, reps, s, refresh);
}

double unsupported(const char *what, uint32_t dtype, uint32_t op) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "cub reference: %s not wired for dtype %u op %u", what, (unsigned)dtype,
                (unsigned)op);
  g_error = buf;
  return -2.0;
}

// The checks both sorts' entry points share, then sort(K{}, V{}) with K the key type
// of key_dtype and V = uint32_t for pairs (u32 keys with u32 values only: the tour's
// row) or cub::NullType for keys only. `what` names the sort in messages.
template <typename Sort>
double dispatch_sort(const char *what, uint32_t key_dtype, uint32_t value_dtype, uint32_t order,
                     const void *d_values_in, const void *d_values_out, Sort sort) {
  char buf[160];
  if (order != GPUPRIMS_ORDER_ASCENDING && order != GPUPRIMS_ORDER_DESCENDING) {
    std::snprintf(buf, sizeof buf, "cub reference: %s not wired for order %u", what, (unsigned)order);
    g_error = buf;
    return -2.0;
  }
  if (value_dtype != 0 && (value_dtype != GPUPRIMS_DTYPE_U32 || key_dtype != GPUPRIMS_DTYPE_U32)) {
    std::snprintf(buf, sizeof buf, "cub reference: %s pairs not wired for key dtype %u, value dtype %u", what,
                  (unsigned)key_dtype, (unsigned)value_dtype);
    g_error = buf;
    return -2.0;
  }
  if (value_dtype != 0 && (!d_values_in || !d_values_out)) {
    std::snprintf(buf, sizeof buf, "cub reference: %s pairs without value buffers", what);
    g_error = buf;
    return -1.0;
  }
  using None = cub::NullType;  // keys only
  switch (key_dtype) {
    case GPUPRIMS_DTYPE_U8: return sort(uint8_t{}, None{});
    case GPUPRIMS_DTYPE_U16: return sort(uint16_t{}, None{});
    case GPUPRIMS_DTYPE_U32: return value_dtype != 0 ? sort(uint32_t{}, uint32_t{}) : sort(uint32_t{}, None{});
    case GPUPRIMS_DTYPE_U64: return sort(uint64_t{}, None{});
    case GPUPRIMS_DTYPE_F32: return sort(float{}, None{});
    case GPUPRIMS_DTYPE_F16: return sort(__half{}, None{});
    case GPUPRIMS_DTYPE_BF16: return sort(__nv_bfloat16{}, None{});
    default: return unsupported(what, key_dtype, order);
  }
}

}  // namespace

extern "C" {

const char *cubref_last_error(void) { return g_error.c_str(); }

uint32_t cubref_cccl_version(void) {
#if defined(CCCL_MAJOR_VERSION)
  return (uint32_t)(CCCL_MAJOR_VERSION * 1000000 + CCCL_MINOR_VERSION * 1000 + CCCL_PATCH_VERSION);
#elif defined(CUB_VERSION)
  return (uint32_t)((CUB_VERSION / 100000) * 1000000 + (CUB_VERSION / 100 % 1000) * 1000 + CUB_VERSION % 100);
#else
  return 0;
#endif
}

int cubref_device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

void *cubref_stream_create(void) {
  // A blocking stream (ordered with the legacy default stream), so that work
  // gpuprims might still issue on the legacy stream stays ordered with ours.
  cudaStream_t s = nullptr;
  if (!CK(cudaStreamCreate(&s))) return nullptr;
  return (void *)s;
}

void cubref_stream_destroy(void *stream) {
  if (stream) cudaStreamDestroy((cudaStream_t)stream);
}

int cubref_stream_synchronize(void *stream) { return CK(cudaStreamSynchronize((cudaStream_t)stream)) ? 0 : -1; }

void *cubref_event_create(void) {
  cudaEvent_t e = nullptr;
  if (!CK(cudaEventCreate(&e))) return nullptr;
  return (void *)e;
}

void cubref_event_destroy(void *event) {
  if (event) cudaEventDestroy((cudaEvent_t)event);
}

int cubref_event_record(void *event, void *stream) {
  return CK(cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream)) ? 0 : -1;
}

double cubref_event_elapsed_ms(void *start, void *stop) {
  if (!CK(cudaEventSynchronize((cudaEvent_t)stop))) return -1.0;
  float ms = 0.0f;
  if (!CK(cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)stop))) return -1.0;
  return ms;
}

void *cubref_malloc(size_t bytes) {
  void *p = nullptr;
  if (!CK(cudaMalloc(&p, bytes ? bytes : 1))) return nullptr;
  return p;
}

void cubref_free(void *dev) {
  if (dev) cudaFree(dev);
}

int cubref_copy_to_host(void *host_dst, const void *dev_src, size_t bytes) {
  if (!CK(cudaDeviceSynchronize())) return -1;
  return CK(cudaMemcpy(host_dst, dev_src, bytes, cudaMemcpyDeviceToHost)) ? 0 : -1;
}

static double reduce_dispatch(uint32_t dtype, uint32_t op, Dest dest, const void *d_in, size_t n, int warmup,
                              int reps, void *stream, void *result_host) {
  RedOp r;
  if (op == GPUPRIMS_OP_SUM) r = RedOp::Sum;
  else if (op == GPUPRIMS_OP_MIN) r = RedOp::Min;
  else if (op == GPUPRIMS_OP_MAX) r = RedOp::Max;
  else return unsupported("reduce", dtype, op);
  cudaStream_t s = (cudaStream_t)stream;
  switch (dtype) {
    case GPUPRIMS_DTYPE_I32: return reduce_t<int32_t>(r, dest, d_in, n, warmup, reps, s, result_host);
    case GPUPRIMS_DTYPE_U32: return reduce_t<uint32_t>(r, dest, d_in, n, warmup, reps, s, result_host);
    case GPUPRIMS_DTYPE_I64: return reduce_t<int64_t>(r, dest, d_in, n, warmup, reps, s, result_host);
    case GPUPRIMS_DTYPE_U64: return reduce_t<uint64_t>(r, dest, d_in, n, warmup, reps, s, result_host);
    case GPUPRIMS_DTYPE_F32: return reduce_t<float>(r, dest, d_in, n, warmup, reps, s, result_host);
    case GPUPRIMS_DTYPE_F64: return reduce_t<double>(r, dest, d_in, n, warmup, reps, s, result_host);
    default: return unsupported("reduce", dtype, op);
  }
}

double cubref_reduce_ms(uint32_t dtype, uint32_t op, const void *d_in, size_t n, int warmup, int reps, void *stream,
                        void *result_host) {
  return reduce_dispatch(dtype, op, Dest::Device, d_in, n, warmup, reps, stream, result_host);
}

double cubref_reduce_to_host_ms(uint32_t dtype, uint32_t op, int mapped, const void *d_in, size_t n, int warmup,
                                int reps, void *stream, void *result_host) {
  return reduce_dispatch(dtype, op, mapped ? Dest::Mapped : Dest::Memcpy, d_in, n, warmup, reps, stream,
                         result_host);
}

double cubref_scan_ms(uint32_t dtype, uint32_t op, uint32_t mode, const void *d_in, void *d_out, size_t n,
                      int warmup, int reps, void *stream) {
  if (op != GPUPRIMS_OP_SUM || (mode != GPUPRIMS_SCAN_INCLUSIVE && mode != GPUPRIMS_SCAN_EXCLUSIVE))
    return unsupported("scan", dtype, op);
  bool inc = mode == GPUPRIMS_SCAN_INCLUSIVE;
  cudaStream_t s = (cudaStream_t)stream;
  switch (dtype) {
    case GPUPRIMS_DTYPE_I32: return scan_t<int32_t>(inc, d_in, d_out, n, warmup, reps, s);
    case GPUPRIMS_DTYPE_U32: return scan_t<uint32_t>(inc, d_in, d_out, n, warmup, reps, s);
    case GPUPRIMS_DTYPE_I64: return scan_t<int64_t>(inc, d_in, d_out, n, warmup, reps, s);
    case GPUPRIMS_DTYPE_U64: return scan_t<uint64_t>(inc, d_in, d_out, n, warmup, reps, s);
    case GPUPRIMS_DTYPE_F32: return scan_t<float>(inc, d_in, d_out, n, warmup, reps, s);
    case GPUPRIMS_DTYPE_F64: return scan_t<double>(inc, d_in, d_out, n, warmup, reps, s);
    default: return unsupported("scan", dtype, op);
  }
}

double cubref_radix_sort_ms(uint32_t key_dtype, uint32_t value_dtype, uint32_t order, const void *d_keys_in,
                            void *d_keys_out, const void *d_values_in, void *d_values_out, size_t n, int warmup,
                            int reps, void *stream) {
  const bool desc = order == GPUPRIMS_ORDER_DESCENDING;
  cudaStream_t s = (cudaStream_t)stream;
  return dispatch_sort("radix sort", key_dtype, value_dtype, order, d_values_in, d_values_out, [&](auto k, auto v) {
    return radix_sort_t<decltype(k), decltype(v)>(desc, d_keys_in, d_keys_out, d_values_in, d_values_out, n, warmup,
                                                  reps, s);
  });
}

double cubref_merge_sort_ms(uint32_t key_dtype, uint32_t value_dtype, uint32_t order, const void *d_keys_in,
                            void *d_keys_out, const void *d_values_in, void *d_values_out, size_t n, int warmup,
                            int reps, void *stream) {
  const bool desc = order == GPUPRIMS_ORDER_DESCENDING;
  cudaStream_t s = (cudaStream_t)stream;
  return dispatch_sort("merge sort", key_dtype, value_dtype, order, d_values_in, d_values_out, [&](auto k, auto v) {
    using K = decltype(k);
    using V = decltype(v);
    if (desc) return merge_sort_t<K, V, Greater>(d_keys_in, d_keys_out, d_values_in, d_values_out, n, warmup, reps, s);
    return merge_sort_t<K, V, Less>(d_keys_in, d_keys_out, d_values_in, d_values_out, n, warmup, reps, s);
  });
}

}  // extern "C"

namespace {

// Each row sorted by one block in registers, its lower median written: the anchors'
// row_median_radix (shared/anchors/cub_anchors.cu), for any key type. Rows hold at most
// THREADS * ITEMS keys; the missing ones are the largest key, so they sort last.
template <class T> __device__ __forceinline__ T largest_key();
template <> __device__ __forceinline__ uint16_t largest_key<uint16_t>() { return 0xFFFF; }
template <> __device__ __forceinline__ float largest_key<float>() { return __int_as_float(0x7f800000); }

template <class T, int THREADS, int ITEMS>
__global__ void row_median_block_sort(const T *data, const uint32_t *offsets, T *out) {
  using Sort = cub::BlockRadixSort<T, THREADS, ITEMS>;
  __shared__ typename Sort::TempStorage tmp;
  const uint32_t row = blockIdx.x, beg = offsets[row], len = offsets[row + 1] - beg;
  T keys[ITEMS];
  for (int i = 0; i < ITEMS; ++i) {
    const uint32_t idx = threadIdx.x * ITEMS + i;
    keys[i] = idx < len ? data[beg + idx] : largest_key<T>();
  }
  Sort(tmp).Sort(keys);
  const uint32_t m = (len - 1) / 2;
  for (int i = 0; i < ITEMS; ++i)
    if (threadIdx.x * ITEMS + i == m) out[row] = keys[i];
}

template <class T, int THREADS, int ITEMS>
double row_median_t(const void *d_values, const void *d_offsets, size_t nrows, void *d_out, int warmup, int reps,
                    cudaStream_t s) {
  auto call = [&](void *temp, size_t &bytes) -> cudaError_t {
    if (!temp) {
      bytes = 0;
      return cudaSuccess;
    }
    row_median_block_sort<T, THREADS, ITEMS>
        <<<(unsigned)nrows, THREADS, 0, s>>>((const T *)d_values, (const uint32_t *)d_offsets, (T *)d_out);
    return cudaGetLastError();
  };
  return time_cub(call, warmup, reps, s, [](auto &) { return true; });
}

template <class T>
double segmented_sort_t(const void *d_values, void *d_sorted, size_t n, const void *d_offsets, size_t nrows,
                        int warmup, int reps, cudaStream_t s) {
  const uint32_t *offsets = (const uint32_t *)d_offsets;
  auto call = [&](void *temp, size_t &bytes) {
    return cub::DeviceSegmentedSort::SortKeys(temp, bytes, (const T *)d_values, (T *)d_sorted, (int64_t)n,
                                              (int64_t)nrows, offsets, offsets + 1, s);
  };
  return time_cub(call, warmup, reps, s, [](auto &) { return true; });
}

}  // namespace

extern "C" {

double cubref_row_median_block_sort_ms(uint32_t dtype, const void *d_values, const void *d_offsets, size_t nrows,
                                       size_t max_row, void *d_out, int warmup, int reps, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (dtype == GPUPRIMS_DTYPE_U16 && max_row <= 128)
    return row_median_t<uint16_t, 128, 1>(d_values, d_offsets, nrows, d_out, warmup, reps, s);
  if (dtype == GPUPRIMS_DTYPE_F32 && max_row <= 5120)
    return row_median_t<float, 512, 10>(d_values, d_offsets, nrows, d_out, warmup, reps, s);
  return unsupported("row median by BlockRadixSort (dtype, or rows that long)", dtype, 0);
}

double cubref_segmented_sort_ms(uint32_t dtype, const void *d_values, void *d_sorted, size_t n, const void *d_offsets,
                                size_t nrows, int warmup, int reps, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  switch (dtype) {
    case GPUPRIMS_DTYPE_U16: return segmented_sort_t<uint16_t>(d_values, d_sorted, n, d_offsets, nrows, warmup, reps, s);
    case GPUPRIMS_DTYPE_F32: return segmented_sort_t<float>(d_values, d_sorted, n, d_offsets, nrows, warmup, reps, s);
    default: return unsupported("segmented sort", dtype, 0);
  }
}

}  // extern "C"

// ---------------------------------------------------------------------------------------
// cub::DeviceBatchedTopK (CCCL >= 3.5.0), the segmented top-k rows' anchor.
//
// What CCCL 3.5.0 offers (cub/device/device_batched_topk.cuh, dispatch/, agent/):
//   - MaxKeys / MinKeys / MaxPairs / MinPairs over an iterator of per-segment iterators
//     (d_keys_in[i] is segment i's keys; outputs likewise, k items a segment);
//   - only the opted-out contract: require(determinism::not_guaranteed,
//     tie_break::unspecified, output_ordering::unsorted) -- anything else is a
//     static_assert. Output unsorted, ties at the k-th place any of the tied items;
//   - one thread block a segment only (the multi-block path is a TODO): segment_sizes
//     needs a compile-time upper bound (cuda::args::constant<N>, or immediate /
//     deferred_sequence with cuda::args::bounds<lo, hi>()), and the smallest of the
//     block policies 256x64, 256x32, 256x16, 256x8, 256x4, 128x2 items covering it whose
//     shared memory (the union of BlockLoad/BlockStore WARP_TRANSPOSE of a tile of keys,
//     of values, and the block top-k's storage) fits in 48 KiB is used; none: a
//     static_assert. So 16,384 items at most (2-byte keys, no values), 8,192 with u32
//     values (and, by the same arithmetic, 4,096 with u64 values);
//   - uniform or per-segment sizes (deferred_sequence), uniform or per-segment k; the
//     number of segments one host value (a grid of that many blocks); a segment shorter
//     than k gives its size's worth of items;
//   - keys: anything with cub's radix traits (the block top-k is AIR radix select).
// Here: pairs, the values being each item's u32 index within its row (a counting
// iterator, so the indices cost a write, not a read), keys f32 or bf16, rows uniform
// (row_len) or ragged (u32 offsets), one k. The segment-size bound is chosen at run time
// from a few compiled ones (kBounds); rows longer than the largest are -2.
#if CUBREF_HAVE_BATCHED_TOPK
namespace {

template <class T>
struct UniformRow {  // segment i of uniform rows: base + i * row_len
  T *base;
  int64_t row_len;
  __host__ __device__ T *operator()(int64_t i) const { return base + i * row_len; }
};

template <class T>
struct RaggedRow {  // segment i of ragged rows: base + offsets[i]
  const T *base;
  const uint32_t *offsets;
  __host__ __device__ const T *operator()(int64_t i) const { return base + offsets[i]; }
};

struct RaggedLen {  // segment i's size
  const uint32_t *offsets;
  __host__ __device__ int operator()(int64_t i) const { return int(offsets[i + 1] - offsets[i]); }
};

struct RowIndices {  // every segment's values: 0, 1, 2, ... (the index within the row)
  __host__ __device__ cuda::counting_iterator<uint32_t> operator()(int64_t) const {
    return cuda::counting_iterator<uint32_t>{0u};
  }
};

template <class F>
auto segments(F f) {
  return cuda::transform_iterator(cuda::counting_iterator<int64_t>{0}, f);
}

// Rows of at most Bound items, keys T, largest (max) or smallest first.
template <class T, int Bound>
double batched_topk_t(bool max, const void *d_values, const uint32_t *d_offsets, size_t nrows, size_t row_len,
                      size_t k, void *d_out_keys, void *d_out_indices, int warmup, int reps, cudaStream_t s) {
  const auto req = cuda::execution::require(cuda::execution::determinism::not_guaranteed,
                                            cuda::execution::tie_break::unspecified,
                                            cuda::execution::output_ordering::unsorted);
  const auto env = cuda::std::execution::env{cuda::stream_ref{s}, req};
  const T *in = static_cast<const T *>(d_values);
  auto keys_out = segments(UniformRow<T>{static_cast<T *>(d_out_keys), (int64_t)k});
  auto vals_in = segments(RowIndices{});
  auto vals_out = segments(UniformRow<uint32_t>{static_cast<uint32_t *>(d_out_indices), (int64_t)k});
  const int kk = (int)k, nseg = (int)nrows;
  auto call = [&](void *temp, size_t &bytes) -> cudaError_t {
    if (d_offsets) {
      auto keys_in = segments(RaggedRow<T>{in, d_offsets});
      auto sizes = cuda::args::deferred_sequence{segments(RaggedLen{d_offsets}), cuda::args::bounds<0, Bound>()};
      if (max)
        return cub::DeviceBatchedTopK::MaxPairs(temp, bytes, keys_in, keys_out, vals_in, vals_out, sizes, kk, nseg,
                                                env);
      return cub::DeviceBatchedTopK::MinPairs(temp, bytes, keys_in, keys_out, vals_in, vals_out, sizes, kk, nseg, env);
    }
    auto keys_in = segments(UniformRow<const T>{in, (int64_t)row_len});
    auto sizes = cuda::args::immediate{(int)row_len, cuda::args::bounds<1, Bound>()};
    if (max)
      return cub::DeviceBatchedTopK::MaxPairs(temp, bytes, keys_in, keys_out, vals_in, vals_out, sizes, kk, nseg, env);
    return cub::DeviceBatchedTopK::MinPairs(temp, bytes, keys_in, keys_out, vals_in, vals_out, sizes, kk, nseg, env);
  };
  // What the outputs hold on return was written by one run (poisoned first).
  auto refresh = rerun_into_poisoned(d_out_keys, nrows * k * sizeof(T), d_out_indices, nrows * k * 4, s);
  return time_cub(call, warmup, reps, s, refresh);
}

// The compiled segment-size bounds, smallest first. The largest is the largest CUB 3.5.0
// accepts with u32 values: a tile of 16,384 (256x64) needs 64 KiB to load the values,
// past the 48 KiB of static shared memory, so 256x32 = 8,192 items, for f32 and bf16 keys
// alike (bf16 keys alone, without values, would reach 16,384).
template <class T>
struct Bounds {
  static constexpr int list[] = {256, 1024, 8192};
};

template <class T, size_t I = 0>
double batched_topk_bound(bool max, size_t longest, const void *d_values, const uint32_t *d_offsets, size_t nrows,
                          size_t row_len, size_t k, void *d_out_keys, void *d_out_indices, int warmup, int reps,
                          cudaStream_t s, int *bound) {
  constexpr size_t count = sizeof(Bounds<T>::list) / sizeof(int);
  if constexpr (I == count) {
    (void)max; (void)longest; (void)d_values; (void)d_offsets; (void)nrows; (void)row_len; (void)k;
    (void)d_out_keys; (void)d_out_indices; (void)warmup; (void)reps; (void)s;
    *bound = Bounds<T>::list[count - 1];
    return -2.0;
  } else {
    constexpr int B = Bounds<T>::list[I];
    if (longest > (size_t)B)
      return batched_topk_bound<T, I + 1>(max, longest, d_values, d_offsets, nrows, row_len, k, d_out_keys,
                                          d_out_indices, warmup, reps, s, bound);
    *bound = B;
    return batched_topk_t<T, B>(max, d_values, d_offsets, nrows, row_len, k, d_out_keys, d_out_indices, warmup,
                                reps, s);
  }
}

}  // namespace
#endif  // CUBREF_HAVE_BATCHED_TOPK

extern "C" {

double cubref_batched_topk_ms(uint32_t dtype, uint32_t order, const void *d_values, const void *d_offsets,
                              size_t nrows, size_t row_len, size_t max_row, size_t k, void *d_out_keys,
                              void *d_out_indices, int warmup, int reps, void *stream, char *config,
                              size_t config_len) {
  char buf[320];
  if (config && config_len) config[0] = '\0';
#if CUBREF_HAVE_BATCHED_TOPK
  const bool max = order == GPUPRIMS_ORDER_DESCENDING;
  const size_t longest = d_offsets ? max_row : row_len;
  const char *name = dtype == GPUPRIMS_DTYPE_F32 ? "f32" : dtype == GPUPRIMS_DTYPE_BF16 ? "bf16" : "?";
  int bound = 0;
  double ms = -2.0;
  if (order != GPUPRIMS_ORDER_ASCENDING && order != GPUPRIMS_ORDER_DESCENDING)
    return unsupported("DeviceBatchedTopK (order)", dtype, order);
  if (!d_offsets && row_len == 0) return unsupported("DeviceBatchedTopK (row_len 0)", dtype, order);
  if (nrows == 0 || nrows > 2147483647u || k == 0 || k > 2147483647u) {
    std::snprintf(buf, sizeof buf, "DeviceBatchedTopK: %zu rows, k %zu not wired (1..2^31-1 each)", nrows, k);
    g_error = buf;
    return -2.0;
  }
  cudaStream_t s = (cudaStream_t)stream;
  const uint32_t *offs = (const uint32_t *)d_offsets;
  switch (dtype) {
    case GPUPRIMS_DTYPE_F32:
      ms = batched_topk_bound<float>(max, longest, d_values, offs, nrows, row_len, k, d_out_keys, d_out_indices,
                                     warmup, reps, s, &bound);
      break;
    case GPUPRIMS_DTYPE_BF16:
      ms = batched_topk_bound<__nv_bfloat16>(max, longest, d_values, offs, nrows, row_len, k, d_out_keys,
                                             d_out_indices, warmup, reps, s, &bound);
      break;
    default: return unsupported("DeviceBatchedTopK (dtype; f32 and bf16 wired)", dtype, order);
  }
  if (ms == -2.0) {
    std::snprintf(buf, sizeof buf,
                  "DeviceBatchedTopK (CCCL %d.%d.%d): rows of %zu > %d %s items: one block a segment only, 48 KiB "
                  "of shared memory",
                  CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, longest, bound, name);
    g_error = buf;
    return -2.0;
  }
  if (config && config_len)
    std::snprintf(config, config_len,
                  "DeviceBatchedTopK::%s %s/u32-index, %s sizes bounds<%d, %d>, unsorted, not deterministic",
                  max ? "MaxPairs" : "MinPairs", name, d_offsets ? "deferred_sequence" : "immediate",
                  d_offsets ? 0 : 1, bound);
  return ms;
#else
  (void)dtype; (void)order; (void)d_values; (void)d_offsets; (void)nrows; (void)row_len; (void)max_row; (void)k;
  (void)d_out_keys; (void)d_out_indices; (void)warmup; (void)reps; (void)stream;
  std::snprintf(buf, sizeof buf, "DeviceBatchedTopK: built against CCCL %d.%d.%d (it needs 3.5.0)",
                CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
  g_error = buf;
  return -2.0;
#endif
}

}  // extern "C"

// ---------------------------------------------------------------------------------------
// cub::DeviceTopK (CCCL >= 3.5.0), the device-wide top-k rows' anchor: MaxKeys / MinKeys,
// or MaxPairs / MinPairs with each key's u32 index (a counting iterator: the indices cost
// a write, not a read), num_items and k as int64. Only the opted-out contract compiles:
// require(determinism::not_guaranteed, output_ordering::unsorted).
#if CUBREF_HAVE_BATCHED_TOPK
namespace {

template <class T>
double topk_t(bool max, const void *d_in_v, size_t n, size_t k, void *d_out_keys, void *d_out_indices, int warmup,
              int reps, cudaStream_t s) {
  const auto req = cuda::execution::require(cuda::execution::determinism::not_guaranteed,
                                            cuda::execution::output_ordering::unsorted);
  const auto env = cuda::std::execution::env{cuda::stream_ref{s}, req};
  const T *in = static_cast<const T *>(d_in_v);
  T *keys_out = static_cast<T *>(d_out_keys);
  uint32_t *idx_out = static_cast<uint32_t *>(d_out_indices);
  const int64_t nn = (int64_t)n, kk = (int64_t)k;
  auto call = [&](void *temp, size_t &bytes) -> cudaError_t {
    if (idx_out) {
      cuda::counting_iterator<uint32_t> idx_in{0u};
      if (max) return cub::DeviceTopK::MaxPairs(temp, bytes, in, keys_out, idx_in, idx_out, nn, kk, env);
      return cub::DeviceTopK::MinPairs(temp, bytes, in, keys_out, idx_in, idx_out, nn, kk, env);
    }
    if (max) return cub::DeviceTopK::MaxKeys(temp, bytes, in, keys_out, nn, kk, env);
    return cub::DeviceTopK::MinKeys(temp, bytes, in, keys_out, nn, kk, env);
  };
  auto refresh = rerun_into_poisoned(d_out_keys, k * sizeof(T), d_out_indices, k * 4, s);
  return time_cub(call, warmup, reps, s, refresh);
}

}  // namespace
#endif  // CUBREF_HAVE_BATCHED_TOPK

extern "C" {

double cubref_topk_ms(uint32_t dtype, uint32_t order, const void *d_in, size_t n, size_t k, void *d_out_keys,
                      void *d_out_indices, int warmup, int reps, void *stream) {
#if CUBREF_HAVE_BATCHED_TOPK
  const bool max = order == GPUPRIMS_ORDER_DESCENDING;
  if (order != GPUPRIMS_ORDER_ASCENDING && order != GPUPRIMS_ORDER_DESCENDING)
    return unsupported("DeviceTopK (order)", dtype, order);
  if (n == 0 || k == 0 || k > n || (d_out_indices && n > 4294967295u)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "DeviceTopK: n %zu, k %zu not wired (1 <= k <= n, n < 2^32 with indices)", n, k);
    g_error = buf;
    return -2.0;
  }
  cudaStream_t s = (cudaStream_t)stream;
  switch (dtype) {
    case GPUPRIMS_DTYPE_F32: return topk_t<float>(max, d_in, n, k, d_out_keys, d_out_indices, warmup, reps, s);
    case GPUPRIMS_DTYPE_U32: return topk_t<uint32_t>(max, d_in, n, k, d_out_keys, d_out_indices, warmup, reps, s);
    default: return unsupported("DeviceTopK (dtype; f32 and u32 wired)", dtype, order);
  }
#else
  (void)dtype; (void)order; (void)d_in; (void)n; (void)k; (void)d_out_keys; (void)d_out_indices; (void)warmup;
  (void)reps; (void)stream;
  char buf[160];
  std::snprintf(buf, sizeof buf, "DeviceTopK: built against CCCL %d.%d.%d (it needs 3.5.0)", CCCL_MAJOR_VERSION,
                CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
  g_error = buf;
  return -2.0;
#endif
}

}  // extern "C"
