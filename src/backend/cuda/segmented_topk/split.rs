//! A few long uniform rows, split: one block a row would leave most SMs idle (32 rows
//! of 2^20 keys on 132 SMs: 100 SMs idle, and each block reads 2^20 keys alone), so
//! each row is cut into parts of nearly equal length, every part's top-k taken by the usual
//! kernels (a block, or a warp, a part) into the step scratch, then each row's top-k of
//! its parts' results (parts * k keys, a short row), and topk_split_indices turns the indices
//! of that last step, which point into the parts' results, into indices within the row.
//!
//! Ties stay lowest index first: a row's parts' results lie part by part in row order,
//! each part's sorted with ties by index, so among equal keys the merge's position
//! order is the row's index order. Every part holds at least k keys, so no part
//! writes pads into what the merge reads.

use super::{function, launch_class, policy, uniform_class_from, Call, Outputs, RowArgs, ITEM_BLOCK, SPLIT_SHIFT};
use super::{CLASS_BLOCK, CLASS_LONG, CLASS_WARP};
use crate::backend::cuda::context::{round_up, State};
use crate::backend::cuda::launch::{launch, Arg};
use crate::backend::cuda::memory::DeviceMemory;
use crate::error::Result;

/// The most parts a row (the flags' bits above SPLIT_SHIFT).
const MOST_PARTS: u64 = (1 << (32 - SPLIT_SHIFT)) - 1;

/// How the rows are split: `parts` a row, the parts' class and the merge's.
pub(super) struct Split {
    parts: u64,
    part_class: usize,
    merge_class: usize,
}

/// Whether and how `nrows` uniform rows of `row_len` keys wanting k (class `class`
/// whole) are split: only rows the block or long kernel would take whole, with
/// split_sms_a_row SMs or more each; enough parts for split_rows_per_sm an SM, each of
/// at least split_min_len and k keys (parts and merge taking the long block from
/// split_long_min keys); and only when both the parts and the merge's rows
/// of parts * k keys are a row kernel's (warp, block or long: none wants more results
/// than its class gives).
pub(super) fn plan(call: &Call, nrows: u64, row_len: u64, k: u64, class: usize) -> Option<Split> {
    let p = policy();
    let sms = call.shared.props.sm_count as u64;
    if class != CLASS_LONG && class != CLASS_BLOCK || nrows * p.split_sms_a_row as u64 > sms {
        return None;
    }
    let want = (p.split_rows_per_sm as u64 * sms).div_ceil(nrows);
    let parts = want.min(row_len / p.split_min_len.max(k)).min(MOST_PARTS);
    // The longest part picks the parts' class (a warp must hold every part whole).
    let part_class = uniform_class_from(call, nrows * parts, row_len.div_ceil(parts.max(1)), k, p.split_long_min);
    let merge_class = uniform_class_from(call, nrows, parts * k, k, p.split_long_min);
    let by_row_kernel = |c| [CLASS_WARP, CLASS_BLOCK, CLASS_LONG].contains(&c);
    (parts > 1 && by_row_kernel(part_class) && by_row_kernel(merge_class)).then_some(Split { parts, part_class, merge_class })
}

/// The split rows' three steps (the state lock held; the scratch and the kernels are
/// taken before the first write).
pub(super) fn run(call: &Call, state: &mut State, nrows: u64, row_len: u64, k: u64, split: &Split) -> Result<()> {
    let Split { parts, part_class, merge_class } = *split;
    let size = call.dtype.size() as u64;
    let results = nrows * parts * k;
    let with_indices = call.out.indices.is_some();
    let values_bytes = round_up((results * size) as usize);
    let total = values_bytes + if with_indices { (results * 8) as usize } else { 0 };
    let base = state.step_scratch.ensure(state.stream, total)?;
    let part_values = DeviceMemory { ptr: base, bytes: (results * size) as usize, owner: None };
    let part_indices = DeviceMemory { ptr: base + values_bytes as u64, bytes: (results * 8) as usize, owner: None };
    let map_indices = function(call.shared, size as usize, call.dtype.is_float(), "topk_split_indices")?;

    // 1. Each part's top-k into the scratch: part r % parts of row r / parts.
    let part_out = Outputs { values: &part_values, indices: with_indices.then_some(&part_indices), len: results as usize };
    let first = Call { out: &part_out, ..*call };
    let rows = RowArgs { offsets: 0, ks: 0, bases: 0, row_len, k, flags: (parts as u32) << SPLIT_SHIFT };
    launch_class(&first, state, &rows, part_class, None, nrows * parts)?;

    // 2. Each row's top-k of its parts' results, into the call's outputs.
    let merge = Call { values: &part_values, len: results as usize, ..*call };
    let rows = RowArgs { offsets: 0, ks: 0, bases: 0, row_len: parts * k, k, flags: 0 };
    launch_class(&merge, state, &rows, merge_class, None, nrows)?;

    // 3. Their indices, from positions among the parts' results to places in the row.
    let Some(indices) = call.out.indices else { return Ok(()) };
    let count = nrows * k;
    let args = [Arg::ptr(indices.ptr), Arg::ptr(part_indices.ptr), Arg::u64(count), Arg::u64(k), Arg::u32(parts as u32), Arg::u64(row_len)];
    // SAFETY: arguments match topk_split_indices; the outputs hold nrows * k indices
    // (the FFI checked), each below parts * k, and the scratch the parts' results.
    unsafe { launch(map_indices, count.div_ceil(ITEM_BLOCK as u64), ITEM_BLOCK, state.stream, &args) }
}
