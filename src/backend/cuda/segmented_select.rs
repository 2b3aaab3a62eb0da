//! Planning and launching the segmented select (kernels/segmented_select.cu).
//!
//! One launch: its first blocks check every row (a lane a few) and file the long ones
//! under their length class, and the last of them writes the class counts and the
//! first bad row (if any) into the context's mapped result slot, which the host waits
//! for (the call's one wait), and posts the verdict on the device. Its other blocks
//! select the short rows, a warp a few: in a grid resident at once (a cooperative
//! launch) each warp waits for the verdict and writes its answers to `out` itself; a
//! larger grid stages them, and a copy launch behind it writes them under a clean
//! verdict. A bad row fails the call with `out` never written (a copy launch already
//! queued finds the verdict bad and writes nothing) and nothing more launched;
//! otherwise each non-empty class of long rows gets one launch, sized from its count.
//! The offsets never travel to the host.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUfunction, CUstream};

use super::context::{round_up, CudaShared, State, RESULT_SLOT_BYTES};
use super::driver::DriverContext;
use super::launch::{launch, launch_cooperative, Arg};
use super::loader::ModuleSpec;
use super::memory::{alloc_async, DeviceMemory};
use super::modules::Module;
use super::radix_sort;
use super::select;
use super::precompile;
use super::sources::{self, Source};
use super::tuning::knob;
use crate::backend::RowFault;
use crate::dtype::{DType, Order};
use crate::error::{unsupported, Result};

/// Length classes (kernels/segmented_select.cu: CLASS_*), in the report's order.
const CLASSES: usize = 5;
const COMMIT_BLOCK: u32 = 256;
/// Flags of the rows' layout (passed to the kernels as GP_OFFSETS_U64, GP_RANKS_GIVEN
/// and GP_RANKS_U64: kernels/segmented_select_rows.cuh).
const OFFSETS_U64: u32 = 1;
const RANKS_GIVEN: u32 = 2;
const RANKS_U64: u32 = 4;
/// Where segsel_short's flags carry the rows each checking lane checks (passed to the
/// kernels as GP_CHECK_RUN_SHIFT).
const CHECK_RUN_SHIFT: u32 = 8;
const _: () = assert!((OFFSETS_U64 | RANKS_GIVEN | RANKS_U64) >> CHECK_RUN_SHIFT == 0);
/// The low bits of a word that hold a row's fault code, the row's number or the
/// call's above them (passed to the kernels as GP_FAULT_BITS): the report's status,
/// the counters' fault and the verdict.
const FAULT_BITS: u32 = 3;
const FAULT_MASK: u64 = (1 << FAULT_BITS) - 1;
/// Calls are numbered 1..=LAST_CALL_NUMBER, then from 1 again: the kernel's verdict word
/// keeps the number above its fault code, and a word of 0 stands there for one not read
/// yet, which no call's number matches.
const LAST_CALL_NUMBER: u32 = (1 << (32 - FAULT_BITS)) - 1;

/// The number of the call after call `n` (0: none yet).
fn next_call_number(n: u32) -> u32 {
    n % LAST_CALL_NUMBER + 1
}

/// Bytes of the device counters (kernels/segmented_select.cu: struct Counters), zeroed
/// once; the short-row launch leaves them so but for the verdict, tagged by call.
pub(super) const COUNTERS_BYTES: usize = 256;

/// Block sizes and keys a thread of each class: rows up to 32 * warp_items keys take a
/// warp (bit by bit, two bits a step, for keys up to bitwise_bytes wide, else a digit
/// at a time), up to mid_block * mid_items, wide_block * wide_items and wider_block *
/// wider_items a block holding them in registers, longer ones a block reading the row
/// once a digit.
struct Policy {
    warp_block: u32,
    warp_items: u32,
    mid_block: u32,
    mid_items: u32,
    wide_block: u32,
    wide_items: u32,
    wider_block: u32,
    wider_items: u32,
    long_block: u32,
    bitwise_bytes: u32,
    /// Warps of the short-row kernel resident an SM, for keys up to 4 bytes (its
    /// register limit).
    warp_min_warps: u32,
    /// Rows a warp (1..32; 0: as few as keep the grid resident, or, for more rows than
    /// that allows, enough for about two warps a resident slot).
    rows_per_warp: u32,
    /// Checking warps an SM the rows' checks aim at (each lane a run of rows, up to
    /// max_checks): a call whose rows need more of them takes longer runs instead.
    checking_warps: u32,
    max_checks: u32,
    /// 0: never the cooperative launch (every grid stages its answers for segsel_commit).
    resident: u32,
}

