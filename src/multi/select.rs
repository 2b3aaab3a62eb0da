//! The element of global rank k over ranks, on every rank. A sample of every shard,
//! in proportion to its length, brackets rank k; one pass over each shard counts the
//! keys below the bracket and keeps those inside; digit rounds over the kept keys
//! (their counts summed over ranks) finish it. When the bracket misses rank k or keeps
//! too much (a sample that misjudged, many equal keys), the digit rounds run over the
//! whole shards instead: slower, never wrong.

use super::agree::{agree_on, Call, What};
use super::keys::{bits_at, from_rank_key, key_mask, rank_key};
use super::{Comm, Phases};
use crate::backend::{Buffer, Memory};
use crate::dtype::{DType, Order};
use crate::error::{invalid, Result};

pub struct SelectArgs<'a> {
    pub input: &'a Buffer,
    pub k: u64,
}

/// Samples taken over all ranks together (knob multi.select_samples_log2, 16 by
/// default): the bracket keeps about 8 / sqrt(samples) of the keys for the digit
/// rounds, and the sample's gather, host copy and sort grow with it. The knob sets the
/// sample exchange's sizes, so every process of a communicator must give it alike.
fn samples() -> u64 {
    1 << crate::backend::cuda::tuning::knob("multi.select_samples_log2", 16).clamp(8, 24)
}

pub fn select_kth(comm: &Comm, args: Result<SelectArgs>) -> Result<u64> {
    let (a, lens) = agree_on(&*comm.link, args, |a| Call::new(What::SelectKth, a.input.dtype as u32, 0, 0, a.k, a.input.len as u64))?;
    let total: u64 = lens.iter().sum();
    if a.k >= total {
        return Err(invalid(format!("k = {} is not below the {total} elements of all shards", a.k)));
    }
    comm.after_agreement(|| {
        let key = match bracket(comm, &a, &lens, total)? {
            Some(key) => key,
            None => {
                let whole = Rounds { keys: &a.input.memory, dtype: a.input.dtype, len: a.input.len, holes: Holes::NONE };
                digit_rounds(comm, &whole, a.k, 0, 8 * a.input.dtype.size() as u32, None)?
            }
        };
        Ok(from_rank_key(a.input.dtype, key))
    })
}

/// The bracket's pass and, when it holds rank k, the digit rounds over what it kept;
/// None when the whole shards must be searched.
fn bracket(comm: &Comm, a: &SelectArgs, lens: &[u64], total: u64) -> Result<Option<u64>> {
    let dtype = a.input.dtype;
    let mut phases = Phases::new(comm);
    let (lo, hi, width) = sample_bracket(comm, a, lens, total, &mut phases)?;
    phases.mark("bracket")?;
    let expect = (width as u128 * a.input.len as u128 / samples().min(total) as u128) as usize;
    let cap = (4 * expect + 4096).min(a.input.len);
    let kept = comm.scratch(0, dtype, cap)?;
    // Rank keys of the input's width: the CUDA band compares keys in that width.
    debug_assert!(lo <= hi && hi <= key_mask(dtype), "bracket [{lo}, {hi}] beyond {dtype:?} keys");
    // The kept keys agree with lo and hi above their highest differing bit, so the
    // digit rounds start at the digit holding it, and the band counts that digit,
    // unless it leaves the count to the rounds (see band_counts_digit).
    let top = 64 - (lo ^ hi).leading_zeros();
    let start = top.div_ceil(8) * 8;
    let first_shift = start.checked_sub(8).filter(|_| band_counts_digit(dtype, total / lens.len() as u64));
    let band = comm.ctx.backend.band(&a.input.memory, dtype, a.input.len, lo, hi, first_shift, &kept, cap)?;
    let slots = band.inside + band.holes;
    // Below, inside, ranks that overflowed their scratch, holes, ranks that counted the
    // digit, then its 256 counts (zeros where not counted): as long on every rank
    // whatever each decided, so processes given different knobs get an error rather
    // than exchanges of different lengths.
    let mut mine = vec![band.below, band.inside, (slots > cap as u64) as u64, band.holes, first_shift.is_some() as u64];
    mine.extend(band.digits.iter().copied().chain(std::iter::repeat(0)).take(256));
    let mut all = summed_over_ranks(comm, &mine)?;
    phases.mark("band")?;
    let digits = all.split_off(5);
    let (all_below, all_inside, overflow, all_holes, counted) = (all[0], all[1], all[2] != 0, all[3], all[4]);
    if counted != 0 && counted != lens.len() as u64 {
        return Err(invalid("the ranks disagree on whether select_kth's band counts a digit: give every process the same GPUPRIMS_TUNE"));
    }
    if a.k < all_below || a.k >= all_below + all_inside {
        return Ok(None);
    }
    if lo == hi {
        return Ok(Some(lo)); // every kept key is this one
    }
    if overflow {
        return Ok(None);
    }
    let prefix = if start >= 64 { 0 } else { lo >> start << start };
    let first = (counted != 0).then_some(digits);
    let rounds = Rounds { keys: &kept, dtype, len: slots as usize, holes: Holes { key: hi, count: all_holes } };
    let key = digit_rounds(comm, &rounds, a.k - all_below, prefix, start, first)?;
    phases.mark("digit rounds")?;
    phases.report("select_kth", &format!(" (kept {} of {})", band.inside, a.input.len));
    Ok(Some(key))
}

