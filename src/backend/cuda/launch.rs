//! Launching a kernel with scalar and pointer arguments.

use std::ffi::c_void;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUfunction, CUstream};

use super::driver::DriverContext;
use super::tuning::knob;
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

/// The most parameters any of our kernels takes (segsel_short: 16). A launch with more
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
    launch_with_shared_as(programmatic(), f, grid, block, shared_bytes, stream, args)
}

/// As `launch_with_shared`, programmatic or not as the caller says (a primitive whose
/// launches measure slower so opts out; `programmatic` true only where `programmatic()` is).
///
/// # Safety
/// As `launch_with_shared`.
pub unsafe fn launch_with_shared_as(programmatic: bool, f: CUfunction, grid: u64, block: u32, shared_bytes: u32, stream: CUstream, args: &[Arg]) -> Result<()> {
    with_params(grid, args, |params| {
        if programmatic {
            launch_programmatic(f, grid as u32, block, shared_bytes, stream, params)
        } else {
            drv::launch_kernel(f, (grid as u32, 1, 1), (block, 1, 1), shared_bytes, stream, params).during("cuLaunchKernel")
        }
    })
}

/// Knob launch.pdl=1: every launch may start before the kernel ahead of it in the
/// stream has finished (programmatic dependent launch, sm_90 and later). Safe because
/// every kernel waits for the grids ahead before it touches memory
/// (kernels/common/grid_dependency.cuh; checked by a test below). On by default:
/// on the H100 (2026-11-23) it takes 6-8% off radix sorts at 2^20 and 5-6% off
/// selection at 2^24, where launches follow each other closely.
/// Only where every device is sm_90 or later (a process may hold contexts on several;
/// the kernels' waits compile to nothing below sm_90, and the attribute is Hopper's).
static PROGRAMMATIC: once_cell::sync::Lazy<bool> =
    once_cell::sync::Lazy::new(|| knob("launch.pdl", 1) != 0 && every_device_from_sm90());

/// Whether every device the driver lists has compute capability 9.0 or later (false
/// when one cannot be read: plain launches are always right). With no driver nothing
/// launches, and modules compile as for Hopper (so NVRTC checks those paths too).
fn every_device_from_sm90() -> bool {
    use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
    // SAFETY: only tries to dlopen the driver library (cudarc panics without it).
    if !unsafe { cudarc::driver::sys::is_culib_present() } || drv::init().is_err() {
        return true;
    }
    let Ok(count) = drv::device::get_count() else { return false };
    (0..count).all(|ordinal| {
        drv::device::get(ordinal)
            // SAFETY: the device handle came from cuDeviceGet.
            .and_then(|dev| unsafe { drv::device::get_attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) })
            .is_ok_and(|major| major >= 9)
    })
}

/// Whether launches are programmatic (launch.pdl). Modules are then compiled with
/// -DGP_PDL=1 (nvrtc.rs; part of their cache key, loader.rs), so that kernels let the
/// next one start early only when ours are the launches that follow: with the knob
/// off, no kernel of ours triggers a dependent launch of someone else's kernel.
pub fn programmatic() -> bool {
    *PROGRAMMATIC
}

/// The define modules are compiled with for programmatic launches (nvrtc::compile adds
/// it, and the loader's cache key counts it), or none.
pub fn programmatic_define() -> Option<&'static str> {
    programmatic().then_some("-DGP_PDL=1")
}

unsafe fn launch_programmatic(f: CUfunction, grid: u32, block: u32, shared_bytes: u32, stream: CUstream, params: &mut [*mut c_void]) -> Result<()> {
    use cudarc::driver::sys::{self, CUlaunchAttribute, CUlaunchAttributeID, CUlaunchAttributeValue, CUlaunchConfig};
    let mut value: CUlaunchAttributeValue = std::mem::zeroed();
    value.programmaticStreamSerializationAllowed = 1;
    let mut attr = CUlaunchAttribute {
        id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    };
    let config = CUlaunchConfig {
        gridDimX: grid,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: shared_bytes,
        hStream: stream,
        attrs: &mut attr,
        numAttrs: 1,
    };
    sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut()).during("cuLaunchKernelEx")
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
    crate::fault::point(crate::fault::Point::Launch, || format!("launching a kernel of {grid} blocks"))?;
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

    /// Every kernel source of the library.
    /// Every kernel source, from the registry of modules (a new source is covered
    /// as soon as its planner registers its modules).
    fn all_sources() -> Vec<sources::Source> {
        let mut seen: Vec<sources::Source> = Vec::new();
        for m in super::super::modules::all() {
            if !seen.iter().any(|s| s.name == m.source.name) {
                seen.push(m.source);
            }
        }
        seen
    }

    /// Each `extern "C" __global__` kernel in `text`: (name, parameter count, the text
    /// of its body from the opening brace on).
    fn kernels(text: &str) -> Vec<(String, usize, &str)> {
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
            let body = &text[at + end..];
            let body = &body[body.find('{').expect("a kernel body") + 1..];
            found.push((name, count, body));
        }
        found
    }

    #[test]
    fn every_kernel_fits_the_launch_slots() {
        let mut kernels_seen = 0;
        for s in all_sources() {
            for (name, count, _) in kernels(s.text) {
                kernels_seen += 1;
                assert!(count <= MAX_ARGS, "{}: {name} takes {count} parameters, launch() passes at most {MAX_ARGS}", s.name);
            }
        }
        assert!(kernels_seen >= 30, "only {kernels_seen} kernels found: the signature scan is broken");
    }

    /// Any launch may be programmatic (knob launch.pdl), so every kernel must wait for
    /// the grids ahead of it before anything else (kernels/common/grid_dependency.cuh).
    #[test]
    fn every_kernel_first_waits_for_the_grids_ahead() {
        for s in all_sources() {
            for (name, _, body) in kernels(s.text) {
                let first = body.trim_start_matches(|c: char| c.is_whitespace() || c == '\\');
                assert!(
                    first.starts_with("gp::wait_for_prior_grids();"),
                    "{}: {name} does not begin with gp::wait_for_prior_grids()",
                    s.name
                );
            }
        }
    }
}
