//! Keys alone of 1 or 2 bytes (integers, and the 16-bit floats), sorted by counting
//! (kernels/counting_sort.cu): one
//! read of the keys for their values' counts and the order check, one block for the
//! runs' starts, one write of the runs. Against the radix sort's passes (1-byte keys:
//! a read, a read and a write, a copy back; 2-byte: a read and two reads and writes)
//! this moves the keys twice, and an already-sorted input only once. Radix_sort::sort
//! sends these keys here; as there, the host issues the same launches every time and
//! never waits.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUfunction};

use super::compact_lookback;
use super::context::{round_up, CudaShared, Needs, State};
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

/// The (key width, float keys) sorted by counting.
const KEY_VARIANTS: [(usize, bool); 3] = [(1, false), (2, false), (2, true)];

/// Whether `len` keys of `key_dtype` without values are sorted here. 2-byte keys
/// come here from 2^23 keys on: below, their 65,536 counters cost more than the radix
/// sort's two passes (H100: about 0.1 ms at 2^20 and at 2^24 alike, against the
/// passes' 0.05 ms at 2^20 and 0.25 ms at 2^24). Float keys (f16, bf16) below 2^32,
/// the most NaNs the gather's saturating counts keep exact. The knob
/// `radix.counting=0` turns counting off, so tests can still reach the radix sort's
/// passes for these keys.
pub fn serves(key_dtype: DType, has_values: bool, len: usize) -> bool {
    let from = match key_dtype.size() {
        1 => 0,
        2 => knob("radix.counting_from2", 1 << 23) as usize,
        _ => return false,
    };
    let float_ok = !key_dtype.is_float() || (len as u64) < 1 << 32;
    !has_values && len >= from && float_ok && knob("radix.counting", 1) != 0
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
    (16 * (values + 1) + 8, 8 * (values + 2))
}

/// The NaN gather of float keys (kernels: counting_nans): threads, keys a thread, and
/// tiles per look-back anchor.
const NAN_BLOCK: u32 = 256;
const NAN_ITEMS: u32 = 32;
const NAN_WINDOW: u32 = 64;
/// The NaN gather's tiles over `len` keys.
fn nan_tiles(len: usize) -> usize {
    len.div_ceil((NAN_BLOCK * NAN_ITEMS) as usize)
}

pub fn module(key_bytes: usize, float_keys: bool) -> ModuleSpec {
    ModuleSpec {
        source: sources::COUNTING_SORT,
        options: vec![
            format!("-DGP_KEY_BYTES={key_bytes}"),
            format!("-DGP_KEY_FLOAT={}", float_keys as u32),
            format!("-DGP_HIST_BLOCK_THREADS={}", hist_block(key_bytes)),
            format!("-DGP_FILL_BLOCK_THREADS={}", fill_block()),
            format!("-DGP_NAN_BLOCK_THREADS={NAN_BLOCK}"),
            format!("-DGP_NAN_ITEMS={NAN_ITEMS}"),
            format!("-DGP_LOOKBACK_WINDOW={NAN_WINDOW}"),
            format!("-DGP_CONTROL_BYTES={}", control_bytes(key_bytes).0),
        ],
    }
}

/// The loader's key of the module for (key width, float keys).
fn variant(key_bytes: usize, float_keys: bool) -> u32 {
    key_bytes as u32 * 2 + float_keys as u32
}

/// Every module of the counting sort, for gpuprims_context_precompile (modules.rs).
pub fn modules() -> Vec<Module> {
    KEY_VARIANTS
        .into_iter()
        .map(|(k, f)| Module {
            source: sources::COUNTING_SORT,
            variant: variant(k, f),
            spec: module(k, f),
            label: format!("keys {k}B{}", if f { " float" } else { "" }),
        })
        .collect()
}

/// What one sort runs on: its kernels (histogram, plan, fill, and for float keys the
/// NaN gather), the control block and (float keys) the NaNs' side array in scratch
/// memory.
struct Acquired {
    kernels: [CUfunction; 3],
    nans: Option<CUfunction>,
    control: CUdeviceptr,
    nan_keys: CUdeviceptr,
}

