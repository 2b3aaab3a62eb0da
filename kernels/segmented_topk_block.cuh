// One block finds the top k of one row (segmented_topk.cu's topk_block and topk_long,
// which include this after defining U, KeyOrder, Row and the tuning constants).
//
//   1. a threshold: the key of a rank somewhat past k among a sample of the row (the
//      whole row when it is short: then the k-th key itself), chosen so the keys at or
//      below it are, with high probability, at least k and at most CAP;
//   2. one read of the row gathers those keys, in index order, as candidates;
//   3. if they were too few or too many (ties, an unlucky sample), digit passes narrow
//      the candidates down instead (each a read of the row: a histogram of the digit
//      among keys matching the prefix so far) and a second gather collects them;
//   4. the candidates ordered (by counting when few, else a stable block radix sort);
//      the first m are written, values read back from the row as they are.
// Keys are ordered patterns: the best key is the smallest, ties go by index (the
// gather keeps index order and the sort is stable).
#pragma once
#include "common/block_digit_bucket.cuh"
#include "common/stable_rank.cuh"

template <int BLOCK_T, int SORT_ITEMS_T, int SMALL_ITEMS_T, int LOADS_T, u32 SAMPLE_T>
struct RowTopk {
    static constexpr u32 CAP = BLOCK_T * SORT_ITEMS_T;
    static constexpr u32 SMALL_CAP = BLOCK_T * SMALL_ITEMS_T;
    static constexpr int WARPS = BLOCK_T / gp::WARP;
    static constexpr int HISTS = WARPS < 8 ? WARPS : 8;  // histogram copies (warps share them)
    static constexpr int VEC = 16 / (int)sizeof(U);      // keys in a 16-byte load
    static constexpr int SAMPLE_ITEMS = (int)SAMPLE_T / BLOCK_T;
    static constexpr int CHUNK = 8;                      // the sample reads runs of 8 keys
    // Candidates up to this many are ordered by counting, a thread each (no sort).
    static constexpr u32 RANK_SORT_MAX = BLOCK_T < 256 ? BLOCK_T : 256;
    static_assert(LOADS_T % VEC == 0, "a thread's keys of a step are whole 16-byte loads");
    static_assert(BLOCK_T * LOADS_T < 65536, "a step's counts fit 16 bits");
    static_assert(BLOCK_T >= 2 * 16, "a thread for each key of a row's unaligned head and tail");
    static_assert(SAMPLE_T % BLOCK_T == 0 && SAMPLE_T % CHUNK == 0, "whole sample items a thread, whole runs");
    static_assert(SAMPLE_ITEMS <= LOADS_T, "a whole row in registers is one gather step");
    static_assert(LOADS_T <= 16, "two flag bits a key of a step fit a word");

    typedef gp::BlockRadixSort<U, BLOCK_T, SORT_ITEMS_T, RADIX_BITS, u16> BigSort;
    typedef gp::BlockRadixSort<U, BLOCK_T, SMALL_ITEMS_T, RADIX_BITS, u16> SmallSort;
    typedef gp::BlockScan<u32, BLOCK_T> Scan;
    typedef gp::BlockDigitBucket<u32, BLOCK_T, HISTS, RADIX> Digit;

    struct Storage {
        union {
            typename Digit::Counts counts;  // a digit pass's (the sample's: its first copy)
            U cand_key[CAP];
            typename BigSort::Storage big;
            typename SmallSort::Storage small;
        };
        u32 cand_idx[CAP];  // each candidate's index in the row
        typename Digit::Found found;
        u32 step_total;     // a gather step's counts (ahead << 16 | bucket)
        typename Scan::Storage scan;
    };

    // What the candidates are: keys whose pattern under `mask` is below `prefix`
    // (ahead) or equal to it (the bucket; only its first `need` when `exact`).
    struct Bound {
        U prefix, mask;
        bool exact;
        u32 need;
    };

    // A row of up to SAMPLE_T keys into registers, blocked (thread t holds keys
    // t * SAMPLE_ITEMS on, the rest padded with the largest pattern): the threshold's
    // select and the gather both take it from there, in one read of the row.
    __device__ __forceinline__ static void load_whole(const U *row, u32 n, const KeyOrder &order,
                                                      U (&keys)[SAMPLE_ITEMS]) {
#pragma unroll
        for (int j = 0; j < SAMPLE_ITEMS; ++j) {
            const u32 at = threadIdx.x * SAMPLE_ITEMS + j;
            keys[j] = at < n ? order.ordered(row[at]) : U(~U(0));
        }
    }

