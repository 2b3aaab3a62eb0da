//! Top-k of a short input whose k is a large share of it, by one stable radix sort of a
//! copy of the whole input (with its indices, 0 .. n-1), the first k copied out; as
//! PyTorch's topk sorts for large k. The selection path (select::topk) finds the k-th
//! key, gathers the k and sorts them: below about 2^21 keys each of its steps is a few
//! launches' latency, and a radix sort of 2^20 keys costs little more than one of 2^16
//! (H200, 2026-11-28: f32 descending 0.073 against 0.048 ms). Top-k f32 on an H200
//! (2026-11-28, wall clock, median of 21): k = 65,536 of 2^20 took 81.6 µs this way
//! against 97.5 by selection, k = 4,096 of 2^16 62.1 against 83.3, k = 131,072 of 2^21
//! 95.9 against 109.0; where k is under 1/16 of the keys selection mostly wins (k =
//! 16,384 of 2^21: 93.1 against 90.6). `applies` holds the thresholds.
//!
//! The result is the same: a stable sort puts equal keys in input order, so the first k
//! are the k best with ties by the lowest index, in the library's order of keys (the
//! radix sort's, which the selection path sorts its k by too). The outputs are written
//! only at the end (the first k indices widened to u64, the first k keys copied), after
//! every allocation, compile and the sort.

use std::sync::Arc;

use once_cell::sync::Lazy;

use cudarc::driver::result as drv;

use super::context::CudaShared;
use super::driver::DriverContext;
use super::launch::{launch, Arg};
use super::memory::DeviceMemory;
use super::precompile;
use super::radix_sort;
use super::select::{self, TopK};
use super::sources;
use super::tuning::knob;
use crate::dtype::DType;
use crate::error::Result;

/// Whether a top-k of k of `len` keys sorts the whole input: above what one block sorts
/// (select::small_topk_len), where k is at least 1/`select.topk_sort_whole_share` of
/// them (default 16; 0: never), up to `select.topk_sort_whole_upto` keys (default
/// 2^21), while the sort moves at most `select.topk_sort_whole_bytes` (default 32 MiB):
/// each key and its 4-byte index, if any, once a pass, a pass a key byte. H200,
/// 2026-11-28, wall clock against the selection path, k = n/16 to n/2: f32 alone won
/// up to 2^21 (16 bytes a key); u64 (64) won at 2^18 (99 against 137 µs) and lost at
/// 2^20 (150 against 139). With indices sorted as u64 (since as u32): f32 (48 bytes a
/// key then, 32 now) won at 2^19 (89 against 109 µs for k = 65,536) and was level at
/// 2^20; u64 (128, now 96) won at 2^18 (136 against 172). With u32 indices (same day):
/// f32 at 2^20 won (101.6-109.2 against 114.4-114.8 µs for k = 65,536), at 2^18 and
/// 2^19 by 5-15% more; u64 at 2^18 was level with the u64 indices.
pub fn applies(len: usize, k: usize, key_bytes: usize, with_indices: bool) -> bool {
    static KNOBS: Lazy<(usize, usize, usize)> = Lazy::new(|| {
        (
            knob("select.topk_sort_whole_upto", 1 << 21) as usize,
            knob("select.topk_sort_whole_bytes", 1 << 25) as usize,
            knob("select.topk_sort_whole_share", 16) as usize,
        )
    });
    let (upto, most_bytes, share) = *KNOBS;
    let moved = len.saturating_mul(key_bytes + if with_indices { 4 } else { 0 }).saturating_mul(key_bytes);
    // (The indices sort as u32: len stays below 2^32 whatever the knobs say.)
    let fits = len > select::small_topk_len() && len <= upto && len <= u32::MAX as usize;
    share > 0 && fits && moved <= most_bytes && k.saturating_mul(share) >= len
}

