// test_hpp: the C++ wrapper gpuprims.hpp on the default backend (GPUPRIMS_BACKEND may
// choose it), checked against plain loops: context, buffer<T> for several element types
// (dtype from T, move-only), reduce, reduce into a buffer, scan (in place and out of
// place), radix sort of keys and of pairs, select_kth, topk, segmented_select and segmented_topk, a life_grid, precompile,
// and failures as gpuprims::error carrying the status and the library's message.
#include <gpuprims.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace gp = gpuprims;

static int failures = 0;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    if (!(cond)) {                                           \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::printf(__VA_ARGS__);                              \
      std::printf("\n");                                     \
      ++failures;                                            \
    }                                                        \
  } while (0)

// Runs f, which must throw gpuprims::error with `status` and a message containing `text`.
template <class F>
static void expect_error(const char *what, gpuprims_status status, const char *text, F &&f) {
  try {
    f();
    CHECK(false, "%s: no exception (expected %s)", what, gpuprims_status_name(status));
  } catch (const gp::error &e) {
    CHECK(e.status() == status, "%s: status %s, expected %s (%s)", what, e.status_name(),
          gpuprims_status_name(status), e.what());
    CHECK(std::strstr(e.what(), text) != nullptr, "%s: message \"%s\" does not mention \"%s\"", what, e.what(), text);
  }
}

static_assert(gp::dtype_of<int8_t>() == GPUPRIMS_DTYPE_I8 && gp::dtype_of<uint8_t>() == GPUPRIMS_DTYPE_U8);
static_assert(gp::dtype_of<int16_t>() == GPUPRIMS_DTYPE_I16 && gp::dtype_of<uint16_t>() == GPUPRIMS_DTYPE_U16);
static_assert(gp::dtype_of<int32_t>() == GPUPRIMS_DTYPE_I32 && gp::dtype_of<uint32_t>() == GPUPRIMS_DTYPE_U32);
static_assert(gp::dtype_of<int64_t>() == GPUPRIMS_DTYPE_I64 && gp::dtype_of<uint64_t>() == GPUPRIMS_DTYPE_U64);
static_assert(gp::dtype_of<long long>() == GPUPRIMS_DTYPE_I64);
static_assert(gp::dtype_of<float>() == GPUPRIMS_DTYPE_F32 && gp::dtype_of<double>() == GPUPRIMS_DTYPE_F64);
static_assert(gp::dtype_of<bool>() == 0 && gp::dtype_of<void *>() == 0);
static_assert(gp::dtype_of<gp::f16>() == GPUPRIMS_DTYPE_F16 && gp::dtype_of<gp::bf16>() == GPUPRIMS_DTYPE_BF16);
static_assert(!std::is_copy_constructible_v<gp::buffer<int>> && std::is_nothrow_move_constructible_v<gp::buffer<int>>);
static_assert(!std::is_copy_constructible_v<gp::context> && std::is_nothrow_move_constructible_v<gp::context>);

// What SUM accumulates in: T for floats; for integers the unsigned type of T's width,
// so that the reference wraps as the library does.
template <class T, bool = std::is_floating_point_v<T>>
struct sum_type {
  using type = T;
};
template <class T>
struct sum_type<T, false> {
  using type = std::make_unsigned_t<T>;
};

