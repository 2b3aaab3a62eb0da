// probe-slots.cu: does the floor of a launch that the host waits for by spinning on a
// mapped word depend on the stream or on the pinned slot, within one process?
//   nvcc -O2 -arch=sm_90 scripts/probes/probe-slots.cu -o probe-slots && ./probe-slots
// Prints, twice, a table of four streams by six pinned slots (four of 4 KiB, two of
// 2 MiB, each its own cudaHostAlloc): the one-block kernel that writes the slot while
// the host spins, timed by events (median of 201), with the host's own wall time to
// seeing the word and an empty pair of events beside it.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>
#include "cuda_check.h"
__global__ void write_flag(volatile unsigned *flag, unsigned v) { if (threadIdx.x == 0) *flag = v; }
static double now_us() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static unsigned seq = 0;
// events floor and host-seen wall time for one (stream, slot)
static void floor_of(cudaStream_t s, unsigned *h, unsigned *d, double *ev_med, double *wall_med, double *pair_med) {
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<double> ev(201), wl(201), pr(201);
  for (int r = -20; r < 201; ++r) {
    cudaEventRecord(e0, s);
    double a = now_us();
    write_flag<<<1, 32, 0, s>>>(d, ++seq);
    while (*(volatile unsigned *)h != seq) {}
    double b = now_us();
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 0) { ev[r] = ms * 1e3; wl[r] = b - a; }
  }
  for (int r = -20; r < 201; ++r) {
    cudaEventRecord(e0, s); cudaEventRecord(e1, s); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 0) pr[r] = ms * 1e3;
  }
  std::sort(ev.begin(), ev.end()); std::sort(wl.begin(), wl.end()); std::sort(pr.begin(), pr.end());
  *ev_med = ev[100]; *wall_med = wl[100]; *pair_med = pr[100];
  cudaEventDestroy(e0); cudaEventDestroy(e1);
}
int main() {
  CK(cudaFree(0));
  const int S = 4, P = 6;
  cudaStream_t st[S];
  for (int i = 0; i < S; ++i) CK(cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking));
  unsigned *h[P], *d[P];
  for (int j = 0; j < P; ++j) {
    size_t bytes = j < 4 ? 4096 : (2u << 20);
    CK(cudaHostAlloc(&h[j], bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    CK(cudaHostGetDevicePointer(&d[j], h[j], 0));
  }
  for (int pass = 0; pass < 2; ++pass) {
    printf("pass %d: events floor µs (wall host-seen µs) [empty event pair µs]; rows streams, cols slots\n", pass);
    for (int i = 0; i < S; ++i) {
      printf("  stream %d:", i);
      for (int j = 0; j < P; ++j) {
        double e, w, p; floor_of(st[i], h[j], d[j], &e, &w, &p);
        printf(" %5.2f (%4.2f) [%4.2f]", e, w, p);
      }
      printf("\n");
    }
  }
  return 0;
}
