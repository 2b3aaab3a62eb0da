// probe-band.cu: what a band pass (one read of the input, a few keys kept) pays for
// beyond the read, on the GPU machine. 2^28 f32 keys in [0, 1); each kernel reads them
// as the selection's bands do (256 threads, a row of 64 bytes a thread a tile, each
// block a contiguous share of whole tiles, one wave of blocks) and adds one piece:
//   read     count the keys below lo (the reads and the pick alone);
//   scan     + a block scan of each tile's kept count (two barriers a tile);
//   tile     + one atomic a tile for the tile's run, the kept keys re-read and stored
//            (the bands as they are: common/key_row.cuh, kernels/select_band.cuh);
//   regs     the same, the kept keys stored from registers, not re-read;
//   warp     no block scan: each warp with kept keys takes its run by one atomic of
//            its own (no barrier a tile);
//   ...256   read, tile and warp with the loads' L2 256-byte prefetch hint.
// For kept fractions 0, 3e-4 (top-k of 100) and 3% (select_kth's bracket), kernel time
// by CUDA events, median of 21 after a warm-up.
//
// H100 80GB HBM3, 2026-11-28 (us; two runs agreed within 2%, but for "warp"):
//   kept    read  scan  tile  regs  warp  read256 tile256 warp256
//   0        358   357   423   361   355   359     426     355
//   3e-4     358   357   429   365   358   359     433     359
//   3%       358   357   557   395   814   358     559     820
// Read with care: ptxas split "tile"'s row loads in two (two vectors, the picks, then
// the other two) at its 32 registers, which the library's bands do not (their four
// loads go out together), so "tile" is slower than the bands, and "regs" against it
// overstates what copying from registers gains: in the bands themselves it lost
// (branch next/band-rows; docs/benchmarks/select-topk.md). What stands: a block scan a
// tile costs nothing beside the read; one atomic a warp on one counter serialises at
// 3% kept; the L2 256-byte prefetch hint changes nothing.
//   nvcc -O3 -arch=sm_90 -std=c++17 -Ikernels scripts/probes/probe-band.cu -o probe-band
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <algorithm>
#include <vector>

#include "cuda_check.h"
#include "common/types.cuh"
#include "common/key_row.cuh"
#include "common/block_scan.cuh"
#include "common/ops.cuh"

constexpr int BLOCK = 256, VECS = 4;
typedef gp::KeyRow<u32, VECS> Row;  // f32 as its bits: keys in [0, 1) order as u32
constexpr usize TILE = (usize)BLOCK * Row::ITEMS;

enum Mode { READ, SCAN, TILE_RUN, REGS, WARP };

struct NoPrefixSource {
    template <class Op>
    __device__ __forceinline__ gp::BlockPrefix<u32> operator()(u32, Op) const { return {0, false}; }
};
struct TileAtomic {
    unsigned long long *counter;
    u64 *base;
    template <class Op>
    __device__ __forceinline__ gp::BlockPrefix<u32> operator()(u32 total, Op) const {
        if (threadIdx.x == 0) *base = total ? atomicAdd(counter, (unsigned long long)total) : 0;
        return {0, false};
    }
};

// A row's loads, with the L2 256-byte prefetch hint where HINT (ld.global.nc.L2::256B).
template <bool HINT>
__device__ __forceinline__ void load_row(const u32 *keys, usize first, gp::Vec16 (&v)[VECS]) {
    if constexpr (!HINT) {
        Row::load(keys, first, v);
    } else {
#pragma unroll
        for (int j = 0; j < VECS; ++j) {
            const u32 *p = keys + first + j * 4;
            asm volatile("ld.global.nc.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                         : "=r"(v[j].w[0]), "=r"(v[j].w[1]), "=r"(v[j].w[2]), "=r"(v[j].w[3])
                         : "l"(p));
        }
    }
}

