//! Host segmented top-k: the ragged rows checked in order (the first bad one is the
//! error), the per-row ks added up against the output, then every row on its own, in
//! parallel: its (order key, index) pairs, the standard library's selection
//! (introselect) of the first min(k, row length), a sort of those, then the pads. All
//! scratch is allocated before the outputs are touched, so a failure leaves them as
//! they were.

use rayon::prelude::*;

use super::segmented_select::entries;
use super::sort::sort_key;
use super::{scratch_vec, HostMemory};
use crate::backend::{ks_total_mismatch, TopkKs, TopkOut, TopkRowFault, TopkRows, TOPK_NO_INDEX};
use crate::dtype::{DType, Element, Order};
use crate::error::Result;
use crate::with_element_type;

/// Rows from this length on fill and sort their pairs on every thread (a long row
/// alone would leave the other threads idle); shorter ones stay on one.
const PARALLEL_ROW: usize = 1 << 15;

/// Where each row lies in values: nrows + 1 bounds, row r at [at[r], at[r + 1]). Ragged
/// rows are checked here, in order, the first bad one being the error.
fn row_bounds(rows: &TopkRows, len: usize) -> Result<Vec<u64>> {
    match *rows {
        TopkRows::Uniform { nrows, row_len } => {
            let mut at = scratch_vec(nrows + 1, "the rows' bounds")?;
            at.extend((0..=nrows).map(|r| (r * row_len) as u64));
            Ok(at)
        }
        TopkRows::Ragged { nrows: 0, .. } => Ok(vec![0]), // offsets[0] alone bounds no row: not read
        TopkRows::Ragged { offsets, offsets_dtype, nrows } => {
            let at = entries(offsets.as_host()?, offsets_dtype, nrows + 1, "a copy of the offsets")?;
            let first_bad = (0..nrows).into_par_iter().find_first(|&r| TopkRowFault::of(at[r], at[r + 1], len).is_some());
            match first_bad {
                Some(r) => {
                    let fault = TopkRowFault::of(at[r], at[r + 1], len).expect("the row found bad");
                    Err(fault.error(r as u64, at[r], at[r + 1], len))
                }
                None => Ok(at),
            }
        }
    }
}

/// Where each row's results start in the output: nrows + 1 starts. Per-row ks must add
/// up to the output's length exactly (their sum may pass 2^64: checked adds).
fn result_starts(ks: &TopkKs, nrows: usize, out_len: usize) -> Result<Vec<usize>> {
    let mut starts = scratch_vec(nrows + 1, "the rows' result starts")?;
    match *ks {
        TopkKs::Each(k) => starts.extend((0..=nrows).map(|r| r * k)), // nrows * k == out_len, checked by the caller
        TopkKs::PerRow { ks, dtype } => {
            let ks = if nrows == 0 { Vec::new() } else { entries(ks.as_host()?, dtype, nrows, "a copy of the ks")? };
            let mut total = Some(0u64);
            starts.push(0);
            for &k in &ks {
                total = total.and_then(|t| t.checked_add(k));
                starts.push(total.unwrap_or(u64::MAX) as usize);
            }
            if total != Some(out_len as u64) {
                return Err(ks_total_mismatch(out_len, total));
            }
        }
    }
    Ok(starts)
}

/// Cuts `xs` into consecutive slices of the given lengths, one a row.
fn cut<'a, X>(mut xs: &'a mut [X], lens: impl ExactSizeIterator<Item = usize>, what: &str) -> Result<Vec<&'a mut [X]>> {
    let mut parts = scratch_vec(lens.len(), what)?;
    for n in lens {
        let (this, rest) = std::mem::take(&mut xs).split_at_mut(n);
        parts.push(this);
        xs = rest;
    }
    Ok(parts)
}

/// The lengths of the consecutive ranges between bounds.
fn lengths<B: Copy + TryInto<usize>>(at: &[B]) -> impl ExactSizeIterator<Item = usize> + '_ {
    let size = |b: B| b.try_into().unwrap_or_else(|_| unreachable!("a checked bound"));
    at.windows(2).map(move |w| size(w[1]) - size(w[0]))
}

