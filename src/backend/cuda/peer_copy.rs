//! A group's all-to-all by the copy engines: where every rank is a thread of this
//! process, each rank copies its parts straight into the other ranks' receive memory
//! (cuMemcpyPeerAsync), in stream order on every rank and with no wait on the host.
//! On 2 H200s a sort's exchange through NCCL moved 268-296 GB/s a rank, this 304-320
//! (docs/benchmarks/multi-gpu.md; the copy engines alone: 388).
//!
//! Two rendezvous of the ranks' threads (the group's host exchange of plans) order it:
//! 1. every rank gives its receive memory and ranges and an event recorded on its
//!    stream after its earlier work (`ready`); each rank's stream then waits for every
//!    other's `ready` before copying into their memory;
//! 2. every rank gives an event recorded after its copies (`done`) and whether they
//!    were issued; each rank's stream waits for every other's `done` before its later
//!    work reads what it received. Every rank that passed rendezvous 1 reaches
//!    rendezvous 2 and waits for the others' copies whatever failed in between, so no
//!    copy lands in memory its owner has moved on from.
//!
//! The two events are the link's own, recorded again by each call, and no wait sees a
//! later record than the one it was meant for: every other rank queues its wait for a
//! rank's `ready` of call n before it reaches rendezvous 2 of call n, which the rank
//! must pass before it records `ready` for call n + 1; and its wait for `done` of call
//! n before it reaches rendezvous 1 of call n + 1, which the rank must pass before it
//! records `done` again.
//!
//! The first call opens every peer's memory to each rank's device (peer access to its
//! context, and to its device's memory pool, which peer access alone does not open:
//! the library's memory is stream-ordered) at a rendezvous of its own; where any pair
//! of devices cannot reach each other or any rank could not open them, every rank
//! learns it there and the group keeps NCCL. Opening a pool maps its later
//! allocations into the peers too, for as long as the process lives.
//! Each destination's copies go on a lane of their own (the rank's stream for the
//! first other rank, side streams forked from it for its own part and the rest,
//! joined back before `done`), so the copy engines move them side by side: on 2 H200s
//! the rank's own part (a local copy) had gone after the peer's, and the exchange of
//! 2^30 keys took 3.35-3.51 ms against 2.82-2.94 now.

use std::sync::Mutex;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUevent, CUevent_flags, CUevent_wait_flags, CUstream};

use super::context::CudaShared;
use super::driver::DriverContext;
use super::side_stream::SideStream;
use crate::error::{internal, Error, Result};
use crate::multi::host_link::HostLink;
use crate::multi::{Link, Transfer};

/// The largest group whose all-to-all goes by the copy engines (knob
/// multi.peer_copies; 0: every group through NCCL like a communicator). 2 by default:
/// on 4 H200s the copy engines moved 184-186 GB/s a rank, each peer on its lane,
/// against NCCL's 201-214 (docs/benchmarks/multi-gpu.md, eleventh session).
pub static PEER_COPIES_UPTO: once_cell::sync::Lazy<usize> =
    once_cell::sync::Lazy::new(|| super::tuning::knob("multi.peer_copies", 2) as usize);

/// A rank's state: created, and the peers opened, by its first all-to-all.
#[derive(Default)]
pub struct PeerCopies {
    pub(super) events: Mutex<Option<Events>>,
}

pub(super) struct Events {
    pub ready: CUevent,
    done: CUevent,
    /// Every rank's context, by rank; None where the group keeps NCCL.
    pub contexts: Option<Vec<CUcontext>>,
    /// The lanes beside the rank's stream (see Lanes).
    pub sides: Vec<SideStream>,
    /// A chunked exchange's: one a destination and chunk (peer_copy_chunks.rs).
    pub chunks: Vec<CUevent>,
}

/// What a rank gives at rendezvous 1, as u64 words: its `ready` event, then for each
/// transfer its receive memory's address and bytes and, for each source rank, the
/// start and length of the bytes it receives from it.
pub(super) struct Offer<'a>(pub &'a [u64]);

