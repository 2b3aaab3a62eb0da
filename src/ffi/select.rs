//! gpuprims_select_kth, gpuprims_select_kth_to_buffer, gpuprims_topk,
//! gpuprims_segmented_select and gpuprims_segmented_topk.

use std::ffi::c_void;
use std::sync::Arc;

use super::types::*;
use super::{aliased, guard, require, same_context, same_dtype, try_ref};
use crate::backend::{Buffer, ContextShared, Rows, SelectOut, TopkKs, TopkOut, TopkRows};
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
        checked_topk_outputs(&c, &input, k, &values, indices.as_deref(), Some(input.len))?;
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

/// The rows of a segmented top-k, from `offsets` (ragged) or `row_len` (uniform), with
/// their argument checks.
fn topk_rows<'a>(input: &Buffer, offsets: Option<&'a Buffer>, row_len: u64) -> Result<TopkRows<'a>> {
    match offsets {
        Some(o) => {
            let offsets_dtype = index_dtype(o, "offsets")?;
            if o.len == 0 {
                return Err(Error::SizeMismatch("offsets is empty; it must hold nrows + 1 entries".into()));
            }
            Ok(TopkRows::Ragged { offsets: &o.memory, offsets_dtype, nrows: o.len - 1 })
        }
        None => {
            // row_len == 0 was refused with the other scalar checks.
            if !(input.len as u64).is_multiple_of(row_len) {
                return Err(Error::SizeMismatch(format!(
                    "values has {} elements, not a whole number of rows of row_len = {row_len}",
                    input.len
                )));
            }
            let row_len = row_len as usize;
            Ok(TopkRows::Uniform { nrows: input.len / row_len, row_len })
        }
    }
}

/// How many results each row gives, and out_values' length when that is known here
/// (uniform k; with per-row ks the backend adds them up, as they may live on the device).
fn topk_ks<'a>(ks: Option<&'a Buffer>, k: u64, nrows: usize) -> Result<(TopkKs<'a>, Option<u64>)> {
    match ks {
        Some(b) => {
            let dtype = index_dtype(b, "ks")?;
            if b.len != nrows {
                return Err(Error::SizeMismatch(format!("ks has {} entries, there are {nrows} rows", b.len)));
            }
            Ok((TopkKs::PerRow { ks: &b.memory, dtype }, None))
        }
        None => {
            let total = (nrows as u64).checked_mul(k).ok_or_else(|| {
                Error::SizeMismatch(format!("{nrows} rows of k = {k} results is more than 2^64 elements"))
            })?;
            let k = usize::try_from(k).map_err(|_| Error::SizeMismatch(format!("k = {k} is past this machine's sizes")))?;
            Ok((TopkKs::Each(k), Some(total)))
        }
    }
}

