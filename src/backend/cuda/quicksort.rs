//! Planning and launching the quicksort (kernels/quicksort.cu): sample sort, level by
//! level. Each level issues the same few launches for all of its segments (splitters,
//! count, scan of the counts, scatter, children, whose last block writes the level's
//! counts to the pinned result slot), then the small and large sorts on grids sized for
//! the most there can be and the copies home on a capped grid (each block reads the
//! count on the device); the host waits for the children alone, while those run, to
//! size the next level. The large sorts run on the context's side stream, beside the
//! small ones. A short input is one large sort (of one block, or two for a pair of
//! halves past one tile). Here: the modules, the Plan of a call and its scratch; the levels are in
//! quicksort/levels.rs.

use cudarc::driver::sys::{CUfunction, CUstream};

use super::context::{round_up, CudaShared, State, RESULT_SLOT_BYTES};
use super::launch::{self as launching, Arg};
use super::loader::ModuleSpec;
use super::memory::DeviceMemory;
use super::modules::Module;
use super::radix_sort::{all_variants, key_order, variant};
use super::scan;
use super::precompile;
use super::sources::{self, Source};
use super::tuning::knob;
use crate::dtype::{DType, Op, Order};
use crate::error::Result;

mod levels;

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
/// Keys per chunk of a copy home. Small enough that a level of a few large finished
/// buckets (few distinct keys) spreads its copy over the whole GPU: with chunks of 2^16,
/// 2^20 keys of four values came home through 16 blocks in 109 µs (H100, 2026-11-27).
/// The list of chunks costs 32 bytes a chunk: len / 128 bytes of scratch at most
/// (32 MiB at 2^32 keys).
const COPY_CHUNK: usize = 1 << 12;
/// Blocks of the copy home an SM (its blocks take chunk after chunk).
const COPY_BLOCKS_PER_SM: usize = 8;
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
/// not, and whether its block sorts are wide (20 keys a thread).
#[derive(Clone, Copy)]
struct Instance {
    key_bytes: usize,
    value_bytes: usize,
    float_keys: bool,
    wide: bool,
}

impl Instance {
    fn new(key_bytes: usize, value_bytes: usize, float_keys: bool, len: usize) -> Instance {
        // Measured on the H100 (BENCHMARKS.md): past about 2^22 keys, 4-byte keys
        // without values sort faster in 20 keys a thread with buckets aimed at 4,096
        // keys (fuller small sorts, fewer large ones: 2^28 1.50x -> 1.58x merge sort,
        // 2^24 1.19x -> 1.21x); shorter inputs lose with them (2^20 1.03x -> 0.91x).
        // 8-byte keys without values go the other way (2026-11-27, docs/benchmarks/quicksort.md):
        // 20 keys a thread sort 2^20 keys 18% faster (0.174 -> 0.143 ms) but 2^24 and 2^28
        // 3-8% slower.
        let wide = match (key_bytes, value_bytes) {
            (4, 0) => len > knob("quicksort.wide_from", 1 << 22) as usize,
            (8, 0) => len <= knob("quicksort.wide8_upto", 1 << 22) as usize,
            _ => false,
        };
        // Every input samples 4,096 keys (the sample sort of kernels/quicksort_splitters.cu).
        // Inputs up to 2^20 keys sampled 8,192 until 2026-11-27, so that a bucket past a
        // large sort's tile (a pair of halves) was rare; since the pair splits by rank
        // instead of merging, the smaller sample wins on every 2^20 input measured on
        // the H100 (docs/benchmarks/quicksort.md).
        Instance { key_bytes, value_bytes, float_keys, wide }
    }

    /// The loader's variant of a module: the radix sort's for the widths, and the wide bit.
    fn variant(&self) -> u32 {
        variant(self.key_bytes, self.value_bytes, self.float_keys) * 2 + self.wide as u32
    }

    /// The instance `source`'s module is built for. The splitters read only the bucket
    /// target and the sample's shape from the policy: where the wide policy leaves them
    /// as the narrow one has them (8-byte keys: only the keys a thread change), the
    /// splitters' module is the narrow one (the same SASS), compiled once.
    fn for_source(self, source: Source) -> Instance {
        let narrow = Instance { wide: false, ..self };
        let same = |a: Policy, b: Policy| (a.bucket_target, a.sample_block, a.sample_items) == (b.bucket_target, b.sample_block, b.sample_items);
        if samples(source) && self.wide && same(policy(self), policy(narrow)) { narrow } else { self }
    }
}

