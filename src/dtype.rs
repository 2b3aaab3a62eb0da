//! Element types, operators and scan modes as they cross the ABI, and the per-type
//! arithmetic the host backend needs (wrapping sums, NaN-aware MIN/MAX in the
//! library's total order, identities).

use crate::error::{invalid, Result};
use crate::half::{BF16, F16};

/// The twelve element types. The discriminants are the ABI values (0 is never valid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    I8 = 1,
    U8 = 2,
    I16 = 3,
    U16 = 4,
    I32 = 5,
    U32 = 6,
    I64 = 7,
    U64 = 8,
    F32 = 9,
    F64 = 10,
    /// IEEE binary16.
    F16 = 11,
    /// bfloat16.
    BF16 = 12,
}

impl DType {
    pub const ALL: [DType; 12] = [
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
    ];

    pub fn from_raw(v: u32) -> Result<DType> {
        DType::ALL
            .iter()
            .copied()
            .find(|d| *d as u32 == v)
            .ok_or_else(|| invalid(format!("unknown dtype value {v}")))
    }

    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// A float type: keys ordered by the floats' total order, not as integers.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
    }

    /// The type reduce and scan accumulate in: f32 for the 16-bit floats (each result
    /// rounded once), the type itself otherwise.
    pub fn accumulator(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            d => d,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
        }
    }

    /// The type name the kernels are instantiated with (kernels/common/types.cuh).
    pub fn cuda_name(self) -> &'static str {
        match self {
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
        }
    }
}

/// Reduction and scan operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Sum = 0,
    Min = 1,
    Max = 2,
}

impl Op {
    pub const ALL: [Op; 3] = [Op::Sum, Op::Min, Op::Max];

    pub fn from_raw(v: u32) -> Result<Op> {
        Op::ALL
            .iter()
            .copied()
            .find(|o| *o as u32 == v)
            .ok_or_else(|| invalid(format!("unknown op value {v}")))
    }

