//! Finding the element of a rank (select.rs's find_rank): the host plans the band of
//! sample ranks that brackets the rank and the scratch it may fill (RankPlan); the
//! search then issues the pivots and band (or, without a band, the settling launch),
//! for top-k the ordering of the band's candidates, and the digit passes.

use cudarc::driver::result as drv;
use cudarc::driver::sys::{CUdeviceptr, CUfunction, CUstream};

use super::{function, policy, result_target, Found, Policy, Scratch};
use super::{BAND_BY_WARP, BAND_WARPS_KEY_BYTES, CLOSED_BAND, HI_OPEN, LO_OPEN, NO_BAND, ORDER_RUNS, RADIX_BITS, SAMPLES, SAMPLES_SMALL, SAMPLE_BLOCK, STATE_BYTES};
use crate::backend::cuda::context::{round_up, CudaShared, State};
use crate::backend::cuda::driver::DriverContext;
use crate::backend::cuda::launch::{launch, launch_cooperative, Arg};
use crate::backend::cuda::memory::DeviceMemory;
use crate::backend::cuda::radix_sort;
use crate::backend::cuda::sources;
use crate::dtype::{DType, Order};
use crate::error::Result;

/// Where the band lies: sample ranks around the wanted rank, with room for the
/// sampling error (3.5 standard deviations of the sample rank each way, plus a few),
/// and the candidates scratch must hold to cover it comfortably.
struct Band {
    flags: u32,
    samples: usize,
    rank_lo: u32,
    rank_hi: u32,
    capacity: usize,
}

fn plan_band(len: usize, rank: usize, key_bytes: usize, lower_open: bool) -> Band {
    let none = Band { flags: NO_BAND, samples: 0, rank_lo: 0, rank_hi: 0, capacity: 0 };
    // One-byte keys: a single digit pass over the input is the whole search.
    let min_len = if lower_open { policy().min_band_len } else { policy().kth_min_band_len };
    if key_bytes == 1 || len < min_len {
        return none;
    }
    let small_upto = if lower_open { policy().topk_small_sample_len } else { policy().small_sample_len };
    let samples = if len <= small_upto { SAMPLES_SMALL } else { SAMPLES };
    let s = samples as f64;
    let p = rank as f64 / len as f64;
    let centre = p * s;
    let spread = policy().spread_sigmas * (s * p * (1.0 - p)).sqrt() + 4.0;
    let lo = (centre - spread).floor();
    let hi = (centre + spread).ceil();
    let mut flags = 0;
    if lower_open || lo < 0.0 {
        flags |= LO_OPEN;
    }
    if hi > s - 1.0 {
        flags |= HI_OPEN;
    }
    if !lower_open && flags == 0 && policy().band_closed {
        flags |= CLOSED_BAND;
    }
    let from = if flags & LO_OPEN != 0 { 0.0 } else { lo };
    let to = if flags & HI_OPEN != 0 { s } else { hi };
    // The fraction of the input between two sample ranks w apart is a Beta variate of
    // mean about w / S and deviation about sqrt(w) / S: room for 6 deviations.
    let width = to - from;
    let capacity = (len as f64 * (width + 6.0 * width.sqrt() + 2.0) / s) as usize + 4096;
    // A band this wide would copy much of the input: search the input instead.
    if capacity > len / 2 || capacity > u32::MAX as usize / 2 {
        return none;
    }
    Band { flags, samples, rank_lo: lo.clamp(0.0, s - 1.0) as u32, rank_hi: hi.clamp(0.0, s - 1.0) as u32, capacity }
}

/// What one find_rank call takes, worked out before anything is acquired: the band,
/// the flags its kernels run with, the tiles, and the sizes of the scratch's regions.
struct RankPlan {
    p: &'static Policy,
    key_bytes: usize,
    float_keys: bool,
    len: usize,
    rank: usize,
    band: Band,
    /// The band's flags and the result's (result_target).
    flags: u32,
    out_ptr: CUdeviceptr,
    banded: bool,
    topk: bool,
    with_indices: bool,
    tiles: usize,
    order_bits: u32,
    /// Bytes of the tiles' runs and the band blocks' starts (none without a band), of
    /// the candidates, and of their indices (none unless wanted).
    runs_bytes: usize,
    cand_bytes: usize,
    index_bytes: usize,
    /// Slots a warp of select_kth's closed band reserves at once (0: the band places
    /// its picks by a block scan a tile instead), and the candidates' capacity with
    /// room for the holes that leaves.
    warp_chunk: u32,
    capacity: usize,
}

