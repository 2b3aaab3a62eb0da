//! Host scan in two parallel passes over fixed-size chunks: each chunk's aggregate,
//! an in-order prefix of the aggregates, then each chunk scanned from its carry-in.
//! Input and output may be the same memory (in place), hence raw pointers. The
//! running value is the type's accumulator (f32 for the 16-bit floats: each output
//! rounded once).

use rayon::prelude::*;

use super::reduce::{fold, CHUNK};
use super::HostMemory;
use crate::dtype::{combine, identity, value_of, DType, Element, Op, ScanMode};
use crate::with_element_type;

/// `seed`, when given, is the accumulator's bits of a value combined in front of every
/// element (a multi-rank scan's carry from the ranks before).
pub(super) fn scan(input: &HostMemory, output: &HostMemory, dtype: DType, len: usize, op: Op, mode: ScanMode, seed: Option<u64>) {
    with_element_type!(dtype, T => {
        let start = match seed {
            Some(bits) => value_of::<<T as Element>::Acc>(bits),
            None => identity::<<T as Element>::Acc>(op),
        };
        scan_typed::<T>(SendPtr(input.ptr() as *mut T), SendPtr(output.ptr() as *mut T), len, op, mode, start)
    })
}

#[derive(Clone, Copy)]
struct SendPtr<T>(*mut T);
// SAFETY: each parallel task touches a disjoint chunk.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    // A method, so closures capture the whole wrapper rather than the raw field.
    fn at(&self, i: usize) -> *mut T {
        // SAFETY: callers stay inside the allocation.
        unsafe { self.0.add(i) }
    }
}

fn scan_typed<T: Element>(input: SendPtr<T>, output: SendPtr<T>, len: usize, op: Op, mode: ScanMode, start: T::Acc) {
    let chunks = len.div_ceil(CHUNK);
    let chunk_range = |c: usize| (c * CHUNK, ((c + 1) * CHUNK).min(len));

    // Pass 1: every chunk's aggregate (read-only).
    let aggregates: Vec<T::Acc> = (0..chunks)
        .into_par_iter()
        .map(|c| {
            let (lo, hi) = chunk_range(c);
            // SAFETY: in bounds; nothing writes during this pass.
            let xs = unsafe { std::slice::from_raw_parts(input.at(lo), hi - lo) };
            fold(xs, op)
        })
        .collect();

    // Carry into each chunk: exclusive prefix of the aggregates, in order.
    let mut carries = Vec::with_capacity(chunks);
    let mut running = start;
    for &a in &aggregates {
        carries.push(running);
        running = combine(op, running, a);
    }

    // Pass 2: each chunk from its carry-in; element i is read before it is written.
    (0..chunks).into_par_iter().for_each(|c| {
        let (lo, hi) = chunk_range(c);
        let mut acc = carries[c];
        for i in lo..hi {
            // SAFETY: i < len; chunk c alone touches [lo, hi).
            unsafe {
                let x = input.at(i).read().widen();
                let y = match mode {
                    ScanMode::Inclusive => {
                        acc = combine(op, acc, x);
                        acc
                    }
                    ScanMode::Exclusive => {
                        let before = acc;
                        acc = combine(op, acc, x);
                        before
                    }
                };
                output.at(i).write(T::narrow(y));
            }
        }
    });
}
