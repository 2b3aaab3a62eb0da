// Life-like rules on a bit-packed grid, GP_GENS generations per launch.
//
// Layout (src/life/mod.rs): row y is `wpr` u64 words, cell x is bit x % 64 of word
// x / 64, bits past the width are 0. Each lane owns one u64 word (64 cells, as two
// 32-bit halves) of a column strip; a warp covers 32 adjacent words of which lanes
// 1..30 are written and lanes 0 and 31 are halo: a generation corrupts one bit per
// generation from the strip's outer edges inwards, so one halo word absorbs up to 64
// generations. Warps are independent (no shared memory, no block barrier).
//
// A warp walks down its strip of rows. Generation g (1..GENS) is a level of a register
// pipeline: each iteration, level g takes the row level g-1 produced in the previous
// iteration, so the GENS levels of one iteration are independent of one another and
// the scheduler can overlap their shuffles and logic. Level g keeps, in registers,
// the 2-bit horizontal sums of the two rows above the incoming one and the cells of
// the middle row; with the incoming row's sums it has the 3x3 block count of every
// cell of the middle row and applies the rule: per 64 cells and generation,
// 2 shuffles, 4 funnel shifts, 4 LOP3 (horizontal full adders), 16 LOP3-class ops
// (vertical adders) and the rule's few bit-plane terms.
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