/// The policy, read once a process (knobs do not change in between).
fn policy() -> &'static Policy {
    static POLICY: once_cell::sync::Lazy<Policy> = once_cell::sync::Lazy::new(read_policy);
    &POLICY
}

fn read_policy() -> Policy {
    Policy {
        // Whole warps, up to 1,024 threads.
        warp_block: knob("segsel.warp_block", 256).clamp(32, 1024) / 32 * 32,
        // 6 (rows up to 192 a warp's): the 1M-row median 0.443-0.456 ms against
        // 0.463-0.466 with 8 (H100, 2026-11-24).
        // Up to 15: a warp's count of keys fits below the guard bit of a 10-bit field
        // (kernels/common/warp_bitwise_select.cuh).
        warp_items: knob("segsel.warp_items", 6).clamp(1, 15),
        mid_block: knob("segsel.mid_block", 128),
        mid_items: knob("segsel.mid_items", 8),
        wide_block: knob("segsel.wide_block", 256),
        wide_items: knob("segsel.wide_items", 16),
        wider_block: knob("segsel.wider_block", 512),
        wider_items: knob("segsel.wider_items", 16),
        long_block: knob("segsel.long_block", 1024),
        bitwise_bytes: knob("segsel.bitwise_bytes", 4),
        warp_min_warps: knob("segsel.warp_min_warps", 64).clamp(1, 64),
        rows_per_warp: knob("segsel.rows_per_warp", 0),
        resident: knob("segsel.resident", 1),
        checking_warps: knob("segsel.checking_warps", 4).max(1),
        max_checks: knob("segsel.max_checks", 8).clamp(1, 255),
    }
}

/// The short-row module and the long-row one, compiled with the same defines.
const SOURCES: [Source; 2] = [sources::SEGMENTED_SELECT, sources::SEGMENTED_SELECT_LONG];

pub fn module(source: Source, key_bytes: usize, float_keys: bool) -> ModuleSpec {
    let p = policy();
    ModuleSpec {
        source,
        options: vec![
            format!("-DGP_KEY_BYTES={key_bytes}"),
            format!("-DGP_KEY_FLOAT={}", float_keys as u32),
            format!("-DGP_COMMIT_BLOCK={COMMIT_BLOCK}"),
            format!("-DGP_OFFSETS_U64={OFFSETS_U64}"),
            format!("-DGP_RANKS_GIVEN={RANKS_GIVEN}"),
            format!("-DGP_RANKS_U64={RANKS_U64}"),
            format!("-DGP_CHECK_RUN_SHIFT={CHECK_RUN_SHIFT}"),
            format!("-DGP_FAULT_BITS={FAULT_BITS}"),
            format!("-DGP_WARP_MIN_WARPS={}", p.warp_min_warps),
            format!("-DGP_WARP_BITWISE={}", (key_bytes as u32 <= p.bitwise_bytes) as u32),
            format!("-DGP_WARP_BLOCK={}", p.warp_block),
            format!("-DGP_WARP_ITEMS={}", p.warp_items),
            format!("-DGP_MID_BLOCK={}", p.mid_block),
            format!("-DGP_MID_ITEMS={}", p.mid_items),
            format!("-DGP_WIDE_BLOCK={}", p.wide_block),
            format!("-DGP_WIDE_ITEMS={}", p.wide_items),
            format!("-DGP_WIDER_BLOCK={}", p.wider_block),
            format!("-DGP_WIDER_ITEMS={}", p.wider_items),
            format!("-DGP_LONG_BLOCK={}", p.long_block),
        ],
    }
}

