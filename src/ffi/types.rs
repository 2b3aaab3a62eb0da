//! The ABI's enumerations: plain `uint32_t` typedefs with `#define`d values, so a C
//! caller can pass any integer and an unknown one is INVALID_ARGUMENT.
#![allow(non_camel_case_types)]

/// A context: one backend (a CUDA device with its own stream, or the host), the
/// temporary memory it grows on demand, and its compiled kernels. Buffers keep it
/// alive after gpuprims_context_destroy until they are destroyed themselves.
pub struct gpuprims_context {
    _private: [u8; 0],
}

/// A typed array of `len` elements in a context's memory (device memory on CUDA).
pub struct gpuprims_buffer {
    _private: [u8; 0],
}


/// Result of every gpuprims call. GPUPRIMS_STATUS_OK is 0; on any other value the
/// call changed nothing it could check beforehand, and gpuprims_last_error() says why.
/// gpuprims_status_name() gives a status's name.
pub type gpuprims_status = u32;
/// Success: the out-parameters are written (on CUDA, work may still be running in
/// stream order; see the functions that wait).
pub const GPUPRIMS_STATUS_OK: gpuprims_status = 0;
/// A required pointer argument was NULL.
pub const GPUPRIMS_STATUS_NULL_ARGUMENT: gpuprims_status = 1;
/// An unknown enum value, a range past the end, a foreign or destroyed handle, …
pub const GPUPRIMS_STATUS_INVALID_ARGUMENT: gpuprims_status = 2;
/// Buffers whose element types disagree.
pub const GPUPRIMS_STATUS_TYPE_MISMATCH: gpuprims_status = 3;
/// Buffers whose lengths disagree.
pub const GPUPRIMS_STATUS_SIZE_MISMATCH: gpuprims_status = 4;
/// A buffer of another context.
pub const GPUPRIMS_STATUS_CONTEXT_MISMATCH: gpuprims_status = 5;
/// Memory could not be allocated: device memory on CUDA (buffers or the temporary
/// memory a primitive needs), host memory on the host backend. Nothing was changed;
/// freeing buffers and retrying may succeed.
pub const GPUPRIMS_STATUS_OUT_OF_MEMORY: gpuprims_status = 6;
/// No usable CUDA driver or device.
pub const GPUPRIMS_STATUS_NO_DEVICE: gpuprims_status = 7;
/// The CUDA driver reported an error, possibly from earlier asynchronous work.
pub const GPUPRIMS_STATUS_DRIVER_ERROR: gpuprims_status = 8;
/// NVRTC could not compile a kernel (or is missing).
pub const GPUPRIMS_STATUS_COMPILE_ERROR: gpuprims_status = 9;
/// The operation does not exist on this backend (a device pointer or a CUDA stream on
/// the host backend, say).
pub const GPUPRIMS_STATUS_UNSUPPORTED: gpuprims_status = 10;
/// Text input (a Life rule, an RLE pattern) is malformed; what it would have changed
/// is unchanged.
pub const GPUPRIMS_STATUS_PARSE_ERROR: gpuprims_status = 11;
/// A bug in gpuprims (a caught panic, a broken invariant).
pub const GPUPRIMS_STATUS_INTERNAL_ERROR: gpuprims_status = 12;

/// Where a context runs its work.
pub type gpuprims_backend = u32;
/// CUDA when a driver and device are usable, else the host (the device name then says
/// why CUDA was not used); GPUPRIMS_BACKEND=cuda|host in the environment overrides it.
pub const GPUPRIMS_BACKEND_AUTO: gpuprims_backend = 0;
pub const GPUPRIMS_BACKEND_CUDA: gpuprims_backend = 1;
/// The CPU (rayon); also the reference implementation.
pub const GPUPRIMS_BACKEND_HOST: gpuprims_backend = 2;

/// Element type of a buffer: signed and unsigned integers of 8 to 64 bits, IEEE-754
/// floats of 32 and 64 bits, and the 16-bit floats F16 (IEEE binary16, C's _Float16,
/// CUDA's __half) and BF16 (bfloat16: the top half of an f32, CUDA's __nv_bfloat16),
/// in the machine's byte order. gpuprims_dtype_size() gives the bytes of one element.
/// Zero is never valid. Reduce and scan of F16/BF16 compute in f32 and round each
/// result once (to nearest, ties to even; a NaN result is a NaN, payload not kept).
pub type gpuprims_dtype = u32;
pub const GPUPRIMS_DTYPE_I8: gpuprims_dtype = 1;
pub const GPUPRIMS_DTYPE_U8: gpuprims_dtype = 2;
pub const GPUPRIMS_DTYPE_I16: gpuprims_dtype = 3;
pub const GPUPRIMS_DTYPE_U16: gpuprims_dtype = 4;
pub const GPUPRIMS_DTYPE_I32: gpuprims_dtype = 5;
pub const GPUPRIMS_DTYPE_U32: gpuprims_dtype = 6;
pub const GPUPRIMS_DTYPE_I64: gpuprims_dtype = 7;
pub const GPUPRIMS_DTYPE_U64: gpuprims_dtype = 8;
pub const GPUPRIMS_DTYPE_F32: gpuprims_dtype = 9;
pub const GPUPRIMS_DTYPE_F64: gpuprims_dtype = 10;
pub const GPUPRIMS_DTYPE_F16: gpuprims_dtype = 11;
pub const GPUPRIMS_DTYPE_BF16: gpuprims_dtype = 12;

/// Reduction / scan operator. Integer SUM wraps modulo 2^bits; MIN and MAX follow
/// -inf < … < -0.0 < +0.0 < … < +inf and return NaN once a NaN is among the inputs.
pub type gpuprims_op = u32;
pub const GPUPRIMS_OP_SUM: gpuprims_op = 0;
pub const GPUPRIMS_OP_MIN: gpuprims_op = 1;
pub const GPUPRIMS_OP_MAX: gpuprims_op = 2;

/// Inclusive: out[i] = in[0] op … op in[i]. Exclusive: out[0] is the identity (0 for
/// SUM, the largest value / +inf for MIN, the lowest / -inf for MAX), out[i] = in[0]
/// op … op in[i-1].
pub type gpuprims_scan_mode = u32;
pub const GPUPRIMS_SCAN_INCLUSIVE: gpuprims_scan_mode = 0;
pub const GPUPRIMS_SCAN_EXCLUSIVE: gpuprims_scan_mode = 1;

/// Sort order. Floats sort in the total order -inf < … < -0.0 < +0.0 < … < +inf < NaN
/// (every NaN counts as one value above +inf: last ascending, first descending).
pub type gpuprims_order = u32;
pub const GPUPRIMS_ORDER_ASCENDING: gpuprims_order = 0;
pub const GPUPRIMS_ORDER_DESCENDING: gpuprims_order = 1;
