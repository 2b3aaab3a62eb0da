//! gpuprims_context_precompile: every module of the registry (modules.rs) compiled by
//! NVRTC on a few threads at once (NVRTC is thread-safe and each compile is one
//! CPU-bound thread), then loaded into the context. Compiling goes through the loader's
//! caches, so the CUBINs land in memory and on disk as a first call would leave them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::path::Path;
use std::sync::Mutex;

use super::context::CudaShared;
use super::disk_cache;
use super::loader::{self, ModuleSpec};
use super::modules::{self, Module};
use super::sources::Source;
use super::tuning::knob;
use crate::error::{Error, Result};

/// Compile threads: one per core, at most 8 (each NVRTC compile holds a few hundred MB);
/// GPUPRIMS_TUNE="precompile.threads=1" compiles one module after another, to time the
/// sequential sum against.
fn threads(modules: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(4, |n| n.get());
    let default = cores.min(8) as u32;
    (knob("precompile.threads", default) as usize).clamp(1, modules.max(1))
}

/// Compiles (or finds in the caches: memory, then the disk cache in `dir`) every module
/// in `modules` for `arch`, on `threads` threads. All are tried; the first failure (in
/// registry order) is returned.
pub fn compile_all(modules: &[Module], arch: &str, threads: usize, dir: Option<&Path>) -> Result<()> {
    compile_each(modules, threads, |spec| loader::cubin_cached_in(spec, arch, dir).map(drop))
}

/// `compile` of every module's spec, on `threads` threads; the first failure in
/// `modules` order is returned.
fn compile_each(modules: &[Module], threads: usize, compile: impl Fn(&ModuleSpec) -> Result<()> + Sync) -> Result<()> {
    let next = AtomicUsize::new(0);
    let failures: Mutex<Vec<(usize, Error)>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(m) = modules.get(i) else { break };
                if let Err(e) = compile(&m.spec) {
                    failures.lock().unwrap_or_else(|p| p.into_inner()).push((i, e));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    failures.sort_by_key(|(i, _)| *i);
    match failures.into_iter().next() {
        None => Ok(()),
        Some((i, e)) => {
            let m = &modules[i];
            Err(Error::Compile(format!("{} ({}): {e}", m.source.name, m.label)))
        }
    }
}

/// A module a call needs: its loader key and how to build its spec (only built when the
/// module is missing, so a warm call formats no options).
pub type Wanted<'a> = (Source, u32, &'a dyn Fn() -> ModuleSpec);

/// Compiles those of `wanted` the context has not loaded yet side by side (into the
/// caches; the first call loads them): for a call that needs several modules at once,
/// so its first use costs about one compile, not their sum. Warm, this is a lookup each.
pub fn compile_unloaded(shared: &CudaShared, wanted: &[Wanted]) -> Result<()> {
    let loader = &shared.loader;
    let missing: Vec<&Wanted> = wanted.iter().filter(|(source, variant, _)| !loader.is_prepared(*source, *variant)).collect();
    if missing.len() < 2 {
        return Ok(()); // one compile or none: the first call does it
    }
    let modules: Vec<Module> =
        missing.iter().map(|&&(source, variant, spec)| Module { source, variant, spec: spec(), label: String::new() }).collect();
    // As the first use would: the quick tier of a slow source (tiers.rs).
    let arch = loader.arch();
    compile_each(&modules, modules.len(), |spec| loader::first_use_cubin(spec, arch).map(drop))?;
    // A module a call wants but does not run (a segmented top-k part its rows do not
    // need) is not compiled again on every call: each look-up of its CUBIN hashes the
    // sources (0.85 ms on the development VM).
    for m in &modules {
        loader.mark_prepared(m.source, m.variant);
    }
    Ok(())
}

/// Compiles every module for the context's device (optimised: no quick tier), then
/// loads each into the context.
pub fn precompile(shared: &CudaShared) -> Result<()> {
    let modules = modules::all();
    compile_all(&modules, shared.loader.arch(), threads(modules.len()), disk_cache::cache_dir().as_deref())?;
    // Loading is quick next to compiling; the lock makes the context current.
    let _state = shared.lock()?;
    for m in &modules {
        shared.loader.load(m.source, m.variant, || m.spec.clone())?;
    }
    shared.loader.upgrade_all(); // quick modules an earlier first call loaded
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::nvrtc;

    /// NVRTC needs no GPU: the pool compiles on several threads and every module lands
    /// in the process's CUBIN cache and in the disk cache (so a later first call, in
    /// this process or another, compiles nothing). One module of each source (that
    /// every module compiles is every_kernel_module_compiles_cleanly's check: all of
    /// them again here cost some 200 s of CPU on a 2-core machine). Skips without NVRTC unless
    /// GPUPRIMS_REQUIRE_NVRTC=1.
    #[test]
    fn compile_all_fills_the_memory_and_disk_caches() {
        if !nvrtc::available_for_tests() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("gpuprims-precompile-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // An architecture no other test compiles for, so nothing is cached before.
        let arch = "sm_86";
        let mut modules = modules::all();
        let mut seen = std::collections::HashSet::new();
        modules.retain(|m| seen.insert(m.source.name));
        assert!(modules.len() > 4, "a few sources, so that the pool's threads share them");
        compile_all(&modules, arch, 4, Some(&dir)).expect("every module compiles");
        for m in &modules {
            assert!(loader::cached_in_memory(&m.spec, arch), "{} {} not cached", m.source.name, m.label);
        }
        let on_disk = std::fs::read_dir(&dir)
            .expect("the disk cache exists")
            .filter(|e| e.as_ref().is_ok_and(|e| e.path().extension().is_some_and(|x| x == "cubin")))
            .count();
        assert_eq!(on_disk, modules.len(), "CUBINs in the disk cache");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A tool for studying kernels without a GPU, not a check: with
    /// GPUPRIMS_DUMP_CUBINS=<dir>, writes each module whose "source label" contains
    /// GPUPRIMS_DUMP_FILTER (all when unset) as <dir>/<source>_<label>.cubin for sm_90,
    /// with the module options GPUPRIMS_TUNE gives; `scripts/sass.sh` disassembles them.
    #[test]
    #[ignore]
    fn dump_cubins() {
        let Some(dir) = std::env::var_os("GPUPRIMS_DUMP_CUBINS") else { return };
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("the dump directory");
        let filter = std::env::var("GPUPRIMS_DUMP_FILTER").unwrap_or_default();
        for m in modules::all() {
            let name = format!("{} {}", m.source.name, m.label);
            if !name.contains(&filter) {
                continue;
            }
            let compiled = nvrtc::compile(m.source.name, m.source.text, "sm_90", &m.spec.options).expect("compiles");
            let file: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' }).collect();
            std::fs::write(dir.join(format!("{file}.cubin")), &compiled.cubin).expect("written");
        }
    }
}