/// Whether select_kth's closed band (when the plan closes it) places its picks by warp:
/// 4-byte keys only, from Policy::band_warps_log2 (floats) or band_warps_int_log2.
/// 8-byte keys lost 1-13% at 2^26-2^28 (H200), and the band by warp of 1- and 2-byte
/// keys holds 48-55 registers (their closed band 42-48).
pub(super) fn band_by_warp(dtype: DType, len: usize) -> bool {
    let p = policy();
    let from_log2 = if dtype.is_float() { p.band_warps_log2 } else { p.band_warps_int_log2 };
    dtype.size() == BAND_WARPS_KEY_BYTES && len as u64 >= 1u64 << from_log2
}

/// select_kth's closed band by warp: each warp reserves Policy::band_chunk slots at a
/// time and leaves fewer than that unused at the end; returns (chunk, room for the
/// holes), given at most 64 warps on each SM.
fn warp_chunk(shared: &CudaShared, p: &Policy, tiles: usize) -> (u32, usize) {
    let warps_per_block = (p.block / 32) as usize;
    let blocks = tiles.min(shared.props.sm_count as usize * 64 / warps_per_block);
    let warps = blocks * warps_per_block;
    let chunk = 1usize << p.band_chunk.ilog2();
    (chunk as u32, warps * chunk)
}

impl RankPlan {
    fn new(shared: &CudaShared, dtype: DType, len: usize, rank: usize, order: Order, with_indices: bool, found: Found) -> RankPlan {
        let key_bytes = dtype.size();
        let p = policy();
        let topk = matches!(found, Found::Gathered);
        let band = plan_band(len, rank, key_bytes, topk);
        let (result_flags, out_ptr) = result_target(shared, found);
        let banded = band.flags & NO_BAND == 0;
        // Scratch: the state, the tiles' runs (and after them a word for each band
        // block, at most one a tile), the candidates as the band reserved them, and
        // (top-k) again in input order, each with indices when wanted.
        let tiles = len.div_ceil((p.block * p.items(key_bytes)) as usize);
        let by_warp = band.flags & CLOSED_BAND != 0 && band_by_warp(dtype, len);
        let (warp_chunk, holes) = if by_warp { warp_chunk(shared, p, tiles) } else { (0, 0) };
        let capacity = band.capacity + holes;
        RankPlan {
            key_bytes,
            float_keys: dtype.is_float(),
            len,
            rank,
            flags: band.flags | result_flags | if topk { ORDER_RUNS } else { 0 } | if by_warp { BAND_BY_WARP } else { 0 },
            out_ptr,
            banded,
            topk,
            with_indices,
            tiles,
            order_bits: radix_sort::key_order(dtype, order),
            runs_bytes: if banded { round_up(2 * tiles * 8) } else { 0 },
            cand_bytes: round_up(capacity * key_bytes),
            index_bytes: if with_indices { round_up(capacity * 8) } else { 0 },
            warp_chunk,
            capacity,
            band,
            p,
        }
    }

    /// Bytes of the scratch: the state, the runs, the candidates with their indices
    /// (twice for top-k).
    fn scratch_bytes(&self) -> usize {
        let copies = if self.topk { 2 } else { 1 };
        STATE_BYTES + self.runs_bytes + copies * (self.cand_bytes + self.index_bytes)
    }

    /// The regions of scratch memory at `base`, one after another.
    fn regions(&self, base: CUdeviceptr) -> Regions {
        let runs = base + STATE_BYTES as u64;
        let reserved = runs + self.runs_bytes as u64;
        let reserved_index = if self.with_indices { reserved + self.cand_bytes as u64 } else { 0 };
        let ordered = reserved + (self.cand_bytes + self.index_bytes) as u64;
        let ordered_index = if self.with_indices { ordered + self.cand_bytes as u64 } else { 0 };
        Regions { state: base, runs, reserved, reserved_index, ordered, ordered_index }
    }
}

