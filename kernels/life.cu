// Life-like rules on a bit-packed grid, GP_GENS generations per launch.
//
// Layout (src/life/mod.rs): row y is `wpr` u64 words, cell x is bit x % 64 of word
// x / 64, bits past the width are 0. Each lane owns one u64 word (64 cells, as two
// 32-bit halves) of a column strip; a warp covers 32 adjacent words of which lanes
// 1..30 are written and lanes 0 and 31 are halo: a generation corrupts one bit per
// generation from the strip's outer edges inwards, so one halo word absorbs up to 64
// generations. Warps are independent (no shared memory, no block barrier).
//
// A warp walks down its strip of rows, one row a step. Generation g (1..GENS) is a
// level of a register pipeline: each step, level g takes the row level g-1 produced in
// the previous step (level 1, a row loaded AHEAD steps before), so the GENS levels of
// one step are independent of one another and the scheduler can overlap their
// shuffles and logic. Level g keeps in registers the 2-bit horizontal sums and the
// cells of a window of three rows; with the incoming row's sums it has the 3x3 block
// count of every cell of the middle row and applies the rule. Per 32 cells and
// generation: one shuffle, 2 funnel shifts, 2 LOP3 for the row's full adder (sum,
// majority), 6 for the vertical adders (three rows' 2-bit sums into a 4-bit count) and
// 3 for the rule (apply_rule): about 0.4 bit operations per cell. A strip of R rows
// costs R + 3 GENS steps (2 GENS rows of halo, GENS of pipeline skew).
//
// Edges. Vertically, the strip reads GENS rows above and below its own. TORUS:
// row indices wrap; horizontally a lane's word is word j of the row's periodic
// extension (cell 64j + i mod width), read directly when the width is a multiple
// of 64 and gathered bit-unaligned otherwise (edge lanes only); since the dynamics of
// the periodic extension is the torus', nothing else is needed. DEAD: rows and words
// outside are 0 and every level clears what it produced outside the grid (rows
// outside, words outside, bits past the width), so the outside stays dead for B0
// rules too.
//
// Instantiated per rule and generations per launch:
//   -DGP_BIRTH=<mask> -DGP_SURVIVE=<mask> -DGP_GENS=<k> -DGP_WARPS=<warps per block>
// (planning in src/backend/cuda/life.rs).
#include "common/grid_dependency.cuh"
#include "common/types.cuh"

constexpr int GENS = GP_GENS;
constexpr int WARPS = GP_WARPS;
constexpr u32 BIRTH = GP_BIRTH;
constexpr u32 SURVIVE = GP_SURVIVE;
constexpr u32 FULL_MASK = 0xffffffffu;
constexpr int OUT_LANES = 30;  // lanes 1..30 of a warp are written

static_assert(GENS >= 1 && GENS <= 64, "one halo word absorbs at most 64 generations");

// 64 cells: lo holds cells 0..31 of the word, hi cells 32..63.
struct Cells {
    u32 lo, hi;
};

__device__ __forceinline__ u32 majority(u32 a, u32 b, u32 c) { return (a & b) | (c & (a | b)); }

// Whether block count n (0..9, the cell itself included) gives a live cell to a dead
// cell (birth) or to a live one (survival).
__host__ __device__ constexpr bool born_at(int n) { return n <= 8 && ((BIRTH >> n) & 1); }
__host__ __device__ constexpr bool survives_at(int n) { return n >= 1 && ((SURVIVE >> (n - 1)) & 1); }
__host__ __device__ constexpr bool uses(int n) { return born_at(n) || survives_at(n); }
// Counts n and n + 8 share their three low bits; the fourth plane matters only when
// the rule looks at a count in {0, 1, 8, 9}.
constexpr bool NEEDS_PLANE3 = uses(0) || uses(1) || uses(8) || uses(9);

// A LOP3 truth table over (s2, s1, s0) = count bits: bit n says what count n (or
// n + 8 for `high`) gives.
__host__ __device__ constexpr u32 table(bool alive, bool high) {
    u32 t = 0;
    for (int n = 0; n < 8; ++n)
        if (alive ? survives_at(n + (high ? 8 : 0)) : born_at(n + (high ? 8 : 0))) t |= 1u << n;
    return t;
}

