// Per-row selection over ragged rows (gpuprims_segmented_select): for each row
// [offsets[r], offsets[r + 1]) of `values`, its key of rank ks[r] (or the lower median).
//
//   segsel_short    its first blocks check the rows, a lane a few (the first bad row,
//                   the lowest index, kept), and file the long ones under their length
//                   class; the last of them (a lone one at once) posts the verdict and
//                   writes the class counts and the fault to the host's mapped report,
//                   which the host waits for (the call's one wait). Its other blocks
//                   select the short rows meanwhile, a warp a few (up to WARP *
//                   WARP_ITEMS keys, in registers; common/warp_bitwise_select.cuh for
//                   narrow keys, common/warp_radix_select.cuh for wide ones) and, under
//                   a clean verdict, write them to `out` (resident grids: a cooperative
//                   launch) or stage them.
//   segsel_commit   grids too large to be resident: the staged answers to `out`, when
//                   no row is bad.
//
// A bad row fails the call (`out` never written); otherwise the host launches each
// class of long rows, exactly sized from its count (segmented_select_long.cu, a module
// of its own), while the short rows' selection may still be running ahead of them.
//
// Keys are compared as ordered patterns (common/radix_key.cuh), so one module serves
// every dtype of a width; the answer is the pattern turned back into the key (every NaN
// comes back as the canonical quiet NaN). The offsets (u32 or u64) and ranks (u32, u64
// or none) are read through run-time flags (segmented_select_rows.cuh); the selection
// kernels clamp each row to the buffer, so they never read outside it whatever the
// offsets say.
//
// Instantiated per key width and float-ness: -DGP_KEY_BYTES -DGP_KEY_FLOAT and the
// tuning defines below (src/backend/cuda/segmented_select.rs).
#include "common/grid_dependency.cuh"
#include "segmented_select_rows.cuh"
#include "common/warp_radix_select.cuh"
#include "common/warp_bitwise_select.cuh"

constexpr int COMMIT_BLOCK = GP_COMMIT_BLOCK;
constexpr int WARP_BLOCK = GP_WARP_BLOCK;
// Short rows are many and each is a chain of dependent steps: GP_WARP_MIN_WARPS warps
// resident an SM (64: every slot) for keys up to 4 bytes, in the registers that leaves
// (wider keys would spill).
constexpr int WARP_MIN_BLOCKS =
    GP_KEY_BYTES <= 4 && GP_WARP_MIN_WARPS * gp::WARP >= WARP_BLOCK ? GP_WARP_MIN_WARPS * gp::WARP / WARP_BLOCK : 1;

// What is wrong with a row (the report's `fault`; 0: nothing). The order is the order
// in which a row is checked.
constexpr u32 FAULT_DECREASING = 1;
constexpr u32 FAULT_PAST_END = 2;
constexpr u32 FAULT_EMPTY = 3;
constexpr u32 FAULT_RANK = 4;

// A fault code fits the low FAULT_BITS of a word, with a row number (the counters'
// fault) or the call's number (the verdict) above it (the host's FAULT_BITS).
constexpr u32 FAULT_BITS = GP_FAULT_BITS;
constexpr u32 FAULT_MASK = (1u << FAULT_BITS) - 1;
static_assert(FAULT_RANK <= FAULT_MASK, "every fault code fits FAULT_BITS");

// Device counters: counts, fault and ticket are zero before a call and left zero by
// the block that publishes its report; the verdict is tagged with the call's number.
struct Counters {
    u32 counts[CLASSES];
    u64 fault;  // max over bad rows of ~(row << FAULT_BITS | fault): the lowest row wins
    // Blocks that have checked their rows (low half) and those among them that found a
    // bad row or a long one (high half): the last block learns from its own ticket
    // whether there is anything to read back.
    u64 ticket;
    // The call's number and its fault (0: none; verdict_in), once every row is
    // checked: the short rows' answers are written to `out` only under a clean one.
    // On a cache line of its own: the warps waiting for it poll it, and the blocks'
    // tickets should not queue behind their reads.
    alignas(128) u32 verdict;
};
static_assert(sizeof(Counters) == 256, "COUNTERS_BYTES in src/backend/cuda/segmented_select.rs");

