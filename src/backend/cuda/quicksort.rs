//! Planning and launching the quicksort (kernels/quicksort.cu): sample sort, level by
//! level. Each level issues the same few launches for all of its segments (splitters,
//! count, scan of the counts, scatter, children, whose last block writes the level's
//! counts to the pinned result slot), then the small and large sorts and the copies
//! home on grids sized for the most there can be (each block reads the count on the
//! device); the host waits for the children alone, while those run, to size the next
//! level. The
//! large sorts run on the context's side stream, beside the small ones. A short input
//! is one large sort (of one block, or two for a pair of halves past one tile).

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUfunction, CUstream};

use super::context::{round_up, CudaShared, RESULT_SLOT_BYTES};
use super::driver::DriverContext;
use super::launch::{self as launching, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::modules::Module;
use super::radix_sort::{all_variants, key_order, variant};
use super::scan::{self, scan_locked};
use super::precompile;
use super::sources::{self, Source};
use super::tuning::knob;
use crate::dtype::{DType, Op, Order, ScanMode};
use crate::error::{internal, Result};

/// Knob quicksort.pdl: whether the quicksort's own launches are programmatic when
/// launch.pdl is on (launch.rs; its scans follow launch.pdl alone).
static PROGRAMMATIC: once_cell::sync::Lazy<bool> =
    once_cell::sync::Lazy::new(|| launching::programmatic() && knob("quicksort.pdl", 1) != 0);

/// The most keys the levels count in 32 bits (the limit the quicksort was tested to).
const MAX_LEVEL_KEYS: usize = u32::MAX as usize - 1;

unsafe fn launch(f: CUfunction, grid: u64, block: u32, stream: CUstream, args: &[Arg]) -> Result<()> {
    launching::launch_with_shared_as(*PROGRAMMATIC, f, grid, block, 0, stream, args)
}

unsafe fn launch_with_shared(f: CUfunction, grid: u64, block: u32, shared_bytes: u32, stream: CUstream, args: &[Arg]) -> Result<()> {
    launching::launch_with_shared_as(*PROGRAMMATIC, f, grid, block, shared_bytes, stream, args)
}

/// Buckets a segment splits into per level (kernels: BUCKETS).
const BUCKETS: usize = 256;
/// Cells of a segment's bucket look-up table, 2 bytes each (kernels: CELLS).
const CELLS: usize = 2048;
/// Bytes of a kernels' Segment, Span and LevelCounts.
const SEGMENT_BYTES: usize = 48;
const SPAN_BYTES: usize = 32;
const LEVEL_BYTES: usize = 32;
const _: () = assert!(LEVEL_BYTES <= RESULT_SLOT_BYTES, "a level's counts fit the result slot");
/// Byte offsets of LevelCounts' small, large and copies counts.
const SMALL_FIELD: u64 = 8;
const LARGE_FIELD: u64 = 12;
const COPIES_FIELD: u64 = 16;
/// Keys per block of a copy home.
const COPY_CHUNK: usize = 1 << 16;
const CHILDREN_BLOCK: u32 = BUCKETS as u32;
const COPY_BLOCK: u32 = 256;

/// Tuning: the partition's block and keys per thread, the small and large sorts'
/// blocks and keys per thread, and the keys a bucket is aimed at.
struct Policy {
    block: u32,
    items: u32,
    small_block: u32,
    large_block: u32,
    small_items: u32,
    bucket_target: u32,
    /// The block sorts' ranking (common/block_radix_rank.cuh: RANK_GROUP) and the
    /// small sorts' blocks an SM.
    sort_rank_group: u32,
    small_min_blocks: u32,
    /// The splitters' block, and the sampled keys a thread of it (kernels:
    /// SAMPLE_BLOCK x SAMPLE_ITEMS keys).
    sample_block: u32,
    sample_items: u32,
}

/// What a quicksort module is instantiated for: the key and value widths, float keys or
/// not, whether the input is long enough for the wide block sorts, and (the
/// splitters' module only) whether it is short enough for the fine sample.
#[derive(Clone, Copy)]
struct Instance {
    key_bytes: usize,
    value_bytes: usize,
    float_keys: bool,
    wide: bool,
    fine_sample: bool,
}

impl Instance {
    fn new(key_bytes: usize, value_bytes: usize, float_keys: bool, len: usize) -> Instance {
        // Measured on the H100 (BENCHMARKS.md): past about 2^22 keys, 4-byte keys
        // without values sort faster in 20 keys a thread with buckets aimed at 4,096
        // keys (fuller small sorts, fewer large ones: 2^28 1.50x -> 1.58x merge sort,
        // 2^24 1.19x -> 1.21x); shorter inputs lose with them (2^20 1.03x -> 0.91x).
        let wide = key_bytes == 4 && value_bytes == 0 && len > knob("quicksort.wide_from", 1 << 22) as usize;
        // Measured on the H100 (BENCHMARKS.md, 2026-11-23): at 2^20 keys the 4,096-key
        // sample leaves some bucket past a large sort's tile in about one input in
        // seven, which then costs a pair of blocks and a merge (u32 1.26x merge sort,
        // but 1.00x on such an input); 8,192 sampled keys (512 x 16; 1024 x 8 was
        // slower) make that rare, for about 10 µs more of sample sort (1.12-1.16x on
        // both kinds of input). From 2^21 on, buckets past a tile are the rule and
        // the cost shows (2^21 0.78x -> 0.70x, 2^24 1.34x -> 1.29x).
        // (ctests/test_quicksort.c builds inputs against the sample's positions: keep
        // its FINE_SAMPLE_UPTO the same.)
        let fine_sample = len <= fine_sample_upto();
        Instance { key_bytes, value_bytes, float_keys, wide, fine_sample }
    }

    /// The loader's variant of `source`'s module: the radix sort's for the widths, the
    /// wide bit, and for the splitters the fine-sample bit.
    fn variant(&self, source: Source) -> u32 {
        let v = variant(self.key_bytes, self.value_bytes, self.float_keys) * 2 + self.wide as u32;
        if samples(source) { v * 2 + self.fine_sample as u32 } else { v }
    }
}

fn policy(inst: Instance) -> Policy {
    // The partition stages a tile of keys, then of values, in 48 KiB of static shared
    // memory with room to spare.
    let widest = inst.key_bytes.max(inst.value_bytes);
    let items = if widest <= 4 { 16 } else { 8 };
    // The wide instances' block sorts rank one column at a time (fewer registers) at
    // four blocks an SM: 2% faster at 2^24 on the H100 (BENCHMARKS.md).
    let (small_items, bucket_target, sort_rank_group, small_min_blocks) =
        if inst.wide { (20, 4096, 0, 4) } else { (16, 3072, 4, 3) };
    Policy {
        block: knob("quicksort.block", 256),
        items: knob(&format!("quicksort.items{widest}"), items),
        // Measured on the H100 (BENCHMARKS.md): 256 threads at three blocks an SM beat
        // 384 at two (which would take more of a 256 x 256 split's segments).
        small_block: knob("quicksort.small_block", 256),
        large_block: knob("quicksort.large_block", 512),
        small_items: knob("quicksort.small_items", small_items),
        bucket_target: knob("quicksort.bucket_target", bucket_target),
        sort_rank_group: knob("quicksort.sort_rank_group", sort_rank_group),
        small_min_blocks: knob("quicksort.small_min_blocks", small_min_blocks),
        sample_block: if inst.fine_sample { knob("quicksort.fine_sample_block", 512) } else { knob("quicksort.sample_block", 512) },
        sample_items: if inst.fine_sample { knob("quicksort.fine_sample_items", 16) } else { knob("quicksort.sample_items", 8) },
    }
}

impl Policy {
    fn tile(&self) -> usize {
        (self.block * self.items) as usize
    }
    /// Dynamic shared memory of the splitters' sample sort.
    fn sample_bytes(&self, key_bytes: usize) -> u32 {
        block_sort_bytes(self.sample_block, self.sample_items, key_bytes, 0)
    }
    fn small_tile(&self) -> usize {
        (self.small_block * self.small_items) as usize
    }
    fn large_tile(&self) -> usize {
        (self.large_block * self.small_items) as usize
    }
    /// The most keys a large sort takes: two of its tiles, a half for each of two
    /// blocks, merged by the second to finish (kernels/quicksort_small.cu).
    fn large_span(&self) -> usize {
        2 * self.large_tile()
    }
    /// The most places a level's large list can take for `len` keys in `buckets`
    /// buckets: a bucket takes one place with more than a small tile of keys, or two
    /// with more than a large tile.
    fn most_large(&self, len: usize, buckets: usize) -> usize {
        (2 * buckets).min(len / self.small_tile().min(self.large_tile() / 2) + 1)
    }
}

/// Dynamic shared memory of a one-block sort of `block` x `items` keys of `key_bytes`
/// with 16-bit positions (common/block_radix_sort.cuh: keys, positions, and the rank's
/// per-warp counters and scan), or of the values it stages afterwards. The kernels
/// check at compile time that it is enough.
fn block_sort_bytes(block: u32, items: u32, key_bytes: usize, value_bytes: usize) -> u32 {
    let tile = (block * items) as usize;
    let warps = block as usize / 32;
    let rank = warps * BUCKETS * 4 + warps * 8 + 16;
    let sort = rank + tile * key_bytes + tile * 2 + 64;
    round_up(sort.max(tile * value_bytes)) as u32
}

/// The module of `source` (one of SOURCES) for an instance; all take the same options,
/// and the splitters' the sample's too.
fn module(source: Source, inst: Instance) -> ModuleSpec {
    let Instance { key_bytes, value_bytes, float_keys, .. } = inst;
    let p = policy(inst);
    let mut options = vec![
            format!("-DGP_KEY_BYTES={key_bytes}"),
            format!("-DGP_VALUE_BYTES={value_bytes}"),
            format!("-DGP_KEY_FLOAT={}", float_keys as u32),
            format!("-DGP_BLOCK_THREADS={}", p.block),
            format!("-DGP_ITEMS={}", p.items),
            format!("-DGP_RANK_GROUP={}", knob("quicksort.rank_group", 4)),
            format!("-DGP_SORT_RANK_GROUP={}", p.sort_rank_group),
            format!("-DGP_SMALL_BLOCK_THREADS={}", p.small_block),
            format!("-DGP_LARGE_BLOCK_THREADS={}", p.large_block),
            format!("-DGP_SMALL_ITEMS={}", p.small_items),
            format!("-DGP_BUCKET_TARGET={}", p.bucket_target),
            format!("-DGP_SMALL_MIN_BLOCKS={}", p.small_min_blocks),
            format!("-DGP_LARGE_MIN_BLOCKS={}", knob("quicksort.large_min_blocks", 2)),
            format!("-DGP_SMALL_SMEM_BYTES={}", block_sort_bytes(p.large_block, p.small_items, key_bytes, value_bytes)),
            format!("-DGP_COPY_CHUNK={COPY_CHUNK}"),
    ];
    if samples(source) {
        options.push(format!("-DGP_SAMPLE_BLOCK_THREADS={}", p.sample_block));
        options.push(format!("-DGP_SAMPLE_ITEMS={}", p.sample_items));
        options.push(format!("-DGP_SAMPLE_SMEM_BYTES={}", p.sample_bytes(key_bytes)));
    }
    ModuleSpec { source, options }
}

/// The longest input whose splitters come from the fine sample (Instance::new).
fn fine_sample_upto() -> usize {
    knob("quicksort.fine_sample_upto", 1 << 20) as usize
}

/// Whether `source` is the splitters' (the one module the sample's size changes).
fn samples(source: Source) -> bool {
    source.name == sources::QUICKSORT_SPLITTERS.name
}

/// The quicksort's sources: the partition, the splitters (a block sort of the sample)
/// and the block sorts of small segments, apart so they compile side by side.
const SOURCES: [Source; 3] = [sources::QUICKSORT, sources::QUICKSORT_SPLITTERS, sources::QUICKSORT_SMALL];

/// Every module of the quicksort, for gpuprims_context_precompile (modules.rs): each
/// source for the same (key width, value width, float keys) set as the radix sort's,
/// and the wide instances of those that have them (and the splitters' fine-sample ones).
pub fn modules() -> Vec<Module> {
    // A short, a middle and a long input: every instance the lengths make.
    let middle = fine_sample_upto() + 1;
    let instances: Vec<Instance> = all_variants()
        .into_iter()
        .flat_map(|(k, v, f)| [0, middle, usize::MAX].map(|len| Instance::new(k, v, f, len)))
        .collect();
    // Sources an instance's bits leave the same gave the same module more than once.
    let mut seen = std::collections::HashSet::new();
    SOURCES
        .into_iter()
        .flat_map(|source| instances.iter().map(move |&inst| (source, inst)))
        .filter(|(source, inst)| seen.insert((source.name, inst.variant(*source))))
        .map(|(source, inst)| Module {
            source,
            variant: inst.variant(source),
            spec: module(source, inst),
            label: format!(
                "keys {}B{} values {}B{}{}",
                inst.key_bytes,
                if inst.float_keys { " float" } else { "" },
                inst.value_bytes,
                if inst.wide { " (wide)" } else { "" },
                if inst.fine_sample && samples(source) { " (fine sample)" } else { "" }
            ),
        })
        .collect()
}

/// Levels no input can need: each level either shrinks a segment fourfold or is
/// followed by a split by value, and splits by value cut the key range 256-fold each.
fn level_bound(len: usize, key_bytes: usize) -> usize {
    let log2 = usize::BITS as usize - len.max(2).leading_zeros() as usize;
    let default = log2.div_ceil(2) + 2 * key_bytes + 2;
    knob("quicksort.max_levels", default as u32) as usize
}

/// What a level read back (kernels: LevelCounts).
#[derive(Clone, Copy)]
struct LevelCounts {
    next_segments: usize,
    next_tiles: usize,
    small: usize,
    large: usize,
    copies: usize,
}

/// Device addresses of one level's lists (in the step scratch).
struct Lists {
    splitters: u64,
    cells: u64,
    small: u64,
    large: u64,
    copies: u64,
}

pub fn sort(
    shared: &CudaShared,
    keys: &DeviceMemory,
    key_dtype: DType,
    values: Option<(&DeviceMemory, DType)>,
    len: usize,
    order: Order,
) -> Result<()> {
    // Counts and places within a level are 32-bit (kernels/quicksort.cu): longer
    // inputs take the radix sort's kernels, which count in portions below 2^32. Same
    // key sequence; values in the stable order, one of the orders a quicksort may give.
    if len > MAX_LEVEL_KEYS {
        return super::radix_sort::sort(shared, keys, key_dtype, values, len, order);
    }
    let key_bytes = key_dtype.size();
    let value_bytes = values.map_or(0, |(_, d)| d.size());
    let float_keys = key_dtype.is_float();
    let inst = Instance::new(key_bytes, value_bytes, float_keys, len);
    let p = policy(inst);
    let (tile, large_span) = (p.tile(), p.large_span());
    let max_levels = level_bound(len, key_bytes);
    let v = |source: Source| inst.variant(source);
    // On the first call the three modules compile side by side.
    let spec = |source: Source| move || module(source, inst);
    let (partition, sample, small) = (spec(SOURCES[0]), spec(SOURCES[1]), spec(SOURCES[2]));
    // The scan of the bucket counts too, unless the input is one block sort.
    let counts_scan = || scan::module(DType::U32, Op::Sum);
    let mut wanted: Vec<precompile::Wanted> =
        vec![(SOURCES[0], v(SOURCES[0]), &partition), (SOURCES[1], v(SOURCES[1]), &sample), (SOURCES[2], v(SOURCES[2]), &small)];
    if len > large_span {
        wanted.push((sources::SCAN, scan::variant(DType::U32, Op::Sum), &counts_scan));
    }
    precompile::compile_unloaded(shared, &wanted)?;
    let load_from = |source: Source, kernel| {
        shared.loader.function(source, v(source), kernel, || module(source, inst))
    };
    let load = |kernel| load_from(sources::QUICKSORT, kernel);
    let load_sort = |kernel| load_from(sources::QUICKSORT_SMALL, kernel);
    let small_bytes = block_sort_bytes(p.small_block, p.small_items, key_bytes, value_bytes);
    let large_bytes = block_sort_bytes(p.large_block, p.small_items, key_bytes, value_bytes);
    let sample_bytes = p.sample_bytes(key_bytes);
    let order_bits = key_order(key_dtype, order);
    let values_ptr = values.map_or(0, |(m, _)| m.ptr);

    let mut state = shared.lock()?;
    let stream = state.stream;
    let (init, large_sort) = (load("qs_init")?, load_sort("qs_large")?);
    shared.loader.allow_dynamic_shared(large_sort, large_bytes)?;

    // Scratch for the whole sort: alternate keys and values, two levels' segments
    // (every segment of a level holds more than a large tile), the tiles' owners, the
    // bucket counts, the levels' counts, each key's bucket.
    let max_segments = len / (p.large_tile() + 1) + 1;
    let max_tiles = len.div_ceil(tile) + max_segments;
    let sizes = [
        len * key_bytes,
        len * value_bytes,
        max_segments * SEGMENT_BYTES,
        max_segments * SEGMENT_BYTES,
        max_tiles * 4,
        (max_tiles * BUCKETS + 1) * 4,
        max_levels * LEVEL_BYTES,
        len,
    ];
    let base = state.scratch.ensure(stream, sizes.iter().map(|&b| round_up(b)).sum())?;
    let mut at = [0u64; 8];
    let mut next = base;
    for (slot, bytes) in at.iter_mut().zip(sizes) {
        *slot = next;
        next += round_up(bytes) as u64;
    }
    let [alt, alt_values, segs_a, segs_b, tile_owner, counts, levels, buckets_of] = at;
    // Everything the levels need is acquired before the first write (so running out
    // of memory leaves the keys as they were): the lists of the most segments a
    // level can have (below), each level's scan of its bucket counts, the side stream.
    state.sync.reserve_runs(stream, scan::run_words(DType::U32, max_tiles * BUCKETS + 1), max_levels)?;
    if len > large_span && knob("quicksort.side_stream", 1) != 0 {
        state.side_stream()?;
    }
    // Per level: the splitters, the small and large segments and the chunks to copy.
    let lists = |state: &mut super::context::State, active: usize| -> Result<Lists> {
        let splitters = round_up(active * BUCKETS * key_bytes);
        let cells = round_up(active * CELLS * 2);
        let spans = round_up(active * BUCKETS * SPAN_BYTES);
        let large_spans = round_up(p.most_large(len, active * BUCKETS) * SPAN_BYTES);
        let copies = round_up((active * BUCKETS + len / COPY_CHUNK + 1) * SPAN_BYTES);
        let base = state.step_scratch.ensure(stream, splitters + cells + spans + large_spans + copies)?;
        let at = |bytes: usize| base + bytes as u64;
        Ok(Lists {
            splitters: base,
            cells: at(splitters),
            small: at(splitters + cells),
            large: at(splitters + cells + spans),
            copies: at(splitters + cells + spans + large_spans),
        })
    };

    // SAFETY (every launch below): the arguments match the kernels' parameters in
    // kernels/quicksort.cu; keys and values hold `len` elements, the scratch the
    // alternate buffers, segments, owners, counts and level counts sized above, the
    // step scratch this level's lists.
    if len > large_span {
        lists(&mut state, max_segments)?; // (every level's lists fit these)
    }
    if len <= large_span {
        let small_list = lists(&mut state, 1)?.small;
        unsafe {
            launch(init, 1, 32, stream, &[Arg::ptr(small_list), Arg::ptr(levels), Arg::size(len)])?;
            // (Two blocks, a half each, past one large tile.)
            return launch_with_shared(
                large_sort,
                if len > p.large_tile() { 2 } else { 1 },
                p.large_block,
                large_bytes,
                stream,
                &[
                    Arg::ptr(keys.ptr),
                    Arg::ptr(keys.ptr),
                    Arg::ptr(values_ptr),
                    Arg::ptr(values_ptr),
                    Arg::ptr(alt),
                    Arg::ptr(alt_values),
                    Arg::ptr(small_list),
                    Arg::ptr(levels + LARGE_FIELD),
                    Arg::u32(order_bits),
                ],
            );
        }
    }

    let (splitters_k, count_k, scatter_k, children_k, small_sort, copy_k) = (
        load_from(sources::QUICKSORT_SPLITTERS, "qs_splitters")?,
        load("qs_count")?,
        load("qs_scatter")?,
        load("qs_children")?,
        load_sort("qs_small")?,
        load("qs_copy")?,
    );
    shared.loader.allow_dynamic_shared(splitters_k, sample_bytes)?;
    shared.loader.allow_dynamic_shared(small_sort, small_bytes)?;
    let (mut segs, mut next_segs) = (segs_a, segs_b);
    let (mut active, mut tiles) = (1usize, len.div_ceil(tile));
    for level in 0..max_levels {
        // Even levels read the caller's buffers and write the alternate ones.
        let from_alternate = level % 2 == 1;
        let (from, to) = if from_alternate { (alt, keys.ptr) } else { (keys.ptr, alt) };
        let (vfrom, vto) = if from_alternate { (alt_values, values_ptr) } else { (values_ptr, alt_values) };
        let list = lists(&mut state, active)?;
        let level_counts = levels + (level * LEVEL_BYTES) as u64;
        unsafe {
            launch_with_shared(
                splitters_k,
                active as u64,
                p.sample_block,
                sample_bytes,
                stream,
                &[
                    Arg::ptr(from),
                    Arg::ptr(segs),
                    Arg::ptr(tile_owner),
                    Arg::ptr(list.splitters),
                    Arg::ptr(list.cells),
                    Arg::u32(order_bits),
                    // The first level also sets up the input's segment and the counts.
                    Arg::u32((level == 0) as u32),
                    Arg::size(len),
                    Arg::u32(len.div_ceil(tile) as u32),
                    Arg::ptr(levels),
                    Arg::u32(max_levels as u32),
                ],
            )?;
            launch(
                count_k,
                tiles as u64,
                p.block,
                stream,
                &[
                    Arg::ptr(from),
                    Arg::ptr(segs),
                    Arg::ptr(tile_owner),
                    Arg::ptr(list.splitters),
                    Arg::ptr(list.cells),
                    Arg::ptr(counts),
                    Arg::ptr(buckets_of),
                    Arg::u32(tiles as u32),
                    Arg::u32(order_bits),
                ],
            )?;
        }
        scan_locked(shared, &mut state, counts, counts, DType::U32, tiles * BUCKETS + 1, Op::Sum, ScanMode::Exclusive)?;
        unsafe {
            launch(
                scatter_k,
                tiles as u64,
                p.block,
                stream,
                &[
                    Arg::ptr(from),
                    Arg::ptr(to),
                    Arg::ptr(vfrom),
                    Arg::ptr(vto),
                    Arg::ptr(segs),
                    Arg::ptr(tile_owner),
                    Arg::ptr(list.splitters),
                    Arg::ptr(counts),
                    Arg::ptr(buckets_of),
                ],
            )?;
            // The buckets' data now lies in `to`: it must come home unless that is
            // the caller's buffer.
            launch(
                children_k,
                active as u64,
                CHILDREN_BLOCK,
                stream,
                &[
                    Arg::ptr(segs),
                    Arg::ptr(list.splitters),
                    Arg::ptr(counts),
                    Arg::ptr(next_segs),
                    Arg::ptr(list.small),
                    Arg::ptr(list.large),
                    Arg::ptr(list.copies),
                    Arg::ptr(level_counts),
                    Arg::ptr(shared.result_slot.device),
                    Arg::u32(!from_alternate as u32),
                ],
            )?;
        }
        let read_back = ReadBack::issue(stream)?;
        // Few segments: the sorts and copies go on grids for the most there can be
        // (blocks past the count return at once), to run while the host waits. Many:
        // those idle blocks would cost more than the wait, so the grids are exact.
        let most_spans = active * BUCKETS;
        let overlap = most_spans <= knob("quicksort.overlap_blocks", 4096) as usize;
        let mut got = None;
        if !overlap {
            got = Some(read_back.wait(shared)?);
        }
        let grid = |exact: Option<usize>, most: usize| exact.unwrap_or(most) as u64;
        let small_blocks = grid(got.map(|g| g.small), most_spans);
        let large_blocks = grid(got.map(|g| g.large), p.most_large(len, most_spans));
        // Both sorts: the large one on the side stream, so the two run side by side
        // (at a short level each is one partial wave of blocks as long as one sort).
        let beside = small_blocks > 0 && large_blocks > 0 && knob("quicksort.side_stream", 1) != 0;
        let large_stream = if beside {
            let side = state.side_stream()?;
            side.fork(stream)?;
            side.stream
        } else {
            stream
        };
        // The sorts and copies in a closure, so that the side stream is joined on every
        // path once forked: after a failed launch, the next call must still come after
        // the large sorts already issued (they use the scratch).
        let issued = (|| -> Result<()> {
            unsafe {
                for (kernel, block, bytes, spans, field, blocks, on) in [
                    (small_sort, p.small_block, small_bytes, list.small, SMALL_FIELD, small_blocks, stream),
                    (large_sort, p.large_block, large_bytes, list.large, LARGE_FIELD, large_blocks, large_stream),
                ] {
                    if blocks == 0 {
                        continue;
                    }
                    launch_with_shared(
                        kernel,
                        blocks,
                        block,
                        bytes,
                        on,
                        &[
                            Arg::ptr(to),
                            Arg::ptr(keys.ptr),
                            Arg::ptr(vto),
                            Arg::ptr(values_ptr),
                            // Where a large span past one tile sorts its halves: its own
                            // stretch of the alternate buffer is free (this level's
                            // source or destination).
                            Arg::ptr(alt),
                            Arg::ptr(alt_values),
                            Arg::ptr(spans),
                            Arg::ptr(level_counts + field),
                            Arg::u32(order_bits),
                        ],
                    )?;
                }
                let copies = grid(got.map(|g| g.copies), most_spans + len / COPY_CHUNK + 1);
                if !from_alternate && copies > 0 {
                    launch(
                        copy_k,
                        copies,
                        COPY_BLOCK,
                        stream,
                        &[
                            Arg::ptr(keys.ptr),
                            Arg::ptr(alt),
                            Arg::ptr(values_ptr),
                            Arg::ptr(alt_values),
                            Arg::ptr(list.copies),
                            Arg::ptr(level_counts + COPIES_FIELD),
                        ],
                    )?;
                }
            }
            Ok(())
        })();
        if beside {
            state.side_stream()?.join(stream)?;
        }
        issued?;
        let got = match got {
            Some(g) => g,
            None => read_back.wait(shared)?,
        };
        if got.next_segments == 0 {
            return Ok(());
        }
        if got.next_segments > max_segments || got.next_tiles > max_tiles {
            return Err(internal(format!("quicksort level {level}: {} segments, {} tiles", got.next_segments, got.next_tiles)));
        }
        (active, tiles) = (got.next_segments, got.next_tiles);
        std::mem::swap(&mut segs, &mut next_segs);
    }
    Err(internal(format!("quicksort of {len} keys did not finish in {max_levels} levels")))
}

/// A level's counts on their way to the pinned result slot (qs_children's last block
/// writes them there): an event the host waits on without waiting for the work
/// issued after it.
struct ReadBack {
    done: cudarc::driver::sys::CUevent,
}

impl ReadBack {
    fn issue(stream: cudarc::driver::sys::CUstream) -> Result<ReadBack> {
        let done = drv::event::create(cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).during("cuEventCreate")?;
        let read_back = ReadBack { done };
        // SAFETY: a live event and stream.
        unsafe { drv::event::record(done, stream) }.during("cuEventRecord")?;
        Ok(read_back)
    }

    fn wait(&self, shared: &CudaShared) -> Result<LevelCounts> {
        // SAFETY: a live event, recorded after the copy.
        unsafe { drv::event::synchronize(self.done) }.during("waiting for a quicksort level (an earlier kernel may have failed)")?;
        let mut words = [0u32; 5];
        for (i, w) in words.iter_mut().enumerate() {
            // SAFETY: the level's qs_children has finished writing the slot, which
            // holds RESULT_SLOT_BYTES >= LEVEL_BYTES bytes.
            *w = unsafe { std::ptr::read_volatile((shared.result_slot.host as *const u32).add(i)) };
        }
        Ok(LevelCounts {
            next_segments: words[0] as usize,
            next_tiles: words[1] as usize,
            small: words[2] as usize,
            large: words[3] as usize,
            copies: words[4] as usize,
        })
    }
}

impl Drop for ReadBack {
    fn drop(&mut self) {
        // SAFETY: created in `issue`; the driver releases it once it has completed.
        unsafe {
            let _ = drv::event::destroy(self.done);
        }
    }
}
