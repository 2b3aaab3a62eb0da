/* The multi-GPU rows of the tour (issues 41 and 42): gpuprims_group_* on 2 GPUs and on
 * every visible GPU (when more than 2), against one GPU's time for the same work,
 * measured in the same run on the same machine:
 *   sort u32 keys, 2^30 in all (device-resident shards, restored before each run),
 *   sort u32/u32 pairs, 2^30 in all,
 *   sort weak scaling: 2^28 u32 keys on each GPU (one GPU: its 2^28),
 *   reduce sum f32, 2^32 in all,
 *   select_kth (the median) and top-k k = 100 (with indices), f32, 2^32 in all,
 *   reduce, top-k and sort of 2^20 in all: the cost of a call beyond its work.
 * Each timing is wall clock around the call and a synchronize of every context, median
 * of a few runs after one untimed run. GPUPRIMS_BENCH_MULTI_SHIFT=s makes every size
 * 2^s times smaller (a quick look); GPUPRIMS_BENCH_MULTI_ROWS=text runs only the rows
 * whose label contains text; GPUPRIMS_BENCH_MULTI_SEED=n draws other data (0, the
 * default, the data of every earlier run). speedup = one GPU's ms / the group's (weak scaling:
 * the group's ms / one GPU's, which should stay near 1).
 *
 * Checks: the group's reduce within a float tolerance of one GPU's, select_kth and top-k
 * equal to one GPU's, and every sort's shards in order at their boundaries with the same
 * u32 sum as before (a lost or doubled key changes it).
 *
 * One more run of each row with GPUPRIMS_MULTI_TIMES=1 prints the library's phase
 * times (the sort's local sort, splitters, exchange with its bandwidth, merge; the
 * others' local work and exchanges) on stderr.
 */
#define _POSIX_C_SOURCE 200809L

#include "multi_bench.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "timer.h"

#define MAX_GPUS 8

typedef struct {
  int n;
  gpuprims_context *ctx[MAX_GPUS];
  gpuprims_group *group; /* NULL: one context, ctx[0] */
} gpus;

static int reps_of(int reps) { return reps < 3 ? 3 : reps > 7 ? 7 : reps; }

static void sync_all(const gpus *g) {
  int i;
  for (i = 0; i < g->n; i++) gpuprims_context_synchronize(g->ctx[i]);
}

static int open_gpus(gpus *g, int n) {
  int32_t devices[MAX_GPUS];
  int i;
  memset(g, 0, sizeof *g);
  g->n = n;
  for (i = 0; i < n; i++) devices[i] = i;
  if (gpuprims_group_create(GPUPRIMS_BACKEND_CUDA, devices, (size_t)n, &g->group) != GPUPRIMS_STATUS_OK) return -1;
  for (i = 0; i < n; i++)
    if (gpuprims_group_context(g->group, (size_t)i, &g->ctx[i]) != GPUPRIMS_STATUS_OK) return -1;
  return 0;
}

static void close_gpus(gpus *g) {
  int i;
  for (i = 0; i < g->n; i++) gpuprims_context_destroy(g->ctx[i]);
  gpuprims_group_destroy(g->group);
}

/* Buffers of `per[i]` elements on each GPU, filled from host data in order. */
static int upload(const gpus *g, gpuprims_dtype t, size_t width, const void *data, const size_t *per,
                  gpuprims_buffer **out) {
  size_t at = 0;
  int i;
  for (i = 0; i < g->n; i++) {
    if (gpuprims_buffer_from_host(g->ctx[i], t, (const unsigned char *)data + at * width, per[i], &out[i]))
      return -1;
    at += per[i];
  }
  return 0;
}

static void split_even(size_t n, int parts, size_t *per) {
  int i;
  for (i = 0; i < parts; i++) per[i] = n / (size_t)parts + ((size_t)i < n % (size_t)parts);
}

static void free_all(gpuprims_buffer **b, int n) {
  int i;
  for (i = 0; i < n; i++) gpuprims_buffer_destroy(b[i]), b[i] = NULL;
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
  return t[n / 2];
}

static void report_error(const char *what) {
  char msg[512];
  gpuprims_last_error(msg, sizeof msg);
  printf("  ! %s failed: %s\n", what, msg);
}

/* ------------------------------------------------------------------------------------- */
/* One operation timed on a set of GPUs                                                    */
/* ------------------------------------------------------------------------------------- */

enum { OP_SORT, OP_PAIRS, OP_REDUCE, OP_SELECT, OP_TOPK };

