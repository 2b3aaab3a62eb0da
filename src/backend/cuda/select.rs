//! Planning and launching selection: the k-th element (kernels/select.cu) and top-k
//! (the same, then kernels/topk.cu).
//! The host picks the sample ranks that bracket k and the scratch the band may fill;
//! the device decides everything that depends on the data, so the launches are the
//! same on every input and nothing waits except the k-th element's final read
//! (select/rank.rs plans and issues that search).

use cudarc::driver::sys::{CUdeviceptr, CUfunction};

use super::compact_lookback;
use super::context::{CudaShared, Needs, State, HOST_TAG_MAX};
use super::launch::{launch, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::modules::Module;
use super::parts::Parts;
use super::precompile;
use super::radix_sort;
use super::sources::{self, Source};
use super::tuning::knob;
use crate::dtype::{DType, Order};
use crate::error::{unsupported, Result};

mod rank;
use rank::find_rank;

/// Keys the pivot kernels sample (kernels/select.cu: select_pivots, select_pivots_small):
/// the small sample up to 2^SMALL_SAMPLE_LOG2 keys (knob select.small_sample_log2),
/// where the band's digit passes are cheap and the sample's cost is not.
const SAMPLES: usize = 16384;
const SAMPLES_SMALL: usize = 4096;
const SMALL_SAMPLE_LOG2: u32 = 25;
/// Top-k takes the small sample at every size: its band is open below, so the
/// sample's one bound sits near an end of the sample's order, where 4,096 keys bound it
/// about as tightly as 16,384 for a sample that costs a third (H100, 2026-11-27: 2^28,
/// k = 100, 441 -> 434 us; k = 65,536 493 -> 481). select_kth's median keeps the large
/// sample from 2^25 (2^28: 548 us, 604 with the small one, its band twice as wide).
/// Past 2^30 keys top-k takes the large one too: the small sample's bound (about its
/// 5th key) then keeps millions of candidates, and how many varies with the data (2 x
/// H200, 2026-11-28, 2^31 f32 a rank: local top-k 2.47 and 2.74 ms with 4,096 samples,
/// 2.27 and 2.17 with 16,384).
const TOPK_SMALL_SAMPLE_LOG2: u32 = 30;
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
/// Top-k: the band's last block places each band block's candidates in input order.
const ORDER_RUNS: u32 = 32;
/// select_kth with a band closed both ends: its own band kernel (kernels/select.cu:
/// select_band_closed), which, where the sample holds each bound once, copies the keys
/// equal to a bound with those between, so that each key costs one count and one range
/// test: H100 2026-11-27, f32 median 2^28 547-549 -> 468-477 µs (knob
/// select.band_closed=0 turns it off).
const CLOSED_BAND: u32 = 64;
/// select_kth's closed band placing its picks by warp (kernels/select.cu:
/// select_band_warps), from 2^band_warps_log2 keys on: see Policy::band_warps_log2.
const BAND_BY_WARP: u32 = 128;
/// The only key width whose select_kth places its band's picks by warp (select/rank.rs:
/// band_by_warp), and so the only one with a module of select_band_warps.
const BAND_WARPS_KEY_BYTES: usize = 4;
const HOST_TAG_SHIFT: u32 = 8;
const _: () = assert!((LO_OPEN | HI_OPEN | NO_BAND | WRITE_RESULT | RESULT_TO_HOST | ORDER_RUNS | CLOSED_BAND | BAND_BY_WARP) >> HOST_TAG_SHIFT == 0);
const _: () = assert!(HOST_TAG_MAX <= u32::MAX >> HOST_TAG_SHIFT);
/// Top-k up to block * SMALL_ITEMS is sorted by one block (kernels/topk.cu:
/// select_sort_small), and so is all of top-k of an input that small; more by the
/// radix sort.
const SMALL_ITEMS: usize = 8;
/// Below 2^MIN_BAND_LOG2 keys the sample costs top-k more than it saves (knob
/// select.min_band_log2); below 2^KTH_MIN_BAND_LOG2, select_kth (knob
/// select.kth_min_band_log2), whose digit passes over the whole input cost less than
/// the sample and band up to there (H100, 2026-11-27: 2^20 f32 median 37.9 -> 33.4 µs,
/// 2^22 46.6 -> 36.7, 2^24 77.2 with the band and 79.2 without).
const MIN_BAND_LOG2: u32 = 16;
const KTH_MIN_BAND_LOG2: u32 = 23;

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
    /// A band open below (top-k's) screens 2- and 4-byte keys' raw words before
    /// picking any exactly (common/ordered_screen.cuh): one row of 2^28 bf16, top
    /// 100, 0.400 ms without it, 0.253 ms with it (H100, 2026-11-27).
    band_screen: bool,
    /// select_kth's band closed both ends copies the ties of its bounds too, where the
    /// sample shows them rare (CLOSED_BAND).
    band_closed: bool,
    /// select_kth's closed band of 4-byte keys places its picks by warp from
    /// 2^band_warps_log2 float keys on (2^band_warps_int_log2 integer keys), in slots
    /// reserved band_chunk at a time (common/warp_slots.cuh), instead of by a block scan
    /// and an atomic a tile, and leaves the top digit to the digit passes. H200
    /// (2026-11-28), median, ms: f32 2^30 1.455-1.468 -> 1.296-1.298, 2^28 0.416-0.422
    /// -> 0.385-0.403, 2^27 0.242-0.245 -> 0.233-0.237 (chunks of 256); u32 2^30
    /// 1.345-1.350 -> 1.314-1.319, 2^28 0.398-0.404 -> 0.394 (0.409-0.410 with chunks
    /// of 32). Smaller bands lose, f32 with chunks of 256: 2^26 0.147-0.152 ->
    /// 0.157-0.161, 2^25 0.093-0.098 -> 0.110-0.114 (fewer picks a warp: the atomics
    /// no longer pay).
    band_warps_log2: u32,
    band_warps_int_log2: u32,
    /// Slots such a warp reserves at once (a power of two; the band's scratch gains
    /// room for each warp's last, part-filled chunk). H200 (2026-11-28), f32, µs: 2^27
    /// 251-258 with chunks of capacity / (8 warps) (the first rule), 255-260 with 64,
    /// 238-241 with 128, 235-237 with 256; 2^28 385-387 with either rule. Tests force 2.
    band_chunk: u32,
    /// select_kth of up to small_block * small_keys keys: one block, one launch
    /// (select_small).
    small_block: u32,
    small_keys: u32,
    /// Inputs up to this many keys take the small sample (SAMPLES_SMALL).
    small_sample_len: usize,
    /// The same for top-k (its band open below).
    topk_small_sample_len: usize,
    /// The band's half width in standard deviations of the sample's count: narrowed
    /// in tests, to make the sample miss and the fallbacks run.
    spread_sigmas: f64,
    /// Inputs shorter than these go to the digit passes without a sample and band:
    /// top-k's, then select_kth's.
    min_band_len: usize,
    kth_min_band_len: usize,
    /// Tiles a warp of select_move_runs takes at once: 0 chooses by the band's
    /// capacity (select/rank.rs: move_group), 1 to 32 forces it.
    move_group: u32,
}

