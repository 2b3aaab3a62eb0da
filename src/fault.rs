//! Failures made on purpose, for tests only: the N-th device allocation, module
//! compile, module load or kernel launch from the moment of arming fails as the real
//! one would, so a test can walk N over every such point of a call and check what a
//! failure leaves behind (SQLite's fault injection, in spirit).
//!
//! Armed by GPUPRIMS_FAULT (read at the first fault point of the process) or by
//! gpuprims_fault_inject; the spec is `kind:N[,kind:N...]` with kind one of alloc,
//! compile, load, launch and N >= 1. Once anything was armed (even "", which disarms),
//! every fault point counts itself, so a test can ask how many a call passed; before
//! that a fault point is one relaxed load of a flag (no shared counter on a launch's
//! path).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use once_cell::sync::Lazy;

use crate::error::{invalid, Error, Result};

/// The kinds of fault point, in the order of `COUNTS` and of gpuprims_fault_counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Device memory (host memory on the host backend): buffers and scratch.
    Alloc = 0,
    /// A kernel module's first use in a context, where it is compiled (by NVRTC, on
    /// the process's first use; later from memory or the disk cache).
    Compile = 1,
    /// A CUBIN loaded into a context (cuModuleLoadData).
    Load = 2,
    /// A kernel launch.
    Launch = 3,
}

const POINTS: [(Point, &str); 4] = [(Point::Alloc, "alloc"), (Point::Compile, "compile"), (Point::Load, "load"), (Point::Launch, "launch")];

/// Fault points passed since the last arming, per kind.
static PASSED: [AtomicU64; 4] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
/// The armed N per kind (0: not armed).
static ARMED: [AtomicU64; 4] = [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)];
/// Faults made since the last arming.
static INJECTED: AtomicU64 = AtomicU64::new(0);
/// Whether fault points count (set by the first arming).
static COUNTING: AtomicBool = AtomicBool::new(false);
/// Bytes of device memory (host memory on the host backend) the library holds now,
/// buffers and scratch: a test of failures checks that it goes back to 0.
static HELD: AtomicU64 = AtomicU64::new(0);

/// GPUPRIMS_FAULT, applied once, before the first fault point counts.
static FROM_ENV: Lazy<()> = Lazy::new(|| {
    if let Ok(spec) = std::env::var("GPUPRIMS_FAULT") {
        match parse(&spec) {
            Ok(wanted) => apply(wanted),
            Err(e) => eprintln!("gpuprims: GPUPRIMS_FAULT ignored: {e}"),
        }
    }
});

/// Parses `spec` and arms it, clearing every count; "" disarms.
pub fn arm(spec: &str) -> Result<()> {
    let wanted = parse(spec)?;
    Lazy::force(&FROM_ENV); // the environment's spec, if any, must not override this one later
    apply(wanted);
    Ok(())
}

/// Arms `wanted` (an N per kind, 0: none), clearing every count.
fn apply(wanted: [u64; 4]) {
    for (i, n) in wanted.iter().enumerate() {
        ARMED[i].store(*n, Ordering::Relaxed);
        PASSED[i].store(0, Ordering::Relaxed);
    }
    INJECTED.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
}

/// The armed N per kind that `spec` asks for (0: none).
fn parse(spec: &str) -> Result<[u64; 4]> {
    let mut wanted = [0u64; 4];
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (kind, n) = part
            .split_once(':')
            .ok_or_else(|| invalid(format!("fault {part:?}: expected kind:N (kind alloc, compile, load or launch)")))?;
        let point = POINTS
            .iter()
            .find(|(_, name)| *name == kind.trim())
            .ok_or_else(|| invalid(format!("fault {part:?}: unknown kind {kind:?} (alloc, compile, load or launch)")))?
            .0;
        let n: u64 = n.trim().parse().ok().filter(|&n| n >= 1).ok_or_else(|| invalid(format!("fault {part:?}: N must be an integer >= 1")))?;
        wanted[point as usize] = n;
    }
    Ok(wanted)
}

/// Fault points passed per kind (alloc, compile, load, launch) and faults made, since
/// the last arming, and the bytes held now.
pub fn counts() -> ([u64; 4], u64, u64) {
    (std::array::from_fn(|i| PASSED[i].load(Ordering::Relaxed)), INJECTED.load(Ordering::Relaxed), HELD.load(Ordering::Relaxed))
}

/// Counts `bytes` of memory allocated for buffers or scratch.
pub fn acquired(bytes: usize) {
    HELD.fetch_add(bytes as u64, Ordering::Relaxed);
}

/// Counts `bytes` of memory given back.
pub fn released(bytes: usize) {
    HELD.fetch_sub(bytes as u64, Ordering::Relaxed);
}

/// A fault point: fails, as the real operation `what` would, when it is the armed one.
pub fn point(kind: Point, what: impl FnOnce() -> String) -> Result<()> {
    Lazy::force(&FROM_ENV);
    if !COUNTING.load(Ordering::Relaxed) {
        return Ok(());
    }
    let i = kind as usize;
    let passed = PASSED[i].fetch_add(1, Ordering::Relaxed) + 1;
    if passed != ARMED[i].load(Ordering::Relaxed) {
        return Ok(());
    }
    INJECTED.fetch_add(1, Ordering::Relaxed);
    let name = POINTS[i].1;
    let msg = format!("{} (fault injected: {name}:{passed})", what());
    Err(match kind {
        Point::Alloc => Error::OutOfMemory(msg),
        Point::Compile => Error::Compile(msg),
        Point::Load | Point::Launch => Error::Driver(msg),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Parsing only: arming would make other tests of this process fail.
    #[test]
    fn specs_parse_and_bad_ones_are_refused() {
        for bad in ["alloc", "alloc:0", "alloc:x", "oops:3", "launch:-1", "alloc:1:2"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(parse("").unwrap(), [0; 4]);
        assert_eq!(parse(" alloc:2, launch:1 ,compile:7").unwrap(), [2, 7, 0, 1]);
    }
}
