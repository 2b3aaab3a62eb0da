//! gpuprims: GPU data-parallel primitives behind a C ABI.
//!
//! Module map: `ffi` is the C ABI (argument checks, handles, panic boundary);
//! `backend` holds the Backend trait with its host (rayon) and CUDA implementations;
//! `dtype` the element types and their order (`half` the 16-bit floats); `error` the error type and last error.

pub mod backend;
pub mod dtype;
pub mod error;
pub mod fault;
pub mod ffi;
pub mod half;
pub mod life;
pub mod multi;