// What the publishing block writes to the host's mapped memory, numbered by the call
// (src/backend/cuda/segmented_select.rs reads the same layout). A clean call with no
// long rows is one 8-byte write, `status`; otherwise the fields before it are written
// first and `status` says so.
struct Report {
    u32 counts[CLASSES];
    u64 row;               // the first bad row
    u64 begin, end, rank;  // its offsets and rank
    u64 status;            // the call's number (high half), DETAILED | the fault (low half)
};
constexpr u32 DETAILED = 1u << 8;  // counts, and for a fault its row, written

__device__ __forceinline__ u32 length_class(u64 n) {
    return n <= WARP_MAX ? CLASS_WARP
           : n <= MID_MAX ? CLASS_MID
           : n <= WIDE_MAX ? CLASS_WIDE
           : n <= WIDER_MAX ? CLASS_WIDER
                            : CLASS_LONG;
}

// The block whose ticket was the last: every row is checked. It reads back the counts
// and the first fault only when some block flagged one (else they are all zero),
// leaves the counters zeroed for the next call, posts the verdict for the blocks still
// selecting and the report for the host (which returns on it, while the short rows'
// selection goes on in stream order).
__device__ __forceinline__ void publish(const Rows &rows, Counters *ctr, Report *report, u32 seq, bool flagged) {
    volatile Counters *c = ctr;
    volatile Report *r = report;
    const u64 fault = flagged ? ~c->fault : ~0ull;  // all ones: none
    const u32 code = fault != ~0ull ? (u32)(fault & FAULT_MASK) : 0u;
    // The blocks waiting for it first.
    c->verdict = seq << FAULT_BITS | code;
    if (flagged) {
        for (u32 k = 0; k < CLASSES; ++k) {
            r->counts[k] = c->counts[k];
            c->counts[k] = 0;
        }
        c->fault = 0;
        if (code) {
            const u64 row = fault >> FAULT_BITS, begin = rows.offset(row), end = rows.offset(row + 1);
            r->row = row;
            r->begin = begin;
            r->end = end;
            r->rank = code == FAULT_RANK ? rows.rank(row, end - begin) : 0;
        }
        // The host spins on `status` and then reads the rest: the other fields reach
        // host memory first.
        __threadfence_system();
    }
    c->ticket = 0;
    r->status = (u64)seq << 32 | (flagged ? DETAILED : 0u) | code;
}

// The verdict word as it stands. A relaxed read: nothing else is read on the strength
// of it, and an acquire would invalidate the SM's L1 (other warps' keys and spills) at
// every poll.
__device__ __forceinline__ u32 verdict_word(const Counters *ctr) {
    return *(const volatile u32 *)&ctr->verdict;
}

// The verdict of call `seq` in a verdict word: its fault (0: none), or ~0u while not
// every row is checked. The host numbers calls 1..2^29 - 1 (segmented_select.rs:
// LAST_CALL_NUMBER), so the word's 29 bits hold the whole number, and a word of 0 (not
// read yet, or never written) matches no call.
__device__ __forceinline__ u32 verdict_in(u32 word, u32 seq) {
    return word >> FAULT_BITS == (seq & (~0u >> FAULT_BITS)) ? word & FAULT_MASK : ~0u;
}

__device__ __forceinline__ u32 verdict(const Counters *ctr, u32 seq) {
    return verdict_in(verdict_word(ctr), seq);
}

// The short rows' selection: bit by bit through warp sums (narrow keys: a few steps,
// no shared memory) or digit by digit through a shared histogram (wide keys, which
// mostly stop after a digit or two).
#if GP_WARP_BITWISE
typedef gp::WarpBitwiseSelect<U, WARP_ITEMS> ShortSelect;
typedef ShortSelect::Held Held;
struct ShortStorage {};
constexpr Held MISSING = ShortSelect::MISSING;  // the largest pattern, below no candidate
__device__ __forceinline__ U short_select(const Held (&keys)[WARP_ITEMS], u32 n, u32 rank, ShortStorage &) {
    return ShortSelect::select(keys, n, rank);
}
#else
typedef gp::WarpRadixSelect<U, WARP_ITEMS, RADIX_BITS> ShortSelect;
typedef U Held;
typedef ShortSelect::Storage ShortStorage;
constexpr Held MISSING = U(0);  // ignored: past the count
__device__ __forceinline__ U short_select(const Held (&keys)[WARP_ITEMS], u32 n, u32 rank, ShortStorage &s) {
    return ShortSelect::select(keys, n, rank, s);
}
#endif

