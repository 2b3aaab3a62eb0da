//! Planning and launching the onesweep radix sort (kernels/radix_histogram.cu, by key
//! width; kernels/radix_sort.cu, by key and value width): one histogram launch (its
//! last block plans the passes), one launch per digit pass (and per portion of 2^32
//! keys), and one finishing launch. What each launch does is decided on the
//! device by the plan (skipped digits, already-sorted or reversed input), so the
//! host issues the same launches every time and never waits. Keys alone of 1 or 2
//! bytes go to the counting sort instead, when counting_sort::serves says so.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUfunction, CUstream};

use super::context::{round_up, CudaShared, Needs, State};
use super::counting_sort;
use super::driver::DriverContext;
use super::launch::{launch, launch_with_shared, Arg};
use super::loader::ModuleSpec;
use super::modules::Module;
use super::precompile;
use super::memory::DeviceMemory;
use super::sources::{self, Source};
use super::tuning::knob;
use crate::dtype::{DType, Order};
use crate::error::{invalid, Result};

/// Bits of a digit (kernels: RADIX_BITS, given by control_options).
const RADIX_BITS: usize = 8;
const RADIX: usize = 1 << RADIX_BITS;
/// Bytes of the kernels' Control block (its size is checked against this at compile time).
const CONTROL_BYTES: usize = 64 << 10;
/// Pass launches per digit the Control block has tickets for (kernels: MAX_PORTIONS,
/// given by control_options).
const MAX_PORTIONS: usize = 256;

/// The constants both radix modules share with this file (kernels/radix_sort_control.cuh),
/// passed as options so they are written once.
fn control_options() -> [String; 3] {
    [
        format!("-DGP_RADIX_BITS={RADIX_BITS}"),
        format!("-DGP_MAX_PORTIONS={MAX_PORTIONS}"),
        format!("-DGP_CONTROL_BYTES={CONTROL_BYTES}"),
    ]
}
/// Most dynamic shared memory a block may take: a pass's tile, the histogram's
/// counters (the H100 lets a block opt in to 227 KiB; static memory comes beside it).
const DYNAMIC_SHARED_LIMIT: usize = 200 << 10;
/// Key kinds and the descending flag, as kernels/common/radix_key.cuh reads them.
const KEY_SIGNED: u32 = 1;
const KEY_FLOAT: u32 = 2;
/// With KEY_FLOAT on 2-byte keys: bfloat16 rather than binary16 (where NaNs start).
const KEY_BFLOAT16: u32 = 8;
const KEY_DESCENDING: u32 = 4;

/// Tuning: threads per block and keys per thread of a digit pass, and how many of its
/// blocks an SM must hold at once (which caps its registers); threads per block of
/// the histogram and finishing kernels.
struct Policy {
    block: u32,
    items: u32,
    min_blocks: u32,
    /// Predecessors a tile's look-back reads at once.
    window: u32,
    hist_block: u32,
    /// Copies of each digit histogram the histogram kernel counts into (a power of
    /// two; lane l counts into copy l % parts, so more copies, fewer bank conflicts).
    hist_parts: u32,
    /// A block a tile, as many blocks as tiles, rather than the blocks that fit at
    /// once each taking tile after tile.
    one_tile_blocks: bool,
}

/// Measured on the H100 (BENCHMARKS.md): 4-byte keys alone run 2 blocks of 512 x 24
/// an SM in 64 registers without spilling (2026-11-24: u32 2^28 5.44 -> 5.14 ms, f32
/// desc 5.42 -> 5.13, against 3 blocks of 384 x 19 in 56, CUB's shape; 4 blocks of
/// 256 and one of 1024 were slower, x 25 spills); other keys 2 blocks of 384 (3
/// measured slower for u64; 512 x 16 no faster), u64 384 x 20 in 80 registers without spilling (its
/// tile in dynamic shared memory, past the 48 KiB a static one was held to: 2^27 8.60
/// -> 8.01 ms against x 14, 2026-11-23; x 18 8.16; x 22 spills). Pairs of up to 8
/// bytes run 2 blocks of 384 x 30 in 80 registers without spilling, since keys and
/// values are staged side by side and written in one loop (2026-11-24: u32/u32 2^28
/// 8.87 ms against 8.90 for x 24 with values staged over the keys, which spilled past
/// x 24; f32/u32 2^28 8.91 against 9.57 for x 17, where float keys' pairs spilled
/// before); wider pairs 2 blocks of 256 x 20 (u64/u64 2^27 16.7 ms against 18.9 at
/// x 12; x 24 16.5 but 3% slower at 2^20). Tiles are mostly as large as fits without
/// spilling (larger tiles fill more of each written sector), where that measured
/// best. A look-back reads 2 predecessors at once for keys, 1 for pairs (against 4:
/// u32 2^28 5.71 -> 5.61 ms, pairs 10.02 -> 9.59; 8 was slower everywhere; for packed
/// pairs, 2 was faster at 2^24, 0.597 against 0.608 ms, and slower at 2^28, 8.47
/// against 8.30, 2026-11-24).
fn policy(key_bytes: usize, value_bytes: usize, class: u32) -> Policy {
    let (kind, block, items, min_blocks, window) = if value_bytes == 0 {
        let (block, items) = [(384, 24), (384, 18), (512, 24), (384, 20)][key_bytes.trailing_zeros() as usize];
        ("keys", block, items, 2, 2)
    } else if key_bytes + value_bytes > 8 {
        ("pairs", 256, 20, 2, 1)
    } else if module_packs(key_bytes, value_bytes) {
        ("pairs", 384, 20, 2, 1)  // (x 22 and up spill)
    } else {
        ("pairs", 384, 30, 2, 1)
    };
    let block = knob(&format!("radix.{kind}.block"), block);
    let items = match class {
        0 => knob(&format!("radix.{kind}.items{key_bytes}"), items),
        _ => small_tiles(key_bytes, value_bytes)[class as usize - 1].1,
    };
    // A tile of keys and one of values beside them take dynamic shared memory: a
    // tuned item count is capped to what one block may have of it.
    let fits = (DYNAMIC_SHARED_LIMIT / (block as usize * (key_bytes + value_bytes))) as u32;
    Policy {
        block,
        items: items.min(fits).max(1),
        min_blocks: knob(&format!("radix.{kind}.min_blocks{key_bytes}"), min_blocks),
        window: knob(&format!("radix.{kind}.window"), window),
        // (At least a thread a digit value: the histogram's last block plans the passes.)
        hist_block: knob("radix.hist_block", 1024).max(RADIX as u32),
        hist_parts: hist_parts(key_bytes),
        one_tile_blocks: knob(&format!("radix.{kind}.one_tile_blocks{key_bytes}"), 0) != 0,
    }
}

