// Whether a radix pass can be the multi-GPU sort's exchange (issue 41; the design in
// docs/benchmarks/multi-gpu.md, "A sort design for 1.6x on 2 GPUs"): two GPUs each
// scatter their keys by (destination rank, low digit), the destination being the top
// key bit, so about half of each GPU's keys are stored straight into the other GPU's
// memory (peer access over NVLink). Beside it, the same pass with every key kept local,
// and the copy engines' rate (cudaMemcpyPeerAsync of half the keys both ways at once).
//
// The pass stands for one onesweep pass: a block ranks a tile's keys by group (rank,
// digit) in shared memory and reserves each group's run with one global atomic, so its
// stores come as runs of a few keys a group, as a radix pass's do. Its order within a
// group is not stable (a probe of the stores' rate, not a sort). Each output is checked:
// every key lands once, in its group's region.
//
//   nvcc -O3 -arch=sm_90 -o /tmp/peer-scatter scripts/probes/peer-scatter.cu
//   /tmp/peer-scatter [log2 keys a GPU, default 29] [reps, default 5]
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

typedef unsigned int u32;
typedef unsigned long long u64;

constexpr int RANKS = 2, DIGITS = 256, GROUPS = RANKS * DIGITS;
constexpr int BLOCK = 256, ITEMS = 16, TILE = BLOCK * ITEMS;

// A key's group: (destination rank, digit), the rank its top bit (or this GPU).
__host__ __device__ __forceinline__ u32 group(u32 key, u32 me, bool keep_local, u32 digits) {
    return (keep_local ? me : key >> 31) * DIGITS + (key & (digits - 1));
}

__device__ __forceinline__ u32 hash(u64 i, u32 seed) {
    u64 x = i * 0x9E3779B97F4A7C15ull + seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (u32)x;
}

__global__ void fill(u32 *keys, u64 n, u32 seed) {
    for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x) keys[i] = hash(i, seed);
}

// out[r]: rank r's output buffer (this GPU's own or the peer's). The keys of group
// (r, digit) from GPU `me` fill region digit * RANKS + me of it from cursor[group] on
// (each source its own region, as a sort's exact offsets would keep them apart, so no
// atomic crosses the link). keep_local: every key goes to this GPU's own buffer (the
// pass without the exchange). digits: 256 (a radix pass's first digit) or 1 (a
// partition by rank alone, whose runs are a tile's keys for one rank).
//
// As a onesweep pass does, a block first orders its tile by group in shared memory,
// then stores from there, so a warp's stores are runs of one group's keys at
// consecutive addresses (the first version stored each key from its thread's
// registers: 53 GB/s a GPU with half to the peer, 178 kept local, on 2 x H200).
__global__ void __launch_bounds__(BLOCK) scatter(const u32 *keys, u64 n, u32 *const *out, u32 me, bool keep_local,
                                                 u32 digits, u64 room, unsigned long long *cursor) {
    __shared__ u32 count[GROUPS], start[GROUPS];
    __shared__ u64 base[GROUPS];
    __shared__ u32 staged[TILE];
    for (u64 tile = blockIdx.x; tile * TILE < n; tile += gridDim.x) {
        for (int g = threadIdx.x; g < GROUPS; g += BLOCK) count[g] = 0;
        __syncthreads();
        u32 k[ITEMS], at[ITEMS];
        const u64 first = tile * TILE + threadIdx.x;
        for (int i = 0; i < ITEMS; ++i) {
            const u64 idx = first + (u64)i * BLOCK;  // coalesced loads
            if (idx < n) {
                k[i] = keys[idx];
                at[i] = atomicAdd(&count[group(k[i], me, keep_local, digits)], 1u);
            }
        }
        __syncthreads();
        {  // the tile's groups in order: each thread scans two groups' counts
            static_assert(GROUPS == 2 * BLOCK, "two groups a thread");
            __shared__ u32 warp_sum[BLOCK / 32];
            const u32 c0 = count[2 * threadIdx.x], c1 = count[2 * threadIdx.x + 1], lane = threadIdx.x % 32;
            u32 incl = c0 + c1;
            for (int d = 1; d < 32; d *= 2) {
                const u32 up = __shfl_up_sync(~0u, incl, d);
                if (lane >= d) incl += up;
            }
            if (lane == 31) warp_sum[threadIdx.x / 32] = incl;
            __syncthreads();
            u32 before = incl - c0 - c1;
            for (int w = 0; w < (int)threadIdx.x / 32; ++w) before += warp_sum[w];
            start[2 * threadIdx.x] = before;
            start[2 * threadIdx.x + 1] = before + c0;
        }
        for (int q = threadIdx.x; q < GROUPS; q += BLOCK)
            if (count[q]) base[q] = atomicAdd(&cursor[q], (unsigned long long)count[q]);
        __syncthreads();
        for (int i = 0; i < ITEMS; ++i)
            if (first + (u64)i * BLOCK < n) staged[start[group(k[i], me, keep_local, digits)] + at[i]] = k[i];
        __syncthreads();
        const u32 held = (u32)min((u64)TILE, n - tile * TILE);
        for (u32 j = threadIdx.x; j < held; j += BLOCK) {
            const u32 key = staged[j], g = group(key, me, keep_local, digits);
            const u64 slot = base[g] + (j - start[g]);
            if (slot < room) out[g / DIGITS][((u64)(g % DIGITS) * RANKS + me) * room + slot] = key;
        }
        __syncthreads();
    }
}

