/* The segmented-select rows of the tour.
 *
 * The lower median of each row (gpuprims_segmented_select, ks NULL, u32 offsets) of
 *   u16, 10,000 rows of random length 1..100 (the seed's signal-processing case),
 *   u16, 1,000,000 such rows,
 *   f32, 10,000 rows of 1..5,000,
 *   f32, 100 rows of 1..2^20,
 * timed as the whole call: events around it on the stream, its wait for the rows' check
 * included. Beside each, CUB in the same process on the same device buffers: the
 * per-row cub::BlockRadixSort kernel (the anchors' row_median_radix; u16 rows up to 128,
 * f32 up to 5120) and cub::DeviceSegmentedSort::SortKeys (f32 rows), which is what
 * selecting by sorting costs. ratio = CUB ms / ours.
 *
 * Checks: our medians equal the BlockRadixSort kernel's, or the element at each row's
 * median in CUB's segmented sort, bitwise (the inputs hold no NaN). On the host backend
 * (no CUB) only the 10,000-row cases run, unchecked.
 */
#define _POSIX_C_SOURCE 200809L

#include "segmented_select_bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_json.h"
#include "bench_util.h"
#include "cub_reference.h"

typedef struct {
  char label[64];
  const char *dtype; /* for --json */
  size_t n, nrows;
  double first_ms;                       /* the first call, kernel compiles included (wall clock) */
  double ms, block_sort_ms, seg_sort_ms; /* < 0: not measured */
  int check;                             /* 1 OK, 0 FAIL, -1 none */
} segsel_row;

#define MAX_ROWS 8
static segsel_row rows[MAX_ROWS];
static int nrows_done = 0;
static int with_cub = 0, reps_run = 0; /* as segmented_select_tour ran */

static void print_ratio(double cub_ms, double ms) {
  if (cub_ms >= 0 && ms > 0) printf(" %10.4f %7.2fx", cub_ms, cub_ms / ms);
  else printf(" %10s %8s", "-", "-");
}

static void print_row(const segsel_row *r) {
  printf("%-38s %9zu %11zu", r->label, r->nrows, r->n);
  if (r->ms >= 0) printf(" %10.4f", r->ms); else printf(" %10s", "-");
  if (with_cub) {
    print_ratio(r->block_sort_ms, r->ms);
    print_ratio(r->seg_sort_ms, r->ms);
  }
  printf("  %-5s", r->check == 1 ? "OK" : r->check == 0 ? "FAIL" : "-");
  if (r->first_ms >= 0) printf(" %10.1f\n", r->first_ms); else printf(" %10s\n", "-");
}

/* A row is done: a progress line, and the row as JSON (--json): CUB's figure is the
 * faster of the two CUB ways that ran. */
static void row_done(const segsel_row *r) {
  const int blk = r->block_sort_ms >= 0, seg = r->seg_sort_ms >= 0;
  const int use_blk = blk && (!seg || r->block_sort_ms <= r->seg_sort_ms);
  char extra[160], blk_ms[32] = "null", seg_ms[32] = "null";
  bench_json_row j;
  if (blk) snprintf(blk_ms, sizeof blk_ms, "%.6g", r->block_sort_ms);
  if (seg) snprintf(seg_ms, sizeof seg_ms, "%.6g", r->seg_sort_ms);
  snprintf(extra, sizeof extra, "\"rows\": %zu, \"block_radix_sort_ms\": %s, \"segmented_sort_ms\": %s", r->nrows,
           blk_ms, seg_ms);
  memset(&j, 0, sizeof j);
  j.primitive = "segmented_select";
  j.label = r->label;
  j.dtype = r->dtype;
  j.variant = "";
  j.n = j.items = (double)r->n;
  j.bytes = -1.0;
  j.ms = r->ms;
  j.cub_ms = use_blk ? r->block_sort_ms : r->seg_sort_ms;
  j.cub = use_blk ? "BlockRadixSort per row" : seg ? "DeviceSegmentedSort::SortKeys" : NULL;
  j.check = r->check;
  j.extra = extra;
  bench_json_add(&j);
  bench_progress("segmented select: %s, %zu rows", r->label, r->nrows);
}