fn policy(inst: Instance) -> Policy {
    // The partition stages a tile of keys, then of values, in 48 KiB of static shared
    // memory with room to spare.
    let widest = inst.key_bytes.max(inst.value_bytes);
    let items = if widest <= 4 { 16 } else { 8 };
    // The wide 4-byte instances' block sorts rank one column at a time (fewer
    // registers) at four blocks an SM: 2% faster at 2^24 on the H100 (BENCHMARKS.md);
    // the wide 8-byte ones change only the keys a thread.
    let (small_items, bucket_target, sort_rank_group, small_min_blocks) = match (inst.wide, inst.key_bytes) {
        (true, 4) => (20, 4096, 0, 4),
        (true, _) => (20, 3072, 4, 3),
        (false, _) => (16, 3072, 4, 3),
    };
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
        sample_block: knob("quicksort.sample_block", 512),
        sample_items: knob("quicksort.sample_items", 8),
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
    /// The most keys a large sort takes: two of its tiles, split by rank between two
    /// blocks that sort a side each (kernels/quicksort_large.cu).
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
            format!("-DGP_SMALL_SMEM_BYTES={}", block_sort_bytes(p.small_block, p.small_items, key_bytes, value_bytes)),
            format!("-DGP_LARGE_SMEM_BYTES={}", block_sort_bytes(p.large_block, p.small_items, key_bytes, value_bytes)),
            format!("-DGP_COPY_CHUNK={COPY_CHUNK}"),
    ];
    if samples(source) {
        options.push(format!("-DGP_SAMPLE_BLOCK_THREADS={}", p.sample_block));
        options.push(format!("-DGP_SAMPLE_ITEMS={}", p.sample_items));
        options.push(format!("-DGP_SAMPLE_SMEM_BYTES={}", p.sample_bytes(key_bytes)));
    }
    ModuleSpec { source, options }
}

/// Whether `source` is the splitters' (the one module that sorts a sample).
fn samples(source: Source) -> bool {
    source.name == sources::QUICKSORT_SPLITTERS.name
}

/// The quicksort's sources: the partition, the splitters (a block sort of the sample)
/// and the block sorts of small and of large segments, apart so they compile side by
/// side (the two block sorts in one module took 2 s of NVRTC, the first call's longest).
const SOURCES: [Source; 4] = [sources::QUICKSORT, sources::QUICKSORT_SPLITTERS, sources::QUICKSORT_SMALL, sources::QUICKSORT_LARGE];

