//! Launching a kernel with scalar and pointer arguments.

use std::ffi::c_void;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUfunction, CUstream};

use super::driver::DriverContext;
use crate::error::{invalid, Result};

/// One kernel argument: every parameter of our kernels is a pointer, a 64-bit size
/// or a 32-bit word, passed from an 8-byte slot (the driver reads the parameter's
/// own size from it; little-endian, so a u32 is the low half).
#[derive(Clone, Copy)]
pub struct Arg(u64);

impl Arg {
    pub fn ptr(p: u64) -> Arg {
        Arg(p)
    }
    pub fn size(n: usize) -> Arg {
        Arg(n as u64)
    }
    pub fn u32(v: u32) -> Arg {
        Arg(v as u64)
    }
    pub fn u64(v: u64) -> Arg {
        Arg(v)
    }
}

/// The most parameters any of our kernels takes.
const MAX_ARGS: usize = 12;

/// Launches `f` on a 1-D grid.
///
/// # Safety
/// The arguments must match the kernel's parameters and the memory they point to
/// must be valid for the kernel's accesses in stream order.
pub unsafe fn launch(f: CUfunction, grid: u64, block: u32, stream: CUstream, args: &[Arg]) -> Result<()> {
    launch_with_shared(f, grid, block, 0, stream, args)
}

/// Launches `f` with `shared_bytes` of dynamic shared memory (past 48 KiB, after
/// `Loader::allow_dynamic_shared`).
///
/// # Safety
/// As `launch`; the kernel must use at most `shared_bytes` of dynamic shared memory.
pub unsafe fn launch_with_shared(f: CUfunction, grid: u64, block: u32, shared_bytes: u32, stream: CUstream, args: &[Arg]) -> Result<()> {
    if grid == 0 || grid > i32::MAX as u64 {
        return Err(invalid(format!("input too large: {grid} blocks do not fit one grid")));
    }
    // On the stack: a launch is on every call's path.
    let mut slots = [0u64; MAX_ARGS];
    let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
    if args.len() > MAX_ARGS {
        return Err(invalid(format!("{} kernel arguments, at most {MAX_ARGS}", args.len())));
    }
    for (i, a) in args.iter().enumerate() {
        slots[i] = a.0;
    }
    for (param, slot) in params.iter_mut().zip(slots.iter_mut()) {
        *param = slot as *mut u64 as *mut c_void;
    }
    drv::launch_kernel(f, (grid as u32, 1, 1), (block, 1, 1), shared_bytes, stream, &mut params[..args.len()]).during("cuLaunchKernel")
}

