//! gpuprims_fault_*: failures on purpose, for tests (src/fault.rs). Not for production
//! code: an armed fault makes a real call of any thread fail.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, CStr};

use super::types::*;
use super::{guard, require, write_out};
use crate::error::invalid;
use crate::fault;

/// Fault points passed since the last gpuprims_fault_inject (or GPUPRIMS_FAULT), per
/// kind, and the faults made: nothing is counted before the first (arm "" to count
/// without a fault); the bytes held are counted always.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct gpuprims_fault_counts {
    /// Device memory allocations (host memory on the host backend: buffers, scratch).
    pub allocs: u64,
    /// Kernel modules a context needed for the first time (compiled on the process's
    /// first need, else taken from memory or the disk cache).
    pub compiles: u64,
    /// Kernel modules loaded into a CUDA context.
    pub loads: u64,
    /// Kernel launches.
    pub launches: u64,
    /// Faults made (0 or 1 for each kind armed).
    pub injected: u64,
    /// Bytes of device memory (host memory on the host backend) that buffers, grids and
    /// scratch of every context hold now; 0 once all are destroyed (a leak check).
    pub bytes_held: u64,
}

/// For tests only: from now on, the N-th fault point of a kind fails as the real
/// operation would (an allocation with GPUPRIMS_STATUS_OUT_OF_MEMORY, a compile with
/// GPUPRIMS_STATUS_COMPILE_ERROR, a module load or a launch with
/// GPUPRIMS_STATUS_DRIVER_ERROR), its message ending "(fault injected: kind:N)". `spec`
/// is "kind:N" or several joined by commas, kind one of alloc, compile, load, launch,
/// N >= 1; "" disarms. Every count restarts at 0. The environment variable
/// GPUPRIMS_FAULT arms the same way at the process's first fault point. Faults are
/// process-wide: calls of every thread and context count and can fail.
#[no_mangle]
pub extern "C" fn gpuprims_fault_inject(spec: *const c_char) -> gpuprims_status {
    guard("gpuprims_fault_inject", || {
        require(spec, "spec")?;
        // SAFETY: the caller passes a NUL-terminated string.
        let text = unsafe { CStr::from_ptr(spec) }.to_str().map_err(|_| invalid("spec: not UTF-8"))?;
        fault::arm(text).map_err(|e| invalid(format!("spec: {e}")))
    })
}

/// The fault points passed and the faults made since the last gpuprims_fault_inject.
#[no_mangle]
pub extern "C" fn gpuprims_fault_get_counts(out: *mut gpuprims_fault_counts) -> gpuprims_status {
    guard("gpuprims_fault_get_counts", || {
        require(out, "out")?;
        let ([allocs, compiles, loads, launches], injected, bytes_held) = fault::counts();
        write_out(out, gpuprims_fault_counts { allocs, compiles, loads, launches, injected, bytes_held });
        Ok(())
    })
}
