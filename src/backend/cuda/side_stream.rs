//! A second stream of the context, for work that can run beside the work on the
//! caller's stream (the quicksort's small and large block sorts of a level), forked
//! from that stream and joined back to it by events, so stream order holds for the
//! caller: what the caller issues later waits for both.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUevent, CUevent_flags, CUevent_wait_flags, CUstream};

use super::driver::DriverContext;
use crate::error::Result;

pub struct SideStream {
    pub stream: CUstream,
    fork: CUevent,
    join: CUevent,
}

impl SideStream {
    /// Needs the context current (under the state lock).
    pub fn create() -> Result<SideStream> {
        let stream = drv::stream::create(drv::stream::StreamKind::NonBlocking).during("cuStreamCreate (side stream)")?;
        let event = || drv::event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING).during("cuEventCreate (side stream)");
        let (fork, join) = (event()?, event()?);
        Ok(SideStream { stream, fork, join })
    }

    /// Work issued on the side stream from now on waits for the work issued on `main`.
    pub fn fork(&self, main: CUstream) -> Result<()> {
        // SAFETY: live stream and event handles of the current context.
        unsafe {
            drv::event::record(self.fork, main).during("cuEventRecord (fork)")?;
            drv::stream::wait_event(self.stream, self.fork, CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                .during("cuStreamWaitEvent (fork)")
        }
    }

    /// Work issued on `main` from now on waits for the work issued on the side stream.
    pub fn join(&self, main: CUstream) -> Result<()> {
        // SAFETY: as in fork.
        unsafe {
            drv::event::record(self.join, self.stream).during("cuEventRecord (join)")?;
            drv::stream::wait_event(main, self.join, CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT)
                .during("cuStreamWaitEvent (join)")
        }
    }

    /// A stand-in holding `stream` and no events, for tests of which lane is which.
    #[cfg(test)]
    pub(super) fn stand_in(stream: CUstream) -> SideStream {
        SideStream { stream, fork: std::ptr::null_mut(), join: std::ptr::null_mut() }
    }

    /// Releases the handles; the caller has synchronized the context.
    pub fn destroy(&self) {
        // SAFETY: handles created in `create`, no longer used.
        unsafe {
            let _ = drv::event::destroy(self.fork);
            let _ = drv::event::destroy(self.join);
            let _ = drv::stream::destroy(self.stream);
        }
    }
}
