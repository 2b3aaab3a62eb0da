// Programmatic dependent launch (sm_90 and later): a kernel launched with the
// programmatic-stream-serialization attribute (launch.pdl, src/backend/cuda/launch.rs)
// may be scheduled before the kernel ahead of it in the stream has finished, so its
// launch and its blocks' start overlap that kernel's tail instead of following it.
// Such a kernel must not touch memory the kernel ahead writes or reads until
// wait_for_prior_grids() returns (that kernel complete, its writes visible). Every
// kernel of the library calls it first (a test in launch.rs checks), so any launch may
// carry the attribute.
//
// Both are compiled in only for modules built for programmatic launches (-DGP_PDL=1,
// added with the knob); otherwise the kernels are as they were.
#pragma once

#ifndef GP_PDL
#define GP_PDL 0
#endif

namespace gp {

__device__ __forceinline__ void wait_for_prior_grids() {
#if GP_PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the next kernel of the stream be scheduled now (it still waits for this one
// in wait_for_prior_grids). For kernels whose whole grid is resident at once: their
// successor's blocks then take SMs as this grid's blocks leave, and steal no slot
// from a later wave of this grid, for there is none. The radix sort's and selection's
// kernels call it: their grids are one block or sized to what is resident (but for
// the radix passes with one tile a block, -DGP_ONE_TILE_BLOCKS=1, whose successor
// then starts once their last wave has, as every block must call it first). Only in
// modules built for programmatic launches: otherwise a caller's own kernel launched
// so after ours would be let in early, which it may not expect.
__device__ __forceinline__ void let_next_grid_start() {
#if GP_PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace gp
