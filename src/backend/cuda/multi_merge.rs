//! The CUDA backend's merge of sorted runs (kernels/multi_merge.cu) for the multi-rank
//! sort: pairwise passes, ping-ponging between the runs' memory and the output, so a
//! rank's runs cost ceil(log2 runs) reads and writes instead of a radix sort.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUstream};

use super::context::CudaShared;
use super::driver::DriverContext;
use super::launch::{launch, Arg};
use super::memory::{alloc_async, free_async, DeviceMemory};
use super::modules::Module;
use super::radix_sort::key_order;
use super::multi_rank::{keyed_function, keyed_modules};
use super::sources;
use crate::dtype::{DType, Order};
use crate::error::Result;

/// A merge kernel's threads a block and outputs a thread: the kernels are built with
/// these (`shape_options`), so the launches and the tile boundaries agree with them.
#[derive(Clone, Copy)]
struct Shape {
    block: u32,
    items: u32,
    /// Blocks an SM the kernel is built for (its register cap), 0: none asked.
    min_blocks: u32,
}

impl Shape {
    /// multi_merge, with values.
    const PAIRS: Shape = Shape { block: 256, items: 8, min_blocks: 0 };
    /// multi_merge_keys: keys alone merge fastest in longer rows a thread, with the
    /// registers capped at 64 by 8 blocks an SM (H200, two runs of 2^28 u32,
    /// scripts/probes/merge-rate.cu: 1.60 ms against 2.24 at 256 x 8; uncapped 2.30, 7
    /// blocks 1.68; pairs at 128 x 24 take 4.12 against 3.00 at 256 x 8).
    const KEYS: Shape = Shape { block: 128, items: 24, min_blocks: 8 };

    /// The kernel and its shape: multi_merge_keys for 4-byte keys alone (the width
    /// measured; it holds 80-110 registers a thread, 8-byte keys the most), else
    /// multi_merge.
    fn of(key_bytes: usize, value_bytes: usize) -> (&'static str, Shape) {
        if value_bytes == 0 && key_bytes == 4 { ("multi_merge_keys", Shape::KEYS) } else { ("multi_merge", Shape::PAIRS) }
    }

    fn tile(self) -> usize {
        (self.block * self.items) as usize
    }
}

/// The merge module's block shapes, as build options.
fn shape_options() -> Vec<String> {
    let (p, k) = (Shape::PAIRS, Shape::KEYS);
    vec![
        format!("-DGP_MERGE_BLOCK={}", p.block),
        format!("-DGP_MERGE_ITEMS={}", p.items),
        format!("-DGP_MERGE_KEYS_BLOCK={}", k.block),
        format!("-DGP_MERGE_KEYS_ITEMS={}", k.items),
        format!("-DGP_MERGE_KEYS_MIN_BLOCKS={}", k.min_blocks.max(1)),
    ]
}

/// The threads of a block of multi_merge_bounds (a thread a tile boundary).
const BOUNDS_BLOCK: u32 = 256;

pub fn modules() -> Vec<Module> {
    keyed_modules(sources::MULTI_MERGE, shape_options)
}

/// Keys and values of one side of the ping-pong.
#[derive(Clone, Copy)]
struct Side {
    keys: CUdeviceptr,
    values: CUdeviceptr,
}

/// Where the keys are, what they are, and the runs at hand.
struct Merge {
    f: cudarc::driver::sys::CUfunction,
    shape: Shape,
    bounds_f: cudarc::driver::sys::CUfunction,
    /// Room for every tile boundary of the largest merge (stream-ordered, freed after).
    bounds: CUdeviceptr,
    stream: CUstream,
    key_bytes: usize,
    value_bytes: usize,
    order: u32,
}

impl Merge {
    /// One pass: adjacent runs (start, length) merged pairwise from `from` into `to`,
    /// one after another from 0; a last run without a partner copied. Returns the runs
    /// after it.
    fn pass(&self, runs: &[(usize, usize)], from: Side, to: Side) -> Result<Vec<(usize, usize)>> {
        let mut next = Vec::with_capacity(runs.len().div_ceil(2));
        let mut out_at = 0;
        for pair in runs.chunks(2) {
            match *pair {
                [a, b] => {
                    self.merge(from, to, a, b, out_at)?;
                    next.push((out_at, a.1 + b.1));
                }
                [(at, n)] => {
                    self.copy(from, to, at, out_at, n)?;
                    next.push((out_at, n));
                }
                _ => unreachable!("chunks of two"),
            }
            out_at += pair.iter().map(|r| r.1).sum::<usize>();
        }
        Ok(next)
    }