impl Offer<'_> {
    const READY: usize = 0;
    const TRANSFERS: usize = 1;

    pub(super) fn words(ready: CUevent, transfers: &[Transfer], nranks: usize) -> Result<Vec<u64>> {
        let mut words = vec![ready as u64];
        for t in transfers {
            debug_assert_eq!(t.recv_ranges.len(), nranks, "a receive range for each rank");
            words.extend([t.recv.as_device()?.ptr, t.recv.len_bytes() as u64]);
            t.recv_ranges.iter().for_each(|r| words.extend([r.start as u64, r.len() as u64]));
        }
        Ok(words)
    }

    fn ready(&self) -> CUevent {
        self.0[Self::READY] as usize as CUevent
    }

    /// Where transfer `t`'s bytes from rank `source` land in the offering rank's memory,
    /// and how many; an error where they would not lie inside it.
    fn landing(&self, nranks: usize, t: usize, source: usize) -> Result<(u64, usize)> {
        let at = Self::TRANSFERS + t * (2 + 2 * nranks);
        let (base, bytes) = (self.0[at], self.0[at + 1]);
        let (start, len) = (self.0[at + 2 + 2 * source], self.0[at + 3 + 2 * source]);
        if start.checked_add(len).is_none_or(|end| end > bytes) {
            return Err(internal(format!("a part of {len} bytes at {start} of a receive memory of {bytes}")));
        }
        Ok((base + start, len as usize))
    }
}

pub(super) fn words_of(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8-byte words"))).collect()
}