/// Each source per key width, and float keys of 4 and 8 bytes.
pub fn modules() -> Vec<Module> {
    SOURCES
        .into_iter()
        .flat_map(|source| {
            select::KEY_VARIANTS.into_iter().map(move |(k, f)| Module {
                source,
                variant: select::variant(k, f),
                spec: module(source, k, f),
                label: format!("keys {k}B{}", if f { " float" } else { "" }),
            })
        })
        .collect()
}

/// The report the short-row launch's publishing block writes (kernels/segmented_select.cu:
/// struct Report): `status` last, alone when the call is clean and has no long rows.
#[repr(C)]
#[derive(Clone, Copy)]
struct Report {
    counts: [u32; CLASSES],
    row: u64,
    begin: u64,
    end: u64,
    rank: u64,
    /// The call's number (high half), DETAILED | the fault (low half).
    status: u64,
}

/// The report's fields before `status` were written (kernels/segmented_select.cu).
const DETAILED: u64 = 1 << 8;

const _: () = assert!(std::mem::size_of::<Report>() <= RESULT_SLOT_BYTES);

/// Waits for the report of the short-row launch numbered `seq` (the slot's status word
/// tagged with it, CudaShared::wait_for_report); fields before `status` count only where
/// the kernel wrote them (DETAILED), else they are an earlier call's and read as zero.
fn read_report(shared: &CudaShared, stream: CUstream, seq: u32) -> Result<Report> {
    let report: Report = shared.wait_for_report(stream, STATUS_OFFSET, seq)?;
    if report.status & DETAILED == 0 {
        return Ok(Report { counts: [0; CLASSES], row: 0, begin: 0, end: 0, rank: 0, status: report.status });
    }
    Ok(report)
}

/// Where the report's status word lies in the slot.
const STATUS_OFFSET: usize = std::mem::offset_of!(Report, status);

/// The device counters (allocated and zeroed on first use; every short-row launch
/// leaves them zeroed but for the verdict, tagged with its call's number) and the
/// number of this call.
fn begin_call(state: &mut State) -> Result<(CUdeviceptr, u32)> {
    if state.segsel.counters == 0 {
        // SAFETY: stream-ordered allocation and clear on the context's stream.
        unsafe {
            let ptr = alloc_async(state.stream, COUNTERS_BYTES, "segmented select counters")?;
            drv::memset_d8_async(ptr, 0, COUNTERS_BYTES, state.stream).during("cuMemsetD8Async")?;
            state.segsel.counters = ptr;
        }
    }
    state.segsel.calls = next_call_number(state.segsel.calls);
    Ok((state.segsel.counters, state.segsel.calls))
}

/// The kernels of one module variant (key width, float keys): the short-row kernel
/// (and how many of its blocks the GPU holds at once), its commit, and the kernel of
/// each longer row class (by_class[0] is the short one).
#[derive(Clone, Copy)]
pub struct SegselKernels {
    variant: u32,
    short: CUfunction,
    resident_blocks: u64,
    commit: CUfunction,
    by_class: [CUfunction; CLASSES],
    /// A module is loaded quick (tiers.rs): looked up again on the next call, which
    /// swaps in the optimised one.
    quick: bool,
}

