/* gpuprims_bench: the benchmark tour.
 *
 * For each implemented primitive row (reduce SUM i32/f32, reduce MAX f32,
 * inclusive scan SUM i32/f32, exclusive scan SUM i32/f32/u64, radix sort:
 * see "Sort rows" below) and each size:
 * fresh random data (never zeros), uploaded with gpuprims_buffer_from_host to
 * the default context (GPUPRIMS_BACKEND_AUTO: CUDA when there is a GPU, else
 * the host backend; GPUPRIMS_BACKEND=cuda|host overrides); warm-up; the
 * median of --reps timed calls; a check against the host backend on the same
 * data (reduce: the value; scan: every element); and, in builds with CUDA,
 * CUB on the same device data and the same stream, timed the same way.
 *
 * Timing (timer.h): CUDA events on a stream the bench creates and hands to
 * the library with gpuprims_context_set_stream, in CUDA builds on a CUDA
 * context; otherwise CLOCK_MONOTONIC around the call and
 * gpuprims_context_synchronize. Reduce hands its value to host memory, so
 * its time includes that copy and the wait; the "cub ms" column is CUB's
 * reduce into device memory (as in the anchors), and the summary adds CUB
 * with the value delivered to host memory too (cudaMemcpyAsync to pinned
 * memory, or a write into mapped pinned memory, then a stream wait).
 *
 * Float data: by default the f32 SUM rows use random small integers in
 * [-16, 16]: every partial sum is then exact in f32 whatever the order of
 * summation, so ours, the host backend and CUB must agree exactly, and a
 * lost or doubled element cannot hide inside a tolerance. --float-data real
 * uses uniform reals in [-1, 1) and the relative tolerance --ftol (default
 * 1e-5) against the running sum of magnitudes. The MAX row always uses
 * reals in [-1000, 1000) and exact comparison (a maximum does not round).
 *
 * Sort rows, "sort ..." (gpuprims_radix_sort, in place): keys u32, pairs
 * u32/u32 (values = input index), keys f32 descending (random finite bit
 * patterns, no zeros and no NaN: CUB orders -0.0 == +0.0 and NaNs by their
 * bits, gpuprims -0.0 < +0.0 and NaN last), keys u64 at half the size column
 * (2^27 at the 2^28 column: the anchor's size), keys u8, keys u16, keys u32
 * already sorted, keys u32 strictly reversed (distinct values). Each timed
 * call sorts the same unsorted input: before every call the work buffers are
 * restored from a pristine copy with gpuprims_buffer_copy and the context is
 * synchronized, all before the timer starts (events: the start event is
 * recorded on an idle stream, as for CUB), so the copy is never inside the
 * timed region. CUB: DeviceRadixSort::SortKeys / SortPairs /
 * SortKeysDescending out of place from the pristine buffers into buffers of
 * its own, as the anchors called it. Checks of each sort row: the output is
 * in order (the library's total order for floats), holds the input's keys (an
 * exact histogram for u8/u16, two 64-bit hash sums otherwise; pairs: the
 * values are a permutation of the indices, every key equals the input key at
 * its value's index, equal keys keep increasing indices: that is the stable
 * sort exactly); every key and value bitwise against the host backend's
 * gpuprims_radix_sort when n <= --ref-max (default 2^28, so all of the
 * default sizes; larger rows print "OK*"); every key (and value) bitwise
 * against CUB's output (both sorts are stable).
 *
 * Quicksort rows, "quicksort ..." (gpuprims_quicksort, issue 8; ascending, all
 * at the size column): keys u32 random, sorted, reversed (as above), all equal
 * (one random value), 2, 4 and 16 values (that many distinct random values in
 * random order), organ pipe (i < n/2 ? i : n-1-i); pairs u32/u32 (values = input index); keys
 * f32 (as above: no NaN, no zeros); keys u64. Timed as the radix rows. CUB:
 * its comparison sort, DeviceMergeSort::SortKeysCopy / SortPairsCopy with a
 * less-than comparator, out of place from the pristine buffers. Beside it,
 * gpuprims_radix_sort timed on the same data and buffers (the summary's
 * "radix ms"); one more quicksort call then leaves the checked output. The
 * checks are the radix rows' less what an unstable sort may do differently:
 * no stability check, and only the keys compared bitwise against the host
 * backend's gpuprims_radix_sort (keys only) and CUB's merge sort (neither
 * sort is stable, so equal keys' values may differ); pairs are still checked
 * for a permutation of the indices with every key the input's at its index.
 *
 * Exit status: 0 all checks passed, 1 a check or a call failed, 2 usage or
 * setup error.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cub_reference.h"
#include "gpuprims.h"
#include "segmented_select_bench.h"
#include "segmented_topk_bench.h"
#include "multi_bench.h"
#include "select_bench.h"
#include "bench_json.h"
#include "bench_util.h"
#include "life_bench.h"
#include "timer.h"

/* ------------------------------------------------------------------------ */
/* Rows                                                                      */

/* FILL_BITS: every bit random. FILL_SUM_F32 / FILL_WIDE_F32: see above.
 * FILL_SORT_F32: random bit patterns of finite, nonzero floats (no NaN, no
 * infinity, no -0.0/+0.0). The rest are u32: FILL_ASCENDING / FILL_DESCENDING
 * distinct values spread over all 32 bits, strictly ascending / strictly
 * descending; FILL_EQUAL one random value n times; FILL_TWO, FILL_FOUR and
 * FILL_SIXTEEN that many distinct random values in random order; FILL_ORGAN_PIPE
 * i < n/2 ? i : n-1-i. */
enum fill_kind {
  FILL_BITS, FILL_SUM_F32, FILL_WIDE_F32, FILL_SORT_F32, FILL_ASCENDING, FILL_DESCENDING,
  FILL_EQUAL, FILL_TWO, FILL_FOUR, FILL_SIXTEEN, FILL_ORGAN_PIPE
};

/* log2 of the distinct values of a few-values fill (FILL_EQUAL: 0); -1 for the others. */
static int few_values_log2(enum fill_kind f) {
  return f == FILL_EQUAL ? 0 : f == FILL_TWO ? 1 : f == FILL_FOUR ? 2 : f == FILL_SIXTEEN ? 4 : -1;
}

/* Which sort a sort row times. */
enum sort_kind { SORT_NONE, SORT_RADIX, SORT_QUICK };

typedef struct {
  const char *primitive; /* table label */
  int is_scan;
  gpuprims_op op;
  gpuprims_scan_mode mode;
  gpuprims_dtype dtype;  /* sort rows: the keys' */
  enum fill_kind fill;
  enum sort_kind sort;   /* sort rows: gpuprims_radix_sort or gpuprims_quicksort of `dtype` keys */
  gpuprims_dtype values; /* sort rows: 0 keys only, else the values' dtype (u32: the input index) */
  gpuprims_order order;  /* sort rows */
  size_t size_div;       /* n = size / size_div (0: the size itself) */
  const char *variant;   /* after the dtype in the label, "" for none */
} row_spec;

#define ASC GPUPRIMS_ORDER_ASCENDING
#define U32 GPUPRIMS_DTYPE_U32

static const row_spec ROWS[] = {
    {"reduce sum", 0, GPUPRIMS_OP_SUM, 0, GPUPRIMS_DTYPE_I32, FILL_BITS, 0, 0, 0, 0, ""},
    {"reduce sum", 0, GPUPRIMS_OP_SUM, 0, GPUPRIMS_DTYPE_F32, FILL_SUM_F32, 0, 0, 0, 0, ""},
    {"reduce max", 0, GPUPRIMS_OP_MAX, 0, GPUPRIMS_DTYPE_F32, FILL_WIDE_F32, 0, 0, 0, 0, ""},
    {"incl scan sum", 1, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE, GPUPRIMS_DTYPE_I32, FILL_BITS, 0, 0, 0, 0, ""},
    {"excl scan sum", 1, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_EXCLUSIVE, GPUPRIMS_DTYPE_I32, FILL_BITS, 0, 0, 0, 0, ""},
    {"excl scan sum", 1, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_EXCLUSIVE, GPUPRIMS_DTYPE_F32, FILL_SUM_F32, 0, 0, 0, 0, ""},
    {"excl scan sum", 1, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_EXCLUSIVE, GPUPRIMS_DTYPE_U64, FILL_BITS, 0, 0, 0, 0, ""},
    {"incl scan sum", 1, GPUPRIMS_OP_SUM, GPUPRIMS_SCAN_INCLUSIVE, GPUPRIMS_DTYPE_F32, FILL_SUM_F32, 0, 0, 0, 0, ""},
    {"sort keys", 0, 0, 0, U32, FILL_BITS, SORT_RADIX, 0, ASC, 0, ""},
    {"sort pairs", 0, 0, 0, U32, FILL_BITS, SORT_RADIX, U32, ASC, 0, ""},
    {"sort keys", 0, 0, 0, GPUPRIMS_DTYPE_F32, FILL_SORT_F32, SORT_RADIX, 0, GPUPRIMS_ORDER_DESCENDING, 0, "desc"},
    /* Half the size column: 2^27 at 2^28, the anchor's n, 1 GiB of keys. */
    {"sort keys", 0, 0, 0, GPUPRIMS_DTYPE_U64, FILL_BITS, SORT_RADIX, 0, ASC, 2, "(n/2)"},
    {"sort keys", 0, 0, 0, GPUPRIMS_DTYPE_U8, FILL_BITS, SORT_RADIX, 0, ASC, 0, ""},
    {"sort keys", 0, 0, 0, GPUPRIMS_DTYPE_U16, FILL_BITS, SORT_RADIX, 0, ASC, 0, ""},
    /* The 16-bit floats (issue 39): every bit pattern but NaN and -0.0 (CUB orders NaNs
     * by their bits and takes -0.0 for +0.0; the library puts NaNs last and -0.0 before
     * +0.0: without them the two results must match). */
    {"sort keys", 0, 0, 0, GPUPRIMS_DTYPE_F16, FILL_BITS, SORT_RADIX, 0, ASC, 0, ""},
    {"sort keys", 0, 0, 0, GPUPRIMS_DTYPE_BF16, FILL_BITS, SORT_RADIX, 0, ASC, 0, ""},
    {"sort keys", 0, 0, 0, U32, FILL_ASCENDING, SORT_RADIX, 0, ASC, 0, "sorted"},
    {"sort keys", 0, 0, 0, U32, FILL_DESCENDING, SORT_RADIX, 0, ASC, 0, "reversed"},
    /* Quicksort (issue 8) against CUB's merge sort; u64 at the full size. */
    {"quicksort keys", 0, 0, 0, U32, FILL_BITS, SORT_QUICK, 0, ASC, 0, ""},
    {"quicksort keys", 0, 0, 0, U32, FILL_ASCENDING, SORT_QUICK, 0, ASC, 0, "sorted"},
    {"quicksort keys", 0, 0, 0, U32, FILL_DESCENDING, SORT_QUICK, 0, ASC, 0, "reversed"},
    {"quicksort keys", 0, 0, 0, U32, FILL_EQUAL, SORT_QUICK, 0, ASC, 0, "all equal"},
    {"quicksort keys", 0, 0, 0, U32, FILL_TWO, SORT_QUICK, 0, ASC, 0, "2 values"},
    {"quicksort keys", 0, 0, 0, U32, FILL_FOUR, SORT_QUICK, 0, ASC, 0, "4 values"},
    {"quicksort keys", 0, 0, 0, U32, FILL_SIXTEEN, SORT_QUICK, 0, ASC, 0, "16 values"},
    {"quicksort keys", 0, 0, 0, U32, FILL_ORGAN_PIPE, SORT_QUICK, 0, ASC, 0, "organ pipe"},
    {"quicksort pairs", 0, 0, 0, U32, FILL_BITS, SORT_QUICK, U32, ASC, 0, ""},
    {"quicksort keys", 0, 0, 0, GPUPRIMS_DTYPE_F32, FILL_SORT_F32, SORT_QUICK, 0, ASC, 0, ""},
    {"quicksort keys", 0, 0, 0, GPUPRIMS_DTYPE_U64, FILL_BITS, SORT_QUICK, 0, ASC, 0, ""},
};
#undef ASC
#undef U32
#define NROWS (sizeof ROWS / sizeof ROWS[0])