    // About the largest a count of `c` sampled keys stands for (in sampled keys): four
    // standard deviations above it, plus a few.
    __device__ __forceinline__ static float upper(float c) { return c + 4.f * sqrtf(c) + 4.f; }

    // 1. A threshold from a sample of the row (rows of up to SAMPLE keys: the row
    // itself): a radix select of the sample's key of rank r, stopped at the first
    // digit whose bucket and the keys ahead of it stand for few enough keys of the row;
    // the threshold is then the largest pattern of that bucket. The rank leaves a
    // margin past m for a sample (none for a whole row), so that the keys at or below
    // the threshold are, with high probability, at least m. False when no rank of the
    // sample would do.
    __device__ __forceinline__ static bool sample_threshold(const U *row, u32 n, u32 m, const KeyOrder &order,
                                                            Storage &s, U (&keys)[SAMPLE_ITEMS], U &threshold) {
        float per = 1.f;  // keys of the row each sampled key stands for
        u32 rank = m - 1;
        if (n <= SAMPLE_T) {
            // `keys` holds the whole row (load_whole).
        } else {
            // Enough sampled keys that the row's keys at or below the one found
            // outnumber m by about four standard deviations of the count, plus a few.
            per = (float)n / SAMPLE_T;
            const float want = (float)m / per, r = ceilf(want + 4.f * sqrtf(want) + 4.f);
            if (r > SAMPLE_T || upper(r) * per > 0.9f * CAP) return false;
            rank = (u32)r - 1;
            constexpr u32 RUNS = SAMPLE_T / CHUNK;
#pragma unroll
            for (int j = 0; j < SAMPLE_ITEMS; ++j) {
                const u32 e = j * BLOCK_T + threadIdx.x, run = e / CHUNK;
                const u32 at = (u32)((u64)run * (n - CHUNK) / (RUNS - 1)) + e % CHUNK;
                keys[j] = order.ordered(row[at]);
            }
        }
        // Stop once the candidates would be at most this many (a small sort's worth,
        // or twice what the rank asks for), or at the last digit.
        const float enough = fminf(fmaxf((float)RANK_SORT_MAX, 2.f * (rank + 1) * per), 0.9f * CAP);
        U prefix = 0, mask = 0;
        u32 ahead = 0;
        for (int shift = BITS - RADIX_BITS;; shift -= RADIX_BITS) {
            // One histogram for the whole block (the sample is small): no copies to add.
            u32 *counts = s.counts.hist[0];
            for (int d = threadIdx.x; d < RADIX; d += BLOCK_T) counts[d] = 0;
            __syncthreads();
#pragma unroll
            for (int j = 0; j < SAMPLE_ITEMS; ++j)
                gp::warp_count_digit(counts, u32(keys[j] >> shift) & (RADIX - 1), ((keys[j] ^ prefix) & mask) == 0);
            __syncthreads();
            const gp::Bucket<u32> b = Digit::search(counts, rank, s.found);
            const u32 bucket_count = counts[b.digit];
            __syncthreads();  // the counts and the bucket are reused
            prefix |= U(U(b.digit) << shift);
            mask |= U(U(RADIX - 1) << shift);
            ahead += b.before;
            rank -= b.before;
            // A sample's counts stand for the row's only roughly: their upper bound.
            const float count = (float)(ahead + bucket_count);
            if (shift == 0 || (per == 1.f ? count : upper(count) * per) <= enough) break;
        }
        threshold = U(prefix | U(~mask));
        return true;
    }

