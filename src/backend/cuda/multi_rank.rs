//! The CUDA backend's pieces of the multi-rank operations (kernels/multi_rank.cu):
//! small launches whose results the host plans with. Each call that returns counts
//! waits for them; its temporary memory is stream-ordered and freed after the wait.

use std::ops::Range;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUfunction, CUstream};

use super::context::CudaShared;
use super::driver::DriverContext;
use super::launch::{launch, Arg};
use super::loader::ModuleSpec;
use super::memory::{alloc_async, free_async, DeviceMemory};
use super::modules::Module;
use super::radix_sort::key_order;
use super::select::KEY_VARIANTS;
use super::sources::{self, Source};
use crate::backend::{probe_groups, BandCounts};
use crate::dtype::{DType, Order};
use crate::error::{internal, Result};

const BLOCK: u32 = 256;
/// multi_band's bytes of keys a block a step (256 threads, 64 bytes each).
const BAND_TILE_BYTES: usize = 256 * 64;
/// multi_digit_counts's bytes of keys a thread a step (CountRow: 4 vectors of 16).
const COUNT_ROW_BYTES: usize = 64;
/// multi_band's digit shift when no digit is counted (kernels/multi_rank.cu).
const NO_DIGIT: u32 = 64;

/// The module of `source` for keys of one width (float or not): the multi-rank
/// sources are instantiated by that alone, with `shape`'s build options (the block
/// shape a source's host code launches by; multi_merge.rs shares these helpers).
pub(super) fn keyed_module(source: Source, shape: fn() -> Vec<String>, key_bytes: usize, float_keys: bool) -> ModuleSpec {
    let mut options = vec![format!("-DGP_KEY_BYTES={key_bytes}"), format!("-DGP_KEY_FLOAT={}", float_keys as u32)];
    options.extend(shape());
    ModuleSpec { source, options }
}

fn keyed_variant(key_bytes: usize, float_keys: bool) -> u32 {
    (key_bytes as u32) << 1 | float_keys as u32
}

/// Every key width's module of `source`.
pub(super) fn keyed_modules(source: Source, shape: fn() -> Vec<String>) -> Vec<Module> {
    KEY_VARIANTS
        .into_iter()
        .map(|(k, f)| Module {
            source,
            variant: keyed_variant(k, f),
            spec: keyed_module(source, shape, k, f),
            label: format!("keys {k}B{}", if f { " float" } else { "" }),
        })
        .collect()
}