/// Smaller tiles for smaller sorts: (most keys, items a thread) in increasing order,
/// each a module of its own (tile class 1, 2, ...); past the last, the policy's tile
/// (class 0). Few large tiles leave most of the GPU idle and make a pass one tile's
/// latency: u32 keys at 2^16 are 5 tiles of 512 x 24. Measured on an H200 (2026-11-28,
/// bench against CUB 3.5.0, medians of 21, two rounds): u32 keys 2^16 0.061 ms -> 0.047
/// with 8 items, 2^18 0.065 -> 0.052, 2^20 0.073 -> 0.070, 2^22 0.143 -> 0.135 with 16
/// (2^24: 16 items 0.397 against 0.365); f32 descending alike; u64 keys 2^15 0.095 ->
/// 0.075 and 2^17 0.101 -> 0.084 with 8, 2^19 0.114 -> 0.107 with 12 (2^21: 12 items
/// 0.210 against 0.183); packed u32/u32 pairs 2^16 0.066-0.084 -> 0.054-0.061 and 2^18
/// 0.071 -> 0.064 with 10, 2^20 level (2^22: 14 items 0.206 against 0.185). 4-byte keys
/// with 8-byte values (the top-k's keys and u64 indices): top-k of k = 65,536 (its
/// gathered sort) at 2^20 118.5-119.0 -> 114.7-115.6 µs with 6 items of 256 (an earlier
/// knob run of 5: 120.7 -> 114.7); unpacked u32/u32 pairs (odd n) and f32/u32 take the
/// packed pairs' 10 unmeasured. Knob radix.small_tiles=0: the policy's tile at every
/// size (and the only way for the items knobs, which set class 0, to reach small sorts).
fn small_tiles(key_bytes: usize, value_bytes: usize) -> &'static [(usize, u32)] {
    if knob("radix.small_tiles", 1) == 0 {
        return &[];
    }
    match (key_bytes, value_bytes) {
        (4, 0) => &[(1 << 20, 8), (1 << 23, 16)],
        (8, 0) => &[(1 << 18, 8), (1 << 20, 12)],
        (4, 4) if packed_pairs() => &[(1 << 20, 10)],
        (4, 8) => &[(1 << 18, 6)],
        _ => &[],
    }
}

/// The tile class of a sort of `len` keys (small_tiles): 0 for the policy's tile.
fn tile_class(key_bytes: usize, value_bytes: usize, len: usize) -> u32 {
    let classes = small_tiles(key_bytes, value_bytes);
    classes.iter().position(|&(most, _)| len <= most).map_or(0, |i| i as u32 + 1)
}

/// Whether pairs of 4-byte keys and 4-byte values move packed between passes
/// (kernels/radix_sort.cu, "Packed pairs").
fn packed_pairs() -> bool {
    knob("radix.packed_pairs", 1) != 0
}

/// Whether the module for these widths moves pairs packed: 4-byte keys with 4-byte
/// values.
fn module_packs(key_bytes: usize, value_bytes: usize) -> bool {
    key_bytes == 4 && value_bytes == 4 && packed_pairs()
}