// The keys of lane `owner`'s row (begin, n <= WARP_MAX: every lane passes its own) into
// the warp's first ceil(n / WARP) registers, ordered (the selection reads no others).
// Lanes past the row read its first key (no branch around the load), then pad.
__device__ __forceinline__ void load_row(Held (&keys)[WARP_ITEMS], const U *values, u64 begin, u32 n, int owner,
                                         const KeyOrder &order) {
    const u32 lane = threadIdx.x % gp::WARP;
    const U *row = values + gp::shfl(begin, owner);
    // Kept a pointer (not folded back into values plus a 64-bit index): a register's
    // address is then one multiply-add of a 32-bit index.
    asm("" : "+l"(row));
    const u32 count = gp::shfl(n, owner);
#pragma unroll
    for (int j = 0; j < WARP_ITEMS; ++j) {
        if (count <= u32(j * gp::WARP)) break;  // the same for the whole warp
        const u32 at = j * gp::WARP + lane;
        const bool in = at < count;
        const Held key = Held(order.ordered(__ldg(row + (in ? at : 0u))));
        keys[j] = in ? key : MISSING;
    }
}

// A warp's long rows into their class's list (row_ids holds CLASSES lists of `nrows`
// entries; class c's rows go to list c): after the rows of the class that came before
// the warp's (one count a class and warp), by rank among the warp's.
__device__ __forceinline__ void file_long_rows(u32 cls, u32 row, u32 nrows, Counters *ctr, u32 *row_ids) {
    const u32 lane = threadIdx.x % gp::WARP;
    for (u32 k = CLASS_WARP + 1; k < CLASSES; ++k) {
        const u32 peers = __ballot_sync(gp::FULL_MASK, cls == k);
        if (!peers) continue;  // the same for the whole warp
        const int leader = __ffs(peers) - 1;
        u32 base = 0;
        if (lane == leader) base = atomicAdd(&ctr->counts[k], __popc(peers));
        base = __shfl_sync(gp::FULL_MASK, base, leader);
        if (cls == k) row_ids[k * (u64)nrows + base + __popc(peers & ((1u << lane) - 1))] = row;
    }
}

