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
//! - The kind byte (0xC1 context, 0xB1 buffer, 0xA1 Life grid) has its top bit set, so
//!   the value is never NULL, never a user-space address (those are below 2^47, or 2^56
//!   with 5-level paging, on x86-64 and AArch64) and never a handle of another kind: a
//!   buffer passed for a context is told apart by its value alone.
//! - The slot index says where in that kind's table (a [`Registry`]) the value lives.
//! - The generation says which of the values that slot has held over time this handle
//!   names. Destroying a handle empties its slot; the next handle put in that slot gets
//!   the next generation, so a stale handle never names the slot's new occupant. A slot
//!   whose generation reached the largest one is retired rather than reused (one slot,
//!   a few bytes, per 2^24 - 1 handles created in it), so no handle value is ever issued
//!   twice in a process.
//!
//! (On 32-bit targets the same fields are 4, 12 and 16 bits wide.)
//!
//! # Looking a handle up
//!
//! Every call decodes its handles (kind, then the table: index in range, generation
//! equal, slot occupied) and gets back an owned `Arc` of the value, cloned while a read
//! lock of the table is held; the lock is released before the call does its work. So:
//!
//! - a destroyed or foreign handle is recognised from its value and the table, without
//!   touching any memory it might point at;
//! - another thread destroying the handle during the call (the caller's race, as with
//!   memory) only empties the slot: the value lives until the call drops its `Arc`, so
//!   it is never freed under a running call (a buffer's memory is then freed when that
//!   call returns, not at the destroy);
//! - destroy takes the value out of its slot under the write lock and drops it after
//!   the lock is released, so releasing device memory or a whole CUDA context never
//!   holds up other threads' lookups, and whatever a drop does cannot re-enter the lock.
//!
//! A call holds the read lock only for the lookup (an index, a compare, an atomic
//! increment), never while it works or while it looks up another handle, so a writer
//! waiting on the lock cannot deadlock against a reader. Uncontended, a lookup costs two
//! atomic read-modify-writes for the lock and two for the `Arc` (the clone and the drop
//! when the call ends).
//!
//! Why a table per kind behind one lock rather than something lock-free: the read lock
//! is shared, so threads only contend on its counter's cache line, and the cost is a few
//! nanoseconds on calls that take microseconds; a lock-free table would need hazard
//! pointers or per-slot reference counts to make "look up, then keep alive" atomic.
//!
//! The tables are statics of this copy of the library: a handle of one copy (say the
//! static library) passed to another (the shared library) in the same process is a
//! foreign handle there.

use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

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

/// The kinds of handle, as the top byte of their values. The top bit is set in each (see
/// the module comment); on 32-bit targets the top nibble of the byte is used.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Context = 0xC1,
    Buffer = 0xB1,
    LifeGrid = 0xA1,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Context, Kind::Buffer, Kind::LifeGrid];

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
        }
    }
}

/// The value of the handle of `kind` in slot `index`, generation `generation`.
fn encode(kind: Kind, index: usize, generation: u32) -> usize {
    debug_assert!(index < MAX_SLOTS && generation >= 1 && generation <= GEN_MAX);
    (kind.field() << (PTR_BITS - KIND_BITS)) | ((generation as usize) << INDEX_BITS) | index
}

/// Splits a handle value into its kind field, slot index and generation. Any value
/// decodes; the table decides whether it names anything.
fn decode(value: usize) -> (usize, usize, u32) {
    (value >> (PTR_BITS - KIND_BITS), value & INDEX_MASK, ((value >> INDEX_BITS) & GEN_MASK) as u32)
}

struct Slot<T> {
    /// The generation of the handle that holds the slot, or that last held it when
    /// `value` is None.
    generation: u32,
    value: Option<Arc<T>>,
}

struct Table<T> {
    slots: Vec<Slot<T>>,
    /// Empty slots that may be reused (last in, first out). Retired slots are not here.
    free: Vec<u32>,
}

/// What a lookup found in the table.
enum Found<T> {
    Live(Arc<T>),
    /// The slot's handle of that generation existed and was destroyed.
    Destroyed,
    /// No handle with that index and generation was ever given out.
    Never,
}

/// One kind's table of live values: a handle of that kind is an index into it and the
/// generation the slot had when the handle was made.
pub(crate) struct Registry<T> {
    table: RwLock<Table<T>>,
}

impl<T> Registry<T> {
    pub(crate) const fn new() -> Registry<T> {
        Registry { table: RwLock::new(Table { slots: Vec::new(), free: Vec::new() }) }
    }

