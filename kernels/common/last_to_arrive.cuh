// The last block to arrive: blocks that each publish results to global memory count in
// on a counter, and the one that finds every other already counted in goes on to use
// all their results (a grid's last block settling a histogram, the second of a
// quicksort pair copying both sides home). Called by the whole block; the fence before the count carries
// every thread's writes (they are ordered before it by the barrier), and the fence
// after it orders the last block's reads after everyone's writes.
#pragma once
#include "common/types.cuh"

namespace gp {

// Whether this block is the last of `blocks` to count in on *counter (u32 or u64,
// zeroed before the first arrives). Reads of others' results in the last block should
// still go through L2 (__ldcg) where this SM's L1 may hold an older copy.
template <class C>
__device__ __forceinline__ bool last_to_arrive(C *counter, C blocks) {
    static_assert(sizeof(C) == 4 || sizeof(C) == 8, "a u32 or u64 counter");
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(counter, C(1)) == blocks - 1;
    __syncthreads();
    const bool is_last = last;
    if (is_last) __threadfence();
    return is_last;
}

}  // namespace gp
