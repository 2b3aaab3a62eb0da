//! One CUDA context per gpuprims_context: the device's primary context (shared with
//! the CUDA runtime, so CUB and cudaMalloc'd memory interoperate), a stream of its
//! own or the caller's, the zero-initialised epoch-tagged memory blocks publish
//! to, a mapped host slot for small results, and the loaded kernels.
//!
//! All work of one primitive is issued under the state lock, so threads sharing a
//! context cannot interleave their launches on the shared temporary memory.

use std::ffi::c_void;
use std::sync::{Mutex, MutexGuard};

use cudarc::driver::result as drv;
use cudarc::driver::sys::{self, CUcontext, CUdevice, CUdeviceptr, CUstream};

use super::driver::{lost, DeviceProps, DriverContext};
use super::loader::Loader;
use super::memory::{alloc_async, free_async};
use super::side_stream::SideStream;
use crate::dtype::DType;
use crate::error::{internal, Error, Result};

/// Zero-initialised memory for the scan's ticket counter and the tagged words blocks
/// publish to each other (look-back aggregates and digit counts, reduce partials),
/// shared by every primitive and reused across runs without clearing. Each run takes
/// a range of tags no earlier run had (begin_run); why that makes stale words
/// harmless is written once, in kernels/common/tagged.cuh.
pub struct SyncState {
    pub ptr: CUdeviceptr,
    /// Tagged 64-bit words available after TAGGED_OFFSET.
    pub word_capacity: usize,
    /// The first tag of the next run (its "epoch"), 1 ..= MAX_TAG + 1 (u64: past the
    /// last tag without wrapping). Zeroed memory carries tag 0, which no run is given.
    pub epoch: u64,
    /// Tickets handed out by earlier scans (the counter never goes back).
    pub tickets_issued: u64,
}

/// Byte offsets inside the sync memory.
pub(crate) const SCAN_TICKET_OFFSET: usize = 0;
const TAGGED_OFFSET: usize = 16;
/// The last tag a run may be given: before the tags would wrap and meet words of old
/// runs, the memory is cleared and the tags restart at 1.
const MAX_TAG: u64 = u32::MAX as u64;
/// Tags a run of the digit look-back takes: a tile's count, its inclusive prefix
/// (kernels/common/digit_lookback.cuh: DigitLookBack::TAGS).
const DIGIT_LOOKBACK_TAGS: u32 = 2;

/// The tag runs start from after the memory is cleared: 1, or (knob sync.first_tag,
/// for tests) one close to MAX_TAG, so that a short test crosses the wrap and its
/// clearing many times.
fn first_tag() -> u64 {
    static FIRST: once_cell::sync::Lazy<u64> = once_cell::sync::Lazy::new(|| (super::tuning::knob("sync.first_tag", 1) as u64).clamp(1, MAX_TAG + 1 - DIGIT_LOOKBACK_TAGS as u64));
    *FIRST
}

impl SyncState {
    /// Room for `words` tagged words and `tags` unused tags; new memory is zeroed and
    /// the tags restart.
    fn ensure(&mut self, stream: CUstream, words: usize, tags: u32) -> Result<()> {
        let tags_fit = self.epoch + tags as u64 - 1 <= MAX_TAG;
        if words <= self.word_capacity && tags_fit && self.ptr != 0 {
            return Ok(());
        }
        let capacity = words.max(self.word_capacity).max(1024);
        let bytes = TAGGED_OFFSET + 8 * capacity;
        // SAFETY: stream-ordered on the context's stream.
        unsafe {
            if self.ptr != 0 {
                free_async(self.ptr, self.bytes(), stream)?;
                self.ptr = 0;
                self.word_capacity = 0;
            }
            self.ptr = alloc_async(stream, bytes, "sync state")?;
            drv::memset_d8_async(self.ptr, 0, bytes, stream).during("cuMemsetD8Async")?;
        }
        self.word_capacity = capacity;
        // (A test's first tag near the last may leave too few for a reservation.)
        self.epoch = if first_tag() + tags as u64 - 1 <= MAX_TAG { first_tag() } else { 1 };
        self.tickets_issued = 0;
        Ok(())
    }

    /// The bytes allocated (0 before the first run).
    fn bytes(&self) -> usize {
        if self.ptr == 0 {
            0
        } else {
            TAGGED_OFFSET + 8 * self.word_capacity
        }
    }

