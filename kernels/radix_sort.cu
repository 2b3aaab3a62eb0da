// Device-wide LSD radix sort in the manner of Onesweep (Adinets & Merrill, 2022),
// in place on the caller's keys (and values) with one alternate buffer of each.
//
//   radix_histogram  one read of the keys: the histogram of every digit at once, and
//                    whether the keys are already in the wanted order, or in exactly
//                    the opposite order with no two equal; its last block then
//                    plans the passes: each pass's digit starts, which passes can be
//                    skipped, and where each pass reads from (radix_histogram.cu);
//   radix_pass       one per digit, least significant first: a tile ranks its keys
//                    by the digit in the block (common/block_radix_rank.cuh), takes
//                    its digit offsets by look-back over earlier tiles' counts
//                    (common/digit_lookback.cuh), and scatters keys and values
//                    together through shared memory, so each digit's run is written
//                    together;
//   radix_finish     the reversal of an input in exactly the opposite order, or the
//                    copy back when the last pass wrote the alternate buffer.
// A sort into another buffer (`out` given: the multi-rank sort keeps its sorted shard
// apart from its output) has its last active pass write there, and the finish reverse
// or copy the input into it where no pass ran; the input's buffers serve as scratch.
//
// Float keys cost several instructions to map to their ordered pattern (integers one
// XOR). When the histogram finds no NaN among them, the mapping is one-to-one, so the
// first active pass stores the keys mapped, the passes between move them as they
// are, and the last active pass stores them back as they were; with a NaN (whose
// payload must survive) every pass maps on the fly.
//
// Every kernel after the histogram reads the plan and returns at once when it has
// nothing to do, so an already-sorted input costs one read. Pass kernels are
// persistent: each block takes tile after tile by ticket, so a tile only ever waits for
// tiles taken before it, by blocks that are running (with -DGP_ONE_TILE_BLOCKS=1 each
// block takes one ticket, and there are as many blocks as tiles).
//
// Pairs of a 4-byte key and a 4-byte value move between passes packed in one 8-byte
// element (see "Packed pairs" below).
//
// Keys alone of 1 byte (and of 2 bytes, from 2^23 keys) are sorted by counting
// instead (counting_sort.cu); these kernels still serve them with values, and short.
//
// Keys of more than 2^32 - 1 elements are sorted in portions of PORTION_TILES tiles per
// launch (look-back counts are 32-bit); each portion's last tile hands the digit
// starts of the next portion on through Control::chain.
//
// Instantiated by key and value width and by float keys or not (not by dtype):
// -DGP_KEY_BYTES=1|2|4|8 -DGP_VALUE_BYTES=0|1|2|4|8 -DGP_KEY_FLOAT=0|1; tuning
// -DGP_BLOCK_THREADS -DGP_ITEMS -DGP_MIN_BLOCKS -DGP_LOOKBACK_WINDOW -DGP_RANK_GROUP
// -DGP_EARLY_VALUES -DGP_ASYNC_VALUES -DGP_WHOLE_SCATTER -DGP_PACKED_PAIRS -DGP_RANK_LEAN -DGP_ONE_TILE_BLOCKS
// -DGP_HIST_BLOCK_THREADS (the finishing kernel's block) -DGP_PORTION_TILES;
// -DGP_PACKING_MODULE=1 for the module of radix_pass_packing alone (packed pairs); and
// -DGP_CONTROL_BYTES (the size the host allocates for Control) and
// -DGP_TILE_SHARED_BYTES (the dynamic shared memory it launches a pass with). The
// histogram and plan are a module of their own (radix_histogram.cu). Tuning lives in
// src/backend/cuda/radix_sort.rs.
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/radix_key.cuh"
#include "common/block_radix_rank.cuh"
#include "common/digit_lookback.cuh"
#include "common/block_scan.cuh"
#include "common/tile_io.cuh"
#include "common/async_copy.cuh"
#include "common/sort_types.cuh"
#include "radix_sort_control.cuh"


