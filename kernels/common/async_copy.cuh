// Copies from global to shared memory that run while the thread goes on (cp.async,
// sm_80 and later): each thread copies its own elements, to any place in shared
// memory, holding no register while they travel. wait_async_copies() then waits for
// the thread's own copies; a barrier after it shows them to the whole block.
#pragma once
#include "common/types.cuh"

namespace gp {

// One element of 4, 8 or 16 bytes, from `src` to `dst` in shared memory.
template <class T>
__device__ __forceinline__ void copy_async(T *dst, const T *src) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16, "cp.async copies 4, 8 or 16 bytes");
    const u32 to = u32(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(to), "l"(src), "n"(sizeof(T)) : "memory");
}

// Waits until every copy this thread started has landed.
__device__ __forceinline__ void wait_async_copies() {
    asm volatile("cp.async.wait_all;" ::: "memory");
}

}  // namespace gp
