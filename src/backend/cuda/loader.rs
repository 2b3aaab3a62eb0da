//! The kernel loader: a module is a source compiled for one element type and tuning;
//! it is compiled by NVRTC for the device's exact architecture on first use, kept in
//! memory (CUBIN per process, CUmodule per context) and on disk (disk_cache.rs).

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::ffi::CString;
use std::path::Path;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUfunction, CUmodule};
use once_cell::sync::{Lazy, OnceCell};

use super::disk_cache;
use super::driver::DriverContext;
use super::nvrtc;
use super::sources::{Source, HEADERS};
use super::tiers::{self, Upgrade};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::fault::Point;

/// A source plus the defines that instantiate it (element type, tuning).
#[derive(Debug, Clone)]
pub struct ModuleSpec {
    pub source: Source,
    pub options: Vec<String>,
}

impl ModuleSpec {
    /// The cache key of this module compiled for `arch` by NVRTC `nvrtc_version`.
    pub fn key(&self, arch: &str, nvrtc_version: &str) -> String {
        let mut parts: Vec<&[u8]> = vec![
            env!("CARGO_PKG_VERSION").as_bytes(),
            nvrtc_version.as_bytes(),
            arch.as_bytes(),
            self.source.name.as_bytes(),
            self.source.text.as_bytes(),
            headers_digest().as_bytes(),
        ];
        for o in &self.options {
            parts.push(o.as_bytes());
        }
        if let Some(define) = super::launch::programmatic_define() {
            parts.push(define.as_bytes()); // added by nvrtc::compile
        }
        disk_cache::cache_key(&parts)
    }
}

/// The headers' part of every cache key, hashed once a process: hashed into each key,
/// their 350 KB cost 0.85 ms a key on the development VM, and a module's first use in a
/// context computes one or two keys.
fn headers_digest() -> &'static str {
    static DIGEST: Lazy<String> = Lazy::new(|| {
        let parts: Vec<&[u8]> = HEADERS.iter().flat_map(|(name, text)| [name.as_bytes(), text.as_bytes()]).collect();
        disk_cache::cache_key(&parts)
    });
    &DIGEST
}

/// CUBINs compiled or read from disk in this process, shared by all contexts.
static CUBINS: Lazy<Mutex<HashMap<String, Arc<Vec<u8>>>>> = Lazy::new(|| Mutex::new(HashMap::new()));

fn nvrtc_version() -> Result<String> {
    static VERSION: OnceCell<String> = OnceCell::new();
    VERSION.get_or_try_init(nvrtc::version).cloned()
}

/// Looks NVRTC's version up (every cache key holds it) on a thread of its own, once a
/// process, so that a context's creation hides the library's loading: some 6-10 ms on
/// the development machine for its 110 MB, paid twice on the first look-up (cudarc
/// opens it to test that it is there, closes it, and opens it again to keep), which
/// the process's first call would otherwise wait for even when the disk cache holds
/// every CUBIN it needs. A look-up that fails here is tried again, and reported, where
/// a key is needed.
pub fn look_up_nvrtc_early() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new().name("gpuprims-nvrtc".into()).spawn(|| {
            let _ = nvrtc_version();
        });
    });
}

/// The CUBIN of `spec` for `arch`: from memory, else disk, else NVRTC.
pub fn cubin(spec: &ModuleSpec, arch: &str) -> Result<Arc<Vec<u8>>> {
    cubin_cached_in(spec, arch, disk_cache::cache_dir().as_deref())
}

/// `cubin` with the disk cache in `dir` (None: no disk cache).
pub fn cubin_cached_in(spec: &ModuleSpec, arch: &str, dir: Option<&Path>) -> Result<Arc<Vec<u8>>> {
    let key = spec.key(arch, &nvrtc_version()?);
    if let Some(c) = cached(spec, arch, &key, dir) {
        return Ok(c);
    }
    let started = std::time::Instant::now();
    let compiled = nvrtc::compile(spec.source.name, spec.source.text, arch, &spec.options)?;
    trace(spec, arch, "compiled by NVRTC", started);
    if let Some(d) = dir {
        disk_cache::store(d, &key, &compiled.cubin);
    }
    Ok(remember(key, compiled.cubin))
}

/// The CUBIN under `key` if this process has it or the disk cache in `dir` does.
fn cached(spec: &ModuleSpec, arch: &str, key: &str, dir: Option<&Path>) -> Option<Arc<Vec<u8>>> {
    if let Some(c) = CUBINS.lock().unwrap().get(key) {
        return Some(c.clone());
    }
    let started = std::time::Instant::now();
    let bytes = disk_cache::load(dir?, key)?;
    trace(spec, arch, "read from the disk cache", started);
    Some(remember(key.to_string(), bytes))
}

