//! Operations over several ranks (GPUs, or threads on the host backend): each rank
//! holds a shard, the global sequence is the shards in rank order. A rank is a
//! context plus a link to the others (transport.rs); every operation starts with an
//! agreement (agree.rs), so an argument error on any rank ends the call on every
//! rank before data moves, then runs the algorithm of its file with the context's
//! own primitives and a few pieces the backends add (the Backend trait's multi-rank
//! section).

pub mod agree;
pub mod host_link;
mod in_process;
pub mod keys;
mod rank_threads;
mod reduce;
mod scan;
mod select;
mod sort;
mod sort_chunks;
mod topk;
mod transport;

use std::sync::{Arc, Mutex};

pub use agree::{Call, What};
use host_link::HostLink;
use in_process::InProcessLink;
pub(crate) use host_link::ID_BYTES;
pub use reduce::{reduce, ReduceArgs};
pub use scan::{scan, ScanArgs};
pub use select::{select_kth, SelectArgs};
pub use sort::{sort, SortArgs};
pub use topk::{topk, TopkArgs};
pub use rank_threads::RankThreads;
pub use transport::{Link, Transfer};

use crate::backend::{ContextShared, Memory};
use crate::dtype::DType;
use crate::error::Result;

/// One rank: its context and its link to the other ranks.
pub struct Comm {
    pub ctx: Arc<ContextShared>,
    pub link: Box<dyn Link>,
    /// Scratch memory kept between calls, by slot (a fresh allocation each call costs
    /// the device's pool a new mapping of the memory, about a millisecond a GiB).
    kept: Mutex<Vec<Option<Memory>>>,
}

impl Comm {
    /// Joins communicator `id` as `rank` of `nranks`; returns once every rank has.
    pub fn join(ctx: Arc<ContextShared>, id: &[u8], rank: usize, nranks: usize) -> Result<Comm> {
        let link = ctx.backend.link(id, rank, nranks)?;
        Ok(Comm { ctx, link, kept: Mutex::new(Vec::new()) })
    }

    /// `nranks` ranks of one process on `contexts` (one a rank), joined at once: the
    /// data goes through each backend's link, the plans through host memory.
    pub fn join_group(contexts: &[Arc<ContextShared>]) -> Result<Vec<Comm>> {
        let n = contexts.len();
        let id = contexts[0].backend.new_comm_id()?;
        // Every rank's link joins in a collective of its own: one thread a rank.
        let links = std::thread::scope(|s| {
            let joins: Vec<_> = contexts.iter().enumerate().map(|(r, c)| s.spawn({ let id = &id; move || c.backend.link(id, r, n) })).collect();
            joins.into_iter().map(|j| j.join().unwrap_or_else(|_| Err(crate::error::internal("joining a rank panicked")))).collect::<Result<Vec<_>>>()
        })?;
        let plans = HostLink::clique(n);
        Ok(contexts
            .iter()
            .zip(links.into_iter().zip(plans))
            .map(|(ctx, (data, plans))| {
                let link: Box<dyn Link> = Box::new(InProcessLink::new(data, plans));
                Comm { ctx: Arc::clone(ctx), link, kept: Mutex::new(Vec::new()) }
            })
            .collect())
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

    /// Scratch memory of `len` elements in slot `slot`, kept for later calls (grown when
    /// short). An operation uses each slot once; the view lives no longer than the call.
    fn scratch(&self, slot: usize, dtype: DType, len: usize) -> Result<Memory> {
        let bytes = len * dtype.size();
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() <= slot {
            kept.resize_with(slot + 1, || None);
        }
        let short = kept[slot].as_ref().is_none_or(|m| m.len_bytes() < bytes);
        if short {
            kept[slot] = None; // the old one goes first, so the two need not fit at once
            kept[slot] = Some(self.ctx.backend.allocate(bytes)?);
        }
        Ok(kept[slot].as_ref().expect("kept above").view(bytes))
    }
}

/// Phase times of an operation, on stderr when GPUPRIMS_MULTI_TIMES=1 (for the bench's
/// time split). Each mark waits for the device first, so tracing slows the call a little.
struct Phases<'a> {
    comm: &'a Comm,
    on: bool,
    since: std::time::Instant,
    parts: Vec<(&'static str, f64)>,
}

impl<'a> Phases<'a> {
    fn new(comm: &'a Comm) -> Phases<'a> {
        let on = std::env::var("GPUPRIMS_MULTI_TIMES").is_ok_and(|v| v == "1");
        Phases { comm, on, since: std::time::Instant::now(), parts: Vec::new() }
    }

    /// Ends the phase `name`.
    fn mark(&mut self, name: &'static str) -> Result<()> {
        if self.on {
            self.comm.ctx.backend.synchronize()?;
            self.parts.push((name, self.since.elapsed().as_secs_f64() * 1e3));
            self.since = std::time::Instant::now();
        }
        Ok(())
    }

    fn ms(&self, name: &str) -> f64 {
        self.parts.iter().find(|p| p.0 == name).map_or(0.0, |p| p.1)
    }

    fn report(&self, what: &str, extra: &str) {
        if self.on {
            let parts: Vec<String> = self.parts.iter().map(|(n, ms)| format!("{n} {ms:.3} ms")).collect();
            eprintln!("gpuprims multi: rank {} of {} {what}: {}{extra}", self.comm.rank(), self.comm.nranks(), parts.join(", "));
        }
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