static size_t dtype_size(gpuprims_dtype t) {
  switch (t) {
    case GPUPRIMS_DTYPE_U8:
      return 1;
    case GPUPRIMS_DTYPE_U16:
    case GPUPRIMS_DTYPE_F16:
    case GPUPRIMS_DTYPE_BF16:
      return 2;
    case GPUPRIMS_DTYPE_I32:
    case GPUPRIMS_DTYPE_U32:
    case GPUPRIMS_DTYPE_F32:
      return 4;
    case GPUPRIMS_DTYPE_U64:
      return 8;
    default:
      return 0;
  }
}

static const char *dtype_name(gpuprims_dtype t) {
  switch (t) {
    case GPUPRIMS_DTYPE_U8:
      return "u8";
    case GPUPRIMS_DTYPE_U16:
      return "u16";
    case GPUPRIMS_DTYPE_F16:
      return "f16";
    case GPUPRIMS_DTYPE_BF16:
      return "bf16";
    case GPUPRIMS_DTYPE_I32:
      return "i32";
    case GPUPRIMS_DTYPE_U32:
      return "u32";
    case GPUPRIMS_DTYPE_F32:
      return "f32";
    case GPUPRIMS_DTYPE_U64:
      return "u64";
    default:
      return "?";
  }
}

/* The dtype column: "i32"; sort rows "u32/u32" (keys/values), "f32 desc", ... */
static void row_dtype_label(const row_spec *r, char *buf, size_t len) {
  snprintf(buf, len, "%s%s%s%s%s", dtype_name(r->dtype), r->values ? "/" : "", r->values ? dtype_name(r->values) : "",
           r->variant[0] ? " " : "", r->variant);
}

/* "primitive dtype", as --only matches it: "sort keys u32 sorted". */
static void row_label(const row_spec *r, char *buf, size_t len) {
  char d[48];
  row_dtype_label(r, d, sizeof d);
  snprintf(buf, len, "%s %s", r->primitive, d);
}

/* The row's element count in the column of size `size`. */
static size_t row_n(const row_spec *r, size_t size) {
  size_t n = r->size_div > 1 ? size / r->size_div : size;
  return n ? n : size;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

#define MAX_SIZES 32

typedef struct {
  size_t sizes[MAX_SIZES];
  int nsizes;
  int reps;
  int warmup;
  uint64_t seed;
  int real_floats; /* --float-data real */
  double ftol;     /* relative tolerance for float SUM checks */
  int use_cub;
  const char *only; /* substring filter on "primitive dtype" */
  size_t ref_max;   /* sort rows: host backend reference up to this n */
  int life;         /* Life rows (life_bench.c): 1 run, 0 skip */
  int quick;        /* --quick */
  int default_sizes; /* no --sizes: chosen by backend once the context is open */
  int precompile;   /* --precompile: gpuprims_context_precompile first, timed */
  const char *json; /* --json FILE: every row as JSON (bench_json.h) */
} options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: gpuprims_bench [--quick] [--sizes N,N,...] [--reps N] [--warmup N] [--seed S]\n"
          "                      [--float-data int|real] [--ftol X] [--only TEXT] [--no-cub]\n"
          "                      [--ref-max N] [--precompile] [--json FILE]\n"
          "  --quick        sizes 2^20 and 2^24 (default: 2^20, 2^24, 2^28); on the host backend 2^16\n"
          "                 (default there: 2^16 and 2^20, which the CPU finishes in seconds; ask for more\n"
          "                 with --sizes)\n"
          "  --sizes        element counts; each a number or 2^K (overrides --quick)\n"
          "  --reps N       timed calls per row, median reported (default 15)\n"
          "  --warmup N     untimed calls first, the first one timed apart (default 3, at least 1)\n"
          "  --seed S       random seed (default: from the clock and pid; printed)\n"
          "  --float-data   int: f32 sums on small integers, checked exactly (default);\n"
          "                 real: uniform reals in [-1,1), checked with --ftol\n"
          "  --ftol X       relative tolerance of float sums, against the running sum of |x|\n"
          "                 (default 0 for int data, 1e-5 for real data)\n"
          "  --only TEXT    run only rows whose \"primitive dtype\" contains TEXT as whole words (e.g.\n"
          "                 \"scan\", \"sum f32\", \"sort\" (radix sort), \"sort keys u32\", \"sort pairs u32\",\n"
          "                 \"sort keys f32 desc\", \"sort keys u64\", \"sort keys u32 sorted\", \"sort keys u32 reversed\",\n"
          "                 \"quicksort\", \"quicksort keys u32\" (all its inputs), \"quicksort keys u32 organ pipe\",\n"
          "                 \"keys u32\" (both sorts))\n"
          "  --no-cub       skip the CUB reference even when built with it\n"
          "  Life rows (life_bench.c) run in the full tour (no --sizes) or when --only contains \"life\"\n"
          "  Segmented-select rows (segmented_select_bench.c) have their own sizes; --only \"segsel\" runs them alone\n"
          "  Segmented top-k rows (segmented_topk_bench.c) too; --only \"segtopk\" runs them alone\n"
          "  Multi-GPU rows (multi_bench.c) run when two or more CUDA devices are visible; --only \"multi\" runs them alone\n"
          "  --precompile   call gpuprims_context_precompile before the rows and print its wall time\n"
          "                 (\"precompile ms: X\"); the rows' first calls then compile nothing\n"
          "  --ref-max N    sort rows of more than N elements (number or 2^K; default 2^28) are not sorted\n"
          "                 on the host backend for the check (~8 s a row at 2^28 on 16 cores): they are\n"
          "                 checked for order, content and (radix sort pairs) stability, and bitwise against\n"
          "                 CUB when it runs; their check column says \"OK*\"\n"
          "  --json FILE    also write every row to FILE as JSON (bench/bench_json.h; read by\n"
          "                 scripts/bench-table.py and scripts/bench-plot.py)\n"
          "Output: the tables on stdout, once, at the end; a progress line per row on stderr.\n"
          "Environment: GPUPRIMS_BACKEND=cuda|host overrides the default backend.\n");
}

static int parse_size(const char *s, size_t *out) {
  char *end = NULL;
  errno = 0;
  if (s[0] == '2' && s[1] == '^') {
    unsigned long k = strtoul(s + 2, &end, 10);
    if (errno || end == s + 2 || *end || k >= 8 * sizeof(size_t)) return -1;
    *out = (size_t)1 << k;
    return 0;
  }
  {
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') return -1;
    *out = (size_t)v;
    return 0;
  }
}

static int parse_sizes(const char *arg, options *o) {
  char buf[1024];
  char *tok, *save = NULL;
  if (strlen(arg) >= sizeof buf) return -1;
  strcpy(buf, arg);
  o->nsizes = 0;
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (o->nsizes == MAX_SIZES || parse_size(tok, &o->sizes[o->nsizes]) != 0) return -1;
    o->nsizes++;
  }
  return o->nsizes > 0 ? 0 : -1;
}

static int parse_options(int argc, char **argv, options *o) {
  int i, quick = 0, have_sizes = 0, have_ftol = 0;
  memset(o, 0, sizeof *o);
  o->reps = 15;
  o->warmup = 3;
  o->use_cub = 1;
  o->ref_max = (size_t)1 << 28;
  o->seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() * 0xBF58476D1CE4E5B9ull;
  for (i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--quick")) {
      quick = 1;
    } else if (!strcmp(a, "--precompile")) {
      o->precompile = 1;
    } else if (!strcmp(a, "--no-cub")) {
      o->use_cub = 0;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      exit(0);
    } else if (v && !strcmp(a, "--sizes")) {
      if (parse_sizes(v, o) != 0) {
        fprintf(stderr, "gpuprims_bench: bad --sizes '%s'\n", v);
        return -1;
      }
      have_sizes = 1;
      ++i;
    } else if (v && (!strcmp(a, "--reps") || !strcmp(a, "--warmup"))) {
      char *end = NULL;
      long n = strtol(v, &end, 10);
      if (end == v || *end || n < 1 || n > 100000) {
        fprintf(stderr, "gpuprims_bench: bad %s '%s'\n", a, v);
        return -1;
      }
      if (a[2] == 'r') o->reps = (int)n;
      else o->warmup = (int)n;
      ++i;
    } else if (v && !strcmp(a, "--seed")) {
      char *end = NULL;
      o->seed = strtoull(v, &end, 0);
      if (end == v || *end) {
        fprintf(stderr, "gpuprims_bench: bad --seed '%s'\n", v);
        return -1;
      }
      ++i;
    } else if (v && !strcmp(a, "--float-data")) {
      if (!strcmp(v, "int")) o->real_floats = 0;
      else if (!strcmp(v, "real")) o->real_floats = 1;
      else {
        fprintf(stderr, "gpuprims_bench: bad --float-data '%s' (int or real)\n", v);
        return -1;
      }
      ++i;
    } else if (v && !strcmp(a, "--ftol")) {
      char *end = NULL;
      o->ftol = strtod(v, &end);
      if (end == v || *end || !(o->ftol >= 0.0)) {
        fprintf(stderr, "gpuprims_bench: bad --ftol '%s'\n", v);
        return -1;
      }
      have_ftol = 1;
      ++i;
    } else if (v && !strcmp(a, "--ref-max")) {
      if (parse_size(v, &o->ref_max) != 0) {
        fprintf(stderr, "gpuprims_bench: bad --ref-max '%s'\n", v);
        return -1;
      }
      ++i;
    } else if (v && !strcmp(a, "--json")) {
      o->json = v;
      ++i;
    } else if (v && !strcmp(a, "--only")) {
      o->only = v;
      ++i;
    } else {
      fprintf(stderr, "gpuprims_bench: unknown or incomplete argument '%s'\n", a);
      usage(stderr);
      return -1;
    }
  }
  /* Life rows have their own sizes: in the full tour, or when --only names them. */
  o->life = !have_sizes || (o->only && strstr(o->only, "life"));
  o->quick = quick;
  o->default_sizes = !have_sizes;
  if (!have_ftol) o->ftol = o->real_floats ? 1e-5 : 0.0;
  return 0;
}

