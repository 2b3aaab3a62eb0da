// A host check of what the closed bands' NaN-free pick relies on
// (kernels/common/closed_band.cuh: in_closed_band<true>, in select_band_closed and
// multi_band): where a row holds no negative NaN, keys are mapped with
// KeyOrder::ordered_no_nan instead of ordered(), and each key must still fall on the same
// side of every lower bound lo (u < lo: counted below) and every upper bound hi (u <= hi)
// that a closed band can have. The bounds are ordered() patterns of sample keys with
// lo < hi, so lo is never the highest pattern and hi never the lowest, and pattern 0
// (the multi-rank bracket's open lower end; its open upper end is the NaN pattern).
// Every 16-bit key against every 16-bit bound (f16, bf16, both orders); for f32 and f64,
// sampled positive NaNs against special and sampled bounds. Non-NaN keys must map the same.
//
//   g++ -O2 -std=c++17 -I kernels scripts/closed-band-check.cpp -o /tmp/closed-check && /tmp/closed-check
#include <cstdio>
#include <random>
#include <vector>

#include "host-shims.h"
#include "common/radix_key.cuh"

using namespace gp;

template <class U>
struct Check {
    const char *name;
    KeyOrder<U, true> order;
    long misses = 0, checked = 0;

    bool negative_nan(U x) const { return x > U(KeyOrder<U, true>::SIGN | order.inf); }
    bool nan(U x) const { return U(x & U(~KeyOrder<U, true>::SIGN)) > order.inf; }

    void miss(U x, U bound, const char *what) {
        if (misses++ < 5) printf("%s: key %#llx against %s %#llx\n", name, (unsigned long long)x, what, (unsigned long long)bound);
    }

    // Key x (not a negative NaN) against the bounds, lowest and highest achievable
    // patterns being `lowest` and `highest`.
    void key(U x, const std::vector<U> &bounds, U lowest, U highest) {
        const U u = order.ordered(x), v = order.ordered_no_nan(x);
        if (!nan(x)) {
            if (u != v) miss(x, u, "its own pattern");
            ++checked;
            return;
        }
        for (U b : bounds) {
            if (b != highest && (v < b) != (u < b)) miss(x, b, "lo");
            if (b != lowest && (v <= b) != (u <= b)) miss(x, b, "hi");
            ++checked;
        }
    }
};

template <class U>
static long run16(const char *name, u32 key_order) {
    Check<U> c{name, KeyOrder<U, true>(key_order)};
    std::vector<U> bounds;
    for (u32 y = 0; y < 65536; ++y) bounds.push_back(c.order.ordered(U(y)));
    bounds.push_back(0);  // the multi-rank bracket's open lower end
    U lowest = bounds[0], highest = bounds[0];
    for (U b : bounds) lowest = b < lowest ? b : lowest, highest = b > highest ? b : highest;
    for (u32 x = 0; x < 65536; ++x)
        if (!c.negative_nan(U(x))) c.key(U(x), bounds, lowest, highest);
    printf("%-16s %12ld checks, %ld misses\n", name, c.checked, c.misses);
    return c.misses;
}

template <class U>
static long run_wide(const char *name, u32 key_order, std::mt19937_64 &rng) {
    Check<U> c{name, KeyOrder<U, true>(key_order)};
    const U sign = KeyOrder<U, true>::SIGN, inf = c.order.inf;
    // Bounds: the patterns of the special values and of random keys.
    const U specials[] = {0, 1, sign, U(sign | 1), inf, U(inf - 1), U(inf + 1), U(inf | sign), U(U(inf | sign) - 1),
                          U(U(inf | sign) + 1), U(~U(0)), U(U(~U(0)) >> 1)};
    std::vector<U> bounds;
    for (U s : specials) bounds.push_back(c.order.ordered(s));
    bounds.push_back(0);  // the multi-rank bracket's open lower end (its upper: NaN's pattern)
    for (int i = 0; i < 20000; ++i) bounds.push_back(c.order.ordered(U(rng())));
    // The extremes are the patterns of -inf and NaN, both among the specials.
    U lowest = bounds[0], highest = bounds[0];
    for (U b : bounds) lowest = b < lowest ? b : lowest, highest = b > highest ? b : highest;
    // Keys: positive NaNs (the ends and random payloads), and random keys.
    std::vector<U> keys = {U(inf + 1), U(U(~U(0)) >> 1)};
    for (int i = 0; i < 2000; ++i) keys.push_back(U(inf + 1 + rng() % U(U(U(~U(0)) >> 1) - inf)));
    for (int i = 0; i < 100000; ++i) keys.push_back(U(rng()));
    for (U x : keys)
        if (!c.negative_nan(x)) c.key(x, bounds, lowest, highest);
    printf("%-16s %12ld checks, %ld misses\n", name, c.checked, c.misses);
    return c.misses;
}

int main() {
    std::mt19937_64 rng(20261127);
    long misses = 0;
    misses += run16<u16>("f16 ascending", KEY_FLOAT);
    misses += run16<u16>("f16 descending", KEY_FLOAT | KEY_DESCENDING);
    misses += run16<u16>("bf16 ascending", KEY_FLOAT | KEY_BFLOAT16);
    misses += run16<u16>("bf16 descending", KEY_FLOAT | KEY_BFLOAT16 | KEY_DESCENDING);
    misses += run_wide<u32>("f32 ascending", KEY_FLOAT, rng);
    misses += run_wide<u32>("f32 descending", KEY_FLOAT | KEY_DESCENDING, rng);
    misses += run_wide<u64>("f64 ascending", KEY_FLOAT, rng);
    misses += run_wide<u64>("f64 descending", KEY_FLOAT | KEY_DESCENDING, rng);
    printf("%s\n", misses ? "FAIL" : "closed band NaN-free mapping: OK");
    return misses ? 1 : 0;
}
