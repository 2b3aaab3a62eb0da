// Device-wide scan in one pass: each block takes the next tile by ticket, scans it
// in registers (thread-sequential, then a block scan of the thread totals),
// publishes the tile's aggregate, gets its exclusive prefix by decoupled look-back
// (common/lookback.cuh, fixed order), and writes the tile out. About 2n words of
// traffic, like a copy. In place works: a tile is read whole before it is written.
//
// Instantiated per element type: -DGP_T=<type> -DGP_BLOCK_THREADS=.. -DGP_ITEMS=..
// (tuning lives in src/backend/cuda/scan.rs).
#include "common/types.cuh"
#include "common/ops.cuh"
#include "common/block_scan.cuh"
#include "common/lookback.cuh"
#include "common/tile_io.cuh"

typedef GP_T T;
constexpr int BLOCK = GP_BLOCK_THREADS;
constexpr int ITEMS = GP_ITEMS;  // per thread
constexpr usize TILE = (usize)BLOCK * ITEMS;

template <class Op, bool EXCLUSIVE>
__device__ __forceinline__ void scan_device(const T *in, T *out, usize n, gp::TileState<T> st, u32 epoch, u64 ticket_base) {
    Op op;
    typedef gp::BlockScan<T, BLOCK> Scan;
    typedef gp::LookBack<T, BLOCK> LookBack;
    __shared__ typename Scan::Storage scan_storage;
    __shared__ typename LookBack::Storage lookback_storage;
    __shared__ typename gp::WarpTranspose<T, ITEMS>::Storage transpose[BLOCK / gp::WARP];
    __shared__ u32 tile_slot;

    if (threadIdx.x == 0) tile_slot = (u32)(atomicAdd(st.ticket, 1ull) - ticket_base);
    __syncthreads();
    const u32 tile = tile_slot;
    const usize start = (usize)tile * TILE;
    const usize valid = n - start < TILE ? n - start : TILE;
    const bool vectorize = valid == TILE && gp::aligned16(in) && gp::aligned16(out);

    T x[ITEMS];
    gp::load_blocked<T, ITEMS>(in + start, valid, x, Op::identity(), vectorize, transpose[threadIdx.x / gp::WARP]);

    T thread_total = x[0];
#pragma unroll
    for (int j = 1; j < ITEMS; ++j) thread_total = op(thread_total, x[j]);
    T thread_prefix, tile_total;
    Scan::exclusive(thread_total, thread_prefix, tile_total, op, scan_storage);

    if (threadIdx.x == 0) LookBack::publish_aggregate(st, tile, tile_total, epoch);
    T carry = thread_prefix;
    if (tile > 0) {
        const T tile_prefix = LookBack::exclusive_prefix(st, tile, tile_total, epoch, op, lookback_storage);
        carry = threadIdx.x == 0 ? tile_prefix : op(tile_prefix, thread_prefix);
    }

#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const T v = x[j];
        if (EXCLUSIVE) {
            x[j] = carry;
            carry = op(carry, v);
        } else {
            carry = op(carry, v);
            x[j] = carry;
        }
    }
    gp::store_blocked<T, ITEMS>(out + start, valid, x, vectorize, transpose[threadIdx.x / gp::WARP]);
}

#define GP_SCAN_KERNEL(NAME, OP, EXCLUSIVE)                                                          \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                              \
    NAME(const T *in, T *out, usize n, u32 *status, T *aggregate, T *window_total, T *inclusive,     \
         u64 *ticket, u32 epoch, u64 ticket_base) {                                                  \
        gp::TileState<T> st{status, aggregate, window_total, inclusive, ticket};                     \
        scan_device<OP<T>, EXCLUSIVE>(in, out, n, st, epoch, ticket_base);                           \
    }

GP_SCAN_KERNEL(scan_sum_inclusive, gp::SumOp, false)
GP_SCAN_KERNEL(scan_sum_exclusive, gp::SumOp, true)
GP_SCAN_KERNEL(scan_min_inclusive, gp::MinOp, false)
GP_SCAN_KERNEL(scan_min_exclusive, gp::MinOp, true)
GP_SCAN_KERNEL(scan_max_inclusive, gp::MaxOp, false)
GP_SCAN_KERNEL(scan_max_exclusive, gp::MaxOp, true)
