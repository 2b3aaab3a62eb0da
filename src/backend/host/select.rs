//! Host selection: the standard library's selection (introselect) on (order key,
//! index) pairs, whose order is the library's total order with ties broken by index.

use rayon::prelude::*;

use super::reduce::element_bytes;
use super::sort::sort_key;
use super::{scratch_vec, HostMemory};
use crate::dtype::{DType, Element, Order};
use crate::error::Result;
use crate::with_element_type;

/// (order key, index) of every element: ascending in `order`, ties by index.
fn keyed<T: Element>(xs: &[T], order: Order) -> Result<Vec<(u64, usize)>> {
    let mut pairs = scratch_vec(xs.len(), "the selection's (key, index) pairs")?;
    pairs.par_extend(xs.par_iter().enumerate().map(|(i, &v)| (sort_key(v, order), i)));
    Ok(pairs)
}

pub(super) fn select_kth(input: &HostMemory, dtype: DType, len: usize, k: usize, out: &mut [u8]) -> Result<()> {
    with_element_type!(dtype, T => {
        // SAFETY: the buffer holds `len` elements of T.
        let xs = unsafe { input.typed::<T>(len) };
        let mut pairs = keyed(xs, Order::Ascending)?;
        let (_, &mut (_, at), _) = pairs.select_nth_unstable(k);
        out.copy_from_slice(&element_bytes(xs[at]));
    });
    Ok(())
}

/// The first `k` (1 ..= len) in `order`, ties by lower index: a selection that puts
/// them in front, then a sort of those k.
pub(super) fn topk(input: &HostMemory, dtype: DType, len: usize, k: usize, order: Order, values: &HostMemory, indices: Option<&HostMemory>) -> Result<()> {
    with_element_type!(dtype, T => {
        // SAFETY: the input holds `len` elements of T; the outputs `k` each, and do
        // not overlap the input (checked by the caller).
        let xs = unsafe { input.typed::<T>(len) };
        let mut pairs = keyed(xs, order)?;
        if k < len {
            pairs.select_nth_unstable(k - 1);
        }
        pairs.truncate(k);
        pairs.par_sort_unstable();
        let out = unsafe { values.typed_mut::<T>(k) };
        out.par_iter_mut().zip(pairs.par_iter()).for_each(|(o, &(_, i))| *o = xs[i]);
        if let Some(indices) = indices {
            let out = unsafe { indices.typed_mut::<u64>(k) };
            out.par_iter_mut().zip(pairs.par_iter()).for_each(|(o, &(_, i))| *o = i as u64);
        }
    });
    Ok(())
}
