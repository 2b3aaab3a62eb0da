//! The registry of every kernel module the library has: what
//! gpuprims_context_precompile compiles and what the NVRTC test checks. Each planner
//! lists its own modules (its `modules()`, next to the `module()` it launches from);
//! a new primitive adds its line to `all()`.

use super::loader::ModuleSpec;
use super::sources::Source;
use super::{counting_sort, life, multi_merge, multi_rank, quicksort, radix_sort, reduce, scan, segmented_select, segmented_topk, select};

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
    all.extend(counting_sort::modules());
    all.extend(quicksort::modules());
    all.extend(select::modules());
    all.extend(segmented_select::modules());
    all.extend(segmented_topk::modules());
    all.extend(life::modules());
    all.extend(multi_rank::modules());
    all.extend(multi_merge::modules());
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Two modules with one loader key would load one in place of the other.
    #[test]
    fn loader_keys_are_distinct() {
        let all = all();
        let keys: HashSet<(&str, u32)> = all.iter().map(|m| (m.source.name, m.variant)).collect();
        assert_eq!(keys.len(), all.len(), "two modules share a loader key");
    }

    /// Every kernel source in kernels/ has its modules here, so precompile misses none:
    /// a new kernels/<primitive>.cu fails this test until its planner's modules() is
    /// added to all().
    #[test]
    fn every_kernel_source_is_registered() {
        let all = all();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        for entry in std::fs::read_dir(&dir).expect("kernels/ is readable") {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.ends_with(".cu") {
                assert!(all.iter().any(|m| m.source.name == name), "kernels/{name} has no module in modules::all()");
            }
        }
        let count = |source: &str| all.iter().filter(|m| m.source.name == source).count();
        // One per dtype (the scan: per dtype and op); radix passes: 4 key widths x 5
        // value widths (none, 1, 2, 4, 8 bytes), and float keys of 2, 4 and 8 bytes with
        // each value width, and the packing kernel's modules of 4-byte keys (integer
        // and float) with 4-byte values; the radix histogram by key width alone. Then the
        // small-tile classes (radix_sort::small_tiles), integer and float keys each: two
        // of 4-byte keys alone, two of 8-byte keys alone, one of 4-byte keys with 4-byte
        // values (its pass and packing modules), one of 4-byte keys with 8-byte values.
        assert_eq!(count("reduce.cu"), 12);
        assert_eq!(count("scan.cu"), 12 * 3);
        assert_eq!(count("radix_sort.cu"), 4 * 5 + 3 * 5 + 2 + 2 * (2 + 2 + 2 + 1));
        assert_eq!(count("radix_histogram.cu"), 4 + 3);
        // The counting sort of 1- and 2-byte keys alone (2-byte: integer and float).
        assert_eq!(count("counting_sort.cu"), 3);
        // The quicksort: the radix sort's set, and wide instances of 4-byte keys
        // without values (integer and float) for long inputs and of 8-byte keys without
        // values (integer and float) for short ones; the 8-byte ones share the narrow
        // splitters' module (Instance::for_source).
        for source in ["quicksort.cu", "quicksort_small.cu", "quicksort_large.cu"] {
            assert_eq!(count(source), 4 * 5 + 3 * 5 + 2 + 2, "{source}");
        }
        assert_eq!(count("quicksort_splitters.cu"), 4 * 5 + 3 * 5 + 2);
        // Selection: 4 key widths, and float keys of 2, 4 and 8 bytes; select.cu in three
        // parts compiled side by side, and a fourth (select_band_warps) for 4-byte keys.
        assert_eq!(count("select.cu"), 7 * 3 + 2);
        assert_eq!(count("topk.cu"), 7);
        assert_eq!(count("segmented_select.cu"), 7);
        assert_eq!(count("segmented_select_long.cu"), 7);
        // The segmented top-k: the same 7, each in three parts compiled side by side.
        assert_eq!(count("segmented_topk.cu"), 7 * 3);
    }
}
