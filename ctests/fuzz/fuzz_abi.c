/*
 * fuzz_abi: a fuzzer of gpuprims' C ABI (issue 37). Seeded random sequences of calls of
 * every function in include/gpuprims.h, with valid and hostile arguments, each checked
 * against a model of what the library holds:
 *
 *   - every status is one the call may return: OK when nothing is wrong with the call,
 *     else the status of one of its faults (NULL, destroyed, forged and wrong-kind
 *     handles; unknown enum values and dtypes; mismatched contexts, dtypes and lengths;
 *     buffers that share memory where that is refused; ranks and ranges past the end;
 *     offsets that are no rows; malformed rule and RLE texts; sizes no allocation can
 *     serve, and 0 where that is refused; for communicators and groups, a device's
 *     buffer of another device's context, NULL entries and arrays, ranks asked
 *     different things, k past the total of all shards);
 *   - a failure leaves a message in gpuprims_last_error() that names the function;
 *   - a failure writes no out-parameter, no host array and no buffer (poisoned before,
 *     compared after); a destroy of a bad handle is a no-op that keeps the last error;
 *   - on OK, results at small sizes are right: compared with references computed here
 *     (reduce, scan, sorts, select, top-k, segmented select, Life steps, RLE, rules) and,
 *     for the calls over a comm's or a group's ranks, with one context's call on the
 *     shards one after another (reduce, select_kth, radix sort),
 *     floats as the tests compare them (NaN rules of the header; float sums within
 *     tolerance, not compared where a partial sum could overflow); and every live buffer
 *     and grid is read back now and then and must hold what the model says;
 *   - nothing crashes, and AddressSanitizer / UndefinedBehaviorSanitizer stay quiet
 *     (cmake/fuzz.cmake builds it with both where the compiler has them).
 *
 * Not called: gpuprims_context_set_stream with a non-NULL stream (a caller's stream is
 * the caller's to get right on CUDA), gpuprims_buffer_wrap_device with a pointer that is
 * not device memory of a live buffer (CUDA), host arrays shorter than the length passed
 * with them where that length is in range (the caller's undefined behaviour, not a bug
 * of the library), the test-only gpuprims_fault_inject with a valid spec (only
 * malformed ones: an armed fault would fail calls the fuzzer expects to pass), and
 * communicators of more than one rank (one thread makes every call: a lone rank would
 * wait for the others; groups of up to three host devices cover several ranks).
 *
 * Environment:
 *   GPUPRIMS_FUZZ_SEED=<seed>     replays a run (the seed is printed at the start)
 *   GPUPRIMS_FUZZ_SECONDS=<s>     run for s seconds (default 60)
 *   GPUPRIMS_FUZZ_CALLS=<n>       stop after n fuzz calls (with a seed: replays up to a failure)
 *   GPUPRIMS_FUZZ_TRACE=1         print every library call as it is made
 *   GPUPRIMS_BACKEND=host|cuda    the backend AUTO opens (CTest sets host)
 * A failed check prints the seed, the call's number, a replay command line and the last
 * 200 library calls, then exits 1; so does a crash or a sanitizer report. Exit 77: CUDA
 * asked for and no device.
 */
#include "fuzz.h"

typedef void (*fz_op_fn)(void);

