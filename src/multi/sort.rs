//! Sort over ranks, stable, with every rank keeping as many elements as it gave:
//!   1. each rank sorts its shard (the context's radix sort, stable);
//!   2. splitters: for each rank boundary (the global position where rank j's output
//!      starts), digit rounds over the sorted shards find the key there (each rank
//!      counts its keys below 256 probes a boundary by binary search within the last
//!      round's range; the counts are summed over ranks), and the keys equal to it are
//!      shared out in rank order;
//!   3. one all-to-all sends each rank the runs that belong to it;
//!   4. each rank merges the runs it received (pairwise passes, an earlier rank's key
//!      first among equals), so equal keys keep their global input order.

use std::ops::Range;

use super::agree::{agree_on, Call, What};
use super::select::gather_u64s;
use super::{offsets, Comm, Phases, Transfer};
use crate::backend::{Buffer, Memory, RunsIn, SortValues};
use crate::dtype::Order;
use crate::error::Result;

pub struct SortArgs<'a> {
    pub keys: &'a Buffer,
    pub values: Option<&'a Buffer>,
    pub order: Order,
}

pub fn sort(comm: &Comm, args: Result<SortArgs>) -> Result<()> {
    // (k: the chunking knobs, which every process must give alike.)
    let knobs = super::sort_chunks::knobs();
    let (a, lens) = agree_on(&*comm.link, args, |a| Call::new(What::Sort, a.keys.dtype as u32, a.order as u32, a.values.map_or(0, |v| v.dtype as u32), knobs, a.keys.len as u64))?;
    if comm.nranks() == 1 {
        return local_sort(comm, &a.keys.memory, &a);
    }
    if lens.iter().sum::<u64>() <= whole_sort_upto() {
        return comm.after_agreement(|| sort_whole(comm, &a, &lens));
    }
    comm.after_agreement(|| {
        let chunks = super::sort_chunks::chunks(comm, &lens)?;
        if chunks > 1 {
            return super::sort_chunks::sort(comm, &a, &lens, chunks);
        }
        let mut phases = Phases::new(comm);
        let received = Received::allocate(comm, &a)?;
        local_sort(comm, &a.keys.memory, &a)?;
        phases.mark("local sort")?;
        let (starts, _) = offsets(&lens);
        let cuts = cuts_at(comm, &a.keys.memory, &a, &lens, &starts[1..])?;
        phases.mark("splitters")?;
        super::sort_chunks::check_parts(&cuts, &lens, 1)?;
        let layout = Layout::new(&cuts, comm.rank(), Layout::word(&a));
        let sent = exchange(comm, &a, &layout, &received)?;
        phases.mark("exchange")?;
        received.merge_into(comm, &a, &layout)?;
        phases.mark("merge")?;
        let gbs = sent as f64 / (phases.ms("exchange") * 1e6);
        phases.report("sort", &format!(" ({sent} bytes sent to other ranks: {gbs:.1} GB/s)"));
        Ok(())
    })
}

/// Inputs of up to this many elements in all are sorted whole on every rank (knob
/// multi.whole_sort_upto): below it, a call is its plan rounds' latency (the splitters'
/// digit rounds alone took 0.23-0.28 ms of a 0.44-0.50 ms sort of 2^20 keys on 2
/// H200s), where one exchange and one local sort of the whole cost about one GPU's sort.
fn whole_sort_upto() -> u64 {
    crate::backend::cuda::tuning::knob("multi.whole_sort_upto", 1 << 21) as u64
}

/// Every rank receives every shard (in rank order, into scratch), sorts the whole
/// stably, and keeps its own part: the global order with equal keys in input order.
fn sort_whole(comm: &Comm, a: &SortArgs, lens: &[u64]) -> Result<()> {
    let (starts, total) = offsets(lens);
    let me = comm.rank();
    let kw = a.keys.dtype.size();
    let keys = comm.scratch(0, a.keys.dtype, total as usize)?;
    let values = a.values.map(|v| comm.scratch(1, v.dtype, total as usize)).transpose()?;
    // To every rank the whole shard; from rank i its shard at its global place.
    let shard = vec![0..a.keys.len; lens.len()];
    let places: Vec<Range<usize>> = starts.iter().zip(lens).map(|(&s, &n)| s as usize..(s + n) as usize).collect();
    send_keys_and_values(comm, a, &shard, &places, &keys, values.as_ref())?;
    let sorted_values = values.as_ref().zip(a.values).map(|(m, v)| SortValues { memory: m, dtype: v.dtype });
    if total > 1 {
        comm.ctx.backend.radix_sort(&keys, a.keys.dtype, sorted_values, total as usize, a.order)?;
    }
    let mine = |mem: &Memory, w: usize| mem.view_at(starts[me] as usize * w, a.keys.len * w);
    comm.ctx.backend.copy(&a.keys.memory, &mine(&keys, kw), a.keys.len * kw)?;
    if let (Some(v), Some(mem)) = (a.values, &values) {
        let vw = v.dtype.size();
        comm.ctx.backend.copy(&v.memory, &mine(mem, vw), a.keys.len * vw)?;
    }
    Ok(())
}