/* The sizes when none are given: the GPU's 2^20, 2^24, 2^28 (--quick: the first two);
 * on the host backend 2^16 and 2^20 (--quick: 2^16), since 2^28 keys there take
 * minutes and about 10 GiB. */
static void choose_default_sizes(options *o, gpuprims_backend backend) {
  const int host = backend != GPUPRIMS_BACKEND_CUDA;
  const int first = host ? 16 : 20, step = 4, count = host ? (o->quick ? 1 : 2) : (o->quick ? 2 : 3);
  int k;
  for (k = 0; k < count; ++k) o->sizes[k] = (size_t)1 << (first + k * step);
  o->nsizes = count;
}

/* ------------------------------------------------------------------------ */
/* Data                                                                      */

static uint64_t sort_rank(gpuprims_dtype t, uint64_t bits);

static void fill(void *p, const row_spec *r, size_t n, int real_floats, uint64_t seed) {
  uint64_t s = seed;
  size_t i;
  if (r->fill == FILL_ASCENDING || r->fill == FILL_DESCENDING) {
    /* Element i (ascending) or n-1-i (descending) in [j*step, (j+1)*step):
     * distinct and strictly monotonic, every bit in play. */
    uint32_t *q = (uint32_t *)p;
    uint64_t step = n ? ((uint64_t)1 << 32) / (uint64_t)n : 1;
    for (i = 0; i < n; ++i) {
      uint64_t j = r->fill == FILL_ASCENDING ? (uint64_t)i : (uint64_t)(n - 1 - i);
      q[i] = (uint32_t)(j * step + (step > 1 ? bench_splitmix64(&s) % step : 0));
    }
  } else if (few_values_log2(r->fill) >= 0) {
    const int bits = few_values_log2(r->fill);
    uint32_t *q = (uint32_t *)p, v[16];
    int k = 0, j;
    /* Distinct random values, at least four drawn (so that FILL_EQUAL and FILL_FOUR
     * keep the data they had before FILL_TWO and FILL_SIXTEEN). */
    while (k < (bits > 2 ? 1 << bits : 4)) {
      v[k] = (uint32_t)(bench_splitmix64(&s) >> 32);
      for (j = 0; j < k && v[j] != v[k]; ++j) {}
      if (j == k) ++k;
    }
    for (i = 0; i < n; ++i) q[i] = bits == 0 ? v[0] : v[bench_splitmix64(&s) >> (64 - bits)];
  } else if (r->fill == FILL_ORGAN_PIPE) {
    uint32_t *q = (uint32_t *)p;
    for (i = 0; i < n; ++i) q[i] = (uint32_t)(i < n / 2 ? i : n - 1 - i);
  } else if (r->fill == FILL_SORT_F32) {
    uint32_t *q = (uint32_t *)p;
    for (i = 0; i < n; ++i) {
      uint32_t b;
      do b = (uint32_t)(bench_splitmix64(&s) >> 32);
      while ((b & 0x7f800000u) == 0x7f800000u || (b & 0x7fffffffu) == 0);
      q[i] = b;
    }
  } else if (r->dtype == GPUPRIMS_DTYPE_U8) {
    uint8_t *q = (uint8_t *)p;
    for (i = 0; i < n; ++i) q[i] = (uint8_t)(bench_splitmix64(&s) >> 56);
  } else if (dtype_size(r->dtype) == 2) { /* u16: every pattern; f16, bf16: but NaN and -0.0 */
    uint16_t *q = (uint16_t *)p;
    for (i = 0; i < n; ++i) {
      do q[i] = (uint16_t)(bench_splitmix64(&s) >> 48);
      while (r->dtype != GPUPRIMS_DTYPE_U16 && (sort_rank(r->dtype, q[i]) == UINT64_MAX || q[i] == 0x8000u));
    }
  } else if (r->dtype == GPUPRIMS_DTYPE_U32) {
    uint32_t *q = (uint32_t *)p;
    for (i = 0; i < n; ++i) q[i] = (uint32_t)(bench_splitmix64(&s) >> 32);
  } else if (r->dtype == GPUPRIMS_DTYPE_U64) {
    uint64_t *q = (uint64_t *)p;
    for (i = 0; i < n; ++i) q[i] = bench_splitmix64(&s);
  } else if (r->dtype == GPUPRIMS_DTYPE_I32) {
    uint32_t *q = (uint32_t *)p; /* all 32 bits random: sums wrap */
    for (i = 0; i < n; ++i) q[i] = (uint32_t)(bench_splitmix64(&s) >> 32);
  } else if (r->fill == FILL_WIDE_F32) {
    float *q = (float *)p;
    for (i = 0; i < n; ++i) q[i] = (float)((double)(bench_splitmix64(&s) >> 11) * 0x1p-53 * 2000.0 - 1000.0);
  } else if (real_floats) {
    float *q = (float *)p;
    for (i = 0; i < n; ++i) q[i] = (float)((bench_splitmix64(&s) >> 40) * 0x1p-24 * 2.0 - 1.0);
  } else {
    float *q = (float *)p;
    for (i = 0; i < n; ++i) q[i] = (float)((int)((bench_splitmix64(&s) >> 32) % 33u) - 16);
  }
}

/* ------------------------------------------------------------------------ */
/* Results                                                                   */

typedef struct {
  const row_spec *spec;
  size_t n;
  double ms;        /* median, < 0 when not measured */
  double min_ms;
  double first_ms;  /* wall time of the first call (compiles kernels) */
  int check;        /* 1 OK, 0 FAIL */
  double host_ms;   /* reduce: gpuprims_reduce, value handed to host memory; < 0: none */
  double cub_ms;    /* < 0: none */
  double cub_rb_ms; /* reduce: CUB + cudaMemcpyAsync to pinned host memory + sync; < 0: none */
  double cub_map_ms; /* reduce: CUB writing to mapped pinned host memory + sync; < 0: none */
  int cub_agrees;   /* 1 yes, 0 no, -1 not compared */
  int ref_skipped;  /* sort rows above --ref-max: no host backend reference ("OK*") */
  int first_of_row; /* the row's first size: its first call is the row's first-call figure */
  double radix_ms;  /* quicksort rows: gpuprims_radix_sort on the same data; < 0: none */
} result;

static int failures = 0;

static void report_status(const char *what, gpuprims_status s) {
  char msg[512] = "";
  gpuprims_last_error(msg, sizeof msg);
  printf("  ! %s: %s%s%s\n", what, gpuprims_status_name(s), msg[0] ? ": " : "", msg);
}

/* Format one element of dtype t for messages. */
static void fmt_elem(char *buf, size_t len, gpuprims_dtype t, const void *p) {
  if (t == GPUPRIMS_DTYPE_U8) {
    snprintf(buf, len, "%u", (unsigned)*(const uint8_t *)p);
  } else if (dtype_size(t) == 2) { /* u16; f16 and bf16 as their bits */
    uint16_t v;
    memcpy(&v, p, 2);
    snprintf(buf, len, t == GPUPRIMS_DTYPE_U16 ? "%u" : "0x%04x", (unsigned)v);
  } else if (t == GPUPRIMS_DTYPE_U32) {
    uint32_t v;
    memcpy(&v, p, 4);
    snprintf(buf, len, "%" PRIu32, v);
  } else if (t == GPUPRIMS_DTYPE_I32) {
    int32_t v;
    memcpy(&v, p, 4);
    snprintf(buf, len, "%" PRId32, v);
  } else if (t == GPUPRIMS_DTYPE_U64) {
    uint64_t v;
    memcpy(&v, p, 8);
    snprintf(buf, len, "%" PRIu64, v);
  } else {
    float v;
    memcpy(&v, p, 4);
    snprintf(buf, len, "%.9g", (double)v);
  }
}

/* Element comparison: exact for integers; floats within tol (absolute), a
 * NaN never matches. */
static int elem_equal(gpuprims_dtype t, const void *a, const void *b, double tol) {
  if (t == GPUPRIMS_DTYPE_F32) {
    float x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return fabs((double)x - (double)y) <= tol;
  }
  return memcmp(a, b, dtype_size(t)) == 0;
}

/* A comparison in progress: counts and the first mismatch. */
typedef struct {
  const char *name;
  size_t bad;
  size_t first;
  char first_a[48], first_b[48];
} mismatch;

static void mismatch_note(mismatch *m, gpuprims_dtype t, size_t i, const void *a, const void *b) {
  if (m->bad++ == 0) {
    m->first = i;
    fmt_elem(m->first_a, sizeof m->first_a, t, a);
    fmt_elem(m->first_b, sizeof m->first_b, t, b);
  }
}

static void mismatch_print(const mismatch *m, size_t n) {
  if (m->bad)
    printf("  ! %s: %zu of %zu elements differ; first at [%zu]: %s vs %s\n", m->name, m->bad, n, m->first,
           m->first_a, m->first_b);
}

/* ------------------------------------------------------------------------ */
/* One row at one size                                                       */

typedef struct {
  gpuprims_context *ctx; /* measured */
  gpuprims_context *ref; /* host reference */
  bench_timer *timer;
  void *cub_stream; /* NULL: no CUB comparison */
  const options *opt;
  int first_call_done;
  int on_cuda; /* the measured context is CUDA: first calls compile kernels */
} bench;

#define CHUNK ((size_t)1 << 22)

/* After call i of a timed loop (status s; t0: the wall clock before it, when it is the
 * first call): stores a timed call's time, or the first call's wall time (kernel
 * compiles included). Returns 0, or -1 after reporting a failure. */
static int end_call(bench *b, result *res, double *ms, int i, gpuprims_status s, const char *what, double t0) {
  const options *o = b->opt;
  const int first = i == 0, timed = i >= o->warmup;
  double t;
  if (s != GPUPRIMS_STATUS_OK) {
    report_status(what, s);
    if (timed) (void)bench_timer_stop_ms(b->timer);
    return -1;
  }
  if (timed) {
    t = bench_timer_stop_ms(b->timer);
    if (t < 0) {
      printf("  ! timer failed (%s)\n", cubref_last_error());
      return -1;
    }
    ms[i - o->warmup] = t;
  } else if (first) {
    s = gpuprims_context_synchronize(b->ctx);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("gpuprims_context_synchronize", s);
      return -1;
    }
    res->first_ms = bench_wall_ms() - t0;
    if (!b->first_call_done) {
      b->first_call_done = 1;
      if (b->on_cuda) printf("first-call compile+run ms: %.3f\n", res->first_ms);
      else printf("first-call ms: %.3f (host backend: nothing to compile)\n", res->first_ms);
      fflush(stdout);
    }
  }
  return 0;
}

/* Times `warmup` + `reps` calls of the row's primitive on ctx. Returns 0, or
 * -1 after reporting a failed call. For reduce, `value` receives the result
 * of one extra, checked call. */