// Sums, scans and sorts of random T checked against std:: on the host.
template <class T>
static void check_type(gp::context &ctx, std::mt19937_64 &rng, std::size_t n) {
  std::vector<T> data(n);
  for (auto &x : data) {
    if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(static_cast<int>(rng() % 33) - 16);  // small integers: sums are exact in any order
    } else {
      x = static_cast<T>(rng());
    }
  }
  auto buf = gp::buffer<T>::from_host(ctx, data);
  CHECK(buf.size() == n, "size %zu, expected %zu", buf.size(), n);
  gpuprims_dtype d = 0;
  CHECK(gpuprims_buffer_dtype(buf.get(), &d) == GPUPRIMS_STATUS_OK && d == gp::dtype_of<T>(), "dtype %u", (unsigned)d);
  CHECK(gpuprims_dtype_size(d) == sizeof(T), "dtype_size %zu, sizeof %zu", gpuprims_dtype_size(d), sizeof(T));

  using Acc = typename sum_type<T>::type;
  Acc want = 0;
  for (T x : data) want = static_cast<Acc>(want + static_cast<Acc>(x));
  T sum = gp::reduce(ctx, buf, gp::op::sum);
  CHECK(sum == static_cast<T>(want), "reduce sum of %zu elements of dtype %u", n, (unsigned)d);
  T mx = gp::reduce(ctx, buf, gp::op::max);
  CHECK(mx == *std::max_element(data.begin(), data.end()), "reduce max, dtype %u", (unsigned)d);
  gp::buffer<T> one(ctx, 1);
  gp::reduce(ctx, buf, gp::op::min, one);
  CHECK(one.to_host()[0] == *std::min_element(data.begin(), data.end()), "reduce min into a buffer, dtype %u",
        (unsigned)d);

  // Exclusive scan out of place, then inclusive in place.
  gp::buffer<T> out(ctx, n);
  gp::scan(ctx, buf, out, gp::op::sum, gp::scan_mode::exclusive);
  std::vector<T> got = out.to_host();
  Acc running = 0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (got[i] != static_cast<T>(running)) ++bad;
    running = static_cast<Acc>(running + static_cast<Acc>(data[i]));
  }
  CHECK(bad == 0, "exclusive scan: %zu of %zu wrong, dtype %u", bad, n, (unsigned)d);
  gp::scan(ctx, buf, buf, gp::op::max, gp::scan_mode::inclusive);
  got = buf.to_host();
  T best = data[0];
  bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    best = std::max(best, data[i]);
    if (got[i] != best) ++bad;
  }
  CHECK(bad == 0, "inclusive max scan in place: %zu of %zu wrong, dtype %u", bad, n, (unsigned)d);

  // Pairs: keys descending with their indices, stable.
  buf.write(data);
  std::vector<uint32_t> index(n);
  std::iota(index.begin(), index.end(), 0u);
  auto values = gp::buffer<uint32_t>::from_host(ctx, index);
  gp::radix_sort(ctx, buf, values, gp::order::descending);
  std::vector<uint32_t> want_index = index;
  std::stable_sort(want_index.begin(), want_index.end(), [&](uint32_t a, uint32_t b) { return data[a] > data[b]; });
  CHECK(values.to_host() == want_index, "pairs sort (descending, stable), dtype %u", (unsigned)d);
  // Keys alone, ascending.
  buf.write(data);
  gp::radix_sort(ctx, buf);
  std::vector<T> sorted = data;
  std::sort(sorted.begin(), sorted.end());
  CHECK(buf.to_host() == sorted, "keys sort ascending, dtype %u", (unsigned)d);
  // Quicksort: the same keys descending; each value still beside its key.
  buf.write(data);
  auto qvalues = gp::buffer<uint32_t>::from_host(ctx, index);
  gp::quicksort(ctx, buf, qvalues, gp::order::descending);
  std::vector<T> qkeys = buf.to_host();
  std::vector<uint32_t> qindex = qvalues.to_host();
  bad = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (qkeys[i] != sorted[n - 1 - i] || qindex[i] >= n || data[qindex[i]] != qkeys[i]) ++bad;
  std::sort(qindex.begin(), qindex.end());
  CHECK(bad == 0 && qindex == index, "quicksort pairs descending: %zu of %zu wrong, dtype %u", bad, n, (unsigned)d);
  buf.write(data);
  gp::quicksort(ctx, buf);
  CHECK(buf.to_host() == sorted, "quicksort keys ascending, dtype %u", (unsigned)d);

  // Selection: the median on the host and into a buffer; top-k both ways (k = 1..5).
  buf.write(data);
  const std::uint64_t mid = (n - 1) / 2;
  CHECK(gp::select_kth(ctx, buf, mid) == sorted[mid], "select_kth median, dtype %u", (unsigned)d);
  gp::select_kth(ctx, buf, n - 1, one);
  CHECK(one.to_host()[0] == sorted[n - 1], "select_kth into a buffer, dtype %u", (unsigned)d);
  const std::size_t k = std::min<std::size_t>(n, 5);
  gp::buffer<T> top(ctx, k);
  gp::buffer<std::uint64_t> top_index(ctx, k);
  gp::topk(ctx, buf, gp::order::ascending, top);
  CHECK(top.to_host() == std::vector<T>(sorted.begin(), sorted.begin() + k), "topk ascending, dtype %u", (unsigned)d);
  gp::topk(ctx, buf, gp::order::descending, top, top_index);
  std::vector<T> top_values = top.to_host();
  std::vector<std::uint64_t> top_at = top_index.to_host();
  for (std::size_t i = 0; i < k; ++i) {
    CHECK(top_values[i] == sorted[n - 1 - i], "topk descending value %zu, dtype %u", i, (unsigned)d);
    CHECK(data[top_at[i]] == top_values[i], "topk index %zu, dtype %u", i, (unsigned)d);
    if (i > 0 && top_values[i] == top_values[i - 1])
      CHECK(top_at[i] > top_at[i - 1], "topk ties lowest index first, dtype %u", (unsigned)d);
  }

  // Segmented select: rows [1, 1 + n/3) and [1 + n/3, n), medians and ranks 0 / last.
  if (n >= 6) {
    const std::vector<std::uint32_t> offs = {1, static_cast<std::uint32_t>(1 + n / 3), static_cast<std::uint32_t>(n)};
    auto offsets = gp::buffer<std::uint32_t>::from_host(ctx, offs);
    gp::buffer<T> row_out(ctx, 2);
    std::vector<std::vector<T>> rows(2);
    for (std::size_t r = 0; r < 2; ++r) {
      rows[r].assign(data.begin() + offs[r], data.begin() + offs[r + 1]);
      std::sort(rows[r].begin(), rows[r].end());
    }
    gp::segmented_select(ctx, buf, offsets, row_out);
    std::vector<T> medians = row_out.to_host();
    for (std::size_t r = 0; r < 2; ++r)
      CHECK(medians[r] == rows[r][(rows[r].size() - 1) / 2], "segmented_select median of row %zu, dtype %u", r, (unsigned)d);
    const std::vector<std::uint64_t> ranks = {0, rows[1].size() - 1};
    auto ks = gp::buffer<std::uint64_t>::from_host(ctx, ranks);
    gp::segmented_select(ctx, buf, offsets, ks, row_out);
    std::vector<T> picked = row_out.to_host();
    CHECK(picked[0] == rows[0][0] && picked[1] == rows[1].back(), "segmented_select ranks 0 and last, dtype %u", (unsigned)d);

    // Segmented top-k of the same rows: 2 of each ascending, ks {1, 3} descending with
    // indices, and the first 2 * (n / 2) elements as rows of 2 (a row's best, then its other).
    gp::buffer<T> top2(ctx, 4);
    gp::segmented_topk(ctx, buf, offsets, 2, gp::order::ascending, top2);
    CHECK(top2.to_host() == std::vector<T>({rows[0][0], rows[0][1], rows[1][0], rows[1][1]}), "segmented_topk k 2, dtype %u",
          (unsigned)d);
    const std::vector<std::uint32_t> per_row = {1, 3};
    auto row_ks = gp::buffer<std::uint32_t>::from_host(ctx, per_row);
    gp::buffer<std::uint64_t> best_at(ctx, 4);
    gp::segmented_topk(ctx, buf, offsets, row_ks, gp::order::descending, top2, best_at);
    const std::vector<T> ranked = top2.to_host();
    const std::vector<std::uint64_t> at = best_at.to_host();
    const std::size_t n1 = rows[1].size();
    CHECK(ranked == std::vector<T>({rows[0].back(), rows[1][n1 - 1], rows[1][n1 - 2], rows[1][n1 - 3]}),
          "segmented_topk ks {1, 3} descending, dtype %u", (unsigned)d);
    for (std::size_t i = 0; i < 4; ++i)
      CHECK(data[offs[i == 0 ? 0 : 1] + at[i]] == ranked[i], "segmented_topk index %zu, dtype %u", i, (unsigned)d);
    const std::size_t pairs = n / 2;
    gp::buffer<T> firsts(ctx, pairs), both(ctx, 2 * pairs);
    gp::buffer<std::uint64_t> firsts_at(ctx, pairs);
    auto head = gp::buffer<T>::from_host(ctx, data.data(), 2 * pairs);
    gp::segmented_topk(ctx, head, 2, 1, gp::order::ascending, firsts, firsts_at);
    gp::segmented_topk(ctx, head, 2, 2, gp::order::descending, both);
    const std::vector<T> mins = firsts.to_host(), all = both.to_host();
    const std::vector<std::uint64_t> min_at = firsts_at.to_host();
    std::size_t wrong = 0;
    for (std::size_t r = 0; r < pairs; ++r) {
      const T a = data[2 * r], b = data[2 * r + 1];
      wrong += mins[r] != std::min(a, b) || min_at[r] != (b < a ? 1u : 0u) || all[2 * r] != std::max(a, b) ||
               all[2 * r + 1] != std::min(a, b);
    }
    CHECK(wrong == 0, "segmented_topk of rows of 2: %zu of %zu rows wrong, dtype %u", wrong, pairs, (unsigned)d);
    // k past a row's length: pads of zero and UINT64_MAX.
    gp::buffer<T> padded(ctx, 3 * pairs);
    gp::buffer<std::uint64_t> padded_at(ctx, 3 * pairs);
    gp::segmented_topk(ctx, head, 2, 3, gp::order::ascending, padded, padded_at);
    CHECK(padded.to_host()[2] == T{} && padded_at.to_host()[2] == UINT64_MAX, "segmented_topk pads, dtype %u", (unsigned)d);
  }
}

