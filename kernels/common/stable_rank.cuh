// A key's place in a stable sort of a few keys held in shared memory, by counting: the
// keys before it are the smaller ones and the equal ones at a lower position. One
// thread a key, no barrier of its own; for up to a block of keys this beats a block
// radix sort (top-k's last sort, the segmented top-k's block rows and warp rows).
#pragma once
#include "common/types.cuh"

namespace gp {

// How many of keys[0..count) come before `mine`, the key at position `me`.
template <class U>
__device__ __forceinline__ u32 stable_rank(const U *keys, u32 count, U mine, u32 me) {
    u32 rank = 0;
    for (u32 j = 0; j < count; ++j) {
        const U other = keys[j];
        rank += other < mine || (other == mine && j < me);
    }
    return rank;
}

}  // namespace gp
