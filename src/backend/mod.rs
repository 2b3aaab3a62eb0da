//! The Backend trait every primitive goes through, and the backend-neutral pieces a
//! context and a buffer are made of. The FFI layer checks arguments, then calls here.

pub mod cuda;
pub mod host;

use std::ffi::c_void;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::dtype::{DType, Op, Order, ScanMode};
use crate::error::{internal, invalid, Error, Result};
use crate::life::{Geometry, LifeEngine};
use crate::multi::Link;

/// Which backend a context runs on (ABI values of `gpuprims_backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    Auto = 0,
    Cuda = 1,
    Host = 2,
}

/// Storage of a buffer: host memory or device memory, owned or borrowed.
pub enum Memory {
    Host(host::HostMemory),
    Device(cuda::DeviceMemory),
}

impl Memory {
    pub fn as_host(&self) -> Result<&host::HostMemory> {
        match self {
            Memory::Host(m) => Ok(m),
            Memory::Device(_) => Err(internal("device memory given to the host backend")),
        }
    }
    /// Whether two buffers share bytes (two handles wrapping the same memory, say).
    pub fn overlaps(&self, other: &Memory) -> bool {
        match (self, other) {
            (Memory::Host(a), Memory::Host(b)) => a.overlaps(b),
            (Memory::Device(a), Memory::Device(b)) => {
                a.bytes > 0 && b.bytes > 0 && a.ptr < b.ptr + b.bytes as u64 && b.ptr < a.ptr + a.bytes as u64
            }
            _ => false,
        }
    }
    pub fn len_bytes(&self) -> usize {
        match self {
            Memory::Host(h) => h.len_bytes(),
            Memory::Device(d) => d.bytes,
        }
    }
    /// The first `bytes` of this memory, borrowed: the view never frees it, and must not
    /// outlive it.
    pub fn view(&self, bytes: usize) -> Memory {
        self.view_at(0, bytes)
    }
    /// `bytes` of this memory from byte `offset`, borrowed as by `view`.
    pub fn view_at(&self, offset: usize, bytes: usize) -> Memory {
        match self {
            Memory::Host(h) => Memory::Host(host::HostMemory::borrowed(h.ptr().wrapping_add(offset), bytes)),
            Memory::Device(d) => Memory::Device(cuda::DeviceMemory { ptr: d.ptr + offset as u64, bytes, owner: None }),
        }
    }
    pub fn as_device(&self) -> Result<&cuda::DeviceMemory> {
        match self {
            Memory::Device(m) => Ok(m),
            Memory::Host(_) => Err(internal("host memory given to the CUDA backend")),
        }
    }
}

/// What a band pass (Backend::band) counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BandCounts {
    /// Elements below the band.
    pub below: u64,
    /// Elements inside it (all of them, also past the capacity copied).
    pub inside: u64,
    /// The 256 counts of the asked digit among the elements inside; empty when none was asked.
    pub digits: Vec<u64>,
    /// Slots of the kept memory, among the first `inside + holes`, that hold hi's key and
    /// no element: the CUDA band placing its keys by warp leaves them (0 otherwise).
    pub holes: u64,
}

