//! What a handle is: an opaque ID, not an address.
//!
//! The C ABI promises that a handle passed after it was destroyed, or a pointer that is
//! no handle of the kind a parameter wants (a handle of another kind, the address of a
//! local variable, (void *)1, any integer), is GPUPRIMS_STATUS_INVALID_ARGUMENT, and that
//! destroying one is a harmless no-op. A check that reads the memory a pointer points at
//! cannot keep that promise: after a destroy the memory is freed, and a foreign pointer
//! points at whatever it points at (or at nothing). So no one ever dereferences a handle.
//!
//! # The value of a handle
//!
//! A handle's pointer value packs three fields (on 64-bit targets):
//!
//! ```text
//!   63        56 55                    32 31                          0
//!  +------------+------------------------+-----------------------------+
//!  | kind byte  | generation (24 bits)   | slot index (32 bits)        |
//!  +------------+------------------------+-----------------------------+
//! ```
//!
//! - The kind byte (0xC1 context, 0xB1 buffer, 0xA1 Life grid, 0xD1 communicator, 0xE1
//!   group) has its top bit set, so the value is never NULL, never a user-space address
//!   (those are below 2^47, or 2^56 with 5-level paging, on x86-64 and AArch64) and never
//!   a handle of another kind: a buffer passed for a context is told apart by its value
//!   alone.
//! - The slot index says where in that kind's table (a [`Registry`]) the value lives.
//! - The generation says which of the values that slot has held over time this handle
//!   names. Destroying a handle empties its slot; the next handle put in that slot gets
//!   the next generation, so a stale handle never names the slot's new occupant. A slot
//!   whose generation reached the largest one is retired rather than reused (one slot
//!   per 2^24 - 1 handles created in it), so no handle value is ever issued twice in a
//!   process.
//!
//! (On 32-bit targets the same fields are 4, 12 and 16 bits wide.)
//!
//! # The table, and what a call holds
//!
//! Each kind has a [`Registry`]: slots in chunks of 32, 64, 128, ... slots, allocated as
//! the table grows and never moved or freed, so a slot's address is fixed and a lookup
//! needs no lock. Each slot holds a value and one atomic word:
//!
//! ```text
//!   63               40  39    38                                   0
//!  +-------------------+------+-------------------------------------+
//!  | generation        | LIVE | calls holding the value right now   |
//!  +-------------------+------+-------------------------------------+
//! ```
//!
//! - A lookup (every call, for each handle it is given) decodes the handle (its kind
//!   byte, then the slot) and, in one compare-and-swap on the slot's word, checks that
//!   the generation is the handle's and LIVE is set, and counts itself in. A destroyed
//!   or foreign handle fails that check, or never finds a slot: it is recognised from
//!   its value and the table alone, without touching memory it might point at.
//! - The call reads the value through a [`Held`], which counts itself out when the call
//!   ends (a fetch-and-subtract; also when the call panics).
//! - Destroy clears LIVE (a compare-and-swap that also checks the generation, so a
//!   stale or foreign handle changes nothing). No new call finds the value from then
//!   on; the value is dropped by whoever brings the word to "not LIVE, no one holding
//!   it": the destroy itself, or, when another thread is inside a call with the handle
//!   at that moment (the caller's race, as with memory), that call when it ends. So a
//!   value is never freed under a running call, and a buffer's memory is freed at its
//!   destroy unless a call is using it then. Only after the value is dropped does the
//!   slot go on the free list for the next handle (with the next generation).
//!
//! Only creating a handle and putting a slot back on the free list take a lock (the
//! table's growth and free list); the value is dropped outside it.
//!
//! Why this rather than a table behind a lock with `Arc` values (look up under a read
//! lock, clone the `Arc`, unlock; simpler, and no unsafe code): that takes four atomic
//! read-modify-writes a handle (lock, clone, unlock, and the drop when the call ends),
//! and every thread's lookups share the lock's cache line. It measured 30-38 ns a
//! handle, this 16-20 (`test_handles --bench`, gpuprims_buffer_len on the host backend,
//! against 5-8 ns for the whole call when a handle was an address; see the commit
//! message). Here a lookup is two read-modify-writes, on the handle's own slot.
//!
//! The tables are statics of this copy of the library: a handle of one copy (say the
//! static library) passed to another (the shared library) in the same process is a
//! foreign handle there.

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::Deref;
use std::ptr;
use std::sync::atomic::{fence, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::error::{invalid, Error, Result};

/// Bits of a handle value.
const PTR_BITS: u32 = usize::BITS;
/// The kind byte (a nibble on 32-bit targets), at the top.
const KIND_BITS: u32 = if PTR_BITS >= 64 { 8 } else { 4 };
/// The slot index, at the bottom.
const INDEX_BITS: u32 = if PTR_BITS >= 64 { 32 } else { 16 };
/// The generation, between them.
const GEN_BITS: u32 = PTR_BITS - KIND_BITS - INDEX_BITS;
const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;
const GEN_MASK: usize = (1 << GEN_BITS) - 1;
/// The last generation a slot gives out; after it the slot is retired.
const GEN_MAX: u32 = GEN_MASK as u32;
/// Slots a table may have (indices 0 .. MAX_SLOTS - 1).
const MAX_SLOTS: usize = INDEX_MASK + 1;

/// A slot's word: generation, LIVE, and the number of calls holding the value.
const GEN_SHIFT: u32 = 40;
const LIVE: u64 = 1 << 39;
const HOLDERS: u64 = LIVE - 1;

/// Chunk k of a table holds 2^(k + FIRST_CHUNK_BITS) slots, the slots from index
/// 2^(k + FIRST_CHUNK_BITS) - 2^FIRST_CHUNK_BITS on.
const FIRST_CHUNK_BITS: u32 = 5;
const CHUNKS: usize = (INDEX_BITS - FIRST_CHUNK_BITS + 1) as usize;

/// The kinds of handle, as the top byte of their values. The top bit is set in each (see
/// the module comment); on 32-bit targets the top nibble of the byte is used.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Context = 0xC1,
    Buffer = 0xB1,
    LifeGrid = 0xA1,
    Comm = 0xD1,
    Group = 0xE1,
}

