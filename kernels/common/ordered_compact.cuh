// Stable compaction in one pass over an array: every element is visited once, in
// index order within each thread, and learns how many elements at lower indices were
// picked, so the picked ones can be written out in input order. Two counts travel
// together (common/ops.cuh CountPairSum), for a pick of two kinds (below a threshold,
// and equal to it, say).
//
// Tiles are taken by ticket from a fresh counter (one per run); each tile is staged in
// shared memory (common/tile_io.cuh), counted per thread, and block-scanned with the
// tile's prefix from the decoupled look-back (common/lookback.cuh). The grid may be
// smaller than the tile count: a block takes tiles until they run out.
#pragma once
#include "common/lookback.cuh"
#include "common/ops.cuh"
#include "common/tile_io.cuh"

namespace gp {

template <class U, int BLOCK, int ITEMS, int WINDOW>
struct OrderedCompact {
    typedef WarpTile<U, ITEMS> Tile;
    typedef BlockScan<u64, BLOCK> Scan;
    static constexpr usize TILE = (usize)BLOCK * ITEMS;
    static constexpr int PER_VEC = 16 / sizeof(U);
    struct Storage {
        typename Tile::Storage staged[BLOCK / WARP];
        typename Scan::Storage scan;
        u32 tile;
    };

    // `pick.count(x, i)`: the pair (CountPairSum) element x at index i adds;
    // `pick.emit(x, i, before)`: called for every element, `before` being the pair
    // summed over all elements at lower indices. `ts.ticket` starts at 0.
    template <class Pick>
    __device__ __forceinline__ static void run(const U *src, usize count, TileState ts, u32 epoch, Pick &pick, Storage &s) {
        const CountPairSum op;
        const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
        for (;;) {
            if (threadIdx.x == 0) s.tile = (u32)atomicAdd(ts.ticket, 1ull);
            __syncthreads();
            const u32 tile = s.tile;
            const usize start = (usize)tile * TILE;
            if (start >= count) break;
            const usize valid = count - start < TILE ? count - start : TILE;
            const usize span = (usize)warp * WARP * ITEMS;
            const usize span_valid = valid > span ? valid - span : 0;
            Tile::stage(src + start + span, span_valid, U(0), valid == TILE && aligned16(src), s.staged[warp]);

            // Elements of this thread: first .. first + ITEMS - 1, those below count.
            const usize first = start + span + (usize)lane * ITEMS;
            const Vec16 *row = Tile::row(s.staged[warp]);
            u64 mine = 0;
#pragma unroll
            for (int v = 0; v < Tile::VECS; ++v) {
                U x[PER_VEC];
                memcpy(x, row + v, sizeof(x));
#pragma unroll
                for (int j = 0; j < PER_VEC; ++j) {
                    const usize i = first + v * PER_VEC + j;
                    if (i < count) mine = op(mine, pick.count(x[j], i));
                }
            }
            u64 before;
            Scan::exclusive(mine, before, op, s.scan, TilePrefix<u64, WINDOW>{ts, tile, epoch});
#pragma unroll
            for (int v = 0; v < Tile::VECS; ++v) {
                U x[PER_VEC];
                memcpy(x, row + v, sizeof(x));
#pragma unroll
                for (int j = 0; j < PER_VEC; ++j) {
                    const usize i = first + v * PER_VEC + j;
                    if (i < count) {
                        pick.emit(x[j], i, before);
                        before = op(before, pick.count(x[j], i));
                    }
                }
            }
            __syncthreads();  // the staged tile and the tile slot are reused
        }
    }
};

}  // namespace gp