struct Gpu {
    int dev;
    cudaStream_t stream;
    u32 *keys, *out;
    u32 **out_table;               // device: both ranks' output buffers, as this GPU sees them
    unsigned long long *cursor;    // GROUPS counters: where each group's next run goes
};

static u64 n, room;

// A source's region of a group: all its keys with slack (the output holds DIGITS *
// RANKS regions of `room`, the partition's two regions fit in it).
static u64 room_for(u32 digits) { return n / digits + n / digits / 8 + 4096; }

// Milliseconds from before `issue(r)` enqueues GPU r's work, for both GPUs, until both
// have finished (events on GPU 0's stream, the second recorded after both ends).
template <class Issue>
static float timed(Gpu *gpu, Issue issue) {
    cudaEvent_t a, b;
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CHECK(cudaEventRecord(a, gpu[0].stream));
    for (int r = 0; r < RANKS; ++r) {
        CHECK(cudaSetDevice(gpu[r].dev));
        issue(r);
    }
    for (int r = RANKS - 1; r >= 0; --r) {
        CHECK(cudaSetDevice(gpu[r].dev));
        CHECK(cudaStreamSynchronize(gpu[r].stream));
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventRecord(b, gpu[0].stream));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

// One scatter pass on both GPUs at once.
static float pass(Gpu *gpu, bool keep_local, u32 digits) {
    for (int r = 0; r < RANKS; ++r) {
        CHECK(cudaSetDevice(gpu[r].dev));
        CHECK(cudaMemsetAsync(gpu[r].cursor, 0, GROUPS * sizeof(u64), gpu[r].stream));
        CHECK(cudaStreamSynchronize(gpu[r].stream));
    }
    return timed(gpu, [&](int r) {
        int sms = 0;
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu[r].dev));
        scatter<<<sms * 4, BLOCK, 0, gpu[r].stream>>>(gpu[r].keys, n, gpu[r].out_table, r, keep_local, digits,
                                                       room_for(digits), gpu[r].cursor);
        CHECK(cudaGetLastError());
    });
}

// Half of each GPU's keys copied to the other by the copy engines, both ways at once.
static float peer_copy(Gpu *gpu) {
    return timed(gpu, [&](int r) {
        const int peer = 1 - r;
        CHECK(cudaMemcpyPeerAsync(gpu[peer].out, gpu[peer].dev, gpu[r].keys, gpu[r].dev, n / 2 * sizeof(u32), gpu[r].stream));
    });
}

// Every key of both GPUs landed once, in its region: each source's keys counted and
// summed by group, against what its cursors say each region holds.
static bool check(Gpu *gpu, bool keep_local, u32 digits) {
    std::vector<u64> want_count(RANKS * GROUPS, 0), want_sum(RANKS * GROUPS, 0);  // by (source, group)
    std::vector<u64> got_count(RANKS * GROUPS, 0), got_sum(RANKS * GROUPS, 0), cursor(RANKS * GROUPS);
    std::vector<u32> h(n);
    for (int src = 0; src < RANKS; ++src) {
        CHECK(cudaSetDevice(gpu[src].dev));
        CHECK(cudaMemcpy(h.data(), gpu[src].keys, n * sizeof(u32), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&cursor[src * GROUPS], gpu[src].cursor, GROUPS * sizeof(u64), cudaMemcpyDeviceToHost));
        for (u64 i = 0; i < n; ++i) {
            const u64 g = group(h[i], src, keep_local, digits);
            want_count[src * GROUPS + g]++;
            want_sum[src * GROUPS + g] += h[i];
        }
    }
    bool ok = true;
    const u64 region = room_for(digits);
    std::vector<u32> out(DIGITS * RANKS * room);  // the whole buffer
    for (int r = 0; r < RANKS; ++r) {
        CHECK(cudaSetDevice(gpu[r].dev));
        CHECK(cudaMemcpy(out.data(), gpu[r].out, out.size() * sizeof(u32), cudaMemcpyDeviceToHost));
        for (u64 d = 0; d < digits; ++d)
            for (u64 src = 0; src < RANKS; ++src) {
                const u64 g = r * DIGITS + d, filled = cursor[src * GROUPS + g];
                if (filled > region) ok = false;  // the region overflowed: keys were dropped
                for (u64 s = 0; s < filled && s < region; ++s) {
                    const u32 key = out[(d * RANKS + src) * region + s];
                    ok &= group(key, src, keep_local, digits) == g;
                    got_count[src * GROUPS + g]++;
                    got_sum[src * GROUPS + g] += key;
                }
            }
    }
    return ok && want_count == got_count && want_sum == got_sum;
}

