// probe-floor.cu: the floor under a call that launches and waits, on the GPU machine.
//   nvcc -O2 -arch=sm_90 -Iinclude scripts/probes/probe-floor.cu -L<lib> -lgpuprims -o probe-floor
//   ./probe-floor [spin | rows N | timeline]
// Prints medians (wall clock around each call, 501 calls after a warm-up; rows marked
// "events" timed as the bench does) of bare CUDA launches that wait in several ways,
// beside gpuprims_reduce of one element and gpuprims_segmented_select of u16 rows of
// 1..100, so the distance between what the driver allows and what a call of ours costs
// can be read off. With "spin" the device is set to spin while it waits
// (cudaDeviceScheduleSpin) before anything else runs; "rows N" makes a few calls of N
// rows only (for ncu); "timeline" reads a scratch build's stamps (see timeline()).
#include <gpuprims.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <algorithm>
#include <vector>

#include "cuda_check.h"

static double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

__global__ void empty() {}
__global__ void write_flag(volatile unsigned *flag, unsigned v) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *flag = v;
}
// Eight words, a system fence, then the flag (as a report is published).
__global__ void write_fenced(volatile unsigned *flag, unsigned v) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    for (int i = 1; i < 9; ++i) flag[i] = v + i;
    __threadfence_system();
    *flag = v;
  }
}
// The last block to arrive writes the flag (a ticket, as segsel_short ends).
__global__ void ticket_flag(unsigned *ticket, volatile unsigned *flag, unsigned v) {
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    *ticket = 0;
    *flag = v;
  }
}
// Every block waits for every other (all resident), then block 0 writes the flag.
__global__ void barrier_flag(unsigned long long *arrived, unsigned long long target, volatile unsigned *flag,
                             unsigned v) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(arrived, 1ull);
    for (;;) {
      unsigned long long seen;
      asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(arrived) : "memory");
      if (seen >= target) break;
      __nanosleep(32);
    }
  }
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0) *flag = v;
}