/// The scratch find_rank takes for top-k's k-th (rank k - 1) of `len` keys: for a
/// caller that reserves it ahead (select::prepare_topk).
pub(super) fn topk_scratch_bytes(shared: &CudaShared, dtype: DType, len: usize, k: usize, with_indices: bool) -> usize {
    RankPlan::new(shared, dtype, len, k - 1, Order::Ascending, with_indices, Found::Gathered).scratch_bytes()
}

/// Device addresses of find_rank's scratch: the state, the tiles' runs, the candidates
/// as the band reserved them and (top-k) again in input order, each with its indices
/// (0: none).
struct Regions {
    state: CUdeviceptr,
    runs: CUdeviceptr,
    reserved: CUdeviceptr,
    reserved_index: CUdeviceptr,
    ordered: CUdeviceptr,
    ordered_index: CUdeviceptr,
}

impl Regions {
    /// What the digit passes search and the caller gets: the candidates in input order
    /// for top-k, else as reserved.
    fn scratch(&self, topk: bool) -> Scratch {
        if topk {
            Scratch { state: self.state, cand: self.ordered, cand_index: self.ordered_index }
        } else {
            Scratch { state: self.state, cand: self.reserved, cand_index: 0 }
        }
    }
}

/// Issues the pivots, band, settle and digit passes that find the element of rank
/// `rank` (in `order`), and puts it where `found` says.
#[allow(clippy::too_many_arguments)]
pub(super) fn find_rank(
    shared: &CudaShared,
    state: &mut State,
    input: &DeviceMemory,
    dtype: DType,
    len: usize,
    rank: usize,
    order: Order,
    with_indices: bool,
    found: Found,
) -> Result<Scratch> {
    let plan = RankPlan::new(shared, dtype, len, rank, order, with_indices, found);
    let stream = state.stream;
    let base = state.scratch.ensure(stream, plan.scratch_bytes())?;
    let regions = plan.regions(base);
    let search = RankSearch { shared, input: input.ptr, stream, scratch: regions.scratch(plan.topk), regions, plan };
    // With a band the sample's kernel zeroes the state; without one a memset does.
    if !search.plan.banded {
        // SAFETY: the state lies inside the scratch memory.
        unsafe { drv::memset_d8_async(search.scratch.state, 0, STATE_BYTES, stream) }.during("cuMemsetD8Async (select state)")?;
    }
    if search.plan.banded {
        search.band()?;
        if search.plan.topk {
            search.order_candidates()?;
        }
    } else {
        search.settle()?;
    }
    search.digits()?;
    Ok(search.scratch)
}

/// One find_rank call once its scratch is acquired: what each of its phases launches
/// with.
///
/// Every launch of it relies on this (SAFETY): the arguments match the kernels'
/// parameters in kernels/select.cu; the input holds `len` keys, the scratch the state,
/// the runs (a word for each of `tiles` tiles and one for each band block: 2 * tiles
/// words, as a band grid never exceeds its tiles) and `capacity` candidates (and
/// indices) once or twice.
struct RankSearch<'a> {
    shared: &'a CudaShared,
    plan: RankPlan,
    input: CUdeviceptr,
    stream: CUstream,
    regions: Regions,
    /// What the digit passes search, and find_rank returns.
    scratch: Scratch,
}