/// Whether a sort of `len` pairs moves them packed: when the module packs, and the
/// caller's two buffers can hold n/2 pairs each (n even, both 8-byte aligned). At
/// every size: on the H100 (2026-11-24, two rounds) packed u32/u32 pairs were faster
/// than unpacked from 2^21 (2^22 0.203 against 0.217 ms), and at 2^20 within the
/// noise of the same module unpacked (0.094-0.096 against 0.094-0.095 ms).
fn packs(module_packs: bool, len: usize, keys: u64, values: u64) -> bool {
    module_packs && len.is_multiple_of(2) && keys.is_multiple_of(8) && values.is_multiple_of(8)
}

/// The histogram's copies of its counters: 32 (a bank for every lane: one wavefront
/// an atomic), held to what one block may have of dynamic shared memory (u64 keys:
/// 16). Measured on the H100 (2026-11-24) with blocks of 1024, one an SM, against
/// 32 / passes copies (32 KiB) in blocks of 256: u32 2^28 5.13 -> 5.03 ms (1.08x ->
/// 1.10x CUB), f32 desc 5.12 -> 5.03, u64 2^27 7.96 -> 7.83, sorted u32 2^28 0.49 ->
/// 0.52 (10.6x -> 10.0x); 16 copies measured between, 32 in blocks of 512 lost
/// the sorted input (0.82 ms).
fn hist_parts(key_bytes: usize) -> u32 {
    let passes = (key_bytes * 8 / RADIX_BITS) as u32;
    let wanted = knob("radix.hist_parts", 32).clamp(1, 32);
    let fits = (DYNAMIC_SHARED_LIMIT / (passes as usize * RADIX * 4)) as u32;
    let parts = wanted.min(fits).max(1);
    1 << (31 - parts.leading_zeros())  // a power of two
}

impl Policy {
    fn tile(&self) -> usize {
        (self.block * self.items) as usize
    }
    /// Dynamic shared memory of a pass block (kernels: TileStorage, checked against
    /// it at compile time): the ranking's per-warp digit counters and its scan's
    /// words, or the tile's keys, whichever is larger, and the tile's values beside
    /// them.
    fn tile_shared_bytes(&self, key_bytes: usize, value_bytes: usize) -> u32 {
        let warps = self.block as usize / 32;
        let rank = warps * RADIX * 4 + 2 * warps * 4;
        let keys = rank.max(self.tile() * key_bytes).next_multiple_of(16);
        let values = if value_bytes > 0 { self.tile() * value_bytes } else { 1 };  // (a placeholder byte without)
        (keys + values).next_multiple_of(16) as u32
    }
    /// Dynamic shared memory of a histogram block (kernels: Hist::Storage, checked
    /// against it at compile time): every pass's counters, hist_parts copies each.
    fn hist_shared_bytes(&self, key_bytes: usize) -> u32 {
        (key_bytes * 8 / RADIX_BITS * RADIX * self.hist_parts as usize * 4) as u32
    }
    /// Tiles per pass launch: a digit's count over a launch stays below 2^32. The knob
    /// makes portions small, so tests can run the hand-over between them.
    fn portion_tiles(&self) -> usize {
        let most = u32::MAX as usize / self.tile();
        (knob("radix.portion_tiles", most as u32) as usize).clamp(1, most)
    }
}

/// The histogram module (its last block plans the passes) for keys of `key_bytes`
/// (kernels/radix_histogram.cu): it does not depend on the values, so every value width
/// shares it.
pub fn histogram_module(key_bytes: usize, float_keys: bool) -> ModuleSpec {
    let p = policy(key_bytes, 0, 0);
    let hist_lean = knob("radix.hist_lean", 1);
    ModuleSpec {
        source: sources::RADIX_HISTOGRAM,
        options: vec![
            format!("-DGP_KEY_BYTES={key_bytes}"),
            "-DGP_VALUE_BYTES=0".to_string(),
            format!("-DGP_KEY_FLOAT={}", float_keys as u32),
            // The histogram's diet for random keys: each warp stops checking the
            // order once the verdict cannot change, and counts a vector's digits
            // without the agreement tests unless a lane's keys share one (a warp
            // vote), each counter's address a byte permute and one multiply-add
            // (ptxas: 2 instructions an atomic instead of 3). The histogram was
            // issue-bound (H100 ncu, 2026-11-23, 8 copies in blocks of 256: 560 µs at
            // u32 2^28 against CUB's 458, f32 720).
            // On by default: the H100 (2026-11-23) measured 2^28 u32 6.29 -> 6.20 ms,
            // f32 desc 6.50 -> 6.24, pairs 10.0 -> 9.89, u64 9.27 -> 9.14; sorted
            // u32 0.48 -> 0.49 (the vote finds agreement everywhere).
            format!("-DGP_ORDER_CHECK_EARLY_OUT={hist_lean}"),
            format!("-DGP_HIST_WARP_VOTE={hist_lean}"),
            format!("-DGP_HIST_BLOCK_THREADS={}", p.hist_block),
            format!("-DGP_HIST_PARTS={}", p.hist_parts),
            format!("-DGP_HIST_SHARED_BYTES={}", p.hist_shared_bytes(key_bytes)),
            // The first pass may start when the last block plans, not at once (the
            // kernel says why); the knob, for measuring the two.
            format!("-DGP_HIST_EARLY_START={}", knob("radix.hist_early_start", 0)),
        ]
        .into_iter()
        .chain(control_options())
        .collect(),
    }
}

