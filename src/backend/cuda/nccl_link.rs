//! The CUDA backend's link between ranks: an NCCL communicator per rank, its work on
//! the context's current stream. Every exchange is waited for by polling the stream
//! and NCCL's asynchronous error, with a deadline (GPUPRIMS_COMM_TIMEOUT_S, 300 s by
//! default): a rank that failed or never came ends the wait with an error and the
//! communicator is aborted, rather than hanging in a collective.

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{self, CUstream};

use super::context::CudaShared;
use super::driver::DriverContext;
use super::memory::{alloc_async, free_async};
use super::nccl::{
    nccl, Nccl, NcclComm, NcclResult, NcclUniqueId, NCCL_FLOAT16, NCCL_IN_PROGRESS, NCCL_SUCCESS, NCCL_UINT32, NCCL_UINT64, NCCL_UINT8,
};
use super::peer_copy::{PeerCopies, PEER_COPIES_UPTO};
use crate::backend::Memory;
use crate::error::{invalid, Error, Result};
use crate::multi::host_link::{timeout, HostLink};
use crate::multi::{Link, Transfer, ID_BYTES};

pub fn new_comm_id() -> Result<Vec<u8>> {
    let api = nccl()?;
    let mut id = NcclUniqueId { internal: [0; 128] };
    // SAFETY: one out-pointer to a 128-byte id.
    api.check(unsafe { (api.get_unique_id)(&mut id) }, "ncclGetUniqueId")?;
    Ok(id.internal.to_vec())
}

pub struct NcclLink {
    api: &'static Nccl,
    comm: NcclComm,
    shared: Arc<CudaShared>,
    rank: usize,
    nranks: usize,
    failed: AtomicBool,
    /// A group's all-to-all by the copy engines (all ranks threads of this process).
    peer: PeerCopies,
}

// SAFETY: the communicator is used under the context's lock, one call at a time.
unsafe impl Send for NcclLink {}
unsafe impl Sync for NcclLink {}

impl NcclLink {
    /// ncclCommInitRank on this context's device; waits for every rank to join.
    pub fn join(shared: &Arc<CudaShared>, id: &[u8], rank: usize, nranks: usize) -> Result<NcclLink> {
        let api = nccl()?;
        if id.len() != ID_BYTES {
            return Err(invalid(format!("id has {} bytes, an NCCL id {ID_BYTES}", id.len())));
        }
        let mut unique = NcclUniqueId { internal: [0; 128] };
        unique.internal.copy_from_slice(id);
        let _state = shared.lock()?; // makes the context current for NCCL
        let mut comm: NcclComm = std::ptr::null_mut();
        // SAFETY: an out-pointer and the id by value, on the current device.
        let r = unsafe { (api.comm_init_rank)(&mut comm, nranks as i32, unique, rank as i32) };
        api.check(r, "ncclCommInitRank")?;
        Ok(NcclLink { api, comm, shared: shared.clone(), rank, nranks, failed: AtomicBool::new(false), peer: PeerCopies::default() })
    }

    fn refuse_if_failed(&self) -> Result<()> {
        if self.failed.load(Ordering::Acquire) {
            return Err(Error::Driver("this communicator was aborted after a failure; create a new one".into()));
        }
        Ok(())
    }

    /// Waits for `stream` while watching NCCL's asynchronous error and the deadline;
    /// aborts the communicator when either ends the wait.
    fn wait(&self, stream: CUstream, what: &str) -> Result<()> {
        let started = Instant::now();
        let deadline = started + timeout();
        loop {
            // SAFETY: a live stream.
            match unsafe { sys::cuStreamQuery(stream) } {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {}
                other => {
                    self.abort();
                    return Err(Error::Driver(format!("{what}: the stream failed ({other:?})")));
                }
            }
            let mut async_error: NcclResult = NCCL_SUCCESS;
            // SAFETY: a live communicator and an out-pointer.
            unsafe { (self.api.comm_get_async_error)(self.comm, &mut async_error) };
            if async_error != NCCL_SUCCESS && async_error != NCCL_IN_PROGRESS {
                self.abort();
                return self.api.check(async_error, what);
            }
            if Instant::now() >= deadline {
                self.abort();
                return Err(Error::Driver(format!(
                    "{what}: timed out after {} s waiting for the other ranks (GPUPRIMS_COMM_TIMEOUT_S)",
                    timeout().as_secs()
                )));
            }
            if *POLL_US > 0 && started.elapsed().as_micros() > 100 {
                std::thread::sleep(std::time::Duration::from_micros(*POLL_US));
            } else {
                std::thread::yield_now();
            }
        }
    }