// Life through gp::life_grid: a blinker on a torus, RLE in and out, rule errors.
static void check_life(gp::context &ctx) {
  gp::life_grid grid(ctx, 8, 8);
  grid.load_rle("x = 3, y = 1\n3o!\n", 2, 3);
  CHECK(grid.population() == 3, "blinker population %llu", (unsigned long long)grid.population());
  const std::vector<std::uint8_t> start = grid.read();
  grid.step(1);
  CHECK(grid.read() != start && grid.population() == 3, "blinker after one generation");
  grid.step(1);
  CHECK(grid.read() == start && grid.generation() == 2, "blinker back after two generations");
  gp::life_grid copy(ctx, 8, 8);
  copy.load_rle(grid.save_rle());
  CHECK(copy.read() == start, "save_rle then load_rle");
  expect_error("life_grid::set_rule(\"B9/S\")", GPUPRIMS_STATUS_PARSE_ERROR, "", [&] { grid.set_rule("B9/S"); });
  CHECK(grid.rule() == "B3/S23", "rule unchanged after a bad rule: %s", grid.rule().c_str());
  grid.set_rule("b36/s23");
  CHECK(grid.rule() == "B36/S23", "rule %s", grid.rule().c_str());
  expect_error("life_grid::write(short)", GPUPRIMS_STATUS_SIZE_MISMATCH, "width x height",
               [&] { grid.write(std::vector<std::uint8_t>(10)); });
}

