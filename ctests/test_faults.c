/*
 * test_faults: what a failure leaves behind. For each primitive (a "scenario": its
 * buffers, their roles and a call), every allocation, module compile, module load and
 * kernel launch the call makes is made to fail in turn (gpuprims_fault_inject), each on
 * a fresh context, and after each failure:
 *   1. the status is the one of the failed operation (OUT_OF_MEMORY, COMPILE_ERROR,
 *      DRIVER_ERROR) and the message says what failed;
 *   2. buffers hold what they held: all of them when the failure came before the call's
 *      first write (allocations, compiles and loads always do; the first launch too),
 *      the inputs that are not outputs in every case (header: "Failures");
 *   3. the context works: the same call again gives the reference result, and other
 *      primitives after it are right.
 * At the end no memory is held (gpuprims_fault_counts.bytes_held), so nothing leaked.
 * References come from a host-backend context. On CUDA also: a real out-of-memory (a
 * sort whose scratch does not fit beside its keys) and, in a child process, a kernel's
 * fault (a sticky error: every later call on the device fails and says the context is
 * lost; CUDA 13 gives the process no new context on the device, host contexts still
 * work, and this process's context is unaffected).
 *
 * GPUPRIMS_FAULT_ONLY=<scenario name> walks one scenario.
 */
#include "test_util.h"

#include <spawn.h>
#include <sys/wait.h>

#define FT_MAX_BUFS 4
#define FT_HOST_OUT 64 /* bytes of host output a scenario may have */

enum { FT_IN = 1, FT_OUT = 2, FT_INOUT = 3 };
enum { FT_RANDOM, FT_DISTINCT, FT_POISON, FT_ROWS, FT_HUGE_ROWS };

typedef struct {
  gpuprims_dtype dtype;
  size_t len;
  int role;
  int fill;
} ft_buf_spec;

typedef gpuprims_status (*ft_run_fn)(gpuprims_context *ctx, gpuprims_buffer **b, unsigned char *host_out);

typedef struct {
  const char *name;
  int nbuf;
  ft_buf_spec buf[FT_MAX_BUFS];
  ft_run_fn run;
} ft_scenario;

/* ------------------------------------------------------------------------------------- */
/* The calls                                                                              */
/* ------------------------------------------------------------------------------------- */

static gpuprims_status run_reduce_sum(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  return gpuprims_reduce(c, b[0], GPUPRIMS_OP_SUM, o);
}
static gpuprims_status run_reduce_max(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  return gpuprims_reduce(c, b[0], GPUPRIMS_OP_MAX, o);
}
static gpuprims_status run_reduce_to_buffer(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_reduce_to_buffer(c, b[0], GPUPRIMS_OP_MIN, b[1]);
}
static gpuprims_status run_scan_inclusive(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_scan(c, b[0], b[1], GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE);
}
static gpuprims_status run_scan_in_place(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_scan(c, b[0], b[0], GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_EXCLUSIVE);
}
static gpuprims_status run_radix_keys(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_radix_sort(c, b[0], NULL, GPUPRIMS_ORDER_ASCENDING);
}
static gpuprims_status run_radix_pairs(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_radix_sort(c, b[0], b[1], GPUPRIMS_ORDER_DESCENDING);
}
static gpuprims_status run_quicksort_keys(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_quicksort(c, b[0], NULL, GPUPRIMS_ORDER_ASCENDING);
}
static gpuprims_status run_quicksort_pairs(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_quicksort(c, b[0], b[1], GPUPRIMS_ORDER_ASCENDING);
}
static gpuprims_status run_select_kth(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  size_t n = 0;
  gpuprims_buffer_len(b[0], &n);
  return gpuprims_select_kth(c, b[0], n / 3, o);
}
static gpuprims_status run_select_kth_to_buffer(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_select_kth_to_buffer(c, b[0], 12345, b[1]);
}
static gpuprims_status run_topk(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  size_t k = 0;
  (void)o;
  gpuprims_buffer_len(b[1], &k);
  return gpuprims_topk(c, b[0], k, GPUPRIMS_ORDER_DESCENDING, b[1], b[2]);
}
static gpuprims_status run_topk_values(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  size_t k = 0;
  (void)o;
  gpuprims_buffer_len(b[1], &k);
  return gpuprims_topk(c, b[0], k, GPUPRIMS_ORDER_ASCENDING, b[1], NULL);
}
static gpuprims_status run_segmented_select(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_segmented_select(c, b[0], b[1], NULL, b[2]);
}
static gpuprims_status run_segmented_topk(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_segmented_topk(c, b[0], b[1], 0, 4, NULL, GPUPRIMS_ORDER_DESCENDING, b[2], b[3]);
}
/* k past one block's results (2,048): the long rows go one by one through the top-k. */
static gpuprims_status run_segmented_topk_huge(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  (void)o;
  return gpuprims_segmented_topk(c, b[0], b[1], 0, 3000, NULL, GPUPRIMS_ORDER_ASCENDING, b[2], b[3]);
}