impl RankSearch<'_> {
    fn load(&self, kernel: &'static str) -> Result<CUfunction> {
        function(self.shared, sources::SELECT, self.plan.key_bytes, self.plan.float_keys, kernel)
    }

    fn load_topk(&self, kernel: &'static str) -> Result<CUfunction> {
        function(self.shared, sources::TOPK, self.plan.key_bytes, self.plan.float_keys, kernel)
    }

    /// The band's kernel: its own for a band closed both ends, and for one placing its
    /// picks by warp (kernels/select.cu).
    fn band_kernel_name(&self) -> &'static str {
        if self.plan.flags & BAND_BY_WARP != 0 {
            "select_band_warps"
        } else if self.plan.flags & CLOSED_BAND != 0 {
            "select_band_closed"
        } else {
            "select_band"
        }
    }

    /// The band's grid: what is resident, at most a block a tile (each block takes a
    /// contiguous share of the tiles; top-k's move_runs works the shares out again).
    fn band_grid(&self) -> Result<u64> {
        let band_kernel = self.load(self.band_kernel_name())?;
        Ok((self.plan.tiles as u64).min(self.shared.resident_blocks(band_kernel, self.plan.p.block)?))
    }

    /// The sample's pivots around the rank, then the band: the candidates between
    /// them, reserved a tile's run at a time (a warp's chunk at a time by warp).
    fn band(&self) -> Result<()> {
        let (plan, p, r) = (&self.plan, &self.plan.p, &self.regions);
        let pivots = self.load(if plan.band.samples == SAMPLES_SMALL { "select_pivots_small" } else { "select_pivots" })?;
        let band_kernel = self.load(self.band_kernel_name())?;
        // SAFETY: as RankSearch says.
        unsafe {
            launch(
                pivots,
                1,
                SAMPLE_BLOCK,
                self.stream,
                &[
                    Arg::ptr(self.input),
                    Arg::size(plan.len),
                    Arg::ptr(r.state),
                    Arg::u32(plan.band.rank_lo),
                    Arg::u32(plan.band.rank_hi),
                    Arg::u32(plan.order_bits),
                ],
            )?;
            launch(
                band_kernel,
                self.band_grid()?,
                p.block,
                self.stream,
                &[
                    Arg::ptr(self.input),
                    Arg::size(plan.len),
                    Arg::ptr(r.state),
                    Arg::ptr(r.reserved),
                    Arg::ptr(r.reserved_index),
                    Arg::ptr(r.runs),
                    Arg::size(plan.capacity),
                    Arg::u32(plan.warp_chunk),
                    Arg::u32(plan.flags),
                    Arg::u32(plan.order_bits),
                    Arg::u64(plan.rank as u64),
                    Arg::ptr(plan.out_ptr),
                ],
            )?;
        }
        Ok(())
    }

    /// Top-k: the band's runs of candidates moved to their places in input order (the
    /// band placed them), for the gather.
    fn order_candidates(&self) -> Result<()> {
        let (plan, p, r) = (&self.plan, &self.plan.p, &self.regions);
        let move_runs = self.load_topk("select_move_runs")?;
        let band_blocks = self.band_grid()? as u32;
        let group = move_group(plan.capacity, plan.tiles);
        let tiles_a_block = (p.block / 32 * group) as u64;
        // SAFETY: as RankSearch says.
        unsafe {
            launch(
                move_runs,
                (plan.tiles as u64).div_ceil(tiles_a_block).min(self.shared.resident_blocks(move_runs, p.block)?),
                p.block,
                self.stream,
                &[
                    Arg::ptr(r.state),
                    Arg::ptr(r.runs),
                    Arg::size(plan.tiles),
                    Arg::u32(band_blocks),
                    Arg::size(plan.capacity),
                    Arg::ptr(r.reserved),
                    Arg::ptr(r.reserved_index),
                    Arg::ptr(r.ordered),
                    Arg::ptr(r.ordered_index),
                    Arg::u32(group),
                ],
            )?;
        }
        Ok(())
    }

    /// No band to settle where rank k fell: the settling's own launch does.
    fn settle(&self) -> Result<()> {
        let plan = &self.plan;
        // SAFETY: as RankSearch says.
        unsafe {
            launch(
                self.load("select_settle")?,
                1,
                32,
                self.stream,
                &[
                    Arg::ptr(self.regions.state),
                    Arg::u64(plan.rank as u64),
                    Arg::size(plan.capacity),
                    Arg::u32(plan.flags),
                    Arg::u32(plan.order_bits),
                    Arg::ptr(plan.out_ptr),
                ],
            )
        }
    }

    /// The digit passes, over the candidates or (no band, or the rare fallback) the
    /// whole input, which settle the element of the rank.
    fn digits(&self) -> Result<()> {
        let (plan, p) = (&self.plan, &self.plan.p);
        // Keys a digit-pass block reads in one round (UNROLL vectors a thread).
        let per_block = p.block as u64 * (16 / plan.key_bytes) as u64 * 4;
        // Sized for the candidates when there is a band (a larger grid only adds blocks
        // that contend on the histogram's atomics); the rare fallback to the whole input
        // runs on the same grid, strided.
        let searched = if plan.banded { plan.capacity } else { plan.len };
        let digit_pass = self.load("select_digit_pass")?;
        let digit_grid = (searched as u64).div_ceil(per_block * p.digit_rounds.max(1) as u64).min(self.shared.resident_blocks(digit_pass, p.block)?);
        // All digits in one cooperative launch: with a band, blocks enough that each
        // share's candidates fit the keys a block keeps (nine tenths of them), at most
        // what is resident at once. Where the driver refuses the launch (no
        // cooperative launch, or fewer SMs than the occupancy said), the digit passes.
        let fused = p.fused_digits && self.fused_digits(digit_grid)?;
        if !fused {
            for digit in (0..plan.key_bytes * 8 / RADIX_BITS).rev() {
                // SAFETY: as RankSearch says.
                unsafe { launch(digit_pass, digit_grid, p.block, self.stream, &self.digit_args((digit * RADIX_BITS) as u32))? };
            }
        }
        Ok(())
    }

    /// Every digit in one cooperative launch of select_digits on at least
    /// `digit_grid` blocks; false where the driver refuses it.
    fn fused_digits(&self, digit_grid: u64) -> Result<bool> {
        let (plan, p) = (&self.plan, &self.plan.p);
        let digits = self.load("select_digits")?;
        let keep = (p.keep_bytes as usize / plan.key_bytes) * 9 / 10;
        let grid = if plan.banded { (plan.capacity.div_ceil(keep) as u64).max(digit_grid) } else { digit_grid };
        let grid = grid.min(self.shared.resident_blocks(digits, p.block)?);
        // select_digits goes through every digit itself: no shift.
        let [input, len, state, cand, _shift, flags, order, out] = self.digit_args(0);
        // SAFETY: as RankSearch says.
        unsafe { launch_cooperative(digits, grid, p.block, self.stream, &[input, len, state, cand, flags, order, out]) }
    }

    /// The arguments of select_digit_pass for the digit at bit `shift`.
    fn digit_args(&self, shift: u32) -> [Arg; 8] {
        let plan = &self.plan;
        [
            Arg::ptr(self.input),
            Arg::size(plan.len),
            Arg::ptr(self.scratch.state),
            Arg::ptr(self.scratch.cand),
            Arg::u32(shift),
            Arg::u32(plan.flags),
            Arg::u32(plan.order_bits),
            Arg::ptr(plan.out_ptr),
        ]
    }
}

