/*
 * test_repro_quicksort_after_radix: the reproducer of a quicksort failing after radix sorts
 * (repro/quicksort_after_adaptive_radix.cu, written for the CUDA runtime and nvcc),
 * rewritten in C against the public API.
 *
 * Seen on an H100, at 2^20, 2^22 and 2^24 keys: on a fresh context, radix sorts of random
 * then of already sorted (or reversed) u32 keys made the next quicksort fail ("quicksort
 * level 0: 256 segments, 23070719 tiles"); every other sequence passed.
 *
 * Each sequence of letters runs on a fresh context: 'r' a radix sort of random keys, 's' of
 * keys already sorted, 'v' of reversed keys (the work buffer filled anew for each), then a
 * quicksort of the random keys, an inclusive SUM scan of them (u32, wrapping) and a radix
 * sort of them, each checked against a sequential reference. Sequences "", r, s, v, rs, rv,
 * sv, rsv, sr, vr, ss, vv; sizes 2^20, 2^22 and 2^24 on CUDA, 2^20 on the host backend
 * (whose calls keep no state from one to the next and take no path by size, so larger
 * sizes there only repeat it; GPUPRIMS_TEST_FULL=1: 2^22 too). GPUPRIMS_REPRO_MAX_LOG2
 * sets the largest size, GPUPRIMS_TEST_QUICK: 2^20 only. Buffers are
 * owned, filled by gpuprims_buffer_copy from a buffer of the random keys ('r') or by
 * gpuprims_buffer_write ('s', 'v'). On CUDA every sequence runs a second time as the
 * original did: on a caller's stream (made through the driver API, test_util.h) with the
 * work buffers wrapped (gpuprims_buffer_wrap_device views of owned buffers' memory).
 */
#include "test_util.h"

static const char *const SEQUENCES[] = {"", "r", "s", "v", "rs", "rv", "sv", "rsv", "sr", "vr", "ss", "vv"};

/* The random keys and their references for one size. */
typedef struct {
  size_t n;
  uint32_t *src, *sorted, *got;
} data_t;

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void make_data(data_t *d, size_t n, tu_rng *r) {
  d->n = n;
  d->src = (uint32_t *)tu_xmalloc(n * 4);
  d->sorted = (uint32_t *)tu_xmalloc(n * 4);
  d->got = (uint32_t *)tu_xmalloc(n * 4);
  tu_fill_bytes(r, d->src, n * 4);
  memcpy(d->sorted, d->src, n * 4);
  qsort(d->sorted, n, 4, cmp_u32);
}

static void free_data(data_t *d) {
  free(d->src);
  free(d->sorted);
  free(d->got);
}

/* A buffer and, when it is a wrapped view, the owned buffer whose memory it views. */
typedef struct {
  gpuprims_buffer *b, *backing;
} vbuf;

/* One sequence's context and buffers: the random keys, the work buffer, the scan's. */
typedef struct {
  gpuprims_context *ctx;
  gpuprims_buffer *src;
  vbuf a, o;
  tu_cuda_stream stream;
  int wrapped;
} run_t;

static vbuf make_work(run_t *t, size_t n) {
  vbuf v;
  void *p = NULL;
  v.backing = NULL;
  v.b = tu_buffer_create(t->ctx, GPUPRIMS_DTYPE_U32, n);
  if (!t->wrapped) return v;
  v.backing = v.b;
  TU_REQUIRE_OK(gpuprims_buffer_device_ptr(v.backing, &p));
  TU_REQUIRE_OK(gpuprims_buffer_wrap_device(t->ctx, GPUPRIMS_DTYPE_U32, p, n, &v.b));
  return v;
}

static void free_work(vbuf *v) {
  gpuprims_buffer_destroy(v->b); /* the view before the memory it views */
  gpuprims_buffer_destroy(v->backing);
}

static void open_run(run_t *t, const data_t *d, int wrapped) {
  char why[256];
  memset(t, 0, sizeof *t);
  t->wrapped = wrapped;
  TU_REQUIRE_OK(gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &t->ctx));
  if (wrapped) {
    if (!tu_cuda_stream_create(&t->stream, 0, why, sizeof why)) TU_FATAL("a caller's stream: %s", why);
    TU_REQUIRE_OK(gpuprims_context_set_stream(t->ctx, t->stream.stream));
  }
  t->src = tu_buffer_from_host(t->ctx, GPUPRIMS_DTYPE_U32, d->src, d->n);
  t->a = make_work(t, d->n);
  t->o = make_work(t, d->n);
}

static void close_run(run_t *t) {
  if (t->wrapped) TU_EXPECT_OK(gpuprims_context_set_stream(t->ctx, NULL)); /* the stream outlives its work */
  TU_EXPECT_OK(gpuprims_context_synchronize(t->ctx));
  free_work(&t->a);
  free_work(&t->o);
  gpuprims_buffer_destroy(t->src);
  gpuprims_context_destroy(t->ctx);
  if (t->wrapped) TU_CHECK(tu_cuda_stream_destroy(&t->stream));
}

/* The work buffer holds the random keys ('r'), or 0, 1, ... ('s'), or n - 1, ... 0 ('v'). */
static void fill_work(run_t *t, data_t *d, char what) {
  size_t i;
  if (what == 'r') {
    TU_REQUIRE_OK(gpuprims_buffer_copy(t->a.b, t->src));
    return;
  }
  for (i = 0; i < d->n; i++) d->got[i] = (uint32_t)(what == 's' ? i : d->n - 1 - i);
  TU_REQUIRE_OK(gpuprims_buffer_write(t->a.b, 0, d->got, d->n));
}

