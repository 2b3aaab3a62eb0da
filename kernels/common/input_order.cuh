// What a read of the keys learns of their order, and the verdict on the whole input:
// each block's OrderSeen (neighbours compared as they are read, common/ordered_read.cuh),
// the flags or-ed together over the blocks, then input_order. Apart from the read so
// that the radix sort's control block (radix_sort_control.cuh) names the verdicts
// without the read's code.
#pragma once
#include "common/types.cuh"

namespace gp {

struct OrderSeen {
    bool unsorted = false;      // some neighbours out of the wanted order
    bool not_reversed = false;  // some neighbours not strictly in the opposite order

    // a comes right before b in the input (both ordered)
    template <class U>
    __device__ __forceinline__ void neighbours(U a, U b) {
        unsorted |= a > b;
        not_reversed |= a <= b;
    }
};

// The verdict on a whole input from what every block's OrderSeen reported (the flags
// or-ed together): sort it, it is in order already, or it is in exactly the opposite
// order with no two keys equal (mirror it). The radix plan and the quicksort's first
// level both decide this way.
constexpr u32 INPUT_UNSORTED = 0, INPUT_SORTED = 1, INPUT_REVERSED = 2;
__device__ __forceinline__ u32 input_order(u32 any_unsorted, u32 any_not_reversed) {
    return !any_unsorted ? INPUT_SORTED : !any_not_reversed ? INPUT_REVERSED : INPUT_UNSORTED;
}

}  // namespace gp
