// Device-wide scan in one pass: each block takes the next tile by ticket, scans it
// in shared memory and registers (thread-sequential, then a block scan of the
// thread totals),
// publishes the tile's aggregate, gets its exclusive prefix by decoupled look-back
// (common/lookback.cuh, fixed order), and writes the tile out. About 2n words of
// traffic, like a copy. In place works: a tile is read whole before it is written.
//
// Instantiated per element type and operator: -DGP_T=<type> -DGP_OP=gp::SumOp|MinOp|MaxOp
// -DGP_BLOCK_THREADS=.. -DGP_ITEMS=.. -DGP_LOOKBACK_WINDOW=.. (tuning lives in
// src/backend/cuda/scan.rs). One operator a module keeps its cold NVRTC compile short:
// all three in one module took over a second. The running value is the type's
// accumulator (f32 for the 16-bit floats: each output rounded once). A seed (the
// accumulator's bits, when `seeded`) is combined in front of every prefix: the
// multi-rank scan's carry from the ranks before (src/multi/scan.rs).
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/ops.cuh"
#include "common/block_scan.cuh"
#include "common/lookback.cuh"
#include "common/tile_io.cuh"

typedef GP_T T;
typedef gp::Accumulator<T> Acc;
typedef Acc::type A;
typedef GP_OP<A> Op;
constexpr int BLOCK = GP_BLOCK_THREADS;
constexpr int ITEMS = GP_ITEMS;  // per thread
constexpr int WINDOW = GP_LOOKBACK_WINDOW;  // tiles per anchor
typedef gp::TilePrefix<A, WINDOW> TilePrefix;

// A thread's items, VECS 16-byte vectors of its row in shared memory: their total.
template <int VECS>
__device__ __forceinline__ A row_total(const gp::Vec16 *row, Op op) {
    constexpr int PER_VEC = 16 / sizeof(T);
    A total = Op::identity();
#pragma unroll
    for (int k = 0; k < VECS; ++k) {
        T x[PER_VEC];
        memcpy(x, row + k, sizeof(x));
#pragma unroll
        for (int j = 0; j < PER_VEC; ++j) total = op(total, Acc::widen(x[j]));
    }
    return total;
}

// The same items replaced by their scan, `carry` (what comes before them) first.
template <bool EXCLUSIVE, int VECS>
__device__ __forceinline__ void scan_row(gp::Vec16 *row, A carry, Op op) {
    constexpr int PER_VEC = 16 / sizeof(T);
#pragma unroll
    for (int k = 0; k < VECS; ++k) {
        T x[PER_VEC];
        memcpy(x, row + k, sizeof(x));
#pragma unroll
        for (int j = 0; j < PER_VEC; ++j) {
            const A v = Acc::widen(x[j]);
            if (EXCLUSIVE) {
                x[j] = Acc::narrow(carry);
                carry = op(carry, v);
            } else {
                carry = op(carry, v);
                x[j] = Acc::narrow(carry);
            }
        }
        memcpy(row + k, x, sizeof(x));
    }
}

// One tile of B x I elements, taken by ticket; `staged` holds each warp's share of it
// (the kernels below pass static shared memory; scripts/probes/scan-rate.cu passes
// dynamic shared memory for other shapes).
template <bool EXCLUSIVE, int B, int I>
__device__ __forceinline__ void scan_tile(const T *in, T *out, usize n, gp::TileState st, u32 epoch, u64 ticket_base,
                                          u64 seed_bits, u32 seeded, typename gp::WarpTile<T, I>::Storage *staged) {
    Op op;
    typedef gp::BlockScan<A, B> Scan;
    __shared__ typename Scan::Storage scan_storage;
    typedef gp::WarpTile<T, I> WarpTile;
    constexpr usize TILE_ELEMENTS = (usize)B * I;
    __shared__ u32 tile_slot;

    if (threadIdx.x == 0) tile_slot = (u32)(atomicAdd(st.ticket, 1ull) - ticket_base);
    __syncthreads();
    const u32 tile = tile_slot;
    const int warp = threadIdx.x / gp::WARP;
    const usize start = (usize)tile * TILE_ELEMENTS;
    const usize valid = n - start < TILE_ELEMENTS ? n - start : TILE_ELEMENTS;
    const bool vectorize = valid == TILE_ELEMENTS && gp::aligned16(in) && gp::aligned16(out);
    // This warp's part of the tile, and how much of it exists.
    const usize span = (usize)warp * gp::WARP * I;
    const usize span_valid = valid > span ? valid - span : 0;
    typename WarpTile::Storage &mine = staged[warp];

    WarpTile::stage(in + start + span, span_valid, Acc::narrow(Op::identity()), vectorize, mine);
    // The thread's items are read from its row a 16-byte vector at a time, twice,
    // rather than kept live: few registers means more blocks per SM to hide latency.
    gp::Vec16 *row = WarpTile::row(mine);
    const A thread_total = row_total<WarpTile::VECS>(row, op);
    A carry;
    Scan::exclusive(thread_total, carry, op, scan_storage, TilePrefix{st, tile, epoch});
    if (seeded) {  // a multi-rank scan: the ranks before this one come first
        A seed;
        memcpy(&seed, &seed_bits, sizeof(A));
        carry = op(seed, carry);
    }

    scan_row<EXCLUSIVE, WarpTile::VECS>(row, carry, op);
    WarpTile::unstage(out + start + span, span_valid, vectorize, mine);
}

template <bool EXCLUSIVE>
__device__ __forceinline__ void scan_device(const T *in, T *out, usize n, gp::TileState st, u32 epoch, u64 ticket_base,
                                            u64 seed_bits, u32 seeded) {
    __shared__ typename gp::WarpTile<T, ITEMS>::Storage staged[BLOCK / gp::WARP];
    scan_tile<EXCLUSIVE, BLOCK, ITEMS>(in, out, n, st, epoch, ticket_base, seed_bits, seeded, staged);
}

#define GP_SCAN_KERNEL(NAME, EXCLUSIVE)                                                              \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                              \
    NAME(const T *in, T *out, usize n, u64 *aggregate, u64 *inclusive, u64 *ticket, u32 epoch,       \
         u64 ticket_base, u64 seed_bits, u32 seeded) {                                               \
        gp::wait_for_prior_grids();                                                                  \
        scan_device<EXCLUSIVE>(in, out, n, gp::TileState{aggregate, inclusive, ticket}, epoch,       \
                               ticket_base, seed_bits, seeded);                                      \
    }

GP_SCAN_KERNEL(scan_inclusive, false)
GP_SCAN_KERNEL(scan_exclusive, true)