impl Kind {
    const ALL: [Kind; 5] = [Kind::Context, Kind::Buffer, Kind::LifeGrid, Kind::Comm, Kind::Group];

    /// The field as stored in a handle value.
    const fn field(self) -> usize {
        if PTR_BITS >= 64 {
            self as usize
        } else {
            (self as usize) >> 4
        }
    }

    /// The C name of the handle type, for messages.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Kind::Context => "gpuprims_context",
            Kind::Buffer => "gpuprims_buffer",
            Kind::LifeGrid => "gpuprims_life_grid",
            Kind::Comm => "gpuprims_comm",
            Kind::Group => "gpuprims_group",
        }
    }
}

/// The value of the handle of `kind` in slot `index`, generation `generation`.
fn encode(kind: Kind, index: usize, generation: u32) -> usize {
    debug_assert!(index < MAX_SLOTS && (1..=GEN_MAX).contains(&generation));
    (kind.field() << (PTR_BITS - KIND_BITS)) | ((generation as usize) << INDEX_BITS) | index
}

/// Splits a handle value into its kind field, slot index and generation. Any value
/// decodes; the table decides whether it names anything.
fn decode(value: usize) -> (usize, usize, u32) {
    (value >> (PTR_BITS - KIND_BITS), value & INDEX_MASK, ((value >> INDEX_BITS) & GEN_MASK) as u32)
}

/// The chunk of slot `index` and its place there.
fn locate(index: usize) -> (usize, usize) {
    let i = index + (1 << FIRST_CHUNK_BITS);
    let top = usize::BITS - 1 - i.leading_zeros();
    ((top - FIRST_CHUNK_BITS) as usize, i - (1 << top))
}

