//! gpuprims_comm_*: one rank of a communicator (one process a GPU, across processes and
//! machines; or threads of one process on the host backend). Every rank calls the same
//! operations in the same order with its own shard; each call first agrees with the
//! other ranks (src/multi/agree.rs), so an argument error on one rank is returned by
//! every rank and none waits forever. A NULL or destroyed comm cannot take part: the
//! other ranks then wait until GPUPRIMS_COMM_TIMEOUT_S (300 s by default).
#![allow(non_camel_case_types)]

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use super::types::*;
use super::{comm_args, destroy_handle, guard, into_handle, require, try_ref, write_out, Castable, Kind, Registry};
use crate::backend::{Buffer, BackendKind};
use crate::error::{invalid, Error, Result};
use crate::multi::{self, Comm, ID_BYTES};

/// One rank of a communicator: a context and its link to the other ranks (NCCL on
/// CUDA). It keeps its context alive until it is destroyed.
pub struct gpuprims_comm {
    _private: [u8; 0],
}

/// The bytes of a communicator id (an NCCL unique id on CUDA).
pub const GPUPRIMS_COMM_ID_BYTES: usize = 128;
const _: () = assert!(GPUPRIMS_COMM_ID_BYTES == ID_BYTES, "the ABI's id size is the links' id size");

/// A communicator and the lock that keeps its calls one at a time (two exchanges in
/// flight on one link would mix).
pub struct CommHandle {
    pub comm: Comm,
    pub one_call: Mutex<()>,
}

impl Castable for gpuprims_comm {
    type Inner = CommHandle;
    const KIND: Kind = Kind::Comm;
    fn registry() -> &'static Registry<CommHandle> {
        static COMMS: Registry<CommHandle> = Registry::new();
        &COMMS
    }
}

/// Writes a fresh communicator id for `backend` (CUDA: NCCL's ncclGetUniqueId; HOST:
/// an id for ranks that are threads of this process) to `id`, which has room for
/// GPUPRIMS_COMM_ID_BYTES bytes. Hand the same bytes to every rank (through MPI, a
/// file, a socket). CUDA without NCCL: GPUPRIMS_STATUS_UNSUPPORTED saying what to
/// install. AUTO is INVALID_ARGUMENT: the ranks must agree on a backend.
#[no_mangle]
pub extern "C" fn gpuprims_comm_id_create(backend: gpuprims_backend, id: *mut u8) -> gpuprims_status {
    guard("gpuprims_comm_id_create", || {
        require(id, "id")?;
        let bytes = match backend {
            GPUPRIMS_BACKEND_HOST => multi::host_link::new_id(),
            GPUPRIMS_BACKEND_CUDA => {
                let ctx = crate::backend::open(BackendKind::Cuda, 0)?;
                ctx.backend.new_comm_id()?
            }
            GPUPRIMS_BACKEND_AUTO => return Err(invalid("backend: AUTO cannot make an id; name CUDA or HOST")),
            other => return Err(invalid(format!("backend: unknown backend value {other}"))),
        };
        // SAFETY: the caller provides GPUPRIMS_COMM_ID_BYTES writable bytes at `id`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), id, ID_BYTES) };
        Ok(())
    })
}

/// Joins communicator `id` as rank `rank` (0-based) of `nranks`, on ctx's device, and
/// writes the handle to `*out`. Collective: it returns once every rank has joined
/// (ncclCommInitRank on CUDA, whose errors are DRIVER_ERROR). On CUDA each rank needs
/// a device of its own. rank >= nranks or nranks 0: INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn gpuprims_comm_create(
    ctx: *mut gpuprims_context,
    id: *const u8,
    rank: u32,
    nranks: u32,
    out: *mut *mut gpuprims_comm,
) -> gpuprims_status {
    guard("gpuprims_comm_create", || {
        let c = try_ref(ctx, "ctx")?;
        require(id, "id")?;
        require(out, "out")?;
        if nranks == 0 || rank >= nranks {
            return Err(invalid(format!("rank {rank} of {nranks}: a rank lies in 0..nranks")));
        }
        // SAFETY: the caller provides GPUPRIMS_COMM_ID_BYTES readable bytes at `id`.
        let id = unsafe { std::slice::from_raw_parts(id, ID_BYTES) };
        let comm = Comm::join(Arc::clone(&c), id, rank as usize, nranks as usize)?;
        write_out(out, into_handle::<gpuprims_comm>(CommHandle { comm, one_call: Mutex::new(()) })?);
        Ok(())
    })
}

