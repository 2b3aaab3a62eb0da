/* The segmented top-k rows of the tour (issue 39's table).
 *
 * gpuprims_segmented_topk, descending (the k largest of each row), values and their u64
 * indices, on
 *   bf16, 128 rows x 128,256, k = 50 (a vocabulary's logits: sampling's top-k),
 *   f32, 4,096 rows x 32,768, k = 100,
 *   f32, 100,000 rows x 256, k = 8 (a mixture of experts' router),
 *   f32, 10,000 ragged rows of random length 1..5,000 (u32 offsets), k = 10 each,
 *   bf16, one row of 2^28, k = 100,
 * timed as the whole call: events around it on the stream (the ragged row's wait for the
 * device-side check of its rows included). Data: bf16 normal-ish (a sum of four uniforms,
 * truncated from f32: no NaN, many ties, which the tie rule must order), f32 uniform in
 * [-1, 1).
 *
 * Beside each, where it can run (CCCL 3.5.0 or later; rows of at most 8,192 items with u32
 * values, one block a row: here only the 256-long and the ragged rows),
 * cub::DeviceBatchedTopK::MaxPairs on the same device buffers, with u32 row indices as
 * values, unsorted and not deterministic (the only mode CUB 3.5.0 has); its
 * configuration, or why it did not run, is printed under the table. ratio = CUB ms / ours.
 *
 * Checks, on 8 sampled rows (the first, the last, a short one when rows are ragged, random
 * others): our values and indices equal a CPU reference exactly (the k largest in the
 * library's total order, ties lowest index first, short rows padded with zero bits and
 * index UINT64_MAX); CUB's keys, sorted, equal the reference's values, and each of its
 * indices is a distinct one whose element is that key ("cub" in the check column when
 * only CUB's check failed).
 *
 * On the host backend (no CUB) the same five shapes run smaller (fewer rows, the one row
 * 2^22), checked the same way.
 */
#define _POSIX_C_SOURCE 200809L

#include "segmented_topk_bench.h"

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
  size_t nrows, row_len, max_len, n, k; /* row_len 0: ragged rows of 1..max_len */
  double first_ms;                      /* the first call, kernel compiles included (wall clock) */
  double ms, cub_ms;                    /* < 0: not measured */
  char cub_note[256];                   /* CUB's configuration, or why it did not run */
  int check;                            /* 1 OK, 0 FAIL (ours), 2 CUB's result failed its check, -1 none */
} segtopk_row;

#define MAX_ROWS 8
#define SAMPLED 8
static segtopk_row rows[MAX_ROWS];
static int nrows_done = 0;
static int with_cub = 0, reps_run = 0, on_cuda = 0; /* as segmented_topk_tour ran */

static void print_row(const segtopk_row *r) {
  char shape[40];
  if (r->row_len) snprintf(shape, sizeof shape, "%zu x %zu", r->nrows, r->row_len);
  else snprintf(shape, sizeof shape, "%zu x 1..%zu", r->nrows, r->max_len);
  printf("%-40s %-18s %11zu %5zu", r->label, shape, r->n, r->k);
  if (r->ms >= 0) printf(" %10.4f", r->ms); else printf(" %10s", "-");
  if (with_cub) {
    if (r->cub_ms >= 0 && r->ms > 0) printf(" %10.4f %7.2fx", r->cub_ms, r->cub_ms / r->ms);
    else printf(" %10s %8s", r->cub_ms == -2.0 ? "n/a" : "-", "-");
  }
  printf("  %-5s", r->check == 1 ? "OK" : r->check == 0 ? "FAIL" : r->check == 2 ? "cub!" : "-");
  if (r->first_ms >= 0) printf(" %10.1f\n", r->first_ms); else printf(" %10s\n", "-");
}

