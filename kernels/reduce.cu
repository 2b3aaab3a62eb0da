// Device-wide reduce in one launch. Each block folds a fixed, strided set of tiles
// with 16-byte loads and publishes its partial as epoch-tagged words
// (common/tagged.cuh); block 0 waits for every partial, folds them in index order
// and writes the result (for the host, as tagged words it polls): no second kernel,
// no host round trip, and no fence or atomic on the way (each costs a round trip at
// the tail). The order depends only on n and the grid, so float sums repeat bit for
// bit. Block 0 only waits for blocks that never wait themselves, so it cannot
// deadlock however few of them fit.
//
// Instantiated per element type: -DGP_T=<type> -DGP_BLOCK_THREADS=.. -DGP_VECS=..
// (tuning lives in src/backend/cuda/reduce.rs). The fold runs in the type's
// accumulator (f32 for the 16-bit floats), and the result is rounded once (or, for a
// multi-rank reduce's partial, handed out unrounded).
#include "common/grid_dependency.cuh"
#include "common/types.cuh"
#include "common/ops.cuh"
#include "common/block_reduce.cuh"
#include "common/tagged.cuh"
#include "common/tile_io.cuh"

typedef GP_T T;
typedef gp::Accumulator<T> Acc;
typedef Acc::type A;
constexpr int BLOCK = GP_BLOCK_THREADS;
constexpr int VECS = GP_VECS;                      // 16-byte loads per thread per tile
constexpr int PER_VEC = 16 / sizeof(T);
constexpr usize TILE = (usize)BLOCK * VECS * PER_VEC;

template <class Op>
__device__ __forceinline__ void fold_vec(A &acc, const gp::Vec16 &v, Op op) {
    T x[PER_VEC];
    memcpy(x, &v, sizeof(x));
#pragma unroll
    for (int k = 0; k < PER_VEC; ++k) acc = op(acc, Acc::widen(x[k]));
}

// The result to device memory, or to the host's mapped slot as tagged words.
template <class V>
__device__ __forceinline__ void deliver(V *out, V value, u32 host_tag) {
    if (host_tag) gp::Tagged<V>::publish_to_host(reinterpret_cast<u64 *>(out), value, host_tag);
    else *out = value;
}

template <class Op>
__device__ __forceinline__ void reduce_device(const T *in, usize n, u64 *partials, u32 epoch, void *out, u32 host_tag,
                                              u32 keep_accumulator) {
    Op op;
    typedef gp::BlockReduce<A, BLOCK> Reduce;
    typedef gp::Tagged<A> Tagged;
    __shared__ typename Reduce::Storage storage;

    A acc = Op::identity();
    const usize full_tiles = n / TILE;
    if (gp::aligned16(in)) {
        // Tile t, vector j, thread i reads vector t*VECS*BLOCK + j*BLOCK + i: coalesced.
        for (usize t = blockIdx.x; t < full_tiles; t += gridDim.x) {
            const char *base = reinterpret_cast<const char *>(in) + t * TILE * sizeof(T);
            gp::Vec16 v[VECS];
#pragma unroll
            for (int j = 0; j < VECS; ++j) v[j] = gp::load_vec16_streaming(base + ((usize)j * BLOCK + threadIdx.x) * 16);
#pragma unroll
            for (int j = 0; j < VECS; ++j) fold_vec(acc, v[j], op);
        }
    } else {
        for (usize t = blockIdx.x; t < full_tiles; t += gridDim.x)
            for (usize i = t * TILE + threadIdx.x; i < (t + 1) * TILE; i += BLOCK) acc = op(acc, Acc::widen(in[i]));
    }
    // The ragged end goes to the block that would have taken the next tile.
    if (blockIdx.x == full_tiles % gridDim.x)
        for (usize i = full_tiles * TILE + threadIdx.x; i < n; i += BLOCK) acc = op(acc, Acc::widen(in[i]));

    const A block_total = Reduce::all(acc, op, storage);
    if (blockIdx.x != 0) {
        if (threadIdx.x == 0) Tagged::publish(partials + (usize)blockIdx.x * Tagged::WORDS, block_total, epoch);
        return;
    }
    // Block 0: thread t folds partials t, t + BLOCK, ... in order (its own is 0).
    A total = Op::identity();
    for (u32 i = threadIdx.x; i < gridDim.x; i += BLOCK)
        total = op(total, i == 0 ? block_total : Tagged::wait(partials + (usize)i * Tagged::WORDS, epoch));
    total = Reduce::all(total, op, storage);
    if (threadIdx.x != 0) return;
    if (keep_accumulator) deliver(reinterpret_cast<A *>(out), total, host_tag);
    else deliver(reinterpret_cast<T *>(out), Acc::narrow(total), host_tag);
}

// `host_tag` (0: none): `out` is the host's mapped result slot, which gets the total
// as tagged words (common/tagged.cuh) of that tag, for the host to spin on.
// `keep_accumulator`: `out` gets the total in the accumulator type, not rounded to T
// (the 16-bit floats' f32; the same as T for every other type): a multi-rank reduce's
// partial, combined with the other ranks' before the one rounding.
#define GP_REDUCE_KERNEL(NAME, OP)                                                                   \
    extern "C" __global__ void __launch_bounds__(BLOCK)                                              \
    NAME(const T *in, usize n, u64 *partials, u32 epoch, void *out, u32 host_tag, u32 keep_accumulator) { \
        gp::wait_for_prior_grids();                                                                  \
        reduce_device<OP<A>>(in, n, partials, epoch, out, host_tag, keep_accumulator);               \
    }

GP_REDUCE_KERNEL(reduce_sum, gp::SumOp)
GP_REDUCE_KERNEL(reduce_min, gp::MinOp)
GP_REDUCE_KERNEL(reduce_max, gp::MaxOp)