typedef struct {
  gpuprims_context *ctx;
  gpuprims_buffer *values, *offsets, *out;
} segsel_args;

static gpuprims_status call_segsel(void *a) {
  segsel_args *x = (segsel_args *)a;
  return gpuprims_segmented_select(x->ctx, x->values, x->offsets, NULL, x->out);
}

static void *device_ptr(gpuprims_buffer *b) {
  void *p = NULL;
  return gpuprims_buffer_device_ptr(b, &p) == GPUPRIMS_STATUS_OK ? p : NULL;
}

/* One row of the table: nrows rows of random length 1..max_len of dtype t (u16 random
 * bits, f32 uniform in [-1, 1)). Returns 1 when it failed. */
static int segsel_case(gpuprims_context *ctx, bench_timer *timer, void *stream, gpuprims_dtype t, size_t nrows,
                       size_t max_len, int reps, const char *label) {
  const size_t es = t == GPUPRIMS_DTYPE_U16 ? 2 : 4;
  segsel_row *r;
  segsel_args a;
  uint32_t *offsets = (uint32_t *)malloc((nrows + 1) * 4);
  uint64_t seed = 0x5E65E1ull + nrows * 31 + max_len;
  unsigned char *values, *got = NULL, *want = NULL;
  size_t i, n;
  int failed = 0;
  if (nrows_done == MAX_ROWS || !offsets) return 1;
  r = &rows[nrows_done++];
  snprintf(r->label, sizeof r->label, "%s", label);
  r->dtype = t == GPUPRIMS_DTYPE_U16 ? "u16" : "f32";
  r->first_ms = r->ms = r->block_sort_ms = r->seg_sort_ms = -1.0;
  r->check = -1;
  offsets[0] = 0;
  for (i = 0; i < nrows; i++) offsets[i + 1] = offsets[i] + 1 + (uint32_t)(bench_splitmix64(&seed) % max_len);
  n = offsets[nrows];
  r->n = n;
  r->nrows = nrows;
  values = (unsigned char *)malloc(n * es);
  if (!values) return 1;
  for (i = 0; i < n; i++) {
    uint64_t x = bench_splitmix64(&seed);
    if (t == GPUPRIMS_DTYPE_U16) {
      uint16_t v = (uint16_t)x;
      memcpy(values + 2 * i, &v, 2);
    } else {
      float f = (float)((double)(x >> 11) * (2.0 / 9007199254740992.0) - 1.0);
      memcpy(values + 4 * i, &f, 4);
    }
  }
  memset(&a, 0, sizeof a);
  a.ctx = ctx;
  if (gpuprims_buffer_from_host(ctx, t, values, n, &a.values) != GPUPRIMS_STATUS_OK ||
      gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, offsets, nrows + 1, &a.offsets) != GPUPRIMS_STATUS_OK ||
      gpuprims_buffer_create(ctx, t, nrows, &a.out) != GPUPRIMS_STATUS_OK)
    failed = 1;
  if (!failed) {
    const double t0 = bench_wall_ms();
    if (call_segsel(&a) == GPUPRIMS_STATUS_OK && gpuprims_context_synchronize(ctx) == GPUPRIMS_STATUS_OK)
      r->first_ms = bench_wall_ms() - t0;
    r->ms = bench_time_call(timer, reps, call_segsel, &a, "gpuprims_segmented_select");
    failed = r->ms < 0;
  }
  got = (unsigned char *)malloc(nrows * es);
  want = (unsigned char *)malloc(nrows * es);
  if (!failed && stream && got && want &&
      gpuprims_buffer_read(a.out, 0, got, nrows) == GPUPRIMS_STATUS_OK) {
    void *d_values = device_ptr(a.values), *d_offsets = device_ptr(a.offsets);
    void *d_out = cubref_malloc(nrows * es);
    int checked = 0, ok = 1;
    if (d_out && d_values && d_offsets) {
      r->block_sort_ms =
          cubref_row_median_block_sort_ms(t, d_values, d_offsets, nrows, max_len, d_out, 2, reps, stream);
      if (r->block_sort_ms >= 0 && cubref_copy_to_host(want, d_out, nrows * es) == 0) {
        ok = memcmp(got, want, nrows * es) == 0;
        checked = 1;
      }
    }
    cubref_free(d_out);
    if (t == GPUPRIMS_DTYPE_F32 && d_values && d_offsets) {
      void *d_sorted = cubref_malloc(n * es);
      unsigned char *sorted = (unsigned char *)malloc(n * es);
      if (d_sorted && sorted) {
        r->seg_sort_ms = cubref_segmented_sort_ms(t, d_values, d_sorted, n, d_offsets, nrows, 2, reps, stream);
        if (r->seg_sort_ms >= 0 && cubref_copy_to_host(sorted, d_sorted, n * es) == 0) {
          for (i = 0; i < nrows; i++) {
            size_t at = offsets[i] + (offsets[i + 1] - offsets[i] - 1) / 2;
            ok = ok && memcmp(got + i * es, sorted + at * es, es) == 0;
          }
          checked = 1;
        }
      }
      cubref_free(d_sorted);
      free(sorted);
    }
    if (checked) {
      r->check = ok;
      failed = !ok;
    }
  }
  gpuprims_buffer_destroy(a.values);
  gpuprims_buffer_destroy(a.offsets);
  gpuprims_buffer_destroy(a.out);
  free(offsets);
  free(values);
  free(got);
  free(want);
  row_done(r);
  return failed;
}