// The checking blocks (the grid's first): their warps check the rows, a lane every
// 32nd of a warp's run of rows (offsets decreasing, past the end of the buffer, an
// empty row, a rank past the row; the first bad row, the lowest index, is kept) and
// file the long ones under their length class; then the block takes its ticket, and
// the last to do so (or a lone checking block, at once) publishes the verdict and the
// host's report. They are few and come first, so the report is out while the selecting
// blocks are still at work; the host sizes their runs (more rows a lane for larger
// calls, where the checking blocks would otherwise take many of the resident slots).
//
// The report waits on the slowest checking warp, which shares its scheduler with
// selecting warps that are then issuing every cycle: the path is kept short (rows in
// 32 bits, nrows < 2^31; the long-row filing only in warps that have one).
__device__ __forceinline__ void check_rows(const Rows &rows, u64 len, u32 nrows, u32 vblocks, Counters *ctr,
                                           u32 *row_ids, Report *report, u32 seq) {
    constexpr int WARPS = WARP_BLOCK / gp::WARP;
    const u32 warp = threadIdx.x / gp::WARP, lane = threadIdx.x % gp::WARP;
    const u32 run = rows.flags >> CHECK_RUN_SHIFT;  // rows a lane
    const u32 first = (blockIdx.x * WARPS + warp) * gp::WARP * run + lane;
    // This thread found a bad row or a long one (and wrote the counters or a row id).
    bool flagged = false;
    for (u32 i = 0; i < run; ++i) {  // the same for the whole warp
        const u32 row = first + i * gp::WARP;
        u32 cls = CLASSES, bad = 0;  // cls CLASSES: no row, a bad one or a short one
        if (row < nrows) {
            const u64 b = rows.offset(row), e = rows.offset(row + 1);
            if (e < b) bad = FAULT_DECREASING;
            else if (e > len) bad = FAULT_PAST_END;
            else if (e == b) bad = FAULT_EMPTY;
            else if (rows.rank(row, e - b) >= e - b) bad = FAULT_RANK;
            if (bad) atomicMax((unsigned long long *)&ctr->fault, ~((u64)row << FAULT_BITS | bad));
            else cls = length_class(e - b);
        }
        // A bad row or a long one: the publishing block has counters to read back.
        const bool long_row = cls - 1 < CLASSES - 1;  // CLASS_WARP < cls < CLASSES
        flagged |= bad || long_row;
        if (__any_sync(gp::FULL_MASK, long_row)) file_long_rows(cls, row, nrows, ctr, row_ids);
    }
    // The block's faults and filings are visible before it counts in. Only threads
    // that wrote something fence (a clean block of short rows wrote nothing, and a
    // fence costs a round trip to L2 even then).
    if (flagged) __threadfence();
    const bool block_flagged = __syncthreads_or(flagged);
    if (threadIdx.x != 0) return;
    // A lone checking block has seen every row (its threads' atomics are visible
    // past the barrier): no ticket.
    if (vblocks == 1) {
        publish(rows, ctr, report, seq, block_flagged);
        return;
    }
    const u64 mine = 1ull | (u64)block_flagged << 32;
    const u64 before = atomicAdd((unsigned long long *)&ctr->ticket, mine);
    if ((u32)before == vblocks - 1) {
        const bool any = (before + mine) >> 32 != 0;
        if (any) __threadfence();  // every block's counts and faults, before they are read
        publish(rows, ctr, report, seq, any);
    }
}

// A short row as a selecting block holds it: its count (0: not a short row, or past
// the rows: nothing to select), the rank wanted, and where its keys start.
struct ShortRow {
    u32 n, rank;
    u64 begin;
};

