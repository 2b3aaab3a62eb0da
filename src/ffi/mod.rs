//! The C ABI. Each family has its own file; this one holds what they share: the
//! opaque handles (IDs in a table per kind, handles.rs), the panic boundary, and text
//! output.
//! No algorithm lives here: arguments are checked, then the backend is called.

// The entry points are safe `extern "C"` functions that take raw pointers: their
// callers are C, for whom `unsafe` means nothing, and each documents what its
// pointers must hold (null is checked and reported; the rest is the C contract).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

// cbindgen declares functions in module order: contexts come first in the header.
pub mod context;
pub mod buffer;
pub mod info;
pub mod life;
pub mod reduce;
pub mod scan;
pub mod select;
pub mod sort;
pub mod comm;
pub mod group;
mod comm_args;
pub mod fault;
pub mod types;
mod handles;

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::backend::{Buffer, ContextShared};
use crate::error::{set_last_error, Error, Result};
pub(crate) use handles::{destroy_handle, into_handle, try_ref, Castable, Kind, Registry};
use types::{gpuprims_buffer, gpuprims_context, gpuprims_status, GPUPRIMS_STATUS_INTERNAL_ERROR, GPUPRIMS_STATUS_OK};

// Handles are opaque IDs looked up in a table per kind, never dereferenced: see handles.rs.
impl Castable for gpuprims_context {
    type Inner = Arc<ContextShared>;
    const KIND: Kind = Kind::Context;
    fn registry() -> &'static Registry<Arc<ContextShared>> {
        static CONTEXTS: Registry<Arc<ContextShared>> = Registry::new();
        &CONTEXTS
    }
}

impl Castable for gpuprims_buffer {
    type Inner = Buffer;
    const KIND: Kind = Kind::Buffer;
    fn registry() -> &'static Registry<Buffer> {
        static BUFFERS: Registry<Buffer> = Registry::new();
        &BUFFERS
    }
}

/// Writes `value` through an out-pointer, which must not be NULL.
pub(crate) fn write_out<T>(out: *mut T, value: T) {
    // SAFETY: every caller checked `out` for NULL before any work was done.
    unsafe { out.write(value) }
}

/// Fails with NULL_ARGUMENT when `ptr` is NULL.
pub(crate) fn require<T>(ptr: *const T, arg: &str) -> Result<()> {
    if ptr.is_null() {
        Err(Error::NullArgument(format!("{arg} is NULL")))
    } else {
        Ok(())
    }
}

/// The panic boundary every exported function runs in: maps the result to a status,
/// records the message (prefixed with the function name) as this thread's last error,
/// and turns a panic into INTERNAL_ERROR.
pub(crate) fn guard(function: &str, body: impl FnOnce() -> Result<()>) -> gpuprims_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => GPUPRIMS_STATUS_OK,
        Ok(Err(e)) => {
            set_last_error(format!("{function}: {e}"));
            e.status()
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(format!("{function}: internal error (caught panic: {what})"));
            GPUPRIMS_STATUS_INTERNAL_ERROR
        }
    }
}

/// Copies `text` into `buf` (at most `len` bytes including the NUL, truncating) and
/// returns the full length without the NUL. `buf` may be NULL when `len` is 0.
pub(crate) fn write_text(text: &str, buf: *mut c_char, len: usize) -> usize {
    if !buf.is_null() && len > 0 {
        let n = text.len().min(len - 1);
        // SAFETY: the caller provides `len` writable bytes at `buf`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, buf, n);
            *buf.add(n) = 0;
        }
    }
    text.len()
}

/// Whether two buffers are one, or share memory (two handles wrapping the same bytes).
pub(crate) fn aliased(a: &Buffer, b: &Buffer) -> bool {
    std::ptr::eq(a, b) || a.memory.overlaps(&b.memory)
}

/// Checks that buffer `a` holds the same element type as `b` (TYPE_MISMATCH).
pub(crate) fn same_dtype(a: &Buffer, a_name: &str, b: &Buffer, b_name: &str) -> Result<()> {
    if a.dtype == b.dtype {
        Ok(())
    } else {
        Err(Error::TypeMismatch(format!("{a_name} holds {}, {b_name} holds {}", a.dtype.name(), b.dtype.name())))
    }
}

/// Checks that a buffer belongs to the context of a call.
pub(crate) fn same_context(ctx: &Arc<ContextShared>, buf: &Buffer, arg: &str) -> Result<()> {
    if ctx.id == buf.context.id {
        Ok(())
    } else {
        Err(Error::ContextMismatch(format!("{arg} belongs to another context")))
    }
}
