// sort.cpp: the C++17 wrapper (gpuprims.hpp): sort names by score, highest first.
//
// Handles are RAII objects, the dtype comes from the element type, and a failed
// call throws gpuprims::error carrying the status and the library's message.
// Prints "carol 91, alice 88, erin 88, bob 75, dave 62".
#include <gpuprims.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gp = gpuprims;

int main() {
  const std::vector<std::string> names = {"alice", "bob", "carol", "dave", "erin"};
  const std::vector<std::int32_t> scores = {88, 75, 91, 62, 88};
  std::vector<std::uint32_t> index(names.size());
  for (std::size_t i = 0; i < index.size(); i++) index[i] = static_cast<std::uint32_t>(i);
  try {
    gp::context ctx;  // GPUPRIMS_BACKEND_AUTO: the GPU when there is one, else the host
    auto keys = gp::buffer<std::int32_t>::from_host(ctx, scores);
    auto values = gp::buffer<std::uint32_t>::from_host(ctx, index);
    // Stable: alice and erin (88 both) keep their input order. gp::quicksort takes
    // the same arguments and gives the same keys, but may swap equal keys' values.
    gp::radix_sort(ctx, keys, values, gp::order::descending);
    const std::vector<std::int32_t> sorted = keys.to_host();  // waits for the sort
    const std::vector<std::uint32_t> who = values.to_host();
    for (std::size_t i = 0; i < who.size(); i++)
      std::printf("%s%s %d", i ? ", " : "", names[who[i]].c_str(), sorted[i]);
    std::printf("\n");
  } catch (const gp::error &e) {
    std::fprintf(stderr, "gpuprims: %s: %s\n", e.status_name(), e.what());
    return 1;
  }
  return 0;
}
