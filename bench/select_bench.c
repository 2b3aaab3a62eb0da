/* The selection rows of the tour.
 *
 * select_kth of the median (value handed to the host, as gpuprims_select_kth does) for
 * f32 and u32; top-k of f32, descending, for k = 100 and 65,536 with and without
 * indices, and k = 2^20 with indices. Beside each, CUB in the same process: for the
 * k-th element DeviceRadixSort::SortKeys of the same input, which is what selecting by
 * sorting costs (the anchors' "sort + index" adds one element's copy); for top-k
 * cub::DeviceTopK (MaxKeys, or MaxPairs with u32 indices) where the CUB build has it
 * (CCCL >= 3.5.0: unsorted and not deterministic, its only mode), else
 * DeviceRadixSort::SortKeysDescending.
 *
 * Checks: the k-th element equals CUB's sorted output at k (NaNs aside: the inputs
 * hold none); top-k values equal the first k of CUB's descending sort bitwise (and, as
 * a multiset, DeviceTopK's), every index points at its value, and equal values come
 * lowest index first. Inputs: random finite floats in [-1, 1) (f32) and random bits
 * (u32).
 */
#define _POSIX_C_SOURCE 200809L

#include "select_bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cub_reference.h"
#include "bench_json.h"
#include "bench_util.h"

typedef struct {
  char label[64];
  const char *primitive, *dtype; /* for --json */
  size_t n;
  double ms, cub_ms; /* < 0: not measured */
  const char *cub;   /* what cub_ms timed */
  int check;         /* 1 OK, 0 FAIL, -1 none */
} select_row;

#define MAX_ROWS 64
static select_row rows[MAX_ROWS];
static int nrows = 0;
static int with_cub = 0, reps_run = 0; /* as select_tour ran */

static void print_row(const select_row *r) {
  printf("%-34s %11zu", r->label, r->n);
  if (r->ms >= 0) printf(" %10.4f", r->ms); else printf(" %10s", "-");
  if (with_cub) {
    if (r->cub_ms >= 0) printf(" %10.4f %7.2fx", r->cub_ms, r->ms > 0 ? r->cub_ms / r->ms : 0.0);
    else printf(" %10s %8s", "-", "-");
  }
  printf("  %s", r->check == 1 ? "OK" : r->check == 0 ? "FAIL" : "-");
  if (with_cub) printf("  %s", r->cub);
  printf("\n");
}

/* A row is done: a progress line, and the row as JSON (--json). */
static void row_done(const select_row *r) {
  bench_json_row j;
  memset(&j, 0, sizeof j);
  j.primitive = r->primitive;
  j.label = r->label;
  j.dtype = r->dtype;
  j.variant = "";
  j.n = j.items = (double)r->n;
  j.bytes = 4.0 * (double)r->n; /* one read of the input */
  j.ms = r->ms;
  j.cub_ms = r->cub_ms;
  j.cub = r->cub;
  j.check = r->check;
  bench_json_add(&j);
  bench_progress("selection: %s, n = %zu", r->label, r->n);
}

typedef struct {
  gpuprims_context *ctx;
  gpuprims_buffer *in, *values, *indices;
  uint64_t k;
  gpuprims_order order;
  unsigned char value[8];
} select_args;

static gpuprims_status call_kth(void *a) {
  select_args *x = (select_args *)a;
  return gpuprims_select_kth(x->ctx, x->in, x->k, x->value);
}

static gpuprims_status call_topk(void *a) {
  select_args *x = (select_args *)a;
  return gpuprims_topk(x->ctx, x->in, x->k, x->order, x->values, x->indices);
}