/// Memory for what this rank receives: as many keys (and values) as it holds, and room
/// for the layout's gaps.
pub(super) struct Received {
    pub(super) keys: Memory,
    pub(super) values: Option<Memory>,
}

impl Received {
    pub(super) fn allocate(comm: &Comm, a: &SortArgs) -> Result<Received> {
        let room = a.keys.len + Layout::most_gaps(comm.nranks(), Layout::word(a));
        let keys = comm.scratch(0, a.keys.dtype, room)?;
        let values = a.values.map(|v| comm.scratch(1, v.dtype, room)).transpose()?;
        Ok(Received { keys, values })
    }

    /// The received runs (one from each rank, in rank order, where `layout` put them)
    /// merged into the caller's keys and values.
    fn merge_into(&self, comm: &Comm, a: &SortArgs, layout: &Layout) -> Result<()> {
        let values = self.values.as_ref().zip(a.values.map(|v| v.dtype));
        let runs = RunsIn { keys: &self.keys, values, runs: &layout.runs };
        comm.ctx.backend.merge_runs(runs, a.keys.dtype, a.order, &a.keys.memory, a.values.map(|v| &v.memory))
    }
}

/// Where each rank's part goes and lands, in elements. NCCL moves a part whose ends are
/// not on 16-byte words at half its rate on 4 GPUs (scripts/probes/nccl-alltoall.cu,
/// A2A_SKEW), and a sort's parts start wherever its splitters fall. So each part is
/// sent from the word its first element lies in (the `head` elements before it come
/// along), and lands at the same place within a word of the received memory: every
/// part starts on a word at both ends. The runs then lie apart by less than two words.
pub(super) struct Layout {
    /// To each rank j: elements send[j] of the sorted shard (heads included).
    send: Vec<Range<usize>>,
    /// From each rank i: elements recv[i] of the received memory (heads included).
    recv: Vec<Range<usize>>,
    /// Each received run's (start, length), heads excluded.
    runs: Vec<(usize, usize)>,
}

impl Layout {
    /// Elements a word for the narrower of keys and values: a position that is the
    /// sender's modulo this is in the same place within a word for both.
    fn word(a: &SortArgs) -> usize {
        16 / a.values.map_or(a.keys.dtype.size(), |v| v.dtype.size().min(a.keys.dtype.size()))
    }

    /// The most elements the gaps between `nranks` runs take.
    fn most_gaps(nranks: usize, word: usize) -> usize {
        2 * word * nranks
    }

    /// Rank `me`'s layout; `word` from Layout::word.
    fn new(cuts: &[Vec<u64>], me: usize, word: usize) -> Layout {
        let head = |at: usize| at % word;
        let send = cuts[me]
            .windows(2)
            .map(|c| {
                let (from, to) = (c[0] as usize, c[1] as usize);
                if from == to { from..to } else { from - head(from)..to }
            })
            .collect();
        let (mut recv, mut runs, mut at) = (Vec::new(), Vec::new(), 0usize);
        for c in cuts {
            let (from, n) = (c[me] as usize, (c[me + 1] - c[me]) as usize);
            if n == 0 {
                recv.push(at..at);
                runs.push((at, 0));
                continue;
            }
            let start = at.next_multiple_of(word) + head(from);
            recv.push(start - head(from)..start + n);
            runs.push((start, n));
            at = start + n;
        }
        Layout { send, recv, runs }
    }

