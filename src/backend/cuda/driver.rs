//! Talking to the CUDA driver: probing for it without panicking, turning its errors
//! into ours, reading device properties, and making a context current.

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUdevice_attribute};

use crate::error::{Error, Result};

/// Maps a driver error to ours; `what` says which operation failed. An error that
/// leaves the CUDA context unusable (a kernel's fault) marks the current context lost.
pub fn driver_error(what: &str, e: DriverError) -> Error {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let msg = format!("{what}: {name} ({text})");
    if is_sticky(e.0) {
        return Error::Driver(lost::mark_current(msg));
    }
    match e.0 {
        sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Error::OutOfMemory(msg),
        _ => Error::Driver(msg),
    }
}

/// The errors after which every later call on the CUDA context fails the same way
/// (a kernel's fault: CUDA's "sticky" errors); only a new context recovers.
fn is_sticky(r: sys::CUresult) -> bool {
    use sys::CUresult::*;
    matches!(
        r,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
    )
}

/// The CUDA contexts a sticky error was seen on. Primary contexts are shared by every
/// gpuprims context of a device, so the mark is by CUDA context: each gpuprims context
/// on it refuses work from then on (CudaShared::lock), until all are destroyed and a
/// new one finds a fresh CUDA context (the driver may give it the old handle value).
pub mod lost {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    use cudarc::driver::sys::{self, CUcontext};

    /// What a call on a lost context tells the caller. CUDA 13's driver refuses every
    /// new context on the device in the process after such an error (H200, 2026-11-26:
    /// cuDevicePrimaryCtxRetain and cuCtxCreate fail with it even after the primary
    /// context was released and reset), so only a new process recovers.
    pub const LOST_ADVICE: &str = "the CUDA context is lost: destroy every gpuprims context of this device; \
        CUDA gives no new context on it to this process (restart the process; host-backend contexts still work)";

    /// Whether any context was ever marked: the only cost of this on a healthy call.
    static ANY: AtomicBool = AtomicBool::new(false);
    /// (context as an address, the error that lost it).
    static LOST: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());

    /// Marks the current context lost with `msg` and returns the message to report.
    pub(super) fn mark_current(msg: String) -> String {
        let mut ctx: CUcontext = std::ptr::null_mut();
        // SAFETY: an out-pointer.
        if unsafe { sys::cuCtxGetCurrent(&mut ctx) } == sys::CUresult::CUDA_SUCCESS && !ctx.is_null() {
            let mut lost = LOST.lock().unwrap_or_else(|p| p.into_inner());
            if !lost.iter().any(|(c, _)| *c == ctx as usize) {
                lost.push((ctx as usize, msg.clone()));
            }
            ANY.store(true, Ordering::Release);
        }
        format!("{msg}; {LOST_ADVICE}")
    }

    /// The error that lost `ctx`, if one did.
    pub fn why(ctx: CUcontext) -> Option<String> {
        if !ANY.load(Ordering::Acquire) {
            return None;
        }
        let lost = LOST.lock().unwrap_or_else(|p| p.into_inner());
        lost.iter().find(|(c, _)| *c == ctx as usize).map(|(_, m)| m.clone())
    }

    /// Forgets the mark of `ctx` (a fresh context that got the old handle value).
    pub fn forget(ctx: CUcontext) {
        LOST.lock().unwrap_or_else(|p| p.into_inner()).retain(|(c, _)| *c != ctx as usize);
    }
}

/// Adds `what` to a driver result's error.
pub trait DriverContext<T> {
    fn during(self, what: &str) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, DriverError> {
    fn during(self, what: &str) -> Result<T> {
        self.map_err(|e| driver_error(what, e))
    }
}

impl DriverContext<()> for sys::CUresult {
    fn during(self, what: &str) -> Result<()> {
        self.result().during(what)
    }
}

/// Loads and initialises the driver, or says why there is no usable device.
/// A missing libcuda is NO_DEVICE, never a panic.
pub fn init_driver() -> Result<i32> {
    // SAFETY: only tries to dlopen the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDevice(
            "the CUDA driver library (libcuda.so) was not found: no NVIDIA driver is installed".into(),
        ));
    }
    result::init().map_err(|e| Error::NoDevice(format!("cuInit failed: {}", driver_error("cuInit", e))))?;
    result::device::get_count().map_err(|e| Error::NoDevice(driver_error("cuDeviceGetCount", e).to_string()))
}

/// The properties of a device the planners need.
#[derive(Debug, Clone)]
pub struct DeviceProps {
    pub name: String,
    pub sm_count: u32,
    pub major: u32,
    pub minor: u32,
    pub max_threads_per_sm: u32,
}

impl DeviceProps {
    pub fn read(dev: sys::CUdevice) -> Result<DeviceProps> {
        let attr = |a: CUdevice_attribute| -> Result<u32> {
            // SAFETY: dev came from cuDeviceGet.
            unsafe { result::device::get_attribute(dev, a) }.map(|v| v as u32).during("cuDeviceGetAttribute")
        };
        Ok(DeviceProps {
            name: result::device::get_name(dev).during("cuDeviceGetName")?,
            sm_count: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            major: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            minor: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            max_threads_per_sm: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
        })
    }

    /// The NVRTC target for this exact device, e.g. "sm_90".
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }
}