    /// Makes room, before a primitive's first write, for `runs` runs of up to `words`
    /// words each (begin_run), so that none of them allocates or clears the memory
    /// later: an allocation that failed after a write would leave the caller's buffers
    /// half done.
    pub fn reserve_runs(&mut self, stream: CUstream, words: usize, runs: usize) -> Result<()> {
        self.ensure(stream, words, tags_for(runs, 1))
    }

    /// Makes room, before a primitive's first write, for what `needs` says of the sync
    /// memory: its most words at once and its tags (State::reserve).
    fn reserve(&mut self, stream: CUstream, needs: &Needs) -> Result<()> {
        if needs.words == 0 && needs.tags == 0 {
            return Ok(());
        }
        self.ensure(stream, needs.words, needs.tags.min(MAX_TAG) as u32)
    }

    /// Starts a run that publishes up to `words` tagged words, all with one tag: their
    /// device address and the run's tag, its epoch.
    pub fn begin_run(&mut self, stream: CUstream, words: usize) -> Result<(CUdeviceptr, u32)> {
        self.begin_run_of(stream, words, 1)
    }

    /// As begin_run, for a digit look-back (kernels/common/digit_lookback.cuh), whose
    /// run owns two tags: epoch (a tile's count) and epoch + 1 (its inclusive prefix).
    pub fn begin_digit_run(&mut self, stream: CUstream, words: usize) -> Result<(CUdeviceptr, u32)> {
        self.begin_run_of(stream, words, DIGIT_LOOKBACK_TAGS)
    }

    /// A run that owns `tags` tags, epoch .. epoch + tags - 1; the next run starts past
    /// them (kernels/common/tagged.cuh).
    fn begin_run_of(&mut self, stream: CUstream, words: usize, tags: u32) -> Result<(CUdeviceptr, u32)> {
        self.ensure(stream, words, tags)?;
        let epoch = self.epoch as u32;
        self.epoch += tags as u64;
        Ok((self.ptr + TAGGED_OFFSET as u64, epoch))
    }
}

/// The tags of `runs` runs of `each` tags (at most every tag there is).
fn tags_for(runs: usize, each: u32) -> u32 {
    (runs as u64 * each as u64).min(MAX_TAG) as u32
}

/// What steps of a primitive take from the context's shared memory: scratch bytes,
/// tagged words at once and tags in all. Steps issued one after another (`then`) take
/// the most scratch and words of any and the sum of their tags: a caller that makes
/// several (segmented top-k, a device-wide top-k a row) adds them up and acquires the
/// total before the first writes (State::reserve), so none of them allocates later.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Needs {
    pub scratch: usize,
    pub words: usize,
    pub tags: u64,
}

impl Needs {
    /// `bytes` of scratch memory (Scratch::ensure).
    pub fn scratch(bytes: usize) -> Needs {
        Needs { scratch: bytes, ..Needs::default() }
    }

    /// `runs` runs of up to `words` tagged words each (SyncState::begin_run).
    pub fn runs(words: usize, runs: usize) -> Needs {
        Needs { words, tags: tags_for(runs, 1) as u64, ..Needs::default() }
    }

    /// `runs` runs of the digit look-back of up to `words` words (begin_digit_run).
    pub fn digit_runs(words: usize, runs: usize) -> Needs {
        Needs { words, tags: tags_for(runs, DIGIT_LOOKBACK_TAGS) as u64, ..Needs::default() }
    }

    /// These needs, then `next`'s.
    pub fn then(self, next: Needs) -> Needs {
        Needs { scratch: self.scratch.max(next.scratch), words: self.words.max(next.words), tags: self.tags + next.tags }
    }
}

/// 64-bit tagged words per published value of `dtype` (kernels/common/tagged.cuh).
pub fn tagged_words(dtype: DType) -> usize {
    if dtype.size() > 4 {
        2
    } else {
        1
    }
}

/// `bytes` rounded up to 256, so regions carved one after another from scratch memory
/// stay aligned for any access.
pub fn round_up(bytes: usize) -> usize {
    bytes.div_ceil(256) * 256
}

