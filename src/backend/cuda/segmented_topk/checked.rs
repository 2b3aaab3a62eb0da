//! Ragged rows, or one k a row: topk_check files every row under its class and finds
//! the first bad one; its last block reports the counts in the mapped result slot, on
//! which the host spins (the call's one wait) before anything is written. With ks, a
//! scan of them gives each row's first slot. Then one launch a class over its list,
//! and the huge rows through the device-wide top-k: read back (their ids, then their
//! offsets and ks a span of nearby ids at a time) and prepared before any launch writes.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUstream};

use super::huge::{HugeRow, HugeRows};
use super::{class_kernel, compile_parts, function, launch_class, policy, Call, RowArgs, CLASSES, ITEM_BLOCK, CLASS_BLOCK, CLASS_HUGE, CLASS_LONG, CLASS_WARP};
use super::{KS_GIVEN, KS_U64, OFFSETS_U64, RAGGED};
use crate::backend::cuda::context::{round_up, State};
use crate::backend::cuda::driver::DriverContext;
use crate::backend::cuda::launch::{launch, Arg};
use crate::backend::cuda::memory::read_to_host;
use crate::backend::cuda::scan;
use crate::backend::{ks_total_mismatch, TopkKs, TopkRowFault, TopkRows};
use crate::dtype::{DType, Op, ScanMode};
use crate::error::Result;

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
pub(super) fn checked(call: &Call, rows: &TopkRows, ks: &TopkKs) -> Result<()> {
    let nrows = rows.nrows();
    compile_parts(call.shared, call.dtype.size(), call.dtype.is_float())?;  // (the check's class is not known yet)
    let mut state = call.shared.lock()?;
    let s = CheckScratch::new(&mut state, nrows, matches!(ks, TopkKs::PerRow { .. }))?;
    let args = row_args(rows, ks, &s)?;
    if args.flags & KS_GIVEN != 0 {
        row_starts(call, &mut state, &args, &s, nrows)?;
    }
    let c = check(call, &mut state, &args, &s, nrows)?;
    verdict(&c, rows, ks, state.stream, call.len, call.out.len)?;
    // The classes' kernels and what the huge rows need are acquired before the first
    // write (each class's kernel may lie in a module of its own).
    let classes: Vec<(usize, u64)> =
        [CLASS_WARP, CLASS_BLOCK, CLASS_LONG].into_iter().map(|class| (class, c.counts[class] as u64)).filter(|&(_, n)| n > 0).collect();
    for &(class, _) in &classes {
        class_kernel(call, class)?;
    }
    let huge = match c.counts[CLASS_HUGE] as usize {
        0 => None,
        count => {
            let huge = HugeRows(read_huge_rows(state.stream, &args, s.list(CLASS_HUGE, nrows), count)?);
            huge.reserve(call, &mut state)?;
            Some(huge)
        }
    };
    for (class, count) in classes {
        launch_class(call, &state, &args, class, Some(s.list(class, nrows)), count)?;
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
    let status = std::mem::offset_of!(Report, status);
    let tag = call.shared.begin_report::<Report>(state, status);
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
    unsafe { launch(check, (nrows as u64).div_ceil(ITEM_BLOCK as u64), ITEM_BLOCK, state.stream, &check_args)? };
    call.shared.wait_for_report::<Report>(state.stream, status, tag)
}

/// Each row's first slot, the exclusive scan of the ks (widened to u64 first when they
/// are U32), into s.bases.
fn row_starts(call: &Call, state: &mut State, args: &RowArgs, s: &CheckScratch, nrows: usize) -> Result<()> {
    let mut from = args.ks;
    if args.flags & KS_U64 == 0 {
        let widen = function(call.shared, call.dtype.size(), call.dtype.is_float(), "topk_widen")?;
        let blocks = (nrows as u64).div_ceil(ITEM_BLOCK as u64);
        // SAFETY: ks holds nrows u32, `widened` room for nrows u64.
        unsafe { launch(widen, blocks, ITEM_BLOCK, state.stream, &[Arg::ptr(args.ks), Arg::ptr(s.widened), Arg::size(nrows)])? };
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