int segmented_select_tour(gpuprims_context *ctx, bench_timer *timer, void *cub_stream, const char *only, int reps) {
  int failures = 0;
  gpuprims_backend backend = GPUPRIMS_BACKEND_HOST;
  (void)gpuprims_context_backend(ctx, &backend);
  if (only && !strstr(only, "segsel") && !strstr(only, "segmented")) return 0;
  with_cub = cub_stream != NULL;
  reps_run = reps;
  failures += segsel_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_U16, 10000, 100, reps, "segsel u16 median len 1..100");
  failures += segsel_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, 10000, 5000, reps, "segsel f32 median len 1..5000");
  /* The host backend would take seconds a call on these. */
  if (backend != GPUPRIMS_BACKEND_CUDA) return failures;
  failures += segsel_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_U16, 1000000, 100, reps, "segsel u16 median len 1..100");
  failures +=
      segsel_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, 100, (size_t)1 << 20, reps, "segsel f32 median len 1..2^20");
  return failures;
}

void segmented_select_summary(void) {
  int i;
  if (!nrows_done) return;
  printf("\nsegmented select, the lower median of each row (ms: median of %d, the whole call with its wait;\n"
         "first ms: the first call, kernel compiles included)", reps_run);
  if (with_cub) {
    printf(";\nCUB on the same buffers: blksort: cub::BlockRadixSort per row; segsort: DeviceSegmentedSort::SortKeys;\n"
           "ratio = CUB / ours; check: ours equals CUB's)\n");
    printf("%-38s %9s %11s %10s %10s %8s %10s %8s  %-5s %10s\n", "row", "rows", "n", "ms", "blksort ms", "ratio",
           "segsort ms", "ratio", "check", "first ms");
  } else {
    printf(";\nhost backend alone: no CUB, and only the 10,000-row cases; check -: checked only against CUB)\n");
    printf("%-38s %9s %11s %10s  %-5s %10s\n", "row", "rows", "n", "ms", "check", "first ms");
  }
  for (i = 0; i < nrows_done; i++) print_row(&rows[i]);
}
