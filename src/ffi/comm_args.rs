//! The argument checks of the multi-rank calls, one rank's part: the same checks for a
//! communicator's call and for each device of a group's. What only the union of the
//! shards decides (k against the total length, MIN of nothing) is checked by the
//! operation itself after the ranks agree (src/multi).

use std::sync::Arc;

use super::{aliased, same_context, same_dtype};
use crate::backend::{Buffer, ContextShared};
use crate::dtype::{DType, Op, Order, ScanMode};
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

pub(crate) fn sort<'a>(ctx: &Arc<ContextShared>, keys: &'a Buffer, values: Option<&'a Buffer>, order: u32)
    -> Result<SortArgs<'a>> {
    let order = order_of(order)?;
    same_context(ctx, keys, "keys")?;
    if let Some(v) = values {
        same_context(ctx, v, "values")?;
        if v.len != keys.len {
            return Err(Error::SizeMismatch(format!("values has {} elements, keys has {}", v.len, keys.len)));
        }
        if aliased(v, keys) {
            return Err(invalid("values shares memory with keys"));
        }
    }
    Ok(SortArgs { keys, values, order })
}

pub(crate) fn select<'a>(ctx: &Arc<ContextShared>, input: &'a Buffer, k: u64) -> Result<SelectArgs<'a>> {
    same_context(ctx, input, "in")?;
    Ok(SelectArgs { input, k })
}

pub(crate) fn topk<'a>(
    ctx: &Arc<ContextShared>,
    input: &'a Buffer,
    k: u64,
    order: u32,
    out_values: &'a Buffer,
    out_indices: Option<&'a Buffer>,
) -> Result<TopkArgs<'a>> {
    let order = order_of(order)?;
    same_context(ctx, input, "in")?;
    same_context(ctx, out_values, "out_values")?;
    same_dtype(out_values, "out_values", input, "in")?;
    if out_values.len as u64 != k {
        return Err(Error::SizeMismatch(format!("out_values has {} elements, k is {k}", out_values.len)));
    }
    if aliased(out_values, input) {
        return Err(invalid("out_values shares memory with in"));
    }
    if let Some(ix) = out_indices {
        same_context(ctx, ix, "out_indices")?;
        if ix.dtype != DType::U64 {
            return Err(Error::TypeMismatch(format!("out_indices holds {}, must hold u64", ix.dtype.name())));
        }
        if ix.len as u64 != k {
            return Err(Error::SizeMismatch(format!("out_indices has {} elements, k is {k}", ix.len)));
        }
        if aliased(ix, input) || aliased(ix, out_values) {
            return Err(invalid("out_indices shares memory with in or out_values"));
        }
    }
    Ok(TopkArgs { input, k, order, out_values, out_indices })
}