    fn abort(&self) {
        if !self.failed.swap(true, Ordering::AcqRel) {
            // SAFETY: a live communicator; later calls are refused.
            unsafe { (self.api.comm_abort)(self.comm) };
        }
    }

    /// Every send and receive of every transfer's `parts` to and from the other ranks,
    /// in one ncclGroupStart/ncclGroupEnd (the rank's own parts are copied by `copy_own`).
    fn exchange(&self, all: &[Parts], stream: CUstream) -> Result<()> {
        let api = self.api;
        // SAFETY: group calls bracket the sends and receives.
        api.check(unsafe { (api.group_start)() }, "ncclGroupStart")?;
        let mut issued = Ok(());
        // Every rank issues the transfers in the same order, so NCCL pairs them.
        for (parts, peer) in all.iter().flat_map(|p| (0..self.nranks).filter(|&r| p.through_nccl(r)).map(move |r| (p, r))) {
            let (out, inc) = (parts.send_at(peer), parts.recv_at(peer));
            let (kind, unit) = parts.nccl_type();
            // SAFETY: the ranges lie inside the send and receive memory or the staging
            // area (the caller's plan); NCCL pairs each send with the peer's receive.
            issued = issued.and_then(|_| unsafe {
                if out.1 > 0 {
                    api.check((api.send)(out.0 as *const c_void, out.1 / unit, kind, peer as i32, self.comm, stream as *mut c_void), "ncclSend")?;
                }
                if inc.1 > 0 {
                    api.check((api.recv)(inc.0 as *mut c_void, inc.1 / unit, kind, peer as i32, self.comm, stream as *mut c_void), "ncclRecv")?;
                }
                Ok(())
            });
        }
        let ended = api.check(unsafe { (api.group_end)() }, "ncclGroupEnd");
        if let Err(e) = issued.and(ended) {
            self.abort();
            return Err(e);
        }
        Ok(())
    }
}

/// Knob multi.own_by_copy=0: the rank's own part goes through NCCL's send to itself
/// (to compare). By default it is a device copy on the side stream, beside NCCL's
/// transfers: NCCL gives a send to oneself a share of its channels like any peer's.
static OWN_BY_COPY: once_cell::sync::Lazy<bool> = once_cell::sync::Lazy::new(|| super::tuning::knob("multi.own_by_copy", 1) != 0);

/// Knob multi.element_types=0: every part moves as NCCL bytes (to compare).
static ELEMENT_TYPES: once_cell::sync::Lazy<bool> = once_cell::sync::Lazy::new(|| super::tuning::knob("multi.element_types", 1) != 0);

/// Knob multi.poll_us: microseconds asked to sleep between polls of a wait after its
/// first 100 µs (default 20, which the kernel's timer slack makes 50-70; 0 polls back
/// to back, yielding), so that waiting ranks' threads leave the driver to the ranks
/// still issuing work.
static POLL_US: once_cell::sync::Lazy<u64> = once_cell::sync::Lazy::new(|| super::tuning::knob("multi.poll_us", 20) as u64);

/// NCCL's kernels move whole words: a part of a few bytes would be read past its end
/// (compute-sanitizer saw ncclDevKernel_SendRecv read 4 bytes of a 1-byte buffer). Parts
/// shorter than this go through a staging area instead, a slot a peer each way.
const SMALL: usize = 16;

/// One all-to-all's memory: the caller's ranges, and the staging area of short parts
/// (send slots first, then receive slots).
struct Parts<'a> {
    send: u64,
    recv: u64,
    stage: u64,
    send_ranges: &'a [Range<usize>],
    recv_ranges: &'a [Range<usize>],
    nranks: usize,
    /// The rank's own part when it is copied beside NCCL rather than sent through it.
    own_by_copy: Option<usize>,
    /// The element's bytes: every range is whole elements.
    unit: usize,
}