// One LOP3: any function of three words, given by its truth table on 0xF0, 0xCC, 0xAA.
template <u32 LUT>
__device__ __forceinline__ u32 lop3(u32 a, u32 b, u32 c) {
    u32 d;
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT));
    return d;
}
constexpr u32 SELECT = 0xCA;  // a ? b : c

// The next state of 32 cells from the bit planes s0..s3 of their block counts: the
// rule's table for live cells and for dead ones, then a select on the cell's state.
// Three LOP3 whatever the rule (seven when it looks at a count in {0, 1, 8, 9}).
__device__ __forceinline__ u32 apply_rule(u32 s0, u32 s1, u32 s2, u32 s3, u32 alive) {
    const u32 low = lop3<SELECT>(alive, lop3<table(true, false)>(s2, s1, s0), lop3<table(false, false)>(s2, s1, s0));
    if (!NEEDS_PLANE3) return low;
    const u32 high = lop3<SELECT>(alive, lop3<table(true, true)>(s2, s1, s0), lop3<table(false, true)>(s2, s1, s0));
    return lop3<SELECT>(s3, high, low);
}

// 2-bit horizontal sums (left + centre + right) of 32 cells.
struct RowSums {
    u32 s0, s1;
};

__device__ __forceinline__ RowSums row_sums(u32 left, u32 centre, u32 right) {
    return RowSums{left ^ centre ^ right, majority(left, centre, right)};
}

// One level's registers: the sums and cells of a window of three rows, in three
// slots that rotate with the step: at step S (mod 3) slot S holds the row above the
// middle one, slot S + 1 the middle row, and the incoming row goes to slot S + 2,
// over the oldest. The row loop is unrolled by three, so the rotation is register
// naming, not moves.
struct Level {
    RowSums lo[3], hi[3];
    Cells cells[3];
};

// The next state of 32 cells of the middle row from the three rows' sums.
__device__ __forceinline__ u32 next_state(RowSums a, RowSums b, RowSums c, u32 alive) {
    const u32 s0 = a.s0 ^ b.s0 ^ c.s0;
    const u32 k0 = majority(a.s0, b.s0, c.s0);
    const u32 t1 = a.s1 ^ b.s1 ^ c.s1;
    const u32 k1 = majority(a.s1, b.s1, c.s1);
    const u32 s1 = t1 ^ k0;
    const u32 d = t1 & k0;
    return apply_rule(s0, s1, k1 ^ d, k1 & d, alive);
}

// Feeds row `in` to a level at step S (mod 3); returns the next generation of the
// level's middle row.
template <int S>
__device__ __forceinline__ Cells advance(Level &L, Cells in) {
    constexpr int UP = S, MID = (S + 1) % 3, IN = (S + 2) % 3;
    const u32 left_hi = __shfl_up_sync(FULL_MASK, in.hi, 1);    // lane - 1's cells 32..63
    const u32 right_lo = __shfl_down_sync(FULL_MASK, in.lo, 1); // lane + 1's cells 0..31
    // Cell x - 1 moved to bit x (left) and cell x + 1 to bit x (right).
    const u32 l_lo = __funnelshift_l(left_hi, in.lo, 1);
    const u32 l_hi = __funnelshift_l(in.lo, in.hi, 1);
    const u32 r_lo = __funnelshift_r(in.lo, in.hi, 1);
    const u32 r_hi = __funnelshift_r(in.hi, right_lo, 1);
    const RowSums in_lo = row_sums(l_lo, in.lo, r_lo);
    const RowSums in_hi = row_sums(l_hi, in.hi, r_hi);
    const Cells out{next_state(L.lo[UP], L.lo[MID], in_lo, L.cells[MID].lo),
                    next_state(L.hi[UP], L.hi[MID], in_hi, L.cells[MID].hi)};
    L.lo[IN] = in_lo;
    L.hi[IN] = in_hi;
    L.cells[IN] = in;
    return out;
}

