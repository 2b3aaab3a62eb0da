//! Top-k over ranks: each rank takes its own k best (with indices made global by its
//! shard's offset), every rank gathers all of them in rank order, and takes the k best
//! of those. Ties go to the lower position in the gathered list, which is the lower
//! rank, then the lower local index: the lowest global index, as one context's top-k.
//! The result is on every rank. Cost: one local top-k of the shard, an all-gather of
//! k candidates a rank, and a top-k of k * nranks.

use std::ops::Range;

use super::agree::{agree_on, Call, What};
use super::{offsets, Comm, Phases, Transfer};
use crate::backend::Buffer;
use crate::dtype::{DType, Order};
use crate::error::{invalid, Result};

pub struct TopkArgs<'a> {
    pub input: &'a Buffer,
    pub k: u64,
    pub order: Order,
    pub out_values: &'a Buffer,
    pub out_indices: Option<&'a Buffer>,
}

pub fn topk(comm: &Comm, args: Result<TopkArgs>) -> Result<()> {
    let (a, lens) = agree_on(&*comm.link, args, |a| Call::new(What::Topk, a.input.dtype as u32, a.order as u32, 0, a.k, a.input.len as u64))?;
    let (starts, total) = offsets(&lens);
    if a.k > total {
        return Err(invalid(format!("k = {} is more than the {total} elements of all shards", a.k)));
    }
    if a.k == 0 {
        return Ok(());
    }
    comm.after_agreement(|| best_of_all(comm, &a, &lens, &starts))
}

/// The phases after the agreement: local candidates, their all-gather, the final pick.
fn best_of_all(comm: &Comm, a: &TopkArgs, lens: &[u64], starts: &[u64]) -> Result<()> {
    let backend = &comm.ctx.backend;
    let (dtype, w) = (a.input.dtype, a.input.dtype.size());
    let each: Vec<usize> = lens.iter().map(|&l| l.min(a.k) as usize).collect();
    let mine = each[comm.rank()];
    let all: usize = each.iter().sum();
    // Every buffer up front, so an allocation failure comes before any exchange.
    let (vals, idx) = (comm.scratch(0, dtype, mine)?, comm.scratch(1, DType::U64, mine)?);
    let (all_vals, all_idx) = (comm.scratch(2, dtype, all)?, comm.scratch(3, DType::U64, all)?);
    let picked = comm.scratch(4, DType::U64, a.k as usize)?;
    let mut phases = Phases::new(comm);
    if mine > 0 {
        backend.topk(&a.input.memory, dtype, a.input.len, mine, a.order, &vals, Some(&idx))?;
        backend.add_u64(&idx, mine, starts[comm.rank()])?;
    }
    phases.mark("local top-k")?;
    let send = |width: usize| vec![0..mine * width; each.len()];
    let recv = |width: usize| -> Vec<Range<usize>> {
        let mut at = 0;
        each.iter().map(|&n| { let r = at..at + n * width; at += n * width; r }).collect()
    };
    let (send_vals, recv_vals, send_idx, recv_idx) = (send(w), recv(w), send(8), recv(8));
    comm.link.all_to_all(&[
        Transfer { send: &vals, send_ranges: &send_vals, recv: &all_vals, recv_ranges: &recv_vals, unit: w },
        Transfer { send: &idx, send_ranges: &send_idx, recv: &all_idx, recv_ranges: &recv_idx, unit: 8 },
    ])?;
    phases.mark("all-gather")?;
    let k = a.k as usize;
    backend.topk(&all_vals, dtype, all, k, a.order, &a.out_values.memory, Some(&picked))?;
    if let Some(out) = a.out_indices {
        backend.gather_u64(&all_idx, &picked, k, &out.memory)?;
    }
    phases.mark("final pick")?;
    phases.report("topk", "");
    Ok(())
}
