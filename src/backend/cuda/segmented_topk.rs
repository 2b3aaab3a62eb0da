//! Planning and launching the top-k of every row (kernels/segmented_topk.cu): the
//! policy, the row classes and the launch of a class; the three ways a call goes:
//!
//! - uniform rows with one k (here): the host knows every row's class and launches one
//!   kernel over all rows, without waiting; a few long rows are split into parts first
//!   (split.rs);
//! - rows given by offsets, or one k a row (checked.rs): checked and filed on the
//!   device, the counts reported to the host (the call's one wait) before anything is
//!   written, then one launch a class over its list;
//! - rows of more than CAP results or too long for one block, in either (huge.rs): one
//!   device-wide top-k each, everything they take from the context acquired before the
//!   first launch that writes, so a failure (out of memory, say) leaves the outputs as
//!   they were.
//!
//! And gpuprims_topk of a short input, as one split row (one_row.rs).

use cudarc::driver::sys::CUdeviceptr;

use super::context::{CudaShared, State};
use super::launch::{launch, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::modules::Module;
use super::parts::Parts;
use super::sources::{self, Source};
use super::tuning::knob;
use super::{precompile, radix_sort, select};
use crate::backend::{TopkKs, TopkRows};
use crate::dtype::{DType, Order};
use crate::error::{unsupported, Result};

mod checked;
mod huge;
mod one_row;
mod split;

pub use one_row::topk_one_row;
use checked::checked;
use huge::{HugeRow, HugeRows};

const SOURCE: Source = sources::SEGMENTED_TOPK;
/// Layout flags (kernels/segmented_topk.cu: the same bits).
const RAGGED: u32 = 1;
const OFFSETS_U64: u32 = 2;
const KS_GIVEN: u32 = 4;
const KS_U64: u32 = 8;
/// Above this bit of the flags: the parts each uniform row is split into (split.rs).
const SPLIT_SHIFT: u32 = 8;
/// Block of the kernels that take a thread an item (topk_check, topk_widen,
/// topk_split_indices: __launch_bounds__(256)).
const ITEM_BLOCK: u32 = 256;
/// Classes (kernels/segmented_topk.cu: CLASS_*).
const CLASS_WARP: usize = 0;
const CLASS_BLOCK: usize = 1;
const CLASS_LONG: usize = 2;
const CLASS_HUGE: usize = 3;
const CLASSES: usize = 4;

/// Block sizes and keys a thread: rows of up to warp_max_len keys (at least 32 *
/// warp_items) wanting up to warp_k take a warp; rows longer than long_min wanting up
/// to long_block * long_sort_items a long block; other rows wanting up to block *
/// sort_items (CAP) a block; none longer than block_max_len.
struct Policy {
    warp_block: u32,
    warp_items: u32,
    warp_k: u32,
    warp_max_len: u32,
    stream_items: u32,
    block: u32,
    sort_items_4: u32,
    sort_items_8: u32,
    loads: u32,
    block_min_blocks: u32,
    refine_len: u32,
    long_block: u32,
    long_sort_items: u32,
    long_loads: u32,
    long_min: u64,
    long_rows_per_sm: u32,
    sample: u32,
    long_sample: u32,
    block_max_len: u64,
    split_sms_a_row: u32,
    split_rows_per_sm: u32,
    split_min_len: u64,
    /// A split row's parts and merge take the long block from this many keys (rather
    /// than from long_min): they are few rows, each with an SM or more to itself.
    split_long_min: u64,
    /// gpuprims_topk of up to one_row_max_len keys wanting up to one_row_max_k, their
    /// product up to one_row_max_work, is one split row (topk_one_row).
    one_row_max_len: u64,
    one_row_max_k: u64,
    one_row_max_work: u64,
}

fn policy() -> &'static Policy {
    static POLICY: once_cell::sync::Lazy<Policy> = once_cell::sync::Lazy::new(|| {
        let warp_items = knob("segtopk.warp_items", 8).clamp(1, 32);
        Policy {
            warp_block: knob("segtopk.warp_block", 256).clamp(32, 1024) / 32 * 32,
            warp_items,
            warp_k: knob("segtopk.warp_k", 16).clamp(1, 32),
            // A warp streams rows this long: one read, its best kept as it goes, many rows
            // an SM at once (a block a row waits on a dozen barriers). At least the rows it
            // reads at once.
            warp_max_len: knob("segtopk.warp_max_len", 8192).min(1 << 22).max(32 * warp_items),
            // Keys a lane a step of a streamed row.
            stream_items: knob("segtopk.stream_items", 4).clamp(1, 32),
            block: knob("segtopk.block", 256).clamp(64, 1024) / 32 * 32,
            sort_items_4: knob("segtopk.sort_items", 8).clamp(2, 16),
            sort_items_8: knob("segtopk.sort_items_8", 8).clamp(2, 16),
            loads: knob("segtopk.loads", 8).clamp(1, 16),
            // Short rows are many and each a chain of dependent steps: 5 blocks an SM
            // (48 registers) for keys up to 4 bytes, 4 for wider ones (which spill at 5).
            block_min_blocks: knob("segtopk.block_min_blocks", 5).clamp(1, 8),
            refine_len: knob("segtopk.refine_len", 8192),
            // Long rows want many loads in flight: a block of 1,024 threads, which fits
            // shared memory for 1,024 candidates (the sort's ranking takes 32 KiB).
            long_block: knob("segtopk.long_block", 1024).clamp(64, 1024) / 32 * 32,
            long_sort_items: knob("segtopk.long_sort_items", 1).clamp(1, 16),
            long_loads: knob("segtopk.long_loads", 16).clamp(1, 16),
            long_min: knob("segtopk.long_min", 16384) as u64,
            // Uniform long rows more than this many an SM take the block kernel instead.
            long_rows_per_sm: knob("segtopk.long_rows_per_sm", 4),
            sample: knob("segtopk.sample", 2048),
            // A long row's sample: 8 keys a thread; with 2,048 a 128,256-key row's
            // threshold often let more than 1,024 keys through.
            long_sample: knob("segtopk.long_sample", 8192),
            // Longer rows are many blocks' work: the device-wide top-k takes them.
            block_max_len: knob("segtopk.block_max_len", 1 << 22) as u64,
            // Uniform rows with at least split_sms_a_row SMs each are split into
            // split_rows_per_sm parts an SM, each of at least split_min_len keys (0 parts:
            // never split). With fewer SMs a row the merge costs more than the parts
            // gain (H100, 2026-11-27: 128 rows of 128,256 bf16, k = 50, 0.075 ms whole
            // against 0.089 split; 16 such rows 0.072 against 0.050; 32 rows of 2^20 f32,
            // k = 100, 0.69 against 0.13).
            split_sms_a_row: knob("segtopk.split_sms_a_row", 4),
            split_rows_per_sm: knob("segtopk.split_rows_per_sm", 4),
            split_min_len: knob("segtopk.split_min_len", 16384).max(1) as u64,
            // One row of 2^20 f32, k = 100 (H100, 2026-11-27): 64 parts of 16,384 and the
            // merge's 6,400 keys in blocks of 256, 43.7 us; in long blocks, 35.2 us.
            split_long_min: knob("segtopk.split_long_min", 2048) as u64,
            // One split row against the device-wide top-k, f32 (H100, 2026-11-27, us):
            // k = 100 2^16 31.5 / 50.7, 2^20 36.6 / 52.4, 2^21 43.2 / 55.8, 2^22 65.2 /
            // 59.9; k = 256 2^20 48.9 / 53.6, 2^21 54.2 / 55.2; k = 512 2^19 51.6 / 53.9,
            // 2^20 71.6 / 54.5; k = 1,024 2^16 52.1 / 53.4, 2^18 68.5 / 54.5. The merge
            // of parts * k keys grows with k.
            one_row_max_len: 1u64 << knob("segtopk.one_row_max_log2", 21).min(40),
            one_row_max_k: knob("segtopk.one_row_max_k", 512) as u64,
            one_row_max_work: 1u64 << knob("segtopk.one_row_max_work_log2", 28).min(62),
        }
    });
    &POLICY
}