fn chunk_len(chunk: usize) -> usize {
    1 << (chunk as u32 + FIRST_CHUNK_BITS)
}

fn generation_of(word: u64) -> u32 {
    (word >> GEN_SHIFT) as u32
}

// A cache line each, so that calls on neighbouring handles do not contend.
#[repr(align(64))]
struct Slot<T> {
    /// Generation, LIVE and holders (see the module comment).
    word: AtomicU64,
    /// Some from when the handle is made until the last holder after its destroy is
    /// gone. Written only by whoever owns the slot alone: `insert` (the slot is free),
    /// and `reclaim` (not LIVE, no holders); read through a `Held` only.
    value: UnsafeCell<Option<T>>,
}

/// Growth and reuse of a table's slots.
struct Alloc {
    /// Slots handed out so far (indices below it).
    len: usize,
    /// Slots whose value is gone, to reuse (last in, first out). Retired slots are not
    /// here.
    free: Vec<u32>,
}

/// What a lookup found in the table.
pub(crate) enum Found<'a, T> {
    Live(Held<'a, T>),
    /// The slot's handle of that generation existed and was destroyed.
    Destroyed,
    /// No handle with that index and generation was ever given out.
    Never,
}

/// One kind's table of values: a handle of that kind is a slot index and the generation
/// the slot had when the handle was made.
pub(crate) struct Registry<T> {
    /// Chunk k, or null while the table is smaller; set once, under `alloc`.
    chunks: [AtomicPtr<Slot<T>>; CHUNKS],
    alloc: Mutex<Alloc>,
    _values: PhantomData<Slot<T>>,
}

// SAFETY: values are reached from any thread through `Held` (so T: Sync) and dropped on
// whichever thread lets go of them last (so T: Send); every other access to a slot's
// value is exclusive, as the slot's word says (see `Slot::value`).
unsafe impl<T: Send + Sync> Sync for Registry<T> {}
unsafe impl<T: Send + Sync> Send for Registry<T> {}

impl<T> Registry<T> {
    pub(crate) const fn new() -> Registry<T> {
        Registry {
            chunks: [const { AtomicPtr::new(ptr::null_mut()) }; CHUNKS],
            alloc: Mutex::new(Alloc { len: 0, free: Vec::new() }),
            _values: PhantomData,
        }
    }

    // Nothing panics while this is held except allocation failure, which aborts; a
    // poisoned lock (a panic elsewhere in the thread's unwinding) still holds a
    // consistent state.
    fn lock(&self) -> MutexGuard<'_, Alloc> {
        self.alloc.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Slot `index`, if its chunk exists.
    fn slot(&self, index: usize) -> Option<&Slot<T>> {
        if index >= MAX_SLOTS {
            return None;
        }
        let (chunk, at) = locate(index);
        let base = self.chunks[chunk].load(Ordering::Acquire);
        // SAFETY: a chunk, once published, holds chunk_len(chunk) slots and lives as long
        // as the table; `at` is below that.
        (!base.is_null()).then(|| unsafe { &*base.add(at) })
    }

    /// Stores `value` and returns its slot and generation; None when every slot is taken.
    fn insert(&self, value: T) -> Option<(usize, u32)> {
        let mut alloc = self.lock();
        let index = match alloc.free.pop() {
            Some(i) => i as usize,
            None => {
                let i = alloc.len;
                if i >= MAX_SLOTS {
                    return None;
                }
                let (chunk, at) = locate(i);
                if at == 0 {
                    let slots: Box<[Slot<T>]> = (0..chunk_len(chunk))
                        .map(|_| Slot { word: AtomicU64::new(0), value: UnsafeCell::new(None) })
                        .collect();
                    self.chunks[chunk].store(Box::into_raw(slots) as *mut Slot<T>, Ordering::Release);
                }
                alloc.len = i + 1;
                i
            }
        };
        let slot = self.slot(index).expect("a slot below the table's length has its chunk");
        // The slot is free: not LIVE, no holders; no one else touches it.
        let word = slot.word.load(Ordering::Relaxed);
        debug_assert_eq!(word & (LIVE | HOLDERS), 0);
        let generation = generation_of(word) + 1;
        // SAFETY: a free slot's value is ours alone (see `Slot::value`); its last value was
        // taken by `reclaim`.
        unsafe { *slot.value.get() = Some(value) };
        // Publishes the value: a lookup that sees this word sees the value.
        slot.word.store(((generation as u64) << GEN_SHIFT) | LIVE, Ordering::Release);
        Some((index, generation))
    }

