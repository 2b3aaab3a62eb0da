// Decoupled look-back (Merrill & Garland) with a fixed combination order and no
// serial chain.
//
// Tiles are grouped in windows of WINDOW tiles; tile m*WINDOW is anchor m.
//  - Every tile publishes its aggregate as soon as it has it.
//  - Anchor m (m >= 1) sums the aggregates of the tiles of its window
//      S_m = agg((m-1)W+1) op ... op agg(mW-1)     (fixed block-wide tree)
//    and publishes the window total B_m = S_m op agg(mW) at once. B_0 = agg(0).
//  - Anchor m's exclusive prefix is B_0 op ... op B_(m-1) op S_m, the B's folded in a
//    fixed order; it publishes its inclusive prefix (that op agg(mW)).
//  - Any other tile i, after anchor a: inclusive(a) op agg(a+1) op ... op agg(i-1).
// Every prefix is a fixed formula, so float scans repeat bit for bit (a look-back
// that stops at whichever predecessor happens to be ready would not); and no anchor
// waits for the previous anchor, so latency does not pile up along the input.
//
// Status words carry a run epoch, so the state needs no clearing between runs:
// status = epoch << 2 | stage; stages rise: 1 aggregate, 2 window total, 3 inclusive.
// Tiles take their index from a ticket counter (index = ticket - base), so every
// tile a block waits on belongs to a block that is already running.
#pragma once
#include "common/block_reduce.cuh"

namespace gp {

constexpr u32 STAGE_AGGREGATE = 1;
constexpr u32 STAGE_WINDOW_TOTAL = 2;
constexpr u32 STAGE_INCLUSIVE = 3;

template <class T>
struct TileState {
    u32 *status;         // one word per tile
    T *aggregate;        // one value per tile
    T *window_total;     // one value per anchor
    T *inclusive;        // one value per anchor
    u64 *ticket;         // monotone counter shared by all runs
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
    static constexpr u32 WINDOW = BLOCK;  // one thread reads one tile of the window
    typedef BlockReduce<T, BLOCK> Reduce;
    struct Storage {
        typename Reduce::Storage reduce;
        T prefix;
    };

    // Thread 0: the tile's aggregate; tile 0 is complete with it.
    __device__ __forceinline__ static void publish_aggregate(const TileState<T> &st, u32 tile, T aggregate, u32 epoch) {
        if (tile == 0) {
            st.window_total[0] = aggregate;
            st.inclusive[0] = aggregate;
        }
        publish(st.aggregate + tile, aggregate, st.status + tile, epoch << 2 | (tile == 0 ? STAGE_INCLUSIVE : STAGE_AGGREGATE));
    }

    // Exclusive prefix of `tile` (> 0), received by every thread. Anchors also
    // publish their window total and inclusive prefix on the way.
    template <class Op>
    __device__ __forceinline__ static T exclusive_prefix(const TileState<T> &st, u32 tile, T aggregate, u32 epoch, Op op, Storage &s) {
        const bool anchor = tile % WINDOW == 0;
        const u32 first = anchor ? tile - WINDOW + 1 : tile / WINDOW * WINDOW + 1;
        const u32 count = tile - first;  // window tiles first .. tile-1
        T v = Op::identity();
        if (threadIdx.x < count) {
            const u32 j = first + threadIdx.x;
            wait_for(st.status + j, epoch << 2 | STAGE_AGGREGATE);
            v = load_published(st.aggregate + j);
        }
        const T window = Reduce::all(v, op, s.reduce);

        if (!anchor) {
            if (threadIdx.x == 0) {
                const u32 a = tile / WINDOW * WINDOW;
                wait_for(st.status + a, epoch << 2 | STAGE_INCLUSIVE);
                const T base = load_published(st.inclusive + a / WINDOW);
                s.prefix = count == 0 ? base : op(base, window);
            }
            __syncthreads();
            return s.prefix;
        }

        const u32 m = tile / WINDOW;
        if (threadIdx.x == 0)
            publish(st.window_total + m, op(window, aggregate), st.status + tile, epoch << 2 | STAGE_WINDOW_TOTAL);
        // B_0 .. B_(m-1): thread t folds B_t, B_(t+BLOCK), ... in order, then a fixed tree.
        T b = Op::identity();
        for (u32 j = threadIdx.x; j < m; j += BLOCK) {
            wait_for(st.status + j * WINDOW, epoch << 2 | STAGE_WINDOW_TOTAL);
            b = op(b, load_published(st.window_total + j));
        }
        const T before = Reduce::all(b, op, s.reduce);
        const T prefix = op(before, window);
        if (threadIdx.x == 0)
            publish(st.inclusive + m, op(prefix, aggregate), st.status + tile, epoch << 2 | STAGE_INCLUSIVE);
        return prefix;
    }
};

}  // namespace gp