static void check_errors(gp::context &ctx) {
  auto in = gp::buffer<int32_t>::from_host(ctx, std::vector<int32_t>{1, 2, 3, 4, 5});
  gp::buffer<int32_t> short_out(ctx, 4);
  expect_error("scan into a shorter buffer", GPUPRIMS_STATUS_SIZE_MISMATCH, "out has 4 elements",
               [&] { gp::scan(ctx, in, short_out); });
  gp::buffer<int32_t> empty(ctx, 0);
  expect_error("MIN of nothing", GPUPRIMS_STATUS_INVALID_ARGUMENT, "empty", [&] { gp::reduce(ctx, empty, gp::op::min); });
  int32_t tmp[2];
  expect_error("read past the end", GPUPRIMS_STATUS_INVALID_ARGUMENT, "past the end", [&] { in.read(tmp, 2, 4); });
  expect_error("an unknown op", GPUPRIMS_STATUS_INVALID_ARGUMENT, "op",
               [&] { gp::reduce(ctx, in, static_cast<gp::op>(77)); });
  expect_error("an unknown backend", GPUPRIMS_STATUS_INVALID_ARGUMENT, "backend",
               [&] { gp::context bad(static_cast<gp::backend>(99)); });
  expect_error("a negative device", GPUPRIMS_STATUS_INVALID_ARGUMENT, "device",
               [&] { gp::context bad(gp::backend::host, -1); });
  auto offsets = gp::buffer<std::uint64_t>::from_host(ctx, std::vector<std::uint64_t>{0, 2, 2, 5});
  gp::buffer<int32_t> row_out(ctx, 3);
  expect_error("segmented_select with an empty row", GPUPRIMS_STATUS_INVALID_ARGUMENT, "row 1:",
               [&] { gp::segmented_select(ctx, in, offsets, row_out); });

  // Moved-from handles are empty: using them throws, destroying them is harmless.
  gp::buffer<int32_t> moved = std::move(in);
  CHECK(moved.size() == 5, "moved buffer has %zu elements", moved.size());
  expect_error("a moved-from buffer", GPUPRIMS_STATUS_NULL_ARGUMENT, "in is NULL", [&] { gp::reduce(ctx, in); });
  gp::context other(gp::backend::host);
  gp::context taken = std::move(other);
  expect_error("a moved-from context", GPUPRIMS_STATUS_NULL_ARGUMENT, "ctx is NULL", [&] { other.synchronize(); });
  CHECK(taken.kind() == gp::backend::host, "moved host context reports another backend");

  // A buffer of another context.
  auto foreign = gp::buffer<int32_t>::from_host(taken, std::vector<int32_t>{1});
  expect_error("a buffer of another context", GPUPRIMS_STATUS_CONTEXT_MISMATCH, "another context",
               [&] { gp::reduce(ctx, foreign); });
  // Adopting a C handle of another dtype.
  gpuprims_buffer *raw = nullptr;
  CHECK(gpuprims_buffer_create(ctx.get(), GPUPRIMS_DTYPE_F64, 3, &raw) == GPUPRIMS_STATUS_OK, "buffer_create");
  expect_error("adopting a buffer of another dtype", GPUPRIMS_STATUS_TYPE_MISMATCH, "dtype",
               [&] { gp::buffer<float> adopted(raw); });
}