/// Temporary device memory of the primitives (a sort's alternate buffers, say), grown
/// on demand, reused by later calls and released with the context.
pub struct Scratch {
    pub ptr: CUdeviceptr,
    pub bytes: usize,
}

impl Scratch {
    /// At least `bytes` of scratch memory, in stream order.
    pub fn ensure(&mut self, stream: CUstream, bytes: usize) -> Result<CUdeviceptr> {
        if bytes <= self.bytes && self.ptr != 0 {
            return Ok(self.ptr);
        }
        // SAFETY: stream-ordered on the stream all earlier users of the memory ran on.
        unsafe {
            if self.ptr != 0 {
                free_async(self.ptr, self.bytes, stream)?;
                self.ptr = 0;
                self.bytes = 0;
            }
            self.ptr = alloc_async(stream, bytes, "scratch")?;
        }
        self.bytes = bytes;
        Ok(self.ptr)
    }
}

/// The segmented select's device counters (allocated and zeroed on first use; each
/// call's kernels leave them zeroed but for the verdict, which carries the call's
/// number), its calls so far, which number the reports, and its kernels looked up so
/// far (segmented_select.rs).
pub struct SegselState {
    pub counters: CUdeviceptr,
    pub calls: u32,
    pub kernels: Vec<super::segmented_select::SegselKernels>,
}

/// What may change after the context is created; guarded by one lock.
pub struct State {
    /// Where work is issued: the context's own stream or the caller's.
    pub stream: CUstream,
    pub sync: SyncState,
    pub scratch: Scratch,
    /// A second scratch region, for what one step of a primitive needs and the next
    /// step may need more of (the quicksort's per-level lists), or what must outlive
    /// another primitive's use of `scratch` (segmented top-k's row lists, around its
    /// huge rows' top-ks): regrowing either loses nothing the other holds.
    pub step_scratch: Scratch,
    pub segsel: SegselState,
    /// The tag of the last value handed to the host in the result slot (0: none).
    host_tag: u32,
    /// The side stream, created on first use.
    side: Option<SideStream>,
}

/// Values a kernel hands to the host in the result slot are tagged 1..=HOST_TAG_MAX,
/// then 1 again (24 bits: the selection carries its tag in the top of its flags word).
pub(crate) const HOST_TAG_MAX: u32 = (1 << 24) - 1;

/// The next tag of a value or report handed to the host (1..=HOST_TAG_MAX, wrapping).
fn next_host_tag(state: &mut State) -> u32 {
    state.host_tag = state.host_tag % HOST_TAG_MAX + 1;
    state.host_tag
}

impl State {
    /// Acquires what `needs` says, before a primitive's first write: scratch memory of
    /// at least needs.scratch bytes (its address is scratch.ptr), sync memory of
    /// needs.words words with needs.tags tags unused.
    pub fn reserve(&mut self, needs: Needs) -> Result<()> {
        if needs.scratch > 0 {
            self.scratch.ensure(self.stream, needs.scratch)?;
        }
        self.sync.reserve(self.stream, &needs)
    }

    /// The context's side stream (created on first use).
    pub fn side_stream(&mut self) -> Result<&SideStream> {
        if self.side.is_none() {
            self.side = Some(SideStream::create()?);
        }
        Ok(self.side.as_ref().expect("created above"))
    }
}

/// Knob wait.spin=0: wait_for_slot_tag waits in cuStreamSynchronize alone (to
/// compare; on by default).
static SPIN_WAITS: once_cell::sync::Lazy<bool> = once_cell::sync::Lazy::new(|| super::tuning::knob("wait.spin", 1) != 0);

/// A few bytes of pinned host memory the device writes results into directly.
pub struct ResultSlot {
    pub host: *mut u8,
    pub device: CUdeviceptr,
}

pub(crate) const RESULT_SLOT_BYTES: usize = 64;
const _: () = assert!(RESULT_SLOT_BYTES >= 16, "a value handed to the host takes up to two tagged words");

pub struct CudaShared {
    pub device: CUdevice,
    pub context: CUcontext,
    pub props: DeviceProps,
    pub own_stream: CUstream,
    pub loader: Loader,
    pub result_slot: ResultSlot,
    state: Mutex<State>,
}

// SAFETY: driver handles are usable from any thread once the context is current;
// mutable state is behind the mutex.
unsafe impl Send for CudaShared {}
unsafe impl Sync for CudaShared {}