/* A buffer made from host memory: on failure no handle comes out. */
static gpuprims_status run_buffer_from_host(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  uint32_t data[1000];
  gpuprims_buffer *made = TU_SENTINEL_PTR(gpuprims_buffer);
  gpuprims_status s;
  size_t i;
  (void)b;
  for (i = 0; i < TU_ARRAY_LEN(data); i++) data[i] = (uint32_t)(i * 2654435761u);
  s = gpuprims_buffer_from_host(c, GPUPRIMS_DTYPE_U32, data, TU_ARRAY_LEN(data), &made);
  if (s != GPUPRIMS_STATUS_OK) {
    TU_CHECKF(made == TU_SENTINEL_PTR(gpuprims_buffer), "buffer_from_host failed but wrote a handle");
    return s;
  }
  s = gpuprims_buffer_read(made, 500, o, 8);
  gpuprims_buffer_destroy(made);
  return s;
}

/* A Life grid made, written, stepped and counted: its population is the result. */
static gpuprims_status run_life(gpuprims_context *c, gpuprims_buffer **b, unsigned char *o) {
  enum { W = 200, H = 130 };
  static uint8_t cells[W * H];
  gpuprims_life_grid *g = TU_SENTINEL_PTR(gpuprims_life_grid);
  gpuprims_status s;
  uint64_t pop = 0;
  size_t i;
  (void)b;
  for (i = 0; i < TU_ARRAY_LEN(cells); i++) cells[i] = (uint8_t)(((i * 2654435761u) >> 13) % 3 == 0);
  s = gpuprims_life_create(c, W, H, GPUPRIMS_LIFE_TORUS, &g);
  if (s != GPUPRIMS_STATUS_OK) {
    TU_CHECKF(g == TU_SENTINEL_PTR(gpuprims_life_grid), "life_create failed but wrote a handle");
    return s;
  }
  s = gpuprims_life_write_cells(g, cells);
  if (s == GPUPRIMS_STATUS_OK) s = gpuprims_life_step(g, 37);
  if (s == GPUPRIMS_STATUS_OK) s = gpuprims_life_population(g, &pop);
  if (s == GPUPRIMS_STATUS_OK) memcpy(o, &pop, sizeof pop);
  gpuprims_life_destroy(g);
  return s;
}

#define B(dt, n, role, fill) {GPUPRIMS_DTYPE_##dt, (n), (role), (fill)}
#define NONE {GPUPRIMS_DTYPE_U8, 0, 0, 0}

/* Sizes past one tile everywhere, so the multi-kernel paths run; distinct keys where the
 * result of an unstable sort must be exact. */