static const struct {
  const char *name;
  fz_op_fn fn;
  unsigned weight;
} OPS[] = {
    {"context_create", fz_op_context_create, 2},
    {"context_destroy", fz_op_context_destroy, 1},
    {"context_query", fz_op_context_query, 3},
    {"context_misc", fz_op_context_misc, 2},
    {"buffer_create", fz_op_buffer_create, 6},
    {"buffer_from_host", fz_op_buffer_from_host, 8},
    {"buffer_wrap_device", fz_op_buffer_wrap, 2},
    {"buffer_wrap_host", fz_op_buffer_wrap_host, 3},
    {"buffer_destroy", fz_op_buffer_destroy, 6},
    {"buffer_query", fz_op_buffer_query, 4},
    {"buffer_write", fz_op_buffer_write, 5},
    {"buffer_read", fz_op_buffer_read, 5},
    {"buffer_copy", fz_op_buffer_copy, 4},
    {"info", fz_op_info, 3},
    {"fault", fz_op_fault, 1},
    {"reduce", fz_op_reduce, 6},
    {"reduce_to_buffer", fz_op_reduce_to_buffer, 4},
    {"scan", fz_op_scan, 6},
    {"select_kth", fz_op_select_kth, 5},
    {"select_kth_to_buffer", fz_op_select_kth_to_buffer, 4},
    {"topk", fz_op_topk, 6},
    {"segmented_select", fz_op_segmented_select, 6},
    {"segmented_topk", fz_op_segmented_topk, 6},
    {"sort", fz_op_sort, 8},
    {"life_create", fz_op_life_create, 2},
    {"life_destroy", fz_op_life_destroy, 1},
    {"life_rule", fz_op_life_rule, 3},
    {"life_cells", fz_op_life_cells, 3},
    {"life_rle_load", fz_op_life_rle_load, 3},
    {"life_rle_save", fz_op_life_rle_save, 2},
    {"life_step", fz_op_life_step, 3},
    {"life_query", fz_op_life_query, 2},
    {"comm_create", fz_op_comm_create, 2},
    {"comm_destroy", fz_op_comm_destroy, 1},
    {"comm_query", fz_op_comm_query, 1},
    {"group_create", fz_op_group_create, 1},
    {"group_destroy", fz_op_group_destroy, 1},
    {"group_query", fz_op_group_query, 2},
    {"multi_reduce", fz_op_multi_reduce, 4},
    {"multi_scan", fz_op_multi_scan, 3},
    {"multi_sort", fz_op_multi_sort, 4},
    {"multi_select", fz_op_multi_select, 3},
    {"multi_topk", fz_op_multi_topk, 4},
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t env_u64(const char *name, uint64_t fallback) {
  const char *v = getenv(name);
  return v && *v ? (uint64_t)strtoull(v, NULL, 0) : fallback;
}

static int pick_op(unsigned total) {
  unsigned r = (unsigned)fz_below(total), i;
  for (i = 0; i < TU_ARRAY_LEN(OPS); i++) {
    if (r < OPS[i].weight) return (int)i;
    r -= OPS[i].weight;
  }
  return 0;
}

/* A fresh seed from the clock and the pid, as test_util.h makes them. */
static uint64_t fresh_seed(void) {
  struct timespec ts;
  uint64_t x;
  clock_gettime(CLOCK_REALTIME, &ts);
  x = (uint64_t)ts.tv_sec * 1000000007ull ^ ((uint64_t)ts.tv_nsec << 20) ^ ((uint64_t)getpid() << 40);
  return tu_splitmix64(&x);
}

int main(void) {
  double seconds = (double)env_u64("GPUPRIMS_FUZZ_SECONDS", 60), t0, last_progress;
  uint64_t max_calls = env_u64("GPUPRIMS_FUZZ_CALLS", 0);
  unsigned total = 0, i;
  char name[96] = "";
  size_t needed = 0;

  setvbuf(stdout, NULL, _IOLBF, 0);
  tu_state.name = "fuzz_abi";
  memset(&fz, 0, sizeof fz);
  fz.seed = getenv("GPUPRIMS_FUZZ_SEED") && *getenv("GPUPRIMS_FUZZ_SEED") ? env_u64("GPUPRIMS_FUZZ_SEED", 0) : fresh_seed();
  fz.trace = (int)env_u64("GPUPRIMS_FUZZ_TRACE", 0);
  tu_rng_seed(&fz.rng, fz.seed);
  fz_log_init();
  fz_install_crash_handlers();
  printf("fuzz_abi: seed 0x%016llx (replay: GPUPRIMS_FUZZ_SEED=0x%016llx)\n", (unsigned long long)fz.seed,
         (unsigned long long)fz.seed);
  if (max_calls)
    printf("fuzz_abi: %llu fuzz calls (GPUPRIMS_FUZZ_CALLS)\n", (unsigned long long)max_calls);
  else
    printf("fuzz_abi: for %.0f s (GPUPRIMS_FUZZ_SECONDS)\n", seconds);

  fz_pool_init();
  gpuprims_context_device_name(fz.ctx[fz_main_ctx()].h, name, sizeof name, &needed);
  printf("fuzz_abi: AUTO opened %s: %s\n", tu_backend_name(fz.ctx[fz_main_ctx()].backend), name);
  for (i = 0; i < TU_ARRAY_LEN(OPS); i++) total += OPS[i].weight;

  t0 = last_progress = now_s();
  for (fz.op = 0; max_calls ? fz.op < max_calls : now_s() - t0 < seconds; fz.op++) {
    fz_unpin_all();
    OPS[pick_op(total)].fn();
    if (fz.op % 256 == 255) fz_verify_all("in the periodic check of every buffer and grid");
    if (now_s() - last_progress >= 15.0) {
      last_progress = now_s();
      fz_progress(last_progress - t0, 0);
    }
  }
  fz_unpin_all();
  fz_verify_all("at the end");
  fz_pool_teardown();
  fz_progress(now_s() - t0, 1);
  printf("fuzz_abi: PASS (seed 0x%016llx)\n", (unsigned long long)fz.seed);
  return 0;
}
