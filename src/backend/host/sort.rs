//! Host sort: a stable sort under the library's total order, by a permutation. Each key
//! becomes its order key (NaN above everything, complemented for descending); the
//! (order key, index) pairs are sorted, which is stable because indices break ties;
//! then keys and values are gathered through the permutation. The quicksort's
//! counterpart sorts the same order keys without the tie-break. All scratch is
//! allocated before the first write to keys or values, so a failed allocation leaves
//! them as they were.

use rayon::prelude::*;

use super::{scratch_vec, HostMemory};
use crate::dtype::{ordered_key, DType, Element, Order};
use crate::error::Result;
use crate::with_element_type;

/// The unsigned key whose ascending order is the wanted order (dtype::ordered_key over
/// the whole u64).
pub(super) fn sort_key<T: Element>(v: T, order: Order) -> u64 {
    ordered_key(v, order, u64::MAX)
}

/// A copy of the first `len` elements of `width` bytes at `mem`.
fn copy_of(mem: &HostMemory, width: usize, len: usize) -> Result<HostMemory> {
    let copy = HostMemory::zeroed(width * len)?;
    // SAFETY: both hold `width * len` bytes; nothing writes `mem` meanwhile.
    unsafe { copy.bytes_mut().copy_from_slice(&mem.bytes()[..width * len]) };
    Ok(copy)
}

/// Writes `len` elements of `width` bytes to `mem` so that element i is element
/// pairs[i].1 of `old`.
fn gather(mem: &HostMemory, old: &HostMemory, width: usize, len: usize, pairs: &[(u64, usize)]) {
    fn typed<T: Copy + Send + Sync>(mem: &HostMemory, old: &HostMemory, len: usize, pairs: &[(u64, usize)]) {
        // SAFETY: both hold `len` elements of this width; nothing else touches them.
        let (xs, old) = unsafe { (mem.typed_mut::<T>(len), old.typed::<T>(len)) };
        xs.par_iter_mut().zip(pairs.par_iter()).for_each(|(x, &(_, p))| *x = old[p]);
    }
    match width {
        1 => typed::<u8>(mem, old, len, pairs),
        2 => typed::<u16>(mem, old, len, pairs),
        4 => typed::<u32>(mem, old, len, pairs),
        _ => typed::<u64>(mem, old, len, pairs),
    }
}

pub(super) fn stable_sort(keys: &HostMemory, key_dtype: DType, values: Option<(&HostMemory, DType)>, len: usize, order: Order) -> Result<()> {
    // (order key, index) pairs are all distinct: an unstable sort of them is stable.
    let mut pairs = order_keys(keys, key_dtype, len, order)?;
    pairs.par_sort_unstable();
    apply(keys, key_dtype, values, len, &pairs)
}

/// The quicksort's host counterpart: the standard unstable sort under the same order,
/// in place for keys alone, through a permutation when values travel with them.
pub(super) fn unstable_sort(keys: &HostMemory, key_dtype: DType, values: Option<(&HostMemory, DType)>, len: usize, order: Order) -> Result<()> {
    match values {
        None => with_element_type!(key_dtype, T => {
            // SAFETY: the buffer holds `len` elements of T; nothing else touches it.
            let xs = unsafe { keys.typed_mut::<T>(len) };
            xs.par_sort_unstable_by_key(|&v| sort_key(v, order));
            Ok(())
        }),
        Some(_) => {
            let mut pairs = order_keys(keys, key_dtype, len, order)?;
            pairs.par_sort_unstable_by_key(|&(k, _)| k);
            apply(keys, key_dtype, values, len, &pairs)
        }
    }
}

