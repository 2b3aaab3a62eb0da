// Sort keys as unsigned bit patterns whose unsigned order is the wanted order, and
// their digits. One module serves every dtype of a width: the key's kind (unsigned,
// signed, float) and the direction arrive at run time, uniform across the grid.
//
// The mapping is applied on the fly wherever a digit is needed; keys themselves move
// unchanged, so nothing has to be undone at the end and NaN payloads survive. (The
// radix sort moves float keys mapped between its passes when none is a NaN: then the
// mapping is one-to-one and undoing it loses nothing.)
#pragma once
#include "common/types.cuh"

namespace gp {

template <int BYTES> struct BitsOf;
template <> struct BitsOf<1> { typedef u8 type; };
template <> struct BitsOf<2> { typedef u16 type; };
template <> struct BitsOf<4> { typedef u32 type; };
template <> struct BitsOf<8> { typedef u64 type; };

// The kind of a key, as the host passes it (src/backend/cuda/radix_sort.rs).
constexpr u32 KEY_UNSIGNED = 0;
constexpr u32 KEY_SIGNED = 1;
constexpr u32 KEY_FLOAT = 2;
constexpr u32 KEY_DESCENDING = 4;  // or'ed into the kind
constexpr u32 KEY_BFLOAT16 = 8;    // with KEY_FLOAT on 2-byte keys: bfloat16, not binary16

// The bits of +inf for a float of this width: 2 bytes binary16 or bfloat16 as the
// key order says (the one float width whose format is chosen at run time), 4 or 8.
template <class U>
__device__ __forceinline__ U float_inf_bits(u32 key_order) {
    if constexpr (sizeof(U) == 8) return U(0x7ff0000000000000ull);
    else if constexpr (sizeof(U) == 4) return U(0x7f800000u);
    else if constexpr (sizeof(U) == 2) return U((key_order & KEY_BFLOAT16) ? 0x7f80u : 0x7c00u);
    else return U(~U(0));
}

// The bits of the quiet NaN of the format whose +inf is `inf`: the top mantissa bit
// set (the bit below the exponent's lowest).
template <class U>
__device__ __forceinline__ U quiet_nan_bits(U inf) {
    return U(inf | U(U(inf & U(~inf + 1)) >> 1));
}

// FLOAT: the keys are floats (a compile-time choice: their mapping costs several
// instructions a key, an integer's one XOR). Integers' signedness and the direction
// arrive at run time as one XOR mask.
template <class U, bool FLOAT>
struct KeyOrder {
    static constexpr int BITS = sizeof(U) * 8;
    static constexpr U SIGN = U(U(1) << (BITS - 1));
    U flip;  // XORed last: the sign bit for signed integers, all ones when descending
    U inf;   // floats: the bits of +inf (patterns above it, sign aside, are NaNs)

    __device__ __forceinline__ explicit KeyOrder(u32 key_order)
        : flip(U(((key_order & KEY_DESCENDING) ? U(~U(0)) : U(0)) ^
                 ((key_order & 3) == KEY_SIGNED ? SIGN : U(0)))),
          inf(float_inf_bits<U>(key_order)) {}

    // Floats: -inf < ... < -0.0 < +0.0 < ... < +inf < every NaN (one value); signed
    // integers: the sign bit flipped; descending: all bits complemented, so the
    // sort is always ascending on these patterns and stays stable.
    __device__ __forceinline__ U ordered(U bits) const {
        if constexpr (FLOAT) {
            typedef typename SignedOf<U>::type S;
            const U negative = U(S(bits) >> (BITS - 1));  // all ones when the sign is set
            bits = U(bits & U(~SIGN)) > inf ? U(~U(0)) : U(bits ^ (negative | SIGN));
        }
        return U(bits ^ flip);
    }

    // ordered() for keys known to hold no NaN (floats: the sign test alone). It is
    // then one-to-one, so a sort may move keys in this form and undo it with
    // raw_no_nan() on the last move.
    __device__ __forceinline__ U ordered_no_nan(U bits) const {
        if constexpr (FLOAT) {
            typedef typename SignedOf<U>::type S;
            const U negative = U(S(bits) >> (BITS - 1));
            return U(bits ^ U(negative | SIGN) ^ flip);
        } else {
            return U(bits ^ flip);
        }
    }

    // The inverse of ordered_no_nan().
    __device__ __forceinline__ U raw_no_nan(U ordered) const {
        const U bits = U(ordered ^ flip);
        if constexpr (FLOAT) {
            typedef typename SignedOf<U>::type S;
            const U positive = U(~U(S(bits) >> (BITS - 1)));  // all ones when the sign bit is clear
            return U(bits ^ U(positive | SIGN));
        } else {
            return bits;
        }
    }

    // True for the one pattern every NaN takes (never for an integer key).
    __device__ __forceinline__ bool is_nan_pattern(U ordered) const {
        return FLOAT && ordered == U(~flip);
    }

    // The key whose pattern is `ordered` (the inverse of ordered(); every NaN comes
    // back as the canonical quiet NaN, since NaNs share one pattern).
    __device__ __forceinline__ U raw(U ordered) const {
        U bits = U(ordered ^ flip);
        if constexpr (FLOAT) {
            if (bits == U(~U(0))) return quiet_nan_bits<U>(inf);
            bits = (bits & SIGN) ? U(bits ^ SIGN) : U(~bits);
        }
        return bits;
    }
};

// Digit `pass` (least significant first) of an ordered pattern.
template <int RADIX_BITS, class U>
__device__ __forceinline__ u32 digit_of(U ordered, int pass) {
    return u32(ordered >> (pass * RADIX_BITS)) & ((1u << RADIX_BITS) - 1);
}

}  // namespace gp