// The 16-bit floats through the wrapper: the dtype from gp::f16 / gp::bf16, SUM in f32
// rounded once, the sort's total order (-0.0 before +0.0, NaN last).
static void check_half(gp::context &ctx) {
  // 1.5 + 2.0 + 0.25 = 3.75; binary16: 0x3E00, 0x4000, 0x3400 -> 0x4380; bfloat16: 0x3FC0,
  // 0x4000, 0x3E80 -> 0x4070
  std::vector<gp::f16> h = {{0x3E00}, {0x4000}, {0x3400}};
  std::vector<gp::bf16> b = {{0x3FC0}, {0x4000}, {0x3E80}};
  auto hb = gp::buffer<gp::f16>::from_host(ctx, h);
  auto bb = gp::buffer<gp::bf16>::from_host(ctx, b);
  CHECK(hb.dtype == GPUPRIMS_DTYPE_F16 && bb.dtype == GPUPRIMS_DTYPE_BF16, "16-bit float dtypes");
  CHECK(gp::reduce(ctx, hb, gp::op::sum).bits == 0x4380, "f16 sum 0x%04x", gp::reduce(ctx, hb, gp::op::sum).bits);
  CHECK(gp::reduce(ctx, bb, gp::op::sum).bits == 0x4070, "bf16 sum 0x%04x", gp::reduce(ctx, bb, gp::op::sum).bits);
  // NaN, +0.0, -1.0, -0.0 sorted: -1.0, -0.0, +0.0, NaN
  std::vector<gp::f16> keys = {{0x7E00}, {0x0000}, {0xBC00}, {0x8000}};
  auto kb = gp::buffer<gp::f16>::from_host(ctx, keys);
  gp::radix_sort(ctx, kb);
  std::vector<gp::f16> sorted = kb.to_host();
  CHECK(sorted[0].bits == 0xBC00 && sorted[1].bits == 0x8000 && sorted[2].bits == 0x0000 && sorted[3].bits == 0x7E00,
        "f16 sort: 0x%04x 0x%04x 0x%04x 0x%04x", sorted[0].bits, sorted[1].bits, sorted[2].bits, sorted[3].bits);
}