    // One digit pass (common/block_digit_bucket.cuh): the histogram of the digit at
    // `shift` among keys matching `prefix` under `mask`, 16-byte loads over the row's
    // aligned body (the few keys before and after it one a thread); every thread makes
    // the same calls (warp_count_digit wants the whole warp). Returns the bucket holding
    // `rank`.
    __device__ __forceinline__ static gp::Bucket<u32> digit_pass(const U *row, u32 n, U prefix, U mask, int shift,
                                                                 u32 rank, const KeyOrder &order, Storage &s,
                                                                 u32 &bucket_count) {
        Digit::begin(s.counts);
        u32 *hist = Digit::copy(s.counts);
        auto count = [&](U raw, bool in) {
            const U key = order.ordered(raw);
            gp::warp_count_digit(hist, u32(key >> shift) & (RADIX - 1), in && ((key ^ prefix) & mask) == 0);
        };
        u32 head, vectors, tail;
        split(row, n, head, vectors, tail);
        {
            const u32 t = threadIdx.x;
            const bool in_head = t < head, in_tail = t >= 16u && t - 16u < tail;
            const u32 at = in_head ? t : head + vectors * VEC + (t - 16u);
            count(in_head || in_tail ? row[at] : U(0), in_head || in_tail);
        }
        const uint4 *body = reinterpret_cast<const uint4 *>(row + head);
        constexpr int V = LOADS_T / VEC;
        for (u32 step = 0; step < vectors; step += V * BLOCK_T) {
            uint4 v[V];
#pragma unroll
            for (int u = 0; u < V; ++u) {
                const u32 at = step + u * BLOCK_T + threadIdx.x;
                v[u] = at < vectors ? body[at] : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int u = 0; u < V; ++u) {
                U keys[VEC];
                memcpy(keys, &v[u], 16);
#pragma unroll
                for (int e = 0; e < VEC; ++e) count(keys[e], step + u * BLOCK_T + threadIdx.x < vectors);
            }
        }
        return Digit::finish(s.counts, s.found, rank, bucket_count);
    }

    // The row's keys before its first 16-byte boundary (head, fewer than VEC <= 16),
    // the whole 16-byte loads after it (vectors) and the keys left over (tail).
    __device__ __forceinline__ static void split(const U *row, u32 n, u32 &head, u32 &vectors, u32 &tail) {
        const u32 misaligned = (u32)(((u64)row / sizeof(U)) % VEC);
        head = min(n, misaligned ? (u32)VEC - misaligned : 0u);
        vectors = (n - head) / VEC;
        tail = (n - head) % VEC;
    }

    // 3. Digit passes until the keys ahead of the bucket holding rank m - 1 and the
    // bucket itself are few enough (or the bucket is one key: exact).
    __device__ __forceinline__ static Bound narrow(const U *row, u32 n, u32 m, const KeyOrder &order, Storage &s) {
        Bound b{U(0), U(0), false, 0};
        u32 ahead = 0, rank = m - 1;
        for (int shift = BITS - RADIX_BITS;; shift -= RADIX_BITS) {
            u32 bucket_count;
            const gp::Bucket<u32> d = digit_pass(row, n, b.prefix, b.mask, shift, rank, order, s, bucket_count);
            b.prefix |= U(U(d.digit) << shift);
            b.mask |= U(U(RADIX - 1) << shift);
            ahead += d.before;
            rank -= d.before;
            const u32 c = ahead + bucket_count;
            if (shift == 0) {
                b.exact = true;
                break;
            }
            if (c <= SMALL_CAP || (c <= CAP && n > REFINE_LEN)) break;
        }
        b.need = m - ahead;
        return b;
    }