fn remember(key: String, bytes: Vec<u8>) -> Arc<Vec<u8>> {
    let bytes = Arc::new(bytes);
    CUBINS.lock().unwrap().insert(key, bytes.clone());
    bytes
}

/// The CUBIN a module's first use in a context loads, and the optimised compile to swap
/// in later where that CUBIN is the quick tier (tiers.rs): the optimised one when it is
/// at hand or its source compiles fast enough; else the quick tier, with the optimised
/// compile started beside it.
pub fn first_use_cubin(spec: &ModuleSpec, arch: &str) -> Result<(Arc<Vec<u8>>, Option<Upgrade>)> {
    if !tiers::quick_first(spec.source) {
        return Ok((cubin(spec, arch)?, None));
    }
    let quick = tiers::quick_spec(spec);
    if !tiers::upgrades() {
        return Ok((cubin_cached_in(&quick, arch, None)?, None));
    }
    let key = spec.key(arch, &nvrtc_version()?);
    if let Some(c) = cached(spec, arch, &key, disk_cache::cache_dir().as_deref()) {
        return Ok((c, None));
    }
    // The quick compile first, so that the optimised one's thread does not slow it
    // where cores are few.
    match cubin_cached_in(&quick, arch, None) {
        Ok(c) => Ok((c, Some(tiers::start_optimised(spec, arch, key)))),
        // An NVRTC without --Ofast-compile (older than 12.8): the optimised one, then.
        Err(_) => cubin(spec, arch).map(|c| (c, None)),
    }
}

/// With GPUPRIMS_TRACE_MODULES=1, a line on stderr for each module a process compiles,
/// reads from disk or loads, with its time: for finding where a first call's time goes.
fn trace(spec: &ModuleSpec, arch: &str, what: &str, started: std::time::Instant) {
    if tracing() {
        // The defines that say what the module is instantiated for (not its tuning).
        const WHAT: [&str; 7] =
            ["-DGP_KEY_", "-DGP_VALUE_BYTES", "-DGP_T=", "-DGP_OP=", "-DGP_SEGTOPK_PART", "-DGP_SMALL_ITEMS", "--Ofast-compile"];
        let defines: Vec<&str> =
            spec.options.iter().map(String::as_str).filter(|o| WHAT.iter().any(|w| o.starts_with(w))).collect();
        let ms = started.elapsed().as_secs_f64() * 1e3;
        eprintln!("gpuprims module: {} {} {arch}: {what} in {ms:.1} ms", spec.source.name, defines.join(" "));
    }
}

fn tracing() -> bool {
    static ON: Lazy<bool> = Lazy::new(|| std::env::var("GPUPRIMS_TRACE_MODULES").is_ok_and(|v| v == "1"));
    *ON
}

/// Whether the CUBIN of `spec` for `arch` is in this process's memory cache.
#[cfg(test)]
pub fn cached_in_memory(spec: &ModuleSpec, arch: &str) -> bool {
    let key = spec.key(arch, &nvrtc_version().unwrap());
    CUBINS.lock().unwrap().contains_key(&key)
}

struct LoadedModule {
    module: CUmodule,
    functions: HashMap<&'static str, CUfunction>,
    /// The optimised compile to swap in, where this is a quick module.
    upgrade: Option<Upgrade>,
    /// The call that loaded it (`begin_call`'s id on the loading thread).
    loaded_in: u64,
}

