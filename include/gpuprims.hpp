/*
 * gpuprims.hpp: a C++17 header-only wrapper over gpuprims.h.
 *
 *   namespace gp = gpuprims;
 *   gp::context ctx;                                         // AUTO: the GPU, else the host
 *   auto buf = gp::buffer<float>::from_host(ctx, values);    // dtype from the element type
 *   float total = gp::reduce(ctx, buf, gp::op::sum);
 *   gp::scan(ctx, buf, buf, gp::op::sum, gp::scan_mode::exclusive);   // in place
 *   gp::radix_sort(ctx, keys, values, gp::order::descending);
 *   float median = gp::select_kth(ctx, buf, (buf.size() - 1) / 2);
 *   gp::topk(ctx, buf, gp::order::descending, top, top_index);    // k = top.size()
 *   gp::segmented_topk(ctx, table, row_len, 3, gp::order::descending, best);   // 3 per row
 *   gp::life_grid grid(ctx, 256, 256);  grid.load_rle(text);  grid.step(100);
 *
 * Handles are RAII and move-only (a moved-from handle is empty; using it throws). Every
 * failed call throws gpuprims::error, which carries the gpuprims_status and the library's
 * message. The semantics are the C functions' (see gpuprims.h); nothing is added here.
 */
#ifndef GPUPRIMS_HPP
#define GPUPRIMS_HPP

/* C++17 or newer (MSVC reports the standard in _MSVC_LANG, not __cplusplus). */
#if defined(_MSVC_LANG)
#if _MSVC_LANG < 201703L
#error "gpuprims.hpp needs C++17 (/std:c++17); the C header gpuprims.h works from any C++"
#endif
#elif __cplusplus < 201703L
#error "gpuprims.hpp needs C++17 (-std=c++17); the C header gpuprims.h works from any C++"
#endif

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#if defined(__has_include)
#if __has_include(<stdfloat>) && __cplusplus > 202002L
#include <stdfloat>
#endif
#endif
#include <utility>
#include <vector>

#include "gpuprims.h"

