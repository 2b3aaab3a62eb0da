// NCCL's own all-to-all rate on this machine, the reference for the multi-GPU sort's
// exchange (issues 41, 42): one process drives every visible GPU (ncclCommInitAll),
// each rank sends an equal part of its buffer to every other rank with grouped
// ncclSend/ncclRecv, as gpuprims' NCCL link does. Prints, per size, the time and the
// bytes a rank sends to others per second. No NCCL header needed (the few entry points
// are declared here). NVLink multicast stays off.
//   A2A_POOL=1     buffers from the device's stream-ordered pool (cudaMallocAsync), as
//                  gpuprims allocates, instead of cudaMalloc;
//   A2A_THREADS=1  a thread a rank, each issuing its own group on its communicator, as
//                  gpuprims' group does, instead of one thread grouping every rank;
//   A2A_SKEW=b     every part sent from b bytes past a 16-byte word and received 2b
//                  bytes past one (a sort's parts start wherever its splitters fall).
//
//   nvcc -O2 -o /tmp/a2a scripts/probes/nccl-alltoall.cu -ldl && NCCL_NVLS_ENABLE=0 /tmp/a2a [MiB a rank ...]
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <thread>
#include <vector>

typedef void *comm_t;
static int (*init_all)(comm_t *, int, const int *);
static int (*group_start)(void), (*group_end)(void);
static int (*send)(const void *, size_t, int, int, comm_t, cudaStream_t);
static int (*recv)(void *, size_t, int, int, comm_t, cudaStream_t);
static const int UINT8 = 1;

static void load(void) {
  const char *path = getenv("GPUPRIMS_NCCL_LIBRARY");
  void *h = dlopen(path && *path ? path : "libnccl.so.2", RTLD_NOW);
  if (!h) { fprintf(stderr, "no NCCL: %s\n", dlerror()); exit(1); }
  *(void **)&init_all = dlsym(h, "ncclCommInitAll");
  *(void **)&group_start = dlsym(h, "ncclGroupStart");
  *(void **)&group_end = dlsym(h, "ncclGroupEnd");
  *(void **)&send = dlsym(h, "ncclSend");
  *(void **)&recv = dlsym(h, "ncclRecv");
}

static int n;
static size_t skew;
static std::vector<comm_t> comms;
static std::vector<char *> sendb, recvb;
static std::vector<cudaStream_t> streams;

/* Rank r's sends and receives to every other rank (inside a group). */
static void issue(int r, size_t part) {
  for (int p = 0; p < n; p++) {
    if (p == r) continue;
    send(sendb[r] + p * part + skew, part - 2 * skew, UINT8, p, comms[r], streams[r]);
    recv(recvb[r] + p * part + 2 * skew, part - 2 * skew, UINT8, p, comms[r], streams[r]);
  }
}

static void one_exchange(size_t part, bool threads) {
  if (!threads) {
    group_start();
    for (int r = 0; r < n; r++) issue(r, part);
    group_end();
    return;
  }
  std::vector<std::thread> t;
  for (int r = 0; r < n; r++)
    t.emplace_back([r, part] {
      cudaSetDevice(r);
      group_start();
      issue(r, part);
      group_end();
      cudaStreamSynchronize(streams[r]);
    });
  for (auto &x : t) x.join();
}

int main(int argc, char **argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  load();
  bool pool = getenv("A2A_POOL") && atoi(getenv("A2A_POOL")), threads = getenv("A2A_THREADS") && atoi(getenv("A2A_THREADS"));
  skew = getenv("A2A_SKEW") ? strtoull(getenv("A2A_SKEW"), 0, 10) : 0;
  cudaGetDeviceCount(&n);
  std::vector<int> devs(n);
  for (int i = 0; i < n; i++) devs[i] = i;
  comms.resize(n);
  if (init_all(comms.data(), n, devs.data()) != 0) { fprintf(stderr, "ncclCommInitAll failed\n"); return 1; }
  std::vector<size_t> mibs;
  for (int i = 1; i < argc; i++) mibs.push_back(strtoull(argv[i], 0, 10));
  if (mibs.empty()) mibs = {64, 256, 1024, 2048};
  size_t most = *std::max_element(mibs.begin(), mibs.end()) << 20;
  sendb.resize(n), recvb.resize(n), streams.resize(n);
  for (int r = 0; r < n; r++) {
    cudaSetDevice(r);
    cudaStreamCreate(&streams[r]);
    if (pool) {
      cudaMallocAsync((void **)&sendb[r], most, streams[r]);
      cudaMallocAsync((void **)&recvb[r], most, streams[r]);
      cudaStreamSynchronize(streams[r]);
    } else {
      cudaMalloc(&sendb[r], most);
      cudaMalloc(&recvb[r], most);
    }
  }
  printf("%d GPUs, grouped ncclSend/ncclRecv to every peer; %s memory, %s, parts %zu bytes off a 16-byte word\n", n,
         pool ? "pool" : "cudaMalloc", threads ? "a thread a rank" : "one thread", skew);
  for (size_t mib : mibs) {
    size_t bytes = mib << 20, part = bytes / n;
    double best = 1e30;
    for (int rep = 0; rep < 6; rep++) {
      for (int r = 0; r < n; r++) { cudaSetDevice(r); cudaDeviceSynchronize(); }
      cudaEvent_t t0, t1;
      cudaSetDevice(0);
      cudaEventCreate(&t0);
      cudaEventCreate(&t1);
      cudaEventRecord(t0, streams[0]);
      one_exchange(part, threads);
      for (int r = 1; r < n; r++) { cudaSetDevice(r); cudaStreamSynchronize(streams[r]); }
      cudaSetDevice(0);
      cudaEventRecord(t1, streams[0]);
      cudaEventSynchronize(t1);
      float ms = 0;
      cudaEventElapsedTime(&ms, t0, t1);
      if (rep > 0) best = std::min(best, (double)ms);
    }
    double sent = (double)part * (n - 1);
    printf("%6zu MiB a rank: %.3f ms, %.1f GB/s a rank sent to others\n", mib, best, sent / (best * 1e6));
  }
  return 0;
}