static int time_ours(bench *b, const row_spec *r, gpuprims_buffer *in, gpuprims_buffer *out, void *value,
                     result *res) {
  const options *o = b->opt;
  double *ms = (double *)malloc(sizeof(double) * (size_t)o->reps);
  unsigned char scratch[8];
  gpuprims_status s;
  int i;
  if (!ms) return -1;
  for (i = 0; i < o->warmup + o->reps; ++i) {
    double t0 = 0.0;
    int first = i == 0, timed = i >= o->warmup;
    if (first) t0 = bench_wall_ms();
    if (timed) bench_timer_start(b->timer);
    s = r->is_scan ? gpuprims_scan(b->ctx, in, out, r->op, r->mode) : gpuprims_reduce_to_buffer(b->ctx, in, r->op, out);
    if (end_call(b, res, ms, i, s, r->is_scan ? "gpuprims_scan" : "gpuprims_reduce_to_buffer", t0) != 0) {
      free(ms);
      return -1;
    }
  }
  qsort(ms, (size_t)o->reps, sizeof(double), bench_cmp_double);
  res->ms = ms[o->reps / 2];
  res->min_ms = ms[0];

  /* The checked call: on a poisoned output, so that what is checked was
   * written by this one call. */
  if (r->is_scan) {
    s = gpuprims_buffer_copy(out, in);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("gpuprims_buffer_copy (poisoning the output)", s);
      free(ms);
      return -1;
    }
    s = gpuprims_scan(b->ctx, in, out, r->op, r->mode);
    if (s == GPUPRIMS_STATUS_OK) s = gpuprims_context_synchronize(b->ctx);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("gpuprims_scan (checked call)", s);
      free(ms);
      return -1;
    }
  } else {
    unsigned char on_device[8];
    /* gpuprims_reduce, value to host memory: timed on the same timer. */
    for (i = 0; i < o->warmup + o->reps; ++i) {
      if (i >= o->warmup) bench_timer_start(b->timer);
      s = gpuprims_reduce(b->ctx, in, r->op, scratch);
      if (s != GPUPRIMS_STATUS_OK) {
        report_status("gpuprims_reduce", s);
        if (i >= o->warmup) (void)bench_timer_stop_ms(b->timer);
        free(ms);
        return -1;
      }
      if (i >= o->warmup) ms[i - o->warmup] = bench_timer_stop_ms(b->timer);
    }
    qsort(ms, (size_t)o->reps, sizeof(double), bench_cmp_double);
    res->host_ms = ms[o->reps / 2];
    memset(value, 0xA5, 8);
    memset(on_device, 0x5A, 8);
    s = gpuprims_reduce(b->ctx, in, r->op, value);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("gpuprims_reduce (checked call)", s);
      free(ms);
      return -1;
    }
    s = gpuprims_reduce_to_buffer(b->ctx, in, r->op, out);
    if (s == GPUPRIMS_STATUS_OK) s = gpuprims_buffer_read(out, 0, on_device, 1);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("gpuprims_reduce_to_buffer (checked call)", s);
      free(ms);
      return -1;
    }
    if (memcmp(value, on_device, dtype_size(r->dtype)) != 0) {
      printf("  ! gpuprims_reduce and gpuprims_reduce_to_buffer disagree\n");
      free(ms);
      return -1;
    }
  }
  free(ms);
  return 0;
}

static void run_row(bench *b, const row_spec *r, size_t n, uint64_t seed, result *res) {
  const options *o = b->opt;
  const size_t es = dtype_size(r->dtype);
  const int is_float_sum = r->dtype == GPUPRIMS_DTYPE_F32 && r->op == GPUPRIMS_OP_SUM;
  const double ftol = is_float_sum ? o->ftol : 0.0;
  void *h_in = NULL, *c_ours = NULL, *c_ref = NULL, *c_cub = NULL, *d_cub_out = NULL;
  gpuprims_buffer *in = NULL, *out = NULL, *hin = NULL, *hout = NULL;
  unsigned char v_ours[8], v_ref[8], v_cub[8];
  gpuprims_status s;
  char what[160];

  memset(res, 0, sizeof *res);
  res->spec = r;
  res->n = n;
  res->ms = res->host_ms = res->cub_ms = res->cub_rb_ms = res->cub_map_ms = -1.0;
  res->cub_agrees = -1;
  res->check = 0;
  snprintf(what, sizeof what, "%s %s n=%zu", r->primitive, dtype_name(r->dtype), n);

  h_in = malloc(n * es + 1);
  if (!h_in) {
    printf("  ! %s: out of host memory (%zu bytes)\n", what, n * es);
    goto done;
  }
  fill(h_in, r, n, o->real_floats, seed);

  /* Ours: the input, and for scans an output that starts as a copy of the
   * input (not zeros, not the answer). */
  s = gpuprims_buffer_from_host(b->ctx, r->dtype, h_in, n, &in);
  if (s == GPUPRIMS_STATUS_OK && r->is_scan) s = gpuprims_buffer_from_host(b->ctx, r->dtype, h_in, n, &out);
  /* Reduce is timed into a one-element device buffer (gpuprims_reduce_to_buffer),
   * as CUB's DeviceReduce is; gpuprims_reduce (value to host) is timed apart. */
  if (s == GPUPRIMS_STATUS_OK && !r->is_scan) s = gpuprims_buffer_create(b->ctx, r->dtype, 1, &out);
  if (s == GPUPRIMS_STATUS_OK) s = gpuprims_context_synchronize(b->ctx);
  if (s != GPUPRIMS_STATUS_OK) {
    report_status("gpuprims_buffer_from_host", s);
    goto done;
  }
  if (time_ours(b, r, in, out, v_ours, res) != 0) goto done;

  /* CUB on the same device data, on the same stream. */
  if (b->cub_stream) {
    void *d_in = NULL;
    s = gpuprims_buffer_device_ptr(in, &d_in);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("gpuprims_buffer_device_ptr", s);
    } else if (!r->is_scan) {
      res->cub_ms = cubref_reduce_ms(r->dtype, r->op, d_in, n, o->warmup, o->reps, b->cub_stream, v_cub);
      if (res->cub_ms >= 0) {
        res->cub_rb_ms =
            cubref_reduce_to_host_ms(r->dtype, r->op, 0, d_in, n, o->warmup, o->reps, b->cub_stream, NULL);
        if (res->cub_rb_ms < 0) printf("  ! %s: CUB reduce + copy to host: %s\n", what, cubref_last_error());
        res->cub_map_ms =
            cubref_reduce_to_host_ms(r->dtype, r->op, 1, d_in, n, o->warmup, o->reps, b->cub_stream, NULL);
        if (res->cub_map_ms < 0) printf("  ! %s: CUB reduce into mapped memory: %s\n", what, cubref_last_error());
      }
    } else {
      d_cub_out = cubref_malloc(n * es);
      if (d_cub_out)
        res->cub_ms = cubref_scan_ms(r->dtype, r->op, r->mode, d_in, d_cub_out, n, o->warmup, o->reps, b->cub_stream);
    }
    if (res->cub_ms < 0) {
      printf("  ! %s: CUB reference failed: %s\n", what, cubref_last_error());
      failures++;
      res->cub_ms = -1.0;
    }
  }

  /* The host reference on the same data. */
  s = gpuprims_buffer_from_host(b->ref, r->dtype, h_in, n, &hin);
  if (s != GPUPRIMS_STATUS_OK) {
    report_status("reference gpuprims_buffer_from_host", s);
    goto done;
  }
  if (r->is_scan) {
    s = gpuprims_buffer_create(b->ref, r->dtype, n, &hout);
    if (s == GPUPRIMS_STATUS_OK) s = gpuprims_scan(b->ref, hin, hout, r->op, r->mode);
  } else {
    s = gpuprims_reduce(b->ref, hin, r->op, v_ref);
  }
  if (s != GPUPRIMS_STATUS_OK) {
    report_status("reference (host backend) call", s);
    goto done;
  }
  gpuprims_buffer_destroy(hin);
  hin = NULL;

  if (!r->is_scan) {
    /* Tolerance for float sums: ftol times the sum of magnitudes. */
    double tol = 0.0, exact = 0.0;
    size_t i;
    char a[48], c[48];
    if (r->dtype == GPUPRIMS_DTYPE_F32) {
      const float *x = (const float *)h_in;
      double mag = 0.0;
      for (i = 0; i < n; ++i) {
        mag += fabs((double)x[i]);
        exact += (double)x[i];
      }
      tol = ftol * mag;
    }
    res->check = elem_equal(r->dtype, v_ours, v_ref, tol);
    if (!res->check) {
      fmt_elem(a, sizeof a, r->dtype, v_ours);
      fmt_elem(c, sizeof c, r->dtype, v_ref);
      printf("  ! %s: ours %s, host backend %s", what, a, c);
      if (is_float_sum) printf(" (sum in f64: %.9g, tolerance %.3g)", exact, tol);
      printf("\n");
    }
    if (res->cub_ms >= 0) {
      res->cub_agrees = elem_equal(r->dtype, v_ours, v_cub, tol);
      if (!res->cub_agrees) {
        fmt_elem(a, sizeof a, r->dtype, v_ours);
        fmt_elem(c, sizeof c, r->dtype, v_cub);
        printf("  ! %s: ours %s, CUB %s\n", what, a, c);
      }
    }
  } else {
    /* Every element, chunk by chunk: ours vs the host backend (and vs CUB).
     * Float tolerance: ftol times the running sum of |x| up to the element. */
    mismatch m_ref = {"ours vs host backend", 0, 0, "", ""};
    mismatch m_cub = {"ours vs CUB", 0, 0, "", ""};
    double run_mag = 0.0;
    size_t off, i;
    int use_cub = res->cub_ms >= 0 && d_cub_out;
    c_ours = malloc(CHUNK * es);
    c_ref = malloc(CHUNK * es);
    c_cub = use_cub ? malloc(CHUNK * es) : NULL;
    if (!c_ours || !c_ref || (use_cub && !c_cub)) {
      printf("  ! %s: out of host memory for the check\n", what);
      goto done;
    }
    for (off = 0; off < n; off += CHUNK) {
      size_t cnt = n - off < CHUNK ? n - off : CHUNK;
      s = gpuprims_buffer_read(out, off, c_ours, cnt);
      if (s != GPUPRIMS_STATUS_OK) {
        report_status("gpuprims_buffer_read", s);
        goto done;
      }
      s = gpuprims_buffer_read(hout, off, c_ref, cnt);
      if (s != GPUPRIMS_STATUS_OK) {
        report_status("reference gpuprims_buffer_read", s);
        goto done;
      }
      if (use_cub && cubref_copy_to_host(c_cub, (const char *)d_cub_out + off * es, cnt * es) != 0) {
        printf("  ! %s: reading CUB's output: %s\n", what, cubref_last_error());
        use_cub = 0;
        res->cub_agrees = 0;
      }
      for (i = 0; i < cnt; ++i) {
        const unsigned char *po = (const unsigned char *)c_ours + i * es;
        const unsigned char *pr = (const unsigned char *)c_ref + i * es;
        double tol = 0.0;
        if (is_float_sum) {
          /* inclusive: |x| up to and with i; exclusive: up to i - 1 */
          double xi = fabs((double)((const float *)h_in)[off + i]);
          if (r->mode == GPUPRIMS_SCAN_INCLUSIVE) run_mag += xi;
          tol = ftol * run_mag;
          if (r->mode == GPUPRIMS_SCAN_EXCLUSIVE) run_mag += xi;
        }
        if (!elem_equal(r->dtype, po, pr, tol)) mismatch_note(&m_ref, r->dtype, off + i, po, pr);
        if (use_cub) {
          const unsigned char *pc = (const unsigned char *)c_cub + i * es;
          if (!elem_equal(r->dtype, po, pc, tol)) mismatch_note(&m_cub, r->dtype, off + i, po, pc);
        }
      }
    }
    res->check = m_ref.bad == 0;
    mismatch_print(&m_ref, n);
    if (res->cub_ms >= 0 && res->cub_agrees != 0) {
      res->cub_agrees = m_cub.bad == 0;
      mismatch_print(&m_cub, n);
    }
  }