/// Each rank's share of the sample, then the rank keys around rank k's place in it:
/// (lo, hi, how many samples lie between).
fn sample_bracket(comm: &Comm, a: &SelectArgs, lens: &[u64], total: u64, phases: &mut Phases) -> Result<(u64, u64, u64)> {
    let (dtype, w) = (a.input.dtype, a.input.dtype.size());
    let samples = samples().min(total);
    let share = |len: u64| ((samples as u128 * len as u128).div_ceil(total as u128) as u64).min(len) as usize;
    let most = lens.iter().map(|&l| share(l)).max().unwrap_or(0);
    let mine = share(a.input.len as u64);
    let mut bytes = if mine > 0 { comm.ctx.backend.sample(&a.input.memory, dtype, a.input.len, mine)? } else { Vec::new() };
    bytes.resize(most * w, 0);
    phases.mark("sample")?;
    let all = comm.link.all_gather(&bytes)?;
    phases.mark("sample exchange")?;
    let mut sample: Vec<u8> = Vec::with_capacity(samples as usize * w);
    for (r, &len) in lens.iter().enumerate() {
        sample.extend_from_slice(&all[r * most * w..][..share(len) * w]);
    }
    let n = (sample.len() / w) as u64;
    let at = (a.k as u128 * n as u128 / total as u128) as u64;
    let margin = 4 * (n as f64).sqrt() as u64 + 16;
    let sorted = sorted_on_device(comm, dtype, &sample)?;
    // The sorted keys from the lower bound's place to the upper's, in one read (one wait).
    let lo_at = at.checked_sub(margin);
    let hi_at = (at + margin < n).then_some(at + margin);
    let (first, last) = (lo_at.or(hi_at).unwrap_or(0), hi_at.or(lo_at).unwrap_or(0));
    let mut between = vec![0u8; if lo_at.is_some() || hi_at.is_some() { (last - first + 1) as usize * w } else { 0 }];
    if !between.is_empty() {
        comm.ctx.backend.read(&sorted, first as usize * w, &mut between)?;
    }
    let key_at = |i: u64| rank_key(dtype, bits_at(&between, w, (i - first) as usize), Order::Ascending);
    let lo = lo_at.map_or(0, key_at);
    let hi = hi_at.map_or(key_mask(dtype), key_at);
    Ok((lo, hi, 2 * margin + 1))
}

/// The gathered sample, sorted by the rank's own device (its scratch slot 1): the
/// host's two selections among 2^16 keys took 1.0-1.1 ms on the 2-GPU machine's CPU,
/// a fifth of the whole call; the device sorts them in tens of microseconds.
fn sorted_on_device(comm: &Comm, dtype: DType, sample: &[u8]) -> Result<Memory> {
    let n = sample.len() / dtype.size();
    let keys = comm.scratch(1, dtype, n.max(1))?;
    comm.ctx.backend.write(&keys, 0, sample)?;
    if n > 1 {
        comm.ctx.backend.radix_sort(&keys, dtype, None, n, Order::Ascending)?;
    }
    Ok(keys)
}

/// Whether the band counts the first digit. For large shards of 4-byte keys it does
/// not: the CUDA band then places its kept keys by warp (faster, but leaving holes that
/// only the digit rounds can take off), from a mean shard of 2^multi.band_warps_log2.
/// Decided from the mean, which every rank knows alike, since it sets the exchange's
/// sizes (the knob likewise must be given alike to every process).
fn band_counts_digit(dtype: DType, mean_shard: u64) -> bool {
    let from_log2 = crate::backend::cuda::tuning::knob("multi.band_warps_log2", 28).min(63);
    dtype.size() != 4 || mean_shard < 1u64 << from_log2
}