pub(super) fn bytes_of(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

impl PeerCopies {
    /// Whether the group's exchanges go by the copy engines; the first call opens the
    /// peers at a rendezvous of the ranks, so every rank answers alike.
    pub fn available(&self, shared: &CudaShared, rank: usize, nranks: usize, plans: &HostLink) -> Result<bool> {
        let _state = shared.lock()?; // (opening needs the context current)
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        if events.is_none() {
            *events = Some(Events::open(shared, rank, nranks, plans)?);
        }
        Ok(events.as_ref().is_some_and(|e| e.contexts.is_some()))
    }

    /// The all-to-all (see the module's comment), as rank `rank` of `nranks` on `shared`,
    /// `plans` the group's host exchange (which takes no context's lock: this holds
    /// the rank's). Ok(false), having moved nothing, on every rank alike where the group
    /// keeps NCCL.
    pub fn all_to_all(&self, shared: &CudaShared, rank: usize, nranks: usize, transfers: &[Transfer], plans: &HostLink) -> Result<bool> {
        if !self.available(shared, rank, nranks, plans)? {
            return Ok(false);
        }
        let state = shared.lock()?;
        let stream = state.stream;
        let events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let ev = events.as_ref().expect("opened by available");
        let contexts = ev.contexts.as_ref().expect("available");
        let sends = transfers.iter().map(|t| Ok(t.send.as_device()?.ptr)).collect::<Result<Vec<u64>>>()?;
        let offer = Offer::words(ev.ready, transfers, nranks)?;
        // SAFETY: a live event and stream of this context (current under the lock).
        unsafe { drv::event::record(ev.ready, stream) }.during("cuEventRecord (ready for peer copies)")?;
        let all = words_of(&plans.all_gather(&bytes_of(&offer))?);
        let offers: Vec<Offer> = all.chunks(offer.len()).map(Offer).collect();
        // From here on this rank reaches rendezvous 2 whatever fails.
        let lanes = Lanes::new(stream, &ev.sides, rank, nranks, true);
        let issued = copy_parts(shared, &lanes, contexts, transfers, &sends, &offers);
        // SAFETY: as above.
        let recorded = issued.and_then(|_| unsafe { drv::event::record(ev.done, stream) }.during("cuEventRecord (peer copies done)"));
        let done = match &recorded {
            Ok(()) => ev.done as u64,
            // No event to give: what was issued lands before the others go on.
            Err(_) => {
                let _ = CudaShared::wait(stream);
                0
            }
        };
        let all_done = words_of(&plans.all_gather(&bytes_of(&[done, recorded.is_ok() as u64]))?);
        let waited = wait_for_peers(stream, rank, &all_done);
        recorded?;
        waited?;
        match all_done.chunks(2).position(|w| w[1] == 0) {
            Some(r) => Err(Error::Driver(format!("rank {r} failed to copy its parts to the other ranks"))),
            None => Ok(true),
        }
    }

    /// Releases the events; the caller has synchronized the context.
    pub fn destroy(&self) {
        if let Some(ev) = self.events.lock().unwrap_or_else(|p| p.into_inner()).take() {
            ev.destroy();
        }
    }
}

impl Events {
    /// The events, and at a rendezvous of their own every rank's context and device:
    /// the group keeps NCCL unless every pair reaches each other and every rank opened
    /// its peers. Needs the context current (under the state lock).
    fn open(shared: &CudaShared, rank: usize, nranks: usize, plans: &HostLink) -> Result<Events> {
        let event = || drv::event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING).during("cuEventCreate (peer copies)");
        let mut ev = Events { ready: event()?, done: event()?, contexts: None, sides: Vec::new(), chunks: Vec::new() };
        match ev.find_peers(shared, rank, nranks, plans) {
            Ok(()) => Ok(ev),
            Err(e) => {
                ev.destroy();
                Err(e)
            }
        }
    }

    fn find_peers(&mut self, shared: &CudaShared, rank: usize, nranks: usize, plans: &HostLink) -> Result<()> {
        let all = words_of(&plans.all_gather(&bytes_of(&[shared.context as u64, shared.device as u64]))?);
        let contexts: Vec<CUcontext> = all.chunks(2).map(|w| w[0] as usize as CUcontext).collect();
        let devices: Vec<CUdevice> = all.chunks(2).map(|w| w[1] as CUdevice).collect();
        // (Computed alike on every rank: the same devices.)
        let reach = every_pair_reaches(&devices);
        let opened = reach && open_peers(shared, rank, &contexts, &devices).is_ok() && self.create_sides(nranks).is_ok();
        let all_opened = words_of(&plans.all_gather(&(opened as u64).to_le_bytes())?);
        if all_opened.len() == nranks && all_opened.iter().all(|&w| w == 1) {
            self.contexts = Some(contexts);
        }
        Ok(())
    }

    /// A side stream for each destination (see Lanes).
    fn create_sides(&mut self, nranks: usize) -> Result<()> {
        while self.sides.len() < nranks {
            self.sides.push(SideStream::create()?);
        }
        Ok(())
    }

    fn destroy(&self) {
        // SAFETY: events created by Events::open, no longer used.
        unsafe {
            let _ = drv::event::destroy(self.ready);
            let _ = drv::event::destroy(self.done);
        }
        self.sides.iter().for_each(SideStream::destroy);
        for &e in &self.chunks {
            // SAFETY: created by chunk_events, no longer used.
            let _ = unsafe { drv::event::destroy(e) };
        }
    }

    /// At least `n` chunk events (kept for later calls).
    pub(super) fn chunk_events(&mut self, n: usize) -> Result<&[CUevent]> {
        while self.chunks.len() < n {
            self.chunks.push(drv::event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING).during("cuEventCreate (chunk arrived)")?);
        }
        Ok(&self.chunks[..n])
    }
}

/// Whether every device of the group can reach every other's memory.
fn every_pair_reaches(devices: &[CUdevice]) -> bool {
    devices.iter().enumerate().all(|(i, &a)| {
        devices.iter().skip(i + 1).all(|&b| {
            let (mut ab, mut ba) = (0, 0);
            // SAFETY: out-pointers and device ordinals of this process.
            let asked = unsafe { sys::cuDeviceCanAccessPeer(&mut ab, a, b).result().and(sys::cuDeviceCanAccessPeer(&mut ba, b, a).result()) };
            asked.is_ok() && ab != 0 && ba != 0
        })
    })
}