/// Each key's (order key, index).
pub(super) fn order_keys(keys: &HostMemory, key_dtype: DType, len: usize, order: Order) -> Result<Vec<(u64, usize)>> {
    let mut pairs = scratch_vec(len, "the sort's (key, index) pairs")?;
    with_element_type!(key_dtype, T => {
        // SAFETY: the buffer holds `len` elements of T.
        let xs = unsafe { keys.typed::<T>(len) };
        pairs.par_extend(xs.par_iter().enumerate().map(|(i, &v)| (sort_key(v, order), i)));
    });
    Ok(pairs)
}

/// Moves keys and values to the order of the sorted (order key, index) pairs; both
/// copies are taken before either is written.
fn apply(keys: &HostMemory, key_dtype: DType, values: Option<(&HostMemory, DType)>, len: usize, pairs: &[(u64, usize)]) -> Result<()> {
    let old_keys = copy_of(keys, key_dtype.size(), len)?;
    let old_values = values.map(|(mem, dtype)| copy_of(mem, dtype.size(), len)).transpose()?;
    gather(keys, &old_keys, key_dtype.size(), len, pairs);
    if let (Some((mem, dtype)), Some(old)) = (values, old_values) {
        gather(mem, &old, dtype.size(), len, pairs);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_follow_the_total_order_and_ties_keep_input_order() {
        let keys = [1.0f32, f32::NAN, -0.0, 0.0, f32::NEG_INFINITY, -f32::NAN, 1.0, f32::INFINITY];
        let mem = HostMemory::zeroed(keys.len() * 4).unwrap();
        let vals = HostMemory::zeroed(keys.len() * 2).unwrap();
        unsafe {
            mem.typed_mut::<f32>(keys.len()).copy_from_slice(&keys);
            for (i, v) in vals.typed_mut::<u16>(keys.len()).iter_mut().enumerate() {
                *v = i as u16;
            }
        }
        stable_sort(&mem, DType::F32, Some((&vals, DType::U16)), keys.len(), Order::Ascending).unwrap();
        let got: Vec<u16> = unsafe { vals.typed::<u16>(keys.len()).to_vec() };
        assert_eq!(got, vec![4, 2, 3, 0, 6, 7, 1, 5]);
        stable_sort(&mem, DType::F32, Some((&vals, DType::U16)), keys.len(), Order::Descending).unwrap();
        let got: Vec<u16> = unsafe { vals.typed::<u16>(keys.len()).to_vec() };
        // NaNs first (in their ascending-sorted order, which kept input order), then 1.0s.
        assert_eq!(got, vec![1, 5, 7, 0, 6, 3, 2, 4]);
    }

    #[test]
    fn unstable_sort_gives_the_stable_key_sequence_and_keeps_pairs_together() {
        let keys: Vec<i16> = (0..5000).map(|i: i32| ((i * 7919) % 613 - 300) as i16).collect();
        let (a, b) = (HostMemory::zeroed(keys.len() * 2).unwrap(), HostMemory::zeroed(keys.len() * 2).unwrap());
        let vals = HostMemory::zeroed(keys.len() * 4).unwrap();
        unsafe {
            a.typed_mut::<i16>(keys.len()).copy_from_slice(&keys);
            b.typed_mut::<i16>(keys.len()).copy_from_slice(&keys);
            for (i, v) in vals.typed_mut::<u32>(keys.len()).iter_mut().enumerate() {
                *v = i as u32;
            }
        }
        for order in [Order::Ascending, Order::Descending] {
            stable_sort(&a, DType::I16, None, keys.len(), order).unwrap();
            unstable_sort(&b, DType::I16, Some((&vals, DType::U32)), keys.len(), order).unwrap();
            let (sa, sb) = unsafe { (a.typed::<i16>(keys.len()).to_vec(), b.typed::<i16>(keys.len()).to_vec()) };
            assert_eq!(sa, sb);
            let moved = unsafe { vals.typed::<u32>(keys.len()).to_vec() };
            for (k, &v) in sb.iter().zip(&moved) {
                assert_eq!(*k, keys[v as usize], "a value left its key");
            }
        }
    }
}
