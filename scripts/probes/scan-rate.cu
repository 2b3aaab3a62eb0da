/* scan-rate.cu: the one-pass scan (kernels/scan.cu) against the copy ceiling and against
 * a persistent form that prefetches its next tile by cp.async while the current one
 * looks back, on one GPU: inclusive sum of i32, checked against the host, then timed
 * (CUDA events, median of 15); and the same one-pass scan with larger tiles in dynamic
 * shared memory.
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Ikernels -DGP_T=i32 -DGP_OP=gp::SumOp \
 *        -DGP_BLOCK_THREADS=256 -DGP_ITEMS=32 -DGP_LOOKBACK_WINDOW=64 \
 *        scripts/probes/scan-rate.cu -o scan-rate
 *   ./scan-rate [log2 n]        default 28
 * GB/s counts one read and one write of every element. */
#include "scan.cu"
#include "common/async_copy.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

__device__ __forceinline__ void copy_async16(void *dst, const void *src) {
    const u32 to = u32(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(src) : "memory");
}
__device__ __forceinline__ void commit_async() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void wait_async_but_one() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }

/* Persistent blocks: each takes tiles by ticket until past the end; while one tile
 * scans and looks back, the next one's copies are in flight into the other buffer. */
template <int PB, int PI>
__global__ void __launch_bounds__(PB) scan_persistent(const T *in, T *out, usize n, u64 *aggregate, u64 *inclusive,
                                                      u64 *ticket, u32 epoch, u64 ticket_base) {
    typedef gp::WarpTile<T, PI> WT;
    typedef gp::BlockScan<A, PB> Scan;
    typedef gp::TilePrefix<A, WINDOW> Prefix;
    constexpr usize TILE_P = (usize)PB * PI;
    extern __shared__ gp::Vec16 dyn[];
    __shared__ typename Scan::Storage scan_storage;
    __shared__ u32 slot[2];
    Op op;
    const gp::TileState st{aggregate, inclusive, ticket};
    const int warp = threadIdx.x / gp::WARP, lane = threadIdx.x % gp::WARP;
    typename WT::Storage *bufs = reinterpret_cast<typename WT::Storage *>(dyn);
    const usize tiles = (n + TILE_P - 1) / TILE_P;
    const usize full_tiles = n / TILE_P;
    const bool aligned = gp::aligned16(in) && gp::aligned16(out);
    const usize span = (usize)warp * gp::WARP * PI;

    auto prefetch = [&](u32 tile, int b) {
        if (aligned && tile < full_tiles) {
            typename WT::Storage &s = bufs[b * (PB / gp::WARP) + warp];
            const char *src = reinterpret_cast<const char *>(in + (usize)tile * TILE_P + span);
#pragma unroll
            for (int j = 0; j < WT::VECS; ++j) copy_async16(&s.rows[WT::slot(j * gp::WARP + lane)], src + (usize)(j * gp::WARP + lane) * 16);
        }
        commit_async();
    };

    if (threadIdx.x == 0) slot[0] = (u32)(atomicAdd(ticket, 1ull) - ticket_base);
    __syncthreads();
    u32 tile = slot[0];
    prefetch(tile, 0);
    for (int b = 0; tile < tiles; b ^= 1) {
        if (threadIdx.x == 0) slot[b ^ 1] = (u32)(atomicAdd(ticket, 1ull) - ticket_base);
        __syncthreads();  // also: scan_storage free again
        const u32 next = slot[b ^ 1];
        prefetch(next, b ^ 1);
        wait_async_but_one();
        typename WT::Storage &mine = bufs[b * (PB / gp::WARP) + warp];
        const usize start = (usize)tile * TILE_P;
        const usize valid = n - start < TILE_P ? n - start : TILE_P;
        const usize span_valid = valid > span ? valid - span : 0;
        const bool vectorize = aligned && tile < full_tiles;
        if (!vectorize) WT::stage(in + start + span, span_valid, Acc::narrow(Op::identity()), false, mine);
        __syncwarp();
        gp::Vec16 *row = WT::row(mine);
        const A thread_total = row_total<WT::VECS>(row, op);
        A carry;
        Scan::exclusive(thread_total, carry, op, scan_storage, Prefix{st, tile, epoch});
        scan_row<false, WT::VECS>(row, carry, op);
        WT::unstage(out + start + span, span_valid, vectorize, mine);
        tile = next;
    }
}

/* The one-pass scan of kernels/scan.cu (scan_tile) with its shape as template arguments
 * and the tile in dynamic shared memory: tiles past the 48 KiB of static shared memory. */
template <int PB, int PI>
__global__ void __launch_bounds__(PB) scan_dynamic(const T *in, T *out, usize n, u64 *aggregate, u64 *inclusive,
                                                   u64 *ticket, u32 epoch, u64 ticket_base) {
    extern __shared__ gp::Vec16 dyn[];
    scan_tile<false, PB, PI>(in, out, n, gp::TileState{aggregate, inclusive, ticket}, epoch, ticket_base, 0, 0,
                             reinterpret_cast<typename gp::WarpTile<T, PI>::Storage *>(dyn));
}

/* The copy ceiling: 16-byte vectors, four in flight a thread, grid-stride. */
__global__ void copy_kernel(const T *in, T *out, usize n) {
    gp::copy_elements(out, in, n, blockIdx.x * (usize)blockDim.x + threadIdx.x, (usize)gridDim.x * blockDim.x);
}

struct Sync {
    u64 *words, *ticket;
    u32 epoch = 0;
    u64 tickets = 0;
};

typedef void (*Runner)(const T *, T *, usize, Sync &, int);

