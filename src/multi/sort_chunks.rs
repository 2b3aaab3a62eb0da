//! The sort over ranks with its exchange overlapped by its merge (sort.rs gives the
//! plain order: local sort, splitters, exchange, merge). Each rank's output is cut in
//! `chunks` chunks at exact global positions, and the exchange moves chunk by chunk:
//! while chunk i+1 travels, chunk i's runs are merged into their place.
//!   1. each rank sorts its shard into scratch (`radix_sort_into`), so the merge may
//!      write the caller's buffer while the sorted shard is still being sent;
//!   2. splitters at every chunk boundary of every rank's output (sort.rs's digit
//!      rounds, more targets): part (d, i), chunk i of rank d's output, is the same
//!      range of every rank's sorted shard on every rank;
//!   3. `Link::all_to_all_chunks` sends chunk i's parts and, once they have landed,
//!      merges them (one run from each rank, in rank order) into chunk i's place.
//!
//! Worth it only where the link moves chunks beside the merges (a group on the copy
//! engines); elsewhere it would only add exchanges, so it runs there only when asked.

use std::ops::Range;

use super::sort::{cuts_at, Layout, Received, SortArgs};
use super::{offsets, Comm, Phases, Transfer};
use crate::backend::cuda::tuning::knob;
use crate::backend::{Memory, RunsIn, SortInto, SortValues};
use crate::error::{Error, Result};

/// Chunks a rank's output is cut in where the exchange overlaps the merge (knob
/// multi.sort_chunks; 0 or 1: the plain order). 4 by default: on 2 x H200 (2026-11-28,
/// two rounds) the 2^30-key sort went 1.28x -> 1.38x one GPU, pairs 1.22x -> 1.34x;
/// 8 chunks gained no more, their extra splitters costing what they hid (see
/// docs/benchmarks/multi-gpu.md).
fn chunks_wanted() -> u64 {
    knob("multi.sort_chunks", 4).min(64) as u64
}

/// Whether to cut in chunks where the link would not overlap them too (knob
/// multi.sort_chunks_anywhere: a test of this file's plan on every backend).
fn anywhere() -> bool {
    knob("multi.sort_chunks_anywhere", 0) != 0
}

/// Shards (their mean) of at least 2^this many elements are sorted by chunks (knob
/// multi.sort_chunks_from_log2, 27 by default). Each call by chunks pays about 0.13 ms
/// more (splitters for every chunk, a launch and an event a chunk) and hides about
/// three quarters of the merge: on 2 x H200 (2026-11-28) 2^24 keys in all lost 0.12-0.14
/// ms by chunks (0.61-0.63x one GPU -> 0.49-0.52x), 2^22 0.10-0.12 ms, where 2^29 a GPU
/// gained about 0.5 ms and 2^30 in all 1.2; by those, the break-even shard is near 2^26.
fn from_log2() -> u32 {
    knob("multi.sort_chunks_from_log2", 27).min(63)
}

/// The knobs above as one word, which the sort's agreement compares across ranks
/// (processes given different knobs would exchange plans of different lengths).
pub(super) fn knobs() -> u64 {
    (from_log2() as u64) << 8 | chunks_wanted() << 1 | anywhere() as u64
}

/// The chunks of this call for shards of `lens` (0: the plain order), alike on every
/// rank: the lengths are everyone's, and the link's answer is alike.
pub(super) fn chunks(comm: &Comm, lens: &[u64]) -> Result<u64> {
    let c = chunks_wanted();
    let mean_shard = lens.iter().sum::<u64>() / lens.len() as u64;
    if c < 2 || mean_shard < 1u64 << from_log2() {
        return Ok(0);
    }
    Ok(if anywhere() || comm.link.overlaps_chunks()? { c } else { 0 })
}

/// Where the elements of one chunk of this rank's output come from and land.
struct Chunk {
    /// Where the chunk lies in this rank's output (and in its received memory).
    out: Range<usize>,
    /// To each rank d: elements of this rank's sorted shard, part (d, this chunk).
    send: Vec<Range<usize>>,
    /// From each rank s: elements of the received memory.
    recv: Vec<Range<usize>>,
}

