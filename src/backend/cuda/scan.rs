//! Planning and launching the single-pass scan (kernels/scan.cu).

use super::context::{CudaShared, SCAN_TICKET_OFFSET, STATUS_OFFSET};
use super::launch::{launch, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::sources;
use super::tuning::knob;
use crate::dtype::{DType, Op, ScanMode};
use crate::error::Result;

/// Tuning: threads per block and items per thread (whole 16-byte vectors).
struct Policy {
    block: u32,
    items: u32,
}

fn policy(dtype: DType) -> Policy {
    // Measured on the H100 (BENCHMARKS.md): larger tiles amortise the per-tile
    // look-back; 128 bytes per thread for 4- and 8-byte types, 64 for narrow ones
    // (whose items each take a register).
    let items = match dtype.size() {
        1 => 64,
        2 => 32,
        4 => 32,
        _ => 16,
    };
    Policy { block: knob("scan.block", 256), items: knob(&format!("scan.items{}", dtype.size()), items) }
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
    let p = policy(dtype);
    let tiles = len.div_ceil((p.block * p.items) as usize);
    // One window of `block` tiles per anchor (kernels/common/lookback.cuh).
    let anchors = tiles.div_ceil(p.block as usize) + 1;

    let mut state = shared.lock()?;
    let stream = state.stream;
    let kernel = match (op, mode) {
        (Op::Sum, ScanMode::Inclusive) => "scan_sum_inclusive",
        (Op::Sum, ScanMode::Exclusive) => "scan_sum_exclusive",
        (Op::Min, ScanMode::Inclusive) => "scan_min_inclusive",
        (Op::Min, ScanMode::Exclusive) => "scan_min_exclusive",
        (Op::Max, ScanMode::Inclusive) => "scan_max_inclusive",
        (Op::Max, ScanMode::Exclusive) => "scan_max_exclusive",
    };
    let f = shared.loader.function(sources::SCAN, dtype, kernel, || module(dtype))?;
    state.sync.ensure(stream, tiles)?;
    let size = dtype.size() as u64;
    let aggregate = state.scratch.ensure(stream, (tiles + 2 * anchors) * dtype.size())?;
    let window_total = aggregate + tiles as u64 * size;
    let inclusive = window_total + anchors as u64 * size;
    let sync = &mut state.sync;
    let (epoch, ticket_base) = (sync.epoch, sync.tickets_issued);
    let args = [
        Arg::ptr(input.ptr),
        Arg::ptr(output.ptr),
        Arg::size(len),
        Arg::ptr(sync.ptr + STATUS_OFFSET as u64),
        Arg::ptr(aggregate),
        Arg::ptr(window_total),
        Arg::ptr(inclusive),
        Arg::ptr(sync.ptr + SCAN_TICKET_OFFSET as u64),
        Arg::u32(epoch),
        Arg::u64(ticket_base),
    ];
    // SAFETY: arguments match scan_<op>_<mode>(in, out, n, status, aggregate,
    // window_total, inclusive, ticket, epoch, ticket_base); the state holds `tiles`
    // status words and the scratch the three value arrays.
    unsafe { launch(f, tiles as u64, p.block, stream, &args)? };
    sync.epoch += 1;
    sync.tickets_issued += tiles as u64;
    Ok(())
}
