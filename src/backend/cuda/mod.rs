//! The CUDA backend: device memory, the context's stream, and the primitives as
//! NVRTC-compiled kernels. One file per concern; one planner per primitive.

mod compact_lookback;
mod context;
mod counting_sort;
mod disk_cache;
mod driver;
mod launch;
mod life;
mod loader;
mod memory;
mod modules;
mod multi_merge;
mod multi_rank;
mod nccl;
mod nccl_link;
mod nvrtc;
mod parts;
mod peer_copy;
mod peer_copy_chunks;
mod precompile;
mod quicksort;
mod radix_sort;
mod reduce;
mod scan;
mod segmented_select;
mod segmented_topk;
mod select;
mod side_stream;
mod sources;
mod tiers;
mod topk_by_sort;
pub(crate) mod tuning;

pub use memory::DeviceMemory;

use std::ffi::c_void;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::result as drv;
use cudarc::driver::sys::{self, CUdeviceptr};

use super::{Backend, BackendKind, BandCounts, Memory, Rows, RunsIn, SelectOut, SortInto, SortValues, TopkKs, TopkOut, TopkRows};
use crate::dtype::{DType, Op, Order, ScanMode};
use crate::error::{invalid, unsupported, Error, Result};
use crate::life::{Geometry, LifeEngine};
use crate::multi::Link;
use context::CudaShared;
use driver::DriverContext;

pub struct CudaBackend {
    shared: Arc<CudaShared>,
}

impl CudaBackend {
    /// Opens device `ordinal`, or says why no usable device is there.
    pub fn open(ordinal: i32) -> Result<CudaBackend> {
        let count = driver::init_driver()?;
        if count == 0 {
            return Err(Error::NoDevice("the CUDA driver reports no device".into()));
        }
        if ordinal >= count {
            return Err(Error::NoDevice(format!("device {ordinal} requested, but only {count} CUDA device(s) exist")));
        }
        Ok(CudaBackend { shared: Arc::new(CudaShared::new(ordinal)?) })
    }
}