namespace gpuprims {

/* A failed call: status() is the gpuprims_status, what() the message of
 * gpuprims_last_error() ("gpuprims_scan: out has 4 elements, in has 5"). */
class error : public std::runtime_error {
 public:
  error(gpuprims_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  gpuprims_status status() const noexcept { return status_; }
  const char *status_name() const noexcept { return gpuprims_status_name(status_); }

 private:
  gpuprims_status status_;
};

namespace detail {

inline std::string last_error() {
  std::vector<char> text(gpuprims_last_error(nullptr, 0) + 1, '\0');
  gpuprims_last_error(text.data(), text.size());
  return std::string(text.data());
}

/* Throws for any status but OK; the message is read right away, on this thread. */
inline void check(gpuprims_status status) {
  if (status != GPUPRIMS_STATUS_OK) throw error(status, last_error());
}

}  // namespace detail

enum class backend : gpuprims_backend {
  automatic = GPUPRIMS_BACKEND_AUTO,
  cuda = GPUPRIMS_BACKEND_CUDA,
  host = GPUPRIMS_BACKEND_HOST,
};
enum class op : gpuprims_op { sum = GPUPRIMS_OP_SUM, min = GPUPRIMS_OP_MIN, max = GPUPRIMS_OP_MAX };
enum class scan_mode : gpuprims_scan_mode {
  inclusive = GPUPRIMS_SCAN_INCLUSIVE,
  exclusive = GPUPRIMS_SCAN_EXCLUSIVE,
};
enum class order : gpuprims_order { ascending = GPUPRIMS_ORDER_ASCENDING, descending = GPUPRIMS_ORDER_DESCENDING };

/* The 16-bit floats as their bits, for programs without a 16-bit float type of their own:
 * IEEE binary16 (GPUPRIMS_DTYPE_F16) and bfloat16 (GPUPRIMS_DTYPE_BF16). C++23's
 * std::float16_t / std::bfloat16_t and CUDA's __half / __nv_bfloat16 (cuda_fp16.h /
 * cuda_bf16.h included before this header) map to the same dtypes. */
struct f16 {
  std::uint16_t bits;
};
struct bf16 {
  std::uint16_t bits;
};

/* The dtype of element type T: integers by width and signedness (int64_t and long long
 * alike), float and double, the 16-bit floats above; 0 for any other type. */
template <class T>
constexpr gpuprims_dtype dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, f16>) {
    return GPUPRIMS_DTYPE_F16;
  } else if constexpr (std::is_same_v<U, bf16>) {
    return GPUPRIMS_DTYPE_BF16;
#if defined(__STDCPP_FLOAT16_T__)
  } else if constexpr (std::is_same_v<U, std::float16_t>) {
    return GPUPRIMS_DTYPE_F16;
#endif
#if defined(__STDCPP_BFLOAT16_T__)
  } else if constexpr (std::is_same_v<U, std::bfloat16_t>) {
    return GPUPRIMS_DTYPE_BF16;
#endif
#if defined(__CUDA_FP16_H__)
  } else if constexpr (std::is_same_v<U, __half>) {
    return GPUPRIMS_DTYPE_F16;
#endif
#if defined(__CUDA_BF16_H__)
  } else if constexpr (std::is_same_v<U, __nv_bfloat16>) {
    return GPUPRIMS_DTYPE_BF16;
#endif
  } else if constexpr (std::is_same_v<U, float>) {
    return std::numeric_limits<float>::is_iec559 && sizeof(float) == 4 ? GPUPRIMS_DTYPE_F32 : 0;
  } else if constexpr (std::is_same_v<U, double>) {
    return std::numeric_limits<double>::is_iec559 && sizeof(double) == 8 ? GPUPRIMS_DTYPE_F64 : 0;
  } else if constexpr (std::is_integral_v<U> && !std::is_same_v<U, bool>) {
    constexpr bool s = std::is_signed_v<U>;
    switch (sizeof(U)) {
      case 1: return s ? GPUPRIMS_DTYPE_I8 : GPUPRIMS_DTYPE_U8;
      case 2: return s ? GPUPRIMS_DTYPE_I16 : GPUPRIMS_DTYPE_U16;
      case 4: return s ? GPUPRIMS_DTYPE_I32 : GPUPRIMS_DTYPE_U32;
      case 8: return s ? GPUPRIMS_DTYPE_I64 : GPUPRIMS_DTYPE_U64;
      default: return 0;
    }
  } else {
    return 0;
  }
}

/* The library loaded, as (major << 16) | (minor << 8) | patch, and as "0.1.0". */
inline std::uint32_t version() noexcept { return gpuprims_version(); }
inline std::string version_string() {
  const std::uint32_t v = gpuprims_version();
  return std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." + std::to_string(v & 0xff);
}

/* A context: one backend and device (gpuprims_context). */
class context {
 public:
  explicit context(backend kind = backend::automatic, std::int32_t device = 0) {
    detail::check(gpuprims_context_create(static_cast<gpuprims_backend>(kind), device, &ctx_));
  }
  /* Takes ownership of a handle from the C API. */
  explicit context(gpuprims_context *owned) noexcept : ctx_(owned) {}
  ~context() { gpuprims_context_destroy(ctx_); }
  context(context &&other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}
  context &operator=(context &&other) noexcept {
    if (this != &other) {
      gpuprims_context_destroy(ctx_);
      ctx_ = std::exchange(other.ctx_, nullptr);
    }
    return *this;
  }
  context(const context &) = delete;
  context &operator=(const context &) = delete;

  gpuprims_context *get() const noexcept { return ctx_; }
  gpuprims_context *release() noexcept { return std::exchange(ctx_, nullptr); }

  /* CUDA or host, never automatic. */
  backend kind() const {
    gpuprims_backend b = 0;
    detail::check(gpuprims_context_backend(ctx_, &b));
    return static_cast<backend>(b);
  }
  std::string device_name() const {
    std::size_t needed = 0;
    detail::check(gpuprims_context_device_name(ctx_, nullptr, 0, &needed));
    std::vector<char> text(needed + 1, '\0');
    detail::check(gpuprims_context_device_name(ctx_, text.data(), text.size(), &needed));
    return std::string(text.data());
  }
  /* A CUstream / cudaStream_t, or nullptr for the context's own stream. */
  void set_stream(void *cuda_stream) { detail::check(gpuprims_context_set_stream(ctx_, cuda_stream)); }
  void synchronize() { detail::check(gpuprims_context_synchronize(ctx_)); }
  /* Compiles every kernel now rather than on first use (see gpuprims.h). */
  void precompile() { detail::check(gpuprims_context_precompile(ctx_)); }