constexpr int BLOCK = GP_BLOCK_THREADS;
constexpr int ITEMS = GP_ITEMS;  // per thread
constexpr u32 TILE = (u32)BLOCK * ITEMS;
constexpr int MIN_BLOCKS = GP_MIN_BLOCKS;  // resident pass blocks per SM the registers must allow
constexpr int LOOKBACK_WINDOW = GP_LOOKBACK_WINDOW;  // predecessors a look-back reads at once
constexpr bool WHOLE_SCATTER = GP_WHOLE_SCATTER && !GP_KEY_FLOAT;  // see scatter()
// Pairs of a 4-byte key and a 4-byte value travel between passes packed, key and value
// side by side in one 8-byte element (see PackedPairs).
constexpr bool PACKED = GP_PACKED_PAIRS && GP_KEY_BYTES == 4 && GP_VALUE_BYTES == 4;
// Values of 4 and 8 bytes go from global memory to their ranked places in shared memory
// by asynchronous copies (cp.async), holding no registers while they travel.
// (Packed pairs are always staged so.)
constexpr bool ASYNC_VALUES = (GP_ASYNC_VALUES && (GP_VALUE_BYTES == 4 || GP_VALUE_BYTES == 8)) || PACKED;

constexpr usize PORTION = (usize)GP_PORTION_TILES * TILE;  // keys per pass launch

typedef gp::BlockRadixRank<BLOCK, ITEMS, RADIX_BITS, GP_RANK_GROUP> Rank;
typedef gp::DigitLookBack<RADIX> LookBack;

// ----------------------------------------------------------------------------------
// Packed pairs
// ----------------------------------------------------------------------------------
//
// A pass writes 8-byte elements to one run per digit measurably faster than 4-byte
// keys and 4-byte values to two (H100, ncu, 2^28: 1.92 ms a pass for u64 keys against
// 2.21 for u32/u32 pairs, the same bytes read and written). So with PACKED, when two
// or more passes run, the first reads the caller's keys and values and writes pairs
// packed (key in the low half, value in the high), the passes between move packed
// pairs, and the last unpacks them. Packed pairs live alternately in the alternate
// buffers (one array of n pairs: the alternate keys and values lie end to end) and in
// the caller's keys and values buffers (pairs 0 .. n/2-1 in the keys', the rest in the
// values'; the host asks for this only when n is even and both buffers are 8-byte
// aligned). The first pass reads, and the last writes, the caller's buffers or the
// alternate ones as the unpacked sort would, so the finishing copy is unchanged.
// The passes that write packed pairs (the first and the middle ones) run in a kernel
// of their own (radix_pass_packing), which holds the pairs in registers; radix_pass
// (the last pass) keeps a tile's keys in registers and copies its values to shared
// memory by cp.async. Measured on the H100 (2026-11-24, lone processes, u32/u32 2^28
// against CUB's 9.17-9.21 ms): unpacked 8.77 ms; packed, every pass in radix_pass,
// 8.59-8.61; the middle passes in the packing kernel 8.29-8.32; and the first pass
// too 8.15-8.21 (1.12-1.13x CUB). f32/u32 8.85 -> 8.21-8.23; 2^24 0.614 -> 0.596-0.603;
// 2^20 within the noise. (The last pass too in the packing kernel's way, pairs held
// in registers, was slower: 8.35-8.36 against 8.28-8.29 ms.) Tiles are 384 x 20 (x 22
// and up spill in both kernels), against x 30 unpacked.
typedef u64 Pair;

struct PackedPairs {
    Pair *lo, *hi;  // pairs 0 .. half-1 at lo, the rest from hi
    usize half;
    __device__ __forceinline__ Pair *at(usize e) const { return e < half ? lo + e : hi + (e - half); }
    // The `count` pairs from `first`, when they lie in one buffer; else null.
    __device__ __forceinline__ Pair *run(usize first, usize count) const {
        return first + count <= half ? lo + first : first >= half ? hi + (first - half) : nullptr;
    }
};

__device__ __forceinline__ K key_of(Pair x) { return K(x); }
__device__ __forceinline__ V value_of(Pair x) { return V(x >> 32); }

// ----------------------------------------------------------------------------------
// One digit pass over one portion
// ----------------------------------------------------------------------------------

// A tile's shared memory: the ranking's, then the keys in digit order, and the values
// in digit order beside them, so keys and values are staged together and written out
// in one loop after one barrier (PACKED: the pairs in digit order). It lives in
// dynamic shared memory (GP_TILE_SHARED_BYTES, sized by the host), so a tile may pass
// the 48 KiB a static array is held to.
template <bool PACKED_>
struct TileStorageOf {
    union {
        typename Rank::Storage rank;
        K keys[TILE];
        Pair pairs[1];  // unused
    };
    V values[HAS_VALUES ? TILE : 1];
};
template <>
struct TileStorageOf<true> {
    union {
        typename Rank::Storage rank;
        Pair pairs[TILE];
        K keys[1];  // unused
        V values[1];  // unused
    };
};
typedef TileStorageOf<PACKED> TileStorage;
static_assert(sizeof(TileStorage) <= GP_TILE_SHARED_BYTES, "the host launches GP_TILE_SHARED_BYTES");