static const ft_scenario SCENARIOS[] = {
    {"reduce_sum_i64", 1, {B(I64, 300001, FT_IN, FT_RANDOM), NONE, NONE, NONE}, run_reduce_sum},
    {"reduce_max_f32", 1, {B(F32, 200003, FT_IN, FT_DISTINCT), NONE, NONE, NONE}, run_reduce_max},
    {"reduce_to_buffer_u16", 2, {B(U16, 100000, FT_IN, FT_RANDOM), B(U16, 1, FT_OUT, FT_POISON), NONE, NONE}, run_reduce_to_buffer},
    {"scan_inclusive_i32", 2, {B(I32, 250000, FT_IN, FT_RANDOM), B(I32, 250000, FT_OUT, FT_POISON), NONE, NONE}, run_scan_inclusive},
    {"scan_exclusive_in_place_u64", 1, {B(U64, 150000, FT_INOUT, FT_RANDOM), NONE, NONE, NONE}, run_scan_in_place},
    {"radix_sort_u32", 1, {B(U32, 400000, FT_INOUT, FT_RANDOM), NONE, NONE, NONE}, run_radix_keys},
    {"radix_sort_u8", 1, {B(U8, 300000, FT_INOUT, FT_RANDOM), NONE, NONE, NONE}, run_radix_keys},
    {"radix_sort_f64_pairs", 2, {B(F64, 200000, FT_INOUT, FT_DISTINCT), B(U32, 200000, FT_INOUT, FT_RANDOM), NONE, NONE}, run_radix_pairs},
    {"quicksort_i32", 1, {B(I32, 400000, FT_INOUT, FT_RANDOM), NONE, NONE, NONE}, run_quicksort_keys},
    {"quicksort_f32_pairs", 2, {B(F32, 300000, FT_INOUT, FT_DISTINCT), B(U64, 300000, FT_INOUT, FT_RANDOM), NONE, NONE}, run_quicksort_pairs},
    {"select_kth_f32", 1, {B(F32, 1000003, FT_IN, FT_DISTINCT), NONE, NONE, NONE}, run_select_kth},
    {"select_kth_to_buffer_i64", 2, {B(I64, 500000, FT_IN, FT_RANDOM), B(I64, 1, FT_OUT, FT_POISON), NONE, NONE}, run_select_kth_to_buffer},
    {"topk_u32", 3, {B(U32, 700000, FT_IN, FT_RANDOM), B(U32, 300, FT_OUT, FT_POISON), B(U64, 300, FT_OUT, FT_POISON), NONE}, run_topk},
    /* k past one block's sort, under 1/16 of the input: the gathered k are radix sorted
     * (pairs), counting sorted (U8). */
    {"topk_large_k_f64", 3, {B(F64, 600000, FT_IN, FT_DISTINCT), B(F64, 30000, FT_OUT, FT_POISON), B(U64, 30000, FT_OUT, FT_POISON), NONE}, run_topk},
    {"topk_large_k_u8", 2, {B(U8, 300000, FT_IN, FT_RANDOM), B(U8, 18000, FT_OUT, FT_POISON), NONE, NONE}, run_topk_values},
    /* k at least 1/16 of an input up to 2^21: a copy of the whole input is sorted
     * (src/backend/cuda/topk_by_sort.rs), with indices and without. */
    {"topk_sort_whole_f32", 3, {B(F32, 200000, FT_IN, FT_DISTINCT), B(F32, 20000, FT_OUT, FT_POISON), B(U64, 20000, FT_OUT, FT_POISON), NONE}, run_topk},
    {"topk_sort_whole_u16", 2, {B(U16, 100000, FT_IN, FT_RANDOM), B(U16, 10000, FT_OUT, FT_POISON), NONE, NONE}, run_topk_values},
    /* Deep enough for a second partition level. */
    {"quicksort_u32_levels", 1, {B(U32, 3000000, FT_INOUT, FT_DISTINCT), NONE, NONE, NONE}, run_quicksort_keys},
    {"segmented_select_f32", 3, {B(F32, 600000, FT_IN, FT_DISTINCT), B(U64, 1001, FT_IN, FT_ROWS), B(F32, 1000, FT_OUT, FT_POISON), NONE}, run_segmented_select},
    {"segmented_topk_f32", 4, {B(F32, 600000, FT_IN, FT_DISTINCT), B(U64, 1001, FT_IN, FT_ROWS), B(F32, 4000, FT_OUT, FT_POISON), B(U64, 4000, FT_OUT, FT_POISON)}, run_segmented_topk},
    /* Rows wanting 3,000 (four of them long enough to give them) between short ones: the
     * long rows' top-ks acquire all they take before the short rows' launch writes. */
    {"segmented_topk_huge_rows_f32", 4, {B(F32, 60000, FT_IN, FT_DISTINCT), B(U64, 13, FT_IN, FT_HUGE_ROWS), B(F32, 36000, FT_OUT, FT_POISON), B(U64, 36000, FT_OUT, FT_POISON)}, run_segmented_topk_huge},
    {"buffer_from_host", 0, {NONE, NONE, NONE, NONE}, run_buffer_from_host},
    {"life", 0, {NONE, NONE, NONE, NONE}, run_life},
};

/* ------------------------------------------------------------------------------------- */
/* Buffers: initial contents, set-up on a context, comparison                             */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  const ft_scenario *sc;
  unsigned char *init[FT_MAX_BUFS];     /* what each buffer holds before the call */
  unsigned char *expected[FT_MAX_BUFS]; /* and after it, on the host backend */
  unsigned char host_expected[FT_HOST_OUT];
} ft_case;

static size_t ft_bytes(const ft_buf_spec *b) { return b->len * tu_dtype_size(b->dtype); }

/* Rows of every class: short, medium and long, tiling the values (which hold rows_len). */
static void ft_fill_rows(uint64_t *offsets, size_t nrows, size_t values_len, tu_rng *r) {
  size_t i;
  offsets[0] = 0;
  for (i = 1; i < nrows; i++) {
    uint64_t room = values_len - offsets[i - 1] - (nrows - i); /* at least one a row after */
    uint64_t want = i % 97 == 0 ? 20000 : i % 7 == 0 ? 600 : 1 + tu_below(r, 40);
    offsets[i] = offsets[i - 1] + (want < room ? want : 1);
  }
  offsets[nrows] = values_len;
}

/* Short rows with a row of 5,000 every fourth, tiling the values (the last row takes the
 * rest: long too). */
static void ft_fill_huge_rows(uint64_t *offsets, size_t nrows, size_t values_len, tu_rng *r) {
  size_t i;
  offsets[0] = 0;
  for (i = 1; i < nrows; i++) offsets[i] = offsets[i - 1] + (i % 4 == 2 ? 5000 : 1 + tu_below(r, 40));
  offsets[nrows] = values_len;
}

