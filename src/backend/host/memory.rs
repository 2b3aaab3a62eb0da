//! Zero-initialised, 64-byte aligned host allocations whose failure is an error,
//! not an abort, and host memory borrowed from the caller (never freed here).

use std::alloc::{alloc_zeroed, dealloc, Layout};

use crate::error::{Error, Result};
use crate::fault::{self, Point};

pub struct HostMemory {
    ptr: *mut u8,
    bytes: usize,
    /// Caller-owned (gpuprims_buffer_wrap_host): neither freed nor counted as held.
    borrowed: bool,
}

// SAFETY: plain owned bytes; concurrent use of one buffer is the caller's race.
unsafe impl Send for HostMemory {}
unsafe impl Sync for HostMemory {}

const ALIGN: usize = 64;

impl HostMemory {
    pub fn zeroed(bytes: usize) -> Result<HostMemory> {
        if bytes == 0 {
            return Ok(HostMemory { ptr: ALIGN as *mut u8, bytes: 0, borrowed: false });
        }
        fault::point(Point::Alloc, || format!("allocating {bytes} bytes of host memory"))?;
        let layout = Layout::from_size_align(bytes, ALIGN)
            .map_err(|_| Error::OutOfMemory(format!("{bytes} bytes is too large")))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(Error::OutOfMemory(format!("could not allocate {bytes} bytes of host memory")));
        }
        fault::acquired(bytes);
        Ok(HostMemory { ptr, bytes, borrowed: false })
    }

    /// The caller's `bytes` at `ptr` (non-NULL, aligned to the element type: checked by
    /// the FFI layer), used in place and never freed. Empty: a dangling aligned pointer,
    /// as for an owned empty allocation, so no one reads the caller's pointer.
    pub fn borrowed(ptr: *mut u8, bytes: usize) -> HostMemory {
        let ptr = if bytes == 0 { ALIGN as *mut u8 } else { ptr };
        HostMemory { ptr, bytes, borrowed: true }
    }

    /// Whether two allocations share bytes (two handles wrapping the same host memory).
    pub fn overlaps(&self, other: &HostMemory) -> bool {
        let (a, b) = (self.ptr as usize, other.ptr as usize);
        self.bytes > 0 && other.bytes > 0 && a < b + other.bytes && b < a + self.bytes
    }

    pub fn len_bytes(&self) -> usize {
        self.bytes
    }

    /// # Safety
    /// No one may write the memory while the slice lives.
    pub unsafe fn bytes(&self) -> &[u8] {
        std::slice::from_raw_parts(self.ptr, self.bytes)
    }

    /// # Safety
    /// No one else may use the memory while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn bytes_mut(&self) -> &mut [u8] {
        std::slice::from_raw_parts_mut(self.ptr, self.bytes)
    }

    /// The first `len` elements as `T` (owned allocations are 64-byte aligned, borrowed
    /// ones aligned to their element type).
    ///
    /// # Safety
    /// As for `bytes`; `len * size_of::<T>()` must fit.
    pub unsafe fn typed<T>(&self, len: usize) -> &[T] {
        debug_assert!(len * std::mem::size_of::<T>() <= self.bytes);
        std::slice::from_raw_parts(self.ptr as *const T, len)
    }

    /// # Safety
    /// As for `bytes_mut`.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn typed_mut<T>(&self, len: usize) -> &mut [T] {
        debug_assert!(len * std::mem::size_of::<T>() <= self.bytes);
        std::slice::from_raw_parts_mut(self.ptr as *mut T, len)
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        if self.bytes > 0 && !self.borrowed {
            fault::released(self.bytes);
            // SAFETY: allocated in `zeroed` with this layout.
            unsafe { dealloc(self.ptr, Layout::from_size_align_unchecked(self.bytes, ALIGN)) };
        }
    }
}

/// An empty Vec with room for `len` elements, or OUT_OF_MEMORY naming `what`: the host
/// backend's scratch, allocated before a primitive's first write (a fault point, as
/// device scratch is on the CUDA backend).
pub fn scratch_vec<T>(len: usize, what: &str) -> Result<Vec<T>> {
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    let failed = || format!("allocating {bytes} bytes of host memory ({what})");
    fault::point(Point::Alloc, failed)?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::OutOfMemory(failed()))?;
    Ok(v)
}

/// Tests' host memory holding `xs` (the host primitives' unit tests build their inputs
/// with it).
#[cfg(test)]
pub(crate) fn memory_of<T: Copy>(xs: &[T]) -> crate::backend::Memory {
    let mem = HostMemory::zeroed(std::mem::size_of_val(xs)).unwrap();
    // SAFETY: a fresh allocation of exactly xs' bytes.
    unsafe { mem.typed_mut::<T>(xs.len()).copy_from_slice(xs) };
    crate::backend::Memory::Host(mem)
}