    /// The ranges in bytes, for elements of `width` bytes.
    pub(super) fn bytes(ranges: &[Range<usize>], width: usize) -> Vec<Range<usize>> {
        ranges.iter().map(|r| r.start * width..r.end * width).collect()
    }
}

pub(super) fn local_sort(comm: &Comm, keys: &Memory, a: &SortArgs) -> Result<()> {
    if a.keys.len < 2 {
        return Ok(());
    }
    let values = a.values.map(|v| SortValues { memory: &v.memory, dtype: v.dtype });
    comm.ctx.backend.radix_sort(keys, a.keys.dtype, values, a.keys.len, a.order)
}

/// For global positions `targets` (ascending, at most the total: where the last ranks
/// are empty a target is the end, and every cut there is the rank's length), each
/// rank's sorted elements (`sorted`, its shard sorted) that go before each: cuts[r][j] for
/// j = 0..=targets.len() + 1, from 0 to rank r's length, equal keys shared out in rank
/// order. With the ranks' starts as targets, cuts[r][j] is what rank r sends to ranks
/// below j.
pub(super) fn cuts_at(comm: &Comm, sorted: &Memory, a: &SortArgs, lens: &[u64], targets: &[u64]) -> Result<Vec<Vec<u64>>> {
    let parts = targets.len() + 1;
    let equals = boundary_keys(comm, sorted, a, lens, targets)?;
    let mut cuts = vec![vec![0u64; parts + 1]; lens.len()];
    for (j, &target) in targets.iter().enumerate() {
        let below: u64 = equals.iter().map(|e| e[j].start).sum();
        let mut left = target - below; // equal keys that still go below boundary j
        for (r, e) in equals.iter().enumerate() {
            let take = left.min(e[j].end - e[j].start);
            cuts[r][j + 1] = e[j].start + take;
            left -= take;
        }
    }
    for (r, &len) in lens.iter().enumerate() {
        cuts[r][parts] = len;
    }
    Ok(cuts)
}

/// For each target position, where the element there in the global order (its rank
/// key, the boundary key) and its equals lie in each rank's sorted shard:
/// equals[r][j] = rank r's elements below boundary key j .. below-or-equal to it.
/// Digit rounds, each probing 256 digits a target on every rank; each round searches
/// a rank's elements only between its counts for the digit chosen in the round before
/// and the next one, and the last round's counts give the equals' ranges.
fn boundary_keys(comm: &Comm, sorted: &Memory, a: &SortArgs, lens: &[u64], targets: &[u64]) -> Result<Vec<Vec<Range<u64>>>> {
    let mut keys = vec![0u64; targets.len()];
    // equals[r][j]: rank r's elements whose key has target j's digits chosen so far.
    let mut equals: Vec<Vec<Range<u64>>> = lens.iter().map(|&n| vec![0..n; targets.len()]).collect();
    let mut shift = 8 * a.keys.dtype.size() as u32;
    while shift > 0 {
        shift -= 8;
        let probes: Vec<u64> = keys.iter().flat_map(|&k| (0..256u64).map(move |d| k | d << shift)).collect();
        let within = &equals[comm.rank()];
        let mine = comm.ctx.backend.count_before(sorted, a.keys.dtype, a.keys.len, a.order, &probes, within)?;
        let all = gather_u64s(comm, &mine)?;
        let per_rank: Vec<&[u64]> = all.chunks(probes.len()).collect();
        for (j, key) in keys.iter_mut().enumerate() {
            let count = |r: usize, d: usize| per_rank[r][j * 256 + d];
            let total = |d: usize| (0..lens.len()).map(|r| count(r, d)).sum::<u64>();
            // The largest digit whose probe has at most `target` keys below it.
            let digit = (0..256).rev().find(|&d| total(d) <= targets[j]).unwrap_or(0);
            *key |= (digit as u64) << shift;
            for (r, e) in equals.iter_mut().enumerate() {
                // Below the next digit's probe; past the last digit, as the round before.
                let end = if digit < 255 { count(r, digit + 1) } else { e[j].end };
                e[j] = count(r, digit)..end;
            }
        }
    }
    Ok(equals)
}

/// Sends each rank its runs, keys and values in one exchange. Returns the bytes sent to
/// other ranks.
fn exchange(comm: &Comm, a: &SortArgs, layout: &Layout, into: &Received) -> Result<usize> {
    let me = comm.rank();
    let to_others: usize = layout.send.iter().enumerate().filter(|(r, _)| *r != me).map(|(_, s)| s.len()).sum();
    send_keys_and_values(comm, a, &layout.send, &layout.recv, &into.keys, into.values.as_ref())?;
    Ok(to_others * (a.keys.dtype.size() + a.values.map_or(0, |v| v.dtype.size())))
}

