//! Planning and launching the single-pass scan (kernels/scan.cu).

use cudarc::driver::sys::CUdeviceptr;

use super::context::{tagged_words, CudaShared, State, SCAN_TICKET_OFFSET};
use super::launch::{launch, Arg};
use super::loader::{self, ModuleSpec};
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

/// Every module of the scan, one per (dtype, op), for gpuprims_context_precompile
/// (modules.rs).
pub fn modules() -> Vec<Module> {
    DType::ALL
        .iter()
        .flat_map(|&d| Op::ALL.iter().map(move |&op| (d, op)))
        .map(|(d, op)| Module {
            source: sources::SCAN,
            variant: variant(d, op),
            spec: module(d, op),
            label: format!("{} {}", d.name(), op.name()),
        })
        .collect()
}

/// The loader's key of the scan module for `dtype` and `op` (with `sources::SCAN`).
/// Public to the crate, with `module`, so a primitive that scans (the quicksort) can
/// compile this module side by side with its own (precompile::compile_unloaded).
pub fn variant(dtype: DType, op: Op) -> u32 {
    loader::variant(dtype) * Op::ALL.len() as u32 + op as u32
}

/// The scan module for `dtype` and `op`: its inclusive and exclusive kernels. One op a
/// module, not all three, keeps a cold NVRTC compile (every caller's first call) short.
pub fn module(dtype: DType, op: Op) -> ModuleSpec {
    let p = policy(dtype);
    let op_type = match op {
        Op::Sum => "gp::SumOp",
        Op::Min => "gp::MinOp",
        Op::Max => "gp::MaxOp",
    };
    ModuleSpec {
        source: sources::SCAN,
        options: vec![
            format!("-DGP_T={}", dtype.cuda_name()),
            format!("-DGP_OP={op_type}"),
            format!("-DGP_BLOCK_THREADS={}", p.block),
            format!("-DGP_ITEMS={}", p.items),
            format!("-DGP_LOOKBACK_WINDOW={}", p.window),
            format!("-DGP_STREAMING_IO={}", knob("scan.streaming", 1)),
        ],
    }
}

#[allow(clippy::too_many_arguments)]
pub fn scan(
    shared: &CudaShared,
    input: &DeviceMemory,
    output: &DeviceMemory,
    dtype: DType,
    len: usize,
    op: Op,
    mode: ScanMode,
    seed: Option<u64>,
) -> Result<()> {
    let mut state = shared.lock()?;
    scan_locked(shared, &mut state, input.ptr, output.ptr, dtype, len, op, mode, seed)
}

/// The tagged words a scan of `len` elements of `dtype` publishes: each tile's
/// aggregate, then the anchors' inclusive prefixes (anchors are tiles 0, window,
/// 2 * window, ...).
pub fn run_words(dtype: DType, len: usize) -> usize {
    let p = policy(dtype);
    let tiles = len.div_ceil((p.block * p.items) as usize);
    (tiles + tiles.div_ceil(p.window as usize)) * tagged_words(dtype.accumulator())
}

/// The scan of `len` elements at `input` into `output` (may be `input`), issued by a
/// primitive that holds the state lock (the quicksort scans its bucket counts), with
/// `seed` (the accumulator's bits) combined in front of every element when given: the
/// carry a multi-rank scan brings from the ranks before.
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
    seed: Option<u64>,
) -> Result<()> {
    let p = policy(dtype);
    let tiles = len.div_ceil((p.block * p.items) as usize);
    let words = tagged_words(dtype.accumulator());

    let stream = state.stream;
    let kernel = match mode {
        ScanMode::Inclusive => "scan_inclusive",
        ScanMode::Exclusive => "scan_exclusive",
    };
    let f = shared.loader.function(sources::SCAN, variant(dtype, op), kernel, || module(dtype, op))?;
    let sync = &mut state.sync;
    let (aggregate, epoch) = sync.begin_run(stream, run_words(dtype, len))?;
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
        Arg::u64(seed.unwrap_or(0)),
        Arg::u32(seed.is_some() as u32),
    ];
    // SAFETY: arguments match scan_<mode>(in, out, n, aggregate, inclusive,
    // ticket, epoch, ticket_base, seed_bits, seeded); the sync memory holds `words` tagged words for
    // each tile and each anchor.
    unsafe { launch(f, tiles as u64, p.block, stream, &args)? };
    sync.tickets_issued += tiles as u64;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::nvrtc;

    /// The cold NVRTC compile of one scan module (the project rule: a first call under
    /// one second), best of three. Timing, not a check, so ignored: run with
    /// `cargo test --release cold_compile_time -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn cold_compile_time() {
        if !nvrtc::available_for_tests() {
            return;
        }
        // u8 is the heaviest: 64 items a thread, unrolled.
        for d in [DType::U32, DType::F64, DType::U8] {
            let spec = module(d, Op::Sum);
            let mut best = f64::MAX;
            for _ in 0..3 {
                let t = std::time::Instant::now();
                nvrtc::compile(spec.source.name, spec.source.text, "sm_90", &spec.options).unwrap();
                best = best.min(t.elapsed().as_secs_f64());
            }
            eprintln!("scan module {} sum, sm_90: {best:.3} s", d.name());
        }
    }
}
