/* The Life rows of the tour.
 *
 * CUDA context: B3/S23 on a 16384^2 torus, one generation per call (the median of
 * `reps` calls) and 1,000 generations in one call; a 65536^2 torus, 100 generations
 * in one call; HighLife (B36/S23) at 16384^2, 1,000 generations; and the naive
 * byte-per-cell kernel of life_naive.cu at 16384^2 as the anchor. Host context: the
 * host backend at 4096^2, 100 generations, beside a naive byte-per-cell C loop on the
 * same soup (10 generations; both reported in cells per second).
 *
 * Checks: one generation on the GPU equals the host backend's, cell for cell; each
 * many-generation call equals as many one-generation calls on a second grid (another
 * kernel instantiation: 8 generations a launch against 1); the host backend equals the
 * naive loop after 10 generations. Soups are random (density 1/2); the 65536^2 one
 * repeats a random band of 1,024 rows, so the host can write it quickly.
 */
#define _POSIX_C_SOURCE 200809L

#include "life_bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "life_naive.h"
#include "bench_json.h"
#include "bench_util.h"

typedef struct {
  char label[64];
  double cells, gens, ms; /* ms < 0: not measured */
  double first_ms;        /* the first call, kernel compile or cache load included; < 0: none */
  int check;              /* 1 OK, 0 FAIL, -1 none */
  int not_ours;           /* a naive reference, not gpuprims */
} life_row;

#define MAX_ROWS 16
static life_row rows[MAX_ROWS];
static int nrows = 0;
static double host_vs_naive = -1.0; /* the host backend's cells per second / the naive loop's */

/* width x height bytes: a random band of `band` rows, repeated. */
static uint8_t *soup(uint64_t w, uint64_t h, uint64_t band, uint64_t seed) {
  size_t n = (size_t)(w * h), b = (size_t)(w * (band < h ? band : h)), i;
  uint8_t *c = (uint8_t *)malloc(n);
  if (!c) return NULL;
  for (i = 0; i < b; i += 64) {
    uint64_t r = bench_splitmix64(&seed);
    size_t k;
    for (k = 0; k < 64 && i + k < b; k++) c[i + k] = (uint8_t)((r >> k) & 1);
  }
  for (i = b; i < n; i += b) memcpy(c + i, c, n - i < b ? n - i : b);
  return c;
}

static void print_row(const life_row *r) {
  printf("%-40s %14.0f %6.0f", r->label, r->cells, r->gens);
  if (r->ms >= 0) printf(" %11.4f %10.3f", r->ms, r->cells * r->gens / (r->ms * 1e6));
  else printf(" %11s %10s", "-", "-");
  printf("  %-5s", r->check == 1 ? "OK" : r->check == 0 ? "FAIL" : "-");
  if (r->first_ms >= 0) printf(" %10.1f\n", r->first_ms);
  else printf(" %10s\n", "-");
}

static void print_header(void) {
  printf("%-40s %14s %6s %11s %10s  %-5s %10s\n", "life row", "cells", "gens", "ms", "Gcell/s", "check", "first ms");
}

/* A row is done: a progress line, and the row as JSON (--json). */
static void row_done(const life_row *r) {
  bench_json_row j;
  char extra[64];
  memset(&j, 0, sizeof j);
  snprintf(extra, sizeof extra, "\"generations\": %.0f", r->gens);
  j.primitive = "life";
  j.label = r->label;
  j.dtype = "bit";
  j.variant = "";
  j.n = r->cells;
  j.items = r->cells * r->gens;
  j.bytes = -1.0;
  j.ms = r->ms;
  j.cub_ms = -1.0;
  j.check = r->check;
  j.not_ours = r->not_ours;
  j.extra = extra;
  bench_json_add(&j);
  bench_progress("life: %s", r->label);
}

static life_row *add_row(const char *label, double cells, double gens) {
  life_row *r = &rows[nrows < MAX_ROWS - 1 ? nrows++ : nrows];
  snprintf(r->label, sizeof r->label, "%s", label);
  r->cells = cells;
  r->gens = gens;
  r->ms = r->first_ms = -1;
  r->check = -1;
  r->not_ours = 0;
  return r;
}