/// The `k` best elements of every row of `values`, each row's sorted, into `out_values`
/// and (when not NULL) their indices within the row into `out_indices` (U64): the k
/// smallest (ASCENDING) or largest (DESCENDING) in the library's total order (-inf < …
/// < -0.0 < +0.0 < … < +inf < NaN, every NaN one value), equal elements lowest index
/// first, so the result is the same on every run and device. Values are the row's
/// elements bit for bit.
///
/// Rows: with `offsets` (nrows + 1 U32 or U64 entries, else TYPE_MISMATCH; no entry:
/// SIZE_MISMATCH), row r is values[offsets[r] .. offsets[r + 1]) (empty rows allowed;
/// offsets that decrease or end past values: INVALID_ARGUMENT naming the first bad row,
/// "row 12: ...", outputs untouched), and `row_len` must be 0 (else INVALID_ARGUMENT).
/// Without offsets (NULL), the rows are values' elements `row_len` at a time, a 2-D
/// array of values.len / row_len rows: row_len 0 is INVALID_ARGUMENT, a row_len that does
/// not divide values' length SIZE_MISMATCH; no offsets are read.
///
/// k: with `ks` NULL every row takes `k`, row r's results at out[r * k .. (r + 1) * k);
/// with `ks` (nrows U32 or U64 entries, else TYPE_MISMATCH / SIZE_MISMATCH) row r takes
/// ks[r], its results start at ks[0] + … + ks[r - 1], and `k` must be 0 (else
/// INVALID_ARGUMENT). `out_values` holds values' dtype (else TYPE_MISMATCH) and exactly
/// nrows * k elements, or the sum of the ks (else SIZE_MISMATCH; nrows * k past 2^64
/// too); `out_indices` U64 (TYPE_MISMATCH) of the same length (SIZE_MISMATCH). A row
/// with fewer elements than its k gives all of them, then fills its remaining slots with
/// zero bits (value) and UINT64_MAX (index: -1 as an int64). k = 0 (or all ks 0, or no
/// rows) is allowed: nothing is written. No output may share memory with another buffer
/// of the call (INVALID_ARGUMENT). Asynchronous on CUDA, in stream order; with offsets
/// or ks the call waits for the rows' check (not for the selection). On CUDA at most
/// 2^31 - 1 rows (more: UNSUPPORTED).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn gpuprims_segmented_topk(
    ctx: *mut gpuprims_context,
    values: *const gpuprims_buffer,
    offsets: *const gpuprims_buffer,
    row_len: u64,
    k: u64,
    ks: *const gpuprims_buffer,
    order: gpuprims_order,
    out_values: *mut gpuprims_buffer,
    out_indices: *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_segmented_topk", || {
        let c = try_ref(ctx, "ctx")?;
        let input = try_ref(values, "values")?;
        let offsets = if offsets.is_null() { None } else { Some(try_ref(offsets, "offsets")?) };
        let ks = if ks.is_null() { None } else { Some(try_ref(ks, "ks")?) };
        let out = try_ref(out_values, "out_values")?;
        let indices = if out_indices.is_null() { None } else { Some(try_ref(out_indices, "out_indices")?) };
        let order = Order::from_raw(order).map_err(|e| invalid(format!("order: {e}")))?;
        match (&offsets, row_len) {
            (Some(_), 1..) => return Err(invalid(format!("row_len = {row_len} with offsets (must be 0: offsets give the rows)"))),
            (None, 0) => return Err(invalid("row_len = 0 without offsets (rows of row_len elements need one at least)")),
            _ => {}
        }
        if ks.is_some() && k != 0 {
            return Err(invalid(format!("k = {k} with ks (must be 0: ks give each row's k)")));
        }
        same_context(&c, &input, "values")?;
        let named = [(offsets.as_deref(), "offsets"), (ks.as_deref(), "ks"), (Some(&*out), "out_values"), (indices.as_deref(), "out_indices")];
        for (buf, name) in named {
            if let Some(b) = buf {
                same_context(&c, b, name)?;
            }
        }
        let rows = topk_rows(&input, offsets.as_deref(), row_len)?;
        let (each, total) = topk_ks(ks.as_deref(), k, rows.nrows())?;
        same_dtype(&out, "out_values", &input, "values")?;
        if let Some(ix) = indices.as_deref() {
            if ix.dtype != DType::U64 {
                return Err(Error::TypeMismatch(format!("out_indices holds {}, must hold u64", ix.dtype.name())));
            }
        }
        if let Some(total) = total.filter(|&t| t != out.len as u64) {
            return Err(Error::SizeMismatch(format!("out_values has {} elements, {} rows of k = {k} need {total}", out.len, rows.nrows())));
        }
        if let Some(ix) = indices.as_deref().filter(|ix| ix.len != out.len) {
            return Err(Error::SizeMismatch(format!("out_indices has {} elements, out_values {}", ix.len, out.len)));
        }
        let inputs = [Some(&*input), offsets.as_deref(), ks.as_deref()];
        if inputs.iter().flatten().any(|b| aliased(&out, b)) {
            return Err(invalid("out_values shares memory with values, offsets or ks"));
        }
        if let Some(ix) = indices.as_deref() {
            if inputs.iter().flatten().any(|b| aliased(ix, b)) || aliased(ix, &out) {
                return Err(invalid("out_indices shares memory with values, offsets, ks or out_values"));
            }
        }
        // Nothing to write and no rows or ks to check: uniform k of 0, or no rows.
        let nothing = matches!(each, TopkKs::Each(_)) && (total == Some(0) && matches!(rows, TopkRows::Uniform { .. }) || rows.nrows() == 0);
        if nothing {
            return Ok(());
        }
        let dest = TopkOut { values: &out.memory, indices: indices.as_deref().map(|b| &b.memory), len: out.len };
        c.backend.segmented_topk(&input.memory, input.dtype, input.len, &rows, &each, order, &dest)
    })
}

/// gpuprims_topk's checks of its buffers (the multi-rank top-k makes them too):
/// contexts, k against `len` when given (a multi-rank call checks the union's), the
/// outputs' dtypes and lengths, and that the three buffers share no memory.
pub(crate) fn checked_topk_outputs(
    ctx: &Arc<ContextShared>,
    input: &Buffer,
    k: u64,
    values: &Buffer,
    indices: Option<&Buffer>,
    len: Option<usize>,
) -> Result<()> {
    same_context(ctx, input, "in")?;
    same_context(ctx, values, "out_values")?;
    if let Some(len) = len.filter(|&l| k > l as u64) {
        return Err(invalid(format!("k = {k}, but in has only {len} elements")));
    }
    same_dtype(values, "out_values", input, "in")?;
    if values.len as u64 != k {
        return Err(Error::SizeMismatch(format!("out_values has {} elements, k is {k}", values.len)));
    }
    if aliased(values, input) {
        return Err(invalid("out_values shares memory with in"));
    }
    if let Some(ix) = indices {
        same_context(ctx, ix, "out_indices")?;
        if ix.dtype != DType::U64 {
            return Err(Error::TypeMismatch(format!("out_indices holds {}, must hold u64", ix.dtype.name())));
        }
        if ix.len as u64 != k {
            return Err(Error::SizeMismatch(format!("out_indices has {} elements, k is {k}", ix.len)));
        }
        if aliased(ix, input) || aliased(ix, values) {
            return Err(invalid("out_indices shares memory with in or out_values"));
        }
    }
    Ok(())
}