    /// The value of slot `index` when the slot is LIVE at generation `generation`, held
    /// until the `Held` is dropped.
    fn get(&self, index: usize, generation: u32) -> Found<'_, T> {
        let Some(slot) = self.slot(index) else { return Found::Never };
        let mut word = slot.word.load(Ordering::Relaxed);
        loop {
            let current = generation_of(word);
            if current != generation || word & LIVE == 0 {
                return if generation != 0 && generation <= current { Found::Destroyed } else { Found::Never };
            }
            debug_assert!(word & HOLDERS < HOLDERS);
            match slot.word.compare_exchange_weak(word, word + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return Found::Live(Held { registry: self, slot, index }),
                Err(now) => word = now,
            }
        }
    }

    /// Clears LIVE in slot `index` when it is LIVE at generation `generation`; drops the
    /// value now when no call holds it, else the last holder does.
    fn remove(&self, index: usize, generation: u32) {
        let Some(slot) = self.slot(index) else { return };
        let mut word = slot.word.load(Ordering::Relaxed);
        loop {
            if generation_of(word) != generation || word & LIVE == 0 {
                return;
            }
            // Acquire: when no one holds it, the holders' uses of the value come before
            // the drop in `reclaim`.
            match slot.word.compare_exchange_weak(word, word & !LIVE, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => {
                    if word & HOLDERS == 0 {
                        self.reclaim(slot, index, generation);
                    }
                    return;
                }
                Err(now) => word = now,
            }
        }
    }

    /// Counts a holder of slot `index` out; the last one after a destroy drops the value.
    fn release(&self, slot: &Slot<T>, index: usize) {
        let word = slot.word.fetch_sub(1, Ordering::Release);
        if word & LIVE == 0 && word & HOLDERS == 1 {
            fence(Ordering::Acquire);
            self.reclaim(slot, index, generation_of(word));
        }
    }

    /// Drops the value of a slot that is not LIVE and has no holders, and puts the slot
    /// up for reuse unless its generation is the last.
    fn reclaim(&self, slot: &Slot<T>, index: usize, generation: u32) {
        // SAFETY: not LIVE and no holders: no lookup can hold the slot now, and it is not
        // on the free list yet, so the value is ours alone.
        let value = unsafe { (*slot.value.get()).take() };
        if generation < GEN_MAX {
            self.lock().free.push(index as u32);
        }
        // After the lock is released: a value's drop (device memory, a whole context)
        // never holds up other threads, and cannot come back here while we hold it.
        drop(value);
    }
}

impl<T> Drop for Registry<T> {
    // The kinds' tables are statics, never dropped; this frees a table made in a test.
    fn drop(&mut self) {
        for (chunk, p) in self.chunks.iter_mut().enumerate() {
            let base = *p.get_mut();
            if !base.is_null() {
                // SAFETY: made in `insert` from a boxed slice of chunk_len(chunk) slots.
                drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(base, chunk_len(chunk))) });
            }
        }
    }
}

/// A call's hold on the value behind a handle: the value stays alive (even if another
/// thread destroys the handle meanwhile) until this is dropped.
pub(crate) struct Held<'a, T> {
    registry: &'a Registry<T>,
    slot: &'a Slot<T>,
    index: usize,
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: a holder is counted in the slot's word, so the value stays in place and
        // is not written until the holder is gone.
        unsafe { (*self.slot.value.get()).as_ref() }.expect("a held slot has its value")
    }
}