/// The all-to-all of a sort's keys and (where it has them) values: elements `send[j]`
/// of the caller's arrays go to rank j, and rank i's arrive at elements `recv[i]` of
/// `keys_into` and `values_into`.
fn send_keys_and_values(comm: &Comm, a: &SortArgs, send: &[Range<usize>], recv: &[Range<usize>], keys_into: &Memory,
                        values_into: Option<&Memory>) -> Result<()> {
    let kw = a.keys.dtype.size();
    let (ks, kr) = (Layout::bytes(send, kw), Layout::bytes(recv, kw));
    let mut transfers = vec![Transfer { send: &a.keys.memory, send_ranges: &ks, recv: keys_into, recv_ranges: &kr, unit: kw }];
    let value_ranges = a.values.map(|v| (Layout::bytes(send, v.dtype.size()), Layout::bytes(recv, v.dtype.size())));
    if let (Some(v), Some(mem), Some((vs, vr))) = (a.values, values_into, &value_ranges) {
        transfers.push(Transfer { send: &v.memory, send_ranges: vs, recv: mem, recv_ranges: vr, unit: v.dtype.size() });
    }
    comm.link.all_to_all(&transfers)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random cuts for `p` ranks: cuts[r][j] non-decreasing from 0 to rank r's length.
    fn random_cuts(p: usize, seed: &mut u64) -> Vec<Vec<u64>> {
        let mut next = |m: u64| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed % m
        };
        (0..p)
            .map(|_| {
                let len = next(3) * next(200); // empty shards too
                let mut c: Vec<u64> = (0..p - 1).map(|_| next(len + 1)).collect();
                c.sort_unstable();
                std::iter::once(0).chain(c).chain(std::iter::once(len)).collect()
            })
            .collect()
    }

    #[test]
    fn parts_start_on_words_at_both_ends_and_sizes_agree() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..3000 {
            let p = 1 + round % 5;
            let cuts = random_cuts(p, &mut seed);
            // (key width, value width or 0)
            for (kw, vw) in [(1, 0), (2, 0), (4, 0), (8, 0), (4, 4), (4, 8), (1, 8), (8, 2), (2, 1)] {
                let word = 16 / if vw == 0 { kw } else { kw.min(vw) };
                let layouts: Vec<Layout> = (0..p).map(|me| Layout::new(&cuts, me, word)).collect();
                for (me, l) in layouts.iter().enumerate() {
                    let len = *cuts[me].last().unwrap() as usize;
                    let received: usize = l.runs.iter().map(|r| r.1).sum();
                    let total: u64 = cuts.iter().map(|c| c[me + 1] - c[me]).sum();
                    assert_eq!(received as u64, total);
                    let room = cuts.iter().map(|c| (c[me + 1] - c[me]) as usize).sum::<usize>() + Layout::most_gaps(p, word);
                    let mut end = 0;
                    for (i, (r, run)) in l.recv.iter().zip(&l.runs).enumerate() {
                        // What rank i sends me is what I receive from it, and my run lies in it.
                        assert_eq!(layouts[i].send[me].len(), r.len(), "round {round} p {p} {i}->{me}");
                        assert!(r.start >= end && r.end <= room, "parts overlap or overflow");
                        assert_eq!(run.0 + run.1, r.end);
                        assert_eq!(run.1 as u64, cuts[i][me + 1] - cuts[i][me]);
                        if run.1 > 0 {
                            for w in [kw, vw].into_iter().filter(|&w| w > 0) {
                                assert_eq!(r.start * w % 16, 0, "receive off a word");
                                assert_eq!(layouts[i].send[me].start * w % 16, 0, "send off a word");
                            }
                            // The elements after the head are the run's own.
                            assert_eq!(layouts[i].send[me].end as u64, cuts[i][me + 1]);
                            assert_eq!(r.end - run.0, layouts[i].send[me].end - cuts[i][me] as usize);
                        }
                        end = r.end;
                    }
                    assert!(l.send.iter().all(|s| s.end <= len));
                }
            }
        }
    }
}