static void ft_fill(const ft_buf_spec *b, unsigned char *p, tu_rng *r, size_t values_len) {
  size_t i, n = b->len;
  switch (b->fill) {
    case FT_POISON: memset(p, 0xA5, ft_bytes(b)); break;
    case FT_ROWS: ft_fill_rows((uint64_t *)(void *)p, n - 1, values_len, r); break;
    case FT_HUGE_ROWS: ft_fill_huge_rows((uint64_t *)(void *)p, n - 1, values_len, r); break;
    case FT_DISTINCT: /* a shuffled run of distinct values */
      for (i = 0; i < n; i++) {
        int64_t v = (int64_t)i - (int64_t)(n / 2);
        if (tu_dtype(b->dtype)->is_float)
          tu_put_f(b->dtype, p, i, (double)v);
        else
          tu_put_bits(b->dtype, p, i, (uint64_t)v);
      }
      for (i = n; i > 1; i--) {
        size_t j = (size_t)tu_below(r, i), w = tu_dtype_size(b->dtype);
        unsigned char t[8];
        memcpy(t, p + (i - 1) * w, w);
        memcpy(p + (i - 1) * w, p + j * w, w);
        memcpy(p + j * w, t, w);
      }
      break;
    default: tu_fill_bytes(r, p, ft_bytes(b)); break;
  }
}

/* Creates the case's buffers on ctx with their initial contents (no fault armed). */
static void ft_setup(gpuprims_context *ctx, const ft_case *c, gpuprims_buffer **b) {
  int i;
  for (i = 0; i < c->sc->nbuf; i++) {
    const ft_buf_spec *s = &c->sc->buf[i];
    TU_REQUIRE_OK(gpuprims_buffer_from_host(ctx, s->dtype, c->init[i], s->len, &b[i]));
  }
}

static void ft_teardown(const ft_case *c, gpuprims_buffer **b) {
  int i;
  for (i = 0; i < c->sc->nbuf; i++) gpuprims_buffer_destroy(b[i]);
}

/* Whether the buffer holds `want`. */
static int ft_holds(gpuprims_buffer *buf, const ft_buf_spec *s, const unsigned char *want) {
  size_t bytes = ft_bytes(s);
  unsigned char *got = (unsigned char *)tu_xmalloc(bytes);
  int same;
  memset(got, 0x5A, bytes);
  TU_REQUIRE_OK(gpuprims_buffer_read(buf, 0, got, s->len));
  same = memcmp(got, want, bytes) == 0;
  free(got);
  return same;
}

/* Runs the call unarmed on ctx's fresh buffers and checks the reference result. */
static void ft_check_result(gpuprims_context *ctx, const ft_case *c, const char *when) {
  gpuprims_buffer *b[FT_MAX_BUFS] = {NULL, NULL, NULL, NULL};
  unsigned char out[FT_HOST_OUT];
  int i;
  memset(out, 0xA5, sizeof out);
  ft_setup(ctx, c, b);
  TU_EXPECT_OK(c->sc->run(ctx, b, out));
  for (i = 0; i < c->sc->nbuf; i++)
    TU_CHECKF(ft_holds(b[i], &c->sc->buf[i], c->expected[i]), "%s %s: buffer %d differs from the host reference", c->sc->name, when, i);
  TU_CHECKF(memcmp(out, c->host_expected, sizeof out) == 0, "%s %s: host output differs from the host reference", c->sc->name, when);
  ft_teardown(c, b);
}

/* After a failure: other primitives on the context give right answers. */
static void ft_probe(gpuprims_context *ctx, tu_rng *r, const char *what) {
  enum { N = 70001 };
  static int32_t x[N], y[N];
  gpuprims_buffer *in, *out;
  int64_t sum = 0;
  int32_t got = 0;
  int32_t running = 0;
  size_t i, bad = 0;
  for (i = 0; i < N; i++) x[i] = (int32_t)tu_below(r, 2001) - 1000;
  TU_REQUIRE_OK(gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_I32, x, N, &in));
  TU_REQUIRE_OK(gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_I32, N, &out));
  TU_EXPECT_OK(gpuprims_scan(ctx, in, out, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE));
  TU_EXPECT_OK(gpuprims_radix_sort(ctx, in, NULL, GPUPRIMS_ORDER_ASCENDING));
  TU_EXPECT_OK(gpuprims_buffer_read(out, 0, y, N));
  for (i = 0; i < N; i++) bad += (y[i] != (running += x[i]));
  TU_CHECKF(bad == 0, "after %s: a scan on the context is wrong at %zu places", what, bad);
  TU_EXPECT_OK(gpuprims_buffer_read(in, 0, y, N));
  for (i = 1, bad = 0; i < N; i++) bad += y[i - 1] > y[i];
  TU_CHECKF(bad == 0, "after %s: a sort on the context is out of order at %zu places", what, bad);
  for (i = 0; i < N; i++) sum += x[i];
  TU_EXPECT_OK(gpuprims_reduce(ctx, in, GPUPRIMS_OP_SUM, &got));
  TU_CHECKF((int32_t)sum == (int32_t)got, "after %s: a reduce on the context is wrong", what);
  gpuprims_buffer_destroy(in);
  gpuprims_buffer_destroy(out);
}

/* ------------------------------------------------------------------------------------- */
/* The walk                                                                               */
/* ------------------------------------------------------------------------------------- */

typedef struct {
  const char *name; /* as in a fault spec */
  gpuprims_status status;
} ft_kind;