done:
  if (!res->check) failures++;
  if (res->cub_agrees == 0) failures++;
  free(c_ours);
  free(c_ref);
  free(c_cub);
  cubref_free(d_cub_out);
  gpuprims_buffer_destroy(hin);
  gpuprims_buffer_destroy(hout);
  gpuprims_buffer_destroy(in);
  gpuprims_buffer_destroy(out);
  free(h_in);
}

/* ------------------------------------------------------------------------ */
/* Sort rows                                                                 */

/* The bits of element i of an array of es-byte elements. */
static uint64_t load_bits(const void *p, size_t es, size_t i) {
  const unsigned char *q = (const unsigned char *)p + i * es;
  switch (es) {
    case 1:
      return q[0];
    case 2: {
      uint16_t v;
      memcpy(&v, q, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, q, 4);
      return v;
    }
    default: {
      uint64_t v;
      memcpy(&v, q, 8);
      return v;
    }
  }
}

/* A key's place in the library's ascending order, as an unsigned number:
 * integers as they are; floats (f32, f16, bf16) in -inf < ... < -0.0 < +0.0 <
 * ... < +inf < NaN, every NaN one value above +inf. */
static uint64_t sort_rank(gpuprims_dtype t, uint64_t bits) {
  if (t == GPUPRIMS_DTYPE_F32) {
    uint32_t b = (uint32_t)bits;
    if ((b & 0x7fffffffu) > 0x7f800000u) return UINT64_MAX;
    return (b & 0x80000000u) ? (uint64_t)(uint32_t)~b : (uint64_t)(b | 0x80000000u);
  }
  if (t == GPUPRIMS_DTYPE_F16 || t == GPUPRIMS_DTYPE_BF16) {
    uint16_t b = (uint16_t)bits, inf = t == GPUPRIMS_DTYPE_F16 ? 0x7c00u : 0x7f80u;
    if ((b & 0x7fffu) > inf) return UINT64_MAX;
    return (b & 0x8000u) ? (uint64_t)(uint16_t)~b : (uint64_t)(b | 0x8000u);
  }
  return bits;
}

static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The multiset of keys: an exact histogram for keys of 1 or 2 bytes, else two
 * sums of 64-bit hashes (order-free; a lost, doubled or changed key shows). */
typedef struct {
  uint64_t *hist; /* 65536 counts, or NULL */
  uint64_t h1, h2;
} keyset;

static int keyset_init(keyset *k, size_t es) {
  memset(k, 0, sizeof *k);
  if (es <= 2) {
    k->hist = (uint64_t *)calloc(65536, sizeof(uint64_t));
    if (!k->hist) return -1;
  }
  return 0;
}

static void keyset_add(keyset *k, uint64_t bits) {
  if (k->hist) {
    k->hist[bits & 0xffff]++;
  } else {
    k->h1 += mix64(bits + 0x9E3779B97F4A7C15ull);
    k->h2 += mix64(bits ^ 0x6A09E667F3BCC908ull) | 1;
  }
}

static int keyset_equal(const keyset *a, const keyset *b) {
  if (a->hist) return memcmp(a->hist, b->hist, 65536 * sizeof(uint64_t)) == 0;
  return a->h1 == b->h1 && a->h2 == b->h2;
}

/* Restores the unsorted input into the work buffers and waits for it: the
 * copy is done, and the stream idle, before the timer starts. */
static int sort_restore(bench *b, gpuprims_buffer *keys, const gpuprims_buffer *keys0, gpuprims_buffer *vals,
                        const gpuprims_buffer *vals0) {
  gpuprims_status s = gpuprims_buffer_copy(keys, keys0);
  if (s == GPUPRIMS_STATUS_OK && vals) s = gpuprims_buffer_copy(vals, vals0);
  if (s == GPUPRIMS_STATUS_OK) s = gpuprims_context_synchronize(b->ctx);
  if (s != GPUPRIMS_STATUS_OK) {
    report_status("restoring the unsorted input (gpuprims_buffer_copy, synchronize)", s);
    return -1;
  }
  return 0;
}

static gpuprims_status sort_call(enum sort_kind sort, gpuprims_context *ctx, gpuprims_buffer *keys,
                                 gpuprims_buffer *vals, gpuprims_order order) {
  return sort == SORT_QUICK ? gpuprims_quicksort(ctx, keys, vals, order) : gpuprims_radix_sort(ctx, keys, vals, order);
}

static const char *sort_call_name(enum sort_kind sort) {
  return sort == SORT_QUICK ? "gpuprims_quicksort" : "gpuprims_radix_sort";
}

/* Times `warmup` + `reps` in-place sorts (`sort`: the row's own, or radix sort
 * beside a quicksort row), each of the same unsorted input (restored from
 * keys0/vals0 before the call, outside the timed region). Afterwards keys/vals
 * hold what the last call wrote. 0, or -1 after reporting a failed call. */
static int time_sort_ours(bench *b, enum sort_kind sort, const row_spec *r, gpuprims_buffer *keys,
                          const gpuprims_buffer *keys0, gpuprims_buffer *vals, const gpuprims_buffer *vals0,
                          result *res) {
  const options *o = b->opt;
  double *ms = (double *)malloc(sizeof(double) * (size_t)o->reps);
  gpuprims_status s;
  int i;
  if (!ms) return -1;
  for (i = 0; i < o->warmup + o->reps; ++i) {
    double t0 = 0.0;
    int first = i == 0, timed = i >= o->warmup;
    if (sort_restore(b, keys, keys0, vals, vals0) != 0) {
      free(ms);
      return -1;
    }
    if (first) t0 = bench_wall_ms();
    if (timed) bench_timer_start(b->timer);
    s = sort_call(sort, b->ctx, keys, vals, r->order);
    if (end_call(b, res, ms, i, s, sort_call_name(sort), t0) != 0) {
      free(ms);
      return -1;
    }
  }
  s = gpuprims_context_synchronize(b->ctx);
  if (s != GPUPRIMS_STATUS_OK) {
    report_status("gpuprims_context_synchronize", s);
    free(ms);
    return -1;
  }
  qsort(ms, (size_t)o->reps, sizeof(double), bench_cmp_double);
  res->ms = ms[o->reps / 2];
  res->min_ms = ms[0];
  free(ms);
  return 0;
}

/* One sorted result being read back chunk by chunk. */
typedef struct {
  const char *name;
  gpuprims_buffer *keys, *vals;  /* a gpuprims buffer, or */
  const void *d_keys, *d_vals;   /* CUB's device memory */
  unsigned char *ck, *cv;        /* the current chunk */
} sort_source;

static int source_read(const sort_source *src, size_t off, size_t cnt, size_t ks, size_t vs) {
  gpuprims_status s;
  if (src->keys) {
    s = gpuprims_buffer_read(src->keys, off, src->ck, cnt);
    if (s == GPUPRIMS_STATUS_OK && vs) s = gpuprims_buffer_read(src->vals, off, src->cv, cnt);
    if (s != GPUPRIMS_STATUS_OK) {
      char what[96];
      snprintf(what, sizeof what, "reading %s (gpuprims_buffer_read)", src->name);
      report_status(what, s);
      return -1;
    }
    return 0;
  }
  if (cubref_copy_to_host(src->ck, (const char *)src->d_keys + off * ks, cnt * ks) != 0 ||
      (vs && cubref_copy_to_host(src->cv, (const char *)src->d_vals + off * vs, cnt * vs) != 0)) {
    printf("  ! reading %s: %s\n", src->name, cubref_last_error());
    return -1;
  }
  return 0;
}

/* Checks a sorted result `p` (ours, or CUB's when ours failed) on its own:
 * in order, the input's keys, and for pairs (values = input index) a
 * permutation with every key at its index's input key, and for the stable
 * radix sort equal keys in increasing index order. Compares it with `ref`
 * (the host backend) and `cub` when given, every key bitwise, and every value
 * too for radix sort (unstable sorts may order equal keys' values apart).
 * Returns 1 when `p` passed everything asked of it; *cub_agrees gets 1/0 for
 * p vs cub. */
