// probe-ab.cu: two builds of libgpuprims compared in one process, on the GPU machine.
//   nvcc -O2 -arch=sm_90 -Iinclude scripts/probes/probe-ab.cu -ldl -o probe-ab
//   ./probe-ab <build A>/libgpuprims.so <build B>/libgpuprims.so [rows,rows,...]
// On the lent VM the floor under a call that launches and waits (a one-block kernel
// writing a mapped word while the host spins, timed by events) moves by up to 3 µs from
// one process to the next, more than most changes to the segmented select move its
// small calls. Here both builds are loaded (dlopen, each with its own context state)
// and their gpuprims_segmented_select calls on u16 rows of 1..100 alternate on one
// stream, timed as the bench times them (events around the call, its wait included,
// median of 101), five rounds a size with the floor beside them; swap A and B in a
// second run to see that the order does not decide.
#include <gpuprims.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>
struct Lib {
  decltype(&gpuprims_context_create) create;
  decltype(&gpuprims_context_set_stream) set_stream;
  decltype(&gpuprims_buffer_from_host) from_host;
  decltype(&gpuprims_buffer_create) buf_create;
  decltype(&gpuprims_segmented_select) segsel;
  decltype(&gpuprims_last_error) last_error;
  gpuprims_context *ctx;
};
static Lib open_lib(const char *path, cudaStream_t s) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) { printf("dlopen %s: %s\n", path, dlerror()); exit(1); }
  Lib l;
  l.create = (decltype(l.create))dlsym(h, "gpuprims_context_create");
  l.set_stream = (decltype(l.set_stream))dlsym(h, "gpuprims_context_set_stream");
  l.from_host = (decltype(l.from_host))dlsym(h, "gpuprims_buffer_from_host");
  l.buf_create = (decltype(l.buf_create))dlsym(h, "gpuprims_buffer_create");
  l.segsel = (decltype(l.segsel))dlsym(h, "gpuprims_segmented_select");
  l.last_error = (decltype(l.last_error))dlsym(h, "gpuprims_last_error");
  if (l.create(GPUPRIMS_BACKEND_CUDA, 0, &l.ctx)) { printf("no ctx\n"); exit(1); }
  l.set_stream(l.ctx, s);
  return l;
}
__global__ void write_flag(volatile unsigned *flag, unsigned v) { if (threadIdx.x == 0) *flag = v; }
static uint64_t sm64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
template <class F> static double ev_median(cudaStream_t s, F body, int n = 101) {
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<double> ev(n);
  for (int r = -10; r < n; ++r) {
    cudaEventRecord(e0, s); body(); cudaEventRecord(e1, s); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 0) ev[r] = ms * 1e3;
  }
  std::sort(ev.begin(), ev.end()); cudaEventDestroy(e0); cudaEventDestroy(e1);
  return ev[n / 2];
}
int main(int argc, char **argv) {
  cudaFree(0);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  unsigned *flag_h, *flag_d; unsigned seq = 0;
  cudaHostAlloc(&flag_h, 64, cudaHostAllocMapped | cudaHostAllocPortable);
  cudaHostGetDevicePointer(&flag_d, flag_h, 0);
  Lib L[2] = {open_lib(argv[1], s), open_lib(argv[2], s)};
  if ((void *)L[0].segsel == (void *)L[1].segsel) { printf("same library loaded twice\n"); return 1; }
  std::vector<size_t> sizes = {32, 1000, 10000, 100000, 1000000};
  if (argc > 3) {
    sizes.clear();
    for (char *p = argv[3]; *p;) {
      sizes.push_back(strtoull(p, &p, 10));
      if (*p == ',') ++p;
    }
  }
  printf("floor, then per size A B (µs, events median of 101), cycles:\n");
  for (size_t nrows : sizes) {
    uint64_t st = 7;
    std::vector<uint32_t> off(nrows + 1);
    for (size_t i = 0; i < nrows; i++) off[i + 1] = off[i] + 1 + sm64(&st) % 100;
    std::vector<uint16_t> v(off[nrows]);
    for (auto &x : v) x = (uint16_t)sm64(&st);
    gpuprims_buffer *bv[2], *bo[2], *bout[2];
    for (int k = 0; k < 2; ++k) {
      L[k].from_host(L[k].ctx, GPUPRIMS_DTYPE_U16, v.data(), v.size(), &bv[k]);
      L[k].from_host(L[k].ctx, GPUPRIMS_DTYPE_U32, off.data(), nrows + 1, &bo[k]);
      L[k].buf_create(L[k].ctx, GPUPRIMS_DTYPE_U16, nrows, &bout[k]);
      if (L[k].segsel(L[k].ctx, bv[k], bo[k], NULL, bout[k])) { char b[256]; L[k].last_error(b, 256); printf("fail: %s\n", b); return 1; }
    }
    double sa = 0, sb = 0;
    printf("%6zu rows:", nrows);
    for (int c = 0; c < 5; ++c) {
      double f = ev_median(s, [&] { write_flag<<<1, 32, 0, s>>>(flag_d, ++seq); while (*(volatile unsigned *)flag_h != seq) {} });
      double a = ev_median(s, [&] { L[0].segsel(L[0].ctx, bv[0], bo[0], NULL, bout[0]); });
      double b = ev_median(s, [&] { L[1].segsel(L[1].ctx, bv[1], bo[1], NULL, bout[1]); });
      sa += a; sb += b;
      printf("  [%.1f] %.1f %.1f", f, a, b);
    }
    printf("  | mean A %.2f B %.2f\n", sa / 5, sb / 5);
  }
  return 0;
}
