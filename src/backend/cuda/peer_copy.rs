//! A group's all-to-all by the copy engines: where every rank is a thread of this
//! process, each rank copies its parts straight into the other ranks' receive memory
//! (cuMemcpyPeerAsync), in stream order on every rank and with no wait on the host.
//! On 2 H200s a sort's exchange through NCCL moved 285 GB/s a rank; the copy engines
//! moved 388 (scripts/probes/peer-scatter.cu; docs/benchmarks/multi-gpu.md).
//!
//! Two rendezvous of the ranks' threads (the group's host exchange of plans) order it:
//! 1. every rank gives its context, device, receive memory and ranges, and an event
//!    recorded on its stream after its earlier work (`ready`); each rank's stream then
//!    waits for every other's `ready` before copying into their memory;
//! 2. every rank gives an event recorded after its copies (`done`); each rank's stream
//!    waits for every other's `done` before its later work reads what it received.
//!
//! The two events are the link's own, recorded again by each call, and no wait sees a
//! later record than the one it was meant for: every other rank queues its wait for a
//! rank's `ready` of call n before it reaches rendezvous 2 of call n, which the rank
//! must pass before it records `ready` for call n + 1; and its wait for `done` of call
//! n before it reaches rendezvous 1 of call n + 1, which the rank must pass before it
//! records `done` again.

use std::sync::Mutex;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUevent, CUevent_flags, CUevent_wait_flags, CUstream};

use super::context::CudaShared;
use super::driver::DriverContext;
use crate::backend::Memory;
use crate::error::{internal, Result};
use crate::multi::{Link, Transfer};

/// Knob multi.peer_copies=0: a group's all-to-all goes through NCCL like a
/// communicator's (to compare).
pub static PEER_COPIES: once_cell::sync::Lazy<bool> = once_cell::sync::Lazy::new(|| super::tuning::knob("multi.peer_copies", 1) != 0);

/// A rank's events and which peers it has opened its access to.
pub struct PeerCopies {
    events: Mutex<Option<Events>>,
}

struct Events {
    ready: CUevent,
    done: CUevent,
    /// Peers whose memory this rank's device may reach (peer access enabled, their
    /// memory pools opened to it), by rank.
    opened: Vec<bool>,
}

/// What a rank gives at rendezvous 1, as u64 words: its context, device, `ready`
/// event, then for each transfer its receive memory and, for each source rank, the
/// start and length of the bytes it receives from it.
struct Offer {
    words: Vec<u64>,
}

const HEAD: usize = 3;

impl Offer {
    fn new(shared: &CudaShared, ready: CUevent, transfers: &[Transfer]) -> Result<Offer> {
        let mut words = vec![shared.context as u64, shared.device as u64, ready as u64];
        for t in transfers {
            words.push(t.recv.as_device()?.ptr);
            t.recv_ranges.iter().for_each(|r| words.extend([r.start as u64, r.len() as u64]));
        }
        Ok(Offer { words })
    }

    fn context(w: &[u64]) -> CUcontext {
        w[0] as usize as CUcontext
    }

    fn device(w: &[u64]) -> CUdevice {
        w[1] as CUdevice
    }

    /// Where transfer `t`'s bytes from rank `source` land in the offering rank's memory,
    /// and how many.
    fn landing(w: &[u64], nranks: usize, t: usize, source: usize) -> (u64, usize) {
        let at = HEAD + t * (1 + 2 * nranks);
        (w[at] + w[at + 1 + 2 * source], w[at + 2 + 2 * source] as usize)
    }
}

fn words_of(bytes: &[u8]) -> Vec<u64> {
    bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().expect("8-byte words"))).collect()
}