impl Chunk {
    /// Chunk i of rank `me`'s output, by `cuts` (cuts[s][q]: rank s's sorted elements
    /// before part q = d * chunks + i, part (d, i); the last is rank s's length).
    fn new(cuts: &[Vec<u64>], me: usize, chunks: usize, i: usize) -> Chunk {
        let len = cuts[me][chunks * cuts.len()]; // (check_parts has seen every cut)
        let at_chunk = |j: usize| chunk_start(len, chunks as u64, j as u64) as usize;
        let out = at_chunk(i)..at_chunk(i + 1);
        let part = |s: usize, d: usize| cuts[s][d * chunks + i] as usize..cuts[s][d * chunks + i + 1] as usize;
        let send = (0..cuts.len()).map(|d| part(me, d)).collect();
        let mut at = out.start;
        let recv = (0..cuts.len())
            .map(|s| {
                let n = part(s, me).len();
                at += n;
                at - n..at
            })
            .collect();
        Chunk { out, send, recv }
    }

    /// The runs (start, length) relative to the chunk's start, in rank order.
    fn runs(&self) -> Vec<(usize, usize)> {
        self.recv.iter().map(|r| (r.start - self.out.start, r.len())).collect()
    }
}

/// Where chunk i of a rank of `len` elements begins (i = 0..=chunks).
fn chunk_start(len: u64, chunks: u64, i: u64) -> u64 {
    (len as u128 * i as u128 / chunks as u128) as u64
}

/// The global positions where each part (d, i) but the first begins, ascending.
fn chunk_targets(lens: &[u64], chunks: u64) -> Vec<u64> {
    let (starts, _) = offsets(lens);
    let mut targets = Vec::with_capacity(lens.len() * chunks as usize);
    for (d, &len) in lens.iter().enumerate() {
        for i in 0..chunks {
            if d + i as usize > 0 {
                targets.push(starts[d] + chunk_start(len, chunks, i));
            }
        }
    }
    targets
}

/// Every part is as long on its senders as its chunk on its receiver, cuts in order, or
/// the splitters are wrong: checked for every rank on every rank (each holds every
/// rank's cuts), so all fail alike before any data moves. With one chunk: every rank
/// receives what it gave (sort.rs's plain order).
pub(super) fn check_parts(cuts: &[Vec<u64>], lens: &[u64], chunks: u64) -> Result<()> {
    let c = chunks as usize;
    for (d, &len) in lens.iter().enumerate() {
        for i in 0..c {
            let q = d * c + i;
            let got: u64 = cuts.iter().map(|cut| cut[q + 1].saturating_sub(cut[q])).sum();
            let want = chunk_start(len, chunks, i as u64 + 1) - chunk_start(len, chunks, i as u64);
            let ordered = cuts.iter().all(|cut| cut.windows(2).all(|w| w[0] <= w[1]));
            if !ordered || got != want {
                return Err(Error::Internal(format!("sort: rank {d} would receive {got} elements, not {want}, in chunk {i}")));
            }
        }
    }
    Ok(())
}

/// The sorted shard, apart from the caller's buffers (scratch slots 2 and 3).
struct Sorted {
    keys: Memory,
    values: Option<Memory>,
}

impl Sorted {
    fn sort(comm: &Comm, a: &SortArgs) -> Result<Sorted> {
        let n = a.keys.len;
        let keys = comm.scratch(2, a.keys.dtype, n.max(1))?;
        let values = a.values.map(|v| comm.scratch(3, v.dtype, n.max(1))).transpose()?;
        if n < 2 {
            comm.ctx.backend.copy(&keys, &a.keys.memory, n * a.keys.dtype.size())?;
            if let (Some(v), Some(mem)) = (a.values, &values) {
                comm.ctx.backend.copy(mem, &v.memory, n * v.dtype.size())?;
            }
        } else {
            let sort_values = a.values.map(|v| SortValues { memory: &v.memory, dtype: v.dtype });
            let into = SortInto { keys: &keys, values: values.as_ref() };
            comm.ctx.backend.radix_sort_into(&a.keys.memory, a.keys.dtype, sort_values, n, a.order, into)?;
        }
        Ok(Sorted { keys, values })
    }
}

pub(super) fn sort(comm: &Comm, a: &SortArgs, lens: &[u64], chunks: u64) -> Result<()> {
    let mut phases = Phases::new(comm);
    let received = Received::allocate(comm, a)?;
    let sorted = Sorted::sort(comm, a)?;
    phases.mark("local sort")?;
    let cuts = cuts_at(comm, &sorted.keys, a, lens, &chunk_targets(lens, chunks))?;
    phases.mark("splitters")?;
    check_parts(&cuts, lens, chunks)?;
    let plan: Vec<Chunk> = (0..chunks as usize).map(|i| Chunk::new(&cuts, comm.rank(), chunks as usize, i)).collect();
    exchange_and_merge(comm, a, &plan, &sorted, &received)?;
    phases.mark("exchange and merge")?;
    phases.report("sort", &format!(" ({chunks} chunks)"));
    Ok(())
}

