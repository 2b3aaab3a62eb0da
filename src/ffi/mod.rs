//! The C ABI. Each family has its own file; this one holds what they share: the
//! opaque handles and their casts, the panic boundary, and text output.
//! No algorithm lives here: arguments are checked, then the backend is called.

// cbindgen declares functions in module order: contexts come first in the header.
pub mod context;
pub mod buffer;
pub mod info;
pub mod life;
pub mod reduce;
pub mod scan;
pub mod select;
pub mod sort;
pub mod types;

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::backend::{Buffer, ContextShared};
use crate::error::{set_last_error, Error, Result};
use types::{gpuprims_buffer, gpuprims_context, gpuprims_status, GPUPRIMS_STATUS_INTERNAL_ERROR, GPUPRIMS_STATUS_OK};

/// The tag at the start of every handle, so a handle of the wrong kind (or a
/// destroyed one, on a best-effort basis) is an error rather than a crash.
#[repr(u64)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Tag {
    Context = 0x6770_7072_6374_7831,
    Buffer = 0x6770_7072_6275_6631,
    LifeGrid = 0x6770_7072_6c69_6631,
    Dead = 0,
}

#[repr(C)]
pub(crate) struct Handle<T> {
    tag: Tag,
    value: T,
}


/// Conversions between an opaque C handle and the Rust value behind it.
pub(crate) trait Castable {
    type Inner;
    const TAG: Tag;
    const NAME: &'static str;
}

impl Castable for gpuprims_context {
    type Inner = Arc<ContextShared>;
    const TAG: Tag = Tag::Context;
    const NAME: &'static str = "gpuprims_context";
}

impl Castable for gpuprims_buffer {
    type Inner = Buffer;
    const TAG: Tag = Tag::Buffer;
    const NAME: &'static str = "gpuprims_buffer";
}

/// Moves `value` to the heap and hands out its handle.
pub(crate) fn into_handle<C: Castable>(value: C::Inner) -> *mut C {
    Box::into_raw(Box::new(Handle { tag: C::TAG, value })) as *mut C
}

/// Borrows the value behind a handle; `arg` names the argument in messages.
pub(crate) fn try_ref<'a, C: Castable>(ptr: *const C, arg: &str) -> Result<&'a C::Inner> {
    if ptr.is_null() {
        return Err(Error::NullArgument(format!("{arg} is NULL")));
    }
    let handle = ptr as *const Handle<C::Inner>;
    // SAFETY: a non-NULL pointer is taken to point at a gpuprims handle; its tag says
    // whether it is of the expected kind and still alive. The raw read of the tag
    // avoids materialising a reference to a value of the wrong type.
    let tag = unsafe { std::ptr::read(std::ptr::addr_of!((*handle).tag) as *const u64) };
    if tag != C::TAG as u64 {
        return Err(Error::InvalidArgument(format!(
            "{arg} is not a live {} (wrong handle kind or already destroyed)",
            C::NAME
        )));
    }
    // SAFETY: the tag matched, so this is a live Handle<C::Inner>.
    Ok(unsafe { &(*handle).value })
}

/// Takes back and drops the value behind a handle. NULL is a no-op; a handle of the
/// wrong kind is left alone.
pub(crate) fn destroy_handle<C: Castable>(ptr: *mut C) {
    if try_ref::<C>(ptr, "handle").is_err() {
        return;
    }
    let handle = ptr as *mut Handle<C::Inner>;
    // SAFETY: live handle of this kind, created by into_handle.
    unsafe {
        (*handle).tag = Tag::Dead;
        drop(Box::from_raw(handle));
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

/// Checks that buffer `a` holds the same element type as `b` (TYPE_MISMATCH).
/// Whether two buffers are one, or share memory (two handles wrapping the same bytes).
pub(crate) fn aliased(a: &Buffer, b: &Buffer) -> bool {
    std::ptr::eq(a, b) || a.memory.overlaps(&b.memory)
}

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
