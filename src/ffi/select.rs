//! gpuprims_select_kth, gpuprims_select_kth_to_buffer, gpuprims_topk and
//! gpuprims_segmented_select.

use std::ffi::c_void;
use std::sync::Arc;

use super::types::*;
use super::{aliased, guard, require, same_context, same_dtype, try_ref};
use crate::backend::{Buffer, ContextShared, Rows, SelectOut};
use crate::dtype::{DType, Order};
use crate::error::{invalid, Error, Result};

/// The checks both k-th entry points share: the context, and that rank k exists.
fn checked_rank(ctx: &Arc<ContextShared>, input: &Buffer, k: u64) -> Result<usize> {
    same_context(ctx, input, "in")?;
    if k >= input.len as u64 {
        return Err(invalid(format!("k = {k}, but in has {} elements (k must be below that)", input.len)));
    }
    Ok(k as usize)
}

/// Writes to host memory at `out` the element of rank `k` (0-based) of `in` in
/// ascending order, i.e. the value `in` would hold at index k once sorted, in the
/// library's total order (-inf < … < -0.0 < +0.0 < … < +inf < NaN; a NaN result is
/// the canonical quiet NaN on CUDA). `in` is unchanged; the call waits for the result.
/// k >= len (and so any k on an empty buffer): GPUPRIMS_STATUS_INVALID_ARGUMENT, `out`
/// untouched. On CUDA this is a selection, not a sort: a sample brackets rank k, one
/// read of `in` keeps the keys inside the bracket, and a few digit passes over those
/// finish it.
#[no_mangle]
pub extern "C" fn gpuprims_select_kth(
    ctx: *mut gpuprims_context,
    r#in: *const gpuprims_buffer,
    k: u64,
    out: *mut c_void,
) -> gpuprims_status {
    guard("gpuprims_select_kth", || {
        let c = try_ref(ctx, "ctx")?;
        let input = try_ref(r#in, "in")?;
        require(out, "out")?;
        let k = checked_rank(&c, &input, k)?;
        let mut value = [0u8; 8];
        let size = input.dtype.size();
        c.backend.select_kth(&input.memory, input.dtype, input.len, k, SelectOut::Host(&mut value[..size]))?;
        // SAFETY: `out` has room for one element of in's dtype.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), out as *mut u8, size) };
        Ok(())
    })
}

/// Like gpuprims_select_kth, but writes the element into `out`, a buffer of in's dtype
/// (else TYPE_MISMATCH) holding exactly one element (else SIZE_MISMATCH) and not
/// sharing memory with `in` (else INVALID_ARGUMENT), in stream order and without
/// waiting, so the value can feed later work on the device; gpuprims_buffer_read
/// fetches it.
#[no_mangle]
pub extern "C" fn gpuprims_select_kth_to_buffer(
    ctx: *mut gpuprims_context,
    r#in: *const gpuprims_buffer,
    k: u64,
    out: *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_select_kth_to_buffer", || {
        let c = try_ref(ctx, "ctx")?;
        let input = try_ref(r#in, "in")?;
        let output = try_ref(out, "out")?;
        let k = checked_rank(&c, &input, k)?;
        same_context(&c, &output, "out")?;
        same_dtype(&output, "out", &input, "in")?;
        if output.len != 1 {
            return Err(Error::SizeMismatch(format!("out has {} elements, must have 1", output.len)));
        }
        if aliased(&output, &input) {
            return Err(invalid("out shares memory with in"));
        }
        c.backend.select_kth(&input.memory, input.dtype, input.len, k, SelectOut::Device(&output.memory))
    })
}

/// Writes the `k` smallest elements of `in` (ASCENDING) or the `k` largest
/// (DESCENDING) to `out_values`, in that order, and their indices in `in` to
/// `out_indices` (U64, or NULL when not wanted). Equal elements come lowest index
/// first, so the result is the same on every run and device; NaN counts as the
/// largest value. k may be 0 (nothing is written) up to len. `out_values` must have
/// in's dtype (else TYPE_MISMATCH) and `out_indices` U64 (else TYPE_MISMATCH), each
/// exactly k elements (else SIZE_MISMATCH); the three buffers must not share memory
/// (else INVALID_ARGUMENT). `in` is unchanged. Asynchronous on CUDA, in stream order.
/// On CUDA, k is at most 2^32 - 2 for now (more: GPUPRIMS_STATUS_UNSUPPORTED).
#[no_mangle]
pub extern "C" fn gpuprims_topk(
    ctx: *mut gpuprims_context,
    r#in: *const gpuprims_buffer,
    k: u64,
    order: gpuprims_order,
    out_values: *mut gpuprims_buffer,
    out_indices: *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_topk", || {
        let c = try_ref(ctx, "ctx")?;
        let input = try_ref(r#in, "in")?;
        let values = try_ref(out_values, "out_values")?;
        let indices = if out_indices.is_null() { None } else { Some(try_ref(out_indices, "out_indices")?) };
        let order = Order::from_raw(order).map_err(|e| invalid(format!("order: {e}")))?;
        same_context(&c, &input, "in")?;
        same_context(&c, &values, "out_values")?;
        if k > input.len as u64 {
            return Err(invalid(format!("k = {k}, but in has only {} elements", input.len)));
        }
        same_dtype(&values, "out_values", &input, "in")?;
        if values.len as u64 != k {
            return Err(Error::SizeMismatch(format!("out_values has {} elements, k is {k}", values.len)));
        }
        if aliased(&values, &input) {
            return Err(invalid("out_values shares memory with in"));
        }
        if let Some(ix) = indices.as_deref() {
            same_context(&c, ix, "out_indices")?;
            if ix.dtype != DType::U64 {
                return Err(Error::TypeMismatch(format!("out_indices holds {}, must hold u64", ix.dtype.name())));
            }
            if ix.len as u64 != k {
                return Err(Error::SizeMismatch(format!("out_indices has {} elements, k is {k}", ix.len)));
            }
            if aliased(ix, &input) || aliased(ix, &values) {
                return Err(invalid("out_indices shares memory with in or out_values"));
            }
        }
        if k == 0 {
            return Ok(());
        }
        c.backend.topk(&input.memory, input.dtype, input.len, k as usize, order, &values.memory, indices.as_deref().map(|b| &b.memory))
    })
}