static void run_classic(const T *in, T *out, usize n, Sync &s, int) {
    const usize tile = (usize)BLOCK * ITEMS, tiles = (n + tile - 1) / tile;
    ++s.epoch;
    scan_inclusive<<<(unsigned)tiles, BLOCK>>>(in, out, n, s.words, s.words + tiles, s.ticket, s.epoch, s.tickets, 0, 0);
    s.tickets += tiles;
}

template <int PB, int PI>
static void run_persistent(const T *in, T *out, usize n, Sync &s, int per_sm) {
    constexpr usize TP = (usize)PB * PI;
    const usize tiles = (n + TP - 1) / TP;
    const size_t smem = 2 * (PB / 32) * sizeof(typename gp::WarpTile<T, PI>::Storage);
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(scan_persistent<PB, PI>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        set = true;
    }
    int dev, sms, fit;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, scan_persistent<PB, PI>, PB, smem));
    const int per = per_sm ? std::min(per_sm, fit) : fit;
    const usize grid = std::min<usize>(tiles, (usize)sms * per);
    ++s.epoch;
    scan_persistent<PB, PI><<<(unsigned)grid, PB, smem>>>(in, out, n, s.words, s.words + tiles, s.ticket, s.epoch, s.tickets);
    s.tickets += tiles + grid;
}

template <int PB, int PI>
static void run_tile(const T *in, T *out, usize n, Sync &s, int) {
    constexpr usize TP = (usize)PB * PI;
    const usize tiles = (n + TP - 1) / TP;
    const size_t smem = (PB / 32) * sizeof(typename gp::WarpTile<T, PI>::Storage);
    static bool set = false;
    if (!set) {
        CK(cudaFuncSetAttribute(scan_dynamic<PB, PI>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        set = true;
    }
    ++s.epoch;
    scan_dynamic<PB, PI><<<(unsigned)tiles, PB, smem>>>(in, out, n, s.words, s.words + tiles, s.ticket, s.epoch, s.tickets);
    s.tickets += tiles;
}

static void run_copy(const T *in, T *out, usize n, Sync &, int) {
    int dev, sms;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    copy_kernel<<<sms * 4, 512>>>(in, out, n);
}

static void run_memcpy(const T *in, T *out, usize n, Sync &, int) {
    CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice));
}

static bool check(const char *name, Runner r, int per_sm, T *din, T *dout, const std::vector<T> &want, usize n, Sync &s,
                  bool is_copy) {
    for (usize len : {n, n - 1, (usize)1, (usize)8191, (usize)8193, (usize)100000}) {
        if (len > n) continue;
        CK(cudaMemset(dout, 0xab, n * sizeof(T)));
        r(din, dout, len, s, per_sm);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<T> got(len);
        CK(cudaMemcpy(got.data(), dout, len * sizeof(T), cudaMemcpyDeviceToHost));
        if (is_copy) return true;
        for (usize i = 0; i < len; ++i)
            if (got[i] != want[i]) {
                printf("%s: n %zu: wrong at %zu: %d, want %d\n", name, (size_t)len, (size_t)i, got[i], want[i]);
                return false;
            }
    }
    return true;
}

int main(int argc, char **argv) {
    const int lg = argc > 1 ? atoi(argv[1]) : 28;
    const usize n = (usize)1 << lg;
    std::vector<T> h(n), want(n);
    unsigned long long x = 88172645463325252ull;
    unsigned acc = 0;
    for (usize i = 0; i < n; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        h[i] = (T)(x % 2001) - 1000;
        acc += (unsigned)h[i];
        want[i] = (T)acc;
    }
    T *din, *dout;
    Sync s;
    CK(cudaMalloc(&din, n * sizeof(T)));
    CK(cudaMalloc(&dout, n * sizeof(T)));
    CK(cudaMalloc(&s.words, (n / 1024 + 4096) * 16));
    CK(cudaMalloc(&s.ticket, 8));
    CK(cudaMemset(s.words, 0, (n / 1024 + 4096) * 16));
    CK(cudaMemset(s.ticket, 0, 8));
    CK(cudaMemcpy(din, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));

    struct Case {
        const char *name;
        Runner r;
        int per_sm;
        bool copy;
    } cases[] = {
        {"memcpy", run_memcpy, 0, true},
        {"copy kernel", run_copy, 0, true},
        {"scan (classic 256x32)", run_classic, 0, false},
        {"tile 256x32 (dynamic smem)", run_tile<256, 32>, 0, false},
        {"tile 256x48", run_tile<256, 48>, 0, false},
        {"tile 256x64", run_tile<256, 64>, 0, false},
        {"tile 512x32", run_tile<512, 32>, 0, false},
        {"tile 384x32", run_tile<384, 32>, 0, false},
        {"tile 128x64", run_tile<128, 64>, 0, false},
        {"tile 512x48", run_tile<512, 48>, 0, false},
        {"scan (classic 256x32) again", run_classic, 0, false},
        {"persistent 256x32", run_persistent<256, 32>, 0, false},
        {"persistent 256x32, 2 an SM", run_persistent<256, 32>, 2, false},
    };
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (auto &c : cases) {
        if (!check(c.name, c.r, c.per_sm, din, dout, want, n, s, c.copy)) continue;
        std::vector<float> ts;
        for (int rep = 0; rep < 15; ++rep) {
            CK(cudaEventRecord(e0));
            c.r(din, dout, n, s, c.per_sm);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float t;
            CK(cudaEventElapsedTime(&t, e0, e1));
            ts.push_back(t);
        }
        std::sort(ts.begin(), ts.end());
        printf("%-28s n 2^%d: %.4f ms (min %.4f), %.0f GB/s\n", c.name, lg, ts[7], ts[0], 2.0 * n * sizeof(T) / ts[7] / 1e6);
    }
    return 0;
}
