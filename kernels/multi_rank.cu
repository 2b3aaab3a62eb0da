// Pieces of the multi-rank operations (src/multi, src/backend/cuda/multi_rank.rs):
//   multi_count_before  a thread a probe: binary search of sorted keys for how many
//                       have a rank key below the probe (the sort's splitters);
//   multi_sample        every (len / count)-th key (the selection's sample);
//   multi_band          one pass: keys below a bracket counted, keys inside it
//                       counted and appended (any order) up to a capacity;
//   multi_digit_counts  counts of one 8-bit digit of the keys under a prefix;
//   multi_add_u64, multi_gather_u64  index arithmetic of the top-k.
// Rank keys are KeyOrder::ordered patterns (common/radix_key.cuh) widened to u64, the
// same mapping the host plans with (src/multi/keys.rs). Instantiated per key width:
// -DGP_KEY_BYTES=1|2|4|8 -DGP_KEY_FLOAT=0|1; kind and direction arrive at run time.
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/warp.cuh"
#include "common/ops.cuh"
#include "common/block_scan.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type K;
typedef gp::KeyOrder<K, GP_KEY_FLOAT> KeyOrder;

extern "C" __global__ void multi_count_before(const K *keys, usize len, u32 key_order, const u64 *probes, usize nprobes,
                                              u64 *counts) {
    gp::wait_for_prior_grids();
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nprobes) return;
    const KeyOrder order(key_order);
    const u64 probe = probes[i];
    usize lo = 0, hi = len;
    while (lo < hi) {
        const usize mid = lo + (hi - lo) / 2;
        if ((u64)order.ordered(keys[mid]) < probe) lo = mid + 1;
        else hi = mid;
    }
    counts[i] = lo;
}

// i * len / count without a 128-bit product: i * (len % count) < count^2 fits 64 bits
// (the host asks for far fewer than 2^32 samples).
extern "C" __global__ void multi_sample(const K *keys, usize len, usize count, K *out) {
    gp::wait_for_prior_grids();
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) out[i] = keys[i * (len / count) + i * (len % count) / count];
}

constexpr int BAND_BLOCK = 256, BAND_ITEMS = 16;
constexpr usize BAND_TILE = (usize)BAND_BLOCK * BAND_ITEMS;

// The place of a tile's kept keys in `out`: one atomic for the whole tile (a warp or a
// thread each would serialise on the one counter when the bracket keeps a few percent).
struct AppendAt {
    unsigned long long *counter;
    template <class T, class Op>
    __device__ __forceinline__ gp::BlockPrefix<T> operator()(T total, Op) const {
        T base = 0;
        if (threadIdx.x == 0 && total) base = (T)atomicAdd(counter, (unsigned long long)total);
        return {gp::shfl(base, 0), true};
    }
};

// counts[0] += keys below lo, counts[1] += keys in [lo, hi]; the latter appended to
// out (in any order) while fewer than cap are there.
extern "C" __global__ void __launch_bounds__(BAND_BLOCK)
multi_band(const K *keys, usize len, u32 key_order, u64 lo, u64 hi, K *out, usize cap, unsigned long long *counts) {
    gp::wait_for_prior_grids();
    typedef gp::BlockScan<u64, BAND_BLOCK> Scan;
    __shared__ typename Scan::Storage scan;
    const KeyOrder order(key_order);
    u64 below = 0;
    for (usize tile = (usize)blockIdx.x * BAND_TILE; tile < len; tile += (usize)gridDim.x * BAND_TILE) {
        K key[BAND_ITEMS];
        u32 inside = 0;  // bit j: item j is kept
        const bool whole = tile + BAND_TILE <= len;
        // All of a whole tile's loads first, so they are in flight together.
#pragma unroll
        for (int j = 0; j < BAND_ITEMS; ++j) {
            const usize i = tile + (usize)j * BAND_BLOCK + threadIdx.x;
            if (whole || i < len) key[j] = keys[i];
        }
#pragma unroll
        for (int j = 0; j < BAND_ITEMS; ++j) {
            const usize i = tile + (usize)j * BAND_BLOCK + threadIdx.x;
            if (whole || i < len) {
                const u64 r = order.ordered(key[j]);
                below += r < lo;
                inside |= u32(r >= lo && r <= hi) << j;
            }
        }
        u64 at;
        Scan::exclusive((u64)__popc(inside), at, gp::SumOp<u64>(), scan, AppendAt{counts + 1});
#pragma unroll
        for (int j = 0; j < BAND_ITEMS; ++j)
            if (inside >> j & 1) {
                if (at < cap) out[at] = key[j];
                ++at;
            }
        __syncthreads();  // the scan's storage is reused by the next tile
    }
    below = gp::warp_reduce(below, gp::SumOp<u64>());
    if (threadIdx.x % gp::WARP == 0 && below) atomicAdd(counts, (unsigned long long)below);
}

// Lanes holding the same digit add once (the kept keys of a bracket share few digits
// at the top, where one atomic a lane would serialise).
extern "C" __global__ void __launch_bounds__(256)
multi_digit_counts(const K *keys, usize len, u32 key_order, u64 prefix, u32 shift, unsigned long long *counts) {
    gp::wait_for_prior_grids();
    __shared__ u32 local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    const KeyOrder order(key_order);
    const u32 above = shift + 8;
    const usize stride = (usize)gridDim.x * blockDim.x;
    const usize whole = (len + gp::WARP - 1) / gp::WARP * gp::WARP;  // every lane of a warp iterates alike
    for (usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x; i < whole; i += stride) {
        u32 digit = 256;  // none
        if (i < len) {
            const u64 r = order.ordered(keys[i]);
            if (above >= 64 || (r >> above) == (prefix >> above)) digit = u32(r >> shift) & 0xff;
        }
        const u32 peers = __match_any_sync(0xffffffffu, digit);
        if (digit < 256 && threadIdx.x % gp::WARP == (u32)(__ffs(peers) - 1)) atomicAdd(&local[digit], (u32)__popc(peers));
    }
    __syncthreads();
    if (local[threadIdx.x]) atomicAdd(counts + threadIdx.x, (unsigned long long)local[threadIdx.x]);
}

extern "C" __global__ void multi_add_u64(u64 *x, usize len, u64 value) {
    gp::wait_for_prior_grids();
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) x[i] += value;
}

extern "C" __global__ void multi_gather_u64(const u64 *src, const u64 *positions, usize len, u64 *dst) {
    gp::wait_for_prior_grids();
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) dst[i] = src[positions[i]];
}
