//! gpuprims_reduce.

use std::ffi::c_void;
use std::sync::Arc;

use super::types::*;
use super::{guard, require, same_context, try_ref};
use crate::backend::{Buffer, ContextShared};
use crate::dtype::Op;
use crate::error::{invalid, Result};

/// The checks both reduce entry points share: the op, the context, and that MIN/MAX
/// of nothing is undefined.
fn checked_op(ctx: &Arc<ContextShared>, input: &Buffer, op: gpuprims_op) -> Result<Op> {
    let op = Op::from_raw(op).map_err(|e| invalid(format!("op: {e}")))?;
    same_context(ctx, input, "in")?;
    if input.len == 0 && op != Op::Sum {
        return Err(invalid(format!("in is empty: {} of nothing is undefined", op.name())));
    }
    Ok(op)
}

/// Reduces all of `in` with `op` (SUM, MIN or MAX) and writes one element of in's
/// dtype to host memory at `out`, waiting for the result. Integer SUM wraps; float SUM
/// is bitwise reproducible run to run on the same device and size; MIN/MAX return NaN
/// when any input is NaN, and MIN(-0.0, +0.0) is -0.0. Empty input: SUM gives 0,
/// MIN/MAX are GPUPRIMS_STATUS_INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn gpuprims_reduce(
    ctx: *mut gpuprims_context,
    r#in: *const gpuprims_buffer,
    op: gpuprims_op,
    out: *mut c_void,
) -> gpuprims_status {
    guard("gpuprims_reduce", || {
        let c = try_ref(ctx, "ctx")?;
        let input = try_ref(r#in, "in")?;
        require(out, "out")?;
        let op = checked_op(&c, &input, op)?;
        let mut value = [0u8; 8];
        let size = input.dtype.size();
        c.backend.reduce(&input.memory, input.dtype, input.len, op, &mut value[..size])?;
        // SAFETY: `out` has room for one element of in's dtype.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), out as *mut u8, size) };
        Ok(())
    })
}

/// Like gpuprims_reduce, but writes the result into `out`, a buffer of in's dtype
/// (else TYPE_MISMATCH) holding exactly one element (else SIZE_MISMATCH), in stream
/// order and without waiting: the result stays on the device for later work, and
/// gpuprims_buffer_read fetches it. Same semantics and errors as gpuprims_reduce.
#[no_mangle]
pub extern "C" fn gpuprims_reduce_to_buffer(
    ctx: *mut gpuprims_context,
    r#in: *const gpuprims_buffer,
    op: gpuprims_op,
    out: *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_reduce_to_buffer", || {
        let c = try_ref(ctx, "ctx")?;
        let input = try_ref(r#in, "in")?;
        let output = try_ref(out, "out")?;
        let op = checked_op(&c, &input, op)?;
        super::comm_args::one_element_out(&c, &input, &output)?;
        c.backend.reduce_to(&input.memory, input.dtype, input.len, op, &output.memory)
    })
}
