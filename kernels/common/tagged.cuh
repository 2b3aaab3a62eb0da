// Values one block hands to others through global memory, as tagged words: a 64-bit
// word holds a tag in its high half and 32 bits of the value in its low half (8-byte
// values take two words). A word is written and read whole, so no fence has to order a
// value before a status flag, and a reader needs one round trip.
//
// The one tagging scheme (every kernel that publishes through the context's shared
// sync memory uses it; the host side is SyncState in src/backend/cuda/context.rs):
// - The host hands each run (one launch, or the launches that share one look-back) a
//   range of tags of its own, [first, first + n): n = 1 for a plain value, 2 for a word
//   that also says whether it is final (DigitLookBack: first = partial, first + 1 =
//   inclusive). The next run's range starts after this one's end.
// - A word carries one tag of its run's range (kernels call the first its epoch); a reader accepts a word only when its
//   tag lies in the reader's own range (RunTags::owns).
// - So a word left by any earlier run, on any primitive, carries a tag below the
//   current range and is never taken for the current run's; memory never needs
//   clearing between runs. Zeroed memory carries tag 0, which no run is given. Before
//   the 32-bit tags would wrap, the host clears the memory and starts again at 1.
// (A run that derived its flag tags by arithmetic on a shared counter, 2 * epoch +
// flag, met the tags of later runs: issue 36.)
//
// Values handed to the host (publish_to_host) use the same word format, with tags
// from the host-value counter (CudaShared::begin_host_value) in the pinned slot.
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

// The tags of one run: [first, first + count).
struct RunTags {
    u32 first;
    // Which of the run's tags `word` carries (0 .. count-1), or a number >= count when
    // the word is not the run's (an earlier run's, or unwritten).
    __device__ __forceinline__ u32 index_of(u64 word) const { return u32(word >> 32) - first; }
    __device__ __forceinline__ bool owns(u64 word, u32 count = 1) const { return index_of(word) < count; }
    // `value` tagged with the run's tag number `index`.
    __device__ __forceinline__ u64 word(u32 value, u32 index = 0) const { return u64(first + index) << 32 | value; }
};

// A value of T as it travels between blocks: WORDS tagged words.
template <class T>
struct Tagged {
    static constexpr int WORDS = sizeof(T) > 4 ? 2 : 1;
    u64 w[WORDS];

    // Word k of v, tagged with `tag` (a run's only tag).
    __device__ __forceinline__ static u64 word(T v, int k, u32 tag_value) {
        const u64 tag = (u64)tag_value << 32;
        if constexpr (WORDS == 2) {
            const u64 bits = bit_cast<u64>(v);
            return tag | (k == 0 ? bits & 0xffffffffu : bits >> 32);
        } else if constexpr (sizeof(T) == 4) {
            return tag | bit_cast<u32>(v);
        } else {
            return tag | bit_cast<typename UnsignedOf<T>::type>(v);
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
        for (int k = 0; k < WORDS; ++k) ok = ok && RunTags{epoch}.owns(w[k]);
        return ok;
    }

    // The value once ready().
    __device__ __forceinline__ T value() const {
        if constexpr (WORDS == 2) {
            return bit_cast<T>((w[0] & 0xffffffffu) | (w[1] << 32));
        } else if constexpr (sizeof(T) == 4) {
            return bit_cast<T>(u32(w[0]));
        } else {
            return bit_cast<T>(typename UnsignedOf<T>::type(w[0]));
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
