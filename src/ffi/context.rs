//! gpuprims_context_*: open a backend, ask what it is, choose its stream, wait for it.

use std::ffi::{c_char, c_void};

use super::types::*;
use super::{destroy_handle, guard, into_handle, require, try_ref, write_out, write_text};
use crate::backend::BackendKind;
use crate::error::invalid;

/// Opens a context on `backend` and writes its handle to `*out`.
///
/// `device` is the CUDA device ordinal (0 is the first device the driver lists, after
/// CUDA_VISIBLE_DEVICES) for CUDA, and for AUTO the device it tries; the host backend
/// has one device and ignores it. A negative `device` is INVALID_ARGUMENT on every
/// backend.
///
/// AUTO takes the CUDA device when a driver and device are usable, else the host
/// backend, and gpuprims_context_device_name() then says why CUDA was not used. The
/// environment variable GPUPRIMS_BACKEND=cuda|host overrides AUTO; any other non-empty
/// value makes AUTO fail with GPUPRIMS_STATUS_INVALID_ARGUMENT naming it. CUDA (asked
/// for, or through GPUPRIMS_BACKEND) without a usable device: GPUPRIMS_STATUS_NO_DEVICE,
/// with the reason in the last error.
#[no_mangle]
pub extern "C" fn gpuprims_context_create(
    backend: gpuprims_backend,
    device: i32,
    out: *mut *mut gpuprims_context,
) -> gpuprims_status {
    guard("gpuprims_context_create", || {
        require(out, "out")?;
        let kind = match backend {
            GPUPRIMS_BACKEND_AUTO => BackendKind::Auto,
            GPUPRIMS_BACKEND_CUDA => BackendKind::Cuda,
            GPUPRIMS_BACKEND_HOST => BackendKind::Host,
            other => return Err(invalid(format!("backend: unknown backend value {other}"))),
        };
        if device < 0 {
            return Err(invalid(format!("device: ordinal {device} is negative")));
        }
        let shared = crate::backend::open(kind, device)?;
        write_out(out, into_handle::<gpuprims_context>(shared)?);
        Ok(())
    })
}

/// Releases the caller's handle. Buffers of the context stay usable until they are
/// destroyed; the device resources go with the last of them. NULL is a no-op.
#[no_mangle]
pub extern "C" fn gpuprims_context_destroy(ctx: *mut gpuprims_context) {
    guard("gpuprims_context_destroy", || {
        destroy_handle(ctx);
        Ok(())
    });
}

/// Writes the backend the context runs on (CUDA or HOST, never AUTO).
#[no_mangle]
pub extern "C" fn gpuprims_context_backend(
    ctx: *const gpuprims_context,
    out: *mut gpuprims_backend,
) -> gpuprims_status {
    guard("gpuprims_context_backend", || {
        let c = try_ref(ctx, "ctx")?;
        require(out, "out")?;
        write_out(out, c.backend.kind() as gpuprims_backend);
        Ok(())
    })
}

/// Copies the device's name into `buf`: the GPU's name on CUDA ("NVIDIA H100 80GB
/// HBM3"); on the host "host (16 threads)", followed by the reason when AUTO or
/// GPUPRIMS_BACKEND chose it ("host (16 threads; CUDA unavailable: ...)"). Into `buf`: at most `len` bytes with the NUL, truncating; `*needed` (when not NULL)
/// receives the full length without the NUL. `buf` may be NULL when `len` is 0.
#[no_mangle]
pub extern "C" fn gpuprims_context_device_name(
    ctx: *const gpuprims_context,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> gpuprims_status {
    guard("gpuprims_context_device_name", || {
        let c = try_ref(ctx, "ctx")?;
        if buf.is_null() && len > 0 {
            return Err(crate::error::Error::NullArgument(format!("buf is NULL but len is {len}")));
        }
        let n = write_text(&c.backend.device_name(), buf, len);
        if !needed.is_null() {
            write_out(needed, n);
        }
        Ok(())
    })
}

/// Issues later work of this context on the caller's CUstream / cudaStream_t (which
/// must belong to the context's device and outlive its use); NULL restores the
/// context's own stream. Work already issued is ordered before work issued after the
/// switch. Host backend: GPUPRIMS_STATUS_UNSUPPORTED for a non-NULL stream.
#[no_mangle]
pub extern "C" fn gpuprims_context_set_stream(
    ctx: *mut gpuprims_context,
    cuda_stream: *mut c_void,
) -> gpuprims_status {
    guard("gpuprims_context_set_stream", || {
        try_ref(ctx, "ctx")?.backend.set_stream(cuda_stream)
    })
}

/// Waits until all work issued by this context has finished. An asynchronous fault of
/// earlier work surfaces here as GPUPRIMS_STATUS_DRIVER_ERROR.
#[no_mangle]
pub extern "C" fn gpuprims_context_synchronize(ctx: *mut gpuprims_context) -> gpuprims_status {
    guard("gpuprims_context_synchronize", || try_ref(ctx, "ctx")?.backend.synchronize())
}

/// Compiles every kernel module the library has for the context's device, several at
/// once, and loads them, so that no later call pays for a compile. Compiled kernels are
/// kept in memory for the process and on disk (GPUPRIMS_CACHE_DIR), so a later process
/// finds them too. Without it each module is compiled on the first call that needs it.
/// Call it once after creating a context, where a first call must not be slow (before
/// timing, or before serving requests); it waits until every module is compiled.
/// Host backend: nothing to compile, GPUPRIMS_STATUS_OK. A module that does not compile:
/// GPUPRIMS_STATUS_COMPILE_ERROR (NVRTC missing, say), the others are compiled all the same.
#[no_mangle]
pub extern "C" fn gpuprims_context_precompile(ctx: *mut gpuprims_context) -> gpuprims_status {
    guard("gpuprims_context_precompile", || try_ref(ctx, "ctx")?.backend.precompile())
}