/// The tiles a warp of select_move_runs takes at once (1 to 32): about 64 candidates
/// a warp by the band's capacity, which runs 2 to 4 times the candidates (2^28, top-k
/// k = 100 with the small sample: 3 tiles a warp, some 5 candidates a tile). H100,
/// 2026-11-27: with the large sample, a warp a tile took 18.7 us there and 32 tiles a
/// warp 6.7 (ncu); but 32 tiles a warp made 2^24, k = 65,536 (some 40 a tile) 15-25 us
/// slower, its copies on too few warps. The best group at 2^28 is not yet measured.
/// The knob select.move_group (1 to 32) forces one: the tests reach every grouping
/// through it, and it sweeps the best.
fn move_group(capacity: usize, tiles: usize) -> u32 {
    match policy().move_group {
        0 => (64 * tiles / capacity.max(1)).clamp(1, 32) as u32,
        forced => forced,
    }
}

#[cfg(test)]
mod tests {
    use super::{move_group, plan_band};

    /// Many short runs (2^28, k = 100: some 5 candidates a tile) take several tiles a
    /// warp, long runs (2^24, k = 65,536; 2^22, k = 2^20) one; never outside 1..=32,
    /// whatever the capacity.
    #[test]
    fn move_group_follows_the_expected_run_length() {
        let tiles = |len: usize| len.div_ceil(256 * 16);
        let group = |len: usize, k: usize| move_group(plan_band(len, k - 1, 4, true).capacity, tiles(len));
        assert!(group(1 << 28, 100) > 1, "{}", group(1 << 28, 100));
        assert_eq!(group(1 << 24, 65536), 1);
        assert_eq!(group(1 << 22, 1 << 20), 1);
        for (capacity, tiles) in [(0, 0), (0, 1 << 20), (1, 1 << 20), (usize::MAX / 128, 1), (1 << 40, 1 << 30)] {
            assert!((1..=32).contains(&move_group(capacity, tiles)));
        }
    }
}