template <Mode M, bool HINT = false>
__global__ void __launch_bounds__(BLOCK) band(const u32 *keys, usize n, u32 lo, u32 hi, u32 *out,
                                              unsigned long long *counts) {
    typedef gp::BlockScan<u32, BLOCK> Scan;
    __shared__ typename Scan::Storage scan[2];
    __shared__ u64 base[2];
    const usize tiles = n / TILE;  // n is a multiple of TILE here
    const usize begin = tiles * blockIdx.x / gridDim.x, end = tiles * (blockIdx.x + 1) / gridDim.x;
    u32 below = 0;
    for (usize tile = begin; tile < end; ++tile) {
        const int buf = tile & 1;
        const usize first = tile * TILE + (usize)threadIdx.x * Row::ITEMS;
        gp::Vec16 v[VECS];
        load_row<HINT>(keys, first, v);
        const u64 kept = Row::pick_each(v, [&](u32 x) {
            below += x < lo;
            return x - lo <= hi - lo;
        });
        if (M == READ) continue;
        const u32 mine = __popcll(kept);
        if (M == WARP) {
            if (!__any_sync(0xffffffffu, kept != 0)) continue;
            u32 before = mine;  // inclusive warp scan
            for (int d = 1; d < 32; d <<= 1) {
                const u32 o = __shfl_up_sync(0xffffffffu, before, d);
                if ((int)(threadIdx.x % 32) >= d) before += o;
            }
            const u32 total = __shfl_sync(0xffffffffu, before, 31);
            u64 at = 0;
            if (threadIdx.x % 32 == 31) at = atomicAdd(counts + 1, (unsigned long long)total);
            at = __shfl_sync(0xffffffffu, at, 31) + before - mine;
            u32 x[Row::ITEMS];
            memcpy(x, v, sizeof(x));
#pragma unroll
            for (int e = 0; e < Row::ITEMS; ++e)
                if (kept >> e & 1) out[at++] = x[e];
            continue;
        }
        u32 before;
        if (M == SCAN) {
            Scan::exclusive(mine, before, gp::SumOp<u32>(), scan[buf], NoPrefixSource{});
            if (before == 0xffffffffu) out[0] = 0;  // keep the scan
            continue;
        }
        Scan::exclusive(mine, before, gp::SumOp<u32>(), scan[buf], TileAtomic{counts + 1, &base[buf]});
        u64 to = base[buf] + before;
        if (M == TILE_RUN) {
            for (u64 left = kept; left; left &= left - 1, ++to) out[to] = keys[first + __ffsll((long long)left) - 1];
        } else {
            u32 x[Row::ITEMS];
            memcpy(x, v, sizeof(x));
#pragma unroll
            for (int e = 0; e < Row::ITEMS; ++e)
                if (kept >> e & 1) out[to++] = x[e];
        }
        __syncwarp();
    }
    below = __reduce_add_sync(0xffffffffu, below);
    if (threadIdx.x % 32 == 0) atomicAdd(counts, (unsigned long long)below);
}

__global__ void fill(u32 *keys, usize n) {
    for (usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (usize)gridDim.x * blockDim.x) {
        u64 x = i * 0x9e3779b97f4a7c15ull;
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 29;
        const float f = (float)(x >> 40) * (1.0f / 16777216.0f);
        keys[i] = __float_as_uint(f);
    }
}

template <Mode M, bool HINT = false>
static float time_kernel(const u32 *keys, usize n, u32 lo, u32 hi, u32 *out, unsigned long long *counts,
                         unsigned long long *kept) {
    int per_sm = 0, sms = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, band<M, HINT>, BLOCK, 0));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const unsigned grid = (unsigned)std::min<usize>(n / TILE, (usize)per_sm * sms);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int r = 0; r < 22; ++r) {
        CK(cudaMemsetAsync(counts, 0, 16));
        CK(cudaEventRecord(a));
        band<M, HINT><<<grid, BLOCK>>>(keys, n, lo, hi, out, counts);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float t;
        CK(cudaEventElapsedTime(&t, a, b));
        if (r) ms.push_back(t);
    }
    CK(cudaMemcpy(kept, counts + 1, 8, cudaMemcpyDeviceToHost));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2] * 1000;
}

int main() {
    const usize n = (usize)1 << 28;
    u32 *keys, *out;
    unsigned long long *counts;
    CK(cudaMalloc(&keys, n * 4));
    CK(cudaMalloc(&out, n * 4 / 16));
    CK(cudaMalloc(&counts, 16));
    fill<<<1024, 256>>>(keys, n);
    CK(cudaDeviceSynchronize());
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("%s, %d SMs; 2^28 f32 keys (1 GiB); us, median of 21\n", p.name, p.multiProcessorCount);
    const double fractions[] = {0, 3e-4, 0.03};
    printf("%-10s %10s %8s %8s %8s %8s %8s %8s %8s %8s\n", "kept", "kept keys", "read", "scan", "tile", "regs", "warp",
           "read256", "tile256", "warp256");
    for (double f : fractions) {
        const float lo_f = 0.5f, hi_f = 0.5f + (float)f;
        u32 lo = *(const u32 *)&lo_f, hi = *(const u32 *)&hi_f;
        if (f == 0) lo = hi = 0xffffffffu;  // a NaN pattern the keys never hold: nothing kept
        unsigned long long kept = 0, k2 = 0;
        const float r = time_kernel<READ>(keys, n, lo, hi, out, counts, &k2);
        const float s = time_kernel<SCAN>(keys, n, lo, hi, out, counts, &k2);
        const float t = time_kernel<TILE_RUN>(keys, n, lo, hi, out, counts, &kept);
        const float g = time_kernel<REGS>(keys, n, lo, hi, out, counts, &k2);
        const float w = time_kernel<WARP>(keys, n, lo, hi, out, counts, &k2);
        const float r2 = time_kernel<READ, true>(keys, n, lo, hi, out, counts, &k2);
        const float t2 = time_kernel<TILE_RUN, true>(keys, n, lo, hi, out, counts, &k2);
        const float w2 = time_kernel<WARP, true>(keys, n, lo, hi, out, counts, &k2);
        printf("%-10g %10llu %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f%s\n", f, kept, r, s, t, g, w, r2, t2, w2,
               k2 == kept ? "" : " (counts differ)");
    }
    return 0;
}
