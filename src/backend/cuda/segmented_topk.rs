//! Planning and launching the top-k of every row (kernels/segmented_topk.cu).
//!
//! Uniform rows with one k need nothing from the device: the host knows every row's
//! class and launches one kernel over all rows, without waiting (a few long rows are
//! split into parts first: split.rs). Rows given by
//! offsets, or one k a row, are checked on the device first (topk_check: the first
//! bad row, the class lists, the ks' total), whose last block reports the counts in the
//! mapped result slot, on which the host spins (the call's one wait) before anything is
//! written; with ks, a scan of them gives each row's first slot. Then the warp class,
//! the block class and the long class each get one launch over their list, and the
//! rows of none (more than CAP results, or too long for one block) go one
//! by one through the device-wide top-k. Those huge rows are read back (their ids, then
//! their offsets and ks a span of nearby ids at a time) and everything their top-ks
//! take from the context is acquired before the first launch that writes: a failure
//! (out of memory, say) leaves the outputs as they were.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUstream};

use super::context::{round_up, CudaShared, Needs, State, RESULT_SLOT_BYTES};
use super::launch::{launch, Arg};
use super::loader::ModuleSpec;
use super::memory::{read_to_host, DeviceMemory};
use super::modules::Module;
use super::driver::DriverContext;
use super::sources::{self, Source};
use super::tuning::knob;
use super::{precompile, radix_sort, scan, select};
use crate::backend::{ks_total_mismatch, TopkKs, TopkRowFault, TopkRows};
use crate::dtype::{DType, Op, Order, ScanMode};
use crate::error::{unsupported, Result};

mod split;

const SOURCE: Source = sources::SEGMENTED_TOPK;
/// Layout flags (kernels/segmented_topk.cu: the same bits).
const RAGGED: u32 = 1;
const OFFSETS_U64: u32 = 2;
const KS_GIVEN: u32 = 4;
const KS_U64: u32 = 8;
/// Classes (kernels/segmented_topk.cu: CLASS_*).
const CLASS_WARP: usize = 0;
const CLASS_BLOCK: usize = 1;
const CLASS_LONG: usize = 2;
const CLASS_HUGE: usize = 3;
const CLASSES: usize = 4;
const CHECK_BLOCK: u32 = 256;

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
    /// The class of a row of `n` keys wanting `k` (as the kernel's row_class).
    fn class(&self, n: u64, k: u64, key_bytes: usize) -> usize {
        let m = k.min(n);
        if n <= self.warp_max_len as u64 && m <= self.warp_k as u64 {
            CLASS_WARP
        } else if n > self.long_min && m <= (self.long_block * self.long_sort_items) as u64 && n <= self.block_max_len {
            CLASS_LONG
        } else if m <= self.cap(key_bytes) && n <= self.block_max_len {
            CLASS_BLOCK
        } else {
            CLASS_HUGE
        }
    }
}

