//! Host segmented select: the rows checked in order (the first bad one is the error),
//! then each row's element of its rank by the standard library's selection
//! (introselect) on a copy of the row under the library's total order, rows in
//! parallel.

use rayon::prelude::*;

use super::sort::sort_key;
use super::HostMemory;
use crate::backend::{RowFault, Rows};
use crate::dtype::{DType, Order};
use crate::error::Result;
use crate::with_element_type;

/// `n` entries of a U32 or U64 buffer as u64.
fn entries(mem: &HostMemory, dtype: DType, n: usize) -> Vec<u64> {
    // SAFETY: the buffer holds `n` entries of its dtype (checked by the caller).
    match dtype {
        DType::U32 => unsafe { mem.typed::<u32>(n) }.iter().map(|&v| v as u64).collect(),
        _ => unsafe { mem.typed::<u64>(n) }.to_vec(),
    }
}

pub(super) fn segmented_select(values: &HostMemory, dtype: DType, len: usize, rows: &Rows, out: &HostMemory) -> Result<()> {
    let nrows = rows.nrows;
    let offsets = entries(rows.offsets.as_host()?, rows.offsets_dtype, nrows + 1);
    let ranks = match rows.ranks {
        Some((mem, t)) => Some(entries(mem.as_host()?, t, nrows)),
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
        let out = unsafe { out.typed_mut::<T>(nrows) };
        out.par_iter_mut().enumerate().for_each_init(Vec::new, |row_copy, (row, o)| {
            let (begin, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            row_copy.clear();
            row_copy.extend_from_slice(&xs[begin..end]);
            let k = rank(row, (end - begin) as u64) as usize;
            let (_, &mut at, _) =
                row_copy.select_nth_unstable_by(k, |a, b| sort_key(*a, Order::Ascending).cmp(&sort_key(*b, Order::Ascending)));
            *o = at;
        });
    });
    Ok(())
}
