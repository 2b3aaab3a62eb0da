//! Rank keys: an element's bits mapped to an unsigned integer of the element's width
//! whose ascending order is the wanted order (the library's total order, every NaN
//! one value above +inf; complemented for descending). The CUDA kernels compute the
//! same mapping (kernels/common/radix_key.cuh, KeyOrder::ordered), so the host can
//! plan splitters and brackets on values the device counts.

use crate::dtype::{ordered_key, value_of, DType, Order};
use crate::with_element_type;

/// All ones at the element's width: the rank key of NaN, the largest there is.
pub fn key_mask(dtype: DType) -> u64 {
    match dtype.size() {
        8 => u64::MAX,
        n => (1u64 << (8 * n)) - 1,
    }
}

/// The rank key of the element with `bits` (dtype::ordered_key at the element's width).
pub fn rank_key(dtype: DType, bits: u64, order: Order) -> u64 {
    with_element_type!(dtype, T => ordered_key(value_of::<T>(bits), order, key_mask(dtype)))
}

/// The bits of the element whose ascending rank key is `key`; NaN comes back as the
/// canonical quiet NaN (the one the CUDA select writes).
pub fn from_rank_key(dtype: DType, key: u64) -> u64 {
    let mask = key_mask(dtype);
    let sign = 1u64 << (8 * dtype.size() - 1);
    if dtype.is_float() {
        if key == mask {
            return quiet_nan(dtype);
        }
        return if key & sign != 0 { key ^ sign } else { !key & mask };
    }
    let signed = matches!(dtype, DType::I8 | DType::I16 | DType::I32 | DType::I64);
    if signed {
        key ^ sign
    } else {
        key
    }
}

/// The quiet NaN with no payload: +inf's bits with the top mantissa bit.
fn quiet_nan(dtype: DType) -> u64 {
    match dtype {
        DType::F16 => 0x7e00,
        DType::BF16 => 0x7fc0,
        DType::F32 => 0x7fc0_0000,
        _ => 0x7ff8_0000_0000_0000,
    }
}

/// Element `i` of a little-endian array of `width`-byte elements, as bits.
pub fn bits_at(bytes: &[u8], width: usize, i: usize) -> u64 {
    let mut b = [0u8; 8];
    b[..width].copy_from_slice(&bytes[i * width..(i + 1) * width]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_keys_invert_and_order() {
        for d in DType::ALL {
            let mask = key_mask(d);
            let probes: Vec<u64> = [0u64, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0x7c00, 0x7f80, 0xfc00, 0x3f80_0000]
                .iter()
                .map(|v| v & mask)
                .chain([mask, mask >> 1, (mask >> 1) + 1])
                .collect();
            for &b in &probes {
                let k = rank_key(d, b, Order::Ascending);
                assert!(k <= mask);
                assert_eq!(!k & mask, rank_key(d, b, Order::Descending));
                if k != mask {
                    assert_eq!(from_rank_key(d, k), b, "{} bits {b:#x}", d.name());
                }
            }
        }
        // -0.0 before +0.0, -inf first, NaN last.
        assert!(rank_key(DType::F32, 0x8000_0000, Order::Ascending) < rank_key(DType::F32, 0, Order::Ascending));
        assert_eq!(rank_key(DType::F32, 0xff80_0000, Order::Ascending), 0x007f_ffff);
        assert_eq!(rank_key(DType::F32, 0xffc0_0001, Order::Ascending), 0xffff_ffff);
    }
}