/// The loader's variant key of a pass module: the widths' (variant), its tile class,
/// and whether it is the packing module (the same source).
fn pass_variant(key_bytes: usize, value_bytes: usize, float_keys: bool, class: u32, packing: bool) -> u32 {
    variant(key_bytes, value_bytes, float_keys) | (packing as u32) << 9 | class << 10
}

/// The passes-and-finish module for keys of `key_bytes` (floats or integers) and values
/// of `value_bytes` (0: none) in tile class `class`, kernels/radix_sort.cu; with
/// `packing`, the packing module of pairs that move packed (module_packs):
/// radix_pass_packing alone, from the same source, apart from radix_pass so that a
/// first call compiles the two side by side. Together they took 0.83 s to compile on
/// the development machine (f32 keys 1.0 s), and the first u32/u32 sort of a freshly
/// started H100 machine 1.66 s (2026-11-24).
fn pass_module(key_bytes: usize, value_bytes: usize, float_keys: bool, class: u32, packing: bool) -> ModuleSpec {
    let p = policy(key_bytes, value_bytes, class);
    ModuleSpec {
        source: sources::RADIX_SORT,
        options: vec![
            format!("-DGP_PACKING_MODULE={}", packing as u32),
            format!("-DGP_KEY_BYTES={key_bytes}"),
            format!("-DGP_VALUE_BYTES={value_bytes}"),
            format!("-DGP_KEY_FLOAT={}", float_keys as u32),
            format!("-DGP_BLOCK_THREADS={}", p.block),
            format!("-DGP_ITEMS={}", p.items),
            format!("-DGP_MIN_BLOCKS={}", p.min_blocks),
            format!("-DGP_LOOKBACK_WINDOW={}", p.window),
            // Key columns ranked together in three sweeps; 0: one at a time, which
            // measured faster on the H100 (u32 2^28 6.17 ms against 6.50: no spills).
            format!("-DGP_RANK_GROUP={}", knob("radix.rank_group", 0)),
            // One-column ranking in fewer instructions a column (the lane mask from
            // its register, the leader's test in the atomic's predicate), which also
            // let the 56-register keys pass of 2026-11-23 go without spilling (ptxas
            // sm_90: u32 384 x 17, 40 bytes -> 0); on by default since then.
            format!("-DGP_RANK_LEAN={}", knob("radix.rank_lean", 1)),
            // One tile a block and a block a tile (CUB's way) instead of persistent
            // blocks taking tile after tile. Off: on the H100 (2026-11-23) 3 blocks of
            // 384 x 18 so were 1-2% faster for random 4-byte keys at 2^28, but an
            // input that needs no pass (sorted) then still launches a block a tile
            // each pass (u32 sorted 2^28 0.49 -> 0.69 ms, 10.5x CUB -> 7.6x), and u64
            // keys measured slower. At 2 blocks of 512 x 24 (2026-11-24) it was slower
            // outright (u32 2^28 5.14 -> 5.18 ms, f32 5.14 -> 5.53, sorted 0.60 ms).
            format!("-DGP_ONE_TILE_BLOCKS={}", p.one_tile_blocks as u32),
            // Values loaded with the keys (latency hidden, registers held) or after ranking.
            format!("-DGP_EARLY_VALUES={}", knob("radix.early_values", 0)),
            // Values of 4 and 8 bytes copied from global memory to their ranked places
            // in shared memory by cp.async, travelling while the tile's look-back ends,
            // instead of through registers after it. On by default: the H100
            // (2026-11-24, three rounds) measured u32/u32 2^28 8.78 -> 8.73 ms, u64/u64
            // 2^27 16.49 -> 16.12, f32/u32 2^28 8.83 -> 8.81; 2^20 and 2^24 level.
            format!("-DGP_ASYNC_VALUES={}", knob("radix.async_values", 1)),
            // A full tile written out without a test an item (integer keys; see the
            // kernel's scatter for the H100 figures).
            format!("-DGP_WHOLE_SCATTER={}", knob("radix.whole_scatter", 1)),
            // Pairs of 4-byte keys and 4-byte values moved packed between passes (see
            // the kernel's "Packed pairs" for the H100 figures).
            format!("-DGP_PACKED_PAIRS={}", packed_pairs() as u32),
            // The finishing kernel's block.
            format!("-DGP_HIST_BLOCK_THREADS={}", p.hist_block),
            format!("-DGP_PORTION_TILES={}", p.portion_tiles()),
            format!("-DGP_TILE_SHARED_BYTES={}", p.tile_shared_bytes(key_bytes, value_bytes)),
        ]
        .into_iter()
        .chain(control_options())
        .collect(),
    }
}

/// The loader's variant key of the module for these widths and key kind (the
/// quicksort's modules use the same keys, under their own sources).
pub(super) fn variant(key_bytes: usize, value_bytes: usize, float_keys: bool) -> u32 {
    (key_bytes * 16 + value_bytes) as u32 | (float_keys as u32) << 8
}