/// Destroys a communicator (this rank's part; on CUDA ncclCommDestroy after its work).
/// NULL is a no-op.
#[no_mangle]
pub extern "C" fn gpuprims_comm_destroy(comm: *mut gpuprims_comm) {
    guard("gpuprims_comm_destroy", || {
        destroy_handle(comm);
        Ok(())
    });
}

/// Writes this rank's number and the number of ranks.
#[no_mangle]
pub extern "C" fn gpuprims_comm_rank(comm: *const gpuprims_comm, rank: *mut u32, nranks: *mut u32) -> gpuprims_status {
    guard("gpuprims_comm_rank", || {
        let h = try_ref(comm, "comm")?;
        require(rank, "rank")?;
        require(nranks, "nranks")?;
        write_out(rank, h.comm.rank() as u32);
        write_out(nranks, h.comm.nranks() as u32);
        Ok(())
    })
}

pub(crate) fn optional_buffer(p: *const gpuprims_buffer, arg: &str) -> Result<Option<super::handles::Held<'static, Buffer>>> {
    if p.is_null() {
        Ok(None)
    } else {
        try_ref(p, arg).map(Some)
    }
}

/// The value `bits` (of `size` bytes) to host memory at `out`.
pub(crate) fn write_value(out: *mut c_void, bits: u64, size: usize) {
    // SAFETY: the caller checked `out` and it has room for one element.
    unsafe { std::ptr::copy_nonoverlapping(bits.to_le_bytes().as_ptr(), out as *mut u8, size) };
}

/// Runs `body` with the communicator, one call at a time.
fn with_comm(comm: *mut gpuprims_comm, body: impl FnOnce(&Comm) -> Result<()>) -> Result<()> {
    let h = try_ref(comm, "comm")?;
    let _one = h.one_call.lock().unwrap_or_else(|p| p.into_inner());
    body(&h.comm)
}

fn err_clone<T>(r: &Result<T>) -> Result<&T> {
    r.as_ref().map_err(Error::clone)
}

