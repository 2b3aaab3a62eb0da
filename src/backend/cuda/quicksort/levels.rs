//! The quicksort's levels (quicksort.rs plans the call and acquires its scratch). A
//! level partitions its segments (splitters, count, scan of the counts, scatter,
//! children), then sorts the small and large buckets and copies home what must come
//! home, while the host waits for the level's counts to size the next level.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUevent, CUevent_flags, CUfunction, CUstream};

use super::{launch, launch_with_shared, Lists, Sort};
use super::{BUCKETS, CHILDREN_BLOCK, COPIES_FIELD, COPY_BLOCK, COPY_BLOCKS_PER_SM, COPY_CHUNK, LARGE_FIELD, LEVEL_BYTES, SMALL_FIELD};
use crate::backend::cuda::context::{CudaShared, State};
use crate::backend::cuda::driver::DriverContext;
use crate::backend::cuda::launch::Arg;
use crate::backend::cuda::scan::scan_locked;
use crate::backend::cuda::sources;
use crate::dtype::{DType, Op, ScanMode};
use crate::error::{internal, Result};

/// What a level read back (kernels: LevelCounts).
#[derive(Clone, Copy)]
struct LevelCounts {
    next_segments: usize,
    next_tiles: usize,
    small: usize,
    large: usize,
    copies: usize,
}

/// The kernels of the levels (the large sort's, which a short input runs too, is
/// loaded before the scratch is acquired).
pub(super) struct LevelKernels {
    splitters: CUfunction,
    count: CUfunction,
    scatter: CUfunction,
    children: CUfunction,
    small_sort: CUfunction,
    copy: CUfunction,
}

/// One level: where its keys and values come from and go, its segments and the next
/// level's, its lists, and where its counts go.
struct Level {
    number: usize,
    from_alternate: bool,
    from: u64,
    to: u64,
    vfrom: u64,
    vto: u64,
    segs: u64,
    next_segs: u64,
    active: usize,
    tiles: usize,
    list: Lists,
    level_counts: u64,
}

/// A grid of `exact` blocks where the count was read back, else of `most`.
fn grid(exact: Option<usize>, most: usize) -> u64 {
    exact.unwrap_or(most) as u64
}