/// The kernels for (key width, float keys), looked up once a context, all before a
/// call's first launch (so a module that fails to load leaves `out` untouched). The
/// module, function and occupancy lookups took about 0.3 us of every call's host time
/// before its launch, and that time counts in the call's latency. The first call of a
/// key width compiles both modules side by side, with the context's lock held (other
/// calls on the context wait for it once).
fn kernels(shared: &CudaShared, state: &mut State, key_bytes: usize, float_keys: bool) -> Result<SegselKernels> {
    let v = select::variant(key_bytes, float_keys);
    if let Some(i) = state.segsel.kernels.iter().position(|k| k.variant == v) {
        if !state.segsel.kernels[i].quick {
            return Ok(state.segsel.kernels[i]);
        }
        state.segsel.kernels.swap_remove(i);
    }
    let spec = |source: Source| move || module(source, key_bytes, float_keys);
    let (short_spec, long_spec) = (spec(SOURCES[0]), spec(SOURCES[1]));
    precompile::compile_unloaded(shared, &[(SOURCES[0], v, &short_spec), (SOURCES[1], v, &long_spec)])?;
    let short = function(shared, SOURCES[0], key_bytes, float_keys, "segsel_short")?;
    let resident_blocks = shared.resident_blocks(short, policy().warp_block)?;
    let commit = function(shared, SOURCES[0], key_bytes, float_keys, "segsel_commit")?;
    let mut by_class = [short; CLASSES];
    for (class, name) in CLASS_KERNELS.iter().enumerate().skip(1) {
        by_class[class] = function(shared, SOURCES[1], key_bytes, float_keys, name)?;
    }
    let quick = SOURCES.iter().any(|&s| shared.loader.is_quick(s, v));
    let k = SegselKernels { variant: v, short, resident_blocks, commit, by_class, quick };
    state.segsel.kernels.push(k);
    Ok(k)
}

/// The kernel of each row class (the short rows' is segsel_short, above).
const CLASS_KERNELS: [&str; CLASSES] = ["segsel_short", "segsel_mid", "segsel_wide", "segsel_wider", "segsel_long"];

fn function(shared: &CudaShared, source: Source, key_bytes: usize, float_keys: bool, kernel: &'static str) -> Result<CUfunction> {
    shared.loader.function(source, select::variant(key_bytes, float_keys), kernel, || module(source, key_bytes, float_keys))
}

/// What one call takes, worked out once its kernels are looked up (their occupancy
/// shapes the grid) and before anything else is acquired: the rows' layout, the
/// checking lanes' runs, the short-row grid and whether it may be resident at once,
/// and the scratch's layout.
struct Plan {
    len: usize,
    nrows: usize,
    /// The rows' layout: OFFSETS_U64, RANKS_GIVEN, RANKS_U64.
    flags: u32,
    key_order: u32,
    /// Rows each checking lane checks, and the checking blocks at the grid's start.
    run: u64,
    vblocks: u64,
    /// Whether the grid may be launched cooperatively, its warps writing `out`.
    fits: bool,
    per_warp: u64,
    grid: u64,
    /// Bytes of a class's list of row ids, where the staged answers start after the
    /// CLASSES lists, and of the whole scratch.
    list_bytes: usize,
    staged_at: usize,
    scratch_bytes: usize,
}

impl Plan {
    /// `offsets_u64`: 8-byte offsets; `ranks_u64`: ranks given (8 bytes each or 4).
    fn new(shared: &CudaShared, k: &SegselKernels, dtype: DType, len: usize, offsets_u64: bool, nrows: usize, ranks_u64: Option<bool>) -> Plan {
        let resident_blocks = k.resident_blocks;
        let p = policy();
        let warps_a_block = (p.warp_block / 32) as u64;
        // The grid's first blocks check the rows, a lane a run of them: one row for calls
        // up to a few checking warps an SM, longer runs past that (up to max_checks), so
        // that the checking blocks take few of the resident slots.
        let sms = shared.props.sm_count as u64;
        let run = (nrows as u64).div_ceil(32 * p.checking_warps as u64 * sms).clamp(1, p.max_checks as u64);
        let vblocks = (nrows as u64).div_ceil(run * 32 * warps_a_block);
        // Blocks resident at once (resident_blocks): a grid that fits them is launched
        // cooperatively, and its warps write their answers to `out` themselves.
        let selecting_warps = resident_blocks.saturating_sub(vblocks) * warps_a_block;
        let fits = p.resident != 0 && (nrows as u64) <= 32 * selecting_warps;
        let per_warp = match (p.rows_per_warp, fits) {
            (0, true) => (nrows as u64).div_ceil(selecting_warps).max(1),
            // About two warps a resident slot, the rest of the rows a warp's serial work.
            (0, false) => (nrows as u64).div_ceil(2 * resident_blocks * warps_a_block).clamp(1, 32),
            (r, _) => r.clamp(1, 32) as u64,
        };
        // CLASSES lists of nrows ids, one after another (the kernel's row_ids), then the
        // staged answers.
        let list_bytes = nrows * 4;
        let staged_at = round_up(CLASSES * list_bytes);
        let flags = if offsets_u64 { OFFSETS_U64 } else { 0 }
            | match ranks_u64 {
                Some(wide) => RANKS_GIVEN | if wide { RANKS_U64 } else { 0 },
                None => 0,
            };
        Plan {
            len,
            nrows,
            flags,
            key_order: radix_sort::key_order(dtype, Order::Ascending),
            run,
            vblocks,
            fits,
            per_warp,
            grid: vblocks + (nrows as u64).div_ceil(warps_a_block * per_warp),
            list_bytes,
            staged_at,
            scratch_bytes: staged_at + round_up(nrows * dtype.size()),
        }
    }
}

