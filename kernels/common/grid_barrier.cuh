// A barrier across a whole grid, for kernels whose blocks are all resident at once
// (launched cooperatively: the host's launch_cooperative), so a block that waits
// never keeps a later one from starting. It lets one launch do several steps that
// each need every block's results of the step before (a digit's histogram summed over
// the grid, then the bucket every block goes on with), where a launch per step would
// cost a launch gap and a grid's ramp each time.
#pragma once
#include "common/types.cuh"

namespace gp {

// Called by every thread of every block, the same number of times. `arrived` counts
// the grid's arrivals over the kernel's life (zero at launch); the n-th barrier (from
// 1) passes once n * gridDim.x blocks have arrived. Writes (atomics included) made
// before the barrier are visible after it; reads of them should go through L2
// (__ldcg), as this SM's L1 may hold an older copy.
__device__ __forceinline__ void grid_barrier(u64 *arrived, u32 nth) {
    __syncthreads();  // the block's writes come before thread 0's fence
    if (threadIdx.x == 0) {
        const u64 target = u64(nth) * gridDim.x;
        __threadfence();  // the block's writes before its arrival (cumulative over the barrier)
        atomicAdd((unsigned long long *)arrived, 1ull);
        for (;;) {
            u64 seen;
            asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(seen) : "l"(arrived) : "memory");
            if (seen >= target) break;
            __nanosleep(32);
        }
    }
    __syncthreads();  // the acquire's view, to the whole block
}

}  // namespace gp
