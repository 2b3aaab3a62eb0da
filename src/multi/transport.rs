//! What the multi-rank operations need from the link between ranks: a small exchange
//! of host bytes (the plan every rank agrees on) and an all-to-all of buffer ranges
//! (the data). NCCL provides it between GPUs (backend/cuda/nccl_link.rs), the
//! in-process exchange between threads on the host backend (host_link.rs).

use std::ops::Range;

use super::host_link::HostLink;
use crate::backend::Memory;
use crate::error::Result;

/// One array's part of an all-to-all.
#[derive(Clone, Copy)]
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
    /// Chunks of transfers (each as in `all_to_all`), in order, with `landed(i)` called
    /// once chunk i may be read where it arrived (on CUDA, in stream order: the work
    /// `landed` issues waits for it). By default each chunk is exchanged in turn;
    /// a link whose `overlaps_chunks` holds moves later chunks while the work of
    /// earlier ones runs.
    fn all_to_all_chunks(&self, chunks: &[Vec<Transfer>], landed: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        for (i, chunk) in chunks.iter().enumerate() {
            self.all_to_all(chunk)?;
            landed(i)?;
        }
        Ok(())
    }
    /// Whether `all_to_all_chunks` overlaps the chunks with the work on them: alike on
    /// every rank (a collective, where the link must first find out). By default no.
    fn overlaps_chunks(&self) -> Result<bool> {
        Ok(false)
    }
    /// The two above where every rank is a thread of this process (see
    /// `all_to_all_in_process`). By default, as above.
    fn all_to_all_chunks_in_process(&self, chunks: &[Vec<Transfer>], plans: &HostLink,
                                    landed: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        for (i, chunk) in chunks.iter().enumerate() {
            self.all_to_all_in_process(chunk, plans)?;
            landed(i)?;
        }
        Ok(())
    }
    fn overlaps_chunks_in_process(&self, _plans: &HostLink) -> Result<bool> {
        self.overlaps_chunks()
    }
    /// Ends this rank's part after a failure past the agreement: the other ranks' waits
    /// on it end with an error rather than hang, and the link refuses later work.
    fn fail(&self, why: &str);
}
