// A host check of kernels/common/ordered_screen.cuh, on a machine without a GPU: the
// screen must pass every key whose ordered pattern is at most the bound (it may pass
// others), and any_passes over packed words must agree with passes() over their lanes.
// Every 16-bit bound against every 16-bit key (u16, i16, f16, bf16, both orders), and
// sampled 32-bit bounds (special values' patterns included) against sampled keys.
//
//   g++ -O2 -std=c++17 -Wno-unknown-pragmas -I kernels scripts/ordered-screen-check.cpp -o /tmp/screen-check && /tmp/screen-check
//
// (about a minute; prints each case's misses, which must be 0, and the share of keys
// passed that the exact test would reject.)
#include <algorithm>
#include <cstdio>
#include <random>

#include "host-shims.h"
static unsigned lane16(unsigned w, int i) { return (w >> (16 * i)) & 0xffff; }
static unsigned per_lane16(unsigned a, unsigned b, unsigned c, bool mx) {
    unsigned r = 0;
    for (int i = 0; i < 2; ++i) {
        const unsigned x = lane16(a, i), y = lane16(b, i), z = lane16(c, i);
        r |= (mx ? std::max({x, y, z}) : std::min({x, y, z})) << (16 * i);
    }
    return r;
}
static unsigned __vimin3_u16x2(unsigned a, unsigned b, unsigned c) { return per_lane16(a, b, c, false); }
static unsigned __vimax3_u16x2(unsigned a, unsigned b, unsigned c) { return per_lane16(a, b, c, true); }
static unsigned __vimin3_u32(unsigned a, unsigned b, unsigned c) { return std::min({a, b, c}); }
static unsigned __vimax3_u32(unsigned a, unsigned b, unsigned c) { return std::max({a, b, c}); }
#include "common/ordered_screen.cuh"

using namespace gp;

template <class U, bool F>
struct Case {
    const char *name;
    KeyOrder<U, F> order;
    std::mt19937 &rng;
    long misses = 0, extra = 0, keys = 0;

    void key(const OrderedScreen<U, F> &s, U bound, U x) {
        const bool wanted = order.ordered(x) <= bound, passed = s.passes(x);
        if (wanted && !passed && misses++ < 5) printf("%s: bound %#x misses key %#x\n", name, (unsigned)bound, (unsigned)x);
        extra += passed && !wanted;
        ++keys;
    }

    // 16 random words, a quarter of them holding the bound in a lane.
    void words(const OrderedScreen<U, F> &s, U bound) {
        constexpr int LANES = 4 / sizeof(U);
        for (int t = 0; t < 200; ++t) {
            u32 w[16];
            bool any = false;
            for (u32 &word : w) {
                word = rng();
                if (rng() % 4 == 0) word = LANES == 2 ? (word & 0xffff0000u) | bound : bound;
                for (int i = 0; i < LANES; ++i) any |= s.passes(U(word >> (16 * i)));
            }
            if (s.any_passes(w) != any && misses++ < 5) printf("%s: bound %#x: any_passes disagrees\n", name, (unsigned)bound);
        }
    }

    void bound(U b) {
        const OrderedScreen<U, F> s(order, b);
        if (sizeof(U) == 2) {
            for (u32 x = 0; x < 65536; ++x) key(s, b, U(x));
        } else {
            for (int i = 0; i < 20000; ++i) key(s, b, U(rng()));
            const U raw[] = {0, 1, order.inf, U(order.inf + 1), U(0x7fc00000), U(0x7fffffff), U(0x80000000), U(0x80000001),
                             U(order.inf | 0x80000000u), U((order.inf + 1) | 0x80000000u), U(0xffffffff), b, U(b + 1), U(b - 1)};
            for (U x : raw) key(s, b, x);
        }
        words(s, b);
    }

    long run() {
        if (sizeof(U) == 2 && F) {
            for (u32 b = 0; b < 65536; ++b) bound(U(b));
        } else {
            for (int i = 0; i < 3000; ++i) bound(U(rng()));
            const U sign = KeyOrder<U, F>::SIGN;
            const U patterns[] = {0, 1, U(~U(0)), U(~U(0) - 1), sign, U(sign - 1), U(sign + 1)};
            for (U b : patterns) bound(b);
            const U raw[] = {0, sign, order.inf, U(order.inf | sign), U(order.inf + 1), U(~U(0))};
            for (U x : raw) bound(order.ordered(x));
            for (int i = 0; i < 200; ++i) bound(order.ordered(U(rng())));
        }
        printf("%-10s misses %ld, passed beyond the exact test %.5f\n", name, misses, (double)extra / keys);
        return misses;
    }
};

template <class U, bool F>
static long check(const char *name, u32 key_order, std::mt19937 &rng) {
    return Case<U, F>{name, KeyOrder<U, F>(key_order), rng}.run();
}

int main() {
    std::mt19937 rng(7);
    const u32 D = KEY_DESCENDING, BF = KEY_FLOAT | KEY_BFLOAT16;
    long misses = check<u16, false>("u16 asc", KEY_UNSIGNED, rng) + check<u16, false>("u16 desc", KEY_UNSIGNED | D, rng) +
                  check<u16, false>("i16 asc", KEY_SIGNED, rng) + check<u16, false>("i16 desc", KEY_SIGNED | D, rng) +
                  check<u16, true>("f16 asc", KEY_FLOAT, rng) + check<u16, true>("f16 desc", KEY_FLOAT | D, rng) +
                  check<u16, true>("bf16 asc", BF, rng) + check<u16, true>("bf16 desc", BF | D, rng) +
                  check<u32, false>("u32 asc", KEY_UNSIGNED, rng) + check<u32, false>("u32 desc", KEY_UNSIGNED | D, rng) +
                  check<u32, false>("i32 asc", KEY_SIGNED, rng) + check<u32, false>("i32 desc", KEY_SIGNED | D, rng) +
                  check<u32, true>("f32 asc", KEY_FLOAT, rng) + check<u32, true>("f32 desc", KEY_FLOAT | D, rng);
    puts(misses ? "FAIL" : "OK");
    return misses != 0;
}