static int report(gpuprims_status s, const char *what) {
  char msg[512];
  if (s == GPUPRIMS_STATUS_OK) return 0;
  gpuprims_last_error(msg, sizeof msg);
  printf("  ! %s: %s: %s\n", what, gpuprims_status_name(s), msg);
  return 1;
}

static gpuprims_life_grid *grid(gpuprims_context *ctx, uint64_t w, uint64_t h, const char *rule, const uint8_t *cells) {
  gpuprims_life_grid *g = NULL;
  if (report(gpuprims_life_create(ctx, w, h, GPUPRIMS_LIFE_TORUS, &g), "life_create")) return NULL;
  if (report(gpuprims_life_set_rule(g, rule), "life_set_rule") || report(gpuprims_life_write_cells(g, cells), "write_cells")) {
    gpuprims_life_destroy(g);
    return NULL;
  }
  return g;
}

/* Do two grids hold the same cells? */
static int same_cells(gpuprims_life_grid *a, gpuprims_life_grid *b, size_t n) {
  uint8_t *x = (uint8_t *)malloc(n), *y = (uint8_t *)malloc(n);
  int same = x && y && !report(gpuprims_life_read_cells(a, x), "read_cells") &&
             !report(gpuprims_life_read_cells(b, y), "read_cells") && memcmp(x, y, n) == 0;
  free(x);
  free(y);
  return same;
}

/* The median ms of `reps` calls of step(gens), after one untimed call. */
static double time_steps(bench_timer *t, gpuprims_life_grid *g, uint64_t gens, int reps) {
  double ms[64];
  int i;
  if (reps > 64) reps = 64;
  if (report(gpuprims_life_step(g, gens), "life_step")) return -1;
  for (i = 0; i < reps; i++) {
    bench_timer_start(t);
    if (report(gpuprims_life_step(g, gens), "life_step")) return -1;
    ms[i] = bench_timer_stop_ms(t);
    if (ms[i] < 0) return -1;
  }
  qsort(ms, (size_t)reps, sizeof ms[0], bench_cmp_double);
  return ms[reps / 2];
}

/* A GPU row: time step(gens) on a soup; check one call of `check_gens` against as many
 * single generations (or, when check_gens is 1, against the host backend). */
static int gpu_row(gpuprims_context *ctx, gpuprims_context *host, bench_timer *t, const char *only, const char *label,
                   uint64_t side, const char *rule, uint64_t gens, int reps, uint64_t check_gens) {
  life_row *r;
  uint8_t *cells;
  gpuprims_life_grid *a, *b;
  size_t n = (size_t)(side * side);
  uint64_t i;
  int fail = 0;
  if (only && !strstr(label, only)) return 0;
  r = add_row(label, (double)n, (double)gens);
  cells = soup(side, side, 1024, side * 31 + gens);
  if (!cells) return 1;
  a = grid(ctx, side, side, rule, cells);
  b = grid(check_gens == 1 ? host : ctx, side, side, rule, cells);
  free(cells);
  if (!a || !b) {
    r->check = 0;
    fail = 1;
  } else {
    double t0 = bench_wall_ms();
    fail |= report(gpuprims_life_step(a, check_gens), "life_step");
    fail |= report(gpuprims_context_synchronize(ctx), "synchronize");
    r->first_ms = bench_wall_ms() - t0;
    for (i = 0; i < (check_gens == 1 ? 1 : check_gens); i++) fail |= report(gpuprims_life_step(b, 1), "life_step");
    r->check = !fail && same_cells(a, b, n);
    gpuprims_life_destroy(b);
    b = NULL;
    r->ms = time_steps(t, a, gens, reps);
  }
  gpuprims_life_destroy(a);
  gpuprims_life_destroy(b);
  row_done(r);
  return r->check != 1;
}

/* The naive byte loop: one generation, B3/S23, torus. */
static void naive_generation(const uint8_t *in, uint8_t *out, size_t w, size_t h) {
  size_t x, y;
  for (y = 0; y < h; y++) {
    const uint8_t *up = in + ((y + h - 1) % h) * w, *mid = in + y * w, *down = in + ((y + 1) % h) * w;
    for (x = 0; x < w; x++) {
      size_t l = (x + w - 1) % w, rr = (x + 1) % w;
      int nb = up[l] + up[x] + up[rr] + mid[l] + mid[rr] + down[l] + down[x] + down[rr];
      out[y * w + x] = (uint8_t)(nb == 3 || (mid[x] && nb == 2));
    }
  }
}

