//! The agreement every multi-rank operation starts with: each rank shows the others
//! what it was asked (the call, its shard's length, the status of its own argument
//! checks, a short message) in one small exchange. Then every rank knows whether all
//! were well called, and alike: if not, every rank returns an error before any data
//! moves, so an argument error on one rank never leaves the others waiting in a
//! collective.

use super::transport::Link;
use crate::error::{invalid, Error, Result};

/// The operations, as the agreement names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum What {
    Reduce = 1,
    Scan = 2,
    Sort = 3,
    SelectKth = 4,
    Topk = 5,
}

impl What {
    fn name(code: u32) -> &'static str {
        match code {
            1 => "reduce",
            2 => "scan",
            3 => "sort",
            4 => "select_kth",
            5 => "topk",
            _ => "(nothing: its arguments failed)",
        }
    }
}

/// What one rank was asked. Every field but `len` (the rank's shard) must be the same
/// on every rank; `detail` is compared only where it changes the result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Call {
    pub what: u32,
    pub dtype: u32,
    /// The op, order or scan mode (and more, packed by the operation).
    pub mode: u32,
    /// The sort's value dtype (0: keys alone); compared.
    pub detail: u32,
    pub k: u64,
    pub len: u64,
}

const MESSAGE_BYTES: usize = 200;
const RECORD_BYTES: usize = 4 * 5 + 8 * 2 + MESSAGE_BYTES;

impl Call {
    pub fn new(what: What, dtype: u32, mode: u32, detail: u32, k: u64, len: u64) -> Call {
        Call { what: what as u32, dtype, mode, detail, k, len }
    }

    fn alike(&self, other: &Call) -> bool {
        (self.what, self.dtype, self.mode, self.detail, self.k) == (other.what, other.dtype, other.mode, other.detail, other.k)
    }

    fn describe(&self) -> String {
        let dtype = |raw: u32| crate::dtype::DType::from_raw(raw).map_or_else(|_| format!("dtype {raw}"), |d| d.name().to_string());
        let values = if self.detail == 0 { String::new() } else { format!(", values {}", dtype(self.detail)) };
        format!("{} of {}{values} (op/order/mode {:#x}, k {})", What::name(self.what), dtype(self.dtype), self.mode, self.k)
    }
}

fn encode(call: &Call, checks: &Result<()>, extra: &[u8]) -> Vec<u8> {
    let (status, message) = match checks {
        Ok(()) => (0u32, String::new()),
        Err(e) => (e.status(), e.to_string()),
    };
    let mut b = Vec::with_capacity(RECORD_BYTES + extra.len());
    for w in [status, call.what, call.dtype, call.mode, call.detail] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    b.extend_from_slice(&call.k.to_le_bytes());
    b.extend_from_slice(&call.len.to_le_bytes());
    let mut text = message.into_bytes();
    text.resize(MESSAGE_BYTES, 0);
    b.extend_from_slice(&text);
    b.extend_from_slice(extra);
    b
}

struct Record {
    status: u32,
    call: Call,
    message: String,
    extra: Vec<u8>,
}

fn decode(b: &[u8]) -> Record {
    let u32_at = |i: usize| u32::from_le_bytes(b[4 * i..4 * i + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let text = &b[36..36 + MESSAGE_BYTES];
    let end = text.iter().position(|&c| c == 0).unwrap_or(MESSAGE_BYTES);
    Record {
        status: u32_at(0),
        call: Call { what: u32_at(1), dtype: u32_at(2), mode: u32_at(3), detail: u32_at(4), k: u64_at(20), len: u64_at(28) },
        message: String::from_utf8_lossy(&text[..end]).into_owned(),
        extra: b[RECORD_BYTES..].to_vec(),
    }
}

/// The agreement: every rank's call and `extra` bytes (the same length on every
/// rank), or the error every rank returns. `checks` is this rank's own argument check:
/// its error is what this rank returns; the others name the rank and its message.
pub fn agree(link: &dyn Link, call: Call, checks: Result<()>, extra: &[u8]) -> Result<(Vec<Call>, Vec<Vec<u8>>)> {
    let mine = encode(&call, &checks, extra);
    let all = link.all_gather(&mine)?;
    let records: Vec<Record> = all.chunks(mine.len()).map(decode).collect();
    checks?;
    let n = records.len();
    if let Some((r, rec)) = records.iter().enumerate().find(|(_, rec)| rec.status != 0) {
        return Err(Error::from_status(
            rec.status,
            format!("rank {r} of {n} failed its argument checks, so no rank did any work: {}", rec.message),
        ));
    }
    if let Some((r, rec)) = records.iter().enumerate().find(|(_, rec)| !rec.call.alike(&call)) {
        return Err(invalid(format!(
            "the ranks were not asked the same: rank {} {}, rank {r} {}",
            link.rank(),
            call.describe(),
            rec.call.describe()
        )));
    }
    Ok((records.iter().map(|r| r.call).collect(), records.into_iter().map(|r| r.extra).collect()))
}

/// The agreement of an operation with no extra bytes: this rank's arguments (or their
/// error, which every rank then returns) and every rank's shard length, in rank order.
pub fn agree_on<A>(link: &dyn Link, args: Result<A>, call: impl FnOnce(&A) -> Call) -> Result<(A, Vec<u64>)> {
    let (call, checks, args) = match args {
        Ok(a) => (call(&a), Ok(()), Some(a)),
        Err(e) => (Call::default(), Err(e), None),
    };
    let (calls, _) = agree(link, call, checks, &[])?;
    let args = args.expect("the agreement fails when this rank's arguments did");
    Ok((args, calls.iter().map(|c| c.len).collect()))
}
