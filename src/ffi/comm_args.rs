//! The argument checks of the multi-rank calls, one rank's part: the same checks for a
//! communicator's call and for each device of a group's. What only the union of the
//! shards decides (k against the total length, MIN of nothing) is checked by the
//! operation itself after the ranks agree (src/multi).

use std::sync::Arc;

use super::{same_context, same_dtype};
use crate::backend::{Buffer, ContextShared};
use crate::dtype::{Op, Order, ScanMode};
use crate::error::{invalid, Error, Result};
use crate::multi::{ReduceArgs, ScanArgs, SelectArgs, SortArgs, TopkArgs};

pub(crate) fn op_of(op: u32) -> Result<Op> {
    Op::from_raw(op).map_err(|e| invalid(format!("op: {e}")))
}

pub(crate) fn order_of(order: u32) -> Result<Order> {
    Order::from_raw(order).map_err(|e| invalid(format!("order: {e}")))
}

pub(crate) fn reduce<'a>(ctx: &Arc<ContextShared>, input: &'a Buffer, op: u32) -> Result<ReduceArgs<'a>> {
    same_context(ctx, input, "in")?;
    Ok(ReduceArgs { input, op: op_of(op)? })
}

/// `out` of reduce_to_buffer: one element of in's dtype.
pub(crate) fn one_element_out(ctx: &Arc<ContextShared>, input: &Buffer, out: &Buffer) -> Result<()> {
    same_context(ctx, out, "out")?;
    same_dtype(out, "out", input, "in")?;
    if out.len != 1 {
        return Err(Error::SizeMismatch(format!("out has {} elements, must have 1", out.len)));
    }
    Ok(())
}

/// gpuprims_scan's checks (it calls this too).
pub(crate) fn scan<'a>(ctx: &Arc<ContextShared>, input: &'a Buffer, output: &'a Buffer, op: u32, mode: u32)
    -> Result<ScanArgs<'a>> {
    let op = op_of(op)?;
    let mode = ScanMode::from_raw(mode).map_err(|e| invalid(format!("mode: {e}")))?;
    same_context(ctx, input, "in")?;
    same_context(ctx, output, "out")?;
    same_dtype(output, "out", input, "in")?;
    if output.len != input.len {
        return Err(Error::SizeMismatch(format!("out has {} elements, in has {}", output.len, input.len)));
    }
    Ok(ScanArgs { input, output, op, mode })
}

/// The in-place sorts' checks (super::sort::checked_sort_args).
pub(crate) fn sort<'a>(ctx: &Arc<ContextShared>, keys: &'a Buffer, values: Option<&'a Buffer>, order: u32)
    -> Result<SortArgs<'a>> {
    let (order, _) = super::sort::checked_sort_args(ctx, keys, values, order)?;
    Ok(SortArgs { keys, values, order })
}

pub(crate) fn select<'a>(ctx: &Arc<ContextShared>, input: &'a Buffer, k: u64) -> Result<SelectArgs<'a>> {
    same_context(ctx, input, "in")?;
    Ok(SelectArgs { input, k })
}

/// gpuprims_topk's checks but k against the length, which a multi-rank call makes
/// against the union (super::select::checked_topk_outputs).
pub(crate) fn topk<'a>(
    ctx: &Arc<ContextShared>,
    input: &'a Buffer,
    k: u64,
    order: u32,
    out_values: &'a Buffer,
    out_indices: Option<&'a Buffer>,
) -> Result<TopkArgs<'a>> {
    let order = order_of(order)?;
    super::select::checked_topk_outputs(ctx, input, k, out_values, out_indices, None)?;
    Ok(TopkArgs { input, k, order, out_values, out_indices })
}
