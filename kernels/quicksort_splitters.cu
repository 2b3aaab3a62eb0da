// The quicksort's splitters (see kernels/quicksort.cu): one block a segment samples and
// sorts 4096 keys and writes the segment's splitters, or its shift when it is split by
// value. A module of its own, so its sort compiles beside the partition's kernels on
// the first call.
#include "quicksort_state.cuh"
#include "common/block_scan.cuh"

// ----------------------------------------------------------------------------------
// Splitters: one block of SAMPLE_BLOCK threads per segment