pub(super) fn segmented_topk(values: &HostMemory, dtype: DType, len: usize, rows: &TopkRows, ks: &TopkKs, order: Order, out: &TopkOut) -> Result<()> {
    let at = row_bounds(rows, len)?;
    let nrows = rows.nrows();
    let starts = result_starts(ks, nrows, out.len)?;
    if out.len == 0 {
        return Ok(()); // only the checks had anything to do
    }
    // The rows tile [at[0], at[nrows]) (checked above): one scratch of pairs, a slice a row.
    let span = (at[nrows] - at[0]) as usize;
    let mut pairs = scratch_vec(span, "the rows' (key, index) pairs")?;
    pairs.resize(span, (0u64, 0usize));
    let row_pairs = cut(&mut pairs, lengths(&at), "the rows' slices")?;
    // SAFETY: out_indices holds out.len U64 and overlaps no other buffer of the call
    // (checked by the caller). Without it, every row gets an empty slice: no indices.
    let mut index_lens = scratch_vec(nrows, "the rows' index counts")?;
    let indices: &mut [u64] = match out.indices {
        Some(m) => {
            index_lens.extend(lengths(&starts));
            unsafe { m.as_host()?.typed_mut::<u64>(out.len) }
        }
        None => {
            index_lens.resize(nrows, 0);
            &mut []
        }
    };
    let mut index_parts = cut(indices, index_lens.into_iter(), "the rows' index slices")?;
    with_element_type!(dtype, T => {
        // SAFETY: values holds `len` elements of T, out_values out.len, not overlapping
        // each other or the indices (checked by the caller).
        let xs = unsafe { values.typed::<T>(len) };
        let out_values = unsafe { out.values.as_host()?.typed_mut::<T>(out.len) };
        let mut value_parts = cut(out_values, lengths(&starts), "the rows' value slices")?;
        value_parts.par_iter_mut().zip(index_parts.par_iter_mut()).zip(row_pairs.into_par_iter()).enumerate().for_each(
            |(r, ((vals, ix), pairs))| {
                let row = &xs[at[r] as usize..at[r + 1] as usize];
                top_of_row(row, pairs, order, vals, ix);
            },
        );
    });
    Ok(())
}