static int host_rows(gpuprims_context *host, const char *only, int reps) {
  const uint64_t side = 4096, naive_gens = 10;
  const size_t n = (size_t)(side * side);
  const char *hl = "life host backend 4096^2 100 gens", *nl = "life naive byte loop (C) 4096^2";
  bench_timer *t;
  uint8_t *cells, *tmp, *got;
  gpuprims_life_grid *g;
  life_row *r, *rn;
  uint64_t i;
  double t0;
  int fail = 0;
  if (only && !strstr(hl, only) && !strstr(nl, only)) return 0;
  t = bench_timer_create(host);
  cells = soup(side, side, side, 4096);
  tmp = (uint8_t *)malloc(n);
  got = (uint8_t *)malloc(n);
  g = cells ? grid(host, side, side, "B3/S23", cells) : NULL;
  if (!t || !tmp || !got || !g) return 1;
  r = add_row(hl, (double)n, 100);
  rn = add_row(nl, (double)n, (double)naive_gens);
  fail |= report(gpuprims_life_step(g, naive_gens), "life_step");
  t0 = bench_wall_ms();
  for (i = 0; i < naive_gens; i++) {
    naive_generation(cells, tmp, side, side);
    memcpy(cells, tmp, n);
  }
  rn->ms = bench_wall_ms() - t0;
  fail |= report(gpuprims_life_read_cells(g, got), "read_cells");
  r->check = rn->check = !fail && memcmp(got, cells, n) == 0;
  r->ms = time_steps(t, g, 100, reps < 3 ? reps : 3);
  rn->not_ours = 1;
  row_done(r);
  row_done(rn);
  if (r->ms > 0 && rn->ms > 0) host_vs_naive = (r->cells * r->gens / r->ms) / (rn->cells * rn->gens / rn->ms);
  gpuprims_life_destroy(g);
  free(cells);
  free(tmp);
  free(got);
  bench_timer_destroy(t);
  return r->check != 1;
}

int life_tour(gpuprims_context *ctx, gpuprims_context *host, bench_timer *timer, const char *only, int reps) {
  gpuprims_backend b = GPUPRIMS_BACKEND_HOST;
  int failed = 0;
  gpuprims_context_backend(ctx, &b);
  if (b == GPUPRIMS_BACKEND_CUDA) {
    const char *naive = "life naive byte kernel 16384^2 x1";
    failed += gpu_row(ctx, host, timer, only, "life torus 16384^2 x1 (1 gen a call)", 16384, "B3/S23", 1, reps, 1);
    failed += gpu_row(ctx, host, timer, only, "life torus 16384^2 1000 gens", 16384, "B3/S23", 1000, 3, 1000);
    failed += gpu_row(ctx, host, timer, only, "life torus 16384^2 HighLife 1000 gens", 16384, "B36/S23", 1000, 3, 1000);
    failed += gpu_row(ctx, host, timer, only, "life torus 65536^2 100 gens", 65536, "B3/S23", 100, 3, 100);
    if (!only || strstr(naive, only)) {
      life_row *r = add_row(naive, 16384.0 * 16384.0, 1);
      r->ms = lifenaive_generation_ms(16384, 16384, reps, bench_timer_stream(timer));
      r->not_ours = 1;
      row_done(r);
    }
  }
  failed += host_rows(host, only, reps);
  return failed;
}

void life_summary(void) {
  int i;
  if (!nrows) return;
  printf("\nGame of Life (B3/S23 unless named; ms: median of a few calls of `gens` generations; first ms: the\n"
         "first call, kernel compile or cache load included; the naive rows are byte-per-cell references, not\n"
         "gpuprims; no CUB row: CUB has no Life)\n");
  print_header();
  for (i = 0; i < nrows; i++) print_row(&rows[i]);
  if (host_vs_naive > 0) printf("host backend / naive byte loop: %.1fx (cells per second)\n", host_vs_naive);
}
