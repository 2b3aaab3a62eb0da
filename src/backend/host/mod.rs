//! The CPU backend: buffers in host memory, primitives on rayon. It is the reference
//! every GPU result is checked against, so it stays plain and obviously right.

mod life;
mod memory;
mod multi_rank;
mod reduce;
mod scan;
mod segmented_select;
mod segmented_topk;
mod select;
mod sort;

pub use memory::{scratch_vec, HostMemory};

use std::ffi::c_void;
use std::ops::Range;

use super::{Backend, BackendKind, BandCounts, Memory, Rows, RunsIn, SelectOut, SortValues, TopkKs, TopkOut, TopkRows};
use crate::dtype::{DType, Op, Order, ScanMode};
use crate::error::{unsupported, Result};
use crate::life::{Geometry, LifeEngine};
use crate::multi::host_link::HostLink;
use crate::multi::Link;

pub struct HostBackend {
    /// Why this backend was chosen when the caller did not name it (AUTO), shown in
    /// the device name.
    reason: Option<String>,
}

impl HostBackend {
    pub fn new() -> HostBackend {
        HostBackend { reason: None }
    }

    /// A host backend opened for AUTO, which says why in its device name.
    pub fn chosen_because(reason: &str) -> HostBackend {
        HostBackend { reason: Some(reason.to_string()) }
    }
}