static const ft_kind KINDS[] = {
    {"compile", GPUPRIMS_STATUS_COMPILE_ERROR},
    {"load", GPUPRIMS_STATUS_DRIVER_ERROR},
    {"alloc", GPUPRIMS_STATUS_OUT_OF_MEMORY},
    {"launch", GPUPRIMS_STATUS_DRIVER_ERROR},
};

/* A context like the test's own (AUTO), without its banner; or a host one. */
static gpuprims_context *ft_open(gpuprims_backend backend) {
  gpuprims_context *ctx = NULL;
  TU_REQUIRE_OK(gpuprims_context_create(backend, 0, &ctx));
  return ctx;
}

static gpuprims_fault_counts ft_counts(void) {
  gpuprims_fault_counts n;
  memset(&n, 0, sizeof n);
  TU_REQUIRE_OK(gpuprims_fault_get_counts(&n));
  return n;
}

static void ft_arm(const char *kind, uint64_t n) {
  char spec[64];
  if (kind)
    snprintf(spec, sizeof spec, "%s:%llu", kind, (unsigned long long)n);
  else
    spec[0] = '\0';
  TU_REQUIRE_OK(gpuprims_fault_inject(spec));
}

/* What a failed call left: the status and message of the kind, and the buffers. */
static void ft_check_failure(const ft_case *c, const ft_kind *k, uint64_t n, gpuprims_status s, gpuprims_buffer **b,
                             const unsigned char *out) {
  char msg[1024], poison[FT_HOST_OUT];
  int i, before_first_write = strcmp(k->name, "launch") != 0 || n == 1;
  tu_last_error_text(msg, sizeof msg);
  TU_CHECKF(s == k->status, "%s, %s:%llu: status %s, expected %s (%s)", c->sc->name, k->name, (unsigned long long)n,
            tu_status_name(s), tu_status_name(k->status), msg);
  TU_CHECKF(strstr(msg, "fault injected") != NULL, "%s, %s:%llu: the message does not say what failed: \"%s\"",
            c->sc->name, k->name, (unsigned long long)n, msg);
  for (i = 0; i < c->sc->nbuf; i++) {
    const ft_buf_spec *spec = &c->sc->buf[i];
    if (!before_first_write && spec->role != FT_IN) continue; /* unspecified (header: Failures) */
    TU_CHECKF(ft_holds(b[i], spec, c->init[i]), "%s, %s:%llu: buffer %d (%s) changed by a call that failed", c->sc->name,
              k->name, (unsigned long long)n, i, spec->role == FT_IN ? "an input" : "an output");
  }
  memset(poison, 0xA5, sizeof poison);
  TU_CHECKF(memcmp(out, poison, sizeof poison) == 0, "%s, %s:%llu: host output written by a call that failed", c->sc->name,
            k->name, (unsigned long long)n);
}

/* One attempt on a fresh context: the n-th point of kind k fails. Returns whether it
 * did (the walk goes on), after checking what the failure left and the context after. */
static int ft_attempt(const ft_case *c, const ft_kind *k, uint64_t n, tu_rng *r) {
  gpuprims_context *ctx = ft_open(GPUPRIMS_BACKEND_AUTO);
  gpuprims_buffer *b[FT_MAX_BUFS] = {NULL, NULL, NULL, NULL};
  unsigned char out[FT_HOST_OUT];
  gpuprims_fault_counts after;
  gpuprims_status s;
  char what[128];
  int i, fired;
  memset(out, 0xA5, sizeof out);
  ft_setup(ctx, c, b);
  ft_arm(k->name, n);
  s = c->sc->run(ctx, b, out);
  after = ft_counts();
  ft_arm(NULL, 0);
  fired = after.injected > 0;
  snprintf(what, sizeof what, "%s with %s:%llu", c->sc->name, k->name, (unsigned long long)n);
  if (!fired) {
    TU_CHECKF(s == GPUPRIMS_STATUS_OK, "%s: nothing failed, yet status %s", what, tu_status_name(s));
  } else if (s == GPUPRIMS_STATUS_OK) {
    /* The library went another way: then its result must still be right. */
    for (i = 0; i < c->sc->nbuf; i++)
      TU_CHECKF(ft_holds(b[i], &c->sc->buf[i], c->expected[i]), "%s: OK after the fault, but buffer %d is wrong", what, i);
  } else {
    ft_check_failure(c, k, n, s, b, out);
    ft_check_result(ctx, c, what);
    ft_probe(ctx, r, what);
  }
  ft_teardown(c, b);
  gpuprims_context_destroy(ctx);
  return fired;
}

/* Walks every point of kind k in the call, each attempt on a fresh context (so nothing a
 * context keeps, modules or scratch, hides a point). Returns the points walked. */
static uint64_t ft_walk(const ft_case *c, const ft_kind *k, tu_rng *r) {
  uint64_t n = 1, walked = 0;
  while (ft_attempt(c, k, n, r) && tu_state.failures < 20) {
    walked++;
    n++;
    if (walked > 500) {
      TU_CHECKF(0, "%s: more than 500 %s points: the walk does not end", c->sc->name, k->name);
      break;
    }
  }
  return walked;
}