static int check_sort(const row_spec *r, size_t n, const void *h_keys, sort_source *p, sort_source *ref,
                      sort_source *cub, int *cub_agrees, const char *what) {
  const size_t ks = dtype_size(r->dtype), vs = r->values ? dtype_size(r->values) : 0;
  const int desc = r->order == GPUPRIMS_ORDER_DESCENDING, stable = r->sort == SORT_RADIX;
  char m_ref_k_name[64], m_ref_v_name[64], m_cub_k_name[64], m_cub_v_name[64];
  mismatch m_ref_k = {m_ref_k_name, 0, 0, "", ""}, m_ref_v = {m_ref_v_name, 0, 0, "", ""};
  mismatch m_cub_k = {m_cub_k_name, 0, 0, "", ""}, m_cub_v = {m_cub_v_name, 0, 0, "", ""};
  size_t order_bad = 0, order_first = 0, pair_bad = 0, pair_first = 0, perm_bad = 0, perm_first = 0;
  size_t stab_bad = 0, stab_first = 0, off, i;
  uint64_t prev_rank = 0, prev_val = 0;
  keyset in_set, out_set;
  unsigned char *seen = NULL;
  sort_source *srcs[3];
  int nsrc = 0, k, ok = 0, content_ok = 1;

  snprintf(m_ref_k_name, sizeof m_ref_k_name, "%s vs host backend: keys", p->name);
  snprintf(m_ref_v_name, sizeof m_ref_v_name, "%s vs host backend: values", p->name);
  snprintf(m_cub_k_name, sizeof m_cub_k_name, "%s vs CUB: keys", p->name);
  snprintf(m_cub_v_name, sizeof m_cub_v_name, "%s vs CUB: values", p->name);
  srcs[nsrc++] = p;
  if (ref) srcs[nsrc++] = ref;
  if (cub) srcs[nsrc++] = cub;
  memset(&in_set, 0, sizeof in_set);
  memset(&out_set, 0, sizeof out_set);
  if (!vs && (keyset_init(&in_set, ks) != 0 || keyset_init(&out_set, ks) != 0)) goto oom;
  if (vs && !(seen = (unsigned char *)calloc(n / 8 + 1, 1))) goto oom;
  for (k = 0; k < nsrc; ++k) {
    /* Values: p's always (pairs); the others' only to compare them (stable). */
    const size_t src_vs = k == 0 || stable ? vs : 0;
    sort_source *src = srcs[k];
    src->ck = (unsigned char *)malloc(CHUNK * ks);
    src->cv = src_vs ? (unsigned char *)malloc(CHUNK * src_vs) : NULL;
    if (!src->ck || (src_vs && !src->cv)) goto oom;
  }
  if (!vs)
    for (i = 0; i < n; ++i) keyset_add(&in_set, load_bits(h_keys, ks, i));

  for (off = 0; off < n; off += CHUNK) {
    size_t cnt = n - off < CHUNK ? n - off : CHUNK;
    for (k = 0; k < nsrc; ++k)
      if (source_read(srcs[k], off, cnt, ks, srcs[k]->cv ? vs : 0) != 0) goto done;
    for (i = 0; i < cnt; ++i) {
      const size_t at = off + i;
      const uint64_t key = load_bits(p->ck, ks, i);
      const uint64_t rank = sort_rank(r->dtype, key);
      if (at > 0 && (desc ? rank > prev_rank : rank < prev_rank) && order_bad++ == 0) order_first = at;
      if (vs) {
        const uint64_t v = load_bits(p->cv, vs, i);
        if (v >= n || ((seen[v / 8] >> (v % 8)) & 1u)) {
          if (perm_bad++ == 0) perm_first = at;
        } else {
          seen[v / 8] |= (unsigned char)(1u << (v % 8));
          if (load_bits(h_keys, ks, (size_t)v) != key && pair_bad++ == 0) pair_first = at;
        }
        if (stable && at > 0 && rank == prev_rank && v <= prev_val && stab_bad++ == 0) stab_first = at;
        prev_val = v;
      } else {
        keyset_add(&out_set, key);
      }
      prev_rank = rank;
      if (ref) {
        if (memcmp(p->ck + i * ks, ref->ck + i * ks, ks) != 0)
          mismatch_note(&m_ref_k, r->dtype, at, p->ck + i * ks, ref->ck + i * ks);
        if (ref->cv && memcmp(p->cv + i * vs, ref->cv + i * vs, vs) != 0)
          mismatch_note(&m_ref_v, r->values, at, p->cv + i * vs, ref->cv + i * vs);
      }
      if (cub) {
        if (memcmp(p->ck + i * ks, cub->ck + i * ks, ks) != 0)
          mismatch_note(&m_cub_k, r->dtype, at, p->ck + i * ks, cub->ck + i * ks);
        if (cub->cv && memcmp(p->cv + i * vs, cub->cv + i * vs, vs) != 0)
          mismatch_note(&m_cub_v, r->values, at, p->cv + i * vs, cub->cv + i * vs);
      }
    }
  }

  if (order_bad)
    printf("  ! %s: %s: %zu keys out of %s order; first at [%zu]\n", what, p->name, order_bad,
           desc ? "descending" : "ascending", order_first);
  if (vs) {
    if (perm_bad)
      printf("  ! %s: %s: %zu values are no index or a repeated one; first at [%zu]\n", what, p->name, perm_bad,
             perm_first);
    if (pair_bad)
      printf("  ! %s: %s: %zu keys differ from the input key at their value's index; first at [%zu]\n", what,
             p->name, pair_bad, pair_first);
    if (stab_bad)
      printf("  ! %s: %s: %zu equal keys out of input order (not stable); first at [%zu]\n", what, p->name,
             stab_bad, stab_first);
  } else {
    content_ok = keyset_equal(&in_set, &out_set);
    if (!content_ok)
      printf("  ! %s: %s: the keys are not the input's keys (%s differs)\n", what, p->name,
             in_set.hist ? "histogram" : "hash sum");
  }
  mismatch_print(&m_ref_k, n);
  mismatch_print(&m_ref_v, n);
  mismatch_print(&m_cub_k, n);
  mismatch_print(&m_cub_v, n);
  ok = !order_bad && !perm_bad && !pair_bad && !stab_bad && content_ok && !m_ref_k.bad && !m_ref_v.bad;
  if (cub) *cub_agrees = !m_cub_k.bad && !m_cub_v.bad;
  goto done;
oom:
  printf("  ! %s: out of host memory for the check\n", what);
done:
  for (k = 0; k < nsrc; ++k) {
    sort_source *src = srcs[k];
    free(src->ck);
    free(src->cv);
    src->ck = src->cv = NULL;
  }
  free(seen);
  free(in_set.hist);
  free(out_set.hist);
  return ok;
}

static void run_sort_row(bench *b, const row_spec *r, size_t n, uint64_t seed, result *res) {
  const options *o = b->opt;
  const size_t ks = dtype_size(r->dtype), vs = r->values ? dtype_size(r->values) : 0;
  void *h_keys = NULL, *h_vals = NULL, *d_cub_keys = NULL, *d_cub_vals = NULL;
  gpuprims_buffer *keys = NULL, *keys0 = NULL, *vals = NULL, *vals0 = NULL, *hkeys = NULL, *hvals = NULL;
  sort_source ours = {"ours", NULL, NULL, NULL, NULL, NULL, NULL};
  sort_source ref = {"host backend", NULL, NULL, NULL, NULL, NULL, NULL};
  sort_source cub = {"CUB", NULL, NULL, NULL, NULL, NULL, NULL};
  int ours_ok = 0, have_ref = 0, have_cub = 0, agrees = -1;
  gpuprims_status s;
  char what[160], label[64];
  size_t i;

  memset(res, 0, sizeof *res);
  res->spec = r;
  res->n = n;
  res->ms = res->host_ms = res->cub_ms = res->cub_rb_ms = res->cub_map_ms = res->radix_ms = -1.0;
  res->cub_agrees = -1;
  res->check = 0;
  res->ref_skipped = n > o->ref_max;
  row_label(r, label, sizeof label);
  snprintf(what, sizeof what, "%s n=%zu", label, n);

  if (vs && (r->values != GPUPRIMS_DTYPE_U32 || n > (size_t)UINT32_MAX)) {
    printf("  ! %s: pairs rows take u32 values (the input index) and n < 2^32\n", what);
    goto done;
  }
  h_keys = malloc(n * ks + 1);
  h_vals = vs ? malloc(n * vs + 1) : NULL;
  if (!h_keys || (vs && !h_vals)) {
    printf("  ! %s: out of host memory (%zu bytes)\n", what, n * (ks + vs));
    goto done;
  }
  fill(h_keys, r, n, o->real_floats, seed);
  for (i = 0; vs && i < n; ++i) ((uint32_t *)h_vals)[i] = (uint32_t)i;

  /* The pristine input (keys0, vals0) and the work buffers the sorts run in. */
  s = gpuprims_buffer_from_host(b->ctx, r->dtype, h_keys, n, &keys0);
  if (s == GPUPRIMS_STATUS_OK) s = gpuprims_buffer_create(b->ctx, r->dtype, n, &keys);
  if (s == GPUPRIMS_STATUS_OK && vs) s = gpuprims_buffer_from_host(b->ctx, r->values, h_vals, n, &vals0);
  if (s == GPUPRIMS_STATUS_OK && vs) s = gpuprims_buffer_create(b->ctx, r->values, n, &vals);
  if (s == GPUPRIMS_STATUS_OK) s = gpuprims_context_synchronize(b->ctx);
  if (s != GPUPRIMS_STATUS_OK) {
    report_status("gpuprims_buffer_from_host / gpuprims_buffer_create", s);
    goto done;
  }
  ours_ok = time_sort_ours(b, r->sort, r, keys, keys0, vals, vals0, res) == 0;
  ours.keys = keys;
  ours.vals = vals;

  /* CUB from the same pristine device data into buffers of its own, on the
   * same stream (runs even when ours failed: the CUB column still shows). */
  if (b->cub_stream) {
    void *dk0 = NULL, *dv0 = NULL;
    s = gpuprims_buffer_device_ptr(keys0, &dk0);
    if (s == GPUPRIMS_STATUS_OK && vs) s = gpuprims_buffer_device_ptr(vals0, &dv0);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("gpuprims_buffer_device_ptr", s);
    } else {
      d_cub_keys = cubref_malloc(n * ks);
      d_cub_vals = vs ? cubref_malloc(n * vs) : NULL;
      if (d_cub_keys && (!vs || d_cub_vals))
        res->cub_ms = (r->sort == SORT_QUICK ? cubref_merge_sort_ms : cubref_radix_sort_ms)(
            r->dtype, r->values, r->order, dk0, d_cub_keys, dv0, d_cub_vals, n, o->warmup, o->reps, b->cub_stream);
    }
    if (res->cub_ms < 0) {
      printf("  ! %s: CUB reference failed: %s\n", what, cubref_last_error());
      failures++;
      res->cub_ms = -1.0;
    } else {
      have_cub = 1;
      cub.d_keys = d_cub_keys;
      cub.d_vals = d_cub_vals;
    }
  }

  /* Quicksort rows: radix sort on the same data and buffers, for reference,
   * then one more quicksort (untimed) so that the buffers hold its output. */
  if (ours_ok && r->sort == SORT_QUICK) {
    result radix;
    memset(&radix, 0, sizeof radix);
    if (time_sort_ours(b, SORT_RADIX, r, keys, keys0, vals, vals0, &radix) == 0) res->radix_ms = radix.ms;
    else failures++;
    ours_ok = sort_restore(b, keys, keys0, vals, vals0) == 0;
    if (ours_ok) {
      s = gpuprims_quicksort(b->ctx, keys, vals, r->order);
      if (s == GPUPRIMS_STATUS_OK) s = gpuprims_context_synchronize(b->ctx);
      if (s != GPUPRIMS_STATUS_OK) {
        report_status("gpuprims_quicksort (checked call)", s);
        ours_ok = 0;
      }
    }
  }

  /* The host backend on the same data, unless n > --ref-max: its radix sort
   * (keys only for quicksort rows, whose values are not compared). */
  if (!res->ref_skipped) {
    const int ref_vals = vs && r->sort == SORT_RADIX;
    s = gpuprims_buffer_from_host(b->ref, r->dtype, h_keys, n, &hkeys);
    if (s == GPUPRIMS_STATUS_OK && ref_vals) s = gpuprims_buffer_from_host(b->ref, r->values, h_vals, n, &hvals);
    if (s == GPUPRIMS_STATUS_OK) s = gpuprims_radix_sort(b->ref, hkeys, hvals, r->order);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("reference (host backend) gpuprims_radix_sort", s);
      goto done;
    }
    have_ref = 1;
    ref.keys = hkeys;
    ref.vals = hvals;
  }
  free(h_vals);
  h_vals = NULL;

  if (ours_ok) {
    res->check = check_sort(r, n, h_keys, &ours, have_ref ? &ref : NULL, have_cub ? &cub : NULL, &agrees, what);
    res->cub_agrees = agrees;
  } else if (have_cub) {
    /* Ours failed: still check CUB's output, so that the reference is known
     * good (a failure there counts too). */
    if (!check_sort(r, n, h_keys, &cub, have_ref ? &ref : NULL, NULL, &agrees, what)) {
      printf("  ! %s: CUB's output failed its check\n", what);
      failures++;
    }
  }