// The selecting blocks (the rest of the grid): the block's threads read its rows'
// offsets and ranks into shared memory, a thread a row; warp w takes `per_warp`
// (1..32) of them from w * per_warp, lane l the row w * per_warp + l, and selects
// those of up to WARP_MAX keys (in registers) one after another, the next row's keys
// loading while the current one is selected. Each row is clamped to the buffer, and a
// rank past it to its last key, so whatever the offsets say no read leaves the buffer;
// answers of bad rows are dropped with the rest under the verdict.
//
// `resident` (a cooperative launch: every block resident at once): the warp waits for
// the verdict, which the checking blocks reach without needing this one's slot, and
// writes its answers to `out` only if no row is bad. Otherwise (grids too large for
// that) the answers go to `staged`, and segsel_commit copies them once this launch has
// finished, under a clean verdict. Either way `out` is never written when a row is bad.
__device__ __forceinline__ void select_rows(const Rows &rows, const U *values, u64 len, u64 nrows, u32 per_warp,
                                            u32 sblock, const Counters *ctr, U *staged, bool resident, u32 seq, U *out,
                                            const KeyOrder &order) {
    constexpr int WARPS = WARP_BLOCK / gp::WARP;
    __shared__ ShortStorage storage[WARPS];
    __shared__ ShortRow held[WARP_BLOCK];
    const u32 warp = threadIdx.x / gp::WARP, lane = threadIdx.x % gp::WARP;
    // The block's rows, one a thread (up to WARP_BLOCK: per_warp <= 32), read once for
    // all its warps: with two rows a warp, one warp's lanes instead of every warp's
    // pair of lanes running the same instructions. Rows are below nrows + WARPS *
    // per_warp <= 2^31 + 1024 (the host caps nrows at 2^31 - 1): a u32.
    const u32 block_rows = WARPS * per_warp, first = sblock * block_rows;
    if (threadIdx.x < block_rows) {
        ShortRow mine{0, 0, 0};
        if (first + threadIdx.x < nrows) {
            const Row r = row_at(rows, first + threadIdx.x, len);
            const u64 size = r.end - r.begin;
            if (size - 1 < WARP_MAX)  // 1..WARP_MAX keys (0 wraps around)
                mine = ShortRow{(u32)size, r.rank < size ? (u32)r.rank : (u32)size - 1, r.begin};
        }
        held[threadIdx.x] = mine;
    }
    __syncthreads();
    // Lane l of warp w: row w * per_warp + l.
    const u32 row = first + warp * per_warp + lane;
    u64 begin = 0;
    u32 n = 0, rank = 0;  // a short row's count and rank fit 32 bits (registers are tight)
    if (lane < per_warp) {
        const ShortRow mine = held[warp * per_warp + lane];
        begin = mine.begin;
        n = mine.n;
        rank = mine.rank;
    }
    u32 todo = __ballot_sync(gp::FULL_MASK, n != 0);
    U found = 0;
    Held keys[WARP_ITEMS], next[WARP_ITEMS];
    int at = todo ? __ffs(todo) - 1 : 0;
    // The verdict word as lane 0 read it while the warp's last row was selected (the
    // checking blocks are mostly done by then): looked at only after the selection, so
    // the warp does not wait for its round trip first (0: not read).
    u32 peek = 0;
    if (todo) load_row(keys, values, begin, n, at, order);
    while (todo) {  // the same for the whole warp
        todo &= todo - 1;
        const int following = todo ? __ffs(todo) - 1 : 0;
        if (todo) load_row(next, values, begin, n, following, order);
        else if (resident && lane == 0) peek = verdict_word(ctr);
        const U f = short_select(keys, gp::shfl(n, at), gp::shfl(rank, at), storage[warp]);
        if ((int)lane == at) found = f;
#pragma unroll
        for (int j = 0; j < WARP_ITEMS; ++j) keys[j] = next[j];
        at = following;
    }
    if (!resident) {
        if (n != 0) staged[row] = order.raw(found);
        return;
    }
    u32 fault = verdict_in(peek, seq);
    if (lane == 0 && fault == ~0u)
        while ((fault = verdict(ctr, seq)) == ~0u) __nanosleep(256);
    fault = __shfl_sync(gp::FULL_MASK, fault, 0);
    if (fault == 0 && n != 0) out[row] = order.raw(found);
}

// The grid's first `vblocks` blocks check the rows, the others select the short ones.
extern "C" __global__ void __launch_bounds__(WARP_BLOCK, WARP_MIN_BLOCKS)
segsel_short(const U *values, u64 len, const void *offsets, const void *ranks, u32 flags, u64 nrows, u32 per_warp,
             u32 vblocks, Counters *ctr, u32 *row_ids, U *staged, u32 resident, Report *report, u32 seq, U *out,
             u32 key_order) {
    gp::wait_for_prior_grids();
    const Rows rows{offsets, ranks, flags};
    if (blockIdx.x < vblocks) check_rows(rows, len, (u32)nrows, vblocks, ctr, row_ids, report, seq);
    else select_rows(rows, values, len, nrows, per_warp, blockIdx.x - vblocks, ctr, staged, resident != 0, seq, out,
                     KeyOrder(key_order));
}

// Grids not launched cooperatively (too large to be resident at once, a refused
// cooperative launch, segsel.resident=0): `staged` to `out` once segsel_short has found
// no bad row (its verdict, final at this launch). Entries of long rows, which no one
// staged, are overwritten by their class's launch after this one.
extern "C" __global__ void __launch_bounds__(COMMIT_BLOCK)
segsel_commit(const U *staged, u64 nrows, const Counters *ctr, u32 seq, U *out) {
    gp::wait_for_prior_grids();
    if (verdict(ctr, seq) != 0) return;  // a bad row (never unposted here: stream order)
    for (u64 i = (u64)blockIdx.x * COMMIT_BLOCK + threadIdx.x; i < nrows; i += (u64)gridDim.x * COMMIT_BLOCK)
        out[i] = staged[i];
}