// What every tile of one pass launch shares, kept in shared memory and read where it
// is used: held in registers through a tile's ranking, it would cost the registers
// that decide how many blocks an SM holds at once.
struct LaunchState {
    const K *src;
    K *dst;
    const V *vsrc;
    V *vdst;
    u32 *ticket;             // this launch's tile counter
    usize *bins_out;         // digit starts for the next portion (written by the last tile)
    usize len;               // keys in this portion
    usize bin_start[RADIX];  // digit d's first place in this portion
    u32 tiles;               // in this portion
    u32 tile;                // the tile being sorted (its ticket)
    bool no_nan;                       // float keys: Control's any_nan is clear
    // Float keys without NaN are read mapped after an earlier pass, and stored mapped
    // for a later one (Control's ran_before and runs_after).
    bool reads_mapped, stores_mapped;
    // Where digit d's keys (values) of the tile go: + a key's position in the tile's
    // digit order = its place (a pointer each, so a scatter is one multiply-add).
    K *key_dest[RADIX];
    V *value_dest[HAS_VALUES ? RADIX : 1];
    // PACKED: whether the pass reads packed pairs, where it reads and writes them, and
    // digit d's destination index (radix_pass_packing; radix_pass writes key_dest and
    // value_dest).
    bool reads_packed;
    PackedPairs packed_src, packed_dst;
    usize pair_dest[PACKED ? RADIX : 1];
};

// A pass launch as a tile sees it: the kernel's parameters, and the shared state.
struct Pass {
    u64 *state;  // the look-back's words
    Order order;
    u32 pass, epoch;
    usize portion_start;  // the portion's first key
    TileStorage &s;
    LaunchState &launch;
    // The tile being sorted: its ticket, first key and number of keys.
    __device__ __forceinline__ u32 tile() const { return launch.tile; }
    __device__ __forceinline__ usize tile_start() const { return portion_start + (usize)tile() * TILE; }
    __device__ __forceinline__ u32 valid() const {
        const usize left = launch.len - (usize)tile() * TILE;
        return left < TILE ? (u32)left : TILE;
    }
};

// How a tile holds its keys, and how the pass stores them (see the top of the file).
constexpr int HELD_RAW = 0;               // as the caller's: digits mapped on the fly
constexpr int HELD_MAPPED = 1;            // mapped, and stored mapped
constexpr int HELD_MAPPED_STORED_RAW = 2;  // mapped, and stored as the caller's

// The digit of each of a thread's items (RADIX - 1 for a missing item, which ranks
// last): keys, or packed pairs (E = Pair: the key is the low half).
template <int HELD, class E>
__device__ __forceinline__ void digits_of(const Pass &p, const E (&item)[ITEMS], u32 (&digit)[ITEMS], u32 first,
                                          u32 valid) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const K key = K(item[j]);
        const K ordered = HELD == HELD_RAW ? p.order.ordered(key) : key;
        digit[j] = first + j * gp::WARP < valid ? gp::digit_of<RADIX_BITS>(ordered, p.pass) : RADIX - 1;
    }
}

// The tile's keys (and values), in digit order in shared memory, out to their places:
// consecutive threads write consecutive keys of a digit's run. WHOLE: the tile is
// full, and no item is tested (no branch around each item).
//
// Full tiles take the untested scatter (WHOLE_SCATTER) for integer keys: on the H100
// (2026-11-24, three rounds) u32 2^28 5.045 -> 4.985 ms, 2^24 0.401 -> 0.393; pairs
// and u64 level. Float keys keep the tested one: their three ways of holding keys,
// each twice, make ptxas spill (f32 2^28 5.04 -> 5.24 ms). (Stores the compiler knows
// to be global, so that it could hoist the next items' shared loads above them, were
// slower still: u32 2^28 5.15, pairs 9.01 against 8.89 ms.)
// PACKED: the staged pairs out, packed (TO_PACKED) or to the keys' and values' buffers.
template <int HELD, bool WHOLE, bool TO_PACKED>
__device__ __forceinline__ void scatter_pairs(const Pass &p, u32 valid) {
    const PackedPairs dst = p.launch.packed_dst;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const u32 i = k * BLOCK + threadIdx.x;
        if (WHOLE || i < valid) {
            const Pair x = p.s.pairs[i];
            const K key = key_of(x);
            const u32 digit = gp::digit_of<RADIX_BITS>(HELD == HELD_RAW ? p.order.ordered(key) : key, p.pass);
            if constexpr (TO_PACKED) {
                *dst.at(p.launch.pair_dest[digit] + i) = x;  // (a later pass runs: stored as held)
            } else {
                p.launch.value_dest[digit][i] = value_of(x);
                p.launch.key_dest[digit][i] = HELD == HELD_MAPPED_STORED_RAW ? p.order.raw_no_nan(key) : key;
            }
        }
    }
}

