//! Operations over several ranks (GPUs, or threads on the host backend): each rank
//! holds a shard, the global sequence is the shards in rank order. A rank is a
//! context plus a link to the others (transport.rs); every operation starts with an
//! agreement (agree.rs), so an argument error on any rank ends the call on every
//! rank before data moves, then runs the algorithm of its file with the context's
//! own primitives and a few pieces the backends add (the Backend trait's multi-rank
//! section).

pub mod agree;
pub mod host_link;
pub mod keys;
mod reduce;
mod scan;
mod select;
mod sort;
mod topk;
mod transport;

use std::sync::Arc;

pub use agree::{Call, What};
pub use host_link::ID_BYTES;
pub use reduce::{reduce, ReduceArgs};
pub use scan::{scan, ScanArgs};
pub use select::{select_kth, SelectArgs};
pub use sort::{sort, SortArgs};
pub use topk::{topk, TopkArgs};
pub use transport::Link;

use crate::backend::{ContextShared, Memory};
use crate::dtype::DType;
use crate::error::Result;

/// One rank: its context and its link to the other ranks.
pub struct Comm {
    pub ctx: Arc<ContextShared>,
    pub link: Box<dyn Link>,
}

impl Comm {
    /// Joins communicator `id` as `rank` of `nranks`; returns once every rank has.
    pub fn join(ctx: Arc<ContextShared>, id: &[u8], rank: usize, nranks: usize) -> Result<Comm> {
        let link = ctx.backend.link(id, rank, nranks)?;
        Ok(Comm { ctx, link })
    }

    pub fn rank(&self) -> usize {
        self.link.rank()
    }

    pub fn nranks(&self) -> usize {
        self.link.nranks()
    }

    /// Runs the part of an operation after the agreement. A failure there (out of
    /// memory, a driver error) ends the link on every rank, so none waits forever on a
    /// rank that has left.
    fn after_agreement<R>(&self, body: impl FnOnce() -> Result<R>) -> Result<R> {
        let r = body();
        if let Err(e) = &r {
            self.link.fail(&e.to_string());
        }
        r
    }

    /// Scratch memory of this rank's context.
    fn scratch(&self, dtype: DType, len: usize) -> Result<Memory> {
        self.ctx.backend.allocate(len * dtype.size())
    }
}

/// The global offset of each rank's shard and the total, from every rank's length.
fn offsets(lens: &[u64]) -> (Vec<u64>, u64) {
    let mut at = Vec::with_capacity(lens.len());
    let mut total = 0u64;
    for &l in lens {
        at.push(total);
        total += l;
    }
    (at, total)
}
