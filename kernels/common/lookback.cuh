// Decoupled look-back (Merrill & Garland) with a fixed combination order.
//
// Each tile publishes its aggregate as soon as it has it. Every WINDOW-th tile (an
// anchor) also publishes its inclusive prefix. The exclusive prefix of tile i is
//     inclusive(anchor) op aggregate(anchor+1) op ... op aggregate(i-1),
// with anchor the last multiple of WINDOW below i, and the window combined by a
// fixed block-wide tree. The formula does not depend on timing, so float scans
// repeat bit for bit, unlike a look-back that stops at whichever predecessor
// happens to be ready.
//
// Status words carry a run epoch, so the state needs no clearing between runs:
// status = epoch << 2 | stage, stage 1 = aggregate ready, 2 = inclusive ready.
// Tiles take their index from a ticket counter (index = ticket - base), so every
// tile a block waits on belongs to a block that is already running.
#pragma once
#include "common/block_reduce.cuh"

namespace gp {

constexpr u32 STAGE_AGGREGATE = 1;
constexpr u32 STAGE_INCLUSIVE = 2;

template <class T>
struct TileState {
    u32 *status;      // one word per tile
    T *aggregate;     // one value per tile
    T *inclusive;     // one value per tile (written by anchors)
    u64 *ticket;      // monotone counter shared by all runs
};

__device__ __forceinline__ u32 load_acquire(const u32 *p) {
    u32 v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_relaxed(u32 *p, u32 v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Reads a value another block published (through L2, never a stale L1 line).
template <class T>
__device__ __forceinline__ T load_published(const T *p) {
    if constexpr (sizeof(T) == 8) {
        return bit_cast<T>(__ldcg(reinterpret_cast<const unsigned long long *>(p)));
    } else if constexpr (sizeof(T) == 4) {
        return bit_cast<T>(__ldcg(reinterpret_cast<const unsigned int *>(p)));
    } else if constexpr (sizeof(T) == 2) {
        return bit_cast<T>(__ldcg(reinterpret_cast<const unsigned short *>(p)));
    } else {
        return bit_cast<T>(__ldcg(reinterpret_cast<const unsigned char *>(p)));
    }
}

// Value first, then a fence, then the status word that announces it.
template <class T>
__device__ __forceinline__ void publish(T *slot, T value, u32 *status, u32 word) {
    *slot = value;
    __threadfence();
    store_relaxed(status, word);
}

__device__ __forceinline__ void wait_for(const u32 *status, u32 word) {
    while (load_acquire(status) < word) __nanosleep(20);
}

template <class T, int BLOCK>
struct LookBack {
    static constexpr u32 WINDOW = BLOCK;  // one thread reads one predecessor
    struct Storage {
        typename BlockReduce<T, BLOCK>::Storage reduce;
        T prefix;
    };

    __device__ __forceinline__ static bool is_anchor(u32 tile) { return tile % WINDOW == 0; }

    // Publishes the tile's aggregate (tile 0: also its inclusive prefix). Thread 0.
    __device__ __forceinline__ static void publish_aggregate(const TileState<T> &st, u32 tile, T aggregate, u32 epoch) {
        const u32 stage = tile == 0 ? STAGE_INCLUSIVE : STAGE_AGGREGATE;
        if (tile == 0) st.inclusive[0] = aggregate;
        publish(st.aggregate + tile, aggregate, st.status + tile, epoch << 2 | stage);
    }

    // Exclusive prefix of `tile` (> 0), received by every thread.
    template <class Op>
    __device__ __forceinline__ static T exclusive_prefix(const TileState<T> &st, u32 tile, u32 epoch, Op op, Storage &s) {
        const u32 anchor = (tile - 1) / WINDOW * WINDOW;
        const u32 count = tile - 1 - anchor;  // window tiles anchor+1 .. tile-1
        T v = Op::identity();
        if (threadIdx.x < count) {
            const u32 j = anchor + 1 + threadIdx.x;
            wait_for(st.status + j, epoch << 2 | STAGE_AGGREGATE);
            v = load_published(st.aggregate + j);
        }
        const T window = BlockReduce<T, BLOCK>::all(v, op, s.reduce);
        if (threadIdx.x == 0) {
            wait_for(st.status + anchor, epoch << 2 | STAGE_INCLUSIVE);
            s.prefix = count == 0 ? load_published(st.inclusive + anchor)
                                  : op(load_published(st.inclusive + anchor), window);
        }
        __syncthreads();
        return s.prefix;
    }

    // Anchors publish their inclusive prefix for the tiles after them. Thread 0.
    __device__ __forceinline__ static void publish_inclusive(const TileState<T> &st, u32 tile, T inclusive, u32 epoch) {
        publish(st.inclusive + tile, inclusive, st.status + tile, epoch << 2 | STAGE_INCLUSIVE);
    }
};

}  // namespace gp