/// Reduces the union of every rank's `in` with `op` and writes one element of in's
/// dtype to host memory at `out` on every rank. The per-rank partials, in the
/// accumulator type (f32 for F16 and BF16), are combined in rank order and rounded once,
/// so float SUM is the same on every rank and run for a given rank count (it may differ
/// from one context's reduce in rounding). MIN/MAX with every shard empty:
/// INVALID_ARGUMENT on every rank. Waits.
#[no_mangle]
pub extern "C" fn gpuprims_comm_reduce(
    comm: *mut gpuprims_comm,
    r#in: *const gpuprims_buffer,
    op: gpuprims_op,
    out: *mut c_void,
) -> gpuprims_status {
    guard("gpuprims_comm_reduce", || {
        with_comm(comm, |c| {
            let input = try_ref(r#in, "in");
            let args = err_clone(&input).and_then(|i| require(out, "out").and_then(|_| comm_args::reduce(&c.ctx, i, op)));
            let bits = multi::reduce(c, args)?;
            write_value(out, bits, input?.dtype.size());
            Ok(())
        })
    })
}

/// Like gpuprims_comm_reduce, but the result goes to `out`, a one-element buffer of
/// in's dtype, on every rank.
#[no_mangle]
pub extern "C" fn gpuprims_comm_reduce_to_buffer(
    comm: *mut gpuprims_comm,
    r#in: *const gpuprims_buffer,
    op: gpuprims_op,
    out: *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_comm_reduce_to_buffer", || {
        with_comm(comm, |c| {
            let (input, output) = (try_ref(r#in, "in"), try_ref(out, "out"));
            let args = err_clone(&input).and_then(|i| {
                let o = err_clone(&output)?;
                comm_args::one_element_out(&c.ctx, i, o)?;
                comm_args::reduce(&c.ctx, i, op)
            });
            let bits = multi::reduce(c, args)?;
            let (i, o) = (input?, output?);
            c.ctx.backend.write(&o.memory, 0, &bits.to_le_bytes()[..i.dtype.size()])
        })
    })
}

/// Prefix scan across ranks: rank r's `out` is the scan of the global sequence (the
/// shards in rank order) at its elements. `out` has in's dtype and length and may be
/// `in`. Rank 0's result is a one-context scan's; later ranks start from the partials
/// of the ranks before them, combined in rank order. Waits for the agreement; the
/// scan itself runs in stream order.
#[no_mangle]
pub extern "C" fn gpuprims_comm_scan(
    comm: *mut gpuprims_comm,
    r#in: *const gpuprims_buffer,
    out: *mut gpuprims_buffer,
    op: gpuprims_op,
    mode: gpuprims_scan_mode,
) -> gpuprims_status {
    guard("gpuprims_comm_scan", || {
        with_comm(comm, |c| {
            let (input, output) = (try_ref(r#in, "in"), try_ref(out, "out"));
            let args = err_clone(&input).and_then(|i| comm_args::scan(&c.ctx, i, err_clone(&output)?, op, mode));
            multi::scan(c, args)
        })
    })
}

/// Sorts keys (and values with them) across ranks, stably in the radix sort's total
/// order: afterwards each rank holds as many elements as it gave, and the shards in
/// rank order are the sorted global sequence; equal keys keep their global order.
/// `values` may be NULL (on every rank alike). Waits.
#[no_mangle]
pub extern "C" fn gpuprims_comm_radix_sort(
    comm: *mut gpuprims_comm,
    keys: *mut gpuprims_buffer,
    values: *mut gpuprims_buffer,
    order: gpuprims_order,
) -> gpuprims_status {
    guard("gpuprims_comm_radix_sort", || {
        with_comm(comm, |c| {
            let (k, v) = (try_ref(keys, "keys"), optional_buffer(values, "values"));
            let args = err_clone(&k).and_then(|k| comm_args::sort(&c.ctx, k, err_clone(&v)?.as_deref(), order));
            multi::sort(c, args)
        })
    })
}

/// Writes to host memory at `out`, on every rank, the element of global rank `k`
/// (0-based, ascending, the library's total order; a NaN result is the canonical
/// quiet NaN). k at or past the total length: INVALID_ARGUMENT on every rank. Waits.
#[no_mangle]
pub extern "C" fn gpuprims_comm_select_kth(
    comm: *mut gpuprims_comm,
    r#in: *const gpuprims_buffer,
    k: u64,
    out: *mut c_void,
) -> gpuprims_status {
    guard("gpuprims_comm_select_kth", || {
        with_comm(comm, |c| {
            let input = try_ref(r#in, "in");
            let args = err_clone(&input).and_then(|i| require(out, "out").and_then(|_| comm_args::select(&c.ctx, i, k)));
            let bits = multi::select_kth(c, args)?;
            write_value(out, bits, input?.dtype.size());
            Ok(())
        })
    })
}

/// The `k` best of the union of every rank's `in` (smallest for ASCENDING, largest
/// for DESCENDING), sorted, ties by the lowest global index (the rank's offset plus
/// the local index), written on every rank to `out_values` (k elements of in's dtype)
/// and their global indices to `out_indices` (k U64, or NULL). k past the total
/// length: INVALID_ARGUMENT on every rank. Waits.
#[no_mangle]
pub extern "C" fn gpuprims_comm_topk(
    comm: *mut gpuprims_comm,
    r#in: *const gpuprims_buffer,
    k: u64,
    order: gpuprims_order,
    out_values: *mut gpuprims_buffer,
    out_indices: *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_comm_topk", || {
        with_comm(comm, |c| {
            let (input, values) = (try_ref(r#in, "in"), try_ref(out_values, "out_values"));
            let indices = optional_buffer(out_indices, "out_indices");
            let args = err_clone(&input).and_then(|i| {
                comm_args::topk(&c.ctx, i, k, order, err_clone(&values)?, err_clone(&indices)?.as_deref())
            });
            multi::topk(c, args)
        })
    })
}