impl<T> Drop for Held<'_, T> {
    fn drop(&mut self) {
        self.registry.release(self.slot, self.index);
    }
}

/// A handle type of the C ABI and the Rust value its handles name.
pub(crate) trait Castable: Sized {
    type Inner: Send + Sync + 'static;
    const KIND: Kind;
    /// The table of this kind's values.
    fn registry() -> &'static Registry<Self::Inner>;
}

/// Registers `value` and hands out its handle. Fails (OUT_OF_MEMORY) only when 2^32 - 1
/// handles of this kind are alive at once.
pub(crate) fn into_handle<C: Castable>(value: C::Inner) -> Result<*mut C> {
    match C::registry().insert(value) {
        Some((index, generation)) => Ok(ptr::without_provenance_mut(encode(C::KIND, index, generation))),
        None => Err(Error::OutOfMemory(format!("too many live {} handles", C::KIND.name()))),
    }
}

/// The value behind a handle, held (alive) until the result is dropped; `arg` names the
/// argument in messages. NULL is NULL_ARGUMENT; a destroyed handle, a handle of another
/// kind and any other pointer are INVALID_ARGUMENT. The pointer is never dereferenced.
pub(crate) fn try_ref<C: Castable>(ptr: *const C, arg: &str) -> Result<Held<'static, C::Inner>> {
    if ptr.is_null() {
        return Err(Error::NullArgument(format!("{arg} is NULL")));
    }
    let want = C::KIND;
    let (kind, index, generation) = decode(ptr.addr());
    if kind != want.field() {
        return Err(match Kind::ALL.iter().find(|k| k.field() == kind) {
            Some(other) => invalid(format!("{arg} is a {} handle, not a {}", other.name(), want.name())),
            None => invalid(format!("{arg} is not a {} handle (a pointer gpuprims did not give out)", want.name())),
        });
    }
    match C::registry().get(index, generation) {
        Found::Live(held) => Ok(held),
        Found::Destroyed => Err(invalid(format!("{arg} is a {} that was already destroyed", want.name()))),
        Found::Never => Err(invalid(format!("{arg} is not a {} handle (a pointer gpuprims did not give out)", want.name()))),
    }
}