 private:
  gpuprims_context *ctx_ = nullptr;
};

/* A typed array in a context's memory (gpuprims_buffer); T gives the dtype. */
template <class T>
class buffer {
  static_assert(dtype_of<T>() != 0,
                "gpuprims::buffer<T>: T must be an integer of 8 to 64 bits, float, double, gpuprims::f16 or gpuprims::bf16");

 public:
  using value_type = T;
  static constexpr gpuprims_dtype dtype = dtype_of<T>();

  /* An empty handle (no buffer). */
  buffer() noexcept = default;
  /* len elements, contents unspecified. */
  buffer(context &ctx, std::size_t len) { detail::check(gpuprims_buffer_create(ctx.get(), dtype, len, &buf_)); }
  /* Takes ownership of a handle from the C API; its dtype must be T's. */
  explicit buffer(gpuprims_buffer *owned) : buf_(owned) {
    gpuprims_dtype actual = 0;
    detail::check(gpuprims_buffer_dtype(buf_, &actual));
    if (actual != dtype) {
      gpuprims_buffer_destroy(std::exchange(buf_, nullptr));
      throw error(GPUPRIMS_STATUS_TYPE_MISMATCH, "gpuprims::buffer<T>: the handle's dtype is not T's");
    }
  }
  static buffer from_host(context &ctx, const T *src, std::size_t len) {
    gpuprims_buffer *b = nullptr;
    detail::check(gpuprims_buffer_from_host(ctx.get(), dtype, src, len, &b));
    return buffer(b, adopt{});
  }
  static buffer from_host(context &ctx, const std::vector<T> &src) { return from_host(ctx, src.data(), src.size()); }
  /* Borrowed device memory of the context's device (CUDA); never freed by gpuprims. */
  static buffer wrap_device(context &ctx, T *device_ptr, std::size_t len) {
    gpuprims_buffer *b = nullptr;
    detail::check(gpuprims_buffer_wrap_device(ctx.get(), dtype, device_ptr, len, &b));
    return buffer(b, adopt{});
  }
  /* Borrowed host memory (host backend), used in place; never freed by gpuprims. The CUDA
   * backend throws UNSUPPORTED: copy in with from_host there. */
  static buffer wrap_host(context &ctx, T *host_ptr, std::size_t len) {
    gpuprims_buffer *b = nullptr;
    detail::check(gpuprims_buffer_wrap_host(ctx.get(), dtype, host_ptr, len, &b));
    return buffer(b, adopt{});
  }

  ~buffer() { gpuprims_buffer_destroy(buf_); }
  buffer(buffer &&other) noexcept : buf_(std::exchange(other.buf_, nullptr)) {}
  buffer &operator=(buffer &&other) noexcept {
    if (this != &other) {
      gpuprims_buffer_destroy(buf_);
      buf_ = std::exchange(other.buf_, nullptr);
    }
    return *this;
  }
  buffer(const buffer &) = delete;
  buffer &operator=(const buffer &) = delete;

  gpuprims_buffer *get() const noexcept { return buf_; }
  gpuprims_buffer *release() noexcept { return std::exchange(buf_, nullptr); }

  std::size_t size() const {
    std::size_t n = 0;
    detail::check(gpuprims_buffer_len(buf_, &n));
    return n;
  }
  /* The device address (CUDA); the host backend throws UNSUPPORTED. */
  T *device_ptr() const {
    void *p = nullptr;
    detail::check(gpuprims_buffer_device_ptr(buf_, &p));
    return static_cast<T *>(p);
  }
  /* count elements from host memory into the buffer at element offset. */
  void write(const T *src, std::size_t count, std::size_t offset = 0) {
    detail::check(gpuprims_buffer_write(buf_, offset, src, count));
  }
  void write(const std::vector<T> &src, std::size_t offset = 0) { write(src.data(), src.size(), offset); }
  /* count elements from element offset into host memory (waits for earlier work). */
  void read(T *dst, std::size_t count, std::size_t offset = 0) const {
    detail::check(gpuprims_buffer_read(buf_, offset, dst, count));
  }
  std::vector<T> to_host() const {
    std::vector<T> out(size());
    read(out.data(), out.size());
    return out;
  }
  /* All of src into this buffer (same length). */
  void copy_from(const buffer &src) { detail::check(gpuprims_buffer_copy(buf_, src.buf_)); }