/// Every module of the quicksort, for gpuprims_context_precompile (modules.rs): each
/// source for the same (key width, value width, float keys) set as the radix sort's,
/// and the wide instances of those that have them.
pub fn modules() -> Vec<Module> {
    // A short and a long input: every instance the lengths make.
    let instances: Vec<Instance> =
        all_variants().into_iter().flat_map(|(k, v, f)| [0, usize::MAX].map(|len| Instance::new(k, v, f, len))).collect();
    // Sources an instance's bits leave the same gave the same module more than once.
    let mut seen = std::collections::HashSet::new();
    SOURCES
        .into_iter()
        .flat_map(|source| instances.iter().map(move |&inst| (source, inst.for_source(source))))
        .filter(|(source, inst)| seen.insert((source.name, inst.variant())))
        .map(|(source, inst)| Module {
            source,
            variant: inst.variant(),
            spec: module(source, inst),
            label: format!(
                "keys {}B{} values {}B{}",
                inst.key_bytes,
                if inst.float_keys { " float" } else { "" },
                inst.value_bytes,
                if inst.wide { " (wide)" } else { "" }
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

/// What a sort of `len` keys takes, worked out before anything is acquired: the
/// module instance and its policy, the most levels, segments and tiles it can need,
/// the block sorts' shared memory and how the kernels read the keys.
struct Plan {
    inst: Instance,
    p: Policy,
    len: usize,
    key_bytes: usize,
    value_bytes: usize,
    tile: usize,
    large_span: usize,
    max_levels: usize,
    max_segments: usize,
    max_tiles: usize,
    small_bytes: u32,
    large_bytes: u32,
    sample_bytes: u32,
    order_bits: u32,
    /// Knob quicksort.side_stream: whether the large sorts may run on the side stream.
    side_stream: bool,
    /// Knob quicksort.order_check: whether the first level checks for an input already
    /// sorted or reversed (kernels: check_tile_order).
    order_check: bool,
    /// Knob quicksort.overlap_blocks: the most spans a level may have for its sorts
    /// and copies to go on grids for the most there can be (levels.rs).
    overlap_blocks: usize,
}

impl Plan {
    fn new(key_dtype: DType, value_dtype: Option<DType>, len: usize, order: Order) -> Plan {
        let key_bytes = key_dtype.size();
        let value_bytes = value_dtype.map_or(0, |d| d.size());
        let inst = Instance::new(key_bytes, value_bytes, key_dtype.is_float(), len);
        let p = policy(inst);
        // Every segment of a level holds more than a large tile.
        let max_segments = len / (p.large_tile() + 1) + 1;
        Plan {
            inst,
            len,
            key_bytes,
            value_bytes,
            tile: p.tile(),
            large_span: p.large_span(),
            max_levels: level_bound(len, key_bytes),
            max_segments,
            max_tiles: len.div_ceil(p.tile()) + max_segments,
            small_bytes: block_sort_bytes(p.small_block, p.small_items, key_bytes, value_bytes),
            large_bytes: block_sort_bytes(p.large_block, p.small_items, key_bytes, value_bytes),
            sample_bytes: p.sample_bytes(key_bytes),
            order_bits: key_order(key_dtype, order),
            side_stream: knob("quicksort.side_stream", 1) != 0,
            order_check: knob("quicksort.order_check", 1) != 0,
            overlap_blocks: knob("quicksort.overlap_blocks", 4096) as usize,
            p,
        }
    }

    /// Whether the input goes level by level: a short one is one large sort.
    fn has_levels(&self) -> bool {
        self.len > self.large_span
    }

    /// On the first call the modules this input runs compile side by side: a short one
    /// (one large sort, no levels) runs qs_init and the large sort alone; one with
    /// levels all four sources and the scan of the bucket counts.
    fn compile(&self, shared: &CudaShared) -> Result<()> {
        let inst = self.inst;
        let v = |source: Source| inst.for_source(source).variant();
        let spec = |source: Source| move || module(source, inst.for_source(source));
        let specs = SOURCES.map(spec);
        let counts_scan = || scan::module(DType::U32, Op::Sum);
        let levels = self.has_levels();
        let runs = |s: &Source| levels || s.name == sources::QUICKSORT.name || s.name == sources::QUICKSORT_LARGE.name;
        let mut wanted: Vec<precompile::Wanted> =
            SOURCES.iter().zip(&specs).filter(|(s, _)| runs(s)).map(|(&s, f)| (s, v(s), f as _)).collect();
        if levels {
            wanted.push((sources::SCAN, scan::variant(DType::U32, Op::Sum), &counts_scan));
        }
        precompile::compile_unloaded(shared, &wanted)
    }

    /// Kernel `kernel` of `source` (one of SOURCES) for the plan's instance.
    fn load(&self, shared: &CudaShared, source: Source, kernel: &'static str) -> Result<CUfunction> {
        let inst = self.inst.for_source(source);
        shared.loader.function(source, inst.variant(), kernel, || module(source, inst))
    }

    /// Scratch for the whole sort: alternate keys and values, two levels' segments
    /// (every segment of a level holds more than a large tile), the tiles' owners, the
    /// bucket counts, the levels' counts, each key's bucket (Buffers, in its order).
    fn scratch_sizes(&self) -> [usize; 8] {
        let (len, max_segments, max_tiles) = (self.len, self.max_segments, self.max_tiles);
        [
            len * self.key_bytes,
            len * self.value_bytes,
            max_segments * SEGMENT_BYTES,
            max_segments * SEGMENT_BYTES,
            max_tiles * 4,
            (max_tiles * BUCKETS + 1) * 4,
            self.max_levels * LEVEL_BYTES,
            len,
        ]
    }

    /// The scratch, then everything else the levels need, all acquired before the
    /// first write. The state lock must be held.
    fn acquire(&self, state: &mut State) -> Result<Buffers> {
        let stream = state.stream;
        let sizes = self.scratch_sizes();
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
        state.sync.reserve_runs(stream, scan::run_words(DType::U32, self.max_tiles * BUCKETS + 1), self.max_levels)?;
        if self.has_levels() && self.side_stream {
            state.side_stream()?;
        }
        if self.has_levels() {
            self.lists(state, self.max_segments)?; // (every level's lists fit these)
        }
        Ok(Buffers { alt, alt_values, segs_a, segs_b, tile_owner, counts, levels, buckets_of })
    }

    /// Per level: the splitters, the small and large segments and the chunks to copy,
    /// for `active` segments, in the step scratch.
    fn lists(&self, state: &mut State, active: usize) -> Result<Lists> {
        let (p, len, stream) = (&self.p, self.len, state.stream);
        let splitters = round_up(active * BUCKETS * self.key_bytes);
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
    }
}

/// Device addresses of the sort's scratch (Plan::scratch_sizes).
struct Buffers {
    alt: u64,
    alt_values: u64,
    /// A level's segments and the next level's, in turn.
    segs_a: u64,
    segs_b: u64,
    tile_owner: u64,
    /// The tiles' bucket counts, scanned in place.
    counts: u64,
    /// Each level's LevelCounts.
    levels: u64,
    buckets_of: u64,
}

/// Device addresses of one level's lists (in the step scratch).
struct Lists {
    splitters: u64,
    cells: u64,
    small: u64,
    large: u64,
    copies: u64,
}

/// One call's sort, once its scratch is acquired: what every launch of it takes.
///
/// Every launch of it relies on this (SAFETY): the arguments match the kernels'
/// parameters in kernels/quicksort.cu; keys and values hold `len` elements, the scratch
/// the alternate buffers, segments, owners, counts and level counts sized by the plan,
/// the step scratch this level's lists.
struct Sort<'a> {
    shared: &'a CudaShared,
    plan: Plan,
    /// The caller's keys and values (0: none).
    keys: u64,
    values: u64,
    buffers: Buffers,
    stream: CUstream,
    large_sort: CUfunction,
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
    let plan = Plan::new(key_dtype, values.map(|(_, d)| d), len, order);
    plan.compile(shared)?;
    let values_ptr = values.map_or(0, |(m, _)| m.ptr);

    let mut state = shared.lock()?;
    let (init, large_sort) = (plan.load(shared, sources::QUICKSORT, "qs_init")?, plan.load(shared, sources::QUICKSORT_LARGE, "qs_large")?);
    shared.loader.allow_dynamic_shared(large_sort, plan.large_bytes)?;
    let buffers = plan.acquire(&mut state)?;
    let stream = state.stream;
    let sort = Sort { shared, plan, keys: keys.ptr, values: values_ptr, buffers, stream, large_sort };
    if !sort.plan.has_levels() {
        return sort.one_large_sort(&mut state, init);
    }
    let kernels = sort.level_kernels()?;
    sort.levels(&mut state, &kernels)
}

impl Sort<'_> {
    /// A short input: one large sort (of one block, or two for a pair of halves past
    /// one tile) of the one span qs_init lists.
    fn one_large_sort(&self, state: &mut State, init: CUfunction) -> Result<()> {
        let (plan, b) = (&self.plan, &self.buffers);
        let small_list = plan.lists(state, 1)?.small;
        // SAFETY: as Sort says.
        unsafe {
            launch(init, 1, 32, self.stream, &[Arg::ptr(small_list), Arg::ptr(b.levels), Arg::size(plan.len)])?;
            // (Two blocks, a side each, past one large tile.)
            launch_with_shared(
                self.large_sort,
                if plan.len > plan.p.large_tile() { 2 } else { 1 },
                plan.p.large_block,
                plan.large_bytes,
                self.stream,
                &[
                    Arg::ptr(self.keys),
                    Arg::ptr(self.keys),
                    Arg::ptr(self.values),
                    Arg::ptr(self.values),
                    Arg::ptr(b.alt),
                    Arg::ptr(b.alt_values),
                    Arg::ptr(small_list),
                    Arg::ptr(b.levels + LARGE_FIELD),
                    Arg::u32(plan.order_bits),
                ],
            )
        }
    }
}