/// One row: its first vals.len() elements in `order` (ties by lower index) into `vals`
/// and their indices within the row into `ix` (empty when no indices are wanted);
/// slots past the row's length get zero bits and TOPK_NO_INDEX. `pairs` is scratch of
/// the row's length.
fn top_of_row<T: Element>(row: &[T], pairs: &mut [(u64, usize)], order: Order, vals: &mut [T], ix: &mut [u64]) {
    let keyed = |(i, &v): (usize, &T)| (sort_key(v, order), i);
    let long = row.len() >= PARALLEL_ROW;
    if long {
        pairs.par_iter_mut().zip(row.par_iter().enumerate()).for_each(|(p, e)| *p = keyed(e));
    } else {
        pairs.iter_mut().zip(row.iter().enumerate()).for_each(|(p, e)| *p = keyed(e));
    }
    let m = vals.len().min(row.len());
    if m > 0 && m < row.len() {
        pairs.select_nth_unstable(m - 1); // the m first in front, in no order
    }
    let best = &mut pairs[..m];
    if long {
        best.par_sort_unstable();
    } else {
        best.sort_unstable(); // (key, index) pairs are unique: the order is fixed
    }
    for (o, &(_, i)) in vals.iter_mut().zip(best.iter()) {
        *o = row[i]; // the element itself, bit for bit (payloads of NaNs too)
    }
    vals[m..].fill(T::zero());
    if !ix.is_empty() {
        for (o, &(_, i)) in ix.iter_mut().zip(best.iter()) {
            *o = i as u64;
        }
        ix[m..].fill(TOPK_NO_INDEX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::memory::memory_of as memory;


    /// Ragged rows (offsets u32) with per-row ks (u64) or one k: the values' bits and
    /// the indices, poison where nothing was written.
    fn run(values: &[f32], offsets: &[u32], ks: std::result::Result<&[u64], usize>, order: Order) -> Result<(Vec<u32>, Vec<u64>)> {
        let nrows = offsets.len() - 1;
        let n = match ks {
            Ok(ks) => ks.iter().sum::<u64>() as usize,
            Err(k) => k * nrows,
        };
        let (v, o) = (memory(values), memory(offsets));
        let (ov, oi) = (memory(&vec![0xA5A5A5A5u32; n]), memory(&vec![7u64; n]));
        let k_mem = ks.ok().map(memory);
        let each = match (&k_mem, ks) {
            (Some(m), _) => TopkKs::PerRow { ks: m, dtype: DType::U64 },
            (None, Err(k)) => TopkKs::Each(k),
            (None, Ok(_)) => unreachable!(),
        };
        let rows = TopkRows::Ragged { offsets: &o, offsets_dtype: DType::U32, nrows };
        let out = TopkOut { values: &ov, indices: Some(&oi), len: n };
        segmented_topk(v.as_host()?, DType::F32, values.len(), &rows, &each, order, &out)?;
        // SAFETY: the outputs hold n elements each.
        unsafe { Ok((ov.as_host()?.typed::<u32>(n).to_vec(), oi.as_host()?.typed::<u64>(n).to_vec())) }
    }

    #[test]
    fn rows_follow_the_total_order_with_pads() {
        let nan = f32::from_bits(0x7FC0_1234);
        let neg_nan = f32::from_bits(0xFFC0_0000);
        let values = [9.0, neg_nan, -0.0, 0.0, f32::NEG_INFINITY, 1.0, nan, 0.0];
        // rows [1, 4), [4, 4) empty, [4, 8)
        let (v, i) = run(&values, &[1, 4, 4, 8], Err(3), Order::Descending).unwrap();
        let want = [neg_nan, 0.0, -0.0, 0.0, 0.0, 0.0, nan, 1.0, 0.0].map(f32::to_bits);
        assert_eq!(v, want);
        assert_eq!(i, [0, 2, 1, u64::MAX, u64::MAX, u64::MAX, 2, 1, 3]);
        let (v, i) = run(&values, &[1, 4, 4, 8], Ok(&[2, 1, 5]), Order::Ascending).unwrap();
        let want = [-0.0, 0.0, 0.0, f32::NEG_INFINITY, 0.0, 1.0, nan, 0.0].map(f32::to_bits);
        assert_eq!(v, want);
        assert_eq!(i, [1, 2, u64::MAX, 0, 3, 1, 2, u64::MAX]);
    }

    #[test]
    fn nans_tie_by_index() {
        let a = f32::from_bits(0xFFC0_0001);
        let b = f32::from_bits(0x7F80_0001);
        let (v, i) = run(&[b, 1.0, a, b], &[0, 4], Err(3), Order::Descending).unwrap();
        assert_eq!(v, [b, a, b].map(f32::to_bits));
        assert_eq!(i, [0, 2, 3]);
    }

    #[test]
    fn faults_leave_the_outputs_alone() {
        let values = [0.0f32; 10];
        let message = |e: crate::error::Error| e.to_string();
        assert!(message(run(&values, &[0, 2, 1, 5, 3], Err(1), Order::Ascending).unwrap_err()).starts_with("row 1: offsets decrease"));
        assert!(message(run(&values, &[0, 2, 4, 11], Err(0), Order::Ascending).unwrap_err()).starts_with("row 2: ends past"));
        // ks adding up to 3 against an output of 2: the caller sized out for 2
        let (v, o, k) = (memory(&values), memory(&[0u32, 5, 10]), memory(&[1u64, 2]));
        let (ov, oi) = (memory(&[1.5f32; 2]), memory(&[7u64; 2]));
        let rows = TopkRows::Ragged { offsets: &o, offsets_dtype: DType::U32, nrows: 2 };
        let out = TopkOut { values: &ov, indices: Some(&oi), len: 2 };
        let ks = TopkKs::PerRow { ks: &k, dtype: DType::U64 };
        let e = segmented_topk(v.as_host().unwrap(), DType::F32, 10, &rows, &ks, Order::Ascending, &out).unwrap_err();
        assert_eq!(message(e), message(ks_total_mismatch(2, Some(3))));
        // SAFETY: two elements each.
        unsafe { assert_eq!(ov.as_host().unwrap().typed::<f32>(2), [1.5, 1.5]) };
        let k = memory(&[u64::MAX, 2]);
        let ks = TopkKs::PerRow { ks: &k, dtype: DType::U64 };
        let e = segmented_topk(v.as_host().unwrap(), DType::F32, 10, &rows, &ks, Order::Ascending, &out).unwrap_err();
        assert_eq!(message(e), message(ks_total_mismatch(2, None)));
    }

    #[test]
    fn uniform_rows_of_a_long_row() {
        let values: Vec<f32> = (0..(3 * PARALLEL_ROW)).map(|i| ((i * 7919) % 1000) as f32).collect();
        let v = memory(&values);
        let k = 5;
        let (ov, oi) = (memory(&vec![0f32; 3 * k]), memory(&vec![0u64; 3 * k]));
        let rows = TopkRows::Uniform { nrows: 3, row_len: PARALLEL_ROW };
        let out = TopkOut { values: &ov, indices: Some(&oi), len: 3 * k };
        segmented_topk(v.as_host().unwrap(), DType::F32, values.len(), &rows, &TopkKs::Each(k), Order::Descending, &out).unwrap();
        // SAFETY: 3k each.
        let (got, at) = unsafe { (ov.as_host().unwrap().typed::<f32>(3 * k).to_vec(), oi.as_host().unwrap().typed::<u64>(3 * k).to_vec()) };
        for r in 0..3 {
            let row = &values[r * PARALLEL_ROW..(r + 1) * PARALLEL_ROW];
            let mut want: Vec<(u64, usize)> = row.iter().enumerate().map(|(i, &x)| (sort_key(x, Order::Descending), i)).collect();
            want.sort_unstable();
            for j in 0..k {
                assert_eq!(at[r * k + j], want[j].1 as u64);
                assert_eq!(got[r * k + j], row[want[j].1]);
            }
        }
    }
}