/// gpuprims_topk by one sort of the whole input (see the module's text).
pub fn topk(shared: &Arc<CudaShared>, call: &TopK) -> Result<()> {
    let TopK { input, dtype, len, k, order, values: out_values, indices: out_indices } = *call;
    select::supported_k(k)?;
    let (key_bytes, float_keys) = (dtype.size(), dtype.is_float());
    let keys = DeviceMemory::owned(shared, len * key_bytes, "top-k's copy of its input")?;
    // The indices travel as u32 (len < 2^32): 4-byte keys sort with them packed.
    let index = match out_indices {
        Some(_) => Some(DeviceMemory::owned(shared, len * 4, "top-k's indices")?),
        None => None,
    };
    let sorted_with = index.as_ref().map(|m| (m, DType::U32));
    // The index kernels' module compiles beside the sort's on a first call.
    let topk_spec = || select::module(sources::TOPK, key_bytes, float_keys);
    let topk_module: [precompile::Wanted; 1] = [(sources::TOPK, select::variant(key_bytes, float_keys), &topk_spec)];
    let extra: &[precompile::Wanted] = if index.is_some() { &topk_module } else { &[] };
    radix_sort::compile_for_with(shared, &keys, dtype, sorted_with, len, extra)?;
    let block = select::block_threads();
    let widen = {
        let state = shared.lock()?;
        let kernels = match index {
            Some(_) => Some((
                select::function(shared, sources::TOPK, key_bytes, float_keys, "select_topk_iota")?,
                select::function(shared, sources::TOPK, key_bytes, float_keys, "select_topk_widen")?,
            )),
            None => None,
        };
        // SAFETY: `keys` holds len keys, as does the caller's input.
        unsafe { drv::memcpy_dtod_async(keys.ptr, input.ptr, len * key_bytes, state.stream) }.during("copying top-k's input")?;
        if let (Some((iota, _)), Some(ix)) = (kernels, &index) {
            let grid = (len as u64).div_ceil(block as u64).min(shared.resident_blocks(iota, block)?);
            // SAFETY: select_topk_iota(u32 *index, usize n); `ix` holds len u32s.
            unsafe { launch(iota, grid, block, state.stream, &[Arg::ptr(ix.ptr), Arg::size(len)]) }?;
        }
        kernels.map(|(_, widen)| widen)
    };
    radix_sort::sort(shared, &keys, dtype, sorted_with, len, order)?;
    let state = shared.lock()?;
    if let (Some(widen), Some(out), Some(ix)) = (widen, out_indices, &index) {
        let grid = (k as u64).div_ceil(block as u64).min(shared.resident_blocks(widen, block)?);
        // SAFETY: select_topk_widen(const u32 *index, usize k, u64 *out); the sorted
        // indices hold len >= k, the output k.
        unsafe { launch(widen, grid, block, state.stream, &[Arg::ptr(ix.ptr), Arg::size(k), Arg::ptr(out.ptr)]) }?;
    }
    // SAFETY: the output holds k keys; the sorted copy len >= k.
    unsafe { drv::memcpy_dtod_async(out_values.ptr, keys.ptr, k * key_bytes, state.stream) }.during("copying top-k's values")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default limits, as `applies` states them: k at least n/16, above one
    /// block's sort, up to 2^21 keys, and at most 32 MiB moved by the sort.
    #[test]
    fn sorts_whole_within_the_stated_limits() {
        let small = select::small_topk_len();
        assert!(!applies(small, small, 4, false), "one block's sort stays one block's");
        assert!(applies(small + 1, small, 4, false));
        assert!(!applies(1 << 20, (1 << 16) - 1, 4, false), "k under n/16");
        assert!(applies(1 << 20, 1 << 16, 4, false));
        // f32 alone 16 bytes a key: to 2^21; with indices 32: to 2^20.
        assert!(applies(1 << 21, 1 << 17, 4, false) && !applies((1 << 21) + 2, 1 << 20, 4, false));
        assert!(applies(1 << 20, 1 << 16, 4, true) && !applies(1 << 21, 1 << 17, 4, true));
        // u64 alone 64 bytes a key: to 2^19; with indices 96: past 2^18, short of 2^19.
        assert!(applies(1 << 19, 1 << 15, 8, false) && !applies(1 << 20, 1 << 16, 8, false));
        assert!(applies(1 << 18, 1 << 14, 8, true) && !applies(1 << 19, 1 << 15, 8, true));
    }
}