/// Every module of the radix sort, for gpuprims_context_precompile (modules.rs): the
/// histogram's by key width, the passes' by key and value width.
pub fn modules() -> Vec<Module> {
    let label = |k: usize, f: bool| format!("keys {k}B{}", if f { " float" } else { "" });
    let histograms = all_variants().into_iter().filter(|&(_, v, _)| v == 0).map(|(k, _, f)| Module {
        source: sources::RADIX_HISTOGRAM,
        variant: variant(k, 0, f),
        spec: histogram_module(k, f),
        label: label(k, f),
    });
    // Every tile class of every widths' pass module, and its packing module where pairs
    // move packed.
    let classes = |k: usize, v: usize| 0..=small_tiles(k, v).len() as u32;
    let passes = all_variants().into_iter().flat_map(|(k, v, f)| classes(k, v).map(move |c| (k, v, f, c)));
    let passes = passes.flat_map(|(k, v, f, c)| {
        let packing = if module_packs(k, v) { vec![false, true] } else { vec![false] };
        packing.into_iter().map(move |pack| Module {
            source: sources::RADIX_SORT,
            variant: pass_variant(k, v, f, c, pack),
            spec: pass_module(k, v, f, c, pack),
            label: format!("{} values {v}B{}{}", label(k, f), tile_label(c), if pack { " packing" } else { "" }),
        })
    });
    histograms.chain(passes).collect()
}

/// A pass module's label suffix for its tile class (precompile's traces, the dump filter).
fn tile_label(class: u32) -> String {
    match class {
        0 => String::new(),
        c => format!(" small tiles {c}"),
    }
}

/// Every (key width, value width, float keys) the library instantiates, for both sorts.
pub(super) fn all_variants() -> Vec<(usize, usize, bool)> {
    let floats = |k: usize| if k >= 2 { vec![false, true] } else { vec![false] };
    [1, 2, 4, 8]
        .into_iter()
        .flat_map(|k| [0, 1, 2, 4, 8].into_iter().flat_map(move |v| floats(k).into_iter().map(move |f| (k, v, f))))
        .collect()
}

/// How the kernels read a key of `dtype` in `order` (kernels/common/radix_key.cuh).
pub(super) fn key_order(dtype: DType, order: Order) -> u32 {
    let kind = match dtype {
        DType::F32 | DType::F64 | DType::F16 => KEY_FLOAT,
        DType::BF16 => KEY_FLOAT | KEY_BFLOAT16,
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => KEY_SIGNED,
        _ => 0,
    };
    kind | if order == Order::Descending { KEY_DESCENDING } else { 0 }
}

/// What a sort of given keys takes: its tuning, portions and passes, whether pairs move
/// packed, and the modules it runs. (Made once a call: the policy's knob lookups cost.)
struct Plan {
    p: Policy,
    key_bytes: usize,
    value_bytes: usize,
    float_keys: bool,
    /// The tile class (small_tiles): which pass module.
    class: u32,
    len: usize,
    portion: usize,
    portions: usize,
    passes: usize,
    packed: bool,
}

/// What a sort holds before its first write: its kernels (histogram, pass, finish,
/// and the packing pass where pairs move packed) and its scratch (alternate keys,
/// alternate values, control block).
struct Acquired {
    kernels: [CUfunction; 3],
    packing: Option<CUfunction>,
    alt: CUdeviceptr,
    alt_values: CUdeviceptr,
    control: CUdeviceptr,
}

impl Plan {
    fn new(keys: &DeviceMemory, key_dtype: DType, values: Option<(&DeviceMemory, DType)>, len: usize) -> Result<Plan> {
        let key_bytes = key_dtype.size();
        let value_bytes = values.map_or(0, |(_, d)| d.size());
        let class = tile_class(key_bytes, value_bytes, len);
        let p = policy(key_bytes, value_bytes, class);
        let portion = p.portion_tiles() * p.tile();
        let portions = len.div_ceil(portion);
        if portions > MAX_PORTIONS {
            return Err(invalid(format!("{len} keys: at most {} can be sorted", portion * MAX_PORTIONS)));
        }
        // Pairs may move packed between passes (kernels/radix_sort.cu, "Packed pairs").
        let packed = packs(module_packs(key_bytes, value_bytes), len, keys.ptr, values.map_or(0, |(m, _)| m.ptr));
        let passes = key_bytes * 8 / RADIX_BITS;
        Ok(Plan { p, key_bytes, value_bytes, float_keys: key_dtype.is_float(), class, len, portion, portions, passes, packed })
    }

    /// The (histogram, pass, packing) modules' sources and variants.
    fn modules(&self) -> [(Source, u32); 3] {
        let (k, v, f, c) = (self.key_bytes, self.value_bytes, self.float_keys, self.class);
        [
            (sources::RADIX_HISTOGRAM, variant(k, 0, f)),
            (sources::RADIX_SORT, pass_variant(k, v, f, c, false)),
            (sources::RADIX_SORT, pass_variant(k, v, f, c, true)),
        ]
    }

