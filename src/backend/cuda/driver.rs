//! Talking to the CUDA driver: probing for it without panicking, turning its errors
//! into ours, reading device properties, and making a context current.

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUdevice_attribute};

use crate::error::{Error, Result};

/// Maps a driver error to ours; `what` says which operation failed.
pub fn driver_error(what: &str, e: DriverError) -> Error {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let msg = format!("{what}: {name} ({text})");
    match e.0 {
        sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Error::OutOfMemory(msg),
        _ => Error::Driver(msg),
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