/// A module of one context: which source, and what it is instantiated for (a dtype,
/// or the widths it was built for: see `variant`). The tuning defines are fixed for
/// the life of the process, so they need no place in the key.
type ModuleKey = (&'static str, u32);

/// The variant key of a module instantiated for one element type.
pub fn variant(dtype: DType) -> u32 {
    dtype as u32
}

/// Calls begun in this process (`Loader::begin_call`), and the one this thread is in.
static CALLS: AtomicU64 = AtomicU64::new(0);
thread_local! {
    static CALL: Cell<u64> = const { Cell::new(0) };
}

/// The modules loaded into one CUDA context.
pub struct Loader {
    arch: String,
    modules: Mutex<HashMap<ModuleKey, LoadedModule>>,
    /// Modules whose first-use CUBIN is ready in memory, loaded or not (`is_prepared`).
    prepared: Mutex<HashSet<ModuleKey>>,
    /// Quick modules replaced by their optimised ones: kept loaded until the context
    /// goes, as launches from them may still be running.
    retired: Mutex<Vec<CUmodule>>,
    /// Blocks per SM of (function, block size, dynamic shared bytes), asked of the driver once.
    occupancy: Mutex<HashMap<(usize, u32, u32), u32>>,
    /// Dynamic shared memory each function has been allowed.
    shared_allowed: Mutex<HashMap<usize, u32>>,
}

// SAFETY: CUmodule / CUfunction are driver handles usable from any thread.
unsafe impl Send for Loader {}
unsafe impl Sync for Loader {}

impl Loader {
    pub fn new(arch: String) -> Loader {
        Loader {
            arch,
            modules: Mutex::new(HashMap::new()),
            prepared: Mutex::new(HashSet::new()),
            retired: Mutex::new(Vec::new()),
            occupancy: Mutex::new(HashMap::new()),
            shared_allowed: Mutex::new(HashMap::new()),
        }
    }

    /// The architecture this loader compiles for ("sm_90").
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The module of `source` instantiated as `variant`, compiled and loaded on first use.
    fn loaded<'m>(
        &self,
        modules: &'m mut HashMap<ModuleKey, LoadedModule>,
        source: Source,
        variant: u32,
        spec: impl FnOnce() -> ModuleSpec,
    ) -> Result<&'m mut LoadedModule> {
        Ok(match modules.entry((source.name, variant)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                // Fault points where a compile and a load can fail: a module's first use
                // in a context (it compiles on the process's first).
                let spec = spec();
                crate::fault::point(Point::Compile, || format!("compiling {} for {}", spec.source.name, self.arch))?;
                let (image, upgrade) = first_use_cubin(&spec, &self.arch)?;
                crate::fault::point(Point::Load, || format!("cuModuleLoadData ({})", spec.source.name))?;
                let started = std::time::Instant::now();
                // SAFETY: a CUBIN NVRTC produced for this architecture.
                let module =
                    unsafe { drv::module::load_data(image.as_ptr() as *const _) }.during("cuModuleLoadData")?;
                trace(&spec, &self.arch, "loaded into the context", started);
                let loaded_in = CALL.with(Cell::get);
                e.insert(LoadedModule { module, functions: HashMap::new(), upgrade, loaded_in })
            }
        })
    }

    /// Loads the module of `source` instantiated as `variant` unless it is loaded (a
    /// first call then finds it). The context must be current.
    pub fn load(&self, source: Source, variant: u32, spec: impl FnOnce() -> ModuleSpec) -> Result<()> {
        let mut modules = self.modules.lock().unwrap();
        self.loaded(&mut modules, source, variant, spec).map(|_| ())
    }

    /// Whether the module of `source` instantiated as `variant` is loaded already, or
    /// its CUBIN was made ready for this context (`mark_prepared`).
    pub fn is_prepared(&self, source: Source, variant: u32) -> bool {
        let key = (source.name, variant);
        self.modules.lock().unwrap().contains_key(&key) || self.prepared.lock().unwrap().contains(&key)
    }

    /// Notes that the CUBIN a first use of this module loads is in this process's
    /// memory (precompile::compile_unloaded made it).
    pub fn mark_prepared(&self, source: Source, variant: u32) {
        self.prepared.lock().unwrap().insert((source.name, variant));
    }

    /// Begins a call on this thread (each primitive's entry): it gets an id above every
    /// earlier call's, in any thread. A module loaded quick (tiers.rs) serves the call
    /// that loaded it, and calls begun before it; the first lookup of its kernels in a
    /// call begun after waits for the optimised module and swaps it in. (Per thread, so
    /// that another thread's call on a shared context cannot make a first call wait.)
    pub fn begin_call(&self) {
        CALL.with(|c| c.set(CALLS.fetch_add(1, Ordering::Relaxed) + 1));
    }

    /// Whether the module of `source` instantiated as `variant` is loaded quick, its
    /// optimised one not yet swapped in: a caller keeping its kernels across calls
    /// must look them up again (through `function`) until it is not.
    pub fn is_quick(&self, source: Source, variant: u32) -> bool {
        self.modules.lock().unwrap().get(&(source.name, variant)).is_some_and(|m| m.upgrade.is_some())
    }

    /// Swaps the optimised module in for a quick one, waiting for its compile. A compile
    /// or load that failed leaves the quick module (the same code, compiled for compile
    /// speed). The context must be current.
    fn swap_in_optimised(&self, loaded: &mut LoadedModule) {
        let Some(upgrade) = loaded.upgrade.take() else { return };
        let started = std::time::Instant::now();
        let Ok(image) = upgrade.wait() else { return };
        // SAFETY: a CUBIN NVRTC produced for this architecture; the context is current.
        let Ok(module) = (unsafe { drv::module::load_data(image.as_ptr() as *const _) }) else { return };
        self.retired.lock().unwrap().push(std::mem::replace(&mut loaded.module, module));
        loaded.functions.clear();
        if tracing() {
            eprintln!("gpuprims module: an optimised module swapped in after {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
        }
    }

    /// Swaps in the optimised module of every quick one loaded (gpuprims_context_precompile).
    pub fn upgrade_all(&self) {
        let mut modules = self.modules.lock().unwrap();
        for loaded in modules.values_mut() {
            self.swap_in_optimised(loaded);
        }
    }

    /// Kernel `kernel` of `source` instantiated as `variant`. On a hit this is two
    /// lookups on static keys; only the first use builds the spec (`spec()`),
    /// compiles and loads the module. The context must be current.
    pub fn function(
        &self,
        source: Source,
        variant: u32,
        kernel: &'static str,
        spec: impl FnOnce() -> ModuleSpec,
    ) -> Result<CUfunction> {
        let mut modules = self.modules.lock().unwrap();
        let loaded = self.loaded(&mut modules, source, variant, spec)?;
        if loaded.upgrade.is_some() && CALL.with(Cell::get) > loaded.loaded_in {
            self.swap_in_optimised(loaded);
        }
        if let Some(&f) = loaded.functions.get(kernel) {
            return Ok(f);
        }
        let cname = CString::new(kernel).map_err(|_| Error::Internal(format!("kernel name {kernel:?}")))?;
        // SAFETY: a loaded module.
        let f = unsafe { drv::module::get_function(loaded.module, cname) }
            .during(&format!("cuModuleGetFunction({kernel})"))?;
        loaded.functions.insert(kernel, f);
        Ok(f)
    }

    /// How many blocks of `block` threads of `f` (a function of this loader) one SM
    /// holds at once: the grid of a persistent kernel is this times the SM count.
    pub fn blocks_per_sm(&self, f: CUfunction, block: u32) -> Result<u32> {
        self.blocks_per_sm_with_shared(f, block, 0)
    }

    /// As `blocks_per_sm`, for blocks launched with `shared_bytes` of dynamic shared
    /// memory, which `f` is first allowed (`allow_dynamic_shared`): past 48 KiB the
    /// answer means nothing until it is.
    pub fn blocks_per_sm_with_shared(&self, f: CUfunction, block: u32, shared_bytes: u32) -> Result<u32> {
        self.allow_dynamic_shared(f, shared_bytes)?;
        let key = (f as usize, block, shared_bytes);
        if let Some(&n) = self.occupancy.lock().unwrap().get(&key) {
            return Ok(n);
        }
        let mut per_sm: i32 = 0;
        // SAFETY: a loaded function; an out-pointer.
        unsafe { cudarc::driver::sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, f, block as i32, shared_bytes as usize) }
            .during("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
        let n = per_sm.max(1) as u32;
        self.occupancy.lock().unwrap().insert(key, n);
        Ok(n)
    }

    /// Lets `f` (a function of this loader) launch with `bytes` of dynamic shared
    /// memory: past 48 KiB with its static shared memory a function must opt in, once
    /// (the driver call is not repeated on every launch). It opts in whatever the size,
    /// so no launch depends on how much static memory the compiler gave the function.
    pub fn allow_dynamic_shared(&self, f: CUfunction, bytes: u32) -> Result<()> {
        let mut allowed = self.shared_allowed.lock().unwrap();
        if bytes == 0 || allowed.get(&(f as usize)).is_some_and(|&b| b >= bytes) {
            return Ok(());
        }
        // SAFETY: a loaded function.
        unsafe {
            drv::function::set_function_attribute(
                f,
                cudarc::driver::sys::CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        }
        .during("cuFuncSetAttribute (dynamic shared memory)")?;
        allowed.insert(f as usize, bytes);
        Ok(())
    }

    /// Unloads every module; the context must be current.
    pub fn unload_all(&self) {
        self.occupancy.lock().unwrap().clear();
        self.shared_allowed.lock().unwrap().clear(); // a later module's function may reuse an address
        self.prepared.lock().unwrap().clear();
        let retired = std::mem::take(&mut *self.retired.lock().unwrap());
        let loaded = self.modules.lock().unwrap().drain().map(|(_, m)| m.module).collect::<Vec<_>>();
        for module in retired.into_iter().chain(loaded) {
            // SAFETY: loaded by us, no longer used.
            let _ = unsafe { drv::module::unload(module) };
        }
    }
}