/* n keys: f32 in [-1, 1) or u32 random bits. */
static void *make_input(gpuprims_dtype t, size_t n, uint64_t seed) {
  void *h = malloc(n * 4);
  size_t i;
  if (!h) return NULL;
  if (t == GPUPRIMS_DTYPE_F32) {
    float *f = (float *)h;
    for (i = 0; i < n; i++) f[i] = (float)((double)(bench_splitmix64(&seed) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
  } else {
    uint32_t *u = (uint32_t *)h;
    for (i = 0; i < n; i += 2) {
      uint64_t r = bench_splitmix64(&seed);
      u[i] = (uint32_t)r;
      if (i + 1 < n) u[i + 1] = (uint32_t)(r >> 32);
    }
  }
  return h;
}

/* CUB's sort of the device input into a fresh buffer (ascending or descending): its
 * median time, and the sorted keys' first `keep` (or element `keep_at`) copied to host. */
static double cub_sort(gpuprims_buffer *in, gpuprims_dtype t, gpuprims_order order, size_t n, int reps, void *stream,
                       size_t from, size_t count, void *host) {
  void *d_in = NULL, *d_out = NULL;
  double ms;
  if (!stream || gpuprims_buffer_device_ptr(in, &d_in) != GPUPRIMS_STATUS_OK) return -1.0;
  d_out = cubref_malloc(n * 4);
  if (!d_out) return -1.0;
  ms = cubref_radix_sort_ms(t, 0, order, d_in, d_out, NULL, NULL, n, 2, reps, stream);
  if (ms >= 0 && cubref_copy_to_host(host, (const char *)d_out + from * 4, count * 4) != 0) ms = -1.0;
  cubref_free(d_out);
  return ms;
}

static int desc_f32(const void *a, const void *b) {
  const float x = *(const float *)a, y = *(const float *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* cub::DeviceTopK of the device input (descending, f32): its median time, or -1 where
 * this CUB build has none (or it failed: then the reason is printed). Its k keys go to
 * `keys`, sorted descending, for the row to check against the sort's first k (so a wrong
 * anchor is seen); *keys_ok says whether they arrived. */
static double cub_topk(gpuprims_buffer *in, size_t n, size_t k, int with_indices, int reps, void *stream, float *keys,
                       int *keys_ok) {
  void *d_in = NULL, *d_keys = NULL, *d_idx = NULL;
  double ms = -1.0;
  *keys_ok = 0;
  if (!stream || gpuprims_buffer_device_ptr(in, &d_in) != GPUPRIMS_STATUS_OK) return -1.0;
  d_keys = cubref_malloc(k * 4);
  d_idx = with_indices ? cubref_malloc(k * 4) : NULL;
  if (d_keys && (d_idx || !with_indices)) {
    ms = cubref_topk_ms(GPUPRIMS_DTYPE_F32, GPUPRIMS_ORDER_DESCENDING, d_in, n, k, d_keys, d_idx, 2, reps, stream);
    if (ms == -1.0) fprintf(stderr, "DeviceTopK: %s\n", cubref_last_error());
  }
  if (ms >= 0 && cubref_copy_to_host(keys, d_keys, k * 4) == 0) {
    qsort(keys, k, 4, desc_f32);
    *keys_ok = 1;
  }
  cubref_free(d_keys);
  if (d_idx) cubref_free(d_idx);
  return ms < 0 ? -1.0 : ms;
}

static select_row *new_row(const char *label, const char *primitive, const char *dtype, size_t n) {
  select_row *r;
  if (nrows == MAX_ROWS) return NULL;
  r = &rows[nrows++];
  snprintf(r->label, sizeof r->label, "%s", label);
  r->primitive = primitive;
  r->dtype = dtype;
  r->n = n;
  r->ms = r->cub_ms = -1.0;
  r->cub = !strcmp(primitive, "topk") ? "DeviceRadixSort::SortKeysDescending, first k" : "DeviceRadixSort::SortKeys, element k";
  r->check = -1;
  return r;
}

static int kth_row(gpuprims_context *ctx, bench_timer *timer, void *stream, gpuprims_dtype t, size_t n, int reps,
                   const char *label) {
  select_args a;
  select_row *r = new_row(label, "select_kth", t == GPUPRIMS_DTYPE_F32 ? "f32" : "u32", n);
  void *h = make_input(t, n, 0x5E1EC7 + n);
  uint32_t want = 0;
  int failed = 0;
  if (!r || !h) return 1;
  memset(&a, 0, sizeof a);
  a.ctx = ctx;
  a.k = (n - 1) / 2;
  if (gpuprims_buffer_from_host(ctx, t, h, n, &a.in) != GPUPRIMS_STATUS_OK) {
    free(h);
    return 1;
  }
  r->ms = bench_time_call(timer, reps, call_kth, &a, "gpuprims_select_kth");
  r->cub_ms = cub_sort(a.in, t, GPUPRIMS_ORDER_ASCENDING, n, reps, stream, (size_t)a.k, 1, &want);
  memset(a.value, 0xA5, sizeof a.value);
  if (r->ms >= 0 && call_kth(&a) == GPUPRIMS_STATUS_OK && r->cub_ms >= 0) {
    r->check = memcmp(a.value, &want, 4) == 0;
    failed = !r->check;
  } else if (r->ms < 0) {
    failed = 1;
  }
  gpuprims_buffer_destroy(a.in);
  free(h);
  row_done(r);
  return failed;
}

static int topk_row(gpuprims_context *ctx, bench_timer *timer, void *stream, size_t n, size_t k, int with_indices,
                    int reps, const char *label) {
  select_args a;
  select_row *r = new_row(label, "topk", "f32", n);
  float *h = (float *)make_input(GPUPRIMS_DTYPE_F32, n, 0x70C4 + n);
  float *want = (float *)malloc(k * 4), *got = (float *)malloc(k * 4), *cub_keys = (float *)malloc(k * 4);
  uint64_t *idx = (uint64_t *)malloc(k * 8);
  int failed = 0, cub_keys_ok = 0;
  if (!r || !h || !want || !got || !cub_keys || !idx) return 1;
  memset(&a, 0, sizeof a);
  a.ctx = ctx;
  a.k = k;
  a.order = GPUPRIMS_ORDER_DESCENDING;
  if (gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_F32, h, n, &a.in) != GPUPRIMS_STATUS_OK ||
      gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_F32, k, &a.values) != GPUPRIMS_STATUS_OK ||
      (with_indices && gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U64, k, &a.indices) != GPUPRIMS_STATUS_OK))
    failed = 1;
  if (!failed) {
    double topk_ms;
    r->ms = bench_time_call(timer, reps, call_topk, &a, "gpuprims_topk");
    topk_ms = cub_topk(a.in, n, k, with_indices, reps, stream, cub_keys, &cub_keys_ok);
    /* The sort checks the values (ours and DeviceTopK's); it is the anchor only where
     * DeviceTopK is not built. */
    r->cub_ms = cub_sort(a.in, GPUPRIMS_DTYPE_F32, GPUPRIMS_ORDER_DESCENDING, n, topk_ms >= 0 ? 1 : reps, stream, 0,
                         k, want);
    if (cub_keys_ok && r->cub_ms >= 0 && memcmp(cub_keys, want, k * 4) != 0) {
      fprintf(stderr, "DeviceTopK: its %zu keys of %zu differ from the sort's first k\n", k, n);
      failed = 1;
      r->check = 0;
    }
    if (topk_ms >= 0) {
      r->cub_ms = r->cub_ms >= 0 ? topk_ms : -1.0;
      r->cub = with_indices ? "DeviceTopK::MaxPairs (u32 indices), unsorted" : "DeviceTopK::MaxKeys, unsorted";
    }
    if (r->ms < 0) failed = 1;
  }
  if (!failed && r->cub_ms >= 0 && call_topk(&a) == GPUPRIMS_STATUS_OK &&
      gpuprims_buffer_read(a.values, 0, got, k) == GPUPRIMS_STATUS_OK &&
      (!with_indices || gpuprims_buffer_read(a.indices, 0, idx, k) == GPUPRIMS_STATUS_OK)) {
    size_t i;
    int ok = memcmp(got, want, k * 4) == 0;
    for (i = 0; ok && with_indices && i < k; i++) {
      ok = idx[i] < n && memcmp(&h[idx[i]], &got[i], 4) == 0;
      if (ok && i > 0 && memcmp(&got[i], &got[i - 1], 4) == 0) ok = idx[i] > idx[i - 1];
    }
    r->check = ok;
    failed = !ok;
  }
  gpuprims_buffer_destroy(a.in);
  gpuprims_buffer_destroy(a.values);
  gpuprims_buffer_destroy(a.indices);
  free(h);
  free(want);
  free(got);
  free(cub_keys);
  free(idx);
  row_done(r);
  return failed;
}