pub fn module(key_bytes: usize, float_keys: bool) -> ModuleSpec {
    let p = policy();
    ModuleSpec {
        source: SOURCE,
        options: vec![
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

/// One module per key width, and float keys of 2, 4 and 8 bytes.
pub fn modules() -> Vec<Module> {
    select::KEY_VARIANTS
        .into_iter()
        .map(|(k, f)| Module {
            source: SOURCE,
            variant: select::variant(k, f),
            spec: module(k, f),
            label: format!("keys {k}B{}", if f { " float" } else { "" }),
        })
        .collect()
}

fn function(shared: &CudaShared, key_bytes: usize, float_keys: bool, name: &'static str) -> Result<cudarc::driver::sys::CUfunction> {
    shared.loader.function(SOURCE, select::variant(key_bytes, float_keys), name, || module(key_bytes, float_keys))
}

/// The check's counters on the device (kernels/segmented_topk.cu: struct Counters),
/// zeroed before it.
#[repr(C)]
struct Counters {
    counts: [u32; CLASSES],
    fault: u64,
    k_low: u64,
    k_high: u64,
    arrived: u32,
}
const COUNTERS_BYTES: usize = std::mem::size_of::<Counters>();

/// The counters as the check's last block reports them in the mapped result slot
/// (kernels/segmented_topk.cu: struct Report): `status` tagged, written last.
#[repr(C)]
#[derive(Clone, Copy)]
struct Report {
    status: u64,
    counts: [u32; CLASSES],
    fault: u64,
    k_low: u64,
    k_high: u64,
}
const _: () = assert!(std::mem::size_of::<Report>() <= RESULT_SLOT_BYTES);

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
    let key_bytes = dtype.size();
    let float_keys = dtype.is_float();
    precompile::compile_unloaded(shared, &[(SOURCE, select::variant(key_bytes, float_keys), &|| module(key_bytes, float_keys))])?;
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
    let parts = split::parts(call, nrows as u64, row_len, k, class);
    let mut state = call.shared.lock()?;
    if parts > 1 {
        return split::run(call, &mut state, nrows as u64, row_len, k, parts);
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
    let key_bytes = call.dtype.size();
    let class = policy().class(row_len, k, key_bytes);
    // The long block's 1,024 threads keep one row a time an SM busy: right for a few
    // long rows, but many such rows go faster five 256-thread blocks an SM at a time.
    let few = nrows <= policy().long_rows_per_sm as u64 * call.shared.props.sm_count as u64;
    match class == CLASS_LONG && !few && k.min(row_len) <= policy().cap(key_bytes) {
        true => CLASS_BLOCK,
        false => class,
    }
}

/// One launch of the warp, block or long class over `count` rows: those of `ids` (a
/// device list), or rows 0..count.
fn launch_class(call: &Call, state: &State, rows: &RowArgs, class: usize, ids: Option<CUdeviceptr>, count: u64) -> Result<()> {
    let p = policy();
    let (key_bytes, float_keys) = (call.dtype.size(), call.dtype.is_float());
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
    let (f, grid, block) = if class == CLASS_WARP {
        args.push(Arg::u64(count));
        let warps = (p.warp_block / 32) as u64;
        (function(call.shared, key_bytes, float_keys, "topk_warp")?, count.div_ceil(warps), p.warp_block)
    } else if class == CLASS_LONG {
        (function(call.shared, key_bytes, float_keys, "topk_long")?, count, p.long_block)
    } else {
        (function(call.shared, key_bytes, float_keys, "topk_block")?, count, p.block)
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

/// A row the device-wide top-k takes.
struct HugeRow {
    begin: u64,
    n: u64,
    k: u64,
    base: u64,
}

/// The rows of more than CAP results (or too long for one block): one device-wide
/// top-k each, into views of the outputs; slots past a row's length padded.
struct HugeRows(Vec<HugeRow>);

/// Memory of `bytes` at byte `at` of `mem`, borrowed.
fn view(mem: &DeviceMemory, at: u64, bytes: u64) -> DeviceMemory {
    DeviceMemory { ptr: mem.ptr + at, bytes: bytes as usize, owner: None }
}

impl HugeRow {
    /// How many results the row gives (the rest of its k are pads).
    fn m(&self) -> u64 {
        self.k.min(self.n)
    }

    /// Where its top-k goes: the views of the outputs its m results take.
    fn outputs(&self, out: &Outputs, size: u64) -> (DeviceMemory, Option<DeviceMemory>) {
        let m = self.m();
        (view(out.values, self.base * size, m * size), out.indices.map(|ix| view(ix, self.base * 8, m * 8)))
    }
}

impl HugeRows {
    /// Before anything of the call is written: loads every module the rows' top-ks run
    /// and acquires the most scratch and look-back room any of them takes and the tags
    /// of all of them, so that none allocates once rows are written (a failure leaves
    /// the outputs as they were). The state lock must be held.
    fn reserve(&self, call: &Call, state: &mut State) -> Result<()> {
        let size = call.dtype.size() as u64;
        let mut needs = Needs::default();
        for r in self.0.iter().filter(|r| r.m() > 0) {
            let (vals, idx) = r.outputs(call.out, size);
            needs = needs.then(select::prepare_topk(call.shared, call.dtype, r.n as usize, r.m() as usize, &vals, idx.as_ref())?);
        }
        state.reserve(needs)
    }

    /// The rows' top-ks and pads (after `reserve`; takes the state lock itself).
    fn run(&self, call: &Call) -> Result<()> {
        let (shared, out) = (call.shared, call.out);
        let size = call.dtype.size() as u64;
        for r in &self.0 {
            let m = r.m();
            if m > 0 {
                let input = view(call.values, r.begin * size, r.n * size);
                let (vals, idx) = r.outputs(out, size);
                select::topk(shared, &input, call.dtype, r.n as usize, m as usize, call.order, &vals, idx.as_ref())?;
            }
            if r.k > m {
                let state = shared.lock()?;
                let pads = r.k - m;
                // SAFETY: the slots lie inside the outputs (the FFI checked their lengths).
                unsafe {
                    drv::memset_d8_async(out.values.ptr + (r.base + m) * size, 0, (pads * size) as usize, state.stream)
                        .during("cuMemsetD8Async (top-k pads)")?;
                    if let Some(ix) = out.indices {
                        drv::memset_d8_async(ix.ptr + (r.base + m) * 8, 0xff, (pads * 8) as usize, state.stream)
                            .during("cuMemsetD8Async (top-k pads)")?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Scratch of a checked call: the counters, CLASSES lists of nrows ids, and (with ks)
/// the rows' first slots, with room for the ks widened to u64 when they are U32. It
/// lies in the step scratch: the huge rows' top-ks take the scratch, and may grow it
/// after the lists are filled and before the other classes read them.
struct CheckScratch {
    counters: CUdeviceptr,
    lists: CUdeviceptr,
    bases: CUdeviceptr,
    widened: CUdeviceptr,
}

impl CheckScratch {
    fn new(state: &mut State, nrows: usize, with_ks: bool) -> Result<CheckScratch> {
        let stream = state.stream;
        let lists_at = round_up(COUNTERS_BYTES);
        let bases_at = lists_at + round_up(CLASSES * nrows * 4);
        let widened_at = bases_at + if with_ks { round_up(nrows * 8) } else { 0 };
        let total = widened_at + if with_ks { round_up(nrows * 8) } else { 0 };
        let base = state.step_scratch.ensure(stream, total)?;
        // SAFETY: the counters lie inside the scratch memory.
        unsafe { drv::memset_d8_async(base, 0, COUNTERS_BYTES, stream) }.during("cuMemsetD8Async (top-k counters)")?;
        Ok(CheckScratch {
            counters: base,
            lists: base + lists_at as u64,
            bases: base + bases_at as u64,
            widened: base + widened_at as u64,
        })
    }

    /// The device list of the rows of `class`.
    fn list(&self, class: usize, nrows: usize) -> CUdeviceptr {
        self.lists + (class * nrows * 4) as u64
    }
}

const READ_WHAT: &str = "copying the top-k's rows from the device";

/// `count` U32 or U64 (`wide`) entries of the array at `ptr` from entry `first`, as
/// u64 (one copy, waited for).
fn read_entries(stream: CUstream, ptr: CUdeviceptr, first: u64, count: usize, wide: bool) -> Result<Vec<u64>> {
    // SAFETY (both): the caller's entries lie inside the array; numbers have no
    // invalid patterns.
    if wide {
        let mut entries = vec![0u64; count];
        unsafe { read_to_host(stream, ptr + first * 8, &mut entries, READ_WHAT) }?;
        Ok(entries)
    } else {
        let mut entries = vec![0u32; count];
        unsafe { read_to_host(stream, ptr + first * 4, &mut entries, READ_WHAT) }?;
        Ok(entries.into_iter().map(u64::from).collect())
    }
}

/// Ragged rows or one k a row: the device checks and files the rows (and, with ks,
/// scans them into each row's first slot); the host reads the verdict, reads and
/// prepares the huge rows, then launches.
fn checked(call: &Call, rows: &TopkRows, ks: &TopkKs) -> Result<()> {
    let nrows = rows.nrows();
    let mut state = call.shared.lock()?;
    let s = CheckScratch::new(&mut state, nrows, matches!(ks, TopkKs::PerRow { .. }))?;
    let args = row_args(rows, ks, &s)?;
    if args.flags & KS_GIVEN != 0 {
        row_starts(call, &mut state, &args, &s, nrows)?;
    }
    let c = check(call, &mut state, &args, &s, nrows)?;
    verdict(&c, rows, ks, state.stream, call.len, call.out.len)?;
    // What the huge rows need is acquired before the first write.
    let huge = match c.counts[CLASS_HUGE] as usize {
        0 => None,
        count => {
            let huge = HugeRows(read_huge_rows(state.stream, &args, s.list(CLASS_HUGE, nrows), count)?);
            huge.reserve(call, &mut state)?;
            Some(huge)
        }
    };
    for class in [CLASS_WARP, CLASS_BLOCK, CLASS_LONG] {
        let count = c.counts[class] as u64;
        if count > 0 {
            launch_class(call, &state, &args, class, Some(s.list(class, nrows)), count)?;
        }
    }
    drop(state);
    huge.map_or(Ok(()), |huge| huge.run(call))
}

/// The rows as the kernels take them, from the call's rows and ks.
fn row_args(rows: &TopkRows, ks: &TopkKs, s: &CheckScratch) -> Result<RowArgs> {
    let mut args = RowArgs { offsets: 0, ks: 0, bases: 0, row_len: 0, k: 0, flags: 0 };
    match *rows {
        TopkRows::Uniform { row_len, .. } => args.row_len = row_len as u64,
        TopkRows::Ragged { offsets, offsets_dtype, .. } => {
            args.offsets = offsets.as_device()?.ptr;
            args.flags |= RAGGED | if offsets_dtype == DType::U64 { OFFSETS_U64 } else { 0 };
        }
    }
    match *ks {
        TopkKs::Each(k) => args.k = k as u64,
        TopkKs::PerRow { ks, dtype: ks_dtype } => {
            args.ks = ks.as_device()?.ptr;
            args.flags |= KS_GIVEN | if ks_dtype == DType::U64 { KS_U64 } else { 0 };
            args.bases = s.bases;
        }
    }
    Ok(args)
}

/// topk_check over the rows, and its report of the counters (the call's wait: a spin
/// on the mapped slot, which returns sooner than a copy and a stream synchronize).
fn check(call: &Call, state: &mut State, args: &RowArgs, s: &CheckScratch, nrows: usize) -> Result<Report> {
    let check = function(call.shared, call.dtype.size(), call.dtype.is_float(), "topk_check")?;
    // Clears the slot's first words (the status among them) and gives the call's tag.
    let tag = call.shared.begin_host_value(state, DType::U64);
    let check_args = [
        Arg::ptr(args.offsets),
        Arg::ptr(args.ks),
        Arg::u32(args.flags),
        Arg::u64(args.row_len),
        Arg::u64(args.k),
        Arg::size(call.len),
        Arg::size(nrows),
        Arg::u64(policy().block_max_len),
        Arg::ptr(s.counters),
        Arg::ptr(s.lists),
        Arg::ptr(call.shared.result_slot.device),
        Arg::u32(tag),
    ];
    // SAFETY: arguments match topk_check; offsets hold nrows + 1 entries, ks nrows, the
    // scratch the counters and CLASSES lists of nrows ids, the slot a Report.
    unsafe { launch(check, (nrows as u64).div_ceil(CHECK_BLOCK as u64), CHECK_BLOCK, state.stream, &check_args)? };
    call.shared.wait_for_slot_tag(state.stream, std::mem::offset_of!(Report, status), tag)?;
    // SAFETY: the slot is pinned host memory of RESULT_SLOT_BYTES >= size_of::<Report>(),
    // aligned to a page; its writer wrote every field before `status`.
    Ok(unsafe { std::ptr::read_volatile(call.shared.result_slot.host as *const Report) })
}

/// Each row's first slot, the exclusive scan of the ks (widened to u64 first when they
/// are U32), into s.bases.
fn row_starts(call: &Call, state: &mut State, args: &RowArgs, s: &CheckScratch, nrows: usize) -> Result<()> {
    let mut from = args.ks;
    if args.flags & KS_U64 == 0 {
        let widen = function(call.shared, call.dtype.size(), call.dtype.is_float(), "topk_widen")?;
        let blocks = (nrows as u64).div_ceil(CHECK_BLOCK as u64);
        // SAFETY: ks holds nrows u32, `widened` room for nrows u64.
        unsafe { launch(widen, blocks, CHECK_BLOCK, state.stream, &[Arg::ptr(args.ks), Arg::ptr(s.widened), Arg::size(nrows)])? };
        from = s.widened;
    }
    scan::scan_locked(call.shared, state, from, s.bases, DType::U64, nrows, Op::Sum, ScanMode::Exclusive, None)
}

/// The first bad row's error, or the ks' total against the output's length.
fn verdict(c: &Report, rows: &TopkRows, ks: &TopkKs, stream: CUstream, len: usize, out_len: usize) -> Result<()> {
    if c.fault != 0 {
        let fault = !c.fault;
        let row = fault >> 2;
        if let (Some(f), TopkRows::Ragged { offsets, offsets_dtype, .. }) = (TopkRowFault::from_code((fault & 3) as u32), rows) {
            let pair = read_entries(stream, offsets.as_device()?.ptr, row, 2, *offsets_dtype == DType::U64)?;
            return Err(f.error(row, pair[0], pair[1], len));
        }
    }
    if let TopkKs::PerRow { .. } = ks {
        let total = c.k_low as u128 + ((c.k_high as u128) << 32);
        if total != out_len as u128 {
            return Err(ks_total_mismatch(out_len, u64::try_from(total).ok()));
        }
    }
    Ok(())
}

/// Ids this close share one copy of what lies between them.
const SPAN_GAP: u32 = 512;

/// The rows of the huge class, in id order: their ids (the check's `list` of `count`),
/// then, for each span of nearby ids, their offsets, ks and first slots in one copy
/// each (only what the call has: uniform rows and one k need none).
fn read_huge_rows(stream: CUstream, args: &RowArgs, list: CUdeviceptr, count: usize) -> Result<Vec<HugeRow>> {
    let mut ids = vec![0u32; count];
    // SAFETY: the list holds `count` ids (the check's count of the class).
    unsafe { read_to_host(stream, list, &mut ids, READ_WHAT) }?;
    ids.sort_unstable();
    let (ragged, ks_given) = (args.flags & RAGGED != 0, args.flags & KS_GIVEN != 0);
    let mut rows = Vec::with_capacity(count);
    for span in ids.chunk_by(|a, b| b - a <= SPAN_GAP) {
        let first = span[0] as u64;
        let entries = (span[span.len() - 1] as u64 - first + 1) as usize;
        let offsets = match ragged {
            true => read_entries(stream, args.offsets, first, entries + 1, args.flags & OFFSETS_U64 != 0)?,
            false => Vec::new(),
        };
        let (ks, bases) = match ks_given {
            true => (read_entries(stream, args.ks, first, entries, args.flags & KS_U64 != 0)?, read_entries(stream, args.bases, first, entries, true)?),
            false => (Vec::new(), Vec::new()),
        };
        for &id in span {
            let (id, at) = (id as u64, (id as u64 - first) as usize);
            let (begin, n) = if ragged { (offsets[at], offsets[at + 1] - offsets[at]) } else { (id * args.row_len, args.row_len) };
            let (k, base) = if ks_given { (ks[at], bases[at]) } else { (args.k, id * args.k) };
            rows.push(HugeRow { begin, n, k, base });
        }
    }
    Ok(rows)
}