__device__ __forceinline__ Cells split(u64 w) { return Cells{(u32)w, (u32)(w >> 32)}; }
__device__ __forceinline__ u64 join(Cells c) { return (u64)c.lo | ((u64)c.hi << 32); }

// Word j of a row's periodic extension: cells p .. p + 63 (mod width), p = 64j mod
// width; for the edge lanes of TORUS grids whose width is not a multiple of 64.
__device__ u64 gather_periodic(const u64 *row, usize p, usize width) {
    u64 v = 0;
    int got = 0;
    while (got < 64) {
        const int off = (int)(p & 63);
        usize avail = width - p;
        if (avail > (usize)(64 - off)) avail = 64 - off;
        const int take = avail < (usize)(64 - got) ? (int)avail : 64 - got;
        u64 bits = row[p >> 6] >> off;
        if (take < 64) bits &= (1ull << take) - 1;
        v |= bits << got;
        got += take;
        p += take;
        if (p == width) p = 0;
    }
    return v;
}

// How a lane reads its word of a row.
enum LoadMode { LOAD_DIRECT, LOAD_ZERO, LOAD_GATHER };

// Rows are loaded this many steps before level 1 takes them (the loop's unrolling
// too): one step of GENS levels does not cover a DRAM miss with few warps per SM.
constexpr int AHEAD = 3;

// One warp's strip: where it is and how its lane reads and writes.
template <bool TORUS>
struct Strip {
    const u64 *__restrict__ src;
    u64 *__restrict__ dst;
    usize width, height, wpr;
    usize y0, rows;
    long long first_row;  // the first row read: y0 - GENS
    usize loads;          // rows read: rows + 2 GENS
    long long j;          // this lane's word
    LoadMode mode;
    usize word;           // LOAD_DIRECT: the word read; LOAD_GATHER: its first cell
    u64 keep;             // DEAD: the bits of this lane's word inside the grid
    bool writes;
    u64 store_mask;
    usize torus_row;      // TORUS: the row of the next load

    // Row `first_row + i` of generation 0, as this lane's word; zero past the rows read.
    __device__ __forceinline__ Cells load(long long i) {
        u64 w = 0;
        if (i >= 0 && (usize)i < loads) {
            if (TORUS) {
                const u64 *row = src + torus_row * wpr;
                w = mode == LOAD_DIRECT ? __ldg(row + word) : gather_periodic(row, word, width);
                torus_row = torus_row + 1 == height ? 0 : torus_row + 1;
            } else {
                const long long r = first_row + i;
                if (mode == LOAD_DIRECT && r >= 0 && r < (long long)height) w = __ldg(src + (usize)r * wpr + word);
            }
        }
        return split(w);
    }

    // Step t (S = t mod 3): level g takes what level g - 1 produced at step t - 1 (level
    // 1, the row loaded AHEAD steps ago) and produces row first_row + t - 2g; level
    // GENS's row, y0 + t - 3 GENS, is written.
    template <int S>
    __device__ __forceinline__ void step(usize t, Level (&levels)[GENS], Cells (&feed)[GENS], Cells (&queue)[AHEAD]) {
#pragma unroll
        for (int g = GENS; g >= 1; --g) {
            Cells out = advance<S>(levels[g - 1], g == 1 ? queue[S] : feed[g - 1]);
            if (!TORUS) {
                const long long r = first_row + (long long)t - 2 * g;
                const u64 m = (r >= 0 && r < (long long)height) ? keep : 0;
                out.lo &= (u32)m;
                out.hi &= (u32)(m >> 32);
            }
            if (g < GENS) {
                feed[g] = out;
            } else if (t >= 3 * GENS && t - 3 * GENS < rows && writes) {
                dst[(y0 + t - 3 * GENS) * wpr + (usize)j] = join(out) & store_mask;
            }
        }
        queue[S] = load((long long)t + AHEAD - 1);
    }
};