impl Parts<'_> {
    fn send_slot(&self, peer: usize) -> u64 {
        self.stage + (SMALL * peer) as u64
    }

    fn recv_slot(&self, peer: usize) -> u64 {
        self.stage + (SMALL * (self.nranks + peer)) as u64
    }

    /// Where the part for `peer` is sent from, and its length.
    fn send_at(&self, peer: usize) -> (u64, usize) {
        let r = &self.send_ranges[peer];
        (if r.len() < SMALL { self.send_slot(peer) } else { self.send + r.start as u64 }, r.len())
    }

    fn recv_at(&self, peer: usize) -> (u64, usize) {
        let r = &self.recv_ranges[peer];
        (if r.len() < SMALL { self.recv_slot(peer) } else { self.recv + r.start as u64 }, r.len())
    }

    /// The NCCL type the parts move in, and its bytes: the element's width. Every
    /// part's address and length are whole elements (the staging slots are 16-byte
    /// words), and NCCL copies a part whose address is not a whole 16-byte word in
    /// pieces of its type: bytes would be the slowest way.
    fn nccl_type(&self) -> (std::ffi::c_int, usize) {
        match if *ELEMENT_TYPES { self.unit } else { 1 } {
            8 => (NCCL_UINT64, 8),
            4 => (NCCL_UINT32, 4),
            2 => (NCCL_FLOAT16, 2),
            _ => (NCCL_UINT8, 1),
        }
    }

    /// Every part is whole elements (else NCCL's count would drop the rest).
    fn check_units(&self) -> Result<()> {
        let unit = self.nccl_type().1;
        match self.send_ranges.iter().chain(self.recv_ranges).find(|r| r.len() % unit != 0) {
            Some(r) => Err(crate::error::internal(format!("a part of {} bytes is not whole {unit}-byte elements", r.len()))),
            None => Ok(()),
        }
    }

    fn through_nccl(&self, peer: usize) -> bool {
        self.own_by_copy != Some(peer)
    }

    /// Copies the rank's own part on `side`, a stream beside NCCL's.
    fn copy_own(&self, side: CUstream, rank: usize) -> Result<()> {
        let (from, to) = (&self.send_ranges[rank], &self.recv_ranges[rank]);
        if !from.is_empty() {
            // SAFETY: both ranges lie inside the send and receive memory (the plan),
            // which do not overlap; the caller joins `side` before later work.
            unsafe { drv::memcpy_dtod_async(self.recv + to.start as u64, self.send + from.start as u64, from.len(), side) }
                .during("copying the rank's own part")?;
        }
        Ok(())
    }

    fn stage_short_sends(&self, stream: CUstream) -> Result<()> {
        for (peer, r) in self.send_ranges.iter().enumerate().filter(|&(p, r)| self.through_nccl(p) && !r.is_empty() && r.len() < SMALL) {
            // SAFETY: the range lies inside the send memory; the slot holds SMALL bytes.
            unsafe { drv::memcpy_dtod_async(self.send_slot(peer), self.send + r.start as u64, r.len(), stream) }
                .during("staging a short part")?;
        }
        Ok(())
    }

    fn unstage_short_receives(&self, stream: CUstream) -> Result<()> {
        for (peer, r) in self.recv_ranges.iter().enumerate().filter(|&(p, r)| self.through_nccl(p) && !r.is_empty() && r.len() < SMALL) {
            // SAFETY: as stage_short_sends, the other way.
            unsafe { drv::memcpy_dtod_async(self.recv + r.start as u64, self.recv_slot(peer), r.len(), stream) }
                .during("copying a short part out")?;
        }
        Ok(())
    }
}

fn device_ptr(mem: &Memory) -> Result<u64> {
    Ok(mem.as_device()?.ptr)
}

impl Link for NcclLink {
    fn rank(&self) -> usize {
        self.rank
    }

    fn nranks(&self) -> usize {
        self.nranks
    }

    fn all_gather(&self, local: &[u8]) -> Result<Vec<u8>> {
        self.refuse_if_failed()?;
        // NCCL's low-latency protocol moves whole 8-byte words: each rank's part padded
        // to one (compute-sanitizer saw it read past a 1-byte part's allocation).
        let part = local.len();
        let n = part.div_ceil(8) * 8;
        let mut padded = local.to_vec();
        padded.resize(n, 0);
        let local = &padded[..];
        let mut all = vec![0u8; n * self.nranks];
        let state = self.shared.lock()?;
        let stream = state.stream;
        // SAFETY: stream-ordered temporary memory for the send and receive buffers,
        // freed in stream order after the copy back, which is waited for.
        unsafe {
            let dev = alloc_async(stream, n * (self.nranks + 1), "an exchange of plans")?;
            let recv = dev + n as u64;
            let result = (|| {
                drv::memcpy_htod_async(dev, local, stream).during("copying a plan to the device")?;
                let r = (self.api.all_gather)(dev as *const c_void, recv as *mut c_void, n, NCCL_UINT8, self.comm, stream as *mut c_void);
                self.api.check(r, "ncclAllGather")?;
                drv::memcpy_dtoh_async(&mut all[..], recv, stream).during("copying the plans back")?;
                self.wait(stream, "exchanging plans")
            })();
            free_async(dev, n * (self.nranks + 1), stream)?;
            result?;
        }
        drop(state);
        Ok(all.chunks(n.max(1)).flat_map(|c| c[..part].to_vec()).collect())
    }

