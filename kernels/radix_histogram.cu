// The radix sort's first kernel (the rest, and the overview, in radix_sort.cu):
//
//   radix_histogram  one read of the keys: the histogram of every digit at once, and
//                    whether the keys are already in the wanted order, or in exactly
//                    the opposite order with no two equal (and, for float keys,
//                    whether any is a NaN); then its last block to finish plans the
//                    passes: each pass's digit starts (scan of its histogram), which
//                    passes can be skipped (every key has the same digit), and where
//                    each pass reads from; written to device memory, so the host never
//                    waits.
//
// The plan was a one-block kernel of its own: on an H200 (ncu, 2026-11-28) 6 µs of a
// 2^20-key sort's 89 (its four scans waited on a global load each), beside a launch.
//
// It does not depend on the values, so this module is instantiated by key width and
// float keys or not alone (-DGP_KEY_BYTES -DGP_KEY_FLOAT, -DGP_VALUE_BYTES=0), and a
// module apart from the passes', so the two compile side by side on a first call.
// Tuning: -DGP_HIST_BLOCK_THREADS -DGP_HIST_PARTS -DGP_ORDER_CHECK_EARLY_OUT
// -DGP_HIST_WARP_VOTE -DGP_HIST_EARLY_START; -DGP_HIST_SHARED_BYTES (the dynamic
// shared memory the host launches the histogram with) and -DGP_CONTROL_BYTES.
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/digit_histogram.cuh"
#include "common/ordered_read.cuh"
#include "common/block_scan.cuh"
#include "common/ops.cuh"
#include "common/last_to_arrive.cuh"
#include "common/warp.cuh"
#include "radix_sort_control.cuh"

constexpr int HIST_BLOCK = GP_HIST_BLOCK_THREADS;

// When the first pass's grid may be scheduled (programmatic launches): 0, once the
// last block plans (every other block has left, as after the plan kernel this
// replaces); 1, at once. At once, its blocks take the SMs the histogram leaves idle
// (a histogram block holds a whole register file), two an SM, and a pass grid short
// of a block an SM stays on those: u64 keys at 2^19, 114 tiles against the 68 SMs
// that 64 histogram blocks leave of an H200's 132: with 1 their sort was ~10% slower
// than with the plan kernel; with 0 (the default) about 3% (H200, 2026-11-28).
#ifndef GP_HIST_EARLY_START
#define GP_HIST_EARLY_START 0
#endif

// ----------------------------------------------------------------------------------
// Histogram and order check
// ----------------------------------------------------------------------------------

// Its counters in dynamic shared memory (GP_HIST_SHARED_BYTES, sized by the host), so
// many copies of them may pass the 48 KiB a static array is held to.
typedef gp::BlockDigitHistogram<HIST_BLOCK, PASSES, RADIX_BITS, GP_HIST_PARTS> Hist;
static_assert(sizeof(Hist::Storage) <= GP_HIST_SHARED_BYTES, "the host launches GP_HIST_SHARED_BYTES");

// The histogram's counter, which also notes whether a float key is a NaN.
struct CountAndSeeNaN {
    typename Hist::Counter count;
    const Order &order;
    bool nan = false;
    template <class U, int N>
    __device__ __forceinline__ void add(const U (&ordered)[N]) {
        count.add(ordered);
        if constexpr (GP_KEY_FLOAT) {
#pragma unroll
            for (int k = 0; k < N; ++k) nan |= order.is_nan_pattern(ordered[k]);
        }
    }
};

// ----------------------------------------------------------------------------------
// Plan: by the histogram's last block; a run of RADIX threads a pass, thread t for digit t % RADIX
// ----------------------------------------------------------------------------------

static_assert(HIST_BLOCK >= RADIX, "a thread a digit value");

// The block scans the counts of PLAN_GROUPS passes at once, a run of RADIX threads a
// pass (u32 keys: all four in one scan; it took four one after another).
constexpr int PLAN_GROUPS = HIST_BLOCK / RADIX;
constexpr int PLAN_ROUNDS = (PASSES + PLAN_GROUPS - 1) / PLAN_GROUPS;