typedef struct {
  int op;
  size_t per[MAX_GPUS];
  gpuprims_buffer *in[MAX_GPUS], *pristine[MAX_GPUS], *vals[MAX_GPUS], *out[MAX_GPUS], *idx[MAX_GPUS];
  uint64_t value; /* reduce, select: the result's bits */
  uint64_t topk_first[4];
} work;

/* One run of the operation; for sorts, the keys are restored first (not timed). */
static int run_once(const gpus *g, work *w, double *ms) {
  gpuprims_status s = GPUPRIMS_STATUS_OK;
  double t0;
  int i;
  if (w->op == OP_SORT || w->op == OP_PAIRS) {
    for (i = 0; i < g->n; i++) gpuprims_buffer_copy(w->in[i], w->pristine[i]);
    sync_all(g);
  }
  t0 = bench_wall_ms();
  switch (w->op) {
    case OP_SORT:
    case OP_PAIRS: {
      gpuprims_buffer **values = w->op == OP_PAIRS ? w->vals : NULL;
      s = g->group ? gpuprims_group_radix_sort(g->group, w->in, values, GPUPRIMS_ORDER_ASCENDING)
                   : gpuprims_radix_sort(g->ctx[0], w->in[0], values ? values[0] : NULL, GPUPRIMS_ORDER_ASCENDING);
      break;
    }
    case OP_REDUCE:
      s = g->group ? gpuprims_group_reduce(g->group, (const gpuprims_buffer *const *)w->in, GPUPRIMS_OP_SUM, &w->value)
                   : gpuprims_reduce(g->ctx[0], w->in[0], GPUPRIMS_OP_SUM, &w->value);
      break;
    case OP_SELECT: {
      size_t total = 0;
      for (i = 0; i < g->n; i++) total += w->per[i];
      s = g->group ? gpuprims_group_select_kth(g->group, (const gpuprims_buffer *const *)w->in, total / 2, &w->value)
                   : gpuprims_select_kth(g->ctx[0], w->in[0], total / 2, &w->value);
      break;
    }
    case OP_TOPK:
      s = g->group ? gpuprims_group_topk(g->group, (const gpuprims_buffer *const *)w->in, 100,
                                         GPUPRIMS_ORDER_DESCENDING, w->out, w->idx)
                   : gpuprims_topk(g->ctx[0], w->in[0], 100, GPUPRIMS_ORDER_DESCENDING, w->out[0], w->idx[0]);
      break;
  }
  sync_all(g);
  *ms = bench_wall_ms() - t0;
  if (s != GPUPRIMS_STATUS_OK) report_error("a multi-GPU row's call");
  return s == GPUPRIMS_STATUS_OK ? 0 : -1;
}

static double time_work(const gpus *g, work *w, int reps) {
  double t[16], ms;
  int r;
  if (run_once(g, w, &ms)) return -1;
  for (r = 0; r < reps; r++)
    if (run_once(g, w, &t[r])) return -1;
  return median(t, reps);
}

/* Buffers for `op` on `g` with the host data (keys as u32 or f32 bits). */
static int prepare(const gpus *g, work *w, int op, const uint32_t *data, size_t n, const size_t *per_gpu) {
  int i, fail = 0;
  memset(w, 0, sizeof *w);
  w->op = op;
  if (per_gpu) memcpy(w->per, per_gpu, sizeof(size_t) * (size_t)g->n);
  else split_even(n, g->n, w->per);
  {
    gpuprims_dtype t = op == OP_SORT || op == OP_PAIRS ? GPUPRIMS_DTYPE_U32 : GPUPRIMS_DTYPE_F32;
    fail |= upload(g, t, 4, data, w->per, w->in);
    if (op == OP_SORT || op == OP_PAIRS) fail |= upload(g, t, 4, data, w->per, w->pristine);
    if (op == OP_PAIRS) fail |= upload(g, GPUPRIMS_DTYPE_U32, 4, data, w->per, w->vals);
    for (i = 0; op == OP_TOPK && i < g->n; i++) {
      fail |= gpuprims_buffer_create(g->ctx[i], GPUPRIMS_DTYPE_F32, 100, &w->out[i]) != 0;
      fail |= gpuprims_buffer_create(g->ctx[i], GPUPRIMS_DTYPE_U64, 100, &w->idx[i]) != 0;
    }
  }
  if (fail) report_error("allocating a multi-GPU row's buffers");
  return fail ? -1 : 0;
}

static void release(const gpus *g, work *w) {
  free_all(w->in, g->n), free_all(w->pristine, g->n), free_all(w->vals, g->n);
  free_all(w->out, g->n), free_all(w->idx, g->n);
}

