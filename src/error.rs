//! The one error type of the library, its mapping to `gpuprims_status`, and the
//! thread-local "last error" message that `gpuprims_last_error` reports.

use std::cell::RefCell;

/// Every failure a gpuprims call can report. The message names the argument and the
/// problem; the FFI layer prefixes it with the function name.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    #[error("{0}")]
    NullArgument(String),
    #[error("{0}")]
    InvalidArgument(String),
    #[error("{0}")]
    TypeMismatch(String),
    #[error("{0}")]
    SizeMismatch(String),
    #[error("{0}")]
    ContextMismatch(String),
    #[error("{0}")]
    OutOfMemory(String),
    #[error("{0}")]
    NoDevice(String),
    #[error("{0}")]
    Driver(String),
    #[error("{0}")]
    Compile(String),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Parse(String),
    #[error("{0}")]
    Internal(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The ABI status code of this error.
    pub fn status(&self) -> u32 {
        use crate::ffi::types::*;
        match self {
            Error::NullArgument(_) => GPUPRIMS_STATUS_NULL_ARGUMENT,
            Error::InvalidArgument(_) => GPUPRIMS_STATUS_INVALID_ARGUMENT,
            Error::TypeMismatch(_) => GPUPRIMS_STATUS_TYPE_MISMATCH,
            Error::SizeMismatch(_) => GPUPRIMS_STATUS_SIZE_MISMATCH,
            Error::ContextMismatch(_) => GPUPRIMS_STATUS_CONTEXT_MISMATCH,
            Error::OutOfMemory(_) => GPUPRIMS_STATUS_OUT_OF_MEMORY,
            Error::NoDevice(_) => GPUPRIMS_STATUS_NO_DEVICE,
            Error::Driver(_) => GPUPRIMS_STATUS_DRIVER_ERROR,
            Error::Compile(_) => GPUPRIMS_STATUS_COMPILE_ERROR,
            Error::Unsupported(_) => GPUPRIMS_STATUS_UNSUPPORTED,
            Error::Parse(_) => GPUPRIMS_STATUS_PARSE_ERROR,
            Error::Internal(_) => GPUPRIMS_STATUS_INTERNAL_ERROR,
        }
    }
}

impl Error {
    /// The error of status `code` (another rank's, say) with `msg`.
    pub fn from_status(code: u32, msg: String) -> Error {
        use crate::ffi::types::*;
        match code {
            GPUPRIMS_STATUS_NULL_ARGUMENT => Error::NullArgument(msg),
            GPUPRIMS_STATUS_INVALID_ARGUMENT => Error::InvalidArgument(msg),
            GPUPRIMS_STATUS_TYPE_MISMATCH => Error::TypeMismatch(msg),
            GPUPRIMS_STATUS_SIZE_MISMATCH => Error::SizeMismatch(msg),
            GPUPRIMS_STATUS_CONTEXT_MISMATCH => Error::ContextMismatch(msg),
            GPUPRIMS_STATUS_OUT_OF_MEMORY => Error::OutOfMemory(msg),
            GPUPRIMS_STATUS_NO_DEVICE => Error::NoDevice(msg),
            GPUPRIMS_STATUS_DRIVER_ERROR => Error::Driver(msg),
            GPUPRIMS_STATUS_COMPILE_ERROR => Error::Compile(msg),
            GPUPRIMS_STATUS_UNSUPPORTED => Error::Unsupported(msg),
            GPUPRIMS_STATUS_PARSE_ERROR => Error::Parse(msg),
            _ => Error::Internal(msg),
        }
    }
}

/// Shorthand constructors, so call sites read `invalid(format!(..))`.
pub fn invalid(msg: impl Into<String>) -> Error {
    Error::InvalidArgument(msg.into())
}
pub fn unsupported(msg: impl Into<String>) -> Error {
    Error::Unsupported(msg.into())
}
pub fn internal(msg: impl Into<String>) -> Error {
    Error::Internal(msg.into())
}

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Records `msg` as this thread's last error.
pub fn set_last_error(msg: String) {
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

/// Runs `f` with this thread's last error message ("" when none).
pub fn with_last_error<R>(f: impl FnOnce(&str) -> R) -> R {
    LAST_ERROR.with(|e| f(&e.borrow()))
}
