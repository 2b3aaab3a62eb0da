//! Overrides of the tuning constants for experiments on the GPU machine:
//! GPUPRIMS_TUNE="reduce.vecs=8,scan.block=128" (read once per process). The planners'
//! own defaults are the tuned values; this only lets one run compare variants.

use std::collections::HashMap;

use once_cell::sync::Lazy;

static OVERRIDES: Lazy<HashMap<String, u32>> = Lazy::new(|| {
    std::env::var("GPUPRIMS_TUNE")
        .unwrap_or_default()
        .split(',')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect()
});

/// The value of knob `name` ("scan.items"), or `default`.
pub fn knob(name: &str, default: u32) -> u32 {
    OVERRIDES.get(name).copied().unwrap_or(default)
}