/// What a backend does. Arguments arrive checked: matching contexts, dtypes, lengths,
/// ranges inside the buffers. Offsets and lengths here are in bytes unless named `len`.
pub trait Backend: Send + Sync {
    fn kind(&self) -> BackendKind;
    fn device_name(&self) -> String;
    fn allocate(&self, bytes: usize) -> Result<Memory>;
    /// Borrowed device memory; never freed by gpuprims.
    fn wrap_device(&self, ptr: *mut c_void, bytes: usize) -> Result<Memory>;
    /// Borrowed host memory, used in place (host backend only); never freed by gpuprims.
    fn wrap_host(&self, ptr: *mut c_void, bytes: usize) -> Result<Memory>;
    fn device_ptr(&self, mem: &Memory) -> Result<*mut c_void>;
    /// Later work goes to the caller's stream; NULL restores the context's own.
    fn set_stream(&self, stream: *mut c_void) -> Result<()>;
    fn synchronize(&self) -> Result<()>;
    /// Compiles and loads every kernel the backend has (nothing on the host).
    fn precompile(&self) -> Result<()>;
    fn write(&self, mem: &Memory, offset: usize, src: &[u8]) -> Result<()>;
    fn read(&self, mem: &Memory, offset: usize, dst: &mut [u8]) -> Result<()>;
    fn copy(&self, dst: &Memory, src: &Memory, bytes: usize) -> Result<()>;
    /// Reduces `len` elements of `input` and writes one element to `out`
    /// (`out.len() == dtype.size()`); `len` > 0 unless `op` is SUM.
    fn reduce(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &mut [u8]) -> Result<()>;
    /// Like `reduce`, but `out` gets the total in the accumulator type
    /// (`dtype.accumulator()`, f32 for the 16-bit floats), not rounded to dtype: a
    /// multi-rank reduce's partial, so the ranks' partials are combined before the one
    /// rounding, as on one context.
    fn reduce_accumulator(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &mut [u8]) -> Result<()>;
    /// Like `reduce`, but the result goes to element 0 of `out` (same dtype), in
    /// stream order, without waiting.
    fn reduce_to(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &Memory) -> Result<()>;
    /// Scans `len` elements; `output` may be the same memory as `input`. `seed`, when
    /// given, holds the bits of an accumulator value combined in front of every element
    /// (a multi-rank scan's carry from the ranks before it).
    #[allow(clippy::too_many_arguments)]
    fn scan(
        &self,
        input: &Memory,
        output: &Memory,
        dtype: DType,
        len: usize,
        op: Op,
        mode: ScanMode,
        seed: Option<u64>,
    ) -> Result<()>;
    /// Sorts `len` (> 1) keys in place, stably, in the library's total order; the
    /// values (another buffer of the same length) travel with their keys.
    fn radix_sort(&self, keys: &Memory, key_dtype: DType, values: Option<SortValues>, len: usize, order: Order)
        -> Result<()>;
    /// Like `radix_sort`, but the sorted keys (and values) go to `out`'s buffers, of at
    /// least `len` elements apart from the input's; the input's are left in no
    /// particular state (the sort may use them as scratch).
    fn radix_sort_into(&self, keys: &Memory, key_dtype: DType, values: Option<SortValues>, len: usize, order: Order,
                       out: SortInto) -> Result<()> {
        radix_sort_then_copy(self, keys, key_dtype, values, len, order, out)
    }
    /// Sorts `len` (> 1) keys in place, not necessarily stably, in the same total
    /// order (the same key sequence as `radix_sort`), values travelling with their keys.
    fn quicksort(&self, keys: &Memory, key_dtype: DType, values: Option<SortValues>, len: usize, order: Order)
        -> Result<()>;
    /// The element of rank `k` (< `len`) in ascending order, into host memory (waits)
    /// or element 0 of a device buffer (stream order, no wait).
    fn select_kth(&self, input: &Memory, dtype: DType, len: usize, k: usize, out: SelectOut) -> Result<()>;
    /// The `k` (1 ..= `len`) first elements in `order`, ties by lower index first, into
    /// `out_values` (input's dtype) and, when given, their indices (U64).
    #[allow(clippy::too_many_arguments)]
    fn topk(
        &self,
        input: &Memory,
        dtype: DType,
        len: usize,
        k: usize,
        order: Order,
        out_values: &Memory,
        out_indices: Option<&Memory>,
    ) -> Result<()>;
    /// For each row of `rows`, its element of the wanted rank (ascending) into `out`
    /// (`rows.nrows` elements of `dtype`). The rows arrive unchecked: a bad row fails
    /// the call with `RowFault::error` of the first one, before `out` is touched.
    fn segmented_select(&self, values: &Memory, dtype: DType, len: usize, rows: &Rows, out: &Memory) -> Result<()>;
    /// The `k` best of every row of `rows` in `order`, each row's sorted (ties by lower
    /// index), into `out` (gpuprims_segmented_topk's contract). Ragged rows arrive
    /// unchecked: a bad row fails the call with `TopkRowFault::error` of the first one,
    /// and per-row ks that do not add up to `out.len` with `ks_total_mismatch`, before
    /// `out` is touched.
    #[allow(clippy::too_many_arguments)]
    fn segmented_topk(&self, values: &Memory, dtype: DType, len: usize, rows: &TopkRows, ks: &TopkKs, order: Order, out: &TopkOut)
        -> Result<()>;
    /// A Life grid of dead cells on this backend (src/life).
    fn life_engine(&self, geometry: Geometry) -> Result<Box<dyn LifeEngine>>;

    // Pieces of the multi-rank operations (src/multi). Rank keys are the element's
    // bits mapped to its width's unsigned order (multi::keys::rank_key).

