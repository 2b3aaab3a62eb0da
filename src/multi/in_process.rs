//! The link of a rank whose peers are all threads of this process (a group): the plans
//! (the agreement, counts, samples) go through host memory at a rendezvous of the
//! threads, the data through the backend's link (NCCL between GPUs). A plan through
//! NCCL costs a copy to the device, a collective and a copy back, tens of microseconds
//! that a call with several plan rounds pays each round.

use super::host_link::HostLink;
use super::transport::{Link, Transfer};
use crate::error::Result;

pub struct InProcessLink {
    data: Box<dyn Link>,
    plans: HostLink,
}

impl InProcessLink {
    pub fn new(data: Box<dyn Link>, plans: HostLink) -> InProcessLink {
        InProcessLink { data, plans }
    }
}

impl Link for InProcessLink {
    fn rank(&self) -> usize {
        self.data.rank()
    }

    fn nranks(&self) -> usize {
        self.data.nranks()
    }

    fn all_gather(&self, local: &[u8]) -> Result<Vec<u8>> {
        self.plans.all_gather(local)
    }

    fn all_to_all(&self, transfers: &[Transfer]) -> Result<()> {
        self.data.all_to_all_in_process(transfers, &self.plans)
    }

    fn all_to_all_chunks(&self, chunks: &[Vec<Transfer>], landed: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        self.data.all_to_all_chunks_in_process(chunks, &self.plans, landed)
    }

    fn overlaps_chunks(&self) -> Result<bool> {
        self.data.overlaps_chunks_in_process(&self.plans)
    }

    fn fail(&self, why: &str) {
        self.plans.fail(why);
        self.data.fail(why);
    }
}
