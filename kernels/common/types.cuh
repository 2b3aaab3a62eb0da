// Element types the kernels are instantiated for, and bit-level helpers.
// NVRTC has no <cstdint>; these names match the library's dtype names.
#pragma once

typedef signed char        i8;
typedef unsigned char      u8;
typedef short              i16;
typedef unsigned short     u16;
typedef int                i32;
typedef unsigned int       u32;
typedef long long          i64;
typedef unsigned long long u64;
typedef float              f32;
typedef double             f64;
typedef unsigned long long usize;

// The 16-bit floats, as their bits: IEEE binary16 and bfloat16. Kernels never compute
// in them: reduce and scan widen to f32 (Accumulator below); sorts and selections see
// only their bits (common/radix_key.cuh).
struct f16 { u16 bits; };
struct bf16 { u16 bits; };

namespace gp {

// The unsigned type of the same width: integer SUM wraps there (signed overflow is UB).
template <class T> struct UnsignedOf;
template <> struct UnsignedOf<i8>  { typedef u8  type; };
template <> struct UnsignedOf<u8>  { typedef u8  type; };
template <> struct UnsignedOf<i16> { typedef u16 type; };
template <> struct UnsignedOf<u16> { typedef u16 type; };
template <> struct UnsignedOf<i32> { typedef u32 type; };
template <> struct UnsignedOf<u32> { typedef u32 type; };
template <> struct UnsignedOf<i64> { typedef u64 type; };
template <> struct UnsignedOf<u64> { typedef u64 type; };
template <> struct UnsignedOf<f16> { typedef u16 type; };
template <> struct UnsignedOf<bf16> { typedef u16 type; };

// The signed type of the same width (arithmetic shifts that copy the sign bit).
template <class T> struct SignedOf;
template <> struct SignedOf<u8>  { typedef i8  type; };
template <> struct SignedOf<u16> { typedef i16 type; };
template <> struct SignedOf<u32> { typedef i32 type; };
template <> struct SignedOf<u64> { typedef i64 type; };

template <class T> struct IsFloat      { static constexpr bool value = false; };
template <> struct IsFloat<f32>        { static constexpr bool value = true; };
template <> struct IsFloat<f64>        { static constexpr bool value = true; };

// The largest and lowest value of each type (+inf / -inf for floats).
template <class T> struct Limits;
template <> struct Limits<i8>  { __device__ static i8  highest() { return 127; }  __device__ static i8  lowest() { return -128; } };
template <> struct Limits<u8>  { __device__ static u8  highest() { return 255; }  __device__ static u8  lowest() { return 0; } };
template <> struct Limits<i16> { __device__ static i16 highest() { return 32767; } __device__ static i16 lowest() { return -32768; } };
template <> struct Limits<u16> { __device__ static u16 highest() { return 65535; } __device__ static u16 lowest() { return 0; } };
template <> struct Limits<i32> { __device__ static i32 highest() { return 2147483647; } __device__ static i32 lowest() { return -2147483647 - 1; } };
template <> struct Limits<u32> { __device__ static u32 highest() { return 0xffffffffu; } __device__ static u32 lowest() { return 0; } };
template <> struct Limits<i64> { __device__ static i64 highest() { return 0x7fffffffffffffffLL; } __device__ static i64 lowest() { return -0x7fffffffffffffffLL - 1; } };
template <> struct Limits<u64> { __device__ static u64 highest() { return 0xffffffffffffffffULL; } __device__ static u64 lowest() { return 0; } };
template <> struct Limits<f32> { __device__ static f32 highest() { return __int_as_float(0x7f800000); } __device__ static f32 lowest() { return __int_as_float((int)0xff800000u); } };
template <> struct Limits<f64> { __device__ static f64 highest() { return __longlong_as_double(0x7ff0000000000000LL); } __device__ static f64 lowest() { return __longlong_as_double((long long)0xfff0000000000000ULL); } };

// What reduce and scan compute in: f32 for the 16-bit floats (widening is exact;
// narrowing rounds to nearest, ties to even, a NaN to the canonical NaN), the type
// itself otherwise (both conversions the identity).
template <class T> struct Accumulator {
    typedef T type;
    __device__ __forceinline__ static T widen(T v) { return v; }
    __device__ __forceinline__ static T narrow(T v) { return v; }
};
template <> struct Accumulator<f16> {
    typedef f32 type;
    __device__ __forceinline__ static f32 widen(f16 v) {
        f32 r;
        asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(v.bits));
        return r;
    }
    __device__ __forceinline__ static f16 narrow(f32 v) {
        f16 r;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
        return r;
    }
};
template <> struct Accumulator<bf16> {
    typedef f32 type;
    __device__ __forceinline__ static f32 widen(bf16 v) { return __uint_as_float(u32(v.bits) << 16); }
    __device__ __forceinline__ static bf16 narrow(f32 v) {
        bf16 r;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.bits) : "f"(v));
        return r;
    }
};

// Reinterprets the bits of a value as another type of the same size.
template <class To, class From>
__device__ __forceinline__ To bit_cast(const From &v) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
    To r;
    memcpy(&r, &v, sizeof(To));
    return r;
}

__device__ __forceinline__ bool sign_bit(f32 v) { return __float_as_int(v) < 0; }
__device__ __forceinline__ bool sign_bit(f64 v) { return __double_as_longlong(v) < 0; }

}  // namespace gp