    /// A fresh communicator id (NCCL's unique id on CUDA), `multi::ID_BYTES` long.
    fn new_comm_id(&self) -> Result<Vec<u8>>;
    /// This rank's link to the others of communicator `id`; returns once all have joined.
    fn link(&self, id: &[u8], rank: usize, nranks: usize) -> Result<Box<dyn Link>>;
    /// For keys sorted in `order`, how many have a rank key (in `order`) below each
    /// probe. The probes come in `within.len()` groups of equal size; the caller knows
    /// group g's answers lie in `within[g]` (ends included, at most `len`), and only the
    /// elements there are searched. Waits.
    fn count_before(&self, keys: &Memory, dtype: DType, len: usize, order: Order, probes: &[u64], within: &[Range<u64>])
        -> Result<Vec<u64>>;
    /// Elements `i * len / count` for i < count (`len` > 0), as host bytes. Waits.
    fn sample(&self, input: &Memory, dtype: DType, len: usize, count: usize) -> Result<Vec<u8>>;
    /// One pass over the elements by ascending rank key: how many lie below `lo` and how
    /// many in [lo, hi], the first `cap` of the latter copied to `out` in any order, and
    /// where `digit_shift` is given, the counts of that 8-bit digit among the latter (a
    /// first digit round in the same pass). Waits.
    #[allow(clippy::too_many_arguments)]
    fn band(&self, input: &Memory, dtype: DType, len: usize, lo: u64, hi: u64, digit_shift: Option<u32>, out: &Memory,
            cap: usize) -> Result<BandCounts>;
    /// Counts of the 8-bit digit at `shift` of the ascending rank keys that agree with
    /// `prefix` on every bit above the digit (256 counts). Waits.
    fn digit_counts(&self, input: &Memory, dtype: DType, len: usize, prefix: u64, shift: u32) -> Result<Vec<u64>>;
    /// The sorted runs of `runs` (keys in `order`) merged into one
    /// sorted run at `out`, stably (an earlier run's key first among equals), values
    /// along into `out_values`. The runs' memory may be overwritten. In stream order.
    fn merge_runs(&self, runs: RunsIn, dtype: DType, order: Order, out: &Memory, out_values: Option<&Memory>) -> Result<()>;
    /// Adds `value` to `len` U64 elements, in stream order.
    fn add_u64(&self, mem: &Memory, len: usize, value: u64) -> Result<()>;
    /// dst[i] = src[positions[i]] for `len` U64 elements, in stream order.
    fn gather_u64(&self, src: &Memory, positions: &Memory, len: usize, dst: &Memory) -> Result<()>;
}

/// Sorted runs in order, apart or not: their keys, their values (and the values'
/// dtype), and each run's (start, length) in elements, the same for keys and values.
#[derive(Clone, Copy)]
pub struct RunsIn<'a> {
    pub keys: &'a Memory,
    pub values: Option<(&'a Memory, DType)>,
    pub runs: &'a [(usize, usize)],
}

/// Where a selected element goes.
pub enum SelectOut<'a> {
    Host(&'a mut [u8]),
    Device(&'a Memory),
}

/// The rows of a segmented select: `nrows` + 1 offsets (U32 or U64) and, when given,
/// one rank a row (U32 or U64); without ranks, each row's lower median.
pub struct Rows<'a> {
    pub offsets: &'a Memory,
    pub offsets_dtype: DType,
    pub nrows: usize,
    pub ranks: Option<(&'a Memory, DType)>,
}

/// What is wrong with a row of a segmented select, in the order rows are checked
/// (the codes of kernels/segmented_select.cu).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFault {
    Decreasing = 1,
    PastEnd = 2,
    Empty = 3,
    RankPastRow = 4,
}

impl RowFault {
    /// The fault of a row [begin, end) of a buffer of `len` with the wanted rank
    /// (`rank` is only asked for once the row is known to be non-empty).
    pub fn of(begin: u64, end: u64, len: usize, rank: impl FnOnce(u64) -> u64) -> Option<RowFault> {
        if end < begin {
            Some(RowFault::Decreasing)
        } else if end > len as u64 {
            Some(RowFault::PastEnd)
        } else if end == begin {
            Some(RowFault::Empty)
        } else if rank(end - begin) >= end - begin {
            Some(RowFault::RankPastRow)
        } else {
            None
        }
    }