/// Releases a handle: its value goes now, or when the last call using it ends if another
/// thread is inside one. NULL, a destroyed handle and anything that is no live handle
/// of this kind are left alone.
pub(crate) fn destroy_handle<C: Castable>(ptr: *mut C) {
    let (kind, index, generation) = decode(ptr.addr());
    if !ptr.is_null() && kind == C::KIND.field() {
        C::registry().remove(index, generation);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    struct Probe;
    impl Castable for Probe {
        type Inner = String;
        const KIND: Kind = Kind::Buffer;
        fn registry() -> &'static Registry<String> {
            static R: Registry<String> = Registry::new();
            &R
        }
    }

    /// Counts its live instances.
    struct Counted(Arc<AtomicUsize>, u64);
    impl Counted {
        fn new(live: &Arc<AtomicUsize>, v: u64) -> Counted {
            live.fetch_add(1, Ordering::SeqCst);
            Counted(live.clone(), v)
        }
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn chunks_cover_the_indices() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(31), (0, 31));
        assert_eq!(locate(32), (1, 0));
        assert_eq!(locate(95), (1, 63));
        assert_eq!(locate(96), (2, 0));
        let (chunk, at) = locate(MAX_SLOTS - 1);
        assert!(chunk < CHUNKS && at < chunk_len(chunk));
        let r: Registry<u32> = Registry::new();
        for i in 0..1000u32 {
            assert_eq!(r.insert(i), Some((i as usize, 1)));
        }
        for i in 0..1000u32 {
            match r.get(i as usize, 1) {
                Found::Live(v) => assert_eq!(*v, i),
                _ => panic!("slot {i} lost"),
            }
        }
        assert!(matches!(r.get(1000, 1), Found::Never));
        assert!(matches!(r.get(MAX_SLOTS - 1, 1), Found::Never));
    }

    #[test]
    fn values_round_trip_and_are_never_addresses() {
        for kind in Kind::ALL {
            for (index, generation) in [(0, 1), (1, 1), (INDEX_MASK, GEN_MAX), (12345, 678)] {
                let v = encode(kind, index, generation);
                assert_ne!(v, 0);
                assert_eq!(decode(v), (kind.field(), index, generation));
                // The top bit is set: above every user-space address.
                assert!(v >> (PTR_BITS - 1) == 1);
            }
        }
    }

    #[test]
    fn stale_handles_never_name_a_reused_slot() {
        let a = into_handle::<Probe>("a".into()).unwrap();
        assert_eq!(*try_ref(a, "a").unwrap(), "a");
        destroy_handle(a);
        let b = into_handle::<Probe>("b".into()).unwrap();
        assert_ne!(a, b);
        let e = try_ref(a, "a").err().unwrap().to_string();
        assert!(e.contains("already destroyed"), "{e}");
        // Destroying the stale handle again leaves the slot's new value alone.
        destroy_handle(a);
        assert_eq!(*try_ref(b, "b").unwrap(), "b");
        destroy_handle(b);
        assert!(try_ref(b, "b").is_err());
    }

    #[test]
    fn foreign_values_are_rejected_by_decoding() {
        let local = 7u64;
        let values: [usize; 6] = [
            &local as *const u64 as usize,
            1,
            0xDEAD_BEEF_DEAD_BEEF,
            usize::MAX,
            encode(Kind::Context, 0, 1),
            // The right kind, a generation never given out.
            encode(Kind::Buffer, 0, GEN_MAX),
        ];
        for v in values {
            let p: *const Probe = ptr::without_provenance(v);
            let e = try_ref(p, "x").err().unwrap();
            assert_eq!(e.status(), crate::ffi::types::GPUPRIMS_STATUS_INVALID_ARGUMENT);
            assert!(e.to_string().starts_with("x is "));
            destroy_handle(p as *mut Probe);
        }
        let e = try_ref::<Probe>(ptr::null(), "x").err().unwrap();
        assert_eq!(e.status(), crate::ffi::types::GPUPRIMS_STATUS_NULL_ARGUMENT);
    }

    #[test]
    fn a_slot_at_the_last_generation_is_retired() {
        let r: Registry<u32> = Registry::new();
        assert_eq!(r.insert(1), Some((0, 1)));
        // As if the slot had been through GEN_MAX - 2 handles already.
        r.slot(0).unwrap().word.store(((GEN_MAX as u64 - 1) << GEN_SHIFT) | LIVE, Ordering::Relaxed);
        r.remove(0, 1);
        assert!(matches!(r.get(0, GEN_MAX - 1), Found::Live(_)));
        r.remove(0, GEN_MAX - 1);
        assert_eq!(r.insert(2), Some((0, GEN_MAX)));
        r.remove(0, GEN_MAX);
        // Not reused: the next value takes a new slot.
        assert_eq!(r.insert(3), Some((1, 1)));
        assert!(matches!(r.get(0, GEN_MAX), Found::Destroyed));
        assert!(matches!(r.get(0, 1), Found::Destroyed));
        assert!(matches!(r.get(0, 0), Found::Never));
        assert!(matches!(r.get(2, 1), Found::Never));
    }

    #[test]
    fn a_value_outlives_its_destroy_while_a_call_holds_it() {
        let live = Arc::new(AtomicUsize::new(0));
        let r: Registry<Counted> = Registry::new();
        let (i, g) = r.insert(Counted::new(&live, 5)).unwrap();
        let Found::Live(held) = r.get(i, g) else { panic!("not found") };
        let Found::Live(again) = r.get(i, g) else { panic!("not found") };
        r.remove(i, g);
        assert!(matches!(r.get(i, g), Found::Destroyed));
        r.remove(i, g); // a no-op
        assert_eq!(held.1, 5);
        drop(held);
        assert_eq!(live.load(Ordering::SeqCst), 1, "dropped while a call still held it");
        assert_eq!(again.1, 5);
        drop(again);
        assert_eq!(live.load(Ordering::SeqCst), 0, "not dropped when the last holder let go");
        // The slot is reused, at the next generation.
        assert_eq!(r.insert(Counted::new(&live, 6)), Some((i, g + 1)));
        drop(r);
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }

    /// Threads look values up while others destroy and create them: every value found is
    /// the one its handle was made for, and every value is dropped exactly once.
    #[test]
    fn lookups_race_destroys() {
        const THREADS: usize = 4;
        const ROUNDS: usize = if cfg!(miri) { 60 } else { 2000 };
        let live = Arc::new(AtomicUsize::new(0));
        let table: Registry<Counted> = Registry::new();
        let r = &table;
        std::thread::scope(|s| {
            for t in 0..THREADS {
                let live = live.clone();
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for k in 0..ROUNDS {
                        let tag = (t * ROUNDS + k) as u64;
                        let (i, g) = r.insert(Counted::new(&live, tag)).unwrap();
                        mine.push((i, g, tag));
                        // Look up everything nearby, our own and other threads' slots.
                        for j in i.saturating_sub(4)..i + 4 {
                            for gen in g.saturating_sub(1)..=g + 1 {
                                if let Found::Live(v) = r.get(j, gen) {
                                    assert!(v.0.load(Ordering::Relaxed) > 0);
                                }
                            }
                        }
                        if k % 3 != 0 {
                            let (i, g, tag) = mine.swap_remove((k * 7919) % mine.len());
                            match r.get(i, g) {
                                Found::Live(v) => assert_eq!(v.1, tag),
                                _ => panic!("a live handle was not found"),
                            }
                            r.remove(i, g);
                            assert!(matches!(r.get(i, g), Found::Destroyed));
                        }
                    }
                    for (i, g, _) in mine {
                        r.remove(i, g);
                    }
                });
            }
        });
        assert_eq!(live.load(Ordering::SeqCst), 0);
    }

    /// Every exported function that takes a handle is in ctests/test_handles.c, which
    /// passes it destroyed and foreign handles (under valgrind where CTest finds it).
    #[test]
    fn every_function_taking_a_handle_is_in_test_handles() {
        let root = env!("CARGO_MANIFEST_DIR");
        let header = std::fs::read_to_string(format!("{root}/include/gpuprims.h")).unwrap();
        let test = std::fs::read_to_string(format!("{root}/ctests/test_handles.c")).unwrap();
        let mut missing = Vec::new();
        let mut seen = 0;
        // A declaration starts at the beginning of a line (comment lines start with a
        // space or "/*") and runs to ");", possibly over several lines.
        let mut decl = String::new();
        for line in header.lines() {
            if decl.is_empty() && !(line.starts_with(|c: char| c.is_ascii_lowercase()) && line.contains('(')) {
                continue;
            }
            decl.push_str(line);
            if !line.contains(");") {
                continue;
            }
            let open = decl.find('(').unwrap();
            let name = decl[..open].split_whitespace().last().unwrap_or("").trim_start_matches('*').to_string();
            let params = decl[open..].to_string();
            decl.clear();
            if !name.starts_with("gpuprims_") || !Kind::ALL.iter().any(|k| params.contains(&format!("{} *", k.name()))) {
                continue;
            }
            seen += 1;
            if !test.contains(&format!("{name}(")) {
                missing.push(name);
            }
        }
        assert!(seen >= 30, "only {seen} functions with handles found in the header: the parse is off");
        assert!(missing.is_empty(), "not exercised by ctests/test_handles.c: {missing:?}");
    }
}
