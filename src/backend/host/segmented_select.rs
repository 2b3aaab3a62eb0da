//! Host segmented select: the rows checked in order (the first bad one is the error),
//! then each row's element of its rank by the standard library's selection
//! (introselect) on a copy of the rows (one scratch, allocated before `out` is
//! written) under the library's total order, rows in parallel.

use rayon::prelude::*;

use super::sort::sort_key;
use super::{scratch_vec, HostMemory};
use crate::backend::{RowFault, Rows};
use crate::dtype::{DType, Order};
use crate::error::Result;
use crate::with_element_type;

/// `n` entries of a U32 or U64 buffer as u64.
pub(super) fn entries(mem: &HostMemory, dtype: DType, n: usize, what: &str) -> Result<Vec<u64>> {
    let mut v = scratch_vec(n, what)?;
    // SAFETY: the buffer holds `n` entries of its dtype (checked by the caller).
    match dtype {
        DType::U32 => v.extend(unsafe { mem.typed::<u32>(n) }.iter().map(|&v| v as u64)),
        _ => v.extend_from_slice(unsafe { mem.typed::<u64>(n) }),
    }
    Ok(v)
}

pub(super) fn segmented_select(values: &HostMemory, dtype: DType, len: usize, rows: &Rows, out: &HostMemory) -> Result<()> {
    let nrows = rows.nrows;
    if nrows == 0 {
        return Ok(()); // (offsets[0] alone bounds no row: it is not checked)
    }
    let offsets = entries(rows.offsets.as_host()?, rows.offsets_dtype, nrows + 1, "a copy of the offsets")?;
    let ranks = match rows.ranks {
        Some((mem, t)) => Some(entries(mem.as_host()?, t, nrows, "a copy of the ranks")?),
        None => None,
    };
    let rank = |row: usize, n: u64| ranks.as_ref().map_or((n - 1) / 2, |r| r[row]);
    let first_bad = (0..nrows)
        .into_par_iter()
        .find_first(|&row| RowFault::of(offsets[row], offsets[row + 1], len, |n| rank(row, n)).is_some());
    if let Some(row) = first_bad {
        let (begin, end) = (offsets[row], offsets[row + 1]);
        let fault = RowFault::of(begin, end, len, |n| rank(row, n)).expect("the row found bad");
        let r = if fault == RowFault::RankPastRow { rank(row, end - begin) } else { 0 };
        return Err(fault.error(row as u64, begin, end, r, len));
    }
    with_element_type!(dtype, T => {
        // SAFETY: values holds `len` elements of T, out `nrows` (checked by the caller),
        // and they do not overlap.
        let xs = unsafe { values.typed::<T>(len) };
        // The rows tile [offsets[0], offsets[nrows]) (checked above): one copy, cut
        // into a slice a row.
        let (first, last) = (offsets[0] as usize, offsets[nrows] as usize);
        let mut copy = scratch_vec(last - first, "a copy of the rows")?;
        copy.extend_from_slice(&xs[first..last]);
        let mut row_copies: Vec<&mut [T]> = scratch_vec(nrows, "the rows' slices")?;
        let mut rest = copy.as_mut_slice();
        for row in 0..nrows {
            let (this, next) = rest.split_at_mut((offsets[row + 1] - offsets[row]) as usize);
            row_copies.push(this);
            rest = next;
        }
        let out = unsafe { out.typed_mut::<T>(nrows) };
        out.par_iter_mut().zip(row_copies.par_iter_mut()).enumerate().for_each(|(row, (o, row_copy))| {
            let k = rank(row, row_copy.len() as u64) as usize;
            let (_, &mut at, _) =
                row_copy.select_nth_unstable_by(k, |a, b| sort_key(*a, Order::Ascending).cmp(&sort_key(*b, Order::Ascending)));
            *o = at;
        });
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::memory::memory_of as memory;


    fn run(values: &[f32], offsets: &[u32], ranks: Option<&[u64]>) -> Result<Vec<f32>> {
        let nrows = offsets.len() - 1;
        let (v, o, out) = (memory(values), memory(offsets), memory(&vec![f32::from_bits(0xA5A5A5A5); nrows]));
        let k = ranks.map(memory);
        let rows = Rows { offsets: &o, offsets_dtype: DType::U32, nrows, ranks: k.as_ref().map(|m| (m, DType::U64)) };
        segmented_select(v.as_host()?, DType::F32, values.len(), &rows, out.as_host()?)?;
        // SAFETY: out holds nrows f32.
        Ok(unsafe { out.as_host()?.typed::<f32>(nrows).to_vec() })
    }

    #[test]
    fn rows_follow_the_total_order() {
        let values = [9.0, f32::NAN, -0.0, 0.0, f32::NEG_INFINITY, 1.0, f32::INFINITY, -f32::NAN, 7.0];
        // rows [1, 4), [4, 8), [8, 9): a gap before the first row
        let got = run(&values, &[1, 4, 8, 9], None).unwrap();
        assert_eq!(got[0].to_bits(), 0.0f32.to_bits()); // median of NaN, -0.0, +0.0: +0.0
        assert_eq!(got[1], 1.0); // lower median of -inf, 1, +inf, NaN
        assert_eq!(got[2], 7.0);
        let got = run(&values, &[1, 4, 8, 9], Some(&[2, 3, 0])).unwrap();
        assert!(got[0].is_nan() && got[1].is_nan());
    }

    /// No rows: the one offset bounds nothing and is not checked (fuzz_abi found it
    /// taken as a row's start, past the values' end).
    #[test]
    fn no_rows_read_no_offset() {
        assert_eq!(run(&[1.0], &[15], None).unwrap(), Vec::<f32>::new());
    }

    #[test]
    fn the_first_bad_row_is_named() {
        let values = [0.0f32; 10];
        let message = |e: crate::error::Error| e.to_string();
        assert!(message(run(&values, &[0, 2, 2, 5, 3], None).unwrap_err()).starts_with("row 1: empty"));
        assert!(message(run(&values, &[0, 2, 4, 5, 3], None).unwrap_err()).starts_with("row 3: offsets decrease"));
        assert!(message(run(&values, &[0, 2, 4, 11], None).unwrap_err()).starts_with("row 2: ends past"));
        assert!(message(run(&values, &[0, 2, 4, 6], Some(&[1, 2, 0])).unwrap_err()).starts_with("row 1: rank ks[1] = 2"));
    }
}