    pub fn name(self) -> &'static str {
        match self {
            Op::Sum => "sum",
            Op::Min => "min",
            Op::Max => "max",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanMode {
    Inclusive = 0,
    Exclusive = 1,
}

impl ScanMode {
    pub fn from_raw(v: u32) -> Result<ScanMode> {
        match v {
            0 => Ok(ScanMode::Inclusive),
            1 => Ok(ScanMode::Exclusive),
            _ => Err(invalid(format!("unknown scan mode value {v}"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ScanMode::Inclusive => "inclusive",
            ScanMode::Exclusive => "exclusive",
        }
    }
}

/// Sort order (ABI values of `gpuprims_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    Ascending = 0,
    Descending = 1,
}

impl Order {
    pub fn from_raw(v: u32) -> Result<Order> {
        match v {
            0 => Ok(Order::Ascending),
            1 => Ok(Order::Descending),
            _ => Err(invalid(format!("unknown order value {v}"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Order::Ascending => "ascending",
            Order::Descending => "descending",
        }
    }
}

/// Host-side arithmetic of one element type.
pub trait Element: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    const DTYPE: DType;
    /// What reduce and scan compute in (DType::accumulator).
    type Acc: Element;
    /// Exact.
    fn widen(self) -> Self::Acc;
    /// Rounds to nearest, ties to even (exact for every type but the 16-bit floats).
    fn narrow(acc: Self::Acc) -> Self;
    fn wrapping_sum(a: Self, b: Self) -> Self;
    fn zero() -> Self;
    /// The identity of MIN: the largest value (+inf for floats).
    fn highest() -> Self;
    /// The identity of MAX: the lowest value (-inf for floats).
    fn lowest() -> Self;
    fn is_nan(self) -> bool;
    /// A map to unsigned integers that is monotone in the library's total order:
    /// -inf < … < -0.0 < +0.0 < … < +inf for floats (NaN is handled apart).
    fn order_key(self) -> u64;
}

/// MIN in the total order; a NaN operand makes the result NaN.
/// The unsigned key of `v` whose ascending order is the wanted order: the library's
/// total order with every NaN one value above +inf (`mask`, all ones at the key's
/// width), complemented within `mask` for descending. The host sorts use the whole u64
/// (mask u64::MAX); the multi-rank selection the element's width, as the CUDA kernels'
/// KeyOrder::ordered does (kernels/common/radix_key.cuh).
pub fn ordered_key<T: Element>(v: T, order: Order, mask: u64) -> u64 {
    let k = if v.is_nan() { mask } else { v.order_key() };
    match order {
        Order::Ascending => k,
        Order::Descending => !k & mask,
    }
}

/// The plain number (at most 8 bytes) whose little-endian bits are the low bytes of `bits`.
pub fn value_of<T: Copy>(bits: u64) -> T {
    assert!(std::mem::size_of::<T>() <= 8, "a value of at most 8 bytes");
    // SAFETY: T is a plain number of at most 8 bytes (every bit pattern a value).
    unsafe { std::ptr::read_unaligned(bits.to_le_bytes().as_ptr() as *const T) }
}

/// The little-endian bits of plain number `v` (at most 8 bytes), zero-extended.
pub fn bits_of<T: Copy>(v: T) -> u64 {
    assert!(std::mem::size_of::<T>() <= 8, "a value of at most 8 bytes");
    let mut b = [0u8; 8];
    // SAFETY: T is a plain number of at most 8 bytes.
    unsafe { std::ptr::copy_nonoverlapping(&v as *const T as *const u8, b.as_mut_ptr(), std::mem::size_of::<T>()) };
    u64::from_le_bytes(b)
}

pub fn min_of<T: Element>(a: T, b: T) -> T {
    if a.is_nan() {
        a
    } else if b.is_nan() || b.order_key() < a.order_key() {
        b
    } else {
        a
    }
}

/// MAX in the total order; a NaN operand makes the result NaN.
pub fn max_of<T: Element>(a: T, b: T) -> T {
    if a.is_nan() {
        a
    } else if b.is_nan() || b.order_key() > a.order_key() {
        b
    } else {
        a
    }
}

/// Combines two values with `op`.
pub fn combine<T: Element>(op: Op, a: T, b: T) -> T {
    match op {
        Op::Sum => T::wrapping_sum(a, b),
        Op::Min => min_of(a, b),
        Op::Max => max_of(a, b),
    }
}

/// The identity of `op`, which an exclusive scan starts from.
pub fn identity<T: Element>(op: Op) -> T {
    match op {
        Op::Sum => T::zero(),
        Op::Min => T::highest(),
        Op::Max => T::lowest(),
    }
}

macro_rules! int_element {
    ($t:ty, $dt:ident, $key:expr) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            type Acc = Self;
            fn widen(self) -> Self {
                self
            }
            fn narrow(acc: Self) -> Self {
                acc
            }
            fn wrapping_sum(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn zero() -> Self {
                0
            }
            fn highest() -> Self {
                <$t>::MAX
            }
            fn lowest() -> Self {
                <$t>::MIN
            }
            fn is_nan(self) -> bool {
                false
            }
            fn order_key(self) -> u64 {
                let f: fn($t) -> u64 = $key;
                f(self)
            }
        }
    };
}

// Signed integers: flip the sign bit so that two's complement orders as unsigned.
int_element!(i8, I8, |v| (v as u8 ^ 0x80) as u64);
int_element!(u8, U8, |v| v as u64);
int_element!(i16, I16, |v| (v as u16 ^ 0x8000) as u64);
int_element!(u16, U16, |v| v as u64);
int_element!(i32, I32, |v| (v as u32 ^ 0x8000_0000) as u64);
int_element!(u32, U32, |v| v as u64);
int_element!(i64, I64, |v| v as u64 ^ 0x8000_0000_0000_0000);
int_element!(u64, U64, |v| v);

macro_rules! float_element {
    ($t:ty, $dt:ident, $bits:ty) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            type Acc = Self;
            fn widen(self) -> Self {
                self
            }
            fn narrow(acc: Self) -> Self {
                acc
            }
            fn wrapping_sum(a: Self, b: Self) -> Self {
                a + b
            }
            fn zero() -> Self {
                0.0
            }
            fn highest() -> Self {
                <$t>::INFINITY
            }
            fn lowest() -> Self {
                <$t>::NEG_INFINITY
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn order_key(self) -> u64 {
                // Negative values: invert all bits; positive: set the sign bit.
                let bits = self.to_bits();
                let sign: $bits = 1 << (<$bits>::BITS - 1);
                (if bits & sign != 0 { !bits } else { bits | sign }) as u64
            }
        }
    };
}

float_element!(f32, F32, u32);
float_element!(f64, F64, u64);

/// The order key of a 16-bit float's bits (as float_element's, at 16 bits).
fn half_order_key(bits: u16) -> u64 {
    (if bits & 0x8000 != 0 { !bits } else { bits | 0x8000 }) as u64
}

macro_rules! half_element {
    ($t:ident, $dt:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$dt;
            type Acc = f32;
            fn widen(self) -> f32 {
                self.to_f32()
            }
            fn narrow(acc: f32) -> Self {
                $t::from_f32(acc)
            }
            fn wrapping_sum(a: Self, b: Self) -> Self {
                $t::from_f32(a.to_f32() + b.to_f32())
            }
            fn zero() -> Self {
                $t(0)
            }
            fn highest() -> Self {
                $t::INFINITY
            }
            fn lowest() -> Self {
                $t::NEG_INFINITY
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn order_key(self) -> u64 {
                half_order_key(self.0)
            }
        }
    };
}

half_element!(F16, F16);
half_element!(BF16, BF16);

/// Runs `$body` with `$T` bound to the Rust type of `$dtype`.
#[macro_export]
macro_rules! with_element_type {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::dtype::DType::I8 => {
                type $T = i8;
                $body
            }
            $crate::dtype::DType::U8 => {
                type $T = u8;
                $body
            }
            $crate::dtype::DType::I16 => {
                type $T = i16;
                $body
            }
            $crate::dtype::DType::U16 => {
                type $T = u16;
                $body
            }
            $crate::dtype::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::dtype::DType::U32 => {
                type $T = u32;
                $body
            }
            $crate::dtype::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::dtype::DType::U64 => {
                type $T = u64;
                $body
            }
            $crate::dtype::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::dtype::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::dtype::DType::F16 => {
                type $T = $crate::half::F16;
                $body
            }
            $crate::dtype::DType::BF16 => {
                type $T = $crate::half::BF16;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_round_trip_and_reject_unknown() {
        for d in DType::ALL {
            assert_eq!(DType::from_raw(d as u32).unwrap(), d);
        }
        assert!(DType::from_raw(0).is_err());
        assert!(DType::from_raw(13).is_err());
        assert!(Op::from_raw(3).is_err());
        assert!(ScanMode::from_raw(2).is_err());
        assert_eq!(Order::from_raw(1).unwrap(), Order::Descending);
        assert!(Order::from_raw(2).is_err());
    }

    #[test]
    fn float_order_key_is_monotone_and_splits_zeros() {
        let xs = [f32::NEG_INFINITY, -1e30, -1.0, -f32::MIN_POSITIVE, -0.0, 0.0, 1e-45, 1.0, f32::INFINITY];
        for w in xs.windows(2) {
            assert!(w[0].order_key() < w[1].order_key(), "{:?} !< {:?}", w[0], w[1]);
        }
        let ds = [f64::NEG_INFINITY, -2.5, -0.0, 0.0, 3.0, f64::INFINITY];
        for w in ds.windows(2) {
            assert!(w[0].order_key() < w[1].order_key());
        }
        // binary16: -inf, -65504, -1, -smallest subnormal, -0, +0, +smallest, 1, +inf
        let hs = [0xfc00u16, 0xfbff, 0xbc00, 0x8001, 0x8000, 0x0000, 0x0001, 0x3c00, 0x7c00].map(F16);
        for w in hs.windows(2) {
            assert!(w[0].order_key() < w[1].order_key(), "{:?} !< {:?}", w[0], w[1]);
        }
        let bs = [0xff80u16, 0xbf80, 0x8000, 0x0000, 0x0001, 0x3f80, 0x7f80].map(BF16);
        for w in bs.windows(2) {
            assert!(w[0].order_key() < w[1].order_key());
        }
    }

    #[test]
    fn signed_order_key_is_monotone() {
        let xs = [i32::MIN, -5, -1, 0, 1, i32::MAX];
        for w in xs.windows(2) {
            assert!(w[0].order_key() < w[1].order_key());
        }
        assert!((i8::MIN).order_key() < (i8::MAX).order_key());
        assert!((i64::MIN).order_key() < (-1i64).order_key());
    }

    #[test]
    fn min_max_follow_total_order_and_propagate_nan() {
        assert!(min_of(0.0f32, -0.0).is_sign_negative());
        assert!(min_of(-0.0f32, 0.0).is_sign_negative());
        assert!(max_of(-0.0f64, 0.0).is_sign_positive());
        assert!(min_of(1.0f32, f32::NAN).is_nan());
        assert!(max_of(f64::NAN, 1.0).is_nan());
        assert_eq!(min_of(3i8, -4), -4);
        assert_eq!(max_of(u64::MAX, 0), u64::MAX);
        assert_eq!(combine(Op::Sum, i8::MAX, 1), i8::MIN);
        assert_eq!(identity::<f32>(Op::Min), f32::INFINITY);
        assert_eq!(identity::<i16>(Op::Max), i16::MIN);
    }
}