/// The policy, from the knobs (read once: GPUPRIMS_TUNE is read once per process).
fn policy() -> &'static Policy {
    static POLICY: once_cell::sync::Lazy<Policy> = once_cell::sync::Lazy::new(read_policy);
    &POLICY
}

fn read_policy() -> Policy {
    // 64 bytes a thread: as fast as 128 on the H100 (0.61 vs 0.62 ms, f32 2^28) and the
    // modules compile in two thirds of the time.
    Policy {
        block: knob("select.block", 256).clamp(32, 1024) / 32 * 32,
        thread_bytes: knob("select.thread_bytes", 64), window: knob("select.window", 64),
        digit_rounds: knob("select.digit_rounds", 4),
        fused_digits: knob("select.fused_digits", 1) != 0,
        keep_bytes: knob("select.keep_bytes", 32768).clamp(1024, 40960),
        digits_min_blocks: knob("select.digits_min_blocks", 4),
        band_prefetch: knob("select.band_prefetch", 0) != 0,
        band_screen: knob("select.band_screen", 1) != 0,
        band_closed: knob("select.band_closed", 1) != 0,
        band_warps_log2: knob("select.band_warps_log2", 27).min(63),
        band_warps_int_log2: knob("select.band_warps_int_log2", 28).min(63),
        band_chunk: knob("select.band_chunk", 256).clamp(1, 1 << 16),
        // Whole warps, up to 1,024 threads.
        small_block: knob("select.small_block", 1024).clamp(32, 1024) / 32 * 32,
        small_keys: knob("select.small_keys", 8).clamp(1, 32),
        small_sample_len: 1usize << knob("select.small_sample_log2", SMALL_SAMPLE_LOG2).min(62),
        topk_small_sample_len: 1usize << knob("select.topk_small_sample_log2", TOPK_SMALL_SAMPLE_LOG2).min(62),
        spread_sigmas: knob("select.spread_tenths", 35) as f64 / 10.0,
        min_band_len: 1usize << knob("select.min_band_log2", MIN_BAND_LOG2).min(62),
        kth_min_band_len: 1usize << knob("select.kth_min_band_log2", KTH_MIN_BAND_LOG2).min(62),
        move_group: knob("select.move_group", 0).min(32),
    }
}