/// Everything the sort of `len` keys of `key_dtype` needs before its first write. The
/// state lock must be held.
fn acquire(shared: &CudaShared, state: &mut State, key_dtype: DType, len: usize) -> Result<Acquired> {
    let (key_bytes, float_keys) = (key_dtype.size(), key_dtype.is_float());
    let load = |kernel| shared.loader.function(sources::COUNTING_SORT, variant(key_bytes, float_keys), kernel, || module(key_bytes, float_keys));
    let kernels = [load("counting_histogram")?, load("counting_plan")?, load("counting_fill")?];
    let nans = if float_keys { Some(load("counting_nans")?) } else { None };
    state.reserve(needs(key_dtype, len))?;
    let control = state.scratch.ptr;
    let nan_keys = if float_keys { control + round_up(control_bytes(key_bytes).0) as u64 } else { 0 };
    Ok(Acquired { kernels, nans, control, nan_keys })
}

/// What a sort of `len` keys of `key_dtype` takes: the control block and (float keys)
/// the NaNs' side array in scratch memory, and the NaN gather's look-back.
fn needs(key_dtype: DType, len: usize) -> Needs {
    let key_bytes = key_dtype.size();
    let control_room = round_up(control_bytes(key_bytes).0);
    if !key_dtype.is_float() {
        return Needs::scratch(control_room);
    }
    Needs::scratch(control_room + round_up(len * key_bytes)).then(Needs::runs(compact_lookback::words(nan_tiles(len), NAN_WINDOW), 1))
}

/// Acquires, ahead of a call's first write, what a later sort of `len` keys of
/// `key_dtype` will need (the top-k sorts what it gathered). The state lock must be held.
pub fn reserve(shared: &CudaShared, state: &mut State, key_dtype: DType, len: usize) -> Result<()> {
    acquire(shared, state, key_dtype, len).map(|_| ())
}

/// As radix_sort::prepare: loads the module and says what the sort takes, for the
/// caller to acquire (State::reserve). The state lock must be held.
pub fn prepare(shared: &CudaShared, key_dtype: DType, len: usize) -> Result<Needs> {
    let (key_bytes, float_keys) = (key_dtype.size(), key_dtype.is_float());
    shared.loader.load(sources::COUNTING_SORT, variant(key_bytes, float_keys), || module(key_bytes, float_keys))?;
    Ok(needs(key_dtype, len))
}

pub fn sort(shared: &CudaShared, keys: &DeviceMemory, key_dtype: DType, len: usize, order: Order) -> Result<()> {
    let key_bytes = key_dtype.size();
    let (values, slices) = values_and_slices(key_bytes);
    let (hist_block, fill_block) = (hist_block(key_bytes), fill_block());

    let mut state = shared.lock()?;
    let stream = state.stream;
    let Acquired { kernels: [histogram, plan, fill], nans, control, nan_keys } = acquire(shared, &mut state, key_dtype, len)?;
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
    let fill_grid = regions.div_ceil(fill_block as u64 / 32).clamp(1, shared.resident_blocks(fill, fill_block)?);
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
        if let Some(gather) = nans {
            gather_nans(shared, &mut state, gather, keys, len, order_bits, control, nan_keys)?;
        }
        launch(
            fill,
            fill_grid,
            fill_block,
            stream,
            &[Arg::ptr(keys.ptr), Arg::size(len), Arg::u32(order_bits), Arg::ptr(control), Arg::ptr(nan_keys)],
        )
    }
}

/// Float keys: copies their NaNs in input order to `nan_keys` (the kernel returns at
/// once when there are none, or the keys are in order).
///
/// # Safety
/// `gather` is the module's counting_nans; `control` and `nan_keys` are the scratch
/// regions `acquire` made for these keys, whose look-back room it reserved.
#[allow(clippy::too_many_arguments)]
unsafe fn gather_nans(
    shared: &CudaShared,
    state: &mut State,
    gather: CUfunction,
    keys: &DeviceMemory,
    len: usize,
    order_bits: u32,
    control: CUdeviceptr,
    nan_keys: CUdeviceptr,
) -> Result<()> {
    let tiles = nan_tiles(len);
    let grid = (tiles as u64).clamp(1, shared.resident_blocks(gather, NAN_BLOCK)?);
    let lookback = compact_lookback::begin(state, tiles, NAN_WINDOW)?;
    launch(
        gather,
        grid,
        NAN_BLOCK,
        state.stream,
        &[
            Arg::ptr(keys.ptr),
            Arg::size(len),
            Arg::u32(order_bits),
            Arg::ptr(control),
            Arg::ptr(nan_keys),
            Arg::ptr(lookback.aggregate),
            Arg::ptr(lookback.inclusive),
            Arg::u32(lookback.epoch),
        ],
    )
}