impl Policy {
    fn sort_items(&self, key_bytes: usize) -> u32 {
        if key_bytes > 4 { self.sort_items_8 } else { self.sort_items_4 }
    }
    /// The most results a block row gives (the kernel's CAP).
    fn cap(&self, key_bytes: usize) -> u64 {
        (self.block * self.sort_items(key_bytes)) as u64
    }
    /// The class of a row of `n` keys wanting `k`, rows longer than `long_min` taking
    /// the long block where they may (with long_min: as the kernel's row_class).
    fn class(&self, n: u64, k: u64, key_bytes: usize, long_min: u64) -> usize {
        let m = k.min(n);
        if n <= self.warp_max_len as u64 && m <= self.warp_k as u64 {
            CLASS_WARP
        } else if n > long_min && m <= (self.long_block * self.long_sort_items) as u64 && n <= self.block_max_len {
            CLASS_LONG
        } else if m <= self.cap(key_bytes) && n <= self.block_max_len {
            CLASS_BLOCK
        } else {
            CLASS_HUGE
        }
    }
}

/// The module's three parts (kernels/segmented_topk.cu: GP_SEGTOPK_PART), compiled side
/// by side on a first call: the rows' check, the warp class and the split rows' and ks'
/// small kernels; the block class; the long class.
const PARTS: Parts = Parts { define: "GP_SEGTOPK_PART", count: 3, later: &[("topk_block", 1), ("topk_long", 2)] };

