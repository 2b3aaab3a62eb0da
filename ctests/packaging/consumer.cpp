// consumer.cpp: the C++ consumer of an installed gpuprims, through gpuprims.hpp: an
// inclusive scan and a sort of a small vector on the default backend, checked.
#include <gpuprims.hpp>

#include <cstdio>
#include <vector>

int main() {
  try {
    gpuprims::context ctx;
    std::vector<int64_t> values = {5, -3, 8, 0, 2};
    auto buf = gpuprims::buffer<int64_t>::from_host(ctx, values);
    gpuprims::scan(ctx, buf, buf, gpuprims::op::sum, gpuprims::scan_mode::inclusive);
    std::vector<int64_t> prefix = buf.to_host();  // 5 2 10 10 12
    gpuprims::radix_sort(ctx, buf);
    std::vector<int64_t> sorted = buf.to_host();  // 2 5 10 10 12
    const std::vector<int64_t> want_prefix = {5, 2, 10, 10, 12}, want_sorted = {2, 5, 10, 10, 12};
    if (prefix != want_prefix || sorted != want_sorted) {
      std::fprintf(stderr, "consumer_cxx: wrong scan or sort result\n");
      return 1;
    }
    std::printf("consumer_cxx: gpuprims %s on %s: scan and sort OK\n", gpuprims::version_string().c_str(),
                ctx.device_name().c_str());
    return 0;
  } catch (const gpuprims::error &e) {
    std::fprintf(stderr, "consumer_cxx: %s (%s)\n", e.what(), gpuprims_status_name(e.status()));
    return 1;
  }
}
