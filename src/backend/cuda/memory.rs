//! Device memory of a buffer: owned (stream-ordered allocation, freed in stream
//! order when the buffer goes) or borrowed from the caller (never freed).

use std::sync::Arc;

use cudarc::driver::result as drv;
use cudarc::driver::sys::CUdeviceptr;

use super::context::CudaShared;

pub struct DeviceMemory {
    pub ptr: CUdeviceptr,
    pub bytes: usize,
    /// The context that frees it; None for borrowed memory.
    pub owner: Option<Arc<CudaShared>>,
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if let (Some(owner), true) = (&self.owner, self.ptr != 0) {
            if let Ok(state) = owner.lock() {
                // SAFETY: allocated by us with cuMemAllocAsync; work using it was
                // issued on this stream (or ordered before it by set_stream).
                let _ = unsafe { drv::free_async(self.ptr, state.stream) };
            }
        }
    }
}