    // One step of the gather: this thread's keys, key[u] at row index first + u (mod
    // 2^32) and a key of the row where bit u of `in_row` is set, each a candidate or not;
    // one block scan gives every candidate its slot in index order (slots at CAP and past
    // are counted, not written). Only a thread's candidates are visited (they are few),
    // by their bits.
    template <int ITEMS>
    __device__ __forceinline__ static void gather_step(const U (&key)[ITEMS], u32 in_row, u32 first, const Bound &b,
                                                       u32 &ahead_so_far, u32 &bucket_so_far, Storage &s) {
        static_assert(ITEMS <= 32, "a bit a key");
        u32 ahead_bits = 0, bucket_bits = 0;
#pragma unroll
        for (int u = 0; u < ITEMS; ++u) {
            const U masked = U(key[u] & b.mask);
            const bool in = (in_row >> u) & 1;
            ahead_bits |= (u32)(in && masked < b.prefix) << u;
            bucket_bits |= (u32)(in && masked == b.prefix) << u;
        }
        const u32 packed = __popc(ahead_bits) << 16 | __popc(bucket_bits);
        u32 before_me;
        Scan::exclusive(packed, before_me, gp::SumOp<u32>(), s.scan, gp::NoPrefix());
        u32 ahead = ahead_so_far + (before_me >> 16), bucket = bucket_so_far + (before_me & 0xffff);
        for (u32 bits = ahead_bits | bucket_bits; bits; bits &= bits - 1) {
            const int u = __ffs(bits) - 1;
            // Index order: the candidates of this thread before key u.
            const u32 below = (1u << u) - 1;
            const u32 a = ahead + __popc(ahead_bits & below), k = bucket + __popc(bucket_bits & below);
            if ((ahead_bits >> u & 1) || !b.exact || k < b.need) {
                const u32 slot = a + (b.exact ? min(k, b.need) : k);
                if (slot < CAP) {
                    s.cand_key[slot] = select_key(key, u);
                    s.cand_idx[slot] = first + u;
                }
            }
        }
        __syncthreads();
        if (threadIdx.x == BLOCK_T - 1) s.step_total = before_me + packed;
        __syncthreads();
        ahead_so_far += s.step_total >> 16;
        bucket_so_far += s.step_total & 0xffff;
        __syncthreads();
    }

    // key[u] for a u known only at run time, without spilling the array to local memory.
    template <int ITEMS>
    __device__ __forceinline__ static U select_key(const U (&key)[ITEMS], int u) {
        U v = key[0];
#pragma unroll
        for (int j = 1; j < ITEMS; ++j)
            if (j == u) v = key[j];
        return v;
    }

    // 2. The candidates under `b`, in index order, into s.cand_key / s.cand_idx (the
    // first CAP of them); returns how many there are. The row is read as the 16-byte
    // vectors of the aligned grid that covers it: position p of the grid is row index
    // p - lead (lead: the keys of the first vector before the row), and only the grid's
    // first and last vectors may hold positions outside the row (load_vector reads
    // those vectors' row keys one by one: no read leaves the row). Threads take V
    // consecutive vectors a step, so one scan orders a step. (n + VEC < 2^32.)
    __device__ __forceinline__ static u32 gather(const U *row, u32 n, const Bound &b, const KeyOrder &order,
                                                 Storage &s) {
        constexpr int V = LOADS_T / VEC;
        const u32 lead = (u32)(((u64)row / sizeof(U)) % VEC);
        const u32 end = lead + n;  // past the row's last position
        const u32 vectors = (end + VEC - 1) / VEC;
        const uint4 *grid = reinterpret_cast<const uint4 *>(row - lead);
        u32 ahead = 0, bucket = 0;
        U key[LOADS_T];
        for (u32 step = 0; step < vectors; step += V * BLOCK_T) {
            const u32 mine = step + threadIdx.x * V;  // this thread's first vector
            uint4 v[V];
#pragma unroll
            for (int u = 0; u < V; ++u) v[u] = load_vector(grid, row, mine + u, lead, end);
#pragma unroll
            for (int u = 0; u < V; ++u) {
                U raw[VEC];
                memcpy(raw, &v[u], 16);
#pragma unroll
                for (int e = 0; e < VEC; ++e) key[u * VEC + e] = order.ordered(raw[e]);
            }
            const u32 first = mine * VEC;  // key[0]'s position
            gather_step(key, bits_below(min_past(end, first)) & ~bits_below(min_past(lead, first)), first - lead, b,
                        ahead, bucket, s);
        }
        return ahead + (b.exact ? min(bucket, b.need) : bucket);
    }

