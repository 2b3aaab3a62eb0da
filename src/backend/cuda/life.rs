//! The CUDA Life engine: two bit-packed copies of the grid in device memory (each
//! launch reads one and writes the other), stepped by kernels/life.cu, counted by
//! kernels/life_population.cu.
//!
//! A run of n generations is n / k launches of the k-generation kernel and, when k
//! does not divide n, one launch of the (n mod k)-generation kernel: every count is
//! exact. Each (rule, generations per launch) pair is its own module, compiled on
//! first use and cached like every other module.

use std::sync::Arc;

use cudarc::driver::result as drv;
use cudarc::driver::sys::CUdeviceptr;

use super::context::CudaShared;
use super::driver::DriverContext;
use super::launch::{launch, Arg};
use super::loader::ModuleSpec;
use super::memory::{alloc_async, read_to_host, DeviceMemory};
use super::sources;
use super::modules::Module;
use super::precompile;
use super::tuning::knob;
use crate::error::Result;
use crate::life::rule::Rule;
use crate::life::{Boundary, Geometry, LifeEngine};

/// Tuning (GPUPRIMS_TUNE="life.gens=8,life.rows=256"; see tuning.rs).
struct Policy {
    /// Generations per launch: the pipeline fill is 3 x gens rows per strip, the
    /// registers grow with it (154 a thread at 6 on sm_90, 194 at 8, spills past 12).
    /// On the H100, 6 beat 4, 8 and 10 (BENCHMARKS.md).
    gens: u32,
    /// Warps per block (the warps are independent).
    warps: u32,
    /// Rows of a strip; 0 lets the planner choose.
    rows: u32,
    /// Fewest rows of a strip, in multiples of the pipeline depth (3 x gens): the
    /// pipeline fill costs 3 x gens / rows of the work, but longer strips mean fewer
    /// warps; 4 measured best at 16384^2 on the H100.
    min_depths: u32,
}

fn policy() -> Policy {
    Policy {
        gens: knob("life.gens", 6).clamp(1, 12),
        warps: knob("life.warps", 4).clamp(1, 32),
        rows: knob("life.rows", 0),
        min_depths: knob("life.min_depths", 4).max(1),
    }
}

/// Words a warp writes: lanes 1..30 (kernels/life.cu).
const OUT_LANES: usize = 30;

/// The step module of `rule` advancing `gens` generations per launch.
pub fn module(rule: Rule, gens: u32) -> ModuleSpec {
    ModuleSpec {
        source: sources::LIFE,
        options: vec![
            format!("-DGP_BIRTH={}", rule.birth),
            format!("-DGP_SURVIVE={}", rule.survive),
            format!("-DGP_GENS={gens}"),
            format!("-DGP_WARPS={}", policy().warps),
        ],
    }
}

/// The population module.
pub fn population_module() -> ModuleSpec {
    ModuleSpec { source: sources::LIFE_POPULATION, options: vec![] }
}

/// What precompile compiles for Life: the default rule (B3/S23) at every generation
/// count a step launches (the full launches and each possible remainder), and the
/// population count. Other rules compile on first use.
pub fn modules() -> Vec<Module> {
    let rule = Rule::LIFE;
    let mut all: Vec<Module> = (1..=policy().gens)
        .map(|gens| Module { source: sources::LIFE, variant: variant(rule, gens), spec: module(rule, gens), label: format!("{rule} x{gens}") })
        .collect();
    all.push(Module { source: sources::LIFE_POPULATION, variant: 0, spec: population_module(), label: "population".into() });
    all
}

/// Module variant key of (rule, gens): 9 + 9 + 7 bits.
fn variant(rule: Rule, gens: u32) -> u32 {
    u32::from(rule.birth) | u32::from(rule.survive) << 9 | gens << 18
}

pub struct CudaLife {
    shared: Arc<CudaShared>,
    g: Geometry,
    /// The grid and its alternate; `current` indexes the live one.
    grids: [DeviceMemory; 2],
    current: usize,
    /// One u64 for the population count.
    counter: DeviceMemory,
}

fn allocate(shared: &Arc<CudaShared>, bytes: usize, what: &str) -> Result<DeviceMemory> {
    let state = shared.lock()?;
    // SAFETY: stream-ordered allocation and clear on the context's stream.
    let ptr = unsafe { alloc_async(state.stream, bytes, what) }?;
    let mem = DeviceMemory { ptr, bytes, owner: Some(shared.clone()) };
    // SAFETY: `bytes` bytes at `ptr` were just allocated.
    unsafe { drv::memset_d8_async(ptr, 0, bytes, state.stream) }.during("cuMemsetD8Async")?;
    Ok(mem)
}

impl CudaLife {
    pub fn new(shared: Arc<CudaShared>, g: Geometry) -> Result<CudaLife> {
        let bytes = g.words() * 8;
        let a = allocate(&shared, bytes, "Life grid")?;
        let b = allocate(&shared, bytes, "Life grid")?;
        let counter = allocate(&shared, 8, "Life population")?;
        Ok(CudaLife { shared, g, grids: [a, b], current: 0, counter })
    }