 private:
  struct adopt {};
  buffer(gpuprims_buffer *owned, adopt) noexcept : buf_(owned) {}
  gpuprims_buffer *buf_ = nullptr;
};

/* The reduction of all of in, handed to host memory (waits). */
template <class T>
T reduce(context &ctx, const buffer<T> &in, op o = op::sum) {
  T out{};
  detail::check(gpuprims_reduce(ctx.get(), in.get(), static_cast<gpuprims_op>(o), &out));
  return out;
}

/* The reduction into out (one element), in stream order without waiting. */
template <class T>
void reduce(context &ctx, const buffer<T> &in, op o, buffer<T> &out) {
  detail::check(gpuprims_reduce_to_buffer(ctx.get(), in.get(), static_cast<gpuprims_op>(o), out.get()));
}

/* Prefix scan of in into out (same length; out may be in). */
template <class T>
void scan(context &ctx, const buffer<T> &in, buffer<T> &out, op o = op::sum, scan_mode mode = scan_mode::inclusive) {
  detail::check(gpuprims_scan(ctx.get(), in.get(), out.get(), static_cast<gpuprims_op>(o),
                              static_cast<gpuprims_scan_mode>(mode)));
}

/* Stable radix sort of keys in place. */
template <class K>
void radix_sort(context &ctx, buffer<K> &keys, order ord = order::ascending) {
  detail::check(gpuprims_radix_sort(ctx.get(), keys.get(), nullptr, static_cast<gpuprims_order>(ord)));
}

/* Stable radix sort of keys in place, values moved with their keys. */
template <class K, class V>
void radix_sort(context &ctx, buffer<K> &keys, buffer<V> &values, order ord = order::ascending) {
  detail::check(gpuprims_radix_sort(ctx.get(), keys.get(), values.get(), static_cast<gpuprims_order>(ord)));
}

/* Quicksort of keys in place (the radix sort's key sequence; not stable). */
template <class K>
void quicksort(context &ctx, buffer<K> &keys, order ord = order::ascending) {
  detail::check(gpuprims_quicksort(ctx.get(), keys.get(), nullptr, static_cast<gpuprims_order>(ord)));
}

/* Quicksort of keys in place, values moved with their keys (equal keys' values in any order). */
template <class K, class V>
void quicksort(context &ctx, buffer<K> &keys, buffer<V> &values, order ord = order::ascending) {
  detail::check(gpuprims_quicksort(ctx.get(), keys.get(), values.get(), static_cast<gpuprims_order>(ord)));
}

/* The element of rank k (0-based, ascending) of in, handed to host memory (waits). */
template <class T>
T select_kth(context &ctx, const buffer<T> &in, std::uint64_t k) {
  T out{};
  detail::check(gpuprims_select_kth(ctx.get(), in.get(), k, &out));
  return out;
}

/* The element of rank k into out (one element), in stream order without waiting. */
template <class T>
void select_kth(context &ctx, const buffer<T> &in, std::uint64_t k, buffer<T> &out) {
  detail::check(gpuprims_select_kth_to_buffer(ctx.get(), in.get(), k, out.get()));
}

/* The values.size() smallest (ascending) or largest (descending) elements of in, in that
 * order, ties lowest index first. */
template <class T>
void topk(context &ctx, const buffer<T> &in, order ord, buffer<T> &values) {
  detail::check(gpuprims_topk(ctx.get(), in.get(), values.size(), static_cast<gpuprims_order>(ord), values.get(), nullptr));
}

