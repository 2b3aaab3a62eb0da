//! The two 16-bit float types, as the host backend holds them: IEEE binary16 (`F16`)
//! and bfloat16 (`BF16`), each its raw bits. Arithmetic happens in f32: widening is
//! exact, narrowing rounds to nearest, ties to even, as the GPU's `cvt.rn` does. A NaN
//! narrows to the canonical NaN (0x7fff), also as `cvt.rn` does.

/// IEEE 754 binary16: 1 sign, 5 exponent, 10 mantissa bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct F16(pub u16);

/// bfloat16: the top half of an f32 (1 sign, 8 exponent, 7 mantissa bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct BF16(pub u16);

const CANONICAL_NAN: u16 = 0x7fff;

impl F16 {
    pub const INFINITY: F16 = F16(0x7c00);
    pub const NEG_INFINITY: F16 = F16(0xfc00);

    pub fn is_nan(self) -> bool {
        self.0 & 0x7fff > 0x7c00
    }

    /// Exact: every binary16 value is an f32 value (NaN payloads kept).
    pub fn to_f32(self) -> f32 {
        let sign = ((self.0 & 0x8000) as u32) << 16;
        let exp = ((self.0 >> 10) & 0x1f) as u32;
        let mant = (self.0 & 0x3ff) as u32;
        let magnitude = match exp {
            0 => return signed(sign, mant as f32 * (-24f32).exp2()),
            0x1f => 0x7f80_0000 | mant << 13,
            _ => (exp + 112) << 23 | mant << 13,
        };
        f32::from_bits(sign | magnitude)
    }

    /// Rounds to nearest, ties to even; overflow gives an infinity.
    pub fn from_f32(x: f32) -> F16 {
        if x.is_nan() {
            return F16(CANONICAL_NAN);
        }
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let a = x.abs();
        if a >= 65520.0 {
            // 65520 is halfway between the largest finite (65504) and 2^16: ties go to
            // the even pattern, which is the infinity.
            return F16(sign | 0x7c00);
        }
        if a < (-14f32).exp2() {
            // Subnormal or zero: a multiple of 2^-24. The product is exact in f32 and
            // f32's own rounding to an integer is to nearest, ties to even.
            let units = (a * 2f32.powi(24)).round_ties_even() as u16;
            return F16(sign | units);
        }
        // Normal: drop 13 mantissa bits with round to nearest even on the f32 pattern
        // (a carry out of the mantissa bumps the exponent, which is right).
        let abs_bits = bits & 0x7fff_ffff;
        let rounded = abs_bits + 0x0fff + ((abs_bits >> 13) & 1);
        let h = (rounded >> 13) - (112 << 10);
        F16(sign | h as u16)
    }
}

impl BF16 {
    pub const INFINITY: BF16 = BF16(0x7f80);
    pub const NEG_INFINITY: BF16 = BF16(0xff80);

    pub fn is_nan(self) -> bool {
        self.0 & 0x7fff > 0x7f80
    }

    /// Exact: the bits are the top half of the f32's.
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }

    /// Rounds to nearest, ties to even; overflow gives an infinity.
    pub fn from_f32(x: f32) -> BF16 {
        if x.is_nan() {
            return BF16(CANONICAL_NAN);
        }
        let bits = x.to_bits();
        let rounded = bits as u64 + 0x7fff + ((bits >> 16) & 1) as u64;
        BF16((rounded >> 16) as u16)
    }
}

/// `magnitude` with the sign of `sign_bits` (an f32 sign bit in place).
fn signed(sign_bits: u32, magnitude: f32) -> f32 {
    if sign_bits != 0 {
        -magnitude
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every non-negative, finite value of a 16-bit type in ascending order, as (value, bits).
    fn ascending<F: Fn(u16) -> f32>(widen: F, is_nan: fn(u16) -> bool) -> Vec<(f32, u16)> {
        let mut v: Vec<(f32, u16)> = (0..0x8000u16).filter(|&b| !is_nan(b)).map(|b| (widen(b), b)).filter(|p| p.0.is_finite()).collect();
        v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        v
    }

    /// The nearest of `table` to x, ties to the even pattern, with x's sign: an
    /// independent reference for from_f32 below the overflow threshold.
    fn nearest(table: &[(f32, u16)], x: f32) -> u16 {
        let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
        let x = x.abs();
        let i = table.partition_point(|&(v, _)| (v as f64) < x as f64);
        let candidates = [i.checked_sub(1), Some(i)];
        let mut best: Option<(f64, u16)> = None;
        for j in candidates.into_iter().flatten().filter(|&j| j < table.len()) {
            let d = (table[j].0 as f64 - x as f64).abs();
            let b = table[j].1;
            best = match best {
                Some((bd, bb)) if bd < d || (bd == d && bb & 1 == 0) => Some((bd, bb)),
                _ => Some((d, b)),
            };
        }
        best.unwrap().1 | sign
    }

    #[test]
    fn widening_is_exact_and_round_trips() {
        for b in 0..=u16::MAX {
            let h = F16(b);
            if h.is_nan() {
                assert!(h.to_f32().is_nan());
                assert_eq!(h.to_f32().to_bits() >> 13 & 0x3ff, (b & 0x3ff) as u32, "payload of {b:#06x}");
            } else {
                assert_eq!(F16::from_f32(h.to_f32()), h, "f16 {b:#06x}");
            }
            let g = BF16(b);
            if !g.is_nan() {
                assert_eq!(BF16::from_f32(g.to_f32()), g, "bf16 {b:#06x}");
            }
        }
        assert_eq!(F16(0x3c00).to_f32(), 1.0);
        assert_eq!(F16(0x0001).to_f32(), (-24f32).exp2());
        assert_eq!(F16(0x7bff).to_f32(), 65504.0);
        assert_eq!(BF16(0x3f80).to_f32(), 1.0);
    }

    #[test]
    fn narrowing_rounds_to_nearest_even() {
        let f16s = ascending(|b| F16(b).to_f32(), |b| F16(b).is_nan());
        let bf16s = ascending(|b| BF16(b).to_f32(), |b| BF16(b).is_nan());
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut xs: Vec<f32> = vec![65504.0, 65519.99, 65520.0, 1e-8, 2.9802322e-8, 2.9802326e-8, -0.0, 0.0, 1.0 + (-11f32).exp2()];
        for _ in 0..200_000 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let bits = (state >> 32) as u32;
            let x = f32::from_bits(bits);
            if !x.is_nan() {
                xs.push(x);
                xs.push(x * (-20f32).exp2()); // near the f16 range
            }
        }
        for &x in &xs {
            let want = if x.abs() >= 65520.0 { if x < 0.0 { 0xfc00 } else { 0x7c00 } } else { nearest(&f16s, x) };
            assert_eq!(F16::from_f32(x).0, want, "f16 of {x:e} ({:#010x})", x.to_bits());
            let bwant = if x.is_infinite() {
                if x < 0.0 { 0xff80 } else { 0x7f80 }
            } else if x.abs() >= f32::from_bits(0x7f7f_8000) {
                // halfway past bf16's largest finite: to even, the infinity
                if x < 0.0 { 0xff80 } else { 0x7f80 }
            } else {
                nearest(&bf16s, x)
            };
            assert_eq!(BF16::from_f32(x).0, bwant, "bf16 of {x:e} ({:#010x})", x.to_bits());
        }
        assert_eq!(F16::from_f32(f32::NAN).0, 0x7fff);
        assert_eq!(BF16::from_f32(-f32::NAN).0, 0x7fff);
    }
}
