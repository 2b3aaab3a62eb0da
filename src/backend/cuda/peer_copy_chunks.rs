//! A group's all-to-all in chunks by the copy engines (peer_copy.rs gives the lanes and
//! the two rendezvous), each chunk's arrival told by events, so the work on chunk i runs
//! on the rank's stream while chunk i + 1 still travels (the multi-rank sort merges
//! each chunk as it lands: multi/sort_chunks.rs).
//!
//! 1. Rendezvous 1: every rank gives its `ready` and, for every chunk's transfers, its
//!    receive memory and ranges (one offer of all chunks).
//! 2. Each rank forks its lanes (a side stream a destination, none the rank's own
//!    stream, where the chunks' work goes) from its stream and queues every chunk's
//!    copies on them, chunk after chunk, recording after each chunk on each destination's lane
//!    that destination's event for the chunk.
//! 3. Rendezvous 2: every rank gives those events (and whether it queued everything).
//!    Every record is queued by then, so no wait can see an earlier record of the
//!    same event: a rank records them again only after rendezvous 1 of its next call,
//!    which every other rank reaches after queueing its waits of this one.
//! 4. For each chunk in turn, the rank's stream waits for the chunk's event of every
//!    rank's lane towards it, then `landed(i)` queues the work on the chunk (without
//!    the context's lock, which that work takes).
//! 5. The rank's stream waits for its own lanes: its sends are read before later work
//!    reuses their memory. Where anything failed, it first waits for every chunk the
//!    other ranks queued towards it, so no copy lands in memory it has moved on from.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUcontext, CUevent, CUevent_wait_flags, CUstream};

use super::context::CudaShared;
use super::driver::DriverContext;
use super::peer_copy::{bytes_of, check_parts, issue_parts, words_of, Lanes, Offer, Part, PeerCopies};
use crate::error::{Error, Result};
use crate::multi::host_link::HostLink;
use crate::multi::{Link, Transfer};

/// What one rank learned at rendezvous 2: every rank's chunk events (destination-major)
/// and whether it queued all its copies.
struct Arrivals {
    words: Vec<u64>,
    nranks: usize,
    chunks: usize,
}

impl Arrivals {
    /// Rank `source`'s event for chunk `chunk` towards `dest`; None where `source`
    /// failed (it waited for its copies before rendezvous 2).
    fn event(&self, source: usize, dest: usize, chunk: usize) -> Option<CUevent> {
        let at = source * (1 + self.nranks * self.chunks);
        (self.words[at] != 0).then(|| self.words[at + 1 + dest * self.chunks + chunk] as usize as CUevent)
    }

    fn failed(&self) -> Option<usize> {
        (0..self.nranks).find(|&s| self.words[s * (1 + self.nranks * self.chunks)] == 0)
    }

