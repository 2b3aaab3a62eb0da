//! The host backend's pieces of the multi-rank operations (see the Backend trait):
//! plain loops over rank keys, the reference the CUDA kernels are checked against.

use std::ops::Range;

use rayon::prelude::*;

use super::HostMemory;
use crate::backend::{probe_groups, BandCounts};
use crate::dtype::{DType, Order};
use crate::error::{internal, Result};
use crate::multi::keys::{bits_at, rank_key};

/// The rank keys of the first `len` elements.
fn keys_of(mem: &HostMemory, dtype: DType, len: usize, order: Order) -> Vec<u64> {
    let w = dtype.size();
    // SAFETY: the buffer holds `len` elements; nothing writes it meanwhile.
    let bytes = unsafe { &mem.bytes()[..len * w] };
    (0..len).into_par_iter().map(|i| rank_key(dtype, bits_at(bytes, w, i), order)).collect()
}

pub(super) fn count_before(keys: &HostMemory, dtype: DType, (len, within): (usize, &[Range<u64>]), order: Order,
                           probes: &[u64]) -> Result<Vec<u64>> {
    let per_group = probe_groups(len, within, probes.len())?;
    let ks = keys_of(keys, dtype, len, order);
    Ok(probes
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let w = &within[i / per_group];
            w.start + ks[w.start as usize..w.end as usize].partition_point(|&k| k < p) as u64
        })
        .collect())
}

pub(super) fn sample(input: &HostMemory, dtype: DType, len: usize, count: usize) -> Vec<u8> {
    let w = dtype.size();
    // SAFETY: as in keys_of.
    let bytes = unsafe { &input.bytes()[..len * w] };
    (0..count).flat_map(|i| {
        let at = ((i as u128 * len as u128) / count as u128) as usize;
        bytes[at * w..(at + 1) * w].to_vec()
    }).collect()
}

pub(super) fn band(input: &HostMemory, dtype: DType, len: usize, (lo, hi): (u64, u64), digit_shift: Option<u32>,
                   out: &HostMemory, cap: usize) -> Result<BandCounts> {
    let w = dtype.size();
    if out.len_bytes() < cap * w {
        return Err(internal("band: out holds fewer than cap elements"));
    }
    debug_assert!(digit_shift.is_none_or(|s| s + 8 <= 8 * w as u32), "digit at {digit_shift:?} of {dtype:?} keys");
    let ks = keys_of(input, dtype, len, Order::Ascending);
    // SAFETY: as in keys_of; `out` is other memory with room for `cap` elements.
    let (bytes, dst) = unsafe { (&input.bytes()[..len * w], out.bytes_mut()) };
    let (mut below, mut inside) = (0u64, 0u64);
    let mut digits = vec![0u64; if digit_shift.is_some() { 256 } else { 0 }];
    for (i, &k) in ks.iter().enumerate() {
        if k < lo {
            below += 1;
        } else if k <= hi {
            if let Some(shift) = digit_shift {
                digits[((k >> shift) & 0xff) as usize] += 1;
            }
            if (inside as usize) < cap {
                let at = inside as usize * w;
                dst[at..at + w].copy_from_slice(&bytes[i * w..(i + 1) * w]);
            }
            inside += 1;
        }
    }
    Ok(BandCounts { below, inside, digits, holes: 0 })
}

pub(super) fn digit_counts(input: &HostMemory, dtype: DType, len: usize, prefix: u64, shift: u32) -> Vec<u64> {
    let mut counts = vec![0u64; 256];
    let above = shift + 8;
    for k in keys_of(input, dtype, len, Order::Ascending) {
        if above >= 64 || (k >> above) == (prefix >> above) {
            counts[((k >> shift) & 0xff) as usize] += 1;
        }
    }
    counts
}

pub(super) fn add_u64(mem: &HostMemory, len: usize, value: u64) {
    // SAFETY: the buffer holds `len` U64 elements; this call alone touches them.
    let xs = unsafe { mem.typed_mut::<u64>(len) };
    xs.par_iter_mut().for_each(|x| *x = x.wrapping_add(value));
}

pub(super) fn gather_u64(src: &HostMemory, positions: &HostMemory, len: usize, dst: &HostMemory) -> Result<()> {
    let n = src.len_bytes() / 8;
    // SAFETY: positions and dst hold `len` U64 elements, src `n`; dst is other memory.
    let (s, p, d) = unsafe { (src.typed::<u64>(n), positions.typed::<u64>(len), dst.typed_mut::<u64>(len)) };
    if p.iter().any(|&i| i as usize >= n) {
        return Err(internal("gather_u64: a position past the source"));
    }
    d.par_iter_mut().zip(p.par_iter()).for_each(|(d, &i)| *d = s[i as usize]);
    Ok(())
}

/// The runs ((start, length) in elements, in order) merged stably: a stable sort of
/// their elements in run order by rank key keeps an earlier run's key first among
/// equals, which is all a merge of sorted runs promises.
pub(super) fn merge_runs(
    keys: &HostMemory,
    values: Option<(&HostMemory, DType)>,
    dtype: DType,
    order: Order,
    runs: &[(usize, usize)],
    out: &HostMemory,
    out_values: Option<&HostMemory>,
) -> Result<()> {
    let end = runs.iter().map(|&(at, n)| at + n).max().unwrap_or(0);
    let ks = keys_of(keys, dtype, end, order);
    let mut perm: Vec<usize> = runs.iter().flat_map(|&(at, n)| at..at + n).collect();
    let n = perm.len();
    perm.sort_by_key(|&i| ks[i]);
    let gather = |from: &HostMemory, to: &HostMemory, w: usize| {
        // SAFETY: `from` holds the runs (up to `end` elements) and `to` n elements of
        // width w; they are different memory.
        let (src, dst) = unsafe { (&from.bytes()[..end * w], &mut to.bytes_mut()[..n * w]) };
        for (x, &p) in perm.iter().enumerate() {
            dst[x * w..(x + 1) * w].copy_from_slice(&src[p * w..(p + 1) * w]);
        }
    };
    gather(keys, out, dtype.size());
    match (values, out_values) {
        (Some((v, vd)), Some(ov)) => gather(v, ov, vd.size()),
        (None, None) => {}
        _ => return Err(internal("merge_runs: values on one side only")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one group's range, as the type asks
    fn count_before_searches_each_group_inside_its_range_only() {
        // Sorted u32 keys 0, 10, 20, ..., 90.
        let mut keys: Vec<u32> = (0..10).map(|i| i * 10).collect();
        let mem = HostMemory::borrowed(keys.as_mut_ptr() as *mut u8, 40);
        let whole = count_before(&mem, DType::U32, (10, &[0..10]), Order::Ascending, &[0, 5, 10, 95, 200]).unwrap();
        assert_eq!(whole, [0, 1, 1, 10, 10]);
        // Groups of two probes: answers clamp to each group's range, counted from 0.
        let within = [2..5, 7..7];
        let got = count_before(&mem, DType::U32, (10, &within), Order::Ascending, &[25, 45, 0, 99]).unwrap();
        assert_eq!(got, [3, 5, 7, 7]);
        // Uneven groups and ranges past len are internal errors, not panics.
        assert!(count_before(&mem, DType::U32, (10, &within), Order::Ascending, &[1, 2, 3]).is_err());
        assert!(count_before(&mem, DType::U32, (10, &[3..11]), Order::Ascending, &[1]).is_err());
        assert!(count_before(&mem, DType::U32, (10, &[]), Order::Ascending, &[1]).is_err());
    }
}