/* A status and its last error, or the first wrong element, as a word for the summary. */
static const char *verdict(gpuprims_status s, size_t bad, size_t n, char *buf, size_t len) {
  if (s != GPUPRIMS_STATUS_OK) {
    char err[200];
    tu_last_error_text(err, sizeof err);
    snprintf(buf, len, "%s (%s)", tu_status_name(s), err);
  } else if (bad < n) {
    snprintf(buf, len, "WRONG at index %zu", bad);
  } else {
    snprintf(buf, len, "ok");
  }
  return buf;
}

/* A sort of the random keys (quicksort or radix sort) against the sorted reference. */
static int check_sort(run_t *t, data_t *d, int quick, char *buf, size_t len) {
  gpuprims_status s;
  size_t bad = d->n;
  TU_REQUIRE_OK(gpuprims_buffer_copy(t->a.b, t->src));
  s = quick ? gpuprims_quicksort(t->ctx, t->a.b, NULL, GPUPRIMS_ORDER_ASCENDING)
            : gpuprims_radix_sort(t->ctx, t->a.b, NULL, GPUPRIMS_ORDER_ASCENDING);
  if (s == GPUPRIMS_STATUS_OK) {
    TU_REQUIRE_OK(gpuprims_buffer_read(t->a.b, 0, d->got, d->n));
    bad = tu_first_diff(d->sorted, d->got, 4, d->n);
  }
  verdict(s, bad, d->n, buf, len);
  return s == GPUPRIMS_STATUS_OK && bad == d->n;
}

/* An inclusive SUM scan of the random keys (u32 wraps) against the running sum. */
static int check_scan(run_t *t, data_t *d, char *buf, size_t len) {
  gpuprims_status s;
  size_t i = 0;
  uint32_t acc = 0;
  TU_REQUIRE_OK(gpuprims_buffer_copy(t->a.b, t->src));
  s = gpuprims_scan(t->ctx, t->a.b, t->o.b, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE);
  if (s == GPUPRIMS_STATUS_OK) {
    TU_REQUIRE_OK(gpuprims_buffer_read(t->o.b, 0, d->got, d->n));
    for (i = 0; i < d->n; i++) {
      acc += d->src[i];
      if (d->got[i] != acc) break;
    }
  }
  verdict(s, i, d->n, buf, len);
  return s == GPUPRIMS_STATUS_OK && i == d->n;
}

/* One sequence on a fresh context: its radix sorts, then the three checks. */
static void run_sequence(data_t *d, const char *steps, int wrapped) {
  run_t t;
  char q[256], sc[256], rs[256];
  const char *c;
  int ok_q, ok_s, ok_r;
  open_run(&t, d, wrapped);
  for (c = steps; *c; c++) {
    fill_work(&t, d, *c);
    TU_EXPECT_OK(gpuprims_radix_sort(t.ctx, t.a.b, NULL, GPUPRIMS_ORDER_ASCENDING));
  }
  ok_q = check_sort(&t, d, 1, q, sizeof q);
  ok_s = check_scan(&t, d, sc, sizeof sc);
  ok_r = check_sort(&t, d, 0, rs, sizeof rs);
  printf("%s: %-4s n=%-9zu%s quicksort: %s | scan: %s | radix: %s\n", tu_state.name, steps, d->n,
         wrapped ? " (caller's stream, wrapped)" : "", q, sc, rs);
  fflush(stdout);
  TU_CHECKF(ok_q, "quicksort after radix sorts \"%s\", n=%zu%s: %s", steps, d->n, wrapped ? ", wrapped" : "", q);
  TU_CHECKF(ok_s, "scan after radix sorts \"%s\" and a quicksort, n=%zu: %s", steps, d->n, sc);
  TU_CHECKF(ok_r, "radix sort after radix sorts \"%s\", a quicksort and a scan, n=%zu: %s", steps, d->n, rs);
  close_run(&t);
}

int main(void) {
  uint64_t seed = tu_init("test_repro_quicksort_after_radix");
  gpuprims_context *ctx = tu_open_context(); /* exits 77 when GPUPRIMS_BACKEND=cuda has no device */
  int cuda = tu_is_cuda(ctx), max_log2 = cuda ? 24 : getenv("GPUPRIMS_TEST_FULL") ? 22 : 20, log2, mode;
  const char *env = getenv("GPUPRIMS_REPRO_MAX_LOG2");
  tu_rng r;
  size_t i;
  gpuprims_context_destroy(ctx);
  if (env && *env) max_log2 = atoi(env);
  if (getenv("GPUPRIMS_TEST_QUICK")) max_log2 = 20;
  tu_rng_seed(&r, seed);
  for (log2 = max_log2; log2 >= 20; log2 -= 2) {
    data_t d;
    make_data(&d, (size_t)1 << log2, &r);
    for (mode = 0; mode < (cuda ? 2 : 1); mode++)
      for (i = 0; i < TU_ARRAY_LEN(SEQUENCES); i++) run_sequence(&d, SEQUENCES[i], mode);
    free_data(&d);
  }
  return tu_finish();
}