/* The case's initial contents and, from a host-backend context, its expected result. */
static void ft_case_init(ft_case *c, const ft_scenario *sc, tu_rng *r) {
  gpuprims_context *host = ft_open(GPUPRIMS_BACKEND_HOST);
  gpuprims_buffer *b[FT_MAX_BUFS] = {NULL, NULL, NULL, NULL};
  int i;
  memset(c, 0, sizeof *c);
  c->sc = sc;
  for (i = 0; i < sc->nbuf; i++) {
    c->init[i] = (unsigned char *)tu_xmalloc(ft_bytes(&sc->buf[i]));
    c->expected[i] = (unsigned char *)tu_xmalloc(ft_bytes(&sc->buf[i]));
    ft_fill(&sc->buf[i], c->init[i], r, sc->buf[0].len);
  }
  memset(c->host_expected, 0xA5, sizeof c->host_expected);
  ft_setup(host, c, b);
  TU_REQUIRE_OK(sc->run(host, b, c->host_expected));
  for (i = 0; i < sc->nbuf; i++) TU_REQUIRE_OK(gpuprims_buffer_read(b[i], 0, c->expected[i], sc->buf[i].len));
  ft_teardown(c, b);
  gpuprims_context_destroy(host);
}

static void ft_case_free(ft_case *c) {
  int i;
  for (i = 0; i < c->sc->nbuf; i++) {
    free(c->init[i]);
    free(c->expected[i]);
  }
}

static void ft_scenario_walk(const ft_scenario *sc, tu_rng *r) {
  ft_case c;
  uint64_t walked[TU_ARRAY_LEN(KINDS)];
  size_t k;
  ft_case_init(&c, sc, r);
  for (k = 0; k < TU_ARRAY_LEN(KINDS); k++) walked[k] = ft_walk(&c, &KINDS[k], r);
  printf("  %-28s failed and recovered: %3llu compiles, %3llu loads, %3llu allocations, %3llu launches\n", sc->name,
         (unsigned long long)walked[0], (unsigned long long)walked[1], (unsigned long long)walked[2],
         (unsigned long long)walked[3]);
  fflush(stdout);
  ft_case_free(&c);
}

/* ------------------------------------------------------------------------------------- */
/* CUDA only: a real out-of-memory, and a kernel's fault                                  */
/* ------------------------------------------------------------------------------------- */

typedef int (*ft_cu_mem_alloc_fn)(unsigned long long *, size_t);
typedef int (*ft_cu_mem_free_fn)(unsigned long long);
typedef int (*ft_cu_mem_info_fn)(size_t *, size_t *);

/* The driver's memory calls on the device's primary context (through tu_cuda_stream,
 * which holds it). */
typedef struct {
  tu_cuda_stream cs;
  ft_cu_mem_alloc_fn alloc;
  ft_cu_mem_free_fn free;
  ft_cu_mem_info_fn info;
} ft_driver;

static int ft_driver_open(ft_driver *d) {
  char why[256];
  memset(d, 0, sizeof *d);
  if (!tu_cuda_stream_create(&d->cs, 0, why, sizeof why)) {
    TU_CHECKF(0, "the CUDA driver API: %s", why);
    return 0;
  }
  if (!(tu_load_sym_(d->cs.lib, "cuMemAlloc_v2", &d->alloc, sizeof d->alloc) &&
        tu_load_sym_(d->cs.lib, "cuMemFree_v2", &d->free, sizeof d->free) &&
        tu_load_sym_(d->cs.lib, "cuMemGetInfo_v2", &d->info, sizeof d->info))) {
    TU_CHECKF(0, "libcuda.so.1 lacks cuMemAlloc_v2, cuMemFree_v2 or cuMemGetInfo_v2");
    tu_cuda_stream_destroy(&d->cs);
    return 0;
  }
  return 1;
}

/* Runs one of the three calls with the primary context current; its CUresult. */
static int ft_driver_call(ft_driver *d, int which, unsigned long long *ptr, size_t *a, size_t *b) {
  void *popped = NULL;
  int r = d->cs.push(d->cs.pctx);
  if (r != 0) return r;
  r = which == 0 ? d->alloc(ptr, *a) : which == 1 ? d->free(*ptr) : d->info(a, b);
  d->cs.pop(&popped);
  return r;
}

/* Keys that fill most of the GPU: the radix sort's scratch (as large again) cannot fit
 * beside them. Both sorts fail with OUT_OF_MEMORY and leave the keys as they were. */
