//! Planning and launching selection: the k-th element (kernels/select.cu) and top-k
//! (the same, then kernels/topk.cu).
//! The host picks the sample ranks that bracket k and the scratch the band may fill;
//! the device decides everything that depends on the data, so the launches are the
//! same on every input and nothing waits except the k-th element's final read.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUfunction};

use super::compact_lookback;
use super::context::{round_up, CudaShared, Needs, State, HOST_TAG_MAX};
use super::driver::DriverContext;
use super::launch::{launch, launch_cooperative, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::modules::Module;
use super::precompile;
use super::radix_sort;
use super::sources::{self, Source};
use super::tuning::knob;
use crate::dtype::{DType, Order};
use crate::error::{unsupported, Result};

/// Keys the pivot kernels sample (kernels/select.cu: select_pivots, select_pivots_small):
/// the small sample up to SMALL_SAMPLE_LEN keys, where the band's digit passes are
/// cheap and the sample's cost is not.
const SAMPLES: usize = 16384;
const SAMPLES_SMALL: usize = 4096;
const SMALL_SAMPLE_LEN: usize = 1 << 25;
const SAMPLE_BLOCK: u32 = 1024;
/// Bytes reserved for the kernels' SelectState (kernels/select_state.cuh checks it).
const STATE_BYTES: usize = 20480;
const RADIX_BITS: usize = 8;
/// Flags of the selection kernels (passed to them as GP_LO_OPEN and so on:
/// kernels/select_state.cuh): the band's, then where the k-th element goes; a result
/// for the host carries its tag from bit HOST_TAG_SHIFT.
const LO_OPEN: u32 = 1;
const HI_OPEN: u32 = 2;
const NO_BAND: u32 = 4;
const WRITE_RESULT: u32 = 8;
const RESULT_TO_HOST: u32 = 16;
const HOST_TAG_SHIFT: u32 = 8;
const _: () = assert!(HOST_TAG_MAX <= u32::MAX >> HOST_TAG_SHIFT);
/// Top-k up to block * SMALL_ITEMS is sorted by one block (kernels/topk.cu:
/// select_sort_small), and so is all of top-k of an input that small; more by the
/// radix sort.
const SMALL_ITEMS: usize = 8;
/// Below this many keys the sample costs more than it saves.
const MIN_BAND_LEN: usize = 1 << 16;

/// Tuning of the ordered passes (band, gather) and the digit passes.
struct Policy {
    block: u32,
    /// Bytes each thread stages per tile (whole 16-byte vectors).
    thread_bytes: u32,
    window: u32,
    /// Rounds of UNROLL (4) vectors each thread of a digit pass reads over the
    /// candidates (the grid is sized from it): fewer rounds, more blocks.
    digit_rounds: u32,
    /// Every digit in one cooperative launch (select_digits) instead of a launch a
    /// digit (select_digit_pass): u32 2^24 0.0943 -> 0.0857 ms on the H100
    /// (BENCHMARKS.md, 2026-11-23), so on by default.
    fused_digits: bool,
    /// Shared memory a select_digits block keeps matching keys in (static: at most
    /// 40 KiB, with the rest of its shared memory under the 48 KiB limit).
    keep_bytes: u32,
    /// select_digits blocks an SM its registers must allow.
    digits_min_blocks: u32,
    /// The band issues the next tile's loads before it reserves and copies this
    /// tile's picks: 1-2% slower on the H100 (2026-11-23), so off by default.
    band_prefetch: bool,
    /// select_kth of up to small_block * small_keys keys: one block, one launch
    /// (select_small).
    small_block: u32,
    small_keys: u32,
}

fn policy() -> Policy {
    // 64 bytes a thread: as fast as 128 on the H100 (0.61 vs 0.62 ms, f32 2^28) and the
    // modules compile in two thirds of the time.
    Policy {
        block: knob("select.block", 256),
        thread_bytes: knob("select.thread_bytes", 64), window: knob("select.window", 64),
        digit_rounds: knob("select.digit_rounds", 4),
        fused_digits: knob("select.fused_digits", 1) != 0,
        keep_bytes: knob("select.keep_bytes", 32768).clamp(1024, 40960),
        digits_min_blocks: knob("select.digits_min_blocks", 4),
        band_prefetch: knob("select.band_prefetch", 0) != 0,
        // Whole warps, up to 1,024 threads.
        small_block: knob("select.small_block", 1024).clamp(32, 1024) / 32 * 32,
        small_keys: knob("select.small_keys", 8).clamp(1, 32),
    }
}

impl Policy {
    fn items(&self, key_bytes: usize) -> u32 {
        // 1-byte keys: 64 a thread keep the register count below 128.
        (self.thread_bytes / key_bytes as u32).min(64)
    }

    /// Keys a tile of the ordered passes (band, gather) holds.
    fn tile(&self, key_bytes: usize) -> usize {
        (self.block * self.items(key_bytes)) as usize
    }
}

/// The module of `source` (kernels/select.cu or kernels/topk.cu) for keys of
/// `key_bytes`, floats or integers: both take the same options.
pub fn module(source: Source, key_bytes: usize, float_keys: bool) -> ModuleSpec {
    let p = policy();
    ModuleSpec {
        source,
        options: vec![
            format!("-DGP_KEY_BYTES={key_bytes}"),
            format!("-DGP_KEY_FLOAT={}", float_keys as u32),
            format!("-DGP_BLOCK_THREADS={}", p.block),
            format!("-DGP_ITEMS={}", p.items(key_bytes)),
            format!("-DGP_LOOKBACK_WINDOW={}", p.window),
            format!("-DGP_KEEP_BYTES={}", p.keep_bytes),
            format!("-DGP_DIGITS_MIN_BLOCKS={}", p.digits_min_blocks),
            format!("-DGP_BAND_PREFETCH={}", p.band_prefetch as u32),
            format!("-DGP_SMALL_BLOCK={}", p.small_block),
            format!("-DGP_SMALL_KEYS={}", p.small_keys),
            format!("-DGP_LO_OPEN={LO_OPEN}"),
            format!("-DGP_HI_OPEN={HI_OPEN}"),
            format!("-DGP_NO_BAND={NO_BAND}"),
            format!("-DGP_WRITE_RESULT={WRITE_RESULT}"),
            format!("-DGP_RESULT_TO_HOST={RESULT_TO_HOST}"),
            format!("-DGP_HOST_TAG_SHIFT={HOST_TAG_SHIFT}"),
        ],
    }
}

/// Both sources for every (key width, float keys) the library instantiates.
/// Every (key width, float keys) the selections are instantiated for: floats of 2
/// (F16, BF16), 4 and 8 bytes.
pub(super) const KEY_VARIANTS: [(usize, bool); 7] = [(1, false), (2, false), (2, true), (4, false), (4, true), (8, false), (8, true)];

pub fn modules() -> Vec<Module> {
    [sources::SELECT, sources::TOPK]
        .into_iter()
        .flat_map(|source| {
            KEY_VARIANTS.into_iter().map(move |(k, f)| Module {
                source,
                variant: variant(k, f),
                spec: module(source, k, f),
                label: format!("keys {k}B{}", if f { " float" } else { "" }),
            })
        })
        .collect()
}

/// The loader's key of the module for (key width, float keys).
pub(super) fn variant(key_bytes: usize, float_keys: bool) -> u32 {
    (key_bytes * 16) as u32 | (float_keys as u32) << 8
}

/// Where the band lies: sample ranks around the wanted rank, with room for the
/// sampling error (3.5 standard deviations of the sample rank each way, plus a few),
/// and the candidates scratch must hold to cover it comfortably.
struct Band {
    flags: u32,
    samples: usize,
    rank_lo: u32,
    rank_hi: u32,
    capacity: usize,
}

fn plan_band(len: usize, rank: usize, key_bytes: usize, lower_open: bool) -> Band {
    let none = Band { flags: NO_BAND, samples: 0, rank_lo: 0, rank_hi: 0, capacity: 0 };
    // One-byte keys: a single digit pass over the input is the whole search.
    if key_bytes == 1 || len < MIN_BAND_LEN {
        return none;
    }
    let samples = if len <= SMALL_SAMPLE_LEN { SAMPLES_SMALL } else { SAMPLES };
    let s = samples as f64;
    let p = rank as f64 / len as f64;
    let centre = p * s;
    // The knob narrows the band in tests, to make the sample miss and the fallbacks run.
    let sigmas = knob("select.spread_tenths", 35) as f64 / 10.0;
    let spread = sigmas * (s * p * (1.0 - p)).sqrt() + 4.0;
    let lo = (centre - spread).floor();
    let hi = (centre + spread).ceil();
    let mut flags = 0;
    if lower_open || lo < 0.0 {
        flags |= LO_OPEN;
    }
    if hi > s - 1.0 {
        flags |= HI_OPEN;
    }
    let from = if flags & LO_OPEN != 0 { 0.0 } else { lo };
    let to = if flags & HI_OPEN != 0 { s } else { hi };
    // The fraction of the input between two sample ranks w apart is a Beta variate of
    // mean about w / S and deviation about sqrt(w) / S: room for 6 deviations.
    let width = to - from;
    let capacity = (len as f64 * (width + 6.0 * width.sqrt() + 2.0) / s) as usize + 4096;
    // A band this wide would copy much of the input: search the input instead.
    if capacity > len / 2 || capacity > u32::MAX as usize / 2 {
        return none;
    }
    Band { flags, samples, rank_lo: lo.clamp(0.0, s - 1.0) as u32, rank_hi: hi.clamp(0.0, s - 1.0) as u32, capacity }
}

/// The sizes of find_rank's scratch: the state, the tiles' runs, the candidates as
/// the band reserved them, and (top-k) again in input order, each with indices when
/// wanted.
struct RankScratch {
    runs_bytes: usize,
    cand_bytes: usize,
    index_bytes: usize,
    copies: usize,
}

impl RankScratch {
    fn new(band: &Band, tiles: usize, key_bytes: usize, with_indices: bool, topk: bool) -> RankScratch {
        RankScratch {
            runs_bytes: if band.flags & NO_BAND == 0 { round_up(tiles * 8) } else { 0 },
            cand_bytes: round_up(band.capacity * key_bytes),
            index_bytes: if with_indices { round_up(band.capacity * 8) } else { 0 },
            copies: if topk { 2 } else { 1 },
        }
    }

    fn bytes(&self) -> usize {
        STATE_BYTES + self.runs_bytes + self.copies * (self.cand_bytes + self.index_bytes)
    }
}

/// Device addresses of one call's scratch.
struct Scratch {
    state: CUdeviceptr,
    /// The candidates (and their input indices, for top-k) in input order.
    cand: CUdeviceptr,
    cand_index: CUdeviceptr,
}

/// Where find_rank puts the element it finds.
#[derive(Clone, Copy)]
enum Found {
    /// Nowhere (top-k): the candidates are put in input order for the gather.
    Gathered,
    /// Element 0 of device memory.
    Device(CUdeviceptr),
    /// The mapped result slot, as tagged words of this tag (CudaShared::begin_host_value).
    Host(u32),
}

/// The flags that send the element found where `found` says, and the address they
/// send it to.
fn result_target(shared: &CudaShared, found: Found) -> (u32, CUdeviceptr) {
    match found {
        Found::Gathered => (0, 0),
        Found::Device(ptr) => (WRITE_RESULT, ptr),
        Found::Host(tag) => (RESULT_TO_HOST | tag << HOST_TAG_SHIFT, shared.result_slot.device),
    }
}

/// The element of rank `k` (ascending) where `found` says (not Gathered): inputs up to
/// one block's worth in one launch (select_small), larger ones by find_rank.
fn kth(shared: &CudaShared, state: &mut State, input: &DeviceMemory, dtype: DType, len: usize, k: usize, found: Found) -> Result<()> {
    let p = policy();
    if len > (p.small_block * p.small_keys) as usize {
        return find_rank(shared, state, input, dtype, len, k, Order::Ascending, false, found).map(|_| ());
    }
    let (key_bytes, float_keys) = (dtype.size(), dtype.is_float());
    let small = function(shared, sources::SELECT, key_bytes, float_keys, "select_small")?;
    let (flags, out) = result_target(shared, found);
    let key_order = radix_sort::key_order(dtype, Order::Ascending);
    // SAFETY: arguments match select_small(in, n, k, flags, key_order, out); the input
    // holds len <= small_block * small_keys keys and k < len; `out` an element, or (the
    // slot) the result's tagged words.
    unsafe {
        launch(
            small,
            1,
            p.small_block,
            state.stream,
            &[Arg::ptr(input.ptr), Arg::size(len), Arg::u64(k as u64), Arg::u32(flags), Arg::u32(key_order), Arg::ptr(out)],
        )
    }
}

/// Issues the pivots, band, settle and digit passes that find the element of rank
/// `rank` (in `order`), and puts it where `found` says.
#[allow(clippy::too_many_arguments)]
fn find_rank(
    shared: &CudaShared,
    state: &mut State,
    input: &DeviceMemory,
    dtype: DType,
    len: usize,
    rank: usize,
    order: Order,
    with_indices: bool,
    found: Found,
) -> Result<Scratch> {
    let key_bytes = dtype.size();
    let float_keys = dtype.is_float();
    let p = policy();
    let load = |kernel| function(shared, sources::SELECT, key_bytes, float_keys, kernel);
    let load_topk = |kernel| function(shared, sources::TOPK, key_bytes, float_keys, kernel);
    let topk = matches!(found, Found::Gathered);
    let band = plan_band(len, rank, key_bytes, topk);
    let (result_flags, out_ptr) = result_target(shared, found);
    let flags = band.flags | result_flags;
    let banded = band.flags & NO_BAND == 0;

    let tiles = len.div_ceil(p.tile(key_bytes));
    let layout = RankScratch::new(&band, tiles, key_bytes, with_indices, topk);
    let (runs_bytes, cand_bytes, index_bytes) = (layout.runs_bytes, layout.cand_bytes, layout.index_bytes);
    let stream = state.stream;
    let base = state.scratch.ensure(stream, layout.bytes())?;
    let runs = base + STATE_BYTES as u64;
    let reserved = runs + runs_bytes as u64;
    let reserved_index = if with_indices { reserved + cand_bytes as u64 } else { 0 };
    let ordered = reserved + (cand_bytes + index_bytes) as u64;
    let ordered_index = if with_indices { ordered + cand_bytes as u64 } else { 0 };
    let scratch = if topk {
        Scratch { state: base, cand: ordered, cand_index: ordered_index }
    } else {
        Scratch { state: base, cand: reserved, cand_index: 0 }
    };
    // With a band the sample's kernel zeroes the state; without one a memset does.
    if !banded {
        // SAFETY: the state lies inside the scratch memory.
        unsafe { drv::memset_d8_async(scratch.state, 0, STATE_BYTES, stream) }.during("cuMemsetD8Async (select state)")?;
    }

    let order_bits = radix_sort::key_order(dtype, order);
    let sms = shared.props.sm_count as u64;
    let resident = |f, block| shared.loader.blocks_per_sm(f, block).map(|b| b as u64 * sms);
    // Keys a digit-pass block reads in one round (UNROLL vectors a thread).
    let per_block = p.block as u64 * (16 / key_bytes) as u64 * 4;
    // SAFETY (every launch): the arguments match the kernels' parameters in
    // kernels/select.cu; the input holds `len` keys, the scratch the state, the runs
    // of `tiles` tiles and `capacity` candidates (and indices) once or twice.
    unsafe {
        if banded {
            let pivots = load(if band.samples == SAMPLES_SMALL { "select_pivots_small" } else { "select_pivots" })?;
            let band_kernel = load("select_band")?;
            launch(
                pivots,
                1,
                SAMPLE_BLOCK,
                stream,
                &[
                    Arg::ptr(input.ptr),
                    Arg::size(len),
                    Arg::ptr(scratch.state),
                    Arg::u32(band.rank_lo),
                    Arg::u32(band.rank_hi),
                    Arg::u32(order_bits),
                ],
            )?;
            launch(
                band_kernel,
                (tiles as u64).min(resident(band_kernel, p.block)?),
                p.block,
                stream,
                &[
                    Arg::ptr(input.ptr),
                    Arg::size(len),
                    Arg::ptr(scratch.state),
                    Arg::ptr(reserved),
                    Arg::ptr(reserved_index),
                    Arg::ptr(runs),
                    Arg::size(band.capacity),
                    Arg::u32(flags),
                    Arg::u32(order_bits),
                    Arg::u64(rank as u64),
                    Arg::ptr(out_ptr),
                ],
            )?;
            if topk {
                let (order_runs, move_runs) = (load_topk("select_order_runs")?, load_topk("select_move_runs")?);
                launch(order_runs, 1, 1024, stream, &[Arg::ptr(scratch.state), Arg::ptr(runs), Arg::size(tiles), Arg::size(band.capacity)])?;
                let warps = (p.block / 32) as u64;
                launch(
                    move_runs,
                    (tiles as u64).div_ceil(warps).min(resident(move_runs, p.block)?),
                    p.block,
                    stream,
                    &[
                        Arg::ptr(scratch.state),
                        Arg::ptr(runs),
                        Arg::size(tiles),
                        Arg::size(band.capacity),
                        Arg::ptr(reserved),
                        Arg::ptr(reserved_index),
                        Arg::ptr(ordered),
                        Arg::ptr(ordered_index),
                    ],
                )?;
            }
        } else {
            // No band to settle where rank k fell: the settling's own launch does.
            launch(
                load("select_settle")?,
                1,
                32,
                stream,
                &[Arg::ptr(scratch.state), Arg::u64(rank as u64), Arg::size(band.capacity), Arg::u32(flags), Arg::u32(order_bits), Arg::ptr(out_ptr)],
            )?;
        }
        // Sized for the candidates when there is a band (a larger grid only adds blocks
        // that contend on the histogram's atomics); the rare fallback to the whole input
        // runs on the same grid, strided.
        let searched = if banded { band.capacity } else { len };
        let digit_pass = load("select_digit_pass")?;
        let digit_grid = (searched as u64).div_ceil(per_block * p.digit_rounds.max(1) as u64).min(resident(digit_pass, p.block)?);
        let args = |shift: u32| {
            [
                Arg::ptr(input.ptr),
                Arg::size(len),
                Arg::ptr(scratch.state),
                Arg::ptr(scratch.cand),
                Arg::u32(shift),
                Arg::u32(flags),
                Arg::u32(order_bits),
                Arg::ptr(out_ptr),
            ]
        };
        // All digits in one cooperative launch: with a band, blocks enough that each
        // share's candidates fit the keys a block keeps (nine tenths of them), at most
        // what is resident at once. Where the driver refuses the launch (no
        // cooperative launch, or fewer SMs than the occupancy said), the digit passes.
        let fused = p.fused_digits && {
            let digits = load("select_digits")?;
            let keep = (p.keep_bytes as usize / key_bytes) * 9 / 10;
            let grid = if banded { (band.capacity.div_ceil(keep) as u64).max(digit_grid) } else { digit_grid };
            let grid = grid.min(resident(digits, p.block)?);
            // select_digits goes through every digit itself: no shift.
            let [input, len, state, cand, _shift, flags, order, out] = args(0);
            launch_cooperative(digits, grid, p.block, stream, &[input, len, state, cand, flags, order, out])?
        };
        if !fused {
            for digit in (0..key_bytes * 8 / RADIX_BITS).rev() {
                launch(digit_pass, digit_grid, p.block, stream, &args((digit * RADIX_BITS) as u32))?;
            }
        }
    }
    Ok(scratch)
}

fn function(shared: &CudaShared, source: Source, key_bytes: usize, float_keys: bool, kernel: &'static str) -> Result<CUfunction> {
    shared.loader.function(source, variant(key_bytes, float_keys), kernel, || module(source, key_bytes, float_keys))
}

/// Top-k runs kernels of both modules: on its first call they compile side by side.
fn compile_both(shared: &CudaShared, key_bytes: usize, float_keys: bool) -> Result<()> {
    let v = variant(key_bytes, float_keys);
    precompile::compile_unloaded(
        shared,
        &[
            (sources::SELECT, v, &|| module(sources::SELECT, key_bytes, float_keys)),
            (sources::TOPK, v, &|| module(sources::TOPK, key_bytes, float_keys)),
        ],
    )
}

/// The element of rank `k` (ascending) into host memory: the kernel that settles it
/// publishes it to the mapped result slot as tagged words, and the host spins on them
/// (sooner than waiting for the stream; the call's later launches, if any, find the
/// answer settled and end).
pub fn select_kth(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, k: usize, out: &mut [u8]) -> Result<()> {
    let mut state = shared.lock()?;
    let tag = shared.begin_host_value(&mut state, dtype);
    kth(shared, &mut state, input, dtype, len, k, Found::Host(tag))?;
    shared.wait_for_host_value(state.stream, tag, out)
}

/// The element of rank `k` into element 0 of `out`, in stream order.
pub fn select_kth_to_device(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, k: usize, out: &DeviceMemory) -> Result<()> {
    let mut state = shared.lock()?;
    kth(shared, &mut state, input, dtype, len, k, Found::Device(out.ptr))
}

/// The `k` (1 ..= len) first keys in `order` with their indices: the k-th found by
/// selection, the keys before it and its first ties gathered in input order, then a
/// stable sort of those k, so ties keep index order. An input of up to one block's
/// worth is sorted by that block alone.
#[allow(clippy::too_many_arguments)]
pub fn topk(
    shared: &CudaShared,
    input: &DeviceMemory,
    dtype: DType,
    len: usize,
    k: usize,
    order: Order,
    out_values: &DeviceMemory,
    out_indices: Option<&DeviceMemory>,
) -> Result<()> {
    supported_k(k)?;
    let key_bytes = dtype.size();
    let float_keys = dtype.is_float();
    compile_both(shared, key_bytes, float_keys)?;
    let small_len = policy().block as usize * SMALL_ITEMS;
    if len <= small_len {
        let state = shared.lock()?;
        return sort_small(shared, &state, dtype, (input.ptr, 0, len), (out_values, out_indices, k), order);
    }
    // What the sort of the gathered k needs is acquired before the gather writes them.
    // (prepare_topk says what all of this takes, for several top-ks: keep it in step.)
    let gathered = out_indices.map(|m| (m, DType::U64));
    if k > small_len {
        radix_sort::compile_for(shared, out_values, dtype, gathered, k)?;
    }
    {
        let mut state = shared.lock()?;
        if k > small_len {
            radix_sort::reserve(shared, &mut state, out_values, dtype, gathered, k)?;
        }
        let scratch = find_rank(shared, &mut state, input, dtype, len, k - 1, order, out_indices.is_some(), Found::Gathered)?;
        let gather = function(shared, sources::TOPK, key_bytes, float_keys, "select_topk_gather")?;
        let p = policy();
        let stream = state.stream;
        let tiles = len.div_ceil(p.tile(key_bytes));
        let grid = (tiles as u64).min(shared.loader.blocks_per_sm(gather, p.block)? as u64 * shared.props.sm_count as u64);
        let lookback = compact_lookback::begin(&mut state, tiles, p.window)?;
        // SAFETY: arguments match select_topk_gather; the outputs hold k elements, the
        // scratch the state and the band's candidates, the sync memory the look-back.
        unsafe {
            launch(
                gather,
                grid,
                p.block,
                stream,
                &[
                    Arg::ptr(input.ptr),
                    Arg::size(len),
                    Arg::ptr(scratch.state),
                    Arg::ptr(scratch.cand),
                    Arg::ptr(scratch.cand_index),
                    Arg::u64(k as u64),
                    Arg::ptr(out_values.ptr),
                    Arg::ptr(out_indices.map_or(0, |m| m.ptr)),
                    Arg::u32(radix_sort::key_order(dtype, order)),
                    Arg::ptr(lookback.aggregate),
                    Arg::ptr(lookback.inclusive),
                    Arg::u32(lookback.epoch),
                ],
            )?;
        }
    }
    if k > small_len {
        radix_sort::sort(shared, out_values, dtype, gathered, k, order)?;
    } else if k > 1 {
        let state = shared.lock()?;
        let gathered = (out_values.ptr, out_indices.map_or(0, |m| m.ptr), k);
        sort_small(shared, &state, dtype, gathered, (out_values, out_indices, k), order)?;
    }
    Ok(())
}

/// The gather carries its counts as 32-bit halves (common/ops.cuh CountPairSum).
fn supported_k(k: usize) -> Result<()> {
    match k >= u32::MAX as usize {
        true => Err(unsupported(format!("top-k of {k} elements: at most 2^32 - 2 on CUDA for now"))),
        false => Ok(()),
    }
}

/// For a caller that makes several top-ks after its first write (segmented top-k's
/// huge rows, a top-k a row): compiles and loads the modules `topk` with these
/// arguments (k >= 1) runs, or fails as it would, and says what else it takes from the
/// context (the sort's scratch and look-back, the selection's scratch, the gather's
/// look-back), for the caller to acquire for all of them before writing anything
/// (State::reserve). The state lock must be held.
pub fn prepare_topk(
    shared: &CudaShared,
    dtype: DType,
    len: usize,
    k: usize,
    out_values: &DeviceMemory,
    out_indices: Option<&DeviceMemory>,
) -> Result<Needs> {
    supported_k(k)?;
    let (key_bytes, float_keys) = (dtype.size(), dtype.is_float());
    compile_both(shared, key_bytes, float_keys)?;
    let v = variant(key_bytes, float_keys);
    shared.loader.load(sources::TOPK, v, || module(sources::TOPK, key_bytes, float_keys))?;
    let small_len = policy().block as usize * SMALL_ITEMS;
    if len <= small_len {
        return Ok(Needs::default()); // one block's sort
    }
    shared.loader.load(sources::SELECT, v, || module(sources::SELECT, key_bytes, float_keys))?;
    let sort = match k > small_len {
        true => radix_sort::prepare(shared, out_values, dtype, out_indices.map(|m| (m, DType::U64)), k)?,
        false => Needs::default(),
    };
    // As find_rank and the gather of `topk` plan them.
    let p = policy();
    let tiles = len.div_ceil(p.tile(key_bytes));
    let band = plan_band(len, k - 1, key_bytes, true);
    let rank = RankScratch::new(&band, tiles, key_bytes, out_indices.is_some(), true);
    Ok(sort.then(Needs::scratch(rank.bytes())).then(Needs::runs(compact_lookback::words(tiles, p.window), 1)))
}

/// One block (select_sort_small) sorts `src` = (keys, their indices or 0 for their
/// positions, n <= block * SMALL_ITEMS) in `order` and writes the first k to `out` =
/// (values, indices, k); `src` may be `out` itself.
fn sort_small(
    shared: &CudaShared,
    state: &State,
    dtype: DType,
    src: (CUdeviceptr, CUdeviceptr, usize),
    out: (&DeviceMemory, Option<&DeviceMemory>, usize),
    order: Order,
) -> Result<()> {
    let small = function(shared, sources::TOPK, dtype.size(), dtype.is_float(), "select_sort_small")?;
    let args = [
        Arg::ptr(src.0),
        Arg::ptr(src.1),
        Arg::u32(src.2 as u32),
        Arg::ptr(out.0.ptr),
        Arg::ptr(out.1.map_or(0, |m| m.ptr)),
        Arg::u32(out.2 as u32),
        Arg::u32(radix_sort::key_order(dtype, order)),
    ];
    // SAFETY: arguments match select_sort_small; `src` holds n keys (and indices), the
    // outputs k <= n elements.
    unsafe { launch(small, 1, policy().block, state.stream, &args) }
}
