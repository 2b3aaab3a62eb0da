//! Keys alone of 1 or 2 bytes, sorted by counting (kernels/counting_sort.cu): one
//! read of the keys for their values' counts and the order check, one block for the
//! runs' starts, one write of the runs. Against the radix sort's passes (1-byte keys:
//! a read, a read and a write, a copy back; 2-byte: a read and two reads and writes)
//! this moves the keys twice, and an already-sorted input only once. Radix_sort::sort
//! sends these keys here; as there, the host issues the same launches every time and
//! never waits.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUfunction};

use super::context::{round_up, CudaShared, State};
use super::driver::DriverContext;
use super::launch::{launch, launch_with_shared, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::modules::Module;
use super::radix_sort::key_order;
use super::sources;
use super::tuning::knob;
use crate::dtype::{DType, Order};
use crate::error::Result;

/// The key widths sorted by counting.
const KEY_WIDTHS: [usize; 2] = [1, 2];

/// Whether `len` keys of `key_dtype` without values are sorted here: integer keys
/// only, since equal float keys need not be equal patterns (NaNs with payloads keep
/// their input order in the radix sort; runs of counted values would not). 2-byte keys
/// come here from 2^23 keys on: below, their 65,536 counters cost more than the radix
/// sort's two passes (H100: about 0.1 ms at 2^20 and at 2^24 alike, against the
/// passes' 0.05 ms at 2^20 and 0.25 ms at 2^24). The knob `radix.counting=0` turns
/// counting off, so tests can still reach the radix sort's passes for these keys.
pub fn serves(key_dtype: DType, has_values: bool, len: usize) -> bool {
    if key_dtype.is_float() {
        return false;
    }
    let from = match key_dtype.size() {
        1 => 0,
        2 => knob("radix.counting_from2", 1 << 23) as usize,
        _ => return false,
    };
    !has_values && len >= from && knob("radix.counting", 1) != 0
}

/// Threads of a histogram block: 2-byte keys run one block an SM (its counters fill
/// half the shared memory), so it is a large one.
fn hist_block(key_bytes: usize) -> u32 {
    knob(&format!("counting.hist_block{key_bytes}"), if key_bytes == 1 { 256 } else { 1024 })
}

/// Keys a warp of the fill writes at a time (kernels: REGION = SUB * 32 lanes * RUN).
const FILL_REGION: u64 = 4 * 32 * 32;

fn fill_block() -> u32 {
    knob("counting.fill_block", 256)
}

/// Values of a key of `key_bytes`, and the slices a 2-byte histogram splits them into
/// (kernels: VALUES, SLICES).
fn values_and_slices(key_bytes: usize) -> (usize, u64) {
    (1 << (8 * key_bytes), if key_bytes == 2 { 2 } else { 1 })
}

/// Bytes of the Control block (kernels: sizeof(Control)), and of its zeroed head.
fn control_bytes(key_bytes: usize) -> (usize, usize) {
    let (values, _) = values_and_slices(key_bytes);
    (16 * (values + 1), 8 * (values + 1))
}

pub fn module(key_bytes: usize) -> ModuleSpec {
    ModuleSpec {
        source: sources::COUNTING_SORT,
        options: vec![
            format!("-DGP_KEY_BYTES={key_bytes}"),
            format!("-DGP_HIST_BLOCK_THREADS={}", hist_block(key_bytes)),
            format!("-DGP_FILL_BLOCK_THREADS={}", fill_block()),
            format!("-DGP_CONTROL_BYTES={}", control_bytes(key_bytes).0),
        ],
    }
}

/// Every module of the counting sort, for gpuprims_context_precompile (modules.rs).
pub fn modules() -> Vec<Module> {
    KEY_WIDTHS
        .into_iter()
        .map(|k| Module { source: sources::COUNTING_SORT, variant: k as u32, spec: module(k), label: format!("keys {k}B") })
        .collect()
}

/// The sort's kernels (histogram, plan, fill) and its control block in scratch memory:
/// everything it needs before its first write. The state lock must be held.
fn acquire(shared: &CudaShared, state: &mut State, key_bytes: usize) -> Result<([CUfunction; 3], CUdeviceptr)> {
    let load = |kernel| shared.loader.function(sources::COUNTING_SORT, key_bytes as u32, kernel, || module(key_bytes));
    let kernels = [load("counting_histogram")?, load("counting_plan")?, load("counting_fill")?];
    let control = state.scratch.ensure(state.stream, round_up(control_bytes(key_bytes).0))?;
    Ok((kernels, control))
}

/// Acquires, ahead of a call's first write, what a later sort of `key_bytes` keys will
/// need (the top-k sorts what it gathered). The state lock must be held.
pub fn reserve(shared: &CudaShared, state: &mut State, key_bytes: usize) -> Result<()> {
    acquire(shared, state, key_bytes).map(|_| ())
}

pub fn sort(shared: &CudaShared, keys: &DeviceMemory, key_dtype: DType, len: usize, order: Order) -> Result<()> {
    let key_bytes = key_dtype.size();
    let (values, slices) = values_and_slices(key_bytes);
    let (hist_block, fill_block) = (hist_block(key_bytes), fill_block());

    let mut state = shared.lock()?;
    let stream = state.stream;
    let ([histogram, plan, fill], control) = acquire(shared, &mut state, key_bytes)?;
    let zeroed = control_bytes(key_bytes).1;
    // SAFETY: the zeroed head lies inside the scratch memory.
    unsafe { drv::memset_d8_async(control, 0, zeroed, stream) }.during("cuMemsetD8Async (counting control)")?;

    let sms = shared.props.sm_count as u64;
    // Shares of the keys: as many as fit resident (2-byte keys, whose slice of the
    // counters takes 128 KiB of dynamic shared memory: one block an SM, per slice), but
    // at least 16 Ki keys each, so a short input does not pay for many blocks' counters.
    let hist_shared = if slices > 1 { (values / slices as usize * 4) as u32 } else { 0 };
    let per_sm = shared.loader.blocks_per_sm_with_shared(histogram, hist_block, hist_shared)? as u64;
    let shares = (len as u64).div_ceil(16 << 10).clamp(1, per_sm * sms / slices);
    // The fill's warps each write a region of FILL_REGION keys (grid-strided).
    let regions = (len as u64).div_ceil(FILL_REGION);
    let fill_grid = regions.div_ceil(fill_block as u64 / 32).clamp(1, shared.loader.blocks_per_sm(fill, fill_block)? as u64 * sms);
    let order_bits = key_order(key_dtype, order);
    // SAFETY (every launch below): the arguments match the kernel's parameters in
    // kernels/counting_sort.cu; keys hold `len` elements, the scratch memory the
    // control block; the histogram's dynamic shared memory was allowed above.
    unsafe {
        launch_with_shared(
            histogram,
            shares * slices,
            hist_block,
            hist_shared,
            stream,
            &[Arg::ptr(keys.ptr), Arg::size(len), Arg::u32(order_bits), Arg::ptr(control)],
        )?;
        launch(plan, 1, values.min(1024) as u32, stream, &[Arg::size(len), Arg::ptr(control)])?;
        launch(fill, fill_grid, fill_block, stream, &[Arg::ptr(keys.ptr), Arg::size(len), Arg::u32(order_bits), Arg::ptr(control)])
    }
}
