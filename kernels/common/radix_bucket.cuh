// Which bucket of a digit histogram holds a given rank: the step every radix select
// takes after counting a digit (the one-block select over samples, and the last block
// of each device-wide digit pass). One block: a block scan of the counts, then the
// one thread whose bucket spans the rank says so.
#pragma once
#include "common/block_scan.cuh"
#include "common/ops.cuh"

namespace gp {

template <class C>
struct Bucket {
    u32 digit;
    C before;  // elements in the buckets below it
};

template <class C, int RADIX, int BLOCK>
struct RadixBucket {
    static_assert(RADIX <= BLOCK, "one thread per bucket");
    typedef BlockScan<C, BLOCK> Scan;
    struct Storage {
        typename Scan::Storage scan;
        Bucket<C> found;
    };

    // `counts` (RADIX entries, any memory the block can read) hold at least rank + 1
    // elements in all. Every thread receives the bucket; ends with a barrier.
    __device__ __forceinline__ static Bucket<C> find(const C *counts, C rank, Storage &s) {
        const C mine = threadIdx.x < RADIX ? counts[threadIdx.x] : C(0);
        C before;
        Scan::exclusive(mine, before, SumOp<C>(), s.scan, NoPrefix());
        if (threadIdx.x < RADIX && before <= rank && rank < before + mine) s.found = Bucket<C>{threadIdx.x, before};
        __syncthreads();
        const Bucket<C> b = s.found;
        __syncthreads();
        return b;
    }
};

}  // namespace gp