/* Sorted shards in order at their boundaries, and the keys' u32 sum unchanged. */
static int sort_ok(const gpus *g, work *w, uint32_t want_sum) {
  uint32_t sum = 0, prev_last = 0, first, last;
  uint64_t part = 0;
  int i, ok = 1;
  for (i = 0; i < g->n; i++) {
    if (!w->per[i]) continue;
    gpuprims_buffer_read(w->in[i], 0, &first, 1);
    gpuprims_buffer_read(w->in[i], w->per[i] - 1, &last, 1);
    if (i > 0 && first < prev_last) ok = 0;
    prev_last = last;
    gpuprims_reduce(g->ctx[i], w->in[i], GPUPRIMS_OP_SUM, &part);
    sum += (uint32_t)part;
  }
  return ok && sum == want_sum;
}

/* ------------------------------------------------------------------------------------- */
/* The rows                                                                                */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  const char *label;
  int op;
  int log2; /* elements in all (weak scaling: on each GPU) */
  int weak;
} row_def;

static const row_def ROWS[] = {
    {"sort u32 keys", OP_SORT, 30, 0},
    {"sort u32/u32 pairs", OP_PAIRS, 30, 0},
    {"sort u32 keys, weak scaling (per GPU)", OP_SORT, 28, 1},
    {"reduce sum f32", OP_REDUCE, 32, 0},
    {"select_kth f32 (median)", OP_SELECT, 32, 0},
    {"topk f32 k=100", OP_TOPK, 32, 0},
    /* Small calls: what a call costs beyond its work (plans, threads, waits). */
    {"reduce sum f32, small", OP_REDUCE, 20, 0},
    {"topk f32 k=100, small", OP_TOPK, 20, 0},
    {"sort u32 keys, small", OP_SORT, 20, 0},
};

/* Host data, made once: u32 random bits (the sorts), f32 uniform in [-1, 1) (the rest). */
static uint32_t *make_data(size_t n, int floats) {
  uint32_t *d = (uint32_t *)malloc(n * 4);
  const char *seed = getenv("GPUPRIMS_BENCH_MULTI_SEED");
  uint64_t s = (floats ? 0x666c6f6174ull : 0x6d756c7469ull) ^ (seed ? strtoull(seed, NULL, 0) : 0);
  size_t i;
  if (!d) return NULL;
  for (i = 0; i + 1 < n; i += 2) {
    uint64_t x = bench_splitmix64(&s);
    d[i] = (uint32_t)x, d[i + 1] = (uint32_t)(x >> 32);
  }
  if (n & 1) d[n - 1] = (uint32_t)bench_splitmix64(&s);
  if (floats)
    for (i = 0; i < n; i++) {
      uint32_t bits = (d[i] >> 9) | 0x40000000u; /* [2, 4) */
      float f;
      memcpy(&f, &bits, 4);
      f -= 3.0f;
      memcpy(&d[i], &f, 4);
    }
  return d;
}

static uint32_t u32_sum(const uint32_t *d, size_t n) {
  uint32_t s = 0;
  size_t i;
  for (i = 0; i < n; i++) s += d[i];
  return s;
}

/* Whether the group's result matches one GPU's (see the header). */
static int same_result(const row_def *r, const gpus *group, work *wo, work *wg, const uint32_t *data, size_t n) {
  if (r->op == OP_SORT || r->op == OP_PAIRS) return sort_ok(group, wg, u32_sum(data, n));
  if (r->op == OP_REDUCE) {
    float a, b;
    memcpy(&a, &wo->value, 4), memcpy(&b, &wg->value, 4);
    return fabs((double)a - (double)b) <= 1e-6 * (double)n;
  }
  if (r->op == OP_SELECT) return (uint32_t)wo->value == (uint32_t)wg->value;
  {
    float a[100], b[100];
    uint64_t ia[100], ib[100];
    gpuprims_buffer_read(wo->out[0], 0, a, 100), gpuprims_buffer_read(wo->idx[0], 0, ia, 100);
    gpuprims_buffer_read(wg->out[group->n - 1], 0, b, 100), gpuprims_buffer_read(wg->idx[group->n - 1], 0, ib, 100);
    return memcmp(a, b, sizeof a) == 0 && memcmp(ia, ib, sizeof ia) == 0;
  }
}