    fn all_to_all(&self, transfers: &[Transfer]) -> Result<()> {
        self.refuse_if_failed()?;
        let ends = transfers.iter().map(|t| Ok((device_ptr(t.send)?, device_ptr(t.recv)?))).collect::<Result<Vec<_>>>()?;
        let mut state = self.shared.lock()?;
        let stream = state.stream;
        let stage_bytes = 2 * SMALL * self.nranks;
        let all_stage_bytes = stage_bytes * transfers.len().max(1);
        // SAFETY: stream-ordered staging memory, freed in stream order after its copies.
        let stage = unsafe { alloc_async(stream, all_stage_bytes, "staging of short parts") }?;
        let own_by_copy = OWN_BY_COPY.then_some(self.rank);
        let all: Vec<Parts> = transfers
            .iter()
            .zip(ends)
            .enumerate()
            .map(|(i, (t, (send, recv)))| Parts {
                send,
                recv,
                stage: stage + (i * stage_bytes) as u64,
                send_ranges: t.send_ranges,
                recv_ranges: t.recv_ranges,
                nranks: self.nranks,
                own_by_copy,
                unit: t.unit,
            })
            .collect();
        let exchanged = (|| {
            all.iter().try_for_each(|p| p.check_units())?;
            all.iter().try_for_each(|p| p.stage_short_sends(stream))?;
            let mut copied = Ok(());
            if let Some(me) = own_by_copy {
                let side = state.side_stream()?;
                side.fork(stream)?;
                copied = all.iter().try_for_each(|p| p.copy_own(side.stream, me));
            }
            let sent = copied.and_then(|_| self.exchange(&all, stream));
            if own_by_copy.is_some() {
                state.side_stream()?.join(stream)?; // joined whatever failed after the fork
            }
            sent?;
            self.wait(stream, "exchanging data")?;
            all.iter().try_for_each(|p| p.unstage_short_receives(stream))
        })();
        // SAFETY: allocated above on this stream; its users are ordered before.
        unsafe { free_async(stage, all_stage_bytes, stream) }?;
        exchanged
    }

    /// A group's: by the copy engines (peer_copy.rs) for groups of up to
    /// multi.peer_copies ranks (2) whose devices all reach each other.
    fn all_to_all_in_process(&self, transfers: &[Transfer], plans: &HostLink) -> Result<()> {
        self.refuse_if_failed()?;
        if self.nranks <= *PEER_COPIES_UPTO && self.peer.all_to_all(&self.shared, self.rank, self.nranks, transfers, plans)? {
            return Ok(());
        }
        self.all_to_all(transfers)
    }

    /// A group's chunks by the copy engines where its exchanges go by them, each
    /// chunk's work queued as it lands; else each chunk in turn.
    fn all_to_all_chunks_in_process(&self, chunks: &[Vec<Transfer>], plans: &HostLink,
                                    landed: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        self.refuse_if_failed()?;
        if self.nranks <= *PEER_COPIES_UPTO && self.peer.all_to_all_chunks(&self.shared, self.rank, self.nranks, chunks, plans, landed)? {
            return Ok(());
        }
        for (i, chunk) in chunks.iter().enumerate() {
            self.all_to_all(chunk)?;
            landed(i)?;
        }
        Ok(())
    }

    fn overlaps_chunks_in_process(&self, plans: &HostLink) -> Result<bool> {
        self.refuse_if_failed()?;
        Ok(self.nranks <= *PEER_COPIES_UPTO && self.peer.available(&self.shared, self.rank, self.nranks, plans)?)
    }

    fn fail(&self, _why: &str) {
        self.abort();
    }
}

impl Drop for NcclLink {
    fn drop(&mut self) {
        if !self.failed.load(Ordering::Acquire) {
            if let Ok(state) = self.shared.lock() {
                let _ = CudaShared::wait(state.stream);
                self.peer.destroy();
                // SAFETY: a live communicator with no work left on it.
                unsafe { (self.api.comm_destroy)(self.comm) };
            }
        }
        // An aborted communicator was freed by the abort.
    }
}