/// The loader's key of a part's module for (key width, float keys).
fn variant(key_bytes: usize, float_keys: bool, part: u32) -> u32 {
    PARTS.variant(select::variant(key_bytes, float_keys), part)
}

pub fn module(key_bytes: usize, float_keys: bool, part: u32) -> ModuleSpec {
    let p = policy();
    ModuleSpec {
        source: SOURCE,
        options: vec![
            PARTS.option(part),
            format!("-DGP_KEY_BYTES={key_bytes}"),
            format!("-DGP_KEY_FLOAT={}", float_keys as u32),
            format!("-DGP_WARP_BLOCK={}", p.warp_block),
            format!("-DGP_WARP_ITEMS={}", p.warp_items),
            format!("-DGP_WARP_K={}", p.warp_k),
            format!("-DGP_WARP_MAX_LEN={}", p.warp_max_len),
            format!("-DGP_STREAM_ITEMS={}", p.stream_items),
            format!("-DGP_BLOCK={}", p.block),
            format!("-DGP_SORT_ITEMS={}", p.sort_items(key_bytes)),
            format!("-DGP_LOADS={}", p.loads),
            format!("-DGP_BLOCK_MIN_BLOCKS={}", if key_bytes > 4 { p.block_min_blocks.min(4) } else { p.block_min_blocks }),
            format!("-DGP_REFINE_LEN={}", p.refine_len),
            format!("-DGP_LONG_BLOCK={}", p.long_block),
            format!("-DGP_LONG_SORT_ITEMS={}", p.long_sort_items),
            format!("-DGP_LONG_LOADS={}", p.long_loads),
            format!("-DGP_LONG_MIN={}", p.long_min),
            format!("-DGP_SAMPLE={}", p.sample),
            format!("-DGP_LONG_SAMPLE={}", p.long_sample),
        ],
    }
}

/// Three parts per key width, and float keys of 2, 4 and 8 bytes.
pub fn modules() -> Vec<Module> {
    select::KEY_VARIANTS
        .into_iter()
        .flat_map(|(k, f)| PARTS.all().map(move |part| (k, f, part)))
        .map(|(k, f, part)| Module {
            source: SOURCE,
            variant: variant(k, f, part),
            spec: module(k, f, part),
            label: format!("keys {k}B{} part {part}", if f { " float" } else { "" }),
        })
        .collect()
}

fn function(shared: &CudaShared, key_bytes: usize, float_keys: bool, name: &'static str) -> Result<cudarc::driver::sys::CUfunction> {
    let part = PARTS.of(name);
    shared.loader.function(SOURCE, variant(key_bytes, float_keys, part), name, || module(key_bytes, float_keys, part))
}

/// A first call's compiles, the three parts side by side (nothing once they are loaded).
fn compile_parts(shared: &CudaShared, key_bytes: usize, float_keys: bool) -> Result<()> {
    let specs: Vec<_> = PARTS.all().map(|part| move || module(key_bytes, float_keys, part)).collect();
    let wanted: Vec<precompile::Wanted> =
        PARTS.all().zip(&specs).map(|(part, spec)| (SOURCE, variant(key_bytes, float_keys, part), spec as _)).collect();
    precompile::compile_unloaded(shared, &wanted)
}

/// The rows as the kernels take them (kernels/segmented_topk.cu: struct Rows).
struct RowArgs {
    offsets: CUdeviceptr,
    ks: CUdeviceptr,
    bases: CUdeviceptr,
    row_len: u64,
    k: u64,
    flags: u32,
}

/// Where one call's outputs go.
pub struct Outputs<'a> {
    pub values: &'a DeviceMemory,
    pub indices: Option<&'a DeviceMemory>,
    pub len: usize,
}

/// What every phase of one call takes: the context, the input, the order, the outputs.
struct Call<'a> {
    shared: &'a CudaShared,
    values: &'a DeviceMemory,
    dtype: DType,
    len: usize,
    order: Order,
    key_order: u32,
    out: &'a Outputs<'a>,
}

/// gpuprims_segmented_topk on the device (arguments checked by the FFI layer).
#[allow(clippy::too_many_arguments)]
pub fn segmented_topk(
    shared: &CudaShared,
    values: &DeviceMemory,
    dtype: DType,
    len: usize,
    rows: &TopkRows,
    ks: &TopkKs,
    order: Order,
    out: &Outputs,
) -> Result<()> {
    let nrows = rows.nrows();
    if nrows == 0 {
        return Ok(());
    }
    if nrows > i32::MAX as usize {
        return Err(unsupported(format!("{nrows} rows: at most 2^31 - 1 on CUDA for now")));
    }
    let call = Call { shared, values, dtype, len, order, key_order: radix_sort::key_order(dtype, order), out };
    match (rows, ks) {
        (TopkRows::Uniform { row_len, .. }, TopkKs::Each(k)) => uniform(&call, nrows, *row_len as u64, *k as u64),
        _ => checked(&call, rows, ks),
    }
}

