//! Planning and launching the device-wide reduce (kernels/reduce.cu).

use super::context::{CudaShared, REDUCE_TICKET_OFFSET};
use super::launch::{launch, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::sources;
use crate::dtype::{DType, Op};
use crate::error::Result;

/// Tuning: threads per block and 16-byte loads per thread per tile.
struct Policy {
    block: u32,
    vecs: u32,
}

fn policy(_dtype: DType) -> Policy {
    Policy { block: 256, vecs: 4 }
}

/// The reduce module for `dtype`.
pub fn module(dtype: DType) -> ModuleSpec {
    let p = policy(dtype);
    ModuleSpec {
        source: sources::REDUCE,
        options: vec![
            format!("-DGP_T={}", dtype.cuda_name()),
            format!("-DGP_BLOCK_THREADS={}", p.block),
            format!("-DGP_VECS={}", p.vecs),
        ],
    }
}

pub fn reduce(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, op: Op, out: &mut [u8]) -> Result<()> {
    if len == 0 {
        out.fill(0); // SUM of nothing; MIN/MAX were refused before.
        return Ok(());
    }
    let p = policy(dtype);
    let tile = (p.block * p.vecs) as usize * (16 / dtype.size());
    // A resident grid: enough blocks to fill every SM, never more than the tiles.
    let resident = shared.props.sm_count as usize * (shared.props.max_threads_per_sm / p.block).max(1) as usize;
    let grid = len.div_ceil(tile).min(resident);

    let mut state = shared.lock()?;
    let stream = state.stream;
    let f = shared.loader.function(&module(dtype), &format!("reduce_{}", op.name()))?;
    let partials = state.scratch.ensure(stream, grid * dtype.size())?;
    state.sync.ensure(stream, 0)?;
    let ticket = state.sync.ptr + REDUCE_TICKET_OFFSET as u64;
    // SAFETY: arguments match reduce_<op>(in, n, partials, ticket, out); the result
    // goes straight to the mapped host slot.
    unsafe {
        launch(
            f,
            grid as u64,
            p.block,
            stream,
            &[Arg::ptr(input.ptr), Arg::size(len), Arg::ptr(partials), Arg::ptr(ticket), Arg::ptr(shared.result_slot.device)],
        )?;
    }
    CudaShared::wait(stream)?;
    // SAFETY: the kernel has finished writing `size` bytes to the pinned slot.
    unsafe {
        for (i, b) in out.iter_mut().enumerate() {
            *b = std::ptr::read_volatile(shared.result_slot.host.add(i));
        }
    }
    Ok(())
}
