//! gpuprims_buffer_*: typed arrays in a context's memory, and moving data in and out.
//! Offsets and counts are in elements; a range past the end is INVALID_ARGUMENT.

use std::ffi::c_void;
use std::sync::Arc;

use super::handles::Held;
use super::types::*;
use super::{destroy_handle, guard, into_handle, require, same_dtype, try_ref, write_out};
use crate::backend::{Buffer, ContextShared, Memory};
use crate::dtype::DType;
use crate::error::{invalid, Error, Result};

fn byte_size(dtype: DType, len: usize) -> Result<usize> {
    len.checked_mul(dtype.size())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| invalid(format!("len: {len} elements of {} is too large", dtype.name())))
}

/// The arguments every way of making a buffer from existing memory shares: the context,
/// the dtype, the memory (which may be NULL only when `len` is 0: `mem_name` names it
/// in the message), the out-parameter; and the bytes `len` elements take.
fn memory_args(
    ctx: *mut gpuprims_context,
    dtype: gpuprims_dtype,
    mem: *const c_void,
    mem_name: &str,
    len: usize,
    out: *mut *mut gpuprims_buffer,
) -> Result<(Held<'static, Arc<ContextShared>>, DType, usize)> {
    let c = try_ref(ctx, "ctx")?;
    let dtype = DType::from_raw(dtype).map_err(|e| invalid(format!("dtype: {e}")))?;
    if len > 0 {
        require(mem, mem_name)?;
    }
    require(out, "out")?;
    let bytes = byte_size(dtype, len)?;
    Ok((c, dtype, bytes))
}

fn new_buffer(ctx: &Arc<ContextShared>, dtype: DType, len: usize, memory: Memory) -> Result<*mut gpuprims_buffer> {
    into_handle::<gpuprims_buffer>(Buffer { context: ctx.clone(), dtype, len, memory })
}

/// Checks that [offset, offset + count) lies inside the buffer; returns byte offsets.
fn byte_range(buf: &Buffer, offset: usize, count: usize) -> Result<(usize, usize)> {
    match offset.checked_add(count) {
        Some(end) if end <= buf.len => Ok((offset * buf.dtype.size(), count * buf.dtype.size())),
        _ => Err(invalid(format!(
            "offset {offset} + count {count} is past the end of the buffer ({} elements)",
            buf.len
        ))),
    }
}

/// Allocates a buffer of `len` elements of type `dtype` (contents unspecified).
#[no_mangle]
pub extern "C" fn gpuprims_buffer_create(
    ctx: *mut gpuprims_context,
    dtype: gpuprims_dtype,
    len: usize,
    out: *mut *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_buffer_create", || {
        let c = try_ref(ctx, "ctx")?;
        let dtype = DType::from_raw(dtype).map_err(|e| invalid(format!("dtype: {e}")))?;
        require(out, "out")?;
        let memory = c.backend.allocate(byte_size(dtype, len)?)?;
        write_out(out, new_buffer(&c, dtype, len, memory)?);
        Ok(())
    })
}

/// Allocates a buffer of `len` elements of type `dtype` and copies them from host memory
/// at `src` (which may be NULL only when `len` is 0).
#[no_mangle]
pub extern "C" fn gpuprims_buffer_from_host(
    ctx: *mut gpuprims_context,
    dtype: gpuprims_dtype,
    src: *const c_void,
    len: usize,
    out: *mut *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_buffer_from_host", || {
        let (c, dtype, bytes) = memory_args(ctx, dtype, src, "src", len, out)?;
        let memory = c.backend.allocate(bytes)?;
        if bytes > 0 {
            // SAFETY: the caller provides `len` elements at `src`.
            let data = unsafe { std::slice::from_raw_parts(src as *const u8, bytes) };
            c.backend.write(&memory, 0, data)?;
        }
        write_out(out, new_buffer(&c, dtype, len, memory)?);
        Ok(())
    })
}

/// Wraps `len` elements of type `dtype` of device memory the caller owns (CUDA backend;
/// the memory must be on the context's device). gpuprims never frees it; it must
/// outlive the buffer. Host backend: GPUPRIMS_STATUS_UNSUPPORTED.
#[no_mangle]
pub extern "C" fn gpuprims_buffer_wrap_device(
    ctx: *mut gpuprims_context,
    dtype: gpuprims_dtype,
    device_ptr: *mut c_void,
    len: usize,
    out: *mut *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_buffer_wrap_device", || {
        let (c, dtype, bytes) = memory_args(ctx, dtype, device_ptr, "device_ptr", len, out)?;
        let memory = c.backend.wrap_device(device_ptr, bytes)?;
        write_out(out, new_buffer(&c, dtype, len, memory)?);
        Ok(())
    })
}