    fn ptr(&self, which: usize) -> CUdeviceptr {
        self.grids[which].ptr
    }

    /// Launches one step of `gens` generations from the current grid to the other.
    fn launch_step(&mut self, stream: cudarc::driver::sys::CUstream, rule: Rule, gens: u32) -> Result<()> {
        let p = policy();
        let kernel = match self.g.boundary {
            Boundary::Torus => "life_torus",
            Boundary::Dead => "life_dead",
        };
        let f = self.shared.loader.function(sources::LIFE, variant(rule, gens), kernel, || module(rule, gens))?;
        let block = 32 * p.warps;
        let wpr = self.g.words_per_row;
        let height = self.g.height as usize;
        let ncols = wpr.div_ceil(OUT_LANES);
        let rows = if p.rows > 0 {
            p.rows as usize
        } else {
            // At most one wave of resident warps (a few warps more would run as a
            // second wave and double the time), but strips no shorter than
            // min_depths pipeline depths, so the fill stays a small part of the work.
            let resident = (self.shared.resident_blocks(f, block)? * p.warps as u64) as usize;
            let strips = (resident / ncols).max(1);
            height.div_ceil(strips).max((p.min_depths * 3 * gens) as usize)
        }
        .min(height);
        let nwarps = ncols * height.div_ceil(rows);
        let grid = nwarps.div_ceil(p.warps as usize) as u64;
        let (src, dst) = (self.ptr(self.current), self.ptr(1 - self.current));
        // SAFETY: arguments match life_<boundary>(src, dst, width, height, wpr,
        // strip_rows, ncols, nwarps); both grids hold wpr x height words.
        unsafe {
            launch(
                f,
                grid,
                block,
                stream,
                &[
                    Arg::ptr(src),
                    Arg::ptr(dst),
                    Arg::u64(self.g.width),
                    Arg::u64(self.g.height),
                    Arg::size(wpr),
                    Arg::size(rows),
                    Arg::size(ncols),
                    Arg::size(nwarps),
                ],
            )?;
        }
        self.current = 1 - self.current;
        Ok(())
    }
}

impl LifeEngine for CudaLife {
    fn upload(&mut self, words: &[u64]) -> Result<()> {
        let state = self.shared.lock()?;
        let dst = self.ptr(self.current);
        // SAFETY: the grid holds words.len() words; we wait before returning.
        unsafe { drv::memcpy_htod_async(dst, words, state.stream) }.during("copying the Life grid to the device")?;
        CudaShared::wait(state.stream)
    }

    fn download(&mut self, words: &mut [u64]) -> Result<()> {
        let state = self.shared.lock()?;
        let src = self.ptr(self.current);
        // SAFETY: as above.
        unsafe { read_to_host(state.stream, src, words, "copying the Life grid from the device") }
    }

    fn step(&mut self, rule: Rule, generations: u64) -> Result<()> {
        self.shared.loader.begin_call();
        let shared = self.shared.clone();
        let state = shared.lock()?;
        let k = u64::from(policy().gens);
        // A count k does not divide needs two modules: on first use they compile side by side.
        let (full, rest) = (k as u32, (generations % k) as u32);
        if generations > k && rest != 0 {
            precompile::compile_unloaded(
                &shared,
                &[
                    (sources::LIFE, variant(rule, full), &|| module(rule, full)),
                    (sources::LIFE, variant(rule, rest), &|| module(rule, rest)),
                ],
            )?;
        }
        for _ in 0..generations / k {
            self.launch_step(state.stream, rule, k as u32)?;
        }
        if !generations.is_multiple_of(k) {
            self.launch_step(state.stream, rule, (generations % k) as u32)?;
        }
        Ok(())
    }

    fn population(&mut self) -> Result<u64> {
        self.shared.loader.begin_call();
        let state = self.shared.lock()?;
        let f = self.shared.loader.function(sources::LIFE_POPULATION, 0, "life_population", population_module)?;
        let n = self.g.words();
        let block = 256u32;
        let resident = self.shared.props.sm_count as usize * (self.shared.props.max_threads_per_sm / block) as usize;
        let grid = n.div_ceil(block as usize).clamp(1, resident) as u64;
        let mut count = [0u64; 1];
        // SAFETY: the counter holds one u64; the kernel reads n words of the grid;
        // read_to_host waits before the count is read.
        unsafe {
            drv::memset_d8_async(self.counter.ptr, 0, 8, state.stream).during("cuMemsetD8Async")?;
            launch(f, grid, block, state.stream, &[Arg::ptr(self.ptr(self.current)), Arg::size(n), Arg::ptr(self.counter.ptr)])?;
            read_to_host(state.stream, self.counter.ptr, &mut count[..], "copying the population")?;
        }
        Ok(count[0])
    }
}