    /// The spec of module `which` of `modules` (built only where a module is missing).
    fn spec(&self, which: usize) -> ModuleSpec {
        let (k, v, f, c) = (self.key_bytes, self.value_bytes, self.float_keys, self.class);
        match which {
            0 => histogram_module(k, f),
            which => pass_module(k, v, f, c, which == 2),
        }
    }

    /// On a first call the modules compile side by side (the packing one when packed),
    /// before the state lock is taken.
    fn compile(&self, shared: &CudaShared) -> Result<()> {
        self.compile_with(shared, &[])
    }

    /// The same, with `extra` modules the caller needs beside the sort's.
    fn compile_with(&self, shared: &CudaShared, extra: &[precompile::Wanted]) -> Result<()> {
        let [(s0, v0), (s1, v1), (s2, v2)] = self.modules();
        let (f0, f1, f2) = (|| self.spec(0), || self.spec(1), || self.spec(2));
        let own: [precompile::Wanted; 3] = [(s0, v0, &f0), (s1, v1, &f1), (s2, v2, &f2)];
        let own = &own[..if self.packed { 3 } else { 2 }];
        if extra.is_empty() {
            return precompile::compile_unloaded(shared, own); // (every sort call: no allocation)
        }
        let wanted: Vec<precompile::Wanted> = own.iter().chain(extra).copied().collect();
        precompile::compile_unloaded(shared, &wanted)
    }

    /// Everything the sort needs before its first write: kernels loaded, scratch
    /// allocated, look-back room for every pass reserved. The state lock must be held.
    fn acquire(&self, shared: &CudaShared, state: &mut State) -> Result<Acquired> {
        let (kernels, packing) = self.kernels(shared)?;
        state.reserve(self.needs())?;
        let alt = state.scratch.ptr;
        let alt_values = alt + round_up(self.len * self.key_bytes) as u64;
        Ok(Acquired { kernels, packing, alt, alt_values, control: alt_values + round_up(self.len * self.value_bytes) as u64 })
    }

    /// The kernels (histogram, pass, finish) and the packing pass where pairs move
    /// packed, their modules loaded on first use.
    fn kernels(&self, shared: &CudaShared) -> Result<([CUfunction; 3], Option<CUfunction>)> {
        let [(hist_source, hist_variant), (pass_source, pass_variant), (pack_source, pack_variant)] = self.modules();
        let load_hist = |kernel| shared.loader.function(hist_source, hist_variant, kernel, || self.spec(0));
        let load_pass = |kernel| shared.loader.function(pass_source, pass_variant, kernel, || self.spec(1));
        let kernels = [load_hist("radix_histogram")?, load_pass("radix_pass")?, load_pass("radix_finish")?];
        let packing = match self.packed {
            true => Some(shared.loader.function(pack_source, pack_variant, "radix_pass_packing", || self.spec(2))?),
            false => None,
        };
        Ok((kernels, packing))
    }

    /// The scratch (the alternate keys, the alternate values, the control block) and the
    /// look-back room of every pass.
    fn needs(&self) -> Needs {
        let scratch = round_up(self.len * self.key_bytes) + round_up(self.len * self.value_bytes) + CONTROL_BYTES;
        let most_tiles = self.portion.min(self.len).div_ceil(self.p.tile());
        // (With room for a few runs more: the top-k's selection runs between its
        // reservation and its sort.)
        Needs::scratch(scratch).then(Needs::digit_runs(most_tiles * RADIX, self.passes * self.portions + 16))
    }
}

/// For a call that sorts after its first write (the top-k sorts what it gathered into
/// its outputs): compiles the modules a sort of these keys (and values) runs, before
/// the state lock is taken; `reserve` then acquires the rest under it.
pub fn compile_for(shared: &CudaShared, keys: &DeviceMemory, key_dtype: DType, values: Option<(&DeviceMemory, DType)>, len: usize) -> Result<()> {
    compile_for_with(shared, keys, key_dtype, values, len, &[])
}

/// The same, with `extra` modules the caller needs, all side by side.
pub fn compile_for_with(
    shared: &CudaShared,
    keys: &DeviceMemory,
    key_dtype: DType,
    values: Option<(&DeviceMemory, DType)>,
    len: usize,
    extra: &[precompile::Wanted],
) -> Result<()> {
    match counting_sort::serves(key_dtype, values.is_some(), len) {
        true => precompile::compile_unloaded(shared, extra), // (its one small module is loaded by `reserve`)
        false => Plan::new(keys, key_dtype, values, len)?.compile_with(shared, extra),
    }
}

/// Acquires, ahead of a call's first write, everything a later sort of these keys
/// (and values) needs: kernels, scratch, look-back room. The state lock must be held.
pub fn reserve(
    shared: &CudaShared,
    state: &mut State,
    keys: &DeviceMemory,
    key_dtype: DType,
    values: Option<(&DeviceMemory, DType)>,
    len: usize,
) -> Result<()> {
    match counting_sort::serves(key_dtype, values.is_some(), len) {
        true => counting_sort::reserve(shared, state, key_dtype, len),
        false => Plan::new(keys, key_dtype, values, len)?.acquire(shared, state).map(|_| ()),
    }
}