/// Peer access to every other rank's context (cudaMalloc'd memory) and to its device's
/// memory pool, for this rank's device.
fn open_peers(shared: &CudaShared, rank: usize, contexts: &[CUcontext], devices: &[CUdevice]) -> Result<()> {
    for r in (0..contexts.len()).filter(|&r| r != rank) {
        // SAFETY: the peer's live context; this rank's context is current.
        match unsafe { sys::cuCtxEnablePeerAccess(contexts[r], 0) } {
            sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
            other => return Err(Error::Driver(format!("cuCtxEnablePeerAccess (rank {r}): {other:?}"))),
        }
        let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
        let access = sys::CUmemAccessDesc {
            location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: shared.device },
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: an out-pointer for the peer device's current pool, then one access
        // descriptor for this device.
        unsafe {
            sys::cuDeviceGetMemPool(&mut pool, devices[r]).result().during("cuDeviceGetMemPool")?;
            sys::cuMemPoolSetAccess(pool, &access, 1).result().during("cuMemPoolSetAccess")?;
        }
    }
    Ok(())
}

/// Where a rank's copies go: to each destination its own lane, so the copy engines
/// move them side by side. `sides` are the side streams in use, forked from the rank's
/// stream after its earlier work: with `first_on_main`, the first other rank's lane is
/// the rank's stream and the side streams take the rest (its own part last); without
/// (a chunked exchange, whose work on landed chunks runs on the rank's stream), every
/// destination takes a side stream.
pub(super) struct Lanes<'a> {
    pub main: CUstream,
    pub sides: &'a [SideStream],
    pub rank: usize,
    pub first_on_main: bool,
}

