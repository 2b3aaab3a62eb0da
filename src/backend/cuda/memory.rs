//! Device memory of a buffer: owned (stream-ordered allocation, freed in stream
//! order when the buffer goes) or borrowed from the caller (never freed); the backend's
//! allocation and its copy back to the host.

use std::sync::Arc;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUstream};

use super::context::CudaShared;
use super::driver::DriverContext;
use crate::error::Result;
use crate::fault::Point;

pub struct DeviceMemory {
    pub ptr: CUdeviceptr,
    pub bytes: usize,
    /// The context that frees it; None for borrowed memory.
    pub owner: Option<Arc<CudaShared>>,
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if let (Some(owner), true) = (&self.owner, self.ptr != 0) {
            match owner.lock() {
                // SAFETY: allocated by us with cuMemAllocAsync; work using it was
                // issued on this stream (or ordered before it by set_stream).
                Ok(state) => {
                    let _ = unsafe { free_async(self.ptr, self.bytes, state.stream) };
                }
                // A lost CUDA context: the memory goes with it when it is destroyed.
                Err(_) => crate::fault::released(self.bytes),
            }
        }
    }
}

impl DeviceMemory {
    /// `bytes` of device memory the context owns: allocated in its stream order, and
    /// freed so when dropped (none for 0 bytes); `what` names it in the error.
    pub fn owned(shared: &Arc<CudaShared>, bytes: usize, what: &str) -> Result<DeviceMemory> {
        let ptr = match bytes {
            0 => 0,
            _ => {
                let state = shared.lock()?;
                // SAFETY: stream-ordered allocation on the context's stream.
                unsafe { alloc_async(state.stream, bytes, what) }?
            }
        };
        Ok(DeviceMemory { ptr, bytes, owner: Some(shared.clone()) })
    }
}

/// `bytes` (> 0) of stream-ordered device memory on `stream`; `what` names it in the
/// error. Every device allocation of the backend goes through here (a fault point).
///
/// # Safety
/// `stream` must be a live stream of the current context.
pub unsafe fn alloc_async(stream: CUstream, bytes: usize, what: &str) -> Result<CUdeviceptr> {
    crate::fault::point(Point::Alloc, || format!("allocating {bytes} bytes of device memory ({what})"))?;
    let ptr = drv::malloc_async(stream, bytes).during(&format!("allocating {bytes} bytes of device memory ({what})"))?;
    crate::fault::acquired(bytes);
    Ok(ptr)
}

/// Frees `bytes` at `ptr` (from alloc_async) in stream order on `stream`.
///
/// # Safety
/// Every use of the memory must be ordered before this point of `stream`.
pub unsafe fn free_async(ptr: CUdeviceptr, bytes: usize, stream: CUstream) -> Result<()> {
    crate::fault::released(bytes);
    drv::free_async(ptr, stream).during("cuMemFreeAsync")
}

/// Copies device memory at `src` into `dst` on `stream` and waits for the stream (so
/// for the work issued before the copy too): every copy of the backend to the host
/// goes through here. `what` names the copy in the error.
///
/// # Safety
/// `src .. src + size_of_val(dst)` must lie inside a live allocation, and every bit
/// pattern must be a valid `T` (plain numbers, or structs of them).
pub unsafe fn read_to_host<T: Copy>(stream: CUstream, src: CUdeviceptr, dst: &mut [T], what: &str) -> Result<()> {
    drv::memcpy_dtoh_async(dst, src, stream).during(what)?;
    CudaShared::wait(stream)
}
