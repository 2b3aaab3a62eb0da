//! Planning and launching the device-wide reduce (kernels/reduce.cu).

use cudarc::driver::result as drv;

use super::context::{tagged_words, CudaShared, State};
use super::driver::DriverContext;
use super::launch::{launch, Arg};
use super::loader::{variant, ModuleSpec};
use super::memory::DeviceMemory;
use super::modules::Module;
use super::sources;
use super::tuning::knob;
use crate::dtype::{DType, Op};
use crate::error::Result;

/// Tuning: threads per block and 16-byte loads per thread per tile.
struct Policy {
    block: u32,
    vecs: u32,
}

fn policy(_dtype: DType) -> Policy {
    Policy { block: knob("reduce.block", 256), vecs: knob("reduce.vecs", 4) }
}

/// Every module of the reduce, one per dtype, for gpuprims_context_precompile (modules.rs).
pub fn modules() -> Vec<Module> {
    DType::ALL
        .iter()
        .map(|&d| Module { source: sources::REDUCE, variant: variant(d), spec: module(d), label: d.name().to_string() })
        .collect()
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
            format!("-DGP_STREAMING_IO={}", knob("reduce.streaming", 1)),
        ],
    }
}

/// Where the reduce kernel puts its result.
#[derive(Clone, Copy)]
enum Dest {
    /// Element 0 of device memory.
    Device(u64),
    /// The mapped result slot, as tagged words of this tag (CudaShared::begin_host_value).
    Host(u32),
}

/// Issues the reduce kernel; with `keep_accumulator` the result is the total in
/// dtype's accumulator type, unrounded.
#[allow(clippy::too_many_arguments)]
fn launch_reduce(shared: &CudaShared, state: &mut State, input: &DeviceMemory, dtype: DType, len: usize, op: Op, dest: Dest,
                 keep_accumulator: bool) -> Result<()> {
    let p = policy(dtype);
    let tile = (p.block * p.vecs) as usize * (16 / dtype.size());
    // A resident grid: enough blocks to fill every SM, never more than the tiles.
    let resident = shared.props.sm_count as usize * (shared.props.max_threads_per_sm / p.block).max(1) as usize;
    let grid = len.div_ceil(tile).clamp(1, resident);
    let stream = state.stream;
    let kernel = match op {
        Op::Sum => "reduce_sum",
        Op::Min => "reduce_min",
        Op::Max => "reduce_max",
    };
    let f = shared.loader.function(sources::REDUCE, variant(dtype), kernel, || module(dtype))?;
    // Every block but 0 publishes its partial as tagged words (kernels/common/tagged.cuh).
    let (partials, epoch) = state.sync.begin_run(stream, grid * tagged_words(dtype.accumulator()))?;
    let (out, host_tag) = match dest {
        Dest::Device(ptr) => (ptr, 0),
        Dest::Host(tag) => (shared.result_slot.device, tag),
    };
    // SAFETY: arguments match reduce_<op>(in, n, partials, epoch, out, host_tag,
    // keep_accumulator); the sync memory holds the tagged words of `grid` partials;
    // `out` holds an element (an accumulator where kept), or (the slot) the result's
    // tagged words.
    unsafe {
        launch(
            f,
            grid as u64,
            p.block,
            stream,
            &[
                Arg::ptr(input.ptr),
                Arg::size(len),
                Arg::ptr(partials),
                Arg::u32(epoch),
                Arg::ptr(out),
                Arg::u32(host_tag),
                Arg::u32(keep_accumulator as u32),
            ],
        )
    }
}

/// Reduces into host memory: the kernel publishes the result to the mapped slot as
/// tagged words, and the host spins on them (about 2.5 µs sooner than waiting for the
/// stream, on the H100; scripts/probes/probe-floor.cu).
/// With `keep_accumulator`, `out` gets the total in dtype's accumulator type, unrounded
/// (`out.len()` is that type's size).
#[allow(clippy::too_many_arguments)]
pub fn reduce(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, op: Op, out: &mut [u8], keep_accumulator: bool)
    -> Result<()> {
    if len == 0 {
        out.fill(0); // SUM of nothing; MIN/MAX were refused before.
        return Ok(());
    }
    let mut state = shared.lock()?;
    let tag = shared.begin_host_value(&mut state, if keep_accumulator { dtype.accumulator() } else { dtype });
    launch_reduce(shared, &mut state, input, dtype, len, op, Dest::Host(tag), keep_accumulator)?;
    shared.wait_for_host_value(state.stream, tag, out)
}

/// Reduces into element 0 of a device buffer, in stream order, without waiting.
pub fn reduce_to_device(shared: &CudaShared, input: &DeviceMemory, dtype: DType, len: usize, op: Op, out: &DeviceMemory) -> Result<()> {
    let mut state = shared.lock()?;
    if len == 0 {
        // SAFETY: `out` holds at least one element.
        return unsafe { drv::memset_d8_async(out.ptr, 0, dtype.size(), state.stream) }.during("cuMemsetD8Async");
    }
    launch_reduce(shared, &mut state, input, dtype, len, op, Dest::Device(out.ptr), false)
}
