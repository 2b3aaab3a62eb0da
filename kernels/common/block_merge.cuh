// Block merge: one block merges two sorted runs a and b into out by ranking, with no
// merge path to walk: each element of a goes to its index plus how many of b come
// before it, and likewise for b, ties going to a. The run searched is staged in shared
// memory first (its keys as key_of gives them), so each search is a few shared loads;
// the elements placed are read from global memory, several a thread in flight and
// their searches in lockstep.
// Runs are read through L2 (ld.global.cg): another block of the same launch may have
// written them, and this block's L1 has not seen those stores.
#pragma once
#include "common/types.cuh"

namespace gp {

// Places every element of `from` (n of them) in out, ranked against `other` (n_other,
// staged in `staging`): GROUP elements a thread at a time, their binary searches in
// lockstep, so each step's GROUP shared loads are in flight together. A search counts
// the staged keys below the element's key, or with AT_OR_BELOW those at or below it.
template <int BLOCK, bool WITH_VALUES, bool AT_OR_BELOW, class K, class V, class Key, class KeyOf>
__device__ __forceinline__ void place_run(const K *from, const V *vfrom, u32 n, const K *other, u32 n_other, K *out,
                                          V *vout, Key *staging, const KeyOf &key_of) {
    __syncthreads();  // the staging area's earlier users are done
    for (u32 i = threadIdx.x; i < n_other; i += BLOCK) staging[i] = key_of(__ldcg(other + i));
    __syncthreads();
    constexpr int GROUP = 8;
    // The highest power of two <= n_other (0 for an empty run): every search takes
    // the same steps.
    const u32 top_step = n_other ? 1u << (31 - __clz(n_other)) : 0;
    for (u32 first = threadIdx.x; first < n; first += BLOCK * GROUP) {
        K keys[GROUP];
        u32 below[GROUP];
#pragma unroll
        for (int g = 0; g < GROUP; ++g) {
            const u32 i = first + g * BLOCK;
            keys[g] = i < n ? __ldcg(from + i) : K(0);
            below[g] = 0;
        }
        for (u32 step = top_step; step; step >>= 1) {
#pragma unroll
            for (int g = 0; g < GROUP; ++g) {
                const u32 probe = below[g] + step;
                if (probe <= n_other) {
                    const Key x = key_of(keys[g]), y = staging[probe - 1];
                    if (AT_OR_BELOW ? !(x < y) : y < x) below[g] = probe;
                }
            }
        }
#pragma unroll
        for (int g = 0; g < GROUP; ++g) {
            const u32 i = first + g * BLOCK;
            if (i < n) {
                out[i + below[g]] = keys[g];
                if constexpr (WITH_VALUES) vout[i + below[g]] = __ldcg(vfrom + i);
            }
        }
    }
}

// out[0 .. na + nb) = a[0 .. na) merged with b[0 .. nb), both sorted by key_of (a
// functor from an element to a Key with <); equal keys: a's before b's. With
// WITH_VALUES, va's and vb's values travel with their keys into vout. out must not
// overlap a or b; `staging` is shared memory for max(na, nb) Keys.
template <int BLOCK, bool WITH_VALUES, class K, class V, class Key, class KeyOf>
__device__ __forceinline__ void block_merge(const K *a, const V *va, u32 na, const K *b, const V *vb, u32 nb, K *out,
                                            V *vout, Key *staging, const KeyOf &key_of) {
    place_run<BLOCK, WITH_VALUES, false>(a, va, na, b, nb, out, vout, staging, key_of);
    place_run<BLOCK, WITH_VALUES, true>(b, vb, nb, a, na, out, vout, staging, key_of);
}

}  // namespace gp