    pub fn from_code(code: u32) -> Option<RowFault> {
        [RowFault::Decreasing, RowFault::PastEnd, RowFault::Empty, RowFault::RankPastRow].into_iter().find(|f| *f as u32 == code)
    }

    /// The INVALID_ARGUMENT both backends report for the first bad row.
    pub fn error(self, row: u64, begin: u64, end: u64, rank: u64, len: usize) -> Error {
        let next = row + 1;
        invalid(match self {
            RowFault::Decreasing => format!("row {row}: offsets decrease (offsets[{next}] = {end} < offsets[{row}] = {begin})"),
            RowFault::PastEnd => {
                format!("row {row}: ends past the end of values (offsets[{next}] = {end}, values has {len} elements)")
            }
            RowFault::Empty => format!("row {row}: empty (offsets[{row}] = offsets[{next}] = {begin}); a row needs an element"),
            RowFault::RankPastRow => {
                format!("row {row}: rank ks[{row}] = {rank} is past the row's {} elements", end - begin)
            }
        })
    }
}

/// The rows of a segmented top-k.
pub enum TopkRows<'a> {
    /// `nrows` rows of `row_len` (> 0) elements one after another from element 0.
    Uniform { nrows: usize, row_len: usize },
    /// Row r is values[offsets[r] .. offsets[r + 1]): `nrows` + 1 U32 or U64 offsets.
    Ragged { offsets: &'a Memory, offsets_dtype: DType, nrows: usize },
}

impl TopkRows<'_> {
    pub fn nrows(&self) -> usize {
        match *self {
            TopkRows::Uniform { nrows, .. } | TopkRows::Ragged { nrows, .. } => nrows,
        }
    }
}

/// How many elements each row of a segmented top-k gives.
pub enum TopkKs<'a> {
    /// The same k for every row: row r's results at out[r * k ..].
    Each(usize),
    /// ks[r] for row r (`nrows` U32 or U64 entries): its results start at the sum of
    /// the ks before it.
    PerRow { ks: &'a Memory, dtype: DType },
}

/// Where a segmented top-k goes: `len` values of the input's dtype, and as many U64
/// indices within the row when asked for.
pub struct TopkOut<'a> {
    pub values: &'a Memory,
    pub indices: Option<&'a Memory>,
    pub len: usize,
}

/// The slots a row shorter than its k leaves over: zero bits for the value and this
/// index (-1 as an int64).
pub const TOPK_NO_INDEX: u64 = u64::MAX;

/// What is wrong with a row of a segmented top-k (empty rows are allowed there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopkRowFault {
    Decreasing = 1,
    PastEnd = 2,
}

impl TopkRowFault {
    pub fn of(begin: u64, end: u64, len: usize) -> Option<TopkRowFault> {
        if end < begin {
            Some(TopkRowFault::Decreasing)
        } else if end > len as u64 {
            Some(TopkRowFault::PastEnd)
        } else {
            None
        }
    }

    pub fn from_code(code: u32) -> Option<TopkRowFault> {
        [TopkRowFault::Decreasing, TopkRowFault::PastEnd].into_iter().find(|f| *f as u32 == code)
    }

    /// The INVALID_ARGUMENT both backends report for the first bad row.
    pub fn error(self, row: u64, begin: u64, end: u64, len: usize) -> Error {
        let fault = match self {
            TopkRowFault::Decreasing => RowFault::Decreasing,
            TopkRowFault::PastEnd => RowFault::PastEnd,
        };
        fault.error(row, begin, end, 0, len)
    }
}

/// How many probes each of `count_before`'s groups `within` holds, after checking
/// that the groups are of one size and lie in the `len` elements.
pub(crate) fn probe_groups(len: usize, within: &[Range<u64>], nprobes: usize) -> Result<usize> {
    if within.is_empty() || !nprobes.is_multiple_of(within.len()) {
        return Err(internal(format!("count_before: {nprobes} probes in {} groups", within.len())));
    }
    if let Some(w) = within.iter().find(|w| w.start > w.end || w.end > len as u64) {
        return Err(internal(format!("count_before: group {w:?} outside {len} elements")));
    }
    Ok(nprobes / within.len())
}

/// The SIZE_MISMATCH both backends report when per-row ks do not add up to the
/// output's length (`total` None: their sum is past 2^64).
pub fn ks_total_mismatch(out_len: usize, total: Option<u64>) -> Error {
    match total {
        Some(t) => Error::SizeMismatch(format!("out_values has {out_len} elements, the ks add up to {t}")),
        None => Error::SizeMismatch(format!("out_values has {out_len} elements, the ks add up to more than 2^64")),
    }
}

