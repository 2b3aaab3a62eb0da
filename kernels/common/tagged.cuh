// Values one block hands to others through global memory, as epoch-tagged words: a
// 64-bit word holds the run's epoch in its high half and 32 bits of the value in its
// low half (8-byte values take two words). A word is written and read whole, so no
// fence has to order a value before a status flag, a reader needs one round trip, and
// words left by earlier runs carry other epochs: the memory never needs clearing
// between runs (the host clears it before the 32-bit epoch would wrap).
#pragma once
#include "common/types.cuh"

namespace gp {

__device__ __forceinline__ u64 load_relaxed(const u64 *p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void store_relaxed(u64 *p, u64 v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// A store the host sees (mapped host memory it polls).
__device__ __forceinline__ void store_relaxed_system(u64 *p, u64 v) {
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// A value of T as it travels between blocks: WORDS tagged words.
template <class T>
struct Tagged {
    static constexpr int WORDS = sizeof(T) > 4 ? 2 : 1;
    u64 w[WORDS];

    // Word k of v, tagged with `epoch`.
    __device__ __forceinline__ static u64 word(T v, int k, u32 epoch) {
        const u64 tag = (u64)epoch << 32;
        if constexpr (WORDS == 2) {
            const u64 bits = bit_cast<u64>(v);
            return tag | (k == 0 ? bits & 0xffffffffu : bits >> 32);
        } else if constexpr (sizeof(T) == 4) {
            return tag | bit_cast<u32>(v);
        } else {
            return tag | (typename UnsignedOf<T>::type)v;
        }
    }

    // `slot`: the value's first word.
    __device__ __forceinline__ static void publish(u64 *slot, T v, u32 epoch) {
#pragma unroll
        for (int k = 0; k < WORDS; ++k) store_relaxed(slot + k, word(v, k, epoch));
    }

    // As publish, into mapped host memory: the host polls the words and takes the value
    // once each carries its epoch (no fence, no flag, no wait for the stream).
    __device__ __forceinline__ static void publish_to_host(u64 *slot, T v, u32 epoch) {
#pragma unroll
        for (int k = 0; k < WORDS; ++k) store_relaxed_system(slot + k, word(v, k, epoch));
    }

    // Starts reading the value at `slot`; ready() says whether it has arrived.
    __device__ __forceinline__ void issue(const u64 *slot) {
#pragma unroll
        for (int k = 0; k < WORDS; ++k) w[k] = load_relaxed(slot + k);
    }

    __device__ __forceinline__ bool ready(u32 epoch) const {
        bool ok = true;
#pragma unroll
        for (int k = 0; k < WORDS; ++k) ok = ok && u32(w[k] >> 32) == epoch;
        return ok;
    }

    // The value once ready().
    __device__ __forceinline__ T value() const {
        if constexpr (WORDS == 2) {
            return bit_cast<T>((w[0] & 0xffffffffu) | (w[1] << 32));
        } else if constexpr (sizeof(T) == 4) {
            return bit_cast<T>(u32(w[0]));
        } else {
            return T(typename UnsignedOf<T>::type(w[0]));
        }
    }

    // Waits for the value at `slot` published in run `epoch`.
    __device__ __forceinline__ static T wait(const u64 *slot, u32 epoch) {
        Tagged t;
        t.issue(slot);
        while (!t.ready(epoch)) {
            __nanosleep(32);
            t.issue(slot);
        }
        return t.value();
    }
};

}  // namespace gp