impl CudaShared {
    /// How many blocks of `block` threads of `f` the whole GPU holds at once: the grid of
    /// one wave (a persistent kernel's, or a grid-strided pass that should not leave a
    /// partial second wave).
    pub fn resident_blocks(&self, f: sys::CUfunction, block: u32) -> Result<u64> {
        Ok(self.loader.blocks_per_sm(f, block)? as u64 * self.props.sm_count as u64)
    }

    pub fn new(ordinal: i32) -> Result<CudaShared> {
        super::loader::look_up_nvrtc_early();
        let device = drv::device::get(ordinal).during("cuDeviceGet")?;
        let props = DeviceProps::read(device)?;
        // SAFETY: device from cuDeviceGet; released in Drop, or below on failure.
        let context = unsafe { drv::primary_ctx::retain(device) }.during("cuDevicePrimaryCtxRetain")?;
        let parts = Self::fresh_context(context).and_then(|()| Self::stream_and_slot());
        let (own_stream, host, device_ptr) = match parts {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: retained above; nothing of ours is left on it.
                let _ = unsafe { drv::primary_ctx::release(device) };
                return Err(e);
            }
        };
        Ok(CudaShared {
            device,
            context,
            loader: Loader::new(props.arch()),
            props,
            own_stream,
            result_slot: ResultSlot { host: host as *mut u8, device: device_ptr },
            state: Mutex::new(State {
                stream: own_stream,
                sync: SyncState { ptr: 0, word_capacity: 0, epoch: 1, tickets_issued: 0 },
                scratch: Scratch { ptr: 0, bytes: 0 },
                step_scratch: Scratch { ptr: 0, bytes: 0 },
                segsel: SegselState { counters: 0, calls: 0, kernels: Vec::new() },
                host_tag: 0,
                side: None,
            }),
        })
    }

    /// Makes the retained `context` current; where an earlier context of this handle
    /// value was lost, checks that this one is a fresh one (driver::lost).
    fn fresh_context(context: CUcontext) -> Result<()> {
        // SAFETY: a retained context.
        unsafe { drv::ctx::set_current(context) }.during("cuCtxSetCurrent")?;
        if lost::why(context).is_some() {
            // SAFETY: the current context; fails again (sticky) if it is the lost one.
            unsafe { sys::cuCtxSynchronize() }.during("checking the device's CUDA context after an earlier fault")?;
            lost::forget(context);
        }
        Ok(())
    }

    /// The context's own stream and its pinned result slot (host and device addresses);
    /// nothing is left allocated on failure.
    fn stream_and_slot() -> Result<(CUstream, *mut c_void, CUdeviceptr)> {
        let stream = drv::stream::create(drv::stream::StreamKind::NonBlocking).during("cuStreamCreate")?;
        let mut host: *mut c_void = std::ptr::null_mut();
        let mut device_ptr: CUdeviceptr = 0;
        // SAFETY: out-pointers; flags ask for memory the device can map. On failure what
        // was made is released.
        unsafe {
            let slot = sys::cuMemHostAlloc(&mut host, RESULT_SLOT_BYTES, sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE)
                .during("cuMemHostAlloc (the result slot)")
                .and_then(|()| sys::cuMemHostGetDevicePointer_v2(&mut device_ptr, host, 0).during("cuMemHostGetDevicePointer"));
            if let Err(e) = slot {
                if !host.is_null() {
                    let _ = sys::cuMemFreeHost(host);
                }
                let _ = drv::stream::destroy(stream);
                return Err(e);
            }
        }
        Ok((stream, host, device_ptr))
    }

    /// Makes the context current on this thread and takes the state lock; fails once
    /// the CUDA context is lost (driver::lost).
    pub fn lock(&self) -> Result<MutexGuard<'_, State>> {
        if let Some(why) = lost::why(self.context) {
            return Err(Error::Driver(format!(
                "an earlier call failed with an error the CUDA context cannot recover from ({why}); {}",
                lost::LOST_ADVICE
            )));
        }
        // SAFETY: a retained context.
        unsafe { drv::ctx::set_current(self.context) }.during("cuCtxSetCurrent")?;
        Ok(self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Waits until the u64 at `offset` in the mapped result slot carries `tag` in its
    /// high half, and returns it: a kernel on `stream` writes it last (in one 8-byte
    /// store; what it wrote to the slot before, behind a system fence). The kernel may
    /// still be running then: what follows it in stream order still waits for it.
    ///
    /// Reading the word as it changes returns about 3 µs sooner than
    /// cuStreamSynchronize, whose completion reaches the host later (H100: a one-block
    /// launch and its wait, 7.7 against 10.7 µs; scripts/probes/probe-floor.cu). The stream is
    /// queried between spins so a launch that failed is reported, not waited on
    /// forever; past SPIN_FOR the wait blocks in cuStreamSynchronize instead, so long
    /// launches do not keep a core busy.
    pub fn wait_for_slot_tag(&self, stream: CUstream, offset: usize, tag: u32) -> Result<u64> {
        use std::time::{Duration, Instant};
        const SPIN_FOR: Duration = Duration::from_micros(200);
        const QUERY_EVERY: Duration = Duration::from_micros(20);
        assert!(offset + 8 <= RESULT_SLOT_BYTES && offset.is_multiple_of(8));
        // SAFETY: an aligned u64 inside the pinned slot, which outlives this call and
        // which the host only reads while a kernel may write it.
        let word = unsafe { std::sync::atomic::AtomicU64::from_ptr(self.result_slot.host.add(offset) as *mut u64) };
        let tagged = || {
            // Acquire: reads of the slot's other fields come after this one.
            let w = word.load(std::sync::atomic::Ordering::Acquire);
            ((w >> 32) as u32 == tag).then_some(w)
        };
        // Once the stream has finished, the word is final.
        let after_finish = || tagged().ok_or_else(|| internal("a kernel finished without writing its result"));
        if !*SPIN_WAITS {
            CudaShared::wait(stream)?;
            return after_finish();
        }
        let start = Instant::now();
        let mut last_query = start;
        loop {
            for _ in 0..64 {
                if let Some(w) = tagged() {
                    return Ok(w);
                }
                std::hint::spin_loop();
            }
            let now = Instant::now();
            if now - start >= SPIN_FOR {
                CudaShared::wait(stream)?;
                return after_finish();
            }
            if now - last_query >= QUERY_EVERY {
                last_query = now;
                // SAFETY: a live stream.
                match unsafe { sys::cuStreamQuery(stream) } {
                    sys::CUresult::CUDA_ERROR_NOT_READY => {}
                    r => {
                        r.during("waiting for the stream (an earlier kernel may have failed)")?;
                        return after_finish();
                    }
                }
            }
        }
    }

    /// Before a launch that hands a value of `dtype` to the host: clears the slot's
    /// words for it, so that none left by an earlier call passes for this one's, and
    /// returns the tag the kernel is to publish them with (kernels/common/tagged.cuh:
    /// Tagged::publish_to_host). The state lock must be held, with no kernel still to
    /// write the slot.
    pub fn begin_host_value(&self, state: &mut State, dtype: DType) -> u32 {
        for k in 0..tagged_words(dtype) {
            self.clear_slot_word(state, 8 * k);
        }
        next_host_tag(state)
    }

    /// Before a launch whose kernel reports a record of type T to the host in the slot,
    /// every field first and then its status word (at `status_offset`, tagged): clears
    /// that word, so that none left by an earlier call passes for this one's, and
    /// returns the tag. The state lock must be held, with no kernel still to write the
    /// slot.
    pub fn begin_report<T: Copy>(&self, state: &mut State, status_offset: usize) -> u32 {
        assert!(std::mem::size_of::<T>() <= RESULT_SLOT_BYTES);
        self.clear_slot_word(state, status_offset);
        next_host_tag(state)
    }

    /// Zeroes the slot's word at byte `offset` (tag 0: no call's), while no kernel
    /// writes the slot (the state lock held, which `_state` stands for). For a record
    /// tagged with a number of the caller's own rather than begin_report's tag.
    pub fn clear_slot_word(&self, _state: &mut State, offset: usize) {
        assert!(offset + 8 <= RESULT_SLOT_BYTES && offset.is_multiple_of(8));
        // SAFETY: an aligned u64 inside the pinned slot; no kernel writes it now (the
        // callers hold the state lock, and every earlier value was waited for).
        unsafe { std::ptr::write_volatile(self.result_slot.host.add(offset) as *mut u64, 0) };
    }

    /// Waits for the record of `tag` (begin_report), spinning on its status word, and
    /// reads it whole.
    pub fn wait_for_report<T: Copy>(&self, stream: CUstream, status_offset: usize, tag: u32) -> Result<T> {
        assert!(std::mem::size_of::<T>() <= RESULT_SLOT_BYTES);
        self.wait_for_slot_tag(stream, status_offset, tag)?;
        // SAFETY: the slot is pinned host memory of RESULT_SLOT_BYTES >= size_of::<T>()
        // (asserted above), aligned to a page; its writer wrote every field before the
        // status word, which the wait read with Acquire.
        Ok(unsafe { std::ptr::read_volatile(self.result_slot.host as *const T) })
    }

    /// Waits for the value a kernel on `stream` publishes to the slot as tagged words
    /// of `tag` (begin_host_value), spinning on them, and copies it to `out` (the
    /// value's bytes).
    pub fn wait_for_host_value(&self, stream: CUstream, tag: u32, out: &mut [u8]) -> Result<()> {
        let words = out.len().div_ceil(4);
        let mut bits = 0u64;
        for k in 0..words {
            // 32 bits of the value a word, the first word's lowest.
            bits |= (self.wait_for_slot_tag(stream, 8 * k, tag)? & 0xffff_ffff) << (32 * k);
        }
        out.copy_from_slice(&bits.to_le_bytes()[..out.len()]);
        Ok(())
    }

    /// Waits for the work issued so far on `stream`.
    pub fn wait(stream: CUstream) -> Result<()> {
        // SAFETY: a live stream.
        unsafe { drv::stream::synchronize(stream) }.during("waiting for the stream (an earlier kernel may have failed)")
    }

    /// Switches later work to `stream` (NULL: the context's own), ordered after the
    /// work already issued.
    pub fn set_stream(&self, stream: *mut c_void) -> Result<()> {
        let mut state = self.lock()?;
        let next = if stream.is_null() { self.own_stream } else { stream as CUstream };
        if next == state.stream {
            return Ok(());
        }
        let event = drv::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).during("cuEventCreate")?;
        // SAFETY: live streams and event; the event is released once it completes.
        unsafe {
            let r = drv::event::record(event, state.stream)
                .and_then(|_| drv::stream::wait_event(next, event, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT));
            let _ = drv::event::destroy(event);
            r.during("ordering the new stream after the old one")?;
        }
        state.stream = next;
        Ok(())
    }
}

