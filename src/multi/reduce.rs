//! Reduce over ranks: each rank reduces its shard, the partials travel with the
//! agreement, and every rank combines them in rank order (not arrival order), in the
//! accumulator type, so float results are the same on every rank and every run for a
//! given rank count.

use super::agree::{agree, Call, What};
use super::{Comm, Phases};
use crate::backend::Buffer;
use crate::dtype::{bits_of, combine, identity, value_of, DType, Element, Op};
use crate::error::{invalid, Result};
use crate::with_element_type;

pub struct ReduceArgs<'a> {
    pub input: &'a Buffer,
    pub op: Op,
}

/// `parts` (accumulator bits: the ranks' unrounded partials) combined with `op` in
/// order from the identity: the accumulator's bits and the element's (rounded once, as
/// on one context: a 16-bit float sum whose partials pass 65504 stays finite when
/// their total does).
pub(super) fn fold_partials(dtype: DType, op: Op, parts: &[u64]) -> (u64, u64) {
    with_element_type!(dtype, T => {
        let mut acc = identity::<<T as Element>::Acc>(op);
        for &p in parts {
            acc = combine(op, acc, value_of::<<T as Element>::Acc>(p));
        }
        (bits_of(acc), bits_of(T::narrow(acc)))
    })
}

/// This rank's partial in the accumulator type (None for MIN/MAX of an empty shard).
pub(super) fn local_partial(comm: &Comm, input: &Buffer, op: Op) -> Result<Option<u64>> {
    if input.len == 0 && op != Op::Sum {
        return Ok(None);
    }
    let mut value = [0u8; 8];
    let size = input.dtype.accumulator().size();
    comm.ctx.backend.reduce_accumulator(&input.memory, input.dtype, input.len, op, &mut value[..size])?;
    Ok(Some(u64::from_le_bytes(value)))
}

/// The agreement's extra bytes carrying a partial: a flag, then the bits.
pub(super) fn encode_partial(p: Option<u64>) -> [u8; 9] {
    let mut b = [0u8; 9];
    b[0] = p.is_some() as u8;
    b[1..].copy_from_slice(&p.unwrap_or(0).to_le_bytes());
    b
}

pub(super) fn decode_partial(b: &[u8]) -> Option<u64> {
    (b[0] != 0).then(|| u64::from_le_bytes(b[1..9].try_into().unwrap()))
}

/// Every rank's partial after the agreement, in rank order (its argument checks and
/// its local reduction are this rank's part of the agreement).
pub(super) fn agree_partials(comm: &Comm, what: What, call: impl FnOnce(&Buffer, Op) -> Call, args: Result<(&Buffer, Op)>)
    -> Result<(Vec<Call>, Vec<Option<u64>>)> {
    let mut phases = Phases::new(comm);
    let (call, local) = match args {
        Ok((input, op)) => (call(input, op), local_partial(comm, input, op)),
        Err(e) => (Call::new(what, 0, 0, 0, 0, 0), Err(e)),
    };
    phases.mark("local reduce")?;
    let (checks, extra) = match local {
        Ok(p) => (Ok(()), encode_partial(p)),
        Err(e) => (Err(e), encode_partial(None)),
    };
    let (calls, extras) = agree(&*comm.link, call, checks, &extra)?;
    phases.mark("agreement")?;
    phases.report(if what == What::Scan { "scan's partials" } else { "reduce" }, "");
    Ok((calls, extras.iter().map(|e| decode_partial(e)).collect()))
}

/// The reduction of every shard (the element's bits), on every rank. Integer SUM
/// wraps; MIN/MAX of nothing (every shard empty) is INVALID_ARGUMENT on every rank.
pub fn reduce(comm: &Comm, args: Result<ReduceArgs>) -> Result<u64> {
    let args = args.map(|a| (a.input, a.op));
    let call = |input: &Buffer, op: Op| Call::new(What::Reduce, input.dtype as u32, op as u32, 0, 0, input.len as u64);
    let dtype_op = args.as_ref().ok().map(|(b, op)| (b.dtype, *op));
    let (_, partials) = agree_partials(comm, What::Reduce, call, args)?;
    let (dtype, op) = dtype_op.expect("the agreement fails when this rank's arguments did");
    let parts: Vec<u64> = partials.into_iter().flatten().collect();
    if parts.is_empty() && op != Op::Sum {
        return Err(invalid(format!("every shard is empty: {} of nothing is undefined", op.name())));
    }
    Ok(fold_partials(dtype, op, &parts).1)
}