template <bool TORUS>
__device__ __forceinline__ void life_steps(const u64 *__restrict__ src, u64 *__restrict__ dst, usize width,
                                           usize height, usize wpr, usize strip_rows, usize ncols, usize nwarps) {
    const usize warp = (usize)blockIdx.x * WARPS + threadIdx.x / 32;
    if (warp >= nwarps) return;  // whole warps only: the shuffles need every lane
    const int lane = threadIdx.x & 31;
    const usize col = warp % ncols, strip_index = warp / ncols;
    Strip<TORUS> s;
    s.src = src;
    s.dst = dst;
    s.width = width;
    s.height = height;
    s.wpr = wpr;
    s.y0 = strip_index * strip_rows;
    s.rows = height - s.y0 < strip_rows ? height - s.y0 : strip_rows;
    s.first_row = (long long)s.y0 - GENS;
    s.loads = s.rows + 2 * GENS;
    s.j = (long long)(col * OUT_LANES) - 1 + lane;
    const long long j = s.j;

    const usize full_words = width / 64;  // words with no bit past the width
    const u64 last_mask = (width & 63) ? (1ull << (width & 63)) - 1 : ~0ull;
    s.mode = LOAD_DIRECT;
    s.word = (usize)j;
    s.keep = ~0ull;
    if (TORUS) {
        if ((width & 63) == 0) {
            s.word = j < 0 ? wpr - 1 : (usize)j % wpr;
        } else if (j < 0 || (usize)j >= full_words) {
            s.mode = LOAD_GATHER;
            s.word = j < 0 ? (width - 64 % width) % width : ((usize)j * 64) % width;
        }
        const long long h = (long long)height;
        s.torus_row = (usize)(((s.first_row % h) + h) % h);
    } else {
        if (j < 0 || (usize)j >= wpr) {
            s.mode = LOAD_ZERO;
            s.keep = 0;
        } else if ((usize)j == wpr - 1) {
            s.keep = last_mask;
        }
        s.torus_row = 0;
    }
    s.writes = lane >= 1 && lane <= OUT_LANES && j >= 0 && (usize)j < wpr;
    s.store_mask = (j >= 0 && (usize)j == wpr - 1) ? last_mask : ~0ull;

    Level levels[GENS];
    Cells feed[GENS];  // feed[g]: what level g produced last step (feed[0] unused)
    Cells queue[AHEAD];
#pragma unroll
    for (int g = 0; g < GENS; ++g) {
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            levels[g].lo[k] = RowSums{0, 0};
            levels[g].hi[k] = RowSums{0, 0};
            levels[g].cells[k] = Cells{0, 0};
        }
        feed[g] = Cells{0, 0};
    }
    // queue[k] is what level 1 takes at step k: row first_row + k - 1.
#pragma unroll
    for (int k = 0; k < AHEAD; ++k) queue[k] = s.load(k - 1);

    const usize iterations = s.rows + 3 * GENS;
    static_assert(AHEAD == 3, "the unrolled steps below rotate three slots");
    for (usize t = 0; t < iterations; t += 3) {
        s.template step<0>(t, levels, feed, queue);
        s.template step<1>(t + 1, levels, feed, queue);
        s.template step<2>(t + 2, levels, feed, queue);
    }
}

// src -> dst, GENS generations. Warps are numbered column strip fastest: warp w
// covers words 30 (w % ncols) - 1 .. + 31 of rows strip_rows (w / ncols) onwards.
extern "C" __global__ void __launch_bounds__(32 * WARPS)
    life_torus(const u64 *__restrict__ src, u64 *__restrict__ dst, usize width, usize height, usize wpr,
               usize strip_rows, usize ncols, usize nwarps) {
    gp::wait_for_prior_grids();
    life_steps<true>(src, dst, width, height, wpr, strip_rows, ncols, nwarps);
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    life_dead(const u64 *__restrict__ src, u64 *__restrict__ dst, usize width, usize height, usize wpr,
              usize strip_rows, usize ncols, usize nwarps) {
    gp::wait_for_prior_grids();
    life_steps<false>(src, dst, width, height, wpr, strip_rows, ncols, nwarps);
}