/// Checks that `buf` holds U32 or U64 entries (TYPE_MISMATCH).
fn index_dtype(buf: &Buffer, arg: &str) -> Result<DType> {
    match buf.dtype {
        DType::U32 | DType::U64 => Ok(buf.dtype),
        other => Err(Error::TypeMismatch(format!("{arg} holds {}, must hold u32 or u64", other.name()))),
    }
}

/// For each row of `values`, the element of a given rank within the row: row r is
/// values[offsets[r] .. offsets[r + 1]), its rank ks[r] (0-based, ascending, in the
/// library's total order: -inf < … < -0.0 < +0.0 < … < +inf < NaN, every NaN one value;
/// a NaN result is the canonical quiet NaN on CUDA), or its lower median
/// (rowlen - 1) / 2 when `ks` is NULL; the result goes to out[r].
///
/// `offsets` holds nrows + 1 U32 or U64 entries (else TYPE_MISMATCH; no entry at all:
/// SIZE_MISMATCH); `ks` nrows U32 or U64 entries, `out` nrows elements of values' dtype
/// (else TYPE_MISMATCH or SIZE_MISMATCH); `out` must not share memory with the others
/// (INVALID_ARGUMENT). Rows lie one after another (offsets never decrease) but need not
/// cover the buffer: the first may start past 0 and the last end before values' length.
/// A bad row (offsets decreasing, ending past values, an empty row, a rank past its
/// row) is INVALID_ARGUMENT naming the first such row ("row 12: ..."), with `out`
/// untouched. On CUDA the rows are checked on the device while they
/// are sorted by length, and the call waits for that check (not for the selection,
/// which runs on in stream order); at most 2^31 - 1 rows there (more: UNSUPPORTED).
/// No rows (offsets of one entry): nothing to do.
#[no_mangle]
pub extern "C" fn gpuprims_segmented_select(
    ctx: *mut gpuprims_context,
    values: *const gpuprims_buffer,
    offsets: *const gpuprims_buffer,
    ks: *const gpuprims_buffer,
    out: *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_segmented_select", || {
        let c = try_ref(ctx, "ctx")?;
        let input = try_ref(values, "values")?;
        let offsets = try_ref(offsets, "offsets")?;
        let ranks = if ks.is_null() { None } else { Some(try_ref(ks, "ks")?) };
        let output = try_ref(out, "out")?;
        same_context(&c, &input, "values")?;
        same_context(&c, &offsets, "offsets")?;
        same_context(&c, &output, "out")?;
        let offsets_dtype = index_dtype(&offsets, "offsets")?;
        if offsets.len == 0 {
            return Err(Error::SizeMismatch("offsets is empty; it must hold nrows + 1 entries".into()));
        }
        let nrows = offsets.len - 1;
        let ranks = match ranks.as_deref() {
            Some(r) => {
                same_context(&c, r, "ks")?;
                let t = index_dtype(r, "ks")?;
                if r.len != nrows {
                    return Err(Error::SizeMismatch(format!("ks has {} entries, offsets gives {nrows} rows", r.len)));
                }
                Some((r, t))
            }
            None => None,
        };
        same_dtype(&output, "out", &input, "values")?;
        if output.len != nrows {
            return Err(Error::SizeMismatch(format!("out has {} elements, offsets gives {nrows} rows", output.len)));
        }
        if aliased(&output, &input) || aliased(&output, &offsets) || ranks.is_some_and(|(r, _)| aliased(&output, r)) {
            return Err(invalid("out shares memory with values, offsets or ks"));
        }
        let rows = Rows { offsets: &offsets.memory, offsets_dtype, nrows, ranks: ranks.map(|(r, t)| (&r.memory, t)) };
        c.backend.segmented_select(&input.memory, input.dtype, input.len, &rows, &output.memory)
    })
}
