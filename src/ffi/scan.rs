//! gpuprims_scan.

use super::types::*;
use super::{comm_args, guard, try_ref};
use crate::multi::ScanArgs;

/// Prefix scan of `in` into `out` with `op` (SUM, MIN, MAX), inclusive or exclusive
/// (an exclusive scan starts from the identity: 0 for SUM, the type's largest value
/// or +inf for MIN, its lowest or -inf for MAX). `out` has in's dtype (else
/// TYPE_MISMATCH) and length (else SIZE_MISMATCH) and may be `in` itself (in place).
/// Asynchronous on CUDA: read the result with gpuprims_buffer_read, which waits.
/// Float results are bitwise reproducible run to run on the same device and size.
#[no_mangle]
pub extern "C" fn gpuprims_scan(
    ctx: *mut gpuprims_context,
    r#in: *const gpuprims_buffer,
    out: *mut gpuprims_buffer,
    op: gpuprims_op,
    mode: gpuprims_scan_mode,
) -> gpuprims_status {
    guard("gpuprims_scan", || {
        let c = try_ref(ctx, "ctx")?;
        let input = try_ref(r#in, "in")?;
        let output = try_ref(out, "out")?;
        let ScanArgs { op, mode, .. } = comm_args::scan(&c, &input, &output, op, mode)?;
        if input.len == 0 {
            return Ok(());
        }
        c.backend.scan(&input.memory, &output.memory, input.dtype, input.len, op, mode, None)
    })
}
