//! gpuprims_radix_sort and gpuprims_quicksort (and the argument checks they share).

use super::types::*;
use super::{aliased, guard, same_context, try_ref};
use crate::backend::{Backend, Buffer, ContextShared, Memory, SortValues};
use crate::dtype::{DType, Order};
use crate::error::{invalid, Error, Result};
use std::sync::Arc;

/// The checks every in-place sort makes before any work: the order, the contexts, and
/// that values (when given) are another buffer of the keys' length.
pub(crate) fn checked_sort_args<'a>(
    ctx: &Arc<ContextShared>,
    keys: &'a Buffer,
    values: Option<&'a Buffer>,
    order: gpuprims_order,
) -> Result<(Order, Option<SortValues<'a>>)> {
    let order = Order::from_raw(order).map_err(|e| invalid(format!("order: {e}")))?;
    same_context(ctx, keys, "keys")?;
    let values = match values {
        None => None,
        Some(v) => {
            same_context(ctx, v, "values")?;
            if aliased(keys, v) {
                return Err(invalid("keys and values are the same buffer (or share memory)"));
            }
            if v.len != keys.len {
                return Err(Error::SizeMismatch(format!("values has {} elements, keys has {}", v.len, keys.len)));
            }
            Some(SortValues { memory: &v.memory, dtype: v.dtype })
        }
    };
    Ok((order, values))
}

/// What both sorts' entry points do: the handles, the shared checks, nothing to do
/// for fewer than two keys, else `sort` on the context's backend.
fn sort_in_place(
    name: &str,
    ctx: *mut gpuprims_context,
    keys: *mut gpuprims_buffer,
    values: *mut gpuprims_buffer,
    order: gpuprims_order,
    sort: impl FnOnce(&dyn Backend, &Memory, DType, Option<SortValues>, usize, Order) -> Result<()>,
) -> gpuprims_status {
    guard(name, || {
        let c = try_ref(ctx, "ctx")?;
        let k = try_ref(keys, "keys")?;
        let v = if values.is_null() { None } else { Some(try_ref(values, "values")?) };
        let (order, vals) = checked_sort_args(&c, &k, v.as_deref(), order)?;
        if k.len <= 1 {
            return Ok(());
        }
        sort(c.backend.as_ref(), &k.memory, k.dtype, vals, k.len, order)
    })
}

/// Sorts `keys` in place, ascending or descending, with a stable least-significant-digit
/// radix sort; `values` (NULL, or a buffer of any dtype with keys' length) are moved
/// with their keys. Floats follow -inf < … < -0.0 < +0.0 < … < +inf < NaN (NaN last
/// ascending, first descending); equal keys keep their input order in both orders.
/// Asynchronous on CUDA, in stream order. On CUDA up to 256 portions of just under
/// 2^32 keys each (about 2^40 keys; more: INVALID_ARGUMENT).
#[no_mangle]
pub extern "C" fn gpuprims_radix_sort(
    ctx: *mut gpuprims_context,
    keys: *mut gpuprims_buffer,
    values: *mut gpuprims_buffer,
    order: gpuprims_order,
) -> gpuprims_status {
    sort_in_place("gpuprims_radix_sort", ctx, keys, values, order, |b, k, d, v, n, o| b.radix_sort(k, d, v, n, o))
}

/// Sorts `keys` in place, ascending or descending, with a quicksort (a sample sort on
/// CUDA: many-way partitions by splitters drawn from a sample, equal keys finished at
/// once); `values` (NULL, or a buffer of any dtype with keys' length) move with their
/// keys. The same total order and the same key sequence as gpuprims_radix_sort, but
/// not stable: equal keys' values may come out in any order. Asynchronous on CUDA,
/// except for one small read-back per partition level, which waits. On CUDA the
/// partition levels count in 32 bits: 2^32 - 1 keys and more are sorted by the radix
/// sort's kernels instead (its limits apply; values then come in stable order).
#[no_mangle]
pub extern "C" fn gpuprims_quicksort(
    ctx: *mut gpuprims_context,
    keys: *mut gpuprims_buffer,
    values: *mut gpuprims_buffer,
    order: gpuprims_order,
) -> gpuprims_status {
    sort_in_place("gpuprims_quicksort", ctx, keys, values, order, |b, k, d, v, n, o| b.quicksort(k, d, v, n, o))
}