int main(int argc, char **argv) {
    const int log2n = argc > 1 ? atoi(argv[1]) : 29, reps = argc > 2 ? atoi(argv[2]) : 5;
    n = 1ull << log2n;
    room = room_for(DIGITS);
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        fprintf(stderr, "needs two GPUs\n");
        return 77;
    }
    Gpu gpu[RANKS];
    for (int r = 0; r < RANKS; ++r) {
        gpu[r].dev = r;
        CHECK(cudaSetDevice(r));
        int can = 0;
        CHECK(cudaDeviceCanAccessPeer(&can, r, 1 - r));
        if (!can) {
            fprintf(stderr, "GPU %d cannot reach GPU %d\n", r, 1 - r);
            return 77;
        }
        CHECK(cudaDeviceEnablePeerAccess(1 - r, 0));
        CHECK(cudaStreamCreateWithFlags(&gpu[r].stream, cudaStreamNonBlocking));
        CHECK(cudaMalloc(&gpu[r].keys, n * sizeof(u32)));
        CHECK(cudaMalloc(&gpu[r].out, DIGITS * RANKS * room * sizeof(u32)));
        CHECK(cudaMalloc(&gpu[r].out_table, RANKS * sizeof(u32 *)));
        CHECK(cudaMalloc(&gpu[r].cursor, GROUPS * sizeof(u64)));
        fill<<<1024, 256, 0, gpu[r].stream>>>(gpu[r].keys, n, 17 + r);
        CHECK(cudaStreamSynchronize(gpu[r].stream));
    }
    for (int r = 0; r < RANKS; ++r) {
        // Rank q's buffer as GPU r sees it: with peer access, the same address.
        u32 *table[RANKS] = {gpu[0].out, gpu[1].out};
        CHECK(cudaSetDevice(r));
        CHECK(cudaMemcpy(gpu[r].out_table, table, sizeof table, cudaMemcpyHostToDevice));
    }
    const double bytes = (double)n * sizeof(u32);
    printf("2 GPUs, 2^%d u32 keys each (%.2f GB), median of %d\n", log2n, bytes / 1e9, reps);
    struct Mode {
        const char *what;
        bool keep_local;
        u32 digits;  // 0: the copy engines
    } modes[] = {{"scatter pass, 256 digits, every key local", true, 256},
                 {"scatter pass, 256 digits, top bit picks the GPU", false, 256},
                 {"partition pass, top bit picks the GPU", false, 1},
                 {"cudaMemcpyPeerAsync of half the keys, both ways", false, 0}};
    for (const Mode &m : modes) {
        std::vector<float> t;
        for (int i = 0; i < reps + 1; ++i) {
            for (int r = 0; r < RANKS && m.digits; ++r) {
                CHECK(cudaSetDevice(r));
                CHECK(cudaMemset(gpu[r].out, 0xFF, DIGITS * RANKS * room * sizeof(u32)));
            }
            const float ms = m.digits ? pass(gpu, m.keep_local, m.digits) : peer_copy(gpu);
            if (i) t.push_back(ms);  // the first is a warm-up
        }
        std::sort(t.begin(), t.end());
        const float med = t[t.size() / 2];
        const double moved = m.digits ? bytes : bytes / 2;  // bytes a GPU writes
        printf("%-50s %8.3f ms  %7.1f GB/s a GPU written", m.what, med, moved / (med * 1e6));
        if (m.digits && !m.keep_local) printf(" (%.1f GB/s to the peer)", bytes / 2 / (med * 1e6));
        if (m.digits) printf("  check %s", check(gpu, m.keep_local, m.digits) ? "OK" : "FAIL");
        printf("\n");
    }
    return 0;
}