template <int HELD, bool WHOLE>
__device__ __forceinline__ void scatter(const Pass &p, u32 valid) {
    if constexpr (PACKED) {
        scatter_pairs<HELD, WHOLE, false>(p, valid);  // (radix_pass never writes packed pairs)
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const u32 i = k * BLOCK + threadIdx.x;
            if (WHOLE || i < valid) {
                const K x = p.s.keys[i];
                const u32 digit = gp::digit_of<RADIX_BITS>(HELD == HELD_RAW ? p.order.ordered(x) : x, p.pass);
                if constexpr (HAS_VALUES) p.launch.value_dest[digit][i] = p.s.values[i];
                p.launch.key_dest[digit][i] = HELD == HELD_MAPPED_STORED_RAW ? p.order.raw_no_nan(x) : x;
            }
        }
    }
}

// The scatter for how the pass holds and stores its keys.
template <bool WHOLE>
__device__ __forceinline__ void scatter_as_held(const Pass &p) {
    if (!(GP_KEY_FLOAT && p.launch.no_nan)) scatter<HELD_RAW, WHOLE>(p, p.valid());
    else if (p.launch.stores_mapped) scatter<HELD_MAPPED, WHOLE>(p, p.valid());
    else scatter<HELD_MAPPED_STORED_RAW, WHOLE>(p, p.valid());
}

// The tile's values straight to their ranked places in shared memory (ASYNC_VALUES),
// `first`: the thread's first item in the tile (items warp-striped).
__device__ __forceinline__ void copy_values_to_ranks(const Pass &p, const u32 (&rank)[ITEMS], u32 first) {
    if constexpr (ASYNC_VALUES) {  // (cp.async moves 4, 8 or 16 bytes)
        // (Written apart from the keys' own index tests, which ptxas would otherwise
        // share and hold, in registers, through the whole ranking.)
        const V *src = p.launch.vsrc + p.tile_start() + first;
        const int left = int(p.valid()) - int(first);  // item j exists when j * WARP < left
#pragma unroll
        for (int j = 0; j < ITEMS; ++j)
            if (j * gp::WARP < left) gp::copy_async(&p.s.values[rank[j]], src + j * gp::WARP);
    }
}

// PACKED: where a tile's keys and values are read from: item i's key at keys[i * stride]
// and its value at values[i * stride] (stride 2 for packed pairs, each value beside its
// key). `keys` is null when the tile's packed pairs span both of the caller's buffers
// (one tile a sort): those are found pair by pair.
struct TileSource {
    const K *keys;
    const V *values;
    u32 stride;
    // Item i's key and value, wherever the tile lies.
    __device__ __forceinline__ const K *key(const Pass &p, u32 i) const {
        return keys != nullptr ? keys + i * stride : reinterpret_cast<const K *>(p.launch.packed_src.at(p.tile_start() + i));
    }
    __device__ __forceinline__ const V *value(const Pass &p, u32 i) const {
        return keys != nullptr ? values + i * stride : reinterpret_cast<const V *>(key(p, i) + 1);
    }
};

__device__ __forceinline__ TileSource tile_source(const Pass &p) {
    const usize start = p.tile_start();
    if (!p.launch.reads_packed) return {p.launch.src + start, p.launch.vsrc + start, 1};
    const K *keys = reinterpret_cast<const K *>(p.launch.packed_src.run(start, p.valid()));
    return {keys, reinterpret_cast<const V *>(keys + 1), 2};
}

// PACKED: the keys of a thread's items (`first`: its first item in the tile, items
// warp-striped); a missing item's key is 0.
__device__ __forceinline__ void load_pair_keys(const Pass &p, K (&key)[ITEMS], u32 first, u32 valid) {
    const TileSource in = tile_source(p);
    if (in.keys != nullptr && valid == TILE) {
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) key[j] = in.keys[(first + j * gp::WARP) * in.stride];
    } else {
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u32 i = first + j * gp::WARP;
            key[j] = i < valid ? *in.key(p, i) : K(0);
        }
    }
}