    // Nothing panics while a guard is held except allocation failure, which aborts; a
    // poisoned lock (a panic elsewhere in the thread's unwinding) still holds a
    // consistent table.
    fn read(&self) -> RwLockReadGuard<'_, Table<T>> {
        self.table.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Table<T>> {
        self.table.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stores `value` and returns its slot and generation; None when every slot is taken.
    fn insert(&self, value: Arc<T>) -> Option<(usize, u32)> {
        let mut t = self.write();
        if let Some(index) = t.free.pop() {
            let slot = &mut t.slots[index as usize];
            // Only slots below GEN_MAX are put on the free list.
            slot.generation += 1;
            slot.value = Some(value);
            return Some((index as usize, slot.generation));
        }
        let index = t.slots.len();
        if index >= MAX_SLOTS {
            return None;
        }
        t.slots.push(Slot { generation: 1, value: Some(value) });
        Some((index, 1))
    }

    /// The value in slot `index` when it holds generation `generation`.
    fn get(&self, index: usize, generation: u32) -> Found<T> {
        let t = self.read();
        match t.slots.get(index) {
            Some(slot) if slot.generation == generation => match &slot.value {
                Some(v) => Found::Live(Arc::clone(v)),
                None => Found::Destroyed,
            },
            Some(slot) if generation != 0 && generation < slot.generation => Found::Destroyed,
            _ => Found::Never,
        }
    }

    /// Empties slot `index` when it holds generation `generation`, returning the value
    /// for the caller to drop (after the lock is released).
    fn remove(&self, index: usize, generation: u32) -> Option<Arc<T>> {
        let mut t = self.write();
        let slot = t.slots.get_mut(index)?;
        if slot.generation != generation {
            return None;
        }
        let value = slot.value.take()?;
        if slot.generation < GEN_MAX {
            t.free.push(index as u32);
        }
        Some(value)
    }
}

/// A handle type of the C ABI and the Rust value its handles name.
pub(crate) trait Castable: Sized {
    type Inner: Send + Sync + 'static;
    const KIND: Kind;
    /// The table of this kind's live values.
    fn registry() -> &'static Registry<Self::Inner>;
}

/// Registers `value` and hands out its handle. Fails (OUT_OF_MEMORY) only when 2^32 - 1
/// handles of this kind are alive at once.
pub(crate) fn into_handle<C: Castable>(value: Arc<C::Inner>) -> Result<*mut C> {
    match C::registry().insert(value) {
        Some((index, generation)) => Ok(std::ptr::without_provenance_mut(encode(C::KIND, index, generation))),
        None => Err(Error::OutOfMemory(format!("too many live {} handles", C::KIND.name()))),
    }
}

/// The value behind a handle, kept alive for as long as the caller holds it; `arg`
/// names the argument in messages. NULL is NULL_ARGUMENT; a destroyed handle, a handle
/// of another kind and any other pointer are INVALID_ARGUMENT. The pointer is never
/// dereferenced.
pub(crate) fn try_ref<C: Castable>(ptr: *const C, arg: &str) -> Result<Arc<C::Inner>> {
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
        Found::Live(v) => Ok(v),
        Found::Destroyed => Err(invalid(format!("{arg} is a {} that was already destroyed", want.name()))),
        Found::Never => Err(invalid(format!("{arg} is not a {} handle (a pointer gpuprims did not give out)", want.name()))),
    }
}

/// Releases a handle: its value goes when the last call using it ends (at once, unless
/// another thread is using it right now). NULL, a destroyed handle and anything that
/// is no live handle of this kind are left alone.
pub(crate) fn destroy_handle<C: Castable>(ptr: *mut C) {
    let (kind, index, generation) = decode(ptr.addr());
    if ptr.is_null() || kind != C::KIND.field() {
        return;
    }
    let value = C::registry().remove(index, generation);
    // Dropped here, after remove released the lock.
    drop(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Probe;
    impl Castable for Probe {
        type Inner = String;
        const KIND: Kind = Kind::Buffer;
        fn registry() -> &'static Registry<String> {
            static R: Registry<String> = Registry::new();
            &R
        }
    }

    fn message(e: Error) -> String {
        e.to_string()
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
        let a = into_handle::<Probe>(Arc::new("a".into())).unwrap();
        assert_eq!(*try_ref(a, "a").unwrap(), "a");
        destroy_handle(a);
        let b = into_handle::<Probe>(Arc::new("b".into())).unwrap();
        assert_ne!(a, b);
        let e = message(try_ref(a, "a").unwrap_err());
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
            let p: *const Probe = std::ptr::without_provenance(v);
            let e = try_ref(p, "x").unwrap_err();
            assert_eq!(e.status(), crate::ffi::types::GPUPRIMS_STATUS_INVALID_ARGUMENT);
            assert!(message(e).starts_with("x is "));
            destroy_handle(p as *mut Probe);
        }
        assert_eq!(try_ref::<Probe>(std::ptr::null(), "x").unwrap_err().status(), crate::ffi::types::GPUPRIMS_STATUS_NULL_ARGUMENT);
    }

    #[test]
    fn a_slot_at_the_last_generation_is_retired() {
        let r: Registry<u32> = Registry::new();
        let (i, g) = r.insert(Arc::new(1)).unwrap();
        assert_eq!((i, g), (0, 1));
        r.write().slots[0].generation = GEN_MAX - 1;
        assert!(r.remove(0, 1).is_none());
        assert_eq!(*r.remove(0, GEN_MAX - 1).unwrap(), 1);
        assert_eq!(r.insert(Arc::new(2)).unwrap(), (0, GEN_MAX));
        assert_eq!(*r.remove(0, GEN_MAX).unwrap(), 2);
        // Not reused: the next value takes a new slot.
        assert_eq!(r.insert(Arc::new(3)).unwrap(), (1, 1));
        assert!(matches!(r.get(0, GEN_MAX), Found::Destroyed));
        assert!(matches!(r.get(0, 1), Found::Destroyed));
        assert!(matches!(r.get(0, 0), Found::Never));
        assert!(matches!(r.get(2, 1), Found::Never));
    }

    #[test]
    fn a_value_outlives_its_destroy_while_a_call_holds_it() {
        let a = into_handle::<Probe>(Arc::new("held".into())).unwrap();
        let held = try_ref(a, "a").unwrap();
        destroy_handle(a);
        assert!(try_ref(a, "a").is_err());
        assert_eq!(*held, "held");
        assert_eq!(Arc::strong_count(&held), 1);
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