impl Policy {
    fn items(&self, key_bytes: usize) -> u32 {
        // 1-byte keys: 64 a thread keep the register count below 128.
        (self.thread_bytes / key_bytes as u32).min(64)
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
            format!("-DGP_BAND_SCREEN={}", p.band_screen as u32),
            format!("-DGP_SMALL_BLOCK={}", p.small_block),
            format!("-DGP_SMALL_KEYS={}", p.small_keys),
            format!("-DGP_LO_OPEN={LO_OPEN}"),
            format!("-DGP_HI_OPEN={HI_OPEN}"),
            format!("-DGP_NO_BAND={NO_BAND}"),
            format!("-DGP_WRITE_RESULT={WRITE_RESULT}"),
            format!("-DGP_ORDER_RUNS={ORDER_RUNS}"),
            format!("-DGP_CLOSED_BAND={CLOSED_BAND}"),
            format!("-DGP_BAND_BY_WARP={BAND_BY_WARP}"),
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
    let label = |k: usize, f: bool| format!("keys {k}B{}", if f { " float" } else { "" });
    let parts = KEY_VARIANTS.into_iter().flat_map(|(k, f)| select_parts(k == BAND_WARPS_KEY_BYTES).map(move |part| (k, f, part))).map(|(k, f, part)| Module {
        source: sources::SELECT,
        variant: part_variant(k, f, part),
        spec: part_module(k, f, part),
        label: format!("{} part {part}", label(k, f)),
    });
    let topk = KEY_VARIANTS.into_iter().map(|(k, f)| Module {
        source: sources::TOPK,
        variant: variant(k, f),
        spec: module(sources::TOPK, k, f),
        label: label(k, f),
    });
    parts.chain(topk).collect()
}

/// The loader's key of the module for (key width, float keys).
pub(super) fn variant(key_bytes: usize, float_keys: bool) -> u32 {
    (key_bytes * 16) as u32 | (float_keys as u32) << 8
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

/// Kernel `kernel` of `source` (select.cu: of the part holding it) for (key width,
/// float keys).
pub(super) fn function(shared: &CudaShared, source: Source, key_bytes: usize, float_keys: bool, kernel: &'static str) -> Result<CUfunction> {
    if source.name == sources::SELECT.name {
        let part = PARTS.of(kernel);
        return shared.loader.function(source, part_variant(key_bytes, float_keys, part), kernel, || {
            part_module(key_bytes, float_keys, part)
        });
    }
    shared.loader.function(source, variant(key_bytes, float_keys), kernel, || module(source, key_bytes, float_keys))
}

/// select.cu's parts (kernels/select.cu: GP_SELECT_PART), compiled side by side.
const PARTS: Parts = Parts { define: "GP_SELECT_PART", count: 4, later: &[("select_band", 1), ("select_band_closed", 2), ("select_band_warps", 3)] };

/// The loader's key of a select.cu part's module.
fn part_variant(key_bytes: usize, float_keys: bool, part: u32) -> u32 {
    PARTS.variant(variant(key_bytes, float_keys), part)
}

/// A select.cu part's module.
fn part_module(key_bytes: usize, float_keys: bool, part: u32) -> ModuleSpec {
    let mut spec = module(sources::SELECT, key_bytes, float_keys);
    spec.options.push(PARTS.option(part));
    spec
}

/// A selection's modules, compiled side by side on its first call: select.cu's parts
/// (select_band_warps' only with `band_warps`: compiled with the others it made a first
/// call 0.1-0.25 s longer), and with `topk` topk.cu's.
fn compile(shared: &CudaShared, key_bytes: usize, float_keys: bool, topk: bool, band_warps: bool) -> Result<()> {
    let specs: Vec<_> = select_parts(band_warps).map(|part| (part, move || part_module(key_bytes, float_keys, part))).collect();
    let topk_spec = || module(sources::TOPK, key_bytes, float_keys);
    let mut wanted: Vec<precompile::Wanted> =
        specs.iter().map(|(part, spec)| (sources::SELECT, part_variant(key_bytes, float_keys, *part), spec as _)).collect();
    if topk {
        wanted.push((sources::TOPK, variant(key_bytes, float_keys), &topk_spec));
    }
    precompile::compile_unloaded(shared, &wanted)
}

/// select.cu's parts a call loads: select_band_warps' only with `band_warps`.
fn select_parts(band_warps: bool) -> impl Iterator<Item = u32> {
    let warps_part = PARTS.of("select_band_warps");
    PARTS.all().filter(move |&part| band_warps || part != warps_part)
}

/// The element of rank `k` (ascending) into host memory: the kernel that settles it
/// publishes it to the mapped result slot as tagged words, and the host spins on them
/// (sooner than waiting for the stream; the call's later launches, if any, find the
/// answer settled and end).
pub fn select_kth(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, k: usize, out: &mut [u8]) -> Result<()> {
    compile(shared, dtype.size(), dtype.is_float(), false, rank::band_by_warp(dtype, len))?;
    let mut state = shared.lock()?;
    let tag = shared.begin_host_value(&mut state, dtype);
    kth(shared, &mut state, input, dtype, len, k, Found::Host(tag))?;
    shared.wait_for_host_value(state.stream, tag, out)
}

/// The element of rank `k` into element 0 of `out`, in stream order.
pub fn select_kth_to_device(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, k: usize, out: &DeviceMemory) -> Result<()> {
    compile(shared, dtype.size(), dtype.is_float(), false, rank::band_by_warp(dtype, len))?;
    let mut state = shared.lock()?;
    kth(shared, &mut state, input, dtype, len, k, Found::Device(out.ptr))
}

/// One gpuprims_topk call as the backend's three ways of doing it take it (select::topk,
/// topk_by_sort::topk, segmented_topk::topk_one_row): the `k` first of `len` keys in
/// `order`, to `values` and (when wanted) their indices.
#[derive(Clone, Copy)]
pub struct TopK<'a> {
    pub input: &'a DeviceMemory,
    pub dtype: DType,
    pub len: usize,
    pub k: usize,
    pub order: Order,
    pub values: &'a DeviceMemory,
    pub indices: Option<&'a DeviceMemory>,
}

/// The `k` (1 ..= len) first keys in `order` with their indices: the k-th found by
/// selection, the keys before it and its first ties gathered in input order, then a
/// stable sort of those k, so ties keep index order. An input of up to one block's
/// worth is sorted by that block alone.
pub fn topk(shared: &CudaShared, call: &TopK) -> Result<()> {
    let TopK { input, dtype, len, k, order, values: out_values, indices: out_indices } = *call;
    supported_k(k)?;
    let key_bytes = dtype.size();
    let float_keys = dtype.is_float();
    compile(shared, key_bytes, float_keys, true, false)?;
    let small_len = small_topk_len();
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
        let tile = (p.block * p.items(key_bytes)) as u64;
        let tiles = (len as u64).div_ceil(tile) as usize;
        let grid = (tiles as u64).min(shared.resident_blocks(gather, p.block)?);
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

/// Threads a block of select.cu's and topk.cu's kernels (their BLOCK).
pub(super) fn block_threads() -> u32 {
    policy().block
}

/// Top-ks of up to this many keys are sorted whole by one block (sort_small).
pub(super) fn small_topk_len() -> usize {
    policy().block as usize * SMALL_ITEMS
}

/// The gather carries its counts as 32-bit halves (common/ops.cuh CountPairSum).
pub(super) fn supported_k(k: usize) -> Result<()> {
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
    compile(shared, key_bytes, float_keys, true, false)?;
    let v = variant(key_bytes, float_keys);
    shared.loader.load(sources::TOPK, v, || module(sources::TOPK, key_bytes, float_keys))?;
    let small_len = small_topk_len();
    if len <= small_len {
        return Ok(Needs::default()); // one block's sort
    }
    for part in select_parts(false) {
        shared.loader.load(sources::SELECT, part_variant(key_bytes, float_keys, part), || part_module(key_bytes, float_keys, part))?;
    }
    let sort = match k > small_len {
        true => radix_sort::prepare(shared, out_values, dtype, out_indices.map(|m| (m, DType::U64)), k)?,
        false => Needs::default(),
    };
    // As find_rank and the gather of `topk` plan them.
    let p = policy();
    let tiles = len.div_ceil((p.block * p.items(key_bytes)) as usize);
    let rank = rank::topk_scratch_bytes(shared, dtype, len, k, out_indices.is_some());
    Ok(sort.then(Needs::scratch(rank)).then(Needs::runs(compact_lookback::words(tiles, p.window), 1)))
}

/// One block sorts `src` = (keys, their indices or 0 for their positions, n <= block *
/// SMALL_ITEMS) in `order` and writes the first k to `out` = (values, indices, k); `src`
/// may be `out` itself. Up to a block's worth of keys by counting (select_sort_rank:
/// H100, 2026-11-27, wall clock, k = 100: 2^24 84.6-86.8 -> 80.2-80.4 us, 2^28
/// 426.3-428.0 -> 420.7-421.2), more by a block radix sort (select_sort_small).
fn sort_small(
    shared: &CudaShared,
    state: &State,
    dtype: DType,
    src: (CUdeviceptr, CUdeviceptr, usize),
    out: (&DeviceMemory, Option<&DeviceMemory>, usize),
    order: Order,
) -> Result<()> {
    let kernel = if src.2 <= policy().block as usize { "select_sort_rank" } else { "select_sort_small" };
    let small = function(shared, sources::TOPK, dtype.size(), dtype.is_float(), kernel)?;
    let args = [
        Arg::ptr(src.0),
        Arg::ptr(src.1),
        Arg::u32(src.2 as u32),
        Arg::ptr(out.0.ptr),
        Arg::ptr(out.1.map_or(0, |m| m.ptr)),
        Arg::u32(out.2 as u32),
        Arg::u32(radix_sort::key_order(dtype, order)),
    ];
    // SAFETY: arguments match select_sort_small and select_sort_rank (n <= block);
    // `src` holds n keys (and indices), the outputs k <= n elements.
    unsafe { launch(small, 1, policy().block, state.stream, &args) }
}
