//! gpuprims_group_*: one process driving several devices, a context and a
//! communicator each (NCCL on CUDA; threads on the host backend). Each operation takes
//! one buffer per device, in the group's device order, and runs every device's part on
//! a thread of its own, as one process per GPU would. Arguments are checked on every
//! device before any work; the first failing device's error is returned.
#![allow(non_camel_case_types)]

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use super::comm::{optional_buffer, write_value};
use super::handles::Held;
use super::types::*;
use super::{comm_args, destroy_handle, guard, into_handle, require, try_ref, write_out, Castable, Kind, Registry};
use crate::backend::{BackendKind, Buffer};
use crate::error::{invalid, Result};
use crate::multi::{Comm, RankThreads};

/// Several devices of this process and a communicator joining them.
pub struct gpuprims_group {
    _private: [u8; 0],
}

pub struct Group {
    comms: Vec<Comm>,
    /// A thread a device, each running that device's part of every call.
    threads: RankThreads,
}

impl Castable for gpuprims_group {
    type Inner = Group;
    const KIND: Kind = Kind::Group;
    fn registry() -> &'static Registry<Group> {
        static GROUPS: Registry<Group> = Registry::new();
        &GROUPS
    }
}

/// Opens a context on each of `devices[0 .. ndevices)` (CUDA ordinals; on the host
/// backend any values, one rank each) and a communicator joining them, and writes the
/// group to `*out`. The same CUDA device twice: INVALID_ARGUMENT (NCCL takes one rank
/// a device). ndevices 0: INVALID_ARGUMENT. AUTO opens CUDA when it can, else the host.
/// On CUDA a group of two devices enables peer access between their contexts and opens
/// each device's memory pool to the other at its first exchange of data (its data then
/// moves by the copy engines; GPUPRIMS_TUNE=multi.peer_copies=0 keeps it on NCCL, and
/// larger groups use NCCL unless multi.peer_copies is raised to their size).
#[no_mangle]
pub extern "C" fn gpuprims_group_create(
    backend: gpuprims_backend,
    devices: *const i32,
    ndevices: usize,
    out: *mut *mut gpuprims_group,
) -> gpuprims_status {
    guard("gpuprims_group_create", || {
        require(devices, "devices")?;
        require(out, "out")?;
        if ndevices == 0 || ndevices > 1024 {
            return Err(invalid(format!("ndevices is {ndevices}: a group has 1 to 1024 devices")));
        }
        // SAFETY: the caller provides `ndevices` readable ordinals.
        let list = unsafe { std::slice::from_raw_parts(devices, ndevices) };
        let kind = match backend {
            GPUPRIMS_BACKEND_AUTO => BackendKind::Auto,
            GPUPRIMS_BACKEND_CUDA => BackendKind::Cuda,
            GPUPRIMS_BACKEND_HOST => BackendKind::Host,
            other => return Err(invalid(format!("backend: unknown backend value {other}"))),
        };
        if let Some(d) = list.iter().find(|&&d| d < 0) {
            return Err(invalid(format!("devices: ordinal {d} is negative")));
        }
        let contexts = list.iter().map(|&d| crate::backend::open(kind, d)).collect::<Result<Vec<_>>>()?;
        if contexts[0].backend.kind() == BackendKind::Cuda {
            let mut seen = list.to_vec();
            seen.sort_unstable();
            if seen.windows(2).any(|w| w[0] == w[1]) {
                return Err(invalid("devices: a CUDA device is listed twice (NCCL takes one rank a device)"));
            }
        }
        let comms = Comm::join_group(&contexts)?;
        let threads = RankThreads::new(comms.len())?;
        write_out(out, into_handle::<gpuprims_group>(Group { comms, threads })?);
        Ok(())
    })
}

/// Destroys a group and its communicators; contexts handed out by
/// gpuprims_group_context stay usable until destroyed. NULL is a no-op.
#[no_mangle]
pub extern "C" fn gpuprims_group_destroy(group: *mut gpuprims_group) {
    guard("gpuprims_group_destroy", || {
        destroy_handle(group);
        Ok(())
    });
}

/// Writes the number of devices.
#[no_mangle]
pub extern "C" fn gpuprims_group_size(group: *const gpuprims_group, out: *mut usize) -> gpuprims_status {
    guard("gpuprims_group_size", || {
        let g = try_ref(group, "group")?;
        require(out, "out")?;
        write_out(out, g.comms.len());
        Ok(())
    })
}

