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
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/warp.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type K;
typedef gp::KeyOrder<K, GP_KEY_FLOAT> KeyOrder;

extern "C" __global__ void multi_count_before(const K *keys, usize len, u32 key_order, const u64 *probes, usize nprobes,
                                              u64 *counts) {
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
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) out[i] = keys[i * (len / count) + i * (len % count) / count];
}

// counts[0] += keys below lo, counts[1] += keys in [lo, hi]; the latter appended to
// out while fewer than cap are there. A warp appends its lanes' keys with one atomic.
extern "C" __global__ void multi_band(const K *keys, usize len, u32 key_order, u64 lo, u64 hi, K *out, usize cap,
                                      unsigned long long *counts) {
    const KeyOrder order(key_order);
    const usize stride = (usize)gridDim.x * blockDim.x;
    const u32 lane = threadIdx.x % gp::WARP;
    u64 below = 0;
    // Whole warps iterate together (the ballot needs every lane).
    const usize first = (usize)blockIdx.x * blockDim.x + threadIdx.x - lane;
    for (usize base = first; base < len; base += stride) {
        const usize i = base + lane;
        bool inside = false;
        if (i < len) {
            const K key = keys[i];
            const u64 r = order.ordered(key);
            below += r < lo;
            inside = r >= lo && r <= hi;
        }
        const u32 ballot = __ballot_sync(0xffffffffu, inside);
        if (ballot == 0) continue;
        unsigned long long at = 0;
        if (lane == 0) at = atomicAdd(counts + 1, (unsigned long long)__popc(ballot));
        at = __shfl_sync(0xffffffffu, at, 0) + __popc(ballot & ((1u << lane) - 1));
        if (inside && at < cap) out[at] = keys[i];
    }
    for (int d = gp::WARP / 2; d > 0; d /= 2) below += __shfl_down_sync(0xffffffffu, below, d);
    if (lane == 0 && below) atomicAdd(counts, (unsigned long long)below);
}

extern "C" __global__ void __launch_bounds__(256)
multi_digit_counts(const K *keys, usize len, u32 key_order, u64 prefix, u32 shift, unsigned long long *counts) {
    __shared__ u32 local[256];
    local[threadIdx.x] = 0;
    __syncthreads();
    const KeyOrder order(key_order);
    const u32 above = shift + 8;
    const usize stride = (usize)gridDim.x * blockDim.x;
    for (usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x; i < len; i += stride) {
        const u64 r = order.ordered(keys[i]);
        if (above >= 64 || (r >> above) == (prefix >> above)) atomicAdd(&local[(r >> shift) & 0xff], 1u);
    }
    __syncthreads();
    if (local[threadIdx.x]) atomicAdd(counts + threadIdx.x, (unsigned long long)local[threadIdx.x]);
}

extern "C" __global__ void multi_add_u64(u64 *x, usize len, u64 value) {
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) x[i] += value;
}

extern "C" __global__ void multi_gather_u64(const u64 *src, const u64 *positions, usize len, u64 *dst) {
    const usize i = (usize)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) dst[i] = src[positions[i]];
}
