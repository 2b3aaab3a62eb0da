/* merge-rate.cu: the multi-rank sort's merge kernel (kernels/multi_merge.cu) alone on one
 * GPU, for comparing block shapes: two sorted runs of u32 keys (and u32 values) merged,
 * checked against a stable merge on the host, then timed (CUDA events, median of 11).
 *   nvcc -O3 -arch=sm_90 -std=c++17 -Ikernels -DGP_KEY_BYTES=4 -DGP_KEY_FLOAT=0 \
 *        -DGP_MERGE_BLOCK=256 -DGP_MERGE_ITEMS=8 [-DGP_MERGE_KEYS_MIN_BLOCKS=8] \
 *        scripts/probes/merge-rate.cu -o merge-rate
 * (keys alone run multi_merge_keys, pairs multi_merge, both in the one shape given)
 *   ./merge-rate [log2 of each run's length]        default 28 (the 2-GPU sort's merge)
 * GB/s counts one read and one write of every key (and value). */
#include "multi_merge.cu"

constexpr int BLOCK = GP_MERGE_BLOCK, ITEMS = GP_MERGE_ITEMS, TILE = BLOCK * ITEMS;  // (the keys' kernel: the same shape here)

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned next_u32() {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* A sorted run: random keys in [0, 2^32) by random steps (or of `distinct` values). */
static std::vector<unsigned> sorted_run(size_t n, unsigned distinct) {
    std::vector<unsigned> v(n);
    if (distinct) {
        for (auto &x : v) x = next_u32() % distinct * (0xffffffffu / distinct);
        std::sort(v.begin(), v.end());
        return v;
    }
    const unsigned long long step = 2 * ((1ull << 32) / (n ? n : 1)) + 1;
    unsigned long long at = 0;
    for (auto &x : v) at += next_u32() % step, x = (unsigned)std::min(at, 0xffffffffull);
    return v;
}

struct Dev {
    unsigned *keys, *vals, *out, *out_vals;
    usize *bounds;
};

static void merge(const Dev &d, size_t na, size_t nb, bool values, size_t gap) {
    const size_t total = na + nb, tiles = (total + TILE - 1) / TILE;
    multi_merge_bounds<<<(unsigned)((tiles + 1 + 255) / 256), 256>>>(d.keys, 0, na, na + gap, nb, 0, tiles, d.bounds, TILE);
    if (values)
        multi_merge<<<(unsigned)tiles, BLOCK>>>(d.keys, 0, na, na + gap, nb, 0, d.vals, 4, d.out, d.out_vals, d.bounds, 0);
    else
        multi_merge_keys<<<(unsigned)tiles, BLOCK>>>(d.keys, 0, na, na + gap, nb, 0, nullptr, 0, d.out, nullptr, d.bounds, 0);
}

/* Merges runs of na and nb (`gap` keys apart) and compares with the host's stable merge. */
static bool check(Dev &d, size_t na, size_t nb, unsigned distinct, size_t gap, bool values) {
    auto a = sorted_run(na, distinct), b = sorted_run(nb, distinct);
    std::vector<unsigned> keys(na + gap + nb, 0xdeadbeef), vals(keys.size());
    std::copy(a.begin(), a.end(), keys.begin());
    std::copy(b.begin(), b.end(), keys.begin() + na + gap);
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = (unsigned)i;
    CK(cudaMemcpy(d.keys, keys.data(), keys.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.vals, vals.data(), vals.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(d.out, 0xff, (na + nb) * 4));
    merge(d, na, nb, values, gap);
    CK(cudaDeviceSynchronize());
    std::vector<unsigned> got(na + nb), got_vals(na + nb);
    CK(cudaMemcpy(got.data(), d.out, got.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got_vals.data(), d.out_vals, got.size() * 4, cudaMemcpyDeviceToHost));
    size_t i = 0, j = 0;
    for (size_t x = 0; x < na + nb; ++x) {  // stable: A's first among equals
        const bool take_a = i < na && (j >= nb || a[i] <= b[j]);
        const unsigned key = take_a ? a[i] : b[j], from = take_a ? (unsigned)i : (unsigned)(na + gap + j);
        take_a ? ++i : ++j;
        if (got[x] != key || (values && got_vals[x] != from)) {
            printf("FAIL na %zu nb %zu distinct %u gap %zu: output %zu is %u (value %u), wanted %u (value %u)\n", na, nb,
                   distinct, gap, x, got[x], got_vals[x], key, from);
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv) {
    const int lg = argc > 1 ? atoi(argv[1]) : 28;
    const size_t n = (size_t)1 << lg;
    const size_t room = std::max(2 * n, (size_t)1 << 18);  // the checks' largest case too
    Dev d;
    CK(cudaMalloc(&d.keys, (room + 64) * 4));
    CK(cudaMalloc(&d.vals, (room + 64) * 4));
    CK(cudaMalloc(&d.out, room * 4));
    CK(cudaMalloc(&d.out_vals, room * 4));
    CK(cudaMalloc(&d.bounds, (room / TILE + 2) * sizeof(usize)));

    int checks = 0, failed = 0;
    const size_t sizes[][2] = {{0, 1}, {1, 0}, {1, 1}, {TILE - 1, 1}, {TILE, TILE}, {TILE + 3, 5 * TILE - 7}, {100000, 3}, {77777, 123457}};
    for (auto &s : sizes)
        for (unsigned distinct : {0u, 1u, 3u, 1000u})
            for (size_t gap : {0, 3})
                for (bool values : {false, true}) failed += !check(d, s[0], s[1], distinct, gap, values), ++checks;
    printf("merge-rate: BLOCK %d ITEMS %d: %d checks, %d failed\n", BLOCK, ITEMS, checks, failed);
    if (failed) return 1;

    // The timed merge: two random runs of n keys each.
    auto a = sorted_run(n, 0), b = sorted_run(n, 0);
    CK(cudaMemcpy(d.keys, a.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.keys + n, b.data(), n * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (bool values : {false, true}) {
        std::vector<float> ms;
        for (int rep = 0; rep < 12; ++rep) {
            CK(cudaEventRecord(e0));
            merge(d, n, n, values, 0);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float t;
            CK(cudaEventElapsedTime(&t, e0, e1));
            if (rep) ms.push_back(t);  // the first warms up
        }
        std::sort(ms.begin(), ms.end());
        const double med = ms[ms.size() / 2], bytes = 2.0 * n * (values ? 8 : 4) * 2;
        printf("merge-rate: BLOCK %d ITEMS %d: 2 x 2^%d %s: %.3f ms (min %.3f), %.0f GB/s\n", BLOCK, ITEMS, lg,
               values ? "u32/u32 pairs" : "u32 keys", med, ms[0], bytes / med / 1e6);
    }
    return 0;
}