/// For a caller that sorts several times after its first write (segmented top-k's
/// huge rows, each a top-k): compiles and loads the modules a sort of these keys (and
/// values) runs and says what else it takes, for the caller to acquire with the rest
/// (State::reserve). The state lock must be held.
pub fn prepare(shared: &CudaShared, keys: &DeviceMemory, key_dtype: DType, values: Option<(&DeviceMemory, DType)>, len: usize) -> Result<Needs> {
    if counting_sort::serves(key_dtype, values.is_some(), len) {
        return counting_sort::prepare(shared, key_dtype, len);
    }
    let plan = Plan::new(keys, key_dtype, values, len)?;
    plan.compile(shared)?;
    plan.kernels(shared)?;
    Ok(plan.needs())
}

pub fn sort(
    shared: &CudaShared,
    keys: &DeviceMemory,
    key_dtype: DType,
    values: Option<(&DeviceMemory, DType)>,
    len: usize,
    order: Order,
) -> Result<()> {
    if counting_sort::serves(key_dtype, values.is_some(), len) {
        return counting_sort::sort(shared, keys, key_dtype, len, order);
    }
    sort_digits(shared, keys, key_dtype, values, len, order, IN_PLACE)
}

/// Where a sort's result goes: the keys' and values' own buffers (0: in place), or
/// others. (Built in place by callers: an associated constant would land in the C
/// header, which cbindgen fills with the crate's public constants.)
#[derive(Clone, Copy)]
pub struct SortOut {
    pub keys: CUdeviceptr,
    pub values: CUdeviceptr,
}

const IN_PLACE: SortOut = SortOut { keys: 0, values: 0 };

/// The digit passes' sort (every width but the counting sort's), into `out`'s
/// buffers, which hold `len` keys (and values) apart from the input's (which then serve
/// as scratch), or in place (IN_PLACE).
pub fn sort_digits(
    shared: &CudaShared,
    keys: &DeviceMemory,
    key_dtype: DType,
    values: Option<(&DeviceMemory, DType)>,
    len: usize,
    order: Order,
    out: SortOut,
) -> Result<()> {
    let plan = Plan::new(keys, key_dtype, values, len)?;
    let values_ptr = values.map_or(0, |(m, _)| m.ptr);
    plan.compile(shared)?;

    let mut state = shared.lock()?;
    let stream = state.stream;
    let acquired = plan.acquire(shared, &mut state)?;
    // SAFETY: the control block lies inside the scratch memory.
    unsafe { drv::memset_d8_async(acquired.control, 0, CONTROL_BYTES, stream) }.during("cuMemsetD8Async (radix control)")?;
    let order_bits = key_order(key_dtype, order);
    let sort = Sort { shared, plan, acquired, keys: keys.ptr, values: values_ptr, out, stream, order_bits };
    sort.histogram_and_plan()?;
    sort.passes(&mut state)?;
    sort.finish()
}

/// One sort once its kernels and scratch are acquired and its control block cleared:
/// what its launches take.
///
/// Every launch of it relies on this (SAFETY): the arguments match the kernel's
/// parameters in kernels/radix_histogram.cu and kernels/radix_sort.cu; keys and values
/// hold `len` elements, the scratch memory holds the alternate buffers and the control
/// block, the sync memory the look-back words of one pass launch; each kernel's dynamic
/// shared memory is allowed (by `resident`) before its first launch.
struct Sort<'a> {
    shared: &'a CudaShared,
    plan: Plan,
    acquired: Acquired,
    /// The caller's keys and values (0: none).
    keys: CUdeviceptr,
    values: CUdeviceptr,
    /// Where the sorted keys and values go (IN_PLACE: the caller's).
    out: SortOut,
    stream: CUstream,
    order_bits: u32,
}

