# segsel-timeline.py: a scratch instrumentation of the segmented select's short-row
# kernel, for `probe-floor timeline` (scripts/probes/probe-floor.cu). Never commit its output.
#
#   python3 scripts/probes/segsel-timeline.py      # rewrites kernels/segmented_select.cu in place
#   cargo build --release                   # a library whose kernel stamps, not answers
#   git checkout kernels/segmented_select.cu
#
# The patched kernel writes %globaltimer stamps (and each block's SM) into `out`
# instead of its answers, a u32 a block per stamp: the grid and the number of
# checking blocks first, then per block its start, for checking blocks the time its
# rows are checked, its ticket taken and back, and the report published (the last
# one), for selecting blocks its rows read into shared memory, its last warp done with
# a row before its last, its last warp done and its last warp past the verdict.
# probe-floor reads them back and prints medians over 60 calls. The anchors below are
# lines of the kernel: when they change, this fails loudly instead of stamping wrong.
import sys
p='kernels/segmented_select.cu'
s=open(p).read()
def rep(old,new):
    global s
    assert old in s, old[:60]
    s=s.replace(old,new)
rep("constexpr int COMMIT_BLOCK = GP_COMMIT_BLOCK;", '''__device__ __forceinline__ u32 gp_stamp() { u32 t; asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(t)); return t; }
__device__ __forceinline__ u32 gp_smid() { u32 t; asm volatile("mov.u32 %0, %%smid;" : "=r"(t)); return t; }
#define TL(k) (((u32 *)tl_out)[2 + (k) * gridDim.x + blockIdx.x])
constexpr int COMMIT_BLOCK = GP_COMMIT_BLOCK;''')
rep("""                                           u32 *row_ids, Report *report, u32 seq) {""","""                                           u32 *row_ids, Report *report, u32 seq, void *tl_out) {""")
rep("""    // The block's faults and filings are visible""","""    if (threadIdx.x == 0) TL(4) = gp_stamp();
    // The block's faults and filings are visible""")
rep("""    if (threadIdx.x != 0) return;""","""    if (threadIdx.x != 0) return;
    TL(1) = gp_stamp();
    TL(2) = 0;""")
rep("""        publish(rows, ctr, report, seq, block_flagged);
        return;""","""        TL(5) = TL(1);
        publish(rows, ctr, report, seq, block_flagged);
        TL(2) = gp_stamp();
        return;""")
rep("""    const u64 before = atomicAdd((unsigned long long *)&ctr->ticket, mine);""","""    const u64 before = atomicAdd((unsigned long long *)&ctr->ticket, mine);
    TL(5) = gp_stamp();""")
rep("""        publish(rows, ctr, report, seq, any);""","""        publish(rows, ctr, report, seq, any);
        TL(2) = gp_stamp();""")
rep("""    __syncthreads();
    // Lane l of warp w""","""    __syncthreads();
    void *tl_out = out;
    if (threadIdx.x == 0) TL(4) = gp_stamp();
    // Lane l of warp w""")
rep("""        if ((int)lane == at) found = f;""","""        if ((int)lane == at) found = f;
        if (todo && lane == 0) atomicMax(&TL(5), gp_stamp());""")
rep("""    if (lane == 0 && fault == ~0u)
        while ((fault = verdict(ctr, seq)) == ~0u) __nanosleep(256);""","""    if (lane == 0) atomicMax(&TL(1), gp_stamp());
    if (lane == 0 && fault == ~0u)
        while ((fault = verdict(ctr, seq)) == ~0u) __nanosleep(256);
    if (lane == 0) atomicMax(&TL(2), gp_stamp());
    if (lane == 0) fault = 7;""")
rep("""    gp::wait_for_prior_grids();
    const Rows rows{offsets, ranks, flags};
    if (blockIdx.x < vblocks) check_rows(rows, len, (u32)nrows, vblocks, ctr, row_ids, report, seq);""","""    void *tl_out = out;
    if (threadIdx.x == 0) { TL(0) = gp_stamp(); TL(3) = gp_smid(); TL(1) = 0; TL(2) = 0; TL(5) = 0; if (blockIdx.x == 0) { ((u32 *)tl_out)[0] = gridDim.x; ((u32 *)tl_out)[1] = vblocks; } }
    gp::wait_for_prior_grids();
    const Rows rows{offsets, ranks, flags};
    if (blockIdx.x < vblocks) check_rows(rows, len, (u32)nrows, vblocks, ctr, row_ids, report, seq, out);""")
open(p,'w').write(s)