/// Uniform rows, one k: every row in the same class, no check, no wait.
fn uniform(call: &Call, nrows: usize, row_len: u64, k: u64) -> Result<()> {
    if k == 0 {
        return Ok(());
    }
    let class = uniform_class(call, nrows as u64, row_len, k);
    let split = split::plan(call, nrows as u64, row_len, k, class);
    if split.is_some() || class != CLASS_HUGE {  // (huge rows go through the device-wide top-k)
        compile_parts(call.shared, call.dtype.size(), call.dtype.is_float())?;
    }
    let mut state = call.shared.lock()?;
    if let Some(split) = split {
        return split::run(call, &mut state, nrows as u64, row_len, k, &split);
    }
    if class == CLASS_HUGE {
        let huge = HugeRows((0..nrows as u64).map(|r| HugeRow { begin: r * row_len, n: row_len, k, base: r * k }).collect());
        huge.reserve(call, &mut state)?;
        drop(state);
        return huge.run(call);
    }
    let args = RowArgs { offsets: 0, ks: 0, bases: 0, row_len, k, flags: 0 };
    launch_class(call, &state, &args, class, None, nrows as u64)
}

/// The class of `nrows` uniform rows of `row_len` keys wanting k.
fn uniform_class(call: &Call, nrows: u64, row_len: u64, k: u64) -> usize {
    uniform_class_from(call, nrows, row_len, k, policy().long_min)
}

/// The same, with rows longer than `long_min` taking the long block where they may.
fn uniform_class_from(call: &Call, nrows: u64, row_len: u64, k: u64, long_min: u64) -> usize {
    let key_bytes = call.dtype.size();
    let class = policy().class(row_len, k, key_bytes, long_min);
    // The long block's 1,024 threads keep one row a time an SM busy: right for a few
    // long rows, but many such rows go faster five 256-thread blocks an SM at a time.
    let few = nrows <= policy().long_rows_per_sm as u64 * call.shared.props.sm_count as u64;
    match class == CLASS_LONG && !few && k.min(row_len) <= policy().cap(key_bytes) {
        true => CLASS_BLOCK,
        false => class,
    }
}

/// The row kernel of `class` (a warp, block or long class), its part's module loaded
/// on first use: a call that launches several classes looks them all up before its
/// first write, so that a failed load leaves the outputs as they were.
fn class_kernel(call: &Call, class: usize) -> Result<cudarc::driver::sys::CUfunction> {
    let name = match class {
        CLASS_WARP => "topk_warp",
        CLASS_LONG => "topk_long",
        _ => "topk_block",
    };
    function(call.shared, call.dtype.size(), call.dtype.is_float(), name)
}

/// One launch of the warp, block or long class over `count` rows: those of `ids` (a
/// device list), or rows 0..count.
fn launch_class(call: &Call, state: &State, rows: &RowArgs, class: usize, ids: Option<CUdeviceptr>, count: u64) -> Result<()> {
    let p = policy();
    let mut args = vec![
        Arg::ptr(call.values.ptr),
        Arg::size(call.len),
        Arg::ptr(rows.offsets),
        Arg::ptr(rows.ks),
        Arg::ptr(rows.bases),
        Arg::u32(rows.flags),
        Arg::u64(rows.row_len),
        Arg::u64(rows.k),
        Arg::ptr(ids.unwrap_or(0)),
    ];
    let f = class_kernel(call, class)?;
    let (grid, block) = if class == CLASS_WARP {
        args.push(Arg::u64(count));
        let warps = (p.warp_block / 32) as u64;
        (count.div_ceil(warps), p.warp_block)
    } else if class == CLASS_LONG {
        (count, p.long_block)
    } else {
        (count, p.block)
    };
    let out = call.out;
    args.extend([
        Arg::ptr(out.values.ptr),
        Arg::ptr(out.indices.map_or(0, |m| m.ptr)),
        Arg::size(out.len),
        Arg::u32(call.key_order),
    ]);
    // SAFETY: arguments match topk_warp / topk_block / topk_long; `ids` (when given) holds `count`
    // row ids below nrows, the rows lie inside values (uniform rows by the FFI's
    // checks, ragged ones checked by topk_check and clamped again in the kernel), every
    // write is bounded by out.len.
    unsafe { launch(f, grid, block, state.stream, &args) }
}
