//! Two tiers for the modules that compile slowly: a module's first use in a process
//! compiles it for compile speed (NVRTC's `--Ofast-compile=mid`), so that a cold first
//! call stays short, while a thread compiles the optimised module beside it (into the
//! memory and disk caches, as any compile). The first call after the one that loaded
//! the quick module waits for that compile and swaps the optimised module in
//! (Loader::begin_call, Loader::function), so only a process's first call of such a
//! primitive runs the quick code, and a later process finds the optimised one on disk.
//!
//! Which sources: those with a module over about 0.6 s on the development VM (one
//! module, one thread, 2026-11-28, s, default -> mid): quicksort_large.cu u32 1.60 ->
//! 0.29, quicksort.cu 0.69 -> 0.34, quicksort_small.cu 0.49 -> 0.19,
//! quicksort_splitters.cu 0.32 -> 0.20 (compiled beside the others on the same first
//! call); select.cu f32 about 2.3 -> 0.9 (in three parts since: 0.97, 0.54, 0.66 optimised,
//! compiled side by side); radix_sort.cu f32 keys 0.81 -> 0.35, f32/u32
//! pairs with their packing module 1.87 -> 0.61; counting_sort.cu 2-byte keys 1.30 ->
//! 0.30; segmented_select_long.cu 0.76 -> 0.32; segmented_topk.cu parts 1 and 2 0.93 ->
//! 0.73 and 1.56 -> 0.44; topk.cu goes with select.cu. The GPU hosts compile up to 1.7x
//! slower than the VM when several compiles run at once. Below the line and left with
//! one tier: reduce 0.59, scan 0.62, the radix histogram 0.53, segmented_select.cu 0.56,
//! multi_rank.cu 0.59, multi_merge.cu 0.39, each life.cu module about 0.45.
//!
//! Knobs (GPUPRIMS_TUNE): `compile.quick_first=0` compiles the optimised module at once
//! (one tier); `compile.upgrade=0` keeps the quick modules for good (to test their code).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use once_cell::sync::{Lazy, OnceCell};

use super::disk_cache;
use super::loader::{self, ModuleSpec};
use super::sources::{self, Source};
use super::tuning::knob;

/// The sources whose optimised compile would take a cold first call toward a second or
/// past it (the figures above).
const SLOW_SOURCES: [Source; 10] = [
    sources::QUICKSORT,
    sources::QUICKSORT_SPLITTERS,
    sources::QUICKSORT_SMALL,
    sources::QUICKSORT_LARGE,
    sources::SELECT,
    sources::TOPK,
    sources::RADIX_SORT,
    sources::COUNTING_SORT,
    sources::SEGMENTED_SELECT_LONG,
    sources::SEGMENTED_TOPK,
];

/// Whether a first use of `source` takes the quick tier.
pub fn quick_first(source: Source) -> bool {
    knob("compile.quick_first", 1) != 0 && SLOW_SOURCES.iter().any(|s| s.name == source.name)
}

/// Whether quick modules are replaced by the optimised ones (always, but in tests of the
/// quick code).
pub fn upgrades() -> bool {
    knob("compile.upgrade", 1) != 0
}

/// The quick tier of `spec`: the same source and defines, compiled for compile speed.
/// Its options differ, so its cache key does too.
pub fn quick_spec(spec: &ModuleSpec) -> ModuleSpec {
    let mut quick = spec.clone();
    quick.options.push("--Ofast-compile=mid".to_string());
    quick
}

/// What a background compile ended with: the optimised CUBIN, or why there is none
/// (then the quick module stays).
pub type Outcome = std::result::Result<Arc<Vec<u8>>, String>;

/// An optimised compile under way (or done), shared by every context that loaded the
/// module's quick tier.
#[derive(Clone)]
pub struct Upgrade(Arc<OnceCell<Outcome>>);

impl Upgrade {
    /// Blocks until the compile has ended.
    pub fn wait(&self) -> &Outcome {
        self.0.wait()
    }
}