/* As above, with each value's index in `in`. */
template <class T>
void topk(context &ctx, const buffer<T> &in, order ord, buffer<T> &values, buffer<std::uint64_t> &indices) {
  detail::check(
      gpuprims_topk(ctx.get(), in.get(), values.size(), static_cast<gpuprims_order>(ord), values.get(), indices.get()));
}

/* For each row r of values, [offsets[r], offsets[r + 1]), its lower median into out[r]
 * (out holds offsets.size() - 1 elements). O is std::uint32_t or std::uint64_t. */
template <class T, class O>
void segmented_select(context &ctx, const buffer<T> &values, const buffer<O> &offsets, buffer<T> &out) {
  detail::check(gpuprims_segmented_select(ctx.get(), values.get(), offsets.get(), nullptr, out.get()));
}

/* As above, the element of rank ks[r] (0-based, ascending) of each row. K is
 * std::uint32_t or std::uint64_t. */
template <class T, class O, class K>
void segmented_select(context &ctx, const buffer<T> &values, const buffer<O> &offsets, const buffer<K> &ks,
                      buffer<T> &out) {
  detail::check(gpuprims_segmented_select(ctx.get(), values.get(), offsets.get(), ks.get(), out.get()));
}

/* Segmented top-k (gpuprims_segmented_topk): the k best of every row, each row's sorted
 * (smallest first for ascending, largest first for descending; ties lowest index first),
 * row after row in out_values, with each one's index within its row in out_indices. A
 * row shorter than its k is padded with zero bits and index UINT64_MAX. */

/* Uniform rows: values as a 2-D array of rows of row_len elements; out_values holds
 * rows * k elements. */
template <class T>
void segmented_topk(context &ctx, const buffer<T> &values, std::uint64_t row_len, std::uint64_t k, order ord,
                    buffer<T> &out_values) {
  detail::check(gpuprims_segmented_topk(ctx.get(), values.get(), nullptr, row_len, k, nullptr,
                                        static_cast<gpuprims_order>(ord), out_values.get(), nullptr));
}

template <class T>
void segmented_topk(context &ctx, const buffer<T> &values, std::uint64_t row_len, std::uint64_t k, order ord,
                    buffer<T> &out_values, buffer<std::uint64_t> &out_indices) {
  detail::check(gpuprims_segmented_topk(ctx.get(), values.get(), nullptr, row_len, k, nullptr,
                                        static_cast<gpuprims_order>(ord), out_values.get(), out_indices.get()));
}

/* Ragged rows [offsets[r], offsets[r + 1]) (O: std::uint32_t or std::uint64_t), the same
 * k for each; out_values holds (offsets.size() - 1) * k elements. */
template <class T, class O>
void segmented_topk(context &ctx, const buffer<T> &values, const buffer<O> &offsets, std::uint64_t k, order ord,
                    buffer<T> &out_values) {
  detail::check(gpuprims_segmented_topk(ctx.get(), values.get(), offsets.get(), 0, k, nullptr,
                                        static_cast<gpuprims_order>(ord), out_values.get(), nullptr));
}

template <class T, class O>
void segmented_topk(context &ctx, const buffer<T> &values, const buffer<O> &offsets, std::uint64_t k, order ord,
                    buffer<T> &out_values, buffer<std::uint64_t> &out_indices) {
  detail::check(gpuprims_segmented_topk(ctx.get(), values.get(), offsets.get(), 0, k, nullptr,
                                        static_cast<gpuprims_order>(ord), out_values.get(), out_indices.get()));
}

/* Ragged rows, ks[r] results for row r (K: std::uint32_t or std::uint64_t); out_values
 * holds the sum of the ks. */
template <class T, class O, class K>
void segmented_topk(context &ctx, const buffer<T> &values, const buffer<O> &offsets, const buffer<K> &ks, order ord,
                    buffer<T> &out_values) {
  detail::check(gpuprims_segmented_topk(ctx.get(), values.get(), offsets.get(), 0, 0, ks.get(),
                                        static_cast<gpuprims_order>(ord), out_values.get(), nullptr));
}

