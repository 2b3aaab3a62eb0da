//! What the multi-rank operations need from the link between ranks: a small exchange
//! of host bytes (the plan every rank agrees on) and an all-to-all of buffer ranges
//! (the data). NCCL provides it between GPUs (backend/cuda/nccl_link.rs), the
//! in-process exchange between threads on the host backend (host_link.rs).

use std::ops::Range;

use super::host_link::HostLink;
use crate::backend::Memory;
use crate::error::Result;

/// One array's part of an all-to-all.
pub struct Transfer<'a> {
    pub send: &'a Memory,
    pub send_ranges: &'a [Range<usize>],
    pub recv: &'a Memory,
    pub recv_ranges: &'a [Range<usize>],
    /// The element's bytes (1, 2, 4 or 8): every range starts and ends on whole elements.
    pub unit: usize,
}

pub trait Link: Send + Sync {
    fn rank(&self) -> usize;
    fn nranks(&self) -> usize;
    /// Every rank's `local` (the same length on every rank), in rank order. Waits.
    fn all_gather(&self, local: &[u8]) -> Result<Vec<u8>>;
    /// Every transfer's parts at once (one NCCL group on CUDA): bytes
    /// `send_ranges[j]` of `send` go to rank j, and rank i's arrive in bytes
    /// `recv_ranges[i]` of `recv` (the sizes agree pairwise; the rank's own range is
    /// copied locally). In stream order on CUDA; `send` and `recv` do not overlap.
    fn all_to_all(&self, transfers: &[Transfer]) -> Result<()>;
    /// The same, where every rank is a thread of this process and `plans` exchanges
    /// host bytes among them (a group): the CUDA link then copies each part straight
    /// into its receiver's memory. By default, `all_to_all`.
    fn all_to_all_in_process(&self, transfers: &[Transfer], _plans: &HostLink) -> Result<()> {
        self.all_to_all(transfers)
    }
    /// Ends this rank's part after a failure past the agreement: the other ranks' waits
    /// on it end with an error rather than hang, and the link refuses later work.
    fn fail(&self, why: &str);
}
