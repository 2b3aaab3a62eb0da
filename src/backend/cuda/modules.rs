//! The registry of every kernel module the library has: what
//! gpuprims_context_precompile compiles and what the NVRTC test checks. Each planner
//! lists its own modules (its `modules()`, next to the `module()` it launches from);
//! a new primitive adds its line to `all()`.

use super::loader::ModuleSpec;
use super::sources::Source;
use super::{radix_sort, reduce, scan};

/// One module as a planner instantiates it.
pub struct Module {
    pub source: Source,
    /// The loader's key of this instantiation (see `Loader::function`).
    pub variant: u32,
    pub spec: ModuleSpec,
    /// What it is instantiated for, for messages ("f32", "keys 4B float values 0B").
    pub label: String,
}

/// Every module of every primitive.
pub fn all() -> Vec<Module> {
    let mut all = Vec::new();
    all.extend(reduce::modules());
    all.extend(scan::modules());
    all.extend(radix_sort::modules());
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Two modules with one loader key would load one in place of the other.
    #[test]
    fn loader_keys_are_distinct_and_every_planner_is_listed() {
        let all = all();
        let keys: HashSet<(&str, u32)> = all.iter().map(|m| (m.source.name, m.variant)).collect();
        assert_eq!(keys.len(), all.len(), "two modules share a loader key");
        for source in ["reduce.cu", "scan.cu", "radix_sort.cu"] {
            assert!(all.iter().any(|m| m.source.name == source), "no module of {source}");
        }
        // 10 dtypes for reduce and scan; radix: 4 key widths x 5 value widths, plus
        // float keys of 4 and 8 bytes.
        assert_eq!(all.len(), 10 + 10 + 4 * 5 + 2 * 5);
    }
}