impl Default for HostBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl Backend for HostBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Host
    }

    fn device_name(&self) -> String {
        let threads = rayon::current_num_threads();
        match &self.reason {
            Some(reason) => format!("host ({threads} threads; {reason})"),
            None => format!("host ({threads} threads)"),
        }
    }

    fn allocate(&self, bytes: usize) -> Result<Memory> {
        Ok(Memory::Host(HostMemory::zeroed(bytes)?))
    }

    fn wrap_device(&self, _ptr: *mut c_void, _bytes: usize) -> Result<Memory> {
        Err(unsupported("the host backend has no device memory to wrap"))
    }

    fn wrap_host(&self, ptr: *mut c_void, bytes: usize) -> Result<Memory> {
        Ok(Memory::Host(HostMemory::borrowed(ptr as *mut u8, bytes)))
    }

    fn device_ptr(&self, _mem: &Memory) -> Result<*mut c_void> {
        Err(unsupported("buffers of the host backend have no device pointer"))
    }

    fn set_stream(&self, stream: *mut c_void) -> Result<()> {
        if stream.is_null() {
            Ok(())
        } else {
            Err(unsupported("the host backend has no CUDA stream to set"))
        }
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn precompile(&self) -> Result<()> {
        Ok(()) // nothing is compiled at run time on the host
    }

    fn write(&self, mem: &Memory, offset: usize, src: &[u8]) -> Result<()> {
        let m = mem.as_host()?;
        // SAFETY: the range was checked against the buffer by the caller.
        unsafe { m.bytes_mut()[offset..offset + src.len()].copy_from_slice(src) };
        Ok(())
    }

    fn read(&self, mem: &Memory, offset: usize, dst: &mut [u8]) -> Result<()> {
        let m = mem.as_host()?;
        // SAFETY: as above.
        unsafe { dst.copy_from_slice(&m.bytes()[offset..offset + dst.len()]) };
        Ok(())
    }

    fn copy(&self, dst: &Memory, src: &Memory, bytes: usize) -> Result<()> {
        let (d, s) = (dst.as_host()?, src.as_host()?);
        if d.ptr() == s.ptr() {
            return Ok(());
        }
        // SAFETY: at least `bytes` each; wrapped caller memory may overlap, hence a move.
        unsafe { std::ptr::copy(s.ptr(), d.ptr(), bytes) };
        Ok(())
    }

    fn reduce(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &mut [u8]) -> Result<()> {
        reduce::reduce(input.as_host()?, dtype, len, op, out);
        Ok(())
    }

    fn reduce_accumulator(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &mut [u8]) -> Result<()> {
        reduce::reduce_accumulator(input.as_host()?, dtype, len, op, out);
        Ok(())
    }

    fn reduce_to(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &Memory) -> Result<()> {
        let mut value = [0u8; 8];
        let size = dtype.size();
        reduce::reduce(input.as_host()?, dtype, len, op, &mut value[..size]);
        self.write(out, 0, &value[..size])
    }

    fn scan(
        &self,
        input: &Memory,
        output: &Memory,
        dtype: DType,
        len: usize,
        op: Op,
        mode: ScanMode,
        seed: Option<u64>,
    ) -> Result<()> {
        scan::scan(input.as_host()?, output.as_host()?, dtype, len, op, mode, seed);
        Ok(())
    }

    fn radix_sort(&self, keys: &Memory, key_dtype: DType, values: Option<SortValues>, len: usize, order: Order) -> Result<()> {
        let values = values.map(|v| v.as_host()).transpose()?;
        sort::stable_sort(keys.as_host()?, key_dtype, values, len, order)
    }

    fn quicksort(&self, keys: &Memory, key_dtype: DType, values: Option<SortValues>, len: usize, order: Order) -> Result<()> {
        let values = values.map(|v| v.as_host()).transpose()?;
        sort::unstable_sort(keys.as_host()?, key_dtype, values, len, order)
    }

    fn select_kth(&self, input: &Memory, dtype: DType, len: usize, k: usize, out: SelectOut) -> Result<()> {
        let mut value = [0u8; 8];
        let size = dtype.size();
        select::select_kth(input.as_host()?, dtype, len, k, &mut value[..size])?;
        match out {
            SelectOut::Host(out) => {
                out.copy_from_slice(&value[..size]);
                Ok(())
            }
            SelectOut::Device(out) => self.write(out, 0, &value[..size]),
        }
    }

    fn topk(
        &self,
        input: &Memory,
        dtype: DType,
        len: usize,
        k: usize,
        order: Order,
        out_values: &Memory,
        out_indices: Option<&Memory>,
    ) -> Result<()> {
        let indices = match out_indices {
            Some(m) => Some(m.as_host()?),
            None => None,
        };
        select::topk(input.as_host()?, dtype, len, k, order, out_values.as_host()?, indices)
    }

    fn segmented_select(&self, values: &Memory, dtype: DType, len: usize, rows: &Rows, out: &Memory) -> Result<()> {
        segmented_select::segmented_select(values.as_host()?, dtype, len, rows, out.as_host()?)
    }

    fn segmented_topk(&self, values: &Memory, dtype: DType, len: usize, rows: &TopkRows, ks: &TopkKs, order: Order, out: &TopkOut)
        -> Result<()> {
        segmented_topk::segmented_topk(values.as_host()?, dtype, len, rows, ks, order, out)
    }

    fn life_engine(&self, geometry: Geometry) -> Result<Box<dyn LifeEngine>> {
        Ok(Box::new(life::HostLife::new(geometry)?))
    }

    fn new_comm_id(&self) -> Result<Vec<u8>> {
        Ok(crate::multi::host_link::new_id())
    }

    fn link(&self, id: &[u8], rank: usize, nranks: usize) -> Result<Box<dyn Link>> {
        Ok(Box::new(HostLink::join(id, rank, nranks)?))
    }

    fn count_before(&self, keys: &Memory, dtype: DType, len: usize, order: Order, probes: &[u64], within: &[Range<u64>])
        -> Result<Vec<u64>> {
        multi_rank::count_before(keys.as_host()?, dtype, (len, within), order, probes)
    }

    fn sample(&self, input: &Memory, dtype: DType, len: usize, count: usize) -> Result<Vec<u8>> {
        Ok(multi_rank::sample(input.as_host()?, dtype, len, count))
    }

    fn band(&self, input: &Memory, dtype: DType, len: usize, lo: u64, hi: u64, digit_shift: Option<u32>, out: &Memory,
            cap: usize) -> Result<BandCounts> {
        multi_rank::band(input.as_host()?, dtype, len, (lo, hi), digit_shift, out.as_host()?, cap)
    }

    fn digit_counts(&self, input: &Memory, dtype: DType, len: usize, prefix: u64, shift: u32) -> Result<Vec<u64>> {
        Ok(multi_rank::digit_counts(input.as_host()?, dtype, len, prefix, shift))
    }

    fn merge_runs(&self, runs: RunsIn, dtype: DType, order: Order, out: &Memory, out_values: Option<&Memory>) -> Result<()> {
        let values = runs.values.map(|(m, d)| m.as_host().map(|h| (h, d))).transpose()?;
        let out_values = out_values.map(|m| m.as_host()).transpose()?;
        multi_rank::merge_runs(runs.keys.as_host()?, values, dtype, order, runs.runs, out.as_host()?, out_values)
    }

    fn add_u64(&self, mem: &Memory, len: usize, value: u64) -> Result<()> {
        multi_rank::add_u64(mem.as_host()?, len, value);
        Ok(())
    }

    fn gather_u64(&self, src: &Memory, positions: &Memory, len: usize, dst: &Memory) -> Result<()> {
        multi_rank::gather_u64(src.as_host()?, positions.as_host()?, len, dst.as_host()?)
    }
}
