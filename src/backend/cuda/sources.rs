//! Kernel sources embedded in the library: the shared building blocks (headers) and
//! one source per device algorithm. A module is a source compiled for one element
//! type with its tuning defines.

/// The headers every module may include, as `#include "common/…"`.
pub const HEADERS: &[(&str, &str)] = &[
    ("common/types.cuh", include_str!("../../../kernels/common/types.cuh")),
    ("common/ops.cuh", include_str!("../../../kernels/common/ops.cuh")),
    ("common/warp.cuh", include_str!("../../../kernels/common/warp.cuh")),
    ("common/block_reduce.cuh", include_str!("../../../kernels/common/block_reduce.cuh")),
    ("common/block_scan.cuh", include_str!("../../../kernels/common/block_scan.cuh")),
    ("common/tile_io.cuh", include_str!("../../../kernels/common/tile_io.cuh")),
    ("common/key_row.cuh", include_str!("../../../kernels/common/key_row.cuh")),
    ("common/async_copy.cuh", include_str!("../../../kernels/common/async_copy.cuh")),
    ("common/tagged.cuh", include_str!("../../../kernels/common/tagged.cuh")),
    ("common/lookback.cuh", include_str!("../../../kernels/common/lookback.cuh")),
    ("common/radix_key.cuh", include_str!("../../../kernels/common/radix_key.cuh")),
    ("common/digit_histogram.cuh", include_str!("../../../kernels/common/digit_histogram.cuh")),
    ("common/ordered_read.cuh", include_str!("../../../kernels/common/ordered_read.cuh")),
    ("common/input_order.cuh", include_str!("../../../kernels/common/input_order.cuh")),
    ("common/ordered_screen.cuh", include_str!("../../../kernels/common/ordered_screen.cuh")),
    ("common/closed_band.cuh", include_str!("../../../kernels/common/closed_band.cuh")),
    ("common/warp_slots.cuh", include_str!("../../../kernels/common/warp_slots.cuh")),
    ("common/block_radix_rank.cuh", include_str!("../../../kernels/common/block_radix_rank.cuh")),
    ("common/digit_lookback.cuh", include_str!("../../../kernels/common/digit_lookback.cuh")),
    ("common/radix_bucket.cuh", include_str!("../../../kernels/common/radix_bucket.cuh")),
    ("common/block_digit_bucket.cuh", include_str!("../../../kernels/common/block_digit_bucket.cuh")),
    ("common/block_radix_select.cuh", include_str!("../../../kernels/common/block_radix_select.cuh")),
    ("common/warp_radix_select.cuh", include_str!("../../../kernels/common/warp_radix_select.cuh")),
    ("common/warp_bitwise_select.cuh", include_str!("../../../kernels/common/warp_bitwise_select.cuh")),
    ("common/ordered_compact.cuh", include_str!("../../../kernels/common/ordered_compact.cuh")),
    ("common/block_radix_sort.cuh", include_str!("../../../kernels/common/block_radix_sort.cuh")),
    ("common/last_to_arrive.cuh", include_str!("../../../kernels/common/last_to_arrive.cuh")),
    ("common/grid_barrier.cuh", include_str!("../../../kernels/common/grid_barrier.cuh")),
    ("common/grid_dependency.cuh", include_str!("../../../kernels/common/grid_dependency.cuh")),
    ("common/sort_types.cuh", include_str!("../../../kernels/common/sort_types.cuh")),
    ("common/stable_rank.cuh", include_str!("../../../kernels/common/stable_rank.cuh")),
    ("select_state.cuh", include_str!("../../../kernels/select_state.cuh")),
    ("select_band.cuh", include_str!("../../../kernels/select_band.cuh")),
    ("quicksort_state.cuh", include_str!("../../../kernels/quicksort_state.cuh")),
    ("quicksort_block_sort.cuh", include_str!("../../../kernels/quicksort_block_sort.cuh")),
    ("radix_sort_control.cuh", include_str!("../../../kernels/radix_sort_control.cuh")),
    ("segmented_select_rows.cuh", include_str!("../../../kernels/segmented_select_rows.cuh")),
    ("segmented_topk_block.cuh", include_str!("../../../kernels/segmented_topk_block.cuh")),
    ("segmented_topk_warp.cuh", include_str!("../../../kernels/segmented_topk_warp.cuh")),
];

/// One device algorithm's source file.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    pub name: &'static str,
    pub text: &'static str,
}

pub const REDUCE: Source = Source { name: "reduce.cu", text: include_str!("../../../kernels/reduce.cu") };
pub const SCAN: Source = Source { name: "scan.cu", text: include_str!("../../../kernels/scan.cu") };
pub const RADIX_SORT: Source = Source { name: "radix_sort.cu", text: include_str!("../../../kernels/radix_sort.cu") };
pub const RADIX_HISTOGRAM: Source =
    Source { name: "radix_histogram.cu", text: include_str!("../../../kernels/radix_histogram.cu") };
pub const COUNTING_SORT: Source =
    Source { name: "counting_sort.cu", text: include_str!("../../../kernels/counting_sort.cu") };
pub const QUICKSORT: Source = Source { name: "quicksort.cu", text: include_str!("../../../kernels/quicksort.cu") };
pub const QUICKSORT_SPLITTERS: Source =
    Source { name: "quicksort_splitters.cu", text: include_str!("../../../kernels/quicksort_splitters.cu") };
pub const QUICKSORT_SMALL: Source =
    Source { name: "quicksort_small.cu", text: include_str!("../../../kernels/quicksort_small.cu") };
pub const QUICKSORT_LARGE: Source =
    Source { name: "quicksort_large.cu", text: include_str!("../../../kernels/quicksort_large.cu") };
pub const SELECT: Source = Source { name: "select.cu", text: include_str!("../../../kernels/select.cu") };
pub const TOPK: Source = Source { name: "topk.cu", text: include_str!("../../../kernels/topk.cu") };
pub const SEGMENTED_SELECT: Source =
    Source { name: "segmented_select.cu", text: include_str!("../../../kernels/segmented_select.cu") };
pub const SEGMENTED_SELECT_LONG: Source =
    Source { name: "segmented_select_long.cu", text: include_str!("../../../kernels/segmented_select_long.cu") };
pub const SEGMENTED_TOPK: Source =
    Source { name: "segmented_topk.cu", text: include_str!("../../../kernels/segmented_topk.cu") };
pub const MULTI_RANK: Source = Source { name: "multi_rank.cu", text: include_str!("../../../kernels/multi_rank.cu") };
pub const MULTI_MERGE: Source = Source { name: "multi_merge.cu", text: include_str!("../../../kernels/multi_merge.cu") };
pub const LIFE: Source = Source { name: "life.cu", text: include_str!("../../../kernels/life.cu") };
pub const LIFE_POPULATION: Source =
    Source { name: "life_population.cu", text: include_str!("../../../kernels/life_population.cu") };