impl Drop for CudaShared {
    fn drop(&mut self) {
        // SAFETY: tearing down what `new` created; errors cannot be reported here.
        unsafe {
            let _ = drv::ctx::set_current(self.context);
            let _ = sys::cuCtxSynchronize();
            let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
            let counters = super::segmented_select::COUNTERS_BYTES;
            let held = [
                (state.sync.ptr, state.sync.bytes()),
                (state.scratch.ptr, state.scratch.bytes),
                (state.step_scratch.ptr, state.step_scratch.bytes),
                (state.segsel.counters, counters),
            ];
            for (ptr, bytes) in held {
                if ptr != 0 {
                    let _ = free_async(ptr, bytes, self.own_stream);
                }
            }
            let _ = drv::stream::synchronize(self.own_stream);
            if let Some(side) = state.side.take() {
                side.destroy();
            }
            self.loader.unload_all();
            let _ = sys::cuMemFreeHost(self.result_slot.host as *mut c_void);
            let _ = drv::stream::destroy(self.own_stream);
            let _ = drv::primary_ctx::release(self.device);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps one after another take the most scratch and words of any, and every tag.
    #[test]
    fn needs_then_takes_the_most_room_and_every_tag() {
        let sort = Needs::scratch(1000).then(Needs::digit_runs(512, 20));
        assert_eq!(sort, Needs { scratch: 1000, words: 512, tags: 40 });
        let row = sort.then(Needs::scratch(3000)).then(Needs::runs(100, 1));
        assert_eq!(row, Needs { scratch: 3000, words: 512, tags: 41 });
        assert_eq!(row.then(row), Needs { scratch: 3000, words: 512, tags: 82 });
        assert_eq!(Needs::default().then(row), row);
    }
}