/// `kernel` of `source`'s module for keys of `dtype` (the context's lock held: see `function`).
pub(super) fn keyed_function(shared: &CudaShared, source: Source, shape: fn() -> Vec<String>, dtype: DType, kernel: &'static str)
    -> Result<CUfunction> {
    let (k, f) = (dtype.size(), dtype.is_float());
    shared.loader.function(source, keyed_variant(k, f), kernel, || keyed_module(source, shape, k, f))
}

/// The multi-rank kernels' block shape is written in the kernels themselves.
fn no_shape() -> Vec<String> {
    Vec::new()
}

pub fn modules() -> Vec<Module> {
    keyed_modules(sources::MULTI_RANK, no_shape)
}

/// Call with the context's lock held (`shared.lock()`): a first use loads the module,
/// which needs the context current, and a rank's thread may have had no call before.
fn function(shared: &CudaShared, dtype: DType, kernel: &'static str) -> Result<CUfunction> {
    keyed_function(shared, sources::MULTI_RANK, no_shape, dtype, kernel)
}

fn blocks(n: usize) -> u64 {
    n.div_ceil(BLOCK as usize).max(1) as u64
}

/// Device memory for one call, freed in stream order when dropped (after the wait).
struct Temp {
    ptr: CUdeviceptr,
    bytes: usize,
    stream: CUstream,
}

impl Temp {
    fn new(stream: CUstream, bytes: usize) -> Result<Temp> {
        // SAFETY: stream-ordered allocation, freed on the same stream.
        let ptr = unsafe { alloc_async(stream, bytes.max(8), "multi-rank counts") }?;
        Ok(Temp { ptr, bytes: bytes.max(8), stream })
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        // SAFETY: allocated on this stream; later work on it is ordered after its users.
        let _ = unsafe { free_async(self.ptr, self.bytes, self.stream) };
    }
}

/// `n` u64 counts read back from the device, waiting for them.
fn read_u64s(stream: CUstream, ptr: CUdeviceptr, n: usize) -> Result<Vec<u64>> {
    let mut bytes = vec![0u8; n * 8];
    // SAFETY: `ptr` holds `n` u64; we wait before reading the host copy.
    unsafe { drv::memcpy_dtoh_async(&mut bytes[..], ptr, stream) }.during("copying counts to the host")?;
    CudaShared::wait(stream)?;
    Ok(bytes.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect())
}

pub fn count_before(shared: &CudaShared, keys: &DeviceMemory, dtype: DType, (len, within): (usize, &[Range<u64>]),
                    order: Order, probes: &[u64]) -> Result<Vec<u64>> {
    let per_group = probe_groups(len, within, probes.len())?;
    if len * dtype.size() > keys.bytes {
        return Err(internal("count_before: fewer keys than len"));
    }
    let state = shared.lock()?;
    let f = function(shared, dtype, "multi_count_before")?;
    let n = probes.len();
    // The probes, the groups' ranges (start, end), then the counts.
    let temp = Temp::new(state.stream, 8 * (2 * n + 2 * within.len()))?;
    let bounds = within.iter().flat_map(|w| [w.start, w.end]);
    let bytes: Vec<u8> = probes.iter().copied().chain(bounds).flat_map(|p| p.to_le_bytes()).collect();
    let ranges = temp.ptr + 8 * n as u64;
    let counts = ranges + 16 * within.len() as u64;
    // SAFETY: probes and ranges are copied before the kernel reads them (stream order),
    // the ranges lie in the `len` keys (checked above); the arguments match
    // multi_count_before(keys, key_order, probes, nprobes, within, per_group, counts).
    unsafe {
        drv::memcpy_htod_async(temp.ptr, &bytes[..], state.stream).during("copying probes to the device")?;
        let args = [Arg::ptr(keys.ptr), Arg::u32(key_order(dtype, order)), Arg::ptr(temp.ptr), Arg::size(n), Arg::ptr(ranges),
                    Arg::size(per_group), Arg::ptr(counts)];
        launch(f, blocks(n), BLOCK, state.stream, &args)?;
    }
    read_u64s(state.stream, counts, n)
}

pub fn sample(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, count: usize) -> Result<Vec<u8>> {
    let state = shared.lock()?;
    let f = function(shared, dtype, "multi_sample")?;
    let w = dtype.size();
    let temp = Temp::new(state.stream, count * w)?;
    let mut out = vec![0u8; count * w];
    // SAFETY: arguments match multi_sample(keys, len, count, out); `out` holds count keys.
    unsafe {
        launch(f, blocks(count), BLOCK, state.stream, &[Arg::ptr(input.ptr), Arg::size(len), Arg::size(count), Arg::ptr(temp.ptr)])?;
        drv::memcpy_dtoh_async(&mut out[..], temp.ptr, state.stream).during("copying the sample to the host")?;
    }
    CudaShared::wait(state.stream)?;
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
pub fn band(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, bracket: (u64, u64), digit_shift: Option<u32>,
            out: &DeviceMemory, cap: usize) -> Result<BandCounts> {
    // A band asked for no digit count places its keys by warp where it can (4-byte keys:
    // multi::select asks for none for large shards of them, and where lo == hi).
    if digit_shift.is_none() && dtype.size() == 4 {
        return band_by_warps(shared, input, dtype, len, bracket, out, cap);
    }
    // (The kernel compares keys in their own width: the bracket's rank keys fit it,
    // multi/select.rs asserts.) Counters: below, inside, then the digit's 256.
    const COUNTERS: usize = 2 + 256;
    debug_assert!(digit_shift.is_none_or(|s| s + 8 <= 8 * dtype.size() as u32), "digit at {digit_shift:?} of {dtype:?} keys");
    let launch = BandLaunch { kernel: "multi_band", input, dtype, len, bracket, counters: COUNTERS };
    // Arguments after the bracket: digit_shift, out, cap (`out` holds `cap` keys).
    let c = launch.run(shared, if digit_shift.is_some() { COUNTERS } else { 2 }, |_| {
        vec![Arg::u32(digit_shift.unwrap_or(NO_DIGIT)), Arg::ptr(out.ptr), Arg::size(cap)]
    })?;
    Ok(BandCounts { below: c[0], inside: c[1], digits: c[2..].to_vec(), holes: 0 })
}

/// The band by warp: each warp reserves `chunk` slots at a time, the largest power of
/// two up to 256 that keeps the slots the warps leave unused within an eighth of `cap`.
fn band_by_warps(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, bracket: (u64, u64), out: &DeviceMemory,
                 cap: usize) -> Result<BandCounts> {
    const COUNTERS: usize = 3; // below, slots, holes
    let launch = BandLaunch { kernel: "multi_band_warps", input, dtype, len, bracket, counters: COUNTERS };
    // Arguments after the bracket: out, cap, chunk (`out` holds `cap` keys).
    let c = launch.run(shared, COUNTERS, |warps| {
        let chunk = 1u32 << (cap / (8 * warps)).clamp(1, 256).ilog2();
        vec![Arg::ptr(out.ptr), Arg::size(cap), Arg::u32(chunk)]
    })?;
    Ok(BandCounts { below: c[0], inside: c[1] - c[2], digits: Vec::new(), holes: c[2] })
}

/// One launch of a band kernel: arguments (keys, len, key_order, lo, hi, then the
/// kernel's own, then its `counters`, zeroed first).
struct BandLaunch<'a> {
    kernel: &'static str,
    input: &'a DeviceMemory,
    dtype: DType,
    len: usize,
    bracket: (u64, u64),
    counters: usize,
}

impl BandLaunch<'_> {
    /// Launches with the arguments `own(warps in the grid)` gives and returns the first
    /// `read` counters. One wave of blocks, each a run of whole tiles: a second,
    /// partial wave would double the time of the blocks in it.
    fn run(&self, shared: &CudaShared, read: usize, own: impl FnOnce(usize) -> Vec<Arg>) -> Result<Vec<u64>> {
        let state = shared.lock()?;
        let f = function(shared, self.dtype, self.kernel)?;
        let temp = Temp::new(state.stream, self.counters * 8)?;
        let resident = shared.resident_blocks(f, BLOCK)?;
        let grid = (self.len.div_ceil(BAND_TILE_BYTES / self.dtype.size()).max(1) as u64).min(resident);
        let mut args = vec![
            Arg::ptr(self.input.ptr),
            Arg::size(self.len),
            Arg::u32(key_order(self.dtype, Order::Ascending)),
            Arg::u64(self.bracket.0),
            Arg::u64(self.bracket.1),
        ];
        args.extend(own(grid as usize * (BLOCK / 32) as usize));
        args.push(Arg::ptr(temp.ptr));
        // SAFETY: the counters are zeroed first; the arguments match the kernel's
        // (keys, len, key_order, lo, hi, its own as the caller gives them, counts).
        unsafe {
            drv::memset_d8_async(temp.ptr, 0, self.counters * 8, state.stream).during("cuMemsetD8Async")?;
            launch(f, grid, BLOCK, state.stream, &args)?;
        }
        read_u64s(state.stream, temp.ptr, read)
    }
}