done:
  if (!res->check) failures++;
  if (res->cub_agrees == 0) failures++;
  cubref_free(d_cub_keys);
  cubref_free(d_cub_vals);
  gpuprims_buffer_destroy(hkeys);
  gpuprims_buffer_destroy(hvals);
  gpuprims_buffer_destroy(keys);
  gpuprims_buffer_destroy(keys0);
  gpuprims_buffer_destroy(vals);
  gpuprims_buffer_destroy(vals0);
  free(h_keys);
  free(h_vals);
}

/* ------------------------------------------------------------------------ */
/* Output                                                                    */

/* Bytes a call must move at least: reduce reads the input; scan reads it and
 * writes the output; a sort reads and writes every key (and value) once (the
 * anchors' "min-bytes"). */
static double row_bytes(const result *r) {
  double b = (double)r->n * (double)dtype_size(r->spec->dtype);
  if (r->spec->sort) return 2.0 * (b + (double)r->n * (double)dtype_size(r->spec->values));
  return r->spec->is_scan ? 2.0 * b : b;
}

/* Column widths: the longest primitive, dtype label and full label of the rows run. */
static int prim_width = 14, dtype_width = 5, label_width = 20;

static void print_header(int with_cub) {
  printf("%-*s %-*s %11s %10s %9s %8s %-5s", prim_width, "primitive", dtype_width, "dtype", "n", "ms", "GB/s", "Gkeys/s",
         "check");
  if (with_cub) printf(" %10s %9s %6s %-4s", "cub ms", "cub GB/s", "ratio", "cub=");
  printf("\n");
}

static void print_row(const result *r, int with_cub) {
  char ms[32] = "-", gbs[32] = "-", gks[32] = "-", dt[48];
  if (r->ms >= 0) {
    snprintf(ms, sizeof ms, "%.4f", r->ms);
    if (r->ms > 0) snprintf(gbs, sizeof gbs, "%.1f", row_bytes(r) / (r->ms * 1e6));
    if (r->ms > 0) snprintf(gks, sizeof gks, "%.2f", (double)r->n / (r->ms * 1e6));
  }
  row_dtype_label(r->spec, dt, sizeof dt);
  printf("%-*s %-*s %11zu %10s %9s %8s %-5s", prim_width, r->spec->primitive, dtype_width, dt, r->n, ms, gbs, gks,
         r->check ? (r->ref_skipped ? "OK*" : "OK") : "FAIL");
  if (with_cub) {
    if (r->cub_ms >= 0) {
      printf(" %10.4f %9.1f", r->cub_ms, r->cub_ms > 0 ? row_bytes(r) / (r->cub_ms * 1e6) : 0.0);
      if (r->ms > 0) printf(" %6.2f", r->cub_ms / r->ms);
      else printf(" %6s", "-");
      printf(" %-4s", r->cub_agrees == 1 ? "yes" : r->cub_agrees == 0 ? "NO" : "-");
    } else {
      printf(" %10s %9s %6s %-4s", "-", "-", "-", "-");
    }
  }
  printf("\n");
}

/* --only: TEXT as whole words of the label, so that "sort" picks the radix
 * sort rows ("sort keys u32") and not "quicksort keys u32" or "... sorted". */
static int row_selected(const options *o, const row_spec *r) {
  char label[64];
  const char *at;
  const size_t len = o->only ? strlen(o->only) : 0;
  if (!o->only) return 1;
  row_label(r, label, sizeof label);
  for (at = strstr(label, o->only); at; at = strstr(at + 1, o->only))
    if ((at == label || at[-1] == ' ') && (at[len] == '\0' || at[len] == ' ')) return 1;
  return 0;
}

/* The CUB call a row is compared with (cub_reference.cu). */
static const char *cub_call(const row_spec *r) {
  if (r->sort == SORT_QUICK) return r->values ? "DeviceMergeSort::SortPairsCopy" : "DeviceMergeSort::SortKeysCopy";
  if (r->sort == SORT_RADIX) {
    if (r->values) return "DeviceRadixSort::SortPairs";
    return r->order == GPUPRIMS_ORDER_DESCENDING ? "DeviceRadixSort::SortKeysDescending" : "DeviceRadixSort::SortKeys";
  }
  if (r->is_scan) return r->mode == GPUPRIMS_SCAN_INCLUSIVE ? "DeviceScan::InclusiveSum" : "DeviceScan::ExclusiveSum";
  return r->op == GPUPRIMS_OP_MAX ? "DeviceReduce::Max" : "DeviceReduce::Sum";
}