/* A row is done: a progress line, and the row as JSON (--json). */
static void row_done(const segtopk_row *r) {
  char extra[512], note[300], cub_ms[32] = "null";
  bench_json_row j;
  if (r->cub_ms >= 0) snprintf(cub_ms, sizeof cub_ms, "%.6g", r->cub_ms);
  bench_json_string(note, sizeof note, r->cub_note);
  snprintf(extra, sizeof extra,
           "\"rows\": %zu, \"row_len\": %zu, \"max_row_len\": %zu, \"k\": %zu, \"order\": \"descending\", "
           "\"indices\": true, \"batched_topk_ms\": %s, \"cub_config\": %s",
           r->nrows, r->row_len, r->row_len ? r->row_len : r->max_len, r->k, cub_ms, note);
  memset(&j, 0, sizeof j);
  j.primitive = "segmented_topk";
  j.label = r->label;
  j.dtype = r->dtype;
  j.variant = r->row_len ? "uniform" : "ragged";
  j.n = j.items = (double)r->n;
  j.bytes = -1.0;
  j.ms = r->ms;
  j.cub_ms = r->cub_ms >= 0 ? r->cub_ms : -1.0;
  j.cub = r->cub_ms >= 0 ? "DeviceBatchedTopK::MaxPairs" : NULL;
  j.check = r->check == 1 ? 1 : r->check == -1 ? -1 : 0;
  j.extra = extra;
  bench_json_add(&j);
  bench_progress("segmented top-k: %s, %zu rows", r->label, r->nrows);
}

typedef struct {
  gpuprims_context *ctx;
  gpuprims_buffer *values, *offsets, *out_values, *out_indices;
  uint64_t row_len, k;
} segtopk_args;

static gpuprims_status call_segtopk(void *a) {
  segtopk_args *x = (segtopk_args *)a;
  return gpuprims_segmented_topk(x->ctx, x->values, x->offsets, x->row_len, x->k, NULL, GPUPRIMS_ORDER_DESCENDING,
                                 x->out_values, x->out_indices);
}

/* The library's message about the last failure in this thread. */
static const char *last_error(void) {
  static char buf[512];
  buf[0] = '\0';
  (void)gpuprims_last_error(buf, sizeof buf);
  return buf;
}

static void *device_ptr(gpuprims_buffer *b) {
  void *p = NULL;
  return b && gpuprims_buffer_device_ptr(b, &p) == GPUPRIMS_STATUS_OK ? p : NULL;
}

/* The element's place in the library's total order, as an unsigned number (the inputs
 * hold no NaN): -inf < ... < -0.0 < +0.0 < ... < +inf. es: 2 (bf16) or 4 (f32). */
static uint32_t ord_key(const unsigned char *p, size_t es) {
  if (es == 2) {
    uint16_t u;
    memcpy(&u, p, 2);
    return (u & 0x8000u) ? (uint32_t)(~u & 0xFFFFu) : (uint32_t)(u | 0x8000u);
  } else {
    uint32_t u;
    memcpy(&u, p, 4);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  }
}

/* The CPU reference of one row of len elements at row: the k largest (total order), ties
 * lowest index first, into key[] / idx[] (k entries each). Returns how many it found
 * (min(k, len)). Elements come in index order, so an equal key later never displaces one
 * already kept. */
static size_t ref_topk(const unsigned char *row, size_t len, size_t es, size_t k, uint32_t *key, uint64_t *idx) {
  size_t count = 0, i, j;
  for (i = 0; i < len; i++) {
    const uint32_t x = ord_key(row + i * es, es);
    if (count == k && x <= key[k - 1]) continue;
    j = count < k ? count++ : k - 1;
    while (j > 0 && key[j - 1] < x) {
      key[j] = key[j - 1];
      idx[j] = idx[j - 1];
      j--;
    }
    key[j] = x;
    idx[j] = i;
  }
  return count;
}