    // Vector j of the grid over positions [0, end) whose row starts at position `lead`:
    // one 16-byte load when the row holds all of it, else its keys in the row one by one
    // (the others zero bits; past the grid, all of them), packed into the vector's four
    // words as they come (narrow keys: not a register a key).
    __device__ __forceinline__ static uint4 load_vector(const uint4 *grid, const U *row, u32 j, u32 lead, u32 end) {
        const u32 p = j * VEC;
        if (p >= lead && p + VEC <= end) return grid[j];
        u32 w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
            if (p + e < lead || p + e >= end) continue;
            const U x = row[p + e - lead];
            if constexpr (sizeof(U) == 8) {
                w[2 * e] = (u32)(u64)x;
                w[2 * e + 1] = (u32)((u64)x >> 32);
            } else {
                w[e * sizeof(U) / 4] |= (u32)x << (8 * (e * sizeof(U) % 4));
            }
        }
        return make_uint4(w[0], w[1], w[2], w[3]);
    }

    // How far `to` lies past `from` (0 when not past it), at most LOADS_T.
    __device__ __forceinline__ static u32 min_past(u32 to, u32 from) {
        return to > from ? min(to - from, (u32)LOADS_T) : 0u;
    }

    // The low `count` bits (count <= 32).
    __device__ __forceinline__ static u32 bits_below(u32 count) { return count >= 32 ? ~0u : (1u << count) - 1; }

    // 4a. Few candidates (c <= RANK_SORT_MAX): each thread counts the candidates before
    // its own (a smaller key, or an equal one at a lower slot: slots are in index
    // order) and writes it there if that is among the first m.
    __device__ __forceinline__ static void rank_and_write(u32 c, u32 m, const U *row, const Row &r, U *out_values,
                                                          u64 *out_indices, u64 out_len, const Storage &s) {
        if (threadIdx.x >= c) return;
        const u32 rank = gp::stable_rank(s.cand_key, c, s.cand_key[threadIdx.x], threadIdx.x);
        if (rank < m && r.base + rank < out_len) {
            const u32 idx = s.cand_idx[threadIdx.x];
            out_values[r.base + rank] = row[idx];
            if (out_indices) out_indices[r.base + rank] = idx;
        }
    }

    // 4. The c candidates (index order) sorted stably by one block, the first m written.
    template <class Sort, int ITEMS>
    __device__ __forceinline__ static void sort_and_write(u32 c, u32 m, const U *row, const Row &r, U *out_values,
                                                          u64 *out_indices, u64 out_len, typename Sort::Storage &st,
                                                          Storage &s) {
        U keys[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const u32 e = Sort::element(j);
            keys[j] = e < c ? s.cand_key[e] : U(~U(0));
        }
        __syncthreads();  // the sort's storage overlaps the candidates' keys
        Sort::sort(keys, c, st);
        for (u32 i = threadIdx.x; i < m; i += BLOCK_T) {
            const u32 idx = s.cand_idx[st.from[i]];
            if (r.base + i < out_len) {
                out_values[r.base + i] = row[idx];
                if (out_indices) out_indices[r.base + i] = idx;
            }
        }
    }

    // The row's first m = min(k, n) keys in order (n < 2^32; m <= CAP).
    __device__ __forceinline__ static void run(const U *row, const Row &r, U *out_values, u64 *out_indices,
                                               u64 out_len, const KeyOrder &order, Storage &s) {
        const u32 n = (u32)r.n, m = (u32)(r.k < r.n ? r.k : r.n);
        if (m == 0) return;
        // Every key (m == n), or those at or below a sampled threshold.
        U held[SAMPLE_ITEMS];
        const bool whole = n <= SAMPLE_T;
        if (whole) load_whole(row, n, order, held);
        auto gather_any = [&](const Bound &b) {
            u32 ahead = 0, bucket = 0;
            if (!whole) return gather(row, n, b, order, s);
            const u32 first = threadIdx.x * SAMPLE_ITEMS;
            gather_step(held, bits_below(first < n ? min((u32)SAMPLE_ITEMS, n - first) : 0u), first, b, ahead, bucket, s);
            return ahead + (b.exact ? min(bucket, b.need) : bucket);
        };
        Bound b{U(0), U(0), false, 0};
        u32 c = 0;
        bool done = m == n;
        if (!done && sample_threshold(row, n, m, order, s, held, b.prefix)) {
            b.mask = U(~U(0));
            c = gather_any(b);
            done = c >= m && c <= CAP;
        }
        if (!done) b = narrow(row, n, m, order, s);
        if (!done || m == n) c = gather_any(b);
        __syncthreads();
        if (c <= RANK_SORT_MAX)
            rank_and_write(c, m, row, r, out_values, out_indices, out_len, s);
        else if (c <= SMALL_CAP)
            sort_and_write<SmallSort, SMALL_ITEMS_T>(c, m, row, r, out_values, out_indices, out_len, s.small, s);
        else
            sort_and_write<BigSort, SORT_ITEMS_T>(c, m, row, r, out_values, out_indices, out_len, s.big, s);
    }
};