static std::vector<double> t(501);
static double median() {
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
template <class F>
static void measure(const char *label, F body) {
  for (int r = 0; r < 50; ++r) body();
  for (size_t r = 0; r < t.size(); ++r) {
    double a = now_us();
    body();
    t[r] = now_us() - a;
  }
  double m = median();
  printf("%-58s median %6.1f us  p10 %6.1f  p90 %6.1f\n", label, m, t[t.size() / 10], t[t.size() * 9 / 10]);
}

// As the bench times a call: CUDA events on the stream around it (the end event's
// time is the later of the call's return and the end of what it launched).
template <class F>
static void measure_events(const char *label, cudaStream_t s, F body) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<double> ev(201);
  for (int r = -20; r < (int)ev.size(); ++r) {
    cudaEventRecord(e0, s);
    body();
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (r >= 0) ev[r] = ms * 1e3;
  }
  std::sort(ev.begin(), ev.end());
  printf("%-58s median %6.1f us  p10 %6.1f  p90 %6.1f (events)\n", label, ev[100], ev[20], ev[180]);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

static uint64_t sm64(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void bare_floors(cudaStream_t s) {
  unsigned *flag_h, *flag_d, *ticket;
  unsigned long long *arrived;
  CK(cudaHostAlloc(&flag_h, 64, cudaHostAllocMapped | cudaHostAllocPortable));
  CK(cudaHostGetDevicePointer(&flag_d, flag_h, 0));
  CK(cudaMalloc(&ticket, 4));
  CK(cudaMemset(ticket, 0, 4));
  CK(cudaMalloc(&arrived, 8));
  CK(cudaMemset(arrived, 0, 8));
  unsigned seq = 0;
  unsigned long long arrivals = 0;

  measure("empty 1x32, stream sync", [&] { empty<<<1, 32, 0, s>>>(); cudaStreamSynchronize(s); });
  {
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(32);
    cfg.stream = s;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    measure("empty 1x32 programmatic (LaunchKernelEx), stream sync", [&] { cudaLaunchKernelEx(&cfg, empty); cudaStreamSynchronize(s); });
  }
  measure("write mapped 1x32, stream sync", [&] { write_flag<<<1, 32, 0, s>>>(flag_d, ++seq); cudaStreamSynchronize(s); });
  measure("write mapped 1x32, host spins on the flag", [&] {
    write_flag<<<1, 32, 0, s>>>(flag_d, ++seq);
    while (*(volatile unsigned *)flag_h != seq) {}
  });
  typedef CUresult (*WriteValue)(CUstream, CUdeviceptr, cuuint32_t, unsigned);
  WriteValue write_value = nullptr;
  cudaDriverEntryPointQueryResult found;
  CK(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", (void **)&write_value, 12000, cudaEnableDefault, &found));
  measure("8 words, system fence, flag 1x32, host spins on the flag", [&] {
    write_fenced<<<1, 32, 0, s>>>(flag_d, ++seq);
    while (*(volatile unsigned *)flag_h != seq) {}
  });
  measure("empty 1x32, cuStreamWriteValue32, host spins on the flag", [&] {
    empty<<<1, 32, 0, s>>>();
    write_value(s, (CUdeviceptr)flag_d, ++seq, 0);
    while (*(volatile unsigned *)flag_h != seq) {}
  });
  measure("empty 1250x256, stream sync", [&] { empty<<<1250, 256, 0, s>>>(); cudaStreamSynchronize(s); });
  measure("ticket 1250x256 (last block writes mapped), stream sync", [&] { ticket_flag<<<1250, 256, 0, s>>>(ticket, flag_d, ++seq); cudaStreamSynchronize(s); });
  measure("ticket 1250x256, host spins on the flag", [&] {
    ticket_flag<<<1250, 256, 0, s>>>(ticket, flag_d, ++seq);
    while (*(volatile unsigned *)flag_h != seq) {}
  });
  measure("ticket 625x256, stream sync", [&] { ticket_flag<<<625, 256, 0, s>>>(ticket, flag_d, ++seq); cudaStreamSynchronize(s); });
  measure("barrier 625x256 (plain launch), stream sync", [&] {
    arrivals += 625;
    barrier_flag<<<625, 256, 0, s>>>(arrived, arrivals, flag_d, ++seq);
    cudaStreamSynchronize(s);
  });
  {
    measure("barrier 625x256 cooperative, stream sync", [&] {
      arrivals += 625;
      unsigned long long target = arrivals;
      unsigned v = ++seq;
      void *args[] = {&arrived, &target, &flag_d, &v};
      cudaLaunchCooperativeKernel((void *)barrier_flag, dim3(625), dim3(256), args, 0, s);
      cudaStreamSynchronize(s);
    });
  }
  measure_events("empty 1x32, stream sync", s, [&] { empty<<<1, 32, 0, s>>>(); cudaStreamSynchronize(s); });
  measure_events("write mapped 1x32, host spins on the flag", s, [&] {
    write_flag<<<1, 32, 0, s>>>(flag_d, ++seq);
    while (*(volatile unsigned *)flag_h != seq) {}
  });
  CK(cudaGetLastError());
}

// "timeline": with a build of the short-row kernel that stamps %globaltimer into `out`
// instead of answering (scripts/probes/segsel-timeline.py patches the kernel for a scratch
// build), where the 10,000-row call's blocks spend their time, relative to the first
// block's start.
static int timeline(gpuprims_context *ctx) {
  const size_t nrows = 10000;
  uint64_t st = 7;
  std::vector<uint32_t> off(nrows + 1);
  for (size_t i = 0; i < nrows; i++) off[i + 1] = off[i] + 1 + sm64(&st) % 100;
  std::vector<uint16_t> v(off[nrows]);
  for (auto &x : v) x = (uint16_t)sm64(&st);
  gpuprims_buffer *bv, *bo, *bout;
  gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U16, v.data(), v.size(), &bv);
  gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, off.data(), nrows + 1, &bo);
  gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U16, nrows, &bout);
  std::vector<uint32_t> tl(nrows / 2);
  // Stamps a block (kernel scratch patch): 0 start, 3 SM; checking blocks: 4 rows
  // checked, 1 before the ticket, 5 ticket back, 2 report published (the last);
  // selecting blocks: 4 rows read into shared memory, 5 last warp done with a row
  // before its last (with two rows a warp, its first), 1 last warp done, 2 last warp
  // saw the verdict.
  const char *names[] = {"last block start", "checking: rows checked (median block)", "checking: rows checked (last)",
                         "checking: before ticket (last)", "checking: ticket back (last)", "report published",
                         "selecting: rows read (median block)", "selecting: first rows done (median block)",
                         "selecting: block done (median)", "selecting: block done (p90)", "selecting: last block done",
                         "selecting: last verdict seen"};
  const int C = 12;
  std::vector<std::vector<double>> cols(C);
  for (int call = 0; call < 60; ++call) {
    gpuprims_segmented_select(ctx, bv, bo, NULL, bout);
    gpuprims_context_synchronize(ctx);
    gpuprims_buffer_read(bout, 0, tl.data(), nrows);
    const uint32_t g = tl[0], vb = tl[1];
    const uint32_t *at[7];
    for (int k = 0; k < 7; ++k) at[k] = &tl[2 + k * g];
    uint32_t t0 = at[0][0];
    for (uint32_t b = 0; b < g; ++b) t0 = (int32_t)(at[0][b] - t0) < 0 ? at[0][b] : t0;
    auto rel = [&](int k, uint32_t b) { return (double)(int32_t)(at[k][b] - t0); };
    std::vector<double> checked, before, back, done, read, first;
    double last_start = 0, publish = 0, seen = 0;
    for (uint32_t b = 0; b < g; ++b) {
      last_start = std::max(last_start, rel(0, b));
      if (b < vb) {
        checked.push_back(rel(4, b));
        before.push_back(rel(1, b));
        back.push_back(rel(5, b));
        if (at[2][b]) publish = rel(2, b);
      } else {
        done.push_back(rel(1, b));
        read.push_back(rel(4, b));
        first.push_back(rel(5, b));
        seen = std::max(seen, rel(2, b));
      }
    }
    for (auto *x : {&checked, &before, &back, &done, &read, &first}) std::sort(x->begin(), x->end());
    double row[C] = {last_start,           checked[checked.size() / 2], checked.back(),
                     before.back(),        back.back(),                 publish,
                     read[read.size() / 2], first[first.size() / 2],    done[done.size() / 2],
                     done[done.size() * 9 / 10], done.back(),           seen};
    for (int c = 0; c < C; ++c) cols[c].push_back(row[c]);
  }
  printf("timeline of the 10,000-row call (ns after the first block starts; median over 60 calls, p10, p90):\n");
  for (int c = 0; c < C; ++c) {
    std::sort(cols[c].begin(), cols[c].end());
    printf("  %-40s %6.0f  (%.0f, %.0f)\n", names[c], cols[c][30], cols[c][6], cols[c][54]);
  }
  return 0;
}