/// What the digit rounds search: every rank's first `len` `keys`, of which `holes.count`
/// (over all ranks) are slots holding the key `holes.key` and no element.
struct Rounds<'a> {
    keys: &'a Memory,
    dtype: DType,
    len: usize,
    holes: Holes,
}

/// Slots of the band by warp left unused, filled with hi's key (a rank key).
#[derive(Clone, Copy)]
struct Holes {
    key: u64,
    count: u64,
}

impl Holes {
    const NONE: Holes = Holes { key: 0, count: 0 };

    /// Takes the holes off `counts`, the digit at `shift` of the keys under `prefix`
    /// (above bit shift + 8): they all fall in the hole key's digit, when it is under it.
    fn take_off(&self, counts: &mut [u64], prefix: u64, shift: u32) -> Result<()> {
        let above = shift + 8;
        if self.count > 0 && (above >= 64 || (self.key ^ prefix) >> above == 0) {
            let count = &mut counts[((self.key >> shift) & 0xff) as usize];
            *count = count.checked_sub(self.count).ok_or_else(|| crate::error::internal("select_kth: fewer keys of hi's digit than holes"))?;
        }
        Ok(())
    }
}

/// Digit rounds from the digit below bit `start`: the rank key of the element of rank
/// `k` among every rank's keys that agree with `prefix` above `start`. `first`: the
/// first round's counts over all ranks, where the band counted them.
fn digit_rounds(comm: &Comm, rounds: &Rounds, mut k: u64, mut prefix: u64, start: u32, mut first: Option<Vec<u64>>) -> Result<u64> {
    let mut shift = start;
    while shift > 0 {
        shift -= 8;
        let counts = match first.take() {
            Some(counts) => counts,
            None => {
                let mut counts = summed_digit_counts(comm, rounds.keys, rounds.dtype, rounds.len, prefix, shift)?;
                rounds.holes.take_off(&mut counts, prefix, shift)?;
                counts
            }
        };
        let mut digit = 0;
        while k >= counts[digit] {
            if digit == 255 {
                return Err(crate::error::internal("select_kth: the ranks' digit counts add up to less than k"));
            }
            k -= counts[digit];
            digit += 1;
        }
        prefix |= (digit as u64) << shift;
    }
    Ok(prefix)
}

/// The counts of the digit at `shift` among the keys under `prefix`, summed over ranks.
fn summed_digit_counts(comm: &Comm, keys: &Memory, dtype: DType, len: usize, prefix: u64, shift: u32) -> Result<Vec<u64>> {
    summed_over_ranks(comm, &comm.ctx.backend.digit_counts(keys, dtype, len, prefix, shift)?)
}

/// Every rank's `counts` (the same length on every rank) added element by element.
fn summed_over_ranks(comm: &Comm, counts: &[u64]) -> Result<Vec<u64>> {
    let mut sums = vec![0u64; counts.len()];
    for part in gather_u64s(comm, counts)?.chunks(counts.len().max(1)) {
        sums.iter_mut().zip(part).for_each(|(s, c)| *s += c);
    }
    Ok(sums)
}

/// Every rank's `values`, in rank order.
pub(super) fn gather_u64s(comm: &Comm, values: &[u64]) -> Result<Vec<u64>> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let all = comm.link.all_gather(&bytes)?;
    Ok(all.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect())
}

#[cfg(test)]
mod tests {
    use super::Holes;

    #[test]
    fn holes_come_off_the_hole_keys_digit_only_under_its_prefix() {
        let holes = Holes { key: 0x1234_5678, count: 3 };
        // The first round (nothing decided above bit 32): hi's digit 0x12 at shift 24.
        let mut counts = vec![5u64; 256];
        holes.take_off(&mut counts, 0, 24).unwrap();
        assert_eq!((counts[0x12], counts[0x13]), (2, 5));
        // Under hi's prefix 0x12 at shift 16: digit 0x34.
        let mut counts = vec![5u64; 256];
        holes.take_off(&mut counts, 0x1200_0000, 16).unwrap();
        assert_eq!(counts[0x34], 2);
        // Under another prefix: untouched.
        let mut counts = vec![5u64; 256];
        holes.take_off(&mut counts, 0x1100_0000, 16).unwrap();
        assert!(counts.iter().all(|&c| c == 5));
        // Past 64 bits above (8-byte keys' first round): always under.
        let wide = Holes { key: 0xAB00_0000_0000_0000, count: 1 };
        let mut counts = vec![1u64; 256];
        wide.take_off(&mut counts, 0, 56).unwrap();
        assert_eq!(counts[0xAB], 0);
        // More holes than keys of the digit: an error, not a wrapped count.
        assert!(wide.take_off(&mut counts, 0, 56).is_err());
    }
}