impl Lanes<'_> {
    /// The lanes of `nranks` ranks' exchange on `sides` (one a rank, see create_sides).
    pub(super) fn new(main: CUstream, sides: &[SideStream], rank: usize, nranks: usize, first_on_main: bool) -> Lanes<'_> {
        let used = if first_on_main { nranks - 1 } else { nranks };
        Lanes { main, sides: &sides[..used], rank, first_on_main }
    }

    /// The other ranks in order, then the rank's own part.
    pub(super) fn of(&self, dest: usize) -> CUstream {
        let others = self.sides.len() + self.first_on_main as usize - 1;
        let slot = if dest == self.rank { others } else { dest - (dest > self.rank) as usize };
        match (self.first_on_main, slot) {
            (true, 0) => self.main,
            (true, k) => self.sides[k - 1].stream,
            (false, k) => self.sides[k].stream,
        }
    }

    pub(super) fn fork(&self) -> Result<()> {
        self.sides.iter().try_for_each(|s| s.fork(self.main))
    }

    /// Each other rank's lane waits for its `ready`: its memory is free for the copies.
    pub(super) fn wait_for_ready(&self, offers: &[Offer]) -> Result<()> {
        for (r, offer) in offers.iter().enumerate().filter(|&(r, _)| r != self.rank) {
            // SAFETY: rank r's live event, recorded before rendezvous 1.
            unsafe { drv::stream::wait_event(self.of(r), offer.ready(), CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
                .during(&format!("cuStreamWaitEvent (rank {r} ready)"))?;
        }
        Ok(())
    }

    /// The rank's stream waits for every side stream; where it cannot, the host waits
    /// for the side stream, so nothing is left in flight either way.
    pub(super) fn join(&self) -> Result<()> {
        let mut joined = Ok(());
        for side in self.sides {
            if let Err(e) = side.join(self.main) {
                let _ = CudaShared::wait(side.stream);
                joined = joined.and(Err(e));
            }
        }
        joined
    }
}

/// After every other rank's `ready`, each part into its receiver's memory: the rank's
/// own by a device copy, the others' by the copy engines, each destination on its lane.
/// The lanes are joined back to the rank's stream whatever failed.
fn copy_parts(shared: &CudaShared, lanes: &Lanes, contexts: &[CUcontext], transfers: &[Transfer], sends: &[u64],
              offers: &[Offer]) -> Result<()> {
    let parts = check_parts(lanes.rank, transfers, sends, offers)?;
    lanes.fork()?;
    let issued = lanes.wait_for_ready(offers).and_then(|()| issue_parts(shared, lanes, contexts, &parts));
    let joined = lanes.join();
    issued.and(joined)
}

/// One part of a transfer: `bytes` at `from` to `to` in rank `dest`'s memory.
#[derive(Clone, Copy)]
pub(super) struct Part {
    /// The transfer it belongs to.
    pub transfer: usize,
    pub dest: usize,
    pub to: u64,
    pub from: u64,
    pub bytes: usize,
}

/// Every part with bytes to move, once each is checked to lie inside its receiver's
/// memory and to agree with its length there: before anything moves.
pub(super) fn check_parts(rank: usize, transfers: &[Transfer], sends: &[u64], offers: &[Offer]) -> Result<Vec<Part>> {
    let nranks = offers.len();
    let mut parts = Vec::new();
    for (t, transfer) in transfers.iter().enumerate() {
        for (r, offer) in offers.iter().enumerate() {
            let from = &transfer.send_ranges[r];
            let (to, bytes) = offer.landing(nranks, t, rank)?;
            if from.len() != bytes {
                return Err(internal(format!("a part of {} bytes for rank {r}, which expects {bytes}", from.len())));
            }
            if bytes > 0 {
                parts.push(Part { transfer: t, dest: r, to, from: sends[t] + from.start as u64, bytes });
            }
        }
    }
    Ok(parts)
}

/// Each part on its destination's lane; the lanes have waited for the receivers'
/// `ready`.
pub(super) fn issue_parts(shared: &CudaShared, lanes: &Lanes, contexts: &[CUcontext], parts: &[Part]) -> Result<()> {
    for p in parts {
        let (r, lane) = (p.dest, lanes.of(p.dest));
        // SAFETY: both ranges lie inside their memory (checked above; the send range is
        // the caller's plan); the receiver's earlier work is done (its `ready`), and it
        // reads them only once this rank's copies are done (its `done`, or the chunk's
        // event).
        unsafe {
            if r == lanes.rank {
                drv::memcpy_dtod_async(p.to, p.from, p.bytes, lane).during("copying the rank's own part")?;
            } else {
                sys::cuMemcpyPeerAsync(p.to, contexts[r], p.from, shared.context, p.bytes, lane)
                    .result()
                    .during(&format!("cuMemcpyPeerAsync (to rank {r})"))?;
            }
        }
    }
    Ok(())
}

/// This rank's stream waits for every other rank's copies: its `done` event (`all_done`:
/// an event and a flag a rank) where it gave one; a rank that gave none had waited for
/// its stream before rendezvous 2. Where the stream cannot wait, the host does.
fn wait_for_peers(stream: CUstream, rank: usize, all_done: &[u64]) -> Result<()> {
    for (r, w) in all_done.chunks(2).enumerate().filter(|&(r, w)| r != rank && w[0] != 0) {
        let event = w[0] as usize as CUevent;
        // SAFETY: rank r's live event (its link outlives this call, which it is in).
        let queued = unsafe { drv::stream::wait_event(stream, event, CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) };
        if queued.is_err() {
            // SAFETY: as above.
            unsafe { drv::event::synchronize(event) }.during(&format!("waiting for rank {r}'s copies"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Lanes, SideStream};

    /// Each destination its own lane; with `first_on_main` the first other rank takes
    /// the rank's stream and the own part the last side stream in use; without, none
    /// takes the rank's stream.
    #[test]
    fn every_destination_has_a_lane_of_its_own() {
        let fake = |i: usize| (0x1000 + i) as *mut _;
        let sides: Vec<SideStream> = (0..4).map(|i| SideStream::stand_in(fake(i))).collect();
        let main = fake(99);
        for nranks in 1..=4 {
            for rank in 0..nranks {
                for first_on_main in [true, false] {
                    let lanes = Lanes::new(main, &sides, rank, nranks, first_on_main);
                    let of: Vec<_> = (0..nranks).map(|d| lanes.of(d)).collect();
                    for (a, x) in of.iter().enumerate() {
                        assert!(of.iter().skip(a + 1).all(|y| y != x), "two destinations on one lane");
                    }
                    assert_eq!(of.iter().filter(|&&l| l == main).count(), first_on_main as usize);
                    if first_on_main && nranks == 1 {
                        assert_eq!(lanes.of(0), main, "a lone rank's own part on its stream");
                        continue;
                    }
                    if first_on_main {
                        assert_eq!(lanes.of(if rank == 0 { 1 } else { 0 }), main);
                    }
                    assert_eq!(lanes.of(rank), lanes.sides.last().unwrap().stream, "the own part on the last lane");
                }
            }
        }
    }
}