static void ft_real_out_of_memory(gpuprims_context *ctx, tu_rng *r) {
  enum { REGION = 1 << 20 };
  static uint32_t before[3][REGION], after[REGION];
  ft_driver d;
  size_t free_bytes = 0, total = 0, n, at[3], i, j;
  gpuprims_buffer *keys;
  uint32_t sum0 = 0, sum1 = 1;
  gpuprims_status s;
  int sort;
  if (!ft_driver_open(&d)) return;
  TU_CHECK(ft_driver_call(&d, 2, NULL, &free_bytes, &total) == 0);
  tu_cuda_stream_destroy(&d.cs);
  n = free_bytes / 10 * 6 / sizeof(uint32_t);
  printf("  real out-of-memory: %zu U32 keys (%.1f GB of %.1f GB free)\n", n, n * 4.0 / 1e9, free_bytes / 1e9);
  if (gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U32, n, &keys) != GPUPRIMS_STATUS_OK) {
    TU_CHECKF(0, "could not allocate the keys of the out-of-memory test");
    return;
  }
  at[0] = 0, at[1] = n / 2, at[2] = n - REGION;
  for (i = 0; i < 3; i++) {
    tu_fill_bytes(r, before[i], sizeof before[i]);
    TU_REQUIRE_OK(gpuprims_buffer_write(keys, at[i], before[i], REGION));
  }
  TU_REQUIRE_OK(gpuprims_reduce(ctx, keys, GPUPRIMS_OP_SUM, &sum0));
  for (sort = 0; sort < 2; sort++) {
    char msg[1024];
    s = sort ? gpuprims_quicksort(ctx, keys, NULL, GPUPRIMS_ORDER_ASCENDING)
             : gpuprims_radix_sort(ctx, keys, NULL, GPUPRIMS_ORDER_ASCENDING);
    tu_last_error_text(msg, sizeof msg);
    TU_CHECKF(s == GPUPRIMS_STATUS_OUT_OF_MEMORY, "%s of %zu keys beside no room: status %s (%s)",
              sort ? "quicksort" : "radix sort", n, tu_status_name(s), msg);
    printf("  %s: %s: %s\n", sort ? "quicksort" : "radix sort", tu_status_name(s), msg);
    for (i = 0; i < 3; i++) {
      TU_REQUIRE_OK(gpuprims_buffer_read(keys, at[i], after, REGION));
      for (j = 0; j < REGION && after[j] == before[i][j]; j++) {
      }
      TU_CHECKF(j == REGION, "the keys changed at %zu after a sort that ran out of memory", at[i] + j);
    }
    TU_REQUIRE_OK(gpuprims_reduce(ctx, keys, GPUPRIMS_OP_SUM, &sum1));
    TU_CHECKF(sum0 == sum1, "the keys' sum changed after a sort that ran out of memory");
  }
  gpuprims_buffer_destroy(keys);
  ft_probe(ctx, r, "a real out-of-memory");
}

/* Freed device memory read by a kernel: an illegal address, after which the CUDA context
 * is lost. Every later call on every context of the device says so; once they are all
 * destroyed, a new CUDA context is refused (CUDA 13: the process must restart) or, on a
 * driver that allows it, works; a host context works. Run in a child process (main). */
static void ft_kernel_fault(tu_rng *r) {
  const size_t n = 16u << 20;
  gpuprims_context *ctx = ft_open(GPUPRIMS_BACKEND_CUDA), *other = ft_open(GPUPRIMS_BACKEND_CUDA), *later = NULL;
  gpuprims_buffer *wrapped = NULL, *healthy = NULL, *made = TU_SENTINEL_PTR(gpuprims_buffer);
  unsigned long long ptr = 0;
  size_t bytes = n * 4;
  uint32_t small[100] = {1, 2, 3}, sum = 0;
  char msg[1024];
  gpuprims_status s;
  ft_driver d;
  if (!ft_driver_open(&d)) return;
  TU_REQUIRE(ft_driver_call(&d, 0, &ptr, &bytes, NULL) == 0);
  TU_REQUIRE_OK(gpuprims_buffer_wrap_device(ctx, GPUPRIMS_DTYPE_U32, (void *)(uintptr_t)ptr, n, &wrapped));
  TU_REQUIRE_OK(gpuprims_buffer_from_host(other, GPUPRIMS_DTYPE_U32, small, 100, &healthy));
  TU_REQUIRE(ft_driver_call(&d, 1, &ptr, NULL, NULL) == 0);

  s = gpuprims_reduce(ctx, wrapped, GPUPRIMS_OP_SUM, &sum);
  tu_last_error_text(msg, sizeof msg);
  printf("  kernel fault: %s: %s\n", tu_status_name(s), msg);
  TU_CHECKF(s == GPUPRIMS_STATUS_DRIVER_ERROR && strstr(msg, "lost"), "a reduce of freed memory: %s (%s)", tu_status_name(s), msg);
  s = gpuprims_scan(ctx, healthy, healthy, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE);
  TU_CHECKF(s == GPUPRIMS_STATUS_CONTEXT_MISMATCH, "scan of another context's buffer: %s", tu_status_name(s));
  s = gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U32, 10, &made);
  tu_last_error_text(msg, sizeof msg);
  TU_CHECKF(s == GPUPRIMS_STATUS_DRIVER_ERROR && strstr(msg, "destroy") && made == TU_SENTINEL_PTR(gpuprims_buffer),
            "a call after the fault: %s (%s)", tu_status_name(s), msg);
  s = gpuprims_reduce(other, healthy, GPUPRIMS_OP_SUM, &sum);
  tu_last_error_text(msg, sizeof msg);
  TU_CHECKF(s == GPUPRIMS_STATUS_DRIVER_ERROR && strstr(msg, "destroy"), "a call on another context of the device: %s (%s)",
            tu_status_name(s), msg);
  s = gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &later);
  tu_last_error_text(msg, sizeof msg);
  TU_CHECKF(s == GPUPRIMS_STATUS_DRIVER_ERROR, "a context created while the lost one lives: %s (%s)", tu_status_name(s), msg);
  if (s == GPUPRIMS_STATUS_OK) gpuprims_context_destroy(later);

  gpuprims_buffer_destroy(wrapped);
  gpuprims_buffer_destroy(healthy);
  gpuprims_context_destroy(ctx);
  gpuprims_context_destroy(other);
  tu_cuda_stream_destroy(&d.cs); /* its hold on the primary context too */
  later = NULL;
  s = gpuprims_context_create(GPUPRIMS_BACKEND_CUDA, 0, &later);
  tu_last_error_text(msg, sizeof msg);
  printf("  a new CUDA context with all destroyed: %s%s%s\n", tu_status_name(s), s ? ": " : "", s ? msg : "");
  TU_CHECKF(s == GPUPRIMS_STATUS_OK || (s == GPUPRIMS_STATUS_DRIVER_ERROR && strstr(msg, "lost")),
            "a new CUDA context after the fault: %s (%s)", tu_status_name(s), msg);
  if (s == GPUPRIMS_STATUS_OK) {
    ft_probe(later, r, "a kernel fault and a new CUDA context");
    gpuprims_context_destroy(later);
  }
  later = ft_open(GPUPRIMS_BACKEND_HOST);
  ft_probe(later, r, "a kernel fault, on a host context");
  gpuprims_context_destroy(later);
}

