// Top-k of every row (gpuprims_segmented_topk): for each row of `values`, its k best
// keys in order (ties by lower index), with their indices within the row.
//
//   topk_check   rows given by offsets, or one k a row: a thread a row checks it
//                (offsets decreasing, past the end: the first bad row kept), files it
//                under its class (below) and adds its k to the total, which the host
//                reads back with the counts before anything is written.
//   topk_warp    rows of up to WARP * WARP_ITEMS keys wanting up to WARP_K of them:
//                a warp a row, keys in registers, each result a warp-wide arg-min of
//                (key, index) over the keys not yet taken.
//   topk_block   rows wanting up to CAP keys: a block a row, reading the row from
//                global memory once a digit (a histogram of the keys matching the
//                prefix so far) until the keys ahead of the bucket holding the k-th
//                and the bucket itself fit CAP candidates, then once more to gather
//                them in index order, sorted stably by one block
//                (common/block_radix_sort.cuh).
// Rows wanting more than CAP keys, and rows too long for one block, go row by row
// through the device-wide top-k (src/backend/cuda/segmented_topk.rs).
//
// Keys are compared as ordered patterns (common/radix_key.cuh; descending order
// complements them), so "best" is always the smallest pattern and one module serves
// every dtype of a width. Values are written from the row as they are (bit for bit).
// A row with fewer keys than its k fills its remaining slots with zero bits and the
// index NO_INDEX. Every write is bounded by the output's length, whatever the ks say.
//
// Instantiated per key width and float-ness: -DGP_KEY_BYTES -DGP_KEY_FLOAT and the
// tuning defines below (src/backend/cuda/segmented_topk.rs).
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/warp.cuh"
#include "common/radix_bucket.cuh"
#include "common/block_scan.cuh"
#include "common/block_radix_sort.cuh"

typedef gp::BitsOf<GP_KEY_BYTES>::type U;
typedef gp::KeyOrder<U, GP_KEY_FLOAT != 0> KeyOrder;
constexpr int RADIX_BITS = 8;
constexpr int RADIX = 1 << RADIX_BITS;
constexpr int BITS = GP_KEY_BYTES * 8;
constexpr int WARP_BLOCK = GP_WARP_BLOCK;
constexpr int WARP_ITEMS = GP_WARP_ITEMS;
constexpr u32 WARP_K = GP_WARP_K;
constexpr int BLOCK = GP_BLOCK;
constexpr int SORT_ITEMS = GP_SORT_ITEMS;
constexpr int SMALL_ITEMS = 2;
constexpr int LOADS = GP_LOADS;
constexpr u32 CAP = BLOCK * SORT_ITEMS;
constexpr u32 SMALL_CAP = BLOCK * SMALL_ITEMS;
// Rows longer than this stop refining at CAP candidates (a pass over the row costs
// more than sorting them); shorter ones refine down to SMALL_CAP.
constexpr u64 REFINE_LEN = GP_REFINE_LEN;
constexpr u64 WARP_MAX = (u64)gp::WARP * WARP_ITEMS;
constexpr u64 NO_INDEX = ~0ull;
static_assert(WARP_K <= gp::WARP, "a lane holds one result");
static_assert(BLOCK * LOADS < 65536, "a step's counts fit 16 bits");
static_assert(BLOCK >= 32, "a thread for each key of a row's unaligned head and tail");

// Layout flags from the host (segmented_topk.rs: the same bits).
constexpr u32 RAGGED = 1, OFFSETS_U64 = 2, KS_GIVEN = 4, KS_U64 = 8;
// Classes, in the check's counts.
constexpr u32 CLASS_WARP = 0, CLASS_BLOCK = 1, CLASS_HUGE = 2, CLASSES = 3;
// Row faults (src/backend/mod.rs: TopkRowFault).
constexpr u32 FAULT_DECREASING = 1, FAULT_PAST_END = 2;

// A row as the kernels see it: keys [begin, begin + n), its k, where its results go.
struct Row {
    u64 begin, n, k, base;
};

struct Rows {
    const void *offsets;
    const void *ks;
    const u64 *bases;  // with KS_GIVEN: where each row's results start
    u64 row_len;       // uniform rows
    u64 k;             // without KS_GIVEN
    u32 flags;