/// Compiles started in this process, by cache key (each module compiles once however
/// many contexts wait for it), and their threads (joined at exit: see `join_at_exit`).
static STARTED: Lazy<Mutex<HashMap<String, Upgrade>>> = Lazy::new(|| Mutex::new(HashMap::new()));
static THREADS: Lazy<Mutex<Vec<JoinHandle<()>>>> = Lazy::new(|| Mutex::new(Vec::new()));

/// The optimised compile of `spec` for `arch`, started on a thread of its own unless it
/// was already; `key` is spec.key for arch.
pub fn start_optimised(spec: &ModuleSpec, arch: &str, key: String) -> Upgrade {
    let mut started = STARTED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(u) = started.get(&key) {
        return u.clone();
    }
    let upgrade = Upgrade(Arc::new(OnceCell::new()));
    started.insert(key, upgrade.clone());
    let (spec, arch, cell) = (spec.clone(), arch.to_string(), upgrade.0.clone());
    let body = move || {
        // Whatever happens, the cell is set: a call waits on it.
        let compile = || loader::cubin_cached_in(&spec, &arch, disk_cache::cache_dir().as_deref()).map_err(|e| e.to_string());
        let outcome = std::panic::catch_unwind(compile).unwrap_or_else(|_| Err("the optimised compile panicked".to_string()));
        let _ = cell.set(outcome);
    };
    match std::thread::Builder::new().name("gpuprims-optimise".into()).spawn(body) {
        Ok(handle) => {
            join_at_exit();
            let mut threads = THREADS.lock().unwrap_or_else(|p| p.into_inner());
            threads.retain(|h| !h.is_finished()); // (a finished thread's handle is dropped: it detaches)
            threads.push(handle);
        }
        Err(e) => {
            let _ = upgrade.0.set(Err(format!("no thread for the optimised compile: {e}")));
        }
    }
    upgrade
}

/// A compile still running when the process exits would be inside NVRTC while its
/// static state is torn down: the exit waits for them (registered once, on the first).
/// A child of fork() has none of its parent's threads: it joins nothing.
fn join_at_exit() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    static PARENT: once_cell::sync::OnceCell<u32> = once_cell::sync::OnceCell::new();
    extern "C" fn join_all() {
        if PARENT.get() != Some(&std::process::id()) {
            return; // (and not a lock a thread of the parent may have held)
        }
        let handles: Vec<JoinHandle<()>> = std::mem::take(&mut *THREADS.lock().unwrap_or_else(|p| p.into_inner()));
        for h in handles {
            let _ = h.join();
        }
    }
    REGISTERED.call_once(|| {
        let _ = PARENT.set(std::process::id());
        // SAFETY: registers a function that takes no arguments and does not unwind
        // (join's error, a panicked thread, is dropped).
        unsafe { libc::atexit(join_all) };
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cuda::nvrtc;

    #[test]
    fn only_the_slow_sources_take_the_quick_tier() {
        assert!(quick_first(sources::QUICKSORT_LARGE));
        assert!(!quick_first(sources::REDUCE));
        let spec = ModuleSpec { source: sources::QUICKSORT_SMALL, options: vec!["-DX=1".into()] };
        let quick = quick_spec(&spec);
        assert_eq!(quick.options[0], "-DX=1");
        assert_ne!(quick.key("sm_90", "v"), spec.key("sm_90", "v"), "the tiers share no cache entry");
    }

    /// The optimised compile runs once however often it is asked for, and lands in the
    /// memory cache (NVRTC needs no GPU; skipped without it).
    #[test]
    fn an_optimised_compile_starts_once_and_fills_the_cache() {
        if !nvrtc::available_for_tests() {
            return;
        }
        let m = super::super::quicksort::modules().into_iter().find(|m| m.source.name == sources::QUICKSORT_SMALL.name).unwrap();
        let arch = "sm_89"; // compiled by no other test
        let key = m.spec.key(arch, &nvrtc::version().unwrap());
        let a = start_optimised(&m.spec, arch, key.clone());
        let b = start_optimised(&m.spec, arch, key);
        assert!(Arc::ptr_eq(&a.0, &b.0), "one compile");
        let cubin = a.wait().as_ref().expect("compiles").clone();
        assert!(!cubin.is_empty());
        assert!(loader::cached_in_memory(&m.spec, arch));
    }
}