    /// `stream` waits for chunk `chunk` of every rank towards `dest` (where the host
    /// cannot queue a wait, it waits).
    fn wait(&self, stream: CUstream, dest: usize, chunk: usize) -> Result<()> {
        for source in 0..self.nranks {
            if let Some(event) = self.event(source, dest, chunk) {
                // SAFETY: rank `source`'s live event, recorded before rendezvous 2.
                if unsafe { drv::stream::wait_event(stream, event, CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }.is_err() {
                    // SAFETY: as above.
                    unsafe { drv::event::synchronize(event) }.during(&format!("waiting for rank {source}'s chunk {chunk}"))?;
                }
            }
        }
        Ok(())
    }
}

impl PeerCopies {
    /// The chunked all-to-all (see the module's comment). Ok(false), having moved
    /// nothing, on every rank alike where the group keeps NCCL.
    pub fn all_to_all_chunks(&self, shared: &CudaShared, rank: usize, nranks: usize, chunks: &[Vec<Transfer>], plans: &HostLink,
                             landed: &mut dyn FnMut(usize) -> Result<()>) -> Result<bool> {
        if !self.available(shared, rank, nranks, plans)? {
            return Ok(false);
        }
        let state = shared.lock()?;
        let stream = state.stream;
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let ev = events.as_mut().expect("opened by available");
        let contexts = ev.contexts.clone().expect("available");
        let chunk_events = ev.chunk_events(nranks * chunks.len())?.to_vec();
        let flat: Vec<Transfer> = chunks.iter().flatten().copied().collect();
        let sends = flat.iter().map(|t| Ok(t.send.as_device()?.ptr)).collect::<Result<Vec<u64>>>()?;
        let offer = Offer::words(ev.ready, &flat, nranks)?;
        // SAFETY: a live event and stream of this context (current under the lock).
        unsafe { drv::event::record(ev.ready, stream) }.during("cuEventRecord (ready for peer copies)")?;
        let all = words_of(&plans.all_gather(&bytes_of(&offer))?);
        let offers: Vec<Offer> = all.chunks(offer.len()).map(Offer).collect();
        // From here on this rank reaches rendezvous 2 whatever fails.
        let lanes = Lanes::new(stream, &ev.sides, rank, nranks, false);
        let per_chunk = chunks.first().map_or(0, Vec::len);
        let queued = queue_chunks(shared, &lanes, &contexts, &flat, &sends, &offers, per_chunk, &chunk_events);
        if queued.is_err() {
            let _ = lanes.join(); // (waits on the host where it cannot queue the join)
            let _ = CudaShared::wait(stream);
        }
        let mut mine = vec![queued.is_ok() as u64];
        mine.extend(chunk_events.iter().map(|&e| e as u64));
        let gathered = plans.all_gather(&bytes_of(&mine));
        let Ok(words) = gathered else {
            // (No rank's events to wait for: at least this rank's sends are read first.)
            let _ = lanes.join();
            let _ = CudaShared::wait(stream);
            return gathered.map(|_| true);
        };
        let arrivals = Arrivals { words: words_of(&words), nranks, chunks: chunks.len() };
        drop(state);
        let worked = queued.and_then(|()| match arrivals.failed() {
            Some(r) => Err(Error::Driver(format!("rank {r} failed to copy its parts to the other ranks"))),
            None => land_in_turn(shared, rank, &arrivals, landed),
        });
        // Whatever failed, the stream waits for every chunk sent here and for this
        // rank's lanes, so nothing moves in memory it goes on to reuse.
        let state = shared.lock()?;
        let waited = if worked.is_err() { (0..chunks.len()).try_for_each(|i| arrivals.wait(state.stream, rank, i)) } else { Ok(()) };
        let joined = lanes.join();
        worked.and(waited).and(joined).map(|()| true)
    }
}

/// Every chunk's parts on their lanes, chunk after chunk, each chunk's event recorded on
/// each destination's lane after its copies of the chunk.
#[allow(clippy::too_many_arguments)]
fn queue_chunks(shared: &CudaShared, lanes: &Lanes, contexts: &[CUcontext], flat: &[Transfer], sends: &[u64], offers: &[Offer],
                per_chunk: usize, events: &[CUevent]) -> Result<()> {
    let parts = check_parts(lanes.rank, flat, sends, offers)?;
    lanes.fork()?;
    lanes.wait_for_ready(offers)?;
    let nranks = offers.len();
    let chunks = flat.len().checked_div(per_chunk).unwrap_or(0);
    for i in 0..chunks {
        let of_chunk: Vec<Part> = parts.iter().copied().filter(|p| p.transfer / per_chunk == i).collect();
        issue_parts(shared, lanes, contexts, &of_chunk)?;
        for dest in 0..nranks {
            // SAFETY: a live event of this context, recorded on a live lane.
            unsafe { drv::event::record(events[dest * chunks + i], lanes.of(dest)) }.during("cuEventRecord (chunk arrived)")?;
        }
    }
    Ok(())
}

/// For each chunk: the rank's stream waits for it, then `landed` queues its work.
fn land_in_turn(shared: &CudaShared, rank: usize, arrivals: &Arrivals, landed: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
    for i in 0..arrivals.chunks {
        {
            let state = shared.lock()?;
            arrivals.wait(state.stream, rank, i)?;
        }
        landed(i)?;
    }
    Ok(())
}