/// Writes a new handle to the context of device `i` (in the group's order), for
/// making its buffers; release it with gpuprims_context_destroy. i past the group:
/// INVALID_ARGUMENT.
#[no_mangle]
pub extern "C" fn gpuprims_group_context(group: *const gpuprims_group, i: usize, out: *mut *mut gpuprims_context) -> gpuprims_status {
    guard("gpuprims_group_context", || {
        let g = try_ref(group, "group")?;
        require(out, "out")?;
        let comm = g.comms.get(i).ok_or_else(|| invalid(format!("i = {i}, but the group has {} devices", g.comms.len())))?;
        write_out(out, into_handle::<gpuprims_context>(Arc::clone(&comm.ctx))?);
        Ok(())
    })
}

/// Buffer handles from a caller's array of one per device (NULL entries as None when
/// `optional`).
fn buffers(p: *const *const gpuprims_buffer, n: usize, arg: &str, optional: bool) -> Result<Vec<Option<Held<'static, Buffer>>>> {
    if p.is_null() && optional {
        return Ok((0..n).map(|_| None).collect());
    }
    require(p, arg)?;
    // SAFETY: the caller provides one handle per device.
    let list = unsafe { std::slice::from_raw_parts(p, n) };
    list.iter()
        .enumerate()
        .map(|(i, &b)| if optional { optional_buffer(b, &format!("{arg}[{i}]")) } else { try_ref(b, &format!("{arg}[{i}]")).map(Some) })
        .collect()
}

/// Runs `part` for every device on its thread and returns the lowest device's error,
/// if any. `checks` ran first, on every device, before any work.
fn run_all<A: Send>(g: &Group, args: Vec<A>, part: impl Fn(&Comm, A) -> Result<()> + Sync) -> Result<()> {
    let part = &part;
    let parts: Vec<Box<dyn FnOnce() -> Result<()> + Send + '_>> =
        g.comms.iter().zip(args).map(|(c, a)| Box::new(move || failing_on_panic(c, || part(c, a))) as _).collect();
    g.threads.run(parts).into_iter().collect::<Result<Vec<()>>>().map(|_| ())
}

/// `f`, whose panic ends this rank's link first (the other ranks then stop waiting for
/// it) and is passed on.
fn failing_on_panic<R>(c: &Comm, f: impl FnOnce() -> Result<R>) -> Result<R> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            c.link.fail("a rank's part panicked");
            std::panic::resume_unwind(panic)
        }
    }
}