    __device__ __forceinline__ u64 offset(u64 i) const {
        return (flags & OFFSETS_U64) ? ((const u64 *)offsets)[i] : ((const u32 *)offsets)[i];
    }
    __device__ __forceinline__ u64 k_of(u64 row) const {
        if (!(flags & KS_GIVEN)) return k;
        return (flags & KS_U64) ? ((const u64 *)ks)[row] : ((const u32 *)ks)[row];
    }
    // Row `row`, clamped to the buffer of `len` keys (no read leaves it whatever the
    // offsets say; bad rows never get this far).
    __device__ __forceinline__ Row at(u64 row, u64 len) const {
        u64 begin, end;
        if (flags & RAGGED) {
            end = offset(row + 1);
            begin = offset(row);
            end = end < len ? end : len;
            begin = begin < end ? begin : end;
        } else {
            begin = row * row_len;
            end = begin + row_len;
        }
        const u64 kk = k_of(row);
        return Row{begin, end - begin, kk, (flags & KS_GIVEN) ? bases[row] : row * k};
    }
};

// The class of a row of n keys wanting k: by how many it gives, m = min(k, n).
__device__ __forceinline__ u32 row_class(u64 n, u64 k, u64 block_max_len) {
    const u64 m = k < n ? k : n;
    if (n <= WARP_MAX && m <= WARP_K) return CLASS_WARP;
    if (m <= CAP && n <= block_max_len) return CLASS_BLOCK;
    return CLASS_HUGE;
}

// Zeroed by the host before topk_check; read back after it.
struct Counters {
    u32 counts[CLASSES];
    u32 pad;
    u64 fault;     // max over bad rows of ~(row << 2 | fault): the lowest row wins
    u64 k_low;     // the ks' low 32 bits, summed
    u64 k_high;    // their high 32 bits, summed (the total is exact past 2^64)
};

// Rows given by offsets or with one k each: checked and filed, a thread a row.
// `lists` holds CLASSES lists of nrows ids.
extern "C" __global__ void __launch_bounds__(256)
topk_check(const void *offsets, const void *ks, u32 flags, u64 row_len, u64 k, u64 len, u64 nrows,
           u64 block_max_len, Counters *ctr, u32 *lists) {
    gp::wait_for_prior_grids();
    const Rows rows{offsets, ks, nullptr, row_len, k, flags};
    const u64 row = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u32 cls = CLASSES;  // none: past the rows, a bad row, or nothing to write
    if (row < nrows) {
        u64 begin = row * row_len, end = begin + row_len;
        if (flags & RAGGED) {
            begin = rows.offset(row);
            end = rows.offset(row + 1);
        }
        const u32 bad = end < begin ? FAULT_DECREASING : end > len ? FAULT_PAST_END : 0u;
        const u64 kk = rows.k_of(row);
        if (bad) atomicMax((unsigned long long *)&ctr->fault, ~(row << 2 | bad));
        else if (kk != 0) cls = row_class(end - begin, kk, block_max_len);
        if (flags & KS_GIVEN) {
            if ((u32)kk) atomicAdd((unsigned long long *)&ctr->k_low, (u64)(u32)kk);
            if (kk >> 32) atomicAdd((unsigned long long *)&ctr->k_high, kk >> 32);
        }
    }
    const u32 lane = threadIdx.x % gp::WARP;
    for (u32 c = 0; c < CLASSES; ++c) {
        const u32 peers = __ballot_sync(gp::FULL_MASK, cls == c);
        if (!peers) continue;
        const int leader = __ffs(peers) - 1;
        u32 at = 0;
        if ((int)lane == leader) at = atomicAdd(&ctr->counts[c], __popc(peers));
        at = __shfl_sync(gp::FULL_MASK, at, leader);
        if (cls == c) lists[c * nrows + at + __popc(peers & ((1u << lane) - 1))] = (u32)row;
    }
}

// Slots [from, k) of a row shorter than its k: zero bits and NO_INDEX, `step` apart
// from `first`.
__device__ __forceinline__ void write_pads(const Row &r, u64 from, u64 first, u64 step, U *out_values,
                                           u64 *out_indices, u64 out_len) {
    for (u64 j = from + first; j < r.k; j += step) {
        const u64 at = r.base + j;
        if (at >= out_len) break;
        out_values[at] = U(0);
        if (out_indices) out_indices[at] = NO_INDEX;
    }
}