// PACKED: the tile's pairs to their ranked places in shared memory: each key stored
// (untested: a missing item ranks past the tile's keys, where no scatter reads), its
// value copied beside it by cp.async (travelling during the look-back). (A template,
// so that only the PACKED module instantiates it.)
template <class T = V>
__device__ __forceinline__ void stage_pairs(const Pass &p, const K (&key)[ITEMS], const u32 (&rank)[ITEMS],
                                            u32 first) {
    const TileSource in = tile_source(p);
    const int left = int(p.valid()) - int(first);  // item j exists when j * WARP < left
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        K *slot = reinterpret_cast<K *>(&p.s.pairs[rank[j]]);
        slot[0] = key[j];
        if (j * gp::WARP < left) gp::copy_async(reinterpret_cast<T *>(slot + 1), in.value(p, first + j * gp::WARP));
    }
}

// Thread d < RADIX, once the tile's counts are published (`total`: digit d's count in
// the tile; `offset`: where its run starts in the tile's digit order): the digit's
// count over earlier tiles by look-back, the tile's inclusive count published, and
// where the tile's run of the digit goes.
template <bool TO_PACKED>
__device__ __forceinline__ void place_digit(const Pass &p, u32 total, u32 offset) {
    const u32 d = threadIdx.x, tile = p.tile();
    const u32 before = tile == 0 ? 0 : LookBack::exclusive_prefix<LOOKBACK_WINDOW>(p.state, tile, d, p.epoch);
    if (tile != 0) LookBack::publish(p.state, tile, d, before + total, true, p.epoch);
    const usize bin_start = p.launch.bin_start[d];
    const usize dest = bin_start + before - offset;  // wraps back when a rank is added
    if constexpr (TO_PACKED) {
        p.launch.pair_dest[d] = dest;
    } else {
        p.launch.key_dest[d] = p.launch.dst + dest;
        if constexpr (HAS_VALUES) p.launch.value_dest[d] = p.launch.vdst + dest;
    }
    if (tile == p.launch.tiles - 1) p.launch.bins_out[d] = bin_start + before + total;
}

// One tile of a pass: rank its keys by the digit, take the digits' offsets by
// look-back, scatter keys and values.
__device__ __forceinline__ void sort_tile(const Pass &p) {
    const u32 lane = threadIdx.x % gp::WARP, warp = threadIdx.x / gp::WARP;
    const u32 span = warp * gp::WARP * ITEMS;  // the warp's first item in the tile
    // The tile's position is read again from shared memory in each phase, rather than
    // held through the ranking.
    K key[ITEMS];
    V value[ITEMS];  // unused (and dropped) without values
    u32 rank[ITEMS];  // each item's digit, then (Rank::rank) its place in the tile
    if constexpr (PACKED) {
        load_pair_keys(p, key, span + lane, p.valid());
    } else {
        const K *src = p.launch.src + p.tile_start();
        const u32 valid = p.valid();
        if (valid == TILE) {
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) key[j] = *(src + span + j * gp::WARP + lane);
        } else {
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                const u32 i = span + j * gp::WARP + lane;
                key[j] = i < valid ? *(src + i) : K(0);
            }
        }
    }
    auto load_values = [&] {
        const V *vsrc = p.launch.vsrc + p.tile_start();
        const u32 valid = p.valid();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u32 i = span + j * gp::WARP + lane;
            value[j] = i < valid ? *(vsrc + i) : V(0);  // defined everywhere: nothing kept from before
        }
    };
    if constexpr (HAS_VALUES && GP_EARLY_VALUES && !ASYNC_VALUES) load_values();  // latency hidden behind the ranking
    // Float keys without NaN are held mapped: mapped here by the first pass, as
    // stored by an earlier one after it.
    if (GP_KEY_FLOAT && p.launch.no_nan) {
        if (!p.launch.reads_mapped) {
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) key[j] = p.order.ordered_no_nan(key[j]);
        }
        digits_of<HELD_MAPPED>(p, key, rank, span + lane, p.valid());
    } else {
        digits_of<HELD_RAW>(p, key, rank, span + lane, p.valid());
    }

    const u32 total = Rank::count(rank, TILE - p.valid(), p.s.rank);
    const u32 d = threadIdx.x;
    if (d < RADIX) LookBack::publish(p.state, p.tile(), d, total, p.tile() == 0, p.epoch);
    const u32 offset = Rank::rank(rank, total, p.s.rank);
    // Keys and values into digit order in shared memory, to be written out together.
    // (A missing item ranks past every key, to a place >= valid that no scatter reads,
    // so every item is staged untested: no per-item predicate held through the ranking.)
    auto stage = [&] {
        if constexpr (PACKED) {
            stage_pairs(p, key, rank, span + lane);
        } else {
            gp::to_rank_order<true>(p.s.keys, key, rank, span + lane, TILE);
            if constexpr (ASYNC_VALUES) {
                copy_values_to_ranks(p, rank, span + lane);  // travelling during the look-back
            } else if constexpr (HAS_VALUES) {
                if constexpr (!GP_EARLY_VALUES) load_values();
                gp::to_rank_order<true>(p.s.values, value, rank, span + lane, TILE);
            }
        }
    };
    // With ASYNC_VALUES the tile is staged before its look-back, the values' copies
    // travelling during it; else after, as values in registers would be held through
    // it (and keys alone staged first measured slower: u32 2^28 5.17 against 5.05 ms).
    if constexpr (ASYNC_VALUES) stage();
    if (d < RADIX) place_digit<false>(p, total, offset);
    if constexpr (ASYNC_VALUES) gp::wait_async_copies();
    else stage();
    __syncthreads();
    if (WHOLE_SCATTER && p.valid() == TILE) scatter_as_held<true>(p);
    else scatter_as_held<false>(p);
    // The tile loop's closing barrier orders these reads before shared memory is reused.
}