// After every block's counts and verdicts are in Control (gp::last_to_arrive): reads
// them through L2 (this SM's L1 may hold older lines), each thread its digit's count of
// the pass of each round at once.
__device__ __forceinline__ void plan_passes(usize n, Control *ctl) {
    typedef gp::BlockGroupScan<usize, HIST_BLOCK, RADIX> Scan;
    __shared__ typename Scan::Storage scan;
    __shared__ u32 trivial[MAX_PASSES];
    const u32 d = threadIdx.x % RADIX, group = threadIdx.x / RADIX;
    const auto pass_of = [&](int round) { return group < PLAN_GROUPS ? round * PLAN_GROUPS + (int)group : PASSES; };
    usize counts[PLAN_ROUNDS];
#pragma unroll
    for (int r = 0; r < PLAN_ROUNDS; ++r) counts[r] = pass_of(r) < PASSES ? __ldcg(&ctl->hist[pass_of(r)][d]) : 0;
    if (threadIdx.x < MAX_PASSES) trivial[threadIdx.x] = 0;
    __syncthreads();
    // (A pass is trivial when one digit holds every key: that digit's thread says so.
    // No barrier here returns a value that only thread 0 reads: see radix_histogram.)
#pragma unroll
    for (int r = 0; r < PLAN_ROUNDS; ++r) {
        const int p = pass_of(r);
        usize start;
        Scan::exclusive(counts[r], start, gp::SumOp<usize>(), scan);
        if (p < PASSES) {
            ctl->bins[p][d] = start;
            if (counts[r] == n) trivial[p] = 1;
        }
        __syncthreads();  // (the scan storage's reuse, and trivial[] for thread 0)
    }
    if (threadIdx.x == 0) {
        const u32 mode = gp::input_order(__ldcg(&ctl->unsorted), __ldcg(&ctl->not_reversed));
        u32 from_alt = 0, active[MAX_PASSES];
#pragma unroll
        for (int p = 0; p < MAX_PASSES; ++p) {
            active[p] = mode == MODE_DIGITS && p < PASSES && !trivial[p];
            ctl->active[p] = active[p];
            ctl->from_alt[p] = from_alt;
            from_alt ^= active[p];
        }
        ctl->copy_back = from_alt;
        // Which passes come after or before another (they read and store float keys
        // mapped, and pairs packed: see radix_sort.cu).
        u32 ran_before = 0, runs_after = 0;
#pragma unroll
        for (int p = 0; p < MAX_PASSES; ++p) {
            ctl->ran_before[p] = ran_before;
            ran_before |= active[p];
        }
#pragma unroll
        for (int p = MAX_PASSES - 1; p >= 0; --p) {
            ctl->runs_after[p] = runs_after;
            runs_after |= active[p];
        }
        ctl->mode = mode;
    }
}

extern "C" __global__ void __launch_bounds__(HIST_BLOCK)
radix_histogram(const K *keys, usize n, u32 key_order, Control *ctl) {
    gp::wait_for_prior_grids();
    if (GP_HIST_EARLY_START) gp::let_next_grid_start();
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    typename Hist::Storage &hist = *reinterpret_cast<typename Hist::Storage *>(dynamic_smem);
    const Order order(key_order);
    Hist::clear(hist);

    gp::OrderSeen seen;
    CountAndSeeNaN counter{{hist}, order};
    gp::read_ordered_keys<HIST_BLOCK>(keys, n, order, blockIdx.x, gridDim.x, true, counter, seen);
    Hist::flush(&ctl->hist[0][0], hist);
    // The verdicts go out a warp at a time (lane 0 of a warp that saw one), not through
    // block barriers whose value thread 0 alone reads: with the plan below, ptxas sank
    // such a barrier (the NaN one, its predicate the constant false for integer keys)
    // into thread 0's branch, an illegal instruction on the GPU (H200, 2026-11-28).
    // last_to_arrive's fence and barrier order these stores before the plan's reads.
    const bool lane0 = threadIdx.x % gp::WARP == 0;
    if (__any_sync(gp::FULL_MASK, seen.unsorted) && lane0) ctl->unsorted = 1;
    if (__any_sync(gp::FULL_MASK, seen.not_reversed) && lane0) ctl->not_reversed = 1;
    if constexpr (GP_KEY_FLOAT)
        if (__any_sync(gp::FULL_MASK, counter.nan) && lane0) ctl->any_nan = 1;
    if (gp::last_to_arrive(&ctl->hist_blocks_done, gridDim.x)) {
        // (A block that leaves without the trigger counts as having given it.)
        if (!GP_HIST_EARLY_START) gp::let_next_grid_start();
        plan_passes(n, ctl);
    }
}