// (key, index) a ≺ b: the smaller pattern, then the lower index.
__device__ __forceinline__ bool before(U ka, u32 ia, U kb, u32 ib) { return ka < kb || (ka == kb && ia < ib); }

// A warp a row: the row's keys in registers (key j of a lane is element j * WARP +
// lane), then m rounds, each the warp's (key, index) minimum among keys not taken.
extern "C" __global__ void __launch_bounds__(WARP_BLOCK)
topk_warp(const U *values, u64 len, const void *offsets, const void *ks, const u64 *bases, u32 flags, u64 row_len,
          u64 k, const u32 *ids, u64 count, U *out_values, u64 *out_indices, u64 out_len, u32 key_order) {
    gp::wait_for_prior_grids();
    const u64 w = ((u64)blockIdx.x * WARP_BLOCK + threadIdx.x) / gp::WARP;
    if (w >= count) return;  // the same for the whole warp
    const u32 lane = threadIdx.x % gp::WARP;
    const Rows rows{offsets, ks, bases, row_len, k, flags};
    const Row r = rows.at(ids ? ids[w] : w, len);
    const KeyOrder order(key_order);
    const U *row = values + r.begin;
    const u32 n = (u32)r.n, m = (u32)(r.k < r.n ? r.k : r.n);
    U keys[WARP_ITEMS];
#pragma unroll
    for (int j = 0; j < WARP_ITEMS; ++j) {
        const u32 at = j * gp::WARP + lane;
        keys[j] = at < n ? order.ordered(row[at]) : U(~U(0));
    }
    // A taken or missing key: the largest pattern with an index past every real one.
    u32 taken = 0;  // bit j: keys[j] taken or missing
#pragma unroll
    for (int j = 0; j < WARP_ITEMS; ++j)
        if (j * gp::WARP + lane >= n) taken |= 1u << j;
    u32 mine = ~0u;  // lane t: the index of result t
    for (u32 t = 0; t < m; ++t) {
        U best = U(~U(0));
        u32 at = ~0u;
#pragma unroll
        for (int j = 0; j < WARP_ITEMS; ++j)
            if (!(taken >> j & 1) && (at == ~0u || keys[j] < best)) {  // ascending j: ties keep the lower index
                best = keys[j];
                at = j * gp::WARP + lane;
            }
#pragma unroll
        for (int o = gp::WARP / 2; o > 0; o /= 2) {
            const U kb = gp::shfl_xor(best, o);
            const u32 ib = gp::shfl_xor(at, o);
            if (before(kb, ib, best, at)) {
                best = kb;
                at = ib;
            }
        }
        if (at % gp::WARP == lane) taken |= 1u << (at / gp::WARP);
        if (lane == t) mine = at;
    }
    if (lane < m && r.base + lane < out_len) {
        out_values[r.base + lane] = row[mine];
        if (out_indices) out_indices[r.base + lane] = mine;
    }
    write_pads(r, m, lane, gp::WARP, out_values, out_indices, out_len);
}

typedef gp::BlockRadixSort<U, BLOCK, SORT_ITEMS, RADIX_BITS, u16> BigSort;
typedef gp::BlockRadixSort<U, BLOCK, SMALL_ITEMS, RADIX_BITS, u16> SmallSort;
typedef gp::BlockScan<u32, BLOCK> Scan;
constexpr int WARPS = BLOCK / gp::WARP;

struct BlockStorage {
    union {
        u32 hist[WARPS][RADIX];  // the digit passes: a histogram a warp
        U cand_key[CAP];         // the gather
        typename BigSort::Storage big;
        typename SmallSort::Storage small;
    };
    u32 cand_idx[CAP];  // each candidate's index in the row
    u32 totals[RADIX];
    typename Scan::Storage scan;
    gp::Bucket<u32> chosen;
};