/// run_all for an operation that gives every rank a value: rank 0's (they are equal).
fn rank_zero_value<A: Send>(g: &Group, args: Vec<A>, part: impl Fn(&Comm, A) -> Result<u64> + Sync) -> Result<u64> {
    let value = Mutex::new(0u64);
    run_all(g, args, |c, a| {
        let bits = part(c, a)?;
        if c.rank() == 0 {
            *value.lock().unwrap_or_else(|p| p.into_inner()) = bits;
        }
        Ok(())
    })?;
    Ok(value.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// Every device's checked arguments, or the first device's error.
fn checked<A>(g: &Group, check: impl Fn(usize, &Comm) -> Result<A>) -> Result<Vec<A>> {
    g.comms.iter().enumerate().map(|(i, c)| check(i, c).map_err(|e| on_device(i, e))).collect()
}

fn on_device(i: usize, e: crate::error::Error) -> crate::error::Error {
    crate::error::Error::from_status(e.status(), format!("device {i}: {e}"))
}

/// gpuprims_comm_reduce over the group: `in` holds one buffer per device; one
/// element of their dtype is written to host memory at `out`.
#[no_mangle]
pub extern "C" fn gpuprims_group_reduce(
    group: *mut gpuprims_group,
    r#in: *const *const gpuprims_buffer,
    op: gpuprims_op,
    out: *mut c_void,
) -> gpuprims_status {
    guard("gpuprims_group_reduce", || {
        let g = try_ref(group, "group")?;
        require(out, "out")?;
        let ins = buffers(r#in, g.comms.len(), "in", false)?;
        let args = checked(&g, |i, c| comm_args::reduce(&c.ctx, ins[i].as_deref().unwrap(), op))?;
        let size = args[0].input.dtype.size();
        let bits = rank_zero_value(&g, args, |c, a| crate::multi::reduce(c, Ok(a)))?;
        write_value(out, bits, size);
        Ok(())
    })
}

/// gpuprims_comm_reduce_to_buffer over the group: each device's `out` (a one-element
/// buffer) gets the value.
#[no_mangle]
pub extern "C" fn gpuprims_group_reduce_to_buffer(
    group: *mut gpuprims_group,
    r#in: *const *const gpuprims_buffer,
    op: gpuprims_op,
    out: *const *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_group_reduce_to_buffer", || {
        let g = try_ref(group, "group")?;
        let n = g.comms.len();
        let (ins, outs) = (buffers(r#in, n, "in", false)?, buffers(out as *const *const gpuprims_buffer, n, "out", false)?);
        let args = checked(&g, |i, c| {
            let (input, output) = (ins[i].as_deref().unwrap(), outs[i].as_deref().unwrap());
            comm_args::one_element_out(&c.ctx, input, output)?;
            Ok((comm_args::reduce(&c.ctx, input, op)?, output))
        })?;
        run_all(&g, args, |c, (a, o)| {
            let size = a.input.dtype.size();
            let bits = crate::multi::reduce(c, Ok(a))?;
            c.ctx.backend.write(&o.memory, 0, &bits.to_le_bytes()[..size])
        })
    })
}

/// gpuprims_comm_scan over the group: one `in` and one `out` per device.
#[no_mangle]
pub extern "C" fn gpuprims_group_scan(
    group: *mut gpuprims_group,
    r#in: *const *const gpuprims_buffer,
    out: *const *mut gpuprims_buffer,
    op: gpuprims_op,
    mode: gpuprims_scan_mode,
) -> gpuprims_status {
    guard("gpuprims_group_scan", || {
        let g = try_ref(group, "group")?;
        let n = g.comms.len();
        let (ins, outs) = (buffers(r#in, n, "in", false)?, buffers(out as *const *const gpuprims_buffer, n, "out", false)?);
        let args = checked(&g, |i, c| comm_args::scan(&c.ctx, ins[i].as_deref().unwrap(), outs[i].as_deref().unwrap(), op, mode))?;
        run_all(&g, args, |c, a| crate::multi::scan(c, Ok(a)))
    })
}

/// gpuprims_comm_radix_sort over the group: one `keys` per device, and `values` NULL
/// or one per device.
#[no_mangle]
pub extern "C" fn gpuprims_group_radix_sort(
    group: *mut gpuprims_group,
    keys: *const *mut gpuprims_buffer,
    values: *const *mut gpuprims_buffer,
    order: gpuprims_order,
) -> gpuprims_status {
    guard("gpuprims_group_radix_sort", || {
        let g = try_ref(group, "group")?;
        let n = g.comms.len();
        let ks = buffers(keys as *const *const gpuprims_buffer, n, "keys", false)?;
        let vs = buffers(values as *const *const gpuprims_buffer, n, "values", true)?;
        let args = checked(&g, |i, c| comm_args::sort(&c.ctx, ks[i].as_deref().unwrap(), vs[i].as_deref(), order))?;
        run_all(&g, args, |c, a| crate::multi::sort(c, Ok(a)))
    })
}

/// gpuprims_comm_select_kth over the group: the element of global rank k to host
/// memory at `out`.
#[no_mangle]
pub extern "C" fn gpuprims_group_select_kth(
    group: *mut gpuprims_group,
    r#in: *const *const gpuprims_buffer,
    k: u64,
    out: *mut c_void,
) -> gpuprims_status {
    guard("gpuprims_group_select_kth", || {
        let g = try_ref(group, "group")?;
        require(out, "out")?;
        let ins = buffers(r#in, g.comms.len(), "in", false)?;
        let args = checked(&g, |i, c| comm_args::select(&c.ctx, ins[i].as_deref().unwrap(), k))?;
        let size = args[0].input.dtype.size();
        let bits = rank_zero_value(&g, args, |c, a| crate::multi::select_kth(c, Ok(a)))?;
        write_value(out, bits, size);
        Ok(())
    })
}

/// gpuprims_comm_topk over the group: every device's `out_values[i]` (and
/// `out_indices[i]` unless the array is NULL) gets the k best of the union.
#[no_mangle]
pub extern "C" fn gpuprims_group_topk(
    group: *mut gpuprims_group,
    r#in: *const *const gpuprims_buffer,
    k: u64,
    order: gpuprims_order,
    out_values: *const *mut gpuprims_buffer,
    out_indices: *const *mut gpuprims_buffer,
) -> gpuprims_status {
    guard("gpuprims_group_topk", || {
        let g = try_ref(group, "group")?;
        let n = g.comms.len();
        let ins = buffers(r#in, n, "in", false)?;
        let vals = buffers(out_values as *const *const gpuprims_buffer, n, "out_values", false)?;
        let idxs = buffers(out_indices as *const *const gpuprims_buffer, n, "out_indices", true)?;
        let args = checked(&g, |i, c| {
            comm_args::topk(&c.ctx, ins[i].as_deref().unwrap(), k, order, vals[i].as_deref().unwrap(), idxs[i].as_deref())
        })?;
        run_all(&g, args, |c, a| crate::multi::topk(c, Ok(a)))
    })
}