    fn merge(&self, from: Side, to: Side, (a_at, na): (usize, usize), (b_at, nb): (usize, usize), out_at: usize) -> Result<()> {
        let n = na + nb;
        if n == 0 {
            return Ok(());
        }
        let tile = self.shape.tile();
        let tiles = n.div_ceil(tile);
        // Both kernels begin with the two runs: keys, a_at, na, b_at, nb, key_order.
        let runs = [Arg::ptr(from.keys), Arg::size(a_at), Arg::size(na), Arg::size(b_at), Arg::size(nb), Arg::u32(self.order)];
        let search: Vec<Arg> = runs.iter().copied().chain([Arg::size(tiles), Arg::ptr(self.bounds), Arg::u32(tile as u32)]).collect();
        // SAFETY: arguments match multi_merge_bounds(keys, a_at, na, b_at, nb, key_order,
        // tiles, bounds, tile); `bounds` holds tiles + 1 entries.
        let grid = (tiles + 1).div_ceil(BOUNDS_BLOCK as usize) as u64;
        unsafe { launch(self.bounds_f, grid, BOUNDS_BLOCK, self.stream, &search)? };
        let tail = [
            Arg::ptr(from.values),
            Arg::u32(self.value_bytes as u32),
            Arg::ptr(to.keys),
            Arg::ptr(to.values),
            Arg::ptr(self.bounds),
            Arg::size(out_at),
        ];
        let args: Vec<Arg> = runs.iter().copied().chain(tail).collect();
        // SAFETY: arguments match multi_merge and multi_merge_keys(keys, a_at, na, b_at,
        // nb, key_order, values, value_bytes, out, out_values, bounds, out_at); both runs
        // lie inside `from`'s memory and the output range inside `to`'s (the caller's runs).
        unsafe { launch(self.f, tiles as u64, self.shape.block, self.stream, &args) }
    }

    fn copy(&self, from: Side, to: Side, at: usize, to_at: usize, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let (k, v) = (self.key_bytes, self.value_bytes);
        // SAFETY: the ranges lie inside their sides' memory.
        unsafe {
            drv::memcpy_dtod_async(to.keys + (to_at * k) as u64, from.keys + (at * k) as u64, n * k, self.stream)
                .during("copying a run")?;
            if v > 0 {
                drv::memcpy_dtod_async(to.values + (to_at * v) as u64, from.values + (at * v) as u64, n * v, self.stream)
                    .during("copying a run's values")?;
            }
        }
        Ok(())
    }
}

/// The runs ((start, length) in elements at `keys`, in order, apart or not) merged
/// stably into `out`, values along; `keys` and `values` serve as the other buffer and
/// are overwritten.
#[allow(clippy::too_many_arguments)]
pub fn merge_runs(
    shared: &CudaShared,
    keys: &DeviceMemory,
    values: Option<&DeviceMemory>,
    dtype: DType,
    value_bytes: usize,
    order: Order,
    runs: &[(usize, usize)],
    out: &DeviceMemory,
    out_values: Option<&DeviceMemory>,
) -> Result<()> {
    let k = dtype.size();
    let state = shared.lock()?; // first: it makes the context current, which a first load needs
    let (name, shape) = Shape::of(k, value_bytes);
    let kernel = keyed_function(shared, sources::MULTI_MERGE, shape_options, dtype, name)?;
    let bounds_f = keyed_function(shared, sources::MULTI_MERGE, shape_options, dtype, "multi_merge_bounds")?;
    let total: usize = runs.iter().map(|r| r.1).sum();
    let bounds_bytes = (total.div_ceil(shape.tile()) + 2) * 8;
    // SAFETY: stream-ordered, freed on the same stream after the merges that use it.
    let bounds = unsafe { alloc_async(state.stream, bounds_bytes, "merge tile boundaries") }?;
    let merge = Merge { f: kernel, shape, bounds_f, bounds, stream: state.stream, key_bytes: k, value_bytes, order: key_order(dtype, order) };
    let merged = merge_passes(&merge, runs, keys, values, out, out_values);
    // SAFETY: allocated above on this stream.
    unsafe { free_async(bounds, bounds_bytes, state.stream) }?;
    merged
}

/// The pairwise passes, ending in `out`.
fn merge_passes(
    merge: &Merge,
    runs: &[(usize, usize)],
    keys: &DeviceMemory,
    values: Option<&DeviceMemory>,
    out: &DeviceMemory,
    out_values: Option<&DeviceMemory>,
) -> Result<()> {
    let input = Side { keys: keys.ptr, values: values.map_or(0, |m| m.ptr) };
    let output = Side { keys: out.ptr, values: out_values.map_or(0, |m| m.ptr) };
    let total: usize = runs.iter().map(|r| r.1).sum();
    let mut list = runs.to_vec();
    let passes = (runs.len().max(1) as u32).next_power_of_two().trailing_zeros();
    // An odd count of passes ends in `out`; an even one ends where it began, then copies
    // (the first pass packs the runs, so a copy is of one run from 0; one run alone is
    // copied from where it lies).
    let (mut from, mut to) = (input, output);
    for _ in 0..passes {
        list = merge.pass(&list, from, to)?;
        std::mem::swap(&mut from, &mut to);
    }
    if passes.is_multiple_of(2) {
        merge.copy(input, output, list.first().map_or(0, |r| r.0), 0, total)?;
    }
    Ok(())
}