/// The chunks' exchange, each chunk merged into its place once it has landed.
fn exchange_and_merge(comm: &Comm, a: &SortArgs, plan: &[Chunk], sorted: &Sorted, received: &Received) -> Result<()> {
    let kw = a.keys.dtype.size();
    let vw = a.values.map_or(0, |v| v.dtype.size());
    let bytes = Layout::bytes;
    let ranges: Vec<[Vec<Range<usize>>; 4]> =
        plan.iter().map(|c| [bytes(&c.send, kw), bytes(&c.recv, kw), bytes(&c.send, vw), bytes(&c.recv, vw)]).collect();
    let transfers: Vec<Vec<Transfer>> = ranges
        .iter()
        .map(|[ks, kr, vs, vr]| {
            let mut t = vec![Transfer { send: &sorted.keys, send_ranges: ks, recv: &received.keys, recv_ranges: kr, unit: kw }];
            if let (Some(send), Some(recv)) = (&sorted.values, &received.values) {
                t.push(Transfer { send, send_ranges: vs, recv, recv_ranges: vr, unit: vw });
            }
            t
        })
        .collect();
    comm.link.all_to_all_chunks(&transfers, &mut |i| merge_chunk(comm, a, &plan[i], received))
}

/// Chunk `c`'s runs (in the received memory) merged into its place in the caller's
/// buffers.
fn merge_chunk(comm: &Comm, a: &SortArgs, c: &Chunk, received: &Received) -> Result<()> {
    if c.out.is_empty() {
        return Ok(());
    }
    let view = |m: &Memory, w: usize| m.view_at(c.out.start * w, c.out.len() * w);
    let kw = a.keys.dtype.size();
    let keys = view(&received.keys, kw);
    let out = view(&a.keys.memory, kw);
    let values = received.values.as_ref().zip(a.values).map(|(m, v)| (view(m, v.dtype.size()), v.dtype));
    let out_values = a.values.map(|v| view(&v.memory, v.dtype.size()));
    let runs = c.runs();
    let runs_in = RunsIn { keys: &keys, values: values.as_ref().map(|(m, d)| (m, *d)), runs: &runs };
    comm.ctx.backend.merge_runs(runs_in, a.keys.dtype, a.order, &out, out_values.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_each_output_once_and_parts_agree() {
        // Three ranks of uneven lengths (one empty), cuts as the splitters would give
        // for keys already in rank order: rank s's elements all go before rank s+1's.
        let lens = [7u64, 0, 12];
        let chunks = 3u64;
        let (starts, total) = offsets(&lens);
        let targets = chunk_targets(&lens, chunks);
        assert_eq!(targets.len(), lens.len() * chunks as usize - 1);
        assert!(targets.windows(2).all(|w| w[0] <= w[1]) && targets.iter().all(|&t| t <= total));
        // Rank s's sorted element j has global rank starts[s] + j.
        let cuts: Vec<Vec<u64>> = lens
            .iter()
            .enumerate()
            .map(|(s, &len)| {
                let mut c = vec![0];
                c.extend(targets.iter().map(|&t| t.saturating_sub(starts[s]).min(len)));
                c.push(len);
                c
            })
            .collect();
        check_parts(&cuts, &lens, chunks).unwrap();
        for (me, &len) in lens.iter().enumerate() {
            let mut covered = 0;
            for i in 0..chunks {
                let out = chunk_start(len, chunks, i) as usize..chunk_start(len, chunks, i + 1) as usize;
                let c = Chunk::new(&cuts, me, chunks as usize, i as usize);
                assert_eq!(c.out, out);
                assert_eq!(c.recv.first().map_or(out.start, |r| r.start), out.start);
                assert_eq!(c.recv.last().map_or(out.end, |r| r.end), out.end);
                assert!(c.recv.windows(2).all(|w| w[0].end == w[1].start));
                assert_eq!(c.runs().iter().map(|r| r.1).sum::<usize>(), out.len());
                covered += out.len();
            }
            assert_eq!(covered as u64, len);
        }
        // A wrong cut is caught.
        let mut bad = cuts.clone();
        bad[0][1] += 1;
        assert!(check_parts(&bad, &lens, chunks).is_err());
    }
}
