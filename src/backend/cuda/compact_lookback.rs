//! The look-back memory of an ordered compaction (kernels/common/ordered_compact.cuh),
//! as top-k's gather and the counting sort's NaN gather both launch it: each tile's
//! pair of counts, then each anchor's inclusive prefix, as tagged words in the
//! context's sync memory.

use cudarc::driver::sys::CUdeviceptr;

use super::context::State;
use crate::error::Result;

/// Tagged words per published count pair (kernels/common/tagged.cuh: 8-byte values).
const WORDS_PER_PAIR: usize = 2;

/// The words a compaction over `tiles` tiles publishes, with an anchor every `window`.
pub fn words(tiles: usize, window: u32) -> usize {
    (tiles + tiles.div_ceil(window as usize)) * WORDS_PER_PAIR
}

/// One run's look-back: the kernel's `aggregate`, `inclusive` and `epoch` arguments.
pub struct Lookback {
    pub aggregate: CUdeviceptr,
    pub inclusive: CUdeviceptr,
    pub epoch: u32,
}

/// Starts a run of the look-back for `tiles` tiles. The state lock must be held.
pub fn begin(state: &mut State, tiles: usize, window: u32) -> Result<Lookback> {
    let (aggregate, epoch) = state.sync.begin_run(state.stream, words(tiles, window))?;
    Ok(Lookback { aggregate, inclusive: aggregate + (tiles * WORDS_PER_PAIR * 8) as u64, epoch })
}