impl Backend for CudaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cuda
    }

    fn device_name(&self) -> String {
        self.shared.props.name.clone()
    }

    fn allocate(&self, bytes: usize) -> Result<Memory> {
        // Whole 16-byte words: NCCL's kernels load a buffer's last bytes as a whole
        // word, past the end of a buffer whose size is not a multiple of it
        // (compute-sanitizer flagged ncclDevKernel_SendRecv on a 1,218-byte buffer).
        let bytes = bytes
            .checked_next_multiple_of(16)
            .ok_or_else(|| Error::OutOfMemory(format!("{bytes} bytes of device memory: more than the address space")))?;
        Ok(Memory::Device(DeviceMemory::owned(&self.shared, bytes, "a buffer")?))
    }

    fn wrap_device(&self, ptr: *mut c_void, bytes: usize) -> Result<Memory> {
        if bytes > 0 {
            let _state = self.shared.lock()?;
            let mut ordinal: i32 = -1;
            // SAFETY: asks the driver what it knows of the address; fails for memory
            // it did not allocate.
            let known = unsafe {
                sys::cuPointerGetAttribute(
                    &mut ordinal as *mut i32 as *mut c_void,
                    sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                    ptr as CUdeviceptr,
                )
            };
            if known.result().is_err() {
                return Err(invalid("device_ptr is not memory the CUDA driver knows"));
            }
        }
        Ok(Memory::Device(DeviceMemory { ptr: ptr as CUdeviceptr, bytes, owner: None }))
    }

    fn wrap_host(&self, _ptr: *mut c_void, _bytes: usize) -> Result<Memory> {
        Err(unsupported(
            "the CUDA backend works on device memory: copy host data in with gpuprims_buffer_from_host",
        ))
    }

    fn device_ptr(&self, mem: &Memory) -> Result<*mut c_void> {
        Ok(mem.as_device()?.ptr as *mut c_void)
    }

    fn set_stream(&self, stream: *mut c_void) -> Result<()> {
        self.shared.set_stream(stream)
    }

    fn synchronize(&self) -> Result<()> {
        let state = self.shared.lock()?;
        CudaShared::wait(state.stream)
    }

    fn write(&self, mem: &Memory, offset: usize, src: &[u8]) -> Result<()> {
        let m = mem.as_device()?;
        let state = self.shared.lock()?;
        // SAFETY: the range lies inside the allocation. We wait, so the caller may
        // reuse `src` (even pinned memory) as soon as we return.
        unsafe { drv::memcpy_htod_async(m.ptr + offset as u64, src, state.stream) }.during("copying to the device")?;
        CudaShared::wait(state.stream)
    }

    fn read(&self, mem: &Memory, offset: usize, dst: &mut [u8]) -> Result<()> {
        let m = mem.as_device()?;
        let state = self.shared.lock()?;
        // SAFETY: the range lies inside the allocation; bytes have no invalid patterns.
        unsafe { memory::read_to_host(state.stream, m.ptr + offset as u64, dst, "copying from the device") }
    }

    fn copy(&self, dst: &Memory, src: &Memory, bytes: usize) -> Result<()> {
        let (d, s) = (dst.as_device()?, src.as_device()?);
        if d.ptr == s.ptr {
            return Ok(());
        }
        let state = self.shared.lock()?;
        // SAFETY: both ranges lie inside their allocations.
        unsafe { drv::memcpy_dtod_async(d.ptr, s.ptr, bytes, state.stream) }.during("copying on the device")
    }

    fn reduce(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &mut [u8]) -> Result<()> {
        self.shared.loader.begin_call();
        reduce::reduce(&self.shared, input.as_device()?, dtype, len, op, out, false)
    }

    fn reduce_accumulator(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &mut [u8]) -> Result<()> {
        self.shared.loader.begin_call();
        reduce::reduce(&self.shared, input.as_device()?, dtype, len, op, out, true)
    }

    fn reduce_to(&self, input: &Memory, dtype: DType, len: usize, op: Op, out: &Memory) -> Result<()> {
        self.shared.loader.begin_call();
        reduce::reduce_to_device(&self.shared, input.as_device()?, dtype, len, op, out.as_device()?)
    }

    fn scan(&self, input: &Memory, output: &Memory, dtype: DType, len: usize, op: Op, mode: ScanMode, seed: Option<u64>)
        -> Result<()> {
        self.shared.loader.begin_call();
        scan::scan(&self.shared, input.as_device()?, output.as_device()?, dtype, len, op, mode, seed)
    }

    fn precompile(&self) -> Result<()> {
        precompile::precompile(&self.shared)
    }

    fn radix_sort(&self, keys: &Memory, key_dtype: DType, values: Option<SortValues>, len: usize, order: Order) -> Result<()> {
        self.shared.loader.begin_call();
        let values = values.map(|v| v.as_device()).transpose()?;
        radix_sort::sort(&self.shared, keys.as_device()?, key_dtype, values, len, order)
    }

    fn radix_sort_into(&self, keys: &Memory, key_dtype: DType, values: Option<SortValues>, len: usize, order: Order,
                       out: SortInto) -> Result<()> {
        self.shared.loader.begin_call();
        let device_values = values.as_ref().map(|v| v.as_device()).transpose()?;
        if counting_sort::serves(key_dtype, values.is_some(), len) {
            // (The counting sort sorts in place only.)
            return super::radix_sort_then_copy(self, keys, key_dtype, values, len, order, out);
        }
        let into = radix_sort::SortOut { keys: out.keys.as_device()?.ptr, values: out.values.map_or(Ok(0), |m| m.as_device().map(|d| d.ptr))? };
        radix_sort::sort_digits(&self.shared, keys.as_device()?, key_dtype, device_values, len, order, into)
    }

    fn quicksort(&self, keys: &Memory, key_dtype: DType, values: Option<SortValues>, len: usize, order: Order) -> Result<()> {
        self.shared.loader.begin_call();
        let values = values.map(|v| v.as_device()).transpose()?;
        quicksort::sort(&self.shared, keys.as_device()?, key_dtype, values, len, order)
    }

    fn select_kth(&self, input: &Memory, dtype: DType, len: usize, k: usize, out: SelectOut) -> Result<()> {
        self.shared.loader.begin_call();
        match out {
            SelectOut::Host(out) => select::select_kth(&self.shared, input.as_device()?, dtype, len, k, out),
            SelectOut::Device(out) => select::select_kth_to_device(&self.shared, input.as_device()?, dtype, len, k, out.as_device()?),
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
        self.shared.loader.begin_call();
        let indices = match out_indices {
            Some(m) => Some(m.as_device()?),
            None => None,
        };
        let call = select::TopK { input: input.as_device()?, dtype, len, k, order, values: out_values.as_device()?, indices };
        // A short input goes faster as one split row of the segmented top-k.
        if segmented_topk::topk_one_row(&self.shared, &call)? {
            return Ok(());
        }
        // A short input with k a large share of it goes faster sorted whole.
        if topk_by_sort::applies(len, k, dtype.size(), indices.is_some()) {
            return topk_by_sort::topk(&self.shared, &call);
        }
        select::topk(&self.shared, &call)
    }

    fn segmented_select(&self, values: &Memory, dtype: DType, len: usize, rows: &Rows, out: &Memory) -> Result<()> {
        self.shared.loader.begin_call();
        let ranks = match rows.ranks {
            Some((m, t)) => Some((m.as_device()?, t == DType::U64)),
            None => None,
        };
        let offsets = (rows.offsets.as_device()?, rows.offsets_dtype == DType::U64);
        segmented_select::segmented_select(&self.shared, values.as_device()?, dtype, len, offsets, rows.nrows, ranks, out.as_device()?)
    }

    fn segmented_topk(&self, values: &Memory, dtype: DType, len: usize, rows: &TopkRows, ks: &TopkKs, order: Order, out: &TopkOut)
        -> Result<()> {
        self.shared.loader.begin_call();
        let indices = match out.indices {
            Some(m) => Some(m.as_device()?),
            None => None,
        };
        let out = segmented_topk::Outputs { values: out.values.as_device()?, indices, len: out.len };
        segmented_topk::segmented_topk(&self.shared, values.as_device()?, dtype, len, rows, ks, order, &out)
    }

    fn life_engine(&self, geometry: Geometry) -> Result<Box<dyn LifeEngine>> {
        Ok(Box::new(life::CudaLife::new(self.shared.clone(), geometry)?))
    }

    fn new_comm_id(&self) -> Result<Vec<u8>> {
        nccl_link::new_comm_id()
    }

    fn link(&self, id: &[u8], rank: usize, nranks: usize) -> Result<Box<dyn Link>> {
        Ok(Box::new(nccl_link::NcclLink::join(&self.shared, id, rank, nranks)?))
    }

    fn count_before(&self, keys: &Memory, dtype: DType, len: usize, order: Order, probes: &[u64], within: &[Range<u64>])
        -> Result<Vec<u64>> {
        self.shared.loader.begin_call();
        multi_rank::count_before(&self.shared, keys.as_device()?, dtype, (len, within), order, probes)
    }

    fn sample(&self, input: &Memory, dtype: DType, len: usize, count: usize) -> Result<Vec<u8>> {
        self.shared.loader.begin_call();
        multi_rank::sample(&self.shared, input.as_device()?, dtype, len, count)
    }

    fn band(&self, input: &Memory, dtype: DType, len: usize, lo: u64, hi: u64, digit_shift: Option<u32>, out: &Memory,
            cap: usize) -> Result<BandCounts> {
        self.shared.loader.begin_call();
        multi_rank::band(&self.shared, input.as_device()?, dtype, len, (lo, hi), digit_shift, out.as_device()?, cap)
    }

    fn digit_counts(&self, input: &Memory, dtype: DType, len: usize, prefix: u64, shift: u32) -> Result<Vec<u64>> {
        self.shared.loader.begin_call();
        multi_rank::digit_counts(&self.shared, input.as_device()?, dtype, len, prefix, shift)
    }

    fn merge_runs(&self, runs: RunsIn, dtype: DType, order: Order, out: &Memory, out_values: Option<&Memory>) -> Result<()> {
        self.shared.loader.begin_call();
        let values = runs.values.map(|(m, _)| m.as_device()).transpose()?;
        let value_bytes = runs.values.map_or(0, |(_, d)| d.size());
        let out_values = out_values.map(|m| m.as_device()).transpose()?;
        multi_merge::merge_runs(&self.shared, runs.keys.as_device()?, values, dtype, value_bytes, order, runs.runs, out.as_device()?, out_values)
    }

    fn add_u64(&self, mem: &Memory, len: usize, value: u64) -> Result<()> {
        self.shared.loader.begin_call();
        multi_rank::add_u64(&self.shared, mem.as_device()?, len, value)
    }

    fn gather_u64(&self, src: &Memory, positions: &Memory, len: usize, dst: &Memory) -> Result<()> {
        self.shared.loader.begin_call();
        multi_rank::gather_u64(&self.shared, src.as_device()?, positions.as_device()?, len, dst.as_device()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    /// A line on stderr as it happens: written to the stream itself, past the test
    /// harness's capture, so a long run shows that it is alive under `cargo test` and CTest.
    fn progress(line: &str) {
        let _ = writeln!(std::io::stderr().lock(), "every_kernel_module_compiles_cleanly: {line}");
    }

    /// Compiles `module` for `arch`: None when it compiles cleanly, else what went wrong.
    fn compile_failure(module: &modules::Module, arch: &str) -> Option<String> {
        let modules::Module { label: what, spec, .. } = module;
        match nvrtc::compile(spec.source.name, spec.source.text, arch, &spec.options) {
            Ok(c) if c.log.is_empty() && !c.cubin.is_empty() => None,
            Ok(c) if c.log.is_empty() => Some(format!("{} {what} {arch}: an empty CUBIN", spec.source.name)),
            Ok(c) => Some(format!("{} {what} {arch}: warnings:\n{}", spec.source.name, c.log)),
            Err(e) => Some(format!("{} {what} {arch}: {e}", spec.source.name)),
        }
    }

    /// NVRTC needs no GPU: every kernel module compiles for sm_80 and sm_90 without
    /// an error or a warning. Skips when NVRTC is absent, unless
    /// GPUPRIMS_REQUIRE_NVRTC=1 (CI sets it), which makes absence a failure.
    ///
    /// About 470 compiles of 0.1 to 2 s each (the quicksort's block sorts and the
    /// selections are the heaviest): they run on one thread per core (NVRTC is
    /// thread-safe; GPUPRIMS_TEST_NVRTC_THREADS=n sets the count; GPUPRIMS_TEST_NVRTC_ONLY
    /// a part of the sources' names), each (source,
    /// options, arch) once, with a progress line at least every 20 s.
    #[test]
    fn every_kernel_module_compiles_cleanly() {
        if !nvrtc::available_for_tests() {
            return;
        }
        let all = modules::all();
        // GPUPRIMS_TEST_NVRTC_ONLY=text: only the sources whose name holds it (a kernel
        // being worked on), for a quick check.
        let only = std::env::var("GPUPRIMS_TEST_NVRTC_ONLY").unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        let jobs: Vec<(&modules::Module, &str)> = ["sm_80", "sm_90"]
            .into_iter()
            .flat_map(|arch| all.iter().map(move |m| (m, arch)))
            .filter(|(m, _)| m.spec.source.name.contains(only.as_str()))
            .filter(|(m, arch)| seen.insert((m.spec.source.name, m.spec.source.text, m.spec.options.clone(), *arch)))
            .collect();
        let threads = std::env::var("GPUPRIMS_TEST_NVRTC_THREADS")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .clamp(1, jobs.len().max(1));
        let start = Instant::now();
        progress(&format!("{} compiles ({} modules, sm_80 and sm_90) on {threads} threads", jobs.len(), all.len()));

        let next = AtomicUsize::new(0);
        // (job, seconds, failure) as each compile finishes
        let (tx, rx) = mpsc::channel::<(usize, f64, Option<String>)>();
        let mut failures: Vec<(usize, String)> = Vec::new();
        let mut times: Vec<(f64, usize)> = Vec::new();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let tx = tx.clone();
                let (jobs, next) = (&jobs, &next);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(module, arch)) = jobs.get(i) else { break };
                    let t = Instant::now();
                    let failure = compile_failure(module, arch);
                    if tx.send((i, t.elapsed().as_secs_f64(), failure)).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            let mut last = Instant::now();
            loop {
                match rx.recv_timeout(Duration::from_secs(1)) {
                    Ok((i, secs, failure)) => {
                        times.push((secs, i));
                        if let Some(f) = failure {
                            progress(&format!("FAILED: {}", f.lines().next().unwrap_or("")));
                            failures.push((i, f));
                        }
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                if last.elapsed() >= Duration::from_secs(20) {
                    last = Instant::now();
                    progress(&format!("{} of {} compiled ({:.0} s)", times.len(), jobs.len(), start.elapsed().as_secs_f64()));
                }
            }
        });
        times.sort_by(|a, b| b.0.total_cmp(&a.0));
        let slowest: Vec<String> = times
            .iter()
            .take(3)
            .map(|&(secs, i)| format!("{} {} {} {secs:.1} s", jobs[i].0.spec.source.name, jobs[i].0.label, jobs[i].1))
            .collect();
        progress(&format!(
            "{} compiled in {:.0} s, {:.0} s of compiling (slowest: {}); {} failed",
            times.len(),
            start.elapsed().as_secs_f64(),
            times.iter().map(|t| t.0).sum::<f64>(),
            slowest.join(", "),
            failures.len()
        ));
        assert_eq!(times.len(), jobs.len(), "a compile thread stopped early");
        failures.sort_by_key(|f| f.0);
        let failures: Vec<String> = failures.into_iter().map(|f| f.1).collect();
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }
}