int main(int argc, char **argv) {
  bool spin = argc > 1 && !strcmp(argv[1], "spin");
  // "rows N": only the segmented select of N rows, a few calls (for ncu).
  const size_t only_rows = argc > 2 && !strcmp(argv[1], "rows") ? strtoull(argv[2], 0, 0) : 0;
  if (spin) CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  CK(cudaFree(0));
  printf("wait mode: %s\n", spin ? "spin" : "default (auto)");
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  if (!only_rows && !(argc > 1 && !strcmp(argv[1], "timeline"))) bare_floors(s);
  if (only_rows) t.resize(5);
  gpuprims_context *ctx;
  if (gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &ctx)) {
    printf("no gpuprims context\n");
    return 1;
  }
  if (gpuprims_context_set_stream(ctx, s)) printf("set_stream failed\n");
  if (argc > 1 && !strcmp(argv[1], "timeline")) return timeline(ctx);
  if (!only_rows) {
    gpuprims_buffer *b;
    uint32_t x = 1;
    uint64_t out;
    gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, &x, 1, &b);
    measure("gpuprims_reduce u32 sum of 1", [&] { gpuprims_reduce(ctx, b, GPUPRIMS_OP_SUM, &out); });
    gpuprims_buffer_destroy(b);
  }
  size_t counts[] = {32, 1000, 10000, 100000};
  for (size_t nrows : counts) {
    if (only_rows) nrows = only_rows;
    uint64_t st = 7;
    std::vector<uint32_t> off(nrows + 1);
    for (size_t i = 0; i < nrows; i++) off[i + 1] = off[i] + 1 + sm64(&st) % 100;
    size_t n = off[nrows];
    std::vector<uint16_t> v(n);
    for (auto &x : v) x = (uint16_t)sm64(&st);
    gpuprims_buffer *bv, *bo, *bout;
    gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U16, v.data(), n, &bv);
    gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, off.data(), nrows + 1, &bo);
    gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U16, nrows, &bout);
    char label[96];
    snprintf(label, sizeof label, "gpuprims_segmented_select u16 %zu rows of 1..100", nrows);
    measure(label, [&] { gpuprims_segmented_select(ctx, bv, bo, NULL, bout); });
    if (!only_rows) measure_events(label, s, [&] { gpuprims_segmented_select(ctx, bv, bo, NULL, bout); });
    gpuprims_buffer_destroy(bv);
    gpuprims_buffer_destroy(bo);
    gpuprims_buffer_destroy(bout);
    if (only_rows) break;
  }
  gpuprims_context_set_stream(ctx, NULL);
  gpuprims_context_destroy(ctx);
  return 0;
}