static int cmp_u32_desc(const void *a, const void *b) {
  const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_u32(const void *a, const void *b) {
  const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* Fills values with n elements of dtype t: bf16 normal-ish, f32 uniform in [-1, 1). */
static void fill_values(unsigned char *values, size_t n, gpuprims_dtype t, uint64_t seed) {
  size_t i;
  for (i = 0; i < n; i++) {
    const uint64_t x = bench_splitmix64(&seed);
    if (t == GPUPRIMS_DTYPE_BF16) {
      /* Four 16-bit uniforms summed: mean 2, sd ~0.58; scaled to about N(0, 1). */
      const double s = (double)(x & 0xFFFF) + (double)((x >> 16) & 0xFFFF) + (double)((x >> 32) & 0xFFFF) +
                       (double)(x >> 48);
      const float f = (float)((s / 65536.0 - 2.0) * 1.7320508075688772);
      uint32_t u;
      uint16_t h;
      memcpy(&u, &f, 4);
      h = (uint16_t)(u >> 16); /* truncation: a finite f32 gives a finite bf16 */
      memcpy(values + 2 * i, &h, 2);
    } else {
      const float f = (float)((double)(x >> 11) * (2.0 / 9007199254740992.0) - 1.0);
      memcpy(values + 4 * i, &f, 4);
    }
  }
}

/* Checks the sampled rows: ours (got_v / got_i, nrows * k) against the reference, and
 * CUB's (cub_v / cub_i, u32 indices, unsorted; NULL when CUB did not run). Returns 1 OK,
 * 0 ours wrong, 2 ours right and CUB's wrong. */
static int check_rows(const unsigned char *values, const uint32_t *offsets, size_t nrows, size_t row_len, size_t k,
                      size_t es, const unsigned char *got_v, const uint64_t *got_i, const unsigned char *cub_v,
                      const uint32_t *cub_i, uint64_t seed) {
  size_t sample[SAMPLED], ns = 0, s, j;
  uint32_t *key = (uint32_t *)malloc(k * sizeof *key), *ck = (uint32_t *)malloc(k * sizeof *ck);
  uint32_t *ci = (uint32_t *)malloc(k * sizeof *ci);
  uint64_t *idx = (uint64_t *)malloc(k * sizeof *idx);
  int ours_ok = 1, cub_ok = 1, reported = 0;
  if (!key || !ck || !ci || !idx) {
    free(key);
    free(ck);
    free(ci);
    free(idx);
    return 0;
  }
  sample[ns++] = 0;
  if (nrows > 1) sample[ns++] = nrows - 1;
  if (offsets) /* a row shorter than k, when there is one: its pads are checked */
    for (s = 0; s < nrows; s++)
      if (offsets[s + 1] - offsets[s] < k) {
        sample[ns++] = s;
        break;
      }
  while (ns < SAMPLED && ns < nrows) sample[ns++] = (size_t)(bench_splitmix64(&seed) % nrows);
  for (s = 0; s < ns; s++) {
    const size_t r = sample[s];
    const size_t beg = offsets ? offsets[r] : r * row_len, len = offsets ? offsets[r + 1] - offsets[r] : row_len;
    const unsigned char *row = values + beg * es;
    const size_t found = ref_topk(row, len, es, k, key, idx);
    for (j = 0; j < k; j++) {
      const unsigned char *gv = got_v + (r * k + j) * es;
      const uint64_t gi = got_i[r * k + j];
      int bad;
      if (j < found) bad = ord_key(gv, es) != key[j] || gi != idx[j];
      else {
        static const unsigned char zero[4] = {0, 0, 0, 0};
        bad = memcmp(gv, zero, es) != 0 || gi != UINT64_MAX;
      }
      if (bad) {
        if (!reported++)
          fprintf(stderr, "segtopk: row %zu (len %zu), place %zu: got key %08x index %llu, want %08x index %llu%s\n",
                  r, len, j, (unsigned)ord_key(gv, es), (unsigned long long)gi, j < found ? (unsigned)key[j] : 0u,
                  (unsigned long long)(j < found ? idx[j] : UINT64_MAX), j < found ? "" : " (a pad)");
        ours_ok = 0;
      }
    }
    if (cub_v && cub_i) {
      /* CUB writes min(k, len) items, unsorted, indices u32. */
      for (j = 0; j < found; j++) {
        ck[j] = ord_key(cub_v + (r * k + j) * es, es);
        ci[j] = cub_i[r * k + j];
        if (ci[j] >= len || ord_key(row + (size_t)ci[j] * es, es) != ck[j]) cub_ok = 0;
      }
      qsort(ck, found, sizeof *ck, cmp_u32_desc);
      qsort(ci, found, sizeof *ci, cmp_u32);
      for (j = 0; j < found; j++) {
        if (ck[j] != key[j]) cub_ok = 0;
        if (j && ci[j] == ci[j - 1]) cub_ok = 0;
      }
    }
  }
  if (!cub_ok) fprintf(stderr, "segtopk: CUB's DeviceBatchedTopK result differs from the CPU reference\n");
  free(key);
  free(ck);
  free(ci);
  free(idx);
  return !ours_ok ? 0 : !cub_ok ? 2 : 1;
}

/* One row of the table: nrows rows of row_len (0: ragged, random length 1..max_len) of
 * dtype t (BF16 or F32), the k largest of each. Returns 1 when it failed. */
static int segtopk_case(gpuprims_context *ctx, bench_timer *timer, void *stream, gpuprims_dtype t, size_t nrows,
                        size_t row_len, size_t max_len, size_t k, int reps, const char *label) {
  const size_t es = t == GPUPRIMS_DTYPE_BF16 ? 2 : 4;
  segtopk_row *r;
  segtopk_args a;
  uint32_t *offsets = NULL, *cub_i = NULL;
  uint64_t seed = 0x70F4Bull + nrows * 31 + (row_len ? row_len : max_len) * 7 + k, *got_i = NULL;
  unsigned char *values = NULL, *got_v = NULL, *cub_v = NULL;
  size_t i, n, nout;
  int failed = 0;
  if (nrows_done == MAX_ROWS) return 1;
  r = &rows[nrows_done++];
  memset(r, 0, sizeof *r);
  snprintf(r->label, sizeof r->label, "%s", label);
  r->dtype = t == GPUPRIMS_DTYPE_BF16 ? "bf16" : "f32";
  r->first_ms = r->ms = r->cub_ms = -1.0;
  r->check = -1;
  r->nrows = nrows;
  r->row_len = row_len;
  r->max_len = max_len;
  r->k = k;
  if (!row_len) {
    offsets = (uint32_t *)malloc((nrows + 1) * 4);
    if (!offsets) return 1;
    offsets[0] = 0;
    for (i = 0; i < nrows; i++) offsets[i + 1] = offsets[i] + 1 + (uint32_t)(bench_splitmix64(&seed) % max_len);
    n = offsets[nrows];
  } else {
    n = nrows * row_len;
  }
  r->n = n;
  nout = nrows * k;
  values = (unsigned char *)malloc(n * es);
  got_v = (unsigned char *)malloc(nout * es);
  got_i = (uint64_t *)malloc(nout * 8);
  if (!values || !got_v || !got_i) {
    snprintf(r->cub_note, sizeof r->cub_note, "out of host memory");
    failed = 1;
    goto done;
  }
  fill_values(values, n, t, seed);
  memset(&a, 0, sizeof a);
  a.ctx = ctx;
  a.row_len = row_len;
  a.k = k;
  if (gpuprims_buffer_from_host(ctx, t, values, n, &a.values) != GPUPRIMS_STATUS_OK ||
      (offsets &&
       gpuprims_buffer_from_host(ctx, GPUPRIMS_DTYPE_U32, offsets, nrows + 1, &a.offsets) != GPUPRIMS_STATUS_OK) ||
      gpuprims_buffer_create(ctx, t, nout, &a.out_values) != GPUPRIMS_STATUS_OK ||
      gpuprims_buffer_create(ctx, GPUPRIMS_DTYPE_U64, nout, &a.out_indices) != GPUPRIMS_STATUS_OK) {
    fprintf(stderr, "segtopk: %s: buffers: %s\n", label, last_error());
    failed = 1;
  }
  if (!failed) {
    gpuprims_status st;
    const double t0 = bench_wall_ms();
    st = call_segtopk(&a);
    if (st == GPUPRIMS_STATUS_OK && gpuprims_context_synchronize(ctx) == GPUPRIMS_STATUS_OK)
      r->first_ms = bench_wall_ms() - t0;
    else
      fprintf(stderr, "segtopk: %s: first call: status %d: %s\n", label, (int)st, last_error());
    r->ms = bench_time_call(timer, reps, call_segtopk, &a, "gpuprims_segmented_topk");
    failed = r->ms < 0;
  }
  /* CUB beside it, on the same device buffers, into its own outputs. */
  if (!failed && stream) {
    void *d_values = device_ptr(a.values), *d_offsets = device_ptr(a.offsets);
    void *d_keys = cubref_malloc(nout * es), *d_idx = cubref_malloc(nout * 4);
    if (d_values && (!offsets || d_offsets) && d_keys && d_idx) {
      r->cub_ms = cubref_batched_topk_ms(t, GPUPRIMS_ORDER_DESCENDING, d_values, d_offsets, nrows, row_len, max_len,
                                         k, d_keys, d_idx, 2, reps, stream, r->cub_note, sizeof r->cub_note);
      if (r->cub_ms >= 0) {
        cub_v = (unsigned char *)malloc(nout * es);
        cub_i = (uint32_t *)malloc(nout * 4);
        if (!cub_v || !cub_i || cubref_copy_to_host(cub_v, d_keys, nout * es) != 0 ||
            cubref_copy_to_host(cub_i, d_idx, nout * 4) != 0) {
          free(cub_v);
          free(cub_i);
          cub_v = NULL;
          cub_i = NULL;
        }
      } else {
        snprintf(r->cub_note, sizeof r->cub_note, "n/a: %s", cubref_last_error());
      }
    } else {
      snprintf(r->cub_note, sizeof r->cub_note, "not run: %s", cubref_last_error());
    }
    cubref_free(d_keys);
    cubref_free(d_idx);
  } else if (!stream) {
    snprintf(r->cub_note, sizeof r->cub_note, "not run (no CUDA stream: host backend, --no-cub or no CUDA build)");
  }
  if (!failed && gpuprims_buffer_read(a.out_values, 0, got_v, nout) == GPUPRIMS_STATUS_OK &&
      gpuprims_buffer_read(a.out_indices, 0, got_i, nout) == GPUPRIMS_STATUS_OK) {
    r->check = check_rows(values, offsets, nrows, row_len, k, es, got_v, got_i, cub_v, cub_i, seed ^ 0xC4EC4ull);
    failed = r->check != 1;
  } else if (!failed) {
    fprintf(stderr, "segtopk: %s: reading the outputs: %s\n", label, last_error());
    failed = 1;
  }
  gpuprims_buffer_destroy(a.values);
  gpuprims_buffer_destroy(a.offsets);
  gpuprims_buffer_destroy(a.out_values);
  gpuprims_buffer_destroy(a.out_indices);
done:
  free(offsets);
  free(values);
  free(got_v);
  free(got_i);
  free(cub_v);
  free(cub_i);
  row_done(r);
  return failed;
}

int segmented_topk_tour(gpuprims_context *ctx, bench_timer *timer, void *cub_stream, const char *only, int reps) {
  int failures = 0;
  gpuprims_backend backend = GPUPRIMS_BACKEND_HOST;
  (void)gpuprims_context_backend(ctx, &backend);
  if (only && !strstr(only, "segtopk") && !strstr(only, "segmented")) return 0;
  with_cub = cub_stream != NULL;
  reps_run = reps;
  on_cuda = backend == GPUPRIMS_BACKEND_CUDA;
  if (on_cuda) {
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_BF16, 128, 128256, 0, 50, reps,
                             "segtopk bf16 k=50 desc +indices");
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, 4096, 32768, 0, 100, reps,
                             "segtopk f32 k=100 desc +indices");
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, 100000, 256, 0, 8, reps,
                             "segtopk f32 k=8 desc +indices");
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, 10000, 0, 5000, 10, reps,
                             "segtopk f32 ragged k=10 desc +indices");
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_BF16, 1, (size_t)1 << 28, 0, 100, reps,
                             "segtopk bf16 one row k=100 desc +indices");
  } else {
    /* The host backend: the same shapes, fewer rows (seconds, not minutes). */
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_BF16, 16, 128256, 0, 50, reps,
                             "segtopk bf16 k=50 desc +indices");
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, 256, 32768, 0, 100, reps,
                             "segtopk f32 k=100 desc +indices");
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, 10000, 256, 0, 8, reps,
                             "segtopk f32 k=8 desc +indices");
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_F32, 1000, 0, 5000, 10, reps,
                             "segtopk f32 ragged k=10 desc +indices");
    failures += segtopk_case(ctx, timer, cub_stream, GPUPRIMS_DTYPE_BF16, 1, (size_t)1 << 22, 0, 100, reps,
                             "segtopk bf16 one row k=100 desc +indices");
  }
  return failures;
}

