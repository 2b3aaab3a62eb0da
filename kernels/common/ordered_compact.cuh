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

    // `pick.kind(x)` (called once per element, in any order): 0 to skip the element,
    // 1 or 2 to pick it as the first or the second kind. `pick.emit(x, i, kind,
    // before)` is then called for every picked element x at index i, `before` being
    // the pair of counts of each kind picked at lower indices. `ts.ticket` starts at 0.
    template <class Pick>
    __device__ __forceinline__ static void run(const U *src, usize count, TileState ts, u32 epoch, Pick &pick, Storage &s) {
        static_assert(ITEMS <= 64, "a thread's picks fit one 64-bit mask per kind");
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

            // This thread's elements: first .. first + ITEMS - 1, of which `mine` exist.
            const usize first = start + span + (usize)lane * ITEMS;
            const int mine = span_valid > (usize)lane * ITEMS ? (int)min(span_valid - (usize)lane * ITEMS, (usize)ITEMS) : 0;
            const Vec16 *row = Tile::row(s.staged[warp]);
            u64 picked[2] = {0, 0};  // bit j: element j was picked as kind 1 / kind 2
#pragma unroll
            for (int v = 0; v < Tile::VECS; ++v) {
                U x[PER_VEC];
                memcpy(x, row + v, sizeof(x));
#pragma unroll
                for (int j = 0; j < PER_VEC; ++j) {
                    const int at = v * PER_VEC + j;
                    const u32 kind = at < mine ? pick.kind(x[j]) : 0;
                    picked[0] |= (u64)(kind == 1) << at;
                    picked[1] |= (u64)(kind == 2) << at;
                }
            }
            u64 before;
            Scan::exclusive(CountPairSum::pack(__popcll(picked[0]), __popcll(picked[1])), before, CountPairSum(), s.scan,
                            TilePrefix<u64, WINDOW>{ts, tile, epoch});
            // Picks are rare in selection: visit only them.
            const U *items = reinterpret_cast<const U *>(row);
            for (u64 left = picked[0] | picked[1]; left; left &= left - 1) {
                const int at = __ffsll((long long)left) - 1;
                const u64 lower = (1ull << at) - 1;
                const u32 kind = (picked[0] >> at & 1) ? 1 : 2;
                pick.emit(items[at], first + at, kind,
                          CountPairSum().operator()(before, CountPairSum::pack(__popcll(picked[0] & lower), __popcll(picked[1] & lower))));
            }
            __syncthreads();  // the staged tile and the tile slot are reused
        }
    }
};

}  // namespace gp