int select_tour(gpuprims_context *ctx, bench_timer *timer, void *cub_stream, const char *only, int reps,
                const size_t *sizes, int nsizes) {
  int failures = 0, i;
  char label[64];
  gpuprims_backend backend = GPUPRIMS_BACKEND_HOST;
  (void)gpuprims_context_backend(ctx, &backend);
  with_cub = cub_stream != NULL;
  reps_run = reps;
  for (i = 0; i < nsizes; i++) {
    size_t n = sizes[i];
    /* The host backend selects through (key, index) pairs: 16 bytes a key. */
    if (backend == GPUPRIMS_BACKEND_HOST && n > ((size_t)1 << 24)) continue;
/* "topk" names these rows, "segtopk" the segmented ones alone (segmented_topk_bench.c). */
#define WANT(l) \
  (!only || strstr(l, only) || strstr(only, "select") || (strstr(only, "topk") && !strstr(only, "segtopk")))
    snprintf(label, sizeof label, "select_kth f32 median");
    if (WANT(label)) failures += kth_row(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, n, reps, label);
    snprintf(label, sizeof label, "select_kth u32 median");
    if (WANT(label)) failures += kth_row(ctx, timer, cub_stream, GPUPRIMS_DTYPE_U32, n, reps, label);
    snprintf(label, sizeof label, "topk f32 k=100 desc +indices");
    if (WANT(label)) failures += topk_row(ctx, timer, cub_stream, n, 100, 1, reps, label);
    snprintf(label, sizeof label, "topk f32 k=100 desc");
    if (WANT(label)) failures += topk_row(ctx, timer, cub_stream, n, 100, 0, reps, label);
    snprintf(label, sizeof label, "topk f32 k=65536 desc +indices");
    if (n >= 65536 && WANT(label)) failures += topk_row(ctx, timer, cub_stream, n, 65536, 1, reps, label);
    snprintf(label, sizeof label, "topk f32 k=65536 desc");
    if (n >= 65536 && WANT(label)) failures += topk_row(ctx, timer, cub_stream, n, 65536, 0, reps, label);
    snprintf(label, sizeof label, "topk f32 k=2^20 desc +indices");
    if (n >= ((size_t)1 << 22) && WANT(label)) failures += topk_row(ctx, timer, cub_stream, n, (size_t)1 << 20, 1, reps, label);
#undef WANT
  }
  return failures;
}

void select_summary(void) {
  int i;
  if (!nrows) return;
  if (with_cub) {
    printf("\nselection (ms: median of %d; CUB: DeviceRadixSort of the same input, then the element or the\n"
           "first k; for top-k DeviceTopK where this CUB has it (cub column); ratio = CUB / ours; check: ours\n"
           "equals CUB's sort)\n", reps_run);
    printf("%-34s %11s %10s %10s %8s  check  cub\n", "row", "n", "ms", "CUB ms", "ratio");
  } else {
    printf("\nselection, host backend alone (no CUB; ms: median of %d; check -: checked only against CUB)\n",
           reps_run);
    printf("%-34s %11s %10s  check\n", "row", "n", "ms");
  }
  for (i = 0; i < nrows; i++) print_row(&rows[i]);
}
