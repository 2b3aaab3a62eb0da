// topk.cpp: the C++17 wrapper (gpuprims.hpp): the k smallest distances and the
// median of a million numbers, without sorting them.
//
// topk's k is the size of the output buffers; equal values come lowest index
// first, so the result is the same on every run and device. Prints
// "3 nearest: 0.5 at [123456], 1 at [7], 2 at [999999]" and "median 500007".
#include <gpuprims.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace gp = gpuprims;

int main() {
  // A million different distances of 10 and more, and three planted small ones.
  std::vector<float> dist(1000000);
  for (std::size_t i = 0; i < dist.size(); i++) dist[i] = static_cast<float>(10 + (i * 7919) % 1000000);
  dist[123456] = 0.5f;
  dist[7] = 1.0f;
  dist[999999] = 2.0f;
  try {
    gp::context ctx;
    auto in = gp::buffer<float>::from_host(ctx, dist);
    gp::buffer<float> nearest(ctx, 3);              // k = 3
    gp::buffer<std::uint64_t> where(ctx, 3);
    gp::topk(ctx, in, gp::order::ascending, nearest, where);
    const std::vector<float> d = nearest.to_host();
    const std::vector<std::uint64_t> at = where.to_host();
    std::printf("3 nearest: %g at [%llu], %g at [%llu], %g at [%llu]\n", d[0], (unsigned long long)at[0], d[1],
                (unsigned long long)at[1], d[2], (unsigned long long)at[2]);
    // select_kth hands one value to host memory (and waits for it).
    std::printf("median %g\n", gp::select_kth(ctx, in, (in.size() - 1) / 2));
  } catch (const gp::error &e) {
    std::fprintf(stderr, "gpuprims: %s: %s\n", e.status_name(), e.what());
    return 1;
  }
  return 0;
}