void segmented_topk_summary(void) {
  int i;
  if (!nrows_done) return;
  printf("\nsegmented top-k, the k largest of each row with their indices, sorted (ms: median of %d, the whole\n"
         "call, with its wait for the rows' check when ragged; first ms: the first call, kernel compiles included;\n"
         "check: ours equals a CPU reference on %d sampled rows, values and indices exactly",
         reps_run, SAMPLED);
  if (with_cub) {
    printf(";\nCUB: cub::DeviceBatchedTopK::MaxPairs on the same buffers, u32 indices, unsorted; ratio = CUB / ours;\n"
           "cub!: ours OK, CUB's result not the reference's top-k)\n");
    printf("%-40s %-18s %11s %5s %10s %10s %8s  %-5s %10s\n", "row", "shape", "n", "k", "ms", "cub ms", "ratio",
           "check", "first ms");
  } else {
    printf(";\n%s: no CUB%s)\n", on_cuda ? "no CUB stream" : "host backend alone",
           on_cuda ? "" : ", and fewer rows than on CUDA");
    printf("%-40s %-18s %11s %5s %10s  %-5s %10s\n", "row", "shape", "n", "k", "ms", "check", "first ms");
  }
  for (i = 0; i < nrows_done; i++) print_row(&rows[i]);
  if (with_cub)
    for (i = 0; i < nrows_done; i++)
      printf("  cub, %s (%zu rows): %s\n", rows[i].label, rows[i].nrows, rows[i].cub_note);
}
