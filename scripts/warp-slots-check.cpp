// A host check of kernels/common/warp_slots.cuh (select_kth's band by warp,
// select_band_warps): warps of 32 host threads, one a lane, meeting at every shuffle,
// take slots for random counts of picks, a few warps at once on one counter, for every
// chunk size; then each warp's unused slots are filled as select_band.cuh's fill_holes
// does. Every slot below the counter's final value must be taken exactly once, by a
// pick or a hole, none past it, the holes counted must be the hole slots, and a warp
// must keep fewer slots than a chunk between steps.
//
//   g++ -O2 -std=c++20 -pthread -I kernels scripts/warp-slots-check.cpp -o /tmp/slots && /tmp/slots
#include <barrier>
#include <cstring>  // memcpy, which the kernels get from NVRTC
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "host-shims.h"

// What warp_slots.cuh and common/warp.cuh use from CUDA, for host threads: a lane's
// threadIdx, shuffles through a warp's exchange array (everyone writes, meets, reads,
// meets again), and the counter's atomic.
struct HostDim {
    unsigned x;
};
static thread_local HostDim threadIdx;

struct HostWarp {
    std::barrier<> meet{32};
    unsigned long long value[32];
};
static thread_local HostWarp *this_warp;

template <class B>
static B exchange(B mine, int src) {
    const unsigned lane = threadIdx.x % 32;
    this_warp->value[lane] = (unsigned long long)mine;
    this_warp->meet.arrive_and_wait();
    const B got = (B)this_warp->value[src];
    this_warp->meet.arrive_and_wait();
    return got;
}
template <class B>
static B __shfl_sync(unsigned, B v, int src) { return exchange(v, src & 31); }
template <class B>
static B __shfl_xor_sync(unsigned, B v, int mask) { return exchange(v, (int)(threadIdx.x % 32) ^ mask); }
template <class B>
static B __shfl_up_sync(unsigned, B v, int delta) {
    const int lane = threadIdx.x % 32;
    return exchange(v, lane >= delta ? lane - delta : lane);
}
static unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static int __ffsll(long long v) { return __builtin_ffsll(v); }  // (the header's copy of picks: unused here)

#include "common/warp_slots.cuh"

using namespace gp;

struct Taken {
    int warp, lane, step;  // step -1: a hole
    unsigned pick;         // the pick's place among its step's picks, in lane order
};

// `warps` warps of `steps` steps each on one counter; returns the failures found.
static int run(u32 chunk, int warps, int steps, unsigned seed) {
    unsigned long long counter = 0, holes = 0;
    std::vector<HostWarp> warp(warps);
    std::vector<std::vector<Taken>> by_slot;
    std::mutex lock;
    int failures = 0;
    auto lane_body = [&](int w, unsigned lane) {
        threadIdx.x = (unsigned)w * 32 + lane;
        this_warp = &warp[w];
        std::mt19937 rng(seed * 7919 + w * 131 + lane);
        WarpSlots slots;
        std::vector<std::pair<u64, Taken>> mine_taken;
        for (int s = 0; s < steps; ++s) {
            // Mostly no pick, at times a few, rarely a whole row of 64 keys.
            const u32 r = rng() % 100, mine = r < 60 ? 0 : r < 95 ? rng() % 4 : rng() % 65;
            const WarpSlots::Step step = slots.take(mine, &counter, chunk);
            for (u32 p = 0; p < mine; ++p) mine_taken.push_back({step.slot(step.before + p), Taken{w, (int)lane, s, step.before + p}});
            if (slots.room >= chunk) {
                std::lock_guard<std::mutex> g(lock);
                if (failures++ < 5) printf("chunk %u: warp %d kept %u slots after a step (a chunk is %u)\n", chunk, w, slots.room, chunk);
            }
        }
        // As WarpSlots::fill_holes: the warp's unused slots, split over lanes.
        for (u32 i = lane; i < slots.room; i += 32) mine_taken.push_back({slots.at + i, Taken{w, (int)lane, -1, i}});
        if (lane == 0 && slots.room) atomicAdd(&holes, slots.room);
        std::lock_guard<std::mutex> g(lock);
        for (auto &[slot, t] : mine_taken) {
            if (slot >= by_slot.size()) by_slot.resize(slot + 1);
            by_slot[slot].push_back(t);
        }
    };
    std::vector<std::thread> threads;
    for (int w = 0; w < warps; ++w)
        for (unsigned lane = 0; lane < 32; ++lane) threads.emplace_back(lane_body, w, lane);
    for (auto &t : threads) t.join();
    if (by_slot.size() > counter) {
        printf("chunk %u: a slot at %zu, past the counter's %llu\n", chunk, by_slot.size() - 1, counter);
        failures++;
    }
    unsigned long long hole_slots = 0;
    for (u64 s = 0; s < counter; ++s) {
        const size_t n = s < by_slot.size() ? by_slot[s].size() : 0;
        if (n != 1) {
            if (failures++ < 5) printf("chunk %u: slot %llu taken %zu times\n", chunk, (unsigned long long)s, n);
            continue;
        }
        hole_slots += by_slot[s][0].step < 0;
    }
    if (hole_slots != holes) {
        printf("chunk %u: %llu hole slots, %llu counted\n", chunk, hole_slots, holes);
        failures++;
    }
    return failures;
}

int main() {
    int failures = 0, runs = 0;
    for (u32 chunk = 1; chunk <= 256; chunk *= 2)
        for (unsigned seed = 0; seed < 3; ++seed, ++runs) failures += run(chunk, 3, 40, seed);
    printf("warp_slots_check: %s: %d runs (chunks 1-256, 3 warps of 32 lanes, 40 steps), %d failures\n",
           failures ? "FAIL" : "PASS", runs, failures);
    return failures != 0;
}
