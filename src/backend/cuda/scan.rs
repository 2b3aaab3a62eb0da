//! Planning and launching the single-pass scan (kernels/scan.cu).

use cudarc::driver::sys::CUdeviceptr;

use super::context::{tagged_words, CudaShared, State, SCAN_TICKET_OFFSET};
use super::launch::{launch, Arg};
use super::loader::{variant, ModuleSpec};
use super::memory::DeviceMemory;
use super::modules::Module;
use super::sources;
use super::tuning::knob;
use crate::dtype::{DType, Op, ScanMode};
use crate::error::Result;

/// Tuning: threads per block, items per thread (whole 16-byte vectors) and tiles
/// per look-back window (a multiple of 32: one warp reads a window's aggregates).
struct Policy {
    block: u32,
    items: u32,
    window: u32,
}

fn policy(dtype: DType) -> Policy {
    // Measured on the H100 (BENCHMARKS.md): larger tiles amortise the per-tile
    // look-back; 128 bytes per thread for 4-byte types (160 was no faster overall),
    // 160 for 8-byte ones (the most that fits 48 KiB of static shared memory; 1-2%
    // faster than 128), 64 for narrow ones.
    let (items_knob, items) = match dtype.size() {
        1 => ("scan.items1", 64),
        2 => ("scan.items2", 32),
        4 => ("scan.items4", 32),
        _ => ("scan.items8", 20),
    };
    // Wider windows mean fewer anchor links but more loads per look-back lane; 64
    // measured best for i32 and u64 (128 and 256 were slower).
    let window = 64;
    Policy {
        block: knob("scan.block", 256),
        items: knob(items_knob, items),
        window: knob("scan.window", window),
    }
}

/// Every module of the scan, one per dtype, for gpuprims_context_precompile (modules.rs).
pub fn modules() -> Vec<Module> {
    DType::ALL
        .iter()
        .map(|&d| Module { source: sources::SCAN, variant: variant(d), spec: module(d), label: d.name().to_string() })
        .collect()
}

/// The scan module for `dtype`.
pub fn module(dtype: DType) -> ModuleSpec {
    let p = policy(dtype);
    ModuleSpec {
        source: sources::SCAN,
        options: vec![
            format!("-DGP_T={}", dtype.cuda_name()),
            format!("-DGP_BLOCK_THREADS={}", p.block),
            format!("-DGP_ITEMS={}", p.items),
            format!("-DGP_LOOKBACK_WINDOW={}", p.window),
            format!("-DGP_STREAMING_IO={}", knob("scan.streaming", 1)),
        ],
    }
}

pub fn scan(
    shared: &CudaShared,
    input: &DeviceMemory,
    output: &DeviceMemory,
    dtype: DType,
    len: usize,
    op: Op,
    mode: ScanMode,
) -> Result<()> {
    let mut state = shared.lock()?;
    scan_locked(shared, &mut state, input.ptr, output.ptr, dtype, len, op, mode)
}

/// The scan of `len` elements at `input` into `output` (may be `input`), issued by a
/// primitive that holds the state lock (the quicksort scans its bucket counts).
#[allow(clippy::too_many_arguments)]
pub fn scan_locked(
    shared: &CudaShared,
    state: &mut State,
    input: CUdeviceptr,
    output: CUdeviceptr,
    dtype: DType,
    len: usize,
    op: Op,
    mode: ScanMode,
) -> Result<()> {
    let p = policy(dtype);
    let tiles = len.div_ceil((p.block * p.items) as usize);
    // Anchors are tiles 0, window, 2 * window, ...
    let anchors = tiles.div_ceil(p.window as usize);
    let words = tagged_words(dtype);

    let stream = state.stream;
    let kernel = match (op, mode) {
        (Op::Sum, ScanMode::Inclusive) => "scan_sum_inclusive",
        (Op::Sum, ScanMode::Exclusive) => "scan_sum_exclusive",
        (Op::Min, ScanMode::Inclusive) => "scan_min_inclusive",
        (Op::Min, ScanMode::Exclusive) => "scan_min_exclusive",
        (Op::Max, ScanMode::Inclusive) => "scan_max_inclusive",
        (Op::Max, ScanMode::Exclusive) => "scan_max_exclusive",
    };
    let f = shared.loader.function(sources::SCAN, variant(dtype), kernel, || module(dtype))?;
    let sync = &mut state.sync;
    let (aggregate, epoch) = sync.begin_run(stream, (tiles + anchors) * words)?;
    let inclusive = aggregate + (tiles * words * 8) as u64;
    let ticket_base = sync.tickets_issued;
    let args = [
        Arg::ptr(input),
        Arg::ptr(output),
        Arg::size(len),
        Arg::ptr(aggregate),
        Arg::ptr(inclusive),
        Arg::ptr(sync.ptr + SCAN_TICKET_OFFSET as u64),
        Arg::u32(epoch),
        Arg::u64(ticket_base),
    ];
    // SAFETY: arguments match scan_<op>_<mode>(in, out, n, aggregate, inclusive,
    // ticket, epoch, ticket_base); the sync memory holds `words` tagged words for
    // each tile and each anchor.
    unsafe { launch(f, tiles as u64, p.block, stream, &args)? };
    sync.tickets_issued += tiles as u64;
    Ok(())
}