// PACKED: a tile of a pass that writes packed pairs (the first, from the caller's keys
// and values, or a middle one, from packed pairs), in a kernel of its own
// (radix_pass_packing), which holds each pair in registers as 8-byte keys are held:
// in radix_pass, whose ways of reading and writing share its registers, pairs so held
// spilled at every tile of 16 items and up.
__device__ __forceinline__ void sort_packing_tile(const Pass &p) {
    const u32 lane = threadIdx.x % gp::WARP, warp = threadIdx.x / gp::WARP;
    const u32 first = warp * gp::WARP * ITEMS + lane;  // the thread's first item in the tile
    Pair pair[ITEMS];
    u32 rank[ITEMS];  // each item's digit, then its place in the tile
    if (!p.launch.reads_packed) {  // the first pass: float keys without NaN mapped here
        const u32 valid = p.valid();
        const K *keys = p.launch.src + p.tile_start();
        const V *values = p.launch.vsrc + p.tile_start();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u32 i = first + j * gp::WARP;
            K key = valid == TILE || i < valid ? keys[i] : K(0);
            const V value = valid == TILE || i < valid ? values[i] : V(0);
            if (GP_KEY_FLOAT && p.launch.no_nan) key = p.order.ordered_no_nan(key);
            pair[j] = Pair(value) << 32 | key;
        }
    } else {
        const u32 valid = p.valid();
        const Pair *run = p.launch.packed_src.run(p.tile_start(), valid);
        if (run != nullptr && valid == TILE) {
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) pair[j] = run[first + j * gp::WARP];
        } else {  // the tile's end, or the one tile that spans both of the caller's buffers
#pragma unroll
            for (int j = 0; j < ITEMS; ++j) {
                const u32 i = first + j * gp::WARP;
                pair[j] = i < valid ? *p.launch.packed_src.at(p.tile_start() + i) : Pair(0);
            }
        }
    }
    // (Float keys without NaN are held mapped; see the top.)
    const bool mapped = GP_KEY_FLOAT && p.launch.no_nan;
    if (mapped) digits_of<HELD_MAPPED>(p, pair, rank, first, p.valid());
    else digits_of<HELD_RAW>(p, pair, rank, first, p.valid());
    const u32 total = Rank::count(rank, TILE - p.valid(), p.s.rank);
    const u32 d = threadIdx.x;
    if (d < RADIX) LookBack::publish(p.state, p.tile(), d, total, p.tile() == 0, p.epoch);
    const u32 offset = Rank::rank(rank, total, p.s.rank);
    if (d < RADIX) place_digit<true>(p, total, offset);
    // Staged after the look-back, as 8-byte keys are (staged before it: u32/u32 2^28
    // 8.29-8.31 -> 8.33-8.34 ms, H100 2026-11-24). A missing item ranks past the
    // tile's keys, where no scatter reads.
    gp::to_rank_order<true>(p.s.pairs, pair, rank, first, TILE);
    __syncthreads();
    const bool whole = WHOLE_SCATTER && p.valid() == TILE;
    if (mapped) {
        if (whole) scatter_pairs<HELD_MAPPED, true, true>(p, TILE);
        else scatter_pairs<HELD_MAPPED, false, true>(p, p.valid());
    } else {
        if (whole) scatter_pairs<HELD_RAW, true, true>(p, TILE);
        else scatter_pairs<HELD_RAW, false, true>(p, p.valid());
    }
}

