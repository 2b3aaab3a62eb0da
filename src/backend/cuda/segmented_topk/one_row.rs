//! gpuprims_topk of a short input as one split row of the segmented top-k (split.rs):
//! its parts' top-ks at once in many blocks, then their merge. The device-wide top-k
//! (select.rs) runs a sample, a band, digit passes, a gather and a sort one after
//! another, each launch a few microseconds of latency at this size (H100, 2026-11-27:
//! f32 2^20, k = 100, 52.4 us against 36.6 as one row).
//!
//! It takes the context's step scratch (split::run), so no caller that holds that
//! scratch (the segmented top-k's huge rows, around their row lists) may come here:
//! those call select::topk directly.

use super::{compile_parts, policy, radix_sort, split, uniform_class, Call, Outputs};
use crate::backend::cuda::context::CudaShared;
use crate::backend::cuda::select::TopK;
use crate::error::Result;

/// gpuprims_topk of `len` keys (the policy's one_row_max_*: up to 2^21, k up to 512,
/// n * k up to 2^28; and only where split::plan splits the row, from about 32,768 keys)
/// as one split row: the same results, ties by the lowest index. Returns false, having
/// issued nothing, where it does not apply.
pub fn topk_one_row(shared: &CudaShared, call: &TopK) -> Result<bool> {
    let TopK { input: values, dtype, len, k, order, values: out_values, indices: out_indices } = *call;
    let p = policy();
    let (n, k64) = (len as u64, k as u64);
    if n > p.one_row_max_len || k64 > p.one_row_max_k || n.saturating_mul(k64) > p.one_row_max_work || k == 0 {
        return Ok(false);
    }
    let out = Outputs { values: out_values, indices: out_indices, len: k };
    let call = Call { shared, values, dtype, len, order, key_order: radix_sort::key_order(dtype, order), out: &out };
    let Some(split) = split::plan(&call, 1, n, k64, uniform_class(&call, 1, n, k64)) else { return Ok(false) };
    compile_parts(shared, dtype.size(), dtype.is_float())?;
    let mut state = shared.lock()?;
    split::run(&call, &mut state, 1, n, k64, &split)?;
    Ok(true)
}