// One level's registers: the sums of the two rows above the incoming one, and the
// cells of the middle row.
struct Level {
    RowSums up_lo, up_hi, mid_lo, mid_hi;
    Cells mid;
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

// Feeds row `in` to a level; returns the next generation of the level's middle row.
__device__ __forceinline__ Cells advance(Level &L, Cells in) {
    const u32 left_hi = __shfl_up_sync(FULL_MASK, in.hi, 1);    // lane - 1's cells 32..63
    const u32 right_lo = __shfl_down_sync(FULL_MASK, in.lo, 1); // lane + 1's cells 0..31
    // Cell x - 1 moved to bit x (left) and cell x + 1 to bit x (right).
    const u32 l_lo = __funnelshift_l(left_hi, in.lo, 1);
    const u32 l_hi = __funnelshift_l(in.lo, in.hi, 1);
    const u32 r_lo = __funnelshift_r(in.lo, in.hi, 1);
    const u32 r_hi = __funnelshift_r(in.hi, right_lo, 1);
    const RowSums in_lo = row_sums(l_lo, in.lo, r_lo);
    const RowSums in_hi = row_sums(l_hi, in.hi, r_hi);
    const Cells out{next_state(L.up_lo, L.mid_lo, in_lo, L.mid.lo), next_state(L.up_hi, L.mid_hi, in_hi, L.mid.hi)};
    L.up_lo = L.mid_lo;
    L.up_hi = L.mid_hi;
    L.mid_lo = in_lo;
    L.mid_hi = in_hi;
    L.mid = in;
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

template <bool TORUS>
__device__ __forceinline__ void life_steps(const u64 *__restrict__ src, u64 *__restrict__ dst, usize width,
                                           usize height, usize wpr, usize strip_rows, usize ncols, usize nwarps) {
    const usize warp = (usize)blockIdx.x * WARPS + threadIdx.x / 32;
    if (warp >= nwarps) return;  // whole warps only: the shuffles need every lane
    const int lane = threadIdx.x & 31;
    const usize col = warp % ncols, strip = warp / ncols;
    const long long j = (long long)(col * OUT_LANES) - 1 + lane;  // this lane's word
    const usize y0 = strip * strip_rows;
    const usize rows = height - y0 < strip_rows ? height - y0 : strip_rows;

    const usize full_words = width / 64;  // words with no bit past the width
    const u64 last_mask = (width & 63) ? (1ull << (width & 63)) - 1 : ~0ull;
    LoadMode mode = LOAD_DIRECT;
    usize word = (usize)j;  // LOAD_DIRECT: the word read; LOAD_GATHER: its first cell
    u64 keep = ~0ull;       // DEAD: the bits of this lane's word inside the grid
    if (TORUS) {
        if ((width & 63) == 0) {
            word = j < 0 ? wpr - 1 : (usize)j % wpr;
        } else if (j < 0 || (usize)j >= full_words) {
            mode = LOAD_GATHER;
            word = j < 0 ? (width - 64 % width) % width : ((usize)j * 64) % width;
        }
    } else {
        if (j < 0 || (usize)j >= wpr) {
            mode = LOAD_ZERO;
            keep = 0;
        } else if ((usize)j == wpr - 1) {
            keep = last_mask;
        }
    }
    const bool writes = lane >= 1 && lane <= OUT_LANES && j >= 0 && (usize)j < wpr;
    const u64 store_mask = (j >= 0 && (usize)j == wpr - 1) ? last_mask : ~0ull;

    Level levels[GENS];
    Cells feed[GENS];  // feed[g - 1]: the row level g takes this iteration
#pragma unroll
    for (int g = 0; g < GENS; ++g) {
        levels[g] = Level{{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}};
        feed[g] = Cells{0, 0};
    }

    // Level 0 (the load) reads row y0 - GENS + t at iteration t; level g produces
    // row y0 - GENS + t - 2g; level GENS, row y0 + t - 3 GENS, which is written.
    const long long first_row = (long long)y0 - GENS;
    const usize loads = rows + 2 * GENS;
    const usize iterations = rows + 3 * GENS;
    usize torus_row = 0;
    if (TORUS) {
        const long long h = (long long)height;
        torus_row = (usize)(((first_row % h) + h) % h);
    }
    for (usize t = 0; t < iterations; ++t) {
        // Highest level first: each takes what the level below produced last iteration.
#pragma unroll
        for (int g = GENS; g >= 1; --g) {
            Cells out = advance(levels[g - 1], feed[g - 1]);
            if (!TORUS) {
                const long long r = first_row + (long long)t - 2 * g;
                const u64 m = (r >= 0 && r < (long long)height) ? keep : 0;
                out.lo &= (u32)m;
                out.hi &= (u32)(m >> 32);
            }
            if (g < GENS) {
                feed[g] = out;
            } else if (t >= 3 * GENS && writes) {
                const usize y = y0 + t - 3 * GENS;
                dst[y * wpr + (usize)j] = join(out) & store_mask;
            }
        }
        u64 w = 0;
        if (t < loads) {
            if (TORUS) {
                const u64 *row = src + torus_row * wpr;
                w = mode == LOAD_DIRECT ? __ldg(row + word) : gather_periodic(row, word, width);
                torus_row = torus_row + 1 == height ? 0 : torus_row + 1;
            } else {
                const long long r = first_row + (long long)t;
                if (mode == LOAD_DIRECT && r >= 0 && r < (long long)height) w = __ldg(src + (usize)r * wpr + word);
            }
        }
        feed[0] = split(w);
    }
}

// src -> dst, GENS generations. Warps are numbered column strip fastest: warp w
// covers words 30 (w % ncols) - 1 .. + 31 of rows strip_rows (w / ncols) onwards.
extern "C" __global__ void __launch_bounds__(32 * WARPS)
    life_torus(const u64 *__restrict__ src, u64 *__restrict__ dst, usize width, usize height, usize wpr,
               usize strip_rows, usize ncols, usize nwarps) {
    life_steps<true>(src, dst, width, height, wpr, strip_rows, ncols, nwarps);
}

extern "C" __global__ void __launch_bounds__(32 * WARPS)
    life_dead(const u64 *__restrict__ src, u64 *__restrict__ dst, usize width, usize height, usize wpr,
              usize strip_rows, usize ncols, usize nwarps) {
    life_steps<false>(src, dst, width, height, wpr, strip_rows, ncols, nwarps);
}