// A launch's state, one copy a kernel (radix_pass_packing runs both run_pass
// instantiations below).
__shared__ LaunchState launch_state;

// A pass over one portion, once the grids ahead are done: the kernels below, for the
// passes each takes.
// `out`, `out_values` (null: in place): where the last pass that runs writes instead
// (radix_finish covers a sort that runs none).
template <bool PACKING>
__device__ __forceinline__ void run_pass(K *keys, K *alt, V *values, V *alt_values, usize n, usize portion_start,
                                         Control *ctl, u64 *state, u32 pass, u32 portion, u32 key_order, u32 epoch,
                                         u32 packed, K *out, V *out_values) {
    if (ctl->mode != MODE_DIGITS || !ctl->active[pass]) return;
    // Packed pairs: a pass before another writes them, in radix_pass_packing.
    if (PACKED && packed && (ctl->runs_after[pass] != 0) != PACKING) return;  // the other kernel's
    extern __shared__ __align__(16) unsigned char dynamic_smem[];
    TileStorage &s = *reinterpret_cast<TileStorage *>(dynamic_smem);
    LaunchState &launch = launch_state;
    // Thread d notes digit d's first place in this portion (loaded once: the tile
    // loop's look-backs then wait on nothing else); thread 0 the rest. The first
    // ticket's barrier publishes them.
    if (threadIdx.x < RADIX) {
        const usize *bins_in = portion == 0 ? ctl->bins[pass] : ctl->chain[(portion - 1) & 1];
        launch.bin_start[threadIdx.x] = bins_in[threadIdx.x];
    }
    if (threadIdx.x == 0) {
        const bool from_alt = ctl->from_alt[pass];
        launch.src = from_alt ? alt : keys;
        launch.dst = from_alt ? keys : alt;
        launch.vsrc = from_alt ? alt_values : values;
        launch.vdst = from_alt ? values : alt_values;
        if (out != nullptr && ctl->runs_after[pass] == 0) {  // (never a packing pass)
            launch.dst = out;
            launch.vdst = out_values;
        }
        launch.ticket = &ctl->tickets[pass][portion];
        launch.bins_out = ctl->chain[portion & 1];
        const usize len = n - portion_start < PORTION ? n - portion_start : PORTION;
        launch.len = len;
        launch.tiles = (u32)((len + TILE - 1) / TILE);
        launch.no_nan = ctl->any_nan == 0;
        launch.reads_mapped = ctl->ran_before[pass] != 0;
        launch.stores_mapped = ctl->runs_after[pass] != 0;
        // PACKED (`packed`: the host found n even and the caller's buffers 8-byte
        // aligned): a pass after another reads packed pairs, one before another writes
        // them (radix_pass_packing); those in odd places among the passes that run
        // (from_alt) read the alternate buffers and write the caller's.
        if constexpr (PACKED) {
            launch.reads_packed = packed && launch.reads_mapped;
            const PackedPairs alternate{reinterpret_cast<Pair *>(alt), reinterpret_cast<Pair *>(alt), n};
            const PackedPairs callers{reinterpret_cast<Pair *>(keys), reinterpret_cast<Pair *>(values), n / 2};
            launch.packed_src = from_alt ? alternate : callers;
            launch.packed_dst = from_alt ? callers : alternate;
        }
    }
    const Pass p{state, Order(key_order), pass, epoch, portion_start, s, launch};
    for (;;) {
        // (Taking the next ticket while working on this tile was measured: no faster
        // for keys, much slower for pairs, as a slow tile then holds up its successor.)
        if (threadIdx.x == 0) launch.tile = atomicAdd(launch.ticket, 1u);
        __syncthreads();
        if (launch.tile >= launch.tiles) return;
        if constexpr (PACKING) sort_packing_tile(p);
        else sort_tile(p);
        // (-DGP_ONE_TILE_BLOCKS=1, knob radix.<kind>.one_tile_blocks<key bytes>) One
        // tile a block, as many blocks as tiles (as CUB does): nothing is carried
        // from tile to tile.
        if (GP_ONE_TILE_BLOCKS) return;
        __syncthreads();  // every thread has read launch.tile before the next ticket
    }
}