impl Sort<'_> {
    /// How many blocks of a kernel the GPU holds at once with `bytes` of dynamic shared
    /// memory (which the loader allows the kernel first, before its first launch).
    fn resident(&self, f: CUfunction, block: u32, bytes: u32) -> Result<u64> {
        let sms = self.shared.props.sm_count as u64;
        self.shared.loader.blocks_per_sm_with_shared(f, block, bytes).map(|n| n as u64 * sms)
    }

    /// The histogram of every digit in one read of the keys; its last block plans the
    /// passes.
    fn histogram_and_plan(&self) -> Result<()> {
        let (plan, p, a) = (&self.plan, &self.plan.p, &self.acquired);
        let [histogram, _, _] = a.kernels;
        let per_thread = 4 * (16 / plan.key_bytes) as u64; // the histogram reads four 16-byte vectors at a time
        let hist_shared = p.hist_shared_bytes(plan.key_bytes);
        let hist_grid = (plan.len as u64).div_ceil(per_thread * p.hist_block as u64).min(self.resident(histogram, p.hist_block, hist_shared)?);
        // SAFETY: as Sort says.
        unsafe {
            launch_with_shared(
                histogram,
                hist_grid,
                p.hist_block,
                hist_shared,
                self.stream,
                &[Arg::ptr(self.keys), Arg::size(plan.len), Arg::u32(self.order_bits), Arg::ptr(a.control)],
            )?;
        }
        Ok(())
    }

    /// The digit passes, least significant first, each a launch a portion of keys.
    fn passes(&self, state: &mut State) -> Result<()> {
        let (plan, p, a) = (&self.plan, &self.plan.p, &self.acquired);
        let tile_shared = p.tile_shared_bytes(plan.key_bytes, plan.value_bytes);
        // Where pairs move packed, every pass but the last digit's runs in a kernel of
        // its own (radix_pass_packing, which also unpacks when it is the last that runs).
        // (Each kernel with the number of its blocks the GPU holds at once.)
        let [_, pass_kernel, _] = a.kernels;
        let pass_kernel = (pass_kernel, self.resident(pass_kernel, p.block, tile_shared)?);
        let packing_kernel = match a.packing {
            Some(f) => Some((f, self.resident(f, p.block, tile_shared)?)),
            None => None,
        };
        for pass in 0..plan.passes {
            let (kernel, grid_limit) = packing_kernel.filter(|_| pass + 1 < plan.passes).unwrap_or(pass_kernel);
            for k in 0..plan.portions {
                let start = k * plan.portion;
                let tiles = (plan.len - start).min(plan.portion).div_ceil(p.tile());
                let (lookback, epoch) = state.sync.begin_digit_run(self.stream, tiles * RADIX)?;
                // SAFETY: as Sort says.
                unsafe {
                    launch_with_shared(
                        kernel,
                        if p.one_tile_blocks { tiles as u64 } else { (tiles as u64).min(grid_limit) },
                        p.block,
                        tile_shared,
                        self.stream,
                        &[
                            Arg::ptr(self.keys),
                            Arg::ptr(a.alt),
                            Arg::ptr(self.values),
                            Arg::ptr(a.alt_values),
                            Arg::size(plan.len),
                            Arg::size(start),
                            Arg::ptr(a.control),
                            Arg::ptr(lookback),
                            Arg::u32(pass as u32),
                            Arg::u32(k as u32),
                            Arg::u32(self.order_bits),
                            Arg::u32(epoch),
                            Arg::u32(plan.packed as u32),
                            Arg::ptr(self.out.keys),
                            Arg::ptr(self.out.values),
                        ],
                    )?;
                }
            }
        }
        Ok(())
    }

    /// The finishing launch: the reversal of an input in exactly the opposite order, or
    /// the copy back when the last pass wrote the alternate buffers.
    fn finish(&self) -> Result<()> {
        let (plan, p, a) = (&self.plan, &self.plan.p, &self.acquired);
        let [_, _, finish] = a.kernels;
        let finish_grid = (plan.len as u64).div_ceil(p.hist_block as u64).min(self.resident(finish, p.hist_block, 0)?);
        // SAFETY: as Sort says.
        unsafe {
            launch(
                finish,
                finish_grid,
                p.hist_block,
                self.stream,
                &[
                    Arg::ptr(self.keys),
                    Arg::ptr(a.alt),
                    Arg::ptr(self.values),
                    Arg::ptr(a.alt_values),
                    Arg::size(plan.len),
                    Arg::ptr(a.control),
                    Arg::ptr(self.out.keys),
                    Arg::ptr(self.out.values),
                ],
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind's small-tile classes grow with the length and end below the policy's
    /// tile; a length takes the first class whose bound it is within; every class's
    /// pass fits the dynamic shared memory a block may have.
    #[test]
    fn tile_classes_grow_with_the_length_and_fit() {
        for (k, v, _) in all_variants() {
            let classes = small_tiles(k, v);
            let items: Vec<u32> = (0..=classes.len() as u32).map(|c| policy(k, v, c).items).collect();
            for (i, pair) in classes.windows(2).enumerate() {
                assert!(pair[0].0 < pair[1].0 && pair[0].1 < pair[1].1, "keys {k}B values {v}B class {}", i + 1);
            }
            if let Some(&(_, last)) = classes.last() {
                assert!(last < items[0], "keys {k}B values {v}B: a small tile at least the policy's");
            }
            for (c, &(most, _)) in classes.iter().enumerate() {
                assert_eq!(tile_class(k, v, most), c as u32 + 1);
                assert_eq!(tile_class(k, v, most + 1), if c + 1 < classes.len() { c as u32 + 2 } else { 0 });
            }
            for c in 0..=classes.len() as u32 {
                let bytes = policy(k, v, c).tile_shared_bytes(k, v) as usize;
                assert!(bytes <= DYNAMIC_SHARED_LIMIT, "keys {k}B values {v}B class {c}: {bytes} bytes");
            }
        }
        assert_eq!(tile_class(4, 0, 1 << 16), 1);
        assert_eq!(tile_class(4, 0, 1 << 22), 2);
        assert_eq!(tile_class(4, 0, 1 << 24), 0);
    }
}