fn bytes_of(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

impl PeerCopies {
    pub fn new() -> PeerCopies {
        PeerCopies { events: Mutex::new(None) }
    }

    /// The all-to-all (see the module's comment), as rank `rank` of `nranks` on `shared`,
    /// `plans` the group's host exchange. Where some pair of the devices cannot reach
    /// each other, every rank learns it at rendezvous 1 and returns Ok(false) having
    /// moved nothing: the caller then goes through NCCL.
    pub fn all_to_all(&self, shared: &CudaShared, rank: usize, nranks: usize, transfers: &[Transfer], plans: &dyn Link) -> Result<bool> {
        let state = shared.lock()?;
        let stream = state.stream;
        let mut events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        if events.is_none() {
            *events = Some(Events::create(nranks)?);
        }
        let ev = events.as_mut().expect("created above");
        // SAFETY: a live event and stream of this context (current under the lock).
        unsafe { drv::event::record(ev.ready, stream) }.during("cuEventRecord (ready for peer copies)")?;
        let offer = Offer::new(shared, ev.ready, transfers)?;
        let all = words_of(&plans.all_gather(&bytes_of(&offer.words))?);
        let offers: Vec<&[u64]> = all.chunks(offer.words.len()).collect();
        if !every_pair_reaches(&offers)? {
            return Ok(false);
        }
        ev.open_peers(shared, rank, &offers)?;
        copy_parts(shared, stream, rank, transfers, &offers)?;
        // SAFETY: as above.
        unsafe { drv::event::record(ev.done, stream) }.during("cuEventRecord (peer copies done)")?;
        let done = words_of(&plans.all_gather(&(ev.done as u64).to_le_bytes())?);
        for (r, &event) in done.iter().enumerate().filter(|&(r, _)| r != rank) {
            // SAFETY: rank r's live event (its link outlives this call, which it is in).
            unsafe { drv::stream::wait_event(stream, event as usize as CUevent, CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
                .during(&format!("cuStreamWaitEvent (rank {r}'s copies)"))?;
        }
        Ok(true)
    }

    /// Releases the events; the caller has synchronized the context.
    pub fn destroy(&self) {
        if let Some(ev) = self.events.lock().unwrap_or_else(|p| p.into_inner()).take() {
            // SAFETY: events created by Events::create, no longer used.
            unsafe {
                let _ = drv::event::destroy(ev.ready);
                let _ = drv::event::destroy(ev.done);
            }
        }
    }
}

impl Events {
    /// Needs the context current (under the state lock).
    fn create(nranks: usize) -> Result<Events> {
        let event = || drv::event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING).during("cuEventCreate (peer copies)");
        Ok(Events { ready: event()?, done: event()?, opened: vec![false; nranks] })
    }

    /// Opens every peer's memory to this rank's device the first time: peer access to
    /// its context (cudaMalloc'd memory) and to its device's memory pool (the
    /// library's stream-ordered memory, which peer access alone does not open).
    fn open_peers(&mut self, shared: &CudaShared, rank: usize, offers: &[&[u64]]) -> Result<()> {
        for (r, offer) in offers.iter().enumerate().filter(|&(r, _)| r != rank) {
            if self.opened[r] {
                continue;
            }
            // SAFETY: the peer's live context; this rank's context is current.
            match unsafe { sys::cuCtxEnablePeerAccess(Offer::context(offer), 0) } {
                sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
                other => return Err(crate::error::Error::Driver(format!("cuCtxEnablePeerAccess (rank {r}): {other:?}"))),
            }
            let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
            let access = sys::CUmemAccessDesc {
                location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: shared.device },
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            // SAFETY: an out-pointer for the peer device's current pool, then one
            // access descriptor for this device.
            unsafe {
                sys::cuDeviceGetMemPool(&mut pool, Offer::device(offer)).result().during("cuDeviceGetMemPool")?;
                sys::cuMemPoolSetAccess(pool, &access, 1).result().during("cuMemPoolSetAccess")?;
            }
            self.opened[r] = true;
        }
        Ok(())
    }
}

/// Whether every device of the group can reach every other's memory (computed alike on
/// every rank from the same offers).
fn every_pair_reaches(offers: &[&[u64]]) -> Result<bool> {
    for (i, a) in offers.iter().enumerate() {
        for b in offers.iter().skip(i + 1) {
            let (mut ab, mut ba) = (0, 0);
            // SAFETY: out-pointers and device ordinals of this process.
            unsafe {
                sys::cuDeviceCanAccessPeer(&mut ab, Offer::device(a), Offer::device(b)).result().during("cuDeviceCanAccessPeer")?;
                sys::cuDeviceCanAccessPeer(&mut ba, Offer::device(b), Offer::device(a)).result().during("cuDeviceCanAccessPeer")?;
            }
            if ab == 0 || ba == 0 {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// After every other rank's `ready`, each part into its receiver's memory: the rank's
/// own by a device copy, the others' by the copy engines.
fn copy_parts(shared: &CudaShared, stream: CUstream, rank: usize, transfers: &[Transfer], offers: &[&[u64]]) -> Result<()> {
    let nranks = offers.len();
    // Every part's length agrees with its receiver's before anything moves.
    for (t, transfer) in transfers.iter().enumerate() {
        for (r, offer) in offers.iter().enumerate() {
            let (sent, landing) = (transfer.send_ranges[r].len(), Offer::landing(offer, nranks, t, rank).1);
            if sent != landing {
                return Err(internal(format!("a part of {sent} bytes for rank {r}, which expects {landing}")));
            }
        }
    }
    for (r, offer) in offers.iter().enumerate().filter(|&(r, _)| r != rank) {
        // SAFETY: rank r's live event, recorded before rendezvous 1.
        unsafe { drv::stream::wait_event(stream, offer[2] as usize as CUevent, CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT) }
            .during(&format!("cuStreamWaitEvent (rank {r} ready)"))?;
    }
    for (t, transfer) in transfers.iter().enumerate() {
        let send = send_ptr(transfer.send)?;
        for (r, offer) in offers.iter().enumerate() {
            let from = &transfer.send_ranges[r];
            let (to, bytes) = Offer::landing(offer, nranks, t, rank);
            if bytes == 0 {
                continue;
            }
            let src = send + from.start as u64;
            // SAFETY: both ranges lie inside their memory (the caller's plan, the lengths
            // checked above); the receiver's earlier work is done (its `ready`), and it
            // reads them only after this rank's `done`.
            unsafe {
                if r == rank {
                    drv::memcpy_dtod_async(to, src, bytes, stream).during("copying the rank's own part")?;
                } else {
                    sys::cuMemcpyPeerAsync(to, Offer::context(offer), src, shared.context, bytes, stream)
                        .result()
                        .during(&format!("cuMemcpyPeerAsync (to rank {r})"))?;
                }
            }
        }
    }
    Ok(())
}

fn send_ptr(mem: &Memory) -> Result<u64> {
    Ok(mem.as_device()?.ptr)
}