/// One call once its counters and scratch are acquired: what its launches take.
struct Call<'a> {
    shared: &'a CudaShared,
    plan: Plan,
    k: SegselKernels,
    stream: CUstream,
    /// The caller's values, offsets, ranks (0: none) and answers.
    values: CUdeviceptr,
    offsets: CUdeviceptr,
    ranks: CUdeviceptr,
    out: CUdeviceptr,
    counters: CUdeviceptr,
    /// This call's number.
    seq: u32,
    /// The CLASSES lists of row ids, and the staged answers.
    ids: CUdeviceptr,
    staged: CUdeviceptr,
}

/// For each of `nrows` rows given by `offsets` (nrows + 1 entries, 8 bytes each when
/// `offsets_u64`, else 4) its element of rank `ranks[row]` (or the lower median) into
/// `out`.
#[allow(clippy::too_many_arguments)]
pub fn segmented_select(
    shared: &CudaShared,
    values: &DeviceMemory,
    dtype: DType,
    len: usize,
    offsets: (&DeviceMemory, bool),
    nrows: usize,
    ranks: Option<(&DeviceMemory, bool)>,
    out: &DeviceMemory,
) -> Result<()> {
    if nrows == 0 {
        return Ok(());
    }
    // Row ids are u32, and a class of block-per-row launches must fit one grid.
    if nrows > i32::MAX as usize {
        return Err(unsupported(format!("{nrows} rows: at most 2^31 - 1 on CUDA for now")));
    }
    let mut state = shared.lock()?;
    let k = kernels(shared, &mut state, dtype.size(), dtype.is_float())?;
    let plan = Plan::new(shared, &k, dtype, len, offsets.1, nrows, ranks.map(|(_, wide)| wide));
    let stream = state.stream;
    let (counters, seq) = begin_call(&mut state)?;
    let ids = state.scratch.ensure(stream, plan.scratch_bytes)?;
    let staged = ids + plan.staged_at as u64;
    let ranks = ranks.map_or(0, |(m, _)| m.ptr);
    let call = Call { shared, plan, k, stream, values: values.ptr, offsets: offsets.0.ptr, ranks, out: out.ptr, counters, seq, ids, staged };
    // No earlier content of the slot may pass for this call's report.
    shared.clear_slot_word(&mut state, STATUS_OFFSET);
    call.check_and_select_short_rows()?;
    let report = read_report(shared, stream, seq)?;
    if let Some(fault) = RowFault::from_code((report.status & FAULT_MASK) as u32) {
        return Err(fault.error(report.row, report.begin, report.end, report.rank, len));
    }
    // The short rows are done; the long ones, checked, go by class.
    call.select_long_rows(&report)
}