/// Wraps `len` elements of type `dtype` of host memory the caller owns (host backend),
/// used in place without a copy: a NumPy array, say. gpuprims never frees it; it must
/// outlive the buffer, and `host_ptr` must be aligned to the element size (else
/// INVALID_ARGUMENT; it may be NULL only when `len` is 0). Primitives write through it
/// (an in-place sort sorts the caller's memory). CUDA backend:
/// GPUPRIMS_STATUS_UNSUPPORTED (copy in with gpuprims_buffer_from_host).
#[no_mangle]
pub extern "C" fn gpuprims_buffer_wrap_host(
    ctx: *mut gpuprims_context,
    dtype: gpuprims_dtype,
    host_ptr: *mut c_void,
    len: usize,
    out: *mut *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_buffer_wrap_host", || {
        let (c, dtype, bytes) = memory_args(ctx, dtype, host_ptr, "host_ptr", len, out)?;
        if !(host_ptr as usize).is_multiple_of(dtype.size()) {
            return Err(invalid(format!(
                "host_ptr {host_ptr:p} is not aligned to the {}-byte elements of {}",
                dtype.size(),
                dtype.name()
            )));
        }
        if (host_ptr as usize).checked_add(bytes).is_none() {
            return Err(invalid(format!("host_ptr {host_ptr:p} + {bytes} bytes wraps around the address space")));
        }
        let memory = c.backend.wrap_host(host_ptr, bytes)?;
        write_out(out, new_buffer(&c, dtype, len, memory)?);
        Ok(())
    })
}

/// Destroys a buffer (its memory is freed unless it was wrapped). NULL is a no-op.
#[no_mangle]
pub extern "C" fn gpuprims_buffer_destroy(buf: *mut gpuprims_buffer) {
    guard("gpuprims_buffer_destroy", || {
        destroy_handle(buf);
        Ok(())
    });
}

/// Writes the number of elements.
#[no_mangle]
pub extern "C" fn gpuprims_buffer_len(buf: *const gpuprims_buffer, out: *mut usize) -> gpuprims_status {
    guard("gpuprims_buffer_len", || {
        let b = try_ref(buf, "buf")?;
        require(out, "out")?;
        write_out(out, b.len);
        Ok(())
    })
}

/// Writes the element type.
#[no_mangle]
pub extern "C" fn gpuprims_buffer_dtype(
    buf: *const gpuprims_buffer,
    out: *mut gpuprims_dtype,
) -> gpuprims_status {
    guard("gpuprims_buffer_dtype", || {
        let b = try_ref(buf, "buf")?;
        require(out, "out")?;
        write_out(out, b.dtype as gpuprims_dtype);
        Ok(())
    })
}

/// Writes the device address of the first element (a CUdeviceptr as a pointer).
/// Host backend: GPUPRIMS_STATUS_UNSUPPORTED.
#[no_mangle]
pub extern "C" fn gpuprims_buffer_device_ptr(
    buf: *const gpuprims_buffer,
    out: *mut *mut c_void,
) -> gpuprims_status {
    guard("gpuprims_buffer_device_ptr", || {
        let b = try_ref(buf, "buf")?;
        require(out, "out")?;
        let p = b.context.backend.device_ptr(&b.memory)?;
        write_out(out, p);
        Ok(())
    })
}

/// Copies `count` elements from host memory `src` into the buffer at element `offset`.
#[no_mangle]
pub extern "C" fn gpuprims_buffer_write(
    buf: *mut gpuprims_buffer,
    offset: usize,
    src: *const c_void,
    count: usize,
) -> gpuprims_status {
    guard("gpuprims_buffer_write", || {
        let b = try_ref(buf, "buf")?;
        if count > 0 {
            require(src, "src")?;
        }
        let (at, bytes) = byte_range(&b, offset, count)?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller provides `count` elements at `src`.
        let data = unsafe { std::slice::from_raw_parts(src as *const u8, bytes) };
        b.context.backend.write(&b.memory, at, data)
    })
}

/// Copies `count` elements starting at element `offset` into host memory `dst`,
/// after the work issued before it has finished.
#[no_mangle]
pub extern "C" fn gpuprims_buffer_read(
    buf: *const gpuprims_buffer,
    offset: usize,
    dst: *mut c_void,
    count: usize,
) -> gpuprims_status {
    guard("gpuprims_buffer_read", || {
        let b = try_ref(buf, "buf")?;
        if count > 0 {
            require(dst, "dst")?;
        }
        let (at, bytes) = byte_range(&b, offset, count)?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller provides room for `count` elements at `dst`.
        let data = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, bytes) };
        b.context.backend.read(&b.memory, at, data)
    })
}

/// Copies all of `src` into `dst`: same context, same dtype (else TYPE_MISMATCH) and
/// same length (else SIZE_MISMATCH).
#[no_mangle]
pub extern "C" fn gpuprims_buffer_copy(
    dst: *mut gpuprims_buffer,
    src: *const gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_buffer_copy", || {
        let d = try_ref(dst, "dst")?;
        let s = try_ref(src, "src")?;
        if d.context.id != s.context.id {
            return Err(Error::ContextMismatch("dst and src belong to different contexts".into()));
        }
        same_dtype(&d, "dst", &s, "src")?;
        if d.len != s.len {
            return Err(Error::SizeMismatch(format!("dst has {} elements, src has {}", d.len, s.len)));
        }
        if d.len == 0 {
            return Ok(());
        }
        d.context.backend.copy(&d.memory, &s.memory, d.bytes())
    })
}
