// A warp's slots in an output shared by the whole grid, reserved a chunk (a power of
// two of slots) at a time from one counter: a warp places a step's picks without a
// block scan or a barrier, and the counter sees one atomic a chunk instead of one a
// tile. The order of the picks across warps is lost, so it serves outputs whose order
// does not matter (select_kth's bands, one GPU's and the group's). A warp's unused
// slots at the end are holes, filled with a key the caller gives.
#pragma once
#include "common/ops.cuh"
#include "common/types.cuh"
#include "common/warp.cuh"

namespace gp {

struct WarpSlots {
    u64 at = 0;    // the warp's next reserved slot (the same in every lane)
    u32 room = 0;  // reserved slots from `at` on (fewer than a chunk between steps)

    // Where a step's picks go: the lanes' picks in lane order, `before` of them ahead of
    // this lane's; the first `room` go to [at, at + room), the rest to [fresh, ...).
    struct Step {
        u64 at, fresh;
        u32 room, before;
        __device__ __forceinline__ u64 slot(u32 p) const { return p < room ? at + p : fresh + (p - room); }
    };

    // Called by the whole warp, each lane with its count of picks (a step's picks in
    // all fit in 32 bits). Lane 0 reserves whole chunks when they outgrow the room.
    __device__ __forceinline__ Step take(u32 mine, u64 *counter, u32 chunk) {
        const u32 inclusive = warp_inclusive_scan(mine, SumOp<u32>());
        const u32 total = shfl(inclusive, WARP - 1);
        Step step{at, 0, room, inclusive - mine};
        if (total > room) {
            const u32 want = (total - room + chunk - 1) & ~(chunk - 1);
            u64 fresh = 0;
            if (threadIdx.x % WARP == 0) fresh = atomicAdd((unsigned long long *)counter, (unsigned long long)want);
            step.fresh = shfl(fresh, 0);
            at = step.fresh + (total - room);
            room = want - (total - room);
        } else {
            at += total;
            room -= total;
        }
        return step;
    }

    // The end: the warp's unused slots (below `capacity`) filled with `hole` and
    // counted in *holes. Callers make the hole a key at or above every pick, so rank r
    // among the picks is rank r among all the slots.
    template <class T>
    __device__ __forceinline__ void fill_holes(T hole, T *out, usize capacity, u64 *holes) const {
        for (u32 i = threadIdx.x % WARP; i < room; i += WARP)
            if (at + i < capacity) out[at + i] = hole;
        if (threadIdx.x % WARP == 0 && room) atomicAdd(holes, (u64)room);
    }
};

// A lane's picks (bit i of `picked`: in[first + i]) copied to its step's slots, from
// its place `before` on; slots at or past `capacity` are dropped (the counter, past it,
// tells the caller).
template <class T>
__device__ __forceinline__ void copy_picks_to_slots(const WarpSlots::Step &step, const T *in, usize first, u64 picked, T *out,
                                                    usize capacity) {
    u32 p = step.before;
    for (u64 left = picked; left; left &= left - 1, ++p) {
        const T x = in[first + __ffsll((long long)left) - 1];
        const u64 to = step.slot(p);
        if (to < capacity) out[to] = x;
    }
}

}  // namespace gp
