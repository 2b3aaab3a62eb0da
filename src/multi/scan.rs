//! Scan over ranks: each rank's partial travels with the agreement; a rank scans its
//! shard seeded with the partials of the ranks before it, combined in rank order in
//! the accumulator type. Rank 0 gets exactly a one-context scan; later ranks differ
//! from one only in the rounding of float sums, and are the same on every run.

use super::agree::{Call, What};
use super::reduce::{agree_partials, fold_partials};
use super::Comm;
use crate::backend::Buffer;
use crate::dtype::{Op, ScanMode};
use crate::error::Result;

pub struct ScanArgs<'a> {
    pub input: &'a Buffer,
    pub output: &'a Buffer,
    pub op: Op,
    pub mode: ScanMode,
}

pub fn scan(comm: &Comm, args: Result<ScanArgs>) -> Result<()> {
    let mode = args.as_ref().map_or(ScanMode::Inclusive, |a| a.mode);
    let output = args.as_ref().ok().map(|a| a.output);
    let packed = |op: Op| op as u32 | (mode as u32) << 8;
    let call = |input: &Buffer, op: Op| Call::new(What::Scan, input.dtype as u32, packed(op), 0, 0, input.len as u64);
    let (input, op) = match &args {
        Ok(a) => (Some(a.input), a.op),
        Err(_) => (None, Op::Sum),
    };
    let (_, partials) = agree_partials(comm, What::Scan, call, args.map(|a| (a.input, a.op)))?;
    let (input, output) = (input.expect("agreed"), output.expect("agreed"));
    if input.len == 0 {
        return Ok(());
    }
    let before: Vec<u64> = partials[..comm.rank()].iter().flatten().copied().collect();
    let seed = (!before.is_empty()).then(|| fold_partials(input.dtype, op, &before).0);
    // Nothing waits on this rank after the agreement, so a failure here is its own.
    comm.ctx.backend.scan(&input.memory, &output.memory, input.dtype, input.len, op, mode, seed)
}
