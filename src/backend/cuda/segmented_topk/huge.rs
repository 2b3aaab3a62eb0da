//! Rows the row kernels cannot take (more than CAP results, or too long for one block):
//! one device-wide top-k each (select.rs), into views of the call's outputs.

use cudarc::driver::result as drv;

use super::{Call, Outputs};
use crate::backend::cuda::context::{Needs, State};
use crate::backend::cuda::driver::DriverContext;
use crate::backend::cuda::memory::DeviceMemory;
use crate::backend::cuda::select;
use crate::error::Result;

/// A row the device-wide top-k takes.
pub(super) struct HugeRow {
    pub begin: u64,
    pub n: u64,
    pub k: u64,
    pub base: u64,
}

/// The rows of more than CAP results (or too long for one block): one device-wide
/// top-k each, into views of the outputs; slots past a row's length padded.
pub(super) struct HugeRows(pub Vec<HugeRow>);

/// Memory of `bytes` at byte `at` of `mem`, borrowed.
fn view(mem: &DeviceMemory, at: u64, bytes: u64) -> DeviceMemory {
    DeviceMemory { ptr: mem.ptr + at, bytes: bytes as usize, owner: None }
}

impl HugeRow {
    /// How many results the row gives (the rest of its k are pads).
    fn m(&self) -> u64 {
        self.k.min(self.n)
    }

    /// Where its top-k goes: the views of the outputs its m results take.
    fn outputs(&self, out: &Outputs, size: u64) -> (DeviceMemory, Option<DeviceMemory>) {
        let m = self.m();
        (view(out.values, self.base * size, m * size), out.indices.map(|ix| view(ix, self.base * 8, m * 8)))
    }
}

impl HugeRows {
    /// Before anything of the call is written: loads every module the rows' top-ks run
    /// and acquires the most scratch and look-back room any of them takes and the tags
    /// of all of them, so that none allocates once rows are written (a failure leaves
    /// the outputs as they were). The state lock must be held.
    pub fn reserve(&self, call: &Call, state: &mut State) -> Result<()> {
        let size = call.dtype.size() as u64;
        let mut needs = Needs::default();
        for r in self.0.iter().filter(|r| r.m() > 0) {
            let (vals, idx) = r.outputs(call.out, size);
            needs = needs.then(select::prepare_topk(call.shared, call.dtype, r.n as usize, r.m() as usize, &vals, idx.as_ref())?);
        }
        state.reserve(needs)
    }

    /// The rows' top-ks and pads (after `reserve`; takes the state lock itself).
    pub fn run(&self, call: &Call) -> Result<()> {
        let (shared, out) = (call.shared, call.out);
        let size = call.dtype.size() as u64;
        for r in &self.0 {
            let m = r.m();
            if m > 0 {
                let input = view(call.values, r.begin * size, r.n * size);
                let (vals, idx) = r.outputs(out, size);
                // select::topk, not the backend's entry: its one-row path takes the
                // step scratch, which holds this call's row lists (one_row.rs).
                let row = select::TopK { input: &input, dtype: call.dtype, len: r.n as usize, k: m as usize, order: call.order, values: &vals, indices: idx.as_ref() };
                select::topk(shared, &row)?;
            }
            if r.k > m {
                let state = shared.lock()?;
                let pads = r.k - m;
                // SAFETY: the slots lie inside the outputs (the FFI checked their lengths).
                unsafe {
                    drv::memset_d8_async(out.values.ptr + (r.base + m) * size, 0, (pads * size) as usize, state.stream)
                        .during("cuMemsetD8Async (top-k pads)")?;
                    if let Some(ix) = out.indices {
                        drv::memset_d8_async(ix.ptr + (r.base + m) * 8, 0xff, (pads * 8) as usize, state.stream)
                            .during("cuMemsetD8Async (top-k pads)")?;
                    }
                }
            }
        }
        Ok(())
    }
}
