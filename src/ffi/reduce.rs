//! gpuprims_reduce.

use std::ffi::c_void;

use super::types::*;
use super::{guard, require, same_context, try_ref};
use crate::dtype::Op;
use crate::error::invalid;

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
        let op = Op::from_raw(op).map_err(|e| invalid(format!("op: {e}")))?;
        require(out, "out")?;
        same_context(c, input, "in")?;
        if input.len == 0 && op != Op::Sum {
            return Err(invalid(format!("in is empty: {} of nothing is undefined", op.name())));
        }
        let mut value = [0u8; 8];
        let size = input.dtype.size();
        c.backend.reduce(&input.memory, input.dtype, input.len, op, &mut value[..size])?;
        // SAFETY: `out` has room for one element of in's dtype.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), out as *mut u8, size) };
        Ok(())
    })
}
