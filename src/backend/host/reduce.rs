//! Host reduce: fixed-size chunks folded in parallel, then the chunk results folded
//! in index order, so float sums come out the same on every run. The fold runs in the
//! type's accumulator (f32 for the 16-bit floats, rounded once at the end).

use rayon::prelude::*;

use super::HostMemory;
use crate::dtype::{combine, identity, DType, Element, Op};
use crate::with_element_type;

/// Elements per parallel chunk. Fixed, so the summation order depends only on n.
pub(super) const CHUNK: usize = 1 << 16;

pub(super) fn reduce(input: &HostMemory, dtype: DType, len: usize, op: Op, out: &mut [u8]) {
    with_element_type!(dtype, T => {
        // SAFETY: the buffer holds `len` elements of T.
        let xs = unsafe { input.typed::<T>(len) };
        let r: T = reduce_slice(xs, op);
        out.copy_from_slice(&element_bytes(r));
    })
}

/// The total in T's accumulator type, unrounded (Backend::reduce_accumulator).
pub(super) fn reduce_accumulator(input: &HostMemory, dtype: DType, len: usize, op: Op, out: &mut [u8]) {
    with_element_type!(dtype, T => {
        // SAFETY: the buffer holds `len` elements of T.
        let xs = unsafe { input.typed::<T>(len) };
        out.copy_from_slice(&element_bytes(fold_chunks(xs, op)));
    })
}

/// Folds `xs` in order into T's accumulator.
pub(super) fn fold<T: Element>(xs: &[T], op: Op) -> T::Acc {
    xs.iter().fold(identity::<T::Acc>(op), |a, &b| combine(op, a, b.widen()))
}

/// Chunks folded in parallel, then their results in index order.
fn fold_chunks<T: Element>(xs: &[T], op: Op) -> T::Acc {
    let partials: Vec<T::Acc> = xs.par_chunks(CHUNK).map(|c| fold(c, op)).collect();
    partials.into_iter().fold(identity(op), |a, b| combine(op, a, b))
}

fn reduce_slice<T: Element>(xs: &[T], op: Op) -> T {
    T::narrow(fold_chunks(xs, op))
}

/// The bytes of one element, in native order.
pub(super) fn element_bytes<T: Element>(v: T) -> Vec<u8> {
    let size = std::mem::size_of::<T>();
    // SAFETY: T is a plain number type of `size` bytes.
    unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, size).to_vec() }
}