/* One row of the main table as JSON (--json). */
static void json_result(const result *x) {
  const row_spec *r = x->spec;
  char label[64], dtype[32], extra[256] = "";
  bench_json_row j;
  row_label(r, label, sizeof label);
  snprintf(dtype, sizeof dtype, "%s%s%s", dtype_name(r->dtype), r->values ? "/" : "", r->values ? dtype_name(r->values) : "");
  if (r->sort == SORT_QUICK && x->radix_ms >= 0) snprintf(extra, sizeof extra, "\"radix_sort_ms\": %.6g", x->radix_ms);
  if (!r->sort && !r->is_scan && x->host_ms >= 0) {
    int o = snprintf(extra, sizeof extra, "\"to_host_ms\": %.6g", x->host_ms);
    if (x->cub_rb_ms >= 0) o += snprintf(extra + o, sizeof extra - (size_t)o, ", \"cub_copy_to_host_ms\": %.6g", x->cub_rb_ms);
    if (x->cub_map_ms >= 0) snprintf(extra + o, sizeof extra - (size_t)o, ", \"cub_mapped_host_ms\": %.6g", x->cub_map_ms);
  }
  memset(&j, 0, sizeof j);
  j.primitive = r->sort == SORT_QUICK ? "quicksort" : r->sort ? "radix_sort" : r->is_scan ? "scan" : "reduce";
  j.label = label;
  j.dtype = dtype;
  j.variant = r->variant;
  j.n = j.items = (double)x->n;
  j.bytes = row_bytes(x);
  j.ms = x->ms;
  j.cub_ms = x->cub_ms;
  j.cub = cub_call(r);
  j.check = x->check ? (x->ref_skipped ? 2 : 1) : 0;
  j.extra = extra[0] ? extra : NULL;
  bench_json_add(&j);
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv) {
  options opt;
  bench b;
  gpuprims_status s;
  gpuprims_backend backend = GPUPRIMS_BACKEND_HOST;
  char device[256] = "?", device_plain[256], cub_note[320] = "";
  size_t needed = 0, nres = 0, r, k;
  result *results;
  uint32_t ver = gpuprims_version(), cccl;
  double first_total = 0.0;
  int with_cub = 0, own_cub_stream = 0, any_quick = 0, any_skipped = 0;
  size_t nrows_run = 0, nrows_selected = 0;
  const double wall0 = bench_wall_ms();

  setvbuf(stdout, NULL, _IOLBF, 0);
  if (parse_options(argc, argv, &opt) != 0) return 2;
  memset(&b, 0, sizeof b);
  b.opt = &opt;

  s = gpuprims_context_create(GPUPRIMS_BACKEND_AUTO, 0, &b.ctx);
  if (s != GPUPRIMS_STATUS_OK) {
    report_status("gpuprims_context_create(AUTO)", s);
    return 2;
  }
  s = gpuprims_context_create(GPUPRIMS_BACKEND_HOST, 0, &b.ref);
  if (s != GPUPRIMS_STATUS_OK) {
    report_status("gpuprims_context_create(HOST)", s);
    gpuprims_context_destroy(b.ctx);
    return 2;
  }
  gpuprims_context_backend(b.ctx, &backend);
  b.on_cuda = backend == GPUPRIMS_BACKEND_CUDA;
  if (gpuprims_context_device_name(b.ctx, device, sizeof device, &needed) != GPUPRIMS_STATUS_OK)
    snprintf(device, sizeof device, "?");
  if (opt.default_sizes) choose_default_sizes(&opt, backend);

  b.timer = bench_timer_create(b.ctx);
  if (!b.timer) {
    printf("  ! out of memory\n");
    return 2;
  }

  cccl = cubref_cccl_version();
  if (backend == GPUPRIMS_BACKEND_CUDA && opt.use_cub && cccl) {
    b.cub_stream = bench_timer_stream(b.timer);
    if (b.cub_stream) {
      snprintf(cub_note, sizeof cub_note, "CUB (CCCL %u.%u.%u) on the same stream", cccl / 1000000,
               cccl / 1000 % 1000, cccl % 1000);
    } else {
      /* The context refused our stream: CUB still runs, on a stream of its
       * own, timed with events; ours is then wall-clock time. */
      b.cub_stream = cubref_stream_create();
      own_cub_stream = b.cub_stream != NULL;
      snprintf(cub_note, sizeof cub_note, "CUB (CCCL %u.%u.%u) on its own stream: NOT timed the same way",
               cccl / 1000000, cccl / 1000 % 1000, cccl % 1000);
    }
  } else {
    snprintf(cub_note, sizeof cub_note, "no CUB comparison (%s)",
             !opt.use_cub ? "--no-cub" : !cccl ? "built without CUDA" : "backend is not CUDA");
  }
  with_cub = b.cub_stream != NULL;
  /* One plain line naming the backend and the device. The host backend's device name is
   * "host (<threads>; <why not CUDA>)": shown without its "host (" and ")". */
  {
    const size_t len = strlen(device);
    if (!b.on_cuda && !strncmp(device, "host (", 6) && len > 7 && device[len - 1] == ')')
      snprintf(device_plain, sizeof device_plain, "%.*s", (int)(len - 7), device + 6);
    else
      snprintf(device_plain, sizeof device_plain, "%s", device);
    printf("gpuprims %u.%u.%u, %s backend: %s\n", ver >> 16, (ver >> 8) & 0xff, ver & 0xff,
           b.on_cuda ? "CUDA" : "host (CPU)", device_plain);
  }
  printf("timer: %s%s%s; %s\n", bench_timer_kind(b.timer), bench_timer_note(b.timer)[0] ? " -- " : "",
         bench_timer_note(b.timer), cub_note);
  printf("reps %d (median), warm-up %d, seed 0x%016" PRIx64 ", f32 sum data: %s, ftol %g\n", opt.reps, opt.warmup,
         opt.seed,
         opt.real_floats ? "reals in [-1,1)" : "integers in [-16,16] (exact in any order)", opt.ftol);

  if (!b.on_cuda) {
    printf("host backend: sizes %s (the GPU's are 2^20, 2^24, 2^28: --sizes asks for any)\n",
           opt.default_sizes ? "chosen for the CPU" : "as given");
    for (k = 0; k < (size_t)opt.nsizes; ++k)
      if (opt.sizes[k] > ((size_t)1 << 24))
        printf("note: n = %zu on the host backend: the CPU takes a while and much memory "
               "(2^28: minutes and about 10 GiB)\n", opt.sizes[k]);
  }
  if (opt.json && bench_json_open(opt.json, b.on_cuda ? "cuda" : "host", device, with_cub ? cccl : 0, ver, argc,
                                  argv) != 0)
    return 2;
  if (opt.precompile) {
    const double t0 = bench_wall_ms();
    s = gpuprims_context_precompile(b.ctx);
    if (s != GPUPRIMS_STATUS_OK) {
      report_status("gpuprims_context_precompile", s);
      failures++;
    } else {
      printf("precompile ms: %.3f%s\n", bench_wall_ms() - t0, b.on_cuda ? "" : " (host backend: nothing to compile)");
    }
  }
  printf("\nlegend:\n"
         "  n          elements a call works on (Life: cells)\n"
         "  ms         the median of --reps timed calls (%s)\n"
         "  GB/s       the bytes a call must move at least / ms: reduce reads the input, a scan reads it and\n"
         "             writes the output, a sort reads and writes every key and value once\n"
         "  check      OK: the result equals the host backend's on the same data (sorts: also in order and the\n"
         "             input's keys; radix sort: stable); OK*: larger than --ref-max, so checked for order and\n"
         "             content without the host reference; FAIL; -: not checked\n"
         "  dtype      the element type; sorts: keys or keys/values (u32/u32: u32 keys moving u32 values, each\n"
         "             the key's input index); desc: descending; sorted, reversed, all equal, 2, 4 and 16\n"
         "             values, organ pipe: the input's pattern (otherwise random)\n"
         "  (n/2)      the u64 keys row runs at half the size column (2^27 keys at 2^28: 1 GiB, as CUB's anchor)\n"
         "  incl, excl inclusive and exclusive scan; median: the element of rank (n - 1) / 2\n"
         "  k=, +indices  top-k's k, and whether it also writes each element's index (u64)\n"
         "  Gkeys/s    10^9 elements (keys) per second; Gcell/s: 10^9 cells x generations per second; gens:\n"
         "             generations a call; x1: one generation a call\n",
         b.on_cuda ? "CUDA events on the stream" : "wall clock around the call and its wait");
  if (with_cub)
    printf("  cub ms     CUB (CCCL %u.%u.%u) on the same device data and stream: DeviceReduce, DeviceScan,\n"
           "             DeviceRadixSort (sort rows), DeviceMergeSort (quicksort rows), a DeviceRadixSort then an\n"
           "             index (selection rows), BlockRadixSort per row and DeviceSegmentedSort (segmented select)\n"
           "  cub GB/s   the same bytes / cub ms; ratio: cub ms / ms (> 1: gpuprims is faster)\n"
           "  cub=       yes: CUB's result equals ours (quicksort: the keys); NO: it differs; -: not compared\n",
           cccl / 1000000, cccl / 1000 % 1000, cccl % 1000);
  else
    printf("  (no CUB columns: %s)\n", cub_note);
  printf("The tables print once, at the end; a progress line per row goes to stderr. README.md says more.\n\n");
  results = (result *)calloc(NROWS * (size_t)opt.nsizes, sizeof *results);
  if (!results) return 2;
  for (r = 0; r < NROWS; ++r) {
    char dt[48];
    if (!row_selected(&opt, &ROWS[r])) continue;
    row_dtype_label(&ROWS[r], dt, sizeof dt);
    if ((int)strlen(dt) > dtype_width) dtype_width = (int)strlen(dt);
    if ((int)strlen(ROWS[r].primitive) > prim_width) prim_width = (int)strlen(ROWS[r].primitive);
    if (prim_width + 1 + dtype_width > label_width) label_width = prim_width + 1 + dtype_width;
    nrows_selected++;
  }
  for (r = 0; r < NROWS; ++r) {
    const double row_t0 = bench_wall_ms();
    char label[64];
    if (!row_selected(&opt, &ROWS[r])) continue;
    nrows_run++;
    for (k = 0; k < (size_t)opt.nsizes; ++k) {
      uint64_t seed = opt.seed ^ ((uint64_t)(r + 1) * 0xD1B54A32D192ED03ull) ^ ((uint64_t)opt.sizes[k] << 7);
      result *res = &results[nres++];
      if (ROWS[r].sort) run_sort_row(&b, &ROWS[r], row_n(&ROWS[r], opt.sizes[k]), seed, res);
      else run_row(&b, &ROWS[r], opt.sizes[k], seed, res);
      res->first_of_row = k == 0;
      if (res->first_ms > 0) first_total += res->first_ms;
      if (ROWS[r].sort == SORT_QUICK) any_quick = 1;
      if (res->ref_skipped) any_skipped = 1;
    }
    row_label(&ROWS[r], label, sizeof label);
    bench_progress("[%zu/%zu] %s: %d size%s, %.1f s", nrows_run, nrows_selected, label, opt.nsizes,
                   opt.nsizes == 1 ? "" : "s", (bench_wall_ms() - row_t0) * 1e-3);
  }

  failures += select_tour(b.ctx, b.timer, b.cub_stream, opt.only, opt.reps, opt.sizes, opt.nsizes);
  failures += segmented_select_tour(b.ctx, b.timer, b.cub_stream, opt.only, opt.reps);
  failures += segmented_topk_tour(b.ctx, b.timer, b.cub_stream, opt.only, opt.reps);
  if (opt.life) failures += life_tour(b.ctx, b.ref, b.timer, opt.only, opt.reps);
  if (b.on_cuda) failures += multi_tour(opt.only, opt.reps);

  /* The tables, each once. */
  printf("\n== gpuprims_bench summary (%s backend: %s; timer %s) ==\n", b.on_cuda ? "CUDA" : "host (CPU)",
         device_plain, bench_timer_kind(b.timer));
  if (nres) {
    printf("\nRows of reduce, scan and the two sorts, %s:\n", with_cub ? "against CUB" : "host backend alone (no CUB)");
    print_header(with_cub);
  }
  for (k = 0; k < nres; ++k) {
    print_row(&results[k], with_cub);
    json_result(&results[k]);
  }
  if (with_cub) {
    int any = 0;
    for (k = 0; k < nres; ++k) {
      const result *x = &results[k];
      double best;
      if (x->spec->is_scan || x->host_ms <= 0 || (x->cub_rb_ms < 0 && x->cub_map_ms < 0)) continue;
      best = x->cub_rb_ms < 0 ? x->cub_map_ms : x->cub_map_ms < 0 ? x->cub_rb_ms
             : x->cub_rb_ms < x->cub_map_ms ? x->cub_rb_ms : x->cub_map_ms;
      if (!any++)
        printf("\nreduce rows above: gpuprims_reduce_to_buffer vs DeviceReduce, both into device memory.\n"
               "reduce with the value in host memory, as gpuprims_reduce hands it over; CUB then waits for the stream\n"
               "(cub+copy: DeviceReduce + cudaMemcpyAsync to pinned memory; cub>mapped: DeviceReduce writing to\n"
               "mapped pinned memory; ratio: the faster of the two / ours):\n"
               "%-14s %-5s %11s %10s %12s %12s %6s\n",
               "primitive", "dtype", "n", "ms", "cub+copy ms", "cub>mapped", "ratio");
      printf("%-14s %-5s %11zu %10.4f %12.4f %12.4f %6.2f\n", x->spec->primitive, dtype_name(x->spec->dtype), x->n,
             x->host_ms, x->cub_rb_ms, x->cub_map_ms, best / x->host_ms);
    }
  }
  if (any_quick) {
    printf("\nquicksort rows beside gpuprims_radix_sort on the same data and buffers, timed the same way%s;\n"
           "ratios > 1: quicksort is faster:\n"
           "  %-*s %11s %12s %10s",
           with_cub ? ", and CUB's comparison sort\n(merge ms: DeviceMergeSort::SortKeysCopy / SortPairsCopy, less-than comparator)" : "",
           label_width, "row", "n", "quicksort ms", "radix ms");
    if (with_cub) printf(" %10s", "merge ms");
    printf(" %8s", "radix/q");
    if (with_cub) printf(" %8s", "merge/q");
    printf("\n");
    for (k = 0; k < nres; ++k) {
      const result *x = &results[k];
      const double q = x->ms, figs[2] = {x->radix_ms, x->cub_ms};
      const int nfigs = with_cub ? 2 : 1;
      char label[64];
      int f;
      if (x->spec->sort != SORT_QUICK) continue;
      row_label(x->spec, label, sizeof label);
      printf("  %-*s %11zu", label_width, label, x->n);
      if (q > 0) printf(" %12.4f", q);
      else printf(" %12s", "-");
      for (f = 0; f < nfigs; ++f) {
        if (figs[f] >= 0) printf(" %10.4f", figs[f]);
        else printf(" %10s", "-");
      }
      for (f = 0; f < nfigs; ++f) {
        if (figs[f] > 0 && q > 0) printf(" %8.2f", figs[f] / q);
        else printf(" %8s", "-");
      }
      printf("\n");
    }
  }
  if (any_skipped)
    printf("OK*: n > --ref-max %zu: not sorted on the host backend for the check; checked for order, for the\n"
           "input's keys (pairs: a permutation of the indices, each key the input's at its index; radix sort:\n"
           "equal keys in input order, the stable sort exactly) and, where CUB ran (cub= column), bitwise\n"
           "against CUB\n",
           opt.ref_max);
  select_summary();
  segmented_select_summary();
  segmented_topk_summary();
  if (opt.life) life_summary();

  /* Each row's first call (at its first size): the kernel compiles it needed
   * beyond those of the rows before it (one context for all rows). */
  if (nres) printf("\nfirst calls (%s):\n", b.on_cuda ? "kernel compiles included" : "host backend: nothing to compile");
  for (k = 0; k < nres; ++k) {
    char label[64];
    if (!results[k].first_of_row) continue;
    row_label(results[k].spec, label, sizeof label);
    if (results[k].first_ms > 0) printf("first-call ms %s: %.3f\n", label, results[k].first_ms);
    else printf("first-call ms %s: -\n", label);
  }
  printf("first-calls total ms: %.3f (sum over the %zu rows, at each size, of the first call, %s)\n", first_total,
         nrows_run, b.on_cuda ? "kernel compiles included" : "host backend: nothing to compile");
  printf("wall time: %.1f s (data, uploads, timing, CUB, checks)\n", (bench_wall_ms() - wall0) * 1e-3);
  if (bench_json_close() != 0) failures++;
  printf("result: %zu rows, %d failures -> %s\n", nres, failures, failures ? "FAIL" : "OK");
  free(results);
  bench_timer_destroy(b.timer);
  if (own_cub_stream) cubref_stream_destroy(b.cub_stream);
  gpuprims_context_destroy(b.ref);
  gpuprims_context_destroy(b.ctx);
  return failures ? 1 : 0;
}
