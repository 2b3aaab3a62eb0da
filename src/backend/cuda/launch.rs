//! Launching a kernel with scalar and pointer arguments.

use std::ffi::c_void;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUfunction, CUstream};

use super::driver::DriverContext;
use crate::error::{internal, invalid, Result};

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

/// The most parameters any of our kernels takes (segsel_short: 15). A launch with more
/// arguments fails as an internal error; the test below checks every kernel's
/// signature against it.
const MAX_ARGS: usize = 16;

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
    with_params(grid, args, |params| {
        drv::launch_kernel(f, (grid as u32, 1, 1), (block, 1, 1), shared_bytes, stream, params).during("cuLaunchKernel")
    })
}

/// Launches `f` cooperatively: the driver starts it only with every block resident at
/// once, so its blocks may wait for each other (kernels/common/grid_barrier.cuh).
/// Returns false, having launched nothing, where the driver cannot run the grid so
/// (too many blocks to be resident at once, or no cooperative launch on this device),
/// so the caller can go another way.
///
/// # Safety
/// As `launch`.
pub unsafe fn launch_cooperative(f: CUfunction, grid: u64, block: u32, stream: CUstream, args: &[Arg]) -> Result<bool> {
    use cudarc::driver::sys::{self, CUresult};
    let mut refused = false;
    with_params(grid, args, |params| {
        match sys::cuLaunchCooperativeKernel(f, grid as u32, 1, 1, block, 1, 1, 0, stream, params.as_mut_ptr()) {
            CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE | CUresult::CUDA_ERROR_NOT_SUPPORTED => {
                refused = true;
                Ok(())
            }
            r => r.during("cuLaunchCooperativeKernel"),
        }
    })?;
    Ok(!refused)
}

/// The driver's parameter array for `args` (on the stack: a launch is on every call's
/// path), after checking the grid and the argument count.
fn with_params(grid: u64, args: &[Arg], launch: impl FnOnce(&mut [*mut c_void]) -> Result<()>) -> Result<()> {
    if grid == 0 || grid > i32::MAX as u64 {
        return Err(invalid(format!("input too large: {grid} blocks do not fit one grid")));
    }
    let mut slots = [0u64; MAX_ARGS];
    let mut params = [std::ptr::null_mut::<c_void>(); MAX_ARGS];
    if args.len() > MAX_ARGS {
        return Err(internal(format!("{} kernel arguments, at most {MAX_ARGS} (launch.rs: MAX_ARGS)", args.len())));
    }
    for (i, a) in args.iter().enumerate() {
        slots[i] = a.0;
    }
    for (param, slot) in params.iter_mut().zip(slots.iter_mut()) {
        *param = slot as *mut u64 as *mut c_void;
    }
    launch(&mut params[..args.len()])
}


#[cfg(test)]
mod tests {
    use super::MAX_ARGS;
    use crate::backend::cuda::sources;

    /// The parameters of each `extern "C" __global__` kernel in `text`: (name, count).
    fn kernel_params(text: &str) -> Vec<(String, usize)> {
        // From an opening parenthesis at `at`, the index of its matching close.
        fn close(s: &[u8], at: usize) -> usize {
            let mut depth = 0;
            for (i, &c) in s.iter().enumerate().skip(at) {
                match c {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            return i;
                        }
                    }
                    _ => {}
                }
            }
            panic!("unbalanced parentheses in a kernel signature");
        }
        let mut found = Vec::new();
        for (at, _) in text.match_indices("extern \"C\" __global__") {
            let rest = &text.as_bytes()[at..];
            let mut open = rest.iter().position(|&c| c == b'(').unwrap();
            if std::str::from_utf8(&rest[..open]).unwrap().contains("__launch_bounds__") {
                let end = close(rest, open);
                open = end + 1 + rest[end + 1..].iter().position(|&c| c == b'(').unwrap();
            }
            let end = close(rest, open);
            let name = std::str::from_utf8(&rest[..open]).unwrap().split_whitespace().last().unwrap_or("").to_string();
            let params = std::str::from_utf8(&rest[open + 1..end]).unwrap().trim();
            let count = if params.is_empty() || params == "void" { 0 } else { params.matches(',').count() + 1 };
            found.push((name, count));
        }
        found
    }

    #[test]
    fn every_kernel_fits_the_launch_slots() {
        let all = [
            sources::REDUCE,
            sources::SCAN,
            sources::RADIX_SORT,
            sources::QUICKSORT,
            sources::QUICKSORT_SPLITTERS,
            sources::QUICKSORT_SMALL,
            sources::SELECT,
            sources::TOPK,
            sources::SEGMENTED_SELECT,
            sources::SEGMENTED_SELECT_LONG,
            sources::LIFE,
            sources::LIFE_POPULATION,
        ];
        let mut kernels = 0;
        for s in all {
            for (name, count) in kernel_params(s.text) {
                kernels += 1;
                assert!(count <= MAX_ARGS, "{}: {name} takes {count} parameters, launch() passes at most {MAX_ARGS}", s.name);
            }
        }
        assert!(kernels >= 30, "only {kernels} kernels found: the signature scan is broken");
    }
}