// Counts the digit at `shift` of every key of the row matching `prefix` under `mask`
// into `hist` (a warp's): 16-byte loads over the aligned body of the row, LOADS of
// them in flight a thread, the few keys before and after it one a thread. Every
// thread makes the same calls (warp_count_digit wants the whole warp).
__device__ __forceinline__ void count_digits(const U *row, u32 n, U prefix, U mask, int shift, const KeyOrder &order,
                                             u32 *hist) {
    constexpr int VEC = 16 / (int)sizeof(U);
    auto count = [&](U raw, bool in) {
        const U key = order.ordered(raw);
        gp::warp_count_digit(hist, u32(key >> shift) & (RADIX - 1), in && ((key ^ prefix) & mask) == 0);
    };
    const u32 misaligned = (u32)(((u64)row / sizeof(U)) % VEC);
    const u32 head = min(n, misaligned ? (u32)VEC - misaligned : 0u);
    const u32 vectors = (n - head) / VEC, tail = (n - head) % VEC;
    // The head and the tail: fewer than 2 * VEC <= BLOCK keys, one a thread.
    {
        const u32 t = threadIdx.x;
        const bool in_head = t < head, in_tail = t >= (u32)VEC && t - VEC < tail;
        const u32 at = in_head ? t : head + vectors * VEC + (t - VEC);
        count(in_head || in_tail ? row[at] : U(0), in_head || in_tail);
    }
    const uint4 *body = reinterpret_cast<const uint4 *>(row + head);
    for (u32 step = 0; step < vectors; step += LOADS * BLOCK) {
        uint4 v[LOADS];
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const u32 at = step + u * BLOCK + threadIdx.x;
            v[u] = at < vectors ? body[at] : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const bool in = step + u * BLOCK + threadIdx.x < vectors;
            U keys[VEC];
            memcpy(keys, &v[u], 16);
#pragma unroll
            for (int e = 0; e < VEC; ++e) count(keys[e], in);
        }
    }
}

// The bucket the row's rank `rank` falls in, among keys matching `prefix` under
// `mask`, by digit `shift`: one read of the row, a histogram a warp. Returns the
// bucket (its keys before it in `before`) and its own count.
__device__ __forceinline__ gp::Bucket<u32> digit_pass(const U *row, u32 n, U prefix, U mask, int shift, u32 rank,
                                                      const KeyOrder &order, BlockStorage &s, u32 &bucket_count) {
    for (int d = threadIdx.x; d < WARPS * RADIX; d += BLOCK) (&s.hist[0][0])[d] = 0;
    __syncthreads();
    count_digits(row, n, prefix, mask, shift, order, s.hist[threadIdx.x / gp::WARP]);
    __syncthreads();
    for (int d = threadIdx.x; d < RADIX; d += BLOCK) {
        u32 t = 0;
        for (int w = 0; w < WARPS; ++w) t += s.hist[w][d];
        s.totals[d] = t;
    }
    __syncthreads();
    if (threadIdx.x < gp::WARP) {
        const gp::Bucket<u32> b = gp::find_bucket<u32, RADIX>(s.totals, rank);
        if (threadIdx.x == 0) s.chosen = b;
    }
    __syncthreads();
    const gp::Bucket<u32> b = s.chosen;
    bucket_count = s.totals[b.digit];
    __syncthreads();  // totals and chosen are reused
    return b;
}

// The candidates, in index order, into s.cand_key / s.cand_idx: every key ahead of the
// bucket (masked pattern below `prefix`) and the bucket's keys (equal to it under
// `mask`), of which only the first `need` when the bucket is one key (`exact`).
// Threads read LOADS consecutive keys a step, so one block scan orders a step.
__device__ __forceinline__ u32 gather(const U *row, u32 n, U prefix, U mask, bool exact, u32 need,
                                      const KeyOrder &order, BlockStorage &s) {
    u32 ahead_so_far = 0, bucket_so_far = 0;
    for (u32 step = 0; step < n; step += LOADS * BLOCK) {
        const u32 first = step + threadIdx.x * LOADS;
        U key[LOADS];
        u32 flags = 0, packed = 0;  // flags: bit 2u ahead, 2u + 1 bucket; packed: ahead << 16 | bucket
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            key[u] = first + u < n ? order.ordered(row[first + u]) : U(0);
            const U masked = U(key[u] & mask);
            const bool in = first + u < n;
            const bool ahead = in && masked < prefix, bucket = in && masked == prefix;
            flags |= (u32)ahead << (2 * u) | (u32)bucket << (2 * u + 1);
            packed += (ahead ? 1u << 16 : 0u) + (bucket ? 1u : 0u);
        }
        u32 before_me;
        Scan::exclusive(packed, before_me, gp::SumOp<u32>(), s.scan, gp::NoPrefix());
        u32 ahead = ahead_so_far + (before_me >> 16), bucket = bucket_so_far + (before_me & 0xffff);
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
            const bool is_ahead = flags >> (2 * u) & 1, is_bucket = flags >> (2 * u + 1) & 1;
            if (is_ahead || (is_bucket && (!exact || bucket < need))) {
                const u32 slot = ahead + (exact ? min(bucket, need) : bucket);
                s.cand_key[slot] = key[u];
                s.cand_idx[slot] = first + u;
            }
            ahead += is_ahead;
            bucket += is_bucket;
        }
        // The step's totals: the last thread's inclusive counts.
        __syncthreads();
        if (threadIdx.x == BLOCK - 1) s.totals[0] = before_me + packed;
        __syncthreads();
        ahead_so_far += s.totals[0] >> 16;
        bucket_so_far += s.totals[0] & 0xffff;
        __syncthreads();
    }
    return ahead_so_far + (exact ? min(bucket_so_far, need) : bucket_so_far);
}

