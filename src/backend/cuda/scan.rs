//! Planning and launching the single-pass scan (kernels/scan.cu).

use super::context::{CudaShared, SCAN_TICKET_OFFSET, STATUS_OFFSET};
use super::launch::{launch, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::sources;
use crate::dtype::{DType, Op, ScanMode};
use crate::error::Result;

/// Tuning: threads per block and items per thread (whole 16-byte vectors).
struct Policy {
    block: u32,
    items: u32,
}

fn policy(dtype: DType) -> Policy {
    match dtype.size() {
        1 => Policy { block: 256, items: 32 },
        2 => Policy { block: 256, items: 16 },
        4 => Policy { block: 256, items: 16 },
        _ => Policy { block: 256, items: 8 },
    }
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

    let mut state = shared.lock()?;
    let stream = state.stream;
    let f = shared.loader.function(&module(dtype), &format!("scan_{}_{}", op.name(), mode.name()))?;
    state.sync.ensure(stream, tiles)?;
    let values = state.scratch.ensure(stream, 2 * tiles * dtype.size())?;
    let sync = &mut state.sync;
    let (epoch, ticket_base) = (sync.epoch, sync.tickets_issued);
    let args = [
        Arg::ptr(input.ptr),
        Arg::ptr(output.ptr),
        Arg::size(len),
        Arg::ptr(sync.ptr + STATUS_OFFSET as u64),
        Arg::ptr(values),
        Arg::ptr(values + (tiles * dtype.size()) as u64),
        Arg::ptr(sync.ptr + SCAN_TICKET_OFFSET as u64),
        Arg::u32(epoch),
        Arg::u64(ticket_base),
    ];
    // SAFETY: arguments match scan_<op>_<mode>(in, out, n, status, aggregate,
    // inclusive, ticket, epoch, ticket_base); the state holds `tiles` entries.
    unsafe { launch(f, tiles as u64, p.block, stream, &args)? };
    sync.epoch += 1;
    sync.tickets_issued += tiles as u64;
    Ok(())
}