/// Where `radix_sort_into` writes: the sorted keys, and the values where there are any.
#[derive(Clone, Copy)]
pub struct SortInto<'a> {
    pub keys: &'a Memory,
    pub values: Option<&'a Memory>,
}

/// `radix_sort_into` by a sort in place and a copy: what a backend does where its sort
/// cannot write elsewhere.
pub(crate) fn radix_sort_then_copy<B: Backend + ?Sized>(backend: &B, keys: &Memory, key_dtype: DType, values: Option<SortValues>,
                                                       len: usize, order: Order, out: SortInto) -> Result<()> {
    let value_bytes = values.as_ref().map(|v| (v.memory, v.dtype.size()));
    backend.radix_sort(keys, key_dtype, values, len, order)?;
    backend.copy(out.keys, keys, len * key_dtype.size())?;
    if let (Some((from, w)), Some(to)) = (value_bytes, out.values) {
        backend.copy(to, from, len * w)?;
    }
    Ok(())
}

/// The values that travel with sorted keys.
#[derive(Clone, Copy)]
pub struct SortValues<'a> {
    pub memory: &'a Memory,
    pub dtype: DType,
}

impl<'a> SortValues<'a> {
    /// The values' device memory and dtype, for the CUDA backend.
    pub fn as_device(&self) -> Result<(&'a cuda::DeviceMemory, DType)> {
        Ok((self.memory.as_device()?, self.dtype))
    }
    /// The values' host memory and dtype, for the host backend.
    pub fn as_host(&self) -> Result<(&'a host::HostMemory, DType)> {
        Ok((self.memory.as_host()?, self.dtype))
    }
}

/// What a `gpuprims_context` owns and what its buffers keep alive.
pub struct ContextShared {
    /// Distinguishes contexts, so buffers of another context are caught.
    pub id: u64,
    pub backend: Box<dyn Backend>,
}

impl ContextShared {
    pub fn new(backend: Box<dyn Backend>) -> Arc<ContextShared> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Arc::new(ContextShared { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), backend })
    }
}

/// A typed array in one context's memory.
pub struct Buffer {
    pub context: Arc<ContextShared>,
    pub dtype: DType,
    pub len: usize,
    pub memory: Memory,
}

impl Buffer {
    pub fn bytes(&self) -> usize {
        self.len * self.dtype.size()
    }
}

/// What GPUPRIMS_BACKEND asks AUTO to open: nothing (unset or empty), CUDA or the host.
/// Any other value is an error naming it, so a typo is not silently ignored.
fn backend_from_env() -> Result<Option<BackendKind>> {
    let Some(raw) = std::env::var_os("GPUPRIMS_BACKEND") else {
        return Ok(None);
    };
    let value = raw.to_string_lossy();
    match value.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "cuda" => Ok(Some(BackendKind::Cuda)),
        "host" => Ok(Some(BackendKind::Host)),
        _ => Err(invalid(format!(
            "the environment variable GPUPRIMS_BACKEND={value:?} is not a backend: use cuda or host, or unset it"
        ))),
    }
}

/// Opens a backend. AUTO picks CUDA when a driver and device are usable, else the host,
/// whose device name then carries the reason; the environment variable
/// GPUPRIMS_BACKEND=cuda|host overrides AUTO, and any other value of it fails AUTO.
pub fn open(kind: BackendKind, device: i32) -> Result<Arc<ContextShared>> {
    let (kind, from_env) = match kind {
        BackendKind::Auto => match backend_from_env()? {
            Some(k) => (k, true),
            None => (BackendKind::Auto, false),
        },
        k => (k, false),
    };
    let backend: Box<dyn Backend> = match kind {
        BackendKind::Host if from_env => Box::new(host::HostBackend::chosen_because("GPUPRIMS_BACKEND=host")),
        BackendKind::Host => Box::new(host::HostBackend::new()),
        BackendKind::Cuda => Box::new(cuda::CudaBackend::open(device)?),
        BackendKind::Auto => match cuda::CudaBackend::open(device) {
            Ok(b) => Box::new(b),
            Err(e) => Box::new(host::HostBackend::chosen_because(&format!("CUDA unavailable: {e}"))),
        },
    };
    Ok(ContextShared::new(backend))
}