impl Sort<'_> {
    /// The levels' kernels, the splitters' and small sorts' dynamic shared memory allowed.
    pub(super) fn level_kernels(&self) -> Result<LevelKernels> {
        let (plan, shared) = (&self.plan, self.shared);
        let (splitters, count, scatter, children, small_sort, copy) = (
            plan.load(shared, sources::QUICKSORT_SPLITTERS, "qs_splitters")?,
            plan.load(shared, sources::QUICKSORT, "qs_count")?,
            plan.load(shared, sources::QUICKSORT, "qs_scatter")?,
            plan.load(shared, sources::QUICKSORT, "qs_children")?,
            plan.load(shared, sources::QUICKSORT_SMALL, "qs_small")?,
            plan.load(shared, sources::QUICKSORT, "qs_copy")?,
        );
        shared.loader.allow_dynamic_shared(splitters, plan.sample_bytes)?;
        shared.loader.allow_dynamic_shared(small_sort, plan.small_bytes)?;
        Ok(LevelKernels { splitters, count, scatter, children, small_sort, copy })
    }

    /// Level after level, each sized from the last one's counts, until no segment is
    /// left.
    pub(super) fn levels(&self, state: &mut State, k: &LevelKernels) -> Result<()> {
        let (plan, b) = (&self.plan, &self.buffers);
        let (mut segs, mut next_segs) = (b.segs_a, b.segs_b);
        let (mut active, mut tiles) = (1usize, plan.len.div_ceil(plan.tile));
        for number in 0..plan.max_levels {
            // Even levels read the caller's buffers and write the alternate ones.
            let from_alternate = number % 2 == 1;
            let (from, to) = if from_alternate { (b.alt, self.keys) } else { (self.keys, b.alt) };
            let (vfrom, vto) = if from_alternate { (b.alt_values, self.values) } else { (self.values, b.alt_values) };
            let list = plan.lists(state, active)?;
            let level_counts = b.levels + (number * LEVEL_BYTES) as u64;
            let level = Level { number, from_alternate, from, to, vfrom, vto, segs, next_segs, active, tiles, list, level_counts };
            let got = self.level(state, k, &level)?;
            if got.next_segments == 0 {
                return Ok(());
            }
            if got.next_segments > plan.max_segments || got.next_tiles > plan.max_tiles {
                return Err(internal(format!("quicksort level {number}: {} segments, {} tiles", got.next_segments, got.next_tiles)));
            }
            (active, tiles) = (got.next_segments, got.next_tiles);
            std::mem::swap(&mut segs, &mut next_segs);
        }
        Err(internal(format!("quicksort of {} keys did not finish in {} levels", plan.len, plan.max_levels)))
    }

    /// One level, issued, and its counts once read back.
    fn level(&self, state: &mut State, k: &LevelKernels, level: &Level) -> Result<LevelCounts> {
        let b = &self.buffers;
        self.split_and_count(k, level)?;
        scan_locked(self.shared, state, b.counts, b.counts, DType::U32, level.tiles * BUCKETS + 1, Op::Sum, ScanMode::Exclusive, None)?;
        self.scatter_and_list(k, level)?;
        let read_back = ReadBack::issue(self.stream)?;
        // Few segments: the sorts go on grids for the most there can be (blocks past the
        // count return at once) and the copies on a capped, grid-strided one, to run
        // while the host waits. Many: those idle blocks would cost more than the wait,
        // so the grids are exact.
        let most_spans = level.active * BUCKETS;
        let overlap = most_spans <= self.plan.overlap_blocks;
        let mut got = None;
        if !overlap {
            got = Some(read_back.wait(self.shared)?);
        }
        self.sort_buckets(state, k, level, got)?;
        match got {
            Some(g) => Ok(g),
            None => read_back.wait(self.shared),
        }
    }

    /// Whether this level checks (qs_count) and heeds (qs_scatter, qs_children) the
    /// input's order: the first level, unless knob quicksort.order_check is 0.
    fn checks_order(&self, level: &Level) -> u32 {
        (level.number == 0 && self.plan.order_check) as u32
    }

    /// The splitters of each segment (from a sorted sample), then each tile's bucket
    /// counts.
    fn split_and_count(&self, k: &LevelKernels, level: &Level) -> Result<()> {
        let (plan, b, list) = (&self.plan, &self.buffers, &level.list);
        // SAFETY: as Sort says.
        unsafe {
            launch_with_shared(
                k.splitters,
                level.active as u64,
                plan.p.sample_block,
                plan.sample_bytes,
                self.stream,
                &[
                    Arg::ptr(level.from),
                    Arg::ptr(level.segs),
                    Arg::ptr(b.tile_owner),
                    Arg::ptr(list.splitters),
                    Arg::ptr(list.cells),
                    Arg::u32(plan.order_bits),
                    // The first level also sets up the input's segment and the counts.
                    Arg::u32((level.number == 0) as u32),
                    Arg::size(plan.len),
                    Arg::u32(plan.len.div_ceil(plan.tile) as u32),
                    Arg::ptr(b.levels),
                    Arg::u32(plan.max_levels as u32),
                ],
            )?;
            launch(
                k.count,
                level.tiles as u64,
                plan.p.block,
                self.stream,
                &[
                    Arg::ptr(level.from),
                    Arg::ptr(level.segs),
                    Arg::ptr(b.tile_owner),
                    Arg::ptr(list.splitters),
                    Arg::ptr(list.cells),
                    Arg::ptr(b.counts),
                    Arg::ptr(b.buckets_of),
                    Arg::u32(level.tiles as u32),
                    Arg::u32(plan.order_bits),
                    // The first level also checks whether the input is in order already.
                    Arg::ptr(b.levels),
                    Arg::u32(self.checks_order(level)),
                ],
            )?;
        }
        Ok(())
    }

    /// With the counts scanned: the scatter into buckets, then the next level's
    /// segments and this level's lists (qs_children, whose last block writes the
    /// level's counts to the pinned result slot).
    fn scatter_and_list(&self, k: &LevelKernels, level: &Level) -> Result<()> {
        let (b, list) = (&self.buffers, &level.list);
        // SAFETY: as Sort says.
        unsafe {
            launch(
                k.scatter,
                level.tiles as u64,
                self.plan.p.block,
                self.stream,
                &[
                    Arg::ptr(level.from),
                    Arg::ptr(level.to),
                    Arg::ptr(level.vfrom),
                    Arg::ptr(level.vto),
                    Arg::ptr(level.segs),
                    Arg::ptr(b.tile_owner),
                    Arg::ptr(list.splitters),
                    Arg::ptr(b.counts),
                    Arg::ptr(b.buckets_of),
                    Arg::ptr(b.levels),
                    Arg::u32(self.checks_order(level)),
                ],
            )?;
            // The buckets' data now lies in `to`: it must come home unless that is
            // the caller's buffer.
            launch(
                k.children,
                level.active as u64,
                CHILDREN_BLOCK,
                self.stream,
                &[
                    Arg::ptr(level.segs),
                    Arg::ptr(list.splitters),
                    Arg::ptr(b.counts),
                    Arg::ptr(level.next_segs),
                    Arg::ptr(list.small),
                    Arg::ptr(list.large),
                    Arg::ptr(list.copies),
                    Arg::ptr(level.level_counts),
                    Arg::ptr(self.shared.result_slot.device),
                    Arg::u32(!level.from_alternate as u32),
                    Arg::ptr(b.levels),
                    Arg::u32(self.checks_order(level)),
                ],
            )?;
        }
        Ok(())
    }

    /// The small and large sorts and the copies home, on grids of `got`'s counts, or
    /// of the most there can be where they are not read back yet.
    fn sort_buckets(&self, state: &mut State, k: &LevelKernels, level: &Level, got: Option<LevelCounts>) -> Result<()> {
        let plan = &self.plan;
        let most_spans = level.active * BUCKETS;
        let small_blocks = grid(got.map(|g| g.small), most_spans);
        let large_blocks = grid(got.map(|g| g.large), plan.p.most_large(plan.len, most_spans));
        // Both sorts: the large one on the side stream, so the two run side by side
        // (at a short level each is one partial wave of blocks as long as one sort).
        let beside = small_blocks > 0 && large_blocks > 0 && plan.side_stream;
        let large_stream = if beside {
            let side = state.side_stream()?;
            side.fork(self.stream)?;
            side.stream
        } else {
            self.stream
        };
        // The sorts and copies in a function of their own, so that the side stream is
        // joined on every path once forked: after a failed launch, the next call must
        // still come after the large sorts already issued (they use the scratch).
        let issued = self.issue_sorts_and_copies(k, level, got, (small_blocks, large_blocks), large_stream);
        if beside {
            state.side_stream()?.join(self.stream)?;
        }
        issued
    }

    /// The sorts (small, then large on `large_stream`) of the spans the lists hold,
    /// and the copies home where this level wrote the alternate buffers.
    fn issue_sorts_and_copies(
        &self,
        k: &LevelKernels,
        level: &Level,
        got: Option<LevelCounts>,
        (small_blocks, large_blocks): (u64, u64),
        large_stream: CUstream,
    ) -> Result<()> {
        let (plan, b, stream) = (&self.plan, &self.buffers, self.stream);
        // SAFETY: as Sort says.
        unsafe {
            for (kernel, block, bytes, spans, field, blocks, on) in [
                (k.small_sort, plan.p.small_block, plan.small_bytes, level.list.small, SMALL_FIELD, small_blocks, stream),
                (self.large_sort, plan.p.large_block, plan.large_bytes, level.list.large, LARGE_FIELD, large_blocks, large_stream),
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
                        Arg::ptr(level.to),
                        Arg::ptr(self.keys),
                        Arg::ptr(level.vto),
                        Arg::ptr(self.values),
                        // Where a pair's source is its destination (odd levels), it
                        // sorts its sides in its own stretch of the alternate buffer,
                        // free once the level's scatter is done.
                        Arg::ptr(b.alt),
                        Arg::ptr(b.alt_values),
                        Arg::ptr(spans),
                        Arg::ptr(level.level_counts + field),
                        Arg::u32(plan.order_bits),
                    ],
                )?;
            }
            let most_copies = level.active * BUCKETS + plan.len / COPY_CHUNK + 1;
            let copies = grid(got.map(|g| g.copies), most_copies).min((self.shared.props.sm_count as usize * COPY_BLOCKS_PER_SM) as u64);
            if !level.from_alternate && copies > 0 {
                launch(
                    k.copy,
                    copies,
                    COPY_BLOCK,
                    stream,
                    &[
                        Arg::ptr(self.keys),
                        Arg::ptr(b.alt),
                        Arg::ptr(self.values),
                        Arg::ptr(b.alt_values),
                        Arg::ptr(level.list.copies),
                        Arg::ptr(level.level_counts + COPIES_FIELD),
                    ],
                )?;
            }
        }
        Ok(())
    }
}

/// A level's counts on their way to the pinned result slot (qs_children's last block
/// writes them there): an event the host waits on without waiting for the work
/// issued after it.
struct ReadBack {
    done: CUevent,
}

impl ReadBack {
    fn issue(stream: CUstream) -> Result<ReadBack> {
        let done = drv::event::create(CUevent_flags::CU_EVENT_DISABLE_TIMING).during("cuEventCreate")?;
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