impl Call<'_> {
    /// The short-row launch: its first blocks check every row and report, the others
    /// select the short rows; resident at once where it fits (cooperative), else with
    /// segsel_commit behind it to write the staged answers.
    fn check_and_select_short_rows(&self) -> Result<()> {
        let (plan, p, k) = (&self.plan, policy(), &self.k);
        let short_flags = plan.flags | (plan.run as u32) << CHECK_RUN_SHIFT;
        let args = |resident: bool| {
            [
                Arg::ptr(self.values),
                Arg::size(plan.len),
                Arg::ptr(self.offsets),
                Arg::ptr(self.ranks),
                Arg::u32(short_flags),
                Arg::size(plan.nrows),
                Arg::u32(plan.per_warp as u32),
                Arg::u32(plan.vblocks as u32),
                Arg::ptr(self.counters),
                Arg::ptr(self.ids),
                Arg::ptr(self.staged),
                Arg::u32(resident as u32),
                Arg::ptr(self.shared.result_slot.device),
                Arg::u32(self.seq),
                Arg::ptr(self.out),
                Arg::u32(plan.key_order),
            ]
        };
        // SAFETY: arguments match segsel_short and segsel_commit; offsets hold nrows + 1
        // entries and ranks nrows, the scratch CLASSES lists of nrows ids and nrows staged
        // answers, the counters COUNTERS_BYTES, the mapped slot a Report, out nrows
        // elements. Either writes `out` only once every row is checked and none is bad. A
        // resident grid (every block at once, or the launch is refused and nothing runs)
        // lets its warps wait for the verdict.
        unsafe {
            let resident = plan.fits && plan.grid <= k.resident_blocks && launch_cooperative(k.short, plan.grid, p.warp_block, self.stream, &args(true))?;
            if !resident {
                launch(k.short, plan.grid, p.warp_block, self.stream, &args(false))?;
                let commit = k.commit;
                let sms = self.shared.props.sm_count as u64;
                let blocks = (plan.nrows as u64).div_ceil(COMMIT_BLOCK as u64).min(sms * 16);
                launch(
                    commit,
                    blocks,
                    COMMIT_BLOCK,
                    self.stream,
                    &[Arg::ptr(self.staged), Arg::size(plan.nrows), Arg::ptr(self.counters), Arg::u32(self.seq), Arg::ptr(self.out)],
                )?;
            }
        }
        Ok(())
    }

    /// One launch for each class of long rows the report counts, a block a row.
    #[allow(clippy::needless_range_loop)] // `class` indexes three tables
    fn select_long_rows(&self, report: &Report) -> Result<()> {
        let (plan, p) = (&self.plan, policy());
        let blocks = [0, p.mid_block, p.wide_block, p.wider_block, p.long_block];
        for class in 1..CLASSES {
            let count = report.counts[class] as u64;
            if count == 0 {
                continue;
            }
            let f = self.k.by_class[class];
            let list = self.ids + (class * plan.list_bytes) as u64;
            let args = [
                Arg::ptr(self.values),
                Arg::size(plan.len),
                Arg::ptr(self.offsets),
                Arg::ptr(self.ranks),
                Arg::u32(plan.flags),
                Arg::ptr(list),
                Arg::ptr(self.out),
                Arg::u32(plan.key_order),
            ];
            // SAFETY: arguments match the class's kernel; the list holds `count` ids of
            // rows checked above, out nrows elements.
            unsafe { launch(f, count, blocks[class], self.stream, &args)? };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_numbers_stay_in_the_verdict_words_bits_and_never_repeat_back_to_back() {
        assert_eq!(next_call_number(0), 1);
        assert_eq!(next_call_number(1), 2);
        assert_eq!(next_call_number(LAST_CALL_NUMBER - 1), LAST_CALL_NUMBER);
        assert_eq!(next_call_number(LAST_CALL_NUMBER), 1);
        for n in [0, 1, 12345, LAST_CALL_NUMBER - 1, LAST_CALL_NUMBER] {
            let next = next_call_number(n);
            assert!(next != 0 && next < 1 << 29 && next != n);
        }
    }
}