#if !GP_PACKING_MODULE
// Every pass but, with packed pairs, those that write them.
extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
radix_pass(K *keys, K *alt, V *values, V *alt_values, usize n, usize portion_start, Control *ctl, u64 *state,
           u32 pass, u32 portion, u32 key_order, u32 epoch, u32 packed, K *out, V *out_values) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    run_pass<false>(keys, alt, values, alt_values, n, portion_start, ctl, state, pass, portion, key_order, epoch,
                    packed, out, out_values);
}

#else  // (the packing module, of PACKED pairs)
static_assert(PACKED, "only packed pairs have a packing module");
// With packed pairs, every pass but the last digit's: those before another active pass
// write packed pairs; the last active one, when a later digit is skipped, unpacks as
// radix_pass would (so the host launches one kernel a pass: radix_pass beside it,
// returning at once, took 3 µs of a 2^20-pair sort's 3 passes each, H200 ncu).
extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
radix_pass_packing(K *keys, K *alt, V *values, V *alt_values, usize n, usize portion_start, Control *ctl,
                  u64 *state, u32 pass, u32 portion, u32 key_order, u32 epoch, u32 packed, K *out, V *out_values) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    if (ctl->runs_after[pass] != 0)
        run_pass<true>(keys, alt, values, alt_values, n, portion_start, ctl, state, pass, portion, key_order, epoch,
                       packed, out, out_values);
    else
        run_pass<false>(keys, alt, values, alt_values, n, portion_start, ctl, state, pass, portion, key_order, epoch,
                        packed, out, out_values);
}
#endif

// ----------------------------------------------------------------------------------
// Finish: reverse, or copy back from the alternate buffer
// ----------------------------------------------------------------------------------

#if !GP_PACKING_MODULE  // (the packing module is radix_pass_packing alone)
constexpr int FINISH_BLOCK = GP_HIST_BLOCK_THREADS;

template <class T>
__device__ __forceinline__ void reverse_elements(T *x, usize n, usize first, usize stride) {
    for (usize i = first; i < n / 2; i += stride) {
        const T a = x[i], b = x[n - 1 - i];
        x[i] = b;
        x[n - 1 - i] = a;
    }
}

template <class T>
__device__ __forceinline__ void reverse_into(T *out, const T *x, usize n, usize first, usize stride) {
    for (usize i = first; i < n; i += stride) out[i] = x[n - 1 - i];
}

// A sort into `out` (not null): the input reversed into it, or copied where no pass
// ran (already in order, or one digit value everywhere); else the last pass wrote it.
__device__ __forceinline__ void finish_into(const K *keys, const V *values, usize n, const Control *ctl, K *out,
                                            V *out_values, usize first, usize stride) {
    bool ran = false;
#pragma unroll
    for (int p = 0; p < MAX_PASSES; ++p) ran |= ctl->active[p] != 0;
    if (ctl->mode == MODE_REVERSE) {
        reverse_into(out, keys, n, first, stride);
        if constexpr (HAS_VALUES) reverse_into(out_values, values, n, first, stride);
    } else if (ctl->mode != MODE_DIGITS || !ran) {
        gp::copy_elements(out, keys, n, first, stride);
        if constexpr (HAS_VALUES) gp::copy_elements(out_values, values, n, first, stride);
    }
}

extern "C" __global__ void __launch_bounds__(FINISH_BLOCK)
radix_finish(K *keys, const K *alt, V *values, const V *alt_values, usize n, const Control *ctl, K *out,
             V *out_values) {
    gp::wait_for_prior_grids();
    gp::let_next_grid_start();
    const usize first = (usize)blockIdx.x * FINISH_BLOCK + threadIdx.x, stride = (usize)gridDim.x * FINISH_BLOCK;
    if (out != nullptr) {
        finish_into(keys, values, n, ctl, out, out_values, first, stride);
    } else if (ctl->mode == MODE_REVERSE) {
        reverse_elements(keys, n, first, stride);
        if constexpr (HAS_VALUES) reverse_elements(values, n, first, stride);
    } else if (ctl->mode == MODE_DIGITS && ctl->copy_back) {
        gp::copy_elements(keys, alt, n, first, stride);
        if constexpr (HAS_VALUES) gp::copy_elements(values, alt_values, n, first, stride);
    }
}
#endif