pub fn digit_counts(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, prefix: u64, shift: u32)
    -> Result<Vec<u64>> {
    let state = shared.lock()?;
    let f = function(shared, dtype, "multi_digit_counts")?;
    let temp = Temp::new(state.stream, 256 * 8)?;
    // A thread counts a row of COUNT_ROW_BYTES a step; one wave of blocks striding
    // over the rows (a second, partial wave would leave SMs idle at the end).
    let resident = shared.resident_blocks(f, BLOCK)?;
    let grid = blocks(len.div_ceil(COUNT_ROW_BYTES / dtype.size())).min(resident);
    // SAFETY: the counts are zeroed first; arguments match multi_digit_counts(keys,
    // len, key_order, prefix, shift, counts), a 256-thread block.
    unsafe {
        drv::memset_d8_async(temp.ptr, 0, 256 * 8, state.stream).during("cuMemsetD8Async")?;
        let args = [Arg::ptr(input.ptr), Arg::size(len), Arg::u32(key_order(dtype, Order::Ascending)), Arg::u64(prefix), Arg::u32(shift), Arg::ptr(temp.ptr)];
        launch(f, grid, BLOCK, state.stream, &args)?;
    }
    read_u64s(state.stream, temp.ptr, 256)
}

pub fn add_u64(shared: &CudaShared, mem: &DeviceMemory, len: usize, value: u64) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let state = shared.lock()?;
    let f = function(shared, DType::U64, "multi_add_u64")?;
    // SAFETY: arguments match multi_add_u64(x, len, value); `mem` holds len u64.
    unsafe { launch(f, blocks(len), BLOCK, state.stream, &[Arg::ptr(mem.ptr), Arg::size(len), Arg::u64(value)]) }
}

pub fn gather_u64(shared: &CudaShared, src: &DeviceMemory, positions: &DeviceMemory, len: usize, dst: &DeviceMemory) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let state = shared.lock()?;
    let f = function(shared, DType::U64, "multi_gather_u64")?;
    // SAFETY: arguments match multi_gather_u64(src, positions, len, dst); the
    // positions come from a top-k over `src`'s elements, so they lie inside it.
    unsafe { launch(f, blocks(len), BLOCK, state.stream, &[Arg::ptr(src.ptr), Arg::ptr(positions.ptr), Arg::size(len), Arg::ptr(dst.ptr)]) }
}