/* Runs this program again with --kernel-fault (ft_kernel_fault breaks the device for its
 * process) and checks that it passed. */
static void ft_kernel_fault_in_child(void) {
  char *argv[] = {(char *)"test_faults", (char *)"--kernel-fault", NULL};
  extern char **environ;
  pid_t pid;
  int status = 0;
  fflush(stdout);
  if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) != 0) {
    TU_CHECKF(0, "could not start the kernel-fault child process");
    return;
  }
  TU_CHECKF(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "the kernel-fault child process failed (status 0x%x)", status);
}

/* The fault functions' own arguments: each bad one refused with a message, changing nothing. */
static void ft_bad_specs(void) {
  const char *bad[] = {"alloc", "alloc:0", "alloc:-1", "alloc:x", "alloc:1:2", "oom:3", "launch:99999999999999999999999"};
  size_t i;
  TU_EXPECT_STATUS(gpuprims_fault_inject(NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  TU_EXPECT_STATUS(gpuprims_fault_get_counts(NULL), GPUPRIMS_STATUS_NULL_ARGUMENT);
  for (i = 0; i < TU_ARRAY_LEN(bad); i++) {
    char msg[512];
    gpuprims_status s = gpuprims_fault_inject(bad[i]);
    tu_last_error_text(msg, sizeof msg);
    TU_CHECKF(s == GPUPRIMS_STATUS_INVALID_ARGUMENT && strstr(msg, "spec") != NULL, "fault spec \"%s\": %s (%s)", bad[i],
              tu_status_name(s), msg);
  }
  ft_arm(NULL, 0);
  TU_CHECK(ft_counts().injected == 0);
}

/* ------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  tu_rng rng;
  gpuprims_context *anchor;
  const char *only = getenv("GPUPRIMS_FAULT_ONLY");
  size_t i;
  int cuda;
  if (argc > 1 && strcmp(argv[1], "--kernel-fault") == 0) {
    tu_rng_seed(&rng, tu_init("test_faults --kernel-fault"));
    ft_kernel_fault(&rng);
    return tu_finish();
  }
  tu_rng_seed(&rng, tu_init("test_faults"));
  /* Keeps the device's context alive between the walk's fresh contexts. */
  anchor = tu_open_context();
  cuda = tu_is_cuda(anchor);
  ft_bad_specs();
  for (i = 0; i < TU_ARRAY_LEN(SCENARIOS); i++) {
    if (only && strcmp(only, SCENARIOS[i].name) != 0) continue;
    ft_scenario_walk(&SCENARIOS[i], &rng);
  }
  if (cuda && !only) {
    ft_real_out_of_memory(anchor, &rng);
    ft_kernel_fault_in_child();
    ft_probe(anchor, &rng, "another process's kernel fault");
  }
  gpuprims_context_destroy(anchor);
  TU_CHECKF(ft_counts().bytes_held == 0, "%llu bytes still held with every buffer and context destroyed",
            (unsigned long long)ft_counts().bytes_held);
  return tu_finish();
}