// The c candidates (index order) sorted stably by one block, the first m written.
template <class Sort, int ITEMS>
__device__ __forceinline__ void sort_and_write(u32 c, u32 m, const U *row, const Row &r, U *out_values,
                                               u64 *out_indices, u64 out_len, typename Sort::Storage &st,
                                               const u32 *cand_idx, const U *cand_key) {
    U keys[ITEMS];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const u32 e = Sort::element(j);
        keys[j] = e < c ? cand_key[e] : U(~U(0));
    }
    __syncthreads();  // the storage overlaps the candidates' keys
    Sort::sort(keys, c, st);
    for (u32 i = threadIdx.x; i < m; i += BLOCK) {
        const u32 idx = cand_idx[st.from[i]];
        if (r.base + i < out_len) {
            out_values[r.base + i] = row[idx];
            if (out_indices) out_indices[r.base + i] = idx;
        }
    }
}

// A block a row (n < 2^32, m <= CAP): digit passes narrow the candidates to the keys
// ahead of the k-th's bucket plus that bucket, the gather collects them in index
// order, a stable block sort orders them (ties stay in index order).
extern "C" __global__ void __launch_bounds__(BLOCK)
topk_block(const U *values, u64 len, const void *offsets, const void *ks, const u64 *bases, u32 flags, u64 row_len,
           u64 k, const u32 *ids, U *out_values, u64 *out_indices, u64 out_len, u32 key_order) {
    gp::wait_for_prior_grids();
    __shared__ BlockStorage s;
    const Rows rows{offsets, ks, bases, row_len, k, flags};
    const Row r = rows.at(ids ? ids[blockIdx.x] : blockIdx.x, len);
    const KeyOrder order(key_order);
    const U *row = values + r.begin;
    const u32 n = (u32)r.n, m = (u32)(r.k < r.n ? r.k : r.n);
    U prefix = 0, mask = 0;
    bool exact = false;
    u32 ahead = 0, rank = m - 1;
    if (m != 0 && m < n) {
        for (int shift = BITS - RADIX_BITS;; shift -= RADIX_BITS) {
            u32 bucket_count;
            const gp::Bucket<u32> b = digit_pass(row, n, prefix, mask, shift, rank, order, s, bucket_count);
            prefix |= U(U(b.digit) << shift);
            mask |= U(U(RADIX - 1) << shift);
            ahead += b.before;
            rank -= b.before;
            const u32 c = ahead + bucket_count;
            if (shift == 0) {
                exact = true;
                break;
            }
            if (c <= SMALL_CAP || (c <= CAP && n > REFINE_LEN)) break;
        }
    }
    if (m != 0) {
        const u32 c = gather(row, n, prefix, mask, exact, m - ahead, order, s);
        __syncthreads();
        if (c <= SMALL_CAP)
            sort_and_write<SmallSort, SMALL_ITEMS>(c, m, row, r, out_values, out_indices, out_len, s.small,
                                                   s.cand_idx, s.cand_key);
        else
            sort_and_write<BigSort, SORT_ITEMS>(c, m, row, r, out_values, out_indices, out_len, s.big, s.cand_idx,
                                                s.cand_key);
    }
    write_pads(r, m, threadIdx.x, BLOCK, out_values, out_indices, out_len);
}

// U32 ks widened to u64, for the scan of the rows' first slots.
extern "C" __global__ void __launch_bounds__(256) topk_widen(const u32 *ks, u64 *wide, u64 n) {
    gp::wait_for_prior_grids();
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) wide[i] = ks[i];
}