/* Runs one row on one GPU and on the group; prints its line. Returns 1 on failure. */
static int run_row(const row_def *r, const gpus *one, const gpus *group, const uint32_t *data, int shift, int reps) {
  size_t size = (size_t)1 << (r->log2 - shift);
  size_t n_group = r->weak ? size * (size_t)group->n : size;
  work wo, wg;
  double t_one = -1, t_group = -1, speedup = 0, ms;
  int ok = 0;
  bench_progress("multi-GPU: %s, 2^%d %s, %d GPUs", r->label, r->log2 - shift, r->weak ? "a GPU" : "in all", group->n);
  if (prepare(one, &wo, r->op, data, size, NULL) == 0) t_one = time_work(one, &wo, reps);
  if (prepare(group, &wg, r->op, data, n_group, NULL) == 0) t_group = time_work(group, &wg, reps);
  if (t_one > 0 && t_group > 0) {
    ok = same_result(r, group, &wo, &wg, data, n_group);
    speedup = r->weak ? t_group / t_one : t_one / t_group;
    /* One more run, its phases on stderr. */
    setenv("GPUPRIMS_MULTI_TIMES", "1", 1);
    run_once(group, &wg, &ms);
    unsetenv("GPUPRIMS_MULTI_TIMES");
  }
  printf("  %-40s %5d %12.3f %12.3f %8.2f%s %6s\n", r->label, group->n, t_one, t_group, speedup,
         r->weak ? "t" : "x", ok ? "ok" : "FAIL");
  release(one, &wo);
  release(group, &wg);
  return ok ? 0 : 1;
}

int multi_tour(const char *only, int reps) {
  gpus one, group;
  int ngpus = 0, shift = 0, failures = 0, sizes[2], nsizes = 0, s;
  size_t r;
  const char *env = getenv("GPUPRIMS_BENCH_MULTI_SHIFT");
  const char *rows = getenv("GPUPRIMS_BENCH_MULTI_ROWS"); /* only rows whose label has this */
  uint32_t *keys = NULL, *floats = NULL;
  gpuprims_context *probe = NULL;
  if (only && !strstr(only, "multi")) return 0;
  while (ngpus < MAX_GPUS && gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, ngpus, &probe) == GPUPRIMS_STATUS_OK) {
    gpuprims_context_destroy(probe);
    ngpus++;
  }
  if (ngpus < 2) {
    if (only) printf("\nmulti-GPU rows: %d CUDA device(s) visible, need 2: skipped\n", ngpus);
    return 0;
  }
  if (env) shift = atoi(env);
  if (shift < 0 || shift > 20) shift = shift < 0 ? 0 : 20; /* the data's sizes stay whole powers of two */
  reps = reps_of(reps);
  sizes[nsizes++] = 2;
  if (ngpus > 2) sizes[nsizes++] = ngpus;
  memset(&one, 0, sizeof one);
  one.n = 1;
  if (gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &one.ctx[0]) != GPUPRIMS_STATUS_OK) return 1;
  keys = make_data(((size_t)1 << (30 - shift)) > ((size_t)ngpus << (28 - shift)) ? (size_t)1 << (30 - shift)
                                                                                 : (size_t)ngpus << (28 - shift),
                   0);
  floats = make_data((size_t)1 << (32 - shift), 1);
  printf("\nMulti-GPU rows (gpuprims_group_*, %d GPUs visible; one GPU = device 0 alone; wall clock, median of %d;"
         " sizes 2^-%d of the issue's):\n",
         ngpus, reps, shift);
  printf("  %-40s %5s %12s %12s %9s %6s\n", "work", "GPUs", "one GPU ms", "group ms", "speedup", "check");
  for (s = 0; s < nsizes; s++) {
    if (open_gpus(&group, sizes[s]) != 0) {
      report_error("gpuprims_group_create");
      failures++;
      continue;
    }
    for (r = 0; r < sizeof ROWS / sizeof ROWS[0]; r++) {
      const uint32_t *data = ROWS[r].op == OP_SORT || ROWS[r].op == OP_PAIRS ? keys : floats;
      if ((rows && !strstr(ROWS[r].label, rows)) || ROWS[r].log2 - shift < 1) continue; /* filtered, or shifted to nothing */
      if (!data) {
        printf("  ! out of host memory for the data\n");
        failures++;
        continue;
      }
      failures += run_row(&ROWS[r], &one, &group, data, shift, reps);
    }
    close_gpus(&group);
  }
  gpuprims_context_destroy(one.ctx[0]);
  free(keys), free(floats);
  printf("  (speedup: one GPU's ms / the group's; weak scaling: the group's ms / one GPU's for its share, as t)\n");
  return failures;
}
