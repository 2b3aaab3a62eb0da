//! Version, status names, element sizes and the thread's last error.

use std::ffi::{c_char, CStr};

use super::types::*;
use super::write_text;
use crate::dtype::DType;
use crate::error::with_last_error;

/// The version of the library loaded, as (major << 16) | (minor << 8) | patch; compare
/// with GPUPRIMS_VERSION, the version of the header compiled against. Libraries of
/// one major version keep the ABI (the shared library is libgpuprims.so.<major>).
#[no_mangle]
pub extern "C" fn gpuprims_version() -> u32 {
    let part = |s: &str| s.parse::<u32>().unwrap_or(0);
    (part(env!("CARGO_PKG_VERSION_MAJOR")) << 16)
        | (part(env!("CARGO_PKG_VERSION_MINOR")) << 8)
        | part(env!("CARGO_PKG_VERSION_PATCH"))
}

/// The name of a status ("GPUPRIMS_STATUS_OK", …; "GPUPRIMS_STATUS_UNKNOWN" for a value
/// that is none of them). A static string, never NULL.
#[no_mangle]
pub extern "C" fn gpuprims_status_name(s: gpuprims_status) -> *const c_char {
    let name: &'static CStr = match s {
        GPUPRIMS_STATUS_OK => c"GPUPRIMS_STATUS_OK",
        GPUPRIMS_STATUS_NULL_ARGUMENT => c"GPUPRIMS_STATUS_NULL_ARGUMENT",
        GPUPRIMS_STATUS_INVALID_ARGUMENT => c"GPUPRIMS_STATUS_INVALID_ARGUMENT",
        GPUPRIMS_STATUS_TYPE_MISMATCH => c"GPUPRIMS_STATUS_TYPE_MISMATCH",
        GPUPRIMS_STATUS_SIZE_MISMATCH => c"GPUPRIMS_STATUS_SIZE_MISMATCH",
        GPUPRIMS_STATUS_CONTEXT_MISMATCH => c"GPUPRIMS_STATUS_CONTEXT_MISMATCH",
        GPUPRIMS_STATUS_OUT_OF_MEMORY => c"GPUPRIMS_STATUS_OUT_OF_MEMORY",
        GPUPRIMS_STATUS_NO_DEVICE => c"GPUPRIMS_STATUS_NO_DEVICE",
        GPUPRIMS_STATUS_DRIVER_ERROR => c"GPUPRIMS_STATUS_DRIVER_ERROR",
        GPUPRIMS_STATUS_COMPILE_ERROR => c"GPUPRIMS_STATUS_COMPILE_ERROR",
        GPUPRIMS_STATUS_UNSUPPORTED => c"GPUPRIMS_STATUS_UNSUPPORTED",
        GPUPRIMS_STATUS_PARSE_ERROR => c"GPUPRIMS_STATUS_PARSE_ERROR",
        GPUPRIMS_STATUS_INTERNAL_ERROR => c"GPUPRIMS_STATUS_INTERNAL_ERROR",
        _ => c"GPUPRIMS_STATUS_UNKNOWN",
    };
    name.as_ptr()
}

/// Copies the message of this thread's most recent failed call into `buf`: at most
/// `len` bytes including the terminating NUL, truncated when needed. Returns the full
/// length without the NUL (0 when no call on this thread has failed). `buf` may be
/// NULL when `len` is 0, to ask for the length.
#[no_mangle]
pub extern "C" fn gpuprims_last_error(buf: *mut c_char, len: usize) -> usize {
    std::panic::catch_unwind(|| with_last_error(|msg| write_text(msg, buf, len))).unwrap_or(0)
}

/// The bytes of one element of `dtype` (1, 2, 4 or 8); 0 for a value that is no dtype.
/// Buffer lengths, offsets and counts are in elements: a host array of `len` elements
/// of `dtype` holds len * gpuprims_dtype_size(dtype) bytes.
#[no_mangle]
pub extern "C" fn gpuprims_dtype_size(dtype: gpuprims_dtype) -> usize {
    DType::from_raw(dtype).map_or(0, |d| d.size())
}