// buffer<T>::wrap_host: the caller's memory in place on the host backend (a sort sorts
// it); UNSUPPORTED on CUDA.
static void check_wrap_host(gp::context &ctx) {
  std::vector<int32_t> mine = {5, -3, 8, 1};
  if (ctx.kind() != gp::backend::host) {
    expect_error("wrap_host on CUDA", GPUPRIMS_STATUS_UNSUPPORTED, "from_host",
                 [&] { gp::buffer<int32_t>::wrap_host(ctx, mine.data(), mine.size()); });
    return;
  }
  auto b = gp::buffer<int32_t>::wrap_host(ctx, mine.data(), mine.size());
  gp::radix_sort(ctx, b);
  CHECK(mine[0] == -3 && mine[1] == 1 && mine[2] == 5 && mine[3] == 8, "wrap_host sort: %d %d %d %d", mine[0],
        mine[1], mine[2], mine[3]);
}

int main() {
  CHECK(gp::version() == GPUPRIMS_VERSION, "library 0x%x, header 0x%x", (unsigned)gp::version(),
        (unsigned)GPUPRIMS_VERSION);
  std::string expected = std::to_string(GPUPRIMS_VERSION_MAJOR) + "." + std::to_string(GPUPRIMS_VERSION_MINOR) + "." +
                         std::to_string(GPUPRIMS_VERSION_PATCH);
  CHECK(gp::version_string() == expected, "version_string %s", gp::version_string().c_str());

  gp::context ctx = [] {
    try {
      return gp::context();
    } catch (const gp::error &e) {
      // GPUPRIMS_BACKEND=cuda without a usable device: skip, as the C tests do.
      std::printf("test_hpp: no context (%s: %s): skipped\n", e.status_name(), e.what());
      std::exit(e.status() == GPUPRIMS_STATUS_NO_DEVICE ? 77 : 1);
    }
  }();
  std::printf("test_hpp: %s backend, %s\n", ctx.kind() == gp::backend::cuda ? "cuda" : "host",
              ctx.device_name().c_str());
  ctx.precompile();  // host: nothing to do; CUDA: every kernel, so the rest compiles nothing

  std::mt19937_64 rng(12345);
  for (std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{70001}}) {
    check_type<int8_t>(ctx, rng, n);
    check_type<uint16_t>(ctx, rng, n);
    check_type<int32_t>(ctx, rng, n);
    check_type<uint64_t>(ctx, rng, n);
    check_type<float>(ctx, rng, n);
    check_type<double>(ctx, rng, n);
  }
  check_half(ctx);
  check_wrap_host(ctx);
  check_errors(ctx);
  check_life(ctx);
  ctx.synchronize();

  std::printf("test_hpp: %s (%d failures)\n", failures ? "FAIL" : "OK", failures);
  return failures ? 1 : 0;
}