template <class T, class O, class K>
void segmented_topk(context &ctx, const buffer<T> &values, const buffer<O> &offsets, const buffer<K> &ks, order ord,
                    buffer<T> &out_values, buffer<std::uint64_t> &out_indices) {
  detail::check(gpuprims_segmented_topk(ctx.get(), values.get(), offsets.get(), 0, 0, ks.get(),
                                        static_cast<gpuprims_order>(ord), out_values.get(), out_indices.get()));
}

enum class boundary : gpuprims_life_boundary { torus = GPUPRIMS_LIFE_TORUS, dead = GPUPRIMS_LIFE_DEAD };

/* A Game of Life grid (gpuprims_life_grid): bit-packed cells on the context's backend. */
class life_grid {
 public:
  life_grid(context &ctx, std::uint64_t width, std::uint64_t height, boundary b = boundary::torus)
      : width_(width), height_(height) {
    detail::check(gpuprims_life_create(ctx.get(), width, height, static_cast<gpuprims_life_boundary>(b), &grid_));
  }
  ~life_grid() { gpuprims_life_destroy(grid_); }
  life_grid(life_grid &&other) noexcept
      : grid_(std::exchange(other.grid_, nullptr)), width_(other.width_), height_(other.height_) {}
  life_grid &operator=(life_grid &&other) noexcept {
    if (this != &other) {
      gpuprims_life_destroy(grid_);
      grid_ = std::exchange(other.grid_, nullptr);
      width_ = other.width_;
      height_ = other.height_;
    }
    return *this;
  }
  life_grid(const life_grid &) = delete;
  life_grid &operator=(const life_grid &) = delete;

  gpuprims_life_grid *get() const noexcept { return grid_; }
  std::uint64_t width() const noexcept { return width_; }
  std::uint64_t height() const noexcept { return height_; }

  /* "B3/S23", "B36/S23", "23/3", ...; a bad rule throws PARSE_ERROR and changes nothing. */
  void set_rule(const std::string &rule) { detail::check(gpuprims_life_set_rule(grid_, rule.c_str())); }
  std::string rule() const {
    std::size_t needed = 0;
    detail::check(gpuprims_life_get_rule(grid_, nullptr, 0, &needed));
    std::vector<char> text(needed + 1, '\0');
    detail::check(gpuprims_life_get_rule(grid_, text.data(), text.size(), &needed));
    return std::string(text.data());
  }
  /* width x height bytes, row-major, nonzero alive. */
  void write(const std::vector<std::uint8_t> &cells) {
    if (cells.size() != width_ * height_)
      throw error(GPUPRIMS_STATUS_SIZE_MISMATCH, "gpuprims::life_grid::write: cells must hold width x height bytes");
    detail::check(gpuprims_life_write_cells(grid_, cells.data()));
  }
  /* width x height bytes, 1 alive, 0 dead (waits for earlier steps). */
  std::vector<std::uint8_t> read() const {
    std::vector<std::uint8_t> cells(static_cast<std::size_t>(width_ * height_));
    detail::check(gpuprims_life_read_cells(grid_, cells.data()));
    return cells;
  }
  /* Stamps an RLE pattern with its top-left at (x, y). */
  void load_rle(const std::string &rle, std::uint64_t x = 0, std::uint64_t y = 0) {
    detail::check(gpuprims_life_load_rle(grid_, rle.c_str(), x, y));
  }
  std::string save_rle() const {
    std::size_t needed = 0;
    detail::check(gpuprims_life_save_rle(grid_, nullptr, 0, &needed));
    std::vector<char> text(needed + 1, '\0');
    detail::check(gpuprims_life_save_rle(grid_, text.data(), text.size(), &needed));
    return std::string(text.data());
  }
  void step(std::uint64_t generations = 1) { detail::check(gpuprims_life_step(grid_, generations)); }
  std::uint64_t population() const {
    std::uint64_t n = 0;
    detail::check(gpuprims_life_population(grid_, &n));
    return n;
  }
  std::uint64_t generation() const {
    std::uint64_t n = 0;
    detail::check(gpuprims_life_generation(grid_, &n));
    return n;
  }

 private:
  gpuprims_life_grid *grid_ = nullptr;
  std::uint64_t width_ = 0, height_ = 0;
};

}  // namespace gpuprims

#endif /* GPUPRIMS_HPP */
